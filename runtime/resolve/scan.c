/*
 * scan.c - the dotfile scan: an iterative, breadth-first walk that reads
 * directories with getdents64() and classifies entries by d_type.
 *
 * Every directory still to be listed is a struct dir_rec in one growing
 * array; dirs[head..n_dirs) is the main queue.  node_modules, .venv and
 * .mypy_cache wait in a second queue and move to the main one, one at a
 * time, only when it is empty.  All paths live in one growing text
 * buffer and are referred to by offset, so nothing is allocated per entry.
 *
 * Directories are opened with openat() relative to their parent's
 * descriptor and O_NOFOLLOW, so a path the scan reports never went
 * through a symlink.  Descriptors are cached in FD_SLOTS slots keyed by
 * depth: breadth-first order lists the children of one parent one after
 * another, so the parent's slot usually hits, and at most FD_SLOTS
 * descriptors are open however deep or wide the tree is.
 *
 * Another process may rename directories while the scan runs (a second
 * sandbox writing the same workspace).  A directory opened by name must be
 * the one its parent's listing named (the entry's inode; not on overlayfs,
 * whose entries may not say), one reopened the one listed there, and no
 * directory is listed twice: otherwise a directory renamed, or two names
 * exchanged, after the parent was listed could have the scan list a decoy
 * in its place and never the directory itself, whose dotfiles would go
 * unmasked.  Any of these ends the scan with an error: nothing runs.
 *
 * A recursive scan offers each directory it queues to a second thread
 * (scan_ahead.h), which lists the queue from the back.  Every check above
 * is still made here, on this thread's own descriptor; only the bytes of
 * a listing may come from there, and only for the device and inode that
 * descriptor is.
 */
#include "runtime/resolve/scan.h"
#include "runtime/resolve/scan_ahead.h"
#include "runtime/resolve/scan_memo.h"

#include "compiler/decide/hidden.h"

#include "compiler/base/textesc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define DENTS_BUF_SIZE (128u << 10)
/* With a memo, the directories it lacks before the second thread starts:
 * a directory or two changed between launches (the workspace's own, where
 * the agent writes) cost less read here than a thread does. */
#define AHEAD_AFTER 4
#define FD_SLOTS 16
#define UNFINISHED_SHOWN 10
#define NO_PARENT SIZE_MAX
#define OPEN_DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
/* A d_type for "nothing to record" (gone, or cannot tell): no DT_* has it. */
#define TYPE_SKIP 255

/* One record as getdents64() lays it out. */
struct dent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

struct dir_rec {
	size_t path;   /* offset of its NUL-terminated path in scan.text */
	size_t len;    /* length of that path */
	size_t name;   /* offset of the basename within the path */
	size_t parent; /* index in scan.dirs, or NO_PARENT for a root */
	size_t depth;  /* 0 for a root */
	size_t root;   /* a root's index in the caller's roots */
	bool strict;   /* below a directory o->keep kept: all is hidden unless kept */
	/* The inode its parent's listing gave the name (0: not to be checked:
	 * a root, or a file system whose listings may not say). */
	unsigned long long entry_ino;
	/* Once listed: its entries, how many of them are hidden (a hit, or a
	 * subdirectory whose entries all are), its device and inode. */
	bool listed;
	size_t n_entries, n_hidden;
	unsigned long long dev, ino;
};

struct hit_rec {
	size_t path;
	enum scan_kind kind;
	unsigned long long dir_dev, dir_ino;
};

struct offsets {
	size_t *v;
	size_t n, cap;
};

struct scan {
	const struct scan_options *o;
	uint64_t limit, visited;
	bool overflowed;
	size_t cut; /* on overflow: the directory whose listing was cut short */

	char *text;
	size_t text_len, text_cap;
	struct dir_rec *dirs;
	size_t n_dirs, cap_dirs, head;
	struct dir_rec *later; /* the deferred queue */
	size_t n_later, cap_later, later_head;
	struct dir_rec *kids; /* subdirectories of the directory being listed */
	size_t n_kids, cap_kids;
	size_t *chain; /* scratch for dir_open() */
	size_t n_chain, cap_chain;

	struct hit_rec *hits;
	size_t n_hits, cap_hits;
	struct hit_rec *named;
	size_t n_named, cap_named;
	/* Directories hidden whole unlisted (unreadable, or left by the cap):
	 * their own device and inode, where the scan knows them. */
	struct hit_rec *ids;
	size_t n_ids, cap_ids;
	struct offsets symlinks, unreadable, skipped_roots;
	unsigned long long cur_dev, cur_ino; /* the directory being listed */
	bool cur_ino_exact; /* its listing's inodes are its entries' (not overlayfs) */

	const char **roots; /* sorted, deduplicated: for scan_is_root() */
	size_t n_roots;
	const char *const *root_paths; /* the caller's, by dir_rec.root */
	struct scan_ahead *ahead;      /* a thread listing the queue from the back, or NULL */
	struct {
		size_t dir;
		int fd;
	} slots[FD_SLOTS];
	/* The directories listed, by device and inode: an open-addressed set
	 * of SEEN_CAP entries (a power of two), {0, 0} for a free one. */
	unsigned long long (*seen)[2];
	size_t n_seen, seen_cap;
	char *dents;
	char *ahead_buf; /* the listing scan_ahead_take() gave for the directory being listed */
	size_t ahead_len, listed_ahead;
	struct scan_memo *memo; /* the listings kept from the last scan and for the next, or NULL */
	bool ahead_later;	/* the thread starts once the memo lacks AHEAD_AFTER directories */
	size_t memo_misses;
	char *whole; /* the listing being read, kept whole for the memo */
	size_t whole_len, whole_cap, memo_hits;

	char *err;
	size_t errlen;
	int errnum;
};

static const char *const deferred_names[] = {"node_modules", ".venv", ".mypy_cache"};

/*
 * Make room for NEED elements of SIZE bytes in the array that ARRP points
 * to (any object pointer), whose capacity is *CAP.  0, or -1 when out of
 * memory.  memcpy moves the pointer so that no type is accessed as another.
 */
