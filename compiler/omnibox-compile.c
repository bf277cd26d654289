/*
 * omnibox-compile.c - omnibox-compile: agent YAML in, sandbox profiles out.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "emitters/emit.h"
#include "base/arena.h"
#include "base/diag.h"
#include "base/fileio.h"
#include "policy.h"
#include "base/textbuf.h"
#include "base/textesc.h"
#include "base/udiff.h"
#include "emitters/diff.h"
#include "emitters/explain.h"
#include "emitters/query.h"
#include "runtime/resolve/why.h"
#include "emitters/sbpl.h"
#include "emitters/winjob.h"
#include "runtime/launch/darwin.h"
#include "runtime/resolve/command.h"
#include "runtime/resolve/resolve.h"

#define OMNIBOX_VERSION "0.1.0"

extern char **environ;

enum {
	EXIT_OK = 0,
	EXIT_STALE = 1,
	EXIT_USAGE = 2,
	EXIT_INVALID = 65,
	EXIT_UNAVAILABLE = 69,
	EXIT_INTERNAL = 70,
	EXIT_IO = 74,
};

struct options {
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

static const char usage_text[] =
    "usage: omnibox-compile [OPTIONS] AGENT.yaml [-- COMMAND [ARG...]]\n"
    "\n"
    "Compile the os_env sandbox policy of an agent YAML into native sandbox profiles.\n"
    "\n"
    "  -t, --target=linux|darwin|windows|all   default: the host's platform\n"
    "  -e, --emit=KIND      one output of the target:\n"
    "                         ir           the validated policy as JSON, with source lines\n"
    "                         egress       the normalised egress rule table\n"
    "                         bwrap        linux: the bubblewrap argv (the linux default)\n"
    "                         seccomp      linux: the seccomp filter, readable\n"
    "                         seccomp-bpf  linux: the seccomp filter, binary\n"
    "                         env          linux, darwin: the environment allow-list\n"
    "                         sbpl         darwin: the Seatbelt profile (the darwin default)\n"
    "                         sbpl-params  darwin: its -D NAME=VALUE parameters\n"
    "                         winjob       windows: the Job Object manifest (the default)\n"
    "  -o, --output=PATH    write to PATH instead of stdout; with --target=all, PATH is\n"
    "                       a directory that receives every output\n"
    "      --terminal=NAME  compile the effective policy of terminals.NAME\n"
    "      --resolve        print the launch omnibox-run would execute on this machine:\n"
    "                       for linux the bwrap argv (canonical paths, the dotfile scan\n"
    "                       done, the scratch dir named; a command may follow '--'),\n"
    "                       for darwin the concrete profile or its -D parameters\n"
    "      --cwd=DIR        the workspace for --resolve (default: os_env.cwd, else .)\n"
    "      --home=DIR       the home directory for --resolve (default: $HOME)\n"
    "      --check=DIR      compare DIR (as written by --target=all -o DIR, or for the\n"
    "                       given --target) with what would be written now; exit 1 and\n"
    "                       print a unified diff when it is stale\n"
    "      --query=\"ACCESS TARGET\"  the decision on each target, and the YAML line of\n"
    "                       the rule that decides: ACCESS is read, write, exec or an\n"
    "                       HTTP method; TARGET a path (relative to the workspace, ~/,\n"
    "                       or absolute) or a URL; from the policy alone (the dotfile\n"
    "                       scan taken as complete), or with --resolve (linux) from the\n"
    "                       launch resolved here; may be repeated\n"
    "      --query-file=FILE  the queries of FILE, one a line ('#' starts a comment)\n"
    "      --explain        for each setting, per target (--target, or all): enforced,\n"
    "                       and by what; approximated, and how; or not enforced\n"
    "      --strict         with --explain: exit 1 when a setting is not enforced on a\n"
    "                       requested target (or the policy has no form there)\n"
    "      --diff=OLD       what this policy widens and narrows against OLD, per target,\n"
    "                       most dangerous first; OLD is a policy file, or a git\n"
    "                       revision whose version of AGENT.yaml is read (git show);\n"
    "                       exit 0 when nothing widened, 1 when something did\n"
    "      --format=text|json|markdown  for --diff (default text)\n"
    "      --strict-toplevel  an unknown top-level key is an error (by default the\n"
    "                       agent schema's keys are ignored, and one that looks like\n"
    "                       os_env or terminals earns a warning)\n"
    "  -q, --quiet          no warnings\n"
    "  -v, --verbose        say which files were written or checked\n"
    "  -V, --version        print the version\n"
    "  -h, --help           print this help\n"
    "\n"
    "AGENT.yaml may be '-' for standard input.  Nothing is written when there is an\n"
    "error, and an output file is replaced whole or not at all.\n"
    "\n"
    "exit status: 0 ok; 1 --check found differences; 2 usage error; 65 invalid policy\n"
    "(diagnostics on stderr), or with --resolve a launch omnibox-run would refuse here\n"
    "(a grant through a symlink out of a writable directory, ...); 70 internal error;\n"
    "74 I/O error.\n";

static void usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void
usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("omnibox-compile: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry 'omnibox-compile --help'.\n", stderr);
	exit(EXIT_USAGE);
}

static int
host_target(void)
{
#if defined(__APPLE__)
	return TARGET_DARWIN;
#elif defined(_WIN32)
	return TARGET_WINDOWS;
#else
	return TARGET_LINUX;
#endif
}

/* The options of O that do not go together, refused with a usage error. */
static void
check_options(struct options *o)
{
	if (o->check && !o->target_set)
		o->target = -1;
	if (o->check && (o->output || o->emit))
		usage_error("%s",
			    "--check compares a whole directory; it takes no --output or --emit");
	if (o->strict && !o->explain)
		usage_error("%s", "--strict is for --explain");
	if (o->explain && (o->check || o->output || o->emit || o->resolve || o->n_queries ||
			   o->query_file || o->diff))
		usage_error("%s", "--explain prints its table; it takes no --check, --output, "
				  "--emit, --resolve, --query or --diff");
	if (o->format && !o->diff)
		usage_error("%s", "--format is for --diff");
	if (o->diff && (o->check || o->output || o->emit || o->resolve || o->n_queries ||
			o->query_file))
		usage_error("%s", "--diff compares two policies; it takes no --check, --output, "
				  "--emit, --resolve or --query");
	if ((o->n_queries || o->query_file) && (o->check || o->output || o->emit))
		usage_error("%s", "--query answers on stdout; it takes no --check, --output or "
				  "--emit");
	if ((o->n_queries || o->query_file) && o->resolve && o->target != TARGET_LINUX)
		usage_error("%s", "--query with --resolve answers from a Linux launch: give "
				  "--target=linux");
	if (o->target < 0 && !o->check && !o->output && !o->n_queries && !o->query_file &&
	    !o->diff && !o->explain)
		usage_error("%s", "--target=all writes several files: give --output=DIR");
	if (o->target < 0 && o->emit)
		usage_error("%s", "--emit selects one output, --target=all writes them all");
	if ((o->cwd || o->home) && !o->resolve)
		usage_error("%s", "--cwd and --home describe the launch for --resolve");
	if (o->n_command && !o->resolve)
		usage_error("%s", "a command after '--' is only for --resolve");
	if (o->resolve && (o->check || o->target < 0))
		usage_error("%s", "--resolve describes one launch: one --target, no --check");
	if (o->resolve && o->target == TARGET_WINDOWS)
		usage_error("%s", "--resolve has nothing to resolve for --target=windows: the "
				  "manifest has no machine-specific values");
	if (o->resolve && o->target == TARGET_LINUX && o->emit && strcmp(o->emit, "bwrap"))
		usage_error("%s", "--resolve --target=linux prints the bwrap launch; it takes no "
				  "other --emit");
	if (o->resolve && o->target == TARGET_DARWIN && o->emit && strcmp(o->emit, "sbpl") &&
	    strcmp(o->emit, "sbpl-params"))
		usage_error("%s", "--resolve --target=darwin prints the profile (--emit=sbpl) or "
				  "its parameters (--emit=sbpl-params)");
}

