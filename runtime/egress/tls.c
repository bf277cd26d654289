/*
 * tls.c - the per-launch CA, leaf certificates, and TLS contexts.
 */
#include "runtime/egress/tls.h"

#include <arpa/inet.h>
#include <limits.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/objects.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>

#include "runtime/egress/pemcerts.h"

struct leaf {
	char *host;
	X509 *cert;
	time_t made, expires;
	struct leaf *next;
};

#define LEAF_BUCKETS 256

struct tls_ca {
	EVP_PKEY *key, *leaf_key;
	X509 *cert;
	X509 *whole; /* tls_ca_cert()'s, made at its first call */
	char *pem;
	size_t pem_len;
	time_t expires;
	struct leaf *buckets[LEAF_BUCKETS];
	size_t n_leaves;
};

/* The index of the SSL ex_data slot holding the expected SNI host. */
static int host_index = -1;

void
tls_library_init(void)
{
	static bool done;

	if (done)
		return;
	done = true;
	/* libcrypto alone, with the system's configuration: libssl, and with it
	 * the error texts, come with the first TLS context (proxy_warm()).  An
	 * OPENSSL_INIT_NO_LOAD_*_STRINGS here would keep them out for good. */
	OPENSSL_init_crypto(OPENSSL_INIT_LOAD_CONFIG, NULL);
	/* Before the generator's first use; should it fail, the default stays. */
	if (!RAND_set_DRBG_type(NULL, "HASH-DRBG", NULL, NULL, "SHA256"))
		ERR_clear_error();
}

void
tls_error_text(unsigned long e, char *buf, size_t len)
{
	OPENSSL_init_ssl(OPENSSL_INIT_LOAD_SSL_STRINGS | OPENSSL_INIT_LOAD_CRYPTO_STRINGS, NULL);
	ERR_error_string_n(e, buf, len);
}

static void
ssl_error(char *err, size_t errlen, const char *what)
{
	unsigned long e = ERR_get_error();
	char buf[256];

	tls_error_text(e, buf, sizeof(buf));
	snprintf(err, errlen, "%s: %s", what, e ? buf : "unknown error");
	ERR_clear_error();
}

static EVP_PKEY *
make_key(void)
{
	return EVP_EC_gen("P-256");
}

/* The keys tls_prewarm() made before the proxy's configuration came. */
static EVP_PKEY *warm_key, *warm_leaf_key;

void
tls_prewarm(void)
{
	EVP_MD *md;

	tls_library_init();
	if (!warm_key)
		warm_key = make_key();
	sched_yield(); /* tls.h */
	if (!warm_leaf_key)
		warm_leaf_key = make_key();
	/* The digests a start signs and writes with: fetched once, kept by OpenSSL. */
	EVP_MD_free((md = EVP_MD_fetch(NULL, "SHA256", NULL)));
	EVP_MD_free((md = EVP_MD_fetch(NULL, "SHA1", NULL)));
	ERR_clear_error();
}

/* A key made ahead (taken from *WARM), or one made now. */
static EVP_PKEY *
take_key(EVP_PKEY **warm)
{
	EVP_PKEY *k = *warm;

	*warm = NULL;
	return k ? k : make_key();
}

/*
 * The session CA's public key, KEY (a P-256 key of make_key()), put into
 * its certificate as the bytes a SubjectPublicKeyInfo holds: the algorithm,
 * the curve and the point.  X509_set_pubkey() would encode the same bytes
 * through OpenSSL's encoders, whose first use costs a start of the proxy
 * about 1.4 ms; the CA certificate is only signed, written out and named
 * as the issuer of the leaves (its key identifier comes from these bytes),
 * never asked for its key again.
 */