static int
reserve(void *arrp, size_t need, size_t *cap, size_t size)
{
	size_t n = *cap ? *cap : 64;
	void *p;

	if (need <= *cap)
		return 0;
	while (n < need) {
		if (n > SIZE_MAX / 4 / size)
			return -1;
		n *= 2;
	}
	memcpy(&p, arrp, sizeof(p));
	p = realloc(p, n * size);
	if (!p)
		return -1;
	memcpy(arrp, &p, sizeof(p));
	*cap = n;
	return 0;
}

/* A directory name as an error shows it (textesc.h): the agent named it. */
struct shown {
	char text[4 * PATH_MAX];
};

static const char *
scan_shown(struct shown *b, const char *path)
{
	text_escape(b->text, sizeof(b->text), path, strlen(path), 0);
	return b->text;
}

#define RESERVE(arr, need, cap) reserve(&(arr), (need), &(cap), sizeof(*(arr)))

static int __attribute__((format(printf, 3, 4)))
scan_fail(struct scan *s, int errnum, const char *fmt, ...)
{
	va_list ap;

	s->errnum = errnum;
	if (s->errlen == 0)
		return -1;
	va_start(ap, fmt);
	vsnprintf(s->err, s->errlen, fmt, ap);
	va_end(ap);
	return -1;
}

static int
scan_nomem(struct scan *s)
{
	return scan_fail(s, ENOMEM, "dotfile scan: out of memory");
}

static int
scan_push_offset(struct scan *s, struct offsets *list, size_t off)
{
	if (RESERVE(list->v, list->n + 1, list->cap) < 0)
		return scan_nomem(s);
	list->v[list->n++] = off;
	return 0;
}

