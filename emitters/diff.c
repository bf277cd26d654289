/*
 * diff.c - widenings and narrowings between two policies (diff.h).
 */
#include "diff.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../compiler/decide/protect.h"
#include "../grammar/egress.h"
#include "json.h"
#include "query.h"

/* Files (and the network switched open) mean the same on Linux, macOS and
 * both container forms; what goes through the egress proxy everywhere it
 * runs (an OCI bundle has none: egress_rules are no network there). */
#define FILES                                                                                      \
	(TARGET_BIT(TARGET_LINUX) | TARGET_BIT(TARGET_DARWIN) | TARGET_BIT(TARGET_OCI) |           \
	 TARGET_BIT(TARGET_KUBERNETES))
#define PROXIED (TARGET_BIT(TARGET_LINUX) | TARGET_BIT(TARGET_DARWIN) | TARGET_BIT(TARGET_KUBERNETES))
#define ALL (TARGET_ALL_BITS | TARGET_BIT(TARGET_OCI) | TARGET_BIT(TARGET_KUBERNETES))

struct dctx {
	struct arena *a;
	const struct policy *from, *to; /* widenings of TO over FROM */
	bool narrow;			/* the words of the opposite direction */
	const char *terminal;
	struct diff_list *out;
};

static void
add(struct dctx *c, enum diff_kind kind, unsigned targets, uint32_t line, const char *what)
{
	*ARENA_PUSH(c->a, c->out->v, c->out->n, c->out->cap) =
	    (struct diff_item){kind, targets, what, line, c->terminal};
}

/* VERB as the side that gains it says it, or as the side that loses it. */
static const char *
verb(const struct dctx *c, const char *gains, const char *loses)
{
	return c->narrow ? loses : gains;
}

static bool
allows(struct dctx *c, const struct policy *p, enum query_access access, const char *path)
{
	struct query q = {.text = path, .access = access, .path = path};
	struct decision d;

	query_decide(c->a, p, TARGET_LINUX, &q, &d);
	/* A write that stays in the sandbox's own storage reaches nothing of the host's. */
	return d.allowed && !(access == QUERY_WRITE && d.own);
}

/* ---- the network and egress -------------------------------------------------- */

enum net { NET_OFF, NET_FILTERED, NET_OPEN };

static enum net
net_state(const struct sandbox *sb)
{
	if (sb->n_egress)
		return NET_FILTERED;
	return sb->allow_network.value ? NET_OPEN : NET_OFF;
}

static const char *
rule_text(struct arena *a, const struct egress_rule *r)
{
	char text[1024];

	egress_rule_format(r, true, text, sizeof(text));
	return arena_strdup(a, text);
}

/* What a witness of egress_rules_cover() is, as a request or a stream. */
static const char *
witness_text(struct arena *a, const struct egress_witness *w)
{
	if (w->tcp)
		return arena_printf(a, "a TCP stream to %s:%u", w->host, w->port);
	return arena_printf(a, "%s %s://%s%s%s%s", egress_method_name(w->method),
			    w->tls ? "https" : "http", w->host,
			    w->port == (w->tls ? EGRESS_PORT_TLS : EGRESS_PORT_PLAIN)
				? ""
				: arena_printf(a, ":%u", w->port),
			    w->path[0] == '/' ? "" : "/", w->path);
}

