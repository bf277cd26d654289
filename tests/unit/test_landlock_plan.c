/*
 * test_landlock_plan.c - compiler/decide/landlock.c: grants, masks and
 * protected paths as Landlock path-beneath rules, over a fake directory
 * tree; the exact rules and approximations, and what Landlock would then
 * allow at each masked and protected path once the rights along it add up.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/decide/landlock.h"

#if defined(__linux__)
#include <linux/landlock.h>
#endif

#define N(v) (sizeof(v) / sizeof((v)[0]))

/* The rights a rule on a file keeps of a writable and of a read-only grant. */
#define FW (LL_W & LL_FILE_RIGHTS)
#define FR (LL_R & LL_FILE_RIGHTS)

/* ---- a directory tree, listed as the launch would list it ---------------- */

struct node {
	const char *path;
	enum ll_kind kind;
};

struct fake {
	const struct node *v;
	size_t n;
	bool reverse;	  /* list entries last to first */
	const char *fail; /* listing this directory fails */
	const char *listed[32];
	size_t n_listed;
};

/* Is PATH an entry of DIR (one component below it)?  Its name, or NULL. */
static const char *
entry_of(const char *path, const char *dir)
{
	size_t len = strlen(dir);
	const char *name;

	if (!strcmp(dir, "/"))
		name = path[0] == '/' ? path + 1 : NULL;
	else
		name = !strncmp(path, dir, len) && path[len] == '/' ? path + len + 1 : NULL;
	return name && name[0] && !strchr(name, '/') ? name : NULL;
}

static int
fake_children(void *arg, const char *dir, ll_each_fn *each, void *each_arg)
{
	struct fake *f = arg;
	const struct node *d = NULL;

	cr_assert_lt(f->n_listed, N(f->listed), "too many listings");
	f->listed[f->n_listed++] = dir;
	if (f->fail && !strcmp(dir, f->fail))
		return -1;
	for (size_t i = 0; i < f->n; i++)
		if (!strcmp(f->v[i].path, dir))
			d = &f->v[i];
	if (!d || d->kind != LL_KIND_DIR)
		return 1;
	for (size_t k = 0; k < f->n; k++) {
		const struct node *e = &f->v[f->reverse ? f->n - 1 - k : k];
		const char *name = entry_of(e->path, dir);

		if (name)
			each(each_arg, name, e->kind);
	}
	return 0;
}

static bool
was_listed(const struct fake *f, const char *dir)
{
	for (size_t i = 0; i < f->n_listed; i++)
		if (!strcmp(f->listed[i], dir))
			return true;
	return false;
}

/* A fake listing of the table T. */
#define TREE(t) .v = (t), .n = N(t)

#define D LL_KIND_DIR
#define F LL_KIND_FILE
#define L LL_KIND_LINK

/* A workspace. */
static const struct node ws[] = {
    {"/w", D},
    {"/w/.env", F},
    {"/w/README", F},
    {"/w/src", D},
    {"/w/src/main.c", F},
    {"/w/src/vendor", D},
    {"/w/.git", D},
    {"/w/.git/HEAD", F},
    {"/w/.git/config", F},
    {"/w/.git/hooks", D},
    {"/w/.git/hooks/pre-commit.sample", F},
    {"/w/.git/objects", D},
};

/* ---- running the planner, reading its plan ------------------------------ */

struct run {
	struct arena *a;
	struct ll_plan p;
	char err[256];
	int rc;
};

static void
plan(struct run *r, struct fake *f, const struct ll_grant *g, size_t ng, const char *const *m,
     size_t nm, const char *const *pr, size_t np)
{
	r->a = arena_new();
	r->rc = landlock_plan(r->a, g, ng, m, nm, pr, np, f ? fake_children : NULL, f, &r->p,
			      r->err, sizeof(r->err));
}

/* The plan as text, for the messages of failed assertions. */
static const char *
show(const struct run *r)
{
	static char buf[4096];
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < r->p.n_rules && len < sizeof(buf); i++) {
		char rights[128];

		landlock_rights_text(r->p.rules[i].rights, rights, sizeof(rights));
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "\n  %s %s (%s)",
					r->p.rules[i].path, rights, r->p.rules[i].why);
	}
	for (size_t i = 0; i < r->p.n_approx && len < sizeof(buf); i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "\n  ~ %s", r->p.approx[i]);
	return buf;
}

