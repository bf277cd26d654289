/*
 * launch_bwrap.c - omnibox-run's Linux launch (launch_bwrap.h).
 */
#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "compiler/base/textesc.h"
#include "compiler/decide/env.h"
#include "compiler/decide/transparent.h"
#include "emitters/bwrap.h"
#include "runtime/launch/cgroup.h"
#include "runtime/launch/choose.h"
#include "runtime/launch/copyback.h"
#include "runtime/launch/fds.h"
#include "runtime/launch/handover.h"
#include "runtime/launch/janitor.h"
#include "runtime/launch/landlock.h"
#include "runtime/launch/launch_bwrap.h"
#include "runtime/launch/notify.h"
#include "runtime/resolve/command.h"
#include "runtime/resolve/walk.h"

extern char **environ;

/* The filters, generated at build time (runtime/launch/seccomp_blob.S): the
 * one for bwrap's sandbox, and its variant for linux_landlock's. */
extern const unsigned char omnibox_seccomp_bpf[], omnibox_seccomp_bpf_end[];
extern const unsigned char omnibox_seccomp_ll_bpf[], omnibox_seccomp_ll_bpf_end[];
extern const unsigned char omnibox_seccomp_ll_net_bpf[], omnibox_seccomp_ll_net_bpf_end[];

/* ---- running bwrap ---------------------------------------------------------- */

struct run_state {
	struct event_base *base;
	pid_t bwrap;
	pid_t sandbox_pid; /* omnibox-init, from --json-status-fd; 0 until known */
	int mnt_ns;	   /* its mount namespace, held (hold_mounts()); -1: none */
	int status;
	bool done;
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
static void
signals_hold(bool hold)
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
static int
spawn_bwrap(struct bwrap_launch *l, const struct textbuf *nul, bool resolved, char *err,
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
static void
end_bwrap(struct bwrap_launch *l)
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

static int
run_bwrap(struct bwrap_launch *l, int *status, char *err, size_t errlen)
{
	struct event *evs[N_FORWARD + 3];
	struct run_state st = {.mnt_ns = -1};
	struct pty *pty = l->use_pty ? &l->pty : NULL;
	size_t n_evs, n_helpers = 0;
	pid_t *helpers = NULL;

	if (l->landlock ? spawn_landlock(l, &helpers, &n_helpers, err, errlen) < 0
			: l->bwrap_pid <= 0 && spawn_bwrap(l, &l->nul, true, err, errlen) < 0)
		return -1;
	n_evs = run_state_watch(&st, l, evs);
	st.bwrap = l->bwrap_pid;
	l->bwrap_pid = -1; /* the run's from now on */
	/* It may have ended before the loop watched for it; a signal held
	 * while it was set up ends it now, before omnibox-init has anything. */
	on_signal(SIGCHLD, 0, &st);
	signals_hold(false);
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
	while (!st.done)
		if (event_base_loop(st.base, EVLOOP_ONCE) < 0)
			break;
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
			   exit_status_of(st.status));
		bwrap_hint(l->bwrap);
		namespace_hint();
		*status = LAUNCH_EXIT_SETUP;
		return 0;
	}
	*status = exit_status_of(st.status);
	return 0;
}

/* ---- git_ssh ---------------------------------------------------------------------- */

/*
 * The git_ssh broker of L's plan (runtime/gitssh/broker.h), in a process
 * of its own, listening before the sandbox exists; its sessions log to
 * L's egress log.  The system ssh is taken from an absolute PATH entry the
 * sandbox cannot write, like bwrap.  Returns 0, or -1 with ERR.
 */
