/*
 * seccomp_carried.c - the seccomp outputs omnibox-compile carries
 * (seccomp.h: seccomp_output_carried), built when it was built by the
 * emitters' own functions (seccomp_gen.c) and assembled in by
 * seccomp_blobs.S.  Linked into omnibox-compile (and the test that
 * compares them with a fresh build), it replaces the library's weak
 * definition, which carries nothing.
 */
#include "seccomp.h"

extern const unsigned char omnibox_carried_pfc[], omnibox_carried_pfc_end[];
extern const unsigned char omnibox_carried_bpf[], omnibox_carried_bpf_end[];
extern const unsigned char omnibox_carried_ll_pfc[], omnibox_carried_ll_pfc_end[];
extern const unsigned char omnibox_carried_ll_bpf[], omnibox_carried_ll_bpf_end[];
extern const unsigned char omnibox_carried_llnet_pfc[], omnibox_carried_llnet_pfc_end[];
extern const unsigned char omnibox_carried_llnet_bpf[], omnibox_carried_llnet_bpf_end[];
extern const unsigned char omnibox_carried_oci[], omnibox_carried_oci_end[];

bool
seccomp_output_carried(enum seccomp_output k, const void **data, size_t *len)
{
	static const unsigned char *const span[SECCOMP_OUT_COUNT][2] = {
	    [SECCOMP_OUT_PFC] = {omnibox_carried_pfc, omnibox_carried_pfc_end},
	    [SECCOMP_OUT_BPF] = {omnibox_carried_bpf, omnibox_carried_bpf_end},
	    [SECCOMP_OUT_LANDLOCK_PFC] = {omnibox_carried_ll_pfc, omnibox_carried_ll_pfc_end},
	    [SECCOMP_OUT_LANDLOCK_BPF] = {omnibox_carried_ll_bpf, omnibox_carried_ll_bpf_end},
	    [SECCOMP_OUT_LANDLOCK_NET_PFC] = {omnibox_carried_llnet_pfc,
					      omnibox_carried_llnet_pfc_end},
	    [SECCOMP_OUT_LANDLOCK_NET_BPF] = {omnibox_carried_llnet_bpf,
					      omnibox_carried_llnet_bpf_end},
	    [SECCOMP_OUT_OCI] = {omnibox_carried_oci, omnibox_carried_oci_end},
	};

	if ((unsigned)k >= SECCOMP_OUT_COUNT) {
		*data = NULL;
		*len = 0;
		return false;
	}
	*data = span[k][0];
	*len = (size_t)(span[k][1] - span[k][0]);
	return true;
}
