/*
 * test_truststore.c - the trust the proxy starts with, read without
 * parsing every certificate (runtime/egress/pemcerts.h):
 *
 *   - the session's trust store (truststore.c) holds, byte for byte, what
 *     it held when every certificate was parsed and re-encoded: the PEM
 *     bundle, the JKS and the hashed directory, for the host's bundle and
 *     for texts the plain reader leaves to the exact one;
 *   - the upstream store (tls_client_ctx_new()) that loads a CA when
 *     verification first asks for its subject verifies exactly as a store
 *     holding every certificate from the start: the same answer and the
 *     same chain, for issuers that share a subject, impostors, expired
 *     CAs and intermediates.
 */
#include <criterion/criterion.h>

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include "compiler/decide/env.h"
#include "runtime/egress/pemcerts.h"
#include "runtime/egress/tls.h"
#include "runtime/egress/truststore.h"

#define SYSTEM_CAS "/etc/ssl/certs/ca-certificates.crt"

static const time_t now_t = 1750000000;

/* ---- certificates made here ---------------------------------------------------- */

struct cert {
	X509 *x;
	EVP_PKEY *key;
};

/* A certificate for CN (and O), signed by ISSUER (NULL: itself), a CA or not, valid from..until. */
static struct cert
make_cert(const char *cn, const char *o, const struct cert *issuer, bool ca, time_t from,
	  time_t until)
{
	struct cert c = {X509_new(), EVP_EC_gen("P-256")};
	X509_NAME *name = X509_get_subject_name(c.x);
	X509V3_CTX v3;
	X509_EXTENSION *ext;
	static long serial = 1;

	cr_assert(c.x && c.key);
	X509_set_version(c.x, 2);
	ASN1_INTEGER_set(X509_get_serialNumber(c.x), serial++);
	ASN1_TIME_set(X509_getm_notBefore(c.x), from);
	ASN1_TIME_set(X509_getm_notAfter(c.x), until);
	if (o)
		X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, (const unsigned char *)o, -1,
					   -1, 0);
	X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0);
	X509_set_issuer_name(c.x, issuer ? X509_get_subject_name(issuer->x) : name);
	X509_set_pubkey(c.x, c.key);
	X509V3_set_ctx(&v3, issuer ? issuer->x : c.x, c.x, NULL, NULL, 0);
	ext = X509V3_EXT_conf_nid(NULL, &v3, NID_basic_constraints,
				  ca ? "critical,CA:TRUE" : "critical,CA:FALSE");
	X509_add_ext(c.x, ext, -1);
	X509_EXTENSION_free(ext);
	/* Key identifiers, so that issuers sharing a subject are told apart. */
	ext = X509V3_EXT_conf_nid(NULL, &v3, NID_subject_key_identifier, "hash");
	X509_add_ext(c.x, ext, -1);
	X509_EXTENSION_free(ext);
	if (issuer) {
		ext = X509V3_EXT_conf_nid(NULL, &v3, NID_authority_key_identifier, "keyid:always");
		X509_add_ext(c.x, ext, -1);
		X509_EXTENSION_free(ext);
	}
	if (!ca) {
		ext = X509V3_EXT_conf_nid(NULL, &v3, NID_subject_alt_name, "DNS:host.test");
		X509_add_ext(c.x, ext, -1);
		X509_EXTENSION_free(ext);
	}
	cr_assert(X509_sign(c.x, issuer ? issuer->key : c.key, EVP_sha256()));
	return c;
}

static void
free_cert(struct cert *c)
{
	X509_free(c->x);
	EVP_PKEY_free(c->key);
}

/* Append C's PEM, under NAME ("CERTIFICATE", "TRUSTED CERTIFICATE", ...), to *TEXT. */
static void
append_pem(char **text, size_t *len, const struct cert *c, const char *name)
{
	BIO *bio = BIO_new(BIO_s_mem());
	unsigned char *der = NULL;
	int n = !strcmp(name, PEM_STRING_X509_TRUSTED) ? i2d_X509_AUX(c->x, &der)
						       : i2d_X509(c->x, &der);
	char *p;
	long plen;

	cr_assert(n > 0 && PEM_write_bio(bio, name, "", der, n) > 0);
	plen = BIO_get_mem_data(bio, &p);
	*text = realloc(*text, *len + (size_t)plen + 1);
	memcpy(*text + *len, p, (size_t)plen);
	*len += (size_t)plen;
	(*text)[*len] = '\0';
	OPENSSL_free(der);
	BIO_free(bio);
}

