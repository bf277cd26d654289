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

/* The system directories and /etc files every Linux sandbox sees read-only. */
extern const char *const paths_linux_system_dirs[];
extern const char *const paths_linux_etc_files[];

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
