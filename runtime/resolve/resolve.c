/*
 * resolve.c - from a symbolic policy to the exact launch on this machine.
 */
#include "runtime/resolve/resolve.h"
#include "runtime/resolve/command.h"
#include "runtime/resolve/scan.h"

#include "emitters/envlist.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct rctx {
	struct arena *a;
	const struct launch_request *rq;
	struct launch_plan *plan;
	char *err;
	size_t errlen;
	/* growing arrays for the bwrap context */
	struct bwrap_mask *masks;
	size_t n_masks, cap_masks;
	struct bwrap_bind *reexpose;
	size_t n_reexpose, cap_reexpose;
	const char **sockets;
	size_t n_sockets, cap_sockets;
	const char **command_dirs;
	size_t n_command_dirs, cap_command_dirs;
	const char **init_args;
	size_t n_init_args, cap_init_args;
	size_t cap_placeholders, cap_notes;
};

static int fail(struct rctx *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int
fail(struct rctx *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->err, r->errlen, fmt, ap);
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

char *
resolve_canonical(struct arena *a, const char *path)
{
	char cur[PATH_MAX], real[PATH_MAX];
	const char *p = path;
	/* Components below the first missing one: no symlinks there. */
	char *missing[PATH_MAX / 2];
	size_t n_missing = 0;

	if (path[0] != '/') {
		errno = EINVAL;
		return NULL;
	}
	strcpy(cur, "/");
	while (*p) {
		const char *seg;
		size_t len;

		while (*p == '/')
			p++;
		seg = p;
		while (*p && *p != '/')
			p++;
		len = (size_t)(p - seg);
		if (len == 0 || (len == 1 && seg[0] == '.'))
			continue;
		if (len == 2 && seg[0] == '.' && seg[1] == '.') {
			if (n_missing) {
				n_missing--;
			} else {
				char *slash = strrchr(cur, '/');

				/* cur is canonical, so its parent is too. */
				if (slash == cur)
					cur[1] = '\0';
				else
					*slash = '\0';
			}
			continue;
		}
		if (n_missing) {
			missing[n_missing++] = arena_strndup(a, seg, len);
			continue;
		}
		if (strlen(cur) + len + 2 > sizeof(cur)) {
			errno = ENAMETOOLONG;
			return NULL;
		}
		{
			char cand[PATH_MAX];
			size_t at = strlen(cur);

			memcpy(cand, cur, at);
			if (strcmp(cur, "/"))
				cand[at++] = '/';
			memcpy(cand + at, seg, len);
			cand[at + len] = '\0';
			if (realpath(cand, real)) {
				strcpy(cur, real);
			} else if (errno == ENOENT || errno == ENOTDIR) {
				missing[n_missing++] = arena_strndup(a, seg, len);
			} else {
				return NULL;
			}
		}
	}
	{
		char *out = arena_strdup(a, cur);

		for (size_t i = 0; i < n_missing; i++)
			out = path_join(a, out, missing[i]);
		return out;
	}
}

/* The canonical path an IR path names on this machine. */
static char *
resolve_ir_path(struct rctx *r, const struct ir_path *p, const char *base_dir)
{
	const char *base = p->base == PATH_ABSOLUTE ? "/"
			   : p->base == PATH_HOME   ? r->plan->ctx.home
			   : p->base == PATH_LAUNCH ? r->rq->launch_dir
						    : base_dir;
	char *full = path_join(r->a, base, p->rel);
	char *canon = resolve_canonical(r->a, full);

	return canon ? canon : full;
}

static void
resolve_list(struct rctx *r, struct ir_pathlist *l)
{
	struct ir_path *v = arena_alloc(r->a, (l->n ? l->n : 1) * sizeof(*v));

	for (size_t i = 0; i < l->n; i++) {
		v[i] = l->v[i];
		v[i].symbolic = resolve_ir_path(r, &l->v[i], r->plan->workspace);
		v[i].base = PATH_ABSOLUTE;
		v[i].rel = v[i].symbolic + 1;
	}
	l->v = v;
	l->cap = l->n;
}

static bool
is_dir(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* ---- grants and masks ---------------------------------------------------------- */

/* Directories of "/" that a grant of "/" stands for: never /proc /sys /dev /tmp /run. */
static void
list_root_dirs(struct rctx *r)
{
	static const char *const skip[] = {"proc", "sys", "dev", "tmp", "run", NULL};
	struct dirent **names;
	const char **dirs;
	size_t k = 0;
	int n = scandir("/", &names, NULL, alphasort);

	if (n < 0)
		return;
	dirs = arena_alloc(r->a, (size_t)(n + 1) * sizeof(*dirs));
	for (int i = 0; i < n; i++) {
		bool skipped = names[i]->d_name[0] == '.';

		for (size_t s = 0; skip[s] && !skipped; s++)
			skipped = !strcmp(names[i]->d_name, skip[s]);
		if (!skipped)
			dirs[k++] = arena_printf(r->a, "/%s", names[i]->d_name);
		free(names[i]);
	}
	free(names);
	r->plan->ctx.root_dirs = dirs;
	r->plan->ctx.n_root_dirs = k;
}

static bool
list_has(const struct ir_pathlist *l, const char *path)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->v[i].symbolic, path))
			return true;
	return false;
}

