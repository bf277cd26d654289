/*
 * emit_ir.c - the IR as stable JSON (--emit=ir).
 *
 * Lists whose order means nothing (grants, names) are sorted; lists whose
 * order matters (egress rules: the first match is the one logged; command
 * arguments) keep source order.  Every element says which line it came
 * from; null means a default.
 */
#include "../compiler/decide/protect.h"
#include "emit.h"
#include "json.h"

#include <stdlib.h>
#include <string.h>

static int
cmp_path(const void *a, const void *b)
{
	const struct ir_path *x = *(const struct ir_path *const *)a;
	const struct ir_path *y = *(const struct ir_path *const *)b;

	return strcmp(x->symbolic, y->symbolic);
}

static int
cmp_str(const void *a, const void *b)
{
	const struct ir_str *x = *(const struct ir_str *const *)a;
	const struct ir_str *y = *(const struct ir_str *const *)b;

	return strcmp(x->s, y->s);
}

static int
cmp_kv(const void *a, const void *b)
{
	const struct ir_kv *x = *(const struct ir_kv *const *)a;
	const struct ir_kv *y = *(const struct ir_kv *const *)b;

	return strcmp(x->key, y->key);
}

static int
cmp_terminal(const void *a, const void *b)
{
	const struct terminal *x = *(const struct terminal *const *)a;
	const struct terminal *y = *(const struct terminal *const *)b;

	return strcmp(x->name, y->name);
}

/* Pointers to the N elements of size SIZE at BASE, sorted with CMP unless it is NULL. */
static const void **
sorted(const void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	const void **v = calloc(n ? n : 1, sizeof(*v));

	if (!v)
		abort();
	for (size_t i = 0; i < n; i++)
		v[i] = (const char *)base + i * size;
	if (cmp)
		qsort(v, n, sizeof(*v), cmp);
	return v;
}

static void
put_bool(struct json *j, const char *key, struct ir_bool b)
{
	json_key(j, key);
	json_open(j, '{', true);
	json_key(j, "value");
	json_bool(j, b.value);
	json_key(j, "line");
	json_line(j, b.loc.line);
	json_close(j);
}

static void
put_u64(struct json *j, const char *key, struct ir_u64 u)
{
	json_key(j, key);
	json_open(j, '{', true);
	json_key(j, "value");
	json_u64(j, u.value);
	json_key(j, "line");
	json_line(j, u.loc.line);
	json_close(j);
}

static void
put_str(struct json *j, const char *key, const char *value, uint32_t line)
{
	json_key(j, key);
	json_open(j, '{', true);
	json_key(j, "value");
	json_str(j, value);
	json_key(j, "line");
	json_line(j, line);
	json_close(j);
}

static void
put_paths(struct json *j, const char *key, const struct ir_pathlist *l)
{
	const void **v = sorted(l->v, l->n, sizeof(l->v[0]), cmp_path);

	json_key(j, key);
	json_open(j, '[', false);
	for (size_t i = 0; i < l->n; i++) {
		const struct ir_path *p = v[i];

		json_open(j, '{', true);
		json_key(j, "path");
		json_str(j, p->symbolic);
		json_key(j, "written");
		json_str(j, p->written);
		json_key(j, "line");
		json_line(j, p->loc.line);
		json_close(j);
	}
	json_close(j);
	free(v);
}

/* A list of names, sorted unless KEEP_ORDER. */
static void
put_names(struct json *j, const char *key, const char *field, const struct ir_strlist *l,
	  bool keep_order)
{
	const void **v = sorted(l->v, l->n, sizeof(l->v[0]), keep_order ? NULL : cmp_str);
	json_key(j, key);
	json_open(j, '[', false);
	for (size_t i = 0; i < l->n; i++) {
		const struct ir_str *s = v[i];

		json_open(j, '{', true);
		json_key(j, field);
		json_str(j, s->s);
		json_key(j, "line");
		json_line(j, s->loc.line);
		json_close(j);
	}
	json_close(j);
	free(v);
}

