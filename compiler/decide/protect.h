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

#include "../ir.h"

/* What holds a protected name that does not exist, so nothing can be made there. */
enum protect_hold {
	PROTECT_HOLD_DIR,     /* an empty read-only directory, at the first missing component */
	PROTECT_HOLD_FILE,    /* a read-only file holding `text` (when only the name is missing) */
	PROTECT_HOLD_NONE,    /* nothing: protected where it exists */
	PROTECT_HOLD_GITDIRS, /* a directory of git directories: read-only, each one that
			       * exists stays writable with the git entries of its own */
};

struct protect_default {
	const char *name; /* relative to a writable root, or to the home directory */
	bool dir;	  /* a directory */
	bool home;	  /* below the home directory only */
	const char *why;  /* what runs it, for comments and docs */
	enum protect_hold hold;
	const char *text; /* PROTECT_HOLD_FILE: what the placeholder holds, chosen so
			   * that the host's tools read it as they read no file */
};

/* One protected path, as protect_each() hands it over. */
struct protect_entry {
	const char *path;
	bool dir;
	const char *why;
	uint32_t line; /* protect_paths: its YAML line; 0 for a default */
	enum protect_hold hold;
	const char *text;
};

typedef void protect_fn(void *arg, const struct protect_entry *e);

/* The default set, NULL-terminated by name. */
extern const struct protect_default protect_defaults[];

/* Is D one of the entries of a git directory (".git/...")?  They apply to
 * the .git of each writable root and to every other git directory the
 * launch finds there (protect_each_gitdir()). */
bool protect_is_git(const struct protect_default *d);

/* The default entry named NAME, or NULL. */
const struct protect_default *protect_find(const char *name);

/*
 * Every protected path of SB below one of the writable ROOTS (canonical
 * or symbolic, as HOME is): FN gets the path, whether it is a directory,
 * why it is protected, and the YAML line (0 for a default).  Paths come
 * once each, in root order, then table order, then protect_paths order.
 */
void protect_each(const struct sandbox *sb, const char *const *roots, size_t n_roots,
		  const char *home, protect_fn *fn, void *arg);

/* The same, with EXTRA[i] the spelling of protect_paths entry i in the roots' terms. */
void protect_each_spelled(const struct sandbox *sb, const char *const *roots, size_t n_roots,
			  const char *home, const char *const *extra, protect_fn *fn, void *arg);

/*
 * The git entries of SB (hooks, config, commondir, ...) for the git
 * directory GITDIR, found inside a writable root: a nested repository's
 * .git, a submodule's or worktree's directory, the target of a .git file.
 */
void protect_each_gitdir(const struct sandbox *sb, const char *gitdir, protect_fn *fn, void *arg);

/* What a variable of the host's git configuration names, for protection. */
enum protect_git_var {
	PROTECT_GIT_NONE,
	PROTECT_GIT_INCLUDE, /* a file git reads as more configuration */
	PROTECT_GIT_HOOKS,   /* the directory git runs its hooks from (or copies them from) */
	PROTECT_GIT_READ,    /* a file git reads to choose what it runs (attributes) */
	PROTECT_GIT_RUN,     /* a command git runs: its program, when named by a path */
};

/*
 * The variable SECTION.SUB.KEY (lowercased, SUB as written or NULL) of a
 * git configuration: which of the above its value names.  A path so named
 * that lies in a writable root is protected like .git/config itself.
 */
enum protect_git_var protect_git_variable(const char *section, const char *sub, const char *key);

/* Does SB's unprotect_paths name the default entry NAME? */
bool protect_unprotected(const struct sandbox *sb, const char *name);

/* The writable roots of SB as written (symbolic), at most CAP; the count. */
size_t protect_symbolic_roots(const struct sandbox *sb, const char **out, size_t cap);

#endif
