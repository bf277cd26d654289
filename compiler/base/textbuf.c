/*
 * textbuf.c - growable byte buffer.
 */
#include "textbuf.h"
#include "textesc.h"
#include "format.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void
tb_reserve(struct textbuf *tb, size_t extra)
{
	size_t need = tb->len + extra + 1;
	size_t cap;
	char *p;

	if (need <= tb->cap)
		return;
	cap = tb->cap ? tb->cap : 256;
	while (cap < need)
		cap *= 2;
	p = realloc(tb->data, cap);
	if (!p) {
		fputs("omnibox: out of memory\n", stderr);
		abort();
	}
	tb->data = p;
	tb->cap = cap;
}

void
tb_free(struct textbuf *tb)
{
	free(tb->data);
	tb->data = NULL;
	tb->len = tb->cap = 0;
}

void
tb_reset(struct textbuf *tb)
{
	tb->len = 0;
	if (tb->data)
		tb->data[0] = '\0';
}

void
tb_write(struct textbuf *tb, const void *p, size_t n)
{
	tb_reserve(tb, n);
	if (n)
		memcpy(tb->data + tb->len, p, n);
	tb->len += n;
	tb->data[tb->len] = '\0';
}

void
tb_putc(struct textbuf *tb, char c)
{
	if (tb->len + 2 > tb->cap)
		tb_reserve(tb, 1);
	tb->data[tb->len++] = c;
	tb->data[tb->len] = '\0';
}

void
tb_puts(struct textbuf *tb, const char *s)
{
	tb_write(tb, s, strlen(s));
}

void
tb_vprintf(struct textbuf *tb, const char *fmt, va_list ap)
{
	size_t room = tb->cap > tb->len ? tb->cap - tb->len : 0;
	va_list again;
	int n;

	/* Straight into the room there is; measured and written again only when short. */
	va_copy(again, ap);
	n = format_v(room ? tb->data + tb->len : NULL, room, fmt, ap);
	if (n < 0) {
		if (room)
			tb->data[tb->len] = '\0';
		va_end(again);
		return;
	}
	if ((size_t)n >= room) {
		tb_reserve(tb, (size_t)n);
		format_v(tb->data + tb->len, (size_t)n + 1, fmt, again);
	}
	va_end(again);
	tb->len += (size_t)n;
}

void
tb_printf(struct textbuf *tb, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tb_vprintf(tb, fmt, ap);
	va_end(ap);
}

/* Does byte C show as itself whatever follows it (textesc.h): printable ASCII but the backslash? */
static bool
shows_as_itself(unsigned char c, unsigned flags)
{
	return (c > ' ' && c < 0x7f && c != '\\') || (c == ' ' && !(flags & TEXT_ESC_FIELD));
}

void
tb_escape(struct textbuf *tb, const char *s, unsigned flags)
{
	size_t len = strlen(s);
	char unit[TEXT_ESC_UNIT_MAX];

	for (size_t i = 0; i < len;) {
		size_t end = i;

		/* A run of such bytes is copied whole; the rest unit by unit. */
		while (end < len && shows_as_itself((unsigned char)s[end], flags))
			end++;
		if (end > i) {
			tb_write(tb, s + i, end - i);
			i = end;
			continue;
		}
		i += text_escape_unit(s + i, len - i, flags, unit);
		tb_puts(tb, unit);
	}
}

void
tb_json_string(struct textbuf *tb, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	tb_putc(tb, '"');
	while (*p) {
		const unsigned char *run = p;

		/* A run of bytes that stand for themselves is copied whole. */
		while (*p >= 0x20 && *p != 0x7f && *p != '"' && *p != '\\')
			p++;
		if (p > run) {
			tb_write(tb, run, (size_t)(p - run));
			continue;
		}
		switch (*p) {
		case '"':
			tb_puts(tb, "\\\"");
			break;
		case '\\':
			tb_puts(tb, "\\\\");
			break;
		case '\n':
			tb_puts(tb, "\\n");
			break;
		case '\t':
			tb_puts(tb, "\\t");
			break;
		case '\r':
			tb_puts(tb, "\\r");
			break;
		default:
			tb_printf(tb, "\\u%04x", *p);
		}
		p++;
	}
	tb_putc(tb, '"');
}
