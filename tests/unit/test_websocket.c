/*
 * test_websocket.c - the RFC 6455 handshake values and the frame checker:
 * keys and Accept values, every framing rule the checker enforces, and
 * streams fed whole, byte by byte and split anywhere.
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "runtime/egress/websocket.h"

#define RFC_KEY "dGhlIHNhbXBsZSBub25jZQ=="
/* RFC 6455 section 1.3. */
#define RFC_ACCEPT "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="

/* Room for the largest stream a test builds (a 70000-byte frame and a few more). */
#define STREAM_MAX 80000

struct stream {
	unsigned char b[STREAM_MAX];
	size_t len;
};

static struct stream s;

static void
put(struct stream *st, const void *p, size_t n)
{
	cr_assert_leq(n, sizeof(st->b) - st->len, "test stream overflow");
	memcpy(st->b + st->len, p, n);
	st->len += n;
}

/*
 * Append one frame with the minimal length encoding.  MASKED adds a
 * masking key and masks the payload, as a client would.
 */
static void
put_frame(struct stream *st, bool fin, unsigned op, bool masked, const void *payload, size_t n)
{
	static const unsigned char key[4] = {0x37, 0xfa, 0x21, 0x3d};
	unsigned char h[WS_HEADER_MAX];
	size_t hl = 0;

	h[hl++] = (unsigned char)((fin ? 0x80 : 0) | op);
	if (n < 126) {
		h[hl++] = (unsigned char)((masked ? 0x80 : 0) | n);
	} else if (n <= 0xffff) {
		h[hl++] = (unsigned char)((masked ? 0x80 : 0) | 126);
		h[hl++] = (unsigned char)(n >> 8);
		h[hl++] = (unsigned char)n;
	} else {
		h[hl++] = (unsigned char)((masked ? 0x80 : 0) | 127);
		for (int i = 7; i >= 0; i--)
			h[hl++] = (unsigned char)((uint64_t)n >> (8 * i));
	}
	if (masked) {
		memcpy(h + hl, key, 4);
		hl += 4;
	}
	put(st, h, hl);
	cr_assert_leq(n, sizeof(st->b) - st->len, "test stream overflow");
	for (size_t i = 0; i < n; i++) {
		unsigned char c = payload ? ((const unsigned char *)payload)[i] : (unsigned char)i;

		st->b[st->len++] = masked ? c ^ key[i % 4] : c;
	}
}

/* Feed BUF/LEN to a fresh checker in one piece; the result, with the reason in *WHY. */
static int
feed_whole(enum ws_dir dir, const void *buf, size_t len, const char **why)
{
	struct ws_checker w;

	*why = NULL;
	ws_checker_init(&w, dir);
	return ws_checker_feed(&w, buf, len, why);
}

/* Feed BUF/LEN in pieces of STEP bytes (the last may be shorter), stopping at a violation. */
static int
feed_steps(enum ws_dir dir, const void *data, size_t len, size_t step, const char **why)
{
	const unsigned char *buf = data;
	struct ws_checker w;

	*why = NULL;
	ws_checker_init(&w, dir);
	for (size_t off = 0; off < len; off += step) {
		size_t n = len - off < step ? len - off : step;

		if (ws_checker_feed(&w, buf + off, n, why) != 0)
			return -1;
	}
	return 0;
}

#define assert_accepted(dir, buf, len)                                                             \
	do {                                                                                       \
		const char *why_ = NULL;                                                           \
		int r_ = feed_whole((dir), (buf), (len), &why_);                                   \
		cr_assert_eq(r_, 0, "refused: %s", why_ ? why_ : "(no reason)");                   \
	} while (0)

/* Refused whole, and byte by byte, for the same reason WANT. */
#define assert_refused(dir, buf, len, want)                                                        \
	do {                                                                                       \
		const char *why_ = NULL;                                                           \
		cr_assert_eq(feed_whole((dir), (buf), (len), &why_), -1, "accepted");              \
		cr_assert_str_eq(why_, (want));                                                    \
		cr_assert_eq(feed_steps((dir), (buf), (len), 1, &why_), -1,                        \
			     "accepted byte by byte");                                             \
		cr_assert_str_eq(why_, (want), "byte by byte");                                    \
	} while (0)

