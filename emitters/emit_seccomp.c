/*
 * emit_seccomp.c - the seccomp filter (--emit=seccomp, --emit=seccomp-bpf), and
 * the linux_landlock backend's variant of it (--emit=seccomp-landlock,
 * --emit=seccomp-landlock-bpf; seccomp_landlock_rule_table).
 *
 * A deny list on top of a default of ALLOW: the agent keeps every ordinary
 * system call, and loses the ones that change the kernel or the mount and
 * namespace layout bwrap built, reach other processes, or open kernel
 * attack surface an agent has no use for.  The rules are a table, below,
 * which the tests read too; libseccomp turns it into BPF.
 *
 * libseccomp names calls only up to its own release, and on an ABI other
 * than the build machine's it takes no rule for a number it cannot name.
 * So a gate of ours runs first: it refuses the calls the table gives by
 * number, and every number above the highest one the tables know on that
 * ABI, so that a call newer than this table is refused until someone
 * classifies it (docs/linux.md); everything else goes on to libseccomp's
 * program.
 *
 * The program emitted is the standalone filter: a refusal returns
 * ERRNO(EPERM) (clone3's ENOSYS), whoever loads it (bwrap --seccomp, a
 * container runtime, omnibox-init).  omnibox-init derives from it, at load
 * time, the variant that reports each EPERM refusal (SCMP_ACT_NOTIFY): the
 * kernel holds the call and asks omnibox-run, which counts it and answers
 * EPERM, so the user learns what the agent tried (runtime/launch/notify.h,
 * runtime/launch/seccomp_load.h).  A rule's errno is therefore EPERM
 * exactly when it is reported.
 */
#include "seccomp.h"

#include <errno.h>
#include <linux/filter.h>
#include <linux/mempolicy.h>
#include <linux/netlink.h>
#include <linux/net.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
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
/* A call libseccomp cannot name: NR on every ABI (x32: NR | 0x40000000). */
#define DENY_NR(n, k) {.name = (n), .err = EPERM, .reported = true, .nr = (k)}
#define DENY_IF(n, a, o, v)                                                                        \
	{.name = (n), .err = EPERM, .reported = true, .ncmp = 1,                                   \
	 .cmp = {{.arg = (a), .op = (o), .value = (v)}}}
/* Both comparisons must hold; each on another argument. */
#define DENY_IF2(n, a, o, v, a2, o2, v2)                                                           \
	{.name = (n), .err = EPERM, .reported = true, .ncmp = 2,                                   \
	 .cmp = {{.arg = (a), .op = (o), .value = (v)}, {.arg = (a2), .op = (o2), .value = (v2)}}}
#define DENY_IF_MASKED(n, a, m, v)                                                                 \
	{.name = (n), .err = EPERM, .reported = true, .ncmp = 1,                                   \
	 .cmp = {{.arg = (a), .op = SCMP_CMP_MASKED_EQ, .mask = (m), .value = (v)}}}
/* One rule per flag: any one of them set refuses the call, whatever else is set. */
#define DENY_IF_FLAG(n, a, f) DENY_IF_MASKED(n, a, f, f)
/* The landlock variant's rules without the host's network (`closed`). */
#define CLOSED_IF(n, a, o, v)                                                                      \
	{.name = (n), .err = EPERM, .reported = true, .ncmp = 1, .closed = true,                   \
	 .cmp = {{.arg = (a), .op = (o), .value = (v)}}}
#define CLOSED_IF_FLAG(n, a, f)                                                                    \
	{.name = (n), .err = EPERM, .reported = true, .ncmp = 1, .closed = true,                   \
	 .cmp = {{.arg = (a), .op = SCMP_CMP_MASKED_EQ, .mask = (f), .value = (f)}}}

/*
 * Names that exist on none of the ABIs of an entry are left out for that
 * ABI.  wait4 must never appear: bwrap's PID-1 reaper runs under the filter.
 */