struct want {
	const char *path;
	unsigned long long rights;
	const char *why; /* NULL: any */
};

static void
expect_rules(const struct run *r, const struct want *w, size_t n)
{
	cr_assert_eq(r->rc, 0, "the plan failed: %s", r->err);
	cr_assert_eq(r->p.n_rules, n, "%zu rules, want %zu:%s", r->p.n_rules, n, show(r));
	for (size_t i = 0; i < n; i++) {
		const struct ll_rule *g = &r->p.rules[i];

		cr_assert_str_eq(g->path, w[i].path, "rule %zu:%s", i, show(r));
		cr_assert_eq(g->rights, w[i].rights, "rule %zu (%s): 0x%llx, want 0x%llx:%s", i,
			     g->path, g->rights, w[i].rights, show(r));
		if (w[i].why)
			cr_assert_str_eq(g->why, w[i].why, "rule %zu (%s):%s", i, g->path, show(r));
	}
}

static void
expect_approx(const struct run *r, const char *const *w, size_t n)
{
	cr_assert_eq(r->p.n_approx, n, "%zu approximations, want %zu:%s", r->p.n_approx, n,
		     show(r));
	for (size_t i = 0; i < n; i++)
		cr_assert_str_eq(r->p.approx[i], w[i], "approximation %zu:%s", i, show(r));
}

/* What the kernel allows at PATH: the rights of every rule at or above it. */
static unsigned long long
allowed_at(const struct ll_plan *p, const char *path)
{
	unsigned long long r = 0;

	for (size_t i = 0; i < p->n_rules; i++) {
		const char *rp = p->rules[i].path;
		size_t len = strlen(rp);

		if (!strcmp(rp, path) || !strcmp(rp, "/") ||
		    (!strncmp(path, rp, len) && path[len] == '/'))
			r |= p->rules[i].rights;
	}
	return r;
}

/* Masked: nothing of it can be read, run, or changed; protected: nothing
 * changed.  Below a container, listing is all that reaches them. */
static void
expect_kept(const struct run *r, const char *const *masked, size_t nm, const char *const *protect,
	    size_t np)
{
	for (size_t i = 0; i < nm; i++)
		cr_assert_eq(allowed_at(&r->p, masked[i]) & ~(unsigned long long)LL_READ_DIR, 0,
			     "masked %s is reachable:%s", masked[i], show(r));
	for (size_t i = 0; i < np; i++)
		cr_assert_eq(allowed_at(&r->p, protect[i]) & ~(unsigned long long)LL_R, 0,
			     "protected %s is writable:%s", protect[i], show(r));
}

static void
done(struct run *r)
{
	arena_free(r->a);
}

/* ---- the plans ------------------------------------------------------------ */

Test(landlock_plan, a_grant_with_nothing_below_is_one_rule_and_lists_nothing)
{
	struct fake f = {TREE(ws), .fail = "/w/src"};
	struct ll_grant g[] = {{"/w/src", true, "write_paths"}};
	struct want w[] = {{"/w/src", LL_W, "write_paths"}};
	struct run r;

	plan(&r, &f, g, N(g), NULL, 0, NULL, 0);
	expect_rules(&r, w, N(w));
	expect_approx(&r, NULL, 0);
	cr_assert_eq(f.n_listed, 0);
	done(&r);
}

