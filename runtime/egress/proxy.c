/*
 * proxy.c - the egress proxy's event machine.
 *
 * One struct conn per connection from the agent (through the relay).  Its
 * request side reads heads and bodies from the agent; its response side
 * reads heads and bodies from the upstream server.  Requests on one
 * connection are handled one at a time: the next head is read only once
 * the previous response has been passed on, so each request is checked
 * when it arrives and answers never overtake each other.
 *
 * Nothing is buffered whole.  A body moves from one bufferevent to the
 * other as it arrives; when a destination holds PROXY_HWM bytes its
 * source stops being read, and is read again once the destination holds
 * less (looked at whenever either side makes progress; a destination's
 * write callback fires when it drains to PROXY_LWM).
 *
 * Sockets: every socket has a plain socket bufferevent.  libevent writes
 * it; the proxy reads it itself (read_into(): libevent 2.1 reads 4 KiB at
 * a time, read_into() 64 KiB, up to 1 MiB while a socket keeps more
 * waiting).  TLS legs are bufferevent_openssl filters stacked on those, so
 * OpenSSL never makes a system call and records leave in large writes.  A
 * plain response body between two plain sockets moves with splice(2).
 *
 * Connections end through conn_kill(), which closes the sockets at once
 * and frees the struct from a deferred event, so code that called
 * something which may have ended the connection only checks c->dead.
 */
#include "runtime/egress/proxy.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/dns.h>
#include <event2/listener.h>
#include <event2/util.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include "compiler/base/textesc.h"
#include "runtime/egress/credentials.h"
#include "runtime/egress/destination.h"
#include "runtime/egress/http.h"
#include "runtime/egress/refresh.h"
#include "runtime/egress/scrub.h"
#include "runtime/egress/sigv4.h"
#include "runtime/egress/tls.h"
#include "runtime/egress/truststore.h"
#include "runtime/egress/websocket.h"

#define PROXY_HWM (512 * 1024)
#define PROXY_LWM (128 * 1024)
#define PROXY_MAX_IO (256 * 1024)
/* Just under 64 KiB: evbuffer rounds chains up to a power of two, with its header. */
#define PROXY_READ (64 * 1024 - 256)
/* A socket that filled a whole read gets twice the room the next time, up to
 * this: a bulk transfer then costs fewer reads, wakeups and ACKs per MiB. */
#define PROXY_READ_MAX (1024 * 1024 - 256)
/* How long a paused response stream waits before the scrubber lets its last bytes go. */
#define SCRUB_FLUSH_US 20000
/* What a connection waiting for a head or a handshake reads at a time. */
#define PROXY_READ_PARKED (2048 - 128)
/* Unfinished heads may hold 1/PROXY_HEAD_SHARE of the memory limit. */
#define PROXY_HEAD_SHARE 32
/* At the connection cap, only a connection parked this long is closed for a newcomer. */
#define PROXY_EVICT_AGE_MS 1000
/* An agent that reads nothing of what is sent to it for this long is cut off. */
#define PROXY_SEND_STALL 300
/* The send buffer asked for on the agent's socket (Linux caps it at
 * net.core.wmem_max, then doubles it; the default is 208 KiB, doubled): each
 * write hands the relay more, so both sides wake up less often in a download. */
#define PROXY_AGENT_SNDBUF (512 * 1024)
#define PROXY_MAX_ADDRS 16
#define PROXY_TARGET_MAX 8192
/* Basic base64(user:secret) of the longest secret a socket may give. */
#define PROXY_AUTH_MAX (CRED_SOCKET_MAX / 3 * 4 + 1024)
/* Secrets a refreshed credential had before, still scrubbed from responses. */
#define REFRESH_RETIRED_KEEP 8
/* What replaces a swap-on-access secret (it has no placeholder); refused if sent back. */
#define SWAP_MARKER CRED_PREFIX "removed-by-the-egress-proxy"
#define CONNECT_TIMEOUT 30
/* An upstream that sends nothing for this long while a response is due. */
#define UPSTREAM_TIMEOUT 600
/* An upstream connection kept alive for the next request on its tunnel is
 * closed after this long unused: an idle tunnel then holds only the
 * agent's side (about 16 KiB, mostly OpenSSL's; an upstream TLS
 * connection, with the server's certificate and tickets, adds ~30 KiB). */
#define UPSTREAM_IDLE_TIMEOUT 15
#define CLOSE_TIMEOUT 30
/* After the last answer, what the agent still sends is dropped for this long, this much. */
#define LINGER 2
#define LINGER_MAX (1u << 20)
#define DEFAULT_SYSTEM_CAS "/etc/ssl/certs/ca-certificates.crt"

enum body_mode { BODY_NONE, BODY_LENGTH, BODY_CHUNKED, BODY_CLOSE };

struct body {
	enum body_mode mode;
	uint64_t left; /* BODY_LENGTH: bytes still to come */
	struct http_chunked ch;
	bool out_chunked; /* written as chunks (re-encoded: no extensions, no trailer) */
	bool done;
	/* A response from a credential's host: the secrets replaced on the
	 * way, through SCRUBBED (the proxy's), so the body is re-framed. */
	struct scrub_stream *sc;
	struct evbuffer *scrubbed;
};

enum req_state {
	RQ_HEAD,      /* reading a request head */
	RQ_RESOLVE,   /* waiting for DNS */
	RQ_SEND200,   /* CONNECT accepted; the 200 is being written */
	RQ_HANDSHAKE, /* TLS with the agent under way */
	RQ_CONNECT,   /* waiting for the upstream connection */
	RQ_BODY,      /* passing the request body on */
	RQ_WAIT,      /* request sent; waiting for the response to end */
	RQ_TUNNEL,    /* after a WebSocket upgrade, or a tcp rule's tunnel: bytes both ways */
	RQ_SNIFF,     /* a transparent connection checked: is the agent's first byte TLS? */
};

enum resp_state { RS_IDLE, RS_HEAD, RS_BODY, RS_DONE, RS_TUNNEL };

/* What a resolved destination is for: an intercepted CONNECT, a plain
 * request, or the plain tunnel of a tcp rule. */
enum after_dns { AFTER_TUNNEL, AFTER_FORWARD, AFTER_RAW };

/* After a verified 101: both directions must stay RFC 6455 frames. */
struct ws_tunnel {
	struct ws_checker from_agent, from_server;
	struct scrub_stream sc; /* a credential's host: same-length, frames keep their sizes */
	bool scrub;
};

/* A response body between two plain sockets, moved by the kernel. */
struct splice {
	int pipe[2];
	size_t in_pipe; /* bytes in the pipe, not yet sent to the agent */
	size_t pipe_size;
	bool moved;		/* something went through already */
	struct event *in, *out; /* upstream readable, agent writable */
};

union addr {
	struct sockaddr sa;
	struct sockaddr_in sin;
	struct sockaddr_in6 sin6;
};

/* A credential whose secret is read again (refresh.h): the rows of its entry follow it. */
struct refresher {
	struct proxy *p;
	unsigned entry;
	size_t first; /* its first row */
	struct refresh *r;
	char *current;			     /* the secret its rows point to (owned), or NULL */
	char *retired[REFRESH_RETIRED_KEEP]; /* earlier secrets, oldest first: still scrubbed */
	size_t n_retired;
};

struct proxy {
	struct proxy_denial denials[PROXY_DENIALS_MAX]; /* distinct, for the summary */
	size_t n_denials;
	unsigned long denials_other; /* past PROXY_DENIALS_MAX distinct ones */
	/* Refused for the address alone: what egress_allow_private_destinations would lift. */
	unsigned long private_refused;
	char private_first[512]; /* the first of them, as logged */
	struct event_base *base;
	struct evconnlistener *listener;
	struct evdns_base *dns;
	struct egress_matcher *matcher;
	struct arena *arena; /* copies of the configuration */
	struct egress_rule *rules;
	size_t n_rules;
	struct proxy_cred *creds;
	size_t n_creds;
	bool *cred_down; /* per row: its last refresh failed, requests needing it are refused */
	struct refresher *refreshers;
	size_t n_refreshers;
	bool allow_private;
	bool no_splice;	     /* splice(2) failed once: copy from then on */
	char *socket_path;   /* NULL: listening on TCP */
	unsigned port;	     /* the TCP port listened on */
	char listening[300]; /* where, for the log */
	SSL_CTX *server_ctx, *client_ctx;
	struct tls_ca *ca;
	/* Where a head or a run of chunks is put together before it goes out in
	 * one piece: an OpenSSL filter makes a TLS record of every addition. */
	struct evbuffer *stage;
	struct scrub_set scrub;	   /* every secret, and what replaces it in responses */
	struct evbuffer *scrubbed; /* a body's bytes after the scrubber */
	void (*log)(void *arg, const char *line);
	void *log_arg;
	struct conn *conns;
	unsigned long next_id;
	struct conn *park_head, *park_tail; /* parked connections, longest-parked first */
	size_t max_conns;
	bool at_cap; /* a flood episode was logged; its end is logged too */
	unsigned long cap_refused, cap_evicted; /* at the start of the episode */
	unsigned long cap_seen;			/* closings and refusals at the last sweep */
	size_t head_bytes;			/* of heads not yet complete, all connections */
	struct event *sweep;			/* the memory check, once a second */
	struct proxy_stats stats;
};

struct conn {
	struct proxy *p;
	struct conn *prev, *next;
	unsigned long id;
	evutil_socket_t fd;
	/* Each side is a plain socket bufferevent (libevent writes it, read_into()
	 * reads it) with, for TLS, an OpenSSL filter on top; cli and up are what
	 * the proxy reads and writes: the filter, or the socket's. */
	struct bufferevent *cli, *up, *cli_sock, *up_sock;
	struct event *cli_rd, *up_rd;
	bool cli_rd_done, up_rd_done; /* EOF or an error read: never read again */
	size_t cli_room, up_room;     /* what read_into() reserves next (0: PROXY_READ) */
	struct event *later;	      /* deferred work: DNS answers, closing, freeing */
	struct event *timer;	      /* the deadline of the current state (absolute) */
	struct conn *park_prev, *park_next;
	bool parked;		      /* waiting for the agent: a head, a handshake, a request */
	unsigned long long parked_ms; /* since (CLOCK_MONOTONIC) */
	uint64_t body_moved;	      /* request body bytes moved in this window */
	bool keepalive;		      /* parked between requests (not yet in a head) */
	size_t weight;		      /* closed to make room: what it gives back */
	size_t head_seen;	      /* this connection's share of p->head_bytes */
	bool lingering;		      /* closing: the answer is out, the rest is dropped */
	time_t linger_until;
	size_t lingered;
	bool cli_tls; /* the agent side is an intercepted tunnel */
	/*
	 * Transparent egress: the relay in the sandbox took a connection to
	 * NAME:PORT from a client that ignores the proxy, and said so with a
	 * CONNECT marked "Omnibox-Transparent: 1".  No 200 goes back: the
	 * agent's stream follows at once, TLS (intercepted as after a CONNECT)
	 * or plain HTTP (PINNED: requests for NAME:PORT alone, like a forward
	 * proxy's).  Until then no HTTP answer could reach the client, so a
	 * refusal closes the connection (logged as any refusal).
	 */
	bool transparent, pinned;
	bool pinned_seen; /* PINNED: a request head was read on it */
	/* A tcp rule's tunnel: bytes pass both ways unread, no TLS of the
	 * proxy's, no HTTP, no credential; RAW_SHUT: the agent is done
	 * sending, so the server gets a FIN once its output has drained. */
	bool raw, raw_shut;
	bool cli_eof, closing, shut_sent, dead;
	time_t closing_deadline;

	/* the destination: the CONNECT host, or the current plain request's */
	char *host;
	uint16_t port;
	union addr *addrs; /* every one checked */
	size_t n_addrs, next_addr;
	struct evdns_getaddrinfo_request *dns;
	bool dns_done;
	int dns_err;
	struct evutil_addrinfo *dns_res;
	enum after_dns after;
	bool up_connected, up_reusable, up_used, retried;

	/* the current request */
	enum req_state rq;
	struct http_parser *req;
	struct evbuffer *up_head; /* kept until the response starts, for one retry */
	struct body req_body;
	bool req_close, req_head, req_ws, req_http10;
	bool scrub;		     /* a credential's host: responses lose every secret */
	char ws_key[WS_KEY_LEN + 1]; /* the upgrade's Sec-WebSocket-Key */
	struct ws_tunnel *ws;
	struct event *scrub_timer; /* releases what the scrubber holds when a stream pauses */
	char *log_url;

	/* the current response */
	struct splice *sp; /* a plain body moving with splice(2), or NULL */
	enum resp_state rs;
	struct http_parser *resp;
	struct body resp_body;
	bool resp_started, close_after;
};

static void conn_read_head(struct conn *c);
static void ws_pass(struct conn *c, bool from_agent);
static void raw_pass(struct conn *c, bool from_agent);
static void raw_shut_up(struct conn *c);
static void raw_established(struct conn *c);
static void conn_update_io(struct conn *c);
static void up_open(struct conn *c);
static void read_response(struct conn *c);
static void pump_request(struct conn *c);
static void pump_response(struct conn *c);
static void dns_finish(struct conn *c);
static void conn_check_closed(struct conn *c);
static void splice_end(struct conn *c);
struct body;
static void body_end_data(struct body *b, struct evbuffer *out);
static void mem_relieve(struct proxy *p);
static void park_remove(struct conn *c);

/* ---- logging ----------------------------------------------------------------------- */

static void plog(struct proxy *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
plog(struct proxy *p, const char *fmt, ...)
{
	char line[2048];
	va_list ap;

	if (!p->log)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	p->log(p->log_arg, line);
}

/*
 * S/LEN as a field of a log line or a message (textesc.h, the one escaping
 * of the launch): the agent must not be able to forge log lines or reach the
 * terminal.  Cut with "..." when it does not fit in CAP (at least 8) bytes.
 */
static const char *
esc(char *buf, size_t cap, const char *s, size_t len)
{
	text_escape(buf, cap, s, len, TEXT_ESC_FIELD);
	return buf;
}

/* A rule as written: "GET,POST api.github.com/repos/(glob)", "tcp h:22". */
static void
rule_text(const struct egress_rule *r, char *buf, size_t cap)
{
	egress_rule_format(r, false, buf, cap);
}

static const char *
rule_desc(struct proxy *p, ssize_t i, char *buf, size_t cap)
{
	char text[1024];

	rule_text(&p->rules[i], text, sizeof(text));
	snprintf(buf, cap, "rule #%zd (line %u: %s)", i + 1, p->rules[i].loc.line, text);
	return buf;
}

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

static size_t mem_used, mem_peak, mem_limit = PROXY_MEMORY_DEFAULT;
/* What connections closed to make room will give back once libevent frees
 * them (at the next turn of the loop): counted as gone already, or every
 * reader in this turn would close more. */
static size_t mem_pending;

static void *
mem_alloc(size_t n)
{
	struct mem_hdr *h;

	if (n > SIZE_MAX - sizeof(*h))
		return NULL;
	h = malloc(sizeof(*h) + n);
	if (!h)
		return NULL;
	h->size = n;
	mem_used += n;
	if (mem_used > mem_peak)
		mem_peak = mem_used;
	return h + 1;
}

static void *
mem_zalloc(size_t n)
{
	void *q = mem_alloc(n);

	if (q)
		memset(q, 0, n);
	return q;
}

static void
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
	mem_used = mem_used - g->size + n;
	g->size = n;
	if (mem_used > mem_peak)
		mem_peak = mem_used;
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

static void
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

static void
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
	c->up_rd_done = false;
	c->up_room = 0;
	c->up_connected = c->up_reusable = c->up_used = false;
}

/* Close everything now; the struct goes at the next loop turn. */
static void
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
		SSL *ssl = bufferevent_openssl_get_ssl(c->cli);

		c->shut_sent = true;
		if (ssl && SSL_is_init_finished(ssl))
			SSL_shutdown(ssl);
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
static void
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

/* ---- answers from the proxy itself ------------------------------------------------- */

static const char *
status_text(unsigned status)
{
	switch (status) {
	case 200:
		return "OK";
	case 400:
		return "Bad Request";
	case 403:
		return "Forbidden";
	case 431:
		return "Request Header Fields Too Large";
	case 501:
		return "Not Implemented";
	case 502:
		return "Bad Gateway";
	case 504:
		return "Gateway Timeout";
	case 505:
		return "HTTP Version Not Supported";
	default:
		return "Error";
	}
}

static bool
request_has_body(const struct conn *c)
{
	const struct http_head *h = c->req ? &c->req->head : NULL;

	return h && (h->chunked || (h->has_length && h->content_length > 0));
}

static void request_done(struct conn *c);

/*
 * Answer the current request with STATUS and a plain-text BODY.  The
 * connection stays open only when asked and when nothing of the request
 * is left unread (a body the proxy did not read would be taken for the
 * next request).
 */
