/*
 * proxy.h - the default-deny HTTP(S) egress proxy (spec/egress.md).
 *
 * The proxy runs in omnibox-proxy, outside the sandbox, on the caller's
 * libevent loop: one thread, no thread per connection.  For a launch,
 * omnibox-run starts that process (session.h) and it listens on a Unix
 * socket in the scratch dir; the relay inside the sandbox (relay.h) is the
 * agent's only route to it.  On its own it listens on TCP.
 *
 *   - Plain HTTP: absolute-form requests ("GET http://host/path HTTP/1.1"),
 *     each checked against the rules (method, host, path) and forwarded.
 *   - HTTPS: "CONNECT host:port" is checked against the rules' hosts, the
 *     destination is resolved and checked, then the tunnel is intercepted
 *     with a leaf certificate from the per-launch CA and every request in
 *     it is checked and forwarded over verified TLS.
 *   - Destinations: one asynchronous lookup (evdns), every address checked
 *     against the deny table (destination.h), connections only to checked
 *     addresses, fail closed.
 *   - Credentials: placeholders swapped for real secrets on their bound
 *     host over TLS, refused everywhere else (credentials.h); AWS requests
 *     signed again with the real keys (sigv4.h); secrets read again every
 *     refresh interval (refresh.h), failing closed when a read fails.
 *
 * Every decision is logged through config.log, one line each, with the
 * rule that matched; secrets never reach the log.
 */
#ifndef OMNIBOX_PROXY_H
#define OMNIBOX_PROXY_H

#include <stdbool.h>
#include <stddef.h>

#include <sys/socket.h>

#include <event2/event.h>

#include "compiler/policy.h"

/* Where the proxy reads a secret again (refresh_interval_seconds). */
struct proxy_source {
	enum cred_source_kind kind; /* CRED_SOURCE_FILE or CRED_SOURCE_UNIX_SOCKET */
	const char *path;	    /* "~" expanded */
};

/*
 * The AWS keys of an aws_sigv4 binding: requests the agent signed with the
 * placeholder key id are signed again with these (sigv4.h).  SECRET in
 * struct proxy_cred is the secret access key, PLACEHOLDER its placeholder.
 */
struct proxy_aws {
	const char *region, *service;
	const char *key_id, *key_id_placeholder;
	const char *token;	       /* the session token, or NULL: none */
	const char *token_placeholder; /* AWS_SESSION_TOKEN in the sandbox, or NULL */
};

/* One secret bound to one host. */
struct proxy_cred {
	const char *host;	 /* exact, lower-case */
	unsigned port;		 /* the one port the secret goes to */
	enum cred_scheme scheme; /* how Authorization is written upstream */
	const char *username;	 /* basic: the user name ("x-access-token" when NULL) */
	const char *secret;	 /* the real secret (never logged) */
	const char *placeholder; /* what the sandbox holds, or NULL (swap-on-access) */
	const char *header;	 /* CRED_SCHEME_HEADER: the header (lower case) with the secret */
	/* Rows of one credential_proxy entry share ENTRY: a refresh changes them together. */
	unsigned entry;
	unsigned refresh;	     /* seconds between reads of SOURCE; 0: read once, at launch */
	struct proxy_source source;  /* when REFRESH */
	const struct proxy_aws *aws; /* CRED_SCHEME_SIGV4 */
};

struct proxy_config {
	const char *socket_path;    /* listen here (created; an existing socket is replaced) */
	const char *ca_bundle_path; /* written, with its JKS and hashed forms beside it (truststore.h) */
	const char *system_ca_file; /* NULL: /etc/ssl/certs/ca-certificates.crt */
	const struct egress_rule *rules;
	size_t n_rules;
	bool allow_private; /* egress_allow_private_destinations */
	const struct proxy_cred *creds;
	size_t n_creds;
	const char *hosts_file;			  /* the resolver's hosts file; NULL: /etc/hosts */
	const char *resolv_conf;		  /* NULL: /etc/resolv.conf */
	void (*log)(void *arg, const char *line); /* one line per decision; NULL: none */
	void *log_arg;
	/* The proxy's own memory, in bytes: 0 means PROXY_MEMORY_DEFAULT; at
	 * least PROXY_MEMORY_MIN is used.  The connection cap follows from it. */
	size_t memory_limit;
	/* Instead of SOCKET_PATH: listen on TCP at this address (port 0: any
	 * free one, see proxy_port()), as omnibox-proxy does. */
	const struct sockaddr *listen_addr;
	socklen_t listen_addr_len;
	/* A fixed interception CA, read from these PEM files (both or neither),
	 * instead of one made for the session: see tls_ca_load(). */
	const char *ca_cert_file, *ca_key_file;
};

