/*
 * resolve_private.c - write_files (writeback.h): a private directory for
 * each directory holding one, whose other entries are bound as the sandbox
 * would see them.
 */
#include "runtime/resolve/resolve_int.h"

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
		return fail(r, "cannot make %s/%s: %s", escaped(r, r->plan->scratch), WRITEBACK_DIR,
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
		return fail(r, "cannot make %s/%s/%s: %s", escaped(r, r->plan->scratch),
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
				    escaped(r, dir), escaped(r, entries[i]), strerror(errno));
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
			 escaped(r, r->plan->scratch), WRITEBACK_DIR, k),
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
			       escaped(r, dir));
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
				       escaped(r, g->path));
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
			     line, escaped(r, first->path), escaped(r, dir),
			     n_entries > WRITEBACK_MAX_ENTRIES ? "more than 256" : "unlistable");
			return 0;
		}
	}
	if (fstat(w.fd, &st) < 0) {
		close(w.fd);
		return fail(r, "cannot stat %s: %s", escaped(r, dir), strerror(errno));
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
		return arena_printf(r->a, "its directory %s is a system directory",
				    escaped(r, dir));
	if (hidden_by_mask(r, dir))
		return arena_printf(r->a, "its directory %s is hidden", escaped(r, dir));
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
int
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
				     o->line, escaped(r, o->path), why);
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