Test(landlock_plan, a_workspace_with_a_masked_file_and_protected_hooks)
{
	struct fake f = {TREE(ws)};
	struct ll_grant g[] = {{"/w", true, "workspace"}};
	const char *m[] = {"/w/.env"}, *pr[] = {"/w/.git/hooks"};
	struct want w[] = {
	    {"/w", LL_CONTAINER, "container"},	  {"/w/.git", LL_CONTAINER, "container"},
	    {"/w/.git/HEAD", FW, "workspace"},	  {"/w/.git/config", FW, "workspace"},
	    {"/w/.git/hooks", LL_R, "protected"}, {"/w/.git/objects", LL_W, "workspace"},
	    {"/w/README", FW, "workspace"},	  {"/w/src", LL_W, "workspace"},
	};
	const char *ap[] = {
	    "masked names in /w are still listed (their contents are unreadable)",
	    "names directly in /w can be neither made, removed nor renamed: Landlock would "
	    "allow it below too, where masked or protected paths are",
	    "names directly in /w/.git can be neither made, removed nor renamed: Landlock would "
	    "allow it below too, where masked or protected paths are",
	};
	struct run r;

	plan(&r, &f, g, N(g), m, N(m), pr, N(pr));
	expect_rules(&r, w, N(w));
	expect_approx(&r, ap, N(ap));
	expect_kept(&r, m, N(m), pr, N(pr));
	/* Containers only: the hooks are not listed, src neither. */
	cr_assert_eq(f.n_listed, 2);
	cr_assert(was_listed(&f, "/w") && was_listed(&f, "/w/.git"));
	/* What was written in .git/hooks at launch is readable, and only that. */
	cr_assert_eq(allowed_at(&r.p, "/w/.git/hooks/pre-commit.sample"), LL_R);
	done(&r);
}

Test(landlock_plan, containers_give_no_right_that_reaches_below_them)
{
	struct fake f = {TREE(ws)};
	struct ll_grant g[] = {{"/w", true, "workspace"}};
	const char *m[] = {"/w/.env"}, *pr[] = {"/w/.git/hooks", "/w/.git/config"};
	struct run r;

	/* Making a link in the hooks, removing .git/config or renaming .env
	 * are rights of the directory they happen in, granted to every
	 * directory below a rule: a container may hold none of them. */
	plan(&r, &f, g, N(g), m, N(m), pr, N(pr));
	cr_assert_eq(r.rc, 0, "%s", r.err);
	cr_assert_eq(LL_CONTAINER, LL_READ_DIR);
	for (size_t i = 0; i < r.p.n_rules; i++)
		if (!strcmp(r.p.rules[i].why, "container"))
			cr_assert_eq(r.p.rules[i].rights & (LL_MAKE | LL_REMOVE | LL_REFER), 0);
	cr_assert_eq(allowed_at(&r.p, "/w/.git/hooks") & LL_MAKE_SYM, 0);
	cr_assert_eq(allowed_at(&r.p, "/w/.git") & LL_REMOVE_FILE, 0);
	cr_assert_eq(allowed_at(&r.p, "/w") & (LL_REMOVE_FILE | LL_MAKE_REG | LL_REFER), 0);
	expect_kept(&r, m, N(m), pr, N(pr));
	done(&r);
}

static const struct node data[] = {
    {"/", D},	      {"/data", D},	  {"/data/.secret", D},	  {"/data/.secret/key", F},
    {"/data/pub", D}, {"/data/pub/x", F}, {"/data/notes.txt", F}, {"/data/ln", L},
    {"/etc", D},      {"/etc/passwd", F}, {"/etc/shadow", F},	  {"/usr", D},
};

Test(landlock_plan, a_read_only_grant_with_a_masked_directory)
{
	struct fake f = {TREE(data)};
	struct ll_grant g[] = {{"/data", false, "read_paths"}};
	/* A protected path below a read-only grant needs nothing: it is read-only. */
	const char *m[] = {"/data/.secret"}, *pr[] = {"/data/pub/x"};
	struct want w[] = {
	    {"/data", LL_CONTAINER, "container"},
	    {"/data/notes.txt", FR, "read_paths"},
	    {"/data/pub", LL_R, "read_paths"},
	};
	const char *ap[] = {
	    "masked names in /data are still listed (their contents are unreadable)",
	    "what masked directory /data/.secret holds is still listed (none of it can be read)",
	};
	struct run r;

	plan(&r, &f, g, N(g), m, N(m), pr, N(pr));
	/* No rule for the link /data/ln: opened, it would land on its target. */
	expect_rules(&r, w, N(w));
	expect_approx(&r, ap, N(ap));
	expect_kept(&r, m, N(m), pr, N(pr));
	cr_assert_eq(allowed_at(&r.p, "/data/.secret/key"), LL_READ_DIR);
	cr_assert_eq(f.n_listed, 1);
	done(&r);
}

