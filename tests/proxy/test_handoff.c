/*
 * test_handoff.c - the relay hands each connection to the proxy
 * (runtime/egress/handoff.h): the connection itself arrives at the
 * hand-off socket, the relay keeps nothing of it (stopped, the bytes still
 * flow), a transparent connection carries its preamble, and the stream
 * socket is never dialled.  And the receiving end takes only what a client
 * could have sent: one connected stream socket and a bounded preamble;
 * anything else is closed and dropped.
 *
 * The relay runs in a forked child, as omnibox-init runs it; with
 * OMNIBOX_TEST_RELAY_POLL set, on its poll(2) loop.
 */
#include <criterion/criterion.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/egress/handoff.h"
#include "runtime/egress/relay.h"

static char dir[64], sock_path[128], ho_path[140];
static int stream_fd, ho_fd;
static pid_t relay_pid;
static uint16_t proxy_port, tp_port, dns_port;

static void
setup(void)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	char err[256];
	int lfd, tp, dfd;

	signal(SIGPIPE, SIG_IGN);
	strcpy(dir, "/tmp/omnibox-handoff-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	snprintf(sock_path, sizeof(sock_path), "%s/proxy.sock", dir);
	cr_assert_eq(handoff_path(sock_path, ho_path, sizeof(ho_path)), 0);
	strcpy(sun.sun_path, sock_path);
	/* The proxy's stream socket: with a hand-off socket beside it, never dialled. */
	stream_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
	cr_assert_eq(bind(stream_fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	cr_assert_eq(listen(stream_fd, 64), 0);
	ho_fd = handoff_listen(ho_path);
	cr_assert_geq(ho_fd, 0, "%s", strerror(errno));
	lfd = relay_listen(0, err, sizeof(err));
	cr_assert_geq(lfd, 0, "%s", err);
	proxy_port = relay_port(lfd);
	tp = relay_listen_any(0, err, sizeof(err));
	cr_assert_geq(tp, 0, "%s", err);
	tp_port = relay_port(tp);
	dfd = relay_dns_listen(INADDR_LOOPBACK, 0, err, sizeof(err));
	cr_assert_geq(dfd, 0, "%s", err);
	dns_port = relay_port(dfd);
	relay_pid = fork();
	if (relay_pid == 0) {
		struct relay_conf conf = {.listen_fd = lfd,
					  .socket_path = sock_path,
					  .tp_fd = &tp,
					  .n_tp = 1,
					  .dns_fd = dfd};

		conf.handoff_fd = handoff_take(sock_path);
		conf.handoff = conf.handoff_fd >= 0;

		if (getenv("OMNIBOX_TEST_RELAY_POLL"))
			relay_use_poll();
		relay_serve_conf(&conf);
	}
	close(lfd);
	close(tp);
	close(dfd);
}

static void
teardown(void)
{
	kill(relay_pid, SIGKILL);
	waitpid(relay_pid, NULL, 0);
	close(stream_fd);
	close(ho_fd);
	unlink(sock_path);
	unlink(ho_path);
	rmdir(dir);
}

TestSuite(handoff, .init = setup, .fini = teardown, .timeout = 60);

static int
dial_to(uint32_t addr, uint16_t p)
{
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(p)};
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	sin.sin_addr.s_addr = htonl(addr);
	cr_assert_eq(connect(fd, (struct sockaddr *)&sin, sizeof(sin)), 0, "%s", strerror(errno));
	return fd;
}

/* The next hand-off within MS milliseconds: its descriptor (-1: none came), and its preamble. */
static int
next_handoff(int ms, char *pre, size_t *n)
{
	struct pollfd p = {.fd = ho_fd, .events = POLLIN};
	int fd = -1;

	while (poll(&p, 1, ms) == 1) {
		int r = handoff_recv(ho_fd, &fd, pre, n);

		cr_assert_neq(r, -1, "%s", strerror(errno));
		if (r == 1)
			return fd;
	}
	return -1;
}

static void
expect_read(int fd, const char *want)
{
	char buf[256];
	size_t n = 0, len = strlen(want);
	struct pollfd p = {.fd = fd, .events = POLLIN};

	while (n < len && poll(&p, 1, 5000) == 1) {
		ssize_t k = read(fd, buf + n, len - n);

		if (k <= 0)
			break;
		n += (size_t)k;
	}
	cr_assert_eq(n, len, "%zu of %zu bytes", n, len);
	cr_assert_arr_eq(buf, want, len);
}

/*
 * Once the relay holds its end, the hand-off socket has no path: no one
 * else (the agent) can send it a connection whose file description it keeps
 * a copy of, to clear O_NONBLOCK under the proxy or make its close linger.
 */
Test(handoff, once_taken_no_one_else_can_reach_the_handoff_socket)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	int s = socket(AF_UNIX, SOCK_DGRAM, 0);
	char pre[HANDOFF_PREAMBLE_MAX];
	size_t n;

	/* The relay's first connection is handed over: it has taken the socket. */
	int c = dial_to(INADDR_LOOPBACK, proxy_port), h = next_handoff(5000, pre, &n);

	cr_assert_geq(h, 0);
	strcpy(sun.sun_path, ho_path);
	cr_assert_eq(access(ho_path, F_OK), -1, "the path is gone");
	cr_assert_eq(errno, ENOENT);
	cr_assert_eq(connect(s, (struct sockaddr *)&sun, sizeof(sun)), -1);
	cr_assert_eq(handoff_take(sock_path), -1, "a second taker finds nothing");
	close(s);
	close(c);
	close(h);
}

