/*
 * validate_egress.c - the schema of egress_rules, credentials and git_ssh
 * (spec/schema.md): YAML nodes to IR, as validate.c does the rest.
 */
#include "validate_int.h"

static const char *const cred_keys[] = {"type",	  "source",	"target",	"targets",
					"env",	  "username",	"header",	"profiles",
					"default", "region",	"service",	"credential",
					"refresh_interval_seconds", NULL};
static const char *const source_keys[] = {"env", "file", "command", "unix_socket", NULL};
static const char *const aws_keys[] = {"access_key_id", "secret_access_key", "session_token",
				       "profile", NULL};
static const char *const git_ssh_keys[] = {"host",	       "port",
					   "username",	       "repository",
					   "operations",       "identity_file",
					   "known_hosts_file", "allowed_cidrs",
					   "allow_loopback",   NULL};

/* ---- egress rules and credentials -------------------------------------------- */

/* Do the host patterns of rules A and B share a name? */
static bool
hosts_overlap(const struct egress_rule *a, const struct egress_rule *b)
{
	size_t la = strlen(a->host), lb = strlen(b->host);

	if (!strcmp(a->host, b->host))
		return true;
	/* "*.x" takes x and every name below it, on a dot boundary. */
	if (a->wildcard && lb > la && b->host[lb - la - 1] == '.' && !strcmp(b->host + lb - la, a->host))
		return true;
	return b->wildcard && la > lb && a->host[la - lb - 1] == '.' &&
	       !strcmp(a->host + la - lb, b->host);
}

/*
 * A CONNECT is either inspected (an HTTP rule takes its host and port) or
 * a plain tunnel (a tcp rule does), never both: a tcp rule that shares a
 * host and port with an HTTP rule would not do what it says (the proxy
 * inspects such a tunnel), and the meaning of a policy would depend on
 * which rule wins.  A rule without a port means 443 for a CONNECT, and 80
 * too for a connection the sandbox's resolver brought (transparent egress).
 */
static void
check_tcp_overlap(struct vctx *c, const struct sandbox *sb)
{
	for (size_t i = 0; i < sb->n_egress; i++) {
		const struct egress_rule *t = &sb->egress[i];

		if (!t->tcp)
			continue;
		for (size_t j = 0; j < sb->n_egress; j++) {
			const struct egress_rule *h = &sb->egress[j];
			bool same_port = h->port ? h->port == t->port
						 : t->port == EGRESS_PORT_TLS || t->port == EGRESS_PORT_PLAIN;

			if (h->tcp || !same_port || !hosts_overlap(t, h))
				continue;
			diag_error(c->d, t->loc,
				   "tcp rule for %s%s:%u shares its host and port with the HTTP "
				   "rule at line %u, whose CONNECTs the proxy inspects: a host and "
				   "port is either inspected or a plain tunnel",
				   t->wildcard ? "*." : "", t->host, t->port, h->loc.line);
			break;
		}
	}
}

void
want_egress(struct vctx *c, const struct ynode *n, const char *what, struct sandbox *sb)
{
	sb->egress_present = true;
	sb->egress_loc = n->loc;
	if (!want_seq(c, n, what))
		return;
	for (size_t i = 0; i < n->n_items; i++) {
		const struct ynode *it = n->items[i];
		struct egress_rule r;
		struct egress_error err;
		bool dup = false;

		if (!is_string(it)) {
			diag_error(c->d, it->loc, "%s[%zu] must be a string, %s", what, i,
				   got(c, it, false));
			continue;
		}
		if (egress_parse_rule(c->a, it->value, it->len, &r, &err) < 0) {
			diag_error(c->d, ydoc_scalar_loc(c->doc, it, err.offset, err.length), "%s",
				   err.message);
			continue;
		}
		r.loc = it->loc;
		for (size_t j = 0; j < sb->n_egress && !dup; j++) {
			const struct egress_rule *o = &sb->egress[j];

			dup = o->tcp == r.tcp && o->methods == r.methods &&
			      o->wildcard == r.wildcard && o->port == r.port &&
			      !strcmp(o->host, r.host) && !strcmp(o->path, r.path);
		}
		if (!dup)
			*ARENA_PUSH(c->a, sb->egress, sb->n_egress, sb->cap_egress) = r;
	}
	if (n->n_items == 0)
		diag_warning(c->d, n->loc,
			     "%s is empty: no HTTP filtering, the network follows allow_network",
			     what);
	check_tcp_overlap(c, sb);
	{
		unsigned ports[TRANSPARENT_MAX_PORTS];
		size_t over = 0;

		if (transparent_ports(sb->egress, sb->n_egress, ports, &over) < 0)
			diag_error(c->d, sb->egress[over].loc,
				   "egress_rules name more than %d distinct ports (443 and 80 for "
				   "a rule without one); the sandbox listens on each for clients "
				   "that ignore the proxy",
				   TRANSPARENT_MAX_PORTS);
	}
}

