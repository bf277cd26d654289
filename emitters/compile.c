/*
 * compile.c - the modes of omnibox-compile over one compiled policy (compile.h).
 */
#include "compile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../compiler/base/fileio.h"
#include "../compiler/base/udiff.h"
#include "../compiler/decide/llbackend.h"
#include "diff.h"
#include "explain.h"
#include "query.h"
#include "sbpl.h"
#include "seccomp.h"
#include "winjob.h"

const char *
compile_options_conflict(struct compile_options *o)
{
	if (o->check && !o->target_set)
		o->target = -1;
	if (o->check && (o->output || o->emit))
		return "--check compares a whole directory; it takes no --output or --emit";
	if (o->strict && !o->explain)
		return "--strict is for --explain";
	if (o->explain && (o->check || o->output || o->emit || o->resolve || o->n_queries ||
			   o->query_file || o->diff))
		return "--explain prints its table; it takes no --check, --output, "
		       "--emit, --resolve, --query or --diff";
	if (o->format && !o->diff)
		return "--format is for --diff";
	if (o->diff &&
	    (o->check || o->output || o->emit || o->resolve || o->n_queries || o->query_file))
		return "--diff compares two policies; it takes no --check, --output, "
		       "--emit, --resolve or --query";
	if ((o->n_queries || o->query_file) && (o->check || o->output || o->emit))
		return "--query answers on stdout; it takes no --check, --output or "
		       "--emit";
	if ((o->n_queries || o->query_file) && o->target >= TARGET_PLATFORMS)
		return "--query answers for linux, darwin and windows; --explain says what the "
		       "oci and kubernetes forms hold";
	if ((o->n_queries || o->query_file) && o->resolve && o->target != TARGET_LINUX)
		return "--query with --resolve answers from a Linux launch: give "
		       "--target=linux";
	if (o->target < 0 && !o->check && !o->output && !o->n_queries && !o->query_file &&
	    !o->diff && !o->explain)
		return "--target=all writes several files: give --output=DIR";
	if (o->target < 0 && o->emit)
		return "--emit selects one output, --target=all writes them all";
	if ((o->cwd || o->home) && !o->resolve)
		return "--cwd and --home describe the launch for --resolve";
	if (o->n_command && !o->resolve)
		return "a command after '--' is only for --resolve";
	if (o->resolve && (o->check || o->target < 0))
		return "--resolve describes one launch: one --target, no --check";
	if (o->resolve && o->target == TARGET_KUBERNETES)
		return "--resolve has nothing to resolve for --target=kubernetes: a pod's "
		       "paths are its volumes'";
	if (o->resolve && o->target == TARGET_OCI && o->emit && strcmp(o->emit, "oci"))
		return "--resolve --target=oci prints config.json; it takes no other --emit";
	if (o->resolve && o->target == TARGET_WINDOWS)
		return "--resolve has nothing to resolve for --target=windows: the "
		       "manifest has no machine-specific values";
	if (o->resolve && o->target == TARGET_LINUX && o->emit && strcmp(o->emit, "bwrap"))
		return "--resolve --target=linux prints the bwrap launch; it takes no "
		       "other --emit";
	if (o->resolve && o->target == TARGET_DARWIN && o->emit && strcmp(o->emit, "sbpl") &&
	    strcmp(o->emit, "sbpl-params"))
		return "--resolve --target=darwin prints the profile (--emit=sbpl) or "
		       "its parameters (--emit=sbpl-params)";
	return NULL;
}

/* ---- outputs ------------------------------------------------------------------ */

static int
run_emitter(const struct emitter *e, const struct policy *p, enum target t, struct diag *d,
	    struct textbuf *out)
{
	if (e->per_target && emit_check_target(p, t, d) < 0)
		return -1;
	return e->emit(p, t, d, out);
}

/* One file of an output directory: where it goes and what it holds. */
struct artifact {
	char *rel; /* "policy.ir.json", "linux/bwrap.args" */
	struct textbuf data;
	const char *bytes; /* what it holds: DATA's, or bytes the binary carries */
	size_t len;
};

struct artifacts {
	struct artifact *v;
	size_t n, cap;
};

/*
 * E's output for P on T into ART: the bytes the binary carries for an
 * output that depends on no policy (the seccomp filters), without a copy;
 * else what E writes.
 */
static int
run_artifact(const struct emitter *e, const struct policy *p, enum target t, struct diag *d,
	     struct artifact *art)
{
	const void *carried;