static int
start_git_ssh(struct bwrap_launch *l, char *err, size_t errlen)
{
	const struct launch_plan *plan = &l->plan;
	const struct sandbox *sb = &plan->policy->os_env.sandbox;
	struct arena *a = l->a;
	struct gitssh_config gc = {0};
	const char *ssh = launch_find_in_path(a, environ, "ssh"), *real;
	char why[4096];

	if (!ssh)
		return diag_fail(err, errlen,
				 "git_ssh needs the system ssh, and none is on PATH (Debian: apt "
				 "install openssh-client); nothing ran");
	real = walk_canonical(a, ssh);
	if (!real || launch_plan_writable(plan, real))
		return diag_fail(err, errlen,
				 "%s, the ssh found first on PATH, lies in a directory the sandbox "
				 "can write; git_ssh runs the system's ssh only; nothing ran",
				 arena_escape(a, real ? real : ssh));
	gc.bindings = sb->git_ssh;
	gc.n_bindings = sb->n_git_ssh;
	gc.socket_path = arena_printf(a, "%s/%s", plan->scratch, GITSSH_SOCKET);
	gc.token = l->git_ssh_token;
	gc.ssh = real;
	gc.hosts_file = l->o->egress_hosts;
	gc.home = plan->home;
	gc.policy = l->o->input;
	/* Under -q without --egress-log the sessions' lines go nowhere, as the proxy's do. */
	gc.log_fd = l->egress_log.quiet ? open("/dev/null", O_WRONLY | O_CLOEXEC)
					: fileno(l->egress_log.f);
	if (gc.log_fd < 0)
		return diag_fail(err, errlen, "/dev/null: %s; nothing ran", strerror(errno));
	l->git_ssh_pid = gitssh_start(&gc, &l->git_ssh_alive, why, sizeof(why));
	if (l->egress_log.quiet)
		close(gc.log_fd);
	if (l->git_ssh_pid < 0)
		return diag_fail(err, errlen, "%s; nothing ran", why);
	return 0;
}

/* ---- the steps -------------------------------------------------------------------- */

void
bwrap_launch_init(struct bwrap_launch *l)
{
	memset(l, 0, sizeof(*l));
	l->nofile = (struct rlimit){RLIM_INFINITY, RLIM_INFINITY};
	l->scratch.dirfd = -1;
	l->seccomp_fd = -1;
	l->args_fd = -1;
	l->status_pipe[0] = l->status_pipe[1] = -1;
	l->ready_sock[0] = l->ready_sock[1] = -1;
	l->janitor = -1;
	l->sandbox_mnt = -1;
	l->git_ssh_pid = -1;
	l->git_ssh_alive = -1;
	l->bwrap_pid = -1;
	l->proxy.pid = -1;
	l->proxy.ctl = -1;
	l->pty.master = l->pty.slave = -1;
	landlock_launch_init(&l->ll);
}

/*
 * bwrap and omnibox-init, and the scratch dir (only named on --dry-run);
 * then the descriptors omnibox-init gets: the seccomp filter, its status
 * pipe and its ready socket.
 */

/*
 * egress_rules: the empty file bwrap binds the session's CA bundle from,
 * in the new scratch dir, so that bwrap can set the sandbox up while the
 * proxy starts; the proxy writes the bundle into it (truststore.h) before
 * the agent starts.
 */
static int
ca_bundle_hold(struct bwrap_launch *l)
{
	struct stat st;
	int d = open(l->scratch.path, O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), f = -1, e;

	if (d >= 0 && fstat(d, &st) == 0 && st.st_dev == l->scratch.dev &&
	    st.st_ino == l->scratch.ino)
		f = openat(d, ENV_CA_BUNDLE, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			   0644);
	else if (d >= 0)
		errno = ESTALE;
	e = errno;
	if (f >= 0)
		close(f);
	if (d >= 0)
		close(d);
	errno = e;
	return f >= 0 ? 0 : -1;
}

/* bwrap's status pipe and omnibox-init's ready socket, new. */
static int
open_channels(struct bwrap_launch *l)
{
	for (int i = 0; i < 2; i++) {
		if (l->status_pipe[i] >= 0)
			close(l->status_pipe[i]);
		if (l->ready_sock[i] >= 0)
			close(l->ready_sock[i]);
		l->status_pipe[i] = l->ready_sock[i] = -1;
	}
	/* The ready byte comes with the seccomp listener (SCM_RIGHTS), and
	 * omnibox-init's arguments come the other way: a socket. */
	if (pipe2(l->status_pipe, O_CLOEXEC) < 0 ||
	    fcntl(l->status_pipe[0], F_SETFL, O_NONBLOCK) < 0 ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, l->ready_sock) < 0 ||
	    fcntl(l->ready_sock[0], F_SETFL, O_NONBLOCK) < 0)
		return -1;
	l->rq.status_fd = l->plan.ctx.status_fd = l->status_pipe[1];
	l->rq.ready_fd = l->plan.ctx.ready_fd = l->ready_sock[1];
	return 0;
}