static void
conn_reply(struct conn *c, unsigned status, const char *kind, const char *body, bool keep)
{
	struct evbuffer *out = c->p->stage;
	size_t len = strlen(body);

	if (status >= 400)
		c->p->stats.denied++;
	if (c->transparent && !c->cli_tls && !c->pinned) {
		conn_kill(c); /* nothing the client would read as an answer */
		return;
	}
	keep = keep && c->req && c->rq == RQ_HEAD && !request_has_body(c) && !c->req_close &&
	       !c->closing;
	/* The refused request's head is consumed; its body, if any, is not (so: close). */
	if (c->req && c->rq == RQ_HEAD && c->req->head.length)
		evbuffer_drain(bufferevent_get_input(c->cli), c->req->head.length);
	evbuffer_add_printf(out,
			    "HTTP/1.1 %u %s\r\n"
			    "Content-Type: text/plain; charset=utf-8\r\n"
			    "%s%s%s"
			    "Content-Length: %zu\r\n"
			    "%s"
			    "\r\n",
			    status, status_text(status), kind ? "X-Omnibox-Error: " : "",
			    kind ? kind : "", kind ? "\r\n" : "", len,
			    keep ? "" : "Connection: close\r\n");
	if (!c->req_head)
		evbuffer_add(out, body, len);
	evbuffer_add_buffer(bufferevent_get_output(c->cli), out);
	if (!keep) {
		conn_finish(c);
		return;
	}
	c->rs = RS_DONE;
	c->rq = RQ_WAIT;
	request_done(c);
}

/* Count a refusal for the summary omnibox-run prints: the request and a rule that would allow it. */
static void
note_denial(struct proxy *p, const char *request, const char *rule)
{
	for (size_t i = 0; i < p->n_denials; i++)
		if (!strcmp(p->denials[i].rule, rule)) {
			p->denials[i].count++;
			return;
		}
	if (p->n_denials == PROXY_DENIALS_MAX) {
		p->denials_other++;
		return;
	}
	/* Long ones cut: the summary is for reading. */
	snprintf(p->denials[p->n_denials].request, sizeof(p->denials[0].request), "%.*s",
		 (int)sizeof(p->denials[0].request) - 1, request);
	snprintf(p->denials[p->n_denials].rule, sizeof(p->denials[0].rule), "%.*s",
		 (int)sizeof(p->denials[0].rule) - 1, rule);
	p->denials[p->n_denials++].count = 1;
}

size_t
proxy_denials(const struct proxy *p, const struct proxy_denial **out, unsigned long *others)
{
	*out = p->denials;
	*others = p->denials_other;
	return p->n_denials;
}

unsigned long
proxy_private_refusals(const struct proxy *p, const char **first)
{
	*first = p->private_refused ? p->private_first : NULL;
	return p->private_refused;
}

/* 403 for a request no rule allows, naming a rule that would. */
static void
deny_request(struct conn *c, const char *method, size_t mlen, const char *host, const char *norm)
{
	char m[64], body[PROXY_TARGET_MAX + 1024], path[PROXY_TARGET_MAX];
	const char *q = strchr(norm, '?');
	size_t plen = q ? (size_t)(q - norm) : strlen(norm);

	esc(m, sizeof(m), method, mlen);
	for (char *s = m; *s; s++)
		if (*s >= 'a' && *s <= 'z')
			*s = (char)(*s - 32);
	esc(path, sizeof(path), norm, plen);
	plog(c->p, "c%lu deny %s: no rule matches", c->id, c->log_url);
	/* The suggestion names the port only where a rule must; the query is
	 * never part of a rule. */
	{
		char rule[PROXY_TARGET_MAX + 400];

		if (c->port != (c->cli_tls ? EGRESS_PORT_TLS : EGRESS_PORT_PLAIN))
			snprintf(rule, sizeof(rule), "%s %s:%u%s", m, host, c->port, path);
		else
			snprintf(rule, sizeof(rule), "%s %s%s", m, host, path);
		note_denial(c->p, c->log_url ? c->log_url : rule, rule);
		snprintf(body, sizeof(body),
			 "omnibox: %s is not allowed by the egress policy (no rule matches).\n"
			 "A rule that would allow it:\n"
			 "  %s\n",
			 c->log_url, rule);
	}
	conn_reply(c, 403, "blocked-by-policy", body, true);
}

/* ---- destinations ------------------------------------------------------------------- */

static void dest_ready(struct conn *c);
static void sniff(struct conn *c);

static void
dns_cb(int err, struct evutil_addrinfo *res, void *arg)
{
	struct conn *c = arg;

	/* After evdns_getaddrinfo_cancel() the connection may be gone. */
	if (err == EVUTIL_EAI_CANCEL) {
		if (res)
			evutil_freeaddrinfo(res);
		return;
	}
	/* This may run inside evdns_getaddrinfo() itself (hosts file, numeric
	 * host): finish from the loop, never from under the caller. */
	c->dns = NULL;
	c->dns_err = err;
	c->dns_res = res;
	c->dns_done = true;
	event_active(c->later, EV_TIMEOUT, 0);
}

static void
dest_refuse(struct conn *c, const char *what, const char *why)
{
	char body[1024], h[300];

	esc(h, sizeof(h), c->host, strlen(c->host));
	plog(c->p, "c%lu blocked-destination %s: %s", c->id, what, why);
	snprintf(body, sizeof(body),
		 "omnibox: %s is refused: %s.\n"
		 "Private, loopback, link-local, metadata and other special-purpose addresses "
		 "are refused\nunless the policy sets egress_allow_private_destinations: true.\n",
		 what, why);
	conn_reply(c, 403, "blocked-destination", body, c->after == AFTER_FORWARD);
}

/* Check every address; keep them all (any may be connected to) or refuse. */
static bool
dest_check(struct conn *c, const char *what)
{
	for (size_t i = 0; i < c->n_addrs; i++) {
		const struct sockaddr *sa = (const struct sockaddr *)&c->addrs[i];
		const char *why = dest_blocked_reason(sa);

		if (why && !c->p->allow_private) {
			char addr[INET6_ADDRSTRLEN], text[512], h[300];

			dest_format(sa, addr, sizeof(addr));
			snprintf(text, sizeof(text), "%s resolves to %s, in %s",
				 esc(h, sizeof(h), c->host, strlen(c->host)), addr, why);
			if (!c->p->private_refused++)
				snprintf(c->p->private_first, sizeof(c->p->private_first),
					 "%.200s: %.300s", what, text);
			dest_refuse(c, what, text);
			return false;
		}
	}
	return true;
}

static const char *
dest_what(struct conn *c, char *buf, size_t cap)
{
	if (c->after == AFTER_TUNNEL || c->after == AFTER_RAW)
		snprintf(buf, cap, "CONNECT %s:%u", c->host, c->port);
	else
		snprintf(buf, cap, "%s", c->log_url);
	return buf;
}

static void
dns_finish(struct conn *c)
{
	struct evutil_addrinfo *res = c->dns_res;
	char what[PROXY_TARGET_MAX + 64], body[1024];

	c->dns_res = NULL;
	dest_what(c, what, sizeof(what));
	if (c->dns_err || !res) {
		/* Fail closed: no answer is never "try the name some other way". */
		plog(c->p, "c%lu dns-failure %s: %s", c->id, what, evutil_gai_strerror(c->dns_err));
		snprintf(body, sizeof(body), "omnibox: cannot resolve %s: %s\n", c->host,
			 evutil_gai_strerror(c->dns_err));
		if (res)
			evutil_freeaddrinfo(res);
		/* Refused like a blocked destination: no other way to the name. */
		conn_reply(c, 403, "blocked-destination", body, c->after == AFTER_FORWARD);
		return;
	}
	free(c->addrs);
	c->n_addrs = 0;
	for (struct evutil_addrinfo *ai = res; ai && c->n_addrs < PROXY_MAX_ADDRS; ai = ai->ai_next)
		c->n_addrs++;
	c->addrs = calloc(c->n_addrs ? c->n_addrs : 1, sizeof(*c->addrs));
	c->n_addrs = 0;
	for (struct evutil_addrinfo *ai = res; ai && c->addrs && c->n_addrs < PROXY_MAX_ADDRS;
	     ai = ai->ai_next) {
		if ((ai->ai_family != AF_INET && ai->ai_family != AF_INET6) ||
		    ai->ai_addrlen > sizeof(*c->addrs))
			continue;
		memcpy(&c->addrs[c->n_addrs], ai->ai_addr, ai->ai_addrlen);
		if (ai->ai_family == AF_INET)
			((struct sockaddr_in *)&c->addrs[c->n_addrs])->sin_port = htons(c->port);
		else
			((struct sockaddr_in6 *)&c->addrs[c->n_addrs])->sin6_port = htons(c->port);
		c->n_addrs++;
	}
	evutil_freeaddrinfo(res);
	if (c->n_addrs == 0) {
		plog(c->p, "c%lu dns-failure %s: no address", c->id, what);
		snprintf(body, sizeof(body), "omnibox: %s has no address\n", c->host);
		conn_reply(c, 403, "blocked-destination", body, c->after == AFTER_FORWARD);
		return;
	}
	if (dest_check(c, what))
		dest_ready(c);
}

/* Resolve c->host once; dest_ready() runs when every address has passed. */
static void
dest_resolve(struct conn *c, enum after_dns after)
{
	struct evutil_addrinfo hints;
	struct in_addr v4;
	const char *why;
	char what[PROXY_TARGET_MAX + 64];

	c->after = after;
	c->rq = RQ_RESOLVE;
	c->next_addr = 0;
	conn_update_io(c);
	if (dest_classify_host(c->host, strlen(c->host), &v4, &why) == DEST_HOST_IPV4) {
		struct sockaddr_in *sin;

		free(c->addrs);
		c->addrs = calloc(1, sizeof(*c->addrs));
		if (!c->addrs) {
			conn_kill(c);
			return;
		}
		sin = (struct sockaddr_in *)c->addrs;
		sin->sin_family = AF_INET;
		sin->sin_addr = v4;
		sin->sin_port = htons(c->port);
		c->n_addrs = 1;
		if (dest_check(c, dest_what(c, what, sizeof(what))))
			dest_ready(c);
		return;
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_protocol = IPPROTO_TCP;
	c->p->stats.dns_lookups++;
	c->dns = evdns_getaddrinfo(c->p->dns, c->host, NULL, &hints, dns_cb, c);
	if (c->dns_done)
		c->dns = NULL; /* answered already; later_cb finishes */
}

/* ---- the agent side ------------------------------------------------------------------ */

static void cli_read_cb(struct bufferevent *bev, void *arg);
static void cli_write_cb(struct bufferevent *bev, void *arg);
static void cli_event_cb(struct bufferevent *bev, short what, void *arg);

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
static void
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

static void
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
		if (on)
			bufferevent_enable(bev, EV_READ);
		else
			bufferevent_disable(bev, EV_READ);
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
static void
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

static void
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

static void
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
static void
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
static void
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
static void
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

static void
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
static void
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

static void
accept_cb(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int len, void *arg)
{
	struct proxy *p = arg;
	struct conn *c;
	int sndbuf = PROXY_AGENT_SNDBUF;

	(void)l;
	(void)sa;
	(void)len;
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
	if (p->port) {
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
}

/* The CONNECT was answered 200: the agent's next bytes are a TLS ClientHello. */
static void
start_tls(struct conn *c)
{
	struct proxy *p = c->p;
	SSL *ssl = SSL_new(p->server_ctx);
	struct bufferevent *tls;

	if (!ssl || tls_server_prepare(ssl, p->ca, c->host, time(NULL)) < 0) {
		plog(p, "c%lu error: cannot prepare TLS for %s", c->id, c->host);
		SSL_free(ssl);
		conn_kill(c);
		return;
	}
	/* Over the socket bufferevent: anything the agent sent early is in its
	 * input and becomes the start of the handshake. */
	tls = bufferevent_openssl_filter_new(p->base, c->cli_sock, ssl, BUFFEREVENT_SSL_ACCEPTING,
					     BEV_OPT_CLOSE_ON_FREE);
	if (!tls) {
		conn_kill(c);
		return;
	}
	c->cli = tls;
	c->cli_tls = true;
	c->rq = RQ_HANDSHAKE;
	conn_park(c, PROXY_HANDSHAKE_TIMEOUT);
	bufferevent_openssl_set_allow_dirty_shutdown(tls, 1);
	tune_filter(tls, c->cli_sock);
	bufferevent_setcb(tls, cli_read_cb, cli_write_cb, cli_event_cb, c);
	bufferevent_enable(tls, EV_READ | EV_WRITE);
	conn_update_io(c);
	if (evbuffer_get_length(bufferevent_get_input(c->cli_sock)))
		bufferevent_trigger(c->cli_sock, EV_READ, 0);
}

/* Did the handshake fail because the agent's stream is not TLS at all? */
static bool
not_tls(unsigned long e)
{
	int r = ERR_GET_REASON(e);

	return ERR_GET_LIB(e) == ERR_LIB_SSL &&
	       (r == SSL_R_WRONG_VERSION_NUMBER || r == SSL_R_HTTP_REQUEST ||
		r == SSL_R_HTTPS_PROXY_REQUEST || r == SSL_R_UNKNOWN_PROTOCOL);
}

/*
 * An HTTP rule took the CONNECT, so the proxy expected TLS, and the agent
 * sent something else (ssh, a database's protocol): only a tcp rule lets
 * that through, and only where no HTTP rule takes the host and port.
 */
static void
refuse_not_tls(struct conn *c, const char *reason)
{
	char what[400], rule[400];

	snprintf(what, sizeof(what), "CONNECT %s:%u%s, then a stream that is not TLS%s", c->host,
		 c->port, c->transparent ? " (transparent)" : "", c->pinned ? " nor HTTP" : "");
	snprintf(rule, sizeof(rule), "tcp %s:%u", c->host, c->port);
	plog(c->p, "c%lu deny %s (%s): the HTTP rules inspect this host and port; '%s' in their "
		   "place would let it through uninspected",
	     c->id, what, reason, rule);
	note_denial(c->p, what, rule);
}

static void
handshake_failed(struct conn *c)
{
	SSL *ssl = bufferevent_openssl_get_ssl(c->cli);
	const char *sni = ssl ? SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name) : NULL;
	unsigned long e = bufferevent_get_openssl_error(c->cli);
	char reason[256] = "the agent closed the connection", s[300];

	if (e)
		ERR_error_string_n(e, reason, sizeof(reason));
	if (sni && strcasecmp(sni, c->host) != 0)
		plog(c->p, "c%lu deny TLS handshake for CONNECT %s:%u: SNI '%s' differs", c->id,
		     c->host, c->port, esc(s, sizeof(s), sni, strlen(sni)));
	else if (not_tls(e))
		refuse_not_tls(c, reason);
	else
		plog(c->p, "c%lu TLS handshake with the agent failed for %s: %s", c->id, c->host,
		     reason);
	while (bufferevent_get_openssl_error(c->cli))
		;
	conn_finish(c); /* the alert is still to be sent */
}

static void
cli_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct conn *c = arg;

	(void)bev;
	if (what & BEV_EVENT_CONNECTED) {
		/* The TLS handshake with the agent is done: like a kept-alive
		 * connection, it waits for a request (parked). */
		c->rq = RQ_HEAD;
		c->keepalive = true;
		conn_park(c, PROXY_KEEPALIVE_TIMEOUT);
		if (!c->cli_rd_done)
			event_add(c->cli_rd, NULL);
		conn_update_io(c);
		if (evbuffer_get_length(bufferevent_get_input(c->cli)))
			conn_read_head(c);
		else
			conn_release_buffers(c);
		return;
	}
	if (c->rq == RQ_HANDSHAKE) {
		handshake_failed(c);
		return;
	}
	if (what & (BEV_EVENT_ERROR | BEV_EVENT_TIMEOUT) || c->closing) {
		conn_kill(c);
		return;
	}
	/* EOF: the agent is done sending.  Finish what is in flight. */
	c->cli_eof = true;
	if (c->raw && c->rq == RQ_TUNNEL) {
		/* Half a close: the server may still answer, until it closes. */
		c->raw_shut = true;
		raw_shut_up(c);
		return;
	}
	switch (c->rq) {
	case RQ_SNIFF:
		conn_kill(c);
		break;
	case RQ_HEAD:
		if (!c->req || c->rs == RS_IDLE)
			conn_finish(c); /* after what is queued for it */
		break;
	case RQ_BODY:
	case RQ_TUNNEL:
		/* A body cut short, or a WebSocket ending: nothing more to pass on. */
		if (c->rq == RQ_TUNNEL)
			conn_finish(c);
		else
			conn_kill(c);
		break;
	default:
		break;
	}
}

static void
cli_write_cb(struct bufferevent *bev, void *arg)
{
	struct conn *c = arg;

	if (c->closing)
		return; /* conn_check_closed() watches */
	if (c->rq == RQ_SEND200) {
		if (evbuffer_get_length(bufferevent_get_output(bev)) == 0)
			start_tls(c);
		return;
	}
	conn_update_io(c);
}

static int
emit_evbuffer(void *arg, const char *s, size_t n)
{
	return evbuffer_add(arg, s, n);
}

/*
 * Pass what one side of a WebSocket sent to the other, once the checker
 * has seen it is frames: a 101 must not turn the connection into a raw
 * tunnel (the next bytes an HTTP request, say).  From a credential's host
 * the secrets become '*'s (the frame lengths stay true).  Anything that is
 * not a frame closes both sides, and nothing of it is passed on.
 */
