/*
 * relay.c - TCP on loopback to the proxy's Unix socket, one epoll loop.
 */
#include "relay.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define RELAY_BUF 65536
#define RELAY_READS_PER_EVENT 8
#define RELAY_ACCEPTS_PER_EVENT 64

/*
 * Bytes read from one side that the other side has not taken yet: in a
 * pipe (splice(2): the kernel moves pages, the relay never touches the
 * data) or, where splice does not work, in a buffer.  Either exists only
 * while something is pending, so an idle connection owns neither.
 */
struct flow {
	int pipe[2]; /* holding LEN bytes; -1 when none */
	char *buf;   /* RELAY_BUF bytes, the copying fallback; NULL when none */
	unsigned off, len;
	bool eof;  /* the source is done; shut the destination down once drained */
	bool shut; /* the destination has been shut down for writing */
};

struct pair;

struct side {
	struct pair *pair;
	int idx;
};

/* side 0: the agent's TCP connection; side 1: the proxy's Unix socket.
 * flow[i] carries bytes read from side i to side 1 - i. */
struct pair {
	int fd[2];
	uint32_t events[2];
	struct flow flow[2];
	struct side side[2];
	bool gone[2];	   /* side hung up and was taken out of the epoll set */
	bool dead;	   /* closed; freed after the current batch of events */
	struct pair *next; /* on the list of dead pairs */
};

#define RELAY_PIPE_SIZE (1024 * 1024)
#define RELAY_SPARE_PIPES 16

static struct {
	int epfd, listen_fd;
	struct pair *dead;
	bool no_splice;			 /* splice(2) refused: copy instead */
	int spare[RELAY_SPARE_PIPES][2]; /* empty pipes, ready for any flow */
	int n_spare;
	unsigned pipe_size;
	struct sockaddr_un addr;
	bool listen_paused;
	char scratch[RELAY_BUF];
} relay;

int
relay_listen(uint16_t port, char *err, size_t errlen)
{
	struct sockaddr_in sin;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), one = 1;

	if (fd < 0) {
		snprintf(err, errlen, "relay: socket: %s", strerror(errno));
		return -1;
	}
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 || listen(fd, 4096) < 0) {
		snprintf(err, errlen, "relay: 127.0.0.1:%u: %s", port, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

uint16_t
relay_port(int listen_fd)
{
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);

	if (getsockname(listen_fd, (struct sockaddr *)&sin, &len) < 0 || sin.sin_family != AF_INET)
		return 0;
	return ntohs(sin.sin_port);
}

static void
die(const char *what)
{
	fprintf(stderr, "omnibox relay: %s: %s\n", what, strerror(errno));
	_exit(1);
}

/* Close both sockets now; free P after the batch (its events may still be queued). */
/* An empty pipe for a flow: a spare one, or a new one as large as allowed. */
static int
pipe_get(int fds[2])
{
	int size;

	if (relay.n_spare) {
		relay.n_spare--;
		fds[0] = relay.spare[relay.n_spare][0];
		fds[1] = relay.spare[relay.n_spare][1];
		return 0;
	}
	if (pipe2(fds, O_NONBLOCK | O_CLOEXEC) < 0)
		return -1;
	fcntl(fds[0], F_SETPIPE_SZ, RELAY_PIPE_SIZE);
	size = fcntl(fds[0], F_GETPIPE_SZ);
	if (size > 0 && (unsigned)size < relay.pipe_size)
		relay.pipe_size = (unsigned)size;
	return 0;
}

/* Give back a flow's pipe: kept when empty and there is room, else closed. */
static void
pipe_put(struct flow *f)
{
	if (f->pipe[0] < 0)
		return;
	if (f->len == 0 && relay.n_spare < RELAY_SPARE_PIPES) {
		relay.spare[relay.n_spare][0] = f->pipe[0];
		relay.spare[relay.n_spare][1] = f->pipe[1];
		relay.n_spare++;
	} else {
		close(f->pipe[0]);
		close(f->pipe[1]);
	}
	f->pipe[0] = f->pipe[1] = -1;
}

static void
pair_close(struct pair *p)
{
	for (int i = 0; i < 2; i++) {
		close(p->fd[i]); /* also removes it from the epoll set */
		free(p->flow[i].buf);
		p->flow[i].buf = NULL;
		pipe_put(&p->flow[i]);
	}
	p->dead = true;
	p->next = relay.dead;
	relay.dead = p;
	if (relay.listen_paused) {
		struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};

		if (epoll_ctl(relay.epfd, EPOLL_CTL_MOD, relay.listen_fd, &ev) == 0)
			relay.listen_paused = false;
	}
}

