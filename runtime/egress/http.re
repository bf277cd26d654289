/*
 * http.re - strict HTTP/1.1 heads and chunked framing (re2c).
 *
 * The head is cut into lines first: a line ends at LF, must end in CRLF,
 * and may hold no other CR, so "bare CR or LF inside a line" is decided
 * once, before any grammar runs.  Each complete line is then lexed by one
 * of the re2c blocks below (request line, status line, field line), so a
 * head that arrives byte by byte is still parsed in linear time.
 *
 * The input is bounded and may hold NUL bytes: YYPEEK returns 0 past the
 * limit, and re2c's end-of-input rule ($, with re2c:eof = 0) checks the
 * limit whenever it sees a 0, so a NUL is an ordinary (invalid) byte and
 * the lexers never read past LIM.
 */
#include "runtime/egress/http.h"

#include <string.h>
#include <strings.h>

enum { ST_START, ST_FIELDS, ST_DONE };

/*!re2c
	re2c:api = custom;
	re2c:api:style = free-form;
	re2c:define:YYCTYPE = "unsigned char";
	re2c:define:YYPEEK = "(cur < lim ? *cur : 0)";
	re2c:define:YYSKIP = "++cur;";
	re2c:define:YYBACKUP = "mar = cur;";
	re2c:define:YYRESTORE = "cur = mar;";
	re2c:define:YYLESSTHAN = "lim - cur < @@{len}";
	re2c:yyfill:enable = 0;
	re2c:eof = 0;

	tchar = [!#$%&'*+.^_`|~0-9A-Za-z-];
	vchar = [\x21-\x7e];
	obstext = [\x80-\xff];
	fieldchar = [\t \x21-\x7e\x80-\xff];
	hex = [0-9A-Fa-f];
*/

static enum http_result
fail(struct http_parser *p, unsigned status, const char *why)
{
	p->status = p->head.response ? 502 : status;
	p->error = why;
	return HTTP_ERROR;
}

static struct http_span
span(const unsigned char *base, const unsigned char *from, const unsigned char *to)
{
	struct http_span s = {(uint32_t)(from - base), (uint32_t)(to - from)};

	return s;
}

void
http_head_begin(struct http_parser *p, bool response)
{
	memset(p, 0, sizeof(*p));
	p->head.response = response;
	p->head.host = -1;
	p->head.max_forwards = -1;
	p->state = ST_START;
}

/* "METHOD SP TARGET SP HTTP/1.x" */
static enum http_result
lex_request_line(struct http_parser *p, const unsigned char *base, const unsigned char *cur,
		 const unsigned char *lim)
{
	const unsigned char *mar, *tok;

	/* The grammar below would refuse these too; this says why. */
	for (const unsigned char *q = cur; q < lim; q++)
		if (*q < 0x20 || *q == 0x7f)
			return fail(p, 400, "control byte in the request line");
	tok = cur;
	/*!re2c
		tchar+ " "  { goto method; }
		*           { return fail(p, 400, "malformed request method"); }
		$           { return fail(p, 400, "empty request line"); }
	*/
method:
	p->head.method = span(base, tok, cur - 1);
	tok = cur;
	/*!re2c
		vchar+ " "  { goto target; }
		*           { return fail(p, 400, "malformed request target"); }
		$           { return fail(p, 400, "request line without a target"); }
	*/
target:
	p->head.target = span(base, tok, cur - 1);
	/*!re2c
		"HTTP/1.0"               { p->head.version = 10; goto version; }
		"HTTP/1.1"               { p->head.version = 11; goto version; }
		"HTTP/" [0-9] "." [0-9]  { return fail(p, 505, "unsupported HTTP version"); }
		*                        { return fail(p, 400, "malformed HTTP version"); }
		$                        { return fail(p, 400, "request line without a version"); }
	*/
version:
	if (cur != lim)
		return fail(p, 400, "malformed request line");
	return HTTP_MORE;
}

