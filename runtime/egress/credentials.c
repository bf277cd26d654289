/*
 * credentials.c - reading secrets, making placeholders, rewriting Authorization.
 */
#include "compiler/base/diag.h"
#include "runtime/egress/credentials.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "compiler/decide/secrets.h"
#include "compiler/decide/env.h"
#include "runtime/resolve/command.h"

/* ---- placeholders and base64 ------------------------------------------------------ */

int
cred_make_placeholder(char *out)
{
	static const char alphabet[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	unsigned char raw[64];
	size_t n = 0;

	memcpy(out, CRED_PREFIX, CRED_PREFIX_LEN);
	while (n < CRED_RANDOM_LEN) {
		ssize_t got = getrandom(raw, sizeof(raw), 0);

		if (got < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		/* 248 = 4 * 62: rejecting the rest keeps every character equally likely. */
		for (ssize_t i = 0; i < got && n < CRED_RANDOM_LEN; i++)
			if (raw[i] < 248)
				out[CRED_PREFIX_LEN + n++] = alphabet[raw[i] % 62];
	}
	explicit_bzero(raw, sizeof(raw));
	return 0;
}

bool
cred_has_placeholder(const char *s, size_t len)
{
	/* "oa_cred_" in any case, where each '_' may also be written %5F:
	 * looking wider than the exact prefix costs nothing and misses less. */
	for (size_t i = 0; i + CRED_PREFIX_LEN <= len; i++) {
		size_t j = i;
		bool ok = true;

		if ((s[j] | 0x20) != 'o')
			continue;
		for (const char *want = "oa_cred_"; *want && ok; want++) {
			if (*want == '_' && j + 3 <= len && s[j] == '%' && s[j + 1] == '5' &&
			    (s[j + 2] | 0x20) == 'f') {
				j += 3;
			} else if (j < len &&
				   (s[j] == *want || (*want != '_' && (s[j] | 0x20) == *want))) {
				j++;
			} else {
				ok = false;
			}
		}
		if (ok)
			return true;
	}
	return false;
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t
cred_base64_encode(const void *in, size_t n, char *out)
{
	const unsigned char *p = in;
	size_t o = 0;

	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned)p[i] << 16;

		if (i + 1 < n)
			v |= (unsigned)p[i + 1] << 8;
		if (i + 2 < n)
			v |= p[i + 2];
		out[o++] = b64[v >> 18 & 63];
		out[o++] = b64[v >> 12 & 63];
		out[o++] = i + 1 < n ? b64[v >> 6 & 63] : '=';
		out[o++] = i + 2 < n ? b64[v & 63] : '=';
	}
	return o;
}

static int
b64_value(char c)
{
	const char *p = c ? strchr(b64, c) : NULL;

	return p ? (int)(p - b64) : -1;
}

ssize_t
cred_base64_decode(const char *in, size_t n, unsigned char *out, size_t cap)
{
	size_t o = 0;

	if (n % 4)
		return -1;
	for (size_t i = 0; i < n; i += 4) {
		int v[4];
		size_t pad = 0;

		for (size_t k = 0; k < 4; k++) {
			if (in[i + k] == '=' && i + 4 == n && k >= 2) {
				v[k] = 0;
				pad++;
			} else if (pad) {
				return -1; /* data after padding */
			} else if ((v[k] = b64_value(in[i + k])) < 0) {
				return -1;
			}
		}
		if (o + 3 - pad > cap)
			return -1;
		/* Canonical only: the bits a padded group drops must be zero. */
		if ((pad == 2 && (v[1] & 15)) || (pad == 1 && (v[2] & 3)))
			return -1;
		out[o++] = (unsigned char)(v[0] << 2 | v[1] >> 4);
		if (pad < 2)
			out[o++] = (unsigned char)((v[1] & 15) << 4 | v[2] >> 2);
		if (pad < 1)
			out[o++] = (unsigned char)((v[2] & 3) << 6 | v[3]);
	}
	return (ssize_t)o;
}

/* ---- Authorization ------------------------------------------------------------------ */

static bool
is_bound_placeholder(const struct proxy_cred *c, const char *s, size_t len)
{
	return c->placeholder && strlen(c->placeholder) == len &&
	       memcmp(c->placeholder, s, len) == 0;
}

static const char *
basic_user(const struct proxy_cred *c)
{
	return c->username ? c->username : "x-access-token";
}

ssize_t
cred_authorization_value(const struct proxy_cred *c, char *out, size_t cap)
{
	size_t slen = strlen(c->secret);
	int n;

	if (c->scheme == CRED_SCHEME_BASIC) {
		const char *user = basic_user(c);
		size_t ulen = strlen(user), plain = ulen + 1 + slen, enc = 4 * ((plain + 2) / 3);
		char *tmp;

		if (cap < 6 + enc + 1)
			return -1;
		tmp = malloc(plain);
		if (!tmp)
			return -1;
		memcpy(tmp, user, ulen);
		tmp[ulen] = ':';
		memcpy(tmp + ulen + 1, c->secret, slen);
		memcpy(out, "Basic ", 6);
		cred_base64_encode(tmp, plain, out + 6);
		out[6 + enc] = '\0';
		explicit_bzero(tmp, plain);
		free(tmp);
		return (ssize_t)(6 + enc);
	}
	n = snprintf(out, cap, "%s %s", c->scheme == CRED_SCHEME_TOKEN ? "token" : "Bearer",
		     c->secret);
	return n < 0 || (size_t)n >= cap ? -1 : n;
}

/* "Basic CREDS": swap the bound placeholder in user or password. */
static int
rewrite_basic(const struct proxy_cred *c, const char *scheme, size_t scheme_len, const char *b64v,
	      size_t b64_len, char *out, size_t cap, enum cred_auth *verdict)
{
	unsigned char *plain = malloc(b64_len + 1);
	ssize_t n = plain ? cred_base64_decode(b64v, b64_len, plain, b64_len) : -1;
	const char *colon;
	size_t ulen, plen, slen = strlen(c->secret), total, enc;
	bool user_ph, pass_ph;
	char *fresh;
	int rc = 0;

	if (n < 0) {
		/* Not base64 we can read: only its raw text can hold a placeholder. */
		free(plain);
		*verdict = cred_has_placeholder(b64v, b64_len) ? CRED_AUTH_REFUSE : CRED_AUTH_KEEP;
		return 0;
	}
	colon = memchr(plain, ':', (size_t)n);
	if (!cred_has_placeholder((const char *)plain, (size_t)n)) {
		*verdict = cred_has_placeholder(b64v, b64_len) ? CRED_AUTH_REFUSE : CRED_AUTH_KEEP;
		goto out;
	}
	if (!colon) {
		*verdict = CRED_AUTH_REFUSE;
		goto out;
	}
	ulen = (size_t)(colon - (const char *)plain);
	plen = (size_t)n - ulen - 1;
	user_ph = is_bound_placeholder(c, (const char *)plain, ulen);
	pass_ph = is_bound_placeholder(c, colon + 1, plen);
	/* Whatever is not the bound placeholder must hold none at all. */
	if ((!user_ph && cred_has_placeholder((const char *)plain, ulen)) ||
	    (!pass_ph && cred_has_placeholder(colon + 1, plen)) || (!user_ph && !pass_ph)) {
		*verdict = CRED_AUTH_REFUSE;
		goto out;
	}
	total = (user_ph ? slen : ulen) + 1 + (pass_ph ? slen : plen);
	enc = 4 * ((total + 2) / 3);
	if (scheme_len + 1 + enc + 1 > cap) {
		rc = -1;
		goto out;
	}
	fresh = malloc(total);
	if (!fresh) {
		rc = -1;
		goto out;
	}
	memcpy(fresh, user_ph ? c->secret : (const char *)plain, user_ph ? slen : ulen);
	fresh[user_ph ? slen : ulen] = ':';
	memcpy(fresh + (user_ph ? slen : ulen) + 1, pass_ph ? c->secret : colon + 1,
	       pass_ph ? slen : plen);
	memcpy(out, scheme, scheme_len);
	out[scheme_len] = ' ';
	cred_base64_encode(fresh, total, out + scheme_len + 1);
	out[scheme_len + 1 + enc] = '\0';
	explicit_bzero(fresh, total);
	free(fresh);
	*verdict = CRED_AUTH_SWAPPED;
out:
	explicit_bzero(plain, b64_len + 1);
	free(plain);
	return rc;
}

int
cred_rewrite_authorization(const struct proxy_cred *c, const char *value, size_t len, char *out,
			   size_t cap, enum cred_auth *verdict)
{
	size_t scheme_len = 0, rest;
	const char *cred;

	*verdict = CRED_AUTH_KEEP;
	while (scheme_len < len && value[scheme_len] != ' ')
		scheme_len++;
	cred = value + scheme_len;
	rest = len - scheme_len;
	while (rest && *cred == ' ') {
		cred++;
		rest--;
	}
	if (scheme_len == 5 && !strncasecmp(value, "basic", 5) && rest)
		return rewrite_basic(c, value, scheme_len, cred, rest, out, cap, verdict);
	if (!cred_has_placeholder(value, len))
		return 0;
	if (((scheme_len == 6 && !strncasecmp(value, "bearer", 6)) ||
	     (scheme_len == 5 && !strncasecmp(value, "token", 5))) &&
	    is_bound_placeholder(c, cred, rest)) {
		int n = snprintf(out, cap, "%.*s %s", (int)scheme_len, value, c->secret);

		if (n < 0 || (size_t)n >= cap)
			return -1;
		*verdict = CRED_AUTH_SWAPPED;
		return 0;
	}
	*verdict = CRED_AUTH_REFUSE;
	return 0;
}

/* ---- reading secrets -------------------------------------------------------------- */

static bool
is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

const char *
cred_clean_secret(const char *buf, size_t len, size_t *start, size_t *out_len)
{
	size_t s = 0;

	while (len && is_space(buf[len - 1]))
		len--;
	while (s < len && is_space(buf[s]))
		s++;
	if (s == len)
		return "is empty";
	/* A line break or another control byte would inject header lines. */
	for (size_t i = s; i < len; i++)
		if ((unsigned char)buf[i] < 0x20 || buf[i] == 0x7f)
			return "holds a control byte or line break; a secret must be one line";
	*start = s;
	*out_len = len - s;
	return NULL;
}

/* Trim BUF/LEN; refuse empty secrets and control bytes (header injection). */
static int
finish_secret(struct arena *a, const char *what, char *buf, size_t len, const char **secret,
	      char *err, size_t errlen)
{
	size_t start = 0, n = 0;
	const char *why = cred_clean_secret(buf, len, &start, &n);

	if (why)
		return diag_fail(err, errlen, "%s %s", what, why);
	*secret = arena_strndup(a, buf + start, n);
	return 0;
}

static char *
expand_home(struct arena *a, const char *path, const char *home)
{
	if (!strcmp(path, "~"))
		return arena_strdup(a, home);
	if (!strncmp(path, "~/", 2))
		return arena_printf(a, "%s/%s", home, path + 2);
	return arena_strdup(a, path);
}

/* Read at most MAX bytes of the regular file PATH into a malloc'd buffer. */
static char *
read_small_file(const char *path, size_t max, size_t *len, int *errnum)
{
	/* O_NONBLOCK: a FIFO opens at once (and is refused below) instead of
	 * waiting for a writer; reads of a regular file ignore it. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	struct stat st;
	char *buf;
	size_t n = 0;

	if (fd < 0) {
		*errnum = errno;
		return NULL;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		*errnum = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
		close(fd);
		return NULL;
	}
	buf = malloc(max + 1);
	if (!buf) {
		*errnum = ENOMEM;
		close(fd);
		return NULL;
	}
	for (;;) {
		ssize_t r = read(fd, buf + n, max + 1 - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			*errnum = errno;
			free(buf);
			close(fd);
			return NULL;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n > max) {
			*errnum = EFBIG;
			explicit_bzero(buf, n);
			free(buf);
			close(fd);
			return NULL;
		}
	}
	close(fd);
	buf[n] = '\0';
	*len = n;
	return buf;
}

static long
ms_since(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - t0->tv_sec) * 1000L + (now.tv_nsec - t0->tv_nsec) / 1000000L;
}

/*
 * Connect to the Unix stream socket PATH and read to its end: all of it
 * within CRED_SOCKET_TIMEOUT, at most CRED_SOCKET_MAX bytes (more is an
 * error: a secret cut short would be a wrong one).  Nothing is written.
 */
static char *
read_socket(const char *path, size_t *len, char *err, size_t errlen, const char *what)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	struct timeval tv = {CRED_SOCKET_TIMEOUT, 0};
	struct timespec t0;
	char *buf;
	size_t n = 0;
	int fd;

	if (strlen(path) >= sizeof(sun.sun_path)) {
		diag_fail(err, errlen, "%s: the path is too long for a Unix socket", what);
		return NULL;
	}
	strcpy(sun.sun_path, path);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		diag_fail(err, errlen, "%s: socket: %s", what, strerror(errno));
		return NULL;
	}
	/* A blocking connect waits while the listener's backlog is full: bounded. */
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		diag_fail(err, errlen, "%s: connect: %s", what,
			  errno == EAGAIN || errno == EINPROGRESS ? "timed out" : strerror(errno));
		close(fd);
		return NULL;
	}
	buf = malloc(CRED_SOCKET_MAX + 1);
	if (!buf || fcntl(fd, F_SETFL, O_NONBLOCK) < 0) {
		diag_fail(err, errlen, "%s: %s", what, buf ? strerror(errno) : "out of memory");
		free(buf);
		close(fd);
		return NULL;
	}
	for (;;) {
		long left = CRED_SOCKET_TIMEOUT * 1000L - ms_since(&t0);
		struct pollfd pfd = {fd, POLLIN, 0};
		ssize_t r;

		if (left <= 0) {
			diag_fail(
			    err, errlen,
			    "%s: the socket did not send its answer to the end within %d seconds",
			    what, CRED_SOCKET_TIMEOUT);
			goto bad;
		}
		if (poll(&pfd, 1, (int)left) < 0 && errno != EINTR) {
			diag_fail(err, errlen, "%s: poll: %s", what, strerror(errno));
			goto bad;
		}
		r = read(fd, buf + n, CRED_SOCKET_MAX + 1 - n);
		if (r < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (r < 0) {
			diag_fail(err, errlen, "%s: read: %s", what, strerror(errno));
			goto bad;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n > CRED_SOCKET_MAX) {
			diag_fail(err, errlen, "%s: the socket sent more than %u bytes", what,
				  CRED_SOCKET_MAX);
			goto bad;
		}
	}
	close(fd);
	buf[n] = '\0';
	*len = n;
	return buf;
bad:
	explicit_bzero(buf, n);
	free(buf);
	close(fd);
	return NULL;
}

