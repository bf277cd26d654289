/*
 * sbpl_check.c - a strict reader of the SBPL that omnibox writes.
 */
#include "sbpl_check.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Seatbelt's operation names (macOS 10.15 and later). */
static const char *const operations[] = {
    "default",
    "file*",
    "file-chroot",
    "file-clone",
    "file-ioctl",
    "file-issue-extension",
    "file-link",
    "file-lock",
    "file-map-executable",
    "file-mknod",
    "file-mount",
    "file-mount-update",
    "file-read*",
    "file-read-data",
    "file-read-metadata",
    "file-read-xattr",
    "file-revoke",
    "file-search",
    "file-test-existence",
    "file-unmount",
    "file-write*",
    "file-write-acl",
    "file-write-create",
    "file-write-data",
    "file-write-finderinfo",
    "file-write-flags",
    "file-write-mode",
    "file-write-owner",
    "file-write-setugid",
    "file-write-times",
    "file-write-unlink",
    "file-write-xattr",
    "iokit*",
    "iokit-get-properties",
    "iokit-issue-extension",
    "iokit-open",
    "iokit-set-properties",
    "ipc*",
    "ipc-posix*",
    "ipc-posix-issue-extension",
    "ipc-posix-sem",
    "ipc-posix-sem-create",
    "ipc-posix-sem-open",
    "ipc-posix-sem-post",
    "ipc-posix-sem-unlink",
    "ipc-posix-sem-wait",
    "ipc-posix-shm",
    "ipc-posix-shm*",
    "ipc-posix-shm-read*",
    "ipc-posix-shm-read-data",
    "ipc-posix-shm-read-metadata",
    "ipc-posix-shm-write*",
    "ipc-posix-shm-write-create",
    "ipc-posix-shm-write-data",
    "ipc-posix-shm-write-unlink",
    "ipc-sysv*",
    "ipc-sysv-msg",
    "ipc-sysv-sem",
    "ipc-sysv-shm",
    "job-creation",
    "lsopen",
    "mach*",
    "mach-bootstrap",
    "mach-cross-domain-lookup",
    "mach-host*",
    "mach-host-exception-port-set",
    "mach-host-special-port-set",
    "mach-issue-extension",
    "mach-lookup",
    "mach-per-user-lookup",
    "mach-priv*",
    "mach-priv-host-port",
    "mach-priv-task-port",
    "mach-register",
    "mach-task-name",
    "network*",
    "network-bind",
    "network-inbound",
    "network-outbound",
    "nvram*",
    "nvram-delete",
    "nvram-get",
    "nvram-set",
    "process*",
    "process-codesigning-status*",
    "process-exec*",
    "process-exec-interpreter",
    "process-fork",
    "process-info*",
    "process-info-codesignature",
    "process-info-dirtycontrol",
    "process-info-listpids",
    "process-info-pidinfo",
    "process-info-pidfdinfo",
    "process-info-pidfileportinfo",
    "process-info-rusage",
    "process-info-setcontrol",
    "pseudo-tty",
    "signal",
    "sysctl*",
    "sysctl-read",
    "sysctl-write",
    "system*",
    "system-acct",
    "system-audit",
    "system-chud",
    "system-debug",
    "system-fsctl",
    "system-info",
    "system-kext*",
    "system-kext-load",
    "system-kext-unload",
    "system-mac-label",
    "system-nfssvc",
    "system-privilege",
    "system-reboot",
    "system-sched",
    "system-set-time",
    "system-socket",
    "system-suspend-resume",
    "system-swap",
    "user-preference*",
    "user-preference-read",
    "user-preference-write",
    NULL,
};

static const char *const vnode_types[] = {"REGULAR-FILE", "DIRECTORY", "SYMLINK",
					  "FIFO",	  "SOCKET",    "CHARACTER-DEVICE",
					  "BLOCK-DEVICE", "TTY",       NULL};

bool
sbpl_known_operation(const char *name)
{
	for (size_t i = 0; operations[i]; i++)
		if (!strcmp(operations[i], name))
			return true;
	return false;
}

