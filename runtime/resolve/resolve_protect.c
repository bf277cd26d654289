/*
 * resolve_protect.c - the protected paths of a launch (Linux): the git
 * entries of every repository the sandbox can write, and the editors' and
 * agents' settings, bound read-only onto themselves.
 */
#include "runtime/resolve/resolve_int.h"

/* ---- protected paths (Linux) ---------------------------------------------------------- */

/* Is PATH hidden by a mask already (and so read-only, and more)? */
bool
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
size_t
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
void
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
				 escaped(r, path));
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

int
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
