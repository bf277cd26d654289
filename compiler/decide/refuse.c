/*
 * refuse.c - what no launch runs, and grants too wide to take (refuse.h).
 */
#include "refuse.h"

#include "hidden.h"
#include "llbackend.h"

#include <string.h>

const char *const refuse_home_parents[] = {"/home", "/Users", "/var/home", "/export/home",
					   NULL};

const char *
refuse_launch(struct arena *a, const struct policy *p, enum sandbox_type backend,
	      const char *target, struct loc *loc)
{
	if (p->os_env.fork.value) {
		*loc = p->os_env.fork.loc;
		return "os_env.fork is not supported; remove it to run on the workspace itself";
	}
	return refuse_target(a, p, backend, target, loc);
}

const char *
refuse_target(struct arena *a, const struct policy *p, enum sandbox_type backend,
	      const char *target, struct loc *loc)
{
	enum sandbox_type t = p->os_env.sandbox.type;

	if (t != SANDBOX_AUTO && t != SANDBOX_NONE && t != backend) {
		*loc = p->os_env.sandbox.type_loc;
		return arena_printf(a,
				    "sandbox type %s has no %s form (compile for its own target, or "
				    "use auto)",
				    sandbox_type_name(t), target);
	}
	if (backend == SANDBOX_LINUX_LANDLOCK && t != SANDBOX_NONE)
		return llbackend_refuse(p, loc);
	return NULL;
}

const char *
refuse_too_wide(const char *path, const char *home, bool darwin)
{
	static const char *const mac[] = {"/private", "/var",	"/private/var", "/private/tmp",
					  "/tmp",     "/Volumes", NULL};
	size_t n = strlen(path);

	while (n > 1 && path[n - 1] == '/')
		n--;
	if (n == 1 && path[0] == '/')
		return "the whole file system";
	for (size_t i = 0; refuse_home_parents[i]; i++) {
		size_t k = strlen(refuse_home_parents[i]);

		if (n == k && !strncmp(path, refuse_home_parents[i], k))
			return "every user's home directory";
		/* /home/NAME: a home, whoever's it is. */
		if (n > k + 1 && !strncmp(path, refuse_home_parents[i], k) && path[k] == '/' &&
		    !memchr(path + k + 1, '/', n - k - 1))
			return "a whole home directory";
	}
	if ((n == 5 && !strncmp(path, "/root", 5)) || (n == 9 && !strncmp(path, "/var/root", 9)))
		return "the whole home directory";
	if (home && strlen(home) == n && !strncmp(path, home, n))
		return "the whole home directory";
	/* Above the home: one of its ancestors, or the home followed by "..". */
	if (home && n < strlen(home) && !strncmp(home, path, n) && home[n] == '/')
		return "a directory above the home directory";
	if (home && !strncmp(path, home, strlen(home)) && !strncmp(path + strlen(home), "/..", 3) &&
	    (path[strlen(home) + 3] == '/' || path[strlen(home) + 3] == '\0'))
		return "a directory above the home directory";
	for (size_t i = 0; darwin && mac[i]; i++)
		if (strlen(mac[i]) == n && !strncmp(path, mac[i], n))
			return "a system-wide directory";
	return NULL;
}

bool
refuse_link_target(const char *written, const char *canon, const char *home, bool darwin)
{
	static const char *const trees[] = {"/etc",   "/proc",	"/sys",	 "/dev",     "/boot",
					    "/run",   "/usr",	"/bin",	 "/sbin",    "/lib",
					    "/lib32", "/lib64", "/root", "/var/run", NULL};

	if (!strcmp(written, canon))
		return false;
	if (refuse_too_wide(canon, home, darwin) || path_within_any(canon, trees))
		return true;
	return hidden_component(canon) && !hidden_component(written);
}
