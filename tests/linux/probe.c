/*
 * probe.c - one system call, reported: what the acceptance tests run inside
 * a real sandbox to observe what the kernel allows.
 *
 *   probe NAME [ARGS]   prints "ok" or the errno name (EPERM, ENOSYS, ...)
 *
 * Built static so it runs in any sandbox whatever libraries it can see.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/mempolicy.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sched.h>
#include <net/if.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif

static int
report(long rc)
{
	if (rc >= 0) {
		puts("ok");
		return 0;
	}
	switch (errno) {
#define E(x)                                                                                       \
	case x:                                                                                    \
		puts(#x);                                                                          \
		break;
		E(EPERM)
		E(ENOSYS)
		E(EACCES)
		E(EROFS)
		E(ENOENT)
		E(EXDEV)
		E(EINVAL)
		E(ECONNREFUSED)
		E(ENETUNREACH)
		E(EAFNOSUPPORT)
		E(EIO)
		E(ENOTTY)
		E(EEXIST)
		E(EBUSY)
		E(ENOTDIR)
		E(EMFILE)
		E(ENOMEM)
		E(EAGAIN)
		E(EBADF)
		E(ENOTSOCK)
		E(EPIPE)
#undef E
	default:
		printf("errno %d\n", errno);
	}
	return 1;
}

static void *
thread_main(void *arg)
{
	return arg;
}

#if defined(__x86_64__)
/* A system call through the i386 ABI from 64-bit code. */
static long
int80(long nr, long a, long b, long c)
{
	long ret;

	__asm__ volatile("int $0x80" : "=a"(ret) : "a"(nr), "b"(a), "c"(b), "d"(c) : "memory");
	if (ret < 0 && ret > -4096) {
		errno = (int)-ret;
		return -1;
	}
	return ret;
}
#endif

/* A Unix socket address: "@name" is abstract. */
static socklen_t
unix_addr(struct sockaddr_un *sun, const char *name)
{
	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	if (name[0] == '@') {
		size_t n = strlen(name + 1);

		if (n > sizeof(sun->sun_path) - 1)
			n = sizeof(sun->sun_path) - 1;
		memcpy(sun->sun_path + 1, name + 1, n);
		return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
	}
	snprintf(sun->sun_path, sizeof(sun->sun_path), "%s", name);
	return sizeof(*sun);
}

/* Host side: print "accepted" and every byte received, until killed. */
static int
serve_and_print(int fd)
{
	char buf[512];

	if (listen(fd, 16) < 0)
		return report(-1);
	puts("listening");
	fflush(stdout);
	for (;;) {
		int c = accept(fd, NULL, NULL);
		ssize_t n;

		if (c < 0)
			continue;
		puts("accepted");
		fflush(stdout);
		while ((n = read(c, buf, sizeof(buf))) > 0) {
			printf("received %.*s\n", (int)n, buf);
			fflush(stdout);
		}
		close(c);
	}
}

/*
 * The mount-reading and mount-making calls after libseccomp's tables, by
 * number (the same on every ABI): each would succeed unfiltered.
 */
static long
new_mount_call(const char *what)
{
	/* struct mnt_id_req, version 0: size, spare, mnt_id, param */
	uint64_t req[3] = {24, 0, 0}, ids[16], buf[512];
	struct statx st;

	if (!strcmp(what, "open-tree-attr")) /* no OPEN_TREE_CLONE: needs no capability */
		return syscall(467, AT_FDCWD, "/", O_CLOEXEC, NULL, 0);
	if (!strcmp(what, "listmount")) {
		req[1] = UINT64_MAX; /* LSMT_ROOT: the mounts under the caller's root */
		return syscall(458, req, ids, 16, 0);
	}
	/* statmount of / itself, by the unique mount id statx gives (STATX_MNT_ID_UNIQUE) */
	if (statx(AT_FDCWD, "/", 0, 0x4000, &st))
		return -1;
	req[1] = st.stx_mnt_id;
	req[2] = 1; /* STATMOUNT_SB_BASIC */
	return syscall(457, req, buf, sizeof(buf), 0);
}