#define BYTES(...) ((const unsigned char[]){__VA_ARGS__})
#define NBYTES(...) sizeof((const unsigned char[]){__VA_ARGS__})
#define ACCEPTED(dir, ...) assert_accepted((dir), BYTES(__VA_ARGS__), NBYTES(__VA_ARGS__))
#define REFUSED(dir, want, ...) assert_refused((dir), BYTES(__VA_ARGS__), NBYTES(__VA_ARGS__), want)

TestSuite(websocket);
TestSuite(websocket_frame);
TestSuite(websocket_stream);

/* ---- handshake ------------------------------------------------------------------- */

Test(websocket, accept_value_matches_rfc_6455_example)
{
	char out[WS_ACCEPT_LEN + 1];

	ws_accept_value(RFC_KEY, strlen(RFC_KEY), out);
	cr_assert_str_eq(out, RFC_ACCEPT);
	cr_assert(ws_accept_matches(RFC_KEY, strlen(RFC_KEY), RFC_ACCEPT, strlen(RFC_ACCEPT)));
}

Test(websocket, accept_value_hashes_whatever_key_it_is_given)
{
	char a[WS_ACCEPT_LEN + 1], b[WS_ACCEPT_LEN + 1];
	char longkey[300];

	memset(longkey, 'k', sizeof(longkey));
	ws_accept_value("", 0, a);
	cr_assert_eq(strlen(a), WS_ACCEPT_LEN);
	ws_accept_value(longkey, sizeof(longkey), b);
	cr_assert_eq(strlen(b), WS_ACCEPT_LEN);
	cr_assert_str_neq(a, b);
}

Test(websocket, accept_matches_only_the_exact_value)
{
	const char *k = RFC_KEY;
	size_t kl = strlen(k);

	cr_assert_not(ws_accept_matches(k, kl, "S3pPLMBiTxaQ9kYGzzhZRbK+xOo=", 28), "case differs");
	cr_assert_not(ws_accept_matches(k, kl, "s3pPLMBiTxaQ9kYGzzhZRbK+xOo", 27), "truncated");
	cr_assert_not(ws_accept_matches(k, kl, "s3pPLMBiTxaQ9kYGzzhZRbK+xOo= ", 29),
		      "trailing space (the caller trims)");
	cr_assert_not(ws_accept_matches(k, kl, " s3pPLMBiTxaQ9kYGzzhZRbK+xOo", 28), "shifted");
	cr_assert_not(ws_accept_matches(k, kl, "", 0), "empty");
	cr_assert_not(ws_accept_matches("AAAAAAAAAAAAAAAAAAAAAA==", 24, RFC_ACCEPT, 28),
		      "another key's value");
	/* A prefix of the expected value, with its length: still not the whole value. */
	cr_assert_not(ws_accept_matches(k, kl, RFC_ACCEPT, 20));
}

Test(websocket, accept_matches_is_false_for_an_invalid_key)
{
	char out[WS_ACCEPT_LEN + 1];

	/* The value computed from the bad key itself still does not count. */
	ws_accept_value("not a key", 9, out);
	cr_assert_not(ws_accept_matches("not a key", 9, out, strlen(out)));
}

Test(websocket, a_valid_key_is_base64_of_16_bytes)
{
	unsigned char raw[16];
	char enc[32];

	cr_assert(ws_key_is_valid(RFC_KEY, strlen(RFC_KEY)));
	cr_assert(ws_key_is_valid("AAAAAAAAAAAAAAAAAAAAAA==", 24));
	cr_assert(ws_key_is_valid("/////////////////////w==", 24));
	cr_assert(ws_key_is_valid("+++++++++++++++++++++g==", 24));
	/* Every 16-byte value encodes to a valid key. */
	for (int v = 0; v < 256; v++) {
		for (int i = 0; i < 16; i++)
			raw[i] = (unsigned char)(v * 31 + i * 7);
		cr_assert_eq(EVP_EncodeBlock((unsigned char *)enc, raw, 16), 24);
		cr_assert(ws_key_is_valid(enc, 24), "%s", enc);
	}
}

Test(websocket, keys_of_the_wrong_length_are_invalid)
{
	cr_assert_not(ws_key_is_valid("", 0));
	cr_assert_not(ws_key_is_valid("dGhlIHNhbXBsZSBub25jZQ=", 23));
	cr_assert_not(ws_key_is_valid("dGhlIHNhbXBsZSBub25jZQ===", 25));
	cr_assert_not(ws_key_is_valid("dGhlIHNhbXBsZSBub25jZQ==AAAA", 28));
	/* LEN is what counts, not a NUL. */
	cr_assert_not(ws_key_is_valid(RFC_KEY, 22));
}

