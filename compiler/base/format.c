/*
 * format.c - the emitters' common formats without a stream (format.h).
 */
#include "format.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* Does every conversion of FMT take the quick path? */
static bool
plain(const char *fmt)
{
	for (const char *p = strchr(fmt, '%'); p; p = strchr(p, '%')) {
		p++;
		if (*p == 'l')
			p += p[1] == 'l' ? 2 : 1;
		else if (*p == 'z')
			p++;
		if (!*p)
			return false;
		if (p[-1] == '%' ? !strchr("scdu%", *p) : !strchr("du", *p))
			return false;
		p++;
	}
	return true;
}

struct out {
	char *buf;
	size_t cap, len;
};

static void
put(struct out *o, const char *s, size_t n)
{
	if (o->len < o->cap) {
		size_t fit = o->cap - o->len - 1 < n ? o->cap - o->len - 1 : n;

		memcpy(o->buf + o->len, s, fit);
	}
	o->len += n;
}

static void
put_unsigned(struct out *o, unsigned long long v, bool minus)
{
	char digits[24];
	size_t i = sizeof(digits);

	do
		digits[--i] = (char)('0' + v % 10);
	while (v /= 10);
	if (minus)
		digits[--i] = '-';
	put(o, digits + i, sizeof(digits) - i);
}

static void
put_signed(struct out *o, long long v)
{
	put_unsigned(o, v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v, v < 0);
}

int
format_v(char *buf, size_t cap, const char *fmt, va_list ap)
{
	struct out o = {buf, cap, 0};
	const char *p = fmt;

	if (!plain(fmt))
		return vsnprintf(buf, cap, fmt, ap);
	for (;;) {
		const char *pct = strchr(p, '%');
		int size = 0; /* 0: int, 1: long, 2: long long, 3: size_t */

		if (!pct) {
			put(&o, p, strlen(p));
			break;
		}
		put(&o, p, (size_t)(pct - p));
		p = pct + 1;
		if (*p == 'l') {
			size = p[1] == 'l' ? 2 : 1;
			p += size;
		} else if (*p == 'z') {
			size = 3;
			p++;
		}
		switch (*p++) {
		case 's': {
			const char *s = va_arg(ap, const char *);

			if (!s)
				s = "(null)";
			put(&o, s, strlen(s));
			break;
		}
		case 'c': {
			char c = (char)va_arg(ap, int);

			put(&o, &c, 1);
			break;
		}
		case 'd':
			put_signed(&o, size == 2   ? va_arg(ap, long long)
				       : size == 1 ? va_arg(ap, long)
				       : size == 3 ? (long long)va_arg(ap, size_t)
						   : va_arg(ap, int));
			break;
		case 'u':
			put_unsigned(&o, size == 2   ? va_arg(ap, unsigned long long)
					 : size == 1 ? va_arg(ap, unsigned long)
					 : size == 3 ? va_arg(ap, size_t)
						     : va_arg(ap, unsigned),
				     false);
			break;
		default: /* '%' */
			put(&o, "%", 1);
		}
	}
	if (o.len > INT_MAX)
		return -1;
	if (cap)
		buf[o.len < cap ? o.len : cap - 1] = '\0';
	return (int)o.len;
}
