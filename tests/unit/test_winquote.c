/*
 * test_winquote.c - the Windows command-line quoting rules, on Linux.
 *
 * Exact outputs for each rule, then random vectors split again by a
 * reference splitter written from the CommandLineToArgvW rules.  The Wine
 * tests (tests/windows/wt_quote.c) do the same against the real one.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "runtime/win/winquote.h"

/* The command line of ARGV (NULL-terminated), or NULL when refused. */
static wchar_t *
build(const wchar_t *const *argv)
{
	size_t n = 0;
	wchar_t *line;

	while (argv[n])
		n++;
	return winquote_build(argv, n, &line) < 0 ? NULL : line;
}

#define expect_line(expected, ...)                                                                 \
	do {                                                                                       \
		const wchar_t *argv_[] = {__VA_ARGS__, NULL};                                      \
		wchar_t *got_ = build(argv_);                                                      \
		cr_assert_not_null(got_, "refused, expected [%ls]", expected);                     \
		cr_expect(!wcscmp(got_, expected), "expected [%ls]\n     got [%ls]", expected,     \
			  got_);                                                                   \
		free(got_);                                                                        \
	} while (0)

Test(winquote, plain_arguments_stay_as_they_are)
{
	expect_line(L"prog a -b --c=d /e", L"prog", L"a", L"-b", L"--c=d", L"/e");
}

Test(winquote, an_empty_argument_becomes_a_pair_of_quotes)
{
	expect_line(L"prog \"\" x \"\"", L"prog", L"", L"x", L"");
}

Test(winquote, blanks_are_quoted)
{
	expect_line(L"prog \"a b\" \"\t\" \"x\ny\" \"\v\"", L"prog", L"a b", L"\t", L"x\ny", L"\v");
}

Test(winquote, a_quote_is_escaped_with_one_backslash)
{
	expect_line(L"prog \"a\\\"b\" \"\\\"\"", L"prog", L"a\"b", L"\"");
}

Test(winquote, backslashes_before_a_quote_are_doubled_plus_one)
{
	/* a\"b -> "a\\\"b";  a\\"b -> "a\\\\\"b" */
	expect_line(L"prog \"a\\\\\\\"b\" \"a\\\\\\\\\\\"b\"", L"prog", L"a\\\"b", L"a\\\\\"b");
}

Test(winquote, trailing_backslashes_are_doubled_inside_quotes)
{
	/* "a b\" would swallow the closing quote: a b\ -> "a b\\" */
	expect_line(L"prog \"a b\\\\\" \"c d\\\\\\\\\"", L"prog", L"a b\\", L"c d\\\\");
}

Test(winquote, backslashes_not_before_a_quote_are_literal)
{
	expect_line(L"prog C:\\dir\\ a\\\\b \\ \"x\\y z\"", L"prog", L"C:\\dir\\", L"a\\\\b", L"\\",
		    L"x\\y z");
}

Test(winquote, the_program_name_is_quoted_without_escapes)
{
	/* argv[0] is split up to the next quote: its backslashes stay single. */
	expect_line(L"\"C:\\Program Files\\dir\\\" x", L"C:\\Program Files\\dir\\", L"x");
	expect_line(L"C:\\bin\\prog.exe x", L"C:\\bin\\prog.exe", L"x");
	expect_line(L"\"\" x", L"", L"x");
}

Test(winquote, a_program_name_with_a_quote_is_refused)
{
	const wchar_t *argv[] = {L"pro\"g", L"x"};
	wchar_t *line = (wchar_t *)argv;

	cr_expect_eq(winquote_build(argv, 2, &line), -1);
	cr_expect_null(line);
}

Test(winquote, an_empty_vector_is_refused)
{
	wchar_t *line = NULL;

	cr_expect_eq(winquote_build(NULL, 0, &line), -1);
	cr_expect_null(line);
}

