/*
 * egress.c - parse one egress rule: the driver around the re2c lexer and
 * the lemon grammar, the semantic checks, and the error messages.
 *
 * Messages are user-facing and asserted verbatim by the tests: they start
 * in lower case, have no trailing period, and come with the byte offset and
 * length of what they complain about.
 */
#include "egress.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "egress_gram.h"
#include "grammar/egress_internal.h"

#define EGRESS_LABEL_MAX 63 /* RFC 1035 */
#define EGRESS_HOST_MAX 253 /* RFC 1035, without the trailing dot */
#define EGRESS_QUOTE_MAX 40 /* bytes of a user's word quoted in a message */

/* In bit order: method_names[i] names bit 1 << i.  Each is NUL-padded to 8 bytes. */
static const char method_names[][8] = {
    "GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE",
};

#define METHOD_COUNT (sizeof(method_names) / sizeof(method_names[0]))
#define METHOD_MAX_LEN 7

/* Called for every request the matcher decides, so no strlen or locale. */
unsigned
egress_method_bit(const char *name, size_t len)
{
	char up[METHOD_MAX_LEN];
	size_t i;

	if (len == 0 || len > METHOD_MAX_LEN)
		return 0;
	for (i = 0; i < len; i++)
		up[i] = (name[i] >= 'a' && name[i] <= 'z') ? (char)(name[i] - 'a' + 'A') : name[i];
	for (i = 0; i < METHOD_COUNT; i++) {
		const char *m = method_names[i];

		/* M is exactly LEN bytes long when its last byte is at LEN - 1. */
		if (m[len - 1] != '\0' && m[len] == '\0' && memcmp(up, m, len) == 0)
			return 1u << i;
	}
	return 0;
}

const char *
egress_method_name(unsigned bit)
{
	size_t i;

	if (bit == EGRESS_ANY)
		return "*";
	for (i = 0; i < METHOD_COUNT; i++) {
		if (bit == 1u << i)
			return method_names[i];
	}
	return NULL;
}

void
egress_rule_format(const struct egress_rule *r, bool full_path, char *buf, size_t cap)
{
	size_t o = 0;

	if (cap == 0)
		return;
	buf[0] = '\0';
	if (r->tcp) {
		snprintf(buf, cap, "tcp %s%s:%u", r->wildcard ? "*." : "", r->host, r->port);
		return;
	}
	if (r->methods == EGRESS_ANY) {
		o = (size_t)snprintf(buf, cap, "*");
	} else {
		for (unsigned bit = 1; bit < EGRESS_ANY && o < cap; bit <<= 1)
			if (r->methods & bit)
				o += (size_t)snprintf(buf + o, cap - o, "%s%s", o ? "," : "",
						      egress_method_name(bit));
	}
	if (o >= cap)
		return;
	if (r->port)
		snprintf(buf + o, cap - o, " %s%s:%u%s", r->wildcard ? "*." : "", r->host, r->port,
			 full_path || r->path_given ? r->path : "");
	else
		snprintf(buf + o, cap - o, " %s%s%s", r->wildcard ? "*." : "", r->host,
			 full_path || r->path_given ? r->path : "");
}

static bool
is_space(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

/* Record the first failure only: later errors are consequences of it. */
static void __attribute__((format(printf, 4, 5)))
parse_fail(struct egress_parse *st, size_t offset, size_t length, const char *fmt, ...)
{
	va_list ap;

	if (st->failed)
		return;
	st->failed = true;
	st->err->offset = offset;
	st->err->length = length ? length : 1;
	va_start(ap, fmt);
	vsnprintf(st->err->message, sizeof(st->err->message), fmt, ap);
	va_end(ap);
}

/*
 * Write the LEN bytes at S into BUF (EGRESS_QUOTE_MAX + 4 bytes) so that a
 * message shows them safely: printable ASCII as itself, anything else as
 * \xNN, cut to EGRESS_QUOTE_MAX characters followed by "..." when long.
 */
static void
quote_bytes(char *buf, const char *s, size_t len)
{
	size_t i, n = 0;

	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		bool printable = c >= 0x20 && c < 0x7f;

		if (n + (printable ? 1 : 4) > EGRESS_QUOTE_MAX)
			break;
		if (printable)
			buf[n++] = (char)c;
		else
			n += (size_t)snprintf(buf + n, 5, "\\x%02x", c);
	}
	buf[n] = '\0';
	if (i < len)
		memcpy(buf + n, "...", 4);
}

