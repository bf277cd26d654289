/*
 * landlock_open.c - a Landlock plan as descriptors, every path below a
 * grant reached from the grant's own descriptor (landlock_open.h).
 */
#include "runtime/resolve/landlock_open.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compiler/decide/env.h"
#include "compiler/decide/landlock.h"
#include "compiler/decide/llbackend.h"
#include "compiler/base/diag.h"
#include "emitters/bwrap.h"
#include "runtime/resolve/walk.h"

#ifndef O_PATH
/* Not Linux: a descriptor that can be read (and listed) stands in. */
#define O_PATH O_RDONLY
#endif

struct ctx {
	struct arena *a;
	const struct ll_open_grant *g;
	size_t n_g;
	const char *const *masked;
	size_t n_masked;
	const char *const *protect;
	size_t n_protect;
	char why[1024]; /* why a listing failed, for the planner's message */
};

/* The deepest grant at or above P, or NULL. */
static const struct ll_open_grant *
holder(const struct ctx *c, const char *p)
{
	const struct ll_open_grant *best = NULL;

	for (size_t i = 0; i < c->n_g; i++)
		if (landlock_path_at_or_below(p, c->g[i].path) &&
		    (!best || strlen(c->g[i].path) > strlen(best->path)))
			best = &c->g[i];
	return best;
}

/* P relative to the grant path G that holds it ("" for G itself). */
static const char *
rel_of(const char *g, const char *p)
{
	const char *r = p + strlen(g);

	return *r == '/' ? r + 1 : r;
}

/* How a walk below a grant failed. */
struct walk_fail {
	size_t end; /* REL[0..end) is the component that failed, with those before it */
	bool link;  /* that component is a symbolic link */
};

/*
 * REL (components below the directory BASE, "" for BASE itself) opened one
 * component at a time with O_PATH|O_NOFOLLOW|O_CLOEXEC, every component
 * but the last a directory (O_DIRECTORY), the last with LAST_FLAGS too;
 * the last is never a symbolic link either.  A descriptor, or -1 with
 * errno and *F filled.
 */
