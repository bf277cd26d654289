/*
 * init_steps.c - the steps of omnibox-init (init_steps.h).
 *
 * bwrap starts omnibox-init as PID 1 of the sandbox's PID namespace.  These
 * bind the transparent egress sockets while the capability they need is
 * there (the masks are init_mounts.c's), drop every capability, add
 * the Landlock layer (or, started without bwrap, the full ruleset of
 * --ll-fs), load the seccomp filter turned to report its
 * refusals to a listener (seccomp_load.h), start the egress relay, send a
 * byte and the listener on the ready socket (omnibox-run's proof that
 * bwrap's setup succeeded), start the agent, pass on the signals
 * omnibox-run forwards, reap orphans, and give the agent's status.
 */
#include "runtime/launch/init_steps.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "compiler/base/diag.h"
#include "runtime/egress/fakedns.h"
#include "runtime/egress/handoff.h"
#include "runtime/egress/relay.h"
#include "runtime/launch/fds.h"
#include "runtime/launch/landlock.h"
#include "runtime/launch/rlimit.h"
#include "runtime/launch/seccomp_load.h"

/* The agent is gone: so is the relay (nobody is left to use it). */
/*
 * Full mode, no PID namespace: every process left below this one (a
 * subreaper: the agent's orphans come here) killed and reaped, round after
 * round until none is left, as the kernel does for a namespace's PID 1.
 */
static void
kill_tree(void)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/task/%d/children", (int)getpid());
	for (;;) {
		FILE *f = fopen(path, "re");
		int pid, n = 0;

		if (!f)
			break;
		while (fscanf(f, "%d", &pid) == 1) {
			kill(pid, SIGKILL);
			n++;
		}
		fclose(f);
		if (!n || waitpid(-1, NULL, __WALL) < 0)
			break;
		while (waitpid(-1, NULL, __WALL | WNOHANG) > 0)
			;
	}
}

static int
agent_done(struct init_state *st, int status)
{
	if (st->keeper)
		kill_tree();
	if (st->relay_pid > 0) {
		kill(st->relay_pid, SIGKILL);
		waitpid(st->relay_pid, NULL, 0);
	}
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

static const int forwarded[] = {SIGINT,	 SIGTERM,  SIGHUP,  SIGQUIT, SIGUSR1,
				SIGUSR2, SIGWINCH, SIGCONT, SIGALRM, SIGTSTP};

/* A limit that cannot be set fails the launch: the policy asked for it. */
static int
set_limit(int resource, const char *value)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(value, &end, 10);
	if (errno || *end || end == value) {
		errno = EINVAL;
		return -1;
	}
	return rlimit_set(resource, v);
}

/*
 * The ports of --transparent ARG into PORTS (*N of them): decimal, 1 to
 * 65535, no leading zero, comma-separated, no two alike, at most
 * RELAY_MAX_TRANSPARENT.  0, or -1 with the message in ERR.
 */
static int
parse_ports(const char *arg, uint16_t *ports, size_t *n, char *err, size_t errlen)
{
	const char *s = arg;

	*n = 0;
	for (;;) {
		unsigned long port = 0;
		const char *start = s;

		while (*s >= '0' && *s <= '9' && s - start < 6)
			port = port * 10 + (unsigned long)(*s++ - '0');
		if (s == start || *start == '0' || port > 65535 || (*s && *s != ','))
			return diag_fail(err, errlen,
					 "--transparent %s: not a list of ports (1 to 65535, "
					 "separated by commas); nothing ran",
					 arg);
		for (size_t k = 0; k < *n; k++)
			if (ports[k] == port)
				return diag_fail(err, errlen,
						 "--transparent %s: port %lu twice; nothing ran",
						 arg, port);
		if (*n == RELAY_MAX_TRANSPARENT)
			return diag_fail(err, errlen,
					 "--transparent %s: more than %d ports; nothing ran", arg,
					 RELAY_MAX_TRANSPARENT);
		ports[(*n)++] = (uint16_t)port;
		if (!*s)
			return 0;
		s++;
	}
}

