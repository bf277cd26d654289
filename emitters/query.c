/*
 * query.c - decisions from the IR (query.h).
 */
#include "../compiler/base/diag.h"
#include "query.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../compiler/decide/address.h"
#include "../compiler/decide/protect.h"
#include "../compiler/decide/secrets.h"
#include "../grammar/egress.h"
#include "bwrap.h"
#include "sbpl.h"
#include "winjob.h"

/* ---- parsing ------------------------------------------------------------------- */

/* BASE and REST joined, "." dropped and ".." applied within REST. */
static char *
lexical(struct arena *a, const char *base, const char *rest)
{
	char *out = arena_alloc(a, strlen(base) + strlen(rest) + 2);
	size_t n = strlen(base), floor = n;

	memcpy(out, base, n);
	while (*rest) {
		const char *seg = rest;
		size_t len;

		while (*rest && *rest != '/')
			rest++;
		len = (size_t)(rest - seg);
		if (*rest)
			rest++;
		if (!len || (len == 1 && seg[0] == '.'))
			continue;
		if (len == 2 && seg[0] == '.' && seg[1] == '.' && n > floor &&
		    strcmp(out + n - 2, "..")) {
			while (n > floor && out[n - 1] != '/')
				n--;
			n--;
			continue;
		}
		/* ".." above the base stays, as in the IR: only the machine knows
		 * where it leads. */
		if (n != 1 || out[0] != '/')
			out[n++] = '/';
		memcpy(out + n, seg, len);
		n += len;
	}
	out[n] = '\0';
	return out;
}

static int
parse_url(struct arena *a, const char *url, struct query *q, char *err, size_t errlen)
{
	const char *p, *host, *end;
	size_t hlen;

	if (!strncmp(url, "https://", 8)) {
		q->tls = true;
		p = url + 8;
	} else if (!strncmp(url, "http://", 7)) {
		p = url + 7;
	} else {
		return diag_fail(err, errlen, "'%s' is not an http:// or https:// URL", url);
	}
	host = p;
	end = p + strcspn(p, ":/?#");
	hlen = (size_t)(end - host);
	if (!hlen || !egress_host_is_safe(host, hlen))
		return diag_fail(err, errlen, "'%s' has no valid host", url);
	q->host = arena_strndup(a, host, hlen);
	for (char *h = (char *)q->host; *h; h++)
		if (*h >= 'A' && *h <= 'Z')
			*h = (char)(*h + 32);
	q->port = q->tls ? EGRESS_PORT_TLS : EGRESS_PORT_PLAIN;
	if (*end == ':') {
		char *stop;
		unsigned long port = strtoul(end + 1, &stop, 10);

		if (stop == end + 1 || port == 0 || port > 65535)
			return diag_fail(err, errlen, "'%s' has a bad port", url);
		q->port = (unsigned)port;
		end = stop;
	}
	q->target =
	    *end == '/' || *end == '?' ? arena_printf(a, "%s%s", *end == '?' ? "/" : "", end) : "/";
	return 0;
}

/* "tcp HOST:PORT": a raw stream, which only a CONNECT tunnel carries. */
static int
parse_tcp(struct arena *a, const char *arg, struct query *q, char *err, size_t errlen)
{
	const char *colon = strrchr(arg, ':');
	char *stop;
	unsigned long port;

	if (!colon || colon == arg || !egress_host_is_safe(arg, (size_t)(colon - arg)))
		return diag_fail(err, errlen, "'tcp %s': write tcp HOST:PORT", arg);
	port = strtoul(colon + 1, &stop, 10);
	if (colon[1] < '0' || colon[1] > '9' || *stop || port == 0 || port > 65535)
		return diag_fail(err, errlen, "'tcp %s' has a bad port (1 to 65535)", arg);
	q->access = QUERY_TCP;
	q->tls = true;
	q->host = arena_strndup(a, arg, (size_t)(colon - arg));
	for (char *h = (char *)q->host; *h; h++)
		if (*h >= 'A' && *h <= 'Z')
			*h = (char)(*h + 32);
	q->port = (unsigned)port;
	return 0;
}

