/*
 * table.c - reading the egress proxy's compiled table back into a policy.
 *
 * One line at a time: a keyword, then words and quoted strings separated by
 * one or more spaces (a credential's lines may be indented).  The first
 * thing wrong ends the parse with its line; nothing is guessed.
 */
#include "runtime/egress/table.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "compiler/base/textesc.h"
#include "compiler/decide/secrets.h"
#include "emitters/egress_table.h"
#include "runtime/egress/credentials.h"

#define TABLE_MAX_TOKENS 8

struct tok {
	const char *s; /* NUL-terminated, from the arena; a quoted string decoded */
	bool quoted;
};

struct tparse {
	struct arena *a;
	const char *name;
	unsigned line;
	char *err;
	size_t errlen;
	struct policy *p;
	struct sandbox *sb;
	struct credential *cr; /* the entry being read, until "end" */
	bool seen_policy, seen_private;
};

/* "NAME:LINE: " and the message, every untrusted piece already escaped by the caller. */
static int __attribute__((format(printf, 2, 3))) fail(struct tparse *tp, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return diag_fail(tp->err, tp->errlen, "%s:%u: %s", arena_escape(tp->a, tp->name), tp->line,
			 msg);
}

static const char *
esc(struct tparse *tp, const char *s)
{
	return arena_escape(tp->a, s);
}

static int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* The quoted string starting at *P (on its '"'): decoded into *OUT, *P past it. */
static int
read_quoted(struct tparse *tp, const char **p, const char *end, const char **out)
{
	const char *s = *p + 1;
	char *buf = arena_alloc(tp->a, (size_t)(end - s) + 1);
	size_t n = 0;

	for (; s < end && *s != '"'; s++) {
		unsigned char c = (unsigned char)*s;

		if (c < 0x20 || c == 0x7f)
			return fail(tp, "a control byte inside a string (write it as \\xHH)");
		if (c != '\\') {
			buf[n++] = (char)c;
			continue;
		}
		if (s + 1 < end && (s[1] == '\\' || s[1] == '"')) {
			buf[n++] = *++s;
		} else if (s + 3 < end && s[1] == 'x' && hexval(s[2]) >= 0 && hexval(s[3]) >= 0) {
			int v = hexval(s[2]) * 16 + hexval(s[3]);

			if (v == 0 || (v >= 0x20 && v != 0x7f))
				return fail(
				    tp,
				    "\\x%02x: only control bytes other than NUL are written "
				    "as \\xHH",
				    v);
			buf[n++] = (char)v;
			s += 3;
		} else {
			return fail(tp, "a backslash starts \\\\, \\\" or \\xHH (lower-case hex)");
		}
	}
	if (s >= end)
		return fail(tp, "a string without its closing quote");
	buf[n] = '\0';
	/* Never a secret, and never what stands for one. */
	if (cred_has_placeholder(buf, n))
		return fail(tp, "a placeholder (oa_cred_...) has no place in the table");
	*out = buf;
	*p = s + 1;
	return 0;
}

/* Split the line LINE/LEN into at most TABLE_MAX_TOKENS tokens; -1 on a malformed line. */
static int
tokenize(struct tparse *tp, const char *line, size_t len, struct tok *t, size_t *n)
{
	const char *p = line, *end = line + len;

	*n = 0;
	while (p < end) {
		const char *start;

		if (*p == ' ') {
			p++;
			continue;
		}
		if (*n == TABLE_MAX_TOKENS)
			return fail(tp, "too many words on the line");
		if (*p == '"') {
			if (read_quoted(tp, &p, end, &t[*n].s) < 0)
				return -1;
			t[(*n)++].quoted = true;
			if (p < end && *p != ' ')
				return fail(tp, "a space must follow a closing quote");
			continue;
		}
		for (start = p; p < end && *p != ' '; p++)
			if ((unsigned char)*p < 0x21 || (unsigned char)*p >= 0x7f || *p == '"')
				return fail(tp, "a word holds a byte it may not (quote strings)");
		t[*n].s = arena_strndup(tp->a, start, (size_t)(p - start));
		t[(*n)++].quoted = false;
	}
	return 0;
}