unsigned
egress_check_method(struct egress_parse *st, const struct egress_token *word)
{
	const char *s = st->text + word->offset;
	char shown[EGRESS_QUOTE_MAX + 4];
	unsigned bit;

	if (word->length == 1 && s[0] == '*')
		return EGRESS_ANY;
	bit = egress_method_bit(s, word->length);
	if (bit)
		return bit;
	quote_bytes(shown, s, word->length);
	if (word->length == 7 && strncasecmp(s, "CONNECT", 7) == 0) {
		parse_fail(st, word->offset, word->length,
			   "unknown HTTP method '%s' (HTTPS tunnels are checked per request)",
			   shown);
	} else if (word->length > 3 && strncasecmp(s, "tcp", 3) == 0) {
		parse_fail(st, word->offset, word->length,
			   "unknown HTTP method '%s' (a TCP rule is 'tcp HOST:PORT')", shown);
	} else if (memchr(s, '.', word->length) || memchr(s, '/', word->length)) {
		/* "api.github.com/x": the methods were forgotten. */
		parse_fail(st, word->offset, word->length,
			   "unknown HTTP method '%s' (a rule starts with its methods, as in "
			   "'GET host')",
			   shown);
	} else {
		parse_fail(st, word->offset, word->length, "unknown HTTP method '%s'", shown);
	}
	return 0;
}

void
egress_check_label(struct egress_parse *st, const struct egress_token *label)
{
	if (label->length > EGRESS_LABEL_MAX)
		parse_fail(st, label->offset, label->length, "host name too long");
}

void
egress_check_host(struct egress_parse *st, const struct egress_host *host)
{
	if (host->length > EGRESS_HOST_MAX)
		parse_fail(st, host->offset, host->length, "host name too long");
}

/*
 * "**" means "any number of segments" only as a whole segment; inside one
 * ("/a**") it would silently mean the same as "*", so refuse it.
 */
void
egress_check_path(struct egress_parse *st, const struct egress_token *path)
{
	const char *p = st->text + path->offset;
	size_t i = 0, n = path->length;

	while (i < n) {
		size_t seg = i + 1, end = seg;

		while (end < n && p[end] != '/')
			end++;
		if (end - seg != 2 || p[seg] != '*' || p[seg + 1] != '*') {
			size_t j;

			for (j = seg; j + 1 < end; j++) {
				if (p[j] == '*' && p[j + 1] == '*') {
					parse_fail(st, path->offset + j, 2,
						   "'**' must be a whole path segment");
					return;
				}
			}
		}
		i = end;
	}
}

/* ":PORT": decimal, 1..65535, no sign, no leading zero. */
unsigned
egress_check_port(struct egress_parse *st, const struct egress_token *port)
{
	const char *p = st->text + port->offset + 1;
	size_t n = port->length - 1;
	unsigned long v = 0;

	if (n == 0) {
		parse_fail(st, port->offset, 1, "missing port after ':'");
		return 0;
	}
	if (st->tcp && p[0] == '*') {
		parse_fail(st, port->offset + 1, n,
			   "a tcp rule names one port, 1 to 65535: '*' is not a port");
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9') {
			char shown[EGRESS_QUOTE_MAX + 4];

			quote_bytes(shown, p + i, 1);
			parse_fail(st, port->offset + 1 + i, 1,
				   "invalid character '%s' in port (a decimal number, 1 to 65535)",
				   shown);
			return 0;
		}
		if (v <= 65535)
			v = v * 10 + (unsigned long)(p[i] - '0');
	}
	if (v == 0 || v > 65535 || p[0] == '0') {
		parse_fail(st, port->offset + 1, n, "port %.*s is out of range (1 to 65535)",
			   (int)(n > 10 ? 10 : n), p);
		return 0;
	}
	return (unsigned)v;
}

void
egress_build_rule(struct egress_parse *st, unsigned methods, const struct egress_host *host,
		  unsigned port, const struct egress_token *path)
{
	struct egress_rule *r = &st->rule;
	char *h;
	size_t i;

	if (st->failed)
		return;
	r->methods = methods;
	h = arena_strndup(st->arena, st->text + host->offset, host->length);
	for (i = 0; i < host->length; i++) {
		if (h[i] >= 'A' && h[i] <= 'Z')
			h[i] = (char)(h[i] - 'A' + 'a');
	}
	r->host = h;
	r->wildcard = host->wildcard;
	r->port = port;
	r->path_given = path->kind != 0;
	if (r->path_given)
		r->path = arena_strndup(st->arena, st->text + path->offset, path->length);
	else
		r->path = arena_strdup(st->arena, "/**");
}

/* "tcp HOST:PORT": the stream is not HTTP, so the rule has no methods and no path. */
void
egress_build_tcp_rule(struct egress_parse *st, const struct egress_host *host, unsigned port)
{
	struct egress_token none = {0, 0, 0};

	egress_build_rule(st, 0, host, port, &none);
	if (st->failed)
		return;
	st->rule.tcp = true;
	st->rule.path = "";
}

/*
 * A syntax error inside a TCP rule: TOK is what the grammar refused, PREV
 * the token before it.  True when a message was given.
 */
