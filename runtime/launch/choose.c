/*
 * choose.c - the Linux backend for a policy (choose.h).
 */
#include "runtime/launch/choose.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include "compiler/base/textbuf.h"
#include "compiler/decide/llbackend.h"
#include "runtime/launch/landlock.h"
#include "runtime/launch/launch.h"

/* The probe: what its child is asked, and what it found. */
struct probe {
	int flags;
	int found; /* 0, or the errno of what bwrap could not do either; -1: nothing said */
};

/* The probe's child, which says what it found in this process's memory
 * (vfork) before it ends, and in its exit status (a fork: sanitizers). */
static int
probe_namespaces(void *arg)
{
	struct probe *p = arg;

	/* AppArmor's restriction lets the namespace be made, then refuses what
	 * bwrap does in it: a mount. */
	if (unshare(p->flags) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		p->found = errno ? errno : EPERM;
	else
		p->found = 0;
	return p->found;
}

/* The last probe's child, ended but maybe not reaped yet. */
static pid_t probe_child = -1;

void
launch_probe_reap(void)
{
	if (probe_child > 0)
		while (waitpid(probe_child, NULL, 0) < 0 && errno == EINTR)
			;
	probe_child = -1;
}

int
launch_namespaces_refused(void)
{
	struct probe p = {getuid() ? CLONE_NEWUSER | CLONE_NEWNS : CLONE_NEWNS, -1};
	int status = 0;
	pid_t pid;

	launch_probe_reap();
	pid = launch_vfork(probe_namespaces, &p);
	if (pid < 0)
		return errno ? errno : EAGAIN;
	/* Said before it ended: this process goes on while the kernel tears
	 * its namespace down (a tenth of a millisecond), and reaps it later. */
	if (p.found >= 0) {
		probe_child = pid;
		return p.found;
	}
	/* Forked, or killed before it said (a seccomp filter may kill for
	 * unshare()): its status says. */
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return errno;
	return WIFEXITED(status) ? WEXITSTATUS(status) : EPERM;
}

struct list {
	struct textbuf *out;
};

static void
list_row(void *arg, const char *setting, uint32_t line, struct llb_verdict v)
{
	struct list *l = arg;

	if (v.status == LLB_ENFORCED)
		return;
	tb_puts(l->out, "  ");
	if (line)
		tb_printf(l->out, "line %u: ", line);
	tb_printf(l->out, "%s: %s: %s\n", setting,
		  v.status == LLB_APPROXIMATED ? "approximated" : "not enforced", v.how);
}

int
launch_choose_linux(const struct policy *p, bool quiet, bool *landlock, char *err,
		    size_t errlen)
{
	const char *why;
	int need = llbackend_abi(p, &why), e;
	char abi[512];
	struct textbuf t = {0};
	struct list l = {&t};
	size_t n;

	*landlock = p->os_env.sandbox.type == SANDBOX_LINUX_LANDLOCK;
	if (*landlock) {
		n = llbackend_settings(p, true, list_row, &l);
		tb_free(&t);
		if (n && !quiet)
			launch_say("omnibox-run: linux_landlock approximates %zu setting%s of this "
				   "policy, as written (--explain --target=linux lists %s)\n",
				   n, n == 1 ? "" : "s", n == 1 ? "it" : "them");
		return 0;
	}
	if (p->os_env.sandbox.type != SANDBOX_AUTO || !(e = launch_namespaces_refused()))
		return 0;
	if (landlock_need_abi(need, abi, sizeof(abi)) < 0) {
		snprintf(err, errlen,
			 "namespaces cannot be made here (%s), and the linux_landlock backend "
			 "cannot run either: %s; nothing ran",
			 strerror(e), abi);
		return -1;
	}
	n = llbackend_settings(p, true, list_row, &l);
	if (n) {
		snprintf(err, errlen,
			 "namespaces cannot be made here (%s), and the linux_landlock backend "
			 "cannot enforce %zu setting%s of this policy exactly:\n%s"
			 "omnibox-run: to accept %s, write `type: linux_landlock` in "
			 "os_env.sandbox (--explain --target=linux lists what it does); nothing ran",
			 strerror(e), n, n == 1 ? "" : "s", t.data ? t.data : "",
			 n == 1 ? "it" : "them");
		tb_free(&t);
		return -1;
	}
	tb_free(&t);
	*landlock = true;
	if (!quiet)
		launch_say("omnibox-run: namespaces cannot be made here (%s): linux_landlock runs "
			   "this policy, which it enforces exactly (the host's processes stay listed "
			   "in /proc)\n",
			   strerror(e));
	return 0;
}