static const char *const cred_type_names[] = {"https_bearer",   "https_basic", "git_https",
					      "gh_basic",	"databricks_cli", "aws_sigv4",
					      NULL};

static bool
host_char_ok(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       ch == '-' || ch == '.';
}

/* "host[:port][/path]": the exact host and port (443) a credential is bound to. */
static bool
parse_cred_target(struct vctx *c, const struct ynode *n, const char *what, struct cred_target *t)
{
	struct ir_str s = {0};
	const char *slash, *scheme, *colon;
	size_t hlen, end;
	unsigned long port = 443;
	char *host;

	if (!want_string(c, n, what, &s))
		return false;
	scheme = strstr(s.s, "://");
	if (scheme) {
		diag_error(c->d, ydoc_scalar_loc(c->doc, n, 0, (size_t)(scheme - s.s) + 3),
			   "%s: write the host without a scheme ('%.*s')", what,
			   (int)(scheme - s.s) + 3, s.s);
		return false;
	}
	slash = strchr(s.s, '/');
	end = slash ? (size_t)(slash - s.s) : strlen(s.s);
	colon = memchr(s.s, ':', end);
	hlen = colon ? (size_t)(colon - s.s) : end;
	for (size_t i = 0; i < hlen; i++) {
		if (s.s[i] == '*') {
			diag_error(c->d, ydoc_scalar_loc(c->doc, n, i, 1),
				   "%s: a credential binds to an exact host, not a wildcard", what);
			return false;
		}
		if (!host_char_ok(s.s[i])) {
			diag_error(c->d, ydoc_scalar_loc(c->doc, n, i, 1),
				   "%s: invalid character '%c' in host", what, s.s[i]);
			return false;
		}
	}
	if (hlen == 0 || s.s[0] == '.' || s.s[hlen - 1] == '.' || memmem(s.s, hlen, "..", 2)) {
		diag_error(c->d, n->loc, "%s: '%.*s' is not a host name", what, (int)hlen, s.s);
		return false;
	}
	if (colon) {
		size_t at = hlen + 1, plen = end - at;

		port = 0;
		for (size_t i = at; i < end; i++) {
			if (s.s[i] < '0' || s.s[i] > '9') {
				diag_error(c->d, ydoc_scalar_loc(c->doc, n, i, 1),
					   "%s: invalid character '%c' in port (a decimal number, "
					   "1 to 65535)",
					   what, s.s[i]);
				return false;
			}
			if (port <= 65535)
				port = port * 10 + (unsigned long)(s.s[i] - '0');
		}
		if (plen == 0 || port == 0 || port > 65535 || s.s[at] == '0') {
			diag_error(c->d,
				   ydoc_scalar_loc(c->doc, n, plen ? at : hlen, plen ? plen : 1),
				   plen ? "%s: port %.*s is out of range (1 to 65535)"
					: "%s: missing port after ':'%.*s",
				   what, (int)(plen > 10 ? 10 : plen), s.s + at);
			return false;
		}
	}
	host = arena_strndup(c->a, s.s, hlen);
	for (char *h = host; *h; h++)
		if (*h >= 'A' && *h <= 'Z')
			*h = (char)(*h + 32);
	t->host = host;
	t->port = (unsigned)port;
	t->path = slash ? slash : NULL;
	t->loc = n->loc;
	return true;
}

static void
cred_add_target(struct vctx *c, struct credential *cr, struct cred_target t)
{
	*ARENA_PUSH(c->a, cr->targets, cr->n_targets, cr->cap_targets) = t;
}

/* {env: NAME} | {file: PATH} | {command: CMD} | {unix_socket: PATH}: where a secret is read. */
static bool
want_source(struct vctx *c, const struct ynode *n, const char *what, struct cred_source *out)
{
	static const enum cred_source_kind kinds[] = {CRED_SOURCE_ENV, CRED_SOURCE_FILE,
						      CRED_SOURCE_COMMAND, CRED_SOURCE_UNIX_SOCKET};
	const struct ynode *v = NULL;
	size_t set = 0, which = 0;
	const char *vwhat;
	bool ok;

	if (!want_map(c, n, what))
		return false;
	check_keys(c, n, what, source_keys, NULL, NULL);
	for (size_t i = 0; source_keys[i]; i++)
		if (ynode_get(n, source_keys[i])) {
			set++;
			which = i;
		}
	if (set != 1) {
		diag_error(c->d, n->loc,
			   "%s must set exactly one of env, file, command or unix_socket", what);
		return false;
	}
	v = ynode_get(n, source_keys[which]);
	vwhat = arena_printf(c->a, "%s.%s", what, source_keys[which]);
	ok = kinds[which] == CRED_SOURCE_ENV ? want_env_name(c, v, vwhat, &out->value)
					     : want_string(c, v, vwhat, &out->value);
	if (ok && (kinds[which] == CRED_SOURCE_FILE || kinds[which] == CRED_SOURCE_UNIX_SOCKET) &&
	    out->value.s[0] != '/' && strncmp(out->value.s, "~/", 2)) {
		diag_error(c->d, v->loc, "%s must be absolute or start with '~/', got '%s'", vwhat,
			   out->value.s);
		ok = false;
	}
	if (ok)
		out->kind = kinds[which];
	return ok;
}

