/*
 * resolve.c - from a symbolic policy to the facts of one launch.
 *
 * Every path goes through walk_open() with the policy's writable roots:
 * a symlink the agent could have planted is followed only while it stays
 * where the agent can write anyway.  On Linux the descriptor each walk
 * returns is what bwrap mounts (--bind-fd), so nothing can be swapped
 * between the check and the mount.
 */
#include "runtime/resolve/resolve.h"

#include "compiler/base/textesc.h"
#include "compiler/decide/env.h"
#include "compiler/decide/hidden.h"
#include "compiler/decide/refuse.h"
#include "compiler/decide/workspace.h"
#include "compiler/decide/protect.h"
#include "compiler/decide/secrets.h"
#include "emitters/sbpl.h"
#include "runtime/resolve/command.h"
#include "runtime/resolve/copy.h"
#include "runtime/resolve/gitguard.h"
#include "runtime/resolve/gitindex.h"
#include "runtime/resolve/perm.h"
#include "runtime/resolve/scan.h"
#include "runtime/resolve/walk.h"
#include "runtime/resolve/writeback.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct rctx {
	struct arena *a;
	const struct launch_request *rq;
	struct launch_plan *plan;
	struct diag *d; /* every error goes here (resolve.h) */
	char err[2048]; /* the message of a helper that fails at no position */
	bool linux_target;
	bool ws_writable;
	const char **roots; /* the writable roots, canonical */
	size_t n_roots, cap_roots;
	/* Where a link may have been planted: the writable roots and the
	 * workspace, which another launch (of another policy) may have written
	 * even when this one reads it only. */
	const char **link_roots;
	size_t n_link_roots;
	struct bwrap_grant *grants;
	size_t n_grants, cap_grants;
	struct bwrap_mask *masks;
	size_t n_masks, cap_masks;
	const char **git_tops; /* scan roots holding a .git directory */
	size_t n_git_tops;
	struct bwrap_grant *reexpose;
	size_t n_reexpose, cap_reexpose;
	struct bwrap_grant *protects;
	size_t n_protects, cap_protects;
	int protect_rc;
	size_t n_gitdirs;
	bool collect_only; /* macOS: protected paths are listed for the profile */
	size_t cap_protected;
	const char **sockets;
	size_t n_sockets, cap_sockets;
	struct bwrap_grant *command_dirs;
	size_t n_command_dirs, cap_command_dirs;
	struct bwrap_grant *pins;
	size_t n_pins, cap_pins;
	size_t cap_command_dir_names, cap_placeholders, cap_notes, cap_skipped;
	size_t cap_writebacks;
	struct bwrap_grant *private_home; /* NULL: none */
	const char **ca_bundles;
	size_t n_ca_bundles;
};

/* No position: a default, the machine, the command line. */
static const struct loc nowhere;

/*
 * The error of a setting written at LOC: located, with its line and a
 * caret; one with no position (LOC.line 0) is a plain failure.  -1.
 */
static int
vfail_at(struct rctx *r, struct loc loc, const char *fmt, va_list ap)
{
	char *msg;

	if (vasprintf(&msg, fmt, ap) < 0)
		return diag_failure(r->d, "out of memory");
	if (loc.line)
		diag_error(r->d, loc, "%s", msg);
	else
		diag_failure(r->d, "%s", msg);
	free(msg);
	return -1;
}

