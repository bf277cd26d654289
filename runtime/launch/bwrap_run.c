/*
 * bwrap_run.c - bwrap running: started (before the resolve, or again after
 * it), omnibox-init handed its arguments, the signals forwarded, and its
 * end (bwrap_run.h).
 */
#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "emitters/bwrap.h"
#include "runtime/launch/bwrap_run.h"
#include "runtime/launch/cgroup.h"
#include "runtime/launch/choose.h"
#include "runtime/launch/fds.h"
#include "runtime/launch/handover.h"
#include "runtime/launch/janitor.h"
#include "runtime/launch/launch_bwrap.h"
#include "runtime/launch/notify.h"

extern char **environ;

/* ---- running bwrap ---------------------------------------------------------- */

struct run_state {
	struct event_base *base;
	pid_t bwrap;
	pid_t sandbox_pid; /* omnibox-init, from --json-status-fd; 0 until known */
	int mnt_ns;	   /* its mount namespace, held (hold_mounts()); -1: none */
	int status;
	bool done;
	/* bwrap said on its status stream that omnibox-init ended, and how:
	 * the sandbox is over (the kernel ends every process of its PID
	 * namespace before its first process's end is seen), whether or not
	 * bwrap has exited yet. */
	bool ended;
	int exit_code;
	int status_fd;
	struct event *status_ev;
	char status_buf[4096];
	size_t status_len;
	struct pty *pty;       /* the sandbox's terminal, or NULL */
	struct notify *notify; /* the seccomp refusals, once omnibox-init is ready */
	struct event *ready_ev;
	bool ready; /* omnibox-init's byte came */
	int signalled; /* the last signal forwarded, 0: none */
	/* linux_landlock: omnibox-init is in the agent's domain, which may
	 * signal it; stopped, it is killed (it would hold the launch forever). */
	bool landlock;
};

/*
 * The mount namespace of the sandbox's first process PID, held in ST until
 * the janitor takes it (janitor_checked()): the mounts then outlive
 * omnibox-init, and are not torn down as it exits, before bwrap can end
 * (half a millisecond of every launch, more with many masks).  Nothing is
 * held when it cannot be opened, or is this process's own.
 */
static void
hold_mounts(struct run_state *st, pid_t pid)
{
	char path[64];
	struct stat in, out;

	snprintf(path, sizeof(path), "/proc/%ld/ns/mnt", (long)pid);
	st->mnt_ns = open(path, O_RDONLY | O_CLOEXEC);
	if (st->mnt_ns >= 0 && (fstat(st->mnt_ns, &in) < 0 || stat("/proc/self/ns/mnt", &out) < 0 ||
				(in.st_dev == out.st_dev && in.st_ino == out.st_ino))) {
		close(st->mnt_ns);
		st->mnt_ns = -1;
	}
}

/* One read of the status stream into ST, where bwrap names the sandbox's
 * first process ("child-pid"): what read() returned. */
static ssize_t
status_read(struct run_state *st)
{
	ssize_t n = read(st->status_fd, st->status_buf + st->status_len,
			 sizeof(st->status_buf) - 1 - st->status_len);
	char *p;

	if (n <= 0)
		return n;
	st->status_len += (size_t)n;
	st->status_buf[st->status_len] = '\0';
	p = strstr(st->status_buf, "\"child-pid\"");
	if (p && !st->sandbox_pid) {
		p = strchr(p, ':');
		if (p)
			st->sandbox_pid = (pid_t)strtol(p + 1, NULL, 10);
		if (st->sandbox_pid > 0 && st->mnt_ns < 0)
			hold_mounts(st, st->sandbox_pid);
	}
	p = strstr(st->status_buf, "\"exit-code\"");
	if (p && !st->landlock && (p = strchr(p, ':')) && strchr(p, '}')) {
		st->exit_code = (int)strtol(p + 1, NULL, 10);
		st->ended = true;
	}
	if (st->status_len > sizeof(st->status_buf) / 2) {
		st->status_len = 0; /* keep the buffer small; the pid is known by now */
	}
	return n;
}

