/*
 * elsewhere.h - a thread started on another CPU than the one it is started
 * from.
 *
 * A new thread waits on its parent's CPU, however idle another is, until
 * the scheduler moves it: 0.2 to 3.6 ms measured on a two-CPU virtual
 * machine, longer than the work the launch and the proxy start threads
 * for.  Started where it may run only on the other CPUs, it runs at once.
 */
#ifndef OMNIBOX_ELSEWHERE_H
#define OMNIBOX_ELSEWHERE_H

#include <pthread.h>

/*
 * FN(ARG) in a new thread, *TH, held to the CPUs other than this one's.
 * Returns 0; -1 where this process may run on one CPU only (the thread
 * would only wait for the caller) or the thread cannot start: the caller
 * does the work itself then.
 */
int thread_elsewhere(pthread_t *th, void *(*fn)(void *), void *arg);

/*
 * From the thread: let it run on every CPU the process's main thread may.
 * A thread that runs long calls it once its start is done (before, its
 * first allocation could wait for the main thread and be woken on its CPU).
 */
void thread_anywhere(void);

#endif
