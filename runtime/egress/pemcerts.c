/*
 * pemcerts.c - a PEM bundle's certificates as DER, not parsed (pemcerts.h).
 */
#include "runtime/egress/pemcerts.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/asn1.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

/*
 * The DER object at *P (at most AVAIL bytes) if it is of TAG (universal,
 * or context-specific when CTX), constructed or not as CONS, with a
 * definite length: *P moves past its header, *LEN is its contents'
 * length.  0, or -1.
 */
static int
der_take(const unsigned char **p, long avail, int tag, int ctx, int cons, long *len)
{
	const unsigned char *q = *p;
	int t, cls, r;

	if (avail <= 0)
		return -1;
	r = ASN1_get_object(&q, len, &t, &cls, avail);
	if ((r & 0x80) || (r & 0x01) || t != tag ||
	    cls != (ctx ? V_ASN1_CONTEXT_SPECIFIC : V_ASN1_UNIVERSAL) ||
	    !(r & V_ASN1_CONSTRUCTED) != !cons || *len < 0 || *len > avail - (q - *p))
		return -1;
	*p = q;
	return 0;
}

/* Step over the DER object at *P, which must be of TAG (universal, constructed as CONS). */
static int
der_skip(const unsigned char **p, const unsigned char *end, int tag, int cons)
{
	long len;

	if (der_take(p, end - *p, tag, 0, cons, &len) < 0)
		return -1;
	*p += len;
	return 0;
}

/*
 * The outline of a certificate (RFC 5280, 4.1) at the start of DER (LEN
 * bytes): its own length in *CERT_LEN and its subject Name in *SUBJ and
 * *SUBJ_LEN.  0, or -1.
 */
static int
outline(const unsigned char *der, long len, size_t *cert_len, const unsigned char **subj,
	long *subj_len)
{
	const unsigned char *p = der, *end, *tbs_end, *s;
	long l;

	if (der_take(&p, len, V_ASN1_SEQUENCE, 0, 1, &l) < 0)
		return -1;
	end = p + l;
	*cert_len = (size_t)(end - der);
	if (der_take(&p, end - p, V_ASN1_SEQUENCE, 0, 1, &l) < 0) /* tbsCertificate */
		return -1;
	tbs_end = p + l;
	s = p;
	if (der_take(&s, tbs_end - s, 0, 1, 1, &l) == 0) /* [0] EXPLICIT version */
		p = s + l;
	if (der_skip(&p, tbs_end, V_ASN1_INTEGER, 0) < 0 ||  /* serialNumber */
	    der_skip(&p, tbs_end, V_ASN1_SEQUENCE, 1) < 0 || /* signature */
	    der_skip(&p, tbs_end, V_ASN1_SEQUENCE, 1) < 0 || /* issuer */
	    der_skip(&p, tbs_end, V_ASN1_SEQUENCE, 1) < 0)   /* validity */
		return -1;
	*subj = p;
	if (der_skip(&p, tbs_end, V_ASN1_SEQUENCE, 1) < 0) /* subject */
		return -1;
	*subj_len = p - *subj;
	p = tbs_end;
	if (der_skip(&p, end, V_ASN1_SEQUENCE, 1) < 0 ||   /* signatureAlgorithm */
	    der_skip(&p, end, V_ASN1_BIT_STRING, 0) < 0 || /* signatureValue */
	    p != end)
		return -1;
	return 0;
}

/*
 * Is the DER at P (LEN bytes) the outline of a Name (RFC 5280, 4.1.2.4): a
 * sequence of sets, each of one or more sequences of an OID and one
 * value?  0, or -1.
 */
static int
name_outline(const unsigned char *p, long len)
{
	const unsigned char *end = p + len, *set_end, *atv_end, *q;
	long l;
	int tag, cls, r;

	if (der_take(&p, len, V_ASN1_SEQUENCE, 0, 1, &l) < 0 || p + l != end)
		return -1;
	while (p < end) {
		if (der_take(&p, end - p, V_ASN1_SET, 0, 1, &l) < 0 || l == 0)
			return -1;
		for (set_end = p + l; p < set_end; p = atv_end) {
			if (der_take(&p, set_end - p, V_ASN1_SEQUENCE, 0, 1, &l) < 0)
				return -1;
			atv_end = p + l;
			if (der_skip(&p, atv_end, V_ASN1_OBJECT, 0) < 0 || p >= atv_end)
				return -1;
			q = p;
			r = ASN1_get_object(&q, &l, &tag, &cls, atv_end - p);
			if ((r & 0x80) || (r & 0x01) || l < 0 || l != atv_end - q)
				return -1;
		}
	}
	return 0;
}