static bool
granted_explicitly(const struct sandbox *sb, const char *path)
{
	return list_has(&sb->read_paths, path) || list_has(&sb->write_paths, path) ||
	       list_has(&sb->write_files, path);
}

/* Is PATH inside something the sandbox can write? */
static bool
writable_inside(struct rctx *r, const char *path)
{
	const struct sandbox *sb = &r->plan->policy->os_env.sandbox;

	if (path_within(path, r->plan->ctx.scratch))
		return true;
	for (size_t i = 0; i < sb->write_paths.n; i++)
		if (path_within(path, sb->write_paths.v[i].symbolic))
			return true;
	return false;
}

static bool
visible_inside(struct rctx *r, const char *path)
{
	const struct sandbox *sb = &r->plan->policy->os_env.sandbox;
	const struct ir_pathlist *lists[] = {&sb->read_paths, &sb->write_paths, &sb->write_files};

	if (path_within(path, r->plan->workspace) || path_within(path, r->plan->ctx.scratch))
		return true;
	for (size_t k = 0; k < 3; k++)
		for (size_t i = 0; i < lists[k]->n; i++)
			if (path_within(path, lists[k]->v[i].symbolic))
				return true;
	return false;
}

static void
add_mask(struct rctx *r, const char *path, bool dir, const char *reason)
{
	struct bwrap_mask *m = ARENA_PUSH(r->a, r->masks, r->n_masks, r->cap_masks);

	m->path = path;
	m->is_dir = dir;
	m->reason = reason;
}

static int
cmp_mask(const void *a, const void *b)
{
	return strcmp(((const struct bwrap_mask *)a)->path, ((const struct bwrap_mask *)b)->path);
}

