/*
 * test_scan.c - the dotfile scan on real trees built under /tmp: what is
 * hidden, what is descended, symlinks, the entry cap and its modes,
 * nested and missing roots, unreadable directories, deterministic order,
 * d_type fallback and the bound on open descriptors.
 *
 * Results are compared as strings of paths relative to the test's
 * directory, in the result's order, separated by spaces; a hit that is a
 * directory ends in '/', one that is neither file nor directory in '!'.
 */
#include <criterion/criterion.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/resolve/scan.h"
#include "tests/unit/scratch_tree.h"
#include "runtime/resolve/scan_ahead.h"
#include "runtime/launch/elsewhere.h"

static char tmp[64];
static char locked[PATH_MAX]; /* a directory a test made unreadable, for teardown */
static struct scan_result res;
static char err[1024];
static const char *const default_allow[] = {".venv"};

/*
 * The scan reads directories through glibc's getdents64().  Defining it
 * here takes precedence over libc in this binary, so a test can pretend
 * to be on a file system that leaves d_type unset.
 */
static bool hide_dtype;
static unsigned long dtypes_hidden;

ssize_t
getdents64(int fd, void *buf, size_t len)
{
	ssize_t n = syscall(SYS_getdents64, fd, buf, len);

	for (ssize_t off = 0; hide_dtype && off < n;) {
		struct dirent64 *d = (struct dirent64 *)((char *)buf + off);

		d->d_type = DT_UNKNOWN;
		dtypes_hidden++;
		off += d->d_reclen;
	}
	return n;
}

static void
setup(void)
{
	strcpy(tmp, "/tmp/omnibox-scan-XXXXXX");
	cr_assert_not_null(mkdtemp(tmp), "mkdtemp: %s", strerror(errno));
	/* Traversable by uid 65534 for the unreadable-directory test run as root. */
	cr_assert_eq(chmod(tmp, 0755), 0);
}

static void
teardown(void)
{
	scan_result_free(&res);
	if (locked[0])
		chmod(locked, 0755);
	scratch_remove(tmp);
}

TestSuite(scan, .init = setup, .fini = teardown);

static const char *
at(const char *rel)
{
	return scratch_at(tmp, rel);
}

static void
mkdirs(const char *rel)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s", at(rel));
	for (char *c = p + strlen(tmp) + 1; *c; c++) {
		if (*c != '/')
			continue;
		*c = '\0';
		cr_assert(mkdir(p, 0755) == 0 || errno == EEXIST, "mkdir %s: %s", p,
			  strerror(errno));
		*c = '/';
	}
}

/* Create each space-separated path: a directory if it ends in '/', else an empty file. */
static void
tree(const char *spec)
{
	char copy[4096], *save, *tok;

	snprintf(copy, sizeof(copy), "%s", spec);
	for (tok = strtok_r(copy, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		int fd;

		mkdirs(tok);
		if (tok[strlen(tok) - 1] == '/')
			continue;
		fd = open(at(tok), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		cr_assert_geq(fd, 0, "create %s: %s", tok, strerror(errno));
		close(fd);
	}
}

static void
symlink_at(const char *target, const char *rel)
{
	mkdirs(rel);
	cr_assert_eq(symlink(target, at(rel)), 0, "symlink %s: %s", rel, strerror(errno));
}

static const char *
rel(const char *path)
{
	size_t n = strlen(tmp);

	if (strncmp(path, tmp, n) == 0 && path[n] == '/')
		return path + n + 1;
	return strcmp(path, tmp) == 0 ? "." : path;
}

static const char *
hits(const struct scan_result *r)
{
	static char buf[8192];
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < r->n_hits && len < sizeof(buf); i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s%s", i ? " " : "",
					rel(r->hits[i].path),
					r->hits[i].kind == SCAN_DIR	? "/"
					: r->hits[i].kind == SCAN_OTHER ? "!"
									: "");
	return buf;
}

static const char *
paths(const char *const *v, size_t n)
{
	static char bufs[2][8192];
	static int next;
	char *buf = bufs[next++ % 2];
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n && len < 8192; i++)
		len += (size_t)snprintf(buf + len, 8192 - len, "%s%s", i ? " " : "", rel(v[i]));
	return buf;
}

