/*
 * test_scrub.c - secrets out of responses: as written, inside base64 at
 * any alignment (Basic with any user name), and streamed in every split.
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/egress/credentials.h"
#include "runtime/egress/scrub.h"

#define SECRET "real-secret-9f8e-0123456789abcdef"
#define PLACEHOLDER "oa_cred_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"

static struct scrub_set set;

static void
setup(void)
{
	memset(&set, 0, sizeof(set));
	cr_assert_eq(scrub_set_add_secret(&set, SECRET, PLACEHOLDER), 0);
}

static void
teardown(void)
{
	scrub_set_clear(&set);
}

struct sink {
	char buf[65536];
	size_t len;
};

static int
to_sink(void *arg, const char *s, size_t n)
{
	struct sink *k = arg;

	cr_assert_leq(k->len + n, sizeof(k->buf));
	memcpy(k->buf + k->len, s, n);
	k->len += n;
	return 0;
}

static char *
scrubbed(const char *in)
{
	static char out[65536];
	long n = scrub_buffer(&set, in, strlen(in), out, sizeof(out) - 1);

	cr_assert_geq(n, 0);
	out[n] = '\0';
	return out;
}

/* The stream, cut into pieces of STEP bytes, gives what the whole buffer gives. */
static void
expect_stream_equals_whole(const char *in, size_t step)
{
	struct scrub_stream st;
	struct sink k = {.len = 0};
	size_t len = strlen(in);
	const char *whole = scrubbed(in);

	scrub_stream_init(&st, &set, false);
	for (size_t i = 0; i < len; i += step)
		cr_assert_eq(
		    scrub_stream_feed(&st, in + i, i + step < len ? step : len - i, to_sink, &k),
		    0);
	cr_assert_eq(scrub_stream_finish(&st, to_sink, &k), 0);
	cr_assert_eq(k.len, strlen(whole), "step %zu: %zu bytes out, whole gives %zu", step, k.len,
		     strlen(whole));
	cr_assert_eq(memcmp(k.buf, whole, k.len), 0, "step %zu differs", step);
}

TestSuite(scrub, .init = setup, .fini = teardown);

Test(scrub, the_secret_as_written_becomes_the_placeholder)
{
	cr_assert_str_eq(scrubbed("Authorization: Bearer " SECRET "\n"),
			 "Authorization: Bearer " PLACEHOLDER "\n");
	cr_assert_str_eq(scrubbed(SECRET SECRET), PLACEHOLDER PLACEHOLDER);
	cr_assert_str_eq(scrubbed("nothing to see"), "nothing to see");
}

Test(scrub, basic_authorization_with_any_user_name_loses_the_secret)
{
	static const char *const users[] = {"", "x", "xy", "x-access-token", "agent-chosen-user"};

	for (size_t u = 0; u < sizeof(users) / sizeof(users[0]); u++) {
		char plain[256], enc[512], line[600], dec[512];
		ssize_t n;
		const char *out;

		snprintf(plain, sizeof(plain), "%s:%s", users[u], SECRET);
		enc[cred_base64_encode(plain, strlen(plain), enc)] = '\0';
		snprintf(line, sizeof(line), "Authorization: Basic %s", enc);
		out = scrubbed(line);
		cr_assert_null(strstr(out, enc), "user '%s': the base64 came back", users[u]);
		out = strstr(out, "Basic ") + 6;
		/* Decoded, whatever is left, no part of the secret's middle survives. */
		n = cred_base64_decode(out, strlen(out), (unsigned char *)dec, sizeof(dec) - 1);
		if (n >= 0) {
			dec[n] = '\0';
			cr_assert_null(memmem(dec, (size_t)n, "0123456789", 10), "user '%s': %s",
				       users[u], dec);
		}
	}
}

Test(scrub, a_stream_in_every_split_gives_what_the_whole_gives)
{
	char plain[128], enc[256], text[2048];

	snprintf(plain, sizeof(plain), "u:%s", SECRET);
	enc[cred_base64_encode(plain, strlen(plain), enc)] = '\0';
	snprintf(text, sizeof(text),
		 "real-secret-9f8 (almost) %s, then %s%s and base64 %s; real-secret-9f8e-01",
		 SECRET, SECRET, SECRET, enc);
	for (size_t step = 1; step <= strlen(text); step++)
		expect_stream_equals_whole(text, step);
}