static void
want_cred_source(struct vctx *c, const struct ynode *n, const char *what, struct credential *cr)
{
	struct cred_source src = {0};

	if (want_source(c, n, what, &src)) {
		cr->source_kind = src.kind;
		cr->source = src.value;
	}
}

/* A region or service name as SigV4 scopes use them: [a-z0-9-]+. */
static bool
want_aws_name(struct vctx *c, const struct ynode *n, const char *what, struct ir_str *out)
{
	if (!want_string(c, n, what, out))
		return false;
	for (size_t i = 0; out->s[i]; i++)
		if (!((out->s[i] >= 'a' && out->s[i] <= 'z') ||
		      (out->s[i] >= '0' && out->s[i] <= '9') || out->s[i] == '-')) {
			diag_error(c->d, ydoc_scalar_loc(c->doc, n, i, 1),
				   "%s: '%s' is not an AWS name (lower-case letters, digits and "
				   "'-')",
				   what, out->s);
			out->s = NULL;
			return false;
		}
	return true;
}

/*
 * aws_sigv4's `credential`: the three sources of static keys, or a profile
 * of ~/.aws/credentials.  Roles to assume are refused: the proxy signs with
 * the keys it read at launch and calls no AWS API of its own.
 */
static void
want_aws_credential(struct vctx *c, const struct ynode *n, const char *what, struct credential *cr)
{
	const struct ynode *v;

	if (!want_map(c, n, what))
		return;
	if ((v = ynode_get(n, "assume_role")) || (v = ynode_get(n, "role_arn"))) {
		diag_error(c->d, ynode_key(n, ynode_get(n, "assume_role") ? "assume_role" : "role_arn")->loc,
			   "%s: assuming a role is not supported; give static keys "
			   "(access_key_id, secret_access_key, session_token) or a profile with "
			   "static keys",
			   what);
		return;
	}
	check_keys(c, n, what, aws_keys, NULL, NULL);
	if ((v = ynode_get(n, "profile"))) {
		for (size_t i = 0; i < 3; i++)
			if (ynode_get(n, aws_keys[i]))
				diag_error(c->d, ynode_key(n, aws_keys[i])->loc,
					   "%s: give a profile or keys, not both", what);
		want_string(c, v, arena_printf(c->a, "%s.profile", what), &cr->aws_profile);
		return;
	}
	if ((v = ynode_get(n, "access_key_id")))
		want_source(c, v, arena_printf(c->a, "%s.access_key_id", what), &cr->aws_key_id);
	else
		diag_error(c->d, n->loc, "%s needs 'access_key_id' (or a 'profile')", what);
	if ((v = ynode_get(n, "secret_access_key")))
		want_source(c, v, arena_printf(c->a, "%s.secret_access_key", what),
			    &cr->aws_secret);
	else
		diag_error(c->d, n->loc, "%s needs 'secret_access_key' (or a 'profile')", what);
	if ((v = ynode_get(n, "session_token")))
		want_source(c, v, arena_printf(c->a, "%s.session_token", what), &cr->aws_token);
}

/* Keys an entry of type T must not have. */
static void
cred_forbid(struct vctx *c, const struct ynode *n, const char *what, const char *type,
	    const char *const *keys)
{
	for (size_t i = 0; keys[i]; i++) {
		const struct ynode *v = ynode_get(n, keys[i]);

		if (v)
			diag_error(c->d, v->loc, "%s: %s does not take '%s'", what, type, keys[i]);
	}
}

/*
 * `header: NAME`: an https_bearer secret travels as the whole value of
 * NAME (x-api-key, the Anthropic API's), not in Authorization.  Names the
 * proxy itself sets, strips or acts on cannot be used: the secret would be
 * dropped, or change how the request is framed or routed.
 */