/* A decimal number from LO to HI, as a bare word. */
static int
number(struct tparse *tp, const struct tok *t, const char *what, unsigned long lo, unsigned long hi,
       unsigned long *out)
{
	unsigned long v = 0;
	const char *s = t->s;

	if (t->quoted || !*s || (*s == '0' && s[1]))
		return fail(tp, "%s: '%s' is not a decimal number", what, esc(tp, s));
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > hi)
			return fail(tp, "%s: '%s' is not a decimal number from %lu to %lu", what,
				    esc(tp, t->s), lo, hi);
		v = v * 10 + (unsigned long)(*s - '0');
	}
	if (v < lo || v > hi)
		return fail(tp, "%s: %lu is not from %lu to %lu", what, v, lo, hi);
	*out = v;
	return 0;
}

/* The index of T's word in NAMES (N of them), or -1 with a message. */
static int
one_of(struct tparse *tp, const struct tok *t, const char *what, const char *(*name)(int), int n)
{
	if (!t->quoted)
		for (int i = 0; i < n; i++)
			if (!strcmp(t->s, name(i)))
				return i;
	fail(tp, "unknown %s '%s'", what, esc(tp, t->s));
	return -1;
}

static const char *
type_name(int i)
{
	return cred_type_name((enum cred_type)i);
}

static const char *
scheme_name(int i)
{
	return cred_scheme_name((enum cred_scheme)i);
}

static const char *
kind_name(int i)
{
	static const char *const kinds[] = {"env", "file", "command", "unix_socket"};

	return kinds[i];
}

/* A variable name: [A-Za-z_][A-Za-z0-9_]* (it also names a file of --placeholders). */
static bool
is_var_name(const char *s)
{
	if (!*s || (*s >= '0' && *s <= '9'))
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_'))
			return false;
	return true;
}

/* [a-z0-9-]+, as SigV4 scopes spell a region or service. */
static bool
is_aws_name(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '-'))
			return false;
	return true;
}

/*
 * A header an https_bearer secret may travel in: lower-case RFC 9110 token
 * characters, none of the names the proxy sets or acts on (the same list
 * the compiler refuses, compiler/validate.c).
 */
static bool
is_secret_header(const char *s)
{
	if (!*s)
		return false;
	for (const char *c = s; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') ||
		      strchr("!#$%&'*+-.^_`|~", *c)))
			return false;
	return !cred_header_reserved(s);
}

/* N tokens after the keyword, quoted as Q says ('q' quoted, 'w' a word). */
static int
shape(struct tparse *tp, const struct tok *t, size_t n, const char *q)
{
	size_t want = strlen(q);

	if (n - 1 != want)
		return fail(tp, "'%s' takes %zu value%s, not %zu", esc(tp, t[0].s), want,
			    want == 1 ? "" : "s", n - 1);
	for (size_t i = 0; i < want; i++)
		if (t[i + 1].quoted != (q[i] == 'q'))
			return fail(tp, "'%s': value %zu must be %s", esc(tp, t[0].s), i + 1,
				    q[i] == 'q' ? "a quoted string" : "a bare word");
	return 0;
}

/* A single-valued string field of the entry: set once. */
static int
set_once(struct tparse *tp, struct ir_str *f, const struct tok *t)
{
	if (f->s)
		return fail(tp, "'%s' is given twice in this credential", esc(tp, t[0].s));
	f->s = t[1].s;
	f->loc.line = tp->line;
	return 0;
}

/* "KEY KIND "VALUE"": a source. */
static int
set_source(struct tparse *tp, const struct tok *t, size_t n, enum cred_source_kind *kind,
	   struct ir_str *value)
{
	int k;