static const struct node deep[] = {
    {"/w", D},		{"/w/a", D},	   {"/w/a/b", D}, {"/w/a/b/.secret", F},
    {"/w/a/b/keep", F}, {"/w/a/b/sub", D}, {"/w/a/c", F}, {"/w/z", F},
};

Test(landlock_plan, a_mask_two_levels_deep)
{
	struct fake f = {TREE(deep)};
	struct ll_grant g[] = {{"/w", true, "workspace"}};
	const char *m[] = {"/w/a/b/.secret"};
	struct want w[] = {
	    {"/w", LL_CONTAINER, "container"},
	    {"/w/a", LL_CONTAINER, "container"},
	    {"/w/a/b", LL_CONTAINER, "container"},
	    {"/w/a/b/keep", FW, "workspace"},
	    {"/w/a/b/sub", LL_W, "workspace"},
	    {"/w/a/c", FW, "workspace"},
	    {"/w/z", FW, "workspace"},
	};
	const char *ap[] = {
	    "names directly in /w can be neither made, removed nor renamed: Landlock would "
	    "allow it below too, where masked or protected paths are",
	    "names directly in /w/a can be neither made, removed nor renamed: Landlock would "
	    "allow it below too, where masked or protected paths are",
	    "masked names in /w/a/b are still listed (their contents are unreadable)",
	    "names directly in /w/a/b can be neither made, removed nor renamed: Landlock would "
	    "allow it below too, where masked or protected paths are",
	};
	struct run r;

	plan(&r, &f, g, N(g), m, N(m), NULL, 0);
	expect_rules(&r, w, N(w));
	expect_approx(&r, ap, N(ap));
	expect_kept(&r, m, N(m), NULL, 0);
	done(&r);
}

/* ---- nested grants -------------------------------------------------------- */

Test(landlock_plan, a_writable_grant_in_a_read_only_one_adds_its_rule)
{
	struct ll_grant g[] = {{"/home/u", false, "read_paths"},
			       {"/home/u/proj", true, "workspace"}};
	struct want w[] = {{"/home/u", LL_R, "read_paths"}, {"/home/u/proj", LL_W, "workspace"}};
	struct run r;

	plan(&r, NULL, g, N(g), NULL, 0, NULL, 0);
	expect_rules(&r, w, N(w));
	expect_approx(&r, NULL, 0);
	done(&r);
}

Test(landlock_plan, a_read_only_grant_in_a_writable_one_stays_writable)
{
	struct ll_grant g[] = {{"/w/src/vendor", false, "read_paths"}, {"/w", true, "workspace"}};
	struct want w[] = {{"/w", LL_W, "workspace"}, {"/w/src/vendor", LL_R, "read_paths"}};
	const char *ap[] = {"grant /w/src/vendor is read-only but lies below writable /w: "
			    "Landlock cannot take rights away; writable here"};
	struct run r;

	plan(&r, NULL, g, N(g), NULL, 0, NULL, 0);
	expect_rules(&r, w, N(w));
	expect_approx(&r, ap, N(ap));
	done(&r);
}

Test(landlock_plan, a_read_only_grant_that_is_an_entry_of_a_container_is_exact)
{
	struct fake f = {TREE(ws)};
	struct ll_grant g[] = {{"/w", true, "workspace"}, {"/w/src", false, "read_paths"}};
	const char *m[] = {"/w/.env"};
	struct run r;

	/* The listing of /w leaves src to its own grant: read-only, no note. */
	plan(&r, &f, g, N(g), m, N(m), NULL, 0);
	cr_assert_eq(r.rc, 0, "%s", r.err);
	cr_assert_eq(allowed_at(&r.p, "/w/src/main.c"), LL_R, "%s", show(&r));
	for (size_t i = 0; i < r.p.n_approx; i++)
		cr_assert_null(strstr(r.p.approx[i], "grant /w/src"), "%s", show(&r));
	cr_assert_eq(r.p.n_approx, 2, "%s", show(&r));
	done(&r);
}