static struct scan_options
options(bool recursive)
{
	return (struct scan_options){
	    .allow = default_allow,
	    .n_allow = 1,
	    .recursive = recursive,
	    .max_entries = 1000000,
	    .overflow = SCAN_WARN,
	};
}

/* Scan the test directory alone into res; the scan must succeed. */
static void
run(const struct scan_options *o)
{
	const char *roots[] = {tmp};

	scan_result_free(&res);
	cr_assert_eq(scan_run(roots, 1, o, &res, err, sizeof(err)), 0, "scan failed: %s", err);
}

Test(scan, top_level_dotfiles_are_hidden_and_venv_stays_visible)
{
	struct scan_options o = options(false);

	tree(".env .aws/credentials .ssh/ .venv/bin/python README.md src/main.c");
	run(&o);
	cr_assert_str_eq(hits(&res), ".aws/ .env .ssh/");
	cr_assert_eq(res.visited, 6, "every child of the root counts once: %lu",
		     (unsigned long)res.visited);
	cr_assert_not(res.overflowed);
}

Test(scan, nested_env_is_hidden_only_when_recursive)
{
	struct scan_options o = options(false);

	tree(".env services/api/.env services/api/main.go");
	run(&o);
	cr_assert_str_eq(hits(&res), ".env");
	o.recursive = true;
	run(&o);
	cr_assert_str_eq(hits(&res), ".env services/api/.env");
}

Test(scan, hidden_directories_are_not_descended)
{
	struct scan_options o = options(true);

	tree(".git/hooks/.sample .git/config .aws/.inner/x");
	run(&o);
	cr_assert_str_eq(hits(&res), ".aws/ .git/");
	cr_assert_eq(res.visited, 2);
}

Test(scan, allowed_directories_are_descended_when_recursive)
{
	struct scan_options o = options(true);

	tree(".venv/lib/.cache/x .venv/.gitignore");
	run(&o);
	cr_assert_str_eq(hits(&res), ".venv/.gitignore .venv/lib/.cache/");
}

Test(scan, allow_list_replaces_the_default)
{
	static const char *const allow[] = {".aws", ".github"};
	struct scan_options o = options(false);

	tree(".venv/ .aws/config .github/workflows/ci.yml .env");
	o.allow = allow;
	o.n_allow = 2;
	run(&o);
	cr_assert_str_eq(hits(&res), ".env .venv/");
}

/* scan_options.keep for the test: what the names below vouch for. */
static bool
keep_listed(void *arg, const char *path, int dirfd, const char *name, unsigned char type)
{
	const char *const *kept = arg;

	(void)dirfd;
	(void)name;
	(void)type;
	for (size_t i = 0; kept[i]; i++)
		if (!strcmp(rel(path), kept[i]))
			return true;
	return false;
}

Test(scan, a_kept_directory_shows_only_what_is_kept_below_it)
{
	static const char *const kept[] = {".gitignore", ".github", ".github/workflows",
					   ".github/workflows/ci.yml", NULL};
	struct scan_options o = options(false);

	tree(".gitignore .env .github/workflows/ci.yml .github/workflows/local.yml "
	     ".github/notes.txt .github/secret/key .github/.hidden src/.eslintrc");
	o.keep = keep_listed;
	o.keep_arg = (void *)kept;
	run(&o);
	/* Below .github every entry is offered, dotted or not, at every depth,
	 * though the scan is not recursive; the rest of the tree is as before. */
	cr_assert_str_eq(hits(&res), ".env .github/.hidden .github/notes.txt .github/secret/ "
				     ".github/workflows/local.yml");
}

Test(scan, empty_allow_list_hides_venv_too)
{
	struct scan_options o = options(false);

	tree(".venv/bin/python .env");
	o.allow = NULL;
	o.n_allow = 0;
	run(&o);
	cr_assert_str_eq(hits(&res), ".env .venv/");
}

Test(scan, symlinked_dotfile_is_skipped_and_reported)
{
	struct scan_options o = options(true);

	tree("real.env realdir/ sub/");
	symlink_at("real.env", ".env");
	symlink_at("../realdir", "sub/.config");
	symlink_at("/nonexistent", ".dangling");
	run(&o);
	cr_assert_str_eq(hits(&res), "");
	cr_assert_str_eq(paths(res.skipped_symlinks, res.n_skipped_symlinks),
			 ".dangling .env sub/.config");
}

