/*
 * cgroup.c - a child cgroup v2 with the sandbox's limits.
 */
#include "runtime/launch/cgroup.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The cgroup2 mount point, from /proc/self/mountinfo; NULL when none. */
static char *
cgroup2_mount(struct arena *a)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096], *found = NULL;

	if (!f)
		return NULL;
	while (!found && fgets(line, sizeof(line), f)) {
		char *sep = strstr(line, " - "), mnt[4096];

		if (sep && !strncmp(sep + 3, "cgroup2 ", 8) &&
		    sscanf(line, "%*s %*s %*s %*s %4095s", mnt) == 1)
			found = arena_strdup(a, mnt);
	}
	fclose(f);
	return found;
}

/* Our cgroup v2 path ("0::/path" in /proc/self/cgroup). */
static char *
cgroup2_self(struct arena *a)
{
	FILE *f = fopen("/proc/self/cgroup", "re");
	char line[4096], *found = NULL;

	if (!f)
		return NULL;
	while (!found && fgets(line, sizeof(line), f))
		if (!strncmp(line, "0::", 3)) {
			line[strcspn(line, "\n")] = '\0';
			found = arena_strdup(a, line + 3);
		}
	fclose(f);
	return found;
}

static bool
has_word(const char *list, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = list; (p = strstr(p, word)); p += n)
		if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\n' || p[n] == '\0'))
			return true;
	return false;
}

static int
write_file(const char *dir, const char *name, const char *value)
{
	char path[4096];
	int fd, rc = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, value, strlen(value)) < 0)
		rc = -errno;
	close(fd);
	return rc;
}

char *
cgroup_create(struct arena *a, const struct limits *l, char *why, size_t whylen)
{
	char *mnt, *self, *dir, *child, ctl[1024], value[64];
	ssize_t n;
	int fd, rc;
	const char *need[3];
	size_t n_need = 0;

	if (l->memory.present)
		need[n_need++] = "memory";
	if (l->processes.present)
		need[n_need++] = "pids";
	if (l->cpu_rate.present)
		need[n_need++] = "cpu";
	if (!n_need) {
		snprintf(why, whylen, "no limit needs a cgroup");
		return NULL;
	}
	mnt = cgroup2_mount(a);
	self = cgroup2_self(a);
	if (!mnt || !self) {
		snprintf(why, whylen, "no cgroup v2 hierarchy");
		return NULL;
	}
	dir = arena_printf(a, "%s%s", mnt, strcmp(self, "/") ? self : "");
	fd = open(arena_printf(a, "%s/cgroup.subtree_control", dir), O_RDONLY | O_CLOEXEC);
	n = fd < 0 ? -1 : read(fd, ctl, sizeof(ctl) - 1);
	if (fd >= 0)
		close(fd);
	ctl[n > 0 ? n : 0] = '\0';
	for (size_t i = 0; i < n_need; i++)
		if (!has_word(ctl, need[i])) {
			snprintf(why, whylen, "the %s controller is not delegated to %s", need[i],
				 dir);
			return NULL;
		}
	child = arena_printf(a, "%s/omnibox-%ld", dir, (long)getpid());
	if (mkdir(child, 0755) < 0) {
		snprintf(why, whylen, "cannot create %s: %s", child, strerror(errno));
		return NULL;
	}
	rc = 0;
	if (l->memory.present) {
		snprintf(value, sizeof(value), "%llu", (unsigned long long)l->memory.value);
		rc = rc ? rc : write_file(child, "memory.max", value);
	}
	if (l->processes.present) {
		snprintf(value, sizeof(value), "%llu", (unsigned long long)l->processes.value);
		rc = rc ? rc : write_file(child, "pids.max", value);
	}
	if (l->cpu_rate.present) {
		/* A share of the whole machine, as Windows' CPU rate control means it. */
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);
		unsigned long long period = 100000;

		snprintf(value, sizeof(value), "%llu %llu",
			 period * (unsigned long long)(cpus > 0 ? cpus : 1) * l->cpu_rate.value /
			     100,
			 period);
		rc = rc ? rc : write_file(child, "cpu.max", value);
	}
	if (rc < 0) {
		snprintf(why, whylen, "cannot set limits in %s: %s", child, strerror(-rc));
		rmdir(child);
		return NULL;
	}
	return child;
}

int
cgroup_enter(const char *dir)
{
	return write_file(dir, "cgroup.procs", "0");
}

void
cgroup_remove(const char *dir)
{
	/* The last processes may take a moment to leave. */
	for (int i = 0; i < 50 && rmdir(dir) < 0 && errno == EBUSY; i++)
		usleep(10000);
}
