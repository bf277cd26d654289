/*
 * test_handover.c - omnibox-init's command line on its ready socket
 * (runtime/launch/handover.h): sent by one process, received by another,
 * every descriptor at its number.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/launch/handover.h"

/* A memfd holding "I" (its index), at the number AT. */
static int
tagged_fd(int i, int at)
{
	char tag[16];
	int fd = memfd_create("tag", MFD_CLOEXEC), n = snprintf(tag, sizeof(tag), "%d", i);

	cr_assert(fd >= 0);
	cr_assert(write(fd, tag, (size_t)n) == n);
	if (fd != at) {
		cr_assert(dup2(fd, at) == at);
		close(fd);
	}
	return at;
}

/* The index the memfd at FD holds, or -1. */
static int
tag_of(int fd)
{
	char tag[16] = "";

	if (pread(fd, tag, sizeof(tag) - 1, 0) <= 0)
		return -1;
	return atoi(tag);
}

/* The lowest number free here: the first a received descriptor gets. */
static int
lowest_free(void)
{
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	cr_assert(fd >= 0);
	close(fd);
	return fd;
}

static void
raise_nofile(void)
{
	struct rlimit rl;

	cr_assert(getrlimit(RLIMIT_NOFILE, &rl) == 0);
	rl.rlim_cur = rl.rlim_max;
	cr_assert(setrlimit(RLIMIT_NOFILE, &rl) == 0);
	cr_assert(rl.rlim_cur >= 2048, "the test needs 2048 descriptors");
}

/*
 * In a child (a process of its own, as omnibox-init is): the N descriptors
 * of FDS closed there, as they would not exist in omnibox-init, then the
 * block received on SOCK.  The child's status: 0 when the arguments,
 * environment and every descriptor came as sent; otherwise the check that
 * failed.
 */
static int
receive_in_child(int sock, int sender, const int *fds, size_t n, rlim_t limit)
{
	pid_t pid = fork();
	int status;

	cr_assert(pid >= 0);
	if (pid == 0) {
		int argc;
		char **argv, **env, err[512];

		for (size_t i = 0; i < n; i++)
			close(fds[i]);
		struct rlimit rl;

		/* Nothing but what was sent: its end is the sender's alone. */
		close(sender);
		/* The sandbox's limit may be below the sender's numbers. */
		if (limit && (getrlimit(RLIMIT_NOFILE, &rl) < 0 ||
			      (rl.rlim_cur = limit, setrlimit(RLIMIT_NOFILE, &rl) < 0)))
			_exit(9);
		if (handover_receive(sock, &argc, &argv, &env, err, sizeof(err)) != 0)
			_exit(10);
		if (limit && (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur != limit))
			_exit(15);
		if (argc != 3 || strcmp(argv[0], "/.omnibox/init") || strcmp(argv[1], "--x") ||
		    strcmp(argv[2], "") || argv[3])
			_exit(11);
		if (!env[0] || strcmp(env[0], "A=1") || !env[1] || strcmp(env[1], "B=") || env[2])
			_exit(12);
		for (size_t i = 0; i < n; i++) {
			int flags = fcntl(fds[i], F_GETFD);

			if (tag_of(fds[i]) != (int)i)
				_exit(13);
			/* As inherited: omnibox-init closes them itself. */
			if (flags < 0 || (flags & FD_CLOEXEC))
				_exit(14);
		}
		_exit(0);
	}
	close(sender);
	cr_assert(waitpid(pid, &status, 0) == pid);
	cr_assert(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static const char args[] = "/.omnibox/init\0--x\0";
static char *env[] = {(char *)"A=1", (char *)"B=", NULL};

Test(handover, arrives_as_sent)
{
	int sv[2], fds[3];

	cr_assert(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0);
	/* Where the receiver gets its first descriptors, in the other order
	 * (each lands where another one is to go), and above them. */
	fds[1] = tagged_fd(1, lowest_free());
	fds[0] = tagged_fd(0, lowest_free());
	fds[2] = tagged_fd(2, 300);
	cr_assert(handover_send(sv[0], args, sizeof(args), env, fds, 3) == 0);
	cr_expect_eq(receive_in_child(sv[1], sv[0], fds, 3, 0), 0);
}

/* More than one message holds, at numbers above the receiver's limit:
 * each descriptor still at its number, the limit as it was. */
Test(handover, many_descriptors)
{
	enum { N = 700 };
	int sv[2], *fds = calloc(N, sizeof(int));

	raise_nofile();
	cr_assert(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0);
	for (int i = 0; i < N; i++)
		fds[i] = tagged_fd(i, 1000 + (i * 7) % 701);
	for (int i = 0; i < N; i++)
		cr_assert_eq(tag_of(fds[i]), i);
	cr_assert(handover_send(sv[0], args, sizeof(args), env, fds, N) == 0);
	/* With a limit of 1024 (a user's usual): as it was, once they are in place. */
	cr_expect_eq(receive_in_child(sv[1], sv[0], fds, N, 1024), 0);
	free(fds);
}

/* The socket's end before any block: 1, nothing to say. */
Test(handover, end_before_block)
{
	int sv[2], argc;
	char **argv, **e, err[256] = "";

	cr_assert(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0);
	close(sv[0]);
	cr_expect_eq(handover_receive(sv[1], &argc, &argv, &e, err, sizeof(err)), 1);
	cr_expect_str_empty(err);
}

/* One message on SOCK by hand: the block BLOCK (LEN bytes) in a memfd
 * (none when LEN is 0), then the N descriptors of FDS. */
static void
send_raw(int sock, const char *block, size_t len, const int *fds, size_t n)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * 8)];
		struct cmsghdr align;
	} u;
	int v[8], k = 0;
	char byte = 'a';
	struct iovec iov = {&byte, 1};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
	struct cmsghdr *c;

	if (len) {
		v[k] = memfd_create("block", MFD_CLOEXEC);
		cr_assert(v[k] >= 0 && write(v[k], block, len) == (ssize_t)len);
		k++;
	}
	for (size_t i = 0; i < n; i++)
		v[k++] = fds[i];
	if (k) {
		memset(u.buf, 0, sizeof(u.buf));
		msg.msg_control = u.buf;
		msg.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)k);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)k);
		memcpy(CMSG_DATA(c), v, sizeof(int) * (size_t)k);
	}
	cr_assert(sendmsg(sock, &msg, 0) == 1);
	if (len)
		close(v[0]);
}

