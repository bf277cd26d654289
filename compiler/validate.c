/*
 * validate.c - the schema: YAML node tree to IR (spec/schema.md).
 *
 * Every check reports and carries on, so one run lists every error of a
 * file.  A value that fails its check is left at its default; the IR is
 * only handed out when no error was reported.
 */
#include "validate_int.h"


/* ---- the keys of each block ------------------------------------------------- */

static const char *const os_env_keys[] = {"type", "cwd", "sandbox", "start_in_scratch",
					  "fork", NULL};
static const char *const sandbox_keys[] = {"type",
					   "write_paths",
					   "read_paths",
					   "write_files",
					   "allow_network",
					   "egress_rules",
					   "egress_allow_private_destinations",
					   "credential_proxy",
					   "cwd_allow_hidden",
					   "cwd_hidden_scan_recursive",
					   "cwd_hidden_scan_max_entries",
					   "cwd_hidden_scan_overflow",
					   "mask_paths",
					   "env_passthrough",
					   "limits",
					   "deny_unix_socket_paths",
					   "git_ssh",
					   "protect_paths",
					   "unprotect_paths",
					   NULL};
static const char *const terminal_keys[] = {"command",
					    "args",
					    "os_env",
					    "allow_sandbox_override",
					    "allow_cwd_override",
					    "env",
					    "env_unset",
					    "inherit_env",
					    "scrollback",
					    "log_file",
					    "session_prefix",
					    "tmux_allow_passthrough",
					    "tmux_start_on_attach",
					    "keep_alive_after_exit",
					    "terminal_transport",
					    NULL};
static const char *const limits_keys[] = {"memory",   "processes",  "cpu_time",
					  "cpu_rate", "open_files", NULL};

/* ---- protected paths ------------------------------------------------------------ */

/* unprotect_paths: names of default entries (protect.h), nothing else. */
static void
want_unprotect(struct vctx *c, const struct ynode *n, const char *what, struct ir_strlist *out)
{
	const char *names[64];
	size_t k = 0, kept = 0;

	for (size_t i = 0; protect_defaults[i].name && k + 1 < 64; i++)
		names[k++] = protect_defaults[i].name;
	names[k] = NULL;
	want_strlist(c, n, what, LIST_STRING, out);
	for (size_t i = 0; i < out->n; i++) {
		const char *name = out->v[i].s;
		char *trimmed = arena_strdup(c->a, name);
		size_t len = strlen(trimmed);

		/* ".vscode/" names the entry ".vscode". */
		while (len > 1 && trimmed[len - 1] == '/')
			trimmed[--len] = '\0';
		if (protect_find(trimmed)) {
			out->v[kept] = out->v[i];
			out->v[kept++].s = trimmed;
			continue;
		}
		{
			const char *hint = validate_suggest(trimmed, names);

			diag_error(c->d, out->v[i].loc,
				   "%s: '%s' is not a protected entry%s%s%s (see docs/protect.md; "
				   "protect_paths adds paths of your own)",
				   what, name, hint ? " (did you mean '" : "", hint ? hint : "",
				   hint ? "'?)" : "");
		}
	}
	out->n = kept;
}

/* ---- limits ------------------------------------------------------------------- */

/*
 * "<digits><unit>" where UNITS maps each unit to its multiplier.  Errors
 * point inside the scalar: at the number, or at the unit.
 */
struct unit {
	const char *name;
	uint64_t mult;
};

static bool
want_quantity(struct vctx *c, const struct ynode *n, const char *what, const struct unit *units,
	      const char *unit_help, uint64_t max, struct ir_u64 *out)
{
	const char *s;
	size_t i = 0;
	uint64_t v = 0;

	if (n->kind != YNODE_SCALAR || n->type == YSCALAR_NULL || n->type == YSCALAR_BOOL) {
		diag_error(c->d, n->loc, "%s must be a quantity like %s, %s", what, unit_help,
			   got(c, n, false));
		return false;
	}
	s = n->value;
	while (i < n->len && s[i] >= '0' && s[i] <= '9') {
		unsigned digit = (unsigned)(s[i] - '0');

		if (v > (UINT64_MAX - digit) / 10) {
			diag_error(c->d, ydoc_scalar_loc(c->doc, n, 0, i + 1), "%s is too large",
				   what);
			return false;
		}
		v = v * 10 + digit;
		i++;
	}
	if (i == 0) {
		diag_error(c->d, ydoc_scalar_loc(c->doc, n, 0, n->len ? n->len : 1),
			   "%s must start with a number, like %s", what, unit_help);
		return false;
	}
	if (i == n->len) {
		diag_error(c->d, n->loc, "%s needs a unit (%s)", what, unit_help);
		return false;
	}
	for (size_t u = 0; units[u].name; u++) {
		if (strcmp(s + i, units[u].name))
			continue;
		if (v == 0) {
			diag_error(c->d, ydoc_scalar_loc(c->doc, n, 0, i), "%s must be above zero",
				   what);
			return false;
		}
		if (v > max / units[u].mult) {
			diag_error(c->d, n->loc, "%s is too large", what);
			return false;
		}
		out->value = v * units[u].mult;
		out->present = true;
		out->loc = n->loc;
		return true;
	}
	diag_error(c->d, ydoc_scalar_loc(c->doc, n, i, n->len - i), "%s: unknown unit '%s' (%s)",
		   what, s + i, unit_help);
	return false;
}

