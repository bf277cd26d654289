/*
 * egress.h - the egress rule language: parsing and matching.
 *
 * A rule is "METHODS HOST[:PORT][/PATH-GLOB]" (spec/egress.md), an HTTP rule,
 * or "tcp HOST:PORT", a TCP rule: an uninspected stream through a CONNECT
 * tunnel to that host and port, never an HTTP request.  egress_parse_rule()
 * turns one rule into a struct egress_rule; egress_matcher_new() compiles a
 * set of rules into a structure that answers "does any rule allow this
 * request, and which one?" without scanning every rule.
 *
 * Nothing here touches the filesystem or the network.
 */
#ifndef OMNIBOX_EGRESS_H
#define OMNIBOX_EGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "../compiler/base/arena.h"
#include "../compiler/base/loc.h"

/* HTTP methods a rule can name, as bits of egress_rule.methods. */
enum {
	EGRESS_GET = 1u << 0,
	EGRESS_HEAD = 1u << 1,
	EGRESS_POST = 1u << 2,
	EGRESS_PUT = 1u << 3,
	EGRESS_DELETE = 1u << 4,
	EGRESS_PATCH = 1u << 5,
	EGRESS_OPTIONS = 1u << 6,
	EGRESS_TRACE = 1u << 7,
	EGRESS_ANY = (1u << 8) - 1, /* "*" */
};

struct egress_rule {
	bool tcp;	  /* "tcp HOST:PORT": methods 0, path "", port given */
	unsigned methods; /* EGRESS_* bits; EGRESS_ANY when the rule says "*" */
	const char *host; /* lower-cased, without a leading "*." */
	bool wildcard;	  /* "*.host": the host itself and every subdomain */
	unsigned port;	  /* 1..65535; 0: none written, the request kind's default */
	const char *path; /* glob starting with a slash; all paths when the rule has none */
	bool path_given;  /* the rule text named a path */
	struct loc loc;	  /* where the rule was written; the matcher ignores it */
};

struct egress_error {
	size_t offset;	   /* byte offset of the offending character in the text */
	size_t length;	   /* bytes to underline, at least 1 */
	char message[200]; /* e.g. "unknown HTTP method 'FETCH'" */
};

/*
 * Parse the LEN bytes at TEXT (not NUL-terminated; NUL bytes are an error,
 * never a terminator) as one rule.  On success fills *RULE, with strings
 * allocated from A, and returns 0.  On failure fills *ERR and returns -1.
 */
int egress_parse_rule(struct arena *a, const char *text, size_t len, struct egress_rule *rule,
		      struct egress_error *err);

/*
 * Write rule R as a rule text into BUF (CAP bytes, NUL-terminated, cut
 * when too small), as "GET,POST api.github.com/v1" or "tcp git.example.com:22".
 * FULL_PATH writes the path an HTTP rule without one means (all paths).
 */
void egress_rule_format(const struct egress_rule *r, bool full_path, char *buf, size_t cap);

/* The method bit for NAME (LEN bytes, any case), or 0 when it is not a method. */
unsigned egress_method_bit(const char *name, size_t len);

/* The canonical upper-case name of one method bit. */
const char *egress_method_name(unsigned bit);

struct egress_matcher;

/*
 * Compile N rules.  The matcher copies what it needs; RULES may be freed
 * afterwards.  Returns NULL only when out of memory.
 */
struct egress_matcher *egress_matcher_new(const struct egress_rule *rules, size_t n);
void egress_matcher_free(struct egress_matcher *m);

/* The port a rule without one means: 443 for a tunnel, 80 for plain HTTP. */
#define EGRESS_PORT_TLS 443
#define EGRESS_PORT_PLAIN 80

/*
 * Decide a request.  METHOD is the request method (any case), HOST the
 * request host without port, PORT the port it goes to and DEFAULT_PORT the
 * one a rule without a port means for this kind of request (EGRESS_PORT_TLS
 * in a tunnel, EGRESS_PORT_PLAIN for plain HTTP), TARGET the request
 * target's path with its optional "?query" (a fragment is dropped): the
 * globs see the path alone, and a query comes along with its path.
 * Returns the index of the lowest-numbered rule that allows the request,
 * or -1 when it is denied (no rule matches, or the host or path is
 * malformed or ambiguous).
 */
