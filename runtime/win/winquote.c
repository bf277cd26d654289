/*
 * winquote.c - quote an argument vector into a Windows command line.
 */
#include "winquote.h"

#include <stdlib.h>

/* Write C at OUT[*N] unless only measuring (OUT NULL); count it either way. */
static void
put(wchar_t *out, size_t *n, wchar_t c)
{
	if (out)
		out[*n] = c;
	(*n)++;
}

/* Characters that end or bend an argument when the line is split again. */
static int
needs_quotes(const wchar_t *arg)
{
	if (!*arg)
		return 1; /* an empty argument vanishes unless it is "" */
	for (; *arg; arg++)
		if (*arg == L' ' || *arg == L'\t' || *arg == L'\n' || *arg == L'\v' || *arg == L'"')
			return 1;
	return 0;
}

/*
 * One routine both measures (OUT NULL) and writes, so the length the
 * caller allocates is the length written, by construction.
 */
static size_t
quote(const wchar_t *arg, bool first, wchar_t *out)
{
	size_t n = 0;

	if (!needs_quotes(arg)) {
		for (; *arg; arg++)
			put(out, &n, *arg);
		return n;
	}
	put(out, &n, L'"');
	if (first) {
		/* The program name has no escapes: the text up to the next quote. */
		for (; *arg; arg++)
			put(out, &n, *arg);
		put(out, &n, L'"');
		return n;
	}
	for (;;) {
		size_t backslashes = 0;

		while (*arg == L'\\') {
			backslashes++;
			arg++;
		}
		if (!*arg) {
			/* Before the closing quote, every backslash is doubled. */
			for (size_t i = 0; i < 2 * backslashes; i++)
				put(out, &n, L'\\');
			break;
		}
		if (*arg == L'"') {
			/* Doubled, plus one that makes the quote a literal one. */
			for (size_t i = 0; i < 2 * backslashes + 1; i++)
				put(out, &n, L'\\');
		} else {
			/* Not before a quote: backslashes are literal. */
			for (size_t i = 0; i < backslashes; i++)
				put(out, &n, L'\\');
		}
		put(out, &n, *arg);
		arg++;
	}
	put(out, &n, L'"');
	return n;
}

size_t
winquote_arg_len(const wchar_t *arg, bool first)
{
	return quote(arg, first, NULL);
}

size_t
winquote_arg(const wchar_t *arg, bool first, wchar_t *out)
{
	return quote(arg, first, out);
}

int
winquote_build(const wchar_t *const *argv, size_t argc, wchar_t **out)
{
	size_t len = 0, n = 0;
	wchar_t *line;

	*out = NULL;
	if (argc == 0)
		return -1;
	for (const wchar_t *p = argv[0]; *p; p++)
		if (*p == L'"')
			return -1;
	for (size_t i = 0; i < argc; i++) {
		size_t l = winquote_arg_len(argv[i], i == 0);

		if (len > (size_t)-1 / sizeof(wchar_t) / 2 - l - 2)
			return -1;
		len += l + 1; /* the blank after it, or the terminator */
	}
	line = malloc(len * sizeof(*line));
	if (!line)
		return -1;
	for (size_t i = 0; i < argc; i++) {
		if (i)
			line[n++] = L' ';
		n += winquote_arg(argv[i], i == 0, line + n);
	}
	line[n] = L'\0';
	*out = line;
	return 0;
}
