/*
 * llbackend.c - what the linux_landlock backend makes of a policy (llbackend.h).
 *
 * The words of the rows whose status and text are the same as the bwrap
 * backend's (the proxy's rows, the environment, limits, start_in_scratch,
 * fork, terminals) are those of emitters/explain.c's linux column: where
 * they differ, --explain prints a "linux_landlock:" line under the row, so
 * the goldens show any drift.
 */
#include "llbackend.h"
#include "workspace.h"

#include <stdio.h>
#include <string.h>

#include "paths.h"
#include "protect.h"
#include "transparent.h"

const char llbackend_why_git_ssh[] =
    "git_ssh needs a linux_bwrap sandbox: its broker is reached over a Unix socket, and "
    "linux_landlock lets no Unix socket be made";
const char llbackend_why_cow[] =
    "write_paths: copy_on_write needs a linux_bwrap sandbox: the private copy is mounted at the "
    "path, and linux_landlock mounts nothing";

/* What a rule cannot say below a writable grant (landlock.h, LL_CONTAINER). */
#define CONTAINER                                                                                  \
	"in a directory that holds a masked or protected path (such as .git) names can be "        \
	"neither made, removed nor renamed"
#define RULE_R "Landlock rule: read, execute, list"
#define WRITABLE "writable through a Landlock rule; " CONTAINER
/* Landlock's list right reaches a whole hierarchy: the one of the directory
 * above a masked one reaches what the masked one holds. */
#define LISTED "the names a hidden directory holds can still be listed (none read)"
#define MASKED "no Landlock rule: unreadable; a missing one cannot be made"

static struct llb_verdict
verdict(enum ll_status status, const char *how)
{
	return (struct llb_verdict){status, how};
}

/* Does a writable grant hold PATH strictly below itself?  (At the grant
 * itself a mask beats it: the grant gets no rule, exactly.) */
static bool
below_writable(const struct sandbox *sb, const char *path)
{
	for (size_t i = 0; i < sb->write_paths.n; i++) {
		const char *g = sb->write_paths.v[i].symbolic;

		if (ir_within(path, g) && strcmp(path, g))
			return true;
	}
	return false;
}

static struct llb_verdict
files_setting(const struct policy *p, enum llb_kind kind, size_t index)
{
	const struct sandbox *sb = &p->os_env.sandbox;

	switch (kind) {
	case LLB_WORKSPACE:
		return workspace_writable(sb) ? verdict(LLB_APPROXIMATED, WRITABLE)
					      : verdict(LLB_ENFORCED, RULE_R);
	case LLB_HOME:
		if (workspace_home_held(p))
			return verdict(LLB_ENFORCED,
				       "the grant decides: no private home, the host's as granted");
		return verdict(
		    LLB_ENFORCED,
		    "HOME is an empty writable directory of the scratch dir, discarded at "
		    "exit, with a link to each grant below the home; the home's own path "
		    "shows only the grants");
	case LLB_WRITE_PATH:
		return verdict(LLB_APPROXIMATED, WRITABLE);
	case LLB_COW_PATH:
		return verdict(LLB_NOT_ENFORCED, "copy_on_write needs linux_bwrap");
	case LLB_READ_PATH:
		return verdict(LLB_ENFORCED, RULE_R);
	case LLB_WRITE_FILE:
		return verdict(
		    LLB_APPROXIMATED,
		    "a Landlock rule on the file itself: written in place, not through a "
		    "private copy; replacing it by rename is refused");
	case LLB_MASK_PATH:
		/* The list right of the directory above it reaches below it too. */
		if (index < sb->mask_paths.n &&
		    below_writable(sb, sb->mask_paths.v[index].symbolic))
			return verdict(LLB_APPROXIMATED, MASKED "; " LISTED "; " CONTAINER);
		return verdict(LLB_APPROXIMATED, MASKED "; " LISTED);
	case LLB_DOTFILES:
		if (sb->allow_all_hidden)
			return verdict(LLB_ENFORCED, "no dotfile is hidden");
		if (sb->write_paths.n)
			return verdict(LLB_APPROXIMATED,
				       sb->scan_recursive.value
					   ? "no Landlock rule on each dotfile the scan finds at "
					     "launch, at every depth; " LISTED "; " CONTAINER
					   : "no Landlock rule on each top-level dotfile the scan "
					     "finds at launch; " LISTED "; " CONTAINER);
		return verdict(LLB_APPROXIMATED,
			       sb->scan_recursive.value
				   ? "no Landlock rule on each dotfile the scan finds at launch, "
				     "at every depth; " LISTED
				   : "no Landlock rule on each top-level dotfile the scan finds "
				     "at launch; " LISTED);
	case LLB_PROTECTED:
		/* Only a writable grant is cut above them (landlock.h). */
		if (!sb->write_paths.n)
			return verdict(LLB_ENFORCED,
				       "read-only Landlock rules, as every grant here: nothing is "
				       "writable");
		return verdict(
		    LLB_APPROXIMATED,
		    "read-only Landlock rules; the directories above them (such as .git) "
		    "are list-only: names there can be neither made, removed nor "
		    "renamed, so git cannot commit there (index.lock)");
	case LLB_UNPROTECT:
		return verdict(LLB_ENFORCED, "writable like the rest of its root");
	case LLB_DENY_SOCKET:
		return verdict(LLB_ENFORCED, "seccomp refuses every Unix socket but socketpair()");
	default:
		return verdict(LLB_NOT_ENFORCED, "unknown setting");
	}
}

