/*
 * transparent.c - the ports and files of transparent egress (transparent.h).
 */
#include "compiler/decide/transparent.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* Add PORT to the ascending set OUT[0..*N); false when it is full. */
static bool
add_port(unsigned out[], int *n, unsigned port)
{
	int i = 0;

	while (i < *n && out[i] < port)
		i++;
	if (i < *n && out[i] == port)
		return true;
	if (*n == TRANSPARENT_MAX_PORTS)
		return false;
	memmove(&out[i + 1], &out[i], (size_t)(*n - i) * sizeof(*out));
	out[i] = port;
	(*n)++;
	return true;
}

int
transparent_ports(const struct egress_rule *rules, size_t n, unsigned out[], size_t *too_many)
{
	int k = 0;

	for (size_t i = 0; i < n; i++) {
		const struct egress_rule *r = &rules[i];
		bool ok = r->port ? add_port(out, &k, r->port)
				  : add_port(out, &k, EGRESS_PORT_TLS) &&
					add_port(out, &k, EGRESS_PORT_PLAIN);

		if (!ok) {
			if (too_many)
				*too_many = i;
			return -1;
		}
	}
	return k;
}

void
transparent_ports_text(const unsigned ports[], int n, char *buf, size_t cap)
{
	size_t len = 0;

	if (cap)
		buf[0] = '\0';
	for (int i = 0; i < n && len < cap; i++) {
		int w = snprintf(buf + len, cap - len, "%s%u", i ? "," : "", ports[i]);

		if (w < 0)
			break;
		len += (size_t)w;
	}
}

void
transparent_resolv_conf(char *buf, size_t cap)
{
	/* No search list: a name is looked up as written.  One attempt, no
	 * rotation: there is one resolver and it always answers. */
	snprintf(buf, cap,
		 "# omnibox: names resolve inside the sandbox to addresses of its own;\n"
		 "# the egress proxy decides each connection by NAME:PORT\n"
		 "nameserver " TRANSPARENT_DNS_ADDR "\n"
		 "options attempts:1 timeout:2\n");
}

/* A machine name that may stand in a hosts file: letters, digits, '-', '.'. */
static bool
name_is_plain(const char *s)
{
	size_t len = s ? strlen(s) : 0;

	if (len == 0 || len > 253 || s[0] == '.' || s[0] == '-')
		return false;
	for (size_t i = 0; i < len; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '-' || s[i] == '.'))
			return false;
	return true;
}

void
transparent_hosts(const char *hostname, char *buf, size_t cap)
{
	bool own = name_is_plain(hostname) && strcmp(hostname, "localhost") != 0;

	snprintf(buf, cap,
		 "127.0.0.1\tlocalhost\n"
		 "::1\tlocalhost ip6-localhost ip6-loopback\n"
		 "%s%s%s",
		 own ? "127.0.1.1\t" : "", own ? hostname : "", own ? "\n" : "");
}
