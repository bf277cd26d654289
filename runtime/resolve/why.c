/*
 * why.c - answers from the launch's own mounts (why.h).
 */
#include "runtime/resolve/why.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compiler/decide/landlock.h"
#include "runtime/resolve/landlock_open.h"
#include "runtime/resolve/perm.h"
#include "runtime/resolve/walk.h"

const char *
launch_why_path(struct arena *a, const struct launch_plan *plan, const char *path)
{
	const char *abs, *canon;

	if (!strcmp(path, "~") || !strncmp(path, "~/", 2))
		abs = arena_printf(a, "%s%s", plan->home, path + 1);
	else if (path[0] == '/')
		abs = path;
	else
		abs = arena_printf(a, "%s/%s", plan->workspace, path);
	abs = walk_lexical(a, abs);
	canon = walk_canonical(a, abs);
	return canon ? canon : abs;
}

static void
answer(struct decision *d, bool allowed, const char *why)
{
	d->allowed = allowed;
	d->enforced = true;
	d->why = why;
	d->line = 0;
}

/* As the host's kernel would let this process do ACCESS to PATH: no sandbox. */
static bool
host_allows(struct arena *a, const char *path, enum query_access access, const char **note)
{
	const char *dir;

	if (access == QUERY_READ) {
		if (faccessat(AT_FDCWD, path, R_OK, AT_EACCESS) == 0)
			return true;
		*note = errno == ENOENT ? "it does not exist" : "this user may not read it";
		return false;
	}
	if (faccessat(AT_FDCWD, path, F_OK, AT_EACCESS) == 0) {
		if (faccessat(AT_FDCWD, path, W_OK, AT_EACCESS) == 0)
			return true;
		*note = "this user may not write it";
		return false;
	}
	dir = arena_strndup(a, path, (size_t)(strrchr(path, '/') - path));
	if (faccessat(AT_FDCWD, dir[0] ? dir : "/", W_OK | X_OK, AT_EACCESS) == 0)
		return true;
	*note = "this user may not make it there";
	return false;
}

/* The owner and mode of PATH (or, for a path to create, of its directory)
 * let the sandbox's user do WANT?  NOTE gets why not. */
static bool
mode_allows(struct arena *a, const char *path, enum query_access access, const char **note)
{
	struct perm_ids ids;
	struct stat st;
	bool ok;
	int want;

	if (stat(path, &st) == 0) {
		want = access == QUERY_READ ? (S_ISDIR(st.st_mode) ? R_OK | X_OK : R_OK)
					    : (S_ISDIR(st.st_mode) ? W_OK | X_OK : W_OK);
	} else if (access == QUERY_READ) {
		*note = "it does not exist";
		return false;
	} else {
		const char *dir = arena_strndup(a, path, (size_t)(strrchr(path, '/') - path));

		if (stat(dir[0] ? dir : "/", &st) < 0 || !S_ISDIR(st.st_mode)) {
			*note = "its directory does not exist";
			return false;
		}
		want = W_OK | X_OK;
	}
	if (perm_ids_self(&ids) < 0)
		return true;
	ok = perm_sandbox_may(&ids, &st, want);
	perm_ids_release(&ids);
	if (!ok)
		*note = access == QUERY_READ ? "its owner and mode do not let this user read it"
					     : "its owner and mode do not let this user write it";
	return ok;
}

/* The grant or protected path of PLAN mounted at DEST, or NULL. */
static const struct bwrap_grant *
mounted_at(const struct launch_plan *plan, const char *dest)
{
	const struct bwrap_context *c = &plan->ctx;

	for (size_t i = 0; i < c->n_protects; i++)
		if (c->protects[i].path && !strcmp(c->protects[i].path, dest))
			return &c->protects[i];
	for (size_t i = 0; i < c->n_grants; i++)
		if (c->grants[i].path && !strcmp(c->grants[i].path, dest))
			return &c->grants[i];
	return NULL;
}

static bool
is_write_file(const struct launch_plan *plan, const char *path)
{
	const struct ir_pathlist *l = &plan->policy->os_env.sandbox.write_files;

	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->v[i].symbolic, path))
			return true;
	return false;
}

/*
 * What the launch makes rather than binds: a placeholder that holds text
 * (read: its text, not a file of the host's), a write_files directory that
 * holds only its files (new names stay in it).  True when it decided.
 */
