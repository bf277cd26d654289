/*
 * command.c - environment, PATH lookup, script interpreters.
 */
#include "runtime/resolve/command.h"

#include "compiler/decide/env.h"

#if defined(__linux__)
#include <elf.h>
#endif
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

/* NAME in the first absolute PATH entry of ENV that SEEN accepts (NULL: any). */
static char *
find_in_path(struct arena *a, char *const *env, const char *name, const struct path_seen *seen)
{
	const char *path = env_lookup(env, "PATH");

	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (const char *p = path;;) {
		const char *end = strchr(p, ':');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		struct stat st;

		if (len && p[0] == '/' &&
		    (!seen || seen->seen(seen->arg, arena_strndup(a, p, len)))) {
			char *cand = arena_printf(a, "%.*s/%s", (int)len, p, name);

			if (stat(cand, &st) == 0 && S_ISREG(st.st_mode) && access(cand, X_OK) == 0)
				return cand;
		}
		if (!end)
			return NULL;
		p = end + 1;
	}
}

char *
launch_find_in_path(struct arena *a, char *const *env, const char *name)
{
	return find_in_path(a, env, name, NULL);
}

char *
launch_find_command(struct arena *a, char *const *env, const char *name,
		    const struct path_seen *seen)
{
	char *found = seen && seen->seen ? find_in_path(a, env, name, seen) : NULL;

	return found ? found : find_in_path(a, env, name, NULL);
}

int
launch_script_interpreter(struct arena *a, char *const *env, const struct path_seen *seen,
			  const char *script, const char **out, char *err, size_t errlen)
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
		found = launch_find_command(a, env, p, seen);
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

char **
launch_env_build(struct arena *a, const struct policy *p, char *const *environ,
		 const struct launch_env *e)
{
	struct env_value *extra = arena_alloc(a, (e->n_extra + 1) * sizeof(*extra));
	struct env_launch l = {
	    .linux = e->linux,
	    .pwd = e->pwd,
	    .home = e->home,
	    .proxy_url = e->proxy_url,
	    .extra = extra};

	for (size_t i = 0; i < e->n_extra; i++) {
		const char *eq = strchr(e->extra[i], '=');

		if (eq)
			extra[l.n_extra++] = (struct env_value){
			    arena_strndup(a, e->extra[i], (size_t)(eq - e->extra[i])), eq + 1, NULL,
			    0};
	}
	return env_compute(a, p, &l, environ, e->scratch);
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

#if defined(__linux__)
bool
launch_elf_interp(int fd)
{
	char proc[64];
	Elf64_Ehdr eh;
	bool interp = true; /* what cannot be read is taken to need one */
	int rfd;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	rfd = open(proc, O_RDONLY | O_CLOEXEC);
	if (rfd < 0)
		return true;
	if (pread(rfd, &eh, sizeof(eh), 0) == (ssize_t)sizeof(eh) && !memcmp(eh.e_ident, ELFMAG, SELFMAG) &&
	    eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_phentsize == sizeof(Elf64_Phdr)) {
		interp = false;
		for (unsigned i = 0; i < eh.e_phnum && !interp; i++) {
			Elf64_Phdr ph;

			if (pread(rfd, &ph, sizeof(ph), (off_t)(eh.e_phoff + (Elf64_Off)i * sizeof(ph))) !=
			    (ssize_t)sizeof(ph))
				interp = true;
			else
				interp = ph.p_type == PT_INTERP;
		}
	}
	close(rfd);
	return interp;
}
#else
bool
launch_elf_interp(int fd)
{
	(void)fd;
	return true; /* no bwrap here: only its Linux launch asks */
}
#endif
