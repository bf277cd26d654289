/*
 * proxy_conn.c - the egress proxy's connections and caps: the memory it
 * counts (and relieves), a connection's lifetime, reading and writing its
 * sockets, parking, eviction, deadlines, and accepting new connections.
 */
#include "runtime/egress/proxy_int.h"

#include <stdatomic.h>

static void conn_check_closed(struct conn *c);
static void park_remove(struct conn *c);
static void mem_relieve(struct proxy *p);

/* ---- memory --------------------------------------------------------------------- */

/*
 * Every allocation of libevent and OpenSSL (once proxy_memory_init() ran)
 * and the proxy's own larger ones carry their size, so the proxy knows
 * what it holds: the caps act on that, not on an estimate.  One thread.
 */
struct mem_hdr {
	size_t size;
	size_t pad; /* keeps what follows 16-byte aligned */
};

/* Atomic: the system's CAs are read on a second thread at the start
 * (proxy_prefetch_cas()), with OpenSSL's allocations counted here. */
_Atomic size_t mem_used, mem_peak;
size_t mem_limit = PROXY_MEMORY_DEFAULT;
/* What connections closed to make room will give back once libevent frees
 * them (at the next turn of the loop): counted as gone already, or every
 * reader in this turn would close more. */
static size_t mem_pending;

/* USED, counted now: the peak if above it. */
static void
note_peak(size_t used)
{
	size_t peak = mem_peak;

	while (used > peak && !atomic_compare_exchange_weak(&mem_peak, &peak, used))
		;
}

void *
mem_alloc(size_t n)
{
	struct mem_hdr *h;

	if (n > SIZE_MAX - sizeof(*h))
		return NULL;
	h = malloc(sizeof(*h) + n);
	if (!h)
		return NULL;
	h->size = n;
	note_peak(mem_used += n);
	return h + 1;
}

void *
mem_zalloc(size_t n)
{
	void *q = mem_alloc(n);

	if (q)
		memset(q, 0, n);
	return q;
}

void
mem_release(void *q)
{
	struct mem_hdr *h;

	if (!q)
		return;
	h = (struct mem_hdr *)q - 1;
	mem_used -= h->size;
	free(h);
}

static void *
mem_resize(void *q, size_t n)
{
	struct mem_hdr *h, *g;

	if (!q)
		return mem_alloc(n);
	if (n > SIZE_MAX - sizeof(*h))
		return NULL;
	h = (struct mem_hdr *)q - 1;
	g = realloc(h, sizeof(*g) + n);
	if (!g)
		return NULL;
	note_peak(n >= g->size ? (mem_used += n - g->size) : (mem_used -= g->size - n));
	g->size = n;
	return g + 1;
}

static void *
ossl_alloc(size_t n, const char *file, int line)
{
	(void)file;
	(void)line;
	return mem_alloc(n);
}

static void *
ossl_resize(void *q, size_t n, const char *file, int line)
{
	(void)file;
	(void)line;
	return mem_resize(q, n);
}

static void
ossl_release(void *q, const char *file, int line)
{
	(void)file;
	(void)line;
	mem_release(q);
}

void
proxy_memory_init(void)
{
	event_set_mem_functions(mem_alloc, mem_resize, mem_release);
	/* Refused (0) when OpenSSL allocated already: then it is not counted. */
	(void)CRYPTO_set_mem_functions(ossl_alloc, ossl_resize, ossl_release);
}

/*
 * What is counted is what the proxy asked for; the process holds more
 * (allocator overhead and fragmentation, a third more under a flood of
 * connections, and its code and libraries), so the thresholds stay well
 * under the limit: the limit is on the whole process's resident memory.
 * Past 3/8: buffer less.  Past 5/8: read only into empty buffers.
 */
#define MEM_IN_USE (mem_used > mem_pending ? mem_used - mem_pending : 0)
#define MEM_TIGHT (MEM_IN_USE > mem_limit / 8 * 3)
#define MEM_FULL (MEM_IN_USE > mem_limit / 8 * 5)
/* Past 1/2: parked connections are closed (down to 3/8), and new ones close one. */
#define MEM_RELIEVE (MEM_IN_USE > mem_limit / 2)

