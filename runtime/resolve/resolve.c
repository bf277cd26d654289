/*
 * resolve.c - from a symbolic policy to the facts of one launch.
 *
 * Every path goes through walk_open() with the policy's writable roots:
 * a symlink the agent could have planted is followed only while it stays
 * where the agent can write anyway.  On Linux the descriptor each walk
 * returns is what bwrap mounts (--bind-fd), so nothing can be swapped
 * between the check and the mount.
 */
#include "runtime/resolve/resolve_int.h"

/* ---- paths ------------------------------------------------------------------ */

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
		return fail_at(r, t->allow_cwd_override.loc, "%s", escaped(r, v.why));
	if (!v.path && rq->cwd && t && !strncmp(v.why, "--cwd ", 6))
		return fail(r, "%s", escaped(r, v.why));
	/* macOS: a workspace that is missing fails at the launch's chdir; here,
	 * on another system, it may be a Mac's path being described. */
	if (v.path && (rq->cwd ? !wr.cwd_canon : !wr.own_canon))
		v.path = NULL, v.why = NULL;
	if (!v.path && !v.why)
		return fail_at(r, at, "the workspace %s is not a directory",
			       escaped(r, rq->cwd ? wr.cwd : own));
	if (!v.path)
		return fail_at(r, at, "%s", escaped(r, v.why));
	if (stat(v.path, &st) < 0 ? r->linux_target : !S_ISDIR(st.st_mode))
		return fail_at(r, at, "the workspace %s is not a directory",
			       escaped(r, rq->cwd ? wr.cwd : own));
	r->plan->workspace = v.path;
	return 0;
}

/* ---- grants --------------------------------------------------------------------- */

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
				 entry->loc.line, escaped(r, w.path));
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
			       what, escaped(r, lexical), escaped(r, w.path));
	}
	if (!strcmp(what, "write_files") && w.is_dir) {
		if (w.fd >= 0)
			close(w.fd);
		/* A directory would be writable without being a writable root, whose
		 * symlinks the next launch checks. */
		return fail_at(r, entry->loc,
			       "write_files %s is a directory: name it in write_paths",
			       escaped(r, w.path));
	}
	if (r->linux_target)
		add_grant(r, w.path, w.fd, writable, false, what, entry->loc.line);
	return 0;
}

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
				 entry->loc.line, escaped(r, w.path));
		return 0;
	}
	if (w.through_link && link_target_refused(r, lexical, w.path)) {
		close(w.fd);
		return fail_at(r, entry->loc,
			       "write_paths %s resolves through a symlink to %s: omnibox never "
			       "copies /, a home directory or a parent of one, a system directory "
			       "or a hidden path by way of a link; name it in the policy",
			       escaped(r, lexical), escaped(r, w.path));
	}
	if (too_wide(r, w.path)) {
		close(w.fd);
		return fail_at(r, entry->loc,
			       "write_paths %s: copy_on_write of a home directory or of / is "
			       "refused (the copy would hold everything in it)",
			       escaped(r, w.path));
	}
	for (size_t i = 0; i < r->n_grants; i++) {
		const struct bwrap_grant *g = &r->grants[i];

		if (g->writable && !g->cow && strcmp(g->path, r->plan->scratch) &&
		    path_within(g->path, w.path)) {
			close(w.fd);
			return fail_at(r, entry->loc,
				       "write_paths %s is copy-on-write but %s (line %u) makes %s "
				       "writable on the host; a path is one or the other",
				       escaped(r, w.path), g->what, g->line, escaped(r, g->path));
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
		return fail(r, "cannot make %s/%s: %s", escaped(r, r->plan->scratch), COW_DIR,
			    strerror(e));
	}
	copy = openat(dir, COW_DIR, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	close(dir);
	snprintf(name, sizeof(name), "%zu", index);
	if (copy < 0 || copy_tree(w.fd, copy, name, r->err, sizeof(r->err)) < 0) {
		if (copy < 0)
			fail(r, "cannot open %s/%s: %s", escaped(r, r->plan->scratch), COW_DIR,
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
		return fail(r, "cannot open the copy of %s: %s", escaped(r, w.path), strerror(errno));
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
		    what, escaped(r, p->written), escaped(r, canon), escaped(r, via));
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
				    escaped(r, r->plan->workspace));
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
				    escaped(r, r->rq->scratch));
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
					    what, escaped(r, path), escaped(r, r->masks[i].path));
		return 0;
	}
	dir = path_dirname(r->a, path);
	if (too_wide(r, dir))
		return fail(r,
			    "%s %s lives directly in %s; omnibox will not expose that whole "
			    "directory: install the program in a directory of its own",
			    what, escaped(r, path), escaped(r, dir));
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
					    escaped(r, path));
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
		return fail(r, "%s %s does not exist", what, escaped(r, path));
	*out = spell(r, w.path);
	return 0;
}

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
			    escaped(r, script_canon), escaped(r, canon));
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
			return fail_at(r, at, "command '%s' not found%s", escaped(r, name),
				       strchr(name, '/') ? "" : " on PATH");
		/* Described, not run: say what the launch would do. */
		note(r, "command '%s' is not found%s here: omnibox-run would refuse this launch",
		     escaped(r, name), strchr(name, '/') ? "" : " on PATH");
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
				    escaped(r, r->plan->scratch), BWRAP_PRIVATE_HOME, strerror(e));
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
		return fail(r, "omnibox-init %s is missing", escaped(r, r->rq->init));
	if (writable_inside(r, w.path)) {
		close(w.fd);
		return fail(r,
			    "omnibox-init %s lies in a directory the sandbox can write: install "
			    "omnibox outside the workspace and its write_paths",
			    escaped(r, w.path));
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
		rc = fail(r, "cannot write %s: %s", escaped(r, path), strerror(errno));
	if (fd >= 0)
		close(fd);
	tb_free(&b);
	return rc;
}

