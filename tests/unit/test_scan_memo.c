/*
 * test_scan_memo.c - the listings a dotfile scan keeps for the next one
 * (runtime/resolve/scan_memo.h), on real trees under /tmp: the same result
 * as a scan without them, every change seen at once, and nothing taken from
 * a memo file anyone else wrote or kept from before a change.
 *
 * Directories must be a second old for their listings to be kept: the
 * tests that need a warm memo wait that second once.
 */
#include <criterion/criterion.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "runtime/resolve/scan.h"
#include "tests/unit/scratch_tree.h"
#include "runtime/resolve/scan_memo.h"

static char tmp[64];
static char ws[96], cache[96];
static struct scan_result res;
static char err[1024];
static const char *const default_allow[] = {".venv"};

static void
setup(void)
{
	strcpy(tmp, "/tmp/omnibox-memo-XXXXXX");
	cr_assert_not_null(mkdtemp(tmp), "mkdtemp: %s", strerror(errno));
	snprintf(ws, sizeof(ws), "%s/ws", tmp);
	snprintf(cache, sizeof(cache), "%s/cache", tmp);
	cr_assert_eq(mkdir(ws, 0755), 0);
	cr_assert_eq(mkdir(cache, 0700), 0);
	cr_assert_eq(setenv("XDG_CACHE_HOME", cache, 1), 0);
}

static void
teardown(void)
{
	scan_result_free(&res);
	scratch_remove(tmp);
}

TestSuite(scan_memo, .init = setup, .fini = teardown);

static const char *
at(const char *rel)
{
	return scratch_at(ws, rel);
}

static void
touch(const char *rel)
{
	int fd = open(at(rel), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

	cr_assert_geq(fd, 0, "create %s: %s", rel, strerror(errno));
	close(fd);
}

/* 40 directories of 30 files, a .env in every third, a .git at the top,
 * and hidden directories, one of them with something below it. */
static void
wide_tree(void)
{
	char p[64];

	for (int d = 0; d < 40; d++) {
		snprintf(p, sizeof(p), "d%d", d);
		cr_assert_eq(mkdir(at(p), 0755), 0);
		for (int f = 0; f < 30; f++) {
			snprintf(p, sizeof(p), "d%d/f%d", d, f);
			touch(p);
		}
		if (d % 3 == 0) {
			snprintf(p, sizeof(p), "d%d/.env", d);
			touch(p);
		}
	}
	cr_assert_eq(mkdir(at("d5/sub"), 0755), 0);
	touch("d5/sub/.npmrc");
	cr_assert_eq(mkdir(at(".git"), 0755), 0);
	touch(".env");
}

/* The ctime of every directory made so far a second old: kept from here. */
static void
settle(void)
{
	struct timespec t = {1, 100000000};

	nanosleep(&t, NULL);
}

static const char *
hits(const struct scan_result *r)
{
	static char bufs[2][8192];
	static int next;
	char *buf = bufs[next++ % 2];
	size_t len = 0, n = strlen(ws);

	buf[0] = '\0';
	for (size_t i = 0; i < r->n_hits && len < 8192; i++)
		len += (size_t)snprintf(buf + len, 8192 - len, "%s%s", i ? " " : "",
					r->hits[i].path + n + 1);
	return buf;
}

/* Scan the workspace, recursive, with the memo (or without) and ALONE. */
static void
run(bool memo, bool alone)
{
	const char *roots[] = {ws};
	struct scan_options o = {
	    .allow = default_allow,
	    .n_allow = 1,
	    .recursive = true,
	    .max_entries = 1000000,
	    .overflow = SCAN_WARN,
	    .alone = alone,
	    .memo = memo ? "test" : NULL,
	};

	scan_result_free(&res);
	cr_assert_eq(scan_run(roots, 1, &o, &res, err, sizeof(err)), 0, "scan failed: %s", err);
}

/* The path of the memo file the scans of the workspace keep. */
static const char *
memo_file(void)
{
	static char path[1024];
	char dir[512];
	struct dirent *e;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/omnibox", cache);
	path[0] = '\0';
	d = opendir(dir);
	cr_assert_not_null(d, "no cache directory %s", dir);
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, "scan2-test-", 11))
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
	closedir(d);
	cr_assert(path[0], "no memo file in %s", dir);
	return path;
}

static size_t
read_file(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "rb");
	size_t n;

	cr_assert_not_null(f);
	n = fread(buf, 1, size, f);
	fclose(f);
	return n;
}

