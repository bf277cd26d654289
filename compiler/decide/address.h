/*
 * address.h - which destinations no egress connection may reach, decided once.
 *
 * The table of spec/egress.md ("Destinations"): loopback, private,
 * link-local and cloud metadata, documentation, multicast and the rest.  The
 * proxy checks every address a name resolves to against it (DNS rebinding),
 * the git-ssh broker does the same, and --query judges an address written in
 * a URL by it, so the three cannot disagree.  Addresses that embed an IPv4
 * address (IPv4-mapped, NAT64, 6to4) are judged by the embedded address too.
 * Pure: plain bytes in network order, no socket types.
 */
#ifndef OMNIBOX_DECIDE_ADDRESS_H
#define OMNIBOX_DECIDE_ADDRESS_H

#include <stddef.h>
#include <stdint.h>

/*
 * Why the IPv4 address A (4 bytes, network order) or the IPv6 address A (16
 * bytes) must not be connected to, as a static string naming the range
 * ("127.0.0.0/8 (loopback)"), or NULL when it may be.
 */
const char *address_refused_v4(const uint8_t a[4]);
const char *address_refused_v6(const uint8_t a[16]);

enum address_host_kind {
	ADDRESS_HOST_NAME, /* a DNS name: resolve it */
	ADDRESS_HOST_IPV4, /* a dotted-quad IPv4 literal: V4 holds it, no DNS */
	ADDRESS_HOST_BAD,  /* refuse: *WHY says why */
};

/*
 * Classify a request's host HOST/LEN (already known to pass
 * egress_host_is_safe()).  Only canonical dotted-quad literals are
 * addresses; anything a C library or a browser might read as an IPv4
 * address in another notation ("2130706433", "0x7f.1", "017700000001",
 * "127.1", "127.000.0.1") is refused rather than sent to DNS as a name, as
 * is any name whose last label is numeric (no real top-level domain is).
 */
enum address_host_kind address_classify_host(const char *host, size_t len, uint8_t v4[4],
					     const char **why);

#endif