	if (shape(tp, t, n, "wq") < 0)
		return -1;
	if (*kind != CRED_SOURCE_NONE)
		return fail(tp, "'%s' is given twice in this credential", esc(tp, t[0].s));
	if ((k = one_of(tp, &t[1], "source kind", kind_name, 4)) < 0)
		return -1;
	if (!*t[2].s)
		return fail(tp, "'%s': an empty reference", esc(tp, t[0].s));
	*kind = (enum cred_source_kind)(k + 1);
	value->s = t[2].s;
	value->loc.line = tp->line;
	return 0;
}

/* "target LINE HOST PORT SCHEME". */
static int
cred_target(struct tparse *tp, const struct tok *t, size_t n)
{
	struct credential *cr = tp->cr;
	struct cred_target *tg;
	unsigned long line, port;
	int scheme;

	if (shape(tp, t, n, "wwww") < 0 ||
	    number(tp, &t[1], "target line", 1, UINT32_MAX, &line) < 0 ||
	    number(tp, &t[3], "target port", 1, 65535, &port) < 0 ||
	    (scheme = one_of(tp, &t[4], "scheme", scheme_name, CRED_SCHEME_SIGV4 + 1)) < 0)
		return -1;
	if (!egress_host_is_safe(t[2].s, strlen(t[2].s)))
		return fail(tp, "target host '%s' is not a host name", esc(tp, t[2].s));
	for (const char *c = t[2].s; *c; c++)
		if (*c >= 'A' && *c <= 'Z')
			return fail(tp, "target host '%s' is not in lower case", esc(tp, t[2].s));
	if ((scheme == CRED_SCHEME_SIGV4) != (cr->type == CRED_AWS_SIGV4))
		return fail(tp, "scheme %s does not go with %s", scheme_name(scheme),
			    cred_type_name(cr->type));
	tg = ARENA_PUSH(tp->a, cr->targets, cr->n_targets, cr->cap_targets);
	tg->host = t[2].s;
	tg->port = (unsigned)port;
	tg->scheme = (enum cred_scheme)scheme;
	tg->loc.line = (uint32_t)line;
	return 0;
}

/* One line inside "credential ... end". */
static int
cred_line(struct tparse *tp, const struct tok *t, size_t n)
{
	struct credential *cr = tp->cr;
	const char *k = t[0].s;
	struct ir_str *s;

	if (!strcmp(k, "target"))
		return cred_target(tp, t, n);
	if (!strcmp(k, "source"))
		return set_source(tp, t, n, &cr->source_kind, &cr->source);
	if (!strcmp(k, "aws-key-id"))
		return set_source(tp, t, n, &cr->aws_key_id.kind, &cr->aws_key_id.value);
	if (!strcmp(k, "aws-secret"))
		return set_source(tp, t, n, &cr->aws_secret.kind, &cr->aws_secret.value);
	if (!strcmp(k, "aws-token"))
		return set_source(tp, t, n, &cr->aws_token.kind, &cr->aws_token.value);
	if (!strcmp(k, "refresh")) {
		unsigned long v;

		if (shape(tp, t, n, "w") < 0 || number(tp, &t[1], "refresh", 1, 86400, &v) < 0)
			return -1;
		if (cr->refresh_interval.present)
			return fail(tp, "'refresh' is given twice in this credential");
		cr->refresh_interval = (struct ir_u64){v, true, {tp->line, 0, 0}};
		return 0;
	}
	if (shape(tp, t, n, "q") < 0)
		return -1;
	if (!strcmp(k, "placeholder") || !strcmp(k, "profile")) {
		bool env = !strcmp(k, "placeholder");
		struct ir_strlist *l = env ? &cr->env : &cr->profiles;

		if (env && !is_var_name(t[1].s))
			return fail(tp, "placeholder: '%s' is not a variable name",
				    esc(tp, t[1].s));
		if (!*t[1].s)
			return fail(tp, "profile: an empty name");
		s = ARENA_PUSH(tp->a, l->v, l->n, l->cap);
		s->s = t[1].s;
		s->loc.line = tp->line;
		return 0;
	}
	if (!strcmp(k, "username")) {
		if (strchr(t[1].s, ':'))
			return fail(tp, "username: ':' cannot be part of it");
		return set_once(tp, &cr->username, t);
	}
	if (!strcmp(k, "header")) {
		if (!is_secret_header(t[1].s))
			return fail(tp, "header: '%s' cannot carry a secret", esc(tp, t[1].s));
		return set_once(tp, &cr->header, t);
	}
	if (!strcmp(k, "region") || !strcmp(k, "service")) {
		if (!is_aws_name(t[1].s))
			return fail(tp, "%s: '%s' is not [a-z0-9-]+", k, esc(tp, t[1].s));
		return set_once(tp, *k == 'r' ? &cr->region : &cr->service, t);
	}
	if (!strcmp(k, "aws-profile"))
		return *t[1].s ? set_once(tp, &cr->aws_profile, t) : fail(tp, "an empty profile");
	if (!strcmp(k, "default-profile"))
		return *t[1].s ? set_once(tp, &cr->default_profile, t)
			       : fail(tp, "an empty profile");
	return fail(tp, "unknown keyword '%s' in a credential", esc(tp, k));
}

