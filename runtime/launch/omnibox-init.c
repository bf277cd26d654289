/*
 * init.c - omnibox-init, the first process inside the sandbox.
 *
 *   omnibox-init [--exec PATH] [--relay PORT SOCKET] [--rlimit-data BYTES]
 *                [--rlimit-cpu SECONDS] [--rlimit-nofile N] [--rlimit-nproc N]
 *                [--fs-write PATH]... [--scope] [--tty] [--ready-fd FD] [--masks-fd FD]
 *                [--seccomp-fd FD] -- ARGV...
 *
 * bwrap starts it as PID 1 of the sandbox's PID namespace (--as-pid-1).
 * It closes every descriptor but 0, 1 and 2 (nothing a caller left open
 * reaches the agent), checks that every mask of --masks-fd is in place,
 * adds the Landlock layer (landlock.h: writes only below the --fs-write
 * paths; with --scope, abstract Unix sockets and signals kept inside),
 * loads the seccomp filter of --seccomp-fd, turned to report its
 * refusals to a listener (seccomp_load.h), sends a byte and the listener on the
 * --ready-fd socket (omnibox-run's proof that bwrap's setup succeeded;
 * omnibox-run answers the refusals from then on) and closes both, starts
 * the agent, passes
 * on the signals omnibox-run forwards, reaps orphans, and exits with the
 * agent's status (128+N for a signal).  When it exits, the kernel kills
 * everything left in the namespace: an agent cannot leave a daemon behind.
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
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/egress/relay.h"
#include "runtime/gitssh/client.h"
#include "runtime/launch/fds.h"
#include "runtime/launch/landlock.h"
#include "runtime/launch/rlimit.h"
#include "runtime/launch/seccomp_load.h"

static pid_t relay_pid;
/* The filter's listener, until omnibox-run has it: no child may keep one. */
static int listener_fd = -1;

/* The agent is gone: so is the relay (nobody is left to use it). */
static int
agent_done(int status)
{
	if (relay_pid > 0) {
		kill(relay_pid, SIGKILL);
		waitpid(relay_pid, NULL, 0);
	}
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

static const int forwarded[] = {SIGINT,	 SIGTERM,  SIGHUP,  SIGQUIT, SIGUSR1,
				SIGUSR2, SIGWINCH, SIGCONT, SIGALRM, SIGTSTP};

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
	fputs("usage: omnibox-init [--exec PATH] [--relay PORT SOCKET] [--rlimit-data BYTES]\n"
	      "                    [--rlimit-cpu SECONDS] [--rlimit-nofile N] [--rlimit-nproc N]\n"
	      "                    [--fs-write PATH]... [--scope] [--tty] [--ready-fd FD] [--masks-fd FD]\n"
	      "                    [--seccomp-fd FD] -- ARGV...\n"
	      "       omnibox-init --git-ssh [SSH-OPTIONS] [USER@]HOST COMMAND\n"
	      "(started by omnibox-run inside the sandbox; not for direct use)\n",
	      stderr);
	exit(125);
}

/* A limit that cannot be set fails the launch: the policy asked for it. */
static int
set_limit(int resource, const char *value)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(value, &end, 10);
	if (errno || *end || end == value) {
		errno = EINVAL;
		return -1;
	}
	return rlimit_set(resource, v);
}

/* PATH, opened without following any symlink on the way (the resolver's
 * paths are canonical: a link there is a racer's). */
static int
open_exact(const char *path)
{
	struct open_how how = {.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
			       .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
	long fd = syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));

	if (fd < 0 && errno == ENOSYS)
		fd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	return (int)fd;
}

/*
 * Each mask bwrap set up by path is where it must be: a /dev/null bind
 * ("f") or a tmpfs mount ("d") at exactly that path.  A process racing the
 * setup (renaming a directory on the way, or swapping it with a symlink)
 * can make a mask land elsewhere; then nothing of the agent's may run.
 */
