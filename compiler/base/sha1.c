/*
 * sha1.c - SHA-1 (FIPS 180-4, section 6.1), sha1.h.
 */
#include "sha1.h"

#include <string.h>

static uint32_t
rol(uint32_t x, unsigned n)
{
	return (x << n) | (x >> (32 - n));
}

static void
compress(uint32_t h[5], const unsigned char *p)
{
	uint32_t w[80], a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];

	for (int t = 0; t < 16; t++)
		w[t] = (uint32_t)p[4 * t] << 24 | (uint32_t)p[4 * t + 1] << 16 |
		       (uint32_t)p[4 * t + 2] << 8 | (uint32_t)p[4 * t + 3];
	for (int t = 16; t < 80; t++)
		w[t] = rol(w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16], 1);
	for (int t = 0; t < 80; t++) {
		uint32_t f, k, tmp;

		if (t < 20) {
			f = (b & c) | (~b & d);
			k = 0x5a827999;
		} else if (t < 40) {
			f = b ^ c ^ d;
			k = 0x6ed9eba1;
		} else if (t < 60) {
			f = (b & c) | (b & d) | (c & d);
			k = 0x8f1bbcdc;
		} else {
			f = b ^ c ^ d;
			k = 0xca62c1d6;
		}
		tmp = rol(a, 5) + f + e + k + w[t];
		e = d;
		d = c;
		c = rol(b, 30);
		b = a;
		a = tmp;
	}
	h[0] += a;
	h[1] += b;
	h[2] += c;
	h[3] += d;
	h[4] += e;
}

void
sha1_init(struct sha1 *s)
{
	static const uint32_t iv[5] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476,
				       0xc3d2e1f0};

	memcpy(s->h, iv, sizeof(iv));
	s->bytes = 0;
	s->n = 0;
}

void
sha1_update(struct sha1 *s, const void *data, size_t len)
{
	const unsigned char *p = data;

	s->bytes += len;
	if (s->n) {
		size_t take = len < 64 - s->n ? len : 64 - s->n;

		memcpy(s->block + s->n, p, take);
		s->n += take;
		p += take;
		len -= take;
		if (s->n < 64)
			return;
		compress(s->h, s->block);
		s->n = 0;
	}
	for (; len >= 64; p += 64, len -= 64)
		compress(s->h, p);
	memcpy(s->block, p, len);
	s->n = len;
}

void
sha1_final(struct sha1 *s, unsigned char md[SHA1_LEN])
{
	uint64_t bits = s->bytes * 8;

	/* 0x80, zeros to 56 bytes into a block, the length in bits, big-endian. */
	s->block[s->n++] = 0x80;
	if (s->n > 56) {
		memset(s->block + s->n, 0, 64 - s->n);
		compress(s->h, s->block);
		s->n = 0;
	}
	memset(s->block + s->n, 0, 56 - s->n);
	for (int i = 0; i < 8; i++)
		s->block[56 + i] = (unsigned char)(bits >> (56 - 8 * i));
	compress(s->h, s->block);
	for (int i = 0; i < 5; i++) {
		md[4 * i] = (unsigned char)(s->h[i] >> 24);
		md[4 * i + 1] = (unsigned char)(s->h[i] >> 16);
		md[4 * i + 2] = (unsigned char)(s->h[i] >> 8);
		md[4 * i + 3] = (unsigned char)s->h[i];
	}
}
