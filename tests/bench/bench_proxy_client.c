/*
 * bench_proxy_client.c - the client side of tests/bench/bench_proxy.sh.
 *
 *   bench_proxy_client get   [--proxy P] [--tls CA] HOST PORT PATH
 *   bench_proxy_client latency [--proxy P] [--tls CA] [-n N] HOST PORT PATH
 *   bench_proxy_client idle  --proxy P --tls CA [-n N] HOST PORT PATH
 *
 * P is the proxy's "127.0.0.1:PORT" (or "unix:PATH"); without --proxy the
 * client talks to HOST:PORT directly (to ADDR:PORT with --connect ADDR,
 * still naming HOST in SNI and Host).  With --tls the connection to the
 * server is TLS (through the proxy: CONNECT, then TLS inside the tunnel),
 * verified against CA; without it, plain HTTP (absolute-form through the
 * proxy).
 *
 *   get      one GET, the body read and thrown away with a 256 KiB buffer;
 *            prints "bytes N seconds S MBps R"
 *   latency  N GETs one after another on one kept-alive connection; prints
 *            "p50_us A p99_us B"
 *   idle     opens N tunnels (CONNECT, TLS handshake, one request each; none
 *            with --no-request), prints "held N", then one more request on
 *            a fresh tunnel, prints "new-request ok", and waits until stdin
 *            closes
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

struct conn {
	int fd;
	SSL *ssl;
	char buf[262144];
	size_t off, len;
};

static const char *proxy, *ca, *host, *port, *path, *connect_to;
static bool no_request;
static SSL_CTX *ctx;

static double
now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void
die(const char *what)
{
	fprintf(stderr, "bench_proxy_client: %s\n", what);
	ERR_print_errors_fp(stderr);
	exit(1);
}

static int
dial(const char *addr)
{
	int fd, one = 1;

	if (!strncmp(addr, "unix:", 5)) {
		struct sockaddr_un sun = {.sun_family = AF_UNIX};

		snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", addr + 5);
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0 || connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0)
			die("connect (unix)");
		return fd;
	}
	{
		char h[256];
		const char *colon = strrchr(addr, ':');
		struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res;

		if (!colon || (size_t)(colon - addr) >= sizeof(h))
			die("bad address");
		memcpy(h, addr, (size_t)(colon - addr));
		h[colon - addr] = '\0';
		if (getaddrinfo(h, colon + 1, &hints, &res) != 0)
			die("getaddrinfo");
		fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0 || connect(fd, res->ai_addr, res->ai_addrlen) < 0)
			die("connect");
		freeaddrinfo(res);
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

static void
xsend(struct conn *c, const char *s, size_t n)
{
	while (n) {
		ssize_t w = c->ssl ? SSL_write(c->ssl, s, (int)n) : send(c->fd, s, n, MSG_NOSIGNAL);

		if (w <= 0)
			die("send");
		s += w;
		n -= (size_t)w;
	}
}

static bool
fill(struct conn *c)
{
	ssize_t r;

	if (c->off < c->len)
		return true;
	r = c->ssl ? SSL_read(c->ssl, c->buf, sizeof(c->buf))
		   : recv(c->fd, c->buf, sizeof(c->buf), 0);
	if (r <= 0)
		return false;
	c->off = 0;
	c->len = (size_t)r;
	return true;
}

/* The head, up to the blank line; returns the status, sets *length (-1: none). */
static int
read_head(struct conn *c, long long *length)
{
	char line[8192];
	size_t n = 0;
	int status = 0, lines = 0;

	*length = -1;
	for (;;) {
		char ch;

		if (!fill(c))
			die("connection closed in a head");
		ch = c->buf[c->off++];
		if (ch != '\n') {
			if (n + 1 < sizeof(line))
				line[n++] = ch;
			continue;
		}
		if (n && line[n - 1] == '\r')
			n--;
		line[n] = '\0';
		if (n == 0)
			return status;
		if (lines++ == 0)
			sscanf(line, "HTTP/1.%*d %d", &status);
		else if (!strncasecmp(line, "content-length:", 15))
			*length = atoll(line + 15);
		else if (!strncasecmp(line, "transfer-encoding: chunked", 26))
			*length = -2; /* a scrubbed body is re-framed as chunks */
		n = 0;
	}
}

static long long read_body(struct conn *c, long long length);

/* A chunked body: its data bytes (the framing is skipped). */
static long long
read_chunked(struct conn *c)
{
	long long got = 0;

	for (;;) {
		char line[64];
		size_t n = 0;
		long long size;

		for (;;) {
			char ch;

			if (!fill(c))
				die("connection closed in a chunk size");
			ch = c->buf[c->off++];
			if (ch == '\n')
				break;
			if (n + 1 < sizeof(line))
				line[n++] = ch;
		}
		line[n] = '\0';
		size = strtoll(line, NULL, 16);
		if (size == 0) {
			read_body(c, 2); /* the empty trailer's CRLF */
			return got;
		}
		got += read_body(c, size);
		read_body(c, 2);
	}
}

