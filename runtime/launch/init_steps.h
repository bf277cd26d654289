/*
 * init_steps.h - what omnibox-init does, step by step, inside the sandbox.
 *
 * omnibox-init (omnibox-init.c) parses its command line into struct
 * init_options and runs these in order: init_confine() (the masks checked,
 * Landlock, the seccomp filter, the limits), init_announce_ready() (the
 * egress relay started, omnibox-run told the sandbox is set up),
 * init_start_agent() and init_wait_agent().  Each returns its failure to
 * the caller, with the message omnibox-init prints after "omnibox-init: ";
 * none exits (the forked agent and relay end in their own way).
 */
#ifndef OMNIBOX_INIT_STEPS_H
#define OMNIBOX_INIT_STEPS_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* A limit of the command line, set last (init_confine()). */
struct init_limit {
	const char *opt; /* "--rlimit-data", ... (for the message) */
	int resource;
	const char *value;
};

/* The command line: what to set up, and the agent's ARGV. */
struct init_options {
	const char *exec_path, *relay_port_arg, *relay_socket;
	const char **writable; /* --fs-write (malloc'd; init_confine() frees it) */
	size_t n_writable;
	bool scope, landlock, tty;
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
};

#define INIT_STATE_INIT                                                                            \
	{                                                                                          \
		0, -1                                                                              \
	}

/*
 * The masks checked (the list on MASKS_FD, closed), Landlock, the seccomp
 * filter (its listener into ST), the limits: everything before anything of
 * the agent's runs.  0, or -1 with the message in ERR (empty when there is
 * none to give: a list that cannot be read or is not omnibox-run's).
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