static void
write_file(const char *path, const char *buf, size_t len)
{
	FILE *f = fopen(path, "wb");

	cr_assert_not_null(f);
	cr_assert_eq(fwrite(buf, 1, len, f), len);
	cr_assert_eq(fclose(f), 0);
}

Test(scan_memo, an_unchanged_tree_is_taken_from_the_memo_with_the_same_result)
{
	char want[8192];
	uint64_t visited;

	wide_tree();
	settle();
	run(false, true);
	snprintf(want, sizeof(want), "%s", hits(&res));
	visited = res.visited;
	cr_assert_eq(res.memo_hits, 0);
	run(true, true);
	cr_assert_eq(res.memo_hits, 0, "the first scan found a memo");
	cr_assert_str_eq(hits(&res), want);
	for (int alone = 1; alone >= 0; alone--) {
		run(true, alone);
		/* The root, d0..d39 and d5/sub; .git is hidden, not listed. */
		cr_assert_eq(res.memo_hits, 42, "%zu directories were taken from the memo",
			     res.memo_hits);
		cr_assert_str_eq(hits(&res), want, "from the memo, the hits differ");
		cr_assert_eq(res.visited, visited);
	}
}

Test(scan_memo, every_change_to_a_directory_is_seen_at_once)
{
	struct timespec old[2] = {{1000000000, 0}, {1000000000, 0}};

	wide_tree();
	settle();
	run(true, true);
	run(true, true);
	cr_assert_eq(res.memo_hits, 42);
	/* A secret made, one removed, one renamed in, each in a directory
	 * whose listing is kept; and its mtime set back, as an agent could. */
	touch("d1/.aws");
	cr_assert_eq(unlink(at("d3/.env")), 0);
	cr_assert_eq(rename(at("d7/f1"), at("d7/.netrc")), 0);
	cr_assert_eq(utimensat(AT_FDCWD, at("d1"), old, 0), 0);
	cr_assert_eq(utimensat(AT_FDCWD, at("d7"), old, 0), 0);
	touch("d5/sub/.pypirc");
	run(true, true);
	cr_assert_eq(res.memo_hits, 38, "%zu directories were taken from the memo", res.memo_hits);
	cr_assert(strstr(hits(&res), "d1/.aws"), "a new dotfile was missed: %s", hits(&res));
	cr_assert(strstr(hits(&res), "d7/.netrc"), "a renamed dotfile was missed");
	cr_assert(strstr(hits(&res), "d5/sub/.pypirc"), "a dotfile one level down was missed");
	cr_assert_null(strstr(hits(&res), "d3/.env"), "a removed dotfile is still listed");
	/* And the same again, from a scan without the memo. */
	{
		char want[8192];

		snprintf(want, sizeof(want), "%s", hits(&res));
		run(false, true);
		cr_assert_str_eq(hits(&res), want);
	}
}

static double
now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

Test(scan_memo, a_directory_changed_within_the_second_is_not_kept)
{
	char p[64];
	bool timed = false;

	wide_tree();
	/* Every directory's ctime made now (chmod), then a scan that starts
	 * within the second: nothing of it kept (a loaded machine may take
	 * longer to get there: then again). */
	for (int k = 0; k < 5 && !timed; k++) {
		double t0 = now_s();

		cr_assert_eq(chmod(ws, 0755), 0);
		cr_assert_eq(chmod(at("d5/sub"), 0755), 0);
		for (int d = 0; d < 40; d++) {
			snprintf(p, sizeof(p), "d%d", d);
			cr_assert_eq(chmod(at(p), 0755), 0);
		}
		run(true, true);
		timed = now_s() - t0 < 0.9;
	}
	cr_assert(timed, "no scan started within a second of the change");
	run(true, true);
	cr_assert_eq(res.memo_hits, 0, "listings of directories a moment old were kept");
}

Test(scan_memo, a_memo_file_written_by_anyone_else_is_not_read)
{
	char *f = malloc(1 << 20), *g = malloc(1 << 20);
	size_t len;

	cr_assert(f && g);
	wide_tree();
	settle();
	run(true, true);
	len = read_file(memo_file(), f, 1 << 20);
	cr_assert_gt(len, 64);
	/* Each byte of the file is covered: a listing's, an inode's, the MAC's. */
	for (size_t off = 40; off < len; off += len / 7) {
		memcpy(g, f, len);
		g[off] ^= 0x20;
		write_file(memo_file(), g, len);
		run(true, true);
		cr_assert_eq(res.memo_hits, 0, "a file changed at byte %zu was read", off);
		cr_assert(strstr(hits(&res), "d0/.env"));
	}
	/* Cut short, or longer. */
	write_file(memo_file(), f, len - 8);
	run(true, true);
	cr_assert_eq(res.memo_hits, 0);
	memcpy(g, f, len);
	memset(g + len, 0, 8);
	write_file(memo_file(), g, len + 8);
	run(true, true);
	cr_assert_eq(res.memo_hits, 0);
	/* The scan wrote its own again: read at the next. */
	run(true, true);
	cr_assert_eq(res.memo_hits, 42);
	free(f);
	free(g);
}

