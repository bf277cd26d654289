/*
 * emit_bwrap.c - the bubblewrap argument vector (--emit=bwrap).
 *
 * Mount order is the security argument, so it is fixed here and nowhere
 * else: system directories, /proc /dev /tmp, the command, the grants (every
 * ancestor before its descendants, so a read-only grant on a parent never
 * hides a writable one below it), then the masks, so no grant can undo a
 * mask.  bwrap applies mounts in argument order and the later one wins.
 */
#include "../compiler/decide/env.h"
#include "../compiler/decide/protect.h"
#include "../compiler/decide/transparent.h"
#include "../compiler/decide/workspace.h"
#include "../compiler/base/format.h"
#include "../compiler/base/textesc.h"
#include "bwrap.h"
#include "emit.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* At most this many mounts omnibox-init may make in bwrap's stead
 * (init_bind()): the system directories, /etc's files, /proc's two and
 * /dev, the private home, the grants and the masks' tmpfs.  Any beyond
 * are bwrap's. */
#define INIT_MOUNTS_MAX 512

const char *const bwrap_ca_bundles[] = {
    "/etc/ssl/certs/ca-certificates.crt",		  /* Debian, Ubuntu, Alpine, Arch */
    "/etc/pki/tls/certs/ca-bundle.crt",			  /* Fedora, RHEL */
    "/etc/ssl/cert.pem",				  /* Alpine, Arch, macOS-style */
    "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem", /* Fedora, RHEL: the source */
    NULL,
};

void
bwrap_context_symbolic(struct bwrap_context *c)
{
	memset(c, 0, sizeof(*c));
	c->cwd = "{CWD}";
	c->home = "{HOME}";
	c->scratch = "{SCRATCH}";
	c->init_fd = -1;
	c->seccomp_fd = -1;
	c->status_fd = -1;
	c->ready_fd = -1;
	c->masks_fd = -1;
	c->exec_path = "{EXEC}";
	c->ca_bundles = bwrap_ca_bundles;
	c->n_ca_bundles = 1;
}

const struct ir_path *
bwrap_home_written(const struct policy *p)
{
	return workspace_home_held(p);
}

void
bwrap_masks_list(const struct bwrap_context *c, struct textbuf *out)
{
	for (size_t i = 0; i < c->n_masks; i++) {
		const struct bwrap_mask *m = &c->masks[i];

		tb_putc(out, !m->is_dir ? 'f' : m->have_self ? 't' : 'd');
		if (m->have_parent)
			tb_printf(out, "%llu:%llu:", m->parent_dev, m->parent_ino);
		else
			tb_puts(out, "-:-:");
		if (m->is_dir && m->have_self)
			tb_printf(out, "%llu:%llu:", m->self_dev, m->self_ino);
		tb_write(out, m->path, strlen(m->path) + 1);
	}
	for (size_t i = 0; i < c->n_sockets; i++) {
		tb_puts(out, "f-:-:");
		tb_write(out, c->sockets[i], strlen(c->sockets[i]) + 1);
	}
}

bool
bwrap_network_shared(const struct policy *p)
{
	const struct sandbox *sb = &p->os_env.sandbox;

	return !sb->n_egress && sb->allow_network.value;
}

struct out {
	struct textbuf *text, *nul;
	struct bwrap_mounts *mounts; /* or NULL */
	bool pin;		     /* the binds written now are pins */
	bool own;		     /* the bind written now is the private home */
	enum bwrap_part part;	     /* the part being written */
	bool write_file;	     /* the bind written now is a write_files grant */
	bool late;		     /* the mount written now is omnibox-init's, after all others */
	/* Which of the mounts omnibox-init may make (init_bind()) it makes in
	 * bwrap's stead, by their order of writing (init_plan()), or NULL:
	 * bwrap makes them all (the plan's own pass, which notes in SYS_AT
	 * where each one was recorded). */
	const bool *by_init;
	size_t *sys_at;
	size_t n_sys; /* such mounts written so far */
	/* Those omnibox-init makes, in order, for its arguments
	 * (emit_init_args()): PATH, and KIND: 't' as --ro-bind-try, 'r' as
	 * --ro-bind, 'b' as --ro-bind SRC PATH, 'd' as --dev, 'g' as
	 * --ro-bind-fd SRC PATH, 'w' as --bind-fd SRC PATH, 'm' as --tmpfs. */
	struct init_mount {
		const char *path;
		char kind;
		char *src; /* 'b', 'g', 'w' alone: malloc'd */
	} init[INIT_MOUNTS_MAX];
	size_t n_init;
};

static char *
dup_or_die(const char *s)
{
	char *d = strdup(s ? s : "");

	if (!d)
		abort();
	return d;
}

/* FLAG X Y as a mount of O->mounts, when FLAG makes one. */
static void
record(struct out *o, const char *flag, const char *x, const char *y)
{
	static const struct {
		const char *flag;
		enum bwrap_op op;
		bool try_, two;
	} ops[] = {
	    {"--ro-bind", BWRAP_RO_BIND, false, true},	  {"--ro-bind-try", BWRAP_RO_BIND, true, true},
	    {"--ro-bind-fd", BWRAP_RO_BIND, false, true}, {"--bind", BWRAP_BIND, false, true},
	    {"--bind-fd", BWRAP_BIND, false, true},	  {"--tmpfs", BWRAP_TMPFS, false, false},
	    {"--remount-ro", BWRAP_REMOUNT_RO, false, false}, {"--proc", BWRAP_PROC, false, false},
	    {"--dev", BWRAP_DEV, false, false},		  {"--symlink", BWRAP_SYMLINK, false, true},
	    {"--fs-write", BWRAP_FS_WRITE, false, false},
	};
	struct bwrap_mounts *m = o->mounts;

	if (!m)
		return;
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		struct bwrap_mount *e;

		if (strcmp(flag, ops[i].flag))
			continue;
		if (m->n == m->cap) {
			m->cap = m->cap ? 2 * m->cap : 64;
			m->v = realloc(m->v, m->cap * sizeof(*m->v));
			if (!m->v)
				abort();
		}
		e = &m->v[m->n++];
		e->op = ops[i].op;
		e->try_ = ops[i].try_;
		e->src = ops[i].two && strncmp(flag, "--ro-bind-fd", 12) && strcmp(flag, "--bind-fd")
			     ? dup_or_die(x)
			     : NULL;
		e->dest = dup_or_die(ops[i].two ? y : x);
		e->why = dup_or_die(m->why);
		e->pin = o->pin;
		e->own = o->own;
		e->part = o->part;
		e->write_file = o->write_file;
		e->late = o->late;
		if (e->op == BWRAP_RO_BIND && e->src && !strcmp(e->src, "/dev/null"))
			e->op = BWRAP_DEVNULL;
		return;
	}
}