static void
ws_pass(struct conn *c, bool from_agent)
{
	struct evbuffer *in = bufferevent_get_input(from_agent ? c->cli : c->up);
	struct evbuffer *out = bufferevent_get_output(from_agent ? c->up : c->cli);
	struct ws_checker *w = from_agent ? &c->ws->from_agent : &c->ws->from_server;
	struct evbuffer_ptr at;
	struct evbuffer_iovec v[16];
	const char *why = "bad framing";
	size_t len = evbuffer_get_length(in);
	int n;

	evbuffer_ptr_set(in, &at, 0, EVBUFFER_PTR_SET);
	while (len) {
		size_t took = 0;

		n = evbuffer_peek(in, (ev_ssize_t)len, &at, v, 16);
		if (n > 16)
			n = 16;
		for (int i = 0; i < n; i++) {
			if (ws_checker_feed(w, v[i].iov_base, v[i].iov_len, &why) < 0) {
				plog(c->p,
				     "c%lu websocket %s: %s sent what is not RFC 6455 framing "
				     "(%s): closed",
				     c->id, c->log_url ? c->log_url : "",
				     from_agent ? "the agent" : "the server", why);
				conn_kill(c);
				return;
			}
			took += v[i].iov_len;
		}
		/* A secret split over the frames of a message would pass the scrubber
		 * (it looks within a frame): a credential's host sends whole ones. */
		if (!from_agent && c->ws->scrub && w->saw_fragments) {
			plog(c->p,
			     "c%lu websocket %s: a credential's host sent a fragmented "
			     "message, which cannot be checked for the secret: closed",
			     c->id, c->log_url ? c->log_url : "");
			conn_kill(c);
			return;
		}
		len -= took < len ? took : len;
		evbuffer_ptr_set(in, &at, took, EVBUFFER_PTR_ADD);
	}
	while (!from_agent && c->ws->scrub && evbuffer_get_length(in)) {
		size_t done = 0;

		n = evbuffer_peek(in, -1, NULL, v, 16);
		for (int i = 0; i < n && i < 16; i++) {
			scrub_stream_feed(&c->ws->sc, v[i].iov_base, v[i].iov_len, emit_evbuffer,
					  out);
			done += v[i].iov_len;
		}
		evbuffer_drain(in, done);
	}
	/* At a frame's end, what may begin a secret goes too: a message must not
	 * wait for the next one (a secret is looked for within a frame). */
	if (!from_agent && c->ws->scrub && !w->in_payload && w->hdr_len == 0)
		scrub_stream_finish(&c->ws->sc, emit_evbuffer, out);
	evbuffer_add_buffer(out, in); /* what is left: all of it unless scrubbed */
	conn_update_io(c);
}

/* A tcp rule's tunnel: what one side sent goes to the other, unread. */
static void
raw_pass(struct conn *c, bool from_agent)
{
	struct evbuffer *in = bufferevent_get_input(from_agent ? c->cli : c->up);

	if (!c->up)
		return;
	evbuffer_add_buffer(bufferevent_get_output(from_agent ? c->up : c->cli), in);
	conn_update_io(c);
	raw_shut_up(c);
}

/* The agent's EOF reaches the server once all it sent before has gone. */
static void
raw_shut_up(struct conn *c)
{
	if (!c->raw || !c->raw_shut || c->dead || !c->up_sock || !c->up_connected ||
	    evbuffer_get_length(bufferevent_get_output(c->up_sock)))
		return;
	c->raw_shut = false;
	shutdown(bufferevent_getfd(c->up_sock), SHUT_WR);
}

/* The server accepted a tcp rule's connection: 200, then bytes both ways. */
static void
raw_established(struct conn *c)
{
	char what[PROXY_TARGET_MAX + 64], addr[INET6_ADDRSTRLEN];

	dest_format((struct sockaddr *)&c->addrs[c->next_addr - 1], addr, sizeof(addr));
	plog(c->p, "c%lu tunnel %s to %s (tcp rule: not inspected)", c->id,
	     dest_what(c, what, sizeof(what)), addr);
	c->p->stats.tcp_tunnels++;
	if (!c->transparent)
		evbuffer_add_printf(bufferevent_get_output(c->cli),
				    "HTTP/1.1 200 Connection established\r\n\r\n");
	c->resp_started = true;
	c->rq = RQ_TUNNEL;
	c->rs = RS_TUNNEL;
	conn_update_io(c);
	raw_pass(c, false); /* what the server sent at once (an SSH banner) */
	if (!c->dead)
		raw_pass(c, true);
}

static void
cli_read_cb(struct bufferevent *bev, void *arg)
{
	struct conn *c = arg;

	(void)bev;
	switch (c->rq) {
	case RQ_HEAD:
		conn_read_head(c);
		break;
	case RQ_SNIFF:
		sniff(c);
		break;
	case RQ_BODY:
		pump_request(c);
		break;
	case RQ_TUNNEL:
		if (c->raw)
			raw_pass(c, true);
		else
			ws_pass(c, true);
		break;
	default:
		break;
	}
}

/* ---- reading requests ------------------------------------------------------------- */

static void handle_request(struct conn *c, const char *buf);

/* Does BUF begin as a request line does: a method in capitals, then a space? */
static bool
starts_like_http(const char *buf, size_t len)
{
	size_t i = 0;

	while (i < len && i < 32 && buf[i] >= 'A' && buf[i] <= 'Z')
		i++;
	return i > 0 && i < len && buf[i] == ' ';
}

static void
conn_read_head(struct conn *c)
{
	while (!c->dead && !c->closing && c->rq == RQ_HEAD) {
		struct evbuffer *in = bufferevent_get_input(c->cli);
		size_t len = evbuffer_get_length(in), look;
		const char *buf;
		enum http_result r;

		if (len == 0) {
			if (c->cli_eof)
				conn_finish(c);
			return;
		}
		if (!c->req) {
			c->req = mem_alloc(sizeof(*c->req));
			if (!c->req) {
				conn_kill(c);
				return;
			}
			http_head_begin(c->req, false);
			/* Kept alive: the head that begins now is due in full soon. */
			if (c->keepalive)
				conn_park(c, PROXY_HEAD_TIMEOUT);
			c->keepalive = false;
		}
		look = len < HTTP_HEAD_MAX ? len : HTTP_HEAD_MAX;
		head_account(c, look);
		if (c->dead)
			return;
		buf = (const char *)evbuffer_pullup(in, (ev_ssize_t)look);
		r = http_parse_head(c->req, buf, look);
		if (r == HTTP_MORE) {
			if (c->cli_eof)
				conn_kill(c);
			return;
		}
		/* Bytes that never began a request (ssh, a database) call for a
		 * tcp rule; a malformed request does not. */
		if (r == HTTP_ERROR && c->pinned && !c->pinned_seen && !starts_like_http(buf, look))
			refuse_not_tls(c, c->req->error);
		if (r == HTTP_ERROR) {
			char body[256];
			const char *kind = c->req->status == 431   ? "headers-too-large"
					   : c->req->status == 505 ? "version-not-supported"
								   : "bad-request";

			plog(c->p, "c%lu %s: %s", c->id, kind, c->req->error);
			snprintf(body, sizeof(body), "omnibox: bad request: %s\n", c->req->error);
			c->req_close = true;
			conn_reply(c, c->req->status, kind, body, false);
			return;
		}
		handle_request(c, buf);
	}
}

static bool
field_named_in_connection(const struct http_head *h, const char *buf, const char *name, size_t len)
{
	char want[128];

	if (len >= sizeof(want))
		return false;
	memcpy(want, name, len);
	want[len] = '\0';
	for (size_t i = 0; i < h->n_fields; i++)
		if (http_name_is(http_span_ptr(buf, h->fields[i].name), h->fields[i].name.len,
				 "connection") &&
		    http_list_has(http_span_ptr(buf, h->fields[i].value), h->fields[i].value.len,
				  want))
			return true;
	return false;
}

/* Hop-by-hop fields (RFC 9110 7.6.1) and the ones the proxy writes itself. */
static bool
field_dropped(const struct http_head *h, const char *buf, size_t i, bool keep_upgrade)
{
	static const char *const names[] = {
	    "connection", "keep-alive",	  "proxy-connection",  "proxy-authorization",
	    "te",	  "trailer",	  "transfer-encoding", "content-length",
	    "host",	  "max-forwards", "authorization",     NULL,
	};
	const char *name = http_span_ptr(buf, h->fields[i].name);
	size_t len = h->fields[i].name.len;

	for (size_t k = 0; names[k]; k++)
		if (http_name_is(name, len, names[k]))
			return true;
	if (http_name_is(name, len, "upgrade"))
		return !keep_upgrade;
	return field_named_in_connection(h, buf, name, len);
}

static const struct proxy_cred *
cred_for_host(struct proxy *p, const char *host, unsigned port)
{
	for (size_t i = 0; i < p->n_creds; i++)
		if (!strcmp(p->creds[i].host, host) && p->creds[i].port == port)
			return &p->creds[i];
	return NULL;
}

static void
lower(char *s)
{
	for (; *s; s++)
		if (*s >= 'A' && *s <= 'Z')
			*s = (char)(*s + 32);
}

static void
refuse(struct conn *c, unsigned status, const char *kind, const char *what, bool keep)
{
	char body[PROXY_TARGET_MAX + 512];

	plog(c->p, "c%lu %s %s: %s", c->id, kind, c->log_url ? c->log_url : "request", what);
	snprintf(body, sizeof(body), "omnibox: %s%s%s.\n", c->log_url ? c->log_url : "",
		 c->log_url ? " is refused: " : "", what);
	conn_reply(c, status, kind, body, keep);
}

static void
bad_request(struct conn *c, const char *what)
{
	c->req_close = true;
	refuse(c, 400, "bad-request", what, false);
}

/* TRACE or OPTIONS with Max-Forwards: 0 ends here (RFC 9110 7.6.2). */
static void
answer_max_forwards(struct conn *c, const char *buf, bool trace)
{
	struct evbuffer *out = c->p->stage;
	size_t len = c->req->head.length;

	if (request_has_body(c))
		c->req_close = true;
	plog(c->p, "c%lu answered %s (Max-Forwards: 0)", c->id, c->log_url);
	if (trace) {
		/* The echo is of what the agent sent: it never holds a secret. */
		evbuffer_add_printf(out,
				    "HTTP/1.1 200 OK\r\nContent-Type: message/http\r\n"
				    "Content-Length: %zu\r\n%s\r\n",
				    len, c->req_close ? "Connection: close\r\n" : "");
		evbuffer_add(out, buf, len);
	} else {
		evbuffer_add_printf(out,
				    "HTTP/1.1 200 OK\r\nAllow: GET, HEAD, POST, PUT, DELETE, "
				    "PATCH, OPTIONS, TRACE\r\nContent-Length: 0\r\n%s\r\n",
				    c->req_close ? "Connection: close\r\n" : "");
	}
	evbuffer_add_buffer(bufferevent_get_output(c->cli), out);
	evbuffer_drain(bufferevent_get_input(c->cli), len);
	if (c->req_close) {
		conn_finish(c);
		return;
	}
	c->rs = RS_DONE;
	c->rq = RQ_WAIT;
	request_done(c);
}

static void
body_init(struct body *b, const struct http_head *h)
{
	memset(b, 0, sizeof(*b));
	if (h->chunked) {
		b->mode = BODY_CHUNKED;
		b->out_chunked = true;
		http_chunked_init(&b->ch);
	} else if (h->has_length && h->content_length > 0) {
		b->mode = BODY_LENGTH;
		b->left = h->content_length;
	} else {
		b->mode = BODY_NONE;
		b->done = true;
	}
}

/* Where a credential's secret goes, and what the agent sent there. */
struct cred_out {
	const char *name;  /* the header: "Authorization", or the credential's own */
	const char *value; /* what the upstream gets in it, or NULL: nothing added */
	size_t len;
	bool swapped; /* VALUE is a copy that holds the secret (wiped after use) */
	bool secret;  /* VALUE holds the secret (aws_sigv4: the request is signed again) */
	/* aws_sigv4: the binding, and the names the agent signed (in the head's buffer) */
	const struct proxy_cred *sigv4;
	const char *sigv4_signed;
	size_t sigv4_signed_len;
};

/* An https_bearer credential named its header: the placeholder is swapped there, only there. */
static bool
apply_header_credential(struct conn *c, const char *buf, const struct proxy_cred *bound, bool trace,
			struct cred_out *o)
{
	const struct http_head *h = &c->req->head;
	int at = -1;

	for (size_t i = 0; i < h->n_fields; i++) {
		const char *name = http_span_ptr(buf, h->fields[i].name);
		const char *value = http_span_ptr(buf, h->fields[i].value);
		size_t vlen = h->fields[i].value.len;

		if (http_name_is(name, h->fields[i].name.len, bound->header)) {
			if (at >= 0) {
				bad_request(c, "the credential's header is given twice");
				return false;
			}
			at = (int)i;
			if (!cred_has_placeholder(value, vlen))
				continue;
			if (trace || !bound->placeholder || vlen != strlen(bound->placeholder) ||
			    memcmp(value, bound->placeholder, vlen) != 0) {
				refuse(c, 403, "credential-misuse",
				       trace ? "TRACE and OPTIONS never carry credentials"
					     : "the header holds another value than this host's "
					       "credential placeholder",
				       true);
				return false;
			}
		} else if (!http_name_is(name, h->fields[i].name.len, "proxy-authorization") &&
			   cred_has_placeholder(value, vlen)) {
			refuse(c, 403, "credential-misuse",
			       "this host's credential placeholder travels only in its header",
			       true);
			return false;
		}
	}
	o->name = bound->header;
	if (trace)
		return true;
	/* The placeholder sent, or none sent where the proxy swaps on access. */
	if (at >= 0 ? cred_has_placeholder(http_span_ptr(buf, h->fields[at].value),
					   h->fields[at].value.len)
		    : !bound->placeholder) {
		o->value = bound->secret;
		o->len = strlen(bound->secret);
		o->secret = true;
	}
	return true;
}

static void
sigv4_refuse(struct conn *c, const char *what)
{
	refuse(c, 403, "sigv4-refused", what, true);
}

/* At most one field NAME: its value (*LEN), NULL when absent; -1 in *N when repeated. */
static const char *
one_field(const struct http_head *h, const char *buf, const char *name, size_t *len, int *n)
{
	const char *v = NULL;

	*n = 0;
	for (size_t i = 0; i < h->n_fields; i++)
		if (http_name_is(http_span_ptr(buf, h->fields[i].name), h->fields[i].name.len,
				 name)) {
			v = http_span_ptr(buf, h->fields[i].value);
			*len = h->fields[i].value.len;
			(*n)++;
		}
	return v;
}

static bool
is_sigv4_field(const char *name, size_t len)
{
	return http_name_is(name, len, "authorization") ||
	       http_name_is(name, len, "x-amz-security-token") ||
	       http_name_is(name, len, "proxy-authorization");
}

/*
 * An aws_sigv4 host: every request must be signed by the agent with the
 * placeholder keys, for this region and service, and is signed again with
 * the real ones once its head is written (build_upstream_head()).
 */
static bool
apply_sigv4(struct conn *c, const char *buf, const struct proxy_cred *bound, bool trace,
	    struct cred_out *o)
{
	const struct http_head *h = &c->req->head;
	const struct proxy_aws *aws = bound->aws;
	const char *target = http_span_ptr(buf, h->target);
	const char *q = memchr(target, '?', h->target.len), *auth, *date, *token, *payload, *why;
	size_t alen = 0, dlen = 0, tlen = 0, plen = 0;
	int na, nd, nt, np;
	struct sigv4_auth a;

	for (size_t i = 0; i < h->n_fields; i++) {
		const char *name = http_span_ptr(buf, h->fields[i].name);

		if (!is_sigv4_field(name, h->fields[i].name.len) &&
		    cred_has_placeholder(http_span_ptr(buf, h->fields[i].value),
					 h->fields[i].value.len)) {
			refuse(c, 403, "credential-misuse",
			       "an AWS placeholder travels only in Authorization and "
			       "X-Amz-Security-Token, to the hosts it is bound to",
			       true);
			return false;
		}
	}
	if (trace) {
		refuse(c, 403, "credential-misuse",
		       "TRACE and OPTIONS never carry credentials, and the proxy signs every "
		       "request to this host",
		       true);
		return false;
	}
	if (q && sigv4_query_is_presigned(q + 1, (size_t)(target + h->target.len - q - 1))) {
		sigv4_refuse(c,
			     "a presigned URL (X-Amz-Signature or X-Amz-Credential in the query) "
			     "is refused: the proxy signs requests to this host itself");
		return false;
	}
	auth = one_field(h, buf, "authorization", &alen, &na);
	date = one_field(h, buf, "x-amz-date", &dlen, &nd);
	token = one_field(h, buf, "x-amz-security-token", &tlen, &nt);
	payload = one_field(h, buf, "x-amz-content-sha256", &plen, &np);
	if (na > 1 || nd > 1 || nt > 1 || np > 1) {
		bad_request(c, "Authorization, X-Amz-Date, X-Amz-Security-Token or "
			       "X-Amz-Content-Sha256 is given twice");
		return false;
	}
	if (!auth) {
		sigv4_refuse(c, "requests to this host must be signed (AWS4-HMAC-SHA256) with the "
				"AWS_ACCESS_KEY_ID placeholder");
		return false;
	}
	if (sigv4_parse_auth(auth, alen, &a, &why) < 0 ||
	    sigv4_check(&a, aws->key_id_placeholder, aws->region, aws->service, date, dlen, &why) <
		0) {
		char what[256];

		snprintf(what, sizeof(what), "the AWS signature is refused: %s", why);
		sigv4_refuse(c, what);
		return false;
	}
	/* The token placeholder is the sandbox's one for every aws_sigv4 host;
	 * to a host whose keys have no token it is left out. */
	if (token && (!aws->token_placeholder || tlen != strlen(aws->token_placeholder) ||
		      memcmp(token, aws->token_placeholder, tlen))) {
		sigv4_refuse(c, "X-Amz-Security-Token holds another value than the "
				"AWS_SESSION_TOKEN placeholder");
		return false;
	}
	if (payload && (why = sigv4_payload_refusal(payload, plen))) {
		sigv4_refuse(c, why);
		return false;
	}
	if (!payload && request_has_body(c)) {
		sigv4_refuse(c, "a request with a body must carry x-amz-content-sha256 (the proxy "
				"signs it again without reading the body)");
		return false;
	}
	o->secret = true;
	o->sigv4 = bound;
	o->sigv4_signed = a.signed_headers;
	o->sigv4_signed_len = a.signed_headers_len;
	return true;
}

