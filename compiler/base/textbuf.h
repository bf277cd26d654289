/*
 * textbuf.h - a growable byte buffer for emitted text and binary output.
 *
 * Emitters append to a textbuf; the CLI decides where the bytes go.  The
 * buffer owns its memory (malloc), because outputs outlive the arena of
 * the compilation that produced them only until they are written.
 * Allocation failure aborts the process.
 */
#ifndef OMNIBOX_TEXTBUF_H
#define OMNIBOX_TEXTBUF_H

#include <stdarg.h>
#include <stddef.h>

struct textbuf {
	char *data; /* always NUL-terminated after the first append */
	size_t len, cap;
};

void tb_free(struct textbuf *tb);
void tb_reset(struct textbuf *tb);
void tb_putc(struct textbuf *tb, char c);
void tb_write(struct textbuf *tb, const void *p, size_t n);
void tb_puts(struct textbuf *tb, const char *s);
void tb_printf(struct textbuf *tb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tb_vprintf(struct textbuf *tb, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

/* Append the C string S escaped (textesc.h, with FLAGS). */
void tb_escape(struct textbuf *tb, const char *s, unsigned flags);

/* Append S as a JSON string literal, quotes included. */
void tb_json_string(struct textbuf *tb, const char *s);

#endif