static void
parse_options(int argc, char **argv, struct options *o)
{
	enum {
		OPT_TERMINAL = 256,
		OPT_CHECK,
		OPT_VERSION,
		OPT_HELP,
		OPT_RESOLVE,
		OPT_CWD,
		OPT_HOME,
		OPT_QUERY,
		OPT_QUERY_FILE,
		OPT_DIFF,
		OPT_FORMAT,
		OPT_EXPLAIN,
		OPT_STRICT,
		OPT_STRICT_TOPLEVEL
	};
	static const struct option longopts[] = {
	    {"target", required_argument, NULL, 't'},
	    {"emit", required_argument, NULL, 'e'},
	    {"output", required_argument, NULL, 'o'},
	    {"terminal", required_argument, NULL, OPT_TERMINAL},
	    {"check", required_argument, NULL, OPT_CHECK},
	    {"resolve", no_argument, NULL, OPT_RESOLVE},
	    {"cwd", required_argument, NULL, OPT_CWD},
	    {"home", required_argument, NULL, OPT_HOME},
	    {"query", required_argument, NULL, OPT_QUERY},
	    {"query-file", required_argument, NULL, OPT_QUERY_FILE},
	    {"diff", required_argument, NULL, OPT_DIFF},
	    {"format", required_argument, NULL, OPT_FORMAT},
	    {"explain", no_argument, NULL, OPT_EXPLAIN},
	    {"strict", no_argument, NULL, OPT_STRICT},
	    {"strict-toplevel", no_argument, NULL, OPT_STRICT_TOPLEVEL},
	    {"quiet", no_argument, NULL, 'q'},
	    {"verbose", no_argument, NULL, 'v'},
	    {"version", no_argument, NULL, 'V'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int c;

	memset(o, 0, sizeof(*o));
	o->target = host_target();
	opterr = 0;
	/* A command for --resolve follows "--"; getopt would mix it with ours. */
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--")) {
			o->command = argv + i + 1;
			o->n_command = (size_t)(argc - i - 1);
			argc = i;
			break;
		}
	while ((c = getopt_long(argc, argv, ":t:e:o:qvhV", longopts, NULL)) != -1) {
		switch (c) {
		case 't':
			o->target_set = true;
			if (!strcmp(optarg, "all"))
				o->target = -1;
			else if ((o->target = target_parse(optarg)) < 0)
				usage_error("unknown target '%s' (linux, darwin, windows or all)",
					    optarg);
			break;
		case 'e':
			o->emit = optarg;
			break;
		case 'o':
			o->output = optarg;
			break;
		case OPT_TERMINAL:
			o->terminal = optarg;
			break;
		case OPT_CHECK:
			o->check = optarg;
			break;
		case OPT_RESOLVE:
			o->resolve = true;
			break;
		case OPT_CWD:
			o->cwd = optarg;
			break;
		case OPT_HOME:
			o->home = optarg;
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'v':
			o->verbose = true;
			break;
		case OPT_QUERY:
			o->queries = realloc(o->queries, (o->n_queries + 1) * sizeof(*o->queries));
			if (!o->queries)
				abort();
			o->queries[o->n_queries++] = optarg;
			break;
		case OPT_QUERY_FILE:
			o->query_file = optarg;
			break;
		case OPT_DIFF:
			o->diff = optarg;
			break;
		case OPT_EXPLAIN:
			o->explain = true;
			break;
		case OPT_STRICT:
			o->strict = true;
			break;
		case OPT_STRICT_TOPLEVEL:
			o->strict_toplevel = true;
			break;
		case OPT_FORMAT:
			if (strcmp(optarg, "text") && strcmp(optarg, "json") &&
			    strcmp(optarg, "markdown"))
				usage_error("unknown format '%s' (text, json or markdown)", optarg);
			o->format = optarg;
			break;
		case 'V':
			printf("omnibox-compile %s\n", OMNIBOX_VERSION);
			exit(EXIT_OK);
		case 'h':
			fputs(usage_text, stdout);
			exit(EXIT_OK);
		case ':':
			usage_error("option '%s' needs a value", argv[optind - 1]);
			break;
		default:
			usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind == argc)
		usage_error("%s", "no AGENT.yaml given");
	if (optind + 1 < argc)
		usage_error("one AGENT.yaml at a time; '%s' is one too many", argv[optind + 1]);
	o->input = argv[optind];
	check_options(o);
}

/* One file of an output directory: where it goes and what it holds. */
struct artifact {
	char *rel; /* "policy.ir.json", "linux/bwrap.args" */
	struct textbuf data;
};

struct artifacts {
	struct artifact *v;
	size_t n, cap;
};

static int
run_emitter(const struct emitter *e, const struct policy *p, enum target t, struct diag *d,
	    struct textbuf *out)
{
	if (e->per_target && emit_check_target(p, t, d) < 0)
		return -1;
	return e->emit(p, t, d, out);
}

/* Every output for the selected target(s), in a fixed order. */
static int
collect_artifacts(const struct policy *p, int target, struct diag *d, struct artifacts *set,
		  struct arena *a)
{
	int rc = 0;

	for (const struct emitter *e = emitters; e->name; e++) {
		for (int t = 0; t < TARGET_COUNT; t++) {
			struct artifact *art;

			if (target >= 0 && t != target)
				continue;
			if (!(e->targets & TARGET_BIT(t)))
				continue;
			/* --target=all: a policy pinned to one backend has no other forms. */
			if (target < 0 && e->per_target && p->os_env.sandbox.type != SANDBOX_AUTO &&
			    p->os_env.sandbox.type != SANDBOX_NONE &&
			    p->os_env.sandbox.type != target_backend((enum target)t))
				continue;
			/* --target=all: a policy that needs the egress proxy has no windows form.
			 */
			if (target < 0 && t == TARGET_WINDOWS && !winjob_can_express(p))
				continue;
			/* ... and one with Linux-only settings no darwin form. */
			if (target < 0 && t == TARGET_DARWIN && !sbpl_can_express(p))
				continue;
			art = ARENA_PUSH(a, set->v, set->n, set->cap);
			art->rel =
			    e->per_target
				? arena_printf(a, "%s/%s", target_name((enum target)t), e->file)
				: arena_strdup(a, e->file);
			if (run_emitter(e, p, (enum target)t, d, &art->data) < 0)
				rc = -1;
			if (!e->per_target)
				break; /* one copy, whatever the target */
		}
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
check_directory(const struct options *o, const struct artifacts *set)
{
	struct textbuf diff = {0};
	int stale = 0;

	for (size_t i = 0; i < set->n; i++) {
		const struct artifact *art = &set->v[i];
		char *path, *old_label, *new_label;
		struct textbuf old = {0};
		int rc;

		if (asprintf(&path, "%s/%s", o->check, art->rel) < 0)
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
				  art->data.data ? art->data.data : "", art->data.len, &diff))
				stale = 1;
			else if (o->verbose)
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
		fprintf(stderr, "omnibox-compile: %s is stale; regenerate it with -o\n", o->check);
	return stale ? EXIT_STALE : EXIT_OK;
}

static int
write_directory(const struct options *o, const struct artifacts *set)
{
	for (size_t i = 0; i < set->n; i++) {
		char *path;
		int rc;

		if (asprintf(&path, "%s/%s", o->output, set->v[i].rel) < 0)
			abort();
		rc = file_write_atomic(path, set->v[i].data.data ? set->v[i].data.data : "",
				       set->v[i].data.len, true);
		if (rc < 0) {
			fprintf(stderr, "omnibox-compile: %s: %s\n", path, strerror(-rc));
			free(path);
			return EXIT_IO;
		}
		if (o->verbose)
			fprintf(stderr, "omnibox-compile: wrote %s\n", path);
		free(path);
	}
	return EXIT_OK;
}

static int
emit_one(const struct options *o, const struct policy *p, struct diag *d)
{
	const struct emitter *e;
	struct textbuf out = {0};
	int rc;

	if (o->emit) {
		e = emitter_find(o->emit);
		if (!e)
			usage_error("unknown output kind '%s' (see --help)", o->emit);
		if (!(e->targets & TARGET_BIT(o->target)))
			usage_error("--emit=%s is not an output of this target", o->emit);
	} else {
		e = emitter_default((enum target)o->target);
	}
	if (e->binary && !o->output && isatty(STDOUT_FILENO)) {
		fprintf(stderr, "omnibox-compile: --emit=%s is binary; give --output=FILE\n",
			e->name);
		return EXIT_USAGE;
	}
	if (run_emitter(e, p, (enum target)o->target, d, &out) < 0) {
		tb_free(&out);
		return EXIT_INVALID;
	}
	if (o->output) {
		rc = file_write_atomic(o->output, out.data ? out.data : "", out.len, false);
		if (rc < 0) {
			fprintf(stderr, "omnibox-compile: %s: %s\n", o->output, strerror(-rc));
			tb_free(&out);
			return EXIT_IO;
		}
		if (o->verbose)
			fprintf(stderr, "omnibox-compile: wrote %s\n", o->output);
	} else if (out.len && fwrite(out.data, 1, out.len, stdout) != out.len) {
		tb_free(&out);
		return EXIT_IO;
	}
	tb_free(&out);
	return EXIT_OK;
}

/* ---- --query ---------------------------------------------------------------- */

static void
query_one(struct arena *a, const struct policy *p, int target, const struct launch_plan *plan,
	  const char *text, struct textbuf *out)
{
	struct query q;
	char err[512];

	if (query_parse(a, text, &q, err, sizeof(err)) < 0) {
		tb_printf(out, "# query: %s\n  error: %s\n", text, err);
		return;
	}
	tb_printf(out, "# query: %s\n", text);
	/* --resolve: a path from the launch itself (why.h). */
	if (plan && (q.access == QUERY_READ || q.access == QUERY_WRITE)) {
		const char *path = launch_why_path(a, plan, strchr(text, ' ') + 1);
		struct decision d;

		launch_why(a, plan, path, q.access, &d);
		tb_puts(out, "  linux    ");
		tb_puts(out, d.allowed ? "allow " : "deny  ");
		tb_escape(out, path, 0);
		tb_puts(out, ": ");
		tb_escape(out, d.why, 0);
		tb_putc(out, '\n');
		return;
	}
	for (int t = 0; t < TARGET_COUNT; t++) {
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

/* --query and --query-file, from PLAN when --resolve made one; 0, or
 * EXIT_USAGE when a query is malformed. */
static int
run_queries(const struct options *o, const struct policy *p, struct arena *a,
	    const struct launch_plan *plan)
{
	struct textbuf out = {0}, file = {0};
	int rc = EXIT_OK;

	for (size_t i = 0; i < o->n_queries; i++)
		query_one(a, p, o->target, plan, o->queries[i], &out);
	if (o->query_file) {
		int err = file_read(o->query_file, &file, FILE_READ_MAX);

		if (err < 0) {
			fprintf(stderr, "omnibox-compile: %s: %s\n", o->query_file, strerror(-err));
			tb_free(&out);
			return EXIT_IO;
		}
		for (char *line = file.data; line && *line;) {
			char *end = strchr(line, '\n');

			if (end)
				*end = '\0';
			while (*line == ' ' || *line == '\t')
				line++;
			if (*line && *line != '#')
				query_one(a, p, o->target, plan, line, &out);
			line = end ? end + 1 : NULL;
		}
		tb_free(&file);
	}
	if (out.data && strstr(out.data, "\n  error: "))
		rc = EXIT_USAGE;
	fwrite(out.data ? out.data : "", 1, out.len, stdout);
	tb_free(&out);
	return rc;
}

/* ---- --explain --------------------------------------------------------------- */

static int
run_explain(const struct options *o, const struct policy *p)
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
	fwrite(out.data ? out.data : "", 1, out.len, stdout);
	tb_free(&out);
	return o->strict && !all ? EXIT_STALE : EXIT_OK;
}

/* ---- --diff ------------------------------------------------------------------ */

/* The version of INPUT at git revision REV, read with `git show`; 0 or -1. */
static int
git_show(const char *input, const char *rev, struct textbuf *out, char *err, size_t errlen)
{
	char *dir = strdup(input), *slash = strrchr(dir, '/'), *spec;
	const char *base = slash ? slash + 1 : input;
	int fds[2], status = 0;
	pid_t pid;
	char buf[65536];
	ssize_t n;

	if (slash)
		*slash = '\0';
	if (asprintf(&spec, "%s:./%s", rev, base) < 0 || pipe(fds) < 0) {
		snprintf(err, errlen, "%s", strerror(errno));
		free(dir);
		return -1;
	}
	if ((pid = fork()) == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(fds[1], 1);
		if (null >= 0)
			dup2(null, 2);
		close(fds[0]);
		execlp("git", "git", "-C", slash ? (*dir ? dir : "/") : ".", "show", spec,
		       (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	while (pid > 0 && (n = read(fds[0], buf, sizeof(buf))) > 0 && out->len < FILE_READ_MAX)
		tb_write(out, buf, (size_t)n);
	close(fds[0]);
	if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status)) {
		snprintf(err, errlen,
			 "'%s' is neither a file nor a git revision that holds %s (git show %s)",
			 rev, input, spec);
		free(spec);
		free(dir);
		return -1;
	}
	free(spec);
	free(dir);
	return 0;
}

static int
run_diff(const struct options *o, const struct policy *p, struct arena *a, struct diag *d)
{
	struct textbuf src = {0}, out = {0};
	struct diag od;
	struct policy *old;
	struct diff_list w, n;
	struct stat st;
	char err[1024];
	const char *name;

	if (stat(o->diff, &st) == 0 && S_ISREG(st.st_mode)) {
		int rc = file_read(o->diff, &src, FILE_READ_MAX);

		if (rc < 0) {
			fprintf(stderr, "omnibox-compile: %s: %s\n", o->diff, strerror(-rc));
			return EXIT_IO;
		}
		name = o->diff;
	} else {
		if (!strcmp(o->input, "-") || git_show(o->input, o->diff, &src, err, sizeof(err)) < 0) {
			fprintf(stderr, "omnibox-compile: --diff=%s: %s\n", o->diff,
				strcmp(o->input, "-") ? err : "a revision needs AGENT.yaml as a file");
			tb_free(&src);
			return EXIT_USAGE;
		}
		name = arena_printf(a, "%s:%s", o->diff, o->input);
	}
	diag_init(&od, a, name, src.data ? src.data : "", src.len);
	old = policy_compile(a, &od, name, src.data ? src.data : "", src.len);
	if (old && o->terminal)
		old = policy_select_terminal(a, &od, old, o->terminal);
	diag_print(&od, stderr, false);
	if (!old) {
		fprintf(stderr, "omnibox-compile: --diff: the old policy %s is invalid\n", name);
		tb_free(&src);
		return EXIT_INVALID;
	}
	(void)d;
	diff_policies(a, old, p, &w, &n);
	diff_format(&w, &n, o->format ? o->format : "text", name, o->input, &out);
	fwrite(out.data ? out.data : "", 1, out.len, stdout);
	tb_free(&out);
	tb_free(&src);
	return w.n ? EXIT_STALE : EXIT_OK;
}

/* What the resolver needs to describe a launch from here, as omnibox-run would. */
static void
resolve_request(const struct options *o, const struct policy *p, struct arena *a,
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
	rq->policy_file = o->input[0] == '/' ? o->input
					     : arena_printf(a, "%s/%s", launch_dir, o->input);
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

/* --resolve: the launch omnibox-run would execute here, as --dry-run prints it
 * (Linux), or the concrete profile or its -D list (darwin). */
static int
resolve_launch(const struct options *o, const struct policy *p, struct arena *a, struct diag *d)
{
	struct launch_request rq;
	struct textbuf out = {0};
	char launch_dir[PATH_MAX], self[PATH_MAX], err[4096], *slash;
	ssize_t n;

	if (!getcwd(launch_dir, sizeof(launch_dir))) {
		fprintf(stderr, "omnibox-compile: getcwd: %s\n", strerror(errno));
		return EXIT_IO;
	}
	resolve_request(o, p, a, launch_dir, &rq);
	if (o->target == TARGET_DARWIN) {
		struct darwin_launch_plan plan;
		bool want_params = o->emit && !strcmp(o->emit, "sbpl-params");

		rq.target = LAUNCH_DARWIN;
		if (darwin_launch_prepare(a, &rq, &plan, d, err, sizeof(err)) < 0) {
			resolve_error(err);
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
		rq.bwrap = launch_find_in_path(a, environ, "bwrap");
		if (launch_resolve(a, &rq, &plan, err, sizeof(err)) < 0) {
			resolve_error(err);
			return EXIT_INVALID;
		}
		if (o->n_queries || o->query_file) {
			int rc = run_queries(o, p, a, &plan);

			launch_plan_close(&plan);
			return rc;
		}
		launch_describe(&plan, &out);
		launch_plan_close(&plan);
	}
	fwrite(out.data, 1, out.len, stdout);
	tb_free(&out);
	return EXIT_OK;
}

int
main(int argc, char **argv)
{
	struct options o;
	struct textbuf src = {0};
	struct arena *a;
	struct diag d;
	struct policy *p;
	const char *name;
	int rc;

	parse_options(argc, argv, &o);
	name = strcmp(o.input, "-") ? o.input : "<stdin>";
	rc = strcmp(o.input, "-") ? file_read(o.input, &src, FILE_READ_MAX)
				  : file_read_fd(STDIN_FILENO, &src, FILE_READ_MAX);
	if (rc < 0) {
		fprintf(stderr, "omnibox-compile: %s: %s\n", name,
			rc == -EFBIG ? "file is larger than 16 MiB" : strerror(-rc));
		return EXIT_IO;
	}
	a = arena_new();
	diag_init(&d, a, name, src.data ? src.data : "", src.len);
	p = policy_compile_flags(a, &d, name, src.data ? src.data : "", src.len,
				 o.strict_toplevel ? POLICY_STRICT_TOPLEVEL : 0);
	rc = p ? EXIT_OK : EXIT_INVALID;
	if (p && o.terminal && !(p = policy_select_terminal(a, &d, p, o.terminal)))
		rc = EXIT_USAGE;
	if (p) {
		struct artifacts set = {0};

		if (o.explain) {
			rc = run_explain(&o, p);
		} else if (o.diff) {
			rc = run_diff(&o, p, a, &d);
		} else if ((o.n_queries || o.query_file) && !o.resolve) {
			rc = run_queries(&o, p, a, NULL);
		} else if (o.resolve) {
			if (emit_check_target(p, (enum target)o.target, &d) < 0)
				rc = EXIT_INVALID;
			else
				rc = resolve_launch(&o, p, a, &d);
		} else if (o.check || o.target < 0) {
			if (collect_artifacts(p, o.target, &d, &set, a) < 0)
				rc = EXIT_INVALID;
			else
				rc =
				    o.check ? check_directory(&o, &set) : write_directory(&o, &set);
			free_artifacts(&set);
		} else {
			rc = emit_one(&o, p, &d);
		}
	}
	fflush(stdout);
	diag_print(&d, stderr, !o.quiet);
	arena_free(a);
	tb_free(&src);
	free(o.queries);
	return rc;
}
