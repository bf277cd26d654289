/*
 * test_http.c - the strict HTTP/1.1 parser: valid heads, every rejection
 * spec/egress.md lists, input split anywhere, limits, chunked framing and
 * request targets.
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/egress/http.h"

static struct http_parser parser;

/* Parse TEXT in one go; the result, with parser.head describing it. */
static enum http_result
parse_as(const char *text, size_t len, bool response)
{
	http_head_begin(&parser, response);
	return http_parse_head(&parser, text, len);
}

#define PARSE(text) parse_as((text), strlen(text), false)
#define PARSE_RESPONSE(text) parse_as((text), strlen(text), true)

#define assert_rejected(text, want_status, want_error)                                             \
	do {                                                                                       \
		enum http_result r_ = PARSE(text);                                                 \
		cr_assert_eq(r_, HTTP_ERROR, "accepted (result %d): %s", r_, text);                \
		cr_assert_eq(parser.status, (want_status), "status %u, not %u, for: %s",           \
			     parser.status, (unsigned)(want_status), text);                        \
		cr_assert_str_eq(parser.error, want_error, "for: %s", text);                       \
	} while (0)

static const char *
field_value(const char *buf, const char *name)
{
	static char out[4096];

	for (size_t i = 0; i < parser.head.n_fields; i++) {
		const struct http_field *f = &parser.head.fields[i];

		if (http_name_is(buf + f->name.off, f->name.len, name)) {
			snprintf(out, sizeof(out), "%.*s", (int)f->value.len, buf + f->value.off);
			return out;
		}
	}
	return NULL;
}

static char *
span_str(const char *buf, struct http_span s)
{
	static char out[8192];

	snprintf(out, sizeof(out), "%.*s", (int)s.len, buf + s.off);
	return out;
}

TestSuite(http_head);
TestSuite(http_reject);
TestSuite(http_split);
TestSuite(http_chunked);
TestSuite(http_target);

/* ---- valid heads ---------------------------------------------------------------- */

Test(http_head, absolute_form_get_is_split_into_its_parts)
{
	const char *req = "GET http://example.com/a?b=c HTTP/1.1\r\n"
			  "Host: example.com\r\n"
			  "User-Agent: test/1.0\r\n"
			  "\r\n";

	cr_assert_eq(PARSE(req), HTTP_DONE);
	cr_assert_str_eq(span_str(req, parser.head.method), "GET");
	cr_assert_str_eq(span_str(req, parser.head.target), "http://example.com/a?b=c");
	cr_assert_eq(parser.head.version, 11);
	cr_assert_eq(parser.head.n_fields, 2);
	cr_assert_eq(parser.head.length, strlen(req));
	cr_assert_eq(parser.head.host, 0);
	cr_assert_str_eq(field_value(req, "user-agent"), "test/1.0");
	cr_assert_not(parser.head.has_length);
	cr_assert_not(parser.head.chunked);
	cr_assert_not(parser.head.conn_close);
	cr_assert_eq(parser.head.max_forwards, -1);
}

Test(http_head, field_values_lose_surrounding_white_space_only)
{
	const char *req = "GET / HTTP/1.1\r\nHost:h\r\nX-A: \t a  b \t\r\nX-Empty:\r\n\r\n";

	cr_assert_eq(PARSE(req), HTTP_DONE);
	cr_assert_str_eq(field_value(req, "x-a"), "a  b");
	cr_assert_str_eq(field_value(req, "x-empty"), "");
	cr_assert_str_eq(field_value(req, "HOST"), "h");
}

Test(http_head, the_head_ends_at_the_blank_line_and_leaves_the_body)
{
	const char *req = "POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhelloGET";

	cr_assert_eq(PARSE(req), HTTP_DONE);
	cr_assert_eq(parser.head.length, strlen(req) - strlen("helloGET"));
	cr_assert(parser.head.has_length);
	cr_assert_eq(parser.head.content_length, 5);
}

