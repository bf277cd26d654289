/*
 * seccomp.h - the seccomp filter omnibox-init loads (`--seccomp-fd FD`)
 * before the agent's first instruction.
 *
 * The filter is the same for every policy: nothing in the policy changes
 * it.  It allows by default and refuses the system calls
 * that reach kernel attack surface or escape the sandbox (namespaces,
 * mounts, modules, ptrace, keyrings, io_uring, ...), listed in
 * seccomp_rule_table[]: most fail with EPERM, clone3 with ENOSYS.  The
 * program is the standalone filter, whoever loads it; omnibox-init derives
 * from it the variant that reports each EPERM refusal to omnibox-run
 * (SECCOMP_RET_USER_NOTIF, runtime/launch/seccomp_load.h), which counts
 * them and answers EPERM.  Every other call is named in
 * seccomp_allowed_table[].  libseccomp resolves each name per ABI and builds
 * the BPF program; ahead of it runs a short gate of ours, which refuses
 * the calls libseccomp cannot name (rules with a number) and, on each ABI,
 * every number above the highest that ABI's tables know (seccomp_gate_ranges).
 * Output is deterministic: the same bytes on every run and machine with
 * the same libseccomp.
 *
 * The linux_landlock backend, which makes no namespace, loads a variant:
 * the same rules, but that the calls seccomp_landlock_rule_table[] names
 * are decided by its rules alone (socket AF_INET and AF_INET6 SOCK_STREAM
 * TCP only, socketpair AF_UNIX only, no listen, no socketcall, no TCP Fast
 * Open), for what the network namespace does on the bwrap backend and
 * Landlock does not (`--emit=seccomp-landlock`, `seccomp-landlock-bpf`).
 */
#ifndef OMNIBOX_EMIT_SECCOMP_H
#define OMNIBOX_EMIT_SECCOMP_H

#include <seccomp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../compiler/base/diag.h"
#include "../compiler/policy.h"
#include "../compiler/base/textbuf.h"
#include "emit.h"

/* An ABI the filter knows.  Calls from any other fail with KILL_PROCESS. */
struct seccomp_arch {
	const char *name; /* as libseccomp's PFC output spells it */
	uint32_t token;	  /* SCMP_ARCH_* */
};

/* x86_64, x86, x32, aarch64, arm: in the order the filter tests them. */
extern const struct seccomp_arch seccomp_arch_table[];
extern const size_t seccomp_arch_table_len;

/*
 * One comparison of a rule: args[arg] OP value, or for SCMP_CMP_MASKED_EQ
 * (args[arg] & mask) == value.  Comparisons are on the 64-bit argument on
 * 64-bit ABIs and on its low 32 bits on the others (x86, x32, arm), as
 * libseccomp generates them.
 */
struct seccomp_cmp {
	unsigned arg;
	enum scmp_compare op; /* SCMP_CMP_EQ, SCMP_CMP_NE, SCMP_CMP_GT or SCMP_CMP_MASKED_EQ */
	uint64_t mask;
	uint64_t value;
};

/* Comparisons one rule may hold, each on another argument (libseccomp 2.5 takes no two on one). */
#define SECCOMP_RULE_CMP_MAX 2

/*
 * One rule: NAME fails with ERR (after omnibox-run was told, when
 * REPORTED), always (ncmp 0) or only when each of its NCMP comparisons
 * holds.  Several rules for one name: any that holds refuses the call.
 */
struct seccomp_rule {
	const char *name;
	int err;
	bool reported; /* exactly when ERR is EPERM: omnibox-init reports those */
	unsigned ncmp;
	struct seccomp_cmp cmp[SECCOMP_RULE_CMP_MAX];
	/*
	 * 0: libseccomp names the call.  Else its number, the same on every
	 * ABI (x32: nr | 0x40000000), for a call newer than libseccomp's
	 * tables: refused by the gate, always (no comparison).
	 */
	int nr;
	/*
	 * The landlock variant's rules only: a rule for a policy without the
	 * host's network (allow_network: false, or egress_rules), left out
	 * of the variant for allow_network: true (SECCOMP_LANDLOCK_NET).
	 */
	bool closed;
};

/* Which filter: the base one, or the linux_landlock backend's variant
 * without the host's network (every rule of seccomp_landlock_rule_table)
 * or with it (those not `closed`). */
enum seccomp_variant { SECCOMP_BASE, SECCOMP_LANDLOCK, SECCOMP_LANDLOCK_NET };

extern const struct seccomp_rule seccomp_rule_table[];
extern const size_t seccomp_rule_table_len;

/*
 * The landlock variant's own rules; every name is one the tables above
 * classify.  A rule with a number (a call newer than libseccomp's tables)
 * is refused by the variants' gate, always.
 */