static void
append_text(char **text, size_t *len, const char *s)
{
	size_t n = strlen(s);

	*text = realloc(*text, *len + n + 1);
	memcpy(*text + *len, s, n + 1);
	*len += n;
}

static char *
slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0;

	*len = 0;
	if (!f)
		return NULL;
	for (;;) {
		size_t r;

		if (*len + 65536 + 1 > cap)
			buf = realloc(buf, cap = (cap ? cap * 2 : 65536 * 2));
		r = fread(buf + *len, 1, cap - *len - 1, f);
		*len += r;
		if (!r)
			break;
	}
	fclose(f);
	buf[*len] = '\0';
	return buf;
}

/* ---- the trust store as it was written before: every certificate parsed --------- */

struct bytes {
	unsigned char *v;
	size_t n;
};

static void
put(struct bytes *b, const void *p, size_t n)
{
	if (!n)
		return;
	b->v = realloc(b->v, b->n + n + 1);
	memcpy(b->v + b->n, p, n);
	b->n += n;
}

static void
put_u32(struct bytes *b, uint32_t x)
{
	unsigned char v[4] = {(unsigned char)(x >> 24), (unsigned char)(x >> 16),
			      (unsigned char)(x >> 8), (unsigned char)x};

	put(b, v, 4);
}

static void
put_utf(struct bytes *b, const char *s)
{
	unsigned char v[2] = {(unsigned char)(strlen(s) >> 8), (unsigned char)strlen(s)};

	put(b, v, 2);
	put(b, s, strlen(s));
}

static void
parse_all(const char *p, size_t len, STACK_OF(X509) * out)
{
	BIO *bio;
	X509 *x;

	if (!p || !len)
		return;
	bio = BIO_new_mem_buf(p, (int)len);
	while ((x = PEM_read_bio_X509(bio, NULL, NULL, NULL)))
		sk_X509_push(out, x);
	ERR_clear_error();
	BIO_free(bio);
}

static struct bytes
reference_jks(STACK_OF(X509) * certs)
{
	static const char password[] = "changeit";
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int md_len;
	struct bytes b = {0};
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();

	put_u32(&b, 0xfeedfeed);
	put_u32(&b, 2);
	put_u32(&b, (uint32_t)sk_X509_num(certs));
	for (int i = 0; i < sk_X509_num(certs); i++) {
		unsigned char *der = NULL;
		int n = i2d_X509(sk_X509_value(certs, i), &der);
		char alias[32];

		snprintf(alias, sizeof(alias), "omnibox-%d", i);
		put_u32(&b, 2);
		put_utf(&b, alias);
		put_u32(&b, 0);
		put_u32(&b, 0);
		put_utf(&b, "X.509");
		put_u32(&b, (uint32_t)n);
		put(&b, der, (size_t)n);
		OPENSSL_free(der);
	}
	EVP_DigestInit_ex(ctx, EVP_sha1(), NULL);
	for (size_t i = 0; password[i]; i++) {
		unsigned char c[2] = {0, (unsigned char)password[i]};

		EVP_DigestUpdate(ctx, c, 2);
	}
	EVP_DigestUpdate(ctx, "Mighty Aphrodite", 16);
	EVP_DigestUpdate(ctx, b.v, b.n);
	EVP_DigestFinal_ex(ctx, md, &md_len);
	EVP_MD_CTX_free(ctx);
	put(&b, md, md_len);
	return b;
}

static char tmp[] = "/tmp/omnibox-test-truststore.XXXXXX";

static int
rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void
setup(void)
{
	cr_assert_not_null(mkdtemp(tmp));
}

