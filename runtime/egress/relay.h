/*
 * relay.h - the loopback relay inside the sandbox.
 *
 * The sandbox has its own network namespace with nothing but `lo`, so the
 * agent cannot reach the egress proxy's Unix socket through TCP.  The
 * relay listens on 127.0.0.1:PORT inside the sandbox (HTTP_PROXY points
 * there) and forwards each TCP connection, byte for byte in both
 * directions, to the proxy's Unix socket (bind-mounted into the sandbox
 * with the scratch dir).  It decides nothing: all policy is in the proxy.
 *
 * It runs in omnibox-init, a static binary, so it uses only libc: one
 * event loop (epoll and splice on Linux; poll and copies on macOS, where
 * omnibox-init runs it under sandbox-exec), non-blocking sockets,
 * half-close forwarded as shutdown(), and a buffer only while a
 * destination is slower than its source, so 10,000 idle connections cost
 * a few hundred bytes each.
 */
#ifndef OMNIBOX_RELAY_H
#define OMNIBOX_RELAY_H

#include <stddef.h>
#include <stdint.h>

/*
 * Bind 127.0.0.1:PORT (0: any free port) and listen, so connections queue
 * before the agent starts.  Returns the listening socket (non-blocking,
 * close-on-exec), or -1 with a message in ERR.
 */
int relay_listen(uint16_t port, char *err, size_t errlen);

/* The port LISTEN_FD is bound to, or 0. */
uint16_t relay_port(int listen_fd);

/* Make relay_run() use poll(2), as it always does off Linux (for tests). */
void relay_use_poll(void);

/*
 * Forward every connection accepted on LISTEN_FD to the Unix socket at
 * SOCKET_PATH, forever.  Raises RLIMIT_NOFILE to its hard limit.  Returns
 * only when the loop itself cannot run: -1 with a message in ERR ("relay:
 * WHAT: REASON"); a connection that fails is closed and the rest go on.
 */
int relay_run(int listen_fd, const char *socket_path, char *err, size_t errlen);

/*
 * The whole life of the relay's own process (forked for it): relay_run(),
 * then, since that returns only when it cannot run, its message on stderr
 * ("omnibox relay: ...") and _exit(1).
 */
void relay_serve(int listen_fd, const char *socket_path) __attribute__((noreturn));

#endif