static void
put_egress(struct json *j, const struct sandbox *sb)
{
	json_key(j, "egress_rules");
	if (!sb->egress_present) {
		json_null(j);
		return;
	}
	json_open(j, '[', false);
	for (size_t i = 0; i < sb->n_egress; i++) {
		const struct egress_rule *r = &sb->egress[i];

		json_open(j, '{', true);
		json_key(j, "kind");
		json_str(j, r->tcp ? "tcp" : "http");
		if (r->tcp) { /* a stream: no methods, no path */
			json_key(j, "host");
			json_str(j, r->host);
			json_key(j, "subdomains");
			json_bool(j, r->wildcard);
			json_key(j, "port");
			json_u64(j, r->port);
			json_key(j, "line");
			json_line(j, r->loc.line);
			json_close(j);
			continue;
		}
		json_key(j, "methods");
		json_open(j, '[', true);
		if (r->methods == EGRESS_ANY)
			json_str(j, "*");
		else
			for (unsigned bit = 1; bit & EGRESS_ANY; bit <<= 1)
				if (r->methods & bit)
					json_str(j, egress_method_name(bit));
		json_close(j);
		json_key(j, "host");
		json_str(j, r->host);
		json_key(j, "subdomains");
		json_bool(j, r->wildcard);
		json_key(j, "port");
		if (r->port)
			json_u64(j, r->port);
		else
			json_null(j);
		json_key(j, "path");
		json_str(j, r->path);
		json_key(j, "line");
		json_line(j, r->loc.line);
		json_close(j);
	}
	json_close(j);
}

static const char *const source_name[] = {NULL, "env", "file", "command", "unix_socket"};

static void
put_source(struct json *j, const char *key, const struct cred_source *src)
{
	json_key(j, key);
	if (src->kind == CRED_SOURCE_NONE) {
		json_null(j);
		return;
	}
	json_open(j, '{', true);
	json_key(j, "kind");
	json_str(j, source_name[src->kind]);
	json_key(j, "value");
	json_str(j, src->value.s);
	json_key(j, "line");
	json_line(j, src->value.loc.line);
	json_close(j);
}

/* aws_sigv4's own settings. */
static void
put_aws(struct json *j, const struct credential *cr)
{
	put_str(j, "region", cr->region.s, cr->region.loc.line);
	put_str(j, "service", cr->service.s, cr->service.loc.line);
	json_key(j, "credential");
	json_open(j, '{', false);
	if (cr->aws_profile.s) {
		put_str(j, "profile", cr->aws_profile.s, cr->aws_profile.loc.line);
	} else {
		put_source(j, "access_key_id", &cr->aws_key_id);
		put_source(j, "secret_access_key", &cr->aws_secret);
		put_source(j, "session_token", &cr->aws_token);
	}
	json_close(j);
}

static void
put_git_ssh(struct json *j, const struct sandbox *sb)
{
	json_key(j, "git_ssh");
	json_open(j, '[', false);
	for (size_t i = 0; i < sb->n_git_ssh; i++) {
		const struct git_ssh *g = &sb->git_ssh[i];

		json_open(j, '{', false);
		json_key(j, "line");
		json_line(j, g->loc.line);
		json_key(j, "host");
		json_str(j, g->host.s);
		json_key(j, "port");
		json_u64(j, g->port);
		json_key(j, "username");
		json_str(j, g->username.s);
		json_key(j, "repository");
		json_str(j, g->repository.s);
		json_key(j, "operations");
		json_open(j, '[', true);
		if (g->operations & GIT_OP_FETCH)
			json_str(j, "fetch");
		if (g->operations & GIT_OP_PUSH)
			json_str(j, "push");
		json_close(j);
		put_str(j, "identity_file", g->identity_file.rel ? g->identity_file.symbolic : NULL,
			g->identity_file.loc.line);
		put_str(j, "known_hosts_file",
			g->known_hosts_file.rel ? g->known_hosts_file.symbolic
						: "{HOME}/.ssh/known_hosts",
			g->known_hosts_file.loc.line);
		put_names(j, "allowed_cidrs", "cidr", &g->allowed_cidrs, false);
		put_bool(j, "allow_loopback", g->allow_loopback);
		json_close(j);
	}
	json_close(j);
}

