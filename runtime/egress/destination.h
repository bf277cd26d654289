/*
 * destination.h - which addresses the egress proxy may connect to.
 *
 * An allowed host name says nothing about where it resolves: a wildcard
 * rule for a domain the agent controls can point at 127.0.0.1, the cloud
 * metadata service or the host's private network (DNS rebinding).  So the
 * proxy resolves once, checks every address against the table of
 * spec/egress.md ("Destinations") and connects only to a checked address.
 * The table and the rules for literal hosts are compiler/decide/address.h's;
 * these are the same over socket address types.
 *
 * No DNS, no sockets.
 */
#ifndef OMNIBOX_DESTINATION_H
#define OMNIBOX_DESTINATION_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

/*
 * Why the address at SA must not be connected to, as a static string
 * naming the range ("127.0.0.0/8 (loopback)"), or NULL when it may be.
 * Families other than AF_INET and AF_INET6 are always refused.
 */
const char *dest_blocked_reason(const struct sockaddr *sa);

/* The same for a raw IPv4 (network byte order) or IPv6 address. */
const char *dest_blocked_ipv4(const struct in_addr *a);
const char *dest_blocked_ipv6(const struct in6_addr *a);

enum dest_host_kind {
	DEST_HOST_NAME, /* a DNS name: resolve it */
	DEST_HOST_IPV4, /* a dotted-quad IPv4 literal: *addr holds it, no DNS */
	DEST_HOST_BAD,	/* refuse: *why says why */
};

/*
 * Classify the request host HOST/LEN (already known to pass
 * egress_host_is_safe()).  Only canonical dotted-quad literals are
 * addresses; anything a C library or a browser might read as an IPv4
 * address in another notation ("2130706433", "0x7f.1", "017700000001",
 * "127.1", "127.000.0.1") is refused rather than sent to DNS as a name,
 * as is any name whose last label is numeric (no real top-level domain
 * is).
 */
enum dest_host_kind dest_classify_host(const char *host, size_t len, struct in_addr *addr,
				       const char **why);

/* Write the address at SA as text ("1.2.3.4", "::1") into BUF. */
void dest_format(const struct sockaddr *sa, char *buf, size_t len);

#endif
