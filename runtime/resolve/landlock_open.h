/*
 * landlock_open.h - a Landlock plan (compiler/decide/landlock.h) as
 * descriptors, for a backend confined by Landlock alone.
 *
 * A path checked is a path opened: the resolver opened each grant once
 * (walk.h), and everything below a grant is reached from that descriptor,
 * one component at a time, never following a symbolic link, and never by
 * its string path from "/".  The directories the planner lists are listed
 * through such descriptors, and each rule of the plan becomes an O_PATH
 * descriptor reached the same way, so what the rules cover is what was
 * listed.  A path that turned into a link (or a directory into a file, or
 * vanished) between the resolver's look and the rule's descriptor fails
 * the launch: "... changed while the launch was set up; nothing ran".
 */
#ifndef OMNIBOX_LANDLOCK_OPEN_H
#define OMNIBOX_LANDLOCK_OPEN_H

#include <stdbool.h>
#include <stddef.h>

#include "compiler/base/arena.h"
#include "emitters/landlock.h"
#include "runtime/resolve/resolve.h"

/* A grant as the resolver opened it. */
struct ll_open_grant {
	const char *path; /* canonical, no trailing '/' but for "/" */
	int fd;		  /* O_PATH on it (walk_open()); stays the caller's */
	bool writable;
	const char *what; /* "workspace", "write_paths", ... */
};

/* A rule of the plan, with its descriptor. */
struct ll_open_rule {
	int fd;			   /* O_PATH|O_CLOEXEC on PATH; the result's */
	unsigned long long rights; /* enum ll_access bits */
	const char *path;
	const char *why;
};

struct ll_opened {
	struct ll_open_rule *rules; /* as the plan has them: by path, byte order */
	size_t n_rules;
	const char **approx; /* the plan's approximations */
	size_t n_approx;
};

/*
 * Plan the N_GRANTS GRANTS against the MASKED and PROTECT canonical paths
 * (landlock_plan()), listing directories through the grants' descriptors,
 * and open a descriptor for each rule into OUT: a rule at a grant's path
 * gets a duplicate of the grant's descriptor, any other one is reached
 * from the deepest grant that holds it.  Returns 0, or -1 with a message
 * in ERR (for "omnibox-run: ...") and no descriptor of its own left open.
 * Strings and arrays belong to A; the descriptors to the caller
 * (landlock_opened_close()).
 */
int landlock_open(struct arena *a, const struct ll_open_grant *grants, size_t n_grants,
		  const char *const *masked, size_t n_masked, const char *const *protect,
		  size_t n_protect, struct ll_opened *out, char *err, size_t errlen);

/* Close every descriptor of O (each set to -1). */
void landlock_opened_close(struct ll_opened *o);

/*
 * A launch plan's whole ruleset for the linux_landlock backend
 * (compiler/decide/llbackend.h): the fixed rules (system directories,
 * devices, /proc; those that exist), then the plan's grants (the bwrap
 * context's, but write_files' private directories; the grants exposed
 * again in a mask; the command's directories, read-only) cut around its
 * masks and protected paths by landlock_open(), then each write_files
 * entry, a rule on the host file itself.
 */
struct landlock_rules {
	struct ll_opened opened;	 /* the plan's cut rules */
	struct landlock_arg_rule *rules; /* every rule, as omnibox-init gets them */
	size_t n_rules, cap_rules;
	int *fds; /* their descriptors */
	size_t n_fds;
};

/*
 * The rules of PLAN (resolved for linux_landlock: launch_request.landlock)
 * into R, and C's rules and approximations pointed at them, and PLAN's PATH
 * cut to them (landlock_path_env()); with LINKS (a real launch) a link in
 * the private home (HOME inside) to each grant below the home.  0, or -1
 * with the message in ERR.
 */
int landlock_rules_open(struct arena *a, struct launch_plan *plan, struct landlock_rules *r,
			struct landlock_context *c, bool links, char *err, size_t errlen);

/*
 * PATH in PLAN's environment without the directories the N RULES let the
 * sandbox neither read nor execute (landlock_rights_at() where the entry
 * leads here; env_path_keep() keeps the rest as it was), and a note in
 * PLAN naming them, escaped.  No namespace hides such a directory as bwrap
 * does: left on PATH, a lookup would find there what it cannot run, and a
 * tool would record it (python3 -m venv, its interpreter).
 */
void landlock_path_env(struct arena *a, struct launch_plan *plan,
		       const struct landlock_arg_rule *rules, size_t n);

/* One rule more in R and C: FD (R's from now on) on PATH with RIGHTS. */
void landlock_rules_add(struct arena *a, struct landlock_rules *r, struct landlock_context *c,
			const char *path, int fd, unsigned long long rights, const char *why);

/* A character device's rights: read and write, ioctls (a terminal needs them). */
#define LANDLOCK_DEVICE_RIGHTS ((1ULL << 0) | (1ULL << 1) | (1ULL << 2) | (1ULL << 14) | (1ULL << 15))

/* Every descriptor of R closed. */
void landlock_rules_close(struct landlock_rules *r);

/*
 * What the N RULES give at PATH (canonical): the rights of every rule at or
 * above it, together, as Landlock adds them up; *DEEPEST (may be NULL) the
 * deepest of those rules, or NULL when none reaches PATH.  The one answer
 * to "what may the sandbox do there" that --why and the metadata calls
 * (runtime/launch/metadata.h) give.
 */
unsigned long long landlock_rights_at(const struct landlock_arg_rule *rules, size_t n,
				      const char *path, const struct landlock_arg_rule **deepest);

#endif
