/*
 * textesc.c - the one escaping of what a terminal is shown (textesc.h).
 */
#include "textesc.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/*
 * The code point of the well-formed UTF-8 sequence at S, and its length in
 * *N; false when S does not start one (RFC 3629: no overlong form, no
 * surrogate, nothing beyond U+10FFFF).
 */
static bool
utf8_decode(const unsigned char *s, size_t len, uint32_t *cp, size_t *n)
{
	uint32_t c = s[0], min;
	size_t need;

	if (c < 0x80) {
		*cp = c;
		*n = 1;
		return true;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		need = 1;
		c &= 0x1f;
		min = 0x80;
	} else if (c >= 0xe0 && c <= 0xef) {
		need = 2;
		c &= 0x0f;
		min = 0x800;
	} else if (c >= 0xf0 && c <= 0xf4) {
		need = 3;
		c &= 0x07;
		min = 0x10000;
	} else {
		return false;
	}
	if (len < need + 1)
		return false;
	for (size_t i = 1; i <= need; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return false;
		c = (c << 6) | (s[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return false;
	*cp = c;
	*n = need + 1;
	return true;
}

/* Characters that move or reorder text without a control byte. */
static bool
reorders_text(uint32_t cp)
{
	return (cp >= 0x80 && cp <= 0x9f) || cp == 0x2028 || cp == 0x2029 ||
	       (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0x200e ||
	       cp == 0x200f || cp == 0x061c;
}

size_t
text_escape_unit(const char *s, size_t len, unsigned flags, char out[TEXT_ESC_UNIT_MAX])
{
	const unsigned char *u = (const unsigned char *)s;
	unsigned char c = u[0];
	uint32_t cp;
	size_t n;

	if (c == '\\') {
		strcpy(out, flags & TEXT_ESC_AGAIN ? "\\" : "\\\\");
		return 1;
	}
	if (c == '\n' && (flags & TEXT_ESC_LINES)) {
		strcpy(out, "\n");
		return 1;
	}
	if (c == '\n' || c == '\t' || c == '\r') {
		out[0] = '\\';
		out[1] = c == '\n' ? 'n' : c == '\t' ? 't' : 'r';
		out[2] = '\0';
		return 1;
	}
	if (c < 0x20 || c == 0x7f || (c == ' ' && (flags & TEXT_ESC_FIELD)) ||
	    (c >= 0x80 && (flags & TEXT_ESC_FIELD)) || !utf8_decode(u, len, &cp, &n)) {
		snprintf(out, TEXT_ESC_UNIT_MAX, "\\x%02x", c);
		return 1;
	}
	if (reorders_text(cp)) {
		snprintf(out, TEXT_ESC_UNIT_MAX, "\\u%04x", (unsigned)cp);
		return n;
	}
	memcpy(out, s, n);
	out[n] = '\0';
	return n;
}

size_t
text_escape(char *buf, size_t cap, const char *s, size_t len, unsigned flags)
{
	char unit[TEXT_ESC_UNIT_MAX];
	size_t total = 0, o = 0, i, n;

	for (i = 0; i < len; total += strlen(unit))
		i += text_escape_unit(s + i, len - i, flags, unit);
	if (!cap)
		return total;
	/* All of it, or whole units with room for "..." after them. */
	for (i = 0; i < len; o += n) {
		i += text_escape_unit(s + i, len - i, flags, unit);
		n = strlen(unit);
		if (o + n + (total < cap ? 0 : 3) >= cap)
			break;
		memcpy(buf + o, unit, n);
	}
	if (total >= cap && cap >= 4) {
		memcpy(buf + o, "...", 3);
		o += 3;
	}
	buf[o < cap ? o : cap - 1] = '\0';
	return total;
}