static size_t
mem_hwm(void)
{
	if (MEM_FULL)
		return 1;
	return MEM_TIGHT ? PROXY_LWM : PROXY_HWM;
}

/* ---- connection lifetime -------------------------------------------------------- */

static void
later_cb(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;

	(void)fd;
	(void)what;
	if (c->dead) {
		mem_pending -= c->weight < mem_pending ? c->weight : mem_pending;
		event_free(c->later);
		mem_release(c);
		return;
	}
	if (c->closing) {
		conn_check_closed(c);
		return;
	}
	if (c->dns_done) {
		c->dns_done = false;
		dns_finish(c);
	}
}

void
free_request(struct conn *c)
{
	mem_release(c->req);
	c->req = NULL;
	mem_release(c->resp);
	c->resp = NULL;
	if (c->up_head) {
		evbuffer_free(c->up_head);
		c->up_head = NULL;
	}
	free(c->log_url);
	c->log_url = NULL;
	mem_release(c->resp_body.sc);
	c->resp_body.sc = NULL;
}

void
up_close(struct conn *c)
{
	splice_end(c);
	if (c->up_rd)
		event_free(c->up_rd);
	c->up_rd = NULL;
	/* A filter frees the socket bufferevent under it (both BEV_OPT_CLOSE_ON_FREE). */
	if (c->up)
		bufferevent_free(c->up);
	else if (c->up_sock)
		bufferevent_free(c->up_sock);
	c->up = c->up_sock = NULL;
	c->up_leg = NULL;
	c->up_rd_done = false;
	c->up_room = 0;
	c->up_connected = c->up_reusable = c->up_used = false;
}

/* Close everything now; the struct goes at the next loop turn. */
void
conn_kill(struct conn *c)
{
	struct proxy *p = c->p;

	if (c->dead)
		return;
	c->dead = true;
	if (c->dns) {
		evdns_getaddrinfo_cancel(c->dns); /* its callback sees EVUTIL_EAI_CANCEL */
		c->dns = NULL;
	}
	if (c->dns_res)
		evutil_freeaddrinfo(c->dns_res);
	up_close(c);
	if (c->timer)
		event_free(c->timer);
	c->timer = NULL;
	park_remove(c);
	p->head_bytes -= c->head_seen;
	c->head_seen = 0;
	if (c->cli_rd)
		event_free(c->cli_rd);
	c->cli_rd = NULL;
	/* The filter (if any) frees SSL and the socket bufferevent, which
	 * does not own the socket: that is closed here, once. */
	if (c->cli)
		bufferevent_free(c->cli);
	c->cli = c->cli_sock = NULL;
	c->cli_leg = NULL;
	evutil_closesocket(c->fd);
	free_request(c);
	free(c->addrs);
	free(c->host);
	mem_release(c->ws);
	c->ws = NULL;
	if (c->scrub_timer)
		event_free(c->scrub_timer);
	c->scrub_timer = NULL;
	if (c->prev)
		c->prev->next = c->next;
	else
		p->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	p->stats.open--;
	event_active(c->later, EV_TIMEOUT, 0);
}

/*
 * Closing: everything queued for the agent goes out first, then (TLS) a
 * close_notify, so a close-delimited answer cannot be taken for a
 * truncated one, then the socket closes.  Nothing tells the proxy when
 * the socket bufferevent under a filter has drained, so this looks every
 * few milliseconds, for at most CLOSE_TIMEOUT seconds.
 */
static void
conn_check_closed(struct conn *c)
{
	struct timeval again = {0, 5000};
	size_t filtered = c->cli_tls ? evbuffer_get_length(bufferevent_get_output(c->cli)) : 0;

	if (c->cli_tls && filtered == 0 && !c->shut_sent) {
		c->shut_sent = true;
		tlsleg_close_notify(c->cli_leg);
	}
	if ((filtered == 0 && evbuffer_get_length(bufferevent_get_output(c->cli_sock)) == 0) ||
	    time(NULL) > c->closing_deadline) {
		static char junk[16384];
		ssize_t r;

		/*
		 * Everything is out.  What the agent is still sending (the rest
		 * of a refused request) is read and dropped until it stops: a
		 * close with it unread would reset the connection, and the
		 * answer could be lost on the way.  For LINGER seconds at most.
		 */
		if (!c->lingering) {
			c->lingering = true;
			c->linger_until = time(NULL) + LINGER;
			shutdown(c->fd, SHUT_WR);
		}
		while ((r = recv(c->fd, junk, sizeof(junk), MSG_DONTWAIT)) > 0)
			c->lingered += (size_t)r;
		if (r == 0 || (errno != EAGAIN && errno != EWOULDBLOCK) ||
		    c->lingered > LINGER_MAX || time(NULL) > c->linger_until) {
			conn_kill(c);
			return;
		}
	}
	event_add(c->later, &again);
}

