/*
 * proxy_int.h - the egress proxy's insides, shared by its files (proxy.h
 * is its interface; proxy.c describes the event machine):
 *
 *   proxy.c           setup, teardown, counters, the log, the credentials' table
 *   proxy_conn.c      connections and caps: memory, lifetime, sockets, accept
 *   proxy_request.c   request heads and decisions: rules, destinations, credentials
 *   proxy_tunnel.c    CONNECT, TLS with the agent, transparent and tcp tunnels, upstream
 *   proxy_response.c  bodies, splice(2), responses, scrubbing, WebSocket
 */
#ifndef OMNIBOX_PROXY_INT_H
#define OMNIBOX_PROXY_INT_H

#include "runtime/egress/proxy.h"
#include "runtime/egress/handoff.h"
#include "runtime/egress/splice.h"

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
#include "runtime/egress/pemcerts.h"
#include "runtime/egress/refresh.h"
#include "runtime/egress/scrub.h"
#include "runtime/egress/sigv4.h"
#include "runtime/egress/tls.h"
#include "runtime/egress/tlsleg.h"
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
	struct splice_pipe p;	/* splice.h */
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
	int handoff_fd;		  /* connections the relay hands over (handoff.h), or -1 */
	struct event *handoff_ev; /* ... readable */
	char handoff_path[108];
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
	bool stopped;	     /* proxy_stop() done */
	bool no_splice;	     /* splice(2) failed once: copy from then on */
	char *socket_path;   /* NULL: listening on TCP */
	unsigned port;	     /* the TCP port listened on */
	char listening[300]; /* where, for the log */
	/* Made at their first use or once the proxy listens (proxy_warm()),
	 * not before its ready answer: proxy_server_ctx(), proxy_client_ctx(). */
	SSL_CTX *server_ctx, *client_ctx;
	char *cas; /* the upstream trust store's PEM text, until client_ctx has it */
	size_t cas_len;
	struct pem_certs *cas_split; /* its split, held for client_ctx */
	struct event *warm;
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
	 * reads it) with, for TLS, a leg's filter on top (tlsleg.h); cli and up
	 * are what the proxy reads and writes: the filter, or the socket's. */
	struct bufferevent *cli, *up, *cli_sock, *up_sock;
	struct tlsleg *cli_leg, *up_leg; /* the filters' legs; gone with them */
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

/* What the proxy counts it holds (proxy_conn.c), and its limit. */
extern _Atomic size_t mem_used, mem_peak;
extern size_t mem_limit;

/* proxy.c */
void plog(struct proxy *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *esc(char *buf, size_t cap, const char *s, size_t len);
const char *rule_desc(struct proxy *p, ssize_t i, char *buf, size_t cap);
/* P's TLS contexts, made at the first call (a failure logged; NULL). */
SSL_CTX *proxy_server_ctx(struct proxy *p);
SSL_CTX *proxy_client_ctx(struct proxy *p);

/* proxy_conn.c */
void *mem_alloc(size_t n);
void *mem_zalloc(size_t n);
void mem_release(void *q);
void free_request(struct conn *c);
void up_close(struct conn *c);
void conn_kill(struct conn *c);
void conn_finish(struct conn *c);
void conn_release_buffers(struct conn *c);
void up_rd_cb(evutil_socket_t fd, short what, void *arg);
void sock_flush(struct bufferevent *sock);
void conn_update_io(struct conn *c);
void tune_sock(struct bufferevent *sock);
void tune_filter(struct bufferevent *tls, struct bufferevent *sock);
void conn_park(struct conn *c, int seconds);
void conn_unpark(struct conn *c, int deadline);
void sweep_cb(evutil_socket_t fd, short what, void *arg);
void head_account(struct conn *c, size_t len);
void handoff_cb(evutil_socket_t fd, short what, void *arg);
void accept_cb(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int len,
	       void *arg);

/* proxy_request.c */
void conn_reply(struct conn *c, unsigned status, const char *kind, const char *body, bool keep);
void note_denial(struct proxy *p, const char *request, const char *rule);
void dest_refuse(struct conn *c, const char *what, const char *why);
const char *dest_what(struct conn *c, char *buf, size_t cap);
void dns_finish(struct conn *c);
void dest_resolve(struct conn *c, enum after_dns after);
void conn_read_head(struct conn *c);
bool field_dropped(const struct http_head *h, const char *buf, size_t i, bool keep_upgrade);
void lower(char *s);
void bad_request(struct conn *c, const char *what);

/* proxy_tunnel.c */
void refuse_not_tls(struct conn *c, const char *reason);
void cli_event_cb(struct bufferevent *bev, short what, void *arg);
void cli_write_cb(struct bufferevent *bev, void *arg);
void cli_read_cb(struct bufferevent *bev, void *arg);
void handle_connect(struct conn *c, const char *buf);
void sniff(struct conn *c);
void dest_ready(struct conn *c);
void upstream_failed(struct conn *c, const char *kind, const char *why);
void up_open(struct conn *c);

/* proxy_response.c */
void ws_pass(struct conn *c, bool from_agent);
const char *head_field(const struct http_head *h, const char *buf, const char *name, size_t *len);
bool websocket_request_ok(struct conn *c, const char *buf);
void body_end_data(struct body *b, struct evbuffer *out);
void pump_request(struct conn *c);
void splice_end(struct conn *c);
void pump_response(struct conn *c);
void request_done(struct conn *c);
void read_response(struct conn *c);

#endif
