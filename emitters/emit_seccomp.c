/*
 * emit_seccomp.c - the seccomp filter (--emit=seccomp, --emit=seccomp-bpf).
 *
 * A deny list on top of a default of ALLOW: the agent keeps every ordinary
 * system call, and loses the ones that change the kernel or the mount and
 * namespace layout bwrap built, reach other processes, or open kernel
 * attack surface an agent has no use for.  The rules are a table, below,
 * which the tests read too; libseccomp turns it into BPF.
 *
 * A refusal is reported (SCMP_ACT_NOTIFY): the kernel holds the call and
 * asks omnibox-run, which counts it and answers EPERM, so the user learns
 * what the agent tried (runtime/launch/notify.h).  Where the kernel cannot
 * report, omnibox-init turns every report into ERRNO(EPERM) before it
 * loads the program (runtime/launch/seccomp_load.h).
 */
#include "seccomp.h"

#include <errno.h>
#include <linux/net.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

/*
 * The order is fixed, whatever machine builds the filter, so the output is
 * the same everywhere.  x32 shares AUDIT_ARCH_X86_64 with x86_64 and is told
 * apart by bit 30 of the syscall number; libseccomp handles that.
 */
/* clang-format off */
const struct seccomp_arch seccomp_arch_table[] = {
	{"x86_64", SCMP_ARCH_X86_64},
	{"x86", SCMP_ARCH_X86},
	{"x32", SCMP_ARCH_X32},
	{"aarch64", SCMP_ARCH_AARCH64},
	{"arm", SCMP_ARCH_ARM},
};
const size_t seccomp_arch_table_len = sizeof(seccomp_arch_table) / sizeof(seccomp_arch_table[0]);

#define DENY(n) {.name = (n), .err = EPERM, .reported = true}
#define DENY_IF(n, a, o, v)                                                                        \
	{.name = (n), .err = EPERM, .reported = true, .checked = true, .arg = (a), .op = (o),      \
	 .value = (v)}
#define DENY_IF_MASKED(n, a, m, v)                                                                 \
	{.name = (n), .err = EPERM, .reported = true, .checked = true, .arg = (a),                 \
	 .op = SCMP_CMP_MASKED_EQ, .mask = (m), .value = (v)}
/* One rule per flag: any one of them set refuses the call, whatever else is set. */
#define DENY_IF_FLAG(n, a, f) DENY_IF_MASKED(n, a, f, f)

/*
 * Names that exist on none of the ABIs of an entry are left out for that
 * ABI.  wait4 must never appear: bwrap's PID-1 reaper runs under the filter.
 */
