/*
 * test_relay.c - the in-sandbox relay (runtime/relay.c) against a Unix
 * socket echo server: bytes both ways, half-close in both directions, a
 * large transfer intact, a fast answer followed by a hang-up intact, a
 * reset ends both sides, and thousands of idle
 * connections at a small cost per connection; and transparent egress: the
 * DNS socket giving fake addresses, a connection to one reaching the proxy
 * behind the CONNECT preamble, and one to any other address never reaching it.
 *
 * The relay runs in a forked child, as omnibox-init will run it; with
 * OMNIBOX_TEST_RELAY_POLL set, on its poll(2) loop (the one macOS uses).
 */
#include <criterion/criterion.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/egress/relay.h"

static char dir[64], sock_path[128];
static int server_fd;
static pid_t relay_pid;
static uint16_t port;

/* The echo server: what comes in goes back; EOF in means EOF out. */
static void *
echo_conn(void *arg)
{
	int fd = (int)(long)arg;
	char buf[65536];
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		if (n == 5 && !memcmp(buf, "BLAST", 5)) {
			/* 8 MiB as fast as it goes, then hang up entirely. */
			memset(buf, 'b', sizeof(buf));
			for (int k = 0; k < 128; k++)
				if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
					break;
			goto out;
		}
		/* Exactly "CLOSE": a short read of other data may start with "C". */
		if (n == 5 && !memcmp(buf, "CLOSE", 5)) {
			/* Say something, then hang up entirely. */
			(void)!write(fd, "bye", 3);
			break;
		}
		for (ssize_t w = 0; w < n;) {
			ssize_t k = write(fd, buf + w, (size_t)(n - w));

			if (k <= 0)
				goto out;
			w += k;
		}
	}
	shutdown(fd, SHUT_WR);
	while (read(fd, buf, sizeof(buf)) > 0)
		;
out:
	close(fd);
	return NULL;
}

static void *
echo_main(void *arg)
{
	pthread_attr_t attr;

	(void)arg;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 128 * 1024);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	for (;;) {
		int fd = accept(server_fd, NULL, NULL);
		pthread_t t;

		if (fd < 0)
			continue;
		if (pthread_create(&t, &attr, echo_conn, (void *)(long)fd) != 0)
			close(fd);
	}
	return NULL;
}

