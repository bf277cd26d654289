/*
 * explain.c - --explain: what each setting becomes on a target, in words.
 *
 * One line per setting of the effective policy: enforced (and by what),
 * approximated (how it differs) or not enforced, with its YAML line; then a
 * summary.  Modelled on `systemd-analyze security`: a reviewer reads what a
 * policy means on each platform without reading three profile languages.
 * The facts here are those the emitters implement (bwrap.h, sbpl.h,
 * winjob.h) and the docs state; the goldens hold them to it.
 *
 * On linux each row has a second status, the linux_landlock backend's, and
 * its words on a line below when they differ: llbackend_settings() lists
 * the same rows in the same order, and each is matched to its row here
 * (tests/unit/test_llbackend.c holds the two lists to each other).
 */
#include "explain.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../compiler/decide/container.h"
#include "../compiler/decide/llbackend.h"
#include "../compiler/decide/omnigent.h"
#include "../compiler/decide/protect.h"
#include "../compiler/decide/transparent.h"
#include "../compiler/decide/workspace.h"
#include "bwrap.h"
#include "sbpl.h"
#include "winjob.h"

enum status { ENFORCED, APPROXIMATED, NOT_ENFORCED };

static const char *const status_words[] = {"enforced", "approximated", "not enforced"};

/* A row of the linux_landlock column, as llbackend_settings() gives it. */
struct ll_row {
	char *setting;
	uint32_t line;
	struct llb_verdict v;
};

struct ll_rows {
	struct ll_row *v;
	size_t n, cap;
};

struct ex {
	struct textbuf *out;
	enum target t;
	size_t n[3];
	/* linux: the linux_landlock column, matched to the rows in order */
	const struct ll_rows *ll;
	size_t next_ll;
	size_t ll_n[3];
};

static void
ll_collect(void *arg, const char *setting, uint32_t line, struct llb_verdict v)
{
	struct ll_rows *r = arg;

	if (r->n == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 32;
		r->v = realloc(r->v, r->cap * sizeof(*r->v));
		if (!r->v)
			abort();
	}
	r->v[r->n].setting = strdup(setting);
	if (!r->v[r->n].setting)
		abort();
	r->v[r->n].line = line;
	r->v[r->n++].v = v;
}

static void
ll_ignore(void *arg, const char *setting, uint32_t line, struct llb_verdict v)
{
	(void)arg;
	(void)setting;
	(void)line;
	(void)v;
}

static void
ll_free(struct ll_rows *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->v[i].setting);
	free(r->v);
}

/* The linux_landlock verdict of the row SETTING at LINE: the next one
 * llbackend_settings() listed (the lists agree: tests/unit/test_llbackend.c). */
static const struct ll_row *
ll_match(struct ex *x, const char *setting, uint32_t line)
{
	for (size_t i = x->next_ll; x->ll && i < x->ll->n; i++)
		if (x->ll->v[i].line == line && !strcmp(x->ll->v[i].setting, setting)) {
			x->next_ll = i + 1;
			return &x->ll->v[i];
		}
	return NULL;
}

static void
row(struct ex *x, enum status st, const char *setting, uint32_t line, const char *how)
{
	const struct ll_row *ll;
	char at[32] = "";

	if (line)
		snprintf(at, sizeof(at), "%u", line);
	x->n[st]++;
	if (x->t != TARGET_LINUX) {
		tb_printf(x->out, "  %-12s %5s  %-44s %s\n", status_words[st], at, setting, how);
		return;
	}
	ll = ll_match(x, setting, line);
	tb_printf(x->out, "  %-12s %-12s %5s  %-44s %s\n", status_words[st],
		  ll ? status_words[ll->v.status] : "-", at, setting, how);
	if (!ll)
		return;
	x->ll_n[ll->v.status]++;
	if (strcmp(ll->v.how, how))
		tb_printf(x->out, "  %-12s %-12s %5s  linux_landlock: %s\n", "", "", "", ll->v.how);
}

static const char *
by_target(enum target t, const char *linux_how, const char *darwin_how)
{
	return t == TARGET_LINUX ? linux_how : darwin_how;
}

static void
paths(struct ex *x, const struct ir_pathlist *l, const char *key, const char *linux_how,
      const char *darwin_how, const char *windows_why)
{
	char setting[600];

	for (size_t i = 0; i < l->n; i++) {
		snprintf(setting, sizeof(setting), "%s %s", key, l->v[i].written);
		if (x->t == TARGET_WINDOWS)
			row(x, NOT_ENFORCED, setting, l->v[i].loc.line, windows_why);
		else
			row(x, ENFORCED, setting, l->v[i].loc.line,
			    by_target(x->t, linux_how, darwin_how));
	}
}

