/*
 * notify.c - the seccomp filter's refusals, counted and answered (notify.h).
 */
#include "runtime/launch/notify.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "runtime/launch/pty.h"

struct notify_count {
	uint32_t arch; /* seccomp_data.arch: AUDIT_ARCH_* */
	int nr;	       /* as the kernel saw it (x32's bit 30 included) */
	unsigned long count;
};

struct notify {
	struct event_base *base;
	struct event *ev;
	int fd; /* the listener, or -1 */
	bool verbose, quiet;
	struct notify_count counts[NOTIFY_MAX];
	size_t n_counts;
	unsigned long others; /* refusals of calls beyond the NOTIFY_MAX first */
	unsigned long shown;
};

unsigned long
notify_total(const struct notify *n)
{
	unsigned long total = n->others;

	for (size_t i = 0; i < n->n_counts; i++)
		total += n->counts[i].count;
	return total;
}

#if defined(__linux__)
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <seccomp.h>
#include <sys/ioctl.h>

#include "emitters/seccomp.h"

#define X32_SYSCALL_BIT 0x40000000u

/* The ABIs of the filter (emitters/emit_seccomp.c), by seccomp_data.arch. */
static const struct {
	uint32_t audit;
	const char *name;
} abi_names[] = {
    {AUDIT_ARCH_X86_64, "x86_64"},
    {AUDIT_ARCH_I386, "x86"},
    {AUDIT_ARCH_AARCH64, "aarch64"},
    {AUDIT_ARCH_ARM, "arm"},
};

/* libseccomp's token for the ABI of a report: its AUDIT_ARCH, but for x32. */
static uint32_t
arch_token(uint32_t arch, int nr)
{
	if (arch == AUDIT_ARCH_X86_64 && ((uint32_t)nr & X32_SYSCALL_BIT))
		return SCMP_ARCH_X32;
	return arch;
}

static const char *
abi_name(uint32_t arch, int nr)
{
	if (arch_token(arch, nr) == SCMP_ARCH_X32)
		return "x32";
	for (size_t i = 0; i < sizeof(abi_names) / sizeof(abi_names[0]); i++)
		if (abi_names[i].audit == arch)
			return abi_names[i].name;
	return "?";
}

/*
 * "mount", or "mount [x86]" for another ABI than this machine's, or the
 * number when neither libseccomp nor the filter's table has a name for it.
 * In BUF.
 */
static const char *
call_name(uint32_t arch, int nr, char *buf, size_t len)
{
	char *name = seccomp_syscall_resolve_num_arch(arch_token(arch, nr), nr);
	bool native = arch_token(arch, nr) == seccomp_arch_native();

	if (name)
		snprintf(buf, len, "%s%s%s%s", name, native ? "" : " [",
			 native ? "" : abi_name(arch, nr), native ? "" : "]");
	else if (seccomp_table_name(nr))
		/* Newer than libseccomp's tables: the number is the same on every ABI. */
		snprintf(buf, len, "%s%s%s%s", seccomp_table_name(nr), native ? "" : " [",
			 native ? "" : abi_name(arch, nr), native ? "" : "]");
	else
		snprintf(buf, len, "%d [%s]", nr, abi_name(arch, nr));
	free(name);
	return buf;
}

/*
 * The caller's PID inside the sandbox (the last of its NSpid), which is
 * what the agent's own tools show; the host's PID when /proc cannot say.
 */
static long
sandbox_pid(uint32_t pid)
{
	char path[64], line[256];
	long inner = pid;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/status", pid);
	f = fopen(path, "re");
	if (!f)
		return inner;
	while (fgets(line, sizeof(line), f)) {
		char *p, *end;

		if (strncmp(line, "NSpid:", 6))
			continue;
		for (p = line + 6;; p = end) {
			long v = strtol(p, &end, 10);

			if (end == p)
				break;
			inner = v;
		}
		break;
	}
	fclose(f);
	return inner;
}

static void
count(struct notify *n, const struct seccomp_notif *req)
{
	size_t i;

	for (i = 0; i < n->n_counts; i++)
		if (n->counts[i].arch == req->data.arch && n->counts[i].nr == req->data.nr)
			break;
	if (i == n->n_counts && n->n_counts < NOTIFY_MAX)
		n->counts[n->n_counts++] = (struct notify_count){req->data.arch, req->data.nr, 0};
	if (i < n->n_counts)
		n->counts[i].count++;
	else
		n->others++;
	if (!n->verbose || n->shown > NOTIFY_SHOWN)
		return;
	/* In raw mode (an interactive launch's) a line must return the carriage too. */
	if (n->shown++ < NOTIFY_SHOWN) {
		char name[96];

		fprintf(stderr, "omnibox-run: refused syscall %s (pid %ld)%s",
			call_name(req->data.arch, req->data.nr, name, sizeof(name)),
			sandbox_pid(req->pid), pty_is_raw() ? "\r\n" : "\n");
	} else {
		fprintf(stderr,
			"omnibox-run: more refusals not shown (the summary at exit counts "
			"them)%s",
			pty_is_raw() ? "\r\n" : "\n");
	}
}

/*
 * Give up the listener: the kernel then fails every held and later
 * refused call with ENOSYS.  Refused still; and nothing waits for an
 * answer that would never come.
 */
static void
stop(struct notify *n, const char *why)
{
	if (why)
		fprintf(stderr,
			"omnibox-run: warning: the seccomp listener failed (%s): refusals are no "
			"longer counted, and fail with ENOSYS%s",
			why, pty_is_raw() ? "\r\n" : "\n");
	if (n->ev) {
		event_free(n->ev);
		n->ev = NULL;
	}
	if (n->fd >= 0) {
		close(n->fd);
		n->fd = -1;
	}
}