static void
diff_network(struct dctx *c)
{
	const struct sandbox *f = &c->from->os_env.sandbox, *t = &c->to->os_env.sandbox;
	enum net nf = net_state(f), nt = net_state(t);

	if (nt > nf) {
		if (nt == NET_OPEN)
			add(c, DIFF_NETWORK, FILES,
			    t->allow_network.loc.line ? t->allow_network.loc.line : t->egress_loc.line,
			    verb(c,
				 nf == NET_OFF ? "the network is switched on, unfiltered"
					       : "egress filtering is removed: the network is open",
				 nf == NET_OFF ? "the network is switched off"
					       : "the network is filtered by egress_rules"));
		else
			add(c, DIFF_NETWORK, PROXIED, t->egress_loc.line,
			    verb(c, "the network is switched on, through egress_rules",
				 "the network is switched off (no egress_rules)"));
	}
	if (t->egress_allow_private.value && !f->egress_allow_private.value && nt == NET_FILTERED)
		add(c, DIFF_PRIVATE, PROXIED, t->egress_allow_private.loc.line,
		    verb(c, "private, loopback and metadata destinations become reachable",
			 "private, loopback and metadata destinations are refused"));
	if (nt != NET_FILTERED || nf == NET_OPEN)
		return;
	for (size_t i = 0; i < t->n_egress; i++) {
		struct egress_witness w;

		if (nf == NET_OFF)
			add(c, DIFF_EGRESS, PROXIED, t->egress[i].loc.line,
			    arena_printf(c->a, "egress rule '%s' %s", rule_text(c->a, &t->egress[i]),
					 verb(c, "is allowed", "is no longer allowed")));
		else if (!egress_rules_cover(f->egress, f->n_egress, &t->egress[i], &w))
			add(c, DIFF_EGRESS, PROXIED, t->egress[i].loc.line,
			    arena_printf(c->a, "egress rule '%s' %s, e.g. %s",
					 rule_text(c->a, &t->egress[i]),
					 verb(c, "allows what no rule allowed before",
					      "goes: what it allowed is refused now"),
					 witness_text(c->a, &w)));
	}
}

static bool
cred_has(const struct sandbox *sb, const char *host, unsigned port)
{
	for (size_t i = 0; i < sb->n_creds; i++)
		for (size_t k = 0; k < sb->creds[i].n_targets; k++)
			if (!strcmp(sb->creds[i].targets[k].host, host) &&
			    sb->creds[i].targets[k].port == port)
				return true;
	return false;
}

static void
diff_credentials(struct dctx *c)
{
	const struct sandbox *f = &c->from->os_env.sandbox, *t = &c->to->os_env.sandbox;

	for (size_t i = 0; i < t->n_creds; i++) {
		const struct credential *cr = &t->creds[i];

		if (cr->type == CRED_DATABRICKS_CLI) {
			bool had = false;

			for (size_t j = 0; j < f->n_creds; j++)
				had |= f->creds[j].type == CRED_DATABRICKS_CLI;
			if (!had)
				add(c, DIFF_CREDENTIAL, PROXIED, cr->loc.line,
				    verb(c, "a databricks_cli credential is added",
					 "the databricks_cli credential is removed"));
			continue;
		}
		for (size_t k = 0; k < cr->n_targets; k++)
			if (!cred_has(f, cr->targets[k].host, cr->targets[k].port))
				add(c, DIFF_CREDENTIAL, PROXIED, cr->targets[k].loc.line,
				    arena_printf(c->a, "a %s credential %s %s:%u",
						 cred_type_name(cr->type),
						 verb(c, "is sent to", "is no longer sent to"),
						 cr->targets[k].host, cr->targets[k].port));
	}
}

/* ---- files -------------------------------------------------------------------- */

static void
grant_widens(struct dctx *c, const struct ir_pathlist *l, const char *key, bool write)
{
	for (size_t i = 0; i < l->n; i++) {
		const char *p = l->v[i].symbolic;
		enum query_access acc = write ? QUERY_WRITE : QUERY_READ;

		/* Newly writable says newly readable too; a copy's writes stay in
		 * the copy, so a copy says nothing of the kind. */
		if (!write && l != &c->to->os_env.sandbox.cow_paths &&
		    allows(c, c->to, QUERY_WRITE, p) && !allows(c, c->from, QUERY_WRITE, p))
			continue;

		if (allows(c, c->to, acc, p) && !allows(c, c->from, acc, p))
			add(c, write ? DIFF_WRITE : DIFF_READ, FILES, l->v[i].loc.line,
			    arena_printf(c->a, "%s %s (%s)", p,
					 write ? verb(c, "becomes writable", "is no longer writable")
					       : verb(c, "becomes readable", "is no longer readable"),
					 key));
	}
}

