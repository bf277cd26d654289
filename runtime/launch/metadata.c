/*
 * metadata.c - chmod, fchmod and utimensat done by omnibox-run for the
 * linux_landlock sandbox, where its rules allow (metadata.h).
 */
#include "runtime/launch/metadata.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/audit.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "compiler/decide/landlock.h"
#include "runtime/resolve/landlock_open.h"

#define NR_CHMOD 90
#define NR_FCHMOD 91
#define NR_FCHMODAT 268
#define NR_UTIMENSAT 280
#define NR_FCHMODAT2 452

/* One call, as its arguments say it. */
struct call {
	bool chmod;   /* else utimensat */
	int dirfd;    /* AT_FDCWD or the caller's descriptor */
	uint64_t path; /* the caller's address of the path; 0: the descriptor's object */
	unsigned mode;
	uint64_t times; /* utimensat: the caller's address of two timespecs, or 0 */
	int flags;	/* AT_SYMLINK_NOFOLLOW, AT_EMPTY_PATH */
};

static bool
parse(const struct seccomp_notif *req, struct call *c)
{
	const __u64 *a = req->data.args;

	if (req->data.arch != AUDIT_ARCH_X86_64)
		return false;
	memset(c, 0, sizeof(*c));
	switch (req->data.nr) {
	case NR_CHMOD:
		*c = (struct call){true, AT_FDCWD, a[0], (unsigned)a[1], 0, 0};
		return true;
	case NR_FCHMOD:
		*c = (struct call){true, (int)a[0], 0, (unsigned)a[1], 0, AT_EMPTY_PATH};
		return true;
	case NR_FCHMODAT:
		*c = (struct call){true, (int)a[0], a[1], (unsigned)a[2], 0, 0};
		return true;
	case NR_FCHMODAT2:
		*c = (struct call){true, (int)a[0], a[1], (unsigned)a[2], 0, (int)a[3]};
		return true;
	case NR_UTIMENSAT:
		/* No path: futimens(), the descriptor's object. */
		*c = (struct call){false, (int)a[0], a[1], 0, a[2], (int)a[3]};
		if (!c->path)
			c->flags |= AT_EMPTY_PATH;
		return true;
	default:
		return false;
	}
}

/* LEN bytes of process PID's memory at ADDR into BUF: 0, or -errno. */
static int
peek(int mem, uint64_t addr, void *buf, size_t len)
{
	ssize_t n = pread(mem, buf, len, (off_t)addr);

	return n == (ssize_t)len ? 0 : n < 0 ? -errno : -EFAULT;
}

/* The caller's path (NUL-terminated, at most PATH_MAX) into BUF: 0, or -errno. */
static int
peek_path(int mem, uint64_t addr, char buf[PATH_MAX])
{
	ssize_t n = pread(mem, buf, PATH_MAX, (off_t)addr);

	if (n <= 0)
		return -EFAULT;
	if (!memchr(buf, '\0', (size_t)n))
		return n == PATH_MAX ? -ENAMETOOLONG : -EFAULT;
	return 0;
}

/* The caller's fsuid (the 4th field of Uid:), or -1. */
static long
caller_fsuid(pid_t pid)
{
	char path[64], line[256];
	long fs = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "Uid:", 4) &&
		    sscanf(line + 4, "%*s %*s %*s %ld", &fs) != 1)
			fs = -1;
	if (f)
		fclose(f);
	return fs;
}

/* May the sandbox change the metadata of FD (its object, opened here)?  0, or -errno. */
static int
allowed(const struct metadata_rules *m, int fd, const struct stat *st, long fsuid)
{
	char self[64], path[PATH_MAX];
	ssize_t n;
	unsigned long long r;

	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	n = readlink(self, path, sizeof(path) - 1);
	if (n <= 0 || path[0] != '/')
		return -EPERM;
	path[n] = '\0';
	r = landlock_rights_at(m->rules, m->n_rules, path, NULL);
	/* A directory: below a writable grant (a container has no make right). */
	if (S_ISDIR(st->st_mode) ? !(r & LL_MAKE_REG) : !(r & LL_WRITE_FILE))
		return -EPERM;
	if (fsuid < 0 || st->st_uid != (uid_t)fsuid)
		return -EPERM;
	return 0;
}

