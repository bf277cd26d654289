/*
 * address.c - the deny table of spec/egress.md, "Destinations" (address.h).
 */
#include "address.h"

#include <stdbool.h>
#include <string.h>

struct range4 {
	uint32_t net;
	unsigned bits;
	const char *why;
};

struct range6 {
	uint8_t net[16];
	unsigned bits;
	const char *why;
	int embedded; /* where an IPv4 address sits in it (see embedded_ipv4) */
};

enum { EMBED_NONE, EMBED_LAST32, EMBED_6TO4, EMBED_NAT64_LOCAL };

#define V4(a, b, c, d)                                                                             \
	((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (uint32_t)(d))

static const struct range4 table4[] = {
    {V4(0, 0, 0, 0), 8, "0.0.0.0/8 (this network)"},
    {V4(10, 0, 0, 0), 8, "10.0.0.0/8 (private)"},
    {V4(100, 64, 0, 0), 10, "100.64.0.0/10 (shared address space)"},
    {V4(127, 0, 0, 0), 8, "127.0.0.0/8 (loopback)"},
    {V4(169, 254, 0, 0), 16, "169.254.0.0/16 (link-local, cloud metadata)"},
    {V4(172, 16, 0, 0), 12, "172.16.0.0/12 (private)"},
    {V4(192, 0, 0, 0), 24, "192.0.0.0/24 (IETF protocol assignments)"},
    {V4(192, 0, 2, 0), 24, "192.0.2.0/24 (documentation)"},
    {V4(192, 88, 99, 0), 24, "192.88.99.0/24 (6to4 relay anycast)"},
    {V4(192, 168, 0, 0), 16, "192.168.0.0/16 (private)"},
    {V4(198, 18, 0, 0), 15, "198.18.0.0/15 (benchmarking)"},
    {V4(198, 51, 100, 0), 24, "198.51.100.0/24 (documentation)"},
    {V4(203, 0, 113, 0), 24, "203.0.113.0/24 (documentation)"},
    {V4(224, 0, 0, 0), 4, "224.0.0.0/4 (multicast)"},
    {V4(240, 0, 0, 0), 4, "240.0.0.0/4 (reserved)"},
    {V4(255, 255, 255, 255), 32, "255.255.255.255 (broadcast)"},
    {V4(168, 63, 129, 16), 32, "168.63.129.16 (Azure host services)"},
};

/*
 * Order matters where ranges nest: the embedded-IPv4 forms come before the
 * wider range that contains them only when they are judged by what they
 * embed (::ffff:0:0/96 is inside no other entry; ::/96 is refused whole).
 */
static const struct range6 table6[] = {
    {{0}, 128, "::/128 (unspecified)", EMBED_NONE},
    {{[15] = 1}, 128, "::1/128 (loopback)", EMBED_NONE},
    {{[10] = 0xff, [11] = 0xff}, 96, "::ffff:0:0/96 (IPv4-mapped)", EMBED_LAST32},
    {{0}, 96, "::/96 (IPv4-compatible, deprecated)", EMBED_NONE},
    {{0, 0x64, 0xff, 0x9b}, 96, "64:ff9b::/96 (NAT64)", EMBED_LAST32},
    {{0, 0x64, 0xff, 0x9b, 0, 1}, 48, "64:ff9b:1::/48 (local-use NAT64)", EMBED_NAT64_LOCAL},
    {{1, 0}, 64, "100::/64 (discard-only)", EMBED_NONE},
    {{0x20, 0x01, 0x0d, 0xb8}, 32, "2001:db8::/32 (documentation)", EMBED_NONE},
    {{0x20, 0x01}, 23, "2001::/23 (IETF protocol assignments, Teredo)", EMBED_NONE},
    {{0x20, 0x02}, 16, "2002::/16 (6to4)", EMBED_6TO4},
    {{0xfc}, 7, "fc00::/7 (unique local)", EMBED_NONE},
    {{0xfe, 0x80}, 10, "fe80::/10 (link-local)", EMBED_NONE},
    {{0xfe, 0xc0}, 10, "fec0::/10 (site-local, deprecated)", EMBED_NONE},
    {{0xff}, 8, "ff00::/8 (multicast)", EMBED_NONE},
};

const char *
address_refused_v4(const uint8_t a[4])
{
	uint32_t v = (uint32_t)a[0] << 24 | (uint32_t)a[1] << 16 | (uint32_t)a[2] << 8 | a[3];

	for (size_t i = 0; i < sizeof(table4) / sizeof(table4[0]); i++) {
		uint32_t mask = table4[i].bits ? ~(uint32_t)0 << (32 - table4[i].bits) : 0;

		if ((v & mask) == table4[i].net)
			return table4[i].why;
	}
	return NULL;
}

static bool
prefix_match(const uint8_t *a, const uint8_t *net, unsigned bits)
{
	unsigned whole = bits / 8, rest = bits % 8;

	if (memcmp(a, net, whole) != 0)
		return false;
	if (rest) {
		uint8_t mask = (uint8_t)(0xff << (8 - rest));

		return (a[whole] & mask) == (net[whole] & mask);
	}
	return true;
}

static const char *
blocked_embedded(const uint8_t *b, size_t at)
{
	return address_refused_v4(b + at);
}

/*
 * An IPv4 address inside a local-use NAT64 prefix may sit at any of the
 * RFC 6052 positions, depending on the prefix length the network chose
 * (/48 ... /96); bits 64-71 are the reserved "u" octet.  The address is
 * refused when any reading of it is.
 */
static const char *
blocked_nat64_local(const uint8_t *b)
{
	static const uint8_t pos[][4] = {
	    {6, 7, 9, 10},    /* /48 */
	    {7, 9, 10, 11},   /* /56 */
	    {9, 10, 11, 12},  /* /64 */
	    {12, 13, 14, 15}, /* /96 */
	};

	for (size_t i = 0; i < sizeof(pos) / sizeof(pos[0]); i++) {
		uint8_t v[4] = {b[pos[i][0]], b[pos[i][1]], b[pos[i][2]], b[pos[i][3]]};

		if (blocked_embedded(v, 0))
			return "64:ff9b:1::/48 (local-use NAT64, embedding a refused IPv4 address)";
	}
	return NULL;
}

const char *
address_refused_v6(const uint8_t a[16])
{
	const uint8_t *b = a;

	for (size_t i = 0; i < sizeof(table6) / sizeof(table6[0]); i++) {
		const struct range6 *r = &table6[i];

		if (!prefix_match(b, r->net, r->bits))
			continue;
		switch (r->embedded) {
		case EMBED_LAST32:
			/* Reachable, so judged by the IPv4 address it stands for. */
			return blocked_embedded(b, 12);
		case EMBED_6TO4:
			return blocked_embedded(b, 2);
		case EMBED_NAT64_LOCAL:
			return blocked_nat64_local(b);
		default:
			return r->why;
		}
	}
	return NULL;
}

/* Could LABEL be read as a number by inet_aton() or a URL parser? */
static bool
label_is_numeric(const char *s, size_t len)
{
	size_t i = 0;

	if (len >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		for (i = 2; i < len; i++)
			if (!((s[i] >= '0' && s[i] <= '9') ||
			      ((s[i] | 0x20) >= 'a' && (s[i] | 0x20) <= 'f')))
				return false;
		return true;
	}
	for (; i < len; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return len > 0;
}

/* A canonical dotted-quad octet: 1-3 decimal digits, no leading zero, at most 255. */
static bool
octet_canonical(const char *s, size_t len, unsigned *out)
{
	unsigned v = 0;

	if (len < 1 || len > 3 || (len > 1 && s[0] == '0'))
		return false;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	*out = v;
	return v <= 255;
}

enum address_host_kind
address_classify_host(const char *host, size_t len, uint8_t v4[4], const char **why)
{
	size_t start = 0, labels = 0, numeric = 0, canonical = 0, last = 0;
	uint32_t v = 0;

	*why = NULL;
	if (len == 0 || len > 253) {
		*why = "not a host name";
		return ADDRESS_HOST_BAD;
	}
	for (size_t i = 0; i <= len; i++) {
		unsigned octet;

		if (i < len && host[i] != '.')
			continue;
		labels++;
		last = start;
		numeric += label_is_numeric(host + start, i - start);
		if (octet_canonical(host + start, i - start, &octet)) {
			canonical++;
			v = v << 8 | octet;
		}
		start = i + 1;
	}
	if (labels == 4 && canonical == 4) {
		v4[0] = (uint8_t)(v >> 24);
		v4[1] = (uint8_t)(v >> 16);
		v4[2] = (uint8_t)(v >> 8);
		v4[3] = (uint8_t)v;
		return ADDRESS_HOST_IPV4;
	}
	/* inet_aton() reads "127.1", "0x7f.1" and "2130706433" as 127.0.0.1; a
	 * resolver library might too.  Never let such a host reach DNS. */
	if (label_is_numeric(host + last, len - last)) {
		*why = numeric == labels ? "an IPv4 address in a non-canonical notation"
					 : "a host name whose last label is numeric";
		return ADDRESS_HOST_BAD;
	}
	return ADDRESS_HOST_NAME;
}
