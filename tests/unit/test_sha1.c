/*
 * test_sha1.c - compiler/base/sha1.c against the FIPS 180 examples and
 * against OpenSSL's SHA-1 for every length up to a few blocks, fed whole
 * and in pieces.
 */
#include <criterion/criterion.h>

#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>

#include "compiler/base/sha1.h"

static void
hex(const unsigned char md[SHA1_LEN], char out[2 * SHA1_LEN + 1])
{
	for (int i = 0; i < SHA1_LEN; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
}

static void
expect(const char *msg, size_t len, size_t repeat, const char *want)
{
	struct sha1 s;
	unsigned char md[SHA1_LEN];
	char got[2 * SHA1_LEN + 1];

	sha1_init(&s);
	for (size_t i = 0; i < repeat; i++)
		sha1_update(&s, msg, len);
	sha1_final(&s, md);
	hex(md, got);
	cr_assert_str_eq(got, want, "sha1(%.20s x %zu)", msg, repeat);
}

Test(sha1, the_fips_180_examples)
{
	static const char two_blocks[] =
	    "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";

	expect("", 0, 1, "da39a3ee5e6b4b0d3255bfef95601890afd80709");
	expect("abc", 3, 1, "a9993e364706816aba3e25717850c26c9cd0d89d");
	expect(two_blocks, strlen(two_blocks), 1, "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
	expect("a", 1, 1000000, "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
	/* git's hash of an empty blob: "blob 0\0" */
	expect("blob 0", 7, 1, "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391");
}

Test(sha1, agrees_with_openssl_for_every_length_and_split)
{
	unsigned char data[300], want[EVP_MAX_MD_SIZE], got[SHA1_LEN];
	unsigned int wlen;

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (unsigned char)(i * 131 + 7);
	for (size_t len = 0; len <= sizeof(data); len++) {
		cr_assert(EVP_Digest(data, len, want, &wlen, EVP_sha1(), NULL));
		cr_assert_eq(wlen, SHA1_LEN);
		for (size_t cut = 0; cut <= len; cut += len < 130 ? 1 : 17) {
			struct sha1 s;

			sha1_init(&s);
			sha1_update(&s, data, cut);
			sha1_update(&s, data + cut, len - cut);
			sha1_final(&s, got);
			cr_assert(!memcmp(got, want, SHA1_LEN), "length %zu, split at %zu", len,
				  cut);
		}
	}
}
