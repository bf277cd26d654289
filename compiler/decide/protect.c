/*
 * protect.c - the protected set (protect.h).
 */
#include "protect.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What bash reads at login when neither .bash_profile nor .bash_login exists
 * (a .bash_login held by a directory is not a file). */
#define BASH_PROFILE_AS_ABSENT                                                                     \
	"# Held read-only by omnibox-run while a sandbox runs (docs/protect.md): bash\n"           \
	"# reads what it would read without this file.\n"                                          \
	"if [ -f ~/.bash_login ]; then . ~/.bash_login; elif [ -f ~/.profile ]; then . "           \
	"~/.profile; fi\n"

#define D PROTECT_HOLD_DIR
#define F PROTECT_HOLD_FILE
#define N PROTECT_HOLD_NONE
#define G PROTECT_HOLD_GITDIRS

const struct protect_default protect_defaults[] = {
    {".git/hooks", true, false, "git runs its hooks on commit, checkout, merge and push", D, NULL},
    {".git/config", false, false,
     "git obeys core.fsmonitor, core.hooksPath, core.sshCommand, filter and diff drivers", F, ""},
    {".git/config.worktree", false, false, "per-worktree git configuration, as .git/config", F,
     ""},
    {".git/info/attributes", false, false, "selects the filter and diff drivers git runs", F, ""},
    {".git/commondir", false, false,
     "git takes config, hooks and objects from the directory it names", F, ".\n"},
    {".git/objects/info/alternates", false, false,
     "git reads objects from the repositories it names", F, ""},
    {".git/modules", true, false, "submodules' git directories: git runs their hooks and config", G,
     NULL},
    {".git/worktrees", true, false, "linked worktrees' git directories", G, NULL},
    {".gitmodules", false, false, "submodule URLs and update commands git runs", F, ""},
    {".envrc", false, false, "direnv runs it on entering the directory", F, ""},
    {".vscode", true, false, "VS Code runs tasks.json and obeys settings.json", D, NULL},
    {".idea", true, false, "JetBrains IDEs run its run configurations and tools", D, NULL},
    {".claude", true, false, "Claude Code runs the hooks and commands of its settings", D, NULL},
    {".mcp.json", false, false, "agents start the MCP servers it lists", F,
     "{\"mcpServers\": {}}\n"},
    {".codex", true, false, "Codex obeys its configuration", D, NULL},
    {".bashrc", false, true, "bash runs it at start", F, ""},
    {".bash_profile", false, true, "bash runs it at login", F, BASH_PROFILE_AS_ABSENT},
    {".bash_login", false, true, "bash runs it at login when .bash_profile is missing", D, NULL},
    {".bash_logout", false, true, "bash runs it when a login shell exits", F, ""},
    {".bash_aliases", false, true, "Debian's .bashrc runs it", F, ""},
    {".profile", false, true, "login shells run it", F, ""},
    {".inputrc", false, true, "readline binds keys to what it says, in every bash", F,
     "$include /etc/inputrc\n"},
    {".zshrc", false, true, "zsh runs it at start", F, ""},
    {".zprofile", false, true, "zsh runs it at login", F, ""},
    {".zshenv", false, true, "zsh runs it for every shell", F, ""},
    {".zlogin", false, true, "zsh runs it at login", F, ""},
    {".zlogout", false, true, "zsh runs it when a login shell exits", F, ""},
    {".config/fish", true, true, "fish runs its configuration at start", D, NULL},
    {".gitconfig", false, true, "global git configuration, as .git/config", F, ""},
    {".config/git", true, true, "global git configuration and attributes", D, NULL},
    {".ssh", true, true, "ssh obeys its config (ProxyCommand) and authorized_keys", D, NULL},
    {"bin", true, true, "Debian's .profile puts it first on PATH", D, NULL},
    {".local/bin", true, true, "Debian's .profile puts it first on PATH", D, NULL},
    {".config/systemd", true, true, "systemd starts the user services it defines", D, NULL},
    {".config/environment.d", true, true, "systemd sets the session's environment from it", D,
     NULL},
    {".config/autostart", true, true, "desktop sessions start what it lists", D, NULL},
    {".pam_environment", false, true, "PAM sets the session's environment from it", F, ""},
    {".xprofile", false, true, "X sessions run it at login", F, ""},
    {".xsessionrc", false, true, "X sessions run it at login", F, ""},
    /* Held only where it exists: Xsession runs one that exists, even empty. */
    {".xsession", false, true, "X sessions run it at login", N, NULL},
    {".xinitrc", false, true, "startx runs it", F,
     "# Held read-only by omnibox-run while a sandbox runs (docs/protect.md): what\n"
     "# startx runs without this file.\nexec /bin/sh /etc/X11/xinit/xinitrc\n"},
    {".cargo/env", false, true, "rustup's lines in .profile and .bashrc run it", N, NULL},
    {".bash_completion", false, true, "bash-completion runs it in every interactive bash", F, ""},
    {".bashrc.d", true, true, "Fedora's .bashrc runs what it holds", D, NULL},
    {".vimrc", false, true, "vim runs it, as git's editor too", F, ""},
    {".vim", true, true, "vim runs its plugins", D, NULL},
    {".config/nvim", true, true, "neovim runs its configuration", D, NULL},
    {".emacs", false, true, "emacs runs it", F, ""},
    {".emacs.d", true, true, "emacs runs its configuration", D, NULL},
    {".tmux.conf", false, true, "tmux runs its commands (run-shell)", F, ""},
    {".config/tmux", true, true, "tmux runs its configuration", D, NULL},
    {".selected_editor", false, true, "sensible-editor sources it", F, ""},
    {".lesskey", false, true, "less takes LESSOPEN and its keys from it", F, ""},
    {".npmrc", false, true, "npm runs its script-shell and hooks", F, ""},
    {".gnupg", true, true, "gpg-agent runs its pinentry-program", D, NULL},
    {".config/direnv", true, true, "direnv runs its direnvrc", D, NULL},
    {".local/lib", true, true, "python runs the .pth files of its site-packages", D, NULL},
    {NULL, false, false, NULL, D, NULL},
};