int
init_bind_transparent(const struct init_options *io, struct init_state *st, char *err,
		      size_t errlen)
{
	uint16_t ports[RELAY_MAX_TRANSPARENT];
	char why[256];
	size_t n;

	if (!io->transparent_arg)
		return 0;
#if !defined(__linux__)
	return diag_fail(err, errlen, "--transparent: only on Linux; nothing ran");
#endif
	if (!io->relay_port_arg)
		return diag_fail(err, errlen, "--transparent needs --relay; nothing ran");
	if (parse_ports(io->transparent_arg, ports, &n, err, errlen) < 0)
		return -1;
	for (size_t k = 0; k < n; k++)
		if (strtoul(io->relay_port_arg, NULL, 10) == ports[k])
			return diag_fail(
			    err, errlen,
			    "--transparent %s: port %u is the relay's own; nothing ran",
			    io->transparent_arg, ports[k]);
	st->dns_fd = relay_dns_listen(FAKEDNS_RESOLVER, FAKEDNS_PORT, why, sizeof(why));
	for (size_t k = 0; k < n && st->dns_fd >= 0; k++) {
		int fd = relay_listen_any(ports[k], why, sizeof(why));

		if (fd < 0)
			break;
		st->tp_fd[st->n_tp++] = fd;
	}
	if (st->dns_fd >= 0 && st->n_tp == n)
		return 0;
	/* WHY: "relay: ADDR:PORT: REASON". */
	return diag_fail(err, errlen, "--transparent %s: %s%s; nothing ran", io->transparent_arg,
			 why,
			 strstr(why, strerror(EACCES))
			     ? " (a port below 1024 needs CAP_NET_BIND_SERVICE in the namespace "
			       "that owns the network)"
			     : "");
}

#if defined(__linux__)
/*
 * The id that 0 stands for outside in the map at PATH ("0 X 1", bwrap's
 * map for --uid 0 of a launcher other than root): 1 with *OUTSIDE = X; 0
 * for any other map (root's launch: no user namespace, "0 0 4294967295").
 * -1 when it cannot be read.
 */
static int
zero_maps_to(const char *path, unsigned long *outside)
{
	char buf[256], *nl;
	unsigned long inside, count;
	int fd = open(path, O_RDONLY | O_CLOEXEC), n;
	ssize_t len;

	if (fd < 0)
		return -1;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len < 0)
		return -1;
	buf[len] = '\0';
	n = sscanf(buf, " %lu %lu %lu", &inside, outside, &count);
	nl = strchr(buf, '\n');
	return n == 3 && inside == 0 && count == 1 && (!nl || nl[1] == '\0'); /* one line */
}

static int
write_text(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t len = (ssize_t)strlen(text);
	int ok = fd >= 0 && write(fd, text, (size_t)len) == len;

	if (fd >= 0)
		close(fd);
	return ok ? 0 : -1;
}
#endif

#if defined(__linux__)
/* Every capability dropped from the bounding set (needs CAP_SETPCAP), and
 * the set checked empty: 0, or -1 with ERR. */
static int
empty_bounding_set(char *err, size_t errlen)
{
	for (int cap = 0; prctl(PR_CAPBSET_READ, cap, 0, 0, 0) >= 0; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0)
			return diag_fail(err, errlen,
					 "cannot drop capability %d from the bounding set: %s; "
					 "nothing ran",
					 cap, strerror(errno));
	for (int cap = 0, held; (held = prctl(PR_CAPBSET_READ, cap, 0, 0, 0)) >= 0; cap++)
		if (held)
			return diag_fail(err, errlen,
					 "capability %d is left in the bounding set; nothing ran",
					 cap);
	return 0;
}
#endif

