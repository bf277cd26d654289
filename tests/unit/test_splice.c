/*
 * test_splice.c - the proxy's plain-body mover (runtime/egress/splice.h),
 * driven the way the proxy's event loop drives it, with poll(2) in its
 * place: whatever side splice_move() says to wait for must become ready,
 * or the body is stuck.  Every byte arrives, in order, none past the body's
 * length is taken from upstream, and a turn that ends with the last of a
 * body in the pipe waits for the agent, not for an upstream that will
 * never send again.
 */
#include <criterion/criterion.h>

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/egress/splice.h"

static unsigned char
byte_at(uint64_t i)
{
	return (unsigned char)(i * 131 + (i >> 9));
}

static void
nonblock(int fd)
{
	cr_assert_eq(fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK), 0);
}

/* A connected pair of TCP sockets on loopback: [0] the server's end, [1] ours. */
static void
tcp_pair(int fd[2])
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);
	int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	cr_assert(l >= 0);
	cr_assert_eq(bind(l, (struct sockaddr *)&a, sizeof(a)), 0);
	cr_assert_eq(listen(l, 1), 0);
	cr_assert_eq(getsockname(l, (struct sockaddr *)&a, &len), 0);
	fd[1] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_assert_eq(connect(fd[1], (struct sockaddr *)&a, sizeof(a)), 0);
	fd[0] = accept4(l, NULL, NULL, SOCK_CLOEXEC);
	cr_assert(fd[0] >= 0);
	close(l);
}

/* The two connections of a body's way: UP (the server's end [0], the
 * proxy's [1]) and AGENT (the proxy's end [0], the agent's [1]); the
 * proxy's ends and the agent's non-blocking. */
static void
both_ways(int up[2], int agent[2])
{
	tcp_pair(up);
	tcp_pair(agent);
	nonblock(up[1]);
	nonblock(agent[0]);
	nonblock(agent[1]);
}

/* Close what is still open of PIPE and the four ends (-1: closed already). */
static void
close_all(struct splice_pipe *sp, const int up[2], const int agent[2])
{
	splice_pipe_close(sp);
	for (int i = 0; i < 2; i++) {
		if (up[i] >= 0)
			close(up[i]);
		if (agent[i] >= 0)
			close(agent[i]);
	}
}

/* Write the body and then `extra` bytes of 0xEE, from a child, in writes
 * of `chunk`; then wait, the socket open, until killed (as a kept-alive
 * server does). */
static pid_t
serve(int fd, uint64_t size, size_t chunk, size_t extra, bool stay)
{
	pid_t pid = fork();

	cr_assert(pid >= 0);
	if (pid == 0) {
		unsigned char *buf = malloc(chunk);

		/* A failed check ends the test's process: this one goes with it. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() == 1)
			_exit(1);
		for (uint64_t at = 0; at < size + extra;) {
			size_t n = 0;
			ssize_t w;

			for (; n < chunk && at + n < size + extra; n++)
				buf[n] = at + n < size ? byte_at(at + n) : 0xEE;
			for (size_t off = 0; off < n; off += (size_t)w)
				if ((w = write(fd, buf + off, n - off)) <= 0)
					_exit(1);
			at += n;
		}
		while (stay)
			pause();
		_exit(0);
	}
	return pid;
}

/* Read what the agent has, checking it is the body's next bytes. */
static void
take(int fd, uint64_t *got)
{
	unsigned char buf[65536];
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) > 0)
		for (ssize_t i = 0; i < n; i++, (*got)++)
			cr_assert_eq(buf[i], byte_at(*got), "byte %llu differs",
				     (unsigned long long)*got);
}

/* Read the rest of what was sent to the agent, until `size` (or two quiet seconds). */
static void
take_all(int fd, uint64_t *got, uint64_t size)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};

	take(fd, got);
	while (*got < size && poll(&p, 1, 2000) == 1)
		take(fd, got);
}

/*
 * Run the mover to its end as the proxy's loop would: after each call, wait
 * (at most two seconds) for the side it named.  Returns its last answer.
 */
static enum splice_next
run(struct splice_pipe *sp, int up, int agent_w, int agent_r, uint64_t *left, uint64_t *got)
{
	for (int calls = 0; calls < 1000000; calls++) {
		enum splice_next r = splice_move(sp, up, agent_w, left);
		struct pollfd p = {.events = POLLIN};

		take(agent_r, got);
		if (r == SPLICE_WAIT_UP)
			p.fd = up;
		else if (r == SPLICE_WAIT_AGENT)
			p.fd = agent_w, p.events = POLLOUT;
		else
			return r;
		cr_assert_eq(poll(&p, 1, 2000), 1,
			     "stuck: waits for the %s with %zu bytes in the pipe, %llu delivered",
			     r == SPLICE_WAIT_UP ? "upstream" : "agent", sp->in_pipe,
			     (unsigned long long)*got);
	}
	cr_assert_fail("no end");
	return SPLICE_UP_FAILED;
}

