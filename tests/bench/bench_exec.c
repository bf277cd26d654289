/*
 * bench_exec.c - whole-process timing, several commands side by side.
 *
 *   bench_exec [-n RUNS] [-g MS] 'LABEL=CMD ARG...' ['LABEL=CMD ARG...' ...]
 *
 * Runs each command RUNS times, interleaved (a, b, a, b, ...) so that load
 * from elsewhere on the machine hits all of them alike, with output sent to
 * /dev/null, and prints the median, 10th and 90th percentile wall time of
 * each, and each median as a ratio of the first command's.  Arguments are
 * split on spaces; no shell is involved.  Leading NAME=VALUE words are set
 * in the command's environment, as a shell would (no process is added).  A command that exits non-zero
 * aborts the benchmark, because timing a failure measures nothing.
 *
 * -g MS sleeps MS milliseconds before each run: the machine idle between
 * launches, as between an agent's commands, where waking an idle CPU (an
 * interrupt to another processor, slow on a virtual machine) is part of
 * what a launch costs.  Without it the runs follow each other at once.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_CMDS 8
#define MAX_ARGS 64

struct cmd {
	char *label;
	char *env[MAX_ARGS]; /* NAME=VALUE, NULL-terminated */
	char *argv[MAX_ARGS];
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

static double
run_once(struct cmd *c)
{
	double t0 = now_ms();
	int status;
	pid_t pid = fork();

	if (pid < 0) {
		perror("fork");
		exit(1);
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		dup2(null, 1);
		dup2(null, 2);
		for (int k = 0; c->env[k]; k++)
			putenv(c->env[k]);
		execvp(c->argv[0], c->argv);
		_exit(127);
	}
	waitpid(pid, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "bench_exec: '%s' failed (status %d)\n", c->label, status);
		exit(1);
	}
	return now_ms() - t0;
}

int
main(int argc, char **argv)
{
	struct cmd cmds[MAX_CMDS];
	int runs = 100, gap_ms = 0, n = 0, i = 1;

	for (; i + 1 < argc && (!strcmp(argv[i], "-n") || !strcmp(argv[i], "-g")); i += 2)
		*(!strcmp(argv[i], "-n") ? &runs : &gap_ms) = atoi(argv[i + 1]);
	for (; i < argc && n < MAX_CMDS; i++, n++) {
		char *eq = strchr(argv[i], '='), *tok, *save = NULL;
		int k = 0, e = 0;

		if (!eq || runs < 1 || gap_ms < 0) {
			fprintf(stderr,
				"usage: bench_exec [-n RUNS] [-g MS] 'LABEL=CMD ARG...' ...\n");
			return 2;
		}
		*eq = '\0';
		cmds[n].label = argv[i];
		for (tok = strtok_r(eq + 1, " ", &save); tok && k < MAX_ARGS - 1;
		     tok = strtok_r(NULL, " ", &save)) {
			size_t name = strspn(tok, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
						  "0123456789_");

			if (k == 0 && e < MAX_ARGS - 1 && name > 0 && tok[name] == '=')
				cmds[n].env[e++] = tok;
			else
				cmds[n].argv[k++] = tok;
		}
		cmds[n].env[e] = NULL;
		cmds[n].argv[k] = NULL;
		cmds[n].ms = calloc((size_t)runs, sizeof(double));
	}
	if (n == 0) {
		fprintf(stderr, "usage: bench_exec [-n RUNS] [-g MS] 'LABEL=CMD ARG...' ...\n");
		return 2;
	}
	for (int c = 0; c < n; c++)
		run_once(&cmds[c]); /* warm the page cache */
	for (int r = 0; r < runs; r++)
		for (int c = 0; c < n; c++) {
			if (gap_ms)
				usleep((useconds_t)gap_ms * 1000);
			cmds[c].ms[r] = run_once(&cmds[c]);
		}
	for (int c = 0; c < n; c++)
		qsort(cmds[c].ms, (size_t)runs, sizeof(double), cmp_double);
	for (int c = 0; c < n; c++) {
		double med = cmds[c].ms[runs / 2];

		printf("%-28s median %8.3f ms  p10 %8.3f  p90 %8.3f  ratio %.2fx  (%d runs)\n",
		       cmds[c].label, med, cmds[c].ms[runs / 10], cmds[c].ms[runs * 9 / 10],
		       med / cmds[0].ms[runs / 2], runs);
	}
	return 0;
}
