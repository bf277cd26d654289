/*
 * handoff.h - the relay hands each connection it accepts to the proxy.
 *
 * The relay inside the sandbox accepts the agent's TCP connections (to the
 * proxy's port, or to a transparent listener).  Rather than copy every byte
 * between that connection and the proxy's socket, it passes the connection
 * itself: one datagram on a Unix socket beside the proxy's own (the proxy's
 * socket path with HANDOFF_SUFFIX), carrying the descriptor (SCM_RIGHTS)
 * and the bytes the proxy is to read before anything the client sends (a
 * transparent connection's CONNECT preamble, relay.h).  From then on the
 * relay holds nothing of the connection, and each byte crosses one process.
 *
 * The hand-off socket's path is gone before the agent starts: whoever
 * starts the relay connects it and unlinks the path (handoff_take()), so
 * the relay's connected socket is the only way to it.  That matters: a
 * passed descriptor shares its open file description with the sender's
 * copy, and a sender that kept one could clear O_NONBLOCK under the
 * proxy, or set a lingering close on it, and so block the proxy.  The
 * relay keeps no copy (it closes the connection once it is sent).  The
 * proxy still takes from a datagram only one connected stream socket and
 * the bytes to read first; anything else is closed and dropped.
 *
 * Only libc: omnibox-init (static) sends, omnibox-proxy receives.
 */
#ifndef OMNIBOX_HANDOFF_H
#define OMNIBOX_HANDOFF_H

#include <stddef.h>

#define HANDOFF_SUFFIX ".fd"
/* The most a datagram carries besides its descriptor. */
#define HANDOFF_PREAMBLE_MAX 1024

/* The hand-off socket's path for the proxy's SOCKET_PATH, into OUT (CAP
 * bytes).  0, or -1 when it would not fit a Unix socket address. */
int handoff_path(const char *socket_path, char *out, size_t cap);

/* The proxy's end: a datagram socket bound at PATH (a stale socket there is
 * replaced), mode 0600, non-blocking, close-on-exec.  -1 with errno set. */
int handoff_listen(const char *path);

/* The relay's end: connected to PATH, blocking, close-on-exec.  -1 with
 * errno set (ENOENT: no proxy there takes hand-offs). */
int handoff_connect(const char *path);

/*
 * The relay's end for the proxy whose socket is SOCKET_PATH: connected to
 * the hand-off socket beside it, whose path is then unlinked, so that no
 * one else can send to it.  Called before the agent starts.  -1 with errno
 * set when there is none (the relay then forwards bytes).
 */
int handoff_take(const char *socket_path);

/* Pass FD (which the caller still closes) and the N bytes of PRE, without
 * waiting (a full queue is EAGAIN).  0, or -1 with errno set. */
int handoff_send(int chan, int fd, const char *pre, size_t n);

/*
 * The next hand-off waiting on CHAN: 1 with the descriptor in *FD and the
 * bytes to read first in BUF (*N of them, BUF holding HANDOFF_PREAMBLE_MAX);
 * 0 when none is waiting; 2 when a datagram was not a hand-off (whatever it
 * carried is closed: go on reading); -1 with errno set.
 */
int handoff_recv(int chan, int *fd, char *buf, size_t *n);

#endif
