/*
 * test_landlock_open.c - runtime/resolve/landlock_open.c: a Landlock plan
 * as descriptors, over real files in a temporary directory.  The exact
 * rules and the inode behind each descriptor; links planted in a
 * container, a container swapped for a link (refused, nothing leaked); a
 * masked path below a missing directory; and the rules enforced by the
 * kernel on a child process.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "compiler/decide/landlock.h"
#include "runtime/launch/landlock.h"
#include "runtime/resolve/landlock_open.h"

#define N(v) (sizeof(v) / sizeof((v)[0]))

/* The rights a rule on a file keeps of a writable and of a read-only grant. */
#define FW (LL_W & LL_FILE_RIGHTS)
#define FR (LL_R & LL_FILE_RIGHTS)

static char top[PATH_MAX]; /* canonical */
static struct arena *A;

static void
sh(const char *script)
{
	char cmd[PATH_MAX + 4096];

	snprintf(cmd, sizeof(cmd), "set -e; cd '%s'; %s", top, script);
	cr_assert_eq(system(cmd), 0, "%s", script);
}

static void
setup(void)
{
	char tmp[] = "/tmp/omnibox-llopen-XXXXXX";

	cr_assert_not_null(mkdtemp(tmp));
	cr_assert_not_null(realpath(tmp, top));
	A = arena_new();
	sh("mkdir -p ws/src ws/.git/hooks ws/.git/objects; echo 'int x;' > ws/src/a.c; "
	   "echo hello > ws/README; echo SECRET=1 > ws/.env; echo '[core]' > ws/.git/config; "
	   "echo x > ws/.git/hooks/pre-commit");
}