static int
run_scan(struct rctx *r)
{
	const struct sandbox *sb = &r->plan->policy->os_env.sandbox;
	const struct ir_pathlist *lists[] = {&sb->read_paths, &sb->write_paths};
	const char **roots =
	    arena_alloc(r->a, (sb->read_paths.n + sb->write_paths.n + 1) * sizeof(*roots));
	const char **allow = arena_alloc(r->a, (sb->cwd_allow_hidden.n + 1) * sizeof(*allow));
	struct scan_options o = {0};
	struct scan_result res = {0};
	size_t n_roots = 0;
	char err[1024];

	roots[n_roots++] = r->plan->workspace;
	for (size_t k = 0; k < 2; k++)
		for (size_t i = 0; i < lists[k]->n; i++) {
			const char *p = lists[k]->v[i].symbolic;

			if (!path_within(p, r->plan->workspace) && is_dir(p))
				roots[n_roots++] = p;
		}
	for (size_t i = 0; i < sb->cwd_allow_hidden.n; i++)
		allow[i] = sb->cwd_allow_hidden.v[i].s;
	o.allow = allow;
	o.n_allow = sb->cwd_allow_hidden.n;
	o.recursive = sb->scan_recursive.value;
	o.max_entries = sb->scan_max_entries.value;
	o.overflow = sb->scan_overflow == OVERFLOW_WARN	   ? SCAN_WARN
		     : sb->scan_overflow == OVERFLOW_ERROR ? SCAN_ERROR
							   : SCAN_UNLIMITED;
	if (scan_run(roots, n_roots, &o, &res, err, sizeof(err)) < 0) {
		scan_result_free(&res);
		return fail(r, "%s", err);
	}
	if (res.overflowed) {
		struct textbuf dirs = {0};

		for (size_t i = 0; i < res.n_unfinished; i++)
			tb_printf(&dirs, "%s%s", i ? ", " : "", res.unfinished[i]);
		note(r,
		     "warning: the dotfile scan stopped after %llu entries "
		     "(cwd_hidden_scan_max_entries); dotfiles in %zu unscanned director%s stay "
		     "visible: %s%s; raise cwd_hidden_scan_max_entries or set "
		     "cwd_hidden_scan_overflow: unlimited (or error to refuse the launch)",
		     (unsigned long long)res.visited, res.n_unfinished_total,
		     res.n_unfinished_total == 1 ? "y" : "ies", dirs.data ? dirs.data : "",
		     res.n_unfinished_total > res.n_unfinished ? ", ..." : "");
		tb_free(&dirs);
	}
	for (size_t i = 0; i < res.n_hits; i++) {
		const char *path = arena_strdup(r->a, res.hits[i].path);
		bool opt_in_below = false;

		/* Naming a dotfile in a grant is the opt-in for exactly that path. */
		if (granted_explicitly(sb, path))
			continue;
		for (size_t k = 0; k < 2; k++)
			for (size_t j = 0; j < lists[k]->n; j++) {
				const char *g = lists[k]->v[j].symbolic;

				if (path_within(g, path) && strcmp(g, path)) {
					struct bwrap_bind *b = ARENA_PUSH(
					    r->a, r->reexpose, r->n_reexpose, r->cap_reexpose);

					b->path = g;
					b->writable = k == 1;
					opt_in_below = true;
				}
			}
		(void)opt_in_below;
		add_mask(r, path, res.hits[i].kind == SCAN_DIR, "dotfile");
	}
	scan_result_free(&res);
	return 0;
}

/*
 * mask_paths: hide each path, existing or not.  A missing one is hidden at
 * its first missing component, so the agent cannot create it: when that
 * component's parent is writable inside the sandbox, an empty placeholder
 * is created there and masked, and removed after the run.
 */
static int
resolve_mask_paths(struct rctx *r)
{
	const struct ir_pathlist *l = &r->plan->policy->os_env.sandbox.mask_paths;

	for (size_t i = 0; i < l->n; i++) {
		const char *path = l->v[i].symbolic;
		const char *reason = arena_printf(r->a, "mask_paths (line %u)", l->v[i].loc.line);
		struct stat st;
		char *first;

		if (lstat(path, &st) == 0) {
			if (S_ISLNK(st.st_mode))
				note(r, "mask_paths %s is a dangling symlink; nothing to hide",
				     path);
			else
				add_mask(r, path, S_ISDIR(st.st_mode), reason);
			continue;
		}
		/* Find the first component that does not exist. */
		first = arena_strdup(r->a, path);
		for (;;) {
			char *parent = path_dirname(r->a, first);

			if (lstat(parent, &st) == 0 || !strcmp(parent, "/"))
				break;
			first = parent;
		}
		if (!writable_inside(r, first)) {
			/* Nothing in the sandbox can create it. */
			continue;
		}
		{
			bool dir = strcmp(first, path) != 0;

			if (r->rq->create_placeholders) {
				int rc =
				    dir ? mkdir(first, 0)
					: open(first,
					       O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC | O_NOFOLLOW,
					       0);

				if (rc < 0)
					return fail(r, "cannot create a placeholder to mask %s: %s",
						    first, strerror(errno));
				if (!dir)
					close(rc);
				*ARENA_PUSH(r->a, r->plan->placeholders, r->plan->n_placeholders,
					    r->cap_placeholders) = first;
			}
			add_mask(
			    r, first, dir,
			    arena_printf(r->a, "%s, missing: placeholder %s%s", reason, first,
					 r->rq->create_placeholders ? "" : " created at launch"));
		}
	}
	return 0;
}

