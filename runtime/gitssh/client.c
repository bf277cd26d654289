/*
 * client.c - `/.omnibox/init --git-ssh`: git's ssh inside the sandbox
 * (client.h).  It forwards; the broker decides.
 */
#include "runtime/gitssh/client.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

static int refuse(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A message on stderr, and ssh's failure status for git. */
static int
refuse(const char *fmt, ...)
{
	va_list ap;

	fputs("omnibox git-ssh: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return GITSSH_EXIT_FAILURE;
}

/* Append S and its NUL at *AT; false when it does not fit. */
static bool
put(char *buf, unsigned len, unsigned *at, const char *s)
{
	size_t n = strlen(s) + 1;

	if (n > len - *at)
		return false;
	memcpy(buf + *at, s, n);
	*at += (unsigned)n;
	return true;
}

unsigned
gitssh_encode_request(char *buf, unsigned len, const char *token, const char *git_protocol,
		      int argc, char *const *argv)
{
	unsigned at = 0;
	char count[16];

	if (argc < 0 || argc > GITSSH_MAX_ARGS)
		return 0;
	snprintf(count, sizeof(count), "%d", argc);
	if (!put(buf, len, &at, GITSSH_MAGIC) || !put(buf, len, &at, token) ||
	    !put(buf, len, &at, git_protocol ? git_protocol : "") || !put(buf, len, &at, count))
		return 0;
	for (int i = 0; i < argc; i++)
		if (!put(buf, len, &at, argv[i]))
			return 0;
	return at;
}

/* Connect to the Unix socket at PATH; -1 with errno. */
static int
connect_broker(const char *path)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	int fd;

	if (strlen(path) >= sizeof(sun.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(sun.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

/* The request with descriptors 0, 1 and 2 attached to its first byte. */
static int
send_request(int fd, const char *msg, unsigned len)
{
	union {
		char buf[CMSG_SPACE(3 * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = {.iov_base = (void *)msg, .iov_len = len};
	struct msghdr mh = {.msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = u.buf,
			    .msg_controllen = sizeof(u.buf)};
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
	const int fds[3] = {0, 1, 2};
	ssize_t n;

	memset(u.buf, 0, sizeof(u.buf));
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(fds));
	memcpy(CMSG_DATA(c), fds, sizeof(fds));
	do
		n = sendmsg(fd, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -1;
	/* The rest, if the socket took only part of it (the descriptors went first). */
	for (unsigned off = (unsigned)n; off < len; off += (unsigned)n) {
		n = send(fd, msg + off, len - off, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR) {
			n = 0;
			continue;
		}
		if (n <= 0)
			return -1;
	}
	return 0;
}

/* Wait for the session to end: the status byte, then a message for stderr. */
static int
await_reply(int fd)
{
	char buf[GITSSH_REPLY_MAX + 1];
	size_t len = 0;

	while (len < sizeof(buf)) {
		ssize_t n = read(fd, buf + len, sizeof(buf) - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	if (len == 0)
		return refuse("the broker closed the connection before the session ended");
	if (len > 1)
		(void)!write(2, buf + 1, len - 1);
	return (unsigned char)buf[0];
}

int
gitssh_client_main(int argc, char **argv)
{
	const char *path = getenv(GITSSH_ENV_SOCKET), *token = getenv(GITSSH_ENV_TOKEN);
	static char msg[GITSSH_REQUEST_MAX];
	unsigned len;
	int fd;

	signal(SIGPIPE, SIG_IGN);
	if (!path || !*path)
		return refuse("%s is not set: this sandbox's policy has no git_ssh",
			      GITSSH_ENV_SOCKET);
	if (!token || !*token)
		return refuse("%s is not set: this sandbox's policy has no git_ssh",
			      GITSSH_ENV_TOKEN);
	len = gitssh_encode_request(msg, sizeof(msg), token, getenv("GIT_PROTOCOL"), argc, argv);
	if (!len)
		return refuse("refused: more than %d arguments, or more than a %d-byte request "
			      "holds",
			      GITSSH_MAX_ARGS, GITSSH_REQUEST_MAX);
	fd = connect_broker(path);
	if (fd < 0)
		return refuse("cannot reach the git_ssh broker: %s", strerror(errno));
	/* A broker that refuses at once (too many sessions) may have closed
	 * before the request went out: its answer is still there to read. */
	if (send_request(fd, msg, len) < 0 && errno != EPIPE && errno != ECONNRESET) {
		close(fd);
		return refuse("cannot reach the git_ssh broker: %s", strerror(errno));
	}
	return await_reply(fd);
}
