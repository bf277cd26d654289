/*
 * broker.c - the git_ssh broker process (broker.h): the request read and
 * checked (request.c's checks), the address pinned, the system ssh run with
 * nothing but the entry's key, every session relayed and bounded.
 */
#include "compiler/base/diag.h"
#include "runtime/gitssh/broker.h"
#include "compiler/base/textesc.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "runtime/egress/destination.h"
#include "runtime/gitssh/gitssh_int.h"
#include "runtime/launch/fds.h"

/* ---- the broker process ------------------------------------------------------------- */

/* Per entry, what ssh reads: its identity (or -1) and its known hosts. */
struct entry_files {
	int identity, known_hosts;
};

static struct {
	const struct gitssh_config *c;
	struct entry_files *files;
	int log_fd;
} broker;

static void log_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * One line, written at once (O_APPEND: lines of several sessions never
 * mix).  What the agent chose was escaped where it entered the line
 * (shown()); the whole is escaped once more (textesc.h), so a piece that
 * was not still cannot break the line or act on a terminal.
 */
static void
log_line(const char *fmt, ...)
{
	char msg[2048], line[2048];
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	n = (size_t)snprintf(line, sizeof(line), "omnibox-git-ssh: ");
	text_escape(line + n, sizeof(line) - n - 1, msg, strlen(msg), TEXT_ESC_AGAIN);
	n += strlen(line + n);
	line[n++] = '\n';
	(void)!write(broker.log_fd, line, n);
}

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void
set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl >= 0)
		fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/*
 * The session's end for the helper: the status byte and a message for
 * git's stderr, escaped once more as a whole (as log_line() does).
 */
static void
reply(int sock, int status, const char *msg)
{
	static const char prefix[] = "omnibox git-ssh: ";
	char buf[1 + GITSSH_REPLY_MAX];
	size_t len = 1, off = 0;

	buf[0] = (char)status;
	if (msg && *msg) {
		memcpy(buf + 1, prefix, sizeof(prefix) - 1);
		len += sizeof(prefix) - 1;
		text_escape(buf + len, sizeof(buf) - len - 1, msg, strlen(msg), TEXT_ESC_AGAIN);
		len += strlen(buf + len);
		buf[len++] = '\n';
	}
	while (off < len) {
		ssize_t n = send(sock, buf + off, len - off, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
	}
}

struct session {
	int sock;
	int fds[3]; /* git's stdin, stdout and stderr, from the helper */
	size_t n_fds;
	char buf[GITSSH_REQUEST_MAX];
	size_t len;
	struct gitssh_wire w;
	struct gitssh_request rq;
	int entry;
	char ip[INET6_ADDRSTRLEN];
	unsigned long long up, down; /* bytes to the remote, from it (stderr included) */
	double start;
};

/* The descriptors of one control message; more than three, or twice, is refused. */
static int
take_fds(struct session *s, struct msghdr *mh)
{
	int rc = 0;

	if (mh->msg_flags & MSG_CTRUNC)
		rc = -1;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
		size_t n;
		int fds[8];

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		if (n > 8)
			n = 8;
		memcpy(fds, CMSG_DATA(c), n * sizeof(int));
		for (size_t i = 0; i < n; i++) {
			if (s->n_fds < 3 && rc == 0)
				s->fds[s->n_fds++] = fds[i];
			else {
				close(fds[i]);
				rc = -1;
			}
		}
	}
	return rc;
}

/* Read the request (its descriptors with it) by the deadline.  -1: *WHY says why not. */
static int
read_request(struct session *s, const char **why)
{
	double deadline = s->start + GITSSH_REQUEST_SECONDS;

	for (;;) {
		union {
			char buf[CMSG_SPACE(3 * sizeof(int))];
			struct cmsghdr align;
		} u;
		struct iovec iov = {.iov_base = s->buf + s->len,
				    .iov_len = sizeof(s->buf) - s->len};
		struct msghdr mh = {.msg_iov = &iov,
				    .msg_iovlen = 1,
				    .msg_control = u.buf,
				    .msg_controllen = sizeof(u.buf)};
		struct pollfd p = {.fd = s->sock, .events = POLLIN};
		int r = s->len ? gitssh_decode(s->buf, s->len, &s->w, why) : 0;
		double left = deadline - now();
		ssize_t n;

		if (r != 0)
			return r > 0 ? 0 : -1;
		if (left <= 0 || poll(&p, 1, (int)(left * 1000) + 1) == 0) {
			*why = "the request did not arrive in time";
			return -1;
		}
		n = recvmsg(s->sock, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0) {
			*why = "the helper went away before its request was whole";
			return -1;
		}
		if (take_fds(s, &mh) < 0) {
			*why = "descriptors other than git's three";
			return -1;
		}
		s->len += (size_t)n;
	}
}