static void
resolve_sockets(struct rctx *r)
{
	const struct ir_pathlist *l = &r->plan->policy->os_env.sandbox.deny_unix_socket_paths;

	for (size_t i = 0; i < l->n; i++) {
		const char *path = l->v[i].symbolic;
		struct stat st;

		if (lstat(path, &st) < 0 || S_ISDIR(st.st_mode) || !visible_inside(r, path))
			continue;
		*ARENA_PUSH(r->a, r->sockets, r->n_sockets, r->cap_sockets) = path;
	}
}

/* ---- the command ------------------------------------------------------------------ */

/*
 * Make the program at PATH (canonical) visible in the sandbox: nothing to
 * do inside the system directories or a grant; otherwise its own directory
 * is bound read-only, but never "/", the home directory or a parent of it.
 */
static int
make_visible(struct rctx *r, const char *what, const char *path)
{
	const char *dir;

	if (bwrap_path_is_system(path))
		return 0;
	if (visible_inside(r, path)) {
		for (size_t i = 0; i < r->n_masks; i++)
			if (path_within(path, r->masks[i].path))
				return fail(r,
					    "%s %s is inside the hidden path %s; name it in "
					    "cwd_allow_hidden (or move the program) to run it",
					    what, path, r->masks[i].path);
		return 0;
	}
	dir = path_dirname(r->a, path);
	if (!strcmp(dir, "/") || path_within(r->plan->ctx.home, dir))
		return fail(r,
			    "%s %s lives directly in %s; omnibox will not expose that whole "
			    "directory: install the program in a directory of its own",
			    what, path, dir);
	for (size_t i = 0; i < r->n_command_dirs; i++)
		if (!strcmp(r->command_dirs[i], dir))
			return 0;
	*ARENA_PUSH(r->a, r->command_dirs, r->n_command_dirs, r->cap_command_dirs) = dir;
	return 0;
}

/* A script's interpreter must be visible too ("#!/usr/bin/env node" included). */
static int
resolve_interpreter(struct rctx *r, const char *script)
{
	const char *interp, *canon;

	if (launch_script_interpreter(r->a, r->rq->environ, script, &interp, r->err, r->errlen) < 0)
		return -1;
	if (!interp)
		return 0;
	canon = resolve_canonical(r->a, interp);
	return canon ? make_visible(r, "the interpreter", canon) : 0;
}