static void
setup(void)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	struct rlimit rl;
	char err[256];
	pthread_t t;
	int lfd;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	signal(SIGPIPE, SIG_IGN);
	strcpy(dir, "/tmp/omnibox-relay-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	snprintf(sock_path, sizeof(sock_path), "%s/proxy.sock", dir);
	strcpy(sun.sun_path, sock_path);
	server_fd = socket(AF_UNIX, SOCK_STREAM, 0);
	cr_assert_eq(bind(server_fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	cr_assert_eq(listen(server_fd, 4096), 0);
	pthread_create(&t, NULL, echo_main, NULL);
	lfd = relay_listen(0, err, sizeof(err));
	cr_assert_geq(lfd, 0, "%s", err);
	port = relay_port(lfd);
	cr_assert_gt(port, 0);
	relay_pid = fork();
	if (relay_pid == 0) {
		/* make check runs the suite twice: epoll, then the portable loop. */
		if (getenv("OMNIBOX_TEST_RELAY_POLL"))
			relay_use_poll();
		relay_serve(lfd, sock_path);
	}
	close(lfd);
}

static void
teardown(void)
{
	kill(relay_pid, SIGKILL);
	waitpid(relay_pid, NULL, 0);
	unlink(sock_path);
	rmdir(dir);
}

TestSuite(relay, .init = setup, .fini = teardown, .timeout = 60);

static int
dial(void)
{
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(port)};
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	cr_assert_eq(connect(fd, (struct sockaddr *)&sin, sizeof(sin)), 0, "%s", strerror(errno));
	return fd;
}

static size_t
read_all(int fd, char *buf, size_t cap)
{
	size_t n = 0;
	ssize_t r;

	while (n < cap && (r = read(fd, buf + n, cap - n)) > 0)
		n += (size_t)r;
	return n;
}

Test(relay, bytes_go_both_ways_and_eof_travels_after_them)
{
	int fd = dial();
	char buf[64] = {0};

	cr_assert_eq(write(fd, "hello", 5), 5);
	shutdown(fd, SHUT_WR);
	cr_assert_eq(read_all(fd, buf, sizeof(buf)), 5, "the echo, then EOF");
	cr_assert_str_eq(buf, "hello");
	close(fd);
}

Test(relay, the_server_hanging_up_reaches_the_client_after_its_last_bytes)
{
	int fd = dial();
	char buf[64] = {0};

	cr_assert_eq(write(fd, "CLOSE", 5), 5);
	cr_assert_eq(read_all(fd, buf, sizeof(buf)), 3);
	cr_assert_str_eq(buf, "bye");
	close(fd);
}

Test(relay, a_large_transfer_arrives_intact)
{
	size_t len = 32u << 20, got = 0;
	char *out = malloc(len), *in = malloc(len);
	int fd = dial();
	pid_t writer;

	for (size_t i = 0; i < len; i++)
		out[i] = (char)(i * 2654435761u >> 13);
	writer = fork();
	if (writer == 0) {
		for (size_t w = 0; w < len;) {
			ssize_t k = write(fd, out + w, len - w);

			if (k <= 0)
				_exit(1);
			w += (size_t)k;
		}
		shutdown(fd, SHUT_WR);
		_exit(0);
	}
	got = read_all(fd, in, len + 1);
	waitpid(writer, NULL, 0);
	cr_assert_eq(got, len, "%zu of %zu bytes came back (errno: %s)", got, len, strerror(errno));
	cr_assert_eq(memcmp(in, out, len), 0);
	close(fd);
	free(in);
	free(out);
}

/* The proxy may answer and close at once while the client is slow: the
 * hang-up must wait for every byte already read from it. */
Test(relay, a_server_that_answers_and_hangs_up_loses_nothing)
{
	int fd = dial();
	size_t len = 128u * 65536, got;
	char *in = malloc(len + 1);

	cr_assert_eq(write(fd, "BLAST", 5), 5);
	usleep(300000); /* the client reads late: buffers fill, the server is gone */
	got = read_all(fd, in, len + 1);
	cr_assert_eq(got, len, "%zu of %zu bytes", got, len);
	for (size_t i = 0; i < len; i++)
		if (in[i] != 'b')
			cr_assert_fail("byte %zu is wrong", i);
	close(fd);
	free(in);
}

Test(relay, a_reset_ends_the_pair)
{
	int fd = dial();
	struct linger lg = {1, 0};
	int fd2;
	char buf[8];

	cr_assert_eq(write(fd, "x", 1), 1);
	cr_assert_eq(read(fd, buf, 1), 1);
	setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(fd); /* RST */
	/* The relay keeps serving others. */
	fd2 = dial();
	cr_assert_eq(write(fd2, "y", 1), 1);
	cr_assert_eq(read(fd2, buf, 1), 1);
	cr_assert_eq(buf[0], 'y');
	close(fd2);
}

static long
rss_kib(pid_t pid)
{
	char path[64], line[256];
	long kib = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	cr_assert_not_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

/* The relay's bound; AddressSanitizer's allocator (redzones, its quarantine)
 * adds its own to each connection's few allocations, and is measured too. */
#if defined(__SANITIZE_ADDRESS__)
#define IDLE_BOUND 2048
#else
#define IDLE_BOUND 1024
#endif

Test(relay, thousands_of_idle_connections_cost_little)
{
	enum { N = 3000 };
	static int fds[N];
	long before = rss_kib(relay_pid), after;
	int fd;
	char buf[8];

	for (int i = 0; i < N; i++) {
		fds[i] = dial();
		/* One round trip each: the pair exists on both sides. */
		cr_assert_eq(write(fds[i], "i", 1), 1);
		cr_assert_eq(read(fds[i], buf, 1), 1, "connection %d", i);
	}
	after = rss_kib(relay_pid);
	fd = dial();
	cr_assert_eq(write(fd, "z", 1), 1);
	cr_assert_eq(read(fd, buf, 1), 1);
	cr_assert_eq(buf[0], 'z');
	cr_log_info("relay RSS: %ld KiB before, %ld KiB with %d idle connections", before, after,
		    N);
	cr_assert_lt((after - before) * 1024 / N, IDLE_BOUND, "%ld bytes per idle connection",
		     (after - before) * 1024 / N);
	for (int i = 0; i < N; i++)
		close(fds[i]);
	close(fd);
}

/* ---- transparent egress: the DNS socket and the transparent listeners ----------- */

/*
 * A second relay: the proxy's listener, two transparent listeners on free
 * ports of 0.0.0.0 and the DNS socket on 127.0.0.1 (the sandbox's
 * 127.0.0.53:53 needs a privilege the tests do not have).  Behind it, a
 * recording proxy: it greets each connection, reads it to the end, sends
 * back everything it read, and hangs up; it counts its connections.
 */
static char t_dir[64], t_sock[128];
static int t_server;
static pid_t t_relay;
static uint16_t t_port[2], t_dns, t_proxy_port;
static _Atomic int t_conns;

#define GREETING "220 hello from the proxy\r\n"

static void *
record_conn(void *arg)
{
	int fd = (int)(long)arg;
	size_t cap = 64u << 20, len = 0;
	char *buf = malloc(cap);
	ssize_t n;

	(void)!write(fd, GREETING, strlen(GREETING));
	while (len < cap && (n = read(fd, buf + len, cap - len)) > 0)
		len += (size_t)n;
	for (size_t w = 0; w < len;) {
		n = write(fd, buf + w, len - w);
		if (n <= 0)
			break;
		w += (size_t)n;
	}
	close(fd);
	free(buf);
	return NULL;
}

static void *
record_main(void *arg)
{
	(void)arg;
	for (;;) {
		int fd = accept(t_server, NULL, NULL);
		pthread_t t;

		if (fd < 0)
			continue;
		t_conns++;
		if (pthread_create(&t, NULL, record_conn, (void *)(long)fd) != 0)
			close(fd);
		else
			pthread_detach(t);
	}
	return NULL;
}

static void
t_setup(void)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	char err[256];
	int lfd, tp[2], dfd;
	pthread_t t;

	signal(SIGPIPE, SIG_IGN);
	strcpy(t_dir, "/tmp/omnibox-relay-XXXXXX");
	cr_assert_not_null(mkdtemp(t_dir));
	snprintf(t_sock, sizeof(t_sock), "%s/proxy.sock", t_dir);
	strcpy(sun.sun_path, t_sock);
	t_server = socket(AF_UNIX, SOCK_STREAM, 0);
	cr_assert_eq(bind(t_server, (struct sockaddr *)&sun, sizeof(sun)), 0);
	cr_assert_eq(listen(t_server, 4096), 0);
	pthread_create(&t, NULL, record_main, NULL);
	lfd = relay_listen(0, err, sizeof(err));
	cr_assert_geq(lfd, 0, "%s", err);
	t_proxy_port = relay_port(lfd);
	for (int i = 0; i < 2; i++) {
		tp[i] = relay_listen_any(0, err, sizeof(err));
		cr_assert_geq(tp[i], 0, "%s", err);
		t_port[i] = relay_port(tp[i]);
		cr_assert_gt(t_port[i], 0);
	}
	dfd = relay_dns_listen(INADDR_LOOPBACK, 0, err, sizeof(err));
	cr_assert_geq(dfd, 0, "%s", err);
	t_dns = relay_port(dfd);
	cr_assert_gt(t_dns, 0);
	t_relay = fork();
	if (t_relay == 0) {
		struct relay_conf conf = {
		    .listen_fd = lfd, .socket_path = t_sock, .tp_fd = tp, .n_tp = 2, .dns_fd = dfd};

		if (getenv("OMNIBOX_TEST_RELAY_POLL"))
			relay_use_poll();
		relay_serve_conf(&conf);
	}
	close(lfd);
	close(tp[0]);
	close(tp[1]);
	close(dfd);
}

static void
t_teardown(void)
{
	kill(t_relay, SIGKILL);
	waitpid(t_relay, NULL, 0);
	unlink(t_sock);
	rmdir(t_dir);
}

TestSuite(transparent, .init = t_setup, .fini = t_teardown, .timeout = 60);

/*
 * Ask the relay's DNS socket for NAME (QTYPE): the address of the one A
 * record of the answer (host order), 0 when it has none; *RCODE the rcode.
 */
static uint32_t
resolve(const char *name, unsigned qtype, unsigned *rcode)
{
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(t_dns)};
	struct timeval tv = {.tv_sec = 5};
	unsigned char q[512], r[512];
	size_t off = 12;
	ssize_t n;
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	memset(q, 0, 12);
	q[0] = 0x4a;
	q[1] = 0x11;
	q[2] = 0x01;
	q[5] = 1;
	for (const char *s = name; *s;) {
		const char *dot = strchr(s, '.');
		size_t len = dot ? (size_t)(dot - s) : strlen(s);

		q[off++] = (unsigned char)len;
		memcpy(q + off, s, len);
		off += len;
		s += len + (dot ? 1 : 0);
	}
	q[off++] = 0;
	q[off++] = 0;
	q[off++] = (unsigned char)qtype;
	q[off++] = 0;
	q[off++] = 1;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	cr_assert_eq(sendto(fd, q, off, 0, (struct sockaddr *)&sin, sizeof(sin)), (ssize_t)off);
	n = recv(fd, r, sizeof(r), 0);
	close(fd);
	cr_assert_geq(n, 12, "an answer from the DNS socket (%s)", strerror(errno));
	cr_assert_eq(r[0], 0x4a, "the ID is the query's");
	cr_assert_eq(r[1], 0x11);
	*rcode = r[3] & 0x0fu;
	if (r[7] != 1)
		return 0;
	return (uint32_t)r[n - 4] << 24 | (uint32_t)r[n - 3] << 16 | (uint32_t)r[n - 2] << 8 |
	       r[n - 1];
}