/* What comes out when must not tell which bytes begin a secret. */
static size_t
out_after(const char *first, const char *second)
{
	struct scrub_stream st;
	struct sink k = {.len = 0};

	scrub_stream_init(&st, &set, false);
	cr_assert_eq(scrub_stream_feed(&st, first, strlen(first), to_sink, &k), 0);
	cr_assert_eq(scrub_stream_feed(&st, second, strlen(second), to_sink, &k), 0);
	return k.len;
}

Test(scrub, the_hold_back_does_not_depend_on_what_is_held)
{
	/* A reflected guess at the end of what arrived: a prefix of the secret,
	 * of its base64, or nothing of the kind. */
	static const char *const guesses[] = {
	    "rzzz", "real", "real-secret-9f8e-0", "cmVhbC1zZWNyZXQt", "Q", "xxxx"};
	char first[256];

	memset(first, 'p', 100);
	first[100] = '\0';
	cr_assert_lt(set.longest, 100);
	for (size_t i = 0; i < sizeof(guesses) / sizeof(guesses[0]); i++) {
		size_t n = out_after(first, guesses[i]);

		cr_assert_eq(n, 100 + strlen(guesses[i]) - (set.longest - 1),
			     "guess '%s': %zu bytes out, the hold told something", guesses[i], n);
	}
}

Test(scrub, a_stream_that_ends_lets_everything_out)
{
	struct scrub_stream st;
	struct sink k = {.len = 0};

	scrub_stream_init(&st, &set, false);
	cr_assert_eq(scrub_stream_feed(&st, "xx real-sec", 11, to_sink, &k), 0);
	cr_assert_eq(scrub_stream_feed(&st, "urity", 5, to_sink, &k), 0);
	cr_assert_eq(scrub_stream_finish(&st, to_sink, &k), 0);
	cr_assert_eq(k.len, 16);
	cr_assert_eq(memcmp(k.buf, "xx real-security", 16), 0);
}

Test(scrub, a_short_secret_is_replaced_as_written_only)
{
	struct scrub_set s = {0};

	cr_assert_eq(scrub_set_add_secret(&s, "abc", PLACEHOLDER), 0);
	cr_assert_eq(s.n, 1);
	scrub_set_clear(&s);
}

Test(scrub, same_length_replacement_keeps_every_byte_count)
{
	struct scrub_stream st;
	struct sink k = {.len = 0};
	const char *in = "frame: " SECRET " end";

	scrub_stream_init(&st, &set, true);
	cr_assert_eq(scrub_stream_feed(&st, in, strlen(in), to_sink, &k), 0);
	cr_assert_eq(scrub_stream_finish(&st, to_sink, &k), 0);
	cr_assert_eq(k.len, strlen(in));
	cr_assert_null(memmem(k.buf, k.len, "real-secret", 11));
	cr_assert_eq(memcmp(k.buf, "frame: ****", 11), 0);
}

/* ---- long secrets, and secrets taken out again (refreshed credentials) ---------------- */

TestSuite(scrub_set);

