/*
 * test_transparent.c - compiler/decide/transparent.c: the ports the sandbox
 * listens on for clients that ignore the proxy, and the files it reads.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "compiler/decide/transparent.h"

static struct egress_rule
http(unsigned port)
{
	return (struct egress_rule){
	    .methods = EGRESS_GET, .host = "h.test", .port = port, .path = "/**"};
}

static struct egress_rule
tcp(unsigned port)
{
	return (struct egress_rule){.tcp = true, .host = "h.test", .port = port, .path = ""};
}

Test(transparent, ports_ascending_once_with_the_defaults)
{
	struct egress_rule r[] = {tcp(5432), http(0), http(8443), tcp(22), http(443), tcp(5432)};
	unsigned p[TRANSPARENT_MAX_PORTS];
	char text[TRANSPARENT_MAX_PORTS * 6 + 1];
	int n = transparent_ports(r, sizeof(r) / sizeof(r[0]), p, NULL);

	cr_assert_eq(n, 5);
	transparent_ports_text(p, n, text, sizeof(text));
	cr_assert_str_eq(text, "22,80,443,5432,8443");
}

Test(transparent, an_explicit_port_means_that_port_alone)
{
	struct egress_rule r[] = {http(8080)};
	unsigned p[TRANSPARENT_MAX_PORTS];

	cr_assert_eq(transparent_ports(r, 1, p, NULL), 1);
	cr_assert_eq(p[0], 8080);
}

Test(transparent, more_ports_than_the_limit_name_the_first_rule_over_it)
{
	struct egress_rule r[TRANSPARENT_MAX_PORTS + 2];
	unsigned p[TRANSPARENT_MAX_PORTS];
	size_t over = 999;

	r[0] = http(0); /* 80 and 443 */
	for (size_t i = 1; i < sizeof(r) / sizeof(r[0]); i++)
		r[i] = tcp(10000 + (unsigned)i);
	/* 2 + 62 fit; the rule at index 63 is the 65th port. */
	cr_assert_eq(transparent_ports(r, TRANSPARENT_MAX_PORTS - 1, p, &over),
		     TRANSPARENT_MAX_PORTS);
	cr_assert_eq(transparent_ports(r, sizeof(r) / sizeof(r[0]), p, &over), -1);
	cr_assert_eq(over, TRANSPARENT_MAX_PORTS - 1);
}

Test(transparent, resolv_conf_names_the_sandbox_resolver_and_nothing_else)
{
	char buf[1024];

	transparent_resolv_conf(buf, sizeof(buf));
	cr_assert(strstr(buf, "\nnameserver 127.0.0.53\n"));
	cr_assert_null(strstr(buf, "search"));
	/* One nameserver line. */
	cr_assert_null(strstr(strstr(buf, "nameserver") + 1, "nameserver"));
}

Test(transparent, hosts_hold_localhost_and_a_plain_machine_name_only)
{
	char buf[1024];

	transparent_hosts("build-01.example", buf, sizeof(buf));
	cr_assert_str_eq(buf, "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n"
			      "127.0.1.1\tbuild-01.example\n");
	/* A name that could add entries or options is left out. */
	transparent_hosts("evil\n1.2.3.4 api.github.com", buf, sizeof(buf));
	cr_assert_null(strstr(buf, "github"));
	transparent_hosts("a b", buf, sizeof(buf));
	cr_assert_null(strstr(buf, "127.0.1.1"));
	transparent_hosts(NULL, buf, sizeof(buf));
	cr_assert_null(strstr(buf, "127.0.1.1"));
	transparent_hosts("localhost", buf, sizeof(buf));
	cr_assert_null(strstr(buf, "127.0.1.1"));
}
