/*
 * nons.c - run a command as if on a host where no namespace can be made.
 *
 *   nons [--quiet] -- COMMAND [ARG...]
 *
 * Coding agents often run where bubblewrap cannot create its namespaces:
 * inside Docker or Podman containers under their default seccomp profiles
 * (and the CI runners built on them), on Ubuntu 24.04 and later where
 * AppArmor's kernel.apparmor_restrict_unprivileged_userns refuses
 * unprivileged user namespaces, on hosts with user.max_user_namespaces=0.
 * This helper reproduces such a host on a machine that allows namespaces,
 * so that the tests can see what omnibox does there: it sets
 * PR_SET_NO_NEW_PRIVS, installs a seccomp filter (libseccomp) and execs
 * COMMAND, which inherits the filter, as do all its descendants (bwrap
 * included: a setuid bwrap gains nothing, no_new_privs forbids it).
 *
 * The filter copies what Docker's default profile (moby's
 * profiles/seccomp/default.json) does for a process without
 * CAP_SYS_ADMIN.  That profile is an allow list whose default is EPERM;
 * the calls below are outside it, or allowed only with some arguments.
 * Here the default is to allow: nons refuses these and nothing else.
 *
 *   unshare (any flags)            EPERM  - Docker allows unshare only with
 *                                          CAP_SYS_ADMIN; without it, even
 *                                          unshare(0) is refused.
 *   setns                          EPERM  - joining another namespace (the
 *                                          same CAP_SYS_ADMIN gate).
 *   mount, umount, umount2         EPERM  - the classic mount API (the same
 *                                          gate; umount exists on i386 and
 *                                          some others, not on x86_64).
 *   pivot_root                     EPERM  - in no allow list of Docker's.
 *   move_mount, open_tree, fsopen, EPERM  - the new mount API (Linux 5.2+,
 *   fsmount, fsconfig, fspick,             5.12 for mount_setattr), which
 *   mount_setattr                          a tool could use instead of
 *                                          mount; gated on CAP_SYS_ADMIN.
 *   clone with any of CLONE_NEWUSER, EPERM - Docker allows clone only when
 *     CLONE_NEWNS, CLONE_NEWPID,            its flags (argument 0, or 1 on
 *     CLONE_NEWNET, CLONE_NEWIPC,           s390 and s390x, whose clone
 *     CLONE_NEWUTS, CLONE_NEWCGROUP,        takes the stack first) carry
 *     CLONE_NEWTIME                         none of the first seven.
 *                                          fork(), vfork-like spawns and
 *                                          pthread_create() pass none.
 *   clone3                         ENOSYS - its flags sit in a struct in
 *                                          memory, which seccomp cannot read;
 *                                          Docker answers ENOSYS so that libc
 *                                          (glibc 2.34+, for posix_spawn and
 *                                          threads) falls back to clone,
 *                                          whose flags it can check.
 *
 * CLONE_NEWTIME is not in Docker's mask: clone() cannot ask for it, as
 * its bit (0x80) lies in CSIGNAL, the child's exit signal, and the kernel
 * takes it only from clone3 and unshare, both refused whole here.  It is
 * in the mask anyway, at no cost: no valid signal number has that bit.
 *
 * Syscalls are named, never numbered: libseccomp resolves each name, and
 * one it does not know (an older libseccomp) is skipped and named on
 * stderr.  Like Docker, the filter also covers the compatibility ABIs the
 * native kernel runs (i386 and x32 on x86_64, arm on aarch64, s390 on
 * s390x), where the same calls have other numbers: libseccomp translates
 * each rule to each of them by name, and leaves a call out of an ABI
 * that lacks it (umount on x86_64).  A process of any other architecture
 * is killed, libseccomp's default for a foreign one.
 *
 * Without --quiet, nons says on stderr which calls it refused, one line.
 * Exits 125 when it cannot install the filter or run COMMAND (127 when
 * COMMAND is not found).
 */
#include <errno.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#ifndef CLONE_NEWCGROUP
#define CLONE_NEWCGROUP 0x02000000
#endif
#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

/* Every flag that makes a new namespace. */
#define NS_FLAGS                                                                                   \
	(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | \
	 CLONE_NEWCGROUP | CLONE_NEWTIME)

/* Refused outright with EPERM, whatever their arguments. */
static const char *const refused[] = {
    "unshare",	 "setns",  "mount",   "umount",	  "umount2", "pivot_root",    "move_mount",
    "open_tree", "fsopen", "fsmount", "fsconfig", "fspick",  "mount_setattr",
};

static void
usage(void)
{
	fputs("usage: nons [--quiet] -- COMMAND [ARG...]\n"
	      "runs COMMAND under a seccomp filter that refuses every way to make or\n"
	      "enter a namespace and every mount call, as Docker's default profile does\n",
	      stderr);
	exit(125);
}

