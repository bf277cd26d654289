/*
 * landlock.c - grants, masks and protected paths as Landlock rules
 * (landlock.h).
 */
#include "landlock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A rule as a grant's plan makes it, before rules on one path become one. */
struct raw_rule {
	const char *path;
	unsigned long long rights;
	const char *why;
	size_t grant; /* whose plan made it */
	size_t seq;   /* in the order made: the sort is then total */
};

/* An approximation, sorted by the path it is about. */
struct note {
	const char *path;
	const char *text;
};

struct planner {
	struct arena *a;
	const struct ll_grant *g;
	size_t n_g;
	unsigned long long *rights; /* each grant's own rights */
	const char **mask;	    /* sorted */
	size_t n_mask;
	const char **prot; /* sorted */
	size_t n_prot;
	ll_children_fn *children;
	void *arg;
	struct raw_rule *rules;
	size_t n_rules, cap_rules;
	struct note *notes;
	size_t n_notes, cap_notes;
	char *err;
	size_t errlen;
};

/* A directory between a grant and a target (the grant's own path included). */
struct box {
	const char *path;
	bool exists;	   /* the grant itself, or listed as a directory in its parent */
	bool masked_entry; /* holds a masked name */
};

/* A target: where a grant's plan must stop giving the grant's rights. */
struct target {
	const char *path;
	bool fence; /* masked, or a nested grant: nothing strictly inside it is a target */
};

/* Is P strictly below the directory DIR? */
bool
landlock_path_below(const char *p, const char *dir)
{
	size_t len = strlen(dir);

	if (!strcmp(dir, "/"))
		return p[0] == '/' && p[1] != '\0';
	return !strncmp(p, dir, len) && p[len] == '/';
}

bool
landlock_path_at_or_below(const char *p, const char *dir)
{
	return !strcmp(p, dir) || landlock_path_below(p, dir);
}