/* Send what is queued for the agent, then close. */
void
conn_finish(struct conn *c)
{
	if (c->dead || c->closing)
		return;
	c->closing = true;
	c->closing_deadline = time(NULL) + CLOSE_TIMEOUT;
	park_remove(c);
	event_del(c->timer);
	up_close(c);
	if (c->dns) {
		evdns_getaddrinfo_cancel(c->dns);
		c->dns = NULL;
	}
	conn_update_io(c);
	conn_check_closed(c);
}

/* ---- the agent side ------------------------------------------------------------------ */

/*
 * libevent 2.1 reads a socket 4 KiB at a time.  Every socket of the proxy
 * is read here instead, into its plain socket bufferevent's input; whoever
 * listens on that bufferevent (the conn's callbacks, or an OpenSSL filter
 * stacked on it) is then told, as if libevent had read.  libevent still
 * does the writing (writev of whole chains).
 *
 * *ROOM is how much to reserve: PROXY_READ, doubled (up to PROXY_READ_MAX)
 * after every read that filled all the room it had, back to PROXY_READ
 * after a read of less.  Only a socket that keeps more waiting than it is
 * read at a time gets large buffers; a request or an idle connection never
 * does.  Returns the bytes read, 0 at EOF, -1 with errno.
 */
static ssize_t
read_into(evutil_socket_t fd, struct evbuffer *in, size_t *room, bool parked)
{
	struct evbuffer_iovec v[2];
	struct iovec iov[2];
	ssize_t r, left;
	size_t got = 0;
	int n, saved;

	if (*room < PROXY_READ || MEM_TIGHT)
		*room = PROXY_READ;
	/* A head, a handshake or a parked connection: little at a time, so that
	 * thousands of them waiting hold little (a head is read on to its end). */
	if (parked)
		*room = PROXY_READ_PARKED;
	/* A socket bufferevent keeps its input's end frozen between its own reads. */
	evbuffer_unfreeze(in, 0);
	n = evbuffer_reserve_space(in, (ev_ssize_t)*room, v, 2);
	if (n <= 0) {
		evbuffer_freeze(in, 0);
		errno = ENOMEM;
		return -1;
	}
	for (int i = 0; i < n; i++) {
		iov[i].iov_base = v[i].iov_base;
		iov[i].iov_len = v[i].iov_len;
		got += v[i].iov_len;
	}
	do
		r = readv(fd, iov, n);
	while (r < 0 && errno == EINTR);
	saved = errno;
	if (r > 0 && (size_t)r >= got && *room < PROXY_READ_MAX && !MEM_TIGHT)
		*room = *room * 2 + 256; /* 64 KiB - 256 doubles to 128 KiB - 256, ... */
	else if (r < (ssize_t)PROXY_READ)
		*room = PROXY_READ;
	if (r > 0) {
		left = r;
		for (int i = 0; i < n; i++) {
			v[i].iov_len = (size_t)left < v[i].iov_len ? (size_t)left : v[i].iov_len;
			left -= (ssize_t)v[i].iov_len;
		}
		evbuffer_commit_space(in, v, n);
	} else if (evbuffer_get_length(in) == 0 && evbuffer_add(in, "", 1) == 0) {
		evbuffer_drain(in, 1); /* do not keep the 64 KiB reserved for nothing */
	}
	evbuffer_freeze(in, 0);
	errno = saved;
	return r;
}

/*
 * An empty evbuffer may still hold the chain last reserved for reading
 * into it (an OpenSSL filter reserves 4 KiB, an 8 KiB allocation, every
 * time it looks for a record and finds none).  Idle connections should not
 * keep one each: evbuffer_drain() frees every chain once the buffer is
 * emptied, so put one byte in and take it out.
 */
