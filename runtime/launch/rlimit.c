/*
 * rlimit.c - one limit, set for good.
 */
#include "runtime/launch/rlimit.h"

#include "compiler/policy.h"

#include <errno.h>
#include <stddef.h>
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

void
rlimit_raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

int
launch_set_rlimits(const struct limits *l, const char **what)
{
	const struct {
		const char *name;
		const struct ir_u64 *v;
		int resource;
	} rl[] = {{"limits.memory", &l->memory, RLIMIT_DATA},
		  {"limits.cpu_time", &l->cpu_time, RLIMIT_CPU},
		  {"limits.open_files", &l->open_files, RLIMIT_NOFILE},
		  {"limits.processes", &l->processes, RLIMIT_NPROC}};

	for (size_t i = 0; l->present && i < sizeof(rl) / sizeof(rl[0]); i++) {
		if (!rl[i].v->present)
			continue;
		if (rlimit_set(rl[i].resource, rl[i].v->value) < 0) {
			*what = rl[i].name;
			return -1;
		}
	}
	return 0;
}