/* Linux: the home is the sandbox's own unless a grant holds it (bwrap.h). */
static void
home(struct ex *x, const struct policy *p)
{
	const struct ir_path *held = bwrap_home_written(p);
	char setting[600];

	if (x->t != TARGET_LINUX)
		return;
	if (held) {
		snprintf(setting, sizeof(setting), "home: %s", held->written);
		row(x, ENFORCED, setting, held->loc.line,
		    "the grant decides: no private home, the host's as granted");
		return;
	}
	row(x, ENFORCED, "home: private", 0,
	    "an empty writable directory of the scratch dir bound at the home, discarded at exit; "
	    "the host's home only where a grant shows it");
}

static void
files(struct ex *x, const struct policy *p)
{
	const struct sandbox *sb = &p->os_env.sandbox;
	const char *nofs = "a Job Object does not isolate files";
	const char *roots[256];
	size_t n_roots = protect_symbolic_roots(sb, roots, 256);
	bool ws = workspace_writable(sb);

	if (x->t == TARGET_WINDOWS)
		row(x, NOT_ENFORCED, ws ? "workspace, writable" : "workspace, read-only", 0, nofs);
	else
		row(x, ENFORCED, ws ? "workspace, writable" : "workspace, read-only", 0,
		    by_target(x->t, ws ? "read-write bind mount" : "read-only bind mount",
			      ws ? "SBPL allow file-read* file-write*" : "SBPL allow file-read*"));
	home(x, p);
	paths(x, &sb->write_paths, "write_paths", "read-write bind mount of the descriptor walked to it",
	      "SBPL allow file-read* file-write* (subpath)", nofs);
	paths(x, &sb->cow_paths, "write_paths (copy_on_write)",
	      "bind mount of a private copy in the scratch dir", "", nofs);
	paths(x, &sb->read_paths, "read_paths", "read-only bind mount",
	      "SBPL allow file-read* (subpath)", nofs);
	paths(x, &sb->write_files, "write_files",
	      "a private directory at the file's directory holding its copy, written back on close",
	      "SBPL allow file-read* file-write* (literal)", nofs);
	paths(x, &sb->mask_paths, "mask_paths",
	      "empty tmpfs or /dev/null over it (a missing one at its first missing component)",
	      "SBPL deny file-read* file-write*, after every allow", "a Job Object cannot hide files");
	if (sb->allow_all_hidden)
		row(x, x->t == TARGET_WINDOWS ? NOT_ENFORCED : ENFORCED, "cwd_allow_hidden [\"*\"]",
		    sb->cwd_allow_hidden.loc.line,
		    x->t == TARGET_WINDOWS ? nofs : "no dotfile is hidden");
	else if (x->t == TARGET_WINDOWS)
		row(x, NOT_ENFORCED, "dotfiles (cwd_allow_hidden)", sb->cwd_allow_hidden.loc.line,
		    "a Job Object cannot hide files: no dotfile is masked");
	else if (x->t == TARGET_LINUX)
		row(x, ENFORCED, "dotfiles (cwd_allow_hidden)", sb->cwd_allow_hidden.loc.line,
		    sb->scan_recursive.value
			? "a mount over each dotfile the scan finds at launch, at every depth"
			: "a mount over each top-level dotfile the scan finds at launch");
	else
		row(x, ENFORCED, "dotfiles (cwd_allow_hidden)", sb->cwd_allow_hidden.loc.line,
		    "SBPL deny with a regex over each root: existing or created later");
	if (n_roots || sb->protect_paths.n) {
		const char *how = by_target(
		    x->t, "read-only binds onto themselves, placeholders for missing ones, "
			  "ancestors pinned",
		    "SBPL deny file-write*, ancestors in the rename denies");

		row(x, x->t == TARGET_WINDOWS ? NOT_ENFORCED : ENFORCED,
		    "protected paths (docs/protect.md)",
		    sb->protect_paths.loc.line ? sb->protect_paths.loc.line : sb->write_paths.loc.line,
		    x->t == TARGET_WINDOWS
			? "a Job Object cannot keep a path read-only inside a writable directory"
			: how);
	}
	for (size_t i = 0; i < sb->unprotect_paths.n; i++) {
		char setting[300];

		snprintf(setting, sizeof(setting), "unprotect_paths %s", sb->unprotect_paths.v[i].s);
		row(x, ENFORCED, setting, sb->unprotect_paths.v[i].loc.line,
		    "writable like the rest of its root");
	}
	paths(x, &sb->deny_unix_socket_paths, "deny_unix_socket_paths", "/dev/null over the socket",
	      "SBPL deny network-outbound to the socket", "a Job Object cannot block sockets");
}