Test(winquote, the_measured_length_is_the_written_length)
{
	static const wchar_t *const args[] = {L"", L"a", L"a b", L"\"", L"\\\\\"", L"x\\", L"x \\"};
	wchar_t buf[64];

	for (size_t i = 0; i < sizeof(args) / sizeof(args[0]); i++) {
		size_t want = winquote_arg_len(args[i], false);

		wmemset(buf, L'#', 64);
		cr_expect_eq(winquote_arg(args[i], false, buf), want, "argument %zu", i);
		cr_expect_eq(buf[want], L'#', "argument %zu wrote past its length", i);
	}
}

/* ---- a reference splitter: the CommandLineToArgvW rules --------------------------- */

struct split {
	wchar_t *v[16];
	size_t n;
};

static bool
blank(wchar_t c)
{
	return c == L' ' || c == L'\t';
}

static void
split_line(const wchar_t *p, struct split *out)
{
	size_t cap = wcslen(p) + 1;
	wchar_t *a = calloc(cap, sizeof(*a));
	size_t n = 0;

	out->n = 0;
	/* The program: quoted up to the next quote, or up to the next blank; no escapes. */
	if (*p == L'"') {
		for (p++; *p && *p != L'"'; p++)
			a[n++] = *p;
		if (*p)
			p++;
	} else {
		for (; *p && !blank(*p); p++)
			a[n++] = *p;
	}
	a[n] = 0;
	out->v[out->n++] = a;
	for (;;) {
		bool quoted = false;

		while (blank(*p))
			p++;
		if (!*p || out->n == 16)
			break;
		a = calloc(cap, sizeof(*a));
		n = 0;
		for (;;) {
			size_t backslashes = 0;

			while (*p == L'\\') {
				backslashes++;
				p++;
			}
			if (*p == L'"') {
				for (size_t i = 0; i < backslashes / 2; i++)
					a[n++] = L'\\';
				if (backslashes % 2) {
					a[n++] = L'"';
				} else {
					quoted = !quoted;
				}
				p++;
				continue;
			}
			for (size_t i = 0; i < backslashes; i++)
				a[n++] = L'\\';
			if (!*p || (blank(*p) && !quoted))
				break;
			a[n++] = *p++;
		}
		a[n] = 0;
		out->v[out->n++] = a;
	}
}

static void
split_free(struct split *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
}

Test(winquote, the_reference_splitter_reads_known_lines)
{
	struct split s;

	split_line(L"\"C:\\a b\\p.exe\" x\\\\\"y z\" \"\" \\\\\\\"q", &s);
	cr_assert_eq(s.n, 4);
	cr_expect(!wcscmp(s.v[0], L"C:\\a b\\p.exe"));
	cr_expect(!wcscmp(s.v[1], L"x\\y z"));
	cr_expect(!wcscmp(s.v[2], L""));
	cr_expect(!wcscmp(s.v[3], L"\\\"q"));
	split_free(&s);
}

Test(winquote, random_vectors_split_back_into_themselves)
{
	static const wchar_t alphabet[] = L"ab \t\"\\\\\\\n\x00e9";
	unsigned long long rng = 0x2545f4914f6cdd1dull;

	for (int round = 0; round < 50000; round++) {
		wchar_t args[8][12];
		const wchar_t *argv[8];
		size_t argc;
		wchar_t *line;
		struct split s;

		rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
		argc = 1 + rng % 7;
		for (size_t i = 0; i < argc; i++) {
			size_t len;

			rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
			len = rng % 11;
			for (size_t k = 0; k < len; k++) {
				wchar_t c = alphabet[(rng >> (3 * k + 8)) % (wcslen(alphabet))];

				/* No command line can carry a quote in the program name. */
				args[i][k] = i == 0 && c == L'"' ? L'p' : c;
			}
			args[i][len] = 0;
			argv[i] = args[i];
		}
		cr_assert_eq(winquote_build(argv, argc, &line), 0);
		split_line(line, &s);
		cr_assert_eq(s.n, argc, "round %d: [%ls] split into %zu, not %zu", round, line, s.n,
			     argc);
		for (size_t i = 0; i < argc; i++)
			cr_assert(!wcscmp(s.v[i], argv[i]),
				  "round %d: [%ls] gave argument %zu as <%ls>, not <%ls>", round,
				  line, i, s.v[i], argv[i]);
		split_free(&s);
		free(line);
	}
}
