/*
 * tlsrec.c - TLS 1.3 records, one direction at a time (tlsrec.h).
 */
#include "runtime/egress/tlsrec.h"

#include <string.h>

#include <openssl/crypto.h>
#include <openssl/hmac.h>

bool
tlsrec_suite(unsigned suite, const EVP_CIPHER **cipher, const EVP_MD **md)
{
	/* Fetched once: an implicit fetch at each EVP_CipherInit_ex() costs a lock and a lookup. */
	static EVP_CIPHER *aes128, *aes256, *chacha;

	switch (suite & 0xffff) {
	case 0x1301: /* TLS_AES_128_GCM_SHA256 */
		if (!aes128)
			aes128 = EVP_CIPHER_fetch(NULL, "AES-128-GCM", NULL);
		*cipher = aes128;
		*md = EVP_sha256();
		break;
	case 0x1302: /* TLS_AES_256_GCM_SHA384 */
		if (!aes256)
			aes256 = EVP_CIPHER_fetch(NULL, "AES-256-GCM", NULL);
		*cipher = aes256;
		*md = EVP_sha384();
		break;
	case 0x1303: /* TLS_CHACHA20_POLY1305_SHA256 */
		if (!chacha)
			chacha = EVP_CIPHER_fetch(NULL, "ChaCha20-Poly1305", NULL);
		*cipher = chacha;
		*md = EVP_sha256();
		break;
	default:
		return false;
	}
	return *cipher && *md;
}

int
tlsrec_expand_label(const EVP_MD *md, const unsigned char *secret, size_t secret_len,
		    const char *label, unsigned char *out, size_t len)
{
	/* HkdfLabel: uint16 length, opaque label<7..255> ("tls13 " + LABEL),
	 * opaque context<0..255> (empty); then HKDF-Expand's single block
	 * T(1) = HMAC(secret, info || 0x01), as LEN <= the hash's size. */
	unsigned char info[2 + 1 + 255 + 1 + 1], t[EVP_MAX_MD_SIZE];
	size_t ll = strlen(label), n = 0;
	unsigned int tl = 0;

	if (ll + 6 > 255 || len > (size_t)EVP_MD_get_size(md) || secret_len > INT32_MAX)
		return -1;
	info[n++] = (unsigned char)(len >> 8);
	info[n++] = (unsigned char)len;
	info[n++] = (unsigned char)(ll + 6);
	memcpy(info + n, "tls13 ", 6);
	memcpy(info + n + 6, label, ll);
	n += 6 + ll;
	info[n++] = 0;
	info[n++] = 1;
	if (!HMAC(md, secret, (int)secret_len, info, n, t, &tl) || tl < len)
		return -1;
	memcpy(out, t, len);
	OPENSSL_cleanse(t, sizeof(t));
	return 0;
}

/* Key and IV from K's secret; the context keyed, the sequence back to 0. */
static int
key_derive(struct tlsrec_key *k, const EVP_CIPHER *cipher)
{
	unsigned char key[32];
	int kl = EVP_CIPHER_get_key_length(cipher), r = -1;

	if (kl <= 0 || (size_t)kl > sizeof(key) || EVP_CIPHER_get_iv_length(cipher) != 12)
		return -1;
	if (tlsrec_expand_label(k->md, k->secret, k->secret_len, "key", key, (size_t)kl) == 0 &&
	    tlsrec_expand_label(k->md, k->secret, k->secret_len, "iv", k->iv, sizeof(k->iv)) == 0 &&
	    EVP_CipherInit_ex(k->ctx, cipher, NULL, key, NULL, k->enc) == 1)
		r = 0;
	OPENSSL_cleanse(key, sizeof(key));
	k->seq = 0;
	return r;
}

int
tlsrec_key_set(struct tlsrec_key *k, const EVP_CIPHER *cipher, const EVP_MD *md, bool enc,
	       const unsigned char *secret, size_t secret_len)
{
	if (!cipher || !md || secret_len != (size_t)EVP_MD_get_size(md) ||
	    secret_len > sizeof(k->secret))
		return -1;
	tlsrec_key_clear(k);
	if (!(k->ctx = EVP_CIPHER_CTX_new()))
		return -1;
	k->md = md;
	k->enc = enc;
	memcpy(k->secret, secret, secret_len);
	k->secret_len = secret_len;
	return key_derive(k, cipher);
}

int
tlsrec_key_update(struct tlsrec_key *k)
{
	unsigned char next[EVP_MAX_MD_SIZE];
	const EVP_CIPHER *cipher = k->ctx ? EVP_CIPHER_CTX_get0_cipher(k->ctx) : NULL;

	if (!cipher ||
	    tlsrec_expand_label(k->md, k->secret, k->secret_len, "traffic upd", next,
				k->secret_len) < 0)
		return -1;
	memcpy(k->secret, next, k->secret_len);
	OPENSSL_cleanse(next, sizeof(next));
	return key_derive(k, cipher);
}