static struct llb_verdict
network_setting(const struct policy *p, enum llb_kind kind, size_t index)
{
	const struct sandbox *sb = &p->os_env.sandbox;

	switch (kind) {
	case LLB_EGRESS_DEFAULT:
		return verdict(LLB_APPROXIMATED,
			       "Landlock allows TCP connect to the proxy's loopback port alone "
			       "(every other port refused, but another host on that port is not); "
			       "seccomp refuses UDP and every other family; clients that read only "
			       "the system CA bundle cannot trust the proxy (SSL_CERT_FILE and the "
			       "like are set)");
	case LLB_EGRESS_TRANSPARENT:
		return verdict(LLB_APPROXIMATED,
			       "no resolver of its own without a network namespace: clients that "
			       "ignore HTTPS_PROXY are refused");
	case LLB_EGRESS_RULE:
		if (index < sb->n_egress && !sb->egress[index].tcp)
			return verdict(LLB_ENFORCED, "the proxy: method, host, port and path (the "
						     "query is not matched)");
		if (index < sb->n_egress && sb->egress[index].port == 22)
			return verdict(
			    LLB_ENFORCED,
			    "the proxy: host and port (a CONNECT, or a connection to the "
			    "name), then a plain tunnel, uninspected (no method, path or "
			    "credential); for git over SSH, git_ssh checks the repository "
			    "and keeps the key outside");
		return verdict(LLB_ENFORCED, "the proxy: host and port (a CONNECT, or a connection "
					     "to the name), then a plain tunnel, uninspected (no "
					     "method, path or credential)");
	case LLB_PRIVATE_DEST:
		return verdict(LLB_ENFORCED,
			       sb->egress_allow_private.value
				   ? "allowed (egress_allow_private_destinations)"
				   : "the proxy refuses loopback, private, link-local "
				     "and metadata addresses");
	case LLB_CREDENTIAL_PROFILES:
		return verdict(LLB_ENFORCED,
			       "the proxy swaps tokens for the profiles' hosts, resolved at launch");
	case LLB_CREDENTIAL:
		return verdict(
		    LLB_ENFORCED,
		    index < sb->n_creds && sb->creds[index].type == CRED_AWS_SIGV4
			? "the proxy signs again with the real keys; the sandbox holds "
			  "placeholders"
			: "the proxy swaps the placeholder for the secret over TLS to this "
			  "host only");
	case LLB_GIT_SSH:
		return verdict(LLB_NOT_ENFORCED, "needs linux_bwrap");
	case LLB_NETWORK_OFF:
		return verdict(LLB_ENFORCED, "Landlock refuses every TCP connect and bind; seccomp "
					     "refuses every other socket but socketpair(); no "
					     "loopback either");
	case LLB_NETWORK_ON:
		return verdict(LLB_ENFORCED, "the host's network (no Unix socket can be made)");
	default:
		return verdict(LLB_NOT_ENFORCED, "unknown setting");
	}
}