static bool
made_at_launch(struct arena *a, const struct launch_plan *plan, const struct bwrap_view *v,
	       const char *path, enum query_access access, struct decision *d)
{
	const struct bwrap_grant *g = mounted_at(plan, v->mount->dest);
	const char *dir;

	if (!g)
		return false;
	if (g->hold_text && !strcmp(path, g->path) && access == QUERY_READ) {
		answer(d, false,
		       arena_printf(a, "no file of the host's: a placeholder made at launch, "
				       "holding %s (%s)",
				    g->hold_text[0] ? "what its readers take for no file" : "nothing",
				    v->mount->why));
		return true;
	}
	if (!g->private_dir || is_write_file(plan, path))
		return false;
	if (!strcmp(path, g->path)) {
		if (access == QUERY_WRITE)
			return false;
		answer(d, true,
		       arena_printf(a,
				    "a private directory in its place shows the host directory's "
				    "entries, its write_files as copies (%s)",
				    v->mount->why));
		return true;
	}
	dir = arena_strndup(a, path, (size_t)(strrchr(path, '/') - path));
	if (strcmp(dir, g->path))
		answer(d, false,
		       arena_printf(a, "its directory is not in the private directory (%s)",
				    v->mount->why));
	else if (access == QUERY_READ)
		answer(d, false,
		       arena_printf(a, "the private directory holds only its write_files (%s)",
				    v->mount->why));
	else
		answer(d, v->landlock_write,
		       arena_printf(a, "a new file in the private directory, not on the host (%s)",
				    v->mount->why));
	return true;
}

/*
 * Below the private home (bwrap.h) nothing is the host's: reading finds
 * the sandbox's own directory, and writing makes a file that goes with the
 * scratch dir.  A new entry can be made where a directory exists there:
 * the home itself, and the directories bwrap made on the way to a grant.
 */
static void
private_home(struct arena *a, const struct bwrap_mounts *m, const struct bwrap_view *v,
	     const char *path, enum query_access access, struct decision *d)
{
	const char *home = v->mount->dest;
	const char *dir = arena_strndup(a, path, (size_t)(strrchr(path, '/') - path));
	bool there = !strcmp(path, home) || !strcmp(dir, home) || bwrap_view_made_dir(m, dir);

	if (access == QUERY_READ)
		answer(d, false,
		       arena_printf(a, "the private home holds nothing of the host's (%s)",
				    v->mount->why));
	else if (!there)
		answer(d, false,
		       arena_printf(a, "its directory does not exist in the private home (%s)",
				    v->mount->why));
	else
		answer(d, v->landlock_write,
		       arena_printf(a, "a new entry in the private home, never on the host (%s)",
				    v->mount->why));
}

/* The session's CA bundle bound over a system bundle of PLAN at PATH? */
static bool
ca_bundle_at(const struct launch_plan *plan, const struct bwrap_view *v, const char *path)
{
	const struct bwrap_context *c = &plan->ctx;

	if (v->mount->op != BWRAP_RO_BIND || strcmp(v->mount->dest, path))
		return false;
	for (size_t i = 0; i < c->n_ca_bundles; i++)
		if (!strcmp(c->ca_bundles[i], path))
			return true;
	return false;
}

/*
 * linux_landlock: what the rules give at PATH (the object there, or for a
 * missing one its directory), in the words of the rule that reaches
 * deepest; then the owner and mode.
 */
static void
landlock_why(struct arena *a, const struct launch_plan *plan, const char *path,
	     enum query_access access, struct decision *d)
{
	const struct landlock_arg_rule *rule;
	struct stat st;
	bool exists = stat(path, &st) == 0, dir = exists && S_ISDIR(st.st_mode);
	const char *at = path, *note = NULL, *why;
	unsigned long long need, have;
	char rights[256];