static void diff_dotfiles(struct dctx *c);

struct prot_walk {
	struct dctx *c;
};

static void
prot_lost(void *arg, const struct protect_entry *e)
{
	struct dctx *c = ((struct prot_walk *)arg)->c;
	const char *path = e->path;

	if (allows(c, c->to, QUERY_WRITE, path) && !allows(c, c->from, QUERY_WRITE, path))
		add(c, DIFF_UNPROTECT, FILES, c->to->os_env.sandbox.unprotect_paths.loc.line,
		    arena_printf(c->a, "%s %s", path,
				 verb(c, "is no longer protected: it becomes writable",
				      "is protected again: read-only")));
}

static bool
in_names(const struct ir_strlist *l, const char *s)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->v[i].s, s))
			return true;
	return false;
}

static void
diff_files(struct dctx *c)
{
	const struct sandbox *f = &c->from->os_env.sandbox, *t = &c->to->os_env.sandbox;
	const char *roots[256];
	size_t n = protect_symbolic_roots(f, roots, 256);
	struct prot_walk pw = {c};

	grant_widens(c, &t->write_paths, "write_paths", true);
	grant_widens(c, &t->write_files, "write_files", true);
	protect_each(f, roots, n, "{HOME}", prot_lost, &pw);
	for (size_t i = 0; i < f->mask_paths.n; i++)
		if (allows(c, c->to, QUERY_READ, f->mask_paths.v[i].symbolic))
			add(c, DIFF_UNMASK, FILES, f->mask_paths.v[i].loc.line,
			    arena_printf(c->a, "%s %s", f->mask_paths.v[i].symbolic,
					 verb(c, "is no longer masked: it becomes readable",
					      "is masked again")));
	for (size_t i = 0; i < f->deny_unix_socket_paths.n; i++) {
		bool kept = false;

		for (size_t j = 0; j < t->deny_unix_socket_paths.n && !kept; j++)
			kept = !strcmp(f->deny_unix_socket_paths.v[i].symbolic,
				       t->deny_unix_socket_paths.v[j].symbolic);
		if (!kept)
			add(c, DIFF_SOCKET, FILES, f->deny_unix_socket_paths.v[i].loc.line,
			    arena_printf(c->a, "the socket %s %s",
					 f->deny_unix_socket_paths.v[i].symbolic,
					 verb(c, "becomes reachable", "is out of reach again")));
	}
	grant_widens(c, &t->read_paths, "read_paths", false);
	grant_widens(c, &t->write_paths, "write_paths", false);
	grant_widens(c, &t->cow_paths, "write_paths, copy_on_write", false);
	grant_widens(c, &t->write_files, "write_files", false);
	diff_dotfiles(c);
}

/*
 * Dotfiles: the rule is the same in every directory the scan walks (the
 * workspace and each granted directory), so it is probed in the workspace
 * alone, with each name TO lets through (a fresh one for "*"), at the top
 * level and one level down, and said once for all of them.  A grant that
 * is new shows its own line; a grant of a file has no dotfiles below it.
 */
static void
diff_dotfiles(struct dctx *c)
{
	const struct sandbox *t = &c->to->os_env.sandbox;

	for (size_t i = 0; i <= t->cwd_allow_hidden.n; i++) {
		const char *name =
		    i < t->cwd_allow_hidden.n ? t->cwd_allow_hidden.v[i].s : ".omnibox-any";

		if (!strcmp(name, "*"))
			continue;
		for (int depth = 0; depth < 2; depth++) {
			uint32_t line =
			    depth ? t->scan_recursive.loc.line : t->cwd_allow_hidden.loc.line;
			const char *p =
			    arena_printf(c->a, "{CWD}/%s%s/x", depth ? "sub/" : "", name);

			if (allows(c, c->to, QUERY_READ, p) && !allows(c, c->from, QUERY_READ, p)) {
				add(c, DIFF_DOTFILE, FILES, line,
				    arena_printf(c->a,
						 "%s%s %s in the workspace and every granted "
						 "directory",
						 depth ? "*/" : "",
						 i < t->cwd_allow_hidden.n ? name : ".*",
						 verb(c, "becomes visible", "is hidden again")));
				break;
			}
		}
	}
}

