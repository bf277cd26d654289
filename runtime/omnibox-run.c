/*
 * omnibox-run.c - omnibox-run: compile a policy and launch the agent inside it.
 *
 * The policy is compiled in this process with the same library as
 * omnibox-compile (one parser), resolved against this machine, and handed to
 * bubblewrap: the arguments through `--args FD`, the seccomp filter through
 * omnibox-init's `--seccomp-fd FD` (sealed memfds, nothing on disk an agent
 * could swap), the environment rebuilt from the allow-list (values never on
 * bwrap's command line, which /proc makes world-readable).  omnibox-run
 * stays the parent: it forwards signals, answers the filter's refusals
 * (notify.h), removes the scratch dir, and returns the command's status.
 * Whenever something cannot be set up it exits 125 and runs nothing: there
 * is no unsandboxed fallback.
 */
#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "compiler/base/fileio.h"
#include "compiler/policy.h"
#include "compiler/base/textbuf.h"
#include "compiler/base/textesc.h"
#include "emitters/bwrap.h"
#include "compiler/decide/env.h"
#include "runtime/launch/cgroup.h"
#include "runtime/launch/copyback.h"
#include "runtime/launch/fds.h"
#include "runtime/launch/notify.h"
#include "runtime/launch/pty.h"
#include "runtime/launch/rlimit.h"
#include "emitters/query.h"
#include "runtime/launch/janitor.h"
#include "runtime/launch/landlock.h"
#include "runtime/egress/credentials.h"
#include "runtime/resolve/command.h"
#include "runtime/egress/proxy.h"
#include "runtime/gitssh/broker.h"
#include "compiler/decide/refuse.h"
#include "runtime/resolve/resolve.h"
#include "runtime/resolve/why.h"
#include "runtime/resolve/walk.h"
#if defined(__APPLE__) || defined(OMNIBOX_TEST_DARWIN)
#include "runtime/launch/darwin.h"
#include "runtime/egress/relay.h"
#endif
#if defined(__APPLE__)
#include <mach-o/dyld.h>
#endif

/* Whether this build launches with Seatbelt (its --why answers from the IR). */
#if defined(__APPLE__) || defined(OMNIBOX_TEST_DARWIN)
#define OMNIBOX_DARWIN_LAUNCH 1
#else
#define OMNIBOX_DARWIN_LAUNCH 0
#endif

#define EXIT_SETUP 125
#define OMNIBOX_VERSION "0.1.0"

extern char **environ;

/* The filter, generated at build time (runtime/seccomp_blob.S). */
extern const unsigned char omnibox_seccomp_bpf[], omnibox_seccomp_bpf_end[];

struct options {
	const char *input;
	const char *terminal;
	const char *cwd;
	const char *egress_log;
	const char *egress_hosts;
	const char *egress_ca;
	bool dry_run, quiet, strict_toplevel, pty, no_pty;
	const char *why; /* --why PATH|URL */
	bool verbose;
	char **command;
	size_t n_command;
};

static const char usage_text[] =
    "usage: omnibox-run [OPTIONS] AGENT.yaml [-- COMMAND [ARG...]]\n"
    "\n"
    "Run COMMAND (or a terminal of the agent) inside the sandbox its policy describes.\n"
    "\n"
    "      --terminal=NAME  run terminals.NAME: its command and arguments under its own\n"
    "                       or the inherited os_env\n"
    "      --cwd=DIR        the workspace (default: os_env.cwd, else the current directory)\n"
    "      --dry-run        print the resolved launch (bwrap arguments, environment names)\n"
    "                       and exit without running anything\n"
    "      --egress-log=FILE  with egress_rules: append the proxy's decisions (one line\n"
    "                       each, with the rule that matched) to FILE, not stderr\n"
    "      --egress-hosts=FILE  the proxy resolves names through this hosts file\n"
    "                       instead of /etc/hosts (before DNS), e.g. for tests\n"
    "      --egress-ca=FILE the proxy verifies upstream servers against the CAs in\n"
    "                       FILE (PEM) instead of the system store\n"
    "      --strict-toplevel  an unknown top-level key of the policy is an error\n"
    "      --why=PATH|URL   say whether the command may read and write PATH (or GET\n"
    "                       URL), and which rule decides, then exit; nothing runs; a\n"
    "                       path is answered from the launch resolved as --dry-run does\n"
    "      --pty, --no-pty  give the sandbox a terminal of its own (job control, Ctrl-C,\n"
    "                       resizing), the default when standard input and output are\n"
    "                       a terminal;\n"
    "                       its egress log then goes to a file, never to the screen\n"
    "  -v, --verbose        print the egress proxy's refusals as they happen, even when\n"
    "                       its log goes to a file, and the system calls the seccomp\n"
    "                       filter refuses\n"
    "  -q, --quiet          no warnings\n"
    "  -V, --version        print the version\n"
    "  -h, --help           print this help\n"
    "\n"
    "Options may come before or after AGENT.yaml; everything after '--' is the command.\n"
    "\n"
    "exit status: the command's own; 128+N if it was killed by signal N; 125 when\n"
    "omnibox-run itself fails (invalid policy, missing bwrap, setup error), in which\n"
    "case nothing ran.\n";

/* What a failed launch removes on its way out (die()). */
static struct host_entry *undo_scratch;
static struct launch_plan *undo_plan;
/* RLIMIT_NOFILE as omnibox-run found it: what the sandbox gets. */
static struct rlimit nofile_given = {RLIM_INFINITY, RLIM_INFINITY};

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/*
 * Every message omnibox-run writes to stderr goes out here.  What the agent
 * could have chosen (a name, a path, a link target) was escaped where it
 * entered the message (arena_escape()); the whole is escaped once more,
 * keeping its lines and its escapes (TEXT_ESC_AGAIN), so that a piece that
 * was not still cannot act on the terminal.
 */
static void
vsay(const char *fmt, va_list ap)
{
	struct textbuf shown = {0};
	char *msg;

	if (vasprintf(&msg, fmt, ap) < 0)
		return;
	tb_escape(&shown, msg, TEXT_ESC_AGAIN | TEXT_ESC_LINES);
	free(msg);
	if (shown.len)
		fwrite(shown.data, 1, shown.len, stderr);
	tb_free(&shown);
}

static void
say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(fmt, ap);
	va_end(ap);
}