Test(handoff, a_connection_is_handed_over_and_the_relay_leaves_the_path)
{
	char pre[HANDOFF_PREAMBLE_MAX], buf[16];
	size_t n = 99;
	int c = dial_to(INADDR_LOOPBACK, proxy_port), h = next_handoff(5000, pre, &n);

	cr_assert_geq(h, 0, "the connection was handed over");
	cr_assert_eq(n, 0, "no preamble for a client that knows the proxy");
	/* With the relay stopped, the bytes still go both ways: it is off the path. */
	cr_assert_eq(kill(relay_pid, SIGSTOP), 0);
	cr_assert_eq(write(c, "ping", 4), 4);
	expect_read(h, "ping");
	cr_assert_eq(write(h, "pong", 4), 4);
	expect_read(c, "pong");
	cr_assert_eq(shutdown(h, SHUT_WR), 0);
	cr_assert_eq(read(c, buf, sizeof(buf)), 0, "the proxy's half-close reaches the client");
	cr_assert_eq(kill(relay_pid, SIGCONT), 0);
	cr_assert_eq(accept(stream_fd, NULL, NULL), -1, "the stream socket was never dialled");
	close(c);
	close(h);
}

/* The relay's DNS socket: the fake address it gives NAME (host order). */
static uint32_t
fake_address(const char *name)
{
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(dns_port)};
	struct timeval tv = {.tv_sec = 5};
	unsigned char q[512] = {0x4a, 0x11, 0x01, 0, 0, 1}, r[512];
	size_t off = 12;
	ssize_t n;
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	for (const char *s = name; *s;) {
		const char *dot = strchr(s, '.');
		size_t len = dot ? (size_t)(dot - s) : strlen(s);

		q[off++] = (unsigned char)len;
		memcpy(q + off, s, len);
		off += len;
		s += len + (dot ? 1 : 0);
	}
	off++;		/* the root */
	q[off + 1] = 1; /* type A */
	q[off + 3] = 1; /* class IN */
	off += 4;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	cr_assert_eq(sendto(fd, q, off, 0, (struct sockaddr *)&sin, sizeof(sin)), (ssize_t)off);
	n = recv(fd, r, sizeof(r), 0);
	close(fd);
	cr_assert_geq(n, 16, "an answer from the DNS socket");
	cr_assert_eq(r[7], 1, "one address");
	return (uint32_t)r[n - 4] << 24 | (uint32_t)r[n - 3] << 16 | (uint32_t)r[n - 2] << 8 |
	       r[n - 1];
}

Test(handoff, a_transparent_connection_carries_its_preamble)
{
	char pre[HANDOFF_PREAMBLE_MAX + 1], want[256];
	size_t n = 0;
	uint32_t a = fake_address("api.example.com");
	int c = dial_to(a, tp_port), h = next_handoff(5000, pre, &n);

	cr_assert_geq(h, 0);
	snprintf(want, sizeof(want),
		 "CONNECT api.example.com:%u HTTP/1.1\r\nHost: api.example.com:%u\r\n"
		 "Omnibox-Transparent: 1\r\n\r\n",
		 tp_port, tp_port);
	pre[n] = 0;
	cr_assert_str_eq(pre, want);
	cr_assert_eq(write(c, "\x16hello", 6), 6);
	expect_read(h, "\x16hello");
	close(c);
	close(h);
}

Test(handoff, an_address_that_names_nothing_is_never_handed_over)
{
	char pre[HANDOFF_PREAMBLE_MAX], buf[4];
	size_t n;
	int c = dial_to(INADDR_LOOPBACK, tp_port);

	cr_assert_eq(read(c, buf, sizeof(buf)), 0, "closed by the relay");
	cr_assert_eq(next_handoff(300, pre, &n), -1);
	close(c);
}