Test(http_head, connect_authority_form_is_a_target)
{
	const char *req = "CONNECT api.github.com:443 HTTP/1.1\r\nHost: api.github.com:443\r\n\r\n";

	cr_assert_eq(PARSE(req), HTTP_DONE);
	cr_assert_str_eq(span_str(req, parser.head.method), "CONNECT");
	cr_assert_str_eq(span_str(req, parser.head.target), "api.github.com:443");
}

Test(http_head, connection_tokens_are_understood)
{
	const char *req = "GET / HTTP/1.1\r\nHost: h\r\nConnection: keep-alive, Upgrade\r\n"
			  "Upgrade: WebSocket\r\n\r\n";

	cr_assert_eq(PARSE(req), HTTP_DONE);
	cr_assert(parser.head.conn_upgrade);
	cr_assert(parser.head.upgrade_websocket);
	cr_assert_not(parser.head.conn_close);
	cr_assert_eq(PARSE("GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n"), HTTP_DONE);
	cr_assert(parser.head.conn_close);
}

Test(http_head, http_1_0_closes_unless_it_asks_for_keep_alive)
{
	cr_assert_eq(PARSE("GET http://h/ HTTP/1.0\r\n\r\n"), HTTP_DONE);
	cr_assert_eq(parser.head.version, 10);
	cr_assert(parser.head.conn_close);
	cr_assert_eq(PARSE("GET http://h/ HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"), HTTP_DONE);
	cr_assert_not(parser.head.conn_close);
}

Test(http_head, chunked_and_max_forwards_and_expect_are_read)
{
	cr_assert_eq(PARSE("PUT / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: Chunked\r\n"
			   "Expect: 100-continue\r\n\r\n"),
		     HTTP_DONE);
	cr_assert(parser.head.chunked);
	cr_assert(parser.head.expect_continue);
	cr_assert_eq(PARSE("TRACE / HTTP/1.1\r\nHost: h\r\nMax-Forwards: 0\r\n\r\n"), HTTP_DONE);
	cr_assert_eq(parser.head.max_forwards, 0);
}

Test(http_head, header_values_may_hold_obs_text)
{
	const char *req = "GET / HTTP/1.1\r\nHost: h\r\nX-Name: caf\xc3\xa9\r\n\r\n";

	cr_assert_eq(PARSE(req), HTTP_DONE);
	cr_assert_str_eq(field_value(req, "x-name"), "caf\xc3\xa9");
}

Test(http_head, responses_have_a_status_and_a_reason)
{
	const char *resp = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n";

	cr_assert_eq(PARSE_RESPONSE(resp), HTTP_DONE);
	cr_assert_eq(parser.head.status, 404);
	cr_assert_str_eq(span_str(resp, parser.head.reason), "Not Found");
	cr_assert_eq(PARSE_RESPONSE("HTTP/1.1 204\r\n\r\n"), HTTP_DONE);
	cr_assert_eq(parser.head.status, 204);
	cr_assert_eq(PARSE_RESPONSE("HTTP/1.0 200 OK\r\n\r\n"), HTTP_DONE);
	cr_assert_eq(parser.head.version, 10);
}

Test(http_head, responses_need_no_host)
{
	cr_assert_eq(PARSE_RESPONSE("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"),
		     HTTP_DONE);
	cr_assert(parser.head.chunked);
}

/* ---- rejections (spec/egress.md, "Strict HTTP/1.1 parsing") -------------------------- */

Test(http_reject, a_header_line_without_a_colon)
{
	assert_rejected("GET / HTTP/1.1\r\nHost: h\r\nX-Smuggle value\r\n\r\n", 400,
			"header line without a colon");
	assert_rejected("GET / HTTP/1.1\r\nHost: h\r\nGET /admin HTTP/1.1\r\n\r\n", 400,
			"header line without a colon");
}

Test(http_reject, white_space_before_the_colon)
{
	assert_rejected("GET / HTTP/1.1\r\nHost: h\r\nContent-Length : 5\r\n\r\n", 400,
			"white space before the colon of a header");
	assert_rejected("GET / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding\t: chunked\r\n\r\n", 400,
			"white space before the colon of a header");
}