const struct seccomp_rule seccomp_rule_table[] = {
	/* kernel modules */
	DENY("init_module"), DENY("finit_module"), DENY("delete_module"), DENY("create_module"),
	DENY("query_module"), DENY("get_kernel_syms"),

	/*
	 * mounts and roots: the layout bwrap built is the sandbox.  The whole
	 * family, old and new, the calls that read the mount tree with it:
	 * statmount and listmount (6.8) and open_tree_attr (6.15, open_tree
	 * with mount attributes) come after what libseccomp 2.5.4 can name.
	 */
	DENY("mount"), DENY("umount"), DENY("umount2"), DENY("pivot_root"), DENY("chroot"),
	DENY("open_tree"), DENY("move_mount"), DENY("fsopen"), DENY("fsconfig"), DENY("fsmount"),
	DENY("fspick"), DENY("mount_setattr"), DENY_NR("statmount", 457),
	DENY_NR("listmount", 458), DENY_NR("open_tree_attr", 467),

	/* open_by_handle_at opens any inode by handle, outside the bind mounts */
	DENY("open_by_handle_at"), DENY("nfsservctl"), DENY("sysfs"), DENY("_sysctl"),
	DENY("ustat"), DENY("uselib"), DENY("quotactl"), DENY("quotactl_fd"),

	/*
	 * namespaces: a new user namespace grants every capability inside it.
	 * clone's namespace flags are checked below; clone3 fails with ENOSYS.
	 */
	DENY("unshare"), DENY("setns"),

	/* introspection and kernel attack surface */
	DENY("bpf"), DENY("perf_event_open"), DENY("userfaultfd"), DENY("kcmp"),
	DENY("lookup_dcookie"), DENY("fanotify_init"),

	/* clocks */
	DENY("clock_settime"), DENY("clock_settime64"), DENY("settimeofday"), DENY("stime"),

	/* power and the kernel */
	DENY("reboot"), DENY("kexec_load"), DENY("kexec_file_load"), DENY("syslog"),
	DENY("swapon"), DENY("swapoff"), DENY("acct"),

	/*
	 * NUMA placement.  get_mempolicy is allowed: it reads the policy of
	 * the caller (or of a page of its own memory) and the nodes its cpuset
	 * allows, what /proc/self/status and numa_maps show; ps, glibc's
	 * malloc and libnuma ask it.  Changing placement stays refused.
	 */
	DENY("mbind"), DENY("migrate_pages"), DENY("move_pages"), DENY("set_mempolicy"),
	DENY("set_mempolicy_home_node"),

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
	 * socket: AF_UNIX, AF_INET and AF_INET6 (1, 2, 10), and AF_NETLINK
	 * (16) with NETLINK_ROUTE (0) only; this keeps out every other netlink
	 * protocol (audit, sock_diag, generic, netfilter, uevents, ...),
	 * AF_PACKET, AF_VSOCK and the rest.  The kernel reads family and
	 * protocol as 32-bit ints.  On 64-bit ABIs the comparisons below see
	 * all 64 bits, so garbage in the upper half makes the family greater
	 * than AF_NETLINK, or the protocol other than NETLINK_ROUTE, and the
	 * call refused: it can make a call fail, never let a forbidden family
	 * or protocol through.  On the 32-bit ABIs only the low half exists.
	 * libseccomp 2.5 takes no two comparisons of one argument in a rule,
	 * so the families between AF_INET6 and AF_NETLINK are listed one by
	 * one.
	 *
	 * Why NETLINK_ROUTE: getifaddrs(3) and if_nameindex(3) read the
	 * interfaces over it (libuv's, and so Node's os.networkInterfaces(),
	 * which dev servers call at start; Python's socket.if_nameindex(),
	 * `ip addr`).  What it reads, interfaces, addresses, routes and
	 * neighbours, is what /proc/net and ioctl(SIOCGIFCONF) on an
	 * AF_INET socket already show.  Every request that changes something
	 * (RTM_NEW*, RTM_DEL*, RTM_SET*) needs CAP_NET_ADMIN over the network
	 * namespace, held both by the socket's opener and by the sender;
	 * bwrap drops every capability (--cap-drop ALL), no_new_privs keeps
	 * exec from granting one, and the namespace calls that could grant
	 * one in a new user namespace are refused above: those requests fail
	 * with EPERM.
	 */
	DENY_IF("socket", 0, SCMP_CMP_EQ, AF_UNSPEC), DENY_IF("socket", 0, SCMP_CMP_EQ, AF_AX25),
	DENY_IF("socket", 0, SCMP_CMP_EQ, AF_IPX), DENY_IF("socket", 0, SCMP_CMP_EQ, AF_APPLETALK),
	DENY_IF("socket", 0, SCMP_CMP_EQ, AF_NETROM), DENY_IF("socket", 0, SCMP_CMP_EQ, AF_BRIDGE),
	DENY_IF("socket", 0, SCMP_CMP_EQ, AF_ATMPVC), DENY_IF("socket", 0, SCMP_CMP_EQ, AF_X25),
	DENY_IF("socket", 0, SCMP_CMP_EQ, AF_ROSE), DENY_IF("socket", 0, SCMP_CMP_EQ, AF_DECnet),
	DENY_IF("socket", 0, SCMP_CMP_EQ, AF_NETBEUI), DENY_IF("socket", 0, SCMP_CMP_EQ, AF_SECURITY),
	DENY_IF("socket", 0, SCMP_CMP_EQ, AF_KEY), DENY_IF("socket", 0, SCMP_CMP_GT, AF_NETLINK),
	DENY_IF2("socket", 0, SCMP_CMP_EQ, AF_NETLINK, 2, SCMP_CMP_NE, NETLINK_ROUTE),

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

/*
 * The linux_landlock backend's variant: the rules above, and these, for
 * what the network namespace did there.  That backend makes no namespace;
 * Landlock (ABI 6 and up) confines the filesystem, TCP bind and connect,
 * signals and abstract Unix sockets, and leaves open, on the host's own
 * network: connecting a pathname Unix socket (a daemon's: docker.sock,
 * D-Bus, an ssh agent), UDP and every other non-TCP protocol, listen() on
 * a socket never bound (the kernel picks the port, no bind hook runs), and
 * TCP Fast Open, which connects from sendto/sendmsg without the connect
 * hook.  A call these rules name is decided by them alone: the base rules
 * for it are left out of the variant (seccomp_landlock_replaces), so each
 * rule set stays whole where it is read.  None has a number: the gate is
 * the base filter's, unchanged.
 */
const struct seccomp_rule seccomp_landlock_rule_table[] = {
	/*
	 * socket: AF_INET and AF_INET6 (2, 10) only; AF_UNIX and AF_NETLINK
	 * go too.  On 64-bit ABIs garbage above the family makes it greater
	 * than AF_INET6, refused (closed, as in the base rules).
	 */
	DENY_IF("socket", 0, SCMP_CMP_EQ, AF_UNSPEC), DENY_IF("socket", 0, SCMP_CMP_EQ, AF_UNIX),
	DENY_IF("socket", 0, SCMP_CMP_EQ, AF_AX25), DENY_IF("socket", 0, SCMP_CMP_EQ, AF_IPX),
	DENY_IF("socket", 0, SCMP_CMP_EQ, AF_APPLETALK), DENY_IF("socket", 0, SCMP_CMP_EQ, AF_NETROM),
	DENY_IF("socket", 0, SCMP_CMP_EQ, AF_BRIDGE), DENY_IF("socket", 0, SCMP_CMP_EQ, AF_ATMPVC),
	DENY_IF("socket", 0, SCMP_CMP_EQ, AF_X25), DENY_IF("socket", 0, SCMP_CMP_GT, AF_INET6),
	/*
	 * ... of type SOCK_STREAM only: the kernel takes the type from the low
	 * four bits (SOCK_TYPE_MASK), the flags SOCK_NONBLOCK and SOCK_CLOEXEC
	 * from above them, and refuses any other bit itself.  (type & 0xf) != 1
	 * is one of bits 1-3 set, or none of the four.
	 */
	CLOSED_IF_FLAG("socket", 1, 0x2), CLOSED_IF_FLAG("socket", 1, 0x4),
	CLOSED_IF_FLAG("socket", 1, 0x8),
	{.name = "socket", .err = EPERM, .reported = true, .ncmp = 1, .closed = true,
	 .cmp = {{.arg = 1, .op = SCMP_CMP_MASKED_EQ, .mask = 0xf, .value = 0}}},
	/*
	 * ... and protocol 0 or IPPROTO_TCP: IPPROTO_MPTCP (262) and
	 * IPPROTO_SCTP (132) make streams Landlock's TCP rules do not see.
	 * GT catches garbage above the protocol on 64-bit ABIs.
	 */
	CLOSED_IF("socket", 2, SCMP_CMP_EQ, 1), CLOSED_IF("socket", 2, SCMP_CMP_EQ, 2),
	CLOSED_IF("socket", 2, SCMP_CMP_EQ, 3), CLOSED_IF("socket", 2, SCMP_CMP_EQ, 4),
	CLOSED_IF("socket", 2, SCMP_CMP_EQ, 5), CLOSED_IF("socket", 2, SCMP_CMP_GT, IPPROTO_TCP),

	/* socketpair: a connected AF_UNIX pair reaches nothing outside; other families no. */
	DENY_IF("socketpair", 0, SCMP_CMP_NE, AF_UNIX),

	/*
	 * x86's socketcall carries every socket call with its arguments in
	 * memory, out of the filter's sight: none of the checks above could
	 * hold there, so all of it is refused.  (The base filter refuses only
	 * SYS_SOCKET, which already leaves a socketcall-only libc without
	 * sockets.)
	 */
	DENY("socketcall"),

	/* listen: on a socket never bound the kernel binds a port of its choosing, unhooked. */
	{.name = "listen", .err = EPERM, .reported = true, .closed = true},

	/*
	 * TCP Fast Open: MSG_FASTOPEN connects from the send, past the connect
	 * hook; TCP_FASTOPEN_CONNECT defers the connect to the first write.
	 * The flags are an unsigned int to the kernel, level and optname ints:
	 * the comparisons take the low 32 bits, so upper bits change nothing.
	 * send exists on arm alone (elsewhere it is sendto or socketcall).
	 */
	CLOSED_IF_FLAG("sendto", 3, MSG_FASTOPEN), CLOSED_IF_FLAG("sendmsg", 2, MSG_FASTOPEN),
	CLOSED_IF_FLAG("sendmmsg", 3, MSG_FASTOPEN), CLOSED_IF_FLAG("send", 3, MSG_FASTOPEN),
	{.name = "setsockopt", .err = EPERM, .reported = true, .ncmp = 2, .closed = true,
	 .cmp = {{.arg = 1, .op = SCMP_CMP_MASKED_EQ, .mask = 0xffffffffu, .value = IPPROTO_TCP},
		 {.arg = 2, .op = SCMP_CMP_MASKED_EQ, .mask = 0xffffffffu,
		  .value = TCP_FASTOPEN_CONNECT}}},

	/*
	 * Without a PID namespace the agent names the host's processes, and
	 * Landlock's scopes (signals) and ptrace restriction leave these to
	 * the user's permissions: another process's limits (prlimit64 setting
	 * them on a pid but 0), its niceness (setpriority of a process but
	 * this one, of a process group, of the user's every process), its
	 * scheduling (sched_set* on a pid but 0) and its I/O priority
	 * (ioprio_set likewise).  On the process itself they stay.
	 */
	DENY_IF2("prlimit64", 0, SCMP_CMP_NE, 0, 2, SCMP_CMP_NE, 0),
	DENY_IF("setpriority", 0, SCMP_CMP_NE, PRIO_PROCESS),
	DENY_IF2("setpriority", 0, SCMP_CMP_EQ, PRIO_PROCESS, 1, SCMP_CMP_NE, 0),
	DENY_IF("sched_setaffinity", 0, SCMP_CMP_NE, 0), DENY_IF("sched_setattr", 0, SCMP_CMP_NE, 0),
	DENY_IF("sched_setparam", 0, SCMP_CMP_NE, 0), DENY_IF("sched_setscheduler", 0, SCMP_CMP_NE, 0),
	DENY_IF("ioprio_set", 0, SCMP_CMP_NE, 1 /* IOPRIO_WHO_PROCESS */),
	DENY_IF2("ioprio_set", 0, SCMP_CMP_EQ, 1, 1, SCMP_CMP_NE, 0),

	/*
	 * Metadata, which Landlock does not see: any file the user's
	 * permissions allow, by path or by a descriptor opened only to read it
	 * (or O_PATH, which Landlock does not check at all).  Every change of
	 * mode, owner, times or extended attributes is refused.  With
	 * omnibox-run to answer, it does chmod, fchmod and utimensat itself
	 * where the rules let the sandbox write (runtime/launch/metadata.h).
	 * The *xattrat calls and file_setattr are newer than libseccomp: by
	 * number, in the gate.
	 */
	DENY("chmod"), DENY("fchmod"), DENY("fchmodat"), DENY("fchmodat2"), DENY("utimensat"),
	DENY("utimensat_time64"), DENY("utime"), DENY("utimes"), DENY("futimesat"),
	DENY("chown"), DENY("chown32"), DENY("lchown"), DENY("lchown32"), DENY("fchown"),
	DENY("fchown32"), DENY("fchownat"), DENY("setxattr"), DENY("lsetxattr"),
	DENY("fsetxattr"), DENY("removexattr"), DENY("lremovexattr"), DENY("fremovexattr"),
	DENY_NR("setxattrat", 463), DENY_NR("removexattrat", 466), DENY_NR("file_setattr", 469),
};
const size_t seccomp_landlock_rule_table_len =
    sizeof(seccomp_landlock_rule_table) / sizeof(seccomp_landlock_rule_table[0]);

/*
 * Every other call the five ABIs have, each named once: what the filter
 * lets through, on purpose.  Nothing here becomes a rule (the default
 * allows them); the table exists so that a call no one looked at shows:
 * the tests name every call libseccomp or this machine's kernel knows that
 * is in neither table.  The rule for a new call: refused if it belongs to
 * a refused family (mounts, namespaces, modules, other processes, ...),
 * else allowed here.  Calls some kernels lack or no longer implement stay
 * allowed: the kernel answers ENOSYS.  Entry points only another
 * architecture's table uses (gethostname, sync_file_range2) and the
 * x86_64 uprobe trampolines' calls (uretprobe 335, uprobe 336: the kernel
 * refuses them from anywhere else) are named for the same reason.
 */
#define ALLOW(n) {.name = (n)}
#define ALLOW_NR(n, k) {.name = (n), .nr = (k)}
const struct seccomp_allowed seccomp_allowed_table[] = {
	ALLOW("_llseek"), ALLOW("_newselect"), ALLOW("accept"), ALLOW("accept4"), ALLOW("access"),
	ALLOW("adjtimex"), ALLOW("afs_syscall"), ALLOW("alarm"), ALLOW("arch_prctl"),
	ALLOW("arm_fadvise64_64"), ALLOW("arm_sync_file_range"), ALLOW("bdflush"), ALLOW("bind"),
	ALLOW("break"), ALLOW("breakpoint"), ALLOW("brk"), ALLOW("cacheflush"), ALLOW("cachestat"),
	ALLOW("capget"), ALLOW("capset"), ALLOW("chdir"), ALLOW("chmod"), ALLOW("chown"),
	ALLOW("chown32"), ALLOW("clock_adjtime"), ALLOW("clock_adjtime64"), ALLOW("clock_getres"),
	ALLOW("clock_getres_time64"), ALLOW("clock_gettime"), ALLOW("clock_gettime64"),
	ALLOW("clock_nanosleep"), ALLOW("clock_nanosleep_time64"), ALLOW("close"),
	ALLOW("close_range"), ALLOW("connect"), ALLOW("copy_file_range"), ALLOW("creat"),
	ALLOW("dup"), ALLOW("dup2"), ALLOW("dup3"), ALLOW("epoll_create"), ALLOW("epoll_create1"),
	ALLOW("epoll_ctl"), ALLOW("epoll_ctl_old"), ALLOW("epoll_pwait"), ALLOW("epoll_pwait2"),
	ALLOW("epoll_wait"), ALLOW("epoll_wait_old"), ALLOW("eventfd"), ALLOW("eventfd2"),
	ALLOW("execve"), ALLOW("execveat"), ALLOW("exit"), ALLOW("exit_group"), ALLOW("faccessat"),
	ALLOW("faccessat2"), ALLOW("fadvise64"), ALLOW("fadvise64_64"), ALLOW("fallocate"),
	ALLOW("fanotify_mark"), ALLOW("fchdir"), ALLOW("fchmod"), ALLOW("fchmodat"),
	ALLOW("fchmodat2"), ALLOW("fchown"), ALLOW("fchown32"), ALLOW("fchownat"), ALLOW("fcntl"),
	ALLOW("fcntl64"), ALLOW("fdatasync"), ALLOW("fgetxattr"), ALLOW("flistxattr"),
	ALLOW("flock"), ALLOW("fork"), ALLOW("fremovexattr"), ALLOW("fsetxattr"), ALLOW("fstat"),
	ALLOW("fstat64"), ALLOW("fstatat64"), ALLOW("fstatfs"), ALLOW("fstatfs64"), ALLOW("fsync"),
	ALLOW("ftime"), ALLOW("ftruncate"), ALLOW("ftruncate64"), ALLOW("futex"),
	ALLOW("futex_requeue"), ALLOW("futex_time64"), ALLOW("futex_wait"), ALLOW("futex_waitv"),
	ALLOW("futex_wake"), ALLOW("futimesat"), ALLOW("get_mempolicy"), ALLOW("get_robust_list"),
	ALLOW("get_thread_area"), ALLOW("get_tls"), ALLOW("getcpu"), ALLOW("getcwd"),
	ALLOW("getdents"), ALLOW("getdents64"),
	ALLOW("getegid"), ALLOW("getegid32"), ALLOW("geteuid"), ALLOW("geteuid32"), ALLOW("getgid"),
	ALLOW("getgid32"), ALLOW("getgroups"), ALLOW("getgroups32"), ALLOW("gethostname"),
	ALLOW("getitimer"), ALLOW("getpeername"), ALLOW("getpgid"), ALLOW("getpgrp"),
	ALLOW("getpid"), ALLOW("getpmsg"), ALLOW("getppid"), ALLOW("getpriority"),
	ALLOW("getrandom"), ALLOW("getresgid"), ALLOW("getresgid32"), ALLOW("getresuid"),
	ALLOW("getresuid32"), ALLOW("getrlimit"), ALLOW("getrusage"), ALLOW("getsid"),
	ALLOW("getsockname"), ALLOW("getsockopt"), ALLOW("gettid"), ALLOW("gettimeofday"),
	ALLOW("getuid"), ALLOW("getuid32"), ALLOW("getxattr"), ALLOW("gtty"), ALLOW("idle"),
	ALLOW("inotify_add_watch"), ALLOW("inotify_init"), ALLOW("inotify_init1"),
	ALLOW("inotify_rm_watch"), ALLOW("io_cancel"), ALLOW("io_destroy"), ALLOW("io_getevents"),
	ALLOW("io_pgetevents"), ALLOW("io_pgetevents_time64"), ALLOW("io_setup"),
	ALLOW("io_submit"), ALLOW("ioprio_get"), ALLOW("ioprio_set"), ALLOW("ipc"), ALLOW("kill"),
	ALLOW("landlock_add_rule"), ALLOW("landlock_create_ruleset"),
	ALLOW("landlock_restrict_self"), ALLOW("lchown"), ALLOW("lchown32"), ALLOW("lgetxattr"),
	ALLOW("link"), ALLOW("linkat"), ALLOW("listen"), ALLOW("listxattr"), ALLOW("llistxattr"),
	ALLOW("lock"), ALLOW("lremovexattr"), ALLOW("lseek"), ALLOW("lsetxattr"), ALLOW("lstat"),
	ALLOW("lstat64"), ALLOW("madvise"), ALLOW("map_shadow_stack"), ALLOW("membarrier"),
	ALLOW("memfd_create"), ALLOW("memfd_secret"), ALLOW("mincore"), ALLOW("mkdir"),
	ALLOW("mkdirat"), ALLOW("mknod"), ALLOW("mknodat"), ALLOW("mlock"), ALLOW("mlock2"),
	ALLOW("mlockall"), ALLOW("mmap"), ALLOW("mmap2"), ALLOW("modify_ldt"), ALLOW("mprotect"),
	ALLOW("mpx"), ALLOW("mq_getsetattr"), ALLOW("mq_notify"), ALLOW("mq_open"),
	ALLOW("mq_timedreceive"), ALLOW("mq_timedreceive_time64"), ALLOW("mq_timedsend"),
	ALLOW("mq_timedsend_time64"), ALLOW("mq_unlink"), ALLOW("mremap"), ALLOW("msgctl"),
	ALLOW("msgget"), ALLOW("msgrcv"), ALLOW("msgsnd"), ALLOW("msync"), ALLOW("munlock"),
	ALLOW("munlockall"), ALLOW("munmap"), ALLOW("name_to_handle_at"), ALLOW("nanosleep"),
	ALLOW("newfstatat"), ALLOW("nice"), ALLOW("oldfstat"), ALLOW("oldlstat"),
	ALLOW("oldolduname"), ALLOW("oldstat"), ALLOW("olduname"), ALLOW("open"), ALLOW("openat"),
	ALLOW("openat2"), ALLOW("pause"), ALLOW("pciconfig_iobase"), ALLOW("pciconfig_read"),
	ALLOW("pciconfig_write"), ALLOW("personality"), ALLOW("pidfd_open"),
	ALLOW("pidfd_send_signal"), ALLOW("pipe"), ALLOW("pipe2"), ALLOW("pkey_alloc"),
	ALLOW("pkey_free"), ALLOW("pkey_mprotect"), ALLOW("poll"), ALLOW("ppoll"),
	ALLOW("ppoll_time64"), ALLOW("prctl"), ALLOW("pread64"), ALLOW("preadv"), ALLOW("preadv2"),
	ALLOW("prlimit64"), ALLOW("process_mrelease"), ALLOW("prof"), ALLOW("profil"),
	ALLOW("pselect6"), ALLOW("pselect6_time64"), ALLOW("putpmsg"), ALLOW("pwrite64"),
	ALLOW("pwritev"), ALLOW("pwritev2"), ALLOW("read"), ALLOW("readahead"), ALLOW("readdir"),
	ALLOW("readlink"), ALLOW("readlinkat"), ALLOW("readv"), ALLOW("recv"), ALLOW("recvfrom"),
	ALLOW("recvmmsg"), ALLOW("recvmmsg_time64"), ALLOW("recvmsg"), ALLOW("remap_file_pages"),
	ALLOW("removexattr"), ALLOW("rename"), ALLOW("renameat"), ALLOW("renameat2"),
	ALLOW("restart_syscall"), ALLOW("rmdir"), ALLOW("rseq"), ALLOW("rt_sigaction"),
	ALLOW("rt_sigpending"), ALLOW("rt_sigprocmask"), ALLOW("rt_sigqueueinfo"),
	ALLOW("rt_sigreturn"), ALLOW("rt_sigsuspend"), ALLOW("rt_sigtimedwait"),
	ALLOW("rt_sigtimedwait_time64"), ALLOW("rt_tgsigqueueinfo"),
	ALLOW("sched_get_priority_max"), ALLOW("sched_get_priority_min"),
	ALLOW("sched_getaffinity"), ALLOW("sched_getattr"), ALLOW("sched_getparam"),
	ALLOW("sched_getscheduler"), ALLOW("sched_rr_get_interval"),
	ALLOW("sched_rr_get_interval_time64"), ALLOW("sched_setaffinity"), ALLOW("sched_setattr"),
	ALLOW("sched_setparam"), ALLOW("sched_setscheduler"), ALLOW("sched_yield"),
	ALLOW("seccomp"), ALLOW("security"), ALLOW("select"), ALLOW("semctl"), ALLOW("semget"),
	ALLOW("semop"), ALLOW("semtimedop"), ALLOW("semtimedop_time64"), ALLOW("send"),
	ALLOW("sendfile"), ALLOW("sendfile64"), ALLOW("sendmmsg"), ALLOW("sendmsg"),
	ALLOW("sendto"), ALLOW("set_robust_list"), ALLOW("set_thread_area"),
	ALLOW("set_tid_address"), ALLOW("set_tls"), ALLOW("setfsgid"), ALLOW("setfsgid32"),
	ALLOW("setfsuid"), ALLOW("setfsuid32"), ALLOW("setgid"), ALLOW("setgid32"),
	ALLOW("setgroups"), ALLOW("setgroups32"), ALLOW("setitimer"), ALLOW("setpgid"),
	ALLOW("setpriority"), ALLOW("setregid"), ALLOW("setregid32"), ALLOW("setresgid"),
	ALLOW("setresgid32"), ALLOW("setresuid"), ALLOW("setresuid32"), ALLOW("setreuid"),
	ALLOW("setreuid32"), ALLOW("setrlimit"), ALLOW("setsid"), ALLOW("setsockopt"),
	ALLOW("setuid"), ALLOW("setuid32"), ALLOW("setxattr"), ALLOW("sgetmask"), ALLOW("shmat"),
	ALLOW("shmctl"), ALLOW("shmdt"), ALLOW("shmget"), ALLOW("shutdown"), ALLOW("sigaction"),
	ALLOW("sigaltstack"), ALLOW("signal"), ALLOW("signalfd"), ALLOW("signalfd4"),
	ALLOW("sigpending"), ALLOW("sigprocmask"), ALLOW("sigreturn"), ALLOW("sigsuspend"),
	ALLOW("socketpair"), ALLOW("splice"), ALLOW("ssetmask"), ALLOW("stat"), ALLOW("stat64"),
	ALLOW("statfs"), ALLOW("statfs64"), ALLOW("statx"), ALLOW("stty"), ALLOW("symlink"),
	ALLOW("symlinkat"), ALLOW("sync"), ALLOW("sync_file_range"), ALLOW("sync_file_range2"),
	ALLOW("syncfs"), ALLOW("sysinfo"), ALLOW("tee"), ALLOW("tgkill"), ALLOW("time"),
	ALLOW("timer_create"), ALLOW("timer_delete"), ALLOW("timer_getoverrun"),
	ALLOW("timer_gettime"), ALLOW("timer_gettime64"), ALLOW("timer_settime"),
	ALLOW("timer_settime64"), ALLOW("timerfd_create"), ALLOW("timerfd_gettime"),
	ALLOW("timerfd_gettime64"), ALLOW("timerfd_settime"), ALLOW("timerfd_settime64"),
	ALLOW("times"), ALLOW("tkill"), ALLOW("truncate"), ALLOW("truncate64"), ALLOW("tuxcall"),
	ALLOW("ugetrlimit"), ALLOW("ulimit"), ALLOW("umask"), ALLOW("uname"), ALLOW("unlink"),
	ALLOW("unlinkat"), ALLOW("uprobe"), ALLOW("uretprobe"), ALLOW("usr26"), ALLOW("usr32"),
	ALLOW("utime"), ALLOW("utimensat"), ALLOW("utimensat_time64"), ALLOW("utimes"),
	ALLOW("vfork"), ALLOW("vmsplice"), ALLOW("vserver"), ALLOW("wait4"), ALLOW("waitid"),
	ALLOW("waitpid"), ALLOW("write"), ALLOW("writev"),

	/*
	 * After what libseccomp 2.5.4 can name: LSM attributes of the caller
	 * itself (what /proc/self/attr offers), mseal, the *xattrat calls and
	 * file_getattr/file_setattr (what the xattr calls and FS_IOC_FSGETXATTR
	 * already do, relative to a directory descriptor).
	 */
	ALLOW_NR("lsm_get_self_attr", 459), ALLOW_NR("lsm_set_self_attr", 460),
	ALLOW_NR("lsm_list_modules", 461), ALLOW_NR("mseal", 462), ALLOW_NR("setxattrat", 463),
	ALLOW_NR("getxattrat", 464), ALLOW_NR("listxattrat", 465), ALLOW_NR("removexattrat", 466),
	ALLOW_NR("file_getattr", 468), ALLOW_NR("file_setattr", 469),
};
const size_t seccomp_allowed_table_len = sizeof(seccomp_allowed_table) / sizeof(seccomp_allowed_table[0]);
/* clang-format on */
const size_t seccomp_rule_table_len = sizeof(seccomp_rule_table) / sizeof(seccomp_rule_table[0]);

bool
seccomp_variant_replaces(enum seccomp_variant variant, const char *name)
{
	for (size_t i = 0; variant != SECCOMP_BASE && i < seccomp_landlock_rule_table_len; i++)
		if (!strcmp(seccomp_landlock_rule_table[i].name, name) &&
		    (variant == SECCOMP_LANDLOCK || !seccomp_landlock_rule_table[i].closed))
			return true;
	return false;
}

bool
seccomp_landlock_replaces(const char *name)
{
	return seccomp_variant_replaces(SECCOMP_LANDLOCK, name);
}

int
seccomp_classify(const char *name)
{
	int found = -1;

	for (size_t i = 0; i < seccomp_rule_table_len; i++)
		if (!strcmp(seccomp_rule_table[i].name, name))
			return 1;
	for (size_t i = 0; i < seccomp_allowed_table_len; i++)
		if (!strcmp(seccomp_allowed_table[i].name, name))
			found = 0;
	return found;
}

#define X32_BIT 0x40000000u
/* The main tables end below this; x32's own calls start here, ARM's private ones far above. */
#define MAIN_TABLE_END 512u
/* The largest number the gate refuses: -1 is no call (a tracer's "skip"). */
#define NR_TOP 0xfffffffeu
#define KNOWN_MAX 1024

const char *
seccomp_table_name(int nr)
{
	uint32_t n = (uint32_t)nr & ~X32_BIT;

	for (size_t i = 0; i < seccomp_rule_table_len; i++)
		if (seccomp_rule_table[i].nr && (uint32_t)seccomp_rule_table[i].nr == n)
			return seccomp_rule_table[i].name;
	for (size_t i = 0; i < seccomp_allowed_table_len; i++)
		if (seccomp_allowed_table[i].nr && (uint32_t)seccomp_allowed_table[i].nr == n)
			return seccomp_allowed_table[i].name;
	return NULL;
}

/* clang-format off */
static const char *const family_names[] = {
	"AF_UNSPEC", "AF_UNIX", "AF_INET", "AF_AX25", "AF_IPX", "AF_APPLETALK", "AF_NETROM",
	"AF_BRIDGE", "AF_ATMPVC", "AF_X25", "AF_INET6", "AF_ROSE", "AF_DECnet", "AF_NETBEUI",
	"AF_SECURITY", "AF_KEY", "AF_NETLINK", "AF_PACKET", "AF_ASH", "AF_ECONET", "AF_ATMSVC",
	"AF_RDS", "AF_SNA", "AF_IRDA", "AF_PPPOX", "AF_WANPIPE", "AF_LLC", "AF_IB", "AF_MPLS",
	"AF_CAN", "AF_TIPC", "AF_BLUETOOTH", "AF_IUCV", "AF_RXRPC", "AF_ISDN", "AF_PHONET",
	"AF_IEEE802154", "AF_CAIF", "AF_ALG", "AF_NFC", "AF_VSOCK", "AF_KCM", "AF_QIPCRTR",
	"AF_SMC", "AF_XDP", "AF_MCTP",
};
static const char *const netlink_names[] = {
	"NETLINK_ROUTE", "NETLINK_UNUSED", "NETLINK_USERSOCK", "NETLINK_FIREWALL",
	"NETLINK_SOCK_DIAG", "NETLINK_NFLOG", "NETLINK_XFRM", "NETLINK_SELINUX", "NETLINK_ISCSI",
	"NETLINK_AUDIT", "NETLINK_FIB_LOOKUP", "NETLINK_CONNECTOR", "NETLINK_NETFILTER",
	"NETLINK_IP6_FW", "NETLINK_DNRTMSG", "NETLINK_KOBJECT_UEVENT", "NETLINK_GENERIC", NULL,
	"NETLINK_SCSITRANSPORT", "NETLINK_ECRYPTFS", "NETLINK_RDMA", "NETLINK_CRYPTO",
	"NETLINK_SMC",
};
/* clang-format on */

/*
 * Refusals ordinary tools make and handle, counted apart: each is a probe
 * whose failure the tool expects and takes for its answer, and nothing
 * the command was asked to do fails because of it.  Matched on the call
 * and one argument (its low 32 bits: each is an int to the kernel), so
 * that the same call made for another purpose is reported as usual.
 */
static const struct {
	const char *call;
	unsigned arg;
	uint32_t value;
	const char *name;
} handled_probes[] = {
    /*
     * libnuma, when it starts (ps, top, numactl and whatever else links
     * it): it tries MPOL_PREFERRED_MANY on the caller to learn whether the
     * kernel has that policy, then puts the old one back; refused, it
     * takes the policy for missing, which matters only to a program that
     * asks libnuma for it, and such a program's own set_mempolicy is
     * refused anyway.
     */
    {"set_mempolicy", 0, MPOL_PREFERRED_MANY, "set_mempolicy(MPOL_PREFERRED_MANY)"},
};

/* NAMES[V] when V has one, else the number; into BUF. */
static const char *
value_name(const char *const *names, size_t n, uint64_t v, char *buf, size_t len)
{
	if (v < n && names[v])
		return names[v];
	snprintf(buf, len, v > 0xffffffffu ? "%#llx" : "%llu", (unsigned long long)v);
	return buf;
}

/* SOCK_* by the low four bits of a socket's type, the flags above them left out. */
static const char *const type_names[] = {
    NULL,	 "SOCK_STREAM", "SOCK_DGRAM", "SOCK_RAW", "SOCK_RDM",	 "SOCK_SEQPACKET",
    "SOCK_DCCP", NULL,		NULL,	      NULL,	  "SOCK_PACKET",
};

/*
 * socket(FAMILY) or, for AF_NETLINK, socket(AF_NETLINK, PROTOCOL); for
 * AF_INET and AF_INET6 (refused by the landlock variant alone) the type,
 * and for a stream the protocol when it is not TCP's; into BUF.
 */
static void
socket_name(uint64_t fam, uint64_t type, uint64_t protocol, char *buf, size_t len)
{
	char f[24], t[4], p[24];
	const char *family = value_name(
	    family_names, sizeof(family_names) / sizeof(family_names[0]), fam, f, sizeof(f));

	if (fam == AF_INET || fam == AF_INET6) {
		const char *inet = fam == AF_INET ? "AF_INET" : "AF_INET6";
		const char *ty = value_name(type_names, sizeof(type_names) / sizeof(type_names[0]),
					    type & 0xf, t, sizeof(t));

		if ((type & 0xf) != SOCK_STREAM || protocol == 0 || protocol == IPPROTO_TCP)
			snprintf(buf, len, "socket(%s, %s)", inet, ty);
		else if (protocol == IPPROTO_MPTCP || protocol == IPPROTO_SCTP)
			snprintf(buf, len, "socket(%s, SOCK_STREAM, %s)", inet,
				 protocol == IPPROTO_MPTCP ? "IPPROTO_MPTCP" : "IPPROTO_SCTP");
		else
			snprintf(buf, len, "socket(%s, SOCK_STREAM, %s)", inet,
				 value_name(NULL, 0, protocol, p, sizeof(p)));
		return;
	}
	if (fam != AF_NETLINK) {
		snprintf(buf, len, "socket(%s)", family);
		return;
	}
	snprintf(buf, len, "socket(%s, %s)", family,
		 value_name(netlink_names, sizeof(netlink_names) / sizeof(netlink_names[0]),
			    protocol, p, sizeof(p)));
}

/* The argument of each send call that holds its flags. */
static const struct {
	const char *call;
	unsigned arg;
} send_flags[] = {{"sendto", 3}, {"send", 3}, {"sendmsg", 2}, {"sendmmsg", 3}};

/*
 * The name of a refusal of NAME whose arguments say more than the call
 * (the landlock variant's socketpair, TCP Fast Open), into BUF; BUF is
 * left alone when they do not.
 */
static void
args_name(const char *name, const uint64_t args[6], char *buf, size_t len)
{
	char f[24];

	if (!strcmp(name, "socketpair")) {
		snprintf(buf, len, "socketpair(%s)",
			 value_name(family_names, sizeof(family_names) / sizeof(family_names[0]),
				    args[0], f, sizeof(f)));
		return;
	}
	if (!strcmp(name, "setsockopt") && (uint32_t)args[1] == IPPROTO_TCP &&
	    (uint32_t)args[2] == TCP_FASTOPEN_CONNECT) {
		snprintf(buf, len, "setsockopt(TCP_FASTOPEN_CONNECT)");
		return;
	}
	for (size_t i = 0; i < sizeof(send_flags) / sizeof(send_flags[0]); i++)
		if (!strcmp(name, send_flags[i].call) && (args[send_flags[i].arg] & MSG_FASTOPEN)) {
			snprintf(buf, len, "%s(MSG_FASTOPEN)", name);
			return;
		}
}

/* The ABI of a report, as seccomp_arch_table names it: x32 by bit 30 of the number. */
static const char *
refusal_abi(uint32_t arch, int nr, uint32_t *token)
{
	*token = arch == SCMP_ARCH_X86_64 && ((uint32_t)nr & X32_BIT) ? SCMP_ARCH_X32 : arch;
	for (size_t i = 0; i < seccomp_arch_table_len; i++)
		if (seccomp_arch_table[i].token == *token)
			return seccomp_arch_table[i].name;
	return "?";
}

bool
seccomp_refusal_name(uint32_t arch, int nr, const uint64_t args[6], char *buf, size_t len)
{
	uint32_t token;
	const char *abi = refusal_abi(arch, nr, &token);
	char *resolved = seccomp_syscall_resolve_num_arch(token, nr);
	/* Newer than libseccomp's tables: the number is the same on every ABI. */
	const char *name = resolved ? resolved : seccomp_table_name(nr);
	bool native = token == seccomp_arch_native(), handled = false;
	char call[SECCOMP_REFUSAL_NAME_MAX];

	if (!name) {
		snprintf(buf, len, "%d [%s]", nr, abi);
		return false;
	}
	snprintf(call, sizeof(call), "%s", name);
	if (!strcmp(name, "socket"))
		socket_name(args[0], args[1], args[2], call, sizeof(call));
	else
		args_name(name, args, call, sizeof(call));
	for (size_t i = 0; i < sizeof(handled_probes) / sizeof(handled_probes[0]); i++)
		if (!strcmp(name, handled_probes[i].call) &&
		    (uint32_t)args[handled_probes[i].arg] == handled_probes[i].value) {
			snprintf(call, sizeof(call), "%s", handled_probes[i].name);
			handled = true;
		}
	snprintf(buf, len, "%s%s%s%s", call, native ? "" : " [", native ? "" : abi,
		 native ? "" : "]");
	free(resolved);
	return handled;
}

/* The number of a table entry on TOKEN's ABI, or -1 where it has none. */
static int64_t
entry_nr(uint32_t token, const char *name, int nr)
{
	int n;

	if (nr)
		return (token == SCMP_ARCH_X32 ? X32_BIT : 0) | (uint32_t)nr;
	n = seccomp_syscall_resolve_name_arch(token, name);
	return n >= 0 ? n : -1;
}

static int
cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Every number the tables name on TOKEN's ABI, ascending, into KNOWN; how many. */
static size_t
known_numbers(uint32_t token, uint32_t known[KNOWN_MAX])
{
	size_t n = 0;

	for (size_t i = 0; i < seccomp_rule_table_len + seccomp_allowed_table_len; i++) {
		bool rule = i < seccomp_rule_table_len;
		const char *name = rule ? seccomp_rule_table[i].name
					: seccomp_allowed_table[i - seccomp_rule_table_len].name;
		int nr = rule ? seccomp_rule_table[i].nr
			      : seccomp_allowed_table[i - seccomp_rule_table_len].nr;
		int64_t k = entry_nr(token, name, nr);

		if (k >= 0 && n < KNOWN_MAX)
			known[n++] = (uint32_t)k;
	}
	qsort(known, n, sizeof(known[0]), cmp_u32);
	return n;
}

/* Append [LO, HI] to OUT, joined to the last range when they touch. */
static int
range_add(struct seccomp_range *out, size_t *n, size_t max, uint32_t lo, uint32_t hi)
{
	if (*n && out[*n - 1].hi + 1 >= lo) {
		if (hi > out[*n - 1].hi)
			out[*n - 1].hi = hi;
		return 0;
	}
	if (*n == max)
		return -1;
	out[(*n)++] = (struct seccomp_range){lo, hi};
	return 0;
}

int
seccomp_gate_ranges(uint32_t token, struct seccomp_range *out, size_t max)
{
	return seccomp_gate_ranges_of(token, SECCOMP_BASE, out, max);
}

int
seccomp_gate_ranges_of(uint32_t token, enum seccomp_variant variant, struct seccomp_range *out,
		       size_t max)
{
	uint32_t known[KNOWN_MAX], refused[KNOWN_MAX];
	uint32_t bit = token == SCMP_ARCH_X32 ? X32_BIT : 0, top = bit, next;
	size_t nk = known_numbers(token, known), nr = 0, n = 0;

	for (size_t i = 0; i < nk; i++)
		if ((known[i] & ~bit) < MAIN_TABLE_END && known[i] > top)
			top = known[i];
	for (size_t i = 0; i < seccomp_rule_table_len; i++)
		if (seccomp_rule_table[i].nr)
			refused[nr++] = bit | (uint32_t)seccomp_rule_table[i].nr;
	/* The landlock variants refuse a few newer calls by number too (always). */
	for (size_t i = 0; variant != SECCOMP_BASE && i < seccomp_landlock_rule_table_len; i++)
		if (seccomp_landlock_rule_table[i].nr && nr < KNOWN_MAX)
			refused[nr++] = bit | (uint32_t)seccomp_landlock_rule_table[i].nr;
	qsort(refused, nr, sizeof(refused[0]), cmp_u32);
	for (size_t i = 0; i < nr; i++)
		if (range_add(out, &n, max, refused[i], refused[i]) < 0)
			return -1;
	/* Above the main table: what no table names, up to the top. */
	next = top + 1;
	for (size_t i = 0; i < nk; i++) {
		if (known[i] <= top || known[i] < next)
			continue;
		if (known[i] > next && range_add(out, &n, max, next, known[i] - 1) < 0)
			return -1;
		next = known[i] + 1;
	}
	if (next <= NR_TOP && range_add(out, &n, max, next, NR_TOP) < 0)
		return -1;
	return (int)n;
}

/*
 * The gate's BPF.  Conditional jumps reach 255 instructions at most; the
 * gate is far shorter, and gate_jump checks it.
 */
#define GATE_MAX 200
#define RANGES_MAX 32

enum gate_target { TO_NONE, TO_START, TO_REFUSE };

struct gate {
	struct sock_filter insn[GATE_MAX];
	enum gate_target jt[GATE_MAX], jf[GATE_MAX];
	size_t n;
	bool overflow;
};

static size_t
gate_put(struct gate *g, struct sock_filter f, enum gate_target jt, enum gate_target jf)
{
	if (g->n == GATE_MAX) {
		g->overflow = true;
		return GATE_MAX - 1;
	}
	g->insn[g->n] = f;
	g->jt[g->n] = jt;
	g->jf[g->n] = jf;
	return g->n++;
}

/* Descending: above a range's top goes on, inside it is refused, below tries the next. */
static void
gate_ranges(struct gate *g, uint32_t token, enum seccomp_variant variant)
{
	struct seccomp_range r[RANGES_MAX];
	int n = seccomp_gate_ranges_of(token, variant, r, RANGES_MAX);

	if (n < 0) {
		g->overflow = true;
		return;
	}
	for (int i = n - 1; i >= 0; i--) {
		gate_put(g, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, r[i].hi, 0, 0),
			 TO_START, TO_NONE);
		gate_put(g, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, r[i].lo, 0, 0),
			 TO_REFUSE, TO_NONE);
	}
	gate_put(g, (struct sock_filter)BPF_STMT(BPF_JMP | BPF_JA, 0), TO_START, TO_NONE);
}