const struct seccomp_rule seccomp_rule_table[] = {
	/* kernel modules */
	DENY("init_module"), DENY("finit_module"), DENY("delete_module"), DENY("create_module"),
	DENY("query_module"), DENY("get_kernel_syms"),

	/* mounts and roots: the layout bwrap built is the sandbox */
	DENY("mount"), DENY("umount"), DENY("umount2"), DENY("pivot_root"), DENY("chroot"),
	DENY("open_tree"), DENY("move_mount"), DENY("fsopen"), DENY("fsconfig"), DENY("fsmount"),
	DENY("fspick"), DENY("mount_setattr"),

	/* open_by_handle_at opens any inode by handle, outside the bind mounts */
	DENY("open_by_handle_at"), DENY("nfsservctl"), DENY("sysfs"), DENY("_sysctl"),
	DENY("ustat"), DENY("uselib"), DENY("quotactl"), DENY("quotactl_fd"),

	/* namespaces: a new user namespace grants every capability inside it */
	DENY("unshare"), DENY("setns"),

	/* introspection and kernel attack surface */
	DENY("bpf"), DENY("perf_event_open"), DENY("userfaultfd"), DENY("kcmp"),
	DENY("lookup_dcookie"), DENY("fanotify_init"),

	/* clocks */
	DENY("clock_settime"), DENY("clock_settime64"), DENY("settimeofday"), DENY("stime"),

	/* power and the kernel */
	DENY("reboot"), DENY("kexec_load"), DENY("kexec_file_load"), DENY("syslog"),
	DENY("swapon"), DENY("swapoff"), DENY("acct"),

	/* NUMA placement */
	DENY("mbind"), DENY("migrate_pages"), DENY("move_pages"), DENY("set_mempolicy"),
	DENY("get_mempolicy"), DENY("set_mempolicy_home_node"),

	/* port I/O; vm86 and vm86old exist on x86 only */
	DENY("ioperm"), DENY("iopl"), DENY("vm86"), DENY("vm86old"),

	DENY("sethostname"), DENY("setdomainname"), DENY("vhangup"),

	/* other processes */
	DENY("ptrace"), DENY("process_vm_readv"), DENY("process_vm_writev"), DENY("pidfd_getfd"),
	DENY("process_madvise"),

	/* keyrings */
	DENY("add_key"), DENY("request_key"), DENY("keyctl"),

	/* io_uring performs operations (socket creation among them) without their syscalls */
	DENY("io_uring_setup"), DENY("io_uring_enter"), DENY("io_uring_register"),

	/*
	 * clone: no new namespaces.  Tested on the full 64-bit flags.
	 * CLONE_NEWTIME is not among them: for clone its bit lies in the
	 * exit-signal byte.  flags is argument 0 on all five ABIs.
	 */
	DENY_IF_FLAG("clone", 0, CLONE_NEWNS), DENY_IF_FLAG("clone", 0, CLONE_NEWCGROUP),
	DENY_IF_FLAG("clone", 0, CLONE_NEWUTS), DENY_IF_FLAG("clone", 0, CLONE_NEWIPC),
	DENY_IF_FLAG("clone", 0, CLONE_NEWUSER), DENY_IF_FLAG("clone", 0, CLONE_NEWPID),
	DENY_IF_FLAG("clone", 0, CLONE_NEWNET),

	/*
	 * clone3 passes its flags in memory, where the filter cannot read
	 * them.  ENOSYS, not EPERM, makes libc fall back to clone.  Not
	 * reported: glibc tries clone3 for every new thread, and a count of
	 * those would say nothing about the agent.
	 */
	{.name = "clone3", .err = ENOSYS},

	/*
	 * socket: AF_UNIX, AF_INET and AF_INET6 (1, 2, 10) only; this keeps
	 * out AF_NETLINK, AF_PACKET, AF_VSOCK and the rest.  The kernel reads
	 * the family as a 32-bit int.  On 64-bit ABIs the comparisons below
	 * see all 64 bits, so garbage in the upper half makes the value
	 * greater than AF_INET6 and refused: it can make a call fail, never
	 * let a forbidden family through.  On the 32-bit ABIs only the low
	 * half exists.
	 */
	DENY_IF("socket", 0, SCMP_CMP_EQ, AF_UNSPEC), DENY_IF("socket", 0, SCMP_CMP_EQ, AF_AX25),
	DENY_IF("socket", 0, SCMP_CMP_EQ, AF_IPX), DENY_IF("socket", 0, SCMP_CMP_EQ, AF_APPLETALK),
	DENY_IF("socket", 0, SCMP_CMP_EQ, AF_NETROM), DENY_IF("socket", 0, SCMP_CMP_EQ, AF_BRIDGE),
	DENY_IF("socket", 0, SCMP_CMP_EQ, AF_ATMPVC), DENY_IF("socket", 0, SCMP_CMP_EQ, AF_X25),
	DENY_IF("socket", 0, SCMP_CMP_GT, AF_INET6),

	/*
	 * On x86, socket() can also arrive as socketcall(SYS_SOCKET, args),
	 * whose arguments live in user memory: a filter sees only the
	 * pointer, never the family, so allowing any of it would let
	 * AF_NETLINK through.  Every socketcall(SYS_SOCKET) is refused; a
	 * 32-bit program must create sockets with the direct socket syscall
	 * (Linux 4.3+), checked above, and one whose libc still uses
	 * socketcall gets EPERM.  The other socketcall operations work on
	 * sockets that already exist and stay allowed.  (libseccomp derives
	 * this rule from the socket rules on x86 by itself; it is written
	 * out so the filter does not depend on that.)
	 */
	DENY_IF("socketcall", 0, SCMP_CMP_EQ, SYS_SOCKET),

	/*
	 * ioctl: TIOCSTI pushes input into a terminal (the agent could type
	 * commands into its parent's shell), TIOCLINUX can too on a VT.  The
	 * kernel takes the request as unsigned int, so only the low 32 bits
	 * are compared: upper bits cannot slip a request past the filter.
	 */
	DENY_IF_MASKED("ioctl", 1, 0xffffffffu, TIOCSTI),
	DENY_IF_MASKED("ioctl", 1, 0xffffffffu, TIOCLINUX),
};
/* clang-format on */
const size_t seccomp_rule_table_len = sizeof(seccomp_rule_table) / sizeof(seccomp_rule_table[0]);

