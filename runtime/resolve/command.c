/*
 * command.c - environment, PATH lookup, script interpreters.
 */
#include "runtime/resolve/command.h"

#include "emitters/envlist.h"

#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *
env_lookup(char *const *env, const char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; env && env[i]; i++)
		if (!strncmp(env[i], name, n) && env[i][n] == '=')
			return env[i] + n + 1;
	return NULL;
}

char *
launch_find_in_path(struct arena *a, char *const *env, const char *name)
{
	const char *path = env_lookup(env, "PATH");

	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (const char *p = path;;) {
		const char *end = strchr(p, ':');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		struct stat st;

		if (len && p[0] == '/') {
			char *cand = arena_printf(a, "%.*s/%s", (int)len, p, name);

			if (stat(cand, &st) == 0 && S_ISREG(st.st_mode) && access(cand, X_OK) == 0)
				return cand;
		}
		if (!end)
			return NULL;
		p = end + 1;
	}
}

int
launch_script_interpreter(struct arena *a, char *const *env, const char *script, const char **out,
			  char *err, size_t errlen)
{
	char line[256], *p, *interp;
	ssize_t n;
	int fd = open(script, O_RDONLY | O_CLOEXEC);

	*out = NULL;
	if (fd < 0)
		return 0;
	n = read(fd, line, sizeof(line) - 1);
	close(fd);
	if (n < 3 || line[0] != '#' || line[1] != '!')
		return 0;
	line[n] = '\0';
	line[strcspn(line, "\n")] = '\0';
	for (p = line + 2; *p == ' ' || *p == '\t'; p++)
		;
	interp = p;
	p += strcspn(p, " \t");
	if (*p)
		*p++ = '\0';
	if (!strcmp(interp, "/usr/bin/env") || !strcmp(interp, "/bin/env")) {
		char *found;

		p += strspn(p, " \t");
		p[strcspn(p, " \t")] = '\0';
		if (!*p || *p == '-')
			return 0;
		found = launch_find_in_path(a, env, p);
		if (!found) {
			snprintf(err, errlen, "the interpreter '%s' of %s is not on PATH", p,
				 script);
			return -1;
		}
		*out = found;
		return 0;
	}
	if (interp[0] == '/')
		*out = arena_strdup(a, interp);
	return 0;
}

static void
env_set(struct arena *a, char ***env, size_t *n, size_t *cap, const char *name, const char *value)
{
	size_t len = strlen(name);

	for (size_t i = 0; i < *n; i++)
		if (!strncmp((*env)[i], name, len) && (*env)[i][len] == '=') {
			(*env)[i] = arena_printf(a, "%s=%s", name, value);
			return;
		}
	*ARENA_PUSH(a, *env, *n, *cap) = arena_printf(a, "%s=%s", name, value);
}

struct env_acc {
	struct arena *a;
	char ***env;
	size_t *n, *cap;
};

static void
env_acc_set(void *arg, const char *name, const char *value, const char *why, unsigned line)
{
	struct env_acc *acc = arg;

	(void)why;
	(void)line;
	env_set(acc->a, acc->env, acc->n, acc->cap, name, value);
}

char **
launch_env_build(struct arena *a, const struct policy *p, char *const *environ,
		 const struct launch_env *e)
{
	const struct sandbox *sb = &p->os_env.sandbox;
	const struct terminal *t = p->terminal;
	char **env = NULL;
	size_t n = 0, cap = 0;

	for (size_t i = 0; environ && environ[i]; i++)
		if (strchr(environ[i], '=') && env_name_passes(sb, environ[i]))
			*ARENA_PUSH(a, env, n, cap) = arena_strdup(a, environ[i]);
	for (size_t i = 0; env_scratch_names[i]; i++)
		env_set(a, &env, &n, &cap, env_scratch_names[i], e->scratch);
	env_set(a, &env, &n, &cap, "PWD", e->pwd);
	if (e->proxy_url) {
		for (size_t i = 0; env_proxy_names[i]; i++)
			env_set(a, &env, &n, &cap, env_proxy_names[i], e->proxy_url);
		env_set(a, &env, &n, &cap, "NO_PROXY", "localhost,127.0.0.1,::1");
		env_set(a, &env, &n, &cap, "no_proxy", "localhost,127.0.0.1,::1");
	}
	if (e->ca_bundle)
		for (size_t i = 0; env_ca_names[i]; i++)
			env_set(a, &env, &n, &cap, env_ca_names[i], e->ca_bundle);
	{
		struct env_acc acc = {a, &env, &n, &cap};

		env_policy_vars(sb, e->scratch, env_acc_set, &acc);
	}
	for (size_t i = 0; i < e->n_extra; i++) {
		const char *eq = strchr(e->extra[i], '=');

		if (eq)
			env_set(a, &env, &n, &cap,
				arena_strndup(a, e->extra[i], (size_t)(eq - e->extra[i])), eq + 1);
	}
	if (t) {
		for (size_t i = 0; i < t->n_env; i++)
			env_set(a, &env, &n, &cap, t->env[i].key, t->env[i].value);
		for (size_t i = 0; i < t->env_unset.n; i++) {
			size_t len = strlen(t->env_unset.v[i].s);

			for (size_t k = 0; k < n; k++)
				if (!strncmp(env[k], t->env_unset.v[i].s, len) &&
				    env[k][len] == '=') {
					env[k] = env[--n];
					k--;
				}
		}
	}
	*ARENA_PUSH(a, env, n, cap) = NULL;
	return env;
}

const char *
launch_home(char *const *env)
{
	const char *home = env_lookup(env, "HOME");
	struct passwd *pw;

	if (home && home[0] == '/')
		return home;
	pw = getpwuid(getuid());
	return pw && pw->pw_dir && pw->pw_dir[0] == '/' ? pw->pw_dir : "/";
}
