/*
 * broker.h - git_ssh: repository-scoped Git over SSH for a sandbox with no
 * network (docs/linux.md, "git over SSH").
 *
 * Inside, git's ssh is the helper of client.h, which holds no key and has
 * no route out.  The broker runs in a process of omnibox-run's, outside
 * the sandbox, on a Unix socket in the scratch dir.  For each connection
 * it checks the per-launch token (constant time), parses git's ssh
 * command line strictly (gitssh_parse_argv()), finds the git_ssh entry
 * that binds its user, host, port, repository and operation
 * (gitssh_match()), resolves the host once and keeps only addresses the
 * egress deny table (runtime/egress/destination.h) and the entry allow
 * (gitssh_address_refused()), and runs the system ssh against the pinned
 * address: no configuration file, batch mode, the host key checked
 * strictly against the entry's known-hosts file under the policy's host
 * name, the entry's identity and nothing else (no agent, no default keys),
 * no forwarding, multiplexing, proxy or local command (gitssh_ssh_argv()).
 * The identity and known-hosts files are opened once, when the broker
 * starts, by the canonical paths the resolver checked, and ssh reads them
 * through the session's descriptors, /proc/PID/fd/N (ssh closes every
 * descriptor it inherits above 2, so /dev/fd/N would not do): the file
 * checked is the file read.  The
 * broker relays between git's descriptors and ssh's pipes itself, so every
 * byte is counted and every session bounded (the caps below).  One log
 * line per session goes to --egress-log (or stderr).
 */
#ifndef OMNIBOX_GITSSH_BROKER_H
#define OMNIBOX_GITSSH_BROKER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "compiler/policy.h"
#include "compiler/decide/env.h"
#include "runtime/gitssh/client.h"

/* The socket's name in the scratch dir (the sandbox's OMNIBOX_GIT_SSH_SOCKET). */
#define GITSSH_SOCKET ENV_GIT_SSH_SOCKET

/*
 * The caps.  Sessions beyond GITSSH_MAX_SESSIONS at once are refused at
 * once.  The request must arrive whole within GITSSH_REQUEST_SECONDS of
 * the connection; ssh gets GITSSH_CONNECT_SECONDS to connect
 * (ConnectTimeout), and the remote's first byte must come within
 * GITSSH_HANDSHAKE_SECONDS of ssh's start (key exchange, authentication
 * and the first line of git's protocol: git servers always speak first).
 * A session with no byte either way for GITSSH_IDLE_SECONDS (servers send
 * keep-alives while they work), one older than GITSSH_SESSION_SECONDS, or
 * one that has moved more than GITSSH_SESSION_BYTES (both directions and
 * the remote's messages together) ends; ssh is killed and git gets 255.
 */
#define GITSSH_MAX_SESSIONS 8
#define GITSSH_REQUEST_SECONDS 10
#define GITSSH_CONNECT_SECONDS 15
#define GITSSH_HANDSHAKE_SECONDS 30
#define GITSSH_IDLE_SECONDS 300
#define GITSSH_SESSION_SECONDS 3600
#define GITSSH_SESSION_BYTES (4ULL << 30)

/* ---- the request: pure functions, no I/O (tests/unit/test_gitssh.c) ---- */

/* The request message of client.h, decoded; pointers into the buffer. */
struct gitssh_wire {
	const char *token;
	const char *git_protocol; /* "" when git set none */
	int argc;
	const char *argv[GITSSH_MAX_ARGS];
	size_t len; /* bytes the message took */
};

/*
 * Decode the LEN bytes at BUF.  1: a whole message (W filled); 0: a
 * prefix of one, read on; -1: never a message (the reason in *WHY).
 */
int gitssh_decode(const char *buf, size_t len, struct gitssh_wire *w, const char **why);

/* Do A and B hold the same token?  Constant time in their contents. */
bool gitssh_token_equal(const char *a, const char *b);

#define GITSSH_USER_MAX 64
#define GITSSH_HOST_MAX 253
#define GITSSH_PATH_MAX 1024

