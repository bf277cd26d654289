/*
 * tlsrec.h - TLS 1.3 records (RFC 8446 section 5), one direction at a time.
 *
 * After OpenSSL has made the handshake, a leg of the proxy protects and
 * opens its application records itself (tlsleg.h): from the traffic secret
 * of each direction, HKDF-Expand-Label gives the key and the IV; a record's
 * nonce is the IV XOR its sequence number; its header is the AEAD's
 * additional data.  Plaintext and ciphertext come in pieces (iovecs), so a
 * record is opened straight out of the socket's buffer and sealed straight
 * into it: the two AES-GCM passes are the only passes over the bytes.
 *
 * The suites: TLS_AES_128_GCM_SHA256, TLS_AES_256_GCM_SHA384 and
 * TLS_CHACHA20_POLY1305_SHA256, whatever OpenSSL negotiated.
 */
#ifndef OMNIBOX_TLSREC_H
#define OMNIBOX_TLSREC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include <openssl/evp.h>

#define TLSREC_HEADER 5
#define TLSREC_TAG 16
#define TLSREC_MAX_PLAIN 16384
/* A record's ciphertext, inner type and padding included (RFC 8446 5.2). */
#define TLSREC_MAX_BODY (TLSREC_MAX_PLAIN + 256)
/* What sealing adds to N bytes: the header, the inner type, the tag. */
#define TLSREC_OVERHEAD (TLSREC_HEADER + 1 + TLSREC_TAG)
/* Records sealed under one key before it is replaced (a KeyUpdate): far
 * inside AES-GCM's limit of 2^24.5 full records (RFC 8446 5.5). */
#define TLSREC_KEY_RECORDS (1ULL << 24)

/* Inner content types. */
enum { TLSREC_ALERT = 21, TLSREC_HANDSHAKE = 22, TLSREC_APPDATA = 23 };

/* One direction's protection: its secret (for the next KeyUpdate), IV and sequence. */
struct tlsrec_key {
	EVP_CIPHER_CTX *ctx;
	const EVP_MD *md;
	bool enc;
	unsigned char secret[EVP_MAX_MD_SIZE];
	size_t secret_len;
	unsigned char iv[12];
	uint64_t seq;
};

/*
 * The suite SUITE (the low 16 bits of SSL_CIPHER_get_id()) as a cipher and
 * a hash; false for a suite this layer does not know.
 */
bool tlsrec_suite(unsigned suite, const EVP_CIPHER **cipher, const EVP_MD **md);

/* HKDF-Expand-Label(SECRET, LABEL, "", LEN) of RFC 8446 7.1; LEN at most the hash's size. */
int tlsrec_expand_label(const EVP_MD *md, const unsigned char *secret, size_t secret_len,
			const char *label, unsigned char *out, size_t len);

/* K protects (ENC) or opens records under SECRET: key and IV made, sequence 0.  -1 on failure. */
int tlsrec_key_set(struct tlsrec_key *k, const EVP_CIPHER *cipher, const EVP_MD *md, bool enc,
		   const unsigned char *secret, size_t secret_len);
/* The next generation of K's secret (a KeyUpdate, RFC 8446 7.2). */
int tlsrec_key_update(struct tlsrec_key *k);
/* Everything of K wiped and freed. */
void tlsrec_key_clear(struct tlsrec_key *k);

/*
 * Seals the N bytes of IN (NIN pieces, N <= TLSREC_MAX_PLAIN) as a record
 * of inner type TYPE into OUT, which has room for N + TLSREC_OVERHEAD.
 * Returns the record's length, or -1.
 */
ssize_t tlsrec_seal(struct tlsrec_key *k, unsigned char type, const struct iovec *in, int nin,
		    size_t n, unsigned char *out);

/*
 * Opens the record whose header is HDR and whose body (LEN bytes, in NBODY
 * pieces) is BODY, into OUT (room for LEN - TLSREC_TAG).  Returns the
 * plaintext's length with the inner type in *TYPE (padding removed), or -1:
 * a body of the wrong size, a tag that does not verify, no inner type.
 * OUT holds nothing to trust after a failure.
 */
ssize_t tlsrec_open(struct tlsrec_key *k, const unsigned char *hdr, const struct iovec *body,
		    int nbody, size_t len, unsigned char *out, unsigned char *type);

#endif
