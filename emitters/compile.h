/*
 * compile.h - the modes of omnibox-compile over one compiled policy.
 *
 * Every output of a target, or one of them; an output directory written
 * or compared; the answers to --query from the policy alone; --explain's
 * table; --diff against an older policy.  Each mode prints its result on
 * stdout, its I/O errors on stderr (prefixed "omnibox-compile: "), and
 * returns one of the exit statuses below; a diagnostic about the policy
 * goes to the struct diag it is given.  The launch on this machine
 * (--resolve) is runtime/resolve/report.h.
 */
#ifndef OMNIBOX_COMPILE_H
#define OMNIBOX_COMPILE_H

#include <stdbool.h>
#include <stddef.h>

#include "../compiler/base/arena.h"
#include "../compiler/base/diag.h"
#include "../compiler/base/textbuf.h"
#include "emit.h"

/* omnibox-compile's exit statuses (sysexits.h where one fits). */
enum {
	EXIT_OK = 0,
	EXIT_STALE = 1, /* --check: stale; --diff: widened; --explain --strict: not enforced */
	EXIT_USAGE = 2,
	EXIT_INVALID = 65,
	EXIT_UNAVAILABLE = 69,
	EXIT_INTERNAL = 70,
	EXIT_IO = 74,
};

/* The command line of omnibox-compile, as parsed. */
struct compile_options {
	const char *input;
	int target; /* a TARGET_*, or -1 for all */
	bool target_set;
	const char *emit;
	const char *output;
	const char *terminal;
	const char *check;
	bool quiet, verbose;
	bool resolve;
	const char *cwd, *home;
	char **command; /* after "--", for --resolve */
	size_t n_command;
	const char **queries; /* --query, in order */
	size_t n_queries;
	const char *query_file;
	const char *diff;   /* --diff=OLD: a file, or a git revision */
	const char *format; /* text, json, markdown */
	bool explain, strict;
	bool strict_toplevel;
};

/*
 * The options of O that do not go together: NULL, or the usage error that
 * says why (a static string).  With --check and no --target, sets
 * O->target to all (-1) first.
 */
const char *compile_options_conflict(struct compile_options *o);

/*
 * Every output of P for O's target (or all of them: --target=all) in a
 * fixed order, compared with --check=DIR (a unified diff of each
 * difference printed) or written under --output=DIR (each file replaced
 * whole or not at all, directories made as needed).  EXIT_OK; EXIT_STALE
 * when a file of DIR differs or is missing; EXIT_INVALID when an emitter
 * reported to D (nothing is written then); EXIT_IO.
 */
int compile_directory(const struct compile_options *o, const struct policy *p, struct diag *d,
		      struct arena *a);

/*
 * The output E of P for TARGET, to OUTPUT (replaced whole or not at all)
 * or to stdout when OUTPUT is NULL.  EXIT_OK; EXIT_USAGE when E is binary
 * and stdout a terminal; EXIT_INVALID when the emitter reported to D;
 * EXIT_IO.
 */
int compile_emit_one(const struct emitter *e, const struct policy *p, enum target target,
		     const char *output, bool verbose, struct diag *d);

/*
 * The answer to the query TEXT ("ACCESS TARGET") from the policy P alone,
 * on TARGET (or every target when -1), appended to OUT; a malformed query
 * is answered with an "  error: " line.
 */
void compile_query_answer(struct arena *a, const struct policy *p, int target, const char *text,
			  struct textbuf *out);

/*
 * The queries of O (--query, then each line of --query-file that is not
 * blank or a '#' comment), in order, in *TEXTS (from A) and their count in
 * *N.  Returns 0, or -1 (the error printed) when the file cannot be read.
 */
int compile_query_list(const struct compile_options *o, struct arena *a, const char ***texts,
		       size_t *n);

/*
 * Prints OUT, the answers, on stdout.  EXIT_USAGE when one of its queries
 * was malformed, else EXIT_OK.
 */
int compile_query_print(const struct textbuf *out);

/* --query and --query-file from the policy alone (the dotfile scan taken as
 * complete): EXIT_OK, EXIT_USAGE when a query is malformed, or EXIT_IO. */
int compile_queries(const struct compile_options *o, const struct policy *p, struct arena *a);

/* --explain: the table per target; EXIT_STALE under --strict when a setting
 * is not enforced on a requested target, else EXIT_OK. */
int compile_explain(const struct compile_options *o, const struct policy *p);

/*
 * --diff: what P widens and narrows against the policy OLD_SRC (OLD_LEN
 * bytes) called OLD_NAME, compiled here (its diagnostics on stderr, its
 * terminal the one of --terminal), printed in --format.  EXIT_OK when
 * nothing widened, EXIT_STALE when something did, EXIT_INVALID when the
 * old policy is invalid.
 */
int compile_diff(const struct compile_options *o, const struct policy *p, struct arena *a,
		 const char *old_name, const char *old_src, size_t old_len);

#endif