extern const struct seccomp_rule seccomp_landlock_rule_table[];
extern const size_t seccomp_landlock_rule_table_len;

/*
 * Whether the landlock variant (SECCOMP_LANDLOCK) decides NAME by its own
 * rules alone: the base rules for NAME are then not in it.  And the same
 * for VARIANT (for SECCOMP_LANDLOCK_NET: a rule not `closed` names it).
 */
bool seccomp_landlock_replaces(const char *name);
bool seccomp_variant_replaces(enum seccomp_variant variant, const char *name);

/* A call the filter allows on purpose; NR as in struct seccomp_rule. */
struct seccomp_allowed {
	const char *name;
	int nr;
};

extern const struct seccomp_allowed seccomp_allowed_table[];
extern const size_t seccomp_allowed_table_len;

/* Where the tables sort NAME: 1 refused (by some rule), 0 allowed, -1 in neither. */
int seccomp_classify(const char *name);

/*
 * The name the tables give number NR (x32's bit 30 ignored) of a call
 * newer than libseccomp's tables, as a static string, or NULL.
 */
const char *seccomp_table_name(int nr);

/* Room enough for every name seccomp_refusal_name gives. */
#define SECCOMP_REFUSAL_NAME_MAX 64

/*
 * The name omnibox-run gives the refused call NR of the ABI ARCH
 * (seccomp_data.arch, an AUDIT_ARCH_* value; x32's bit 30 in NR) made with
 * ARGS, into BUF (LEN bytes, always terminated): "mount", "mount [x86]" on
 * another ABI than this machine's, "socket(AF_PACKET)", "socket(AF_NETLINK,
 * NETLINK_AUDIT)", the number when no table names the call ("1000
 * [x86_64]").  Returns true when the call is a probe ordinary tools make
 * and handle (listed in emit_seccomp.c with the reason for each), which
 * omnibox-run counts apart from the refusals worth the user's attention.
 */
bool seccomp_refusal_name(uint32_t arch, int nr, const uint64_t args[6], char *buf, size_t len);

/* A range of syscall numbers the gate refuses, as the kernel reports them. */
struct seccomp_range {
	uint32_t lo, hi;
};

/*
 * The ranges the gate refuses on the ABI of TOKEN (SCMP_ARCH_*), ascending
 * and disjoint, into OUT (room for MAX); returns how many, or -1 if MAX is
 * too small.  Each number a rule gives (struct seccomp_rule.nr), and every
 * number above the highest of the ABI's main table that no table names, up
 * to 0xfffffffe: -1 is the number of no call (a tracer's "skip") and is left
 * to libseccomp.  The main table ends below 512; x32's own calls (512-547)
 * and ARM's private ones (0xf0001-0xf0006) are named, so they pass.
 */
int seccomp_gate_ranges(uint32_t token, struct seccomp_range *out, size_t max);

/* The same for VARIANT: the landlock ones also refuse their rules' numbers. */
int seccomp_gate_ranges_of(uint32_t token, enum seccomp_variant variant,
			   struct seccomp_range *out, size_t max);

/*
 * Build the filter and append it to OUT: libseccomp's pseudo filter code
 * (PFC, text) when PFC is true, else the BPF program as an array of
 * struct sock_filter in the byte order of this machine, ready for
 * omnibox-init's --seccomp-fd or bwrap's --seccomp.  It is the standalone
 * filter: every rule fails with its errno (SCMP_ACT_ERRNO), none reports.
 * BINARY_TREE selects libseccomp's binary-tree search
 * of the syscall numbers (SCMP_FLTATR_CTL_OPTIMIZE 2), the default
 * everywhere but in the benchmark.  Returns 0, or -1 with a message in ERR
 * (ERRLEN bytes, always terminated); OUT may then hold part of the output.
 */
int seccomp_generate(bool binary_tree, bool pfc, struct textbuf *out, char *err, size_t errlen);

/*
 * The same, and with REPORT true the reported rules and the gate notify
 * (SCMP_ACT_NOTIFY) instead: what omnibox-init's rewrite of the standalone
 * program (filter_eperm_to_notify, seccomp_load.h) must equal, byte for
 * byte.  Nothing but the tests builds it.
 */
int seccomp_generate_as(bool binary_tree, bool pfc, bool report, struct textbuf *out, char *err,
			size_t errlen);

/*
 * The same, of the base filter (SECCOMP_BASE: what seccomp_generate_as
 * builds) or of one of the linux_landlock backend's variants.
 */
int seccomp_generate_variant(bool binary_tree, bool pfc, bool report,
			     enum seccomp_variant variant, struct textbuf *out, char *err,
			     size_t errlen);