int
query_parse(struct arena *a, const char *text, struct query *q, char *err, size_t errlen)
{
	static const char *const kinds[] = {"read", "write", "exec"};
	const char *sp = strchr(text, ' '), *arg;
	size_t klen;

	memset(q, 0, sizeof(*q));
	q->text = text;
	if (!sp)
		return diag_fail(err, errlen, "'%s': write ACCESS TARGET, e.g. 'read .env'", text);
	klen = (size_t)(sp - text);
	arg = sp;
	while (*arg == ' ')
		arg++;
	if (!*arg || strchr(arg, ' '))
		return diag_fail(err, errlen, "'%s': write ACCESS TARGET, one target", text);
	for (int k = 0; k < 3; k++)
		if (strlen(kinds[k]) == klen && !strncmp(text, kinds[k], klen)) {
			q->access = (enum query_access)k;
			if (arg[0] == '~' && (arg[1] == '/' || !arg[1]))
				q->path = lexical(a, "{HOME}", arg + 1);
			else if (arg[0] == '/')
				q->path = lexical(a, "/", arg + 1);
			else
				q->path = lexical(a, "{CWD}", arg);
			return q->path ? 0 : -1;
		}
	if (klen == 3 && !strncmp(text, "tcp", 3))
		return parse_tcp(a, arg, q, err, errlen);
	q->method = egress_method_bit(text, klen);
	if (!q->method || q->method == EGRESS_ANY)
		return diag_fail(err, errlen,
				 "'%s': ACCESS is read, write, exec, an HTTP method (GET, POST, "
				 "...) or tcp",
				 text);
	q->access = QUERY_HTTP;
	q->method_name = egress_method_name(q->method);
	return parse_url(a, arg, q, err, errlen);
}

/* ---- files ------------------------------------------------------------------- */

/* The entry of L that holds PATH (the deepest), or NULL. */
static const struct ir_path *
holder(const struct ir_pathlist *l, const char *path)
{
	const struct ir_path *best = NULL;

	for (size_t i = 0; i < l->n; i++)
		if (ir_within(path, l->v[i].symbolic) &&
		    (!best || strlen(l->v[i].symbolic) > strlen(best->symbolic)))
			best = &l->v[i];
	return best;
}

static const struct ir_path *
exact(const struct ir_pathlist *l, const char *path)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(path, l->v[i].symbolic))
			return &l->v[i];
	return NULL;
}

struct prot_find {
	struct arena *a;
	const char *path, *hit, *why;
	uint32_t line;
};

static void
prot_cb(void *arg, const struct protect_entry *e)
{
	struct prot_find *f = arg;

	/* Inside a directory of git directories, the ones that exist stay writable. */
	if (!f->hit && ir_within(f->path, e->path) &&
	    (e->hold != PROTECT_HOLD_GITDIRS || !strcmp(f->path, e->path))) {
		f->hit = arena_strdup(f->a, e->path); /* PATH lives for the call only */
		f->why = e->why;
		f->line = e->line;
	}
}

static void
set(struct decision *d, bool allowed, const char *why, uint32_t line)
{
	d->allowed = allowed;
	d->enforced = true;
	d->own = false;
	d->why = why;
	d->line = line;
}

/* Allowed, in the sandbox's own storage. */
static void
set_own(struct decision *d, const char *why, uint32_t line)
{
	set(d, true, why, line);
	d->own = true;
}

static bool
is_system(enum target t, const char *path)
{
	if (path[0] != '/')
		return false;
	return t == TARGET_DARWIN ? paths_darwin_system(path) : paths_linux_shown(path);
}

/* Is PATH in the private home of a Linux launch (no grant holds the home itself)? */
static bool
private_home(const struct policy *p, enum target t, const char *path)
{
	return t == TARGET_LINUX && ir_within(path, "{HOME}") && !bwrap_home_written(p);
}