Test(landlock_plan, a_protected_grant_in_a_writable_one_is_read_only_exactly)
{
	struct fake f = {TREE(ws)};
	struct ll_grant g[] = {{"/w", true, "workspace"}, {"/w/.git/hooks", true, "write_paths"}};
	const char *pr[] = {"/w/.git/hooks"};
	struct want w[] = {
	    {"/w", LL_CONTAINER, "container"},
	    {"/w/.env", FW, "workspace"},
	    {"/w/.git", LL_CONTAINER, "container"},
	    {"/w/.git/HEAD", FW, "workspace"},
	    {"/w/.git/config", FW, "workspace"},
	    /* Its own grant's rule, read-only: protection beats a grant. */
	    {"/w/.git/hooks", LL_R, "write_paths"},
	    {"/w/.git/objects", LL_W, "workspace"},
	    {"/w/README", FW, "workspace"},
	    {"/w/src", LL_W, "workspace"},
	};
	struct run r;

	plan(&r, &f, g, N(g), NULL, 0, pr, N(pr));
	expect_rules(&r, w, N(w));
	expect_kept(&r, NULL, 0, pr, N(pr));
	for (size_t i = 0; i < r.p.n_approx; i++)
		cr_assert_null(strstr(r.p.approx[i], "grant /w/.git/hooks"), "%s", show(&r));
	done(&r);
}

static const struct node nest[] = {
    {"/w", D},	       {"/w/sub", D},	  {"/w/sub/.key", F},
    {"/w/sub/lib", D}, {"/w/sub/x.c", F}, {"/w/top", F},
};

Test(landlock_plan, a_mask_inside_a_nested_grant_stops_the_outer_grant_above_it)
{
	struct fake f = {TREE(nest)};
	struct ll_grant g[] = {{"/w", true, "workspace"}, {"/w/sub", false, "read_paths"}};
	const char *m[] = {"/w/sub/.key"};
	struct want w[] = {
	    {"/w", LL_CONTAINER, "container"},
	    /* Cut by its own plan, read-only: the workspace gives it nothing. */
	    {"/w/sub", LL_CONTAINER, "container"},
	    {"/w/sub/lib", LL_R, "read_paths"},
	    {"/w/sub/x.c", FR, "read_paths"},
	    {"/w/top", FW, "workspace"},
	};
	struct run r;

	plan(&r, &f, g, N(g), m, N(m), NULL, 0);
	expect_rules(&r, w, N(w));
	expect_kept(&r, m, N(m), NULL, 0);
	for (size_t i = 0; i < r.p.n_approx; i++)
		cr_assert_null(strstr(r.p.approx[i], "grant /w/sub"), "%s", show(&r));
	done(&r);
}

Test(landlock_plan, a_grant_at_a_mask_is_masked_one_inside_a_masked_directory_is_not)
{
	struct fake f = {TREE(data)};
	struct ll_grant g[] = {{"/data", false, "read_paths"},
			       {"/data/.secret", false, "read_paths"},
			       {"/data/.secret/key", false, "secrets"}};
	const char *m[] = {"/data/.secret"};
	struct want w[] = {
	    {"/data", LL_CONTAINER, "container"},
	    {"/data/.secret/key", LL_R, "secrets"},
	    {"/data/notes.txt", FR, "read_paths"},
	    {"/data/pub", LL_R, "read_paths"},
	};
	struct run r;

	plan(&r, &f, g, N(g), m, N(m), NULL, 0);
	expect_rules(&r, w, N(w));
	done(&r);
	/* The masked grant alone: no rule at all, nothing listed. */
	f.n_listed = 0;
	plan(&r, &f, g + 1, 1, m, N(m), NULL, 0);
	expect_rules(&r, NULL, 0);
	expect_approx(&r, NULL, 0);
	cr_assert_eq(f.n_listed, 0);
	done(&r);
}

static const struct node fenced[] = {
    {"/w", D},	   {"/w/a", D},	   {"/w/a/.git", D}, {"/w/a/.git/hooks", D},
    {"/w/a/f", F}, {"/w/a/.x", F}, {"/w/a-b", F},    {"/w/c", F},
};