#undef D
#undef F
#undef N
#undef G

bool
protect_is_git(const struct protect_default *d)
{
	return !strncmp(d->name, ".git/", 5);
}

const struct protect_default *
protect_find(const char *name)
{
	for (size_t i = 0; protect_defaults[i].name; i++)
		if (!strcmp(protect_defaults[i].name, name))
			return &protect_defaults[i];
	return NULL;
}

enum protect_git_var
protect_git_variable(const char *section, const char *sub, const char *key)
{
	/* Variables whose value is a command git runs: a program named by path
	 * is protected ("*": any subsection). */
	static const char *const run[][3] = {
	    {"core", NULL, "fsmonitor"},    {"core", NULL, "askpass"},
	    {"core", NULL, "editor"},	    {"core", NULL, "pager"},
	    {"core", NULL, "sshcommand"},   {"core", NULL, "gitproxy"},
	    {"sequence", NULL, "editor"},   {"diff", NULL, "external"},
	    {"gpg", NULL, "program"},	    {"gpg", "*", "program"},
	    {"credential", NULL, "helper"}, {"credential", "*", "helper"},
	    {"diff", "*", "textconv"},	    {"diff", "*", "command"},
	    {"filter", "*", "clean"},	    {"filter", "*", "smudge"},
	    {"filter", "*", "process"},	    {"merge", "*", "driver"},
	    {"alias", NULL, "*"},	    {"pager", NULL, "*"},
	    {"difftool", "*", "cmd"},	    {"mergetool", "*", "cmd"},
	    {"web", NULL, "browser"},	    {"instaweb", NULL, "httpd"},
	};

	if (!strcmp(key, "path") && (!strcmp(section, "include") || !strcmp(section, "includeif")))
		return sub && !strcmp(section, "include") ? PROTECT_GIT_NONE : PROTECT_GIT_INCLUDE;
	if (!strcmp(section, "core") && !sub && !strcmp(key, "hookspath"))
		return PROTECT_GIT_HOOKS;
	/* git copies its hooks from the template directory into every new repository. */
	if (!strcmp(section, "init") && !sub && !strcmp(key, "templatedir"))
		return PROTECT_GIT_HOOKS;
	if (!strcmp(section, "core") && !sub && !strcmp(key, "attributesfile"))
		return PROTECT_GIT_READ;
	for (size_t i = 0; i < sizeof(run) / sizeof(run[0]); i++)
		if (!strcmp(section, run[i][0]) && (run[i][1] ? sub != NULL : sub == NULL) &&
		    (!strcmp(run[i][2], "*") || !strcmp(key, run[i][2])))
			return PROTECT_GIT_RUN;
	return PROTECT_GIT_NONE;
}

bool
protect_unprotected(const struct sandbox *sb, const char *name)
{
	for (size_t i = 0; i < sb->unprotect_paths.n; i++)
		if (!strcmp(sb->unprotect_paths.v[i].s, name))
			return true;
	return false;
}