/* What a block that is not omnibox-run's gets: -1 and a reason. */
static void
refused(const char *block, size_t len, const int *fds, size_t n, const char *why)
{
	int sv[2], argc;
	char **argv, **e, err[256] = "";

	cr_assert(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0);
	send_raw(sv[0], block, len, fds, n);
	close(sv[0]);
	cr_expect_eq(handover_receive(sv[1], &argc, &argv, &e, err, sizeof(err)), -1, "%s", why);
	cr_expect(strstr(err, "ready socket") != NULL, "%s: %s", why, err);
	close(sv[1]);
}

Test(handover, refuses_what_is_not_a_block)
{
	static const char two[] = "2\0"
				  "1\0"
				  "0\0"
				  "50\0"
				  "51\0"
				  "/x";
	static const char low[] = "1\0"
				  "1\0"
				  "0\0"
				  "2\0"
				  "/x";
	static const char twice[] = "2\0"
				    "1\0"
				    "0\0"
				    "60\0"
				    "60\0"
				    "/x";
	static const char noargs[] = "0\0"
				     "0\0"
				     "0\0";
	static const char short_env[] = "0\0"
					"1\0"
					"2\0"
					"/x\0"
					"A=1";
	static const char bad_count[] = "x\0"
					"1\0"
					"0\0"
					"/x";
	int one = tagged_fd(0, 970), two_fds[2] = {tagged_fd(0, 971), tagged_fd(1, 972)};

	refused(two, sizeof(two), &one, 1, "one descriptor of two, then the end");
	refused("", 0, NULL, 0, "a first message without the block");
	refused(noargs, sizeof(noargs), NULL, 0, "no arguments");
	refused(short_env, sizeof(short_env), NULL, 0, "an environment cut short");
	refused(bad_count, sizeof(bad_count), NULL, 0, "a count that is no number");
	refused(twice, sizeof(twice), two_fds, 2, "one number for two descriptors");
	refused(low, sizeof(low), &one, 1, "a standard stream's number");
	/* A descriptor to land on the receiving socket's own number. */
	{
		int sv[2], argc;
		char **argv, **e, err[256] = "", block[64];
		int n;

		cr_assert(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0);
		n = snprintf(block, sizeof(block), "1%c1%c0%c%d%c/x", 0, 0, 0, sv[1], 0);
		send_raw(sv[0], block, (size_t)n + 1, &one, 1);
		close(sv[0]);
		cr_expect_eq(handover_receive(sv[1], &argc, &argv, &e, err, sizeof(err)), -1,
			     "a descriptor at the socket's own number");
		close(sv[1]);
	}
	close(one);
	close(two_fds[0]);
	close(two_fds[1]);
}