static void
evbuffer_release(struct evbuffer *b)
{
	if (evbuffer_get_length(b) == 0 && evbuffer_add(b, "", 1) == 0)
		evbuffer_drain(b, 1);
}

/* Release what the connection's buffers hold while it waits for its next request. */
void
conn_release_buffers(struct conn *c)
{
	if (c->cli_tls)
		evbuffer_release(bufferevent_get_input(c->cli));
	if (c->up && c->up != c->up_sock)
		evbuffer_release(bufferevent_get_input(c->up));
}

/* Read SOCK's socket FD once; at EOF or on an error, stop for good (*DONE). */
static void
sock_read(struct bufferevent *sock, evutil_socket_t fd, short what, struct event *rd, bool *done,
	  size_t *room, bool parked)
{
	ssize_t r;

	if (what & EV_TIMEOUT) {
		bufferevent_trigger_event(sock, BEV_EVENT_READING | BEV_EVENT_TIMEOUT, 0);
		return;
	}
	r = read_into(fd, bufferevent_get_input(sock), room, parked);
	if (r > 0) {
		bufferevent_trigger(sock, EV_READ, 0);
		return;
	}
	if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return;
	/* A socket at EOF stays readable: stop listening before telling anyone. */
	*done = true;
	event_del(rd);
	bufferevent_trigger_event(
	    sock, BEV_EVENT_READING | (r == 0 ? BEV_EVENT_EOF : BEV_EVENT_ERROR), 0);
}

static void
cli_rd_cb(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;

	sock_read(c->cli_sock, fd, what, c->cli_rd, &c->cli_rd_done, &c->cli_room,
		  c->rq == RQ_HEAD || c->rq == RQ_HANDSHAKE);
	mem_relieve(c->p);
}

void
up_rd_cb(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;

	sock_read(c->up_sock, fd, what, c->up_rd, &c->up_rd_done, &c->up_room, false);
	mem_relieve(c->p);
}

/* Reading on or off: our event on the socket, and the filter's flow, if any. */
static void
set_reading(struct bufferevent *bev, struct bufferevent *sock, struct event *rd, bool done, bool on,
	    const struct timeval *timeout)
{
	if (bev != sock && !!(bufferevent_get_enabled(bev) & EV_READ) != on) {
		if (on) {
			bufferevent_enable(bev, EV_READ);
			/* A filter looks at its socket's input only when told: records
			 * that came while it was off are opened now. */
			if (evbuffer_get_length(bufferevent_get_input(sock)))
				bufferevent_trigger(sock, EV_READ, 0);
		} else {
			bufferevent_disable(bev, EV_READ);
		}
	}
	if (!rd || done || !!event_pending(rd, EV_READ, NULL) == on)
		return;
	if (on)
		event_add(rd, timeout);
	else
		event_del(rd);
}

/*
 * Write what SOCK holds now rather than at the next turn of the loop
 * (libevent waits for the socket to be reported writable): one wakeup less
 * per hop, which is most of what the proxy adds to a request's latency.
 * Whatever the socket does not take, libevent writes as usual.
 */
void
sock_flush(struct bufferevent *sock)
{
	struct evbuffer *out = bufferevent_get_output(sock);

	if (!evbuffer_get_length(out))
		return;
	/* A socket bufferevent keeps its output's start frozen between its own writes. */
	evbuffer_unfreeze(out, 1);
	evbuffer_write_atmost(out, bufferevent_getfd(sock), PROXY_MAX_IO);
	evbuffer_freeze(out, 1);
}