static void
on_status(evutil_socket_t fd, short what, void *arg)
{
	struct run_state *st = arg;

	(void)fd;
	(void)what;
	/* At its end, stop watching, or the loop would spin on it. */
	if (status_read(st) == 0 && st->status_ev)
		event_del(st->status_ev);
	if (st->ended)
		event_base_loopexit(st->base, NULL);
}

/*
 * Ends a sandbox still being set up (nothing of the agent's in it yet) and
 * waits for bwrap.  Killing bwrap alone is not enough: the child it clones
 * into the namespaces takes no death signal from it until that child has
 * set the sandbox up.  Killed before it let the child go, bwrap left it
 * waiting forever, holding the caller's output; killed after, a sandbox
 * went on being set up that no one watched.  Until it is let go the child
 * is in bwrap's process group (it leaves it for a session of its own
 * after), so the group's kill ends both.  Once let go, its pid was on the
 * status stream first, and this process, the subreaper of bwrap's
 * children, is its parent then: its pid is no other process's until
 * reaped here.  The landlock backend's omnibox-init leads its own group.
 */
static void
sandbox_end(struct run_state *st)
{
	struct pollfd p = {st->status_fd, POLLIN, 0};
	siginfo_t si;

	if (!st->done) {
		kill(-st->bwrap, SIGKILL);
		kill(st->bwrap, SIGKILL);
		while (waitpid(st->bwrap, &st->status, 0) < 0 && errno == EINTR)
			;
		st->done = true;
	}
	/* Every writer of the stream is gone (the child closed its copy as it
	 * was cloned): read it to its end. */
	while (!st->landlock && !st->sandbox_pid && poll(&p, 1, 1000) == 1 && status_read(st) > 0)
		;
	if (!st->landlock && st->sandbox_pid &&
	    waitid(P_PID, (id_t)st->sandbox_pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0) {
		kill(st->sandbox_pid, SIGKILL);
		while (waitpid(st->sandbox_pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	st->sandbox_pid = 0;
	if (st->mnt_ns >= 0)
		close(st->mnt_ns);
	st->mnt_ns = -1;
}

static void
on_signal(evutil_socket_t sig, short what, void *arg)
{
	struct run_state *st = arg;

	(void)what;
	if (sig == SIGCHLD) {
		int status;
		pid_t got = waitpid(st->bwrap, &status, WNOHANG | (st->landlock ? WUNTRACED : 0));

		if (got == st->bwrap && WIFSTOPPED(status)) {
			/* Nothing of the agent's in it; in raw mode a line returns the carriage too. */
			fprintf(stderr,
				"omnibox-run: omnibox-init was stopped (signal %d, from inside the "
				"sandbox): the launch ends%s",
				WSTOPSIG(status), pty_is_raw() ? "\r\n" : "\n");
			kill(st->bwrap, SIGKILL);
		} else if (got == st->bwrap) {
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
	 * not reach the agent. */
	if (!st->sandbox_pid) {
		struct pollfd p = {st->status_fd, POLLIN, 0};

		if (poll(&p, 1, 0) == 1 && (p.revents & POLLIN))
			status_read(st);
	}
	if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGQUIT)
		st->signalled = (int)sig;
	/* To omnibox-init, which hands it to the agent. */
	if (st->sandbox_pid)
		kill(st->sandbox_pid, (int)sig);
	else if (sig == SIGCONT || sig == SIGWINCH)
		kill(st->bwrap, (int)sig); /* nothing it would end on */
	else if (!st->done) {
		/* Before the sandbox exists one that would end bwrap ends the
		 * launch, nothing of the agent's having run. */
		st->signalled = (int)sig;
		sandbox_end(st);
		event_base_loopexit(st->base, NULL);
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
	return LAUNCH_EXIT_SETUP;
}

/*
 * What omnibox-init gets on its ready socket with its arguments
 * (handover.h): every descriptor they name but those bwrap was handed
 * itself (bwrap_own_fds()), each once.  Their number, the array (free() it)
 * in *OUT; NULL when out of memory.
 */
static size_t
handover_fds(const struct launch_plan *plan, int **out)
{
	const struct bwrap_context *c = &plan->ctx;
	size_t n = 0, cap = 2 + c->n_grants + c->n_reexpose + c->n_command_dirs;
	int *v;

	cap += c->n_pins + c->n_protects;
	v = calloc(cap, sizeof(*v));

	*out = v;
	if (!v)
		return 0;
	v[n++] = c->masks_fd;
	if (c->private_home)
		v[n++] = c->private_home->fd;
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
	/* Those the plan has (none is -1 but an absent masks list), each once. */
	for (size_t i = cap = 0; i < n; i++) {
		bool seen = v[i] < 0;

		for (size_t k = 0; k < cap && !seen; k++)
			seen = v[k] == v[i];
		if (!seen)
			v[cap++] = v[i];
	}
	return cap;
}

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
	int refused = launch_namespaces_refused();

	if (!refused)
		return;
	if (!strcmp(sysctl_value("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", v,
				 sizeof(v)),
		    "1"))
		launch_say(
		    "omnibox-run: AppArmor forbids unprivileged user namespaces here (Ubuntu "
		    "23.10 and later): allow them for bwrap with an AppArmor profile (an "
		    "/etc/apparmor.d/bwrap granting 'userns,'), or set "
		    "kernel.apparmor_restrict_unprivileged_userns=0\n");
	else if (!strcmp(sysctl_value("/proc/sys/user/max_user_namespaces", v, sizeof(v)), "0"))
		launch_say("omnibox-run: user namespaces are disabled "
			   "(user.max_user_namespaces=0): set it above 0\n");
	else if (!strcmp(sysctl_value("/proc/sys/kernel/unprivileged_userns_clone", v, sizeof(v)),
			 "0"))
		launch_say("omnibox-run: unprivileged user namespaces are disabled "
			   "(kernel.unprivileged_userns_clone=0): set it to 1\n");
	else
		launch_say(
		    "omnibox-run: this process cannot create namespaces (%s): a container or "
		    "sandbox around it forbids them; run omnibox where user namespaces are "
		    "allowed (for Docker: a seccomp profile that permits unshare and clone, "
		    "or --privileged), or write `type: linux_landlock`\n",
		    strerror(refused));
}

/* After a failed setup: a bwrap without --bind-fd needs an upgrade, not a retry. */
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
		launch_say("omnibox-run: this bwrap has no --bind-fd/--ro-bind-fd, which omnibox "
			   "mounts every grant with; install bubblewrap 0.10 or later (Debian 12: "
			   "0.8.0-2+deb12u1)\n");
}

/* bwrap, in the process forked for it: never returns. */
static void bwrap_exec(const struct bwrap_launch *l, char **argv, char **env, const int *keep,
		       size_t n_keep) __attribute__((noreturn));

static void
bwrap_exec(const struct bwrap_launch *l, char **argv, char **env, const int *keep, size_t n_keep)
{
	sigset_t none;

	/* Its own process group: terminal signals reach omnibox-run,
	 * which forwards them to the agent instead of killing bwrap.
	 * omnibox-init started directly leads a session of its own, as bwrap
	 * makes one: the user's terminal is none of the sandbox's. */
	if (l->landlock)
		setsid();
	else if (setpgid(0, 0) == 0 && l->janitor >= 0)
		/* Said from here, before bwrap exists: omnibox-run may be
		 * killed while it waits for this exec. */
		janitor_sandbox(l->janitor, getpid());
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (l->cgroup && cgroup_enter(l->cgroup) < 0) {
		launch_say("omnibox-run: cannot enter the cgroup %s; nothing ran\n", l->cgroup);
		_exit(LAUNCH_EXIT_SETUP);
	}
	/* The sandbox's own terminal as 0, 1 and 2: the user's never enters. */
	if (l->use_pty &&
	    (dup2(l->pty.slave, 0) < 0 || dup2(l->pty.slave, 1) < 0 || dup2(l->pty.slave, 2) < 0))
		_exit(LAUNCH_EXIT_SETUP);
	/* 0, 1, 2 and what the argv names; nothing the caller left open. */
	fds_keep_only(keep, n_keep);
	/* The sandbox starts with the descriptor limit omnibox-run was given. */
	setrlimit(RLIMIT_NOFILE, &l->nofile);
	execve(l->landlock ? l->init : l->bwrap, argv, env);
	launch_say("omnibox-run: cannot run %s: %s\n", l->landlock ? l->init : l->bwrap,
		   strerror(errno));
	_exit(LAUNCH_EXIT_SETUP);
}

struct bwrap_call {
	const struct bwrap_launch *l;
	char **argv, **env;
	const int *keep;
	size_t n_keep;
};

/* bwrap_exec() in launch_vfork()'s child. */
static int
bwrap_child(void *arg)
{
	const struct bwrap_call *c = arg;

	bwrap_exec(c->l, c->argv, c->env, c->keep, c->n_keep);
}

/* The argv of omnibox-init, NUL-separated in NUL (landlock_build()); free() it. */
static char **
landlock_argv(const struct textbuf *nul)
{
	size_t n = 0;
	char **argv;

	for (size_t i = 0; i < nul->len; i++)
		n += nul->data[i] == '\0';
	argv = calloc(n + 1, sizeof(*argv));
	if (!argv)
		return NULL;
	n = 0;
	for (size_t i = 0; i < nul->len; i += strlen(nul->data + i) + 1)
		argv[n++] = nul->data + i;
	argv[n] = NULL;
	return argv;
}

/* The descriptors omnibox-init gets: the rules', the filter, the ready socket. */
static size_t
landlock_fds(const struct bwrap_launch *l, int **out)
{
	int *v = calloc(l->ll.r.n_fds + 2, sizeof(*v));
	size_t n = 0;

	*out = v;
	if (!v)
		return 0;
	for (size_t i = 0; i < l->ll.r.n_fds; i++)
		v[n++] = l->ll.r.fds[i];
	v[n++] = l->seccomp_fd;
	v[n++] = l->ready_sock[1];
	return n;
}

/* The signals omnibox-run forwards to the sandbox. */
static const int forward[] = {SIGINT,  SIGTERM, SIGHUP,	  SIGQUIT,
			      SIGUSR1, SIGUSR2, SIGWINCH, SIGCONT};
#define N_FORWARD (sizeof(forward) / sizeof(forward[0]))

/* The signals omnibox-run forwards held pending (HOLD), or taken again. */
void
bwrap_signals_hold(bool hold)
{
	sigset_t set;

	sigemptyset(&set);
	for (size_t i = 0; i < N_FORWARD; i++)
		sigaddset(&set, forward[i]);
	sigprocmask(hold ? SIG_BLOCK : SIG_UNBLOCK, &set, NULL);
}

/*
 * ST's events on L's loop, into EVS (N_FORWARD + 3 of them): bwrap's end,
 * the signals to forward, the status stream and omnibox-init's ready byte.
 * Returns how many.
 */
static size_t
run_state_watch(struct run_state *st, struct bwrap_launch *l, struct event **evs)
{
	size_t n_evs = 0;

	st->base = l->base;
	st->landlock = l->landlock;
	st->status_fd = l->status_pipe[0];
	st->pty = l->use_pty ? &l->pty : NULL;
	evs[n_evs] = evsignal_new(st->base, SIGCHLD, on_signal, st);
	event_add(evs[n_evs++], NULL);
	for (size_t i = 0; i < N_FORWARD; i++) {
		evs[n_evs] = evsignal_new(st->base, forward[i], on_signal, st);
		event_add(evs[n_evs++], NULL);
	}
	evs[n_evs] = event_new(st->base, l->status_pipe[0], EV_READ | EV_PERSIST, on_status, st);
	st->status_ev = evs[n_evs];
	event_add(evs[n_evs++], NULL);
	/* Watched from the start: the agent's first refused call waits for it. */
	st->notify = l->notify;
	evs[n_evs] = event_new(st->base, l->ready_sock[0], EV_READ | EV_PERSIST, on_ready, st);
	st->ready_ev = evs[n_evs];
	event_add(evs[n_evs++], NULL);
	return n_evs;
}

static void
on_proxy_answer(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	*(bool *)arg = true;
}

/*
 * The proxy started while bwrap set the sandbox up; omnibox-init, given
 * --relay, waits for one byte on its ready socket before the relay and the
 * agent start.  It gets it once the proxy listens.  Without it (the proxy
 * failed, or this process is gone) it runs nothing.  The wait is the event
 * loop's, so that a signal (Ctrl-C) still reaches the sandbox and ends it:
 * then the proxy is stopped and 0 returned, bwrap's end telling the rest.
 */
static int
proxy_go(struct bwrap_launch *l, struct run_state *st, char *err, size_t errlen)
{
	bool answered = false;
	struct event *ev = event_new(st->base, l->proxy.ctl, EV_READ, on_proxy_answer, &answered);
	ssize_t n;

	l->proxy_pending = false;
	if (!ev || event_add(ev, NULL) < 0) {
		if (ev)
			event_free(ev);
		egress_proxy_kill(&l->proxy);
		return diag_fail(err, errlen, "cannot watch the egress proxy; nothing ran");
	}
	while (!answered && !st->done && !st->signalled)
		if (event_base_loop(st->base, EVLOOP_ONCE) < 0)
			break;
	event_free(ev);
	/* A signal for the agent before it exists (omnibox-init, waiting, does
	 * not take it): the launch ends here, nothing of the agent ran. */
	if (!answered && st->signalled) {
		egress_proxy_kill(&l->proxy);
		return diag_fail(err, errlen,
				 "signal %d while the egress proxy started: the launch ends; nothing "
				 "ran",
				 st->signalled);
	}
	if (!answered) {
		egress_proxy_kill(&l->proxy);
		return 0;
	}
	if (egress_proxy_ready(l->a, &l->proxy, err, errlen) < 0)
		return -1;
	do
		n = send(l->ready_sock[0], "g", 1, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	/* Not taken: omnibox-init is gone already, and says why itself. */
	(void)n;
	return 0;
}

/*
 * bwrap started, its arguments NUL (bwrap's own: --args), omnibox-init to be
 * handed the rest on its ready socket (handover.h), with an empty
 * environment (the agent's comes with the rest).  It is given the
 * descriptors the launch knows before the resolve, and with RESOLVED those
 * the plan holds too, which arguments of its own may name.  This process is
 * the subreaper of what the sandbox leaves.  0, or -1 with ERR.
 */
int
bwrap_spawn(struct bwrap_launch *l, const struct textbuf *nul, bool resolved, char *err,
	    size_t errlen)
{
	static char *no_env[] = {NULL};
	char fd[16], ready[16];
	char *argv[] = {(char *)"bwrap",
			(char *)"--args",
			fd,
			(char *)"--",
			(char *)BWRAP_INIT_PATH,
			(char *)BWRAP_INIT_ARGS_FROM,
			ready,
			NULL};
	int *keep = NULL;
	size_t n = resolved ? handover_fds(&l->plan, &keep) : 0;
	int *v = realloc(keep, (n + 5) * sizeof(*v));

	if (!v) {
		free(keep);
		return diag_fail(err, errlen, "out of memory");
	}
	if (l->args_fd >= 0)
		close(l->args_fd);
	l->args_fd = fds_sealed_memfd("omnibox-args", nul->data, nul->len);
	if (l->args_fd < 0) {
		free(v);
		return diag_fail(err, errlen, "cannot pass the arguments to bwrap: %s",
				 strerror(errno));
	}
	l->bwrap_has_plan = resolved;
	v[n++] = l->args_fd;
	v[n++] = l->seccomp_fd;
	v[n++] = l->status_pipe[1];
	v[n++] = l->ready_sock[1];
	v[n++] = l->plan.ctx.init_fd;
	snprintf(fd, sizeof(fd), "%d", l->args_fd);
	snprintf(ready, sizeof(ready), "%d", l->ready_sock[1]);
	/* What the sandbox leaves behind comes here: what omnibox-init left,
	 * and bwrap's child if bwrap is gone first (sandbox_end()). */
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	l->bwrap_pid = launch_vfork(bwrap_child, &(struct bwrap_call){l, argv, no_env, v, n});
	free(v);
	if (l->bwrap_pid < 0)
		return diag_fail(err, errlen, "fork: %s", strerror(errno));
	return 0;
}

/*
 * A bwrap started whose omnibox-init has not been handed its arguments
 * ended, its child too (sandbox_end()): nothing of the agent's ran.  Our
 * end of the status pipe goes first, so that its reader sees the end.
 */
void
bwrap_end(struct bwrap_launch *l)
{
	struct run_state st = {.bwrap = l->bwrap_pid, .status_fd = l->status_pipe[0], .mnt_ns = -1};

	if (l->bwrap_pid <= 0)
		return;
	if (l->status_pipe[1] >= 0)
		close(l->status_pipe[1]);
	l->status_pipe[1] = -1;
	sandbox_end(&st);
	l->bwrap_pid = -1;
}

/* omnibox-init's arguments and the descriptors they name, on its ready socket. */
static int
hand_over(struct bwrap_launch *l, char *err, size_t errlen)
{
	int *fds = NULL, rc = -1;
	size_t n = 0;

	/* A bwrap started with the plan's descriptors passed them on already. */
	if (!l->bwrap_has_plan)
		n = handover_fds(&l->plan, &fds);
	if (l->bwrap_has_plan || fds)
		rc =
		    handover_send(l->ready_sock[0], l->tail.data, l->tail.len, l->plan.env, fds, n);
	else
		errno = ENOMEM;
	free(fds);
	/* Not taken: omnibox-init is gone already, and bwrap's end says why. */
	if (rc < 0 && errno != EPIPE && errno != ECONNRESET && errno != ECONNREFUSED)
		return diag_fail(err, errlen, "cannot hand omnibox-init its arguments: %s",
				 strerror(errno));
	return 0;
}

/* linux_landlock: omnibox-init started directly, with its rules' descriptors. */
static int
spawn_landlock(struct bwrap_launch *l, pid_t **helpers, size_t *n_helpers, char *err, size_t errlen)
{
	char **argv = landlock_argv(&l->nul);
	int *keep = NULL;
	size_t n_keep = argv ? landlock_fds(l, &keep) : 0;

	*n_helpers = landlock_children(l->a, helpers);
	if (!argv || !keep) {
		free(argv);
		free(keep);
		return diag_fail(err, errlen, "out of memory");
	}
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	l->bwrap_pid =
	    launch_vfork(bwrap_child, &(struct bwrap_call){l, argv, l->plan.env, keep, n_keep});
	free(keep);
	free(argv);
	if (l->bwrap_pid < 0)
		return diag_fail(err, errlen, "fork: %s", strerror(errno));
	return 0;
}

int
bwrap_run(struct bwrap_launch *l, int *status, char *err, size_t errlen)
{
	struct event *evs[N_FORWARD + 3];
	struct run_state st = {.mnt_ns = -1};
	struct pty *pty = l->use_pty ? &l->pty : NULL;
	size_t n_evs, n_helpers = 0;
	pid_t *helpers = NULL;

	if (l->landlock ? spawn_landlock(l, &helpers, &n_helpers, err, errlen) < 0
			: l->bwrap_pid <= 0 && bwrap_spawn(l, &l->nul, true, err, errlen) < 0)
		return -1;
	n_evs = run_state_watch(&st, l, evs);
	st.bwrap = l->bwrap_pid;
	l->bwrap_pid = -1; /* the run's from now on */
	/* It may have ended before the loop watched for it; a signal held
	 * while it was set up ends it now, before omnibox-init has anything. */
	on_signal(SIGCHLD, 0, &st);
	bwrap_signals_hold(false);
	event_base_loop(st.base, EVLOOP_NONBLOCK);
	if (!l->landlock && !st.done && hand_over(l, err, errlen) < 0) {
		sandbox_end(&st);
		for (size_t i = 0; i < n_evs; i++)
			event_free(evs[i]);
		return -1;
	}
	/* bwrap's now; their end is the sandbox's alone. */
	close(l->status_pipe[1]);
	close(l->ready_sock[1]);
	l->status_pipe[1] = l->ready_sock[1] = -1;
	if (l->landlock)
		st.sandbox_pid = st.bwrap; /* omnibox-init itself */
	if (l->proxy_pending && proxy_go(l, &st, err, errlen) < 0) {
		/* Nothing of the agent ran: omnibox-init was still waiting. */
		sandbox_end(&st);
		for (size_t i = 0; i < n_evs; i++)
			event_free(evs[i]);
		return -1;
	}
	if (pty) {
		/* Only the sandbox holds the slave now: its end is the master's EOF. */
		close(pty->slave);
		pty->slave = -1;
		if (pty_raw() < 0 || pty_relay_start(pty, l->base) < 0) {
			pty_restore();
			launch_say("omnibox-run: cannot relay the terminal: %s\n", strerror(errno));
		}
	}
	/* Until the sandbox has ended: bwrap's own exit, a moment later, is no
	 * one's to wait for (its exit status is the one it said). */
	while (!st.done && !st.ended)
		if (event_base_loop(st.base, EVLOOP_ONCE) < 0)
			break;
	if (!st.done && waitpid(st.bwrap, &st.status, WNOHANG) == st.bwrap)
		st.done = true;
	if (pty)
		pty_finish(pty);
	/* Read what is left of the status stream. */
	st.status_ev = NULL;
	status_read(&st);
	l->sandbox_mnt = st.mnt_ns;
	for (size_t i = 0; i < n_evs; i++)
		event_free(evs[i]);
	/*
	 * bwrap reports the child's PID before that child sets up the mounts;
	 * only omnibox-init's byte on the ready socket says the setup worked.
	 * Without it, whatever bwrap exited with, nothing of the agent ran.
	 * (It may have come with bwrap's end, before the loop could see it.)
	 */
	if (!st.ready && notify_ready(l->notify, l->ready_sock[0]) != 1)
		st.sandbox_pid = 0;
	if (l->landlock) {
		size_t n = landlock_launch_reap(&l->ll, helpers, n_helpers);

		if (n && !l->o->quiet)
			launch_say("omnibox-run: %zu process%s of the sandbox outlived omnibox-init: "
				   "killed\n",
				   n, n == 1 ? "" : "es");
	}
	if (!st.sandbox_pid && l->landlock) {
		launch_say("omnibox-run: omnibox-init could not set up the sandbox (status %d); "
			   "nothing ran\n",
			   exit_status_of(st.status));
		*status = LAUNCH_EXIT_SETUP;
		return 0;
	}
	if (!st.sandbox_pid && st.signalled) {
		launch_say("omnibox-run: signal %d while the sandbox was set up: the launch ends; "
			   "nothing ran\n",
			   st.signalled);
		*status = LAUNCH_EXIT_SETUP;
		return 0;
	}
	if (!st.sandbox_pid) {
		launch_say("omnibox-run: bwrap could not set up the sandbox (status %d); "
			   "nothing ran\n",
			   st.ended ? st.exit_code : exit_status_of(st.status));
		bwrap_hint(l->bwrap);
		namespace_hint();
		*status = LAUNCH_EXIT_SETUP;
		return 0;
	}
	*status = st.ended ? st.exit_code : exit_status_of(st.status);
	return 0;
}
