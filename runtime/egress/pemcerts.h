/*
 * pemcerts.h - the certificates of a PEM bundle as their DER bytes, without
 * parsing them.
 *
 * OpenSSL 3.0 parses a certificate in about 0.1 ms (its public key goes
 * through the provider decoders), so the ~140 system CAs cost the proxy
 * some 15 ms at every start for each full parse.  Most of them are never
 * used: the trust store the clients inside read wants their bytes, and
 * upstream verification wants only the CAs it meets (tls.c loads those on
 * demand, by subject).  This splits a bundle into its blocks, base64
 * decoded here when they are in the plainest form (BEGIN and END lines of
 * a certificate, base64 lines between, "\n" or "\r\n"; the bytes OpenSSL's
 * reader gives, a quarter of its time), by OpenSSL's own PEM reader (the
 * one every caller used before) otherwise,
 * and checks each for the outline of a certificate and of its subject, a
 * Name; the subject is decoded (X509_NAME, about half the cost of a split)
 * only when a caller first asks for it (pem_cert_subject()): the upstream
 * store at its first lookup, the trust store for the few certificates of
 * its hashed directory.
 *
 * Only the plain case is split: a text holding anything else (another
 * kind of block, a block with headers, one that does not decode, or DER
 * without a certificate's outline) is reported as such, and the caller
 * reads that text the exact, slow way it always did, so its result on
 * unusual input is the one it had.
 */
#ifndef OMNIBOX_PEMCERTS_H
#define OMNIBOX_PEMCERTS_H

#include <stddef.h>

#include <openssl/x509.h>

struct pem_cert {
	unsigned char *block;	  /* the block's decoded bytes (OPENSSL_malloc) */
	const unsigned char *der; /* the certificate: its first DER object */
	size_t len;
	const unsigned char *subject_der; /* its subject Name, within DER */
	long subject_len;
	X509_NAME *subject; /* NULL until pem_cert_subject() */
};

struct pem_certs {
	struct pem_cert *v;
	size_t n;
	/* pem_certs_get()'s: a copy of the text split and the holders' count */
	char *text;
	size_t text_len;
	unsigned refs;
};

/*
 * Split TEXT (LEN bytes; NULL or empty: no certificate) into OUT, which
 * is emptied first.  1: every block of TEXT is a certificate ("CERTIFICATE"
 * or "X509 CERTIFICATE", no headers) with a certificate's outline, its
 * subject a Name's, in OUT in order; 0: TEXT holds something else
 * (OUT empty); -1: out of memory (OUT empty).
 */
int pem_certs_split(const char *text, size_t len, struct pem_certs *out);

void pem_certs_free(struct pem_certs *c);

/*
 * C's subject, decoded at the first call and kept with C; NULL when
 * OpenSSL cannot decode it.  The holders of a split ask one at a time
 * (the proxy is one thread; the upstream store asks under its lock).
 */
const X509_NAME *pem_cert_subject(struct pem_cert *c);

/*
 * pem_certs_split() of TEXT, shared: the upstream store and the trust
 * store split the same bundle, and while one holds its split (the first
 * one held, whatever other texts are split meanwhile), another split of
 * the same bytes is that one, counted.  NULL
 * unless *RC (pem_certs_split()'s result) is 1.  pem_certs_put() lets go.
 */
struct pem_certs *pem_certs_get(const char *text, size_t len, int *rc);
void pem_certs_put(struct pem_certs *c);

#endif
