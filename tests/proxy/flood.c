/*
 * flood.c - the agent exhausting the egress proxy from inside the sandbox.
 *
 *   flood TARGET N BYTES [HOLD_SECONDS]
 *
 * Opens N connections to TARGET (a Unix socket path, such as the proxy's
 * own socket in the scratch dir, or HOST:PORT, such as the relay) and
 * sends each a request head of BYTES bytes that never ends, then holds
 * them all.  Prints "parked N" once all are open (to stdout, flushed), then,
 * after HOLD_SECONDS (default 2), one line of what the proxy did with them:
 * "open K closed-by-proxy M answered-503 R".  Connections refused or cut
 * while opening count as closed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int
open_target(const char *target)
{
	int fd;

	if (target[0] == '/') {
		struct sockaddr_un un = {.sun_family = AF_UNIX};

		if (strlen(target) >= sizeof(un.sun_path))
			return -1;
		strcpy(un.sun_path, target);
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd >= 0 && connect(fd, (struct sockaddr *)&un, sizeof(un)) < 0) {
			close(fd);
			return -1;
		}
		return fd;
	} else {
		struct sockaddr_in in = {.sin_family = AF_INET};
		const char *colon = strrchr(target, ':');
		char host[64];

		if (!colon || (size_t)(colon - target) >= sizeof(host))
			return -1;
		memcpy(host, target, (size_t)(colon - target));
		host[colon - target] = '\0';
		in.sin_port = htons((unsigned short)atoi(colon + 1));
		if (inet_pton(AF_INET, host, &in.sin_addr) != 1)
			return -1;
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd >= 0 && connect(fd, (struct sockaddr *)&in, sizeof(in)) < 0) {
			close(fd);
			return -1;
		}
		return fd;
	}
}

int
main(int argc, char **argv)
{
	static const char start[] = "GET http://flood.test/x HTTP/1.1\r\nX-Pad: ";
	struct rlimit rl;
	size_t n, bytes, open_n = 0, closed = 0, busy = 0;
	int hold = argc > 4 ? atoi(argv[4]) : 2, *fds;
	char *head;

	if (argc < 4) {
		fprintf(stderr, "usage: flood TARGET N BYTES [HOLD_SECONDS]\n");
		return 2;
	}
	n = strtoul(argv[2], NULL, 10);
	bytes = strtoul(argv[3], NULL, 10);
	signal(SIGPIPE, SIG_IGN);
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	fds = calloc(n, sizeof(*fds));
	head = malloc(bytes + sizeof(start));
	if (!fds || !head)
		return 2;
	memcpy(head, start, sizeof(start) - 1);
	memset(head + sizeof(start) - 1, 'a',
	       bytes > sizeof(start) ? bytes - sizeof(start) + 1 : 1);
	if (bytes < sizeof(start))
		bytes = sizeof(start);
	for (size_t i = 0; i < n; i++) {
		fds[i] = open_target(argv[1]);
		if (fds[i] < 0) {
			if (errno == EMFILE || errno == ENFILE) {
				fprintf(stderr, "flood: out of descriptors after %zu\n", i);
				return 2;
			}
			continue;
		}
		/* Whatever the socket takes now; a proxy that stops reading holds the rest. */
		(void)!send(fds[i], head, bytes, MSG_DONTWAIT | MSG_NOSIGNAL);
	}
	printf("parked %zu\n", n);
	fflush(stdout);
	sleep((unsigned)hold);
	for (size_t i = 0; i < n; i++) {
		struct pollfd p = {.fd = fds[i], .events = POLLIN};
		char buf[512];
		ssize_t r;

		if (fds[i] < 0) {
			closed++;
			continue;
		}
		if (poll(&p, 1, 0) == 0) {
			open_n++;
			continue;
		}
		r = recv(fds[i], buf, sizeof(buf) - 1, MSG_DONTWAIT);
		if (r > 0) {
			buf[r] = '\0';
			if (strstr(buf, " 503 "))
				busy++;
		}
		closed++;
	}
	printf("open %zu closed-by-proxy %zu answered-503 %zu\n", open_n, closed, busy);
	return 0;
}