static void
want_cred_header(struct vctx *c, const struct ynode *v, const char *what, struct credential *cr,
		 const char *type)
{
	struct ir_str h = {0};
	char *low;

	if (cr->type != CRED_HTTPS_BEARER) {
		diag_error(c->d, v->loc, "%s: %s does not take 'header' (only https_bearer does)",
			   what, type);
		return;
	}
	if (!want_string(c, v, what, &h))
		return;
	if (!*h.s) {
		diag_error(c->d, v->loc, "%s is empty", what);
		return;
	}
	for (size_t i = 0; h.s[i]; i++) {
		unsigned char ch = (unsigned char)h.s[i];

		/* RFC 9110 token characters. */
		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || strchr("!#$%&'*+-.^_`|~", ch))) {
			diag_error(c->d, ydoc_scalar_loc(c->doc, v, i, 1),
				   "%s: '%c' cannot be part of a header name", what,
				   ch >= 0x20 && ch < 0x7f ? ch : '?');
			return;
		}
	}
	low = arena_strdup(c->a, h.s);
	for (char *s = low; *s; s++)
		if (*s >= 'A' && *s <= 'Z')
			*s = (char)(*s - 'A' + 'a');
	if (cred_header_reserved(low)) {
		if (!strcmp(low, "authorization"))
			diag_error(c->d, v->loc,
				   "%s: Authorization is where the secret goes without 'header' (leave "
				   "it out)",
				   what);
		else
			diag_error(c->d, v->loc,
				   "%s: the proxy sets or removes '%s' itself; the secret cannot "
				   "travel in it",
				   what, h.s);
		return;
	}
	cr->header.s = low;
	cr->header.loc = v->loc;
}

/* The credential's 'type' into CR->type and *TNAME; false (reported) when it has none. */
static bool
want_cred_type(struct vctx *c, const struct ynode *n, const char *what, struct credential *cr,
	       struct ir_str *tname)
{
	const struct ynode *type;
	size_t t;

	type = ynode_get(n, "type");
	if (!type) {
		diag_error(c->d, n->loc,
			   "%s needs a 'type' (https_bearer, https_basic, git_https, gh_basic, "
			   "databricks_cli or aws_sigv4)",
			   what);
		return false;
	}
	if (!want_string(c, type, arena_printf(c->a, "%s.type", what), tname))
		return false;
	for (t = 0; cred_type_names[t] && strcmp(cred_type_names[t], tname->s); t++)
		;
	if (!cred_type_names[t]) {
		const char *hint = validate_suggest(tname->s, cred_type_names);

		diag_error(c->d, type->loc, "unknown credential type '%s'%s%s%s", tname->s,
			   hint ? " (did you mean '" : "", hint ? hint : "", hint ? "'?)" : "");
		return false;
	}
	cr->type = (enum cred_type)t;
	return true;
}

/* databricks_cli: its 'profiles', each once, and a 'default' among them. */
static void
want_databricks_cli(struct vctx *c, const struct ynode *n, const char *what, struct credential *cr,
		    const char *type)
{
	static const char *const databricks_forbidden[] = {"source", "target",	 "targets",
							   "env",    "username", NULL};
	const struct ynode *v;

	cred_forbid(c, n, what, type, databricks_forbidden);
	v = ynode_get(n, "profiles");
	if (!v) {
		diag_error(c->d, n->loc, "%s: databricks_cli needs a 'profiles' list", what);
		return;
	}
	want_strlist(c, v, arena_printf(c->a, "%s.profiles", what), LIST_STRING, &cr->profiles);
	if (cr->profiles.n == 0 && v->kind == YNODE_SEQ && v->n_items == 0)
		diag_error(c->d, v->loc, "%s.profiles is empty", what);
	if (cr->profiles.n < v->n_items && v->kind == YNODE_SEQ) {
		/* want_strlist dropped duplicates silently; here they are errors. */
		for (size_t i = 1; i < v->n_items; i++)
			for (size_t j = 0; j < i; j++)
				if (is_string(v->items[i]) && is_string(v->items[j]) &&
				    !strcmp(v->items[i]->value, v->items[j]->value)) {
					diag_error(c->d, v->items[i]->loc,
						   "%s.profiles lists '%s' twice", what,
						   v->items[i]->value);
					break;
				}
	}
	if ((v = ynode_get(n, "default")) &&
	    want_string(c, v, arena_printf(c->a, "%s.default", what), &cr->default_profile)) {
		bool found = false;

		for (size_t i = 0; i < cr->profiles.n; i++)
			found |= !strcmp(cr->profiles.v[i].s, cr->default_profile.s);
		if (!found)
			diag_error(c->d, v->loc, "%s.default '%s' is not one of its profiles", what,
				   cr->default_profile.s);
	}
}

