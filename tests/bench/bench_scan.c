/*
 * bench_scan.c - how fast the dotfile scan walks a large tree, against a
 * naive walk (opendir/readdir and an lstat() per entry) in the same run.
 *
 * The tree has about 1,000,000 entries: 10 x 10 x 10 directories, each
 * leaf holding 998 files and one dotfile (.env, or a .git/ directory with
 * a few files inside that neither walk enters), and an .env in every
 * middle directory.  It is built in a new directory under /tmp, or at
 * DIR, which must not exist yet, and removed at the end unless -k is
 * given.  A DIR that holds a complete tree from an earlier run is reused
 * and left alone.
 *
 *   bench_scan [-k] [DIR]
 *
 * Each walk runs once to warm the cache; the figures are medians of the
 * following runs.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "runtime/resolve/scan.h"

#define FANOUT 10
#define LEAF_FILES 998
#define SCAN_RUNS 5
#define NAIVE_RUNS 3
#define MARKER "omnibox-bench-tree-v1"

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void
die(const char *what, const char *path)
{
	fprintf(stderr, "bench_scan: %s %s: %s\n", what, path, strerror(errno));
	exit(1);
}

static void
make_dir(const char *path)
{
	if (mkdir(path, 0755) < 0)
		die("mkdir", path);
}

static void
make_file(int dirfd, const char *name, const char *where)
{
	int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);

	if (fd < 0)
		die("create in", where);
	close(fd);
}

static void
build_leaf(const char *path, unsigned n)
{
	char name[64];
	int dirfd;

	make_dir(path);
	dirfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		die("open", path);
	for (unsigned i = 0; i < LEAF_FILES; i++) {
		snprintf(name, sizeof(name), "module_%04u.c", i);
		make_file(dirfd, name, path);
	}
	if (n % 2) {
		make_file(dirfd, ".env", path);
	} else {
		if (mkdirat(dirfd, ".git", 0755) < 0)
			die("mkdir .git in", path);
		make_file(dirfd, ".git/HEAD", path);
		make_file(dirfd, ".git/config", path);
	}
	close(dirfd);
}

static void
build_tree(const char *root)
{
	char path[PATH_MAX];
	unsigned n = 0;
	double t = now();
	int fd;

	for (unsigned a = 0; a < FANOUT; a++) {
		snprintf(path, sizeof(path), "%s/pkg%02u", root, a);
		make_dir(path);
		for (unsigned b = 0; b < FANOUT; b++) {
			snprintf(path, sizeof(path), "%s/pkg%02u/lib%02u", root, a, b);
			make_dir(path);
			snprintf(path, sizeof(path), "%s/pkg%02u/lib%02u/.env", root, a, b);
			make_file(AT_FDCWD, path, path);
			for (unsigned c = 0; c < FANOUT; c++) {
				snprintf(path, sizeof(path), "%s/pkg%02u/lib%02u/src%02u", root, a,
					 b, c);
				build_leaf(path, n++);
			}
		}
	}
	/* Written last, so that an interrupted build is never reused. */
	snprintf(path, sizeof(path), "%s/" MARKER, root);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		die("create", path);
	close(fd);
	printf("built %s in %.1f s\n", root, now() - t);
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double
median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return v[n / 2];
}

/* What `find DIR -name '.*' -prune` does without d_type: an lstat() per entry. */
static void
naive_walk(char *path, size_t len, unsigned long *entries, unsigned long *hits)
{
	DIR *d = opendir(path);
	struct dirent *e;

	if (!d)
		die("opendir", path);
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name);
		struct stat st;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (len + 1 + n >= PATH_MAX) {
			errno = ENAMETOOLONG;
			die("walk", path);
		}
		path[len] = '/';
		memcpy(path + len + 1, e->d_name, n + 1);
		if (lstat(path, &st) < 0)
			die("lstat", path);
		++*entries;
		if (e->d_name[0] == '.' && strcmp(e->d_name, ".venv") != 0) {
			if (!S_ISLNK(st.st_mode))
				++*hits;
		} else if (S_ISDIR(st.st_mode)) {
			naive_walk(path, len + 1 + n, entries, hits);
		}
		path[len] = '\0';
	}
	closedir(d);
}

static int
rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)ftw;
	return flag == FTW_DP ? rmdir(path) : unlink(path);
}

int
main(int argc, char **argv)
{
	static const char *const allow[] = {".venv"};
	struct scan_options o = {.allow = allow,
				 .n_allow = 1,
				 .recursive = true,
				 .max_entries = 1,
				 .overflow = SCAN_UNLIMITED};
	char root[PATH_MAX] = "/tmp/omnibox-bench-scan-XXXXXX", marker[PATH_MAX + 32];
	char err[512], path[PATH_MAX];
	const char *roots[] = {root};
	double scan_t[SCAN_RUNS + 1], naive_t[NAIVE_RUNS + 1], scan_s, naive_s;
	unsigned long entries = 0, hits = 0;
	bool keep = false, created;
	struct scan_result r;
	int argi = 1;

	if (argi < argc && strcmp(argv[argi], "-k") == 0)
		keep = true, argi++;
	if (argi < argc) {
		snprintf(marker, sizeof(marker), "%s/" MARKER, argv[argi]);
		if (access(marker, F_OK) < 0 && mkdir(argv[argi], 0755) < 0) {
			fprintf(stderr, "bench_scan: %s: %s\n", argv[argi],
				errno == EEXIST ? "exists but holds no tree of ours"
						: strerror(errno));
			return 1;
		}
		created = access(marker, F_OK) < 0;
		/* The scan wants a canonical root. */
		if (!realpath(argv[argi], root))
			die("resolve", argv[argi]);
	} else {
		if (!mkdtemp(root))
			die("mkdtemp", root);
		created = true;
	}
	if (created)
		build_tree(root);
	else
		printf("reusing %s\n", root);

	for (int i = 0; i <= SCAN_RUNS; i++) {
		double t = now();

		if (scan_run(roots, 1, &o, &r, err, sizeof(err)) < 0) {
			fprintf(stderr, "bench_scan: %s\n", err);
			return 1;
		}
		scan_t[i] = now() - t;
		if (i < SCAN_RUNS)
			scan_result_free(&r);
	}
	for (int i = 0; i <= NAIVE_RUNS; i++) {
		double t = now();

		entries = hits = 0;
		snprintf(path, sizeof(path), "%s", root);
		naive_walk(path, strlen(path), &entries, &hits);
		naive_t[i] = now() - t;
	}
	/* Run 0 of each only warmed the cache. */
	scan_s = median(scan_t + 1, SCAN_RUNS);
	naive_s = median(naive_t + 1, NAIVE_RUNS);
	printf("scan entries=%lu hits=%zu seconds=%.4f entries/s=%.0f\n", (unsigned long)r.visited,
	       r.n_hits, scan_s, (double)r.visited / scan_s);
	printf("naive entries=%lu hits=%lu seconds=%.4f entries/s=%.0f\n", entries, hits, naive_s,
	       (double)entries / naive_s);
	printf("ratio naive/scan seconds=%.1f (the scan is that many times faster)\n",
	       naive_s / scan_s);
	if (entries != r.visited || hits != r.n_hits) {
		fprintf(stderr, "bench_scan: the two walks disagree\n");
		return 1;
	}
	scan_result_free(&r);

	if (created && !keep) {
		if (nftw(root, rm_entry, 64, FTW_DEPTH | FTW_PHYS) < 0)
			die("remove", root);
	} else if (created) {
		printf("kept %s\n", root);
	}
	return 0;
}
