/*
 * omnibox-init.c - omnibox-init, the first process inside the sandbox.
 *
 *   omnibox-init [--exec PATH] [--relay PORT SOCKET [--transparent PORT,...]]
 *                [--rlimit-data BYTES] [--rlimit-cpu SECONDS] [--rlimit-nofile N]
 *                [--rlimit-nproc N] [--fs-write PATH]... [--scope] [--tty]
 *                [--ready-fd FD] [--masks-fd FD] [--seccomp-fd FD] [--launcher-ids]
 *                [--system-root DIR [--system PATH | --system-required PATH |
 *                 --system-bind SRC PATH | --dev PATH | --ro-bind-fd FD PATH |
 *                 --bind-fd FD PATH | --tmpfs PATH]...] [--chdir PATH]
 *                [--ll-fs FD RIGHTS]... [--ll-net-connect PORT]... [--ll-min-abi N]
 *                -- ARGV...
 *
 * bwrap starts it as PID 1 of the sandbox's PID namespace (--as-pid-1).
 * It closes every descriptor but 0, 1 and 2 (nothing a caller left open
 * reaches the agent), and those its options name.  With --transparent (transparent egress, for
 * clients that ignore the proxy variables: runtime/egress/relay.h), it
 * first binds the relay's DNS socket on 127.0.0.53:53 and a listener on
 * 0.0.0.0:PORT for each of the comma-separated ports (decimal, 1 to
 * 65535, no two alike, at most 64, none the relay's own): the one thing
 * that needs a privilege, CAP_NET_BIND_SERVICE, which the launch has
 * bwrap give it for that.  It makes the system's mounts bwrap would have
 * made (init_mounts.h), from DIR, where bwrap bound the host's root for
 * that alone: each --system PATH of the host (as --ro-bind-try) and
 * --system-required PATH (as --ro-bind) cloned read-only onto the same
 * path, SRC of each --system-bind SRC PATH onto PATH (as --ro-bind SRC
 * PATH), /dev at each --dev PATH as bwrap's --dev makes it, each grant
 * of --ro-bind-fd and --bind-fd FD PATH (the launch's descriptor FD, of
 * the host's mount namespace: the same directory or file found at its
 * path below DIR, checked to be FD's, cloned read-only or with the
 * host's flags, checked at PATH after; FD closed), and a tmpfs at each
 * --tmpfs PATH, all in their order; then it unmounts DIR.  It mounts the masks of
 * --masks-fd (a /dev/null
 * over each file, each directory's tmpfs made read-only: init_mounts.h),
 * each by descriptor in the directory the launch checked, and checks each
 * in place: CAP_SYS_ADMIN, and enters the directory of --chdir.  With --launcher-ids (bwrap's --uid 0), launched
 * by a user other than root, it runs this far as uid 0 of bwrap's user
 * namespace (the one that owns the mounts and the network), then nests one
 * where it is the launcher again.
 * Then it drops every capability (the bounding set's too, where it can)
 * and sets no_new_privs, so that neither it nor the agent has one or can
 * gain one, and stops if any is left.  It adds the Landlock layer
 * (landlock.h: writes only below the --fs-write paths; with --scope,
 * abstract Unix sockets and signals kept inside), loads the seccomp filter
 * of --seccomp-fd, turned to report its refusals to a listener
 * (seccomp_load.h), sends a byte and the listener on the --ready-fd
 * socket (omnibox-run's proof that bwrap's setup succeeded; omnibox-run
 * answers the refusals from then on), with --relay waits on that socket
 * for omnibox-run's "g" (the egress proxy, started meanwhile, listens; any
 * other end and nothing runs), closes both, starts the egress relay of
 * --relay (with the transparent sockets; it takes the proxy's hand-off
 * socket, whose path goes: runtime/egress/handoff.h), starts the agent,
 * passes on the signals omnibox-run forwards, reaps orphans, and exits
 * with the agent's status (128+N for a signal).  When it exits, the
 * kernel kills everything left in the namespace: an agent cannot leave a
 * daemon behind.
 *
 * Where no namespace can be made, omnibox-run starts it directly, without
 * bwrap, and Landlock is the whole confinement: the "full" mode, with any
 * --ll-fs.  Then, in place of the layer of --fs-write and --scope (which
 * do not go with it: --fs-write is refused, --scope is implied), it
 * restricts itself and the agent to one ruleset (landlock_confine()) that
 * handles every filesystem right this kernel's ABI knows, TCP bind and
 * connect (ABI 4) and both scopes (ABI 6: signals and abstract Unix
 * sockets stay inside), with these rules:
 *
 *   --ll-fs FD RIGHTS   the hierarchy below FD (an inherited descriptor
 *                       above 2, O_PATH or O_RDONLY, on a directory or a
 *                       file) gets RIGHTS: decimal, the kernel's
 *                       LANDLOCK_ACCESS_FS_* bits (enum ll_access of
 *                       compiler/decide/landlock.h; 1 << 15 is ioctl on
 *                       devices), as far as this ABI handles them, and
 *                       for a file only those a file may hold (execute,
 *                       write, read, truncate, ioctl).  A rule left with
 *                       no right is none.  Repeatable; every FD is closed
 *                       once the rules are in, before the agent starts.
 *   --ll-net-connect PORT  TCP connect to PORT allowed (1 to 65535;
 *                       repeatable; only with --ll-fs).  No TCP bind at all.
 *   --ll-net-any        TCP is not handled: the host's network, for a
 *                       policy that allows it (not with --ll-net-connect).
 *
 * So nothing of the filesystem is reachable but what the rules grant (not
 * even /dev/stdout reopened: the launch grants what the agent needs), and
 * a rule the kernel refuses, or a descriptor that is not open, stops the
 * launch.  Full mode needs Landlock (ABI 1) and says nothing itself about
 * what an older ABI lacks (renames across directories below 2, truncation
 * below 3, TCP below 4, device ioctls below 5, the scopes below 6):
 *
 *   --ll-min-abi N      the launch needs Landlock ABI N at least; below it
 *                       (or without Landlock) "this kernel's Landlock ABI
 *                       is M, the policy needs N (...); nothing ran", 125.
 *
 * What Landlock does not see stays open in full mode, whatever the rules
 * (ABI 7, Linux 6.18): chmod, utimes, setxattr and stat of any path the
 * user's permissions allow, connecting to a pathname Unix socket anywhere
 * (a daemon's control socket), UDP, and listen() on a TCP socket never
 * bound (the kernel picks a port without asking Landlock).
 *
 * --relay and --transparent do not go with --ll-fs (the ruleset refuses
 * every TCP bind).  The order is kept: the masks, capabilities dropped and
 * no_new_privs set, Landlock, the seccomp filter, the limits.
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
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "emitters/bwrap.h"
#include "runtime/gitssh/client.h"
#include "runtime/launch/fds.h"
#include "runtime/launch/handover.h"
#include "runtime/launch/init_mounts.h"
#include "runtime/launch/init_steps.h"

extern char **environ;

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
	      "                    [--launcher-ids] [--system-root DIR [--system PATH |\n"
	      "                    --system-required PATH | --system-bind SRC PATH |\n"
	      "                    --dev PATH | --ro-bind-fd FD PATH | --bind-fd FD PATH |\n"
	      "                    --tmpfs PATH]...] [--chdir PATH]\n"
	      "                    [--seccomp-fd FD] [--ll-fs FD RIGHTS]...\n"
	      "                    [--ll-net-connect PORT]... [--ll-net-any] [--ll-min-abi N]\n"
	      "                    -- ARGV...\n"
	      "       omnibox-init --git-ssh [SSH-OPTIONS] [USER@]HOST COMMAND\n"
	      "--transparent 443,80,...: transparent egress (Linux): the relay also answers\n"
	      "DNS on 127.0.0.53:53 and listens on 0.0.0.0:PORT for each port\n"
	      "(started by omnibox-run inside the sandbox; not for direct use)\n"
	      "--ll-fs FD RIGHTS: Landlock alone, no bwrap: one ruleset handling every right\n"
	      "of this kernel; the hierarchy below descriptor FD (above 2, closed before the\n"
	      "agent starts) gets RIGHTS (decimal LANDLOCK_ACCESS_FS_* bits); nothing else\n"
	      "is reachable; no TCP bind, TCP connect only to each --ll-net-connect PORT;\n"
	      "signals and abstract Unix sockets kept inside (ABI 6)\n"
	      "--ll-min-abi N: fail (125, nothing ran) below Landlock ABI N\n",
	      stderr);
	exit(125);
}

/*
 * 0, 1 and 2 (and the ready socket, the masks, the filter and the rules of
 * --ll-fs, until each has served); nothing else anyone left open goes on
 * to the agent.
 */
