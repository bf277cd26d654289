/*
 * fuzz_http.c - libFuzzer target for the strict HTTP/1.1 parser (runtime/http.re).
 *
 * Byte 0 chooses request or response and where to split the input; the
 * rest is parsed as a head, once whole and once in two pieces (as it
 * would arrive from a socket), and both must agree.  A parsed head must be
 * internally consistent; what follows it is decoded as a chunked body,
 * once with everything visible and once fed byte by byte, and both must
 * agree too.  The target parsers run on the request target.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/egress/http.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check(bool ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "invariant broken: %s\n", what);
		abort();
	}
}

static bool
span_in(struct http_span s, size_t len)
{
	return s.off <= len && s.len <= len - s.off;
}

static void
check_head(const struct http_parser *p, const char *buf, size_t size)
{
	const struct http_head *h = &p->head;

	check(h->length >= 4 && h->length <= size && h->length <= HTTP_HEAD_MAX, "head length");
	check(memcmp(buf + h->length - 4, "\r\n\r\n", 4) == 0 ||
		  (h->length >= 2 && memcmp(buf + h->length - 2, "\r\n", 2) == 0),
	      "a head ends in CRLF");
	check(h->n_fields <= HTTP_MAX_HEADERS, "field count");
	check(h->version == 10 || h->version == 11, "version");
	check(!(h->has_length && h->chunked), "never both framings");
	check(!(h->chunked && h->version == 10), "no chunked HTTP/1.0");
	check(h->host < (int)h->n_fields, "host index");
	for (size_t i = 0; i < h->n_fields; i++) {
		const struct http_field *f = &h->fields[i];

		check(span_in(f->name, h->length) && span_in(f->value, h->length), "field spans");
		check(f->name.len > 0, "field names are not empty");
		for (size_t k = 0; k < f->value.len; k++) {
			unsigned char c = (unsigned char)buf[f->value.off + k];

			check(c == '\t' || (c >= 0x20 && c != 0x7f), "no control byte in values");
		}
		check(!memchr(buf + f->name.off, ':', f->name.len), "no colon in names");
	}
	if (!h->response) {
		check(span_in(h->method, h->length) && h->method.len > 0, "method span");
		check(span_in(h->target, h->length) && h->target.len > 0, "target span");
		for (size_t k = 0; k < h->target.len; k++) {
			unsigned char c = (unsigned char)buf[h->target.off + k];

			check(c > 0x20 && c < 0x7f, "targets are visible ASCII");
		}
		check(h->version == 11 ? h->host >= 0 : true, "HTTP/1.1 requests have a Host");
	} else {
		check(h->status >= 100 && h->status <= 999, "status");
	}
}

static bool
same_head(const struct http_head *a, const struct http_head *b)
{
	return a->length == b->length && a->n_fields == b->n_fields &&
	       a->content_length == b->content_length && a->has_length == b->has_length &&
	       a->chunked == b->chunked && a->host == b->host && a->conn_close == b->conn_close &&
	       a->status == b->status && a->target.off == b->target.off &&
	       a->target.len == b->target.len &&
	       memcmp(a->fields, b->fields, a->n_fields * sizeof(a->fields[0])) == 0;
}

/* Decode a chunked body; STEP 0: all visible at once.  Returns the data bytes, or -1. */
static long
dechunk(const char *buf, size_t len, size_t step, size_t *used)
{
	struct http_chunked c;
	size_t pos = 0, visible = step ? 0 : len;
	long data = 0;

	http_chunked_init(&c);
	for (int guard = 0; guard < 1000000; guard++) {
		size_t n, avail;
		enum http_chunk_step s;

		avail = visible - pos;
		s = http_chunked_step(&c, buf + pos, avail, avail, &n);
		check(n <= avail, "a step consumes what is there");
		switch (s) {
		case CHUNK_MORE:
			if (visible == len)
				return -2; /* truncated */
			visible = visible + step > len ? len : visible + step;
			break;
		case CHUNK_SKIP:
			check(n > 0, "a skip makes progress");
			pos += n;
			break;
		case CHUNK_DATA:
			check(n > 0, "data makes progress");
			pos += n;
			data += (long)n;
			break;
		case CHUNK_DONE:
			pos += n;
			*used = pos;
			return data;
		default:
			check(c.error != NULL, "errors have a reason");
			return -1;
		}
	}
	check(false, "the decoder terminates");
	return -1;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct http_parser *whole, *split;
	const char *buf = (const char *)data + 1;
	enum http_result r1, r2;
	bool response;
	size_t cut;

	if (size < 1)
		return 0;
	response = data[0] & 1;
	size--;
	cut = size ? (data[0] >> 1) % (size + 1) : 0;
	whole = malloc(sizeof(*whole));
	split = malloc(sizeof(*split));
	http_head_begin(whole, response);
	http_head_begin(split, response);
	r1 = http_parse_head(whole, buf, size);
	r2 = http_parse_head(split, buf, cut);
	if (r2 == HTTP_MORE)
		r2 = http_parse_head(split, buf, size);
	else if (r2 == HTTP_DONE)
		check(r1 == HTTP_DONE, "a head found in a prefix is found in the whole");
	check(r1 == r2, "split and whole input agree");
	if (r1 == HTTP_ERROR) {
		check(whole->error && whole->error[0], "errors have a reason");
		check(response
			  ? whole->status == 502
			  : (whole->status == 400 || whole->status == 431 || whole->status == 505),
		      "error status");
		check(split->status == whole->status, "same status both ways");
	}
	if (r1 == HTTP_MORE)
		check(size < HTTP_HEAD_MAX, "more input is only wanted below the limit");
	if (r1 == HTTP_DONE) {
		size_t rest = size - whole->head.length, used1 = 0, used2 = 0;
		long d1, d2;

		check_head(whole, buf, size);
		check(same_head(&whole->head, &split->head), "split and whole give one head");
		d1 = dechunk(buf + whole->head.length, rest, 0, &used1);
		d2 = dechunk(buf + whole->head.length, rest, 1, &used2);
		check(d1 == d2, "chunked decoding does not depend on how bytes arrive");
		check(d1 < 0 || (used1 == used2 && used1 <= rest && (size_t)d1 <= used1),
		      "chunked bookkeeping");
		if (!response) {
			struct http_url u;
			const char *why = NULL, *t = buf + whole->head.target.off;
			size_t tl = whole->head.target.len;

			if (http_parse_absolute(t, tl, "http", &u, &why) == 0)
				check(u.host_len > 0 && u.host >= t &&
					  u.host + u.host_len <= t + tl &&
					  u.path + u.path_len == t + tl && u.port > 0,
				      "absolute URL parts");
			else
				check(why != NULL, "URL errors have a reason");
			if (http_parse_authority(t, tl, &u, &why) == 0)
				check(u.host_len > 0 && u.port > 0, "authority parts");
		}
	}
	free(whole);
	free(split);
	return 0;
}
