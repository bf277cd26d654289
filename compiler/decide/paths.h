/*
 * paths.h - the system's own directories, and how each platform spells a
 * path, decided once.
 *
 * Which host directories every Linux sandbox sees read-only, which /etc
 * files, what omnibox-init lets it write besides its grants, which macOS
 * directories a command's own directory may never widen to, and how macOS
 * spells /tmp, /var and /etc: the bwrap and Seatbelt emitters, the query
 * engine, the resolver and the macOS launch ask these, none keeps a list.
 * Pure.
 */
#ifndef OMNIBOX_DECIDE_PATHS_H
#define OMNIBOX_DECIDE_PATHS_H

#include <stdbool.h>

#include "../base/arena.h"

/*
 * The system directories and /etc files every Linux sandbox sees read-only,
 * as lists X(name) ... (so another table can be built from them at compile
 * time: llbackend.h's fixed rules), and as NULL-terminated arrays.
 */
/* clang-format off */
#define PATHS_LINUX_SYSTEM_DIRS(X) X("/usr") X("/lib") X("/lib64") X("/lib32") X("/bin") X("/sbin")

/*
 * The /etc entries a Linux sandbox sees (names below /etc), by one rule:
 * what programs read to start, to find names and addresses, to trust TLS,
 * and the system-wide defaults of shells, editors and toolchains: never
 * what holds a secret or names the machine (shadow, gshadow, sudoers, ssh,
 * machine-id, hostname, subuid, security, pam.d, environment), nor
 * services' own configuration (systemd, cron.*, apt, docker, postgresql).
 * The language runtimes' directories are named for each version Debian and
 * Fedora ship; a missing one is skipped (--ro-bind-try).  docs/linux.md
 * lists them with the reason.
 */
#define PATHS_LINUX_ETC_FILES(X)                                                                   \
	/* the dynamic linker, names and addresses, users and groups (no secrets) */               \
	X("ld.so.cache") X("ld.so.conf") X("ld.so.conf.d") X("nsswitch.conf") X("resolv.conf")     \
	X("hosts") X("host.conf") X("gai.conf") X("services") X("protocols") X("networks")         \
	X("passwd") X("group")                                                                     \
	/* time, locale, what the system is */                                                     \
	X("localtime") X("timezone") X("locale.alias") X("os-release") X("debian_version")         \
	X("lsb-release")                                                                           \
	/* TLS trust */                                                                            \
	X("ssl") X("ca-certificates") X("pki")                                                     \
	/* which program a generic name runs (java, editor, pager) */                              \
	X("alternatives")                                                                          \
	/* shells' system start-up files and completion */                                         \
	X("profile") X("profile.d") X("bash.bashrc") X("bash_completion") X("bash_completion.d")   \
	X("inputrc") X("shells") X("zsh") X("terminfo")                                            \
	/* tools' system-wide defaults */                                                          \
	X("gitconfig") X("wgetrc") X("npmrc") X("pip.conf") X("vim") X("nanorc") X("mime.types")   \
	X("magic") X("magic.mime") X("manpath.config") X("fonts") X("maven") X("perl")             \
	/* language runtimes' configuration */                                                     \
	X("java-8-openjdk") X("java-11-openjdk") X("java-17-openjdk") X("java-21-openjdk")         \
	X("java-25-openjdk") X("java") X("python3") X("python3.9") X("python3.10")                 \
	X("python3.11") X("python3.12") X("python3.13") X("python3.14")
/* clang-format on */

extern const char *const paths_linux_system_dirs[];
extern const char *const paths_linux_etc_files[];
/* The same files by their whole path ("/etc/hosts"), in the same order. */
extern const char *const paths_linux_etc_paths[];

/* What omnibox-init may let the sandbox write besides its grants (Landlock). */
extern const char *const paths_linux_writable[];

/* Is PATH (canonical) inside one of the system directories above? */
bool paths_linux_system(const char *path);

/* Does every Linux sandbox see the host's PATH (canonical): a system
 * directory or one of the /etc files above, or below them? */
bool paths_linux_shown(const char *path);

/*
 * Is DIR (canonical) one a write_files entry is bound in on its own, never
 * through a private directory: "/", a system directory, /etc (file by
 * file), /proc /sys /dev /run?
 */
bool paths_linux_fixed_dir(const char *dir);

/* macOS's read-only system directories. */
extern const char *const paths_darwin_system_dirs[];

/* Is PATH (canonical) inside one of them? */
bool paths_darwin_system(const char *path);

/*
 * The canonical macOS spelling of the absolute path PATH, lexically: "."
 * and empty segments dropped, ".." collapsed, and /tmp, /var, /etc (and
 * what lies below them) moved to /private/tmp, /private/var, /private/etc,
 * which are what Seatbelt sees after the kernel follows those symlinks.
 * Returns an arena string.
 */
char *paths_darwin_spelling(struct arena *a, const char *path);

#endif
