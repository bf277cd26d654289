/*
 * emit_env.c - the environment allow-list (--emit=env).
 */
#include "emit.h"
#include "envlist.h"

#include <stdio.h>
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

void
env_policy_vars(const struct sandbox *sb, const char *scratch,
		void (*fn)(void *arg, const char *name, const char *value, const char *why,
			   unsigned line),
		void *arg)
{
	char sock[4096];

	if (sb->n_git_ssh) {
		unsigned line = sb->git_ssh_loc.line;

		snprintf(sock, sizeof(sock), "%s/%s", scratch, ENV_GIT_SSH_SOCKET);
		fn(arg, "GIT_SSH_COMMAND", ENV_GIT_SSH_COMMAND, "git_ssh: git's ssh is the broker's helper", line);
		fn(arg, "GIT_SSH_VARIANT", "ssh", "git_ssh: OpenSSH-style options", line);
		fn(arg, "OMNIBOX_GIT_SSH_SOCKET", sock, "git_ssh: the broker", line);
	}
	for (size_t i = 0; i < sb->n_creds; i++) {
		const struct credential *cr = &sb->creds[i];

		if (cr->type != CRED_AWS_SIGV4)
			continue;
		/* The first aws_sigv4 entry names the region the SDKs default to. */
		fn(arg, "AWS_REGION", cr->region.s, "aws_sigv4", cr->loc.line);
		fn(arg, "AWS_DEFAULT_REGION", cr->region.s, "aws_sigv4", cr->loc.line);
		fn(arg, "AWS_EC2_METADATA_DISABLED", "true",
		   "aws_sigv4: no instance credentials", cr->loc.line);
		/* botocore and the AWS CLI read their own bundle, not SSL_CERT_FILE. */
		snprintf(sock, sizeof(sock), "%s/%s", scratch, ENV_CA_BUNDLE);
		fn(arg, "AWS_CA_BUNDLE", sock, "aws_sigv4: the session CA, for the AWS SDKs",
		   cr->loc.line);
		break;
	}
}

/*
 * Every aws_sigv4 entry signs with the same placeholder keys (an SDK reads
 * one AWS_ACCESS_KEY_ID); the proxy picks the real keys by host.
 */
static void
emit_aws_placeholders(const struct sandbox *sb, struct textbuf *out)
{
	static const char *const aws[] = {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
					  "AWS_SESSION_TOKEN"};
	unsigned line = 0;
	bool token = false, maybe = false;

	for (size_t i = 0; i < sb->n_creds; i++) {
		const struct credential *cr = &sb->creds[i];

		if (cr->type != CRED_AWS_SIGV4)
			continue;
		line = line ? line : cr->loc.line;
		token |= cr->aws_token.kind != CRED_SOURCE_NONE;
		maybe |= cr->aws_profile.s != NULL;
	}
	if (!line)
		return;
	for (size_t k = 0; k < 3; k++)
		if (k < 2 || token || maybe)
			tb_printf(out,
				  "%s=oa_cred_{RANDOM}  # credential_proxy placeholder, every "
				  "aws_sigv4 entry (line %u)%s\n",
				  aws[k], line,
				  k == 2 && !token ? ", when the profile has a session token" : "");
}

static void
print_var(void *arg, const char *name, const char *value, const char *why, unsigned line)
{
	tb_printf(arg, "%s=%s  # %s (line %u)\n", name, value, why, line);
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
	emit_aws_placeholders(sb, out);
	env_policy_vars(sb, "{SCRATCH}", print_var, out);
	if (sb->n_git_ssh)
		tb_printf(out, "%s={RANDOM}  # git_ssh (line %u): the broker's per-launch token\n",
			  ENV_GIT_SSH_TOKEN, sb->git_ssh_loc.line);
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
