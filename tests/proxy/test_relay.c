/*
 * test_relay.c - the in-sandbox relay (runtime/relay.c) against a Unix
 * socket echo server: bytes both ways, half-close in both directions, a
 * large transfer intact, a fast answer followed by a hang-up intact, a
 * reset ends both sides, and thousands of idle
 * connections at a small cost per connection.
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
	cr_assert_lt((after - before) * 1024 / N, 1024, "%ld bytes per idle connection",
		     (after - before) * 1024 / N);
	for (int i = 0; i < N; i++)
		close(fds[i]);
	close(fd);
}
