/*
 * omnibox-proxy.c - the egress proxy on its own, from a compiled table.
 *
 *   omnibox-proxy --table FILE --listen ADDR:PORT --ca-cert FILE --ca-key FILE
 *                 [--placeholders DIR] [--system-ca FILE] [--hosts FILE]
 *                 [--resolv FILE] [--memory BYTES]
 *   omnibox-proxy --table FILE --print-placeholders
 *   omnibox-proxy --session FD [--log-fd FD]
 *
 * It compiles no YAML: the table (omnibox-compile --emit=egress-table) is
 * read back into the parts of a policy the proxy needs (table.h), the real
 * secrets are read from the sources it names exactly as omnibox-run reads
 * them (cred_prepare(): this process's environment and files), and the
 * placeholders are the ones the agent was given: one file per sandbox
 * variable in --placeholders DIR.  The interception CA is fixed (a PEM
 * certificate and key, e.g. a Kubernetes TLS Secret).  One line per
 * decision on stderr; "ready PORT" on stdout once listening; SIGUSR1 logs
 * the counters; SIGTERM and SIGINT stop it.  Usage errors exit 2, anything
 * that cannot be set up 1, with nothing listening.
 *
 * --session is omnibox-run's proxy (session.h): everything, the prepared
 * credentials included, comes over the socket FD from omnibox-run, which
 * started this process; it listens on a Unix socket in the launch's
 * scratch dir, writes the trust bundle there, logs to --log-fd and ends
 * with omnibox-run.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netdb.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include <event2/event.h>

#include "compiler/base/diag.h"
#include "compiler/base/fileio.h"
#include "compiler/base/textbuf.h"
#include "compiler/base/textesc.h"
#include "runtime/egress/credentials.h"
#include "runtime/egress/proxy.h"
#include "runtime/egress/session.h"
#include "runtime/egress/table.h"
#include "runtime/egress/tls.h"

extern char **environ;

static const char usage_text[] =
    "usage: omnibox-proxy --table FILE --listen ADDR:PORT --ca-cert FILE --ca-key FILE\n"
    "                     [--placeholders DIR] [--system-ca FILE] [--hosts FILE]\n"
    "                     [--resolv FILE] [--memory BYTES]\n"
    "       omnibox-proxy --table FILE --print-placeholders\n"
    "       omnibox-proxy --session FD [--log-fd FD]   (started by omnibox-run)\n"
    "\n"
    "The egress proxy of an omnibox policy, on its own: it enforces the table\n"
    "`omnibox-compile --emit=egress-table` wrote, and compiles no YAML.\n"
    "\n"
    "  --table FILE         the compiled egress table\n"
    "  --listen ADDR:PORT   listen on TCP (a numeric address; [ADDR]:PORT for IPv6;\n"
    "                       port 0: any free one)\n"
    "  --ca-cert FILE       the interception CA's certificate (PEM; e.g. tls.crt)\n"
    "  --ca-key FILE        its private key (PEM, not encrypted; e.g. tls.key)\n"
    "  --placeholders DIR   one file per sandbox variable the table's credentials\n"
    "                       give a placeholder to, holding exactly that placeholder\n"
    "                       (oa_cred_ and 32 of [A-Za-z0-9])\n"
    "  --system-ca FILE     the CAs upstream servers are verified against\n"
    "                       (default /etc/ssl/certs/ca-certificates.crt)\n"
    "  --hosts FILE         resolve names through FILE first (default /etc/hosts)\n"
    "  --resolv FILE        the nameservers to ask (default /etc/resolv.conf)\n"
    "  --memory BYTES       the proxy's memory cap (default 256 MiB, at least 32 MiB)\n"
    "  --print-placeholders print a fresh NAME=VALUE line for every placeholder the\n"
    "                       table needs (for kubectl create secret generic\n"
    "                       --from-env-file), and exit\n"
    "  --help               this text\n"
    "\n"
    "Secrets are read from the sources the table names, in this process's environment\n"
    "and files.  Prints \"ready PORT\" on standard output once listening, one line per\n"
    "decision on standard error; SIGUSR1 logs the counters, SIGTERM and SIGINT stop it.\n"
    "Exit status: 0 when stopped, 1 when it cannot start (nothing listens), 2 on a\n"
    "usage error.\n";

struct opts {
	const char *table, *ca_cert, *ca_key, *placeholders, *system_ca, *hosts, *resolv;
	struct sockaddr_storage listen;
	socklen_t listen_len;
	unsigned long long memory;
	bool print;
	int session, log_fd; /* --session, --log-fd: -1 when not given */
};

