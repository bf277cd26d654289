/*
 * test_textesc.c - the one escaping of what a launch shows (textesc.h).
 *
 * Exact shown forms for each class of byte and character the header names,
 * the flags of the proxy and of a composed message, and the cut.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "compiler/base/arena.h"
#include "compiler/base/textbuf.h"
#include "compiler/base/textesc.h"

#define expect_shown(in, flags, expected)                                                          \
	do {                                                                                       \
		char buf_[512];                                                                    \
		size_t n_ = text_escape(buf_, sizeof(buf_), in, sizeof(in) - 1, flags);            \
		cr_expect(!strcmp(buf_, expected), "expected [%s]\n     got [%s]", expected,       \
			  buf_);                                                                   \
		cr_expect_eq(n_, strlen(expected), "length %zu, expected %zu", n_,                 \
			     strlen(expected));                                                    \
	} while (0)

Test(textesc, ordinary_paths_and_text_stay_as_they_are)
{
	expect_shown("/home/ann/My Project/src-1.2_x~", 0, "/home/ann/My Project/src-1.2_x~");
	expect_shown("caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80", 0,
		     "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80");
	expect_shown("", 0, "");
}

Test(textesc, c0_controls_newline_tab_and_del_are_escaped)
{
	expect_shown("a\nb\tc\rd", 0, "a\\nb\\tc\\rd");
	expect_shown("\x1b[2J\x07\x01\x7f", 0, "\\x1b[2J\\x07\\x01\\x7f");
	expect_shown("x\0y", 0, "x\\x00y");
}

Test(textesc, the_backslash_is_escaped_so_the_escaped_form_reads_one_way)
{
	expect_shown("\\x1b", 0, "\\\\x1b");
	expect_shown("a\\", 0, "a\\\\");
}

Test(textesc, osc52_and_a_forged_line_come_out_inert)
{
	expect_shown("\x1b]52;c;cHduZWQ=\x07", 0, "\\x1b]52;c;cHduZWQ=\\x07");
	expect_shown("x\nomnibox-run: all clear", 0, "x\\nomnibox-run: all clear");
}

Test(textesc, c1_controls_are_escaped_as_raw_bytes_and_as_utf8)
{
	expect_shown("a\x9b"
		     "2Jb",
		     0, "a\\x9b2Jb");
	expect_shown("\x80\x9f", 0, "\\x80\\x9f");
	expect_shown("\xc2\x9b"
		     "2J\xc2\x80\xc2\x9f",
		     0, "\\u009b2J\\u0080\\u009f");
	/* U+00A0, just past C1, is text. */
	expect_shown("\xc2\xa0", 0, "\xc2\xa0");
}

Test(textesc, invalid_utf8_is_escaped_byte_by_byte)
{
	expect_shown("\xc3", 0, "\\xc3");
	expect_shown("\xc3x", 0, "\\xc3x");
	expect_shown("\xc0\xaf", 0, "\\xc0\\xaf");		     /* overlong '/' */
	expect_shown("\xe0\x80\xaf", 0, "\\xe0\\x80\\xaf");	     /* overlong, 3 bytes */
	expect_shown("\xed\xa0\x80", 0, "\\xed\\xa0\\x80");	     /* a surrogate */
	expect_shown("\xf4\x90\x80\x80", 0, "\\xf4\\x90\\x80\\x80"); /* beyond U+10FFFF */
	expect_shown("\xff\xfe", 0, "\\xff\\xfe");
	expect_shown("\xe2\x80", 0, "\\xe2\\x80"); /* cut short */
}

Test(textesc, line_separators_and_bidi_controls_are_escaped)
{
	expect_shown("a\xe2\x80\xa8"
		     "b\xe2\x80\xa9",
		     0, "a\\u2028b\\u2029");
	expect_shown("\xe2\x80\xaa\xe2\x80\xab\xe2\x80\xac\xe2\x80\xad\xe2\x80\xae", 0,
		     "\\u202a\\u202b\\u202c\\u202d\\u202e");
	expect_shown("\xe2\x81\xa6\xe2\x81\xa7\xe2\x81\xa8\xe2\x81\xa9", 0,
		     "\\u2066\\u2067\\u2068\\u2069");
	expect_shown("\xe2\x80\x8e\xe2\x80\x8f\xd8\x9c", 0, "\\u200e\\u200f\\u061c");
	/* Their neighbours are text. */
	expect_shown("\xe2\x80\xa7\xe2\x80\xaf\xe2\x81\xa5", 0,
		     "\xe2\x80\xa7\xe2\x80\xaf\xe2\x81\xa5");
}

Test(textesc, a_log_field_escapes_the_space_and_everything_beyond_ascii)
{
	expect_shown("GET /a b\\c", TEXT_ESC_FIELD, "GET\\x20/a\\x20b\\\\c");
	expect_shown("caf\xc3\xa9\x1b", TEXT_ESC_FIELD, "caf\\xc3\\xa9\\x1b");
}

Test(textesc, a_composed_message_keeps_its_lines_and_escapes_once)
{
	expect_shown("one: \\x1b\ntwo\x1b", TEXT_ESC_AGAIN | TEXT_ESC_LINES,
		     "one: \\x1b\ntwo\\x1b");
	expect_shown("a\\nb\tc", TEXT_ESC_AGAIN, "a\\nb\\tc");
	expect_shown("a\nb", TEXT_ESC_AGAIN, "a\\nb");
}

Test(textesc, escaping_what_is_escaped_again_changes_nothing)
{
	static const char in[] = "\x1b]0;t\x07\n\\\x9b\xc2\x9b\xe2\x80\xae\xc3\xa9";
	char once[256], twice[256];

	text_escape(once, sizeof(once), in, sizeof(in) - 1, 0);
	text_escape(twice, sizeof(twice), once, strlen(once), TEXT_ESC_AGAIN);
	cr_expect_str_eq(twice, once);
	cr_expect_str_eq(once, "\\x1b]0;t\\x07\\n\\\\\\x9b\\u009b\\u202e\xc3\xa9");
}

Test(textesc, a_long_text_is_cut_between_units_with_dots)
{
	char buf[10];
	size_t n;

	n = text_escape(buf, sizeof(buf), "abcdefghijkl", 12, 0);
	cr_expect_str_eq(buf, "abcdef...");
	cr_expect_eq(n, 12);
	n = text_escape(buf, sizeof(buf), "abcd\x1b\x1b", 6, 0);
	cr_expect_str_eq(buf, "abcd...");
	cr_expect_eq(n, 12);
	n = text_escape(buf, sizeof(buf), "abcdefghi", 9, 0);
	cr_expect_str_eq(buf, "abcdefghi");
	cr_expect_eq(n, 9);
	cr_expect_eq(text_escape(NULL, 0, "\x1b", 1, 0), 4);
}

Test(textesc, arena_and_textbuf_forms_are_the_same_escaping)
{
	struct arena *a = arena_new();
	struct textbuf tb = {0};

	cr_expect_str_eq(arena_escape(a, "ws/\x1b[2J\n\x9b"), "ws/\\x1b[2J\\n\\x9b");
	tb_escape(&tb, "ws/\x1b[2J\n\x9b", 0);
	cr_expect_str_eq(tb.data, "ws/\\x1b[2J\\n\\x9b");
	tb_free(&tb);
	arena_free(a);
}