/* Which mounts bwrap itself makes depends on the launch's facts (bwrap.h): the
 * first step's are in the context as the last step's will be. */
static int
check_bwrap(struct rctx *r)
{
	const char *real;

	if (!r->linux_target || !r->rq->bwrap)
		return 0;
	real = walk_canonical(r->a, r->rq->bwrap);
	/* It runs outside the sandbox: one the agent could have put there
	 * would run what it likes. */
	if (!real || launch_plan_writable(r->plan, real))
		return fail(r,
			    "%s, the bwrap found first on PATH, lies in a directory the sandbox "
			    "can write: an agent could have put it there, and it would run outside "
			    "the sandbox; put the system's bwrap first on PATH",
			    escaped(r, real ? real : r->rq->bwrap));
	return 0;
}

int
launch_resolve_begin(struct arena *a, const struct launch_request *rq, struct launch_plan *plan,
		     struct diag *d, struct launch_resolving **out)
{
	struct rctx *r = arena_alloc(a, sizeof(*r));
	struct policy *copy = arena_alloc(a, sizeof(*copy));
	const char *home;
	struct loc loc;
	const char *why;

	*r = (struct rctx){
	    .a = a, .rq = rq, .plan = plan, .d = d, .linux_target = rq->target == LAUNCH_LINUX};
	*out = (struct launch_resolving *)r;
	memset(plan, 0, sizeof(*plan));
	d->failure = NULL;
	*copy = *rq->policy;
	plan->policy = copy;
	plan->target = rq->target;
	plan->ctx.init_fd = -1;
	why = refuse_launch(a, rq->policy,
			    rq->landlock      ? SANDBOX_LINUX_LANDLOCK
			    : r->linux_target ? SANDBOX_LINUX_BWRAP
					      : SANDBOX_DARWIN_SEATBELT,
			    r->linux_target ? "linux" : "darwin", &loc);
	if (why)
		return fail_at(r, loc, "%s", why);
	if (!rq->scratch || rq->scratch[0] != '/')
		return fail(r, "no scratch dir");
	home = walk_canonical(a, spell(r, rq->home));
	plan->home = home ? home : spell(r, rq->home);
	if (resolve_workspace(r) < 0)
		return -1;
	plan->workspace = spell(r, plan->workspace);
	plan->home = spell(r, plan->home);
	plan->scratch = rq->scratch;
	find_roots(r);
	plan->roots = r->roots;
	plan->n_roots = r->n_roots;
	if (r->linux_target) {
		if (open_init(r) < 0)
			goto fail;
		find_system_links(r);
	}
	if (check_bwrap(r) < 0)
		goto fail;
	fill_context(r);
	return 0;
fail:
	launch_plan_close(plan);
	launch_cleanup(plan);
	return -1;
}

int
launch_resolve_finish(struct launch_resolving *resolving)
{
	struct rctx *r = (struct rctx *)resolving;
	struct launch_plan *plan = r->plan;
	const struct launch_request *rq = r->rq;
	struct arena *a = r->a;

	if (open_grants(r) < 0)
		goto fail;
	plan->start_dir =
	    plan->policy->os_env.start_in_scratch.value ? plan->scratch : plan->workspace;
	if (r->linux_target) {
		r->n_grants = bwrap_grants_order(r->grants, r->n_grants);
		if (run_scan(r) < 0)
			goto fail;
	}
	if (resolve_mask_paths(r) < 0 || resolve_sockets(r) < 0 || check_secrets(r) < 0 ||
	    (r->linux_target &&
	     (resolve_protected(r) < 0 || private_parents(r) < 0 || resolve_private_home(r) < 0)))
		goto fail;
	if (r->linux_target)
		find_ca_bundles(r);
	if (!r->linux_target) {
		/* The profile denies what the repositories hold (listed, not bound),
		 * and they are noted for the check after the run. */
		const char **roots = arena_alloc(a, (r->n_roots + 1) * sizeof(*roots));

		r->collect_only = true;
		protect_repositories(r, roots, writable_roots(r, roots));
		if (r->protect_rc < 0)
			goto fail;
	}
	sort_masks(r);
	if (r->linux_target && rq->create_placeholders &&
	    env_git_exclude(&plan->policy->os_env.sandbox) && write_git_exclude(r) < 0)
		goto fail;
	if (resolve_command(r) < 0)
		goto fail;
	build_env(r);
	plan->command_dirs = arena_alloc(a, (r->n_command_dirs + 1) * sizeof(char *));
	for (size_t i = 0; i < r->n_command_dirs; i++)
		plan->command_dirs[i] = r->command_dirs[i].path;
	plan->n_command_dirs = r->n_command_dirs;
	fill_context(r);
	return 0;
fail:
	launch_plan_close(plan);
	launch_cleanup(plan);
	return -1;
}

int
launch_resolve(struct arena *a, const struct launch_request *rq, struct launch_plan *plan,
	       struct diag *d)
{
	struct launch_resolving *r;

	if (launch_resolve_begin(a, rq, plan, d, &r) < 0)
		return -1;
	return launch_resolve_finish(r);
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
	/* Skipped grants and notes were escaped as they were written (escaped()). */
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
