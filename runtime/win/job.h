/*
 * job.h - the Job Object: its settings from the manifest, printed for
 * --dry-run or set on a new job before any process exists, and the wait
 * for its last process once it is terminated.
 */
#ifndef OMNIBOX_WIN_JOB_H
#define OMNIBOX_WIN_JOB_H

#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <stdbool.h>

#include "manifest.h"
#include "wintext.h"

/* How long the rest of the tree may take to die once the job is terminated. */
#define JOB_DRAIN_MS 10000

/* The job's settings, built once: the launch passes them, --dry-run prints them. */
struct job_settings {
	JOBOBJECT_EXTENDED_LIMIT_INFORMATION ext;
	JOBOBJECT_BASIC_UI_RESTRICTIONS ui;
	JOBOBJECT_CPU_RATE_CONTROL_INFORMATION cpu;
	bool has_cpu;
};

/* M's limits as the job takes them. */
void job_settings_build(const struct manifest *m, struct job_settings *s);

/* Every value of S that job_create() passes to SetInformationJobObject, to stdout. */
void job_settings_print(const struct job_settings *s);

/*
 * A new job (*JOB) with every setting of S, and the completion port (*PORT)
 * that reports when its last process is gone.  On failure, returns -1 with
 * E set; what was created is in *JOB and *PORT for the caller to close.
 */
int job_create(const struct job_settings *s, HANDLE *job, HANDLE *port, struct win_err *e);

/*
 * After TerminateJobObject: wait until PORT reports the job empty.  Returns
 * 0, or -1 when it did not within JOB_DRAIN_MS.
 */
int job_drain(HANDLE port);

#endif