/* Read from side I while its flow is empty; write to side I while the other flow is not. */
static void
pair_update(struct pair *p)
{
	for (int i = 0; i < 2; i++) {
		uint32_t want = 0;
		struct epoll_event ev;

		if (p->gone[i])
			continue;
		if (!p->flow[i].eof && !p->flow[i].len)
			want |= EPOLLIN;
		if (p->flow[1 - i].len)
			want |= EPOLLOUT;
		if (want == p->events[i])
			continue;
		ev.events = want;
		ev.data.ptr = &p->side[i];
		if (epoll_ctl(relay.epfd, EPOLL_CTL_MOD, p->fd[i], &ev) == 0)
			p->events[i] = want;
	}
}

/* Push flow F (from side I) into side 1 - I.  -1: the connection is broken. */
static int
flow_drain(struct pair *p, int i)
{
	struct flow *f = &p->flow[i];
	int to = p->fd[1 - i];

	while (f->len) {
		ssize_t w = f->pipe[0] >= 0 ? splice(f->pipe[0], NULL, to, NULL, f->len,
						     SPLICE_F_MOVE | SPLICE_F_NONBLOCK)
					    : send(to, f->buf + f->off, f->len, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (w <= 0)
			return -1;
		f->off += (unsigned)w;
		f->len -= (unsigned)w;
	}
	free(f->buf);
	f->buf = NULL;
	f->off = 0;
	pipe_put(f);
	/* Half-close travels on: the other end sees EOF only after every byte. */
	if (f->eof && !f->shut) {
		shutdown(to, SHUT_WR);
		f->shut = true;
	}
	return 0;
}

/*
 * splice(2) side I into a pipe and on into side 1 - I.  Returns 1 when
 * splice cannot be used here (the caller copies instead), else as
 * flow_pump().
 */
static int
flow_splice(struct pair *p, int i)
{
	struct flow *f = &p->flow[i];
	int pp[2];

	if (pipe_get(pp) < 0)
		return 1;
	for (int round = 0; round < RELAY_READS_PER_EVENT && !f->len && !f->eof; round++) {
		ssize_t n = splice(p->fd[i], NULL, pp[1], NULL, relay.pipe_size,
				   SPLICE_F_MOVE | SPLICE_F_NONBLOCK),
			w = 0;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n < 0 && (errno == EINVAL || errno == ENOSYS || errno == EPERM) && round == 0) {
			relay.no_splice = true;
			f->pipe[0] = pp[0];
			f->pipe[1] = pp[1];
			pipe_put(f);
			return 1;
		}
		if (n < 0) {
			f->pipe[0] = pp[0];
			f->pipe[1] = pp[1];
			pipe_put(f);
			return -1;
		}
		if (n == 0) {
			f->eof = true;
			break;
		}
		while (w < n) {
			ssize_t k = splice(pp[0], NULL, p->fd[1 - i], NULL, (size_t)(n - w),
					   SPLICE_F_MOVE | SPLICE_F_NONBLOCK);

			if (k < 0 && errno == EINTR)
				continue;
			if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
				break;
			if (k <= 0) {
				f->pipe[0] = pp[0];
				f->pipe[1] = pp[1];
				f->len = (unsigned)(n - w);
				return -1;
			}
			w += k;
		}
		if (w < n) {
			/* The destination is full: this pipe now holds the flow's bytes. */
			f->pipe[0] = pp[0];
			f->pipe[1] = pp[1];
			f->len = (unsigned)(n - w);
			return 0;
		}
	}
	f->pipe[0] = pp[0];
	f->pipe[1] = pp[1];
	pipe_put(f);
	return f->eof ? flow_drain(p, i) : 0;
}

/* Move what side I has to side 1 - I, keeping the rest when the other side is full. */
static int
flow_pump(struct pair *p, int i)
{
	struct flow *f = &p->flow[i];

	if (!relay.no_splice) {
		int r = flow_splice(p, i);

		if (r <= 0)
			return r;
	}
	for (int round = 0; round < RELAY_READS_PER_EVENT && !f->len && !f->eof; round++) {
		ssize_t n = recv(p->fd[i], relay.scratch, sizeof(relay.scratch), 0), w = 0;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n < 0)
			return -1;
		if (n == 0) {
			f->eof = true;
			return flow_drain(p, i);
		}
		while (w < n) {
			ssize_t k =
			    send(p->fd[1 - i], relay.scratch + w, (size_t)(n - w), MSG_NOSIGNAL);

			if (k < 0 && errno == EINTR)
				continue;
			if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
				break;
			if (k < 0)
				return -1;
			w += k;
		}
		if (w < n) {
			f->buf = malloc(RELAY_BUF);
			if (!f->buf)
				return -1;
			memcpy(f->buf, relay.scratch + w, (size_t)(n - w));
			f->off = 0;
			f->len = (unsigned)(n - w);
		}
	}
	return 0;
}