static int
ca_set_pubkey(X509 *x, EVP_PKEY *key)
{
	unsigned char *point;
	size_t len = 0;

	if (!EVP_PKEY_get_octet_string_param(key, OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY, NULL, 0,
					     &len) ||
	    len == 0 || len > INT_MAX || !(point = OPENSSL_malloc(len)))
		return 0;
	if (!EVP_PKEY_get_octet_string_param(key, OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY, point, len,
					     &len) ||
	    !X509_PUBKEY_set0_param(X509_get_X509_PUBKEY(x), OBJ_nid2obj(NID_X9_62_id_ecPublicKey),
				    V_ASN1_OBJECT, OBJ_nid2obj(NID_X9_62_prime256v1), point,
				    (int)len)) {
		OPENSSL_free(point);
		return 0;
	}
	return 1;
}

/* A random positive 127-bit serial number. */
static int
set_serial(X509 *x)
{
	unsigned char raw[16];
	BIGNUM *bn;
	int ok;

	if (RAND_bytes(raw, sizeof(raw)) != 1)
		return -1;
	raw[0] &= 0x7f;
	raw[0] |= 0x40; /* never zero-length, never negative */
	bn = BN_bin2bn(raw, sizeof(raw), NULL);
	if (!bn)
		return -1;
	ok = BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x)) != NULL;
	BN_free(bn);
	return ok ? 0 : -1;
}

static int
add_ext(X509 *cert, X509 *issuer, int nid, const char *value)
{
	X509V3_CTX ctx;
	X509_EXTENSION *ext;
	int ok;

	X509V3_set_ctx(&ctx, issuer, cert, NULL, NULL, 0);
	ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
	if (!ext)
		return -1;
	ok = X509_add_ext(cert, ext, -1);
	X509_EXTENSION_free(ext);
	return ok ? 0 : -1;
}

static int
set_validity(X509 *x, time_t from, time_t until)
{
	return ASN1_TIME_set(X509_getm_notBefore(x), from) &&
		       ASN1_TIME_set(X509_getm_notAfter(x), until)
		   ? 0
		   : -1;
}

struct tls_ca *
tls_ca_new(time_t now, char *err, size_t errlen)
{
	struct tls_ca *ca = calloc(1, sizeof(*ca));
	unsigned char id[6];
	char cn[64];
	X509_NAME *name;
	BIO *bio = NULL;
	BUF_MEM *mem;

	if (!ca) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (host_index < 0)
		host_index = SSL_get_ex_new_index(0, NULL, NULL, NULL, NULL);
	ca->key = take_key(&warm_key);
	ca->leaf_key = take_key(&warm_leaf_key);
	ca->cert = X509_new();
	if (!ca->key || !ca->leaf_key || !ca->cert || host_index < 0 ||
	    RAND_bytes(id, sizeof(id)) != 1)
		goto fail;
	/* A distinct name per launch, so bundles from two sessions never collide. */
	snprintf(cn, sizeof(cn), "omnibox session CA %02x%02x%02x%02x%02x%02x", id[0], id[1], id[2],
		 id[3], id[4], id[5]);
	ca->expires = now + TLS_CA_LIFETIME;
	name = X509_get_subject_name(ca->cert);
	if (!X509_set_version(ca->cert, 2) || set_serial(ca->cert) < 0 ||
	    set_validity(ca->cert, now - TLS_BACKDATE, ca->expires) < 0 ||
	    !X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, (const unsigned char *)"omnibox",
					-1, -1, 0) ||
	    !X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1,
					0) ||
	    !X509_set_issuer_name(ca->cert, name) || !ca_set_pubkey(ca->cert, ca->key) ||
	    add_ext(ca->cert, ca->cert, NID_basic_constraints, "critical,CA:TRUE,pathlen:0") < 0 ||
	    add_ext(ca->cert, ca->cert, NID_key_usage, "critical,keyCertSign,cRLSign") < 0 ||
	    add_ext(ca->cert, ca->cert, NID_subject_key_identifier, "hash") < 0 ||
	    !X509_sign(ca->cert, ca->key, EVP_sha256()))
		goto fail;
	bio = BIO_new(BIO_s_mem());
	if (!bio || !PEM_write_bio_X509(bio, ca->cert))
		goto fail;
	BIO_get_mem_ptr(bio, &mem);
	ca->pem = malloc(mem->length + 1);
	if (!ca->pem)
		goto fail;
	memcpy(ca->pem, mem->data, mem->length);
	ca->pem[mem->length] = '\0';
	ca->pem_len = mem->length;
	BIO_free(bio);
	return ca;
