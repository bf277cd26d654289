/*
 * manifest.h - read the Job Object manifest that `omnibox-compile
 * --emit=winjob` writes (format: emitters/winjob.h, emitters/emit_winjob.c).
 *
 * Portable C11 with no Windows headers, so the same parser runs in
 * omnibox-run.exe and in the unit tests on Linux.  Reading is strict: an
 * unknown key, a repeated single key, a malformed number or flag, a
 * missing required key, or limits that contradict limit_flags are all
 * errors, because a manifest omnibox-run.exe half understands is one it
 * might enforce half of.
 */
#ifndef OMNIBOX_WIN_MANIFEST_H
#define OMNIBOX_WIN_MANIFEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../compiler/decide/env.h"

/* A list of strings, in manifest order; every string is malloc'd. */
struct manifest_strs {
	char **v;
	size_t n, cap;
};

struct manifest {
	char *policy;	/* the policy file's base name (informational) */
	char *terminal; /* the terminal the manifest was compiled for, or NULL */
	char *command;	/* that terminal's command, or NULL */
	/* The terminal's allow_cwd_override: --cwd may name a directory inside
	 * its workspace.  Absent: false, only its own workspace. */
	bool allow_cwd_override;
	struct manifest_strs args;
	bool job;	 /* false: `job = none`, the policy's explicit opt-out */
	char *workspace; /* "{LAUNCH}", "{HOME}", either + "/rel", or "/abs" */
	bool start_in_scratch;
	bool fork;	      /* os_env.fork: not supported, the launch is refused */
	uint32_t limit_flags; /* WINJOB_LIMIT_* */
	uint32_t active_process_limit;
	uint64_t job_memory_limit;	  /* bytes */
	uint64_t per_job_user_time_limit; /* 100-ns ticks, at most INT64_MAX */
	uint32_t cpu_rate_control_flags;  /* WINJOB_CPU_*, 0 = no rate control */
	uint32_t cpu_rate;		  /* 1/100 of a percent */
	uint32_t ui_restrictions;	  /* WINJOB_UI_* */
	/* The environment's rules (compiler/decide/env.h) in manifest order, for
	 * env_apply() with names compared without regard to case; each name is
	 * malloc'd, an env_set's value lies in its name's block. */
	struct env_rule *env;
	size_t n_env, cap_env;
	struct manifest_strs not_enforced;
};

struct manifest_error {
	unsigned line;	   /* 1-based; 0 when the error is about the whole file */
	char message[256]; /* escaped (textesc.h): safe to print as it is */
};

/*
 * Parse LEN bytes of manifest TEXT into M (which need not be initialised).
 * Returns 0, or -1 with ERR filled in and M holding nothing to free.  On
 * success the caller owns M's strings: release them with manifest_free().
 */
int manifest_parse(const char *text, size_t len, struct manifest *m, struct manifest_error *err);

void manifest_free(struct manifest *m);

enum manifest_flag_set { MANIFEST_LIMIT_FLAGS, MANIFEST_UI_RESTRICTIONS, MANIFEST_CPU_FLAGS };

/*
 * BITS of SET as the manifest writes them, "KILL_ON_JOB_CLOSE|JOB_TIME",
 * into BUF (truncated to CAP); unknown bits come out as hex.  Returns BUF.
 */
char *manifest_flags_text(enum manifest_flag_set set, uint32_t bits, char *buf, size_t cap);

#endif