	if (e->per_target && emit_check_target(p, t, d) < 0)
		return -1;
	if (seccomp_emitter_carried(e->emit, &carried, &art->len)) {
		art->bytes = carried;
		return 0;
	}
	if (e->emit(p, t, d, &art->data) < 0)
		return -1;
	art->bytes = art->data.data ? art->data.data : "";
	art->len = art->data.len;
	return 0;
}

/*
 * Does P have the form of E when it is one Linux backend's argv: bwrap's
 * unless the policy is pinned to linux_landlock, linux_landlock's unless
 * it is pinned to bwrap or has what that backend cannot run (git_ssh,
 * copy_on_write)?  Every other emitter: true.
 */
static bool
linux_backend_form(const struct emitter *e, const struct policy *p)
{
	enum sandbox_type type = p->os_env.sandbox.type;
	struct loc loc;

	if (!strcmp(e->name, "bwrap"))
		return type != SANDBOX_LINUX_LANDLOCK;
	if (!strcmp(e->name, "landlock"))
		return type != SANDBOX_LINUX_BWRAP &&
		       (type == SANDBOX_NONE || !llbackend_refuse(p, &loc));
	return true;
}

/* Does the output of E for target T belong to --target=TARGET (-1: all)? */
static bool
selected(const struct emitter *e, const struct policy *p, int target, int t)
{
	if (target >= 0 && t != target)
		return false;
	if (!(e->targets & TARGET_BIT(t)))
		return false;
	if (target >= 0)
		return true;
	/* --target=all: a policy pinned to one backend has no other forms. */
	if (e->per_target && p->os_env.sandbox.type != SANDBOX_AUTO &&
	    p->os_env.sandbox.type != SANDBOX_NONE &&
	    !target_has_backend((enum target)t, p->os_env.sandbox.type))
		return false;
	/* ... a policy that needs the egress proxy has no windows form ... */
	if (t == TARGET_WINDOWS && !winjob_can_express(p))
		return false;
	/* ... and one with Linux-only settings no darwin form. */
	if (t == TARGET_DARWIN && !sbpl_can_express(p))
		return false;
	/* ... and the container forms only where they hold it. */
	if ((t == TARGET_OCI || t == TARGET_KUBERNETES) &&
	    emit_check_target(p, (enum target)t, NULL) < 0)
		return false;
	/* ... and each Linux backend's argv only where it runs the policy. */
	return linux_backend_form(e, p);
}

static struct artifact *
new_artifact(const struct emitter *e, int t, struct artifacts *set, struct arena *a)
{
	struct artifact *art = ARENA_PUSH(a, set->v, set->n, set->cap);

	art->rel = e->per_target ? arena_printf(a, "%s/%s", target_name((enum target)t), e->file)
				 : arena_strdup(a, e->file);
	return art;
}

/* Every output for the selected target(s), in a fixed order. */
static int
collect_artifacts(const struct policy *p, int target, struct diag *d, struct artifacts *set,
		  struct arena *a)
{
	unsigned paired = 0; /* targets whose output of this emitter came with the one before */
	int rc = 0;

	for (const struct emitter *e = emitters; e->name; e++) {
		unsigned pairs = 0;

		for (int t = 0; t < TARGET_COUNT; t++) {
			struct artifact *art, *next;

			if (!selected(e, p, target, t) || (paired & TARGET_BIT(t)))
				continue;
			art = new_artifact(e, t, set, a);
			/* Two outputs of one build (the profile and its parameters). */
			if (e->emit_pair && e[1].name && selected(&e[1], p, target, t) &&
			    e->per_target && e[1].per_target) {
				size_t i = (size_t)(art - set->v);

				new_artifact(&e[1], t, set, a);
				art = &set->v[i];
				next = art + 1;
				pairs |= TARGET_BIT(t);
				if (emit_check_target(p, (enum target)t, d) < 0 ||
				    e->emit_pair(p, (enum target)t, d, &art->data, &next->data) < 0) {
					rc = -1;
					continue;
				}
				art->bytes = art->data.data ? art->data.data : "";
				art->len = art->data.len;
				next->bytes = next->data.data ? next->data.data : "";
				next->len = next->data.len;
				continue;
			}
			if (run_artifact(e, p, (enum target)t, d, art) < 0)
				rc = -1;
			if (!e->per_target)
				break; /* one copy, whatever the target */
		}
		paired = pairs;
	}
	return rc;
}