Test(scan, symlinked_directory_is_not_followed)
{
	struct scan_options o = options(true);
	const char *roots[1];

	tree("outside/.secret outside/deeper/.token inside/own/.env");
	symlink_at("../outside", "inside/link");
	symlink_at("own", "inside/again");
	roots[0] = at("inside");
	cr_assert_eq(scan_run(roots, 1, &o, &res, err, sizeof(err)), 0, "%s", err);
	cr_assert_str_eq(hits(&res), "inside/own/.env");
	cr_assert_eq(res.visited, 4, "link, again, own and own/.env: %lu",
		     (unsigned long)res.visited);
}

/* COUNT empty files named f000... in the directory REL. */
static void
files(const char *rel_dir, int count)
{
	char name[PATH_MAX];

	for (int i = 0; i < count; i++) {
		snprintf(name, sizeof(name), "%s/f%03d", rel_dir, i);
		tree(name);
	}
}

Test(scan, node_modules_is_visited_last_at_every_level)
{
	struct scan_options o = options(true);

	/* The project has 7 entries; each node_modules has 100. */
	files("node_modules", 100);
	files("src/node_modules", 100);
	tree("src/a/b/c/.env");
	o.max_entries = 20;
	run(&o);
	cr_assert_str_eq(hits(&res), "src/a/b/c/.env");
	cr_assert(res.overflowed);
	cr_assert_str_eq(paths(res.unfinished, res.n_unfinished), "node_modules src/node_modules");
}

Test(scan, deferred_directories_wait_for_the_main_queue)
{
	struct scan_options o = options(true);

	tree("node_modules/x .venv/x src/x lib/x");
	o.max_entries = 4; /* the root's four entries, then lib is cut at once */
	run(&o);
	cr_assert(res.overflowed);
	cr_assert_str_eq(paths(res.unfinished, res.n_unfinished), "lib src .venv node_modules");
	cr_assert_eq(res.n_unfinished, 4);
}

Test(scan, cap_with_warn_returns_the_partial_list)
{
	struct scan_options o = options(true);

	tree(".env a/f1 a/.env b/f1");
	o.max_entries = 3;
	run(&o);
	cr_assert(res.overflowed);
	cr_assert_eq(res.visited, 3);
	cr_assert_str_eq(hits(&res), ".env");
	cr_assert_str_eq(paths(res.unfinished, res.n_unfinished), "a b");
	cr_assert_eq(res.n_unfinished, 2);
}

Test(scan, cap_with_error_fails_and_names_what_was_left)
{
	struct scan_options o = options(true);
	const char *roots[] = {tmp};
	char want[1024];

	tree(".env a/f1 a/.env b/f1");
	o.max_entries = 3;
	o.overflow = SCAN_ERROR;
	errno = 0;
	cr_assert_eq(scan_run(roots, 1, &o, &res, err, sizeof(err)), -1);
	cr_assert_eq(errno, EOVERFLOW);
	snprintf(want, sizeof(want),
		 "dotfile scan stopped after 3 entries (cwd_hidden_scan_max_entries) with 2 "
		 "directories unscanned: %s/a, %s/b; raise cwd_hidden_scan_max_entries or set "
		 "cwd_hidden_scan_overflow: unlimited",
		 tmp, tmp);
	cr_assert_str_eq(err, want);
	cr_assert_null(res.hits, "a failed scan returns nothing");
}

Test(scan, unfinished_list_names_ten_and_counts_the_rest)
{
	struct scan_options o = options(true);

	for (int i = 0; i < 12; i++) {
		char name[32];

		snprintf(name, sizeof(name), "d%02d/x", i);
		tree(name);
	}
	o.max_entries = 12;
	o.overflow = SCAN_ERROR;
	cr_assert_eq(scan_run((const char *const[]){tmp}, 1, &o, &res, err, sizeof(err)), -1);
	cr_assert(strstr(err, "with 12 directories unscanned: ") != NULL, "%s", err);
	cr_assert(strstr(err, "/d09 and 2 more; raise") != NULL, "%s", err);
	cr_assert_null(strstr(err, "/d10"), "%s", err);
}

