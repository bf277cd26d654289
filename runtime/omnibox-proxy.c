/*
 * omnibox-proxy.c - the egress proxy on its own, from a compiled table.
 *
 *   omnibox-proxy --table FILE --listen ADDR:PORT --ca-cert FILE --ca-key FILE
 *                 [--placeholders DIR] [--system-ca FILE] [--hosts FILE]
 *                 [--resolv FILE] [--memory BYTES]
 *   omnibox-proxy --table FILE --print-placeholders
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
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netdb.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event2/event.h>

#include "compiler/base/fileio.h"
#include "compiler/base/textesc.h"
#include "runtime/egress/credentials.h"
#include "runtime/egress/proxy.h"
#include "runtime/egress/table.h"

extern char **environ;

static const char usage_text[] =
    "usage: omnibox-proxy --table FILE --listen ADDR:PORT --ca-cert FILE --ca-key FILE\n"
    "                     [--placeholders DIR] [--system-ca FILE] [--hosts FILE]\n"
    "                     [--resolv FILE] [--memory BYTES]\n"
    "       omnibox-proxy --table FILE --print-placeholders\n"
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

int
main(int argc, char **argv)
{
	struct arena *a;
	struct opts o = {0};
	const struct sandbox *sb;
	struct rlimit rl;
	int rc;

	proxy_memory_init();
	a = arena_new();
	parse_args(a, argc, argv, &o);
	signal(SIGPIPE, SIG_IGN);
	/* Many tunnels need more descriptors than the usual soft limit. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	sb = load_table(a, o.table, o.print);
	if (!sb)
		rc = 1;
	else
		rc = o.print ? print_placeholders(a, sb) : serve(a, &o, sb);
	arena_free(a);
	return rc;
}