static void
free_artifacts(struct artifacts *set)
{
	for (size_t i = 0; i < set->n; i++)
		tb_free(&set->v[i].data);
}

static int
check_directory(const char *dir, const struct artifacts *set, bool verbose)
{
	struct textbuf diff = {0};
	int stale = 0;

	for (size_t i = 0; i < set->n; i++) {
		const struct artifact *art = &set->v[i];
		char *path, *old_label, *new_label;
		struct textbuf old = {0};
		int rc;

		if (asprintf(&path, "%s/%s", dir, art->rel) < 0)
			abort();
		rc = file_read(path, &old, FILE_READ_MAX);
		if (rc == -ENOENT) {
			tb_printf(&diff, "Missing: %s (would be written)\n", path);
			stale = 1;
		} else if (rc < 0) {
			fprintf(stderr, "omnibox-compile: %s: %s\n", path, strerror(-rc));
			free(path);
			tb_free(&diff);
			return EXIT_IO;
		} else {
			if (asprintf(&old_label, "a/%s", art->rel) < 0 ||
			    asprintf(&new_label, "b/%s", art->rel) < 0)
				abort();
			if (udiff(old_label, old.data ? old.data : "", old.len, new_label,
				  art->bytes, art->len, &diff))
				stale = 1;
			else if (verbose)
				fprintf(stderr, "omnibox-compile: %s is up to date\n", path);
			free(old_label);
			free(new_label);
		}
		tb_free(&old);
		free(path);
	}
	if (diff.len)
		fwrite(diff.data, 1, diff.len, stdout);
	tb_free(&diff);
	if (stale)
		fprintf(stderr, "omnibox-compile: %s is stale; regenerate it with -o\n", dir);
	return stale ? EXIT_STALE : EXIT_OK;
}

static int
write_directory(const char *dir, const struct artifacts *set, bool verbose)
{
	for (size_t i = 0; i < set->n; i++) {
		char *path;
		int rc;

		if (asprintf(&path, "%s/%s", dir, set->v[i].rel) < 0)
			abort();
		/* A file that already holds the bytes is left alone. */
		rc = file_write_changed(path, set->v[i].bytes, set->v[i].len, true);
		if (rc < 0) {
			fprintf(stderr, "omnibox-compile: %s: %s\n", path, strerror(-rc));
			free(path);
			return EXIT_IO;
		}
		if (verbose)
			fprintf(stderr, rc ? "omnibox-compile: %s is up to date\n"
					   : "omnibox-compile: wrote %s\n",
				path);
		free(path);
	}
	return EXIT_OK;
}

int
compile_directory(const struct compile_options *o, const struct policy *p, struct diag *d,
		  struct arena *a)
{
	struct artifacts set = {0};
	int rc;

	if (collect_artifacts(p, o->target, d, &set, a) < 0)
		rc = EXIT_INVALID;
	else
		rc = o->check ? check_directory(o->check, &set, o->verbose)
			      : write_directory(o->output, &set, o->verbose);
	free_artifacts(&set);
	return rc;
}

int
compile_emit_one(const struct emitter *e, const struct policy *p, enum target target,
		 const char *output, bool verbose, struct diag *d)
{
	struct textbuf out = {0};
	int rc;

	if (e->binary && !output && isatty(STDOUT_FILENO)) {
		fprintf(stderr, "omnibox-compile: --emit=%s is binary; give --output=FILE\n",
			e->name);
		return EXIT_USAGE;
	}
	if (run_emitter(e, p, target, d, &out) < 0) {
		tb_free(&out);
		return EXIT_INVALID;
	}
	if (output) {
		rc = file_write_atomic(output, out.data ? out.data : "", out.len, false);
		if (rc < 0) {
			fprintf(stderr, "omnibox-compile: %s: %s\n", output, strerror(-rc));
			tb_free(&out);
			return EXIT_IO;
		}
		if (verbose)
			fprintf(stderr, "omnibox-compile: wrote %s\n", output);
	} else if (out.len && fwrite(out.data, 1, out.len, stdout) != out.len) {
		tb_free(&out);
		return EXIT_IO;
	}
	tb_free(&out);
	return EXIT_OK;
}

/* ---- --query ------------------------------------------------------------------ */

void
compile_query_answer(struct arena *a, const struct policy *p, int target, const char *text,
		     struct textbuf *out)
{
	struct query q;
	char err[512];

