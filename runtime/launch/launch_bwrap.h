/*
 * launch_bwrap.h - omnibox-run's Linux launch: bubblewrap and omnibox-init.
 *
 * The arguments go to bwrap through `--args FD`, the seccomp filter to
 * omnibox-init through `--seccomp-fd FD` (sealed memfds, nothing on disk
 * an agent could swap), the environment is rebuilt from the allow-list
 * (values never on bwrap's command line, which /proc makes
 * world-readable).  omnibox-run stays the parent: it forwards signals,
 * answers the filter's refusals (notify.h), removes the scratch dir, and
 * returns the command's status.
 *
 * The steps, in order, each on the same struct bwrap_launch:
 *
 *   bwrap_launch_prepare()  bwrap, omnibox-init, the scratch dir, the
 *                           descriptors; L->rq filled
 *   launch_resolve_begin()  (resolve.h) what bwrap's own arguments depend
 *                           on, by the caller, which then sets L->resolved
 *   bwrap_launch_spawn()    bwrap started with them: it sets the sandbox up
 *                           while the rest is resolved, and its omnibox-init
 *                           waits for its own arguments (handover.h)
 *   bwrap_launch_egress()   the egress side: the proxy started, its
 *                           placeholders; the git_ssh broker's token
 *   launch_resolve_finish() the workspace: grants, masks, the command
 *   bwrap_launch_build()    the terminal, the masks, every argument; bwrap
 *                           started again where its own came out otherwise
 *   bwrap_launch_start()    the limits, the event loop, the proxy, the
 *                           git_ssh broker, the cleanup process
 *   bwrap_launch_run()      omnibox-init handed its arguments, the sandbox
 *                           run to its end
 *   bwrap_launch_report()   what was refused, then everything released
 *
 * (a --dry-run starts nothing and ends after bwrap_launch_build() with
 * bwrap_launch_close(); linux_landlock starts omnibox-init in
 * bwrap_launch_run()).
 * A step that fails returns -1 with the message omnibox-run prints in ERR;
 * the caller then calls bwrap_launch_undo() and runs nothing: there is no
 * unsandboxed fallback.
 */
#ifndef OMNIBOX_LAUNCH_BWRAP_H
#define OMNIBOX_LAUNCH_BWRAP_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "compiler/base/diag.h"
#include "compiler/base/textbuf.h"
#include "compiler/policy.h"
#include "runtime/egress/credentials.h"
#include "runtime/gitssh/broker.h"
#include "runtime/launch/egress_start.h"
#include "runtime/launch/launch.h"
#include "runtime/launch/launch_landlock.h"
#include "runtime/launch/pty.h"
#include "runtime/resolve/resolve.h"

struct event_base;
struct copyback;
struct notify;

struct bwrap_launch {
	/* The caller's, set before bwrap_launch_prepare(). */
	struct arena *a;
	const struct launch_options *o;
	const struct policy *p; /* the effective policy (terminal selected) */
	const char *launch_dir, *home;
	bool use_pty;	      /* the sandbox gets a terminal of its own */
	/* linux_landlock: no bwrap; omnibox-init started directly, Landlock
	 * the whole confinement (launch_landlock.h). */
	bool landlock;
	struct rlimit nofile; /* RLIMIT_NOFILE as omnibox-run found it: the sandbox's */