static bool
in_list(const char *const *list, const char *s)
{
	for (size_t i = 0; list[i]; i++)
		if (!strcmp(list[i], s))
			return true;
	return false;
}

/* ---- S-expressions ---------------------------------------------------------- */

enum sx_kind { SX_LIST, SX_SYMBOL, SX_STRING };

struct sx {
	enum sx_kind kind;
	const char *text; /* symbol or string (unescaped) */
	struct sx **v;	  /* list items */
	size_t n, cap;
	unsigned line;
};

struct reader {
	struct arena *a;
	const char *p, *end;
	unsigned line;
	char *err;
	size_t errlen;
	bool failed;
	const struct sbpl_param_value *params;
	size_t n_params;
	struct sbpl_profile *prof;
};

static void fail(struct reader *r, unsigned line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
fail(struct reader *r, unsigned line, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (r->failed)
		return;
	r->failed = true;
	n = snprintf(r->err, r->errlen, "line %u: ", line);
	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < r->errlen)
		vsnprintf(r->err + n, r->errlen - (size_t)n, fmt, ap);
	va_end(ap);
}

static void
skip_space(struct reader *r)
{
	while (r->p < r->end) {
		if (*r->p == '\n') {
			r->line++;
			r->p++;
		} else if (*r->p == ' ' || *r->p == '\t' || *r->p == '\r') {
			r->p++;
		} else if (*r->p == ';') {
			while (r->p < r->end && *r->p != '\n')
				r->p++;
		} else {
			break;
		}
	}
}

static struct sx *
new_sx(struct reader *r, enum sx_kind kind)
{
	struct sx *x = arena_alloc(r->a, sizeof(*x));

	x->kind = kind;
	x->line = r->line;
	return x;
}

static struct sx *read_sx(struct reader *r, unsigned depth);

static struct sx *
read_string(struct reader *r, bool raw)
{
	struct sx *x = new_sx(r, SX_STRING);
	char *buf = arena_alloc(r->a, (size_t)(r->end - r->p) + 1), *w = buf;

	r->p++; /* the quote */
	while (r->p < r->end && *r->p != '"') {
		unsigned char c = (unsigned char)*r->p;

		if (c < 0x20 || c == 0x7f) {
			fail(r, r->line, "control byte 0x%02x in a string", c);
			return NULL;
		}
		if (c == '\\' && !raw) {
			r->p++;
			if (r->p == r->end || (*r->p != '\\' && *r->p != '"')) {
				fail(r, r->line, "unknown escape in a string");
				return NULL;
			}
		}
		*w++ = *r->p++;
	}
	if (r->p == r->end) {
		fail(r, x->line, "unterminated string");
		return NULL;
	}
	r->p++;
	*w = '\0';
	x->text = buf;
	return x;
}

static struct sx *
read_sx(struct reader *r, unsigned depth)
{
	struct sx *x;

	skip_space(r);
	if (r->p == r->end)
		return NULL;
	if (depth > 64) {
		fail(r, r->line, "forms nested too deeply");
		return NULL;
	}
	if (*r->p == '(') {
		x = new_sx(r, SX_LIST);
		r->p++;
		for (;;) {
			struct sx *item;

			skip_space(r);
			if (r->p == r->end) {
				fail(r, x->line, "unbalanced: '(' is never closed");
				return NULL;
			}
			if (*r->p == ')') {
				r->p++;
				return x;
			}
			item = read_sx(r, depth + 1);
			if (!item)
				return NULL;
			*ARENA_PUSH(r->a, x->v, x->n, x->cap) = item;
		}
	}
	if (*r->p == ')') {
		fail(r, r->line, "unbalanced: ')' closes nothing");
		return NULL;
	}
	if (*r->p == '"')
		return read_string(r, false);
	if (*r->p == '#' && r->p + 1 < r->end && r->p[1] == '"') {
		r->p++;
		return read_string(r, true);
	}
	{
		const char *s = r->p;

		while (r->p < r->end && !strchr(" \t\r\n();\"", *r->p)) {
			if ((unsigned char)*r->p < 0x20 || *r->p == 0x7f) {
				fail(r, r->line, "control byte in a symbol");
				return NULL;
			}
			r->p++;
		}
		x = new_sx(r, SX_SYMBOL);
		x->text = arena_strndup(r->a, s, (size_t)(r->p - s));
		return x;
	}
}