static int
prepare_host(struct bwrap_launch *l, char *err, size_t errlen)
{
	const char *tmp, *self;

	/* Absolute PATH entries only, as for the agent's command; and below
	 * (once the policy's writable directories are known) never one the
	 * sandbox could have written: that bwrap would run unsandboxed. */
	l->bwrap = l->landlock ? NULL : launch_find_in_path(l->a, environ, "bwrap");
	if (!l->bwrap && !l->landlock)
		return diag_fail(
		    err, errlen,
		    "bwrap (bubblewrap) is not on PATH; install it (Debian/Ubuntu: apt "
		    "install bubblewrap; Fedora: dnf install bubblewrap)");
	self = launch_self_dir(l->a);
	l->init = self ? launch_find_init(l->a, self) : NULL;
	if (!l->init)
		return diag_fail(err, errlen,
				 "omnibox-init is missing next to omnibox-run; reinstall omnibox");
	tmp = getenv("TMPDIR");
	if (!tmp || tmp[0] != '/')
		tmp = "/tmp";
	if (l->o->dry_run) {
		l->scratch.path = arena_printf(l->a, "%s/omnibox-XXXXXX", tmp);
	} else {
		if (host_scratch_create(l->a, tmp, &l->scratch) < 0)
			return diag_fail(err, errlen, "cannot create the scratch dir in %s: %s",
					 tmp, strerror(errno));
		l->scratch_made = true;
		if (l->p->os_env.sandbox.n_egress && !l->landlock && ca_bundle_hold(l) < 0)
			return diag_fail(err, errlen, "cannot make %s/%s: %s", l->scratch.path,
					 ENV_CA_BUNDLE, strerror(errno));
	}

	if (l->landlock && bwrap_network_shared(l->p))
		l->seccomp_fd = fds_sealed_memfd(
		    "omnibox-seccomp", omnibox_seccomp_ll_net_bpf,
		    (size_t)(omnibox_seccomp_ll_net_bpf_end - omnibox_seccomp_ll_net_bpf));
	else if (l->landlock)
		l->seccomp_fd =
		    fds_sealed_memfd("omnibox-seccomp", omnibox_seccomp_ll_bpf,
				     (size_t)(omnibox_seccomp_ll_bpf_end - omnibox_seccomp_ll_bpf));
	else
		l->seccomp_fd = fds_sealed_memfd("omnibox-seccomp", omnibox_seccomp_bpf,
						 (size_t)(omnibox_seccomp_bpf_end - omnibox_seccomp_bpf));
	if (l->seccomp_fd < 0 || open_channels(l) < 0)
		return diag_fail(err, errlen, "cannot pass the seccomp filter to omnibox-init: %s",
				 strerror(errno));
	return 0;
}

/*
 * With egress_rules: the proxy's port and socket, its log, and the
 * credentials' placeholders in the sandbox's environment.
 */