static int fail_at(struct rctx *r, struct loc loc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(struct rctx *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int
fail_at(struct rctx *r, struct loc loc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail_at(r, loc, fmt, ap);
	va_end(ap);
	return -1;
}

/* A failure no line of the policy is to blame for. */
static int
fail(struct rctx *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail_at(r, nowhere, fmt, ap);
	va_end(ap);
	return -1;
}

static void note(struct rctx *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
note(struct rctx *r, const char *fmt, ...)
{
	va_list ap;
	char buf[2048];

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	*ARENA_PUSH(r->a, r->plan->notes, r->plan->n_notes, r->cap_notes) = arena_strdup(r->a, buf);
}

/*
 * S as a message shows it (textesc.h): every path, name or link target in
 * a message of the resolver goes through this, because the agent may have
 * chosen it (a directory it made, the target of a link it planted).
 */
static const char *
shown(struct rctx *r, const char *s)
{
	return arena_escape(r->a, s);
}

/*
 * Where the entry of list L on LINE that names PATH (canonical, or as the
 * IR spells it) is written: a grant or a protected path keeps only its
 * line.  The first entry on LINE when none names PATH.
 */
static struct loc
loc_on_line(const struct ir_pathlist *l, uint32_t line, const char *path)
{
	const struct ir_path *first = NULL;

	if (!line)
		return nowhere;
	for (size_t i = 0; i < l->n; i++) {
		if (l->v[i].loc.line != line)
			continue;
		if (path && l->v[i].symbolic && !strcmp(l->v[i].symbolic, path))
			return l->v[i].loc;
		if (!first)
			first = &l->v[i];
	}
	return first ? first->loc : (struct loc){line, 1, 0};
}

static void
keep_fd(struct rctx *r, int fd)
{
	if (fd >= 0)
		*ARENA_PUSH(r->a, r->plan->fds, r->plan->n_fds, r->plan->cap_fds) = fd;
}

/* ---- paths ------------------------------------------------------------------ */

static char *
path_join(struct arena *a, const char *dir, const char *name)
{
	if (!*name)
		return arena_strdup(a, dir);
	return arena_printf(a, "%s%s%s", dir, strcmp(dir, "/") ? "/" : "", name);
}

static char *
path_dirname(struct arena *a, const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash || slash == path)
		return arena_strdup(a, "/");
	return arena_strndup(a, path, (size_t)(slash - path));
}

/* How the platform spells a canonical path (Seatbelt sees /private/tmp). */
static const char *
spell(struct rctx *r, const char *path)
{
	return r->linux_target ? path : paths_darwin_spelling(r->a, path);
}

/* ENTRY now names the canonical PATH (and the emitters read it so). */
static void
set_path(struct rctx *r, struct ir_path *entry, const char *path)
{
	entry->symbolic = spell(r, path);
	entry->base = PATH_ABSOLUTE;
	entry->rel = entry->symbolic + 1;
}

/* The absolute path an IR path names, as written ("..": lexically). */
static char *
lexical_of(struct rctx *r, const struct ir_path *p, const char *ws)
{
	const char *base = p->base == PATH_ABSOLUTE ? "/"
			   : p->base == PATH_HOME   ? r->plan->home
			   : p->base == PATH_LAUNCH ? r->rq->launch_dir
						    : ws;

	return (char *)spell(r, walk_lexical(r->a, path_join(r->a, base, p->rel)));
}

/*
 * Would exposing PATH expose a whole home, or everything?  "/", the home
 * directory or a parent of it, root's home, and every user's home.
 */
static bool
too_wide(struct rctx *r, const char *path)
{
	return refuse_too_wide(path, r->plan->home, !r->linux_target) != NULL;
}

/* The link rule (refuse.h), with this launch's home and platform. */
static bool
link_target_refused(struct rctx *r, const char *written, const char *canon)
{
	return refuse_link_target(written, canon, r->plan->home, !r->linux_target);
}

static bool
writable_inside(struct rctx *r, const char *path)
{
	for (size_t i = 0; i < r->n_roots; i++)
		if (path_within(path, r->roots[i]))
			return true;
	return false;
}

/*
 * walk_open() with the writable roots; a refusal becomes the message that
 * names the setting (WHAT, on LINE), the path and the link.
 */
static int
open_checked(struct rctx *r, const char *path, const char *what, struct loc loc, unsigned flags,
	     struct walk_result *w)
{
	if (walk_open(r->a, path, r->link_roots, r->n_link_roots, flags, w) == 0)
		return 0;
	if (errno == EXDEV)
		return fail_at(r, loc,
			       "%s %s goes through the symlink %s -> %s, which leads out of %s, "
			       "a directory %s: omnibox does not follow it; remove the link, or "
			       "name its target in the policy",
			       what, shown(r, path), shown(r, w->bad_link), shown(r, w->bad_target),
			       shown(r, w->bad_root),
			       writable_inside(r, w->bad_root) ? "the sandbox can write"
						      : "a sandbox may have written (the workspace)");
	if (errno == EAGAIN)
		return fail_at(r, loc, "%s %s moved while it was being opened; nothing ran", what,
			       shown(r, path));
	return fail_at(r, loc, "%s %s: %s", what, shown(r, path), strerror(errno));
}

/* ---- the workspace ----------------------------------------------------------- */

/*
 * The workspace, by workspace_decide() (compiler/decide/workspace.h): the
 * paths are found here, on the machine; what they mean is decided there.
 */
static int
resolve_workspace(struct rctx *r)
{
	const struct launch_request *rq = r->rq;
	const struct os_env *env = &rq->policy->os_env;
	const struct terminal *t = rq->policy->terminal;
	const char *own =
	    env->cwd.s ? lexical_of(r, &env->cwd_path, rq->launch_dir) : spell(r, rq->launch_dir);
	struct workspace_request wr = {.own = own,
				       .own_canon = walk_canonical(r->a, own),
				       .home = r->plan->home,
				       .darwin = !r->linux_target};
	struct workspace_verdict v;
	/* os_env.cwd is to blame for a workspace it chose. */
	struct loc at = !rq->cwd && env->cwd.s ? env->cwd.loc : nowhere;
	struct stat st;

	if (rq->cwd) {
		wr.cwd_given = rq->cwd;
		wr.cwd = spell(r, walk_lexical(r->a, rq->cwd[0] == '/'
							 ? rq->cwd
							 : path_join(r->a, rq->launch_dir, rq->cwd)));
		wr.cwd_canon = walk_canonical(r->a, wr.cwd);
	}
	if (t) {
		wr.terminal = t->name;
		wr.allow_cwd_override = t->allow_cwd_override.value;
		wr.override_line = t->allow_cwd_override.loc.line;
	}
	v = workspace_decide(r->a, &wr);
	if (!v.path && v.line)
		return fail_at(r, t->allow_cwd_override.loc, "%s", shown(r, v.why));
	if (!v.path && rq->cwd && t && !strncmp(v.why, "--cwd ", 6))
		return fail(r, "%s", shown(r, v.why));
	/* macOS: a workspace that is missing fails at the launch's chdir; here,
	 * on another system, it may be a Mac's path being described. */
	if (v.path && (rq->cwd ? !wr.cwd_canon : !wr.own_canon))
		v.path = NULL, v.why = NULL;
	if (!v.path && !v.why)
		return fail_at(r, at, "the workspace %s is not a directory",
			       shown(r, rq->cwd ? wr.cwd : own));
	if (!v.path)
		return fail_at(r, at, "%s", shown(r, v.why));
	if (stat(v.path, &st) < 0 ? r->linux_target : !S_ISDIR(st.st_mode))
		return fail_at(r, at, "the workspace %s is not a directory",
			       shown(r, rq->cwd ? wr.cwd : own));
	r->plan->workspace = v.path;
	return 0;
}

/* ---- grants --------------------------------------------------------------------- */

static void
add_grant(struct rctx *r, const char *path, int fd, bool writable, bool must_exist,
	  const char *what, uint32_t line)
{
	*ARENA_PUSH(r->a, r->grants, r->n_grants, r->cap_grants) =
	    (struct bwrap_grant){path, fd, writable, must_exist, what, line, false, false, NULL};
	keep_fd(r, fd);
}

/* The writable roots: the workspace when a write_paths entry names it, every
 * write_paths directory, the scratch dir.  Their links are found in pass 2. */
static void
find_roots(struct rctx *r)
{
	const struct ir_pathlist *w = &r->rq->policy->os_env.sandbox.write_paths;

	for (size_t i = 0; i < w->n; i++) {
		const char *canon =
		    walk_canonical(r->a, lexical_of(r, &w->v[i], r->plan->workspace));
		struct stat st;

		if (!canon || stat(canon, &st) < 0 || !S_ISDIR(st.st_mode))
			continue;
		canon = spell(r, canon);
		if (!strcmp(canon, r->plan->workspace))
			r->ws_writable = true;
		*ARENA_PUSH(r->a, r->roots, r->n_roots, r->cap_roots) = canon;
	}
	{
		const char *s = walk_canonical(r->a, r->rq->scratch);

		*ARENA_PUSH(r->a, r->roots, r->n_roots, r->cap_roots) = s ? s : r->rq->scratch;
	}
	r->link_roots = arena_alloc(r->a, (r->n_roots + 1) * sizeof(*r->link_roots));
	for (size_t i = 0; i < r->n_roots; i++)
		r->link_roots[r->n_link_roots++] = r->roots[i];
	if (!r->ws_writable)
		r->link_roots[r->n_link_roots++] = r->plan->workspace;
}

/* Directories of "/" that a grant of "/" stands for: never /proc /sys /dev /tmp /run. */
static int
grant_root_dirs(struct rctx *r, bool writable, const char *what, struct loc loc)
{
	static const char *const skip[] = {"proc", "sys", "dev", "tmp", "run", NULL};
	struct dirent **names;
	int n = scandir("/", &names, NULL, alphasort), rc = 0;

	if (n < 0)
		return fail_at(r, loc, "cannot list /: %s", strerror(errno));
	for (int i = 0; i < n; i++) {
		bool skipped = names[i]->d_name[0] == '.';
		struct walk_result w;

		for (size_t s = 0; skip[s] && !skipped; s++)
			skipped = !strcmp(names[i]->d_name, skip[s]);
		if (!skipped && rc == 0) {
			const char *path = arena_printf(r->a, "/%s", names[i]->d_name);

			if (open_checked(r, path, what, loc, 0, &w) < 0)
				rc = -1;
			else if (w.exists && strcmp(w.path, path) && paths_linux_system(w.path))
				close(w.fd); /* /bin -> usr/bin: recreated as the link it is */
			else if (w.exists)
				/* A top-level link elsewhere shows its target under its own name.
				 */
				add_grant(r, path, w.fd, writable, false, what, loc.line);
		}
		free(names[i]);
	}
	free(names);
	return rc;
}

/*
 * Open one grant ENTRY (the IR path, made canonical in place).  A path
 * missing here is not mounted; one that reaches "/" or a home through a
 * symlink, where the policy did not name it, is refused.
 */
static int
open_grant(struct rctx *r, struct ir_path *entry, bool writable, const char *what)
{
	const char *lexical = lexical_of(r, entry, r->plan->workspace);
	struct walk_result w;

	if (entry->base == PATH_ABSOLUTE && entry->rel[0] == '\0') {
		set_path(r, entry, "/");
		return r->linux_target ? grant_root_dirs(r, writable, what, entry->loc) : 0;
	}
	if (open_checked(r, lexical, what, entry->loc, r->linux_target ? 0 : WALK_NO_FD, &w) < 0)
		return -1;
	set_path(r, entry, w.path);
	if (!w.exists) {
		*ARENA_PUSH(r->a, r->plan->skipped, r->plan->n_skipped, r->cap_skipped) =
		    arena_printf(r->a, "%s (line %u): %s does not exist here; not mounted", what,
				 entry->loc.line, shown(r, w.path));
		return 0;
	}
	if (w.through_link && link_target_refused(r, lexical, w.path)) {
		if (w.fd >= 0)
			close(w.fd);
		return fail_at(r, entry->loc,
			       "%s %s resolves through a symlink to %s: omnibox never grants /, a "
			       "home directory or a parent of one, a system directory or a hidden "
			       "path by way of a link; name it in the policy if that is what you "
			       "mean",
			       what, shown(r, lexical), shown(r, w.path));
	}
	if (!strcmp(what, "write_files") && w.is_dir) {
		if (w.fd >= 0)
			close(w.fd);
		/* A directory would be writable without being a writable root, whose
		 * symlinks the next launch checks. */
		return fail_at(r, entry->loc,
			       "write_files %s is a directory: name it in write_paths",
			       shown(r, w.path));
	}
	if (r->linux_target)
		add_grant(r, w.path, w.fd, writable, false, what, entry->loc.line);
	return 0;
}

static void add_mask(struct rctx *r, const char *path, bool dir, const char *reason);
static bool visible_inside(struct rctx *r, const char *path);

/* The directory of the scratch dir that holds the copy_on_write copies. */
#define COW_DIR ".omnibox-cow"

/*
 * A write_paths entry with copy_on_write: the tree ENTRY names is copied,
 * through the descriptor walked to it, into the scratch dir, and the copy
 * is bound at its path.  The copies' own place in the scratch dir is
 * masked, so what the dotfile scan of the copy hides stays hidden.  Only a
 * real launch copies; a description shows the grant with "{FD}".
 */
static int
open_cow(struct rctx *r, struct ir_path *entry, size_t index)
{
	static const char what[] = "write_paths, copy-on-write: a private copy, the host's is "
				   "not written";
	const char *lexical = lexical_of(r, entry, r->plan->workspace);
	struct walk_result w;
	char name[32];
	int dir, copy;

	if (open_checked(r, lexical, "write_paths", entry->loc, 0, &w) < 0)
		return -1;
	set_path(r, entry, w.path);
	if (!w.exists) {
		*ARENA_PUSH(r->a, r->plan->skipped, r->plan->n_skipped, r->cap_skipped) =
		    arena_printf(r->a, "write_paths (line %u): %s does not exist here; not copied",
				 entry->loc.line, shown(r, w.path));
		return 0;
	}
	if (w.through_link && link_target_refused(r, lexical, w.path)) {
		close(w.fd);
		return fail_at(r, entry->loc,
			       "write_paths %s resolves through a symlink to %s: omnibox never "
			       "copies /, a home directory or a parent of one, a system directory "
			       "or a hidden path by way of a link; name it in the policy",
			       shown(r, lexical), shown(r, w.path));
	}
	if (too_wide(r, w.path)) {
		close(w.fd);
		return fail_at(r, entry->loc,
			       "write_paths %s: copy_on_write of a home directory or of / is "
			       "refused (the copy would hold everything in it)",
			       shown(r, w.path));
	}
	for (size_t i = 0; i < r->n_grants; i++) {
		const struct bwrap_grant *g = &r->grants[i];

		if (g->writable && !g->cow && strcmp(g->path, r->plan->scratch) &&
		    path_within(g->path, w.path)) {
			close(w.fd);
			return fail_at(r, entry->loc,
				       "write_paths %s is copy-on-write but %s (line %u) makes %s "
				       "writable on the host; a path is one or the other",
				       shown(r, w.path), g->what, g->line, shown(r, g->path));
		}
	}
	if (!r->rq->create_placeholders) {
		close(w.fd);
		add_grant(r, w.path, -1, true, false, what, entry->loc.line);
		r->grants[r->n_grants - 1].cow = true;
		return 0;
	}
	dir = open(r->plan->scratch, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dir < 0 || ((mkdirat(dir, COW_DIR, 0700) < 0 && errno != EEXIST))) {
		int e = errno;

		close(w.fd);
		if (dir >= 0)
			close(dir);
		return fail(r, "cannot make %s/%s: %s", shown(r, r->plan->scratch), COW_DIR,
			    strerror(e));
	}
	copy = openat(dir, COW_DIR, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	close(dir);
	snprintf(name, sizeof(name), "%zu", index);
	if (copy < 0 || copy_tree(w.fd, copy, name, r->err, sizeof(r->err)) < 0) {
		if (copy < 0)
			fail(r, "cannot open %s/%s: %s", shown(r, r->plan->scratch), COW_DIR,
			     strerror(errno));
		else
			fail(r, "%s", r->err);
		close(w.fd);
		if (copy >= 0)
			close(copy);
		return -1;
	}
	close(w.fd);
	dir = openat(copy, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	close(copy);
	if (dir < 0)
		return fail(r, "cannot open the copy of %s: %s", shown(r, w.path), strerror(errno));
	add_grant(r, w.path, dir, true, false, what, entry->loc.line);
	r->grants[r->n_grants - 1].cow = true;
	if (index == 0)
		add_mask(r, arena_printf(r->a, "%s/%s", r->plan->scratch, COW_DIR), true,
			 "the copy_on_write copies, seen only at their own paths");
	return 0;
}

/*
 * Files only omnibox-run reads (git_ssh's identity and known hosts, every
 * file a credential is read from: cred_host_files()) must not be readable
 * or writable in the sandbox.  The compiler refuses what it can see; this
 * asks sandbox_exposes() again about the canonical path of this machine
 * (a home reached through a link, a file that is a link into a grant) and
 * the grants made canonical.  git_ssh's paths are made canonical in the
 * plan, for the broker.
 */
static int
check_secret(struct rctx *r, struct ir_path *p, const char *what, bool canonicalize)
{
	const struct sandbox *sb = &r->plan->policy->os_env.sandbox;
	const char *lexical, *canon, *via;
	struct exposure e;

	if (!p->rel)
		return 0;
	lexical = lexical_of(r, p, r->plan->workspace);
	canon = walk_canonical(r->a, lexical);
	canon = spell(r, canon ? canon : lexical);
	if (path_within(canon, r->plan->scratch))
		via = "the scratch dir";
	else if (sandbox_exposes(r->a, sb, r->plan->workspace, canon, &e))
		via = e.file_mask
			  ? arena_printf(
				r->a,
				"%s, though hidden: a file the host replaces comes out from "
				"under the mask that hides it; keep it in a hidden directory",
				e.grant ? e.grant->written : r->plan->workspace)
		      : !e.grant ? arena_printf(r->a, "the workspace %s", r->plan->workspace)
		      : e.dotfile
			  ? arena_printf(r->a,
					 "the grant %s (line %u), whose dotfile %s is not hidden",
					 e.grant->written, e.grant->loc.line, e.dotfile)
			  : arena_printf(r->a, "the grant %s (line %u)", e.grant->written,
					 e.grant->loc.line);
	else
		via = NULL;
	if (via)
		return fail_at(
		    r, p->loc,
		    "%s %s (%s) would be readable or writable in the sandbox through %s; "
		    "keep it outside every grant",
		    what, shown(r, p->written), shown(r, canon), shown(r, via));
	if (canonicalize)
		set_path(r, p, canon);
	return 0;
}

static int
check_secrets(struct rctx *r)
{
	struct sandbox *sb = &r->plan->policy->os_env.sandbox;
	struct git_ssh *g = arena_alloc(r->a, (sb->n_git_ssh ? sb->n_git_ssh : 1) * sizeof(*g));
	/* Where the proxy will look for the databricks_cli configuration. */
	const char *dbcfg = env_lookup(r->rq->environ, CRED_DATABRICKS_CONFIG_ENV);

	if (sb->n_git_ssh)
		memcpy(g, sb->git_ssh, sb->n_git_ssh * sizeof(*g));
	sb->git_ssh = g;
	sb->cap_git_ssh = sb->n_git_ssh;
	for (size_t i = 0; i < sb->n_git_ssh; i++) {
		struct ir_path kh = {PATH_HOME, ".ssh/known_hosts", "{HOME}/.ssh/known_hosts",
				     "~/.ssh/known_hosts", g[i].loc};

		if (!g[i].known_hosts_file.rel)
			g[i].known_hosts_file = kh;
		if (check_secret(r, &g[i].identity_file, "git_ssh identity_file", true) < 0 ||
		    check_secret(r, &g[i].known_hosts_file, "git_ssh known_hosts_file", true) < 0)
			return -1;
	}
	for (size_t i = 0; i < sb->n_creds; i++) {
		struct cred_host_file files[CRED_HOST_FILES_MAX];
		size_t n = cred_host_files(r->a, &sb->creds[i], dbcfg, files);

		for (size_t k = 0; k < n; k++)
			if (check_secret(r, &files[k].path, files[k].what, false) < 0)
				return -1;
	}
	return 0;
}

/* The plan's own copy of L's entries, which resolution rewrites. */
static void
copy_list(struct rctx *r, struct ir_pathlist *l)
{
	struct ir_path *v = arena_alloc(r->a, (l->n ? l->n : 1) * sizeof(*v));

	if (l->n)
		memcpy(v, l->v, l->n * sizeof(*v));
	l->v = v;
	l->cap = l->n;
}

static int
open_grants(struct rctx *r)
{
	struct sandbox *sb = &r->plan->policy->os_env.sandbox;
	const struct {
		struct ir_pathlist *l;
		bool writable;
		const char *what;
	} lists[] = {{&sb->write_paths, true, "write_paths"},
		     {&sb->read_paths, false, "read_paths"},
		     {&sb->write_files, true, "write_files"}};
	const struct ir_path *ws_entry = NULL;
	struct walk_result w;

	for (size_t i = 0; i < sb->write_paths.n; i++)
		if (!strcmp(lexical_of(r, &sb->write_paths.v[i], r->plan->workspace),
			    r->plan->workspace) ||
		    (sb->write_paths.v[i].base == PATH_CWD && !sb->write_paths.v[i].rel[0]))
			ws_entry = &sb->write_paths.v[i];
	if (r->linux_target) {
		if (open_checked(r, r->plan->workspace, "the workspace", nowhere, 0, &w) < 0)
			return -1;
		if (!w.exists || !w.is_dir || strcmp(w.path, r->plan->workspace)) {
			if (w.fd >= 0)
				close(w.fd);
			return fail(r, "the workspace %s changed while it was being opened",
				    shown(r, r->plan->workspace));
		}
		add_grant(r, w.path, w.fd, r->ws_writable, true,
			  r->ws_writable ? "workspace, writable: write_paths"
					 : "workspace, read-only",
			  r->ws_writable && ws_entry ? ws_entry->loc.line : 0);
	}
	for (size_t k = 0; k < 3; k++) {
		copy_list(r, lists[k].l);
		for (size_t i = 0; i < lists[k].l->n; i++)
			if (open_grant(r, &lists[k].l->v[i], lists[k].writable, lists[k].what) < 0)
				return -1;
	}
	/* The scratch dir: made by the launch; only named when described. */
	if (r->linux_target) {
		if (open_checked(r, r->rq->scratch, "the scratch dir", nowhere, 0, &w) < 0)
			return -1;
		if (w.exists && !w.is_dir) {
			close(w.fd);
			return fail(r, "the scratch dir %s is not a directory",
				    shown(r, r->rq->scratch));
		}
		add_grant(r, w.exists ? w.path : r->rq->scratch, w.fd, true, true,
			  "scratch dir ($TMPDIR), writable", 0);
		r->plan->scratch = w.exists ? w.path : r->rq->scratch;
	} else {
		const char *s = walk_canonical(r->a, r->rq->scratch);

		r->plan->scratch = spell(r, s ? s : r->rq->scratch);
	}
	copy_list(r, &sb->cow_paths);
	for (size_t i = 0; i < sb->cow_paths.n; i++)
		if (open_cow(r, &sb->cow_paths.v[i], i) < 0)
			return -1;
	return 0;
}

/* Is PATH readable in the sandbox without a grant of its own? */
static bool
visible_inside(struct rctx *r, const char *path)
{
	const struct sandbox *sb = &r->plan->policy->os_env.sandbox;
	const struct ir_pathlist *lists[] = {&sb->read_paths, &sb->write_paths, &sb->write_files,
					     &sb->cow_paths};

	if (path_within(path, r->plan->workspace) || path_within(path, r->plan->scratch))
		return true;
	for (size_t k = 0; k < 4; k++)
		for (size_t i = 0; i < lists[k]->n; i++)
			if (path_within(path, lists[k]->v[i].symbolic))
				return true;
	return false;
}

/* ---- masks (Linux) ------------------------------------------------------------- */

static void
add_mask(struct rctx *r, const char *path, bool dir, const char *reason)
{
	struct bwrap_mask *m = ARENA_PUSH(r->a, r->masks, r->n_masks, r->cap_masks);
	struct stat st;

	/* A mask hides a name: another name of the same file stays readable. */
	if (!dir && lstat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink > 1)
		note(r,
		     "warning: %s (%s) has %ju other hard links in the file system: their names "
		     "show its contents, the mask hides only this one",
		     shown(r, path), reason, (uintmax_t)(st.st_nlink - 1));

	m->path = path;
	m->is_dir = dir;
	m->reason = reason;
}

/* The mask just added must sit in the directory the resolver saw: FD. */
static void
mask_parent(struct rctx *r, int fd)
{
	struct stat st;

	if (fd >= 0 && fstat(fd, &st) == 0) {
		r->masks[r->n_masks - 1].have_parent = true;
		r->masks[r->n_masks - 1].parent_dev = (unsigned long long)st.st_dev;
		r->masks[r->n_masks - 1].parent_ino = (unsigned long long)st.st_ino;
	}
}

/*
 * The directory mask just added is on the very directory the scan found
 * there, when the scan knows it: omnibox-init mounts its tmpfs itself, on
 * that directory only (so one renamed away after the scan shows nothing).
 */
static void
mask_self(struct rctx *r, const struct scan_result *res)
{
	struct bwrap_mask *m = &r->masks[r->n_masks - 1];
	unsigned long long id[2];

	if (!scan_dir_id(res, m->path, id))
		return;
	m->have_self = true;
	m->self_dev = id[0];
	m->self_ino = id[1];
}

static int
cmp_mask(const void *a, const void *b)
{
	return strcmp(((const struct bwrap_mask *)a)->path, ((const struct bwrap_mask *)b)->path);
}

static bool
granted_explicitly(const struct sandbox *sb, const char *path)
{
	const struct ir_pathlist *lists[] = {&sb->read_paths, &sb->write_paths, &sb->write_files};

	for (size_t k = 0; k < 3; k++)
		for (size_t i = 0; i < lists[k]->n; i++)
			if (!strcmp(lists[k]->v[i].symbolic, path))
				return true;
	return false;
}

/* A grant below the hidden directory HIDDEN is bound again after its mask. */
static int
reexpose_below(struct rctx *r, const char *hidden)
{
	for (size_t i = 0; i < r->n_grants; i++) {
		const struct bwrap_grant *g = &r->grants[i];
		int fd;

		if (!path_within(g->path, hidden) || !strcmp(g->path, hidden) || g->fd < 0)
			continue;
		/* bwrap closes each descriptor it mounts: the second mount needs its own. */
		fd = fcntl(g->fd, F_DUPFD_CLOEXEC, 3);
		if (fd < 0)
			return fail(r, "cannot duplicate a descriptor: %s", strerror(errno));
		keep_fd(r, fd);
		*ARENA_PUSH(r->a, r->reexpose, r->n_reexpose, r->cap_reexpose) =
		    (struct bwrap_grant){g->path, fd,	  g->writable, false, g->what,
					 g->line, g->cow, false,       NULL};
	}
	return 0;
}

/* The indexes of the repositories at the scan's roots (gitindex.h). */
struct tracked {
	struct gitindex **v;
	size_t n;
};

/* scan_options.keep: a hidden entry the deepest repository's index vouches for. */
static bool
keep_tracked(void *arg, const char *path, int dirfd, const char *name, unsigned char type)
{
	const struct tracked *t = arg;
	const struct gitindex *best = NULL;

	for (size_t i = 0; i < t->n; i++)
		if (path_within(path, gitindex_top(t->v[i])) &&
		    (!best || strlen(gitindex_top(t->v[i])) > strlen(gitindex_top(best))))
			best = t->v[i];
	return best && gitindex_vouches(best, path, dirfd, name, type);
}

/*
 * Where the policy shows .git, the repositories at the roots vouch for
 * their tracked dotfiles (docs/schema.md, "Dotfiles in a repository").
 */
static void
tracked_load(const struct sandbox *sb, const char *const *roots, const int *fds, size_t n,
	     struct tracked *t)
{
	const char **allow = malloc((sb->cwd_allow_hidden.n + 1) * sizeof(*allow));

	t->v = calloc(n ? n : 1, sizeof(*t->v));
	t->n = 0;
	if (!allow || !t->v) {
		free(allow);
		return;
	}
	for (size_t i = 0; i < sb->cwd_allow_hidden.n; i++)
		allow[i] = sb->cwd_allow_hidden.v[i].s;
	if (!hidden_name_in(allow, sb->cwd_allow_hidden.n, ".git", 4))
		for (size_t i = 0; i < n; i++)
			if ((t->v[t->n] = gitindex_load(fds[i], roots[i])))
				t->n++;
	free(allow);
}

static void
tracked_free(struct tracked *t)
{
	for (size_t i = 0; i < t->n; i++)
		gitindex_free(t->v[i]);
	free(t->v);
}

#define MASK_ALL_HIDDEN "every entry a dotfile: the directory hidden whole, one mount for them all"

/*
 * May DIR, whose every entry the scan hides (res->all_hidden), be hidden
 * whole, by one tmpfs instead of a mount per entry?  bwrap reads the whole
 * mount table again for every bind it makes, so a launch's cost grows with
 * the square of its masks; one mount for a directory of them is the same
 * view of what it holds.  Only where the sandbox cannot write (a new file
 * there must reach the host) and where nothing else is mounted at or below
 * it (a grant, a grant named inside a hidden directory, a dotfile named in
 * a grant and so left visible); bwrap_backend only: the linux_landlock
 * backend has no mounts, and its rules are per path.
 */
static bool
coalescible(struct rctx *r, const struct scan_result *res, const char *dir)
{
	const struct sandbox *sb = &r->plan->policy->os_env.sandbox;

	if (r->rq->landlock)
		return false;
	for (size_t i = 0; i < r->n_roots; i++)
		if (path_within(dir, r->roots[i]) || path_within(r->roots[i], dir))
			return false;
	for (size_t i = 0; i < r->n_grants; i++)
		if ((r->grants[i].writable && path_within(dir, r->grants[i].path)) ||
		    path_within(r->grants[i].path, dir))
			return false;
	for (size_t i = 0; i < r->n_reexpose; i++)
		if (path_within(r->reexpose[i].path, dir))
			return false;
	for (size_t i = 0; i < res->n_hits; i++)
		if (path_within(res->hits[i].path, dir) && granted_explicitly(sb, res->hits[i].path))
			return false;
	return true;
}

static int
run_scan(struct rctx *r)
{
	const struct sandbox *sb = &r->plan->policy->os_env.sandbox;
	const char **roots = arena_alloc(r->a, (r->n_grants + 1) * sizeof(*roots));
	int *fds = arena_alloc(r->a, (r->n_grants + 1) * sizeof(*fds));
	const char **allow = arena_alloc(r->a, (sb->cwd_allow_hidden.n + 1) * sizeof(*allow));
	struct scan_options o = {0};
	struct scan_result res = {0};
	struct tracked tracked;
	size_t n_roots = 0;
	int rc;

	/* The workspace and every granted directory outside it, by the very
	 * descriptors that will be mounted. */
	for (size_t i = 0; i < r->n_grants; i++) {
		const struct bwrap_grant *g = &r->grants[i];
		struct stat st;

		if (g->fd < 0 || fstat(g->fd, &st) < 0 || !S_ISDIR(st.st_mode) ||
		    !strcmp(g->path, r->plan->scratch))
			continue;
		/* A copy is scanned itself: its dotfiles are the copy's. */
		if (!g->cow && strcmp(g->path, r->plan->workspace) &&
		    path_within(g->path, r->plan->workspace))
			continue;
		roots[n_roots] = g->path;
		fds[n_roots++] = g->fd;
	}
	for (size_t i = 0; i < sb->cwd_allow_hidden.n; i++)
		allow[i] = sb->cwd_allow_hidden.v[i].s;
	o.allow = allow;
	o.n_allow = sb->cwd_allow_hidden.n;
	o.recursive = sb->scan_recursive.value;
	o.max_entries = sb->scan_max_entries.value;
	o.root_fds = fds;
	o.overflow = sb->scan_overflow == OVERFLOW_WARN	   ? SCAN_WARN
		     : sb->scan_overflow == OVERFLOW_ERROR ? SCAN_ERROR
							   : SCAN_UNLIMITED;
	tracked_load(sb, roots, fds, n_roots, &tracked);
	r->git_tops = arena_alloc(r->a, (n_roots + 1) * sizeof(*r->git_tops));
	for (size_t i = 0; i < n_roots; i++) {
		struct stat gst;

		if (fstatat(fds[i], ".git", &gst, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(gst.st_mode))
			r->git_tops[r->n_git_tops++] = roots[i];
	}
	if (tracked.n) {
		o.keep = keep_tracked;
		o.keep_arg = &tracked;
	}
	rc = scan_run(roots, n_roots, &o, &res, r->err, sizeof(r->err));
	tracked_free(&tracked);
	if (rc < 0) {
		scan_result_free(&res);
		return fail(r, "%s", r->err);
	}
	if (res.overflowed) {
		struct textbuf dirs = {0};

		for (size_t i = 0; i < res.n_unfinished && i < 10; i++)
			tb_printf(&dirs, "%s%s", i ? ", " : "", shown(r, res.unfinished[i]));
		note(r,
		     "warning: the dotfile scan stopped after %llu entries "
		     "(cwd_hidden_scan_max_entries); %zu director%s it did not finish %s hidden "
		     "whole: %s%s; raise cwd_hidden_scan_max_entries or set "
		     "cwd_hidden_scan_overflow: unlimited (or error to refuse the launch)",
		     (unsigned long long)res.visited, res.n_unfinished,
		     res.n_unfinished == 1 ? "y" : "ies", res.n_unfinished == 1 ? "is" : "are",
		     dirs.data ? dirs.data : "", res.n_unfinished > 10 ? ", ..." : "");
		tb_free(&dirs);
		/* Hiding more than a complete scan would, never less. */
		for (size_t i = 0; i < res.n_unfinished; i++) {
			add_mask(r, arena_strdup(r->a, res.unfinished[i]), true,
				 "not scanned (cwd_hidden_scan_max_entries): hidden whole");
			mask_self(r, &res);
		}
	}
	/*
	 * A directory the scan could not list may hold anything: the agent that
	 * made it unreadable could make it readable again.  Hidden whole; a root
	 * that cannot be listed refuses the launch.
	 */
	for (size_t i = 0; i < res.n_unreadable; i++) {
		const char *dir = arena_strdup(r->a, res.unreadable[i]);

		for (size_t k = 0; k < n_roots; k++)
			if (!strcmp(roots[k], dir)) {
				scan_result_free(&res);
				return fail(
				    r,
				    "the dotfile scan cannot list %s (permission denied), so "
				    "it cannot tell what to hide there; make it readable",
				    shown(r, dir));
			}
		note(r,
		     "warning: the dotfile scan cannot list %s (permission denied): hidden whole",
		     shown(r, dir));
		add_mask(r, dir, true, "not readable to the scan: hidden whole");
		mask_self(r, &res);
	}
	for (size_t i = 0; i < res.n_hits; i++) {
		const char *path = arena_strdup(r->a, res.hits[i].path);

		/* Naming a dotfile in a grant is the opt-in for exactly that path. */
		if (granted_explicitly(sb, path))
			continue;
		if (res.hits[i].kind == SCAN_DIR && reexpose_below(r, path) < 0) {
			scan_result_free(&res);
			return -1;
		}
		add_mask(r, path, res.hits[i].kind == SCAN_DIR, "dotfile");
		r->masks[r->n_masks - 1].have_parent = true;
		r->masks[r->n_masks - 1].parent_dev = res.hits[i].dir_dev;
		r->masks[r->n_masks - 1].parent_ino = res.hits[i].dir_ino;
	}
	for (size_t i = 0; i < res.n_all_hidden; i++) {
		const struct scan_hit *h = &res.all_hidden[i];

		if (!coalescible(r, &res, h->path))
			continue;
		add_mask(r, arena_strdup(r->a, h->path), true, MASK_ALL_HIDDEN);
		r->masks[r->n_masks - 1].have_parent = true;
		r->masks[r->n_masks - 1].parent_dev = h->dir_dev;
		r->masks[r->n_masks - 1].parent_ino = h->dir_ino;
		/* Nothing is mounted below it (coalescible()): omnibox-init mounts
		 * its tmpfs on the very directory the scan listed. */
		r->masks[r->n_masks - 1].have_self = true;
		r->masks[r->n_masks - 1].self_dev = h->self_dev;
		r->masks[r->n_masks - 1].self_ino = h->self_ino;
	}
	scan_result_free(&res);
	return 0;
}

/* The outermost writable root PATH lies in, or NULL. */
static const char *
root_of_path(struct rctx *r, const char *path)
{
	const char *best = NULL;

	for (size_t i = 0; i < r->n_roots; i++)
		if (path_within(path, r->roots[i]) && (!best || strlen(r->roots[i]) < strlen(best)))
			best = r->roots[i];
	return best;
}

/*
 * An explicit mask (mask_paths, deny_unix_socket_paths) hides a path, not
 * an inode: an agent that renamed a directory above it would find the
 * secret under the new name at its next launch.  Every directory between
 * the writable root and the masked path is bound onto itself, so inside
 * the sandbox it is a mount point and cannot be renamed or removed.
 */
static int
pin_parents(struct rctx *r, const char *path, struct loc loc)
{
	const char *root = root_of_path(r, path);
	const char *end = path + (root ? strlen(root) : 0);

	if (!root || !r->linux_target)
		return 0;
	while ((end = strchr(end + 1, '/'))) {
		const char *dir = arena_strndup(r->a, path, (size_t)(end - path));
		struct walk_result w;
		bool have = false;

		for (size_t i = 0; i < r->n_pins && !have; i++)
			have = !strcmp(r->pins[i].path, dir);
		if (have)
			continue;
		if (open_checked(r, dir, "mask_paths", loc, 0, &w) < 0)
			return -1;
		if (!w.exists || !w.is_dir || strcmp(w.path, dir)) {
			if (w.fd >= 0)
				close(w.fd);
			return fail_at(r, loc, "mask_paths: %s changed while it was being opened",
				       shown(r, dir));
		}
		keep_fd(r, w.fd);
		*ARENA_PUSH(r->a, r->pins, r->n_pins, r->cap_pins) = (struct bwrap_grant){
		    dir, w.fd, true, true, "mask_paths", loc.line, false, false, NULL};
	}
	return 0;
}

/*
 * mask_paths: hide each path, existing or not.  A missing one is hidden at
 * its first missing component, so nobody can make it appear inside: when
 * the sandbox could create it there, or could see the user create it (a
 * visible directory the user can write), an empty placeholder is made
 * (host.h), masked, and removed after the run.
 */
static int
resolve_mask_paths(struct rctx *r)
{
	struct ir_pathlist *l = &r->plan->policy->os_env.sandbox.mask_paths;

	copy_list(r, l);
	for (size_t i = 0; i < l->n; i++) {
		const char *path = lexical_of(r, &l->v[i], r->plan->workspace);
		const char *reason = arena_printf(r->a, "mask_paths (line %u)", l->v[i].loc.line);
		struct walk_result w;
		bool dir;

		if (open_checked(r, path, "mask_paths", l->v[i].loc,
				 r->linux_target ? WALK_PARENT | WALK_NO_FD : WALK_NO_FD, &w) < 0)
			return -1;
		set_path(r, &l->v[i], w.path);
		if (!r->linux_target)
			continue;
		if (w.exists && !visible_inside(r, w.path) && !paths_linux_shown(w.path)) {
			/* The sandbox does not see it: nothing to hide, and no mount to
			 * check inside (the directory there is not the host's). */
			if (w.parent_fd >= 0)
				close(w.parent_fd);
			continue;
		}
		if (w.exists) {
			add_mask(r, w.path, w.is_dir, reason);
			mask_parent(r, w.parent_fd);
			if (w.parent_fd >= 0)
				close(w.parent_fd);
			if (pin_parents(r, w.path, l->v[i].loc) < 0)
				return -1;
			continue;
		}
		/*
		 * A placeholder where the sandbox could create the entry, or where
		 * it could see one the user creates while it runs (a visible
		 * directory the user can write).
		 */
		if (w.parent_fd < 0 || !(writable_inside(r, path_dirname(r->a, w.missing)) ||
					 (visible_inside(r, path_dirname(r->a, w.missing)) &&
					  faccessat(AT_FDCWD, path_dirname(r->a, w.missing), W_OK,
						    AT_EACCESS) == 0))) {
			/* Nothing can create it where the sandbox would see it. */
			if (w.parent_fd >= 0)
				close(w.parent_fd);
			continue;
		}
		dir = strcmp(w.missing, w.path) != 0;
		if (r->rq->create_placeholders) {
			struct host_entry *e =
			    ARENA_PUSH(r->a, r->plan->placeholders, r->plan->n_placeholders,
				       r->cap_placeholders);

			if (host_placeholder_make(r->a, w.parent_fd, strrchr(w.missing, '/') + 1,
						  w.missing, dir, e) < 0) {
				int err = errno;

				r->plan->n_placeholders--;
				close(w.parent_fd);
				return fail_at(r, l->v[i].loc,
					       "cannot create a placeholder to mask %s: %s",
					       shown(r, w.missing), strerror(err));
			}
		} else {
			close(w.parent_fd);
		}
		add_mask(r, w.missing, dir,
			 arena_printf(r->a, "%s, missing: placeholder %s%s", reason,
				      shown(r, w.missing),
				      r->rq->create_placeholders ? "" : " created at launch"));
		if (r->rq->create_placeholders)
			mask_parent(r, r->plan->placeholders[r->plan->n_placeholders - 1].dirfd);
		if (pin_parents(r, w.missing, l->v[i].loc) < 0)
			return -1;
	}
	return 0;
}

static int
resolve_sockets(struct rctx *r)
{
	struct ir_pathlist *l = &r->plan->policy->os_env.sandbox.deny_unix_socket_paths;

	copy_list(r, l);
	for (size_t i = 0; i < l->n; i++) {
		struct walk_result w;
		const char *path = lexical_of(r, &l->v[i], r->plan->workspace);

		if (open_checked(r, path, "deny_unix_socket_paths", l->v[i].loc, WALK_NO_FD, &w) <
		    0)
			return -1;
		set_path(r, &l->v[i], w.path);
		if (r->linux_target && w.exists && !w.is_dir && visible_inside(r, w.path)) {
			*ARENA_PUSH(r->a, r->sockets, r->n_sockets, r->cap_sockets) = w.path;
			if (pin_parents(r, w.path, l->v[i].loc) < 0)
				return -1;
		}
	}
	return 0;
}

/* Is PATH strictly below a directory mask of the sorted, unique r->masks? */
static bool
inside_dir_mask(struct rctx *r, const char *path)
{
	char *up = arena_strdup(r->a, path), *slash;

	while ((slash = strrchr(up, '/')) && slash != up) {
		struct bwrap_mask key = {.path = up};
		const struct bwrap_mask *m;

		*slash = '\0';
		m = bsearch(&key, r->masks, r->n_masks, sizeof(r->masks[0]), cmp_mask);
		if (m && m->is_dir)
			return true;
	}
	if (slash == up && up[1]) {
		struct bwrap_mask key = {.path = "/"};
		const struct bwrap_mask *m =
		    bsearch(&key, r->masks, r->n_masks, sizeof(r->masks[0]), cmp_mask);

		return m && m->is_dir;
	}
	return false;
}

static void
sort_masks(struct rctx *r)
{
	size_t j = 0;

	if (!r->n_masks)
		return;
	/* One mask per path, a directory's when either is. */
	qsort(r->masks, r->n_masks, sizeof(r->masks[0]), cmp_mask);
	for (size_t i = 0; i < r->n_masks; i++) {
		if (j && !strcmp(r->masks[j - 1].path, r->masks[i].path)) {
			r->masks[j - 1].is_dir |= r->masks[i].is_dir;
			continue;
		}
		r->masks[j++] = r->masks[i];
	}
	r->n_masks = j;
	/*
	 * A mask inside a hidden directory is redundant (each one costs bwrap a
	 * mount), and bwrap could not create its mount point in the read-only
	 * tmpfs.  Byte order does not keep a directory's descendants together
	 * ("d", "d-x", "d/.env"): each ancestor is looked up.
	 */
	{
		bool *drop = arena_alloc(r->a, r->n_masks * sizeof(*drop));

		for (size_t i = 0; i < r->n_masks; i++)
			drop[i] = inside_dir_mask(r, r->masks[i].path);
		j = 0;
		for (size_t i = 0; i < r->n_masks; i++)
			if (!drop[i])
				r->masks[j++] = r->masks[i];
		r->n_masks = j;
	}
	/* A grant re-exposed inside a directory hidden whole stays hidden. */
	for (size_t i = 0, k = 0; i < r->n_reexpose; i++) {
		bool unscanned = false;

		for (size_t m = 0; m < r->n_masks; m++)
			if (r->masks[m].is_dir &&
			    path_within(r->reexpose[i].path, r->masks[m].path) &&
			    strcmp(r->masks[m].reason, "dotfile"))
				unscanned = true;
		if (!unscanned)
			r->reexpose[k++] = r->reexpose[i];
		if (i + 1 == r->n_reexpose)
			r->n_reexpose = k;
	}
}

/* ---- the command ------------------------------------------------------------------ */

/*
 * Make the program at PATH (canonical) visible in the sandbox: nothing to
 * do inside the system directories or a grant; otherwise its own directory
 * is bound read-only, but never "/", a home directory or a parent of one.
 */
static int
make_visible(struct rctx *r, const char *what, const char *path)
{
	const char *dir;

	if (r->linux_target ? paths_linux_system(path) : paths_darwin_system(path))
		return 0;
	if (visible_inside(r, path)) {
		for (size_t i = 0; i < r->n_masks; i++)
			if (path_within(path, r->masks[i].path))
				return fail(r,
					    "%s %s is inside the hidden path %s; name it in "
					    "cwd_allow_hidden (or move the program) to run it",
					    what, shown(r, path), shown(r, r->masks[i].path));
		return 0;
	}
	dir = path_dirname(r->a, path);
	if (too_wide(r, dir))
		return fail(r,
			    "%s %s lives directly in %s; omnibox will not expose that whole "
			    "directory: install the program in a directory of its own",
			    what, shown(r, path), shown(r, dir));
	for (size_t i = 0; i < r->n_command_dirs; i++)
		if (!strcmp(r->command_dirs[i].path, dir))
			return 0;
	{
		struct walk_result w;
		int fd = -1;

		if (r->linux_target) {
			if (open_checked(r, dir, what, nowhere, 0, &w) < 0)
				return -1;
			if (!w.exists || strcmp(w.path, dir)) {
				if (w.fd >= 0)
					close(w.fd);
				return fail(r, "%s %s moved while it was being opened", what,
					    shown(r, path));
			}
			fd = w.fd;
			keep_fd(r, fd);
		}
		*ARENA_PUSH(r->a, r->command_dirs, r->n_command_dirs, r->cap_command_dirs) =
		    (struct bwrap_grant){dir, fd, false, true, what, 0, false, false, NULL};
	}
	return 0;
}

/*
 * The program at PATH where the kernel will find it when it runs it: ".."
 * after the links before it, and no link out of a writable root.  *OUT is
 * its canonical path, as the platform spells it.  -1 when it is no
 * existing file.
 */
static int
program_at(struct rctx *r, const char *what, const char *path, const char **out)
{
	struct walk_result w;

	if (open_checked(r, spell(r, path), what, nowhere, WALK_NO_FD | WALK_PHYSICAL, &w) < 0)
		return -1;
	if (r->linux_target && (!w.exists || w.is_dir))
		return fail(r, "%s %s does not exist", what, shown(r, path));
	*out = spell(r, w.path);
	return 0;
}

static bool masked(struct rctx *r, const char *path);

/* A PATH entry the sandbox shows as it is here: a system directory, or
 * within a grant and under no mask (launch_find_command()). */
static bool
path_entry_seen(void *arg, const char *dir)
{
	struct rctx *r = arg;
	const char *real = walk_canonical(r->a, dir);

	if (!real)
		return false;
	if (r->linux_target ? paths_linux_system(real) : paths_darwin_system(real))
		return true;
	return (visible_inside(r, dir) || visible_inside(r, real)) && !masked(r, real);
}

/*
 * A script's interpreter must be visible too ("#!/usr/bin/env node"
 * included).  A script the sandbox can write holds the agent's #! line,
 * which the kernel reads again at exec: it decides nothing here, and its
 * interpreter runs only if the sandbox sees it already.
 */
static int
resolve_interpreter(struct rctx *r, const char *script, const char *script_canon)
{
	const char *interp, *canon;

	if (launch_script_interpreter(r->a, r->rq->environ, &(struct path_seen){path_entry_seen, r},
				      script, &interp, r->err, sizeof(r->err)) < 0)
		return fail(r, "%s", r->err);
	if (!interp)
		return 0;
	if (program_at(r, "the interpreter", interp, &canon) < 0)
		return -1;
	if (writable_inside(r, script_canon) &&
	    !(r->linux_target ? paths_linux_system(canon) : paths_darwin_system(canon)) &&
	    !visible_inside(r, canon))
		return fail(r,
			    "the script %s lies in a directory the sandbox can write, so its #! "
			    "line is the agent's: its interpreter %s is not visible in the "
			    "sandbox, and omnibox will not make it so; add its directory to "
			    "read_paths if the agent may run it",
			    shown(r, script_canon), shown(r, canon));
	return make_visible(r, "the interpreter", canon);
}

static int
resolve_command(struct rctx *r)
{
	const struct launch_request *rq = r->rq;
	const struct terminal *t = r->plan->policy->terminal;
	char **argv = NULL;
	size_t n = 0, cap = 0;
	const char *name, *found;
	struct loc at = nowhere; /* a terminal's command is written in the policy */

	if (rq->n_relay_argv) {
		const char *relay;

		if (rq->relay_argv[0][0] != '/')
			return fail(r, "the relay must be given by absolute path");
		if (program_at(r, "the relay", rq->relay_argv[0], &relay) < 0 ||
		    make_visible(r, "the relay", relay) < 0)
			return -1;
		for (size_t i = 0; i < rq->n_relay_argv; i++)
			*ARENA_PUSH(r->a, argv, n, cap) = arena_strdup(r->a, rq->relay_argv[i]);
	}
	if (rq->command && rq->n_command) {
		name = rq->command[0];
		for (size_t i = 0; i < rq->n_command; i++)
			*ARENA_PUSH(r->a, argv, n, cap) = arena_strdup(r->a, rq->command[i]);
	} else if (t) {
		name = t->command.s;
		at = t->command.loc;
		*ARENA_PUSH(r->a, argv, n, cap) = arena_strdup(r->a, t->command.s);
		for (size_t i = 0; i < t->args.n; i++)
			*ARENA_PUSH(r->a, argv, n, cap) = arena_strdup(r->a, t->args.v[i].s);
	} else if (rq->command_optional) {
		*ARENA_PUSH(r->a, argv, n, cap) = arena_strdup(r->a, "{COMMAND}");
		r->plan->argc = n;
		*ARENA_PUSH(r->a, argv, n, cap) = NULL;
		r->plan->argv = argv;
		r->plan->exec_path = "{EXEC}";
		return 0;
	} else {
		return fail(r, "no command: give one after '--', or a terminal with --terminal");
	}
	r->plan->argc = n;
	*ARENA_PUSH(r->a, argv, n, cap) = NULL;
	r->plan->argv = argv;
	if (strchr(name, '/'))
		found = name[0] == '/' ? name : path_join(r->a, r->plan->start_dir, name);
	else
		found = launch_find_command(r->a, rq->environ, name,
					    &(struct path_seen){path_entry_seen, r});
	if (!found || access(found, X_OK) < 0) {
		if (!rq->command_optional)
			return fail_at(r, at, "command '%s' not found%s", shown(r, name),
				       strchr(name, '/') ? "" : " on PATH");
		/* Described, not run: say what the launch would do. */
		note(r, "command '%s' is not found%s here: omnibox-run would refuse this launch",
		     shown(r, name), strchr(name, '/') ? "" : " on PATH");
		r->plan->exec_path = "{EXEC}";
		return 0;
	}
	if (program_at(r, "the command", found, &r->plan->exec_path) < 0 ||
	    make_visible(r, "the command", r->plan->exec_path) < 0)
		return -1;
	return resolve_interpreter(r, found, r->plan->exec_path);
}

/* ---- environment ------------------------------------------------------------------ */

static void
build_env(struct rctx *r)
{
	struct launch_env e = {
	    .scratch = r->plan->scratch,
	    .pwd = r->plan->start_dir,
	    .extra = r->rq->extra_env,
	    .n_extra = r->rq->n_extra_env,
	    .linux = r->linux_target,
	};

	if (r->rq->landlock && r->private_home)
		e.home = arena_printf(r->a, "%s/%s", r->plan->scratch, BWRAP_PRIVATE_HOME);
	if (r->plan->policy->os_env.sandbox.n_egress)
		e.proxy_url = arena_printf(r->a, "http://127.0.0.1:%s",
					   r->rq->proxy_port ? r->rq->proxy_port : "{PORT}");
	r->plan->env = launch_env_build(r->a, r->plan->policy, r->rq->environ, &e);
}

/* ---- protected paths (Linux) ---------------------------------------------------------- */

/* Is PATH hidden by a mask already (and so read-only, and more)? */
static bool
masked(struct rctx *r, const char *path)
{
	for (size_t i = 0; i < r->n_masks; i++)
		if (r->masks[i].is_dir ? path_within(path, r->masks[i].path)
				       : !strcmp(path, r->masks[i].path))
			return true;
	return false;
}

static void
add_protect(struct rctx *r, const char *path, int fd, bool writable, const char *why, uint32_t line)
{
	for (size_t i = 0; i < r->n_protects; i++)
		if (!strcmp(r->protects[i].path, path)) {
			close(fd);
			return;
		}
	keep_fd(r, fd);
	*ARENA_PUSH(r->a, r->protects, r->n_protects, r->cap_protects) =
	    (struct bwrap_grant){path, fd, writable, true, why, line, false, false, NULL};
}

/*
 * Is PATH read-only already, below a protected path?  The deepest one
 * decides: a git directory inside .git/modules is bound writable again
 * over the read-only .git/modules, and its own entries still need theirs.
 */
static bool
covered(struct rctx *r, const char *path)
{
	const struct bwrap_grant *deepest = NULL;

	for (size_t i = 0; i < r->n_protects; i++)
		if (path_within(path, r->protects[i].path) &&
		    (!deepest || strlen(r->protects[i].path) > strlen(deepest->path)))
			deepest = &r->protects[i];
	return deepest && !deepest->writable;
}

static void protect_one(void *arg, const struct protect_entry *e);
static void protect_gitdir(struct rctx *r, const char *gitdir);

/* Where the protect_paths entry of E is written; nowhere for a default. */
static struct loc
protect_loc(struct rctx *r, const struct protect_entry *e)
{
	return loc_on_line(&r->plan->policy->os_env.sandbox.protect_paths, e->line, e->path);
}

/*
 * A directory of git directories (.git/modules, .git/worktrees), bound
 * read-only at DIR (descriptor FD): no new one can appear.  Each one that
 * exists is bound writable again onto itself, with its own git entries.
 */
static void
protect_gitdirs(struct rctx *r, const char *dir, int fd)
{
	int lfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = lfd >= 0 ? fdopendir(lfd) : NULL;
	struct dirent *e;

	if (!d) {
		if (lfd >= 0)
			close(lfd);
		r->protect_rc = fail(r, "cannot list %s to protect the git directories in it: %s",
				     dir, strerror(errno));
		return;
	}
	while (r->protect_rc == 0 && (e = readdir(d))) {
		const char *kid = arena_printf(r->a, "%s/%s", dir, e->d_name);
		struct walk_result w;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (e->d_type == DT_LNK) {
			/* git follows it: what it names must be guarded where it lies. */
			const char *to = walk_canonical(r->a, kid);

			if (to && writable_inside(r, to))
				protect_gitdir(r, to);
			continue;
		}
		if (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN)
			continue;
		if (open_checked(r, kid, "a git directory", nowhere, 0, &w) < 0) {
			r->protect_rc = -1;
			break;
		}
		if (!w.exists || !w.is_dir || strcmp(w.path, kid)) {
			if (w.fd >= 0)
				close(w.fd);
			continue;
		}
		add_protect(r, kid, w.fd, true, "a git directory inside, writable", 0);
		protect_gitdir(r, kid);
	}
	closedir(d);
}

/* A missing protected PATH: hold it with a placeholder (hold.h), bound read-only. */
static void
protect_missing(struct rctx *r, const struct protect_entry *e, const char *reason,
		struct walk_result *w)
{
	const char *at = w->missing;
	bool file = e->hold == PROTECT_HOLD_FILE && !strcmp(at, e->path);
	struct host_entry *h;
	struct stat st;
	int fd, made;

	if (masked(r, at)) {
		close(w->parent_fd);
		return;
	}
	if (!r->rq->create_placeholders) {
		close(w->parent_fd);
		add_protect(
		    r, at, -1, false,
		    arena_printf(r->a, "%s; missing: placeholder %s made at launch", reason, at),
		    e->line);
		if (file)
			r->protects[r->n_protects - 1].hold_text = e->text;
		r->protect_rc = pin_parents(r, at, protect_loc(r, e));
		return;
	}
	h = ARENA_PUSH(r->a, r->plan->placeholders, r->plan->n_placeholders, r->cap_placeholders);
	/* A directory, unless the entry itself is missing and its tools read a
	 * file there (file placeholders hold what reads as no file at all). */
	made = file
		   ? host_placeholder_file(r->a, w->parent_fd, strrchr(at, '/') + 1, at, e->text, h)
		   : host_placeholder_make(r->a, w->parent_fd, strrchr(at, '/') + 1, at, true, h);
	if (made < 0) {
		int err = errno;

		r->plan->n_placeholders--;
		close(w->parent_fd);
		r->protect_rc =
		    fail_at(r, protect_loc(r, e), "cannot create a placeholder to protect %s: %s",
			    at, strerror(err));
		return;
	}
	/* Listable, so tools inside see an empty directory, not an error. */
	if (!file && fchmodat(h->dirfd, h->name, 0555, 0) < 0) {
		r->protect_rc =
		    fail_at(r, protect_loc(r, e), "cannot set up the placeholder %s: %s", at,
			    strerror(errno));
		return;
	}
	fd = openat(h->dirfd, h->name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0 || st.st_dev != h->dev || st.st_ino != h->ino) {
		if (fd >= 0)
			close(fd);
		r->protect_rc = fail_at(r, protect_loc(r, e),
					"the placeholder %s changed while it was made", at);
		return;
	}
	add_protect(r, at, fd, false, arena_printf(r->a, "%s; missing: placeholder %s", reason, at),
		    e->line);
	if (file)
		r->protects[r->n_protects - 1].hold_text = e->text;
	r->protect_rc = pin_parents(r, at, protect_loc(r, e));
}

/*
 * One protected path: an existing one is bound read-only onto itself; a
 * missing one is held (protect_missing()), unless its entry protects it
 * only where it exists.  Either way the directories between the writable
 * root and it are pinned: renaming .git away and making a new one fails.
 */
static void
protect_one(void *arg, const struct protect_entry *e)
{
	struct rctx *r = arg;
	const char *path = e->path;
	const char *reason = e->line ? arena_printf(r->a, "protect_paths (line %u)", e->line)
				     : arena_printf(r->a, "protected: %s", e->why);
	struct walk_result w;

	if (r->protect_rc < 0 || masked(r, path) || covered(r, path))
		return;
	if (r->collect_only) {
		/* Seatbelt matches names, existing or not; a directory of git
		 * directories stays writable (the check after the run covers it). */
		if (e->hold != PROTECT_HOLD_GITDIRS)
			*ARENA_PUSH(r->a, r->plan->protected, r->plan->n_protected,
				    r->cap_protected) = arena_strdup(r->a, path);
		return;
	}
	if (open_checked(r, path, "a protected path", protect_loc(r, e), WALK_PARENT, &w) < 0) {
		r->protect_rc = -1;
		return;
	}
	if (w.through_link) {
		/* The link lies in a writable root: the sandbox could point it
		 * elsewhere while it runs, and the host's tools follow it. */
		if (w.fd >= 0)
			close(w.fd);
		if (w.parent_fd >= 0)
			close(w.parent_fd);
		r->protect_rc =
		    fail_at(r, protect_loc(r, e),
			    "%s is protected (%s) but reached through a symbolic link "
			    "the sandbox could replace (it resolves to %s); replace the link "
			    "with what it names, or name the entry in unprotect_paths",
			    path, e->why, w.path);
		return;
	}
	if (w.exists) {
		if (w.parent_fd >= 0)
			close(w.parent_fd);
		if (strcmp(w.path, path) || !writable_inside(r, w.path)) {
			/* Reached through a link: what it names is protected where it lives,
			 * or lies outside every writable root. */
			close(w.fd);
			return;
		}
		add_protect(r, w.path, w.fd, false, reason, e->line);
		r->protect_rc = pin_parents(r, w.path, protect_loc(r, e));
		if (r->protect_rc == 0 && e->hold == PROTECT_HOLD_GITDIRS && w.is_dir)
			protect_gitdirs(r, w.path, w.fd);
		return;
	}
	if (w.parent_fd < 0 || !writable_inside(r, path_dirname(r->a, w.missing))) {
		/* .git is a file (a worktree's pointer), or the parent is outside. */
		const char *holder = w.missing ? path_dirname(r->a, w.missing) : NULL;

		if (w.parent_fd >= 0)
			close(w.parent_fd);
		if (holder && writable_inside(r, holder) && strcmp(holder, path) &&
		    !masked(r, holder)) {
			struct protect_entry h = {holder,	    false, e->why, e->line,
						  PROTECT_HOLD_DIR, NULL};

			protect_one(r, &h);
		}
		return;
	}
	if (e->hold == PROTECT_HOLD_NONE) {
		close(w.parent_fd);
		return;
	}
	protect_missing(r, e, reason, &w);
}

static void
protect_config_path(void *arg, const char *path, enum protect_git_var kind)
{
	struct rctx *r = arg;
	static const char *const why[] = {
	    [PROTECT_GIT_INCLUDE] = "git reads it as configuration (include.path)",
	    [PROTECT_GIT_HOOKS] = "git runs the hooks in it (core.hooksPath, init.templateDir)",
	    [PROTECT_GIT_READ] = "git reads it to choose its filters (core.attributesFile)",
	    [PROTECT_GIT_RUN] = "git runs it (a command of the host's git configuration)",
	};
	const char *canon = walk_canonical(r->a, path);
	struct protect_entry e = {path,
				  kind == PROTECT_GIT_HOOKS,
				  why[kind],
				  0,
				  kind == PROTECT_GIT_HOOKS ? PROTECT_HOLD_DIR : PROTECT_HOLD_FILE,
				  ""};

	/* Where it really lies: a path spelled through a link protects its target. */
	if (canon)
		e.path = canon;
	if (writable_inside(r, e.path))
		protect_one(r, &e);
}

/*
 * What the host's git configuration for the repository with work tree
 * WORKTREE (NULL: none) and git directory GITDIR names in the writable
 * roots: hooksPath, included files, ... (protect_git_variable()).
 */
static void
protect_config(struct rctx *r, const char *worktree, const char *gitdir)
{
	const char *xdg = env_lookup(r->rq->environ, "XDG_CONFIG_HOME");
	const char *common = gitdir;
	const char *files[6];
	struct walk_result w;

	if (walk_open(r->a, arena_printf(r->a, "%s/commondir", gitdir), r->roots, r->n_roots, 0,
		      &w) == 0 &&
	    w.exists && !w.is_dir) {
		const char *c = gitguard_commondir(r->a, w.fd, gitdir);

		if (c)
			common = c;
	}
	if (w.fd >= 0)
		close(w.fd);
	files[0] = "/etc/gitconfig";
	files[1] = xdg && xdg[0] == '/'
		       ? arena_printf(r->a, "%s/git/config", xdg)
		       : arena_printf(r->a, "%s/.config/git/config", r->plan->home);
	files[2] = arena_printf(r->a, "%s/.gitconfig", r->plan->home);
	files[3] = env_lookup(r->rq->environ, "GIT_CONFIG_GLOBAL");
	files[4] = arena_printf(r->a, "%s/config", common);
	files[5] = arena_printf(r->a, "%s/config.worktree", gitdir);
	gitguard_config_paths(r->a, files, 6, worktree, r->plan->home, r->roots, r->n_roots,
			      protect_config_path, r);
}

/* More git directories than this in the writable roots refuse the launch. */
#define GITDIRS_MAX 256

/* The git entries of GITDIR, a git directory inside a writable root. */
static void
protect_gitdir(struct rctx *r, const char *gitdir)
{
	if (r->protect_rc < 0)
		return;
	if (++r->n_gitdirs > GITDIRS_MAX) {
		r->protect_rc = fail(r,
				     "the writable roots hold more than %d git directories; each "
				     "one's hooks and config must be protected: grant narrower "
				     "write_paths",
				     GITDIRS_MAX);
		return;
	}
	protect_each_gitdir(&r->plan->policy->os_env.sandbox, gitdir, protect_one, r);
}

/*
 * A .git file at PATH (FD): it is protected itself, and the git directory
 * it names, with the common directory that one names, is guarded where it
 * lies in a writable root.
 */
static void
protect_gitfile(struct rctx *r, const char *path)
{
	struct protect_entry self = {
	    path, false, "git takes its git directory from it", 0, PROTECT_HOLD_NONE, NULL};
	struct walk_result w;
	const char *target = NULL, *canon;

	protect_one(r, &self);
	if (r->protect_rc < 0)
		return;
	if (walk_open(r->a, path, r->roots, r->n_roots, 0, &w) == 0 && w.exists && !w.is_dir)
		target = gitguard_gitfile_target(r->a, w.fd, path_dirname(r->a, path));
	if (w.fd >= 0)
		close(w.fd);
	if (!target || !(canon = walk_canonical(r->a, target)))
		return;
	protect_config(r, path_dirname(r->a, path), canon);
	if (!writable_inside(r, canon))
		return;
	protect_gitdir(r, canon);
	if (r->protect_rc == 0 &&
	    walk_open(r->a, arena_printf(r->a, "%s/commondir", canon), r->roots, r->n_roots, 0,
		      &w) == 0 &&
	    w.exists && !w.is_dir) {
		const char *common = gitguard_commondir(r->a, w.fd, canon);

		/* A linked worktree's: config and hooks come from there. */
		if (common && (common = walk_canonical(r->a, common)) && writable_inside(r, common))
			protect_gitdir(r, common);
	}
	if (w.fd >= 0)
		close(w.fd);
}

static void
protect_path(struct rctx *r, const char *path, bool dir, const char *why)
{
	struct protect_entry e = {path, dir, why, 0, PROTECT_HOLD_DIR, NULL};

	protect_one(r, &e);
}

static int
cmp_cstr(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The masked directories, sorted, each with its device and inode now: what
 * the sandbox cannot reach, and so what neither walk for repositories
 * enters (while it is that directory). */
static void
masked_dirs(struct rctx *r, struct gitguard_prune *out)
{
	size_t n = 0;

	out->paths = arena_alloc(r->a, (r->n_masks + 1) * sizeof(*out->paths));
	for (size_t i = 0; i < r->n_masks; i++)
		if (r->masks[i].is_dir)
			out->paths[n++] = r->masks[i].path;
	qsort(out->paths, n, sizeof(*out->paths), cmp_cstr);
	out->ids = arena_alloc(r->a, (n + 1) * sizeof(*out->ids));
	out->n = 0;
	for (size_t i = 0; i < n; i++) {
		struct stat st;

		/* One missing now (a placeholder not made: --dry-run) is walked. */
		if (lstat(out->paths[i], &st) < 0 || !S_ISDIR(st.st_mode))
			continue;
		out->paths[out->n] = out->paths[i];
		out->ids[out->n][0] = (unsigned long long)st.st_dev;
		out->ids[out->n][1] = (unsigned long long)st.st_ino;
		out->n++;
	}
}

/* Every repository in the writable ROOTS now, kept for the check after
 * the run, into *FOUND.  0, or -1 with the message. */
static int
find_repositories(struct rctx *r, const char *const *roots, size_t n, struct gitguard_entry **found,
		  size_t *n_found)
{
	masked_dirs(r, &r->plan->git_prune);
	if (gitguard_find(r->a, roots, n, &r->plan->git_prune, found, n_found, r->err,
			  sizeof(r->err)) < 0)
		return fail(r, "%s", r->err);
	r->plan->gits = *found;
	r->plan->n_gits = *n_found;
	return 0;
}

/* The writable roots but the scratch dir, into ROOTS (room for all); their count. */
static size_t
writable_roots(struct rctx *r, const char **roots)
{
	size_t n = 0;

	for (size_t i = 0; i < r->n_roots; i++)
		if (strcmp(r->roots[i], r->plan->scratch))
			roots[n++] = r->roots[i];
	return n;
}

/*
 * Every git directory in the writable ROOTS: each .git found (gitguard.h)
 * is guarded where it is a directory or a .git file, refused where it is a
 * symbolic link the sandbox could re-point.
 */
static void
protect_repositories(struct rctx *r, const char *const *roots, size_t n)
{
	size_t n_found;
	struct gitguard_entry *found;

	if (find_repositories(r, roots, n, &found, &n_found) < 0) {
		r->protect_rc = -1;
		return;
	}
	for (size_t i = 0; i < n_found && r->protect_rc == 0; i++) {
		const char *path = found[i].path;

		if (masked(r, path))
			continue;
		if (found[i].kind == SCAN_LINK)
			r->protect_rc =
			    fail(r,
				 "%s is a symbolic link in a writable root: the sandbox "
				 "could point it at a repository of its making, which "
				 "git on this machine would obey; replace it with what "
				 "it names",
				 shown(r, path));
		else if (found[i].kind == SCAN_FILE)
			protect_gitfile(r, path);
		else if (found[i].kind == SCAN_DIR) {
			protect_gitdir(r, path);
			protect_config(r, path_dirname(r->a, path), path);
		} else if (found[i].kind == SCAN_GITDIR) {
			/* A bare repository (or one whose config names its work tree). */
			protect_gitdir(r, path);
			protect_config(r, NULL, path);
		}
	}
}

/*
 * DIR holds a profile set of `omnibox-compile --target=all -o DIR` (it has a
 * policy.ir.json): protect it whole (WHOLE), or only the set's own files
 * when DIR is the policy's own directory.
 */
static void
protect_profile_dir(struct rctx *r, const char *dir, bool whole)
{
	static const char *const parts[] = {"policy.ir.json", "egress.rules", "linux",
					    "darwin",	      "windows",      NULL};
	struct stat st;

	if (fstatat(AT_FDCWD, arena_printf(r->a, "%s/policy.ir.json", dir), &st,
		    AT_SYMLINK_NOFOLLOW) < 0 ||
	    !S_ISREG(st.st_mode))
		return;
	if (whole) {
		protect_path(r, dir, true, "the committed profiles");
		return;
	}
	for (size_t i = 0; parts[i] && r->protect_rc == 0; i++) {
		const char *p = arena_printf(r->a, "%s/%s", dir, parts[i]);

		if (fstatat(AT_FDCWD, p, &st, AT_SYMLINK_NOFOLLOW) == 0)
			protect_path(r, p, S_ISDIR(st.st_mode), "the committed profiles");
	}
}

/*
 * The committed profiles: a profile set in the policy's directory or in
 * one of its subdirectories (found by its policy.ir.json), while they lie
 * in a writable root.
 */
static void
protect_profiles(struct rctx *r, const char *dir)
{
	DIR *d;
	struct dirent *e;

	if (!writable_inside(r, dir))
		return;
	protect_profile_dir(r, dir, false);
	if (!(d = opendir(dir)))
		return;
	while (r->protect_rc == 0 && (e = readdir(d)))
		if (e->d_type == DT_DIR && strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			protect_profile_dir(r, arena_printf(r->a, "%s/%s", dir, e->d_name), true);
	closedir(d);
}

static int
resolve_protected(struct rctx *r)
{
	struct sandbox *sb = &r->plan->policy->os_env.sandbox;
	const char **roots = arena_alloc(r->a, (r->n_roots + 1) * sizeof(*roots));
	size_t n = 0;

	copy_list(r, &sb->protect_paths);
	for (size_t i = 0; i < sb->protect_paths.n; i++) {
		const char *lexical = lexical_of(r, &sb->protect_paths.v[i], r->plan->workspace);
		const char *canon = walk_canonical(r->a, lexical);

		set_path(r, &sb->protect_paths.v[i], canon ? canon : lexical);
	}
	n = writable_roots(r, roots);
	r->protect_rc = 0;
	protect_each(sb, roots, n, r->plan->home, protect_one, r);
	if (r->protect_rc == 0)
		protect_repositories(r, roots, n);
	/* The policy file itself, when the sandbox could otherwise rewrite it,
	 * and the profiles committed next to it. */
	if (r->protect_rc == 0 && r->rq->policy_file) {
		const char *canon = walk_canonical(r->a, r->rq->policy_file);

		if (canon && writable_inside(r, canon)) {
			protect_path(r, canon, false, "the policy file");
			protect_profiles(r, path_dirname(r->a, canon));
		}
	}
	return r->protect_rc;
}

/* ---- the whole launch -------------------------------------------------------------- */
/* ---- write_files: a private directory each (writeback.h) --------------------------- */

/* A directory the sandbox sees with more entries than this keeps its
 * write_files bound on their own (each entry would be one more mount). */
#define WRITEBACK_MAX_ENTRIES 256

static const char *
base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* Is DIR shown read-only by a grant of its own or one above it? */
static bool
shown_read_only(struct rctx *r, const char *dir)
{
	for (size_t i = 0; i < r->n_grants; i++)
		if (!r->grants[i].writable && path_within(dir, r->grants[i].path))
			return true;
	return false;
}

static bool
hidden_by_mask(struct rctx *r, const char *dir)
{
	for (size_t i = 0; i < r->n_masks; i++)
		if (path_within(dir, r->masks[i].path))
			return true;
	return false;
}

static bool
grant_at(struct rctx *r, const char *path)
{
	for (size_t i = 0; i < r->n_grants; i++)
		if (r->grants[i].path && !strcmp(r->grants[i].path, path))
			return true;
	return false;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The entries of the directory HOST (O_PATH) but the granted names; NULL
 * (and *N past the limit) when there are too many. */
static const char **
list_entries(struct rctx *r, int host, const char *const *skip, size_t n_skip, size_t *n)
{
	const char **v = arena_alloc(r->a, (WRITEBACK_MAX_ENTRIES + 1) * sizeof(*v));
	int fd = openat(host, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;

	*n = 0;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	while ((e = readdir(d))) {
		bool granted = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");

		for (size_t i = 0; i < n_skip && !granted; i++)
			granted = !strcmp(e->d_name, skip[i]);
		if (granted)
			continue;
		if (*n == WRITEBACK_MAX_ENTRIES) {
			(*n)++;
			closedir(d);
			return NULL;
		}
		v[(*n)++] = arena_strdup(r->a, e->d_name);
	}
	closedir(d);
	qsort(v, *n, sizeof(*v), cmp_str);
	return v;
}

/*
 * The write_files grants MEMBERS (indices into the grants, all in DIR)
 * become one: the private directory K bound at DIR, holding a copy of each
 * and, when the policy shows DIR, its other entries read-only (links
 * recreated).  Entries the sandbox saw there keep their masks.
 */
/*
 * The private directory K of DIR (open as DIRFD, mode of ST) made in the
 * scratch dir: a copy of each member (NAMES), the directory's links made
 * again, its mode.  *PRIV_PATH: an O_PATH descriptor on it, kept.  0, or -1.
 */
static int
private_dir_fill(struct rctx *r, const char *dir, int dirfd, const struct stat *st,
		 const char **names, const size_t *members, size_t n_members, const char **entries,
		 size_t n_entries, size_t k, int *priv_path)
{
	char sub[32];
	int scratch, wbdir, priv = -1;
	struct walk_result w = {.fd = dirfd};

	snprintf(sub, sizeof(sub), "%zu", k);
	scratch = open(r->plan->scratch, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (scratch < 0 || (mkdirat(scratch, WRITEBACK_DIR, 0700) < 0 && errno != EEXIST) ||
	    (wbdir = openat(scratch, WRITEBACK_DIR,
			    O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		int e = errno;

		if (scratch >= 0)
			close(scratch);
		return fail(r, "cannot make %s/%s: %s", shown(r, r->plan->scratch), WRITEBACK_DIR,
			    strerror(e));
	}
	close(scratch);
	if (mkdirat(wbdir, sub, 0700) < 0 ||
	    (priv = openat(wbdir, sub, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
	    (*priv_path = openat(wbdir, sub, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		int e = errno;

		if (priv >= 0)
			close(priv);
		close(wbdir);
		return fail(r, "cannot make %s/%s/%s: %s", shown(r, r->plan->scratch),
			    WRITEBACK_DIR, sub, strerror(e));
	}
	close(wbdir);
	keep_fd(r, *priv_path);
	for (size_t i = 0; i < n_members; i++) {
		const struct bwrap_grant *g = &r->grants[members[i]];
		struct writeback *wb =
		    ARENA_PUSH(r->a, r->plan->writebacks, r->plan->n_writebacks, r->cap_writebacks);

		wb->path = g->path;
		wb->name = names[i];
		wb->host_fd = fcntl(g->fd, F_DUPFD_CLOEXEC, 3);
		wb->dir_fd = fcntl(priv, F_DUPFD_CLOEXEC, 3);
		if (wb->host_fd < 0 || wb->dir_fd < 0 ||
		    writeback_copy_in(wb, r->err, sizeof(r->err)) < 0) {
			if (wb->host_fd < 0 || wb->dir_fd < 0)
				fail(r, "cannot duplicate a descriptor: %s", strerror(errno));
			else
				fail(r, "%s", r->err);
			close(priv);
			return -1;
		}
	}
	/* Links are the directory's own: made again, pointing where they did. */
	for (size_t i = 0; i < n_entries; i++) {
		char target[PATH_MAX];
		ssize_t len;
		struct stat est;

		if (fstatat(w.fd, entries[i], &est, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISLNK(est.st_mode))
			continue;
		len = readlinkat(w.fd, entries[i], target, sizeof(target) - 1);
		if (len < 0)
			continue;
		target[len] = '\0';
		if (symlinkat(target, priv, entries[i]) < 0) {
			close(priv);
			return fail(r, "cannot make the link %s/%s in the scratch dir: %s",
				    shown(r, dir), shown(r, entries[i]), strerror(errno));
		}
	}
	/* Inside, the directory is the copy's: it looks like the host's. */
	if (fchmod(priv, st->st_mode & 0777) < 0) {
		close(priv);
		return fail(r, "cannot set the mode of the private directory: %s", strerror(errno));
	}
	close(priv);
	return 0;
}

/*
 * The mounts of the private directory K of DIR (DIRFD): the first member's
 * grant becomes it (PRIV_PATH, -1 when only described), the other members
 * go, the directory's other entries are bound read-only, and the masks
 * that must find their parent find the private one.
 */
static void
private_dir_mount(struct rctx *r, const char *dir, int dirfd, const size_t *members,
		  size_t n_members, const char **entries, size_t n_entries, size_t k, int priv_path,
		  uint32_t line)
{
	struct walk_result w = {.fd = dirfd};
	struct stat st;

	/* The first member becomes the directory's mount, the others go. */
	r->grants[members[0]] = (struct bwrap_grant){
	    dir,
	    priv_path,
	    true,
	    false,
	    arena_printf(r->a,
			 "write_files: a private directory (%s/%s/%zu) at the file's directory, "
			 "holding a copy written back to the host file when closed",
			 shown(r, r->plan->scratch), WRITEBACK_DIR, k),
	    line,
	    false,
	    true,
	    NULL};
	for (size_t i = 1; i < n_members; i++)
		r->grants[members[i]].path = NULL;
	for (size_t i = 0; i < n_entries; i++) {
		const char *path = path_join(r->a, dir, entries[i]);
		struct stat est;
		int fd;

		if (grant_at(r, path) || fstatat(w.fd, entries[i], &est, AT_SYMLINK_NOFOLLOW) < 0 ||
		    S_ISLNK(est.st_mode) || S_ISCHR(est.st_mode) || S_ISBLK(est.st_mode))
			continue;
		fd = openat(w.fd, entries[i], O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (!r->rq->create_placeholders) {
			close(fd);
			fd = -1;
		}
		add_grant(r, path, fd, false, false,
			  "write_files: the directory's other entries, read-only, as the policy "
			  "shows them",
			  line);
	}
	/* A mask the sandbox must find in this directory finds the private one. */
	for (size_t i = 0; i < r->n_masks; i++) {
		struct bwrap_mask *m = &r->masks[i];

		if (m->have_parent && !strcmp(path_dirname(r->a, m->path), dir)) {
			if (priv_path >= 0 && fstat(priv_path, &st) == 0) {
				m->parent_dev = (unsigned long long)st.st_dev;
				m->parent_ino = (unsigned long long)st.st_ino;
			} else {
				m->have_parent = false;
			}
		}
	}
}

static int
private_dir(struct rctx *r, const char *dir, const size_t *members, size_t n_members, size_t k)
{
	const struct bwrap_grant *first = &r->grants[members[0]];
	uint32_t line = first->line;
	struct loc loc =
	    loc_on_line(&r->plan->policy->os_env.sandbox.write_files, line, first->path);
	const char **names = arena_alloc(r->a, n_members * sizeof(*names));
	const char **entries = NULL;
	size_t n_entries = 0;
	struct walk_result w;
	int priv_path = -1;
	struct stat st;

	if (open_checked(r, dir, "write_files", loc, 0, &w) < 0)
		return -1;
	if (!w.exists || !w.is_dir || strcmp(w.path, dir)) {
		if (w.fd >= 0)
			close(w.fd);
		return fail_at(r, loc, "write_files: %s changed while it was being opened",
			       shown(r, dir));
	}
	for (size_t i = 0; i < n_members; i++) {
		const struct bwrap_grant *g = &r->grants[members[i]];
		struct stat in_dir, own;

		names[i] = base_name(g->path);
		if (fstatat(w.fd, names[i], &in_dir, AT_SYMLINK_NOFOLLOW) < 0 ||
		    fstat(g->fd, &own) < 0 || in_dir.st_dev != own.st_dev ||
		    in_dir.st_ino != own.st_ino) {
			close(w.fd);
			return fail_at(r,
				       loc_on_line(&r->plan->policy->os_env.sandbox.write_files,
						   g->line, g->path),
				       "write_files %s changed while it was being opened",
				       shown(r, g->path));
		}
	}
	if (shown_read_only(r, dir)) {
		entries = list_entries(r, w.fd, names, n_members, &n_entries);
		if (!entries) {
			close(w.fd);
			note(r,
			     "write_files (line %u): %s is bound on its own, so it can be written "
			     "in place but not replaced by a rename: its directory %s has %s "
			     "entries the sandbox sees",
			     line, shown(r, first->path), shown(r, dir),
			     n_entries > WRITEBACK_MAX_ENTRIES ? "more than 256" : "unlistable");
			return 0;
		}
	}
	if (fstat(w.fd, &st) < 0) {
		close(w.fd);
		return fail(r, "cannot stat %s: %s", shown(r, dir), strerror(errno));
	}

	/* Described only: the same mounts, made at launch. */
	if (!r->rq->create_placeholders) {
		priv_path = -1;
		goto grants;
	}
	if (private_dir_fill(r, dir, w.fd, &st, names, members, n_members, entries, n_entries, k,
			     &priv_path) < 0) {
		close(w.fd);
		return -1;
	}
grants:
	private_dir_mount(r, dir, w.fd, members, n_members, entries, n_entries, k, priv_path, line);
	close(w.fd);
	return 0;
}

/* The grant DIR is seen through: the deepest one it lies in, or NULL. */
static const struct bwrap_grant *
grant_of(struct rctx *r, const char *dir)
{
	const struct bwrap_grant *best = NULL;

	for (size_t i = 0; i < r->n_grants; i++) {
		const struct bwrap_grant *g = &r->grants[i];
		size_t len;

		if (!g->path || !path_within(dir, g->path))
			continue;
		len = strlen(g->path);
		if (!best || len > strlen(best->path) ||
		    (len == strlen(best->path) && g->writable && !best->writable))
			best = g;
	}
	return best;
}

/* Why the write_files grant G keeps a mount of its own, or NULL. */
static const char *
own_bind_reason(struct rctx *r, const struct bwrap_grant *g, const char *dir)
{
	struct perm_ids ids;
	struct stat st;
	bool may;

	if (paths_linux_fixed_dir(dir))
		return arena_printf(r->a, "its directory %s is a system directory", shown(r, dir));
	if (hidden_by_mask(r, dir))
		return arena_printf(r->a, "its directory %s is hidden", shown(r, dir));
	if (path_within(dir, r->plan->scratch))
		return "it lies in the scratch dir";
	if (fstat(g->fd, &st) < 0 || !S_ISREG(st.st_mode))
		return "it is not a regular file";
	if (st.st_size > WRITEBACK_MAX_BYTES)
		return arena_printf(r->a, "it is larger than %lld MiB", WRITEBACK_MAX_BYTES >> 20);
	/* Its private directory must not give the sandbox more than the file does. */
	if (perm_ids_self(&ids) < 0)
		return arena_printf(r->a, "the user's groups cannot be read: %s", strerror(errno));
	may = perm_sandbox_may(&ids, &st, W_OK);
	perm_ids_release(&ids);
	if (!may)
		return "its owner and mode do not let the sandbox's user write it";
	return NULL;
}

/*
 * write_files that editors can save: each one whose directory the sandbox
 * cannot write is moved, with the other write_files of that directory,
 * into a private directory bound there (writeback.h).  One in a directory
 * the sandbox writes anyway needs no mount of its own.  One in a system
 * directory or a hidden one stays bound on itself.
 */
static int
private_parents(struct rctx *r)
{
	size_t n = r->n_grants, k = 0, j;
	size_t *members = arena_alloc(r->a, (n ? n : 1) * sizeof(*members));
	bool *seen = arena_alloc(r->a, n ? n : 1);

	memset(seen, 0, n ? n : 1);
	for (size_t i = 0; i < n; i++) {
		const struct bwrap_grant *g = &r->grants[i], *cover;
		const char *dir;
		size_t n_members = 0;

		if (seen[i] || !g->path || strcmp(g->what, "write_files") || g->fd < 0)
			continue;
		dir = path_dirname(r->a, g->path);
		cover = grant_of(r, dir);
		if (cover && cover->writable && !cover->cow && strcmp(cover->what, "write_files")) {
			r->grants[i].path = NULL;
			continue;
		}
		for (size_t m = i; m < n; m++) {
			const struct bwrap_grant *o = &r->grants[m];
			const char *why;

			if (seen[m] || !o->path || strcmp(o->what, "write_files") || o->fd < 0 ||
			    strcmp(path_dirname(r->a, o->path), dir))
				continue;
			seen[m] = true;
			if ((why = own_bind_reason(r, o, dir))) {
				note(r,
				     "write_files (line %u): %s is bound on its own, so it can be "
				     "written in place but not replaced by a rename: %s",
				     o->line, shown(r, o->path), why);
				continue;
			}
			members[n_members++] = m;
		}
		if (!n_members)
			continue;
		if (private_dir(r, dir, members, n_members, k++) < 0)
			return -1;
	}
	for (size_t i = j = 0; i < r->n_grants; i++)
		if (r->grants[i].path)
			r->grants[j++] = r->grants[i];
	r->n_grants = bwrap_grants_order(r->grants, j);
	if (k && r->rq->create_placeholders)
		add_mask(r, arena_printf(r->a, "%s/%s", r->plan->scratch, WRITEBACK_DIR), true,
			 "the write_files copies, seen only at their files' directories");
	return 0;
}

/* ---- the private home and the CA bundles (Linux) ------------------------------------ */

/*
 * The private home (bwrap.h): unless the workspace or a grant is the home
 * or a parent of it (then that grant decides), an empty directory made in
 * the scratch dir is bound writable at the home, below every grant of what
 * lies in it.  It is no writable root: nothing of the host's is in it, so
 * nothing there is protected, guarded or held by a placeholder, and the
 * scratch dir's cleanup removes it.  In the scratch dir it is masked: the
 * sandbox sees it at its home alone.
 */
static int
resolve_private_home(struct rctx *r)
{
	const char *home = r->plan->home;
	int dir, fd = -1;

	/* A home bwrap could not make a mount point for, or one of the system's. */
	if (!home || home[0] != '/' || paths_linux_fixed_dir(home))
		return 0;
	for (size_t i = 0; i < r->n_grants; i++)
		if (r->grants[i].path && path_within(home, r->grants[i].path))
			return 0;
	if (r->rq->create_placeholders) {
		dir = open(r->plan->scratch, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (dir < 0 || mkdirat(dir, BWRAP_PRIVATE_HOME, 0700) < 0 ||
		    (fd = openat(dir, BWRAP_PRIVATE_HOME,
				 O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
			int e = errno;

			if (dir >= 0)
				close(dir);
			return fail(r, "cannot make the private home %s/%s: %s",
				    shown(r, r->plan->scratch), BWRAP_PRIVATE_HOME, strerror(e));
		}
		close(dir);
		keep_fd(r, fd);
	}
	r->private_home = arena_alloc(r->a, sizeof(*r->private_home));
	*r->private_home = (struct bwrap_grant){
	    home, fd, true, true, "the private home", 0, false, false, NULL};
	if (!r->rq->landlock)
		add_mask(r, arena_printf(r->a, "%s/%s", r->plan->scratch, BWRAP_PRIVATE_HOME),
			 true, "the private home, seen only at the home directory");
	return 0;
}

/*
 * egress_rules: the system CA bundles of this machine (bwrap_ca_bundles),
 * each followed to the regular file it names, once, where the sandbox sees
 * it: the session's bundle is bound there.
 */
static void
find_ca_bundles(struct rctx *r)
{
	size_t n = 0;

	while (bwrap_ca_bundles[n])
		n++;
	r->ca_bundles = arena_alloc(r->a, (n + 1) * sizeof(*r->ca_bundles));
	if (!r->plan->policy->os_env.sandbox.n_egress)
		return;
	for (size_t i = 0; i < n; i++) {
		const char *canon = walk_canonical(r->a, bwrap_ca_bundles[i]);
		struct stat st;
		bool seen = false;

		if (!canon || stat(canon, &st) < 0 || !S_ISREG(st.st_mode) ||
		    !paths_linux_shown(canon) || writable_inside(r, canon))
			continue;
		for (size_t k = 0; k < r->n_ca_bundles && !seen; k++)
			seen = !strcmp(r->ca_bundles[k], canon);
		if (!seen)
			r->ca_bundles[r->n_ca_bundles++] = canon;
	}
}

static void
find_system_links(struct rctx *r)
{
	struct bwrap_link *links = arena_alloc(r->a, 8 * sizeof(*links));
	size_t n = 0;

	for (size_t i = 0; paths_linux_system_dirs[i] && n < 8; i++) {
		char target[PATH_MAX];
		ssize_t len = readlink(paths_linux_system_dirs[i], target, sizeof(target) - 1);

		/* Only a link to a system directory (usr/bin): anything
		 * else is bound as the spec says, target and all. */
		if (len <= 0)
			continue;
		target[len] = '\0';
		if (target[0] == '/' ? !paths_linux_system(target)
				     : strncmp(target, "usr/", 4) != 0)
			continue;
		links[n].path = paths_linux_system_dirs[i];
		links[n].target = arena_strdup(r->a, target);
		n++;
	}
	r->plan->ctx.system_links = links;
	r->plan->ctx.n_system_links = n;
}

static int
open_init(struct rctx *r)
{
	struct walk_result w;

	r->plan->ctx.init_fd = -1;
	if (!r->rq->init)
		return 0;
	if (open_checked(r, r->rq->init, "omnibox-init", nowhere, 0, &w) < 0)
		return -1;
	if (!w.exists || w.is_dir)
		return fail(r, "omnibox-init %s is missing", shown(r, r->rq->init));
	if (writable_inside(r, w.path)) {
		close(w.fd);
		return fail(r,
			    "omnibox-init %s lies in a directory the sandbox can write: install "
			    "omnibox outside the workspace and its write_paths",
			    shown(r, w.path));
	}
	keep_fd(r, w.fd);
	r->plan->ctx.init_fd = w.fd;
	r->plan->ctx.init_interp = launch_elf_interp(w.fd);
	return 0;
}

static void
fill_context(struct rctx *r)
{
	struct bwrap_context *c = &r->plan->ctx;
	const struct launch_request *rq = r->rq;

	c->resolved = true;
	c->cwd = r->plan->workspace;
	c->home = r->plan->home;
	c->scratch = r->plan->scratch;
	c->grants = r->grants;
	c->n_grants = r->n_grants;
	c->masks = r->masks;
	c->n_masks = r->n_masks;
	c->reexpose = r->reexpose;
	c->n_reexpose = r->n_reexpose;
	c->protects = r->protects;
	c->n_protects = r->n_protects;
	c->sockets = r->sockets;
	c->n_sockets = r->n_sockets;
	c->command_dirs = r->command_dirs;
	c->n_command_dirs = r->n_command_dirs;
	c->pins = r->pins;
	c->n_pins = r->n_pins;
	c->private_home = r->private_home;
	c->ca_bundles = r->ca_bundles;
	c->n_ca_bundles = r->n_ca_bundles;
	c->masks_fd = -1;
	c->seccomp_fd = rq->seccomp_fd;
	c->status_fd = rq->status_fd;
	c->ready_fd = rq->ready_fd;
	c->exec_path = r->plan->exec_path;
	c->proxy_port = rq->proxy_port;
	c->proxy_socket = rq->proxy_socket
			      ? rq->proxy_socket
			      : arena_printf(r->a, "%s/%s", r->plan->scratch, LAUNCH_PROXY_SOCKET);
	c->command = (const char *const *)r->plan->argv;
	c->n_command = r->plan->argc;
}

/* PATH as one line of a gitignore file, anchored at the work tree TOP; NULL if it cannot be. */
static const char *
exclude_line(struct rctx *r, const char *top, const char *path)
{
	struct textbuf b = {0};
	const char *rel = path + strlen(top);
	const char *line;

	if (!path_within(path, top) || !strcmp(path, top) || strpbrk(rel, "\n\r"))
		return NULL;
	for (const char *c = rel; *c; c++) {
		/* Glob characters and a trailing space read literally. */
		if (strchr("*?[\\!#", *c) || (*c == ' ' && !c[1]))
			tb_putc(&b, '\\');
		tb_putc(&b, *c);
	}
	line = arena_strdup(r->a, b.data ? b.data : "");
	tb_free(&b);
	return line;
}

/*
 * ENV_GIT_EXCLUDE in the scratch dir (env.h): every mask and placeholder
 * of a repository the sandbox sees, for git inside to ignore.
 */
static int
write_git_exclude(struct rctx *r)
{
	struct textbuf b = {0};
	const char *path = arena_printf(r->a, "%s/%s", r->plan->scratch, ENV_GIT_EXCLUDE);
	int fd, rc = 0;

	for (size_t t = 0; t < r->n_git_tops; t++) {
		for (size_t i = 0; i < r->n_masks; i++) {
			const char *l = exclude_line(r, r->git_tops[t], r->masks[i].path);

			if (l)
				tb_printf(&b, "%s\n", l);
		}
		for (size_t i = 0; i < r->plan->n_placeholders; i++) {
			const char *l =
			    exclude_line(r, r->git_tops[t], r->plan->placeholders[i].path);

			if (l)
				tb_printf(&b, "%s\n", l);
		}
	}
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0 || (b.len && write(fd, b.data, b.len) != (ssize_t)b.len))
		rc = fail(r, "cannot write %s: %s", shown(r, path), strerror(errno));
	if (fd >= 0)
		close(fd);
	tb_free(&b);
	return rc;
}

int
launch_resolve(struct arena *a, const struct launch_request *rq, struct launch_plan *plan,
	       struct diag *d)
{
	struct rctx r = {
	    .a = a, .rq = rq, .plan = plan, .d = d, .linux_target = rq->target == LAUNCH_LINUX};
	struct policy *copy = arena_alloc(a, sizeof(*copy));
	const char *home;

	memset(plan, 0, sizeof(*plan));
	d->failure = NULL;
	*copy = *rq->policy;
	plan->policy = copy;
	plan->target = rq->target;
	plan->ctx.init_fd = -1;
	{
		struct loc loc;
		const char *why = refuse_launch(
		    a, rq->policy,
		    rq->landlock ? SANDBOX_LINUX_LANDLOCK
		    : r.linux_target ? SANDBOX_LINUX_BWRAP
				     : SANDBOX_DARWIN_SEATBELT,
		    r.linux_target ? "linux" : "darwin", &loc);

		if (why)
			return fail_at(&r, loc, "%s", why);
	}
	if (!rq->scratch || rq->scratch[0] != '/')
		return fail(&r, "no scratch dir");
	home = walk_canonical(a, spell(&r, rq->home));
	plan->home = home ? home : spell(&r, rq->home);
	if (resolve_workspace(&r) < 0)
		return -1;
	plan->workspace = spell(&r, plan->workspace);
	plan->home = spell(&r, plan->home);
	plan->scratch = rq->scratch;
	find_roots(&r);
	if (open_grants(&r) < 0)
		goto fail;
	plan->start_dir = copy->os_env.start_in_scratch.value ? plan->scratch : plan->workspace;
	if (r.linux_target) {
		r.n_grants = bwrap_grants_order(r.grants, r.n_grants);
		if (open_init(&r) < 0 || run_scan(&r) < 0)
			goto fail;
		find_system_links(&r);
	}
	if (resolve_mask_paths(&r) < 0 || resolve_sockets(&r) < 0 || check_secrets(&r) < 0 ||
	    (r.linux_target && (resolve_protected(&r) < 0 || private_parents(&r) < 0 ||
				resolve_private_home(&r) < 0)))
		goto fail;
	if (r.linux_target)
		find_ca_bundles(&r);
	if (!r.linux_target) {
		/* The profile denies what the repositories hold (listed, not bound),
		 * and they are noted for the check after the run. */
		const char **roots = arena_alloc(a, (r.n_roots + 1) * sizeof(*roots));

		r.collect_only = true;
		protect_repositories(&r, roots, writable_roots(&r, roots));
		if (r.protect_rc < 0)
			goto fail;
	}
	sort_masks(&r);
	if (r.linux_target && rq->create_placeholders &&
	    env_git_exclude(&copy->os_env.sandbox) && write_git_exclude(&r) < 0)
		goto fail;
	if (resolve_command(&r) < 0)
		goto fail;
	build_env(&r);
	plan->command_dirs = arena_alloc(a, (r.n_command_dirs + 1) * sizeof(char *));
	for (size_t i = 0; i < r.n_command_dirs; i++)
		plan->command_dirs[i] = r.command_dirs[i].path;
	plan->n_command_dirs = r.n_command_dirs;
	fill_context(&r);
	plan->roots = r.roots;
	plan->n_roots = r.n_roots;
	if (r.linux_target && rq->bwrap) {
		const char *real = walk_canonical(a, rq->bwrap);

		/* It runs outside the sandbox: one the agent could have put there
		 * would run what it likes. */
		if (!real || launch_plan_writable(plan, real)) {
			fail(
			    &r,
			    "%s, the bwrap found first on PATH, lies in a directory the sandbox "
			    "can "
			    "write: an agent could have put it there, and it would run outside the "
			    "sandbox; put the system's bwrap first on PATH",
			    shown(&r, real ? real : rq->bwrap));
			goto fail;
		}
	}
	return 0;
fail:
	launch_plan_close(plan);
	launch_cleanup(plan);
	return -1;
}

bool
launch_plan_writable(const struct launch_plan *plan, const char *path)
{
	for (size_t i = 0; i < plan->n_roots; i++)
		if (path_within(path, plan->roots[i]))
			return true;
	return false;
}

void
launch_plan_close(struct launch_plan *plan)
{
	for (size_t i = 0; i < plan->n_fds; i++)
		if (plan->fds[i] >= 0)
			close(plan->fds[i]);
	plan->n_fds = 0;
}

int
launch_quarantine(const struct launch_plan *plan, FILE *out)
{
	const char **roots = calloc(plan->n_roots + 1, sizeof(*roots));
	size_t n = 0;
	int rc;

	if (!roots)
		return -1;
	for (size_t i = 0; i < plan->n_roots; i++)
		if (strcmp(plan->roots[i], plan->scratch))
			roots[n++] = plan->roots[i];
	rc = gitguard_quarantine(roots, n, &plan->git_prune, plan->gits, plan->n_gits, out);
	free(roots);
	return rc;
}

void
launch_cleanup(struct launch_plan *plan)
{
	for (size_t i = plan->n_placeholders; i-- > 0;)
		host_remove(&plan->placeholders[i], false, false);
	plan->n_placeholders = 0;
	for (size_t i = 0; i < plan->n_writebacks; i++) {
		if (plan->writebacks[i].host_fd >= 0)
			close(plan->writebacks[i].host_fd);
		if (plan->writebacks[i].dir_fd >= 0)
			close(plan->writebacks[i].dir_fd);
	}
	plan->n_writebacks = 0;
}

void
launch_describe(const struct launch_plan *plan, const char *argv_text, struct textbuf *out)
{
	if (argv_text)
		tb_puts(out, argv_text);
	else
		bwrap_build(plan->policy, &plan->ctx, NULL, out, NULL, NULL);
	tb_puts(out, "# environment (values not shown):");
	for (size_t i = 0; plan->env[i]; i++) {
		char *name = strndup(plan->env[i], strcspn(plan->env[i], "="));

		tb_putc(out, ' ');
		tb_escape(out, name ? name : "?", 0);
		free(name);
	}
	tb_puts(out, "\n# scratch dir: ");
	tb_escape(out, plan->scratch, 0);
	tb_puts(out, " (a new one per launch, mode 0700, removed on exit)\n");
	if (plan->target == LAUNCH_LINUX && plan->policy->os_env.sandbox.type != SANDBOX_NONE) {
		tb_puts(out, "# home: ");
		tb_escape(out, plan->home, 0);
		if (plan->ctx.private_home)
			tb_printf(out, ", private: the scratch dir's %s, empty but for the grants "
				       "below it, removed with it\n",
				  BWRAP_PRIVATE_HOME);
		else
			tb_puts(out, ", the host's as the grants show it (one holds it: no private "
				     "home)\n");
	}
	/* Skipped grants and notes were escaped as they were written (shown()). */
	for (size_t i = 0; i < plan->n_skipped; i++) {
		tb_puts(out, "# ");
		tb_escape(out, plan->skipped[i], TEXT_ESC_AGAIN);
		tb_putc(out, '\n');
	}
	for (size_t i = 0; i < plan->n_notes; i++) {
		tb_puts(out, "# ");
		tb_escape(out, plan->notes[i], TEXT_ESC_AGAIN);
		tb_putc(out, '\n');
	}
}

char *
launch_find_init(struct arena *a, const char *exe_dir)
{
	char *cand = arena_printf(a, "%s/omnibox-init", exe_dir);

	if (access(cand, X_OK) == 0)
		return cand;
	cand = arena_printf(a, "%s/../libexec/omnibox/omnibox-init", exe_dir);
	if (access(cand, X_OK) == 0)
		return walk_canonical(a, cand);
	return NULL;
}

const char *
launch_workspace(struct arena *a, const struct launch_request *rq, struct diag *d)
{
	struct launch_plan plan = {0};
	struct rctx r = {.a = a, .rq = rq, .plan = &plan, .d = d, .linux_target = true};
	const char *home = walk_canonical(a, rq->home);

	d->failure = NULL;
	plan.home = home ? home : walk_lexical(a, rq->home);
	if (resolve_workspace(&r) < 0)
		return NULL;
	return plan.workspace;
}
