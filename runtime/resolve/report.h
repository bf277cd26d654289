/*
 * report.h - omnibox-compile --resolve: the launch omnibox-run would
 * execute on this machine, described without running it.
 *
 * The request is built as omnibox-run builds its own (the launch directory,
 * $HOME, $TMPDIR's scratch name, the command after "--"), and resolved by
 * the one resolver (resolve.h): for Linux the bwrap argv as --dry-run
 * prints it, or the answers to --query from the launch's own mounts
 * (why.h); for darwin the concrete profile or its -D parameters.
 */
#ifndef OMNIBOX_REPORT_H
#define OMNIBOX_REPORT_H

#include "compiler/base/arena.h"
#include "compiler/base/diag.h"
#include "compiler/policy.h"
#include "emitters/compile.h"

/*
 * --resolve for P as O asks (its target, --emit, --cwd, --home, the
 * command, --query): the description or the answers on stdout, a refusal
 * on stderr.  EXIT_OK; EXIT_INVALID when P has no form on the target (to
 * D) or the launch would be refused here; EXIT_USAGE when a query is
 * malformed; EXIT_IO.
 */
int launch_report(const struct compile_options *o, const struct policy *p, struct arena *a,
		  struct diag *d);

#endif
