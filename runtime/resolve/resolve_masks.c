/*
 * resolve_masks.c - the masks of a launch (Linux): what the dotfile scan hides,
 * mask_paths and the denied sockets, each with the directory it lies in.
 */
#include "runtime/resolve/resolve_int.h"

/* ---- masks (Linux) ------------------------------------------------------------- */

void
add_mask(struct rctx *r, const char *path, bool dir, const char *reason)
{
	struct bwrap_mask *m = ARENA_PUSH(r->a, r->masks, r->n_masks, r->cap_masks);
	struct stat st;

	/* A mask hides a name: another name of the same file stays readable. */
	if (!dir && lstat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink > 1)
		note(r,
		     "warning: %s (%s) has %ju other hard links in the file system: their names "
		     "show its contents, the mask hides only this one",
		     escaped(r, path), reason, (uintmax_t)(st.st_nlink - 1));

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
		if (path_within(res->hits[i].path, dir) &&
		    granted_explicitly(sb, res->hits[i].path))
			return false;
	return true;
}

int
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
	o.memo = "dotfiles";
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
			tb_printf(&dirs, "%s%s", i ? ", " : "", escaped(r, res.unfinished[i]));
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
				    escaped(r, dir));
			}
		note(r,
		     "warning: the dotfile scan cannot list %s (permission denied): hidden whole",
		     escaped(r, dir));
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
int
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
				       escaped(r, dir));
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
int
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
					       escaped(r, w.missing), strerror(err));
			}
		} else {
			close(w.parent_fd);
		}
		add_mask(r, w.missing, dir,
			 arena_printf(r->a, "%s, missing: placeholder %s%s", reason,
				      escaped(r, w.missing),
				      r->rq->create_placeholders ? "" : " created at launch"));
		if (r->rq->create_placeholders)
			mask_parent(r, r->plan->placeholders[r->plan->n_placeholders - 1].dirfd);
		if (pin_parents(r, w.missing, l->v[i].loc) < 0)
			return -1;
	}
	return 0;
}

int
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

void
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
