/*
 * test_textbuf.c - textbuf.c's shortcuts change no byte: tb_escape() copies
 * runs of plain ASCII whole, and must write what text_escape_unit() gives
 * unit by unit; tb_printf() formats into the room it has, and must write
 * what snprintf() does, whatever the room.
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