void
conn_update_io(struct conn *c)
{
	static const struct timeval up_wait = {UPSTREAM_TIMEOUT, 0},
				    up_idle = {UPSTREAM_IDLE_TIMEOUT, 0};
	size_t hwm = mem_hwm();
	/* Under a TLS filter, what it encrypted and the socket has not sent counts too. */
	size_t up_out = c->up ? evbuffer_get_length(bufferevent_get_output(c->up)) : 0;
	size_t cli_out = c->cli ? evbuffer_get_length(bufferevent_get_output(c->cli)) : 0;

	if (c->up && c->up_sock && c->up_sock != c->up)
		up_out += evbuffer_get_length(bufferevent_get_output(c->up_sock));
	if (c->cli && c->cli_sock && c->cli_sock != c->cli)
		cli_out += evbuffer_get_length(bufferevent_get_output(c->cli_sock));
	bool cr = false, ur = false;

	if (c->dead)
		return;
	/* Not while the 200 to a CONNECT is out (dest_ready() and cli_write_cb()
	 * decide when TLS starts) nor in the middle of a handshake. */
	if (c->cli_sock && c->rq != RQ_HANDSHAKE && c->rq != RQ_SEND200)
		sock_flush(c->cli_sock);
	if (c->up_sock && c->up_connected)
		sock_flush(c->up_sock);
	if (!c->closing) {
		switch (c->rq) {
		case RQ_HEAD:
		case RQ_HANDSHAKE:
		case RQ_SNIFF:
			cr = true;
			break;
		case RQ_BODY:
			cr = c->up_connected && up_out < hwm;
			break;
		case RQ_TUNNEL:
			cr = up_out < hwm;
			break;
		default:
			break;
		}
		switch (c->rs) {
		case RS_HEAD:
			ur = c->up_connected;
			break;
		case RS_BODY:
		case RS_TUNNEL:
			ur = cli_out < hwm;
			break;
		case RS_IDLE:
			ur = c->up && c->up_connected; /* to notice the server closing */
			break;
		default:
			break;
		}
	}
	/* The agent's deadlines are c->timer's (absolute); the upstream's reset on reads. */
	if (c->cli)
		set_reading(c->cli, c->cli_sock, c->cli_rd, c->cli_rd_done, cr, NULL);
	if (c->up && c->up_connected && !c->sp)
		set_reading(c->up, c->up_sock, c->up_rd, c->up_rd_done, ur,
			    c->rs == RS_IDLE	 ? &up_idle
			    : c->rs == RS_TUNNEL ? NULL
						 : &up_wait);
}

void
tune_sock(struct bufferevent *sock)
{
	bufferevent_set_max_single_write(sock, PROXY_MAX_IO);
	bufferevent_setwatermark(sock, EV_WRITE, PROXY_LWM, 0);
}

/*
 * A filter with no read high-water mark decrypts everything its socket
 * bufferevent holds at once (what read_into() put there); the socket's
 * write high-water mark keeps the filter from encrypting more than
 * PROXY_HWM ahead of the network, so the rest waits in the filter's output,
 * where conn_update_io() sees it.
 */
void
tune_filter(struct bufferevent *tls, struct bufferevent *sock)
{
	bufferevent_disable(sock, EV_READ); /* read_into() reads it */
	bufferevent_setwatermark(sock, EV_WRITE, PROXY_LWM, PROXY_HWM);
	bufferevent_setwatermark(tls, EV_READ, 0, 0);
	bufferevent_setwatermark(tls, EV_WRITE, PROXY_LWM, 0);
}

/* ---- the caps ------------------------------------------------------------------------ */

static void conn_timer_cb(evutil_socket_t fd, short what, void *arg);

static unsigned long long
now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (unsigned long long)t.tv_sec * 1000 + (unsigned long long)t.tv_nsec / 1000000;
}

static void
park_remove(struct conn *c)
{
	struct proxy *p = c->p;

	if (!c->parked)
		return;
	if (c->park_prev)
		c->park_prev->park_next = c->park_next;
	else
		p->park_head = c->park_next;
	if (c->park_next)
		c->park_next->park_prev = c->park_prev;
	else
		p->park_tail = c->park_prev;
	c->park_prev = c->park_next = NULL;
	c->parked = false;
}

/*
 * The connection now waits for the agent (a head, a handshake, its next
 * request) for at most SECONDS.  Parked connections are kept in the order
 * they began to wait, so the longest-parked is found at once.
 */
void
conn_park(struct conn *c, int seconds)
{
	struct proxy *p = c->p;
	struct timeval t = {seconds, 0};

	park_remove(c);
	c->parked = true;
	c->parked_ms = now_ms();
	c->park_prev = p->park_tail;
	if (p->park_tail)
		p->park_tail->park_next = c;
	else
		p->park_head = c;
	p->park_tail = c;
	event_add(c->timer, &t);
}