static void
want_limits(struct vctx *c, const struct ynode *n, const char *what, struct limits *l)
{
	static const struct unit sizes[] = {
	    {"KiB", 1ull << 10},   {"MiB", 1ull << 20},	     {"GiB", 1ull << 30},
	    {"TiB", 1ull << 40},   {"KB", 1000ull},	     {"MB", 1000000ull},
	    {"GB", 1000000000ull}, {"TB", 1000000000000ull}, {NULL, 0}};
	static const struct unit durations[] = {{"s", 1}, {"m", 60}, {"h", 3600}, {NULL, 0}};
	static const struct unit percent[] = {{"%", 1}, {NULL, 0}};
	const struct ynode *v;

	l->present = true;
	l->loc = n->loc;
	if (!want_map(c, n, what))
		return;
	check_keys(c, n, what, limits_keys, NULL, NULL);
	if ((v = ynode_get(n, "memory")))
		want_quantity(c, v, arena_printf(c->a, "%s.memory", what), sizes,
			      "512MiB, 2GiB; KiB MiB GiB TiB or KB MB GB TB", UINT64_MAX,
			      &l->memory);
	if ((v = ynode_get(n, "cpu_time")))
		want_quantity(c, v, arena_printf(c->a, "%s.cpu_time", what), durations,
			      "90s, 10m, 2h", UINT32_MAX, &l->cpu_time);
	if ((v = ynode_get(n, "cpu_rate")) &&
	    want_quantity(c, v, arena_printf(c->a, "%s.cpu_rate", what), percent, "50%", 100000,
			  &l->cpu_rate) &&
	    l->cpu_rate.value > 100) {
		diag_error(c->d, v->loc, "%s.cpu_rate must be between 1%% and 100%%, got %s", what,
			   v->value);
		l->cpu_rate.present = false;
	}
	if ((v = ynode_get(n, "processes")))
		want_uint(c, v, arena_printf(c->a, "%s.processes", what), 1, 1u << 22,
			  &l->processes);
	if ((v = ynode_get(n, "open_files")))
		want_uint(c, v, arena_printf(c->a, "%s.open_files", what), 1, 1u << 30,
			  &l->open_files);
}

/* ---- os_env.sandbox ------------------------------------------------------------- */

static const char *const sandbox_type_names[] = {
    "auto", "none", "linux_bwrap", "darwin_seatbelt", "windows_jobobject", "linux_landlock", NULL};

static void
sandbox_defaults(struct sandbox *sb)
{
	static struct ir_str venv = {POLICY_DEFAULT_ALLOW_HIDDEN, {0, 0, 0}};

	memset(sb, 0, sizeof(*sb));
	sb->allow_network.value = true;
	sb->cwd_allow_hidden.v = &venv;
	sb->cwd_allow_hidden.n = 1;
	sb->scan_max_entries.value = POLICY_DEFAULT_SCAN_MAX;
	sb->scan_overflow = OVERFLOW_WARN;
}

static void
want_sandbox_type(struct vctx *c, const struct ynode *n, const char *what, struct sandbox *sb)
{
	size_t t;

	sb->type_loc = n->loc;
	if (n->kind == YNODE_SCALAR && n->type == YSCALAR_NULL) {
		sb->type = SANDBOX_NONE;
		return;
	}
	if (!is_string(n)) {
		diag_error(c->d, n->loc, "%s must be a string or null, %s", what, got(c, n, false));
		return;
	}
	for (t = 0; sandbox_type_names[t] && strcmp(n->value, sandbox_type_names[t]); t++)
		;
	if (sandbox_type_names[t]) {
		sb->type = (enum sandbox_type)t;
		return;
	}
	{
		const char *hint = validate_suggest(n->value, sandbox_type_names);

		if (hint)
			diag_error(c->d, n->loc, "unknown sandbox type '%s' (did you mean '%s'?)",
				   n->value, hint);
		else
			diag_error(c->d, n->loc,
				   "unknown sandbox type '%s' (expected auto, none, linux_bwrap, "
				   "linux_landlock, darwin_seatbelt or windows_jobobject)",
				   n->value);
	}
}