static void
die(const char *fmt, ...)
{
	va_list ap;

	if (undo_plan)
		launch_cleanup(undo_plan);
	if (undo_scratch)
		host_remove(undo_scratch, true, false);

	fputs("omnibox-run: ", stderr);
	va_start(ap, fmt);
	vsay(fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(EXIT_SETUP);
}

static void
parse_options(int argc, char **argv, struct options *o)
{
	enum {
		OPT_TERMINAL = 256,
		OPT_CWD,
		OPT_DRY,
		OPT_VERSION,
		OPT_HELP,
		OPT_EGRESS_LOG,
		OPT_EGRESS_HOSTS,
		OPT_EGRESS_CA,
		OPT_STRICT_TOPLEVEL,
		OPT_PTY,
		OPT_NO_PTY,
		OPT_WHY
	};
	static const struct option longopts[] = {
	    {"terminal", required_argument, NULL, OPT_TERMINAL},
	    {"cwd", required_argument, NULL, OPT_CWD},
	    {"dry-run", no_argument, NULL, OPT_DRY},
	    {"egress-log", required_argument, NULL, OPT_EGRESS_LOG},
	    {"egress-hosts", required_argument, NULL, OPT_EGRESS_HOSTS},
	    {"egress-ca", required_argument, NULL, OPT_EGRESS_CA},
	    {"strict-toplevel", no_argument, NULL, OPT_STRICT_TOPLEVEL},
	    {"pty", no_argument, NULL, OPT_PTY},
	    {"no-pty", no_argument, NULL, OPT_NO_PTY},
	    {"why", required_argument, NULL, OPT_WHY},
	    {"quiet", no_argument, NULL, 'q'},
	    {"verbose", no_argument, NULL, 'v'},
	    {"version", no_argument, NULL, 'V'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int c, dash = argc;

	memset(o, 0, sizeof(*o));
	opterr = 0;
	/* The command follows "--", its options its own: getopt sees only
	 * what comes before, in any order (GNU style). */
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--")) {
			dash = i;
			break;
		}
	while ((c = getopt_long(dash, argv, ":qvhV", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_TERMINAL:
			o->terminal = optarg;
			break;
		case OPT_CWD:
			o->cwd = optarg;
			break;
		case OPT_DRY:
			o->dry_run = true;
			break;
		case OPT_EGRESS_LOG:
			o->egress_log = optarg;
			break;
		case OPT_EGRESS_HOSTS:
			o->egress_hosts = optarg;
			break;
		case OPT_EGRESS_CA:
			o->egress_ca = optarg;
			break;
		case OPT_STRICT_TOPLEVEL:
			o->strict_toplevel = true;
			break;
		case OPT_PTY:
			o->pty = true;
			o->no_pty = false;
			break;
		case OPT_WHY:
			o->why = optarg;
			break;
		case OPT_NO_PTY:
			o->no_pty = true;
			o->pty = false;
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'v':
			o->verbose = true;
			break;
		case 'V':
			printf("omnibox-run %s\n", OMNIBOX_VERSION);
			exit(0);
		case 'h':
			fputs(usage_text, stdout);
			exit(0);
		case ':':
			die("option '%s' needs a value (see --help)", argv[optind - 1]);
		default:
			die("unknown option '%s' (see --help)", argv[optind - 1]);
		}
	}
	/* getopt moved the operands to the end, in order. */
	if (optind == dash)
		die("no AGENT.yaml given (see --help)");
	o->input = argv[optind++];
	if (optind < dash)
		die("unexpected '%s': put the command after '--'", argv[optind]);
	o->command = argv + (dash < argc ? dash + 1 : argc);
	o->n_command = (size_t)(argc - (dash < argc ? dash + 1 : argc));
}

/* The directory this program was started from. */
static char *
self_dir(struct arena *a)
{
	char self[PATH_MAX], *slash;
#if defined(__APPLE__)
	uint32_t size = sizeof(self);
	char real[PATH_MAX];

	if (_NSGetExecutablePath(self, &size) != 0 || !realpath(self, real))
		return NULL;
	memcpy(self, real, strlen(real) + 1);
#else
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0)
		return NULL;
	self[n] = '\0';
#endif
	slash = strrchr(self, '/');
	*slash = '\0';
	return arena_strdup(a, self);
}


/* ---- running bwrap ---------------------------------------------------------- */

struct run_state {
	struct event_base *base;
	pid_t bwrap;
	pid_t sandbox_pid; /* omnibox-init, from --json-status-fd; 0 until known */
	int status;
	bool done;
	int status_fd;
	struct event *status_ev;
	char status_buf[4096];
	size_t status_len;
	struct pty *pty; /* the sandbox's terminal, or NULL */
	struct notify *notify; /* the seccomp refusals, once omnibox-init is ready */
	struct event *ready_ev;
	bool ready; /* omnibox-init's byte came */
};

static void on_status(evutil_socket_t fd, short what, void *arg);

static void
on_signal(evutil_socket_t sig, short what, void *arg)
{
	struct run_state *st = arg;

	(void)what;
	if (sig == SIGCHLD) {
		int status;

		if (waitpid(st->bwrap, &status, WNOHANG) == st->bwrap) {
			st->status = status;
			st->done = true;
			event_base_loopexit(st->base, NULL);
		}
		return;
	}
	/* The user's terminal changed size: so does the sandbox's. */
	if (sig == SIGWINCH && st->pty) {
		pty_resize(st->pty);
		return;
	}
	/* bwrap may have named omnibox-init already, in a line this loop has
	 * not read yet: read it first (without waiting), or the signal would
	 * go to bwrap instead of the agent. */
	if (!st->sandbox_pid) {
		struct pollfd p = {st->status_fd, POLLIN, 0};

		if (poll(&p, 1, 0) == 1 && (p.revents & POLLIN))
			on_status(st->status_fd, EV_READ, st);
	}
	/* To omnibox-init, which hands it to the agent; before the sandbox
	 * exists, to bwrap itself. */
	kill(st->sandbox_pid ? st->sandbox_pid : st->bwrap, (int)sig);
}

static void
on_status(evutil_socket_t fd, short what, void *arg)
{
	struct run_state *st = arg;
	ssize_t n;
	char *p;

	(void)what;
	n = read(fd, st->status_buf + st->status_len, sizeof(st->status_buf) - 1 - st->status_len);
	if (n == 0 && st->status_ev) {
		/* End of the stream: stop watching, or the loop would spin on it. */
		event_del(st->status_ev);
		return;
	}
	if (n < 0)
		return;
	st->status_len += (size_t)n;
	st->status_buf[st->status_len] = '\0';
	p = strstr(st->status_buf, "\"child-pid\"");
	if (p && !st->sandbox_pid) {
		p = strchr(p, ':');
		if (p)
			st->sandbox_pid = (pid_t)strtol(p + 1, NULL, 10);
	}
	if (st->status_len > sizeof(st->status_buf) / 2) {
		st->status_len = 0; /* keep the buffer small; the pid is known by now */
	}
}

/* omnibox-init's ready byte, and the seccomp listener with it: served from now on. */
static void
on_ready(evutil_socket_t fd, short what, void *arg)
{
	struct run_state *st = arg;
	int r = notify_ready(st->notify, fd);

	(void)what;
	if (r >= 0) {
		st->ready = r == 1;
		event_del(st->ready_ev); /* one message, or the end of the stream */
	}
}

static int
exit_status_of(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return EXIT_SETUP;
}

/* The argv of a NUL-separated TAIL after "bwrap --args FD --"; free() it. */
static char **
bwrap_argv(const struct textbuf *tail, const char *args_fd)
{
	size_t n = 4;
	char **argv;

	for (size_t i = 0; i < tail->len; i++)
		n += tail->data[i] == '\0';
	argv = calloc(n + 1, sizeof(*argv));
	if (!argv)
		die("out of memory");
	n = 0;
	argv[n++] = (char *)"bwrap";
	argv[n++] = (char *)"--args";
	argv[n++] = (char *)args_fd;
	argv[n++] = (char *)"--";
	for (size_t i = 0; i < tail->len; i += strlen(tail->data + i) + 1)
		argv[n++] = tail->data + i;
	argv[n] = NULL;
	return argv;
}

/* Every descriptor bwrap is handed on purpose: the rest is closed before it runs. */
static size_t
bwrap_fds(const struct launch_plan *plan, int args_fd, int **out)
{
	const struct bwrap_context *c = &plan->ctx;
	int *v =
	    calloc(6 + c->n_grants + c->n_reexpose + c->n_command_dirs + c->n_pins + c->n_protects,
		   sizeof(*v));
	size_t n = 0;

	if (!v)
		die("out of memory");
	v[n++] = args_fd;
	v[n++] = c->seccomp_fd;
	v[n++] = c->status_fd;
	v[n++] = c->ready_fd;
	v[n++] = c->masks_fd;
	v[n++] = c->init_fd;
	for (size_t i = 0; i < c->n_grants; i++)
		v[n++] = c->grants[i].fd;
	for (size_t i = 0; i < c->n_reexpose; i++)
		v[n++] = c->reexpose[i].fd;
	for (size_t i = 0; i < c->n_command_dirs; i++)
		v[n++] = c->command_dirs[i].fd;
	for (size_t i = 0; i < c->n_pins; i++)
		v[n++] = c->pins[i].fd;
	for (size_t i = 0; i < c->n_protects; i++)
		v[n++] = c->protects[i].fd;
	*out = v;
	return n;
}

/* After a failed setup: a bwrap without --bind-fd needs an upgrade, not a retry. */
/* The first line of a file of /proc/sys, or "" when there is none. */
static const char *
sysctl_value(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");

	buf[0] = '\0';
	if (f) {
		if (!fgets(buf, (int)len, f))
			buf[0] = '\0';
		fclose(f);
	}
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

/*
 * bwrap failed: when this process cannot make the namespaces bwrap needs,
 * say why and how to fix it, instead of leaving the user with bwrap's own
 * "Permission denied".
 */
static void
namespace_hint(void)
{
	char v[64];
	int status = 0;
	pid_t pid = fork();

	if (pid == 0)
		_exit(unshare(CLONE_NEWUSER | CLONE_NEWNS) == 0 ? 0 : errno ? errno : 1);
	if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status) == 0)
		return;
	if (!strcmp(sysctl_value("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", v,
				 sizeof(v)),
		    "1"))
		say("omnibox-run: AppArmor forbids unprivileged user namespaces here (Ubuntu "
		    "23.10 and later): allow them for bwrap with an AppArmor profile (an "
		    "/etc/apparmor.d/bwrap granting 'userns,'), or set "
		    "kernel.apparmor_restrict_unprivileged_userns=0\n");
	else if (!strcmp(sysctl_value("/proc/sys/user/max_user_namespaces", v, sizeof(v)), "0"))
		say("omnibox-run: user namespaces are disabled "
		    "(user.max_user_namespaces=0): set it above 0\n");
	else if (!strcmp(sysctl_value("/proc/sys/kernel/unprivileged_userns_clone", v, sizeof(v)),
			 "0"))
		say("omnibox-run: unprivileged user namespaces are disabled "
		    "(kernel.unprivileged_userns_clone=0): set it to 1\n");
	else
		say("omnibox-run: this process cannot create namespaces (%s): a container or "
		    "sandbox around it forbids them; run omnibox where user namespaces are "
		    "allowed (for Docker: a seccomp profile that permits unshare and clone, "
		    "or --privileged)\n",
		    strerror(WEXITSTATUS(status)));
}

static void
bwrap_hint(const char *bwrap)
{
	char cmd[PATH_MAX + 64];
	FILE *f;
	bool has = false;
	char line[512];

	snprintf(cmd, sizeof(cmd), "'%s' --help 2>&1", bwrap);
	if (strchr(bwrap, '\'') || !(f = popen(cmd, "r")))
		return;
	while (fgets(line, sizeof(line), f))
		has |= strstr(line, "--ro-bind-fd") != NULL;
	pclose(f);
	if (!has)
		say("omnibox-run: this bwrap has no --bind-fd/--ro-bind-fd, which omnibox "
		    "mounts every grant with; install bubblewrap 0.10 or later (Debian 12: "
		    "0.8.0-2+deb12u1)\n");
}

static int
run_bwrap(struct event_base *base, const char *bwrap, const struct launch_plan *plan,
	  const struct textbuf *tail, int args_fd, int status_pipe[2], int ready_sock[2],
	  const char *cgroup, struct pty *pty, struct notify *notify)
{
	static const int forward[] = {SIGINT,  SIGTERM, SIGHUP,	  SIGQUIT,
				      SIGUSR1, SIGUSR2, SIGWINCH, SIGCONT};
	struct event *evs[sizeof(forward) / sizeof(forward[0]) + 3];
	struct run_state st = {0};
	size_t n_evs = 0, n_keep;
	char **argv, fdbuf[16];
	int *keep;

	snprintf(fdbuf, sizeof(fdbuf), "%d", args_fd);
	argv = bwrap_argv(tail, fdbuf);
	n_keep = bwrap_fds(plan, args_fd, &keep);

	st.base = base;
	st.status_fd = status_pipe[0];
	st.pty = pty;
	evs[n_evs] = evsignal_new(st.base, SIGCHLD, on_signal, &st);
	event_add(evs[n_evs++], NULL);
	for (size_t i = 0; i < sizeof(forward) / sizeof(forward[0]); i++) {
		evs[n_evs] = evsignal_new(st.base, forward[i], on_signal, &st);
		event_add(evs[n_evs++], NULL);
	}
	evs[n_evs] = event_new(st.base, status_pipe[0], EV_READ | EV_PERSIST, on_status, &st);
	st.status_ev = evs[n_evs];
	event_add(evs[n_evs++], NULL);
	/* Watched from the start: the agent's first refused call waits for it. */
	st.notify = notify;
	evs[n_evs] = event_new(st.base, ready_sock[0], EV_READ | EV_PERSIST, on_ready, &st);
	st.ready_ev = evs[n_evs];
	event_add(evs[n_evs++], NULL);

	st.bwrap = fork();
	if (st.bwrap < 0)
		die("fork: %s", strerror(errno));
	if (st.bwrap == 0) {
		sigset_t none;

		/* Its own process group: terminal signals reach omnibox-run,
		 * which forwards them to the agent instead of killing bwrap. */
		setpgid(0, 0);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (cgroup && cgroup_enter(cgroup) < 0) {
			say("omnibox-run: cannot enter the cgroup %s; nothing ran\n", cgroup);
			_exit(EXIT_SETUP);
		}
		/* The sandbox's own terminal as 0, 1 and 2: the user's never enters. */
		if (pty && (dup2(pty->slave, 0) < 0 || dup2(pty->slave, 1) < 0 ||
			    dup2(pty->slave, 2) < 0))
			_exit(EXIT_SETUP);
		/* 0, 1, 2 and what the argv names; nothing the caller left open. */
		fds_keep_only(keep, n_keep);
		/* The sandbox starts with the descriptor limit omnibox-run was given. */
		setrlimit(RLIMIT_NOFILE, &nofile_given);
		execve(bwrap, argv, plan->env);
		say("omnibox-run: cannot run %s: %s\n", bwrap, strerror(errno));
		_exit(EXIT_SETUP);
	}
	free(keep);
	close(status_pipe[1]);
	close(ready_sock[1]);
	if (pty) {
		/* Only the sandbox holds the slave now: its end is the master's EOF. */
		close(pty->slave);
		pty->slave = -1;
		if (pty_raw() < 0 || pty_relay_start(pty, base) < 0) {
			pty_restore();
			say("omnibox-run: cannot relay the terminal: %s\n", strerror(errno));
		}
	}
	while (!st.done)
		if (event_base_loop(st.base, EVLOOP_ONCE) < 0)
			break;
	if (pty)
		pty_finish(pty);
	/* Read what is left of the status stream. */
	st.status_ev = NULL;
	on_status(status_pipe[0], EV_READ, &st);
	for (size_t i = 0; i < n_evs; i++)
		event_free(evs[i]);
	free(argv);
	/*
	 * bwrap reports the child's PID before that child sets up the mounts;
	 * only omnibox-init's byte on the ready socket says the setup worked.
	 * Without it, whatever bwrap exited with, nothing of the agent ran.
	 * (It may have come with bwrap's end, before the loop could see it.)
	 */
	if (!st.ready && notify_ready(notify, ready_sock[0]) != 1)
		st.sandbox_pid = 0;
	if (!st.sandbox_pid) {
		say("omnibox-run: bwrap could not set up the sandbox (status %d); "
		    "nothing ran\n",
		    exit_status_of(st.status));
		bwrap_hint(bwrap);
		namespace_hint();
		return EXIT_SETUP;
	}
	return exit_status_of(st.status);
}

/*
 * What the proxy refused for want of a rule, once the run is over: the agent
 * saw only a 403, the user sees here which rule would have allowed it.
 */
static void
denials_summary(const struct proxy *proxy, const char *policy)
{
	const struct proxy_denial *v;
	unsigned long others, total = 0;
	size_t n = proxy_denials(proxy, &v, &others);

	if (!n)
		return;
	for (size_t i = 0; i < n; i++)
		total += v[i].count;
	say("omnibox-run: the egress proxy refused %lu request%s no rule of %s allows; "
	    "rules that would allow them:\n",
	    total + others, total + others == 1 ? "" : "s", policy);
	for (size_t i = 0; i < n; i++)
		say("  \"%s\"   # %s%s\n", v[i].rule, v[i].request,
		    v[i].count > 1 ? " (and more like it)" : "");
	if (others)
		say("  ... and %lu more\n", others);
}

/* ---- --why ------------------------------------------------------------------------ */

/*
 * The policy's answer for WHAT: a path from the launch PLAN resolved on this
 * machine (why.h), when there is one; a URL, or any query without a plan,
 * from the IR (query.h).
 */
static int
explain_why(struct arena *a, const struct policy *p, const struct launch_plan *plan,
	    const char *what)
{
	const char *texts[3];
	size_t n = 0;
	int rc = 0;

	if (!strncmp(what, "http://", 7) || !strncmp(what, "https://", 8)) {
		texts[n++] = arena_printf(a, "GET %s", what);
	} else if (strchr(what, ' ')) {
		texts[n++] = what; /* "ACCESS TARGET", as for --query */
	} else {
		texts[n++] = arena_printf(a, "read %s", what);
		texts[n++] = arena_printf(a, "write %s", what);
	}
	for (size_t i = 0; i < n; i++) {
		struct query q;
		struct decision d;
		char err[512];

		if (query_parse(a, texts[i], &q, err, sizeof(err)) < 0) {
			say("omnibox-run: --why: %s\n", err);
			rc = 2;
			continue;
		}
		if (plan && (q.access == QUERY_READ || q.access == QUERY_WRITE)) {
			const char *path = launch_why_path(a, plan, strchr(texts[i], ' ') + 1);

			launch_why(a, plan, path, q.access, &d);
			printf("%s %s: %s, %s\n", q.access == QUERY_READ ? "read" : "write",
			       arena_escape(a, path), d.allowed ? "allowed" : "refused",
			       arena_escape(a, d.why));
			continue;
		}
		query_decide(a, p, TARGET_LINUX, &q, &d);
		printf("%s: %s, %s", arena_escape(a, texts[i]), d.allowed ? "allowed" : "refused",
		       d.why);
		if (d.line)
			printf(" (%s:%u)", p->source, d.line);
		putchar('\n');
	}
	return rc;
}

/* ---- egress ------------------------------------------------------------------------ */

/* --verbose: the proxy's refusals on the screen as they happen. */
static bool verbose_denials;

static void
egress_log_line(void *arg, const char *line)
{
	FILE *f = arg;

	fprintf(f, "omnibox-egress: %s\n", line);
	fflush(f);
	if (verbose_denials && f != stderr && strstr(line, " deny ")) {
		say("omnibox-egress: %s", line);
		fputs(pty_is_raw() ? "\r\n" : "\n", stderr);
	}
}

/* For --dry-run: the names credential placeholders would be set in, unread. */
static char **
placeholder_names(struct arena *a, const struct sandbox *sb, size_t *n)
{
	char **v = NULL;
	size_t cap = 0;
	bool aws = false, aws_token = false;

	*n = 0;
	for (size_t i = 0; i < sb->n_creds; i++) {
		for (size_t k = 0; k < sb->creds[i].env.n; k++)
			*ARENA_PUSH(a, v, *n, cap) =
			    arena_printf(a, "%s=oa_cred_{RANDOM}", sb->creds[i].env.v[k].s);
		aws |= sb->creds[i].type == CRED_AWS_SIGV4;
		aws_token |= sb->creds[i].type == CRED_AWS_SIGV4 &&
			     sb->creds[i].aws_token.kind != CRED_SOURCE_NONE;
	}
	/* One set for every aws_sigv4 entry (credentials.c); a profile's token
	 * is only known once the profile is read, at launch. */
	if (aws) {
		*ARENA_PUSH(a, v, *n, cap) = arena_strdup(a, "AWS_ACCESS_KEY_ID=oa_cred_{RANDOM}");
		*ARENA_PUSH(a, v, *n, cap) =
		    arena_strdup(a, "AWS_SECRET_ACCESS_KEY=oa_cred_{RANDOM}");
	}
	if (aws_token)
		*ARENA_PUSH(a, v, *n, cap) = arena_strdup(a, "AWS_SESSION_TOKEN=oa_cred_{RANDOM}");
	return v;
}

/*
 * Real secrets are read here, outside the sandbox; only placeholders go
 * in (as *ENV).  Dies (undoing the launch) when one cannot be read.
 */
static void
egress_credentials(struct arena *a, const struct sandbox *sb, const char *home, const char *scratch,
		   struct cred_runtime *creds)
{
	char err[4096];

	if (!sb->n_creds)
		return;
	if (cred_prepare(a, sb, environ, home, scratch, creds, err, sizeof(err)) < 0 ||
	    cred_write_files(creds, scratch, err, sizeof(err)) < 0) {
		die("credential_proxy: %s; nothing ran", err);
	}
}

/* The proxy of a launch whose scratch dir is SCRATCH, logging to LOG. */
static void
egress_config(struct arena *a, const struct options *o, const struct sandbox *sb,
	      const char *scratch, const char *socket_path, const struct cred_runtime *creds,
	      FILE *log, struct proxy_config *pc)
{
	memset(pc, 0, sizeof(*pc));
	pc->socket_path = socket_path;
	pc->ca_bundle_path = arena_printf(a, "%s/%s", scratch, ENV_CA_BUNDLE);
	pc->rules = sb->egress;
	pc->n_rules = sb->n_egress;
	pc->allow_private = sb->egress_allow_private.value;
	pc->creds = creds->creds;
	pc->n_creds = creds->n_creds;
	pc->hosts_file = o->egress_hosts;
	pc->system_ca_file = o->egress_ca;
	pc->log = egress_log_line;
	pc->log_arg = log;
	/* The proxy holds no more memory than the policy gives the sandbox. */
	if (sb->limits.memory.present && sb->limits.memory.value < PROXY_MEMORY_DEFAULT)
		pc->memory_limit = (size_t)sb->limits.memory.value;
}

/*
 * The egress log at PATH, opened for appending without following a link:
 * it lies in a directory others may write ($TMPDIR, or wherever --egress-log
 * names), where a link or a file planted there would have the proxy's log
 * written over a file of someone else's choosing, or read by them.  Only a
 * regular file of this user is written.  EXCL: the name is ours and must be
 * new.  NULL with errno (EEXIST for a name taken; EPERM for a file that is
 * not ours or not regular) when it cannot be opened.
 */
static FILE *
egress_log_at(const char *path, bool excl)
{
	int flags = O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC | (excl ? O_EXCL : 0);
	int fd = open(path, flags, 0600);
	struct stat st;
	FILE *f;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
		close(fd);
		errno = EPERM;
		return NULL;
	}
	f = fdopen(fd, "a");
	if (!f)
		close(fd);
	return f;
}

