/*
 * handover.c - omnibox-init's command line, sent on its ready socket (handover.h).
 */
#include "runtime/launch/handover.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compiler/base/diag.h"
#include "runtime/launch/fds.h"

/* A block bigger than this is no launch's (the argv's own limit is far below). */
#define HANDOVER_MAX_BLOCK (256u << 20)

/* One message on SOCK: the byte 'a' and the K descriptors of FDS (K >= 1). */
static int
send_fds(int sock, const int *fds, size_t k)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * HANDOVER_FDS_PER_MSG)];
		struct cmsghdr align;
	} u;
	char byte = 'a';
	struct iovec iov = {&byte, 1};
	struct msghdr msg = {.msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = u.buf,
			     .msg_controllen = CMSG_SPACE(sizeof(int) * k)};
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	ssize_t r;

	memset(u.buf, 0, sizeof(u.buf));
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int) * k);
	memcpy(CMSG_DATA(c), fds, sizeof(int) * k);
	for (;;) {
		struct pollfd p = {sock, POLLOUT, 0};

		r = sendmsg(sock, &msg, MSG_NOSIGNAL);
		if (r >= 0 || (errno != EINTR && errno != EAGAIN))
			break;
		/* omnibox-run's end does not block: wait until the queue has room. */
		if (errno == EAGAIN && poll(&p, 1, -1) < 0 && errno != EINTR)
			return -1;
	}
	return r == 1 ? 0 : -1;
}

int
handover_send(int sock, const char *args, size_t len, char *const *env, const int *fds, size_t n)
{
	size_t argc = 0, envc = 0, size = 3 * 21 + n * 12 + len, at = 0, sent;
	int v[HANDOVER_FDS_PER_MSG], memfd, saved;
	char *block;

	for (size_t i = 0; i < len; i++)
		argc += args[i] == '\0';
	while (env && env[envc])
		size += strlen(env[envc++]) + 1;
	block = malloc(size);
	if (!block)
		return -1;
	at += (size_t)sprintf(block + at, "%zu", n) + 1;
	at += (size_t)sprintf(block + at, "%zu", argc) + 1;
	at += (size_t)sprintf(block + at, "%zu", envc) + 1;
	for (size_t i = 0; i < n; i++)
		at += (size_t)sprintf(block + at, "%d", fds[i]) + 1;
	memcpy(block + at, args, len);
	at += len;
	for (size_t i = 0; i < envc; i++) {
		size_t l = strlen(env[i]) + 1;

		memcpy(block + at, env[i], l);
		at += l;
	}
	memfd = fds_sealed_memfd("omnibox-init-args", block, at);
	saved = errno;
	free(block);
	if (memfd < 0)
		return errno = saved, -1;
	v[0] = memfd;
	sent = n < HANDOVER_FDS_PER_MSG - 1 ? n : HANDOVER_FDS_PER_MSG - 1;
	if (sent)
		memcpy(v + 1, fds, sent * sizeof(int));
	if (send_fds(sock, v, sent + 1) < 0) {
		saved = errno;
		close(memfd);
		return errno = saved, -1;
	}
	close(memfd);
	while (sent < n) {
		size_t k = n - sent < HANDOVER_FDS_PER_MSG ? n - sent : HANDOVER_FDS_PER_MSG;

		if (send_fds(sock, fds + sent, k) < 0)
			return -1;
		sent += k;
	}
	return 0;
}

/*
 * One message of SOCK's: its descriptors appended to FDS (*GOT of MAX so
 * far; any beyond MAX closed).  1, 0 at the socket's end, -1 with errno
 * (EPROTO: not one message of the block).
 */
static int
recv_fds(int sock, int *fds, size_t max, size_t *got)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * HANDOVER_FDS_PER_MSG)];
		struct cmsghdr align;
	} u;
	char byte;
	struct iovec iov = {&byte, 1};
	struct msghdr msg = {.msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = u.buf,
			     .msg_controllen = sizeof(u.buf)};
	bool extra = false;
	ssize_t r;

	do
		r = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	while (r < 0 && errno == EINTR);
	if (r <= 0)
		return (int)r;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
		size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		int f[HANDOVER_FDS_PER_MSG];

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		memcpy(f, CMSG_DATA(c), k * sizeof(int));
		for (size_t i = 0; i < k; i++) {
			if (*got < max)
				fds[(*got)++] = f[i];
			else {
				close(f[i]);
				extra = true;
			}
		}
	}
	if (extra || byte != 'a' || (msg.msg_flags & MSG_CTRUNC))
		return errno = EPROTO, -1;
	return 1;
}

/* The next NUL-ended string of [*P, END), or NULL. */
static char *
token(char **p, char *end)
{
	char *s = *p, *z = s < end ? memchr(s, '\0', (size_t)(end - s)) : NULL;

	if (!z)
		return NULL;
	*p = z + 1;
	return s;
}

/* The decimal *V (at most MAX) of the next token. */
static bool
count(char **p, char *end, unsigned long max, size_t *v)
{
	char *s = token(p, end), *e;
	unsigned long n;

	if (!s || *s < '0' || *s > '9')
		return false;
	errno = 0;
	n = strtoul(s, &e, 10);
	*v = (size_t)n;
	return !*e && errno == 0 && n <= max;
}