Test(http_reject, obsolete_line_folding)
{
	assert_rejected("GET / HTTP/1.1\r\nHost: h\r\nX-A: a\r\n b\r\n\r\n", 400,
			"obsolete line folding (a line starting with white space)");
	assert_rejected("GET / HTTP/1.1\r\nHost: h\r\nX-A: a\r\n\tb\r\n\r\n", 400,
			"obsolete line folding (a line starting with white space)");
}

Test(http_reject, bare_cr_inside_a_line)
{
	assert_rejected("GET / HTTP/1.1\r\nHost: h\r\nX-A: a\rX-B: b\r\n\r\n", 400,
			"bare CR inside a line");
	assert_rejected("GET /\r HTTP/1.1\r\nHost: h\r\n\r\n", 400, "bare CR inside a line");
}

Test(http_reject, bare_lf_ends_no_line)
{
	assert_rejected("GET / HTTP/1.1\nHost: h\r\n\r\n", 400,
			"bare LF (a line must end in CRLF)");
	assert_rejected("GET / HTTP/1.1\r\nHost: h\nX: y\r\n\r\n", 400,
			"bare LF (a line must end in CRLF)");
	assert_rejected("GET / HTTP/1.1\r\nHost: h\r\n\n", 400,
			"bare LF (a line must end in CRLF)");
}

Test(http_reject, control_bytes_in_the_request_line)
{
	assert_rejected("GET /a\x01 HTTP/1.1\r\nHost: h\r\n\r\n", 400,
			"control byte in the request line");
	assert_rejected("GET\t/ HTTP/1.1\r\nHost: h\r\n\r\n", 400,
			"control byte in the request line");
	assert_rejected("GET /\x7f HTTP/1.1\r\nHost: h\r\n\r\n", 400,
			"control byte in the request line");
	cr_assert_eq(parse_as("GET /\0 HTTP/1.1\r\nHost: h\r\n\r\n", 28, false), HTTP_ERROR);
	cr_assert_str_eq(parser.error, "control byte in the request line");
}

Test(http_reject, control_bytes_in_header_values)
{
	assert_rejected("GET / HTTP/1.1\r\nHost: h\r\nX-A: a\x01z\r\n\r\n", 400,
			"control byte in a header value");
	cr_assert_eq(parse_as("GET / HTTP/1.1\r\nHost: h\r\nX-A: a\0b\r\n\r\n", 36, false),
		     HTTP_ERROR);
	cr_assert_str_eq(parser.error, "control byte in a header value");
}

Test(http_reject, content_length_with_transfer_encoding)
{
	assert_rejected("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n"
			"Transfer-Encoding: chunked\r\n\r\n",
			400, "both Content-Length and Transfer-Encoding");
	assert_rejected("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n"
			"Content-Length: 5\r\n\r\n",
			400, "both Content-Length and Transfer-Encoding");
}

Test(http_reject, several_content_lengths_even_when_equal)
{
	assert_rejected(
	    "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n", 400,
	    "several Content-Length headers");
	assert_rejected(
	    "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\ncontent-length: 6\r\n\r\n", 400,
	    "several Content-Length headers");
}

Test(http_reject, content_length_that_is_not_a_plain_number)
{
	static const char *const bad[] = {"5, 5", "-1", "+5",  "0x10",
					  "5 5",  "",	"1e3", "99999999999999999999999"};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char req[256];

		snprintf(req, sizeof(req),
			 "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: %s\r\n\r\n", bad[i]);
		assert_rejected(req, 400, "Content-Length is not a decimal number");
	}
}

Test(http_reject, transfer_encodings_other_than_chunked)
{
	static const char *const bad[] = {"gzip",	"gzip, chunked", "chunked, chunked",
					  "identity",	"chunked;q=1",	 "xchunked",
					  "\"chunked\""};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char req[256];

		snprintf(req, sizeof(req),
			 "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: %s\r\n\r\n", bad[i]);
		assert_rejected(req, 400, "Transfer-Encoding other than chunked");
	}
	assert_rejected("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n"
			"Transfer-Encoding: chunked\r\n\r\n",
			400, "several Transfer-Encoding headers");
}

