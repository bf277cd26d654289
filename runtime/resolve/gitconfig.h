/*
 * gitconfig.h - reading git's configuration format, as git reads it.
 *
 * The launch reads the host's git configuration for the few variables
 * that name files git will run or read as configuration (core.hooksPath,
 * include.path, ...: protect_git_variable()), so that those files are
 * protected where they lie in a writable root.  This is the format alone:
 * no file is opened here.
 */
#ifndef OMNIBOX_GITCONFIG_H
#define OMNIBOX_GITCONFIG_H

#include <stddef.h>

/*
 * Call FN for every variable in TEXT (LEN bytes, NUL bytes allowed, as git
 * reads them: they end nothing): SECTION and KEY lowercased, SUB the
 * subsection as written (NULL when none; legacy [a.b] lowercased), VALUE
 * unquoted and unescaped (NULL for a bare key, which git reads as true).
 * Stops at the first line git would refuse, and returns -1 then; 0 when
 * the whole text was read.
 */
int gitconfig_parse(const char *text, size_t len,
		    void (*fn)(void *arg, const char *section, const char *sub, const char *key,
			       const char *value),
		    void *arg);

#endif
