/*
 * emit_egress.c - the normalised egress rule table (--emit=egress).
 *
 * What the proxy will enforce, one rule per line in the order it checks
 * them, then the credential bindings.  Column-aligned for review.
 */
#include "emit.h"

#include <string.h>

static void
methods_text(unsigned methods, char *buf, size_t cap)
{
	size_t n = 0;

	buf[0] = '\0';
	if (methods == EGRESS_ANY) {
		snprintf(buf, cap, "*");
		return;
	}
	for (unsigned bit = 1; bit & EGRESS_ANY; bit <<= 1)
		if (methods & bit)
			n += (size_t)snprintf(buf + n, cap - n, "%s%s", n ? "," : "",
					      egress_method_name(bit));
}

static bool
has_tcp(const struct sandbox *sb)
{
	for (size_t i = 0; i < sb->n_egress; i++)
		if (sb->egress[i].tcp)
			return true;
	return false;
}

static int
emit_http(const struct policy *p, enum target t, struct diag *d, struct textbuf *out)
{
	const struct sandbox *sb = &p->os_env.sandbox;
	char methods[96];
	int wm = 7, wh = 4;

	(void)t;
	(void)d;
	tb_printf(out, "# egress rules of %s%s%s\n", p->source, p->terminal ? ", terminal " : "",
		  p->terminal ? p->terminal->name : "");
	if (!sb->n_egress) {
		tb_printf(out, "# none: no HTTP filtering; the network is %s (allow_network)\n",
			  sb->allow_network.value ? "on" : "off");
		return 0;
	}
	tb_puts(out, "# default deny: a request passes when any rule matches; the first match "
		     "is logged\n");
	tb_printf(out, "# private and special-purpose destinations: %s\n",
		  sb->egress_allow_private.value ? "allowed (egress_allow_private_destinations)"
						 : "refused");
	for (size_t i = 0; i < sb->n_egress; i++) {
		const struct egress_rule *r = &sb->egress[i];
		int hl = (int)strlen(r->host) + (r->wildcard ? 2 : 0) + (r->port ? 6 : 0);

		methods_text(r->methods, methods, sizeof(methods));
		if ((int)strlen(methods) > wm)
			wm = (int)strlen(methods);
		if (hl > wh)
			wh = hl;
	}
	tb_puts(out, "# a host without a port: 443 through a tunnel (HTTPS), 80 for plain HTTP\n");
	if (has_tcp(sb))
		tb_puts(out, "# tcp: a plain tunnel to exactly that host and port, not inspected; "
			     "never a credential\n");
	tb_printf(out, "#line  %-*s  %-*s  path (the query is not matched)\n", wm, "methods", wh,
		  "host");
	for (size_t i = 0; i < sb->n_egress; i++) {
		const struct egress_rule *r = &sb->egress[i];
		char host[300];

		methods_text(r->methods, methods, sizeof(methods));
		if (r->tcp)
			snprintf(methods, sizeof(methods), "tcp");
		if (r->port)
			snprintf(host, sizeof(host), "%s%s:%u", r->wildcard ? "*." : "", r->host,
				 r->port);
		else
			snprintf(host, sizeof(host), "%s%s", r->wildcard ? "*." : "", r->host);
		tb_printf(out, "%5u  %-*s  %-*s  %s\n", r->loc.line, wm, methods, wh, host,
			  r->tcp ? "(a TCP stream through CONNECT, not inspected)" : r->path);
	}
	if (!sb->n_creds)
		return 0;
	tb_puts(out, "# credentials: swapped in by the proxy over TLS to exactly these hosts\n");
	for (size_t i = 0; i < sb->n_creds; i++) {
		const struct credential *cr = &sb->creds[i];

		if (cr->type == CRED_DATABRICKS_CLI) {
			tb_printf(out, "%5u  credential %s profiles", cr->loc.line,
				  cred_type_name(cr->type));
			for (size_t k = 0; k < cr->profiles.n; k++)
				tb_printf(out, " %s", cr->profiles.v[k].s);
			tb_puts(out, " (hosts resolved at launch)\n");
			continue;
		}
		for (size_t k = 0; k < cr->n_targets; k++) {
			const struct cred_target *tg = &cr->targets[k];
			static const char *const src[] = {"?", "env", "file", "command",
							  "unix_socket"};
			char hp[300];

			snprintf(hp, sizeof(hp), "%s:%u", tg->host, tg->port);
			if (cr->type == CRED_AWS_SIGV4 && cr->aws_profile.s)
				tb_printf(out,
					  "%5u  credential %-*s  aws_sigv4 re-signed for %s/%s, keys of "
					  "profile %s",
					  tg->loc.line, wh, hp, cr->region.s, cr->service.s,
					  cr->aws_profile.s);
			else if (cr->type == CRED_AWS_SIGV4)
				tb_printf(out,
					  "%5u  credential %-*s  aws_sigv4 re-signed for %s/%s, keys "
					  "from %s, %s%s%s",
					  tg->loc.line, wh, hp, cr->region.s, cr->service.s,
					  src[cr->aws_key_id.kind], src[cr->aws_secret.kind],
					  cr->aws_token.kind ? ", token from " : "",
					  cr->aws_token.kind ? src[cr->aws_token.kind] : "");
			else
				tb_printf(out, "%5u  credential %-*s  %s %s%s%s from %s", tg->loc.line,
					  wh, hp, cred_type_name(cr->type),
					  cred_scheme_name(tg->scheme), cr->header.s ? " " : "",
					  cr->header.s ? cr->header.s : "", src[cr->source_kind]);
			if (cr->refresh_interval.present)
				tb_printf(out, ", read again every %llu s",
					  (unsigned long long)cr->refresh_interval.value);
			/* gh_basic hands its placeholder to the API host's client only. */
			if (cr->env.n &&
			    (cr->type != CRED_GH_BASIC || tg->scheme == CRED_SCHEME_TOKEN)) {
				tb_puts(out, ", placeholder in");
				for (size_t e = 0; e < cr->env.n; e++)
					tb_printf(out, " %s", cr->env.v[e].s);
			}
			tb_putc(out, '\n');
		}
	}
	return 0;
}