static int
cmp_str(const void *x, const void *y)
{
	return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* The N strings of V, sorted, into arena memory. */
static const char **
sorted_copy(struct arena *a, const char *const *v, size_t n)
{
	const char **c = arena_alloc(a, (n ? n : 1) * sizeof(*c));

	for (size_t i = 0; i < n; i++)
		c[i] = v[i];
	qsort(c, n, sizeof(*c), cmp_str);
	return c;
}

static bool
in_sorted(const char **v, size_t n, const char *s)
{
	return n && bsearch(&s, v, n, sizeof(*v), cmp_str) != NULL;
}

/* Is P at or inside a protected path?  Then nothing there is writable. */
static bool
protected_at(const struct planner *pl, const char *p)
{
	for (size_t i = 0; i < pl->n_prot; i++)
		if (landlock_path_at_or_below(p, pl->prot[i]))
			return true;
	return false;
}

/* Is there a grant (other than SELF) at P? */
static bool
granted_at(const struct planner *pl, const char *p, size_t self)
{
	for (size_t i = 0; i < pl->n_g; i++)
		if (i != self && !strcmp(pl->g[i].path, p))
			return true;
	return false;
}

static void
add_rule(struct planner *pl, size_t gi, const char *path, unsigned long long rights,
	 const char *why)
{
	size_t seq = pl->n_rules;

	*ARENA_PUSH(pl->a, pl->rules, pl->n_rules, pl->cap_rules) =
	    (struct raw_rule){path, rights, why, gi, seq};
}

static void
add_note(struct planner *pl, const char *path, const char *text)
{
	*ARENA_PUSH(pl->a, pl->notes, pl->n_notes, pl->cap_notes) = (struct note){path, text};
}

/*
 * Path order: byte order, but with '/' before every other byte, so what
 * lies below a path comes right after it ("a", "a/b", "a-b"), never with
 * a sibling's name in between as in byte order ("a", "a-b", "a/b").
 */
static int
cmp_target(const void *x, const void *y)
{
	const unsigned char *a = (const unsigned char *)((const struct target *)x)->path;
	const unsigned char *b = (const unsigned char *)((const struct target *)y)->path;

	while (*a && *a == *b)
		a++, b++;
	return (*a == '/' ? 1 : *a ? *a + 1 : 0) - (*b == '/' ? 1 : *b ? *b + 1 : 0);
}

/*
 * The targets of grant GI into *OUT: masked paths strictly below it, and
 * protected ones when it is writable (read-only, it gives them nothing
 * they must not have), then each nested grant with one of those strictly
 * inside it, which stands for them (its own plan cuts it).  What lies
 * strictly inside a fence is dropped: G's plan gives nothing there.
 */
static size_t
targets_of(struct planner *pl, size_t gi, struct target **out)
{
	const char *g = pl->g[gi].path;
	bool writes = (pl->rights[gi] & ~(unsigned long long)LL_R) != 0;
	struct target *t = NULL;
	const char *fence = NULL;
	size_t n = 0, cap = 0, k = 0;

	for (size_t i = 0; i < pl->n_mask; i++)
		if (landlock_path_below(pl->mask[i], g))
			*ARENA_PUSH(pl->a, t, n, cap) = (struct target){pl->mask[i], true};
	for (size_t i = 0; writes && i < pl->n_prot; i++)
		if (landlock_path_below(pl->prot[i], g))
			*ARENA_PUSH(pl->a, t, n, cap) = (struct target){pl->prot[i], false};
	for (size_t h = 0, m = n; h < pl->n_g; h++) {
		bool holds = false;

		for (size_t i = 0; i < m && !holds; i++)
			holds = landlock_path_below(t[i].path, pl->g[h].path);
		if (h != gi && landlock_path_below(pl->g[h].path, g) && holds)
			*ARENA_PUSH(pl->a, t, n, cap) = (struct target){pl->g[h].path, true};
	}
	/* In path order, what lies below a fence follows it: one pass drops it. */
	if (n)
		qsort(t, n, sizeof(*t), cmp_target);
	for (size_t i = 0; i < n; i++) {
		if (fence && landlock_path_below(t[i].path, fence))
			continue;
		if (t[i].fence)
			fence = t[i].path; /* past the last one's subtree, or at its path */
		t[k++] = t[i];
	}
	*out = t;
	return k;
}

static int
cmp_box(const void *x, const void *y)
{
	return strcmp(((const struct box *)x)->path, ((const struct box *)y)->path);
}

/*
 * The containers of grant path G for the N targets T into *OUT, by path:
 * G, and each directory strictly between G and a target.  A parent comes
 * before its children (it is a prefix of theirs), so a walk in this order
 * lists a directory before it must know whether its children exist.
 */
static size_t
boxes_of(struct arena *a, const char *g, const struct target *t, size_t n, struct box **out)
{
	struct box *b = NULL;
	size_t nb = 0, cap = 0, k = 0, glen = strlen(g);

	*ARENA_PUSH(a, b, nb, cap) = (struct box){g, true, false};
	for (size_t i = 0; i < n; i++)
		for (const char *s = t[i].path + glen; (s = strchr(s, '/')) != NULL; s++)
			if (s > t[i].path + glen)
				*ARENA_PUSH(a, b, nb, cap) = (struct box){
				    arena_strndup(a, t[i].path, (size_t)(s - t[i].path)), false,
				    false};
	qsort(b, nb, sizeof(*b), cmp_box);
	for (size_t i = 0; i < nb; i++)
		if (!k || strcmp(b[k - 1].path, b[i].path))
			b[k++] = b[i];
		else
			b[k - 1].exists |= b[i].exists;
	*out = b;
	return k;
}

/* One listing of a container of grant GI. */
struct listing {
	struct planner *pl;
	size_t gi;
	struct box *boxes;
	size_t n_boxes;
	size_t cur;
};

static char *
path_join(struct arena *a, const char *dir, const char *name)
{
	return arena_printf(a, "%s%s%s", dir, strcmp(dir, "/") ? "/" : "", name);
}

/* An entry NAME of the container being listed: the rule it gets, if any. */
static void
on_entry(void *arg, const char *name, enum ll_kind kind)
{
	struct listing *l = arg;
	struct planner *pl = l->pl;
	struct box key = {0}, *box;
	unsigned long long rights = pl->rights[l->gi];
	const char *why = pl->g[l->gi].what;

	/* A name that is not one entry would make a rule somewhere else. */
	if (!name[0] || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
		return;
	key.path = path_join(pl->a, l->boxes[l->cur].path, name);
	if (in_sorted(pl->mask, pl->n_mask, key.path)) {
		l->boxes[l->cur].masked_entry = true;
		if (kind == LL_KIND_DIR)
			add_note(pl, key.path,
				 arena_printf(pl->a,
					      "what masked directory %s holds is still listed "
					      "(none of it can be read)",
					      arena_escape(pl->a, key.path)));
		return;
	}
	box = bsearch(&key, l->boxes, l->n_boxes, sizeof(*box), cmp_box);
	if (box && kind == LL_KIND_DIR) {
		box->exists = true; /* listed in its turn, with its rule */
		return;
	}
	/* A link needs no rule (what it names has its own); a grant makes its own. */
	if (kind == LL_KIND_LINK || granted_at(pl, key.path, l->gi))
		return;
	if (in_sorted(pl->prot, pl->n_prot, key.path)) {
		rights = LL_R;
		why = "protected";
	}
	if (protected_at(pl, key.path))
		rights &= LL_R;
	if (kind == LL_KIND_FILE)
		rights &= LL_FILE_RIGHTS;
	add_rule(pl, l->gi, key.path, rights, why);
}

/* List container L->cur; 0, or -1 with the message in PL->err. */
static int
list_box(struct planner *pl, struct listing *l)
{
	const struct ll_grant *g = &pl->g[l->gi];
	struct box *b = &l->boxes[l->cur];
	int rc = pl->children ? pl->children(pl->arg, b->path, on_entry, l) : -1;

	if (rc < 0) {
		snprintf(pl->err, pl->errlen,
			 "cannot list %s, which holds masked or protected paths of %s %s",
			 arena_escape(pl->a, b->path), g->what, arena_escape(pl->a, g->path));
		return -1;
	}
	if (rc > 0) {
		/* Not a directory: nothing below it to keep from the grant. */
		if (l->cur == 0)
			add_rule(pl, l->gi, g->path, pl->rights[l->gi], g->what);
		return 0;
	}
	add_rule(pl, l->gi, b->path, LL_CONTAINER, "container");
	if (pl->rights[l->gi] & ~(unsigned long long)LL_R)
		add_note(pl, b->path,
			 arena_printf(pl->a,
				      "names directly in %s can be neither made, removed nor "
				      "renamed: Landlock would allow it below too, where masked "
				      "or protected paths are",
				      arena_escape(pl->a, b->path)));
	if (b->masked_entry)
		add_note(pl, b->path,
			 arena_printf(pl->a,
				      "masked names in %s are still listed (their contents are "
				      "unreadable)",
				      arena_escape(pl->a, b->path)));
	return 0;
}

/* The rules of grant GI alone. */
static int
plan_grant(struct planner *pl, size_t gi)
{
	const struct ll_grant *g = &pl->g[gi];
	struct target *t;
	size_t nt;
	struct listing l = {.pl = pl, .gi = gi};

	/* The mask is mounted over the grant: nothing of it shows. */
	if (in_sorted(pl->mask, pl->n_mask, g->path))
		return 0;
	nt = targets_of(pl, gi, &t);
	if (!nt) {
		add_rule(pl, gi, g->path, pl->rights[gi], g->what);
		return 0;
	}
	l.n_boxes = boxes_of(pl->a, g->path, t, nt, &l.boxes);
	for (l.cur = 0; l.cur < l.n_boxes; l.cur++)
		if (l.boxes[l.cur].exists && list_box(pl, &l) < 0)
			return -1;
	return 0;
}

/*
 * A grant H that another grant's rules cover (at H or above it) with more
 * rights than H's own keeps them: Landlock adds rights up, it never takes
 * one away.
 */
static void
note_nested(struct planner *pl)
{
	for (size_t h = 0; h < pl->n_g; h++) {
		const char *hp = pl->g[h].path;
		bool noted = false;

		if (in_sorted(pl->mask, pl->n_mask, hp))
			continue;
		for (size_t i = 0; i < pl->n_rules && !noted; i++) {
			const struct raw_rule *r = &pl->rules[i];

			if (r->grant == h || !landlock_path_below(hp, pl->g[r->grant].path) ||
			    !landlock_path_at_or_below(hp, r->path) ||
			    !(r->rights & ~pl->rights[h]))
				continue;
			add_note(pl, hp,
				 arena_printf(pl->a,
					      "grant %s is read-only but lies below writable %s: "
					      "Landlock cannot take rights away; writable here",
					      arena_escape(pl->a, hp),
					      arena_escape(pl->a, pl->g[r->grant].path)));
			noted = true;
		}
	}
}

static int
cmp_raw(const void *x, const void *y)
{
	const struct raw_rule *a = x, *b = y;
	int c = strcmp(a->path, b->path);

	return c ? c : (a->seq > b->seq) - (a->seq < b->seq);
}

/* The distinct whys of rules V[0..N) (one path), ", "-separated in byte order. */
static const char *
join_whys(struct arena *a, const struct raw_rule *v, size_t n)
{
	const char **w = arena_alloc(a, n * sizeof(*w));
	size_t k = 0, len = 0;
	char *s;

	for (size_t i = 0; i < n; i++)
		w[i] = v[i].why;
	qsort(w, n, sizeof(*w), cmp_str);
	for (size_t i = 0; i < n; i++)
		if (!k || strcmp(w[k - 1], w[i]))
			w[k++] = w[i];
	if (k == 1)
		return w[0];
	for (size_t i = 0; i < k; i++)
		len += strlen(w[i]) + 2;
	s = arena_alloc(a, len + 1);
	for (size_t i = 0; i < k; i++)
		strcat(strcat(s, i ? ", " : ""), w[i]);
	return s;
}

/* PL's rules by path, each path once, into OUT. */
static void
merge_rules(struct planner *pl, struct ll_plan *out)
{
	if (pl->n_rules) /* NULL when empty */
		qsort(pl->rules, pl->n_rules, sizeof(*pl->rules), cmp_raw);
	out->rules = arena_alloc(pl->a, (pl->n_rules ? pl->n_rules : 1) * sizeof(*out->rules));
	out->n_rules = 0;
	for (size_t i = 0, j; i < pl->n_rules; i = j) {
		struct ll_rule *r = &out->rules[out->n_rules++];

		r->path = pl->rules[i].path;
		r->rights = 0;
		for (j = i; j < pl->n_rules && !strcmp(pl->rules[j].path, r->path); j++)
			r->rights |= pl->rules[j].rights;
		r->why = join_whys(pl->a, &pl->rules[i], j - i);
	}
}

static int
cmp_note(const void *x, const void *y)
{
	const struct note *a = x, *b = y;
	int c = strcmp(a->path, b->path);

	return c ? c : strcmp(a->text, b->text);
}

/* PL's approximations by path, then text, each once, into OUT. */
static void
merge_notes(struct planner *pl, struct ll_plan *out)
{
	if (pl->n_notes) /* NULL when empty */
		qsort(pl->notes, pl->n_notes, sizeof(*pl->notes), cmp_note);
	out->approx = arena_alloc(pl->a, (pl->n_notes ? pl->n_notes : 1) * sizeof(*out->approx));
	out->n_approx = 0;
	for (size_t i = 0; i < pl->n_notes; i++)
		if (!i || strcmp(pl->notes[i - 1].text, pl->notes[i].text))
			out->approx[out->n_approx++] = pl->notes[i].text;
}

int
landlock_plan(struct arena *a, const struct ll_grant *grants, size_t n_grants,
	      const char *const *masked, size_t n_masked, const char *const *protect,
	      size_t n_protect, ll_children_fn *children, void *arg, struct ll_plan *out, char *err,
	      size_t errlen)
{
	struct planner pl = {
	    .a = a,
	    .g = grants,
	    .n_g = n_grants,
	    .mask = sorted_copy(a, masked, n_masked),
	    .n_mask = n_masked,
	    .prot = sorted_copy(a, protect, n_protect),
	    .n_prot = n_protect,
	    .children = children,
	    .arg = arg,
	    .err = err,
	    .errlen = errlen,
	};

	memset(out, 0, sizeof(*out));
	if (errlen)
		err[0] = '\0';
	pl.rights = arena_alloc(a, (n_grants ? n_grants : 1) * sizeof(*pl.rights));
	for (size_t i = 0; i < n_grants; i++)
		pl.rights[i] =
		    grants[i].writable && !protected_at(&pl, grants[i].path) ? LL_W : LL_R;
	for (size_t i = 0; i < n_grants; i++)
		if (plan_grant(&pl, i) < 0)
			return -1;
	note_nested(&pl);
	merge_rules(&pl, out);
	merge_notes(&pl, out);
	return 0;
}

/* The words of landlock_rights_text(), in their order. */
static const struct {
	unsigned long long bits;
	const char *word;
} words[] = {
    {LL_READ_FILE, "read"},
    {LL_WRITE_FILE, "write"},
    {LL_EXECUTE, "execute"},
    {LL_READ_DIR, "list"},
    {LL_MAKE, "make"},
    {LL_MAKE_DIR, "make-dir"},
    {LL_MAKE_REG, "make-reg"},
    {LL_MAKE_SOCK, "make-sock"},
    {LL_MAKE_FIFO, "make-fifo"},
    {LL_MAKE_SYM, "make-sym"},
    {LL_REMOVE, "remove"},
    {LL_REMOVE_DIR, "remove-dir"},
    {LL_REMOVE_FILE, "remove-file"},
    {LL_REFER, "refer"},
    {LL_TRUNCATE, "truncate"},
    {LL_MAKE_CHAR, "make-char"},
    {LL_MAKE_BLOCK, "make-block"},
};

/* WORD after the LEN bytes of BUF (CAP bytes), with a comma when not first. */
static void
put_word(char *buf, size_t cap, size_t *len, const char *word)
{
	size_t at = *len, w = strlen(word);

	/* As snprintf() would: what fits, always terminated; the length whole. */
	if (at) {
		if (at + 1 < cap)
			buf[at] = ',';
		at++;
	}
	if (at < cap) {
		size_t fit = w < cap - at - 1 ? w : cap - at - 1;

		memcpy(buf + at, word, fit);
		buf[at + fit] = '\0';
	} else if (cap) {
		buf[cap - 1] = '\0';
	}
	*len = at + w;
}

size_t
landlock_rights_text(unsigned long long rights, char *buf, size_t cap)
{
	unsigned long long left = rights;
	size_t len = 0;
	char hex[24];

	if (cap)
		buf[0] = '\0';
	/* A group's word takes its bits first, so its members are not named again. */
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if ((left & words[i].bits) == words[i].bits) {
			left &= ~words[i].bits;
			put_word(buf, cap, &len, words[i].word);
		}
	if (left) {
		snprintf(hex, sizeof(hex), "0x%llx", left);
		put_word(buf, cap, &len, hex);
	}
	if (!rights)
		put_word(buf, cap, &len, "none");
	return len;
}