static int
walk_below(int base, const char *rel, int last_flags, struct walk_fail *f)
{
	int cur = base, fd;
	const char *s = rel;
	char name[NAME_MAX + 1];

	*f = (struct walk_fail){0};
	if (!*rel)
		return fcntl(base, F_DUPFD_CLOEXEC, 3);
	for (;;) {
		const char *slash = strchr(s, '/');
		size_t len = slash ? (size_t)(slash - s) : strlen(s);
		bool last = !slash;
		struct stat st;
		int e;

		f->end = (size_t)(s - rel) + len;
		if (!len || len > NAME_MAX || (len == 1 && s[0] == '.') ||
		    (len == 2 && s[0] == '.' && s[1] == '.')) {
			e = EINVAL; /* never climb out of the grant */
			fd = -1;
		} else {
			memcpy(name, s, len);
			name[len] = '\0';
			fd = openat(cur, name,
				    O_PATH | O_NOFOLLOW | O_CLOEXEC |
					(last ? last_flags : O_DIRECTORY));
			e = errno;
			/* O_PATH|O_NOFOLLOW opens a link itself: it is never the object. */
			if (fd >= 0 && last && fstat(fd, &st) == 0 && S_ISLNK(st.st_mode)) {
				close(fd);
				fd = -1;
				e = ELOOP;
			}
			if (fd < 0 && (e == ENOTDIR || e == ELOOP) &&
			    fstatat(cur, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			    S_ISLNK(st.st_mode))
				f->link = true;
		}
		if (cur != base)
			close(cur);
		if (fd < 0 || last) {
			errno = e;
			return fd;
		}
		cur = fd;
		s = slash + 1;
	}
}

/* The path of the component a walk from grant path G to REL failed at. */
static const char *
fail_path(struct arena *a, const char *g, const char *rel, const struct walk_fail *f)
{
	return arena_printf(a, "%s%s%.*s", g, strcmp(g, "/") ? "/" : "", (int)f->end, rel);
}

/* Must the planner list P (in a grant at path G), as its listing of the
 * parent shows?  A path between G and a masked path, a nested grant, or a
 * protected path when G is writable: the resolver saw a directory there. */
static bool
is_container(const struct ctx *c, const char *g, const char *p)
{
	bool writable = false;

	for (size_t i = 0; i < c->n_g; i++) {
		if (landlock_path_below(c->g[i].path, p))
			return true;
		writable |= !strcmp(c->g[i].path, g) && c->g[i].writable;
	}
	for (size_t i = 0; i < c->n_masked; i++)
		if (landlock_path_below(c->masked[i], p))
			return true;
	for (size_t i = 0; writable && i < c->n_protect; i++)
		if (landlock_path_below(c->protect[i], p))
			return true;
	return false;
}

/* The kind of the entry E of the directory D; -1 when it is gone, -2 with errno on failure. */
static int
kind_of(DIR *d, const struct dirent *e)
{
	struct stat st;

	switch (e->d_type) {
	case DT_DIR:
		return LL_KIND_DIR;
	case DT_LNK:
		return LL_KIND_LINK;
	case DT_UNKNOWN:
		break;
	default:
		return LL_KIND_FILE;
	}
	if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? -1 : -2;
	return S_ISDIR(st.st_mode)   ? LL_KIND_DIR
	       : S_ISLNK(st.st_mode) ? LL_KIND_LINK
				     : LL_KIND_FILE;
}

/* The entries of D (the directory DIR, in grant G) to EACH. */
static int
list_entries(struct ctx *c, const struct ll_open_grant *g, const char *dir, DIR *d,
	     ll_each_fn *each, void *each_arg)
{
	struct dirent *e;
	int rc = 0;

	for (errno = 0; (e = readdir(d)) != NULL; errno = 0) {
		const char *p;
		int kind, e_errno;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		kind = kind_of(d, e);
		e_errno = errno;
		if (kind == -1)
			continue; /* gone since: nothing to rule */
		p = arena_printf(c->a, "%s%s%s", dir, strcmp(dir, "/") ? "/" : "", e->d_name);
		if (kind == -2) {
			snprintf(c->why, sizeof(c->why), "cannot tell what %s is: %s",
				 arena_escape(c->a, p), strerror(e_errno));
			return -1;
		}
		if (kind == LL_KIND_LINK && is_container(c, g->path, p)) {
			snprintf(c->why, sizeof(c->why),
				 "%s changed while the launch was set up (it is now a symbolic "
				 "link); nothing ran",
				 arena_escape(c->a, p));
			rc = -1;
			continue;
		}
		each(each_arg, e->d_name, (enum ll_kind)kind);
	}
	if (errno) {
		snprintf(c->why, sizeof(c->why), "cannot read %s: %s", arena_escape(c->a, dir),
			 strerror(errno));
		return -1;
	}
	return rc;
}

/* ll_children_fn: DIR listed through the descriptor of the grant that holds it. */
static int
children(void *arg, const char *dir, ll_each_fn *each, void *each_arg)
{
	struct ctx *c = arg;
	const struct ll_open_grant *g = holder(c, dir);
	const char *rel;
	struct walk_fail f;
	int dfd, lfd, rc;
	DIR *d;

	if (!g) {
		snprintf(c->why, sizeof(c->why), "%s lies below no grant", arena_escape(c->a, dir));
		return -1;
	}
	rel = rel_of(g->path, dir);
	dfd = walk_below(g->fd, rel, O_DIRECTORY, &f);
	if (dfd < 0) {
		if (f.link) {
			snprintf(c->why, sizeof(c->why),
				 "%s changed while the launch was set up (it is now a symbolic "
				 "link); nothing ran",
				 arena_escape(c->a, fail_path(c->a, g->path, rel, &f)));
			return -1;
		}
		if (errno == ENOENT || errno == ENOTDIR)
			return 1;
		snprintf(c->why, sizeof(c->why), "%s: %s",
			 arena_escape(c->a, fail_path(c->a, g->path, rel, &f)), strerror(errno));
		return -1;
	}
	lfd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	close(dfd);
	if (lfd < 0) {
		if (errno == ENOTDIR) /* a grant that is a file */
			return 1;
		snprintf(c->why, sizeof(c->why), "%s: %s", arena_escape(c->a, dir),
			 strerror(errno));
		return -1;
	}
	if (!(d = fdopendir(lfd))) {
		snprintf(c->why, sizeof(c->why), "%s: %s", arena_escape(c->a, dir),
			 strerror(errno));
		close(lfd);
		return -1;
	}
	rc = list_entries(c, g, dir, d, each, each_arg);
	closedir(d);
	return rc;
}

void
landlock_opened_close(struct ll_opened *o)
{
	for (size_t i = 0; i < o->n_rules; i++)
		if (o->rules[i].fd >= 0) {
			close(o->rules[i].fd);
			o->rules[i].fd = -1;
		}
}

/* The descriptor of rule R into *FD; 0, or -1 with the message in ERR. */
static int
open_rule(struct ctx *c, const struct ll_rule *r, int *fd, char *err, size_t errlen)
{
	const struct ll_open_grant *g = holder(c, r->path);
	const char *rel, *p;
	struct walk_fail f;
	struct stat st;
	bool want_dir;

	if (!g) {
		snprintf(err, errlen, "the Landlock rule for %s lies below no grant",
			 arena_escape(c->a, r->path));
		return -1;
	}
	rel = rel_of(g->path, r->path);
	*fd = walk_below(g->fd, rel, 0, &f);
	if (*fd < 0) {
		int e = errno;

		p = arena_escape(c->a, *rel ? fail_path(c->a, g->path, rel, &f) : g->path);
		if (f.link || e == ENOENT || e == ENOTDIR)
			snprintf(err, errlen,
				 "%s changed while the launch was set up (%s); nothing ran", p,
				 f.link	       ? "it is now a symbolic link"
				 : e == ENOENT ? "it is gone"
					       : "it is no longer a directory");
		else
			snprintf(err, errlen, "cannot open %s for its Landlock rule: %s", p,
				 strerror(e));
		return -1;
	}
	if (!*rel)
		return 0; /* the grant's own descriptor */
	/* Listed as a directory, or as a file: rights beyond a file's say which. */
	want_dir = (r->rights & ~(unsigned long long)LL_FILE_RIGHTS) != 0;
	if (fstat(*fd, &st) < 0 || (bool)S_ISDIR(st.st_mode) != want_dir) {
		snprintf(err, errlen, "%s changed while the launch was set up (%s); nothing ran",
			 arena_escape(c->a, r->path),
			 want_dir ? "it is no longer a directory" : "it is now a directory");
		close(*fd);
		*fd = -1;
		return -1;
	}
	return 0;
}

int
landlock_open(struct arena *a, const struct ll_open_grant *grants, size_t n_grants,
	      const char *const *masked, size_t n_masked, const char *const *protect,
	      size_t n_protect, struct ll_opened *out, char *err, size_t errlen)
{
	struct ctx c = {.a = a,
			.g = grants,
			.n_g = n_grants,
			.masked = masked,
			.n_masked = n_masked,
			.protect = protect,
			.n_protect = n_protect};
	struct ll_grant *pg = arena_alloc(a, (n_grants ? n_grants : 1) * sizeof(*pg));
	struct ll_plan plan;

	*out = (struct ll_opened){0};
	for (size_t i = 0; i < n_grants; i++) {
		if (grants[i].fd < 0) {
			snprintf(err, errlen, "%s %s: no descriptor to rule it through",
				 grants[i].what, arena_escape(a, grants[i].path));
			return -1;
		}
		pg[i] = (struct ll_grant){grants[i].path, grants[i].writable, grants[i].what};
	}
	if (landlock_plan(a, pg, n_grants, masked, n_masked, protect, n_protect, children, &c,
			  &plan, err, errlen) < 0) {
		size_t len = strlen(err);

		if (c.why[0] && len < errlen)
			snprintf(err + len, errlen - len, ": %s", c.why);
		return -1;
	}
	out->rules = arena_alloc(a, (plan.n_rules ? plan.n_rules : 1) * sizeof(*out->rules));
	for (size_t i = 0; i < plan.n_rules; i++) {
		struct ll_open_rule *o = &out->rules[out->n_rules];

		if (open_rule(&c, &plan.rules[i], &o->fd, err, errlen) < 0) {
			landlock_opened_close(out);
			*out = (struct ll_opened){0};
			return -1;
		}
		o->rights = plan.rules[i].rights;
		o->path = plan.rules[i].path;
		o->why = plan.rules[i].why;
		out->n_rules++;
	}
	out->approx = plan.approx;
	out->n_approx = plan.n_approx;
	return 0;
}

/* ---- a launch plan's rules (landlock_rules_open()) ---- */

/* Device ioctls (LANDLOCK_ACCESS_FS_IOCTL_DEV, ABI 5): a terminal needs them. */
#define LL_IOCTL_DEV (1ULL << 15)
#define LL_DEVICE (LL_R | LL_WRITE_FILE | LL_TRUNCATE | LL_IOCTL_DEV)

static void
push_rule(struct arena *a, struct landlock_rules *ll, const char *path, int fd,
	  unsigned long long rights, const char *why)
{
	size_t *cap = &ll->cap_rules;

	if (ll->n_rules == *cap) {
		size_t ncap = *cap ? 2 * *cap : 64;
		struct landlock_arg_rule *v = arena_alloc(a, ncap * sizeof(*v));

		if (ll->n_rules)
			memcpy(v, ll->rules, ll->n_rules * sizeof(*v));
		ll->rules = v;
		*cap = ncap;
	}
	ll->rules[ll->n_rules++] = (struct landlock_arg_rule){path, fd, rights, why};
}

/*
 * The plan's grants for the planner: the bwrap context's grants and the
 * ones exposed again inside a mask, but not write_files' private
 * directories (the files themselves get rules), and the command's
 * directories, read-only.
 */
static size_t
open_grants(struct arena *a, const struct bwrap_context *c, struct ll_open_grant **out)
{
	struct ll_open_grant *g =
	    arena_alloc(a, (c->n_grants + c->n_reexpose + c->n_command_dirs + 1) * sizeof(*g));
	size_t n = 0;

	for (size_t i = 0; i < c->n_grants; i++)
		if (!c->grants[i].private_dir && c->grants[i].fd >= 0)
			g[n++] = (struct ll_open_grant){c->grants[i].path, c->grants[i].fd,
							c->grants[i].writable, c->grants[i].what};
	for (size_t i = 0; i < c->n_reexpose; i++)
		if (c->reexpose[i].fd >= 0)
			g[n++] = (struct ll_open_grant){c->reexpose[i].path, c->reexpose[i].fd,
							c->reexpose[i].writable,
							c->reexpose[i].what};
	for (size_t i = 0; i < c->n_command_dirs; i++)
		if (c->command_dirs[i].fd >= 0)
			g[n++] = (struct ll_open_grant){c->command_dirs[i].path,
							c->command_dirs[i].fd, false,
							"the command's directory"};
	*out = g;
	return n;
}

/* The fixed rules of every launch (llbackend.h), those that exist here. */
static void
fixed_rules(struct arena *a, struct landlock_rules *ll)
{
	const struct llb_fixed *f;
	size_t n = llbackend_fixed(&f);

	for (size_t i = 0; i < n; i++) {
		/* The system's own paths: a link there (/bin) is the system's. */
		int fd = open(f[i].path, O_PATH | O_CLOEXEC);

		if (fd < 0)
			continue;
		if (fd < 3) {
			int d = fcntl(fd, F_DUPFD_CLOEXEC, 3);

			close(fd);
			fd = d;
		}
		push_rule(a, ll, f[i].path, fd, f[i].writable ? LL_DEVICE : LL_R, f[i].why);
	}
}

/*
 * In the private home (HOME inside), a link to each grant below the home,
 * so that what a program looks for at $HOME/.gitconfig is what the policy
 * grants at the home's .gitconfig.  The links are the sandbox's to change:
 * what they reach is what the rules allow, wherever they point.
 */
static int
home_links(struct arena *a, const struct launch_plan *plan, char *err, size_t errlen)
{
	const struct bwrap_context *c = &plan->ctx;
	const char *home = plan->home;
	size_t hl = strlen(home);
	int dir;

	if (!c->private_home)
		return 0;
	dir = open(arena_printf(a, "%s/%s", plan->scratch, BWRAP_PRIVATE_HOME),
		   O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dir < 0)
		return diag_fail(err, errlen, "cannot open the private home: %s", strerror(errno));
	for (size_t i = 0; i < c->n_grants + plan->n_writebacks; i++) {
		const char *p =
		    i < c->n_grants ? c->grants[i].path : plan->writebacks[i - c->n_grants].path;
		char *rel;

		if (i < c->n_grants && c->grants[i].private_dir)
			continue;
		if (strncmp(p, home, hl) || p[hl] != '/')
			continue;
		rel = arena_strdup(a, p + hl + 1);
		/* Its parents, then the link; one already made (a nested grant) stays. */
		for (char *s = strchr(rel, '/'); s; s = strchr(s + 1, '/')) {
			*s = '\0';
			if (mkdirat(dir, rel, 0700) < 0 && errno != EEXIST)
				break;
			*s = '/';
		}
		if (symlinkat(p, dir, rel) < 0 && errno != EEXIST && errno != ENOENT) {
			int e = errno;

			close(dir);
			return diag_fail(err, errlen, "cannot link %s in the private home: %s",
					 arena_escape(a, p), strerror(e));
		}
	}
	close(dir);
	return 0;
}

/* R's descriptors listed, and C pointed at R's rules. */
static void
rules_point(struct arena *a, struct landlock_rules *r, struct landlock_context *c)
{
	r->fds = arena_alloc(a, (r->n_rules + 1) * sizeof(*r->fds));
	r->n_fds = 0;
	for (size_t i = 0; i < r->n_rules; i++)
		r->fds[r->n_fds++] = r->rules[i].fd;
	c->resolved = true;
	c->rules = r->rules;
	c->n_rules = r->n_rules;
}

/* ---- PATH inside (landlock_path_env()) ---- */

/* The PATH entries a note names; the others are counted. */
#define PATH_SHOWN 4

struct path_rules {
	struct arena *a;
	const struct landlock_arg_rule *rules;
	size_t n;
};

/*
 * Can the sandbox read and execute what the directory ENTRY (absolute)
 * holds?  The rules hold what a path leads to, so ENTRY is asked where it
 * leads here (a missing tail as written: a directory a writable grant may
 * yet hold).
 */
static bool
path_entry_usable(void *arg, const char *entry)
{
	const struct path_rules *pr = arg;
	const unsigned long long need = LL_EXECUTE | LL_READ_FILE;
	const char *real = walk_canonical(pr->a, entry);

	return real && (landlock_rights_at(pr->rules, pr->n, real, NULL) & need) == need;
}

void
landlock_path_env(struct arena *a, struct launch_plan *plan, const struct landlock_arg_rule *rules,
		  size_t n)
{
	struct path_rules pr = {a, rules, n};
	const char **gone, **notes;
	const char *list = "";
	size_t n_gone = 0;

	if (!plan->env || !env_path_keep(a, plan->env, path_entry_usable, &pr, &gone))
		return;
	for (; gone[n_gone]; n_gone++)
		if (n_gone < PATH_SHOWN)
			list = arena_printf(a, "%s%s%s", list, n_gone ? ", " : "",
					    arena_escape(a, gone[n_gone]));
	if (n_gone > PATH_SHOWN)
		list = arena_printf(a, "%s and %zu more", list, n_gone - PATH_SHOWN);
	notes = arena_alloc(a, (plan->n_notes + 1) * sizeof(*notes));
	if (plan->n_notes)
		memcpy(notes, plan->notes, plan->n_notes * sizeof(*notes));
	notes[plan->n_notes++] =
	    arena_printf(a,
			 "PATH inside leaves out %s: the rules let the sandbox neither read nor "
			 "execute there (a directory named in read_paths stays)",
			 list);
	plan->notes = notes;
}

int
landlock_rules_open(struct arena *a, struct launch_plan *plan, struct landlock_rules *ll,
		    struct landlock_context *c, bool links, char *err, size_t errlen)
{
	const struct bwrap_context *ctx = &plan->ctx;
	struct ll_open_grant *g;
	size_t n_g = open_grants(a, ctx, &g);
	const char **masked = arena_alloc(a, (ctx->n_masks + 1) * sizeof(*masked));
	const char **prot = arena_alloc(a, (ctx->n_protects + 1) * sizeof(*prot));

	for (size_t i = 0; i < ctx->n_masks; i++)
		masked[i] = ctx->masks[i].path;
	for (size_t i = 0; i < ctx->n_protects; i++)
		prot[i] = ctx->protects[i].path;
	if (landlock_open(a, g, n_g, masked, ctx->n_masks, prot, ctx->n_protects, &ll->opened,
			  err, errlen) < 0)
		return -1;
	fixed_rules(a, ll);
	for (size_t i = 0; i < ll->opened.n_rules; i++)
		push_rule(a, ll, ll->opened.rules[i].path, ll->opened.rules[i].fd,
			  ll->opened.rules[i].rights, ll->opened.rules[i].why);
	for (size_t i = 0; i < plan->n_writebacks; i++) {
		int fd = fcntl(plan->writebacks[i].host_fd, F_DUPFD_CLOEXEC, 3);

		if (fd < 0)
			return diag_fail(err, errlen, "cannot open %s: %s",
					 arena_escape(a, plan->writebacks[i].path),
					 strerror(errno));
		push_rule(a, ll, plan->writebacks[i].path, fd, LL_W & LL_FILE_RIGHTS,
			  "write_files, written in place");
	}
	rules_point(a, ll, c);
	c->approx = ll->opened.approx;
	c->n_approx = ll->opened.n_approx;
	landlock_path_env(a, plan, ll->rules, ll->n_rules);
	return links ? home_links(a, plan, err, errlen) : 0;
}

void
landlock_rules_add(struct arena *a, struct landlock_rules *r, struct landlock_context *c,
		   const char *path, int fd, unsigned long long rights, const char *why)
{
	push_rule(a, r, path, fd, rights, why);
	rules_point(a, r, c);
}

void
landlock_rules_close(struct landlock_rules *ll)
{
	landlock_opened_close(&ll->opened);
	/* The opened rules' descriptors were closed with them; the others here. */
	for (size_t i = 0; i < ll->n_rules; i++) {
		bool theirs = false;

		for (size_t k = 0; k < ll->opened.n_rules && !theirs; k++)
			theirs = ll->opened.rules[k].path == ll->rules[i].path;
		if (!theirs && ll->rules[i].fd >= 0)
			close(ll->rules[i].fd);
		ll->rules[i].fd = -1;
	}
	ll->n_fds = 0;
}

unsigned long long
landlock_rights_at(const struct landlock_arg_rule *rules, size_t n, const char *path,
		   const struct landlock_arg_rule **deepest)
{
	unsigned long long r = 0;
	const struct landlock_arg_rule *best = NULL;

	for (size_t i = 0; i < n; i++) {
		if (rules[i].path[0] != '/' || !landlock_path_at_or_below(path, rules[i].path))
			continue;
		r |= rules[i].rights;
		if (!best || strlen(rules[i].path) > strlen(best->path))
			best = &rules[i];
	}
	if (deepest)
		*deepest = best;
	return r;
}