fail:
	ssl_error(err, errlen, "cannot make the session CA");
	BIO_free(bio);
	tls_ca_free(ca);
	return NULL;
}

/* A key file's passphrase prompt: never answered, so an encrypted key is refused. */
static int
no_passphrase(char *buf, int size, int rwflag, void *u)
{
	(void)buf;
	(void)size;
	(void)rwflag;
	(void)u;
	return -1;
}

/* CA's certificate in PEM, kept beside it (tls_ca_pem()). */
static int
keep_pem(struct tls_ca *ca)
{
	BIO *bio = BIO_new(BIO_s_mem());
	BUF_MEM *mem;

	if (!bio || !PEM_write_bio_X509(bio, ca->cert)) {
		BIO_free(bio);
		return -1;
	}
	BIO_get_mem_ptr(bio, &mem);
	ca->pem = malloc(mem->length + 1);
	if (ca->pem) {
		memcpy(ca->pem, mem->data, mem->length);
		ca->pem[mem->length] = '\0';
		ca->pem_len = mem->length;
	}
	BIO_free(bio);
	return ca->pem ? 0 : -1;
}

/* Read CERT_FILE and KEY_FILE into CA; why not in ERR. */
static int
load_pem(struct tls_ca *ca, const char *cert_file, const char *key_file, char *err, size_t errlen)
{
	BIO *b = BIO_new_file(cert_file, "r");
	char what[512];

	if (b)
		ca->cert = PEM_read_bio_X509(b, NULL, no_passphrase, NULL);
	BIO_free(b);
	if (!ca->cert) {
		snprintf(what, sizeof(what), "cannot read the CA certificate %s", cert_file);
		ssl_error(err, errlen, what);
		return -1;
	}
	b = BIO_new_file(key_file, "r");
	if (b)
		ca->key = PEM_read_bio_PrivateKey(b, NULL, no_passphrase, NULL);
	BIO_free(b);
	if (!ca->key) {
		snprintf(what, sizeof(what),
			 "cannot read the CA key %s (a PEM private key, not encrypted)", key_file);
		ssl_error(err, errlen, what);
		return -1;
	}
	return 0;
}

static void
cache_clear(struct tls_ca *ca)
{
	for (size_t i = 0; i < LEAF_BUCKETS; i++) {
		while (ca->buckets[i]) {
			struct leaf *l = ca->buckets[i];

			ca->buckets[i] = l->next;
			X509_free(l->cert);
			free(l->host);
			free(l);
		}
	}
	ca->n_leaves = 0;
}

void
tls_ca_free(struct tls_ca *ca)
{
	if (!ca)
		return;
	cache_clear(ca);
	EVP_PKEY_free(ca->key);
	EVP_PKEY_free(ca->leaf_key);
	X509_free(ca->cert);
	X509_free(ca->whole);
	free(ca->pem);
	free(ca);
}

const char *
tls_ca_pem(const struct tls_ca *ca, size_t *len)
{
	*len = ca->pem_len;
	return ca->pem;
}

X509 *
tls_ca_cert(struct tls_ca *ca)
{
	/* Read back from its PEM: a certificate that holds its key decoded. */
	if (!ca->whole) {
		BIO *bio = BIO_new_mem_buf(ca->pem, (int)ca->pem_len);

		ca->whole = bio ? PEM_read_bio_X509(bio, NULL, NULL, NULL) : NULL;
		BIO_free(bio);
	}
	return ca->whole;
}

