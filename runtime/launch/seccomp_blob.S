/*
 * seccomp_blob.S - the seccomp filter, compiled ahead of time.
 *
 * The filter is the same for every policy, so the build generates it once
 * with libseccomp (`omnibox-compile --emit=seccomp-bpf`) and omnibox-run
 * carries the bytes: launching costs no filter generation, and what runs
 * is exactly what --emit=seccomp shows.
 */
	.section .rodata
	.global omnibox_seccomp_bpf
	.global omnibox_seccomp_bpf_end
	.balign 8
omnibox_seccomp_bpf:
	.incbin SECCOMP_BPF_PATH
omnibox_seccomp_bpf_end:
	.section .note.GNU-stack,"",@progbits