static void
decide_file(struct arena *a, const struct policy *p, enum target t, const struct query *q,
	    struct decision *d)
{
	const struct sandbox *sb = &p->os_env.sandbox;
	const struct ir_path *g, *w = NULL, *cow;
	const char *hid, *path = q->path;
	bool ws_writable = exact(&sb->write_paths, "{CWD}") != NULL;
	/* linux_landlock mounts nothing: no /tmp of its own, HOME elsewhere. */
	bool landlock = t == TARGET_LINUX && sb->type == SANDBOX_LINUX_LANDLOCK;
	/* Linux mounts a fresh /tmp; macOS has the scratch dir alone. */
	bool scratch = ir_within(path, "{SCRATCH}") ||
		       (t == TARGET_LINUX && !landlock && ir_within(path, "/tmp"));

	if ((g = holder(&sb->mask_paths, path)))
		return set(d, false, arena_printf(a, "mask_paths %s", g->written), g->loc.line);
	if (!scratch && (hid = sandbox_hidden_dotfile(a, sb, "{CWD}", path)))
		return set(
		    d, false,
		    arena_printf(a, "dotfile %s is hidden (cwd_allow_hidden%s)", hid,
				 sb->cwd_allow_hidden.loc.line ? "" : ": the default [.venv]"),
		    sb->cwd_allow_hidden.loc.line);
	cow = holder(&sb->cow_paths, path);
	if (q->access == QUERY_WRITE) {
		const char *roots[256];
		size_t n = protect_symbolic_roots(sb, roots, 256);
		struct prot_find f = {.a = a, .path = path};

		protect_each(sb, roots, n, "{HOME}", prot_cb, &f);
		if (f.hit && !cow)
			return set(d, false,
				   f.line ? arena_printf(a, "protect_paths %s", f.hit)
					  : arena_printf(a, "protected path %s: %s", f.hit, f.why),
				   f.line ? f.line : sb->write_paths.loc.line);
		if (scratch)
			return set_own(d,
				       t == TARGET_LINUX
					   ? "the private scratch dir, or the sandbox's own /tmp"
					   : "the private scratch dir",
				       0);
		if (cow)
			return set_own(
			    d,
			    arena_printf(a,
					 "write_paths %s, copy-on-write: a private copy; the "
					 "host's is not written",
					 cow->written),
			    cow->loc.line);
		if ((w = holder(&sb->write_paths, path)) && strcmp(w->symbolic, "{CWD}"))
			return set(d, true, arena_printf(a, "write_paths %s", w->written),
				   w->loc.line);
		if ((g = exact(&sb->write_files, path)))
			return set(d, true, arena_printf(a, "write_files %s", g->written),
				   g->loc.line);
		if (ws_writable && ir_within(path, "{CWD}"))
			return set(d, true, "the workspace, writable (write_paths .)",
				   exact(&sb->write_paths, "{CWD}")->loc.line);
		if (is_system(t, path))
			return set(d, false, "system directories are read-only", 0);
		if (ir_within(path, "{CWD}"))
			return set(d, false,
				   "the workspace is read-only (no write_paths entry names it)", 0);
		if ((g = holder(&sb->read_paths, path)))
			return set(d, false,
				   arena_printf(a, "read_paths %s is read-only", g->written),
				   g->loc.line);
		if (private_home(p, t, path) && landlock)
			return set(d, false,
				   "linux_landlock: the private home is a directory of the scratch "
				   "dir ($HOME names it); the home's own path shows only the grants",
				   0);
		if (private_home(p, t, path))
			return set_own(d,
				       "the private home: written in the launch's scratch dir and "
				       "discarded at exit; nothing reaches the host's home",
				       0);
		return set(d, false, "not granted (default deny)", 0);
	}
	if (scratch)
		return set(d, true,
			   t == TARGET_LINUX ? "the private scratch dir, or the sandbox's own /tmp"
					     : "the private scratch dir",
			   0);
	if (cow)
		return set(d, true, arena_printf(a, "write_paths %s (its copy)", cow->written),
			   cow->loc.line);
	if (ir_within(path, "{CWD}"))
		return set(d, true,
			   ws_writable ? "the workspace, writable" : "the workspace, read-only", 0);
	if ((g = holder(&sb->write_paths, path)))
		return set(d, true, arena_printf(a, "write_paths %s", g->written), g->loc.line);
	if ((g = exact(&sb->write_files, path)))
		return set(d, true, arena_printf(a, "write_files %s", g->written), g->loc.line);
	if ((g = holder(&sb->read_paths, path)))
		return set(d, true, arena_printf(a, "read_paths %s", g->written), g->loc.line);
	if (is_system(t, path))
		return set(d, true, "system directories, read-only", 0);
	if (private_home(p, t, path))
		return set(d, false,
			   "the private home holds nothing of the host's home (read_paths grants "
			   "what it should see)",
			   0);
	return set(d, false, "not granted (default deny)", 0);
}

