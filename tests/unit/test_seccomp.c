/*
 * test_seccomp.c - the seccomp filter, in user space and in the kernel.
 *
 * User space: the emitted BPF, with and without libseccomp's binary tree,
 * runs in tests/unit/bpf_interp.c for every syscall number of every ABI
 * and must agree with the rule table; then with argument vectors for the
 * calls the filter inspects, against expectations written out here.
 *
 * The emitted program is the standalone filter (refusals ERRNO(EPERM), no
 * report); omnibox-init's reporting variant of it (runtime/launch/
 * seccomp_load.h) must differ in the refusal action alone.
 *
 * Kernel: a child installs the filter and makes the real calls: the filter
 * as emitted, as bwrap --seccomp or omnibox-init without a listener loads
 * it, and, with a listener this process answers, the reporting variant
 * omnibox-init loads everywhere else.  As root,
 * every refusal is checked to come from the filter: the same call without
 * it must not fail the same way.  (Unprivileged, the kernel refuses some of
 * them with EPERM by itself, so that control is skipped.)
 */
#include <criterion/criterion.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/if_ether.h>
#include <linux/keyctl.h>
#include <linux/mempolicy.h>
#include <linux/net.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "compiler/base/arena.h"
#include "emitters/seccomp.h"
#include "runtime/launch/fds.h"
#include "runtime/launch/seccomp_load.h"
#include "tests/unit/bpf_interp.h"

#define RET_EPERM (SECCOMP_RET_ERRNO | EPERM)
#define RET_ENOSYS (SECCOMP_RET_ERRNO | ENOSYS)
/* A refusal in the emitted program: EPERM, whoever loads it. */
#define RET_REFUSED RET_EPERM
/* The same in omnibox-init's reporting variant, answered EPERM by omnibox-run (notify.h). */
#define RET_REPORTED SECCOMP_RET_USER_NOTIF
#define SWEEP_MAX 1100u
#define LEN(a) (sizeof(a) / sizeof((a)[0]))

/* ---- the programs ------------------------------------------------------- */

struct prog {
	const char *label;
	struct textbuf tb;
	const struct sock_filter *insns;
	size_t n;
};

static struct prog tree = {.label = "binary-tree"}, flat = {.label = "linear"};

static void
prog_build(struct prog *p, bool binary_tree)
{
	char err[256];

	cr_assert_eq(seccomp_generate(binary_tree, false, &p->tb, err, sizeof(err)), 0,
		     "seccomp_generate(%s): %s", p->label, err);
	cr_assert(p->tb.len && p->tb.len % sizeof(struct sock_filter) == 0,
		  "the %s program is %zu bytes, not a whole number of instructions", p->label,
		  p->tb.len);
	p->insns = (const struct sock_filter *)p->tb.data;
	p->n = p->tb.len / sizeof(struct sock_filter);
}

static void
programs_build(void)
{
	prog_build(&tree, true);
	prog_build(&flat, false);
}

static void
programs_free(void)
{
	tb_free(&tree.tb);
	tb_free(&flat.tb);
}

TestSuite(seccomp_rules, .init = programs_build, .fini = programs_free);
TestSuite(seccomp_text);
TestSuite(seccomp_rewrite, .init = programs_build, .fini = programs_free);
TestSuite(bpf_interp);
TestSuite(seccomp_kernel, .init = programs_build, .fini = programs_free);
TestSuite(seccomp_listener, .init = programs_build, .fini = programs_free);
TestSuite(seccomp_ia32, .init = programs_build, .fini = programs_free);
TestSuite(seccomp_names);

/* ---- ABIs, verdicts and the table as a reference ------------------------ */

struct abi {
	const char *name;
	uint32_t token;	     /* SCMP_ARCH_*, to resolve names */
	uint32_t audit_arch; /* seccomp_data.arch */
	uint32_t nr_bit;     /* in every syscall number: x32's bit 30 */
	bool wide;	     /* the filter compares all 64 bits of an argument */
};

/* clang-format off */
static const struct abi abis[] = {
	{"x86_64", SCMP_ARCH_X86_64, AUDIT_ARCH_X86_64, 0, true},
	{"x86", SCMP_ARCH_X86, AUDIT_ARCH_I386, 0, false},
	{"x32", SCMP_ARCH_X32, AUDIT_ARCH_X86_64, 0x40000000, false},
	{"aarch64", SCMP_ARCH_AARCH64, AUDIT_ARCH_AARCH64, 0, true},
	{"arm", SCMP_ARCH_ARM, AUDIT_ARCH_ARM, 0, false},
};
/* clang-format on */
#define N_ABIS LEN(abis)
#define ABI_X86 (&abis[1])

struct vname {
	char s[40];
};

