/*
 * egress_start.c - the egress proxy of a launch, as omnibox-run starts it
 * (egress_start.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif

#include "compiler/base/diag.h"
#include "compiler/base/textesc.h"
#include "compiler/decide/env.h"
#include "compiler/decide/transparent.h"
#include "runtime/launch/egress_start.h"
#include "runtime/launch/fds.h"

extern char **environ;

char **
egress_placeholder_names(struct arena *a, const struct sandbox *sb, size_t *n)
{
	char **v = NULL;
	size_t cap = 0;
	bool aws = false, aws_token = false;

	*n = 0;
	for (size_t i = 0; i < sb->n_creds; i++) {
		for (size_t k = 0; k < sb->creds[i].env.n; k++)
			*ARENA_PUSH(a, v, *n, cap) =
			    arena_printf(a, "%s=oa_cred_{RANDOM}", sb->creds[i].env.v[k].s);
		aws |= sb->creds[i].type == CRED_AWS_SIGV4;
		aws_token |= sb->creds[i].type == CRED_AWS_SIGV4 &&
			     sb->creds[i].aws_token.kind != CRED_SOURCE_NONE;
	}
	/* One set for every aws_sigv4 entry (credentials.c); a profile's token
	 * is only known once the profile is read, at launch. */
	if (aws) {
		*ARENA_PUSH(a, v, *n, cap) = arena_strdup(a, "AWS_ACCESS_KEY_ID=oa_cred_{RANDOM}");
		*ARENA_PUSH(a, v, *n, cap) =
		    arena_strdup(a, "AWS_SECRET_ACCESS_KEY=oa_cred_{RANDOM}");
	}
	if (aws_token)
		*ARENA_PUSH(a, v, *n, cap) = arena_strdup(a, "AWS_SESSION_TOKEN=oa_cred_{RANDOM}");
	return v;
}

/* TEXT as the new file NAME in DIR, never through a link. */
static int
write_new(const char *dir, const char *name, const char *text, char *err, size_t errlen)
{
	char path[4096];
	size_t len = strlen(text);
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, text, len) != (ssize_t)len || fchmod(fd, 0644) < 0 ||
	    close(fd) < 0) {
		int e = errno;

		if (fd >= 0)
			close(fd);
		return diag_fail(err, errlen, "cannot write %s: %s; nothing ran", path,
				 strerror(e));
	}
	return 0;
}

int
egress_resolver_files(const char *scratch, char *err, size_t errlen)
{
	char text[1024], host[256] = "";

	transparent_resolv_conf(text, sizeof(text));
	if (write_new(scratch, TRANSPARENT_RESOLV_CONF, text, err, errlen) < 0)
		return -1;
	if (gethostname(host, sizeof(host) - 1) < 0)
		host[0] = '\0';
	transparent_hosts(host, text, sizeof(text));
	return write_new(scratch, TRANSPARENT_HOSTS, text, err, errlen);
}

int
egress_credentials(struct arena *a, const struct sandbox *sb, const char *home, const char *scratch,
		   struct cred_runtime *creds, char *err, size_t errlen)
{
	char why[4096];

	if (!sb->n_creds)
		return 0;
	if (cred_prepare(a, sb, environ, home, scratch, creds, why, sizeof(why)) < 0 ||
	    cred_write_files(creds, scratch, why, sizeof(why)) < 0)
		return diag_fail(err, errlen, "credential_proxy: %s; nothing ran", why);
	return 0;
}