Test(landlock_plan, nothing_inside_a_masked_directory_is_planned)
{
	struct fake f = {TREE(fenced)};
	struct ll_grant g[] = {{"/w", true, "workspace"}};
	/* "/w/a-b" sorts between "/w/a" and "/w/a/.git/hooks" in byte order. */
	const char *m[] = {"/w/a", "/w/a-b"}, *pr[] = {"/w/a/.git/hooks"};
	struct want w[] = {{"/w", LL_CONTAINER, "container"}, {"/w/c", FW, "workspace"}};
	struct run r;

	plan(&r, &f, g, N(g), m, N(m), pr, N(pr));
	expect_rules(&r, w, N(w));
	expect_kept(&r, m, N(m), pr, N(pr));
	cr_assert_eq(f.n_listed, 1);
	done(&r);
}

Test(landlock_plan, nothing_inside_a_nested_grant_is_planned_by_the_outer_one)
{
	struct fake f = {TREE(fenced)};
	struct ll_grant g[] = {{"/w", true, "workspace"}, {"/w/a", false, "read_paths"}};
	/* /w/a holds a mask: the workspace stops above it, past "/w/a-b". */
	const char *m[] = {"/w/a/.x", "/w/a-b"};
	struct want w[] = {
	    {"/w", LL_CONTAINER, "container"}, {"/w/a", LL_CONTAINER, "container"},
	    {"/w/a/.git", LL_R, "read_paths"}, {"/w/a/f", FR, "read_paths"},
	    {"/w/c", FW, "workspace"},
	};
	struct run r;

	plan(&r, &f, g, N(g), m, N(m), NULL, 0);
	expect_rules(&r, w, N(w));
	expect_kept(&r, m, N(m), NULL, 0);
	done(&r);
}

/* ---- what needs nothing, what fails --------------------------------------- */

Test(landlock_plan, masked_and_protected_paths_below_no_grant_are_ignored)
{
	struct fake f = {TREE(ws), .fail = "/w"};
	struct ll_grant g[] = {{"/w/src", true, "write_paths"}};
	const char *m[] = {"/w/.env", "/w", "/elsewhere/.x"};
	const char *pr[] = {"/w/.git/hooks", "/w/src"};
	struct want w[] = {{"/w/src", LL_R, "write_paths"}};
	struct run r;

	/* /w/src itself protected: read-only, and nothing to list. */
	plan(&r, &f, g, N(g), m, N(m), pr, N(pr));
	expect_rules(&r, w, N(w));
	expect_approx(&r, NULL, 0);
	cr_assert_eq(f.n_listed, 0);
	done(&r);
}

Test(landlock_plan, a_listing_that_fails_fails_the_plan)
{
	struct fake f = {TREE(deep), .fail = "/w/a"};
	struct ll_grant g[] = {{"/w", true, "workspace"}};
	const char *m[] = {"/w/a/b/.secret"};
	struct run r;

	plan(&r, &f, g, N(g), m, N(m), NULL, 0);
	cr_assert_eq(r.rc, -1);
	cr_assert_str_eq(r.err, "cannot list /w/a, which holds masked or protected paths of "
				"workspace /w");
	done(&r);
	/* No listing at all where one is needed. */
	plan(&r, NULL, g, N(g), m, N(m), NULL, 0);
	cr_assert_eq(r.rc, -1);
	cr_assert(strstr(r.err, "cannot list /w,"), "%s", r.err);
	done(&r);
}

static const struct node odd[] = {
    {"/w", D},
    {"/w/lnk", L},
    {"/w/.git", F},
    {"/w/keep", D},
    {"/w/.vscode", D},
    {"/w/.vscode/a.json", F},
    {"/w/.vscode/.token", F},
};