Test(scan_memo, a_memo_from_before_a_change_gives_nothing_for_that_directory)
{
	char *f = malloc(1 << 20);
	size_t len;

	cr_assert(f);
	wide_tree();
	settle();
	run(true, true);
	len = read_file(memo_file(), f, 1 << 20);
	touch("d2/.env");
	settle();
	run(true, true);
	cr_assert(strstr(hits(&res), "d2/.env"));
	/* The old file put back: true once, not for d2 any more. */
	write_file(memo_file(), f, len);
	run(true, true);
	cr_assert_eq(res.memo_hits, 41, "%zu directories were taken from the memo", res.memo_hits);
	cr_assert(strstr(hits(&res), "d2/.env"), "an old memo hid a new dotfile: %s", hits(&res));
	free(f);
}

Test(scan_memo, no_cache_directory_no_memo)
{
	char home[256], link[512];

	wide_tree();
	settle();
	/* A home whose .cache is a symlink: not followed, nothing written there. */
	snprintf(home, sizeof(home), "%s/home", tmp);
	snprintf(link, sizeof(link), "%s/.cache", home);
	cr_assert_eq(mkdir(home, 0755), 0);
	cr_assert_eq(symlink(cache, link), 0);
	cr_assert_eq(unsetenv("XDG_CACHE_HOME"), 0);
	cr_assert_eq(setenv("HOME", home, 1), 0);
	run(true, true);
	run(true, true);
	cr_assert_eq(res.memo_hits, 0);
	cr_assert_eq(access(cache, F_OK), 0);
	{
		char dir[512];

		snprintf(dir, sizeof(dir), "%s/omnibox", cache);
		cr_assert_neq(access(dir, F_OK), 0, "a memo was written through a symlink");
	}
	/* No home at all. */
	cr_assert_eq(unsetenv("HOME"), 0);
	run(true, true);
	cr_assert(strstr(hits(&res), "d0/.env"));
}

Test(scan_memo, only_file_systems_that_keep_ctime_and_inodes)
{
	cr_assert(scan_fs_exact(0xEF53)); /* ext4 */
	cr_assert(scan_fs_exact(0x01021994)); /* tmpfs */
	cr_assert_not(scan_fs_exact(0x794c7630)); /* overlayfs */
	cr_assert_not(scan_fs_exact(0x65735546)); /* FUSE */
	cr_assert_not(scan_fs_exact(0x6969)); /* NFS */
}

Test(scan_memo, the_memo_file_names_nothing_of_the_tree_in_the_clear)
{
	char *f = malloc(1 << 20);
	size_t len;

	cr_assert(f);
	wide_tree();
	touch("d9/plain_marker_name");
	touch("d9/.plain_marker_secret");
	settle();
	run(true, true);
	len = read_file(memo_file(), f, 1 << 20);
	cr_assert_gt(len, 1000);
	cr_assert_null(memmem(f, len, "plain_marker", 12), "a name is in the memo in the clear");
	cr_assert_null(memmem(f, len, "f29", 3), "a name is in the memo in the clear");
	free(f);
}

