/*
 * request.c - the git_ssh helper's request (broker.h): its message, git's
 * ssh command line, the entry that allows it, the addresses it may reach,
 * and the system ssh's command line; pure, and tested alone.
 */
#include "runtime/gitssh/broker.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "compiler/base/diag.h"
#include "compiler/base/textesc.h"
#include "runtime/egress/destination.h"
#include "runtime/gitssh/gitssh_int.h"

/* ---- the request message ------------------------------------------------------- */

/* The NUL-terminated field at *AT of BUF/LEN, or NULL while it is incomplete. */
static const char *
field(const char *buf, size_t len, size_t *at)
{
	const char *s = buf + *at, *nul = *at < len ? memchr(s, '\0', len - *at) : NULL;

	if (!nul)
		return NULL;
	*at += (size_t)(nul - s) + 1;
	return s;
}

int
gitssh_decode(const char *buf, size_t len, struct gitssh_wire *w, const char **why)
{
	size_t at = 0, magic = sizeof(GITSSH_MAGIC);
	const char *count, *s;
	char *end;
	long argc;

	*why = NULL;
	/* A stranger is turned away at its first wrong byte, not after 8 KiB. */
	if (memcmp(buf, GITSSH_MAGIC, len < magic ? len : magic) != 0) {
		*why = "not a git_ssh request";
		return -1;
	}
	if (len < magic)
		return 0;
	at = magic;
	if (!(w->token = field(buf, len, &at)) || !(w->git_protocol = field(buf, len, &at)) ||
	    !(count = field(buf, len, &at)))
		goto partial;
	errno = 0;
	argc = strtol(count, &end, 10);
	if (*end || end == count || errno || argc < 0 || argc > GITSSH_MAX_ARGS ||
	    (count[0] == '0' && count[1])) {
		*why = "a malformed request";
		return -1;
	}
	w->argc = (int)argc;
	for (int i = 0; i < w->argc; i++) {
		if (!(s = field(buf, len, &at)))
			goto partial;
		w->argv[i] = s;
	}
	w->len = at;
	return 1;
partial:
	if (len >= GITSSH_REQUEST_MAX) {
		*why = "a request over the size limit";
		return -1;
	}
	return 0;
}

bool
gitssh_token_equal(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned char diff = la != lb;

	/* The lengths are no secret; the digits are. */
	for (size_t i = 0; i < la && i < lb; i++)
		diff |= (unsigned char)(a[i] ^ b[i]);
	return diff == 0;
}

/* ---- git's ssh command line ---------------------------------------------------- */

static bool
name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '.' || c == '_' || c == '-';
}

static int
parse_port(const char *s, unsigned *port)
{
	unsigned v = 0;
	size_t n = strlen(s);

	if (n == 0 || n > 5)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	if (v == 0 || v > 65535)
		return -1;
	*port = v;
	return 0;
}

/* [USER@]HOST: user and host of the characters git_ssh allows, the host lower-cased. */
static int
parse_destination(const char *d, struct gitssh_request *rq, char *err, size_t errlen)
{
	const char *at = strrchr(d, '@'), *host = at ? at + 1 : d;
	size_t ulen = at ? (size_t)(at - d) : 0, hlen = strlen(host);

	if (at) {
		if (ulen == 0 || ulen > GITSSH_USER_MAX || d[0] == '-')
			return diag_fail(err, errlen, "'%s' is not a user name", shown(d).text);
		for (size_t i = 0; i < ulen; i++)
			if (!name_char(d[i]))
				return diag_fail(err, errlen, "'%s' is not a user name",
						 shown(d).text);
		memcpy(rq->user, d, ulen);
		rq->user[ulen] = '\0';
	}
	if (hlen == 0 || hlen > GITSSH_HOST_MAX || host[0] == '-' || host[0] == '.')
		return diag_fail(err, errlen, "'%s' is not a host name", shown(host).text);
	for (size_t i = 0; i < hlen; i++) {
		char c = host[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '-'))
			return diag_fail(err, errlen, "'%s' is not a host name", shown(host).text);
		rq->host[i] = c >= 'A' && c <= 'Z' ? (char)(c + 32) : c;
	}
	rq->host[hlen] = '\0';
	return 0;
}

/*
 * Undo git's sq_quote_buf(): 'a'\''b'\!'c' is a'b!c.  Nothing else is
 * read: no unquoted word, no other escape, nothing after the last quote.
 */
static int
sq_dequote(const char *s, char *out, size_t outlen)
{
	size_t n = 0;

	if (*s++ != '\'')
		return -1;
	for (;;) {
		for (; *s && *s != '\''; s++) {
			if (n + 1 >= outlen || (unsigned char)*s < 0x20 || *s == 0x7f)
				return -1;
			out[n++] = *s;
		}
		if (!*s++)
			return -1; /* no closing quote */
		if (!*s)
			break;
		if (s[0] != '\\' || (s[1] != '\'' && s[1] != '!') || s[2] != '\'' ||
		    n + 1 >= outlen)
			return -1;
		out[n++] = s[1];
		s += 3;
	}
	out[n] = '\0';
	return n ? 0 : -1;
}