Test(http_reject, transfer_encoding_in_http_1_0)
{
	assert_rejected("POST http://h/ HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 400,
			"Transfer-Encoding in an HTTP/1.0 message");
}

Test(http_reject, two_host_headers_or_none_in_http_1_1)
{
	assert_rejected("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400,
			"several Host headers");
	assert_rejected("GET / HTTP/1.1\r\nX: y\r\n\r\n", 400, "missing Host header");
}

Test(http_reject, malformed_request_lines)
{
	assert_rejected("\r\n", 400, "empty request line");
	assert_rejected("GET  / HTTP/1.1\r\nHost: h\r\n\r\n", 400, "malformed request target");
	assert_rejected("GET / HTTP/1.1 \r\nHost: h\r\n\r\n", 400, "malformed request line");
	assert_rejected("GET /\r\nHost: h\r\n\r\n", 400, "malformed request target");
	assert_rejected("GET / HTTP/1.1x\r\nHost: h\r\n\r\n", 400, "malformed request line");
	assert_rejected("GE(T / HTTP/1.1\r\nHost: h\r\n\r\n", 400, "malformed request method");
	assert_rejected("GET / http/1.1\r\nHost: h\r\n\r\n", 400, "malformed HTTP version");
	assert_rejected("GET /caf\xc3\xa9 HTTP/1.1\r\nHost: h\r\n\r\n", 400,
			"malformed request target");
	assert_rejected("GET / HTTP/2.0\r\nHost: h\r\n\r\n", 505, "unsupported HTTP version");
	assert_rejected("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 505, "unsupported HTTP version");
}

Test(http_reject, bad_header_names)
{
	assert_rejected("GET / HTTP/1.1\r\nHost: h\r\n: v\r\n\r\n", 400, "empty header name");
	assert_rejected("GET / HTTP/1.1\r\nHost: h\r\nX(Y): v\r\n\r\n", 400,
			"invalid character in a header name");
	assert_rejected("GET / HTTP/1.1\r\nHost: h\r\nX\xc3\xa9: v\r\n\r\n", 400,
			"invalid character in a header name");
}

Test(http_reject, max_forwards_must_be_a_number)
{
	assert_rejected("TRACE / HTTP/1.1\r\nHost: h\r\nMax-Forwards: one\r\n\r\n", 400,
			"Max-Forwards is not a decimal number");
}

Test(http_reject, responses_fail_as_bad_gateway)
{
	cr_assert_eq(
	    PARSE_RESPONSE("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\n"),
	    HTTP_ERROR);
	cr_assert_eq(parser.status, 502);
	cr_assert_eq(PARSE_RESPONSE("HTTP/1.1 20 OK\r\n\r\n"), HTTP_ERROR);
	cr_assert_str_eq(parser.error, "malformed status code");
	cr_assert_eq(PARSE_RESPONSE("HTTP/1.1 200 OK\r\nX: a\rb\r\n\r\n"), HTTP_ERROR);
	cr_assert_eq(parser.status, 502);
	cr_assert_eq(PARSE_RESPONSE("ICY 200 OK\r\n\r\n"), HTTP_ERROR);
	cr_assert_str_eq(parser.error, "malformed status line");
}

/* ---- limits --------------------------------------------------------------------------- */

static char *
head_with_fields(size_t n_fields, size_t value_len)
{
	size_t cap = 64 + n_fields * (value_len + 32);
	char *buf = malloc(cap + 3);
	size_t o = (size_t)sprintf(buf, "GET / HTTP/1.1\r\nHost: h\r\n");

	for (size_t i = 0; i < n_fields; i++) {
		o += (size_t)sprintf(buf + o, "X-%zu: ", i);
		memset(buf + o, 'v', value_len);
		o += value_len;
		buf[o++] = '\r';
		buf[o++] = '\n';
	}
	strcpy(buf + o, "\r\n");
	return buf;
}

Test(http_reject, heads_over_64_kib_are_431)
{
	char *big = head_with_fields(70, 1000);
	char *fits = head_with_fields(60, 1000);

	cr_assert_gt(strlen(big), HTTP_HEAD_MAX);
	cr_assert_eq(PARSE(big), HTTP_ERROR);
	cr_assert_eq(parser.status, 431);
	cr_assert_lt(strlen(fits), HTTP_HEAD_MAX);
	cr_assert_eq(PARSE(fits), HTTP_DONE);
	free(big);
	free(fits);
}

Test(http_reject, a_head_of_exactly_64_kib_is_accepted_one_more_byte_is_not)
{
	char *buf = malloc(HTTP_HEAD_MAX + 16);
	const char *start = "GET / HTTP/1.1\r\nHost: h\r\nX: ";
	size_t pad = HTTP_HEAD_MAX - strlen(start) - 4;

	strcpy(buf, start);
	memset(buf + strlen(start), 'a', pad);
	strcpy(buf + strlen(start) + pad, "\r\n\r\n");
	cr_assert_eq(strlen(buf), HTTP_HEAD_MAX);
	cr_assert_eq(PARSE(buf), HTTP_DONE);
	cr_assert_eq(parser.head.length, HTTP_HEAD_MAX);
	strcpy(buf + strlen(start) + pad, "a\r\n\r\n");
	cr_assert_eq(PARSE(buf), HTTP_ERROR);
	cr_assert_eq(parser.status, 431);
	free(buf);
}

Test(http_reject, a_line_that_never_ends_is_431_at_the_limit)
{
	char *buf = malloc(HTTP_HEAD_MAX + 1);

	memcpy(buf, "GET /", 5);
	memset(buf + 5, 'a', HTTP_HEAD_MAX - 5);
	cr_assert_eq(parse_as(buf, HTTP_HEAD_MAX - 1, false), HTTP_MORE);
	cr_assert_eq(parse_as(buf, HTTP_HEAD_MAX, false), HTTP_ERROR);
	cr_assert_eq(parser.status, 431);
	free(buf);
}

Test(http_reject, more_than_the_field_limit_is_431)
{
	char *many = head_with_fields(HTTP_MAX_HEADERS, 1);
	char *enough = head_with_fields(HTTP_MAX_HEADERS - 1, 1);

	cr_assert_eq(PARSE(many), HTTP_ERROR);
	cr_assert_eq(parser.status, 431);
	cr_assert_str_eq(parser.error, "too many header fields");
	cr_assert_eq(PARSE(enough), HTTP_DONE);
	free(many);
	free(enough);
}

/* ---- input in pieces --------------------------------------------------------------------- */

/* Feed TEXT growing one byte at a time: MORE until the last byte, then the one-shot result. */
static void
check_bytewise(const char *text, size_t len, enum http_result want)
{
	struct http_parser p;
	enum http_result r = HTTP_MORE;
	size_t i;

	http_head_begin(&p, false);
	for (i = 1; i <= len; i++) {
		r = http_parse_head(&p, text, i);
		if (r != HTTP_MORE)
			break;
	}
	cr_assert_eq(r, want, "byte-wise result %d, want %d, for: %s", r, want, text);
	if (want == HTTP_DONE) {
		cr_assert_eq(p.head.length, len);
		cr_assert_eq(i, len, "finished early at %zu of %zu", i, len);
	}
}

Test(http_split, every_prefix_of_a_valid_head_asks_for_more)
{
	const char *req = "POST http://h.com/up HTTP/1.1\r\nHost: h.com\r\nContent-Length: 3\r\n"
			  "X-Long: aaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n\r\n";

	check_bytewise(req, strlen(req), HTTP_DONE);
	http_head_begin(&parser, false);
	cr_assert_eq(http_parse_head(&parser, req, strlen(req)), HTTP_DONE);
	cr_assert_eq(parser.head.content_length, 3);
}

Test(http_split, any_split_gives_the_same_head_as_one_piece)
{
	const char *req = "GET http://h.com/x HTTP/1.1\r\nHost: h.com\r\nA: 1\r\nB: 2\r\n\r\n";
	size_t len = strlen(req);

	for (size_t cut = 0; cut <= len; cut++) {
		struct http_parser p;
		enum http_result r;

		http_head_begin(&p, false);
		r = http_parse_head(&p, req, cut);
		cr_assert(cut == len ? r == HTTP_DONE : r == HTTP_MORE, "cut at %zu", cut);
		r = http_parse_head(&p, req, len);
		cr_assert_eq(r, HTTP_DONE, "cut at %zu", cut);
		cr_assert_eq(p.head.n_fields, 3);
		cr_assert_eq(p.head.length, len);
		cr_assert_eq(p.head.target.len, strlen("http://h.com/x"));
	}
}

Test(http_split, a_cr_split_from_its_lf_is_not_bare_yet)
{
	const char *req = "GET / HTTP/1.1\r\nHost: h\r\n\r\n";
	struct http_parser p;

	http_head_begin(&p, false);
	cr_assert_eq(http_parse_head(&p, req, 15), HTTP_MORE); /* ends in "\r" */
	cr_assert_eq(http_parse_head(&p, req, strlen(req)), HTTP_DONE);
}

Test(http_split, errors_are_found_before_the_head_is_complete)
{
	const char *req = "GET / HTTP/1.1\r\nHost: h\r\nX-A: a\rb";
	struct http_parser p;

	/* A CR followed by anything but LF is bare as soon as the next byte is there. */
	http_head_begin(&p, false);
	cr_assert_eq(http_parse_head(&p, req, strlen(req)), HTTP_ERROR);
	cr_assert_str_eq(p.error, "bare CR inside a line");
	check_bytewise("GET / HTTP/1.1\r\nBad Header\r\nHost: h\r\n\r\n", 40, HTTP_ERROR);
}

Test(http_split, an_error_stays_an_error)
{
	struct http_parser p;
	const char *req = "GET / HTTP/1.1\nHost: h\r\n\r\n";

	http_head_begin(&p, false);
	cr_assert_eq(http_parse_head(&p, req, strlen(req)), HTTP_ERROR);
	cr_assert_eq(http_parse_head(&p, req, strlen(req)), HTTP_ERROR);
}

/* ---- chunked ------------------------------------------------------------------------------ */

/*
 * Decode TEXT feeding at most STEP bytes of it at a time (the decoder sees
 * a growing window, as the proxy's evbuffer would be).  Returns the data
 * bytes, or NULL with *WHY on error; *USED is where the body ended.
 */
static char *
dechunk(const char *text, size_t len, size_t step, size_t *out_len, size_t *used, const char **why)
{
	struct http_chunked c;
	char *out = malloc(len + 1);
	size_t pos = 0, avail_end = 0, o = 0;

	http_chunked_init(&c);
	*why = NULL;
	for (;;) {
		size_t n, avail;
		enum http_chunk_step s;

		if (avail_end < len && (avail_end - pos < HTTP_CHUNK_LINE_MAX + 2 || step == 1)) {
			avail_end += step;
			if (avail_end > len)
				avail_end = len;
		}
		avail = avail_end - pos;
		s = http_chunked_step(&c, text + pos, avail, avail, &n);
		switch (s) {
		case CHUNK_MORE:
			if (avail_end == len) {
				*why = "truncated";
				free(out);
				return NULL;
			}
			avail_end = avail_end + step > len ? len : avail_end + step;
			break;
		case CHUNK_SKIP:
			pos += n;
			break;
		case CHUNK_DATA:
			memcpy(out + o, text + pos, n);
			o += n;
			pos += n;
			break;
		case CHUNK_DONE:
			pos += n;
			*out_len = o;
			*used = pos;
			out[o] = '\0';
			return out;
		default:
			*why = c.error;
			free(out);
			return NULL;
		}
	}
}

Test(http_chunked, a_body_in_chunks_decodes_whole_at_any_feeding_size)
{
	const char *body =
	    "5\r\nhello\r\n1;name=value\r\n \r\nA\r\n0123456789\r\n0\r\nX-Trailer: t\r\n\r\n"
	    "NEXT";
	static const size_t steps[] = {1, 2, 3, 7, 1000};

	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		size_t n = 0, used = 0;
		const char *why;
		char *out = dechunk(body, strlen(body), steps[i], &n, &used, &why);

		cr_assert_not_null(out, "step %zu: %s", steps[i], why);
		cr_assert_str_eq(out, "hello 0123456789");
		cr_assert_eq(used, strlen(body) - 4, "step %zu", steps[i]);
		free(out);
	}
}