static struct vname
vname(uint32_t v)
{
	struct vname n;
	const char *e = strerrorname_np((int)(v & SECCOMP_RET_DATA));

	if (v == SECCOMP_RET_ALLOW)
		snprintf(n.s, sizeof(n.s), "ALLOW");
	else if ((v & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_ERRNO)
		snprintf(n.s, sizeof(n.s), "ERRNO(%s)", e ? e : "?");
	else if (v == SECCOMP_RET_USER_NOTIF)
		snprintf(n.s, sizeof(n.s), "NOTIFY");
	else if (v == SECCOMP_RET_KILL_PROCESS)
		snprintf(n.s, sizeof(n.s), "KILL_PROCESS");
	else
		snprintf(n.s, sizeof(n.s), "0x%08x", v);
	return n;
}

static uint32_t
verdict(const struct prog *p, uint32_t arch, uint32_t nr, const uint64_t args[6])
{
	struct seccomp_data sd = {.nr = (int)nr, .arch = arch};
	char err[256];
	uint32_t ret;

	memcpy(sd.args, args, sizeof(sd.args));
	cr_assert_eq(bpf_interp_run(p->insns, p->n, &sd, &ret, err, sizeof(err)), 0,
		     "the %s program would not load: %s", p->label, err);
	return ret;
}

/* Run both programs on one call (NR as the kernel sees it) and check each gives WANT. */
static void __attribute__((format(printf, 5, 6)))
check_call(const struct abi *abi, uint32_t nr, const uint64_t args[6], uint32_t want,
	   const char *fmt, ...)
{
	const struct prog *progs[] = {&tree, &flat};
	char what[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	for (size_t i = 0; i < 2; i++) {
		uint32_t got = verdict(progs[i], abi->audit_arch, nr, args);

		if (got != want)
			cr_assert_fail("%s %s: the %s filter says %s, expected %s", abi->name, what,
				       progs[i]->label, vname(got).s, vname(want).s);
	}
}

/*
 * Calls newer than libseccomp 2.5.4's tables, with their numbers in the
 * kernel's tables (the same on all five ABIs since Linux 5.1; x32's with
 * bit 30): asm-generic/unistd.h, arch/x86/entry/syscalls/syscall_64.tbl.
 */
/* clang-format off */
static const struct {
	const char *name;
	uint32_t nr;
	bool refused;
} newer[] = {
	{"statmount", 457, true}, {"listmount", 458, true}, {"lsm_get_self_attr", 459, false},
	{"lsm_set_self_attr", 460, false}, {"lsm_list_modules", 461, false}, {"mseal", 462, false},
	{"setxattrat", 463, false}, {"getxattrat", 464, false}, {"listxattrat", 465, false},
	{"removexattrat", 466, false}, {"open_tree_attr", 467, true}, {"file_getattr", 468, false},
	{"file_setattr", 469, false},
};
/* clang-format on */
#define NEWEST_NR 469u
#define NR_STARTS_X32_BLOCK 512u

static long
newer_nr(const struct abi *abi, const char *name)
{
	for (size_t i = 0; i < LEN(newer); i++)
		if (!strcmp(newer[i].name, name))
			return abi->nr_bit | newer[i].nr;
	return -1;
}

/* The name of NR on ABI: libseccomp's, else the list above's; NULL if neither knows it. */
static char *
name_of(const struct abi *abi, uint32_t nr)
{
	char *s = seccomp_syscall_resolve_num_arch(abi->token, (int)nr);

	for (size_t i = 0; !s && i < LEN(newer); i++)
		if (nr == (abi->nr_bit | newer[i].nr))
			s = strdup(newer[i].name);
	return s;
}

/* The number of NAME on ABI, as the kernel sees it, or -1 when the ABI lacks it. */
static long
nr_of(const struct abi *abi, const char *name)
{
	int nr = seccomp_syscall_resolve_name_arch(abi->token, name);

	if (nr >= 0)
		return nr;
	if (newer_nr(abi, name) >= 0)
		return newer_nr(abi, name);
	/* On x86 libseccomp names socket calls by their socketcall form; find the direct one. */
	for (uint32_t i = 0; i <= SWEEP_MAX; i++) {
		char *s = seccomp_syscall_resolve_num_arch(abi->token, (int)(abi->nr_bit | i));
		bool hit = s && !strcmp(s, name);

		free(s);
		if (hit)
			return abi->nr_bit | i;
	}
	return -1;
}

static bool
cmp_holds(const struct seccomp_rule *r, const struct seccomp_cmp *c, const uint64_t args[6],
	  bool wide)
{
	uint64_t v = wide ? args[c->arg] : (uint32_t)args[c->arg];

	switch (c->op) {
	case SCMP_CMP_EQ:
		return v == c->value;
	case SCMP_CMP_NE:
		return v != c->value;
	case SCMP_CMP_GT:
		return v > c->value;
	case SCMP_CMP_MASKED_EQ:
		return (v & c->mask) == c->value;
	default:
		cr_assert_fail("rule for %s: comparison %d is not modelled here", r->name, c->op);
	}
	return false;
}

/* Every comparison of R holds for ARGS (a rule without any always holds). */
static bool
rule_holds(const struct seccomp_rule *r, const uint64_t args[6], bool wide)
{
	for (unsigned i = 0; i < r->ncmp; i++)
		if (!cmp_holds(r, &r->cmp[i], args, wide))
			return false;
	return true;
}

/* What the rule table says about NAME (NULL: no such call) with ARGS. */
static uint32_t
table_verdict(const char *name, const uint64_t args[6], bool wide)
{
	for (size_t i = 0; name && i < seccomp_rule_table_len; i++) {
		const struct seccomp_rule *r = &seccomp_rule_table[i];

		if (!strcmp(r->name, name) && rule_holds(r, args, wide))
			return SECCOMP_RET_ERRNO | (uint32_t)r->err;
	}
	return SECCOMP_RET_ALLOW;
}

/*
 * Whether the filter must refuse number NR of ABI, which no table names,
 * for lying above the ABI's main table: beyond its highest named number
 * below 512 (where x32's own calls start), -1 (no call) excepted.
 */
static bool
beyond_the_table(const struct abi *abi, uint32_t nr)
{
	static uint32_t highest[N_ABIS];
	static bool known[N_ABIS];
	size_t a = (size_t)(abi - abis);

	if (nr == 0xffffffffu)
		return false;
	for (uint32_t i = 0; !known[a] && i < NR_STARTS_X32_BLOCK; i++) {
		char *s = name_of(abi, abi->nr_bit | i);

		if (s)
			highest[a] = i;
		free(s);
	}
	known[a] = true;
	return nr > (abi->nr_bit | highest[a]);
}

/*
 * What the filter must answer for number NR of ABI whose name is NAME
 * (NULL: none known).  On x86_64's AUDIT_ARCH, bit 30 of the number alone
 * says whether the call is x32's.
 */
static uint32_t
number_verdict(const struct abi *abi, uint32_t nr, const char *name, const uint64_t args[6])
{
	if (name)
		return table_verdict(name, args, abi->wide);
	if (abi->audit_arch == AUDIT_ARCH_X86_64)
		abi = nr & 0x40000000 ? &abis[2] : &abis[0];
	return beyond_the_table(abi, nr) ? RET_REFUSED : SECCOMP_RET_ALLOW;
}

/* ---- the names omnibox-run gives refusals --------------------------------- */

/* NR of ARCH with ARGS gets the name WANT, and is a probe tools handle exactly when WANT_HANDLED.
 */
static void
assert_refusal_name(uint32_t arch, uint32_t nr, const uint64_t args[6], const char *want,
		    bool want_handled)
{
	char got[SECCOMP_REFUSAL_NAME_MAX];
	bool handled = seccomp_refusal_name(arch, (int)nr, args, got, sizeof(got));

	cr_assert_str_eq(got, want, "syscall %u of arch %#x is named '%s', not '%s'", nr, arch, got,
			 want);
	cr_assert_eq(handled, want_handled, "%s is%s counted as a probe tools handle", want,
		     handled ? "" : " not");
}

Test(seccomp_names, a_socket_refusal_names_its_family_and_its_netlink_protocol)
{
	long x86 = nr_of(ABI_X86, "socket");

	if (seccomp_arch_native() != SCMP_ARCH_X86_64)
		cr_skip_test("the names below are x86_64's, this machine's ABI is another");
	assert_refusal_name(AUDIT_ARCH_X86_64, SYS_socket, (uint64_t[6]){AF_PACKET, SOCK_RAW, 3},
			    "socket(AF_PACKET)", false);
	assert_refusal_name(AUDIT_ARCH_X86_64, SYS_socket,
			    (uint64_t[6]){AF_NETLINK, SOCK_RAW, NETLINK_AUDIT},
			    "socket(AF_NETLINK, NETLINK_AUDIT)", false);
	assert_refusal_name(AUDIT_ARCH_X86_64, SYS_socket,
			    (uint64_t[6]){AF_NETLINK, SOCK_DGRAM, NETLINK_SOCK_DIAG},
			    "socket(AF_NETLINK, NETLINK_SOCK_DIAG)", false);
	assert_refusal_name(AUDIT_ARCH_X86_64, SYS_socket,
			    (uint64_t[6]){AF_NETLINK, SOCK_RAW, 1ull << 32},
			    "socket(AF_NETLINK, 0x100000000)", false);
	assert_refusal_name(AUDIT_ARCH_X86_64, SYS_socket, (uint64_t[6]){AF_NETLINK, SOCK_RAW, 17},
			    "socket(AF_NETLINK, 17)", false);
	assert_refusal_name(AUDIT_ARCH_X86_64, SYS_socket, (uint64_t[6]){99}, "socket(99)", false);
	cr_assert_geq(x86, 0);
	assert_refusal_name(AUDIT_ARCH_I386, (uint32_t)x86, (uint64_t[6]){AF_VSOCK},
			    "socket(AF_VSOCK) [x86]", false);
	assert_refusal_name(AUDIT_ARCH_X86_64, 0x40000000u | SYS_socket,
			    (uint64_t[6]){AF_NETLINK, SOCK_RAW, NETLINK_GENERIC},
			    "socket(AF_NETLINK, NETLINK_GENERIC) [x32]", false);
}

Test(seccomp_names, other_refusals_are_named_by_their_call_and_only_libnumas_probe_is_handled)
{
	static const uint64_t zero[6];

	if (seccomp_arch_native() != SCMP_ARCH_X86_64)
		cr_skip_test("the names below are x86_64's, this machine's ABI is another");
	assert_refusal_name(AUDIT_ARCH_X86_64, SYS_mount, zero, "mount", false);
	assert_refusal_name(AUDIT_ARCH_X86_64, 457, zero, "statmount", false);
	assert_refusal_name(AUDIT_ARCH_X86_64, 1000, zero, "1000 [x86_64]", false);
	assert_refusal_name(AUDIT_ARCH_X86_64, SYS_set_mempolicy,
			    (uint64_t[6]){MPOL_PREFERRED_MANY, 0x1000, 1024},
			    "set_mempolicy(MPOL_PREFERRED_MANY)", true);
	assert_refusal_name(AUDIT_ARCH_X86_64, SYS_set_mempolicy,
			    (uint64_t[6]){MPOL_BIND, 0x1000, 64}, "set_mempolicy", false);
	assert_refusal_name(AUDIT_ARCH_X86_64, SYS_mbind,
			    (uint64_t[6]){0, 4096, MPOL_PREFERRED_MANY}, "mbind", false);
}

/* ---- every syscall number of every ABI against the table ---------------- */

static void
sweep(const struct abi *abi)
{
	/* Beyond the tables: ARM's private calls, the largest number, -1. */
	static const uint32_t odd[] = {0xf0001, 0xf0002, 0xf0005, 0xf0006, 0x7fffffff, 0xffffffff};
	static const uint64_t zero[6];

	for (uint32_t i = 0; i <= SWEEP_MAX + LEN(odd); i++) {
		uint32_t nr = i <= SWEEP_MAX ? abi->nr_bit | i : odd[i - SWEEP_MAX - 1];
		char *name = name_of(abi, nr);

		check_call(abi, nr, zero, number_verdict(abi, nr, name, zero),
			   "syscall %u (%s), arguments 0", nr, name ? name : "unknown");
		free(name);
	}
}

Test(seccomp_rules, every_x86_64_syscall_number_gets_what_the_table_says)
{
	sweep(&abis[0]);
}

Test(seccomp_rules, every_x86_syscall_number_gets_what_the_table_says)
{
	sweep(&abis[1]);
}

Test(seccomp_rules, every_x32_syscall_number_gets_what_the_table_says)
{
	sweep(&abis[2]);
}

Test(seccomp_rules, every_aarch64_syscall_number_gets_what_the_table_says)
{
	sweep(&abis[3]);
}

Test(seccomp_rules, every_arm_syscall_number_gets_what_the_table_says)
{
	sweep(&abis[4]);
}

/* ---- the table against this machine's kernel ---------------------------- */

/*
 * Kernel entry points whose name is not the call's (the x86 syscall
 * tables): the ia32_ prefix and the 16-bit-uid and 32-bit-time suffixes
 * (16, 32, _time32) are taken off by rule in syscall_of; these by name.
 */
/* clang-format off */
static const struct {
	const char *entry, *call;
} entry_alias[] = {
	{"newstat", "stat"}, {"newlstat", "lstat"}, {"newfstat", "fstat"}, {"newuname", "uname"},
	{"llseek", "_llseek"}, {"mmap_pgoff", "mmap2"}, {"oldumount", "umount"},
	{"old_getrlimit", "getrlimit"}, {"old_readdir", "readdir"}, {"old_select", "select"},
	{"old_msgctl", "msgctl"}, {"old_semctl", "semctl"}, {"old_shmctl", "shmctl"},
	{"preadv64", "preadv"}, {"pwritev64", "pwritev"}, {"preadv64v2", "preadv2"},
	{"pwritev64v2", "pwritev2"},
};
/* clang-format on */

/* The call kernel entry point ENTRY (without its __x64_sys_ prefix) serves, into BUF. */
static const char *
syscall_of(const char *entry, char *buf, size_t len)
{
	size_t n;

	for (size_t i = 0; i < LEN(entry_alias); i++)
		if (!strcmp(entry_alias[i].entry, entry))
			return entry_alias[i].call;
	if (!strncmp(entry, "ia32_", 5))
		entry += 5;
	snprintf(buf, len, "%s", entry);
	n = strlen(buf);
	if (n > 7 && !strcmp(buf + n - 7, "_time32"))
		buf[n - 7] = '\0';
	else if (n > 2 && (!strcmp(buf + n - 2, "16") || !strcmp(buf + n - 2, "32")) &&
		 seccomp_classify(buf) < 0)
		buf[n - 2] = '\0';
	return buf;
}

Test(seccomp_rules, every_syscall_of_this_machines_kernel_is_refused_or_allowed_by_the_table)
{
	static const char *const prefixes[] = {"__x64_sys_", "__ia32_sys_", "__ia32_compat_sys_",
					       "__x32_compat_sys_"};
	FILE *f = fopen("/proc/kallsyms", "re");
	char line[512], missing[4096] = "";
	size_t entries = 0, nmissing = 0;

	if (!f)
		cr_skip_test("/proc/kallsyms: %s: the kernel's list of calls cannot be read",
			     strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		char type, sym[256], buf[256];
		const char *call = NULL;

		if (sscanf(line, "%*s %c %255s", &type, sym) != 2)
			continue;
		/* T: implemented here; W: a weak stub for a call this kernel lacks (ENOSYS). */
		if ((type != 'T' && type != 't') || strchr(sym, '.'))
			continue;
		for (size_t i = 0; i < LEN(prefixes) && !call; i++)
			if (!strncmp(sym, prefixes[i], strlen(prefixes[i])))
				call = sym + strlen(prefixes[i]);
		if (!call || !strcmp(call, "ni_syscall"))
			continue;
		entries++;
		call = syscall_of(call, buf, sizeof(buf));
		if (seccomp_classify(call) < 0 && !strstr(missing, call)) {
			nmissing++;
			snprintf(missing + strlen(missing), sizeof(missing) - strlen(missing),
				 " %s (%s)", call, sym);
		}
	}
	fclose(f);
	if (!entries)
		cr_skip_test("/proc/kallsyms names no system call entry point (no __x64_sys_*: "
			     "another architecture, or symbols hidden)");
	cr_assert_eq(nmissing, 0,
		     "%zu of this kernel's %zu entry points serve calls in no table:%s", nmissing,
		     entries, missing);
}

/* ---- the table against the specification -------------------------------- */

/* Refused with EPERM, unconditionally, wherever they exist. */
/* clang-format off */
static const char *const spec_denied[] = {
	"init_module", "finit_module", "delete_module", "create_module", "query_module",
	"get_kernel_syms", "mount", "umount", "umount2", "pivot_root", "chroot", "open_tree",
	"move_mount", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr", "statmount",
	"listmount", "open_tree_attr", "open_by_handle_at", "nfsservctl", "sysfs", "_sysctl", "ustat", "uselib", "quotactl",
	"quotactl_fd", "unshare", "setns", "bpf", "perf_event_open", "userfaultfd", "kcmp",
	"lookup_dcookie", "fanotify_init", "clock_settime", "clock_settime64", "settimeofday",
	"stime", "reboot", "kexec_load", "kexec_file_load", "syslog", "swapon", "swapoff", "acct",
	"mbind", "migrate_pages", "move_pages", "set_mempolicy", "set_mempolicy_home_node",
	"ioperm", "iopl", "vm86", "vm86old", "sethostname",
	"setdomainname", "vhangup", "ptrace", "process_vm_readv", "process_vm_writev",
	"pidfd_getfd", "process_madvise", "add_key", "request_key", "keyctl", "io_uring_setup",
	"io_uring_enter", "io_uring_register",
};
/* clang-format on */

static bool
spec_denies(const char *name)
{
	for (size_t i = 0; i < LEN(spec_denied); i++)
		if (!strcmp(spec_denied[i], name))
			return true;
	return false;
}

Test(seccomp_rules, every_call_the_specification_denies_fails_with_eperm_where_it_exists)
{
	static const uint64_t zero[6];

	for (size_t i = 0; i < LEN(spec_denied); i++) {
		size_t present = 0;

		for (size_t a = 0; a < N_ABIS; a++) {
			long nr = nr_of(&abis[a], spec_denied[i]);

			if (nr < 0)
				continue;
			present++;
			check_call(&abis[a], (uint32_t)nr, zero, RET_REFUSED, "%s", spec_denied[i]);
		}
		cr_assert(present, "%s exists on none of the ABIs: a typo?", spec_denied[i]);
	}
}

Test(seccomp_rules, the_table_refuses_unconditionally_only_what_the_specification_lists)
{
	for (size_t i = 0; i < seccomp_rule_table_len; i++) {
		const struct seccomp_rule *r = &seccomp_rule_table[i];

		if (r->ncmp)
			continue;
		if (!strcmp(r->name, "clone3"))
			cr_assert(r->err == ENOSYS && !r->reported,
				  "clone3 must fail with ENOSYS, unreported, not %d%s", r->err,
				  r->reported ? " (reported)" : "");
		else
			cr_assert(spec_denies(r->name) && r->err == EPERM,
				  "the table refuses %s (errno %d) unconditionally; the "
				  "specification does not",
				  r->name, r->err);
	}
}

/* omnibox-init reports what returns EPERM, and nothing else: the table must say the same. */
Test(seccomp_rules, a_rule_is_reported_exactly_when_it_refuses_with_eperm)
{
	for (size_t i = 0; i < seccomp_rule_table_len; i++) {
		const struct seccomp_rule *r = &seccomp_rule_table[i];

		cr_assert_eq(r->reported, r->err == EPERM, "%s: errno %d, %s", r->name, r->err,
			     r->reported ? "reported" : "not reported");
	}
}

Test(seccomp_rules, every_rule_refuses_its_call_on_each_abi_that_has_it)
{
	for (size_t a = 0; a < N_ABIS; a++) {
		for (size_t i = 0; i < seccomp_rule_table_len; i++) {
			const struct seccomp_rule *r = &seccomp_rule_table[i];
			long nr = nr_of(&abis[a], r->name);
			uint64_t args[6] = {0};

			if (nr < 0)
				continue;
			cr_assert_leq((uint32_t)nr & ~abis[a].nr_bit, SWEEP_MAX,
				      "%s is %ld on %s, beyond the sweep", r->name, nr,
				      abis[a].name);
			cr_assert_leq(r->ncmp, SECCOMP_RULE_CMP_MAX, "%s (rule %zu)", r->name, i);
			for (unsigned k = 0; k < r->ncmp; k++) {
				const struct seccomp_cmp *c = &r->cmp[k];
				bool past = c->op == SCMP_CMP_GT || c->op == SCMP_CMP_NE;

				for (unsigned j = 0; j < k; j++)
					cr_assert_neq(r->cmp[j].arg, c->arg,
						      "%s (rule %zu) compares args[%u] twice",
						      r->name, i, c->arg);
				args[c->arg] = past ? c->value + 1 : c->value;
			}
			check_call(&abis[a], (uint32_t)nr, args,
				   SECCOMP_RET_ERRNO | (uint32_t)r->err,
				   "%s with args %#llx %#llx %#llx (rule %zu)", r->name,
				   (unsigned long long)args[0], (unsigned long long)args[1],
				   (unsigned long long)args[2], i);
		}
	}
}

Test(seccomp_rules, i386_only_calls_exist_and_are_refused_on_x86_alone)
{
	static const char *const only_x86[] = {"vm86", "vm86old", "stime"};
	static const uint64_t zero[6];

	for (size_t i = 0; i < LEN(only_x86); i++) {
		long nr = nr_of(ABI_X86, only_x86[i]);

		cr_assert_geq(nr, 0, "libseccomp does not know %s on x86", only_x86[i]);
		check_call(ABI_X86, (uint32_t)nr, zero, RET_REFUSED, "%s", only_x86[i]);
		for (size_t a = 0; a < N_ABIS; a++)
			if (&abis[a] != ABI_X86)
				cr_assert_lt(nr_of(&abis[a], only_x86[i]), 0, "%s exists on %s",
					     only_x86[i], abis[a].name);
	}
}

Test(seccomp_rules, wait4_and_everyday_calls_are_allowed_on_every_abi)
{
	/* clang-format off */
	static const char *const everyday[] = {
		"wait4", "waitid", "read", "write", "openat", "close", "mmap", "execve", "fork",
		"vfork", "exit_group", "getpid", "kill", "futex", "socketpair", "connect", "sendto",
		"recvfrom", "prctl", "seccomp", "ioctl", "clone",
	};
	/* clang-format on */
	static const uint64_t zero[6];

	for (size_t a = 0; a < N_ABIS; a++) {
		cr_assert_geq(nr_of(&abis[a], "wait4"), 0, "no wait4 on %s", abis[a].name);
		for (size_t i = 0; i < LEN(everyday); i++) {
			long nr = nr_of(&abis[a], everyday[i]);

			if (nr >= 0)
				check_call(&abis[a], (uint32_t)nr, zero, SECCOMP_RET_ALLOW, "%s",
					   everyday[i]);
		}
	}
}

/* ---- calls newer than libseccomp, numbers beyond the tables ------------- */

Test(seccomp_rules, open_tree_attr_listmount_and_statmount_are_refused_on_every_abi)
{
	static const char *const mount_family[] = {"open_tree_attr", "listmount", "statmount"};
	static const uint64_t zero[6];

	for (size_t a = 0; a < N_ABIS; a++)
		for (size_t i = 0; i < LEN(mount_family); i++) {
			long nr = newer_nr(&abis[a], mount_family[i]);

			cr_assert_geq(nr, 0);
			check_call(&abis[a], (uint32_t)nr, zero, RET_REFUSED, "%s",
				   mount_family[i]);
		}
}

Test(seccomp_rules, the_newer_calls_of_allowed_families_are_allowed_on_every_abi)
{
	static const uint64_t zero[6];

	for (size_t a = 0; a < N_ABIS; a++)
		for (size_t i = 0; i < LEN(newer); i++)
			check_call(&abis[a], abis[a].nr_bit | newer[i].nr, zero,
				   newer[i].refused ? RET_REFUSED : SECCOMP_RET_ALLOW, "%s",
				   newer[i].name);
}

Test(seccomp_rules, numbers_above_the_newest_call_are_refused_on_every_abi)
{
	static const uint32_t future[] = {NEWEST_NR + 1, NEWEST_NR + 2, 500, 511, 1000, 0x3fffffff};
	static const uint64_t zero[6];

	for (size_t a = 0; a < N_ABIS; a++)
		for (size_t i = 0; i < LEN(future); i++)
			check_call(&abis[a], abis[a].nr_bit | future[i], zero, RET_REFUSED,
				   "future syscall %u", future[i]);
	/* Past x32's own block, and between ARM's main table and its private calls. */
	check_call(&abis[2], 0x40000000 | 548, zero, RET_REFUSED, "x32 syscall 548");
	check_call(&abis[4], 0xf0000, zero, RET_REFUSED, "ARM syscall 0xf0000");
	check_call(&abis[4], 0xf0007, zero, RET_REFUSED, "ARM syscall 0xf0007");
	/* A number with bit 30 set is x32's on x86_64's AUDIT_ARCH; -1 is no call at all. */
	check_call(&abis[0], 0x40000000 | (NEWEST_NR + 1), zero, RET_REFUSED, "x32 future call");
	for (size_t a = 0; a < N_ABIS; a++)
		check_call(&abis[a], 0xffffffff, zero, SECCOMP_RET_ALLOW, "syscall -1");
}

Test(seccomp_rules, x32_own_calls_and_arm_private_calls_stay_allowed)
{
	static const char *const x32[] = {"rt_sigaction", "ioctl", "execve", "preadv2", "pwritev2"};
	static const char *const arm[] = {"cacheflush", "set_tls", "get_tls", "breakpoint"};
	static const uint64_t zero[6];

	for (size_t i = 0; i < LEN(x32); i++) {
		long nr = nr_of(&abis[2], x32[i]);

		cr_assert_geq(nr, 0x40000000 | 512, "%s is %ld on x32", x32[i], nr);
		check_call(&abis[2], (uint32_t)nr, zero, SECCOMP_RET_ALLOW, "%s", x32[i]);
	}
	for (size_t i = 0; i < LEN(arm); i++) {
		long nr = nr_of(&abis[4], arm[i]);

		cr_assert_geq(nr, 0xf0000, "%s is %ld on arm", arm[i], nr);
		check_call(&abis[4], (uint32_t)nr, zero, SECCOMP_RET_ALLOW, "%s", arm[i]);
	}
}

Test(seccomp_rules, the_numbers_the_table_gives_are_the_kernels)
{
	size_t numbered = 0;

	for (size_t i = 0; i < seccomp_rule_table_len + seccomp_allowed_table_len; i++) {
		bool rule = i < seccomp_rule_table_len;
		const char *name = rule ? seccomp_rule_table[i].name
					: seccomp_allowed_table[i - seccomp_rule_table_len].name;
		int nr = rule ? seccomp_rule_table[i].nr
			      : seccomp_allowed_table[i - seccomp_rule_table_len].nr;

		if (!nr)
			continue;
		numbered++;
		cr_assert_eq(newer_nr(&abis[0], name), nr, "the table gives %s number %d", name,
			     nr);
		cr_assert_eq(seccomp_syscall_resolve_name(name), __NR_SCMP_ERROR,
			     "libseccomp names %s: no number needed", name);
		cr_assert(!rule || (!seccomp_rule_table[i].ncmp && seccomp_rule_table[i].reported),
			  "%s: a numbered rule refuses always, reported", name);
	}
	cr_assert_eq(numbered, LEN(newer), "%zu numbered entries, %zu newer calls", numbered,
		     LEN(newer));
}

/* Every call libseccomp or the list of newer ones knows, on any of the five ABIs. */
Test(seccomp_rules, every_known_call_is_either_refused_or_allowed_by_the_table)
{
	char missing[2048] = "";
	size_t nmissing = 0;

	for (size_t a = 0; a < N_ABIS; a++)
		for (uint32_t i = 0; i <= 0xf0010; i = i == SWEEP_MAX ? 0xf0000 : i + 1) {
			char *name = name_of(&abis[a], abis[a].nr_bit | i);

			if (name && seccomp_classify(name) < 0 && !strstr(missing, name)) {
				nmissing++;
				strncat(missing, " ", sizeof(missing) - strlen(missing) - 1);
				strncat(missing, name, sizeof(missing) - strlen(missing) - 1);
			}
			free(name);
		}
	cr_assert_eq(nmissing, 0, "%zu calls in no table:%s", nmissing, missing);
	for (size_t i = 0; i < seccomp_allowed_table_len; i++)
		for (size_t j = 0; j < seccomp_rule_table_len; j++)
			cr_assert(strcmp(seccomp_allowed_table[i].name, seccomp_rule_table[j].name),
				  "%s is both allowed and refused", seccomp_rule_table[j].name);
}

Test(seccomp_rules, clone3_fails_with_enosys_on_every_abi)
{
	static const uint64_t zero[6];

	for (size_t a = 0; a < N_ABIS; a++) {
		long nr = nr_of(&abis[a], "clone3");

		cr_assert_geq(nr, 0, "no clone3 on %s", abis[a].name);
		check_call(&abis[a], (uint32_t)nr, zero, RET_ENOSYS, "clone3");
	}
}

/* ---- argument checks ------------------------------------------------------ */

static const uint64_t ns_flags[] = {CLONE_NEWNS,   CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC,
				    CLONE_NEWUSER, CLONE_NEWPID,    CLONE_NEWNET};
#define THREAD_FLAGS                                                                               \
	(CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM |        \
	 CLONE_SETTLS | CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID)

Test(seccomp_rules, clone_with_any_namespace_flag_fails_with_eperm)
{
	static const uint64_t with[] = {0, SIGCHLD, THREAD_FLAGS, CLONE_VM | CLONE_VFORK | SIGCHLD};

	for (size_t a = 0; a < N_ABIS; a++) {
		long nr = nr_of(&abis[a], "clone");
		uint64_t all = 0;

		cr_assert_geq(nr, 0, "no clone on %s", abis[a].name);
		for (size_t f = 0; f < LEN(ns_flags); f++) {
			all |= ns_flags[f];
			for (size_t w = 0; w < LEN(with); w++) {
				uint64_t args[6] = {ns_flags[f] | with[w]};

				check_call(&abis[a], (uint32_t)nr, args, RET_REFUSED,
					   "clone(%#llx)", (unsigned long long)args[0]);
				args[0] |= 1ull << 40;
				check_call(&abis[a], (uint32_t)nr, args, RET_REFUSED,
					   "clone(%#llx), upper bits set",
					   (unsigned long long)args[0]);
			}
		}
		check_call(&abis[a], (uint32_t)nr, (uint64_t[6]){all | SIGCHLD}, RET_REFUSED,
			   "clone with every namespace flag");
	}
}

Test(seccomp_rules, clone_for_threads_and_processes_is_allowed)
{
	/* CLONE_NEWTIME's bit, for clone, is exit signal 128. */
	static const uint64_t flags[] = {0,
					 SIGCHLD,
					 THREAD_FLAGS,
					 CLONE_VM | CLONE_VFORK | SIGCHLD,
					 CLONE_PIDFD | SIGCHLD,
					 CLONE_NEWTIME};

	for (size_t a = 0; a < N_ABIS; a++) {
		long nr = nr_of(&abis[a], "clone");

		for (size_t f = 0; f < LEN(flags); f++)
			check_call(&abis[a], (uint32_t)nr, (uint64_t[6]){flags[f]},
				   SECCOMP_RET_ALLOW, "clone(%#llx)", (unsigned long long)flags[f]);
	}
}

static bool
socket_allowed(uint64_t family, uint64_t protocol)
{
	return family == AF_UNIX || family == AF_INET || family == AF_INET6 ||
	       (family == AF_NETLINK && protocol == NETLINK_ROUTE);
}

/* Every netlink protocol the kernel has (0-22), and beyond. */
/* clang-format off */
static const uint64_t protocols[] = {
	NETLINK_ROUTE, 1, NETLINK_USERSOCK, NETLINK_FIREWALL, NETLINK_SOCK_DIAG, NETLINK_NFLOG,
	NETLINK_XFRM, NETLINK_SELINUX, NETLINK_ISCSI, NETLINK_AUDIT, NETLINK_FIB_LOOKUP,
	NETLINK_CONNECTOR, NETLINK_NETFILTER, NETLINK_IP6_FW, NETLINK_DNRTMSG,
	NETLINK_KOBJECT_UEVENT, NETLINK_GENERIC, 17, NETLINK_SCSITRANSPORT, NETLINK_ECRYPTFS,
	NETLINK_RDMA, NETLINK_CRYPTO, NETLINK_SMC, 31, 32, 0x7fffffff, 0xffffffff,
};
/* clang-format on */

Test(seccomp_rules, socket_allows_only_unix_inet_inet6_and_netlink_route)
{
	static const uint64_t large[] = {AF_MAX, 255, 0x7fffffff, 0x80000000, 0xffffffff};

	for (size_t a = 0; a < N_ABIS; a++) {
		long nr = nr_of(&abis[a], "socket");

		cr_assert_geq(nr, 0, "no socket on %s", abis[a].name);
		for (uint64_t fam = 0; fam < AF_MAX; fam++)
			for (size_t p = 0; p < LEN(protocols); p++)
				check_call(&abis[a], (uint32_t)nr,
					   (uint64_t[6]){fam, SOCK_RAW, protocols[p]},
					   socket_allowed(fam, protocols[p]) ? SECCOMP_RET_ALLOW
									     : RET_REFUSED,
					   "socket(%llu, SOCK_RAW, %llu)", (unsigned long long)fam,
					   (unsigned long long)protocols[p]);
		for (size_t i = 0; i < LEN(large); i++)
			check_call(&abis[a], (uint32_t)nr, (uint64_t[6]){large[i]}, RET_REFUSED,
				   "socket(%#llx)", (unsigned long long)large[i]);
	}
}

Test(seccomp_rules, upper_bits_never_let_a_forbidden_family_or_protocol_through)
{
	static const uint64_t forbidden[][2] = {
	    {AF_UNSPEC, 0},
	    {AF_AX25, 0},
	    {AF_X25, 0},
	    {AF_ROSE, 0},
	    {AF_KEY, 0},
	    {AF_PACKET, 0},
	    {AF_VSOCK, 0},
	    {AF_BLUETOOTH, 0},
	    {AF_INET6 + 1, 0},
	    {AF_NETLINK + 1, 0},
	    {AF_NETLINK, NETLINK_AUDIT},
	    {AF_NETLINK, NETLINK_SOCK_DIAG},
	    {AF_NETLINK, NETLINK_GENERIC},
	};
	static const uint64_t upper[] = {0, 1, 0x80000000, 0xffffffff};

	for (size_t a = 0; a < N_ABIS; a++) {
		long nr = nr_of(&abis[a], "socket");

		for (size_t f = 0; f < LEN(forbidden); f++)
			for (size_t u = 0; u < LEN(upper); u++) {
				uint64_t fam = upper[u] << 32 | forbidden[f][0];
				uint64_t proto = upper[u] << 32 | forbidden[f][1];

				check_call(&abis[a], (uint32_t)nr,
					   (uint64_t[6]){fam, SOCK_RAW, forbidden[f][1]},
					   RET_REFUSED, "socket(%#llx, SOCK_RAW, %llu)",
					   (unsigned long long)fam,
					   (unsigned long long)forbidden[f][1]);
				check_call(&abis[a], (uint32_t)nr,
					   (uint64_t[6]){forbidden[f][0], SOCK_RAW, proto},
					   RET_REFUSED, "socket(%llu, SOCK_RAW, %#llx)",
					   (unsigned long long)forbidden[f][0],
					   (unsigned long long)proto);
			}
	}
}

/*
 * NETLINK_ROUTE with garbage above the protocol: the kernel would open a
 * NETLINK_ROUTE socket.  64-bit ABIs compare all 64 bits and refuse it
 * (closed, by design); the others see only the low half.
 */
Test(seccomp_rules, netlink_route_with_upper_bits_fails_closed_on_64_bit_abis)
{
	for (size_t a = 0; a < N_ABIS; a++) {
		long nr = nr_of(&abis[a], "socket");
		uint64_t proto = 1ull << 32 | NETLINK_ROUTE;

		check_call(&abis[a], (uint32_t)nr, (uint64_t[6]){AF_NETLINK, SOCK_RAW, proto},
			   abis[a].wide ? RET_REFUSED : SECCOMP_RET_ALLOW,
			   "socket(AF_NETLINK, SOCK_RAW, %#llx)", (unsigned long long)proto);
	}
}

/*
 * AF_INET with garbage above: the kernel would create an AF_INET socket.
 * 64-bit ABIs compare all 64 bits and refuse it (closed, by design); the
 * others see only the low half, which is what the kernel uses.
 */
Test(seccomp_rules, an_allowed_family_with_upper_bits_fails_closed_on_64_bit_abis)
{
	for (size_t a = 0; a < N_ABIS; a++) {
		long nr = nr_of(&abis[a], "socket");
		uint64_t fam = 1ull << 32 | AF_INET;

		check_call(&abis[a], (uint32_t)nr, (uint64_t[6]){fam},
			   abis[a].wide ? RET_REFUSED : SECCOMP_RET_ALLOW, "socket(%#llx)",
			   (unsigned long long)fam);
	}
}

Test(seccomp_rules, ioctl_refuses_terminal_injection_whatever_the_upper_bits)
{
	static const uint64_t bad[] = {TIOCSTI, TIOCLINUX}, good[] = {TCGETS, FIONREAD, TIOCGWINSZ};
	static const uint64_t upper[] = {0, 1, 0xffffffff};

	for (size_t a = 0; a < N_ABIS; a++) {
		long nr = nr_of(&abis[a], "ioctl");

		cr_assert_geq(nr, 0, "no ioctl on %s", abis[a].name);
		for (size_t u = 0; u < LEN(upper); u++) {
			for (size_t i = 0; i < LEN(bad); i++)
				check_call(&abis[a], (uint32_t)nr,
					   (uint64_t[6]){0, upper[u] << 32 | bad[i]}, RET_REFUSED,
					   "ioctl(0, %#llx)",
					   (unsigned long long)(upper[u] << 32 | bad[i]));
			for (size_t i = 0; i < LEN(good); i++)
				check_call(&abis[a], (uint32_t)nr,
					   (uint64_t[6]){0, upper[u] << 32 | good[i]},
					   SECCOMP_RET_ALLOW, "ioctl(0, %#llx)",
					   (unsigned long long)(upper[u] << 32 | good[i]));
		}
	}
}

Test(seccomp_rules, x86_socketcall_refuses_sys_socket_and_allows_the_rest)
{
	long nr = nr_of(ABI_X86, "socketcall");

	cr_assert_geq(nr, 0, "no socketcall on x86");
	check_call(ABI_X86, (uint32_t)nr, (uint64_t[6]){SYS_SOCKET, 0x1000}, RET_REFUSED,
		   "socketcall(SYS_SOCKET)");
	for (uint64_t call = SYS_BIND; call <= SYS_SENDMMSG; call++)
		check_call(ABI_X86, (uint32_t)nr, (uint64_t[6]){call, 0x1000}, SECCOMP_RET_ALLOW,
			   "socketcall(%llu)", (unsigned long long)call);
	for (size_t a = 0; a < N_ABIS; a++)
		if (&abis[a] != ABI_X86)
			cr_assert_lt(nr_of(&abis[a], "socketcall"), 0, "socketcall exists on %s",
				     abis[a].name);
}

Test(seccomp_rules, calls_from_an_unknown_abi_kill_the_process)
{
	static const uint32_t arches[] = {AUDIT_ARCH_PPC64LE, AUDIT_ARCH_RISCV64, AUDIT_ARCH_S390X,
					  AUDIT_ARCH_MIPS, 0};
	static const uint32_t nrs[] = {0, 1, 59, 61, 165, 435};
	static const uint64_t zero[6];
	const struct prog *progs[] = {&tree, &flat};

	for (size_t p = 0; p < 2; p++)
		for (size_t a = 0; a < LEN(arches); a++)
			for (size_t i = 0; i < LEN(nrs); i++) {
				uint32_t got = verdict(progs[p], arches[a], nrs[i], zero);

				cr_assert_eq(got, SECCOMP_RET_KILL_PROCESS,
					     "arch %#x syscall %u: the %s filter says %s",
					     arches[a], nrs[i], progs[p]->label, vname(got).s);
			}
}

/* ---- the text ------------------------------------------------------------- */

static char *
generate(bool binary_tree, bool pfc, size_t *len)
{
	struct textbuf tb = {0};
	char err[256];

	cr_assert_eq(seccomp_generate(binary_tree, pfc, &tb, err, sizeof(err)), 0,
		     "seccomp_generate: %s", err);
	*len = tb.len;
	return tb.data;
}

/* The section of PFC for ARCH: from its heading to the next arch (or the end). */
static char *
pfc_section(const char *pfc, const char *arch)
{
	char head[64];
	const char *s, *e;

	snprintf(head, sizeof(head), "# filter for arch %s (", arch);
	s = strstr(pfc, head);
	cr_assert_not_null(s, "no section for %s in the PFC text", arch);
	e = strstr(s + 1, "# filter for arch ");
	if (!e)
		e = strstr(s, "# invalid architecture action");
	cr_assert_not_null(e, "the %s section does not end", arch);
	return strndup(s, (size_t)(e - s));
}

Test(seccomp_text, the_pfc_tests_the_five_abis_in_order_and_kills_the_rest)
{
	for (int t = 0; t < 2; t++) {
		size_t len;
		char *pfc = generate(t, true, &len);
		const char *prev = pfc;

		for (size_t a = 0; a < N_ABIS; a++) {
			char head[64];
			const char *at;

			snprintf(head, sizeof(head), "# filter for arch %s (", abis[a].name);
			at = strstr(pfc, head);
			cr_assert_not_null(at, "no \"%s\" in the PFC text", head);
			cr_assert_gt(at, prev, "%s is out of order in the PFC text", abis[a].name);
			prev = at;
		}
		cr_assert_not_null(
		    strstr(prev, "# invalid architecture action\naction KILL_PROCESS;"),
		    "the PFC text does not kill other architectures");
		free(pfc);
	}
}

Test(seccomp_text, i386_only_calls_appear_in_the_x86_section_alone)
{
	static const char *const only_x86[] = {"\"vm86\"", "\"vm86old\"", "\"stime\""};
	size_t len;
	char *pfc = generate(true, true, &len);

	for (size_t a = 0; a < N_ABIS; a++) {
		char *sec = pfc_section(pfc, abis[a].name);
		bool x86 = &abis[a] == ABI_X86;

		for (size_t i = 0; i < LEN(only_x86); i++)
			cr_assert_eq(strstr(sec, only_x86[i]) != NULL, x86,
				     "%s %s in the %s section", only_x86[i],
				     x86 ? "missing" : "present", abis[a].name);
		free(sec);
	}
	free(pfc);
}

/* libseccomp prints a call an ABI lacks under a pseudo number such as 4294957225. */
Test(seccomp_text, the_pfc_names_no_call_an_abi_lacks)
{
	size_t len;
	char *pfc = generate(true, true, &len);
	size_t calls = 0;

	for (const char *p = pfc; (p = strstr(p, "# filter for syscall \"")); p++) {
		const char *num = strstr(p, "\" (");
		unsigned long long nr;

		cr_assert_not_null(num);
		nr = strtoull(num + 3, NULL, 10);
		cr_assert_lt(nr, 0x80000000ull, "a pseudo syscall number in: %.60s", p);
		calls++;
	}
	cr_assert_gt(calls, 5 * 60, "only %zu rules in the PFC text", calls);
	free(pfc);
}

Test(seccomp_text, two_generations_give_identical_bytes)
{
	for (int t = 0; t < 2; t++)
		for (int pfc = 0; pfc < 2; pfc++) {
			size_t l1, l2;
			char *a = generate(t, pfc, &l1), *b = generate(t, pfc, &l2);

			cr_assert(l1 == l2 && !memcmp(a, b, l1),
				  "two %s %s outputs differ (%zu and %zu bytes)",
				  t ? "binary-tree" : "linear", pfc ? "PFC" : "BPF", l1, l2);
			free(a);
			free(b);
		}
}

Test(seccomp_text, the_linear_and_binary_tree_programs_differ)
{
	size_t l1, l2;
	char *a = generate(true, false, &l1), *b = generate(false, false, &l2);

	cr_assert(l1 != l2 || memcmp(a, b, l1), "the optimisation switch changes nothing");
	free(a);
	free(b);
}

static char *
emit(int (*fn)(const struct policy *, enum target, struct diag *, struct textbuf *), size_t *len)
{
	static const struct policy none;
	struct arena *arena = arena_new();
	struct textbuf tb = {0};
	struct diag d;

	diag_init(&d, arena, "agent.yaml", NULL, 0);
	cr_assert_eq(fn(&none, TARGET_LINUX, &d, &tb), 0, "the emitter failed");
	cr_assert_eq(d.errors, 0);
	arena_free(arena);
	*len = tb.len;
	return tb.data;
}

Test(seccomp_text, emit_seccomp_is_a_comment_header_then_the_pfc)
{
	size_t len, plen;
	char *text = emit(emit_seccomp, &len), *pfc = generate(true, true, &plen);
	char *again;

	cr_assert(len > plen && !strcmp(text + len - plen, pfc),
		  "the text does not end with the binary-tree PFC");
	for (const char *p = text; p < text + len - plen; p = strchr(p, '\n') + 1)
		cr_assert_eq(*p, '#', "a header line is not a comment: %.40s", p);
	cr_assert_not_null(strstr(text, "x86_64 x86 x32 aarch64 arm"), "no ABI list");
	cr_assert_not_null(strstr(text, "same for every policy"));
	cr_assert_not_null(strstr(text, "Default action ALLOW"));
	again = emit(emit_seccomp, &plen);
	cr_assert(plen == len && !memcmp(text, again, len), "two runs differ");
	free(text);
	free(pfc);
	free(again);
}

Test(seccomp_text, emit_seccomp_bpf_is_the_binary_tree_program)
{
	size_t len, blen;
	char *bin = emit(emit_seccomp_bpf, &len), *bpf = generate(true, false, &blen);

	cr_assert(len == blen && !memcmp(bin, bpf, len), "emit_seccomp_bpf differs");
	free(bin);
	free(bpf);
}

/* ---- the standalone program, and the variant omnibox-init derives -------- */

/* The program of PROG's kind (tree or linear) as libseccomp builds it with SCMP_ACT_NOTIFY. */
static struct textbuf
generate_reporting(const struct prog *p)
{
	struct textbuf tb = {0};
	char err[256];

	cr_assert_eq(seccomp_generate_as(p == &tree, false, true, &tb, err, sizeof(err)), 0,
		     "seccomp_generate_as: %s", err);
	return tb;
}

static size_t
count_returns(const struct sock_filter *insns, size_t n, uint32_t ret)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		k += insns[i].code == (BPF_RET | BPF_K) && insns[i].k == ret;
	return k;
}

/* Returns whose action is USER_NOTIF, whatever their data. */
static size_t
count_reports(const struct sock_filter *insns, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		k += BPF_CLASS(insns[i].code) == BPF_RET &&
		     (insns[i].k & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_USER_NOTIF;
	return k;
}

/* What bwrap --seccomp, a container runtime or any other loader gets: no listener needed. */
Test(seccomp_rewrite, the_emitted_program_refuses_with_eperm_and_reports_nothing)
{
	const struct prog *progs[] = {&tree, &flat};
	size_t len, tlen;
	char *bin = emit(emit_seccomp_bpf, &len), *text = emit(emit_seccomp, &tlen);
	char notify[32];

	for (size_t i = 0; i < LEN(progs); i++) {
		const struct prog *p = progs[i];

		cr_assert_eq(count_reports(p->insns, p->n), 0,
			     "the %s program returns SECCOMP_RET_USER_NOTIF: without a listener "
			     "its refusals fail with ENOSYS",
			     p->label);
		cr_assert_gt(count_returns(p->insns, p->n, RET_EPERM), 0,
			     "the %s program refuses nothing with EPERM", p->label);
		cr_assert_gt(count_returns(p->insns, p->n, RET_ENOSYS), 0,
			     "the %s program has no ENOSYS for clone3", p->label);
	}
	cr_assert_eq(
	    count_reports((const struct sock_filter *)bin, len / sizeof(struct sock_filter)), 0,
	    "--emit=seccomp-bpf reports");
	snprintf(notify, sizeof(notify), "action 0x%08x", SECCOMP_RET_USER_NOTIF);
	cr_assert_null(strstr(text, notify), "--emit=seccomp reports: %s", notify);
	cr_assert_null(strstr(text, "action NOTIFY"), "--emit=seccomp reports");
	cr_assert_not_null(strstr(text, "action ERRNO(1);"), "--emit=seccomp refuses nothing");
	free(bin);
	free(text);
}

/*
 * Instruction by instruction: the same code, jumps and constant, except a
 * return of ERRNO(EPERM) that became USER_NOTIF; every such return did;
 * and the result is libseccomp's own build with SCMP_ACT_NOTIFY.
 */
Test(seccomp_rewrite, the_reporting_variant_differs_only_in_the_refusal_action)
{
	const struct prog *progs[] = {&tree, &flat};

	for (size_t i = 0; i < LEN(progs); i++) {
		const struct prog *p = progs[i];
		struct textbuf want = generate_reporting(p);
		struct sock_filter *out = malloc(p->tb.len);
		size_t refusals = count_returns(p->insns, p->n, RET_EPERM), turned = 0, changed = 0;

		cr_assert_not_null(out);
		turned = filter_eperm_to_notify(p->insns, out, p->n);
		for (size_t j = 0; j < p->n; j++) {
			const struct sock_filter *a = &p->insns[j], *b = &out[j];

			cr_assert(a->code == b->code && a->jt == b->jt && a->jf == b->jf,
				  "%s: instruction %zu changed beyond its constant", p->label, j);
			if (a->k == b->k) {
				cr_assert(a->code != (BPF_RET | BPF_K) || a->k != RET_EPERM,
					  "%s: the EPERM return at %zu was left", p->label, j);
				continue;
			}
			cr_assert(a->code == (BPF_RET | BPF_K) && a->k == RET_EPERM &&
				      b->k == RET_REPORTED,
				  "%s: instruction %zu went from %s to %s", p->label, j,
				  vname(a->k).s, vname(b->k).s);
			changed++;
		}
		cr_assert(refusals > 0 && turned == refusals && changed == refusals,
			  "%s: %zu EPERM returns, %zu turned, %zu changed", p->label, refusals,
			  turned, changed);
		cr_assert_eq(count_returns(out, p->n, RET_ENOSYS),
			     count_returns(p->insns, p->n, RET_ENOSYS), "%s: clone3's ENOSYS moved",
			     p->label);
		cr_assert(want.len == p->tb.len && !memcmp(out, want.data, want.len),
			  "the reporting %s variant (%zu bytes) is not libseccomp's build with "
			  "SCMP_ACT_NOTIFY (%zu bytes)",
			  p->label, p->tb.len, want.len);
		free(out);
		tb_free(&want);
	}
}

Test(seccomp_rewrite, changes_returns_of_errno_eperm_only)
{
	const struct sock_filter prog[] = {
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, RET_EPERM, 0, 1),
	    BPF_STMT(BPF_RET | BPF_K, RET_EPERM),
	    BPF_STMT(BPF_LD | BPF_IMM, RET_EPERM),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EACCES),
	    BPF_STMT(BPF_RET | BPF_K, RET_ENOSYS),
	    BPF_STMT(BPF_RET | BPF_K, RET_EPERM | 0x100),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRACE | EPERM),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	    BPF_STMT(BPF_RET | BPF_K, RET_EPERM),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_filter want[LEN(prog)], out[LEN(prog)], in_place[LEN(prog)];
	struct sock_filter before[LEN(prog)];

	memcpy(want, prog, sizeof(prog));
	memcpy(before, prog, sizeof(prog));
	want[2].k = RET_REPORTED;
	want[9].k = RET_REPORTED;
	cr_assert_eq(filter_eperm_to_notify(prog, out, LEN(prog)), 2);
	cr_assert(!memcmp(out, want, sizeof(want)), "more than the two returns changed");
	cr_assert(!memcmp(prog, before, sizeof(prog)), "the rewrite changed its input");
	memcpy(in_place, prog, sizeof(prog));
	cr_assert_eq(filter_eperm_to_notify(in_place, in_place, LEN(prog)), 2);
	cr_assert(!memcmp(in_place, want, sizeof(want)), "in place, it rewrote otherwise");
	cr_assert_eq(filter_eperm_to_notify(want, out, LEN(prog)), 0,
		     "a second rewrite changed more");
}

