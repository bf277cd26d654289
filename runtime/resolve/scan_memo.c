/*
 * scan_memo.c - the listings a dotfile scan keeps for the next (scan_memo.h).
 *
 * The file, written by one scan and read by the next (native byte order,
 * one machine's):
 *
 *   "omnibox scan memo 2\n"                       the magic, 20 bytes
 *   12 bytes                                      a nonce, new at each write
 *   the body, encrypted (ChaCha20 under the keyring's first 32 bytes, from
 *   block 1 of the nonce):
 *     u64 N                                       the count
 *     N times: u64 dev, u64 ino, i64 ctime seconds, u32 ctime nanoseconds,
 *              u32 LEN, LEN bytes of getdents64() records, zero-padded to 8
 *   u64 SipHash-2-4 of everything before, under the keyring's last 16 bytes
 *
 * Encrypted: a sandbox may be granted the user's cache directory, and the
 * listings name what it is not granted (other workspaces' files).
 */
#include "runtime/resolve/scan_memo.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/keyctl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef XFS_SUPER_MAGIC
#define XFS_SUPER_MAGIC 0x58465342
#endif

#define MAGIC "omnibox scan memo 2\n"
#define HEAD_SIZE 32u  /* the magic and the nonce */
#define COUNT_SIZE 8u  /* the body's count */
#define ENTRY_SIZE 32u /* an entry before its listing */
#define KEY_SIZE 48u   /* ChaCha20's 32 bytes, then SipHash's 16 */
/* What is read or kept at most: a larger tree is listed as ever, beyond. */
#define MEMO_MAX (64u << 20)
/* Memo files unused this long go, and a write's leftover sooner. */
#define MEMO_UNUSED_S (30 * 24 * 3600)
#define TMP_LEFT_S (24 * 3600)
/* The key's description in the user's keyring, and the files' names, by
 * version: another version's are not this one's to replace. */
#define KEY_NAME "omnibox:scan-memo-2"

struct rec {
	unsigned long long dev, ino;
	long long sec;
	unsigned nsec;
	size_t len;
	const char *buf;
	bool owned; /* BUF is this record's own copy */
};

struct scan_memo {
	unsigned char key[KEY_SIZE];
	int dir;	   /* the cache directory */
	char name[64];	   /* the file's name in it */
	long long settled; /* ctime (ns since the epoch) a listing must be older than */
	char *file;	   /* the file read, verified; NULL when none */
	size_t file_len;
	struct rec *old;   /* its entries */
	size_t n_old;
	size_t *table; /* an open-addressed index of OLD by device and inode (n_old + 1: free) */
	size_t table_cap;
	struct rec *kept; /* for the next scan */
	size_t n_kept, cap_kept, kept_bytes;
	bool fresh; /* something was kept that the file did not hold */
};

bool
scan_fs_exact(long fs_type)
{
	switch ((unsigned long)fs_type) {
	case EXT4_SUPER_MAGIC:
	case TMPFS_MAGIC:
	case XFS_SUPER_MAGIC:
	case BTRFS_SUPER_MAGIC:
		return true;
	default:
		return false;
	}
}

/*
 * May the listing of the directory FD (whose status is ST, on a file system
 * of type FS_TYPE) be kept, and taken back?  Only where every change to its
 * entries sets a ctime no process can set back, and names a directory no
 * other has been or will be by device and inode: ext4, XFS and tmpfs
 * (Btrfs's snapshots copy inodes and ctimes, and its device numbers come
 * back with a subvolume's; overlayfs, FUSE and network file systems may
 * not say).  Never an encrypted directory, whose listing changes with its
 * key, and no inode or ctime changes; never a ctime where the file system's
 * clamp lies (2038 on ext4's small inodes and XFS without bigtime), where
 * every change would leave it alike.
 */
static bool
memo_eligible(int fd, const struct stat *st, long fs_type)
{
	struct statx sx;

	switch ((unsigned long)fs_type) {
	case EXT4_SUPER_MAGIC:
	case TMPFS_MAGIC:
	case XFS_SUPER_MAGIC:
		break;
	default:
		return false;
	}
	if (st->st_ctim.tv_sec < 0 || st->st_ctim.tv_sec >= INT32_MAX - 1 ||
	    st->st_ctim.tv_nsec < 0 || st->st_ctim.tv_nsec >= 1000000000L)
		return false;
	return statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_INO, &sx) == 0 &&
	       (sx.stx_attributes_mask & STATX_ATTR_ENCRYPTED) &&
	       !(sx.stx_attributes & STATX_ATTR_ENCRYPTED);
}

