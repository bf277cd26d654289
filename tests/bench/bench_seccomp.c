/*
 * bench_seccomp.c - what the seccomp filter adds to a system call.
 *
 *   bench_seccomp [-n ROUNDS]
 *
 * Times two calls the filter lets through only after looking at their
 * arguments: ioctl(FIONREAD) on a pipe, and socket(AF_INET) + close.  (A
 * call allowed whatever its arguments never runs the filter after the
 * first time: since Linux 5.11 the kernel caches that verdict.)  Each
 * measurement runs in a forked child: without a filter, under the emitted
 * filter with libseccomp's binary tree, under the same filter searched
 * linearly.  Rounds interleave the three (none, tree, linear, none, ...)
 * so that load from elsewhere on the machine hits all of them alike; each
 * line is the median over the rounds, with its ratio to no filter.
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "emitters/seccomp.h"

#define MAX_ROUNDS 101
#define IOCTL_CALLS 200000
#define SOCKET_CALLS 20000

enum { CALL_IOCTL, CALL_SOCKET, N_CALLS };
enum { FILTER_NONE, FILTER_TREE, FILTER_LINEAR, N_FILTERS };

static const char *const call_names[N_CALLS] = {"ioctl(FIONREAD) on a pipe",
						"socket(AF_INET) + close"};
static const char *const filter_names[N_FILTERS] = {"no filter", "binary tree", "linear"};

static double
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void
die(const char *what)
{
	fprintf(stderr, "bench_seccomp: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* ns per call of CALL, N times after a warm-up; exits on any failure. */
static double
time_call(int call, long n)
{
	int fds[2], avail;
	double t0;

	if (pipe(fds) || write(fds[1], "x", 1) != 1)
		die("pipe");
	for (int pass = 0; pass < 2; pass++) {
		long iters = pass ? n : n / 10;

		t0 = now_ns();
		for (long i = 0; i < iters; i++) {
			if (call == CALL_IOCTL) {
				if (ioctl(fds[0], FIONREAD, &avail))
					die("ioctl");
			} else {
				int s = socket(AF_INET, SOCK_STREAM, 0);

				if (s < 0)
					die("socket");
				close(s);
			}
		}
	}
	return (now_ns() - t0) / (double)n;
}

/* Measure both calls in a child under PROG (none when NULL), into NS. */
static void
measure(const struct textbuf *prog, double ns[N_CALLS])
{
	int fds[2], status;
	pid_t pid;

	if (pipe(fds))
		die("pipe");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		double out[N_CALLS];

		if (prog) {
			struct sock_fprog fp;

			fp.len = (unsigned short)(prog->len / sizeof(struct sock_filter));
			fp.filter = (struct sock_filter *)prog->data;
			if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
			    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fp))
				die("installing the filter");
		}
		out[CALL_IOCTL] = time_call(CALL_IOCTL, IOCTL_CALLS);
		out[CALL_SOCKET] = time_call(CALL_SOCKET, SOCKET_CALLS);
		_exit(write(fds[1], out, sizeof(out)) == sizeof(out) ? 0 : 1);
	}
	close(fds[1]);
	if (read(fds[0], ns, sizeof(double) * N_CALLS) != (ssize_t)(sizeof(double) * N_CALLS) ||
	    waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "bench_seccomp: a measuring child failed\n");
		exit(1);
	}
	close(fds[0]);
}

int
main(int argc, char **argv)
{
	static double ns[N_CALLS][N_FILTERS][MAX_ROUNDS];
	struct textbuf progs[N_FILTERS] = {{0}};
	int rounds = 5;
	char err[256];

	if (argc == 3 && !strcmp(argv[1], "-n"))
		rounds = atoi(argv[2]);
	if ((argc != 1 && argc != 3) || rounds < 1 || rounds > MAX_ROUNDS) {
		fprintf(stderr, "usage: bench_seccomp [-n ROUNDS (1-%d)]\n", MAX_ROUNDS);
		return 2;
	}
	if (seccomp_generate(true, false, &progs[FILTER_TREE], err, sizeof(err)) ||
	    seccomp_generate(false, false, &progs[FILTER_LINEAR], err, sizeof(err))) {
		fprintf(stderr, "bench_seccomp: %s\n", err);
		return 1;
	}
	for (int r = 0; r < rounds; r++)
		for (int f = 0; f < N_FILTERS; f++) {
			double one[N_CALLS];

			measure(f == FILTER_NONE ? NULL : &progs[f], one);
			for (int c = 0; c < N_CALLS; c++)
				ns[c][f][r] = one[c];
		}
	printf("%-28s %-12s %10s %8s   (median of %d rounds)\n", "call", "filter", "ns/call",
	       "ratio", rounds);
	for (int c = 0; c < N_CALLS; c++) {
		double base = 0;

		for (int f = 0; f < N_FILTERS; f++) {
			double med;

			qsort(ns[c][f], (size_t)rounds, sizeof(double), cmp_double);
			med = ns[c][f][rounds / 2];
			if (f == FILTER_NONE)
				base = med;
			printf("%-28s %-12s %10.1f %7.2fx\n", call_names[c], filter_names[f], med,
			       med / base);
		}
	}
	for (int f = 0; f < N_FILTERS; f++)
		tb_free(&progs[f]);
	return 0;
}
