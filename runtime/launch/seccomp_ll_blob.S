/*
 * seccomp_ll_blob.S - the linux_landlock backend's seccomp filter, compiled
 * ahead of time.
 *
 * As seccomp_blob.S, of the variant `omnibox-compile
 * --emit=seccomp-landlock-bpf` writes: the base filter's rules, with the
 * socket calls decided by the rules that stand in for the network namespace
 * that backend does not make (emitters/seccomp.h,
 * seccomp_landlock_rule_table), and its variant for allow_network: true
 * (`--emit=seccomp-landlock-net-bpf`: the `closed` rules left out).  omnibox-init turns its EPERM refusals into
 * reports at load time, as it does the base filter's.
 */
	.section .rodata
	.global omnibox_seccomp_ll_bpf
	.global omnibox_seccomp_ll_bpf_end
	.balign 8
omnibox_seccomp_ll_bpf:
	.incbin SECCOMP_LL_BPF_PATH
omnibox_seccomp_ll_bpf_end:
	.global omnibox_seccomp_ll_net_bpf
	.global omnibox_seccomp_ll_net_bpf_end
	.balign 8
omnibox_seccomp_ll_net_bpf:
	.incbin SECCOMP_LL_NET_BPF_PATH
omnibox_seccomp_ll_net_bpf_end:
	.section .note.GNU-stack,"",@progbits