static int
check_masks(int fd)
{
	char *list = NULL;
	size_t len = 0, cap = 0;
	int rc = 0;

	for (;;) {
		ssize_t n;

		if (len == cap) {
			char *more = realloc(list, cap = cap ? cap * 2 : 65536);

			if (!more) {
				free(list);
				return -1;
			}
			list = more;
		}
		n = read(fd, list + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			free(list);
			return -1;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	for (size_t off = 0; off < len && rc == 0;) {
		const char *entry = list + off, *path;
		size_t elen = strnlen(entry, len - off);
		unsigned long long dev = 0, ino = 0;
		bool have_parent, ok = false;
		struct stat st, up;
		struct statfs sf;
		char *end;
		int pfd;

		if (elen == len - off)
			break; /* no NUL: not ours */
		/* "fDEV:INO:PATH" or "f-:-:PATH" (and "d..." alike). */
		have_parent = entry[1] != '-';
		if (have_parent) {
			dev = strtoull(entry + 1, &end, 10);
			ino = *end == ':' ? strtoull(end + 1, &end, 10) : 0;
			path = *end == ':' ? end + 1 : NULL;
		} else {
			path = strncmp(entry + 1, "-:-:", 4) ? NULL : entry + 5;
		}
		if (!path) {
			rc = -1;
			break;
		}
		/* In the directory the resolver saw: a racer's rename of a parent could
		 * have had bwrap make a new one by that name and mask an empty file. */
		if (have_parent) {
			char *dir = strdup(path), *slash = dir ? strrchr(dir, '/') : NULL;
			int dfd;

			if (slash)
				*(slash == dir ? slash + 1 : slash) = '\0';
			dfd = slash ? open_exact(dir) : -1;
			if (dfd < 0 || fstat(dfd, &up) < 0 ||
			    (unsigned long long)up.st_dev != dev ||
			    (unsigned long long)up.st_ino != ino) {
				if (dfd >= 0)
					close(dfd);
				free(dir);
				fprintf(
				    stderr,
				    "omnibox-init: the directory of %s is not the one the launch "
				    "checked (was it renamed while the sandbox was set up?); "
				    "nothing "
				    "ran\n",
				    path);
				rc = -1;
				break;
			}
			close(dfd);
			free(dir);
		}
		pfd = open_exact(path);
		if (pfd >= 0 && fstat(pfd, &st) == 0) {
			if (entry[0] == 'f')
				ok = S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3);
			else
				/* A tmpfs mounted there, not an empty directory of the
				 * file system below it. */
				ok = S_ISDIR(st.st_mode) && fstatat(pfd, "..", &up, 0) == 0 &&
				     fstatfs(pfd, &sf) == 0 && sf.f_type == TMPFS_MAGIC &&
				     st.st_dev != up.st_dev;
		}
		if (pfd >= 0)
			close(pfd);
		if (!ok) {
			fprintf(
			    stderr,
			    "omnibox-init: the mask of %s is not in place (was its path changed "
			    "while the sandbox was set up?); nothing ran\n",
			    path);
			rc = -1;
		}
		off += elen + 1;
	}
	free(list);
	return rc;
}

static int
start_relay(const char *port_arg, const char *socket_path)
{
	char err[256], *end;
	unsigned long port = strtoul(port_arg, &end, 10);
	int fd;
	pid_t pid;

	if (*end || port == 0 || port > 65535) {
		fprintf(stderr, "omnibox-init: --relay %s: not a port\n", port_arg);
		return -1;
	}
	fd = relay_listen((uint16_t)port, err, sizeof(err));
	if (fd < 0) {
		fprintf(stderr, "omnibox-init: relay: %s\n", err);
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		perror("omnibox-init: fork");
		return -1;
	}
	if (pid == 0) {
		if (listener_fd >= 0)
			close(listener_fd);
		relay_serve(fd, socket_path);
	}
	close(fd);
	relay_pid = pid;
	return 0;
}

/*
 * The seccomp filter of FD, loaded here: after the masks check and
 * Landlock, which need calls it refuses, before anything of the agent's.
 * FD holds the standalone filter, whose refusals are ERRNO(EPERM).  With
 * a ready socket to send it on, its reporting variant (each of those
 * returns turned into SECCOMP_RET_USER_NOTIF, filter_eperm_to_notify) is
 * loaded with a listener (listener_fd) for omnibox-run to answer the
 * refusals; without, or where the kernel has none, the filter as it came:
 * the refusals fail with EPERM uncounted.  A filter that cannot be loaded
 * stops the launch: the agent never runs without one.
 */
static int
load_filter(int fd, bool listener)
{
	struct sock_filter *prog = NULL;
	size_t n;
	char err[256];

#if !defined(__linux__)
	(void)fd;
	(void)listener;
	(void)prog;
	(void)n;
	(void)err;
	fputs("omnibox-init: --seccomp-fd: no seccomp on this system; nothing ran\n", stderr);
	return -1;
#else
	if (filter_read(fd, &prog, &n, err, sizeof(err)) < 0 ||
	    filter_install(prog, n, listener, &listener_fd, err, sizeof(err)) < 0) {
		free(prog);
		fprintf(stderr, "omnibox-init: %s; nothing ran\n", err);
		return -1;
	}
	/* Without a listener, omnibox-run sees none come and says so (unless -q). */
	free(prog);
	return 0;
#endif
}

/*
 * The byte that says the sandbox is set up, with the filter's listener
 * (SCM_RIGHTS) when there is one.  -1 when it cannot be sent: omnibox-run
 * then reports a failed setup, so nothing may run.
 */
static int
send_ready(int sock, int listener)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct iovec iov = {.iov_base = (char *)"1", .iov_len = 1};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
	ssize_t n;

	memset(&ctl, 0, sizeof(ctl));
	if (listener >= 0) {
		struct cmsghdr *c;

		msg.msg_control = ctl.buf;
		msg.msg_controllen = sizeof(ctl.buf);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &listener, sizeof(int));
	}
	do
		n = sendmsg(sock, &msg, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	return n == 1 ? 0 : -1;
}