void
egress_config(struct arena *a, const struct launch_options *o, const struct sandbox *sb,
	      const char *scratch, const char *socket_path, const struct cred_runtime *creds,
	      const struct egress_log *log, struct session_config *sc)
{
	struct proxy_config *pc = &sc->pc;

	memset(sc, 0, sizeof(*sc));
	pc->socket_path = socket_path;
	pc->ca_bundle_path = arena_printf(a, "%s/%s", scratch, ENV_CA_BUNDLE);
	pc->rules = sb->egress;
	pc->n_rules = sb->n_egress;
	pc->allow_private = sb->egress_allow_private.value;
	pc->creds = creds->creds;
	pc->n_creds = creds->n_creds;
	pc->hosts_file = o->egress_hosts;
	pc->resolv_conf = o->egress_resolv;
	pc->system_ca_file = o->egress_ca;
	/* The proxy holds no more memory than the policy gives the sandbox. */
	if (sb->limits.memory.present && sb->limits.memory.value < PROXY_MEMORY_DEFAULT)
		pc->memory_limit = (size_t)sb->limits.memory.value;
	sc->flags = (log->quiet ? SESSION_QUIET : 0) | (log->verbose ? SESSION_VERBOSE : 0);
}

/*
 * The egress log at PATH, opened for appending without following a link:
 * it lies in a directory others may write ($TMPDIR, or wherever --egress-log
 * names), where a link or a file planted there would have the proxy's log
 * written over a file of someone else's choosing, or read by them.  Only a
 * regular file of this user is written.  EXCL: the name is ours and must be
 * new.  NULL with errno (EEXIST for a name taken; EPERM for a file that is
 * not ours or not regular) when it cannot be opened.
 */
static FILE *
egress_log_at(const char *path, bool excl)
{
	int flags = O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC | (excl ? O_EXCL : 0);
	int fd = open(path, flags, 0600);
	struct stat st;
	FILE *f;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
		close(fd);
		errno = EPERM;
		return NULL;
	}
	f = fdopen(fd, "a");
	if (!f)
		close(fd);
	return f;
}

int
egress_log_open(struct arena *a, const struct launch_options *o, struct egress_log *log, char *err,
		size_t errlen)
{
	log->verbose = o->verbose;
	log->f = stderr;
	/* Under -q stderr is the command's and omnibox-run's errors alone. */
	log->quiet = o->quiet && !o->egress_log;
	if (!o->egress_log)
		return 0;
	log->f = egress_log_at(o->egress_log, false);
	if (log->f)
		return 0;
	if (errno == ELOOP)
		return diag_fail(err, errlen,
				 "--egress-log %s is a symbolic link; name the file itself",
				 arena_escape(a, o->egress_log));
	if (errno == EPERM)
		return diag_fail(err, errlen,
				 "--egress-log %s is not a regular file of yours; name another",
				 arena_escape(a, o->egress_log));
	return diag_fail(err, errlen, "--egress-log %s: %s", arena_escape(a, o->egress_log),
			 strerror(errno));
}

int
egress_log_create(struct arena *a, const struct launch_options *o, const char *scratch,
		  struct egress_log *log, const char **name, char *err, size_t errlen)
{
	const char *path = arena_printf(a, "%s.egress.log", scratch);

	log->verbose = o->verbose;
	for (int i = 0; i < 100; i++) {
		uint32_t r;

		log->f = egress_log_at(path, true);
		if (log->f) {
			*name = path;
			return 0;
		}
		if (errno != EEXIST)
			break;
		if (getrandom(&r, sizeof(r), 0) != sizeof(r))
			r = (uint32_t)getpid() ^ (uint32_t)i;
		path = arena_printf(a, "%s.egress-%08x.log", scratch, (unsigned)r);
	}
	return diag_fail(err, errlen, "cannot create the egress log %s: %s", arena_escape(a, path),
			 strerror(errno));
}

void
egress_log_close(struct egress_log *log)
{
	if (log->f && log->f != stderr)
		fclose(log->f);
	log->f = NULL;
}

/* omnibox-proxy: beside omnibox-run, or where make install puts helpers (like omnibox-init). */
static char *
egress_find_proxy(struct arena *a)
{
	const char *self = launch_self_dir(a);
	char *cand;

	if (!self)
		return NULL;
	cand = arena_printf(a, "%s/omnibox-proxy", self);
	if (access(cand, X_OK) == 0)
		return cand;
	cand = arena_printf(a, "%s/../libexec/omnibox/omnibox-proxy", self);
	if (access(cand, X_OK) == 0)
		return cand;
	return NULL;
}

