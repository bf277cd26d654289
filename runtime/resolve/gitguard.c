/*
 * gitguard.c - the git repositories inside writable roots (gitguard.h).
 */
#include "runtime/resolve/gitguard.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/resolve/gitconfig.h"
#include "runtime/resolve/walk.h"

/* A .git file longer than this names no git directory git would use. */
#define GITFILE_MAX 4096

/* The walk: every repository below ROOTS into *OUT, and the directories it
 * could not list into *UNREADABLE (both from A). */
static int
walk(struct arena *a, const char *const *roots, size_t n_roots,
     const struct gitguard_prune *prune, struct gitguard_entry **out, size_t *n_out,
     const char ***unreadable, size_t *n_unreadable, char *err, size_t errlen)
{
	static const char *const all[] = {"*"};
	struct scan_options o = {
	    .allow = all,
	    .n_allow = 1,
	    .recursive = true,
	    .overflow = SCAN_UNLIMITED,
	    .report_name = ".git",
	    .stop_at_named = true,
	    .report_bare = true,
	    .prune = prune ? (const char *const *)prune->paths : NULL,
	    .prune_ids = prune ? (const unsigned long long(*)[2])prune->ids : NULL,
	    .n_prune = prune ? prune->n : 0,
	    .memo = "repos",
	};
	struct scan_result res = {0};

	*out = NULL;
	*n_out = 0;
	*n_unreadable = 0;
	if (!n_roots)
		return 0;
	if (scan_run(roots, n_roots, &o, &res, err, errlen) < 0)
		return -1;
	*out = arena_alloc(a, (res.n_named + 1) * sizeof(**out));
	for (size_t i = 0; i < res.n_named; i++)
		(*out)[i] = (struct gitguard_entry){arena_strdup(a, res.named[i].path),
						    res.named[i].kind, res.named[i].dir_dev,
						    res.named[i].dir_ino};
	*n_out = res.n_named;
	*unreadable = arena_alloc(a, (res.n_unreadable + 1) * sizeof(**unreadable));
	for (size_t i = 0; i < res.n_unreadable; i++)
		(*unreadable)[i] = arena_strdup(a, res.unreadable[i]);
	*n_unreadable = res.n_unreadable;
	scan_result_free(&res);
	return 0;
}