static void
assert_chunk_error(const char *body, const char *want)
{
	size_t n, used;
	const char *why;
	char *out = dechunk(body, strlen(body), 1000, &n, &used, &why);

	cr_assert_null(out, "accepted: %s", body);
	cr_assert_str_eq(why, want, "for: %s", body);
}

Test(http_chunked, malformed_framing_is_refused)
{
	assert_chunk_error("x\r\n", "malformed chunk size");
	assert_chunk_error("-1\r\n", "malformed chunk size");
	assert_chunk_error("\r\n", "empty chunk size line");
	assert_chunk_error("5\nhello\r\n0\r\n\r\n", "bare LF in chunk framing");
	assert_chunk_error("5\r\nhelloXY0\r\n\r\n", "missing CRLF after chunk data");
	assert_chunk_error("5 \r\nhello\r\n0\r\n\r\n", "malformed chunk size");
	assert_chunk_error("5;a\x01\r\nhello\r\n0\r\n\r\n", "control byte in a chunk extension");
	assert_chunk_error("10000000000000000\r\n", "chunk size too large");
	assert_chunk_error("0\r\nBad trailer\r\n\r\n", "header line without a colon");
	assert_chunk_error("5\r\nhello\r\n0\r\n\r", "truncated");
	assert_chunk_error("5\r\r\nhello\r\n0\r\n\r\n", "bare CR in chunk framing");
}