/* A connection to ADDR:PORT (host order), or -1 with errno. */
static int
dial_to(uint32_t addr, uint16_t p)
{
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(p)};
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	sin.sin_addr.s_addr = htonl(addr);
	if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Send the LEN bytes of DATA on FD (from a child: the answer may be as large),
 * half-close, and read everything that comes back (malloc'd, *GOT bytes). */
static char *
exchange(int fd, const char *data, size_t len, size_t *got)
{
	size_t cap = len + 4096;
	char *in = malloc(cap + 1);
	pid_t writer = fork();

	if (writer == 0) {
		for (size_t w = 0; w < len;) {
			ssize_t k = write(fd, data + w, len - w);

			if (k <= 0)
				_exit(1);
			w += (size_t)k;
		}
		shutdown(fd, SHUT_WR);
		_exit(0);
	}
	*got = read_all(fd, in, cap);
	waitpid(writer, NULL, 0);
	in[*got] = '\0';
	return in;
}

static const char *
preamble(const char *name, uint16_t p)
{
	static char buf[1024];

	snprintf(buf, sizeof(buf),
		 "CONNECT %s:%u HTTP/1.1\r\nHost: %s:%u\r\nOmnibox-Transparent: 1\r\n\r\n", name, p,
		 name, p);
	return buf;
}

Test(transparent, a_name_s_fake_address_reaches_the_proxy_behind_the_preamble)
{
	unsigned rc;
	uint32_t a = resolve("API.Example.COM", 1, &rc), b;
	char want[2048];
	size_t got;
	char *in;
	int fd;

	cr_assert_eq(rc, 0);
	cr_assert_eq(a >> 16, 0x7f80u, "an address of 127.128.0.0/16: %08x", a);
	b = resolve("api.example.com.", 1, &rc);
	cr_assert_eq(a, b, "the same name, the same address");
	cr_assert_neq(resolve("other.example.com", 1, &rc), a);
	cr_assert_eq(resolve("api.example.com", 28, &rc), 0, "no AAAA record");
	cr_assert_eq(rc, 0);
	cr_assert_eq(resolve("bad_name.example.com", 1, &rc), 0);
	cr_assert_eq(rc, 3, "NXDOMAIN");

	for (int i = 0; i < 2; i++) {
		fd = dial_to(a, t_port[i]);
		cr_assert_geq(fd, 0, "%s", strerror(errno));
		in = exchange(fd, "GET / HTTP/1.1\r\n\r\n", 18, &got);
		snprintf(want, sizeof(want), "%s%sGET / HTTP/1.1\r\n\r\n", GREETING,
			 preamble("api.example.com", t_port[i]));
		cr_assert_str_eq(in, want, "port %u", t_port[i]);
		cr_assert_eq(got, strlen(want));
		close(fd);
		free(in);
	}
}

/* The client's bytes may all be there before the relay has written a thing:
 * the preamble still goes first, and a large stream (spliced) follows intact. */
Test(transparent, the_preamble_precedes_a_large_stream)
{
	size_t len = 8u << 20, got, plen;
	const char *pre;
	char *out = malloc(len), *in;
	unsigned rc;
	uint32_t a = resolve("bulk.example.org", 1, &rc);
	int fd;

	for (size_t i = 0; i < len; i++)
		out[i] = (char)(i * 2654435761u >> 13);
	fd = dial_to(a, t_port[1]);
	cr_assert_geq(fd, 0, "%s", strerror(errno));
	in = exchange(fd, out, len, &got);
	pre = preamble("bulk.example.org", t_port[1]);
	plen = strlen(pre);
	cr_assert_eq(got, strlen(GREETING) + plen + len, "%zu bytes", got);
	cr_assert_eq(memcmp(in, GREETING, strlen(GREETING)), 0);
	cr_assert_eq(memcmp(in + strlen(GREETING), pre, plen), 0);
	cr_assert_eq(memcmp(in + strlen(GREETING) + plen, out, len), 0);
	close(fd);
	free(in);
	free(out);
}

/* Accepted by the kernel, closed by the relay: and the proxy never heard of it. */
static void
closed_without_the_proxy(uint32_t addr, uint16_t p)
{
	int before = t_conns, fd = dial_to(addr, p);
	char buf[64];
	ssize_t n;

	cr_assert_geq(fd, 0, "%08x:%u: %s", addr, p, strerror(errno));
	(void)!write(fd, "GET / HTTP/1.1\r\n\r\n", 18);
	n = read(fd, buf, sizeof(buf));
	cr_assert_leq(n, 0, "%08x:%u: closed, nothing read", addr, p);
	close(fd);
	usleep(100000);
	cr_assert_eq(t_conns, before, "%08x:%u: no connection to the proxy", addr, p);
}

Test(transparent, an_address_that_names_nothing_never_reaches_the_proxy)
{
	unsigned rc;
	uint32_t a = resolve("known.example.net", 1, &rc);
	int fd;
	size_t got;
	char *in;

	closed_without_the_proxy(0x7f000001u, t_port[0]);
	closed_without_the_proxy(0x7f000001u, t_port[1]);
	closed_without_the_proxy(a + 1000, t_port[0]);
	closed_without_the_proxy(0x7f80ffffu, t_port[1]);
	closed_without_the_proxy(0x7f000035u, t_port[0]);
	/* The name's own address still goes through, and the proxy's own
	 * listener still sends no preamble. */
	fd = dial_to(a, t_port[0]);
	in = exchange(fd, "x", 1, &got);
	cr_assert_eq(got, strlen(GREETING) + strlen(preamble("known.example.net", t_port[0])) + 1);
	free(in);
	close(fd);
	fd = dial_to(0x7f000001u, t_proxy_port);
	cr_assert_geq(fd, 0);
	in = exchange(fd, "plain", 5, &got);
	cr_assert_str_eq(in, GREETING "plain");
	free(in);
	close(fd);
}
