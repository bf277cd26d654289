/*
 * emit_env.c - the environment allow-list (--emit=env).
 */
#include "emit.h"
#include "envlist.h"

#include <string.h>

const char *const env_base_names[] = {"PATH", "HOME", "USER", "LOGNAME",  "SHELL",
				      "TERM", "TZ",   "LANG", "LANGUAGE", NULL};
const char *const env_scratch_names[] = {"TMPDIR", "TMP", "TEMP", "TEMPDIR", NULL};
const char *const env_proxy_names[] = {"HTTP_PROXY",  "HTTPS_PROXY", "http_proxy",
				       "https_proxy", "ALL_PROXY",   NULL};
const char *const env_ca_names[] = {"SSL_CERT_FILE",
				    "REQUESTS_CA_BUNDLE",
				    "NODE_EXTRA_CA_CERTS",
				    "CURL_CA_BUNDLE",
				    "PIP_CERT",
				    "GIT_SSL_CAINFO",
				    NULL};
const char *const env_dangerous_names[] = {"LD_PRELOAD",      "LD_LIBRARY_PATH",
					   "BASH_ENV",	      "ENV",
					   "PROMPT_COMMAND",  "PYTHONSTARTUP",
					   "SSH_AUTH_SOCK",   "DBUS_SESSION_BUS_ADDRESS",
					   "XDG_RUNTIME_DIR", NULL};

static bool
name_eq(const char *name, const char *want)
{
	size_t n = strlen(want);

	return !strncmp(name, want, n) && (name[n] == '\0' || name[n] == '=');
}

bool
env_name_passes(const struct sandbox *sb, const char *name)
{
	for (size_t i = 0; env_base_names[i]; i++)
		if (name_eq(name, env_base_names[i]))
			return true;
	if (!strncmp(name, "LC_", 3))
		return true;
	for (size_t i = 0; i < sb->env_passthrough.n; i++)
		if (name_eq(name, sb->env_passthrough.v[i].s))
			return true;
	return false;
}

int
emit_env(const struct policy *p, enum target t, struct diag *d, struct textbuf *out)
{
	const struct sandbox *sb = &p->os_env.sandbox;
	const struct terminal *term = p->terminal;

	(void)t;
	(void)d;
	tb_printf(out, "# environment of the sandboxed command, %s%s%s\n", p->source,
		  term ? ", terminal " : "", term ? term->name : "");
	tb_puts(out, "# rebuilt from this list; nothing else is inherited\n");
	tb_puts(out, "# from the launching environment, when set:\n");
	for (size_t i = 0; env_base_names[i]; i++)
		tb_printf(out, "%s\n", env_base_names[i]);
	tb_puts(out, "LC_*\n");
	for (size_t i = 0; i < sb->env_passthrough.n; i++)
		tb_printf(out, "%s  # env_passthrough (line %u)\n", sb->env_passthrough.v[i].s,
			  sb->env_passthrough.v[i].loc.line);
	tb_puts(out, "# set by omnibox-run:\n");
	for (size_t i = 0; env_scratch_names[i]; i++)
		tb_printf(out, "%s={SCRATCH}\n", env_scratch_names[i]);
	tb_printf(out, "PWD=%s\n", p->os_env.start_in_scratch.value ? "{SCRATCH}" : "{CWD}");
	if (sb->n_egress) {
		tb_printf(out, "# egress_rules (line %u): the relay inside the sandbox\n",
			  sb->egress_loc.line);
		for (size_t i = 0; env_proxy_names[i]; i++)
			tb_printf(out, "%s=http://127.0.0.1:{PORT}\n", env_proxy_names[i]);
		tb_puts(out,
			"NO_PROXY=localhost,127.0.0.1,::1\nno_proxy=localhost,127.0.0.1,::1\n");
		for (size_t i = 0; env_ca_names[i]; i++)
			tb_printf(out, "%s={SCRATCH}/%s\n", env_ca_names[i], ENV_CA_BUNDLE);
	}
	for (size_t i = 0; i < sb->n_creds; i++) {
		const struct credential *cr = &sb->creds[i];

		for (size_t k = 0; k < cr->env.n; k++)
			tb_printf(out,
				  "%s=oa_cred_{RANDOM}  # credential_proxy placeholder (line %u)\n",
				  cr->env.v[k].s, cr->loc.line);
	}
	if (term && (term->n_env || term->env_unset.n)) {
		tb_printf(out, "# terminal %s (line %u), applied last:\n", term->name,
			  term->loc.line);
		for (size_t i = 0; i < term->n_env; i++)
			tb_printf(out, "%s=%s\n", term->env[i].key, term->env[i].value);
		for (size_t i = 0; i < term->env_unset.n; i++)
			tb_printf(out, "-%s  # env_unset\n", term->env_unset.v[i].s);
	}
	tb_puts(out, "# never passed unless named in env_passthrough:");
	for (size_t i = 0; env_dangerous_names[i]; i++)
		tb_printf(out, " %s", env_dangerous_names[i]);
	tb_putc(out, '\n');
	return 0;
}