/* Authorization (or the credential's header): returns false when the request was refused. */
static bool
apply_authorization(struct conn *c, const char *buf, const char *method, size_t mlen,
		    struct cred_out *o)
{
	static char out[PROXY_AUTH_MAX];
	const struct http_head *h = &c->req->head;
	bool trace = http_name_is(method, mlen, "TRACE") || http_name_is(method, mlen, "OPTIONS");
	const struct proxy_cred *bound = c->cli_tls ? cred_for_host(c->p, c->host, c->port) : NULL;
	static const struct proxy_cred none = {.host = "", .secret = ""};
	int auth_field = -1;

	memset(o, 0, sizeof(*o));
	o->name = "Authorization";
	if (cred_has_placeholder(http_span_ptr(buf, h->target), h->target.len) ||
	    cred_has_placeholder(method, mlen)) {
		refuse(c, 403, "credential-misuse",
		       "the request line holds a credential placeholder", true);
		return false;
	}
	for (size_t i = 0; i < h->n_fields; i++)
		if (cred_has_placeholder(http_span_ptr(buf, h->fields[i].name),
					 h->fields[i].name.len)) {
			refuse(c, 403, "credential-misuse",
			       "a header name holds a credential placeholder", true);
			return false;
		}
	if (bound && bound->scheme == CRED_SCHEME_SIGV4)
		return apply_sigv4(c, buf, bound, trace, o);
	if (bound && bound->header)
		return apply_header_credential(c, buf, bound, trace, o);
	for (size_t i = 0; i < h->n_fields; i++) {
		const char *name = http_span_ptr(buf, h->fields[i].name);
		const char *value = http_span_ptr(buf, h->fields[i].value);

		if (http_name_is(name, h->fields[i].name.len, "authorization")) {
			if (auth_field >= 0) {
				bad_request(c, "several Authorization headers");
				return false;
			}
			auth_field = (int)i;
		} else if (!http_name_is(name, h->fields[i].name.len, "proxy-authorization") &&
			   cred_has_placeholder(value, h->fields[i].value.len)) {
			refuse(c, 403, "credential-misuse",
			       "a credential placeholder may only travel in Authorization (or the "
			       "header its credential names), to the host it is bound to",
			       true);
			return false;
		}
	}
	if (auth_field >= 0) {
		const char *value = http_span_ptr(buf, h->fields[auth_field].value);
		size_t vlen = h->fields[auth_field].value.len;
		const struct proxy_cred *use = bound && !trace ? bound : &none;
		enum cred_auth verdict;

		if (cred_rewrite_authorization(use, value, vlen, out, sizeof(out), &verdict) < 0) {
			bad_request(c, "Authorization header too long");
			return false;
		}
		if (verdict == CRED_AUTH_REFUSE) {
			const char *why =
			    !c->cli_tls ? "credentials are never sent over cleartext HTTP"
			    : trace	? "TRACE and OPTIONS never carry credentials"
			    : bound	? "the credential placeholder is not the one bound to "
					  "this host"
					: "no credential is bound to this host";

			refuse(c, 403, "credential-misuse", why, true);
			return false;
		}
		o->value = verdict == CRED_AUTH_SWAPPED ? out : value;
		o->len = verdict == CRED_AUTH_SWAPPED ? strlen(out) : vlen;
		o->swapped = o->secret = verdict == CRED_AUTH_SWAPPED;
	} else if (bound && !trace) {
		ssize_t n = cred_authorization_value(bound, out, sizeof(out));

		if (n < 0) {
			refuse(c, 502, "credential-error", "the credential is too long", false);
			return false;
		}
		o->value = out;
		o->len = (size_t)n;
		o->swapped = o->secret = true;
	}
	return true;
}

/*
 * Credentials: returns false when the request was refused.  A request that
 * needs a secret whose last refresh failed goes nowhere (503): never with
 * the stale one.
 */
static bool
apply_credentials(struct conn *c, const char *buf, const char *method, size_t mlen,
		  struct cred_out *o)
{
	const struct proxy_cred *bound;

	if (!apply_authorization(c, buf, method, mlen, o))
		return false;
	bound = c->cli_tls ? cred_for_host(c->p, c->host, c->port) : NULL;
	if (!o->secret || !bound || !c->p->cred_down[bound - c->p->creds])
		return true;
	if (o->swapped)
		explicit_bzero((char *)o->value, o->len);
	refuse(c, 503, "credential-unavailable",
	       "the credential could not be read again (see the proxy's log); nothing was sent",
	       true);
	return false;
}

/*
 * Fields a request to a credential's host goes without: what would let the
 * answer come back in a form the scrubber cannot search (compressed, in
 * another charset) or in pieces (a range holding part of the secret).
 */
static bool
scrub_drops_field(const char *name, size_t len)
{
	return http_name_is(name, len, "accept-encoding") || http_name_is(name, len, "range") ||
	       http_name_is(name, len, "if-range") || http_name_is(name, len, "accept-charset");
}

/* The head E holds so far, signed with the real AWS keys: its last field is Authorization. */
static int
sign_sigv4(struct evbuffer *e, const struct cred_out *cred, const char **why)
{
	static char out[SIGV4_AUTH_MAX];
	const struct proxy_aws *aws = cred->sigv4->aws;
	struct sigv4_key k = {aws->key_id, cred->sigv4->secret, aws->region, aws->service};
	const char *head;
	size_t len;
	ssize_t n;

	if (aws->token)
		evbuffer_add_printf(e, "X-Amz-Security-Token: %s\r\n", aws->token);
	/* The token is signed too: the head as it goes, up to here. */
	head = (const char *)evbuffer_pullup(e, -1);
	len = evbuffer_get_length(e);
	n = head ? sigv4_authorization(&k, head, len, cred->sigv4_signed, cred->sigv4_signed_len,
				       out, sizeof(out), why)
		 : -1;
	if (n < 0)
		return -1;
	evbuffer_add_printf(e, "Authorization: %s\r\n", out);
	explicit_bzero(out, (size_t)n);
	return 0;
}

/* The request head as the upstream gets it; NULL (with *WHY for a signing failure) on errors. */
static struct evbuffer *
build_upstream_head(struct conn *c, const char *buf, const char *method, size_t mlen,
		    const char *norm, const struct cred_out *cred, const char **why)
{
	const struct http_head *h = &c->req->head;
	struct evbuffer *e = evbuffer_new();
	bool trace = http_name_is(method, mlen, "TRACE") || http_name_is(method, mlen, "OPTIONS");

	if (!e)
		return NULL;
	/* What was checked is what is sent: the normalised target. */
	evbuffer_add_printf(e, "%.*s %s HTTP/1.1\r\n", (int)mlen, method, norm);
	if ((c->cli_tls && c->port != 443) || (!c->cli_tls && c->port != 80))
		evbuffer_add_printf(e, "Host: %s:%u\r\n", c->host, c->port);
	else
		evbuffer_add_printf(e, "Host: %s\r\n", c->host);
	for (size_t i = 0; i < h->n_fields; i++) {
		const char *name = http_span_ptr(buf, h->fields[i].name);

		if (field_dropped(h, buf, i, c->req_ws) ||
		    (cred->value && http_name_is(name, h->fields[i].name.len, cred->name)) ||
		    (c->scrub && scrub_drops_field(name, h->fields[i].name.len)) ||
		    (c->req_ws &&
		     http_name_is(name, h->fields[i].name.len, "sec-websocket-extensions")) ||
		    (cred->sigv4 &&
		     http_name_is(name, h->fields[i].name.len, "x-amz-security-token")))
			continue;
		evbuffer_add(e, http_span_ptr(buf, h->fields[i].name), h->fields[i].name.len);
		evbuffer_add(e, ": ", 2);
		evbuffer_add(e, http_span_ptr(buf, h->fields[i].value), h->fields[i].value.len);
		evbuffer_add(e, "\r\n", 2);
	}
	if (h->chunked)
		evbuffer_add_printf(e, "Transfer-Encoding: chunked\r\n");
	else if (h->has_length)
		evbuffer_add_printf(e, "Content-Length: %llu\r\n",
				    (unsigned long long)h->content_length);
	if (h->max_forwards >= 0)
		evbuffer_add_printf(e, "Max-Forwards: %ld\r\n",
				    trace ? h->max_forwards - 1 : h->max_forwards);
	if (cred->value)
		evbuffer_add_printf(e, "%s: %.*s\r\n", cred->name, (int)cred->len, cred->value);
	/* What comes back from a credential's host is searched for the secret:
	 * it must come as it is (without Accept-Encoding, any coding would do). */
	if (c->scrub)
		evbuffer_add(e, "Accept-Encoding: identity\r\n", 27);
	if (c->req_ws)
		evbuffer_add_printf(e, "Connection: Upgrade\r\n");
	/* Signed last: what was signed is the head as it goes, every change made. */
	if (cred->sigv4 && sign_sigv4(e, cred, why) < 0) {
		evbuffer_free(e);
		return NULL;
	}
	evbuffer_add(e, "\r\n", 2);
	return e;
}

/*
 * 403 for a CONNECT no rule takes, with a rule that would: an HTTP one on
 * 443 and 80 (a rule without a port means 443 for a tunnel), a tcp rule on
 * any other port, where the stream is seldom HTTPS (ssh on 22, a database).
 */
static void
deny_connect(struct conn *c)
{
	char hp[300], rule[400], body[1400];
	bool tcp = c->port != EGRESS_PORT_TLS && c->port != EGRESS_PORT_PLAIN;

	if (c->port == EGRESS_PORT_TLS)
		snprintf(hp, sizeof(hp), "%s", c->host);
	else
		snprintf(hp, sizeof(hp), "%s:%u", c->host, c->port);
	plog(c->p, "c%lu deny %s: no rule names %s", c->id, c->log_url, hp);
	if (tcp)
		snprintf(rule, sizeof(rule), "tcp %s", hp);
	else
		snprintf(rule, sizeof(rule), "GET %s/**", hp);
	note_denial(c->p, c->log_url ? c->log_url : hp, rule);
	if (tcp)
		snprintf(body, sizeof(body),
			 "omnibox: %s is not allowed by the egress policy: no rule names %s.\n"
			 "A rule that would allow a TCP stream to it, not inspected:\n  %s\n"
			 "or, for HTTPS requests to it, inspected:\n  GET %s/**\n",
			 c->log_url, hp, rule, hp);
	else
		snprintf(body, sizeof(body),
			 "omnibox: %s is not allowed by the egress policy: no rule names "
			 "%s.\nA rule that would allow requests to it:\n  %s\n",
			 c->log_url, hp, rule);
	conn_reply(c, 403, "blocked-by-policy", body, false);
}

static const char *head_field(const struct http_head *h, const char *buf, const char *name,
			      size_t *len);

/* Does the CONNECT come from the sandbox's relay for a client that ignores the proxy? */
static bool
connect_is_transparent(const struct http_head *h, const char *buf)
{
	size_t len = 0;
	const char *v = head_field(h, buf, "Omnibox-Transparent", &len);

	return v && len == 1 && v[0] == '1';
}

static void
handle_connect(struct conn *c, const char *buf)
{
	const struct http_head *h = &c->req->head;
	const char *target = http_span_ptr(buf, h->target), *why;
	struct evbuffer *in = bufferevent_get_input(c->cli);
	struct http_url u;
	struct in_addr v4;
	char t[600], rule[1200];
	enum egress_connect how;
	ssize_t r;

	esc(t, sizeof(t), target, h->target.len);
	c->transparent = connect_is_transparent(h, buf);
	free(c->log_url);
	c->log_url = malloc(strlen(t) + 32);
	if (c->log_url)
		sprintf(c->log_url, "CONNECT %s%s", t, c->transparent ? " (transparent)" : "");
	c->req_close = true; /* a refused CONNECT never becomes anything else */
	/* A transparent connection's stream follows its CONNECT at once. */
	if (!c->transparent && evbuffer_get_length(in) > h->length) {
		bad_request(c, "data after CONNECT before the tunnel was established");
		return;
	}
	if (http_parse_authority(target, h->target.len, &u, &why) < 0) {
		bad_request(c, why);
		return;
	}
	if (u.ipv6) {
		bad_request(c,
			    "IPv6 literal hosts are not supported (no egress rule can name one)");
		return;
	}
	if (!egress_host_is_safe(u.host, u.host_len)) {
		bad_request(c, "the host holds characters outside [A-Za-z0-9.-]");
		return;
	}
	free(c->host);
	c->host = strndup(u.host, u.host_len);
	if (!c->host) {
		conn_kill(c);
		return;
	}
	lower(c->host);
	c->port = u.port;
	if (dest_classify_host(c->host, strlen(c->host), &v4, &why) == DEST_HOST_BAD) {
		c->after = AFTER_TUNNEL;
		dest_refuse(c, c->log_url, why);
		return;
	}
	how = c->transparent
		  ? egress_decide_transparent(c->p->matcher, c->host, strlen(c->host), c->port, &r)
		  : egress_decide_connect(c->p->matcher, c->host, strlen(c->host), c->port, &r);
	if (how == EGRESS_CONNECT_DENY) {
		deny_connect(c);
		return;
	}
	up_close(c);
	if (how == EGRESS_CONNECT_TUNNEL)
		plog(c->p, "c%lu allow %s as a plain tunnel, not inspected, by %s", c->id,
		     c->log_url, rule_desc(c->p, r, rule, sizeof(rule)));
	else
		plog(c->p, "c%lu allow %s host by %s", c->id, c->log_url,
		     rule_desc(c->p, r, rule, sizeof(rule)));
	evbuffer_drain(in, h->length);
	mem_release(c->req);
	c->req = NULL;
	c->req_close = false;
	/* No credential ever goes into a tcp rule's tunnel: the proxy never
	 * reads it (validate refuses a credential host only a tcp rule reaches). */
	c->raw = how == EGRESS_CONNECT_TUNNEL;
	dest_resolve(c, c->raw ? AFTER_RAW : AFTER_TUNNEL);
}

/* Does S/LEN hold NEEDLE, in any case? */
static bool
strcasestr_n(const char *s, size_t len, const char *needle)
{
	size_t n = strlen(needle);

	for (size_t i = 0; i + n <= len; i++)
		if (!strncasecmp(s + i, needle, n))
			return true;
	return false;
}

/* Header NAME's value in BUF's head H (*LEN), or NULL when absent or given twice. */
static const char *
head_field(const struct http_head *h, const char *buf, const char *name, size_t *len)
{
	const char *v = NULL;

	for (size_t i = 0; i < h->n_fields; i++)
		if (http_name_is(http_span_ptr(buf, h->fields[i].name), h->fields[i].name.len,
				 name)) {
			if (v)
				return NULL;
			v = http_span_ptr(buf, h->fields[i].value);
			*len = h->fields[i].value.len;
		}
	return v;
}

/* The upgrade's key is kept: the server's 101 must answer it. */
static bool
websocket_request_ok(struct conn *c, const char *buf)
{
	const struct http_head *h = &c->req->head;
	size_t klen = 0, vlen = 0;
	const char *key = head_field(h, buf, "sec-websocket-key", &klen);
	const char *ver = head_field(h, buf, "sec-websocket-version", &vlen);

	if (!key || !ws_key_is_valid(key, klen) || !ver || vlen != 2 || memcmp(ver, "13", 2))
		return false;
	memcpy(c->ws_key, key, klen);
	c->ws_key[klen] = '\0';
	return true;
}

/*
 * The 101 proves the server took this upgrade (RFC 6455 4.2.2), with no
 * extension: none was offered, so every frame has its RSV bits clear.
 */
static const char *
websocket_response_error(struct conn *c, const char *buf)
{
	const struct http_head *h = &c->resp->head;
	size_t alen = 0, elen = 0;
	const char *accept = head_field(h, buf, "sec-websocket-accept", &alen);

	if (!accept || !ws_accept_matches(c->ws_key, strlen(c->ws_key), accept, alen))
		return "the 101 does not carry the Sec-WebSocket-Accept of this upgrade";
	if (head_field(h, buf, "sec-websocket-extensions", &elen) || elen)
		return "the 101 names a WebSocket extension no one offered";
	return NULL;
}

