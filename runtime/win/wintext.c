/*
 * wintext.c - conversions, error messages and escaped output (wintext.h).
 */
#include "wintext.h"

#include <stdlib.h>
#include <string.h>

#include "../../compiler/base/textesc.h"

static char oom[] = "out of memory";

int
win_fail(struct win_err *e, const char *fmt, ...)
{
	va_list ap, again;
	int n;
	char *msg;

	va_start(ap, fmt);
	va_copy(again, ap);
	n = vsnprintf(NULL, 0, fmt, again);
	va_end(again);
	msg = n < 0 ? NULL : malloc((size_t)n + 1);
	if (msg)
		vsnprintf(msg, (size_t)n + 1, fmt, ap);
	va_end(ap);
	win_err_free(e);
	e->msg = msg ? msg : oom;
	return -1;
}

int
win_fail_oom(struct win_err *e)
{
	win_err_free(e);
	e->msg = oom;
	return -1;
}

void
win_err_free(struct win_err *e)
{
	if (e->msg != oom)
		free(e->msg);
	e->msg = NULL;
}

char *
win_utf8(const wchar_t *ws)
{
	int n = WideCharToMultiByte(CP_UTF8, 0, ws, -1, NULL, 0, NULL, NULL);
	char *s;

	if (n <= 0)
		return _strdup("?");
	s = malloc((size_t)n);
	if (s)
		WideCharToMultiByte(CP_UTF8, 0, ws, -1, s, n, NULL, NULL);
	return s;
}

static char unknown[] = "?";

char *
win_shown(const wchar_t *ws)
{
	char *s = win_utf8(ws);

	return s ? s : unknown;
}

void
win_shown_free(char *s)
{
	if (s != unknown)
		free(s);
}

int
win_wide(const char *s, const char *what, wchar_t **out, struct win_err *e)
{
	int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, -1, NULL, 0);

	if (n <= 0)
		return win_fail(e, "%s: '%s' is not valid UTF-8", what, s);
	if (!(*out = win_calloc((size_t)n, sizeof(**out), e)))
		return -1;
	MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, -1, *out, n);
	return 0;
}

void *
win_calloc(size_t n, size_t size, struct win_err *e)
{
	void *p = calloc(n ? n : 1, size);

	if (!p)
		win_fail_oom(e);
	return p;
}

const char *
win_strerror(DWORD e)
{
	static char buf[1024];
	wchar_t w[400];
	DWORD n = FormatMessageW(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, NULL,
				 e, 0, w, sizeof(w) / sizeof(w[0]), NULL);
	int len;

	while (n &&
	       (w[n - 1] == L'\n' || w[n - 1] == L'\r' || w[n - 1] == L' ' || w[n - 1] == L'.'))
		n--;
	len = n ? WideCharToMultiByte(CP_UTF8, 0, w, (int)n, buf, (int)sizeof(buf) - 32, NULL, NULL)
		: 0;
	if (len < 0)
		len = 0;
	snprintf(buf + len, sizeof(buf) - (size_t)len, "%s(error %lu)", len ? " " : "",
		 (unsigned long)e);
	return buf;
}

void
win_vreport(FILE *f, const char *prefix, const char *fmt, va_list ap)
{
	char small[1024], *msg = small, *shown;
	size_t len, n;
	va_list again;
	int total;

	va_copy(again, ap);
	total = vsnprintf(small, sizeof(small), fmt, again);
	va_end(again);
	if (total < 0)
		small[0] = '\0';
	else if ((size_t)total >= sizeof(small) && (msg = malloc((size_t)total + 1)))
		vsnprintf(msg, (size_t)total + 1, fmt, ap);
	else if (!msg)
		msg = small; /* out of memory: the message cut short */
	len = strlen(msg);
	fputs(prefix, f);
	n = text_escape(NULL, 0, msg, len, TEXT_ESC_AGAIN) + 1;
	shown = malloc(n);
	if (shown) {
		text_escape(shown, n, msg, len, TEXT_ESC_AGAIN);
		fputs(shown, f);
		free(shown);
	} else {
		for (size_t i = 0; i < len;) {
			char unit[TEXT_ESC_UNIT_MAX];

			i += text_escape_unit(msg + i, len - i, TEXT_ESC_AGAIN, unit);
			fputs(unit, f);
		}
	}
	fputc('\n', f);
	if (msg != small)
		free(msg);
}

void
win_report(FILE *f, const char *prefix, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	win_vreport(f, prefix, fmt, ap);
	va_end(ap);
}

void
win_report_wide(FILE *f, const char *label, const wchar_t *ws)
{
	char *s = win_shown(ws);

	win_report(f, label, "%s", s);
	win_shown_free(s);
}
