/*
 * sha1.h - SHA-1 (FIPS 180-4), for the blob hashes a git index records
 * (runtime/resolve/gitindex.c): omnibox-compile and omnibox-run hash with
 * it rather than load libcrypto for one function.  Not for anything that
 * needs collision resistance beyond git's own.
 */
#ifndef OMNIBOX_SHA1_H
#define OMNIBOX_SHA1_H

#include <stddef.h>
#include <stdint.h>

#define SHA1_LEN 20

struct sha1 {
	uint32_t h[5];
	uint64_t bytes;		/* hashed so far */
	unsigned char block[64];
	size_t n;		/* bytes of BLOCK in use */
};

void sha1_init(struct sha1 *s);
void sha1_update(struct sha1 *s, const void *data, size_t len);
void sha1_final(struct sha1 *s, unsigned char md[SHA1_LEN]);

#endif