static void
teardown(void)
{
	char cmd[PATH_MAX + 32];

	arena_free(A);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(landlock_open, .init = setup, .fini = teardown);

static const char *
at(const char *rel)
{
	return rel[0] ? arena_printf(A, "%s/%s", top, rel) : top;
}

static int
open_grant(const char *rel)
{
	int fd = open(at(rel), O_PATH | O_CLOEXEC);

	cr_assert_geq(fd, 0, "%s: %s", at(rel), strerror(errno));
	return fd;
}

static int
count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	cr_assert_not_null(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* The workspace: writable, .env masked, .git/hooks and .git/config protected. */
struct ws {
	struct ll_open_grant g;
	const char *masked[1];
	const char *protect[2];
	struct ll_opened o;
	char err[1024];
};

static int
open_ws(struct ws *w)
{
	w->g = (struct ll_open_grant){at("ws"), open_grant("ws"), true, "workspace"};
	w->masked[0] = at("ws/.env");
	w->protect[0] = at("ws/.git/hooks");
	w->protect[1] = at("ws/.git/config");
	w->err[0] = '\0';
	return landlock_open(A, &w->g, 1, w->masked, N(w->masked), w->protect, N(w->protect), &w->o,
			     w->err, sizeof(w->err));
}

struct want {
	const char *rel;
	unsigned long long rights;
	const char *why;
};

/* O's rules are exactly W, each descriptor on the inode at its path. */
static void
expect_rules(const struct ll_opened *o, const struct want *w, size_t n)
{
	char buf[4096];
	size_t len = 0;

	for (size_t i = 0; i < o->n_rules && len < sizeof(buf); i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "\n  %s %#llx %s",
					o->rules[i].path, o->rules[i].rights, o->rules[i].why);
	cr_assert_eq(o->n_rules, n, "%zu rules, want %zu:%s", o->n_rules, n, buf);
	for (size_t i = 0; i < n; i++) {
		const struct ll_open_rule *r = &o->rules[i];
		struct stat fs, ls;

		cr_assert_str_eq(r->path, at(w[i].rel), "rule %zu:%s", i, buf);
		cr_assert_eq(r->rights, w[i].rights, "rule %zu (%s):%s", i, r->path, buf);
		cr_assert_str_eq(r->why, w[i].why, "rule %zu (%s):%s", i, r->path, buf);
		cr_assert_gt(r->fd, 2);
		cr_assert_eq(fcntl(r->fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
		cr_assert_eq(fstat(r->fd, &fs), 0);
		cr_assert_eq(lstat(r->path, &ls), 0);
		cr_assert(fs.st_dev == ls.st_dev && fs.st_ino == ls.st_ino,
			  "the descriptor of %s is on another inode", r->path);
	}
}

static const struct want ws_rules[] = {
    {"ws", LL_CONTAINER, "container"},	    {"ws/.git", LL_CONTAINER, "container"},
    {"ws/.git/config", FR, "protected"},    {"ws/.git/hooks", LL_R, "protected"},
    {"ws/.git/objects", LL_W, "workspace"}, {"ws/README", FW, "workspace"},
    {"ws/src", LL_W, "workspace"},
};

Test(landlock_open, a_workspace_as_descriptors)
{
	struct ws w;
	int before = count_fds();

	cr_assert_eq(open_ws(&w), 0, "%s", w.err);
	expect_rules(&w.o, ws_rules, N(ws_rules));
	cr_assert_eq(w.o.n_approx, 3);
	cr_assert_str_eq(w.o.approx[0], arena_printf(A,
						     "masked names in %s are still listed (their "
						     "contents are unreadable)",
						     at("ws")));
	/* The grant's rule is a duplicate: the grant stays the caller's. */
	cr_assert_neq(w.o.rules[0].fd, w.g.fd);
	/* The grant's descriptor, and one per rule: the listings left none open. */
	cr_assert_eq(count_fds(), before + 1 + (int)N(ws_rules));
	landlock_opened_close(&w.o);
	for (size_t i = 0; i < w.o.n_rules; i++)
		cr_assert_eq(w.o.rules[i].fd, -1);
	cr_assert_eq(count_fds(), before + 1);
	cr_assert_geq(fcntl(w.g.fd, F_GETFD), 0, "the grant was closed");
	close(w.g.fd);
}

Test(landlock_open, a_link_planted_in_a_container_gets_no_rule)
{
	struct ws w;
	struct stat etc;

	cr_assert_eq(symlink("/etc", at("ws/evil")), 0);
	cr_assert_eq(symlink("/etc/passwd", at("ws/.git/evil")), 0);
	cr_assert_eq(stat("/etc", &etc), 0);
	cr_assert_eq(open_ws(&w), 0, "%s", w.err);
	expect_rules(&w.o, ws_rules, N(ws_rules));
	for (size_t i = 0; i < w.o.n_rules; i++) {
		struct stat st;

		cr_assert_eq(fstat(w.o.rules[i].fd, &st), 0);
		cr_assert(!(st.st_dev == etc.st_dev && st.st_ino == etc.st_ino), "%s is /etc",
			  w.o.rules[i].path);
		cr_assert(!S_ISLNK(st.st_mode), "%s is a link", w.o.rules[i].path);
	}
	landlock_opened_close(&w.o);
	close(w.g.fd);
}

Test(landlock_open, a_container_swapped_for_a_link_is_refused)
{
	struct ws w;
	int gfd = open_grant("ws"), before;

	/* What the link names looks like a repository, writable. */
	sh("mkdir -p x/hooks; echo y > x/config; mv ws/.git ws/git-away; ln -s \"$PWD/x\" ws/.git");
	before = count_fds();
	w.g = (struct ll_open_grant){at("ws"), gfd, true, "workspace"};
	w.masked[0] = at("ws/.env");
	w.protect[0] = at("ws/.git/hooks");
	w.protect[1] = at("ws/.git/config");
	cr_assert_eq(
	    landlock_open(A, &w.g, 1, w.masked, 1, w.protect, 2, &w.o, w.err, sizeof(w.err)), -1);
	cr_assert_not_null(strstr(w.err, arena_printf(A,
						      "%s changed while the launch was set up "
						      "(it is now a symbolic link); nothing ran",
						      at("ws/.git"))),
			   "%s", w.err);
	cr_assert_eq(w.o.n_rules, 0);
	cr_assert_eq(count_fds(), before, "a descriptor leaked");
	close(gfd);
}

Test(landlock_open, a_masked_path_below_a_missing_directory)
{
	struct ll_open_grant g;
	const char *m[] = {at("ws/nothere/.env")};
	struct ll_opened o;
	char err[512] = "";
	const struct want w[] = {
	    {"ws", LL_CONTAINER, "container"}, {"ws/.env", FW, "workspace"},
	    {"ws/.git", LL_W, "workspace"},    {"ws/README", FW, "workspace"},
	    {"ws/src", LL_W, "workspace"},
	};

	g = (struct ll_open_grant){at("ws"), open_grant("ws"), true, "workspace"};
	cr_assert_eq(landlock_open(A, &g, 1, m, 1, NULL, 0, &o, err, sizeof(err)), 0, "%s", err);
	expect_rules(&o, w, N(w));
	landlock_opened_close(&o);
	close(g.fd);
}

Test(landlock_open, a_nested_grant_and_a_file_grant_reuse_their_descriptors)
{
	struct ll_open_grant g[] = {
	    {at("ws"), open_grant("ws"), false, "workspace"},
	    {at("ws/src"), open_grant("ws/src"), true, "write_paths"},
	    {at("ws/README"), open_grant("ws/README"), true, "write_files"},
	};
	const char *m[] = {at("ws/src/.env"), at("ws/.env")};
	struct ll_opened o;
	char err[512] = "";
	const struct want w[] = {
	    {"ws", LL_CONTAINER, "container"},	{"ws/.git", LL_R, "workspace"},
	    {"ws/README", LL_W, "write_files"}, {"ws/src", LL_CONTAINER, "container"},
	    {"ws/src/a.c", FW, "write_paths"},
	};

	sh("echo K=1 > ws/src/.env");
	cr_assert_eq(landlock_open(A, g, N(g), m, N(m), NULL, 0, &o, err, sizeof(err)), 0, "%s",
		     err);
	expect_rules(&o, w, N(w));
	landlock_opened_close(&o);
	for (size_t i = 0; i < N(g); i++)
		close(g[i].fd);
}

/* In a child restricted to the workspace's rules: what each open gives. */
static int
child(const struct ll_opened *o)
{
	struct landlock_fd_rule r[16];
	char err[512];
	int fd, bad = 0;

	for (size_t i = 0; i < o->n_rules; i++)
		r[i] = (struct landlock_fd_rule){o->rules[i].fd, o->rules[i].rights};
	if (landlock_confine(r, o->n_rules, NULL, 0, false, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return 100;
	}
	if ((fd = open(at("ws/README"), O_RDONLY | O_CLOEXEC)) < 0)
		bad |= 1;
	else
		close(fd);
	if ((fd = open(at("ws/.env"), O_RDONLY | O_CLOEXEC)) >= 0 || errno != EACCES)
		bad |= 2;
	if ((fd = open(at("ws/.git/config"), O_WRONLY | O_CLOEXEC)) >= 0 || errno != EACCES)
		bad |= 4;
	if ((fd = open(at("ws/src/a.c"), O_WRONLY | O_APPEND | O_CLOEXEC)) < 0)
		bad |= 8;
	else
		close(fd);
	if ((fd = open(at("ws/.git/hooks/pre-commit"), O_RDONLY | O_CLOEXEC)) < 0)
		bad |= 16;
	else
		close(fd);
	if ((fd = open(at("ws/.git/hooks/pre-commit"), O_WRONLY | O_CLOEXEC)) >= 0 ||
	    errno != EACCES)
		bad |= 32;
	if ((fd = open("/etc/passwd", O_RDONLY | O_CLOEXEC)) >= 0 || errno != EACCES)
		bad |= 64;
	return bad;
}

Test(landlock_open, the_kernel_enforces_the_rules)
{
	struct ws w;
	int status;
	pid_t pid;

	if (landlock_abi() < LANDLOCK_ABI_FS)
		cr_skip_test("this kernel has no Landlock (ABI %d, %d needed)", landlock_abi(),
			     LANDLOCK_ABI_FS);
	cr_assert_eq(open_ws(&w), 0, "%s", w.err);
	cr_assert_leq(w.o.n_rules, 16);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0)
		_exit(child(&w.o));
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status));
	cr_assert_eq(WEXITSTATUS(status), 0,
		     "%d: 1 README unreadable, 2 .env readable, 4 .git/config writable, 8 "
		     "src/a.c not writable, 16 a hook unreadable, 32 a hook writable, 64 "
		     "/etc/passwd readable (100: no ruleset)",
		     WEXITSTATUS(status));
	landlock_opened_close(&w.o);
	close(w.g.fd);
}
