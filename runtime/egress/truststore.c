/*
 * truststore.c - the session's trust in PEM, JKS and hashed-directory form
 * (truststore.h).
 */
#include "runtime/egress/truststore.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "compiler/decide/env.h"
#include "runtime/egress/pemcerts.h"

/*
 * A file's bytes as the pieces they lie in (writev(2)): the texts and the
 * certificates' DER where they are, and the few bytes made here (a JKS's
 * headers, its digest) in one block sized up front, never moved, so a
 * trust store of 200 KiB is written without being copied together first.
 */
struct pieces {
	struct iovec *v;
	size_t n, cap;
	unsigned char *own; /* the bytes made here */
	size_t own_n, own_cap;
	bool failed;
};

/* P with room for N_PIECES pieces and OWN bytes of its own. */
static int
pieces_init(struct pieces *p, size_t n_pieces, size_t own)
{
	*p = (struct pieces){0};
	p->v = malloc((n_pieces ? n_pieces : 1) * sizeof(*p->v));
	p->own = malloc(own ? own : 1);
	p->cap = n_pieces;
	p->own_cap = own;
	p->failed = !p->v || !p->own;
	return p->failed ? -1 : 0;
}

static void
pieces_free(struct pieces *p)
{
	free(p->v);
	free(p->own);
}

/* N bytes at D, where they lie: they must outlive P's writing. */
static void
lend(struct pieces *p, const void *d, size_t n)
{
	if (p->failed || !n)
		return;
	if (p->n == p->cap) {
		p->failed = true;
		return;
	}
	p->v[p->n++] = (struct iovec){(void *)d, n};
}

/* N bytes at D, copied into P's own block. */
static void
put(struct pieces *p, const void *d, size_t n)
{
	unsigned char *at = p->own + p->own_n;
	struct iovec *last = p->n ? &p->v[p->n - 1] : NULL;

	if (p->failed || !n)
		return;
	if (p->own_cap - p->own_n < n) {
		p->failed = true;
		return;
	}
	memcpy(at, d, n);
	p->own_n += n;
	/* Right after the bytes of the last piece: that piece, longer. */
	if (last && (unsigned char *)last->iov_base + last->iov_len == at)
		last->iov_len += n;
	else
		lend(p, at, n);
}

static void
put_u32(struct pieces *p, uint32_t x)
{
	unsigned char v[4] = {(unsigned char)(x >> 24), (unsigned char)(x >> 16),
			      (unsigned char)(x >> 8), (unsigned char)x};

	put(p, v, 4);
}

/* Java's DataOutput.writeUTF, for ASCII text. */
static void
put_utf(struct pieces *p, const char *s)
{
	size_t n = strlen(s);
	unsigned char v[2] = {(unsigned char)(n >> 8), (unsigned char)n};

	put(p, v, 2);
	put(p, s, n);
}

/* Every certificate of the PEM text P (LEN bytes), parsed, appended to *OUT. */
static int
read_certs(const char *p, size_t len, STACK_OF(X509) * out)
{
	BIO *bio;
	X509 *x;

	if (!p || !len)
		return 0;
	if (!(bio = BIO_new_mem_buf(p, (int)len)))
		return -1;
	while ((x = PEM_read_bio_X509(bio, NULL, NULL, NULL)))
		if (!sk_X509_push(out, x)) {
			X509_free(x);
			BIO_free(bio);
			return -1;
		}
	ERR_clear_error(); /* the end of the text reads as an error */
	BIO_free(bio);
	return 0;
}

/* A certificate of the trust store: its DER and its subject. */
struct entry {
	const unsigned char *der;
	size_t len;
	const X509_NAME *subject;
	unsigned char *owned; /* DER encoded here (OPENSSL_free), or NULL */
};

struct entries {
	struct entry *v;
	size_t n, cap;
};

static int
push_entry(struct entries *e, const unsigned char *der, size_t len, const X509_NAME *subject,
	   unsigned char *owned)
{
	if (e->n == e->cap) {
		size_t cap = e->cap ? e->cap * 2 : 256;
		struct entry *v = realloc(e->v, cap * sizeof(*v));

		if (!v) {
			OPENSSL_free(owned);
			return -1;
		}
		e->v = v;
		e->cap = cap;
	}
	e->v[e->n++] = (struct entry){der, len, subject, owned};
	return 0;
}

/*
 * Every certificate of the PEM text P (LEN bytes), appended to E.  A text
 * of plain certificates (pemcerts.h) gives their bytes as written, *SPLIT
 * holding them, with no certificate parsed; any other is read as OpenSSL
 * reads certificates (read_certs(); PARSED keeps them) and re-encoded.
 * For the DER certificates of a bundle the two are the same bytes.  Only
 * with SUBJECTS (the hashed directory's) is each subject decoded; one that
 * does not decode fails (-2).
 */