ssize_t egress_match(const struct egress_matcher *m, const char *method, size_t method_len,
		     const char *host, size_t host_len, unsigned port, unsigned default_port,
		     const char *target, size_t target_len);

/*
 * Would any HTTP rule accept HOST on PORT (DEFAULT_PORT as for
 * egress_match()), whatever the method and path?  Used to refuse a CONNECT
 * before any TLS.  TCP rules are not HTTP rules: see egress_match_tcp().
 * Returns the lowest such rule index, or -1.
 */
ssize_t egress_match_host(const struct egress_matcher *m, const char *host, size_t host_len,
			  unsigned port, unsigned default_port);

/*
 * Does a TCP rule ("tcp HOST:PORT") allow an uninspected stream to HOST on
 * PORT?  HTTP rules never do, and egress_match() and egress_match_host()
 * never see TCP rules.  Returns the lowest such rule index, or -1.
 */
ssize_t egress_match_tcp(const struct egress_matcher *m, const char *host, size_t host_len,
			 unsigned port);

/* What the proxy does with a CONNECT, decided by egress_decide_connect(). */
enum egress_connect {
	EGRESS_CONNECT_DENY,	/* no rule takes the host and port: 403 before any TLS */
	EGRESS_CONNECT_INSPECT, /* an HTTP rule does: TLS interception, each request checked */
	EGRESS_CONNECT_TUNNEL,	/* only a tcp rule does: a plain, uninspected tunnel */
};

/*
 * Decide a CONNECT to HOST:PORT.  *RULE is the rule that decides it (the
 * lowest HTTP rule taking the host and port for INSPECT, the lowest tcp
 * rule for TUNNEL), -1 for DENY.  HTTP rules win over tcp rules.
 */
enum egress_connect egress_decide_connect(const struct egress_matcher *m, const char *host,
					  size_t host_len, unsigned port, ssize_t *rule);

/*
 * Decide a connection the sandbox's relay took for a client that ignores
 * the proxy (transparent egress) to HOST:PORT: as a CONNECT, except that
 * an HTTP rule without a port takes port 80 too, since the stream may be
 * plain HTTP; each request in it is then checked with its own kind's
 * default port, so TLS to port 80 or plain HTTP to 443 is still refused.
 */
enum egress_connect egress_decide_transparent(const struct egress_matcher *m, const char *host,
					      size_t host_len, unsigned port, ssize_t *rule);

/* HOST consists only of [A-Za-z0-9.-], is non-empty and has no trailing dot. */
bool egress_host_is_safe(const char *host, size_t len);

/*
 * Normalise a request target for matching: drop the fragment, remove dot
 * segments from the path (the query is kept verbatim).  Writes at most CAP
 * bytes (NUL-terminated) to OUT and returns the length, or -1 when the
 * target must be denied: not starting with '/', climbing above '/',
 * encoded separators or dots (%2f %5c %2e, any case), control bytes, or
 * too long for OUT.
 */
ssize_t egress_normalize_target(const char *target, size_t len, char *out, size_t cap);

/*
 * Is every request path glob B allows allowed by glob A (both as in a rule)?
 * Decided exactly; false also when the globs are too large to decide.
 */
bool egress_glob_covers(const char *a, const char *b);

/* A request one rule allows and a set of rules does not. */
struct egress_witness {
	bool tcp;	 /* a TCP stream to HOST:PORT (METHOD, TLS and PATH unused) */
	unsigned method; /* one EGRESS_* bit */
	bool tls;
	unsigned port;
	char host[300];
	char path[1024];
};

/*
 * Does the set A (N rules) allow every request rule B allows?  Decided
 * exactly, for each of B's methods, each kind of request (TLS and plain)
 * and each host B names (for "*.h": h and a fresh name below it), on the
 * union of the path globs of the rules of A that apply there.  A TCP rule
 * B is covered by TCP rules of A only, an HTTP rule B by HTTP rules only.  When not,
 * *W (if not NULL) is a request B allows and A does not.  For --diff.
 */
bool egress_rules_cover(const struct egress_rule *a, size_t n, const struct egress_rule *b,
			struct egress_witness *w);

#endif