/* ---- SipHash-2-4 ------------------------------------------------------------ */

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND                                                                                   \
	do {                                                                                       \
		v0 += v1;                                                                          \
		v1 = ROTL(v1, 13);                                                                 \
		v1 ^= v0;                                                                          \
		v0 = ROTL(v0, 32);                                                                 \
		v2 += v3;                                                                          \
		v3 = ROTL(v3, 16);                                                                 \
		v3 ^= v2;                                                                          \
		v0 += v3;                                                                          \
		v3 = ROTL(v3, 21);                                                                 \
		v3 ^= v0;                                                                          \
		v2 += v1;                                                                          \
		v1 = ROTL(v1, 17);                                                                 \
		v1 ^= v2;                                                                          \
		v2 = ROTL(v2, 32);                                                                 \
	} while (0)

static uint64_t
le64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	return v;
}

/* SipHash-2-4 of IN (LEN bytes) under the 16-byte KEY. */
static uint64_t
siphash(const unsigned char key[16], const void *in, size_t len)
{
	const unsigned char *p = in, *end = p + (len & ~(size_t)7);
	uint64_t k0 = le64(key), k1 = le64(key + 8);
	uint64_t v0 = k0 ^ 0x736f6d6570736575ULL, v1 = k1 ^ 0x646f72616e646f6dULL;
	uint64_t v2 = k0 ^ 0x6c7967656e657261ULL, v3 = k1 ^ 0x7465646279746573ULL;
	uint64_t b = (uint64_t)len << 56, m;

	for (; p != end; p += 8) {
		m = le64(p);
		v3 ^= m;
		SIPROUND;
		SIPROUND;
		v0 ^= m;
	}
	for (size_t i = 0; i < (len & 7); i++)
		b |= (uint64_t)p[i] << (8 * i);
	v3 ^= b;
	SIPROUND;
	SIPROUND;
	v0 ^= b;
	v2 ^= 0xff;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	return v0 ^ v1 ^ v2 ^ v3;
}

/* ---- ChaCha20 (RFC 8439) ------------------------------------------------------ */

#define ROTL32(x, b) (uint32_t)(((x) << (b)) | ((x) >> (32 - (b))))
#define QR(a, b, c, d)                                                                             \
	do {                                                                                       \
		a += b;                                                                            \
		d = ROTL32(d ^ a, 16);                                                             \
		c += d;                                                                            \
		b = ROTL32(b ^ c, 12);                                                             \
		a += b;                                                                            \
		d = ROTL32(d ^ a, 8);                                                              \
		c += d;                                                                            \
		b = ROTL32(b ^ c, 7);                                                              \
	} while (0)

static uint32_t
le32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap32(v);
#endif
	return v;
}

/* BUF (LEN bytes) XORed with ChaCha20's stream under KEY and NONCE, from block 1. */
static void
chacha20(const unsigned char key[32], const unsigned char nonce[12], unsigned char *buf, size_t len)
{
	uint32_t in[16] = {0x61707865, 0x3320646e, 0x79622d32, 0x6b206574};
	uint32_t x[16];
	unsigned char ks[64];

	for (int i = 0; i < 8; i++)
		in[4 + i] = le32(key + 4 * i);
	in[12] = 1;
	for (int i = 0; i < 3; i++)
		in[13 + i] = le32(nonce + 4 * i);
	for (size_t off = 0; off < len; off += 64, in[12]++) {
		memcpy(x, in, sizeof(x));
		for (int r = 0; r < 10; r++) {
			QR(x[0], x[4], x[8], x[12]);
			QR(x[1], x[5], x[9], x[13]);
			QR(x[2], x[6], x[10], x[14]);
			QR(x[3], x[7], x[11], x[15]);
			QR(x[0], x[5], x[10], x[15]);
			QR(x[1], x[6], x[11], x[12]);
			QR(x[2], x[7], x[8], x[13]);
			QR(x[3], x[4], x[9], x[14]);
		}
		for (int i = 0; i < 16; i++) {
			uint32_t v = x[i] + in[i];

#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
			v = __builtin_bswap32(v);
#endif
			memcpy(ks + 4 * i, &v, 4);
		}
		if (len - off >= 64) {
			for (int i = 0; i < 64; i += 8) {
				uint64_t a, k;

				memcpy(&a, buf + off + i, 8);
				memcpy(&k, ks + i, 8);
				a ^= k;
				memcpy(buf + off + i, &a, 8);
			}
		} else {
			for (size_t i = 0; off + i < len; i++)
				buf[off + i] ^= ks[i];
		}
	}
}