static int
add_certs(const char *p, size_t len, bool subjects, struct entries *e, struct pem_certs **split,
	  STACK_OF(X509) * parsed)
{
	int first = sk_X509_num(parsed), r;

	*split = pem_certs_get(p, len, &r);
	if (r < 0)
		return -1;
	if (r == 1) {
		for (size_t i = 0; i < (*split)->n; i++) {
			struct pem_cert *c = &(*split)->v[i];
			const X509_NAME *subject = subjects ? pem_cert_subject(c) : NULL;

			if (subjects && !subject)
				return -2;
			if (push_entry(e, c->der, c->len, subject, NULL) < 0)
				return -1;
		}
		return 0;
	}
	if (read_certs(p, len, parsed) < 0)
		return -1;
	for (int i = first; i < sk_X509_num(parsed); i++) {
		X509 *x = sk_X509_value(parsed, i);
		unsigned char *der = NULL;
		int n = i2d_X509(x, &der);

		if (n < 0 || push_entry(e, der, (size_t)n, X509_get_subject_name(x), der) < 0)
			return -1;
	}
	return 0;
}

/* The most bytes of its own a JKS entry takes: its header, the alias at most 32. */
#define JKS_ENTRY_OWN (4 + 2 + 32 + 8 + 2 + 5 + 4)

/*
 * A JKS trust store of the N certificates at V (sun.security.provider.JavaKeyStore,
 * version 2): a trusted-certificate entry each, then the SHA-1 over the password
 * "changeit" in UTF-16BE, "Mighty Aphrodite" and everything before it.
 * The dates are 0, so the same certificates give the same bytes.  Into B,
 * whose pieces lend the certificates' DER.
 */
static int
jks(const struct entry *v, size_t n, struct pieces *b)
{
	static const char password[] = "changeit";
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int md_len;
	EVP_MD_CTX *ctx;
	int ok;

	if (pieces_init(b, 2 * n + 2, 12 + n * JKS_ENTRY_OWN + sizeof(md)) < 0)
		return -1;
	put_u32(b, 0xfeedfeed);
	put_u32(b, 2);
	put_u32(b, (uint32_t)n);
	for (size_t i = 0; i < n; i++) {
		char alias[32];

		snprintf(alias, sizeof(alias), "omnibox-%zu", i);
		put_u32(b, 2); /* a trusted certificate */
		put_utf(b, alias);
		put_u32(b, 0); /* the date, a 64-bit count of milliseconds */
		put_u32(b, 0);
		put_utf(b, "X.509");
		put_u32(b, (uint32_t)v[i].len);
		lend(b, v[i].der, v[i].len);
	}
	if (b->failed || !(ctx = EVP_MD_CTX_new()))
		return -1;
	ok = EVP_DigestInit_ex(ctx, EVP_sha1(), NULL);
	for (size_t i = 0; ok && password[i]; i++) {
		unsigned char c[2] = {0, (unsigned char)password[i]};

		ok = EVP_DigestUpdate(ctx, c, 2);
	}
	ok = ok && EVP_DigestUpdate(ctx, "Mighty Aphrodite", 16);
	for (size_t i = 0; ok && i < b->n; i++)
		ok = EVP_DigestUpdate(ctx, b->v[i].iov_base, b->v[i].iov_len);
	ok = ok && EVP_DigestFinal_ex(ctx, md, &md_len);
	EVP_MD_CTX_free(ctx);
	if (!ok)
		return -1;
	put(b, md, md_len);
	return b->failed ? -1 : 0;
}

/*
 * NAME in DIRFD holding the bytes of the N pieces at V, a new file; or,
 * IN_PLACE, the empty file omnibox-run may have made there already (the
 * bundle bwrap binds while this process starts): written through, the
 * same inode.
 */
