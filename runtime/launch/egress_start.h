/*
 * egress_start.h - the egress proxy of a launch, as omnibox-run starts it:
 * the credentials read outside the sandbox, the proxy's configuration, its
 * log, the proxy in a process of its own (omnibox-proxy --session, so that
 * omnibox-run itself loads no TLS library), and the summary of what it
 * refused once the run is over.
 *
 * Every function that can fail returns -1 with the message omnibox-run
 * prints in ERR (ERRLEN bytes); what it made is undone by the caller's
 * cleanup (the scratch dir), as for every other step of a launch.
 */
#ifndef OMNIBOX_EGRESS_START_H
#define OMNIBOX_EGRESS_START_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "compiler/policy.h"
#include "runtime/egress/credentials.h"
#include "runtime/egress/session.h"
#include "runtime/launch/launch.h"

/* Where the proxy's decisions go: one line each. */
struct egress_log {
	FILE *f;      /* --egress-log's file, or stderr; NULL until opened */
	bool verbose; /* --verbose: its refusals on stderr too, as they happen */
	bool quiet;   /* -q and no --egress-log: nothing of the proxy's on stderr */
};

/* For --dry-run: the names credential placeholders would be set in, unread (in A). */
char **egress_placeholder_names(struct arena *a, const struct sandbox *sb, size_t *n);

/*
 * The real secrets of SB's credential_proxy entries, read here, outside
 * the sandbox; only placeholders go in (CREDS->env), and the files it reads
 * are written into SCRATCH.  Nothing to do without entries.  Returns 0,
 * or -1 with ERR.
 */
/*
 * Transparent egress (Linux): the sandbox's /etc/resolv.conf and /etc/hosts
 * (compiler/decide/transparent.h), written as new files into SCRATCH.
 * Returns 0, or -1 with the message in ERR.
 */
int egress_resolver_files(const char *scratch, char *err, size_t errlen);

int egress_credentials(struct arena *a, const struct sandbox *sb, const char *home,
		       const char *scratch, struct cred_runtime *creds, char *err, size_t errlen);

/* SC: the proxy of a launch whose scratch dir is SCRATCH, listening on SOCKET_PATH, logging as LOG.
 */
void egress_config(struct arena *a, const struct launch_options *o, const struct sandbox *sb,
		   const char *scratch, const char *socket_path, const struct cred_runtime *creds,
		   const struct egress_log *log, struct session_config *sc);

/*
 * LOG: --egress-log's file (an existing one is appended to; never through
 * a symbolic link, only a regular file of this user), or stderr, which
 * under -q gets none of the proxy's lines (the summary at exit says what
 * was refused).  Returns 0, or -1 with ERR.
 */
int egress_log_open(struct arena *a, const struct launch_options *o, struct egress_log *log,
		    char *err, size_t errlen);

/*
 * LOG: the egress log of an interactive launch, a new file beside SCRATCH
 * (under another name when one is already there), its name in *NAME.
 * Returns 0, or -1 with ERR.
 */
int egress_log_create(struct arena *a, const struct launch_options *o, const char *scratch,
		      struct egress_log *log, const char **name, char *err, size_t errlen);

/* Close LOG's file unless it is stderr. */
void egress_log_close(struct egress_log *log);

/* The proxy's process, while it runs. */
struct egress_proxy {
	pid_t pid; /* -1: none */
	int ctl;   /* omnibox-run's end of the session socket */
	int sent;  /* 0, or the errno of sending the configuration */
};

/*
 * SC's proxy in a process of its own: omnibox-proxy, found beside
 * omnibox-run (or in LIBEXECDIR/omnibox, like omnibox-init), started with
 * one end of a socket pair, over which it gets SC (the secrets with it:
 * never in argv, the environment or a file) and answers once it listens.
 * It logs to LOG's file, is out of the terminal's process group (a Ctrl-C
 * is for the agent), and dies with omnibox-run (PR_SET_PDEATHSIG, and the
 * end of the socket).  Returns 0 with EP filled, or -1 with ERR: the proxy
 * cannot start, and nothing may run.
 */
int egress_proxy_start(struct arena *a, const struct session_config *sc,
		       const struct egress_log *log, struct egress_proxy *ep, char *err,
		       size_t errlen);

/*
 * egress_proxy_start() in two halves, so that the sandbox is set up while
 * the proxy starts: egress_proxy_spawn() starts it and sends SC (0, or -1
 * with ERR: nothing may run); egress_proxy_ready() waits for its answer
 * (0 when it listens; -1 with ERR, the proxy stopped, and nothing may run).
 * The agent must not start before egress_proxy_ready() said 0.
 *
 * egress_proxy_exec() starts the process alone, EP->pid -1 before (0, or
 * -1 with ERR): it readies what needs no configuration (OpenSSL, the
 * session CA's keys) while the launch is resolved, and waits for
 * egress_proxy_spawn(), which then only sends SC.  A launch that fails
 * meanwhile ends it with egress_proxy_stop().
 */
int egress_proxy_exec(struct arena *a, const struct egress_log *log, struct egress_proxy *ep,
		      char *err, size_t errlen);
int egress_proxy_spawn(struct arena *a, const struct session_config *sc,
		       const struct egress_log *log, struct egress_proxy *ep, char *err,
		       size_t errlen);
int egress_proxy_ready(struct arena *a, struct egress_proxy *ep, char *err, size_t errlen);

/*
 * Stop EP's proxy and wait for it; what it refused goes to *SUM (from A;
 * all zero when it said nothing).  Nothing to do without one.
 */
void egress_proxy_stop(struct arena *a, struct egress_proxy *ep, struct session_summary *sum);

/* Kill EP's proxy at once and wait for it (it has not answered: nothing to ask it). */
void egress_proxy_kill(struct egress_proxy *ep);

/*
 * What the proxy refused (SUM), on stderr: the agent saw only a 403, the
 * user sees here which rule of POLICY would have allowed each request no
 * rule allows, and the setting that would let through those refused for
 * their private, loopback or metadata destination.
 */
void egress_denials_summary(const struct session_summary *sum, const char *policy);

#endif