/* A tcp rule: the proxy checks the host and port of the CONNECT, nothing inside. */
static void
tcp_row(struct ex *x, const struct egress_rule *r, size_t i)
{
	char setting[400];

	snprintf(setting, sizeof(setting), "egress rule %zu (tcp %s%s:%u)", i + 1,
		 r->wildcard ? "*." : "", r->host, r->port);
	row(x, ENFORCED, setting, r->loc.line,
	    r->port == 22 ? "the proxy: host and port (a CONNECT, or a connection to the name), "
			    "then a plain tunnel, uninspected (no method, path or credential); "
			    "for git over SSH, git_ssh checks the repository and keeps the key "
			    "outside"
			  : "the proxy: host and port (a CONNECT, or a connection to the name), "
			    "then a plain tunnel, uninspected (no method, path or credential)");
}

/*
 * Clients that ignore the proxy variables: on Linux the sandbox's resolver
 * and listeners bring them to the proxy; sandbox-exec cannot give a
 * process a resolver of its own, so on macOS they are refused instead.
 */
static void
transparent_row(struct ex *x, const struct sandbox *sb)
{
	unsigned ports[TRANSPARENT_MAX_PORTS];
	char setting[TRANSPARENT_MAX_PORTS * 6 + 64], text[TRANSPARENT_MAX_PORTS * 6 + 1];
	int n = transparent_ports(sb->egress, sb->n_egress, ports, NULL);

	if (n <= 0)
		return;
	transparent_ports_text(ports, n, text, sizeof(text));
	snprintf(setting, sizeof(setting), "egress without client settings (%s)", text);
	if (x->t == TARGET_LINUX)
		row(x, ENFORCED, setting, sb->egress_loc.line,
		    "the sandbox's resolver gives each name an address of its own; a connection "
		    "to it on these ports reaches the proxy as NAME:PORT and is checked as a "
		    "CONNECT; no DNS query leaves the sandbox");
	else
		row(x, APPROXIMATED, setting, sb->egress_loc.line,
		    "sandbox-exec cannot give a process a resolver of its own: only clients that "
		    "use HTTPS_PROXY reach the proxy, the others are refused");
}

static void
network(struct ex *x, const struct sandbox *sb)
{
	const char *off = by_target(x->t, "a network namespace with no interface but loopback",
				    "SBPL (deny default) with no network allow");

	if (sb->n_egress) {
		row(x, ENFORCED, "egress_rules: default deny", sb->egress_loc.line,
		    by_target(x->t,
			      "a network namespace; the only way out is the relay to the egress proxy",
			      "network only to the relay's loopback port; the egress proxy"));
		transparent_row(x, sb);
		for (size_t i = 0; i < sb->n_egress; i++) {
			const struct egress_rule *r = &sb->egress[i];
			char setting[400];

			if (r->tcp) {
				tcp_row(x, r, i);
				continue;
			}
			snprintf(setting, sizeof(setting), "egress rule %zu (%s%s)", i + 1,
				 r->wildcard ? "*." : "", r->host);
			row(x, ENFORCED, setting, r->loc.line,
			    "the proxy: method, host, port and path (the query is not matched)");
		}
		row(x, ENFORCED, "private destinations", sb->egress_allow_private.loc.line,
		    sb->egress_allow_private.value
			? "allowed (egress_allow_private_destinations)"
			: "the proxy refuses loopback, private, link-local and metadata addresses");
	} else if (!sb->allow_network.value) {
		row(x, x->t == TARGET_WINDOWS ? NOT_ENFORCED : ENFORCED, "allow_network: false",
		    sb->allow_network.loc.line,
		    x->t == TARGET_WINDOWS ? "a Job Object has no network control" : off);
	} else {
		row(x, ENFORCED, "allow_network: true", sb->allow_network.loc.line,
		    "the host's network, unfiltered");
	}
	for (size_t i = 0; i < sb->n_creds; i++) {
		const struct credential *cr = &sb->creds[i];

		for (size_t k = 0; k < cr->n_targets; k++) {
			char setting[400];

			snprintf(setting, sizeof(setting), "credential %s -> %s:%u",
				 cred_type_name(cr->type), cr->targets[k].host, cr->targets[k].port);
			row(x, ENFORCED, setting, cr->targets[k].loc.line,
			    cr->type == CRED_AWS_SIGV4
				? "the proxy signs again with the real keys; the sandbox holds "
				  "placeholders"
				: "the proxy swaps the placeholder for the secret over TLS to this host "
				  "only");
		}
		if (cr->type == CRED_DATABRICKS_CLI)
			row(x, ENFORCED, "credential databricks_cli", cr->loc.line,
			    "the proxy swaps tokens for the profiles' hosts, resolved at launch");
	}
	for (size_t i = 0; i < sb->n_git_ssh; i++) {
		char setting[400];

		snprintf(setting, sizeof(setting), "git_ssh %s:%u/%s", sb->git_ssh[i].host.s,
			 sb->git_ssh[i].port, sb->git_ssh[i].repository.s);
		row(x, ENFORCED, setting, sb->git_ssh[i].loc.line,
		    "omnibox-run's broker: only git-upload-pack/receive-pack of this repository");
	}
}