EVP_PKEY *
tls_leaf_key(const struct tls_ca *ca)
{
	return ca->leaf_key;
}

static X509 *
make_leaf(struct tls_ca *ca, const char *host, time_t now, time_t expires)
{
	X509 *x = X509_new();
	X509_NAME *name;
	struct in_addr v4;
	char san[300];
	size_t hlen = strlen(host);

	if (!x)
		return NULL;
	/* SAN is what clients check; the CN (64 bytes at most) is for people. */
	if (inet_pton(AF_INET, host, &v4) == 1)
		snprintf(san, sizeof(san), "IP:%s", host);
	else
		snprintf(san, sizeof(san), "DNS:%s", host);
	name = X509_get_subject_name(x);
	if (!X509_set_version(x, 2) || set_serial(x) < 0 ||
	    set_validity(x, now - TLS_BACKDATE, expires) < 0 ||
	    !X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)host,
					hlen > 64 ? 64 : (int)hlen, -1, 0) ||
	    !X509_set_issuer_name(x, X509_get_subject_name(ca->cert)) ||
	    !X509_set_pubkey(x, ca->leaf_key) ||
	    add_ext(x, ca->cert, NID_basic_constraints, "critical,CA:FALSE") < 0 ||
	    add_ext(x, ca->cert, NID_key_usage, "critical,digitalSignature") < 0 ||
	    add_ext(x, ca->cert, NID_ext_key_usage, "serverAuth") < 0 ||
	    add_ext(x, ca->cert, NID_subject_alt_name, san) < 0 ||
	    add_ext(x, ca->cert, NID_authority_key_identifier, "keyid:always") < 0 ||
	    !X509_sign(x, ca->key, EVP_sha256())) {
		X509_free(x);
		return NULL;
	}
	return x;
}

static unsigned
bucket_of(const char *host)
{
	unsigned h = 2166136261u;

	for (; *host; host++)
		h = (h ^ (unsigned char)*host) * 16777619u;
	return h % LEAF_BUCKETS;
}

X509 *
tls_leaf_get(struct tls_ca *ca, const char *host, time_t now)
{
	struct leaf **slot = &ca->buckets[bucket_of(host)], *l;
	time_t expires;
	X509 *x;

	for (l = *slot; l; l = l->next)
		if (!strcmp(l->host, host))
			break;
	/* Renew once half the lifetime is gone: a client that connects late
	 * still gets hours of validity, never an expired leaf. */
	if (l && now >= l->made && now - l->made < (l->expires - l->made) / 2)
		return l->cert;
	expires = now + TLS_LEAF_LIFETIME;
	if (expires > ca->expires)
		expires = ca->expires;
	x = make_leaf(ca, host, now, expires);
	if (!x)
		return NULL;
	if (l) {
		X509_free(l->cert);
	} else {
		if (ca->n_leaves >= TLS_LEAF_CACHE_MAX) {
			cache_clear(ca);
			slot = &ca->buckets[bucket_of(host)];
		}
		l = calloc(1, sizeof(*l));
		if (!l || !(l->host = strdup(host))) {
			free(l);
			X509_free(x);
			return NULL;
		}
		l->next = *slot;
		*slot = l;
		ca->n_leaves++;
	}
	l->cert = x;
	l->made = now;
	l->expires = expires;
	return x;
}