/* The agent is being served: not parked, and DEADLINE (0: none) for this state. */
void
conn_unpark(struct conn *c, int deadline)
{
	struct timeval t = {deadline, 0};

	park_remove(c);
	if (deadline)
		event_add(c->timer, &t);
	else
		event_del(c->timer);
}

static struct conn *
oldest_parked(struct proxy *p)
{
	return p->park_head;
}

/* The first closing or refusal of an episode is logged; the rest are counted. */
static void
cap_reached(struct proxy *p, const char *why)
{
	if (p->at_cap)
		return;
	p->at_cap = true;
	p->cap_refused = p->stats.refused;
	p->cap_evicted = p->stats.evicted;
	plog(p,
	     "proxy: %s (%lu open of %zu, memory %zu KiB of %zu KiB): the longest-parked "
	     "connections are closed, new ones refused when none is parked; counted from now, "
	     "not logged",
	     why, p->stats.open, p->max_conns, mem_used >> 10, mem_limit >> 10);
}

/* From the once-a-second sweep: a second without closing or refusing, well under the caps. */
static void
cap_check_end(struct proxy *p)
{
	unsigned long acted = p->stats.evicted + p->stats.refused;
	bool quiet = acted == p->cap_seen;

	p->cap_seen = acted;
	if (!p->at_cap || !quiet || p->stats.open > p->max_conns / 2 || MEM_TIGHT)
		return;
	p->at_cap = false;
	plog(p, "proxy: back under the caps: %lu connections closed and %lu refused meanwhile",
	     p->stats.evicted - p->cap_evicted, p->stats.refused - p->cap_refused);
}

static void
evict(struct conn *c, const char *why)
{
	cap_reached(c->p, why);
	c->p->stats.evicted++;
	conn_kill(c);
}

/*
 * About what closing C gives back.  libevent frees a bufferevent at the
 * next turn of the loop, so the count cannot be watched going down.
 */
static size_t
conn_weight(const struct conn *c)
{
	size_t n = sizeof(*c) + 4096 + PROXY_READ_PARKED;

	if (c->req)
		n += sizeof(*c->req);
	if (c->cli)
		n += evbuffer_get_length(bufferevent_get_input(c->cli));
	if (c->cli_sock && c->cli_sock != c->cli)
		n += evbuffer_get_length(bufferevent_get_input(c->cli_sock)) + 32768; /* TLS */
	return n;
}

/* What C holds for its two sides to take: what the agent, or the server, has not read. */
static size_t
conn_buffered(const struct conn *c)
{
	size_t n = 0;

	if (c->cli) {
		n += evbuffer_get_length(bufferevent_get_output(c->cli));
		if (c->cli_sock && c->cli_sock != c->cli)
			n += evbuffer_get_length(bufferevent_get_output(c->cli_sock));
	}
	if (c->up) {
		n += evbuffer_get_length(bufferevent_get_output(c->up));
		if (c->up_sock && c->up_sock != c->up)
			n += evbuffer_get_length(bufferevent_get_output(c->up_sock));
	}
	return n;
}

/*
 * Memory is past half the limit and nothing parked is left: the
 * connection whose other side has left the most unread goes (an agent that
 * does not read its downloads, a server that does not take an upload).
 * Reading stopped past 5/8 already, so this only runs when memory stays up.
 */
static size_t
evict_heaviest(struct proxy *p)
{
	struct conn *heaviest = NULL;
	size_t most = PROXY_LWM;

	for (struct conn *c = p->conns; c; c = c->next) {
		size_t n = c->dead || c->closing ? 0 : conn_buffered(c);

		if (n > most) {
			most = n;
			heaviest = c;
		}
	}
	if (!heaviest)
		return 0;
	heaviest->weight = most;
	mem_pending += most;
	evict(heaviest, "memory near its cap, the connection with the most left unread closed");
	return most;
}

/*
 * Memory past half the limit: close connections down to 3/8.  First those
 * parked for a second or more (oldest first), then the one with the most
 * left unread, and only then the young parked ones (in the middle of a
 * handshake or a head): a request on its way is the last to go.
 */
