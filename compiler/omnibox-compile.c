/*
 * omnibox-compile.c - omnibox-compile: agent YAML in, sandbox profiles out.
 *
 * The options, the policy read and compiled, one mode run: the modes are
 * emitters/compile.h, and --resolve runtime/resolve/report.h.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/arena.h"
#include "base/diag.h"
#include "base/fileio.h"
#include "base/textbuf.h"
#include "emitters/compile.h"
#include "emitters/emit.h"
#include "policy.h"
#include "runtime/resolve/gitshow.h"
#include "runtime/resolve/report.h"

#define OMNIBOX_VERSION "0.1.0"

static const char usage_text[] =
    "usage: omnibox-compile [OPTIONS] AGENT.yaml [-- COMMAND [ARG...]]\n"
    "\n"
    "Compile the os_env sandbox policy of an agent YAML into native sandbox profiles.\n"
    "\n"
    "  -t, --target=linux|darwin|windows|oci|kubernetes|all   default: the host's platform\n"
    "  -e, --emit=KIND      one output of the target:\n"
    "                         ir           the validated policy as JSON, with source lines\n"
    "                         egress       the normalised egress rule table\n"
    "                         egress-table the egress proxy's table, for omnibox-proxy --table\n"
    "                         bwrap        linux: the bubblewrap argv (the linux default)\n"
    "                         seccomp      linux: the seccomp filter, readable\n"
    "                         seccomp-bpf  linux: the seccomp filter, binary\n"
    "                         landlock     linux: omnibox-init's command line under\n"
    "                                      sandbox.type linux_landlock (no namespace)\n"
    "                         seccomp-oci  linux: the seccomp filter as an OCI runtime-spec\n"
    "                                      profile (runc, crun, docker --security-opt)\n"
    "                         seccomp-landlock, seccomp-landlock-bpf\n"
    "                                      linux: the seccomp filter of linux_landlock\n"
    "                         seccomp-landlock-net, seccomp-landlock-net-bpf\n"
    "                                      linux: the same for allow_network: true\n"
    "                         env          linux, darwin: the environment allow-list\n"
    "                         sbpl         darwin: the Seatbelt profile (the darwin default)\n"
    "                         sbpl-params  darwin: its -D NAME=VALUE parameters\n"
    "                         winjob       windows: the Job Object manifest (the default)\n"
    "                         oci          oci: an OCI runtime-spec config.json for a bundle\n"
    "                                      over your root filesystem (the default)\n"
    "                         kubernetes   kubernetes: the agent's Pod and PodTemplate, its\n"
    "                                      NetworkPolicies, the egress proxy's Deployment\n"
    "                                      (the default)\n"
    "  -o, --output=PATH    write to PATH instead of stdout; with --target=all, PATH is\n"
    "                       a directory that receives every output\n"
    "      --terminal=NAME  compile the effective policy of terminals.NAME\n"
    "      --resolve        print the launch omnibox-run would execute on this machine:\n"
    "                       for linux the bwrap argv, or omnibox-init's under\n"
    "                       linux_landlock (canonical paths, the dotfile scan\n"
    "                       done, the scratch dir named; a command may follow '--'),\n"
    "                       for darwin the concrete profile or its -D parameters,\n"
    "                       for oci config.json for this machine (the command after\n"
    "                       '--'; rootless when run by a user other than root)\n"
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

static void
parse_options(int argc, char **argv, struct compile_options *o)
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
	const char *conflict;
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
				usage_error("unknown target '%s' (linux, darwin, windows, oci, kubernetes or all)",
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
	if ((conflict = compile_options_conflict(o)))
		usage_error("%s", conflict);
}

/* The output --emit names (or the target's default), refused with a usage
 * error when the target has no such output. */
static const struct emitter *
select_emitter(const struct compile_options *o)
{
	const struct emitter *e;

	if (!o->emit)
		return emitter_default((enum target)o->target);
	e = emitter_find(o->emit);
	if (!e)
		usage_error("unknown output kind '%s' (see --help)", o->emit);
	if (!(e->targets & TARGET_BIT(o->target)))
		usage_error("--emit=%s is not an output of this target", o->emit);
	return e;
}

/* The mode O asks for, over P. */
static int
run_mode(const struct compile_options *o, const struct policy *p, struct arena *a, struct diag *d)
{
	struct textbuf old = {0};
	const char *old_name;
	int rc;

	if (o->explain)
		return compile_explain(o, p);
	if (o->diff) {
		rc = git_show_or_read(a, o->diff, o->input, &old, &old_name);
		if (rc == EXIT_OK)
			rc = compile_diff(o, p, a, old_name, old.data ? old.data : "", old.len);
		tb_free(&old);
		return rc;
	}
	if (o->resolve)
		return launch_report(o, p, a, d);
	if (o->n_queries || o->query_file)
		return compile_queries(o, p, a);
	if (o->check || o->target < 0)
		return compile_directory(o, p, d, a);
	return compile_emit_one(select_emitter(o), p, (enum target)o->target, o->output, o->verbose,
				d);
}

int
main(int argc, char **argv)
{
	struct compile_options o;
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
		free(o.queries);
		return EXIT_IO;
	}
	a = arena_new();
	diag_init(&d, a, name, src.data ? src.data : "", src.len);
	p = policy_compile_flags(a, &d, name, src.data ? src.data : "", src.len,
				 o.strict_toplevel ? POLICY_STRICT_TOPLEVEL : 0);
	rc = p ? EXIT_OK : EXIT_INVALID;
	if (p && o.terminal && !(p = policy_select_terminal(a, &d, p, o.terminal)))
		rc = EXIT_USAGE;
	if (p)
		rc = run_mode(&o, p, a, &d);
	fflush(stdout);
	diag_print(&d, stderr, !o.quiet);
	arena_free(a);
	tb_free(&src);
	free(o.queries);
	return rc;
}