/* git's descriptors: read from the first, write to the others. */
static const char *
check_fds(const struct session *s)
{
	if (s->n_fds != 3)
		return "the request came without git's descriptors";
	for (int i = 0; i < 3; i++) {
		int fl = fcntl(s->fds[i], F_GETFL), mode = fl & O_ACCMODE;

		if (fl < 0 || (fl & O_PATH) || (i == 0 && mode == O_WRONLY) ||
		    (i > 0 && mode == O_RDONLY))
			return "descriptors git could not have given";
	}
	return NULL;
}

/* The address lines of the hosts file at PATH that name NAME, up to MAX. */
static size_t
hosts_lookup(const char *path, const char *name, int family, struct sockaddr_storage *out,
	     size_t max)
{
	char line[1024];
	size_t n = 0;
	FILE *f = fopen(path, "re");

	if (!f)
		return 0;
	while (n < max && fgets(line, sizeof(line), f)) {
		char *save = NULL, *addr, *w;
		struct sockaddr_in *v4 = (struct sockaddr_in *)(void *)&out[n];
		struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)(void *)&out[n];
		bool named = false;

		line[strcspn(line, "#\n")] = '\0';
		if (!(addr = strtok_r(line, " \t", &save)))
			continue;
		while ((w = strtok_r(NULL, " \t", &save)))
			named |= !strcasecmp(w, name);
		if (!named)
			continue;
		memset(&out[n], 0, sizeof(out[n]));
		if (family != AF_INET6 && inet_pton(AF_INET, addr, &v4->sin_addr) == 1) {
			v4->sin_family = AF_INET;
			n++;
		} else if (family != AF_INET && inet_pton(AF_INET6, addr, &v6->sin6_addr) == 1) {
			v6->sin6_family = AF_INET6;
			n++;
		}
	}
	fclose(f);
	return n;
}

/*
 * The one address this session's ssh connects to: the entry's host
 * resolved once (the hosts file first, when one was given), the first
 * answer that gitssh_address_refused() lets through.
 */
static int
pin_address(struct session *s, const struct git_ssh *b, char *err, size_t errlen)
{
	struct sockaddr_storage addrs[16];
	const char *why = NULL, *first = NULL;
	size_t n = 0;
	struct in_addr v4;
	char shown_ip[INET6_ADDRSTRLEN] = "";
	/* The policy's host name, checked by the compiler; shown escaped all the same. */
	struct shown host = shown(b->host.s);

	switch (dest_classify_host(b->host.s, strlen(b->host.s), &v4, &why)) {
	case DEST_HOST_BAD:
		return diag_fail(err, errlen, "host %s: %s", host.text, why);
	case DEST_HOST_IPV4:
		if (s->rq.family == AF_INET6)
			return diag_fail(err, errlen, "-6 asked for, and %s is an IPv4 address",
					 host.text);
		memset(&addrs[0], 0, sizeof(addrs[0]));
		((struct sockaddr_in *)(void *)&addrs[0])->sin_family = AF_INET;
		((struct sockaddr_in *)(void *)&addrs[0])->sin_addr = v4;
		n = 1;
		break;
	case DEST_HOST_NAME:
		if (broker.c->hosts_file)
			n = hosts_lookup(broker.c->hosts_file, b->host.s, s->rq.family, addrs, 16);
		if (n == 0) {
			struct addrinfo hints = {.ai_family = s->rq.family,
						 .ai_socktype = SOCK_STREAM},
					*res, *ai;
			int rc = getaddrinfo(b->host.s, NULL, &hints, &res);

			if (rc)
				return diag_fail(err, errlen, "%s does not resolve: %s", host.text,
						 gai_strerror(rc));
			for (ai = res; ai && n < 16; ai = ai->ai_next)
				if (ai->ai_addrlen <= sizeof(addrs[0]))
					memcpy(&addrs[n++], ai->ai_addr, ai->ai_addrlen);
			freeaddrinfo(res);
		}
		break;
	}
	for (size_t i = 0; i < n; i++) {
		const struct sockaddr *sa = (const struct sockaddr *)&addrs[i];

		why = gitssh_address_refused(b, sa);
		if (!why) {
			dest_format(sa, s->ip, sizeof(s->ip));
			return 0;
		}
		if (!first) {
			first = why;
			dest_format(sa, shown_ip, sizeof(shown_ip));
		}
	}
	if (!first)
		return diag_fail(err, errlen, "%s has no address%s", host.text,
				 s->rq.family == AF_INET    ? " for -4"
				 : s->rq.family == AF_INET6 ? " for -6"
							    : "");
	return diag_fail(err, errlen, "%s is at %s, which git_ssh refuses: %s", host.text, shown_ip,
			 first);
}