int
gitguard_find(struct arena *a, const char *const *roots, size_t n_roots,
	      const struct gitguard_prune *prune, struct gitguard_entry **out, size_t *n_out,
	      char *err, size_t errlen)
{
	const char **unreadable;
	size_t n_unreadable;

	return walk(a, roots, n_roots, prune, out, n_out, &unreadable, &n_unreadable, err,
		    errlen);
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
	/* A command's program, when a path names it (its first word, after an
	 * alias's '!'); "true" for core.fsmonitor and "store" for a credential
	 * helper are git's own. */
	if (kind == PROTECT_GIT_RUN) {
		size_t n;

		if (!value)
			return;
		value += strspn(value, " \t");
		if (*value == '!')
			value += 1 + strspn(value + 1, " \t");
		n = strcspn(value, " \t");
		if (!memchr(value, '/', n))
			return;
		value = arena_strndup(c->a, value, n);
	}
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
	/* git takes a relative include from the file's directory as the path to
	 * it is spelled (a linked ~/.gitconfig: the home), not where it leads. */
	c->dir = arena_strndup(c->a, path, (size_t)(strrchr(path, '/') - path));
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


/* PATH for a terminal (textesc.h). */
static void
put_path(FILE *out, const char *path)
{
	struct arena *a = arena_new();

	fputs(arena_escape(a, path), out);
	arena_free(a);
}

/* Rename NAME in DIRFD to PREFIX-omnibox-quarantine-XXXXXX (random, new);
 * the new name into BUF, or NULL with errno. */
static const char *
quarantine_one(int dirfd, const char *name, const char *prefix, char *buf, size_t cap)
{
	static const char chars[] = "abcdefghijklmnopqrstuvwxyz0123456789";

	for (int tries = 0; tries < 64; tries++) {
		unsigned char r[6];
		char tail[7];

		if (getrandom(r, sizeof(r), 0) != sizeof(r))
			return NULL;
		for (size_t i = 0; i < 6; i++)
			tail[i] = chars[r[i] % (sizeof(chars) - 1)];
		tail[6] = '\0';
		snprintf(buf, cap, "%s-omnibox-quarantine-%s", prefix, tail);
		if (renameat2(dirfd, name, dirfd, buf, RENAME_NOREPLACE) == 0)
			return buf;
		if (errno != EEXIST)
			return NULL;
	}
	errno = EEXIST;
	return NULL;
}

static int
cmp_entry(const void *x, const void *y)
{
	return strcmp(((const struct gitguard_entry *)x)->path,
		      ((const struct gitguard_entry *)y)->path);
}

/* Is E one of KNOWN: the same object at the same path? */
static bool
known_entry(const struct gitguard_entry *e, const struct gitguard_entry *known, size_t n_known)
{
	const struct gitguard_entry *k =
	    n_known ? bsearch(e, known, n_known, sizeof(*known), cmp_entry) : NULL;

	return k && k->kind == e->kind && k->dev == e->dev && k->ino == e->ino;
}

/* Make the directories of LIST (below ROOTS, not a root itself: the next
 * launch refuses an unlistable root) listable by their owner, by
 * descriptor, saying so on OUT; how many were. */
static size_t
open_up(struct arena *a, const char *const *roots, size_t n_roots, const char **list, size_t n,
	FILE *out)
{
	size_t done = 0;

	for (size_t i = 0; i < n; i++) {
		struct walk_result w;
		struct stat st;
		char proc[64];
		bool root = false;

		for (size_t k = 0; k < n_roots; k++)
			root = root || !strcmp(roots[k], list[i]);
		if (root)
			continue;
		if (walk_open(a, list[i], roots, n_roots, 0, &w) < 0 || !w.exists || !w.is_dir) {
			if (w.fd >= 0)
				close(w.fd);
			continue;
		}
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", w.fd);
		if (fstat(w.fd, &st) == 0 && chmod(proc, (st.st_mode & 07777) | 0500) == 0) {
			done++;
			fputs("omnibox-run: note: ", out);
			put_path(out, list[i]);
			fputs(" was made unreadable inside the sandbox; it is listable again (u+rx), "
			      "so that no repository hides in it\n",
			      out);
		}
		close(w.fd);
	}
	return done;
}

/* Set aside the repository E (not known at launch); say so on OUT.  0, or -1. */
static int
set_aside(struct arena *a, const char *const *roots, size_t n_roots,
	  const struct gitguard_entry *e, FILE *out)
{
	bool bare = e->kind == SCAN_GITDIR;
	const char *dir = bare ? e->path : arena_strndup(a, e->path, strrchr(e->path, '/') - e->path);
	const char *name = bare ? "HEAD" : strrchr(e->path, '/') + 1;
	struct walk_result w;
	const char *moved = NULL;
	char buf[96];

	errno = ENOENT;
	if (walk_open(a, dir[0] ? dir : "/", roots, n_roots, 0, &w) == 0 && w.exists && w.is_dir)
		moved = quarantine_one(w.fd, name, bare ? "HEAD" : ".git", buf, sizeof(buf));
	if (w.fd >= 0)
		close(w.fd);
	fputs("omnibox-run: warning: ", out);
	put_path(out, bare ? arena_printf(a, "%s/HEAD", e->path) : e->path);
	if (!moved) {
		fprintf(out,
			" was made inside the sandbox and could not be set aside (%s): do not run "
			"git there before you look inside\n",
			strerror(errno));
		return -1;
	}
	fputs(bare ? " was made inside the sandbox: git on this machine would take its directory "
		     "for a repository and obey its configuration, so it is now "
		   : " was made inside the sandbox; git on this machine would obey its "
		     "configuration and hooks, so it is now ",
	      out);
	put_path(out, moved);
	fputs(" beside it: look inside before you rename it back\n", out);
	return 0;
}

/* Does the file at DIRFD/NAME hold a rebase todo line that runs a command? */
static bool
todo_runs_commands(int dirfd, const char *name)
{
	char buf[65536];
	ssize_t n;
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	for (char *line = buf; *line;) {
		size_t word;

		line += strspn(line, " \t");
		word = strcspn(line, " \t\n");
		if ((word == 4 && !strncmp(line, "exec", 4)) || (word == 1 && line[0] == 'x'))
			return true;
		line += strcspn(line, "\n");
		line += *line == '\n';
	}
	return false;
}

/*
 * A rebase the sandbox left stopped in the git directory GIT, with a
 * command still to run (an "exec" line): the user's own `git rebase
 * --continue` would run it.  Said on OUT; nothing is changed (the user
 * decides between --abort and reading it first).
 */
static void
warn_pending_exec(struct arena *a, const char *const *roots, size_t n_roots, const char *git,
		  FILE *out)
{
	static const char *const todos[][2] = {{"rebase-merge", "git-rebase-todo"},
					       {"sequencer", "todo"}};

	for (size_t i = 0; i < 2; i++) {
		const char *dir = arena_printf(a, "%s/%s", git, todos[i][0]);
		struct walk_result w;
		bool runs;

		if (walk_open(a, dir, roots, n_roots, 0, &w) < 0 || !w.exists || !w.is_dir) {
			if (w.fd >= 0)
				close(w.fd);
			continue;
		}
		runs = todo_runs_commands(w.fd, todos[i][1]);
		close(w.fd);
		if (!runs)
			continue;
		fputs("omnibox-run: warning: ", out);
		put_path(out, arena_printf(a, "%s/%s", dir, todos[i][1]));
		fputs(" holds a command (an exec line) that `git rebase --continue` would run on "
		      "this machine: read it, or run `git rebase --abort`, before you continue\n",
		      out);
	}
}

int
gitguard_quarantine(const char *const *roots, size_t n_roots,
		    const struct gitguard_prune *prune, const struct gitguard_entry *known,
		    size_t n_known, FILE *out)
{
	struct arena *a = arena_new();
	struct gitguard_entry *found = NULL;
	const char **unreadable;
	size_t n_found = 0, n_unreadable = 0;
	char err[512];
	int count = 0, rc = 0;

	/* A directory the sandbox made unreadable hides nothing: open it up and
	 * look again (each round opens at least one, or gives up). */
	for (int round = 0; round < 64; round++) {
		if (walk(a, roots, n_roots, prune, &found, &n_found, &unreadable, &n_unreadable,
			 err, sizeof(err)) < 0) {
			fputs("omnibox-run: warning: cannot look for repositories the sandbox made: ",
			      out);
			put_path(out, err);
			fputs("; do not run git in what it could write before you look\n", out);
			arena_free(a);
			return -1;
		}
		if (!n_unreadable || !open_up(a, roots, n_roots, unreadable, n_unreadable, out))
			break;
	}
	for (size_t i = 0; i < n_unreadable; i++) {
		fputs("omnibox-run: warning: cannot look inside ", out);
		put_path(out, unreadable[i]);
		fputs(", which the sandbox could write: do not run git there before you do\n", out);
		rc = -1;
	}
	for (size_t i = 0; i < n_found; i++) {
		if (known_entry(&found[i], known, n_known)) {
			if (found[i].kind == SCAN_DIR)
				warn_pending_exec(a, roots, n_roots, found[i].path, out);
			continue;
		}
		if (set_aside(a, roots, n_roots, &found[i], out) < 0)
			rc = -1;
		else
			count++;
	}
	arena_free(a);
	return rc < 0 ? -1 : count;
}
