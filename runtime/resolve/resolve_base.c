/*
 * resolve_base.c - what every file of the resolver builds on: its errors and
 * notes, the paths it spells, the descriptors it keeps, and the grants and
 * writable roots every later step asks about.
 */
#include "runtime/resolve/resolve_int.h"

/* No position: a default, the machine, the command line. */
const struct loc nowhere;

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

int
fail_at(struct rctx *r, struct loc loc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail_at(r, loc, fmt, ap);
	va_end(ap);
	return -1;
}

/* A failure no line of the policy is to blame for. */
int
fail(struct rctx *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail_at(r, nowhere, fmt, ap);
	va_end(ap);
	return -1;
}

void
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
const char *
escaped(struct rctx *r, const char *s)
{
	return arena_escape(r->a, s);
}

/*
 * Where the entry of list L on LINE that names PATH (canonical, or as the
 * IR spells it) is written: a grant or a protected path keeps only its
 * line.  The first entry on LINE when none names PATH.
 */
struct loc
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

void
keep_fd(struct rctx *r, int fd)
{
	if (fd >= 0)
		*ARENA_PUSH(r->a, r->plan->fds, r->plan->n_fds, r->plan->cap_fds) = fd;
}

char *
path_join(struct arena *a, const char *dir, const char *name)
{
	if (!*name)
		return arena_strdup(a, dir);
	return arena_printf(a, "%s%s%s", dir, strcmp(dir, "/") ? "/" : "", name);
}

char *
path_dirname(struct arena *a, const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash || slash == path)
		return arena_strdup(a, "/");
	return arena_strndup(a, path, (size_t)(slash - path));
}

/* How the platform spells a canonical path (Seatbelt sees /private/tmp). */
const char *
spell(struct rctx *r, const char *path)
{
	return r->linux_target ? path : paths_darwin_spelling(r->a, path);
}

/* ENTRY now names the canonical PATH (and the emitters read it so). */
void
set_path(struct rctx *r, struct ir_path *entry, const char *path)
{
	entry->symbolic = spell(r, path);
	entry->base = PATH_ABSOLUTE;
	entry->rel = entry->symbolic + 1;
}

/* The absolute path an IR path names, as written ("..": lexically). */
char *
lexical_of(struct rctx *r, const struct ir_path *p, const char *ws)
{
	const char *base = p->base == PATH_ABSOLUTE ? "/"
			   : p->base == PATH_HOME   ? r->plan->home
			   : p->base == PATH_LAUNCH ? r->rq->launch_dir
						    : ws;

	return (char *)spell(r, walk_lexical(r->a, path_join(r->a, base, p->rel)));
}

bool
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
int
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
			       what, escaped(r, path), escaped(r, w->bad_link),
			       escaped(r, w->bad_target), escaped(r, w->bad_root),
			       writable_inside(r, w->bad_root)
				   ? "the sandbox can write"
				   : "a sandbox may have written (the workspace)");
	if (errno == EAGAIN)
		return fail_at(r, loc, "%s %s moved while it was being opened; nothing ran", what,
			       escaped(r, path));
	return fail_at(r, loc, "%s %s: %s", what, escaped(r, path), strerror(errno));
}

void
add_grant(struct rctx *r, const char *path, int fd, bool writable, bool must_exist,
	  const char *what, uint32_t line)
{
	*ARENA_PUSH(r->a, r->grants, r->n_grants, r->cap_grants) =
	    (struct bwrap_grant){path, fd, writable, must_exist, what, line, false, false, NULL};
	keep_fd(r, fd);
}

/* The plan's own copy of L's entries, which resolution rewrites. */
void
copy_list(struct rctx *r, struct ir_pathlist *l)
{
	struct ir_path *v = arena_alloc(r->a, (l->n ? l->n : 1) * sizeof(*v));

	if (l->n)
		memcpy(v, l->v, l->n * sizeof(*v));
	l->v = v;
	l->cap = l->n;
}

/* Is PATH readable in the sandbox without a grant of its own? */
bool
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
