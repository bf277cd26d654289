/*
 * test_diff.c - --diff against the query engine, over the golden corpus.
 *
 * For every pair (A, B) of golden policies: --diff says B widens access
 * over A (a file, network or egress item of the agent's own os_env) iff
 * some query that B allows, A refuses, over a query set made from both
 * policies: every path they name (and one below it), dotfile probes in
 * each root, fixed probes (~/.ssh, /etc, the network), a request each egress
 * rule allows, and, for each rule of B that A does not cover, the request
 * the subsumption check offers as a witness (decided again by the matcher,
 * which shares no code with it).  Then the reverse: the narrowings of (A,B)
 * are the widenings of (B,A).
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/base/arena.h"
#include "compiler/base/diag.h"
#include "compiler/base/fileio.h"
#include "compiler/policy.h"
#include "compiler/decide/protect.h"
#include "emitters/diff.h"
#include "emitters/query.h"
#include "grammar/egress.h"

struct corpus {
	struct arena *a;
	const struct policy **p;
	const char **name;
	size_t n, cap, n_name, cap_name;
};

static void
load(struct corpus *c, const char *path)
{
	struct textbuf src = {0};
	struct diag d;
	struct policy *p;

	if (file_read(path, &src, FILE_READ_MAX) < 0)
		return;
	diag_init(&d, c->a, path, src.data ? src.data : "", src.len);
	p = policy_compile(c->a, &d, path, src.data ? src.data : "", src.len);
	/* Queries are decided for linux: policies pinned elsewhere have no linux form. */
	if (p && (p->os_env.sandbox.type == SANDBOX_DARWIN_SEATBELT ||
		  p->os_env.sandbox.type == SANDBOX_WINDOWS_JOBOBJECT))
		p = NULL;
	if (p) {
		*ARENA_PUSH(c->a, c->p, c->n, c->cap) = p;
		*ARENA_PUSH(c->a, c->name, c->n_name, c->cap_name) = arena_strdup(c->a, path);
	}
	tb_free(&src);
}

static void
load_all(struct corpus *c)
{
	struct dirent **names;
	int n;

	c->a = arena_new();
	n = scandir("golden", &names, NULL, alphasort);
	cr_assert_gt(n, 0);
	for (int i = 0; i < n; i++) {
		char *path;

		if (names[i]->d_name[0] != 'e' && names[i]->d_name[0] != '.' &&
		    asprintf(&path, "golden/%s/agent.yaml", names[i]->d_name) >= 0) {
			load(c, path);
			free(path);
		}
		free(names[i]);
	}
	free(names);
	n = scandir("golden/diff", &names, NULL, alphasort);
	for (int i = 0; i < n; i++) {
		char *path;

		if (names[i]->d_name[0] != '.') {
			if (asprintf(&path, "golden/diff/%s/old.yaml", names[i]->d_name) >= 0) {
				load(c, path);
				free(path);
			}
			if (asprintf(&path, "golden/diff/%s/new.yaml", names[i]->d_name) >= 0) {
				load(c, path);
				free(path);
			}
		}
		free(names[i]);
	}
	free(names);
}

struct qset {
	struct arena *a;
	struct query *v;
	size_t n, cap;
};

static void
qadd(struct qset *s, const char *text)
{
	struct query q;
	char err[256];

	if (query_parse(s->a, arena_strdup(s->a, text), &q, err, sizeof(err)) == 0)
		*ARENA_PUSH(s->a, s->v, s->n, s->cap) = q;
}

/* The written form of symbolic path P for a query. */
static const char *
qpath(struct arena *a, const char *p)
{
	if (!strncmp(p, "{CWD}", 5))
		return p[5] ? arena_strdup(a, p + 6) : ".";
	if (!strncmp(p, "{HOME}", 6))
		return arena_printf(a, "~%s", p + 6);
	return p;
}

static void
paths(struct qset *s, const struct ir_pathlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		for (int k = 0; k < 4; k++)
			qadd(s, arena_printf(s->a, "%s %s%s", k & 1 ? "write" : "read",
					     qpath(s->a, l->v[i].symbolic), k & 2 ? "/x" : ""));
}

static void
prot_q(void *arg, const struct protect_entry *e)
{
	struct qset *s = arg;
	const char *path = e->path;

	qadd(s, arena_printf(s->a, "write %s", qpath(s->a, path)));
	qadd(s, arena_printf(s->a, "write %s/x", qpath(s->a, path)));
}

/* One request rule R allows: its host (and one below a wildcard), a path of its glob. */
static void
rule_requests(struct qset *s, const struct egress_rule *r)
{
	char path[1024];
	size_t n = 0;

	for (const char *p = r->path; *p && n + 2 < sizeof(path); p++) {
		if (p[0] == '*' && p[1] == '*')
			p++;
		else if (*p == '?')
			path[n++] = 'q';
		else if (*p != '*')
			path[n++] = *p;
	}
	path[n] = '\0';
	if (r->tcp) {
		for (int w = 0; w < (r->wildcard ? 2 : 1); w++)
			qadd(s, arena_printf(s->a, "tcp %s%s:%u", w ? "sub." : "", r->host,
					     r->port));
		return;
	}
	for (unsigned bit = 1; bit & EGRESS_ANY; bit <<= 1)
		for (int tls = 0; tls < 2; tls++)
			for (int w = 0; w < (r->wildcard ? 2 : 1); w++) {
				if (!(r->methods & bit))
					continue;
				qadd(s, arena_printf(s->a, "%s %s://%s%s%s%s", egress_method_name(bit),
						     tls ? "https" : "http", w ? "sub." : "", r->host,
						     r->port ? arena_printf(s->a, ":%u", r->port) : "",
						     path));
			}
}