/* The descriptors omnibox-proxy gets: the session socket as 3, the log as 4 (or stderr). */
#define PROXY_SESSION_FD 3
#define PROXY_LOG_FD 4

/*
 * The proxy's environment: what decides how a program loads and runs, and
 * nothing else.  The secrets of `env` sources are in omnibox-run's
 * environment; the proxy gets them prepared, over the socket, and its
 * environment would otherwise hold them a second time.
 */
static char **
proxy_environ(void)
{
	static const char *const keep[] = {
	    "LD_LIBRARY_PATH=", "OPENSSL_CONF=",  "OPENSSL_MODULES=", "TZ=",
	    "ASAN_OPTIONS=",	"UBSAN_OPTIONS=", "LSAN_OPTIONS="};
	size_t n = 0, cap = 8;
	char **env = malloc(cap * sizeof(*env));

	for (char **e = environ; env && *e; e++)
		for (size_t k = 0; k < sizeof(keep) / sizeof(keep[0]); k++)
			if (!strncmp(*e, keep[k], strlen(keep[k])) && n + 1 < cap)
				env[n++] = *e;
	if (env)
		env[n] = NULL;
	return env;
}

/* The proxy's child between fork and exec: never returns. */
static void proxy_exec(const char *exe, int sock, int log_fd, pid_t parent)
    __attribute__((noreturn));

