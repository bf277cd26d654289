/*
 * emit_sbpl.c - the Seatbelt profile (--emit=sbpl) and its parameters
 * (--emit=sbpl-params), symbolic or resolved.
 *
 * The order of the profile is the security argument: every allow, then
 * every deny.  An exception to a deny (cwd_allow_hidden, a grant naming a
 * dotfile, a grant inside ~/Library) is part of the deny's own filter
 * (require-not), never a later allow, so no rule depends on Seatbelt's
 * conflict resolution.  The network allows (spec section 10) are written
 * before the denies (sections 8, 9) for the same reason.
 *
 * Dotfiles are masked without a scan: for each root (the workspace and
 * every read_paths/write_paths entry outside it) two regular expressions
 * say "strictly below the root" and "every component below the root is
 * either not hidden or named in cwd_allow_hidden" (recursive) or "the first
 * component is ..." (top level only); the deny is the first minus the
 * second.  That is exactly the set of paths the Linux scan would hide at
 * that moment, and it also covers dotfiles created later.
 */
#include "../compiler/decide/hidden.h"
#include "../compiler/decide/protect.h"
#include "emit.h"
#include "sbpl.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const param_names[SBPL_PARAM_COUNT] = {
    "CWD", "HOME", "SCRATCH", "CWD_RE", "HOME_RE", "SCRATCH_RE", "PORT", "SOCK",
};

/* Read-only system roots (spec section 4): subpaths, then the symlinks themselves. */
static const char *const system_literals[] = {"/", "/etc", "/var", "/tmp", NULL};


const char *
sbpl_param_name(enum sbpl_param p)
{
	return param_names[p];
}

/* ---- strings ------------------------------------------------------------------ */