/* One request of the agent's, as handle_request() hands it from phase to phase. */
struct agent_request {
	const char *buf; /* the head's bytes */
	const char *method;
	size_t mlen;
	char t[PROXY_TARGET_MAX]; /* the target as sent, escaped */
	struct http_url u;
	char *norm;	    /* the normalized path (malloc'd) */
	ssize_t nlen;	    /* its length; -1 when it is ambiguous */
	char hosttext[300]; /* c->host, escaped */
};

/*
 * A request in a tunnel: origin-form, or absolute-form naming the CONNECT
 * host, with a Host header that names it too.  False when answered.
 */
static bool
parse_tunnel_request(struct conn *c, struct agent_request *rq)
{
	struct proxy *p = c->p;
	const struct http_head *h = &c->req->head;
	const char *buf = rq->buf, *target = http_span_ptr(buf, h->target), *why;
	size_t tlen = h->target.len;

	if (http_name_is(rq->method, rq->mlen, "CONNECT")) {
		bad_request(c, "CONNECT inside a tunnel");
		return false;
	}
	if (tlen && target[0] == '/') {
		rq->u.path = target;
		rq->u.path_len = tlen;
	} else if (http_parse_absolute(target, tlen, c->cli_tls ? "https" : "http", &rq->u, &why) <
		   0) {
		bad_request(c, why);
		return false;
	} else if (rq->u.host_len != strlen(c->host) ||
		   strncasecmp(rq->u.host, c->host, rq->u.host_len) != 0 ||
		   (rq->u.port_given && rq->u.port != c->port)) {
		refuse(c, 403, "host-mismatch",
		       "the request names another host or port than the CONNECT", false);
		return false;
	}
	if (h->host >= 0) {
		struct http_url hu;
		const struct http_field *f = &h->fields[h->host];

		/* The tunnel was checked for the CONNECT host; a request
		 * for another would reach it under a false name. */
		if (http_parse_host_field(http_span_ptr(buf, f->value), f->value.len, &hu, &why) <
			0 ||
		    hu.host_len != strlen(c->host) ||
		    strncasecmp(hu.host, c->host, hu.host_len) != 0) {
			char hv[300];

			esc(hv, sizeof(hv), http_span_ptr(buf, f->value), f->value.len);
			free(c->log_url);
			c->log_url = strdup(rq->t);
			plog(p,
			     "c%lu host-mismatch %.*s %s: Host '%s' is not the CONNECT "
			     "host %s",
			     c->id, (int)rq->mlen, rq->method, rq->t, hv, c->host);
			refuse(c, 403, "host-mismatch",
			       "the Host header differs from the CONNECT host", false);
			return false;
		}
	}
	return true;
}

/*
 * A request to the plain-HTTP proxy: absolute-form, for a host an egress
 * rule could name, which becomes the connection's.  False when answered.
 */
static bool
parse_proxy_request(struct conn *c, struct agent_request *rq)
{
	const struct http_head *h = &c->req->head;
	const char *target = http_span_ptr(rq->buf, h->target), *why;
	size_t tlen = h->target.len;
	struct http_url *u = &rq->u;

	if (tlen && target[0] == '/') {
		bad_request(c, "this is a proxy: send absolute-form requests "
			       "(GET http://host/path) or CONNECT");
		return false;
	}
	if (http_parse_absolute(target, tlen, "http", u, &why) < 0) {
		bad_request(c, why);
		return false;
	}
	if (u->ipv6) {
		bad_request(c, "IPv6 literal hosts are not supported (no egress rule can "
			       "name one)");
		return false;
	}
	if (!egress_host_is_safe(u->host, u->host_len)) {
		bad_request(c, "the host holds characters outside [A-Za-z0-9.-]");
		return false;
	}
	/* Another host than the open upstream connection: start afresh. */
	if (c->host && (strlen(c->host) != u->host_len ||
			strncasecmp(c->host, u->host, u->host_len) || c->port != u->port))
		up_close(c);
	free(c->host);
	c->host = strndup(u->host, u->host_len);
	if (!c->host) {
		conn_kill(c);
		return false;
	}
	lower(c->host);
	c->port = u->port;
	return true;
}

/*
 * The path normalized (rq->nlen -1 when it is ambiguous), and the request
 * as the log names it (c->log_url).  False when out of memory: killed.
 */
static bool
normalize_request(struct conn *c, struct agent_request *rq)
{
	const struct http_url *u = &rq->u;
	char *path;

	/* "" and "?q" mean "/" and "/?q" (RFC 9112 3.2.2). */
	path = malloc(u->path_len + 2);
	rq->norm = malloc(PROXY_TARGET_MAX);
	if (!path || !rq->norm) {
		free(path);
		free(rq->norm);
		conn_kill(c);
		return false;
	}
	path[0] = '/';
	memcpy(path + (u->path_len == 0 || u->path[0] == '?'), u->path, u->path_len);
	rq->nlen =
	    egress_normalize_target(path, u->path_len + (u->path_len == 0 || u->path[0] == '?'),
				    rq->norm, PROXY_TARGET_MAX);
	free(path);
	esc(rq->hosttext, sizeof(rq->hosttext), c->host, strlen(c->host));
	{
		char ms[64], ts[PROXY_TARGET_MAX];

		esc(ms, sizeof(ms), rq->method, rq->mlen);
		esc(ts, sizeof(ts), rq->nlen >= 0 ? rq->norm : rq->t,
		    rq->nlen >= 0 ? (size_t)rq->nlen : strlen(rq->t));
		free(c->log_url);
		c->log_url = malloc(strlen(ms) + strlen(rq->hosttext) + strlen(ts) + 32);
		if (c->log_url) {
			if ((c->cli_tls && c->port != 443) || (!c->cli_tls && c->port != 80))
				sprintf(c->log_url, "%s %s://%s:%u%s", ms,
					c->cli_tls ? "https" : "http", rq->hosttext, c->port, ts);
			else
				sprintf(c->log_url, "%s %s://%s%s", ms,
					c->cli_tls ? "https" : "http", rq->hosttext, ts);
		}
	}
	return true;
}

/*
 * Frameworks honour a method named in a header (X-HTTP-Method-Override
 * and its kin) over the request line's: the rules check that method
 * too, so an allowed POST cannot become a denied DELETE upstream.
 * False when one is denied: answered.
 */
static bool
method_overrides_allowed(struct conn *c, const struct agent_request *rq)
{
	struct proxy *p = c->p;
	const struct http_head *h = &c->req->head;

	for (size_t i = 0; i < h->n_fields; i++) {
		const struct http_field *f = &h->fields[i];
		const char *name = http_span_ptr(rq->buf, f->name),
			   *val = http_span_ptr(rq->buf, f->value);

		if (!http_name_is(name, f->name.len, "X-HTTP-Method-Override") &&
		    !http_name_is(name, f->name.len, "X-HTTP-Method") &&
		    !http_name_is(name, f->name.len, "X-Method-Override"))
			continue;
		if (egress_match(p->matcher, val, f->value.len, c->host, strlen(c->host), c->port,
				 c->cli_tls ? EGRESS_PORT_TLS : EGRESS_PORT_PLAIN, rq->norm,
				 (size_t)rq->nlen) < 0) {
			char m[64];

			esc(m, sizeof(m), val, f->value.len);
			plog(p, "c%lu deny %s: method override to %s", c->id, c->log_url, m);
			deny_request(c, val, f->value.len, rq->hosttext, rq->norm);
			return false;
		}
	}
	return true;
}

/*
 * The rules' decision: the egress rule that allows the request into *RULE,
 * or false when it is answered here (refused, or Max-Forwards: 0), its
 * normalized path freed.
 */
static bool
route_request(struct conn *c, struct agent_request *rq, ssize_t *rule)
{
	struct proxy *p = c->p;
	const struct http_head *h = &c->req->head;
	const char *why;
	struct in_addr v4;
	bool trace;

	if (rq->nlen < 0) {
		free(rq->norm);
		refuse(
		    c, 403, "blocked-by-policy",
		    "the path is ambiguous (dot segments above '/', or encoded '/', '\\' or '.')",
		    true);
		return false;
	}
	if (dest_classify_host(c->host, strlen(c->host), &v4, &why) == DEST_HOST_BAD) {
		free(rq->norm);
		c->after = AFTER_FORWARD;
		dest_refuse(c, c->log_url, why);
		return false;
	}
	/* Max-Forwards: 0 stops at the proxy, whatever the host (no upstream, no
	 * credential): the proxy answers it itself. */
	trace = http_name_is(rq->method, rq->mlen, "TRACE") ||
		http_name_is(rq->method, rq->mlen, "OPTIONS");
	if (trace && h->max_forwards == 0) {
		free(rq->norm);
		answer_max_forwards(c, rq->buf, http_name_is(rq->method, rq->mlen, "TRACE"));
		return false;
	}
	*rule = egress_match(p->matcher, rq->method, rq->mlen, c->host, strlen(c->host), c->port,
			     c->cli_tls ? EGRESS_PORT_TLS : EGRESS_PORT_PLAIN, rq->norm,
			     (size_t)rq->nlen);
	if (*rule < 0) {
		deny_request(c, rq->method, rq->mlen, rq->hosttext, rq->norm);
		free(rq->norm);
		return false;
	}
	if (!method_overrides_allowed(c, rq)) {
		free(rq->norm);
		return false;
	}
	return true;
}

/*
 * An allowed request on its way: its credential applied, its head for
 * the upstream built, and the upstream connection reused, opened or
 * resolved first.  Frees the normalized path.
 */
static void
forward_request(struct conn *c, struct agent_request *rq, ssize_t r)
{
	struct proxy *p = c->p;
	const struct http_head *h = &c->req->head;
	const char *buf = rq->buf, *method = rq->method, *why;
	size_t mlen = rq->mlen;
	char rule[1200];
	struct cred_out cred;

	if (!apply_credentials(c, buf, method, mlen, &cred)) {
		free(rq->norm);
		return;
	}
	c->scrub = c->cli_tls && cred_for_host(p, c->host, c->port);
	/* A WebSocket upgrade keeps its Upgrade header only when a rule allowed this GET. */
	c->req_ws = http_name_is(method, mlen, "GET") && h->conn_upgrade && h->upgrade_websocket;
	if (c->req_ws && !websocket_request_ok(c, buf)) {
		free(rq->norm);
		bad_request(c, "a WebSocket upgrade needs one valid Sec-WebSocket-Key and "
			       "Sec-WebSocket-Version: 13");
		return;
	}
	why = NULL;
	c->up_head = build_upstream_head(c, buf, method, mlen, rq->norm, &cred, &why);
	if (cred.swapped)
		explicit_bzero((char *)cred.value, cred.len);
	free(rq->norm);
	if (!c->up_head && why) {
		char what[256];

		snprintf(what, sizeof(what), "the request cannot be signed again: %s", why);
		refuse(c, 502, "credential-error", what, false);
		return;
	}
	if (!c->up_head) {
		conn_kill(c);
		return;
	}
	plog(p, "c%lu allow %s by %s%s", c->id, c->log_url, rule_desc(p, r, rule, sizeof(rule)),
	     cred.secret ? " with credential" : "");
	body_init(&c->req_body, h);
	evbuffer_drain(bufferevent_get_input(c->cli), h->length);
	c->close_after = c->req_close;
	c->resp_started = false;
	c->retried = false;
	if (c->up && c->up_connected && c->up_reusable) {
		/* Kept alive from the previous request to the same host and port. */
		c->rq = RQ_CONNECT;
		up_open(c);
	} else if (c->cli_tls || c->pinned) {
		/* The tunnel's (or the transparent connection's) checked addresses. */
		c->next_addr = 0;
		c->rq = RQ_CONNECT;
		up_open(c);
	} else {
		dest_resolve(c, AFTER_FORWARD);
	}
}

/* A whole request head of the agent's: parsed, routed by the rules, forwarded. */
static void
handle_request(struct conn *c, const char *buf)
{
	const struct http_head *h = &c->req->head;
	struct agent_request rq = {
	    .buf = buf, .method = http_span_ptr(buf, h->method), .mlen = h->method.len};
	ssize_t r;

	conn_unpark(c, 0); /* a whole head: the agent is being served */
	head_account(c, 0);
	c->req_http10 = h->version == 10;
	c->req_close = h->conn_close;
	c->req_head = http_name_is(rq.method, rq.mlen, "HEAD");
	c->req_ws = false;
	c->pinned_seen = c->pinned;
	if (!c->cli_tls && !c->pinned && http_name_is(rq.method, rq.mlen, "CONNECT")) {
		handle_connect(c, buf);
		return;
	}
	esc(rq.t, sizeof(rq.t), http_span_ptr(buf, h->target), h->target.len);
	if (c->cli_tls || c->pinned ? !parse_tunnel_request(c, &rq) : !parse_proxy_request(c, &rq))
		return;
	if (!normalize_request(c, &rq) || !route_request(c, &rq, &r))
		return;
	forward_request(c, &rq, r);
}

/*
 * A transparent connection, its host and addresses checked: a TLS record
 * first (a ClientHello) is intercepted as after a CONNECT; anything else
 * is read as plain HTTP for this host and port alone.
 */
static void
sniff(struct conn *c)
{
	unsigned char first;

	if (evbuffer_copyout(bufferevent_get_input(c->cli), &first, 1) != 1)
		return;
	if (first == 0x16) {
		start_tls(c);
		return;
	}
	c->pinned = true;
	c->rq = RQ_HEAD;
	conn_park(c, PROXY_HEAD_TIMEOUT);
	conn_update_io(c);
	conn_read_head(c);
}

/* Every address passed the check. */
static void
dest_ready(struct conn *c)
{
	char what[PROXY_TARGET_MAX + 64];

	if (c->after == AFTER_TUNNEL) {
		char addr[INET6_ADDRSTRLEN];

		dest_format((struct sockaddr *)&c->addrs[0], addr, sizeof(addr));
		plog(c->p, "c%lu tunnel %s to %s", c->id, dest_what(c, what, sizeof(what)), addr);
		if (c->transparent) {
			c->rq = RQ_SNIFF;
			conn_park(c, PROXY_HEAD_TIMEOUT);
			conn_update_io(c);
			if (evbuffer_get_length(bufferevent_get_input(c->cli)))
				sniff(c);
			return;
		}
		c->rq = RQ_SEND200;
		evbuffer_add_printf(bufferevent_get_output(c->cli),
				    "HTTP/1.1 200 Connection established\r\n\r\n");
		/* Out now if the socket takes it; else cli_write_cb() goes on. */
		sock_flush(c->cli_sock);
		if (evbuffer_get_length(bufferevent_get_output(c->cli)) == 0)
			start_tls(c);
		return;
	}
	/* A tcp rule's tunnel: the 200 once the server has accepted, so a
	 * refused connection is a 502, not a stream that ends at once. */
	c->rq = RQ_CONNECT;
	up_open(c);
}

/* ---- the upstream side --------------------------------------------------------------- */

static void up_read_cb(struct bufferevent *bev, void *arg);
static void up_write_cb(struct bufferevent *bev, void *arg);
static void up_event_cb(struct bufferevent *bev, short what, void *arg);

static void
upstream_failed(struct conn *c, const char *kind, const char *why)
{
	char body[1024];

	plog(c->p, "c%lu %s %s: %s", c->id, kind, c->log_url ? c->log_url : "", why);
	if (c->resp_started) {
		/* Part of the answer is out: only a cut connection tells the truth. */
		conn_kill(c);
		return;
	}
	if (c->transparent && !c->cli_tls && !c->pinned) {
		conn_kill(c);
		return;
	}
	snprintf(body, sizeof(body), "omnibox: %s:%u: %s\n", c->host, c->port, why);
	c->req_close = true;
	c->rq = RQ_HEAD; /* the body (if any) was not read: conn_reply closes */
	c->p->stats.denied++;
	{
		struct evbuffer *out = bufferevent_get_output(c->cli);

		evbuffer_add_printf(
		    out,
		    "HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain; "
		    "charset=utf-8\r\nX-Omnibox-Error: %s\r\nContent-Length: %zu\r\n"
		    "Connection: close\r\n\r\n%s",
		    kind, c->req_head ? 0 : strlen(body), c->req_head ? "" : body);
	}
	conn_finish(c);
}

/* Send the head (and then the body) on a connected, or reused, upstream. */
static void
up_send_request(struct conn *c)
{
	struct evbuffer *out = bufferevent_get_output(c->up);
	size_t n = evbuffer_get_length(c->up_head);

	if (c->up_rd && !c->up_rd_done)
		event_del(c->up_rd); /* no idle timeout while a request is out */
	evbuffer_add(out, evbuffer_pullup(c->up_head, -1), n);
	c->p->stats.requests++;
	c->rs = RS_HEAD;
	c->rq = c->req_body.done ? RQ_WAIT : RQ_BODY;
	c->body_moved = 0;
	conn_unpark(c, c->rq == RQ_BODY ? PROXY_BODY_WINDOW : 0);
	conn_update_io(c);
	if (c->rq == RQ_BODY)
		pump_request(c);
}

