/*
 * tls.h - the egress proxy's certificates and TLS contexts.
 *
 * Each launch gets a fresh certificate authority (EC P-256) whose private
 * key lives only in this process's memory; only its certificate leaves, in
 * the PEM bundle the sandbox trusts.  omnibox-proxy reads a fixed one
 * instead (tls_ca_load()).  Leaf certificates for intercepted
 * hosts are made on demand, cached, valid for TLS_LEAF_LIFETIME and
 * replaced once less than half of that remains, so a long session never
 * serves an expired leaf.  All leaves share one key, made at start.
 *
 * Upstream connections are verified against the system CA store read once
 * when the proxy starts (never the bundle in the scratch dir, which the
 * agent can write); its certificates are parsed when verification first
 * asks for their subject, which trusts exactly what parsing them all at
 * start trusted, without the ~15 ms that costs every launch.
 */
#ifndef OMNIBOX_TLS_H
#define OMNIBOX_TLS_H

#include <stddef.h>
#include <time.h>

#include <openssl/ssl.h>

#define TLS_CA_LIFETIME (365L * 24 * 3600)
#define TLS_LEAF_LIFETIME (24L * 3600)
/* Leaves are valid from a little before they are made (clock skew). */
#define TLS_BACKDATE 300L
/* Distinct hosts kept in the leaf cache before it is emptied and refilled. */
#define TLS_LEAF_CACHE_MAX 1024

struct tls_ca;

/*
 * OpenSSL set up for a proxy's start, before its first use: libcrypto
 * alone, libssl and its error texts coming with the first TLS context or
 * the first error shown (tls_error_text()); and its random generator the
 * SHA-256 Hash_DRBG (NIST SP 800-90A, as the default CTR_DRBG), whose
 * digest a start fetches anyway: the AES ciphers of the default one,
 * fetched first, cost a start about 0.9 ms.  Without it OpenSSL sets
 * itself up as usual.
 */
void tls_library_init(void);

/* The text of OpenSSL's error code E ("error:...:reason"), in BUF of LEN bytes. */
void tls_error_text(unsigned long e, char *buf, size_t len);

/*
 * What a start needs before anything is known of the launch: OpenSSL set
 * up, the keys of the next tls_ca_new() made (a proxy that loads its CA
 * instead just leaves them), the digests it uses fetched.  Optional: the
 * proxy calls it while omnibox-run is still resolving the launch.  Between
 * the keys it lets another process waiting for this CPU run first
 * (sched_yield(): omnibox-proxy.c says why).
 */
void tls_prewarm(void);

/* A new CA and leaf key, valid from NOW.  NULL with a message in ERR. */
struct tls_ca *tls_ca_new(time_t now, char *err, size_t errlen);
/*
 * A fixed CA read from CERT_FILE and KEY_FILE (PEM; a Kubernetes TLS
 * Secret's tls.crt and tls.key), and a fresh leaf key.  Refused, with a
 * message naming the file in ERR: an unreadable file, an encrypted key or
 * one that is not RSA or EC, a key that is not the certificate's, a
 * certificate that is not a CA (basicConstraints CA:TRUE, and keyCertSign
 * if it limits its key usage), one not valid at NOW, or one no leaf can be
 * made under.  Leaves never outlive it.
 */
struct tls_ca *tls_ca_load(const char *cert_file, const char *key_file, time_t now, char *err,
			   size_t errlen);
void tls_ca_free(struct tls_ca *ca);

/* The CA certificate in PEM; owned by CA. */
const char *tls_ca_pem(const struct tls_ca *ca, size_t *len);

/* The CA certificate itself (for tests), read back from its PEM at the
 * first call (the CA this makes holds its key's bytes, not the key
 * decoded); owned by CA; NULL when out of memory. */
X509 *tls_ca_cert(struct tls_ca *ca);

/*
 * The leaf certificate for HOST (a DNS name, or a dotted-quad IPv4
 * literal, which gets an iPAddress SAN), valid at NOW: from the cache, or
 * made now when missing or when less than half its lifetime remains.
 * Owned by the cache; take a reference (X509_up_ref, or SSL_use_certificate)
 * to keep it past the next call.  NULL when OpenSSL fails.
 */
X509 *tls_leaf_get(struct tls_ca *ca, const char *host, time_t now);

/* The private key of every leaf; owned by CA. */
EVP_PKEY *tls_leaf_key(const struct tls_ca *ca);

/*
 * The context for the agent's side of intercepted tunnels: TLS 1.2+, ALPN
 * offers only http/1.1, and a ClientHello whose SNI differs from the host
 * set with tls_server_expect_host() is refused with an alert.
 */
SSL_CTX *tls_server_ctx_new(char *err, size_t errlen);

/* Bind SSL (made from tls_server_ctx_new's context) to HOST: its leaf and its SNI check.
 * HOST must outlive SSL.  Returns 0, or -1 when OpenSSL fails. */
int tls_server_prepare(SSL *ssl, struct tls_ca *ca, const char *host, time_t now);

/*
 * The context for upstream connections: TLS 1.2+, peer verification
 * against the PEM certificates in CAS/LEN (read once by the caller), ALPN
 * http/1.1.  NULL with a message in ERR (also when CAS holds no certificate).
 * A CAS of plain certificates is kept as DER, each parsed into the store
 * when a verification first looks its subject up, with every other of that
 * subject (pemcerts.h); any other text is read whole now.
 */
SSL_CTX *tls_client_ctx_new(const char *cas, size_t len, char *err, size_t errlen);

/* Set SNI and the name the upstream certificate must carry (or the IPv4 address). */
int tls_client_prepare(SSL *ssl, const char *host);

#endif