static long long
read_body(struct conn *c, long long length)
{
	long long got = 0;

	if (length == -2)
		return read_chunked(c);
	while (got < length) {
		size_t k;

		if (!fill(c))
			die("connection closed in a body");
		k = c->len - c->off;
		if ((long long)k > length - got)
			k = (size_t)(length - got);
		c->off += k;
		got += (long long)k;
	}
	return got;
}

static struct conn *
open_conn(void)
{
	struct conn *c = calloc(1, sizeof(*c));
	char req[1024];
	char target[300];

	snprintf(target, sizeof(target), "%s:%s", host, port);
	if (proxy) {
		c->fd = dial(proxy);
	} else {
		char direct[300];

		snprintf(direct, sizeof(direct), "%s:%s", connect_to ? connect_to : host, port);
		c->fd = dial(direct);
	}
	if (proxy && ca) {
		long long len;
		int n = snprintf(req, sizeof(req), "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n",
				 target, target);

		xsend(c, req, (size_t)n);
		if (read_head(c, &len) != 200)
			die("CONNECT refused");
	}
	if (ca) {
		struct in_addr v4;

		c->ssl = SSL_new(ctx);
		SSL_set_fd(c->ssl, c->fd);
		if (inet_pton(AF_INET, host, &v4) == 1) {
			X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(c->ssl), host);
		} else {
			SSL_set_tlsext_host_name(c->ssl, host);
			SSL_set1_host(c->ssl, host);
		}
		if (SSL_connect(c->ssl) != 1)
			die("TLS handshake");
	}
	return c;
}

static int
request(struct conn *c, long long *body)
{
	char req[1024];
	long long len;
	int n, status;

	if (proxy && !ca)
		n = snprintf(req, sizeof(req), "GET http://%s:%s%s HTTP/1.1\r\nHost: %s:%s\r\n\r\n",
			     host, port, path, host, port);
	else
		n = snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: %s:%s\r\n\r\n", path, host,
			     port);
	xsend(c, req, (size_t)n);
	status = read_head(c, &len);
	if (len == -1)
		die("no Content-Length");
	*body = read_body(c, len);
	return status;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int
main(int argc, char **argv)
{
	const char *mode;
	long n = 1000;
	int i = 2;

	if (argc < 2)
		die("usage: see the comment at the top of bench_proxy_client.c");
	mode = argv[1];
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--proxy") && i + 1 < argc)
			proxy = argv[++i];
		else if (!strcmp(argv[i], "--tls") && i + 1 < argc)
			ca = argv[++i];
		else if (!strcmp(argv[i], "--no-request"))
			no_request = true;
		else if (!strcmp(argv[i], "--connect") && i + 1 < argc)
			connect_to = argv[++i];
		else if (!strcmp(argv[i], "-n") && i + 1 < argc)
			n = atol(argv[++i]);
		else
			die("unknown option");
	}
	if (argc - i != 3)
		die("need HOST PORT PATH");
	host = argv[i];
	port = argv[i + 1];
	path = argv[i + 2];
	if (ca) {
		ctx = SSL_CTX_new(TLS_client_method());
		if (!ctx || SSL_CTX_load_verify_locations(ctx, ca, NULL) != 1)
			die("CA file");
		SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
		SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
	}
	if (!strcmp(mode, "get")) {
		struct conn *c = open_conn();
		long long body;
		double t0 = now(), dt;

		if (request(c, &body) != 200)
			die("status");
		dt = now() - t0;
		printf("bytes %lld seconds %.3f MBps %.1f\n", body, dt, (double)body / dt / 1e6);
		return 0;
	}
	if (!strcmp(mode, "latency")) {
		struct conn *c = open_conn();
		double *t = calloc((size_t)n, sizeof(*t));
		long long body;

		for (long k = 0; k < 50; k++)
			request(c, &body); /* warm up */
		for (long k = 0; k < n; k++) {
			double t0 = now();

			if (request(c, &body) != 200)
				die("status");
			t[k] = (now() - t0) * 1e6;
		}
		qsort(t, (size_t)n, sizeof(*t), cmp_double);
		printf("p50_us %.1f p99_us %.1f\n", t[n / 2], t[n * 99 / 100]);
		return 0;
	}
	if (!strcmp(mode, "idle")) {
		struct rlimit rl;
		struct conn **cs = calloc((size_t)n, sizeof(*cs)), *c;
		long long body;
		char sink[64];

		if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
			rl.rlim_cur = rl.rlim_max;
			setrlimit(RLIMIT_NOFILE, &rl);
		}
		for (long k = 0; k < n; k++) {
			cs[k] = open_conn();
			if (!no_request && request(cs[k], &body) != 200)
				die("status");
			/* Keep the socket, drop the big buffer: the client is not what is measured.
			 */
			cs[k] = realloc(cs[k], offsetof(struct conn, buf));
		}
		printf("held %ld\n", n);
		fflush(stdout);
		c = open_conn();
		if (request(c, &body) != 200)
			die("status");
		printf("new-request ok\n");
		fflush(stdout);
		while (read(0, sink, sizeof(sink)) > 0)
			;
		return 0;
	}
	die("unknown mode");
}
