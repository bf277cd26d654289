/*
 * scan_ahead.c - the thread that lists the dotfile scan's queue from the
 * back (scan_ahead.h).
 *
 * One mutex guards everything shared: the entries (one per queue index
 * offered), the stack of indices offered (the last on top: the thread
 * takes the newest first), the scan's position, and the bytes kept.  The
 * thread holds it only to choose a directory and to store a listing,
 * never while it reads one.  The scan never waits for the thread.
 */
#include "runtime/resolve/scan_ahead.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime/launch/elsewhere.h"
#include "runtime/resolve/scan_memo.h"

/* Listings kept for the scan at most, in bytes; one directory at most. */
#define HELD_MAX (32u << 20)
#define LISTING_MAX (1u << 20)
#define SCRATCH_SIZE (128u << 10)

enum state { UNOFFERED, OFFERED, LISTING, READY, TAKEN };

struct entry {
	char *path;
	size_t rel;
	int root_fd;
	enum state state;
	char *buf;
	size_t len;
	unsigned long long dev, ino;
};

struct scan_ahead {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct entry *v;
	size_t n, cap;
	size_t *stack;
	size_t n_stack, cap_stack;
	size_t head; /* the scan's index: nothing at or before it is listed here */
	bool started;
	size_t held;
	bool stop;
	pthread_t th;
	const struct scan_memo *memo; /* listings the scan takes from there, not read here */
};

/* The whole listing of E's directory (malloc'd, *LEN bytes), with its
 * device and inode; NULL when it cannot or need not be kept.  SCRATCH
 * (SCRATCH_SIZE bytes) takes each getdents64() in turn: the listing kept
 * is allocated at its size, as small blocks are, which come and go
 * without the heap being trimmed, and the other CPU interrupted, each
 * time. */
