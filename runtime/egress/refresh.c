/*
 * refresh.c - secrets read again on a timer (refresh.h).
 */
#include "runtime/egress/refresh.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "runtime/egress/credentials.h"

/* A connect refused for a full backlog is tried again this often (ms). */
#define RETRY_MS 50

struct refresh {
	struct event_base *base;
	enum cred_source_kind kind;
	char *path;
	refresh_done_fn done;
	void *arg;
	struct event *tick;
	/* the socket read under way */
	int fd;
	struct event *io, *deadline, *retry;
	char *buf;
	size_t len;
	bool busy;
};

static void
sock_reset(struct refresh *r)
{
	if (r->io)
		event_free(r->io);
	if (r->fd >= 0)
		close(r->fd);
	if (r->buf) {
		explicit_bzero(r->buf, r->len);
		free(r->buf);
	}
	r->io = NULL;
	r->fd = -1;
	r->buf = NULL;
	r->len = 0;
	event_del(r->deadline);
	event_del(r->retry);
	r->busy = false;
}

/* The read ended: hand over the secret or the reason, then forget both. */
static void
sock_finish(struct refresh *r, const char *why)
{
	char msg[4400], *secret = NULL;
	size_t start = 0, n = 0;

	if (!why && !(why = cred_clean_secret(r->buf, r->len, &start, &n)) &&
	    !(secret = strndup(r->buf + start, n)))
		why = "out of memory";
	snprintf(msg, sizeof(msg), "unix socket %s: %s%s", r->path,
		 why && !strncmp(why, "is ", 3) ? "its answer " : "", why ? why : "");
	sock_reset(r);
	r->done(r->arg, secret, why ? msg : NULL);
	if (secret) {
		explicit_bzero(secret, n);
		free(secret);
	}
}

static void
sock_read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct refresh *r = arg;

	(void)what;
	for (;;) {
		ssize_t got = read(fd, r->buf + r->len, CRED_SOCKET_MAX + 1 - r->len);

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0 && errno == EAGAIN)
			return;
		if (got < 0) {
			sock_finish(r, strerror(errno));
			return;
		}
		if (got == 0) {
			sock_finish(r, NULL);
			return;
		}
		r->len += (size_t)got;
		if (r->len > CRED_SOCKET_MAX) {
			/* Never cut short: a secret with its end missing is a wrong one. */
			sock_finish(r, "sent more than 64 KiB");
			return;
		}
	}
}

static void
sock_start_reading(struct refresh *r)
{
	r->io = event_new(r->base, r->fd, EV_READ | EV_PERSIST, sock_read_cb, r);
	if (!r->io || event_add(r->io, NULL) < 0)
		sock_finish(r, "out of memory");
}

static void
sock_connected_cb(evutil_socket_t fd, short what, void *arg)
{
	struct refresh *r = arg;
	int e = 0;
	socklen_t l = sizeof(e);

	(void)what;
	event_free(r->io);
	r->io = NULL;
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &l) < 0)
		e = errno;
	if (e) {
		sock_finish(r, strerror(e));
		return;
	}
	sock_start_reading(r);
}

static void
sock_connect(struct refresh *r)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};

	if (strlen(r->path) >= sizeof(sun.sun_path)) {
		sock_finish(r, "the path is too long for a Unix socket");
		return;
	}
	strcpy(sun.sun_path, r->path);
	if (r->fd < 0)
		r->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (r->fd < 0) {
		sock_finish(r, strerror(errno));
		return;
	}
	if (connect(r->fd, (struct sockaddr *)&sun, sizeof(sun)) == 0) {
		sock_start_reading(r);
	} else if (errno == EINPROGRESS) {
		r->io = event_new(r->base, r->fd, EV_WRITE, sock_connected_cb, r);
		if (!r->io || event_add(r->io, NULL) < 0)
			sock_finish(r, "out of memory");
	} else if (errno == EAGAIN) {
		/* The listener's backlog is full: again shortly, within the deadline. */
		struct timeval tv = {0, RETRY_MS * 1000};

		event_add(r->retry, &tv);
	} else {
		sock_finish(r, strerror(errno));
	}
}

static void
retry_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	sock_connect(arg);
}

static void
deadline_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	sock_finish(arg, "the socket did not send its answer to the end within 5 seconds");
}

static void
read_file(struct refresh *r)
{
	char err[4400];
	char *secret = cred_read_secret(CRED_SOURCE_FILE, r->path, err, sizeof(err));

	r->done(r->arg, secret, secret ? NULL : err);
	if (secret) {
		explicit_bzero(secret, strlen(secret));
		free(secret);
	}
}

void
refresh_now(struct refresh *r)
{
	struct timeval tv = {CRED_SOCKET_TIMEOUT, 0};

	if (r->busy)
		return;
	if (r->kind == CRED_SOURCE_FILE) {
		/* A small regular file: read at once (a FIFO is refused, not waited on). */
		read_file(r);
		return;
	}
	r->busy = true;
	r->buf = malloc(CRED_SOCKET_MAX + 1);
	if (!r->buf) {
		sock_finish(r, "out of memory");
		return;
	}
	event_add(r->deadline, &tv);
	sock_connect(r);
}

static void
tick_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	refresh_now(arg);
}

struct refresh *
refresh_new(struct event_base *base, const struct proxy_source *src, unsigned interval,
	    refresh_done_fn done, void *arg)
{
	struct refresh *r = calloc(1, sizeof(*r));
	struct timeval tv = {interval, 0};

	if (!r)
		return NULL;
	r->base = base;
	r->kind = src->kind;
	r->path = strdup(src->path);
	r->done = done;
	r->arg = arg;
	r->fd = -1;
	r->tick = event_new(base, -1, EV_PERSIST, tick_cb, r);
	r->deadline = evtimer_new(base, deadline_cb, r);
	r->retry = evtimer_new(base, retry_cb, r);
	if (!r->path || !r->tick || !r->deadline || !r->retry || event_add(r->tick, &tv) < 0) {
		refresh_free(r);
		return NULL;
	}
	return r;
}

void
refresh_free(struct refresh *r)
{
	if (!r)
		return;
	if (r->deadline && r->retry)
		sock_reset(r);
	if (r->tick)
		event_free(r->tick);
	if (r->deadline)
		event_free(r->deadline);
	if (r->retry)
		event_free(r->retry);
	free(r->path);
	free(r);
}
