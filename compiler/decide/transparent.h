/*
 * transparent.h - transparent egress (Linux): what the sandbox's resolver
 * and listeners are, decided once.
 *
 * For clients that ignore the proxy variables (Node's fetch, Python's
 * http.client, a raw socket), the sandbox's /etc/resolv.conf names a
 * resolver inside the sandbox that gives every name an address of its own
 * on the sandbox's loopback, and omnibox-init listens on the ports the
 * egress rules name.  A connection to such an address reaches the proxy as
 * NAME:PORT, where the rules decide it as they decide a CONNECT.  The
 * emitter writes the ports and the files into the bwrap argv, omnibox-run
 * writes the files, omnibox-init binds the ports, --explain names them.
 * Pure.
 */
#ifndef OMNIBOX_DECIDE_TRANSPARENT_H
#define OMNIBOX_DECIDE_TRANSPARENT_H

#include <stddef.h>

#include "../../grammar/egress.h"

/* The sandbox's resolver (UDP port 53 there), as resolv.conf names it, and
 * as omnibox-init binds it (host order). */
#define TRANSPARENT_DNS_ADDR "127.0.0.53"
#define TRANSPARENT_DNS_V4 0x7f000035u

/* The files omnibox-run writes in the scratch dir and binds over /etc's. */
#define TRANSPARENT_RESOLV_CONF "omnibox-resolv.conf"
#define TRANSPARENT_HOSTS "omnibox-hosts"

/* At most this many distinct ports are listened on (a located error beyond). */
#define TRANSPARENT_MAX_PORTS 64

/*
 * The ports the rules name, ascending and each once, into OUT (room for
 * TRANSPARENT_MAX_PORTS): a tcp rule's port, an HTTP rule's port, or 443
 * and 80 for an HTTP rule without one.  Returns how many, or -1 when they
 * are more than TRANSPARENT_MAX_PORTS (*TOO_MANY then is the first rule
 * over the limit).
 */
int transparent_ports(const struct egress_rule *rules, size_t n, unsigned out[], size_t *too_many);

/*
 * The ports of transparent_ports() as omnibox-init's --transparent takes
 * them: "80,443" (at most TRANSPARENT_MAX_PORTS * 6 bytes).
 */
void transparent_ports_text(const unsigned ports[], int n, char *buf, size_t cap);

/*
 * The sandbox's /etc/resolv.conf, and its /etc/hosts with HOSTNAME (the
 * machine's name at launch, NULL or an unsafe name: left out) on
 * 127.0.1.1 beside localhost.  Into BUF (CAP bytes, NUL-terminated).
 */
void transparent_resolv_conf(char *buf, size_t cap);
void transparent_hosts(const char *hostname, char *buf, size_t cap);

#endif
