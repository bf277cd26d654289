/*
 * textesc.h - text the agent could have chosen, made safe to show.
 *
 * Every message that carries a name, a path, a link target, an environment
 * string or a request of the agent passes it through text_escape_unit(),
 * the one place that decides what a terminal may receive.  What it escapes:
 *
 *   - the C0 controls (0x00-0x1f), newline and tab included: \n \t \r, the
 *     others \xHH (ESC is \x1b, BEL \x07);
 *   - DEL: \x7f;
 *   - the backslash itself: \\, so every escaped form reads one way only;
 *   - bytes that are not well-formed UTF-8 (a stray continuation byte, a
 *     truncated, overlong or surrogate sequence, anything beyond U+10FFFF),
 *     one byte at a time: \xHH.  So the raw C1 bytes 0x80-0x9f (0x9b is CSI
 *     to some terminals) are always \x80-\x9f;
 *   - the C1 controls written as UTF-8 (U+0080-U+009F): \u0080-\u009f;
 *   - what reorders or breaks lines without a control byte: the line and
 *     paragraph separators U+2028 U+2029, the bidi embeddings and overrides
 *     U+202A-U+202E, the isolates U+2066-U+2069 and the marks U+200E U+200F
 *     U+061C: \uHHHH.
 *
 * Everything else (printable ASCII, the space, other well-formed UTF-8)
 * shows as itself, so an ordinary path is unchanged.  Pure: no allocation,
 * no system call.
 */
#ifndef OMNIBOX_TEXTESC_H
#define OMNIBOX_TEXTESC_H

#include <stddef.h>

enum text_esc_flags {
	/* A field of a space-separated log line (the egress proxy): the space
	 * and every byte beyond ASCII are escaped too, as \xHH. */
	TEXT_ESC_FIELD = 1u << 0,
	/* Text composed of pieces already escaped (a whole message on its way
	 * to the terminal): the backslash stays as it is, so escaping such text
	 * again changes nothing; what a piece forgot is still neutralised. */
	TEXT_ESC_AGAIN = 1u << 1,
	/* A message of several lines: '\n' stays a line break. */
	TEXT_ESC_LINES = 1u << 2,
};

/* The longest shown form of one unit ("\u202e"), with its NUL. */
#define TEXT_ESC_UNIT_MAX 8

/*
 * The shown form of the unit that starts S (LEN > 0 bytes left), written
 * to OUT NUL-terminated: one character, or one byte when S does not start
 * a well-formed UTF-8 sequence.  Returns how many bytes of S it took (1-4).
 */
size_t text_escape_unit(const char *s, size_t len, unsigned flags, char out[TEXT_ESC_UNIT_MAX]);

/*
 * S/LEN escaped into BUF of CAP bytes, NUL-terminated when CAP > 0.  Returns
 * the length the whole escaped text has (as snprintf does); when that does
 * not fit, BUF holds as many whole units as fit followed by "..." (CAP of
 * at least 4).  BUF may be NULL with CAP 0 to measure.
 */
size_t text_escape(char *buf, size_t cap, const char *s, size_t len, unsigned flags);

/* The value of the hex digit C (either case), or -1: for what reads %XX and \xHH escapes. */
static inline int
text_hex_digit(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

#endif