/* ---- the rest ------------------------------------------------------------------ */

static bool
repo_same(const struct git_ssh *a, const struct git_ssh *b)
{
	size_t la = strlen(a->repository.s), lb = strlen(b->repository.s);

	la -= la > 4 && !strcmp(a->repository.s + la - 4, ".git") ? 4 : 0;
	lb -= lb > 4 && !strcmp(b->repository.s + lb - 4, ".git") ? 4 : 0;
	return !strcmp(a->host.s, b->host.s) && a->port == b->port &&
	       !strcmp(a->username.s, b->username.s) && la == lb &&
	       !strncmp(a->repository.s, b->repository.s, la);
}

static void
diff_git_ssh(struct dctx *c)
{
	const struct sandbox *f = &c->from->os_env.sandbox, *t = &c->to->os_env.sandbox;

	for (size_t i = 0; i < t->n_git_ssh; i++) {
		const struct git_ssh *g = &t->git_ssh[i], *o = NULL;

		for (size_t j = 0; j < f->n_git_ssh && !o; j++)
			if (repo_same(g, &f->git_ssh[j]))
				o = &f->git_ssh[j];
		if (!o || (g->operations & ~o->operations) ||
		    (g->allow_loopback.value && !o->allow_loopback.value) ||
		    (o->allowed_cidrs.n && !g->allowed_cidrs.n))
			add(c, DIFF_GIT_SSH, TARGET_BIT(TARGET_LINUX), g->loc.line,
			    arena_printf(c->a, "git over ssh to %s@%s:%u/%s %s", g->username.s,
					 g->host.s, g->port, g->repository.s,
					 !o ? verb(c, "is allowed", "is no longer allowed")
					    : verb(c, "may do more (operations or addresses)",
						   "may do less")));
		else
			for (size_t k = 0; k < g->allowed_cidrs.n; k++)
				if (!in_names(&o->allowed_cidrs, g->allowed_cidrs.v[k].s))
					add(c, DIFF_GIT_SSH, TARGET_BIT(TARGET_LINUX),
					    g->allowed_cidrs.v[k].loc.line,
					    arena_printf(c->a, "git over ssh to %s may reach %s%s",
							 g->host.s, g->allowed_cidrs.v[k].s,
							 verb(c, "", " no longer")));
	}
}

static void
diff_limits(struct dctx *c)
{
	const struct limits *f = &c->from->os_env.sandbox.limits, *t = &c->to->os_env.sandbox.limits;
	const struct {
		const char *name;
		const struct ir_u64 *o, *n;
	} l[] = {{"memory", &f->memory, &t->memory},	   {"processes", &f->processes, &t->processes},
		 {"cpu_time", &f->cpu_time, &t->cpu_time}, {"cpu_rate", &f->cpu_rate, &t->cpu_rate},
		 {"open_files", &f->open_files, &t->open_files}};

	for (size_t i = 0; i < sizeof(l) / sizeof(l[0]); i++)
		if (l[i].o->present && (!l[i].n->present || l[i].n->value > l[i].o->value))
			add(c, DIFF_LIMIT, ALL, l[i].n->present ? l[i].n->loc.line : 0,
			    arena_printf(c->a, "limits.%s %s", l[i].name,
					 !l[i].n->present ? verb(c, "is removed", "is set")
							  : verb(c, "is raised", "is lowered")));
}

static void
diff_env(struct dctx *c)
{
	const struct ir_strlist *f = &c->from->os_env.sandbox.env_passthrough,
				*t = &c->to->os_env.sandbox.env_passthrough;

	for (size_t i = 0; i < t->n; i++)
		if (!in_names(f, t->v[i].s))
			add(c, DIFF_ENV, FILES, t->v[i].loc.line,
			    arena_printf(c->a, "the environment variable %s %s", t->v[i].s,
					 verb(c, "is passed in", "is no longer passed in")));
}