/* Point the jump at AT to the next instruction to be put, as its true or false branch. */
static void
gate_here(struct gate *g, size_t at, bool true_branch)
{
	size_t off = g->n - at - 1;

	if (off > 255)
		g->overflow = true;
	if (true_branch)
		g->insn[at].jt = (uint8_t)off;
	else
		g->insn[at].jf = (uint8_t)off;
}

/* Resolve the jumps to the refusal (the last instruction) and to libseccomp's start. */
static int
gate_link(struct gate *g)
{
	size_t refuse = g->n - 1, start = g->n;

	for (size_t i = 0; i < g->n; i++) {
		size_t t = g->jt[i] == TO_START ? start : refuse,
		       f = g->jf[i] == TO_START ? start : refuse;

		if (g->insn[i].code == (BPF_JMP | BPF_JA)) {
			g->insn[i].k = (uint32_t)(start - i - 1);
			continue;
		}
		if ((g->jt[i] != TO_NONE && t - i - 1 > 255) ||
		    (g->jf[i] != TO_NONE && f - i - 1 > 255))
			return -1;
		if (g->jt[i] != TO_NONE)
			g->insn[i].jt = (uint8_t)(t - i - 1);
		if (g->jf[i] != TO_NONE)
			g->insn[i].jf = (uint8_t)(f - i - 1);
	}
	return 0;
}

