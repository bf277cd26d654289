/*
 * writeback.c - write_files that editors can save (writeback.h).
 */
#include "runtime/resolve/writeback.h"
#include "compiler/base/textesc.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int wb_fail(const struct writeback *w, char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/*
 * "write_files PATH: " and the message.  PATH is shown escaped
 * (textesc.h): it is canonical, so a link the agent planted on the way
 * chose part of it.
 */
static int
wb_fail(const struct writeback *w, char *err, size_t errlen, const char *fmt, ...)
{
	char shown[4 * PATH_MAX + 4];
	va_list ap;
	int n;

	text_escape(shown, sizeof(shown), w->path, strlen(w->path), 0);
	n = snprintf(err, errlen, "write_files %s: ", shown);
	if (n < 0 || (size_t)n >= errlen)
		return -1;
	va_start(ap, fmt);
	vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

/* The file FD names, opened again with FLAGS (FD may be O_PATH). */
static int
reopen(int fd, int flags)
{
	char proc[64];

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	return open(proc, flags | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
}

/* All of IN into OUT from offset 0; the length copied, or -1. */
static off_t
copy_all(int in, int out)
{
	char buf[65536];
	off_t at = 0;

	for (;;) {
		ssize_t n = read(in, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			return at;
		for (ssize_t done = 0; done < n;) {
			ssize_t k = pwrite(out, buf + done, (size_t)(n - done), at);

			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0)
				return -1;
			done += k;
			at += k;
		}
		if (at > WRITEBACK_MAX_BYTES) {
			errno = EFBIG;
			return -1;
		}
	}
}

static bool
same_state(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
	       a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

int
writeback_copy_in(struct writeback *w, char *err, size_t errlen)
{
	struct stat st;
	struct timespec ts[2];
	int in = reopen(w->host_fd, O_RDONLY), out = -1;
	off_t n;

	if (in < 0 || fstat(in, &st) < 0 || !S_ISREG(st.st_mode)) {
		int e = in < 0 ? errno : 0;

		if (in >= 0)
			close(in);
		return wb_fail(w, err, errlen, "cannot read it%s%s",
			       e ? ": " : " (not a regular file)", e ? strerror(e) : "");
	}
	if (st.st_size > WRITEBACK_MAX_BYTES) {
		close(in);
		return wb_fail(w, err, errlen,
			       "larger than %lld MiB; name its directory in write_paths instead",
			       WRITEBACK_MAX_BYTES >> 20);
	}
	out =
	    openat(w->dir_fd, w->name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	ts[0] = st.st_atim;
	ts[1] = st.st_mtim;
	if (out < 0 || (n = copy_all(in, out)) < 0 || ftruncate(out, n) < 0 ||
	    fchmod(out, st.st_mode & 0777) < 0 || futimens(out, ts) < 0 ||
	    fstat(out, &w->synced) < 0) {
		int e = errno;

		close(in);
		if (out >= 0)
			close(out);
		return wb_fail(w, err, errlen, "cannot copy it into the scratch dir: %s",
			       strerror(e));
	}
	close(in);
	return close(out) < 0 ? wb_fail(w, err, errlen, "cannot copy it: %s", strerror(errno)) : 0;
}

int
writeback_sync(struct writeback *w, char *err, size_t errlen)
{
	struct stat st;
	int in, out;
	off_t n;

	/* Never a link (it would be followed here, outside the sandbox), never
	 * a FIFO (O_NONBLOCK: opening one cannot stall omnibox-run). */
	in = openat(w->dir_fd, w->name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (in < 0 && errno == ENOENT)
		return 0; /* removed inside: the host file stays as it is */
	if (in < 0)
		return wb_fail(w, err, errlen,
			       "the sandbox's copy cannot be read (%s); not written back",
			       errno == ELOOP ? "it is a symbolic link" : strerror(errno));
	if (fstat(in, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(in);
		return wb_fail(w, err, errlen,
			       "the sandbox's copy is not a regular file; not written back");
	}
	if (same_state(&st, &w->synced)) {
		close(in);
		return 0;
	}
	if (st.st_size > WRITEBACK_MAX_BYTES) {
		close(in);
		w->synced = st; /* said once, not on every event */
		return wb_fail(w, err, errlen,
			       "the sandbox's copy is larger than %lld MiB; not written back",
			       WRITEBACK_MAX_BYTES >> 20);
	}
	/* The state before the copy: a write racing it makes the next sync copy again. */
	w->synced = st;
	out = reopen(w->host_fd, O_WRONLY);
	if (out < 0 || (n = copy_all(in, out)) < 0 || ftruncate(out, n) < 0) {
		int e = errno;

		close(in);
		if (out >= 0)
			close(out);
		memset(&w->synced, 0, sizeof(w->synced));
		return wb_fail(w, err, errlen, "cannot write it back: %s", strerror(e));
	}
	close(in);
	return close(out) < 0 ? wb_fail(w, err, errlen, "cannot write it back: %s", strerror(errno))
			      : 1;
}
