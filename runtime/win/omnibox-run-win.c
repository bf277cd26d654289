/*
 * omnibox-run-win.c - omnibox-run.exe: run an agent inside a Job Object.
 *
 *   omnibox-run.exe [--dry-run] [-q] [--cwd=DIR] MANIFEST [-- COMMAND [ARG...]]
 *
 * MANIFEST is what `omnibox-compile --target=windows --emit=winjob` wrote.
 * The order of the launch is the security argument (spec/windows.md):
 *
 *   1. read the manifest strictly; rebuild the environment from its
 *      allow-list, with TEMP/TMP in a private scratch dir made for the launch;
 *   2. create the job and set every limit on it;
 *   3. create the agent suspended, assign it to the job, check that it is
 *      inside, and only then let its first instruction run;
 *   4. wait for the agent, end whatever it left behind in the job, remove
 *      the scratch dir, and exit with the agent's exit code.  A detached
 *      cleanup process (`--janitor`) removes the scratch dir if this one is
 *      killed; the job's kill-on-close ends the agent's tree in that case.
 *
 * Whenever a step fails, the agent (if it exists) is terminated and
 * omnibox-run.exe exits 125: the agent never runs outside the job.  Only
 * `job = none`, the policy's explicit opt-out, runs it without one.
 *
 * This file is the entry point alone: the options, the order of the steps,
 * and fatal(), the one place that reports a failure and exits.  The steps
 * live in launch.c (manifest, refusals, workspace, --dry-run), job.c,
 * agent.c (command line, environment, start) and scratch.c (scratch dir,
 * janitor); what the policy means comes from compiler/decide/.
 */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <fcntl.h>
#include <io.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "agent.h"
#include "job.h"
#include "launch.h"
#include "scratch.h"
#include "wintext.h"

#define EXIT_SETUP 125
#define OMNIBOX_VERSION "0.1.0"

static const char usage_text[] =
    "usage: omnibox-run.exe [--dry-run] [-q] [--cwd=DIR] MANIFEST [-- COMMAND [ARG...]]\n"
    "\n"
    "Run COMMAND inside the Job Object that MANIFEST (omnibox-compile --target=windows\n"
    "--emit=winjob) describes.  Without COMMAND, the manifest's terminal command runs.\n"
    "\n"
    "      --dry-run   print every value the launch would pass to SetInformationJobObject,\n"
    "                  the command line and the environment names, and exit\n"
    "      --cwd=DIR   the workspace (default: os_env.cwd, else the current directory)\n"
    "  -q, --quiet     no notices (settings the job does not enforce, type none)\n"
    "      --version   print the version\n"
    "      --help      print this help\n"
    "\n"
    "exit status: the command's own; 125 when omnibox-run.exe itself fails (bad\n"
    "manifest, job setup), in which case the command was stopped before it ran.\n";

static struct launch *current;

/*
 * Fail closed: report E, terminate the agent (the whole job when there is
 * one), remove the scratch dir and exit 125.
 */
static void fatal(struct win_err *e) __attribute__((noreturn));

static void
fatal(struct win_err *e)
{
	win_report(stderr, "omnibox-run.exe: ", "%s", e->msg ? e->msg : "failed");
	fflush(stderr);
	if (current)
		launch_abort(current, EXIT_SETUP);
	ExitProcess(EXIT_SETUP);
}

static void notice(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void
notice(const char *fmt, ...)
{
	va_list ap;

	if (current && current->quiet)
		return;
	va_start(ap, fmt);
	win_vreport(stderr, "omnibox-run.exe: ", fmt, ap);
	va_end(ap);
	fflush(stderr);
}

/* ---- options ---------------------------------------------------------------------- */

static void usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void
usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	win_vreport(stderr, "omnibox-run.exe: ", fmt, ap);
	va_end(ap);
	fputs(usage_text, stderr);
	ExitProcess(EXIT_SETUP);
}

/* The option ARGV[*I]; false when it is none of ours. */
static bool
parse_option(int argc, wchar_t **argv, int *i, struct launch *l)
{
	const wchar_t *a = argv[*i];

	if (!wcscmp(a, L"--dry-run")) {
		l->dry_run = true;
	} else if (!wcscmp(a, L"-q") || !wcscmp(a, L"--quiet")) {
		l->quiet = true;
	} else if (!wcsncmp(a, L"--cwd=", 6) && a[6]) {
		l->cwd_option = a + 6;
	} else if (!wcscmp(a, L"--cwd")) {
		if (++*i == argc)
			usage_error("--cwd needs a directory");
		l->cwd_option = argv[*i];
	} else if (!wcscmp(a, L"--version")) {
		printf("omnibox-run.exe %s\n", OMNIBOX_VERSION);
		ExitProcess(0);
	} else if (!wcscmp(a, L"--help")) {
		fputs(usage_text, stdout);
		ExitProcess(0);
	} else {
		return false;
	}
	return true;
}