static int
parse_command(const char *cmd, struct gitssh_request *rq, char *err, size_t errlen)
{
	static const struct {
		const char *name;
		unsigned op;
	} services[] = {{"git-upload-pack ", GIT_OP_FETCH}, {"git-receive-pack ", GIT_OP_PUSH}};
	const char *rest = NULL;
	size_t word = strcspn(cmd, " \t");
	char first[32];

	for (size_t i = 0; i < sizeof(services) / sizeof(services[0]) && !rest; i++)
		if (!strncmp(cmd, services[i].name, strlen(services[i].name))) {
			rest = cmd + strlen(services[i].name);
			rq->op = services[i].op;
		}
	if (!rest) {
		snprintf(first, sizeof(first), "%.*s", (int)(word < 31 ? word : 31), cmd);
		return diag_fail(
		    err, errlen,
		    "only git-upload-pack (fetch) and git-receive-pack (push) run through "
		    "git_ssh, not '%s'",
		    shown(first).text);
	}
	if (sq_dequote(rest, rq->path, sizeof(rq->path)) < 0)
		return diag_fail(err, errlen,
				 "the repository must be one word quoted as git quotes it, not %s",
				 shown(rest).text);
	return 0;
}

int
gitssh_parse_argv(int argc, const char *const *argv, struct gitssh_request *rq, char *err,
		  size_t errlen)
{
	bool send_env = false, port = false;
	int i;

	memset(rq, 0, sizeof(*rq));
	rq->port = 22;
	rq->family = AF_UNSPEC;
	for (i = 0; i < argc && argv[i][0] == '-'; i++) {
		const char *o = argv[i];

		if (!strcmp(o, "-o") && i + 1 < argc &&
		    !strcmp(argv[i + 1], "SendEnv=GIT_PROTOCOL") && !send_env) {
			send_env = true;
			i++;
		} else if (!strcmp(o, "-p") && i + 1 < argc && !port) {
			if (parse_port(argv[++i], &rq->port) < 0)
				return diag_fail(err, errlen, "'%s' is not a port",
						 shown(argv[i]).text);
			port = true;
		} else if ((!strcmp(o, "-4") || !strcmp(o, "-6")) && rq->family == AF_UNSPEC) {
			rq->family = o[1] == '4' ? AF_INET : AF_INET6;
		} else {
			return diag_fail(err, errlen,
					 "ssh option '%s' is not one git passes (only -o "
					 "SendEnv=GIT_PROTOCOL, -p PORT, -4 and -6, once each)",
					 shown(o).text);
		}
	}
	if (i == argc)
		return diag_fail(err, errlen, "no host given");
	if (i + 1 == argc)
		return diag_fail(err, errlen,
				 "no command given: git_ssh runs git's fetch and push, "
				 "never a login");
	if (i + 2 < argc)
		return diag_fail(err, errlen,
				 "'%s' after the command: git passes the command as one argument",
				 shown(argv[i + 2]).text);
	if (parse_destination(argv[i], rq, err, errlen) < 0)
		return -1;
	return parse_command(argv[i + 1], rq, err, errlen);
}

/* ---- which entry allows it ----------------------------------------------------- */

/* R without a final ".git" (git and the servers read "x" as "x.git"). */
static size_t
stem(const char *r)
{
	size_t len = strlen(r);

	return len > 4 && !strcmp(r + len - 4, ".git") ? len - 4 : len;
}

static bool
same_repository(const char *bound, const char *asked)
{
	size_t a, b;

	if (*asked == '/')
		asked++;
	a = stem(bound);
	b = stem(asked);
	return a == b && !memcmp(bound, asked, a);
}

int
gitssh_match(const struct git_ssh *b, size_t n, const struct gitssh_request *rq, char *err,
	     size_t errlen)
{
	bool host = false, user = false;

	for (size_t i = 0; i < n; i++) {
		if (strcmp(b[i].host.s, rq->host) || b[i].port != rq->port)
			continue;
		host = true;
		if (rq->user[0] && strcmp(b[i].username.s, rq->user))
			continue;
		user = true;
		if (!same_repository(b[i].repository.s, rq->path))
			continue;
		if (!(b[i].operations & rq->op))
			return diag_fail(
			    err, errlen,
			    "%s of %s on %s:%u is not allowed (git_ssh at line %u allows "
			    "%s only)",
			    op_name(rq->op), shown(rq->path).text, shown(rq->host).text, rq->port,
			    b[i].loc.line, op_name(b[i].operations));
		return (int)i;
	}
	if (!host)
		return diag_fail(err, errlen, "no git_ssh entry names host %s, port %u",
				 shown(rq->host).text, rq->port);
	if (!user)
		return diag_fail(err, errlen, "no git_ssh entry for %s:%u names user %s",
				 shown(rq->host).text, rq->port, shown(rq->user).text);
	return diag_fail(err, errlen, "no git_ssh entry for %s:%u names repository %s",
			 shown(rq->host).text, rq->port, shown(rq->path).text);
}

