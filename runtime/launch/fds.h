/*
 * fds.h - the descriptor table of a launch: nothing the caller left open
 * reaches the sandbox, and the cleanup processes hold only what they need.
 */
#ifndef OMNIBOX_FDS_H
#define OMNIBOX_FDS_H

#include <stddef.h>
#include <sys/types.h>

/* Mark every descriptor from 3 up close-on-exec (what omnibox-run inherited). */
void fds_cloexec_from(int lowest);

/*
 * Close every descriptor from 3 up that is not in KEEP (N of them), and
 * clear close-on-exec on those that are.  For a child about to exec: the
 * program gets 0, 1, 2 and KEEP, nothing else.
 */
void fds_keep_only(const int *keep, size_t n);

/*
 * For a cleanup process just forked from omnibox-run: its own process group
 * (a Ctrl-C is for the agent), terminal signals ignored, standard streams
 * on /dev/null, and every descriptor closed but the N of FDS, which become
 * 3, 4, ... (FDS is updated).  FDS[0] is the pipe whose end of file says
 * omnibox-run is gone.
 */
void launch_detach(int *fds, size_t n);

/* A sealed memfd holding DATA: readable by bwrap, unchangeable by anyone.
 * Close-on-exec; -1 with errno on failure. */
int fds_sealed_memfd(const char *name, const void *data, size_t len);

/* BYTE on the socket SOCK, with the descriptor FD (SCM_RIGHTS) unless it
 * is -1; no SIGPIPE.  0, or -1 with errno. */
int fds_send_byte(int sock, char byte, int fd);

/*
 * One byte from the socket SOCK into *BYTE, with the descriptor sent with
 * it (close-on-exec) into *FD, or -1 there when none came.  FLAGS:
 * recvmsg()'s (MSG_DONTWAIT).  What recvmsg() returned: 1, 0 at the end,
 * or -1 with errno.
 */
ssize_t fds_recv_byte(int sock, char *byte, int *fd, int flags);

#endif