	/* What is missing is made in its directory. */
	if (!exists && access == QUERY_WRITE) {
		const char *slash = strrchr(path, '/');

		at = slash == path ? "/" : arena_strndup(a, path, (size_t)(slash - path));
	}
	have = landlock_rights_at(plan->ll_rules, plan->n_ll_rules, at, &rule);
	if (access == QUERY_READ)
		need = dir ? LL_READ_DIR : LL_READ_FILE;
	else
		need = exists && !dir ? LL_WRITE_FILE : LL_MAKE_REG;
	landlock_rights_text(have, rights, sizeof(rights));
	why = rule ? arena_printf(a, "Landlock: %s at %s (%s)", rights, rule->path, rule->why)
		   : "Landlock: no rule reaches it (default deny)";
	if (!exists && access == QUERY_READ)
		answer(d, false, arena_printf(a, "it does not exist (%s)", why));
	else if (!(have & need))
		answer(d, false, why);
	else if (!mode_allows(a, path, access, &note))
		answer(d, false, arena_printf(a, "%s (%s)", note, why));
	else
		answer(d, true, why);
}

void
launch_why(struct arena *a, const struct launch_plan *plan, const char *path,
	   enum query_access access, struct decision *d)
{
	struct bwrap_mounts m;
	struct bwrap_view v;
	const char *note = NULL, *why;

	if (plan->ll_rules && plan->policy->os_env.sandbox.type != SANDBOX_NONE) {
		landlock_why(a, plan, path, access, d);
		return;
	}
	if (bwrap_mounts_build(plan->policy, &plan->ctx, &m) < 0) {
		answer(d, false, "the policy has no Linux launch");
		return;
	}
	bwrap_view_at(&m, path, &v);
	why = v.rule ? arena_strdup(a, v.rule->why) : NULL;
	if (plan->policy->os_env.sandbox.type == SANDBOX_NONE) {
		answer(d, host_allows(a, path, access, &note),
		       note ? arena_printf(a, "sandbox type none: the command runs unsandboxed, and %s",
					   note)
			    : "sandbox type none: the command runs unsandboxed");
	} else if (!v.mount && v.on_the_way) {
		answer(d, false,
		       arena_printf(a,
				    "a directory bwrap makes to hold %s: it shows nothing of the "
				    "host's but the way there",
				    v.on_the_way));
	} else if (!v.mount) {
		answer(d, false, "nothing of the host is mounted there (default deny)");
	} else if (v.mount->op == BWRAP_PROC || v.mount->op == BWRAP_DEV) {
		answer(d, access == QUERY_READ || (v.mount->op == BWRAP_DEV && v.landlock_write),
		       arena_printf(a, "the sandbox's own %s", v.mount->dest));
	} else if (v.hidden && v.mount->op == BWRAP_DEVNULL) {
		answer(d, false, arena_printf(a, "hidden: an empty file in its place (%s)", why));
	} else if (v.mount->op == BWRAP_TMPFS) {
		if (v.read_only)
			answer(d, false,
			       arena_printf(a, "hidden: an empty read-only directory in its place (%s)",
					    why));
		else if (access == QUERY_READ)
			answer(d, !v.hidden,
			       v.hidden ? arena_printf(a,
						       "the sandbox's own %s holds no file of the "
						       "host's (%s)",
						       v.mount->dest, why)
					: arena_printf(a, "the sandbox's own %s (%s)", v.mount->dest,
						       why));
		else
			answer(d, v.landlock_write,
			       arena_printf(a, "the sandbox's own %s, not the host's (%s)",
					    v.mount->dest, why));
	} else if (v.mount->own) {
		private_home(a, &m, &v, path, access, d);
	} else if (access == QUERY_READ && ca_bundle_at(plan, &v, path)) {
		answer(d, true,
		       arena_printf(a, "the session's CA bundle in its place, holding a copy of the "
				       "system's CAs and the session CA (%s)",
				    why));
	} else if ((v.mount->op == BWRAP_BIND || v.mount->op == BWRAP_RO_BIND) &&
		   made_at_launch(a, plan, &v, path, access, d)) {
		/* decided */
	} else if (access == QUERY_WRITE && v.read_only) {
		answer(d, false, arena_printf(a, "read-only: %s", why));
	} else if (access == QUERY_WRITE && !v.landlock_write) {
		answer(d, false,
		       arena_printf(a, "Landlock: not below a writable grant (mounted by: %s)", why));
	} else if (!mode_allows(a, path, access, &note)) {
		answer(d, false, arena_printf(a, "%s (mounted by: %s)", note, why));
	} else {
		answer(d, true, why);
	}
	bwrap_mounts_free(&m);
}