	if (query_parse(a, text, &q, err, sizeof(err)) < 0) {
		tb_printf(out, "# query: %s\n  error: %s\n", text, err);
		return;
	}
	tb_printf(out, "# query: %s\n", text);
	for (int t = 0; t < TARGET_PLATFORMS; t++) {
		struct decision d;

		if (target >= 0 && t != target)
			continue;
		query_decide(a, p, (enum target)t, &q, &d);
		tb_printf(out, "  %-8s %-5s %s", target_name((enum target)t),
			  d.allowed ? "allow" : "deny", d.why);
		if (d.line)
			tb_printf(out, " (line %u)", d.line);
		if (!d.enforced)
			tb_puts(out, " [not enforced]");
		tb_putc(out, '\n');
	}
}

int
compile_query_list(const struct compile_options *o, struct arena *a, const char ***texts, size_t *n)
{
	struct textbuf file = {0};
	size_t cap = 0;
	int err;

	*texts = NULL;
	*n = 0;
	for (size_t i = 0; i < o->n_queries; i++)
		*ARENA_PUSH(a, *texts, *n, cap) = o->queries[i];
	if (!o->query_file)
		return 0;
	err = file_read(o->query_file, &file, FILE_READ_MAX);
	if (err < 0) {
		fprintf(stderr, "omnibox-compile: %s: %s\n", o->query_file, strerror(-err));
		tb_free(&file);
		return -1;
	}
	for (char *line = file.data; line && *line;) {
		char *end = strchr(line, '\n');

		if (end)
			*end = '\0';
		while (*line == ' ' || *line == '\t')
			line++;
		if (*line && *line != '#')
			*ARENA_PUSH(a, *texts, *n, cap) = arena_strdup(a, line);
		line = end ? end + 1 : NULL;
	}
	tb_free(&file);
	return 0;
}

int
compile_query_print(const struct textbuf *out)
{
	int rc = EXIT_OK;

	if (out->data && strstr(out->data, "\n  error: "))
		rc = EXIT_USAGE;
	fwrite(out->data ? out->data : "", 1, out->len, stdout);
	return rc;
}

int
compile_queries(const struct compile_options *o, const struct policy *p, struct arena *a)
{
	struct textbuf out = {0};
	const char **texts;
	size_t n;
	int rc;

	if (compile_query_list(o, a, &texts, &n) < 0)
		return EXIT_IO;
	for (size_t i = 0; i < n; i++)
		compile_query_answer(a, p, o->target, texts[i], &out);
	rc = compile_query_print(&out);
	tb_free(&out);
	return rc;
}

/* ---- --explain ---------------------------------------------------------------- */

int
compile_explain(const struct compile_options *o, const struct policy *p)
{
	struct textbuf out = {0};
	bool all = true;

	tb_printf(&out, "# what %s%s%s means on each target\n", p->source,
		  p->terminal ? ", terminal " : "", p->terminal ? p->terminal->name : "");
	for (int t = 0; t < TARGET_COUNT; t++) {
		bool ok = true;

		if (o->target >= 0 && t != o->target)
			continue;
		explain_target(p, (enum target)t, &out, &ok);
		all &= ok;
	}
	explain_extensions(p, &out);
	fwrite(out.data ? out.data : "", 1, out.len, stdout);
	tb_free(&out);
	return o->strict && !all ? EXIT_STALE : EXIT_OK;
}

/* ---- --diff ------------------------------------------------------------------- */

int
compile_diff(const struct compile_options *o, const struct policy *p, struct arena *a,
	     const char *old_name, const char *old_src, size_t old_len)
{
	struct textbuf out = {0};
	struct diag od;
	struct policy *old;
	struct diff_list w, n;

	diag_init(&od, a, old_name, old_src, old_len);
	old = policy_compile(a, &od, old_name, old_src, old_len);
	if (old && o->terminal)
		old = policy_select_terminal(a, &od, old, o->terminal);
	diag_print(&od, stderr, false);
	if (!old) {
		fprintf(stderr, "omnibox-compile: --diff: the old policy %s is invalid\n",
			old_name);
		return EXIT_INVALID;
	}
	diff_policies(a, old, p, &w, &n);
	diff_format(&w, &n, o->format ? o->format : "text", old_name, o->input, &out);
	fwrite(out.data ? out.data : "", 1, out.len, stdout);
	tb_free(&out);
	return w.n ? EXIT_STALE : EXIT_OK;
}
