/*
 * paths.c - the system's own directories and how each platform spells a path (paths.h).
 */
#include "paths.h"

#include <stdio.h>
#include <string.h>

#include "../ir.h"

const char *const paths_linux_system_dirs[] = {"/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin", NULL};

/*
 * The /etc entries a Linux sandbox sees, by one rule: what programs read to
 * start, to find names and addresses, to trust TLS, and the system-wide
 * defaults of shells, editors and toolchains: never what holds a secret or
 * names the machine (shadow, gshadow, sudoers, ssh, machine-id, hostname,
 * subuid, security, pam.d, environment), nor services' own configuration
 * (systemd, cron.*, apt, docker, postgresql).  The language runtimes'
 * directories are named for each version Debian and Fedora ship; a missing
 * one is skipped (--ro-bind-try).  docs/linux.md lists them with the reason.
 */
const char *const paths_linux_etc_files[] = {
    /* the dynamic linker, names and addresses, users and groups (no secrets) */
    "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "nsswitch.conf", "resolv.conf", "hosts",
    "host.conf", "gai.conf", "services", "protocols", "networks", "passwd", "group",
    /* time, locale, what the system is */
    "localtime", "timezone", "locale.alias", "os-release", "debian_version", "lsb-release",
    /* TLS trust */
    "ssl", "ca-certificates", "pki",
    /* which program a generic name runs (java, editor, pager) */
    "alternatives",
    /* shells' system start-up files and completion */
    "profile", "profile.d", "bash.bashrc", "bash_completion", "bash_completion.d", "inputrc",
    "shells", "zsh", "terminfo",
    /* tools' system-wide defaults */
    "gitconfig", "wgetrc", "npmrc", "pip.conf", "vim", "nanorc", "mime.types", "magic",
    "magic.mime", "manpath.config", "fonts", "maven", "perl",
    /* language runtimes' configuration */
    "java-8-openjdk", "java-11-openjdk", "java-17-openjdk", "java-21-openjdk",
    "java-25-openjdk", "java", "python3", "python3.9", "python3.10", "python3.11",
    "python3.12", "python3.13", "python3.14", NULL};

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
	for (size_t i = 0; paths_linux_etc_files[i]; i++) {
		char etc[64];

		snprintf(etc, sizeof(etc), "/etc/%s", paths_linux_etc_files[i]);
		if (path_within_any(path, (const char *const[]){etc, NULL}))
			return true;
	}
	return false;
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