/* At "end": does the entry hold what its type needs, and nothing it does not take? */
static int
cred_check(struct tparse *tp)
{
	const struct credential *cr = tp->cr;
	const char *type = cred_type_name(cr->type);
	bool aws = cr->type == CRED_AWS_SIGV4, dbx = cr->type == CRED_DATABRICKS_CLI;

	if (dbx != !cr->n_targets)
		return fail(tp, "%s %s", type, dbx ? "takes no target" : "needs a target");
	if (dbx != (cr->profiles.n > 0) || (!dbx && cr->default_profile.s))
		return fail(tp, "%s %s", type,
			    dbx ? "needs a profile" : "takes no profile or default-profile");
	if ((aws || dbx) == (cr->source_kind != CRED_SOURCE_NONE))
		return fail(tp, "%s %s", type, aws || dbx ? "takes no source" : "needs a source");
	if ((aws || dbx) && cr->env.n)
		return fail(tp, "%s takes no placeholder line", type);
	if (aws != (cr->region.s != NULL) || (!aws && (cr->service.s || cr->aws_profile.s)))
		return fail(tp, "%s %s", type,
			    aws ? "needs a region" : "takes no region, service or aws-profile");
	if (!aws && (cr->aws_key_id.kind || cr->aws_secret.kind || cr->aws_token.kind))
		return fail(tp, "%s takes no aws key source", type);
	if (aws && !cr->aws_profile.s == !(cr->aws_key_id.kind && cr->aws_secret.kind))
		return fail(tp, "aws_sigv4 needs either aws-profile or aws-key-id and aws-secret");
	if (aws && cr->aws_profile.s && cr->aws_token.kind)
		return fail(tp, "aws_sigv4 with aws-profile takes no aws-token");
	if (cr->header.s && cr->type != CRED_HTTPS_BEARER)
		return fail(tp, "%s takes no header", type);
	if (cr->refresh_interval.present && cr->source_kind != CRED_SOURCE_FILE &&
	    cr->source_kind != CRED_SOURCE_UNIX_SOCKET)
		return fail(tp, "refresh needs a file or unix_socket source");
	tp->cr = NULL;
	return 0;
}

/* "credential LINE TYPE": a new entry. */
static int
cred_start(struct tparse *tp, const struct tok *t, size_t n)
{
	unsigned long line;
	int type;

	if (shape(tp, t, n, "ww") < 0 ||
	    number(tp, &t[1], "credential line", 1, UINT32_MAX, &line) < 0 ||
	    (type = one_of(tp, &t[2], "credential type", type_name, CRED_AWS_SIGV4 + 1)) < 0)
		return -1;
	tp->cr = ARENA_PUSH(tp->a, tp->sb->creds, tp->sb->n_creds, tp->sb->cap_creds);
	tp->cr->type = (enum cred_type)type;
	tp->cr->loc.line = (uint32_t)line;
	return 0;
}

