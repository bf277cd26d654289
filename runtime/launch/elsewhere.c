/*
 * elsewhere.c - a thread started on another CPU (elsewhere.h).
 */
#include "runtime/launch/elsewhere.h"

#include <sched.h>
#include <unistd.h>

int
thread_elsewhere(pthread_t *th, void *(*fn)(void *), void *arg)
{
	int here = sched_getcpu(), rc;
	pthread_attr_t attr;
	cpu_set_t other;

	if (here < 0 || sched_getaffinity(0, sizeof(other), &other) < 0 || CPU_COUNT(&other) < 2 ||
	    pthread_attr_init(&attr) != 0)
		return -1;
	CPU_CLR(here, &other);
	rc = pthread_attr_setaffinity_np(&attr, sizeof(other), &other) != 0 ||
	     pthread_create(th, &attr, fn, arg) != 0;
	pthread_attr_destroy(&attr);
	return rc ? -1 : 0;
}

void
thread_anywhere(void)
{
	cpu_set_t all;

	/* The process's ID is its main thread's. */
	if (sched_getaffinity(getpid(), sizeof(all), &all) == 0)
		pthread_setaffinity_np(pthread_self(), sizeof(all), &all);
}