/* ---- string expressions ------------------------------------------------------ */

static bool
is_sym(const struct sx *x, const char *name)
{
	return x && x->kind == SX_SYMBOL && !strcmp(x->text, name);
}

static const char *
eval_string(struct reader *r, const struct sx *x)
{
	if (x->kind == SX_STRING)
		return x->text;
	if (x->kind == SX_LIST && x->n == 2 && is_sym(x->v[0], "param")) {
		if (x->v[1]->kind != SX_STRING) {
			fail(r, x->line, "param takes a string");
			return NULL;
		}
		for (size_t i = 0; i < r->n_params; i++)
			if (!strcmp(r->params[i].name, x->v[1]->text))
				return r->params[i].value;
		fail(r, x->line, "parameter '%s' is not defined", x->v[1]->text);
		return NULL;
	}
	if (x->kind == SX_LIST && x->n >= 2 && is_sym(x->v[0], "string-append")) {
		char *acc = arena_strdup(r->a, "");

		for (size_t i = 1; i < x->n; i++) {
			const char *s = eval_string(r, x->v[i]);

			if (!s)
				return NULL;
			acc = arena_printf(r->a, "%s%s", acc, s);
		}
		return acc;
	}
	fail(r, x->line, "expected a string, (param \"NAME\") or (string-append ...)");
	return NULL;
}

