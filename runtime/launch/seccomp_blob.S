/*
 * seccomp_blob.S - the seccomp filter, compiled ahead of time.
 *
 * The filter is the same for every policy, so the build generates it once
 * with libseccomp (`omnibox-compile --emit=seccomp-bpf`) and omnibox-run
 * carries the bytes: launching costs no filter generation, and what it
 * hands omnibox-init is exactly what --emit=seccomp shows, the standalone
 * filter.  omnibox-init turns its EPERM refusals into reports at load time
 * (runtime/launch/seccomp_load.h).  This is the filter of the bwrap
 * backend; the linux_landlock backend's variant is seccomp_ll_blob.S.
 */
	.section .rodata
	.global omnibox_seccomp_bpf
	.global omnibox_seccomp_bpf_end
	.balign 8
omnibox_seccomp_bpf:
	.incbin SECCOMP_BPF_PATH
omnibox_seccomp_bpf_end:
	.section .note.GNU-stack,"",@progbits