static int
resolve_command(struct rctx *r)
{
	const struct launch_request *rq = r->rq;
	const struct terminal *t = r->plan->policy->terminal;
	const char *name, *found, *start;
	char *canon;
	size_t n;

	if (rq->command && rq->n_command) {
		r->plan->argv = arena_alloc(r->a, (rq->n_command + 1) * sizeof(char *));
		for (n = 0; n < rq->n_command; n++)
			r->plan->argv[n] = arena_strdup(r->a, rq->command[n]);
	} else if (t) {
		r->plan->argv = arena_alloc(r->a, (t->args.n + 2) * sizeof(char *));
		r->plan->argv[0] = arena_strdup(r->a, t->command.s);
		for (n = 0; n < t->args.n; n++)
			r->plan->argv[n + 1] = arena_strdup(r->a, t->args.v[n].s);
		n++;
	} else if (rq->command_optional) {
		r->plan->argv = arena_alloc(r->a, 2 * sizeof(char *));
		r->plan->argv[0] = arena_strdup(r->a, "{COMMAND}");
		r->plan->argc = 1;
		r->plan->exec_path = "{COMMAND}";
		return 0;
	} else {
		return fail(r, "no command: give one after '--', or a terminal with --terminal");
	}
	r->plan->argc = n;
	name = r->plan->argv[0];
	start = r->plan->policy->os_env.start_in_scratch.value ? r->plan->ctx.scratch
							       : r->plan->workspace;
	if (strchr(name, '/'))
		found = name[0] == '/' ? name : path_join(r->a, start, name);
	else
		found = launch_find_in_path(r->a, r->rq->environ, name);
	if (!found || access(found, X_OK) < 0)
		return fail(r, "command '%s' not found%s", name,
			    strchr(name, '/') ? "" : " in PATH");
	canon = resolve_canonical(r->a, found);
	if (!canon)
		return fail(r, "command '%s': %s", found, strerror(errno));
	r->plan->exec_path = canon;
	if (make_visible(r, "the command", canon) < 0)
		return -1;
	return resolve_interpreter(r, canon);
}

/* ---- environment ------------------------------------------------------------------ */

static void
build_env(struct rctx *r)
{
	struct launch_env e = {
	    .scratch = r->plan->ctx.scratch,
	    .pwd = r->plan->policy->os_env.start_in_scratch.value ? r->plan->ctx.scratch
								  : r->plan->workspace,
	    .extra = r->rq->extra_env,
	    .n_extra = r->rq->n_extra_env,
	};

	if (r->plan->policy->os_env.sandbox.n_egress) {
		e.proxy_url = arena_printf(r->a, "http://127.0.0.1:%s",
					   r->rq->proxy_port ? r->rq->proxy_port : "{PORT}");
		e.ca_bundle = arena_printf(r->a, "%s/%s", r->plan->ctx.scratch, ENV_CA_BUNDLE);
	}
	r->plan->env = launch_env_build(r->a, r->plan->policy, r->rq->environ, &e);
}

/* ---- the whole launch -------------------------------------------------------------- */

static struct policy *
copy_policy(struct arena *a, const struct policy *p)
{
	struct policy *c = arena_alloc(a, sizeof(*c));

	*c = *p;
	return c;
}

static int
resolve_workspace(struct rctx *r)
{
	const struct launch_request *rq = r->rq;
	const struct os_env *env = &rq->policy->os_env;
	const char *ws;
	char *canon;

	if (rq->cwd) {
		ws = rq->cwd[0] == '/' ? rq->cwd : path_join(r->a, rq->launch_dir, rq->cwd);
	} else if (env->cwd.s) {
		r->plan->workspace = r->rq->launch_dir; /* base for PATH_CWD, unused here */
		ws = resolve_ir_path(r, &env->cwd_path, rq->launch_dir);
	} else {
		ws = rq->launch_dir;
	}
	canon = resolve_canonical(r->a, ws);
	if (!canon || !is_dir(canon))
		return fail(r, "the workspace %s is not a directory", ws);
	if (!strcmp(canon, "/"))
		return fail(r, "the workspace cannot be /: run omnibox-run from a project "
			       "directory, or set os_env.cwd");
	r->plan->workspace = canon;
	return 0;
}

