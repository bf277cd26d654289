/*
 * emit_winjob.c - the Job Object manifest for omnibox-run.exe (--emit=winjob).
 *
 * A Job Object bounds the lifetime and the resources of a process tree; it
 * isolates neither files nor the network.  So the manifest names, setting
 * by setting, what the policy asks that Windows will not enforce, and the
 * compiler warns about each one: nobody reviewing a Windows profile may
 * mistake it for the confinement a bwrap or Seatbelt profile gives.
 *
 * Format (read by runtime/win/manifest.c): one `key = value` per line, the
 * value being everything after " = " with \\ \n \r \t \xHH escapes
 * (`key =` for an empty one); comments only on lines of their own, so a
 * value may hold any character.
 */
#include "emit.h"
#include "winjob.h"

#include "../compiler/decide/env.h"

#include <inttypes.h>
#include <string.h>

/* Why each kind of setting has no Job Object form. */
#define WHY_READ "a Job Object does not isolate files: the agent can read whatever the user can"
#define WHY_WRITE "a Job Object does not isolate files: the agent can write wherever the user can"
#define WHY_MASK "a Job Object cannot hide files: these paths stay visible"
#define WHY_SOCKET "a Job Object cannot block sockets: these stay reachable"
#define WHY_DOTFILES "a Job Object cannot hide files: no dotfile is masked"
#define WHY_NETWORK "a Job Object has no network control: the network stays reachable"
#define WHY_OPEN_FILES "a Job Object cannot limit open files or handles"
#define WHY_NONE "the sandbox type is none, so no Job Object is created"

struct wctx {
	const struct policy *p;
	const struct sandbox *sb;
	struct diag *d;
	struct textbuf *out;
	struct textbuf unenforced; /* the not-enforced lines, written last */
	const char *what;	   /* "os_env.sandbox", or a terminal's own */
	const char *env_what;	   /* "os_env", or a terminal's own */
	bool none;		   /* sandbox type none: no job */
};

/* The value V of a `key = value` line, escaped so that it stays on one line. */
static void
put_value(struct textbuf *out, const char *v)
{
	size_t n = strlen(v);

	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)v[i];

		if (ch == '\\')
			tb_puts(out, "\\\\");
		else if (ch == '\n')
			tb_puts(out, "\\n");
		else if (ch == '\r')
			tb_puts(out, "\\r");
		else if (ch == '\t')
			tb_puts(out, "\\t");
		/* Editors strip trailing blanks; escaped, the value survives them. */
		else if (ch < 0x20 || ch == 0x7f || (ch == ' ' && (i == 0 || i == n - 1)))
			tb_printf(out, "\\x%02x", ch);
		else
			tb_putc(out, (char)ch);
	}
}

/*
 * S escaped as a value is, for comments and setting names: a line break in
 * a terminal name or a file name must not start a manifest line of its own.
 */
static const char *
esc(struct wctx *c, const char *s)
{
	struct textbuf tb = {0};
	const char *r;

	put_value(&tb, s);
	r = arena_strdup(c->d->arena, tb.data ? tb.data : "");
	tb_free(&tb);
	return r;
}

/* `key = value`; an empty value leaves no trailing blank: `key =`. */
static void
put_kv(struct textbuf *out, const char *key, const char *value)
{
	tb_printf(out, *value ? "%s = " : "%s =", key);
	put_value(out, value);
	tb_putc(out, '\n');
}

/* "(line 8)", or "(default)" for a value nobody wrote. */
static const char *
where(struct wctx *c, struct loc loc)
{
	if (!loc.line)
		return "(default)";
	return arena_printf(c->d->arena, "(line %u)", loc.line);
}

/*
 * Record that setting NAME (written at LOC) is not enforced, for REASON.
 * WARN is false when validation already warned about the same setting.
 */
static void
unenforced(struct wctx *c, struct loc loc, const char *name, const char *reason, bool warn)
{
	tb_printf(&c->unenforced, "not-enforced = %s %s: ", name, where(c, loc));
	put_value(&c->unenforced, reason);
	tb_putc(&c->unenforced, '\n');
	if (warn)
		diag_warning(c->d, loc, "%s is not enforced on Windows: %s", name, reason);
}

