/*
 * init_steps.h - what omnibox-init does, step by step, inside the sandbox.
 *
 * omnibox-init (omnibox-init.c) parses its command line into struct
 * init_options and runs these in order: init_bind_transparent() and
 * init_place_masks() (init_mounts.h; the steps that need a privilege),
 * init_become_launcher(), init_drop_caps() (and then none is left),
 * init_confine() (Landlock, the seccomp filter, the limits),
 * init_announce_ready() (the egress relay started, omnibox-run
 * told the sandbox is set up), init_start_agent() and init_wait_agent().
 * Each returns its failure to the caller, with the message omnibox-init
 * prints after "omnibox-init: "; none exits (the forked agent and relay
 * end in their own way).
 */
#ifndef OMNIBOX_INIT_STEPS_H
#define OMNIBOX_INIT_STEPS_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "runtime/egress/relay.h"
#include "runtime/launch/init_mounts.h"
#include "runtime/launch/landlock.h"

/* A limit of the command line, set last (init_confine()). */
struct init_limit {
	const char *opt; /* "--rlimit-data", ... (for the message) */
	int resource;
	const char *value;
};

/* The command line: what to set up, and the agent's ARGV. */
struct init_options {
	const char *exec_path, *relay_port_arg, *relay_socket;
	const char *transparent_arg; /* --transparent PORT,... */
	const char **writable;	     /* --fs-write (malloc'd; init_confine() frees it) */
	size_t n_writable;
	bool scope, landlock, tty;
	bool launcher_ids; /* --launcher-ids: become the launcher (init_become_launcher()) */
	/* --system-root and each --system, --system-required and --dev
	 * (malloc'd): init_mount_system() */
	const char *system_root;
	struct init_system *system;
	size_t n_system;
	const char *chdir_path; /* --chdir, entered once every mount is made */
	/* The full ruleset (--ll-fs, --ll-net-connect; malloc'd, init_confine()
	 * frees them) and the ABI the launch needs (--ll-min-abi, or 0). */
	struct landlock_fd_rule *ll_fs;
	size_t n_ll_fs;
	unsigned short *ll_ports;
	size_t n_ll_ports;
	int ll_min_abi;
	bool ll_net_any; /* --ll-net-any: TCP left alone (the host's network) */
	int ready_fd, masks_fd, seccomp_fd;
	const char *seccomp_arg;
	struct init_limit rl[8];
	size_t n_rl;
	char **argv;
};

/* What the steps leave for the ones after them. */
struct init_state {
	pid_t relay_pid; /* the egress relay, or 0 */
	int listener_fd; /* the filter's listener until omnibox-run has it, or -1 */
	/* --transparent: its listeners and the DNS socket, until the relay has them */
	int tp_fd[RELAY_MAX_TRANSPARENT];
	size_t n_tp;
	int dns_fd; /* or -1 */
	/* Full mode (no PID namespace): omnibox-run, whose end ends the
	 * sandbox (init_hold_tree()); 0 otherwise. */
	pid_t keeper;
};

#define INIT_STATE_INIT                                                                            \
	{                                                                                          \
		.relay_pid = 0, .listener_fd = -1, .n_tp = 0, .dns_fd = -1, .keeper = 0            \
	}

/*
 * With --transparent PORT,... (decimal ports 1 to 65535, comma-separated,
 * no two alike, at most RELAY_MAX_TRANSPARENT, none the relay's own), the
 * relay's DNS socket bound to 127.0.0.53:53 (UDP) and a listener on
 * 0.0.0.0:PORT for each port, into ST: first of all, while this process
 * still has CAP_NET_BIND_SERVICE (omnibox-run has bwrap give it that one
 * capability for ports below 1024).  0 (nothing to do without
 * --transparent), or -1 with the message in ERR.
 */
int init_bind_transparent(const struct init_options *io, struct init_state *st, char *err,
			  size_t errlen);

/*
 * Every capability dropped, with or without --transparent: the ambient
 * ones cleared, the effective, permitted and inheritable sets emptied and
 * checked empty, and no_new_privs set, so that no exec (the agent's, even
 * as uid 0 or of a set-uid file) can gain one back.  0, or -1 with the
 * message in ERR: then nothing may run.
 */
int init_drop_caps(char *err, size_t errlen);

/*
 * With --launcher-ids, for a launcher other than root: bwrap ran this
 * process as uid 0 (--uid 0 --gid 0) so that its user namespace is the one
 * that owns the mounts and the network, where CAP_SYS_ADMIN mounts the
 * masks and CAP_NET_BIND_SERVICE binds the ports.  Without that bwrap
 * would have nested a second namespace to give the sandbox the launcher's
 * ids (it must be uid 0 to mount /dev/pts), and a capability there means
 * nothing for either.  The masks mounted, this nests that namespace itself: the launcher's uid and gid (what 0 maps to
 * outside) become this process's, so the agent runs as them as in any
 * other launch.  Root's launch (no user namespace) is left alone.  0, or
 * -1 with the message in ERR.
 */
int init_become_launcher(const struct init_options *io, char *err, size_t errlen);

/*
 * Landlock, the seccomp filter (its listener into ST), the limits:
 * everything before anything of the agent's runs.  Landlock is the ABI of --ll-min-abi checked (1 at
 * least with --ll-fs), then, with --ll-fs, the full ruleset
 * (landlock_confine(): its descriptors closed) in place of the second
 * layer of --fs-write and --scope (landlock_restrict()).  0, or -1 with
 * the message in ERR.
 */
int init_confine(struct init_options *io, struct init_state *st, char *err, size_t errlen);

/*
 * The egress relay started (a child of its own, in ST), omnibox-run sent
 * the ready byte and the filter's listener on IO->ready_fd, and this
 * process's copy of the listener closed.  0, or -1 with the message in ERR.
 */
int init_announce_ready(const struct init_options *io, struct init_state *st, char *err,
			size_t errlen);

/*
 * Full mode (--ll-fs: no PID namespace, no PID 1 whose end kills the rest):
 * this process becomes the subreaper of everything the agent starts, and
 * gets SIGTERM when omnibox-run ends; init_wait_agent() then kills every
 * process left below it, as it does once the agent is done.  0, or -1 with
 * the message in ERR.
 */
int init_hold_tree(struct init_state *st, char *err, size_t errlen);

/*
 * The agent started, with every signal of SET (filled here) blocked in this
 * process for init_wait_agent().  Returns its pid, or -1 with the message
 * in ERR; the child execs the agent or _exits (126, 127) saying why.
 */
pid_t init_start_agent(const struct init_options *io, sigset_t *set, char *err, size_t errlen);

/*
 * Until the agent CHILD is gone: the signals of SET passed on to it,
 * orphans reaped, the relay of ST ended after it.  Returns the agent's
 * status (128+N for signal N).
 */
int init_wait_agent(struct init_state *st, const sigset_t *set, pid_t child);

#endif