/*
 * Does NAME reach the kernel on ARCH?  libseccomp answers with a negative
 * "pseudo" number both when the ABI lacks the call and, on x86, for the
 * socket and IPC calls that also travel multiplexed through socketcall(2)
 * and ipc(2).  Its x86 backend turns a rule on one of those into rules on
 * both forms, so those must be added.
 */
static bool
syscall_on_arch(uint32_t arch, const char *name)
{
	int nr = seccomp_syscall_resolve_name_arch(arch, name);

	if (nr >= 0)
		return true;
	return (nr <= __PNR_socket && nr >= __PNR_sendmmsg) ||
	       (nr <= __PNR_semop && nr >= __PNR_shmctl);
}

/* REPORT: the rules that are reported notify; else every rule fails with its errno. */
static int
rule_add(scmp_filter_ctx ctx, const struct seccomp_rule *r, bool report)
{
	struct scmp_arg_cmp cmp = {.arg = r->arg, .op = r->op};
	uint32_t action = report && r->reported ? SCMP_ACT_NOTIFY : SCMP_ACT_ERRNO((uint32_t)r->err);

	if (r->op == SCMP_CMP_MASKED_EQ) {
		cmp.datum_a = r->mask;
		cmp.datum_b = r->value;
	} else {
		cmp.datum_a = r->value;
	}
	/*
	 * The number is the build machine's (or a pseudo number); libseccomp
	 * maps it to the context's ABI by name.
	 */
	return seccomp_rule_add_array(ctx, action, seccomp_syscall_resolve_name(r->name),
				      r->checked ? 1 : 0, &cmp);
}

/*
 * The filter for one ABI, or NULL with a message in ERR.  Why one context
 * per ABI: libseccomp adds a rule to every ABI of a context, and where an
 * ABI lacks the call it keeps an entry under a pseudo number which, though
 * left out of the BPF, shows in the PFC text ("stime" in the x86_64
 * section).  A context per ABI, holding only the calls that ABI has, keeps
 * the text true to the program.
 */
static scmp_filter_ctx
filter_for_arch(const struct seccomp_arch *a, bool binary_tree, bool report, char *err,
		size_t errlen)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	int rc;

	if (!ctx) {
		snprintf(err, errlen, "seccomp_init failed");
		return NULL;
	}
	/* seccomp_init added the build machine's ABI, which must not matter. */
	rc = seccomp_arch_remove(ctx, SCMP_ARCH_NATIVE);
	if (!rc)
		rc = seccomp_arch_add(ctx, a->token);
	if (!rc)
		rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
	if (!rc)
		rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, binary_tree ? 2 : 1);
	if (rc) {
		snprintf(err, errlen, "setting up the %s filter: %s", a->name, strerror(-rc));
		seccomp_release(ctx);
		return NULL;
	}
	for (size_t i = 0; i < seccomp_rule_table_len; i++) {
		const struct seccomp_rule *r = &seccomp_rule_table[i];

		if (!syscall_on_arch(a->token, r->name))
			continue;
		rc = rule_add(ctx, r, report);
		if (rc) {
			snprintf(err, errlen, "adding the rule for %s on %s: %s", r->name, a->name,
				 strerror(-rc));
			seccomp_release(ctx);
			return NULL;
		}
	}
	return ctx;
}