static const char *
setting(struct wctx *c, const char *key)
{
	return arena_printf(c->d->arena, "%s.%s", c->what, key);
}

/* ---- what cannot be expressed at all ------------------------------------------- */

/*
 * egress_rules and credential_proxy promise that traffic goes through the
 * filtering proxy; Windows has no way to force it there, so compiling them
 * into a manifest would quietly drop the promise.  A pinned
 * windows_jobobject is already refused by validation; this covers `auto`.
 */
static void
report_inexpressible(struct wctx *c)
{
	if (c->sb->n_egress)
		diag_error(c->d, c->sb->egress_loc,
			   "%s cannot be enforced on Windows: a Job Object has no network "
			   "control (compile for linux or darwin, where the egress proxy is the "
			   "only way out)",
			   setting(c, "egress_rules"));
	if (c->sb->n_creds)
		diag_error(c->d, c->sb->creds_loc,
			   "%s cannot be enforced on Windows: it needs the egress proxy, which a "
			   "Job Object cannot impose",
			   setting(c, "credential_proxy"));
	if (c->sb->n_git_ssh)
		diag_error(c->d, c->sb->git_ssh_loc,
			   "%s cannot be enforced on Windows: its broker runs on Linux only",
			   setting(c, "git_ssh"));
	if (c->sb->cow_paths.n)
		diag_error(c->d, c->sb->cow_paths.v[0].loc,
			   "%s: copy_on_write cannot be enforced on Windows: a Job Object cannot "
			   "bind a copy over a path",
			   setting(c, "write_paths"));
}

bool
winjob_can_express(const struct policy *p)
{
	const struct sandbox *sb = &p->os_env.sandbox;

	return sb->type == SANDBOX_NONE ||
	       (!sb->n_egress && !sb->n_creds && !sb->n_git_ssh && !sb->cow_paths.n);
}

/* ---- sections -------------------------------------------------------------------- */

static void
emit_header(struct wctx *c)
{
	const struct policy *p = c->p;
	const struct terminal *t = p->terminal;

	tb_printf(c->out, "# Job Object manifest of %s%s%s, read by omnibox-run.exe\n",
		  esc(c, p->source), t ? ", terminal " : "", t ? esc(c, t->name) : "");
	tb_puts(c->out,
		"# A Job Object bounds the lifetime and the resources of the agent's process\n"
		"# tree.  It does not isolate files or the network: what the policy asks that\n"
		"# it cannot enforce is listed at the end as not-enforced.\n");
	tb_printf(c->out, "version = %d\n", WINJOB_VERSION);
	put_kv(c->out, "policy", p->source);
	if (t) {
		tb_printf(c->out,
			  "# terminal %s (line %u): its command runs when none follows --\n",
			  esc(c, t->name), t->loc.line);
		put_kv(c->out, "terminal", t->name);
		if (t->allow_cwd_override.value) {
			tb_printf(c->out,
				  "# allow_cwd_override (line %u): --cwd may name a directory "
				  "inside its workspace\n",
				  t->allow_cwd_override.loc.line);
			tb_puts(c->out, "allow_cwd_override = true\n");
		}
		put_kv(c->out, "command", t->command.s);
		for (size_t i = 0; i < t->args.n; i++)
			put_kv(c->out, "arg", t->args.v[i].s);
	}
}