static void
limits(struct ex *x, const struct sandbox *sb)
{
	const struct limits *l = &sb->limits;
	bool lin = x->t == TARGET_LINUX, win = x->t == TARGET_WINDOWS;

	if (l->memory.present)
		row(x, win ? ENFORCED : APPROXIMATED, "limits.memory", l->memory.loc.line,
		    win ? "the Job Object's memory limit for all its processes"
		    : lin ? "memory.max in a delegated cgroup; else RLIMIT_DATA: private "
			    "writable memory, not shared or file-backed"
			  : "RLIMIT_DATA, which macOS enforces loosely");
	if (l->processes.present)
		row(x, win ? ENFORCED : APPROXIMATED, "limits.processes", l->processes.loc.line,
		    win ? "the Job Object's active process limit"
		    : lin ? "pids.max in a delegated cgroup, else RLIMIT_NPROC: every process of "
			    "the user"
			  : "RLIMIT_NPROC: every process of the user");
	if (l->cpu_time.present)
		row(x, ENFORCED, "limits.cpu_time", l->cpu_time.loc.line,
		    win ? "the Job Object's user-mode CPU time" : "RLIMIT_CPU");
	if (l->cpu_rate.present)
		row(x, win ? ENFORCED : lin ? APPROXIMATED : NOT_ENFORCED, "limits.cpu_rate",
		    l->cpu_rate.loc.line,
		    win ? "the Job Object's hard CPU rate cap"
		    : lin ? "cpu.max in a delegated cgroup; without one, not enforced"
			  : "macOS has no CPU rate limit for a process tree");
	if (l->open_files.present)
		row(x, win ? NOT_ENFORCED : ENFORCED, "limits.open_files", l->open_files.loc.line,
		    win ? "a Job Object cannot limit open files or handles" : "RLIMIT_NOFILE");
}

static bool
has_form(const struct policy *p, enum target t, const char **why)
{
	const struct sandbox *sb = &p->os_env.sandbox;

	if (sb->type != SANDBOX_AUTO && sb->type != SANDBOX_NONE &&
	    !target_has_backend(t, sb->type)) {
		*why = "the sandbox type is pinned to another platform";
		return false;
	}
	if (t == TARGET_DARWIN && !sbpl_can_express(p)) {
		*why = "git_ssh and copy_on_write are Linux's only";
		return false;
	}
	if (t == TARGET_WINDOWS && !winjob_can_express(p)) {
		*why = "egress_rules, credential_proxy, git_ssh and copy_on_write need what a Job "
		       "Object cannot impose";
		return false;
	}
	if (t == TARGET_OCI || t == TARGET_KUBERNETES) {
		struct loc loc;

		*why = container_refuse(p, t == TARGET_OCI ? CONTAINER_OCI : CONTAINER_KUBERNETES,
					&loc);
		return !*why;
	}
	return true;
}

/* A container form's row, as container_settings() gives it. */
static void
container_row(void *arg, const char *setting, uint32_t line, struct llb_verdict v)
{
	struct ex *x = arg;

	row(x, (enum status)v.status, setting, line, v.how);
}

/* The OCI bundle's or the pod's table: compiler/decide/container.h decides it. */
static void
explain_container(const struct policy *p, enum target t, struct textbuf *out, bool *all_enforced)
{
	struct ex x = {out, t, {0, 0, 0}, NULL, 0, {0, 0, 0}};

	container_settings(p, t == TARGET_OCI ? CONTAINER_OCI : CONTAINER_KUBERNETES,
			   container_row, &x);
	tb_printf(out, "  summary %s: %zu enforced, %zu approximated, %zu not enforced\n",
		  target_name(t), x.n[ENFORCED], x.n[APPROXIMATED], x.n[NOT_ENFORCED]);
	*all_enforced = x.n[NOT_ENFORCED] == 0;
}