/* Append PARENT/NAME (NAME_LEN bytes) to the text; its offset in *OFF. */
static int
scan_add_path(struct scan *s, const struct dir_rec *parent, const char *name, size_t name_len,
	      size_t *off)
{
	/* The root "/" already ends in a slash. */
	size_t sep = parent->len > 1, len = parent->len + sep + name_len;

	if (RESERVE(s->text, s->text_len + len + 1, s->text_cap) < 0)
		return scan_nomem(s);
	*off = s->text_len;
	memcpy(s->text + *off, s->text + parent->path, parent->len);
	s->text[*off + parent->len] = '/';
	memcpy(s->text + *off + parent->len + sep, name, name_len);
	s->text[*off + len] = '\0';
	s->text_len += len + 1;
	return 0;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/*
 * Whether PATH is one of the roots.  A root inside another root is listed
 * as a root of its own; reaching it again from above would list it twice,
 * and reporting it as a hit would mask a directory the user granted.
 */
static bool
scan_is_root(const struct scan *s, const char *path)
{
	return s->n_roots > 1 &&
	       bsearch(&path, s->roots, s->n_roots, sizeof(*s->roots), cmp_str) != NULL;
}


static bool
is_deferred(const char *name)
{
	for (size_t i = 0; i < sizeof(deferred_names) / sizeof(*deferred_names); i++)
		if (strcmp(deferred_names[i], name) == 0)
			return true;
	return false;
}

/* The cached descriptor of dirs[J], or -1. */
static int
slot_get(const struct scan *s, size_t j)
{
	size_t k = s->dirs[j].depth % FD_SLOTS;

	return s->slots[k].dir == j ? s->slots[k].fd : -1;
}

/* Put FD, the descriptor of dirs[J], in its cache slot; close the one it replaces. */
static void
slot_set(struct scan *s, size_t j, int fd)
{
	size_t k = s->dirs[j].depth % FD_SLOTS;

	if (s->slots[k].fd >= 0)
		close(s->slots[k].fd);
	s->slots[k].fd = fd;
	s->slots[k].dir = j;
}

/* Is FD the directory with device DEV and inode INO? */
static bool
same_dir(int fd, unsigned long long dev, unsigned long long ino)
{
	struct stat st;

	return fstat(fd, &st) == 0 && (unsigned long long)st.st_dev == dev &&
	       (unsigned long long)st.st_ino == ino;
}

/*
 * Add the directory DEV:INO to the set of those listed: 1, or 0 when it was
 * there already, or -1 without memory.
 */
static int
seen_add(struct scan *s, unsigned long long dev, unsigned long long ino)
{
	size_t k;

	if (2 * (s->n_seen + 1) > s->seen_cap) {
		size_t cap = s->seen_cap ? 2 * s->seen_cap : 1024;
		unsigned long long (*v)[2] = calloc(cap, sizeof(*v)), (*old)[2] = s->seen;

		if (!v)
			return -1;
		s->seen = v;
		s->seen_cap = cap;
		s->n_seen = 0;
		for (size_t i = 0; old && i < cap / 2; i++)
			if (old[i][0] || old[i][1])
				seen_add(s, old[i][0], old[i][1]);
		free(old);
	}
	k = (size_t)((dev * 0x9e3779b97f4a7c15ull) ^ (ino * 0xc2b2ae3d27d4eb4full)) &
	    (s->seen_cap - 1);
	for (;; k = (k + 1) & (s->seen_cap - 1)) {
		if (!s->seen[k][0] && !s->seen[k][1])
			break;
		if (s->seen[k][0] == dev && s->seen[k][1] == ino)
			return 0;
	}
	s->seen[k][0] = dev;
	s->seen[k][1] = ino;
	s->n_seen++;
	return 1;
}

/*
 * A fresh descriptor for dirs[I], positioned at its first entry, or a
 * negative errno.  It belongs to the cache; do not close it.  Ancestors
 * whose descriptors were evicted are reopened one component at a time
 * from the nearest cached one, never by a multi-component path that
 * could cross a symlink; only a root is opened by its absolute path,
 * which the caller vouched for.
 */
static int
dir_open(struct scan *s, size_t i)
{
	size_t j = i;
	int fd;

	s->n_chain = 0;
	do {
		if (RESERVE(s->chain, s->n_chain + 1, s->cap_chain) < 0)
			return -ENOMEM;
		s->chain[s->n_chain++] = j;
		j = s->dirs[j].parent;
	} while (j != NO_PARENT && slot_get(s, j) < 0);
	fd = j == NO_PARENT ? AT_FDCWD : slot_get(s, j);

	while (s->n_chain > 0) {
		size_t k = s->chain[--s->n_chain];
		const struct dir_rec *d = &s->dirs[k];
		const char *path = s->text + d->path;

		if (d->parent == NO_PARENT && s->o->root_fds && s->o->root_fds[d->root] >= 0)
			/* The caller's descriptor: the directory it will mount. */
			fd = openat(s->o->root_fds[d->root], ".", OPEN_DIR_FLAGS);
		else
			fd = openat(fd, d->parent == NO_PARENT ? path : path + d->name,
				    OPEN_DIR_FLAGS);
		if (fd < 0)
			return -errno;
		slot_set(s, k, fd);
		if (d->listed && !same_dir(fd, d->dev, d->ino))
			return -ESTALE;
	}
	return fd;
}

/* The directory at PATH (an offset) is DEV:INO; nothing when INO is 0. */
static int
scan_id(struct scan *s, size_t path, unsigned long long dev, unsigned long long ino)
{
	if (!ino)
		return 0;
	if (RESERVE(s->ids, s->n_ids + 1, s->cap_ids) < 0)
		return scan_nomem(s);
	s->ids[s->n_ids++] = (struct hit_rec){path, SCAN_DIR, dev, ino};
	return 0;
}

/*
 * Is DEV another device than the one of dirs[D]'s parent (known since it
 * was opened, before its listing gave D)?  Then
 * dirs[D] is a mount point or the root of a Btrfs subvolume (a device of
 * its own without a mount), whose inode its parent's listing does not
 * give; no rename brings a directory in from another device (EXDEV).
 */
static bool
other_device(const struct scan *s, const struct dir_rec *d, unsigned long long dev)
{
	return d->parent != NO_PARENT && s->dirs[d->parent].dev && s->dirs[d->parent].dev != dev;
}

/*
 * D, a directory that was not listed, is what is at its name now (FD, or
 * AT_FDCWD for the whole path: no symlink on the way is followed at the
 * end, and omnibox-init opens none), as long as that is the inode its
 * parent's listing gave, or a mount point (the listing gave the inode
 * under it): scan_id().  Anything else is a rename racing the scan.
 */
static int
scan_id_unlisted(struct scan *s, const struct dir_rec *d, int fd, const char *name)
{
	struct statx sx;
	struct shown b;
	bool mount_point;

	if (d->parent == NO_PARENT || !d->entry_ino)
		return 0;
	if (statx(fd, name, AT_SYMLINK_NOFOLLOW | AT_STATX_DONT_SYNC, STATX_TYPE | STATX_INO,
		  &sx) < 0 ||
	    !S_ISDIR(sx.stx_mode))
		goto raced;
	mount_point = ((sx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) &&
		       (sx.stx_attributes & STATX_ATTR_MOUNT_ROOT)) ||
		      other_device(s, d, makedev(sx.stx_dev_major, sx.stx_dev_minor));
	if (!mount_point && sx.stx_ino != d->entry_ino)
		goto raced;
	return scan_id(s, d->path, (unsigned long long)makedev(sx.stx_dev_major, sx.stx_dev_minor),
		       sx.stx_ino);
raced:
	return scan_fail(s, ESTALE,
			 "dotfile scan: %s is no longer the directory its parent listed (renamed "
			 "by another process while it ran?)",
			 scan_shown(&b, s->text + d->path));
}

/* dirs[I] could not be opened: decide whether that matters. */
static int
scan_open_failed(struct scan *s, size_t i, int errnum)
{
	const struct dir_rec *d = &s->dirs[i];
	const char *path = s->text + d->path;

	if (errnum == EACCES || errnum == EPERM) {
		int up = d->parent == NO_PARENT ? -1 : slot_get(s, d->parent);

		if (scan_id_unlisted(s, d, up >= 0 ? up : AT_FDCWD,
				     up >= 0 ? path + d->name : path) < 0)
			return -1;
		return scan_push_offset(s, &s->unreadable, d->path);
	}
	if (errnum == ESTALE) {
		struct shown b;

		return scan_fail(s, errnum,
				 "dotfile scan: %s is no longer the directory it listed there (renamed "
				 "by another process while it ran?)",
				 scan_shown(&b, path));
	}
	if (errnum == ENOENT || errnum == ENOTDIR || errnum == ELOOP) {
		struct shown b;

		/*
		 * A root that is missing, a file or a symlink is the caller's
		 * to report.  A subdirectory that has gone, or has become a
		 * file or a symlink, since its parent was listed may have been
		 * renamed to a name the listing never saw, with its dotfiles.
		 */
		if (d->parent == NO_PARENT)
			return scan_push_offset(s, &s->skipped_roots, d->path);
		return scan_fail(s, ESTALE,
				 "dotfile scan: %s went away while it ran (renamed or removed by "
				 "another process?)",
				 scan_shown(&b, path));
	}
	/*
	 * Anything else (EIO, EMFILE, ...) fails the scan: a subtree skipped
	 * without a word could hold a secret that would then stay visible.
	 */
	if (errnum == ENOMEM)
		return scan_nomem(s);
	struct shown b;

	return scan_fail(s, errnum, "dotfile scan: cannot open %s: %s", scan_shown(&b, path),
			 strerror(errnum));
}

/* The DT_* type of NAME in the directory DIRFD, for file systems that do not say. */
static int
scan_stat_type(struct scan *s, size_t i, int dirfd, const char *name, unsigned char *type)
{
	struct stat st;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (errno == ENOENT) {
			*type = TYPE_SKIP;
			return 0;
		}
		if (errno == EACCES) {
			/*
			 * Readable but not searchable: we cannot tell what the
			 * entries are, and the agent cannot reach them either.
			 * Record the directory once, for the caller to report.
			 */
			*type = TYPE_SKIP;
			if (s->unreadable.n > 0 &&
			    s->unreadable.v[s->unreadable.n - 1] == s->dirs[i].path)
				return 0;
			if (scan_id(s, s->dirs[i].path, s->cur_dev, s->cur_ino) < 0)
				return -1;
			return scan_push_offset(s, &s->unreadable, s->dirs[i].path);
		}
		struct shown b, n;

		return scan_fail(s, errno, "dotfile scan: cannot stat %s/%s: %s",
				 scan_shown(&b, s->text + s->dirs[i].path), scan_shown(&n, name),
				 strerror(errno));
	}
	*type = IFTODT(st.st_mode);
	return 0;
}

