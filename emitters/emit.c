/*
 * emit.c - the table of emitters and targets.
 */
#include "emit.h"

#include "../compiler/decide/container.h"
#include "../compiler/decide/refuse.h"
#include "egress_table.h"
#include "sbpl.h"
#include "seccomp.h"
#include "winjob.h"

#include <string.h>

const struct emitter emitters[] = {
    {"ir", "policy.ir.json", TARGET_ALL_BITS, false, false, emit_ir, NULL},
    {"egress", "egress.rules", TARGET_ALL_BITS, false, false, emit_egress, NULL},
    {"egress-table", "egress.table", TARGET_ALL_BITS | TARGET_BIT(TARGET_KUBERNETES), false, false,
     emit_egress_table, NULL},
    {"bwrap", "bwrap.args", TARGET_BIT(TARGET_LINUX), true, false, emit_bwrap, NULL},
    {"landlock", "landlock.args", TARGET_BIT(TARGET_LINUX), true, false, emit_landlock, NULL},
    {"seccomp", "seccomp.pfc", TARGET_BIT(TARGET_LINUX), true, false, emit_seccomp, NULL},
    {"seccomp-bpf", "seccomp.bpf", TARGET_BIT(TARGET_LINUX), true, true, emit_seccomp_bpf, NULL},
    {"seccomp-oci", "seccomp.oci.json",
     TARGET_BIT(TARGET_LINUX) | TARGET_BIT(TARGET_OCI) | TARGET_BIT(TARGET_KUBERNETES), true, false,
     emit_seccomp_oci, NULL},
    {"seccomp-landlock", "seccomp-landlock.pfc", TARGET_BIT(TARGET_LINUX), true, false,
     emit_seccomp_landlock, NULL},
    {"seccomp-landlock-bpf", "seccomp-landlock.bpf", TARGET_BIT(TARGET_LINUX), true, true,
     emit_seccomp_landlock_bpf, NULL},
    {"seccomp-landlock-net", "seccomp-landlock-net.pfc", TARGET_BIT(TARGET_LINUX), true, false,
     emit_seccomp_landlock_net, NULL},
    {"seccomp-landlock-net-bpf", "seccomp-landlock-net.bpf", TARGET_BIT(TARGET_LINUX), true,
     true, emit_seccomp_landlock_net_bpf, NULL},
    {"sbpl", "profile.sb", TARGET_BIT(TARGET_DARWIN), true, false, emit_sbpl, emit_sbpl_pair},
    {"sbpl-params", "profile.params", TARGET_BIT(TARGET_DARWIN), true, false, emit_sbpl_params, NULL},
    {"winjob", "winjob.manifest", TARGET_BIT(TARGET_WINDOWS), true, false, emit_winjob, NULL},
    {"env", "env", TARGET_ALL_BITS, true, false, emit_env, NULL},
    {"oci", "config.json", TARGET_BIT(TARGET_OCI), true, false, emit_oci, NULL},
    {"kubernetes", "kubernetes.yaml", TARGET_BIT(TARGET_KUBERNETES), true, false, emit_kubernetes, NULL},
    {NULL, NULL, 0, false, false, NULL, NULL},
};

const struct emitter *
emitter_find(const char *name)
{
	for (const struct emitter *e = emitters; e->name; e++)
		if (!strcmp(e->name, name))
			return e;
	return NULL;
}

const struct emitter *
emitter_default(enum target t)
{
	static const char *const kinds[] = {"bwrap", "sbpl", "winjob", "oci", "kubernetes"};

	return emitter_find(kinds[t]);
}

const char *
target_name(enum target t)
{
	static const char *const names[] = {"linux", "darwin", "windows", "oci", "kubernetes"};

	return names[t];
}

int
target_parse(const char *name)
{
	for (int t = 0; t < TARGET_COUNT; t++)
		if (!strcmp(name, target_name((enum target)t)))
			return t;
	return -1;
}

enum sandbox_type
target_backend(enum target t)
{
	/* A container engine makes namespaces as bubblewrap does. */
	static const enum sandbox_type backend[] = {SANDBOX_LINUX_BWRAP, SANDBOX_DARWIN_SEATBELT,
						    SANDBOX_WINDOWS_JOBOBJECT, SANDBOX_LINUX_BWRAP,
						    SANDBOX_LINUX_BWRAP};

	return backend[t];
}

bool
target_has_backend(enum target t, enum sandbox_type s)
{
	return s == target_backend(t) || (t == TARGET_LINUX && s == SANDBOX_LINUX_LANDLOCK);
}

int
emit_check_target(const struct policy *p, enum target t, struct diag *d)
{
	struct arena *a = arena_new();
	struct loc loc;
	enum sandbox_type type = p->os_env.sandbox.type;
	const char *why = refuse_target(
	    a, p, target_has_backend(t, type) ? type : target_backend(t), target_name(t), &loc);

	if (!why && (t == TARGET_OCI || t == TARGET_KUBERNETES))
		why = container_refuse(p, t == TARGET_OCI ? CONTAINER_OCI : CONTAINER_KUBERNETES,
				       &loc);

	if (why && d)
		diag_error(d, loc, "%s", why);
	arena_free(a);
	return why ? -1 : 0;
}
