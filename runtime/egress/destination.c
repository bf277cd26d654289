/*
 * destination.c - the deny table (compiler/decide/address.h) over socket
 * addresses, for the proxy and the git-ssh broker.
 */
#include "runtime/egress/destination.h"

#include "compiler/decide/address.h"

#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

const char *
dest_blocked_ipv4(const struct in_addr *a)
{
	return address_refused_v4((const uint8_t *)&a->s_addr);
}

const char *
dest_blocked_ipv6(const struct in6_addr *a)
{
	return address_refused_v6(a->s6_addr);
}

const char *
dest_blocked_reason(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return dest_blocked_ipv4(&((const struct sockaddr_in *)(const void *)sa)->sin_addr);
	if (sa->sa_family == AF_INET6)
		return dest_blocked_ipv6(
		    &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr);
	return "not an internet address";
}

enum dest_host_kind
dest_classify_host(const char *host, size_t len, struct in_addr *addr, const char **why)
{
	uint8_t v4[4];

	switch (address_classify_host(host, len, v4, why)) {
	case ADDRESS_HOST_IPV4:
		memcpy(&addr->s_addr, v4, 4);
		return DEST_HOST_IPV4;
	case ADDRESS_HOST_BAD:
		return DEST_HOST_BAD;
	default:
		return DEST_HOST_NAME;
	}
}

void
dest_format(const struct sockaddr *sa, char *buf, size_t len)
{
	if (sa->sa_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, buf,
			  (socklen_t)len);
	else if (sa->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr,
			  buf, (socklen_t)len);
	else
		snprintf(buf, len, "(family %d)", sa->sa_family);
}