static int
prepare_egress(struct bwrap_launch *l, char *err, size_t errlen)
{
	struct launch_request *rq = &l->rq;
	const struct sandbox *sb = &l->p->os_env.sandbox;
	struct arena *a = l->a;
	unsigned ports[TRANSPARENT_MAX_PORTS], port;
	int n_ports = transparent_ports(sb->egress, sb->n_egress, ports, NULL);
	uint32_t rnd = 0;

	/* Any port works in the sandbox's own network namespace but one the
	 * rules name (omnibox-init listens there); a random one keeps clients
	 * from hard-coding it. */
	if (getrandom(&rnd, sizeof(rnd), 0) != sizeof(rnd))
		rnd = (uint32_t)getpid();
	for (port = 20000 + rnd % 40000;; port = port == 59999 ? 20000 : port + 1) {
		int i = 0;

		while (i < n_ports && ports[i] != port)
			i++;
		if (i == n_ports)
			break;
	}
	/* linux_landlock: the host's loopback, where another program may hold it. */
	if (l->landlock && !l->o->dry_run &&
	    landlock_relay_listen(&l->ll, &port, err, errlen) < 0)
		return -1;
	rq->proxy_port = arena_printf(a, "%u", port);
	rq->proxy_socket = arena_printf(a, "%s/%s", l->scratch.path, LAUNCH_PROXY_SOCKET);
	if (strlen(rq->proxy_socket) >= sizeof(((struct sockaddr_un *)0)->sun_path))
		return diag_fail(err, errlen,
				 "the proxy socket path %s is too long for a Unix socket; set "
				 "TMPDIR to a shorter directory",
				 rq->proxy_socket);
	if (l->o->dry_run) {
		rq->proxy_port = NULL;
		rq->proxy_socket = NULL;
		rq->extra_env = egress_placeholder_names(a, sb, &rq->n_extra_env);
		return 0;
	}
	/* Opened now, while nothing but the scratch dir needs undoing.
	 * An interactive screen is no place for the proxy's log. */
	if (l->use_pty && !l->o->egress_log) {
		const char *name;

		if (egress_log_create(a, l->o, l->scratch.path, &l->egress_log, &name, err,
				      errlen) < 0)
			return -1;
		if (!l->o->quiet)
			launch_say("omnibox-run: the egress log is %s\n", arena_escape(a, name));
	} else if (egress_log_open(a, l->o, &l->egress_log, err, errlen) < 0) {
		return -1;
	}
	/* The proxy starts now, while the launch is resolved; it gets its
	 * configuration once that is done (start_services()). */
	if (egress_proxy_exec(a, &l->egress_log, &l->proxy, err, errlen) < 0)
		return -1;
	if (egress_credentials(a, sb, l->home, l->scratch.path, &l->creds, err, errlen) < 0 ||
	    egress_resolver_files(l->scratch.path, err, errlen) < 0)
		return -1;
	rq->extra_env = l->creds.env;
	rq->n_extra_env = l->creds.n_env;
	return 0;
}

/* L->rq: what launch_resolve() resolves. */
static void
prepare_request(struct bwrap_launch *l)
{
	struct launch_request *rq = &l->rq;
	const struct launch_options *o = l->o;

	rq->policy = l->p;
	rq->target = LAUNCH_LINUX;
	rq->launch_dir = l->launch_dir;
	rq->cwd = o->cwd;
	rq->home = l->home;
	rq->scratch = l->scratch.path;
	rq->init = l->init;
	rq->bwrap = l->bwrap;
	rq->landlock = l->landlock;
	rq->command = o->command;
	rq->n_command = o->n_command;
	rq->environ = environ;
	rq->create_placeholders = !o->dry_run;
	rq->policy_file =
	    o->input[0] == '/' ? o->input : arena_printf(l->a, "%s/%s", l->launch_dir, o->input);
	rq->seccomp_fd = l->seccomp_fd;
	rq->status_fd = l->status_pipe[1];
	rq->ready_fd = l->ready_sock[1];
}

int
bwrap_launch_prepare(struct bwrap_launch *l, char *err, size_t errlen)
{
	if (prepare_host(l, err, errlen) < 0)
		return -1;
	prepare_request(l);
	return 0;
}

int
bwrap_launch_egress(struct bwrap_launch *l, char *err, size_t errlen)
{
	const struct sandbox *sb = &l->p->os_env.sandbox;
	struct launch_request *rq = &l->rq;

	if (sb->n_egress && prepare_egress(l, err, errlen) < 0)
		return -1;
	/* git_ssh: the helper's token, for the broker started later. */
	if (sb->n_git_ssh) {
		if (l->o->dry_run)
			snprintf(l->git_ssh_token, sizeof(l->git_ssh_token), "{RANDOM}");
		else if (gitssh_new_token(l->git_ssh_token) < 0)
			return diag_fail(err, errlen,
					 "git_ssh: no randomness for the broker's token: %s",
					 strerror(errno));
		rq->extra_env =
		    gitssh_env_add(l->a, rq->extra_env, &rq->n_extra_env, l->git_ssh_token);
	}
	return 0;
}

/* The top-level names of each scan root shown in the line of hidden dotfiles. */
#define HIDDEN_SHOWN 6

/*
 * The scan root the dotfile mask M lies at the top level of (the workspace,
 * or a granted directory outside it, as the resolver scans them), or NULL.
 */