static int
gate_build(struct gate *g, bool report, enum seccomp_variant variant, char *err, size_t errlen)
{
	const uint32_t nr_off = offsetof(struct seccomp_data, nr);
	const uint32_t arch_off = offsetof(struct seccomp_data, arch);

	g->n = 0;
	g->overflow = false;
	gate_put(g, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, arch_off), TO_NONE,
		 TO_NONE);
	for (size_t i = 0; i < seccomp_arch_table_len; i++) {
		const struct seccomp_arch *a = &seccomp_arch_table[i];
		size_t other_arch, x32 = 0;

		if (a->token == SCMP_ARCH_X32)
			continue; /* within x86_64's: same AUDIT_ARCH, bit 30 in the number */
		other_arch = gate_put(
		    g, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, a->token, 0, 0),
		    TO_NONE, TO_NONE);
		gate_put(g, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, nr_off), TO_NONE,
			 TO_NONE);
		if (a->token == SCMP_ARCH_X86_64)
			x32 = gate_put(
			    g,
			    (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, X32_BIT, 0, 0),
			    TO_NONE, TO_NONE);
		gate_ranges(g, a->token, variant);
		if (x32) {
			gate_here(g, x32, true);
			gate_ranges(g, SCMP_ARCH_X32, variant);
		}
		gate_here(g, other_arch, false);
	}
	/* No ABI of ours: libseccomp's program kills the process. */
	gate_put(g, (struct sock_filter)BPF_STMT(BPF_JMP | BPF_JA, 0), TO_START, TO_NONE);
	gate_put(g,
		 (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
					      report ? SCMP_ACT_NOTIFY : SCMP_ACT_ERRNO(EPERM)),
		 TO_NONE, TO_NONE);
	if (g->overflow || gate_link(g) < 0) {
		snprintf(err, errlen, "the gate does not fit its %d instructions", GATE_MAX);
		return -1;
	}
	return 0;
}