/*
 * --egress-log's file (an existing one is appended to), or stderr.  Dies
 * (die() undoes the launch) when it cannot be opened.
 */
static FILE *
egress_log_open(struct arena *a, const struct options *o)
{
	FILE *f;

	if (!o->egress_log)
		return stderr;
	f = egress_log_at(o->egress_log, false);
	if (!f && errno == ELOOP)
		die("--egress-log %s is a symbolic link; name the file itself",
		    arena_escape(a, o->egress_log));
	if (!f && errno == EPERM)
		die("--egress-log %s is not a regular file of yours; name another",
		    arena_escape(a, o->egress_log));
	if (!f)
		die("--egress-log %s: %s", arena_escape(a, o->egress_log), strerror(errno));
	return f;
}

/*
 * The egress log of an interactive launch, beside SCRATCH (a new file, under
 * another name when one is already there); its name in *NAME.  Dies when
 * none can be made.
 */
static FILE *
egress_log_create(struct arena *a, const char *scratch, const char **name)
{
	const char *path = arena_printf(a, "%s.egress.log", scratch);
	FILE *f;

	for (int i = 0; i < 100; i++) {
		uint32_t r;

		f = egress_log_at(path, true);
		if (f) {
			*name = path;
			return f;
		}
		if (errno != EEXIST)
			break;
		if (getrandom(&r, sizeof(r), 0) != sizeof(r))
			r = (uint32_t)getpid() ^ (uint32_t)i;
		path = arena_printf(a, "%s.egress-%08x.log", scratch, (unsigned)r);
	}
	die("cannot create the egress log %s: %s", arena_escape(a, path), strerror(errno));
}