/* ---- the key and the file ---------------------------------------------------- */

/* The key, from the user's keyring, made there the first time: 0, or -1. */
static int
memo_key(unsigned char key[KEY_SIZE])
{
	long id = syscall(SYS_keyctl, KEYCTL_SEARCH, KEY_SPEC_USER_KEYRING, "user", KEY_NAME, 0);

	if (id >= 0 && syscall(SYS_keyctl, KEYCTL_READ, id, key, (size_t)KEY_SIZE) == KEY_SIZE)
		return 0;
	/* None (or not ours to read, or another size): a new one, which
	 * replaces it. */
	if (getrandom(key, KEY_SIZE, 0) != KEY_SIZE)
		return -1;
	return syscall(SYS_add_key, "user", KEY_NAME, key, (size_t)KEY_SIZE,
		       KEY_SPEC_USER_KEYRING) < 0
		   ? -1
		   : 0;
}

/* The user's cache directory, where it exists, and omnibox's own in it made
 * where missing (0700): a descriptor, or -1.  $XDG_CACHE_HOME is the user's
 * to point anywhere (but not itself a symlink, which a sandbox that may
 * write its parent could have made); ~/.cache and omnibox in it are reached
 * through no symlink.  Nothing is made in a home that has no cache
 * directory. */
static int
memo_dir(void)
{
	struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
			       .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
					  RESOLVE_NO_MAGICLINKS};
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	int base = -1, cache, fd = -1;
	struct stat st;

	if (xdg && xdg[0] == '/')
		cache = open(xdg, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	else if (home && home[0] == '/' &&
		 (base = open(home, O_PATH | O_DIRECTORY | O_CLOEXEC)) >= 0)
		cache = (int)syscall(SYS_openat2, base, ".cache", &how, sizeof(how));
	else
		return -1;
	if (base >= 0)
		close(base);
	if (cache < 0)
		return -1;
	if (mkdirat(cache, "omnibox", 0700) == 0 || errno == EEXIST)
		fd = (int)syscall(SYS_openat2, cache, "omnibox", &how, sizeof(how));
	close(cache);
	/* The user's own, which no one else writes. */
	if (fd >= 0 && (fstat(fd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 022))) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* Are BUF's LEN bytes whole getdents64() records, each name ended inside
 * its record? */
static bool
records_whole(const char *buf, size_t len)
{
	for (size_t off = 0; off < len;) {
		unsigned short reclen;

		if (len - off < 20)
			return false;
		memcpy(&reclen, buf + off + 16, sizeof(reclen));
		if (reclen < 20 || reclen % 8 || reclen > len - off ||
		    !memchr(buf + off + 19, '\0', (size_t)reclen - 19))
			return false;
		off += reclen;
	}
	return true;
}

static size_t
slot_of(unsigned long long dev, unsigned long long ino, size_t cap)
{
	return (size_t)((ino * 0x9E3779B97F4A7C15ULL) ^ (dev * 0xC2B2AE3D27D4EB4FULL)) & (cap - 1);
}

/* M->old from M->file's LEN bytes, verified, decrypted and checked: true,
 * or false (nothing kept of it). */
static bool
memo_parse(struct scan_memo *m, size_t len)
{
	char *f = m->file;
	uint64_t n, mac;
	size_t off = HEAD_SIZE + COUNT_SIZE;

	if (len < HEAD_SIZE + COUNT_SIZE + 8 || memcmp(f, MAGIC, 20))
		return false;
	memcpy(&mac, f + len - 8, 8);
	if (siphash(m->key + 32, f, len - 8) != mac)
		return false;
	len -= 8;
	chacha20(m->key, (const unsigned char *)f + 20, (unsigned char *)f + HEAD_SIZE,
		 len - HEAD_SIZE);
	memcpy(&n, f + HEAD_SIZE, 8);
	if (n > (len - off) / ENTRY_SIZE)
		return false;
	m->old = calloc((size_t)n + 1, sizeof(*m->old));
	for (m->table_cap = 16; m->table_cap < 2 * (size_t)n; m->table_cap *= 2)
		;
	m->table = malloc(m->table_cap * sizeof(*m->table));
	if (!m->old || !m->table)
		return false;
	for (size_t i = 0; i < m->table_cap; i++)
		m->table[i] = SIZE_MAX;
	for (size_t i = 0; i < n; i++) {
		struct rec *r = &m->old[i];
		unsigned nsec, rlen;
		size_t s, padded;

		if (len - off < ENTRY_SIZE)
			return false;
		memcpy(&r->dev, f + off, 8);
		memcpy(&r->ino, f + off + 8, 8);
		memcpy(&r->sec, f + off + 16, 8);
		memcpy(&nsec, f + off + 24, 4);
		memcpy(&rlen, f + off + 28, 4);
		off += ENTRY_SIZE;
		r->nsec = nsec;
		r->len = rlen;
		r->buf = f + off;
		padded = ((size_t)rlen + 7) / 8 * 8;
		if ((size_t)rlen > len - off || padded > len - off || !records_whole(r->buf, rlen))
			return false;
		off += padded;
		for (s = slot_of(r->dev, r->ino, m->table_cap); m->table[s] != SIZE_MAX;
		     s = (s + 1) & (m->table_cap - 1))
			;
		m->table[s] = i;
		m->n_old++;
	}
	return off == len;
}

/* The file's name: PURPOSE and a hash of the roots (collisions cost only
 * listings read again). */
static void
memo_name(char *out, size_t size, const char *purpose, const char *const *roots, size_t n)
{
	static const unsigned char zero[16];
	uint64_t h = siphash(zero, purpose, strlen(purpose));

	for (size_t i = 0; i < n; i++)
		h = siphash(zero, roots[i], strlen(roots[i])) ^ (h * 0x100000001B3ULL);
	snprintf(out, size, "scan2-%s-%016llx", purpose, (unsigned long long)h);
}

struct scan_memo *
scan_memo_open(const char *purpose, const char *const *roots, size_t n_roots)
{
	struct scan_memo *m = calloc(1, sizeof(*m));
	struct timespec now;
	struct stat st;
	int fd;

	if (!m)
		return NULL;
	m->dir = -1;
	/* The start, before any directory is read. */
	if (clock_gettime(CLOCK_REALTIME, &now) < 0 || memo_key(m->key) < 0 ||
	    (m->dir = memo_dir()) < 0) {
		scan_memo_close(m, false);
		return NULL;
	}
	m->settled = (long long)now.tv_sec * 1000000000LL + now.tv_nsec - SCAN_MEMO_SETTLED_NS;
	memo_name(m->name, sizeof(m->name), purpose, roots, n_roots);
	fd = openat(m->dir, m->name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
	    (size_t)st.st_size <= MEMO_MAX && (m->file = malloc((size_t)st.st_size))) {
		size_t got = 0;
		ssize_t r = 0;

		while (got < (size_t)st.st_size &&
		       (r = read(fd, m->file + got, (size_t)st.st_size - got)) > 0)
			got += (size_t)r;
		m->file_len = got;
		if (got != (size_t)st.st_size || !memo_parse(m, got)) {
			free(m->file);
			free(m->old);
			free(m->table);
			m->file = NULL;
			m->old = NULL;
			m->table = NULL;
			m->n_old = 0;
			m->file_len = 0;
		}
	}
	if (fd >= 0)
		close(fd);
	return m;
}

bool
scan_memo_empty(const struct scan_memo *m)
{
	return !m || !m->n_old;
}

const char *
scan_memo_find(const struct scan_memo *m, int fd, const struct stat *st, long fs_type, size_t *len)
{
	unsigned long long dev = (unsigned long long)st->st_dev,
			   ino = (unsigned long long)st->st_ino;
	const struct timespec *ctime = &st->st_ctim;

	*len = 0;
	if (!m || !m->n_old || !memo_eligible(fd, st, fs_type))
		return NULL;
	for (size_t s = slot_of(dev, ino, m->table_cap); m->table[s] != SIZE_MAX;
	     s = (s + 1) & (m->table_cap - 1)) {
		const struct rec *r = &m->old[m->table[s]];

		if (r->dev == dev && r->ino == ino) {
			if (r->sec != (long long)ctime->tv_sec || r->nsec != (unsigned)ctime->tv_nsec)
				return NULL;
			*len = r->len;
			return r->buf;
		}
	}
	return NULL;
}

/* Is the record at D an entry a scan only counts (SCAN_MEMO_SKIPPED)? */
static bool
only_counted(const char *d)
{
	static const char *const named[] = {"HEAD", "objects", "refs", "commondir"};
	const char *name = d + 19;
	unsigned char type = (unsigned char)d[18];

	if (name[0] == '.' || (type != DT_REG && type != DT_LNK && type != DT_FIFO &&
			       type != DT_SOCK && type != DT_CHR && type != DT_BLK))
		return false;
	for (size_t i = 0; i < sizeof(named) / sizeof(*named); i++)
		if (!strcmp(name, named[i]))
			return false;
	return true;
}

/* IN (LEN bytes of getdents64() records) into OUT, each run of entries a
 * scan only counts one SCAN_MEMO_SKIPPED record: OUT's length (never more
 * than LEN: a run's record is no longer than its first entry's). */
static size_t
compact(const char *in, size_t len, char *out)
{
	size_t o = 0, run_at = 0;
	int64_t run = 0;

	for (size_t off = 0; off < len;) {
		unsigned short reclen;

		memcpy(&reclen, in + off + 16, sizeof(reclen));
		if (only_counted(in + off)) {
			if (!run++) {
				run_at = o;
				o += 24;
			}
			unsigned short rl = 24;

			memset(out + run_at, 0, 24);
			memcpy(out + run_at + 8, &run, 8);
			memcpy(out + run_at + 16, &rl, sizeof(rl));
			out[run_at + 18] = (char)SCAN_MEMO_SKIPPED;
		} else {
			run = 0;
			memcpy(out + o, in + off, reclen);
			o += reclen;
		}
		off += reclen;
	}
	return o;
}

void
scan_memo_keep(struct scan_memo *m, int fd, const struct stat *st, long fs_type, const char *buf,
	       size_t len)
{
	const struct timespec *ctime = &st->st_ctim;
	bool ours;
	struct rec *r;

	if (!m || !len || len > UINT32_MAX || m->kept_bytes + len + ENTRY_SIZE > MEMO_MAX ||
	    (long long)ctime->tv_sec * 1000000000LL + ctime->tv_nsec >= m->settled ||
	    !memo_eligible(fd, st, fs_type))
		return;
	if (m->n_kept == m->cap_kept) {
		size_t cap = m->cap_kept ? 2 * m->cap_kept : 256;
		struct rec *v = realloc(m->kept, cap * sizeof(*v));

		if (!v)
			return;
		m->kept = v;
		m->cap_kept = cap;
	}
	/* The file's own bytes stay where they are; a new listing is copied,
	 * less what no scan looks at. */
	ours = m->file && (uintptr_t)buf >= (uintptr_t)m->file &&
	       (uintptr_t)buf < (uintptr_t)m->file + m->file_len;
	r = &m->kept[m->n_kept];
	*r = (struct rec){(unsigned long long)st->st_dev,
			  (unsigned long long)st->st_ino,
			  ctime->tv_sec,
			  (unsigned)ctime->tv_nsec,
			  len,
			  buf,
			  !ours};
	if (!ours) {
		char *copy = malloc(len);

		if (!copy)
			return;
		r->len = len = compact(buf, len, copy);
		r->buf = copy;
		m->fresh = true;
	}
	m->n_kept++;
	m->kept_bytes += len + ENTRY_SIZE;
}

/* The kept entries, as the file holds them, into a buffer: its length, or 0. */
static size_t
memo_build(const struct scan_memo *m, char **out)
{
	size_t size = HEAD_SIZE + COUNT_SIZE + 8, off = HEAD_SIZE + COUNT_SIZE;
	uint64_t n = m->n_kept, mac;
	char *f;

	for (size_t i = 0; i < m->n_kept; i++)
		size += ENTRY_SIZE + (m->kept[i].len + 7) / 8 * 8;
	if (!(f = calloc(1, size)) || getrandom(f + 20, 12, 0) != 12) {
		free(f);
		return 0;
	}
	memcpy(f, MAGIC, 20);
	memcpy(f + HEAD_SIZE, &n, 8);
	for (size_t i = 0; i < m->n_kept; i++) {
		const struct rec *r = &m->kept[i];
		unsigned nsec = r->nsec, len = (unsigned)r->len;

		memcpy(f + off, &r->dev, 8);
		memcpy(f + off + 8, &r->ino, 8);
		memcpy(f + off + 16, &r->sec, 8);
		memcpy(f + off + 24, &nsec, 4);
		memcpy(f + off + 28, &len, 4);
		memcpy(f + off + ENTRY_SIZE, r->buf, r->len);
		off += ENTRY_SIZE + (r->len + 7) / 8 * 8;
	}
	chacha20(m->key, (const unsigned char *)f + 20, (unsigned char *)f + HEAD_SIZE,
		 off - HEAD_SIZE);
	mac = siphash(m->key + 32, f, off);
	memcpy(f + off, &mac, 8);
	*out = f;
	return size;
}

/* The memo files of M's directory that no scan used for MEMO_UNUSED_S (a
 * scan that reads one keeps it new: it is written at every change), and
 * what a write that never ended left, removed. */
static void
memo_prune(const struct scan_memo *m)
{
	int fd = openat(m->dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	time_t now = time(NULL);
	struct dirent *e;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((e = readdir(d))) {
		/* Any version's: "scan2-...", ".scan2-....XXXXXX", "scan-...". */
		bool tmp = !strncmp(e->d_name, ".scan", 5);
		struct stat st;

		if ((tmp || !strncmp(e->d_name, "scan", 4)) &&
		    fstatat(m->dir, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISREG(st.st_mode) && now - st.st_mtime > (tmp ? TMP_LEFT_S : MEMO_UNUSED_S))
			unlinkat(m->dir, e->d_name, 0);
	}
	closedir(d);
}

/* The file replaced by what M kept, at once (a new file renamed over it). */
static void
memo_write(const struct scan_memo *m)
{
	char tmp[96], *f = NULL;
	unsigned char rnd[6];
	size_t size = memo_build(m, &f), done = 0;
	int fd;

	if (!size || getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) {
		free(f);
		return;
	}
	snprintf(tmp, sizeof(tmp), ".%s.%02x%02x%02x%02x%02x%02x", m->name, rnd[0], rnd[1], rnd[2],
		 rnd[3], rnd[4], rnd[5]);
	fd = openat(m->dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd >= 0) {
		ssize_t w = 0;

		while (done < size && (w = write(fd, f + done, size - done)) > 0)
			done += (size_t)w;
		if (close(fd) < 0 || done != size || renameat(m->dir, tmp, m->dir, m->name) < 0)
			unlinkat(m->dir, tmp, 0);
		else
			memo_prune(m);
	}
	free(f);
}

void
scan_memo_drop(struct scan_memo *m)
{
	if (m && m->dir >= 0)
		unlinkat(m->dir, m->name, 0);
	scan_memo_close(m, false);
}

void
scan_memo_close(struct scan_memo *m, bool save)
{
	if (!m)
		return;
	if (save && m->fresh && m->dir >= 0)
		memo_write(m);
	for (size_t i = 0; i < m->n_kept; i++)
		if (m->kept[i].owned)
			free((char *)m->kept[i].buf);
	free(m->kept);
	free(m->old);
	free(m->table);
	free(m->file);
	if (m->dir >= 0)
		close(m->dir);
	explicit_bzero(m->key, sizeof(m->key));
	free(m);
}
