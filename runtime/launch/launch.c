/*
 * launch.c - what omnibox-run's launches share (launch.h).
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compiler/base/textbuf.h"
#include "compiler/base/textesc.h"
#include "runtime/launch/fds.h"
#include "runtime/launch/launch.h"
#if defined(__APPLE__)
#include <mach-o/dyld.h>
#endif
/* AddressSanitizer keeps a shadow of this process's memory, which a child
 * sharing it would poison for the parent: a fork() there. */
#if defined(__SANITIZE_ADDRESS__)
#define LAUNCH_FORK_ONLY 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LAUNCH_FORK_ONLY 1
#endif
#endif
#if defined(__linux__) && !defined(LAUNCH_FORK_ONLY)
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#endif

void
launch_process_setup(struct rlimit *given)
{
	/* Whatever the caller left open goes no further than this process. */
	fds_cloexec_from(3);
	/* The proxy's connections need descriptors (its caps follow the limit;
	 * omnibox-proxy inherits this): the soft limit goes up to the hard one
	 * here, and back for the sandbox. */
	if (getrlimit(RLIMIT_NOFILE, given) == 0 && given->rlim_cur < given->rlim_max) {
		struct rlimit up = {given->rlim_max, given->rlim_max};

		setrlimit(RLIMIT_NOFILE, &up);
	}
	signal(SIGPIPE, SIG_IGN);
}

void
launch_vsay(const char *fmt, va_list ap)
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

void
launch_say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	launch_vsay(fmt, ap);
	va_end(ap);
}

char *
launch_self_dir(struct arena *a)
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

#if defined(__linux__) && !defined(LAUNCH_FORK_ONLY)
struct vfork_call {
	int (*fn)(void *);
	void *arg;
};

static int
vfork_child(void *p)
{
	const struct vfork_call *c = p;
	struct sigaction dfl = {.sa_handler = SIG_DFL}, sa;

	/* Its own copy of the handlers (no CLONE_SIGHAND): this process's go. */
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP && sigaction(sig, NULL, &sa) == 0 &&
		    sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN)
			sigaction(sig, &dfl, NULL);
	return c->fn(c->arg);
}

pid_t
launch_vfork(int (*fn)(void *), void *arg)
{
	/* The child runs on this while this process waits: a stack of its own,
	 * below it a page that faults (an overflow ends the child, not this
	 * process's memory). */
	static char *stack;
	const size_t size = 64 * 1024, guard = 4096;
	struct vfork_call c = {fn, arg};
	sigset_t all, old;
	pid_t pid;
	int saved;

	if (!stack) {
		char *m = mmap(NULL, size + guard, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);

		if (m == MAP_FAILED)
			return -1;
		if (mprotect(m, guard, PROT_NONE) < 0) {
			saved = errno;
			munmap(m, size + guard);
			errno = saved;
			return -1;
		}
		stack = m + guard;
	}
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pid = clone(vfork_child, stack + size, CLONE_VM | CLONE_VFORK | SIGCHLD, &c);
	saved = errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = saved;
	return pid;
}
#else
pid_t
launch_vfork(int (*fn)(void *), void *arg)
{
	struct sigaction dfl = {.sa_handler = SIG_DFL}, sa;
	sigset_t all, old;
	pid_t pid;
	int saved;

	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	pid = fork();
	if (pid == 0) {
		for (int sig = 1; sig < NSIG; sig++)
			if (sig != SIGKILL && sig != SIGSTOP && sigaction(sig, NULL, &sa) == 0 &&
			    sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN)
				sigaction(sig, &dfl, NULL);
		_exit(fn(arg));
	}
	saved = errno;
	sigprocmask(SIG_SETMASK, &old, NULL);
	errno = saved;
	return pid;
}
#endif