static void
want_sandbox(struct vctx *c, const struct ynode *n, const char *w, struct sandbox *sb)
{
	const struct ynode *v, *k;
	const char *what;

	/* Lists and blocks are located at their key, where a reader looks for them. */
#define KEY(name)                                                                                  \
	((v = ynode_get(n, name)) && (k = ynode_key(n, name)) &&                                   \
	 (what = arena_printf(c->a, "%s." name, w)))

	if (!want_map(c, n, w))
		return;
	check_keys(c, n, w, sandbox_keys, os_env_keys, "os_env");
	if (KEY("type"))
		want_sandbox_type(c, v, what, sb);
	if (KEY("write_paths")) {
		want_pathlist(c, v, what, &sb->write_paths, true, &sb->cow_paths);
		sb->write_paths.loc = k->loc;
	}
	if (KEY("read_paths")) {
		want_pathlist(c, v, what, &sb->read_paths, true, NULL);
		sb->read_paths.loc = k->loc;
	}
	if (KEY("write_files")) {
		want_pathlist(c, v, what, &sb->write_files, true, NULL);
		sb->write_files.loc = k->loc;
	}
	if (KEY("mask_paths")) {
		want_pathlist(c, v, what, &sb->mask_paths, false, NULL);
		sb->mask_paths.loc = k->loc;
	}
	if (KEY("deny_unix_socket_paths")) {
		want_pathlist(c, v, what, &sb->deny_unix_socket_paths, false, NULL);
		sb->deny_unix_socket_paths.loc = k->loc;
	}
	if (KEY("allow_network"))
		want_bool(c, v, what, &sb->allow_network);
	if (KEY("egress_rules")) {
		want_egress(c, v, what, sb);
		sb->egress_loc = k->loc;
	}
	if (KEY("egress_allow_private_destinations"))
		want_bool(c, v, what, &sb->egress_allow_private);
	if (KEY("credential_proxy")) {
		want_credentials(c, v, what, sb);
		sb->creds_loc = k->loc;
	}
	if (KEY("cwd_allow_hidden")) {
		sb->cwd_allow_hidden.v = NULL;
		sb->cwd_allow_hidden.n = sb->cwd_allow_hidden.cap = 0;
		want_strlist(c, v, what, LIST_BASENAME, &sb->cwd_allow_hidden);
		sb->cwd_allow_hidden.loc = k->loc;
		for (size_t i = 0; i < sb->cwd_allow_hidden.n; i++)
			sb->allow_all_hidden |= !strcmp(sb->cwd_allow_hidden.v[i].s, "*");
	}
	if (KEY("cwd_hidden_scan_recursive"))
		want_bool(c, v, what, &sb->scan_recursive);
	if (KEY("cwd_hidden_scan_max_entries"))
		want_uint(c, v, what, 1, UINT32_MAX, &sb->scan_max_entries);
	if (KEY("cwd_hidden_scan_overflow")) {
		static const char *const modes[] = {"warn", "error", "unlimited", NULL};
		size_t m;

		sb->scan_overflow_loc = v->loc;
		if (!is_string(v)) {
			diag_error(c->d, v->loc, "%s must be warn, error or unlimited, %s", what,
				   got(c, v, false));
		} else {
			for (m = 0; modes[m] && strcmp(modes[m], v->value); m++)
				;
			if (modes[m])
				sb->scan_overflow = (enum scan_overflow)m;
			else
				diag_error(c->d, v->loc,
					   "%s must be warn, error or unlimited, got '%s'", what,
					   v->value);
		}
	}
	if (KEY("env_passthrough")) {
		want_strlist(c, v, what, LIST_ENV_NAME, &sb->env_passthrough);
		sb->env_passthrough.loc = k->loc;
	}
	if (KEY("limits")) {
		want_limits(c, v, what, &sb->limits);
		sb->limits.loc = k->loc;
	}
	if (KEY("git_ssh")) {
		want_git_ssh(c, v, what, sb);
		sb->git_ssh_loc = k->loc;
	}
	if (KEY("protect_paths")) {
		want_pathlist(c, v, what, &sb->protect_paths, false, NULL);
		sb->protect_paths.loc = k->loc;
	}
	if (KEY("unprotect_paths")) {
		want_unprotect(c, v, what, &sb->unprotect_paths);
		sb->unprotect_paths.loc = k->loc;
	}
#undef KEY
}

/*
 * Does some HTTP egress rule let a TLS tunnel reach HOST:PORT, where
 * credentials go?  1 when one does; 0 when none does; -1 when only a tcp
 * rule does (a plain tunnel, where no credential is ever swapped in).
 */
static int
egress_covers_host(const struct sandbox *sb, const char *host, unsigned port)
{
	struct egress_matcher *m = egress_matcher_new(sb->egress, sb->n_egress);
	int ok;

	if (!m) {
		fputs("omnibox: out of memory\n", stderr);
		abort();
	}
	if (egress_match_host(m, host, strlen(host), port, EGRESS_PORT_TLS) >= 0)
		ok = 1;
	else
		ok = egress_match_tcp(m, host, strlen(host), port) >= 0 ? -1 : 0;
	egress_matcher_free(m);
	return ok;
}

/* A credential is swapped in by HTTP rules' interception only. */
static void
check_cred_reachable(struct vctx *c, const struct sandbox *sb, const struct cred_target *tg)
{
	switch (egress_covers_host(sb, tg->host, tg->port)) {
	case 0:
		diag_error(c->d, tg->loc,
			   "credential host '%s:%u' is not allowed by any egress rule, so the "
			   "credential could never be used",
			   tg->host, tg->port);
		break;
	case -1:
		diag_error(c->d, tg->loc,
			   "credential host '%s:%u' is allowed only by a tcp rule, an uninspected "
			   "stream where no credential is swapped in: allow it with an HTTP rule",
			   tg->host, tg->port);
		break;
	}
}

/*
 * Files only the broker or the proxy may read: no grant may show them to
 * the agent.  The decision is sandbox_exposes(), the resolver's too, which
 * checks the canonical paths again at launch.
 */
