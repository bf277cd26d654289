/*
 * test_destination.c - the deny table of spec/egress.md ("Destinations"):
 * every listed range at its edges and just outside, addresses that embed
 * IPv4 (mapped, compatible, NAT64, 6to4), and host names that are IPv4
 * addresses in disguise.
 */
#include <criterion/criterion.h>

#include <arpa/inet.h>
#include <string.h>

#include "runtime/egress/destination.h"

TestSuite(dest_ipv4);
TestSuite(dest_ipv6);
TestSuite(dest_host);

static const char *
v4(const char *text)
{
	struct in_addr a;

	cr_assert_eq(inet_pton(AF_INET, text, &a), 1, "bad test address %s", text);
	return dest_blocked_ipv4(&a);
}

static const char *
v6(const char *text)
{
	struct in6_addr a;

	cr_assert_eq(inet_pton(AF_INET6, text, &a), 1, "bad test address %s", text);
	return dest_blocked_ipv6(&a);
}

#define assert_blocked4(addr, range)                                                               \
	do {                                                                                       \
		const char *why_ = v4(addr);                                                       \
		cr_assert_not_null(why_, "%s passed", addr);                                       \
		cr_assert(strstr(why_, range) == why_, "%s: reason '%s', want '%s'", addr, why_,   \
			  range);                                                                  \
	} while (0)
#define assert_open4(addr) cr_assert_null(v4(addr), "%s refused: %s", addr, v4(addr))
#define assert_blocked6(addr, range)                                                               \
	do {                                                                                       \
		const char *why_ = v6(addr);                                                       \
		cr_assert_not_null(why_, "%s passed", addr);                                       \
		cr_assert(strstr(why_, range) == why_, "%s: reason '%s', want '%s'", addr, why_,   \
			  range);                                                                  \
	} while (0)
#define assert_open6(addr) cr_assert_null(v6(addr), "%s refused: %s", addr, v6(addr))

/* Each IPv4 range: its first and last address are refused, its neighbours are not. */
Test(dest_ipv4, every_range_of_the_table_at_both_edges)
{
	static const struct {
		const char *first, *last, *before, *after, *name;
	} r[] = {
	    {"0.0.0.0", "0.255.255.255", NULL, "1.0.0.0", "0.0.0.0/8"},
	    {"10.0.0.0", "10.255.255.255", "9.255.255.255", "11.0.0.0", "10.0.0.0/8"},
	    {"100.64.0.0", "100.127.255.255", "100.63.255.255", "100.128.0.0", "100.64.0.0/10"},
	    {"127.0.0.0", "127.255.255.255", "126.255.255.255", "128.0.0.0", "127.0.0.0/8"},
	    {"169.254.0.0", "169.254.255.255", "169.253.255.255", "169.255.0.0", "169.254.0.0/16"},
	    {"172.16.0.0", "172.31.255.255", "172.15.255.255", "172.32.0.0", "172.16.0.0/12"},
	    {"192.0.0.0", "192.0.0.255", "191.255.255.255", "192.0.1.0", "192.0.0.0/24"},
	    {"192.0.2.0", "192.0.2.255", "192.0.1.255", "192.0.3.0", "192.0.2.0/24"},
	    {"192.88.99.0", "192.88.99.255", "192.88.98.255", "192.88.100.0", "192.88.99.0/24"},
	    {"192.168.0.0", "192.168.255.255", "192.167.255.255", "192.169.0.0", "192.168.0.0/16"},
	    {"198.18.0.0", "198.19.255.255", "198.17.255.255", "198.20.0.0", "198.18.0.0/15"},
	    {"198.51.100.0", "198.51.100.255", "198.51.99.255", "198.51.101.0", "198.51.100.0/24"},
	    {"203.0.113.0", "203.0.113.255", "203.0.112.255", "203.0.114.0", "203.0.113.0/24"},
	    {"224.0.0.0", "239.255.255.255", "223.255.255.255", NULL, "224.0.0.0/4"},
	    {"240.0.0.0", "255.255.255.254", NULL, NULL, "240.0.0.0/4"},
	    {"168.63.129.16", "168.63.129.16", "168.63.129.15", "168.63.129.17", "168.63.129.16"},
	};

	for (size_t i = 0; i < sizeof(r) / sizeof(r[0]); i++) {
		assert_blocked4(r[i].first, r[i].name);
		assert_blocked4(r[i].last, r[i].name);
		if (r[i].before)
			assert_open4(r[i].before);
		if (r[i].after)
			assert_open4(r[i].after);
	}
	cr_assert_not_null(v4("255.255.255.255"));
}