/* The names of the rules numbered within [LO, HI] of TOKEN's ABI, for the PFC text. */
static void
gate_pfc_names(struct textbuf *out, uint32_t lo, uint32_t hi, uint32_t bit)
{
	bool any = false;

	tb_puts(out, "#");
	for (size_t i = 0; i < seccomp_rule_table_len + seccomp_landlock_rule_table_len; i++) {
		const struct seccomp_rule *r =
		    i < seccomp_rule_table_len ? &seccomp_rule_table[i]
					       : &seccomp_landlock_rule_table[i - seccomp_rule_table_len];
		uint32_t nr = bit | (uint32_t)r->nr;

		if (r->nr && nr >= lo && nr <= hi) {
			tb_printf(out, " %s", r->name);
			any = true;
		}
	}
	tb_puts(out, any ? "\n" : " numbers no call has yet\n");
}

static void
gate_pfc_ranges(struct textbuf *out, uint32_t token, const char *indent, bool report,
		enum seccomp_variant variant)
{
	struct seccomp_range r[RANGES_MAX];
	int n = seccomp_gate_ranges_of(token, variant, r, RANGES_MAX);
	uint32_t bit = token == SCMP_ARCH_X32 ? X32_BIT : 0;

	for (int i = 0; i < n; i++) {
		tb_puts(out, indent);
		gate_pfc_names(out, r[i].lo, r[i].hi, bit);
		if (r[i].lo == r[i].hi)
			tb_printf(out, "%sif ($syscall == %u)\n", indent, r[i].lo);
		else
			tb_printf(out, "%sif ($syscall >= %u && $syscall <= %u)\n", indent, r[i].lo,
				  r[i].hi);
		if (report)
			tb_printf(out, "%s  action 0x%08x;\n", indent, SCMP_ACT_NOTIFY);
		else
			tb_printf(out, "%s  action ERRNO(%d);\n", indent, EPERM);
	}
}

