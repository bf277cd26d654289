/*
 * emit_egress_table.c - the egress proxy's compiled table (--emit=egress-table).
 *
 * The format is described in egress_table.h.  Everything written comes
 * from the policy: the rules, the private-destination switch, and each
 * credential's references to where its secret lives.  The IR holds no
 * secret, so neither can the table.
 */
#include "egress_table.h"

#include <string.h>

static const char *const source_kinds[] = {"?", "env", "file", "command", "unix_socket"};

/* S with '\\' and '"' escaped and control bytes as \xHH: no line break can hide in it. */
static void
put_escaped(struct textbuf *out, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '\\' || c == '"')
			tb_printf(out, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			tb_printf(out, "\\x%02x", c);
		else
			tb_putc(out, (char)c);
	}
}

/* S as a quoted table string. */
static void
put_quoted(struct textbuf *out, const char *s)
{
	tb_putc(out, '"');
	put_escaped(out, s);
	tb_putc(out, '"');
}

/* "  KEY "VALUE"\n", when VALUE is set. */
static void
put_field(struct textbuf *out, const char *key, const char *value)
{
	if (!value)
		return;
	tb_printf(out, "  %s ", key);
	put_quoted(out, value);
	tb_putc(out, '\n');
}

/* "  KEY KIND "VALUE"\n" for an aws_sigv4 key source, when it has one. */
static void
put_source(struct textbuf *out, const char *key, enum cred_source_kind kind, const char *value)
{
	if (kind == CRED_SOURCE_NONE || !value)
		return;
	tb_printf(out, "  %s %s ", key, source_kinds[kind]);
	put_quoted(out, value);
	tb_putc(out, '\n');
}

/* Which AWS_* variables the sandbox gets placeholders in, as a comment. */
static void
aws_comment(const struct sandbox *sb, struct textbuf *out)
{
	bool token = false;

	for (size_t i = 0; i < sb->n_creds; i++)
		if (sb->creds[i].type == CRED_AWS_SIGV4 &&
		    (sb->creds[i].aws_token.kind != CRED_SOURCE_NONE || sb->creds[i].aws_profile.s))
			token = true;
	tb_printf(
	    out,
	    "  # placeholders in AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY%s (one set for every "
	    "aws_sigv4 entry)\n",
	    token ? ", AWS_SESSION_TOKEN (when a token is read)" : "");
}

/* One credential_proxy entry, from "credential" to "end". */
static void
put_credential(const struct policy *p, size_t i, struct textbuf *out)
{
	const struct sandbox *sb = &p->os_env.sandbox;
	const struct credential *cr = &sb->creds[i];

	tb_puts(out, "# ");
	put_escaped(out, p->source);
	tb_printf(out, ":%u: credential_proxy[%zu]\n", cr->loc.line, i);
	tb_printf(out, "credential %u %s\n", cr->loc.line, cred_type_name(cr->type));
	for (size_t k = 0; k < cr->n_targets; k++) {
		const struct cred_target *tg = &cr->targets[k];

		tb_printf(out, "  target %u %s %u %s\n", tg->loc.line, tg->host, tg->port,
			  cred_scheme_name(tg->scheme));
	}
	if (cr->type != CRED_AWS_SIGV4 && cr->type != CRED_DATABRICKS_CLI)
		put_source(out, "source", cr->source_kind, cr->source.s);
	if (cr->type != CRED_AWS_SIGV4)
		for (size_t k = 0; k < cr->env.n; k++)
			put_field(out, "placeholder", cr->env.v[k].s);
	put_field(out, "username", cr->username.s);
	put_field(out, "header", cr->header.s);
	if (cr->refresh_interval.present)
		tb_printf(out, "  refresh %llu\n", (unsigned long long)cr->refresh_interval.value);
	if (cr->type == CRED_AWS_SIGV4) {
		put_field(out, "region", cr->region.s);
		put_field(out, "service", cr->service.s);
		put_field(out, "aws-profile", cr->aws_profile.s);
		put_source(out, "aws-key-id", cr->aws_key_id.kind, cr->aws_key_id.value.s);
		put_source(out, "aws-secret", cr->aws_secret.kind, cr->aws_secret.value.s);
		put_source(out, "aws-token", cr->aws_token.kind, cr->aws_token.value.s);
		aws_comment(sb, out);
	}
	for (size_t k = 0; k < cr->profiles.n; k++)
		put_field(out, "profile", cr->profiles.v[k].s);
	put_field(out, "default-profile", cr->default_profile.s);
	tb_puts(out, "end\n");
}

int
emit_egress_table(const struct policy *p, enum target t, struct diag *d, struct textbuf *out)
{
	const struct sandbox *sb = &p->os_env.sandbox;
	char rule[8192];

	(void)t;
	tb_printf(out, "%s %d\n", EGRESS_TABLE_MAGIC, EGRESS_TABLE_VERSION);
	tb_puts(out, "# the egress proxy's table (omnibox-compile --emit=egress-table), read by "
		     "omnibox-proxy --table:\n# the rules, and where each credential's secret is "
		     "read; no secret is in it\n");
	tb_puts(out, "policy ");
	put_quoted(out, p->source);
	tb_putc(out, '\n');
	if (p->terminal) {
		tb_puts(out, "terminal ");
		put_quoted(out, p->terminal->name);
		tb_putc(out, '\n');
	}
	tb_printf(out, "private-destinations %s\n",
		  sb->egress_allow_private.value ? "allowed" : "refused");
	if (sb->env_passthrough.n)
		tb_puts(out, "# env_passthrough: a command source runs with these variables of "
			     "the proxy's environment\n");
	for (size_t i = 0; i < sb->env_passthrough.n; i++) {
		tb_puts(out, "passthrough ");
		put_quoted(out, sb->env_passthrough.v[i].s);
		tb_putc(out, '\n');
	}
	if (!sb->n_egress)
		tb_puts(out, "# no egress rule: every request is refused\n");
	else
		tb_puts(out, "# rule LINE \"RULE\": LINE is the policy's line that wrote it\n");
	for (size_t i = 0; i < sb->n_egress; i++) {
		const struct egress_rule *r = &sb->egress[i];

		egress_rule_format(r, false, rule, sizeof(rule));
		/* A rule cut short could allow more than the policy's: refuse. */
		if (strlen(rule) >= sizeof(rule) - 1) {
			diag_error(d, r->loc, "this egress rule is too long for the egress table");
			return -1;
		}
		tb_printf(out, "rule %u ", r->loc.line);
		put_quoted(out, rule);
		tb_putc(out, '\n');
	}
	for (size_t i = 0; i < sb->n_creds; i++)
		put_credential(p, i, out);
	return 0;
}