/* Move fd FROM to TO in a child about to exec (FROM may be any number). */
static void
place(int from, int to)
{
	if (from != to) {
		dup2(from, to);
		close(from);
	}
}

/*
 * ssh, with the pipes of *IN, *OUT and *ERR as its standard streams and
 * nothing else, in an environment of PATH and, when it is a safe one,
 * GIT_PROTOCOL.
 */
static pid_t
spawn_ssh(struct session *s, const struct gitssh_argv *av, bool send_env, int *in, int *out,
	  int *errfd)
{
	char proto[64];
	const char *env[4] = {"PATH=/usr/bin:/bin", "LC_ALL=C", NULL, NULL};
	int pin[2], pout[2], perr[2];
	pid_t parent = getpid(), pid;

	if (send_env) {
		snprintf(proto, sizeof(proto), "GIT_PROTOCOL=%s", s->w.git_protocol);
		env[2] = proto;
	}
	if (pipe2(pin, O_CLOEXEC) < 0 || pipe2(pout, O_CLOEXEC) < 0 || pipe2(perr, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		static const int nothing[1] = {-1};
		sigset_t none;
		int hi[3], e;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(GITSSH_EXIT_FAILURE);
		for (int sig = 1; sig < NSIG; sig++)
			signal(sig, SIG_DFL);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		/* Out of the way of 0..2 first, then each to its place. */
		hi[0] = fcntl(pin[0], F_DUPFD_CLOEXEC, 10);
		hi[1] = fcntl(pout[1], F_DUPFD_CLOEXEC, 10);
		hi[2] = fcntl(perr[1], F_DUPFD_CLOEXEC, 10);
		for (int i = 0; i < 3; i++)
			place(hi[i], i);
		fds_keep_only(nothing, 0);
		if (chdir("/") == 0)
			execve(av->v[0], (char *const *)av->v, (char *const *)env);
		e = errno;
		fprintf(stderr, "omnibox git-ssh: cannot run %s: %s\n", shown(av->v[0]).text,
			strerror(e));
		_exit(GITSSH_EXIT_FAILURE);
	}
	close(pin[0]);
	close(pout[1]);
	close(perr[1]);
	*in = pin[1];
	*out = pout[0];
	*errfd = perr[0];
	set_nonblock(*in);
	set_nonblock(*out);
	set_nonblock(*errfd);
	return pid;
}

/* Bytes on their way from one descriptor to another. */
struct flow {
	int from, to;
	char buf[65536];
	size_t off, len;
	bool eof;  /* FROM is done */
	bool dead; /* TO is gone: what comes is dropped */
};

/* Read what FROM has into the flow.  Returns the bytes read. */
static ssize_t
flow_read(struct flow *f)
{
	ssize_t n = read(f->from, f->buf, sizeof(f->buf));

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n <= 0) {
		f->eof = true;
		return 0;
	}
	f->off = 0;
	f->len = f->dead ? 0 : (size_t)n;
	return n;
}

static void
flow_write(struct flow *f)
{
	ssize_t n = write(f->to, f->buf + f->off, f->len);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		f->dead = true;
		f->len = 0;
		return;
	}
	f->off += (size_t)n;
	f->len -= (size_t)n;
}