/* NAME, of type TYPE in dirs[I], starts with '.' and is not allowed. */
static int
scan_hidden(struct scan *s, size_t i, const char *name, unsigned char type)
{
	size_t off;

	if (scan_add_path(s, &s->dirs[i], name, strlen(name), &off) < 0)
		return -1;
	if (scan_is_root(s, s->text + off)) {
		s->text_len = off;
		return 0;
	}
	/*
	 * A bind mount onto a symlink fails in bwrap, and the link's target
	 * is either outside the sandbox or scanned where it lives; the
	 * caller only logs these.
	 */
	if (type == DT_LNK)
		return scan_push_offset(s, &s->symlinks, off);
	if (RESERVE(s->hits, s->n_hits + 1, s->cap_hits) < 0)
		return scan_nomem(s);
	s->dirs[i].n_hidden++;
	s->hits[s->n_hits].path = off;
	s->hits[s->n_hits].dir_dev = s->cur_dev;
	s->hits[s->n_hits].dir_ino = s->cur_ino;
	s->hits[s->n_hits].kind = type == DT_DIR   ? SCAN_DIR
				  : type == DT_REG ? SCAN_FILE
						   : SCAN_OTHER;
	s->n_hits++;
	return 0;
}

/* Does o->keep keep NAME, of TYPE, in dirs[I] (FD)?  1, 0, or -1 (out of memory). */
static int
scan_kept(struct scan *s, size_t i, int fd, const char *name, unsigned char type)
{
	size_t off;
	bool keep;

	if (scan_add_path(s, &s->dirs[i], name, strlen(name), &off) < 0)
		return -1;
	keep = s->o->keep(s->o->keep_arg, s->text + off, fd, name, type);
	s->text_len = off; /* the path was for the question only */
	return keep;
}

/* NAME (NULL: dirs[I] itself), of kind KIND, in dirs[I] (FD) goes in named,
 * with its own device and inode. */
static int
scan_named(struct scan *s, size_t i, int fd, const char *name, enum scan_kind kind)
{
	struct stat st;
	size_t off;

	if (name) {
		if (scan_add_path(s, &s->dirs[i], name, strlen(name), &off) < 0)
			return -1;
	} else {
		off = s->dirs[i].path;
	}
	if (RESERVE(s->named, s->n_named + 1, s->cap_named) < 0)
		return scan_nomem(s);
	if (name ? fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 : fstat(fd, &st) < 0)
		memset(&st, 0, sizeof(st));
	s->named[s->n_named++] = (struct hit_rec){off, kind, (unsigned long long)st.st_dev,
						  (unsigned long long)st.st_ino};
	return 0;
}

static enum scan_kind
kind_of(unsigned char type)
{
	return type == DT_DIR ? SCAN_DIR : type == DT_REG ? SCAN_FILE : type == DT_LNK ? SCAN_LINK
										     : SCAN_OTHER;
}

/* Is PATH (NAME in the directory FD) a directory not to descend into? */
static bool
scan_pruned(const struct scan *s, int fd, const char *name, const char *path)
{
	const char *const *hit;
	struct stat st;
	size_t k;

	if (!s->o->n_prune ||
	    !(hit = bsearch(&path, s->o->prune, s->o->n_prune, sizeof(*s->o->prune), cmp_str)))
		return false;
	if (!s->o->prune_ids)
		return true;
	/* The one seen before, not another put at its path since. */
	k = (size_t)(hit - s->o->prune);
	return fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	       (unsigned long long)st.st_dev == s->o->prune_ids[k][0] &&
	       (unsigned long long)st.st_ino == s->o->prune_ids[k][1];
}

/* NAME (inode INO in the listing), a visible subdirectory of dirs[I] (FD),
 * is to be listed later; STRICT: a directory o->keep kept, or one below it. */
static int
scan_add_kid(struct scan *s, size_t i, int fd, const char *name, unsigned long long ino,
	     bool strict)
{
	const struct dir_rec *d = &s->dirs[i];
	size_t off;

	if (scan_add_path(s, d, name, strlen(name), &off) < 0)
		return -1;
	if (scan_is_root(s, s->text + off) || scan_pruned(s, fd, name, s->text + off)) {
		s->text_len = off;
		return 0;
	}
	if (RESERVE(s->kids, s->n_kids + 1, s->cap_kids) < 0)
		return scan_nomem(s);
	s->kids[s->n_kids++] = (struct dir_rec){
	    .path = off,
	    .len = s->text_len - 1 - off,
	    .name = d->len + (d->len > 1),
	    .parent = i,
	    .depth = d->depth + 1,
	    .root = d->root,
	    .strict = strict,
	    .entry_ino = s->cur_ino_exact ? ino : 0,
	};
	return 0;
}

static int
cmp_kid(const void *a, const void *b, void *text)
{
	const struct dir_rec *x = a, *y = b;

	return strcmp((const char *)text + x->path + x->name,
		      (const char *)text + y->path + y->name);
}

/*
 * Queue the subdirectories just found, sorted by name so that which
 * directories a capped scan reaches does not depend on the order the
 * file system returns entries in.
 */
/* dirs[I], just queued, offered to the thread that lists ahead (scan_ahead.h). */
static void
scan_offer(struct scan *s, size_t i)
{
	const struct dir_rec *d = &s->dirs[i];
	size_t rlen;

	if (!s->ahead)
		return;
	rlen = strlen(s->root_paths[d->root]);
	/* Without memory it is not offered: the scan lists it, as any. */
	(void)scan_ahead_offer(s->ahead, i, s->o->root_fds ? s->o->root_fds[d->root] : -1,
			       s->text + d->path, d->len <= rlen ? d->len : rlen + (rlen > 1));
}