/* aws_sigv4: its 'region', 'service' (s3 by default) and 'credential'. */
static void
want_aws_sigv4(struct vctx *c, const struct ynode *n, const char *what, struct credential *cr,
	       const char *type)
{
	static const char *const aws_forbidden[] = {"source",
						    "env",
						    "username",
						    "header",
						    "profiles",
						    "default",
						    "refresh_interval_seconds",
						    NULL};
	const struct ynode *v;

	cred_forbid(c, n, what, type, aws_forbidden);
	if ((v = ynode_get(n, "region")))
		want_aws_name(c, v, arena_printf(c->a, "%s.region", what), &cr->region);
	else
		diag_error(c->d, n->loc, "%s: aws_sigv4 needs a 'region'", what);
	if ((v = ynode_get(n, "service")))
		want_aws_name(c, v, arena_printf(c->a, "%s.service", what), &cr->service);
	else
		cr->service.s = "s3";
	if ((v = ynode_get(n, "credential")))
		want_aws_credential(c, v, arena_printf(c->a, "%s.credential", what), cr);
	else
		diag_error(c->d, n->loc,
			   "%s: aws_sigv4 needs a 'credential' ({profile: NAME}, or "
			   "access_key_id and secret_access_key sources)",
			   what);
}

/* A secret read from a 'source', and how often it is read again. */
static void
want_cred_secret(struct vctx *c, const struct ynode *n, const char *what, struct credential *cr,
		 const char *type)
{
	static const char *const host_forbidden[] = {"profiles", "default",    "region",
						     "service",	 "credential", NULL};
	const struct ynode *v;

	cred_forbid(c, n, what, type, host_forbidden);
	if ((v = ynode_get(n, "source")))
		want_cred_source(c, v, arena_printf(c->a, "%s.source", what), cr);
	else
		diag_error(c->d, n->loc,
			   "%s needs a 'source' ({env: NAME}, {file: PATH}, "
			   "{command: CMD} or {unix_socket: PATH})",
			   what);
	if ((v = ynode_get(n, "refresh_interval_seconds")) &&
	    want_uint(c, v, arena_printf(c->a, "%s.refresh_interval_seconds", what), 1, 86400,
		      &cr->refresh_interval) &&
	    cr->source_kind != CRED_SOURCE_FILE && cr->source_kind != CRED_SOURCE_UNIX_SOCKET &&
	    cr->source_kind != CRED_SOURCE_NONE)
		diag_error(c->d, v->loc,
			   "%s.refresh_interval_seconds: only file and unix_socket sources "
			   "are read again",
			   what);
}

/* The hosts the credential goes to: 'target' or 'targets' (gh_basic: GitHub's two). */
static void
want_cred_targets(struct vctx *c, const struct ynode *n, const char *what, struct credential *cr)
{
	const struct ynode *target = ynode_get(n, "target"), *targets = ynode_get(n, "targets");

	if (target && targets) {
		diag_error(c->d, targets->loc, "%s: give 'target' or 'targets', not both", what);
	} else if (target) {
		struct cred_target tg = {0};

		if (parse_cred_target(c, target, arena_printf(c->a, "%s.target", what), &tg))
			cred_add_target(c, cr, tg);
	} else if (targets) {
		const char *twhat = arena_printf(c->a, "%s.targets", what);

		if (want_seq(c, targets, twhat)) {
			if (targets->n_items == 0)
				diag_error(c->d, targets->loc, "%s is empty", twhat);
			for (size_t i = 0; i < targets->n_items; i++) {
				struct cred_target tg = {0};

				if (parse_cred_target(c, targets->items[i],
						      arena_printf(c->a, "%s[%zu]", twhat, i), &tg))
					cred_add_target(c, cr, tg);
			}
		}
	} else if (cr->type == CRED_GH_BASIC) {
		static const char *const gh_hosts[] = {"github.com", "api.github.com"};

		for (size_t i = 0; i < 2; i++) {
			struct cred_target tg = {gh_hosts[i], 443, NULL, CRED_SCHEME_BASIC, n->loc};

			cred_add_target(c, cr, tg);
		}
	} else {
		diag_error(c->d, n->loc, "%s needs a 'target' host or a 'targets' list", what);
	}
}

/*
 * The scheme the proxy speaks upstream.  gh_basic splits: git traffic
 * to the git host uses Basic, the REST/GraphQL host ("api.*") uses
 * "token" and gets the placeholder through GH_TOKEN/GITHUB_TOKEN,
 * because the GitHub CLI will not send a request without a local token.
 */
static void
cred_set_schemes(struct credential *cr)
{
	for (size_t i = 0; i < cr->n_targets; i++) {
		struct cred_target *tg = &cr->targets[i];

		switch (cr->type) {
		case CRED_AWS_SIGV4:
			tg->scheme = CRED_SCHEME_SIGV4;
			break;
		case CRED_HTTPS_BEARER:
			tg->scheme = cr->header.s ? CRED_SCHEME_HEADER : CRED_SCHEME_BEARER;
			break;
		case CRED_GH_BASIC:
			tg->scheme =
			    strncmp(tg->host, "api.", 4) ? CRED_SCHEME_BASIC : CRED_SCHEME_TOKEN;
			break;
		default:
			tg->scheme = CRED_SCHEME_BASIC;
		}
	}
}

