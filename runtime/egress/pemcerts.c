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

/* Room for one more certificate in OUT (*CAP of them): 0, or -1. */
static int
grow(struct pem_certs *out, size_t *cap)
{
	struct pem_cert *v;

	if (out->n < *cap)
		return 0;
	v = realloc(out->v, (*cap ? *cap * 2 : 64) * sizeof(*v));
	if (!v)
		return -1;
	out->v = v;
	*cap = *cap ? *cap * 2 : 64;
	return 0;
}

/* ---- the plain case, read without OpenSSL's line reader ---------------------------- */

/* Each base64 digit's value plus one; 0 for any other byte. */
#define B64(c, v) [c] = (v) + 1
static const unsigned char b64_value[256] = {
    B64('A', 0),  B64('B', 1),	B64('C', 2),  B64('D', 3),  B64('E', 4),  B64('F', 5),
    B64('G', 6),  B64('H', 7),	B64('I', 8),  B64('J', 9),  B64('K', 10), B64('L', 11),
    B64('M', 12), B64('N', 13), B64('O', 14), B64('P', 15), B64('Q', 16), B64('R', 17),
    B64('S', 18), B64('T', 19), B64('U', 20), B64('V', 21), B64('W', 22), B64('X', 23),
    B64('Y', 24), B64('Z', 25), B64('a', 26), B64('b', 27), B64('c', 28), B64('d', 29),
    B64('e', 30), B64('f', 31), B64('g', 32), B64('h', 33), B64('i', 34), B64('j', 35),
    B64('k', 36), B64('l', 37), B64('m', 38), B64('n', 39), B64('o', 40), B64('p', 41),
    B64('q', 42), B64('r', 43), B64('s', 44), B64('t', 45), B64('u', 46), B64('v', 47),
    B64('w', 48), B64('x', 49), B64('y', 50), B64('z', 51), B64('0', 52), B64('1', 53),
    B64('2', 54), B64('3', 55), B64('4', 56), B64('5', 57), B64('6', 58), B64('7', 59),
    B64('8', 60), B64('9', 61), B64('+', 62), B64('/', 63),
};
#undef B64

/* The line of TEXT (END its end) at *P: its bytes up to "\n" or "\r\n" in *LEN; *P past it. */
static const char *
line_at(const char **p, const char *end, size_t *len)
{
	const char *start = *p, *nl = memchr(start, '\n', (size_t)(end - start));

	*p = nl ? nl + 1 : end;
	*len = (size_t)((nl ? nl : end) - start);
	if (*len && start[*len - 1] == '\r')
		(*len)--;
	return start;
}

/* Is the line L (LEN bytes) "-----WHAT LABEL-----", LABEL one of a certificate's? */
static const char *
cert_label(const char *l, size_t len, const char *what)
{
	static const char *const labels[] = {PEM_STRING_X509, PEM_STRING_X509_OLD};
	size_t w = strlen(what);

	for (size_t i = 0; i < 2; i++) {
		size_t n = strlen(labels[i]);

		if (len == 5 + w + 1 + n + 5 && !memcmp(l, "-----", 5) && !memcmp(l + 5, what, w) &&
		    l[5 + w] == ' ' && !memcmp(l + 6 + w, labels[i], n) && !memcmp(l + len - 5, "-----", 5))
			return labels[i];
	}
	return NULL;
}

/*
 * The base64 lines from *P up to the END line of LABEL, decoded into
 * *DATA (OPENSSL_malloc), *DLEN bytes; *P past the END line.  1; 0 when
 * they are anything else (a header, a byte outside base64, padding before
 * the end, no END line); -1 out of memory.
 */
static int
decode_body(const char **p, const char *end, const char *label, unsigned char **data, long *dlen)
{
	const char *q = *p, *l, *stop = memmem(q, (size_t)(end - q), "\n-----", 6);
	size_t len, digits = 0, pad = 0, k = 0;
	unsigned long acc = 0;
	unsigned char *out, *o;

	/* At most the bytes up to the next dashed line's, decoded; one pass
	 * over the lines checks their shape and decodes them. */
	if (!stop)
		return 0;
	if (!(out = OPENSSL_malloc((size_t)(stop - q) / 4 * 3 + 3)))
		return -1;
	o = out;
	for (;;) {
		if (q == end)
			goto refuse;
		l = line_at(&q, end, &len);
		if (len >= 5 && !memcmp(l, "-----", 5))
			break;
		/* The reader takes the lines before a blank one for headers. */
		if (!len || l + len > stop)
			goto refuse;
		size_t i = 0;

		/* The usual line: groups of four digits, each decoded whole. */
		for (; !pad && !k && i + 4 <= len; i += 4) {
			unsigned long a = b64_value[(unsigned char)l[i]],
				      b = b64_value[(unsigned char)l[i + 1]],
				      c = b64_value[(unsigned char)l[i + 2]],
				      d = b64_value[(unsigned char)l[i + 3]];

			if (!a || !b || !c || !d)
				break;
			acc = (a - 1) << 18 | (b - 1) << 12 | (c - 1) << 6 | (d - 1);
			o[0] = (unsigned char)(acc >> 16);
			o[1] = (unsigned char)(acc >> 8);
			o[2] = (unsigned char)acc;
			o += 3;
			digits += 4;
		}
		for (; i < len; i++) {
			unsigned char v = b64_value[(unsigned char)l[i]];

			if (v && !pad) {
				digits++;
				acc = acc << 6 | (unsigned long)(v - 1);
				if (++k == 4) {
					o[0] = (unsigned char)(acc >> 16);
					o[1] = (unsigned char)(acc >> 8);
					o[2] = (unsigned char)acc;
					o += 3;
					k = 0;
				}
			} else if (l[i] == '=' && digits + pad >= 2) {
				pad++;
			} else {
				goto refuse;
			}
		}
	}
	if (cert_label(l, len, "END") != label || (digits + pad) % 4 || pad > 2)
		goto refuse;
	if (k == 2)
		*o++ = (unsigned char)(acc >> 4);
	else if (k == 3) {
		*o++ = (unsigned char)(acc >> 10);
		*o++ = (unsigned char)(acc >> 2);
	}
	*dlen = (long)(o - out);
	*data = out;
	*p = q;
	return 1;
refuse:
	OPENSSL_free(out);
	return 0;
}