static void
check_secret_file(struct vctx *c, const struct sandbox *sb, const struct ir_path *p,
		  const char *what)
{
	struct exposure e;
	const char *via = "", *fix = "keep it outside every grant";

	if (!p->rel || !sandbox_exposes(c->a, sb, "{CWD}", p->symbolic, &e))
		return;
	/* Hidden by a mask on the file alone: refused at launch, which knows
	 * the file the proxy will really read (DATABRICKS_CONFIG_FILE, ...). */
	if (e.file_mask)
		return;
	if (e.dotfile && e.allowed) {
		via = sb->cwd_allow_hidden.loc.line
			  ? arena_printf(c->a, ", as cwd_allow_hidden at line %u shows '%s'",
					 sb->cwd_allow_hidden.loc.line, strrchr(e.dotfile, '/') + 1)
			  : arena_printf(c->a, ", as the default cwd_allow_hidden shows '%s'",
					 strrchr(e.dotfile, '/') + 1);
		fix = "keep it outside every grant and out of cwd_allow_hidden";
	} else if (e.dotfile) {
		via = arena_printf(c->a, ", as the dotfile scan does not reach '%s'",
				   strrchr(e.dotfile, '/') + 1);
		fix = "keep it outside every grant, or set cwd_hidden_scan_recursive: true";
	}
	if (!e.grant)
		diag_error(c->d, p->loc,
			   "%s '%s' lies in the workspace, which the sandbox can read%s; %s", what,
			   p->written, via, fix);
	else
		diag_error(c->d, p->loc,
			   "%s '%s' would be readable in the sandbox through the grant '%s' at "
			   "line %u%s; %s",
			   what, p->written, e.grant->written, e.grant->loc.line, via, fix);
}

/*
 * An env source's variable must not reach the sandbox too: the sandbox
 * would hold the real secret the placeholder stands for.
 */
static void
check_secret_env(struct vctx *c, const struct sandbox *sb, const struct cred_source *src)
{
	const char *name = src->value.s;

	if (src->kind != CRED_SOURCE_ENV || !env_name_passes(sb, name))
		return;
	for (size_t i = 0; i < sb->env_passthrough.n; i++)
		if (!strcmp(sb->env_passthrough.v[i].s, name)) {
			diag_error(c->d, src->value.loc,
				   "credential source env '%s' is also passed to the sandbox by "
				   "env_passthrough at line %u, which would hand it the real "
				   "secret; take it out of env_passthrough",
				   name, sb->env_passthrough.v[i].loc.line);
			return;
		}
	diag_error(
	    c->d, src->value.loc,
	    "credential source env '%s' is a variable every sandbox gets from the host "
	    "(PATH, HOME, USER, LOGNAME, SHELL, TERM, TZ, LANG, LANGUAGE, LC_*), which would "
	    "hand it the real secret; keep the secret in a variable of its own",
	    name);
}

/* Every host file and variable a credential reads stays out of the sandbox. */
static void
check_cred_secrets(struct vctx *c, const struct sandbox *sb)
{
	for (size_t i = 0; i < sb->n_creds; i++) {
		const struct credential *cr = &sb->creds[i];
		struct cred_host_file files[CRED_HOST_FILES_MAX];
		struct cred_source src[CRED_SOURCES_MAX];
		size_t n = cred_host_files(c->a, cr, NULL, files);

		for (size_t k = 0; k < n; k++)
			check_secret_file(c, sb, &files[k].path, files[k].what);
		n = cred_sources(cr, src);
		for (size_t k = 0; k < n; k++)
			check_secret_env(c, sb, &src[k]);
	}
}

static void
check_git_ssh_rules(struct vctx *c, const struct os_env *env, const char *w)
{
	const struct sandbox *sb = &env->sandbox;

	if (!sb->n_git_ssh)
		return;
	/* The broker is the way to a key; an agent socket would be another. */
	for (size_t i = 0; i < sb->env_passthrough.n; i++)
		if (!strcmp(sb->env_passthrough.v[i].s, "SSH_AUTH_SOCK"))
			diag_error(c->d, sb->env_passthrough.v[i].loc,
				   "%s.env_passthrough: SSH_AUTH_SOCK cannot be passed with git_ssh: "
				   "the broker holds the only key the sandbox may use",
				   w);
	if (sb->type == SANDBOX_LINUX_LANDLOCK)
		diag_error(c->d, sb->git_ssh_loc, "%s.%s", w, llbackend_why_git_ssh);
	else if (sb->type != SANDBOX_AUTO && sb->type != SANDBOX_LINUX_BWRAP)
		diag_error(c->d, sb->git_ssh_loc,
			   "%s.git_ssh needs a linux_bwrap sandbox (or auto, compiled for "
			   "linux), not %s",
			   w, sandbox_type_name(sb->type));
	for (size_t i = 0; i < sb->n_git_ssh; i++) {
		check_secret_file(c, sb, &sb->git_ssh[i].identity_file, "git_ssh identity_file");
		check_secret_file(c, sb, &sb->git_ssh[i].known_hosts_file,
				  "git_ssh known_hosts_file");
	}
}