/* The environment a `command` source runs with: the sandbox's allow-list only. */
static char **
command_env(struct arena *a, const struct sandbox *sb, char *const *environ)
{
	char **env = NULL;
	size_t n = 0, cap = 0;

	for (size_t i = 0; environ && environ[i]; i++)
		if (env_name_passes(sb, environ[i]))
			*ARENA_PUSH(a, env, n, cap) = environ[i];
	*ARENA_PUSH(a, env, n, cap) = NULL;
	return env;
}

/*
 * Run CMD with /bin/sh -c and ENV; its standard output (at most
 * CRED_SECRET_MAX bytes) comes back malloc'd.  Standard error goes to
 * ours, so the user sees why a command failed.
 */
static char *
run_command(const char *cmd, char **env, size_t *len, char *err, size_t errlen, const char *what)
{
	int pipefd[2], status;
	pid_t pid;
	char *buf;
	size_t n = 0;
	bool overflow = false;
	struct timespec start, now;

	if (pipe2(pipefd, O_CLOEXEC) < 0) {
		diag_fail(err, errlen, "%s: pipe: %s", what, strerror(errno));
		return NULL;
	}
	pid = fork();
	if (pid < 0) {
		diag_fail(err, errlen, "%s: fork: %s", what, strerror(errno));
		close(pipefd[0]);
		close(pipefd[1]);
		return NULL;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY);
		char *argv[] = {(char *)"sh", (char *)"-c", (char *)cmd, NULL};

		sigset_t none;

		setpgid(0, 0); /* so a timeout can end its children too */
		/* Not the signals omnibox-run holds while the sandbox is set up. */
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (null >= 0)
			dup2(null, 0);
		dup2(pipefd[1], 1);
		signal(SIGPIPE, SIG_DFL);
		execve("/bin/sh", argv, env);
		_exit(127);
	}
	close(pipefd[1]);
	buf = malloc(CRED_SECRET_MAX + 1);
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		struct pollfd pfd = {pipefd[0], POLLIN, 0};
		long left;
		ssize_t r;
		char sink[4096];

		clock_gettime(CLOCK_MONOTONIC, &now);
		left = CRED_COMMAND_TIMEOUT * 1000L - ((now.tv_sec - start.tv_sec) * 1000L +
						       (now.tv_nsec - start.tv_nsec) / 1000000L);
		if (left <= 0) {
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			close(pipefd[0]);
			if (buf)
				explicit_bzero(buf, n);
			free(buf);
			diag_fail(err, errlen, "%s: the command did not finish within %d seconds",
				  what, CRED_COMMAND_TIMEOUT);
			return NULL;
		}
		if (poll(&pfd, 1, (int)left) < 0 && errno != EINTR)
			break;
		if (!(pfd.revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		if (buf && n < CRED_SECRET_MAX + 1)
			r = read(pipefd[0], buf + n, CRED_SECRET_MAX + 1 - n);
		else
			r = read(pipefd[0], sink, sizeof(sink));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		if (buf && n < CRED_SECRET_MAX + 1)
			n += (size_t)r;
		else
			overflow = true;
		if (n > CRED_SECRET_MAX)
			overflow = true;
	}
	close(pipefd[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!buf) {
		diag_fail(err, errlen, "%s: out of memory", what);
		return NULL;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || overflow) {
		explicit_bzero(buf, n);
		free(buf);
		if (overflow)
			diag_fail(err, errlen, "%s: the command printed more than %d bytes", what,
				  CRED_SECRET_MAX);
		else if (WIFEXITED(status))
			diag_fail(err, errlen, "%s: the command exited with status %d", what,
				  WEXITSTATUS(status));
		else
			diag_fail(err, errlen, "%s: the command was killed by signal %d", what,
				  WTERMSIG(status));
		return NULL;
	}
	buf[n] = '\0';
	*len = n;
	return buf;
}

static int
read_source(struct arena *a, const struct sandbox *sb, enum cred_source_kind kind, const char *name,
	    char *const *environ, const char *home, const char *what, const char **secret,
	    char *err, size_t errlen)
{
	char *buf, *label;
	size_t len = 0;
	int errnum = 0, rc;

	switch (kind) {
	case CRED_SOURCE_ENV: {
		const char *v = env_lookup(environ, name);
		char *copy;

		label = arena_printf(a, "%s: environment variable %s", what, name);
		if (!v)
			return diag_fail(err, errlen, "%s is not set", label);
		copy = arena_strdup(a, v);
		return finish_secret(a, label, copy, strlen(copy), secret, err, errlen);
	}
	case CRED_SOURCE_FILE: {
		char *path = expand_home(a, name, home);

		label = arena_printf(a, "%s: file %s", what, path);
		buf = read_small_file(path, CRED_SECRET_MAX, &len, &errnum);
		if (!buf)
			return diag_fail(err, errlen, "%s: %s", label,
					 errnum == EFBIG ? "too large for a secret"
							 : strerror(errnum));
		rc = finish_secret(a, label, buf, len, secret, err, errlen);
		explicit_bzero(buf, len);
		free(buf);
		return rc;
	}
	case CRED_SOURCE_UNIX_SOCKET: {
		char *path = expand_home(a, name, home);

		label = arena_printf(a, "%s: unix socket %s", what, path);
		buf = read_socket(path, &len, err, errlen, label);
		if (!buf)
			return -1;
		rc = finish_secret(a, arena_printf(a, "%s: its answer", label), buf, len, secret,
				   err, errlen);
		explicit_bzero(buf, len);
		free(buf);
		return rc;
	}
	case CRED_SOURCE_COMMAND:
		label = arena_printf(a, "%s: command '%s'", what, name);
		buf = run_command(name, command_env(a, sb, environ), &len, err, errlen, label);
		if (!buf)
			return -1;
		rc = finish_secret(a, arena_printf(a, "%s: its output", label), buf, len, secret,
				   err, errlen);
		explicit_bzero(buf, len);
		free(buf);
		return rc;
	default:
		return diag_fail(err, errlen, "%s has no source", what);
	}
}

char *
cred_read_secret(enum cred_source_kind kind, const char *path, char *err, size_t errlen)
{
	char label[4200], *buf, *out;
	size_t len = 0, start = 0, n = 0;
	const char *why;
	int errnum = 0;

	snprintf(label, sizeof(label), "%s %s", kind == CRED_SOURCE_FILE ? "file" : "unix socket",
		 path);
	if (kind == CRED_SOURCE_FILE) {
		buf = read_small_file(path, CRED_SECRET_MAX, &len, &errnum);
		if (!buf) {
			diag_fail(err, errlen, "%s: %s", label,
				  errnum == EFBIG ? "too large for a secret" : strerror(errnum));
			return NULL;
		}
	} else if (kind == CRED_SOURCE_UNIX_SOCKET) {
		buf = read_socket(path, &len, err, errlen, label);
		if (!buf)
			return NULL;
	} else {
		diag_fail(err, errlen, "%s: only files and unix sockets are read again", label);
		return NULL;
	}
	why = cred_clean_secret(buf, len, &start, &n);
	out = why ? NULL : strndup(buf + start, n);
	explicit_bzero(buf, len);
	free(buf);
	if (why)
		diag_fail(err, errlen, "%s %s", label, why);
	else if (!out)
		diag_fail(err, errlen, "%s: out of memory", label);
	return out;
}

/* ---- databricks_cli ---------------------------------------------------------------- */

struct ini_profile {
	const char *host, *token;
	bool found;
};

/* The host and token of profile NAME in the INI text CFG (NUL-terminated). */
static void
ini_find(struct arena *a, const char *cfg, const char *name, struct ini_profile *out)
{
	const char *line = cfg;
	bool in = false;

	memset(out, 0, sizeof(*out));
	while (*line) {
		const char *end = strchr(line, '\n'), *s = line, *e;
		size_t len = end ? (size_t)(end - line) : strlen(line);

		e = line + len;
		while (s < e && is_space(*s))
			s++;
		while (e > s && is_space(e[-1]))
			e--;
		if (s < e && *s == '[' && e[-1] == ']') {
			const char *ns = s + 1, *ne = e - 1;

			while (ns < ne && is_space(*ns))
				ns++;
			while (ne > ns && is_space(ne[-1]))
				ne--;
			in = (size_t)(ne - ns) == strlen(name) &&
			     !strncmp(ns, name, (size_t)(ne - ns));
			out->found |= in;
		} else if (in && s < e && *s != '#' && *s != ';') {
			const char *eq = memchr(s, '=', (size_t)(e - s)), *ke, *vs;

			if (eq) {
				ke = eq;
				while (ke > s && is_space(ke[-1]))
					ke--;
				vs = eq + 1;
				while (vs < e && is_space(*vs))
					vs++;
				if (ke - s == 4 && !strncmp(s, "host", 4))
					out->host = arena_strndup(a, vs, (size_t)(e - vs));
				else if (ke - s == 5 && !strncmp(s, "token", 5))
					out->token = arena_strndup(a, vs, (size_t)(e - vs));
			}
		}
		if (!end)
			break;
		line = end + 1;
	}
}

/* "https://HOST[:PORT][/...]" → "host" and *PORT (443); NULL with *why for anything
 * the proxy cannot bind. */
static char *
databricks_host(struct arena *a, const char *url, unsigned *port, const char **why)
{
	const char *h = url, *end;
	char *host, *colon;

	if (!strncasecmp(h, "http://", 7)) {
		*why = "uses cleartext http:// (credentials only travel over TLS)";
		return NULL;
	}
	if (!strncasecmp(h, "https://", 8))
		h += 8;
	end = h + strcspn(h, "/?#");
	host = arena_strndup(a, h, (size_t)(end - h));
	for (char *c = host; *c; c++)
		if (*c >= 'A' && *c <= 'Z')
			*c = (char)(*c + 32);
	*port = 443;
	colon = strchr(host, ':');
	if (colon) {
		char *stop;
		unsigned long v = strtoul(colon + 1, &stop, 10);

		if (colon[1] < '1' || colon[1] > '9' || *stop || v > 65535) {
			*why = "has a port that is not a number from 1 to 65535";
			return NULL;
		}
		*port = (unsigned)v;
		*colon = '\0';
	}
	if (!egress_host_is_safe(host, strlen(host))) {
		*why = "is not a host name";
		return NULL;
	}
	return host;
}

/* The "access_token" string of `databricks auth token` JSON. */
static const char *
json_access_token(struct arena *a, const char *json)
{
	const char *p = strstr(json, "\"access_token\"");
	const char *end;

	if (!p)
		return NULL;
	p += strlen("\"access_token\"");
	while (is_space(*p))
		p++;
	if (*p++ != ':')
		return NULL;
	while (is_space(*p))
		p++;
	if (*p++ != '"')
		return NULL;
	end = strchr(p, '"');
	if (!end || memchr(p, '\\', (size_t)(end - p)))
		return NULL;
	return arena_strndup(a, p, (size_t)(end - p));
}

struct prep {
	struct arena *a;
	const struct sandbox *sb;
	struct cred_runtime *rt;
	struct egress_matcher *m;
	char *err;
	size_t errlen;
	/* One set for every aws_sigv4 entry: the SDK in the sandbox has one
	 * AWS_ACCESS_KEY_ID; the host a request goes to picks the real keys. */
	const char *aws_key_ph, *aws_secret_ph, *aws_token_ph;
};

static int
bind_host(struct prep *pp, const char *what, const char *host, unsigned port,
	  enum cred_scheme scheme, const char *user, const char *secret, const char *placeholder)
{
	struct proxy_cred *pc;

	for (size_t i = 0; i < pp->rt->n_creds; i++)
		if (!strcmp(pp->rt->creds[i].host, host) && pp->rt->creds[i].port == port)
			return diag_fail(pp->err, pp->errlen,
					 "%s: host %s:%u is already bound to another credential",
					 what, host, port);
	if (egress_match_host(pp->m, host, strlen(host), port, EGRESS_PORT_TLS) < 0)
		return diag_fail(
		    pp->err, pp->errlen,
		    "%s: host %s:%u is not allowed by any egress rule, so the credential "
		    "could never be used",
		    what, host, port);
	pc = ARENA_PUSH(pp->a, pp->rt->creds, pp->rt->n_creds, pp->rt->cap_creds);
	pc->host = host;
	pc->port = port;
	pc->scheme = scheme;
	pc->username = user;
	pc->secret = secret;
	pc->placeholder = placeholder;
	return 0;
}

static int
add_env(struct prep *pp, const char *what, const char *name, const char *value)
{
	size_t n = strlen(name);

	for (size_t i = 0; i < pp->rt->n_env; i++)
		if (!strncmp(pp->rt->env[i], name, n) && pp->rt->env[i][n] == '=')
			return diag_fail(pp->err, pp->errlen, "%s: %s is set by two credentials",
					 what, name);
	*ARENA_PUSH(pp->a, pp->rt->env, pp->rt->n_env, pp->rt->cap_env) =
	    arena_printf(pp->a, "%s=%s", name, value);
	return 0;
}

/*
 * The one profile file CR reads (cred_host_files(): the databricks_cli
 * configuration, an aws_sigv4 profile's shared credentials file) on this
 * machine: below HOME, absolute, or relative to the launch directory.
 */
static const char *
host_file(struct arena *a, const struct credential *cr, const char *databricks_config,
	  const char *home)
{
	struct cred_host_file f[CRED_HOST_FILES_MAX];

	if (cred_host_files(a, cr, databricks_config, f) < 1)
		return NULL;
	if (f[0].path.base == PATH_HOME)
		return *f[0].path.rel ? arena_printf(a, "%s/%s", home, f[0].path.rel)
				      : arena_strdup(a, home);
	return f[0].path.base == PATH_ABSOLUTE ? f[0].path.written : f[0].path.rel;
}

static int
prepare_databricks(struct prep *pp, const struct credential *cr, const char *what,
		   char *const *environ, const char *home, const char *scratch)
{
	const char *cfg_path =
	    host_file(pp->a, cr, env_lookup(environ, CRED_DATABRICKS_CONFIG_ENV), home);
	char *cfg, *text = arena_strdup(pp->a, "");
	size_t len;
	int errnum = 0;

	cfg = read_small_file(cfg_path, 1 << 20, &len, &errnum);
	if (!cfg)
		return diag_fail(pp->err, pp->errlen, "%s: cannot read %s: %s", what, cfg_path,
				 strerror(errnum));
	for (size_t i = 0; i < cr->profiles.n; i++) {
		const char *name = cr->profiles.v[i].s, *why = NULL, *secret;
		const char *pwhat = arena_printf(pp->a, "%s: databricks profile '%s'", what, name);
		struct ini_profile prof;
		char ph[CRED_PLACEHOLDER_LEN + 1], *host;
		unsigned port;

		ini_find(pp->a, cfg, name, &prof);
		if (!prof.found || !prof.host) {
			diag_fail(pp->err, pp->errlen, "%s %s in %s", pwhat,
				  prof.found ? "has no 'host'" : "is not defined", cfg_path);
			goto fail;
		}
		host = databricks_host(pp->a, prof.host, &port, &why);
		if (!host) {
			diag_fail(pp->err, pp->errlen, "%s: host '%s' %s", pwhat, prof.host, why);
			goto fail;
		}
		if (prof.token && *prof.token) {
			if (finish_secret(pp->a, arena_printf(pp->a, "%s: token", pwhat),
					  (char *)prof.token, strlen(prof.token), &secret, pp->err,
					  pp->errlen) < 0)
				goto fail;
		} else {
			/* An OAuth profile: the CLI mints a short-lived token. */
			char *cmd = arena_printf(pp->a, "databricks auth token -p '%s'", name);
			char *out;
			size_t olen = 0;

			if (strchr(name, '\'')) {
				diag_fail(pp->err, pp->errlen, "%s: a quote in the profile name",
					  pwhat);
				goto fail;
			}
			out = run_command(cmd, command_env(pp->a, pp->sb, environ), &olen, pp->err,
					  pp->errlen, pwhat);
			if (!out)
				goto fail;
			secret = json_access_token(pp->a, out);
			explicit_bzero(out, olen);
			free(out);
			if (!secret || !*secret) {
				diag_fail(pp->err, pp->errlen,
					  "%s: `databricks auth token` printed no access_token",
					  pwhat);
				goto fail;
			}
			if (finish_secret(pp->a, pwhat, (char *)secret, strlen(secret), &secret,
					  pp->err, pp->errlen) < 0)
				goto fail;
		}
		if (cred_make_placeholder(ph) < 0) {
			diag_fail(pp->err, pp->errlen, "%s: getrandom: %s", pwhat, strerror(errno));
			goto fail;
		}
		ph[CRED_PLACEHOLDER_LEN] = '\0';
		if (bind_host(pp, pwhat, host, port, CRED_SCHEME_BEARER, NULL, secret,
			      arena_strdup(pp->a, ph)) < 0)
			goto fail;
		text = port == 443
			   ? arena_printf(pp->a, "%s%s[%s]\nhost = https://%s\ntoken = %s\n", text,
					  i ? "\n" : "", name, host, ph)
			   : arena_printf(pp->a, "%s%s[%s]\nhost = https://%s:%u\ntoken = %s\n",
					  text, i ? "\n" : "", name, host, port, ph);
	}
	explicit_bzero(cfg, len);
	free(cfg);
	{
		struct cred_file *f =
		    ARENA_PUSH(pp->a, pp->rt->files, pp->rt->n_files, pp->rt->cap_files);

		f->name = CRED_DATABRICKS_FILE;
		f->content = text;
		f->len = strlen(text);
		f->mode = 0600;
	}
	if (add_env(pp, what, "DATABRICKS_CONFIG_FILE",
		    arena_printf(pp->a, "%s/%s", scratch, CRED_DATABRICKS_FILE)) < 0)
		return -1;
	if (cr->default_profile.s &&
	    add_env(pp, what, "DATABRICKS_CONFIG_PROFILE", cr->default_profile.s) < 0)
		return -1;
	return 0;
fail:
	explicit_bzero(cfg, len);
	free(cfg);
	return -1;
}

/* ---- aws_sigv4 ------------------------------------------------------------------------ */

struct aws_keys {
	const char *key_id, *secret, *token;
	const char *refused; /* a key that is not a static key's, e.g. "role_arn" */
	bool found;
};

static bool
key_is(const char *k, size_t len, const char *want)
{
	return strlen(want) == len && !strncasecmp(k, want, len);
}

/* Section NAME of the INI text CFG: its static keys, or what it has instead. */
static void
aws_ini_find(struct arena *a, const char *cfg, const char *name, struct aws_keys *out)
{
	const char *line = cfg;
	bool in = false;

	memset(out, 0, sizeof(*out));
	while (*line) {
		const char *end = strchr(line, '\n'), *s = line, *e;

		e = end ? end : line + strlen(line);
		while (s < e && is_space(*s))
			s++;
		while (e > s && is_space(e[-1]))
			e--;
		if (s < e && *s == '[' && e[-1] == ']') {
			const char *ns = s + 1, *ne = e - 1;

			while (ns < ne && is_space(*ns))
				ns++;
			while (ne > ns && is_space(ne[-1]))
				ne--;
			in = (size_t)(ne - ns) == strlen(name) && !strncmp(ns, name, strlen(name));
			out->found |= in;
		} else if (in && s < e && *s != '#' && *s != ';' &&
			   memchr(s, '=', (size_t)(e - s))) {
			const char *eq = memchr(s, '=', (size_t)(e - s)), *ke = eq, *vs = eq + 1;
			char *v;

			while (ke > s && is_space(ke[-1]))
				ke--;
			while (vs < e && is_space(*vs))
				vs++;
			v = arena_strndup(a, vs, (size_t)(e - vs));
			if (key_is(s, (size_t)(ke - s), "aws_access_key_id"))
				out->key_id = v;
			else if (key_is(s, (size_t)(ke - s), "aws_secret_access_key"))
				out->secret = v;
			else if (key_is(s, (size_t)(ke - s), "aws_session_token"))
				out->token = v;
			else if (!out->refused &&
				 (key_is(s, (size_t)(ke - s), "role_arn") ||
				  key_is(s, (size_t)(ke - s), "source_profile") ||
				  key_is(s, (size_t)(ke - s), "credential_source") ||
				  key_is(s, (size_t)(ke - s), "credential_process") ||
				  key_is(s, (size_t)(ke - s), "web_identity_token_file") ||
				  (ke - s > 4 && !strncasecmp(s, "sso_", 4))))
				out->refused = arena_strndup(a, s, (size_t)(ke - s));
		}
		if (!end)
			break;
		line = end + 1;
	}
}

/* The static keys of PROFILE in ~/.aws/credentials: nothing that needs an AWS call. */
static int
aws_profile_keys(struct prep *pp, const char *home, const struct credential *cr, const char *what,
		 struct aws_keys *k)
{
	const char *profile = cr->aws_profile.s;
	const char *path = host_file(pp->a, cr, NULL, home);
	const char *pwhat = arena_printf(pp->a, "%s: profile '%s' of %s", what, profile, path);
	size_t len = 0;
	int errnum = 0, rc = 0;
	char *cfg = read_small_file(path, 1 << 20, &len, &errnum);

	if (!cfg)
		return diag_fail(pp->err, pp->errlen, "%s: cannot read %s: %s", what, path,
				 strerror(errnum));
	aws_ini_find(pp->a, cfg, profile, k);
	explicit_bzero(cfg, len);
	free(cfg);
	if (!k->found)
		rc = diag_fail(pp->err, pp->errlen, "%s is not defined", pwhat);
	else if (k->refused)
		rc =
		    diag_fail(pp->err, pp->errlen,
			      "%s has '%s': only static keys (aws_access_key_id, "
			      "aws_secret_access_key, aws_session_token) are supported; no role is "
			      "assumed and no process or SSO login is run",
			      pwhat, k->refused);
	else if (!k->key_id || !*k->key_id || !k->secret || !*k->secret)
		rc = diag_fail(
		    pp->err, pp->errlen,
		    "%s lacks aws_access_key_id or aws_secret_access_key: only static keys "
		    "are supported",
		    pwhat);
	else if (finish_secret(pp->a, arena_printf(pp->a, "%s: aws_access_key_id", pwhat),
			       (char *)k->key_id, strlen(k->key_id), &k->key_id, pp->err,
			       pp->errlen) < 0 ||
		 finish_secret(pp->a, arena_printf(pp->a, "%s: aws_secret_access_key", pwhat),
			       (char *)k->secret, strlen(k->secret), &k->secret, pp->err,
			       pp->errlen) < 0 ||
		 (k->token && *k->token &&
		  finish_secret(pp->a, arena_printf(pp->a, "%s: aws_session_token", pwhat),
				(char *)k->token, strlen(k->token), &k->token, pp->err,
				pp->errlen) < 0))
		rc = -1;
	if (k->token && !*k->token)
		k->token = NULL;
	return rc;
}

static const char *
fresh_placeholder(struct prep *pp, const char *what)
{
	char ph[CRED_PLACEHOLDER_LEN + 1];

	if (cred_make_placeholder(ph) < 0) {
		diag_fail(pp->err, pp->errlen, "%s: getrandom: %s", what, strerror(errno));
		return NULL;
	}
	ph[CRED_PLACEHOLDER_LEN] = '\0';
	return arena_strdup(pp->a, ph);
}

/* The sandbox's AWS_* placeholders, made with the first aws_sigv4 entry (the token's with the first
 * that has one). */
static int
aws_placeholders(struct prep *pp, const char *what, bool token)
{
	if (!pp->aws_key_ph) {
		if (!(pp->aws_key_ph = fresh_placeholder(pp, what)) ||
		    !(pp->aws_secret_ph = fresh_placeholder(pp, what)) ||
		    add_env(pp, what, "AWS_ACCESS_KEY_ID", pp->aws_key_ph) < 0 ||
		    add_env(pp, what, "AWS_SECRET_ACCESS_KEY", pp->aws_secret_ph) < 0)
			return -1;
	}
	if (token && !pp->aws_token_ph) {
		if (!(pp->aws_token_ph = fresh_placeholder(pp, what)) ||
		    add_env(pp, what, "AWS_SESSION_TOKEN", pp->aws_token_ph) < 0)
			return -1;
	}
	return 0;
}

static int
prepare_aws(struct prep *pp, const struct credential *cr, unsigned entry, const char *what,
	    char *const *environ, const char *home)
{
	struct proxy_aws *aws = arena_alloc(pp->a, sizeof(*aws));
	struct aws_keys k = {0};

	if (cr->aws_profile.s) {
		if (aws_profile_keys(pp, home, cr, what, &k) < 0)
			return -1;
	} else if (read_source(pp->a, pp->sb, cr->aws_key_id.kind, cr->aws_key_id.value.s, environ,
			       home, arena_printf(pp->a, "%s: access_key_id", what), &k.key_id,
			       pp->err, pp->errlen) < 0 ||
		   read_source(pp->a, pp->sb, cr->aws_secret.kind, cr->aws_secret.value.s, environ,
			       home, arena_printf(pp->a, "%s: secret_access_key", what), &k.secret,
			       pp->err, pp->errlen) < 0 ||
		   (cr->aws_token.kind != CRED_SOURCE_NONE &&
		    read_source(pp->a, pp->sb, cr->aws_token.kind, cr->aws_token.value.s, environ,
				home, arena_printf(pp->a, "%s: session_token", what), &k.token,
				pp->err, pp->errlen) < 0)) {
		return -1;
	}
	if (aws_placeholders(pp, what, k.token != NULL) < 0)
		return -1;
	aws->region = cr->region.s;
	aws->service = cr->service.s ? cr->service.s : "s3";
	aws->key_id = k.key_id;
	aws->key_id_placeholder = pp->aws_key_ph;
	aws->token = k.token;
	for (size_t t = 0; t < cr->n_targets; t++) {
		const struct cred_target *tg = &cr->targets[t];
		struct proxy_cred *pc;

		if (bind_host(pp, what, tg->host, tg->port, CRED_SCHEME_SIGV4, NULL, k.secret,
			      pp->aws_secret_ph) < 0)
			return -1;
		pc = &pp->rt->creds[pp->rt->n_creds - 1];
		pc->entry = entry;
		pc->aws = aws;
	}
	return 0;
}

int
cred_prepare(struct arena *a, const struct sandbox *sb, char *const *environ, const char *home,
	     const char *scratch, struct cred_runtime *out, char *err, size_t errlen)
{
	struct prep pp = {a, sb, out, NULL, err, errlen, NULL, NULL, NULL};
	int rc = 0;

	memset(out, 0, sizeof(*out));
	pp.m = egress_matcher_new(sb->egress, sb->n_egress);
	if (!pp.m)
		return diag_fail(err, errlen, "out of memory");
	for (size_t i = 0; i < sb->n_creds && rc == 0; i++) {
		const struct credential *cr = &sb->creds[i];
		const char *what = arena_printf(a, "credential_proxy[%zu] (%s, line %u)", i,
						cred_type_name(cr->type), cr->loc.line);
		const char *secret = NULL, *placeholder = NULL, *user = NULL;

		if (cr->type == CRED_DATABRICKS_CLI) {
			size_t first = out->n_creds;

			rc = prepare_databricks(&pp, cr, what, environ, home, scratch);
			for (size_t k = first; k < out->n_creds; k++)
				out->creds[k].entry = (unsigned)i;
			continue;
		}
		if (cr->type == CRED_AWS_SIGV4) {
			rc = prepare_aws(&pp, cr, (unsigned)i, what, environ, home);
			continue;
		}
		rc = read_source(a, sb, cr->source_kind, cr->source.s, environ, home, what, &secret,
				 err, errlen);
		if (rc < 0)
			break;
		if (cr->env.n) {
			char ph[CRED_PLACEHOLDER_LEN + 1];

			if (cred_make_placeholder(ph) < 0) {
				rc = diag_fail(err, errlen, "%s: getrandom: %s", what,
					       strerror(errno));
				break;
			}
			ph[CRED_PLACEHOLDER_LEN] = '\0';
			placeholder = arena_strdup(a, ph);
			for (size_t k = 0; k < cr->env.n && rc == 0; k++)
				rc = add_env(&pp, what, cr->env.v[k].s, placeholder);
		}
		if (cr->username.s) {
			user = cr->username.s;
			for (const char *c = user; *c; c++)
				if ((unsigned char)*c < 0x20 || *c == 0x7f || *c == ':')
					rc = diag_fail(
					    err, errlen,
					    "%s: the username may not hold ':' or control "
					    "bytes",
					    what);
		}
		for (size_t t = 0; t < cr->n_targets && rc == 0; t++) {
			const struct cred_target *tg = &cr->targets[t];

			struct proxy_cred *pc;

			rc = bind_host(&pp, what, tg->host, tg->port, tg->scheme,
				       tg->scheme == CRED_SCHEME_BASIC
					   ? (user ? user : "x-access-token")
					   : NULL,
				       secret, placeholder);
			if (rc < 0)
				break;
			pc = &out->creds[out->n_creds - 1];
			pc->header = cr->header.s;
			pc->entry = (unsigned)i;
			/* The proxy reads it again: the path as it is now ("~" expanded). */
			if (cr->refresh_interval.present && cr->refresh_interval.value &&
			    (cr->source_kind == CRED_SOURCE_FILE ||
			     cr->source_kind == CRED_SOURCE_UNIX_SOCKET)) {
				pc->refresh = (unsigned)cr->refresh_interval.value;
				pc->source.kind = cr->source_kind;
				pc->source.path = expand_home(a, cr->source.s, home);
			}
		}
	}
	/* Every aws_sigv4 host knows the sandbox's token placeholder, made by
	 * whichever entry came first with a token (a host without one drops it). */
	for (size_t i = 0; i < out->n_creds; i++)
		if (out->creds[i].aws)
			((struct proxy_aws *)out->creds[i].aws)->token_placeholder =
			    pp.aws_token_ph;
	egress_matcher_free(pp.m);
	if (rc < 0)
		cred_runtime_wipe(out);
	return rc;
}

static void
wipe(const char *s)
{
	if (s)
		explicit_bzero((char *)s, strlen(s));
}

void
cred_runtime_wipe(struct cred_runtime *rt)
{
	for (size_t i = 0; i < rt->n_creds; i++) {
		wipe(rt->creds[i].secret);
		if (rt->creds[i].aws) {
			wipe(rt->creds[i].aws->key_id);
			wipe(rt->creds[i].aws->token);
		}
	}
}

int
cred_write_files(const struct cred_runtime *rt, const char *dir, char *err, size_t errlen)
{
	for (size_t i = 0; i < rt->n_files; i++) {
		const struct cred_file *f = &rt->files[i];
		char path[4096];
		int fd;
		size_t off = 0;

		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, f->name) >= sizeof(path))
			return diag_fail(err, errlen, "%s/%s: path too long", dir, f->name);
		/* O_EXCL|O_NOFOLLOW: never write through something already there. */
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, f->mode);
		if (fd < 0)
			return diag_fail(err, errlen, "%s: %s", path, strerror(errno));
		while (off < f->len) {
			ssize_t w = write(fd, f->content + off, f->len - off);

			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0) {
				close(fd);
				return diag_fail(err, errlen, "%s: %s", path, strerror(errno));
			}
			off += (size_t)w;
		}
		if (fchmod(fd, f->mode) < 0 || close(fd) < 0)
			return diag_fail(err, errlen, "%s: %s", path, strerror(errno));
	}
	return 0;
}