static void
diff_os_env(struct dctx *c)
{
	const struct sandbox *f = &c->from->os_env.sandbox, *t = &c->to->os_env.sandbox;

	if (f->type == SANDBOX_NONE)
		return; /* nothing is confined: nothing can widen */
	if (t->type == SANDBOX_NONE) {
		/* The container forms refuse type none: no bundle or pod runs unconfined. */
		add(c, DIFF_SANDBOX, TARGET_ALL_BITS, t->type_loc.line,
		    verb(c, "the sandbox is turned off (type none): nothing is confined",
			 "the sandbox is turned on"));
		return;
	}
	diff_network(c);
	diff_credentials(c);
	diff_files(c);
	diff_git_ssh(c);
	diff_env(c);
	diff_limits(c);
}

static int
cmp_item(const void *x, const void *y)
{
	const struct diff_item *a = x, *b = y;

	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	if ((a->terminal != NULL) != (b->terminal != NULL))
		return a->terminal ? 1 : -1;
	if (a->terminal && strcmp(a->terminal, b->terminal))
		return strcmp(a->terminal, b->terminal);
	return strcmp(a->what, b->what);
}

static void
widen(struct arena *a, const struct policy *from, const struct policy *to, bool narrow,
      struct diff_list *out)
{
	struct dctx c = {a, from, to, narrow, NULL, out};
	struct diag d;

	diag_init(&d, a, "-", "", 0);
	diff_os_env(&c);
	for (size_t i = 0; i < to->n_terminals; i++) {
		const struct terminal *tn = &to->terminals[i];
		const struct terminal *tf = NULL;
		struct policy *pf, *pt;

		for (size_t j = 0; j < from->n_terminals && !tf; j++)
			if (!strcmp(from->terminals[j].name, tn->name))
				tf = &from->terminals[j];
		if (!tf) {
			c.terminal = NULL;
			add(&c, DIFF_TERMINAL, ALL, tn->loc.line,
			    arena_printf(a, "terminal %s %s%s", tn->name,
					 verb(&c, "is added", "is removed"),
					 tn->inherit ? "" : ", with its own os_env"));
			continue;
		}
		pf = policy_select_terminal(a, &d, from, tn->name);
		pt = policy_select_terminal(a, &d, to, tn->name);
		if (!pf || !pt)
			continue;
		c.from = pf;
		c.to = pt;
		c.terminal = tn->name;
		diff_os_env(&c);
	}
	if (out->n)
		qsort(out->v, out->n, sizeof(out->v[0]), cmp_item);
}

void
diff_policies(struct arena *a, const struct policy *old, const struct policy *new,
	      struct diff_list *widened, struct diff_list *narrowed)
{
	memset(widened, 0, sizeof(*widened));
	memset(narrowed, 0, sizeof(*narrowed));
	widen(a, old, new, false, widened);
	widen(a, new, old, true, narrowed);
}

bool
diff_kind_is_access(enum diff_kind kind)
{
	return kind == DIFF_SANDBOX || kind == DIFF_NETWORK || kind == DIFF_WRITE ||
	       kind == DIFF_UNPROTECT || kind == DIFF_UNMASK || kind == DIFF_READ ||
	       kind == DIFF_DOTFILE || kind == DIFF_EGRESS;
}

/* ---- output ----------------------------------------------------------------------- */

static const char *const kind_names[] = {
    "sandbox", "network", "credential", "write",   "unprotect", "unmask", "read",
    "dotfile", "egress",  "private",    "socket",  "git_ssh",   "env",	  "limit",
    "terminal"};

static void
targets_text(unsigned bits, struct textbuf *out, const char *sep)
{
	bool first = true;

	for (int t = 0; t < TARGET_COUNT; t++)
		if (bits & TARGET_BIT(t)) {
			tb_printf(out, "%s%s", first ? "" : sep, target_name((enum target)t));
			first = false;
		}
}