Test(scan, a_flood_at_the_top_level_is_read_in_full_whatever_the_cap)
{
	struct scan_options o = options(false);

	files(".", 300);
	tree(".aws-credentials .ssh-key zzz/.env");
	o.max_entries = 50;
	o.overflow = SCAN_ERROR;
	run(&o);
	cr_assert_not(res.overflowed, "a top level alone never overflows");
	cr_assert_str_eq(hits(&res), ".aws-credentials .ssh-key");
	cr_assert_eq(res.visited, 303);
	o.recursive = true;
	o.overflow = SCAN_WARN;
	scan_result_free(&res);
	run(&o);
	cr_assert(res.overflowed, "the cap stops the walk below the top level");
	cr_assert_str_eq(hits(&res), ".aws-credentials .ssh-key");
	cr_assert_str_eq(paths(res.unfinished, res.n_unfinished), "zzz");
}

Test(scan, a_root_descriptor_is_read_instead_of_its_path)
{
	struct scan_options o = options(false);
	char moved[PATH_MAX + 8];
	const char *roots[] = {tmp};
	int fd;

	tree(".env");
	fd = open(tmp, O_PATH | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(fd, 0);
	/* The path now names an empty directory; the descriptor, the old one. */
	snprintf(moved, sizeof(moved), "%s.moved", tmp);
	cr_assert_eq(rename(tmp, moved), 0);
	cr_assert_eq(mkdir(tmp, 0700), 0);
	o.root_fds = &fd;
	cr_assert_eq(scan_run(roots, 1, &o, &res, err, sizeof(err)), 0, "%s", err);
	cr_assert_str_eq(hits(&res), ".env");
	close(fd);
	rmdir(tmp);
	cr_assert_eq(rename(moved, tmp), 0);
}

Test(scan, reaching_the_cap_exactly_is_not_an_overflow)
{
	struct scan_options o = options(true);

	tree(".env a/.env a/b");
	o.max_entries = 4;
	o.overflow = SCAN_ERROR;
	run(&o);
	cr_assert_not(res.overflowed);
	cr_assert_eq(res.visited, 4);
	cr_assert_str_eq(hits(&res), ".env a/.env");
}

Test(scan, unlimited_ignores_max_entries)
{
	struct scan_options o = options(true);

	tree(".env a/.env a/b/c/.env");
	o.max_entries = 1;
	o.overflow = SCAN_UNLIMITED;
	run(&o);
	cr_assert_not(res.overflowed);
	cr_assert_str_eq(hits(&res), ".env a/.env a/b/c/.env");
}

Test(scan, nested_roots_are_scanned_once)
{
	struct scan_options o = options(true);
	const char *roots[4];

	tree(".env sub/.env sub/deep/.env .config/app/.token");
	/* at() returns one of four rotating buffers: take the paths last. */
	roots[0] = tmp, roots[1] = at("sub"), roots[2] = tmp, roots[3] = at(".config");
	cr_assert_eq(scan_run(roots, 4, &o, &res, err, sizeof(err)), 0, "%s", err);
	/* .config was granted as a root: scanned, but not masked. */
	cr_assert_str_eq(hits(&res), ".config/app/.token .env sub/.env sub/deep/.env");
	cr_assert_eq(res.visited, 8, "each entry once: %lu", (unsigned long)res.visited);
}

Test(scan, missing_and_non_directory_roots_are_skipped)
{
	struct scan_options o = options(true);
	const char *roots[3];

	tree("file .env");
	symlink_at(".", "link");
	roots[0] = at("gone"), roots[1] = at("file"), roots[2] = tmp;
	cr_assert_eq(scan_run(roots, 3, &o, &res, err, sizeof(err)), 0, "%s", err);
	cr_assert_str_eq(paths(res.skipped_roots, res.n_skipped_roots), "file gone");
	cr_assert_str_eq(hits(&res), ".env");
	scan_result_free(&res);
	roots[0] = at("link");
	cr_assert_eq(scan_run(roots, 1, &o, &res, err, sizeof(err)), 0, "%s", err);
	cr_assert_str_eq(paths(res.skipped_roots, res.n_skipped_roots), "link");
}

Test(scan, roots_must_be_canonical_and_the_cap_positive)
{
	struct scan_options o = options(true);
	const char *bad[] = {"relative", "/tmp/", "/tmp//x", "/tmp/./x", "/tmp/../tmp"};

	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		errno = 0;
		cr_assert_eq(scan_run(&bad[i], 1, &o, &res, err, sizeof(err)), -1, "%s", bad[i]);
		cr_assert_eq(errno, EINVAL, "%s", bad[i]);
	}
	o.max_entries = 0;
	cr_assert_eq(scan_run((const char *const[]){tmp}, 1, &o, &res, err, sizeof(err)), -1);
	cr_assert_eq(errno, EINVAL);
}