static void
parse_options(int argc, wchar_t **argv, struct launch *l)
{
	int i = 1;

	for (; i < argc && argv[i][0] == L'-' && argv[i][1]; i++) {
		if (!parse_option(argc, argv, &i, l)) {
			char *o = win_shown(argv[i]);

			usage_error("unknown option '%s'", o);
		}
	}
	if (i == argc)
		usage_error("no MANIFEST given");
	l->manifest_path = argv[i++];
	if (i < argc && wcscmp(argv[i], L"--"))
		usage_error("the command follows '--': MANIFEST -- COMMAND [ARG...]");
	if (i < argc && i + 1 == argc)
		usage_error("no COMMAND after '--'");
	if (i < argc) {
		l->command = argv + i + 1;
		l->n_command = (size_t)(argc - i - 1);
	}
}

/* ---- main ------------------------------------------------------------------------- */

static BOOL WINAPI
on_console_event(DWORD event)
{
	/*
	 * Ctrl-C and Ctrl-Break reach the agent too, which decides what they
	 * mean; this process stays to report its status and clean up.
	 */
	return event == CTRL_C_EVENT || event == CTRL_BREAK_EVENT;
}

/* Steps 1 to 3: the agent runs in its job, or this process has exited 125. */
static void
launch_start(struct launch *l, const struct job_settings *s, struct strv *env, struct win_err *e)
{
	if (launch_check_directory(l->workspace, "workspace", e) < 0)
		fatal(e);
	if (!l->m.job)
		notice("sandbox type none: running the command without a Job Object, as the "
		       "policy says");
	for (size_t i = 0; l->m.job && i < l->m.not_enforced.n; i++)
		notice("not enforced: %s", l->m.not_enforced.v[i]);
	SetConsoleCtrlHandler(on_console_event, TRUE);
	if (scratch_make(&l->scratch, e) < 0)
		fatal(e);
	l->cwd = l->m.start_in_scratch ? l->scratch : l->workspace;
	if (agent_env(&l->m, l->scratch, env, e) < 0 || agent_env_block(env, &l->envblock, e) < 0)
		fatal(e);
	if (l->m.job && job_create(s, &l->job, &l->port, e) < 0)
		fatal(e);
	if (agent_start(l->cmdline, l->envblock, l->cwd, l->job, &l->pi, e) < 0)
		fatal(e);
	/*
	 * The cleanup process starts while the agent already runs, so that its
	 * start-up is not added to the agent's; if this process is killed in
	 * the moment before, the scratch dir is left in the user's temp dir.
	 */
	if (scratch_janitor_start(l->scratch, e) < 0)
		fatal(e);
}

/* Step 4: the agent's exit status, once its job is empty and the scratch dir gone. */
static DWORD
launch_finish(struct launch *l, struct win_err *e)
{
	DWORD code;

	if (WaitForSingleObject(l->pi.hProcess, INFINITE) != WAIT_OBJECT_0)
		fatal((win_fail(e, "waiting for the agent: %s", win_strerror(GetLastError())), e));
	if (!GetExitCodeProcess(l->pi.hProcess, &code))
		fatal((win_fail(e, "GetExitCodeProcess: %s", win_strerror(GetLastError())), e));
	CloseHandle(l->pi.hProcess);
	l->pi.hProcess = NULL;
	if (l->job) {
		/* The agent is gone; whatever it started goes with it. */
		TerminateJobObject(l->job, 1);
		if (job_drain(l->port) < 0)
			notice("the job did not report its last process gone within %d ms",
			       JOB_DRAIN_MS);
		CloseHandle(l->job);
		l->job = NULL;
	}
	scratch_remove(l->scratch);
	if (GetFileAttributesW(l->scratch) != INVALID_FILE_ATTRIBUTES) {
		char *p = win_shown(l->scratch);

		notice("could not remove the scratch dir %s", p);
		win_shown_free(p);
	}
	return code;
}

/* The entry point with UTF-16 arguments (-municode). */
int wmain(int argc, wchar_t **argv);

int
wmain(int argc, wchar_t **argv)
{
	struct launch l;
	struct job_settings s;
	struct strv env = {0};
	struct win_err e = {0};
	DWORD code;

	if (argc == 4 && !wcscmp(argv[1], L"--janitor"))
		return scratch_janitor_run(argv[2], argv[3]);
	memset(&l, 0, sizeof(l));
	current = &l;
	/* Bytes out as written: no CRLF translation of what the agent's tools parse. */
	_setmode(_fileno(stdout), _O_BINARY);
	_setmode(_fileno(stderr), _O_BINARY);
	parse_options(argc, argv, &l);
	if (launch_read_manifest(&l, &e) < 0 || launch_refuse(&l, &e) < 0)
		fatal(&e);
	if (!l.n_command && !l.m.command)
		usage_error("no COMMAND: give one after '--' (the manifest names no terminal "
			    "command)");
	if (agent_cmdline(&l.m, l.command, l.n_command, &l.cmdline, &e) < 0 ||
	    launch_workspace(&l, &e) < 0)
		fatal(&e);
	job_settings_build(&l.m, &s);

	if (l.dry_run) {
		l.cwd = l.m.start_in_scratch ? L"{SCRATCH}" : l.workspace;
		if (agent_env(&l.m, NULL, &env, &e) < 0 || launch_dry_run(&l, &s, &env, &e) < 0)
			fatal(&e);
		return 0;
	}
	launch_start(&l, &s, &env, &e);
	code = launch_finish(&l, &e);
	fflush(stdout);
	ExitProcess(code);
}
