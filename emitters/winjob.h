/*
 * winjob.h - the Job Object manifest (--emit=winjob, spec/windows.md).
 *
 * The manifest is the whole contract between the compiler and
 * omnibox-run.exe: plain `key = value` lines, comments on lines of their
 * own, read strictly by runtime/win/manifest.c.  The format is shared, so
 * its version and the bit values of its flag names live here; the values
 * are Windows' own (winnt.h), which runtime/win checks at compile time.
 */
#ifndef OMNIBOX_WINJOB_H
#define OMNIBOX_WINJOB_H

/* `version = 1`: the first key of every manifest.  Bump on any incompatible change. */
#define WINJOB_VERSION 1

/* limit_flags: JOB_OBJECT_LIMIT_* */
#define WINJOB_LIMIT_JOB_TIME 0x00000004u
#define WINJOB_LIMIT_ACTIVE_PROCESS 0x00000008u
#define WINJOB_LIMIT_JOB_MEMORY 0x00000200u
#define WINJOB_LIMIT_DIE_ON_UNHANDLED_EXCEPTION 0x00000400u
#define WINJOB_LIMIT_KILL_ON_JOB_CLOSE 0x00002000u

/* ui_restrictions: JOB_OBJECT_UILIMIT_* */
#define WINJOB_UI_HANDLES 0x0001u
#define WINJOB_UI_READCLIPBOARD 0x0002u
#define WINJOB_UI_WRITECLIPBOARD 0x0004u
#define WINJOB_UI_SYSTEMPARAMETERS 0x0008u
#define WINJOB_UI_DISPLAYSETTINGS 0x0010u
#define WINJOB_UI_GLOBALATOMS 0x0020u
#define WINJOB_UI_DESKTOP 0x0040u
#define WINJOB_UI_EXITWINDOWS 0x0080u

/* cpu_rate_control_flags: JOB_OBJECT_CPU_RATE_CONTROL_* */
#define WINJOB_CPU_ENABLE 0x1u
#define WINJOB_CPU_HARD_CAP 0x4u

/* cpu_rate is in 1/100 of a percent: 10000 is all of every processor. */
#define WINJOB_CPU_RATE_MAX 10000u

/* per_job_user_time_limit counts 100-nanosecond ticks. */
#define WINJOB_TICKS_PER_SECOND 10000000u

/*
 * Declared for whoever includes emit.h first (emit.c, the emitter, the unit
 * tests); omnibox-run.exe includes only the format above.
 */
#ifdef OMNIBOX_EMIT_H
/*
 * The manifest of P for omnibox-run.exe.  Settings a Job Object cannot
 * enforce become `not-enforced` lines and one warning each on D; settings
 * that would need the egress proxy are errors (returns -1, OUT to be
 * discarded).  T is always TARGET_WINDOWS in the emitter table.
 */
int emit_winjob(const struct policy *p, enum target t, struct diag *d, struct textbuf *out);

/*
 * Has P a Windows form at all?  False when it needs the egress proxy
 * (egress_rules, credential_proxy), which no Job Object can impose;
 * emit_winjob() then says why, at those keys.  For `--target=all`, which
 * leaves out the targets a policy has no form for.
 */
bool winjob_can_express(const struct policy *p);
#endif

#endif