/* ---- macOS ------------------------------------------------------------------------ */

#if defined(__APPLE__) || defined(OMNIBOX_TEST_DARWIN)
static void
on_parent_gone(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	event_base_loopbreak(arg);
}

/*
 * The egress proxy of a macOS launch, in a process of its own (the launch
 * there waits for sandbox-exec without an event loop).  It is listening
 * when this returns, and it ends when *ALIVE is closed or omnibox-run dies
 * (the pipe's end of file).  Out of the terminal's process group: a Ctrl-C
 * is for the agent.  Dies (undoing the launch) when the proxy cannot start.
 */
static pid_t
start_proxy_process(const struct proxy_config *pc, int *alive)
{
	int ready[2], keep[2];
	char msg[4096];
	ssize_t n;
	pid_t pid;

	if (pipe(ready) < 0 || pipe(keep) < 0) {
		die("pipe: %s", strerror(errno));
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		die("fork: %s", strerror(errno));
	}
	if (pid == 0) {
		struct event_base *base;
		struct event *gone = NULL;
		struct proxy *proxy = NULL;

		setpgid(0, 0);
		signal(SIGINT, SIG_IGN);
		signal(SIGQUIT, SIG_IGN);
		signal(SIGHUP, SIG_IGN);
		close(ready[0]);
		close(keep[1]);
		fcntl(ready[1], F_SETFD, FD_CLOEXEC);
		fcntl(keep[0], F_SETFD, FD_CLOEXEC);
		msg[0] = '\0';
		base = event_base_new();
		if (base)
			proxy = proxy_new(base, pc, msg, sizeof(msg));
		else
			snprintf(msg, sizeof(msg), "cannot create the event loop");
		if (proxy) {
			gone = event_new(base, keep[0], EV_READ, on_parent_gone, base);
			if (!gone || event_add(gone, NULL) < 0) {
				snprintf(msg, sizeof(msg), "cannot watch omnibox-run");
				proxy_free(proxy);
				proxy = NULL;
			}
		}
		if (!proxy) {
			(void)!write(ready[1], msg, strlen(msg));
			_exit(1);
		}
		(void)!write(ready[1], "", 1);
		close(ready[1]);
		event_base_dispatch(base);
		proxy_free(proxy);
		event_free(gone);
		event_base_free(base);
		if (pc->log_arg)
			fflush(pc->log_arg);
		_exit(0);
	}
	close(ready[1]);
	close(keep[0]);
	fcntl(keep[1], F_SETFD, FD_CLOEXEC);
	do
		n = read(ready[0], msg, sizeof(msg) - 1);
	while (n < 0 && errno == EINTR);
	close(ready[0]);
	if (n != 1 || msg[0] != '\0') {
		msg[n > 0 ? n : 0] = '\0';
		close(keep[1]);
		waitpid(pid, NULL, 0);
		die("the egress proxy cannot start: %s; nothing ran", n > 0 ? msg : "it exited");
	}
	*alive = keep[1];
	return pid;
}