/* "rule LINE "RULE"": read with the compiler's grammar. */
static int
rule_line(struct tparse *tp, const struct tok *t, size_t n)
{
	struct egress_rule r;
	struct egress_error e;
	unsigned long line;

	if (shape(tp, t, n, "wq") < 0 || number(tp, &t[1], "rule line", 1, UINT32_MAX, &line) < 0)
		return -1;
	if (egress_parse_rule(tp->a, t[2].s, strlen(t[2].s), &r, &e) < 0)
		return fail(tp, "rule \"%s\": %s (at byte %zu)", esc(tp, t[2].s),
			    esc(tp, e.message), e.offset + 1);
	r.loc = (struct loc){(uint32_t)line, 0, 0};
	*ARENA_PUSH(tp->a, tp->sb->egress, tp->sb->n_egress, tp->sb->cap_egress) = r;
	return 0;
}

/* One line outside a credential. */
static int
top_line(struct tparse *tp, const struct tok *t, size_t n)
{
	const char *k = t[0].s;

	if (!strcmp(k, "rule"))
		return rule_line(tp, t, n);
	if (!strcmp(k, "credential"))
		return cred_start(tp, t, n);
	if (!strcmp(k, "private-destinations")) {
		if (shape(tp, t, n, "w") < 0)
			return -1;
		if (strcmp(t[1].s, "allowed") && strcmp(t[1].s, "refused"))
			return fail(tp, "private-destinations is 'allowed' or 'refused', not '%s'",
				    esc(tp, t[1].s));
		if (tp->seen_private)
			return fail(tp, "'private-destinations' is given twice");
		tp->sb->egress_allow_private.value = !strcmp(t[1].s, "allowed");
		tp->sb->egress_allow_private.loc.line = tp->line;
		tp->seen_private = true;
		return 0;
	}
	if (shape(tp, t, n, "q") < 0)
		return -1;
	if (!strcmp(k, "policy")) {
		if (tp->seen_policy)
			return fail(tp, "'policy' is given twice");
		tp->p->source = t[1].s;
		tp->seen_policy = true;
		return 0;
	}
	if (!strcmp(k, "terminal")) {
		struct terminal *term;

		if (tp->p->terminal)
			return fail(tp, "'terminal' is given twice");
		term =
		    ARENA_PUSH(tp->a, tp->p->terminals, tp->p->n_terminals, tp->p->cap_terminals);
		term->name = t[1].s;
		tp->p->terminal = term;
		return 0;
	}
	if (!strcmp(k, "passthrough")) {
		struct ir_str *s;

		if (!*t[1].s || strchr(t[1].s, '='))
			return fail(tp, "passthrough: '%s' is not a variable name",
				    esc(tp, t[1].s));
		s = ARENA_PUSH(tp->a, tp->sb->env_passthrough.v, tp->sb->env_passthrough.n,
			       tp->sb->env_passthrough.cap);
		s->s = t[1].s;
		s->loc.line = tp->line;
		return 0;
	}
	return fail(tp, "unknown keyword '%s'", esc(tp, k));
}

/* The first line: the format and its version. */
static int
header_line(struct tparse *tp, const char *line, size_t len)
{
	size_t m = strlen(EGRESS_TABLE_MAGIC);
	char want[64];

	snprintf(want, sizeof(want), "%s %d", EGRESS_TABLE_MAGIC, EGRESS_TABLE_VERSION);
	if (len == strlen(want) && !memcmp(line, want, len))
		return 0;
	if (len > m && !memcmp(line, EGRESS_TABLE_MAGIC " ", m + 1))
		return fail(
		    tp, "version '%s' of the table is not read here (this reads version %d)",
		    esc(tp, arena_strndup(tp->a, line + m + 1, len - m - 1)), EGRESS_TABLE_VERSION);
	return fail(tp,
		    "not an egress table (the first line is not '%s'; "
		    "omnibox-compile --emit=egress-table writes one)",
		    want);
}