struct tls_ca *
tls_ca_load(const char *cert_file, const char *key_file, time_t now, char *err, size_t errlen)
{
	struct tls_ca *ca = calloc(1, sizeof(*ca));
	int days = 0, secs = 0;
	X509 *probe;

	if (!ca || !cert_file || !key_file) {
		snprintf(err, errlen,
			 ca ? "a fixed CA needs its certificate and its key" : "out of memory");
		free(ca);
		return NULL;
	}
	if (host_index < 0)
		host_index = SSL_get_ex_new_index(0, NULL, NULL, NULL, NULL);
	if (load_pem(ca, cert_file, key_file, err, errlen) < 0)
		goto out;
	if (EVP_PKEY_base_id(ca->key) != EVP_PKEY_RSA && EVP_PKEY_base_id(ca->key) != EVP_PKEY_EC) {
		snprintf(err, errlen, "%s: only an RSA or EC key signs leaf certificates here",
			 key_file);
		goto out;
	}
	if (X509_check_private_key(ca->cert, ca->key) != 1) {
		ERR_clear_error();
		snprintf(err, errlen, "%s is not the key of the certificate %s", key_file,
			 cert_file);
		goto out;
	}
	/* 1: basicConstraints CA:TRUE (and keyCertSign when the key usage is limited). */
	if (X509_check_ca(ca->cert) != 1) {
		snprintf(
		    err, errlen,
		    "%s is not a CA certificate (it needs basicConstraints CA:TRUE and, when it "
		    "limits its key usage, keyCertSign)",
		    cert_file);
		goto out;
	}
	if (X509_cmp_time(X509_get0_notBefore(ca->cert), &now) > 0 ||
	    X509_cmp_time(X509_get0_notAfter(ca->cert), &now) < 0 ||
	    !ASN1_TIME_diff(&days, &secs, NULL, X509_get0_notAfter(ca->cert))) {
		snprintf(err, errlen, "%s is not valid now (expired, or not yet valid)", cert_file);
		goto out;
	}
	ca->expires = now + (time_t)days * 86400 + secs;
	ca->leaf_key = make_key();
	if (!ca->leaf_key || host_index < 0 || keep_pem(ca) < 0) {
		ssl_error(err, errlen, "cannot set up the CA");
		goto out;
	}
	/* One leaf now, so a CA no leaf can be made under is refused at start. */
	probe = make_leaf(ca, "omnibox-proxy.invalid", now,
			  ca->expires < now + 60 ? ca->expires : now + 60);
	X509_free(probe);
	if (!probe) {
		ssl_error(err, errlen, "cannot make a leaf certificate under this CA");
		goto out;
	}
	return ca;
out:
	tls_ca_free(ca);
	return NULL;
}

/* ---- contexts ---------------------------------------------------------------------- */

static int
alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen, const unsigned char *in,
	    unsigned int inlen, void *arg)
{
	static const unsigned char h11[] = "\x08http/1.1";

	(void)ssl;
	(void)arg;
	/* Only HTTP/1.1 can be inspected request by request; a client that
	 * offers nothing else gets no ALPN answer and speaks HTTP/1.1. */
	if (SSL_select_next_proto((unsigned char **)out, outlen, h11, sizeof(h11) - 1, in, inlen) ==
	    OPENSSL_NPN_NEGOTIATED)
		return SSL_TLSEXT_ERR_OK;
	return SSL_TLSEXT_ERR_NOACK;
}

static int
servername_check(SSL *ssl, int *alert, void *arg)
{
	const char *want = SSL_get_ex_data(ssl, host_index);
	const char *sni = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);

	(void)arg;
	/* The tunnel was checked for the CONNECT host; a different SNI would
	 * make the client believe it talks to another server. */
	if (sni && (!want || strcasecmp(sni, want) != 0)) {
		*alert = SSL_AD_UNRECOGNIZED_NAME;
		return SSL_TLSEXT_ERR_ALERT_FATAL;
	}
	return SSL_TLSEXT_ERR_OK;
}

SSL_CTX *
tls_server_ctx_new(char *err, size_t errlen)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());

	if (!ctx || !SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION)) {
		ssl_error(err, errlen, "cannot make the TLS server context");
		SSL_CTX_free(ctx);
		return NULL;
	}
	/* Idle tunnels keep no record buffers: 10,000 of them must stay small. */
	SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
	SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
	SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET | SSL_OP_NO_RENEGOTIATION);
	SSL_CTX_set_num_tickets(ctx, 0);
	SSL_CTX_set_alpn_select_cb(ctx, alpn_select, NULL);
	SSL_CTX_set_tlsext_servername_callback(ctx, servername_check);
	return ctx;
}

