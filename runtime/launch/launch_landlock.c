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
#include "runtime/egress/relay.h"
#include "runtime/launch/fds.h"
#include "runtime/resolve/walk.h"

/* Device ioctls (LANDLOCK_ACCESS_FS_IOCTL_DEV, ABI 5): a terminal needs them. */
#define LL_IOCTL_DEV (1ULL << 15)
#define LL_DEVICE (LL_R | LL_WRITE_FILE | LL_TRUNCATE | LL_IOCTL_DEV)

void
landlock_launch_init(struct landlock_launch *ll)
{
	memset(ll, 0, sizeof(*ll));
	ll->relay_fd = -1;
	ll->relay_pid = -1;
}

static void
push_rule(struct arena *a, struct landlock_launch *ll, size_t *cap, const char *path, int fd,
	  unsigned long long rights, const char *why)
{
	if (ll->n_rules == *cap) {
		size_t ncap = *cap ? 2 * *cap : 64;
		struct landlock_arg_rule *v = arena_alloc(a, ncap * sizeof(*v));

		if (ll->n_rules)
			memcpy(v, ll->rules, ll->n_rules * sizeof(*v));
		ll->rules = v;
		*cap = ncap;
	}
	ll->rules[ll->n_rules++] = (struct landlock_arg_rule){path, fd, rights, why};
}

/*
 * The plan's grants for the planner: the bwrap context's grants and the
 * ones exposed again inside a mask, but not write_files' private
 * directories (the files themselves get rules), and the command's
 * directories, read-only.
 */
static size_t
open_grants(struct arena *a, const struct bwrap_context *c, struct ll_open_grant **out)
{
	struct ll_open_grant *g =
	    arena_alloc(a, (c->n_grants + c->n_reexpose + c->n_command_dirs + 1) * sizeof(*g));
	size_t n = 0;

	for (size_t i = 0; i < c->n_grants; i++)
		if (!c->grants[i].private_dir && c->grants[i].fd >= 0)
			g[n++] = (struct ll_open_grant){c->grants[i].path, c->grants[i].fd,
							c->grants[i].writable, c->grants[i].what};
	for (size_t i = 0; i < c->n_reexpose; i++)
		if (c->reexpose[i].fd >= 0)
			g[n++] = (struct ll_open_grant){c->reexpose[i].path, c->reexpose[i].fd,
							c->reexpose[i].writable,
							c->reexpose[i].what};
	for (size_t i = 0; i < c->n_command_dirs; i++)
		if (c->command_dirs[i].fd >= 0)
			g[n++] = (struct ll_open_grant){c->command_dirs[i].path,
							c->command_dirs[i].fd, false,
							"the command's directory"};
	*out = g;
	return n;
}

/* The fixed rules of every launch (llbackend.h), those that exist here. */
static void
fixed_rules(struct arena *a, struct landlock_launch *ll, size_t *cap)
{
	const struct llb_fixed *f;
	size_t n = llbackend_fixed(&f);

	for (size_t i = 0; i < n; i++) {
		/* The system's own paths: a link there (/bin) is the system's. */
		int fd = open(f[i].path, O_PATH | O_CLOEXEC);

		if (fd < 0)
			continue;
		if (fd < 3) {
			int d = fcntl(fd, F_DUPFD_CLOEXEC, 3);

			close(fd);
			fd = d;
		}
		push_rule(a, ll, cap, f[i].path, fd, f[i].writable ? LL_DEVICE : LL_R, f[i].why);
	}
}

/*
 * In the private home (HOME inside), a link to each grant below the home,
 * so that what a program looks for at $HOME/.gitconfig is what the policy
 * grants at the home's .gitconfig.  The links are the sandbox's to change:
 * what they reach is what the rules allow, wherever they point.
 */