/* "HTTP/1.x SP DIGIT{3} [SP REASON]" */
static enum http_result
lex_status_line(struct http_parser *p, const unsigned char *base, const unsigned char *cur,
		const unsigned char *lim)
{
	const unsigned char *mar, *tok;

	/*!re2c
		"HTTP/1.0 " { p->head.version = 10; goto code; }
		"HTTP/1.1 " { p->head.version = 11; goto code; }
		*           { return fail(p, 502, "malformed status line"); }
		$           { return fail(p, 502, "empty status line"); }
	*/
code:
	tok = cur;
	/*!re2c
		[1-9] [0-9] [0-9]  { goto reason; }
		*                  { return fail(p, 502, "malformed status code"); }
		$                  { return fail(p, 502, "malformed status code"); }
	*/
reason:
	p->head.status = (unsigned)((tok[0] - '0') * 100 + (tok[1] - '0') * 10 + (tok[2] - '0'));
	if (cur == lim) {
		p->head.reason = span(base, cur, cur);
		return HTTP_MORE;
	}
	if (*cur++ != ' ')
		return fail(p, 502, "malformed status line");
	tok = cur;
	for (; cur < lim; cur++)
		if ((*cur < 0x20 && *cur != '\t') || *cur == 0x7f)
			return fail(p, 502, "control byte in the reason phrase");
	p->head.reason = span(base, tok, lim);
	return HTTP_MORE;
}

/*
 * "NAME: VALUE" without the CRLF.  Stores the field unless STORE is false
 * (trailers are checked, then dropped).
 */