struct state {
	struct event_base *base;
	struct proxy *proxy;
};

static void __attribute__((noreturn, format(printf, 1, 2))) usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("omnibox-proxy: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\n(omnibox-proxy --help tells more)\n", stderr);
	exit(2);
}

/* S escaped for a message (it comes from the command line or a file). */
static const char *
shown(struct arena *a, const char *s)
{
	return arena_escape(a, s);
}

/* "ADDR:PORT" or "[ADDR]:PORT", numeric, into O->listen. */
static void
parse_listen(struct arena *a, const char *s, struct opts *o)
{
	const char *colon = strrchr(s, ':'), *host = s, *port;
	struct addrinfo hints = {0}, *res = NULL;
	size_t hl;
	char *h;

	if (!colon || !colon[1])
		usage_error("--listen %s: not ADDR:PORT", shown(a, s));
	port = colon + 1;
	hl = (size_t)(colon - s);
	if (*s == '[') {
		if (hl < 2 || s[hl - 1] != ']')
			usage_error("--listen %s: not [ADDR]:PORT", shown(a, s));
		host = s + 1;
		hl -= 2;
	}
	if (strspn(port, "0123456789") != strlen(port) || strlen(port) > 5 || atoi(port) > 65535)
		usage_error("--listen %s: the port is not a number from 0 to 65535", shown(a, s));
	h = arena_strndup(a, host, hl);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE;
	if (getaddrinfo(h, port, &hints, &res) != 0 || !res || res->ai_addrlen > sizeof(o->listen))
		usage_error("--listen %s: '%s' is not a numeric IPv4 or IPv6 address", shown(a, s),
			    shown(a, h));
	memcpy(&o->listen, res->ai_addr, res->ai_addrlen);
	o->listen_len = res->ai_addrlen;
	freeaddrinfo(res);
}

