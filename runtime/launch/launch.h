/*
 * launch.h - what omnibox-run's launches share: the command line as parsed,
 * the one way a message reaches the user's terminal, and where the program
 * lies.
 *
 * The launches (launch_bwrap.h, darwin_run.h, unsandboxed.h) return their
 * failures to the entry point (runtime/omnibox-run.c), which prints them
 * and exits LAUNCH_EXIT_SETUP; what they print themselves (a note, a
 * warning, a summary after the run) goes out through launch_say().
 */
#ifndef OMNIBOX_LAUNCH_H
#define OMNIBOX_LAUNCH_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/resource.h>

#include "compiler/base/arena.h"

/* omnibox-run itself failed: nothing of the command ran. */
#define LAUNCH_EXIT_SETUP 125

/* omnibox-run's command line (the strings are argv's). */
struct launch_options {
	const char *input; /* AGENT.yaml */
	const char *terminal;
	const char *cwd;
	const char *egress_log;
	const char *egress_hosts;
	const char *egress_resolv; /* --egress-resolv: the proxy's nameservers */
	const char *egress_ca;
	bool dry_run, quiet, strict_toplevel, pty, no_pty;
	const char *why; /* --why PATH|URL */
	bool verbose;
	char **command;
	size_t n_command;
};

/*
 * The process as every launch needs it, first thing in main(): nothing the
 * caller left open past this process, RLIMIT_NOFILE's soft limit raised to
 * the hard one for the proxy's connections (as found in *GIVEN: what the
 * sandbox gets back; omnibox-proxy inherits the raised one), SIGPIPE
 * ignored.
 */
void launch_process_setup(struct rlimit *given);

/*
 * Write a message to stderr.  What the agent could have chosen (a name, a
 * path, a link target) was escaped where it entered the message
 * (arena_escape()); the whole is escaped once more, keeping its lines and
 * its escapes (TEXT_ESC_AGAIN), so that a piece that was not still cannot
 * act on the terminal.
 */
void launch_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void launch_vsay(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

/* The directory this program was started from (in A), or NULL. */
char *launch_self_dir(struct arena *a);

#include <sys/types.h>

/*
 * FN(ARG) in a child that shares this process's memory until it execs or
 * exits, this process waiting meanwhile (Linux: clone() with CLONE_VM and
 * CLONE_VFORK, as posix_spawn() starts one; elsewhere, and under
 * AddressSanitizer, a fork()): no copy
 * of this process's page tables is made, to be thrown away at the exec.
 * FN starts with every signal blocked and every handler back to its
 * default, so none of this process's runs there; it makes system calls,
 * frees nothing of this process's, then execs or _exit()s (FN's return is
 * the child's exit status).  The child's PID (SIGCHLD at its end, as
 * fork()'s), or -1 with errno.
 */
pid_t launch_vfork(int (*fn)(void *), void *arg);

#endif
