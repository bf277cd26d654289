/* clang-format off */
/*
 * diag.h - GCC-style diagnostics with the source line and a caret.
 *
 *   agent.yaml:14:7: error: unknown key 'write_path' in os_env.sandbox (did you mean 'write_paths'?)
 *      14 |       write_path: [.]
 *         |       ^~~~~~~~~~
 *
 * Diagnostics are collected, sorted by position and printed together, so a
 * file's errors come out in reading order whatever order the checks ran in.
 * At most DIAG_MAX_ERRORS errors are kept.
 */
/* clang-format on */
#ifndef OMNIBOX_DIAG_H
#define OMNIBOX_DIAG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "arena.h"
#include "loc.h"

#define DIAG_MAX_ERRORS 20

enum diag_level { DIAG_ERROR, DIAG_WARNING, DIAG_NOTE };

struct diag_entry {
	enum diag_level level;
	struct loc loc;
	const char *message;
	size_t seq; /* emission order, to keep the sort stable */
};

struct diag {
	struct arena *arena;
	const char *name; /* the file name as given on the command line */
	const char *text; /* the source, LEN bytes (may be NULL) */
	size_t len;
	struct diag_entry *v;
	size_t n, cap;
	unsigned errors, warnings;
	bool truncated;	     /* more than DIAG_MAX_ERRORS errors were reported */
	const char *failure; /* diag_failure(): what failed at no line of the file */
};

/* Start collecting diagnostics about NAME, whose contents are TEXT/LEN. */
void diag_init(struct diag *d, struct arena *a, const char *name, const char *text, size_t len);

void diag_error(struct diag *d, struct loc loc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void diag_warning(struct diag *d, struct loc loc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void diag_note(struct diag *d, struct loc loc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/*
 * The length of the line break at P (before END): 1 or 2 for \n, \r\n and
 * \r; 2 or 3 for U+0085, U+2028 and U+2029, which YAML also counts as
 * breaks; 0 when P is not at a break.
 */
size_t diag_break_len(const char *p, const char *end);

/*
 * Print everything collected, in source order, to F; warnings are left out
 * when WITH_WARNINGS is false.  Clears the list.  The file name, each
 * message and the quoted source line are escaped (textesc.h): the policy
 * file may have been written by the agent.
 */
void diag_print(struct diag *d, FILE *f, bool with_warnings);

/*
 * A failure no line of the file is to blame for (the machine, the command
 * line, a file that changed while it was opened): kept as D->failure (from
 * D's arena; a later one replaces it) for the caller to word as its own
 * ("omnibox-run: ...; nothing ran").  diag_print() leaves it out.  Whatever
 * the agent could have chosen must be escaped where it enters the message
 * (textesc.h); the caller escapes the whole once more.  Returns -1.
 */
int diag_failure(struct diag *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * The one-message form, for code that reports a single failure to its
 * caller: format into ERR (ERRLEN bytes) and return -1.
 */
int diag_fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
