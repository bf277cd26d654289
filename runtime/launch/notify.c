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

/* One kind of refusal: a call, on one ABI, and for socket one family (and protocol). */
struct notify_count {
	char name[NOTIFY_NAME_MAX]; /* as the lines print it (seccomp_refusal_name) */
	bool handled;		    /* a probe ordinary tools make and handle */
	unsigned long count;
};

struct notify {
	struct event_base *base;
	struct event *ev;
	int fd; /* the listener, or -1 */
	bool verbose, quiet;
	struct notify_count counts[NOTIFY_MAX];
	size_t n_counts;
	/* refusals of kinds beyond the NOTIFY_MAX first, handled probes apart */
	unsigned long others, others_handled;
	unsigned long shown;
	notify_answer_fn *answer; /* calls answered otherwise than EPERM, or NULL */
	void *answer_arg;
};

void
notify_set_answer(struct notify *n, notify_answer_fn *fn, void *arg)
{
	n->answer = fn;
	n->answer_arg = arg;
}

unsigned long
notify_total(const struct notify *n)
{
	unsigned long total = n->others + n->others_handled;

	for (size_t i = 0; i < n->n_counts; i++)
		total += n->counts[i].count;
	return total;
}

#if defined(__linux__)
#include <fcntl.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sys/ioctl.h>

#include "emitters/seccomp.h"
#include "runtime/launch/fds.h"

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
	char name[NOTIFY_NAME_MAX];
	uint64_t args[6];
	bool handled;
	size_t i;

	for (i = 0; i < 6; i++)
		args[i] = req->data.args[i];
	handled = seccomp_refusal_name(req->data.arch, req->data.nr, args, name, sizeof(name));

	for (i = 0; i < n->n_counts; i++)
		if (n->counts[i].handled == handled && !strcmp(n->counts[i].name, name))
			break;
	if (i == n->n_counts && n->n_counts < NOTIFY_MAX) {
		n->counts[n->n_counts] = (struct notify_count){.handled = handled};
		memcpy(n->counts[n->n_counts++].name, name, sizeof(name));
	}
	if (i < n->n_counts)
		n->counts[i].count++;
	else if (handled)
		n->others_handled++;
	else
		n->others++;
	if (!n->verbose || n->shown > NOTIFY_SHOWN)
		return;
	/* In raw mode (an interactive launch's) a line must return the carriage too. */
	if (n->shown++ < NOTIFY_SHOWN) {
		fprintf(stderr, "omnibox-run: refused syscall %s (pid %ld)%s%s", name,
			sandbox_pid(req->pid),
			handled ? ", a probe ordinary tools make and handle" : "",
			pty_is_raw() ? "\r\n" : "\n");
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
		memset(&resp, 0, sizeof(resp));
		resp.id = req.id;
		resp.error = -EPERM;
		/* A call omnibox-run does itself when it may (metadata.h): its
		 * result is the caller's; a refusal is counted as any other. */
		if (!n->answer || n->answer(n->answer_arg, &req, fd, &resp.error) != 1 ||
		    resp.error == -EPERM)
			count(n, &req);
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
	char c = 0;
	int fd;
	ssize_t got = fds_recv_byte(sock, &c, &fd, MSG_DONTWAIT);

	if (got < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK ? -1 : 0;
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
	unsigned long main = n->others, handled = n->others_handled;
	bool listed = false;
	int width = 24;

	for (size_t i = 0; i < n->n_counts; i++) {
		if (n->counts[i].handled)
			handled += n->counts[i].count;
		else
			main += n->counts[i].count;
		if (!n->counts[i].handled && (int)strlen(n->counts[i].name) > width)
			width = (int)strlen(n->counts[i].name);
	}
	memcpy(sorted, n->counts, n->n_counts * sizeof(sorted[0]));
	qsort(sorted, n->n_counts, sizeof(sorted[0]), by_count);
	if (main) {
		fprintf(f,
			"omnibox-run: the seccomp filter refused %lu system call%s (each failed "
			"with EPERM):\n",
			main, main == 1 ? "" : "s");
		for (size_t i = 0; i < n->n_counts; i++)
			if (!sorted[i].handled)
				fprintf(f, "  %-*s %lu\n", width, sorted[i].name, sorted[i].count);
		if (n->others)
			fprintf(f, "  ... and %lu more, of other calls\n", n->others);
	}
	/* Nothing to act on: only for who asked to see everything. */
	if (!handled || !n->verbose)
		return;
	fprintf(f, "omnibox-run: %lu refusal%s ordinary tools make and handle, no action needed:",
		handled, handled == 1 ? "" : "s");
	for (size_t i = 0; i < n->n_counts; i++)
		if (sorted[i].handled) {
			fprintf(f, "%s %s %lu", listed ? "," : "", sorted[i].name, sorted[i].count);
			listed = true;
		}
	if (n->others_handled)
		fprintf(f, ", %lu more", n->others_handled);
	fputc('\n', f);
}

void
notify_free(struct notify *n)
{
	if (!n)
		return;
	stop(n, NULL);
	free(n);
}