/* Scan with the credentials of uid/gid 65534; "unreadable|hits" into OUT. */
static void
scan_as_nobody(const struct scan_options *o, char *out, size_t cap)
{
	int fds[2], status;
	ssize_t n;
	pid_t pid;

	cr_assert_eq(pipe(fds), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		struct scan_result r = {0};
		char line[8192];

		close(fds[0]);
		if (setgroups(0, NULL) < 0 || setgid(65534) < 0 || setuid(65534) < 0)
			_exit(2);
		if (scan_run((const char *const[]){tmp}, 1, o, &r, err, sizeof(err)) < 0)
			_exit(3);
		n = snprintf(line, sizeof(line), "%s|%s", paths(r.unreadable, r.n_unreadable),
			     hits(&r));
		_exit(write(fds[1], line, (size_t)n) == n ? 0 : 4);
	}
	close(fds[1]);
	n = read(fds[0], out, cap - 1);
	out[n > 0 ? n : 0] = '\0';
	close(fds[0]);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 2)
		cr_skip_test("running as root without CAP_SETUID: cannot test as uid 65534");
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
}

Test(scan, unreadable_directory_is_recorded_and_skipped)
{
	struct scan_options o = options(true);
	char got[8192];
	int fd;

	tree("locked/.env open/.env");
	snprintf(locked, sizeof(locked), "%s", at("locked"));
	cr_assert_eq(chmod(locked, 0), 0);
	fd = open(locked, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		run(&o);
		snprintf(got, sizeof(got), "%s|%s", paths(res.unreadable, res.n_unreadable),
			 hits(&res));
	} else {
		/* Privileged: mode 000 does not stop us, so scan as nobody instead. */
		close(fd);
		if (geteuid() != 0)
			cr_skip_test(
			    "mode 000 does not stop this uid and it cannot switch to 65534");
		scan_as_nobody(&o, got, sizeof(got));
	}
	cr_assert_str_eq(got, "locked|open/.env");
}