/*
 * macOS: the same policy through sandbox-exec (runtime/darwin_launch.c).
 * With egress_rules, the proxy runs outside (start_proxy_process()) on a
 * Unix socket in the scratch dir, and omnibox-init runs inside, under the
 * profile: it starts the relay on 127.0.0.1:PORT, then the command.  The
 * Linux build compiles this as build/test-omnibox-run-darwin, whose tests
 * put a stand-in for sandbox-exec (OMNIBOX_TEST_SANDBOX_EXEC) in its place.
 */
static int
run_darwin(const struct options *o, const struct policy *p, struct arena *a, const char *launch_dir)
{
	const struct sandbox *sb = &p->os_env.sandbox;
	struct launch_request dq = {0};
	struct cred_runtime creds = {0};
	struct host_entry scratch = {.dirfd = -1};
	const char *tmpdir = getenv("TMPDIR"), *sandbox_exec = NULL;
	int alive = -1, rc;
	pid_t proxy_pid = -1;
	bool own_scratch = false;

#if defined(OMNIBOX_TEST_DARWIN)
	sandbox_exec = getenv("OMNIBOX_TEST_SANDBOX_EXEC");
#endif
	if (!tmpdir || tmpdir[0] != '/')
		tmpdir = "/tmp";
	dq.policy = p;
	dq.target = LAUNCH_DARWIN;
	dq.launch_dir = launch_dir;
	dq.cwd = o->cwd;
	dq.home = launch_home(environ);
	dq.command = o->command;
	dq.n_command = o->n_command;
	dq.environ = environ;
	dq.dyld_cache_dir = darwin_dyld_cache_dir(a);
	if (sb->n_egress) {
		const char *init = self_dir(a) ? launch_find_init(a, self_dir(a)) : NULL;
		char err[256], **relay;
		uint16_t port = 0;
		int fd;

		if (!init)
			die("omnibox-init is missing next to omnibox-run; reinstall omnibox");
		/* A free loopback port (macOS has no network namespace to pick any);
		 * the relay binds it inside the sandbox, or the launch fails. */
		fd = relay_listen(0, err, sizeof(err));
		if (fd >= 0) {
			port = relay_port(fd);
			close(fd);
		}
		if (!port)
			die("no free loopback port for the egress relay: %s", fd < 0 ? err : "?");
		if (o->dry_run) {
			dq.scratch = arena_printf(a, "%s/omnibox-XXXXXX", tmpdir);
		} else {
			if (host_scratch_create(a, tmpdir, &scratch) < 0)
				die("cannot create the scratch dir in %s: %s", tmpdir,
				    strerror(errno));
			undo_scratch = &scratch;
			own_scratch = true;
			dq.scratch = scratch.path;
		}
		dq.proxy_port = arena_printf(a, "%u", port);
		dq.proxy_socket = arena_printf(a, "%s/%s", dq.scratch, LAUNCH_PROXY_SOCKET);
		if (strlen(dq.proxy_socket) >= sizeof(((struct sockaddr_un *)0)->sun_path))
			die("the proxy socket path %s is too long for a Unix socket; set TMPDIR "
			    "to a shorter directory",
			    dq.proxy_socket);
		relay = arena_alloc(a, 5 * sizeof(*relay));
		relay[0] = (char *)init;
		relay[1] = (char *)"--relay";
		relay[2] = (char *)dq.proxy_port;
		relay[3] = (char *)dq.proxy_socket;
		relay[4] = (char *)"--";
		dq.relay_argv = relay;
		dq.n_relay_argv = 5;
		if (o->dry_run) {
			dq.extra_env = placeholder_names(a, sb, &dq.n_extra_env);
		} else {
			struct proxy_config pc;
			FILE *log;

			egress_credentials(a, sb, dq.home, dq.scratch, &creds);
			dq.extra_env = creds.env;
			dq.n_extra_env = creds.n_env;
			log = egress_log_open(a, o);
			egress_config(a, o, sb, dq.scratch, dq.proxy_socket, &creds, log, &pc);
			proxy_pid = start_proxy_process(&pc, &alive);
			/* The proxy has its own copy: ours goes now. */
			cred_runtime_wipe(&creds);
			if (log != stderr)
				fclose(log);
		}
	}
	undo_scratch = NULL;
	rc = darwin_launch(&dq, own_scratch ? &scratch : NULL, tmpdir, sandbox_exec, o->dry_run,
			   stdout);
	if (proxy_pid > 0) {
		close(alive);
		while (waitpid(proxy_pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	if (own_scratch)
		host_remove(&scratch, true, false);
	return rc;
}
#endif

/* ---- git_ssh ---------------------------------------------------------------------- */

/*
 * The git_ssh broker of PLAN (runtime/gitssh/broker.h), in a process of
 * its own, listening before the sandbox exists; its sessions log to LOG.
 * The system ssh is taken from an absolute PATH entry the sandbox cannot
 * write, like bwrap.  Dies (undoing the launch) when it cannot start.
 */
static pid_t
start_git_ssh(struct arena *a, const struct options *o, const struct launch_plan *plan,
	      const char *token, FILE *log, int *alive)
{
	const struct sandbox *sb = &plan->policy->os_env.sandbox;
	struct gitssh_config gc = {0};
	const char *ssh = launch_find_in_path(a, environ, "ssh"), *real;
	char err[4096];
	pid_t pid;

	if (!ssh)
		die("git_ssh needs the system ssh, and none is on PATH (Debian: apt install "
		    "openssh-client); nothing ran");
	real = walk_canonical(a, ssh);
	if (!real || launch_plan_writable(plan, real))
		die("%s, the ssh found first on PATH, lies in a directory the sandbox can write; "
		    "git_ssh runs the system's ssh only; nothing ran",
		    arena_escape(a, real ? real : ssh));
	gc.bindings = sb->git_ssh;
	gc.n_bindings = sb->n_git_ssh;
	gc.socket_path = arena_printf(a, "%s/%s", plan->scratch, GITSSH_SOCKET);
	gc.token = token;
	gc.ssh = real;
	gc.hosts_file = o->egress_hosts;
	gc.home = plan->home;
	gc.policy = o->input;
	gc.log_fd = fileno(log);
	pid = gitssh_start(&gc, alive, err, sizeof(err));
	if (pid < 0)
		die("%s; nothing ran", err);
	return pid;
}

/* ---- main ------------------------------------------------------------------------- */

/*
 * sandbox type none is the policy's explicit opt-out: the command runs as
 * is, but still in its workspace (chosen as for every launch) and with the
 * environment allow-list, which applies to every launch path.
 */
static int
run_unsandboxed(const struct options *o, const struct policy *p, struct arena *a,
		const char *launch_dir, const char *home)
{
	const struct terminal *t = p->terminal;
	struct launch_request rq = {
	    .policy = p, .launch_dir = launch_dir, .cwd = o->cwd, .home = home};
	const char *ws;
	char **env, **cmd, err[2048];

	ws = launch_workspace(a, &rq, err, sizeof(err));
	if (!ws)
		die("%s; nothing ran", err);
	/* No scratch dir: the command is exec'd in place, nothing would remove one. */
	env = launch_env_build(a, p, environ, &(struct launch_env){.pwd = ws});
	if (o->n_command) {
		cmd = o->command;
	} else if (t) {
		cmd = arena_alloc(a, (t->args.n + 2) * sizeof(*cmd));
		cmd[0] = (char *)t->command.s;
		for (size_t i = 0; i < t->args.n; i++)
			cmd[i + 1] = (char *)t->args.v[i].s;
	} else {
		die("no command: give one after '--', or a terminal with --terminal");
	}
	if (chdir(ws) < 0)
		die("the workspace %s: %s", ws, strerror(errno));
	if (!o->quiet)
		say("omnibox-run: sandbox type none: running %s without a sandbox, as "
		    "the policy says\n",
		    cmd[0]);
	if (o->dry_run) {
		printf("# sandbox type none: %s runs unsandboxed in %s\n", cmd[0], ws);
		exit(0);
	}
	execvpe(cmd[0], cmd, env);
	die("cannot run %s: %s", cmd[0], strerror(errno));
}

/* Say what the second layer cannot add on this kernel; never silently. */
static void
landlock_report(const struct policy *p, bool quiet)
{
	int abi = landlock_abi();

	if (quiet)
		return;
	if (abi < LANDLOCK_ABI_FS)
		say("omnibox-run: warning: this kernel has no usable Landlock (ABI %d, "
		    "writes need %d): the writable set rests on the mounts alone%s\n",
		    abi, LANDLOCK_ABI_FS,
		    bwrap_network_shared(p) ? ", and the host's abstract Unix sockets stay "
					      "reachable (allow_network: true)"
					    : "");
	else if (abi < LANDLOCK_ABI_SCOPE && bwrap_network_shared(p))
		say("omnibox-run: warning: Landlock ABI %d cannot scope abstract Unix "
		    "sockets (needs %d): the host's stay reachable with allow_network: "
		    "true\n",
		    abi, LANDLOCK_ABI_SCOPE);
}

/*
 * One launch, from the options to the report: what main's phases hand on
 * to each other.  It lives in main's frame for the whole launch, since die()
 * undoes the scratch dir and the plan through undo_scratch and undo_plan.
 */
struct run {
	struct options o;
	struct arena *a;
	struct textbuf src, text, nul, tail;
	struct launch_request rq;
	struct launch_plan plan;
	struct host_entry scratch;
	struct policy *p;
	const struct sandbox *sb;
	struct diag d;
	char launch_dir[PATH_MAX], *bwrap, *init, *cgroup;
	const char *home;
	int seccomp_fd, args_fd, status_pipe[2], ready_sock[2];
	int janitor;
	struct cred_runtime creds;
	struct event_base *base;
	struct copyback *copyback;
	struct proxy *proxy;
	struct notify *notify;
	FILE *egress_log;
	char git_ssh_token[GITSSH_TOKEN_LEN + 1];
	pid_t git_ssh_pid;
	int git_ssh_alive;
	struct pty pty;
	bool use_pty;
};

/* Before the options: the process as every launch needs it. */
static void
process_setup(void)
{
	/* Whatever the caller left open goes no further than this process. */
	fds_cloexec_from(3);
	/* Before anything uses libevent or OpenSSL: the proxy counts what they hold. */
	proxy_memory_init();
	/* The proxy's connections need descriptors (its caps follow the limit):
	 * the soft limit goes up to the hard one here, and back for the sandbox. */
	if (getrlimit(RLIMIT_NOFILE, &nofile_given) == 0 &&
	    nofile_given.rlim_cur < nofile_given.rlim_max) {
		struct rlimit up = {nofile_given.rlim_max, nofile_given.rlim_max};

		setrlimit(RLIMIT_NOFILE, &up);
	}
	signal(SIGPIPE, SIG_IGN);
}

/* The options, and whether the launch gets a terminal of its own. */
static void
run_options(struct run *r, int argc, char **argv)
{
	parse_options(argc, argv, &r->o);
	verbose_denials = r->o.verbose;
	/* An interactive launch gets a terminal of its own (pty.h), when both
	 * ends are a terminal: output piped elsewhere stays byte for byte. */
	r->use_pty = !r->o.no_pty && (r->o.pty || (isatty(STDIN_FILENO) && isatty(STDOUT_FILENO)));
	if (r->o.pty && !isatty(STDIN_FILENO))
		die("--pty: standard input is not a terminal");
}

/* The policy, compiled (and its terminal selected) with every diagnostic printed. */
static void
run_compile(struct run *r)
{
	const struct options *o = &r->o;
	int rc;

	rc = file_read(o->input, &r->src, FILE_READ_MAX);
	if (rc < 0)
		die("%s: %s", o->input, strerror(-rc));
	diag_init(&r->d, r->a, o->input, r->src.data ? r->src.data : "", r->src.len);
	r->p = policy_compile_flags(r->a, &r->d, o->input, r->src.data ? r->src.data : "",
				    r->src.len, o->strict_toplevel ? POLICY_STRICT_TOPLEVEL : 0);
	if (r->p && o->terminal)
		r->p = policy_select_terminal(r->a, &r->d, r->p, o->terminal);
	diag_print(&r->d, stderr, !o->quiet);
	if (!r->p)
		die("%s: invalid policy; nothing ran", o->input);
}

/*
 * --why of a URL, or of a launch without a Linux sandbox: answered from the
 * IR.  A path is answered from the launch resolved as --dry-run resolves it:
 * of a shell, unless a command was given.  Returns true when answered, with
 * the status in *RC.
 */
static bool
why_from_ir(struct run *r, int *rc)
{
	static char sh_name[] = "sh";
	static char *sh[] = {sh_name, NULL};
	struct options *o = &r->o;

	if (!o->why)
		return false;
	if (!strncmp(o->why, "http", 4) || r->p->os_env.sandbox.type == SANDBOX_NONE ||
	    OMNIBOX_DARWIN_LAUNCH) {
		*rc = explain_why(r->a, r->p, NULL, o->why);
		arena_free(r->a);
		tb_free(&r->src);
		return true;
	}
	o->dry_run = true;
	if (!o->n_command && !r->p->terminal) {
		o->command = sh;
		o->n_command = 1;
	}
	return false;
}

/*
 * The launch directory and home, and the backend: a launch that is not
 * bwrap's (Seatbelt, or sandbox type none) runs here and returns true with
 * its status in *RC.  A type this system cannot run dies.
 */
static bool
run_elsewhere(struct run *r, int *rc)
{
	const struct options *o = &r->o;
	const struct policy *p = r->p;

	r->sb = &p->os_env.sandbox;
	{
		/* What no launch here runs (refuse.h): the words every tool uses. */
		struct arena *a = arena_new();
		struct loc loc;
		const char *why = refuse_launch(
		    a, p, OMNIBOX_DARWIN_LAUNCH ? SANDBOX_DARWIN_SEATBELT : SANDBOX_LINUX_BWRAP,
		    OMNIBOX_DARWIN_LAUNCH ? "darwin" : "linux", &loc);

		if (why)
			die("%s:%u:%u: %s", o->input, loc.line, loc.col, why);
		arena_free(a);
	}
	if (!getcwd(r->launch_dir, sizeof(r->launch_dir)))
		die("getcwd: %s", strerror(errno));
	r->home = launch_home(environ);
	switch (p->os_env.sandbox.type) {
#if defined(__APPLE__) || defined(OMNIBOX_TEST_DARWIN)
	case SANDBOX_AUTO:
	case SANDBOX_DARWIN_SEATBELT:
		*rc = run_darwin(o, p, r->a, r->launch_dir);
		tb_free(&r->src);
		arena_free(r->a);
		return true;
#else
	case SANDBOX_AUTO:
	case SANDBOX_LINUX_BWRAP:
		return false;
#endif
	case SANDBOX_NONE:
		*rc = run_unsandboxed(o, p, r->a, r->launch_dir, r->home);
		return true;
	default:
		die("%s:%u: sandbox type %s cannot run on this system; use auto, or run it where "
		    "its backend exists",
		    o->input, p->os_env.sandbox.type_loc.line,
		    sandbox_type_name(p->os_env.sandbox.type));
	}
}

/*
 * bwrap and omnibox-init, and the scratch dir (only named on --dry-run);
 * then the descriptors omnibox-init gets: the seccomp filter, its status
 * pipe and its ready socket.
 */
static void
run_prepare(struct run *r)
{
	const char *tmp;

	/* Absolute PATH entries only, as for the agent's command; and below
	 * (once the policy's writable directories are known) never one the
	 * sandbox could have written: that bwrap would run unsandboxed. */
	r->bwrap = launch_find_in_path(r->a, environ, "bwrap");
	if (!r->bwrap)
		die("bwrap (bubblewrap) is not on PATH; install it (Debian/Ubuntu: apt install "
		    "bubblewrap; Fedora: dnf install bubblewrap)");
	r->init = self_dir(r->a) ? launch_find_init(r->a, self_dir(r->a)) : NULL;
	if (!r->init)
		die("omnibox-init is missing next to omnibox-run; reinstall omnibox");
	tmp = getenv("TMPDIR");
	if (!tmp || tmp[0] != '/')
		tmp = "/tmp";
	if (r->o.dry_run) {
		r->scratch.path = arena_printf(r->a, "%s/omnibox-XXXXXX", tmp);
	} else {
		if (host_scratch_create(r->a, tmp, &r->scratch) < 0)
			die("cannot create the scratch dir in %s: %s", tmp, strerror(errno));
		undo_scratch = &r->scratch;
	}

	r->seccomp_fd = fds_sealed_memfd("omnibox-seccomp", omnibox_seccomp_bpf,
					 (size_t)(omnibox_seccomp_bpf_end - omnibox_seccomp_bpf));
	/* The ready byte comes with the seccomp listener (SCM_RIGHTS): a socket. */
	if (r->seccomp_fd < 0 || pipe2(r->status_pipe, O_CLOEXEC) < 0 ||
	    fcntl(r->status_pipe[0], F_SETFL, O_NONBLOCK) < 0 ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, r->ready_sock) < 0 ||
	    fcntl(r->ready_sock[0], F_SETFL, O_NONBLOCK) < 0)
		die("cannot pass the seccomp filter to omnibox-init: %s", strerror(errno));
}

/*
 * With egress_rules: the proxy's port and socket, its log, and the
 * credentials' placeholders in the sandbox's environment.  With git_ssh:
 * the helper's token, for the broker started later.
 */
static void
prepare_egress(struct run *r)
{
	struct launch_request *rq = &r->rq;
	const struct sandbox *sb = r->sb;
	struct arena *a = r->a;

	if (sb->n_egress) {
		uint32_t rnd = 0;

		/* Any port works in the sandbox's own network namespace; a random
		 * one keeps clients from hard-coding it. */
		if (getrandom(&rnd, sizeof(rnd), 0) != sizeof(rnd))
			rnd = (uint32_t)getpid();
		rq->proxy_port = arena_printf(a, "%u", 20000 + rnd % 40000);
		rq->proxy_socket = arena_printf(a, "%s/%s", r->scratch.path, LAUNCH_PROXY_SOCKET);
		if (strlen(rq->proxy_socket) >= sizeof(((struct sockaddr_un *)0)->sun_path))
			die("the proxy socket path %s is too long for a Unix socket; set TMPDIR to "
			    "a shorter directory",
			    rq->proxy_socket);
		if (r->o.dry_run) {
			rq->proxy_port = NULL;
			rq->proxy_socket = NULL;
			rq->extra_env = placeholder_names(a, sb, &rq->n_extra_env);
		} else {
			/* Opened now, while nothing but the scratch dir needs undoing.
			 * An interactive screen is no place for the proxy's log. */
			if (r->use_pty && !r->o.egress_log) {
				r->egress_log =
				    egress_log_create(a, r->scratch.path, &r->o.egress_log);
				if (!r->o.quiet)
					say("omnibox-run: the egress log is %s\n",
					    arena_escape(a, r->o.egress_log));
			} else {
				r->egress_log = egress_log_open(a, &r->o);
			}
			egress_credentials(a, sb, r->home, r->scratch.path, &r->creds);
			rq->extra_env = r->creds.env;
			rq->n_extra_env = r->creds.n_env;
		}
	}

	/* git_ssh: the helper's token, for the broker started below. */
	if (sb->n_git_ssh) {
		if (r->o.dry_run)
			snprintf(r->git_ssh_token, sizeof(r->git_ssh_token), "{RANDOM}");
		else if (gitssh_new_token(r->git_ssh_token) < 0)
			die("git_ssh: no randomness for the broker's token: %s", strerror(errno));
		rq->extra_env =
		    gitssh_env_add(a, rq->extra_env, &rq->n_extra_env, r->git_ssh_token);
	}
}

/*
 * The launch resolved against this machine (launch_resolve()), its terminal
 * and its masks for omnibox-init, bwrap checked against what the sandbox can
 * write, and bwrap's arguments built.
 */
static void
run_resolve(struct run *r)
{
	struct launch_request *rq = &r->rq;
	const struct options *o = &r->o;
	struct launch_plan *plan = &r->plan;
	struct arena *a = r->a;
	char err[4096];

	rq->policy = r->p;
	rq->target = LAUNCH_LINUX;
	rq->launch_dir = r->launch_dir;
	rq->cwd = o->cwd;
	rq->home = r->home;
	rq->scratch = r->scratch.path;
	rq->init = r->init;
	rq->bwrap = r->bwrap;
	rq->command = o->command;
	rq->n_command = o->n_command;
	rq->environ = environ;
	rq->create_placeholders = !o->dry_run;
	rq->policy_file =
	    o->input[0] == '/' ? o->input : arena_printf(a, "%s/%s", r->launch_dir, o->input);
	rq->seccomp_fd = r->seccomp_fd;
	rq->status_fd = r->status_pipe[1];
	rq->ready_fd = r->ready_sock[1];
	if (launch_resolve(a, rq, plan, err, sizeof(err)) < 0)
		die("%s; nothing ran", err);
	undo_plan = plan;
	plan->ctx.tty = r->use_pty;
	if (r->use_pty && !o->dry_run && pty_open(&r->pty, err, sizeof(err)) < 0)
		die("%s; nothing ran (--no-pty runs without one)", err);
	if (!o->dry_run && (plan->ctx.n_masks || plan->ctx.n_sockets)) {
		struct textbuf list = {0};

		/* What omnibox-init checks is in place before it lets anything run. */
		bwrap_masks_list(&plan->ctx, &list);
		plan->ctx.masks_fd = fds_sealed_memfd("omnibox-masks", list.data, list.len);
		tb_free(&list);
		if (plan->ctx.masks_fd < 0)
			die("cannot pass the masks to omnibox-init: %s", strerror(errno));
	}
	bwrap_build(plan->policy, &plan->ctx, &r->d, &r->text, &r->nul, &r->tail);
	if (!o->quiet && !o->dry_run)
		for (size_t i = 0; i < plan->n_notes; i++)
			say("omnibox-run: %s\n", plan->notes[i]);
}

/* --dry-run: the resolved launch described (or --why answered); nothing runs. */
static int
run_describe(struct run *r)
{
	struct textbuf desc = {0};
	int rc = 0;

	if (r->o.why)
		rc = explain_why(r->a, r->p, &r->plan, r->o.why);
	else
		launch_describe(&r->plan, &desc);
	if (desc.data)
		fputs(desc.data, stdout);
	launch_plan_close(&r->plan);
	tb_free(&desc);
	tb_free(&r->src);
	tb_free(&r->text);
	tb_free(&r->nul);
	tb_free(&r->tail);
	arena_free(r->a);
	return r->o.why ? rc : 0;
}

/* bwrap's arguments in a sealed memfd, and the limits: a cgroup, or what stands in. */
static void
run_limits(struct run *r)
{
	const struct limits *l = &r->plan.policy->os_env.sandbox.limits;
	char why[512];

	r->args_fd = fds_sealed_memfd("omnibox-args", r->nul.data, r->nul.len);
	if (r->args_fd < 0)
		die("cannot pass the arguments to bwrap: %s", strerror(errno));
	if (l->present)
		r->cgroup = cgroup_create(r->a, l, why, sizeof(why));
	if (l->present && !r->o.quiet) {
		if (r->cgroup)
			say("omnibox-run: limits: the sandbox runs in cgroup %s\n", r->cgroup);
		if (!r->cgroup && l->processes.present)
			say("omnibox-run: limits.processes is approximate: "
			    "RLIMIT_NPROC counts every process of the user (%s)\n",
			    why);
		if (!r->cgroup && l->cpu_rate.present)
			say("omnibox-run: limits.cpu_rate is not enforced: %s\n", why);
		if (!r->cgroup && l->memory.present)
			say("omnibox-run: limits.memory is RLIMIT_DATA (private writable "
			    "memory, not a cgroup's memory.max: %s)\n",
			    why);
	}
}

/*
 * What runs beside the sandbox, up before the agent exists: the event loop
 * with the seccomp refusals, the egress proxy, the git_ssh broker and the
 * cleanup process.
 */
static void
start_services(struct run *r)
{
	char err[4096];

	r->base = event_base_new();
	r->notify = r->base ? notify_new(r->base, r->o.verbose, r->o.quiet) : NULL;
	if (!r->notify)
		die("cannot create the event loop");
	if (r->sb->n_egress) {
		struct proxy_config pc;

		egress_config(r->a, &r->o, r->sb, r->scratch.path, r->rq.proxy_socket, &r->creds,
			      r->egress_log, &pc);
		/* Up before the agent exists: no first request may find it missing. */
		r->proxy = proxy_new(r->base, &pc, err, sizeof(err));
		/* The proxy keeps its own copy: ours goes now. */
		if (r->creds.n_creds)
			cred_runtime_wipe(&r->creds);
		if (!r->proxy)
			die("the egress proxy cannot start: %s; nothing ran", err);
	}
	if (r->sb->n_git_ssh) {
		if (!r->egress_log)
			r->egress_log = egress_log_open(r->a, &r->o);
		r->git_ssh_pid = start_git_ssh(r->a, &r->o, &r->plan, r->git_ssh_token,
					       r->egress_log, &r->git_ssh_alive);
	}
	r->janitor = janitor_start(&r->scratch, &r->plan, NULL);
	if (r->janitor < 0)
		die("cannot start the cleanup process: %s", strerror(errno));
}

/* The sandbox run to its end, then what it leaves quarantined and the broker stopped. */
static int
run_sandbox(struct run *r)
{
	int rc;

	r->copyback = copyback_start(r->base, r->plan.writebacks, r->plan.n_writebacks);
	rc = run_bwrap(r->base, r->bwrap, &r->plan, &r->tail, r->args_fd, r->status_pipe,
		       r->ready_sock, r->cgroup, r->use_pty ? &r->pty : NULL, r->notify);
	copyback_finish(r->copyback, r->plan.writebacks, r->plan.n_writebacks);
	/* Before anything else of the host's can run git in the workspace. */
	launch_quarantine(&r->plan, stderr);
	janitor_checked(r->janitor);
	gitssh_stop(r->git_ssh_pid, r->git_ssh_alive);
	launch_plan_close(&r->plan);
	return rc;
}

/* What the proxy and the filter refused, then everything the launch held, released. */
static void
run_report(struct run *r)
{
	if (r->proxy && !r->o.quiet)
		denials_summary(r->proxy, r->o.input);
	if (!r->o.quiet)
		notify_summary(r->notify, stderr);
	notify_free(r->notify);
	if (r->proxy)
		proxy_free(r->proxy);
	event_base_free(r->base);
	if (r->egress_log && r->egress_log != stderr)
		fclose(r->egress_log);
	if (r->cgroup)
		cgroup_remove(r->cgroup);
	host_remove(&r->scratch, true, false);
	launch_cleanup(&r->plan);
	close(r->janitor);
	tb_free(&r->src);
	tb_free(&r->text);
	tb_free(&r->nul);
	tb_free(&r->tail);
	arena_free(r->a);
}

int
main(int argc, char **argv)
{
	struct run r = {
	    .scratch = {.dirfd = -1},
	    .seccomp_fd = -1,
	    .status_pipe = {-1, -1},
	    .ready_sock = {-1, -1},
	    .git_ssh_pid = -1,
	    .git_ssh_alive = -1,
	    .pty = {.master = -1, .slave = -1},
	};
	int rc;

	r.a = arena_new();
	process_setup();
	run_options(&r, argc, argv);
	run_compile(&r);
	if (why_from_ir(&r, &rc) || run_elsewhere(&r, &rc))
		return rc;
	run_prepare(&r);
	prepare_egress(&r);
	run_resolve(&r);
	if (r.o.dry_run)
		return run_describe(&r);
	landlock_report(r.p, r.o.quiet);
	run_limits(&r);
	start_services(&r);
	rc = run_sandbox(&r);
	run_report(&r);
	return rc;
}