/* ---- what the receiving end refuses ------------------------------------------------ */

static int
open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* Send on S a datagram of LEN bytes of DATA with the N descriptors of FDS. */
static void
send_raw(int s, const char *data, size_t len, const int *fds, size_t n)
{
	union {
		struct cmsghdr h;
		char space[CMSG_SPACE(sizeof(int) * 4)];
	} ctl;
	struct iovec iov = {(void *)data, len};
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};

	memset(&ctl, 0, sizeof(ctl));
	if (n) {
		struct cmsghdr *c;

		m.msg_control = ctl.space;
		m.msg_controllen = CMSG_SPACE(sizeof(int) * n);
		c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * n);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * n);
	}
	cr_assert_eq(sendmsg(s, &m, 0), (ssize_t)len, "%s", strerror(errno));
}

/* What handoff_recv() makes of one datagram; no descriptor may stay open but a taken one. */
static int
recv_one(int r, int *fd, char *pre, size_t *n)
{
	int before = open_fds(), got = handoff_recv(r, fd, pre, n);

	if (got == 1)
		cr_assert_eq(open_fds(), before + 1);
	else
		cr_assert_eq(open_fds(), before, "what came was closed");
	return got;
}

Test(receiving, only_one_connected_stream_socket_and_a_bounded_preamble_are_taken)
{
	int d[2], st[2], p[2], l, fd = -1, two[2];
	char pre[HANDOFF_PREAMBLE_MAX], big[HANDOFF_PREAMBLE_MAX + 2];
	size_t n = 0;
	struct sockaddr_in sin = {.sin_family = AF_INET};

	cr_assert_eq(socketpair(AF_UNIX, SOCK_DGRAM, 0, d), 0);
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, st), 0);
	cr_assert_eq(pipe(p), 0);
	l = socket(AF_INET, SOCK_STREAM, 0);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	cr_assert_eq(bind(l, (struct sockaddr *)&sin, sizeof(sin)), 0);
	cr_assert_eq(listen(l, 1), 0);
	fcntl(d[1], F_SETFL, O_NONBLOCK);

	cr_assert_eq(recv_one(d[1], &fd, pre, &n), 0, "nothing waiting");
	send_raw(d[0], "H", 1, NULL, 0);
	cr_assert_eq(recv_one(d[1], &fd, pre, &n), 2, "no descriptor");
	send_raw(d[0], "H", 1, &p[0], 1);
	cr_assert_eq(recv_one(d[1], &fd, pre, &n), 2, "a pipe");
	send_raw(d[0], "H", 1, &l, 1);
	cr_assert_eq(recv_one(d[1], &fd, pre, &n), 2, "a listening socket");
	send_raw(d[0], "H", 1, (int[]){d[0]}, 1);
	cr_assert_eq(recv_one(d[1], &fd, pre, &n), 2, "a datagram socket");
	two[0] = two[1] = st[0];
	send_raw(d[0], "H", 1, two, 2);
	cr_assert_eq(recv_one(d[1], &fd, pre, &n), 2, "two descriptors");
	send_raw(d[0], "X", 1, &st[0], 1);
	cr_assert_eq(recv_one(d[1], &fd, pre, &n), 2, "not a hand-off's tag");
	memset(big, 'a', sizeof(big));
	big[0] = 'H';
	send_raw(d[0], big, sizeof(big), &st[0], 1);
	cr_assert_eq(recv_one(d[1], &fd, pre, &n), 2, "a preamble too long");

	cr_assert_eq(handoff_send(d[0], st[0], "CONNECT x:1", 11), 0);
	cr_assert_eq(recv_one(d[1], &fd, pre, &n), 1);
	cr_assert_eq(n, 11);
	cr_assert_arr_eq(pre, "CONNECT x:1", 11);
	cr_assert(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	cr_assert_eq(write(st[1], "z", 1), 1);
	cr_assert_eq(read(fd, pre, 1), 1, "it is the connection that was sent");
	cr_assert_eq(pre[0], 'z');
	close(fd);
	close(d[0]);
	close(d[1]);
	close(st[0]);
	close(st[1]);
	close(p[0]);
	close(p[1]);
	close(l);
}

Test(receiving, a_socket_path_too_long_has_no_handoff_path)
{
	char path[300], out[300];

	memset(path, 'a', 200);
	path[200] = 0;
	cr_assert_eq(handoff_path(path, out, sizeof(out)), -1);
	cr_assert_eq(handoff_path("/tmp/x/proxy.sock", out, sizeof(out)), 0);
	cr_assert_str_eq(out, "/tmp/x/proxy.sock" HANDOFF_SUFFIX);
}