/* How many reports one wakeup answers, before the loop serves the rest of its events. */
#define BATCH 64

static void
on_listener(evutil_socket_t fd, short what, void *arg)
{
	struct notify *n = arg;

	(void)what;
	for (int k = 0; k < BATCH && n->fd >= 0; k++) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		struct seccomp_notif req;
		struct seccomp_notif_resp resp;

		/*
		 * NOTIF_RECV blocks while no report is pending, and the
		 * listener also wakes up the loop when the last process of the
		 * sandbox is gone (POLLHUP): receive only what poll says is there.
		 */
		if (poll(&p, 1, 0) <= 0)
			return;
		if (!(p.revents & POLLIN)) {
			if (p.revents & (POLLHUP | POLLERR | POLLNVAL))
				stop(n, NULL); /* nobody is left to report */
			return;
		}
		memset(&req, 0, sizeof(req)); /* the kernel wants it zeroed */
		if (ioctl(fd, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0) {
			/* ENOENT: the caller was killed before it could be told. */
			if (errno == ENOENT || errno == EINTR)
				continue;
			stop(n, strerror(errno));
			return;
		}
		count(n, &req);
		memset(&resp, 0, sizeof(resp));
		resp.id = req.id;
		resp.error = -EPERM;
		resp.val = 0;
		resp.flags = 0;
		/* ENOENT: the caller died, or a signal made it give up the call
		 * (it will make it again, and be refused again). */
		if (ioctl(fd, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0 && errno != ENOENT) {
			stop(n, strerror(errno));
			return;
		}
	}
}

/* Is FD a seccomp listener (and not whatever else came over the socket)? */
static bool
is_listener(int fd)
{
	char path[64], target[64];
	ssize_t len;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	len = readlink(path, target, sizeof(target) - 1);
	if (len < 0)
		return false;
	target[len] = '\0';
	return !strcmp(target, "anon_inode:seccomp notify");
}

int
notify_ready(struct notify *n, int sock)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} ctl;
	char c = 0;
	struct iovec iov = {.iov_base = &c, .iov_len = 1};
	struct msghdr msg = {.msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = ctl.buf,
			     .msg_controllen = sizeof(ctl)};
	struct cmsghdr *h;
	int fd = -1;
	ssize_t got;

	do
		got = recvmsg(sock, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	while (got < 0 && errno == EINTR);
	if (got < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK ? -1 : 0;
	for (h = CMSG_FIRSTHDR(&msg); h; h = CMSG_NXTHDR(&msg, h))
		if (h->cmsg_level == SOL_SOCKET && h->cmsg_type == SCM_RIGHTS &&
		    h->cmsg_len == CMSG_LEN(sizeof(int)))
			memcpy(&fd, CMSG_DATA(h), sizeof(int));
	if (got != 1 || c != '1') {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	if (fd >= 0 && (!is_listener(fd) || n->fd >= 0)) {
		close(fd);
		fprintf(stderr, "omnibox-run: warning: what came with omnibox-init's ready byte is "
				"no seccomp listener: syscall refusals will not be counted\n");
		return 1;
	}
	if (fd < 0) {
		if (!n->quiet)
			fprintf(stderr,
				"omnibox-run: warning: the kernel cannot report seccomp refusals "
				"here (before Linux 5.0, or a seccomp listener above omnibox's "
				"own): syscall refusals will not be counted; they still fail "
				"with EPERM\n");
		return 1;
	}
	n->fd = fd;
	n->ev = event_new(n->base, fd, EV_READ | EV_PERSIST, on_listener, n);
	if (!n->ev || event_add(n->ev, NULL) < 0)
		stop(n, "cannot watch it");
	return 1;
}
#else
/* Elsewhere there is no seccomp, and no listener: only the byte. */
int
notify_ready(struct notify *n, int sock)
{
	char c = 0;
	ssize_t got = recv(sock, &c, 1, MSG_DONTWAIT);

	(void)n;
	if (got < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK ? -1 : 0;
	return got == 1 && c == '1';
}

static void
stop(struct notify *n, const char *why)
{
	(void)why;
	(void)n;
}

static const char *
call_name(uint32_t arch, int nr, char *buf, size_t len)
{
	snprintf(buf, len, "%d [%u]", nr, arch);
	return buf;
}
#endif

struct notify *
notify_new(struct event_base *base, bool verbose, bool quiet)
{
	struct notify *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	n->base = base;
	n->fd = -1;
	n->verbose = verbose;
	n->quiet = quiet;
	return n;
}

static int
by_count(const void *a, const void *b)
{
	const struct notify_count *x = a, *y = b;

	return x->count < y->count ? 1 : x->count > y->count ? -1 : 0;
}

void
notify_summary(const struct notify *n, FILE *f)
{
	struct notify_count sorted[NOTIFY_MAX];
	unsigned long total = notify_total(n);

	if (!total)
		return;
	memcpy(sorted, n->counts, n->n_counts * sizeof(sorted[0]));
	qsort(sorted, n->n_counts, sizeof(sorted[0]), by_count);
	fprintf(f,
		"omnibox-run: the seccomp filter refused %lu system call%s (each failed with "
		"EPERM):\n",
		total, total == 1 ? "" : "s");
	for (size_t i = 0; i < n->n_counts; i++) {
		char name[96];

		fprintf(f, "  %-24s %lu\n",
			call_name(sorted[i].arch, sorted[i].nr, name, sizeof(name)),
			sorted[i].count);
	}
	if (n->others)
		fprintf(f, "  ... and %lu more, of other calls\n", n->others);
}

void
notify_free(struct notify *n)
{
	if (!n)
		return;
	stop(n, NULL);
	free(n);
}