static int
scan_queue_kids(struct scan *s)
{
	if (s->n_kids == 0)
		return 0;
	qsort_r(s->kids, s->n_kids, sizeof(*s->kids), cmp_kid, s->text);
	if (RESERVE(s->dirs, s->n_dirs + s->n_kids, s->cap_dirs) < 0 ||
	    RESERVE(s->later, s->n_later + s->n_kids, s->cap_later) < 0)
		return scan_nomem(s);
	for (size_t k = 0; k < s->n_kids; k++) {
		const struct dir_rec *kid = &s->kids[k];

		if (is_deferred(s->text + kid->path + kid->name)) {
			s->later[s->n_later++] = *kid;
		} else {
			s->dirs[s->n_dirs++] = *kid;
			scan_offer(s, s->n_dirs - 1);
		}
	}
	s->n_kids = 0;
	return 0;
}

/* Is FD the root of a mount? */
static bool
mount_root(int fd)
{
	struct statx sx;

	return statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_INO, &sx) == 0 &&
	       (sx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) &&
	       (sx.stx_attributes & STATX_ATTR_MOUNT_ROOT);
}

/* N more bytes of the listing being read, for the memo: false when they
 * cannot be kept (the listing is then not). */
static bool
whole_add(struct scan *s, const char *buf, size_t n)
{
	if (RESERVE(s->whole, s->whole_len + n, s->whole_cap) < 0)
		return false;
	memcpy(s->whole + s->whole_len, buf, n);
	s->whole_len += n;
	return true;
}

/*
 * N entries of dirs[I] the memo left out, counted as the loop in
 * scan_list() counts entries it only counts: -1 when the cap is reached
 * before all N are (the scan has overflowed there), else 0.
 */
static int
count_skipped(struct scan *s, size_t i, uint64_t n)
{
	uint64_t room = s->visited < s->limit ? s->limit - s->visited : 0;

	if (s->dirs[i].depth > 0 && n > room) {
		s->visited += room;
		s->dirs[i].n_entries += room;
		s->overflowed = true;
		s->cut = i;
		return -1;
	}
	s->visited += n;
	s->dirs[i].n_entries += n;
	return 0;
}

/*
 * The whole listing of dirs[I] (descriptor FD, status ST, on a file system
 * of type FS_TYPE) made elsewhere, *LEN bytes: the one the last scan kept
 * of this very directory unchanged (scan_memo.h), or the one the other
 * thread made of it (then in s->ahead_buf).  NULL: it is read here, as ever.
 */
static const char *
listing_kept(struct scan *s, size_t i, int fd, const struct stat *st, long fs_type, size_t *len)
{
	const char *memo;

	free(s->ahead_buf);
	s->ahead_buf = scan_ahead_take(s->ahead, i, s->cur_dev, s->cur_ino, &s->ahead_len);
	/* A directory below one kept, and a scan that reports a name not
	 * starting with '.', see every name: the memo leaves some out. */
	memo = s->dirs[i].strict || (s->o->report_name && s->o->report_name[0] != '.')
		   ? NULL
		   : scan_memo_find(s->memo, fd, st, fs_type, len);
	if (memo) {
		free(s->ahead_buf);
		s->ahead_buf = NULL;
		s->memo_hits++;
		return memo;
	}
	if (s->ahead_later && ++s->memo_misses == AHEAD_AFTER) {
		/* The tree changed since the memo: the rest is listed from both
		 * ends, as without one. */
		s->ahead_later = false;
		s->ahead = scan_ahead_start(s->memo);
		for (size_t j = i + 1; j < s->n_dirs; j++)
			scan_offer(s, j);
	}
	s->listed_ahead += s->ahead_buf != NULL;
	*len = s->ahead_len;
	return s->ahead_buf;
}

