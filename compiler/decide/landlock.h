/*
 * landlock.h - a policy's grants, masks and protected paths as Landlock
 * path-beneath rules, for a backend that has Landlock alone (no mount
 * namespace), decided once.
 *
 * The bwrap backend says it with mounts: grants bound ancestors first,
 * masks (an empty tmpfs over a directory, /dev/null over a file) after
 * every grant, protected paths bound read-only onto themselves last, each
 * later mount covering what lies below it.  Landlock cannot say "less
 * below here": a rule grants its rights on the whole hierarchy beneath its
 * path, the rights of the rules along a path add up, and nothing takes
 * them away further down.  So where something below a grant G must not get
 * G's rights, G is cut into pieces:
 *
 *   - G and every directory between G and such a path is a container: a
 *     rule with LL_CONTAINER (list) only;
 *   - every other entry of a container gets a rule of its own: G's rights,
 *     read-only (LL_R) if it is or lies in a protected path, none if it is
 *     masked.
 *
 * The entries are what exists at launch: the caller lists directories
 * through a callback, so the planner itself makes no system call (and is
 * compiled on macOS too).  What the rules cannot say exactly is returned
 * beside them, as text for the user.
 *
 * Precedence, as the bwrap backend mounts them: a mask beats a grant at
 * the same path (the grant gets no rule), a grant strictly inside a masked
 * directory is exposed again (the caller leaves out the ones that must stay
 * hidden, as the resolver does for bwrap), a protected path beats a grant
 * (a grant at or inside one is read-only), and a path both masked and
 * protected is masked.
 *
 * Nested grants: a grant H strictly inside G is planned on its own, and its
 * rules add to G's.  When G's plan already covers H with more rights than
 * H asks (a read-only H in a writable G), that cannot be undone and is
 * returned as an approximation; a protected H is exact, since G's plan
 * stops above it.  When masked or protected paths lie inside H, G's plan
 * stops above H too (G's rights would reach them through H otherwise), and
 * H's own plan cuts H.
 *
 * Pure: everything comes from the arguments and goes to the arena.
 */
#ifndef OMNIBOX_DECIDE_LANDLOCK_H
#define OMNIBOX_DECIDE_LANDLOCK_H

#include <stdbool.h>
#include <stddef.h>

#include "../base/arena.h"

/*
 * The filesystem rights, with the kernel's bit values
 * (LANDLOCK_ACCESS_FS_* of linux/landlock.h), so a rule's rights go to
 * landlock_add_rule() as they are; this header needs no kernel header.
 */
enum ll_access {
	LL_EXECUTE = 1 << 0,
	LL_WRITE_FILE = 1 << 1,
	LL_READ_FILE = 1 << 2,
	LL_READ_DIR = 1 << 3,
	LL_REMOVE_DIR = 1 << 4,
	LL_REMOVE_FILE = 1 << 5,
	LL_MAKE_CHAR = 1 << 6,
	LL_MAKE_DIR = 1 << 7,
	LL_MAKE_REG = 1 << 8,
	LL_MAKE_SOCK = 1 << 9,
	LL_MAKE_FIFO = 1 << 10,
	LL_MAKE_BLOCK = 1 << 11,
	LL_MAKE_SYM = 1 << 12,
	LL_REFER = 1 << 13,    /* ABI 2 */
	LL_TRUNCATE = 1 << 14, /* ABI 3 */
};

/* What can be made below a writable grant: never a device. */
#define LL_MAKE (LL_MAKE_DIR | LL_MAKE_REG | LL_MAKE_SOCK | LL_MAKE_FIFO | LL_MAKE_SYM)
#define LL_REMOVE (LL_REMOVE_DIR | LL_REMOVE_FILE)

/* A read-only grant, and a writable one. */
#define LL_R (LL_EXECUTE | LL_READ_FILE | LL_READ_DIR)
#define LL_W (LL_R | LL_WRITE_FILE | LL_REMOVE | LL_MAKE | LL_REFER | LL_TRUNCATE)

/*
 * A container, of a read-only grant and of a writable one alike: its
 * entries can be listed, and that is all.  Making, removing or renaming
 * an entry is a right of the directory it happens in, and a rule grants it
 * on every directory beneath its path: with LL_MAKE, LL_REMOVE or LL_REFER
 * on a container, a link could be made in a protected .git/hooks, a
 * protected .git/config removed and made again, a masked .env renamed
 * env.txt (which the next launch no longer masks).  So a container takes
 * none of them, and names directly in a container of a writable grant can
 * be neither made, removed nor renamed (an approximation).
 */
#define LL_CONTAINER LL_READ_DIR

/* The rights a rule on a file may hold (the kernel refuses the others). */
#define LL_FILE_RIGHTS (LL_EXECUTE | LL_WRITE_FILE | LL_READ_FILE | LL_TRUNCATE)

