/*
 * why_answer.c - omnibox-run --why (why_answer.h).
 */
#include <stdio.h>
#include <string.h>

#include "compiler/base/textesc.h"
#include "emitters/query.h"
#include "runtime/launch/launch.h"
#include "runtime/launch/why_answer.h"
#include "runtime/resolve/why.h"

int
why_answer(struct arena *a, const struct policy *p, const struct launch_plan *plan,
	   const char *what)
{
	const char *texts[3];
	size_t n = 0;
	int rc = 0;

	if (!strncmp(what, "http://", 7) || !strncmp(what, "https://", 8)) {
		texts[n++] = arena_printf(a, "GET %s", what);
	} else if (strchr(what, ' ')) {
		texts[n++] = what; /* "ACCESS TARGET", as for --query */
	} else {
		texts[n++] = arena_printf(a, "read %s", what);
		texts[n++] = arena_printf(a, "write %s", what);
	}
	for (size_t i = 0; i < n; i++) {
		struct query q;
		struct decision d;
		char err[512];

		if (query_parse(a, texts[i], &q, err, sizeof(err)) < 0) {
			launch_say("omnibox-run: --why: %s\n", err);
			rc = 2;
			continue;
		}
		if (plan && (q.access == QUERY_READ || q.access == QUERY_WRITE)) {
			const char *path = launch_why_path(a, plan, strchr(texts[i], ' ') + 1);

			launch_why(a, plan, path, q.access, &d);
			printf("%s %s: %s, %s\n", q.access == QUERY_READ ? "read" : "write",
			       arena_escape(a, path), d.allowed ? "allowed" : "refused",
			       arena_escape(a, d.why));
			continue;
		}
		query_decide(a, p, TARGET_LINUX, &q, &d);
		printf("%s: %s, %s", arena_escape(a, texts[i]), d.allowed ? "allowed" : "refused",
		       d.why);
		if (d.line)
			printf(" (%s:%u)", p->source, d.line);
		putchar('\n');
	}
	return rc;
}