static void
put_credentials(struct json *j, const struct sandbox *sb)
{

	json_key(j, "credential_proxy");
	if (!sb->n_creds) {
		json_null(j);
		return;
	}
	json_open(j, '[', false);
	for (size_t i = 0; i < sb->n_creds; i++) {
		const struct credential *cr = &sb->creds[i];

		json_open(j, '{', false);
		json_key(j, "type");
		json_str(j, cred_type_name(cr->type));
		json_key(j, "line");
		json_line(j, cr->loc.line);
		put_source(j, "source", &(struct cred_source){cr->source_kind, cr->source});
		if (cr->refresh_interval.present)
			put_u64(j, "refresh_interval_seconds", cr->refresh_interval);
		if (cr->type == CRED_AWS_SIGV4)
			put_aws(j, cr);
		json_key(j, "targets");
		json_open(j, '[', false);
		for (size_t t = 0; t < cr->n_targets; t++) {
			const struct cred_target *tg = &cr->targets[t];

			json_open(j, '{', true);
			json_key(j, "host");
			json_str(j, tg->host);
			json_key(j, "port");
			json_u64(j, tg->port);
			json_key(j, "path");
			json_str(j, tg->path);
			json_key(j, "scheme");
			json_str(j, cred_scheme_name(tg->scheme));
			json_key(j, "line");
			json_line(j, tg->loc.line);
			json_close(j);
		}
		json_close(j);
		put_names(j, "env", "name", &cr->env, true);
		put_str(j, "username",
			cr->username.s ? cr->username.s
			: (cr->type == CRED_HTTPS_BEARER || cr->type == CRED_DATABRICKS_CLI)
			    ? NULL
			    : "x-access-token",
			cr->username.loc.line);
		if (cr->header.s)
			put_str(j, "header", cr->header.s, cr->header.loc.line);
		put_names(j, "profiles", "name", &cr->profiles, true);
		put_str(j, "default", cr->default_profile.s, cr->default_profile.loc.line);
		json_close(j);
	}
	json_close(j);
}

