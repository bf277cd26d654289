/*
 * protect.h - protected paths: what the host later executes or loads as
 * configuration stays read-only, even inside a writable root.
 *
 * A coding agent needs its workspace writable, and with it would come
 * .git/hooks, .git/config, .envrc, an editor's tasks, an agent's own
 * settings: files the user's own tools, outside any sandbox, run or obey
 * the next time they start.  Each writable root gets the default entries
 * below (the home entries only where the home directory lies in a writable
 * root), plus the policy's protect_paths, minus its unprotect_paths.  A
 * protected path is read-only in the sandbox whether it exists or not.
 *
 * The table and the expansion are shared: the emitters print them for
 * symbolic roots, the runtime applies them to the canonical ones.
 */
#ifndef OMNIBOX_PROTECT_H
#define OMNIBOX_PROTECT_H

#include <stdbool.h>
#include <stdint.h>

#include "policy.h"

struct protect_default {
	const char *name; /* relative to a writable root, or to the home directory */
	bool dir;	  /* a directory (a missing one becomes an empty read-only one) */
	bool home;	  /* below the home directory only */
	const char *why;  /* what runs it, for comments and docs */
};

/* The default set, NULL-terminated by name. */
extern const struct protect_default protect_defaults[];

/* The default entry named NAME, or NULL. */
const struct protect_default *protect_find(const char *name);

/*
 * Every protected path of SB below one of the writable ROOTS (canonical
 * or symbolic, as HOME is): FN gets the path, whether it is a directory,
 * why it is protected, and the YAML line (0 for a default).  Paths come
 * once each, in root order, then table order, then protect_paths order.
 */
void protect_each(const struct sandbox *sb, const char *const *roots, size_t n_roots,
		  const char *home,
		  void (*fn)(void *arg, const char *path, bool dir, const char *why, uint32_t line),
		  void *arg);

/* The same, with EXTRA[i] the spelling of protect_paths entry i in the roots' terms. */
void protect_each_spelled(const struct sandbox *sb, const char *const *roots, size_t n_roots,
			  const char *home, const char *const *extra,
			  void (*fn)(void *arg, const char *path, bool dir, const char *why,
				     uint32_t line),
			  void *arg);

/* Does SB's unprotect_paths name the default entry NAME? */
bool protect_unprotected(const struct sandbox *sb, const char *name);

/* The writable roots of SB as written (symbolic), at most CAP; the count. */
size_t protect_symbolic_roots(const struct sandbox *sb, const char **out, size_t cap);

#endif