/* ---- HTTP and TCP ------------------------------------------------------------- */

/* Without egress rules: the network is off, or on and unfiltered. */
static void
decide_unfiltered(const struct sandbox *sb, enum target t, struct decision *d)
{
	if (!sb->allow_network.value) {
		set(d, false, "allow_network: false", sb->allow_network.loc.line);
		d->enforced = t != TARGET_WINDOWS;
		if (!d->enforced)
			d->why = "allow_network: false is not enforced: a Job Object has no "
				 "network control";
		return;
	}
	set(d, true,
	    sb->egress_present ? "egress_rules is empty: no filtering, the network is on"
			       : "the network is on (allow_network)",
	    sb->egress_present ? sb->egress_loc.line : sb->allow_network.loc.line);
}

/*
 * Rule I allows the query; refuse it when the host is an IPv4 literal the
 * proxy refuses.  True when refused.
 */
static bool
refused_address(struct arena *a, const struct sandbox *sb, const char *host, ssize_t i,
		struct decision *d)
{
	const char *bad = NULL;
	uint8_t v4[4];

	if (address_classify_host(host, strlen(host), v4, &bad) != ADDRESS_HOST_IPV4 ||
	    !(bad = address_refused_v4(v4)) || sb->egress_allow_private.value)
		return false;
	set(d, false,
	    arena_printf(a,
			 "egress rule %zd matches, but the address is in %s, refused unless "
			 "egress_allow_private_destinations: true",
			 i + 1, bad),
	    sb->egress[i].loc.line);
	return true;
}

/* Rules are checked against valid host names only; nonsense is refused. */
static bool
refused_host(struct arena *a, const struct sandbox *sb, const char *host, struct decision *d)
{
	const char *bad = NULL;
	uint8_t v4[4];

	if (address_classify_host(host, strlen(host), v4, &bad) != ADDRESS_HOST_BAD)
		return false;
	set(d, false, arena_printf(a, "the host is %s: the proxy refuses it", bad),
	    sb->egress_loc.line);
	return true;
}

/*
 * An HTTPS request that no HTTP rule allows still passes, uninspected,
 * when the CONNECT it goes through is a plain tunnel of a tcp rule.
 */
static ssize_t
match_https(const struct egress_matcher *m, const struct query *q, bool *tunnel)
{
	ssize_t i = egress_match(m, q->method_name, strlen(q->method_name), q->host,
				 strlen(q->host), q->port, q->tls ? EGRESS_PORT_TLS : EGRESS_PORT_PLAIN,
				 q->target, strlen(q->target));

	*tunnel = false;
	if (i >= 0 || !q->tls)
		return i;
	if (egress_decide_connect(m, q->host, strlen(q->host), q->port, &i) !=
	    EGRESS_CONNECT_TUNNEL)
		return -1;
	*tunnel = true;
	return i;
}

static void
decide_http(struct arena *a, const struct policy *p, enum target t, const struct query *q,
	    struct decision *d)
{
	const struct sandbox *sb = &p->os_env.sandbox;
	struct egress_matcher *m;
	ssize_t i;
	bool tunnel;
	const char *cred = "";