static const char *
hidden_top_root(const struct bwrap_context *c, const struct bwrap_mask *m)
{
	const char *slash = strrchr(m->path, '/');
	size_t len = slash ? (size_t)(slash - m->path) : 0;

	if (!slash || strcmp(m->reason, "dotfile"))
		return NULL;
	if (len == 0)
		len = 1; /* "/.x": the root directory */
	for (size_t i = 0; i < c->n_grants; i++) {
		const char *g = c->grants[i].path;

		if (strlen(g) != len || strncmp(g, m->path, len) || !strcmp(g, c->scratch))
			continue;
		if (!strcmp(g, c->cwd) || c->grants[i].cow || !path_within(g, c->cwd))
			return g;
	}
	return NULL;
}

/*
 * One line for every dotfile the scan hid at the top level of a root, root
 * by root, from the plan's masks (the scan is not run again): what a user
 * misses first (.git, .env) and how to get it back.  Names are the agent's
 * to choose: escaped.
 */
static void
say_hidden(const struct launch_plan *plan)
{
	const struct bwrap_context *c = &plan->ctx;
	struct textbuf line = {0};
	bool *done = calloc(c->n_masks + 1, sizeof(*done));

	for (size_t i = 0; done && i < c->n_masks; i++) {
		const char *root = done[i] ? NULL : hidden_top_root(c, &c->masks[i]);
		size_t shown = 0, more = 0;

		if (!root)
			continue;
		tb_puts(&line, line.len ? "; of " : ", at the top level of ");
		tb_escape(&line, root, 0);
		tb_puts(&line, ": ");
		for (size_t k = i; k < c->n_masks; k++) {
			const char *r = done[k] ? NULL : hidden_top_root(c, &c->masks[k]);

			if (!r || strcmp(r, root))
				continue;
			done[k] = true;
			if (shown == HIDDEN_SHOWN) {
				more++;
				continue;
			}
			tb_puts(&line, shown++ ? ", " : "");
			tb_escape(&line, strrchr(c->masks[k].path, '/') + 1, 0);
		}
		if (more)
			tb_printf(&line, " and %zu more", more);
	}
	if (line.len)
		launch_say("omnibox-run: the dotfile scan hid%s; to show one, name it in "
			   "cwd_allow_hidden (--why=PATH says why a path is hidden)\n",
			   line.data);
	tb_free(&line);
	free(done);
}

/* What the user should know of the launch before it runs (not under -q). */
static void
say_plan(const struct launch_plan *plan)
{
	/* Escaped as they were written (the resolver's shown()). */
	for (size_t i = 0; i < plan->n_skipped; i++)
		launch_say("omnibox-run: warning: %s\n", plan->skipped[i]);
	for (size_t i = 0; i < plan->n_notes; i++)
		launch_say("omnibox-run: %s\n", plan->notes[i]);
	say_hidden(plan);
}

/*
 * The limits: a cgroup, or what stands in, said once.  Before bwrap
 * starts, which enters the cgroup first.
 */
static void
start_cgroup(struct bwrap_launch *l)
{
	const struct limits *lim = &l->p->os_env.sandbox.limits;
	char why[512];

	if (!lim->present || l->cgroup_tried)
		return;
	l->cgroup_tried = true;
	l->cgroup = cgroup_create(l->a, lim, why, sizeof(why));
	if (l->o->quiet)
		return;
	if (l->cgroup)
		launch_say("omnibox-run: limits: the sandbox runs in cgroup %s\n", l->cgroup);
	if (!l->cgroup && lim->processes.present)
		launch_say("omnibox-run: limits.processes is approximate: "
			   "RLIMIT_NPROC counts every process of the user (%s)\n",
			   why);
	if (!l->cgroup && lim->cpu_rate.present)
		launch_say("omnibox-run: limits.cpu_rate is not enforced: %s\n", why);
	if (!l->cgroup && lim->memory.present)
		launch_say("omnibox-run: limits.memory is RLIMIT_DATA (private writable "
			   "memory, not a cgroup's memory.max: %s)\n",
			   why);
}