static void
check_cow_rules(struct vctx *c, const struct os_env *env, const char *w)
{
	const struct sandbox *sb = &env->sandbox;
	const struct ir_pathlist *rw[] = {&sb->write_paths, &sb->write_files};

	if (!sb->cow_paths.n)
		return;
	if (sb->type == SANDBOX_LINUX_LANDLOCK)
		diag_error(c->d, sb->cow_paths.v[0].loc, "%s.%s", w, llbackend_why_cow);
	else if (sb->type != SANDBOX_AUTO && sb->type != SANDBOX_LINUX_BWRAP)
		diag_error(c->d, sb->cow_paths.v[0].loc,
			   "%s.write_paths: copy_on_write needs a linux_bwrap sandbox (or auto, "
			   "compiled for linux), not %s",
			   w, sandbox_type_name(sb->type));
	if (env->fork.value)
		diag_error(c->d, sb->cow_paths.v[0].loc,
			   "%s.write_paths: copy_on_write cannot be combined with fork", w);
	for (size_t i = 0; i < sb->cow_paths.n; i++) {
		const struct ir_path *p = &sb->cow_paths.v[i];

		for (size_t k = 0; k < 2; k++)
			for (size_t j = 0; j < rw[k]->n; j++) {
				const struct ir_path *o = &rw[k]->v[j];

				if (path_within(p->symbolic, o->symbolic) ||
				    path_within(o->symbolic, p->symbolic))
					diag_error(c->d, p->loc,
						   "%s.write_paths: '%s' is copy-on-write but "
						   "overlaps the writable '%s' at line %u; a path "
						   "is one or the other",
						   w, p->written, o->written, o->loc.line);
			}
	}
}

struct protect_check {
	struct vctx *c;
	const struct sandbox *sb;
};

/* A grant that names a protected path gets no write access to it: said so. */
static void
warn_protected_grant(void *arg, const struct protect_entry *e)
{
	struct protect_check *pc = arg;
	const struct ir_pathlist *lists[] = {&pc->sb->write_paths, &pc->sb->write_files};
	const char *path = e->path;

	if (e->line)
		return; /* protect_paths: the policy asked for it */
	for (size_t k = 0; k < 2; k++)
		for (size_t i = 0; i < lists[k]->n; i++)
			if (path_within(lists[k]->v[i].symbolic, path))
				diag_warning(pc->c->d, lists[k]->v[i].loc,
					     "'%s' lies in the protected path %s and stays read-only "
					     "in the sandbox; name that entry in unprotect_paths to make "
					     "it writable",
					     lists[k]->v[i].written, path);
}

/*
 * What is legal but not what the user probably meant: said once, at the
 * line, by the compiler and by every launch.
 */
static void
warn_surprises(struct vctx *c, const struct sandbox *sb, const char *w)
{
	bool venv = false;

	if (sb->n_egress && sb->allow_network.loc.line && !sb->allow_network.value)
		diag_warning(c->d, sb->allow_network.loc,
			     "%s.allow_network: false does not turn the network off here: "
			     "egress_rules (line %u) do, through the egress proxy, for what they "
			     "allow (Omnigent reads it the same way); drop egress_rules for no "
			     "network",
			     w, sb->egress_loc.line);
	if (!sb->cwd_allow_hidden.loc.line)
		return;
	for (size_t i = 0; i < sb->cwd_allow_hidden.n; i++) {
		const struct ir_str *e = &sb->cwd_allow_hidden.v[i];

		venv |= !strcmp(e->s, ".venv") || !strcmp(e->s, "*");
		if (!strcmp(e->s, "*"))
			diag_warning(c->d, e->loc,
				     "'*' in %s.cwd_allow_hidden is an omnibox extension: here it "
				     "shows every dotfile, while Omnigent reads it as a file named "
				     "'*'; list the names for a policy both read the same way",
				     w);
	}
	if (!venv && sb->cwd_allow_hidden.n) /* an empty list hides all, on purpose */
		diag_warning(c->d, sb->cwd_allow_hidden.loc,
			     "%s.cwd_allow_hidden replaces the default list [.venv]: .venv is "
			     "hidden now; add .venv to the list to keep it visible",
			     w);
}