/* A limit of the command line, set last (set_limits()). */
struct pending_limit {
	const char *opt;
	int resource;
	const char *value;
};

/* The command line: what to set up, and the agent's ARGV. */
struct init_options {
	const char *exec_path, *relay_port_arg, *relay_socket;
	const char **writable;
	size_t n_writable;
	bool scope, landlock, tty;
	int ready_fd, masks_fd, seccomp_fd;
	const char *seccomp_arg;
	struct pending_limit rl[8];
	size_t n_rl;
	char **argv;
};

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
			    (struct pending_limit){limits[k].opt, limits[k].resource, argv[i]};
	}
	if (i >= argc - 1)
		usage();
	io->argv = argv + i + 1;
}

/* The masks checked, Landlock, the filter, the limits: -1 (said) when one fails. */
static int
confine(struct init_options *io)
{
	char err[512];

	if (io->masks_fd > 2 && check_masks(io->masks_fd) < 0)
		return -1;
	/* The second layer, before anything of the agent's runs. */
	if (io->landlock &&
	    landlock_restrict(io->writable, io->n_writable, io->scope, err, sizeof(err)) < 0) {
		fprintf(stderr, "omnibox-init: %s; nothing ran\n", err);
		return -1;
	}
	free(io->writable);
	/* A filter asked for is loaded, or nothing runs. */
	if (io->seccomp_arg && io->seccomp_fd <= 2) {
		fprintf(stderr,
			"omnibox-init: --seccomp-fd %s: not a descriptor above 2; nothing ran\n",
			io->seccomp_arg);
		return -1;
	}
	if (io->seccomp_arg && load_filter(io->seccomp_fd, io->ready_fd > 2) < 0)
		return -1;
	for (size_t k = 0; k < io->n_rl; k++)
		if (set_limit(io->rl[k].resource, io->rl[k].value) < 0) {
			fprintf(stderr, "omnibox-init: %s %s: %s; nothing ran\n", io->rl[k].opt,
				io->rl[k].value, strerror(errno));
			return -1;
		}
	return 0;
}

