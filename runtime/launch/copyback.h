/*
 * copyback.h - omnibox-run's side of write_files (runtime/resolve/writeback.h):
 * the private directories watched while the sandbox runs, each granted
 * file copied back to the host when a write to it is closed or a file is
 * renamed onto it, and every one once more when the sandbox has exited.
 */
#ifndef OMNIBOX_COPYBACK_H
#define OMNIBOX_COPYBACK_H

#include <stddef.h>

#include "runtime/resolve/writeback.h"

struct event_base;
struct copyback;

/* Watch WB[0..N) from BASE's loop; NULL (with a message) when N is 0 or
 * the watch cannot be set up: the final copy at exit still happens. */
struct copyback *copyback_start(struct event_base *base, struct writeback *wb, size_t n);

/* The last copy of each file, then free CB (which may be NULL). */
void copyback_finish(struct copyback *cb, struct writeback *wb, size_t n);

#endif
