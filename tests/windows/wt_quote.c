/*
 * wt_quote.c - winquote_build() against the real splitter: every vector
 * is quoted into a command line, split again with CommandLineToArgvW,
 * and must come back unchanged.  Fixed cases first (the rules' corners),
 * then random vectors over the characters that matter.
 *
 *   wt_quote.exe [ROUNDS]     exit 0 when every vector survives, 1 otherwise
 */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <shellapi.h>
#include <stdio.h>
#include <stdlib.h>
#include <wchar.h>

#include "runtime/win/winquote.h"

static unsigned checked, failed;

static void
print_vector(const wchar_t *const *argv, size_t argc)
{
	for (size_t i = 0; i < argc; i++)
		wprintf(L"  [%u] <%ls>\n", (unsigned)i, argv[i]);
}

static void
round_trip(const wchar_t *const *argv, size_t argc)
{
	wchar_t *line;
	wchar_t **back;
	int n;
	bool same;

	checked++;
	if (winquote_build(argv, argc, &line) < 0) {
		failed++;
		wprintf(L"FAIL: winquote_build refused:\n");
		print_vector(argv, argc);
		return;
	}
	back = CommandLineToArgvW(line, &n);
	same = back && (size_t)n == argc;
	for (size_t i = 0; same && i < argc; i++)
		same = !wcscmp(back[i], argv[i]);
	if (!same) {
		failed++;
		wprintf(L"FAIL: the command line [%ls] splits differently; wanted:\n", line);
		print_vector(argv, argc);
		if (back) {
			wprintf(L"got:\n");
			print_vector((const wchar_t *const *)back, (size_t)n);
		}
	}
	LocalFree(back);
	free(line);
}

/* A program name with no double quote (no command line can carry one there). */
static const wchar_t *const fixed[][6] = {
    {L"prog", NULL},
    {L"prog", L"", NULL},
    {L"prog", L"", L"", NULL},
    {L"prog", L"a b", NULL},
    {L"prog", L"\"", NULL},
    {L"prog", L"\"\"", NULL},
    {L"prog", L"a\"b", NULL},
    {L"prog", L"\\", NULL},
    {L"prog", L"\\\\", NULL},
    {L"prog", L"a\\", NULL},
    {L"prog", L"a b\\", NULL},
    {L"prog", L"a b\\\\", NULL},
    {L"prog", L"a\\\"b", NULL},
    {L"prog", L"a\\\\\"b", NULL},
    {L"prog", L"\\\"", NULL},
    {L"prog", L"C:\\dir\\", L"x", NULL},
    {L"prog", L"C:\\Program Files\\", L"x", NULL},
    {L"prog", L"\t", L" ", L"\n", L"\v", NULL},
    {L"prog", L"-x", L"--", L"/c", L"a&b|c", NULL},
    {L"prog", L"\x00e9t\x00e9", L"\x65e5\x672c", NULL},
    {L"C:\\Program Files\\app\\prog.exe", L"x", NULL},
    {L"C:\\dir with space\\", L"x", NULL},
    {L"dir\\prog", L"a\\\\b", NULL},
    {L"", L"x", NULL},
    {L" ", L"x", NULL},
};

static const wchar_t alphabet[] = L"a \t\"\\\\\\x\n\x00e9";

static unsigned long long rng = 0x9e3779b97f4a7c15ull;

static unsigned
next_random(unsigned bound)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)(rng % bound);
}

static wchar_t *
random_arg(bool program)
{
	size_t len = next_random(9);
	wchar_t *s = calloc(len + 1, sizeof(*s));

	for (size_t i = 0; s && i < len; i++) {
		wchar_t c =
		    alphabet[next_random((unsigned)(sizeof(alphabet) / sizeof(wchar_t) - 1))];

		s[i] = program && c == L'"' ? L'p' : c;
	}
	return s;
}

int wmain(int argc, wchar_t **argv);

int
wmain(int argc, wchar_t **argv)
{
	unsigned rounds = argc > 1 ? (unsigned)_wtoi(argv[1]) : 20000;

	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
		size_t n = 0;

		while (fixed[i][n])
			n++;
		round_trip(fixed[i], n);
	}
	for (unsigned r = 0; r < rounds; r++) {
		wchar_t *v[8];
		size_t n = 1 + next_random(7);

		for (size_t i = 0; i < n; i++)
			v[i] = random_arg(i == 0);
		round_trip((const wchar_t *const *)v, n);
		for (size_t i = 0; i < n; i++)
			free(v[i]);
	}
	{
		const wchar_t *bad[] = {L"pro\"g", L"x"};
		wchar_t *line = (wchar_t *)1;

		checked++;
		if (winquote_build(bad, 2, &line) == 0 || line) {
			failed++;
			wprintf(L"FAIL: a program name with a double quote was accepted\n");
		}
	}
	wprintf(L"wt_quote: %u vectors, %u failed\n", checked, failed);
	return failed ? 1 : 0;
}
