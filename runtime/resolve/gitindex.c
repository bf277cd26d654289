/*
 * gitindex.c - read a git index, and hash what it vouches for (gitindex.h).
 *
 * The format (git's Documentation/gitformat-index.txt): "DIRC", a version
 * (2, 3 or 4) and a count, then one entry each: stat data (40 bytes), the
 * object's hash (20 bytes for SHA-1), 16 bits of flags (stage in bits
 * 12-13, bit 14: 16 more bits of extended flags follow, version 3 and up),
 * and the path: NUL-terminated and padded to a multiple of 8 bytes, or in
 * version 4 prefix-compressed against the entry before and not padded.
 */
#include "runtime/resolve/gitindex.h"

#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compiler/base/sha1.h"

#define INDEX_MAX (256u << 20)	/* a larger index vouches for nothing */
#define BLOB_MAX (64u << 20)	/* a larger file is not hashed: it stays hidden */
#define CONFIG_MAX (1u << 20)
#define HASH_LEN 20
#define ENTRY_FIXED 62		/* stat data, hash, flags */
#define FLAG_EXTENDED 0x4000u
#define EXT_INTENT_TO_ADD 0x2000u

struct entry {
	char *path;
	uint32_t mode, size;
	unsigned char hash[HASH_LEN];
};

struct gitindex {
	char *top;
	struct entry *v;
	size_t n;
};

static uint32_t
be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* All of FD (at most MAX bytes, a regular file) into a new buffer; NULL otherwise. */
static unsigned char *
read_all(int fd, size_t max, size_t *len)
{
	struct stat st;
	unsigned char *buf;
	size_t off = 0;

	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > max)
		return NULL;
	if (!(buf = malloc((size_t)st.st_size + 1)))
		return NULL;
	while (off < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + off, (size_t)st.st_size - off);

		if (r <= 0) {
			free(buf);
			return NULL;
		}
		off += (size_t)r;
	}
	*len = off;
	return buf;
}

static unsigned char *
read_at(int dirfd, const char *name, size_t max, size_t *len)
{
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	unsigned char *buf;

	if (fd < 0)
		return NULL;
	buf = read_all(fd, max, len);
	close(fd);
	return buf;
}

/* Does the repository's config name another object format (SHA-256)?  Read
 * loosely: any mention of sha256 counts, so the doubt hides. */
static bool
other_format(int gitfd)
{
	size_t len;
	unsigned char *c = read_at(gitfd, "config", CONFIG_MAX, &len);
	bool other = false;

	if (!c)
		return false;
	for (size_t i = 0; i < len; i++)
		c[i] = (unsigned char)tolower(c[i]);
	c[len] = '\0';
	other = strstr((char *)c, "sha256") != NULL;
	free(c);
	return other;
}

/* Version 4's path: strip *STRIP bytes of PREV, then the NUL-terminated suffix at P. */
static char *
path_v4(const unsigned char *p, const unsigned char *end, const char *prev, size_t *used)
{
	const unsigned char *q = p;
	size_t strip, keep, slen;
	char *path;

	if (q >= end)
		return NULL;
	strip = *q & 127;
	while (*q++ & 128) {
		if (q >= end || strip > (SIZE_MAX >> 8))
			return NULL;
		strip = ((strip + 1) << 7) | (*q & 127);
	}
	keep = prev ? strlen(prev) : 0;
	if (strip > keep || !memchr(q, '\0', (size_t)(end - q)))
		return NULL;
	keep -= strip;
	slen = strlen((const char *)q);
	if (!(path = malloc(keep + slen + 1)))
		return NULL;
	if (keep)
		memcpy(path, prev, keep);
	memcpy(path + keep, q, slen + 1);
	*used = (size_t)(q - p) + slen + 1;
	return path;
}