/* One line of the body. */
static int
body_line(struct tparse *tp, const char *line, size_t len)
{
	struct tok t[TABLE_MAX_TOKENS];
	size_t n, i = 0;

	while (i < len && line[i] == ' ')
		i++;
	if (i == len || line[i] == '#')
		return 0;
	if (memchr(line, '\0', len) || memchr(line, '\r', len) || memchr(line, '\t', len))
		return fail(tp, "a NUL, carriage return or tab in the line");
	if (tokenize(tp, line + i, len - i, t, &n) < 0)
		return -1;
	if (t[0].quoted)
		return fail(tp, "a line starts with a keyword, not a string");
	if (!tp->cr)
		return top_line(tp, t, n);
	if (!strcmp(t[0].s, "end"))
		return n == 1 ? cred_check(tp) : fail(tp, "'end' takes nothing after it");
	return cred_line(tp, t, n);
}

struct policy *
egress_table_parse(struct arena *a, const char *name, const char *text, size_t len, char *err,
		   size_t errlen)
{
	struct tparse tp = {a, name, 0, err, errlen, NULL, NULL, NULL, false, false};
	const char *p = text, *end = text + len;

	tp.p = arena_alloc(a, sizeof(*tp.p));
	tp.p->has_os_env = true;
	tp.sb = &tp.p->os_env.sandbox;
	if (!len) {
		tp.line = 1;
		fail(&tp, "empty: not an egress table");
		return NULL;
	}
	if (end[-1] != '\n') {
		tp.line = 1;
		for (const char *c = text; c < end; c++)
			tp.line += *c == '\n';
		fail(&tp, "the last line has no line break (the table was cut short?)");
		return NULL;
	}
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = (size_t)(nl - p);

		tp.line++;
		if ((tp.line == 1 ? header_line(&tp, p, n) : body_line(&tp, p, n)) < 0)
			return NULL;
		p = nl + 1;
	}
	tp.line++;
	if (tp.cr) {
		fail(&tp, "the credential of line %u has no 'end'", tp.cr->loc.line);
		return NULL;
	}
	if (!tp.seen_policy || !tp.seen_private) {
		fail(&tp, "no '%s' line", tp.seen_policy ? "private-destinations" : "policy");
		return NULL;
	}
	return tp.p;
}

/* Add NAME to the list unless it is there. */
static void
add_name(struct arena *a, const char ***names, size_t *n, size_t *cap, const char *name)
{
	for (size_t i = 0; i < *n; i++)
		if (!strcmp((*names)[i], name))
			return;
	*ARENA_PUSH(a, *names, *n, *cap) = name;
}

size_t
egress_table_placeholder_names(struct arena *a, const struct sandbox *sb, const char ***names)
{
	size_t n = 0, cap = 0;
	bool token = false;

	*names = NULL;
	for (size_t i = 0; i < sb->n_creds; i++) {
		const struct credential *cr = &sb->creds[i];

		if (cr->type != CRED_AWS_SIGV4) {
			if (cr->type != CRED_DATABRICKS_CLI)
				for (size_t k = 0; k < cr->env.n; k++)
					add_name(a, names, &n, &cap, cr->env.v[k].s);
			continue;
		}
		add_name(a, names, &n, &cap, "AWS_ACCESS_KEY_ID");
		add_name(a, names, &n, &cap, "AWS_SECRET_ACCESS_KEY");
		token = token || cr->aws_token.kind != CRED_SOURCE_NONE || cr->aws_profile.s;
	}
	if (token)
		add_name(a, names, &n, &cap, "AWS_SESSION_TOKEN");
	return n;
}