/* ---- addresses ------------------------------------------------------------------ */

/* Is the IPv4 address V (host order) inside CIDR ("a.b.c.d/n", the compiler's form)? */
static bool
in_cidr(uint32_t v, const char *cidr)
{
	const char *slash = strchr(cidr, '/');
	char net[INET_ADDRSTRLEN];
	struct in_addr a;
	unsigned bits;
	uint32_t mask;

	if (!slash || (size_t)(slash - cidr) >= sizeof(net))
		return false;
	memcpy(net, cidr, (size_t)(slash - cidr));
	net[slash - cidr] = '\0';
	bits = (unsigned)strtoul(slash + 1, NULL, 10);
	if (inet_pton(AF_INET, net, &a) != 1 || bits > 32)
		return false;
	mask = bits ? ~(uint32_t)0 << (32 - bits) : 0;
	return (v & mask) == (ntohl(a.s_addr) & mask);
}

static bool
is_loopback(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return ntohl(((const struct sockaddr_in *)(const void *)sa)->sin_addr.s_addr) >>
			   24 ==
		       127;
	if (sa->sa_family == AF_INET6) {
		const struct in6_addr *a =
		    &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;

		return IN6_IS_ADDR_LOOPBACK(a) ||
		       (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
	}
	return false;
}

/*
 * Is WHY, a reason of the deny table, the range of an address no listed
 * block opens: link-local and the metadata services, "this network"
 * (0.0.0.0 reaches the host itself), multicast, reserved, broadcast?  Told
 * by the table's own ranges (its reasons are one string per range), so
 * there is one classification, destination.c's.
 */
static bool
never_opened(const char *why)
{
	static const uint32_t samples[] = {
	    0xa9fea9fe, /* 169.254.169.254 */
	    0xa83f8110, /* 168.63.129.16 */
	    0x00000000, /* 0.0.0.0 */
	    0xe0000001, /* 224.0.0.1 */
	    0xf0000001, /* 240.0.0.1 */
	    0xffffffff, /* 255.255.255.255 */
	};

	for (size_t i = 0; i < sizeof(samples) / sizeof(samples[0]); i++) {
		struct in_addr a = {.s_addr = htonl(samples[i])};

		if (why == dest_blocked_ipv4(&a))
			return true;
	}
	return false;
}

const char *
gitssh_address_refused(const struct git_ssh *b, const struct sockaddr *sa)
{
	const char *why;

	if (b->allowed_cidrs.n) {
		bool in = false;

		if (sa->sa_family != AF_INET)
			return "not an IPv4 address, and allowed_cidrs lists IPv4 blocks only";
		for (size_t i = 0; i < b->allowed_cidrs.n && !in; i++)
			in = in_cidr(
			    ntohl(((const struct sockaddr_in *)(const void *)sa)->sin_addr.s_addr),
			    b->allowed_cidrs.v[i].s);
		if (!in)
			return "outside allowed_cidrs";
	}
	why = dest_blocked_reason(sa);
	if (!why)
		return NULL;
	if (is_loopback(sa))
		return b->allow_loopback.value ? NULL : why;
	/* A private block listed is the policy's explicit choice. */
	if (b->allowed_cidrs.n && !never_opened(why))
		return NULL;
	return why;
}

bool
gitssh_git_protocol_ok(const char *v)
{
	return !strcmp(v, "version=0") || !strcmp(v, "version=1") || !strcmp(v, "version=2");
}

/* ---- the ssh command line -------------------------------------------------------- */

/* A string for OUT's argv, made in its store; NULL when full. */
static const char *make(struct gitssh_argv *out, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static const char *
make(struct gitssh_argv *out, const char *fmt, ...)
{
	va_list ap;
	char *s = out->store + out->used;
	size_t room = sizeof(out->store) - out->used;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(s, room, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= room)
		return NULL;
	out->used += (size_t)n + 1;
	return s;
}

static bool
push(struct gitssh_argv *out, const char *s)
{
	if (!s || out->n + 1 >= sizeof(out->v) / sizeof(out->v[0]))
		return false;
	out->v[out->n++] = s;
	out->v[out->n] = NULL;
	return true;
}

int
gitssh_ssh_argv(struct gitssh_argv *out, const char *ssh, const struct git_ssh *b,
		const struct gitssh_request *rq, const char *ip, const char *identity,
		const char *known_hosts, bool send_env)
{
	/*
	 * -F /dev/null: no configuration of the user's or the system's (no
	 * Include, Match exec, ProxyCommand, LocalCommand, ControlMaster, ...),
	 * and each default that could reach beyond this one connection said
	 * again, in case a build changed it.  The remote command is built
	 * here, from the entry's own repository: nothing git sent is repeated
	 * but the choice of service and whether the path began with '/'.
	 */
	/* clang-format off */
	static const char *const fixed[] = {
	    "-F", "/dev/null", "-T", "-x", "-a", "-e", "none",
	    "-o", "BatchMode=yes",
	    "-o", "StrictHostKeyChecking=yes",
	    "-o", "GlobalKnownHostsFile=/dev/null",
	    "-o", "CheckHostIP=no",
	    "-o", "UpdateHostKeys=no",
	    "-o", "VerifyHostKeyDNS=no",
	    "-o", "IdentitiesOnly=yes",
	    "-o", "IdentityAgent=none",
	    "-o", "AddKeysToAgent=no",
	    "-o", "PasswordAuthentication=no",
	    "-o", "KbdInteractiveAuthentication=no",
	    "-o", "GSSAPIAuthentication=no",
	    "-o", "HostbasedAuthentication=no",
	    "-o", "EnableSSHKeysign=no",
	    "-o", "PreferredAuthentications=publickey",
	    "-o", "ForwardAgent=no",
	    "-o", "ForwardX11=no",
	    "-o", "ClearAllForwardings=yes",
	    "-o", "Tunnel=no",
	    "-o", "PermitLocalCommand=no",
	    "-o", "ProxyCommand=none",
	    "-o", "ProxyJump=none",
	    "-o", "ControlMaster=no",
	    "-o", "ControlPath=none",
	    "-o", "CanonicalizeHostname=no",
	    "-o", "ConnectionAttempts=1",
	    "-o", "ServerAliveInterval=15",
	    "-o", "ServerAliveCountMax=4",
	    "-o", "RequestTTY=no",
	    "-o", "LogLevel=ERROR",
	};
	/* clang-format on */
	bool ok;

	out->n = 0;
	out->used = 0;
	ok = push(out, ssh);
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		ok = ok && push(out, fixed[i]);
	ok = ok && push(out, "-o") &&
	     push(out, make(out, "ConnectTimeout=%d", GITSSH_CONNECT_SECONDS)) && push(out, "-o") &&
	     push(out, make(out, "UserKnownHostsFile=%s", known_hosts));
	/* The host key is looked up under the policy's name, as known_hosts
	 * spells it (with a port other than 22, "[host]:port"), whatever
	 * address the name was pinned to. */
	ok = ok && push(out, "-o") &&
	     push(out, b->port == 22 ? make(out, "HostKeyAlias=%s", b->host.s)
				     : make(out, "HostKeyAlias=[%s]:%u", b->host.s, b->port));
	/* Without an identity no key at all: never the user's default ones. */
	if (identity)
		ok = ok && push(out, "-o") && push(out, make(out, "IdentityFile=%s", identity));
	else
		ok = ok && push(out, "-o") && push(out, "IdentityFile=/dev/null") &&
		     push(out, "-o") && push(out, "PubkeyAuthentication=no");
	if (send_env)
		ok = ok && push(out, "-o") && push(out, "SendEnv=GIT_PROTOCOL");
	ok = ok && push(out, "-p") && push(out, make(out, "%u", b->port)) && push(out, "-l") &&
	     push(out, b->username.s) && push(out, "--") && push(out, ip) &&
	     push(out, make(out, "%s '%s%s'",
			    rq->op == GIT_OP_PUSH ? "git-receive-pack" : "git-upload-pack",
			    rq->path[0] == '/' ? "/" : "", b->repository.s));
	return ok ? 0 : -1;
}

/* ---- launch-side helpers ------------------------------------------------------------ */

int
gitssh_new_token(char token[GITSSH_TOKEN_LEN + 1])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char r[GITSSH_TOKEN_LEN / 2];

	if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
		return -1;
	for (size_t i = 0; i < sizeof(r); i++) {
		token[2 * i] = hex[r[i] >> 4];
		token[2 * i + 1] = hex[r[i] & 15];
	}
	token[GITSSH_TOKEN_LEN] = '\0';
	return 0;
}

char **
gitssh_env_add(struct arena *a, char *const *env, size_t *n, const char *token)
{
	char **v = arena_alloc(a, (*n + 1) * sizeof(*v));

	if (*n)
		memcpy(v, env, *n * sizeof(*v));
	v[(*n)++] = arena_printf(a, "%s=%s", GITSSH_ENV_TOKEN, token);
	return v;
}