/* FD: a memfd holding LEN bytes of DATA, its offset at the end (as written). */
static int
memfd_with(const void *data, size_t len)
{
	int fd = memfd_create("test-seccomp", MFD_CLOEXEC);

	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, data, len), (ssize_t)len);
	return fd;
}

Test(seccomp_rewrite, filter_read_takes_the_program_whatever_the_offset)
{
	struct sock_filter *got;
	size_t n;
	char err[256];
	int fd = memfd_with(tree.insns, tree.tb.len);

	cr_assert_eq(filter_read(fd, &got, &n, err, sizeof(err)), 0, "%s", err);
	cr_assert(n == tree.n && !memcmp(got, tree.insns, tree.tb.len));
	free(got);
	cr_assert_eq(fcntl(fd, F_GETFD), -1, "filter_read left the descriptor open");
}

Test(seccomp_rewrite, filter_read_refuses_what_is_no_program)
{
	static const struct sock_filter ret_a[] = {BPF_STMT(BPF_RET | BPF_A, 0)};
	static const struct sock_filter report[] = {
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF | 1),
	};
	struct sock_filter *got, *big = calloc(BPF_MAXINSNS + 1, sizeof(*big));
	size_t n;
	char err[256];
	struct {
		const char *what;
		const void *data;
		size_t len;
	} bad[] = {
	    {"empty", "", 0},
	    {"a partial instruction", tree.insns, sizeof(struct sock_filter) + 3},
	    {"a return of the accumulator", ret_a, sizeof(ret_a)},
	    {"a report, which nothing may load without a listener", report, sizeof(report)},
	    {"too long", big, (BPF_MAXINSNS + 1) * sizeof(*big)},
	};

	cr_assert_not_null(big);
	for (size_t i = 0; i < LEN(bad); i++) {
		int fd = memfd_with(bad[i].data, bad[i].len);

		cr_assert_eq(filter_read(fd, &got, &n, err, sizeof(err)), -1, "%s: accepted",
			     bad[i].what);
		cr_assert_null(got);
	}
	free(big);
}