int
explain_target(const struct policy *p, enum target t, struct textbuf *out, bool *all_enforced)
{
	const struct sandbox *sb = &p->os_env.sandbox;
	const struct os_env *env = &p->os_env;
	struct ex x = {out, t, {0, 0, 0}, NULL, 0, {0, 0, 0}};
	struct ll_rows ll = {0};
	size_t ll_inexact = 0;
	const char *why = NULL;
	static const char *const backend[] = {"bubblewrap, seccomp and Landlock",
					      "a Seatbelt profile (sandbox-exec)",
					      "a Job Object"};

	tb_printf(out, "%s:\n", target_name(t));
	if (!has_form(p, t, &why)) {
		tb_printf(out, "  no %s form: %s; omnibox-run refuses to run it there\n",
			  target_name(t), why);
		tb_printf(out, "  summary %s: not available\n", target_name(t));
		*all_enforced = false;
		return 0;
	}
	if (t == TARGET_OCI || t == TARGET_KUBERNETES) {
		explain_container(p, t, out, all_enforced);
		return 0;
	}
	if (t == TARGET_LINUX) {
		/* The linux_landlock column beside bwrap's; settings only, as
		 * `auto` judges it (the backend's own limits are its row). */
		ll_inexact = llbackend_settings(p, true, ll_ignore, NULL);
		llbackend_settings(p, false, ll_collect, &ll);
		x.ll = &ll;
		tb_printf(out, "  %-12s %s\n", "bwrap", "landlock");
	}
	if (sb->type == SANDBOX_NONE) {
		row(&x, NOT_ENFORCED, "sandbox type none", sb->type_loc.line,
		    "the command runs unconfined");
	} else {
		row(&x, ENFORCED, "sandbox", sb->type_loc.line, backend[t]);
		files(&x, p);
		network(&x, sb);
		if (sb->env_passthrough.n || t != TARGET_WINDOWS)
			row(&x, t == TARGET_WINDOWS ? NOT_ENFORCED : ENFORCED,
			    "environment (env_passthrough)", sb->env_passthrough.loc.line,
			    t == TARGET_WINDOWS ? "the command inherits the caller's environment"
						: "rebuilt from an allow-list, never inherited whole");
		limits(&x, sb);
		if (env->start_in_scratch.value)
			row(&x, ENFORCED, "start_in_scratch", env->start_in_scratch.loc.line,
			    "the command starts in the scratch dir");
		if (env->fork.value)
			row(&x, NOT_ENFORCED, "fork", env->fork.loc.line,
			    "not built: omnibox-run refuses to launch");
	}
	for (size_t i = 0; i < p->n_terminals && !p->terminal; i++) {
		char setting[300];

		snprintf(setting, sizeof(setting), "terminal %s", p->terminals[i].name);
		row(&x, ENFORCED, setting, p->terminals[i].loc.line,
		    p->terminals[i].inherit
			? "the agent's os_env"
			: "its own os_env: --explain --terminal=NAME shows it");
	}
	tb_printf(out, "  summary %s: %zu enforced, %zu approximated, %zu not enforced",
		  target_name(t), x.n[ENFORCED], x.n[APPROXIMATED], x.n[NOT_ENFORCED]);
	if (t == TARGET_LINUX)
		tb_printf(out, "; linux_landlock: %zu enforced, %zu approximated, %zu not enforced",
			  x.ll_n[LLB_ENFORCED], x.ll_n[LLB_APPROXIMATED], x.ll_n[LLB_NOT_ENFORCED]);
	tb_putc(out, '\n');
	/* A policy pinned to linux_landlock is judged by that column alone:
	 * every setting enforced exactly. */
	if (t == TARGET_LINUX && sb->type == SANDBOX_LINUX_LANDLOCK)
		*all_enforced = ll_inexact == 0;
	else
		*all_enforced = x.n[NOT_ENFORCED] == 0;
	ll_free(&ll);
	return 0;
}

struct ext_rows {
	struct textbuf *out;
	size_t n;
};

static void
extension_row(void *arg, const struct omnigent_ext *e)
{
	struct ext_rows *r = arg;
	char at[32] = "";

	if (e->loc.line)
		snprintf(at, sizeof(at), "%u", e->loc.line);
	tb_printf(r->out, "  %5s  %-44s Omnigent %s\n", at, e->setting, e->omnigent);
	r->n++;
}

void
explain_extensions(const struct policy *p, struct textbuf *out)
{
	struct ext_rows r = {out, 0};

	tb_printf(out, "# omnibox extensions (Omnigent rejects these or reads them otherwise)\n");
	omnigent_extensions(p, extension_row, &r);
	if (!r.n)
		tb_printf(out, "  none: Omnigent reads this policy the same way\n");
}