/* libseccomp exports to a file descriptor only; a memfd keeps it off the disk. */
static int
export_filter(scmp_filter_ctx ctx, bool pfc, struct textbuf *out, char *err, size_t errlen)
{
	int fd = memfd_create("omnibox-seccomp", MFD_CLOEXEC);
	char buf[4096];
	ssize_t n;
	int rc;

	if (fd < 0) {
		snprintf(err, errlen, "memfd_create: %s", strerror(errno));
		return -1;
	}
	rc = pfc ? seccomp_export_pfc(ctx, fd) : seccomp_export_bpf(ctx, fd);
	if (rc) {
		snprintf(err, errlen, "exporting the filter: %s", strerror(-rc));
		close(fd);
		return -1;
	}
	if (lseek(fd, 0, SEEK_SET) < 0) {
		snprintf(err, errlen, "lseek on the memfd: %s", strerror(errno));
		close(fd);
		return -1;
	}
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			snprintf(err, errlen, "reading the memfd: %s", strerror(errno));
			close(fd);
			return -1;
		}
		tb_write(out, buf, (size_t)n);
	}
	close(fd);
	return 0;
}

int
seccomp_generate_as(bool binary_tree, bool pfc, bool report, struct textbuf *out, char *err,
		    size_t errlen)
{
	scmp_filter_ctx ctx = NULL;
	int rc;

	for (size_t i = 0; i < seccomp_arch_table_len; i++) {
		const struct seccomp_arch *a = &seccomp_arch_table[i];
		scmp_filter_ctx one = filter_for_arch(a, binary_tree, report, err, errlen);

		if (!one)
			goto fail;
		if (!ctx) {
			ctx = one;
			continue;
		}
		/* Appends ONE's ABI after those already there, and releases ONE. */
		rc = seccomp_merge(ctx, one);
		if (rc) {
			snprintf(err, errlen, "merging the %s filter: %s", a->name, strerror(-rc));
			seccomp_release(one);
			goto fail;
		}
	}
	rc = export_filter(ctx, pfc, out, err, errlen);
	seccomp_release(ctx);
	return rc;
fail:
	if (ctx)
		seccomp_release(ctx);
	return -1;
}

int
seccomp_generate(bool binary_tree, bool pfc, struct textbuf *out, char *err, size_t errlen)
{
	return seccomp_generate_as(binary_tree, pfc, true, out, err, errlen);
}

int
emit_seccomp(const struct policy *p, enum target t, struct diag *d, struct textbuf *out)
{
	const struct scmp_version *v = seccomp_version();
	char err[256];

	(void)p;
	(void)t;
	tb_puts(out, "# seccomp filter, loaded by omnibox-init (--seccomp-fd) before the agent's "
		     "first instruction.\n"
		     "# The same for every policy: nothing in the policy changes it.\n"
		     "# ABIs, tested in this order:");
	for (size_t i = 0; i < seccomp_arch_table_len; i++)
		tb_printf(out, " %s", seccomp_arch_table[i].name);
	tb_printf(out,
		  "; any other: KILL_PROCESS.\n"
		  "# Default action ALLOW.  NOTIFY (SECCOMP_RET_USER_NOTIF, 0x%08x): the "
		  "refusal is reported\n"
		  "# to omnibox-run, which counts it and answers EPERM (where the kernel cannot "
		  "report,\n"
		  "# omnibox-init loads ERRNO(%d), EPERM, in its place).  ERRNO(%d) is ENOSYS, "
		  "for clone3,\n"
		  "# so that libc falls back to clone, whose flags the filter can check; it is "
		  "not reported.\n"
		  "# Built by libseccomp %u.%u.%u with binary-tree search; the rules are in "
		  "emitters/emit_seccomp.c.\n",
		  SCMP_ACT_NOTIFY, EPERM, ENOSYS, v->major, v->minor, v->micro);
	if (seccomp_generate(true, true, out, err, sizeof(err)) < 0) {
		diag_error(d, (struct loc){0, 0, 0}, "cannot build the seccomp filter: %s", err);
		return -1;
	}
	return 0;
}

int
emit_seccomp_bpf(const struct policy *p, enum target t, struct diag *d, struct textbuf *out)
{
	char err[256];

	(void)p;
	(void)t;
	if (seccomp_generate(true, false, out, err, sizeof(err)) < 0) {
		diag_error(d, (struct loc){0, 0, 0}, "cannot build the seccomp filter: %s", err);
		return -1;
	}
	return 0;
}