struct llb_verdict
llbackend_setting(const struct policy *p, enum llb_kind kind, size_t index)
{
	switch (kind) {
	case LLB_BACKEND:
		return verdict(LLB_APPROXIMATED,
			       "Landlock, seccomp and no_new_privs without namespaces: the host's "
			       "processes stay listed in /proc (not their memory, environment or "
			       "signals); no Unix socket can be made");
	case LLB_WORKSPACE:
	case LLB_HOME:
	case LLB_WRITE_PATH:
	case LLB_COW_PATH:
	case LLB_READ_PATH:
	case LLB_WRITE_FILE:
	case LLB_MASK_PATH:
	case LLB_DOTFILES:
	case LLB_PROTECTED:
	case LLB_UNPROTECT:
	case LLB_DENY_SOCKET:
		return files_setting(p, kind, index);
	case LLB_EGRESS_DEFAULT:
	case LLB_EGRESS_TRANSPARENT:
	case LLB_EGRESS_RULE:
	case LLB_PRIVATE_DEST:
	case LLB_CREDENTIAL:
	case LLB_CREDENTIAL_PROFILES:
	case LLB_GIT_SSH:
	case LLB_NETWORK_OFF:
	case LLB_NETWORK_ON:
		return network_setting(p, kind, index);
	/* The same as the bwrap backend: omnibox-init and omnibox-run do these. */
	case LLB_ENVIRONMENT:
		return verdict(LLB_ENFORCED, "rebuilt from an allow-list, never inherited whole");
	case LLB_LIMIT_MEMORY:
		return verdict(LLB_APPROXIMATED, "memory.max in a delegated cgroup; else "
						 "RLIMIT_DATA: private writable memory, not "
						 "shared or file-backed");
	case LLB_LIMIT_PROCESSES:
		return verdict(LLB_APPROXIMATED, "pids.max in a delegated cgroup, else "
						 "RLIMIT_NPROC: every process of the user");
	case LLB_LIMIT_CPU_TIME:
		return verdict(LLB_ENFORCED, "RLIMIT_CPU");
	case LLB_LIMIT_CPU_RATE:
		return verdict(LLB_APPROXIMATED,
			       "cpu.max in a delegated cgroup; without one, not enforced");
	case LLB_LIMIT_OPEN_FILES:
		return verdict(LLB_ENFORCED, "RLIMIT_NOFILE");
	case LLB_START_IN_SCRATCH:
		return verdict(LLB_ENFORCED, "the command starts in the scratch dir");
	case LLB_FORK:
		return verdict(LLB_NOT_ENFORCED, "not built: omnibox-run refuses to launch");
	}
	return verdict(LLB_NOT_ENFORCED, "unknown setting");
}

/* ---- every row, as --explain lists them -------------------------------------- */

struct rows {
	const struct policy *p;
	llb_verdict_fn *fn;
	const void *ctx;
	llb_each_fn *each;
	void *arg;
	size_t inexact;
};

static void
put(struct rows *r, const char *setting, uint32_t line, struct llb_verdict v)
{
	r->each(r->arg, setting, line, v);
	r->inexact += v.status != LLB_ENFORCED;
}

static void
put_kind(struct rows *r, const char *setting, uint32_t line, enum llb_kind kind, size_t index)
{
	put(r, setting, line, r->fn(r->p, kind, index, r->ctx));
}

static void
put_paths(struct rows *r, const struct ir_pathlist *l, const char *key, enum llb_kind kind)
{
	char setting[1024];

	for (size_t i = 0; i < l->n; i++) {
		snprintf(setting, sizeof(setting), "%s %s", key, l->v[i].written);
		put_kind(r, setting, l->v[i].loc.line, kind, i);
	}
}

static void
files_rows(struct rows *r)
{
	const struct sandbox *sb = &r->p->os_env.sandbox;
	const struct ir_path *held = workspace_home_held(r->p);
	const char *roots[256];
	char setting[1024];

	put_kind(r, workspace_writable(sb) ? "workspace, writable" : "workspace, read-only", 0,
		 LLB_WORKSPACE, 0);
	if (held) {
		snprintf(setting, sizeof(setting), "home: %s", held->written);
		put_kind(r, setting, held->loc.line, LLB_HOME, 0);
	} else {
		put_kind(r, "home: private", 0, LLB_HOME, 0);
	}
	put_paths(r, &sb->write_paths, "write_paths", LLB_WRITE_PATH);
	put_paths(r, &sb->cow_paths, "write_paths (copy_on_write)", LLB_COW_PATH);
	put_paths(r, &sb->read_paths, "read_paths", LLB_READ_PATH);
	put_paths(r, &sb->write_files, "write_files", LLB_WRITE_FILE);
	put_paths(r, &sb->mask_paths, "mask_paths", LLB_MASK_PATH);
	put_kind(r,
		 sb->allow_all_hidden ? "cwd_allow_hidden [\"*\"]" : "dotfiles (cwd_allow_hidden)",
		 sb->cwd_allow_hidden.loc.line, LLB_DOTFILES, 0);
	if (protect_symbolic_roots(sb, roots, 256) || sb->protect_paths.n)
		put_kind(r, "protected paths (docs/protect.md)",
			 sb->protect_paths.loc.line ? sb->protect_paths.loc.line
						    : sb->write_paths.loc.line,
			 LLB_PROTECTED, 0);
	for (size_t i = 0; i < sb->unprotect_paths.n; i++) {
		snprintf(setting, sizeof(setting), "unprotect_paths %s",
			 sb->unprotect_paths.v[i].s);
		put_kind(r, setting, sb->unprotect_paths.v[i].loc.line, LLB_UNPROTECT, i);
	}
	put_paths(r, &sb->deny_unix_socket_paths, "deny_unix_socket_paths", LLB_DENY_SOCKET);
}

