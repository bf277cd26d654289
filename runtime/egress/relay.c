/*
 * relay.c - TCP on loopback to the proxy's Unix socket, one event loop:
 * epoll(7) and splice(2) on Linux, poll(2) and copies elsewhere.  The
 * transparent listeners and the DNS socket (relay.h) share that loop.
 */
#include "runtime/egress/relay.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/epoll.h>
#endif

#include "runtime/egress/fakedns.h"
#include "runtime/egress/handoff.h"

#ifndef MSG_NOSIGNAL
#define MSG_NOSIGNAL 0 /* SIGPIPE is ignored in relay_serve() instead */
#endif

#define RELAY_BUF 65536
#define RELAY_READS_PER_EVENT 8
#define RELAY_ACCEPTS_PER_EVENT 64
#define RELAY_QUERIES_PER_EVENT 64

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

/* What a watched descriptor is: the first member of what it is watched with. */
enum watch_kind {
	W_SIDE,	       /* one side of a pair (struct side) */
	W_PROXY,       /* the listener for clients that know the proxy (struct listener) */
	W_TRANSPARENT, /* a transparent listener (struct listener) */
	W_DNS,	       /* the DNS socket (struct listener) */
};

struct side {
	enum watch_kind kind;
	struct pair *pair;
	int idx;
};

struct listener {
	enum watch_kind kind;
	int fd;
	bool paused; /* out of descriptors: not watched until a connection ends */
};

/* side 0: the agent's TCP connection; side 1: the proxy's Unix socket.
 * flow[i] carries bytes read from side i to side 1 - i. */
struct pair {
	int fd[2];
	unsigned events[2];
	struct flow flow[2];
	struct side side[2];
	bool gone[2];	   /* side hung up and was taken out of the epoll set */
	bool dead;	   /* closed; freed after the current batch of events */
	struct pair *next; /* on the list of dead pairs */
};

#define RELAY_PIPE_SIZE (1024 * 1024)
#define RELAY_SPARE_PIPES 16

/* Readiness in the relay's own terms; both backends map onto them. */
#define R_IN 1u
#define R_OUT 2u
#define R_HUP 4u
#define R_ERR 8u

struct ready {
	void *ptr; /* a struct side or a struct listener (enum watch_kind first) */
	unsigned events;
};

static struct {
	bool use_poll; /* poll(2) instead of epoll(7) */
	int epfd;
	/* poll(2): indexed by descriptor, .fd = -1 where none is watched (poll
	 * skips those), so an idle connection costs 32 bytes here. */
	struct pollfd *pfd;
	void **ptr;
	size_t n_watch;
	struct ready *ready;
	size_t ready_cap;

	/* The proxy's listener first, then the transparent ones. */
	struct listener lst[1 + RELAY_MAX_TRANSPARENT];
	size_t n_lst;
	bool paused; /* one of them is */
	struct listener dns;
	struct fakedns *fakedns; /* the names of the transparent listeners' addresses */
	struct pair *dead;
	bool no_splice;			 /* splice(2) refused or absent: copy instead */
	int spare[RELAY_SPARE_PIPES][2]; /* empty pipes, ready for any flow */
	int n_spare;
	unsigned pipe_size;
	struct sockaddr_un addr;
	int handoff; /* relay_conf.handoff_fd */
	char scratch[RELAY_BUF];
	bool only_uid; /* relay_conf.only_uid */
	uid_t uid;
} relay = {.epfd = -1, .handoff = -1, .dns = {.kind = W_DNS, .fd = -1}};

/*
 * Is the process at the other end of the loopback connection C one of
 * user UID's?  The peer's own socket is the line of /proc/net/tcp whose
 * local address is C's peer and remote address C's own; its uid column
 * says.  Anything that cannot be told is no.
 */