int
launch_resolve(struct arena *a, const struct launch_request *rq, struct launch_plan *plan,
	       char *err, size_t errlen)
{
	struct rctx r = {.a = a, .rq = rq, .plan = plan, .err = err, .errlen = errlen};
	struct sandbox *sb;
	char *home;

	memset(plan, 0, sizeof(*plan));
	plan->policy = copy_policy(a, rq->policy);
	sb = &plan->policy->os_env.sandbox;
	home = resolve_canonical(a, rq->home);
	plan->ctx.resolved = true;
	plan->ctx.home = home ? home : rq->home;
	plan->ctx.scratch = rq->scratch;
	plan->ctx.init = rq->init;
	plan->ctx.seccomp_fd = rq->seccomp_fd;
	plan->ctx.status_fd = rq->status_fd;
	if (resolve_workspace(&r) < 0)
		return -1;
	{
		struct bwrap_link *links = arena_alloc(a, 8 * sizeof(*links));
		size_t n = 0;

		for (size_t i = 0; bwrap_system_dirs[i] && n < 8; i++) {
			char target[PATH_MAX];
			ssize_t len = readlink(bwrap_system_dirs[i], target, sizeof(target) - 1);

			/* Only a link to a system directory (usr/bin): anything
			 * else is bound as the spec says, target and all. */
			if (len <= 0)
				continue;
			target[len] = '\0';
			if (target[0] == '/' ? !bwrap_path_is_system(target)
					     : strncmp(target, "usr/", 4) != 0)
				continue;
			links[n].path = bwrap_system_dirs[i];
			links[n].target = arena_strdup(a, target);
			n++;
		}
		plan->ctx.system_links = links;
		plan->ctx.n_system_links = n;
	}
	plan->ctx.cwd = plan->workspace;

	resolve_list(&r, &sb->write_paths);
	resolve_list(&r, &sb->read_paths);
	resolve_list(&r, &sb->write_files);
	resolve_list(&r, &sb->mask_paths);
	resolve_list(&r, &sb->deny_unix_socket_paths);
	for (size_t k = 0; k < 2; k++) {
		const struct ir_pathlist *l = k ? &sb->write_paths : &sb->read_paths;

		for (size_t i = 0; i < l->n; i++)
			if (!strcmp(l->v[i].symbolic, "/") && !plan->ctx.root_dirs)
				list_root_dirs(&r);
	}

	if (run_scan(&r) < 0 || resolve_mask_paths(&r) < 0)
		goto fail;
	if (r.n_masks) {
		size_t j = 0;

		/* After sorting, a mask inside a hidden directory is redundant, and
		 * bwrap could not create its mount point in the read-only tmpfs. */
		qsort(r.masks, r.n_masks, sizeof(r.masks[0]), cmp_mask);
		for (size_t i = 0; i < r.n_masks; i++) {
			if (j && r.masks[j - 1].is_dir &&
			    path_within(r.masks[i].path, r.masks[j - 1].path))
				continue;
			r.masks[j++] = r.masks[i];
		}
		r.n_masks = j;
	}
	resolve_sockets(&r);
	plan->ctx.masks = r.masks;
	plan->ctx.n_masks = r.n_masks;
	if (resolve_command(&r) < 0)
		goto fail;
	build_env(&r);

	*ARENA_PUSH(a, r.init_args, r.n_init_args, r.cap_init_args) = "--exec";
	*ARENA_PUSH(a, r.init_args, r.n_init_args, r.cap_init_args) = plan->exec_path;
	if (sb->n_egress) {
		/* The relay omnibox-init starts before the command: the sandbox's
		 * only way out, to the proxy's socket in the scratch dir. */
		*ARENA_PUSH(a, r.init_args, r.n_init_args, r.cap_init_args) = "--relay";
		*ARENA_PUSH(a, r.init_args, r.n_init_args, r.cap_init_args) =
		    rq->proxy_port ? rq->proxy_port : "{PORT}";
		*ARENA_PUSH(a, r.init_args, r.n_init_args, r.cap_init_args) =
		    rq->proxy_socket ? rq->proxy_socket
				     : arena_printf(a, "%s/%s", rq->scratch, LAUNCH_PROXY_SOCKET);
	}
	{
		/* Resource limits: set by omnibox-init on itself, inherited by the agent. */
		const struct limits *l = &sb->limits;
		const struct {
			const char *opt;
			const struct ir_u64 *v;
		} rl[] = {{"--rlimit-as", &l->memory},
			  {"--rlimit-cpu", &l->cpu_time},
			  {"--rlimit-nofile", &l->open_files},
			  {"--rlimit-nproc", &l->processes}};

		for (size_t i = 0; i < sizeof(rl) / sizeof(rl[0]); i++) {
			if (!rl[i].v->present)
				continue;
			*ARENA_PUSH(a, r.init_args, r.n_init_args, r.cap_init_args) = rl[i].opt;
			*ARENA_PUSH(a, r.init_args, r.n_init_args, r.cap_init_args) =
			    arena_printf(a, "%llu", (unsigned long long)rl[i].v->value);
		}
	}

	plan->ctx.reexpose = r.reexpose;
	plan->ctx.n_reexpose = r.n_reexpose;
	plan->ctx.sockets = r.sockets;
	plan->ctx.n_sockets = r.n_sockets;
	plan->ctx.command_dirs = r.command_dirs;
	plan->ctx.n_command_dirs = r.n_command_dirs;
	plan->ctx.init_args = r.init_args;
	plan->ctx.n_init_args = r.n_init_args;
	plan->ctx.command = (const char *const *)plan->argv;
	plan->ctx.n_command = plan->argc;
	return 0;
fail:
	launch_cleanup(plan);
	return -1;
}

