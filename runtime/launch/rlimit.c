/*
 * rlimit.c - one limit, set for good.
 */
#include "runtime/launch/rlimit.h"

#include <errno.h>
#include <sys/resource.h>

int
rlimit_set(int resource, unsigned long long v)
{
	struct rlimit rl;

	if (v == 0) {
		errno = EINVAL;
		return -1;
	}
	rl.rlim_cur = rl.rlim_max = (rlim_t)v;
	if (resource == RLIMIT_CPU)
		rl.rlim_max = (rlim_t)v + 1;
	return setrlimit(resource, &rl);
}