/* Parse the entries of BUF (LEN bytes) into IX; -1 when it is not an index we take. */
static int
parse(struct gitindex *ix, const unsigned char *buf, size_t len)
{
	const unsigned char *p = buf + 12, *end = buf + len;
	uint32_t version, count;
	const char *prev = NULL;

	if (len < 12 || memcmp(buf, "DIRC", 4))
		return -1;
	version = be32(buf + 4);
	count = be32(buf + 8);
	if (version < 2 || version > 4 || count > len / ENTRY_FIXED)
		return -1;
	if (!(ix->v = calloc(count ? count : 1, sizeof(*ix->v))))
		return -1;
	for (uint32_t i = 0; i < count; i++) {
		const unsigned char *e = p;
		unsigned flags, ext = 0;
		size_t fixed = ENTRY_FIXED, used;
		struct entry *en = &ix->v[ix->n];

		if ((size_t)(end - p) < ENTRY_FIXED + 1)
			return -1;
		flags = (unsigned)e[60] << 8 | e[61];
		if (flags & FLAG_EXTENDED) {
			if (version < 3 || (size_t)(end - p) < ENTRY_FIXED + 3)
				return -1;
			ext = (unsigned)e[62] << 8 | e[63];
			fixed += 2;
		}
		if (version == 4) {
			en->path = path_v4(e + fixed, end, prev, &used);
			p = e + fixed + used;
		} else {
			const unsigned char *nul = memchr(e + fixed, '\0', (size_t)(end - e - fixed));

			if (!nul || !(en->path = strndup((const char *)e + fixed,
							 (size_t)(nul - e - fixed))))
				return -1;
			used = (size_t)(nul - e) + 1;
			p = e + ((used + 7) & ~(size_t)7);
		}
		if (!en->path || p > end)
			return -1;
		prev = en->path;
		en->mode = be32(e + 24);
		en->size = be32(e + 36);
		memcpy(en->hash, e + 40, HASH_LEN);
		ix->n++;
		/* Kept for the next path (version 4), but never vouched for:
		 * a conflict's stages, an intent-to-add placeholder. */
		if (((flags >> 12) & 3) || (ext & EXT_INTENT_TO_ADD))
			en->mode = 0;
	}
	return 0;
}

struct gitindex *
gitindex_load(int topfd, const char *top)
{
	int gitfd = openat(topfd, ".git", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct gitindex *ix = NULL;
	unsigned char *buf = NULL;
	size_t len;

	if (gitfd < 0)
		return NULL;
	if (other_format(gitfd) || !(buf = read_at(gitfd, "index", INDEX_MAX, &len)))
		goto out;
	if (!(ix = calloc(1, sizeof(*ix))) || !(ix->top = strdup(top)) || parse(ix, buf, len) < 0) {
		gitindex_free(ix);
		ix = NULL;
	}
out:
	free(buf);
	close(gitfd);
	return ix;
}

void
gitindex_free(struct gitindex *ix)
{
	if (!ix)
		return;
	for (size_t i = 0; i < ix->n; i++)
		free(ix->v[i].path);
	free(ix->v);
	free(ix->top);
	free(ix);
}

const char *
gitindex_top(const struct gitindex *ix)
{
	return ix->top;
}

/* The first entry whose path is not below REL in byte order (the index is sorted). */
static size_t
lower_bound(const struct gitindex *ix, const char *rel)
{
	size_t lo = 0, hi = ix->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(ix->v[mid].path, rel) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Is the blob hash of what NAME in DIRFD holds now E's, and is it E's size? */
static bool
same_blob(const struct entry *e, int dirfd, const char *name)
{
	unsigned char *buf, md[SHA1_LEN];
	char head[32];
	size_t len;
	int n, ok;

	if (!(buf = read_at(dirfd, name, BLOB_MAX, &len)))
		return false;
	n = snprintf(head, sizeof(head), "blob %zu", len);
	/* The recorded size (its low 32 bits; 0 where git wrote no stat data)
	 * only rules out early: the hash decides. */
	ok = !e->size || (uint32_t)len == e->size;
	if (ok) {
		struct sha1 s;

		sha1_init(&s);
		sha1_update(&s, head, (size_t)n + 1);
		sha1_update(&s, buf, len);
		sha1_final(&s, md);
	}
	free(buf);
	return ok && !memcmp(md, e->hash, HASH_LEN);
}

bool
gitindex_vouches(const struct gitindex *ix, const char *path, int dirfd, const char *name,
		 unsigned char type)
{
	size_t n = strlen(ix->top), i;
	const char *rel = path + n + 1;

	if (strncmp(path, ix->top, n) || path[n] != '/')
		return false;
	if (type == DT_DIR) {
		size_t rlen = strlen(rel);

		i = lower_bound(ix, rel);
		for (; i < ix->n && !strncmp(ix->v[i].path, rel, rlen); i++)
			if (ix->v[i].path[rlen] == '/')
				return true;
		return false;
	}
	if (type != DT_REG)
		return false;
	i = lower_bound(ix, rel);
	if (i == ix->n || strcmp(ix->v[i].path, rel))
		return false;
	/* Stage 0 comes first; a regular file, executable or not. */
	if (ix->v[i].mode != 0100644 && ix->v[i].mode != 0100755)
		return false;
	return same_blob(&ix->v[i], dirfd, name);
}