void
launch_describe(const struct launch_plan *plan, struct textbuf *out)
{
	bwrap_build(plan->policy, &plan->ctx, NULL, out, NULL);
	tb_puts(out, "# environment (values not shown):");
	for (size_t i = 0; plan->env[i]; i++)
		tb_printf(out, " %.*s", (int)strcspn(plan->env[i], "="), plan->env[i]);
	tb_printf(out, "\n# scratch dir: %s (a new one per launch, mode 0700, removed on exit)\n",
		  plan->ctx.scratch);
	for (size_t i = 0; i < plan->n_notes; i++)
		tb_printf(out, "# %s\n", plan->notes[i]);
}

char *
launch_find_init(struct arena *a, const char *exe_dir)
{
	char *cand = arena_printf(a, "%s/omnibox-init", exe_dir);

	if (access(cand, X_OK) == 0)
		return cand;
	cand = arena_printf(a, "%s/../libexec/omnibox/omnibox-init", exe_dir);
	if (access(cand, X_OK) == 0)
		return resolve_canonical(a, cand);
	return NULL;
}

void
launch_cleanup(const struct launch_plan *plan)
{
	for (size_t i = plan->n_placeholders; i-- > 0;) {
		const char *p = plan->placeholders[i];

		/* Only what is still our empty placeholder. */
		if (rmdir(p) < 0 && errno == ENOTDIR) {
			struct stat st;

			if (lstat(p, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0)
				unlink(p);
		}
	}
}

static int
rmtree_at(int dirfd, const char *name)
{
	int fd, rc = 0;
	DIR *d;
	struct dirent *e;

	if (unlinkat(dirfd, name, 0) == 0 || errno == ENOENT)
		return 0;
	if (errno != EISDIR && errno != EPERM)
		return -errno;
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == EACCES) {
		/* The agent may have made a directory unreadable. */
		fchmodat(dirfd, name, 0700, 0);
		fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd < 0)
		return -errno;
	fchmod(fd, 0700);
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			int sub = rmtree_at(fd, e->d_name);

			if (sub < 0 && rc == 0)
				rc = sub;
		}
	closedir(d);
	if (unlinkat(dirfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT && rc == 0)
		rc = -errno;
	return rc;
}

int
rmtree(const char *path)
{
	return rmtree_at(AT_FDCWD, path);
}
