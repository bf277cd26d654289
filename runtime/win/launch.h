/*
 * launch.h - one launch of omnibox-run.exe: what it holds, and the steps
 * that read the manifest, decide the workspace and describe the launch
 * (--dry-run).  The order of the steps is the entry point's
 * (omnibox-run-win.c); each returns its failure, and launch_abort() undoes
 * whatever the launch had made when it failed.
 */
#ifndef OMNIBOX_WIN_LAUNCH_H
#define OMNIBOX_WIN_LAUNCH_H

#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <stdbool.h>

#include "agent.h"
#include "job.h"
#include "manifest.h"
#include "wintext.h"

struct launch {
	struct manifest m;
	const wchar_t *manifest_path;
	const wchar_t *cwd_option; /* --cwd, or NULL */
	wchar_t **command;	   /* after "--", borrowed from argv */
	size_t n_command;
	bool dry_run, quiet;
	wchar_t *cmdline, *workspace, *scratch, *envblock;
	const wchar_t *cwd; /* the workspace, or the scratch dir */
	HANDLE job, port;
	PROCESS_INFORMATION pi;
};

/* Read and parse the manifest at L->manifest_path into L->m. */
int launch_read_manifest(struct launch *l, struct win_err *e);

/* What no launch of L->m runs (refuse_launch()): -1 with the reason in E. */
int launch_refuse(const struct launch *l, struct win_err *e);

/*
 * L->workspace (malloc'd), as workspace_decide() rules for this machine:
 * --cwd, else the manifest's workspace ({LAUNCH} the current directory,
 * {HOME} the user profile, "/x" the root of the current drive), with the
 * terminal's allow_cwd_override; never the root of a drive.
 */
int launch_workspace(struct launch *l, struct win_err *e);

/* Is PATH a directory?  WHAT names it in the error. */
int launch_check_directory(const wchar_t *path, const char *what, struct win_err *e);

/* --dry-run: every value the launch would pass, to stdout. */
int launch_dry_run(const struct launch *l, const struct job_settings *s, const struct strv *env,
		   struct win_err *e);

/*
 * Undo L after a failure: terminate the agent (the whole job when there is
 * one) and remove the scratch dir.  STATUS is the agent's exit status.
 */
void launch_abort(struct launch *l, UINT status);

#endif