int
init_become_launcher(const struct init_options *io, char *err, size_t errlen)
{
#if defined(__linux__)
	unsigned long uid = 0, gid = 0;
	int u, g, pdeath = 0;
	char map[64];

	if (!io->launcher_ids || getuid() != 0)
		return 0;
	u = zero_maps_to("/proc/self/uid_map", &uid);
	g = zero_maps_to("/proc/self/gid_map", &gid);
	if (u < 0 || g < 0)
		return diag_fail(err, errlen, "cannot read this process's user namespace maps: %s; "
					      "nothing ran",
				 strerror(errno));
	if (!u || uid == 0)
		return 0; /* root's own launch: the agent is root, as without egress */
	/* What bwrap does after mounting /dev/pts, done here after the ports:
	 * a nested namespace where the launcher's ids are themselves again.
	 * A change of credentials clears the parent-death signal: set again. */
	if (prctl(PR_GET_PDEATHSIG, &pdeath, 0, 0, 0) < 0 || unshare(CLONE_NEWUSER) < 0 ||
	    write_text("/proc/self/setgroups", "deny") < 0)
		return diag_fail(err, errlen, "cannot make the agent's user namespace: %s; nothing ran",
				 strerror(errno));
	/* A new user namespace starts with a full bounding set: emptied while
	 * this process holds CAP_SETPCAP in it, so nothing of it is left. */
	if (empty_bounding_set(err, errlen) < 0)
		return -1;
	snprintf(map, sizeof(map), "%lu 0 1\n", uid);
	if (write_text("/proc/self/uid_map", map) < 0)
		return diag_fail(err, errlen, "cannot map uid %lu: %s; nothing ran", uid,
				 strerror(errno));
	snprintf(map, sizeof(map), "%lu 0 1\n", gid);
	if (write_text("/proc/self/gid_map", map) < 0)
		return diag_fail(err, errlen, "cannot map gid %lu: %s; nothing ran", gid,
				 strerror(errno));
	if (setresgid((gid_t)gid, (gid_t)gid, (gid_t)gid) < 0 ||
	    setresuid((uid_t)uid, (uid_t)uid, (uid_t)uid) < 0 ||
	    (pdeath && prctl(PR_SET_PDEATHSIG, pdeath, 0, 0, 0) < 0))
		return diag_fail(err, errlen, "cannot become uid %lu, gid %lu: %s; nothing ran", uid,
				 gid, strerror(errno));
	if (getuid() != uid || geteuid() != uid || getgid() != gid || getegid() != gid)
		return diag_fail(err, errlen, "still not uid %lu, gid %lu; nothing ran", uid, gid);
#else
	(void)io;
	(void)err;
	(void)errlen;
#endif
	return 0;
}

#if defined(__linux__)
/* Is CAP in this process's effective set? */
static bool
has_effective(int cap)
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];

	return syscall(SYS_capget, &hdr, data) == 0 &&
	       (data[cap / 32].effective & (1u << (cap % 32)));
}
#endif

int
init_drop_caps(char *err, size_t errlen)
{
#if defined(__linux__)
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];

	/* The kernel drops an ambient capability that leaves the permitted or
	 * the inheritable set, but a kernel without ambient ones (EINVAL) has
	 * none to clear. */
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		return diag_fail(err, errlen,
				 "cannot clear the ambient capabilities: %s; nothing ran",
				 strerror(errno));
	/* With CAP_SETPCAP (bwrap gives it to root's launch, which has no user
	 * namespace of its own), the bounding set emptied first. */
	if (prctl(PR_CAPBSET_READ, CAP_SETPCAP, 0, 0, 0) == 1 && has_effective(CAP_SETPCAP) &&
	    empty_bounding_set(err, errlen) < 0)
		return -1;
	memset(data, 0, sizeof(data));
	if (syscall(SYS_capset, &hdr, data) < 0)
		return diag_fail(err, errlen, "cannot drop the capabilities: %s; nothing ran",
				 strerror(errno));
	hdr = (struct __user_cap_header_struct){.version = _LINUX_CAPABILITY_VERSION_3};
	memset(data, 0xff, sizeof(data));
	if (syscall(SYS_capget, &hdr, data) < 0)
		return diag_fail(err, errlen, "cannot read the capabilities: %s; nothing ran",
				 strerror(errno));
	for (size_t k = 0; k < _LINUX_CAPABILITY_U32S_3; k++)
		if (data[k].effective || data[k].permitted || data[k].inheritable)
			return diag_fail(err, errlen,
					 "capabilities are left after dropping them; nothing ran");
	for (int cap = 0; cap < 64; cap++) {
		int set = prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, cap, 0, 0);

		if (set < 0)
			break; /* past the last capability, or no ambient ones at all */
		if (set)
			return diag_fail(err, errlen,
					 "ambient capability %d is left after clearing them; "
					 "nothing ran",
					 cap);
	}
	/* Without CAP_SETPCAP the bounding set stays: with no_new_privs, an
	 * exec grants nothing of it, even to uid 0. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1)
		return diag_fail(err, errlen, "cannot set no_new_privs: %s; nothing ran",
				 strerror(errno));
#else
	(void)err;
	(void)errlen;
#endif
	return 0;
}

/*
 * The relay, in a child of its own: the listener of PORT_ARG and the
 * transparent sockets of ST (which only it holds from then on).
 */