/*
 * The emitters (see emit.h).  emit_seccomp: a comment header and the PFC
 * text, for review and golden files.  emit_seccomp_bpf: the raw program.
 * Both are the standalone filter (seccomp_generate).  emit_seccomp_landlock
 * and emit_seccomp_landlock_bpf: the same of the linux_landlock backend's
 * variant; emit_seccomp_landlock_net(_bpf) of its variant for the host's
 * network (allow_network: true).  All ignore P and T; they fail only when libseccomp does,
 * reported to D.
 */
int emit_seccomp(const struct policy *p, enum target t, struct diag *d, struct textbuf *out);
int emit_seccomp_bpf(const struct policy *p, enum target t, struct diag *d, struct textbuf *out);
int emit_seccomp_landlock(const struct policy *p, enum target t, struct diag *d,
			  struct textbuf *out);
int emit_seccomp_landlock_bpf(const struct policy *p, enum target t, struct diag *d,
			      struct textbuf *out);
int emit_seccomp_landlock_net(const struct policy *p, enum target t, struct diag *d,
			      struct textbuf *out);

/*
 * The filter as an OCI runtime-spec seccomp profile (config.json's
 * linux.seccomp; `docker run --security-opt seccomp=FILE` takes it too),
 * from the same tables: default action SCMP_ACT_ALLOW, the ABIs of
 * seccomp_arch_table, and a refusal (SCMP_ACT_ERRNO with its errno) per
 * rule, the unconditional ones one entry per errno with their names
 * sorted, then each rule with comparisons in the tables' order
 * (SCMP_CMP_MASKED_EQ with the mask in value, the datum in valueTwo, as
 * libseccomp takes them).  What the profile cannot say: the gate's
 * refusal of every number above the highest the tables know (a runtime's
 * libseccomp decides those), and the reporting variant (omnibox-run is not
 * there to answer).  Deterministic.
 */
struct seccomp_oci_entry {
	const char **names; /* malloc'd; the tables' strings */
	size_t n_names;
	int err;
	unsigned ncmp;
	struct seccomp_cmp cmp[SECCOMP_RULE_CMP_MAX];
};
size_t seccomp_oci_entries(enum seccomp_variant variant, struct seccomp_oci_entry **out);
void seccomp_oci_free(struct seccomp_oci_entry *v, size_t n);
void seccomp_oci_json(enum seccomp_variant variant, struct textbuf *out);
/* The same profile as one value of J (config.json's linux.seccomp). */
struct json;
void seccomp_oci_write(struct json *j, enum seccomp_variant variant);
int emit_seccomp_oci(const struct policy *p, enum target t, struct diag *d, struct textbuf *out);
int emit_seccomp_landlock_net_bpf(const struct policy *p, enum target t, struct diag *d,
				  struct textbuf *out);

/*
 * The outputs above depend on no policy.  Each is built by
 * seccomp_output_build(), from the tables; the build runs it once
 * (emitters/seccomp_gen.c) and omnibox-compile carries the bytes
 * (emitters/seccomp_carried.c), so that a compile builds no filter.  The
 * emitters hand out the carried bytes where the binary has them, else
 * build them afresh: the same bytes either way (tests/unit/test_seccomp_carried.c).
 */
enum seccomp_output {
	SECCOMP_OUT_PFC,		  /* --emit=seccomp */
	SECCOMP_OUT_BPF,		  /* --emit=seccomp-bpf */
	SECCOMP_OUT_LANDLOCK_PFC,	  /* --emit=seccomp-landlock */
	SECCOMP_OUT_LANDLOCK_BPF,	  /* --emit=seccomp-landlock-bpf */
	SECCOMP_OUT_LANDLOCK_NET_PFC, /* --emit=seccomp-landlock-net */
	SECCOMP_OUT_LANDLOCK_NET_BPF, /* --emit=seccomp-landlock-net-bpf */
	SECCOMP_OUT_OCI,		  /* --emit=seccomp-oci */
	SECCOMP_OUT_COUNT
};

/* The file name of each output, as in an output directory (emit.c). */
extern const char *const seccomp_output_file[SECCOMP_OUT_COUNT];

/* Build output K afresh into OUT; 0, or -1 with a message in ERR (as seccomp_generate). */
int seccomp_output_build(enum seccomp_output k, struct textbuf *out, char *err, size_t errlen);

/*
 * The bytes of K this binary carries, built by seccomp_output_build() when
 * it was built: true with *DATA and *LEN set, or false when it carries none
 * (a weak definition answers false; emitters/seccomp_carried.c's replaces it).
 */
bool seccomp_output_carried(enum seccomp_output k, const void **data, size_t *len);

/*
 * The same for the emitter function EMIT (emit_seccomp, ...): false when
 * EMIT is no seccomp emitter or the binary carries nothing.  What EMIT
 * would write, without the copy.
 */
bool seccomp_emitter_carried(int (*emit)(const struct policy *, enum target, struct diag *,
					 struct textbuf *),
			     const void **data, size_t *len);

#endif
