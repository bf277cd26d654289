/*
 * paths.c - the system's own directories and how each platform spells a path (paths.h).
 */
#include "paths.h"

#include <stdio.h>
#include <string.h>

#include "../ir.h"

#define PATHS_ITEM(name) name,
const char *const paths_linux_system_dirs[] = {PATHS_LINUX_SYSTEM_DIRS(PATHS_ITEM) NULL};
const char *const paths_linux_etc_files[] = {PATHS_LINUX_ETC_FILES(PATHS_ITEM) NULL};
#undef PATHS_ITEM
#define PATHS_ETC_PATH(name) "/etc/" name,
const char *const paths_linux_etc_paths[] = {PATHS_LINUX_ETC_FILES(PATHS_ETC_PATH) NULL};
#undef PATHS_ETC_PATH

const char *const paths_linux_writable[] = {
    "/tmp",	"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom",
    "/dev/tty", "/dev/pts",  "/dev/shm",  "/proc",     NULL};

bool
paths_linux_system(const char *path)
{
	return path_within_any(path, paths_linux_system_dirs);
}

bool
paths_linux_shown(const char *path)
{
	if (paths_linux_system(path))
		return true;
	return path_within_any(path, paths_linux_etc_paths);
}

bool
paths_linux_fixed_dir(const char *dir)
{
	static const char *const fixed[] = {"/etc", "/proc", "/sys", "/dev", "/run", NULL};

	return !strcmp(dir, "/") || paths_linux_system(dir) || path_within_any(dir, fixed);
}

const char *const paths_darwin_system_dirs[] = {
    "/usr",
    "/System",
    "/Library",
    "/bin",
    "/sbin",
    "/opt",
    "/private/etc",
    "/private/var/db/timezone",
    "/private/var/db/mds",
    "/private/var/db/dyld",
    NULL,
};

/* Never granted to make a command visible: they would expose every user's files. */
bool
paths_darwin_system(const char *path)
{
	return path_within_any(path, paths_darwin_system_dirs);
}

char *
paths_darwin_spelling(struct arena *a, const char *path)
{
	static const char *const moved[] = {"tmp", "var", "etc", NULL};
	char *rel = path_collapse(a, path, true);

	for (size_t i = 0; moved[i]; i++) {
		size_t n = strlen(moved[i]);

		/* The kernel resolves these symlinks before Seatbelt looks: a rule
		 * on /tmp/x would silently never match. */
		if (!strncmp(rel, moved[i], n) && (rel[n] == '\0' || rel[n] == '/'))
			return arena_printf(a, "/private/%s", rel);
	}
	return arena_printf(a, "/%s", rel);
}