Test(dest_ipv4, the_metadata_addresses_of_the_clouds)
{
	assert_blocked4("169.254.169.254", "169.254.0.0/16");
	assert_blocked4("100.100.100.200", "100.64.0.0/10"); /* Alibaba */
	assert_blocked4("168.63.129.16", "168.63.129.16");   /* Azure */
}

Test(dest_ipv4, public_addresses_pass)
{
	assert_open4("8.8.8.8");
	assert_open4("1.1.1.1");
	assert_open4("140.82.112.6");
	assert_open4("223.255.255.255");
}

Test(dest_ipv6, the_fixed_ranges)
{
	assert_blocked6("::", "::/128");
	assert_blocked6("::1", "::1/128");
	assert_blocked6("100::", "100::/64");
	assert_blocked6("100::ffff:ffff:ffff:ffff", "100::/64");
	assert_open6("100:0:0:1::");
	assert_blocked6("2001::", "2001::/23");
	assert_blocked6("2001:0:4136:e378:8000:63bf:3fff:fdd2", "2001::/23"); /* Teredo */
	assert_blocked6("2001:1ff:ffff::1", "2001::/23");
	assert_open6("2001:200::1");
	assert_blocked6("2001:db8::1", "2001:db8::/32");
	assert_blocked6("2001:db8:ffff:ffff::1", "2001:db8::/32");
	assert_open6("2001:db9::1");
	assert_blocked6("fc00::1", "fc00::/7");
	assert_blocked6("fd00:ec2::254", "fc00::/7"); /* AWS metadata over IPv6 */
	assert_blocked6("fdff:ffff::1", "fc00::/7");
	assert_open6("fe00::1");
	assert_blocked6("fe80::1", "fe80::/10");
	assert_blocked6("febf:ffff::1", "fe80::/10");
	assert_blocked6("fec0::1", "fec0::/10");
	assert_blocked6("feff:ffff::1", "fec0::/10");
	assert_blocked6("ff00::1", "ff00::/8");
	assert_blocked6("ff02::1", "ff00::/8");
	assert_open6("2606:4700:4700::1111");
	assert_open6("2a00:1450:4001:80b::200e");
}

Test(dest_ipv6, ipv4_mapped_addresses_are_judged_by_their_ipv4)
{
	assert_blocked6("::ffff:127.0.0.1", "127.0.0.0/8");
	assert_blocked6("::ffff:169.254.169.254", "169.254.0.0/16");
	assert_blocked6("::ffff:10.1.2.3", "10.0.0.0/8");
	assert_blocked6("::ffff:0.0.0.0", "0.0.0.0/8");
	assert_open6("::ffff:8.8.8.8");
}

Test(dest_ipv6, ipv4_compatible_addresses_are_refused_whole)
{
	assert_blocked6("::127.0.0.1", "::/96");
	assert_blocked6("::8.8.8.8", "::/96");
	assert_blocked6("::ffff", "::/96");
}

Test(dest_ipv6, nat64_addresses_are_judged_by_their_ipv4)
{
	assert_blocked6("64:ff9b::7f00:1", "127.0.0.0/8");
	assert_blocked6("64:ff9b::169.254.169.254", "169.254.0.0/16");
	assert_blocked6("64:ff9b::a00:1", "10.0.0.0/8");
	assert_open6("64:ff9b::808:808");
	/* 64:ff9b::/96 only: the rest of 64:ff9b::/32 is ordinary. */
	assert_open6("64:ff9b:2::7f00:1");
}

Test(dest_ipv6, local_use_nat64_is_judged_at_every_prefix_length)
{
	/* The network may translate at /48, /56, /64 or /96: every reading must pass. */
	assert_blocked6("64:ff9b:1::7f00:1", "64:ff9b:1::/48");		    /* /96 */
	assert_blocked6("64:ff9b:1:7f08:8:808:808:808", "64:ff9b:1::/48");  /* /48: 127.8.8.8 */
	assert_blocked6("64:ff9b:1:80a:a:808:808:808", "64:ff9b:1::/48");   /* /56: 10.10.8.8 */
	assert_blocked6("64:ff9b:1:808:a9:fea9:808:808", "64:ff9b:1::/48"); /* /64: 169.254.169.8 */
	/* 8.8.8.8 at every position (the u octet, bits 64-71, is zero). */
	assert_open6("64:ff9b:1:808:8:808:808:808");
}

