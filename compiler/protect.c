/*
 * protect.c - the protected set (protect.h).
 */
#include "protect.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const struct protect_default protect_defaults[] = {
    {".git/hooks", true, false, "git runs its hooks on commit, checkout, merge and push"},
    {".git/config", false, false,
     "git obeys core.fsmonitor, core.hooksPath, core.sshCommand, filter and diff drivers"},
    {".git/config.worktree", false, false, "per-worktree git configuration, as .git/config"},
    {".git/info/attributes", false, false, "selects the filter and diff drivers git runs"},
    {".gitmodules", false, false, "submodule URLs and update commands git runs"},
    {".envrc", false, false, "direnv runs it on entering the directory"},
    {".vscode", true, false, "VS Code runs tasks.json and obeys settings.json"},
    {".idea", true, false, "JetBrains IDEs run its run configurations and tools"},
    {".claude", true, false, "Claude Code runs the hooks and commands of its settings"},
    {".mcp.json", false, false, "agents start the MCP servers it lists"},
    {".codex", true, false, "Codex obeys its configuration"},
    {".bashrc", false, true, "bash runs it at start"},
    {".bash_profile", false, true, "bash runs it at login"},
    {".profile", false, true, "login shells run it"},
    {".zshrc", false, true, "zsh runs it at start"},
    {".zprofile", false, true, "zsh runs it at login"},
    {".zshenv", false, true, "zsh runs it for every shell"},
    {".config/fish", true, true, "fish runs its configuration at start"},
    {".gitconfig", false, true, "global git configuration, as .git/config"},
    {".config/git", true, true, "global git configuration and attributes"},
    {".ssh", true, true, "ssh obeys its config (ProxyCommand) and authorized_keys"},
    {NULL, false, false, NULL},
};

const struct protect_default *
protect_find(const char *name)
{
	for (size_t i = 0; protect_defaults[i].name; i++)
		if (!strcmp(protect_defaults[i].name, name))
			return &protect_defaults[i];
	return NULL;
}

static bool
within(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (!strcmp(dir, "/"))
		return path[0] == '/';
	return !strncmp(path, dir, n) && (path[n] == '/' || path[n] == '\0');
}

bool
protect_unprotected(const struct sandbox *sb, const char *name)
{
	for (size_t i = 0; i < sb->unprotect_paths.n; i++)
		if (!strcmp(sb->unprotect_paths.v[i].s, name))
			return true;
	return false;
}

struct seen {
	char **v;
	size_t n, cap;
};

/* Has PATH been given already?  Remembers it if not. */
static bool
seen_before(struct seen *s, const char *path)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->v[i], path))
			return true;
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 32;
		s->v = realloc(s->v, s->cap * sizeof(*s->v));
		if (!s->v)
			abort();
	}
	if (!(s->v[s->n++] = strdup(path)))
		abort();
	return false;
}

static char *
join(const char *dir, const char *name)
{
	size_t len = strlen(dir) + strlen(name) + 2;
	char *p = malloc(len);

	if (!p)
		abort();
	snprintf(p, len, "%s%s%s", dir, strcmp(dir, "/") ? "/" : "", name);
	return p;
}

static bool
in_roots(const char *path, const char *const *roots, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (within(path, roots[i]))
			return true;
	return false;
}

void
protect_each(const struct sandbox *sb, const char *const *roots, size_t n_roots,
	     const char *home,
	     void (*fn)(void *arg, const char *path, bool dir, const char *why, uint32_t line),
	     void *arg)
{
	const char **extra = calloc(sb->protect_paths.n + 1, sizeof(*extra));

	if (!extra)
		abort();
	for (size_t i = 0; i < sb->protect_paths.n; i++)
		extra[i] = sb->protect_paths.v[i].symbolic;
	protect_each_spelled(sb, roots, n_roots, home, extra, fn, arg);
	free(extra);
}

void
protect_each_spelled(const struct sandbox *sb, const char *const *roots, size_t n_roots,
		     const char *home, const char *const *extra,
		     void (*fn)(void *arg, const char *path, bool dir, const char *why,
				uint32_t line),
		     void *arg)
{
	struct seen seen = {0};

	for (size_t r = 0; r < n_roots; r++)
		for (size_t i = 0; protect_defaults[i].name; i++) {
			const struct protect_default *d = &protect_defaults[i];
			char *path;

			if (d->home || protect_unprotected(sb, d->name))
				continue;
			path = join(roots[r], d->name);
			if (!seen_before(&seen, path))
				fn(arg, path, d->dir, d->why, 0);
			free(path);
		}
	for (size_t i = 0; home && protect_defaults[i].name; i++) {
		const struct protect_default *d = &protect_defaults[i];
		char *path;

		if (!d->home || protect_unprotected(sb, d->name))
			continue;
		path = join(home, d->name);
		if (in_roots(path, roots, n_roots) && !seen_before(&seen, path))
			fn(arg, path, d->dir, d->why, 0);
		free(path);
	}
	for (size_t i = 0; i < sb->protect_paths.n; i++)
		if (in_roots(extra[i], roots, n_roots) && !seen_before(&seen, extra[i]))
			fn(arg, extra[i], false, "protect_paths", sb->protect_paths.v[i].loc.line);
	for (size_t i = 0; i < seen.n; i++)
		free(seen.v[i]);
	free(seen.v);
}

size_t
protect_symbolic_roots(const struct sandbox *sb, const char **out, size_t cap)
{
	size_t n = 0;

	for (size_t i = 0; i < sb->write_paths.n && n < cap; i++)
		out[n++] = sb->write_paths.v[i].symbolic;
	return n;
}
