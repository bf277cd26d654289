/*
 * udiff.h - unified diffs, for --check=DIR.
 */
#ifndef OMNIBOX_UDIFF_H
#define OMNIBOX_UDIFF_H

#include <stddef.h>

#include "textbuf.h"

/*
 * Append to OUT a unified diff (three lines of context) from A (ALEN bytes,
 * labelled A_LABEL) to B.  Content with NUL bytes is reported as
 * "Binary files ... differ".  Returns 0 when A and B are equal (nothing is
 * appended), 1 otherwise.
 */
int udiff(const char *a_label, const char *a, size_t alen, const char *b_label, const char *b,
	  size_t blen, struct textbuf *out);

#endif
