/*
 * session.h - omnibox-run's egress proxy in a process of its own: what
 * omnibox-run and `omnibox-proxy --session FD` say to each other.
 *
 * omnibox-run compiles the policy and reads the secrets (cred_prepare(),
 * with the user's environment and files); it then starts omnibox-proxy
 * with one end of a socket pair as FD and sends, as one frame:
 *
 *   config   the rules, egress_allow_private_destinations, the prepared
 *            credentials (secrets and placeholders: they go over the
 *            socket only, never through argv, the environment or a file),
 *            the Unix socket to listen on, the trust bundle to write, the
 *            resolver and CA files, the memory cap and how to log.
 *
 * The proxy answers with one frame, once listening (SESSION_READY) or
 * when it cannot start (a message; nothing listens, and the agent must not
 * run).  When omnibox-run shuts its end down, or dies, the proxy stops,
 * sends what it refused (struct session_summary) and exits.
 *
 * A frame is a 32-bit length (host order: both ends run on one machine)
 * and that many bytes; inside, numbers are 32 or 64 bits and strings are a
 * 32-bit length (all ones for NULL) and their bytes.  Nothing here needs
 * OpenSSL or libevent: omnibox-run links it without either.
 */
#ifndef OMNIBOX_EGRESS_SESSION_H
#define OMNIBOX_EGRESS_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compiler/base/arena.h"
#include "runtime/egress/proxy.h"

/* The largest frame either side accepts. */
#define SESSION_FRAME_MAX (64u << 20)

/* How the proxy logs (session_config.flags). */
#define SESSION_QUIET 1u   /* no line of the proxy's anywhere */
#define SESSION_VERBOSE 2u /* refusals on stderr too, when the log is another file */

/* What omnibox-run's proxy is given: PC's paths, rules and credentials, and FLAGS. */
struct session_config {
	struct proxy_config pc; /* log, log_arg, listen_addr and the CA files unused */
	unsigned flags;
};

/* Refusals for want of a rule, and for the destination alone (proxy.h). */
struct session_summary {
	unsigned long private_refusals;
	const char *private_first; /* NULL when none */
	const struct proxy_denial *denials;
	size_t n_denials;
	unsigned long others;
};

/* A frame being built: grown without leaving copies of what it held behind. */
struct session_buf {
	unsigned char *data;
	size_t len, cap;
	bool failed; /* out of memory, or past SESSION_FRAME_MAX */
};

/* C as a config frame into B (wiped and freed with session_buf_free()). 0, or -1 out of memory. */
int session_encode_config(struct session_buf *b, const struct session_config *c);

/* The answer to a config: ready (MSG NULL), or why the proxy cannot start. */
int session_encode_status(struct session_buf *b, const char *msg);

/* The summary frame. */
int session_encode_summary(struct session_buf *b, const struct session_summary *s);

/* Wipe and free B's bytes. */
void session_buf_free(struct session_buf *b);

/*
 * Write B as one frame to FD (blocking, all of it).  Returns 0, or -1 with
 * errno.
 */
int session_send(int fd, const struct session_buf *b);

/*
 * Read one frame from FD (blocking) into a malloc'd buffer (*DATA, *LEN;
 * wipe it before freeing: a config holds secrets).  Returns 1 for a frame,
 * 0 at the end of the stream before one, -1 with errno (EPROTO for a
 * frame over SESSION_FRAME_MAX or cut short).
 */
int session_recv(int fd, unsigned char **data, size_t *len);

/*
 * Decode a frame of each kind, with every string copied into A (the
 * secrets of a config too: session_wipe_creds() clears them).  Returns 0,
 * or -1 with a message in ERR for anything malformed.
 */
int session_decode_config(struct arena *a, const unsigned char *data, size_t len,
			  struct session_config *c, char *err, size_t errlen);
int session_decode_status(struct arena *a, const unsigned char *data, size_t len, const char **msg,
			  char *err, size_t errlen);
int session_decode_summary(struct arena *a, const unsigned char *data, size_t len,
			   struct session_summary *s, char *err, size_t errlen);

/* Zero the secrets of N credential rows (decoded from a config). */
void session_wipe_creds(const struct proxy_cred *creds, size_t n);

#endif