static char *
list_dir(const struct entry *e, const struct scan_memo *memo, char *scratch, size_t *len,
	 unsigned long long *dev, unsigned long long *ino)
{
	struct open_how how = {.flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
			       .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
	const char *name = e->path;
	char *buf = NULL;
	struct stat st;
	struct statfs sf;
	int fd;

	if (e->root_fd >= 0) {
		how.resolve |= RESOLVE_BENEATH;
		name = e->path[e->rel] ? e->path + e->rel : ".";
	}
	fd = (int)syscall(SYS_openat2, e->root_fd >= 0 ? e->root_fd : AT_FDCWD, name, &how,
			  sizeof(how));
	if (fd < 0)
		return NULL;
	*len = 0;
	/* Only where one inode number is one directory, as long as it exists
	 * (scan_fs_exact()): there a listing of DEV:INO is a listing of the
	 * directory the scan opens.  And nothing to read where the scan will
	 * take the memo's listing. */
	if (fstat(fd, &st) < 0 || fstatfs(fd, &sf) < 0 || !scan_fs_exact((long)sf.f_type) ||
	    scan_memo_find(memo, fd, &st, (long)sf.f_type, len))
		goto fail;
	for (;;) {
		ssize_t n = getdents64(fd, scratch, SCRATCH_SIZE);
		char *more;

		if (n < 0 || *len + (size_t)n > LISTING_MAX)
			goto fail;
		if (n == 0)
			break;
		if (!(more = realloc(buf, *len + (size_t)n)))
			goto fail;
		buf = more;
		memcpy(buf + *len, scratch, (size_t)n);
		*len += (size_t)n;
	}
	close(fd);
	if (!buf)
		return NULL;
	*dev = (unsigned long long)st.st_dev;
	*ino = (unsigned long long)st.st_ino;
	return buf;
fail:
	free(buf);
	close(fd);
	return NULL;
}

static void *
run(void *arg)
{
	struct scan_ahead *a = arg;
	char *scratch = malloc(SCRATCH_SIZE);

	/* Started on another CPU, to start at once; from here anywhere. */
	thread_anywhere();
	pthread_mutex_lock(&a->mu);
	for (;;) {
		struct entry e, *at;
		size_t i, len = 0;
		unsigned long long dev = 0, ino = 0;
		char *buf;

		while (!a->stop && scratch && (a->n_stack == 0 || a->held > HELD_MAX))
			pthread_cond_wait(&a->cv, &a->mu);
		if (a->stop || !scratch)
			break;
		i = a->stack[--a->n_stack];
		if (a->v[i].state != OFFERED || (a->started && i <= a->head))
			continue;
		a->v[i].state = LISTING;
		e = a->v[i]; /* the entries may move meanwhile; the path does not */
		pthread_mutex_unlock(&a->mu);
		buf = list_dir(&e, a->memo, scratch, &len, &dev, &ino);
		pthread_mutex_lock(&a->mu);
		at = &a->v[i];
		if (buf && at->state == LISTING) {
			at->state = READY;
			at->buf = buf;
			at->len = len;
			at->dev = dev;
			at->ino = ino;
			a->held += len;
		} else {
			free(buf);
			if (at->state == LISTING)
				at->state = TAKEN;
		}
	}
	pthread_mutex_unlock(&a->mu);
	free(scratch);
	return NULL;
}

struct scan_ahead *
scan_ahead_start(const struct scan_memo *memo)
{
	struct scan_ahead *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->memo = memo;
	pthread_mutex_init(&a->mu, NULL);
	pthread_cond_init(&a->cv, NULL);
	if (thread_elsewhere(&a->th, run, a) < 0) {
		pthread_cond_destroy(&a->cv);
		pthread_mutex_destroy(&a->mu);
		free(a);
		return NULL;
	}
	return a;
}

int
scan_ahead_offer(struct scan_ahead *a, size_t i, int root_fd, const char *path, size_t rel)
{
	char *copy;
	int rc = -1;

	if (!a)
		return 0;
	if (!(copy = strdup(path)))
		return -1;
	pthread_mutex_lock(&a->mu);
	if (i >= a->cap) {
		size_t cap = a->cap ? a->cap : 256;
		struct entry *v;

		while (cap <= i)
			cap *= 2;
		if (!(v = realloc(a->v, cap * sizeof(*v))))
			goto out;
		memset(v + a->cap, 0, (cap - a->cap) * sizeof(*v));
		a->v = v;
		a->cap = cap;
	}
	if (a->n_stack == a->cap_stack) {
		size_t cap = a->cap_stack ? 2 * a->cap_stack : 256;
		size_t *s = realloc(a->stack, cap * sizeof(*s));

		if (!s)
			goto out;
		a->stack = s;
		a->cap_stack = cap;
	}
	if (a->v[i].state != UNOFFERED)
		goto out;
	a->v[i] = (struct entry){copy, rel, root_fd, OFFERED, NULL, 0, 0, 0};
	copy = NULL;
	if (i >= a->n)
		a->n = i + 1;
	a->stack[a->n_stack++] = i;
	pthread_cond_signal(&a->cv);
	rc = 0;
out:
	pthread_mutex_unlock(&a->mu);
	free(copy);
	return rc;
}

char *
scan_ahead_take(struct scan_ahead *a, size_t i, unsigned long long dev, unsigned long long ino,
		size_t *len)
{
	char *buf = NULL;

	*len = 0;
	if (!a)
		return NULL;
	pthread_mutex_lock(&a->mu);
	a->head = i;
	a->started = true;
	if (i < a->n) {
		struct entry *e = &a->v[i];

		if (e->state == READY) {
			a->held -= e->len;
			if (e->dev == dev && e->ino == ino) {
				buf = e->buf;
				*len = e->len;
			} else {
				free(e->buf);
			}
			e->buf = NULL;
			pthread_cond_signal(&a->cv);
		}
		if (e->state != UNOFFERED)
			e->state = TAKEN;
	}
	pthread_mutex_unlock(&a->mu);
	return buf;
}

int
scan_ahead_state(struct scan_ahead *a, size_t i)
{
	enum state state;

	pthread_mutex_lock(&a->mu);
	state = i < a->n ? a->v[i].state : UNOFFERED;
	pthread_mutex_unlock(&a->mu);
	if (state == READY)
		return 1;
	return state == TAKEN ? -1 : 0;
}

void
scan_ahead_stop(struct scan_ahead *a)
{
	if (!a)
		return;
	pthread_mutex_lock(&a->mu);
	a->stop = true;
	pthread_cond_broadcast(&a->cv);
	pthread_mutex_unlock(&a->mu);
	pthread_join(a->th, NULL);
	for (size_t i = 0; i < a->n; i++) {
		free(a->v[i].path);
		free(a->v[i].buf);
	}
	free(a->v);
	free(a->stack);
	pthread_cond_destroy(&a->cv);
	pthread_mutex_destroy(&a->mu);
	free(a);
}