static bool
report_tcp_syntax_error(struct egress_parse *st, const struct egress_token *tok,
			const struct egress_token *prev)
{
	if (tok->kind == TK_TCP || (prev->kind == TK_TCP && tok->kind == TK_COMMA)) {
		const struct egress_token *w = tok->kind == TK_TCP ? tok : prev;

		parse_fail(st, w->offset, w->length,
			   "a tcp rule has no HTTP methods: write 'tcp HOST:PORT' as a rule of "
			   "its own");
		return true;
	}
	if (!st->tcp)
		return false;
	switch (tok->kind) {
	case TK_PATH:
		parse_fail(st, tok->offset, tok->length,
			   "a tcp rule has no path: it allows a TCP stream, not HTTP requests");
		return true;
	case TK_BADPATH:
		parse_fail(st, tok->offset, 1, "unexpected text after the port of a tcp rule");
		return true;
	case TK_PORT:
		if (prev->kind == TK_WS) {
			parse_fail(st, tok->offset, 1, "missing host before the port");
			return true;
		}
		break;
	case 0:
		if (prev->kind == TK_LABEL) {
			parse_fail(st, prev->offset + prev->length, 1,
				   "a tcp rule needs a port: tcp HOST:PORT");
			return true;
		}
		if (prev->kind == TK_TCP || prev->kind == TK_WS) {
			parse_fail(st, prev->offset + prev->length, 1,
				   "missing HOST:PORT after 'tcp'");
			return true;
		}
		break;
	}
	return false;
}

static void
report_bad_host_char(struct egress_parse *st, const struct egress_token *tok)
{
	const char *c = st->text + tok->offset;
	const char *hint = "";
	char shown[EGRESS_QUOTE_MAX + 4];

	if ((unsigned char)*c >= 0x80)
		hint = " (write an international name in its xn-- form)";
	quote_bytes(shown, c, 1);
	parse_fail(st, tok->offset, 1, "invalid character '%s' in host%s", shown, hint);
}

/*
 * The grammar rejected TOK.  The rejected token and the one before it are
 * enough to say what is wrong: every combination the lexer can produce is
 * listed here (the fuzzer checks that the last resort is never reached).
 */
void
egress_report_syntax_error(struct egress_parse *st, const struct egress_token *tok)
{
	const struct egress_token *prev = &st->prev;
	char shown[EGRESS_QUOTE_MAX + 4];

	if (report_tcp_syntax_error(st, tok, prev))
		return;
	switch (tok->kind) {
	case TK_BADCHAR:
		report_bad_host_char(st, tok);
		return;
	case TK_SCHEME:
		quote_bytes(shown, st->text + tok->offset, tok->length);
		parse_fail(st, tok->offset, tok->length,
			   "a rule has no scheme: write the host without '%s'", shown);
		return;
	case TK_HOSTSPACE:
		parse_fail(st, tok->offset, tok->length, "white space inside the host");
		return;
	case TK_STAR:
		parse_fail(st, tok->offset, 1, "'*' is only allowed as a leading '*.' in a host");
		return;
	case TK_BADPATH:
		parse_fail(st, tok->offset, 1, "white space or control character in the path");
		return;
	case TK_COMMA: /* ",GET" or "GET,,POST" */
		parse_fail(st, tok->offset, 1, "empty HTTP method in the list");
		return;
	case TK_DOT: /* ".a", "a..b" or "*..a" */
		parse_fail(st, tok->offset, 1, "empty label in host");
		return;
	}
	/* TOK is the end, a path or white space: what came before is incomplete. */
	switch (prev->kind) {
	case TK_COMMA: /* "GET, a.com" or "GET," */
		parse_fail(st, prev->offset, 1, "empty HTTP method in the list");
		return;
	case TK_METHOD: /* "GET" */
		parse_fail(st, prev->offset + prev->length, 1,
			   "missing host after the method list");
		return;
	case TK_WS: /* "GET /x" */
		parse_fail(st, tok->offset, 1, "missing host after the method list");
		return;
	case TK_WILD: /* "*." or "*./x" */
		parse_fail(st, prev->offset, prev->length, "'*.' needs a domain after it");
		return;
	case TK_DOT: /* "a.com." or "a.com./x" */
		parse_fail(st, prev->offset, 1, "empty label in host");
		return;
	}
	egress_report_internal_error(st, tok);
}

/* Unreachable in practice (the fuzzer checks); better a vague error than none. */
void
egress_report_internal_error(struct egress_parse *st, const struct egress_token *tok)
{
	parse_fail(st, tok->offset, tok->length, "malformed egress rule");
}

int
egress_parse_rule(struct arena *a, const char *text, size_t len, struct egress_rule *rule,
		  struct egress_error *err)
{
	struct egress_parse st;
	struct egress_lexer lx;
	size_t begin = 0, end = len;

	memset(&st, 0, sizeof(st));
	st.arena = a;
	st.text = text;
	st.err = err;
	while (begin < end && is_space((unsigned char)text[begin]))
		begin++;
	while (end > begin && is_space((unsigned char)text[end - 1]))
		end--;
	if (begin == end) {
		parse_fail(&st, 0, len, "empty egress rule");
		return -1;
	}
	egress_lex_init(&lx, text, begin, end);
	egress_gram_parse(&st, &lx);
	if (!st.failed && !st.accepted)
		egress_report_internal_error(&st, &st.prev);
	if (st.failed)
		return -1;
	*rule = st.rule;
	return 0;
}