/* ---- the interpreter itself ----------------------------------------------- */

#define PROG(...)                                                                                  \
	(const struct sock_filter[]){__VA_ARGS__},                                                 \
	    sizeof((const struct sock_filter[]){__VA_ARGS__}) / sizeof(struct sock_filter)
#define LD_NR BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0)

static uint32_t
run_on(const struct sock_filter *prog, size_t n, int nr)
{
	struct seccomp_data sd = {.nr = nr, .arch = AUDIT_ARCH_X86_64};
	char err[200];
	uint32_t ret;

	cr_assert_eq(bpf_interp_run(prog, n, &sd, &ret, err, sizeof(err)), 0, "refused: %s", err);
	return ret;
}

#define REFUSES(why, ...)                                                                          \
	do {                                                                                       \
		char err_[200] = "";                                                               \
		cr_assert_eq(bpf_interp_check(PROG(__VA_ARGS__), err_, sizeof(err_)), -1,          \
			     "accepted a program with %s", why);                                   \
		cr_assert_not_null(strstr(err_, why), "refused \"%s\" for: %s", why, err_);        \
	} while (0)

/* clang-format off */
static const struct sock_filter arithmetic[] = {
	LD_NR,
	BPF_STMT(BPF_ALU | BPF_ADD | BPF_K, 5),
	BPF_STMT(BPF_LDX | BPF_IMM, 3),
	BPF_STMT(BPF_ALU | BPF_MUL | BPF_X, 0),
	BPF_STMT(BPF_ALU | BPF_SUB | BPF_K, 1),
	BPF_STMT(BPF_ALU | BPF_DIV | BPF_K, 2),
	BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0xff),
	BPF_STMT(BPF_ALU | BPF_OR | BPF_K, 0x100),
	BPF_STMT(BPF_ALU | BPF_XOR | BPF_K, 1),
	BPF_STMT(BPF_ALU | BPF_LSH | BPF_K, 4),
	BPF_STMT(BPF_ALU | BPF_RSH | BPF_K, 2),
	BPF_STMT(BPF_ALU | BPF_NEG, 0),
	BPF_STMT(BPF_ST, 3),
	BPF_STMT(BPF_LD | BPF_IMM, 0),
	BPF_STMT(BPF_LDX | BPF_MEM, 3),
	BPF_STMT(BPF_MISC | BPF_TXA, 0),
	BPF_STMT(BPF_RET | BPF_A, 0),
};

static const struct sock_filter length[] = {
	BPF_STMT(BPF_LD | BPF_W | BPF_LEN, 0),
	BPF_STMT(BPF_RET | BPF_A, 0),
};

static const struct sock_filter divide_by_zero_x[] = {
	BPF_STMT(BPF_LD | BPF_IMM, 9),
	BPF_STMT(BPF_LDX | BPF_IMM, 0),
	BPF_STMT(BPF_ALU | BPF_DIV | BPF_X, 0),
	BPF_STMT(BPF_RET | BPF_K, 5),
};

/* nr == 1 -> 10; nr > 5 -> (nr & 8 ? 30 : 20); nr >= 3 -> 40; else 50 */
static const struct sock_filter branches[] = {
	LD_NR,
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 1, 0, 1),
	BPF_STMT(BPF_RET | BPF_K, 10),
	BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, 5, 0, 3),
	BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, 8, 1, 0),
	BPF_STMT(BPF_RET | BPF_K, 20),
	BPF_STMT(BPF_RET | BPF_K, 30),
	BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 3, 1, 0),
	BPF_STMT(BPF_JMP | BPF_JA, 1),
	BPF_STMT(BPF_RET | BPF_K, 40),
	BPF_STMT(BPF_RET | BPF_K, 50),
};
/* clang-format on */

Test(bpf_interp, arithmetic_scratch_and_registers_compute_as_in_the_kernel)
{
	uint32_t want = 7;

	want = (((((((want + 5) * 3 - 1) / 2) & 0xff) | 0x100) ^ 1) << 4) >> 2;
	want = 0u - want;
	cr_assert_eq(run_on(arithmetic, LEN(arithmetic), 7), want);
	cr_assert_eq(run_on(length, LEN(length), 0), sizeof(struct seccomp_data));
	/* Division by a zero X ends the program with 0. */
	cr_assert_eq(run_on(divide_by_zero_x, LEN(divide_by_zero_x), 0), 0);
}

Test(bpf_interp, jumps_take_the_branch_their_comparison_selects)
{
	static const struct {
		int nr;
		uint32_t want;
	} cases[] = {{1, 10}, {6, 20}, {9, 30}, {3, 40}, {5, 40}, {0, 50}, {2, 50}};

	for (size_t i = 0; i < LEN(cases); i++)
		cr_assert_eq(run_on(branches, LEN(branches), cases[i].nr), cases[i].want, "nr %d",
			     cases[i].nr);
}

Test(bpf_interp, refuses_what_the_kernel_refuses)
{
	REFUSES("not allowed", BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 0), BPF_STMT(BPF_RET | BPF_K, 0));
	REFUSES("not allowed", BPF_STMT(BPF_ALU | BPF_MOD | BPF_K, 3),
		BPF_STMT(BPF_RET | BPF_K, 0));
	REFUSES("leaves the program", LD_NR, BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 1, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, 0));
	REFUSES("leaves the program", BPF_STMT(BPF_JMP | BPF_JA, 1), BPF_STMT(BPF_RET | BPF_K, 0));
	REFUSES("outside struct seccomp_data", BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 64),
		BPF_STMT(BPF_RET | BPF_K, 0));
	REFUSES("unaligned", BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 2), BPF_STMT(BPF_RET | BPF_K, 0));
	REFUSES("does not end with a return", BPF_STMT(BPF_RET | BPF_K, 0), LD_NR);
	REFUSES("read before written", BPF_STMT(BPF_LD | BPF_MEM, 0), BPF_STMT(BPF_RET | BPF_A, 0));
	REFUSES("read before written", LD_NR, BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 1, 0, 1),
		BPF_STMT(BPF_ST, 0), BPF_STMT(BPF_LD | BPF_MEM, 0), BPF_STMT(BPF_RET | BPF_A, 0));
	REFUSES("scratch word 16", BPF_STMT(BPF_ST, 16), BPF_STMT(BPF_RET | BPF_K, 0));
	REFUSES("division by constant 0", BPF_STMT(BPF_ALU | BPF_DIV | BPF_K, 0),
		BPF_STMT(BPF_RET | BPF_K, 0));
}

Test(bpf_interp, refuses_an_empty_program)
{
	static const struct sock_filter none[1] = {BPF_STMT(BPF_RET | BPF_K, 0)};
	char err[200];

	cr_assert_eq(bpf_interp_check(none, 0, err, sizeof(err)), -1);
	cr_assert_not_null(strstr(err, "0 instructions"), "refused for: %s", err);
}

/* ---- the filter in the kernel --------------------------------------------- */

struct outcome {
	long ret;
	int err;
	int status; /* of the child */
};

static const char *
errname(int e)
{
	const char *s = strerrorname_np(e);

	return s ? s : "?";
}

/*
 * Run PROBE in a child, under FILTER unless it is NULL, and return what it
 * returned, its errno and how the child ended.  ret is -2 when installing
 * the filter failed.
 */