static void
relay_accept(void)
{
	for (int k = 0; k < RELAY_ACCEPTS_PER_EVENT; k++) {
		int c = accept4(relay.listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC), u,
		    one = 1;
		struct pair *p;

		if (c < 0) {
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
			    errno == ENOMEM) {
				/* Out of descriptors: stop accepting until a connection ends,
				 * instead of spinning on a listener that stays readable. */
				struct epoll_event ev = {.events = 0, .data.ptr = NULL};

				if (epoll_ctl(relay.epfd, EPOLL_CTL_MOD, relay.listen_fd, &ev) == 0)
					relay.listen_paused = true;
			}
			return;
		}
		setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		/* Blocking connect: a Unix socket connects at once unless the proxy's
		 * backlog is full, and then there is nothing better to do than wait. */
		u = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (u < 0 || connect(u, (struct sockaddr *)&relay.addr, sizeof(relay.addr)) < 0 ||
		    fcntl(u, F_SETFL, O_NONBLOCK) < 0) {
			if (u >= 0)
				close(u);
			close(c);
			continue;
		}
		p = calloc(1, sizeof(*p));
		if (!p) {
			close(u);
			close(c);
			continue;
		}
		p->fd[0] = c;
		p->fd[1] = u;
		p->flow[0].pipe[0] = p->flow[0].pipe[1] = -1;
		p->flow[1].pipe[0] = p->flow[1].pipe[1] = -1;
		for (int i = 0; i < 2; i++) {
			struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &p->side[i]};

			p->side[i].pair = p;
			p->side[i].idx = i;
			p->events[i] = EPOLLIN;
			if (epoll_ctl(relay.epfd, EPOLL_CTL_ADD, p->fd[i], &ev) < 0) {
				if (i == 1)
					epoll_ctl(relay.epfd, EPOLL_CTL_DEL, p->fd[0], NULL);
				close(c);
				close(u);
				free(p);
				p = NULL;
				break;
			}
		}
	}
}

static void
relay_event(struct side *s, uint32_t events)
{
	struct pair *p = s->pair;
	int i = s->idx;

	if (p->dead)
		return;
	if (events & EPOLLERR)
		goto broken;
	if (events & EPOLLOUT && flow_drain(p, 1 - i) < 0)
		goto broken;
	if (events & (EPOLLIN | EPOLLHUP) && flow_pump(p, i) < 0)
		goto broken;
	/* Both directions done; or side I hung up for good (nothing can be
	 * written to it any more) and everything it sent has been passed on.
	 * epoll reports a hang-up whatever we ask for, so waiting would spin. */
	if ((p->flow[0].eof && p->flow[1].eof && !p->flow[0].len && !p->flow[1].len) ||
	    (events & EPOLLHUP && p->flow[i].eof && !p->flow[i].len)) {
		pair_close(p);
		return;
	}
	if (events & EPOLLHUP && p->flow[i].eof && !p->gone[i]) {
		/* Still passing on what it sent; stop hearing its hang-up meanwhile. */
		epoll_ctl(relay.epfd, EPOLL_CTL_DEL, p->fd[i], NULL);
		p->gone[i] = true;
	}
	if ((p->gone[0] && !p->flow[0].len) || (p->gone[1] && !p->flow[1].len)) {
		pair_close(p);
		return;
	}
	pair_update(p);
	return;
broken:
	/* A reset on one side ends both: a half-dead pair helps nobody. */
	pair_close(p);
}

void
relay_serve(int listen_fd, const char *socket_path)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL}, events[256];
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	memset(&relay.addr, 0, sizeof(relay.addr));
	relay.addr.sun_family = AF_UNIX;
	if (strlen(socket_path) >= sizeof(relay.addr.sun_path)) {
		errno = ENAMETOOLONG;
		die(socket_path);
	}
	strcpy(relay.addr.sun_path, socket_path);
	relay.listen_fd = listen_fd;
	relay.pipe_size = RELAY_PIPE_SIZE;
	relay.epfd = epoll_create1(EPOLL_CLOEXEC);
	if (relay.epfd < 0)
		die("epoll_create1");
	if (fcntl(listen_fd, F_SETFL, O_NONBLOCK) < 0 ||
	    epoll_ctl(relay.epfd, EPOLL_CTL_ADD, listen_fd, &ev) < 0)
		die("the listening socket");
	for (;;) {
		int n = epoll_wait(relay.epfd, events, 256, relay.listen_paused ? 100 : -1);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			die("epoll_wait");
		if (n == 0 && relay.listen_paused) {
			struct epoll_event again = {.events = EPOLLIN, .data.ptr = NULL};

			if (epoll_ctl(relay.epfd, EPOLL_CTL_MOD, listen_fd, &again) == 0)
				relay.listen_paused = false;
		}
		for (int k = 0; k < n; k++) {
			if (!events[k].data.ptr)
				relay_accept();
			else
				relay_event(events[k].data.ptr, events[k].events);
		}
		while (relay.dead) {
			struct pair *p = relay.dead;

			relay.dead = p->next;
			free(p);
		}
	}
}