static void
emit_job(struct wctx *c)
{
	const struct sandbox *sb = c->sb;
	const struct os_env *env = &c->p->os_env;

	if (c->none) {
		tb_printf(c->out,
			  "# sandbox type none %s: no Job Object; the command runs unconfined,\n"
			  "# only the environment allow-list applies\n",
			  where(c, sb->type_loc));
		tb_puts(c->out, "job = none\n");
	} else if (sb->type_loc.line) {
		tb_printf(c->out, "# sandbox type %s (line %u)\n", sandbox_type_name(sb->type),
			  sb->type_loc.line);
		tb_puts(c->out, "job = create\n");
	} else {
		tb_puts(c->out,
			"# sandbox type not written: windows_jobobject, the Windows default\n");
		tb_puts(c->out, "job = create\n");
	}

	if (env->cwd.s)
		tb_printf(c->out, "# %s.cwd (line %u): the workspace, where the command starts\n",
			  c->env_what, env->cwd.loc.line);
	else
		tb_printf(c->out, "# %s.cwd not written: the workspace is the launch directory\n",
			  c->env_what);
	put_kv(c->out, "workspace", env->cwd.s ? env->cwd_path.symbolic : "{LAUNCH}");
	if (env->start_in_scratch.loc.line)
		tb_printf(c->out, "# %s.start_in_scratch (line %u)\n", c->env_what,
			  env->start_in_scratch.loc.line);
	tb_printf(c->out, "start_in_scratch = %s\n",
		  env->start_in_scratch.value ? "true" : "false");
	if (env->fork.value) {
		/* Same answer as omnibox-run on Linux: no copy, so no launch. */
		tb_printf(c->out,
			  "# %s.fork (line %u): not supported; omnibox-run.exe refuses to launch\n",
			  c->env_what, env->fork.loc.line);
		tb_puts(c->out, "fork = true\n");
	}
}

static void
put_flag(struct textbuf *out, bool *first, const char *name)
{
	tb_printf(out, "%s%s", *first ? "" : "|", name);
	*first = false;
}

/* "2 GiB", "1536 MiB", "1000000 bytes": the size as a reviewer would write it. */
static const char *
size_text(struct wctx *c, uint64_t v)
{
	static const char *const units[] = {"TiB", "GiB", "MiB", "KiB"};

	for (int i = 0; i < 4; i++) {
		unsigned shift = (unsigned)(40 - 10 * i);

		if (v >= (1ull << shift) && !(v & ((1ull << shift) - 1)))
			return arena_printf(c->d->arena, "%" PRIu64 " %s", v >> shift, units[i]);
	}
	return arena_printf(c->d->arena, "%" PRIu64 " bytes", v);
}

static void
emit_limits(struct wctx *c)
{
	const struct limits *l = &c->sb->limits;
	struct textbuf *out = c->out;
	bool first = true;

	tb_puts(out,
		"# always on: closing the job ends every process in it (omnibox-run.exe holds\n"
		"# the only handle), a crash ends its process instead of waiting on an error\n"
		"# dialog, and no process may break away from the job\n");
	tb_puts(out, "limit_flags = ");
	put_flag(out, &first, "KILL_ON_JOB_CLOSE");
	put_flag(out, &first, "DIE_ON_UNHANDLED_EXCEPTION");
	if (l->processes.present)
		put_flag(out, &first, "ACTIVE_PROCESS");
	if (l->memory.present)
		put_flag(out, &first, "JOB_MEMORY");
	if (l->cpu_time.present)
		put_flag(out, &first, "JOB_TIME");
	tb_putc(out, '\n');
	if (!l->present)
		tb_printf(out, "# %s.limits not written: no resource limits\n", c->what);
	if (l->memory.present) {
		tb_printf(out,
			  "# %s.limits.memory (line %u): %s for all processes of the job "
			  "together\n",
			  c->what, l->memory.loc.line, size_text(c, l->memory.value));
		tb_printf(out, "job_memory_limit = %" PRIu64 "\n", l->memory.value);
	}
	if (l->processes.present) {
		tb_printf(out, "# %s.limits.processes (line %u): processes alive at once\n",
			  c->what, l->processes.loc.line);
		tb_printf(out, "active_process_limit = %" PRIu64 "\n", l->processes.value);
	}
	if (l->cpu_time.present) {
		tb_printf(out,
			  "# %s.limits.cpu_time (line %u): %" PRIu64 " s of user-mode CPU time for "
			  "the whole job,\n# in 100-ns units; then every process in it is ended\n",
			  c->what, l->cpu_time.loc.line, l->cpu_time.value);
		tb_printf(out, "per_job_user_time_limit = %" PRIu64 "\n",
			  l->cpu_time.value * WINJOB_TICKS_PER_SECOND);
	}
	if (l->cpu_rate.present) {
		tb_printf(out,
			  "# %s.limits.cpu_rate (line %u): %" PRIu64 "%% of all processors, a hard "
			  "cap,\n# in 1/100 of a percent\n",
			  c->what, l->cpu_rate.loc.line, l->cpu_rate.value);
		tb_puts(out, "cpu_rate_control_flags = ENABLE|HARD_CAP\n");
		tb_printf(out, "cpu_rate = %" PRIu64 "\n",
			  l->cpu_rate.value * (WINJOB_CPU_RATE_MAX / 100));
	}
	if (l->open_files.present)
		unenforced(c, l->open_files.loc, setting(c, "limits.open_files"), WHY_OPEN_FILES,
			   true);
	tb_puts(out, "# always on: no other desktops, no windows or atoms of other processes, no\n"
		     "# clipboard, no logoff or shutdown, no system or display settings\n");
	tb_puts(out, "ui_restrictions = DESKTOP|DISPLAYSETTINGS|EXITWINDOWS|GLOBALATOMS|HANDLES|"
		     "READCLIPBOARD|SYSTEMPARAMETERS|WRITECLIPBOARD\n");
}