static struct outcome
run_probe(const struct prog *filter, long (*probe)(void))
{
	struct outcome o = {-3, 0, 0};
	int fds[2];
	pid_t pid;

	cr_assert_eq(pipe2(fds, O_CLOEXEC), 0);
	pid = fork();
	cr_assert_geq(pid, 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		struct sock_fprog fp = {0};

		close(fds[0]);
		if (filter) {
			fp.len = (unsigned short)filter->n;
			fp.filter = (struct sock_filter *)filter->insns;
			if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
			    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fp)) {
				o.ret = -2;
				o.err = errno;
				_exit(write(fds[1], &o, sizeof(o)) == sizeof(o) ? 0 : 1);
			}
		}
		errno = 0;
		o.ret = probe();
		o.err = errno;
		_exit(write(fds[1], &o, sizeof(o)) == sizeof(o) ? 0 : 1);
	}
	close(fds[1]);
	if (read(fds[0], &o, sizeof(o)) != sizeof(o))
		o.ret = -3;
	close(fds[0]);
	cr_assert_eq(waitpid(pid, &o.status, 0), pid);
	return o;
}

static void
assert_outcome_reported(const char *what, struct outcome o)
{
	cr_assert_neq(o.ret, -2, "%s: installing the filter failed: %s", what, errname(o.err));
	cr_assert(WIFEXITED(o.status) && o.ret != -3, "%s: the child died (%s %d) without a report",
		  what, WIFSIGNALED(o.status) ? "signal" : "status",
		  WIFSIGNALED(o.status) ? WTERMSIG(o.status) : WEXITSTATUS(o.status));
}

static void
assert_refused(const char *what, long (*probe)(void), const struct prog *filter, int e)
{
	struct outcome o = run_probe(filter, probe);

	assert_outcome_reported(what, o);
	cr_assert(o.ret == -1 && o.err == e,
		  "%s under the %s filter: returned %ld, errno %s; expected %s", what,
		  filter->label, o.ret, errname(o.err), errname(e));
	if (geteuid() != 0)
		return;
	o = run_probe(NULL, probe);
	assert_outcome_reported(what, o);
	cr_assert(o.ret != -1 || o.err != e,
		  "%s fails with %s even without the filter: this test proves nothing", what,
		  errname(e));
}

static void
assert_works(const char *what, long (*probe)(void))
{
	struct outcome o = run_probe(&tree, probe);

	assert_outcome_reported(what, o);
	cr_assert_geq(o.ret, 0, "%s under the filter: returned %ld, errno %s", what, o.ret,
		      errname(o.err));
}

#define REFUSED(probe, e) assert_refused(#probe, probe, &tree, e)
#define WORKS(probe) assert_works(#probe, probe)

/* A call that also forks a child (clone without CLONE_VM) must not leave it running. */
static long
reap(long pid)
{
	int saved = errno;

	if (pid == 0)
		_exit(0);
	if (pid > 0)
		waitpid((pid_t)pid, NULL, 0);
	errno = saved;
	return pid;
}

static long
unshare_user(void)
{
	return unshare(CLONE_NEWUSER);
}

/* Without the filter: ENOENT, as the target does not exist (and nothing is mounted). */
static long
mount_tmpfs(void)
{
	return syscall(SYS_mount, "none", "/nonexistent/omnibox-seccomp", "tmpfs", 0, NULL);
}

static long
ptrace_traceme(void)
{
	return ptrace(PTRACE_TRACEME, 0, NULL, NULL);
}

static long
keyctl_session(void)
{
	return syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0);
}

/* Without the filter: EINVAL, no such command. */
static long
bpf_call(void)
{
	return syscall(SYS_bpf, 0x7fff, NULL, 0);
}

static long
socket_netlink_audit(void)
{
	return socket(AF_NETLINK, SOCK_RAW, NETLINK_AUDIT);
}

static long
socket_netlink_sock_diag(void)
{
	return socket(AF_NETLINK, SOCK_DGRAM, NETLINK_SOCK_DIAG);
}

static long
socket_netlink_generic(void)
{
	return socket(AF_NETLINK, SOCK_RAW, NETLINK_GENERIC);
}

static long
socket_packet(void)
{
	return socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
}

static long
clone_newnet(void)
{
	return reap(syscall(SYS_clone, CLONE_NEWNET | SIGCHLD, 0, 0, 0, 0));
}

static long
clone_newuser_upper_bits(void)
{
	return reap(syscall(SYS_clone, (1ul << 40) | CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0));
}

/* Without the filter: EINVAL, the argument block is too small. */
static long
clone3_call(void)
{
	return syscall(SYS_clone3, NULL, 0);
}

static long
io_uring_setup_call(void)
{
	uint32_t params[30] = {0}; /* struct io_uring_params is 120 bytes */

	return syscall(SYS_io_uring_setup, 4, params);
}

static int
pty_slave(void)
{
	int m = posix_openpt(O_RDWR | O_NOCTTY);

	if (m < 0 || grantpt(m) || unlockpt(m))
		return -1;
	return open(ptsname(m), O_RDWR | O_NOCTTY);
}

static long
tiocsti(void)
{
	char c = ' ';
	int fd = pty_slave();

	return fd < 0 ? -100 : ioctl(fd, TIOCSTI, &c);
}

static long
tiocsti_upper_bits(void)
{
	char c = ' ';
	int fd = pty_slave();

	return fd < 0 ? -100 : syscall(SYS_ioctl, fd, (1ul << 32) | TIOCSTI, &c);
}

/* Without the filter: a descriptor for the mount at / (no OPEN_TREE_CLONE: no capability). */
static long
open_tree_attr_root(void)
{
	long fd = syscall(467, AT_FDCWD, "/", O_CLOEXEC, NULL, 0);

	if (fd >= 0)
		close((int)fd);
	return fd;
}

/* Without the filter: EFAULT or EINVAL, no request. */
static long
listmount_call(void)
{
	return syscall(458, NULL, NULL, 0, 0);
}

static long
statmount_call(void)
{
	return syscall(457, NULL, NULL, 0, 0);
}

/* Without the filter: ENOSYS, no such call yet. */
static long
future_call(void)
{
	return syscall(1000, 0, 0, 0, 0);
}

Test(seccomp_kernel, open_tree_attr_listmount_statmount_and_future_calls_fail_with_eperm)
{
	REFUSED(open_tree_attr_root, EPERM);
	REFUSED(listmount_call, EPERM);
	REFUSED(statmount_call, EPERM);
	REFUSED(future_call, EPERM);
	assert_refused("open_tree_attr_root", open_tree_attr_root, &flat, EPERM);
}

Test(seccomp_kernel, unshare_of_a_user_namespace_fails_with_eperm)
{
	REFUSED(unshare_user, EPERM);
}

Test(seccomp_kernel, mount_fails_with_eperm)
{
	REFUSED(mount_tmpfs, EPERM);
}

Test(seccomp_kernel, the_linear_filter_refuses_too)
{
	assert_refused("mount_tmpfs", mount_tmpfs, &flat, EPERM);
	assert_refused("clone3_call", clone3_call, &flat, ENOSYS);
}

Test(seccomp_kernel, ptrace_fails_with_eperm)
{
	REFUSED(ptrace_traceme, EPERM);
}

Test(seccomp_kernel, keyctl_fails_with_eperm)
{
	REFUSED(keyctl_session, EPERM);
}

Test(seccomp_kernel, bpf_fails_with_eperm)
{
	REFUSED(bpf_call, EPERM);
}

Test(seccomp_kernel, netlink_sockets_but_route_and_packet_sockets_fail_with_eperm)
{
	REFUSED(socket_netlink_audit, EPERM);
	REFUSED(socket_netlink_sock_diag, EPERM);
	REFUSED(socket_netlink_generic, EPERM);
	REFUSED(socket_packet, EPERM);
	assert_refused("socket_netlink_audit", socket_netlink_audit, &flat, EPERM);
}

Test(seccomp_kernel, clone_of_a_network_namespace_fails_with_eperm)
{
	REFUSED(clone_newnet, EPERM);
	REFUSED(clone_newuser_upper_bits, EPERM);
}

Test(seccomp_kernel, clone3_fails_with_enosys)
{
	REFUSED(clone3_call, ENOSYS);
}

Test(seccomp_kernel, io_uring_setup_fails_with_eperm)
{
	REFUSED(io_uring_setup_call, EPERM);
}

Test(seccomp_kernel, tiocsti_on_a_pty_fails_with_eperm)
{
	REFUSED(tiocsti, EPERM);
	REFUSED(tiocsti_upper_bits, EPERM);
}

static void *
thread_main(void *arg)
{
	return arg;
}

static long
threads(void)
{
	static int token;
	pthread_t t;
	void *back = NULL;
	int rc = pthread_create(&t, NULL, thread_main, &token);

	if (!rc)
		rc = pthread_join(t, &back);
	errno = rc;
	return rc || back != &token ? -1 : 0;
}

static long
fork_and_wait(void)
{
	int status;
	pid_t pid = fork();

	if (pid == 0)
		_exit(42);
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) && WEXITSTATUS(status) == 42 ? 0 : -1;
}

static long
exec_true(void)
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

static long
file_io(void)
{
	char path[] = "/tmp/omnibox-seccomp-XXXXXX", buf[6] = "";
	int fd = mkstemp(path);
	bool ok;

	if (fd < 0)
		return -1;
	ok = write(fd, "hello", 5) == 5 && lseek(fd, 0, SEEK_SET) == 0 && read(fd, buf, 5) == 5 &&
	     !strcmp(buf, "hello");
	unlink(path);
	close(fd);
	return ok ? 0 : -1;
}

static long
socket_inet(void)
{
	return socket(AF_INET, SOCK_STREAM, 0);
}

static long
socket_inet6_and_unix(void)
{
	long fd = socket(AF_INET6, SOCK_DGRAM, 0);

	return fd < 0 ? fd : socket(AF_UNIX, SOCK_STREAM, 0);
}

static long
ioctl_fionread(void)
{
	int fds[2], n = -1;

	if (pipe(fds) || write(fds[1], "abc", 3) != 3 || ioctl(fds[0], FIONREAD, &n))
		return -1;
	return n == 3 ? 0 : -1;
}

/*
 * What getifaddrs(3) does: a NETLINK_ROUTE socket, and a dump of the
 * links.  Returns the bytes of the first answer.
 */
static long
netlink_route_dump(void)
{
	struct {
		struct nlmsghdr h;
		struct rtgenmsg g;
	} req = {.h = {.nlmsg_len = sizeof(req),
		       .nlmsg_type = RTM_GETLINK,
		       .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP,
		       .nlmsg_seq = 1},
		 .g = {.rtgen_family = AF_UNSPEC}};
	struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
	char buf[8192];
	long fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE), got;

	if (fd < 0)
		return fd;
	if (sendto((int)fd, &req, sizeof(req), 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0)
		return -1;
	got = recv((int)fd, buf, sizeof(buf), 0);
	close((int)fd);
	return got;
}

/* ps, numactl and glibc ask for the policy of the calling thread. */
static long
get_mempolicy_self(void)
{
	int mode = -1;
	unsigned long mask[16] = {0};

	return syscall(SYS_get_mempolicy, &mode, mask, sizeof(mask) * 8, NULL, 0);
}

Test(seccomp_kernel, netlink_route_sockets_and_get_mempolicy_work)
{
	WORKS(netlink_route_dump);
	WORKS(get_mempolicy_self);
}

Test(seccomp_kernel, threads_fork_exec_file_io_and_inet_sockets_work)
{
	WORKS(threads);
	WORKS(fork_and_wait);
	WORKS(exec_true);
	WORKS(file_io);
	WORKS(socket_inet);
	WORKS(socket_inet6_and_unix);
	WORKS(ioctl_fionread);
}

/* ---- with a listener, as omnibox-init loads it -------------------------------- */

/* What a child under the reporting filter saw, and what this process was told. */
struct served {
	struct outcome o;
	unsigned reports;
	struct seccomp_data last; /* of the last report */
};

enum listener_use {
	SERVE,	     /* this process answers each report with EPERM, as omnibox-run */
	CLOSE,	     /* the listener is closed before the call: nobody to answer */
	NO_LISTENER, /* filter_install without a listener wanted */
	TAKEN	     /* wanted, but a filter loaded before holds the listener already */
};

/* An allow-all filter with a listener of its own, as a container runtime may load. */
static int
load_listening_filter(void)
{
	struct sock_filter allow[] = {BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
	struct sock_fprog fp = {.len = 1, .filter = allow};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER,
			    &fp);
}

static void
send_fd(int sock, int fd)
{
	if (fds_send_byte(sock, '1', fd) < 0)
		_exit(3);
}

static int
recv_fd(int sock)
{
	char c;
	int fd;

	cr_assert_eq(fds_recv_byte(sock, &c, &fd, 0), 1, "no ready message");
	return fd;
}

static struct served
run_reported(long (*probe)(void), enum listener_use use)
{
	struct served s = {.o = {-3, 0, 0}};
	int sv[2], listener;
	pid_t pid;

	cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		struct sock_filter *copy = malloc(tree.tb.len);
		char err[256];
		int l = -1;

		close(sv[0]);
		memcpy(copy, tree.insns, tree.tb.len);
		if ((use == TAKEN && load_listening_filter() < 0) ||
		    filter_install(copy, tree.n, use != NO_LISTENER, &l, err, sizeof(err)) < 0 ||
		    memcmp(copy, tree.insns, tree.tb.len) ||
		    ((use == SERVE || use == CLOSE) && l < 0) || (use == TAKEN && l >= 0)) {
			s.o.ret = -2;
			s.o.err = errno;
			send_fd(sv[1], -1);
			_exit(write(sv[1], &s.o, sizeof(s.o)) == sizeof(s.o) ? 0 : 1);
		}
		send_fd(sv[1], use == SERVE ? l : -1);
		if (l >= 0)
			close(l);
		errno = 0;
		s.o.ret = probe();
		s.o.err = errno;
		_exit(write(sv[1], &s.o, sizeof(s.o)) == sizeof(s.o) ? 0 : 1);
	}
	close(sv[1]);
	listener = recv_fd(sv[0]);
	for (;;) {
		struct pollfd p[2] = {{.fd = sv[0], .events = POLLIN},
				      {.fd = listener, .events = POLLIN}};
		struct seccomp_notif req = {0};
		struct seccomp_notif_resp resp = {0};

		cr_assert_geq(poll(p, listener >= 0 ? 2 : 1, 10000), 1, "the child hangs");
		if (p[0].revents) {
			if (read(sv[0], &s.o, sizeof(s.o)) != sizeof(s.o))
				s.o.ret = -3;
			break;
		}
		if (!(p[1].revents & POLLIN))
			continue;
		cr_assert_eq(ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &req), 0, "NOTIF_RECV: %s",
			     strerror(errno));
		s.reports++;
		s.last = req.data;
		resp.id = req.id;
		resp.error = -EPERM;
		cr_assert_eq(ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp), 0, "NOTIF_SEND: %s",
			     strerror(errno));
	}
	if (listener >= 0)
		close(listener);
	close(sv[0]);
	cr_assert_eq(waitpid(pid, &s.o.status, 0), pid);
	assert_outcome_reported("the call", s.o);
	return s;
}

static void
need_user_notif(void)
{
	uint32_t action = SECCOMP_RET_USER_NOTIF;

	if (syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) != 0)
		cr_skip_test("this kernel has no SECCOMP_RET_USER_NOTIF");
}

Test(seccomp_listener, a_refused_call_waits_for_the_answer_and_fails_with_eperm)
{
	struct served s;

	need_user_notif();
	s = run_reported(mount_tmpfs, SERVE);
	cr_assert(s.o.ret == -1 && s.o.err == EPERM, "mount: returned %ld, errno %s", s.o.ret,
		  errname(s.o.err));
	cr_assert_eq(s.reports, 1, "%u reports for one mount", s.reports);
	cr_assert_eq(s.last.nr, SYS_mount);
	cr_assert_eq(s.last.arch, seccomp_arch_native());
	s = run_reported(tiocsti, SERVE);
	cr_assert(s.o.ret == -1 && s.o.err == EPERM && s.reports == 1 && s.last.nr == SYS_ioctl &&
		      s.last.args[1] == TIOCSTI,
		  "TIOCSTI: returned %ld, errno %s, %u reports", s.o.ret, errname(s.o.err),
		  s.reports);
}

Test(seccomp_listener, a_call_newer_than_libseccomp_is_reported_by_its_number)
{
	struct served s;

	need_user_notif();
	s = run_reported(open_tree_attr_root, SERVE);
	cr_assert(s.o.ret == -1 && s.o.err == EPERM && s.reports == 1 && s.last.nr == 467,
		  "open_tree_attr: returned %ld, errno %s, %u reports", s.o.ret, errname(s.o.err),
		  s.reports);
	cr_assert_str_eq(seccomp_table_name(s.last.nr), "open_tree_attr");
}

