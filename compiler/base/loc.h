/*
 * loc.h - where something came from in the policy file.
 */
#ifndef OMNIBOX_LOC_H
#define OMNIBOX_LOC_H

#include <stdint.h>

/*
 * A position in the YAML source: 1-based line and column (columns count
 * characters, as editors do), and the length in characters of the token
 * for the caret underline.  line 0 means "no position" (a default value).
 */
struct loc {
	uint32_t line, col, len;
};

#endif
