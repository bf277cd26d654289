/*
 * elsewhere.c - a thread started on another CPU (elsewhere.h).
 */
#include "runtime/launch/elsewhere.h"

#include <sched.h>
#include <stdlib.h>

struct start {
	void *(*fn)(void *);
	void *arg;
	cpu_set_t cpus; /* the process's, which the thread takes once running */
};

static void *
trampoline(void *p)
{
	struct start s = *(struct start *)p;

	free(p);
	pthread_setaffinity_np(pthread_self(), sizeof(s.cpus), &s.cpus);
	return s.fn(s.arg);
}

int
thread_elsewhere(pthread_t *th, void *(*fn)(void *), void *arg)
{
	struct start *s = malloc(sizeof(*s));
	int here = sched_getcpu(), rc;
	pthread_attr_t attr;
	cpu_set_t other;

	if (!s || here < 0 || sched_getaffinity(0, sizeof(s->cpus), &s->cpus) < 0 ||
	    CPU_COUNT(&s->cpus) < 2 || pthread_attr_init(&attr) != 0) {
		free(s);
		return -1;
	}
	s->fn = fn;
	s->arg = arg;
	other = s->cpus;
	CPU_CLR(here, &other);
	rc = pthread_attr_setaffinity_np(&attr, sizeof(other), &other) != 0 ||
	     pthread_create(th, &attr, trampoline, s) != 0;
	pthread_attr_destroy(&attr);
	if (rc) {
		free(s);
		return -1;
	}
	return 0;
}
