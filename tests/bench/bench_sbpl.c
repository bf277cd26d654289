/*
 * bench_sbpl.c - the size and the emit time of a Seatbelt profile for a
 * workspace with 10,000 hidden dotfiles (recursive masking), two ways, side
 * by side in one run:
 *
 *   regex      what omnibox emits: two regular expressions per root express
 *              the hidden set, whatever the tree holds (no scan at launch);
 *   per-file   the enumeration a scan-based launcher would write: one deny
 *              per hidden path and a rename deny on each directory above
 *              one (the scan's own time is not counted).
 *
 * The tree is synthetic (nothing touches the disk): 2,500 package
 * directories, each with .env, .eslintrc, .npmignore and a .cache/
 * directory.  Each form is built once to warm up; the time is the median of
 * RUNS builds.  The profile limit of sandbox-exec (256 KiB) is lifted for
 * the measurement and reported.
 *
 *   bench_sbpl [N_DOTFILES]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "compiler/policy.h"
#include "emitters/sbpl.h"
#include "runtime/launch/darwin.h"

#define RUNS 21
#define PER_DIR 4

static const char policy_yaml[] = "os_env:\n"
				  "  sandbox:\n"
				  "    write_paths: [.]\n"
				  "    cwd_allow_hidden: [.venv, .git]\n"
				  "    cwd_hidden_scan_recursive: true\n"
				  "    cwd_hidden_scan_overflow: unlimited\n";

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

struct result {
	size_t bytes;
	double ms;
	int rc;
};

static struct result
measure(const struct policy *p, const struct sbpl_context *c)
{
	double t[RUNS];
	struct result r = {0};

	for (int i = -1; i < RUNS; i++) {
		struct arena *a = arena_new();
		struct textbuf out = {0};
		struct diag d;
		double t0;

		diag_init(&d, a, "bench.yaml", NULL, 0);
		t0 = now();
		r.rc = sbpl_build(a, p, c, &d, &out, NULL);
		if (i >= 0)
			t[i] = (now() - t0) * 1e3;
		r.bytes = out.len;
		tb_free(&out);
		arena_free(a);
	}
	qsort(t, RUNS, sizeof(t[0]), cmp_double);
	r.ms = t[RUNS / 2];
	return r;
}

int
main(int argc, char **argv)
{
	static const char *const names[PER_DIR] = {".env", ".eslintrc", ".npmignore", ".cache"};
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 10000;
	struct arena *a = arena_new();
	struct launch_request req = {.target = LAUNCH_DARWIN,
				     .launch_dir = "/Users/dev/monorepo",
				     .home = "/Users/dev",
				     .scratch = "/private/var/folders/zz/T/omnibox-abc123",
				     .command_optional = true};
	struct launch_plan facts;
	struct sbpl_hidden *hidden = arena_alloc(a, (n + 1) * sizeof(*hidden));
	struct sbpl_context c;
	struct policy *p, *rp;
	struct result rx, pf;
	struct diag d;

	diag_init(&d, a, "bench.yaml", policy_yaml, sizeof(policy_yaml) - 1);
	p = policy_compile(a, &d, "bench.yaml", policy_yaml, sizeof(policy_yaml) - 1);
	req.policy = p;
	if (!p || darwin_launch_context(a, &req, &facts, &c, &d) < 0) {
		diag_print(&d, stderr, true);
		fprintf(stderr, "bench_sbpl: %s\n", !p ? "invalid policy" : d.failure ? d.failure : "");
		return 1;
	}
	rp = facts.policy;
	for (size_t i = 0; i < n; i++) {
		hidden[i].path = arena_printf(a, "/Users/dev/monorepo/packages/pkg%05zu/%s",
					      i / PER_DIR, names[i % PER_DIR]);
		hidden[i].is_dir = i % PER_DIR == PER_DIR - 1;
	}
	c.max_size = (size_t)1 << 30;
	rx = measure(rp, &c);
	c.enumerate_hidden = true;
	c.hidden = hidden;
	c.n_hidden = n;
	pf = measure(rp, &c);
	if (rx.rc || pf.rc) {
		fprintf(stderr, "bench_sbpl: a profile failed to build\n");
		return 1;
	}
	printf("Seatbelt profile, workspace with %zu hidden dotfiles in %zu directories, "
	       "recursive masking\n",
	       n, (n + PER_DIR - 1) / PER_DIR);
	printf("%-34s %14s %16s %14s\n", "form", "profile bytes", "under 256 KiB", "emit ms");
	printf("%-34s %14zu %16s %14.3f\n", "regex (omnibox, no scan)", rx.bytes,
	       rx.bytes <= SBPL_MAX_SIZE ? "yes" : "no", rx.ms);
	printf("%-34s %14zu %16s %14.3f\n", "per-file enumeration (+ a scan)", pf.bytes,
	       pf.bytes <= SBPL_MAX_SIZE ? "yes" : "no (refused)", pf.ms);
	printf("per-file / regex: %.0fx the bytes, %.0fx the emit time\n",
	       (double)pf.bytes / (double)rx.bytes, pf.ms / rx.ms);
	arena_free(a);
	return 0;
}
