/*
 * handoff.c - the relay hands each connection it accepts to the proxy
 * (see handoff.h).
 */
#include "runtime/egress/handoff.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* The first byte of every hand-off: a datagram of none would read as nothing. */
#define HANDOFF_TAG 'H'

int
handoff_path(const char *socket_path, char *out, size_t cap)
{
	size_t n = strlen(socket_path) + sizeof(HANDOFF_SUFFIX);

	if (n > cap || n > sizeof(((struct sockaddr_un *)0)->sun_path))
		return -1;
	memcpy(out, socket_path, strlen(socket_path));
	memcpy(out + strlen(socket_path), HANDOFF_SUFFIX, sizeof(HANDOFF_SUFFIX));
	return 0;
}

static int
address(const char *path, struct sockaddr_un *sun)
{
	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun->sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(sun->sun_path, path);
	return 0;
}

/* Close FD, keeping errno: -1. */
static int
fail_closing(int fd)
{
	int e = errno;

	close(fd);
	errno = e;
	return -1;
}

static int
dgram_socket(void)
{
	int fd = socket(AF_UNIX, SOCK_DGRAM, 0);

	if (fd >= 0 && fcntl(fd, F_SETFD, FD_CLOEXEC) < 0)
		return fail_closing(fd);
	return fd;
}

int
handoff_listen(const char *path)
{
	struct sockaddr_un sun;
	struct stat st;
	int fd;

	if (address(path, &sun) < 0)
		return -1;
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			errno = EEXIST;
			return -1;
		}
		unlink(path);
	}
	fd = dgram_socket();
	if (fd < 0)
		return -1;
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0 || chmod(path, 0600) < 0 ||
	    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0)
		return fail_closing(fd);
	return fd;
}

int
handoff_connect(const char *path)
{
	struct sockaddr_un sun;
	int fd;

	if (address(path, &sun) < 0 || (fd = dgram_socket()) < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0)
		return fail_closing(fd);
	return fd;
}

int
handoff_take(const char *socket_path)
{
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	int fd;

	if (handoff_path(socket_path, path, sizeof(path)) < 0) {
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = handoff_connect(path);
	if (fd >= 0 && unlink(path) < 0)
		return fail_closing(fd);
	return fd;
}

int
handoff_send(int chan, int fd, const char *pre, size_t n)
{
	char data[1 + HANDOFF_PREAMBLE_MAX];
	union {
		struct cmsghdr h;
		char space[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct iovec iov = {data, 1 + n};
	struct msghdr m = {.msg_iov = &iov,
			   .msg_iovlen = 1,
			   .msg_control = ctl.space,
			   .msg_controllen = sizeof(ctl.space)};
	struct cmsghdr *c;
	ssize_t r;

	if (n > HANDOFF_PREAMBLE_MAX) {
		errno = EMSGSIZE;
		return -1;
	}
	data[0] = HANDOFF_TAG;
	if (n)
		memcpy(data + 1, pre, n);
	memset(&ctl, 0, sizeof(ctl));
	c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	do
		r = sendmsg(chan, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
	while (r < 0 && errno == EINTR);
	return r == (ssize_t)(1 + n) ? 0 : -1;
}

/* Is FD a connected stream socket, of the kinds a client reaches the proxy by? */
static int
is_client_socket(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	int type = 0;
	socklen_t tl = sizeof(type);

	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl) < 0 || type != SOCK_STREAM)
		return 0;
	if (getpeername(fd, (struct sockaddr *)&ss, &len) < 0)
		return 0;
	return ss.ss_family == AF_INET || ss.ss_family == AF_INET6 || ss.ss_family == AF_UNIX;
}

int
handoff_recv(int chan, int *fd, char *buf, size_t *n)
{
	char data[1 + HANDOFF_PREAMBLE_MAX + 1];
	union {
		struct cmsghdr h;
		char space[CMSG_SPACE(sizeof(int) * 8)];
	} ctl;
	struct iovec iov = {data, sizeof(data)};
	struct msghdr m = {.msg_iov = &iov,
			   .msg_iovlen = 1,
			   .msg_control = ctl.space,
			   .msg_controllen = sizeof(ctl.space)};
	int got = -1, extra = 0;
	ssize_t r;
	int flags = MSG_DONTWAIT;

#ifdef MSG_CMSG_CLOEXEC
	flags |= MSG_CMSG_CLOEXEC;
#endif
	do
		r = recvmsg(chan, &m, flags);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
	/* Every descriptor that came is ours to close, whatever else is wrong. */
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t k = 0; k < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); k++) {
			int d;

			memcpy(&d, CMSG_DATA(c) + k * sizeof(int), sizeof(int));
			if (got < 0)
				got = d;
			else
				close(d), extra = 1;
		}
	}
	if (got >= 0 && !extra && !(m.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) && r >= 1 &&
	    data[0] == HANDOFF_TAG && (size_t)r - 1 <= HANDOFF_PREAMBLE_MAX &&
	    is_client_socket(got)) {
#ifndef MSG_CMSG_CLOEXEC
		fcntl(got, F_SETFD, FD_CLOEXEC);
#endif
		*fd = got;
		*n = (size_t)r - 1;
		memcpy(buf, data + 1, *n);
		return 1;
	}
	if (got >= 0)
		close(got);
	return 2;
}