/* The gate, in the style of libseccomp's PFC text. */
static void
gate_pfc(struct textbuf *out, bool report, enum seccomp_variant variant)
{
	tb_puts(out, "#\n# gate, ahead of libseccomp's program: the calls it cannot name, and on\n"
		     "# each ABI every number above the highest its tables know (but -1)\n#\n");
	for (size_t i = 0; i < seccomp_arch_table_len; i++) {
		const struct seccomp_arch *a = &seccomp_arch_table[i];

		if (a->token == SCMP_ARCH_X32)
			continue;
		tb_printf(out, "# gate for arch %s (%u)\nif ($arch == %u)\n", a->name, a->token,
			  a->token);
		if (a->token != SCMP_ARCH_X86_64) {
			gate_pfc_ranges(out, a->token, "  ", report, variant);
			continue;
		}
		tb_printf(out, "  if ($syscall & 0x%08x == 0)\n", X32_BIT);
		gate_pfc_ranges(out, a->token, "    ", report, variant);
		tb_puts(out, "  else # x32\n");
		gate_pfc_ranges(out, SCMP_ARCH_X32, "    ", report, variant);
	}
	tb_puts(out, "# everything else: on to libseccomp's program\n");
}

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
	/* Elsewhere a pseudo number is a call the ABI lacks (send, recv on x86_64). */
	if (arch != SCMP_ARCH_X86)
		return false;
	if (nr <= __PNR_semop && nr >= __PNR_shmctl)
		return true;
	if (nr > __PNR_socket || nr < __PNR_sendmmsg)
		return false;
	/*
	 * A socket call x86 has only inside socketcall (send, recv, accept)
	 * is the socketcall rules' alone: libseccomp would keep a rule on its
	 * pseudo number, which no call ever has.
	 */
	for (int i = 0; i < (int)MAIN_TABLE_END; i++) {
		char *s = seccomp_syscall_resolve_num_arch(arch, i);
		bool direct = s && !strcmp(s, name);

		free(s);
		if (direct)
			return true;
	}
	return false;
}