static int
write_at(int dirfd, const char *name, const struct iovec *v, size_t n, bool in_place, char *err,
	 size_t errlen)
{
	/* In place: O_NONBLOCK, so that a FIFO there fails instead of waiting. */
	int fd = openat(dirfd, name,
			O_WRONLY | O_CREAT | (in_place ? O_NONBLOCK : O_EXCL) | O_NOFOLLOW | O_CLOEXEC,
			0644);
	struct iovec cur = n ? v[0] : (struct iovec){0};
	size_t i = 0;
	struct stat st;

	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", name, strerror(errno));
		return -1;
	}
	if (in_place && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1 ||
			 st.st_size != 0 || st.st_uid != geteuid())) {
		snprintf(err, errlen, "%s: there already, and not the empty file of this launch",
			 name);
		close(fd);
		return -1;
	}
	/* CUR is what is left of piece I; the pieces after it go as they are. */
	while (i < n) {
		struct iovec batch[64];
		int k = 0;
		ssize_t w;

		batch[k++] = cur;
		while (k < 64 && i + (size_t)k < n)
			batch[k] = v[i + (size_t)k], k++;
		w = writev(fd, batch, k);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			snprintf(err, errlen, "%s: %s", name, strerror(errno));
			close(fd);
			return -1;
		}
		while (i < n && (size_t)w >= cur.iov_len) {
			w -= (ssize_t)cur.iov_len;
			if (++i < n)
				cur = v[i];
		}
		if (i < n) {
			cur.iov_base = (char *)cur.iov_base + w;
			cur.iov_len -= (size_t)w;
		}
	}
	if (fchmod(fd, 0644) < 0 || close(fd) < 0) {
		snprintf(err, errlen, "%s: %s", name, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * The N certificates at V as OpenSSL's hashed directory wants them, in the
 * directory FD: HASH.N, N from 0 where subjects collide, each file what
 * PEM_write_bio_X509() writes.
 */
static int
hashed_files(int fd, const struct entry *v, size_t n, char *err, size_t errlen)
{
	for (size_t i = 0; i < n; i++) {
		unsigned long h = X509_NAME_hash_ex(v[i].subject, NULL, NULL, NULL);
		BIO *bio = BIO_new(BIO_s_mem());
		char name[32], *pem;
		long len;
		int k = 0, rc;

		if (!bio || v[i].len > INT_MAX ||
		    PEM_write_bio(bio, PEM_STRING_X509, "", v[i].der, (long)v[i].len) <= 0) {
			BIO_free(bio);
			snprintf(err, errlen, "cannot write the session's certificate %zu", i);
			return -1;
		}
		len = BIO_get_mem_data(bio, &pem);
		do
			snprintf(name, sizeof(name), "%08lx.%d", h, k++);
		while (faccessat(fd, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0);
		rc = write_at(fd, name, &(struct iovec){pem, (size_t)len}, 1, false, err, errlen);
		BIO_free(bio);
		if (rc < 0)
			return -1;
	}
	return 0;
}

int
truststore_write(const char *bundle, const char *sys, size_t sys_len, const char *extra,
		 size_t extra_len, const char *ca, size_t ca_len, char *err, size_t errlen)
{
	STACK_OF(X509) *parsed = sk_X509_new_null();
	struct pem_certs *split[3] = {NULL, NULL, NULL};
	struct entries all = {0};
	struct pieces pem = {0}, store = {0};
	const char *name = strrchr(bundle, '/');
	char *dir = strndup(bundle, name ? (size_t)(name - bundle) : 0);
	size_t n_sys = 0;
	int dirfd = -1, rc = -1, r;

	snprintf(err, errlen, "the session's trust store beside %s: out of memory", bundle);
	if (!dir || !name || !name[1])
		goto out;
	name++;
	if ((dirfd = open(*dir ? dir : "/", O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		goto out;
	}
	/* The JKS holds them all; the hashed directory what follows the system's. */
	if (!parsed || add_certs(sys, sys_len, false, &all, &split[0], parsed) < 0)
		goto out;
	n_sys = all.n;
	if ((r = add_certs(extra, extra ? extra_len : 0, true, &all, &split[1], parsed)) < 0 ||
	    (r = add_certs(ca, ca_len, true, &all, &split[2], parsed)) < 0) {
		if (r == -2)
			snprintf(err, errlen, "%s: a certificate's subject does not decode",
				 bundle);
		goto out;
	}
	if (pieces_init(&pem, 5, 2) < 0)
		goto out;
	lend(&pem, sys, sys_len);
	if (sys_len && sys[sys_len - 1] != '\n')
		put(&pem, "\n", 1);
	lend(&pem, extra, extra ? extra_len : 0);
	if (extra && extra_len && extra[extra_len - 1] != '\n')
		put(&pem, "\n", 1);
	lend(&pem, ca, ca_len);
	if (pem.failed || jks(all.v, all.n, &store) < 0)
		goto out;
	rc = write_at(dirfd, name, pem.v, pem.n, true, err, errlen) < 0 ||
		     write_at(dirfd, ENV_CA_TRUSTSTORE, store.v, store.n, false, err, errlen) < 0 ||
		     hashed_files(dirfd, all.v + n_sys, all.n - n_sys, err, errlen) < 0
		 ? -1
		 : 0;
out:
	if (dirfd >= 0)
		close(dirfd);
	free(dir);
	pieces_free(&pem);
	pieces_free(&store);
	for (size_t i = 0; i < all.n; i++)
		OPENSSL_free(all.v[i].owned);
	free(all.v);
	for (size_t i = 0; i < 3; i++)
		pem_certs_put(split[i]);
	sk_X509_pop_free(parsed, X509_free);
	return rc;
}