/* An absolute path as the kernel reports it: no "//", "/./", "/../", trailing '/'. */
static bool
canonical_path(const char *s)
{
	size_t n = strlen(s);

	if (s[0] != '/')
		return false;
	if (n > 1 && s[n - 1] == '/')
		return false;
	for (const char *p = s; *p; p++)
		if (p[0] == '/' && (p[1] == '/' || (p[1] == '.' && (p[2] == '/' || p[2] == '\0')) ||
				    (p[1] == '.' && p[2] == '.' && (p[3] == '/' || p[3] == '\0'))))
			return false;
	for (const char *p = s; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return false;
	return true;
}

/* "localhost:PORT" or "*:PORT", PORT 1..65535 or "*". */
static bool
valid_address(const char *s)
{
	const char *colon = strrchr(s, ':');
	const char *port;
	long v = 0;

	if (!colon)
		return false;
	if (!((colon - s == 9 && !strncmp(s, "localhost", 9)) || (colon - s == 1 && s[0] == '*')))
		return false;
	port = colon + 1;
	if (!strcmp(port, "*"))
		return true;
	if (!*port || strlen(port) > 5)
		return false;
	for (const char *p = port; *p; p++) {
		if (*p < '0' || *p > '9')
			return false;
		v = v * 10 + (*p - '0');
	}
	return port[0] != '0' && v >= 1 && v <= 65535;
}

/* ---- rules ------------------------------------------------------------------- */

enum category { CAT_NONE, CAT_FILE, CAT_NETWORK, CAT_TARGET, CAT_OTHER };

static enum category
op_category(const char *op)
{
	if (!strncmp(op, "file", 4))
		return CAT_FILE;
	if (!strncmp(op, "network", 7))
		return CAT_NETWORK;
	if (!strcmp(op, "signal") || !strncmp(op, "process-info", 12))
		return CAT_TARGET;
	return CAT_OTHER;
}

static struct sbpl_filter *read_filter(struct reader *r, const struct sx *x, enum category cat);

static struct sbpl_filter *
new_filter(struct reader *r, enum sbpl_filter_kind kind, const char *s)
{
	struct sbpl_filter *f = arena_alloc(r->a, sizeof(*f));

	f->kind = kind;
	f->s = s;
	return f;
}

static struct sbpl_filter *
read_path_filter(struct reader *r, const struct sx *x, const char *name)
{
	const char *s;
	struct sbpl_filter *f;

	if (x->n != 2) {
		fail(r, x->line, "(%s PATH) takes one path", name);
		return NULL;
	}
	s = eval_string(r, x->v[1]);
	if (!s)
		return NULL;
	if (!strcmp(name, "regex")) {
		int rc;

		if (strncmp(s, "^/", 2)) {
			fail(r, x->line,
			     "regex \"%s\" is not anchored at an absolute path (\"^/...\")", s);
			return NULL;
		}
		f = new_filter(r, SBPL_F_REGEX, s);
		rc = regcomp(&f->re, s, REG_EXTENDED | REG_NOSUB);
		if (rc) {
			char msg[128];

			regerror(rc, &f->re, msg, sizeof(msg));
			fail(r, x->line, "regex \"%s\": %s", s, msg);
			return NULL;
		}
		*ARENA_PUSH(r->a, r->prof->regexes, r->prof->n_regexes, r->prof->cap_regexes) = f;
		return f;
	}
	if (!canonical_path(s)) {
		fail(r, x->line, "(%s \"%s\"): not an absolute, canonical path", name, s);
		return NULL;
	}
	return new_filter(r, !strcmp(name, "literal") ? SBPL_F_LITERAL : SBPL_F_SUBPATH, s);
}

static struct sbpl_filter *
read_network_filter(struct reader *r, const struct sx *x, bool local)
{
	const char *s;

	if (x->n != 3 || x->v[1]->kind != SX_SYMBOL) {
		fail(r, x->line, "(%s KIND ADDRESS) expected", local ? "local" : "remote");
		return NULL;
	}
	if (!local && is_sym(x->v[1], "unix-socket")) {
		const struct sx *pl = x->v[2];

		if (pl->kind != SX_LIST || pl->n != 2 || !is_sym(pl->v[0], "path-literal")) {
			fail(r, x->line, "(remote unix-socket (path-literal PATH)) expected");
			return NULL;
		}
		s = eval_string(r, pl->v[1]);
		if (!s)
			return NULL;
		if (!canonical_path(s)) {
			fail(r, x->line, "unix socket \"%s\": not an absolute, canonical path", s);
			return NULL;
		}
		return new_filter(r, SBPL_F_REMOTE_UNIX, s);
	}
	if (!is_sym(x->v[1], "ip") && !is_sym(x->v[1], "tcp") && !is_sym(x->v[1], "udp")) {
		fail(r, x->line, "unknown address kind '%s'", x->v[1]->text);
		return NULL;
	}
	s = eval_string(r, x->v[2]);
	if (!s)
		return NULL;
	if (!valid_address(s)) {
		fail(r, x->line,
		     "network address \"%s\": Seatbelt accepts only localhost or * with a port", s);
		return NULL;
	}
	return new_filter(r, local ? SBPL_F_LOCAL : SBPL_F_REMOTE, s);
}

static struct sbpl_filter *
read_filter(struct reader *r, const struct sx *x, enum category cat)
{
	const char *name;
	struct sbpl_filter *f;

	if (x->kind != SX_LIST || !x->n || x->v[0]->kind != SX_SYMBOL) {
		fail(r, x->line, "expected a filter");
		return NULL;
	}
	name = x->v[0]->text;
	if (!strcmp(name, "require-all") || !strcmp(name, "require-any") ||
	    !strcmp(name, "require-not")) {
		bool not = !strcmp(name, "require-not");

		if (x->n < 2 || (not &&x->n != 2)) {
			fail(r, x->line, "(%s ...) needs %s", name, not ? "one filter" : "filters");
			return NULL;
		}
		f = new_filter(r,
			       not			      ? SBPL_F_NOT
			       : !strcmp(name, "require-all") ? SBPL_F_ALL
							      : SBPL_F_ANY,
			       NULL);
		for (size_t i = 1; i < x->n; i++) {
			struct sbpl_filter *k = read_filter(r, x->v[i], cat);

			if (!k)
				return NULL;
			*ARENA_PUSH(r->a, f->kids, f->n_kids, f->cap_kids) = k;
		}
		return f;
	}
	if (!strcmp(name, "literal") || !strcmp(name, "subpath") || !strcmp(name, "regex")) {
		if (cat != CAT_FILE) {
			fail(r, x->line,
			     "a path filter (%s) on an operation that is not a file one", name);
			return NULL;
		}
		return read_path_filter(r, x, name);
	}
	if (!strcmp(name, "vnode-type")) {
		if (cat != CAT_FILE || x->n != 2 || x->v[1]->kind != SX_SYMBOL ||
		    !in_list(vnode_types, x->v[1]->text)) {
			fail(r, x->line,
			     "(vnode-type TYPE) with a known type, on a file operation");
			return NULL;
		}
		return new_filter(r, SBPL_F_VNODE, x->v[1]->text);
	}
	if (!strcmp(name, "local") || !strcmp(name, "remote")) {
		if (cat != CAT_NETWORK) {
			fail(r, x->line,
			     "a network filter (%s) on an operation that is not a "
			     "network one",
			     name);
			return NULL;
		}
		return read_network_filter(r, x, !strcmp(name, "local"));
	}
	if (!strcmp(name, "target")) {
		if (cat != CAT_TARGET || x->n != 2 || !is_sym(x->v[1], "self")) {
			fail(r, x->line, "(target self) on signal or process-info only");
			return NULL;
		}
		return new_filter(r, SBPL_F_TARGET_SELF, NULL);
	}
	fail(r, x->line, "unknown filter '%s'", name);
	return NULL;
}

static void
read_rule(struct reader *r, const struct sx *x, bool *seen_default)
{
	struct sbpl_rule rule = {0};
	enum category cat = CAT_NONE;
	size_t i = 1;

	rule.allow = is_sym(x->v[0], "allow");
	rule.line = x->line;
	for (; i < x->n && x->v[i]->kind == SX_SYMBOL; i++) {
		const char *op = x->v[i]->text;
		enum category c;

		if (!sbpl_known_operation(op)) {
			fail(r, x->line, "unknown operation '%s'", op);
			return;
		}
		c = op_category(op);
		if (cat != CAT_NONE && c != cat) {
			fail(r, x->line,
			     "'%s' does not take the same filters as the operations "
			     "before it",
			     op);
			return;
		}
		cat = c;
		*ARENA_PUSH(r->a, rule.ops, rule.n_ops, rule.cap_ops) = op;
	}
	if (!rule.n_ops) {
		fail(r, x->line, "a rule without an operation");
		return;
	}
	if (rule.n_ops == 1 && !strcmp(rule.ops[0], "default")) {
		if (rule.allow || x->n != 2) {
			fail(r, x->line, "only a bare (deny default) is allowed");
			return;
		}
		if (*seen_default) {
			fail(r, x->line, "(deny default) twice");
			return;
		}
		*seen_default = true;
		return;
	}
	for (size_t k = 0; k < rule.n_ops; k++)
		if (!strcmp(rule.ops[k], "default")) {
			fail(r, x->line, "default mixed with other operations");
			return;
		}
	if (!*seen_default) {
		fail(r, x->line, "a rule before (deny default)");
		return;
	}
	for (; i < x->n; i++) {
		struct sbpl_filter *f;

		if (x->v[i]->kind != SX_LIST) {
			fail(r, x->v[i]->line, "'%s' after the filters of a rule",
			     x->v[i]->text ? x->v[i]->text : "?");
			return;
		}
		if (cat == CAT_OTHER) {
			fail(r, x->line, "'%s' takes no filter here", rule.ops[0]);
			return;
		}
		f = read_filter(r, x->v[i], cat);
		if (!f)
			return;
		*ARENA_PUSH(r->a, rule.filters, rule.n_filters, rule.cap_filters) = f;
	}
	*ARENA_PUSH(r->a, r->prof->rules, r->prof->n_rules, r->prof->cap_rules) = rule;
}

struct sbpl_profile *
sbpl_profile_load(const char *text, size_t len, const struct sbpl_param_value *params, size_t n,
		  char *err, size_t errlen)
{
	struct arena *a = arena_new();
	struct sbpl_profile *prof = arena_alloc(a, sizeof(*prof));
	struct reader r = {.a = a,
			   .p = text,
			   .end = text + len,
			   .line = 1,
			   .err = err,
			   .errlen = errlen,
			   .params = params,
			   .n_params = n,
			   .prof = prof};
	bool seen_version = false, seen_default = false;

	prof->arena = a;
	if (errlen)
		err[0] = '\0';
	if (memchr(text, '\0', len))
		fail(&r, 1, "a NUL byte in the profile");
	while (!r.failed) {
		struct sx *x = read_sx(&r, 0);

		if (!x)
			break;
		if (x->kind != SX_LIST || !x->n || x->v[0]->kind != SX_SYMBOL) {
			fail(&r, x->line,
			     "a top-level form must be (version 1), (allow ...) or "
			     "(deny ...)");
			break;
		}
		if (is_sym(x->v[0], "version")) {
			if (seen_version || x->n != 2 || !is_sym(x->v[1], "1"))
				fail(&r, x->line, "(version 1) must come once, first");
			seen_version = true;
			continue;
		}
		if (!seen_version) {
			fail(&r, x->line, "(version 1) must come first");
			break;
		}
		if (!is_sym(x->v[0], "allow") && !is_sym(x->v[0], "deny")) {
			fail(&r, x->line, "unknown form '%s'", x->v[0]->text);
			break;
		}
		read_rule(&r, x, &seen_default);
	}
	if (!r.failed && !seen_version)
		fail(&r, r.line, "no (version 1)");
	if (!r.failed && !seen_default)
		fail(&r, r.line, "no (deny default)");
	if (r.failed) {
		sbpl_profile_free(prof);
		return NULL;
	}
	return prof;
}

void
sbpl_profile_free(struct sbpl_profile *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n_regexes; i++)
		regfree(&p->regexes[i]->re);
	arena_free(p->arena);
}