/*
 * TEXT's certificates the way OpenSSL's PEM reader gives them, in the
 * plainest case alone: BEGIN and END lines of a certificate, base64 lines
 * between (each line ending in "\n" or "\r\n"), whatever else skipped
 * between blocks as the reader skips it.  1 with OUT filled; 0 for a text
 * with anything else (the reader decides then); -1 out of memory.
 */
static int
quick_split(const char *text, size_t len, struct pem_certs *out)
{
	const char *p = text, *end = text + len;
	size_t cap = 0;
	int rc = memchr(text, '\0', len) ? 0 : 1;

	while (p < end && rc == 1) {
		size_t llen;
		const char *l = line_at(&p, end, &llen), *label;
		unsigned char *data = NULL;
		long dlen = 0;
		struct pem_cert c = {0};

		if (llen < 11 || memcmp(l, "-----BEGIN ", 11)) {
			/* OpenSSL's reader takes a line in pieces of 254 bytes (a
			 * piece may begin a block) and drops a UTF-8 BOM: such
			 * lines are its to read. */
			if (llen >= 254 || (llen >= 3 && !memcmp(l, "\xef\xbb\xbf", 3)) ||
			    memmem(l, llen, "-----BEGIN", 10))
				rc = 0;
			continue;
		}
		label = cert_label(l, llen, "BEGIN");
		rc = label ? decode_body(&p, end, label, &data, &dlen) : 0;
		if (rc == 1 && grow(out, &cap) < 0)
			rc = -1;
		if (rc == 1 && !take_block(label, "", data, dlen, &c))
			rc = 0;
		if (rc != 1)
			OPENSSL_free(data);
		else
			out->v[out->n++] = c;
	}
	if (rc != 1)
		pem_certs_free(out);
	return rc;
}

/* The same, by OpenSSL's own PEM reader: the text quick_split() leaves. */
static int
exact_split(const char *text, size_t len, struct pem_certs *out)
{
	BIO *bio;
	size_t cap = 0;
	int rc = 1;

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
		if (grow(out, &cap) < 0)
			rc = -1;
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

int
pem_certs_split(const char *text, size_t len, struct pem_certs *out)
{
	int rc;

	out->v = NULL;
	out->n = 0;
	if (!text || !len)
		return 1;
	rc = quick_split(text, len, out);
	return rc == 0 ? exact_split(text, len, out) : rc;
}

/* The first split pem_certs_get() made that someone still holds. */
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
	struct pem_certs *c;

	*rc = -1;
	if (!text)
		len = 0;
	if (!CRYPTO_THREAD_run_once(&shared_once, shared_init) || !shared_lock ||
	    !CRYPTO_THREAD_write_lock(shared_lock))
		return NULL;
	/* The same bytes: compared whole, which costs less than a digest of them. */
	if (shared && shared->text_len == len && (!len || !memcmp(shared->text, text, len))) {
		c = shared;
		c->refs++;
		CRYPTO_THREAD_unlock(shared_lock);
		*rc = 1;
		return c;
	}
	CRYPTO_THREAD_unlock(shared_lock);
	if (!(c = calloc(1, sizeof(*c))) || !(c->text = malloc(len ? len : 1))) {
		free(c);
		return NULL;
	}
	if (len)
		memcpy(c->text, text, len);
	c->text_len = len;
	*rc = pem_certs_split(text, len, c);
	if (*rc != 1) {
		free(c->text);
		free(c);
		return NULL;
	}
	c->refs = 1;
	/* The first one held stays the one found: the system's bundle, held by
	 * the proxy, is not pushed out by the small texts split meanwhile. */
	if (CRYPTO_THREAD_write_lock(shared_lock)) {
		if (!shared)
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
		free(c->text);
		free(c);
	}
}