/* The variables that hold the placeholder: 'env' (gh_basic: GH_TOKEN, GITHUB_TOKEN). */
static void
want_cred_env(struct vctx *c, const struct ynode *n, const char *what, struct credential *cr,
	      const char *type)
{
	const struct ynode *v;

	if ((v = ynode_get(n, "env"))) {
		const char *ewhat = arena_printf(c->a, "%s.env", what);

		if (cr->type != CRED_HTTPS_BEARER && cr->type != CRED_HTTPS_BASIC) {
			diag_error(c->d, v->loc,
				   "%s: %s does not take 'env' (only https_bearer and "
				   "https_basic do)",
				   what, type);
		} else if (v->kind == YNODE_SEQ) {
			want_strlist(c, v, ewhat, LIST_ENV_NAME, &cr->env);
			cr->env.loc = v->loc;
			cr->env_list = true;
		} else {
			struct ir_str e = {0};

			cr->env.present = true;
			cr->env.loc = v->loc;
			if (want_env_name(c, v, ewhat, &e))
				*ARENA_PUSH(c->a, cr->env.v, cr->env.n, cr->env.cap) = e;
		}
	} else if (cr->type == CRED_GH_BASIC) {
		static const char *const gh_env[] = {"GH_TOKEN", "GITHUB_TOKEN"};

		for (size_t i = 0; i < 2; i++) {
			struct ir_str e = {gh_env[i], n->loc};

			*ARENA_PUSH(c->a, cr->env.v, cr->env.n, cr->env.cap) = e;
		}
	}
}

static void
want_credential(struct vctx *c, const struct ynode *n, const char *what, struct credential *cr)
{
	const struct ynode *v;
	struct ir_str tname = {0};

	cr->loc = n->loc;
	if (!want_map(c, n, what))
		return;
	check_keys(c, n, what, cred_keys, NULL, NULL);
	if (!want_cred_type(c, n, what, cr, &tname))
		return;
	if (cr->type == CRED_DATABRICKS_CLI) {
		want_databricks_cli(c, n, what, cr, tname.s);
		return;
	}
	if (cr->type == CRED_AWS_SIGV4)
		want_aws_sigv4(c, n, what, cr, tname.s);
	else
		want_cred_secret(c, n, what, cr, tname.s);
	want_cred_targets(c, n, what, cr);
	if ((v = ynode_get(n, "header")))
		want_cred_header(c, v, arena_printf(c->a, "%s.header", what), cr, tname.s);
	cred_set_schemes(cr);
	want_cred_env(c, n, what, cr, tname.s);
	if ((v = ynode_get(n, "username"))) {
		if (cr->type == CRED_HTTPS_BEARER)
			diag_error(c->d, v->loc, "%s: https_bearer does not take 'username'", what);
		else
			want_string(c, v, arena_printf(c->a, "%s.username", what), &cr->username);
	}
}

void
want_credentials(struct vctx *c, const struct ynode *n, const char *what, struct sandbox *sb)
{
	sb->creds_loc = n->loc;
	if (!want_seq(c, n, what))
		return;
	if (n->n_items == 0)
		diag_error(c->d, n->loc, "%s is empty (remove it, or list credentials)", what);
	for (size_t i = 0; i < n->n_items; i++) {
		struct credential *cr = ARENA_PUSH(c->a, sb->creds, sb->n_creds, sb->cap_creds);

		want_credential(c, n->items[i], arena_printf(c->a, "%s[%zu]", what, i), cr);
	}
}

/* ---- git_ssh ------------------------------------------------------------------ */

/* A DNS name or an IPv4 literal, lower-cased; no wildcard, no port. */
static bool
want_ssh_host(struct vctx *c, const struct ynode *n, const char *what, struct ir_str *out)
{
	struct ir_str s = {0};
	size_t len;
	char *low;

	if (!want_string(c, n, what, &s))
		return false;
	len = strlen(s.s);
	for (size_t i = 0; i < len; i++)
		if (!host_char_ok(s.s[i])) {
			diag_error(c->d, ydoc_scalar_loc(c->doc, n, i, 1),
				   "%s: invalid character '%c' in host (a DNS name or an IPv4 "
				   "address; the port goes in 'port')",
				   what, s.s[i] >= 0x20 && s.s[i] < 0x7f ? s.s[i] : '?');
			return false;
		}
	if (s.s[0] == '.' || s.s[0] == '-' || s.s[len - 1] == '.' || strstr(s.s, "..")) {
		diag_error(c->d, n->loc, "%s: '%s' is not a host name", what, s.s);
		return false;
	}
	low = arena_strdup(c->a, s.s);
	for (char *h = low; *h; h++)
		if (*h >= 'A' && *h <= 'Z')
			*h = (char)(*h + 32);
	out->s = low;
	out->loc = s.loc;
	return true;
}

