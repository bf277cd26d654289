/*
 * gitssh_int.h - what the two halves of the git_ssh broker share
 * (request.c: the request and its checks; broker.c: the broker process).
 */
#ifndef OMNIBOX_GITSSH_INT_H
#define OMNIBOX_GITSSH_INT_H

#include <string.h>

#include "compiler/base/textesc.h"
#include "runtime/gitssh/broker.h"

/*
 * S as a message or the log shows it (textesc.h), cut short with "..."
 * past SHOWN_MAX: a word of git's command line, a repository, a host, a
 * path.  The helper's arguments are the agent's to choose.  Returned by
 * value: shown(s).text lives until the end of the call it is passed to.
 */
#define SHOWN_MAX 256

struct shown {
	char text[SHOWN_MAX];
};

static inline struct shown
shown(const char *s)
{
	struct shown b;

	text_escape(b.text, sizeof(b.text), s, strlen(s), 0);
	return b;
}

/* A git operation's name, as the log and messages say it. */
static inline const char *
op_name(unsigned op)
{
	return op == GIT_OP_PUSH ? "push" : "fetch";
}

#endif
