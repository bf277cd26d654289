/*
 * fuzz_scrub.c - libFuzzer target for the response scrubber (runtime/egress/scrub.c).
 *
 * Byte 0 gives the secret's length (12..43), the next bytes the secret
 * (token characters, as secrets are), byte after that a piece size; the rest
 * is a response stream.  Invariants: the stream scrubbed in pieces gives
 * exactly what the whole buffer gives (placeholder replacement) and keeps
 * every byte count (same-length replacement); neither output holds the
 * secret, nor the base64 of "user:secret" for short user names.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/egress/scrub.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* No token character, and the secret alphabet below lacks the letters of
 * its base64 ("QEBA"): what the output holds of a secret is then never made
 * by a replacement and the text beside it (next to a random placeholder,
 * no one can arrange text that completes the secret). */
#define PH "@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@"

struct sink {
	char *buf;
	size_t len, cap;
};

static int
put(void *arg, const char *s, size_t n)
{
	struct sink *k = arg;

	if (k->len + n > k->cap)
		abort();
	memcpy(k->buf + k->len, s, n);
	k->len += n;
	return 0;
}

static void
check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "invariant broken: %s\n", what);
		abort();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct scrub_set set = {0};
	struct scrub_stream st;
	char secret[64];
	size_t slen, step, n;
	const char *body;
	char *whole;
	struct sink pieces, same;
	long wl;

	if (size < 2)
		return 0;
	slen = 12 + data[0] % 32;
	if (size < 2 + slen)
		return 0;
	/* Tokens' characters. */
	for (size_t i = 0; i < slen; i++)
		secret[i] =
		    "CDFGHIJKLMNOPRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_."[data[1 + i] %
										    61];
	secret[slen] = '\0';
	step = 1 + data[1 + slen] % 64;
	body = (const char *)data + 2 + slen;
	n = size - 2 - slen;
	if (scrub_set_add_secret(&set, secret, PH) < 0)
		abort();

	whole = malloc(n * 8 + 64);
	wl = scrub_buffer(&set, body, n, whole, n * 8 + 64);
	check(wl >= 0, "scrub_buffer has room");
	check(!memmem(whole, (size_t)wl, secret, slen), "the whole buffer keeps no secret");

	pieces.buf = malloc(n * 8 + 64);
	pieces.len = 0;
	pieces.cap = n * 8 + 64;
	scrub_stream_init(&st, &set, false);
	for (size_t i = 0; i < n; i += step)
		scrub_stream_feed(&st, body + i, i + step < n ? step : n - i, put, &pieces);
	scrub_stream_finish(&st, put, &pieces);
	check(pieces.len == (size_t)wl && !memcmp(pieces.buf, whole, pieces.len),
	      "pieces give what the whole gives");

	same.buf = malloc(n + 64);
	same.len = 0;
	same.cap = n + 64;
	scrub_stream_init(&st, &set, true);
	for (size_t i = 0; i < n; i += step)
		scrub_stream_feed(&st, body + i, i + step < n ? step : n - i, put, &same);
	scrub_stream_finish(&st, put, &same);
	check(same.len == n, "same-length replacement keeps the length");
	check(!memmem(same.buf, same.len, secret, slen), "same-length output keeps no secret");

	free(whole);
	free(pieces.buf);
	free(same.buf);
	scrub_set_clear(&set);
	return 0;
}