const X509_NAME *
pem_cert_subject(struct pem_cert *c)
{
	const unsigned char *q = c->subject_der;

	if (!c->subject) {
		c->subject = d2i_X509_NAME(NULL, &q, c->subject_len);
		if (c->subject && q != c->subject_der + c->subject_len) {
			X509_NAME_free(c->subject);
			c->subject = NULL;
		}
		ERR_clear_error();
	}
	return c->subject;
}

void
pem_certs_free(struct pem_certs *c)
{
	for (size_t i = 0; i < c->n; i++) {
		OPENSSL_free(c->v[i].block);
		X509_NAME_free(c->v[i].subject);
	}
	free(c->v);
	c->v = NULL;
	c->n = 0;
}

/* The block NAME/HEADER/DATA (LEN bytes) as C: 1, or 0 when it is not a plain certificate. */
static int
take_block(const char *name, const char *header, unsigned char *data, long len, struct pem_cert *c)
{
	const unsigned char *subj;
	long subj_len;

	if ((strcmp(name, PEM_STRING_X509) && strcmp(name, PEM_STRING_X509_OLD)) || *header ||
	    outline(data, len, &c->len, &subj, &subj_len) < 0 || name_outline(subj, subj_len) < 0)
		return 0;
	c->subject_der = subj;
	c->subject_len = subj_len;
	c->block = data;
	c->der = data;
	return 1;
}

int
pem_certs_split(const char *text, size_t len, struct pem_certs *out)
{
	BIO *bio;
	size_t cap = 0;
	int rc = 1;

	out->v = NULL;
	out->n = 0;
	if (!text || !len)
		return 1;
	if (len > (size_t)INT_MAX)
		return 0;
	if (!(bio = BIO_new_mem_buf(text, (int)len)))
		return -1;
	ERR_set_mark();
	for (;;) {
		char *name = NULL, *header = NULL;
		unsigned char *data = NULL;
		long dlen;
		struct pem_cert c = {0};

		if (!PEM_read_bio(bio, &name, &header, &data, &dlen)) {
			/* The end of the text reads as "no start line"; anything
			 * else is a block the exact reader must see. */
			if (ERR_GET_REASON(ERR_peek_last_error()) != PEM_R_NO_START_LINE)
				rc = 0;
			break;
		}
		if (out->n == cap) {
			struct pem_cert *v = realloc(out->v, (cap ? cap * 2 : 64) * sizeof(*v));

			if (!v)
				rc = -1;
			else {
				out->v = v;
				cap = cap ? cap * 2 : 64;
			}
		}
		if (rc == 1 && !take_block(name, header, data, dlen, &c))
			rc = 0;
		OPENSSL_free(name);
		OPENSSL_free(header);
		if (rc != 1) {
			OPENSSL_free(data);
			break;
		}
		out->v[out->n++] = c;
	}
	ERR_pop_to_mark();
	BIO_free(bio);
	if (rc != 1)
		pem_certs_free(out);
	return rc;
}

/* The split last made by pem_certs_get(), while someone holds it. */
static struct pem_certs *shared;
static CRYPTO_RWLOCK *shared_lock;
static CRYPTO_ONCE shared_once = CRYPTO_ONCE_STATIC_INIT;

static void
shared_init(void)
{
	shared_lock = CRYPTO_THREAD_lock_new();
}

struct pem_certs *
pem_certs_get(const char *text, size_t len, int *rc)
{
	unsigned char md[32];
	unsigned int md_len = 0;
	struct pem_certs *c;

	*rc = -1;
	if (!CRYPTO_THREAD_run_once(&shared_once, shared_init) || !shared_lock ||
	    !EVP_Digest(text ? text : "", text ? len : 0, md, &md_len, EVP_sha256(), NULL) ||
	    md_len != sizeof(md))
		return NULL;
	if (!CRYPTO_THREAD_write_lock(shared_lock))
		return NULL;
	if (shared && !memcmp(shared->digest, md, sizeof(md))) {
		c = shared;
		c->refs++;
		CRYPTO_THREAD_unlock(shared_lock);
		*rc = 1;
		return c;
	}
	CRYPTO_THREAD_unlock(shared_lock);
	if (!(c = calloc(1, sizeof(*c))))
		return NULL;
	*rc = pem_certs_split(text, len, c);
	if (*rc != 1) {
		free(c);
		return NULL;
	}
	memcpy(c->digest, md, sizeof(md));
	c->refs = 1;
	if (CRYPTO_THREAD_write_lock(shared_lock)) {
		shared = c;
		CRYPTO_THREAD_unlock(shared_lock);
	}
	return c;
}

void
pem_certs_put(struct pem_certs *c)
{
	unsigned refs;

	if (!c || !CRYPTO_THREAD_write_lock(shared_lock))
		return;
	refs = --c->refs;
	if (!refs && shared == c)
		shared = NULL;
	CRYPTO_THREAD_unlock(shared_lock);
	if (!refs) {
		pem_certs_free(c);
		free(c);
	}
}