static void
policy_queries(struct qset *s, const struct policy *p)
{
	const struct sandbox *sb = &p->os_env.sandbox;
	const char *roots[256];
	size_t n = protect_symbolic_roots(sb, roots, 256);
	const struct ir_pathlist *lists[] = {&sb->write_paths, &sb->read_paths, &sb->write_files,
					     &sb->cow_paths,   &sb->mask_paths, &sb->protect_paths};

	for (size_t k = 0; k < 6; k++)
		paths(s, lists[k]);
	protect_each(sb, roots, n, "{HOME}", prot_q, s);
	for (size_t k = 0; k < 4; k++)
		for (size_t i = 0; k < 3 && i < lists[k]->n; i++)
			for (size_t h = 0; h <= sb->cwd_allow_hidden.n; h++) {
				const char *name = h < sb->cwd_allow_hidden.n
						       ? sb->cwd_allow_hidden.v[h].s
						       : ".omnibox-any";

				qadd(s, arena_printf(s->a, "read %s/%s/x",
						     qpath(s->a, lists[k]->v[i].symbolic), name));
				qadd(s, arena_printf(s->a, "read %s/sub/%s/x",
						     qpath(s->a, lists[k]->v[i].symbolic), name));
			}
	for (size_t h = 0; h <= sb->cwd_allow_hidden.n; h++) {
		const char *name = h < sb->cwd_allow_hidden.n ? sb->cwd_allow_hidden.v[h].s
							      : ".omnibox-any";

		qadd(s, arena_printf(s->a, "read %s/x", name));
		qadd(s, arena_printf(s->a, "read sub/%s/x", name));
	}
	for (size_t i = 0; i < sb->n_egress; i++)
		rule_requests(s, &sb->egress[i]);
}

static const char *const fixed[] = {
    "read src/x",	  "write src/x",	 "read .env",	      "write .env",
    "read ~/.ssh/id_rsa", "write ~/.ssh/id_rsa", "read /etc/passwd",  "write /etc/passwd",
    "write /usr/bin/x",	  "write /tmp/x",	 "read ~/notes.txt",  "write ~/notes.txt",
    "GET https://omnibox-diff.invalid/", "GET http://omnibox-diff.invalid/",
    "tcp omnibox-diff.invalid:22", NULL};

static bool
allowed(struct arena *a, const struct policy *p, const struct query *q)
{
	struct decision d;

	query_decide(a, p, TARGET_LINUX, q, &d);
	/* What reaches the host: a write to the sandbox's own storage does not. */
	return d.allowed && !(q->access == QUERY_WRITE && d.own);
}

/* A query B allows and A refuses, or NULL. */
static const char *
witness(struct arena *a, const struct policy *pa, const struct policy *pb)
{
	struct qset s = {.a = a};
	const struct sandbox *sa = &pa->os_env.sandbox, *sbb = &pb->os_env.sandbox;

	for (size_t i = 0; fixed[i]; i++)
		qadd(&s, fixed[i]);
	policy_queries(&s, pa);
	policy_queries(&s, pb);
	for (size_t i = 0; i < sbb->n_egress && sa->n_egress; i++) {
		struct egress_witness w;

		if (!egress_rules_cover(sa->egress, sa->n_egress, &sbb->egress[i], &w) && w.tcp)
			qadd(&s, arena_printf(a, "tcp %s:%u", w.host, w.port));
		else if (!egress_rules_cover(sa->egress, sa->n_egress, &sbb->egress[i], &w))
			qadd(&s, arena_printf(a, "%s %s://%s:%u%s%s", egress_method_name(w.method),
					      w.tls ? "https" : "http", w.host, w.port,
					      w.path[0] == '/' ? "" : "/", w.path));
	}
	for (size_t i = 0; i < s.n; i++)
		if (allowed(a, pb, &s.v[i]) && !allowed(a, pa, &s.v[i]))
			return s.v[i].text;
	return NULL;
}

static const struct diff_item *
access_widening(const struct diff_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		if (!l->v[i].terminal && diff_kind_is_access(l->v[i].kind))
			return &l->v[i];
	return NULL;
}

Test(diff, widens_iff_a_query_says_so_over_every_pair_of_the_golden_corpus)
{
	struct corpus c = {0};
	size_t pairs = 0, widened = 0;

	load_all(&c);
	cr_assert_gt(c.n, 50, "the corpus is too small: %zu policies", c.n);
	for (size_t i = 0; i < c.n; i++)
		for (size_t j = 0; j < c.n; j++) {
			struct arena *a = arena_new();
			struct diff_list w, n, rw, rn;
			const struct diff_item *item;
			const char *q;

			if (i == j) {
				arena_free(a);
				continue;
			}
			diff_policies(a, c.p[i], c.p[j], &w, &n);
			diff_policies(a, c.p[j], c.p[i], &rw, &rn);
			item = access_widening(&w);
			q = witness(a, c.p[i], c.p[j]);
			cr_assert((item != NULL) == (q != NULL),
				  "%s -> %s: --diff says %s, but %s", c.name[i], c.name[j],
				  item ? item->what : "nothing widened",
				  q ? arena_printf(a, "'%s' is allowed only by the new one", q)
				    : "no query finds a widening");
			cr_assert_eq(w.n, rn.n, "%s -> %s: %zu widenings, reverse: %zu narrowings",
				     c.name[i], c.name[j], w.n, rn.n);
			cr_assert_eq(n.n, rw.n, "%s -> %s: %zu narrowings, reverse: %zu widenings",
				     c.name[i], c.name[j], n.n, rw.n);
			pairs++;
			widened += item != NULL;
			arena_free(a);
		}
	cr_log_info("%zu pairs, %zu widen access", pairs, widened);
	arena_free(c.a);
}