static void
parse_args(struct arena *a, int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
	    {"table", required_argument, NULL, 't'},
	    {"listen", required_argument, NULL, 'l'},
	    {"ca-cert", required_argument, NULL, 'c'},
	    {"ca-key", required_argument, NULL, 'k'},
	    {"placeholders", required_argument, NULL, 'p'},
	    {"system-ca", required_argument, NULL, 's'},
	    {"hosts", required_argument, NULL, 'H'},
	    {"resolv", required_argument, NULL, 'r'},
	    {"memory", required_argument, NULL, 'm'},
	    {"print-placeholders", no_argument, NULL, 'P'},
	    {"session", required_argument, NULL, 'S'},
	    {"log-fd", required_argument, NULL, 'L'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	bool listen = false;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 't':
			o->table = optarg;
			break;
		case 'l':
			parse_listen(a, optarg, o);
			listen = true;
			break;
		case 'c':
			o->ca_cert = optarg;
			break;
		case 'k':
			o->ca_key = optarg;
			break;
		case 'p':
			o->placeholders = optarg;
			break;
		case 's':
			o->system_ca = optarg;
			break;
		case 'H':
			o->hosts = optarg;
			break;
		case 'r':
			o->resolv = optarg;
			break;
		case 'P':
			o->print = true;
			break;
		case 'm': {
			char *end;

			errno = 0;
			o->memory = strtoull(optarg, &end, 10);
			if (errno || *end || end == optarg || *optarg == '-')
				usage_error("--memory %s: not a number of bytes", shown(a, optarg));
			break;
		}
		case 'S':
		case 'L': {
			char *end;
			long fd;

			errno = 0;
			fd = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || fd < 0 || fd > 65535)
				usage_error("--%s %s: not a descriptor",
					    c == 'S' ? "session" : "log-fd", shown(a, optarg));
			*(c == 'S' ? &o->session : &o->log_fd) = (int)fd;
			break;
		}
		case 'h':
			fputs(usage_text, stdout);
			exit(0);
		default:
			usage_error("unknown option or missing value: %s",
				    shown(a, argv[optind - 1]));
		}
	}
	if (optind != argc)
		usage_error("unexpected argument: %s", shown(a, argv[optind]));
	if (o->session >= 0) {
		if (o->table || listen || o->print || o->ca_cert || o->ca_key || o->placeholders)
			usage_error("--session takes everything from omnibox-run: only --log-fd "
				    "goes with it");
		return;
	}
	if (o->log_fd >= 0)
		usage_error("--log-fd goes with --session only");
	if (!o->table)
		usage_error("--table FILE is needed");
	if (o->print)
		return;
	if (!listen || !o->ca_cert || !o->ca_key)
		usage_error("%s is needed", !listen	  ? "--listen ADDR:PORT"
					    : !o->ca_cert ? "--ca-cert FILE"
							  : "--ca-key FILE");
}

