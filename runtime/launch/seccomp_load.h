/*
 * seccomp_load.h - omnibox-init loads the seccomp filter itself.
 *
 * The filter it is given (emitters/seccomp.h, `--emit=seccomp-bpf`) is the
 * standalone one: its refusals return ERRNO(EPERM), whoever loads it.
 * omnibox-init derives the reporting variant at load time
 * (filter_eperm_to_notify): each of those returns becomes
 * SECCOMP_RET_USER_NOTIF, and the kernel holds each such call until the
 * holder of the filter's listener answers it.  omnibox-init loads that
 * variant with a new listener, which it hands to omnibox-run
 * (runtime/launch/notify.h); omnibox-run counts the refusals and answers
 * EPERM.  Where the kernel cannot give a listener, the program is loaded
 * as it came: the same refusals, uncounted.  Either way the calls fail as
 * before; nothing here can let one through.
 */
#ifndef OMNIBOX_SECCOMP_LOAD_H
#define OMNIBOX_SECCOMP_LOAD_H

#if defined(__linux__)
#include <linux/filter.h>
#include <stdbool.h>
#include <stddef.h>

/*
 * The reporting variant of the N instructions at PROG, written to OUT (N
 * instructions; OUT may be PROG): every `ret SECCOMP_RET_ERRNO | EPERM`
 * becomes `ret SECCOMP_RET_USER_NOTIF`, and every other instruction is
 * copied as it is (clone3's ERRNO(ENOSYS), ALLOW, KILL_PROCESS, any other
 * errno, and loads or jumps whose constant happens to equal that value).
 * Pure: it reads PROG and writes OUT, nothing else.  Returns how many
 * returns it turned.  The only rewrite between the two programs: the
 * tests hold it to libseccomp's own reporting build.
 */
size_t filter_eperm_to_notify(const struct sock_filter *prog, struct sock_filter *out, size_t n);

/*
 * PROG (N instructions, a valid program) for a kernel whose calls come
 * from the ABIs ARCHES (N_ARCHES AUDIT_ARCH_* values) alone, into OUT (N
 * instructions; OUT may not be PROG): every comparison of the
 * architecture with one not listed is decided as unequal, and what no
 * call can reach then is left out, the jumps over it shortened.  For a
 * call of a listed ABI the result is the same return, instruction for
 * instruction along the same path; a call of any other ABI takes the
 * program's branch for an unknown one.  Pure.  Returns the length of
 * OUT, at most N.
 */
size_t filter_for_abis(const struct sock_filter *prog, size_t n, const unsigned *arches,
		       size_t n_arches, struct sock_filter *out);

/* The AUDIT_ARCH_* values of the calls this build's kernels can make
 * (x86_64: x86_64 with x32, and x86; aarch64: aarch64 and arm), into
 * *ARCHES; how many (0: unknown here, the program is loaded whole). */
size_t filter_native_abis(const unsigned **arches);

/*
 * Read the program from FD (a sealed memfd, from its start) into *PROG
 * (malloc'd, N instructions) and close FD.  Returns 0, or -1 with a
 * message in ERR (ERRLEN bytes) when it cannot be read or is no whole,
 * non-empty program of at most BPF_MAXINSNS instructions whose every
 * return is a constant other than SECCOMP_RET_USER_NOTIF (the standalone
 * filter: reporting is derived here, and only with a listener).
 */
int filter_read(int fd, struct sock_filter **prog, size_t *n, char *err, size_t errlen);

/*
 * Load the N instructions at PROG as this process's seccomp filter (after
 * PR_SET_NO_NEW_PRIVS: that needs no privilege, and exec can then grant
 * none).  With WANT_LISTENER, load filter_eperm_to_notify()'s variant of
 * it with a new listener and return that in *LISTENER (close-on-exec);
 * when the kernel has none to give (no SECCOMP_RET_USER_NOTIF, no
 * SECCOMP_FILTER_FLAG_NEW_LISTENER, or another filter of this process
 * holds a listener already), or without WANT_LISTENER, load PROG as it is
 * and set *LISTENER to -1.  PROG is not changed.  Returns 0, or -1 with a
 * message in ERR when no filter could be loaded.
 */
int filter_install(const struct sock_filter *prog, size_t n, bool want_listener, int *listener,
		   char *err, size_t errlen);

#endif
#endif
