/*
 * bpf_interp.c - check and run classic BPF the way seccomp does.
 *
 * Semantics follow the kernel's conversion of classic BPF: 32-bit
 * registers A and X, sixteen 32-bit scratch words, unsigned comparisons,
 * division by a zero X ends the program with 0 (SECCOMP_RET_KILL_THREAD),
 * shift counts taken modulo 32.
 */
#include "bpf_interp.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static int __attribute__((format(printf, 4, 5)))
fail(char *err, size_t errlen, size_t pc, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(err, errlen, "instruction %zu: ", pc);

	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < errlen)
		vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

/* The conditional jumps, each with a K and an X form. */
static bool
is_jump(uint16_t code)
{
	switch (code) {
	case BPF_JMP | BPF_JEQ | BPF_K:
	case BPF_JMP | BPF_JEQ | BPF_X:
	case BPF_JMP | BPF_JGE | BPF_K:
	case BPF_JMP | BPF_JGE | BPF_X:
	case BPF_JMP | BPF_JGT | BPF_K:
	case BPF_JMP | BPF_JGT | BPF_X:
	case BPF_JMP | BPF_JSET | BPF_K:
	case BPF_JMP | BPF_JSET | BPF_X:
		return true;
	}
	return false;
}

/* Only the opcodes seccomp_check_filter() lets through, with bpf_check_classic()'s checks. */
static int
check_insn(const struct sock_filter *f, size_t pc, size_t n, char *err, size_t errlen)
{
	switch (f->code) {
	case BPF_LD | BPF_W | BPF_ABS:
		if (f->k >= sizeof(struct seccomp_data) || f->k % 4)
			return fail(err, errlen, pc,
				    "load at %u: unaligned or outside struct seccomp_data", f->k);
		return 0;
	case BPF_ALU | BPF_DIV | BPF_K:
		if (!f->k)
			return fail(err, errlen, pc, "division by constant 0");
		return 0;
	case BPF_ALU | BPF_LSH | BPF_K:
	case BPF_ALU | BPF_RSH | BPF_K:
		if (f->k >= 32)
			return fail(err, errlen, pc, "shift by %u", f->k);
		return 0;
	case BPF_LD | BPF_MEM:
	case BPF_LDX | BPF_MEM:
	case BPF_ST:
	case BPF_STX:
		if (f->k >= BPF_MEMWORDS)
			return fail(err, errlen, pc, "scratch word %u of %d", f->k, BPF_MEMWORDS);
		return 0;
	case BPF_JMP | BPF_JA:
		if (f->k >= n - pc - 1)
			return fail(err, errlen, pc, "jump by %u leaves the program", f->k);
		return 0;
	case BPF_LD | BPF_W | BPF_LEN:
	case BPF_LDX | BPF_W | BPF_LEN:
	case BPF_RET | BPF_K:
	case BPF_RET | BPF_A:
	case BPF_ALU | BPF_ADD | BPF_K:
	case BPF_ALU | BPF_ADD | BPF_X:
	case BPF_ALU | BPF_SUB | BPF_K:
	case BPF_ALU | BPF_SUB | BPF_X:
	case BPF_ALU | BPF_MUL | BPF_K:
	case BPF_ALU | BPF_MUL | BPF_X:
	case BPF_ALU | BPF_DIV | BPF_X:
	case BPF_ALU | BPF_AND | BPF_K:
	case BPF_ALU | BPF_AND | BPF_X:
	case BPF_ALU | BPF_OR | BPF_K:
	case BPF_ALU | BPF_OR | BPF_X:
	case BPF_ALU | BPF_XOR | BPF_K:
	case BPF_ALU | BPF_XOR | BPF_X:
	case BPF_ALU | BPF_LSH | BPF_X:
	case BPF_ALU | BPF_RSH | BPF_X:
	case BPF_ALU | BPF_NEG:
	case BPF_LD | BPF_IMM:
	case BPF_LDX | BPF_IMM:
	case BPF_MISC | BPF_TAX:
	case BPF_MISC | BPF_TXA:
		return 0;
	}
	if (is_jump(f->code)) {
		if (f->jt >= n - pc - 1 || f->jf >= n - pc - 1)
			return fail(err, errlen, pc, "jump by %u/%u leaves the program", f->jt,
				    f->jf);
		return 0;
	}
	return fail(err, errlen, pc, "opcode 0x%04x is not allowed in a seccomp filter", f->code);
}

/*
 * Scratch words must be written before they are read on every path, as in
 * the kernel's check_load_and_stores(): a jump passes the set of written
 * words to its targets, which keep what all their predecessors agree on.
 */
