/*
 * relay.h - the loopback relay inside the sandbox.
 *
 * The sandbox has its own network namespace with nothing but `lo`, so the
 * agent cannot reach the egress proxy's Unix socket through TCP.  The
 * relay listens on 127.0.0.1:PORT inside the sandbox (HTTP_PROXY points
 * there) and hands each TCP connection to the proxy over the hand-off
 * socket beside the proxy's Unix socket (handoff.h; both bind-mounted into
 * the sandbox with the scratch dir), keeping nothing of it.  Where there is
 * no hand-off socket to reach, it forwards the bytes instead, in both
 * directions, to the proxy's Unix socket.  It decides nothing: all policy
 * is in the proxy.
 *
 * It runs in omnibox-init, a static binary, so it uses only libc: one
 * event loop (epoll and splice on Linux; poll and copies on macOS, where
 * omnibox-init runs it under sandbox-exec), non-blocking sockets,
 * half-close forwarded as shutdown(), and a buffer only while a
 * destination is slower than its source, so 10,000 idle connections cost
 * a few hundred bytes each.
 *
 * Transparent egress, for clients that ignore the proxy variables: the
 * sandbox's resolver is the relay's DNS socket (127.0.0.53:53), which
 * gives every host name an address of its own in 127.128.0.0/16
 * (fakedns.h), and the relay listens on 0.0.0.0:P for each transparent
 * port P.  `lo` routes all of 127.0.0.0/8 here, so a connection to
 * 127.128.0.7:443 is accepted on the listener of 443, and its local
 * address names the host.  The relay then connects to the proxy's socket
 * as for any client and, before a single byte of the client's, writes
 *
 *   CONNECT NAME:PORT HTTP/1.1\r\n
 *   Host: NAME:PORT\r\n
 *   Omnibox-Transparent: 1\r\n
 *   \r\n
 *
 * (NAME lowercase without a trailing dot, PORT the listener's), then
 * relays both ways as for any client.  It reads nothing of the proxy's
 * answer: the proxy sends none when it lets the connection through and
 * closes it when it does not.  A connection to an address that names no
 * host (127.0.0.1, an address of the block not given yet) is closed at
 * once and the proxy never hears of it.  Here too all policy is the
 * proxy's: the names and addresses only say where a client meant to go.
 */
#ifndef OMNIBOX_RELAY_H
#define OMNIBOX_RELAY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "compiler/decide/transparent.h"

/*
 * Bind 127.0.0.1:PORT (0: any free port) and listen, so connections queue
 * before the agent starts.  Returns the listening socket (non-blocking,
 * close-on-exec), or -1 with a message in ERR.
 */
int relay_listen(uint16_t port, char *err, size_t errlen);

/*
 * As relay_listen(), on 0.0.0.0:PORT: a transparent listener.  Inside the
 * sandbox there is only `lo`, so this is loopback still, and one listener
 * takes the port's connections to every address of 127.0.0.0/8.
 */
int relay_listen_any(uint16_t port, char *err, size_t errlen);

/*
 * A UDP socket bound to ADDR:PORT (ADDR in host order; PORT 0: any free
 * port), non-blocking and close-on-exec: the DNS socket.  -1 with a
 * message in ERR.
 */
int relay_dns_listen(uint32_t addr, uint16_t port, char *err, size_t errlen);

/* The port LISTEN_FD (any IPv4 socket) is bound to, or 0. */
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

#define RELAY_MAX_TRANSPARENT TRANSPARENT_MAX_PORTS

/* What relay_run_conf() serves. */
struct relay_conf {
	int listen_fd;		 /* clients that use HTTP(S)_PROXY (relay_listen()), or -1 */
	const char *socket_path; /* the proxy's Unix socket */
	const int *tp_fd;	 /* the transparent listeners (relay_listen_any()) */
	size_t n_tp;		 /* at most RELAY_MAX_TRANSPARENT */
	int dns_fd;		 /* the DNS socket (relay_dns_listen()), or -1 */
	/* On the host's loopback (linux_landlock: no network namespace around
	 * it), only connections from processes of user UID are relayed: the
	 * proxy adds the policy's credentials, and another user of the machine
	 * must not reach them.  (Off: every connection, as in the sandbox's own
	 * network namespace, where only the sandbox can connect.) */
	bool only_uid;
	uid_t uid;
	/* Hand each connection to the proxy over HANDOFF_FD (handoff_take())
	 * instead of forwarding its bytes.  (Off: forward.) */
	bool handoff;
	int handoff_fd;
};

/* As relay_run(), with transparent listeners and the DNS socket that names their addresses. */
int relay_run_conf(const struct relay_conf *conf, char *err, size_t errlen);

/*
 * The whole life of the relay's own process (forked for it): relay_run(),
 * then, since that returns only when it cannot run, its message on stderr
 * ("omnibox relay: ...") and _exit(1).
 */
void relay_serve(int listen_fd, const char *socket_path) __attribute__((noreturn));
/* The same, relaying only the connections of user UID's processes (relay_conf.only_uid),
 * handed over by HANDOFF_FD (-1: none, the bytes forwarded). */
void relay_serve_uid(int listen_fd, const char *socket_path, int handoff_fd, uid_t uid)
    __attribute__((noreturn));
void relay_serve_conf(const struct relay_conf *conf) __attribute__((noreturn));

#endif
