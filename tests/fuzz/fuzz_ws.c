/*
 * fuzz_ws.c - libFuzzer target for the RFC 6455 frame checker and the
 * handshake values (runtime/egress/websocket.c).
 *
 * Byte 0 chooses the direction (bit 0) and a piece size (the other bits,
 * 1..128).  The rest is one direction's stream after a 101: it is fed to
 * one checker in pieces of that size, to a second all at once and to a
 * third byte by byte, and all three must give the same verdict and reason
 * (a checker that depends on how bytes arrive can be steered past by
 * whoever controls the segment sizes).  A plain whole-buffer parser of the
 * same rules must agree on the verdict too.  A prefix of the stream is
 * also tried as a Sec-WebSocket-Key, against decode-and-re-encode.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "runtime/egress/websocket.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check(bool ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "invariant broken: %s\n", what);
		__builtin_trap();
	}
}

/* Feed BUF/LEN in pieces of STEP; the verdict, the reason in *WHY, the checker in W. */
static int
feed(struct ws_checker *w, enum ws_dir dir, const uint8_t *buf, size_t len, size_t step,
     const char **why)
{
	*why = NULL;
	ws_checker_init(w, dir);
	for (size_t off = 0; off < len; off += step) {
		size_t n = len - off < step ? len - off : step;

		if (ws_checker_feed(w, buf + off, n, why) != 0)
			return -1;
	}
	return 0;
}

static uint64_t
be(const uint8_t *p, size_t n)
{
	uint64_t v = 0;

	for (size_t i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

/*
 * The same rules, walking whole frames of a buffer that is all there:
 * -1 for a violation the bytes present already show, else 0.
 */
static int
reference(enum ws_dir dir, const uint8_t *b, size_t n)
{
	bool fragmented = false;
	size_t p = 0;

	while (p < n) {
		unsigned op = b[p] & 0x0f, len7;
		bool fin = b[p] & 0x80, control = op >= 8, masked;
		uint64_t len;
		size_t h;

		if (b[p] & 0x70)
			return -1;
		if ((op > 2 && op < 8) || op > 10)
			return -1;
		if (control && !fin)
			return -1;
		if (op == 0 && !fragmented)
			return -1;
		if ((op == 1 || op == 2) && fragmented)
			return -1;
		if (!control)
			fragmented = !fin;
		if (n - p < 2)
			return 0;
		masked = b[p + 1] & 0x80;
		len7 = b[p + 1] & 0x7f;
		if (masked != (dir == WS_FROM_CLIENT))
			return -1;
		if (control && len7 > 125)
			return -1;
		if (op == 8 && len7 == 1)
			return -1;
		len = len7;
		h = 2;
		if (len7 == 126) {
			if (n - p < 4)
				return 0;
			len = be(b + p + 2, 2);
			if (len < 126)
				return -1;
			h = 4;
		} else if (len7 == 127) {
			if (n - p < 10)
				return 0;
			len = be(b + p + 2, 8);
			if (len >> 63 || len <= 0xffff)
				return -1;
			h = 10;
		}
		h += masked ? 4 : 0;
		if (n - p < h || len > n - p - h)
			return 0;
		p += h + (size_t)len;
		if (op == 8)
			return p < n ? -1 : 0;
	}
	return 0;
}

/* Is KEY/LEN the one base64 spelling of 16 bytes (decode, re-encode, compare)? */
static bool
key_reference(const uint8_t *key, size_t len)
{
	unsigned char raw[24], enc[32];

	if (len != WS_KEY_LEN || EVP_DecodeBlock(raw, key, (int)len) != 18)
		return false;
	return EVP_EncodeBlock(enc, raw, 16) == WS_KEY_LEN && memcmp(enc, key, len) == 0;
}

static void
check_key(const uint8_t *buf, size_t len)
{
	char accept[WS_ACCEPT_LEN + 1];
	bool valid = ws_key_is_valid((const char *)buf, len);

	check(valid == key_reference(buf, len), "key validity agrees with decode and re-encode");
	ws_accept_value((const char *)buf, len, accept);
	check(strlen(accept) == WS_ACCEPT_LEN, "an accept value is 28 characters");
	check(accept[27] == '=', "an accept value is 20 bytes of padded base64");
	check(ws_accept_matches((const char *)buf, len, accept, WS_ACCEPT_LEN) == valid,
	      "a valid key matches its own accept value");
	if (valid) {
		accept[len % WS_ACCEPT_LEN] ^= 0x20;
		check(!ws_accept_matches((const char *)buf, len, accept, WS_ACCEPT_LEN),
		      "a changed accept value does not match");
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ws_checker pieces, whole, bytes;
	const char *why_p, *why_w, *why_b;
	int r_p, r_w, r_b;
	enum ws_dir dir;
	size_t step;
	const uint8_t *buf = data + 1;

	if (size < 1)
		return 0;
	dir = (data[0] & 1) ? WS_FROM_SERVER : WS_FROM_CLIENT;
	step = (size_t)(data[0] >> 1) + 1;
	size--;

	r_p = feed(&pieces, dir, buf, size, step, &why_p);
	r_w = feed(&whole, dir, buf, size, size ? size : 1, &why_w);
	r_b = feed(&bytes, dir, buf, size, 1, &why_b);
	check(r_p == r_w && r_w == r_b, "the verdict does not depend on how bytes arrive");
	check(r_w == reference(dir, buf, size), "the checker agrees with the reference");
	if (r_w < 0) {
		const char *again = NULL;

		check(why_w && why_w[0], "violations have a reason");
		check(strcmp(why_p, why_w) == 0 && strcmp(why_b, why_w) == 0,
		      "the reason does not depend on how bytes arrive");
		check(ws_checker_feed(&whole, buf, size, &again) == -1 && again == why_w,
		      "violations are sticky");
	} else {
		check(why_w == NULL, "no reason without a violation");
		check(pieces.closed == whole.closed && bytes.closed == whole.closed &&
			  pieces.remaining == whole.remaining &&
			  bytes.remaining == whole.remaining &&
			  pieces.fragmented == whole.fragmented,
		      "the same state however the bytes arrived");
		check(pieces.hdr_len == whole.hdr_len && bytes.hdr_len == whole.hdr_len &&
			  whole.hdr_len < WS_HEADER_MAX,
		      "the same header progress");
	}

	check_key(buf, size < WS_KEY_LEN ? size : WS_KEY_LEN);
	if (size > WS_KEY_LEN)
		check_key(buf, size < 2 * WS_KEY_LEN ? size : 2 * WS_KEY_LEN);
	return 0;
}
