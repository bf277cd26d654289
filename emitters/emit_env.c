/*
 * emit_env.c - the command's environment (--emit=env), printed from the
 * rules the launchers apply (compiler/decide/env.h), with symbolic values.
 */
#include "emit.h"

#include "../compiler/decide/env.h"

#include <stdio.h>
#include <string.h>

/*
 * The per-launch values omnibox-run adds, symbolically: every credential
 * placeholder and the git_ssh broker's token.  Every aws_sigv4 entry signs
 * with the same placeholder keys (an SDK reads one AWS_ACCESS_KEY_ID); the
 * proxy picks the real keys by host.
 */
static struct env_value *
symbolic_extras(struct arena *a, const struct sandbox *sb, size_t *n)
{
	static const char *const aws[] = {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
					  "AWS_SESSION_TOKEN"};
	struct env_value *v = NULL;
	size_t cap = 0;
	unsigned line = 0;
	bool token = false, maybe = false;

	*n = 0;
	for (size_t i = 0; i < sb->n_creds; i++) {
		const struct credential *cr = &sb->creds[i];

		for (size_t k = 0; k < cr->env.n; k++)
			*ARENA_PUSH(a, v, *n, cap) = (struct env_value){
			    cr->env.v[k].s, "oa_cred_{RANDOM}",
			    arena_printf(a, "credential_proxy placeholder (line %u)", cr->loc.line),
			    cr->loc.line};
		if (cr->type != CRED_AWS_SIGV4)
			continue;
		line = line ? line : cr->loc.line;
		token |= cr->aws_token.kind != CRED_SOURCE_NONE;
		maybe |= cr->aws_profile.s != NULL;
	}
	for (size_t k = 0; line && k < 3; k++)
		if (k < 2 || token || maybe)
			*ARENA_PUSH(a, v, *n, cap) = (struct env_value){
			    aws[k], "oa_cred_{RANDOM}",
			    arena_printf(a,
					 "credential_proxy placeholder, every aws_sigv4 entry "
					 "(line %u)%s",
					 line,
					 k == 2 && !token ? ", when the profile has a session token"
							  : ""),
			    line};
	if (sb->n_git_ssh)
		*ARENA_PUSH(a, v, *n, cap) = (struct env_value){
		    ENV_GIT_SSH_TOKEN, "{RANDOM}",
		    arena_printf(a, "git_ssh (line %u): the broker's per-launch token",
				 sb->git_ssh_loc.line),
		    sb->git_ssh_loc.line};
	return v;
}

static void
print_rule(struct textbuf *out, const struct env_rule *r)
{
	if (r->section)
		tb_printf(out, "# %s\n", r->section);
	switch (r->op) {
	case ENV_PASS:
		tb_puts(out, r->name);
		break;
	case ENV_PASS_PREFIX:
		tb_printf(out, "%s*", r->name);
		break;
	case ENV_SET:
		tb_printf(out, "%s=%s", r->name, r->value);
		break;
	case ENV_SET_SCRATCH:
		tb_printf(out, "%s={SCRATCH}%s", r->name, r->value);
		break;
	case ENV_SET_TEMPLATE:
		tb_printf(out, "%s=%s", r->name, r->value);
		break;
	case ENV_UNSET:
		tb_printf(out, "-%s", r->name);
		break;
	}
	if (r->why)
		tb_printf(out, "  # %s", r->why);
	tb_putc(out, '\n');
}

int
emit_env(const struct policy *p, enum target t, struct diag *d, struct textbuf *out)
{
	const struct sandbox *sb = &p->os_env.sandbox;
	const struct terminal *term = p->terminal;
	struct arena *a = arena_new();
	struct env_launch l = {.windows = t == TARGET_WINDOWS};
	struct env_rules rules;

	(void)d;
	l.linux = t == TARGET_LINUX;
	if (!l.windows) {
		l.pwd = p->os_env.start_in_scratch.value && sb->type != SANDBOX_NONE ? "{SCRATCH}"
										     : "{CWD}";
		l.proxy_url = "http://127.0.0.1:{PORT}";
		l.extra = symbolic_extras(a, sb, &l.n_extra);
	}
	env_decide(a, p, &l, &rules);
	tb_printf(out, "# environment of the sandboxed command, %s%s%s\n", p->source,
		  term ? ", terminal " : "", term ? term->name : "");
	tb_printf(out, "# rebuilt from this list; nothing else is inherited%s\n",
		  l.windows ? "; names compare without regard to case" : "");
	for (size_t i = 0; i < rules.n; i++)
		print_rule(out, &rules.v[i]);
	if (!l.windows) {
		tb_puts(out, "# never passed unless named in env_passthrough:");
		for (size_t i = 0; env_dangerous_names[i]; i++)
			tb_printf(out, " %s", env_dangerous_names[i]);
		tb_putc(out, '\n');
	}
	arena_free(a);
	return 0;
}
