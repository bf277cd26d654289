/*
 * emit_bwrap.c - the bubblewrap argument vector (--emit=bwrap).
 *
 * Mount order is the security argument, so it is fixed here and nowhere
 * else: system directories, /proc /dev /tmp, the command, the grants (every
 * ancestor before its descendants, so a read-only grant on a parent never
 * hides a writable one below it), then the masks, so no grant can undo a
 * mask.  bwrap applies mounts in argument order and the later one wins.
 */
#include "bwrap.h"
#include "emit.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const bwrap_system_dirs[] = {"/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin", NULL};

const char *const bwrap_etc_files[] = {"resolv.conf",  "hosts",	    "nsswitch.conf",   "passwd",
				       "group",	       "localtime", "ld.so.cache",     "ld.so.conf",
				       "ld.so.conf.d", "ssl",	    "ca-certificates", "pki",
				       "alternatives", NULL};

bool
bwrap_path_is_system(const char *path)
{
	return path_within_any(path, bwrap_system_dirs);
}

void
bwrap_context_symbolic(struct bwrap_context *c)
{
	memset(c, 0, sizeof(*c));
	c->cwd = "{CWD}";
	c->home = "{HOME}";
	c->scratch = "{SCRATCH}";
	c->init = "{INIT}";
	c->seccomp_fd = -1;
	c->status_fd = -1;
}

struct out {
	struct textbuf *text, *nul;
};

static void
arg(struct out *o, const char *a)
{
	tb_puts(o->text, a);
	tb_putc(o->text, '\n');
	if (o->nul)
		tb_write(o->nul, a, strlen(a) + 1);
}

static void
args3(struct out *o, const char *flag, const char *x, const char *y)
{
	arg(o, flag);
	arg(o, x);
	if (y)
		arg(o, y);
}

