/*
 * fakedns.h - the sandbox's own DNS server: a fake address for every name.
 *
 * Clients that ignore HTTP(S)_PROXY (Node's fetch, Python's http.client,
 * raw sockets) resolve a name and connect to its address.  In a sandbox
 * with egress_rules there is no network, so the relay answers DNS itself
 * (its resolver is 127.0.0.53:53): each valid host name gets an address of
 * its own in 127.128.0.0/16, which `lo` routes to the relay's transparent
 * listeners, and the relay turns a connection to that address back into
 * the name for the egress proxy (relay.h).  This is the "fake-IP"
 * technique.  Nothing is ever forwarded: the table is all there is, so no
 * query can carry data out of the sandbox.  It decides nothing about
 * policy either: an address only names a host, the proxy decides.
 *
 * Addresses are handed out in order (127.128.0.1, .0.2, ...) and never
 * reused, so the same queries give the same addresses; at most FAKEDNS_MAX
 * names are kept, and then new names are REFUSED while the names already
 * given keep their addresses.  Memory is bounded by FAKEDNS_MAX: a hash
 * table of fixed size and the names in chunks.
 *
 * Only an A query gives a name an address; AAAA and every other type of a
 * valid name is answered with no records (NODATA), so a flood of them
 * costs nothing.  Libc only: it runs in omnibox-init, a static binary.
 */
#ifndef OMNIBOX_FAKEDNS_H
#define OMNIBOX_FAKEDNS_H

#include <stddef.h>
#include <stdint.h>

#include "compiler/decide/transparent.h"

#define FAKEDNS_NET 0x7f800000u /* 127.128.0.0/16, host order */
#define FAKEDNS_MAX 32767u	/* names per table: 127.128.0.1 ... 127.128.127.255 */
#define FAKEDNS_TTL 300u	/* seconds; the table never forgets within a launch */

/* Where the sandbox's resolver listens (/etc/resolv.conf inside says so). */
#define FAKEDNS_RESOLVER TRANSPARENT_DNS_V4
#define FAKEDNS_PORT 53

/* The longest reply fakedns_answer() writes for a query without EDNS. */
#define FAKEDNS_UDP_MAX 512

struct fakedns;

/* An empty table, or NULL when out of memory. */
struct fakedns *fakedns_new(void);

void fakedns_free(struct fakedns *dns);

/*
 * The address (host order) of the LEN bytes of NAME, given now if it has
 * none yet; 0 when NAME is no valid host name or the table is full (or
 * memory is).  Valid: 1 to 253 characters once one trailing dot is
 * removed, labels of 1 to 63 of [A-Za-z0-9-].  The same name in any case,
 * with or without its trailing dot, has the same address.
 */
uint32_t fakedns_address(struct fakedns *dns, const char *name, size_t len);

/* The name (lowercase, no trailing dot) ADDR (host order) was given, or NULL. */
const char *fakedns_name(const struct fakedns *dns, uint32_t addr);

/* How many names have an address. */
size_t fakedns_count(const struct fakedns *dns);

/*
 * The reply to the QLEN bytes of query Q, written to OUT (CAP bytes);
 * returns its length, or 0 when nothing is to be sent (shorter than a
 * header, a response rather than a query, or a reply over CAP).
 *
 *   opcode other than QUERY             NOTIMP, header only
 *   QDCOUNT other than 1, a question
 *   cut short, a compression pointer
 *   or an unknown label type in it      FORMERR, header only
 *   QCLASS other than IN                REFUSED
 *   a name that is not valid (above)    NXDOMAIN
 *   A                                   the name's address, TTL FAKEDNS_TTL
 *   A of a new name, the table full     REFUSED (no address is ever reused)
 *   any other QTYPE (AAAA, ANY...)      NOERROR, no records; no address given
 *
 * The reply echoes the question as it came (its case too) and copies the
 * ID and RD; it sets QR, AA and RA.  Records after the question (EDNS's
 * OPT among them) are ignored and the reply has none.
 */
size_t fakedns_answer(struct fakedns *dns, const unsigned char *q, size_t qlen, unsigned char *out,
		      size_t cap);

#endif