	if (!sb->n_egress)
		return decide_unfiltered(sb, t, d);
	if (refused_host(a, sb, q->host, d))
		return;
	if (!(m = egress_matcher_new(sb->egress, sb->n_egress)))
		abort();
	i = match_https(m, q, &tunnel);
	egress_matcher_free(m);
	if (i < 0)
		return set(d, false, "no egress rule matches (default deny)", sb->egress_loc.line);
	if (refused_address(a, sb, q->host, i, d))
		return;
	if (tunnel)
		return set(d, true,
			   arena_printf(a,
					"egress rule %zd (tcp): a plain tunnel, the request is not "
					"inspected",
					i + 1),
			   sb->egress[i].loc.line);
	for (size_t c = 0; c < sb->n_creds; c++)
		for (size_t k = 0; k < sb->creds[c].n_targets; k++)
			if (q->tls && !strcmp(sb->creds[c].targets[k].host, q->host) &&
			    sb->creds[c].targets[k].port == q->port)
				cred = arena_printf(
				    a, "; credential_proxy (line %u) swaps its secret in",
				    sb->creds[c].loc.line);
	set(d, true, arena_printf(a, "egress rule %zd%s", i + 1, cred), sb->egress[i].loc.line);
}

/* "tcp HOST:PORT": a stream through CONNECT, tunnelled only where no HTTP rule inspects. */
static void
decide_tcp(struct arena *a, const struct policy *p, enum target t, const struct query *q,
	   struct decision *d)
{
	const struct sandbox *sb = &p->os_env.sandbox;
	struct egress_matcher *m;
	enum egress_connect how;
	ssize_t i;

	if (!sb->n_egress)
		return decide_unfiltered(sb, t, d);
	if (refused_host(a, sb, q->host, d))
		return;
	if (!(m = egress_matcher_new(sb->egress, sb->n_egress)))
		abort();
	how = egress_decide_connect(m, q->host, strlen(q->host), q->port, &i);
	egress_matcher_free(m);
	if (how == EGRESS_CONNECT_DENY)
		return set(d, false, "no tcp rule matches (default deny)", sb->egress_loc.line);
	if (how == EGRESS_CONNECT_INSPECT)
		return set(d, false,
			   arena_printf(a,
					"egress rule %zd is an HTTP rule: the proxy inspects a "
					"CONNECT there as HTTPS, a raw stream fails",
					i + 1),
			   sb->egress[i].loc.line);
	if (refused_address(a, sb, q->host, i, d))
		return;
	set(d, true, arena_printf(a, "egress rule %zd: a plain tunnel, not inspected", i + 1),
	    sb->egress[i].loc.line);
}

void
query_decide(struct arena *a, const struct policy *p, enum target t, const struct query *q,
	     struct decision *d)
{
	const struct sandbox *sb = &p->os_env.sandbox;

	if (sb->type == SANDBOX_NONE)
		return set(d, true, "sandbox type none: nothing is confined", sb->type_loc.line);
	if (sb->type != SANDBOX_AUTO && !target_has_backend(t, sb->type)) {
		set(d, false,
		    arena_printf(a, "no %s form: the sandbox type is %s", target_name(t),
				 sandbox_type_name(sb->type)),
		    sb->type_loc.line);
		d->enforced = false;
		return;
	}
	if ((t == TARGET_DARWIN && !sbpl_can_express(p)) ||
	    (t == TARGET_WINDOWS && !winjob_can_express(p))) {
		set(d, false,
		    arena_printf(a,
				 "no %s form: it cannot enforce all the policy asks "
				 "(--target=%s says what)",
				 target_name(t), target_name(t)),
		    0);
		d->enforced = false;
		return;
	}
	if (q->access == QUERY_HTTP)
		return decide_http(a, p, t, q, d);
	if (q->access == QUERY_TCP)
		return decide_tcp(a, p, t, q, d);
	if (t == TARGET_WINDOWS) {
		set(d, true, "not enforced: a Job Object does not isolate files", 0);
		d->enforced = false;
		return;
	}
	decide_file(a, p, t, q, d);
}