int
bwrap_launch_spawn(struct bwrap_launch *l, char *err, size_t errlen)
{
	char why[4096];

	if (l->o->dry_run || l->landlock)
		return 0;
	/* bwrap's own arguments depend on what the first step resolved; a
	 * policy whose grants change them finds out in bwrap_launch_build(). */
	if (bwrap_build(l->plan.policy, &l->plan.ctx, NULL, NULL, &l->early, NULL) < 0)
		return 0;
	/* The sandbox's terminal is bwrap's 0, 1 and 2. */
	if (l->use_pty && pty_open(&l->pty, why, sizeof(why)) < 0)
		return diag_fail(err, errlen, "%s; nothing ran (--no-pty runs without one)", why);
	start_cgroup(l);
	/*
	 * A cleanup process before bwrap exists, as ever (janitor.h): its
	 * group is said to it from bwrap's side of the fork.  It gets the
	 * scratch dir and an empty plan: nothing of the agent's runs before
	 * omnibox-init is handed its arguments, so it has no repository to set
	 * aside (with the first step's roots and no repository known at
	 * launch, it would set aside every one of them).  start_services()
	 * starts the one of the resolved plan and lets this one go.
	 */
	l->janitor = janitor_start(&l->scratch, &(struct launch_plan){0}, NULL);
	if (l->janitor < 0)
		return diag_fail(err, errlen, "cannot start the cleanup process: %s",
				 strerror(errno));
	l->janitor_early = true;
	/* A signal from now on is one "while the sandbox was set up": held
	 * until the event loop that ends the launch for it takes it. */
	signals_hold(true);
	return spawn_bwrap(l, &l->early, false, err, errlen);
}

/*
 * The resolved launch has mounts of bwrap's own that the first step could
 * not know (a grant where a system mount is, ...): the bwrap started early
 * ends, having run nothing, and one with these arguments starts, on a
 * status pipe and a ready socket of its own (its omnibox-init may not have
 * ended yet), which the arguments are built again for.
 */
static int
restart_bwrap(struct bwrap_launch *l, char *err, size_t errlen)
{
	if (l->o->verbose)
		launch_say("omnibox-run: bwrap starts again: the resolved launch has mounts of "
			   "bwrap's own\n");
	end_bwrap(l);
	if (open_channels(l) < 0)
		return diag_fail(err, errlen, "cannot start bwrap again: %s", strerror(errno));
	tb_free(&l->text);
	tb_free(&l->nul);
	tb_free(&l->tail);
	bwrap_build(l->plan.policy, &l->plan.ctx, NULL, &l->text, &l->nul, &l->tail);
	return spawn_bwrap(l, &l->nul, true, err, errlen);
}

int
bwrap_launch_build(struct bwrap_launch *l, struct diag *d, char *err, size_t errlen)
{
	struct launch_plan *plan = &l->plan;
	const struct launch_options *o = l->o;
	char why[4096];

	plan->ctx.tty = l->use_pty;
	if (l->use_pty && !o->dry_run && l->pty.master < 0 &&
	    pty_open(&l->pty, why, sizeof(why)) < 0)
		return diag_fail(err, errlen, "%s; nothing ran (--no-pty runs without one)", why);
	if (l->landlock) {
		struct landlock_context *c = &l->llc;

		*c = (struct landlock_context){.init = l->init,
					       .seccomp_fd = l->seccomp_fd,
					       .ready_fd = l->ready_sock[1],
					       .tty = l->use_pty,
					       .proxy_port = l->rq.proxy_port,
					       .exec_path = plan->exec_path,
					       .command = (const char *const *)plan->argv,
					       .n_command = plan->argc};
		if (landlock_rules_open(l->a, plan, &l->ll.r, c, !o->dry_run, err, errlen) < 0)
			return -1;
		/* The sandbox's own terminal, and no other of the user's. */
		if (l->use_pty && !o->dry_run) {
			int fd = fcntl(l->pty.slave, F_DUPFD_CLOEXEC, 3);

			if (fd < 0)
				return diag_fail(err, errlen, "the sandbox's terminal: %s",
						 strerror(errno));
			landlock_rules_add(l->a, &l->ll.r, c, "the sandbox's terminal", fd,
					   LANDLOCK_DEVICE_RIGHTS, "its own pseudo-terminal");
		}
		plan->ll_rules = c->rules; /* --why answers from them */
		plan->n_ll_rules = c->n_rules;
		landlock_build(plan->policy, c, &l->text, &l->nul);
		if (!o->quiet && !o->dry_run)
			say_plan(plan);
		return 0;
	}
	if (!o->dry_run && (plan->ctx.n_masks || plan->ctx.n_sockets)) {
		struct textbuf list = {0};

		/* What omnibox-init checks is in place before it lets anything run. */
		bwrap_masks_list(&plan->ctx, &list);
		plan->ctx.masks_fd = fds_sealed_memfd("omnibox-masks", list.data, list.len);
		tb_free(&list);
		if (plan->ctx.masks_fd < 0)
			return diag_fail(err, errlen, "cannot pass the masks to omnibox-init: %s",
					 strerror(errno));
	}
	bwrap_build(plan->policy, &plan->ctx, d, &l->text, &l->nul, &l->tail);
	if (l->bwrap_pid > 0 &&
	    (l->nul.len != l->early.len || memcmp(l->nul.data, l->early.data, l->nul.len)) &&
	    restart_bwrap(l, err, errlen) < 0)
		return -1;
	if (!o->quiet && !o->dry_run)
		say_plan(plan);
	return 0;
}

