/*
 * fds.c - closing what a launch must not hand on.
 */
#include "runtime/launch/fds.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/syscall.h>
#endif

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

static int
open_max(void)
{
	long n = sysconf(_SC_OPEN_MAX);

	return n > 0 && n < (1 << 20) ? (int)n : 65536;
}

/* Close [LO, HI] (HI < 0: to the end); with CLOEXEC, only mark them. */
static void
close_span(int lo, int hi, bool cloexec)
{
	if (hi >= 0 && hi < lo)
		return;
#if defined(__linux__) && defined(SYS_close_range)
	if (syscall(SYS_close_range, (unsigned)lo, hi < 0 ? ~0U : (unsigned)hi,
		    cloexec ? CLOSE_RANGE_CLOEXEC : 0) == 0)
		return;
#endif
	for (int fd = lo, max = hi < 0 ? open_max() - 1 : hi; fd <= max; fd++) {
		if (cloexec) {
			int fl = fcntl(fd, F_GETFD);

			if (fl >= 0)
				fcntl(fd, F_SETFD, fl | FD_CLOEXEC);
		} else {
			close(fd);
		}
	}
}

void
fds_cloexec_from(int lowest)
{
	close_span(lowest, -1, true);
}

static int
cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

void
fds_keep_only(const int *keep, size_t n)
{
	int *v = malloc((n ? n : 1) * sizeof(*v));
	int lo = 3;

	if (!v)
		abort();
	memcpy(v, keep, n * sizeof(*v));
	qsort(v, n, sizeof(*v), cmp_int);
	for (size_t i = 0; i < n; i++) {
		if (v[i] < 3)
			continue;
		close_span(lo, v[i] - 1, false);
		fcntl(v[i], F_SETFD, 0);
		lo = v[i] + 1;
	}
	close_span(lo, -1, false);
	free(v);
}

void
launch_detach(int *fds, size_t n)
{
	int null, top = 3 + (int)n;

	setpgid(0, 0);
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	/* Up out of the way first (any may be 0, 1 or 2), then down to 3.. */
	for (size_t i = 0; i < n; i++)
		fds[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, top);
	for (size_t i = 0; i < n; i++) {
		if (fds[i] < 0) {
			close(3 + (int)i); /* none to keep there: nothing of the caller's */
			continue;
		}
		dup2(fds[i], 3 + (int)i);
		fcntl(3 + (int)i, F_SETFD, FD_CLOEXEC);
		fds[i] = 3 + (int)i;
	}
	null = open("/dev/null", O_RDWR);
	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
	}
	close_span(top, -1, false);
}

int
fds_sealed_memfd(const char *name, const void *data, size_t len)
{
#if defined(__linux__)
	int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	const char *p = data;

	if (fd < 0)
		return -1;
	while (len) {
		ssize_t w = write(fd, p, len);

		if (w < 0) {
			close(fd);
			return -1;
		}
		p += w;
		len -= (size_t)w;
	}
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE) < 0 ||
	    lseek(fd, 0, SEEK_SET) < 0) {
		close(fd);
		return -1;
	}
	return fd;
#else
	(void)name;
	(void)data;
	(void)len;
	errno = ENOSYS;
	return -1;
#endif
}

int
fds_send_byte(int sock, char byte, int fd)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct iovec iov = {.iov_base = &byte, .iov_len = 1};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
	ssize_t n;

	memset(&ctl, 0, sizeof(ctl));
	if (fd >= 0) {
		struct cmsghdr *c;

		msg.msg_control = ctl.buf;
		msg.msg_controllen = sizeof(ctl.buf);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	do
		n = sendmsg(sock, &msg, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	return n == 1 ? 0 : -1;
}

ssize_t
fds_recv_byte(int sock, char *byte, int *fd, int flags)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct iovec iov = {.iov_base = byte, .iov_len = 1};
	struct msghdr msg = {.msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = ctl.buf,
			     .msg_controllen = sizeof(ctl)};
	ssize_t got;

	*fd = -1;
	do
		got = recvmsg(sock, &msg, flags | MSG_CMSG_CLOEXEC);
	while (got < 0 && errno == EINTR);
	for (struct cmsghdr *h = got > 0 ? CMSG_FIRSTHDR(&msg) : NULL; h; h = CMSG_NXTHDR(&msg, h))
		if (h->cmsg_level == SOL_SOCKET && h->cmsg_type == SCM_RIGHTS &&
		    h->cmsg_len == CMSG_LEN(sizeof(int)))
			memcpy(fd, CMSG_DATA(h), sizeof(int));
	return got;
}
