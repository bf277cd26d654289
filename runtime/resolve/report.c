/*
 * report.c - omnibox-compile --resolve (report.h).
 */
#include "runtime/resolve/report.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compiler/base/textesc.h"
#include "emitters/oci.h"
#include "emitters/query.h"
#include "emitters/sbpl.h"
#include "runtime/launch/darwin.h"
#include "runtime/resolve/command.h"
#include "runtime/resolve/landlock_open.h"
#include "runtime/resolve/resolve.h"
#include "runtime/resolve/why.h"

extern char **environ;

/* What the resolver needs to describe a launch from here, as omnibox-run would. */
static void
resolve_request(const struct compile_options *o, const struct policy *p, struct arena *a,
		const char *launch_dir, struct launch_request *rq)
{
	const char *tmp = getenv("TMPDIR");

	memset(rq, 0, sizeof(*rq));
	rq->policy = p;
	rq->launch_dir = launch_dir;
	rq->cwd = o->cwd;
	rq->home = o->home ? o->home : launch_home(environ);
	rq->scratch = arena_printf(a, "%s/omnibox-XXXXXX", tmp && tmp[0] == '/' ? tmp : "/tmp");
	rq->command = o->command;
	rq->n_command = o->n_command;
	rq->command_optional = true;
	rq->environ = environ;
	rq->seccomp_fd = -1;
	rq->status_fd = -1;
	rq->ready_fd = -1;
	rq->policy_file =
	    o->input[0] == '/' ? o->input : arena_printf(a, "%s/%s", launch_dir, o->input);
}

/*
 * A refusal of --resolve on stderr.  The resolver escaped what the agent
 * could have chosen where it entered the message; the whole is escaped once
 * more (textesc.h), as omnibox-run does with its own.
 */
static void
resolve_error(const char *err)
{
	struct textbuf t = {0};

	tb_puts(&t, "omnibox-compile: --resolve: ");
	tb_escape(&t, err, TEXT_ESC_AGAIN | TEXT_ESC_LINES);
	tb_putc(&t, '\n');
	fputs(t.data, stderr);
	tb_free(&t);
}

/* The answer to the query TEXT: a read or a write of a path from the launch
 * itself (why.h), anything else from the policy (compile.h). */
static void
resolved_answer(struct arena *a, const struct policy *p, int target, const struct launch_plan *plan,
		const char *text, struct textbuf *out)
{
	struct query q;
	struct decision d;
	const char *path;
	char err[512];

	if (query_parse(a, text, &q, err, sizeof(err)) < 0 ||
	    (q.access != QUERY_READ && q.access != QUERY_WRITE)) {
		compile_query_answer(a, p, target, text, out);
		return;
	}
	tb_printf(out, "# query: %s\n", text);
	path = launch_why_path(a, plan, strchr(text, ' ') + 1);
	launch_why(a, plan, path, q.access, &d);
	tb_puts(out, "  linux    ");
	tb_puts(out, d.allowed ? "allow " : "deny  ");
	tb_escape(out, path, 0);
	tb_puts(out, ": ");
	tb_escape(out, d.why, 0);
	tb_putc(out, '\n');
}

/* --query and --query-file answered from PLAN: EXIT_OK, EXIT_USAGE when a
 * query is malformed, or EXIT_IO. */
static int
resolved_queries(const struct compile_options *o, const struct policy *p, struct arena *a,
		 const struct launch_plan *plan)
{
	struct textbuf out = {0};
	const char **texts;
	size_t n;
	int rc;

	if (compile_query_list(o, a, &texts, &n) < 0)
		return EXIT_IO;
	for (size_t i = 0; i < n; i++)
		resolved_answer(a, p, o->target, plan, texts[i], &out);
	rc = compile_query_print(&out);
	tb_free(&out);
	return rc;
}

/*
 * linux_landlock: omnibox-init's command line as omnibox-run would build it
 * here (its descriptors' numbers this process's), then the rest of the
 * launch's description into OUT; or, with queries, their answers from its
 * rules.  An exit status (EXIT_INVALID after saying why on stderr).
 */
static int
describe_landlock(struct arena *a, const struct compile_options *o, const struct policy *p,
		  struct launch_plan *plan, const char *init, struct textbuf *out)
{
	struct landlock_rules rules = {0};
	struct landlock_context c = {.init = init,
				     .seccomp_fd = -1,
				     .ready_fd = -1,
				     .exec_path = plan->exec_path,
				     .command = (const char *const *)plan->argv,
				     .n_command = plan->argc};
	struct textbuf text = {0};
	char err[4096];