Test(scrub_set, a_long_secret_goes_in_pieces_each_replaced_even_in_base64)
{
	struct scrub_set s = {0};
	char secret[1001], text[1100], out[8192], enc[2000], back[2000];
	long n;
	size_t e;

	for (size_t i = 0; i < 1000; i++)
		secret[i] = "abcdefghijklmnopqrstuvwxyz0123456789"[(i * 7 + i / 36) % 36];
	secret[1000] = '\0';
	cr_assert_eq(scrub_set_add_secret(&s, secret, PLACEHOLDER), 0);
	/* 1000 bytes: four pieces of 250, each with its three base64 middles. */
	cr_assert_eq(s.n, 16);
	cr_assert(s.longest > 250 && s.longest < 400,
		  "the hold follows a piece, not the secret: %zu", s.longest);
	snprintf(text, sizeof(text), "<%s>", secret);
	n = scrub_buffer(&s, text, strlen(text), out, sizeof(out) - 1);
	out[n] = '\0';
	cr_assert_str_eq(out, "<" PLACEHOLDER PLACEHOLDER PLACEHOLDER PLACEHOLDER ">");
	/* In base64 (Basic with a user name), no piece of it survives decoding. */
	snprintf(text, sizeof(text), "ab:%s", secret);
	e = cred_base64_encode(text, strlen(text), enc);
	n = scrub_buffer(&s, enc, e, out, sizeof(out) - 1);
	cr_assert(n > 0);
	n = cred_base64_decode(out, (size_t)n, (unsigned char *)back, sizeof(back) - 1);
	if (n > 0) {
		back[n] = '\0';
		for (size_t i = 0; i + 40 <= 1000; i += 40)
			cr_assert_null(memmem(back, (size_t)n, secret + i, 40), "a piece at %zu",
				       i);
	}
	scrub_set_clear(&s);
}

Test(scrub_set, a_secret_taken_out_is_no_longer_replaced_and_the_others_stay)
{
	struct scrub_set s = {0};
	char out[512];
	long n;

	cr_assert_eq(scrub_set_add_secret(&s, "old-token-0123456789", PLACEHOLDER), 0);
	cr_assert_eq(scrub_set_add_secret(&s, "new-token-9876543210", PLACEHOLDER), 0);
	cr_assert_eq(s.n, 8);
	scrub_set_remove_secret(&s, "old-token-0123456789");
	cr_assert_eq(s.n, 4);
	n = scrub_buffer(&s, "old-token-0123456789 new-token-9876543210", 41, out, sizeof(out));
	out[n] = '\0';
	cr_assert_str_eq(out, "old-token-0123456789 " PLACEHOLDER);
	/* Given twice, it takes two removals to go. */
	cr_assert_eq(scrub_set_add_secret(&s, "new-token-9876543210", PLACEHOLDER), 0);
	scrub_set_remove_secret(&s, "new-token-9876543210");
	cr_assert(scrub_finds(&s, "new-token-9876543210", 20));
	scrub_set_remove_secret(&s, "new-token-9876543210");
	cr_assert_eq(s.n, 0);
	cr_assert_eq(s.longest, 0);
	scrub_set_clear(&s);
}

Test(scrub_set, a_full_set_refuses_and_stays_as_it_was)
{
	struct scrub_set s = {0};
	char secret[64];
	size_t i, before;

	for (i = 0;; i++) {
		snprintf(secret, sizeof(secret), "secret-number-%06zu-xyz", i);
		if (scrub_set_add_secret(&s, secret, PLACEHOLDER) < 0)
			break;
	}
	cr_assert_eq(i, SCRUB_MAX_PATTERNS / 4);
	before = s.n;
	cr_assert_eq(scrub_set_add_secret(&s, "one-more-secret-that-does-not-fit", PLACEHOLDER),
		     -1);
	cr_assert_eq(s.n, before, "a refused secret leaves nothing behind");
	cr_assert_eq(scrub_set_add_secret(&s, "", PLACEHOLDER), -1, "an empty secret");
	scrub_set_clear(&s);
}

/*
 * What the set's patterns give, found the plain way: at each position the
 * longest pattern that starts there, else the byte.  The scrubber looks for
 * the longer patterns through an index of sampled grams; it must give the
 * same, whatever the text.
 */
static size_t
plain_scrub(const struct scrub_set *s, const char *in, size_t len, char *out)
{
	size_t o = 0;

	for (size_t i = 0; i < len;) {
		const struct scrub_pattern *best = NULL;

		for (size_t k = 0; k < s->n; k++) {
			const struct scrub_pattern *p = &s->p[k];

			if (i + p->from_len <= len && !memcmp(in + i, p->from, p->from_len) &&
			    (!best || p->from_len > best->from_len))
				best = p;
		}
		if (!best) {
			out[o++] = in[i++];
			continue;
		}
		memcpy(out + o, best->to, best->to_len);
		o += best->to_len;
		i += best->from_len;
	}
	return o;
}

