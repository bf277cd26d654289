/*
 * omnibox-init.c - omnibox-init, the first process inside the sandbox.
 *
 *   omnibox-init [--exec PATH] [--relay PORT SOCKET [--transparent PORT,...]]
 *                [--rlimit-data BYTES] [--rlimit-cpu SECONDS] [--rlimit-nofile N]
 *                [--rlimit-nproc N] [--fs-write PATH]... [--scope] [--tty]
 *                [--ready-fd FD] [--masks-fd FD] [--seccomp-fd FD] -- ARGV...
 *
 * bwrap starts it as PID 1 of the sandbox's PID namespace (--as-pid-1).
 * It closes every descriptor but 0, 1 and 2 (nothing a caller left open
 * reaches the agent).  With --transparent (transparent egress, for
 * clients that ignore the proxy variables: runtime/egress/relay.h), it
 * first binds the relay's DNS socket on 127.0.0.53:53 and a listener on
 * 0.0.0.0:PORT for each of the comma-separated ports (decimal, 1 to
 * 65535, no two alike, at most 64, none the relay's own): the one thing
 * that needs a privilege, CAP_NET_BIND_SERVICE, which the launch has
 * bwrap give it for that alone.  Then, with or without --transparent, it
 * drops every capability and sets no_new_privs, so that neither it nor
 * the agent has one or can gain one, and stops if any is left.  It checks
 * that every mask of --masks-fd is in place, adds the Landlock layer
 * (landlock.h: writes only below the --fs-write paths; with --scope,
 * abstract Unix sockets and signals kept inside), loads the seccomp filter
 * of --seccomp-fd, turned to report its refusals to a listener
 * (seccomp_load.h), starts the egress relay of --relay (with the
 * transparent sockets), sends a byte and the listener on the --ready-fd
 * socket (omnibox-run's proof that bwrap's setup succeeded; omnibox-run
 * answers the refusals from then on) and closes both, starts the agent,
 * passes on the signals omnibox-run forwards, reaps orphans, and exits
 * with the agent's status (128+N for a signal).  When it exits, the
 * kernel kills everything left in the namespace: an agent cannot leave a
 * daemon behind.
 *
 * On macOS, sandbox-exec starts it under the Seatbelt profile when the
 * policy has egress_rules, for the relay; it is no PID 1 there, so it ends
 * the relay itself once the agent is gone.
 *
 *   omnibox-init --git-ssh ARG...
 *
 * is another program: git's ssh inside the sandbox (GIT_SSH_COMMAND, with
 * git_ssh), which hands git's request to omnibox-run's broker
 * (runtime/gitssh/client.h).
 *
 * This file is the command line; the steps are init_steps.h.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "runtime/gitssh/client.h"
#include "runtime/launch/fds.h"
#include "runtime/launch/init_steps.h"

#if defined(__SANITIZE_ADDRESS__)
/* LeakSanitizer stops the world with ptrace, which the filter refuses here. */
int __lsan_is_turned_off(void);
int
__lsan_is_turned_off(void)
{
	return 1;
}
#endif

static void
usage(void)
{
	fputs("usage: omnibox-init [--exec PATH] [--relay PORT SOCKET [--transparent PORT,...]]\n"
	      "                    [--rlimit-data BYTES] [--rlimit-cpu SECONDS]\n"
	      "                    [--rlimit-nofile N] [--rlimit-nproc N] [--fs-write PATH]...\n"
	      "                    [--scope] [--tty] [--ready-fd FD] [--masks-fd FD]\n"
	      "                    [--seccomp-fd FD] -- ARGV...\n"
	      "       omnibox-init --git-ssh [SSH-OPTIONS] [USER@]HOST COMMAND\n"
	      "--transparent 443,80,...: transparent egress (Linux): the relay also answers\n"
	      "DNS on 127.0.0.53:53 and listens on 0.0.0.0:PORT for each port\n"
	      "(started by omnibox-run inside the sandbox; not for direct use)\n",
	      stderr);
	exit(125);
}

/*
 * 0, 1 and 2 (and the ready socket, the masks and the filter, until each
 * has served); nothing else anyone left open goes on to the agent.
 */