	int rc = EXIT_OK;

	if (landlock_rules_open(a, plan, &rules, &c, false, err, sizeof(err)) < 0) {
		resolve_error(err);
		return EXIT_INVALID;
	}
	plan->ll_rules = rules.rules;
	plan->n_ll_rules = rules.n_rules;
	if (o->n_queries || o->query_file) {
		rc = resolved_queries(o, p, a, plan);
		landlock_rules_close(&rules);
		return rc;
	}
	landlock_build(plan->policy, &c, &text, NULL);
	landlock_rules_close(&rules);
	launch_describe(plan, text.data ? text.data : "", out);
	tb_free(&text);
	return rc;
}


/*
 * --resolve --target=oci: config.json from the launch the resolver plans
 * here (its canonical grants, masks and protected paths), the command, the
 * environment from this one, rootless when the caller is not root.
 */
static int
describe_oci(const struct compile_options *o, const struct policy *p, struct arena *a,
	     struct launch_request *rq, struct diag *d)
{
	struct launch_plan plan;
	struct oci_context c = {NULL, environ, getuid() != 0, (unsigned)getuid(),
				(unsigned)getgid()};
	struct textbuf out = {0};
	int rc;

	if (!o->n_command && !p->terminal) {
		fprintf(stderr, "omnibox-compile: --resolve --target=oci: give the command after "
				"'--' (config.json runs it)\n");
		return EXIT_USAGE;
	}
	rq->bwrap = NULL;
	if (launch_resolve(a, rq, &plan, d) < 0) {
		if (d->failure)
			resolve_error(d->failure);
		return EXIT_INVALID;
	}
	c.bw = &plan.ctx;
	rc = oci_build(plan.policy, &c, d, &out);
	launch_plan_close(&plan);
	if (rc < 0) {
		tb_free(&out);
		return EXIT_INVALID;
	}
	fwrite(out.data, 1, out.len, stdout);
	tb_free(&out);
	return EXIT_OK;
}

int
launch_report(const struct compile_options *o, const struct policy *p, struct arena *a,
	      struct diag *d)
{
	struct launch_request rq;
	struct textbuf out = {0};
	char launch_dir[PATH_MAX], self[PATH_MAX], *slash;
	ssize_t n;

	if (emit_check_target(p, (enum target)o->target, d) < 0)
		return EXIT_INVALID;
	if (!getcwd(launch_dir, sizeof(launch_dir))) {
		fprintf(stderr, "omnibox-compile: getcwd: %s\n", strerror(errno));
		return EXIT_IO;
	}
	resolve_request(o, p, a, launch_dir, &rq);
	if (o->target == TARGET_DARWIN) {
		struct darwin_launch_plan plan;
		bool want_params = o->emit && !strcmp(o->emit, "sbpl-params");

		rq.target = LAUNCH_DARWIN;
		if (darwin_launch_prepare(a, &rq, &plan, d) < 0) {
			if (d->failure)
				resolve_error(d->failure);
			return EXIT_INVALID;
		}
		if (want_params)
			sbpl_params_format(&plan.params, p->source, &out);
		else
			tb_write(&out, plan.profile.data, plan.profile.len);
		darwin_launch_plan_free(&plan);
	} else {
		struct launch_plan plan;

		n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		self[n > 0 ? n : 0] = '\0';
		slash = strrchr(self, '/');
		if (slash)
			*slash = '\0';
		rq.target = LAUNCH_LINUX;
		rq.init = launch_find_init(a, self);
		if (o->target == TARGET_OCI)
			return describe_oci(o, p, a, &rq, d);
		rq.landlock = p->os_env.sandbox.type == SANDBOX_LINUX_LANDLOCK;
		rq.bwrap = rq.landlock ? NULL : launch_find_in_path(a, environ, "bwrap");
		if (launch_resolve(a, &rq, &plan, d) < 0) {
			if (d->failure)
				resolve_error(d->failure);
			return EXIT_INVALID;
		}
		if (rq.landlock) {
			int rc = describe_landlock(a, o, p, &plan, rq.init, &out);

			launch_plan_close(&plan);
			if (rc != EXIT_OK || o->n_queries || o->query_file) {
				tb_free(&out);
				return rc;
			}
		} else if (o->n_queries || o->query_file) {
			int rc = resolved_queries(o, p, a, &plan);

			launch_plan_close(&plan);
			return rc;
		} else {
			launch_describe(&plan, NULL, &out);
			launch_plan_close(&plan);
		}
	}
	fwrite(out.data, 1, out.len, stdout);
	tb_free(&out);
	return EXIT_OK;
}