/* The caller's starting point: its working directory or its descriptor. */
static int
open_dirfd(pid_t pid, int dirfd)
{
	char path[64];
	int fd;

	if (dirfd == AT_FDCWD)
		snprintf(path, sizeof(path), "/proc/%d/cwd", (int)pid);
	else if (dirfd >= 0)
		snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)pid, dirfd);
	else
		return -EBADF;
	fd = open(path, O_PATH | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* The object of C, opened from DIR as the caller would reach it, never through a magic link. */
static int
open_object(int dir, const char *path, const struct call *c)
{
	struct open_how how = {.flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_NO_MAGICLINKS};
	int fd;

	if (!path[0] && !(c->flags & AT_EMPTY_PATH))
		return -ENOENT;
	if (c->flags & AT_SYMLINK_NOFOLLOW)
		how.flags |= O_NOFOLLOW;
	if (!path[0])
		fd = fcntl(dir, F_DUPFD_CLOEXEC, 0);
	else
		fd = (int)syscall(SYS_openat2, dir, path, &how, sizeof(how));
	return fd < 0 ? -errno : fd;
}

/* C done on the object FD: 0, or -errno. */
static int
apply(int fd, const struct call *c, const struct timespec *times)
{
	char self[64];

	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	if (c->chmod)
		return fchmodat(AT_FDCWD, self, c->mode & 07777, 0) < 0 ? -errno : 0;
	return utimensat(AT_FDCWD, self, times, 0) < 0 ? -errno : 0;
}

/* C for process PID, whose memory is MEM; 0, or -errno. */
static int
answer(const struct metadata_rules *m, pid_t pid, int mem, const struct call *c,
       const struct seccomp_notif *req, int listener)
{
	char path[PATH_MAX];
	struct timespec times[2];
	struct stat st;
	int dir, fd, rc;

	path[0] = '\0';
	rc = c->path ? peek_path(mem, c->path, path) : 0;
	if (!c->path && c->dirfd == AT_FDCWD)
		rc = -EFAULT;
	if (!rc && !c->chmod && c->times)
		rc = peek(mem, c->times, times, sizeof(times));
	if (rc)
		return rc;
	if (c->chmod && (c->mode & (S_ISUID | S_ISGID)))
		return -EPERM;
	dir = open_dirfd(pid, c->dirfd);
	if (dir < 0)
		return dir;
	fd = open_object(dir, path, c);
	close(dir);
	if (fd < 0)
		return fd;
	/* What was read and opened is that caller's: its pid was not reused. */
	if (ioctl(listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &req->id) < 0)
		rc = -ENOENT;
	else if (fstat(fd, &st) < 0)
		rc = -errno;
	else if (S_ISLNK(st.st_mode))
		rc = c->chmod ? -EOPNOTSUPP : -EPERM;
	else if (!(rc = allowed(m, fd, &st, caller_fsuid(pid))))
		rc = apply(fd, c, c->times ? times : NULL);
	close(fd);
	return rc;
}

int
metadata_answer(void *arg, const struct seccomp_notif *req, int listener, int *error)
{
	const struct metadata_rules *m = arg;
	struct call c;
	char path[64];
	int mem;

	if (!parse(req, &c))
		return 0;
	snprintf(path, sizeof(path), "/proc/%u/mem", req->pid);
	mem = open(path, O_RDONLY | O_CLOEXEC);
	if (mem < 0) {
		*error = -EPERM;
		return 1;
	}
	*error = answer(m, (pid_t)req->pid, mem, &c, req, listener);
	close(mem);
	return 1;
}
