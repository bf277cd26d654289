/*
 * gitshow.h - a file as a git revision holds it (omnibox-compile --diff).
 */
#ifndef OMNIBOX_GITSHOW_H
#define OMNIBOX_GITSHOW_H

#include <stddef.h>

#include "compiler/base/arena.h"
#include "compiler/base/textbuf.h"

/*
 * The version of the file INPUT at git revision REV, read with `git show`
 * run in INPUT's directory (git's stderr discarded), appended to OUT (at
 * most about FILE_READ_MAX bytes).  Returns 0, or -1 with a message in ERR.
 */
int git_show(const char *input, const char *rev, struct textbuf *out, char *err, size_t errlen);

/*
 * The old policy of --diff=OLD, into SRC: the file OLD when it is a regular
 * file (named OLD), else the version of the file INPUT at git revision OLD
 * (named "OLD:INPUT", from A; INPUT "-" has none).  *NAME says which.
 * Returns EXIT_OK (compile.h); else, the error on stderr, EXIT_IO when the
 * file cannot be read, EXIT_USAGE when OLD is neither.
 */
int git_show_or_read(struct arena *a, const char *old, const char *input, struct textbuf *src,
		     const char **name);

#endif