static void
keep_fds(struct init_options *io, int argc, char **argv)
{
	int keep[3] = {-1, -1, -1};
	size_t n_keep = 0;

	for (int i = 1; i + 1 < argc && strcmp(argv[i], "--"); i++) {
		if (!strcmp(argv[i], "--ready-fd"))
			io->ready_fd = atoi(argv[i + 1]);
		if (!strcmp(argv[i], "--masks-fd"))
			io->masks_fd = atoi(argv[i + 1]);
		if (!strcmp(argv[i], "--seccomp-fd"))
			io->seccomp_fd = atoi(io->seccomp_arg = argv[i + 1]);
	}
	if (io->ready_fd > 2)
		keep[n_keep++] = io->ready_fd;
	if (io->masks_fd > 2)
		keep[n_keep++] = io->masks_fd;
	if (io->seccomp_fd > 2)
		keep[n_keep++] = io->seccomp_fd;
	fds_keep_only(keep, n_keep);
}

/* The options up to `--` into IO, and the agent's ARGV after it; usage() on anything else. */
static void
parse_options(struct init_options *io, int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		static const struct {
			const char *opt;
			int resource;
		} limits[] = {{"--rlimit-data", RLIMIT_DATA},
			      {"--rlimit-cpu", RLIMIT_CPU},
			      {"--rlimit-nofile", RLIMIT_NOFILE},
			      {"--rlimit-nproc", RLIMIT_NPROC}};
		size_t k;

		if (!strcmp(argv[i], "--exec") && i + 1 < argc) {
			io->exec_path = argv[++i];
			continue;
		}
		if (!strcmp(argv[i], "--relay") && i + 2 < argc) {
			io->relay_port_arg = argv[++i];
			io->relay_socket = argv[++i];
			continue;
		}
		if (!strcmp(argv[i], "--transparent") && i + 1 < argc) {
			io->transparent_arg = argv[++i];
			continue;
		}
		if ((!strcmp(argv[i], "--ready-fd") || !strcmp(argv[i], "--masks-fd") ||
		     !strcmp(argv[i], "--seccomp-fd")) &&
		    i + 1 < argc) {
			i++;
			continue;
		}
		if (!strcmp(argv[i], "--fs-write") && i + 1 < argc) {
			io->writable[io->n_writable++] = argv[++i];
			io->landlock = true;
			continue;
		}
		if (!strcmp(argv[i], "--scope")) {
			io->scope = io->landlock = true;
			continue;
		}
		if (!strcmp(argv[i], "--tty")) {
			io->tty = true;
			continue;
		}
		if (!strcmp(argv[i], "--"))
			break;
		for (k = 0; k < sizeof(limits) / sizeof(limits[0]); k++)
			if (!strcmp(argv[i], limits[k].opt) && i + 1 < argc)
				break;
		if (k == sizeof(limits) / sizeof(limits[0]))
			usage();
		i++;
		/* Set last, just before the relay and the agent: nothing of this
		 * process's own set-up should run under the agent's limits. */
		if (io->n_rl < sizeof(io->rl) / sizeof(io->rl[0]))
			io->rl[io->n_rl++] =
			    (struct init_limit){limits[k].opt, limits[k].resource, argv[i]};
	}
	if (i >= argc - 1)
		usage();
	io->argv = argv + i + 1;
}

int
main(int argc, char **argv)
{
	struct init_options io = {.ready_fd = -1, .masks_fd = -1, .seccomp_fd = -1};
	struct init_state st = INIT_STATE_INIT;
	char err[1024] = "";
	sigset_t set;
	pid_t child;

	io.writable = calloc((size_t)argc, sizeof(*io.writable));
	/* git's ssh (git_ssh), run by git in the sandbox: none of what follows.
	 * _exit(): git reads its status, and no exit handler may change it
	 * (a sanitizer's leak check needs ptrace, which the filter refuses). */
	if (argc > 1 && !strcmp(argv[1], "--git-ssh")) {
		int rc;

		free(io.writable);
		rc = gitssh_client_main(argc - 2, argv + 2);
		fflush(NULL);
		_exit(rc);
	}
	keep_fds(&io, argc, argv);
	if (!io.writable)
		return 125;
	parse_options(&io, argc, argv);
	/* The sockets that need a privilege first, and then no privilege at
	 * all, before anything else can go wrong. */
	if (init_bind_transparent(&io, &st, err, sizeof(err)) < 0 ||
	    init_become_launcher(&io, err, sizeof(err)) < 0 || init_drop_caps(err, sizeof(err)) < 0 || init_confine(&io, &st, err, sizeof(err)) < 0 ||
	    init_announce_ready(&io, &st, err, sizeof(err)) < 0 ||
	    (child = init_start_agent(&io, &set, err, sizeof(err))) < 0) {
		if (err[0])
			fprintf(stderr, "omnibox-init: %s\n", err);
		return 125;
	}
	return init_wait_agent(&st, &set, child);
}