/* With no job, none of the limits applies; each one says so. */
static void
note_limits_without_job(struct wctx *c)
{
	const struct limits *l = &c->sb->limits;
	const struct ir_u64 *v[] = {&l->memory, &l->processes, &l->cpu_time, &l->cpu_rate,
				    &l->open_files};
	static const char *const names[] = {"limits.memory", "limits.processes", "limits.cpu_time",
					    "limits.cpu_rate", "limits.open_files"};

	for (size_t i = 0; i < 5; i++)
		if (v[i]->present)
			unenforced(c, v[i]->loc, setting(c, names[i]), WHY_NONE, true);
}

/*
 * The environment's rules as env_decide() makes them for Windows, in their
 * order: omnibox-run.exe applies them with env_apply() and decides nothing.
 */
static void
emit_environment(struct wctx *c)
{
	static const char *const keys[] = {[ENV_PASS] = "env_pass",
					   [ENV_PASS_PREFIX] = "env_pass_prefix",
					   [ENV_SET] = "env_set",
					   [ENV_SET_SCRATCH] = "env_scratch",
					   [ENV_UNSET] = "env_unset"};
	const struct terminal *t = c->p->terminal;
	struct textbuf *out = c->out;
	struct env_rules rules;
	bool scratch = false, last = false;

	env_decide(c->d->arena, c->p, &(struct env_launch){.windows = true}, &rules);
	tb_puts(out, "# environment: rebuilt from these names, compared without regard to case;\n"
		     "# nothing else is inherited.  From the launching environment, when set:\n");
	for (size_t i = 0; i < rules.n; i++) {
		const struct env_rule *r = &rules.v[i];

		if (r->op == ENV_PASS && r->line)
			tb_printf(out, "# %s (line %u)\n", setting(c, "env_passthrough"), r->line);
		if (r->op == ENV_SET_SCRATCH && !scratch)
			tb_puts(out,
				"# set to the private scratch dir omnibox-run.exe creates for the "
				"launch and\n# removes after it\n");
		scratch |= r->op == ENV_SET_SCRATCH;
		/* Only the terminal sets or unsets a variable on Windows. */
		if ((r->op == ENV_SET || r->op == ENV_UNSET) && !last)
			tb_printf(out, "# terminal %s (line %u): env and env_unset, applied last\n",
				  esc(c, t->name), t->loc.line);
		last |= r->op == ENV_SET || r->op == ENV_UNSET;
		tb_printf(out, "%s = ", keys[r->op]);
		put_value(out, r->name);
		if (r->op == ENV_SET) {
			tb_putc(out, '=');
			put_value(out, r->value);
		}
		tb_putc(out, '\n');
	}
}

/*
 * Every written setting that only a filesystem or network sandbox could
 * honour.  With sandbox type none, validation has already warned about the
 * path lists, so they are recorded without a second warning.
 */