static int
start_relay(struct init_state *st, const char *port_arg, const char *socket_path, char *err,
	    size_t errlen)
{
	char why[256], *end;
	unsigned long port = strtoul(port_arg, &end, 10);
	struct relay_conf conf = {
	    .socket_path = socket_path, .tp_fd = st->tp_fd, .n_tp = st->n_tp, .dns_fd = st->dns_fd};
	pid_t pid;

	if (*end || port == 0 || port > 65535)
		return diag_fail(err, errlen, "--relay %s: not a port", port_arg);
	conf.listen_fd = relay_listen((uint16_t)port, why, sizeof(why));
	if (conf.listen_fd < 0)
		return diag_fail(err, errlen, "relay: %s", why);
	/* The proxy listens (omnibox-run said so); the agent does not exist
	 * yet: the hand-off socket's path goes, and only the relay holds it. */
	conf.handoff_fd = handoff_take(socket_path);
	conf.handoff = conf.handoff_fd >= 0;
	pid = fork();
	if (pid < 0)
		return diag_fail(err, errlen, "fork: %s", strerror(errno));
	if (pid == 0) {
		if (st->listener_fd >= 0)
			close(st->listener_fd);
		relay_serve_conf(&conf);
	}
	if (conf.handoff)
		close(conf.handoff_fd);
	close(conf.listen_fd);
	for (size_t k = 0; k < st->n_tp; k++)
		close(st->tp_fd[k]);
	st->n_tp = 0;
	if (st->dns_fd >= 0)
		close(st->dns_fd);
	st->dns_fd = -1;
	st->relay_pid = pid;
	return 0;
}

/*
 * The seccomp filter of FD, loaded here: after the masks check and
 * Landlock, which need calls it refuses, before anything of the agent's.
 * FD holds the standalone filter, whose refusals are ERRNO(EPERM).  With
 * a ready socket to send it on, its reporting variant (each of those
 * returns turned into SECCOMP_RET_USER_NOTIF, filter_eperm_to_notify) is
 * loaded with a listener (ST->listener_fd) for omnibox-run to answer the
 * refusals; without, or where the kernel has none, the filter as it came:
 * the refusals fail with EPERM uncounted.  Either way without the
 * branches of the ABIs this machine cannot run (filter_for_abis): the
 * same instructions for every call it can make.  A filter that cannot be
 * loaded stops the launch: the agent never runs without one.
 */
static int
load_filter(struct init_state *st, int fd, bool listener, char *err, size_t errlen)
{
#if !defined(__linux__)
	(void)st;
	(void)fd;
	(void)listener;
	return diag_fail(err, errlen, "--seccomp-fd: no seccomp on this system; nothing ran");
#else
	const unsigned *arches;
	size_t n, n_arches = filter_native_abis(&arches);
	struct sock_filter *prog = NULL, *pruned;
	char why[256];

	if (filter_read(fd, &prog, &n, why, sizeof(why)) < 0) {
		free(prog);
		return diag_fail(err, errlen, "%s; nothing ran", why);
	}
	/* The kernel compiles every instruction it is given: the other
	 * machines' branches, which no call here reaches, are left out. */
	if (n_arches && (pruned = malloc(n * sizeof(*pruned)))) {
		n = filter_for_abis(prog, n, arches, n_arches, pruned);
		free(prog);
		prog = pruned;
	}
	if (filter_install(prog, n, listener, &st->listener_fd, why, sizeof(why)) < 0) {
		free(prog);
		return diag_fail(err, errlen, "%s; nothing ran", why);
	}
	/* Without a listener, omnibox-run sees none come and says so (unless -q). */
	free(prog);
	return 0;
#endif
}