static void
teardown(void)
{
	nftw(tmp, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

TestSuite(truststore, .init = setup, .fini = teardown);
TestSuite(upstream_store);

static void
expect_file(const char *path, const void *want, size_t want_len)
{
	size_t len;
	char *got = slurp(path, &len);

	cr_assert_not_null(got, "%s is missing", path);
	cr_expect_eq(len, want_len, "%s: %zu bytes, expected %zu", path, len, want_len);
	cr_expect(len == want_len && !memcmp(got, want, len), "%s differs", path);
	free(got);
}

/*
 * truststore_write() of SYS, EXTRA and CA into DIR/NAME holds what the
 * parsing writer wrote: the texts joined, the JKS of every certificate
 * parsed and re-encoded, and the hashed directory of EXTRA's and CA's.
 */
static void
expect_as_before(const char *name, const char *sys, size_t sys_len, const char *extra,
		 size_t extra_len, const char *ca, size_t ca_len)
{
	char dir[256], path[512], err[512];
	STACK_OF(X509) *all = sk_X509_new_null(), *own = sk_X509_new_null();
	struct bytes pem = {0}, jks;
	int n_files = 0;
	DIR *d;
	struct dirent *e;

	snprintf(dir, sizeof(dir), "%s/%s", tmp, name);
	cr_assert_eq(mkdir(dir, 0700), 0);
	snprintf(path, sizeof(path), "%s/%s", dir, ENV_CA_BUNDLE);
	cr_assert_eq(
	    truststore_write(path, sys, sys_len, extra, extra_len, ca, ca_len, err, sizeof(err)), 0,
	    "%s", err);
	parse_all(sys, sys_len, all);
	parse_all(extra, extra_len, all);
	parse_all(ca, ca_len, all);
	parse_all(extra, extra_len, own);
	parse_all(ca, ca_len, own);
	put(&pem, sys, sys_len);
	if (sys_len && sys[sys_len - 1] != '\n')
		put(&pem, "\n", 1);
	if (extra)
		put(&pem, extra, extra_len);
	if (extra && extra_len && extra[extra_len - 1] != '\n')
		put(&pem, "\n", 1);
	put(&pem, ca, ca_len);
	expect_file(path, pem.v, pem.n);
	jks = reference_jks(all);
	snprintf(path, sizeof(path), "%s/%s", dir, ENV_CA_TRUSTSTORE);
	expect_file(path, jks.v, jks.n);
	for (int i = 0; i < sk_X509_num(own); i++) {
		X509 *x = sk_X509_value(own, i);
		BIO *bio = BIO_new(BIO_s_mem());
		char *p;
		long plen;
		int k = 0;

		PEM_write_bio_X509(bio, x);
		plen = BIO_get_mem_data(bio, &p);
		/* The same subject twice: the first file .0 is the first written. */
		for (int j = 0; j < i; j++)
			k += X509_subject_name_hash(sk_X509_value(own, j)) ==
			     X509_subject_name_hash(x);
		snprintf(path, sizeof(path), "%s/%08lx.%d", dir, X509_subject_name_hash(x), k);
		expect_file(path, p, (size_t)plen);
		BIO_free(bio);
	}
	/* Beside the bundle and the JKS, the hashed files alone: HASH.N. */
	cr_assert_not_null(d = opendir(dir));
	while ((e = readdir(d)))
		n_files += e->d_name[0] != '.' && strcmp(e->d_name, ENV_CA_BUNDLE) &&
			   strcmp(e->d_name, ENV_CA_TRUSTSTORE);
	closedir(d);
	cr_expect_eq(n_files, sk_X509_num(own), "the hashed directory holds %d files, not %d",
		     n_files, sk_X509_num(own));
	sk_X509_pop_free(all, X509_free);
	sk_X509_pop_free(own, X509_free);
	free(pem.v);
	free(jks.v);
}

Test(truststore, the_host_bundle_extra_cas_and_the_session_ca_as_before)
{
	struct cert a = make_cert("extra A", "test", NULL, true, now_t, now_t + 86400);
	struct cert b = make_cert("extra B", NULL, NULL, true, now_t, now_t + 86400);
	char *sys, *extra = NULL;
	size_t sys_len, extra_len = 0, ca_len;
	char err[256];
	struct tls_ca *ca = tls_ca_new(now_t, err, sizeof(err));
	const char *ca_pem = tls_ca_pem(ca, &ca_len);

	sys = slurp(SYSTEM_CAS, &sys_len);
	if (!sys) {
		/* No host bundle here: one made of certificates like it. */
		for (int i = 0; i < 40; i++) {
			char cn[32];
			struct cert c;

			snprintf(cn, sizeof(cn), "root %d", i);
			c = make_cert(cn, "roots", NULL, true, now_t, now_t + 86400);
			append_pem(&sys, &sys_len, &c, PEM_STRING_X509);
			free_cert(&c);
		}
	}
	append_pem(&extra, &extra_len, &a, PEM_STRING_X509);
	append_pem(&extra, &extra_len, &b, PEM_STRING_X509);
	expect_as_before("host", sys, sys_len, extra, extra_len, ca_pem, ca_len);
	expect_as_before("no-extra", sys, sys_len, NULL, 0, ca_pem, ca_len);
	expect_as_before("no-system", NULL, 0, extra, extra_len, ca_pem, ca_len);
	free(sys);
	free(extra);
	tls_ca_free(ca);
	free_cert(&a);
	free_cert(&b);
}

Test(truststore, texts_the_plain_reader_leaves_to_the_exact_one_as_before)
{
	struct cert a = make_cert("odd A", NULL, NULL, true, now_t, now_t + 86400);
	struct cert b = make_cert("odd B", NULL, NULL, true, now_t, now_t + 86400);
	struct cert c = make_cert("odd A", NULL, NULL, true, now_t, now_t + 86400);
	char *t[6] = {NULL};
	size_t n[6] = {0}, ca_len;
	char err[256], name[16];
	struct tls_ca *ca = tls_ca_new(now_t, err, sizeof(err));
	const char *ca_pem = tls_ca_pem(ca, &ca_len);

	/* Comments between blocks, the old block name, no final newline. */
	append_text(&t[0], &n[0], "# a comment\n");
	append_pem(&t[0], &n[0], &a, PEM_STRING_X509_OLD);
	append_text(&t[0], &n[0], "another line\n");
	append_pem(&t[0], &n[0], &b, PEM_STRING_X509);
	n[0]--;
	/* A trusted certificate (skipped by the certificate reader). */
	append_pem(&t[1], &n[1], &a, PEM_STRING_X509_TRUSTED);
	append_pem(&t[1], &n[1], &b, PEM_STRING_X509);
	/* A block of another kind. */
	append_text(&t[2], &n[2], "-----BEGIN X509 CRL-----\nMAA=\n-----END X509 CRL-----\n");
	append_pem(&t[2], &n[2], &b, PEM_STRING_X509);
	/* A certificate that does not decode: the reader stops there. */
	append_pem(&t[3], &n[3], &a, PEM_STRING_X509);
	append_text(&t[3], &n[3],
		    "-----BEGIN CERTIFICATE-----\nMAMCAQA=\n-----END CERTIFICATE-----\n");
	append_pem(&t[3], &n[3], &b, PEM_STRING_X509);
	/* Two CAs with one subject (the hashed directory's .0 and .1). */
	append_pem(&t[4], &n[4], &a, PEM_STRING_X509);
	append_pem(&t[4], &n[4], &c, PEM_STRING_X509);
	/* Carriage returns. */
	append_pem(&t[5], &n[5], &b, PEM_STRING_X509);
	for (size_t i = 0; i < n[5]; i++)
		if (t[5][i] == '\n') {
			t[5] = realloc(t[5], ++n[5] + 1);
			memmove(t[5] + i + 1, t[5] + i, n[5] - i);
			t[5][i++] = '\r';
		}
	for (int i = 0; i < 6; i++) {
		snprintf(name, sizeof(name), "sys-%d", i);
		expect_as_before(name, t[i], n[i], NULL, 0, ca_pem, ca_len);
		snprintf(name, sizeof(name), "extra-%d", i);
		expect_as_before(name, t[0], n[0], t[i], n[i], ca_pem, ca_len);
	}
	for (int i = 0; i < 6; i++)
		free(t[i]);
	tls_ca_free(ca);
	free_cert(&a);
	free_cert(&b);
	free_cert(&c);
}

Test(truststore, the_plain_reader_takes_only_certificates)
{
	struct cert a = make_cert("plain", NULL, NULL, true, now_t, now_t + 86400);
	struct pem_certs c;
	char *t = NULL;
	size_t n = 0;

	cr_expect_eq(pem_certs_split(NULL, 0, &c), 1);
	cr_expect_eq(c.n, 0);
	cr_expect_eq(pem_certs_split("not a certificate\n", 18, &c), 1);
	cr_expect_eq(c.n, 0);
	append_pem(&t, &n, &a, PEM_STRING_X509);
	cr_assert_eq(pem_certs_split(t, n, &c), 1);
	cr_assert_eq(c.n, 1);
	cr_expect_null(c.v[0].subject); /* decoded only when asked for */
	cr_expect_eq(X509_NAME_cmp(pem_cert_subject(&c.v[0]), X509_get_subject_name(a.x)), 0);
	pem_certs_free(&c);
	append_pem(&t, &n, &a, PEM_STRING_X509_TRUSTED);
	cr_expect_eq(pem_certs_split(t, n, &c), 0);
	cr_expect_eq(c.n, 0);
	free(t);
	t = NULL;
	n = 0;
	append_text(&t, &n, "-----BEGIN CERTIFICATE-----\nMAMCAQA=\n-----END CERTIFICATE-----\n");
	cr_expect_eq(pem_certs_split(t, n, &c), 0);
	free(t);
	t = NULL;
	n = 0;
	append_text(&t, &n, "-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n");
	cr_expect_eq(pem_certs_split(t, n, &c), 0);
	free(t);
	free_cert(&a);
}

/* TEXT's blocks as OpenSSL's PEM reader gives them: *N data blocks, their bytes concatenated. */
static unsigned char *
openssl_blocks(const char *text, size_t len, size_t *n, size_t *total)
{
	BIO *bio = BIO_new_mem_buf(text, (int)len);
	unsigned char *all = NULL;
	char *name, *header;
	unsigned char *data;
	long dlen;

	*n = *total = 0;
	while (PEM_read_bio(bio, &name, &header, &data, &dlen)) {
		all = realloc(all, *total + (size_t)dlen + 1);
		memcpy(all + *total, data, (size_t)dlen);
		*total += (size_t)dlen;
		(*n)++;
		OPENSSL_free(name);
		OPENSSL_free(header);
		OPENSSL_free(data);
	}
	ERR_clear_error();
	BIO_free(bio);
	return all;
}

/* The split of TEXT: every certificate's bytes as OpenSSL's reader gives them. */
static void
expect_openssls_bytes(const char *what, const char *text, size_t len)
{
	struct pem_certs c;
	size_t n, total, off = 0;
	unsigned char *want = openssl_blocks(text, len, &n, &total);

	cr_assert_eq(pem_certs_split(text, len, &c), 1, "%s: not split", what);
	cr_expect_eq(c.n, n, "%s: %zu certificates, OpenSSL reads %zu", what, c.n, n);
	for (size_t i = 0; i < c.n && off <= total; i++) {
		cr_expect(off + c.v[i].len <= total && !memcmp(c.v[i].der, want + off, c.v[i].len),
			  "%s: certificate %zu differs from OpenSSL's", what, i);
		off += c.v[i].len;
	}
	cr_expect_eq(off, total, "%s", what);
	pem_certs_free(&c);
	free(want);
}

/* TEXT with every "\n" made "\r\n". */
static char *
crlf(const char *text, size_t len, size_t *out_len)
{
	char *o = malloc(len * 2 + 1);
	size_t k = 0;

	for (size_t i = 0; i < len; i++) {
		if (text[i] == '\n')
			o[k++] = '\r';
		o[k++] = text[i];
	}
	*out_len = k;
	return o;
}

/* PREFIX, then C in PEM: a new text, *N bytes. */
static char *
prefixed(const char *prefix, const struct cert *c, size_t *n)
{
	char *t = NULL;

	*n = 0;
	append_text(&t, n, prefix);
	append_pem(&t, n, c, PEM_STRING_X509);
	return t;
}

Test(truststore, the_plain_reader_gives_the_bytes_openssls_reader_gives)
{
	struct cert a = make_cert("quick a", NULL, NULL, true, now_t, now_t + 86400);
	struct cert b = make_cert("quick b", "O", NULL, true, now_t, now_t + 86400);
	struct pem_certs c0;
	char *t = NULL, *host = NULL, *w, line[255];
	size_t n = 0, host_len = 0, wl;
	FILE *f = fopen(SYSTEM_CAS, "r");

	/* Text between blocks, both labels, one block at the very end without its newline. */
	append_text(&t, &n, "# a comment, skipped\n");
	append_pem(&t, &n, &a, PEM_STRING_X509);
	append_text(&t, &n, "junk between\n-----END OF NOTHING-----\n\n");
	append_pem(&t, &n, &b, PEM_STRING_X509_OLD);
	append_pem(&t, &n, &a, PEM_STRING_X509);
	expect_openssls_bytes("two labels, text between", t, n);
	expect_openssls_bytes("no last newline", t, n - 1);
	w = crlf(t, n, &wl);
	expect_openssls_bytes("CRLF lines", w, wl);
	free(w);
	free(t);
	/* What OpenSSL's reader reads its own way: the plain reader leaves it. */
	t = prefixed("\xef\xbb\xbf", &a, &n);
	expect_openssls_bytes("a UTF-8 BOM before the first block", t, n);
	free(t);
	memset(line, 'x', 254);
	line[254] = '\0';
	t = prefixed(line, &a, &n);
	expect_openssls_bytes("a block after 254 bytes on its line", t, n);
	free(t);
	t = prefixed("", &a, &n);
	t = realloc(t, n + 2);
	/* A blank line after the first base64 line: that line a header, to OpenSSL. */
	w = strchr(strchr(t, '\n') + 1, '\n') + 1;
	memmove(w + 1, w, n - (size_t)(w - t) + 1);
	*w = '\n';
	n++;
	cr_expect_eq(pem_certs_split(t, n, &c0), 0, "a blank line in a block was taken as plain");
	if (f) {
		char buf[65536];
		size_t r;

		while ((r = fread(buf, 1, sizeof(buf), f)) > 0) {
			host = realloc(host, host_len + r);
			memcpy(host + host_len, buf, r);
			host_len += r;
		}
		fclose(f);
		expect_openssls_bytes(SYSTEM_CAS, host, host_len);
	}
	free(host);
	free(t);
	free_cert(&a);
	free_cert(&b);
}

/* ---- the upstream store ----------------------------------------------------------- */

/* A store holding every certificate of TEXT from the start (how the proxy loaded it before). */
static X509_STORE *
eager_store(const char *text, size_t len)
{
	X509_STORE *s = X509_STORE_new();
	BIO *bio = BIO_new_mem_buf(text, (int)len);
	STACK_OF(X509_INFO) *infos = PEM_X509_INFO_read_bio(bio, NULL, NULL, NULL);

	cr_assert_not_null(infos);
	for (int i = 0; i < sk_X509_INFO_num(infos); i++)
		if (sk_X509_INFO_value(infos, i)->x509)
			X509_STORE_add_cert(s, sk_X509_INFO_value(infos, i)->x509);
	sk_X509_INFO_pop_free(infos, X509_INFO_free);
	BIO_free(bio);
	return s;
}

/* Verify LEAF (with UNTRUSTED) against STORE for host.test at AT: the error and the chain's
 * subjects. */
static int
verify_in(X509_STORE *store, X509 *leaf, STACK_OF(X509) * untrusted, time_t at, char *chain,
	  size_t chain_len)
{
	X509_STORE_CTX *ctx = X509_STORE_CTX_new();
	X509_VERIFY_PARAM *param;
	STACK_OF(X509) * got;
	int rc;

	X509_STORE_CTX_init(ctx, store, leaf, untrusted);
	param = X509_STORE_CTX_get0_param(ctx);
	X509_VERIFY_PARAM_set_time(param, at);
	X509_VERIFY_PARAM_set_purpose(param, X509_PURPOSE_SSL_SERVER);
	X509_VERIFY_PARAM_set1_host(param, "host.test", 0);
	rc = X509_verify_cert(ctx) == 1 ? 0 : X509_STORE_CTX_get_error(ctx);
	chain[0] = '\0';
	got = X509_STORE_CTX_get0_chain(ctx);
	for (int i = 0; got && i < sk_X509_num(got); i++) {
		unsigned char *der = NULL;
		int n = i2d_X509(sk_X509_value(got, i), &der);
		unsigned char md[32];

		EVP_Digest(der, (size_t)n, md, NULL, EVP_sha256(), NULL);
		snprintf(chain + strlen(chain), chain_len - strlen(chain), "%02x%02x%02x%02x ",
			 md[0], md[1], md[2], md[3]);
		OPENSSL_free(der);
	}
	X509_STORE_CTX_free(ctx);
	ERR_clear_error();
	return rc;
}

Test(upstream_store, verifies_as_a_store_holding_every_certificate)
{
	/* Two CAs with one subject, an expired one and a live one with
	 * another, one outside the bundle named like a bundle CA. */
	struct cert one1 =
	    make_cert("Shared Root", "one", NULL, true, now_t - 86400, now_t + 86400);
	struct cert one2 =
	    make_cert("Shared Root", "one", NULL, true, now_t - 86400, now_t + 86400);
	struct cert old =
	    make_cert("Rolled Root", NULL, NULL, true, now_t - 3 * 86400, now_t - 86400);
	struct cert cur = make_cert("Rolled Root", NULL, NULL, true, now_t - 86400, now_t + 86400);
	struct cert impostor =
	    make_cert("Shared Root", "one", NULL, true, now_t - 86400, now_t + 86400);
	struct cert mid =
	    make_cert("Intermediate", NULL, &one2, true, now_t - 86400, now_t + 86400);
	struct cert leaves[] = {
	    make_cert("a", NULL, &one1, false, now_t - 60, now_t + 86400),
	    make_cert("b", NULL, &one2, false, now_t - 60, now_t + 86400),
	    make_cert("c", NULL, &cur, false, now_t - 60, now_t + 86400),
	    make_cert("d", NULL, &old, false, now_t - 60, now_t + 86400),
	    make_cert("e", NULL, &impostor, false, now_t - 60, now_t + 86400),
	    make_cert("f", NULL, &mid, false, now_t - 60, now_t + 86400),
	    make_cert("g", NULL, NULL, false, now_t - 60, now_t + 86400),
	};
	/* What a server sends along: the intermediate, and roots too (one
	 * the bundle holds, and the impostor that shares its subject). */
	STACK_OF(X509) *with_mid = sk_X509_new_null(), *with_roots = sk_X509_new_null();
	STACK_OF(X509) * sent[] = {NULL, with_mid, with_roots};
	size_t sys_len = 0, len = 0;
	char *sys = slurp(SYSTEM_CAS, &sys_len), *text = NULL, err[512];

	if (sys)
		append_text(&text, &len, sys);
	append_pem(&text, &len, &one1, PEM_STRING_X509);
	append_pem(&text, &len, &old, PEM_STRING_X509);
	append_pem(&text, &len, &cur, PEM_STRING_X509);
	append_pem(&text, &len, &one2, PEM_STRING_X509);
	sk_X509_push(with_mid, mid.x);
	sk_X509_push(with_roots, mid.x);
	sk_X509_push(with_roots, impostor.x);
	sk_X509_push(with_roots, one2.x);
	for (int lazy_first = 0; lazy_first < 2; lazy_first++) {
		SSL_CTX *ctx = tls_client_ctx_new(text, len, err, sizeof(err));
		X509_STORE *eager = eager_store(text, len);

		cr_assert_not_null(ctx, "%s", err);
		for (size_t i = 0; i < sizeof(leaves) / sizeof(leaves[0]); i++)
			for (int m = 0; m < 3; m++) {
				char c1[256], c2[256];
				int r1, r2;

				/* Asked in either order, the lazy store answers the same. */
				if (lazy_first) {
					r1 = verify_in(SSL_CTX_get_cert_store(ctx), leaves[i].x,
						       sent[m], now_t, c1, sizeof(c1));
					r2 = verify_in(eager, leaves[i].x, sent[m], now_t, c2,
						       sizeof(c2));
				} else {
					r2 = verify_in(eager, leaves[i].x, sent[m], now_t, c2,
						       sizeof(c2));
					r1 = verify_in(SSL_CTX_get_cert_store(ctx), leaves[i].x,
						       sent[m], now_t, c1, sizeof(c1));
				}
				cr_expect_eq(r1, r2, "leaf %zu%s: %s here, %s with every CA loaded",
					     i, m ? " with what a server sends" : "",
					     X509_verify_cert_error_string(r1),
					     X509_verify_cert_error_string(r2));
				cr_expect_str_eq(c1, c2, "leaf %zu%s: another chain", i,
						 m ? " with what a server sends" : "");
			}
		/* What the cases mean: a and b (one subject, two keys) verify, c
		 * through the live CA, f through the intermediate; the impostor's
		 * leaf, the expired CA's and the self-signed one do not. */
		{
			char c[256];

			cr_expect_eq(verify_in(SSL_CTX_get_cert_store(ctx), leaves[0].x, NULL,
					       now_t, c, sizeof(c)),
				     0);
			cr_expect_eq(verify_in(SSL_CTX_get_cert_store(ctx), leaves[1].x, NULL,
					       now_t, c, sizeof(c)),
				     0);
			cr_expect_eq(verify_in(SSL_CTX_get_cert_store(ctx), leaves[2].x, NULL,
					       now_t, c, sizeof(c)),
				     0);
			cr_expect_neq(verify_in(SSL_CTX_get_cert_store(ctx), leaves[3].x, NULL,
						now_t, c, sizeof(c)),
				      0);
			cr_expect_neq(verify_in(SSL_CTX_get_cert_store(ctx), leaves[4].x, NULL,
						now_t, c, sizeof(c)),
				      0);
			cr_expect_neq(verify_in(SSL_CTX_get_cert_store(ctx), leaves[4].x,
						with_roots, now_t, c, sizeof(c)),
				      0);
			cr_expect_eq(verify_in(SSL_CTX_get_cert_store(ctx), leaves[5].x, with_mid,
					       now_t, c, sizeof(c)),
				     0);
			cr_expect_neq(verify_in(SSL_CTX_get_cert_store(ctx), leaves[6].x, NULL,
						now_t, c, sizeof(c)),
				      0);
		}
		SSL_CTX_free(ctx);
		X509_STORE_free(eager);
	}
	sk_X509_free(with_mid);
	sk_X509_free(with_roots);
	for (size_t i = 0; i < sizeof(leaves) / sizeof(leaves[0]); i++)
		free_cert(&leaves[i]);
	free_cert(&one1);
	free_cert(&one2);
	free_cert(&old);
	free_cert(&cur);
	free_cert(&impostor);
	free_cert(&mid);
	free(sys);
	free(text);
}

Test(upstream_store, other_texts_are_read_whole_as_before)
{
	struct cert root =
	    make_cert("Trusted Root", NULL, NULL, true, now_t - 86400, now_t + 86400);
	struct cert leaf = make_cert("t", NULL, &root, false, now_t - 60, now_t + 86400);
	char *text = NULL, err[512], c[256];
	size_t len = 0;
	SSL_CTX *ctx;

	/* A trusted certificate: read whole, and trusted as before. */
	append_pem(&text, &len, &root, PEM_STRING_X509_TRUSTED);
	ctx = tls_client_ctx_new(text, len, err, sizeof(err));
	cr_assert_not_null(ctx, "%s", err);
	cr_expect_eq(verify_in(SSL_CTX_get_cert_store(ctx), leaf.x, NULL, now_t, c, sizeof(c)), 0);
	SSL_CTX_free(ctx);
	/* A block that does not decode fails the context, as it did. */
	append_text(&text, &len,
		    "-----BEGIN CERTIFICATE-----\nMAMCAQA=\n-----END CERTIFICATE-----\n");
	cr_expect_null(tls_client_ctx_new(text, len, err, sizeof(err)));
	cr_expect(strstr(err, "cannot make the upstream TLS context") != NULL, "%s", err);
	/* No certificate at all. */
	cr_expect_null(tls_client_ctx_new("# nothing\n", 10, err, sizeof(err)));
	cr_expect_str_eq(err, "the system CA file holds no certificate");
	free(text);
	free_cert(&root);
	free_cert(&leaf);
}

Test(upstream_store, the_trust_store_writer_shares_the_split_bundle)
{
	struct cert root = make_cert("Shared Split", NULL, NULL, true, now_t, now_t + 86400);
	char *text = NULL, err[256];
	size_t len = 0;
	int rc;
	SSL_CTX *ctx;
	struct pem_certs *a, *b;

	append_pem(&text, &len, &root, PEM_STRING_X509);
	ctx = tls_client_ctx_new(text, len, err, sizeof(err));
	cr_assert_not_null(ctx, "%s", err);
	a = pem_certs_get(text, len, &rc);
	cr_assert_eq(rc, 1);
	cr_expect_eq(a->refs, 2, "the store's split is not the one shared");
	b = pem_certs_get(text, len - 1, &rc); /* other bytes: another split */
	cr_assert_eq(rc, 1);
	cr_expect_neq(a, b);
	pem_certs_put(b);
	/* Another text split and let go meanwhile (the proxy's CA, written
	 * into the trust store) does not push the held one out. */
	b = pem_certs_get(text, len, &rc);
	cr_expect_eq(b, a, "the held split was not found again");
	pem_certs_put(b);
	pem_certs_put(a);
	SSL_CTX_free(ctx);
	free(text);
	free_cert(&root);
}
