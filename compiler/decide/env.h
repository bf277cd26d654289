/*
 * env.h - the command's environment, decided once (spec/linux.md,
 * "Environment"; spec/windows.md, the launch sequence).
 *
 * The environment is rebuilt from names, never inherited whole.  What a
 * policy means for it is decided here and nowhere else: env_decide() turns
 * the policy and a launch's values into an ordered list of rules, and
 * env_apply() applies those rules to a real environment.  --emit=env prints
 * the rules (with symbolic values), the winjob manifest carries them to
 * omnibox-run.exe, and every launcher applies them, so what is reviewed is
 * what runs.
 *
 * Pure C11: no system calls and no POSIX-only header, so omnibox-run.exe
 * links it too.
 */
#ifndef OMNIBOX_DECIDE_ENV_H
#define OMNIBOX_DECIDE_ENV_H

#include <stdbool.h>
#include <stddef.h>

#include "../base/arena.h"
#include "../ir.h"

/* Passed from the launching environment when set (plus every LC_*). */
extern const char *const env_base_names[];
/* Set to the private scratch dir. */
extern const char *const env_scratch_names[];
/* Proxy variables set to the relay's URL when egress is active. */
extern const char *const env_proxy_names[];
/* CA bundle variables set to the session bundle when egress is active. */
extern const char *const env_ca_names[];
/* The XDG base directories (XDG_CONFIG_HOME, ...): never passed to a
 * sandboxed command, even when env_passthrough names them; they follow
 * $HOME inside (env_decide()). */
extern const char *const env_xdg_home_names[];
/* Names that change what programs load or run: only via env_passthrough. */
extern const char *const env_dangerous_names[];

/* File name of the CA bundle inside the scratch dir, and of the same
 * certificates as a Java trust store (JKS).  The session's own CAs lie
 * beside them in OpenSSL's hashed-directory form (HASH.N): the scratch dir
 * is the first directory of SSL_CERT_DIR. */
#define ENV_CA_BUNDLE "omnibox-ca.pem"
#define ENV_CA_TRUSTSTORE "omnibox-ca.jks"

/* The git_ssh broker's socket inside the scratch dir, and its helper inside the sandbox. */
#define ENV_GIT_SSH_SOCKET "omnibox-git-ssh.sock"
#define ENV_GIT_SSH_COMMAND "/.omnibox/init --git-ssh"
/* Names of the per-launch values omnibox-run adds (never in a profile). */
#define ENV_GIT_SSH_TOKEN "OMNIBOX_GIT_SSH_TOKEN"

/*
 * The file in the scratch dir that git inside reads as core.excludesFile:
 * what the launch hid or holds in a repository whose .git the sandbox sees,
 * one anchored pattern a line, so that git inside neither lists nor adds
 * it (the launch writes it; env_git_exclude() says when).
 */
#define ENV_GIT_EXCLUDE "omnibox-git-exclude"

/* Does a Linux launch of SB point git at ENV_GIT_EXCLUDE?  Where .git is shown. */
bool env_git_exclude(const struct sandbox *sb);

/* A variable name as the policy schema allows it: [A-Za-z_][A-Za-z0-9_]*. */
bool env_name_ok(const char *s);

/* Is NAME (NAME=VALUE form accepted: stops at '=') passed through from the host? */
bool env_name_passes(const struct sandbox *sb, const char *name);

enum env_op {
	ENV_PASS,	 /* NAME comes from the launching environment, when set there */
	ENV_PASS_PREFIX, /* so does every name that starts with NAME */
	ENV_SET,	 /* NAME=VALUE, replacing whatever came before */
	ENV_SET_SCRATCH, /* NAME=the scratch dir followed by VALUE ("" or "/file") */
	ENV_UNSET,	 /* NAME is removed, whatever came before */
	ENV_SET_TEMPLATE, /* NAME=VALUE with each ENV_SCRATCH_MARK in it the scratch dir */
};

/* What stands for the scratch dir in an ENV_SET_TEMPLATE value. */
#define ENV_SCRATCH_MARK "{SCRATCH}"

struct env_rule {
	enum env_op op;
	const char *name;
	const char *value;   /* ENV_SET, ENV_SET_SCRATCH; NULL for the others */
	const char *section; /* a heading for the rules from here on, or NULL */
	const char *why;     /* what this one rule comes from, or NULL */
	unsigned line;	     /* its line in the policy, or 0 */
};

struct env_rules {
	struct env_rule *v;
	size_t n, cap;
	bool fold_case; /* names compare without regard to case (Windows) */
};

/* One per-launch value: a credential placeholder, the git_ssh token. */
struct env_value {
	const char *name, *value;
	const char *why; /* for --emit=env, or NULL */
	unsigned line;
};

struct env_launch {
	bool windows;	       /* omnibox-run.exe's launch: Windows' names */
	bool linux;	       /* Linux's bwrap launch: what it hides is mounted over */
	const char *pwd;       /* where the command starts; NULL: PWD is not set */
	/* HOME inside when no mount can put the private home at the home
	 * (linux_landlock: a directory of the scratch dir); NULL: passed on. */
	const char *home;
	const char *proxy_url; /* egress: the relay's URL */
	const struct env_value *extra;
	size_t n_extra;
};

/*
 * The rules of P's environment (P's sandbox and P->terminal) for launch L,
 * in the order they apply: what passes from the host, then what omnibox
 * sets, then the per-launch values, then the terminal's env and env_unset.
 * A launch with sandbox type none outside Windows has no scratch dir, so
 * nothing is set to one.  Everything is allocated from A (strings of P and
 * L are referenced, not copied).
 */
void env_decide(struct arena *a, const struct policy *p, const struct env_launch *l,
		struct env_rules *out);

/*
 * RULES (N of them, names compared without regard to ASCII case when
 * FOLD_CASE) applied to HOST (NAME=VALUE strings, NULL-terminated; entries
 * without '=' or with an empty name never pass): first the host's entries
 * some pass rule names, in the host's order, then each set and unset in
 * turn.  SCRATCH is the scratch dir.  Returns a NULL-terminated array of
 * NAME=VALUE strings from A (host strings are copied).
 */
char **env_apply(struct arena *a, const struct env_rule *rules, size_t n, bool fold_case,
		 char *const *host, const char *scratch);

/*
 * ENV (NAME=VALUE strings, NULL-terminated, as env_apply() gives them;
 * changed in place) with PATH's value cut to the absolute entries
 * KEEP(ARG, ENTRY) accepts.  What stays keeps its order and its repeats,
 * as on every other launch; entries that are not absolute (empty, ".",
 * "bin") are not asked about and stay: what they name depends on the
 * directory a lookup starts from.  A PATH left with no entry is removed
 * (programs then take their own default, the system's directories).
 * Returns how many entries went; *DROPPED (may be NULL) lists them from A,
 * each once, in PATH's order, NULL-terminated (NULL when none went).
 * linux_landlock's launch cuts the directories its rules let the sandbox
 * neither read nor execute (runtime/resolve/landlock_open.h).
 */
size_t env_path_keep(struct arena *a, char **env, bool (*keep)(void *arg, const char *entry),
		     void *arg, const char ***dropped);

/*
 * The exact environment of a launch of P: env_decide() and env_apply() in
 * one, for HOST and SCRATCH (NULL when the launch has none).
 */
char **env_compute(struct arena *a, const struct policy *p, const struct env_launch *l,
		   char *const *host, const char *scratch);

#endif