/* The memfd's bytes, NUL-ended past its size (*SIZE); NULL with errno. */
static char *
read_block(int fd, size_t *size)
{
	struct stat st;
	char *b;
	size_t at = 0;

	if (fstat(fd, &st) < 0)
		return NULL;
	if (st.st_size <= 0 || (unsigned long long)st.st_size > HANDOVER_MAX_BLOCK)
		return errno = EPROTO, NULL;
	*size = (size_t)st.st_size;
	b = malloc(*size + 1);
	while (b && at < *size) {
		ssize_t r = pread(fd, b + at, *size - at, (off_t)at);

		if (r <= 0) {
			free(b);
			return errno = r == 0 ? EPROTO : errno, NULL;
		}
		at += (size_t)r;
	}
	if (b)
		b[*size] = '\0';
	return b;
}

/*
 * The N descriptors of GOT put at the numbers of WANT (each above 2, none
 * alike, none SOCK's), by way of numbers above all of them, so that none
 * lands on one still to be moved.  0, or -1 with errno.
 */
static int
renumber(int sock, int *got, const int *want, size_t n)
{
	struct rlimit was, room;
	int floor = sock, rc = 0;

	for (size_t i = 0; i < n; i++) {
		if (want[i] <= 2 || want[i] == sock)
			return errno = EPROTO, -1;
		for (size_t k = 0; k < i; k++)
			if (want[k] == want[i])
				return errno = EPROTO, -1;
		floor = want[i] > floor ? want[i] : floor;
		floor = got[i] > floor ? got[i] : floor;
	}
	/* The numbers are omnibox-run's, whose limit may be higher than the
	 * sandbox's: room for them, and the limit as it was after. */
	if (getrlimit(RLIMIT_NOFILE, &was) < 0)
		return -1;
	room = was;
	if (room.rlim_cur != RLIM_INFINITY && room.rlim_cur < (rlim_t)floor + n + 2)
		room.rlim_cur = room.rlim_max;
	if (room.rlim_cur != was.rlim_cur && setrlimit(RLIMIT_NOFILE, &room) < 0)
		return -1;
	for (size_t i = 0; i < n && rc == 0; i++) {
		int high = fcntl(got[i], F_DUPFD_CLOEXEC, floor + 1);

		if (high < 0) {
			rc = -1;
			break;
		}
		close(got[i]);
		got[i] = high;
	}
	for (size_t i = 0; i < n && rc == 0; i++) {
		/* As if inherited: no close-on-exec (omnibox-init closes them). */
		if (dup2(got[i], want[i]) < 0) {
			rc = -1;
			break;
		}
		close(got[i]);
		got[i] = want[i];
	}
	if (room.rlim_cur != was.rlim_cur) {
		int e = errno;

		if (setrlimit(RLIMIT_NOFILE, &was) < 0)
			rc = -1;
		else
			errno = e;
	}
	return rc;
}

/* The block's counts and strings, from B (SIZE bytes): 0, or -1 with errno. */
static int
parse_block(char *b, size_t size, int **want, size_t *n, char ***av, size_t *nargs, char ***ev)
{
	char *p = b, *end = b + size;
	size_t nenv;

	if (!count(&p, end, 1u << 20, n) || !count(&p, end, size, nargs) ||
	    !count(&p, end, size, &nenv) || *nargs < 1)
		return errno = EPROTO, -1;
	*want = calloc(*n + 1, sizeof(**want));
	*av = calloc(*nargs + 1, sizeof(**av));
	*ev = calloc(nenv + 1, sizeof(**ev));
	if (!*want || !*av || !*ev)
		return -1;
	for (size_t i = 0; i < *n; i++) {
		size_t v;

		if (!count(&p, end, INT_MAX, &v))
			return errno = EPROTO, -1;
		(*want)[i] = (int)v;
	}
	for (size_t i = 0; i < *nargs; i++)
		if (!((*av)[i] = token(&p, end)))
			return errno = EPROTO, -1;
	for (size_t i = 0; i < nenv; i++)
		if (!((*ev)[i] = token(&p, end)))
			return errno = EPROTO, -1;
	return 0;
}

int
handover_receive(int sock, int *argc, char ***argv, char ***env, char *err, size_t errlen)
{
	int head[HANDOVER_FDS_PER_MSG], *got = NULL, *want = NULL, rc, e;
	size_t n_head = 0, n_got = 0, size = 0, n = 0, nargs = 0;
	char *block = NULL, **av = NULL, **ev = NULL;

	rc = recv_fds(sock, head, HANDOVER_FDS_PER_MSG, &n_head);
	if (rc == 0 && n_head == 0)
		return 1;
	if (rc <= 0 || n_head == 0) {
		errno = rc < 0 ? errno : EPROTO;
		goto fail;
	}
	block = read_block(head[0], &size);
	if (!block || parse_block(block, size, &want, &n, &av, &nargs, &ev) < 0)
		goto fail;
	got = calloc(n + 1, sizeof(*got));
	if (!got)
		goto fail;
	if (n_head - 1 > n) {
		errno = EPROTO;
		goto fail;
	}
	/* The rest of the first message's descriptors, then the next messages'. */
	for (size_t i = 1; i < n_head; i++)
		got[n_got++] = head[i];
	close(head[0]);
	n_head = 0;
	while (n_got < n) {
		rc = recv_fds(sock, got, n, &n_got);
		if (rc <= 0) {
			errno = rc == 0 ? EPROTO : errno;
			goto fail;
		}
	}
	if (renumber(sock, got, want, n) < 0)
		goto fail;
	free(got);
	free(want);
	*argc = (int)nargs;
	*argv = av;
	*env = ev;
	return 0;
fail:
	e = errno;
	for (size_t i = 0; i < n_head; i++)
		close(head[i]);
	for (size_t i = 0; got && i < n_got; i++)
		close(got[i]);
	free(got);
	free(want);
	free(av);
	free(ev);
	free(block);
	return diag_fail(err, errlen, "its arguments on the ready socket: %s", strerror(e));
}