/* Every rule fails with its errno; with REPORT, the reported ones notify instead. */
static int
rule_add(scmp_filter_ctx ctx, const struct seccomp_rule *r, bool report)
{
	struct scmp_arg_cmp cmp[SECCOMP_RULE_CMP_MAX];
	uint32_t action =
	    report && r->reported ? SCMP_ACT_NOTIFY : SCMP_ACT_ERRNO((uint32_t)r->err);

	for (unsigned i = 0; i < r->ncmp; i++) {
		const struct seccomp_cmp *c = &r->cmp[i];

		cmp[i] = (struct scmp_arg_cmp){.arg = c->arg, .op = c->op};
		if (c->op == SCMP_CMP_MASKED_EQ) {
			cmp[i].datum_a = c->mask;
			cmp[i].datum_b = c->value;
		} else {
			cmp[i].datum_a = c->value;
		}
	}
	/*
	 * The number is the build machine's (or a pseudo number); libseccomp
	 * maps it to the context's ABI by name.
	 */
	return seccomp_rule_add_array(ctx, action, seccomp_syscall_resolve_name(r->name), r->ncmp,
				      cmp);
}

/*
 * The filter for one ABI, or NULL with a message in ERR.  Why one context
 * per ABI: libseccomp adds a rule to every ABI of a context, and where an
 * ABI lacks the call it keeps an entry under a pseudo number which, though
 * left out of the BPF, shows in the PFC text ("stime" in the x86_64
 * section).  A context per ABI, holding only the calls that ABI has, keeps
 * the text true to the program.
 */
/*
 * Add the rules of TABLE (LEN of them) that ABI A has to CTX: of the base
 * table (OWN false) those for the calls VARIANT does not decide by its own
 * rules; of the landlock table (OWN true) those VARIANT takes.
 */
static int
rules_add(scmp_filter_ctx ctx, const struct seccomp_arch *a, const struct seccomp_rule *table,
	  size_t len, enum seccomp_variant variant, bool own, bool report, char *err,
	  size_t errlen)
{
	for (size_t i = 0; i < len; i++) {
		const struct seccomp_rule *r = &table[i];
		int rc;

		/* A numbered rule is the gate's: libseccomp cannot name it. */
		if (r->nr || !syscall_on_arch(a->token, r->name))
			continue;
		if (!own && seccomp_variant_replaces(variant, r->name))
			continue;
		if (own && r->closed && variant == SECCOMP_LANDLOCK_NET)
			continue;
		rc = rule_add(ctx, r, report);
		if (rc) {
			snprintf(err, errlen, "adding the rule for %s on %s: %s", r->name, a->name,
				 strerror(-rc));
			return -1;
		}
	}
	return 0;
}