Test(seccomp_listener, clone3_and_allowed_calls_are_not_reported)
{
	struct served s;

	need_user_notif();
	s = run_reported(clone3_call, SERVE);
	cr_assert(s.o.ret == -1 && s.o.err == ENOSYS, "clone3: returned %ld, errno %s", s.o.ret,
		  errname(s.o.err));
	cr_assert_eq(s.reports, 0, "clone3 was reported");
	s = run_reported(fork_and_wait, SERVE);
	cr_assert(s.o.ret == 0 && s.reports == 0, "fork: returned %ld, %u reports", s.o.ret,
		  s.reports);
}

/* omnibox-run gone: the kernel answers ENOSYS, a refusal still. */
Test(seccomp_listener, with_nobody_to_answer_a_refused_call_fails_with_enosys)
{
	struct served s;

	need_user_notif();
	s = run_reported(mount_tmpfs, CLOSE);
	cr_assert(s.o.ret == -1 && s.o.err == ENOSYS, "mount: returned %ld, errno %s", s.o.ret,
		  errname(s.o.err));
}

Test(seccomp_listener, without_a_listener_the_filter_as_emitted_refuses_with_eperm)
{
	struct served s = run_reported(mount_tmpfs, NO_LISTENER);

	cr_assert(s.o.ret == -1 && s.o.err == EPERM && s.reports == 0,
		  "mount: returned %ld, errno %s, %u reports", s.o.ret, errname(s.o.err),
		  s.reports);
	s = run_reported(unshare_user, NO_LISTENER);
	cr_assert(s.o.ret == -1 && s.o.err == EPERM, "unshare: returned %ld, errno %s", s.o.ret,
		  errname(s.o.err));
}

/* The kernel gives one listener per filter stack (EBUSY): the filter as emitted takes over. */
Test(seccomp_listener, where_another_filter_holds_the_listener_the_filter_refuses_with_eperm)
{
	struct served s;

	need_user_notif();
	s = run_reported(mount_tmpfs, TAKEN);
	cr_assert(s.o.ret == -1 && s.o.err == EPERM && s.reports == 0,
		  "mount: returned %ld, errno %s, %u reports", s.o.ret, errname(s.o.err),
		  s.reports);
}

/* ---- the i386 ABI, through int $0x80 ------------------------------------- */

#if defined(__x86_64__)

/* i386 numbers, from arch/x86/entry/syscalls/syscall_32.tbl. */
enum {
	I386_GETPID = 20,
	I386_MOUNT = 21,
	I386_SOCKETCALL = 102,
	I386_KEYCTL = 288,
	I386_UNSHARE = 310,
	I386_SOCKET = 359,
	I386_STATMOUNT = 457,
	I386_LISTMOUNT = 458,
	I386_OPEN_TREE_ATTR = 467,
};

/* A 32-bit system call from 64-bit code; pointers must be below 4 GiB. */
static long
int80(long nr, long a, long b, long c)
{
	long ret;

	__asm__ volatile("int $0x80"
			 : "=a"(ret)
			 : "a"(nr), "b"(a), "c"(b), "d"(c)
			 : "memory", "r8", "r9", "r10", "r11");
	if ((int)ret < 0 && (int)ret > -4096) {
		errno = -(int)ret;
		return -1;
	}
	return (int)ret;
}