	struct launch_request rq;
	struct launch_plan plan;
	bool resolved; /* launch_resolve() filled PLAN: launch_cleanup() undoes it */
	struct host_entry scratch;
	bool scratch_made; /* not on --dry-run, where it is only named */
	struct launch_resolving *resolving; /* launch_resolve_begin()'s, for its second step */
	char *bwrap, *init, *cgroup;
	bool cgroup_tried;
	int seccomp_fd, args_fd, status_pipe[2], ready_sock[2];
	/* bwrap, started by bwrap_launch_spawn() with the arguments EARLY; -1
	 * once bwrap_launch_run() has it, or before it starts. */
	pid_t bwrap_pid;
	bool bwrap_has_plan; /* it was given the plan's descriptors itself */
	struct textbuf early;
	int janitor;
	bool janitor_early; /* JANITOR is the first, started before the plan was */
	int sandbox_mnt;    /* the sandbox's mount namespace after the run, for the janitor; -1 */
	struct cred_runtime creds;
	struct event_base *base;
	struct copyback *copyback;
	struct egress_proxy proxy; /* omnibox-proxy's process, with egress_rules */
	bool proxy_pending;	   /* started, its answer not read: the agent waits for it */
	struct notify *notify;
	struct egress_log egress_log;
	char git_ssh_token[GITSSH_TOKEN_LEN + 1];
	pid_t git_ssh_pid;
	int git_ssh_alive;
	struct pty pty;
	struct textbuf text, nul, tail; /* bwrap's arguments (bwrap_build()) */
	struct landlock_launch ll;	/* linux_landlock: its rules and relay */
	struct landlock_context llc;	/* and omnibox-init's command line */
};

/* L with nothing made yet: every descriptor and pid -1. */
void bwrap_launch_init(struct bwrap_launch *l);

/*
 * bwrap and omnibox-init found, the scratch dir made (only named on
 * --dry-run), the descriptors omnibox-init gets (the seccomp filter, its
 * status pipe and its ready socket); then L->rq filled for
 * launch_resolve_begin().
 */
int bwrap_launch_prepare(struct bwrap_launch *l, char *err, size_t errlen);

/*
 * After launch_resolve_begin(), unless --dry-run or linux_landlock: the
 * sandbox's terminal, the cgroup, and bwrap started with its own
 * arguments, omnibox-init as `/.omnibox/init --args-from FD`, its ready
 * socket.  Nothing the workspace holds has been looked at yet; omnibox-init
 * runs nothing until bwrap_launch_run() hands it the rest.
 */
int bwrap_launch_spawn(struct bwrap_launch *l, char *err, size_t errlen);

/*
 * With egress_rules the proxy's port, socket and log and the credentials'
 * placeholders; with git_ssh the broker's token: L->rq's environment for
 * launch_resolve_finish().
 */
int bwrap_launch_egress(struct bwrap_launch *l, char *err, size_t errlen);

/*
 * After launch_resolve(): the sandbox's terminal, the masks omnibox-init
 * checks, bwrap's arguments (warnings into D), and the plan's notes said.
 */
int bwrap_launch_build(struct bwrap_launch *l, struct diag *d, char *err, size_t errlen);

/* A launch only described (--dry-run): its descriptors closed, its buffers freed. */
void bwrap_launch_close(struct bwrap_launch *l);

/*
 * What the kernel's Landlock cannot add, said; the limits (a cgroup, or
 * what stands in), where bwrap_launch_spawn() did not; then what runs
 * beside the sandbox, up before the agent exists: the event loop with the
 * seccomp refusals, the egress proxy, the git_ssh broker and the cleanup
 * process.
 */
int bwrap_launch_start(struct bwrap_launch *l, char *err, size_t errlen);

/*
 * The sandbox run to its end, then what it leaves quarantined and the
 * broker stopped.  Returns 0 with omnibox-run's exit status in *STATUS
 * (the command's; 128+N after signal N; LAUNCH_EXIT_SETUP when bwrap could
 * not set up the sandbox, said with what to fix), or -1 with ERR when
 * bwrap could not even be started.
 */
int bwrap_launch_run(struct bwrap_launch *l, int *status, char *err, size_t errlen);

/* What the proxy and the filter refused (unless quiet), then everything L held, released. */
void bwrap_launch_report(struct bwrap_launch *l);

/* After a failed step: bwrap ended if it started, the plan's placeholders
 * and the scratch dir removed. */
void bwrap_launch_undo(struct bwrap_launch *l);

#endif