static void
egress_rows(struct rows *r)
{
	const struct sandbox *sb = &r->p->os_env.sandbox;
	unsigned ports[TRANSPARENT_MAX_PORTS];
	char setting[1024], text[TRANSPARENT_MAX_PORTS * 6 + 1];
	int n = transparent_ports(sb->egress, sb->n_egress, ports, NULL);

	put_kind(r, "egress_rules: default deny", sb->egress_loc.line, LLB_EGRESS_DEFAULT, 0);
	if (n > 0) {
		transparent_ports_text(ports, n, text, sizeof(text));
		snprintf(setting, sizeof(setting), "egress without client settings (%s)", text);
		put_kind(r, setting, sb->egress_loc.line, LLB_EGRESS_TRANSPARENT, 0);
	}
	for (size_t i = 0; i < sb->n_egress; i++) {
		const struct egress_rule *e = &sb->egress[i];

		if (e->tcp)
			snprintf(setting, sizeof(setting), "egress rule %zu (tcp %s%s:%u)", i + 1,
				 e->wildcard ? "*." : "", e->host, e->port);
		else
			snprintf(setting, sizeof(setting), "egress rule %zu (%s%s)", i + 1,
				 e->wildcard ? "*." : "", e->host);
		put_kind(r, setting, e->loc.line, LLB_EGRESS_RULE, i);
	}
	put_kind(r, "private destinations", sb->egress_allow_private.loc.line, LLB_PRIVATE_DEST, 0);
}

static void
network_rows(struct rows *r)
{
	const struct sandbox *sb = &r->p->os_env.sandbox;
	char setting[1024];

	if (sb->n_egress)
		egress_rows(r);
	else if (!sb->allow_network.value)
		put_kind(r, "allow_network: false", sb->allow_network.loc.line, LLB_NETWORK_OFF, 0);
	else
		put_kind(r, "allow_network: true", sb->allow_network.loc.line, LLB_NETWORK_ON, 0);
	for (size_t i = 0; i < sb->n_creds; i++) {
		const struct credential *cr = &sb->creds[i];

		for (size_t k = 0; k < cr->n_targets; k++) {
			snprintf(setting, sizeof(setting), "credential %s -> %s:%u",
				 cred_type_name(cr->type), cr->targets[k].host,
				 cr->targets[k].port);
			put_kind(r, setting, cr->targets[k].loc.line, LLB_CREDENTIAL, i);
		}
		if (cr->type == CRED_DATABRICKS_CLI)
			put_kind(r, "credential databricks_cli", cr->loc.line, LLB_CREDENTIAL_PROFILES,
				 i);
	}
	for (size_t i = 0; i < sb->n_git_ssh; i++) {
		snprintf(setting, sizeof(setting), "git_ssh %s:%u/%s", sb->git_ssh[i].host.s,
			 sb->git_ssh[i].port, sb->git_ssh[i].repository.s);
		put_kind(r, setting, sb->git_ssh[i].loc.line, LLB_GIT_SSH, i);
	}
}

