/*
 * agent.h - the agent's process: its command line, its environment, and
 * its start, suspended, assigned to the job, checked and only then resumed.
 */
#ifndef OMNIBOX_WIN_AGENT_H
#define OMNIBOX_WIN_AGENT_H

#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <stddef.h>

#include "manifest.h"
#include "wintext.h"

/* The longest lpCommandLine CreateProcessW accepts, terminator included. */
#define AGENT_CMDLINE_MAX 32767

/*
 * Test hook: with this variable set to 1, the assignment is attempted with
 * an invalid job handle, so the tests can show that a failed assignment
 * aborts the launch.  It can only make a launch fail, never weaken one.
 */
#define AGENT_TEST_FAIL_ASSIGN L"OMNIBOX_RUN_TEST_FAIL_ASSIGN"

/* A list of malloc'd strings. */
struct strv {
	wchar_t **v;
	size_t n, cap;
};

/* Free L's strings and L->v. */
void strv_free(struct strv *l);

/*
 * The command line of COMMAND (N arguments; borrowed), or when N is 0 of
 * M's terminal command and its args, in *OUT (malloc'd).  M must name a
 * command when N is 0.
 */
int agent_cmdline(const struct manifest *m, wchar_t *const *command, size_t n, wchar_t **out,
		  struct win_err *e);

/*
 * The agent's environment: the manifest's rules (env_decide()'s, written by
 * the compiler) applied by env_apply() to this process's environment, as
 * every launcher applies them, sorted as CreateProcess wants it; SCRATCH
 * NULL (--dry-run) leaves a placeholder.  What passes from the host keeps
 * its UTF-16 as it was, even where it is not valid UTF-16.
 */
int agent_env(const struct manifest *m, const wchar_t *scratch, struct strv *env,
	      struct win_err *e);

/* ENV as the NUL-separated, doubly terminated block CreateProcessW takes. */
int agent_env_block(const struct strv *env, wchar_t **out, struct win_err *e);

/*
 * Step 3 of the launch: start CMDLINE with ENVBLOCK in CWD, inheriting only
 * the three standard handles.  With a JOB it is created suspended, assigned
 * to JOB, checked to be inside, and only then resumed.  *PI holds the
 * process as soon as it exists (hProcess for the caller to terminate on
 * failure; hThread is closed once it runs).
 */
int agent_start(wchar_t *cmdline, wchar_t *envblock, const wchar_t *cwd, HANDLE job,
		PROCESS_INFORMATION *pi, struct win_err *e);

#endif