/* Once FROM is done and everything passed on, TO is closed: its reader sees the end. */
static void
flow_finish(struct flow *f)
{
	if (f->eof && !f->len && f->to >= 0) {
		close(f->to);
		f->to = -1;
	}
}

/*
 * Relay git's stdin to ssh, ssh's stdout and stderr to git, until ssh has
 * closed both, within the caps.  NULL, or why the session was cut short.
 */
static const char *
relay(struct session *s, int ssh_in, int ssh_out, int ssh_err)
{
	static struct flow fl[3];
	double started = now(), last = started;
	bool spoken = false;

	fl[0] = (struct flow){.from = s->fds[0], .to = ssh_in};
	fl[1] = (struct flow){.from = ssh_out, .to = s->fds[1]};
	fl[2] = (struct flow){.from = ssh_err, .to = s->fds[2]};
	for (int i = 0; i < 3; i++)
		set_nonblock(s->fds[i]);
	while (!(fl[1].eof && fl[2].eof && !fl[1].len && !fl[2].len)) {
		struct pollfd p[7];
		struct flow *owner[7];
		int np = 0, rc;
		double t = now(), wait = started + GITSSH_SESSION_SECONDS - t;

		if (!spoken && started + GITSSH_HANDSHAKE_SECONDS - t < wait)
			wait = started + GITSSH_HANDSHAKE_SECONDS - t;
		if (last + GITSSH_IDLE_SECONDS - t < wait)
			wait = last + GITSSH_IDLE_SECONDS - t;
		if (wait <= 0)
			return t >= started + GITSSH_SESSION_SECONDS
				   ? "the session time cap was reached"
			       : !spoken ? "the remote said nothing in time (host, key or network?)"
					 : "the session was idle too long";
		for (int i = 0; i < 3; i++) {
			struct flow *f = &fl[i];

			if (!f->eof && !f->len) {
				p[np] = (struct pollfd){.fd = f->from, .events = POLLIN};
				owner[np++] = f;
			} else if (f->len && f->to >= 0) {
				p[np] = (struct pollfd){.fd = f->to, .events = POLLOUT};
				owner[np++] = f;
			}
		}
		/* The helper's end: it closes when git gave up on it. */
		p[np] = (struct pollfd){.fd = s->sock, .events = POLLIN};
		owner[np++] = NULL;
		rc = poll(p, (nfds_t)np, (int)(wait * 1000) + 1);
		if (rc < 0 && errno != EINTR)
			return "poll failed";
		for (int k = 0; rc > 0 && k < np; k++) {
			struct flow *f = owner[k];
			ssize_t n;

			if (!p[k].revents)
				continue;
			if (!f) {
				char junk[256];

				if (recv(s->sock, junk, sizeof(junk), MSG_DONTWAIT) == 0 ||
				    p[k].revents & (POLLHUP | POLLERR))
					return "the helper went away";
				continue;
			}
			if (p[k].fd == f->to) {
				flow_write(f);
				if (f->dead && f != &fl[0])
					return "git stopped reading";
				flow_finish(f);
				continue;
			}
			n = flow_read(f);
			if (n > 0) {
				last = now();
				if (f == &fl[0])
					s->up += (unsigned long long)n;
				else
					s->down += (unsigned long long)n;
				spoken |= f == &fl[1];
				if (s->up + s->down > GITSSH_SESSION_BYTES)
					return "the session byte cap was reached";
			}
			/* ssh gone: what git still sends has nowhere to go. */
			if (f->to < 0)
				f->len = 0;
			flow_finish(f);
		}
	}
	return NULL;
}

/*
 * The helper's arguments for the log: each escaped (textesc.h), separated
 * by spaces, cut short with "..." when they do not fit LEN (at least 8).
 */
static void
describe_args(const struct session *s, char *buf, size_t len)
{
	size_t at = 0, n = 0;

	buf[0] = '\0';
	for (int i = 0; i < s->w.argc; i++, at += n) {
		const char *a = s->w.argv[i];

		if (i)
			buf[at++] = ' ';
		/* text_escape() ends what fits with "..." when there is room for it. */
		if (len - at < 4 ||
		    (n = text_escape(buf + at, len - at, a, strlen(a), 0)) >= len - at) {
			if (len - at < 4)
				memcpy(buf + len - 4, "...", 4);
			return;
		}
	}
	buf[at] = '\0';
}

