/*
 * launch_landlock.c - the linux_landlock launch's own steps (launch_landlock.h).
 */
#include "runtime/launch/launch_landlock.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "compiler/base/diag.h"
#include "compiler/decide/landlock.h"
#include "compiler/decide/llbackend.h"
#include "emitters/bwrap.h"
#include "runtime/egress/handoff.h"
#include "runtime/egress/relay.h"
#include "runtime/launch/fds.h"
#include "runtime/resolve/walk.h"

void
landlock_launch_init(struct landlock_launch *ll)
{
	memset(ll, 0, sizeof(*ll));
	ll->relay_fd = -1;
	ll->relay_pid = -1;
}

int
landlock_relay_listen(struct landlock_launch *ll, unsigned *port, char *err, size_t errlen)
{
	uint32_t rnd = 0;
	char why[256] = "";

	if (getrandom(&rnd, sizeof(rnd), 0) != sizeof(rnd))
		rnd = (uint32_t)getpid();
	/* A random port keeps clients from hard-coding it; a taken one, the next. */
	for (unsigned k = 0; k < 200; k++) {
		unsigned p = 20000 + (rnd + k) % 40000;

		ll->relay_fd = relay_listen((uint16_t)p, why, sizeof(why));
		if (ll->relay_fd >= 0) {
			*port = p;
			return 0;
		}
	}
	return diag_fail(err, errlen, "no loopback port for the egress proxy: %s", why);
}

int
landlock_relay_start(struct landlock_launch *ll, const char *socket, char *err, size_t errlen)
{
	/* Before the agent exists: then no one but the relay can hand over. */
	int ho = handoff_take(socket);
	pid_t pid = fork();

	if (pid < 0) {
		if (ho >= 0)
			close(ho);
		return diag_fail(err, errlen, "fork: %s", strerror(errno));
	}
	if (pid == 0) {
		int keep[4] = {0, 2, ll->relay_fd, ho};

		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		fds_keep_only(keep, ho >= 0 ? 4 : 3);
		relay_serve_uid(ll->relay_fd, socket, ho, getuid());
	}
	if (ho >= 0)
		close(ho);
	close(ll->relay_fd);
	ll->relay_fd = -1;
	ll->relay_pid = pid;
	return 0;
}

size_t
landlock_children(struct arena *a, pid_t **out)
{
	char path[64];
	FILE *f;
	size_t n = 0, cap = 0;
	int pid;

	*out = NULL;
	snprintf(path, sizeof(path), "/proc/self/task/%d/children", (int)getpid());
	f = fopen(path, "re");
	while (f && fscanf(f, "%d", &pid) == 1)
		*ARENA_PUSH(a, *out, n, cap) = pid;
	if (f)
		fclose(f);
	return n;
}

static bool
kept(pid_t pid, const pid_t *keep, size_t n_keep)
{
	for (size_t i = 0; i < n_keep; i++)
		if (keep[i] == pid)
			return true;
	return false;
}

size_t
landlock_launch_reap(struct landlock_launch *ll, const pid_t *keep, size_t n_keep)
{
	char path[64];
	size_t killed = 0;

	snprintf(path, sizeof(path), "/proc/self/task/%d/children", (int)getpid());
	for (;;) {
		FILE *f = fopen(path, "re");
		int pid;
		size_t n = 0;

		if (!f)
			break;
		while (fscanf(f, "%d", &pid) == 1)
			if (pid != ll->relay_pid && !kept(pid, keep, n_keep)) {
				kill(pid, SIGKILL);
				waitpid(pid, NULL, __WALL);
				n++;
			}
		fclose(f);
		if (!n)
			break;
		killed += n;
	}
	if (ll->relay_pid > 0) {
		kill(ll->relay_pid, SIGKILL);
		waitpid(ll->relay_pid, NULL, 0);
		ll->relay_pid = -1;
	}
	return killed;
}

void
landlock_launch_close(struct landlock_launch *ll)
{
	landlock_rules_close(&ll->r);
	if (ll->relay_fd >= 0)
		close(ll->relay_fd);
	ll->relay_fd = -1;
}
