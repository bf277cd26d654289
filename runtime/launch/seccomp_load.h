/*
 * seccomp_load.h - omnibox-init loads the seccomp filter itself.
 *
 * The filter (emitters/seccomp.h) reports its refusals: they return
 * SECCOMP_RET_USER_NOTIF, and the kernel holds each such call until the
 * holder of the filter's listener answers it.  omnibox-init loads the
 * program with a new listener, which it hands to omnibox-run
 * (runtime/launch/notify.h); omnibox-run counts the refusals and answers
 * EPERM.  Where the kernel cannot give a listener, every report becomes
 * ERRNO(EPERM) before the program is loaded: the same refusals, uncounted.
 * Either way the calls fail as before; nothing here can let one through.
 */
#ifndef OMNIBOX_SECCOMP_LOAD_H
#define OMNIBOX_SECCOMP_LOAD_H

#if defined(__linux__)
#include <linux/filter.h>
#include <stdbool.h>
#include <stddef.h>

/*
 * Turn every `ret SECCOMP_RET_USER_NOTIF` of the N instructions at PROG
 * into `ret SECCOMP_RET_ERRNO | EPERM`, in place; nothing else changes.
 * Returns how many were turned.
 */
size_t filter_notify_to_eperm(struct sock_filter *prog, size_t n);

/*
 * Read the program from FD (a sealed memfd, from its start) into *PROG
 * (malloc'd, N instructions) and close FD.  Returns 0, or -1 with a
 * message in ERR (ERRLEN bytes) when it cannot be read or is no whole,
 * non-empty program of at most BPF_MAXINSNS instructions.
 */
int filter_read(int fd, struct sock_filter **prog, size_t *n, char *err, size_t errlen);

/*
 * Load the N instructions at PROG as this process's seccomp filter (after
 * PR_SET_NO_NEW_PRIVS: that needs no privilege, and exec can then grant
 * none).  With WANT_LISTENER, ask for a listener and return it in
 * *LISTENER (close-on-exec); when the kernel has none to give (no
 * SECCOMP_RET_USER_NOTIF, no SECCOMP_FILTER_FLAG_NEW_LISTENER, or another
 * filter of this process holds a listener already), or without
 * WANT_LISTENER, load the program rewritten by filter_notify_to_eperm()
 * (PROG is changed) and set *LISTENER to -1.  Returns 0, or -1 with a
 * message in ERR when no filter could be loaded.
 */
int filter_install(struct sock_filter *prog, size_t n, bool want_listener, int *listener, char *err,
		   size_t errlen);

#endif
#endif