void
bwrap_launch_close(struct bwrap_launch *l)
{
	landlock_launch_close(&l->ll);
	launch_plan_close(&l->plan);
	tb_free(&l->text);
	tb_free(&l->nul);
	tb_free(&l->tail);
	tb_free(&l->early);
}

/* Say what the second layer cannot add on this kernel; never silently. */
static void
landlock_report(const struct policy *p, bool quiet)
{
	int abi = landlock_abi();

	if (quiet)
		return;
	if (abi < LANDLOCK_ABI_FS)
		launch_say("omnibox-run: warning: this kernel has no usable Landlock (ABI %d, "
			   "writes need %d): the writable set rests on the mounts alone%s\n",
			   abi, LANDLOCK_ABI_FS,
			   bwrap_network_shared(p) ? ", and the host's abstract Unix sockets stay "
						     "reachable (allow_network: true)"
						   : "");
	else if (abi < LANDLOCK_ABI_SCOPE && bwrap_network_shared(p))
		launch_say("omnibox-run: warning: Landlock ABI %d cannot scope abstract Unix "
			   "sockets (needs %d): the host's stay reachable with allow_network: "
			   "true\n",
			   abi, LANDLOCK_ABI_SCOPE);
}

/*
 * What runs beside the sandbox, up before the agent exists: the event loop
 * with the seccomp refusals, the egress proxy, the git_ssh broker and the
 * cleanup process.
 */
static int
start_services(struct bwrap_launch *l, char *err, size_t errlen)
{
	const struct sandbox *sb = &l->p->os_env.sandbox;

	l->base = event_base_new();
	l->notify = l->base ? notify_new(l->base, l->o->verbose, l->o->quiet) : NULL;
	if (!l->notify)
		return diag_fail(err, errlen, "cannot create the event loop");
	/* linux_landlock: chmod and utimensat on a path, where the rules allow. */
	if (l->landlock) {
		l->ll.meta = (struct metadata_rules){l->ll.r.rules, l->ll.r.n_rules};
		notify_set_answer(l->notify, metadata_answer, &l->ll.meta);
	}
	if (sb->n_egress) {
		struct session_config sc;
		int rc;

		egress_config(l->a, l->o, sb, l->scratch.path, l->rq.proxy_socket, &l->creds,
			      &l->egress_log, &sc);
		/*
		 * Up before the agent exists: no first request may find it missing.
		 * Under bwrap the sandbox is set up meanwhile, and omnibox-init holds
		 * the agent until the proxy has answered (proxy_go()); linux_landlock's
		 * relay, here, needs the proxy listening first.
		 */
		rc = l->landlock ? egress_proxy_start(l->a, &sc, &l->egress_log, &l->proxy, err,
						      errlen)
				 : egress_proxy_spawn(l->a, &sc, &l->egress_log, &l->proxy, err,
						      errlen);
		l->proxy_pending = rc == 0 && !l->landlock;
		/* The proxy has its own copy: ours goes now. */
		if (l->creds.n_creds)
			cred_runtime_wipe(&l->creds);
		if (rc < 0)
			return -1;
		if (l->landlock && landlock_relay_start(&l->ll, l->rq.proxy_socket, err, errlen) < 0)
			return -1;
	}
	if (sb->n_git_ssh) {
		if (!l->egress_log.f &&
		    egress_log_open(l->a, l->o, &l->egress_log, err, errlen) < 0)
			return -1;
		if (start_git_ssh(l, err, errlen) < 0)
			return -1;
	}
	{
		int early = l->janitor_early ? l->janitor : -1;

		l->janitor = janitor_start(&l->scratch, &l->plan, NULL);
		if (l->janitor < 0) {
			l->janitor = early;
			return diag_fail(err, errlen, "cannot start the cleanup process: %s",
					 strerror(errno));
		}
		/* bwrap started before it (bwrap_launch_spawn()): its group, now,
		 * and the first one goes. */
		if (l->bwrap_pid > 0)
			janitor_sandbox(l->janitor, l->bwrap_pid);
		if (early >= 0)
			janitor_release(early);
		l->janitor_early = false;
	}
	return 0;
}