static bool
peer_is_uid(int c, uid_t uid)
{
	struct sockaddr_in peer, self;
	socklen_t pl = sizeof(peer), sl = sizeof(self);
	char line[512];
	bool ok = false;
	FILE *f;

	if (getpeername(c, (struct sockaddr *)&peer, &pl) < 0 ||
	    getsockname(c, (struct sockaddr *)&self, &sl) < 0 || peer.sin_family != AF_INET)
		return false;
	f = fopen("/proc/net/tcp", "re");
	while (f && fgets(line, sizeof(line), f)) {
		unsigned la, lp, ra, rp, u;

		if (sscanf(line, " %*u: %X:%X %X:%X %*X %*X:%*X %*X:%*X %*X %u", &la, &lp, &ra, &rp,
			   &u) != 5)
			continue;
		if (la == peer.sin_addr.s_addr && lp == ntohs(peer.sin_port) &&
		    ra == self.sin_addr.s_addr && rp == ntohs(self.sin_port)) {
			ok = u == (unsigned)uid;
			break;
		}
	}
	if (f)
		fclose(f);
	return ok;
}

/* Non-blocking and close-on-exec, without SOCK_* flags (not everywhere). */
static int
set_flags(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 || fcntl(fd, F_SETFD, FD_CLOEXEC) < 0)
		return -1;
	return 0;
}

/*
 * A socket of TYPE bound to ADDR:PORT (host order), listening when it is
 * a stream.  SO_REUSEADDR for streams (a restart finds the port free of
 * old connections), never SO_REUSEPORT: the agent has the same uid and
 * could otherwise bind the same port and take a share of the connections.
 */