/* Refuse the session: one log line, the reason on git's stderr, ssh's status. */
static void __attribute__((noreturn)) deny(struct session *s, const char *why)
{
	char args[256], msg[GITSSH_REPLY_MAX - 32];

	describe_args(s, args, sizeof(args));
	log_line("deny [%s]: %s", args, why);
	snprintf(msg, sizeof(msg), "refused: %s", why);
	reply(s->sock, GITSSH_EXIT_FAILURE, msg);
	_exit(0);
}

/* Is the helper at the other end of SOCK running as this user? */
static bool
peer_is_us(int sock)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);

	return getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cr, &len) == 0 && cr.uid == getuid();
}

static int
wait_ssh(pid_t pid, bool kill_it)
{
	int status = 0;

	if (kill_it)
		kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return GITSSH_EXIT_FAILURE;
	return WIFEXITED(status) ? WEXITSTATUS(status) : GITSSH_EXIT_FAILURE;
}

/* One connection, in a process of its own: checked, run, relayed, logged. */
static void __attribute__((noreturn)) session_main(int sock)
{
	static struct session s;
	const struct gitssh_config *c = broker.c;
	const struct git_ssh *b;
	struct gitssh_argv av;
	char err[512], result[256], identity[64], known_hosts[64];
	const char *why = NULL, *cut;
	bool send_env;
	int in, out, errfd, status;
	pid_t ssh;

	memset(&s, 0, sizeof(s));
	s.sock = sock;
	s.start = now();
	/* The last word on time, should ssh or a lookup hang past every deadline. */
	alarm(GITSSH_SESSION_SECONDS + 60);
	if (!peer_is_us(sock))
		deny(&s, "the helper runs as another user");
	if (read_request(&s, &why) < 0)
		deny(&s, why);
	if (!gitssh_token_equal(s.w.token, c->token))
		deny(&s, "wrong " GITSSH_ENV_TOKEN);
	if ((why = check_fds(&s)))
		deny(&s, why);
	if (gitssh_parse_argv(s.w.argc, s.w.argv, &s.rq, err, sizeof(err)) < 0 ||
	    (s.entry = gitssh_match(c->bindings, c->n_bindings, &s.rq, err, sizeof(err))) < 0 ||
	    pin_address(&s, &c->bindings[s.entry], err, sizeof(err)) < 0)
		deny(&s, err);
	b = &c->bindings[s.entry];
	send_env = gitssh_git_protocol_ok(s.w.git_protocol);
	/* ssh, this process's child, reads the files through its descriptors. */
	if (broker.files[s.entry].identity >= 0)
		snprintf(identity, sizeof(identity), "/proc/%d/fd/%d", (int)getpid(),
			 broker.files[s.entry].identity);
	snprintf(known_hosts, sizeof(known_hosts), "/proc/%d/fd/%d", (int)getpid(),
		 broker.files[s.entry].known_hosts);
	if (gitssh_ssh_argv(&av, c->ssh, b, &s.rq, s.ip,
			    broker.files[s.entry].identity >= 0 ? identity : NULL, known_hosts,
			    send_env) < 0)
		deny(&s, "the ssh command line does not fit");
	ssh = spawn_ssh(&s, &av, send_env, &in, &out, &errfd);
	if (ssh < 0) {
		int e = errno;

		snprintf(err, sizeof(err), "cannot start %s: %s", shown(c->ssh).text, strerror(e));
		deny(&s, err);
	}
	cut = relay(&s, in, out, errfd);
	status = wait_ssh(ssh, cut != NULL);
	if (cut)
		status = GITSSH_EXIT_FAILURE;
	if (cut)
		snprintf(result, sizeof(result), "cut short: %s", cut);
	else
		snprintf(result, sizeof(result), "exit %d", status);
	log_line("%s %s %s@%s:%u %s (git_ssh at line %u) via %s: %s, %.1f s, %llu bytes sent, "
		 "%llu received",
		 cut ? "ended" : "allow", op_name(s.rq.op), shown(b->username.s).text,
		 shown(b->host.s).text, b->port, shown(s.rq.path).text, b->loc.line, s.ip, result,
		 now() - s.start, s.up, s.down);
	if (cut)
		snprintf(err, sizeof(err), "session ended: %s", cut);
	else if (status == GITSSH_EXIT_FAILURE && broker.files[s.entry].identity < 0)
		snprintf(err, sizeof(err),
			 "ssh failed; git_ssh at line %u names no identity_file, so no key was "
			 "offered",
			 b->loc.line);
	else
		err[0] = '\0';
	reply(sock, status, err);
	_exit(0);
}