static void
mem_relieve(struct proxy *p)
{
	size_t freed = 0, excess, n;
	struct conn *c;

	if (!MEM_RELIEVE)
		return;
	excess = MEM_IN_USE - mem_limit / 8 * 3;
	while (freed < excess) {
		c = oldest_parked(p);
		if (c && now_ms() - c->parked_ms < PROXY_EVICT_AGE_MS && (n = evict_heaviest(p))) {
			freed += n;
			continue;
		}
		if (!c)
			break;
		c->weight = conn_weight(c);
		freed += c->weight;
		mem_pending += c->weight;
		evict(c, "memory near its cap");
	}
	if (freed < excess)
		evict_heaviest(p);
}

void
sweep_cb(evutil_socket_t fd, short what, void *arg)
{
	struct proxy *p = arg;

	(void)fd;
	(void)what;
	mem_relieve(p);
	cap_check_end(p);
}

/*
 * Bytes of unfinished heads, all connections together, stay under
 * mem_limit / PROXY_HEAD_SHARE: past it the longest-parked connection goes
 * (a head is pulled up whole to be parsed, so heads are most of what a
 * flood of them costs).  LEN is C's unfinished head now (0: done).
 */
void
head_account(struct conn *c, size_t len)
{
	struct proxy *p = c->p;
	struct conn *v;

	p->head_bytes = p->head_bytes - c->head_seen + len;
	c->head_seen = len;
	while (p->head_bytes > mem_limit / PROXY_HEAD_SHARE && (v = oldest_parked(p)) && v != c)
		evict(v, "at its cap on unfinished request heads");
}

/* The first few deadlines are logged one by one, the rest counted (a flood would fill the log). */
static void
timed_out(struct conn *c, const char *what)
{
	struct proxy *p = c->p;

	p->stats.timed_out++;
	if (p->stats.timed_out <= 10)
		plog(p, "c%lu closed: %s%s", c->id, what,
		     p->stats.timed_out == 10 ? " (further closings by a deadline are counted, "
						"not logged)"
					      : "");
	conn_kill(c);
}

static void
conn_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;
	struct timeval window = {PROXY_BODY_WINDOW, 0};

	(void)fd;
	(void)what;
	if (c->dead || c->closing)
		return;
	switch (c->rq) {
	case RQ_HEAD:
		if (c->keepalive && !evbuffer_get_length(bufferevent_get_input(c->cli)))
			conn_kill(c); /* idle between requests: nothing is lost */
		else
			timed_out(c, "the request head was not complete in time");
		return;
	case RQ_HANDSHAKE:
		timed_out(c, "the TLS handshake was not complete in time");
		return;
	case RQ_SNIFF:
		timed_out(c, "the transparent connection sent nothing in time");
		return;
	case RQ_BODY:
		/* Only the agent's pace counts: not while the upstream holds us back. */
		if (c->body_moved < PROXY_BODY_MIN_BYTES && c->up && c->up_connected &&
		    evbuffer_get_length(bufferevent_get_output(c->up)) < mem_hwm()) {
			timed_out(c, "the request body moved too slowly");
			return;
		}
		c->body_moved = 0;
		event_add(c->timer, &window);
		return;
	default:
		return;
	}
}

/* No room: a short answer straight on the socket, then close.  Nothing is allocated. */
static void
refuse_connection(struct proxy *p, evutil_socket_t fd, const char *why)
{
	static const char busy[] =
	    "HTTP/1.1 503 Service Unavailable\r\n"
	    "Content-Type: text/plain; charset=utf-8\r\n"
	    "X-Omnibox-Error: proxy-busy\r\n"
	    "Content-Length: 63\r\n"
	    "Connection: close\r\n\r\n"
	    "omnibox: the egress proxy is at its connection cap; try again\n";

	cap_reached(p, why);
	p->stats.refused++;
	(void)!send(fd, busy, sizeof(busy) - 1, MSG_DONTWAIT | MSG_NOSIGNAL);
	evutil_closesocket(fd);
}

/*
 * A client's connection FD, accepted here or handed over by the relay; the
 * N bytes of PRE are read before anything it sends (a transparent
 * connection's CONNECT, relay.h).
 */