static int
home_links(struct arena *a, const struct launch_plan *plan, char *err, size_t errlen)
{
	const struct bwrap_context *c = &plan->ctx;
	const char *home = plan->home;
	size_t hl = strlen(home);
	int dir;

	if (!c->private_home)
		return 0;
	dir = open(arena_printf(a, "%s/%s", plan->scratch, BWRAP_PRIVATE_HOME),
		   O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dir < 0)
		return diag_fail(err, errlen, "cannot open the private home: %s", strerror(errno));
	for (size_t i = 0; i < c->n_grants + plan->n_writebacks; i++) {
		const char *p =
		    i < c->n_grants ? c->grants[i].path : plan->writebacks[i - c->n_grants].path;
		char *rel;

		if (i < c->n_grants && c->grants[i].private_dir)
			continue;
		if (strncmp(p, home, hl) || p[hl] != '/')
			continue;
		rel = arena_strdup(a, p + hl + 1);
		/* Its parents, then the link; one already made (a nested grant) stays. */
		for (char *s = strchr(rel, '/'); s; s = strchr(s + 1, '/')) {
			*s = '\0';
			if (mkdirat(dir, rel, 0700) < 0 && errno != EEXIST)
				break;
			*s = '/';
		}
		if (symlinkat(p, dir, rel) < 0 && errno != EEXIST && errno != ENOENT) {
			int e = errno;

			close(dir);
			return diag_fail(err, errlen, "cannot link %s in the private home: %s",
					 arena_escape(a, p), strerror(e));
		}
	}
	close(dir);
	return 0;
}

int
landlock_launch_rules(struct arena *a, const struct launch_plan *plan,
		      struct landlock_launch *ll, struct landlock_context *c, bool links,
		      char *err, size_t errlen)
{
	const struct bwrap_context *ctx = &plan->ctx;
	struct ll_open_grant *g;
	size_t n_g = open_grants(a, ctx, &g), cap = 0;
	const char **masked = arena_alloc(a, (ctx->n_masks + 1) * sizeof(*masked));
	const char **prot = arena_alloc(a, (ctx->n_protects + 1) * sizeof(*prot));

	for (size_t i = 0; i < ctx->n_masks; i++)
		masked[i] = ctx->masks[i].path;
	for (size_t i = 0; i < ctx->n_protects; i++)
		prot[i] = ctx->protects[i].path;
	if (landlock_open(a, g, n_g, masked, ctx->n_masks, prot, ctx->n_protects, &ll->opened,
			  err, errlen) < 0)
		return -1;
	fixed_rules(a, ll, &cap);
	for (size_t i = 0; i < ll->opened.n_rules; i++)
		push_rule(a, ll, &cap, ll->opened.rules[i].path, ll->opened.rules[i].fd,
			  ll->opened.rules[i].rights, ll->opened.rules[i].why);
	for (size_t i = 0; i < plan->n_writebacks; i++) {
		int fd = fcntl(plan->writebacks[i].host_fd, F_DUPFD_CLOEXEC, 3);

		if (fd < 0)
			return diag_fail(err, errlen, "cannot open %s: %s",
					 arena_escape(a, plan->writebacks[i].path),
					 strerror(errno));
		push_rule(a, ll, &cap, plan->writebacks[i].path, fd, LL_W & LL_FILE_RIGHTS,
			  "write_files, written in place");
	}
	ll->fds = arena_alloc(a, (ll->n_rules + 1) * sizeof(*ll->fds));
	for (size_t i = 0; i < ll->n_rules; i++)
		ll->fds[ll->n_fds++] = ll->rules[i].fd;
	c->resolved = true;
	c->rules = ll->rules;
	c->n_rules = ll->n_rules;
	c->approx = ll->opened.approx;
	c->n_approx = ll->opened.n_approx;
	return links ? home_links(a, plan, err, errlen) : 0;
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
	pid_t pid = fork();

	if (pid < 0)
		return diag_fail(err, errlen, "fork: %s", strerror(errno));
	if (pid == 0) {
		int keep[3] = {0, 2, ll->relay_fd};

		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		fds_keep_only(keep, 3);
		relay_serve(ll->relay_fd, socket);
	}
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
	landlock_opened_close(&ll->opened);
	/* The opened rules' descriptors were closed with them; the others here. */
	for (size_t i = 0; i < ll->n_rules; i++) {
		bool theirs = false;

		for (size_t k = 0; k < ll->opened.n_rules && !theirs; k++)
			theirs = ll->opened.rules[k].path == ll->rules[i].path;
		if (!theirs && ll->rules[i].fd >= 0)
			close(ll->rules[i].fd);
		ll->rules[i].fd = -1;
	}
	ll->n_fds = 0;
	if (ll->relay_fd >= 0)
		close(ll->relay_fd);
	ll->relay_fd = -1;
}