Test(websocket, keys_of_15_or_17_bytes_are_invalid)
{
	unsigned char raw[18] = {0};
	char enc[32];

	/* 15 bytes: 20 characters, no padding. */
	cr_assert_eq(EVP_EncodeBlock((unsigned char *)enc, raw, 15), 20);
	cr_assert_not(ws_key_is_valid(enc, 20));
	/* 17 bytes: 24 characters like a real key, but one "=". */
	cr_assert_eq(EVP_EncodeBlock((unsigned char *)enc, raw, 17), 24);
	cr_assert_not(ws_key_is_valid(enc, 24), "%s", enc);
	/* 18 bytes: 24 characters and no padding. */
	cr_assert_eq(EVP_EncodeBlock((unsigned char *)enc, raw, 18), 24);
	cr_assert_not(ws_key_is_valid(enc, 24), "%s", enc);
}

Test(websocket, keys_that_are_not_base64_are_invalid)
{
	static const char *const bad[] = {
	    "dGhlIHNhbXBsZSBub25jZQ-=", /* pad then not pad */
	    "dGhlIHNhbXBsZSBub25j-Q==", /* URL-safe alphabet */
	    "dGhlIHNhbXBsZSBub25j_Q==", "dGhlIHNhbXBsZSBub25j*Q==",
	    "dGhlIHNhbXBsZSBub25jZ===", /* padding too early */
	    "=GhlIHNhbXBsZSBub25jZQ==", "dGhlIHNhbXBsZSBub25jZQ\r\n",
	    "dGhlIHNhbXBsZSBub25jZQ.=",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_not(ws_key_is_valid(bad[i], strlen(bad[i])), "%s", bad[i]);
	/* A NUL inside: the length says 24, the content is not base64. */
	cr_assert_not(ws_key_is_valid("dGhlIHNhbXBs\0SBub25jZQ==", 24));
	/* High bytes are not base64 either. */
	cr_assert_not(ws_key_is_valid("dGhlIHNhbXBs\xc3\xa9SBub25jQ==", 24));
}

Test(websocket, white_space_anywhere_makes_a_key_invalid)
{
	cr_assert_not(ws_key_is_valid(" dGhlIHNhbXBsZSBub25jZQ==", 25));
	cr_assert_not(ws_key_is_valid("dGhlIHNhbXBsZSBub25jZQ== ", 25));
	cr_assert_not(ws_key_is_valid(" GhlIHNhbXBsZSBub25jZQ==", 24));
	cr_assert_not(ws_key_is_valid("dGhlIHNhbX\tsZSBub25jZQ==", 24));
	cr_assert_not(ws_key_is_valid("dGhlIHNhbXBsZSBub25jZ ==", 24));
}

Test(websocket, a_key_with_stray_bits_before_the_padding_is_not_canonical)
{
	/* 'R' (17) decodes to the same 16 bytes as 'Q' (16) by a lenient decoder. */
	cr_assert_not(ws_key_is_valid("dGhlIHNhbXBsZSBub25jZR==", 24));
	cr_assert_not(ws_key_is_valid("AAAAAAAAAAAAAAAAAAAAAB==", 24));
	cr_assert_not(ws_key_is_valid("AAAAAAAAAAAAAAAAAAAAA/==", 24));
}

/* ---- frames ------------------------------------------------------------------------ */

Test(websocket_frame, masked_frames_from_the_client_are_accepted)
{
	/* "Hello" masked, from RFC 6455 section 5.7. */
	ACCEPTED(WS_FROM_CLIENT, 0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58);
	/* Empty masked frames have a key and nothing else. */
	ACCEPTED(WS_FROM_CLIENT, 0x82, 0x80, 1, 2, 3, 4, 0x89, 0x80, 0, 0, 0, 0);
}

Test(websocket_frame, unmasked_frames_from_the_client_are_refused)
{
	REFUSED(WS_FROM_CLIENT, "unmasked frame from the client", 0x81, 0x05, 'H', 'e', 'l', 'l',
		'o');
	REFUSED(WS_FROM_CLIENT, "unmasked frame from the client", 0x89, 0x00);
}

Test(websocket_frame, unmasked_frames_from_the_server_are_accepted)
{
	ACCEPTED(WS_FROM_SERVER, 0x81, 0x05, 'H', 'e', 'l', 'l', 'o');
	ACCEPTED(WS_FROM_SERVER, 0x8a, 0x00);
}

Test(websocket_frame, masked_frames_from_the_server_are_refused)
{
	REFUSED(WS_FROM_SERVER, "masked frame from the server", 0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d,
		0x7f, 0x9f, 0x4d, 0x51, 0x58);
}

Test(websocket_frame, control_frames_of_up_to_125_bytes_are_accepted)
{
	s.len = 0;
	put_frame(&s, true, 0x9, false, NULL, 125);
	put_frame(&s, true, 0xa, false, NULL, 125);
	put_frame(&s, true, 0x8, false, NULL, 125);
	assert_accepted(WS_FROM_SERVER, s.b, s.len);
}

Test(websocket_frame, control_frames_longer_than_125_bytes_are_refused)
{
	REFUSED(WS_FROM_SERVER, "control frame longer than 125 bytes", 0x89, 0x7e, 0x00, 0x7e);
	REFUSED(WS_FROM_SERVER, "control frame longer than 125 bytes", 0x8a, 0x7f, 0, 0, 0, 0, 0, 1,
		0, 0);
	REFUSED(WS_FROM_CLIENT, "control frame longer than 125 bytes", 0x88, 0xfe, 0x00, 0x7e, 1, 2,
		3, 4);
}

Test(websocket_frame, fragmented_control_frames_are_refused)
{
	REFUSED(WS_FROM_SERVER, "fragmented control frame", 0x09, 0x00);
	REFUSED(WS_FROM_SERVER, "fragmented control frame", 0x0a, 0x00);
	REFUSED(WS_FROM_CLIENT, "fragmented control frame", 0x08, 0x80, 1, 2, 3, 4);
}

Test(websocket_frame, reserved_opcodes_are_refused)
{
	for (unsigned op = 0; op < 16; op++) {
		unsigned char f[2] = {(unsigned char)(0x80 | op), 0x00};
		const char *why;
		bool known = op <= 2 || (op >= 8 && op <= 10);

		if (known)
			continue;
		cr_assert_eq(feed_whole(WS_FROM_SERVER, f, 2, &why), -1, "opcode %u", op);
		cr_assert_str_eq(why, "reserved opcode");
		/* Found from the first byte alone. */
		cr_assert_eq(feed_whole(WS_FROM_SERVER, f, 1, &why), -1, "opcode %u", op);
	}
}

Test(websocket_frame, reserved_bits_are_refused_since_no_extension_is_negotiated)
{
	REFUSED(WS_FROM_SERVER, "reserved bit set without an extension", 0xc1, 0x00); /* RSV1 */
	REFUSED(WS_FROM_SERVER, "reserved bit set without an extension", 0xa1, 0x00); /* RSV2 */
	REFUSED(WS_FROM_SERVER, "reserved bit set without an extension", 0x91, 0x00); /* RSV3 */
	REFUSED(WS_FROM_CLIENT, "reserved bit set without an extension", 0xf2, 0x80, 0, 0, 0, 0);
}

Test(websocket_frame, lengths_at_the_encoding_boundaries_are_accepted)
{
	s.len = 0;
	put_frame(&s, true, 0x2, false, NULL, 125);
	put_frame(&s, true, 0x2, false, NULL, 126);
	put_frame(&s, true, 0x2, false, NULL, 65535);
	put_frame(&s, true, 0x2, false, NULL, 0);
	assert_accepted(WS_FROM_SERVER, s.b, s.len);
	/* 126 and 65535 took the 16-bit form, as the builder says. */
	cr_assert_eq(s.len, (2 + 125) + (4 + 126) + (4 + 65535) + 2);
}

Test(websocket_frame, non_minimal_lengths_are_refused)
{
	REFUSED(WS_FROM_SERVER, "non-minimal 16-bit payload length", 0x82, 0x7e, 0x00, 0x7d);
	REFUSED(WS_FROM_SERVER, "non-minimal 16-bit payload length", 0x82, 0x7e, 0x00, 0x00);
	REFUSED(WS_FROM_SERVER, "non-minimal 64-bit payload length", 0x82, 0x7f, 0, 0, 0, 0, 0, 0,
		0xff, 0xff);
	REFUSED(WS_FROM_SERVER, "non-minimal 64-bit payload length", 0x82, 0x7f, 0, 0, 0, 0, 0, 0,
		0, 5);
	REFUSED(WS_FROM_CLIENT, "non-minimal 64-bit payload length", 0x81, 0xff, 0, 0, 0, 0, 0, 0,
		0, 0, 1, 2, 3, 4);
	/* The smallest 64-bit form and the largest 16-bit one are fine (headers only here). */
	ACCEPTED(WS_FROM_SERVER, 0x82, 0x7f, 0, 0, 0, 0, 0, 1, 0, 0);
	ACCEPTED(WS_FROM_SERVER, 0x82, 0x7e, 0x00, 0x7e);
}

Test(websocket_frame, a_64_bit_length_with_the_top_bit_set_is_refused)
{
	REFUSED(WS_FROM_SERVER, "64-bit payload length with the top bit set", 0x82, 0x7f, 0x80, 0,
		0, 0, 0, 0, 0, 0);
	REFUSED(WS_FROM_SERVER, "64-bit payload length with the top bit set", 0x82, 0x7f, 0xff,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff);
	/* The largest legal length is a header like any other. */
	ACCEPTED(WS_FROM_SERVER, 0x82, 0x7f, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff);
}

Test(websocket_frame, a_close_frame_with_a_one_byte_body_is_refused)
{
	REFUSED(WS_FROM_SERVER, "close frame with a one-byte body", 0x88, 0x01, 0x03);
	ACCEPTED(WS_FROM_SERVER, 0x88, 0x02, 0x03, 0xe8);
	ACCEPTED(WS_FROM_SERVER, 0x88, 0x00);
}

Test(websocket_frame, a_continuation_without_a_start_is_refused)
{
	REFUSED(WS_FROM_SERVER, "continuation frame outside a fragmented message", 0x80, 0x00);
	REFUSED(WS_FROM_SERVER, "continuation frame outside a fragmented message", 0x00, 0x00);
	/* Nor after a message that has ended. */
	REFUSED(WS_FROM_SERVER, "continuation frame outside a fragmented message", 0x01, 0x01, 'a',
		0x80, 0x01, 'b', 0x80, 0x01, 'c');
}

Test(websocket_frame, a_new_message_inside_a_fragmented_one_is_refused)
{
	REFUSED(WS_FROM_SERVER, "new message inside a fragmented message", 0x01, 0x01, 'a', 0x81,
		0x01, 'b');
	REFUSED(WS_FROM_SERVER, "new message inside a fragmented message", 0x02, 0x00, 0x00, 0x00,
		0x02, 0x00);
}

Test(websocket_frame, a_fragmented_message_may_carry_control_frames)
{
	ACCEPTED(WS_FROM_SERVER, 0x01, 0x01, 'a', 0x89, 0x00, 0x00, 0x01, 'b', 0x8a, 0x01, 'p',
		 0x80, 0x01, 'c', 0x81, 0x00);
}

Test(websocket_frame, any_byte_after_a_close_frame_is_refused)
{
	REFUSED(WS_FROM_SERVER, "data after the close frame", 0x88, 0x00, 0x00);
	REFUSED(WS_FROM_SERVER, "data after the close frame", 0x88, 0x02, 0x03, 0xe8, 0x81, 0x00);
	REFUSED(WS_FROM_CLIENT, "data after the close frame", 0x88, 0x82, 1, 2, 3, 4, 0x02, 0xea,
		'G');
}

Test(websocket_frame, the_checker_says_when_a_close_frame_has_gone_by)
{
	struct ws_checker w;
	const char *why = NULL;

	ws_checker_init(&w, WS_FROM_SERVER);
	cr_assert_eq(ws_checker_feed(&w, BYTES(0x88, 0x02, 0x03), 3, &why), 0);
	cr_assert_not(w.closed, "the close body is not all there");
	cr_assert_eq(ws_checker_feed(&w, BYTES(0xe8), 1, &why), 0);
	cr_assert(w.closed);
}

Test(websocket_frame, an_http_request_after_the_upgrade_is_refused)
{
	const char *req = "GET / HTTP/1.1\r\n";
	const char *resp = "HTTP/1.1 200 OK\r\n";

	/* "G" (0x47): RSV1 set.  Refused at the very first byte. */
	assert_refused(WS_FROM_CLIENT, req, strlen(req), "reserved bit set without an extension");
	assert_refused(WS_FROM_CLIENT, req, 1, "reserved bit set without an extension");
	assert_refused(WS_FROM_SERVER, resp, strlen(resp), "reserved bit set without an extension");
	assert_refused(WS_FROM_CLIENT, "POST /x HTTP/1.1\r\n", 18,
		       "reserved bit set without an extension");
	assert_refused(WS_FROM_CLIENT, "CONNECT h:443 HTTP/1.1\r\n", 24,
		       "reserved bit set without an extension");
}

Test(websocket_frame, an_http_request_after_valid_frames_is_refused)
{
	const char *req = "GET /admin HTTP/1.1\r\nHost: h\r\n\r\n";

	s.len = 0;
	put_frame(&s, true, 0x1, true, "hi", 2);
	put(&s, req, strlen(req));
	assert_refused(WS_FROM_CLIENT, s.b, s.len, "reserved bit set without an extension");
}

Test(websocket_frame, a_violation_is_sticky)
{
	struct ws_checker w;
	const char *why = NULL;

	ws_checker_init(&w, WS_FROM_SERVER);
	cr_assert_eq(ws_checker_feed(&w, BYTES(0xc1), 1, &why), -1);
	cr_assert_str_eq(why, "reserved bit set without an extension");
	why = NULL;
	cr_assert_eq(ws_checker_feed(&w, BYTES(0x81, 0x00), 2, &why), -1, "valid bytes after");
	cr_assert_str_eq(why, "reserved bit set without an extension");
	cr_assert_eq(ws_checker_feed(&w, NULL, 0, &why), -1, "even an empty feed");
	cr_assert_eq(ws_checker_feed(&w, BYTES(0x81), 1, NULL), -1, "WHY may be NULL");
}

Test(websocket_frame, an_empty_feed_is_valid)
{
	struct ws_checker w;
	const char *why = NULL;

	ws_checker_init(&w, WS_FROM_CLIENT);
	cr_assert_eq(ws_checker_feed(&w, NULL, 0, &why), 0);
	cr_assert_null(why);
}

Test(websocket_frame, payload_bytes_are_never_taken_for_headers)
{
	/* Payload that would be a violation as a header: RSV bits, "GET ", a bad opcode. */
	static const char payload[] = "\xff\xfe\xc1GET / HTTP/1.1\r\n\x83\x00";

	s.len = 0;
	put_frame(&s, true, 0x2, false, payload, sizeof(payload) - 1);
	put_frame(&s, true, 0x2, false, payload, sizeof(payload) - 1);
	assert_accepted(WS_FROM_SERVER, s.b, s.len);
	s.len = 0;
	put_frame(&s, true, 0x2, true, payload, sizeof(payload) - 1);
	assert_accepted(WS_FROM_CLIENT, s.b, s.len);
}

/* ---- streams ------------------------------------------------------------------------- */

/* A conversation's worth of frames from DIR: every kind, fragmented and whole, then close. */
static void
build_valid_stream(struct stream *st, enum ws_dir dir)
{
	bool m = dir == WS_FROM_CLIENT;
	static const char big[300] = "big";

	st->len = 0;
	put_frame(st, true, 0x1, m, "Hello", 5);
	put_frame(st, true, 0x2, m, NULL, 0);
	put_frame(st, false, 0x1, m, "Hel", 3);
	put_frame(st, true, 0x9, m, "ping", 4);
	put_frame(st, false, 0x0, m, NULL, 0);
	put_frame(st, true, 0x0, m, "lo", 2);
	put_frame(st, false, 0x2, m, big, sizeof(big));
	put_frame(st, true, 0xa, m, NULL, 0);
	put_frame(st, true, 0x0, m, big, 126);
	put_frame(st, true, 0x2, m, NULL, 125);
	put_frame(st, true, 0x8, m, "\003\350bye", 5);
}

static void
assert_stream_accepted_at_every_split(enum ws_dir dir)
{
	const char *why = NULL;

	build_valid_stream(&s, dir);
	cr_assert_eq(feed_whole(dir, s.b, s.len, &why), 0, "whole: %s", why);
	for (size_t step = 1; step <= s.len; step++)
		cr_assert_eq(feed_steps(dir, s.b, s.len, step, &why), 0, "pieces of %zu: %s", step,
			     why);
	for (size_t cut = 0; cut <= s.len; cut++) {
		struct ws_checker w;

		ws_checker_init(&w, dir);
		cr_assert_eq(ws_checker_feed(&w, s.b, cut, &why), 0, "before %zu: %s", cut, why);
		cr_assert_eq(ws_checker_feed(&w, s.b + cut, s.len - cut, &why), 0, "after %zu: %s",
			     cut, why);
		cr_assert(w.closed, "the stream ends in a close frame");
	}
}

Test(websocket_stream, a_valid_client_stream_is_accepted_at_every_split)
{
	assert_stream_accepted_at_every_split(WS_FROM_CLIENT);
}

Test(websocket_stream, a_valid_server_stream_is_accepted_at_every_split)
{
	assert_stream_accepted_at_every_split(WS_FROM_SERVER);
}

Test(websocket_stream, the_other_direction_refuses_the_same_stream)
{
	const char *why = NULL;

	build_valid_stream(&s, WS_FROM_CLIENT);
	cr_assert_eq(feed_whole(WS_FROM_SERVER, s.b, s.len, &why), -1);
	cr_assert_str_eq(why, "masked frame from the server");
	build_valid_stream(&s, WS_FROM_SERVER);
	cr_assert_eq(feed_whole(WS_FROM_CLIENT, s.b, s.len, &why), -1);
	cr_assert_str_eq(why, "unmasked frame from the client");
}

Test(websocket_stream, a_violation_is_found_at_the_byte_that_makes_it)
{
	/* Valid frames, then a continuation with a non-minimal 16-bit length. */
	build_valid_stream(&s, WS_FROM_SERVER);
	s.len -= 7; /* drop the close frame: 2 + 5 bytes */
	put(&s, BYTES(0x82, 0x7e, 0x00), 3);
	size_t bad = s.len; /* the byte that completes the length */
	put(&s, BYTES(0x05, 'x', 'x', 'x', 'x', 'x'), 6);

	for (size_t cut = 0; cut <= s.len; cut++) {
		struct ws_checker w;
		const char *why = NULL;
		int r1, r2;

		ws_checker_init(&w, WS_FROM_SERVER);
		r1 = ws_checker_feed(&w, s.b, cut, &why);
		cr_assert_eq(r1, cut > bad ? -1 : 0, "prefix of %zu", cut);
		r2 = ws_checker_feed(&w, s.b + cut, s.len - cut, &why);
		cr_assert_eq(r2, -1, "split at %zu", cut);
		cr_assert_str_eq(why, "non-minimal 16-bit payload length");
	}
}

Test(websocket_stream, a_70000_byte_payload_with_a_64_bit_length_is_accepted)
{
	const char *why = NULL;
	struct ws_checker w;
	size_t hdr;

	s.len = 0;
	put_frame(&s, true, 0x2, true, NULL, 70000);
	hdr = s.len - 70000;
	cr_assert_eq(hdr, 14, "2 + 8-byte length + mask");
	cr_assert_eq(s.b[1], 0xff);
	put_frame(&s, true, 0x8, true, NULL, 0);
	assert_accepted(WS_FROM_CLIENT, s.b, s.len);
	cr_assert_eq(feed_steps(WS_FROM_CLIENT, s.b, s.len, 1, &why), 0, "%s", why);
	cr_assert_eq(feed_steps(WS_FROM_CLIENT, s.b, s.len, 4093, &why), 0, "%s", why);

	/* The payload is counted exactly: a close frame one byte early is still payload. */
	ws_checker_init(&w, WS_FROM_CLIENT);
	cr_assert_eq(ws_checker_feed(&w, s.b, hdr + 69999, &why), 0);
	cr_assert_eq(w.remaining, 1);
	cr_assert_eq(ws_checker_feed(&w, BYTES(0x88), 1, &why), 0);
	cr_assert_eq(w.remaining, 0);
	cr_assert_not(w.closed);
	/* The next byte is a header again: 0x88 as a first byte is a close frame. */
	cr_assert_eq(ws_checker_feed(&w, BYTES(0x88, 0x00), 2, &why), -1);
	cr_assert_str_eq(why, "unmasked frame from the client");
}

Test(websocket_stream, bytes_beyond_the_declared_length_are_read_as_a_header)
{
	/* Declared 5 bytes, sent 10: the sixth is a first header byte (0x47 'G': RSV1). */
	s.len = 0;
	put(&s, BYTES(0x82, 0x05), 2);
	put(&s, "GGGGGGGGGG", 10);
	assert_refused(WS_FROM_SERVER, s.b, s.len, "reserved bit set without an extension");
}
