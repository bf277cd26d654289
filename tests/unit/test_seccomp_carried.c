/*
 * test_seccomp_carried.c - the seccomp outputs omnibox-compile carries
 * (emitters/seccomp_carried.c, written at build time by seccomp_gen) are
 * the bytes the emitters' functions build now, and the emitters hand them
 * out.  Linked like omnibox-compile: with the carried bytes.
 */
#include <criterion/criterion.h>

#include <string.h>

#include "compiler/base/arena.h"
#include "emitters/emit.h"
#include "emitters/seccomp.h"

/* The emitter (emit.c) of each output, by its --emit name. */
static const char *const emit_name[SECCOMP_OUT_COUNT] = {
    [SECCOMP_OUT_PFC] = "seccomp",
    [SECCOMP_OUT_BPF] = "seccomp-bpf",
    [SECCOMP_OUT_LANDLOCK_PFC] = "seccomp-landlock",
    [SECCOMP_OUT_LANDLOCK_BPF] = "seccomp-landlock-bpf",
    [SECCOMP_OUT_LANDLOCK_NET_PFC] = "seccomp-landlock-net",
    [SECCOMP_OUT_LANDLOCK_NET_BPF] = "seccomp-landlock-net-bpf",
    [SECCOMP_OUT_OCI] = "seccomp-oci",
};

Test(seccomp_carried, every_output_is_carried_and_equals_a_fresh_build)
{
	for (int k = 0; k < SECCOMP_OUT_COUNT; k++) {
		struct textbuf fresh = {0};
		const void *data;
		size_t len;
		char err[256];

		cr_assert(seccomp_output_carried((enum seccomp_output)k, &data, &len),
			  "%s is not carried", seccomp_output_file[k]);
		cr_assert_eq(seccomp_output_build((enum seccomp_output)k, &fresh, err, sizeof(err)),
			     0, "%s: %s", seccomp_output_file[k], err);
		cr_assert_gt(len, 0, "%s: carried empty", seccomp_output_file[k]);
		cr_assert(fresh.len == len && !memcmp(fresh.data, data, len),
			  "%s: the carried bytes (%zu) differ from a fresh build (%zu); rebuild",
			  seccomp_output_file[k], len, fresh.len);
		tb_free(&fresh);
	}
}

Test(seccomp_carried, the_emitters_hand_out_the_carried_bytes)
{
	static const struct policy none;

	for (int k = 0; k < SECCOMP_OUT_COUNT; k++) {
		const struct emitter *e = emitter_find(emit_name[k]);
		struct arena *a = arena_new();
		struct textbuf out = {0};
		const void *data;
		size_t len;
		struct diag d;

		cr_assert_not_null(e, "no emitter %s", emit_name[k]);
		cr_assert_str_eq(e->file, seccomp_output_file[k], "%s: file name", emit_name[k]);
		diag_init(&d, a, "agent.yaml", NULL, 0);
		cr_assert_eq(e->emit(&none, TARGET_LINUX, &d, &out), 0, "%s failed", emit_name[k]);
		cr_assert(seccomp_output_carried((enum seccomp_output)k, &data, &len));
		cr_assert(out.len == len && !memcmp(out.data, data, len), "%s: not the carried bytes",
			  emit_name[k]);
		/* What omnibox-compile's output directory takes without the copy. */
		cr_assert(seccomp_emitter_carried(e->emit, &data, &len), "%s", emit_name[k]);
		cr_assert(out.len == len && !memcmp(out.data, data, len), "%s: not the carried bytes",
			  emit_name[k]);
		tb_free(&out);
		arena_free(a);
	}
}

Test(seccomp_carried, an_unknown_output_is_not_carried)
{
	const void *data = "x";
	size_t len = 1;

	cr_assert_not(seccomp_output_carried(SECCOMP_OUT_COUNT, &data, &len));
	cr_assert_null(data);
	cr_assert_eq(len, 0);
	/* Nor is any other emitter's output. */
	for (const struct emitter *e = emitters; e->name; e++) {
		if (!strncmp(e->name, "seccomp", 7))
			continue;
		data = "x";
		cr_assert_not(seccomp_emitter_carried(e->emit, &data, &len), "%s", e->name);
		cr_assert_null(data);
	}
}
