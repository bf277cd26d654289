/*
 * omnigent.c - the omnibox extensions a policy uses (omnigent.h).
 *
 * Omnigent's reading, for each: its sandbox spec has type (linux_bwrap,
 * darwin_seatbelt, none), read_paths, write_paths and write_files as
 * strings, allow_network, cwd_allow_hidden as exact names, the three
 * cwd_hidden_scan_* keys, mask_paths, env_passthrough, egress_rules,
 * egress_allow_private_destinations and credential_proxy; a credential has
 * type (https_bearer, https_basic, git_https, gh_basic, databricks_cli),
 * source {env | file | command}, target(s), env as one name, username,
 * profiles and default, and rejects any other key.
 */
#include "omnigent.h"

#include <string.h>

struct walk {
	omnigent_ext_fn fn;
	void *arg;
};

static void
say(struct walk *w, const char *setting, const char *omnigent, struct loc loc)
{
	struct omnigent_ext e = {setting, omnigent, loc};

	w->fn(w->arg, &e);
}

static void
credentials(struct walk *w, const struct sandbox *sb)
{
	for (size_t i = 0; i < sb->n_creds; i++) {
		const struct credential *c = &sb->creds[i];

		if (c->type == CRED_AWS_SIGV4)
			say(w, "credential_proxy type aws_sigv4", "rejects the type", c->loc);
		if (c->source_kind == CRED_SOURCE_UNIX_SOCKET)
			say(w, "credential_proxy source unix_socket", "rejects the key",
			    c->source.loc);
		if (c->refresh_interval.present)
			say(w, "credential_proxy refresh_interval_seconds", "rejects the key",
			    c->refresh_interval.loc);
		if (c->header.s)
			say(w, "credential_proxy header", "rejects the key", c->header.loc);
		if (c->env_list)
			say(w, "credential_proxy env as a list", "takes one name", c->env.loc);
	}
}

static void
sandbox(struct walk *w, const struct sandbox *sb)
{
	if (sb->type_loc.line &&
	    (sb->type == SANDBOX_AUTO || sb->type == SANDBOX_WINDOWS_JOBOBJECT ||
	     sb->type == SANDBOX_LINUX_LANDLOCK))
		say(w,
		    sb->type == SANDBOX_AUTO		 ? "sandbox type auto"
		    : sb->type == SANDBOX_LINUX_LANDLOCK ? "sandbox type linux_landlock"
							 : "sandbox type windows_jobobject",
		    "rejects the type", sb->type_loc);
	for (size_t i = 0; i < sb->cow_paths.n; i++)
		say(w, "write_paths {path, copy_on_write}", "takes paths as strings only",
		    sb->cow_paths.v[i].loc);
	for (size_t i = 0; i < sb->cwd_allow_hidden.n; i++)
		if (!strcmp(sb->cwd_allow_hidden.v[i].s, "*"))
			say(w, "cwd_allow_hidden \"*\"",
			    "reads it as a file named '*': every other dotfile stays hidden",
			    sb->cwd_allow_hidden.v[i].loc);
	if (sb->deny_unix_socket_paths.present)
		say(w, "deny_unix_socket_paths", "rejects the key", sb->deny_unix_socket_paths.loc);
	if (sb->protect_paths.present)
		say(w, "protect_paths", "rejects the key", sb->protect_paths.loc);
	if (sb->unprotect_paths.present)
		say(w, "unprotect_paths", "rejects the key", sb->unprotect_paths.loc);
	if (sb->limits.present)
		say(w, "limits", "rejects the key", sb->limits.loc);
	if (sb->n_git_ssh || sb->git_ssh_loc.line)
		say(w, "git_ssh", "rejects the key", sb->git_ssh_loc);
	credentials(w, sb);
}

void
omnigent_extensions(const struct policy *p, omnigent_ext_fn fn, void *arg)
{
	struct walk w = {fn, arg};

	if (p->has_os_env || p->terminal)
		sandbox(&w, &p->os_env.sandbox);
	for (size_t i = 0; i < p->n_terminals && !p->terminal; i++)
		if (!p->terminals[i].inherit && p->terminals[i].os_env)
			sandbox(&w, &p->terminals[i].os_env->sandbox);
}