Test(landlock_plan, links_missing_and_file_containers_are_neither_listed_nor_given_rules)
{
	struct fake f = {TREE(odd)};
	struct ll_grant g[] = {{"/w", true, "workspace"}};
	/* .git is a file (a worktree's), .envrc and .idea do not exist, lnk is a link. */
	const char *m[] = {"/w/lnk/.x", "/w/.vscode/.token"};
	const char *pr[] = {"/w/.git/hooks", "/w/.idea/workspace.xml", "/w/.envrc", "/w/.vscode"};
	struct want w[] = {
	    {"/w", LL_CONTAINER, "container"},
	    {"/w/.git", FW, "workspace"},
	    /* Protected, with a mask inside: cut, its entries read-only. */
	    {"/w/.vscode", LL_CONTAINER, "container"},
	    {"/w/.vscode/a.json", FR, "workspace"},
	    {"/w/keep", LL_W, "workspace"},
	};
	struct run r;

	plan(&r, &f, g, N(g), m, N(m), pr, N(pr));
	expect_rules(&r, w, N(w));
	/* Nothing lies below the file .git. */
	expect_kept(&r, m, N(m), pr + 1, N(pr) - 1);
	cr_assert_eq(f.n_listed, 2, "listed %zu", f.n_listed);
	cr_assert(was_listed(&f, "/w") && was_listed(&f, "/w/.vscode"));
	done(&r);
}

Test(landlock_plan, the_root_as_a_grant)
{
	struct fake f = {TREE(data)};
	struct ll_grant g[] = {{"/", false, "system"}};
	const char *m[] = {"/etc/shadow"};
	struct want w[] = {
	    {"/", LL_CONTAINER, "container"},
	    {"/data", LL_R, "system"},
	    {"/etc", LL_CONTAINER, "container"},
	    {"/etc/passwd", FR, "system"},
	    {"/usr", LL_R, "system"},
	};
	struct run r;

	plan(&r, &f, g, N(g), m, N(m), NULL, 0);
	expect_rules(&r, w, N(w));
	cr_assert(was_listed(&f, "/") && was_listed(&f, "/etc"));
	done(&r);
}

/* ---- order ------------------------------------------------------------------ */

Test(landlock_plan, one_rule_per_path_the_same_whatever_the_order)
{
	struct ll_grant g1[] = {{"/w", false, "read_paths"},
				{"/w", true, "write_paths"},
				{"/w/src/vendor", false, "read_paths"}};
	struct ll_grant g2[] = {g1[2], g1[1], g1[0]};
	const char *m1[] = {"/w/.env", "/w/.git/hooks/x"}, *m2[] = {m1[1], m1[0]};
	const char *pr1[] = {"/w/.git/config", "/w/.git/hooks"}, *pr2[] = {pr1[1], pr1[0]};
	struct fake f1 = {TREE(ws)}, f2 = {TREE(ws), .reverse = true};
	struct run r1, r2;
	char *one;

	plan(&r1, &f1, g1, N(g1), m1, N(m1), pr1, N(pr1));
	plan(&r2, &f2, g2, N(g2), m2, N(m2), pr2, N(pr2));
	cr_assert_eq(r1.rc, 0, "%s", r1.err);
	cr_assert_eq(r2.rc, 0, "%s", r2.err);
	one = strdup(show(&r1));
	cr_assert_str_eq(one, show(&r2));
	free(one);
	for (size_t i = 1; i < r1.p.n_rules; i++)
		cr_assert_lt(strcmp(r1.p.rules[i - 1].path, r1.p.rules[i].path), 0, "%s",
			     show(&r1));
	for (size_t i = 1; i < r1.p.n_approx; i++)
		cr_assert_neq(strcmp(r1.p.approx[i - 1], r1.p.approx[i]), 0, "%s", show(&r1));
	/* Both grants of /w planned it: rights or-ed, whys joined. */
	cr_assert_str_eq(r1.p.rules[0].path, "/w");
	cr_assert_eq(r1.p.rules[0].rights, LL_CONTAINER);
	cr_assert_str_eq(r1.p.rules[0].why, "container");
	cr_assert_eq(allowed_at(&r1.p, "/w/src/main.c"), LL_W);
	for (size_t i = 0; i < r1.p.n_rules; i++)
		if (!strcmp(r1.p.rules[i].path, "/w/README"))
			cr_assert_str_eq(r1.p.rules[i].why, "read_paths, write_paths");
	/* The vendor grant is covered by src's writable rule. */
	cr_assert(strstr(show(&r1), "grant /w/src/vendor is read-only"), "%s", show(&r1));
	expect_kept(&r1, m1, N(m1), pr1, N(pr1));
	done(&r1);
	done(&r2);
}

