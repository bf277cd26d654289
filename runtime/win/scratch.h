/*
 * scratch.h - the private scratch dir of a launch (TEMP and TMP), and the
 * detached cleanup process that removes it even if omnibox-run.exe is killed.
 */
#ifndef OMNIBOX_WIN_SCRATCH_H
#define OMNIBOX_WIN_SCRATCH_H

#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include "wintext.h"

/*
 * A new directory "omnibox-" and 16 random hex digits under the user's temp
 * directory, that only the current user may enter, in *OUT (malloc'd).
 */
int scratch_make(wchar_t **out, struct win_err *e);

/*
 * Remove PATH and everything below it.  Links (junctions, symbolic links,
 * any reparse point) are removed, never followed: the agent could have
 * pointed one at the user's documents.  Best effort: nothing is reported.
 */
void scratch_remove(const wchar_t *path);

/*
 * `omnibox-run.exe --janitor HANDLE SCRATCH` (internal): wait until the
 * launching omnibox-run.exe (HANDLE, inherited) has exited, however it
 * ended, then remove its scratch dir.  Returns the process's exit status:
 * 0 once SCRATCH is gone, 1 when it stayed, 125 when SCRATCH is no scratch
 * dir's name.
 */
int scratch_janitor_run(const wchar_t *handle, const wchar_t *scratch);

/*
 * Start the janitor for SCRATCH: detached from the console (a Ctrl-C is for
 * the agent), outside the job (it outlives it), and given only the handle
 * of this process.
 */
int scratch_janitor_start(const wchar_t *scratch, struct win_err *e);

#endif
