/*
 * wintext.h - UTF-8 and UTF-16, the system's error messages, the launch's
 * errors, and escaped output lines: what every part of omnibox-run.exe
 * says, said one way.
 *
 * Library code of omnibox-run.exe returns its failures as a struct win_err;
 * only the entry point (omnibox-run-win.c) prints one and exits.
 */
#ifndef OMNIBOX_WIN_WINTEXT_H
#define OMNIBOX_WIN_WINTEXT_H

#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <stdarg.h>
#include <stdio.h>

/* A failure: MSG, unescaped (win_report() escapes it when printed). */
struct win_err {
	char *msg; /* malloc'd, or the static "out of memory" */
};

/* Set E's message from FMT (replacing one set before).  Returns -1. */
int win_fail(struct win_err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* "out of memory" in E.  Returns -1. */
int win_fail_oom(struct win_err *e);

void win_err_free(struct win_err *e);

/* WS as UTF-8, malloc'd; "?" when it cannot be converted; NULL when memory runs out. */
char *win_utf8(const wchar_t *ws);

/* WS as UTF-8 for a message: like win_utf8(), but "?" when memory runs out
 * too.  Release it with win_shown_free(). */
char *win_shown(const wchar_t *ws);
void win_shown_free(char *s);

/* The UTF-8 string S as UTF-16 in *OUT (malloc'd); WHAT names S in the error. */
int win_wide(const char *s, const char *what, wchar_t **out, struct win_err *e);

/* calloc() that fails with E. */
void *win_calloc(size_t n, size_t size, struct win_err *e);

/*
 * The system's message for error E, without the trailing line break, in
 * UTF-8 like every other piece of a message (not the ANSI code page), and
 * " (error N)".  A static buffer: the next call overwrites it.
 */
const char *win_strerror(DWORD e);

/*
 * One line to F: PREFIX, then FMT's message escaped (textesc.h).  A message
 * names paths, the command line, the manifest's values and environment
 * strings, any of which the agent may have chosen; escaping the composed
 * message covers every piece.  Backslashes, a Windows path's separator, are
 * shown as they are (TEXT_ESC_AGAIN); everything a terminal would act on, a
 * line break included, is escaped.
 */
void win_vreport(FILE *f, const char *prefix, const char *fmt, va_list ap);
void win_report(FILE *f, const char *prefix, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A line of LABEL and WS (win_report()). */
void win_report_wide(FILE *f, const char *label, const wchar_t *ws);

#endif