static scmp_filter_ctx
filter_for_arch(const struct seccomp_arch *a, bool binary_tree, bool report,
		enum seccomp_variant variant, char *err, size_t errlen)
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
	if (rules_add(ctx, a, seccomp_rule_table, seccomp_rule_table_len, variant, false, report,
		      err, errlen) < 0 ||
	    (variant != SECCOMP_BASE &&
	     rules_add(ctx, a, seccomp_landlock_rule_table, seccomp_landlock_rule_table_len, variant,
		       true, report, err, errlen) < 0)) {
		seccomp_release(ctx);
		return NULL;
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
seccomp_generate_variant(bool binary_tree, bool pfc, bool report, enum seccomp_variant variant,
			 struct textbuf *out, char *err, size_t errlen)
{
	scmp_filter_ctx ctx = NULL;
	struct gate gate;
	size_t before = out->len;
	int rc;

	if (gate_build(&gate, report, variant, err, errlen) < 0)
		return -1;
	for (size_t i = 0; i < seccomp_arch_table_len; i++) {
		const struct seccomp_arch *a = &seccomp_arch_table[i];
		scmp_filter_ctx one =
		    filter_for_arch(a, binary_tree, report, variant, err, errlen);

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
	/* libseccomp's jumps are relative: its program runs unchanged after the gate. */
	if (pfc)
		gate_pfc(out, report, variant);
	else
		tb_write(out, gate.insn, gate.n * sizeof(gate.insn[0]));
	rc = export_filter(ctx, pfc, out, err, errlen);
	seccomp_release(ctx);
	if (!rc && !pfc && (out->len - before) / sizeof(struct sock_filter) > BPF_MAXINSNS) {
		snprintf(err, errlen, "the filter is longer than the kernel's %d instructions",
			 BPF_MAXINSNS);
		return -1;
	}
	return rc;
fail:
	if (ctx)
		seccomp_release(ctx);
	return -1;
}

int
seccomp_generate_as(bool binary_tree, bool pfc, bool report, struct textbuf *out, char *err,
		    size_t errlen)
{
	return seccomp_generate_variant(binary_tree, pfc, report, SECCOMP_BASE, out, err, errlen);
}

int
seccomp_generate(bool binary_tree, bool pfc, struct textbuf *out, char *err, size_t errlen)
{
	return seccomp_generate_as(binary_tree, pfc, false, out, err, errlen);
}

/* The PFC text, after a header for the base filter or the landlock variant. */
static int
build_text(enum seccomp_variant variant, struct textbuf *out, char *err, size_t errlen)
{
	const struct scmp_version *v = seccomp_version();

	if (variant == SECCOMP_LANDLOCK)
		tb_puts(
		    out,
		    "# seccomp filter of the linux_landlock backend: the standalone program\n"
		    "# --emit=seccomp-landlock-bpf writes; omnibox-init loads it (--seccomp-fd)\n"
		    "# before the agent's first instruction.  The rules of --emit=seccomp and,\n"
		    "# for what no network namespace does there, the socket rules beside "
		    "Landlock:\n"
		    "# socket() AF_INET or AF_INET6, SOCK_STREAM, TCP only; socketpair() AF_UNIX\n"
		    "# only; no listen(), no socketcall(), no TCP Fast Open; and, for what no PID\n"
		    "# namespace does, no limit, priority or scheduling set on another process.\n"
		    "# For every policy without the host's network (allow_network: true has\n"
		    "# --emit=seccomp-landlock-net).\n"
		    "# ABIs, tested in this order:");
	else if (variant == SECCOMP_LANDLOCK_NET)
		tb_puts(
		    out,
		    "# seccomp filter of the linux_landlock backend for allow_network: true: the\n"
		    "# standalone program --emit=seccomp-landlock-net-bpf writes; omnibox-init\n"
		    "# loads it (--seccomp-fd) before the agent's first instruction.  The rules of\n"
		    "# --emit=seccomp-landlock but those the host's network makes moot: socket()\n"
		    "# AF_INET or AF_INET6 only (UDP and listen() too); socketpair() AF_UNIX only;\n"
		    "# no socketcall(); no limit, priority or scheduling set on another process.\n"
		    "# ABIs, tested in this order:");
	else
		tb_puts(out, "# seccomp filter: the standalone program --emit=seccomp-bpf writes, "
			     "for any loader\n"
			     "# (bwrap --seccomp, a container runtime); omnibox-init loads it "
			     "(--seccomp-fd)\n"
			     "# before the agent's first instruction.\n"
			     "# The same for every policy: nothing in the policy changes it.\n"
			     "# ABIs, tested in this order:");
	for (size_t i = 0; i < seccomp_arch_table_len; i++)
		tb_printf(out, " %s", seccomp_arch_table[i].name);
	tb_printf(
	    out,
	    "; any other: KILL_PROCESS.\n"
	    "# Default action ALLOW, after a gate that refuses the calls libseccomp cannot "
	    "name and\n"
	    "# every number above the highest each ABI's tables know (see the gate "
	    "below).\n"
	    "# ERRNO(%d) is EPERM, the refusal.  With omnibox-run to answer, omnibox-init\n"
	    "# loads the program with each ERRNO(%d) return turned into\n"
	    "# SECCOMP_RET_USER_NOTIF (0x%08x), nothing else changed: omnibox-run counts\n"
	    "# the refusal and answers EPERM.\n"
	    "# ERRNO(%d) is ENOSYS, for clone3, so that libc falls back to clone, whose flags\n"
	    "# the filter can check; it is not reported.\n"
	    "# Built by libseccomp %u.%u.%u with binary-tree search; the rules are in "
	    "emitters/emit_seccomp.c.\n",
	    EPERM, EPERM, SCMP_ACT_NOTIFY, ENOSYS, v->major, v->minor, v->micro);
	return seccomp_generate_variant(true, true, false, variant, out, err, errlen);
}

const char *const seccomp_output_file[SECCOMP_OUT_COUNT] = {
    [SECCOMP_OUT_PFC] = "seccomp.pfc",
    [SECCOMP_OUT_BPF] = "seccomp.bpf",
    [SECCOMP_OUT_LANDLOCK_PFC] = "seccomp-landlock.pfc",
    [SECCOMP_OUT_LANDLOCK_BPF] = "seccomp-landlock.bpf",
    [SECCOMP_OUT_LANDLOCK_NET_PFC] = "seccomp-landlock-net.pfc",
    [SECCOMP_OUT_LANDLOCK_NET_BPF] = "seccomp-landlock-net.bpf",
    [SECCOMP_OUT_OCI] = "seccomp.oci.json",
};

int
seccomp_output_build(enum seccomp_output k, struct textbuf *out, char *err, size_t errlen)
{
	static const enum seccomp_variant variant[SECCOMP_OUT_COUNT] = {
	    [SECCOMP_OUT_PFC] = SECCOMP_BASE,
	    [SECCOMP_OUT_BPF] = SECCOMP_BASE,
	    [SECCOMP_OUT_LANDLOCK_PFC] = SECCOMP_LANDLOCK,
	    [SECCOMP_OUT_LANDLOCK_BPF] = SECCOMP_LANDLOCK,
	    [SECCOMP_OUT_LANDLOCK_NET_PFC] = SECCOMP_LANDLOCK_NET,
	    [SECCOMP_OUT_LANDLOCK_NET_BPF] = SECCOMP_LANDLOCK_NET,
	    [SECCOMP_OUT_OCI] = SECCOMP_BASE,
	};

	switch (k) {
	case SECCOMP_OUT_PFC:
	case SECCOMP_OUT_LANDLOCK_PFC:
	case SECCOMP_OUT_LANDLOCK_NET_PFC:
		return build_text(variant[k], out, err, errlen);
	case SECCOMP_OUT_BPF:
	case SECCOMP_OUT_LANDLOCK_BPF:
	case SECCOMP_OUT_LANDLOCK_NET_BPF:
		/* The binary-tree program, the one every loader gets. */
		return seccomp_generate_variant(true, false, false, variant[k], out, err, errlen);
	case SECCOMP_OUT_OCI:
		seccomp_oci_json(variant[k], out);
		return 0;
	default:
		snprintf(err, errlen, "no seccomp output %d", (int)k);
		return -1;
	}
}

/* This binary carries no output: a binary linked with seccomp_carried.o does. */
__attribute__((weak)) bool
seccomp_output_carried(enum seccomp_output k, const void **data, size_t *len)
{
	(void)k;
	*data = NULL;
	*len = 0;
	return false;
}

bool
seccomp_emitter_carried(int (*emit)(const struct policy *, enum target, struct diag *,
					 struct textbuf *),
			     const void **data, size_t *len)
{
	static const struct {
		int (*emit)(const struct policy *, enum target, struct diag *, struct textbuf *);
		enum seccomp_output k;
	} by_emitter[] = {
	    {emit_seccomp, SECCOMP_OUT_PFC},
	    {emit_seccomp_bpf, SECCOMP_OUT_BPF},
	    {emit_seccomp_landlock, SECCOMP_OUT_LANDLOCK_PFC},
	    {emit_seccomp_landlock_bpf, SECCOMP_OUT_LANDLOCK_BPF},
	    {emit_seccomp_landlock_net, SECCOMP_OUT_LANDLOCK_NET_PFC},
	    {emit_seccomp_landlock_net_bpf, SECCOMP_OUT_LANDLOCK_NET_BPF},
	    {emit_seccomp_oci, SECCOMP_OUT_OCI},
	};

	for (size_t i = 0; i < sizeof(by_emitter) / sizeof(by_emitter[0]); i++)
		if (by_emitter[i].emit == emit)
			return seccomp_output_carried(by_emitter[i].k, data, len);
	*data = NULL;
	*len = 0;
	return false;
}

/* Output K: the carried bytes, else built now; a failure is reported to D. */
static int
emit_output(enum seccomp_output k, struct diag *d, struct textbuf *out)
{
	const void *data;
	size_t len;
	char err[256];

	if (seccomp_output_carried(k, &data, &len)) {
		tb_write(out, data, len);
		return 0;
	}
	if (seccomp_output_build(k, out, err, sizeof(err)) < 0) {
		diag_error(d, (struct loc){0, 0, 0}, "cannot build the seccomp filter: %s", err);
		return -1;
	}
	return 0;
}

int
emit_seccomp(const struct policy *p, enum target t, struct diag *d, struct textbuf *out)
{
	(void)p;
	(void)t;
	return emit_output(SECCOMP_OUT_PFC, d, out);
}

int
emit_seccomp_bpf(const struct policy *p, enum target t, struct diag *d, struct textbuf *out)
{
	(void)p;
	(void)t;
	return emit_output(SECCOMP_OUT_BPF, d, out);
}

int
emit_seccomp_landlock(const struct policy *p, enum target t, struct diag *d, struct textbuf *out)
{
	(void)p;
	(void)t;
	return emit_output(SECCOMP_OUT_LANDLOCK_PFC, d, out);
}

int
emit_seccomp_landlock_bpf(const struct policy *p, enum target t, struct diag *d,
			  struct textbuf *out)
{
	(void)p;
	(void)t;
	return emit_output(SECCOMP_OUT_LANDLOCK_BPF, d, out);
}

int
emit_seccomp_landlock_net(const struct policy *p, enum target t, struct diag *d,
			  struct textbuf *out)
{
	(void)p;
	(void)t;
	return emit_output(SECCOMP_OUT_LANDLOCK_NET_PFC, d, out);
}

int
emit_seccomp_landlock_net_bpf(const struct policy *p, enum target t, struct diag *d,
			      struct textbuf *out)
{
	(void)p;
	(void)t;
	return emit_output(SECCOMP_OUT_LANDLOCK_NET_BPF, d, out);
}
