/*
 * egress_start.c - the egress proxy of a launch, as omnibox-run starts it
 * (egress_start.h).
 */
#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "compiler/base/diag.h"
#include "compiler/base/textesc.h"
#include "compiler/decide/env.h"
#include "compiler/decide/transparent.h"
#include "runtime/launch/egress_start.h"
#include "runtime/launch/pty.h"

extern char **environ;

static void
egress_log_line(void *arg, const char *line)
{
	const struct egress_log *log = arg;
	FILE *f = log->f;

	if (log->quiet)
		return;
	fprintf(f, "omnibox-egress: %s\n", line);
	fflush(f);
	if (log->verbose && f != stderr && strstr(line, " deny ")) {
		launch_say("omnibox-egress: %s", line);
		fputs(pty_is_raw() ? "\r\n" : "\n", stderr);
	}
}

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
	      struct egress_log *log, struct proxy_config *pc)
{
	memset(pc, 0, sizeof(*pc));
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
	pc->log = egress_log_line;
	pc->log_arg = log;
	/* The proxy holds no more memory than the policy gives the sandbox. */
	if (sb->limits.memory.present && sb->limits.memory.value < PROXY_MEMORY_DEFAULT)
		pc->memory_limit = (size_t)sb->limits.memory.value;
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

static void
on_parent_gone(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	event_base_loopbreak(arg);
}

/* The proxy process's own life: never returns. */
static void proxy_process_run(const struct proxy_config *pc, int ready, int keep)
    __attribute__((noreturn));

static void
proxy_process_run(const struct proxy_config *pc, int ready, int keep)
{
	struct event_base *base;
	struct event *gone = NULL;
	struct proxy *proxy = NULL;
	char msg[4096];

	setpgid(0, 0);
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	fcntl(ready, F_SETFD, FD_CLOEXEC);
	fcntl(keep, F_SETFD, FD_CLOEXEC);
	msg[0] = '\0';
	base = event_base_new();
	if (base)
		proxy = proxy_new(base, pc, msg, sizeof(msg));
	else
		snprintf(msg, sizeof(msg), "cannot create the event loop");
	if (proxy) {
		gone = event_new(base, keep, EV_READ, on_parent_gone, base);
		if (!gone || event_add(gone, NULL) < 0) {
			snprintf(msg, sizeof(msg), "cannot watch omnibox-run");
			proxy_free(proxy);
			proxy = NULL;
		}
	}
	if (!proxy) {
		(void)!write(ready, msg, strlen(msg));
		_exit(1);
	}
	(void)!write(ready, "", 1);
	close(ready);
	event_base_dispatch(base);
	proxy_free(proxy);
	event_free(gone);
	event_base_free(base);
	if (pc->log_arg)
		fflush(((const struct egress_log *)pc->log_arg)->f);
	_exit(0);
}

pid_t
egress_proxy_process(const struct proxy_config *pc, int *alive, char *err, size_t errlen)
{
	int ready[2], keep[2];
	char msg[4096];
	ssize_t n;
	pid_t pid;

	if (pipe(ready) < 0 || pipe(keep) < 0)
		return diag_fail(err, errlen, "pipe: %s", strerror(errno));
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return diag_fail(err, errlen, "fork: %s", strerror(errno));
	if (pid == 0) {
		close(ready[0]);
		close(keep[1]);
		proxy_process_run(pc, ready[1], keep[0]);
	}
	close(ready[1]);
	close(keep[0]);
	fcntl(keep[1], F_SETFD, FD_CLOEXEC);
	do
		n = read(ready[0], msg, sizeof(msg) - 1);
	while (n < 0 && errno == EINTR);
	close(ready[0]);
	if (n != 1 || msg[0] != '\0') {
		msg[n > 0 ? n : 0] = '\0';
		close(keep[1]);
		waitpid(pid, NULL, 0);
		return diag_fail(err, errlen, "the egress proxy cannot start: %s; nothing ran",
				 n > 0 ? msg : "it exited");
	}
	*alive = keep[1];
	return pid;
}

/* Requests refused for their destination alone: the one setting that lifts it, and its cost. */
static void
egress_private_summary(const struct proxy *proxy)
{
	const char *first;
	unsigned long n = proxy_private_refusals(proxy, &first);

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
egress_denials_summary(const struct proxy *proxy, const char *policy)
{
	const struct proxy_denial *v;
	unsigned long others, total = 0;
	size_t n = proxy_denials(proxy, &v, &others);
	bool tcp = false;

	egress_private_summary(proxy);
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