static bool
ssh_name_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       ch == '.' || ch == '_' || ch == '-';
}

/*
 * "org/app.git": segments of [A-Za-z0-9._-], none "." or ".." or starting
 * with '-', so the broker can compare it with what git asks for and the
 * remote command it builds can never be read as an option or a shell word.
 */
static bool
want_repository(struct vctx *c, const struct ynode *n, const char *what, struct ir_str *out)
{
	struct ir_str s = {0};
	const char *p;
	size_t len;

	if (!want_string(c, n, what, &s))
		return false;
	p = s.s + (s.s[0] == '/');
	len = strlen(p);
	while (len && p[len - 1] == '/')
		len--;
	if (!len) {
		diag_error(c->d, n->loc, "%s names no repository", what);
		return false;
	}
	for (size_t i = 0, seg = 0; i <= len; i++) {
		if (i < len && p[i] != '/') {
			if (!ssh_name_char(p[i])) {
				diag_error(c->d, ydoc_scalar_loc(c->doc, n, (size_t)(p - s.s) + i, 1),
					   "%s: '%c' cannot be part of a repository path (letters, "
					   "digits, '.', '_', '-' and '/')",
					   what, p[i] >= 0x20 && p[i] < 0x7f ? p[i] : '?');
				return false;
			}
			continue;
		}
		if (i == seg || (i - seg == 1 && p[seg] == '.') ||
		    (i - seg == 2 && p[seg] == '.' && p[seg + 1] == '.') || p[seg] == '-') {
			diag_error(c->d, n->loc,
				   "%s: '%s' has an empty, '.', '..' or '-'-led segment", what, s.s);
			return false;
		}
		seg = i + 1;
	}
	out->s = arena_strndup(c->a, p, len);
	out->loc = s.loc;
	return true;
}

/* "a.b.c.d/n": four decimal octets without leading zeros, a prefix of 0 to 32. */
static bool
parse_cidr(const char *s, uint32_t *addr, unsigned *bits)
{
	uint32_t a = 0;

	for (int part = 0; part < 5; part++) {
		unsigned v = 0, max = part < 4 ? 255 : 32;
		const char *start = s;

		while (*s >= '0' && *s <= '9' && s - start < 3)
			v = v * 10 + (unsigned)(*s++ - '0');
		if (s == start || v > max || (s - start > 1 && *start == '0'))
			return false;
		if (part < 4)
			a = a << 8 | v;
		else
			*bits = v;
		if (*s++ != (part < 3 ? '.' : part == 3 ? '/' : '\0'))
			return false;
	}
	*addr = a;
	return true;
}

static void
want_cidrs(struct vctx *c, const struct ynode *n, const char *what, struct ir_strlist *out)
{
	want_strlist(c, n, what, LIST_STRING, out);
	for (size_t i = 0; i < out->n; i++) {
		uint32_t a = 0, mask;
		unsigned bits = 0;

		if (!parse_cidr(out->v[i].s, &a, &bits)) {
			diag_error(c->d, out->v[i].loc,
				   "%s: '%s' is not an IPv4 CIDR block like 140.82.112.0/20", what,
				   out->v[i].s);
			continue;
		}
		mask = bits ? ~0u << (32 - bits) : 0;
		if (a & ~mask) {
			a &= mask;
			diag_error(c->d, out->v[i].loc,
				   "%s: '%s' has host bits set (did you mean '%u.%u.%u.%u/%u'?)",
				   what, out->v[i].s, a >> 24, a >> 16 & 255, a >> 8 & 255, a & 255,
				   bits);
		}
	}
}

/* An absolute or ~/ path to a file the broker reads outside the sandbox. */
static void
want_host_file(struct vctx *c, const struct ynode *n, const char *what, struct ir_path *out)
{
	struct ir_path p = {0};

	if (!parse_path(c, n, what, PATH_CWD, &p))
		return;
	if (p.base == PATH_CWD || !*p.rel) {
		diag_error(c->d, n->loc, "%s must be an absolute path or start with '~/', got '%s'",
			   what, p.written);
		return;
	}
	*out = p;
}

