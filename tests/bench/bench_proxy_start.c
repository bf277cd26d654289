/*
 * bench_proxy_start.c - omnibox-proxy's startup alone, as omnibox-run
 * starts it: from fork and exec of `omnibox-proxy --session 3` to its
 * "ready" answer (the session CA made, the trust bundle, its JKS and
 * hashed files written, the Unix socket listening).
 *
 *   bench_proxy_start [-n RUNS] 'LABEL=PATH/omnibox-proxy' ...
 *
 * Each proxy gets a fresh scratch dir per run, a one-rule configuration,
 * no credentials and the host's resolver files; it is stopped (its end of
 * the session shut down) after each answer, outside the timed part.  Runs
 * are interleaved (a, b, a, b, ...) and printed as bench_exec prints them:
 * median, 10th and 90th percentile, and each median as a ratio of the
 * first's.  A proxy that does not answer ready aborts the benchmark.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "runtime/egress/session.h"

#define MAX_PROXIES 8

struct proxy_bin {
	char *label, *path;
	double *ms;
};

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int
rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* One start of P->path in a fresh directory under TOP; the milliseconds to its answer. */
static double
start_once(const struct proxy_bin *p, const char *top, int run)
{
	static const char *const env[] = {NULL};
	struct egress_rule rule = {0};
	struct session_config sc = {0};
	struct session_buf b = {0};
	char dir[4096], sock[4200], bundle[4200];
	unsigned char *data = NULL;
	size_t len;
	int sv[2], status;
	double t0, ms;
	pid_t pid;

	snprintf(dir, sizeof(dir), "%s/%s-%d", top, p->label, run);
	for (char *c = dir + strlen(top) + 1; *c; c++)
		if (*c == ' ' || *c == '/')
			*c = '_';
	snprintf(sock, sizeof(sock), "%s/omnibox-proxy.sock", dir);
	snprintf(bundle, sizeof(bundle), "%s/omnibox-ca.pem", dir);
	if (mkdir(dir, 0700) < 0) {
		perror(dir);
		exit(1);
	}
	rule.methods = EGRESS_GET;
	rule.host = "example.com";
	rule.port = 0;
	rule.path = "/**";
	sc.pc.socket_path = sock;
	sc.pc.ca_bundle_path = bundle;
	sc.pc.rules = &rule;
	sc.pc.n_rules = 1;
	sc.flags = SESSION_QUIET;
	if (session_encode_config(&b, &sc) < 0 ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
		perror("bench_proxy_start");
		exit(1);
	}
	t0 = now_ms();
	pid = fork();
	if (pid < 0) {
		perror("fork");
		exit(1);
	}
	if (pid == 0) {
		char *argv[] = {p->path, (char *)"--session", (char *)"3", NULL};
		int null = open("/dev/null", O_RDWR);

		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		dup2(sv[1], 3);
		execve(p->path, argv, (char **)env);
		_exit(127);
	}
	close(sv[1]);
	if (session_send(sv[0], &b) < 0 || session_recv(sv[0], &data, &len) != 1) {
		fprintf(stderr, "bench_proxy_start: '%s' gave no answer\n", p->label);
		exit(1);
	}
	ms = now_ms() - t0;
	{
		struct arena *a = arena_new();
		const char *msg = NULL;
		char why[512];

		if (session_decode_status(a, data, len, &msg, why, sizeof(why)) < 0 || msg) {
			fprintf(stderr, "bench_proxy_start: '%s' did not start: %s\n", p->label,
				msg ? msg : why);
			exit(1);
		}
		arena_free(a);
	}
	free(data);
	session_buf_free(&b);
	shutdown(sv[0], SHUT_WR);
	while (session_recv(sv[0], &data, &len) == 1)
		free(data);
	close(sv[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return ms;
}

int
main(int argc, char **argv)
{
	struct proxy_bin bins[MAX_PROXIES];
	char top[] = "/tmp/omnibox-bench-proxy.XXXXXX";
	int runs = 50, n = 0, i = 1;

	if (argc > 2 && !strcmp(argv[1], "-n")) {
		runs = atoi(argv[2]);
		i = 3;
	}
	for (; i < argc && n < MAX_PROXIES; i++, n++) {
		char *eq = strchr(argv[i], '=');

		if (!eq || runs < 1) {
			fprintf(stderr, "usage: bench_proxy_start [-n RUNS] 'LABEL=PROXY' ...\n");
			return 2;
		}
		*eq = '\0';
		bins[n].label = argv[i];
		bins[n].path = eq + 1;
		bins[n].ms = calloc((size_t)runs, sizeof(double));
	}
	if (n == 0 || !mkdtemp(top)) {
		fprintf(stderr, "usage: bench_proxy_start [-n RUNS] 'LABEL=PROXY' ...\n");
		return 2;
	}
	for (int c = 0; c < n; c++)
		start_once(&bins[c], top, -1); /* warm the page cache */
	for (int r = 0; r < runs; r++)
		for (int c = 0; c < n; c++)
			bins[c].ms[r] = start_once(&bins[c], top, r);
	rmdir(top);
	for (int c = 0; c < n; c++)
		qsort(bins[c].ms, (size_t)runs, sizeof(double), cmp_double);
	for (int c = 0; c < n; c++) {
		double med = bins[c].ms[runs / 2];

		printf("%-28s median %8.3f ms  p10 %8.3f  p90 %8.3f  ratio %.2fx  (%d runs)\n",
		       bins[c].label, med, bins[c].ms[runs / 10], bins[c].ms[runs * 9 / 10],
		       med / bins[0].ms[runs / 2], runs);
	}
	return 0;
}