static void
conn_open(struct proxy *p, evutil_socket_t fd, const char *pre, size_t n)
{
	struct conn *c;
	int sndbuf = PROXY_AGENT_SNDBUF;
	struct sockaddr_storage ss;
	socklen_t sslen = sizeof(ss);

	/*
	 * At the cap, the connection that has waited longest for the agent
	 * makes room: a flood of parked connections then holds at most the cap,
	 * and a request that arrives whole is still served.
	 */
	mem_relieve(p);
	if (p->stats.open >= p->max_conns || MEM_RELIEVE) {
		struct conn *v = oldest_parked(p);

		/*
		 * A connection parked for less than PROXY_EVICT_AGE_MS is in the
		 * middle of its exchange (a handshake, the head on its way): the
		 * newcomer is refused instead, so a churn of new connections
		 * cannot push out the requests being served.
		 */
		if (!v || (!MEM_RELIEVE && now_ms() - v->parked_ms < PROXY_EVICT_AGE_MS)) {
			refuse_connection(
			    p, fd, MEM_RELIEVE ? "memory near its cap" : "at its connection cap");
			return;
		}
		evict(v, p->stats.open >= p->max_conns ? "at its connection cap"
						       : "memory near its cap");
	}
	c = mem_zalloc(sizeof(*c));
	if (!c) {
		evutil_closesocket(fd);
		return;
	}
	/* Only a limit: an idle connection holds nothing in it. */
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
	if (getsockname(fd, (struct sockaddr *)&ss, &sslen) == 0 &&
	    (ss.ss_family == AF_INET || ss.ss_family == AF_INET6)) {
		int one = 1;

		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	}
	c->p = p;
	c->fd = fd;
	c->id = ++p->next_id;
	c->later = event_new(p->base, -1, 0, later_cb, c);
	c->timer = evtimer_new(p->base, conn_timer_cb, c);
	c->cli = c->cli_sock = bufferevent_socket_new(p->base, fd, 0);
	c->cli_rd = event_new(p->base, fd, EV_READ | EV_PERSIST, cli_rd_cb, c);
	if (!c->later || !c->timer || !c->cli || !c->cli_rd) {
		if (c->cli_rd)
			event_free(c->cli_rd);
		if (c->cli)
			bufferevent_free(c->cli);
		if (c->timer)
			event_free(c->timer);
		if (c->later)
			event_free(c->later);
		mem_release(c);
		evutil_closesocket(fd);
		return;
	}
	c->next = p->conns;
	if (p->conns)
		p->conns->prev = c;
	p->conns = c;
	p->stats.connections++;
	p->stats.open++;
	if (p->stats.open > p->stats.peak_open)
		p->stats.peak_open = p->stats.open;
	tune_sock(c->cli);
	bufferevent_set_timeouts(c->cli, NULL, &(struct timeval){PROXY_SEND_STALL, 0});
	bufferevent_setcb(c->cli, cli_read_cb, cli_write_cb, cli_event_cb, c);
	c->rq = RQ_HEAD;
	c->rs = RS_IDLE;
	conn_park(c, PROXY_HEAD_TIMEOUT);
	conn_update_io(c);
	if (n) {
		/* As if the client had sent them first (the end of a socket
		 * bufferevent's input is frozen but while it reads: read_into()). */
		struct evbuffer *in = bufferevent_get_input(c->cli_sock);
		int r;

		evbuffer_unfreeze(in, 0);
		r = evbuffer_add(in, pre, n);
		evbuffer_freeze(in, 0);
		if (r < 0) {
			conn_kill(c);
			return;
		}
		bufferevent_trigger(c->cli_sock, EV_READ, 0);
	}
}

void
accept_cb(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int len, void *arg)
{
	(void)l;
	(void)sa;
	(void)len;
	conn_open(arg, fd, NULL, 0);
}

/* The relay handed connections over (handoff.h): each is a client as if accepted here. */
void
handoff_cb(evutil_socket_t fd, short what, void *arg)
{
	struct proxy *p = arg;
	char pre[HANDOFF_PREAMBLE_MAX];

	(void)what;
	for (int k = 0; k < 64; k++) {
		size_t n = 0;
		int c = -1, r = handoff_recv(fd, &c, pre, &n);

		if (r == 2)
			continue;
		if (r <= 0)
			return;
		if (evutil_make_socket_nonblocking(c) < 0) {
			evutil_closesocket(c);
			continue;
		}
		conn_open(p, c, pre, n);
	}
}
