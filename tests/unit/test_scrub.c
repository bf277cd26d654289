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