/*
 * At the session cap: turned away at once, the request unread.  Logged at
 * most once a second, with how many went unlogged, so a loop of
 * connections cannot flood the log.
 */
static void
refuse_busy(int sock)
{
	static double logged;
	static unsigned quiet;
	char msg[128];

	snprintf(msg, sizeof(msg), "refused: %d git ssh sessions are running already",
		 GITSSH_MAX_SESSIONS);
	reply(sock, GITSSH_EXIT_FAILURE, msg);
	if (now() - logged < 1) {
		quiet++;
		return;
	}
	log_line("deny: %d sessions are running already (%u more refused since the last line)",
		 GITSSH_MAX_SESSIONS, quiet);
	logged = now();
	quiet = 0;
}

/*
 * The broker: accept, fork a session each (at most GITSSH_MAX_SESSIONS
 * at once), reap them; when ALIVE reads end of file (omnibox-run is done
 * or gone), every session is killed and the broker exits.
 */
static void __attribute__((noreturn)) broker_main(int listen_fd, int alive)
{
	pid_t sessions[GITSSH_MAX_SESSIONS], self = getpid();
	size_t n = 0;
	sigset_t chld;
	int sfd;

	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0) {
		log_line("cannot watch its sessions: %s; git over ssh is refused", strerror(errno));
		_exit(1);
	}
	for (;;) {
		struct pollfd p[3] = {{.fd = alive, .events = POLLIN},
				      {.fd = sfd, .events = POLLIN},
				      {.fd = listen_fd, .events = POLLIN}};
		struct signalfd_siginfo si;
		int conn, status;
		pid_t pid;

		if (poll(p, 3, -1) < 0)
			continue;
		if (p[0].revents) {
			for (size_t i = 0; i < n; i++)
				kill(sessions[i], SIGKILL);
			_exit(0);
		}
		while (read(sfd, &si, sizeof(si)) == sizeof(si))
			;
		while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
			for (size_t i = 0; i < n; i++)
				if (sessions[i] == pid) {
					sessions[i] = sessions[--n];
					break;
				}
		if (!(p[2].revents & POLLIN))
			continue;
		conn = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (conn < 0)
			continue;
		if (n == GITSSH_MAX_SESSIONS) {
			refuse_busy(conn);
			close(conn);
			continue;
		}
		pid = fork();
		if (pid == 0) {
			close(listen_fd);
			close(alive);
			close(sfd);
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (getppid() != self)
				_exit(0);
			sigprocmask(SIG_UNBLOCK, &chld, NULL);
			session_main(conn);
		}
		if (pid > 0)
			sessions[n++] = pid;
		else
			refuse_busy(conn);
		close(conn);
	}
}

/*
 * PATH, the canonical path the resolver checked, opened without following
 * any symbolic link: what ssh reads is what was checked.
 */
static int
open_checked(const char *policy, const char *path, const char *what, unsigned line, char *err,
	     size_t errlen)
{
	/* O_NONBLOCK: a FIFO put there must not hang the launch (it is refused below). */
	struct open_how how = {.flags = O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC,
			       .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
	long fd = syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));
	struct stat st;

	if (fd < 0 && errno == ENOSYS)
		fd = open(path, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;

		return diag_fail(err, errlen, "%s:%u: git_ssh %s %s: %s", shown(policy).text, line,
				 what, shown(path).text,
				 e == ELOOP
				     ? "a symbolic link appeared on its path since it was checked"
				     : strerror(e));
	}
	if (fstat((int)fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close((int)fd);
		return diag_fail(err, errlen, "%s:%u: git_ssh %s %s is not a regular file",
				 shown(policy).text, line, what, shown(path).text);
	}
	return (int)fd;
}