/* SECRETS (N of them, the fourth taken out half way), and a long one in
 * pieces, over 3,000 texts of their own letters with patterns planted
 * anywhere, at the ends too, overlapping: what a plain search gives. */
static void
same_as_plain_search(const char *const *secrets, size_t n_secrets, bool long_one)
{
	struct scrub_set s = {0};
	char big[700], in[4096], want[16384], got[16384];
	unsigned seed = 7;

	for (size_t i = 0; i < n_secrets; i++)
		cr_assert_eq(scrub_set_add_secret(&s, secrets[i], PLACEHOLDER), 0);
	for (size_t i = 0; i < sizeof(big) - 1; i++)
		big[i] = (char)('a' + i * 7 % 26);
	big[sizeof(big) - 1] = '\0';
	if (long_one)
		cr_assert_eq(scrub_set_add_secret(&s, big, PLACEHOLDER), 0);
	for (int round = 0; round < 3000; round++) {
		size_t len = (size_t)(rand_r(&seed) % sizeof(in));

		if (round == 1500) /* taken out: the index is made again */
			scrub_set_remove_secret(&s, secrets[3]);
		for (size_t i = 0; i < len; i++)
			in[i] = "abcdefghijkl0123456789x-!"[rand_r(&seed) % 25];
		for (int k = rand_r(&seed) % 6; k > 0 && s.n; k--) {
			const struct scrub_pattern *p = &s.p[(size_t)rand_r(&seed) % s.n];
			size_t at;

			if (p->from_len > len)
				continue;
			at = k == 1 ? len - p->from_len
				    : (size_t)rand_r(&seed) % (len - p->from_len + 1);
			memcpy(in + at, p->from, p->from_len);
		}
		size_t n = plain_scrub(&s, in, len, want);
		long m = scrub_buffer(&s, in, len, got, sizeof(got));

		cr_assert_eq(m, (long)n, "round %d: %ld bytes, the plain search gives %zu", round,
			     m, n);
		cr_assert_eq(memcmp(got, want, n), 0, "round %d differs", round);
	}
	scrub_set_clear(&s);
}

/* Short and long, one the start or the end of another, sharing grams: the
 * index samples every 8th position, and the short ones are its own. */
Test(scrub_set, the_index_finds_what_a_plain_search_finds_in_any_text)
{
	static const char *const secrets[] = {"k3y!x",
					      "abcdefghij",
					      "abcdefghijk",
					      "abcdefghijkl",
					      "xxabcdefghijkl",
					      "real-secret-9f8e-0123456789abcdef",
					      "0123456789abcdef0123",
					      "aaaaaaaaaaaaaaaaaaaa"};

	same_as_plain_search(secrets, sizeof(secrets) / sizeof(secrets[0]), true);
}

/* Only long ones: the index samples every 21st to 32nd position. */
Test(scrub_set, a_longer_stride_finds_what_a_plain_search_finds)
{
	static const char *const secrets[] = {
	    "abcdefghijkl0123456789abc", "0123456789abcdef0123456789abcdef",
	    "abcdefghijkl0123456789abcdef-!",
	    "real-secret-9f8e-0123456789abcdef-and-more-of-it-here",
	    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"};

	same_as_plain_search(secrets, sizeof(secrets) / sizeof(secrets[0]), false);
}

/* Wiped where they lie (the proxy's end): the patterns, and the index's
 * pieces of them. */
Test(scrub_set, a_wiped_set_holds_nothing_of_the_secret)
{
	struct scrub_set s = {0};

	cr_assert_eq(scrub_set_add_secret(&s, SECRET, PLACEHOLDER), 0);
	cr_assert_not_null(s.filter);
	scrub_set_wipe(&s);
	for (size_t i = 0; i < s.n; i++)
		for (size_t k = 0; k < s.p[i].from_len; k++)
			cr_assert_eq(s.p[i].from[k], 0);
	for (size_t i = 0; i < ((size_t)1 << 16 >> 6); i++)
		cr_assert_eq(s.filter[i], 0);
	for (size_t i = 0; i < s.n_grams * 12; i++)
		cr_assert_eq(((const unsigned char *)s.grams)[i], 0);
	scrub_set_clear(&s);
}