Test(http_chunked, leading_zeros_and_a_big_size_are_fine)
{
	struct http_chunked c;
	size_t n;

	http_chunked_init(&c);
	cr_assert_eq(http_chunked_step(&c, "000000000000000000000ffffffff\r\n", 31, 31, &n),
		     CHUNK_SKIP);
	cr_assert_eq(n, 31);
	cr_assert_eq(c.remaining, 0xffffffffull);
	/* Data is never looked at: only its amount. */
	cr_assert_eq(http_chunked_lookahead(&c), 0);
	cr_assert_eq(http_chunked_step(&c, NULL, 0, 1u << 30, &n), CHUNK_DATA);
	cr_assert_eq(n, 1u << 30);
}

Test(http_chunked, a_size_line_longer_than_the_limit_is_refused)
{
	char *line = malloc(HTTP_CHUNK_LINE_MAX + 10);
	struct http_chunked c;
	size_t n;

	memset(line, '0', HTTP_CHUNK_LINE_MAX + 10);
	http_chunked_init(&c);
	cr_assert_eq(
	    http_chunked_step(&c, line, HTTP_CHUNK_LINE_MAX + 2, HTTP_CHUNK_LINE_MAX + 10, &n),
	    CHUNK_ERROR);
	cr_assert_str_eq(c.error, "chunk framing line too long");
	free(line);
}