int
bwrap_launch_start(struct bwrap_launch *l, char *err, size_t errlen)
{
	if (!l->landlock)
		landlock_report(l->p, l->o->quiet);
	start_cgroup(l);
	return start_services(l, err, errlen);
}

int
bwrap_launch_run(struct bwrap_launch *l, int *status, char *err, size_t errlen)
{
	/* linux_landlock: write_files are written in place, no copy comes back. */
	if (!l->landlock)
		l->copyback = copyback_start(l->base, l->plan.writebacks, l->plan.n_writebacks);
	if (run_bwrap(l, status, err, errlen) < 0) {
		/* bwrap may have started (the egress proxy failed meanwhile): the
		 * same check as after any run, here, before anything else of the
		 * host's runs; told, the janitor does not do it later, when the
		 * next launch may be setting up the same workspace. */
		launch_quarantine(&l->plan, stderr);
		janitor_checked(l->janitor, -1);
		return -1;
	}
	if (!l->landlock)
		copyback_finish(l->copyback, l->plan.writebacks, l->plan.n_writebacks);
	/* Before anything else of the host's can run git in the workspace. */
	launch_quarantine(&l->plan, stderr);
	janitor_checked(l->janitor, l->sandbox_mnt);
	if (l->sandbox_mnt >= 0)
		close(l->sandbox_mnt);
	l->sandbox_mnt = -1;
	gitssh_stop(l->git_ssh_pid, l->git_ssh_alive);
	launch_plan_close(&l->plan);
	return 0;
}

void
bwrap_launch_report(struct bwrap_launch *l)
{
	struct session_summary refused;
	bool proxy = l->proxy.pid > 0;

	/* The proxy ends first (its last log line), then says what it refused. */
	egress_proxy_stop(l->a, &l->proxy, &refused);
	if (proxy && !l->o->quiet)
		egress_denials_summary(&refused, l->o->input);
	if (!l->o->quiet)
		notify_summary(l->notify, stderr);
	notify_free(l->notify);
	event_base_free(l->base);
	egress_log_close(&l->egress_log);
	if (l->cgroup)
		cgroup_remove(l->cgroup);
	host_remove(&l->scratch, true, false);
	launch_cleanup(&l->plan);
	close(l->janitor);
	tb_free(&l->text);
	tb_free(&l->nul);
	tb_free(&l->tail);
	tb_free(&l->early);
}

void
bwrap_launch_undo(struct bwrap_launch *l)
{
	/* Started early, handed nothing: nothing of the agent's ran; what
	 * the first cleanup process would do is done here. */
	end_bwrap(l);
	if (l->janitor_early) {
		janitor_release(l->janitor);
		l->janitor = -1;
		l->janitor_early = false;
	}
	/* Its socket and bundle are in the scratch dir. */
	egress_proxy_stop(l->a, &l->proxy, NULL);
	if (l->resolved)
		launch_cleanup(&l->plan);
	if (l->scratch_made)
		host_remove(&l->scratch, true, false);
}