/*
 * Landlock, before anything of the agent's runs: the ABI the launch needs,
 * then the full ruleset of --ll-fs (no bwrap around: Landlock is all there
 * is), or the second layer of --fs-write and --scope.  Without --ll-fs and
 * --ll-min-abi, a kernel without Landlock is the caller's to tell about.
 */
static int
confine_landlock(struct init_options *io, char *why, size_t whylen)
{
	int need = io->ll_min_abi, rc = 0;

	if (io->n_ll_fs && need < 1)
		need = 1;
	if (need && landlock_need_abi(need, why, whylen) < 0)
		rc = -1;
	else if (io->n_ll_fs)
		rc = landlock_confine(io->ll_fs, io->n_ll_fs, io->ll_ports, io->n_ll_ports,
				      io->ll_net_any, why, whylen);
	else if (io->landlock)
		rc = landlock_restrict(io->writable, io->n_writable, io->scope, why, whylen);
	free(io->writable);
	io->writable = NULL;
	free(io->ll_fs);
	io->ll_fs = NULL;
	free(io->ll_ports);
	io->ll_ports = NULL;
	return rc;
}

int
init_confine(struct init_options *io, struct init_state *st, char *err, size_t errlen)
{
	char why[512];

	err[0] = '\0';
	if (confine_landlock(io, why, sizeof(why)) < 0)
		return diag_fail(err, errlen, "%s; nothing ran", why);
	/* A filter asked for is loaded, or nothing runs. */
	if (io->seccomp_arg && io->seccomp_fd <= 2)
		return diag_fail(err, errlen, "--seccomp-fd %s: not a descriptor above 2; nothing ran",
			    io->seccomp_arg);
	if (io->seccomp_arg && load_filter(st, io->seccomp_fd, io->ready_fd > 2, err, errlen) < 0)
		return -1;
	for (size_t k = 0; k < io->n_rl; k++)
		if (set_limit(io->rl[k].resource, io->rl[k].value) < 0)
			return diag_fail(err, errlen, "%s %s: %s; nothing ran", io->rl[k].opt,
				    io->rl[k].value, strerror(errno));
	return 0;
}

/* One byte "g" from omnibox-run on the ready socket: 0; anything else (its end): -1. */
static int
wait_go(int fd)
{
	char c = 0;
	ssize_t n;

	do
		n = read(fd, &c, 1);
	while (n < 0 && errno == EINTR);
	return n == 1 && c == 'g' ? 0 : -1;
}

int
init_announce_ready(const struct init_options *io, struct init_state *st, char *err, size_t errlen)
{
	/* The sandbox is set up: from here on a failure is the command's. */
	if (io->ready_fd > 2) {
		/* The byte that says the sandbox is set up, with the filter's
		 * listener when there is one.  Not sent: omnibox-run then reports
		 * a failed setup, so nothing may run. */
		if (fds_send_byte(io->ready_fd, '1', st->listener_fd) < 0)
			return diag_fail(
			    err, errlen,
			    "cannot tell omnibox-run the sandbox is set up: %s; nothing ran",
			    strerror(errno));
		/* The egress proxy started while the sandbox was set up: the
		 * relay and the agent wait for omnibox-run's word that it listens. */
		if (io->relay_port_arg && wait_go(io->ready_fd) < 0)
			return diag_fail(err, errlen,
					 "the egress proxy did not start; nothing ran");
		close(io->ready_fd);
	}
	/*
	 * The egress relay listens before the agent exists, so its first
	 * connection finds it; it runs in a child of its own, limits and all,
	 * and dies with the namespace when this process exits.
	 */
	if (io->relay_port_arg &&
	    start_relay(st, io->relay_port_arg, io->relay_socket, err, errlen) < 0)
		return -1;
	/*
	 * Only omnibox-run holds the listener now.  If it dies, the kernel
	 * fails each refused call with ENOSYS: refused still.
	 */
	if (st->listener_fd >= 0) {
		close(st->listener_fd);
		st->listener_fd = -1;
	}
	return 0;
}