static void
up_open(struct conn *c)
{
	struct proxy *p = c->p;
	struct timeval t = {CONNECT_TIMEOUT, 0};
	int one = 1;

	if (c->up && c->up_connected && c->up_reusable) {
		up_send_request(c);
		return;
	}
	up_close(c);
	while (c->next_addr < c->n_addrs) {
		struct sockaddr *sa = (struct sockaddr *)&c->addrs[c->next_addr++];
		int len = sa->sa_family == AF_INET ? sizeof(struct sockaddr_in)
						   : sizeof(struct sockaddr_in6);
		struct bufferevent *b = bufferevent_socket_new(p->base, -1, BEV_OPT_CLOSE_ON_FREE);
		evutil_socket_t fd;

		if (!b) {
			conn_kill(c);
			return;
		}
		tune_sock(b);
		bufferevent_setcb(b, up_read_cb, up_write_cb, up_event_cb, c);
		c->up = c->up_sock = b;
		/* Only ever a checked address: no second lookup (DNS rebinding). */
		if (bufferevent_socket_connect(b, sa, len) < 0) {
			up_close(c);
			continue;
		}
		fd = bufferevent_getfd(b);
		/* Nothing of the proxy may leak into what omnibox-run starts. */
		fcntl(fd, F_SETFD, FD_CLOEXEC);
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		c->up_rd = event_new(p->base, fd, EV_READ | EV_PERSIST, up_rd_cb, c);
		if (!c->up_rd) {
			conn_kill(c);
			return;
		}
		/* Read from the start (a refused connection reads as an error), with
		 * the connect and handshake timeout until the connection is up. */
		event_add(c->up_rd, &t);
		return;
	}
	upstream_failed(c, "upstream-unreachable", "cannot connect to any of its addresses");
}

static void
up_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct conn *c = arg;
	char why[300];

	(void)bev;
	if (what & BEV_EVENT_CONNECTED) {
		if (c->cli_tls && c->up == c->up_sock) {
			/* TCP is up: TLS on top, verified against the system store. */
			SSL *ssl = SSL_new(c->p->client_ctx);
			struct bufferevent *tls;

			if (!ssl || tls_client_prepare(ssl, c->host) < 0) {
				SSL_free(ssl);
				up_close(c);
				upstream_failed(c, "upstream-tls-error", "cannot set up TLS");
				return;
			}
			tls = bufferevent_openssl_filter_new(c->p->base, c->up_sock, ssl,
							     BUFFEREVENT_SSL_CONNECTING,
							     BEV_OPT_CLOSE_ON_FREE);
			if (!tls) {
				up_close(c);
				upstream_failed(c, "upstream-tls-error", "cannot set up TLS");
				return;
			}
			c->up = tls;
			tune_filter(tls, c->up_sock);
			bufferevent_setcb(tls, up_read_cb, up_write_cb, up_event_cb, c);
			bufferevent_enable(tls, EV_READ | EV_WRITE);
			return;
		}
		c->up_connected = true;
		c->up_reusable = false;
		if (!c->up_rd_done)
			event_del(c->up_rd); /* conn_update_io() adds it back, untimed */
		if (c->raw)
			raw_established(c);
		else if (c->rq == RQ_CONNECT)
			up_send_request(c);
		else
			conn_update_io(c);
		return;
	}
	if (!c->up_connected) {
		unsigned long e = c->cli_tls ? bufferevent_get_openssl_error(c->up) : 0;

		if (e) {
			char reason[256];

			ERR_error_string_n(e, reason, sizeof(reason));
			while (bufferevent_get_openssl_error(c->up))
				;
			snprintf(why, sizeof(why), "TLS with the server failed: %s", reason);
			up_close(c);
			upstream_failed(c, "upstream-tls-error", why);
			return;
		}
		/* TCP did not connect: the next checked address, if any. */
		up_open(c);
		return;
	}
	if (c->rs == RS_BODY && c->resp_body.mode == BODY_CLOSE && (what & BEV_EVENT_EOF)) {
		/* A body delimited by the close: drain what came with it. */
		pump_response(c);
		if (c->dead)
			return;
		body_end_data(&c->resp_body, bufferevent_get_output(c->cli));
		if (c->resp_body.out_chunked)
			evbuffer_add(bufferevent_get_output(c->cli), "0\r\n\r\n", 5);
		c->resp_body.done = true;
		c->up_reusable = false;
		c->rs = RS_DONE;
		up_close(c);
		if (c->rq == RQ_WAIT)
			request_done(c);
		else
			conn_finish(c);
		return;
	}
	switch (c->rs) {
	case RS_IDLE:
	case RS_DONE:
		up_close(c); /* a kept-alive connection the server closed */
		conn_update_io(c);
		return;
	case RS_HEAD:
		if (c->up_used && !c->retried && c->req_body.mode == BODY_NONE &&
		    evbuffer_get_length(bufferevent_get_input(c->up)) == 0) {
			/* The server closed a kept-alive connection as the request
			 * went out: send it once more on a fresh one. */
			c->retried = true;
			up_close(c);
			c->next_addr = 0;
			c->rq = RQ_CONNECT;
			up_open(c);
			return;
		}
		break;
	case RS_TUNNEL:
		if (c->raw)
			plog(c->p, "c%lu tunnel %s ended by the server%s", c->id,
			     c->log_url ? c->log_url : "",
			     what & BEV_EVENT_EOF ? "" : " (connection error)");
		up_close(c);
		conn_finish(c);
		return;
	default:
		break;
	}
	snprintf(why, sizeof(why), "the server %s",
		 what & BEV_EVENT_TIMEOUT ? "timed out"
		 : what & BEV_EVENT_EOF	  ? "closed the connection early"
					  : "connection failed");
	up_close(c);
	upstream_failed(c, "upstream-error", why);
}

static void
up_write_cb(struct bufferevent *bev, void *arg)
{
	struct conn *c = arg;

	(void)bev;
	conn_update_io(c);
	raw_shut_up(c);
}

static void
up_read_cb(struct bufferevent *bev, void *arg)
{
	struct conn *c = arg;

	(void)bev;
	switch (c->rs) {
	case RS_HEAD:
		read_response(c);
		break;
	case RS_BODY:
		pump_response(c);
		break;
	case RS_TUNNEL:
		if (c->raw)
			raw_pass(c, false);
		else
			ws_pass(c, false);
		break;
	default:
		/* Bytes nobody asked for: the connection cannot be trusted for reuse. */
		up_close(c);
		conn_update_io(c);
		break;
	}
}

/* ---- bodies ---------------------------------------------------------------------------- */

/* What the scrubber let out so far, framed as B is written. */
static void
body_put_scrubbed(struct body *b, struct evbuffer *out)
{
	size_t n = evbuffer_get_length(b->scrubbed);

	if (!n)
		return;
	if (b->out_chunked)
		evbuffer_add_printf(out, "%zx\r\n", n);
	evbuffer_add_buffer(out, b->scrubbed);
	if (b->out_chunked)
		evbuffer_add(out, "\r\n", 2);
}

/*
 * N bytes of body data from IN to OUT, framed as B is written.  Through
 * the scrubber when B has one: the secrets never reach OUT, bytes that may
 * begin one wait for the next data (or the end of the body).
 */
static void
body_data(struct body *b, struct evbuffer *in, struct evbuffer *out, size_t n)
{
	struct evbuffer_iovec v[16];
	size_t left = n;

	if (!b->sc) {
		if (b->out_chunked)
			evbuffer_add_printf(out, "%zx\r\n", n);
		evbuffer_remove_buffer(in, out, n);
		if (b->out_chunked)
			evbuffer_add(out, "\r\n", 2);
		return;
	}
	while (left) {
		int k = evbuffer_peek(in, (ev_ssize_t)left, NULL, v, 16);
		size_t took = 0;

		if (k > 16)
			k = 16;
		for (int i = 0; i < k && took < left; i++) {
			size_t len = v[i].iov_len < left - took ? v[i].iov_len : left - took;

			scrub_stream_feed(b->sc, v[i].iov_base, len, emit_evbuffer, b->scrubbed);
			took += len;
		}
		evbuffer_drain(in, took);
		left -= took;
	}
	body_put_scrubbed(b, out);
}

/* The body is complete: what the scrubber held back goes out (it was no secret). */
static void
body_end_data(struct body *b, struct evbuffer *out)
{
	if (!b->sc)
		return;
	scrub_stream_finish(b->sc, emit_evbuffer, b->scrubbed);
	body_put_scrubbed(b, out);
}

/*
 * Move what IN holds of body B to DEST, through STAGE (empty) so DEST gets
 * it in one addition.  1: the body is complete; 0: more to come; -1: bad
 * framing.
 */
static int
body_pump_staged(struct body *b, struct evbuffer *in, struct evbuffer *out, const char **why)
{
	size_t avail, n;

	switch (b->mode) {
	case BODY_NONE:
		b->done = true;
		return 1;
	case BODY_LENGTH:
		avail = evbuffer_get_length(in);
		n = avail < b->left ? avail : (size_t)b->left;
		if (n)
			body_data(b, in, out, n);
		b->left -= n;
		b->done = b->left == 0;
		if (b->done) {
			body_end_data(b, out);
			if (b->out_chunked) /* re-framed: a scrubbed body changes length */
				evbuffer_add(out, "0\r\n\r\n", 5);
		}
		return b->done;
	case BODY_CLOSE:
		avail = evbuffer_get_length(in);
		if (avail)
			body_data(b, in, out, avail);
		return 0;
	case BODY_CHUNKED:
		for (;;) {
			size_t look = http_chunked_lookahead(&b->ch), len = 0;
			const char *buf = NULL;

			avail = evbuffer_get_length(in);
			if (avail == 0)
				return 0;
			if (look) {
				len = avail < look ? avail : look;
				buf = (const char *)evbuffer_pullup(in, (ev_ssize_t)len);
			}
			switch (http_chunked_step(&b->ch, buf, len, avail, &n)) {
			case CHUNK_MORE:
				return 0;
			case CHUNK_SKIP:
				evbuffer_drain(in, n);
				break;
			case CHUNK_DATA:
				body_data(b, in, out, n);
				break;
			case CHUNK_DONE:
				evbuffer_drain(in, n);
				body_end_data(b, out);
				if (b->out_chunked)
					evbuffer_add(out, "0\r\n\r\n", 5);
				b->done = true;
				return 1;
			default:
				*why = b->ch.error;
				return -1;
			}
		}
	}
	return -1;
}

static int
body_pump(struct body *b, struct evbuffer *in, struct evbuffer *dest, struct evbuffer *stage,
	  const char **why)
{
	int r = body_pump_staged(b, in, stage, why);

	if (evbuffer_get_length(stage))
		evbuffer_add_buffer(dest, stage);
	return r;
}

static void
pump_request(struct conn *c)
{
	const char *why = "bad framing";
	int r;

	size_t before;

	if (!c->up || !c->up_connected)
		return;
	before = evbuffer_get_length(bufferevent_get_input(c->cli));
	r = body_pump(&c->req_body, bufferevent_get_input(c->cli), bufferevent_get_output(c->up),
		      c->p->stage, &why);
	c->body_moved += before - evbuffer_get_length(bufferevent_get_input(c->cli));
	if (r < 0) {
		/* Part of the request is upstream already: only cutting both
		 * connections keeps the rest from being read as a new request. */
		plog(c->p, "c%lu bad-request %s: request body: %s", c->id, c->log_url, why);
		conn_kill(c);
		return;
	}
	if (r == 1) {
		c->rq = RQ_WAIT;
		conn_unpark(c, 0);
		if (c->rs == RS_DONE) {
			request_done(c);
			return;
		}
	}
	conn_update_io(c);
}

static void
response_done(struct conn *c)
{
	c->rs = RS_DONE;
	/* Bytes after the response no request asked for (a body after a HEAD,
	 * say) would be read as the next answer: the connection is not reused. */
	if (c->up && evbuffer_get_length(bufferevent_get_input(c->up)))
		c->up_reusable = false;
	if (c->up_reusable) {
		c->up_used = true;
		if (c->up_rd && !c->up_rd_done)
			event_del(c->up_rd); /* re-added with the idle timeout */
	} else {
		up_close(c);
	}
	if (c->rq == RQ_WAIT)
		request_done(c);
	else
		conn_finish(c); /* the answer came before the whole request: close */
}

/* ---- plain bodies by splice(2) ------------------------------------------------------- */

static void
splice_end(struct conn *c)
{
	struct splice *sp = c->sp;

	if (!sp)
		return;
	if (sp->in)
		event_free(sp->in);
	if (sp->out)
		event_free(sp->out);
	close(sp->pipe[0]);
	close(sp->pipe[1]);
	free(sp);
	c->sp = NULL;
}

/* The upstream closed: that ends a close-delimited body, and any other too early. */
static void
splice_upstream_closed(struct conn *c)
{
	if (c->resp_body.mode != BODY_CLOSE) {
		plog(c->p, "c%lu upstream-error %s: the server closed in the body", c->id,
		     c->log_url);
		conn_kill(c);
		return;
	}
	c->resp_body.done = true;
	c->up_reusable = false;
	c->rs = RS_DONE;
	up_close(c);
	if (c->rq == RQ_WAIT)
		request_done(c);
	else
		conn_finish(c);
}

/*
 * Move the body: upstream socket -> pipe -> agent's socket, no copy in the
 * proxy.  The framing is plain (a length, or the close), so nothing has to
 * be looked at; the agent's side is not TLS, so nothing has to be encrypted.
 */
static void
splice_step(struct conn *c)
{
	struct splice *sp = c->sp;
	int up = bufferevent_getfd(c->up_sock);

	for (int round = 0; round < 16; round++) {
		uint64_t want;
		ssize_t n;

		while (sp->in_pipe) {
			ssize_t k = splice(sp->pipe[0], NULL, c->fd, NULL, sp->in_pipe,
					   SPLICE_F_MOVE | SPLICE_F_NONBLOCK);

			if (k < 0 && errno == EINTR)
				continue;
			if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
				/* The agent is slower: wait for it, stop reading upstream. */
				event_del(sp->in);
				event_add(sp->out, NULL);
				return;
			}
			if (k <= 0) {
				conn_kill(c);
				return;
			}
			sp->in_pipe -= (size_t)k;
		}
		event_del(sp->out);
		if (c->resp_body.mode == BODY_LENGTH && c->resp_body.left == 0) {
			c->resp_body.done = true;
			splice_end(c);
			response_done(c);
			return;
		}
		want = c->resp_body.mode == BODY_LENGTH && c->resp_body.left < sp->pipe_size
			   ? c->resp_body.left
			   : sp->pipe_size;
		n = splice(up, NULL, sp->pipe[1], NULL, (size_t)want,
			   SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			event_add(sp->in, NULL);
			return;
		}
		if (n == 0) {
			splice_upstream_closed(c);
			return;
		}
		if (n < 0 && (errno == EINVAL || errno == ENOSYS) && !sp->moved) {
			/* This kernel cannot splice these sockets: copy, now and from now on. */
			c->p->no_splice = true;
			splice_end(c);
			conn_update_io(c);
			return;
		}
		if (n < 0) {
			upstream_failed(c, "upstream-error", "reading the body failed");
			return;
		}
		sp->moved = true;
		sp->in_pipe += (size_t)n;
		if (c->resp_body.mode == BODY_LENGTH)
			c->resp_body.left -= (uint64_t)n;
	}
	event_add(sp->in, NULL); /* more next turn: other connections get theirs */
}

static void
splice_cb(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;

	(void)fd;
	(void)what;
	if (c->sp)
		splice_step(c);
}

/*
 * Hand the rest of a plain body to the kernel, when the agent's side is
 * plain too, the framing needs no reading, and nothing is buffered on
 * either side.  Returns false (and changes nothing) when that is not so.
 */
static bool
splice_start(struct conn *c)
{
	struct splice *sp;
	int size;

	if (c->p->no_splice || c->cli_tls || c->sp || c->resp_body.out_chunked ||
	    (c->resp_body.mode != BODY_LENGTH && c->resp_body.mode != BODY_CLOSE) ||
	    evbuffer_get_length(bufferevent_get_input(c->up_sock)) ||
	    evbuffer_get_length(bufferevent_get_output(c->cli_sock)))
		return false;
	sp = calloc(1, sizeof(*sp));
	if (!sp)
		return false;
	if (pipe2(sp->pipe, O_NONBLOCK | O_CLOEXEC) < 0) {
		free(sp);
		return false;
	}
	fcntl(sp->pipe[0], F_SETPIPE_SZ, 1024 * 1024);
	size = fcntl(sp->pipe[0], F_GETPIPE_SZ);
	sp->pipe_size = size > 0 ? (size_t)size : 65536;
	sp->in = event_new(c->p->base, bufferevent_getfd(c->up_sock), EV_READ | EV_PERSIST,
			   splice_cb, c);
	sp->out = event_new(c->p->base, c->fd, EV_WRITE | EV_PERSIST, splice_cb, c);
	c->sp = sp;
	if (!sp->in || !sp->out) {
		splice_end(c);
		return false;
	}
	/* Our own reading of the upstream stops: the kernel reads it now. */
	if (c->up_rd && !c->up_rd_done)
		event_del(c->up_rd);
	splice_step(c);
	return true;
}

