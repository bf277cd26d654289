/*
 * gitguard.c - the git repositories inside writable roots (gitguard.h).
 */
#include "runtime/resolve/gitguard.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/resolve/gitconfig.h"
#include "runtime/resolve/walk.h"

/* A .git file longer than this names no git directory git would use. */
#define GITFILE_MAX 4096

int
gitguard_find(struct arena *a, const char *const *roots, size_t n_roots,
	      const char *const *prune, size_t n_prune, struct gitguard_entry **out,
	      size_t *n_out, char *err, size_t errlen)
{
	static const char *const all[] = {"*"};
	struct scan_options o = {
	    .allow = all,
	    .n_allow = 1,
	    .recursive = true,
	    .overflow = SCAN_UNLIMITED,
	    .report_name = ".git",
	    .stop_at_named = true,
	    .prune = prune,
	    .n_prune = n_prune,
	};
	struct scan_result res = {0};

	*out = NULL;
	*n_out = 0;
	if (!n_roots)
		return 0;
	if (scan_run(roots, n_roots, &o, &res, err, errlen) < 0)
		return -1;
	*out = arena_alloc(a, (res.n_named + 1) * sizeof(**out));
	for (size_t i = 0; i < res.n_named; i++)
		(*out)[i] = (struct gitguard_entry){arena_strdup(a, res.named[i].path),
						    res.named[i].kind};
	*n_out = res.n_named;
	scan_result_free(&res);
	return 0;
}