/* One body of `size` bytes through a pipe of `pipe_size`. */
static void
one(uint64_t size, size_t pipe_size, size_t chunk, bool by_length)
{
	struct splice_pipe sp;
	int up[2], agent[2];
	uint64_t left = size, got = 0;
	pid_t pid;
	enum splice_next r;

	both_ways(up, agent);
	/* A close-delimited body: the server closes once it has written all. */
	pid = serve(up[0], size, chunk, by_length ? 4096 : 0, by_length);
	if (!by_length) {
		close(up[0]); /* the child's copy is the server's: its exit closes */
		up[0] = -1;
	}
	cr_assert_eq(splice_pipe_open(&sp, pipe_size), 0);
	r = run(&sp, up[1], agent[0], agent[1], by_length ? &left : NULL, &got);
	cr_assert_eq(r, by_length ? SPLICE_DONE : SPLICE_UP_CLOSED, "answer %d for %llu bytes", r,
		     (unsigned long long)size);
	cr_assert_eq(sp.in_pipe, 0);
	take_all(agent[1], &got, size);
	cr_assert_eq(got, size, "%llu of %llu bytes", (unsigned long long)got,
		     (unsigned long long)size);
	if (by_length) {
		/* What the server sent after the body is still there, unread. */
		unsigned char b[4096];
		struct pollfd p = {.fd = up[1], .events = POLLIN};
		size_t n = 0;
		ssize_t k;

		while (n < sizeof(b) && poll(&p, 1, 2000) == 1 &&
		       (k = read(up[1], b + n, sizeof(b) - n)) > 0)
			n += (size_t)k;
		cr_assert_eq(n, sizeof(b));
		cr_assert_eq(b[0], 0xEE);
		kill(pid, SIGTERM);
	}
	cr_assert_eq(waitpid(pid, NULL, 0), pid);
	close_all(&sp, up, agent);
}

/*
 * The server has written the whole body before the mover starts, in
 * writes of one page, and the pipe holds one page: every call to the
 * kernel moves a page, so the last page enters the pipe at the last round
 * of a turn.  The turn must then wait for the agent: the upstream, kept
 * alive, is never readable again.
 */
Test(splice, last_of_a_body_in_the_pipe_at_the_end_of_a_turn)
{
	struct splice_pipe sp;
	int up[2], agent[2];
	uint64_t size = (uint64_t)SPLICE_ROUNDS * 4096, left = size, got = 0;
	pid_t pid;

	both_ways(up, agent);
	cr_assert_eq(splice_pipe_open(&sp, 4096), 0);
	cr_assert_eq(sp.pipe_size, 4096);
	pid = serve(up[0], size, 4096, 0, true);
	/* Wait until all of it is in our receive queue. */
	for (int ms = 0; ms < 5000; ms++) {
		int q = 0;

		if (recv(up[1], (char[1]){0}, 1, MSG_PEEK | MSG_DONTWAIT) == 1 &&
		    ioctl(up[1], FIONREAD, &q) == 0 && (uint64_t)q == size)
			break;
		usleep(1000);
	}
	cr_assert_eq(run(&sp, up[1], agent[0], agent[1], &left, &got), SPLICE_DONE);
	take_all(agent[1], &got, size);
	cr_assert_eq(got, size);
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
	close_all(&sp, up, agent);
}

Test(splice, bodies_of_many_sizes_arrive_whole_and_nothing_past_them_is_taken)
{
	static const uint64_t sizes[] = {
	    1,	       4095,	      4096,	 4097,	  65536,  65537, 16 * 4096 - 1,
	    16 * 4096, 16 * 4096 + 1, 17 * 4096, 1000000, 3333333};
	static const size_t pipes[] = {4096, 65536, 1024 * 1024};

	for (size_t p = 0; p < sizeof(pipes) / sizeof(*pipes); p++)
		for (size_t s = 0; s < sizeof(sizes) / sizeof(*sizes); s++) {
			one(sizes[s], pipes[p], 4096, true);
			one(sizes[s], pipes[p], 65536, true);
		}
}

Test(splice, a_close_delimited_body_ends_with_the_close)
{
	one(0, 65536, 4096, false);
	one(1, 4096, 4096, false);
	one(16 * 4096, 4096, 4096, false);
	one(2000000, 1024 * 1024, 65536, false);
}

Test(splice, an_upstream_that_closes_inside_a_length_is_not_a_finished_body)
{
	struct splice_pipe sp;
	int up[2], agent[2];
	uint64_t left = 10000, got = 0;

	both_ways(up, agent);
	cr_assert_eq(splice_pipe_open(&sp, 65536), 0);
	for (uint64_t i = 0; i < 5000; i++)
		cr_assert_eq(write(up[0], (unsigned char[1]){byte_at(i)}, 1), 1);
	close(up[0]);
	up[0] = -1;
	cr_assert_eq(run(&sp, up[1], agent[0], agent[1], &left, &got), SPLICE_UP_CLOSED);
	take_all(agent[1], &got, 5000);
	cr_assert_eq(got, 5000);
	cr_assert_eq(left, 5000);
	close_all(&sp, up, agent);
}

Test(splice, an_agent_that_is_gone_is_a_failure)
{
	struct splice_pipe sp;
	int up[2], agent[2];
	uint64_t left = 1000000;
	pid_t pid;

	signal(SIGPIPE, SIG_IGN);
	both_ways(up, agent);
	close(agent[1]);
	agent[1] = -1;
	cr_assert_eq(splice_pipe_open(&sp, 65536), 0);
	pid = serve(up[0], left, 65536, 0, true);
	enum splice_next r = SPLICE_WAIT_UP;
	for (int i = 0; i < 1000 && (r == SPLICE_WAIT_UP || r == SPLICE_WAIT_AGENT); i++) {
		struct pollfd p = {.fd = r == SPLICE_WAIT_UP ? up[1] : agent[0],
				   .events = r == SPLICE_WAIT_UP ? POLLIN : POLLOUT};

		r = splice_move(&sp, up[1], agent[0], &left);
		if (r == SPLICE_WAIT_UP || r == SPLICE_WAIT_AGENT)
			cr_assert_eq(poll(&p, 1, 2000), 1);
	}
	cr_assert_eq(r, SPLICE_AGENT_FAILED);
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
	close_all(&sp, up, agent);
}
