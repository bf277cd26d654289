/*
 * seccomp_load.c - read, derive the reporting variant of, and load the seccomp
 * filter (seccomp_load.h).
 *
 * Raw system calls only: omnibox-init is linked statically and carries no
 * libseccomp; the program was built by it at build time.
 */
#include "runtime/launch/seccomp_load.h"

#if defined(__linux__)
#include <errno.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

size_t
filter_eperm_to_notify(const struct sock_filter *prog, struct sock_filter *out, size_t n)
{
	size_t turned = 0;

	for (size_t i = 0; i < n; i++) {
		struct sock_filter f = prog[i];

		/* The whole value: ERRNO with another errno, or EPERM with other bits, stays. */
		if (f.code == (BPF_RET | BPF_K) && f.k == (SECCOMP_RET_ERRNO | EPERM)) {
			f.k = SECCOMP_RET_USER_NOTIF;
			turned++;
		}
		out[i] = f;
	}
	return turned;
}

/* Does instruction F leave the accumulator as it was? */
static bool
keeps_a(const struct sock_filter *f)
{
	switch (BPF_CLASS(f->code)) {
	case BPF_LDX:
	case BPF_ST:
	case BPF_STX:
	case BPF_JMP:
		return true;
	case BPF_MISC:
		return BPF_MISCOP(f->code) == BPF_TAX;
	default:
		return false;
	}
}

/* The instructions a jump at I goes to: *N of them into TO. */
static void
successors(const struct sock_filter *f, size_t i, size_t to[2], size_t *n)
{
	*n = 0;
	if (BPF_CLASS(f->code) == BPF_RET)
		return;
	if (BPF_CLASS(f->code) != BPF_JMP) {
		to[(*n)++] = i + 1;
	} else if (BPF_OP(f->code) == BPF_JA) {
		to[(*n)++] = i + 1 + f->k;
	} else {
		to[(*n)++] = i + 1 + f->jt;
		to[(*n)++] = i + 1 + f->jf;
	}
}

static bool
listed(unsigned arch, const unsigned *arches, size_t n_arches)
{
	for (size_t k = 0; k < n_arches; k++)
		if (arches[k] == arch)
			return true;
	return false;
}

size_t
filter_for_abis(const struct sock_filter *prog, size_t n, const unsigned *arches, size_t n_arches,
		struct sock_filter *out)
{
	/* Per instruction: 0 not reached, 1 reached with the accumulator
	 * anything, 2 reached on every path with the architecture in it. */
	unsigned char *a = calloc(n, 1);
	size_t *at = malloc(n * sizeof(*at)), m = 0;

	if (!a || !at) {
		free(a);
		free(at);
		memcpy(out, prog, n * sizeof(*out));
		return n;
	}
	memcpy(out, prog, n * sizeof(*out));
	a[0] = 1;
	/* Jumps go forward only: one pass sees every way into an instruction first. */
	for (size_t i = 0; i < n; i++) {
		struct sock_filter *f = &out[i];
		unsigned char next;
		size_t to[2], n_to;

		if (!a[i])
			continue;
		if (a[i] == 2 && f->code == (BPF_JMP | BPF_JEQ | BPF_K) &&
		    !listed(f->k, arches, n_arches))
			*f = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JA, f->jf, 0, 0);
		next = f->code == (BPF_LD | BPF_W | BPF_ABS) &&
			       f->k == offsetof(struct seccomp_data, arch)
			   ? 2
		       : keeps_a(f) ? a[i]
				    : 1;
		successors(f, i, to, &n_to);
		for (size_t k = 0; k < n_to; k++)
			if (to[k] < n)
				a[to[k]] = a[to[k]] ? (a[to[k]] < next ? a[to[k]] : next) : next;
	}
	for (size_t i = 0; i < n; i++)
		at[i] = a[i] ? m++ : SIZE_MAX;
	m = 0;
	for (size_t i = 0; i < n; i++) {
		struct sock_filter f = out[i];

		if (!a[i])
			continue;
		if (BPF_CLASS(f.code) == BPF_JMP && BPF_OP(f.code) == BPF_JA) {
			f.k = (unsigned)(at[i + 1 + f.k] - at[i] - 1);
		} else if (BPF_CLASS(f.code) == BPF_JMP) {
			f.jt = (unsigned char)(at[i + 1 + f.jt] - at[i] - 1);
			f.jf = (unsigned char)(at[i + 1 + f.jf] - at[i] - 1);
		}
		out[m++] = f;
	}
	free(a);
	free(at);
	return m;
}