/* What git asked for. */
struct gitssh_request {
	char user[GITSSH_USER_MAX + 1]; /* "" when not given */
	char host[GITSSH_HOST_MAX + 1]; /* lower-cased */
	unsigned port;			/* 22 when not given */
	int family;			/* AF_UNSPEC, or AF_INET / AF_INET6 for -4 / -6 */
	unsigned op; /* GIT_OP_FETCH (upload-pack) or GIT_OP_PUSH (receive-pack) */
	char path[GITSSH_PATH_MAX + 1]; /* the repository as git sent it, unquoted */
};

/*
 * Parse the ARGC arguments git gives its ssh:
 *
 *   [-o SendEnv=GIT_PROTOCOL] [-4 | -6] [-p PORT] [USER@]HOST "SERVICE 'PATH'"
 *
 * (options in any order, each at most once), where SERVICE is
 * git-upload-pack or git-receive-pack and PATH is quoted as git quotes it
 * (' and ! as '\'' and '\!').  Anything else (another option, no command,
 * a word after it, another program, a second word or an unquoted one in
 * the command) is refused: -1 with the reason in ERR.
 */
int gitssh_parse_argv(int argc, const char *const *argv, struct gitssh_request *rq, char *err,
		      size_t errlen);

/*
 * The entry of B (N of them) that allows RQ: same host, port and user (no
 * user: the entry's), the same repository once one leading '/' is removed
 * and a final ".git" ignored on both sides, and RQ's operation among its
 * operations.  Returns its index, or -1 with the reason in ERR.
 */
int gitssh_match(const struct git_ssh *b, size_t n, const struct gitssh_request *rq, char *err,
		 size_t errlen);

/*
 * Why the address at SA may not be connected to for entry B, or NULL.
 * Without allowed_cidrs: whatever the egress deny table refuses (private,
 * loopback, link-local, metadata, ...) is refused.  With it: only an
 * address inside a listed block, and there the table is lifted (a private
 * block listed is an explicit choice) but for link-local and metadata,
 * 0.0.0.0/8, multicast and reserved space.  Loopback, listed or not, needs
 * allow_loopback.
 */
const char *gitssh_address_refused(const struct git_ssh *b, const struct sockaddr *sa);

/* Is VALUE a GIT_PROTOCOL worth passing on ("version=0", "=1" or "=2")? */
bool gitssh_git_protocol_ok(const char *value);

/* The argv of the system ssh at SSH for RQ, allowed by B, to the address IP. */
struct gitssh_argv {
	const char *v[112];
	size_t n;
	char store[2048]; /* the strings made for it */
	size_t used;
};

/*
 * IDENTITY and KNOWN_HOSTS: where ssh reads the entry's files (IDENTITY
 * NULL: the entry has none, and ssh offers no key at all); SEND_ENV: pass
 * GIT_PROTOCOL.  Returns 0, or -1 when it does not fit.
 */
int gitssh_ssh_argv(struct gitssh_argv *out, const char *ssh, const struct git_ssh *b,
		    const struct gitssh_request *rq, const char *ip, const char *identity,
		    const char *known_hosts, bool send_env);

/* ---- the broker ---------------------------------------------------------- */

struct gitssh_config {
	const struct git_ssh *bindings; /* canonical paths (launch_resolve()) */
	size_t n_bindings;
	const char *socket_path;
	const char *token;
	const char *ssh;	/* the system ssh, absolute */
	const char *hosts_file; /* names looked up here first (--egress-hosts), or NULL */
	const char *home;	/* for a known_hosts_file left unresolved: ~/.ssh/known_hosts */
	const char *policy;	/* the policy file's name, for messages */
	int log_fd;		/* one line per session */
};

/* A new token, GITSSH_TOKEN_LEN hex digits, into TOKEN.  -1 when no randomness. */
int gitssh_new_token(char token[GITSSH_TOKEN_LEN + 1]);

/*
 * ENV (N entries) with OMNIBOX_GIT_SSH_TOKEN=TOKEN appended, in A; *N
 * grows by one.
 */
char **gitssh_env_add(struct arena *a, char *const *env, size_t *n, const char *token);

/*
 * Open the entries' files, listen on the socket (connections queue from
 * here on) and fork the broker, which ends when *ALIVE is closed or
 * omnibox-run dies.  Returns its pid, or -1 with ERR saying what to fix.
 */
pid_t gitssh_start(const struct gitssh_config *c, int *alive, char *err, size_t errlen);

/* End the broker PID (and every session) started with ALIVE. */
void gitssh_stop(pid_t pid, int alive);

#endif