/* Is S exactly a placeholder: "oa_cred_" and CRED_RANDOM_LEN of [A-Za-z0-9]? */
static bool
well_formed(const char *s, size_t len)
{
	if (len != CRED_PLACEHOLDER_LEN || memcmp(s, CRED_PREFIX, CRED_PREFIX_LEN))
		return false;
	for (size_t i = CRED_PREFIX_LEN; i < len; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9')))
			return false;
	return true;
}

/* DIR/NAME's placeholder (a Secret volume's file: links are followed), or NULL with ERR. */
static const char *
read_placeholder(struct arena *a, const char *dir, const char *name, char *err, size_t errlen)
{
	const char *path = arena_printf(a, "%s/%s", dir, name);
	struct textbuf tb = {0};
	const char *ph;
	int rc;

	if (!dir) {
		diag_fail(err, errlen,
			  "the table gives a placeholder to %s, and there is no --placeholders DIR",
			  name);
		return NULL;
	}
	rc = file_read(path, &tb, 4096);
	if (rc < 0) {
		diag_fail(err, errlen, "placeholder %s: %s: %s", name, shown(a, path),
			  rc == -ENOENT ? "missing (every placeholder the table needs has a file)"
					: strerror(-rc));
		tb_free(&tb);
		return NULL;
	}
	if (!well_formed(tb.data ? tb.data : "", tb.len)) {
		diag_fail(err, errlen,
			  "placeholder %s: %s does not hold exactly a placeholder (oa_cred_ and "
			  "%d of [A-Za-z0-9], no line break)",
			  name, shown(a, path), CRED_RANDOM_LEN);
		tb_free(&tb);
		return NULL;
	}
	ph = arena_strndup(a, tb.data, tb.len);
	tb_free(&tb);
	return ph;
}

/* The agreed placeholder for FRESH (what cred_prepare made), via the variables it went to. */
struct ph_map {
	const char *fresh, *agreed, *name;
};

/*
 * cred_prepare() made fresh placeholders; the agent holds the ones in DIR.
 * Put DIR's in their place, by the sandbox variable each was given to.
 */
static int
agree_placeholders(struct arena *a, struct cred_runtime *rt, const char *dir, char *err,
		   size_t errlen)
{
	struct ph_map *m = arena_alloc(a, (rt->n_env + 1) * sizeof(*m));
	size_t n = 0;

	for (size_t i = 0; i < rt->n_env; i++) {
		const char *eq = strchr(rt->env[i], '=');
		const char *name = arena_strndup(a, rt->env[i], (size_t)(eq - rt->env[i]));
		const char *agreed = read_placeholder(a, dir, name, err, errlen);
		size_t k;

		if (!agreed)
			return -1;
		for (k = 0; k < n && strcmp(m[k].fresh, eq + 1); k++)
			;
		if (k < n && strcmp(m[k].agreed, agreed))
			return diag_fail(err, errlen,
					 "placeholders %s and %s differ, and one credential gives "
					 "both the same",
					 m[k].name, name);
		if (k == n)
			m[n++] = (struct ph_map){eq + 1, agreed, name};
	}
	for (size_t i = 0; i < rt->n_creds; i++) {
		struct proxy_cred *c = &rt->creds[i];
		struct proxy_aws *aws = (struct proxy_aws *)c->aws;
		const char **slots[] = {&c->placeholder, aws ? &aws->key_id_placeholder : NULL,
					aws ? &aws->token_placeholder : NULL};

		for (size_t s = 0; s < 3; s++) {
			size_t k;

			if (!slots[s] || !*slots[s])
				continue;
			for (k = 0; k < n && strcmp(m[k].fresh, *slots[s]) &&
				    strcmp(m[k].agreed, *slots[s]);
			     k++)
				;
			if (k == n)
				return diag_fail(err, errlen,
						 "credential for %s: a placeholder no sandbox "
						 "variable holds",
						 c->host);
			*slots[s] = m[k].agreed;
		}
	}
	return 0;
}

/* The non-AWS credential of SB whose placeholder goes to NAME, or -1. */
static ssize_t
cred_of(const struct sandbox *sb, const char *name)
{
	for (size_t c = 0; c < sb->n_creds; c++)
		for (size_t k = 0; sb->creds[c].type != CRED_AWS_SIGV4 && k < sb->creds[c].env.n;
		     k++)
			if (!strcmp(sb->creds[c].env.v[k].s, name))
				return (ssize_t)c;
	return -1;
}

/*
 * --print-placeholders: a fresh one for every variable the table needs;
 * the variables of one entry (gh_basic's GH_TOKEN and GITHUB_TOKEN) share
 * theirs, as in a sandbox.
 */
static int
print_placeholders(struct arena *a, const struct sandbox *sb)
{
	const char **names;
	size_t n = egress_table_placeholder_names(a, sb, &names);
	char **ph = arena_alloc(a, (n + 1) * sizeof(*ph));

	for (size_t i = 0; i < n; i++) {
		ssize_t c = cred_of(sb, names[i]);

		for (size_t j = 0; c >= 0 && j < i && !ph[i]; j++)
			if (cred_of(sb, names[j]) == c)
				ph[i] = ph[j];
		if (!ph[i]) {
			ph[i] = arena_alloc(a, CRED_PLACEHOLDER_LEN + 1);
			if (cred_make_placeholder(ph[i]) < 0) {
				fprintf(stderr, "omnibox-proxy: getrandom: %s\n", strerror(errno));
				return 1;
			}
		}
		printf("%s=%s\n", names[i], ph[i]);
	}
	return fflush(stdout) == 0 ? 0 : 1;
}

static void
log_line(void *arg, const char *line)
{
	(void)arg;
	fprintf(stderr, "omnibox-proxy: %s\n", line);
}

static void
on_signal(evutil_socket_t sig, short what, void *arg)
{
	struct state *st = arg;

	(void)what;
	if (sig == SIGUSR1) {
		struct proxy_stats s;

		proxy_get_stats(st->proxy, &s);
		fprintf(stderr,
			"omnibox-proxy: stats connections=%lu open=%lu requests=%lu denied=%lu "
			"dns_lookups=%lu refused=%lu evicted=%lu timed_out=%lu memory=%zu "
			"memory_peak=%zu memory_limit=%zu max_conns=%zu\n",
			s.connections, s.open, s.requests, s.denied, s.dns_lookups, s.refused,
			s.evicted, s.timed_out, s.memory, s.memory_peak, s.memory_limit,
			s.max_conns);
		return;
	}
	event_base_loopexit(st->base, NULL);
}

/* Read and check the table; NULL (with a message printed) when it is not usable. */
static const struct sandbox *
load_table(struct arena *a, const char *path, bool print)
{
	struct textbuf src = {0};
	struct policy *p;
	char err[2048];
	int rc = file_read(path, &src, FILE_READ_MAX);

	if (rc < 0) {
		fprintf(stderr, "omnibox-proxy: %s: %s\n", shown(a, path), strerror(-rc));
		return NULL;
	}
	p = egress_table_parse(a, path, src.data ? src.data : "", src.len, err, sizeof(err));
	tb_free(&src);
	if (!p) {
		fprintf(stderr, "omnibox-proxy: %s\n", err);
		return NULL;
	}
	for (size_t i = 0; !print && i < p->os_env.sandbox.n_creds; i++)
		if (p->os_env.sandbox.creds[i].type == CRED_DATABRICKS_CLI) {
			fprintf(
			    stderr,
			    "omnibox-proxy: %s: the databricks_cli credential of line %u is not "
			    "served here: its hosts come from a ~/.databrickscfg omnibox-run reads "
			    "and rewrites for the sandbox\n",
			    shown(a, path), p->os_env.sandbox.creds[i].loc.line);
			return NULL;
		}
	return &p->os_env.sandbox;
}

/* Serve until SIGTERM or SIGINT. */
static int
serve(struct arena *a, const struct opts *o, const struct sandbox *sb)
{
	const char *home = getenv("HOME");
	struct cred_runtime rt = {0};
	struct proxy_config cf = {0};
	struct state st = {0};
	struct event *sigs[3];
	char err[4096];

	if (cred_prepare(a, sb, environ, home && *home ? home : "/", "/", &rt, err, sizeof(err)) <
		0 ||
	    agree_placeholders(a, &rt, o->placeholders, err, sizeof(err)) < 0) {
		cred_runtime_wipe(&rt);
		fprintf(stderr, "omnibox-proxy: %s\n", err);
		return 1;
	}
	cf.listen_addr = (const struct sockaddr *)&o->listen;
	cf.listen_addr_len = o->listen_len;
	cf.ca_cert_file = o->ca_cert;
	cf.ca_key_file = o->ca_key;
	cf.system_ca_file = o->system_ca;
	cf.rules = sb->egress;
	cf.n_rules = sb->n_egress;
	cf.allow_private = sb->egress_allow_private.value;
	cf.creds = rt.creds;
	cf.n_creds = rt.n_creds;
	cf.hosts_file = o->hosts;
	cf.resolv_conf = o->resolv;
	cf.log = log_line;
	cf.memory_limit = (size_t)o->memory;
	st.base = event_base_new();
	if (!st.base) {
		fprintf(stderr, "omnibox-proxy: event_base_new failed\n");
		return 1;
	}
	st.proxy = proxy_new(st.base, &cf, err, sizeof(err));
	/* The proxy copied the secrets; the prepared ones are not needed any more. */
	cred_runtime_wipe(&rt);
	if (!st.proxy) {
		fprintf(stderr, "omnibox-proxy: %s\n", err);
		event_base_free(st.base);
		return 1;
	}
	sigs[0] = evsignal_new(st.base, SIGTERM, on_signal, &st);
	sigs[1] = evsignal_new(st.base, SIGINT, on_signal, &st);
	sigs[2] = evsignal_new(st.base, SIGUSR1, on_signal, &st);
	for (int i = 0; i < 3; i++)
		event_add(sigs[i], NULL);
	printf("ready %u\n", proxy_port(st.proxy));
	fflush(stdout);
	event_base_dispatch(st.base);
	for (int i = 0; i < 3; i++)
		event_free(sigs[i]);
	proxy_free(st.proxy);
	event_base_free(st.base);
	return 0;
}

/* ---- omnibox-run's proxy (--session) ------------------------------------------ */

/* Where omnibox-run's proxy logs: its egress log, and refusals on stderr under -v. */
struct session_log {
	int fd; /* -1: nowhere (-q without --egress-log) */
	bool verbose;
};

/* All of LEN bytes at P to FD, as one write when it can (the log is appended to by others). */
static void
write_line(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t w = write(fd, p, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		p += w;
		len -= (size_t)w;
	}
}

static void
session_log_line(void *arg, const char *line)
{
	const struct session_log *log = arg;
	struct textbuf tb = {0};

	if (log->fd < 0)
		return;
	tb_puts(&tb, "omnibox-egress: ");
	tb_puts(&tb, line);
	tb_putc(&tb, '\n');
	if (tb.data)
		write_line(log->fd, tb.data, tb.len);
	tb_free(&tb);
	if (log->verbose && log->fd != STDERR_FILENO && strstr(line, " deny ")) {
		struct termios t;
		/* The user's terminal in raw mode (an interactive launch): lines
		 * return the carriage too. */
		bool raw = isatty(STDERR_FILENO) && tcgetattr(STDERR_FILENO, &t) == 0 &&
			   !(t.c_oflag & OPOST);

		tb_puts(&tb, "omnibox-egress: ");
		tb_escape(&tb, line, TEXT_ESC_AGAIN | TEXT_ESC_LINES);
		tb_puts(&tb, raw ? "\r\n" : "\n");
		if (tb.data)
			write_line(STDERR_FILENO, tb.data, tb.len);
		tb_free(&tb);
	}
}

static void
on_session_end(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	/* omnibox-run shut its end down (done), or is gone: either way, stop. */
	event_base_loopbreak(arg);
}

/* The configuration omnibox-run sent on FD, read into C (in A); 0, or -1 with ERR. */
static int
session_config_read(struct arena *a, int fd, struct session_config *c, char *err, size_t errlen)
{
	unsigned char *data;
	size_t len;
	int r = session_recv(fd, &data, &len), rc;

	if (r <= 0)
		return diag_fail(err, errlen, "no configuration from omnibox-run: %s",
				 r < 0 ? strerror(errno) : "the end of the stream");
	rc = session_decode_config(a, data, len, c, err, errlen);
	explicit_bzero(data, len);
	free(data);
	return rc;
}

/* The answer to omnibox-run: ready, or MSG. */
static void
session_answer(int fd, const char *msg)
{
	struct session_buf b = {0};

	if (session_encode_status(&b, msg) == 0)
		(void)session_send(fd, &b);
	session_buf_free(&b);
}

/* What P refused, to omnibox-run's summary at exit. */
static void
session_report(struct session_buf *b, const struct proxy *p)
{
	struct session_summary s = {0};

	s.private_refusals = proxy_private_refusals(p, &s.private_first);
	s.n_denials = proxy_denials(p, &s.denials, &s.others);
	if (session_encode_summary(b, &s) < 0)
		session_buf_free(b);
}

/*
 * omnibox-run's proxy: configured over O->session, listening on the
 * launch's Unix socket until omnibox-run shuts its end down or dies (the
 * end of the stream; PR_SET_PDEATHSIG, set before the exec, kills it too).
 * Returns 1 when it cannot start; once it served, it ends the process.
 */
static int
serve_session(struct arena *a, const struct opts *o)
{
	struct session_config c;
	struct session_log log = {o->log_fd, false};
	struct state st = {0};
	struct event *end = NULL, *term = NULL;
	struct session_buf report = {0};
	char err[4096];
	int fd = o->session;

	fcntl(fd, F_SETFD, FD_CLOEXEC);
	if (o->log_fd >= 0)
		fcntl(o->log_fd, F_SETFD, FD_CLOEXEC);
	/*
	 * omnibox-run starts this process while it resolves the launch, and
	 * sends the configuration after: what needs none is done meanwhile,
	 * the system's CAs read beside OpenSSL's start.  That start is CPU
	 * work of some milliseconds, and the sandbox is set up meanwhile: on
	 * a machine of few CPUs the scheduler puts bwrap's new child on this
	 * process's CPU and it waits out this process's time slice (2.5 ms
	 * measured on two), though the sandbox is what the launch waits for
	 * (this process answers some 2 ms before it is set up).  So between
	 * its steps the start lets a process waiting for this CPU run first.
	 */
	proxy_prefetch_cas();
	sched_yield();
	tls_prewarm();
	sched_yield();
	if (session_config_read(a, fd, &c, err, sizeof(err)) < 0) {
		proxy_prefetch_drop();
		session_answer(fd, err);
		return 1;
	}
	if (c.flags & SESSION_QUIET)
		log.fd = -1;
	log.verbose = (c.flags & SESSION_VERBOSE) != 0;
	c.pc.log = session_log_line;
	c.pc.log_arg = &log;
	st.base = event_base_new();
	if (!st.base) {
		proxy_prefetch_drop();
		session_wipe_creds(c.pc.creds, c.pc.n_creds);
		session_answer(fd, "cannot create the event loop");
		return 1;
	}
	st.proxy = proxy_new(st.base, &c.pc, err, sizeof(err));
	proxy_prefetch_drop(); /* when proxy_new() did not take it */
	/* The proxy copied the secrets; the decoded ones go now. */
	session_wipe_creds(c.pc.creds, c.pc.n_creds);
	if (st.proxy) {
		end = event_new(st.base, fd, EV_READ, on_session_end, st.base);
		term = evsignal_new(st.base, SIGTERM, on_signal, &st);
		if (!end || !term || event_add(end, NULL) < 0 || event_add(term, NULL) < 0) {
			snprintf(err, sizeof(err), "cannot watch omnibox-run");
			proxy_free(st.proxy);
			st.proxy = NULL;
		}
	}
	if (!st.proxy) {
		session_answer(fd, err);
		if (end)
			event_free(end);
		if (term)
			event_free(term);
		event_base_free(st.base);
		return 1;
	}
	session_answer(fd, NULL);
	event_base_dispatch(st.base);
	session_report(&report, st.proxy);
	proxy_stop(st.proxy); /* its last log line; its sockets removed */
	/* The report last: once omnibox-run has it, nothing of this process
	 * is left to see, and it ends without waiting for the exit.  What is
	 * left (the connections, the trust store, OpenSSL, the event loop,
	 * the arena) the kernel undoes faster than freeing it would. */
	fflush(NULL);
	if (report.data)
		(void)session_send(fd, &report);
	session_buf_free(&report);
	_exit(0);
}

int
main(int argc, char **argv)
{
	struct arena *a;
	struct opts o = {0};
	const struct sandbox *sb;
	struct rlimit rl;
	int rc;

	proxy_memory_init();
	tls_library_init();
	a = arena_new();
	o.session = o.log_fd = -1;
	parse_args(a, argc, argv, &o);
	signal(SIGPIPE, SIG_IGN);
	/* Many tunnels need more descriptors than the usual soft limit. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (o.session >= 0) {
		rc = serve_session(a, &o);
		arena_free(a);
		return rc;
	}
	sb = load_table(a, o.table, o.print);
	if (!sb)
		rc = 1;
	else
		rc = o.print ? print_placeholders(a, sb) : serve(a, &o, sb);
	arena_free(a);
	return rc;
}