/* Whether int $0x80 works here (without a filter); if not, why not in WHY. */
static bool
ia32_works(char *why, size_t n)
{
	int status;
	pid_t pid = fork();

	cr_assert_geq(pid, 0);
	if (pid == 0) {
		/* The fault, if any, must kill the child (not go to a sanitizer's handler). */
		signal(SIGSEGV, SIG_DFL);
		_exit(int80(I386_GETPID, 0, 0, 0) == getpid() ? 0 : 1);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	if (WIFSIGNALED(status))
		snprintf(why, n, "int $0x80 kills the process (signal %d): no ia32 emulation",
			 WTERMSIG(status));
	else if (WEXITSTATUS(status))
		snprintf(why, n, "int $0x80 getpid does not return the pid: ia32 emulation off");
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static void
require_ia32(void)
{
	char why[128];

	if (!ia32_works(why, sizeof(why)))
		cr_skip_test("%s", why);
}

/* Three 32-bit words below 4 GiB, for socketcall's argument block. */
static long
i386_socketcall(int call, uint32_t a0, uint32_t a1, uint32_t a2)
{
	uint32_t *args = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);

	if (args == MAP_FAILED)
		return -100;
	args[0] = a0;
	args[1] = a1;
	args[2] = a2;
	return int80(I386_SOCKETCALL, call, (long)(uintptr_t)args, 0);
}

static long
i386_unshare_user(void)
{
	return int80(I386_UNSHARE, CLONE_NEWUSER, 0, 0);
}

/* Without the filter: EFAULT, no target path. */
static long
i386_mount(void)
{
	return int80(I386_MOUNT, 0, 0, 0);
}

static long
i386_keyctl(void)
{
	return int80(I386_KEYCTL, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0);
}

static long
i386_socketcall_netlink(void)
{
	return i386_socketcall(SYS_SOCKET, AF_NETLINK, SOCK_RAW, NETLINK_ROUTE);
}

static long
i386_socketcall_inet(void)
{
	return i386_socketcall(SYS_SOCKET, AF_INET, SOCK_STREAM, 0);
}

static long
i386_socket_netlink_audit(void)
{
	return int80(I386_SOCKET, AF_NETLINK, SOCK_RAW, NETLINK_AUDIT);
}

static long
i386_socket_netlink_route(void)
{
	return int80(I386_SOCKET, AF_NETLINK, SOCK_RAW, NETLINK_ROUTE);
}

static long
i386_socket_inet(void)
{
	return int80(I386_SOCKET, AF_INET, SOCK_STREAM, 0);
}

/* Reaches the kernel, which finds no socket: EBADF. */
static long
i386_socketcall_connect(void)
{
	long r = i386_socketcall(SYS_CONNECT, (uint32_t)-1, 0, 0);

	return r == -1 && errno == EBADF ? 0 : -1;
}

static long
i386_getpid(void)
{
	return int80(I386_GETPID, 0, 0, 0) == getpid() ? 0 : -1;
}

/* Runs without ia32 emulation: the numbers above must be the ones the filter's x86 part uses. */
Test(seccomp_ia32, the_i386_numbers_used_here_are_libseccomps)
{
	static const struct {
		const char *name;
		long nr;
	} nrs[] = {{"getpid", I386_GETPID},	    {"mount", I386_MOUNT},
		   {"socketcall", I386_SOCKETCALL}, {"keyctl", I386_KEYCTL},
		   {"unshare", I386_UNSHARE},	    {"socket", I386_SOCKET}};

	for (size_t i = 0; i < LEN(nrs); i++)
		cr_assert_eq(nr_of(ABI_X86, nrs[i].name), nrs[i].nr, "%s is %ld on x86, not %ld",
			     nrs[i].name, nr_of(ABI_X86, nrs[i].name), nrs[i].nr);
}

Test(seccomp_ia32, i386_unshare_mount_and_keyctl_fail_with_eperm)
{
	require_ia32();
	REFUSED(i386_unshare_user, EPERM);
	REFUSED(i386_mount, EPERM);
	REFUSED(i386_keyctl, EPERM);
}

static long
i386_new_mount_calls(void)
{
	static const long nrs[] = {I386_STATMOUNT, I386_LISTMOUNT, I386_OPEN_TREE_ATTR};

	for (size_t i = 0; i < LEN(nrs); i++)
		if (int80(nrs[i], 0, 0, 0) != -1 || errno != EPERM)
			return 0;
	errno = EPERM;
	return -1;
}

Test(seccomp_ia32, i386_statmount_listmount_and_open_tree_attr_fail_with_eperm)
{
	require_ia32();
	REFUSED(i386_new_mount_calls, EPERM);
}

Test(seccomp_ia32, i386_socketcall_sys_socket_fails_with_eperm_for_any_family)
{
	require_ia32();
	REFUSED(i386_socketcall_netlink, EPERM);
	REFUSED(i386_socketcall_inet, EPERM);
}

Test(seccomp_ia32, i386_direct_socket_checks_the_family_and_the_netlink_protocol)
{
	require_ia32();
	REFUSED(i386_socket_netlink_audit, EPERM);
	WORKS(i386_socket_inet);
	WORKS(i386_socket_netlink_route);
}

Test(seccomp_ia32, i386_getpid_and_other_socketcalls_work)
{
	require_ia32();
	WORKS(i386_getpid);
	WORKS(i386_socketcall_connect);
}

#endif

/* ---- the linux_landlock backend's variant ----------------------------------- */

static struct prog ll_tree = {.label = "landlock binary-tree"},
		   ll_flat = {.label = "landlock linear"};

static void
ll_prog_build(struct prog *p, bool binary_tree)
{
	char err[256];

	cr_assert_eq(
	    seccomp_generate_variant(binary_tree, false, false, SECCOMP_LANDLOCK, &p->tb, err, sizeof(err)), 0,
	    "seccomp_generate_variant(%s): %s", p->label, err);
	cr_assert(p->tb.len && p->tb.len % sizeof(struct sock_filter) == 0);
	p->insns = (const struct sock_filter *)p->tb.data;
	p->n = p->tb.len / sizeof(struct sock_filter);
}

static void
ll_programs_build(void)
{
	programs_build();
	ll_prog_build(&ll_tree, true);
	ll_prog_build(&ll_flat, false);
}

static void
ll_programs_free(void)
{
	programs_free();
	tb_free(&ll_tree.tb);
	tb_free(&ll_flat.tb);
}

TestSuite(seccomp_landlock, .init = ll_programs_build, .fini = ll_programs_free);

/* Run both programs of the variant on one call and check each gives WANT. */
static void __attribute__((format(printf, 5, 6)))
check_ll(const struct abi *abi, uint32_t nr, const uint64_t args[6], uint32_t want, const char *fmt,
	 ...)
{
	const struct prog *progs[] = {&ll_tree, &ll_flat};
	char what[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	for (size_t i = 0; i < LEN(progs); i++) {
		uint32_t got = verdict(progs[i], abi->audit_arch, nr, args);

		if (got != want)
			cr_assert_fail("%s %s: the %s filter says %s, expected %s", abi->name, what,
				       progs[i]->label, vname(got).s, vname(want).s);
	}
}

/* The variant as the tables describe it: a call the landlock rules name is theirs alone. */
static uint32_t
ll_table_verdict(const char *name, const uint64_t args[6], bool wide)
{
	const struct seccomp_rule *t = seccomp_rule_table;
	size_t n = seccomp_rule_table_len;

	if (!name)
		return SECCOMP_RET_ALLOW;
	if (seccomp_landlock_replaces(name)) {
		t = seccomp_landlock_rule_table;
		n = seccomp_landlock_rule_table_len;
	}
	for (size_t i = 0; i < n; i++)
		if (!strcmp(t[i].name, name) && rule_holds(&t[i], args, wide))
			return SECCOMP_RET_ERRNO | (uint32_t)t[i].err;
	return SECCOMP_RET_ALLOW;
}

/* The number of NAME on ABI, which must have it. */
static uint32_t
ll_nr(const struct abi *abi, const char *name)
{
	long nr = nr_of(abi, name);

	cr_assert_geq(nr, 0, "no %s on %s", name, abi->name);
	return (uint32_t)nr;
}

Test(seccomp_landlock, the_rules_name_calls_the_tables_classify)
{
	for (size_t i = 0; i < seccomp_landlock_rule_table_len; i++) {
		const struct seccomp_rule *r = &seccomp_landlock_rule_table[i];

		/* A numbered rule is the gate's: always refused, no comparison. */
		cr_assert(!r->nr || !r->ncmp, "the numbered rule for %s compares", r->name);
		cr_assert_geq(seccomp_classify(r->name), 0, "%s is in neither table", r->name);
		cr_assert_eq(r->reported, r->err == EPERM, "%s: reported and EPERM disagree",
			     r->name);
	}
	cr_assert(seccomp_landlock_replaces("socket") && seccomp_landlock_replaces("socketcall"));
	cr_assert(!seccomp_landlock_replaces("mount") && !seccomp_landlock_replaces("connect"));
}

/* Every number of every ABI, arguments 0: the base rules hold, but for the calls replaced. */
Test(seccomp_landlock, every_syscall_number_gets_what_the_tables_say_on_every_abi)
{
	static const uint64_t zero[6];

	for (size_t a = 0; a < N_ABIS; a++) {
		const struct abi *abi = &abis[a];

		for (uint32_t i = 0; i <= SWEEP_MAX; i++) {
			uint32_t nr = abi->nr_bit | i;
			char *name = name_of(abi, nr);
			uint32_t want = name ? ll_table_verdict(name, zero, abi->wide)
					     : number_verdict(abi, nr, NULL, zero);

			check_ll(abi, nr, zero, want, "syscall %u (%s), arguments 0", nr,
				 name ? name : "unknown");
			free(name);
		}
	}
}

Test(seccomp_landlock, socket_allows_only_inet_and_inet6_tcp_streams)
{
	static const uint64_t flags[] = {0, SOCK_CLOEXEC, SOCK_NONBLOCK,
					 SOCK_CLOEXEC | SOCK_NONBLOCK};
	static const uint64_t types[] = {
	    SOCK_DGRAM, SOCK_RAW, SOCK_RDM, SOCK_SEQPACKET, SOCK_DCCP, SOCK_PACKET, 0, 8, 9, 15};
	static const uint64_t protos[] = {IPPROTO_UDP, IPPROTO_SCTP, IPPROTO_MPTCP, 1, 5,
					  7,	       255,	     0xffffffff};

	for (size_t a = 0; a < N_ABIS; a++) {
		const struct abi *abi = &abis[a];
		uint32_t nr = ll_nr(abi, "socket");

		for (uint64_t fam = 0; fam <= AF_MAX; fam++)
			check_ll(
			    abi, nr, (uint64_t[6]){fam, SOCK_STREAM | SOCK_CLOEXEC, 0},
			    fam == AF_INET || fam == AF_INET6 ? SECCOMP_RET_ALLOW : RET_REFUSED,
			    "socket(%llu, SOCK_STREAM|SOCK_CLOEXEC, 0)", (unsigned long long)fam);
		for (size_t i = 0; i < 2; i++) {
			uint64_t fam = i ? AF_INET6 : AF_INET;

			for (size_t f = 0; f < LEN(flags); f++) {
				check_ll(abi, nr, (uint64_t[6]){fam, SOCK_STREAM | flags[f], 0},
					 SECCOMP_RET_ALLOW, "socket(%llu, SOCK_STREAM|%#llx, 0)",
					 (unsigned long long)fam, (unsigned long long)flags[f]);
				check_ll(abi, nr,
					 (uint64_t[6]){fam, SOCK_STREAM | flags[f], IPPROTO_TCP},
					 SECCOMP_RET_ALLOW,
					 "socket(%llu, SOCK_STREAM|%#llx, IPPROTO_TCP)",
					 (unsigned long long)fam, (unsigned long long)flags[f]);
				for (size_t t = 0; t < LEN(types); t++)
					check_ll(abi, nr,
						 (uint64_t[6]){fam, types[t] | flags[f], 0},
						 RET_REFUSED, "socket(%llu, %#llx, 0)",
						 (unsigned long long)fam,
						 (unsigned long long)(types[t] | flags[f]));
			}
			for (size_t p = 0; p < LEN(protos); p++)
				check_ll(abi, nr, (uint64_t[6]){fam, SOCK_STREAM, protos[p]},
					 RET_REFUSED, "socket(%llu, SOCK_STREAM, %llu)",
					 (unsigned long long)fam, (unsigned long long)protos[p]);
		}
		/* Named ones too: AF_UNIX, AF_NETLINK even with NETLINK_ROUTE, AF_PACKET. */
		check_ll(abi, nr, (uint64_t[6]){AF_UNIX, SOCK_STREAM, 0}, RET_REFUSED,
			 "socket(AF_UNIX, SOCK_STREAM, 0)");
		check_ll(abi, nr, (uint64_t[6]){AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0}, RET_REFUSED,
			 "socket(AF_UNIX, SOCK_DGRAM|SOCK_CLOEXEC, 0)");
		check_ll(abi, nr, (uint64_t[6]){AF_NETLINK, SOCK_RAW, NETLINK_ROUTE}, RET_REFUSED,
			 "socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE)");
		check_ll(abi, nr, (uint64_t[6]){AF_PACKET, SOCK_STREAM, 0}, RET_REFUSED,
			 "socket(AF_PACKET, SOCK_STREAM, 0)");
	}
}

/* Garbage above an allowed family or protocol: closed on 64-bit ABIs, ignored by the others. */
Test(seccomp_landlock, upper_bits_never_let_a_forbidden_socket_through)
{
	static const uint64_t upper[] = {1, 0x80000000, 0xffffffff};

	for (size_t a = 0; a < N_ABIS; a++) {
		const struct abi *abi = &abis[a];
		uint32_t nr = ll_nr(abi, "socket");

		for (size_t u = 0; u < LEN(upper); u++) {
			uint64_t hi = upper[u] << 32;

			check_ll(abi, nr, (uint64_t[6]){hi | AF_UNIX, SOCK_STREAM, 0}, RET_REFUSED,
				 "socket(%#llx, SOCK_STREAM, 0)",
				 (unsigned long long)(hi | AF_UNIX));
			check_ll(abi, nr, (uint64_t[6]){AF_INET, hi | SOCK_DGRAM, 0}, RET_REFUSED,
				 "socket(AF_INET, %#llx, 0)",
				 (unsigned long long)(hi | SOCK_DGRAM));
			check_ll(abi, nr, (uint64_t[6]){AF_INET, SOCK_STREAM, hi | IPPROTO_UDP},
				 RET_REFUSED, "socket(AF_INET, SOCK_STREAM, %#llx)",
				 (unsigned long long)(hi | IPPROTO_UDP));
			check_ll(abi, nr, (uint64_t[6]){hi | AF_INET, SOCK_STREAM, 0},
				 abi->wide ? RET_REFUSED : SECCOMP_RET_ALLOW,
				 "socket(%#llx, SOCK_STREAM, 0)",
				 (unsigned long long)(hi | AF_INET));
			check_ll(abi, nr, (uint64_t[6]){AF_INET6, SOCK_STREAM, hi | IPPROTO_TCP},
				 abi->wide ? RET_REFUSED : SECCOMP_RET_ALLOW,
				 "socket(AF_INET6, SOCK_STREAM, %#llx)",
				 (unsigned long long)(hi | IPPROTO_TCP));
			/* The type's upper half is no type bit: the kernel ignores it. */
			check_ll(abi, nr, (uint64_t[6]){AF_INET, hi | SOCK_STREAM, 0},
				 SECCOMP_RET_ALLOW, "socket(AF_INET, %#llx, 0)",
				 (unsigned long long)(hi | SOCK_STREAM));
		}
	}
}

Test(seccomp_landlock, socketpair_allows_unix_pairs_only)
{
	for (size_t a = 0; a < N_ABIS; a++) {
		const struct abi *abi = &abis[a];
		uint32_t nr = ll_nr(abi, "socketpair");

		check_ll(abi, nr, (uint64_t[6]){AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, 0x1000},
			 SECCOMP_RET_ALLOW, "socketpair(AF_UNIX, SOCK_STREAM|SOCK_CLOEXEC)");
		check_ll(abi, nr, (uint64_t[6]){AF_UNIX, SOCK_DGRAM, 0, 0x1000}, SECCOMP_RET_ALLOW,
			 "socketpair(AF_UNIX, SOCK_DGRAM)");
		check_ll(abi, nr, (uint64_t[6]){AF_UNIX, SOCK_SEQPACKET, 0, 0x1000},
			 SECCOMP_RET_ALLOW, "socketpair(AF_UNIX, SOCK_SEQPACKET)");
		for (uint64_t fam = 0; fam <= AF_MAX; fam++)
			if (fam != AF_UNIX)
				check_ll(abi, nr, (uint64_t[6]){fam, SOCK_STREAM, 0, 0x1000},
					 RET_REFUSED, "socketpair(%llu)", (unsigned long long)fam);
		check_ll(abi, nr, (uint64_t[6]){1ull << 32 | AF_UNIX, SOCK_STREAM, 0, 0x1000},
			 abi->wide ? RET_REFUSED : SECCOMP_RET_ALLOW, "socketpair(1<<32|AF_UNIX)");
	}
}

Test(seccomp_landlock, listen_is_refused_and_bind_connect_accept_are_not)
{
	static const uint64_t args[6] = {3, 0x1000, 16};

	for (size_t a = 0; a < N_ABIS; a++) {
		const struct abi *abi = &abis[a];

		check_ll(abi, ll_nr(abi, "listen"), (uint64_t[6]){3, 128}, RET_REFUSED, "listen");
		check_ll(abi, ll_nr(abi, "listen"), (uint64_t[6]){3, 0}, RET_REFUSED, "listen(0)");
		check_ll(abi, ll_nr(abi, "bind"), args, SECCOMP_RET_ALLOW, "bind");
		check_ll(abi, ll_nr(abi, "connect"), args, SECCOMP_RET_ALLOW, "connect");
		check_ll(abi, ll_nr(abi, "accept4"), args, SECCOMP_RET_ALLOW, "accept4");
	}
}

/* The sends that carry flags, by where the flags are. */
static const struct {
	const char *call;
	unsigned arg;
} fastopen_calls[] = {{"sendto", 3}, {"sendmsg", 2}, {"sendmmsg", 3}, {"send", 3}};

Test(seccomp_landlock, sends_with_msg_fastopen_are_refused_and_other_sends_are_not)
{
	static const uint64_t others[] = {0, MSG_NOSIGNAL, MSG_DONTWAIT | MSG_MORE, MSG_ZEROCOPY,
					  ~(uint64_t)MSG_FASTOPEN};
	static const uint64_t upper[] = {0, 1ull << 32, 0xffffffffull << 32};

	for (size_t a = 0; a < N_ABIS; a++) {
		const struct abi *abi = &abis[a];

		for (size_t c = 0; c < LEN(fastopen_calls); c++) {
			long nr = nr_of(abi, fastopen_calls[c].call);
			unsigned arg = fastopen_calls[c].arg;

			/* send is arm's alone; elsewhere it is sendto or socketcall. */
			if (nr < 0 && !strcmp(fastopen_calls[c].call, "send"))
				continue;
			cr_assert_geq(nr, 0, "no %s on %s", fastopen_calls[c].call, abi->name);
			for (size_t u = 0; u < LEN(upper); u++) {
				uint64_t args[6] = {3, 0x1000, 10, 0, 0x2000, 16};

				args[arg] = upper[u] | MSG_FASTOPEN | MSG_NOSIGNAL;
				check_ll(abi, (uint32_t)nr, args, RET_REFUSED, "%s(%#llx)",
					 fastopen_calls[c].call, (unsigned long long)args[arg]);
				/* The base filter lets it through: Landlock is what it lacks. */
				check_call(abi, (uint32_t)nr, args, SECCOMP_RET_ALLOW, "%s(%#llx)",
					   fastopen_calls[c].call, (unsigned long long)args[arg]);
			}
			for (size_t o = 0; o < LEN(others); o++) {
				uint64_t args[6] = {3, 0x1000, 10, 0, 0x2000, 16};

				args[arg] = others[o];
				check_ll(abi, (uint32_t)nr, args, SECCOMP_RET_ALLOW, "%s(%#llx)",
					 fastopen_calls[c].call, (unsigned long long)others[o]);
			}
		}
		cr_assert_eq(nr_of(abi, "send") >= 0, abi->token == SCMP_ARCH_ARM,
			     "send is a call of its own on %s", abi->name);
	}
}

Test(seccomp_landlock, setsockopt_tcp_fastopen_connect_is_refused_whatever_the_upper_bits)
{
	static const uint64_t upper[] = {0, 1ull << 32, 0xffffffffull << 32};

	for (size_t a = 0; a < N_ABIS; a++) {
		const struct abi *abi = &abis[a];
		uint32_t nr = ll_nr(abi, "setsockopt");

		for (size_t u = 0; u < LEN(upper); u++) {
			check_ll(abi, nr,
				 (uint64_t[6]){3, upper[u] | IPPROTO_TCP, TCP_FASTOPEN_CONNECT},
				 RET_REFUSED, "setsockopt(%#llx, TCP_FASTOPEN_CONNECT)",
				 (unsigned long long)(upper[u] | IPPROTO_TCP));
			check_ll(abi, nr,
				 (uint64_t[6]){3, IPPROTO_TCP, upper[u] | TCP_FASTOPEN_CONNECT},
				 RET_REFUSED, "setsockopt(IPPROTO_TCP, %#llx)",
				 (unsigned long long)(upper[u] | TCP_FASTOPEN_CONNECT));
		}
		check_ll(abi, nr, (uint64_t[6]){3, IPPROTO_TCP, TCP_NODELAY}, SECCOMP_RET_ALLOW,
			 "setsockopt(IPPROTO_TCP, TCP_NODELAY)");
		check_ll(abi, nr, (uint64_t[6]){3, SOL_SOCKET, TCP_FASTOPEN_CONNECT},
			 SECCOMP_RET_ALLOW, "setsockopt(SOL_SOCKET, 30)");
		check_ll(abi, nr, (uint64_t[6]){3, SOL_SOCKET, SO_REUSEADDR}, SECCOMP_RET_ALLOW,
			 "setsockopt(SOL_SOCKET, SO_REUSEADDR)");
		check_call(abi, nr, (uint64_t[6]){3, IPPROTO_TCP, TCP_FASTOPEN_CONNECT},
			   SECCOMP_RET_ALLOW, "setsockopt(IPPROTO_TCP, TCP_FASTOPEN_CONNECT)");
	}
}

Test(seccomp_landlock, x86_socketcall_is_refused_whatever_the_operation)
{
	uint32_t nr = ll_nr(ABI_X86, "socketcall");

	for (uint64_t call = 0; call <= SYS_SENDMMSG + 1; call++)
		check_ll(ABI_X86, nr, (uint64_t[6]){call, 0x1000}, RET_REFUSED, "socketcall(%llu)",
			 (unsigned long long)call);
	/* x86's direct calls are checked as on the other ABIs. */
	check_ll(ABI_X86, ll_nr(ABI_X86, "socket"), (uint64_t[6]){AF_UNIX, SOCK_STREAM},
		 RET_REFUSED, "socket(AF_UNIX)");
	check_ll(ABI_X86, ll_nr(ABI_X86, "socket"), (uint64_t[6]){AF_INET, SOCK_STREAM},
		 SECCOMP_RET_ALLOW, "socket(AF_INET, SOCK_STREAM)");
}

/* The base filter (the bwrap backend's) is the one it was: the variant is its own program. */
Test(seccomp_landlock, the_base_filter_keeps_unix_sockets_listen_and_fast_open)
{
	for (size_t a = 0; a < N_ABIS; a++) {
		const struct abi *abi = &abis[a];

		check_call(abi, ll_nr(abi, "socket"), (uint64_t[6]){AF_UNIX, SOCK_STREAM, 0},
			   SECCOMP_RET_ALLOW, "socket(AF_UNIX, SOCK_STREAM, 0)");
		check_call(abi, ll_nr(abi, "socket"), (uint64_t[6]){AF_INET, SOCK_DGRAM, 0},
			   SECCOMP_RET_ALLOW, "socket(AF_INET, SOCK_DGRAM, 0)");
		check_call(abi, ll_nr(abi, "socket"),
			   (uint64_t[6]){AF_NETLINK, SOCK_RAW, NETLINK_ROUTE}, SECCOMP_RET_ALLOW,
			   "socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE)");
		check_call(abi, ll_nr(abi, "socketpair"), (uint64_t[6]){AF_INET, SOCK_STREAM, 0},
			   SECCOMP_RET_ALLOW, "socketpair(AF_INET)");
		check_call(abi, ll_nr(abi, "listen"), (uint64_t[6]){3, 128}, SECCOMP_RET_ALLOW,
			   "listen");
	}
	check_call(ABI_X86, ll_nr(ABI_X86, "socketcall"), (uint64_t[6]){SYS_LISTEN, 0x1000},
		   SECCOMP_RET_ALLOW, "socketcall(SYS_LISTEN)");
}

Test(seccomp_landlock, the_base_refusals_stay_in_the_variant)
{
	static const char *const calls[] = {
	    "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd",
	    "kcmp",   "io_uring_setup",	  "open_by_handle_at", "keyctl",
	    "bpf",    "perf_event_open",  "userfaultfd",       "mount",
	    "unshare"};
	static const uint64_t zero[6];

	for (size_t a = 0; a < N_ABIS; a++)
		for (size_t i = 0; i < LEN(calls); i++) {
			long nr = nr_of(&abis[a], calls[i]);

			if (nr >= 0)
				check_ll(&abis[a], (uint32_t)nr, zero, RET_REFUSED, "%s", calls[i]);
		}
	for (size_t a = 0; a < N_ABIS; a++)
		check_ll(&abis[a], ll_nr(&abis[a], "ioctl"), (uint64_t[6]){0, TIOCSTI}, RET_REFUSED,
			 "ioctl(TIOCSTI)");
}

Test(seccomp_landlock, the_reporting_variant_differs_only_in_the_refusal_action)
{
	const struct prog *progs[] = {&ll_tree, &ll_flat};

	for (size_t i = 0; i < LEN(progs); i++) {
		const struct prog *p = progs[i];
		struct textbuf want = {0};
		struct sock_filter *out = malloc(p->tb.len);
		char err[256];
		size_t refusals = count_returns(p->insns, p->n, RET_EPERM);

		cr_assert_not_null(out);
		cr_assert_eq(seccomp_generate_variant(p == &ll_tree, false, true, SECCOMP_LANDLOCK, &want, err,
						      sizeof(err)),
			     0, "%s", err);
		cr_assert_eq(count_reports(p->insns, p->n), 0, "%s reports", p->label);
		cr_assert(refusals > 0 && filter_eperm_to_notify(p->insns, out, p->n) == refusals);
		cr_assert(want.len == p->tb.len && !memcmp(out, want.data, want.len),
			  "the reporting %s is not libseccomp's build with SCMP_ACT_NOTIFY",
			  p->label);
		free(out);
		tb_free(&want);
	}
}

Test(seccomp_landlock, the_emitters_write_the_variant)
{
	size_t len, blen;
	char *text = emit(emit_seccomp_landlock, &len),
	     *bin = emit(emit_seccomp_landlock_bpf, &blen);
	struct textbuf pfc = {0};
	char err[256];

	cr_assert(blen == ll_tree.tb.len && !memcmp(bin, ll_tree.tb.data, blen),
		  "emit_seccomp_landlock_bpf is not the variant's binary-tree program");
	cr_assert(blen != tree.tb.len || memcmp(bin, tree.tb.data, blen),
		  "the variant is the base filter");
	cr_assert_eq(seccomp_generate_variant(true, true, false, SECCOMP_LANDLOCK, &pfc, err, sizeof(err)), 0,
		     "%s", err);
	tb_putc(&pfc, 0);
	cr_assert(len > pfc.len - 1 && !strcmp(text + len - (pfc.len - 1), pfc.data),
		  "the text does not end with the variant's binary-tree PFC");
	for (const char *p = text; p < text + len - (pfc.len - 1); p = strchr(p, '\n') + 1)
		cr_assert_eq(*p, '#', "a header line is not a comment: %.40s", p);
	cr_assert_not_null(strstr(text, "linux_landlock"));
	cr_assert_not_null(strstr(text, "x86_64 x86 x32 aarch64 arm"));
	cr_assert_not_null(strstr(text, "filter for syscall \"listen\""));
	cr_assert_not_null(strstr(text, "filter for syscall \"send\" (289)"), "arm's send");
	cr_assert_null(strstr(text, "(4294967187)"), "send's pseudo number in the text");
	free(text);
	free(bin);
	tb_free(&pfc);
}

Test(seccomp_names, the_landlock_variants_refusals_name_what_they_refuse)
{
	long x86 = nr_of(ABI_X86, "socketcall");

	if (seccomp_arch_native() != SCMP_ARCH_X86_64)
		cr_skip_test("the names below are x86_64's, this machine's ABI is another");
	assert_refusal_name(AUDIT_ARCH_X86_64, SYS_socket, (uint64_t[6]){AF_UNIX, SOCK_STREAM},
			    "socket(AF_UNIX)", false);
	assert_refusal_name(AUDIT_ARCH_X86_64, SYS_socket,
			    (uint64_t[6]){AF_INET, SOCK_DGRAM | SOCK_CLOEXEC},
			    "socket(AF_INET, SOCK_DGRAM)", false);
	assert_refusal_name(AUDIT_ARCH_X86_64, SYS_socket, (uint64_t[6]){AF_INET6, SOCK_RAW, 58},
			    "socket(AF_INET6, SOCK_RAW)", false);
	assert_refusal_name(AUDIT_ARCH_X86_64, SYS_socket,
			    (uint64_t[6]){AF_INET6, SOCK_STREAM, IPPROTO_MPTCP},
			    "socket(AF_INET6, SOCK_STREAM, IPPROTO_MPTCP)", false);
	assert_refusal_name(AUDIT_ARCH_X86_64, SYS_socket,
			    (uint64_t[6]){AF_INET, SOCK_STREAM, IPPROTO_UDP},
			    "socket(AF_INET, SOCK_STREAM, 17)", false);
	assert_refusal_name(AUDIT_ARCH_X86_64, SYS_socketpair, (uint64_t[6]){AF_NETLINK},
			    "socketpair(AF_NETLINK)", false);
	assert_refusal_name(AUDIT_ARCH_X86_64, SYS_listen, (uint64_t[6]){3, 128}, "listen", false);
	assert_refusal_name(AUDIT_ARCH_X86_64, SYS_sendto,
			    (uint64_t[6]){3, 0, 0, MSG_FASTOPEN | MSG_NOSIGNAL},
			    "sendto(MSG_FASTOPEN)", false);
	assert_refusal_name(AUDIT_ARCH_X86_64, SYS_sendmsg, (uint64_t[6]){3, 0, MSG_FASTOPEN},
			    "sendmsg(MSG_FASTOPEN)", false);
	assert_refusal_name(AUDIT_ARCH_X86_64, SYS_sendmmsg, (uint64_t[6]){3, 0, 1, MSG_FASTOPEN},
			    "sendmmsg(MSG_FASTOPEN)", false);
	assert_refusal_name(AUDIT_ARCH_X86_64, SYS_setsockopt,
			    (uint64_t[6]){3, IPPROTO_TCP, TCP_FASTOPEN_CONNECT},
			    "setsockopt(TCP_FASTOPEN_CONNECT)", false);
	cr_assert_geq(x86, 0);
	assert_refusal_name(AUDIT_ARCH_I386, (uint32_t)x86, (uint64_t[6]){SYS_LISTEN},
			    "socketcall [x86]", false);
}

/* In the kernel, as omnibox-init loads it (without a listener: EPERM). */
static long
socket_unix(void)
{
	return socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
}

static long
socket_inet_udp(void)
{
	return socket(AF_INET, SOCK_DGRAM, 0);
}

static long
socket_inet6_mptcp(void)
{
	return socket(AF_INET6, SOCK_STREAM, IPPROTO_MPTCP);
}

static long
socket_inet_tcp_flags(void)
{
	long fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, IPPROTO_TCP);

	return fd < 0 ? fd : socket(AF_INET6, SOCK_STREAM, 0);
}

static long
socketpair_unix(void)
{
	int sv[2];

	return socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv);
}

