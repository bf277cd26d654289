/*
 * workspace.h - which directory a launch takes as its workspace, decided once.
 *
 * --cwd, else os_env.cwd, else the launch directory.  A terminal's --cwd
 * that names its own workspace is no override; with allow_cwd_override any
 * directory inside it is accepted; nothing else.  The root of the file
 * system (on Windows, of a drive or a share) is never a workspace, nor is
 * a home directory, a parent of one or "/" reached by way of a link.
 *
 * The caller finds the paths on the machine (canonical where they exist:
 * links followed); what they mean is decided here.  Pure C11, no system
 * calls: omnibox-run.exe links it too.
 */
#ifndef OMNIBOX_DECIDE_WORKSPACE_H
#define OMNIBOX_DECIDE_WORKSPACE_H

#include <stdbool.h>
#include <stdint.h>

#include "../base/arena.h"
#include "../ir.h"

struct workspace_request {
	/* The policy's own workspace: os_env.cwd, else the launch directory,
	 * absolute; OWN_CANON the same followed through its links (NULL: as
	 * written, e.g. it does not exist). */
	const char *own, *own_canon;
	/* --cwd as the user gave it (NULL: none), and absolute, and canonical
	 * (NULL: as absolute). */
	const char *cwd_given, *cwd, *cwd_canon;
	/* The selected terminal's name (NULL: the agent's own launch), its
	 * allow_cwd_override and that setting's line (0: unknown). */
	const char *terminal;
	bool allow_cwd_override;
	uint32_t override_line;
	/* The home directory, canonical (NULL: unknown): a link to it, or to a
	 * parent of it, is no workspace. */
	const char *home;
	/* Paths are Windows': "C:\dir" or "\\server\share\dir", compared without
	 * regard to case. */
	bool windows;
	/* The launch is macOS' (its temporary and volume trees are too wide). */
	bool darwin;
};

struct workspace_verdict {
	const char *path; /* the workspace (canonical when known), or NULL */
	const char *why;  /* when PATH is NULL: the refusal, from A */
	uint32_t line;	  /* the policy line the refusal names, or 0 */
};

/*
 * The workspace of RQ.  The refusal names what to change, without a file
 * prefix: a caller that knows the policy file puts "FILE:LINE: " before
 * it when LINE is not 0.  Strings are from A, or RQ's.
 */
struct workspace_verdict workspace_decide(struct arena *a, const struct workspace_request *rq);

/* Is PATH the root of the file system (Windows: "C:\", "\\server\share")? */
bool workspace_is_root(const char *path, bool windows);

/* Does write_paths name the workspace itself ("." : {CWD})? */
bool workspace_writable(const struct sandbox *sb);

/*
 * The grant that holds the home itself, so that no launch gives a private
 * home, or NULL: a grant at the home or at "/", or the workspace at the
 * home (os_env.cwd "~").
 */
const struct ir_path *workspace_home_held(const struct policy *p);

/* Is PATH equal to DIR or below it; WINDOWS: either separator, any case. */
bool workspace_within(const char *path, const char *dir, bool windows);

#endif