static void comment(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
comment(struct out *o, const char *fmt, ...)
{
	va_list ap;
	char buf[1024];

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	tb_printf(o->text, "# %s\n", buf);
}

struct grant {
	const char *path;
	bool writable;
	bool must_exist;  /* --bind, not --bind-try */
	const char *what; /* "write_paths", ... */
	uint32_t line;
};

struct grants {
	struct grant *v;
	size_t n, cap;
};

static void
grant_add(struct grants *g, const char *path, bool writable, bool must_exist, const char *what,
	  uint32_t line)
{
	if (g->n == g->cap) {
		g->cap = g->cap ? g->cap * 2 : 16;
		g->v = realloc(g->v, g->cap * sizeof(*g->v));
		if (!g->v)
			abort();
	}
	g->v[g->n++] = (struct grant){path, writable, must_exist, what, line};
}

static int
grant_cmp(const void *a, const void *b)
{
	const struct grant *x = a, *y = b;

	/* Byte order puts every path before its extensions, so every
	 * ancestor is mounted before its descendants. */
	return strcmp(x->path, y->path);
}

static bool
is_root(const struct ir_path *p)
{
	return p->base == PATH_ABSOLUTE && p->rel[0] == '\0';
}

static void
collect_list(const struct bwrap_context *c, struct grants *g, const struct ir_pathlist *l,
	     bool writable, const char *what)
{
	for (size_t i = 0; i < l->n; i++) {
		const struct ir_path *p = &l->v[i];

		if (is_root(p)) {
			/* Never a bind of "/": it would bring /proc, /sys, /dev
			 * and the host's /tmp back in.  Its directories instead. */
			for (size_t k = 0; k < c->n_root_dirs; k++)
				grant_add(g, c->root_dirs[k], writable, false, what, p->loc.line);
			continue;
		}
		/* Resolved policies carry canonical paths in `symbolic`. */
		grant_add(g, p->symbolic, writable, false, what, p->loc.line);
	}
}

/* Does some write_paths entry name the workspace itself? */
static const struct ir_path *
workspace_write_grant(const struct policy *p, const struct bwrap_context *c)
{
	const struct ir_pathlist *w = &p->os_env.sandbox.write_paths;

	for (size_t i = 0; i < w->n; i++) {
		if (!c->resolved && w->v[i].base == PATH_CWD && w->v[i].rel[0] == '\0')
			return &w->v[i];
		if (c->resolved && !strcmp(w->v[i].symbolic, c->cwd))
			return &w->v[i];
	}
	return NULL;
}

static void
emit_grants(const struct policy *p, const struct bwrap_context *c, struct out *o)
{
	const struct sandbox *sb = &p->os_env.sandbox;
	const struct ir_path *ws = workspace_write_grant(p, c);
	struct grants g = {0};
	size_t i, j;

	grant_add(&g, c->cwd, ws != NULL, true,
		  ws ? "workspace, writable: write_paths" : "workspace, read-only",
		  ws ? ws->loc.line : 0);
	collect_list(c, &g, &sb->write_paths, true, "write_paths");
	collect_list(c, &g, &sb->read_paths, false, "read_paths");
	collect_list(c, &g, &sb->write_files, true, "write_files");
	grant_add(&g, c->scratch, true, true, "scratch dir ($TMPDIR), writable", 0);

	/* The same path granted twice is one mount, writable if either is. */
	qsort(g.v, g.n, sizeof(g.v[0]), grant_cmp);
	for (i = 0, j = 0; i < g.n; i++) {
		if (j > 0 && !strcmp(g.v[j - 1].path, g.v[i].path)) {
			struct grant *keep = &g.v[j - 1];

			if (g.v[i].writable && !keep->writable)
				*keep = g.v[i];
			keep->must_exist |= g.v[i].must_exist;
			continue;
		}
		g.v[j++] = g.v[i];
	}
	g.n = j;

	comment(o, "4. grants, every ancestor before its descendants%s",
		c->resolved ? "" : " (re-sorted at launch on canonical paths)");
	for (i = 0; i < g.n; i++) {
		const struct grant *gr = &g.v[i];

		if (gr->line)
			comment(o, "%s (line %u)", gr->what, gr->line);
		else
			comment(o, "%s", gr->what);
		args3(o,
		      gr->writable ? (gr->must_exist ? "--bind" : "--bind-try")
				   : (gr->must_exist ? "--ro-bind" : "--ro-bind-try"),
		      gr->path, gr->path);
	}
	for (i = 0; !c->resolved && i < sb->read_paths.n + sb->write_paths.n; i++) {
		const struct ir_path *rp = i < sb->read_paths.n
					       ? &sb->read_paths.v[i]
					       : &sb->write_paths.v[i - sb->read_paths.n];

		if (is_root(rp))
			comment(o,
				"'/' (line %u) is never bound whole: each top-level directory "
				"except /proc /sys /dev /tmp /run is, at launch",
				rp->loc.line);
	}
	free(g.v);
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
		if (sb->cwd_allow_hidden.n) {
			struct textbuf names = {0};

			for (size_t i = 0; i < sb->cwd_allow_hidden.n; i++)
				tb_printf(&names, "%s%s", i ? " " : "",
					  sb->cwd_allow_hidden.v[i].s);
			comment(o,
				"  except %s (cwd_allow_hidden%s); a directory gets an empty "
				"read-only tmpfs, a file /dev/null",
				names.data, sb->cwd_allow_hidden.loc.line ? "" : ", the default");
			tb_free(&names);
		} else {
			comment(o,
				"  with no exceptions (cwd_allow_hidden: []); a directory gets an "
				"empty read-only tmpfs, a file /dev/null");
		}
		for (size_t i = 0; i < sb->mask_paths.n; i++)
			comment(o,
				"mask_paths (line %u): %s, masked at launch (a missing path at its "
				"first missing component)",
				sb->mask_paths.v[i].loc.line, sb->mask_paths.v[i].symbolic);
		if (sb->deny_unix_socket_paths.n) {
			comment(o,
				"6. Unix sockets out of reach: /dev/null over each one that exists "
				"at launch");
			for (size_t i = 0; i < sb->deny_unix_socket_paths.n; i++)
				comment(o, "deny_unix_socket_paths (line %u): %s",
					sb->deny_unix_socket_paths.v[i].loc.line,
					sb->deny_unix_socket_paths.v[i].symbolic);
		}
		return;
	}
	for (size_t i = 0; i < c->n_masks; i++) {
		const struct bwrap_mask *m = &c->masks[i];

		comment(o, "%s", m->reason);
		if (m->is_dir) {
			/* Empty and read-only: nothing to read, nothing to plant. */
			args3(o, "--tmpfs", m->path, NULL);
			args3(o, "--remount-ro", m->path, NULL);
		} else {
			args3(o, "--ro-bind", "/dev/null", m->path);
		}
	}
	for (size_t i = 0; i < c->n_reexpose; i++) {
		comment(o, "granted explicitly inside a hidden dotfile directory");
		args3(o, c->reexpose[i].writable ? "--bind" : "--ro-bind", c->reexpose[i].path,
		      c->reexpose[i].path);
	}
	if (c->n_sockets)
		comment(o, "6. Unix sockets out of reach (deny_unix_socket_paths)");
	for (size_t i = 0; i < c->n_sockets; i++)
		args3(o, "--ro-bind", "/dev/null", c->sockets[i]);
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
		comment(o, "  memory %llu bytes: RLIMIT_AS (and memory.max in a delegated cgroup)",
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

int
bwrap_build(const struct policy *p, const struct bwrap_context *c, struct diag *d,
	    struct textbuf *text, struct textbuf *nul)
{
	const struct os_env *env = &p->os_env;
	const struct sandbox *sb = &env->sandbox;
	struct out o = {text, nul};
	char fd[16];

	(void)d;
	tb_printf(text, "# bubblewrap arguments for %s%s%s, one per line\n", p->source,
		  p->terminal ? ", terminal " : "", p->terminal ? p->terminal->name : "");
	if (sb->type == SANDBOX_NONE) {
		if (sb->type_loc.line)
			tb_printf(text,
				  "# sandbox type none (line %u): the command runs without a "
				  "sandbox\n",
				  sb->type_loc.line);
		else
			tb_puts(text, "# sandbox type none: the command runs without a sandbox\n");
		return 0;
	}
	if (!c->resolved) {
		tb_puts(text,
			"# placeholders: {CWD} workspace, {HOME} home directory, {SCRATCH} "
			"private scratch dir,\n# {INIT} omnibox-init, {SECCOMP_FD} the filter "
			"of --emit=seccomp-bpf, {COMMAND} the agent's command;\n# `omnibox-compile "
			"--resolve` prints the argv omnibox-run would execute here\n");
	}

	comment(&o, "1. system directories, read-only");
	for (size_t i = 0; bwrap_system_dirs[i]; i++) {
		const struct bwrap_link *link = NULL;

		for (size_t k = 0; k < c->n_system_links; k++)
			if (!strcmp(c->system_links[k].path, bwrap_system_dirs[i]))
				link = &c->system_links[k];
		/* A merged-/usr symlink is recreated, not mounted a second time. */
		if (link)
			args3(&o, "--symlink", link->target, link->path);
		else
			args3(&o, "--ro-bind-try", bwrap_system_dirs[i], bwrap_system_dirs[i]);
	}
	for (size_t i = 0; bwrap_etc_files[i]; i++) {
		char path[64];

		snprintf(path, sizeof(path), "/etc/%s", bwrap_etc_files[i]);
		args3(&o, "--ro-bind-try", path, path);
	}

	comment(&o, "2. fresh /proc (its tunables read-only), /dev and /tmp");
	args3(&o, "--proc", "/proc", NULL);
	/* Kernel tunables stay read-only even for a root without capabilities,
	 * whom file permissions alone would let write most of them. */
	args3(&o, "--ro-bind", "/proc/sys", "/proc/sys");
	args3(&o, "--ro-bind-try", "/proc/sysrq-trigger", "/proc/sysrq-trigger");
	args3(&o, "--dev", "/dev", NULL);
	args3(&o, "--tmpfs", "/tmp", NULL);

	comment(&o,
		"3. the command's install directory, read-only, when outside the system "
		"directories%s",
		c->resolved ? "" : " (at launch)");
	for (size_t i = 0; i < c->n_command_dirs; i++)
		args3(&o, "--ro-bind", c->command_dirs[i], c->command_dirs[i]);
	comment(&o, "omnibox-init, the sandbox's first process");
	args3(&o, "--ro-bind", c->init, BWRAP_INIT_PATH);

	emit_grants(p, c, &o);
	emit_masks(p, c, &o);

	comment(&o, "7. namespaces and lifetime");
	arg(&o, "--unshare-pid");
	arg(&o, "--unshare-ipc");
	arg(&o, "--unshare-uts");
	arg(&o, "--unshare-cgroup-try");
	if (sb->n_egress) {
		comment(&o, "egress_rules (line %u): no network but the egress proxy's relay",
			sb->egress_loc.line);
		arg(&o, "--unshare-net");
	} else if (!sb->allow_network.value) {
		comment(&o, "allow_network: false (line %u)", sb->allow_network.loc.line);
		arg(&o, "--unshare-net");
	}
	arg(&o, "--die-with-parent");
	arg(&o, "--new-session");
	/* Root outside must not mean root's powers inside. */
	args3(&o, "--cap-drop", "ALL", NULL);
	arg(&o, "--as-pid-1");
	if (env->start_in_scratch.value) {
		comment(&o, "start_in_scratch (line %u)", env->start_in_scratch.loc.line);
		args3(&o, "--chdir", c->scratch, NULL);
	} else {
		args3(&o, "--chdir", c->cwd, NULL);
	}

	emit_limits(p, d, &o);

	comment(&o, "8. the seccomp filter (--emit=seccomp), installed before the first "
		    "instruction");
	/* File descriptor numbers are the launch's to choose. */
	if (c->seccomp_fd >= 0)
		snprintf(fd, sizeof(fd), "%d", c->seccomp_fd);
	args3(&o, "--seccomp", c->seccomp_fd >= 0 ? fd : "{SECCOMP_FD}", NULL);
	if (c->resolved) {
		if (c->status_fd >= 0)
			snprintf(fd, sizeof(fd), "%d", c->status_fd);
		comment(&o, "bwrap reports the sandbox's PID here, for signal forwarding");
		args3(&o, "--json-status-fd", c->status_fd >= 0 ? fd : "{STATUS_FD}", NULL);
	}
	/* What follows goes on bwrap's command line, not in --args. */
	o.nul = NULL;
	arg(&o, "--");
	arg(&o, BWRAP_INIT_PATH);
	for (size_t i = 0; i < c->n_init_args; i++)
		arg(&o, c->init_args[i]);
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
	return 0;
}

int
emit_bwrap(const struct policy *p, enum target t, struct diag *d, struct textbuf *out)
{
	struct bwrap_context c;

	(void)t;
	bwrap_context_symbolic(&c);
	return bwrap_build(p, &c, d, out, NULL);
}
