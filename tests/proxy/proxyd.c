/*
 * proxyd.c - the egress proxy and its relay on loopback, without a sandbox.
 *
 *   proxyd POLICY.yaml --dir DIR [--system-ca FILE] [--hosts FILE] [--resolv FILE]
 *          [--port N] [--home DIR] [--memory BYTES]
 *
 * Does what omnibox-run does around the proxy: compiles the policy with
 * policy_compile(), prepares the credentials (real secrets from the
 * environment, files or commands; placeholders for DIR/cred.env and the
 * files in DIR), starts proxy_new() on a libevent loop with its socket at
 * DIR/proxy.sock and the CA bundle at DIR/ca.pem, then forks the relay
 * (relay_listen() first, so it is ready) on 127.0.0.1:N (0: any port) and
 * prints "ready PORT".  Decisions go to stderr, one line each.  SIGUSR1
 * logs the counters; SIGTERM stops everything.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <event2/event.h>

#include "compiler/base/fileio.h"
#include "compiler/policy.h"
#include "runtime/egress/credentials.h"
#include "runtime/egress/proxy.h"
#include "runtime/egress/handoff.h"
#include "runtime/egress/relay.h"

extern char **environ;

struct state {
	struct event_base *base;
	struct proxy *proxy;
	pid_t relay;
};

static void
log_line(void *arg, const char *line)
{
	(void)arg;
	fprintf(stderr, "proxy: %s\n", line);
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
			"proxy: stats connections=%lu open=%lu requests=%lu denied=%lu "
			"dns_lookups=%lu refused=%lu evicted=%lu timed_out=%lu memory=%zu "
			"memory_peak=%zu memory_limit=%zu max_conns=%zu\n",
			s.connections, s.open, s.requests, s.denied, s.dns_lookups, s.refused,
			s.evicted, s.timed_out, s.memory, s.memory_peak, s.memory_limit,
			s.max_conns);
		return;
	}
	event_base_loopexit(st->base, NULL);
}

static void
usage(void)
{
	fputs("usage: proxyd POLICY.yaml --dir DIR [--system-ca FILE] [--hosts FILE] "
	      "[--resolv FILE] [--port N] [--home DIR]\n",
	      stderr);
	exit(2);
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"dir", required_argument, NULL, 'd'},    {"system-ca", required_argument, NULL, 'c'},
	    {"hosts", required_argument, NULL, 'h'},  {"resolv", required_argument, NULL, 'r'},
	    {"port", required_argument, NULL, 'p'},   {"home", required_argument, NULL, 'H'},
	    {"memory", required_argument, NULL, 'm'}, {NULL, 0, NULL, 0},
	};
	const char *dir = NULL, *system_ca = NULL, *hosts = NULL, *resolv = NULL;
	const char *home = getenv("HOME");
	unsigned long long memory = 0;
	struct textbuf src = {0};
	struct arena *a = arena_new();
	struct diag d;
	struct policy *pol;
	const struct sandbox *sb;
	struct cred_runtime rt = {0};
	struct proxy_config cf = {0};
	struct state st = {0};
	struct event *sigs[3];
	struct rlimit rl;
	char err[4096], *sock, *bundle;
	unsigned long port = 0;
	int c, lfd, rc;
	FILE *envf;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			dir = optarg;
			break;
		case 'c':
			system_ca = optarg;
			break;
		case 'h':
			hosts = optarg;
			break;
		case 'r':
			resolv = optarg;
			break;
		case 'p':
			port = strtoul(optarg, NULL, 10);
			break;
		case 'H':
			home = optarg;
			break;
		case 'm':
			memory = strtoull(optarg, NULL, 10);
			break;
		default:
			usage();
		}
	}
	if (optind != argc - 1 || !dir)
		usage();
	proxy_memory_init();
	signal(SIGPIPE, SIG_IGN);
	/* 10,000 tunnels need more descriptors than the usual soft limit. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}

	rc = file_read(argv[optind], &src, FILE_READ_MAX);
	if (rc < 0) {
		fprintf(stderr, "proxyd: %s: %s\n", argv[optind], strerror(-rc));
		return 1;
	}
	diag_init(&d, a, argv[optind], src.data ? src.data : "", src.len);
	pol = policy_compile(a, &d, argv[optind], src.data ? src.data : "", src.len);
	diag_print(&d, stderr, true);
	if (!pol)
		return 1;
	sb = &pol->os_env.sandbox;

	if (cred_prepare(a, sb, environ, home ? home : "/", dir, &rt, err, sizeof(err)) < 0 ||
	    cred_write_files(&rt, dir, err, sizeof(err)) < 0) {
		fprintf(stderr, "proxyd: %s\n", err);
		return 1;
	}
	/* What the sandbox's environment would receive: placeholders and paths only. */
	envf = fopen(arena_printf(a, "%s/cred.env", dir), "we");
	if (!envf) {
		fprintf(stderr, "proxyd: %s/cred.env: %s\n", dir, strerror(errno));
		return 1;
	}
	for (size_t i = 0; i < rt.n_env; i++)
		fprintf(envf, "%s\n", rt.env[i]);
	fclose(envf);

	sock = arena_printf(a, "%s/proxy.sock", dir);
	bundle = arena_printf(a, "%s/ca.pem", dir);
	cf.socket_path = sock;
	cf.ca_bundle_path = bundle;
	cf.system_ca_file = system_ca;
	cf.rules = sb->egress;
	cf.n_rules = sb->n_egress;
	cf.allow_private = sb->egress_allow_private.value;
	cf.creds = rt.creds;
	cf.n_creds = rt.n_creds;
	cf.hosts_file = hosts;
	cf.resolv_conf = resolv;
	cf.log = log_line;
	cf.memory_limit = (size_t)memory;

	st.base = event_base_new();
	if (!st.base) {
		fprintf(stderr, "proxyd: event_base_new failed\n");
		return 1;
	}
	st.proxy = proxy_new(st.base, &cf, err, sizeof(err));
	/* The proxy copied the secrets; the prepared ones are not needed any more. */
	cred_runtime_wipe(&rt);
	if (!st.proxy) {
		fprintf(stderr, "proxyd: %s\n", err);
		return 1;
	}

	lfd = relay_listen((uint16_t)port, err, sizeof(err));
	if (lfd < 0) {
		fprintf(stderr, "proxyd: %s\n", err);
		return 1;
	}
	port = relay_port(lfd);
	st.relay = fork();
	if (st.relay < 0) {
		fprintf(stderr, "proxyd: fork: %s\n", strerror(errno));
		return 1;
	}
	if (st.relay == 0) {
		/* As omnibox-init starts it: the hand-off socket taken, its path gone. */
		struct relay_conf conf = {.listen_fd = lfd, .socket_path = sock, .dns_fd = -1};

		conf.handoff_fd = handoff_take(sock);
		conf.handoff = conf.handoff_fd >= 0;
		relay_serve_conf(&conf);
	}
	close(lfd);

	sigs[0] = evsignal_new(st.base, SIGTERM, on_signal, &st);
	sigs[1] = evsignal_new(st.base, SIGINT, on_signal, &st);
	sigs[2] = evsignal_new(st.base, SIGUSR1, on_signal, &st);
	for (int i = 0; i < 3; i++)
		event_add(sigs[i], NULL);
	printf("ready %lu\n", port);
	fflush(stdout);
	event_base_dispatch(st.base);

	kill(st.relay, SIGTERM);
	waitpid(st.relay, NULL, 0);
	for (int i = 0; i < 3; i++)
		event_free(sigs[i]);
	proxy_free(st.proxy);
	event_base_free(st.base);
	tb_free(&src);
	arena_free(a);
	return 0;
}