/* The path the file behind FD holds after PREFIX, taken relative to DIR. */
static const char *
read_path(struct arena *a, int fd, const char *dir, const char *prefix)
{
	char buf[GITFILE_MAX + 1], proc[64];
	const char *p;
	size_t len = 0;
	ssize_t n;
	int rfd;

	/* FD may be O_PATH: read through a fresh descriptor on the same inode. */
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	rfd = open(proc, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (rfd < 0)
		return NULL;
	while (len < GITFILE_MAX && (n = read(rfd, buf + len, GITFILE_MAX - len)) > 0)
		len += (size_t)n;
	close(rfd);
	buf[len] = '\0';
	if (strncmp(buf, prefix, strlen(prefix)))
		return NULL;
	p = buf + strlen(prefix);
	while (*p == ' ' || *p == '\t')
		p++;
	len = strcspn(p, "\r\n");
	if (!len)
		return NULL;
	if (p[0] == '/')
		return walk_lexical(a, arena_strndup(a, p, len));
	return walk_lexical(a, arena_printf(a, "%s/%.*s", dir, (int)len, p));
}

const char *
gitguard_gitfile_target(struct arena *a, int fd, const char *dir)
{
	return read_path(a, fd, dir, "gitdir:");
}

const char *
gitguard_commondir(struct arena *a, int fd, const char *gitdir)
{
	return read_path(a, fd, gitdir, "");
}

/* A configuration file larger than this is read no further. */
#define GITCONFIG_MAX (1 << 20)
#define INCLUDE_DEPTH 10

struct cfg {
	struct arena *a;
	const char *worktree, *home, *dir; /* DIR: the file being read's */
	const char *const *roots;
	size_t n_roots;
	gitguard_path_fn *fn;
	void *arg;
	int depth;
};

static void cfg_read(struct cfg *c, const char *path);

/* VALUE as a path: "~/" from the home, relative from BASE (NULL: none). */
static const char *
cfg_path(struct cfg *c, const char *value, const char *base)
{
	if (!value || !value[0])
		return NULL;
	if (!strncmp(value, "~/", 2))
		return walk_lexical(c->a, arena_printf(c->a, "%s/%s", c->home, value + 2));
	if (value[0] == '~') /* another user's home: not in a writable root of this one */
		return NULL;
	if (value[0] == '/')
		return walk_lexical(c->a, value);
	return base ? walk_lexical(c->a, arena_printf(c->a, "%s/%s", base, value)) : NULL;
}

static void
cfg_var(void *arg, const char *section, const char *sub, const char *key, const char *value)
{
	struct cfg *c = arg;
	enum protect_git_var kind = protect_git_variable(section, sub, key);
	const char *path;

	if (kind == PROTECT_GIT_NONE)
		return;
	/* core.fsmonitor names a program only when it is a path; "true" is git's own. */
	if (kind == PROTECT_GIT_RUN && (!value || !strchr(value, '/')))
		return;
	path = cfg_path(c, value, kind == PROTECT_GIT_INCLUDE ? c->dir : c->worktree);
	if (!path)
		return;
	c->fn(c->arg, path, kind);
	if (kind == PROTECT_GIT_INCLUDE && c->depth < INCLUDE_DEPTH) {
		const char *dir = c->dir;

		c->depth++;
		cfg_read(c, path);
		c->depth--;
		c->dir = dir;
	}
}

static void
cfg_read(struct cfg *c, const char *path)
{
	struct walk_result w;
	char proc[64], *text;
	size_t len = 0;
	ssize_t n;
	int fd;

	if (walk_open(c->a, path, c->roots, c->n_roots, 0, &w) < 0 || !w.exists || w.is_dir) {
		if (w.fd >= 0)
			close(w.fd);
		return;
	}
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", w.fd);
	fd = open(proc, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	close(w.fd);
	if (fd < 0)
		return;
	text = malloc(GITCONFIG_MAX);
	if (!text) {
		close(fd);
		return;
	}
	while (len < GITCONFIG_MAX && (n = read(fd, text + len, GITCONFIG_MAX - len)) > 0)
		len += (size_t)n;
	close(fd);
	c->dir = arena_strndup(c->a, w.path, (size_t)(strrchr(w.path, '/') - w.path));
	gitconfig_parse(text, len, cfg_var, c);
	free(text);
}

void
gitguard_config_paths(struct arena *a, const char *const *files, size_t n,
		      const char *worktree, const char *home, const char *const *roots,
		      size_t n_roots, gitguard_path_fn *fn, void *arg)
{
	struct cfg c = {a, worktree, home, NULL, roots, n_roots, fn, arg, 0};

	for (size_t i = 0; i < n; i++)
		if (files[i])
			cfg_read(&c, files[i]);
}

static int
cmp_str(const void *x, const void *y)
{
	return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* PATH for a terminal (textesc.h). */
static void
put_path(FILE *out, const char *path)
{
	struct arena *a = arena_new();

	fputs(arena_escape(a, path), out);
	arena_free(a);
}

/* Rename GIT (".git" in any case) in DIRFD to the first free .git-omnibox-quarantine[-N]. */
static const char *
quarantine_one(int dirfd, const char *git, char *name, size_t cap)
{
	for (unsigned i = 0; i < 1000; i++) {
		if (i)
			snprintf(name, cap, ".git-omnibox-quarantine-%u", i);
		else
			snprintf(name, cap, ".git-omnibox-quarantine");
		if (renameat2(dirfd, git, dirfd, name, RENAME_NOREPLACE) == 0)
			return name;
		if (errno != EEXIST)
			return NULL;
	}
	errno = EEXIST;
	return NULL;
}

int
gitguard_quarantine(const char *const *roots, size_t n_roots, const char *const *prune,
		    size_t n_prune, const char *const *known, size_t n_known, FILE *out)
{
	struct arena *a = arena_new();
	struct gitguard_entry *found;
	size_t n_found;
	char err[512];
	int count = 0;

	if (gitguard_find(a, roots, n_roots, prune, n_prune, &found, &n_found, err,
			  sizeof(err)) < 0) {
		fprintf(out, "omnibox-run: warning: cannot look for repositories the sandbox made: ");
		put_path(out, err);
		fputc('\n', out);
		arena_free(a);
		return -1;
	}
	for (size_t i = 0; i < n_found; i++) {
		const char *path = found[i].path;
		const char *dir = arena_strndup(a, path, strlen(path) - 5);
		struct walk_result w;
		char name[64];
		const char *moved;

		if (n_known && bsearch(&path, known, n_known, sizeof(*known), cmp_str))
			continue;
		if (walk_open(a, dir[0] ? dir : "/", roots, n_roots, 0, &w) < 0 || !w.exists ||
		    !w.is_dir) {
			if (w.fd >= 0)
				close(w.fd);
			moved = NULL;
			errno = ENOENT;
		} else {
			moved = quarantine_one(w.fd, path + strlen(dir) + 1, name, sizeof(name));
			close(w.fd);
		}
		fputs("omnibox-run: warning: ", out);
		put_path(out, path);
		if (moved) {
			fputs(" was made inside the sandbox; git on this machine would obey its "
			      "configuration and hooks, so it is now ",
			      out);
			put_path(out, moved);
			fputs(" beside it: look inside before you rename it back\n", out);
			count++;
		} else {
			fprintf(out,
				" was made inside the sandbox and could not be set aside (%s): do "
				"not run git there before you look inside\n",
				strerror(errno));
		}
	}
	arena_free(a);
	return count;
}
