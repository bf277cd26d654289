/*
 * test_textbuf.c - textbuf.c's shortcuts change no byte: tb_escape() copies
 * runs of plain ASCII whole, and must write what text_escape_unit() gives
 * unit by unit; tb_printf() formats into the room it has, and must write
 * what snprintf() does, whatever the room; format_v() writes its plain
 * formats itself, and must write what vsnprintf() does, whatever the room;
 * tb_json_string() copies plain runs whole, and must escape every byte as
 * one at a time would.
 */
#include <criterion/criterion.h>

#include <limits.h>
#include <stdarg.h>
#include <stdint.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/base/format.h"
#include "compiler/base/textbuf.h"
#include "compiler/base/textesc.h"

static void
unit_by_unit(struct textbuf *tb, const char *s, unsigned flags)
{
	size_t len = strlen(s);
	char unit[TEXT_ESC_UNIT_MAX];

	for (size_t i = 0; i < len;) {
		i += text_escape_unit(s + i, len - i, flags, unit);
		tb_puts(tb, unit);
	}
}

static void
same(const char *s, unsigned flags)
{
	struct textbuf a = {0}, b = {0};

	tb_puts(&a, "<");
	tb_puts(&b, "<");
	tb_escape(&a, s, flags);
	unit_by_unit(&b, s, flags);
	cr_assert(a.len == b.len && !memcmp(a.data, b.data, a.len) && a.data[a.len] == '\0',
		  "flags %u, input of %zu bytes: %s vs %s", flags, strlen(s), a.data, b.data);
	tb_free(&a);
	tb_free(&b);
}

Test(textbuf, tb_escape_writes_what_the_units_are_for_every_byte_pair)
{
	for (unsigned flags = 0; flags < 8; flags++)
		for (int c = 1; c < 256; c++)
			for (int d = 0; d < 256; d++) {
				char s[4] = {(char)c, (char)d, 'x', 0};

				same(s, flags);
			}
}

Test(textbuf, tb_escape_writes_what_the_units_are_for_mixed_text)
{
	static const char *const texts[] = {
	    "",
	    "plain/path with spaces",
	    "a\\b\\\\c",
	    "line\nbreak\ttab\rcr\x1b[31mred\x7f",
	    "caf\xc3\xa9 \xe2\x80\xae evil \xe2\x80\xa8 \xc2\x9b csi \xf0\x9f\x98\x80 ok",
	    "truncated \xe2\x80",
	    "\xff\xfe stray \x80 \xc0\xaf overlong \xed\xa0\x80 surrogate \xf4\x90\x80\x80",
	};

	for (unsigned flags = 0; flags < 8; flags++)
		for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
			same(texts[i], flags);
}

Test(textbuf, tb_printf_writes_what_snprintf_does_whatever_the_room)
{
	char want[1200], big[1000];

	memset(big, 'y', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	for (size_t pre = 0; pre < 600; pre += 7) {
		struct textbuf tb = {0};

		for (size_t i = 0; i < pre; i++)
			tb_putc(&tb, 'p');
		tb_printf(&tb, "%s|%d|%.*s|%s", "x", (int)pre, (int)(pre % 300), big, "");
		memset(want, 'p', pre);
		snprintf(want + pre, sizeof(want) - pre, "%s|%d|%.*s|%s", "x", (int)pre,
			 (int)(pre % 300), big, "");
		cr_assert_eq(tb.len, strlen(want));
		cr_assert_str_eq(tb.data, want, "prefix of %zu", pre);
		tb_free(&tb);
	}
}

/* format_v() and vsnprintf() on the same format and arguments, in every room
 * up to past the whole length. */
static void
same_format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void
same_format(const char *fmt, ...)
{
	char want[512], got[512];
	va_list ap, aq;
	int n, m;

	va_start(ap, fmt);
	va_copy(aq, ap);
	n = vsnprintf(want, sizeof(want), fmt, ap);
	m = format_v(got, sizeof(got), fmt, aq);
	va_end(aq);
	va_end(ap);
	cr_assert_eq(m, n, "%s: length %d, vsnprintf %d", fmt, m, n);
	cr_assert_str_eq(got, want, "%s", fmt);
	for (size_t room = 0; room <= (size_t)n + 2; room++) {
		memset(want, 'W', sizeof(want));
		memset(got, 'W', sizeof(got));
		va_start(ap, fmt);
		va_copy(aq, ap);
		vsnprintf(want, room, fmt, ap);
		format_v(got, room, fmt, aq);
		va_end(aq);
		va_end(ap);
		cr_assert(!memcmp(want, got, sizeof(want)), "%s in a room of %zu", fmt, room);
	}
}

Test(textbuf, format_v_writes_what_vsnprintf_does_whatever_the_room)
{
	same_format("%s", "");
	same_format("plain text, no conversion");
	same_format("%s/%s", "/home/u", ".bashrc");
	same_format("%s", "");
	same_format("%s%s%s", "a", "", "c");
	same_format("100%% of %s", "it");
	same_format("%%%%");
	same_format("%c%c|%c", 'a', 'z', '%');
	same_format("[%d] [%d] [%d] [%d]", 0, -1, INT_MAX, INT_MIN);
	same_format("[%u] [%u]", 0u, UINT_MAX);
	same_format("[%ld] [%ld] [%lu]", LONG_MIN, LONG_MAX, ULONG_MAX);
	same_format("[%lld] [%lld] [%llu]", LLONG_MIN, LLONG_MAX, ULLONG_MAX);
	same_format("[%zu] [%zu] [%zd]", (size_t)0, SIZE_MAX, (ssize_t)-5);
	same_format("--ll-fs %d %llu # %s, line %u", 7, 0x1fffULL, "write_paths", 12u);
	/* What takes the long way: widths, precisions, flags, other conversions. */
	same_format("%5s|%-5s|%.2s", "ab", "cd", "efgh");
	same_format("%*s%s", 4, "", "key");
	same_format("%.*s", 3, "abcdef");
	same_format("%04x %x %X %o", 0x2au, 255u, 255u, 8u);
	same_format("%+d % d %05d", 3, 4, -5);
	same_format("%llx %p", 0xdeadbeefULL, (void *)0);
}

Test(textbuf, tb_json_string_escapes_every_byte_as_one_at_a_time_would)
{
	for (int c = 1; c < 256; c++)
		for (int d = 0; d < 256; d++) {
			char s[4] = {(char)c, (char)d, 'x', 0};
			struct textbuf a = {0}, b = {0};

			tb_json_string(&a, s);
			tb_putc(&b, '"');
			for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
				if (*p == '"' || *p == '\\')
					tb_printf(&b, "\\%c", *p);
				else if (*p == '\n')
					tb_puts(&b, "\\n");
				else if (*p == '\t')
					tb_puts(&b, "\\t");
				else if (*p == '\r')
					tb_puts(&b, "\\r");
				else if (*p < 0x20 || *p == 0x7f)
					tb_printf(&b, "\\u%04x", *p);
				else
					tb_putc(&b, (char)*p);
			}
			tb_putc(&b, '"');
			cr_assert_str_eq(a.data, b.data, "bytes %02x %02x", c, d);
			tb_free(&a);
			tb_free(&b);
		}
}
