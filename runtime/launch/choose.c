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

/* The probe's child: 0, or the errno of what bwrap could not do either. */
static int
probe_namespaces(void *arg)
{
	int flags = *(const int *)arg;

	/* AppArmor's restriction lets the namespace be made, then refuses what
	 * bwrap does in it: a mount. */
	if (unshare(flags) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return errno ? errno : EPERM;
	return 0;
}

int
launch_namespaces_refused(void)
{
	int status = 0, flags = getuid() ? CLONE_NEWUSER | CLONE_NEWNS : CLONE_NEWNS;
	pid_t pid = launch_vfork(probe_namespaces, &flags);

	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		return errno ? errno : EAGAIN;
	if (!WIFEXITED(status))
		return EPERM;
	return WEXITSTATUS(status);
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