/*
 * Nothing more came for SCRUB_FLUSH_US: what the scrubber holds goes out
 * (server-sent events are not kept waiting for the next one).  The wait is
 * the same whatever the bytes are; a secret the server splits over two
 * writes that far apart would not be found.
 */
static void
scrub_flush_cb(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;

	(void)fd;
	(void)what;
	if (c->dead || c->rs != RS_BODY || !c->resp_body.sc || !c->resp_body.sc->n_held)
		return;
	scrub_stream_finish(c->resp_body.sc, emit_evbuffer, c->resp_body.scrubbed);
	body_put_scrubbed(&c->resp_body, bufferevent_get_output(c->cli));
	conn_update_io(c);
}

static void
pump_response(struct conn *c)
{
	const char *why = "bad framing";
	int r = body_pump(&c->resp_body, bufferevent_get_input(c->up),
			  bufferevent_get_output(c->cli), c->p->stage, &why);

	if (r < 0) {
		plog(c->p, "c%lu upstream-error %s: response body: %s", c->id, c->log_url, why);
		conn_kill(c);
		return;
	}
	if (r == 1) {
		response_done(c);
		return;
	}
	/* A stream that pauses gets the bytes the scrubber holds a moment later. */
	if (c->resp_body.sc && c->resp_body.sc->n_held) {
		if (!c->scrub_timer)
			c->scrub_timer = evtimer_new(c->p->base, scrub_flush_cb, c);
		if (c->scrub_timer) {
			struct timeval t = {0, SCRUB_FLUSH_US};

			evtimer_add(c->scrub_timer, &t);
		}
	}
	/* Big plain downloads: out of the proxy's hands and into the kernel's. */
	sock_flush(c->cli_sock);
	if (splice_start(c))
		return;
	conn_update_io(c);
}

/* Both halves of the exchange are over: next request, or close. */
static void
request_done(struct conn *c)
{
	free_request(c);
	c->rq = RQ_HEAD;
	c->rs = RS_IDLE;
	c->req_ws = c->req_head = false;
	if (c->close_after || c->req_close || c->cli_eof) {
		conn_finish(c);
		return;
	}
	c->keepalive = true;
	conn_park(c, PROXY_KEEPALIVE_TIMEOUT);
	conn_update_io(c);
	/* A pipelined request is read by the loop in conn_read_head(), or now. */
	if (evbuffer_get_length(bufferevent_get_input(c->cli)))
		bufferevent_trigger(c->cli, EV_READ,
				    BEV_TRIG_IGNORE_WATERMARKS | BEV_TRIG_DEFER_CALLBACKS);
	else
		conn_release_buffers(c);
}

/* ---- responses ---------------------------------------------------------------------------- */

/* S/LEN to OUT; from a credential's host, without the secrets. */
static void
put_scrubbed(struct conn *c, struct evbuffer *out, const char *s, size_t len)
{
	struct scrub_stream st;

	if (!c->scrub) {
		evbuffer_add(out, s, len);
		return;
	}
	scrub_stream_init(&st, &c->p->scrub, false);
	scrub_stream_feed(&st, s, len, emit_evbuffer, out);
	scrub_stream_finish(&st, emit_evbuffer, out);
}

static void
write_response_head(struct conn *c, const char *buf, bool keep_upgrade, bool out_chunked)
{
	const struct http_head *h = &c->resp->head;
	struct evbuffer *out = c->p->stage;

	evbuffer_add_printf(out, "HTTP/1.1 %u ", h->status);
	put_scrubbed(c, out, http_span_ptr(buf, h->reason), h->reason.len);
	evbuffer_add(out, "\r\n", 2);
	for (size_t i = 0; i < h->n_fields; i++) {
		const char *name = http_span_ptr(buf, h->fields[i].name);
		size_t len = h->fields[i].name.len;

		if (http_name_is(name, len, "content-length")) {
			/* A scrubbed body has a length of its own; and from a credential's
			 * host, the length of a body not sent (HEAD, 304) would tell the
			 * length of a secret it echoes. */
			if (out_chunked || c->scrub)
				continue;
		} else if (http_name_is(name, len, "host") ||
			   http_name_is(name, len, "max-forwards") ||
			   http_name_is(name, len, "authorization")) {
			/* not hop-by-hop in a response: pass on */
		} else if (field_dropped(h, buf, i, keep_upgrade)) {
			continue;
		}
		put_scrubbed(c, out, name, len);
		evbuffer_add(out, ": ", 2);
		put_scrubbed(c, out, http_span_ptr(buf, h->fields[i].value),
			     h->fields[i].value.len);
		evbuffer_add(out, "\r\n", 2);
	}
	if (out_chunked)
		evbuffer_add(out, "Transfer-Encoding: chunked\r\n", 28);
	else if (c->scrub && h->status >= 200 && !keep_upgrade && !c->req_head &&
		 h->status != 204 && h->status != 304 && c->resp_body.mode == BODY_NONE)
		evbuffer_add(out, "Content-Length: 0\r\n", 19); /* the one it had, dropped above */
	if (keep_upgrade)
		evbuffer_add(out, "Connection: Upgrade\r\n", 21);
	else if (c->close_after && h->status >= 200)
		evbuffer_add(out, "Connection: close\r\n", 19);
	evbuffer_add(out, "\r\n", 2);
	evbuffer_add_buffer(bufferevent_get_output(c->cli), out);
}

/*
 * A response from a credential's host that the scrubber could not search
 * whole: compressed, partial (206), or in a charset that spreads a secret
 * over wider characters.  Returns why, or NULL.
 */
static const char *
unsearchable_response(const struct http_head *h, const char *buf)
{
	if (h->status == 206)
		return "a partial response (206) from a credential's host could hold part of the "
		       "secret";
	for (size_t i = 0; i < h->n_fields; i++) {
		const struct http_field *f = &h->fields[i];
		const char *name = http_span_ptr(buf, f->name), *v = http_span_ptr(buf, f->value);

		if (http_name_is(name, f->name.len, "content-encoding") &&
		    !http_name_is(v, f->value.len, "identity"))
			return "the response from a credential's host is compressed "
			       "(Content-Encoding), so it cannot be checked for the secret";
		if (http_name_is(name, f->name.len, "content-type") &&
		    (strcasestr_n(v, f->value.len, "utf-16") ||
		     strcasestr_n(v, f->value.len, "utf-32") ||
		     strcasestr_n(v, f->value.len, "utf16") ||
		     strcasestr_n(v, f->value.len, "utf32") ||
		     strcasestr_n(v, f->value.len, "utf_16") ||
		     strcasestr_n(v, f->value.len, "utf_32") ||
		     strcasestr_n(v, f->value.len, "ucs")))
			return "the response from a credential's host is in a wide charset, so it "
			       "cannot be checked for the secret";
	}
	return NULL;
}

static void
read_response(struct conn *c)
{
	while (!c->dead && c->rs == RS_HEAD) {
		struct evbuffer *in = bufferevent_get_input(c->up);
		size_t len = evbuffer_get_length(in), look;
		const struct http_head *h;
		const char *buf;
		enum http_result r;
		bool chunked_out;

		if (len == 0)
			return;
		if (!c->resp) {
			c->resp = mem_alloc(sizeof(*c->resp));
			if (!c->resp) {
				conn_kill(c);
				return;
			}
			http_head_begin(c->resp, true);
		}
		look = len < HTTP_HEAD_MAX ? len : HTTP_HEAD_MAX;
		buf = (const char *)evbuffer_pullup(in, (ev_ssize_t)look);
		r = http_parse_head(c->resp, buf, look);
		if (r == HTTP_MORE)
			return;
		if (r == HTTP_ERROR) {
			char why[256];

			snprintf(why, sizeof(why), "malformed response: %s", c->resp->error);
			c->up_reusable = false;
			up_close(c);
			upstream_failed(c, "bad-gateway", why);
			return;
		}
		h = &c->resp->head;
		/* The request went out whole; no retry from here on. */
		if (c->up_head) {
			evbuffer_free(c->up_head);
			c->up_head = NULL;
		}
		if (h->status == 101) {
			const char *bad = !c->req_ws || !h->upgrade_websocket
					      ? "unexpected 101 Switching Protocols"
					      : websocket_response_error(c, buf);

			if (bad) {
				up_close(c);
				upstream_failed(c, "bad-gateway", bad);
				return;
			}
			c->ws = mem_zalloc(sizeof(*c->ws));
			if (!c->ws) {
				conn_kill(c);
				return;
			}
			ws_checker_init(&c->ws->from_agent, WS_FROM_CLIENT);
			ws_checker_init(&c->ws->from_server, WS_FROM_SERVER);
			c->ws->scrub = c->scrub;
			scrub_stream_init(&c->ws->sc, &c->p->scrub, true);
			plog(c->p, "c%lu websocket %s", c->id, c->log_url);
			write_response_head(c, buf, true, false);
			evbuffer_drain(in, h->length);
			c->resp_started = true;
			c->rq = RQ_TUNNEL;
			c->rs = RS_TUNNEL;
			ws_pass(c, false); /* what came with the 101 */
			if (!c->dead)
				ws_pass(c, true); /* what the agent sent early */
			return;
		}
		if (h->status < 200) {
			/* 100 Continue, 103 Early Hints: pass on (not to HTTP/1.0), read on. */
			if (!c->req_http10)
				write_response_head(c, buf, false, false);
			evbuffer_drain(in, h->length);
			http_head_begin(c->resp, true);
			continue;
		}
		mem_release(c->resp_body.sc);
		memset(&c->resp_body, 0, sizeof(c->resp_body));
		if (c->req_head || h->status == 204 || h->status == 304) {
			c->resp_body.mode = BODY_NONE;
		} else if (h->chunked) {
			c->resp_body.mode = BODY_CHUNKED;
			http_chunked_init(&c->resp_body.ch);
		} else if (h->has_length) {
			c->resp_body.mode = h->content_length ? BODY_LENGTH : BODY_NONE;
			c->resp_body.left = h->content_length;
		} else {
			c->resp_body.mode = BODY_CLOSE;
		}
		if (c->scrub && c->resp_body.mode != BODY_NONE) {
			/*
			 * The secret went to this host: whatever it sends back is
			 * searched for it.  The request asked for no content coding;
			 * a compressed body could not be searched, so it is refused.
			 */
			const char *bad = unsearchable_response(h, buf);

			if (bad) {
				c->up_reusable = false;
				up_close(c);
				upstream_failed(c, "bad-gateway", bad);
				return;
			}
			c->resp_body.sc = mem_alloc(sizeof(*c->resp_body.sc));
			if (!c->resp_body.sc) {
				conn_kill(c);
				return;
			}
			scrub_stream_init(c->resp_body.sc, &c->p->scrub, false);
			c->resp_body.scrubbed = c->p->scrubbed;
		}
		chunked_out =
		    !c->req_http10 &&
		    (c->resp_body.mode == BODY_CHUNKED || c->resp_body.mode == BODY_CLOSE ||
		     (c->resp_body.sc && c->resp_body.mode == BODY_LENGTH));
		c->resp_body.out_chunked = chunked_out;
		c->up_reusable = !h->conn_close && c->resp_body.mode != BODY_CLOSE;
		/* An HTTP/1.0 agent learns where an unsized body ends only from the close. */
		if (c->req_http10 && (c->resp_body.mode == BODY_CHUNKED ||
				      c->resp_body.mode == BODY_CLOSE || c->resp_body.sc))
			c->close_after = true;
		if (c->rq == RQ_BODY)
			c->close_after = true;
		write_response_head(c, buf, false, chunked_out);
		evbuffer_drain(in, h->length);
		c->resp_started = true;
		c->rs = RS_BODY;
		pump_response(c);
		return;
	}
}

/* ---- setup ------------------------------------------------------------------------- */

static void
listener_error_cb(struct evconnlistener *l, void *arg)
{
	struct proxy *p = arg;

	(void)l;
	plog(p, "accept: %s", strerror(errno));
}

static char *
read_file(const char *path, size_t *len, char *err, size_t errlen)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL;
	size_t cap = 0, n = 0;

	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	for (;;) {
		size_t r;

		if (n + 65536 + 1 > cap) {
			char *nb = realloc(buf, cap = cap ? cap * 2 : 262144);

			if (!nb) {
				free(buf);
				fclose(f);
				snprintf(err, errlen, "%s: out of memory", path);
				return NULL;
			}
			buf = nb;
		}
		r = fread(buf + n, 1, cap - n - 1, f);
		n += r;
		if (r == 0)
			break;
	}
	if (ferror(f)) {
		snprintf(err, errlen, "%s: read error", path);
		free(buf);
		fclose(f);
		return NULL;
	}
	fclose(f);
	buf[n] = '\0';
	*len = n;
	return buf;
}

/*
 * The session's trust for the clients inside, beside CF's bundle path (the
 * scratch dir): the system CAs, the --egress-ca certificates (EXTRA, when
 * given) and the session CA, as PEM, JKS and a hashed directory.
 */
static int
write_trust(const struct proxy_config *cf, const char *extra, size_t extra_len, const char *ca,
	    size_t ca_len, char *err, size_t errlen)
{
	char *sys = NULL;
	size_t sys_len = 0;
	int rc;

	if (!cf->system_ca_file) {
		sys = (char *)extra; /* the system store is the upstream trust */
		sys_len = extra_len;
		extra = NULL;
		extra_len = 0;
	} else if (!(sys = read_file(DEFAULT_SYSTEM_CAS, &sys_len, err, errlen))) {
		sys_len = 0; /* no system store here: the bundle holds the rest */
	}
	rc = truststore_write(cf->ca_bundle_path, sys, sys_len, extra, extra_len, ca, ca_len, err,
			      errlen);
	if (cf->system_ca_file)
		free(sys);
	return rc;
}

static int
listen_unix(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sun;
	struct stat st;
	int fd;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun.sun_path)) {
		snprintf(err, errlen, "%s: socket path too long", path);
		return -1;
	}
	strcpy(sun.sun_path, path);
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			snprintf(err, errlen, "%s exists and is not a socket", path);
			return -1;
		}
		unlink(path);
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0 || chmod(path, 0600) < 0 ||
	    listen(fd, SOMAXCONN) < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* ---- the credentials' table, and reading secrets again ----------------------------------- */

static char *
dup_or_null(struct arena *a, const char *s)
{
	return s ? arena_strdup(a, s) : NULL;
}

/* D: a copy of S in P's arena. */
static int
copy_cred(struct proxy *p, const struct proxy_cred *s, struct proxy_cred *d)
{
	char *host = arena_strdup(p->arena, s->host);

	lower(host);
	*d = *s;
	d->host = host;
	d->username = dup_or_null(p->arena, s->username);
	d->secret = arena_strdup(p->arena, s->secret);
	d->placeholder = dup_or_null(p->arena, s->placeholder);
	d->header = dup_or_null(p->arena, s->header);
	d->source.path = dup_or_null(p->arena, s->source.path);
	if (s->aws) {
		struct proxy_aws *aws = arena_alloc(p->arena, sizeof(*aws));

		aws->region = arena_strdup(p->arena, s->aws->region);
		aws->service = arena_strdup(p->arena, s->aws->service);
		aws->key_id = arena_strdup(p->arena, s->aws->key_id);
		aws->key_id_placeholder = arena_strdup(p->arena, s->aws->key_id_placeholder);
		aws->token = dup_or_null(p->arena, s->aws->token);
		aws->token_placeholder = dup_or_null(p->arena, s->aws->token_placeholder);
		d->aws = aws;
	}
	return 0;
}

/* What the scrubber replaces row I's secrets with: its placeholders. */
static int
scrub_cred(struct proxy *p, const struct proxy_cred *rows, size_t i)
{
	const struct proxy_cred *c = &rows[i];

	/* Rows of a refreshed entry share one secret: counted once, so that
	 * retiring it later takes it out. */
	if (c->refresh)
		for (size_t k = 0; k < i; k++)
			if (rows[k].refresh && rows[k].entry == c->entry)
				return 0;
	/* Swap-on-access has no placeholder: a marker the proxy refuses if sent back. */
	if (scrub_set_add_secret(&p->scrub, c->secret,
				 c->placeholder ? c->placeholder : SWAP_MARKER) < 0)
		return -1;
	if (c->aws &&
	    scrub_set_add_secret(&p->scrub, c->aws->key_id, c->aws->key_id_placeholder) < 0)
		return -1;
	if (c->aws && c->aws->token &&
	    scrub_set_add_secret(&p->scrub, c->aws->token,
				 c->aws->token_placeholder ? c->aws->token_placeholder
							   : SWAP_MARKER) < 0)
		return -1;
	return 0;
}

/* Every row of RF's entry gets SECRET, and is down or up. */
static void
rows_set(struct refresher *rf, const char *secret, bool down)
{
	struct proxy *p = rf->p;

	for (size_t i = 0; i < p->n_creds; i++)
		if (p->creds[i].refresh && p->creds[i].entry == rf->entry) {
			p->creds[i].secret = secret;
			p->cred_down[i] = down;
		}
}