static void
want_git_ssh_entry(struct vctx *c, const struct ynode *n, const char *what, struct git_ssh *g)
{
	const struct ynode *v;
	struct ir_u64 port = {0};

	g->loc = n->loc;
	g->port = 22;
	g->username.s = "git";
	g->operations = GIT_OP_FETCH;
	if (!want_map(c, n, what))
		return;
	check_keys(c, n, what, git_ssh_keys, NULL, NULL);
	if ((v = ynode_get(n, "host")))
		want_ssh_host(c, v, arena_printf(c->a, "%s.host", what), &g->host);
	else
		diag_error(c->d, n->loc, "%s needs a 'host'", what);
	if ((v = ynode_get(n, "port")) &&
	    want_uint(c, v, arena_printf(c->a, "%s.port", what), 1, 65535, &port))
		g->port = (unsigned)port.value;
	if ((v = ynode_get(n, "username"))) {
		struct ir_str u = {0};
		const char *uwhat = arena_printf(c->a, "%s.username", what);

		if (want_string(c, v, uwhat, &u)) {
			bool ok = u.s[0] != '-';

			for (size_t i = 0; u.s[i] && ok; i++)
				ok = ssh_name_char(u.s[i]);
			if (ok)
				g->username = u;
			else
				diag_error(c->d, v->loc,
					   "%s: '%s' is not a user name (letters, digits, '.', '_', "
					   "'-'; not led by '-')",
					   uwhat, u.s);
		}
	}
	if ((v = ynode_get(n, "repository")))
		want_repository(c, v, arena_printf(c->a, "%s.repository", what), &g->repository);
	else
		diag_error(c->d, n->loc,
			   "%s needs a 'repository' (the path git names, like myorg/app.git)", what);
	if ((v = ynode_get(n, "operations"))) {
		static const char *const ops[] = {"fetch", "push", NULL};
		struct ir_strlist l = {0};
		const char *owhat = arena_printf(c->a, "%s.operations", what);

		g->operations_loc = v->loc;
		want_strlist(c, v, owhat, LIST_STRING, &l);
		g->operations = 0;
		for (size_t i = 0; i < l.n; i++) {
			if (!strcmp(l.v[i].s, "fetch")) {
				g->operations |= GIT_OP_FETCH;
			} else if (!strcmp(l.v[i].s, "push")) {
				g->operations |= GIT_OP_PUSH;
			} else {
				const char *hint = validate_suggest(l.v[i].s, ops);

				diag_error(c->d, l.v[i].loc,
					   "%s: unknown operation '%s' (%s%s%s)", owhat, l.v[i].s,
					   hint ? "did you mean '" : "fetch or push",
					   hint ? hint : "", hint ? "'?" : "");
			}
		}
		if (v->kind == YNODE_SEQ && v->n_items == 0)
			diag_error(c->d, v->loc, "%s is empty (fetch, push, or both)", owhat);
	}
	if ((v = ynode_get(n, "identity_file")))
		want_host_file(c, v, arena_printf(c->a, "%s.identity_file", what), &g->identity_file);
	if ((v = ynode_get(n, "known_hosts_file")))
		want_host_file(c, v, arena_printf(c->a, "%s.known_hosts_file", what),
			       &g->known_hosts_file);
	if ((v = ynode_get(n, "allowed_cidrs")))
		want_cidrs(c, v, arena_printf(c->a, "%s.allowed_cidrs", what), &g->allowed_cidrs);
	if ((v = ynode_get(n, "allow_loopback")))
		want_bool(c, v, arena_printf(c->a, "%s.allow_loopback", what), &g->allow_loopback);
}

/* Strip a final ".git": git and the servers treat "x" and "x.git" as one repository. */
static size_t
repo_stem(const char *r)
{
	size_t len = strlen(r);

	return len > 4 && !strcmp(r + len - 4, ".git") ? len - 4 : len;
}

void
want_git_ssh(struct vctx *c, const struct ynode *n, const char *what, struct sandbox *sb)
{
	sb->git_ssh_loc = n->loc;
	if (!want_seq(c, n, what))
		return;
	if (n->n_items == 0)
		diag_error(c->d, n->loc, "%s is empty (remove it, or list repositories)", what);
	for (size_t i = 0; i < n->n_items; i++) {
		struct git_ssh g = {0};

		want_git_ssh_entry(c, n->items[i], arena_printf(c->a, "%s[%zu]", what, i), &g);
		if (!g.host.s || !g.repository.s)
			continue;
		for (size_t j = 0; j < sb->n_git_ssh; j++) {
			const struct git_ssh *o = &sb->git_ssh[j];
			size_t a = repo_stem(o->repository.s), b = repo_stem(g.repository.s);

			if (!strcmp(o->host.s, g.host.s) && o->port == g.port &&
			    !strcmp(o->username.s, g.username.s) && a == b &&
			    !strncmp(o->repository.s, g.repository.s, a))
				diag_error(c->d, g.loc,
					   "%s: %s@%s:%u/%s is already listed at line %u (merge "
					   "the operations)",
					   what, g.username.s, g.host.s, g.port, g.repository.s,
					   o->loc.line);
		}
		*ARENA_PUSH(c->a, sb->git_ssh, sb->n_git_ssh, sb->cap_git_ssh) = g;
	}
}