Test(scan_memo, memo_files_unused_for_a_month_and_leftovers_go_at_the_next_write)
{
	char old[512], tmpf[512], recent[512];
	struct timespec t[2] = {{0, 0}, {0, 0}};
	time_t now = time(NULL);
	int fd;

	wide_tree();
	settle();
	run(true, true);
	snprintf(old, sizeof(old), "%s/omnibox/scan-dotfiles-0000000000000000", cache);
	snprintf(tmpf, sizeof(tmpf), "%s/omnibox/.scan2-test-0000000000000000.abcdef", cache);
	snprintf(recent, sizeof(recent), "%s/omnibox/scan2-repos-0000000000000000", cache);
	for (int k = 0; k < 3; k++) {
		const char *p = k == 0 ? old : k == 1 ? tmpf : recent;

		fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
		cr_assert_geq(fd, 0);
		close(fd);
		t[0].tv_sec = t[1].tv_sec = now - (k == 0 ? 31 : k == 1 ? 2 : 20) * 24 * 3600;
		cr_assert_eq(utimensat(AT_FDCWD, p, t, 0), 0);
	}
	/* A change: the memo is written again, and the directory pruned. */
	touch("d4/new");
	cr_assert_eq(utimensat(AT_FDCWD, at("d4"), (struct timespec[2]){{1000000000, 0}, {1000000000, 0}}, 0), 0);
	settle();
	run(true, true);
	cr_assert_neq(access(old, F_OK), 0, "a memo unused for 31 days is still there");
	cr_assert_neq(access(tmpf, F_OK), 0, "a write's leftover of 2 days ago is still there");
	cr_assert_eq(access(recent, F_OK), 0, "a memo used 20 days ago was removed");
	cr_assert_eq(access(memo_file(), F_OK), 0);
}

/* The cap, all-hidden directories and reported repositories: the same with
 * the memo's counted runs as with every entry read. */
Test(scan_memo, the_cap_and_every_report_are_the_same_from_the_memo)
{
	static const char *const all[] = {"*"};
	const char *roots[] = {ws};
	char want[8192];
	uint64_t visited;
	size_t unfinished, all_hidden, named;

	wide_tree();
	cr_assert_eq(mkdir(at("hid"), 0755), 0);
	touch("hid/.a");
	touch("hid/.b");
	cr_assert_eq(mkdir(at("repo"), 0755), 0);
	cr_assert_eq(mkdir(at("repo/objects"), 0755), 0);
	cr_assert_eq(mkdir(at("repo/refs"), 0755), 0);
	touch("repo/HEAD");
	settle();
	/* Every directory's listing in the memo first: the cap then falls
	 * inside listings taken from it. */
	{
		struct scan_options full = {.allow = default_allow,
					    .n_allow = 1,
					    .recursive = true,
					    .overflow = SCAN_UNLIMITED,
					    .alone = true,
					    .memo = "cap"};

		scan_result_free(&res);
		cr_assert_eq(scan_run(roots, 1, &full, &res, err, sizeof(err)), 0, "%s", err);
	}
	for (uint64_t cap = 37; cap < 1300; cap += 211) {
		struct scan_options o = {.allow = default_allow,
					 .n_allow = 1,
					 .recursive = true,
					 .max_entries = cap,
					 .overflow = SCAN_WARN,
					 .alone = true};

		scan_result_free(&res);
		cr_assert_eq(scan_run(roots, 1, &o, &res, err, sizeof(err)), 0, "%s", err);
		snprintf(want, sizeof(want), "%s", hits(&res));
		visited = res.visited;
		unfinished = res.n_unfinished;
		all_hidden = res.n_all_hidden;
		o.memo = "cap";
		for (int k = 0; k < 2; k++) {
			scan_result_free(&res);
			cr_assert_eq(scan_run(roots, 1, &o, &res, err, sizeof(err)), 0, "%s", err);
			cr_assert_str_eq(hits(&res), want, "cap %llu", (unsigned long long)cap);
			cr_assert_eq(res.visited, visited, "cap %llu", (unsigned long long)cap);
			cr_assert_eq(res.n_unfinished, unfinished);
			cr_assert_eq(res.n_all_hidden, all_hidden);
		}
		cr_assert_gt(res.memo_hits, 0, "cap %llu: nothing from the memo",
			     (unsigned long long)cap);
	}
	/* The walk for repositories, which reports HEAD, objects and refs. */
	{
		struct scan_options o = {.allow = all,
					 .n_allow = 1,
					 .recursive = true,
					 .overflow = SCAN_UNLIMITED,
					 .report_name = ".git",
					 .stop_at_named = true,
					 .report_bare = true,
					 .alone = true};

		scan_result_free(&res);
		cr_assert_eq(scan_run(roots, 1, &o, &res, err, sizeof(err)), 0, "%s", err);
		named = res.n_named;
		cr_assert_eq(named, 2, "%zu reported", named); /* .git and repo */
		o.memo = "repos-test";
		for (int k = 0; k < 2; k++) {
			scan_result_free(&res);
			cr_assert_eq(scan_run(roots, 1, &o, &res, err, sizeof(err)), 0, "%s", err);
			cr_assert_eq(res.n_named, named);
		}
		cr_assert_gt(res.memo_hits, 0);
	}
}