static int
listen_inet(int type, uint32_t addr, uint16_t port, char *err, size_t errlen)
{
	struct sockaddr_in sin;
	int fd = socket(AF_INET, type, 0), one = 1;

	if (fd < 0 || set_flags(fd) < 0) {
		if (fd >= 0)
			close(fd);
		snprintf(err, errlen, "relay: socket: %s", strerror(errno));
		return -1;
	}
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(port);
	sin.sin_addr.s_addr = htonl(addr);
	if (type == SOCK_STREAM)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 ||
	    (type == SOCK_STREAM && listen(fd, 4096) < 0)) {
		snprintf(err, errlen, "relay: %u.%u.%u.%u:%u: %s", addr >> 24, addr >> 16 & 0xffu,
			 addr >> 8 & 0xffu, addr & 0xffu, port, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

int
relay_listen(uint16_t port, char *err, size_t errlen)
{
	return listen_inet(SOCK_STREAM, INADDR_LOOPBACK, port, err, errlen);
}

int
relay_listen_any(uint16_t port, char *err, size_t errlen)
{
	return listen_inet(SOCK_STREAM, INADDR_ANY, port, err, errlen);
}

int
relay_dns_listen(uint32_t addr, uint16_t port, char *err, size_t errlen)
{
	return listen_inet(SOCK_DGRAM, addr, port, err, errlen);
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

/* -1, with "relay: WHAT: " and errno's text in ERR. */
static int
relay_fail(char *err, size_t errlen, const char *what)
{
	snprintf(err, errlen, "relay: %s: %s", what, strerror(errno));
	return -1;
}

void
relay_use_poll(void)
{
	relay.use_poll = true;
}

/* ---- readiness: epoll on Linux, poll everywhere ----------------------------------- */

static int
watch_set(int fd, unsigned events, void *ptr, bool add)
{
#if defined(__linux__)
	if (!relay.use_poll) {
		struct epoll_event ev = {.data.ptr = ptr};

		ev.events = (events & R_IN ? EPOLLIN : 0u) | (events & R_OUT ? EPOLLOUT : 0u);
		return epoll_ctl(relay.epfd, add ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, fd, &ev);
	}
#endif
	if (fd < 0)
		return errno = EBADF, -1;
	if ((size_t)fd >= relay.n_watch) {
		size_t n = relay.n_watch ? relay.n_watch : 64;
		struct pollfd *pfd;
		void **ptrs;

		while (n <= (size_t)fd)
			n *= 2;
		pfd = realloc(relay.pfd, n * sizeof(*pfd));
		if (!pfd)
			return -1;
		relay.pfd = pfd;
		ptrs = realloc(relay.ptr, n * sizeof(*ptrs));
		if (!ptrs)
			return -1;
		relay.ptr = ptrs;
		for (size_t i = relay.n_watch; i < n; i++)
			relay.pfd[i] = (struct pollfd){.fd = -1};
		relay.n_watch = n;
	}
	if (add == (relay.pfd[fd].fd >= 0))
		return errno = add ? EEXIST : ENOENT, -1;
	relay.pfd[fd].fd = fd;
	relay.pfd[fd].events =
	    (short)((events & R_IN ? POLLIN : 0) | (events & R_OUT ? POLLOUT : 0));
	relay.pfd[fd].revents = 0;
	relay.ptr[fd] = ptr;
	return 0;
}

static void
watch_del(int fd)
{
#if defined(__linux__)
	if (!relay.use_poll) {
		epoll_ctl(relay.epfd, EPOLL_CTL_DEL, fd, NULL);
		return;
	}
#endif
	if (fd >= 0 && (size_t)fd < relay.n_watch)
		relay.pfd[fd].fd = -1;
}

/* Room for N entries in relay.ready. */
static int
ready_room(size_t n)
{
	struct ready *r;

	if (n <= relay.ready_cap)
		return 0;
	r = realloc(relay.ready, n * sizeof(*r));
	if (!r)
		return -1;
	relay.ready = r;
	relay.ready_cap = n;
	return 0;
}

/* Wait up to TIMEOUT ms; the ready descriptors go to relay.ready.  Returns their count. */
static int
watch_wait(int timeout)
{
	int got, k = 0;

#if defined(__linux__)
	if (!relay.use_poll) {
		struct epoll_event ev[256];

		if (ready_room(256) < 0)
			return -1;
		got = epoll_wait(relay.epfd, ev, 256, timeout);
		for (k = 0; k < got; k++) {
			uint32_t e = ev[k].events;

			relay.ready[k].ptr = ev[k].data.ptr;
			relay.ready[k].events =
			    (e & EPOLLIN ? R_IN : 0u) | (e & EPOLLOUT ? R_OUT : 0u) |
			    (e & EPOLLHUP ? R_HUP : 0u) | (e & EPOLLERR ? R_ERR : 0u);
		}
		return got;
	}
#endif
	got = poll(relay.pfd, (nfds_t)relay.n_watch, timeout);
	if (got <= 0 || ready_room((size_t)got) < 0)
		return got <= 0 ? got : -1;
	for (size_t fd = 0; fd < relay.n_watch && k < got; fd++) {
		short e = relay.pfd[fd].revents;

		if (relay.pfd[fd].fd < 0 || !e)
			continue;
		relay.ready[k].ptr = relay.ptr[fd];
		relay.ready[k].events = (e & POLLIN ? R_IN : 0u) | (e & POLLOUT ? R_OUT : 0u) |
					(e & POLLHUP ? R_HUP : 0u) |
					(e & (POLLERR | POLLNVAL) ? R_ERR : 0u);
		k++;
	}
	return k;
}

#if defined(__linux__)
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
#else
static void
pipe_put(struct flow *f)
{
	(void)f;
}
#endif

/* Watch the paused listeners again: a descriptor may be free now. */
static void
listeners_resume(void)
{
	if (!relay.paused)
		return;
	relay.paused = false;
	for (size_t k = 0; k < relay.n_lst; k++) {
		struct listener *l = &relay.lst[k];

		if (l->paused && watch_set(l->fd, R_IN, l, false) == 0)
			l->paused = false;
		relay.paused |= l->paused;
	}
}

/* Close both sockets now; free P after the batch (its events may still be queued). */
static void
pair_close(struct pair *p)
{
	for (int i = 0; i < 2; i++) {
		watch_del(p->fd[i]);
		close(p->fd[i]);
		free(p->flow[i].buf);
		p->flow[i].buf = NULL;
		pipe_put(&p->flow[i]);
	}
	p->dead = true;
	p->next = relay.dead;
	relay.dead = p;
	listeners_resume();
}

/* Read from side I while its flow is empty; write to side I while the other flow is not. */
static void
pair_update(struct pair *p)
{
	for (int i = 0; i < 2; i++) {
		unsigned want = 0;

		if (p->gone[i])
			continue;
		if (!p->flow[i].eof && !p->flow[i].len)
			want |= R_IN;
		if (p->flow[1 - i].len)
			want |= R_OUT;
		if (want == p->events[i])
			continue;
		if (watch_set(p->fd[i], want, &p->side[i], false) == 0)
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
#if defined(__linux__)
		ssize_t w = f->pipe[0] >= 0 ? splice(f->pipe[0], NULL, to, NULL, f->len,
						     SPLICE_F_MOVE | SPLICE_F_NONBLOCK)
					    : send(to, f->buf + f->off, f->len, MSG_NOSIGNAL);
#else
		ssize_t w = send(to, f->buf + f->off, f->len, MSG_NOSIGNAL);
#endif

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

#if defined(__linux__)
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
#endif

/* Move what side I has to side 1 - I, keeping the rest when the other side is full. */
static int
flow_pump(struct pair *p, int i)
{
	struct flow *f = &p->flow[i];

	/* Nothing more is taken from side I until what it sent has gone on (a
	 * hang-up is reported whatever we ask for, so this is called anyway). */
	if (f->len || f->eof)
		return 0;
#if defined(__linux__)
	if (!relay.no_splice) {
		int r = flow_splice(p, i);

		if (r <= 0)
			return r;
	}
#endif
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

/*
 * The preamble that names a transparent connection's destination to the
 * proxy, into BUF (CAP bytes): the name the fake address C was accepted on
 * stands for, and the port.  Its length, or 0 when that address stands
 * for no name (127.0.0.1, or an address of the block not given yet).
 */
static size_t
transparent_preamble(int c, char *buf, size_t cap)
{
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);
	const char *name;
	int n;

	if (!relay.fakedns || getsockname(c, (struct sockaddr *)&sin, &len) < 0 ||
	    sin.sin_family != AF_INET)
		return 0;
	name = fakedns_name(relay.fakedns, ntohl(sin.sin_addr.s_addr));
	if (!name)
		return 0;
	n = snprintf(buf, cap,
		     "CONNECT %s:%u HTTP/1.1\r\nHost: %s:%u\r\nOmnibox-Transparent: 1\r\n\r\n",
		     name, ntohs(sin.sin_port), name, ntohs(sin.sin_port));
	return n > 0 && (size_t)n < cap ? (size_t)n : 0;
}

/* A new connection to the proxy's socket, or -1. */
static int
proxy_connect(void)
{
	int u = socket(AF_UNIX, SOCK_STREAM, 0);

	/* Blocking connect: a Unix socket connects at once unless the proxy's
	 * backlog is full, and then there is nothing better to do than wait. */
	if (u < 0 || fcntl(u, F_SETFD, FD_CLOEXEC) < 0 ||
	    connect(u, (struct sockaddr *)&relay.addr, sizeof(relay.addr)) < 0 ||
	    set_flags(u) < 0) {
		if (u >= 0)
			close(u);
		return -1;
	}
	return u;
}

/*
 * Client C and proxy connection U as a pair, watched.  The N bytes of
 * PREAMBLE (if any) go to the proxy before anything C sends: they are the
 * client-to-proxy flow's pending bytes, and a flow with pending bytes is
 * not read from (nor spliced) until they are gone.
 */
static void
pair_open(int c, int u, const char *preamble, size_t n)
{
	struct pair *p = calloc(1, sizeof(*p));

	if (!p || (n && !(p->flow[0].buf = malloc(n)))) {
		free(p);
		close(u);
		close(c);
		return;
	}
	p->fd[0] = c;
	p->fd[1] = u;
	p->flow[0].pipe[0] = p->flow[0].pipe[1] = -1;
	p->flow[1].pipe[0] = p->flow[1].pipe[1] = -1;
	if (n)
		memcpy(p->flow[0].buf, preamble, n);
	p->flow[0].len = (unsigned)n;
	for (int i = 0; i < 2; i++) {
		p->side[i].kind = W_SIDE;
		p->side[i].pair = p;
		p->side[i].idx = i;
		p->events[i] = R_IN;
		if (watch_set(p->fd[i], R_IN, &p->side[i], true) < 0) {
			if (i == 1)
				watch_del(p->fd[0]);
			close(c);
			close(u);
			free(p->flow[0].buf);
			free(p);
			return;
		}
	}
	if (n && flow_drain(p, 0) < 0) {
		pair_close(p);
		return;
	}
	pair_update(p);
}

static void
relay_accept(struct listener *l)
{
	for (int k = 0; k < RELAY_ACCEPTS_PER_EVENT; k++) {
		int c = accept(l->fd, NULL, NULL), u, one = 1;
		char preamble[HANDOFF_PREAMBLE_MAX];
		size_t n = 0;

		if (c < 0) {
			/* Out of descriptors: stop accepting until a connection ends,
			 * instead of spinning on a listener that stays readable. */
			if ((errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
			     errno == ENOMEM) &&
			    watch_set(l->fd, 0, l, false) == 0)
				l->paused = relay.paused = true;
			return;
		}
		if (set_flags(c) < 0 || (relay.only_uid && !peer_is_uid(c, relay.uid))) {
			close(c);
			continue;
		}
		/* A transparent connection to an address that names nothing ends
		 * here: the proxy is never asked about it. */
		if (l->kind == W_TRANSPARENT &&
		    (n = transparent_preamble(c, preamble, sizeof(preamble))) == 0) {
			close(c);
			continue;
		}
		setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		/* The proxy takes the connection itself: nothing of it stays here.
		 * Its queue full (or the channel gone), the bytes go the old way. */
		if (relay.handoff >= 0 && handoff_send(relay.handoff, c, preamble, n) == 0) {
			close(c);
			continue;
		}
		u = proxy_connect();
		if (u < 0) {
			close(c);
			continue;
		}
		pair_open(c, u, preamble, n);
	}
}

/*
 * The queries waiting on the DNS socket, answered from the table; a reply
 * that cannot be sent at once is dropped (the client asks again).  Never
 * blocks, and takes a bounded number per event so that a flood of queries
 * cannot starve the connections.
 */
static void
dns_read(void)
{
	unsigned char out[FAKEDNS_UDP_MAX];

	for (int k = 0; k < RELAY_QUERIES_PER_EVENT; k++) {
		struct sockaddr_storage from;
		socklen_t fromlen = sizeof(from);
		ssize_t n = recvfrom(relay.dns.fd, relay.scratch, sizeof(relay.scratch), 0,
				     (struct sockaddr *)&from, &fromlen);
		size_t len;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return;
		len = fakedns_answer(relay.fakedns, (const unsigned char *)relay.scratch, (size_t)n,
				     out, sizeof(out));
		if (len)
			sendto(relay.dns.fd, out, len, MSG_DONTWAIT | MSG_NOSIGNAL,
			       (struct sockaddr *)&from, fromlen);
	}
}

static void
relay_event(struct side *s, unsigned events)
{
	struct pair *p = s->pair;
	int i = s->idx;

	if (p->dead)
		return;
	if (events & R_ERR)
		goto broken;
	if (events & R_OUT && flow_drain(p, 1 - i) < 0)
		goto broken;
	if (events & (R_IN | R_HUP) && flow_pump(p, i) < 0)
		goto broken;
	/* Both directions done; or side I hung up for good (nothing can be
	 * written to it any more) and everything it sent has been passed on.
	 * epoll and poll report a hang-up whatever we ask for, so waiting would
	 * spin. */
	if ((p->flow[0].eof && p->flow[1].eof && !p->flow[0].len && !p->flow[1].len) ||
	    (events & R_HUP && p->flow[i].eof && !p->flow[i].len)) {
		pair_close(p);
		return;
	}
	if (events & R_HUP && p->flow[i].eof && !p->gone[i]) {
		/* Still passing on what it sent; stop hearing its hang-up meanwhile. */
		watch_del(p->fd[i]);
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

/* LISTEN_FD watched as a listener of KIND. */
static int
listener_add(int fd, enum watch_kind kind)
{
	struct listener *l = &relay.lst[relay.n_lst];

	*l = (struct listener){.kind = kind, .fd = fd};
	if (set_flags(fd) < 0 || watch_set(fd, R_IN, l, true) < 0)
		return -1;
	relay.n_lst++;
	return 0;
}

/* Everything relay_loop() needs: the proxy's address, the backend, the sockets watched. */
static int
relay_setup(const struct relay_conf *conf, char *err, size_t errlen)
{
	struct rlimit rl;

	signal(SIGPIPE, SIG_IGN);
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	memset(&relay.addr, 0, sizeof(relay.addr));
	relay.addr.sun_family = AF_UNIX;
	if (strlen(conf->socket_path) >= sizeof(relay.addr.sun_path)) {
		errno = ENAMETOOLONG;
		return relay_fail(err, errlen, conf->socket_path);
	}
	strcpy(relay.addr.sun_path, conf->socket_path);
	relay.handoff = conf->handoff ? conf->handoff_fd : -1;
	relay.pipe_size = RELAY_PIPE_SIZE;
	if (conf->n_tp > RELAY_MAX_TRANSPARENT) {
		errno = E2BIG;
		return relay_fail(err, errlen, "transparent listeners");
	}
#if defined(__linux__)
	if (!relay.use_poll && (relay.epfd = epoll_create1(EPOLL_CLOEXEC)) < 0)
		return relay_fail(err, errlen, "epoll_create1");
#else
	relay.use_poll = true;
	relay.no_splice = true;
#endif
	if (conf->listen_fd >= 0 && listener_add(conf->listen_fd, W_PROXY) < 0)
		return relay_fail(err, errlen, "the listening socket");
	for (size_t k = 0; k < conf->n_tp; k++)
		if (listener_add(conf->tp_fd[k], W_TRANSPARENT) < 0)
			return relay_fail(err, errlen, "a transparent listener");
	if (conf->n_tp == 0 && conf->dns_fd < 0)
		return 0;
	/* The names are only ever needed by this process: the table is its own. */
	relay.fakedns = fakedns_new();
	if (!relay.fakedns)
		return relay_fail(err, errlen, "the DNS table");
	relay.dns.fd = conf->dns_fd;
	if (conf->dns_fd >= 0 &&
	    (set_flags(conf->dns_fd) < 0 || watch_set(conf->dns_fd, R_IN, &relay.dns, true) < 0))
		return relay_fail(err, errlen, "the DNS socket");
	return 0;
}

int
relay_run_conf(const struct relay_conf *conf, char *err, size_t errlen)
{
	relay.only_uid = conf->only_uid;
	relay.uid = conf->uid;
	if (relay_setup(conf, err, errlen) < 0)
		return -1;
	for (;;) {
		int n = watch_wait(relay.paused ? 100 : -1);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return relay_fail(err, errlen, "waiting for connections");
		if (n == 0)
			listeners_resume();
		for (int k = 0; k < n; k++) {
			enum watch_kind *kind = relay.ready[k].ptr;

			if (*kind == W_SIDE)
				relay_event(relay.ready[k].ptr, relay.ready[k].events);
			else if (*kind == W_DNS)
				dns_read();
			else
				relay_accept(relay.ready[k].ptr);
		}
		while (relay.dead) {
			struct pair *p = relay.dead;

			relay.dead = p->next;
			free(p);
		}
	}
}

int
relay_run(int listen_fd, const char *socket_path, char *err, size_t errlen)
{
	struct relay_conf conf = {.listen_fd = listen_fd, .socket_path = socket_path, .dns_fd = -1};

	return relay_run_conf(&conf, err, errlen);
}

void
relay_serve_conf(const struct relay_conf *conf)
{
	char err[8192];

	relay_run_conf(conf, err, sizeof(err));
	fprintf(stderr, "omnibox %s\n", err);
	_exit(1);
}

void
relay_serve(int listen_fd, const char *socket_path)
{
	struct relay_conf conf = {.listen_fd = listen_fd, .socket_path = socket_path, .dns_fd = -1};

	relay_serve_conf(&conf);
}

void
relay_serve_uid(int listen_fd, const char *socket_path, int handoff_fd, uid_t uid)
{
	struct relay_conf conf = {.listen_fd = listen_fd,
				  .socket_path = socket_path,
				  .dns_fd = -1,
				  .only_uid = true,
				  .uid = uid,
				  .handoff = handoff_fd >= 0,
				  .handoff_fd = handoff_fd};

	relay_serve_conf(&conf);
}