static void
note_unenforced_settings(struct wctx *c)
{
	const struct sandbox *sb = c->sb;
	const struct {
		const struct ir_pathlist *list;
		const char *key, *why;
	} lists[] = {
	    {&sb->write_paths, "write_paths", WHY_WRITE},
	    {&sb->read_paths, "read_paths", WHY_READ},
	    {&sb->write_files, "write_files", WHY_WRITE},
	    {&sb->mask_paths, "mask_paths", WHY_MASK},
	    {&sb->deny_unix_socket_paths, "deny_unix_socket_paths", WHY_SOCKET},
	};

	if (!c->none)
		tb_puts(&c->unenforced,
			"not-enforced = filesystem isolation (implicit): a Job Object does not "
			"isolate files: the workspace is not read-only, nothing outside it is "
			"hidden and no dotfile is masked\n");
	for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++)
		if (lists[i].list->present)
			unenforced(c, lists[i].list->loc, setting(c, lists[i].key),
				   c->none ? WHY_NONE : lists[i].why, !c->none);
	if (sb->cwd_allow_hidden.present)
		unenforced(c, sb->cwd_allow_hidden.loc, setting(c, "cwd_allow_hidden"),
			   c->none ? WHY_NONE : WHY_DOTFILES, true);
	if (sb->scan_recursive.loc.line)
		unenforced(c, sb->scan_recursive.loc, setting(c, "cwd_hidden_scan_recursive"),
			   c->none ? WHY_NONE : WHY_DOTFILES, true);
	if (sb->scan_max_entries.loc.line)
		unenforced(c, sb->scan_max_entries.loc, setting(c, "cwd_hidden_scan_max_entries"),
			   c->none ? WHY_NONE : WHY_DOTFILES, true);
	if (sb->scan_overflow_loc.line)
		unenforced(c, sb->scan_overflow_loc, setting(c, "cwd_hidden_scan_overflow"),
			   c->none ? WHY_NONE : WHY_DOTFILES, true);
	/* The protected set exists as soon as something is writable, written or not. */
	if (!c->none && sb->write_paths.n)
		unenforced(c, sb->write_paths.loc, setting(c, "write_paths (protected paths)"),
			   "a Job Object cannot keep .git/hooks, .git/config, .envrc and the other "
			   "protected paths read-only inside a writable directory",
			   true);
	if (sb->protect_paths.present)
		unenforced(c, sb->protect_paths.loc, setting(c, "protect_paths"),
			   c->none ? WHY_NONE : "a Job Object cannot make a path read-only", !c->none);
	/* allow_network: false with type none is a validation error. */
	if (sb->allow_network.loc.line && !sb->allow_network.value)
		unenforced(c, sb->allow_network.loc, setting(c, "allow_network"), WHY_NETWORK,
			   true);
}

int
emit_winjob(const struct policy *p, enum target t, struct diag *d, struct textbuf *out)
{
	const struct terminal *term = p->terminal;
	struct wctx c = {
	    .p = p,
	    .sb = &p->os_env.sandbox,
	    .d = d,
	    .out = out,
	    .none = p->os_env.sandbox.type == SANDBOX_NONE,
	};
	(void)t;
	/* Only a policy the table already let through, whoever calls us. */
	if (emit_check_target(p, TARGET_WINDOWS, d) < 0)
		return -1;
	if (term && !term->inherit)
		c.env_what = arena_printf(d->arena, "terminals.%s.os_env", esc(&c, term->name));
	else
		c.env_what = "os_env";
	c.what = arena_printf(d->arena, "%s.sandbox", c.env_what);
	if (!winjob_can_express(p)) {
		report_inexpressible(&c);
		return -1;
	}

	emit_header(&c);
	emit_job(&c);
	note_unenforced_settings(&c);
	if (c.none)
		note_limits_without_job(&c);
	else
		emit_limits(&c);
	emit_environment(&c);
	tb_puts(out, "# not enforced on Windows; omnibox-run.exe repeats these at every launch\n");
	if (c.unenforced.len)
		tb_write(out, c.unenforced.data, c.unenforced.len);
	else
		tb_puts(out, "# (nothing)\n");
	tb_free(&c.unenforced);
	return 0;
}