Test(dest_ipv6, sixto4_addresses_are_judged_by_their_ipv4)
{
	assert_blocked6("2002:7f00:1::1", "127.0.0.0/8");
	assert_blocked6("2002:a9fe:a9fe::", "169.254.0.0/16");
	assert_blocked6("2002:c0a8:101::1", "192.168.0.0/16");
	assert_open6("2002:808:808::1");
}

Test(dest_ipv6, sockaddrs_of_both_families_and_others)
{
	struct sockaddr_in sin = {.sin_family = AF_INET};
	struct sockaddr_in6 sin6 = {.sin6_family = AF_INET6};
	struct sockaddr_un_like {
		sa_family_t family;
		char path[8];
	} un = {AF_UNIX, "x"};
	char text[64];

	inet_pton(AF_INET, "127.0.0.1", &sin.sin_addr);
	cr_assert_not_null(dest_blocked_reason((struct sockaddr *)&sin));
	dest_format((struct sockaddr *)&sin, text, sizeof(text));
	cr_assert_str_eq(text, "127.0.0.1");
	inet_pton(AF_INET6, "2606:4700::1", &sin6.sin6_addr);
	cr_assert_null(dest_blocked_reason((struct sockaddr *)&sin6));
	dest_format((struct sockaddr *)&sin6, text, sizeof(text));
	cr_assert_str_eq(text, "2606:4700::1");
	cr_assert_str_eq(dest_blocked_reason((struct sockaddr *)&un), "not an internet address");
}

static enum dest_host_kind
classify(const char *host, const char **why, struct in_addr *a)
{
	return dest_classify_host(host, strlen(host), a, why);
}

Test(dest_host, names_are_names)
{
	static const char *const names[] = {"api.github.com",	"example.com", "a",
					    "x-1.y-2.io",	"1e100.net",   "123.example.com",
					    "0x7f.example.com", "localhost"};
	struct in_addr a;
	const char *why;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		cr_assert_eq(classify(names[i], &why, &a), DEST_HOST_NAME, "%s", names[i]);
}

Test(dest_host, canonical_dotted_quads_are_addresses)
{
	struct in_addr a;
	const char *why;
	char text[32];

	cr_assert_eq(classify("127.0.0.1", &why, &a), DEST_HOST_IPV4);
	inet_ntop(AF_INET, &a, text, sizeof(text));
	cr_assert_str_eq(text, "127.0.0.1");
	cr_assert_eq(classify("8.8.8.8", &why, &a), DEST_HOST_IPV4);
	cr_assert_eq(classify("255.255.255.255", &why, &a), DEST_HOST_IPV4);
	cr_assert_eq(classify("0.0.0.0", &why, &a), DEST_HOST_IPV4);
}

Test(dest_host, ipv4_in_other_notations_never_passes_as_a_name)
{
	static const char *const odd[] = {
	    "2130706433",		    /* decimal 127.0.0.1 */
	    "0x7f.1",			    /* hex + short form */
	    "0x7f000001",		    /* one hex number */
	    "017700000001",		    /* octal */
	    "0177.0.0.1",		    /* octal octet */
	    "127.1",			    /* short form */
	    "127.0.1",			    /* short form */
	    "127.000.000.001",		    /* leading zeros (octal to inet_aton) */
	    "127.0.0.01",      "256.0.0.1", /* out of range */
	    "1.2.3.4.5",       "0x7F.0X0.0.1", "0x", "3232235777", /* 192.168.1.1 */
	    "4294967295",
	};
	struct in_addr a;
	const char *why;

	for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]); i++) {
		cr_assert_eq(classify(odd[i], &why, &a), DEST_HOST_BAD, "%s accepted", odd[i]);
		cr_assert_str_eq(why, "an IPv4 address in a non-canonical notation", "%s", odd[i]);
	}
}

Test(dest_host, a_numeric_last_label_is_refused)
{
	struct in_addr a;
	const char *why;

	cr_assert_eq(classify("example.123", &why, &a), DEST_HOST_BAD);
	cr_assert_str_eq(why, "a host name whose last label is numeric");
	cr_assert_eq(classify("evil.com.0x7f000001", &why, &a), DEST_HOST_BAD);
	cr_assert_eq(classify("", &why, &a), DEST_HOST_BAD);
}
