/*
 * workspace.c - which directory a launch takes as its workspace (workspace.h).
 */
#include "workspace.h"

#include <string.h>

#include "hidden.h"
#include "refuse.h"

static bool
is_sep(char c, bool windows)
{
	return c == '/' || (windows && c == '\\');
}

static char
fold(char c, bool windows)
{
	return windows && c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* The length of PATH's root: "/", "C:\", "\\server\share\"; 0 if none. */
static size_t
root_len(const char *path, bool windows)
{
	size_t n = 0;

	if (!windows)
		return path[0] == '/';
	if (((path[0] >= 'A' && path[0] <= 'Z') || (path[0] >= 'a' && path[0] <= 'z')) &&
	    path[1] == ':')
		return is_sep(path[2], true) ? 3 : 2;
	if (!is_sep(path[0], true) || !is_sep(path[1], true))
		return is_sep(path[0], true);
	/* \\server\share: the share is the root, as C:\ is a drive's. */
	for (int parts = 0, i = 2; parts < 2; parts++) {
		while (path[i] && !is_sep(path[i], true))
			i++;
		n = (size_t)i;
		if (!path[i])
			return n;
		i++;
	}
	return n + 1;
}

bool
workspace_is_root(const char *path, bool windows)
{
	size_t r = root_len(path, windows);

	if (!r)
		return false;
	for (path += r; is_sep(*path, windows); path++)
		;
	return *path == '\0';
}

bool
workspace_within(const char *path, const char *dir, bool windows)
{
	size_t n = strlen(dir);

	if (!n)
		return false;
	while (is_sep(dir[n - 1], windows) && n > root_len(dir, windows))
		n--;
	for (size_t i = 0; i < n; i++)
		if (fold(path[i], windows) != fold(dir[i], windows) &&
		    !(is_sep(path[i], windows) && is_sep(dir[i], windows)))
			return false;
	return path[n] == '\0' || is_sep(path[n], windows) || is_sep(dir[n - 1], windows);
}

static bool
same(const char *x, const char *y, bool windows)
{
	return workspace_within(x, y, windows) && workspace_within(y, x, windows);
}

/*
 * PATH as refuse_too_wide() and hidden_component() read paths: "/" and
 * '/'-separated.  A Windows path loses its drive or share (the caller
 * compares those), so "C:\Users\me" reads as "/Users/me".
 */
static char *
posix_form(struct arena *a, const char *path, bool windows)
{
	size_t r = windows ? root_len(path, true) : 0;
	char *s = arena_printf(a, "/%s", path + r);

	if (!windows)
		return s + 1;
	for (char *p = s; *p; p++)
		if (*p == '\\')
			*p = '/';
	return s;
}

/* Are X and Y on one drive or share (always, outside Windows)? */
static bool
same_volume(const char *x, const char *y, bool windows)
{
	size_t n = root_len(x, windows);

	if (!windows)
		return true;
	if (n != root_len(y, windows))
		return false;
	for (size_t i = 0; i < n; i++)
		if (fold(x[i], true) != fold(y[i], true) &&
		    !(is_sep(x[i], true) && is_sep(y[i], true)))
			return false;
	return true;
}

/* The terminal's own rules for --cwd; NULL when WANT is accepted. */
static const char *
check_override(struct arena *a, const struct workspace_request *rq, const char *want,
	       const char *own, uint32_t *line)
{
	if (!same(want, own, rq->windows) && !rq->allow_cwd_override)
		return arena_printf(a,
				    "--cwd %s: terminal '%s' does not allow a cwd override "
				    "(allow_cwd_override); its workspace is %s",
				    rq->cwd_given, rq->terminal, own);
	if (!workspace_within(want, own, rq->windows)) {
		*line = rq->override_line;
		return arena_printf(a,
				    "--cwd %s is outside the workspace %s of terminal '%s': "
				    "allow_cwd_override accepts a directory inside it",
				    rq->cwd_given, own, rq->terminal);
	}
	return NULL;
}

/*
 * Reached through a link, WRITTEN may not land on the root, a home or a
 * parent of one, or a hidden path it does not name itself: a link may have
 * been planted by a sandbox that could write where it lies.
 */
static bool
link_refused(struct arena *a, const struct workspace_request *rq, const char *written,
	     const char *canon)
{
	const char *home = rq->home && same_volume(rq->home, canon, rq->windows)
			       ? posix_form(a, rq->home, rq->windows)
			       : NULL;

	if (same(written, canon, rq->windows))
		return false;
	return workspace_is_root(canon, rq->windows) ||
	       refuse_link_target(posix_form(a, written, rq->windows),
				  posix_form(a, canon, rq->windows), home, rq->darwin);
}

struct workspace_verdict
workspace_decide(struct arena *a, const struct workspace_request *rq)
{
	struct workspace_verdict v = {0};
	const char *own = rq->own_canon ? rq->own_canon : rq->own;
	const char *ws = rq->cwd ? rq->cwd : rq->own;
	const char *canon = rq->cwd ? rq->cwd_canon : rq->own_canon;

	if (!canon)
		canon = ws;
	if (rq->cwd && rq->terminal && (v.why = check_override(a, rq, canon, own, &v.line)))
		return v;
	if (link_refused(a, rq, ws, canon)) {
		v.why = arena_printf(a,
				     "the workspace %s resolves through a symlink to %s: omnibox "
				     "never takes /, a home directory or a parent of one, a system "
				     "directory or a hidden path as a workspace by way of a link; "
				     "name it itself if that is what you mean",
				     ws, canon);
		return v;
	}
	if (workspace_is_root(canon, rq->windows)) {
		v.why = rq->windows
			    ? arena_printf(a,
					   "the workspace cannot be %s, the root of a drive: run "
					   "omnibox-run.exe from a project directory, or set "
					   "os_env.cwd",
					   canon)
			    : "the workspace cannot be /: run omnibox-run from a project "
			      "directory, or set os_env.cwd";
		return v;
	}
	v.path = canon;
	return v;
}

bool
workspace_writable(const struct sandbox *sb)
{
	for (size_t i = 0; i < sb->write_paths.n; i++)
		if (!strcmp(sb->write_paths.v[i].symbolic, "{CWD}"))
			return true;
	return false;
}

const struct ir_path *
workspace_home_held(const struct policy *p)
{
	const struct sandbox *sb = &p->os_env.sandbox;
	const struct ir_pathlist *lists[] = {&sb->write_paths, &sb->read_paths, &sb->cow_paths};

	for (size_t k = 0; k < 3; k++)
		for (size_t i = 0; i < lists[k]->n; i++) {
			const struct ir_path *g = &lists[k]->v[i];

			if ((g->base == PATH_HOME || g->base == PATH_ABSOLUTE) && g->rel[0] == '\0')
				return g;
		}
	if (p->os_env.cwd.s && p->os_env.cwd_path.base == PATH_HOME &&
	    p->os_env.cwd_path.rel[0] == '\0')
		return &p->os_env.cwd_path;
	return NULL;
}
