/*
 * elsewhere.h - a thread started on another CPU than the one it is started
 * from.
 *
 * A new thread waits on its parent's CPU, however idle another is, until
 * the scheduler moves it: 0.2 to 3.6 ms measured on a two-CPU virtual
 * machine, longer than the work the launch and the proxy start threads
 * for.  Started where it may run only on the other CPUs, it runs at once;
 * once running it may run anywhere this process may.
 */
#ifndef OMNIBOX_ELSEWHERE_H
#define OMNIBOX_ELSEWHERE_H

#include <pthread.h>

/*
 * FN(ARG) in a new thread, *TH, started on another CPU than this one.
 * Returns 0; -1 where this process may run on one CPU only (the thread
 * would only wait for the caller) or the thread cannot start: the caller
 * does the work itself then.
 */
int thread_elsewhere(pthread_t *th, void *(*fn)(void *), void *arg);

#endif