static void
put_limits(struct json *j, const struct limits *l)
{
	json_key(j, "limits");
	if (!l->present) {
		json_null(j);
		return;
	}
	json_open(j, '{', false);
	json_key(j, "line");
	json_line(j, l->loc.line);
#define LIMIT(name, unit)                                                                          \
	json_key(j, #name);                                                                        \
	if (l->name.present) {                                                                     \
		json_open(j, '{', true);                                                           \
		json_key(j, "value");                                                              \
		json_u64(j, l->name.value);                                                        \
		json_key(j, "unit");                                                               \
		json_str(j, unit);                                                                 \
		json_key(j, "line");                                                               \
		json_line(j, l->name.loc.line);                                                    \
		json_close(j);                                                                     \
	} else {                                                                                   \
		json_null(j);                                                                      \
	}
	LIMIT(memory, "bytes")
	LIMIT(processes, "processes")
	LIMIT(cpu_time, "seconds")
	LIMIT(cpu_rate, "percent")
	LIMIT(open_files, "files")
#undef LIMIT
	json_close(j);
}

static void
put_protected_one(void *arg, const struct protect_entry *e)
{
	static const char *const holds[] = {"directory", "file", "none", "directory"};
	struct json *j = arg;

	json_open(j, '{', true);
	json_key(j, "path");
	json_str(j, e->path);
	json_key(j, "kind");
	json_str(j, e->dir ? "directory" : "file");
	json_key(j, "missing");
	json_str(j, holds[e->hold]);
	json_key(j, "why");
	json_str(j, e->why);
	json_key(j, "line");
	json_line(j, e->line);
	json_close(j);
}

/* The protected set for the symbolic writable roots (the runtime applies it to canonical ones). */
static void
put_protected(struct json *j, const struct sandbox *sb)
{
	const char *roots[256];
	size_t n = protect_symbolic_roots(sb, roots, 256);

	if (sb->protect_paths.present)
		put_paths(j, "protect_paths", &sb->protect_paths);
	if (sb->unprotect_paths.present)
		put_names(j, "unprotect_paths", "name", &sb->unprotect_paths, false);
	json_key(j, "protected");
	json_open(j, '[', false);
	if (sb->type != SANDBOX_NONE)
		protect_each(sb, roots, n, "{HOME}", put_protected_one, j);
	json_close(j);
}

static void
put_sandbox(struct json *j, const struct sandbox *sb)
{
	json_key(j, "sandbox");
	json_open(j, '{', false);
	json_key(j, "line");
	json_line(j, sb->loc.line);
	put_str(j, "type", sandbox_type_name(sb->type), sb->type_loc.line);
	put_paths(j, "write_paths", &sb->write_paths);
	if (sb->cow_paths.n)
		put_paths(j, "copy_on_write_paths", &sb->cow_paths);
	put_paths(j, "read_paths", &sb->read_paths);
	put_paths(j, "write_files", &sb->write_files);
	put_paths(j, "mask_paths", &sb->mask_paths);
	put_paths(j, "deny_unix_socket_paths", &sb->deny_unix_socket_paths);
	put_bool(j, "allow_network", sb->allow_network);
	put_egress(j, sb);
	put_bool(j, "egress_allow_private_destinations", sb->egress_allow_private);
	put_credentials(j, sb);
	if (sb->n_git_ssh)
		put_git_ssh(j, sb);
	put_names(j, "cwd_allow_hidden", "name", &sb->cwd_allow_hidden, false);
	put_bool(j, "cwd_hidden_scan_recursive", sb->scan_recursive);
	put_u64(j, "cwd_hidden_scan_max_entries", sb->scan_max_entries);
	put_str(j, "cwd_hidden_scan_overflow", scan_overflow_name(sb->scan_overflow),
		sb->scan_overflow_loc.line);
	put_names(j, "env_passthrough", "name", &sb->env_passthrough, false);
	put_limits(j, &sb->limits);
	put_protected(j, sb);
	json_close(j);
}

static void
put_os_env(struct json *j, const struct os_env *env)
{
	json_open(j, '{', false);
	json_key(j, "line");
	json_line(j, env->loc.line);
	json_key(j, "type");
	json_str(j, "caller_process");
	json_key(j, "cwd");
	json_open(j, '{', true);
	json_key(j, "path");
	json_str(j, env->cwd.s ? env->cwd_path.symbolic : "{LAUNCH}");
	json_key(j, "written");
	json_str(j, env->cwd.s);
	json_key(j, "line");
	json_line(j, env->cwd.loc.line);
	json_close(j);
	put_bool(j, "start_in_scratch", env->start_in_scratch);
	put_bool(j, "fork", env->fork);
	put_sandbox(j, &env->sandbox);
	json_close(j);
}

static void
put_terminal(struct json *j, const struct terminal *t)
{
	const void **env = sorted(t->env, t->n_env, sizeof(t->env[0]), cmp_kv);

	json_open(j, '{', false);
	json_key(j, "name");
	json_str(j, t->name);
	json_key(j, "line");
	json_line(j, t->loc.line);
	put_str(j, "command", t->command.s, t->command.loc.line);
	put_names(j, "args", "value", &t->args, true);
	json_key(j, "os_env");
	if (t->inherit)
		json_str(j, "inherit");
	else
		put_os_env(j, t->os_env);
	put_bool(j, "allow_sandbox_override", t->allow_sandbox_override);
	put_bool(j, "allow_cwd_override", t->allow_cwd_override);
	json_key(j, "env");
	json_open(j, '[', false);
	for (size_t i = 0; i < t->n_env; i++) {
		const struct ir_kv *kv = env[i];

		json_open(j, '{', true);
		json_key(j, "name");
		json_str(j, kv->key);
		json_key(j, "value");
		json_str(j, kv->value);
		json_key(j, "line");
		json_line(j, kv->loc.line);
		json_close(j);
	}
	json_close(j);
	put_names(j, "env_unset", "name", &t->env_unset, false);
	json_close(j);
	free(env);
}

int
emit_ir(const struct policy *p, enum target t, struct diag *d, struct textbuf *out)
{
	const void **terms =
	    sorted(p->terminals, p->n_terminals, sizeof(p->terminals[0]), cmp_terminal);
	struct json j;

	(void)t;
	(void)d;
	json_init(&j, out);
	json_open(&j, '{', false);
	json_key(&j, "format");
	json_str(&j, "omnibox-ir/1");
	json_key(&j, "source");
	json_str(&j, p->source);
	json_key(&j, "terminal");
	json_str(&j, p->terminal ? p->terminal->name : NULL);
	json_key(&j, "os_env");
	put_os_env(&j, &p->os_env);
	json_key(&j, "terminals");
	json_open(&j, '[', false);
	for (size_t i = 0; i < p->n_terminals; i++)
		put_terminal(&j, terms[i]);
	json_close(&j);
	json_close(&j);
	json_end(&j);
	free((void *)terms);
	return 0;
}