/* The rules that tie several settings together (schema: cross-field rules). */
static void
check_sandbox_rules(struct vctx *c, const struct os_env *env, const char *w)
{
	const struct sandbox *sb = &env->sandbox;
	bool hardened = sb->type == SANDBOX_AUTO || sb->type == SANDBOX_LINUX_BWRAP ||
			sb->type == SANDBOX_LINUX_LANDLOCK || sb->type == SANDBOX_DARWIN_SEATBELT;

	if (sb->n_egress && !hardened)
		diag_error(c->d, sb->egress_loc,
			   "%s.egress_rules need a linux_bwrap or darwin_seatbelt sandbox, not %s",
			   w, sandbox_type_name(sb->type));
	if (sb->n_creds && !hardened)
		diag_error(c->d, sb->creds_loc,
			   "%s.credential_proxy needs a linux_bwrap or darwin_seatbelt sandbox, "
			   "not %s",
			   w, sandbox_type_name(sb->type));
	if (sb->n_creds && !sb->n_egress)
		diag_error(c->d, sb->creds_loc,
			   "%s.credential_proxy needs a non-empty egress_rules list: the egress "
			   "proxy is what swaps the credentials in",
			   w);
	warn_surprises(c, sb, w);
	if (sb->type == SANDBOX_NONE && sb->allow_network.loc.line && !sb->allow_network.value)
		diag_error(c->d, sb->allow_network.loc,
			   "%s.allow_network: false cannot be enforced without a sandbox (type is "
			   "none)",
			   w);
	if (sb->type == SANDBOX_NONE) {
		const struct ir_pathlist *lists[] = {&sb->write_paths, &sb->read_paths,
						     &sb->write_files, &sb->mask_paths,
						     &sb->deny_unix_socket_paths};
		static const char *const names[] = {"write_paths", "read_paths", "write_files",
						    "mask_paths", "deny_unix_socket_paths"};

		for (size_t i = 0; i < 5; i++)
			if (lists[i]->present)
				diag_warning(c->d, lists[i]->loc,
					     "%s.%s has no effect: the sandbox type is none", w,
					     names[i]);
	}

	/* Credentials: one binding per host, and only hosts egress can reach. */
	for (size_t i = 0; i < sb->n_creds; i++) {
		const struct credential *cr = &sb->creds[i];

		if (sb->type == SANDBOX_DARWIN_SEATBELT &&
		    (cr->type == CRED_GH_BASIC || cr->type == CRED_DATABRICKS_CLI))
			diag_error(c->d, cr->loc,
				   "credential type %s cannot be used with darwin_seatbelt: its "
				   "clients ignore SSL_CERT_FILE on macOS",
				   cred_type_name(cr->type));
		for (size_t t = 0; t < cr->n_targets; t++) {
			const struct cred_target *tg = &cr->targets[t];
			bool reported = false;

			for (size_t j = 0; j <= i && !reported; j++) {
				const struct credential *o = &sb->creds[j];
				size_t lim = j == i ? t : o->n_targets;

				for (size_t u = 0; u < lim && !reported; u++) {
					if (strcmp(o->targets[u].host, tg->host) ||
					    o->targets[u].port != tg->port)
						continue;
					diag_error(c->d, tg->loc,
						   "host '%s:%u' is already bound to a credential "
						   "at line %u",
						   tg->host, tg->port, o->targets[u].loc.line);
					reported = true;
				}
			}
			if (!reported && sb->n_egress)
				check_cred_reachable(c, sb, tg);
		}
	}

	{
		const char *roots[256];
		size_t n = protect_symbolic_roots(sb, roots, 256);
		struct protect_check pc = {c, sb};

		protect_each(sb, roots, n, "{HOME}", warn_protected_grant, &pc);
	}
	check_git_ssh_rules(c, env, w);
	check_cow_rules(c, env, w);
	check_cred_secrets(c, sb);

	if (env->start_in_scratch.value && env->fork.value)
		diag_error(c->d, env->start_in_scratch.loc,
			   "start_in_scratch cannot be combined with fork");
	else if (env->start_in_scratch.value && sb->type == SANDBOX_NONE)
		diag_error(c->d, env->start_in_scratch.loc,
			   "start_in_scratch needs a sandbox (the sandbox type is none)");
}

/* ---- os_env ----------------------------------------------------------------- */

static void
want_os_env(struct vctx *c, const struct ynode *n, const char *w, struct os_env *env)
{
	const struct ynode *v;
	const char *what;

	memset(env, 0, sizeof(*env));
	sandbox_defaults(&env->sandbox);
	env->loc = n->loc;
	if (!want_map(c, n, w))
		return;
	check_keys(c, n, w, os_env_keys, sandbox_keys, arena_printf(c->a, "%s.sandbox", w));
	if ((v = ynode_get(n, "type"))) {
		struct ir_str t = {0};

		what = arena_printf(c->a, "%s.type", w);
		if (want_string(c, v, what, &t) && strcmp(t.s, "caller_process"))
			diag_error(c->d, v->loc,
				   "unsupported %s '%s' (the only supported value is "
				   "caller_process)",
				   what, t.s);
	}
	if ((v = ynode_get(n, "cwd")) &&
	    parse_path(c, v, arena_printf(c->a, "%s.cwd", w), PATH_LAUNCH, &env->cwd_path)) {
		env->cwd.s = env->cwd_path.written;
		env->cwd.loc = v->loc;
	}
	if ((v = ynode_get(n, "start_in_scratch")))
		want_bool(c, v, arena_printf(c->a, "%s.start_in_scratch", w),
			  &env->start_in_scratch);
	if ((v = ynode_get(n, "fork")) &&
	    want_bool(c, v, arena_printf(c->a, "%s.fork", w), &env->fork) && env->fork.value)
		diag_warning(c->d, v->loc,
			     "%s.fork is not supported: omnibox-run refuses to launch rather than "
			     "run on the real workspace",
			     w);
	/*
	 * A null sandbox is the default sandbox, as when the key is absent
	 * (Omnigent reads it so): a null never weakens a policy.  Only
	 * `type: none` or `type: null` turns the sandbox off.
	 */
	if ((v = ynode_get(n, "sandbox"))) {
		env->sandbox.loc = ynode_key(n, "sandbox")->loc;
		if (!(v->kind == YNODE_SCALAR && v->type == YSCALAR_NULL))
			want_sandbox(c, v, arena_printf(c->a, "%s.sandbox", w), &env->sandbox);
	}
	check_sandbox_rules(c, env, arena_printf(c->a, "%s.sandbox", w));
}

/* ---- terminals ---------------------------------------------------------------- */

static void
want_terminal(struct vctx *c, const struct ynode *n, const char *w, const struct policy *p,
	      struct terminal *t)
{
	const struct ynode *v;