/* git_ssh: the repositories git reaches through the broker, whatever the HTTP rules say. */
static void
emit_git_ssh(const struct sandbox *sb, struct textbuf *out)
{
	if (!sb->n_git_ssh)
		return;
	tb_printf(out,
		  "# git_ssh (line %u): git over SSH through omnibox-run's broker, only these "
		  "repositories;\n# the sandbox holds no key and has no route to them itself\n",
		  sb->git_ssh_loc.line);
	for (size_t i = 0; i < sb->n_git_ssh; i++) {
		const struct git_ssh *g = &sb->git_ssh[i];

		tb_printf(out, "%5u  git %s%s%s  %s@%s:%u/%s", g->loc.line,
			  g->operations & GIT_OP_FETCH ? "fetch" : "",
			  g->operations == (GIT_OP_FETCH | GIT_OP_PUSH) ? "," : "",
			  g->operations & GIT_OP_PUSH ? "push" : "", g->username.s, g->host.s,
			  g->port, g->repository.s);
		if (g->allowed_cidrs.n) {
			tb_puts(out, " to");
			for (size_t k = 0; k < g->allowed_cidrs.n; k++)
				tb_printf(out, " %s", g->allowed_cidrs.v[k].s);
		} else {
			tb_printf(out, " to public addresses%s",
				  g->allow_loopback.value ? " and loopback" : "");
		}
		tb_printf(out, ", host key from %s", g->known_hosts_file.rel
							  ? g->known_hosts_file.symbolic
							  : "{HOME}/.ssh/known_hosts");
		if (g->identity_file.rel)
			tb_printf(out, ", key %s", g->identity_file.symbolic);
		tb_putc(out, '\n');
	}
}

int
emit_egress(const struct policy *p, enum target t, struct diag *d, struct textbuf *out)
{
	int rc = emit_http(p, t, d, out);

	emit_git_ssh(&p->os_env.sandbox, out);
	return rc;
}