static void
limit_rows(struct rows *r)
{
	const struct limits *l = &r->p->os_env.sandbox.limits;
	const struct {
		const struct ir_u64 *v;
		const char *setting;
		enum llb_kind kind;
	} rows[] = {
	    {&l->memory, "limits.memory", LLB_LIMIT_MEMORY},
	    {&l->processes, "limits.processes", LLB_LIMIT_PROCESSES},
	    {&l->cpu_time, "limits.cpu_time", LLB_LIMIT_CPU_TIME},
	    {&l->cpu_rate, "limits.cpu_rate", LLB_LIMIT_CPU_RATE},
	    {&l->open_files, "limits.open_files", LLB_LIMIT_OPEN_FILES},
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		if (rows[i].v->present)
			put_kind(r, rows[i].setting, rows[i].v->loc.line, rows[i].kind, 0);
}

static struct llb_verdict
ll_verdict(const struct policy *p, enum llb_kind kind, size_t index, const void *ctx)
{
	(void)ctx;
	return llbackend_setting(p, kind, index);
}

size_t
llbackend_settings(const struct policy *p, bool settings_only, llb_each_fn *each, void *arg)
{
	return llb_settings_walk(p, settings_only, ll_verdict, NULL, each, arg);
}

size_t
llb_settings_walk(const struct policy *p, bool settings_only, llb_verdict_fn *fn, const void *ctx,
		  llb_each_fn *each, void *arg)
{
	const struct os_env *env = &p->os_env;
	const struct sandbox *sb = &env->sandbox;
	struct rows r = {p, fn, ctx, each, arg, 0};

	if (sb->type == SANDBOX_NONE) {
		put(&r, "sandbox type none", sb->type_loc.line,
		    verdict(LLB_NOT_ENFORCED, "the command runs unconfined"));
	} else {
		if (!settings_only)
			put_kind(&r, "sandbox", sb->type_loc.line, LLB_BACKEND, 0);
		files_rows(&r);
		network_rows(&r);
		put_kind(&r, "environment (env_passthrough)", sb->env_passthrough.loc.line,
			 LLB_ENVIRONMENT, 0);
		limit_rows(&r);
		if (env->start_in_scratch.value)
			put_kind(&r, "start_in_scratch", env->start_in_scratch.loc.line,
				 LLB_START_IN_SCRATCH, 0);
		if (env->fork.value)
			put_kind(&r, "fork", env->fork.loc.line, LLB_FORK, 0);
	}
	for (size_t i = 0; i < p->n_terminals && !p->terminal; i++) {
		char setting[300];

		snprintf(setting, sizeof(setting), "terminal %s", p->terminals[i].name);
		put(&r, setting, p->terminals[i].loc.line,
		    verdict(LLB_ENFORCED,
			    p->terminals[i].inherit
				? "the agent's os_env"
				: "its own os_env: --explain --terminal=NAME shows it"));
	}
	return r.inexact;
}

/* ---- ABI, refusals, fixed rules ---------------------------------------------- */

int
llbackend_abi(const struct policy *p, const char **why)
{
	(void)p;
	*why = "6 (Linux 6.12: signals and abstract Unix sockets scoped to the sandbox; TCP rules "
	       "need 4, truncation 3)";
	return LLB_ABI_BASE;
}

const char *
llbackend_refuse(const struct policy *p, struct loc *loc)
{
	const struct sandbox *sb = &p->os_env.sandbox;

	if (sb->type == SANDBOX_NONE)
		return NULL;
	if (sb->n_git_ssh) {
		*loc = sb->git_ssh_loc;
		return llbackend_why_git_ssh;
	}
	if (sb->cow_paths.n) {
		*loc = sb->cow_paths.v[0].loc;
		return llbackend_why_cow;
	}
	return NULL;
}

#define FIXED_SYSTEM(dir) {dir, false, "system directory (read, execute)"},
#define FIXED_ETC(name) {"/etc/" name, false, "system file of /etc (read)"},
#define FIXED_DEVICE(dev) {dev, true, "device (read, write)"},

/* One rule a line. */
/* clang-format off */
static const struct llb_fixed fixed[] = {
	PATHS_LINUX_SYSTEM_DIRS(FIXED_SYSTEM)
	PATHS_LINUX_ETC_FILES(FIXED_ETC)
	FIXED_DEVICE("/dev/null")
	FIXED_DEVICE("/dev/zero")
	FIXED_DEVICE("/dev/full")
	FIXED_DEVICE("/dev/random")
	FIXED_DEVICE("/dev/urandom")
	FIXED_DEVICE("/dev/tty")
	{"/proc", false, "the host's /proc (read): no PID namespace"},
};
/* clang-format on */

size_t
llbackend_fixed(const struct llb_fixed **out)
{
	*out = fixed;
	return sizeof(fixed) / sizeof(fixed[0]);
}