Test(http_chunked, a_trailer_section_over_64_kib_is_refused)
{
	struct http_chunked c;
	char line[1100];
	size_t n;
	int i;

	http_chunked_init(&c);
	cr_assert_eq(http_chunked_step(&c, "0\r\n", 3, 3, &n), CHUNK_SKIP);
	memset(line, 'a', sizeof(line));
	memcpy(line, "X-T: ", 5);
	memcpy(line + 1098, "\r\n", 2);
	for (i = 0; i < 100; i++)
		if (http_chunked_step(&c, line, sizeof(line), sizeof(line), &n) != CHUNK_SKIP)
			break;
	cr_assert_lt(i, 100);
	cr_assert_str_eq(c.error, "trailer section too large");
}

/* ---- targets -------------------------------------------------------------------------------- */

#define URL(s, scheme, u, why) http_parse_absolute((s), strlen(s), (scheme), (u), (why))

Test(http_target, absolute_urls_split_into_host_port_and_path)
{
	struct http_url u;
	const char *why;

	cr_assert_eq(URL("http://Example.com:8080/a/b?c=d", "http", &u, &why), 0);
	cr_assert_eq(u.host_len, 11);
	cr_assert_eq(strncmp(u.host, "Example.com", 11), 0);
	cr_assert_eq(u.port, 8080);
	cr_assert(u.port_given);
	cr_assert_eq(strncmp(u.path, "/a/b?c=d", u.path_len), 0);
	cr_assert_eq(URL("HTTP://h.com", "http", &u, &why), 0);
	cr_assert_eq(u.port, 80);
	cr_assert_eq(u.path_len, 0);
	cr_assert_eq(URL("https://h.com?x", "https", &u, &why), 0);
	cr_assert_eq(u.port, 443);
	cr_assert_eq(strncmp(u.path, "?x", u.path_len), 0);
}