/* ---- rights --------------------------------------------------------------- */

Test(landlock_plan, rights_are_the_kernels_bits)
{
	cr_assert_eq(LL_R, 0x0d);
	cr_assert_eq(LL_W & (LL_MAKE_CHAR | LL_MAKE_BLOCK), 0, "devices are never made");
	cr_assert_eq(LL_W, 0x77bf);
	cr_assert_eq(LL_CONTAINER & ~LL_R, 0);
#if defined(__linux__)
	cr_assert_eq(LL_EXECUTE, LANDLOCK_ACCESS_FS_EXECUTE);
	cr_assert_eq(LL_WRITE_FILE, LANDLOCK_ACCESS_FS_WRITE_FILE);
	cr_assert_eq(LL_READ_FILE, LANDLOCK_ACCESS_FS_READ_FILE);
	cr_assert_eq(LL_READ_DIR, LANDLOCK_ACCESS_FS_READ_DIR);
	cr_assert_eq(LL_REMOVE_DIR, LANDLOCK_ACCESS_FS_REMOVE_DIR);
	cr_assert_eq(LL_REMOVE_FILE, LANDLOCK_ACCESS_FS_REMOVE_FILE);
	cr_assert_eq(LL_MAKE_CHAR, LANDLOCK_ACCESS_FS_MAKE_CHAR);
	cr_assert_eq(LL_MAKE_DIR, LANDLOCK_ACCESS_FS_MAKE_DIR);
	cr_assert_eq(LL_MAKE_REG, LANDLOCK_ACCESS_FS_MAKE_REG);
	cr_assert_eq(LL_MAKE_SOCK, LANDLOCK_ACCESS_FS_MAKE_SOCK);
	cr_assert_eq(LL_MAKE_FIFO, LANDLOCK_ACCESS_FS_MAKE_FIFO);
	cr_assert_eq(LL_MAKE_BLOCK, LANDLOCK_ACCESS_FS_MAKE_BLOCK);
	cr_assert_eq(LL_MAKE_SYM, LANDLOCK_ACCESS_FS_MAKE_SYM);
#ifdef LANDLOCK_ACCESS_FS_REFER
	cr_assert_eq(LL_REFER, LANDLOCK_ACCESS_FS_REFER);
#endif
#ifdef LANDLOCK_ACCESS_FS_TRUNCATE
	cr_assert_eq(LL_TRUNCATE, LANDLOCK_ACCESS_FS_TRUNCATE);
#endif
#endif
}

Test(landlock_plan, rights_text)
{
	char buf[256];
	const struct {
		unsigned long long rights;
		const char *text;
	} cases[] = {
	    {LL_R, "read,execute,list"},
	    {LL_W, "read,write,execute,list,make,remove,refer,truncate"},
	    {LL_READ_DIR | LL_MAKE | LL_REMOVE | LL_REFER, "list,make,remove,refer"},
	    {LL_CONTAINER, "list"},
	    {FW, "read,write,execute,truncate"},
	    {0, "none"},
	    {LL_MAKE_DIR | LL_MAKE_SYM | LL_REMOVE_FILE, "make-dir,make-sym,remove-file"},
	    {LL_MAKE | LL_MAKE_CHAR | LL_MAKE_BLOCK, "make,make-char,make-block"},
	    {LL_READ_FILE | (1ULL << 15) | (1ULL << 40), "read,0x10000008000"},
	};

	for (size_t i = 0; i < N(cases); i++) {
		size_t len = landlock_rights_text(cases[i].rights, buf, sizeof(buf));

		cr_assert_str_eq(buf, cases[i].text);
		cr_assert_eq(len, strlen(cases[i].text));
	}
	/* Cut short as snprintf cuts, the whole length returned. */
	cr_assert_eq(landlock_rights_text(LL_R, buf, 7), strlen("read,execute,list"));
	cr_assert_str_eq(buf, "read,e");
	cr_assert_eq(landlock_rights_text(LL_R, NULL, 0), strlen("read,execute,list"));
}