/*
 * The proxy is bounded, whatever the agent does (docs/egress.md):
 *
 *   - at most memory_limit / PROXY_CONN_BUDGET connections (no more than
 *     PROXY_MAX_CONNS, nor half the descriptors RLIMIT_NOFILE allows) are
 *     open; a new one closes the longest-parked connection (one waiting for
 *     a head, a handshake or its next request), or is answered 503 when none
 *     is parked;
 *   - a head must be complete PROXY_HEAD_TIMEOUT seconds after its first byte
 *     (a fresh connection: after it opened), a TLS handshake within
 *     PROXY_HANDSHAKE_TIMEOUT; a kept-alive connection (or a tunnel whose
 *     handshake is done) is closed after PROXY_KEEPALIVE_TIMEOUT idle; a request body must move
 *     PROXY_BODY_MIN_BYTES in each PROXY_BODY_WINDOW seconds.  Deadlines
 *     are absolute: bytes trickled in do not move them;
 *   - what libevent, OpenSSL and the proxy allocate is counted (after
 *     proxy_memory_init()), and kept well under the limit, which is meant
 *     for the whole process: past 3/8 of it every connection buffers less,
 *     past 1/2 parked connections are closed (down to 3/8), past 5/8 a
 *     connection reads only once what it holds has drained.
 */
#define PROXY_MEMORY_DEFAULT (256u << 20)
#define PROXY_MEMORY_MIN (32u << 20)
#define PROXY_CONN_BUDGET (8u << 10)
#define PROXY_MAX_CONNS 16384
#define PROXY_HEAD_TIMEOUT 15
#define PROXY_HANDSHAKE_TIMEOUT 15
#define PROXY_KEEPALIVE_TIMEOUT 60
#define PROXY_BODY_WINDOW 30
#define PROXY_BODY_MIN_BYTES 4096

/*
 * Count the memory libevent and OpenSSL allocate, from now on.  Call it
 * first thing in main(), before anything uses libevent or OpenSSL (both
 * would otherwise free through the counter what they did not allocate
 * through it).  Without it, only the proxy's own allocations are counted.
 */
void proxy_memory_init(void);

struct proxy;

/*
 * Start the proxy on BASE.  Everything C points to is copied (secrets
 * included), so C may be freed afterwards.  When this returns, the socket
 * is listening (connections queue until the loop runs) and the CA bundle
 * is written.  Returns NULL with a message in ERR when anything cannot be
 * set up; the caller must not start the agent then.
 *
 * The caller must ignore SIGPIPE (libevent writes with writev()).  Every
 * descriptor the proxy opens is close-on-exec.  For the process as a whole
 * it raises glibc's M_TRIM_THRESHOLD to 64 MiB (bodies flow through
 * short-lived buffers that glibc would otherwise return to the kernel and
 * fault back in all the time).
 */
struct proxy *proxy_new(struct event_base *base, const struct proxy_config *c, char *err,
			size_t errlen);

/*
 * Start reading and splitting the system's CA file on a thread of its own
 * (on another CPU, where there is one), for proxy_new() to take instead of
 * reading it itself: what omnibox-run's proxy does before the configuration
 * comes, while OpenSSL starts.  proxy_prefetch_drop() waits for that thread
 * and lets go of what it read, unless proxy_new() took it.  Until then the
 * process's allocations may come from two threads (proxy_conn.c counts them
 * atomically).
 */
void proxy_prefetch_cas(void);
void proxy_prefetch_drop(void);

/* The TCP port P listens on (proxy_config.listen_addr), or 0 on a Unix socket. */
unsigned proxy_port(const struct proxy *p);

/*
 * Stop listening, remove the socket, wipe the secrets, log the last line:
 * the end of P as its clients and its log see it, its memory still held.
 * A process about to exit needs nothing more (the kernel takes the rest
 * back faster than freeing it piece by piece).
 */
void proxy_stop(struct proxy *p);

/* proxy_stop() if not done, then close every connection and free P. */
void proxy_free(struct proxy *p);

/* Counters, for tests and benchmarks. */
struct proxy_stats {
	unsigned long connections; /* accepted */
	unsigned long open;	   /* currently open client connections */
	unsigned long requests;	   /* forwarded upstream */
	unsigned long tcp_tunnels; /* plain tunnels of tcp rules opened */
	unsigned long denied;	   /* answered 4xx/5xx by the proxy */
	unsigned long dns_lookups; /* asynchronous lookups started */
	unsigned long refused;	   /* connections answered 503: at the cap, none parked */
	unsigned long evicted;	   /* parked connections closed to make room */
	unsigned long timed_out;   /* closed by a head, handshake or body deadline */
	unsigned long peak_open;
	size_t memory, memory_peak, memory_limit; /* bytes counted */
	size_t max_conns;
};

void proxy_get_stats(const struct proxy *p, struct proxy_stats *out);

/* Distinct refusals for lack of a rule, kept for the summary at exit. */
#define PROXY_DENIALS_MAX 32
struct proxy_denial {
	char request[512]; /* the first request refused, "GET https://host/path" */
	char rule[512];	   /* a rule that would allow it */
	unsigned long count;
};

/* The refusals so far (in first-seen order) and how many more went uncounted. */
size_t proxy_denials(const struct proxy *p, const struct proxy_denial **out,
		     unsigned long *others);

/*
 * How many requests were refused for their destination alone (a private,
 * loopback, link-local, metadata or other special-purpose address, which
 * egress_allow_private_destinations: true would let through), and in
 * *FIRST the first of them as the log has it ("CONNECT host:443: host
 * resolves to 127.0.0.1, in 127.0.0.0/8 (loopback)", escaped), or NULL
 * when none was.  The text lives as long as P.
 */
unsigned long proxy_private_refusals(const struct proxy *p, const char **first);

#endif