/* The paths given so far: an open-addressed set of owned strings, so that
 * each is given once however many roots share it. */
struct seen {
	struct seen_slot {
		const char *path; /* NULL: free */
		bool owned;
	} *slot;
	size_t n, cap; /* cap: a power of two, at least twice n */
};

static uint32_t
seen_hash(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/* Has PATH been given already?  The set remembers PATH if not (and frees
 * it in the end when OWNED); an OWNED path given before is freed now. */
static bool
seen_before(struct seen *s, const char *path, bool owned)
{
	size_t i;

	if (2 * (s->n + 1) > s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		struct seen_slot *v = calloc(cap, sizeof(*v));

		if (!v)
			abort();
		for (size_t k = 0; k < s->cap; k++)
			if (s->slot[k].path) {
				for (i = seen_hash(s->slot[k].path) & (cap - 1); v[i].path;
				     i = (i + 1) & (cap - 1))
					;
				v[i] = s->slot[k];
			}
		free(s->slot);
		s->slot = v;
		s->cap = cap;
	}
	for (i = seen_hash(path) & (s->cap - 1); s->slot[i].path; i = (i + 1) & (s->cap - 1))
		if (!strcmp(s->slot[i].path, path)) {
			if (owned)
				free((char *)path);
			return true;
		}
	s->slot[i] = (struct seen_slot){path, owned};
	s->n++;
	return false;
}

static void
seen_free(struct seen *s)
{
	for (size_t k = 0; k < s->cap; k++)
		if (s->slot[k].owned)
			free((char *)s->slot[k].path);
	free(s->slot);
}

static char *
join(const char *dir, const char *name)
{
	size_t ld = strlen(dir), ln = strlen(name), sep = strcmp(dir, "/") != 0;
	char *p = malloc(ld + sep + ln + 1);

	if (!p)
		abort();
	memcpy(p, dir, ld);
	p[ld] = '/';
	memcpy(p + ld + sep, name, ln + 1);
	return p;
}

static bool
in_roots(const char *path, const char *const *roots, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (path_within(path, roots[i]))
			return true;
	return false;
}

static void
give(protect_fn *fn, void *arg, const char *path, const struct protect_default *d)
{
	struct protect_entry e = {path, d->dir, d->why, 0, d->hold, d->text};

	fn(arg, &e);
}

void
protect_each_gitdir(const struct sandbox *sb, const char *gitdir, protect_fn *fn, void *arg)
{
	for (size_t i = 0; protect_defaults[i].name; i++) {
		const struct protect_default *d = &protect_defaults[i];
		char *path;

		if (!protect_is_git(d) || protect_unprotected(sb, d->name))
			continue;
		path = join(gitdir, d->name + 5);
		give(fn, arg, path, d);
		free(path);
	}
}

void
protect_each(const struct sandbox *sb, const char *const *roots, size_t n_roots, const char *home,
	     protect_fn *fn, void *arg)
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
		     const char *home, const char *const *extra, protect_fn *fn, void *arg)
{
	struct seen seen = {0};

	for (size_t r = 0; r < n_roots; r++)
		for (size_t i = 0; protect_defaults[i].name; i++) {
			const struct protect_default *d = &protect_defaults[i];
			char *path;

			if (d->home || protect_unprotected(sb, d->name))
				continue;
			path = join(roots[r], d->name);
			if (!seen_before(&seen, path, true))
				give(fn, arg, path, d);
		}
	for (size_t i = 0; home && protect_defaults[i].name; i++) {
		const struct protect_default *d = &protect_defaults[i];
		char *path;

		if (!d->home || protect_unprotected(sb, d->name))
			continue;
		path = join(home, d->name);
		if (!in_roots(path, roots, n_roots))
			free(path);
		else if (!seen_before(&seen, path, true))
			give(fn, arg, path, d);
	}
	for (size_t i = 0; i < sb->protect_paths.n; i++)
		if (in_roots(extra[i], roots, n_roots) && !seen_before(&seen, extra[i], false)) {
			struct protect_entry e = {extra[i],	    false,
						  "protect_paths",  sb->protect_paths.v[i].loc.line,
						  PROTECT_HOLD_DIR, NULL};

			fn(arg, &e);
		}
	seen_free(&seen);
}

size_t
protect_symbolic_roots(const struct sandbox *sb, const char **out, size_t cap)
{
	size_t n = 0;

	for (size_t i = 0; i < sb->write_paths.n && n < cap; i++)
		out[n++] = sb->write_paths.v[i].symbolic;
	return n;
}