	t->loc = n->loc;
	t->command.s = "bash";
	t->inherit = true;
	if (!want_map(c, n, w))
		return;
	check_keys(c, n, w, terminal_keys, NULL, NULL);
	if ((v = ynode_get(n, "command")))
		want_string(c, v, arena_printf(c->a, "%s.command", w), &t->command);
	if ((v = ynode_get(n, "args"))) {
		const char *what = arena_printf(c->a, "%s.args", w);

		t->args.present = true;
		t->args.loc = v->loc;
		if (want_seq(c, v, what))
			for (size_t i = 0; i < v->n_items; i++) {
				struct ir_str s = {0};

				if (want_text(c, v->items[i],
					      arena_printf(c->a, "%s[%zu]", what, i), &s))
					*ARENA_PUSH(c->a, t->args.v, t->args.n, t->args.cap) = s;
			}
	}
	if ((v = ynode_get(n, "os_env"))) {
		t->os_env_loc = v->loc;
		if (is_string(v) && !strcmp(v->value, "inherit")) {
			t->inherit = true;
		} else if (v->kind == YNODE_MAP) {
			t->inherit = false;
			t->os_env = arena_alloc(c->a, sizeof(*t->os_env));
			want_os_env(c, v, arena_printf(c->a, "%s.os_env", w), t->os_env);
			t->os_env->loc = ynode_key(n, "os_env")->loc;
		} else {
			diag_error(c->d, v->loc, "%s.os_env must be 'inherit' or a mapping, %s", w,
				   got(c, v, false));
		}
	}
	if ((v = ynode_get(n, "allow_sandbox_override")))
		want_bool(c, v, arena_printf(c->a, "%s.allow_sandbox_override", w),
			  &t->allow_sandbox_override);
	if ((v = ynode_get(n, "allow_cwd_override")))
		want_bool(c, v, arena_printf(c->a, "%s.allow_cwd_override", w),
			  &t->allow_cwd_override);
	if ((v = ynode_get(n, "env"))) {
		const char *what = arena_printf(c->a, "%s.env", w);

		if (want_map(c, v, what)) {
			for (size_t i = 0; i < v->n_pairs; i++) {
				struct ir_str name = {0}, val = {0};
				struct ir_kv *kv;

				if (!want_env_name(c, v->pairs[i].key, what, &name))
					continue;
				if (!want_text(c, v->pairs[i].value,
					       arena_printf(c->a, "%s.%s", what, name.s), &val))
					continue;
				kv = ARENA_PUSH(c->a, t->env, t->n_env, t->cap_env);
				kv->key = name.s;
				kv->value = val.s;
				kv->loc = name.loc;
			}
		}
	}
	if ((v = ynode_get(n, "env_unset")))
		want_strlist(c, v, arena_printf(c->a, "%s.env_unset", w), LIST_ENV_NAME,
			     &t->env_unset);
	/* Accepted for compatibility; typed but without effect on the sandbox. */
	{
		struct ir_bool b;
		struct ir_str s;
		struct ir_u64 u;

		if ((v = ynode_get(n, "inherit_env")))
			want_bool(c, v, arena_printf(c->a, "%s.inherit_env", w), &b);
		if ((v = ynode_get(n, "tmux_allow_passthrough")))
			want_bool(c, v, arena_printf(c->a, "%s.tmux_allow_passthrough", w), &b);
		if ((v = ynode_get(n, "tmux_start_on_attach")))
			want_bool(c, v, arena_printf(c->a, "%s.tmux_start_on_attach", w), &b);
		if ((v = ynode_get(n, "log_file")))
			want_string(c, v, arena_printf(c->a, "%s.log_file", w), &s);
		if ((v = ynode_get(n, "session_prefix")))
			want_string(c, v, arena_printf(c->a, "%s.session_prefix", w), &s);
		if ((v = ynode_get(n, "scrollback")))
			want_uint(c, v, arena_printf(c->a, "%s.scrollback", w), 0, UINT32_MAX, &u);
		if ((v = ynode_get(n, "keep_alive_after_exit")))
			want_bool(c, v, arena_printf(c->a, "%s.keep_alive_after_exit", w), &b);
		if ((v = ynode_get(n, "terminal_transport")) &&
		    !(v->kind == YNODE_SCALAR && v->type == YSCALAR_NULL) &&
		    want_string(c, v, arena_printf(c->a, "%s.terminal_transport", w), &s) &&
		    strcmp(s.s, "control") && strcmp(s.s, "pty"))
			diag_error(c->d, v->loc, "%s.terminal_transport must be control or pty, got '%s'",
				   w, s.s);
	}
	{
		const struct os_env *eff = t->inherit ? &p->os_env : t->os_env;

		if (t->allow_sandbox_override.value && eff->sandbox.n_egress)
			diag_error(c->d, t->allow_sandbox_override.loc,
				   "%s.allow_sandbox_override cannot be true: the terminal's "
				   "sandbox has egress_rules (line %u), which an override would "
				   "drop",
				   w, eff->sandbox.egress_loc.line);
	}
}

/* ---- the document ---------------------------------------------------------------- */

