/*
 * format.h - vsnprintf() for the formats the emitters use most, faster.
 *
 * The emitters format thousands of short strings a compilation ("%s/%s",
 * "--ll-fs %d", "; %s\n"); the C library's vsnprintf() spends most of its
 * time there setting up a stream.  format_v() writes a format whose every
 * conversion is a plain %s, %c, %d, %u, %zu, %lu, %llu (or %%) itself, and
 * hands any other (a width, a precision, a flag, hex) to vsnprintf() whole:
 * the bytes are vsnprintf()'s either way.
 */
#ifndef OMNIBOX_FORMAT_H
#define OMNIBOX_FORMAT_H

#include <stdarg.h>
#include <stddef.h>

/* As vsnprintf(BUF, CAP, FMT, AP): the length the whole output has, what
 * fits of it in BUF (NUL-terminated when CAP > 0); negative on error. */
int format_v(char *buf, size_t cap, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

#endif
