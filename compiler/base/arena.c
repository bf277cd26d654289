/*
 * arena.c - a bump allocator over a list of blocks.
 */
#include "arena.h"
#include "textesc.h"
#include "format.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ARENA_BLOCK 65536
#define ARENA_ALIGN _Alignof(max_align_t)

struct block {
	struct block *next;
	size_t used, size;
	_Alignas(max_align_t) unsigned char data[];
};

struct arena {
	struct block *head;
};

static void *
xmalloc(size_t n)
{
	void *p = malloc(n);

	if (!p) {
		fputs("omnibox: out of memory\n", stderr);
		abort();
	}
	return p;
}

struct arena *
arena_new(void)
{
	struct arena *a = xmalloc(sizeof(*a));

	a->head = NULL;
	return a;
}

void
arena_free(struct arena *a)
{
	struct block *b, *next;

	if (!a)
		return;
	for (b = a->head; b; b = next) {
		next = b->next;
		free(b);
	}
	free(a);
}

void *
arena_alloc(struct arena *a, size_t size)
{
	struct block *b = a->head;
	size_t need = (size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
	void *p;

	if (need < size) {
		fputs("omnibox: allocation too large\n", stderr);
		abort();
	}
	if (!b || b->size - b->used < need) {
		size_t cap = need > ARENA_BLOCK / 2 ? need : ARENA_BLOCK;

		if (cap > SIZE_MAX - sizeof(*b)) {
			fputs("omnibox: allocation too large\n", stderr);
			abort();
		}
		b = xmalloc(sizeof(*b) + cap);
		b->used = 0;
		b->size = cap;
		if (a->head && need > ARENA_BLOCK / 2) {
			/* A large allocation gets its own block behind the
			 * current one, so the current block's tail stays usable. */
			b->next = a->head->next;
			a->head->next = b;
		} else {
			b->next = a->head;
			a->head = b;
		}
	}
	p = b->data + b->used;
	b->used += need;
	memset(p, 0, size);
	return p;
}

char *
arena_strndup(struct arena *a, const char *s, size_t len)
{
	char *p = arena_alloc(a, len + 1);

	if (len)
		memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

char *
arena_strdup(struct arena *a, const char *s)
{
	return arena_strndup(a, s, strlen(s));
}

char *
arena_printf(struct arena *a, const char *fmt, ...)
{
	struct block *b = a->head;
	size_t room = b ? b->size - b->used : 0;
	char *p = b ? (char *)b->data + b->used : NULL;
	va_list ap;
	int n;

	/* Straight into the current block's free tail; measured and written
	 * again elsewhere only when it does not fit. */
	va_start(ap, fmt);
	n = format_v(room ? p : NULL, room, fmt, ap);
	va_end(ap);
	if (n < 0) {
		fputs("omnibox: bad format\n", stderr);
		abort();
	}
	if ((size_t)n < room) {
		b->used += ((size_t)n + 1 + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
		if (b->used > b->size)
			b->used = b->size;
		return p;
	}
	p = arena_alloc(a, (size_t)n + 1);
	va_start(ap, fmt);
	format_v(p, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return p;
}

void *
arena_grow(struct arena *a, void *vec, size_t *n, size_t *cap, size_t size)
{
	unsigned char *v = vec;

	if (*n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 8;
		unsigned char *nv;

		if (ncap > SIZE_MAX / size) {
			fputs("omnibox: allocation too large\n", stderr);
			abort();
		}
		nv = arena_alloc(a, ncap * size);
		if (*n)
			memcpy(nv, v, *n * size);
		v = nv;
		*cap = ncap;
	}
	memset(v + *n * size, 0, size);
	(*n)++;
	return v;
}

const char *
arena_escape(struct arena *a, const char *s)
{
	size_t len = strlen(s), n = text_escape(NULL, 0, s, len, 0);
	char *p = arena_alloc(a, n + 1);

	text_escape(p, n + 1, s, len, 0);
	return p;
}
