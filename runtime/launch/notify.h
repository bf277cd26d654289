/*
 * notify.h - the seccomp filter's refusals, counted and answered by omnibox-run.
 *
 * The filter omnibox-init loads reports a refused call
 * (SECCOMP_RET_USER_NOTIF) instead of failing it at once: the kernel holds
 * the caller until the holder of the filter's listener answers.
 * omnibox-init derives that variant from the emitted ERRNO(EPERM) filter,
 * loads it, and sends the listener with its ready byte
 * (runtime/launch/seccomp_load.h); from then on omnibox-run's event loop
 * receives each report, counts it by ABI and call (a socket call by its
 * family, and an AF_NETLINK one by its protocol too), and answers EPERM,
 * which is what the caller gets from the emitted filter loaded as it is.
 * The call never runs: the only answer here is a refusal.  With --verbose
 * each refusal is printed as it happens (the first NOTIFY_SHOWN); the exit
 * summary names and counts them (seccomp_refusal_name, emitters/seccomp.h).
 * A few refusals are probes ordinary tools make and handle (the filter's
 * table lists them, each with its reason): they are
 * counted apart, and named only with --verbose, so the summary lists what
 * the user may want to act on.
 *
 * An unserved report would hold its caller forever, so the listener is
 * served for as long as the event loop runs, which is for as long as the
 * sandbox exists; when omnibox-run is gone, the kernel fails the held and
 * later refused calls with ENOSYS.
 */
#ifndef OMNIBOX_NOTIFY_H
#define OMNIBOX_NOTIFY_H

#include <event2/event.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Distinct calls counted one by one; the rest are counted together. */
#define NOTIFY_MAX 64
/* Refusals --verbose prints; after them, one line says more were not shown. */
#define NOTIFY_SHOWN 50
/* Room for a refusal's name (seccomp_refusal_name, emitters/seccomp.h). */
#define NOTIFY_NAME_MAX 64

struct notify;

/*
 * A counter on BASE, printing each refusal when VERBOSE, and no warning
 * when QUIET; NULL when out of memory.
 */
struct notify *notify_new(struct event_base *base, bool verbose, bool quiet);

/*
 * Receive omnibox-init's ready byte from SOCK (non-blocking) and serve the
 * listener that comes with it, if any.  Returns 1 when the byte came, 0 at
 * the end of the stream without it (the setup failed), -1 when nothing is
 * there yet.  A byte without a listener (the kernel had none to give, and
 * omnibox-init loaded the filter with EPERM in place of each report) earns a
 * warning that refusals are not counted.  A listener that cannot be served
 * is closed (its calls then fail with ENOSYS), with a warning.
 */
int notify_ready(struct notify *n, int sock);

/* The refusals seen, in all (every call counted, the others and the handled probes too). */
unsigned long notify_total(const struct notify *n);

/*
 * What the filter refused, once the run is over, to F: a line with the
 * total, then one per call, most frequent first; then, with --verbose, one
 * line with the probes ordinary tools make and handle.  Nothing when there
 * was no refusal but those.
 */
void notify_summary(const struct notify *n, FILE *f);

struct seccomp_notif;

/*
 * A call the filter reports that omnibox-run may answer otherwise than
 * EPERM (the linux_landlock backend's metadata calls: metadata.h): FN gets
 * each report with the listener (to check the report is still live) and
 * returns 1 with the caller's result in *ERROR (0, or a negative errno; an
 * EPERM is counted as a refusal), or 0 to have it refused and counted.
 */
typedef int notify_answer_fn(void *arg, const struct seccomp_notif *req, int listener,
			     int *error);
void notify_set_answer(struct notify *n, notify_answer_fn *fn, void *arg);

/* Stop serving and release N (NULL is fine). */
void notify_free(struct notify *n);

#endif
