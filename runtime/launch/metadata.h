/*
 * metadata.h - a file's mode and times, changed for the linux_landlock
 * sandbox by omnibox-run, where the rules allow it.
 *
 * Landlock does not see metadata: chmod, utimensat, chown and extended
 * attributes reach any path the user's own permissions allow, granted or
 * not (a host's ~/.ssh made world-readable, a protected .git/hooks file
 * made executable), and through a descriptor opened only to read (or
 * O_PATH, which Landlock never checks) as well as by path.  The backend's
 * seccomp filter refuses every such call (emitters/seccomp.h).  chmod,
 * fchmod and utimensat, which builds and package managers make all day,
 * come here instead: omnibox-run resolves the caller's path itself, from
 * the caller's own working directory or descriptor, never through a /proc
 * magic link, and does the call on what it found, when
 *
 *   - the rules omnibox-init was given let the sandbox write it there: a
 *     file below a writable rule (not a container, not a protected or
 *     masked path: those have no write right), or a directory below a
 *     writable grant;
 *   - the caller owns it (no capability is left in the sandbox), and a mode
 *     asks for no set-user-ID or set-group-ID bit.
 *
 * What it did is what the caller gets; a refusal is EPERM, counted with the
 * filter's.  The caller's path is read once, so a thread changing it or a
 * link swapped afterwards changes nothing: the call is made on the object
 * checked.  x86_64 callers only; the others are refused (EPERM).
 */
#ifndef OMNIBOX_METADATA_H
#define OMNIBOX_METADATA_H

#include <stddef.h>

#include "emitters/landlock.h"

struct seccomp_notif;

/* The rules as omnibox-init got them (paths canonical at launch). */
struct metadata_rules {
	const struct landlock_arg_rule *rules;
	size_t n_rules;
};

/*
 * notify_answer_fn (notify.h) for ARG, a struct metadata_rules: chmod,
 * fchmod, fchmodat, fchmodat2 and utimensat, done as above with the result
 * in *ERROR (1); any other call is not this one's (0).
 */
int metadata_answer(void *arg, const struct seccomp_notif *req, int listener, int *error);

#endif