static void
keep_fds(const struct init_options *io)
{
	int *keep = malloc((3 + io->n_ll_fs + io->n_system) * sizeof(*keep));
	size_t n_keep = 0;

	if (!keep)
		exit(125);
	/* The grants' descriptors, each closed once its mount is made. */
	for (size_t k = 0; k < io->n_system; k++)
		if (io->system[k].kind == 'g' || io->system[k].kind == 'w')
			keep[n_keep++] = atoi(io->system[k].src);
	if (io->ready_fd > 2)
		keep[n_keep++] = io->ready_fd;
	if (io->masks_fd > 2)
		keep[n_keep++] = io->masks_fd;
	if (io->seccomp_fd > 2)
		keep[n_keep++] = io->seccomp_fd;
	for (size_t k = 0; k < io->n_ll_fs; k++)
		keep[n_keep++] = io->ll_fs[k].fd;
	fds_keep_only(keep, n_keep);
	free(keep);
}

/* A command line omnibox-run would not give: why, and nothing runs. */
static void bad_args(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void
bad_args(const char *fmt, ...)
{
	va_list ap;

	fputs("omnibox-init: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("; nothing ran\n", stderr);
	exit(125);
}

/* ARG, decimal digits only, from LO to HI; -1 for anything else. */
static long long
number(const char *arg, long long lo, long long hi)
{
	unsigned long long v;
	char *end;

	if (*arg < '0' || *arg > '9')
		return -1;
	errno = 0;
	v = strtoull(arg, &end, 10);
	if (errno || *end || v < (unsigned long long)lo || v > (unsigned long long)hi)
		return -1;
	return (long long)v;
}

/* The option at ARGV[*I] if it is one of the full ruleset's (*I past it): true. */
static bool
parse_ll_option(struct init_options *io, int argc, char **argv, int *i)
{
	const char *opt = argv[*i];
	long long v, r;

	if (!strcmp(opt, "--ll-fs") && *i + 2 < argc) {
		v = number(argv[*i + 1], 3, INT_MAX);
		r = number(argv[*i + 2], 0, (long long)LANDLOCK_FS_ALL);
		if (v < 0 || r < 0)
			bad_args("--ll-fs %s %s: not a descriptor above 2 and a set of Landlock "
				 "filesystem rights (decimal, below %llu)",
				 argv[*i + 1], argv[*i + 2], LANDLOCK_FS_ALL + 1);
		io->ll_fs[io->n_ll_fs++] =
		    (struct landlock_fd_rule){.fd = (int)v, .rights = (unsigned long long)r};
		*i += 2;
		return true;
	}
	if (!strcmp(opt, "--ll-net-connect") && *i + 1 < argc) {
		if ((v = number(argv[*i + 1], 1, 65535)) < 0)
			bad_args("--ll-net-connect %s: not a port (1 to 65535)", argv[*i + 1]);
		io->ll_ports[io->n_ll_ports++] = (unsigned short)v;
		*i += 1;
		return true;
	}
	if (!strcmp(opt, "--ll-net-any")) {
		io->ll_net_any = true;
		return true;
	}
	if (!strcmp(opt, "--ll-min-abi") && *i + 1 < argc) {
		if ((v = number(argv[*i + 1], 0, 1000000)) < 0)
			bad_args("--ll-min-abi %s: not a Landlock ABI version", argv[*i + 1]);
		io->ll_min_abi = (int)v;
		*i += 1;
		return true;
	}
	return false;
}

/* What does not go together with the full ruleset. */
static void
check_ll_options(const struct init_options *io)
{
	if ((io->n_ll_ports || io->ll_net_any) && !io->n_ll_fs)
		bad_args("%s needs --ll-fs (the full ruleset)",
			 io->n_ll_ports ? "--ll-net-connect" : "--ll-net-any");
	if (io->n_ll_ports && io->ll_net_any)
		bad_args("--ll-net-connect does not go with --ll-net-any");
	if (!io->n_ll_fs)
		return;
	if (io->n_writable)
		bad_args("--fs-write does not go with --ll-fs (the full ruleset's rules say what "
			 "is writable)");
	if (io->relay_port_arg || io->transparent_arg)
		bad_args("%s does not go with --ll-fs (the full ruleset refuses every TCP bind)",
			 io->relay_port_arg ? "--relay" : "--transparent");
	for (size_t k = 0; k < io->n_ll_fs; k++) {
		int fd = io->ll_fs[k].fd;

		if (fd == io->ready_fd || fd == io->masks_fd || fd == io->seccomp_fd)
			bad_args("--ll-fs %d: that descriptor is the one of --%s-fd", fd,
				 fd == io->ready_fd   ? "ready"
				 : fd == io->masks_fd ? "masks"
						      : "seccomp");
	}
}

/* The options up to `--` into IO, and the agent's ARGV after it; usage() on anything else. */
/* The kind of system mount (struct init_system) option OPT makes, or 0. */
static char
system_kind(const char *opt)
{
	return !strcmp(opt, "--system")		 ? 't'
	       : !strcmp(opt, "--system-required") ? 'r'
	       : !strcmp(opt, "--dev")		 ? 'd'
						 : 0;
}

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
		if (!strcmp(argv[i], "--system-root") && i + 1 < argc) {
			io->system_root = argv[++i];
			continue;
		}
		if (!strcmp(argv[i], "--system-bind") && i + 2 < argc) {
			io->system[io->n_system++] = (struct init_system){argv[i + 2], 'b', argv[i + 1]};
			i += 2;
			continue;
		}
		if ((!strcmp(argv[i], "--bind-fd") || !strcmp(argv[i], "--ro-bind-fd")) &&
		    i + 2 < argc) {
			if (number(argv[i + 1], 3, INT_MAX) < 0 || argv[i + 2][0] != '/')
				bad_args("%s %s %s: not a descriptor above 2 and an absolute path",
					 argv[i], argv[i + 1], argv[i + 2]);
			io->system[io->n_system++] = (struct init_system){
			    argv[i + 2], argv[i][2] == 'b' ? 'w' : 'g', argv[i + 1]};
			i += 2;
			continue;
		}
		if (!strcmp(argv[i], "--tmpfs") && i + 1 < argc) {
			io->system[io->n_system++] = (struct init_system){argv[++i], 'm', NULL};
			continue;
		}
		if (!strcmp(argv[i], "--chdir") && i + 1 < argc) {
			io->chdir_path = argv[++i];
			continue;
		}
		if (system_kind(argv[i]) && i + 1 < argc) {
			char kind = system_kind(argv[i]);

			io->system[io->n_system++] = (struct init_system){argv[++i], kind, NULL};
			continue;
		}
		if (!strcmp(argv[i], "--launcher-ids")) {
			io->launcher_ids = true;
			continue;
		}
		if (!strcmp(argv[i], "--transparent") && i + 1 < argc) {
			io->transparent_arg = argv[++i];
			continue;
		}
		if (!strcmp(argv[i], "--ready-fd") && i + 1 < argc) {
			io->ready_fd = atoi(argv[++i]);
			continue;
		}
		if (!strcmp(argv[i], "--masks-fd") && i + 1 < argc) {
			io->masks_fd = atoi(argv[++i]);
			continue;
		}
		if (!strcmp(argv[i], "--seccomp-fd") && i + 1 < argc) {
			io->seccomp_fd = atoi(io->seccomp_arg = argv[++i]);
			continue;
		}
		if (parse_ll_option(io, argc, argv, &i))
			continue;
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
	if (io->n_system && !io->system_root)
		usage(); /* --system or --dev without where to clone from */
	check_ll_options(io);
}

int
main(int argc, char **argv)
{
	struct init_options io = {.ready_fd = -1, .masks_fd = -1, .seccomp_fd = -1};
	struct init_state st = INIT_STATE_INIT;
	char err[1024] = "";
	sigset_t set;
	pid_t child;

	/* Started before the launch was resolved: the rest of the command
	 * line comes on the ready socket (handover.h). */
	if (argc == 3 && !strcmp(argv[1], BWRAP_INIT_ARGS_FROM)) {
		int rc =
		    number(argv[2], 3, INT_MAX) < 0
			? -1
			: handover_receive(atoi(argv[2]), &argc, &argv, &environ, err, sizeof(err));

		if (rc < 0)
			fprintf(stderr, "omnibox-init: %s%s\n",
				err[0] ? err : "bad " BWRAP_INIT_ARGS_FROM, "; nothing ran");
		if (rc != 0)
			return 125;
	}
	io.writable = calloc((size_t)argc, sizeof(*io.writable));
	io.ll_fs = calloc((size_t)argc, sizeof(*io.ll_fs));
	io.ll_ports = calloc((size_t)argc, sizeof(*io.ll_ports));
	io.system = calloc((size_t)argc, sizeof(*io.system));
	/* git's ssh (git_ssh), run by git in the sandbox: none of what follows.
	 * _exit(): git reads its status, and no exit handler may change it
	 * (a sanitizer's leak check needs ptrace, which the filter refuses). */
	if (argc > 1 && !strcmp(argv[1], "--git-ssh")) {
		int rc;

		free(io.writable);
		free(io.ll_fs);
		free(io.ll_ports);
		free(io.system);
		rc = gitssh_client_main(argc - 2, argv + 2);
		fflush(NULL);
		_exit(rc);
	}
	if (!io.writable || !io.ll_fs || !io.ll_ports || !io.system)
		return 125;
	parse_options(&io, argc, argv);
	keep_fds(&io);
	/* The sockets and the masks, which need a privilege, first, and then
	 * no privilege at all, before anything else can go wrong. */
	if ((io.n_ll_fs && init_hold_tree(&st, err, sizeof(err)) < 0) ||
	    init_bind_transparent(&io, &st, err, sizeof(err)) < 0 ||
	    (io.system_root && init_mount_system(io.system_root, io.system, io.n_system, err,
						 sizeof(err)) < 0) ||
	    (io.masks_fd > 2 && init_place_masks(io.masks_fd, err, sizeof(err)) < 0) ||
	    (io.chdir_path && init_chdir(io.chdir_path, err, sizeof(err)) < 0) ||
	    init_become_launcher(&io, err, sizeof(err)) < 0 ||
	    init_drop_caps(err, sizeof(err)) < 0 || init_confine(&io, &st, err, sizeof(err)) < 0 ||
	    init_announce_ready(&io, &st, err, sizeof(err)) < 0 ||
	    (child = init_start_agent(&io, &set, err, sizeof(err))) < 0) {
		if (err[0])
			fprintf(stderr, "omnibox-init: %s\n", err);
		return 125;
	}
	return init_wait_agent(&st, &set, child);
}
