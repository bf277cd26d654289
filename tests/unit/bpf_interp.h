/*
 * bpf_interp.h - a classic-BPF interpreter for seccomp filters, for tests.
 *
 * It accepts what the kernel's seccomp loader accepts (bpf_check_classic()
 * and seccomp_check_filter()) and nothing else: the instructions listed
 * there, forward jumps that stay inside the program, loads of aligned
 * 32-bit words of struct seccomp_data, scratch memory read only after it
 * was written, and a RET at the end.  A program it refuses, the kernel
 * would refuse too, so a test that runs the emitted filter here also
 * checks that it would load.
 */
#ifndef OMNIBOX_BPF_INTERP_H
#define OMNIBOX_BPF_INTERP_H

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Check the N instructions at PROG.  Returns 0, or -1 with the reason and
 * the offending instruction's index in ERR (ERRLEN bytes, terminated).
 */
int bpf_interp_check(const struct sock_filter *prog, size_t n, char *err, size_t errlen);

/*
 * Check PROG, then run it on SD.  Returns 0 with the program's return
 * value (SECCOMP_RET_* action and data) in *RET, or -1 with a message in
 * ERR when the program is invalid.
 */
int bpf_interp_run(const struct sock_filter *prog, size_t n, const struct seccomp_data *sd,
		   uint32_t *ret, char *err, size_t errlen);

#endif