pid_t
init_start_agent(const struct init_options *io, sigset_t *set, char *err, size_t errlen)
{
	char **argv = io->argv;
	sigset_t old;
	pid_t child;

	/* Take every signal synchronously; the agent gets default dispositions. */
	sigemptyset(set);
	sigaddset(set, SIGCHLD);
	for (size_t k = 0; k < sizeof(forwarded) / sizeof(forwarded[0]); k++)
		sigaddset(set, forwarded[k]);
	sigprocmask(SIG_BLOCK, set, &old);

	/*
	 * --tty: standard input is the sandbox's own terminal (omnibox-run's
	 * pty).  This process leads the session bwrap made, so the terminal
	 * can become its controlling one; the agent gets a process group of its
	 * own in the foreground, and a shell inside has job control.
	 */
	if (io->tty && ioctl(STDIN_FILENO, TIOCSCTTY, 0) < 0)
		return diag_fail(err, errlen, "cannot take the terminal: %s; nothing ran",
			    strerror(errno));
	child = fork();
	if (child < 0)
		return diag_fail(err, errlen, "fork: %s", strerror(errno));
	if (io->tty && child > 0) {
		setpgid(child, child);
		tcsetpgrp(STDIN_FILENO, child);
	}
	if (child == 0) {
		if (io->tty) {
			/* From a background group until it is done: SIGTTOU ignored. */
			signal(SIGTTOU, SIG_IGN);
			setpgid(0, 0);
			tcsetpgrp(STDIN_FILENO, getpid());
			signal(SIGTTOU, SIG_DFL);
		}
		sigprocmask(SIG_SETMASK, &old, NULL);
		/* Without --exec (macOS), ARGV[0] on the PATH sandbox-exec passed on. */
		if (io->exec_path)
			execv(io->exec_path, argv);
		else
			execvp(argv[0], argv);
		fprintf(stderr, "omnibox-init: cannot run %s: %s\n",
			io->exec_path ? io->exec_path : argv[0], strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}
	return child;
}

int
init_wait_agent(struct init_state *st, const sigset_t *set, pid_t child)
{
	for (;;) {
		int sig;

		if (sigwait(set, &sig) != 0)
			continue;
		/* Full mode: omnibox-run is gone (its death signal): so is the sandbox. */
		if (st->keeper && getppid() != st->keeper) {
			kill_tree();
			return 128 + SIGKILL;
		}
		if (sig != SIGCHLD) {
			kill(child, sig);
			continue;
		}
		for (;;) {
			int status;
			pid_t pid = waitpid(-1, &status, WNOHANG);

			if (pid <= 0)
				break;
			if (pid == st->relay_pid) {
				/* Egress fails closed from here on: nothing listens. */
				fprintf(stderr, "omnibox-init: the egress relay stopped\n");
				st->relay_pid = 0;
				continue;
			}
			if (pid != child)
				continue; /* an orphan, reaped */
			if (WIFEXITED(status) || WIFSIGNALED(status))
				return agent_done(st, status);
		}
	}
}

int
init_hold_tree(struct init_state *st, char *err, size_t errlen)
{
	st->keeper = getppid();
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0 ||
	    prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0) < 0)
		return diag_fail(err, errlen, "cannot hold the sandbox's processes: %s; nothing ran",
				 strerror(errno));
	/* omnibox-run ended before the death signal was set. */
	if (getppid() != st->keeper)
		return diag_fail(err, errlen, "omnibox-run is gone; nothing ran");
	return 0;
}