int
tls_server_prepare(SSL *ssl, struct tls_ca *ca, const char *host, time_t now)
{
	X509 *leaf = tls_leaf_get(ca, host, now);

	if (!leaf || SSL_use_certificate(ssl, leaf) != 1 ||
	    SSL_use_PrivateKey(ssl, ca->leaf_key) != 1 ||
	    SSL_set_ex_data(ssl, host_index, (void *)host) != 1)
		return -1;
	return 0;
}

/* ---- the upstream trust store ---------------------------------------------------- */

/*
 * A bundle's certificates for an X509_STORE, parsed when verification
 * first asks for their subject (a lookup, as OpenSSL's hashed directories
 * are read): all those of that subject go into the store at once, so the
 * store then holds what it would have held from the start for every name
 * it is asked, and verification finds the same issuers.  The proxy trusts
 * the bundle it read at start (kept here), never a file read later.
 */
struct bundle {
	struct pem_certs *certs; /* shared with the trust store's writer (pemcerts.h) */
	unsigned char *added;	 /* one flag per certificate: in the store, or tried */
	CRYPTO_RWLOCK *lock;
};

static X509_LOOKUP_METHOD *bundle_method;
static CRYPTO_ONCE bundle_once = CRYPTO_ONCE_STATIC_INIT;

static void
bundle_free(struct bundle *b)
{
	if (!b)
		return;
	pem_certs_put(b->certs);
	free(b->added);
	CRYPTO_THREAD_lock_free(b->lock);
	free(b);
}

static void
bundle_lookup_free(X509_LOOKUP *lu)
{
	bundle_free(X509_LOOKUP_get_method_data(lu));
}

/*
 * Every certificate of the bundle whose subject is NAME into the store
 * (once), then the store's first of NAME in RET, borrowed as OpenSSL's own
 * lookups return it (X509_STORE_CTX_get_by_subject takes the reference).
 */
static int
bundle_by_subject(X509_LOOKUP *lu, X509_LOOKUP_TYPE type, const X509_NAME *name, X509_OBJECT *ret)
{
	struct bundle *b = X509_LOOKUP_get_method_data(lu);
	X509_STORE *store = X509_LOOKUP_get_store(lu);
	X509_OBJECT *obj;
	X509 *x = NULL;
	int ok;

	if (type != X509_LU_X509 || !b || !store || !CRYPTO_THREAD_write_lock(b->lock))
		return 0;
	for (size_t i = 0; i < b->certs->n; i++) {
		struct pem_cert *pc = &b->certs->v[i];
		const unsigned char *p = pc->der;
		const X509_NAME *subject;
		X509 *c;

		if (b->added[i])
			continue;
		/* A subject OpenSSL cannot decode names no issuer it will find. */
		subject = pem_cert_subject(pc);
		if (!subject || X509_NAME_cmp(subject, name) != 0)
			continue;
		b->added[i] = 1;
		/* One OpenSSL cannot read is not trusted (nor was it before). */
		c = d2i_X509(NULL, &p, (long)pc->len);
		if (c)
			X509_STORE_add_cert(store, c);
		X509_free(c);
	}
	CRYPTO_THREAD_unlock(b->lock);
	ERR_clear_error();
	if (!X509_STORE_lock(store))
		return 0;
	obj = X509_OBJECT_retrieve_by_subject(X509_STORE_get0_objects(store), X509_LU_X509, name);
	if (obj)
		x = X509_OBJECT_get0_X509(obj);
	X509_STORE_unlock(store);
	if (!x)
		return 0;
	/* The store keeps X for as long as it lives; RET borrows it. */
	ok = X509_OBJECT_set1_X509(ret, x);
	if (ok)
		X509_free(x);
	return ok;
}