/*
 * One argument: as it is in the argv (NUL), escaped in the text (textesc.h),
 * where a path the agent named must neither act on the terminal nor start
 * a line of its own.  An ordinary path reads the same in both.
 */
static void
arg(struct out *o, const char *a)
{
	/* Neither: init_plan()'s pass, the mounts alone. */
	if (o->text) {
		tb_escape(o->text, a, 0);
		tb_putc(o->text, '\n');
	}
	if (o->nul)
		tb_write(o->nul, a, strlen(a) + 1);
}

static void
args3(struct out *o, const char *flag, const char *x, const char *y)
{
	record(o, flag, x, y);
	arg(o, flag);
	arg(o, x);
	if (y)
		arg(o, y);
}

static void comment(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * A mount omnibox-init makes, written as bwrap's own FLAG X Y would be,
 * after "# omnibox-init:", so the text reads the same (the last path is the
 * rest of the line).
 */
static void
init_text(struct out *o, const char *flag, const char *x, const char *y)
{
	if (!o->text)
		return;
	tb_puts(o->text, "# omnibox-init: ");
	tb_puts(o->text, flag);
	tb_putc(o->text, ' ');
	tb_escape(o->text, x, 0);
	if (y) {
		tb_putc(o->text, ' ');
		tb_escape(o->text, y, 0);
	}
	tb_putc(o->text, '\n');
}

/*
 * A mask omnibox-init makes, by descriptor, from the list on --masks-fd
 * (bwrap_masks_list()), after every other mount: bwrap would read its
 * whole mount table again for each.  Written as init_text() writes;
 * recorded as that mount, so what --why answers is what the launch does.
 */
static void
by_init(struct out *o, const char *flag, const char *x, const char *y)
{
	o->late = true;
	record(o, flag, x, y);
	o->late = false;
	init_text(o, flag, x, y);
}

/* Is a comment written, or kept as the why of the mounts that follow? */
static bool
commenting(const struct out *o)
{
	return o->text || (o->mounts && o->mounts->keep_why);
}

static void
comment(struct out *o, const char *fmt, ...)
{
	va_list ap;
	char buf[1024];

	if (!commenting(o))
		return;
	va_start(ap, fmt);
	format_v(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (o->mounts) {
		free(o->mounts->why);
		o->mounts->why = dup_or_die(buf);
	}
	if (!o->text)
		return;
	/* Paths in it were escaped by whoever named them; a line break or a
	 * control byte that was not cannot reach the terminal. */
	tb_puts(o->text, "# ");
	tb_escape(o->text, buf, TEXT_ESC_AGAIN);
	tb_putc(o->text, '\n');
}

static int
grant_cmp(const void *a, const void *b)
{
	const struct bwrap_grant *x = a, *y = b;
	int c = strcmp(x->path, y->path);

	/* Byte order puts every path before its extensions, so every
	 * ancestor is mounted before its descendants.  Equal paths in a fixed
	 * order (the workspace's own entry first), whatever qsort does. */
	if (c)
		return c;
	if (x->must_exist != y->must_exist)
		return x->must_exist ? -1 : 1;
	if (x->writable != y->writable)
		return x->writable ? -1 : 1;
	return (x->line > y->line) - (x->line < y->line);
}

size_t
bwrap_grants_order(struct bwrap_grant *g, size_t n)
{
	size_t i, j, k;

	qsort(g, n, sizeof(g[0]), grant_cmp);
	/* The same path granted twice is one mount, writable if either is;
	 * the entry merged away moves to the tail. */
	for (i = 0, j = 0; i < n; i++) {
		if (j > 0 && !strcmp(g[j - 1].path, g[i].path)) {
			struct bwrap_grant *keep = &g[j - 1], gone = g[i];

			if (gone.writable && !keep->writable) {
				struct bwrap_grant t = *keep;

				*keep = gone;
				gone = t;
				keep->must_exist |= gone.must_exist;
			} else {
				keep->must_exist |= gone.must_exist;
			}
			/* Shift the rest down by one and park GONE at the end. */
			for (k = i; k + 1 < n; k++)
				g[k] = g[k + 1];
			g[n - 1] = gone;
			n--;
			i--;
			continue;
		}
		j++;
	}
	return j;
}

static void
grant_push(struct bwrap_grant **v, size_t *n, size_t *cap, const char *path, bool writable,
	   bool must_exist, const char *what, uint32_t line)
{
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 16;
		*v = realloc(*v, *cap * sizeof(**v));
		if (!*v)
			abort();
	}
	(*v)[(*n)++] = (struct bwrap_grant){path, -1, writable, must_exist, what, line, false, false, NULL};
}

static bool
is_root(const struct ir_path *p)
{
	return p->base == PATH_ABSOLUTE && p->rel[0] == '\0';
}

/* Does some write_paths entry name the workspace itself? */
static const struct ir_path *
workspace_write_grant(const struct policy *p)
{
	const struct ir_pathlist *w = &p->os_env.sandbox.write_paths;

	for (size_t i = 0; i < w->n; i++)
		if (w->v[i].base == PATH_CWD && w->v[i].rel[0] == '\0')
			return &w->v[i];
	return NULL;
}

/* "{HOME}" for "{HOME}/.claude.json"; free() it. */
static char *
symbolic_dirname(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir = slash == path ? strdup("/") : strndup(path, (size_t)(slash - path));

	if (!dir)
		abort();
	return dir;
}

/* Does DIR (symbolic) lie in a directory the sandbox writes (not a copy),
 * with no read-only grant between? */
static bool
symbolic_writable(const struct policy *p, const char *dir)
{
	const struct sandbox *sb = &p->os_env.sandbox;
	const struct ir_pathlist *lists[] = {&sb->write_paths, &sb->read_paths};
	size_t best = 0;
	bool writable = false;

	for (size_t k = 0; k < 2; k++)
		for (size_t i = 0; i < lists[k]->n; i++) {
			const char *g = lists[k]->v[i].symbolic;
			size_t len = strlen(g);

			if (path_within(dir, g) && (len > best || (len == best && k == 0))) {
				best = len;
				writable = k == 0;
			}
		}
	return writable;
}

/* The symbolic grants of P, in mount order; free() the array and the first
 * write_files.n entries of DIRS (the strings it made). */
static struct bwrap_grant *
symbolic_grants(const struct policy *p, const struct bwrap_context *c, size_t *n_out, char **dirs)
{
	const struct sandbox *sb = &p->os_env.sandbox;
	const struct ir_path *ws = workspace_write_grant(p);
	const struct {
		const struct ir_pathlist *l;
		bool writable;
		const char *what;
	} lists[] = {{&sb->write_paths, true, "write_paths"},
		     {&sb->read_paths, false, "read_paths"},
		     {&sb->write_files, true, "write_files"}};
	struct bwrap_grant *v = NULL;
	size_t n = 0, cap = 0;

	grant_push(&v, &n, &cap, c->cwd, ws != NULL, true,
		   ws ? "workspace, writable: write_paths" : "workspace, read-only",
		   ws ? ws->loc.line : 0);
	for (size_t k = 0; k < 2; k++)
		for (size_t i = 0; i < lists[k].l->n; i++)
			if (!is_root(&lists[k].l->v[i]))
				grant_push(&v, &n, &cap, lists[k].l->v[i].symbolic,
					   lists[k].writable, false, lists[k].what,
					   lists[k].l->v[i].loc.line);
	for (size_t i = 0; i < sb->write_files.n; i++) {
		const struct ir_path *f = &sb->write_files.v[i];
		char *dir = dirs[i] = symbolic_dirname(f->symbolic);

		if (is_root(f) || symbolic_writable(p, dir))
			continue; /* the directory's own grant shows it */
		if (paths_linux_fixed_dir(dir)) {
			grant_push(&v, &n, &cap, f->symbolic, true, false,
				   "write_files, bound on itself: its directory is a system "
				   "directory, so a rename over it fails (EBUSY)",
				   f->loc.line);
			continue;
		}
		grant_push(
		    &v, &n, &cap, dir, true, false,
		    "write_files: {FD} is a private directory made at launch in "
		    "{SCRATCH}/.omnibox-wf, bound at the file's directory: it holds a copy of "
		    "the file, written back to the host file when closed (so a rename over it "
		    "works), and the directory's other entries the policy shows, read-only",
		    f->loc.line);
	}
	for (size_t i = 0; i < sb->cow_paths.n; i++) {
		grant_push(&v, &n, &cap, sb->cow_paths.v[i].symbolic, true, false,
			   "write_paths, copy-on-write: {FD} is a private copy made at launch in "
			   "{SCRATCH}/.omnibox-cow, the host's tree is not written",
			   sb->cow_paths.v[i].loc.line);
		v[n - 1].cow = true;
	}
	grant_push(&v, &n, &cap, c->scratch, true, true, "scratch dir ($TMPDIR), writable", 0);
	*n_out = bwrap_grants_order(v, n);
	return v;
}

static const char *
fd_text(char *buf, size_t len, int fd)
{
	if (fd < 0)
		return "{FD}";
	snprintf(buf, len, "%d", fd);
	return buf;
}

static void init_bind(struct out *o, const char *flag, const char *src, const char *path,
		      char kind);

/* The bind of G's descriptor at its path, bwrap's or omnibox-init's (init_bind()). */
static void
emit_bind(struct out *o, const struct bwrap_grant *g)
{
	char fd[16];

	init_bind(o, g->writable ? "--bind-fd" : "--ro-bind-fd", fd_text(fd, sizeof(fd), g->fd),
		  g->path, g->writable ? 'w' : 'g');
}

static void
emit_grants(const struct policy *p, const struct bwrap_context *c, const struct bwrap_grant *g,
	    size_t n, struct out *o)
{
	const struct sandbox *sb = &p->os_env.sandbox;

	comment(o, "4. grants, every ancestor before its descendants%s",
		c->resolved ? "" : " (re-sorted at launch on canonical paths)");
	for (size_t i = 0; i < n; i++) {
		if (g[i].line)
			comment(o, "%s (line %u)", g[i].what, g[i].line);
		else
			comment(o, "%s", g[i].what);
		o->write_file = g[i].private_dir || !strncmp(g[i].what, "write_files", 11);
		emit_bind(o, &g[i]);
		o->write_file = false;
	}
	for (size_t i = 0; !c->resolved && i < sb->read_paths.n + sb->write_paths.n; i++) {
		const struct ir_path *rp = i < sb->read_paths.n
					       ? &sb->read_paths.v[i]
					       : &sb->write_paths.v[i - sb->read_paths.n];

		if (is_root(rp))
			comment(o,
				"'/' (line %u) is never bound whole: each top-level directory "
				"except /proc /sys /dev /tmp /run is, at launch",
				rp->loc.line);
	}
}

/*
 * The private home, before the command's directory and every grant, so
 * that each one below the home (the workspace often is) is bound over it.
 * No grant lies above it: one that holds the home means there is none.
 */
static void
emit_private_home(const struct policy *p, const struct bwrap_context *c, struct out *o)
{
	const struct ir_path *held = bwrap_home_written(p);

	if (c->resolved && !c->private_home) {
		comment(o, "2b. no private home: the workspace or a grant holds %s", c->home);
		return;
	}
	if (!c->resolved && held) {
		comment(o, "2b. no private home: %s (line %u) holds %s", held->written,
			held->loc.line, c->home);
		return;
	}
	if (c->resolved) {
		comment(o, "2b. the private home, writable: a directory of the scratch dir, empty at "
			   "launch and discarded at exit; the host's home only where a grant shows it");
	} else {
		comment(o, "2b. the private home, writable: {FD} is an empty directory made at launch "
			   "in the scratch dir");
		comment(o, "  ({SCRATCH}/%s) and discarded with it; grants below {HOME} are bound "
			   "over it, and the host's",
			BWRAP_PRIVATE_HOME);
		comment(o, "  home is seen only where one shows it (none at launch when the workspace "
			   "or a grant is {HOME}");
		comment(o, "  or a parent of it)");
	}
	o->own = true;
	if (c->resolved)
		emit_bind(o, c->private_home);
	else
		init_bind(o, "--bind-fd", "{FD}", c->home, 'w');
	o->own = false;
}

/* Does omnibox-init make any of the next N system mounts? */
static bool
init_ahead(const struct out *o, size_t n)
{
	for (size_t i = o->n_sys; o->by_init && i < o->n_sys + n && i < INIT_MOUNTS_MAX; i++)
		if (o->by_init[i])
			return true;
	return false;
}

/*
 * A mount, FLAG SRC PATH (FLAG PATH for KIND 'd' and 'm', as struct
 * init_mount's), that omnibox-init makes in bwrap's stead where
 * init_plan() says so, after bwrap's last mount and before the masks: a
 * system's cloned from the host's root (emit_system_root()), a grant's
 * there too, by the launch's descriptor SRC, or a tmpfs.  bwrap would read
 * its whole mount table again after each bind (each device of its --dev
 * too), omnibox-init reads none.
 */
static void
init_bind(struct out *o, const char *flag, const char *src, const char *path, char kind)
{
	size_t i = o->n_sys;

	if (i >= INIT_MOUNTS_MAX) {
		args3(o, flag, src ? src : path, src ? path : NULL);
		return;
	}
	o->n_sys++;
	if (o->sys_at && o->mounts)
		o->sys_at[i] = o->mounts->n;
	if (!o->by_init || !o->by_init[i]) {
		args3(o, flag, src ? src : path, src ? path : NULL);
		return;
	}
	/* SRC may be the caller's buffer: the copy is freed with O (build()). */
	o->init[o->n_init++] =
	    (struct init_mount){path, kind, src && kind != 't' && kind != 'r' ? dup_or_die(src) : NULL};
	record(o, flag, src ? src : path, src ? path : NULL);
	init_text(o, flag, src ? src : path, src ? path : NULL);
}

/* The same with the same path inside as on the host. */
static void
system_mount(struct out *o, const char *flag, const char *path, char kind)
{
	init_bind(o, flag, kind == 'd' ? NULL : path, path, kind);
}

/*
 * egress_rules: the session's CA bundle read-only over the system's, after
 * every grant (one of /etc would cover it), for the clients that read the
 * system's file and no variable.  The proxy writes it before the agent starts.
 */
static void
emit_ca_bundles(const struct policy *p, const struct bwrap_context *c, struct out *o)
{
	const struct sandbox *sb = &p->os_env.sandbox;
	char src[4096];

	if (!sb->n_egress)
		return;
	snprintf(src, sizeof(src), "%s/%s", c->scratch, ENV_CA_BUNDLE);
	if (c->resolved) {
		comment(o, "egress_rules (line %u): the session's CA bundle, written by the proxy "
			   "before the agent starts, read-only over each system bundle here",
			sb->egress_loc.line);
	} else if (!c->resolved) {
		comment(o, "egress_rules (line %u): the session's CA bundle (the system's CAs, "
			   "--egress-ca, the session CA),",
			sb->egress_loc.line);
		comment(o, "  written by the egress proxy before the agent starts, read-only over the "
			   "system's: at launch over each");
		comment(o, "  of these that exists here, followed to its file (Debian's shown):");
		for (size_t i = 0; bwrap_ca_bundles[i]; i++)
			comment(o, "  %s", bwrap_ca_bundles[i]);
	}
	for (size_t i = 0; i < c->n_ca_bundles; i++)
		init_bind(o, "--ro-bind", src, c->ca_bundles[i], 'b');
}

/*
 * egress_rules: transparent egress, for the clients that ignore the proxy
 * variables.  The sandbox's resolver is omnibox-init's, and /etc/hosts
 * holds only localhost (and the machine's name): no entry of the host's
 * may send a name around it.
 */
static void
emit_resolver(const struct policy *p, const struct bwrap_context *c, struct out *o)
{
	const struct sandbox *sb = &p->os_env.sandbox;
	char src[4096];

	if (!sb->n_egress)
		return;
	comment(o, "egress_rules (line %u): names resolve to addresses of the sandbox's own "
		   "(omnibox-init's resolver at " TRANSPARENT_DNS_ADDR "), so",
		sb->egress_loc.line);
	comment(o, "  a client that ignores the proxy variables still reaches the proxy as "
		   "NAME:PORT; files written at launch");
	snprintf(src, sizeof(src), "%s/%s", c->scratch, TRANSPARENT_RESOLV_CONF);
	init_bind(o, "--ro-bind", src, "/etc/resolv.conf", 'b');
	snprintf(src, sizeof(src), "%s/%s", c->scratch, TRANSPARENT_HOSTS);
	init_bind(o, "--ro-bind", src, "/etc/hosts", 'b');
}

static void
comment_protected(void *arg, const struct protect_entry *e)
{
	if (!e->line) /* protect_paths: listed after the defaults */
		comment(arg, "  %s: %s%s", e->path, e->why,
			e->hold == PROTECT_HOLD_NONE	 ? " (where it exists)"
			: e->hold == PROTECT_HOLD_FILE	 ? " (missing: a placeholder file)"
			: e->hold == PROTECT_HOLD_GITDIRS ? " (each one in it keeps its git entries)"
							  : "");
}

/*
 * Protected paths (protect.h): read-only onto themselves, after everything
 * else, so no grant below can make them writable again.
 */
static void
emit_protects(const struct policy *p, const struct bwrap_context *c, struct out *o)
{
	const struct sandbox *sb = &p->os_env.sandbox;

	if (!c->resolved) {
		const char *roots[256];
		size_t n = protect_symbolic_roots(sb, roots, 256);

		/* Comments alone: nothing to do for a pass that keeps none. */
		if (!commenting(o) || (!n && !sb->protect_paths.n))
			return;
		comment(o, "6b. protected paths (write_paths, line %u; docs/protect.md), read-only "
			   "at launch: each one that exists",
			sb->write_paths.loc.line);
		comment(o, "  is bound onto itself,");
		comment(o, "  a missing one at its first missing component onto an empty "
			   "placeholder; the directories");
		comment(o, "  between its writable root and it are pinned, so none can be renamed "
			   "(a masked one is hidden instead):");
		protect_each(sb, roots, n, "{HOME}", comment_protected, o);
		for (size_t i = 0; i < sb->protect_paths.n; i++)
			comment(o, "  %s (protect_paths, line %u): if it lies in a writable root",
				sb->protect_paths.v[i].symbolic, sb->protect_paths.v[i].loc.line);
		comment(o, "  and the .git entries above in every git directory found in a "
			   "writable root (nested");
		comment(o, "  repositories, submodules, worktrees, a .git file's target), and the "
			   "policy file when it");
		comment(o, "  lies in a writable root");
		for (size_t i = 0; i < sb->unprotect_paths.n; i++)
			comment(o, "  not protected: %s (unprotect_paths, line %u)",
				sb->unprotect_paths.v[i].s, sb->unprotect_paths.v[i].loc.line);
		return;
	}
	if (c->n_protects)
		comment(o, "6b. protected paths, read-only onto themselves");
	for (size_t i = 0; i < c->n_protects; i++) {
		comment(o, "%s", c->protects[i].what);
		emit_bind(o, &c->protects[i]);
	}
}

/* /etc's system files, read-only: system_mount()s. */
static void
emit_etc(struct out *o)
{
	size_t n = 0;

	while (paths_linux_etc_files[n])
		n++;
	if (init_ahead(o, n))
		comment(o, "system files of /etc, read-only (omnibox-init clones those it names "
			   "from the host's root, bound last)");
	for (size_t i = 0; i < n; i++)
		system_mount(o, "--ro-bind-try", paths_linux_etc_paths[i], 't');
}

/*
 * The host's root, for omnibox-init to clone the mounts it makes from:
 * bwrap's last mount, so that none of its others reads the host's mounts
 * again with the table; omnibox-init unmounts it before anything runs.
 * Not read-only: a writable grant's clone keeps the flags of the host's
 * mounts (a read-only one stays so), as bwrap's --bind-fd would; the
 * others are made read-only.  Not a mount of the sandbox's view (not
 * recorded): nothing sees it.
 */
static void
emit_system_root(struct out *o)
{
	if (!o->n_init)
		return;
	comment(o, "the host's root, only for omnibox-init to clone the mounts marked above from "
		   "(--system-root; each");
	comment(o, "  clone read-only but a writable grant's, which keeps the host's flags), "
		   "unmounted by");
	comment(o, "  omnibox-init before anything else runs");
	arg(o, "--bind");
	arg(o, "/");
	arg(o, BWRAP_SYSTEM_ROOT);
}

static void
emit_masks(const struct policy *p, const struct bwrap_context *c, struct out *o)
{
	const struct sandbox *sb = &p->os_env.sandbox;

	comment(o, "5. masks, after every grant");
	if (!c->resolved) {
		comment(o,
			"dotfiles: every child of {CWD} and of each granted directory outside it "
			"whose name");
		comment(o,
			"  starts with '.', found at launch (%s; cwd_hidden_scan_max_entries %llu, "
			"overflow %s),",
			sb->scan_recursive.value ? "at every depth" : "top level only",
			(unsigned long long)sb->scan_max_entries.value,
			scan_overflow_name(sb->scan_overflow));
		if (sb->allow_all_hidden) {
			comment(o,
				"  none: cwd_allow_hidden: [\"*\"] (line %u) shows every dotfile; a "
				"symlink among them leads only where the sandbox sees anyway",
				sb->cwd_allow_hidden.loc.line);
		} else if (sb->cwd_allow_hidden.n) {
			struct textbuf names = {0};

			for (size_t i = 0; i < sb->cwd_allow_hidden.n; i++)
				tb_printf(&names, "%s%s", i ? " " : "",
					  sb->cwd_allow_hidden.v[i].s);
			comment(o,
				"  except %s (cwd_allow_hidden%s); a directory gets an empty "
				"read-only tmpfs, a file /dev/null (bound by omnibox-init)",
				names.data, sb->cwd_allow_hidden.loc.line ? "" : ", the default");
			tb_free(&names);
		} else {
			comment(o,
				"  with no exceptions (cwd_allow_hidden: []); a directory gets an "
				"empty read-only tmpfs, a file /dev/null (bound by omnibox-init)");
		}
		for (size_t i = 0; i < sb->mask_paths.n; i++)
			comment(o,
				"mask_paths (line %u): %s, masked at launch (a missing path at its "
				"first missing component; the directories above it inside a "
				"writable root are bound onto themselves, so none can be renamed)",
				sb->mask_paths.v[i].loc.line, sb->mask_paths.v[i].symbolic);
		if (sb->deny_unix_socket_paths.n) {
			comment(o,
				"6. Unix sockets out of reach: /dev/null over each one that exists "
				"at launch (bound by omnibox-init)");
			for (size_t i = 0; i < sb->deny_unix_socket_paths.n; i++)
				comment(o, "deny_unix_socket_paths (line %u): %s",
					sb->deny_unix_socket_paths.v[i].loc.line,
					sb->deny_unix_socket_paths.v[i].symbolic);
		}
		return;
	}
	if (c->n_pins)
		comment(o, "the directories between a writable root and a mask_paths entry, "
			   "bound onto themselves: no rename moves a mask off its path");
	o->pin = true;
	for (size_t i = 0; i < c->n_pins; i++)
		emit_bind(o, &c->pins[i]);
	o->pin = false;
	for (size_t i = 0; i < c->n_masks; i++) {
		const struct bwrap_mask *m = &c->masks[i];

		comment(o, "%s", m->reason);
		if (m->is_dir && m->have_self)
			by_init(o, "--tmpfs", m->path, NULL);
		else if (m->is_dir)
			init_bind(o, "--tmpfs", NULL, m->path, 'm');
		else
			by_init(o, "--ro-bind", "/dev/null", m->path);
	}
	for (size_t i = 0; i < c->n_reexpose; i++) {
		comment(o, "granted explicitly inside a hidden dotfile directory");
		emit_bind(o, &c->reexpose[i]);
	}
	if (c->n_sockets)
		comment(o, "6. Unix sockets out of reach (deny_unix_socket_paths)");
	for (size_t i = 0; i < c->n_sockets; i++)
		by_init(o, "--ro-bind", "/dev/null", c->sockets[i]);
	/* Read-only last, once the grants inside a hidden directory have their
	 * mount points: empty, nothing to read, nothing to plant. */
	for (size_t i = 0; i < c->n_masks; i++)
		if (c->masks[i].is_dir)
			by_init(o, "--remount-ro", c->masks[i].path, NULL);
}

/*
 * limits: rlimits set by omnibox-init on itself before the command (so the
 * agent inherits them and cannot raise them), plus a cgroup where one is
 * delegated.  What is approximate or conditional is said here and warned.
 */
static void
emit_limits(const struct policy *p, struct diag *d, struct out *o)
{
	const struct limits *l = &p->os_env.sandbox.limits;

	if (!l->present)
		return;
	comment(o, "limits (line %u): set by omnibox-init before the command", l->loc.line);
	if (l->memory.present)
		comment(o,
			"  memory %llu bytes: memory.max in a delegated cgroup, and RLIMIT_DATA "
			"(private writable memory; address space only reserved, as V8 and Go "
			"do, is not counted)",
			(unsigned long long)l->memory.value);
	if (l->processes.present) {
		comment(o,
			"  processes %llu: pids.max in a delegated cgroup, else RLIMIT_NPROC, "
			"approximate: it counts every process of the user",
			(unsigned long long)l->processes.value);
		if (d)
			diag_warning(
			    d, l->processes.loc,
			    "os_env.sandbox.limits.processes is approximate on linux without a "
			    "delegated cgroup: RLIMIT_NPROC counts every process of the user");
	}
	if (l->cpu_time.present)
		comment(o, "  cpu_time %llu s: RLIMIT_CPU", (unsigned long long)l->cpu_time.value);
	if (l->cpu_rate.present) {
		comment(o, "  cpu_rate %llu%%: cpu.max in a delegated cgroup, else not enforced",
			(unsigned long long)l->cpu_rate.value);
		if (d)
			diag_warning(d, l->cpu_rate.loc,
				     "os_env.sandbox.limits.cpu_rate is enforced on linux only in "
				     "a delegated "
				     "cgroup (cpu.max); without one it is not enforced");
	}
	if (l->open_files.present)
		comment(o, "  open_files %llu: RLIMIT_NOFILE",
			(unsigned long long)l->open_files.value);
}


/* 7. namespaces, and the capabilities the sandbox starts with. */
static void
emit_namespaces(const struct policy *p, struct out *o)
{
	const struct sandbox *sb = &p->os_env.sandbox;

	comment(o, "7. namespaces and lifetime");
	arg(o, "--unshare-pid");
	arg(o, "--unshare-ipc");
	arg(o, "--unshare-uts");
	arg(o, "--unshare-cgroup-try");
	if (sb->n_egress) {
		comment(o, "egress_rules (line %u): no network but the egress proxy's relay",
			sb->egress_loc.line);
		arg(o, "--unshare-net");
	} else if (!sb->allow_network.value) {
		comment(o, "allow_network: false (line %u)", sb->allow_network.loc.line);
		arg(o, "--unshare-net");
	}
	arg(o, "--die-with-parent");
	arg(o, "--new-session");
	/* Root outside must not mean root's powers inside. */
	args3(o, "--cap-drop", "ALL", NULL);
	comment(o, "omnibox-init mounts the masks (--masks-fd), reaching them as the launch did "
		   "(CAP_DAC_READ_SEARCH),");
	comment(o, "  then drops every capability, the bounding set's too, before anything else "
		   "runs");
	args3(o, "--cap-add", "CAP_SYS_ADMIN", NULL);
	args3(o, "--cap-add", "CAP_DAC_READ_SEARCH", NULL);
	args3(o, "--cap-add", "CAP_SETPCAP", NULL);
	if (sb->n_egress) {
		comment(o, "egress_rules (line %u): omnibox-init binds the resolver's port and the "
			    "rules' ports in the",
			sb->egress_loc.line);
		comment(o, "  sandbox's own network");
		args3(o, "--cap-add", "CAP_NET_BIND_SERVICE", NULL);
	}
	comment(o, "as uid 0 of the user namespace that owns the mounts and the network, which it "
		   "is only");
	comment(o, "  without a nested one; then it nests one where the agent runs as the "
		   "launcher's uid and gid");
	comment(o, "  again (the kernel wants CAP_SETFCAP for a map of uid 0 outside it; nothing of "
		   "this for root,");
	comment(o, "  who has no user namespace)");
	args3(o, "--cap-add", "CAP_SETFCAP", NULL);
	args3(o, "--uid", "0", NULL);
	args3(o, "--gid", "0", NULL);
}

/* The ports omnibox-init listens on for transparent egress, with their rules. */
static void
emit_transparent_ports(const struct sandbox *sb, struct out *o)
{
	unsigned ports[TRANSPARENT_MAX_PORTS];
	char text[TRANSPARENT_MAX_PORTS * 6 + 1];
	int n = transparent_ports(sb->egress, sb->n_egress, ports, NULL);

	if (n <= 0)
		abort(); /* validate refuses more ports; egress_rules name one at least */
	transparent_ports_text(ports, n, text, sizeof(text));
	comment(o, "egress_rules (line %u): the ports the rules name (443 and 80 for a rule "
		   "without one), listened on",
		sb->egress_loc.line);
	comment(o, "  for connections to the resolver's addresses, which reach the proxy as "
		   "NAME:PORT");
	args3(o, "--transparent", text, NULL);
}

/*
 * omnibox-init's options: the command, the egress relay, the rlimits, and
 * the second layer it adds with Landlock before the command runs: writes
 * only below the writable grants and the few system places the sandbox
 * writes (so that a mount mistake alone cannot make the host writable),
 * and, with the host's network, abstract Unix sockets and signals scoped
 * to the sandbox.
 */
static void
emit_init_args(const struct policy *p, const struct bwrap_context *c,
	       const struct bwrap_grant *grants, size_t n_grants, struct out *o)
{
	const struct sandbox *sb = &p->os_env.sandbox;
	const struct limits *l = &sb->limits;
	const struct {
		const char *opt;
		const struct ir_u64 *v;
	} rl[] = {{"--rlimit-data", &l->memory},
		  {"--rlimit-cpu", &l->cpu_time},
		  {"--rlimit-nofile", &l->open_files},
		  {"--rlimit-nproc", &l->processes}};
	char num[32];

	if (c->ready_fd >= 0)
		snprintf(num, sizeof(num), "%d", c->ready_fd);
	comment(o, "omnibox-init says here that the sandbox is set up (and hands over the "
		   "seccomp listener), then closes it");
	args3(o, "--ready-fd", c->ready_fd >= 0 ? num : "{READY_FD}", NULL);
	if (c->seccomp_fd >= 0)
		snprintf(num, sizeof(num), "%d", c->seccomp_fd);
	comment(o, "the seccomp filter (--emit=seccomp), loaded by omnibox-init before the "
		   "command's first instruction, less the branches of the ABIs its machine");
	comment(o, "  cannot run; refusals are reported to omnibox-run");
	args3(o, "--seccomp-fd", c->seccomp_fd >= 0 ? num : "{SECCOMP_FD}", NULL);
	if (!c->resolved || c->n_masks || c->n_sockets) {
		if (c->masks_fd >= 0)
			snprintf(num, sizeof(num), "%d", c->masks_fd);
		comment(o, "the masks: omnibox-init binds /dev/null over each file and makes each "
			   "directory's tmpfs read-only,");
		comment(o, "  by descriptor in the directory the launch checked, and checks every "
			   "one in place before anything runs");
		args3(o, "--masks-fd", c->masks_fd >= 0 ? num : "{MASKS_FD}", NULL);
	}
	if (c->tty) {
		comment(o, "an interactive launch: the sandbox's own terminal is its controlling "
			   "terminal");
		arg(o, "--tty");
	}
	for (size_t i = 0; i < o->n_init; i++) {
		static const char *const opts[][2] = {
		    {"t", "--system"},	     {"r", "--system-required"}, {"b", "--system-bind"},
		    {"d", "--dev"},	     {"g", "--ro-bind-fd"},	 {"w", "--bind-fd"},
		    {"m", "--tmpfs"},
		};

		if (i == 0) {
			comment(o, "the mounts marked omnibox-init above, in their order, before the "
				   "masks: it clones the system's");
			comment(o, "  from the host's root bound at --system-root, as bwrap would "
				   "(--system: as --ro-bind-try;");
			comment(o, "  --system-required: as --ro-bind; --system-bind SRC PATH: as "
				   "--ro-bind SRC PATH; --dev: a");
			comment(o, "  tmpfs with bwrap's --dev devices, links and a new devpts), and "
				   "each grant of --ro-bind-fd");
			comment(o, "  and --bind-fd FD PATH from there too, once it is the directory or "
				   "file of the launch's");
			comment(o, "  descriptor FD (as bwrap's own checks it); --tmpfs PATH as bwrap's");
			args3(o, "--system-root", BWRAP_SYSTEM_ROOT, NULL);
		}
		for (size_t k = 0; k < sizeof(opts) / sizeof(opts[0]); k++)
			if (opts[k][0][0] == o->init[i].kind)
				arg(o, opts[k][1]);
		if (o->init[i].src)
			arg(o, o->init[i].src);
		arg(o, o->init[i].path);
	}
	/* After its mounts: the workspace may be one of them. */
	if (p->os_env.start_in_scratch.value) {
		comment(o, "start_in_scratch (line %u)", p->os_env.start_in_scratch.loc.line);
		args3(o, "--chdir", c->scratch, NULL);
	} else {
		comment(o, "the command's directory, once every mount is made");
		args3(o, "--chdir", c->cwd, NULL);
	}
	comment(o, "bwrap's --uid 0: omnibox-init becomes the launcher's uid and gid again (a "
		   "nested user namespace)");
	arg(o, "--launcher-ids");
	args3(o, "--exec", c->exec_path, NULL);
	if (sb->n_egress) {
		char sock[1024];

		if (c->proxy_socket)
			snprintf(sock, sizeof(sock), "%s", c->proxy_socket);
		else
			snprintf(sock, sizeof(sock), "%s/%s", c->scratch, BWRAP_PROXY_SOCKET);
		comment(o, "egress_rules (line %u): the relay to the proxy's socket",
			sb->egress_loc.line);
		args3(o, "--relay", c->proxy_port ? c->proxy_port : "{PORT}", sock);
		emit_transparent_ports(sb, o);
	}
	for (size_t i = 0; i < sizeof(rl) / sizeof(rl[0]); i++) {
		if (!rl[i].v->present)
			continue;
		snprintf(num, sizeof(num), "%llu", (unsigned long long)rl[i].v->value);
		args3(o, rl[i].opt, num, NULL);
	}
	comment(o, "Landlock: writes only below the writable grants and these");
	if (c->resolved ? c->private_home != NULL : !bwrap_home_written(p))
		args3(o, "--fs-write", c->home, NULL);
	for (size_t i = 0; i < n_grants; i++)
		if (grants[i].writable)
			args3(o, "--fs-write", grants[i].path, NULL);
	for (size_t i = 0; i < c->n_reexpose; i++)
		if (c->reexpose[i].writable)
			args3(o, "--fs-write", c->reexpose[i].path, NULL);
	for (size_t i = 0; !c->resolved && i < sb->write_paths.n; i++)
		if (is_root(&sb->write_paths.v[i]))
			comment(o, "and each top-level directory (write_paths '/', line %u)",
				sb->write_paths.v[i].loc.line);
	for (size_t i = 0; paths_linux_writable[i]; i++)
		args3(o, "--fs-write", paths_linux_writable[i], NULL);
	if (bwrap_network_shared(p)) {
		comment(o, "the host's network: abstract Unix sockets and signals stay inside");
		arg(o, "--scope");
	}
}

/* 1. and 2.: the system directories, /etc's files, /proc, /dev and /tmp. */
static void
emit_system(const struct bwrap_context *c, struct out *o)
{
	comment(o, "1. system directories, read-only");
	for (size_t i = 0; paths_linux_system_dirs[i]; i++) {
		const struct bwrap_link *link = NULL;

		for (size_t k = 0; k < c->n_system_links; k++)
			if (!strcmp(c->system_links[k].path, paths_linux_system_dirs[i]))
				link = &c->system_links[k];
		/* A merged-/usr symlink is recreated, not mounted a second time. */
		if (link)
			args3(o, "--symlink", link->target, link->path);
		else if (c->init_interp)
			args3(o, "--ro-bind-try", paths_linux_system_dirs[i], paths_linux_system_dirs[i]);
		else
			system_mount(o, "--ro-bind-try", paths_linux_system_dirs[i], 't');
	}
	emit_etc(o);

	o->part = BWRAP_PART_KERNEL;
	comment(o, "2. fresh /proc (its tunables read-only), /dev and /tmp");
	args3(o, "--proc", "/proc", NULL);
	/* Kernel tunables stay read-only even for a root without capabilities,
	 * whom file permissions alone would let write most of them. */
	system_mount(o, "--ro-bind", "/proc/sys", 'r');
	system_mount(o, "--ro-bind-try", "/proc/sysrq-trigger", 't');
	if (c->init_interp)
		args3(o, "--dev", "/dev", NULL);
	else
		system_mount(o, "--dev", "/dev", 'd');
	args3(o, "--tmpfs", "/tmp", NULL);
}

static int build(const struct policy *p, const struct bwrap_context *c, struct diag *d,
		 struct textbuf *text, struct textbuf *nul, struct textbuf *tail,
		 struct bwrap_mounts *mounts, const bool *by_init, size_t *sys_at, size_t *n_sys);

/* Do the paths A and B overlap: one of them at or below the other? */
static bool
overlap(const char *a, const char *b)
{
	return path_within(a, b) || path_within(b, a);
}

/*
 * Which of the mounts omnibox-init may make (init_bind()) it makes, into
 * BY_INIT: each that no later mount of bwrap's lies at, below or above (a
 * grant of /etc or in /dev, a pin or a protected path in a grant), nor an
 * earlier one of the masks omnibox-init makes last.  bwrap makes those in
 * its own order, before that mount, as ever; omnibox-init makes the others
 * after bwrap's last, in their order, and its masks after them.  The
 * mounts are the ones this very builder makes: a first pass records them,
 * and where each such mount is among them.  Decided from the last one
 * back, so that a later one omnibox-init makes is not one of bwrap's.
 */
static int
init_plan(const struct policy *p, const struct bwrap_context *c, bool *by_init)
{
	struct bwrap_mounts m = {0};
	size_t at[INIT_MOUNTS_MAX], n = 0;
	int rc = build(p, c, NULL, NULL, NULL, NULL, &m, NULL, at, &n);

	for (size_t i = n; rc == 0 && i-- > 0;) {
		size_t next = i + 1;

		by_init[i] = true;
		for (size_t k = at[i] + 1; k < m.n && by_init[i]; k++) {
			if (next < n && k == at[next]) {
				bool moved = by_init[next++];

				if (moved)
					continue;
			}
			if (m.v[k].op != BWRAP_FS_WRITE && !m.v[k].late &&
			    overlap(m.v[at[i]].dest, m.v[k].dest))
				by_init[i] = false;
		}
		for (size_t k = 0; k < at[i] && by_init[i]; k++)
			if (m.v[k].late && overlap(m.v[at[i]].dest, m.v[k].dest))
				by_init[i] = false;
	}
	bwrap_mounts_free(&m);
	return rc;
}

/* build() with the system's mounts planned (init_plan()). */
static int
build_planned(const struct policy *p, const struct bwrap_context *c, struct diag *d,
	      struct textbuf *text, struct textbuf *nul, struct textbuf *tail,
	      struct bwrap_mounts *mounts)
{
	bool by_init[INIT_MOUNTS_MAX] = {false};

	return build(p, c, d, text, nul, tail, mounts,
		     init_plan(p, c, by_init) == 0 ? by_init : NULL, NULL, NULL);
}

int
bwrap_build(const struct policy *p, const struct bwrap_context *c, struct diag *d,
	    struct textbuf *text, struct textbuf *nul, struct textbuf *tail)
{
	return build_planned(p, c, d, text, nul, tail, NULL);
}

int
bwrap_mounts_build(const struct policy *p, const struct bwrap_context *c,
		   struct bwrap_mounts *m)
{
	int rc;

	memset(m, 0, sizeof(*m));
	m->keep_why = true;
	rc = build_planned(p, c, NULL, NULL, NULL, NULL, m);
	free(m->why);
	m->why = NULL;
	return rc;
}

void
bwrap_mounts_free(struct bwrap_mounts *m)
{
	for (size_t i = 0; i < m->n; i++) {
		free((char *)m->v[i].src);
		free((char *)m->v[i].dest);
		free((char *)m->v[i].why);
	}
	free(m->v);
	free(m->why);
	memset(m, 0, sizeof(*m));
}

static int
build(const struct policy *p, const struct bwrap_context *c, struct diag *d,
      struct textbuf *text, struct textbuf *nul, struct textbuf *tail, struct bwrap_mounts *mounts,
      const bool *by_init, size_t *sys_at, size_t *n_sys)
{
	const struct os_env *env = &p->os_env;
	const struct sandbox *sb = &env->sandbox;
	struct out o = {.text = text,
			.nul = nul,
			.mounts = mounts,
			.part = BWRAP_PART_SYSTEM,
			.by_init = by_init,
			.sys_at = sys_at};
	const struct bwrap_grant *grants;
	struct bwrap_grant *owned = NULL;
	size_t n_grants;
	char fd[16];
	char **dirs = calloc(sb->write_files.n + 1, sizeof(*dirs));

	if (text)
		tb_printf(text, "# bubblewrap arguments for %s%s%s, one per line\n", p->source,
			  p->terminal ? ", terminal " : "", p->terminal ? p->terminal->name : "");
	if (sb->type == SANDBOX_NONE) {
		if (!text)
			;
		else if (sb->type_loc.line)
			tb_printf(text,
				  "# sandbox type none (line %u): the command runs without a "
				  "sandbox\n",
				  sb->type_loc.line);
		else
			tb_puts(text, "# sandbox type none: the command runs without a sandbox\n");
		free(dirs);
		return 0;
	}
	if (!c->resolved && text) {
		tb_puts(text,
			"# placeholders: {CWD} workspace, {HOME} home directory, {SCRATCH} "
			"private scratch dir,\n"
			"# {COMMAND} the agent's command, {EXEC} its canonical path, {PORT} the "
			"egress relay's port,\n"
			"# {SECCOMP_FD} the filter of --emit=seccomp-bpf, {STATUS_FD} a pipe and "
			"{READY_FD} a socket to omnibox-run,\n"
			"# {FD} a descriptor omnibox-run opens on the path that follows it, "
			"walking it one component\n"
			"# at a time: a symlink in a writable root that leads out of it, or a "
			"grant that resolves\n"
			"# to / or a home directory, refuses the launch; a grant missing at "
			"launch is not mounted.\n"
			"# `omnibox-compile --resolve` prints the argv omnibox-run would execute "
			"here\n");
	}

	emit_system(c, &o);
	o.part = BWRAP_PART_HOME;
	emit_private_home(p, c, &o);
	o.part = BWRAP_PART_LAUNCH;

	comment(&o,
		"3. the command's install directory, read-only, when outside the system "
		"directories%s",
		c->resolved ? "" : " (at launch)");
	for (size_t i = 0; i < c->n_command_dirs; i++)
		emit_bind(&o, &c->command_dirs[i]);
	comment(&o, "omnibox-init, the sandbox's first process");
	args3(&o, "--ro-bind-fd", fd_text(fd, sizeof(fd), c->init_fd), BWRAP_INIT_PATH);

	if (c->resolved) {
		grants = c->grants;
		n_grants = c->n_grants;
	} else {
		if (!dirs)
			abort();
		grants = owned = symbolic_grants(p, c, &n_grants, dirs);
	}
	o.part = BWRAP_PART_GRANT;
	emit_grants(p, c, grants, n_grants, &o);
	o.part = BWRAP_PART_LAUNCH;
	emit_ca_bundles(p, c, &o);
	emit_resolver(p, c, &o);
	o.part = BWRAP_PART_MASK;
	emit_masks(p, c, &o);
	o.part = BWRAP_PART_PROTECT;
	emit_protects(p, c, &o);
	o.part = BWRAP_PART_INIT;
	emit_system_root(&o);

	emit_namespaces(p, &o);
	arg(&o, "--as-pid-1");

	emit_limits(p, d, &o);

	/* File descriptor numbers are the launch's to choose. */
	if (c->status_fd >= 0)
		snprintf(fd, sizeof(fd), "%d", c->status_fd);
	comment(&o, "bwrap reports the sandbox's PID here, for signal forwarding");
	args3(&o, "--json-status-fd", c->status_fd >= 0 ? fd : "{STATUS_FD}", NULL);
	/* What follows goes on bwrap's command line (TAIL), not in --args. */
	o.nul = NULL;
	arg(&o, "--");
	o.nul = tail;
	comment(&o,
		"bwrap starts omnibox-init as %s %s {READY_FD}: the arguments below, the "
		"command's",
		BWRAP_INIT_PATH, BWRAP_INIT_ARGS_FROM);
	comment(&o, "  environment and the descriptors they name come on that socket while bwrap "
		    "sets the sandbox up");
	arg(&o, BWRAP_INIT_PATH);
	emit_init_args(p, c, grants, n_grants, &o);
	arg(&o, "--");
	if (c->resolved) {
		for (size_t i = 0; i < c->n_command; i++)
			arg(&o, c->command[i]);
	} else if (p->terminal) {
		arg(&o, p->terminal->command.s);
		for (size_t i = 0; i < p->terminal->args.n; i++)
			arg(&o, p->terminal->args.v[i].s);
	} else {
		arg(&o, "{COMMAND}");
	}
	free(owned);
	for (size_t i = 0; dirs && i < sb->write_files.n; i++)
		free(dirs[i]);
	free(dirs);
	if (n_sys)
		*n_sys = o.n_sys;
	for (size_t i = 0; i < o.n_init; i++)
		free(o.init[i].src);
	return 0;
}

int
emit_bwrap(const struct policy *p, enum target t, struct diag *d, struct textbuf *out)
{
	struct bwrap_context c;

	(void)t;
	/* An argv bwrap would never run: the policy says which backend does. */
	if (p->os_env.sandbox.type == SANDBOX_LINUX_LANDLOCK) {
		diag_error(d, p->os_env.sandbox.type_loc,
			   "sandbox type linux_landlock runs without bwrap: its Linux form is "
			   "--emit=landlock");
		return -1;
	}
	bwrap_context_symbolic(&c);
	return bwrap_build(p, &c, d, out, NULL, NULL);
}