/* Which argument of clone holds the flags: the stack comes first on s390(x). */
static unsigned
clone_flags_arg(void)
{
	uint32_t arch = seccomp_arch_native();

	return arch == SCMP_ARCH_S390 || arch == SCMP_ARCH_S390X ? 1 : 0;
}

/*
 * Adds to CTX the compatibility ABIs that the native architecture's kernel
 * also runs, as Docker's archMap does; one this libseccomp lacks is left out.
 */
static void
add_compat_arches(scmp_filter_ctx ctx)
{
	uint32_t native = seccomp_arch_native();

	if (native == SCMP_ARCH_X86_64) {
		seccomp_arch_add(ctx, SCMP_ARCH_X86);
		seccomp_arch_add(ctx, SCMP_ARCH_X32);
	} else if (native == SCMP_ARCH_AARCH64)
		seccomp_arch_add(ctx, SCMP_ARCH_ARM);
	else if (native == SCMP_ARCH_S390X)
		seccomp_arch_add(ctx, SCMP_ARCH_S390);
}

/* Appends NAME to the summary line in LINE (size LEN). */
static void
note(char *line, size_t len, const char *name)
{
	size_t used = strlen(line);

	snprintf(line + used, len - used, "%s%s", used ? " " : "", name);
}

int
main(int argc, char **argv)
{
	int quiet = 0, i = 1, rc;
	scmp_filter_ctx ctx;
	char line[512] = "", skipped[512] = "";
	int nr;

	for (; i < argc; i++) {
		if (!strcmp(argv[i], "--quiet") || !strcmp(argv[i], "-q"))
			quiet = 1;
		else if (!strcmp(argv[i], "--")) {
			i++;
			break;
		} else
			usage();
	}
	if (i >= argc)
		usage();

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		fprintf(stderr, "nons: PR_SET_NO_NEW_PRIVS: %s\n", strerror(errno));
		return 125;
	}
	ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx) {
		fputs("nons: seccomp_init failed\n", stderr);
		return 125;
	}
	add_compat_arches(ctx);
	for (size_t k = 0; k < sizeof(refused) / sizeof(*refused); k++) {
		nr = seccomp_syscall_resolve_name(refused[k]);
		if (nr == __NR_SCMP_ERROR) {
			note(skipped, sizeof(skipped), refused[k]);
			continue;
		}
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0);
		if (rc < 0) {
			fprintf(stderr, "nons: %s: %s\n", refused[k], strerror(-rc));
			return 125;
		}
		note(line, sizeof(line), refused[k]);
	}
	/*
	 * clone: one rule a flag, (flags & FLAG) == FLAG, since a masked
	 * comparison cannot say "any of these bits"; rules of one action on one
	 * call are alternatives, so any flag among them refuses the call.
	 */
	nr = seccomp_syscall_resolve_name("clone");
	if (nr == __NR_SCMP_ERROR)
		note(skipped, sizeof(skipped), "clone");
	else {
		for (unsigned bit = 0; bit < 64; bit++) {
			scmp_datum_t flag = (scmp_datum_t)1 << bit;

			if (!(flag & NS_FLAGS))
				continue;
			rc = seccomp_rule_add(
			    ctx, SCMP_ACT_ERRNO(EPERM), nr, 1,
			    SCMP_CMP(clone_flags_arg(), SCMP_CMP_MASKED_EQ, flag, flag));
			if (rc < 0) {
				fprintf(stderr, "nons: clone: %s\n", strerror(-rc));
				return 125;
			}
		}
		note(line, sizeof(line), "clone(CLONE_NEW*)");
	}
	nr = seccomp_syscall_resolve_name("clone3");
	if (nr == __NR_SCMP_ERROR)
		note(skipped, sizeof(skipped), "clone3");
	else {
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), nr, 0);
		if (rc < 0) {
			fprintf(stderr, "nons: clone3: %s\n", strerror(-rc));
			return 125;
		}
		note(line, sizeof(line), "clone3(ENOSYS)");
	}
	rc = seccomp_load(ctx);
	seccomp_release(ctx);
	if (rc < 0) {
		fprintf(stderr, "nons: seccomp_load: %s\n", strerror(-rc));
		return 125;
	}
	if (!quiet) {
		fprintf(stderr, "nons: refusing %s", line);
		if (*skipped)
			fprintf(stderr, "; unknown to this libseccomp, skipped: %s", skipped);
		fputc('\n', stderr);
	}
	execvp(argv[i], argv + i);
	rc = errno;
	fprintf(stderr, "nons: %s: %s\n", argv[i], strerror(rc));
	return rc == ENOENT ? 127 : 125;
}
