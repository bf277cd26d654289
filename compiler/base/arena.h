/*
 * arena.h - one owner for everything a compilation allocates.
 *
 * Allocation never fails from the caller's point of view: when the system
 * is out of memory the process aborts with a message, because a policy
 * compiler that continues with a half-built IR is worse than one that
 * stops.  arena_free() releases every block at once.
 */
#ifndef OMNIBOX_ARENA_H
#define OMNIBOX_ARENA_H

#include <stddef.h>

struct arena;

/* A new, empty arena.  Free it with arena_free(). */
struct arena *arena_new(void);

/* Release every allocation made from the arena, and the arena itself. */
void arena_free(struct arena *a);

/* SIZE bytes aligned for any type, zero-filled, owned by the arena. */
void *arena_alloc(struct arena *a, size_t size);

/* A NUL-terminated copy of the LEN bytes at S (which may hold NULs). */
char *arena_strndup(struct arena *a, const char *s, size_t len);

/* A NUL-terminated copy of the C string S. */
char *arena_strdup(struct arena *a, const char *s);

/* printf into arena memory. */
char *arena_printf(struct arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * The C string S as a message may show it: escaped (textesc.h), so a name,
 * path or link target the agent chose cannot act on the terminal or start
 * a line of its own.  Every such string in a message goes through this.
 */
const char *arena_escape(struct arena *a, const char *s);

/*
 * Grow the array *VEC of *N elements of SIZE bytes by one zeroed element
 * and return it.  Capacity doubles; the old block stays in the arena.
 * *CAP holds the capacity; start with all three zero.
 */
void *arena_grow(struct arena *a, void *vec, size_t *n, size_t *cap, size_t size);

/* Append one zeroed element to VEC (with counters N and CAP); yields its address. */
#define ARENA_PUSH(a, vec, n, cap)                                                                 \
	((vec) = arena_grow((a), (vec), &(n), &(cap), sizeof(*(vec))), &(vec)[(n)-1])

#endif