/* The top-level keys of Omnigent's agent schema (datamodel.py, AgentDef). */
static const char *const agent_keys[] = {
    "name",	"prompt",   "instructions", "tools",	    "input_type",
    "output_type", "executor", "policies",	"params",	    "memories",
    "async_enabled", "cancellable", "runtime", "timers",	    "spawn",
    "agent_session_sharing", "os_env", "terminals", "skills",	    "bundle_dir",
    "skills_filter", "workflow", "metadata", "labels",	    "label_schema",
    "ask_timeout", "policy_transparency", "llm", "description", "version",
    NULL};

/*
 * Keys omnibox does not read: the agent schema's own are ignored; a key
 * that looks like os_env or terminals is a typo that would silently drop
 * the sandbox (a warning); with VALIDATE_STRICT_TOPLEVEL anything unknown is
 * an error.
 */
static void
check_toplevel(struct vctx *c, const struct ynode *root, unsigned flags)
{
	static const char *const ours[] = {"os_env", "terminals", NULL};

	for (size_t i = 0; i < root->n_pairs; i++) {
		const struct ynode *k = root->pairs[i].key;
		const char *hint;

		if (!is_string(k) || in_list(k->value, agent_keys))
			continue;
		hint = validate_suggest(k->value, ours);
		if (flags & VALIDATE_STRICT_TOPLEVEL)
			diag_error(c->d, k->loc, "unknown top-level key '%s'%s%s%s (--strict-toplevel)",
				   k->value, hint ? " (did you mean '" : "", hint ? hint : "",
				   hint ? "'?)" : "");
		else if (hint)
			diag_warning(c->d, k->loc,
				     "unknown top-level key '%s' (did you mean '%s'?): it is ignored, "
				     "so its settings do not apply",
				     k->value, hint);
	}
}

struct policy *
validate_document(struct arena *a, struct diag *d, const struct ydoc *doc, const char *name,
		  unsigned flags)
{
	struct vctx c = {a, d, doc};
	struct policy *p = arena_alloc(a, sizeof(*p));
	const struct ynode *root = doc->root, *v;
	struct loc none = {0, 0, 0};
	unsigned before = d->errors;

	/* Outputs name the file, not where it sat on this machine, so they
	 * are byte-identical wherever the compiler ran. */
	p->source = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
	if (has_control(p->source, strlen(p->source))) {
		char *safe = arena_strdup(a, p->source);

		/* It is printed in the outputs' comments: one line, always. */
		for (char *ch = safe; *ch; ch++)
			if ((unsigned char)*ch < 0x20 || *ch == 0x7f)
				*ch = '?';
		p->source = safe;
	}
	memset(&p->os_env, 0, sizeof(p->os_env));
	sandbox_defaults(&p->os_env.sandbox);
	if (!root || (root->kind == YNODE_SCALAR && root->type == YSCALAR_NULL)) {
		diag_error(d, none, "the file is empty: expected an agent definition (a mapping)");
		return NULL;
	}
	if (root->kind != YNODE_MAP) {
		diag_error(d, root->loc, "the top level must be a mapping, got %s",
			   ynode_describe(a, root));
		return NULL;
	}
	for (size_t i = 0; i < root->n_pairs; i++) {
		const struct ynode *k = root->pairs[i].key;

		if (k->kind != YNODE_SCALAR)
			continue;
		for (size_t j = 0; j < i; j++) {
			const struct ynode *prev = root->pairs[j].key;

			if (prev->kind == YNODE_SCALAR && !strcmp(prev->value, k->value) &&
			    (!strcmp(k->value, "os_env") || !strcmp(k->value, "terminals")))
				diag_error(d, k->loc, "duplicate key '%s' (first at line %u)",
					   k->value, prev->loc.line);
		}
	}
	check_toplevel(&c, root, flags);
	if ((v = ynode_get(root, "os_env"))) {
		p->has_os_env = true;
		want_os_env(&c, v, "os_env", &p->os_env);
		p->os_env.loc = ynode_key(root, "os_env")->loc;
	}
	if ((v = ynode_get(root, "terminals")) &&
	    !(v->kind == YNODE_SCALAR && v->type == YSCALAR_NULL) && want_map(&c, v, "terminals")) {
		for (size_t i = 0; i < v->n_pairs; i++) {
			const struct ynode *k = v->pairs[i].key;
			struct terminal *t;

			if (!is_string(k) || k->len == 0) {
				diag_error(d, k->loc, "terminal names must be strings, got %s",
					   ynode_describe(a, k));
				continue;
			}
			/* Names are printed in the outputs' comments, one line each. */
			if (has_control(k->value, k->len)) {
				diag_error(d, k->loc,
					   "terminal name %s contains a control character",
					   ynode_describe(a, k));
				continue;
			}
			for (size_t j = 0; j < p->n_terminals; j++)
				if (!strcmp(p->terminals[j].name, k->value))
					diag_error(d, k->loc,
						   "duplicate terminal '%s' (first at line %u)",
						   k->value, p->terminals[j].loc.line);
			t = ARENA_PUSH(a, p->terminals, p->n_terminals, p->cap_terminals);
			t->name = k->value;
			want_terminal(&c, v->pairs[i].value,
				      arena_printf(a, "terminals.%s", k->value), p, t);
			t->loc = k->loc;
		}
	}
	return d->errors == before && !d->truncated ? p : NULL;
}
