/*
 * command.h - what every launch resolves the same way: the
 * environment allow-list applied to a real environment, the command's
 * lookup on PATH, and a script's interpreter.
 */
#ifndef OMNIBOX_COMMAND_H
#define OMNIBOX_COMMAND_H

#include <stdbool.h>

#include "compiler/policy.h"

/* The value of NAME in ENV (NAME=VALUE strings), or NULL. */
const char *env_lookup(char *const *env, const char *name);

/* The home directory of a launch: $HOME of ENV when absolute, else the
 * user's entry in the password database, else "/". */
const char *launch_home(char *const *env);

/*
 * NAME looked up on the PATH of ENV as execvp would, but only in absolute
 * PATH entries: an empty or relative entry would make the command depend on
 * the directory omnibox-run was started in.  Returns an arena string or NULL.
 */
char *launch_find_in_path(struct arena *a, char *const *env, const char *name);

/*
 * Does the sandbox see the directory DIR, a PATH entry, as it is here?
 * ARG is the caller's.
 */
struct path_seen {
	bool (*seen)(void *arg, const char *dir);
	void *arg;
};

/*
 * NAME on the PATH of ENV as the shell inside the sandbox will find it:
 * launch_find_in_path() over the entries SEEN says the sandbox sees
 * (SEEN NULL: all), so an earlier entry it does not see (a version
 * manager's shims in the home) does not shadow the program it will run.
 * When no such entry holds NAME, the first absolute entry that does, whose
 * directory the launch then has to make visible.  Returns an arena string
 * or NULL.
 */
char *launch_find_command(struct arena *a, char *const *env, const char *name,
			  const struct path_seen *seen);

/*
 * The interpreter a "#!" script at SCRIPT names, with "#!/usr/bin/env NAME"
 * looked up on PATH as launch_find_command() does.  *OUT is NULL when
 * SCRIPT is no script.  Returns 0, or -1 with a message in ERR when env's
 * NAME is not on PATH.
 */
int launch_script_interpreter(struct arena *a, char *const *env, const struct path_seen *seen,
			      const char *script, const char **out, char *err, size_t errlen);

struct launch_env {
	const char *scratch;   /* the scratch dir, or NULL when the launch has none */
	const char *pwd;       /* where the command starts */
	const char *proxy_url; /* egress: the relay's URL, or NULL */
	bool linux;	       /* Linux's bwrap launch (env_launch.linux) */
	const char *home;      /* HOME inside, or NULL: passed on (env_launch.home) */
	char *const *extra;    /* NAME=VALUE set after the allow-list (placeholders), or NULL */
	size_t n_extra;
};

/*
 * The command's environment: env_compute() (compiler/decide/env.h) of P for
 * ENV and E's per-launch values.  NULL-terminated, from A.
 */
char **launch_env_build(struct arena *a, const struct policy *p, char *const *env,
			const struct launch_env *e);

/*
 * Does the executable FD (any descriptor on it, O_PATH too) need a program
 * interpreter (PT_INTERP: a dynamic build), which must then be in place
 * before it runs?  What is not a 64-bit ELF file, or cannot be read, is
 * taken to need one.
 */
bool launch_elf_interp(int fd);

#endif