static void
bundle_method_init(void)
{
	X509_LOOKUP_METHOD *m = X509_LOOKUP_meth_new("omnibox bundle");

	if (m && (!X509_LOOKUP_meth_set_get_by_subject(m, bundle_by_subject) ||
		  !X509_LOOKUP_meth_set_free(m, bundle_lookup_free))) {
		X509_LOOKUP_meth_free(m);
		m = NULL;
	}
	bundle_method = m;
}

/*
 * STORE's certificates from the PEM text CAS (LEN bytes): 1 when it holds
 * some, 0 when none, -1 when OpenSSL fails.  Plain certificates are
 * looked up on demand (struct bundle); any other text is read whole now,
 * as it always was.
 */
static int
store_load(X509_STORE *store, const char *cas, size_t len)
{
	struct bundle *b = calloc(1, sizeof(*b));
	STACK_OF(X509_INFO) * infos;
	X509_LOOKUP *lu;
	BIO *bio;
	int n = 0, r;

	if (!b)
		return -1;
	b->certs = pem_certs_get(cas, len, &r);
	if (r == 1) {
		if (!b->certs->n) {
			bundle_free(b);
			return 0;
		}
		if (!CRYPTO_THREAD_run_once(&bundle_once, bundle_method_init) || !bundle_method ||
		    !(b->added = calloc(b->certs->n, 1)) || !(b->lock = CRYPTO_THREAD_lock_new()) ||
		    !(lu = X509_STORE_add_lookup(store, bundle_method))) {
			bundle_free(b);
			return -1;
		}
		X509_LOOKUP_set_method_data(lu, b);
		return 1;
	}
	bundle_free(b);
	if (r < 0 || len > INT_MAX || !(bio = BIO_new_mem_buf(cas, (int)len)))
		return -1;
	infos = PEM_X509_INFO_read_bio(bio, NULL, NULL, NULL);
	BIO_free(bio);
	if (!infos)
		return -1;
	for (int i = 0; i < sk_X509_INFO_num(infos); i++) {
		X509_INFO *info = sk_X509_INFO_value(infos, i);

		if (info->x509 && X509_STORE_add_cert(store, info->x509) == 1)
			n++;
	}
	sk_X509_INFO_pop_free(infos, X509_INFO_free);
	return n > 0;
}

SSL_CTX *
tls_client_ctx_new(const char *cas, size_t len, char *err, size_t errlen)
{
	static const unsigned char h11[] = "\x08http/1.1";
	SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
	int r;

	if (!ctx || !SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION))
		goto fail;
	r = store_load(SSL_CTX_get_cert_store(ctx), cas, len);
	if (r < 0)
		goto fail;
	if (r == 0) {
		snprintf(err, errlen, "the system CA file holds no certificate");
		SSL_CTX_free(ctx);
		return NULL;
	}
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
	if (SSL_CTX_set_alpn_protos(ctx, h11, sizeof(h11) - 1) != 0)
		goto fail;
	return ctx;
fail:
	ssl_error(err, errlen, "cannot make the upstream TLS context");
	SSL_CTX_free(ctx);
	return NULL;
}

int
tls_client_prepare(SSL *ssl, const char *host)
{
	struct in_addr v4;

	if (inet_pton(AF_INET, host, &v4) == 1) {
		/* An address literal: no SNI (RFC 6066), the certificate must name the IP. */
		X509_VERIFY_PARAM *param = SSL_get0_param(ssl);

		return X509_VERIFY_PARAM_set1_ip_asc(param, host) == 1 ? 0 : -1;
	}
	if (SSL_set_tlsext_host_name(ssl, host) != 1 || SSL_set1_host(ssl, host) != 1)
		return -1;
	return 0;
}