static int
open_files(const struct gitssh_config *c, struct entry_files *f, char *err, size_t errlen)
{
	for (size_t i = 0; i < c->n_bindings; i++) {
		const struct git_ssh *b = &c->bindings[i];
		const char *kh = b->known_hosts_file.rel ? b->known_hosts_file.symbolic : NULL;
		char dflt[4096];

		if (!kh) {
			snprintf(dflt, sizeof(dflt), "%s/.ssh/known_hosts", c->home ? c->home : "");
			kh = dflt;
		}
		f[i].identity = -1;
		if (b->identity_file.rel &&
		    (f[i].identity = open_checked(c->policy, b->identity_file.symbolic,
						  "identity_file", b->loc.line, err, errlen)) < 0)
			return -1;
		f[i].known_hosts =
		    open_checked(c->policy, kh, "known_hosts_file", b->loc.line, err, errlen);
		if (f[i].known_hosts < 0)
			return -1;
	}
	return 0;
}

static int
listen_on(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	int fd;

	if (strlen(path) >= sizeof(sun.sun_path))
		return diag_fail(err, errlen,
				 "git_ssh: the socket path %s is too long; set TMPDIR to a shorter "
				 "directory",
				 shown(path).text);
	strcpy(sun.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return diag_fail(err, errlen, "git_ssh: socket: %s", strerror(errno));
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0 || chmod(path, 0600) < 0 ||
	    listen(fd, 64) < 0) {
		int e = errno;

		diag_fail(err, errlen, "git_ssh: %s: %s", shown(path).text, strerror(e));
		close(fd);
		return -1;
	}
	return fd;
}

pid_t
gitssh_start(const struct gitssh_config *c, int *alive, char *err, size_t errlen)
{
	struct entry_files *files = calloc(c->n_bindings ? c->n_bindings : 1, sizeof(*files));
	int *keep = calloc(3 + 2 * c->n_bindings, sizeof(*keep)), pipefd[2] = {-1, -1};
	int listen_fd = -1;
	size_t n = 0;
	pid_t pid = -1, parent = getpid();

	if (!files || !keep) {
		diag_fail(err, errlen, "git_ssh: out of memory");
		goto out;
	}
	for (size_t i = 0; i < c->n_bindings; i++)
		files[i].identity = files[i].known_hosts = -1;
	if (open_files(c, files, err, errlen) < 0 ||
	    (listen_fd = listen_on(c->socket_path, err, errlen)) < 0)
		goto out;
	if (pipe2(pipefd, O_CLOEXEC) < 0) {
		diag_fail(err, errlen, "git_ssh: pipe: %s", strerror(errno));
		goto out;
	}
	keep[n++] = pipefd[0];
	keep[n++] = listen_fd;
	keep[n++] = c->log_fd;
	for (size_t i = 0; i < c->n_bindings; i++) {
		keep[n++] = files[i].identity;
		keep[n++] = files[i].known_hosts;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		diag_fail(err, errlen, "git_ssh: fork: %s", strerror(errno));
		goto out;
	}
	if (pid == 0) {
		/* Nothing of omnibox-run's but these, renumbered from 3 (fds.h). */
		launch_detach(keep, n);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(0);
		broker.c = c;
		broker.log_fd = keep[2];
		broker.files = files;
		for (size_t i = 0; i < c->n_bindings; i++) {
			files[i].identity = files[i].identity >= 0 ? keep[3 + 2 * i] : -1;
			files[i].known_hosts = keep[4 + 2 * i];
		}
		broker_main(keep[1], keep[0]);
	}
	*alive = pipefd[1];
	pipefd[1] = -1;
out:
	if (pipefd[0] >= 0)
		close(pipefd[0]);
	if (pipefd[1] >= 0)
		close(pipefd[1]);
	if (listen_fd >= 0)
		close(listen_fd);
	for (size_t i = 0; files && i < c->n_bindings; i++) {
		if (files[i].identity >= 0)
			close(files[i].identity);
		if (files[i].known_hosts >= 0)
			close(files[i].known_hosts);
	}
	free(files);
	free(keep);
	return pid;
}

void
gitssh_stop(pid_t pid, int alive)
{
	if (pid <= 0)
		return;
	close(alive);
	/* Its sessions die with it (PR_SET_PDEATHSIG), and their ssh with them. */
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}