static enum http_result
lex_field_line(struct http_parser *p, const unsigned char *base, const unsigned char *cur,
	       const unsigned char *lim, bool store)
{
	const unsigned char *mar, *tok = cur, *name_end, *value, *end;

	/*!re2c
		[ \t]                 { return fail(p, 400, "obsolete line folding (a line starting with white space)"); }
		tchar+ [ \t]+ ":"     { return fail(p, 400, "white space before the colon of a header"); }
		tchar+ ":"            { goto name; }
		":"                   { return fail(p, 400, "empty header name"); }
		*                     { goto bad_name; }
		$                     { goto bad_name; }
	*/
bad_name:
	if (!memchr(tok, ':', (size_t)(lim - tok)))
		return fail(p, 400, "header line without a colon");
	return fail(p, 400, "invalid character in a header name");
name:
	name_end = cur - 1;
	while (cur < lim && (*cur == ' ' || *cur == '\t'))
		cur++;
	value = cur;
value_more:
	/*!re2c
		fieldchar+  { goto value_more; }
		*           { return fail(p, 400, "control byte in a header value"); }
		$           { goto value_end; }
	*/
value_end:
	end = lim;
	while (end > value && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	if (!store)
		return HTTP_MORE;
	if (p->head.n_fields == HTTP_MAX_HEADERS)
		return fail(p, 431, "too many header fields");
	p->head.fields[p->head.n_fields].name = span(base, tok, name_end);
	p->head.fields[p->head.n_fields].value = span(base, value, end);
	p->head.n_fields++;
	return HTTP_MORE;
}

bool
http_name_is(const char *name, size_t len, const char *want)
{
	return strlen(want) == len && strncasecmp(name, want, len) == 0;
}

bool
http_list_has(const char *value, size_t len, const char *token)
{
	size_t tlen = strlen(token), i = 0;

	while (i < len) {
		size_t start, end;

		while (i < len && (value[i] == ' ' || value[i] == '\t' || value[i] == ','))
			i++;
		start = i;
		while (i < len && value[i] != ',')
			i++;
		end = i;
		while (end > start && (value[end - 1] == ' ' || value[end - 1] == '\t'))
			end--;
		if (end - start == tlen && strncasecmp(value + start, token, tlen) == 0)
			return true;
	}
	return false;
}

/* 1*DIGIT without overflow; false for anything else (signs, lists, spaces). */
static bool
parse_decimal(const char *s, size_t len, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;

	if (len == 0)
		return false;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		if (v > (max - (uint64_t)(s[i] - '0')) / 10)
			return false;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	*out = v;
	return true;
}

/* What the fields mean, once they are all there. */
static enum http_result
check_fields(struct http_parser *p, const char *buf)
{
	struct http_head *h = &p->head;
	bool te = false, keep_alive = false;

	for (size_t i = 0; i < h->n_fields; i++) {
		const char *name = http_span_ptr(buf, h->fields[i].name);
		const char *value = http_span_ptr(buf, h->fields[i].value);
		size_t nlen = h->fields[i].name.len, vlen = h->fields[i].value.len;

		if (http_name_is(name, nlen, "content-length")) {
			if (h->has_length)
				return fail(p, 400, "several Content-Length headers");
			if (!parse_decimal(value, vlen, UINT64_MAX / 2, &h->content_length))
				return fail(p, 400, "Content-Length is not a decimal number");
			h->has_length = true;
		} else if (http_name_is(name, nlen, "transfer-encoding")) {
			if (te)
				return fail(p, 400, "several Transfer-Encoding headers");
			te = true;
			/* Any other coding, or a list, is a framing the next hop may read
			 * differently: refuse it instead of guessing. */
			if (!http_name_is(value, vlen, "chunked"))
				return fail(p, 400, "Transfer-Encoding other than chunked");
			h->chunked = true;
		} else if (http_name_is(name, nlen, "host")) {
			if (h->host >= 0)
				return fail(p, 400, "several Host headers");
			h->host = (int)i;
		} else if (http_name_is(name, nlen, "connection")) {
			if (http_list_has(value, vlen, "close"))
				h->conn_close = true;
			if (http_list_has(value, vlen, "keep-alive"))
				keep_alive = true;
			if (http_list_has(value, vlen, "upgrade"))
				h->conn_upgrade = true;
		} else if (http_name_is(name, nlen, "upgrade")) {
			if (http_list_has(value, vlen, "websocket"))
				h->upgrade_websocket = true;
		} else if (http_name_is(name, nlen, "max-forwards") && !h->response) {
			uint64_t v;

			if (h->max_forwards >= 0)
				return fail(p, 400, "several Max-Forwards headers");
			if (!parse_decimal(value, vlen, 1u << 30, &v))
				return fail(p, 400, "Max-Forwards is not a decimal number");
			h->max_forwards = (long)v;
		} else if (http_name_is(name, nlen, "expect") && !h->response) {
			if (http_name_is(value, vlen, "100-continue"))
				h->expect_continue = true;
		}
	}
	if (h->has_length && h->chunked)
		return fail(p, 400, "both Content-Length and Transfer-Encoding");
	/* RFC 9112 6.1: an HTTP/1.0 message with Transfer-Encoding has faulty framing. */
	if (h->chunked && h->version == 10)
		return fail(p, 400, "Transfer-Encoding in an HTTP/1.0 message");
	if (!h->response && h->version == 11 && h->host < 0)
		return fail(p, 400, "missing Host header");
	if (h->version == 10 && !keep_alive)
		h->conn_close = true;
	return HTTP_DONE;
}

enum http_result
http_parse_head(struct http_parser *p, const char *buf, size_t len)
{
	const unsigned char *base = (const unsigned char *)buf;
	size_t limit = len < HTTP_HEAD_MAX ? len : HTTP_HEAD_MAX;

	if (p->state == ST_DONE)
		return HTTP_DONE;
	if (p->status)
		return HTTP_ERROR;
	for (;;) {
		const char *lf = p->scanned < limit
					 ? memchr(buf + p->scanned, '\n', limit - p->scanned)
					 : NULL;
		size_t end, n;
		enum http_result r;

		if (!lf) {
			p->scanned = limit;
			/* A CR that is not the last byte so far can only be bare (and
			 * is reported as such however much more arrives). */
			if (limit > p->pos + 1 && memchr(buf + p->pos, '\r', limit - p->pos - 1))
				return fail(p, 400, "bare CR inside a line");
			if (len >= HTTP_HEAD_MAX)
				return fail(p, 431, "request header fields too large");
			return HTTP_MORE;
		}
		end = (size_t)(lf - buf);
		p->scanned = end + 1;
		if (end == p->pos || buf[end - 1] != '\r')
			return fail(p, 400, "bare LF (a line must end in CRLF)");
		n = end - 1 - p->pos;
		if (memchr(buf + p->pos, '\r', n))
			return fail(p, 400, "bare CR inside a line");
		if (p->state == ST_START) {
			if (p->head.response)
				r = lex_status_line(p, base, base + p->pos, base + p->pos + n);
			else
				r = lex_request_line(p, base, base + p->pos, base + p->pos + n);
			p->state = ST_FIELDS;
		} else if (n == 0) {
			p->pos = end + 1;
			p->head.length = p->pos;
			r = check_fields(p, buf);
			if (r == HTTP_DONE)
				p->state = ST_DONE;
			return r;
		} else {
			r = lex_field_line(p, base, base + p->pos, base + p->pos + n, true);
		}
		if (r == HTTP_ERROR)
			return r;
		p->pos = end + 1;
	}
}

/* ---- chunked bodies ------------------------------------------------------------ */

enum { CH_SIZE, CH_DATA, CH_CRLF, CH_TRAILER, CH_DONE, CH_ERROR };

void
http_chunked_init(struct http_chunked *c)
{
	memset(c, 0, sizeof(*c));
	c->state = CH_SIZE;
}

size_t
http_chunked_lookahead(const struct http_chunked *c)
{
	return c->state == CH_DATA ? 0 : HTTP_CHUNK_LINE_MAX + 2;
}

static enum http_chunk_step
chunk_fail(struct http_chunked *c, const char *why)
{
	c->state = CH_ERROR;
	c->error = why;
	return CHUNK_ERROR;
}

/* The line at BUF (LEN bytes available, AVAIL in all): its length without CRLF. */
static enum http_chunk_step
chunk_line(struct http_chunked *c, const char *buf, size_t len, size_t avail, size_t *line)
{
	size_t look = len < HTTP_CHUNK_LINE_MAX + 2 ? len : HTTP_CHUNK_LINE_MAX + 2;
	const char *lf = memchr(buf, '\n', look);

	if (!lf) {
		if (avail >= HTTP_CHUNK_LINE_MAX + 2 || look < len)
			return chunk_fail(c, "chunk framing line too long");
		if (look > 1 && memchr(buf, '\r', look - 1))
			return chunk_fail(c, "bare CR in chunk framing");
		return CHUNK_MORE;
	}
	*line = (size_t)(lf - buf);
	if (*line == 0 || buf[*line - 1] != '\r')
		return chunk_fail(c, "bare LF in chunk framing");
	(*line)--;
	if (memchr(buf, '\r', *line))
		return chunk_fail(c, "bare CR in chunk framing");
	return CHUNK_SKIP;
}

/* "1*HEXDIG [ext]" with ext = *( BWS ";" ... ) and no control bytes. */
static enum http_chunk_step
lex_chunk_size(struct http_chunked *c, const unsigned char *cur, const unsigned char *lim)
{
	const unsigned char *tok = cur;
	uint64_t v = 0;

	/*!re2c
		hex+  { goto digits; }
		*     { return chunk_fail(c, "malformed chunk size"); }
		$     { return chunk_fail(c, "empty chunk size line"); }
	*/
digits:
	for (const unsigned char *q = tok; q < cur; q++) {
		unsigned d = *q <= '9' ? (unsigned)(*q - '0') : (unsigned)((*q | 0x20) - 'a' + 10);

		if (v >> 59)
			return chunk_fail(c, "chunk size too large");
		v = v << 4 | d;
	}
	if (cur < lim) {
		while (cur < lim && (*cur == ' ' || *cur == '\t'))
			cur++;
		if (cur == lim || *cur != ';')
			return chunk_fail(c, "malformed chunk size");
ext:
		/*!re2c
			fieldchar+  { goto ext; }
			*           { return chunk_fail(c, "control byte in a chunk extension"); }
			$           { goto ext_end; }
		*/
ext_end:;
	}
	c->remaining = v;
	c->state = v ? CH_DATA : CH_TRAILER;
	return CHUNK_SKIP;
}

enum http_chunk_step
http_chunked_step(struct http_chunked *c, const char *buf, size_t len, size_t avail, size_t *n)
{
	enum http_chunk_step r;
	size_t line;

	*n = 0;
	switch (c->state) {
	case CH_SIZE:
		r = chunk_line(c, buf, len, avail, &line);
		if (r != CHUNK_SKIP)
			return r;
		r = lex_chunk_size(c, (const unsigned char *)buf, (const unsigned char *)buf + line);
		if (r == CHUNK_SKIP)
			*n = line + 2;
		return r;
	case CH_DATA:
		if (avail == 0)
			return CHUNK_MORE;
		*n = avail < c->remaining ? avail : (size_t)c->remaining;
		c->remaining -= *n;
		if (c->remaining == 0)
			c->state = CH_CRLF;
		return CHUNK_DATA;
	case CH_CRLF:
		if (len < 2) {
			if (len == 1 && buf[0] != '\r')
				return chunk_fail(c, "missing CRLF after chunk data");
			return CHUNK_MORE;
		}
		if (buf[0] != '\r' || buf[1] != '\n')
			return chunk_fail(c, "missing CRLF after chunk data");
		c->state = CH_SIZE;
		*n = 2;
		return CHUNK_SKIP;
	case CH_TRAILER: {
		struct http_parser scratch;

		r = chunk_line(c, buf, len, avail, &line);
		if (r != CHUNK_SKIP)
			return r;
		if (line == 0) {
			c->state = CH_DONE;
			*n = 2;
			return CHUNK_DONE;
		}
		c->trailer += line + 2;
		if (c->trailer > HTTP_HEAD_MAX)
			return chunk_fail(c, "trailer section too large");
		http_head_begin(&scratch, false);
		if (lex_field_line(&scratch, (const unsigned char *)buf, (const unsigned char *)buf,
				   (const unsigned char *)buf + line, false) == HTTP_ERROR)
			return chunk_fail(c, scratch.error);
		*n = line + 2;
		return CHUNK_SKIP;
	}
	case CH_DONE:
		return CHUNK_DONE;
	default:
		return CHUNK_ERROR;
	}
}

/* ---- request targets -------------------------------------------------------------- */

static int
url_fail(const char **why, const char *reason)
{
	*why = reason;
	return -1;
}

/* "HOST[:PORT]" or "[V6][:PORT]" of LEN bytes; the port is required when NEED_PORT. */
static int
split_host_port(const char *s, size_t len, bool need_port, uint16_t default_port,
		struct http_url *u, const char **why)
{
	size_t i = 0, host_end;
	uint64_t port;

	u->ipv6 = false;
	if (len && s[0] == '[') {
		const char *close = memchr(s, ']', len);

		if (!close)
			return url_fail(why, "unterminated IPv6 literal");
		u->ipv6 = true;
		u->host = s + 1;
		u->host_len = (size_t)(close - s) - 1;
		i = (size_t)(close - s) + 1;
		if (i < len && s[i] != ':')
			return url_fail(why, "junk after an IPv6 literal");
		host_end = i;
	} else {
		while (i < len && s[i] != ':')
			i++;
		u->host = s;
		u->host_len = i;
		host_end = i;
	}
	if (u->host_len == 0)
		return url_fail(why, "empty host");
	if (host_end == len) {
		if (need_port)
			return url_fail(why, "missing port");
		u->port = default_port;
		u->port_given = false;
		return 0;
	}
	if (!parse_decimal(s + host_end + 1, len - host_end - 1, 65535, &port) || port == 0)
		return url_fail(why, "bad port");
	u->port = (uint16_t)port;
	u->port_given = true;
	return 0;
}

int
http_parse_absolute(const char *s, size_t len, const char *want_scheme, struct http_url *u,
		    const char **why)
{
	size_t slen = strlen(want_scheme), i;
	const char *auth;

	memset(u, 0, sizeof(*u));
	if (len < slen + 3 || strncasecmp(s, want_scheme, slen) != 0 ||
	    memcmp(s + slen, "://", 3) != 0) {
		const char *colon = memchr(s, ':', len);

		if (colon && colon + 2 < s + len && colon[1] == '/' && colon[2] == '/')
			return url_fail(why, "unsupported URL scheme");
		return url_fail(why, "not an absolute URL");
	}
	auth = s + slen + 3;
	len -= slen + 3;
	for (i = 0; i < len && auth[i] != '/' && auth[i] != '?' && auth[i] != '#'; i++)
		if (auth[i] == '@')
			return url_fail(why, "user name or password in the URL");
	if (memchr(auth, '#', len))
		return url_fail(why, "fragment in the request target");
	if (split_host_port(auth, i, false, slen == 5 ? 443 : 80, u, why) < 0)
		return -1;
	u->path = auth + i;
	u->path_len = len - i;
	return 0;
}

int
http_parse_authority(const char *s, size_t len, struct http_url *u, const char **why)
{
	memset(u, 0, sizeof(*u));
	for (size_t i = 0; i < len; i++)
		if (s[i] == '/' || s[i] == '@' || s[i] == '?' || s[i] == '#')
			return url_fail(why, "CONNECT needs HOST:PORT");
	if (split_host_port(s, len, true, 0, u, why) < 0)
		return -1;
	u->path = "";
	return 0;
}

int
http_parse_host_field(const char *s, size_t len, struct http_url *u, const char **why)
{
	memset(u, 0, sizeof(*u));
	for (size_t i = 0; i < len; i++)
		if (s[i] == '/' || s[i] == '@' || s[i] == '?' || s[i] == '#' || s[i] == ' ')
			return url_fail(why, "malformed Host header");
	if (split_host_port(s, len, false, 0, u, why) < 0)
		return -1;
	u->path = "";
	return 0;
}