size_t
filter_native_abis(const unsigned **arches)
{
#if defined(__x86_64__)
	static const unsigned native[] = {AUDIT_ARCH_X86_64, AUDIT_ARCH_I386};
#elif defined(__aarch64__)
	static const unsigned native[] = {AUDIT_ARCH_AARCH64, AUDIT_ARCH_ARM};
#else
	static const unsigned native[] = {0};
	*arches = native;
	return 0;
#endif
	*arches = native;
	return sizeof(native) / sizeof(native[0]);
}

int
filter_read(int fd, struct sock_filter **prog, size_t *n, char *err, size_t errlen)
{
	/* One byte more than the largest program the kernel takes: too long shows. */
	size_t cap = BPF_MAXINSNS * sizeof(struct sock_filter) + 1, len = 0;
	char *buf = malloc(cap);

	*prog = NULL;
	*n = 0;
	if (!buf) {
		snprintf(err, errlen, "out of memory");
		close(fd);
		return -1;
	}
	/* pread from 0: the memfd is shared with omnibox-run, and its offset with it. */
	while (len < cap) {
		ssize_t got = pread(fd, buf + len, cap - len, (off_t)len);

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			snprintf(err, errlen, "reading the seccomp filter: %s", strerror(errno));
			goto fail;
		}
		if (got == 0)
			break;
		len += (size_t)got;
	}
	if (len == 0 || len % sizeof(struct sock_filter) ||
	    len / sizeof(struct sock_filter) > BPF_MAXINSNS) {
		snprintf(err, errlen, "the seccomp filter is %zu bytes: not a program", len);
		goto fail;
	}
	*n = len / sizeof(struct sock_filter);
	/*
	 * Every return is a constant (libseccomp's), and none reports: one
	 * that returns the accumulator could refuse where the rewrite cannot
	 * see it, and a report loaded without a listener fails with ENOSYS.
	 */
	for (size_t i = 0; i < *n; i++) {
		const struct sock_filter *f = (const struct sock_filter *)buf + i;

		if (BPF_CLASS(f->code) != BPF_RET)
			continue;
		if (BPF_RVAL(f->code) != BPF_K) {
			snprintf(err, errlen, "the seccomp filter returns a computed value (%zu)",
				 i);
			goto fail;
		}
		if ((f->k & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_USER_NOTIF) {
			snprintf(err, errlen,
				 "the seccomp filter reports by itself (%zu): it must refuse with "
				 "EPERM",
				 i);
			goto fail;
		}
	}
	close(fd);
	*prog = (struct sock_filter *)buf;
	return 0;
fail:
	free(buf);
	close(fd);
	*n = 0;
	return -1;
}

/* Can this kernel hand reports to a listener? */
static bool
notify_available(void)
{
	uint32_t action = SECCOMP_RET_USER_NOTIF;

	return syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0;
}

/*
 * Load the reporting variant of PROG with a new listener, into *LISTENER.
 * 0: loaded; 1: the kernel gives no listener here, nothing was loaded;
 * -1: failed, with a message in ERR.
 */
static int
install_reporting(const struct sock_filter *prog, size_t n, int *listener, char *err, size_t errlen)
{
	struct sock_filter *reporting = malloc(n * sizeof(*reporting));
	struct sock_fprog fp = {.len = (unsigned short)n, .filter = reporting};
	long fd;
	int saved;

	if (!reporting) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	filter_eperm_to_notify(prog, reporting, n);
	fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &fp);
	saved = errno;
	/* The kernel keeps its own copy. */
	free(reporting);
	if (fd >= 0) {
		*listener = (int)fd;
		return 0;
	}
	/* EINVAL: no such flag; EBUSY: a filter above holds a listener. */
	if (saved == EINVAL || saved == EBUSY || saved == ENOSYS || saved == EOPNOTSUPP)
		return 1;
	snprintf(err, errlen, "loading the seccomp filter: %s", strerror(saved));
	return -1;
}

int
filter_install(const struct sock_filter *prog, size_t n, bool want_listener, int *listener,
	       char *err, size_t errlen)
{
	/* The kernel only reads the program. */
	struct sock_fprog fp = {.len = (unsigned short)n, .filter = (struct sock_filter *)prog};

	*listener = -1;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		snprintf(err, errlen, "PR_SET_NO_NEW_PRIVS: %s", strerror(errno));
		return -1;
	}
	if (want_listener && notify_available()) {
		int rc = install_reporting(prog, n, listener, err, errlen);

		if (rc <= 0)
			return rc;
	}
	/*
	 * No listener: the program as it came, its refusals EPERM, uncounted.
	 * prctl, as bwrap does: it works wherever seccomp filters do.
	 */
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fp, 0, 0) < 0) {
		snprintf(err, errlen, "loading the seccomp filter: %s", strerror(errno));
		return -1;
	}
	return 0;
}
#endif
