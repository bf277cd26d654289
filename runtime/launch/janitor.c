/*
 * janitor.c - the cleanup process of a launch (janitor.h).
 */
#include "runtime/launch/janitor.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/launch/fds.h"
#include "runtime/launch/rlimit.h"

/* What the janitor was told of the scratch dir made after it started
 * (janitor_scratch_name(), janitor_scratch_made()). */
struct told {
	int dirfd;		     /* its parent, -1 until named */
	char name[JANITOR_NAME_MAX]; /* its name there */
	bool made;		     /* and its device and inode: */
	dev_t dev;
	ino_t ino;
	char moved[JANITOR_NAME_MAX]; /* the name the scratch dir was given at the end, or "" */
	bool cleaned;		      /* omnibox-run removed its placeholders itself */
};

/* N bytes of the stream READ_FD into BUF: 0, or -1 (its end, or an error). */
static int
read_exact(int read_fd, void *buf, size_t n)
{
	for (size_t got = 0; got < n;) {
		ssize_t r = read(read_fd, (char *)buf + got, n - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return 0;
}

/* One message of omnibox-run's, byte C and descriptor FD come, the rest of
 * it read from READ_FD into *GROUP, *NS or *TOLD.  The check after the run
 * done (the byte of janitor_checked())?  Released (janitor_release()), it
 * exits. */
static bool
take_message(int read_fd, char c, int fd, pid_t *group, int *ns, struct told *told)
{
	unsigned char len;

	switch (c) {
	case 'r':
		_exit(0);
	case 'g': /* and the pid, written at once (a stream keeps them in order) */
		if (read_exact(read_fd, group, sizeof(*group)) < 0)
			*group = 0;
		return false;
	case 'n': /* the scratch dir's parent, and then its name's length and name */
		if (fd < 0 || read_exact(read_fd, &len, 1) < 0 || len >= sizeof(told->name) ||
		    read_exact(read_fd, told->name, len) < 0) {
			if (fd >= 0)
				close(fd);
			return false;
		}
		told->name[len] = '\0';
		if (told->dirfd >= 0)
			close(told->dirfd);
		told->dirfd = fd;
		told->made = false;
		return false;
	case 'm': /* its new name, and its length first */
		if (read_exact(read_fd, &len, 1) == 0 && len < sizeof(told->moved) &&
		    read_exact(read_fd, told->moved, len) == 0)
			told->moved[len] = '\0';
		else
			told->moved[0] = '\0';
		return false;
	case 'c':
		told->cleaned = true;
		return false;
	case 's': /* made: its device and inode */
		told->made = read_exact(read_fd, &told->dev, sizeof(told->dev)) == 0 &&
			     read_exact(read_fd, &told->ino, sizeof(told->ino)) == 0;
		return false;
	default: /* the check's byte, with the sandbox's mount namespace */
		if (fd >= 0) {
			if (*ns >= 0)
				close(*ns);
			*ns = fd;
		}
		return true;
	}
}

/* In the janitor: wait for the end of the socket READ.  Did the byte saying
 * the check after the run is done come first?  *GROUP: bwrap's process
 * group, if named (0: none); *NS: the sandbox's mount namespace, if sent. */
static bool
wait_for_end(int read_fd, pid_t *group, int *ns, struct told *told)
{
	bool checked = false;
	ssize_t got;
	char c;
	int fd;

	*group = 0;
	while ((got = fds_recv_byte(read_fd, &c, &fd, 0)) != 0) {
		if (got < 0)
			break;
		checked |= take_message(read_fd, c, fd, group, ns, told);
	}
	return checked;
}

/*
 * The scratch dir named before it was made, when omnibox-run went before
 * it said the directory was made: removed if it is one, ours, and empty
 * (made a moment ago, nothing can be in it); never followed.
 */
static void
remove_named(const struct told *told)
{
	struct stat st;

	if (told->dirfd >= 0 && fstatat(told->dirfd, told->name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISDIR(st.st_mode) && st.st_uid == geteuid())
		unlinkat(told->dirfd, told->name, AT_REMOVEDIR);
}

static void __attribute__((noreturn))
janitor_main(int *keep, size_t n, const struct host_entry *scratch, struct launch_plan *plan,
	     const char *extra_dir)
{
	struct host_entry own = *scratch;
	struct told told = {.dirfd = -1};
	pid_t group;
	int ns = -1;

	/*
	 * Hold nothing of omnibox-run's (not its terminal, not bwrap's pipes)
	 * but the directories of what it removes: by those descriptors, never
	 * by a path the agent could re-point.
	 */
	launch_detach(keep, n);
	/* Its own limits, not what omnibox-run was left with; the removal needs
	 * few descriptors anyway, however deep the tree (host.h). */
	rlimit_raise_nofile();
	own.dirfd = keep[1]; /* -1 when there was none */
	for (size_t i = 0; i < plan->n_placeholders; i++)
		plan->placeholders[i].dirfd = keep[2 + i];
	/* No word from omnibox-run before it went: it was killed before its own
	 * check after the run, so the repositories the sandbox made are set
	 * aside here (once the sandbox is gone), silently. */
	bool checked = wait_for_end(keep[0], &group, &ns, &told);

	/* Made after this process started: the directory it was told of. */
	if (own.dirfd < 0 && told.made) {
		own = (struct host_entry){.dirfd = told.dirfd,
					  .name = told.name,
					  .dev = told.dev,
					  .ino = told.ino,
					  .is_dir = true};
		told.dirfd = -1;
	}

	/* The sandbox's mounts, kept from omnibox-run's run: they go here, not
	 * on the way of the command's caller (see janitor_checked()). */
	if (ns >= 0)
		close(ns);
	if (!checked) {
		FILE *null = fopen("/dev/null", "we");

		/* bwrap died with omnibox-run, but the child it cloned takes no
		 * death signal from it until let go, which a killed bwrap never
		 * does: that child, still in bwrap's group, would wait forever
		 * (holding the output of whoever ran omnibox-run).  The group's
		 * id is bwrap's pid: no other group has it while one of the two
		 * lives, and pids are given out in turn, so not again this soon. */
		if (group > 0)
			kill(-group, SIGKILL);
		if (null) {
			usleep(200000);
			launch_quarantine(plan, null);
			fclose(null);
		}
	}
	if (extra_dir)
		rmtree(extra_dir);
	/* The sandbox dies with omnibox-run (--die-with-parent), possibly still
	 * writing for a moment: retry until the tree is gone. */
	for (int i = 0; own.dirfd >= 0 && i < 50; i++) {
		if (host_remove(&own, true, true) == 0)
			break;
		usleep(40000);
	}
	/* Moved out of the way as omnibox-run ended (janitor_scratch_moved()):
	 * by its new name too (the same directory: device and inode). */
	for (int i = 0; own.dirfd >= 0 && told.moved[0] && i < 50; i++) {
		own.name = told.moved;
		if (host_remove(&own, true, true) == 0)
			break;
		usleep(40000);
	}
	remove_named(&told);
	/* Not again what omnibox-run removed: the next launch may have made
	 * its own by the same name, and the file system may have given it the
	 * freed inode's number. */
	if (!told.cleaned)
		launch_cleanup(plan);
	_exit(0);
}

int
janitor_start(const struct host_entry *scratch, struct launch_plan *plan, const char *extra_dir)
{
	int sv[2], *keep;
	size_t n = 0;
	pid_t pid;

	/* A socket: the check's byte may bring a descriptor. */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return -1;
	keep = calloc(2 + plan->n_placeholders, sizeof(*keep));
	if (!keep) {
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	keep[n++] = sv[0];
	keep[n++] = scratch->dirfd;
	for (size_t i = 0; i < plan->n_placeholders; i++)
		keep[n++] = plan->placeholders[i].dirfd;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		free(keep);
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	if (pid == 0)
		janitor_main(keep, n, scratch, plan, extra_dir);
	free(keep);
	close(sv[0]);
	return sv[1];
}

void
janitor_sandbox(int fd, pid_t group)
{
	unsigned char msg[1 + sizeof(pid_t)] = {'g'};

	/* Nothing to say if it fails: the janitor then kills nothing. */
	memcpy(msg + 1, &group, sizeof(pid_t));
	(void)!write(fd, msg, sizeof(msg));
}

void
janitor_release(int fd)
{
	(void)!write(fd, "r", 1);
	close(fd);
}

void
janitor_checked(int fd, int mnt_ns)
{
	if (fds_send_byte(fd, '\0', mnt_ns) < 0)
		fprintf(stderr, "omnibox-run: warning: cannot tell the cleanup process the run is "
				"over: %s\n",
			strerror(errno));
}

/* BYTE (with DIRFD, or -1), then NAME's length and NAME, to the janitor. */
static int
send_name(int fd, char byte, int dirfd, const char *name)
{
	size_t len = strlen(name);
	unsigned char msg[2 + JANITOR_NAME_MAX] = {(unsigned char)byte};

	if (len >= JANITOR_NAME_MAX)
		return errno = ENAMETOOLONG, -1;
	msg[1] = (unsigned char)len;
	memcpy(msg + 2, name, len);
	if (dirfd >= 0)
		return fds_send_byte(fd, byte, dirfd) < 0 ||
			       write(fd, msg + 1, 1 + len) != (ssize_t)(1 + len)
			   ? -1
			   : 0;
	return write(fd, msg, 2 + len) == (ssize_t)(2 + len) ? 0 : -1;
}

int
janitor_scratch_name(int fd, int dirfd, const char *name)
{
	return send_name(fd, 'n', dirfd, name);
}

int
janitor_scratch_moved(int fd, const char *name)
{
	return send_name(fd, 'm', -1, name);
}

int
janitor_scratch_made(int fd, const struct host_entry *scratch)
{
	unsigned char msg[1 + sizeof(dev_t) + sizeof(ino_t)] = {'s'};

	memcpy(msg + 1, &scratch->dev, sizeof(dev_t));
	memcpy(msg + 1 + sizeof(dev_t), &scratch->ino, sizeof(ino_t));
	return write(fd, msg, sizeof(msg)) == (ssize_t)sizeof(msg) ? 0 : -1;
}

void
janitor_cleaned(int fd)
{
	(void)!write(fd, "c", 1);
}