int
sbpl_check(const char *text, size_t len, const struct sbpl_param_value *params, size_t n, char *err,
	   size_t errlen)
{
	struct sbpl_profile *p = sbpl_profile_load(text, len, params, n, err, errlen);

	if (!p)
		return -1;
	sbpl_profile_free(p);
	return 0;
}

void
sbpl_profile_order(const struct sbpl_profile *p, unsigned *first_deny, unsigned *last_allow)
{
	*first_deny = *last_allow = 0;
	for (size_t i = 0; i < p->n_rules; i++) {
		if (p->rules[i].allow)
			*last_allow = p->rules[i].line;
		else if (!*first_deny)
			*first_deny = p->rules[i].line;
	}
}

static void
list_filter(FILE *f, const struct sbpl_filter *x)
{
	static const char *const kind[] = {
	    [SBPL_F_LITERAL] = "literal",
	    [SBPL_F_SUBPATH] = "subpath",
	    [SBPL_F_REGEX] = "regex",
	    [SBPL_F_VNODE] = "vnode-type",
	    [SBPL_F_LOCAL] = "local",
	    [SBPL_F_REMOTE] = "remote",
	    [SBPL_F_REMOTE_UNIX] = "unix-socket",
	};

	switch (x->kind) {
	case SBPL_F_ALL:
	case SBPL_F_ANY:
	case SBPL_F_NOT:
		for (size_t i = 0; i < x->n_kids; i++)
			list_filter(f, x->kids[i]);
		break;
	case SBPL_F_TARGET_SELF:
		break;
	case SBPL_F_VNODE:
		/* TinyScheme folds symbols to lower case. */
		fputs("vnode-type ", f);
		for (const char *p = x->s; *p; p++)
			fputc(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p, f);
		fputc('\n', f);
		break;
	default:
		fprintf(f, "%s %s\n", kind[x->kind], x->s);
	}
}

char *
sbpl_profile_listing(const struct sbpl_profile *p)
{
	char *text;
	size_t n;
	FILE *f = open_memstream(&text, &n);

	fputs("version 1\ndeny\nop default\n", f);
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct sbpl_rule *r = &p->rules[i];

		fputs(r->allow ? "allow\n" : "deny\n", f);
		for (size_t k = 0; k < r->n_ops; k++)
			fprintf(f, "op %s\n", r->ops[k]);
		for (size_t k = 0; k < r->n_filters; k++)
			list_filter(f, r->filters[k]);
	}
	fclose(f);
	return text;
}