Test(scan, sockets_and_fifos_are_reported_as_other)
{
	struct scan_options o = options(false);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	cr_assert_geq(sock, 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", at(".agent.sock"));
	cr_assert_eq(bind(sock, (struct sockaddr *)&sa, sizeof(sa)), 0, "%s", strerror(errno));
	close(sock);
	cr_assert_eq(mkfifo(at(".pipe"), 0600), 0);
	tree(".env");
	run(&o);
	cr_assert_str_eq(hits(&res), ".agent.sock! .env .pipe!");
}

Test(scan, output_is_sorted_and_the_same_every_time)
{
	struct scan_options o = options(true);
	char first[8192];
	const char *want = ".a .b/ .z A/.x a/.q a/b/.c b-c/.k b/.m";

	tree(".z b/.m a/b/.c A/.x .b/ a/.q .a b-c/.k");
	run(&o);
	snprintf(first, sizeof(first), "%s", hits(&res));
	run(&o);
	cr_assert_str_eq(hits(&res), first);
	cr_assert_str_eq(first, want, "byte order: \"b-c\" sorts before \"b/\"");
}

Test(scan, unknown_dtype_falls_back_to_lstat)
{
	struct scan_options o = options(true);
	const char *want = ".aws/ .env .pipe! sub/.env";

	tree(".env .aws/x sub/.env sub/deeper/ .venv/lib/");
	cr_assert_eq(mkfifo(at(".pipe"), 0600), 0);
	symlink_at("sub", "link");
	symlink_at("sub", ".linkdir");
	hide_dtype = true;
	run(&o);
	cr_assert_gt(dtypes_hidden, 0, "the getdents64 override was not used");
	cr_assert_str_eq(hits(&res), want);
	cr_assert_str_eq(paths(res.skipped_symlinks, res.n_skipped_symlinks), ".linkdir");
	cr_assert_eq(res.visited, 10);
}

static int
open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	cr_assert_not_null(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

Test(scan, deep_trees_use_a_bounded_number_of_descriptors)
{
	struct scan_options o = options(true);
	struct rlimit old, low;
	char rel_path[PATH_MAX] = "";
	int before, fd;

	/* 200 levels, with a sibling at each one so that the descriptor cache must reopen. */
	for (int i = 0; i < 200; i++) {
		strcat(rel_path, "e");
		cr_assert_eq(mkdir(at(rel_path), 0755), 0);
		rel_path[strlen(rel_path) - 1] = 'd';
		cr_assert_eq(mkdir(at(rel_path), 0755), 0);
		strcat(rel_path, "/");
	}
	strcat(rel_path, ".env");
	tree(rel_path);

	/* Allow 24 more descriptors than are open now: one per level would not fit. */
	fd = dup(0);
	cr_assert_geq(fd, 0);
	close(fd);
	getrlimit(RLIMIT_NOFILE, &old);
	low = old;
	low.rlim_cur = (rlim_t)fd + 24;
	before = open_fds();
	cr_assert_eq(setrlimit(RLIMIT_NOFILE, &low), 0);
	run(&o);
	setrlimit(RLIMIT_NOFILE, &old);
	cr_assert_eq(open_fds(), before, "the scan leaked descriptors");
	cr_assert_eq(res.n_hits, 1);
	cr_assert_str_eq(rel(res.hits[0].path), rel_path);
}

static const char *
all_hidden(const struct scan_result *r)
{
	static char buf[8192];
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < r->n_all_hidden && len < sizeof(buf); i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s", i ? " " : "",
					rel(r->all_hidden[i].path));
	return buf;
}

Test(scan, directories_whose_every_entry_is_hidden_are_listed_outermost_first)
{
	struct scan_options o = options(true);
	struct stat st;

	/* a: only dotfiles; b: a dotfile beside a visible file; c: a directory
	 * of dotfiles and a dotfile, so c is listed and c/x is not; d: empty;
	 * e: an empty visible directory beside a dotfile; f: a hidden symlink
	 * (never masked); g-h: names alike, "g-h" sorts between "g" and "g/". */
	tree("a/.env a/.git/config b/.env b/main.c c/x/.env c/.npmrc d/ e/sub/ e/.env "
	     "g/.env g-h/.env g-h/y");
	symlink_at("../a", "f/.link");
	run(&o);
	cr_assert_str_eq(all_hidden(&res), "a c g");
	cr_assert_eq(stat(tmp, &st), 0);
	for (size_t i = 0; i < res.n_all_hidden; i++) {
		cr_assert_eq(res.all_hidden[i].kind, SCAN_DIR);
		cr_assert_eq(res.all_hidden[i].dir_ino, (unsigned long long)st.st_ino,
			     "found in the root: %s", res.all_hidden[i].path);
	}
	/* Every hit is still reported; the caller chooses. */
	cr_assert_str_eq(hits(&res), "a/.env a/.git/ b/.env c/.npmrc c/x/.env e/.env g-h/.env g/.env");
}

Test(scan, a_root_kept_entries_and_a_capped_scan_are_never_all_hidden)
{
	struct scan_options o = options(true);

	tree(".env .git/ sub/.env sub/deeper/.env");
	run(&o);
	/* The root is never listed, whatever it holds. */
	cr_assert_str_eq(all_hidden(&res), "sub");
	o.recursive = false;
	run(&o);
	cr_assert_str_eq(all_hidden(&res), "", "not listed: %s", all_hidden(&res));
	o.recursive = true;
	o.max_entries = 3;
	run(&o);
	cr_assert(res.overflowed);
	cr_assert_str_eq(all_hidden(&res), "", "cut short: %s", all_hidden(&res));
}

/* ---- the second thread (scan_ahead.h) -------------------------------------- */

static bool
two_cpus(void)
{
	cpu_set_t cpus;

	return sched_getaffinity(0, sizeof(cpus), &cpus) == 0 && CPU_COUNT(&cpus) >= 2;
}

/* Wait (up to 5 s) until the thread has decided about index I. */
static int
ahead_wait(struct scan_ahead *a, size_t i)
{
	int state = 0;

	for (int k = 0; k < 5000 && (state = scan_ahead_state(a, i)) == 0; k++)
		usleep(1000);
	return state;
}

/* Two hundred directories over three levels, with dotfiles, hidden
 * directories, deferred ones and symlinks among them. */
static void
wide_tree(void)
{
	char spec[4096];

	for (int d = 0; d < 40; d++) {
		snprintf(spec, sizeof(spec),
			 "d%d/f1 d%d/f2 d%d/.env%d d%d/sub/x d%d/sub/.hidden/y d%d/sub/deep/.npmrc "
			 "d%d/sub/deep/z d%d/node_modules/pkg/.secret d%d/keep/.venv/bin/a",
			 d, d, d, d, d, d, d, d, d, d);
		tree(spec);
		if (d % 7 == 0) {
			snprintf(spec, sizeof(spec), "d%d/sub/.link", d);
			symlink_at("/etc", spec);
		}
	}
	tree(".env top/ .git/HEAD");
}

Test(scan, a_second_thread_lists_what_one_alone_would)
{
	struct scan_options o = options(true), alone = options(true);
	struct scan_result one = {0};
	char want[8192], want_links[8192];
	size_t ahead = 0;

	wide_tree();
	alone.alone = true;
	run(&alone);
	cr_assert_eq(res.listed_ahead, 0, "alone, %zu directories were listed ahead",
		     res.listed_ahead);
	snprintf(want, sizeof(want), "%s", hits(&res));
	snprintf(want_links, sizeof(want_links), "%s",
		 paths(res.skipped_symlinks, res.n_skipped_symlinks));
	one = res;
	memset(&res, 0, sizeof(res));
	/* The thread may find its CPU busy: some run lists ahead. */
	for (int k = 0; k < 20 && !ahead; k++) {
		run(&o);
		cr_assert_str_eq(hits(&res), want, "with the second thread the hits differ");
		cr_assert_str_eq(paths(res.skipped_symlinks, res.n_skipped_symlinks), want_links);
		cr_assert_eq(res.visited, one.visited);
		cr_assert_eq(res.n_all_hidden, one.n_all_hidden);
		ahead = res.listed_ahead;
	}
	scan_result_free(&one);
	if (!two_cpus())
		cr_skip_test("one CPU here: no second thread to compare");
	cr_assert_gt(ahead, 0, "in 20 scans no directory was listed ahead");
}

Test(scan, a_listing_kept_ahead_is_given_for_the_directory_it_listed_alone)
{
	struct scan_ahead *a = scan_ahead_start(NULL);
	struct stat was, now;
	size_t len = 0;
	char *buf;

	if (!a)
		cr_skip_test("one CPU here: no second thread");
	tree("one/f one/.env");
	cr_assert_eq(stat(at("one"), &was), 0);
	cr_assert_eq(scan_ahead_offer(a, 1, -1, at("one"), 0), 0);
	cr_assert_eq(ahead_wait(a, 1), 1, "one/ was not listed");
	/* Another directory at the same path now: the listing is not its. */
	cr_assert_eq(rename(at("one"), at("old")), 0);
	tree("one/g");
	cr_assert_eq(stat(at("one"), &now), 0);
	buf = scan_ahead_take(a, 1, (unsigned long long)now.st_dev,
			      (unsigned long long)now.st_ino, &len);
	cr_assert_null(buf, "the listing of the directory renamed away was given for the new one");
	/* The directory it listed gets it, with its entries. */
	cr_assert_eq(scan_ahead_offer(a, 2, -1, at("old"), 0), 0);
	cr_assert_eq(ahead_wait(a, 2), 1, "old/ was not listed");
	buf = scan_ahead_take(a, 2, (unsigned long long)was.st_dev, (unsigned long long)was.st_ino,
			      &len);
	cr_assert_not_null(buf);
	cr_assert_not_null(memmem(buf, len, ".env", 5), "the listing lacks .env");
	free(buf);
	scan_ahead_stop(a);
}

Test(scan, the_second_thread_follows_no_symlink_and_stays_below_the_root)
{
	struct scan_ahead *a = scan_ahead_start(NULL);
	int root;

	if (!a)
		cr_skip_test("one CPU here: no second thread");
	tree("real/.env real/inner/f");
	symlink_at(at("real"), "link");
	symlink_at("real", "up/link");
	cr_assert_eq(scan_ahead_offer(a, 1, -1, at("link"), 0), 0);
	cr_assert_eq(ahead_wait(a, 1), -1, "a symlink at the end of the path was followed");
	cr_assert_eq(scan_ahead_offer(a, 2, -1, at("up/link/inner"), 0), 0);
	cr_assert_eq(ahead_wait(a, 2), -1, "a symlink on the path was followed");
	root = open(at("real"), O_PATH | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(root, 0);
	/* Below the root's descriptor: PATH + REL is "..", which leaves it. */
	cr_assert_eq(scan_ahead_offer(a, 3, root, "/x/..", 3), 0);
	cr_assert_eq(ahead_wait(a, 3), -1, "the thread left the root's descriptor");
	cr_assert_eq(scan_ahead_offer(a, 4, root, "/x/inner", 3), 0);
	cr_assert_eq(ahead_wait(a, 4), 1, "inner/ below the root's descriptor was not listed");
	scan_ahead_stop(a);
	close(root);
}

/* ---- the thread started on another CPU (runtime/launch/elsewhere.h) ------------------- */

struct where {
	cpu_set_t at_start; /* its affinity as it starts */
	cpu_set_t after;    /* and after thread_anywhere() */
};

static void *
note_where(void *arg)
{
	struct where *w = arg;

	sched_getaffinity(0, sizeof(w->at_start), &w->at_start);
	thread_anywhere();
	sched_getaffinity(0, sizeof(w->after), &w->after);
	return arg;
}

Test(elsewhere, the_thread_starts_off_this_cpu_and_may_then_run_anywhere)
{
	cpu_set_t mine, both;
	struct where w = {0};
	pthread_t th;
	void *ret = NULL;

	cr_assert_eq(sched_getaffinity(0, sizeof(mine), &mine), 0);
	if (CPU_COUNT(&mine) < 2)
		cr_skip_test("one CPU here: no other CPU to start on");
	cr_assert_eq(thread_elsewhere(&th, note_where, &w), 0);
	cr_assert_eq(pthread_join(th, &ret), 0);
	cr_assert_eq(ret, &w, "the function's result is the thread's");
	/* All of this thread's CPUs but the one it was on then. */
	CPU_AND(&both, &w.at_start, &mine);
	cr_assert(CPU_EQUAL(&both, &w.at_start), "the thread may start where this one may not");
	cr_assert_eq(CPU_COUNT(&w.at_start), CPU_COUNT(&mine) - 1,
		     "the thread is not held off exactly its parent's CPU");
	cr_assert(CPU_EQUAL(&w.after, &mine),
		  "after thread_anywhere() the thread is still held to the other CPUs");
}

static void *
not_run(void *arg)
{
	*(int *)arg = 1;
	return NULL;
}

Test(elsewhere, on_one_cpu_no_thread_starts)
{
	cpu_set_t mine, one;
	int ran = 0;
	pthread_t th;

	cr_assert_eq(sched_getaffinity(0, sizeof(mine), &mine), 0);
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	cr_assert_eq(sched_setaffinity(0, sizeof(one), &one), 0);
	cr_assert_eq(thread_elsewhere(&th, not_run, &ran), -1,
		     "a thread started where it could only wait for its parent");
	sched_setaffinity(0, sizeof(mine), &mine);
	usleep(10000);
	cr_assert_eq(ran, 0);
}

Test(scan, a_directory_git_takes_for_a_repository_is_reported_whatever_its_name)
{
	static const char *const all[] = {"*"};
	struct scan_options o = options(true);
	char got[1024] = "";
	size_t len = 0;

	/* b: HEAD, objects and refs; s: HEAD and a commondir naming where they
	 * are (git reads the common directory's config); h: HEAD alone, and o:
	 * objects and refs alone, which git does not take. */
	tree("b/HEAD b/objects/ b/refs/ s/HEAD s/commondir c/objects/ c/refs/ c/config h/HEAD "
	     "o/objects/ o/refs/");
	o.allow = all;
	o.n_allow = 1;
	o.report_name = ".git";
	o.stop_at_named = true;
	o.report_bare = true;
	run(&o);
	for (size_t i = 0; i < res.n_named; i++)
		len += (size_t)snprintf(got + len, sizeof(got) - len, "%s%s%s", i ? " " : "",
					rel(res.named[i].path),
					res.named[i].kind == SCAN_GITDIR ? "(bare)" : "");
	cr_assert_str_eq(got, "b(bare) s(bare)");
}