/* The current secret becomes an earlier one: still scrubbed, the oldest beyond the few kept not. */
static void
retire(struct refresher *rf)
{
	if (!rf->current)
		return;
	if (rf->n_retired == REFRESH_RETIRED_KEEP) {
		char *oldest = rf->retired[0];

		scrub_set_remove_secret(&rf->p->scrub, oldest);
		explicit_bzero(oldest, strlen(oldest));
		free(oldest);
		memmove(rf->retired, rf->retired + 1, (REFRESH_RETIRED_KEEP - 1) * sizeof(char *));
		rf->n_retired--;
		plog(rf->p,
		     "credential for %s:%u: the oldest of its earlier secrets is no longer "
		     "scrubbed from responses (%d are)",
		     rf->p->creds[rf->first].host, rf->p->creds[rf->first].port,
		     REFRESH_RETIRED_KEEP);
	}
	rf->retired[rf->n_retired++] = rf->current;
	rf->current = NULL;
}

static void
refresh_failed(struct refresher *rf, const char *why)
{
	const struct proxy_cred *c = &rf->p->creds[rf->first];

	/* Fail closed: the stale secret is never sent again (it stays scrubbed). */
	retire(rf);
	rows_set(rf, "", true);
	plog(rf->p,
	     "credential for %s:%u: reading it again failed: %s; requests that need it are "
	     "refused (503) until a read succeeds",
	     c->host, c->port, why);
}

static void
refreshed(void *arg, const char *secret, const char *why)
{
	struct refresher *rf = arg;
	struct proxy *p = rf->p;
	const struct proxy_cred *c = &p->creds[rf->first];
	bool was_down = p->cred_down[rf->first];
	char *fresh;

	if (!secret) {
		refresh_failed(rf, why);
		return;
	}
	if (rf->current && !strcmp(rf->current, secret))
		return;
	fresh = strdup(secret);
	if (!fresh) {
		refresh_failed(rf, "out of memory");
		return;
	}
	/* The scrubber learns it first: no response may carry it unscrubbed. */
	while (scrub_set_add_secret(&p->scrub, fresh,
				    c->placeholder ? c->placeholder : SWAP_MARKER) < 0) {
		if (!rf->n_retired) {
			explicit_bzero(fresh, strlen(fresh));
			free(fresh);
			refresh_failed(rf, "the scrubber cannot hold another secret");
			return;
		}
		scrub_set_remove_secret(&p->scrub, rf->retired[0]);
		explicit_bzero(rf->retired[0], strlen(rf->retired[0]));
		free(rf->retired[0]);
		memmove(rf->retired, rf->retired + 1, --rf->n_retired * sizeof(char *));
	}
	retire(rf);
	rf->current = fresh;
	rows_set(rf, fresh, false);
	plog(p, "credential for %s:%u: read again from %s, %s", c->host, c->port, c->source.path,
	     was_down ? "available again" : "a new secret from now on");
}

/* Is row I the first of its refreshed entry? */
static bool
first_of_entry(const struct proxy *p, size_t i)
{
	for (size_t k = 0; k < i; k++)
		if (p->creds[k].refresh && p->creds[k].entry == p->creds[i].entry)
			return false;
	return true;
}

/* One refresher per entry with an interval; its rows point to the secret it holds. */
static int
refresh_setup(struct proxy *p)
{
	size_t n = 0;

	for (size_t i = 0; i < p->n_creds; i++)
		n += p->creds[i].refresh && first_of_entry(p, i);
	if (!n)
		return 0;
	p->refreshers = calloc(n, sizeof(*p->refreshers));
	if (!p->refreshers)
		return -1;
	for (size_t i = 0; i < p->n_creds; i++) {
		struct proxy_cred *c = &p->creds[i];
		struct refresher *rf;

		if (!c->refresh || !first_of_entry(p, i))
			continue;
		rf = &p->refreshers[p->n_refreshers++];
		rf->p = p;
		rf->entry = c->entry;
		rf->first = i;
		rf->current = strdup(c->secret);
		if (!rf->current)
			return -1;
		for (size_t k = i; k < p->n_creds; k++)
			if (p->creds[k].refresh && p->creds[k].entry == c->entry)
				explicit_bzero((char *)p->creds[k].secret,
					       strlen(p->creds[k].secret));
		rows_set(rf, rf->current, false);
		rf->r = refresh_new(p->base, &c->source, c->refresh, refreshed, rf);
		if (!rf->r)
			return -1;
	}
	return 0;
}

static void
refresh_teardown(struct proxy *p)
{
	for (size_t i = 0; i < p->n_refreshers; i++) {
		struct refresher *rf = &p->refreshers[i];

		refresh_free(rf->r);
		if (rf->current) {
			explicit_bzero(rf->current, strlen(rf->current));
			free(rf->current);
		}
		for (size_t k = 0; k < rf->n_retired; k++) {
			explicit_bzero(rf->retired[k], strlen(rf->retired[k]));
			free(rf->retired[k]);
		}
	}
	free(p->refreshers);
	p->refreshers = NULL;
	p->n_refreshers = 0;
}

/* The caps: memory, and connections within it and within the descriptors. */
static void
proxy_set_caps(struct proxy *p, const struct proxy_config *cf)
{
	struct rlimit nofile;

	/*
	 * Bodies flow through short-lived 16-64 KiB buffers (evbuffer chains,
	 * OpenSSL records released between uses so idle tunnels stay small).
	 * glibc would hand the top of the heap back to the kernel after every
	 * few of them and fault it in again: keep up to 64 MiB instead.
	 */
	mem_limit = cf->memory_limit ? cf->memory_limit : PROXY_MEMORY_DEFAULT;
	if (mem_limit < PROXY_MEMORY_MIN)
		mem_limit = PROXY_MEMORY_MIN;
	p->max_conns = mem_limit / PROXY_CONN_BUDGET;
	if (p->max_conns > PROXY_MAX_CONNS)
		p->max_conns = PROXY_MAX_CONNS;
	/* Each connection may hold two descriptors (the agent's, the upstream's). */
	if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur != RLIM_INFINITY &&
	    (nofile.rlim_cur < 128 || p->max_conns > (nofile.rlim_cur - 64) / 2))
		p->max_conns = nofile.rlim_cur < 128 ? 32 : (size_t)(nofile.rlim_cur - 64) / 2;
	mallopt(M_TRIM_THRESHOLD, (int)(mem_limit / 4 < (64u << 20) ? mem_limit / 4 : 64u << 20));
	/* A fixed threshold: glibc would raise it after each large free, and
	 * heads pulled up whole would then fragment the heap. */
	mallopt(M_MMAP_THRESHOLD, 128 << 10);
}

/* The rules and credentials of CF, copied into P, and the matcher over them. */
static int
proxy_copy_config(struct proxy *p, const struct proxy_config *cf, char *err, size_t errlen)
{
	p->rules = arena_alloc(p->arena, (cf->n_rules ? cf->n_rules : 1) * sizeof(*p->rules));
	for (size_t i = 0; i < cf->n_rules; i++) {
		p->rules[i] = cf->rules[i];
		p->rules[i].host = arena_strdup(p->arena, cf->rules[i].host);
		p->rules[i].path = arena_strdup(p->arena, cf->rules[i].path);
	}
	p->n_rules = cf->n_rules;
	p->creds = arena_alloc(p->arena, (cf->n_creds ? cf->n_creds : 1) * sizeof(*p->creds));
	p->cred_down = arena_alloc(p->arena, (cf->n_creds ? cf->n_creds : 1) * sizeof(bool));
	for (size_t i = 0; i < cf->n_creds; i++) {
		const struct proxy_cred *s = &cf->creds[i];
		struct proxy_cred *d = &p->creds[i];

		if (copy_cred(p, s, d) < 0 || scrub_cred(p, cf->creds, i) < 0) {
			snprintf(err, errlen,
				 "credential for %s: too many secrets, or a placeholder too long",
				 s->host);
			return -1;
		}
	}
	p->n_creds = cf->n_creds;
	if (refresh_setup(p) < 0) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	p->matcher = egress_matcher_new(p->rules, p->n_rules);
	p->stage = evbuffer_new();
	p->scrubbed = evbuffer_new();
	if (!p->matcher || (!cf->listen_addr && cf->socket_path && !p->socket_path) || !p->stage ||
	    !p->scrubbed) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

/*
 * TLS both ways: the upstream trust store, and the proxy's own CA for
 * the agent's tunnels, whose bundle (with the store) goes to CF's path.
 */
static int
proxy_tls_setup(struct proxy *p, const struct proxy_config *cf, char *err, size_t errlen)
{
	char *cas = NULL;
	const char *ca_pem;
	size_t cas_len = 0, ca_len;

	/* The trust store for upstream TLS: read now, once, from the host's
	 * file; the bundle the sandbox sees is a copy the agent can change. */
	cas = read_file(cf->system_ca_file ? cf->system_ca_file : DEFAULT_SYSTEM_CAS, &cas_len, err,
			errlen);
	if (!cas)
		goto fail;
	p->client_ctx = tls_client_ctx_new(cas, cas_len, err, errlen);
	if (!p->client_ctx) {
		/* Name the file: a --egress-ca given is not "the system" store. */
		char why[256];

		snprintf(why, sizeof(why), "%s", err);
		snprintf(err, errlen, "%s %s: %s",
			 cf->system_ca_file ? "--egress-ca" : "the system CA file",
			 cf->system_ca_file ? cf->system_ca_file : DEFAULT_SYSTEM_CAS,
			 !strcmp(why, "the system CA file holds no certificate")
			     ? "holds no PEM certificate"
			     : why);
		goto fail;
	}
	if (cf->ca_cert_file || cf->ca_key_file)
		p->ca = tls_ca_load(cf->ca_cert_file, cf->ca_key_file, time(NULL), err, errlen);
	else
		p->ca = tls_ca_new(time(NULL), err, errlen);
	if (!p->ca)
		goto fail;
	p->server_ctx = tls_server_ctx_new(err, errlen);
	if (!p->server_ctx)
		goto fail;
	ca_pem = tls_ca_pem(p->ca, &ca_len);
	if (cf->ca_bundle_path && write_trust(cf, cas, cas_len, ca_pem, ca_len, err, errlen) < 0)
		goto fail;
	free(cas);
	return 0;
fail:
	free(cas);
	return -1;
}

/* The resolver: the nameservers of resolv.conf and the hosts file, nothing more. */
static int
proxy_dns_setup(struct proxy *p, const struct proxy_config *cf, char *err, size_t errlen)
{
	int rc;

	/* No search domains: a name must not become a different, unchecked one. */
	p->dns = evdns_base_new(p->base, 0);
	if (!p->dns) {
		snprintf(err, errlen, "cannot start the resolver");
		return -1;
	}
	rc = evdns_base_resolv_conf_parse(p->dns, DNS_OPTION_NAMESERVERS | DNS_OPTION_MISC,
					  cf->resolv_conf ? cf->resolv_conf : "/etc/resolv.conf");
	if (rc != 0 && rc != 6 && !(rc == 1 && !cf->resolv_conf)) {
		snprintf(err, errlen, "%s: cannot read the resolver configuration (error %d)",
			 cf->resolv_conf ? cf->resolv_conf : "/etc/resolv.conf", rc);
		return -1;
	}
	if (evdns_base_load_hosts(p->dns, cf->hosts_file ? cf->hosts_file : "/etc/hosts") != 0 &&
	    cf->hosts_file) {
		snprintf(err, errlen, "%s: cannot read the hosts file", cf->hosts_file);
		return -1;
	}
	return 0;
}

/*
 * A TCP socket listening at SA (SO_REUSEADDR, so a restart finds its port
 * free), its real port in P and its address, as text, in P->listening.
 */
static int
listen_tcp(struct proxy *p, const struct sockaddr *sa, socklen_t len, char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char host[INET6_ADDRSTRLEN] = "?";
	int fd, one = 1;

	fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, sa, len) < 0 || listen(fd, SOMAXCONN) < 0 ||
	    getsockname(fd, (struct sockaddr *)&ss, &sl) < 0) {
		snprintf(err, errlen, "cannot listen on TCP: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (ss.ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)&ss;

		inet_ntop(AF_INET6, &s6->sin6_addr, host, sizeof(host));
		p->port = ntohs(s6->sin6_port);
		snprintf(p->listening, sizeof(p->listening), "[%s]:%u", host, p->port);
	} else {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)&ss;

		inet_ntop(AF_INET, &s4->sin_addr, host, sizeof(host));
		p->port = ntohs(s4->sin_port);
		snprintf(p->listening, sizeof(p->listening), "%s:%u", host, p->port);
	}
	return fd;
}

/* The listener on CF's socket or TCP address, and the sweep that checks memory every second. */
static int
proxy_listen(struct proxy *p, const struct proxy_config *cf, char *err, size_t errlen)
{
	int fd;

	if (cf->listen_addr)
		fd = listen_tcp(p, cf->listen_addr, cf->listen_addr_len, err, errlen);
	else if (!cf->socket_path)
		fd = diag_fail(err, errlen, "neither a socket path nor a TCP address to listen on");
	else if ((fd = listen_unix(cf->socket_path, err, errlen)) >= 0)
		snprintf(p->listening, sizeof(p->listening), "%s", cf->socket_path);
	if (fd < 0)
		return -1;
	p->listener = evconnlistener_new(p->base, accept_cb, p,
					 LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, 0, fd);
	if (!p->listener) {
		close(fd);
		if (p->socket_path)
			unlink(p->socket_path);
		snprintf(err, errlen, "cannot listen on %s", p->listening);
		return -1;
	}
	evconnlistener_set_error_cb(p->listener, listener_error_cb);
	p->sweep = event_new(p->base, -1, EV_PERSIST, sweep_cb, p);
	if (!p->sweep || event_add(p->sweep, &(struct timeval){1, 0}) < 0) {
		snprintf(err, errlen, "cannot start the memory check");
		return -1;
	}
	return 0;
}

struct proxy *
proxy_new(struct event_base *base, const struct proxy_config *cf, char *err, size_t errlen)
{
	struct proxy *p = calloc(1, sizeof(*p));

	if (!p) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	proxy_set_caps(p, cf);
	p->base = base;
	p->arena = arena_new();
	p->allow_private = cf->allow_private;
	p->log = cf->log;
	p->log_arg = cf->log_arg;
	p->socket_path = cf->listen_addr || !cf->socket_path ? NULL : strdup(cf->socket_path);
	if (proxy_copy_config(p, cf, err, errlen) < 0 || proxy_tls_setup(p, cf, err, errlen) < 0 ||
	    proxy_dns_setup(p, cf, err, errlen) < 0 || proxy_listen(p, cf, err, errlen) < 0) {
		proxy_free(p);
		return NULL;
	}
	plog(p,
	     "listening on %s: %zu rules, %zu credential bindings, private destinations %s; "
	     "caps: %zu connections, %zu KiB of memory",
	     p->listening, p->n_rules, p->n_creds, p->allow_private ? "allowed" : "refused",
	     p->max_conns, mem_limit >> 10);
	return p;
}

/* The kernel's high-water mark of this process's resident memory, in KiB (0: unknown). */
static unsigned long
peak_rss_kib(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	unsigned long kib = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmHWM: %lu kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

void
proxy_free(struct proxy *p)
{
	if (!p)
		return;
	if (p->listener)
		plog(p,
		     "proxy: done: %lu connections (at most %lu open), %lu requests forwarded, "
		     "%lu tcp tunnels, %lu refused at the cap, %lu parked connections closed, "
		     "%lu closed by a deadline; memory peak %zu KiB of a %zu KiB cap; peak RSS "
		     "%lu KiB",
		     p->stats.connections, p->stats.peak_open, p->stats.requests,
		     p->stats.tcp_tunnels, p->stats.refused, p->stats.evicted, p->stats.timed_out,
		     mem_peak >> 10, mem_limit >> 10, peak_rss_kib());
	if (p->sweep)
		event_free(p->sweep);
	while (p->conns) {
		struct conn *c = p->conns;

		conn_kill(c);
		event_free(c->later);
		mem_release(c);
	}
	if (p->listener) {
		evconnlistener_free(p->listener);
		if (p->socket_path)
			unlink(p->socket_path);
	}
	if (p->dns)
		evdns_base_free(p->dns, 0);
	SSL_CTX_free(p->server_ctx);
	SSL_CTX_free(p->client_ctx);
	tls_ca_free(p->ca);
	egress_matcher_free(p->matcher);
	if (p->stage)
		evbuffer_free(p->stage);
	if (p->scrubbed)
		evbuffer_free(p->scrubbed);
	scrub_set_clear(&p->scrub);
	for (size_t i = 0; i < p->n_creds; i++) {
		explicit_bzero((char *)p->creds[i].secret, strlen(p->creds[i].secret));
		if (p->creds[i].aws) {
			explicit_bzero((char *)p->creds[i].aws->key_id,
				       strlen(p->creds[i].aws->key_id));
			if (p->creds[i].aws->token)
				explicit_bzero((char *)p->creds[i].aws->token,
					       strlen(p->creds[i].aws->token));
		}
	}
	/* After the rows: they point to what the refreshers hold. */
	refresh_teardown(p);
	if (p->arena)
		arena_free(p->arena);
	free(p->socket_path);
	free(p);
}

unsigned
proxy_port(const struct proxy *p)
{
	return p->port;
}

void
proxy_get_stats(const struct proxy *p, struct proxy_stats *out)
{
	*out = p->stats;
	out->memory = mem_used;
	out->memory_peak = mem_peak;
	out->memory_limit = mem_limit;
	out->max_conns = p->max_conns;
}
