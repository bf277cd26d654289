/*
 * seccomp_blobs.S - the seccomp outputs that depend on no policy, as the
 * build wrote them (emitters/seccomp_gen.c, into a directory the assembler
 * searches: -Wa,-I,DIR).  Each between its two labels, in the order of
 * enum seccomp_output; seccomp_carried.c hands them out.
 */
	.section .rodata
	.balign 8
#define BLOB(sym, file)		\
	.global sym;		\
	.global sym##_end;	\
sym:				\
	.incbin file;		\
sym##_end:			\
	.balign 8

	BLOB(omnibox_carried_pfc, "seccomp.pfc")
	BLOB(omnibox_carried_bpf, "seccomp.bpf")
	BLOB(omnibox_carried_ll_pfc, "seccomp-landlock.pfc")
	BLOB(omnibox_carried_ll_bpf, "seccomp-landlock.bpf")
	BLOB(omnibox_carried_llnet_pfc, "seccomp-landlock-net.pfc")
	BLOB(omnibox_carried_llnet_bpf, "seccomp-landlock-net.bpf")
	BLOB(omnibox_carried_oci, "seccomp.oci.json")
	.section .note.GNU-stack,"",@progbits