/* The relay started, and omnibox-run told the sandbox is set up: -1 (said) when not. */
static int
announce_ready(const struct init_options *io)
{
	/*
	 * The egress relay listens before the agent exists, so its first
	 * connection finds it; it runs in a child of its own, limits and all,
	 * and dies with the namespace when this process exits.
	 */
	if (io->relay_port_arg && start_relay(io->relay_port_arg, io->relay_socket) < 0)
		return -1;
	/* The sandbox is set up: from here on a failure is the command's. */
	if (io->ready_fd > 2) {
		if (send_ready(io->ready_fd, listener_fd) < 0) {
			fprintf(stderr, "omnibox-init: cannot tell omnibox-run the sandbox is set "
					"up: %s; nothing ran\n",
				strerror(errno));
			return -1;
		}
		close(io->ready_fd);
	}
	/*
	 * Only omnibox-run holds the listener now.  If it dies, the kernel
	 * fails each refused call with ENOSYS: refused still.
	 */
	if (listener_fd >= 0) {
		close(listener_fd);
		listener_fd = -1;
	}
	return 0;
}

/*
 * The agent started, with every signal of SET (filled here) blocked in
 * this process for sigwait().  Returns its pid, or -1 (said) when it
 * cannot be started; the child never returns.
 */
static pid_t
start_agent(const struct init_options *io, sigset_t *set)
{
	char **argv = io->argv;
	sigset_t old;
	pid_t child;

	/* Take every signal synchronously; the agent gets default dispositions. */
	sigemptyset(set);
	sigaddset(set, SIGCHLD);
	for (size_t k = 0; k < sizeof(forwarded) / sizeof(forwarded[0]); k++)
		sigaddset(set, forwarded[k]);
	sigprocmask(SIG_BLOCK, set, &old);

	/*
	 * --tty: standard input is the sandbox's own terminal (omnibox-run's
	 * pty).  This process leads the session bwrap made, so the terminal
	 * can become its controlling one; the agent gets a process group of its
	 * own in the foreground, and a shell inside has job control.
	 */
	if (io->tty && ioctl(STDIN_FILENO, TIOCSCTTY, 0) < 0) {
		fprintf(stderr, "omnibox-init: cannot take the terminal: %s; nothing ran\n",
			strerror(errno));
		return -1;
	}
	child = fork();
	if (child < 0) {
		perror("omnibox-init: fork");
		return -1;
	}
	if (io->tty && child > 0) {
		setpgid(child, child);
		tcsetpgrp(STDIN_FILENO, child);
	}
	if (child == 0) {
		if (io->tty) {
			/* From a background group until it is done: SIGTTOU ignored. */
			signal(SIGTTOU, SIG_IGN);
			setpgid(0, 0);
			tcsetpgrp(STDIN_FILENO, getpid());
			signal(SIGTTOU, SIG_DFL);
		}
		sigprocmask(SIG_SETMASK, &old, NULL);
		/* Without --exec (macOS), ARGV[0] on the PATH sandbox-exec passed on. */
		if (io->exec_path)
			execv(io->exec_path, argv);
		else
			execvp(argv[0], argv);
		fprintf(stderr, "omnibox-init: cannot run %s: %s\n",
			io->exec_path ? io->exec_path : argv[0], strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}
	return child;
}

/*
 * Until the agent is gone: the signals of SET passed on to it, orphans
 * reaped.  Returns the agent's status (agent_done()).
 */
static int
wait_agent(const sigset_t *set, pid_t child)
{
	for (;;) {
		int sig;

		if (sigwait(set, &sig) != 0)
			continue;
		if (sig != SIGCHLD) {
			kill(child, sig);
			continue;
		}
		for (;;) {
			int status;
			pid_t pid = waitpid(-1, &status, WNOHANG);

			if (pid <= 0)
				break;
			if (pid == relay_pid) {
				/* Egress fails closed from here on: nothing listens. */
				fprintf(stderr, "omnibox-init: the egress relay stopped\n");
				relay_pid = 0;
				continue;
			}
			if (pid != child)
				continue; /* an orphan, reaped */
			if (WIFEXITED(status) || WIFSIGNALED(status))
				return agent_done(status);
		}
	}
}

int
main(int argc, char **argv)
{
	struct init_options io = {.ready_fd = -1, .masks_fd = -1, .seccomp_fd = -1};
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
	if (confine(&io) < 0 || announce_ready(&io) < 0)
		return 125;
	child = start_agent(&io, &set);
	if (child < 0)
		return 125;
	return wait_agent(&set, child);
}