int
sbpl_put_string(struct textbuf *out, const char *s)
{
	for (const char *p = s; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return -1;
	tb_putc(out, '"');
	for (const char *p = s; *p; p++) {
		if (*p == '\\' || *p == '"')
			tb_putc(out, '\\');
		tb_putc(out, *p);
	}
	tb_putc(out, '"');
	return 0;
}

void
sbpl_regex_escape(struct textbuf *out, const char *s)
{
	for (const char *p = s; *p; p++) {
		if (strchr("\\.[](){}*+?|^$", *p))
			tb_putc(out, '\\');
		tb_putc(out, *p);
	}
}

/* ---- paths -------------------------------------------------------------------- */



/* Does PATH hold a ".." segment at or after P? */
static bool
has_dotdot(const char *p)
{
	for (; *p; p++)
		if (p[0] == '/' && p[1] == '.' && p[2] == '.' && (p[3] == '/' || p[3] == '\0'))
			return true;
	return false;
}

/* Is symbolic PATH equal to DIR or below it, with no ".." on the way? */
static bool
sym_within(const char *path, const char *dir)
{
	return path_within(path, dir) && !has_dotdot(strcmp(dir, "/") ? path + strlen(dir) : path);
}

static bool
path_below(const char *path, const char *dir)
{
	return sym_within(path, dir) && strcmp(path, dir);
}

/* PATH below DIR, without the slash ("" when equal). */
static const char *
path_rest(const char *path, const char *dir)
{
	size_t n = strcmp(dir, "/") ? strlen(dir) : 0;

	return path[n] == '/' ? path + n + 1 : path + n;
}

/* ---- the builder -------------------------------------------------------------- */

/* Settings a profile can grow with, to name the culprit of an oversized one. */
enum cost {
	COST_FIXED,
	COST_READ_PATHS,
	COST_WRITE_PATHS,
	COST_WRITE_FILES,
	COST_MASK_PATHS,
	COST_SOCKETS,
	COST_ALLOW_HIDDEN,
	COST_COMMAND,
	COST_HIDDEN_LIST,
	COST_COUNT,
};

struct root {
	const char *path;
	const char *what; /* "the workspace", "read_paths (line 9)" */
	enum cost cost;
};

/* A parameter a path can be written relative to: CWD, HOME, SCRATCH, or the
 * parameter of its own of a path that climbs out of its base. */
struct base {
	const char *name, *re_name;
	enum sbpl_param id, re_id; /* SBPL_PARAM_COUNT for an extra */
	const char *match;	   /* the value as paths in this context spell it */
	const char *display;	   /* an extra's value in --emit=sbpl-params */
	bool used, re_used;
};

struct b {
	struct arena *a;
	const struct policy *p;
	const struct sandbox *sb;
	const struct sbpl_context *c;
	struct diag *d;
	struct textbuf *out;
	struct sbpl_params params;
	bool failed;
	size_t spent[COST_COUNT];
	const char *cwd; /* the workspace as a path in this context */
	bool ws_writable;
	struct root *roots;
	size_t n_roots, cap_roots;
	struct base *bases; /* what a path may be written relative to */
	size_t n_bases, cap_bases;
	const char **prot; /* protected_paths(), once made */
	size_t n_prot;
	bool prot_made;
};

static void put(struct b *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
put(struct b *b, const char *fmt, ...)
{
	va_list ap;

	if (!strchr(fmt, '%')) {
		tb_puts(b->out, fmt);
		return;
	}
	va_start(ap, fmt);
	tb_vprintf(b->out, fmt, ap);
	va_end(ap);
}

/* A comment line; any control byte (a resolved path may hold one) becomes '?'
 * so nothing can end the comment early. */
static void comment(struct b *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
comment(struct b *b, const char *fmt, ...)
{
	va_list ap;
	size_t from;

	tb_puts(b->out, "; ");
	from = b->out->len;
	va_start(ap, fmt);
	tb_vprintf(b->out, fmt, ap);
	va_end(ap);
	for (char *p = b->out->data + from; p < b->out->data + b->out->len; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	tb_putc(b->out, '\n');
}

static void
use_param(struct b *b, enum sbpl_param p)
{
	b->params.used[p] = true;
}

static void
put_param(struct b *b, enum sbpl_param p)
{
	use_param(b, p);
	put(b, "(param \"%s\")", param_names[p]);
}

static void
put_base(struct b *b, struct base *base, bool re)
{
	if (re && base->re_id != SBPL_PARAM_COUNT)
		use_param(b, base->re_id);
	else if (!re && base->id != SBPL_PARAM_COUNT)
		use_param(b, base->id);
	if (re)
		base->re_used = true;
	else
		base->used = true;
	put(b, "(param \"%s\")", re ? base->re_name : base->name);
}

static void
put_str(struct b *b, const char *s, struct loc loc, const char *what)
{
	if (sbpl_put_string(b->out, s) == 0)
		return;
	if (!b->failed || loc.line)
		diag_error(b->d, loc,
			   "%s holds a control character, which a Seatbelt profile cannot "
			   "carry",
			   what);
	b->failed = true;
	tb_puts(b->out, "\"\"");
}

static void
add_base(struct b *b, const char *name, enum sbpl_param id, enum sbpl_param re_id,
	 const char *match, const char *display)
{
	struct base *x = ARENA_PUSH(b->a, b->bases, b->n_bases, b->cap_bases);

	x->name = name;
	x->re_name = arena_printf(b->a, "%s_RE", name);
	x->id = id;
	x->re_id = re_id;
	x->match = match;
	x->display = display;
}

/* The base whose value is the longest prefix of S, or NULL. */
static struct base *
param_prefix(const struct b *b, const char *s)
{
	struct base *best = NULL;
	size_t best_len = 0;

	for (size_t i = 0; i < b->n_bases; i++) {
		const char *v = b->bases[i].match;
		size_t n = v ? strlen(v) : 0;

		if (n < 2 || strncmp(s, v, n) || (s[n] != '/' && s[n] != '\0'))
			continue;
		if (n > best_len) {
			best = &b->bases[i];
			best_len = n;
		}
	}
	return best;
}

/* A path as an SBPL string expression, relative to a parameter where it can be. */
static void
put_path(struct b *b, const char *s, struct loc loc, const char *what)
{
	struct base *k = param_prefix(b, s);

	if (!k) {
		put_str(b, s, loc, what);
		return;
	}
	if (s[strlen(k->match)] == '\0') {
		put_base(b, k, false);
		return;
	}
	put(b, "(string-append ");
	put_base(b, k, false);
	put(b, " ");
	put_str(b, s + strlen(k->match), loc, what);
	put(b, ")");
}

/* (regex "^ROOT" TAIL) with ROOT escaped: through a *_RE parameter where ROOT
 * starts with a parameter's value (the runtime escapes those values). */
static void
put_regex(struct b *b, const char *root, const char *tail, struct loc loc, const char *what)
{
	struct textbuf t = {0};
	struct base *k = param_prefix(b, root);

	put(b, "(regex ");
	if (k) {
		put(b, "(string-append \"^\" ");
		put_base(b, k, true);
		sbpl_regex_escape(&t, root + strlen(k->match));
		tb_puts(&t, tail);
		put(b, " ");
		put_str(b, t.data, loc, what);
		put(b, ")");
	} else {
		tb_putc(&t, '^');
		if (strcmp(root, "/"))
			sbpl_regex_escape(&t, root);
		tb_puts(&t, tail);
		put_str(b, t.data, loc, what);
	}
	put(b, ")");
	tb_free(&t);
}

/* "READ_PATHS_2" for the second entry of read_paths. */
static const char *
entry_param_name(struct b *b, const struct ir_path *ip)
{
	const struct sandbox *sb = b->sb;
	const struct ir_pathlist *lists[] = {&sb->read_paths, &sb->write_paths, &sb->write_files,
					     &sb->mask_paths, &sb->deny_unix_socket_paths};
	static const char *const names[] = {"READ_PATHS", "WRITE_PATHS", "WRITE_FILES",
					    "MASK_PATHS", "DENY_UNIX_SOCKET_PATHS"};

	for (size_t k = 0; k < 5; k++)
		if (lists[k]->n && ip >= lists[k]->v && ip < lists[k]->v + lists[k]->n)
			return arena_printf(b->a, "%s_%zu", names[k],
					    (size_t)(ip - lists[k]->v) + 1);
	return "PATH";
}

/* The path an IR path names in this context. */
static const char *
ir_path_string(struct b *b, const struct ir_path *ip)
{
	const char *base;

	switch (ip->base) {
	case PATH_ABSOLUTE:
		return b->c->resolved ? arena_printf(b->a, "/%s", ip->rel)
				      : paths_darwin_spelling(b->a, ip->symbolic);
	case PATH_CWD:
		base = b->cwd;
		break;
	case PATH_HOME:
		base = b->c->home;
		break;
	default:
		base = "{LAUNCH}";
		break;
	}
	if (!ip->rel[0])
		return base;
	if (b->c->resolved)
		return paths_darwin_spelling(b->a, arena_printf(b->a, "%s/%s", base, ip->rel));
	{
		char *rel = path_collapse(b->a, ip->rel, false);
		const char *name, *match;

		if (strncmp(rel, "..", 2) || (rel[2] != '/' && rel[2] != '\0'))
			return *rel ? arena_printf(b->a, "%s/%s", base, rel) : base;
		/* Out of its base: a parameter of its own, canonical at launch. */
		name = entry_param_name(b, ip);
		match = arena_printf(b->a, "{%s}", name);
		if (!param_prefix(b, match))
			add_base(b, name, SBPL_PARAM_COUNT, SBPL_PARAM_COUNT, match,
				 arena_printf(b->a, "%s/%s", base, rel));
		return match;
	}
}

static const char *
list_what(struct b *b, const char *key, const struct ir_path *ip)
{
	return arena_printf(b->a, "%s (line %u) %s", key, ip->loc.line, ip->written);
}

/* ---- sections ----------------------------------------------------------------- */

static void
emit_baseline(struct b *b)
{
	put(b, "\n");
	comment(b, "2. process baseline");
	put(b, "(allow process-fork)\n"
	       "(allow process-exec*)\n"
	       "(allow process-info* (target self))\n"
	       "(allow signal (target self))\n"
	       "(allow mach-lookup)\n"
	       "(allow ipc-posix-shm)\n"
	       "(allow ipc-posix-sem)\n"
	       "(allow sysctl-read)\n"
	       "(allow file-ioctl)\n"
	       "(allow file-read-metadata)\n");

	put(b, "\n");
	comment(b, "3. devices: read /dev; write only the null device, the terminal and dtrace's "
		   "helper");
	put(b, "(allow file-read* (subpath \"/dev\"))\n"
	       "(allow file-write-data\n"
	       "\t(literal \"/dev/null\")\n"
	       "\t(literal \"/dev/tty\")\n"
	       "\t(literal \"/dev/dtracehelper\"))\n");
	if (b->p->terminal) {
		comment(b, "terminal %s (line %u) runs in a pseudo-terminal", b->p->terminal->name,
			b->p->terminal->loc.line);
		put(b, "(allow file-write-data\n"
		       "\t(literal \"/dev/ptmx\")\n"
		       "\t(regex \"^/dev/ttys[0-9]+$\"))\n");
	}

	put(b, "\n");
	comment(b, "4. system, read-only");
	put(b, "(allow file-read*");
	for (size_t i = 0; paths_darwin_system_dirs[i]; i++)
		put(b, "\n\t(subpath \"%s\")", paths_darwin_system_dirs[i]);
	for (size_t i = 0; system_literals[i]; i++)
		put(b, "\n\t(literal \"%s\")", system_literals[i]);
	put(b, ")\n");
	if (!b->c->resolved) {
		comment(b, "the per-user dyld cache dir: added at launch when it exists");
	} else if (b->c->dyld_cache_dir) {
		comment(b, "the per-user dyld cache dir");
		put(b, "(allow file-read* (subpath ");
		put_path(b, b->c->dyld_cache_dir, (struct loc){0}, "the dyld cache dir");
		put(b, "))\n");
	}
}

static const struct ir_path *
workspace_write_grant(struct b *b)
{
	const struct ir_pathlist *w = &b->sb->write_paths;

	for (size_t i = 0; i < w->n; i++)
		if (!strcmp(ir_path_string(b, &w->v[i]), b->cwd))
			return &w->v[i];
	return NULL;
}

static void
emit_grants(struct b *b)
{
	const struct sandbox *sb = b->sb;
	const struct ir_path *ws = workspace_write_grant(b);
	const struct os_env *env = &b->p->os_env;
	size_t mark;

	b->ws_writable = ws != NULL;
	put(b, "\n");
	if (ws)
		comment(b, "5. workspace, writable: write_paths (line %u) names it", ws->loc.line);
	else
		comment(b, "5. workspace, read-only: no write_paths entry names it");
	if (env->cwd.s)
		comment(b, "os_env.cwd (line %u): %s", env->cwd.loc.line, env->cwd.s);
	put(b, ws ? "(allow file-read* file-write* (subpath " : "(allow file-read* (subpath ");
	put_path(b, b->cwd, env->cwd.loc, "os_env.cwd");
	put(b, "))\n");

	put(b, "\n");
	mark = b->out->len;
	comment(b, "6. the command's install directory, read-only, when outside the system "
		   "directories");
	comment(b, "   and the grants%s; never /, /Users, /private, /var or the",
		b->c->resolved ? "" : " (added at launch)");
	comment(b, "   home directory: the launch is refused instead");
	for (size_t i = 0; i < b->c->n_command_dirs; i++) {
		const char *dir = b->c->command_dirs[i];

		/* The resolver refused the directories that would widen the sandbox. */
		put(b, "(allow file-read* (subpath ");
		put_path(b, dir, (struct loc){0}, "the command's directory");
		put(b, "))\n");
	}
	b->spent[COST_COMMAND] += b->out->len - mark;

	put(b, "\n");
	comment(b, "7. the private scratch dir ($TMPDIR), read-write");
	put(b, "(allow file-read* file-write* (subpath ");
	put_path(b, b->c->scratch, (struct loc){0}, "the scratch dir");
	put(b, "))\n");
	for (size_t i = 0; i < sb->read_paths.n; i++) {
		const struct ir_path *ip = &sb->read_paths.v[i];

		mark = b->out->len;
		comment(b, "read_paths (line %u): %s, read-only", ip->loc.line, ip->written);
		put(b, "(allow file-read* (subpath ");
		put_path(b, ir_path_string(b, ip), ip->loc, list_what(b, "read_paths", ip));
		put(b, "))\n");
		b->spent[COST_READ_PATHS] += b->out->len - mark;
	}
	for (size_t i = 0; i < sb->write_paths.n; i++) {
		const struct ir_path *ip = &sb->write_paths.v[i];
		const char *s = ir_path_string(b, ip);

		if (!strcmp(s, b->cwd))
			continue; /* the workspace, above */
		mark = b->out->len;
		comment(b, "write_paths (line %u): %s, read-write", ip->loc.line, ip->written);
		put(b, "(allow file-read* file-write* (subpath ");
		put_path(b, s, ip->loc, list_what(b, "write_paths", ip));
		put(b, "))\n");
		b->spent[COST_WRITE_PATHS] += b->out->len - mark;
	}
	for (size_t i = 0; i < sb->write_files.n; i++) {
		const struct ir_path *ip = &sb->write_files.v[i];

		mark = b->out->len;
		comment(b, "write_files (line %u): %s, read-write, this file only", ip->loc.line,
			ip->written);
		put(b, "(allow file-read* file-write* (literal ");
		put_path(b, ir_path_string(b, ip), ip->loc, list_what(b, "write_files", ip));
		put(b, "))\n");
		b->spent[COST_WRITE_FILES] += b->out->len - mark;
	}
}

static void
put_local_port(struct b *b)
{
	put(b, "(string-append \"localhost:\" ");
	put_param(b, SBPL_PARAM_PORT);
	put(b, ")");
}

static void
emit_network(struct b *b)
{
	const struct sandbox *sb = b->sb;

	put(b, "\n");
	if (sb->n_egress) {
		comment(b,
			"10. network: egress_rules (line %u): nothing but the relay on loopback "
			"port PORT, which",
			sb->egress_loc.line);
		comment(b, "    forwards to the egress proxy's socket SOCK outside the sandbox "
			   "(written before the denies)");
		put(b, "(allow network-bind (local ip ");
		put_local_port(b);
		put(b, "))\n(allow network-inbound (local ip ");
		put_local_port(b);
		put(b, "))\n(allow network-outbound (remote ip ");
		put_local_port(b);
		put(b, "))\n(allow network-outbound (remote unix-socket (path-literal ");
		put_param(b, SBPL_PARAM_SOCK);
		put(b, ")))\n");
	} else if (sb->allow_network.value) {
		if (sb->allow_network.loc.line)
			comment(b, "10. network: allow_network: true (line %u)",
				sb->allow_network.loc.line);
		else
			comment(b, "10. network: allowed (allow_network defaults to true)");
		put(b, "(allow network*)\n");
	} else {
		comment(b,
			"10. network: allow_network: false (line %u): no network operation is "
			"allowed,",
			sb->allow_network.loc.line);
		comment(b, "    (deny default) refuses them all");
	}
}

/* ---- dotfiles ----------------------------------------------------------------- */

static void
add_root(struct b *b, const char *path, const char *what, enum cost cost)
{
	struct root *r;

	for (size_t i = 0; i < b->n_roots; i++)
		if (!strcmp(b->roots[i].path, path))
			return;
	r = ARENA_PUSH(b->a, b->roots, b->n_roots, b->cap_roots);
	r->path = path;
	r->what = what;
	r->cost = cost;
}

static void
collect_roots(struct b *b)
{
	const struct ir_pathlist *lists[] = {&b->sb->read_paths, &b->sb->write_paths};
	static const char *const keys[] = {"read_paths", "write_paths"};
	static const enum cost costs[] = {COST_READ_PATHS, COST_WRITE_PATHS};

	add_root(b, b->cwd, "the workspace", COST_ALLOW_HIDDEN);
	for (size_t k = 0; k < 2; k++)
		for (size_t i = 0; i < lists[k]->n; i++) {
			const struct ir_path *ip = &lists[k]->v[i];
			const char *s = ir_path_string(b, ip);

			/* Inside the workspace the workspace's own rule applies, as the
			 * Linux scan covers it from the workspace root. */
			if (sym_within(s, b->cwd))
				continue;
			add_root(b, s,
				 arena_printf(b->a, "%s (line %u) %s", keys[k], ip->loc.line,
					      ip->written),
				 costs[k]);
		}
}

/* Every path the sandbox grants explicitly: an opt-in when it names a hidden path. */
static size_t
collect_grants(struct b *b, const char ***out)
{
	const struct ir_pathlist *lists[] = {&b->sb->read_paths, &b->sb->write_paths,
					     &b->sb->write_files};
	const char **v = NULL;
	size_t n = 0, cap = 0;

	*ARENA_PUSH(b->a, v, n, cap) = b->cwd;
	*ARENA_PUSH(b->a, v, n, cap) = b->c->scratch;
	for (size_t k = 0; k < 3; k++)
		for (size_t i = 0; i < lists[k]->n; i++)
			*ARENA_PUSH(b->a, v, n, cap) = ir_path_string(b, &lists[k]->v[i]);
	*out = v;
	return n;
}

static void
allow_list_text(struct b *b, struct textbuf *t)
{
	const struct ir_strlist *l = &b->sb->cwd_allow_hidden;

	if (!l->n) {
		tb_puts(t, "no exceptions (cwd_allow_hidden: []");
		if (l->loc.line)
			tb_printf(t, ", line %u", l->loc.line);
		tb_puts(t, ")");
		return;
	}
	tb_puts(t, "except ");
	for (size_t i = 0; i < l->n; i++)
		tb_printf(t, "%s%s", i ? " " : "", l->v[i].s);
	if (l->loc.line)
		tb_printf(t, " (cwd_allow_hidden, line %u)", l->loc.line);
	else
		tb_puts(t, " (cwd_allow_hidden, the default)");
}

/* The regex of a path component that stays visible: not hidden, or allowed. */
static void
visible_component_re(struct b *b, struct textbuf *t)
{
	const struct ir_strlist *l = &b->sb->cwd_allow_hidden;

	tb_puts(t, "([^./][^/]*");
	for (size_t i = 0; i < l->n; i++) {
		tb_putc(t, '|');
		sbpl_regex_escape(t, l->v[i].s);
	}
	tb_puts(t, ")");
}

static void
emit_dotfile_regex(struct b *b, const char **grants, size_t n_grants)
{
	const struct sandbox *sb = b->sb;
	bool rec = sb->scan_recursive.value;
	struct textbuf allow = {0}, vis = {0}, tail = {0};

	if (sb->allow_all_hidden) {
		put(b, "\n");
		comment(b, "8. denies, after every allow.  Dotfiles: none hidden (cwd_allow_hidden: "
			   "[\"*\"], line %u)",
			sb->cwd_allow_hidden.loc.line);
		return;
	}
	allow_list_text(b, &allow);
	visible_component_re(b, &vis);
	if (rec)
		tb_printf(&tail, "(/%s)*$", vis.data);
	else
		tb_printf(&tail, "/%s(/|$)", vis.data);
	put(b, "\n");
	comment(b, "8. denies, after every allow.  Dotfiles: every path below a root with a "
		   "component");
	comment(b, "   that starts with \".\",");
	comment(b, "   %s;", allow.data);
	comment(b, "   %s (cwd_hidden_scan_recursive%s)", rec ? "at every depth" : "top level only",
		sb->scan_recursive.loc.line
		    ? arena_printf(b->a, ", line %u", sb->scan_recursive.loc.line)
		    : ", the default");
	comment(b, "   a grant that names a hidden path is the opt-in for exactly that path");
	for (size_t i = 0; i < b->n_roots; i++) {
		const struct root *r = &b->roots[i];
		size_t mark = b->out->len;

		comment(b, "dotfiles of %s", r->what);
		put(b, "(deny file-read* file-write*\n\t(require-all\n\t\t");
		put_regex(b, r->path, "/.", (struct loc){0}, r->what);
		put(b, "\n\t\t(require-not ");
		put_regex(b, r->path, tail.data, sb->cwd_allow_hidden.loc, r->what);
		put(b, ")");
		for (size_t g = 0; g < n_grants; g++) {
			bool dup = false;

			if (!path_below(grants[g], r->path) ||
			    !hidden_prefix(sb, path_rest(grants[g], r->path)))
				continue;
			for (size_t h = 0; h < g && !dup; h++)
				dup = !strcmp(grants[h], grants[g]);
			if (dup)
				continue;
			put(b, "\n\t\t(require-not (subpath ");
			put_path(b, grants[g], (struct loc){0}, "a grant");
			put(b, "))");
		}
		put(b, "))\n");
		b->spent[r->cost] += b->out->len - mark;
	}
	tb_free(&allow);
	tb_free(&vis);
	tb_free(&tail);
}

/* ---- the per-file form (benchmark, equivalence tests) ----------------------------------- */

static int
cmp_str(const void *x, const void *y)
{
	return strcmp(*(const char *const *)x, *(const char *const *)y);
}

static void
emit_dotfile_list(struct b *b, const char **grants, size_t n_grants)
{
	size_t mark = b->out->len;

	put(b, "\n");
	comment(b, "8. denies, after every allow. Dotfiles: the %zu hidden paths a scan found",
		b->c->n_hidden);
	if (!b->c->n_hidden)
		return;
	put(b, "(deny file-read* file-write*");
	for (size_t i = 0; i < b->c->n_hidden; i++) {
		const struct sbpl_hidden *h = &b->c->hidden[i];
		bool granted = false;

		for (size_t g = 0; g < n_grants && !granted; g++)
			granted = !strcmp(grants[g], h->path);
		if (granted)
			continue;
		put(b, h->is_dir ? "\n\t(subpath " : "\n\t(literal ");
		put_path(b, h->path, (struct loc){0}, "a hidden path");
		put(b, ")");
	}
	put(b, ")\n");
	b->spent[COST_HIDDEN_LIST] += b->out->len - mark;
}

/* Ancestors of every hidden path up to (and with) its root, for the rename denies. */
static size_t
hidden_ancestors(struct b *b, const char ***out)
{
	const char **v = NULL;
	size_t n = 0, cap = 0, j = 0;

	for (size_t i = 0; i < b->c->n_hidden; i++) {
		const char *h = b->c->hidden[i].path;
		const struct root *best = NULL;

		for (size_t r = 0; r < b->n_roots; r++)
			if (path_below(h, b->roots[r].path) &&
			    (!best || strlen(b->roots[r].path) > strlen(best->path)))
				best = &b->roots[r];
		if (!best)
			continue;
		for (char *a = arena_strdup(b->a, h);;) {
			char *slash = strrchr(a, '/');

			if (!slash || slash == a)
				break;
			*slash = '\0';
			if (!sym_within(a, best->path))
				break;
			*ARENA_PUSH(b->a, v, n, cap) = arena_strdup(b->a, a);
		}
	}
	if (n)
		qsort(v, n, sizeof(*v), cmp_str);
	for (size_t i = 0; i < n; i++)
		if (!j || strcmp(v[j - 1], v[i]))
			v[j++] = v[i];
	*out = v;
	return j;
}

/* ---- masks, ~/Library, rename laundering, sockets ------------------------------------ */

static void
emit_masks(struct b *b)
{
	const struct ir_pathlist *m = &b->sb->mask_paths;

	for (size_t i = 0; i < m->n; i++) {
		size_t mark = b->out->len;

		comment(b, "mask_paths (line %u): %s", m->v[i].loc.line, m->v[i].written);
		put(b, "(deny file-read* file-write* (subpath ");
		put_path(b, ir_path_string(b, &m->v[i]), m->v[i].loc,
			 list_what(b, "mask_paths", &m->v[i]));
		put(b, "))\n");
		b->spent[COST_MASK_PATHS] += b->out->len - mark;
	}
}

static void push_unique(struct b *b, const char ***v, size_t *n, size_t *cap, const char *s);

static void
emit_library(struct b *b, const char **grants, size_t n_grants)
{
	const char *lib =
	    strcmp(b->c->home, "/") ? arena_printf(b->a, "%s/Library", b->c->home) : "/Library";
	const struct ir_pathlist *rp = &b->sb->read_paths;

	for (size_t i = 0; i < rp->n; i++)
		if (!strcmp(ir_path_string(b, &rp->v[i]), lib)) {
			comment(b, "~/Library is readable: read_paths (line %u) names it",
				rp->v[i].loc.line);
			return;
		}
	comment(b, "~/Library (cookies, keychains, mail, browser profiles), but for the grants "
		   "inside it");
	{
		const char **ex = NULL;
		size_t n = 0, cap = 0;

		for (size_t g = 0; g < n_grants; g++)
			if (path_below(grants[g], lib))
				push_unique(b, &ex, &n, &cap, grants[g]);
		if (!n) {
			put(b, "(deny file-read* file-write* (subpath ");
			put_path(b, lib, (struct loc){0}, "~/Library");
			put(b, "))\n");
			return;
		}
		put(b, "(deny file-read* file-write*\n\t(require-all\n\t\t(subpath ");
		put_path(b, lib, (struct loc){0}, "~/Library");
		put(b, ")");
		for (size_t i = 0; i < n; i++) {
			put(b, "\n\t\t(require-not (subpath ");
			put_path(b, ex[i], (struct loc){0}, "a grant");
			put(b, "))");
		}
		put(b, "))\n");
	}
}

static void
push_unique(struct b *b, const char ***v, size_t *n, size_t *cap, const char *s)
{
	for (size_t i = 0; i < *n; i++)
		if (!strcmp((*v)[i], s))
			return;
	*ARENA_PUSH(b->a, *v, *n, *cap) = s;
}

/* Parents of PATH strictly below DIR, outermost first. */
static void
push_between(struct b *b, const char ***v, size_t *n, size_t *cap, const char *dir,
	     const char *path)
{
	const char *rest = path_rest(path, dir);

	for (const char *p = strchr(rest, '/'); p; p = strchr(p + 1, '/'))
		push_unique(b, v, n, cap, arena_strndup(b->a, path, (size_t)(p - path)));
}

struct prot {
	struct b *b;
	const char **paths;
	size_t n, cap;
};

static void
collect_protected(void *arg, const struct protect_entry *e)
{
	struct prot *pr = arg;

	/* A directory of git directories stays writable inside: the
	 * post-run check (docs/protect.md) covers new ones on macOS. */
	if (e->hold == PROTECT_HOLD_GITDIRS)
		return;
	/* protect_each_spelled() gives each path once. */
	*ARENA_PUSH(pr->b->a, pr->paths, pr->n, pr->cap) = arena_strdup(pr->b->a, e->path);
}

/* The writable roots as this profile spells them (the scratch dir has nothing to protect). */
static size_t
writable_roots(struct b *b, const char ***out)
{
	const char **v = NULL;
	size_t n = 0, cap = 0;

	if (b->ws_writable)
		push_unique(b, &v, &n, &cap, b->cwd);
	for (size_t i = 0; i < b->sb->write_paths.n; i++)
		push_unique(b, &v, &n, &cap, ir_path_string(b, &b->sb->write_paths.v[i]));
	*out = v;
	return n;
}

/* Every protected path of this profile (protect.h), in its spelling. */
static size_t
protected_paths(struct b *b, const char ***out)
{
	struct prot pr = {.b = b};
	const char **roots, **extra;
	size_t n;

	if (b->prot_made) {
		*out = b->prot;
		return b->n_prot;
	}
	n = writable_roots(b, &roots);
	extra = arena_alloc(b->a, (b->sb->protect_paths.n + 1) * sizeof(*extra));
	for (size_t i = 0; i < b->sb->protect_paths.n; i++)
		extra[i] = ir_path_string(b, &b->sb->protect_paths.v[i]);
	protect_each_spelled(b->sb, roots, n, b->c->home, extra, collect_protected, &pr);
	for (size_t i = 0; i < b->c->n_protected; i++)
		push_unique(b, &pr.paths, &pr.n, &pr.cap, b->c->protected[i]);
	b->prot = pr.paths;
	b->n_prot = pr.n;
	b->prot_made = true;
	*out = pr.paths;
	return pr.n;
}

/*
 * Protected paths: no write below them, no creating them, whether they
 * exist or not (Seatbelt matches names, so a missing one needs nothing
 * more); the directories above them are in the rename denies below.
 */
static void
emit_protected(struct b *b)
{
	const char **paths;
	size_t n = protected_paths(b, &paths), mark = b->out->len;

	if (!n)
		return;
	put(b, "\n");
	comment(b, "8b. protected paths (write_paths, line %u; docs/protect.md): what host tools "
		   "run or obey",
		b->sb->write_paths.loc.line);
	comment(b, "    stays read-only, existing or not");
	put(b, "(deny file-write*");
	for (size_t i = 0; i < n; i++) {
		put(b, "\n\t(subpath ");
		put_path(b, paths[i], (struct loc){0}, "a protected path");
		put(b, ")");
	}
	put(b, ")\n");
	b->spent[COST_FIXED] += b->out->len - mark;
}

static void
emit_rename_denies(struct b *b)
{
	const struct sandbox *sb = b->sb;
	const char **lit = NULL, **writable = NULL, **hidden_anc = NULL;
	size_t n = 0, cap = 0, n_w = 0, cap_w = 0, n_anc = 0;
	size_t mark = b->out->len;

	push_unique(b, &writable, &n_w, &cap_w, b->c->scratch);
	if (b->ws_writable)
		push_unique(b, &writable, &n_w, &cap_w, b->cwd);
	for (size_t i = 0; i < sb->write_paths.n; i++)
		push_unique(b, &writable, &n_w, &cap_w, ir_path_string(b, &sb->write_paths.v[i]));

	/* A root renamed away takes its dotfiles out of the rule's reach; so
	 * would any directory between it and a writable grant above it. */
	for (size_t r = 0; r < b->n_roots; r++) {
		push_unique(b, &lit, &n, &cap, b->roots[r].path);
		for (size_t w = 0; w < n_w; w++)
			if (path_below(b->roots[r].path, writable[w]))
				push_between(b, &lit, &n, &cap, writable[w], b->roots[r].path);
	}
	/* A protected path: the directories between it and its writable root. */
	{
		const char **prot;
		size_t n_prot = protected_paths(b, &prot);

		for (size_t i = 0; i < n_prot; i++)
			for (size_t w = 0; w < n_w; w++)
				if (path_below(prot[i], writable[w]))
					push_between(b, &lit, &n, &cap, writable[w], prot[i]);
	}
	/* The same for a masked path: the directories between it and its root. */
	for (size_t i = 0; i < sb->mask_paths.n; i++) {
		const char *m = ir_path_string(b, &sb->mask_paths.v[i]);
		const char *best = NULL;

		for (size_t r = 0; r < b->n_roots; r++)
			if (path_below(m, b->roots[r].path) &&
			    (!best || strlen(b->roots[r].path) > strlen(best)))
				best = b->roots[r].path;
		for (size_t w = 0; w < n_w; w++)
			if (path_below(m, writable[w]) &&
			    (!best || strlen(writable[w]) > strlen(best)))
				best = writable[w];
		if (best)
			push_between(b, &lit, &n, &cap, best, m);
	}
	if (b->c->enumerate_hidden)
		n_anc = hidden_ancestors(b, &hidden_anc);

	put(b, "\n");
	comment(b, "9. rename laundering: no hidden path may leave its rule's reach by the "
		   "rename of a");
	comment(b, "   directory above it: so no rename or removal of each root, of each "
		   "directory between");
	comment(b, "   a writable grant and a root or a masked path%s",
		b->c->enumerate_hidden	   ? ", of each directory holding a hidden path"
		: sb->scan_recursive.value ? ","
					   : "");
	if (!b->c->enumerate_hidden && sb->scan_recursive.value)
		comment(b, "   and (every depth being masked) of each directory below a root");
	if (!b->c->resolved)
		comment(b,
			"   (directories between grants of different bases are added at launch)");
	put(b, "(deny file-write-unlink");
	for (size_t i = 0; i < n; i++) {
		put(b, "\n\t(literal ");
		put_path(b, lit[i], (struct loc){0}, "a root");
		put(b, ")");
	}
	for (size_t i = 0; i < n_anc; i++) {
		bool dup = false;

		for (size_t k = 0; k < n && !dup; k++)
			dup = !strcmp(lit[k], hidden_anc[i]);
		if (dup)
			continue;
		put(b, "\n\t(literal ");
		put_path(b, hidden_anc[i], (struct loc){0}, "a hidden path's parent");
		put(b, ")");
	}
	if (sb->scan_recursive.value && !b->c->enumerate_hidden)
		for (size_t r = 0; r < b->n_roots; r++) {
			put(b, "\n\t(require-all (vnode-type DIRECTORY) ");
			put_regex(b, b->roots[r].path, "/.", (struct loc){0}, b->roots[r].what);
			put(b, ")");
		}
	put(b, ")\n");
	b->spent[b->c->enumerate_hidden ? COST_HIDDEN_LIST : COST_FIXED] += b->out->len - mark;
}

static void
emit_sockets(struct b *b)
{
	const struct ir_pathlist *l = &b->sb->deny_unix_socket_paths;

	if (!l->n)
		return;
	put(b, "\n");
	comment(b, "11. Unix sockets out of reach, last");
	for (size_t i = 0; i < l->n; i++) {
		size_t mark = b->out->len;

		comment(b, "deny_unix_socket_paths (line %u): %s", l->v[i].loc.line,
			l->v[i].written);
		put(b, "(deny network-outbound (remote unix-socket (path-literal ");
		put_path(b, ir_path_string(b, &l->v[i]), l->v[i].loc,
			 list_what(b, "deny_unix_socket_paths", &l->v[i]));
		put(b, ")))\n");
		b->spent[COST_SOCKETS] += b->out->len - mark;
	}
}

/* ---- size --------------------------------------------------------------------- */

static void
check_size(struct b *b, size_t len)
{
	size_t max = b->c->max_size ? b->c->max_size : SBPL_MAX_SIZE;
	const struct sandbox *sb = b->sb;
	struct {
		const char *name;
		struct loc loc;
	} who[COST_COUNT] = {
	    [COST_FIXED] = {"the fixed rules", {0}},
	    [COST_READ_PATHS] = {"read_paths", sb->read_paths.loc},
	    [COST_WRITE_PATHS] = {"write_paths", sb->write_paths.loc},
	    [COST_WRITE_FILES] = {"write_files", sb->write_files.loc},
	    [COST_MASK_PATHS] = {"mask_paths", sb->mask_paths.loc},
	    [COST_SOCKETS] = {"deny_unix_socket_paths", sb->deny_unix_socket_paths.loc},
	    [COST_ALLOW_HIDDEN] = {"cwd_allow_hidden", sb->cwd_allow_hidden.loc},
	    [COST_COMMAND] = {"the command's directories", {0}},
	    [COST_HIDDEN_LIST] = {"the list of hidden dotfiles", {0}},
	};
	size_t worst = COST_FIXED;

	if (len <= max)
		return;
	for (size_t k = 0; k < COST_COUNT; k++)
		if (b->spent[k] > b->spent[worst])
			worst = k;
	diag_error(b->d, who[worst].loc,
		   "the Seatbelt profile would be %zu bytes, over the %zu-byte limit of "
		   "sandbox-exec; %s make%s %zu bytes of it: grant fewer, broader paths",
		   len, max, who[worst].name,
		   worst == COST_READ_PATHS || worst == COST_WRITE_PATHS ||
			   worst == COST_WRITE_FILES || worst == COST_MASK_PATHS ||
			   worst == COST_SOCKETS || worst == COST_ALLOW_HIDDEN
		       ? "s"
		       : "",
		   b->spent[worst]);
	b->failed = true;
}

/* ---- entry points -------------------------------------------------------------------- */

void
sbpl_context_symbolic(struct sbpl_context *c)
{
	memset(c, 0, sizeof(*c));
	c->cwd = "{CWD}";
	c->home = "{HOME}";
	c->scratch = "{SCRATCH}";
	c->port = "{PORT}";
	c->proxy_socket = "{SOCK}";
}

static void
header(struct b *b, struct textbuf *out)
{
	static const char *const meaning[SBPL_PARAM_COUNT] = {
	    "the workspace",
	    "the home directory",
	    "the private scratch dir ($TMPDIR), new for each launch",
	    "CWD escaped for a regular expression",
	    "HOME escaped for a regular expression",
	    "SCRATCH escaped for a regular expression",
	    "the loopback port of the egress relay inside the sandbox",
	    "the Unix socket of the egress proxy outside the sandbox",
	};
	const struct terminal *t = b->p->terminal;

	tb_printf(out, "; Seatbelt profile for %s%s%s, run as\n", b->p->source,
		  t ? ", terminal " : "", t ? t->name : "");
	tb_puts(out, ";   /usr/bin/sandbox-exec -f PROFILE -D NAME=VALUE... -- COMMAND\n");
	if (b->c->resolved)
		tb_puts(out, "; resolved for one launch: paths are canonical; parameters:\n");
	else
		tb_puts(out, "; the text is the same on every machine: what differs is a parameter "
			     "(--emit=sbpl-params):\n");
	for (int k = 0; k < SBPL_PARAM_COUNT; k++)
		if (b->params.used[k])
			tb_printf(out, ";   %-10s %s\n", param_names[k], meaning[k]);
	for (size_t i = 3; i < b->n_bases; i++) {
		const struct base *x = &b->bases[i];

		if (x->used)
			tb_printf(out, ";   %s %s, canonical (it leaves its base)\n", x->name,
				  x->display);
		if (x->re_used)
			tb_printf(out, ";   %s the same escaped for a regular expression\n",
				  x->re_name);
	}
	tb_puts(out, "; every deny follows every allow and no allow undoes a deny, so the profile "
		     "means the\n; same whether the last match or a deny wins\n");
}

static const char *
regex_value(struct arena *a, const char *v, bool resolved)
{
	struct textbuf t = {0};
	char *s;

	if (!resolved)
		return arena_printf(a, "{%.*s:regex}", (int)strlen(v) - 2, v + 1);
	sbpl_regex_escape(&t, v);
	s = arena_strdup(a, t.data ? t.data : "");
	tb_free(&t);
	return s;
}

bool
sbpl_can_express(const struct policy *p)
{
	const struct sandbox *sb = &p->os_env.sandbox;

	return sb->type == SANDBOX_NONE || (!sb->n_git_ssh && !sb->cow_paths.n);
}

int
sbpl_build(struct arena *a, const struct policy *p, const struct sbpl_context *c, struct diag *d,
	   struct textbuf *profile, struct sbpl_params *params)
{
	struct textbuf body = {0};
	struct b b = {.a = a, .p = p, .sb = &p->os_env.sandbox, .c = c, .d = d, .out = &body};
	const char **grants;
	size_t n_grants;

	b.cwd = c->cwd;
	add_base(&b, "CWD", SBPL_PARAM_CWD, SBPL_PARAM_CWD_RE, c->cwd, NULL);
	add_base(&b, "HOME", SBPL_PARAM_HOME, SBPL_PARAM_HOME_RE, c->home, NULL);
	add_base(&b, "SCRATCH", SBPL_PARAM_SCRATCH, SBPL_PARAM_SCRATCH_RE, c->scratch, NULL);
	if (p->os_env.sandbox.type == SANDBOX_NONE) {
		if (p->os_env.sandbox.type_loc.line)
			tb_printf(profile,
				  "; sandbox type none (line %u) in %s: the command runs "
				  "without a sandbox; there is no profile\n",
				  p->os_env.sandbox.type_loc.line, p->source);
		else
			tb_printf(profile,
				  "; sandbox type none in %s: the command runs without a "
				  "sandbox; there is no profile\n",
				  p->source);
		if (params)
			memset(params, 0, sizeof(*params));
		return 0;
	}
	if (!sbpl_can_express(p)) {
		const struct sandbox *sb = &p->os_env.sandbox;

		if (sb->n_git_ssh)
			diag_error(d, sb->git_ssh_loc,
				   "git_ssh has no darwin form: its broker runs on Linux only "
				   "(compile for linux)");
		if (sb->cow_paths.n)
			diag_error(d, sb->cow_paths.v[0].loc,
				   "copy_on_write has no darwin form: Seatbelt cannot bind a copy "
				   "over a path (compile for linux, or grant the path writable)");
		return -1;
	}
	put(&b, "(version 1)\n(deny default)\n");
	emit_baseline(&b);
	emit_grants(&b);
	emit_network(&b);
	collect_roots(&b);
	n_grants = collect_grants(&b, &grants);
	if (c->enumerate_hidden)
		emit_dotfile_list(&b, grants, n_grants);
	else
		emit_dotfile_regex(&b, grants, n_grants);
	emit_masks(&b);
	emit_protected(&b);
	emit_library(&b, grants, n_grants);
	emit_rename_denies(&b);
	emit_sockets(&b);

	if (c->resolved) {
		const char *plain[] = {c->cwd, c->home, c->scratch, c->port, c->proxy_socket};
		static const char *const what[] = {"the workspace", "the home directory",
						   "the scratch dir", "the relay port",
						   "the proxy socket"};

		/* Parameter values go on sandbox-exec's command line and into
		 * regular expressions: no line break may hide in one. */
		for (size_t i = 0; i < 5; i++) {
			struct textbuf t = {0};

			if (plain[i] && sbpl_put_string(&t, plain[i]) < 0) {
				diag_error(d, (struct loc){0},
					   "%s holds a control character, which a Seatbelt profile "
					   "cannot carry",
					   what[i]);
				b.failed = true;
			}
			tb_free(&t);
		}
	}
	{
		struct textbuf head = {0};

		header(&b, &head);
		check_size(&b, head.len + body.len);
		if (!b.failed) {
			tb_write(profile, head.data, head.len);
			tb_write(profile, body.data, body.len);
		}
		tb_free(&head);
	}
	tb_free(&body);
	if (params) {
		const char *plain[SBPL_PARAM_COUNT] = {c->cwd, c->home, c->scratch,	NULL, NULL,
						       NULL,   c->port, c->proxy_socket};

		memset(params, 0, sizeof(*params));
		for (int k = 0; k < SBPL_PARAM_COUNT; k++) {
			params->used[k] = b.params.used[k];
			if (k >= SBPL_PARAM_CWD_RE && k <= SBPL_PARAM_SCRATCH_RE)
				params->value[k] =
				    regex_value(a, plain[k - SBPL_PARAM_CWD_RE], c->resolved);
			else
				params->value[k] = plain[k];
		}
		params->extra_name = arena_alloc(a, 2 * b.n_bases * sizeof(char *));
		params->extra_value = arena_alloc(a, 2 * b.n_bases * sizeof(char *));
		for (size_t i = 3; i < b.n_bases; i++) {
			const struct base *x = &b.bases[i];

			if (x->used) {
				params->extra_name[params->n_extra] = x->name;
				params->extra_value[params->n_extra++] = x->display;
			}
			if (x->re_used) {
				params->extra_name[params->n_extra] = x->re_name;
				params->extra_value[params->n_extra++] =
				    arena_printf(a, "%s:regex", x->display);
			}
		}
		params->cap_extra = params->n_extra;
	}
	return b.failed ? -1 : 0;
}

void
sbpl_params_format(const struct sbpl_params *params, const char *source, struct textbuf *out)
{
	bool any = false;

	tb_printf(out, "# sandbox-exec parameters of the profile for %s, one -D per line\n",
		  source);
	for (int k = 0; k < SBPL_PARAM_COUNT; k++) {
		if (!params->used[k])
			continue;
		tb_printf(out, "-D %s=%s\n", param_names[k], params->value[k]);
		any = true;
	}
	for (size_t i = 0; i < params->n_extra; i++) {
		tb_printf(out, "-D %s=%s\n", params->extra_name[i], params->extra_value[i]);
		any = true;
	}
	if (!any)
		tb_puts(out, "# none: the policy has no profile\n");
}

int
emit_sbpl(const struct policy *p, enum target t, struct diag *d, struct textbuf *out)
{
	struct sbpl_context c;
	struct arena *a = arena_new();
	int rc;

	(void)t;
	sbpl_context_symbolic(&c);
	rc = sbpl_build(a, p, &c, d, out, NULL);
	arena_free(a);
	return rc;
}

int
emit_sbpl_pair(const struct policy *p, enum target t, struct diag *d, struct textbuf *out,
	       struct textbuf *params_out)
{
	struct sbpl_context c;
	struct sbpl_params params;
	struct textbuf scratch = {0};
	struct arena *a = arena_new();
	int rc;

	(void)t;
	sbpl_context_symbolic(&c);
	rc = sbpl_build(a, p, &c, d, out ? out : &scratch, &params);
	if (rc == 0)
		sbpl_params_format(&params, p->source, params_out);
	tb_free(&scratch);
	arena_free(a);
	return rc;
}

int
emit_sbpl_params(const struct policy *p, enum target t, struct diag *d, struct textbuf *out)
{
	return emit_sbpl_pair(p, t, d, NULL, out);
}