static int
check_memory(const struct sock_filter *prog, size_t n, char *err, size_t errlen)
{
	uint16_t masks[BPF_MAXINSNS];
	uint16_t valid = 0;

	memset(masks, 0xff, sizeof(masks));
	for (size_t pc = 0; pc < n; pc++) {
		const struct sock_filter *f = &prog[pc];

		valid &= masks[pc];
		if (f->code == BPF_ST || f->code == BPF_STX) {
			valid |= (uint16_t)(1u << f->k);
		} else if (f->code == (BPF_LD | BPF_MEM) || f->code == (BPF_LDX | BPF_MEM)) {
			if (!(valid & (1u << f->k)))
				return fail(err, errlen, pc, "scratch word %u read before written",
					    f->k);
		} else if (f->code == (BPF_JMP | BPF_JA)) {
			masks[pc + 1 + f->k] &= valid;
			valid = 0xffff;
		} else if (is_jump(f->code)) {
			masks[pc + 1 + f->jt] &= valid;
			masks[pc + 1 + f->jf] &= valid;
			valid = 0xffff;
		}
	}
	return 0;
}

int
bpf_interp_check(const struct sock_filter *prog, size_t n, char *err, size_t errlen)
{
	if (n == 0 || n > BPF_MAXINSNS)
		return fail(err, errlen, 0, "a program of %zu instructions (1 to %d allowed)", n,
			    BPF_MAXINSNS);
	for (size_t pc = 0; pc < n; pc++)
		if (check_insn(&prog[pc], pc, n, err, errlen) < 0)
			return -1;
	if (prog[n - 1].code != (BPF_RET | BPF_K) && prog[n - 1].code != (BPF_RET | BPF_A))
		return fail(err, errlen, n - 1, "the program does not end with a return");
	return check_memory(prog, n, err, errlen);
}

static bool
jump_taken(uint16_t code, uint32_t a, uint32_t operand)
{
	switch (BPF_OP(code)) {
	case BPF_JEQ:
		return a == operand;
	case BPF_JGT:
		return a > operand;
	case BPF_JGE:
		return a >= operand;
	default: /* BPF_JSET */
		return (a & operand) != 0;
	}
}

static uint32_t
alu(uint16_t code, uint32_t a, uint32_t operand)
{
	switch (BPF_OP(code)) {
	case BPF_ADD:
		return a + operand;
	case BPF_SUB:
		return a - operand;
	case BPF_MUL:
		return a * operand;
	case BPF_DIV:
		return a / operand; /* zero handled by the caller */
	case BPF_AND:
		return a & operand;
	case BPF_OR:
		return a | operand;
	case BPF_XOR:
		return a ^ operand;
	case BPF_LSH:
		return a << (operand & 31);
	case BPF_RSH:
		return a >> (operand & 31);
	default: /* BPF_NEG */
		return 0u - a;
	}
}

int
bpf_interp_run(const struct sock_filter *prog, size_t n, const struct seccomp_data *sd,
	       uint32_t *ret, char *err, size_t errlen)
{
	uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = {0};
	size_t pc = 0;

	if (bpf_interp_check(prog, n, err, errlen) < 0)
		return -1;
	/* Jumps only go forward and stay inside, and the last instruction returns. */
	for (;; pc++) {
		const struct sock_filter *f = &prog[pc];
		uint32_t operand = BPF_SRC(f->code) == BPF_X ? x : f->k;

		switch (BPF_CLASS(f->code)) {
		case BPF_LD:
			if (BPF_MODE(f->code) == BPF_ABS)
				memcpy(&a, (const char *)sd + f->k, sizeof(a));
			else if (BPF_MODE(f->code) == BPF_LEN)
				a = sizeof(*sd);
			else if (BPF_MODE(f->code) == BPF_MEM)
				a = mem[f->k];
			else
				a = f->k;
			break;
		case BPF_LDX:
			if (BPF_MODE(f->code) == BPF_LEN)
				x = sizeof(*sd);
			else if (BPF_MODE(f->code) == BPF_MEM)
				x = mem[f->k];
			else
				x = f->k;
			break;
		case BPF_ST:
			mem[f->k] = a;
			break;
		case BPF_STX:
			mem[f->k] = x;
			break;
		case BPF_ALU:
			if (BPF_OP(f->code) == BPF_DIV && operand == 0) {
				*ret = 0;
				return 0;
			}
			a = alu(f->code, a, operand);
			break;
		case BPF_JMP:
			if (BPF_OP(f->code) == BPF_JA)
				pc += f->k;
			else
				pc += jump_taken(f->code, a, operand) ? f->jt : f->jf;
			break;
		case BPF_RET:
			*ret = BPF_RVAL(f->code) == BPF_A ? a : f->k;
			return 0;
		default: /* BPF_MISC */
			if (BPF_MISCOP(f->code) == BPF_TAX)
				x = a;
			else
				a = x;
			break;
		}
	}
}