static void
proxy_exec(const char *exe, int sock, int log_fd, pid_t parent)
{
	static const int ignored[] = {SIGINT, SIGQUIT, SIGHUP, SIGTSTP, SIGTTIN, SIGTTOU};
	char *argv[6] = {(char *)exe, (char *)"--session", (char *)"3", NULL, NULL, NULL};
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	int s = fcntl(sock, F_DUPFD_CLOEXEC, 10);
	int l = log_fd > STDERR_FILENO ? fcntl(log_fd, F_DUPFD_CLOEXEC, 10) : log_fd;
	struct session_buf b = {0};
	sigset_t none;

	/* Out of the terminal's process group: its signals are the agent's. */
	setpgid(0, 0);
	for (size_t i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
		signal(ignored[i], SIG_IGN);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
#if defined(__linux__)
	/* Dies with omnibox-run, even one killed outright; gone already: stop. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != parent)
		_exit(1);
#else
	(void)parent;
#endif
	if (null < 0 || s < 0 || (log_fd > STDERR_FILENO && l < 0) ||
	    dup2(null, STDIN_FILENO) < 0 || dup2(null, STDOUT_FILENO) < 0 ||
	    dup2(s, PROXY_SESSION_FD) < 0 || (l > STDERR_FILENO && dup2(l, PROXY_LOG_FD) < 0))
		_exit(1);
	if (l >= 0) {
		argv[3] = (char *)"--log-fd";
		argv[4] = (char *)(l == STDERR_FILENO ? "2" : "4");
	}
	fds_cloexec_from(l > STDERR_FILENO ? PROXY_LOG_FD + 1 : PROXY_SESSION_FD + 1);
	execve(exe, argv, proxy_environ());
	/* Said to omnibox-run, which is waiting for the proxy's first answer. */
	{
		char msg[512];

		snprintf(msg, sizeof(msg), "cannot run %s: %s", exe, strerror(errno));
		if (session_encode_status(&b, msg) == 0)
			(void)session_send(PROXY_SESSION_FD, &b);
	}
	_exit(127);
}

struct proxy_call {
	const char *exe;
	int ours, sock, log_fd;
	pid_t parent;
};

/* proxy_exec() in launch_vfork()'s child, which shares omnibox-run's memory:
 * it frees nothing of it. */
static int
proxy_child(void *arg)
{
	const struct proxy_call *c = arg;

	close(c->ours);
	proxy_exec(c->exe, c->sock, c->log_fd, c->parent);
}

/* The proxy's first answer on EP->ctl: 0 when it listens, or -1 with why not in ERR. */
static int
proxy_answer(struct arena *a, int ctl, char *err, size_t errlen)
{
	unsigned char *data;
	size_t len;
	const char *msg = NULL;
	char why[4096];
	int r = session_recv(ctl, &data, &len);

	/* Nothing, or a reset (it exited with the configuration unread). */
	if (r == 0 || (r < 0 && errno == ECONNRESET))
		return diag_fail(err, errlen, "omnibox-proxy exited without an answer");
	if (r < 0)
		return diag_fail(err, errlen, "%s", strerror(errno));
	r = session_decode_status(a, data, len, &msg, why, sizeof(why));
	free(data);
	if (r < 0)
		return diag_fail(err, errlen, "%s", why);
	if (msg)
		return diag_fail(err, errlen, "%s", msg);
	return 0;
}

int
egress_proxy_exec(struct arena *a, const struct egress_log *log, struct egress_proxy *ep,
		  char *err, size_t errlen)
{
	const char *exe = egress_find_proxy(a);
	int sv[2];
	pid_t parent = getpid();

	ep->pid = -1;
	ep->ctl = -1;
	ep->sent = 0;
	if (!exe)
		return diag_fail(err, errlen,
				 "the egress proxy cannot start: omnibox-proxy is missing next to "
				 "omnibox-run; reinstall omnibox; nothing ran");
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return diag_fail(err, errlen, "socketpair: %s", strerror(errno));
	fflush(NULL);
	ep->pid = launch_vfork(proxy_child,
			       &(struct proxy_call){exe, sv[0], sv[1],
						    log->quiet || !log->f ? -1 : fileno(log->f),
						    parent});
	if (ep->pid < 0) {
		close(sv[0]);
		close(sv[1]);
		return diag_fail(err, errlen, "fork: %s", strerror(errno));
	}
	close(sv[1]);
	ep->ctl = sv[0];
	return 0;
}

int
egress_proxy_spawn(struct arena *a, const struct session_config *sc, const struct egress_log *log,
		   struct egress_proxy *ep, char *err, size_t errlen)
{
	struct session_buf b = {0};

	if (session_encode_config(&b, sc) < 0) {
		session_buf_free(&b);
		egress_proxy_stop(a, ep, NULL);
		return diag_fail(err, errlen, "the egress proxy cannot start: out of memory");
	}
	if (ep->pid <= 0 && egress_proxy_exec(a, log, ep, err, errlen) < 0) {
		session_buf_free(&b);
		return -1;
	}
	/* The secrets go over the socket, and from this process's memory now. */
	if (session_send(ep->ctl, &b) < 0)
		ep->sent = errno ? errno : EIO;
	session_buf_free(&b);
	return 0;
}

int
egress_proxy_ready(struct arena *a, struct egress_proxy *ep, char *err, size_t errlen)
{
	char why[4096];

	/* A proxy that could not even read the configuration has said why (or
	 * exited); one that answered has read it all. */
	if (ep->sent)
		snprintf(why, sizeof(why), "%s", strerror(ep->sent));
	if (proxy_answer(a, ep->ctl, why, sizeof(why)) < 0 || ep->sent) {
		egress_proxy_stop(a, ep, NULL);
		return diag_fail(err, errlen, "the egress proxy cannot start: %s; nothing ran",
				 why);
	}
	return 0;
}

int
egress_proxy_start(struct arena *a, const struct session_config *sc, const struct egress_log *log,
		   struct egress_proxy *ep, char *err, size_t errlen)
{
	if (egress_proxy_spawn(a, sc, log, ep, err, errlen) < 0)
		return -1;
	return egress_proxy_ready(a, ep, err, errlen);
}

void
egress_proxy_kill(struct egress_proxy *ep)
{
	if (ep->pid <= 0)
		return;
	kill(ep->pid, SIGKILL);
	close(ep->ctl);
	ep->ctl = -1;
	while (waitpid(ep->pid, NULL, 0) < 0 && errno == EINTR)
		;
	ep->pid = -1;
}

#define PROXY_STOP_S 10

/* Does CTL have something to read (the summary, or the end) within PROXY_STOP_S? */
static bool
proxy_answers(int ctl)
{
	struct pollfd p = {.fd = ctl, .events = POLLIN};
	int r;

	do
		r = poll(&p, 1, PROXY_STOP_S * 1000);
	while (r < 0 && errno == EINTR);
	return r > 0;
}

void
egress_proxy_stop(struct arena *a, struct egress_proxy *ep, struct session_summary *sum)
{
	unsigned char *data = NULL;
	size_t len;
	char why[256];
	bool reported = false;

	if (sum)
		memset(sum, 0, sizeof(*sum));
	if (ep->pid <= 0)
		return;
	/* The end of the stream says stop; the summary comes back last, once
	 * the proxy has logged its last line and closed everything: then
	 * nothing of it is left to wait for but its exit, which the kernel
	 * finishes (a zombie is reaped by whoever inherits it).  A proxy that
	 * says nothing in time is killed: a wedged one must not hold the
	 * launch after the sandbox is gone. */
	shutdown(ep->ctl, SHUT_WR);
	if (!proxy_answers(ep->ctl)) {
		launch_say("omnibox-run: the egress proxy did not stop in %d s: killed\n",
			   PROXY_STOP_S);
		kill(ep->pid, SIGKILL);
	} else if (session_recv(ep->ctl, &data, &len) == 1) {
		reported = true;
		if (sum && session_decode_summary(a, data, len, sum, why, sizeof(why)) < 0)
			launch_say("omnibox-run: %s\n", why);
	}
	free(data);
	close(ep->ctl);
	ep->ctl = -1;
	while (!reported && waitpid(ep->pid, NULL, 0) < 0 && errno == EINTR)
		;
	ep->pid = -1;
}

/* Requests refused for their destination alone: the one setting that lifts it, and its cost. */
static void
egress_private_summary(const struct session_summary *sum)
{
	const char *first = sum->private_first ? sum->private_first : "";
	unsigned long n = sum->private_refusals;

	if (!n)
		return;
	launch_say("omnibox-run: the egress proxy refused %lu request%s because the destination "
		   "is a private, loopback or metadata address (%s%s); "
		   "egress_allow_private_destinations: true allows %s (a risk: a name a rule "
		   "allows may then lead to this machine's own services, the local network or "
		   "cloud metadata)\n",
		   n, n == 1 ? "" : "s", first, n > 1 ? ", and more" : "", n == 1 ? "it" : "them");
}

void
egress_denials_summary(const struct session_summary *sum, const char *policy)
{
	const struct proxy_denial *v = sum->denials;
	unsigned long others = sum->others, total = 0;
	size_t n = sum->n_denials;
	bool tcp = false;

	egress_private_summary(sum);
	if (!n)
		return;
	for (size_t i = 0; i < n; i++)
		total += v[i].count;
	launch_say("omnibox-run: the egress proxy refused %lu request%s no rule of %s allows; "
		   "rules that would allow them:\n",
		   total + others, total + others == 1 ? "" : "s", policy);
	for (size_t i = 0; i < n; i++) {
		launch_say("  \"%s\"   # %s%s\n", v[i].rule, v[i].request,
			   v[i].count > 1 ? " (and more like it)" : "");
		tcp |= !strncmp(v[i].rule, "tcp ", 4);
	}
	if (others)
		launch_say("  ... and %lu more\n", others);
	if (tcp)
		launch_say("  (a tcp rule opens a plain tunnel: the stream is not inspected and "
			   "gets no credential; it applies where no HTTP rule names the same host "
			   "and port)\n");
}
