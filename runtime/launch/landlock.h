/*
 * landlock.h - the second layer omnibox-init adds inside the sandbox.
 *
 * The mounts decide what the sandbox sees and what it may write; Landlock
 * makes the kernel say the same thing a second time, per process and
 * inherited by everything the agent starts: writes only below the paths
 * omnibox-init is given (the writable grants, the scratch dir, /tmp and a
 * few devices), so that a mount mistake alone cannot make the host
 * writable.  With the host's network shared, abstract Unix sockets and
 * signals are scoped to the sandbox too (ABI 6): X11, D-Bus or anything
 * else listening on '@...' outside cannot be reached.
 *
 * Where there is no bwrap (no namespace can be made), Landlock is the
 * whole confinement instead: landlock_confine() enforces a complete
 * ruleset given as descriptors (omnibox-init's --ll-fs, --ll-net-connect),
 * which handles every right this kernel knows, so that nothing is
 * reachable but what the rules grant.
 */
#ifndef OMNIBOX_LANDLOCK_H
#define OMNIBOX_LANDLOCK_H

#include <stdbool.h>
#include <stddef.h>

/* The ABI that writes need (it can allow renames across directories). */
#define LANDLOCK_ABI_FS 2
/* The ABI that scopes abstract Unix sockets and signals. */
#define LANDLOCK_ABI_SCOPE 6

/* The kernel's Landlock ABI version, 0 when it has none (or it is off). */
int landlock_abi(void);

/*
 * Restrict this process (and its future children): with ABI >= 2, writes
 * only below the N PATHS that exist (files: that file) and to the files
 * behind descriptors 1 and 2 when they are open for writing; with SCOPE
 * and ABI >= 6, abstract Unix sockets and signals only inside this domain.
 * What the kernel lacks is left out: the caller told the user before.
 * Returns 0, or -1 with a message in ERR when the kernel refused a rule
 * it should take: the launch must fail then.
 */
int landlock_restrict(const char *const *paths, size_t n, bool scope, char *err, size_t errlen);

/* The filesystem rights of some ABI (the kernel's LANDLOCK_ACCESS_FS_* bits,
 * compiler/decide/landlock.h's enum ll_access): every one known here. */
#define LANDLOCK_FS_ALL 0xffffULL

/* A path-beneath rule of the full ruleset: the hierarchy below the
 * descriptor FD (an inherited one, above 2) gets RIGHTS. */
struct landlock_fd_rule {
	int fd;
	unsigned long long rights;
};

/*
 * The kernel has Landlock ABI NEED at least.  0, or -1 with "this kernel's
 * Landlock ABI is M, the policy needs NEED (what ABIs M+1 to NEED add)" in
 * ERR (M is 0 without Landlock, or with it disabled).
 */
int landlock_need_abi(int need, char *err, size_t errlen);

/*
 * Restrict this process (and its future children) to one ruleset that
 * handles every filesystem right of this kernel's ABI (1: bits 0-12;
 * 2: + refer; 3: + truncate; 5: + ioctl on devices), both TCP rights (bind
 * and connect, ABI >= 4; none with NET_ANY: the host's network) and both scopes (abstract Unix sockets, signals,
 * ABI >= 6), with the N FS rules and a connect rule for each of the N_PORTS
 * PORTS.  A rule gets its rights as far as this ABI handles them, and
 * those a file may hold (execute, write, read, truncate, ioctl on a
 * device) when its descriptor is no directory; a rule left with none is
 * no rule.  What the ABI lacks (TCP below 4, the scopes below 6) is left
 * out without a word: the caller asks for the ABI it needs first
 * (landlock_need_abi()).  Landlock itself (to ABI 7) leaves metadata
 * (chmod, utimes, xattrs, stat), pathname Unix sockets, UDP and listen()
 * on an unbound TCP socket alone.  Every descriptor of FS is closed, also on
 * failure.  0, or -1 with the message in ERR: a descriptor that is not
 * open, a rule the kernel refused, no Landlock at all.
 */
int landlock_confine(const struct landlock_fd_rule *fs, size_t n, const unsigned short *ports,
		     size_t n_ports, bool net_any, char *err, size_t errlen);

#endif