/* List dirs[I]: record its hidden entries and queue its subdirectories. */
static int
scan_list(struct scan *s, size_t i)
{
	unsigned git_parts = 0;
	bool strict = s->dirs[i].strict;
	bool recursive = s->o->recursive || strict;
	int fd = dir_open(s, i), kept;
	struct stat st;
	struct shown b;
	const char *listing;
	size_t listing_len;
	long fs_type;
	bool whole = s->memo != NULL; /* the listing read here kept whole, for the memo */

	if (fd < 0)
		return scan_open_failed(s, i, -fd);
	/* Which directory the hits below were found in, for the launch to check
	 * that each mask went where the scan saw its file. */
	if (fstat(fd, &st) < 0)
		return scan_fail(s, errno, "dotfile scan: cannot stat %s: %s",
				 scan_shown(&b, s->text + s->dirs[i].path), strerror(errno));
	s->cur_dev = (unsigned long long)st.st_dev;
	s->cur_ino = (unsigned long long)st.st_ino;
	/* The one its parent's listing named (a mount point or a subvolume
	 * there hides the inode the listing gave, and nothing renames one in). */
	if (s->dirs[i].entry_ino && s->dirs[i].parent != NO_PARENT &&
	    s->cur_ino != s->dirs[i].entry_ino && !other_device(s, &s->dirs[i], s->cur_dev) &&
	    !mount_root(fd))
		return scan_fail(s, ESTALE,
				 "dotfile scan: %s is no longer the directory its parent listed "
				 "(renamed by another process while it ran?)",
				 scan_shown(&b, s->text + s->dirs[i].path));
	{
		struct statfs sf;

		fs_type = fstatfs(fd, &sf) == 0 ? (long)sf.f_type : 0;
		s->cur_ino_exact = fs_type && sf.f_type != OVERLAYFS_SUPER_MAGIC;
	}
	/* Known from here on, for the directories below it. */
	s->dirs[i].dev = s->cur_dev;
	s->dirs[i].ino = s->cur_ino;
	switch (seen_add(s, s->cur_dev, s->cur_ino)) {
	case -1:
		return scan_nomem(s);
	case 0:
		return scan_fail(s, ESTALE,
				 "dotfile scan: %s is a directory it listed already (renamed by "
				 "another process while it ran, or mounted twice?)",
				 scan_shown(&b, s->text + s->dirs[i].path));
	}
	listing = listing_kept(s, i, fd, &st, fs_type, &listing_len);
	s->whole_len = 0;
	for (int pass = 0;; pass++) {
		const char *buf = listing ? listing : s->dents;
		ssize_t n = !listing	? getdents64(fd, s->dents, DENTS_BUF_SIZE)
			    : pass == 0 ? (ssize_t)listing_len
					: 0;

		if (n == 0) {
			/* HEAD, and objects and refs, or a commondir file naming
			 * where they are: git takes it for a repository (its
			 * config, or the common directory's, is obeyed),
			 * whatever its name. */
			if ((git_parts & 1u) && ((git_parts & 6u) == 6u || (git_parts & 8u)) &&
			    scan_named(s, i, fd, NULL, SCAN_GITDIR) < 0)
				return -1;
			s->dirs[i].listed = true;
			s->dirs[i].dev = s->cur_dev;
			s->dirs[i].ino = s->cur_ino;
			if (whole)
				scan_memo_keep(s->memo, fd, &st, fs_type,
					       listing ? listing : s->whole,
					       listing ? listing_len : s->whole_len);
			break;
		}
		if (n < 0)
			return scan_fail(s, errno, "dotfile scan: cannot list %s: %s",
					 scan_shown(&b, s->text + s->dirs[i].path),
					 strerror(errno));
		if (whole && buf == s->dents)
			whole = whole_add(s, s->dents, (size_t)n);
		for (ssize_t off = 0; off < n;) {
			const struct dent64 *d = (const struct dent64 *)(buf + off);
			const char *name = d->d_name;
			unsigned char type = d->d_type;
			bool hidden = false;

			off += d->d_reclen;
			/* The memo's: entries a scan only counts (scan_memo.h). */
			if (type == SCAN_MEMO_SKIPPED && buf == listing) {
				if (count_skipped(s, i, (uint64_t)d->d_off) < 0)
					return scan_queue_kids(s);
				continue;
			}
			if (name[0] == '.') {
				if (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'))
					continue;
				hidden = hidden_name_in(s->o->allow, s->o->n_allow, name, strlen(name));
			}
			hidden |= strict;
			/*
			 * Overflow only when there is an entry the cap leaves
			 * unread: a tree of exactly max_entries is complete.  A
			 * root's own entries are all read, cap or not: a flood
			 * there must not hide a dotfile from the scan.
			 */
			if (s->visited >= s->limit && s->dirs[i].depth > 0) {
				s->overflowed = true;
				s->cut = i;
				return scan_queue_kids(s);
			}
			s->visited++;
			s->dirs[i].n_entries++;
			if (s->o->report_bare && strchr("Horc", name[0]))
				git_parts |= !strcmp(name, "HEAD")	  ? 1u
					     : !strcmp(name, "objects")	  ? 2u
					     : !strcmp(name, "refs")	  ? 4u
					     : !strcmp(name, "commondir") ? 8u
									  : 0u;
			/* The common case, a visible file, costs nothing more. */
			if (!hidden && (!recursive || (type != DT_DIR && type != DT_UNKNOWN)) &&
			    !(s->o->report_name && !strcasecmp(name, s->o->report_name)))
				continue;
			if (type == DT_UNKNOWN && scan_stat_type(s, i, fd, name, &type) < 0)
				return -1;
			if (type == TYPE_SKIP)
				continue;
			if (s->o->report_name && !strcasecmp(name, s->o->report_name)) {
				if (scan_named(s, i, fd, name, kind_of(type)) < 0)
					return -1;
				if (s->o->stop_at_named && !hidden)
					continue;
			}
			if (hidden && s->o->keep && type != DT_LNK &&
			    (kept = scan_kept(s, i, fd, name, type)) != 0) {
				if (kept < 0)
					return -1;
				if (type == DT_DIR &&
				    scan_add_kid(s, i, fd, name, d->d_ino, true) < 0)
					return -1;
			} else if (hidden) {
				if (scan_hidden(s, i, name, type) < 0)
					return -1;
			} else if (type == DT_DIR) {
				if (scan_add_kid(s, i, fd, name, d->d_ino, strict) < 0)
					return -1;
			}
		}
	}
	return scan_queue_kids(s);
}

static int
scan_walk(struct scan *s)
{
	while (!s->overflowed) {
		if (s->head == s->n_dirs) {
			if (s->later_head == s->n_later)
				return 0;
			/* The main queue is empty: one deferred directory joins it. */
			if (RESERVE(s->dirs, s->n_dirs + 1, s->cap_dirs) < 0)
				return scan_nomem(s);
			s->dirs[s->n_dirs++] = s->later[s->later_head++];
			scan_offer(s, s->n_dirs - 1);
		}
		if (scan_list(s, s->head++) < 0)
			return -1;
	}
	return 0;
}

/* "/", or absolute with no empty, "." or ".." component and no trailing slash. */
static bool
is_canonical(const char *p)
{
	if (p[0] != '/')
		return false;
	if (p[1] == '\0')
		return true;
	for (const char *c = p; *c == '/'; c = c + 1 + strcspn(c + 1, "/")) {
		size_t n = strcspn(c + 1, "/");

		if (n == 0 || (c[1] == '.' && (n == 1 || (n == 2 && c[2] == '.'))))
			return false;
	}
	return true;
}

static int
scan_add_roots(struct scan *s, const char *const *roots, size_t n_roots)
{
	struct shown b;

	s->roots = malloc((n_roots ? n_roots : 1) * sizeof(*s->roots));
	if (!s->roots)
		return scan_nomem(s);
	s->root_paths = roots;
	for (size_t i = 0; i < n_roots; i++) {
		size_t len = strlen(roots[i]);
		bool dup = false;

		if (!is_canonical(roots[i]))
			return scan_fail(
			    s, EINVAL,
			    "dotfile scan: root \"%s\" is not an absolute canonical path",
			    scan_shown(&b, roots[i]));
		for (size_t j = 0; j < i && !dup; j++)
			dup = strcmp(roots[i], roots[j]) == 0;
		if (dup)
			continue;
		/* Queued in the caller's order; the first root gets the budget first. */
		if (RESERVE(s->dirs, s->n_dirs + 1, s->cap_dirs) < 0 ||
		    RESERVE(s->text, s->text_len + len + 1, s->text_cap) < 0)
			return scan_nomem(s);
		memcpy(s->text + s->text_len, roots[i], len + 1);
		s->dirs[s->n_dirs++] = (struct dir_rec){.path = s->text_len,
							.len = len,
							.name = 0,
							.parent = NO_PARENT,
							.depth = 0,
							.root = i};
		s->text_len += len + 1;
		s->roots[s->n_roots++] = roots[i];
		scan_offer(s, s->n_dirs - 1);
	}
	qsort(s->roots, s->n_roots, sizeof(*s->roots), cmp_str);
	return 0;
}

static int
cmp_hit(const void *a, const void *b)
{
	return strcmp(((const struct scan_hit *)a)->path, ((const struct scan_hit *)b)->path);
}

/* The paths at LIST as pointers into TEXT, sorted and unique unless KEEP_ORDER. */
static int
scan_export(struct scan *s, const struct offsets *list, bool keep_order, const char ***out,
	    size_t *n_out)
{
	const char **v = malloc((list->n ? list->n : 1) * sizeof(*v));
	size_t n = 0;

	if (!v)
		return scan_nomem(s);
	for (size_t i = 0; i < list->n; i++)
		v[i] = s->text + list->v[i];
	if (!keep_order)
		qsort(v, list->n, sizeof(*v), cmp_str);
	for (size_t i = 0; i < list->n; i++)
		if (keep_order || n == 0 || strcmp(v[n - 1], v[i]) != 0)
			v[n++] = v[i];
	*out = v;
	*n_out = n;
	return 0;
}

/* Directories left unlisted, in the order the scan would have reached them. */
static int
scan_collect_unfinished(struct scan *s, struct offsets *list)
{
	const struct dir_rec *cut = &s->dirs[s->cut];

	if (scan_push_offset(s, list, cut->path) < 0 || scan_id(s, cut->path, cut->dev, cut->ino) < 0)
		return -1;
	for (size_t i = s->head; i < s->n_dirs; i++)
		if (scan_push_offset(s, list, s->dirs[i].path) < 0 ||
		    scan_id_unlisted(s, &s->dirs[i], AT_FDCWD, s->text + s->dirs[i].path) < 0)
			return -1;
	for (size_t i = s->later_head; i < s->n_later; i++)
		if (scan_push_offset(s, list, s->later[i].path) < 0 ||
		    scan_id_unlisted(s, &s->later[i], AT_FDCWD, s->text + s->later[i].path) < 0)
			return -1;
	return 0;
}

static void
scan_error_overflow(struct scan *s, const struct scan_result *r)
{
	struct shown b;
	size_t len;

	s->errnum = EOVERFLOW;
	if (s->errlen == 0)
		return;
	snprintf(s->err, s->errlen,
		 "dotfile scan stopped after %" PRIu64
		 " entries (cwd_hidden_scan_max_entries) with %zu director%s unscanned: ",
		 s->visited, r->n_unfinished, r->n_unfinished == 1 ? "y" : "ies");
	for (size_t i = 0; i < r->n_unfinished && i < UNFINISHED_SHOWN; i++) {
		len = strlen(s->err);
		snprintf(s->err + len, s->errlen - len, "%s%s", i ? ", " : "",
			 scan_shown(&b, r->unfinished[i]));
	}
	len = strlen(s->err);
	if (r->n_unfinished > UNFINISHED_SHOWN)
		snprintf(s->err + len, s->errlen - len, " and %zu more",
			 r->n_unfinished - UNFINISHED_SHOWN);
	len = strlen(s->err);
	snprintf(s->err + len, s->errlen - len,
		 "; raise cwd_hidden_scan_max_entries or set cwd_hidden_scan_overflow: unlimited");
}

/*
 * The directories whose every entry is hidden, listed to their end: the
 * outermost ones into R.  Children come after their parent in dirs, so one
 * pass from the end settles each directory before its parent counts it.
 * Anything the walk did not settle (a directory not listed or cut short by
 * the cap, a kept entry, a hidden symlink, an entry gone or unreadable, a
 * root or a pruned directory below) leaves its parent out.
 */
static int
scan_all_hidden(struct scan *s, struct scan_result *r)
{
	bool *full = calloc(s->n_dirs ? s->n_dirs : 1, sizeof(*full));
	size_t n = 0;

	r->all_hidden = malloc((s->n_dirs ? s->n_dirs : 1) * sizeof(*r->all_hidden));
	if (!full || !r->all_hidden) {
		free(full);
		return scan_nomem(s);
	}
	for (size_t i = s->n_dirs; i-- > 0;) {
		const struct dir_rec *d = &s->dirs[i];

		full[i] = d->parent != NO_PARENT && d->listed && d->n_entries > 0 &&
			  d->n_hidden == d->n_entries;
		if (full[i])
			s->dirs[d->parent].n_hidden++;
	}
	for (size_t i = 0; i < s->n_dirs; i++) {
		const struct dir_rec *d = &s->dirs[i], *up;

		if (!full[i] || full[d->parent])
			continue;
		up = &s->dirs[d->parent];
		r->all_hidden[n++] =
		    (struct scan_hit){s->text + d->path, SCAN_DIR, up->dev, up->ino, d->dev, d->ino};
	}
	qsort(r->all_hidden, n, sizeof(*r->all_hidden), cmp_hit);
	r->n_all_hidden = n;
	free(full);
	return 0;
}

/* Move what the walk found into R. */
static int
scan_finish(struct scan *s, struct scan_result *r)
{
	struct offsets unfinished = {0};
	size_t n = 0;
	int rc = -1;

	r->overflowed = s->overflowed;
	r->visited = s->visited;
	r->listed_ahead = s->listed_ahead;
	r->hits = malloc((s->n_hits ? s->n_hits : 1) * sizeof(*r->hits));
	if (!r->hits)
		return scan_nomem(s);
	for (size_t i = 0; i < s->n_hits; i++)
		r->hits[i] = (struct scan_hit){s->text + s->hits[i].path, s->hits[i].kind,
					       s->hits[i].dir_dev, s->hits[i].dir_ino, 0, 0};
	qsort(r->hits, s->n_hits, sizeof(*r->hits), cmp_hit);
	for (size_t i = 0; i < s->n_hits; i++)
		if (n == 0 || strcmp(r->hits[n - 1].path, r->hits[i].path) != 0)
			r->hits[n++] = r->hits[i];
	r->n_hits = n;
	r->named = malloc((s->n_named ? s->n_named : 1) * sizeof(*r->named));
	if (!r->named)
		return scan_nomem(s);
	for (size_t i = 0; i < s->n_named; i++)
		r->named[i] = (struct scan_hit){s->text + s->named[i].path, s->named[i].kind,
						s->named[i].dir_dev, s->named[i].dir_ino, 0, 0};
	qsort(r->named, s->n_named, sizeof(*r->named), cmp_hit);
	r->n_named = s->n_named;
	if (scan_all_hidden(s, r) < 0)
		return -1;
	if (s->overflowed && scan_collect_unfinished(s, &unfinished) < 0)
		goto out;
	r->ids = malloc((s->n_ids ? s->n_ids : 1) * sizeof(*r->ids));
	if (!r->ids) {
		scan_nomem(s);
		goto out;
	}
	for (size_t i = 0; i < s->n_ids; i++)
		r->ids[i] = (struct scan_hit){s->text + s->ids[i].path, SCAN_DIR, 0, 0,
					      s->ids[i].dir_dev, s->ids[i].dir_ino};
	qsort(r->ids, s->n_ids, sizeof(*r->ids), cmp_hit);
	r->n_ids = s->n_ids;
	if (scan_export(s, &s->symlinks, false, &r->skipped_symlinks, &r->n_skipped_symlinks) < 0 ||
	    scan_export(s, &s->unreadable, false, &r->unreadable, &r->n_unreadable) < 0 ||
	    scan_export(s, &s->skipped_roots, false, &r->skipped_roots, &r->n_skipped_roots) < 0 ||
	    scan_export(s, &unfinished, true, &r->unfinished, &r->n_unfinished) < 0)
		goto out;
	r->text = s->text;
	s->text = NULL;
	rc = 0;
out:
	free(unfinished.v);
	return rc;
}

static void
scan_release(struct scan *s)
{
	for (size_t i = 0; i < FD_SLOTS; i++)
		if (s->slots[i].fd >= 0)
			close(s->slots[i].fd);
	free(s->text);
	free(s->dirs);
	free(s->later);
	free(s->kids);
	free(s->chain);
	free(s->hits);
	free(s->named);
	free(s->ids);
	free(s->symlinks.v);
	free(s->unreadable.v);
	free(s->skipped_roots.v);
	free(s->roots);
	free(s->dents);
	free(s->ahead_buf);
	free(s->whole);
	free(s->seen);
}

/* One scan of ROOTS as O says into OUT, with MEMO (or none): scan_run(). */
static int
scan_pass(const char *const *roots, size_t n_roots, const struct scan_options *o,
	  struct scan_memo *memo, struct scan_result *out, size_t *memo_hits, char *err,
	  size_t errlen)
{
	struct scan s = {.o = o, .err = err, .errlen = errlen, .memo = memo};
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if (errlen)
		err[0] = '\0';
	for (size_t i = 0; i < FD_SLOTS; i++)
		s.slots[i].fd = -1;
	s.limit = o->overflow == SCAN_UNLIMITED ? UINT64_MAX : o->max_entries;
	if (s.limit == 0) {
		scan_fail(&s, EINVAL, "dotfile scan: max_entries must be positive");
		goto out;
	}
	s.dents = malloc(DENTS_BUF_SIZE);
	if (!s.dents) {
		scan_nomem(&s);
		goto out;
	}
	/* A recursive scan lists from both ends of its queue, where a second
	 * CPU can; unless asked not to; with listings kept, once they lack a
	 * few directories (AHEAD_AFTER). */
	if (o->recursive && !o->alone && scan_memo_empty(memo))
		s.ahead = scan_ahead_start(memo);
	else if (o->recursive && !o->alone)
		s.ahead_later = true;
	if (scan_add_roots(&s, roots, n_roots) < 0 || scan_walk(&s) < 0) {
		scan_ahead_stop(s.ahead);
		goto out;
	}
	scan_ahead_stop(s.ahead);
	s.ahead = NULL;
	if (scan_finish(&s, out) < 0)
		goto out;
	out->memo_hits = s.memo_hits;
	if (s.overflowed && o->overflow == SCAN_ERROR) {
		scan_error_overflow(&s, out);
		goto out;
	}
	rc = 0;
out:
	*memo_hits = s.memo_hits;
	if (rc < 0)
		scan_result_free(out);
	scan_release(&s);
	if (rc < 0)
		errno = s.errnum;
	return rc;
}

int
scan_run(const char *const *roots, size_t n_roots, const struct scan_options *o,
	 struct scan_result *out, char *err, size_t errlen)
{
	struct scan_memo *memo = o->memo ? scan_memo_open(o->memo, roots, n_roots) : NULL;
	size_t hits = 0;
	int rc = scan_pass(roots, n_roots, o, memo, out, &hits, err, errlen);

	/* Failed with listings of the memo: whatever it was, it is not left to
	 * them.  The scan is made again without, and the memo goes. */
	if (rc < 0 && hits > 0) {
		scan_memo_drop(memo);
		return scan_pass(roots, n_roots, o, NULL, out, &hits, err, errlen);
	}
	scan_memo_close(memo, rc == 0);
	return rc;
}

void
scan_result_free(struct scan_result *r)
{
	free(r->hits);
	free(r->named);
	free(r->all_hidden);
	free(r->ids);
	free(r->skipped_symlinks);
	free(r->unreadable);
	free(r->skipped_roots);
	free(r->unfinished);
	free(r->text);
	memset(r, 0, sizeof(*r));
}

bool
scan_dir_id(const struct scan_result *r, const char *path, unsigned long long id[2])
{
	struct scan_hit key = {.path = path};
	const struct scan_hit *h = r->n_ids ? bsearch(&key, r->ids, r->n_ids, sizeof(*r->ids), cmp_hit)
					    : NULL;

	if (!h)
		return false;
	id[0] = h->self_dev;
	id[1] = h->self_ino;
	return true;
}