/* Without the filter: a port the kernel picks (0). */
static long
listen_unbound(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	return fd < 0 ? -1 : listen(fd, 1);
}

/* Without the filter: ECONNREFUSED, or the SYN sent. */
static long
sendto_fastopen(void)
{
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(1)};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0)
		return -2;
	return sendto(fd, "x", 1, MSG_FASTOPEN, (struct sockaddr *)&sin, sizeof(sin));
}

static long
setsockopt_fastopen_connect(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	if (fd < 0)
		return -2;
	return setsockopt(fd, IPPROTO_TCP, TCP_FASTOPEN_CONNECT, &one, sizeof(one));
}

#define LL_REFUSED(probe) assert_refused(#probe, probe, &ll_tree, EPERM)

static void
ll_works(const char *what, long (*probe)(void))
{
	struct outcome o = run_probe(&ll_tree, probe);

	assert_outcome_reported(what, o);
	cr_assert_geq(o.ret, 0, "%s under the landlock filter: returned %ld, errno %s", what, o.ret,
		      errname(o.err));
}

Test(seccomp_landlock, in_the_kernel_only_tcp_sockets_are_made_and_nothing_listens)
{
	LL_REFUSED(socket_unix);
	LL_REFUSED(socket_inet_udp);
	LL_REFUSED(socket_inet6_mptcp);
	LL_REFUSED(socket_netlink_audit);
	LL_REFUSED(listen_unbound);
	LL_REFUSED(sendto_fastopen);
	LL_REFUSED(setsockopt_fastopen_connect);
	assert_refused("socket_unix", socket_unix, &ll_flat, EPERM);
	assert_refused("mount_tmpfs", mount_tmpfs, &ll_tree, EPERM);
	ll_works("socket_inet_tcp_flags", socket_inet_tcp_flags);
	ll_works("socketpair_unix", socketpair_unix);
	ll_works("threads", threads);
	ll_works("exec_true", exec_true);
	/* The base filter lets all of it be. */
	WORKS(socket_unix);
	WORKS(listen_unbound);
	WORKS(setsockopt_fastopen_connect);
}

#if defined(__x86_64__)

static long
i386_socket_unix(void)
{
	return int80(I386_SOCKET, AF_UNIX, SOCK_STREAM, 0);
}

Test(seccomp_landlock, i386_socketcall_is_refused_and_the_direct_socket_checked)
{
	require_ia32();
	assert_refused("i386_socketcall_connect", i386_socketcall_connect, &ll_tree, EPERM);
	assert_refused("i386_socket_unix", i386_socket_unix, &ll_tree, EPERM);
	ll_works("i386_socket_inet", i386_socket_inet);
	ll_works("i386_getpid", i386_getpid);
}

#endif

/* ---- the OCI profile: the same decisions from a container runtime ------------ */

TestSuite(seccomp_oci, .init = programs_build, .fini = programs_free);

/*
 * PROG: what a runtime's libseccomp builds from the profile's entries, as
 * runc does (every ABI of "architectures", each named call resolved on it,
 * a rule per entry and name; a name an ABI lacks is left out there).
 */
static void
oci_program(struct prog *prog)
{
	struct seccomp_oci_entry *v;
	size_t n = seccomp_oci_entries(SECCOMP_BASE, &v);
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	int fd = memfd_create("test-oci", MFD_CLOEXEC);
	char buf[4096];
	ssize_t got;

	cr_assert(ctx && fd >= 0);
	cr_assert_eq(seccomp_arch_remove(ctx, SCMP_ARCH_NATIVE), 0);
	for (size_t a = 0; a < seccomp_arch_table_len; a++)
		cr_assert_eq(seccomp_arch_add(ctx, seccomp_arch_table[a].token), 0);
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < v[i].n_names; k++) {
			struct scmp_arg_cmp c[SECCOMP_RULE_CMP_MAX];
			int nr = seccomp_syscall_resolve_name(v[i].names[k]);

			if (nr == __NR_SCMP_ERROR)
				continue; /* newer than this libseccomp: a runtime's own may know it */
			for (unsigned m = 0; m < v[i].ncmp; m++)
				c[m] = (struct scmp_arg_cmp){v[i].cmp[m].arg, v[i].cmp[m].op,
							     v[i].cmp[m].op == SCMP_CMP_MASKED_EQ
								 ? v[i].cmp[m].mask
								 : v[i].cmp[m].value,
							     v[i].cmp[m].op == SCMP_CMP_MASKED_EQ
								 ? v[i].cmp[m].value
								 : 0};
			cr_assert_eq(seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO((uint32_t)v[i].err), nr,
							    v[i].ncmp, c),
				     0, "the profile's rule for %s", v[i].names[k]);
		}
	cr_assert_eq(seccomp_export_bpf(ctx, fd), 0);
	cr_assert_eq(lseek(fd, 0, SEEK_SET), 0);
	while ((got = read(fd, buf, sizeof(buf))) > 0)
		tb_write(&prog->tb, buf, (size_t)got);
	close(fd);
	seccomp_release(ctx);
	seccomp_oci_free(v, n);
	prog->insns = (const struct sock_filter *)prog->tb.data;
	prog->n = prog->tb.len / sizeof(struct sock_filter);
}

/* Argument vectors that meet each comparison of the tables (and just miss it). */
static size_t
probe_args(uint64_t (*out)[6], size_t max)
{
	size_t n = 1;

	memset(out[0], 0, sizeof(out[0]));
	for (size_t i = 0; i < seccomp_rule_table_len && n + 2 <= max; i++) {
		const struct seccomp_rule *r = &seccomp_rule_table[i];
		uint64_t hit[6] = {0}, miss[6] = {0};

		for (unsigned k = 0; k < r->ncmp; k++) {
			const struct seccomp_cmp *c = &r->cmp[k];

			hit[c->arg] = c->op == SCMP_CMP_GT   ? c->value + 1
				      : c->op == SCMP_CMP_NE ? c->value + 1
							     : c->value;
			miss[c->arg] = c->op == SCMP_CMP_NE ? c->value : c->value ^ 1;
		}
		memcpy(out[n++], hit, sizeof(hit));
		memcpy(out[n++], miss, sizeof(miss));
	}
	return n;
}

Test(seccomp_oci, the_profile_refuses_and_allows_what_the_filter_does_on_every_abi)
{
	static uint64_t args[256][6];
	size_t n_args = probe_args(args, LEN(args));
	struct prog oci = {.label = "OCI profile"};
	size_t compared = 0;

	oci_program(&oci);
	for (size_t a = 0; a < N_ABIS; a++) {
		const struct abi *abi = &abis[a];

		for (uint32_t i = 0; i <= SWEEP_MAX; i++) {
			uint32_t nr = abi->nr_bit | i;
			char *name = seccomp_syscall_resolve_num_arch(abi->token, (int)nr);

			/* Numbers libseccomp cannot name are the gate's: not the profile's. */
			if (!name)
				continue;
			for (size_t k = 0; k < n_args; k++) {
				uint32_t want = verdict(&tree, abi->audit_arch, nr, args[k]);
				uint32_t got = verdict(&oci, abi->audit_arch, nr, args[k]);

				if (got != want)
					cr_assert_fail("%s %s (%u), arguments #%zu: the profile says "
						       "%s, the filter %s",
						       abi->name, name, nr, k, vname(got).s,
						       vname(want).s);
				compared++;
			}
			free(name);
		}
	}
	cr_assert_gt(compared, 100000u);
	tb_free(&oci.tb);
}

Test(seccomp_oci, the_profile_is_deterministic_json_naming_every_abi)
{
	struct textbuf a = {0}, b = {0};

	seccomp_oci_json(SECCOMP_BASE, &a);
	seccomp_oci_json(SECCOMP_BASE, &b);
	cr_assert(a.len && a.len == b.len && !memcmp(a.data, b.data, a.len));
	cr_assert(strstr(a.data, "\"defaultAction\": \"SCMP_ACT_ALLOW\""));
	cr_assert(strstr(a.data, "\"SCMP_ARCH_X86_64\", \"SCMP_ARCH_X86\", \"SCMP_ARCH_X32\", "
				 "\"SCMP_ARCH_AARCH64\", \"SCMP_ARCH_ARM\""));
	cr_assert(strstr(a.data, "{\"names\": [\"clone3\"], \"action\": \"SCMP_ACT_ERRNO\", "
				 "\"errnoRet\": 38}"));
	tb_free(&a);
	tb_free(&b);
}

/* ---- the program for this machine's ABIs (filter_for_abis) ------------------ */

TestSuite(seccomp_prune, .init = programs_build, .fini = programs_free);

static const uint32_t x86_arches[] = {AUDIT_ARCH_X86_64, AUDIT_ARCH_I386};
static const uint32_t arm_arches[] = {AUDIT_ARCH_AARCH64, AUDIT_ARCH_ARM};

/* P for ARCHES, as a program of its own (its text malloc'd). */
static struct prog
pruned(const struct prog *p, const uint32_t *arches, size_t n_arches, const char *label)
{
	struct prog q = {.label = label};
	struct sock_filter *out = malloc(p->n * sizeof(*out));
	char err[256];

	cr_assert_not_null(out);
	q.n = filter_for_abis(p->insns, p->n, arches, n_arches, out);
	q.insns = out;
	cr_assert_eq(bpf_interp_check(q.insns, q.n, err, sizeof(err)), 0,
		     "%s: the kernel would refuse the pruned program: %s", label, err);
	return q;
}

static bool
kept(const struct abi *abi, const uint32_t *arches, size_t n_arches)
{
	for (size_t k = 0; k < n_arches; k++)
		if (arches[k] == abi->audit_arch)
			return true;
	return false;
}

/* An argument vector of a few shapes: zeros, ones, and words of a fixed generator. */
static void
args_of(unsigned shape, uint64_t args[6])
{
	uint64_t x = 0x9e3779b97f4a7c15ull * (shape + 1);

	for (size_t i = 0; i < 6; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		args[i] = shape == 0 ? 0 : shape == 1 ? ~0ull : shape == 2 ? x & 0xffffffffu : x;
	}
}

/*
 * Every call of a kept ABI (every number the sweep covers, the edges, five
 * shapes of arguments) gets what the whole program gives it; a call of a
 * dropped ABI is killed, as a call of an unknown one always was.
 */
static void
assert_pruned_agrees(const uint32_t *arches, size_t n_arches, const char *label)
{
	const struct prog *progs[] = {&tree, &flat};
	static const uint32_t edges[] = {SWEEP_MAX + 1, 0x3fffffffu, 0x7fffffffu, 0xffffffffu};

	for (size_t p = 0; p < LEN(progs); p++) {
		struct prog q = pruned(progs[p], arches, n_arches, label);

		cr_assert_lt(q.n, progs[p]->n, "%s: nothing left out of the %s program (%zu)",
			     label, progs[p]->label, q.n);
		for (size_t a = 0; a < N_ABIS; a++) {
			const struct abi *abi = &abis[a];
			bool keep = kept(abi, arches, n_arches);

			for (uint32_t i = 0; i < SWEEP_MAX + LEN(edges); i++) {
				uint32_t nr = (i < SWEEP_MAX ? i : edges[i - SWEEP_MAX]) | abi->nr_bit;

				for (unsigned shape = 0; shape < (keep ? 5u : 1u); shape++) {
					uint64_t args[6];
					uint32_t want, got;

					args_of(shape, args);
					want = keep ? verdict(progs[p], abi->audit_arch, nr, args)
						    : SECCOMP_RET_KILL_PROCESS;
					got = verdict(&q, abi->audit_arch, nr, args);
					cr_assert_eq(got, want,
						     "%s, %s program, %s call %#x (args %u): %s, "
						     "the whole program %s",
						     label, progs[p]->label, abi->name, nr, shape,
						     vname(got).s, vname(want).s);
				}
			}
		}
		free((void *)q.insns);
	}
}

Test(seccomp_prune, on_x86_64_the_pruned_program_decides_every_call_as_the_whole_one)
{
	assert_pruned_agrees(x86_arches, LEN(x86_arches), "x86_64 and x86");
}

Test(seccomp_prune, on_aarch64_the_pruned_program_decides_every_call_as_the_whole_one)
{
	assert_pruned_agrees(arm_arches, LEN(arm_arches), "aarch64 and arm");
}

/* What is left out is the other machines' code: no comparison with their ABIs remains. */
Test(seccomp_prune, no_comparison_with_a_dropped_abi_is_left)
{
	struct prog q = pruned(&tree, x86_arches, LEN(x86_arches), "x86_64 and x86");
	size_t arm_jumps = 0;

	for (size_t i = 0; i < q.n; i++)
		if (q.insns[i].code == (BPF_JMP | BPF_JEQ | BPF_K) &&
		    (q.insns[i].k == AUDIT_ARCH_AARCH64 || q.insns[i].k == AUDIT_ARCH_ARM))
			arm_jumps++;
	cr_assert_eq(arm_jumps, 0, "%zu comparisons with aarch64 or arm are left", arm_jumps);
	free((void *)q.insns);
}

/* A comparison of anything but the architecture is never decided. */
Test(seccomp_prune, a_number_equal_to_an_abi_is_still_compared)
{
	struct sock_filter prog[] = {
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_ARM, 0, 1),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
	    BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0xffffffffu),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_ARM, 0, 1),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_filter out[LEN(prog)];
	size_t n = filter_for_abis(prog, LEN(prog), x86_arches, LEN(x86_arches), out);

	cr_assert_eq(n, LEN(prog), "a comparison of the number, or of a computed value, was "
				   "decided: %zu instructions left of %zu",
		     n, LEN(prog));
	cr_assert_eq(memcmp(out, prog, sizeof(prog)), 0, "the program changed");
}

static long
pruned_getpid(void)
{
	return syscall(SYS_getpid);
}

/* The kernel takes it, and its refusals stand. */
Test(seccomp_prune, the_kernel_loads_it_and_it_refuses_as_the_whole_one)
{
	const unsigned *arches;
	size_t n_arches = filter_native_abis(&arches);
	struct prog q;

	if (!n_arches)
		cr_skip_test("no ABIs are known for this machine: the program is loaded whole");
	q = pruned(&tree, arches, n_arches, "this machine's");
	assert_refused("mount_tmpfs", mount_tmpfs, &q, EPERM);
	assert_refused("unshare_user", unshare_user, &q, EPERM);
	assert_refused("clone3_call", clone3_call, &q, ENOSYS);
	{
		struct outcome o = run_probe(&q, pruned_getpid);

		assert_outcome_reported("getpid", o);
		cr_assert_gt(o.ret, 0, "getpid under the pruned filter: %ld, errno %s", o.ret,
			     errname(o.err));
	}
	free((void *)q.insns);
}