/*
 * Over a NETLINK_ROUTE socket, what getifaddrs(3) does ("netlink-route":
 * dump the links), or a change ("netlink-route-newaddr": add 127.0.0.1/8
 * to lo; "netlink-route-newlink": set lo up).  Where they are allowed the
 * changes change nothing (the address is there: EEXIST; lo is up: ok), so
 * the probe can run anywhere; each needs CAP_NET_ADMIN, which the sandbox
 * never has: EPERM.  The answer is the kernel's: the first message back,
 * or its acknowledgement.
 */
static long
netlink_route(const char *what)
{
	struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
	union {
		struct nlmsghdr h;
		char buf[8192];
	} msg = {0};
	struct nlmsghdr *h = &msg.h;
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	ssize_t got;

	if (fd < 0)
		return -1;
	h->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	h->nlmsg_seq = 1;
	if (!strcmp(what, "netlink-route-newaddr")) {
		struct ifaddrmsg *a = NLMSG_DATA(h);
		struct rtattr *rta = (struct rtattr *)((char *)a + NLMSG_ALIGN(sizeof(*a)));
		uint32_t lo = htonl(INADDR_LOOPBACK);

		*a = (struct ifaddrmsg){.ifa_family = AF_INET, .ifa_prefixlen = 8, .ifa_index = 1};
		rta->rta_type = IFA_LOCAL;
		rta->rta_len = RTA_LENGTH(sizeof(lo));
		memcpy(RTA_DATA(rta), &lo, sizeof(lo));
		h->nlmsg_type = RTM_NEWADDR;
		h->nlmsg_flags |= NLM_F_CREATE | NLM_F_EXCL;
		h->nlmsg_len = NLMSG_LENGTH(NLMSG_ALIGN(sizeof(*a)) + RTA_LENGTH(sizeof(lo)));
	} else if (!strcmp(what, "netlink-route-newlink")) {
		struct ifinfomsg *l = NLMSG_DATA(h);

		*l = (struct ifinfomsg){.ifi_family = AF_UNSPEC,
					.ifi_index = (int)if_nametoindex("lo"),
					.ifi_flags = IFF_UP,
					.ifi_change = IFF_UP};
		h->nlmsg_type = RTM_NEWLINK;
		h->nlmsg_len = NLMSG_LENGTH(sizeof(*l));
	} else {
		struct rtgenmsg *g = NLMSG_DATA(h);

		g->rtgen_family = AF_UNSPEC;
		h->nlmsg_type = RTM_GETLINK;
		h->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
		h->nlmsg_len = NLMSG_LENGTH(sizeof(*g));
	}
	if (sendto(fd, h, h->nlmsg_len, 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0)
		return -1;
	got = recv(fd, msg.buf, sizeof(msg.buf), 0);
	close(fd);
	if (got < (ssize_t)sizeof(*h) || !NLMSG_OK(h, (size_t)got)) {
		errno = EIO;
		return -1;
	}
	if (h->nlmsg_type == NLMSG_ERROR) {
		const struct nlmsgerr *e = NLMSG_DATA(h);

		errno = -e->error;
		return e->error ? -1 : 0;
	}
	return h->nlmsg_type == RTM_NEWLINK ? 0 : (errno = EIO, -1);
}

static long
raw_clone(unsigned long flags)
{
	long rc = syscall(SYS_clone, flags, 0, 0, 0, 0);

	if (rc == 0)
		_exit(0);
	if (rc > 0)
		waitpid((pid_t)rc, NULL, __WALL);
	return rc;
}

int
main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";

	if (!strcmp(what, "unshare-user"))
		return report(unshare(CLONE_NEWUSER));
	if (!strcmp(what, "unshare-net"))
		return report(unshare(CLONE_NEWNET));
	if (!strcmp(what, "mount"))
		return report(mount("none", "/tmp", "tmpfs", 0, NULL));
	if (!strcmp(what, "open-tree-attr") || !strcmp(what, "listmount") ||
	    !strcmp(what, "statmount"))
		return report(new_mount_call(what));
	if (!strcmp(what, "future-syscall")) /* a number no kernel has yet */
		return report(syscall(1000, 0, 0, 0, 0, 0));
	if (!strcmp(what, "remount-root-rw"))
		return report(mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND, NULL));
	if (!strcmp(what, "ptrace-traceme"))
		return report(ptrace(PTRACE_TRACEME, 0, NULL, NULL));
	if (!strcmp(what, "ptrace-sibling")) {
		pid_t pid = fork();
		long rc;

		if (pid == 0) {
			pause();
			_exit(0);
		}
		rc = ptrace(PTRACE_ATTACH, pid, NULL, NULL);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return report(rc);
	}
	if (!strcmp(what, "keyctl"))
		return report(syscall(SYS_keyctl, 0 /* KEYCTL_GET_KEYRING_ID */, -3, 0));
	if (!strcmp(what, "bpf"))
		return report(syscall(SYS_bpf, 0, NULL, 0));
	/* Every netlink protocol but NETLINK_ROUTE is refused; audit and sock_diag for two. */
	if (!strcmp(what, "socket-netlink-audit"))
		return report(socket(AF_NETLINK, SOCK_RAW, NETLINK_AUDIT));
	if (!strcmp(what, "socket-netlink-diag"))
		return report(socket(AF_NETLINK, SOCK_DGRAM, NETLINK_SOCK_DIAG));
	if (!strncmp(what, "netlink-route", 13))
		return report(netlink_route(what));
	/* libnuma's probe at start (counted apart by omnibox-run), and a real request. */
	if (!strcmp(what, "set-mempolicy-preferred-many") || !strcmp(what, "set-mempolicy-bind")) {
		unsigned long mask[16] = {1};
		int mode = strcmp(what, "set-mempolicy-bind") ? MPOL_PREFERRED_MANY : MPOL_BIND;

		return report(syscall(SYS_set_mempolicy, mode, mask, sizeof(mask) * 8));
	}
	if (!strcmp(what, "get-mempolicy")) {
		int mode = -1;
		unsigned long mask[16] = {0};

		return report(syscall(SYS_get_mempolicy, &mode, mask, sizeof(mask) * 8, NULL, 0));
	}
	if (!strcmp(what, "socket-packet"))
		return report(socket(AF_PACKET, SOCK_RAW, 0));
	if (!strcmp(what, "socket-vsock"))
		return report(socket(AF_VSOCK, SOCK_STREAM, 0));
	if (!strcmp(what, "socket-inet"))
		return report(socket(AF_INET, SOCK_STREAM, 0));
	if (!strcmp(what, "socket-unix"))
		return report(socket(AF_UNIX, SOCK_STREAM, 0));
	if (!strcmp(what, "clone-newnet"))
		return report(raw_clone(CLONE_NEWNET | SIGCHLD));
	if (!strcmp(what, "clone-newuser"))
		return report(raw_clone(CLONE_NEWUSER | SIGCHLD));
	if (!strcmp(what, "clone3")) {
		struct clone_args ca;

		memset(&ca, 0, sizeof(ca));
		ca.exit_signal = SIGCHLD;
		{
			long rc = syscall(SYS_clone3, &ca, sizeof(ca));

			if (rc == 0)
				_exit(0);
			if (rc > 0)
				waitpid((pid_t)rc, NULL, 0);
			return report(rc);
		}
	}
	if (!strcmp(what, "io_uring"))
		return report(syscall(SYS_io_uring_setup, 1, NULL));
	if (!strcmp(what, "thread")) {
		pthread_t t;
		int rc = pthread_create(&t, NULL, thread_main, NULL);

		if (rc == 0)
			pthread_join(t, NULL);
		errno = rc;
		return report(rc ? -1 : 0);
	}
	if (!strcmp(what, "fork")) {
		pid_t pid = fork();
		int status;

		if (pid == 0)
			_exit(3);
		if (pid < 0)
			return report(-1);
		waitpid(pid, &status, 0);
		return report(WIFEXITED(status) && WEXITSTATUS(status) == 3 ? 0 : -1);
	}
	if (!strcmp(what, "execve")) {
		pid_t pid = fork();
		int status;

		if (pid == 0) {
			execl("/bin/sh", "sh", "-c", "exit 4", (char *)NULL);
			_exit(1);
		}
		waitpid(pid, &status, 0);
		errno = EINVAL;
		return report(WIFEXITED(status) && WEXITSTATUS(status) == 4 ? 0 : -1);
	}
	if (!strcmp(what, "mknod") && argc > 2)
		return report(mknod(argv[2], S_IFCHR | 0666, makedev(1, 3)));
	if (!strcmp(what, "link") && argc > 3)
		return report(link(argv[2], argv[3]));
	if (!strcmp(what, "tiocsti")) {
		/* A fresh pty of our own, so nothing real is typed into. */
		int master = posix_openpt(O_RDWR | O_NOCTTY), slave;
		char c = 'x';

		if (master < 0 || grantpt(master) < 0 || unlockpt(master) < 0)
			return report(-1);
		slave = open(ptsname(master), O_RDWR | O_NOCTTY);
		if (slave < 0)
			return report(-1);
		return report(ioctl(slave, TIOCSTI, &c));
	}
	if (!strcmp(what, "connect-unix") && argc > 2) {
		struct sockaddr_un sun;
		socklen_t len = unix_addr(&sun, argv[2]);
		int fd = socket(AF_UNIX, SOCK_STREAM, 0);
		int rc = connect(fd, (struct sockaddr *)&sun, len);

		if (rc == 0 && argc > 3)
			rc = write(fd, argv[3], strlen(argv[3])) < 0 ? -1 : 0;
		return report(rc);
	}
	if (!strcmp(what, "listen-unix") && argc > 2) {
		/* Host side: a server the sandbox must not reach.  Runs until killed. */
		struct sockaddr_un sun;
		socklen_t len = unix_addr(&sun, argv[2]);
		int fd = socket(AF_UNIX, SOCK_STREAM, 0);

		if (argv[2][0] != '@')
			unlink(argv[2]);
		if (bind(fd, (struct sockaddr *)&sun, len) < 0)
			return report(-1);
		if (argv[2][0] != '@')
			chmod(argv[2], 0777);
		return serve_and_print(fd);
	}
	if (!strcmp(what, "listen-tcp")) {
		/* Host side, on a free loopback port it prints first. */
		struct sockaddr_in sin = {.sin_family = AF_INET};
		socklen_t len = sizeof(sin);
		int fd = socket(AF_INET, SOCK_STREAM, 0);

		inet_pton(AF_INET, "127.0.0.1", &sin.sin_addr);
		if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 ||
		    getsockname(fd, (struct sockaddr *)&sin, &len) < 0)
			return report(-1);
		printf("port %u\n", ntohs(sin.sin_port));
		return serve_and_print(fd);
	}
	if (!strcmp(what, "landlock-abi")) {
		long v = syscall(SYS_landlock_create_ruleset, NULL, 0, 1 /* VERSION */);

		printf("%ld\n", v > 0 ? v : 0);
		return 0;
	}
	if (!strcmp(what, "write-fd") && argc > 2) {
		return report(write(atoi(argv[2]), "leak\n", 5));
	}
	if (!strcmp(what, "rename-on-open") && argc > 4) {
		/* The racer with perfect timing: DIR's listing is done once the
		 * scan opens its first subdirectory; then NAME goes to NEW, before
		 * the scan reaches it.  Says "watching", then "renamed". */
		int in = inotify_init1(IN_CLOEXEC);
		char buf[4096], from[4096], to[4096];

		if (in < 0 || inotify_add_watch(in, argv[2], IN_OPEN | IN_ONLYDIR) < 0)
			return report(-1);
		printf("watching\n");
		fflush(stdout);
		for (;;) {
			ssize_t n = read(in, buf, sizeof(buf));
			const struct inotify_event *e = (const struct inotify_event *)buf;

			if (n <= 0)
				return report(-1);
			if ((e->mask & IN_ISDIR) && e->len && strcmp(e->name, argv[3]))
				break;
		}
		snprintf(from, sizeof(from), "%s/%s", argv[2], argv[3]);
		snprintf(to, sizeof(to), "%s/%s", argv[2], argv[4]);
		return report(rename(from, to)) == 0 ? (printf("renamed\n"), 0) : 1;
	}
	if (!strcmp(what, "swap") && argc > 3) {
		/* The racer: exchange two names as fast as it can, until killed. */
		for (;;)
			if (syscall(SYS_renameat2, AT_FDCWD, argv[2], AT_FDCWD, argv[3],
				    2 /* RENAME_EXCHANGE */) < 0)
				return report(-1);
	}
	if (!strcmp(what, "mkfiles") && argc > 3) {
		/* N empty files in DIR, quickly (a flood). */
		int dir = open(argv[2], O_RDONLY | O_DIRECTORY), n = atoi(argv[3]);
		char name[32];

		for (int i = 0; dir >= 0 && i < n; i++) {
			int fd;

			snprintf(name, sizeof(name), "flood-%07d", i);
			fd = openat(dir, name, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
			if (fd < 0)
				return report(-1);
			close(fd);
		}
		return report(dir);
	}
	if (!strcmp(what, "tree") && argc > 5) {
		/* In DIR: WIDTH directories holding a file each, and a chain of
		 * DEPTH directories with a symlink to LINK at its bottom. */
		int fd = open(argv[2], O_RDONLY | O_DIRECTORY | O_CLOEXEC), next;
		int depth = atoi(argv[3]), width = atoi(argv[4]);
		char name[32];

		for (int i = 0; fd >= 0 && i < width; i++) {
			snprintf(name, sizeof(name), "w%07d", i);
			if (mkdirat(fd, name, 0755) < 0)
				return report(-1);
			snprintf(name, sizeof(name), "w%07d/f", i);
			next = openat(fd, name, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
			if (next < 0)
				return report(-1);
			close(next);
		}
		for (int i = 0; fd >= 0 && i < depth; i++) {
			if (mkdirat(fd, "d", 0755) < 0)
				return report(-1);
			next = openat(fd, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			close(fd);
			fd = next;
		}
		return report(fd < 0 ? -1 : symlinkat(argv[5], fd, "out"));
	}
	if (!strcmp(what, "alloc") && argc > 2) {
		/* Touch every page, so the allocation is real. */
		size_t mb = (size_t)atol(argv[2]);
		char *p = malloc(mb << 20);

		if (!p) {
			errno = ENOMEM;
			puts("ENOMEM");
			return 1;
		}
		memset(p, 1, mb << 20);
		return report(0);
	}
	if (!strcmp(what, "open-files") && argc > 2) {
		int want = atoi(argv[2]), n = 0;

		while (n < want && open("/dev/null", O_RDONLY) >= 0)
			n++;
		if (n < want)
			printf("opened %d\n", n);
		return report(n == want ? 0 : -1);
	}
	if (!strcmp(what, "tcp-connect") && argc > 3) {
		struct sockaddr_in sin = {.sin_family = AF_INET};
		int fd = socket(AF_INET, SOCK_STREAM, 0);

		sin.sin_port = htons((uint16_t)atoi(argv[3]));
		inet_pton(AF_INET, argv[2], &sin.sin_addr);
		return report(connect(fd, (struct sockaddr *)&sin, sizeof(sin)));
	}
#if defined(__x86_64__)
	/* i386 numbers: getpid 20, unshare 310, mount 21, keyctl 288, socketcall 102. */
	if (!strcmp(what, "i386-getpid"))
		return report(int80(20, 0, 0, 0));
	if (!strcmp(what, "i386-unshare"))
		return report(int80(310, CLONE_NEWUSER, 0, 0));
	if (!strcmp(what, "i386-mount"))
		return report(int80(21, 0, 0, 0));
	if (!strcmp(what, "i386-keyctl"))
		return report(int80(288, 0, -3, 0));
	if (!strcmp(what, "i386-socketcall-netlink")) {
		/* socketcall(SYS_SOCKET, {AF_NETLINK, SOCK_RAW, NETLINK_ROUTE}), refused
		 * whatever the family: the array must sit below 4 GiB for the 32-bit ABI
		 * to read it. */
		uint32_t *args = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				      MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);

		args[0] = AF_NETLINK;
		args[1] = SOCK_RAW;
		args[2] = 0;
		return report(int80(102, 1, (long)(uintptr_t)args, 0));
	}
	if (!strcmp(what, "i386-socket-netlink"))
		return report(int80(359, AF_NETLINK, SOCK_RAW, NETLINK_AUDIT));
	if (!strcmp(what, "i386-socket-netlink-route"))
		return report(int80(359, AF_NETLINK, SOCK_RAW, NETLINK_ROUTE));
	if (!strcmp(what, "i386-socket-inet"))
		return report(int80(359, AF_INET, SOCK_STREAM, 0));
#endif
	fprintf(stderr, "probe: unknown probe '%s'\n", what);
	return 2;
}
