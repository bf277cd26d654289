/*
 * refresh.h - a secret read again on a timer (refresh_interval_seconds).
 *
 * The proxy keeps one refresher per credential whose file or unix_socket
 * source has an interval.  Every INTERVAL seconds it reads the source as
 * cred_prepare() did at launch (trimmed, checked; a socket within
 * CRED_SOCKET_TIMEOUT and CRED_SOCKET_MAX, on the event loop, so a slow
 * token server never stalls other requests) and hands the result to DONE:
 * the new secret, or NULL and why not.  A tick that comes while a read is
 * still under way is skipped.
 */
#ifndef OMNIBOX_REFRESH_H
#define OMNIBOX_REFRESH_H

#include <event2/event.h>

#include "runtime/egress/proxy.h"

struct refresh;

/* SECRET is wiped and freed after the call: copy what is kept. */
typedef void (*refresh_done_fn)(void *arg, const char *secret, const char *why);

/* Start reading SRC (copied) every INTERVAL seconds on BASE; NULL when out of memory. */
struct refresh *refresh_new(struct event_base *base, const struct proxy_source *src,
			    unsigned interval, refresh_done_fn done, void *arg);

/* Read now, out of turn (the next tick stays where it was). */
void refresh_now(struct refresh *r);

/* Stop, dropping a read under way (DONE is not called). */
void refresh_free(struct refresh *r);

#endif