/* A grant: its canonical path (or a symbolic one, "{CWD}/x": the planner
 * only splits it at '/'), never with a trailing '/' but for "/" itself. */
struct ll_grant {
	const char *path;
	bool writable;
	const char *what; /* "workspace", "write_paths", ..., for the rules' why */
};

struct ll_rule {
	const char *path;
	unsigned long long rights; /* enum ll_access bits */
	/* Why: the grant's `what`, "container" or "protected"; several,
	 * ", "-separated in byte order, when rules of several grants met. */
	const char *why;
};

struct ll_plan {
	struct ll_rule *rules; /* by path, byte order, each path once */
	size_t n_rules;
	const char **approx; /* what the rules cannot say exactly, one sentence each */
	size_t n_approx;
};

/* What a directory entry is.  A symbolic link gets no rule: a rule is
 * opened through its path, and would land on what the link names. */
enum ll_kind {
	LL_KIND_DIR,
	LL_KIND_FILE, /* a regular file, or anything else but a directory or a link */
	LL_KIND_LINK,
};

typedef void ll_each_fn(void *each_arg, const char *name, enum ll_kind kind);

/*
 * The entries of the directory DIR (a path as the grants spell it): EACH
 * is called once for each, with its name (no "." or ".."), then the
 * callback returns 0.  It returns 1 when DIR is not a directory (missing,
 * or a file: nothing lies below it), -1 when it cannot list DIR.
 */
typedef int ll_children_fn(void *arg, const char *dir, ll_each_fn *each, void *each_arg);

/*
 * The rules for the N_GRANTS GRANTS, given the masked paths (the dotfiles
 * and mask_paths entries found at launch) and the protected paths
 * (protect.h, whether they exist or not), into OUT (arena memory):
 *
 *   1. For a grant G, the masked paths strictly below it, and the protected
 *      ones when G is writable, are its targets; a grant strictly inside G
 *      with such a path strictly inside it is one in their stead (G stops
 *      above it), and nothing strictly inside it or a masked target is.
 *   2. Without targets, G is one rule (G, its rights).  A grant at a masked
 *      path gets none; at or inside a protected path it is read-only.
 *   3. With targets, G and every directory between G and a target is a
 *      container, rule (C, LL_CONTAINER); each container that exists (G,
 *      or one its parent's listing shows as a directory) is listed through
 *      CHILDREN (with ARG), and each entry X not a container gets: no rule
 *      if it is a link, masked, or a grant of its own; LL_R if it is
 *      protected; G's rights otherwise (read-only inside a protected
 *      path), those a file may hold for a file.
 *   4. Masked and protected paths below no grant need nothing.
 *   5. The approximations, by the path each is about (byte order), then by
 *      text, each once: for each container of a writable grant, that names
 *      directly in it can be neither made, removed nor renamed; for each
 *      container with masked entries, that their names are still listed;
 *      for each masked directory, that what it holds is listed; for each
 *      grant covered by another's rules with more rights than its own,
 *      that Landlock cannot take them away.
 *
 * Rules with the same path become one, rights or-ed.  The output depends
 * on what is planned, not on the order of the grants or of the entries.
 * Returns 0, or -1 with a message in ERR when a container cannot be
 * listed (or CHILDREN is NULL where a listing is needed).
 */
int landlock_plan(struct arena *a, const struct ll_grant *grants, size_t n_grants,
		  const char *const *masked, size_t n_masked, const char *const *protect,
		  size_t n_protect, ll_children_fn *children, void *arg, struct ll_plan *out,
		  char *err, size_t errlen);

/*
 * RIGHTS as a stable, comma-separated text into BUF (CAP bytes,
 * NUL-terminated), each word once, in the order of this table:
 *
 *   read      LL_READ_FILE          make     all of LL_MAKE
 *   write     LL_WRITE_FILE         remove   both of LL_REMOVE
 *   execute   LL_EXECUTE            refer    LL_REFER
 *   list      LL_READ_DIR           truncate LL_TRUNCATE
 *
 * Part of LL_MAKE is named bit by bit where "make" stands ("make-dir",
 * "make-reg", "make-sock", "make-fifo", "make-sym"), part of LL_REMOVE
 * likewise ("remove-dir", "remove-file"); after "truncate" come
 * "make-char", "make-block", then the bits this header does not name, in
 * hex ("0x8000").  No bit at all is "none".  So LL_R is
 * "read,execute,list", LL_W "read,write,execute,list,make,remove,refer,
 * truncate".  Returns the length of the whole text, as snprintf does.
 */
size_t landlock_rights_text(unsigned long long rights, char *buf, size_t cap);

/*
 * Is path P strictly below the directory DIR (on a '/' boundary; every path
 * is below "/")?  And at it or below it?  Canonical absolute paths.
 */
bool landlock_path_below(const char *p, const char *dir);
bool landlock_path_at_or_below(const char *p, const char *dir);

#endif