void
tlsrec_key_clear(struct tlsrec_key *k)
{
	EVP_CIPHER_CTX_free(k->ctx);
	OPENSSL_cleanse(k, sizeof(*k));
	k->ctx = NULL;
}

/* The record's nonce: the IV XOR the sequence number, right-aligned (RFC 8446 5.3). */
static int
record_start(struct tlsrec_key *k, const unsigned char *hdr)
{
	unsigned char nonce[12];
	int l;

	if (!k->ctx || k->seq == UINT64_MAX)
		return -1;
	memcpy(nonce, k->iv, sizeof(nonce));
	for (int i = 0; i < 8; i++)
		nonce[11 - i] ^= (unsigned char)(k->seq >> (8 * i));
	if (EVP_CipherInit_ex(k->ctx, NULL, NULL, NULL, nonce, k->enc) != 1 ||
	    EVP_CipherUpdate(k->ctx, NULL, &l, hdr, TLSREC_HEADER) != 1)
		return -1;
	return 0;
}

static int
update(EVP_CIPHER_CTX *ctx, unsigned char *out, size_t *off, const void *in, size_t n)
{
	int l;

	while (n) {
		int step = n > (1 << 30) ? 1 << 30 : (int)n;

		if (EVP_CipherUpdate(ctx, out + *off, &l, in, step) != 1 || l < 0)
			return -1;
		*off += (size_t)l;
		in = (const unsigned char *)in + step;
		n -= (size_t)step;
	}
	return 0;
}

ssize_t
tlsrec_seal(struct tlsrec_key *k, unsigned char type, const struct iovec *in, int nin, size_t n,
	    unsigned char *out)
{
	size_t body = n + 1 + TLSREC_TAG, off = TLSREC_HEADER, left = n;
	int l;

	if (!k->enc || n > TLSREC_MAX_PLAIN)
		return -1;
	out[0] = TLSREC_APPDATA; /* every protected record's outer type */
	out[1] = 3;
	out[2] = 3;
	out[3] = (unsigned char)(body >> 8);
	out[4] = (unsigned char)body;
	if (record_start(k, out) < 0)
		return -1;
	for (int i = 0; i < nin && left; i++) {
		size_t m = in[i].iov_len < left ? in[i].iov_len : left;

		if (update(k->ctx, out, &off, in[i].iov_base, m) < 0)
			return -1;
		left -= m;
	}
	if (left || update(k->ctx, out, &off, &type, 1) < 0 ||
	    EVP_CipherFinal_ex(k->ctx, out + off, &l) != 1)
		return -1;
	off += (size_t)l;
	if (off != TLSREC_HEADER + n + 1 ||
	    EVP_CIPHER_CTX_ctrl(k->ctx, EVP_CTRL_AEAD_GET_TAG, TLSREC_TAG, out + off) != 1)
		return -1;
	k->seq++;
	return (ssize_t)(off + TLSREC_TAG);
}

ssize_t
tlsrec_open(struct tlsrec_key *k, const unsigned char *hdr, const struct iovec *body, int nbody,
	    size_t len, unsigned char *out, unsigned char *type)
{
	unsigned char tag[TLSREC_TAG];
	size_t clen, off = 0, seen = 0, tagged = 0;
	int l;

	if (k->enc || len < TLSREC_TAG + 1 || len > TLSREC_MAX_BODY || record_start(k, hdr) < 0)
		return -1;
	clen = len - TLSREC_TAG;
	/* The ciphertext is decrypted as it comes; the last 16 bytes are the tag. */
	for (int i = 0; i < nbody && seen < len; i++) {
		const unsigned char *p = body[i].iov_base;
		size_t m = body[i].iov_len < len - seen ? body[i].iov_len : len - seen;
		size_t c = seen < clen ? (m < clen - seen ? m : clen - seen) : 0;

		if (c && update(k->ctx, out, &off, p, c) < 0)
			return -1;
		memcpy(tag + tagged, p + c, m - c);
		tagged += m - c;
		seen += m;
	}
	if (seen != len || tagged != TLSREC_TAG ||
	    EVP_CIPHER_CTX_ctrl(k->ctx, EVP_CTRL_AEAD_SET_TAG, TLSREC_TAG, tag) != 1 ||
	    EVP_CipherFinal_ex(k->ctx, out + off, &l) != 1)
		return -1;
	off += (size_t)l;
	if (off != clen)
		return -1;
	k->seq++;
	/* TLSInnerPlaintext: content, the type, then zeros. */
	while (off > 0 && out[off - 1] == 0)
		off--;
	if (off == 0 || off - 1 > TLSREC_MAX_PLAIN)
		return -1;
	*type = out[off - 1];
	return (ssize_t)(off - 1);
}