Test(http_target, bad_absolute_urls_say_why)
{
	struct http_url u;
	const char *why;

	cr_assert_eq(URL("https://h.com/", "http", &u, &why), -1);
	cr_assert_str_eq(why, "unsupported URL scheme");
	cr_assert_eq(URL("/relative", "http", &u, &why), -1);
	cr_assert_str_eq(why, "not an absolute URL");
	cr_assert_eq(URL("http://user:pw@h.com/", "http", &u, &why), -1);
	cr_assert_str_eq(why, "user name or password in the URL");
	cr_assert_eq(URL("http://h.com:0/", "http", &u, &why), -1);
	cr_assert_str_eq(why, "bad port");
	cr_assert_eq(URL("http://h.com:65536/", "http", &u, &why), -1);
	cr_assert_eq(URL("http://h.com:/", "http", &u, &why), -1);
	cr_assert_eq(URL("http://h.com:8x/", "http", &u, &why), -1);
	cr_assert_eq(URL("http:///path", "http", &u, &why), -1);
	cr_assert_str_eq(why, "empty host");
	cr_assert_eq(URL("http://h.com/a#frag", "http", &u, &why), -1);
	cr_assert_str_eq(why, "fragment in the request target");
}

Test(http_target, ipv6_literals_are_recognised_so_they_can_be_refused)
{
	struct http_url u;
	const char *why;

	cr_assert_eq(URL("http://[::1]:8080/", "http", &u, &why), 0);
	cr_assert(u.ipv6);
	cr_assert_eq(u.host_len, 3);
	cr_assert_eq(http_parse_authority("[::1]:443", 9, &u, &why), 0);
	cr_assert(u.ipv6);
	cr_assert_eq(http_parse_authority("[::1", 4, &u, &why), -1);
}

Test(http_target, connect_needs_host_and_port)
{
	struct http_url u;
	const char *why;

	cr_assert_eq(http_parse_authority("api.github.com:443", 18, &u, &why), 0);
	cr_assert_eq(u.port, 443);
	cr_assert_eq(u.host_len, 14);
	cr_assert_eq(http_parse_authority("api.github.com", 14, &u, &why), -1);
	cr_assert_str_eq(why, "missing port");
	cr_assert_eq(http_parse_authority("h.com:443/x", 11, &u, &why), -1);
	cr_assert_eq(http_parse_authority("u@h.com:443", 11, &u, &why), -1);
	cr_assert_eq(http_parse_authority(":443", 4, &u, &why), -1);
}

Test(http_target, host_fields_with_and_without_port)
{
	struct http_url u;
	const char *why;

	cr_assert_eq(http_parse_host_field("h.com", 5, &u, &why), 0);
	cr_assert_not(u.port_given);
	cr_assert_eq(http_parse_host_field("h.com:8443", 10, &u, &why), 0);
	cr_assert_eq(u.port, 8443);
	cr_assert_eq(http_parse_host_field("h.com/x", 7, &u, &why), -1);
	cr_assert_eq(http_parse_host_field("a b", 3, &u, &why), -1);
}

Test(http_target, token_lists)
{
	cr_assert(http_list_has("keep-alive, Upgrade", 19, "upgrade"));
	cr_assert(http_list_has(" close ", 7, "close"));
	cr_assert_not(http_list_has("closed", 6, "close"));
	cr_assert_not(http_list_has("", 0, "close"));
	cr_assert(http_list_has(",,x,,", 5, "x"));
}