static void
text_list(const struct diff_list *l, const char *line_word, struct textbuf *out)
{
	for (size_t i = 0; i < l->n; i++) {
		const struct diff_item *it = &l->v[i];

		tb_puts(out, "  [");
		targets_text(it->targets, out, " ");
		tb_printf(out, "] %s: ", kind_names[it->kind]);
		if (it->terminal)
			tb_printf(out, "terminal %s: ", it->terminal);
		tb_puts(out, it->what);
		if (it->line)
			tb_printf(out, " (%s %u)", line_word, it->line);
		tb_putc(out, '\n');
	}
}

static void
json_list(struct json *j, const char *key, const struct diff_list *l)
{
	json_key(j, key);
	json_open(j, '[', false);
	for (size_t i = 0; i < l->n; i++) {
		const struct diff_item *it = &l->v[i];

		json_open(j, '{', true);
		json_key(j, "kind");
		json_str(j, kind_names[it->kind]);
		json_key(j, "targets");
		json_open(j, '[', true);
		for (int t = 0; t < TARGET_COUNT; t++)
			if (it->targets & TARGET_BIT(t))
				json_str(j, target_name((enum target)t));
		json_close(j);
		json_key(j, "terminal");
		json_str(j, it->terminal);
		json_key(j, "what");
		json_str(j, it->what);
		json_key(j, "line");
		json_line(j, it->line);
		json_close(j);
	}
	json_close(j);
}

static void
md_escape(struct textbuf *out, const char *s)
{
	for (; *s; s++) {
		if (strchr("|\\`*_[]<>", *s))
			tb_putc(out, '\\');
		tb_putc(out, *s);
	}
}

static void
md_list(const struct diff_list *l, struct textbuf *out)
{
	tb_puts(out, "| | targets | change | line |\n|---|---|---|---|\n");
	for (size_t i = 0; i < l->n; i++) {
		const struct diff_item *it = &l->v[i];

		tb_printf(out, "| %s | ", kind_names[it->kind]);
		targets_text(it->targets, out, ", ");
		tb_puts(out, " | ");
		if (it->terminal) {
			tb_puts(out, "terminal ");
			md_escape(out, it->terminal);
			tb_puts(out, ": ");
		}
		md_escape(out, it->what);
		if (it->line)
			tb_printf(out, " | %u |\n", it->line);
		else
			tb_puts(out, " | |\n");
	}
}

void
diff_format(const struct diff_list *widened, const struct diff_list *narrowed, const char *format,
	    const char *old_name, const char *new_name, struct textbuf *out)
{
	if (!strcmp(format, "json")) {
		struct json j;

		json_init(&j, out);
		json_open(&j, '{', false);
		json_key(&j, "old");
		json_str(&j, old_name);
		json_key(&j, "new");
		json_str(&j, new_name);
		json_key(&j, "widened");
		json_bool(&j, widened->n > 0);
		json_list(&j, "widenings", widened);
		json_list(&j, "narrowings", narrowed);
		json_close(&j);
		tb_putc(out, '\n');
		return;
	}
	if (!strcmp(format, "markdown")) {
		tb_printf(out, "### Sandbox policy change: %s\n\n",
			  widened->n ? "**widens access**" : "nothing widened");
		if (widened->n) {
			tb_puts(out, "What it widens, most dangerous first:\n\n");
			md_list(widened, out);
			tb_putc(out, '\n');
		}
		if (narrowed->n) {
			tb_puts(out, "What it narrows (lines of the old policy):\n\n");
			md_list(narrowed, out);
		}
		return;
	}
	tb_printf(out, "# %s -> %s\n", old_name, new_name);
	if (widened->n) {
		tb_puts(out, "widened, most dangerous first:\n");
		text_list(widened, "line", out);
	} else {
		tb_puts(out, "nothing widened\n");
	}
	if (narrowed->n) {
		tb_puts(out, "narrowed (lines of the old policy):\n");
		text_list(narrowed, "old line", out);
	}
}
