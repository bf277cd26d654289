/*
 * omnibox-run.c - omnibox-run: compile a policy and launch the agent inside it.
 *
 * The policy is compiled in this process with the same library as
 * omnibox-compile (one parser), resolved against this machine
 * (launch_resolve()), and run by the launch of its sandbox type: bwrap on
 * Linux (runtime/launch/launch_bwrap.h), Seatbelt on macOS
 * (runtime/launch/darwin_run.h), or as is for type none
 * (runtime/launch/unsandboxed.h).  This file is the sequence of those
 * steps and the one place omnibox-run fails: fail() undoes what the launch
 * made, says why and exits 125, and nothing runs: there is no unsandboxed
 * fallback.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compiler/base/fileio.h"
#include "compiler/base/textbuf.h"
#include "compiler/decide/refuse.h"
#include "compiler/policy.h"
#include "runtime/launch/choose.h"
#include "runtime/launch/darwin_run.h"
#include "runtime/launch/launch.h"
#include "runtime/launch/launch_bwrap.h"
#include "runtime/launch/unsandboxed.h"
#include "runtime/launch/why_answer.h"
#include "runtime/resolve/command.h"
#include "runtime/resolve/resolve.h"

/* Whether this build launches with Seatbelt (its --why answers from the IR). */
#if defined(__APPLE__) || defined(OMNIBOX_TEST_DARWIN)
#define OMNIBOX_DARWIN_LAUNCH 1
#else
#define OMNIBOX_DARWIN_LAUNCH 0
#endif

#define OMNIBOX_VERSION "0.1.0"

extern char **environ;

/* One launch, from the options to the report: what main's steps hand on to each other. */
struct run {
	struct launch_options o;
	struct arena *a;
	struct textbuf src;
	struct policy *p;
	struct diag d;
	char launch_dir[PATH_MAX];
	const char *home;
	struct bwrap_launch l;
};

static const char usage_text[] =
    "usage: omnibox-run [OPTIONS] AGENT.yaml [-- COMMAND [ARG...]]\n"
    "\n"
    "Run COMMAND (or a terminal of the agent) inside the sandbox its policy describes.\n"
    "\n"
    "      --terminal=NAME  run terminals.NAME: its command and arguments under its own\n"
    "                       or the inherited os_env\n"
    "      --cwd=DIR        the workspace (default: os_env.cwd, else the current directory)\n"
    "      --dry-run        print the resolved launch (bwrap's arguments, or omnibox-init's\n"
    "                       under linux_landlock; environment names) and exit without\n"
    "                       running anything\n"
    "      --egress-log=FILE  with egress_rules: append the proxy's decisions (one line\n"
    "                       each, with the rule that matched) to FILE, not stderr\n"
    "      --egress-hosts=FILE  the proxy resolves names through this hosts file\n"
    "                       instead of /etc/hosts (before DNS), e.g. for tests\n"
    "      --egress-resolv=FILE  the proxy asks the nameservers of this resolv.conf\n"
    "                       instead of /etc/resolv.conf's, e.g. for tests\n"
    "      --egress-ca=FILE the proxy verifies upstream servers against the CAs in\n"
    "                       FILE (PEM) instead of the system store\n"
    "      --strict-toplevel  an unknown top-level key of the policy is an error\n"
    "      --why=PATH|URL   say whether the command may read and write PATH (or GET\n"
    "                       URL), and which rule decides, then exit; nothing runs; a\n"
    "                       path is answered from the launch resolved as --dry-run does\n"
    "      --pty, --no-pty  give the sandbox a terminal of its own (job control, Ctrl-C,\n"
    "                       resizing), the default when standard input and output are\n"
    "                       a terminal;\n"
    "                       its egress log then goes to a file, never to the screen\n"
    "  -v, --verbose        print the egress proxy's refusals as they happen, even when\n"
    "                       its log goes to a file, and the system calls the seccomp\n"
    "                       filter refuses\n"
    "  -q, --quiet          no warnings, notes or summaries, and no egress log on\n"
    "                       stderr (--egress-log still gets it)\n"
    "  -V, --version        print the version\n"
    "  -h, --help           print this help\n"
    "\n"
    "Options may come before or after AGENT.yaml; everything after '--' is the command.\n"
    "\n"
    "exit status: the command's own; 128+N if it was killed by signal N; 125 when\n"
    "omnibox-run itself fails (invalid policy, missing bwrap, setup error), in which\n"
    "case nothing ran.\n";

/* The launch a failure undoes (bwrap_launch_undo()), once there is one. */
static struct bwrap_launch *undo_launch;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* The one way omnibox-run fails: what the launch made undone, the message said, 125. */
static void
fail(const char *fmt, ...)
{
	va_list ap;

	if (undo_launch)
		bwrap_launch_undo(undo_launch);
	fputs("omnibox-run: ", stderr);
	va_start(ap, fmt);
	launch_vsay(fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(LAUNCH_EXIT_SETUP);
}

static void
parse_options(int argc, char **argv, struct launch_options *o)
{
	enum {
		OPT_TERMINAL = 256,
		OPT_CWD,
		OPT_DRY,
		OPT_VERSION,
		OPT_HELP,
		OPT_EGRESS_LOG,
		OPT_EGRESS_HOSTS,
		OPT_EGRESS_RESOLV,
		OPT_EGRESS_CA,
		OPT_STRICT_TOPLEVEL,
		OPT_PTY,
		OPT_NO_PTY,
		OPT_WHY
	};
	static const struct option longopts[] = {
	    {"terminal", required_argument, NULL, OPT_TERMINAL},
	    {"cwd", required_argument, NULL, OPT_CWD},
	    {"dry-run", no_argument, NULL, OPT_DRY},
	    {"egress-log", required_argument, NULL, OPT_EGRESS_LOG},
	    {"egress-hosts", required_argument, NULL, OPT_EGRESS_HOSTS},
	    {"egress-resolv", required_argument, NULL, OPT_EGRESS_RESOLV},
	    {"egress-ca", required_argument, NULL, OPT_EGRESS_CA},
	    {"strict-toplevel", no_argument, NULL, OPT_STRICT_TOPLEVEL},
	    {"pty", no_argument, NULL, OPT_PTY},
	    {"no-pty", no_argument, NULL, OPT_NO_PTY},
	    {"why", required_argument, NULL, OPT_WHY},
	    {"quiet", no_argument, NULL, 'q'},
	    {"verbose", no_argument, NULL, 'v'},
	    {"version", no_argument, NULL, 'V'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int c, dash = argc;

	memset(o, 0, sizeof(*o));
	opterr = 0;
	/* The command follows "--", its options its own: getopt sees only
	 * what comes before, in any order (GNU style). */
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--")) {
			dash = i;
			break;
		}
	while ((c = getopt_long(dash, argv, ":qvhV", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_TERMINAL:
			o->terminal = optarg;
			break;
		case OPT_CWD:
			o->cwd = optarg;
			break;
		case OPT_DRY:
			o->dry_run = true;
			break;
		case OPT_EGRESS_LOG:
			o->egress_log = optarg;
			break;
		case OPT_EGRESS_HOSTS:
			o->egress_hosts = optarg;
			break;
		case OPT_EGRESS_RESOLV:
			o->egress_resolv = optarg;
			break;
		case OPT_EGRESS_CA:
			o->egress_ca = optarg;
			break;
		case OPT_STRICT_TOPLEVEL:
			o->strict_toplevel = true;
			break;
		case OPT_PTY:
			o->pty = true;
			o->no_pty = false;
			break;
		case OPT_WHY:
			o->why = optarg;
			break;
		case OPT_NO_PTY:
			o->no_pty = true;
			o->pty = false;
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'v':
			o->verbose = true;
			break;
		case 'V':
			printf("omnibox-run %s\n", OMNIBOX_VERSION);
			exit(0);
		case 'h':
			fputs(usage_text, stdout);
			exit(0);
		case ':':
			fail("option '%s' needs a value (see --help)", argv[optind - 1]);
		default:
			fail("unknown option '%s' (see --help)", argv[optind - 1]);
		}
	}
	/* getopt moved the operands to the end, in order. */
	if (optind == dash)
		fail("no AGENT.yaml given (see --help)");
	o->input = argv[optind++];
	if (optind < dash)
		fail("unexpected '%s': put the command after '--'", argv[optind]);
	o->command = argv + (dash < argc ? dash + 1 : argc);
	o->n_command = (size_t)(argc - (dash < argc ? dash + 1 : argc));
}

/* The options, and whether the launch gets a terminal of its own. */
static void
run_options(struct run *r, int argc, char **argv)
{
	parse_options(argc, argv, &r->o);
	/* An interactive launch gets a terminal of its own (pty.h), when both
	 * ends are a terminal: output piped elsewhere stays byte for byte. */
	r->l.use_pty =
	    !r->o.no_pty && (r->o.pty || (isatty(STDIN_FILENO) && isatty(STDOUT_FILENO)));
	if (r->o.pty && !isatty(STDIN_FILENO))
		fail("--pty: standard input is not a terminal");
}

/* The policy, compiled (and its terminal selected) with every diagnostic printed. */
static void
run_compile(struct run *r)
{
	const struct launch_options *o = &r->o;
	int rc;

	rc = file_read(o->input, &r->src, FILE_READ_MAX);
	if (rc < 0)
		fail("%s: %s", o->input, strerror(-rc));
	diag_init(&r->d, r->a, o->input, r->src.data ? r->src.data : "", r->src.len);
	r->p = policy_compile_flags(r->a, &r->d, o->input, r->src.data ? r->src.data : "",
				    r->src.len, o->strict_toplevel ? POLICY_STRICT_TOPLEVEL : 0);
	if (r->p && o->terminal)
		r->p = policy_select_terminal(r->a, &r->d, r->p, o->terminal);
	diag_print(&r->d, stderr, !o->quiet);
	if (!r->p)
		fail("%s: invalid policy; nothing ran", o->input);
}

/*
 * --why of a URL, or of a launch without a Linux sandbox: answered from the
 * IR.  A path is answered from the launch resolved as --dry-run resolves it:
 * of a shell, unless a command was given.  Returns true when answered, with
 * the status in *RC.
 */
static bool
why_from_ir(struct run *r, int *rc)
{
	static char sh_name[] = "sh";
	static char *sh[] = {sh_name, NULL};
	struct launch_options *o = &r->o;

	if (!o->why)
		return false;
	if (!strncmp(o->why, "http", 4) || r->p->os_env.sandbox.type == SANDBOX_NONE ||
	    OMNIBOX_DARWIN_LAUNCH) {
		*rc = why_answer(r->a, r->p, NULL, o->why);
		arena_free(r->a);
		tb_free(&r->src);
		return true;
	}
	o->dry_run = true;
	if (!o->n_command && !r->p->terminal) {
		o->command = sh;
		o->n_command = 1;
	}
	return false;
}

/* The resolver's error: located ones through the diagnostics, then the verdict. */
static void __attribute__((noreturn))
fail_resolve(struct run *r)
{
	diag_print(&r->d, stderr, !r->o.quiet);
	if (r->d.failure)
		fail("%s; nothing ran", r->d.failure);
	fail("%s: cannot launch; nothing ran", r->o.input);
}

/* sandbox type none: the workspace resolved, then the command exec'd in place of this process. */
static int
run_unsandboxed(struct run *r)
{
	struct launch_request rq = {
	    .policy = r->p, .launch_dir = r->launch_dir, .cwd = r->o.cwd, .home = r->home};
	const char *ws;
	char err[4096];

	ws = launch_workspace(r->a, &rq, &r->d);
	if (!ws)
		fail_resolve(r);
	if (unsandboxed_exec(r->a, &r->o, r->p, ws, err, sizeof(err)) < 0)
		fail("%s", err);
	tb_free(&r->src);
	arena_free(r->a);
	return 0;
}

#if OMNIBOX_DARWIN_LAUNCH
/* macOS: the policy through sandbox-exec (darwin_run.h). */
static int
run_darwin(struct run *r)
{
	char err[8192];
	int rc;

	if (darwin_run(r->a, &r->o, r->p, r->launch_dir, &rc, err, sizeof(err)) < 0)
		fail("%s", err);
	tb_free(&r->src);
	arena_free(r->a);
	return rc;
}
#endif

/*
 * The launch directory and home, and the backend: a launch that is not
 * bwrap's (Seatbelt, or sandbox type none) runs here and returns true with
 * its status in *RC.  A type this system cannot run fails.
 */
static bool
run_elsewhere(struct run *r, int *rc)
{
	const struct launch_options *o = &r->o;
	const struct policy *p = r->p;
	struct loc loc;
	/* What no launch here runs (refuse.h): the words every tool uses. */
	const char *why = refuse_launch(r->a, p,
					OMNIBOX_DARWIN_LAUNCH ? SANDBOX_DARWIN_SEATBELT
					: p->os_env.sandbox.type == SANDBOX_LINUX_LANDLOCK
					    ? SANDBOX_LINUX_LANDLOCK
					    : SANDBOX_LINUX_BWRAP,
					OMNIBOX_DARWIN_LAUNCH ? "darwin" : "linux", &loc);

	if (why && !loc.line)
		fail("%s: %s", o->input, why);
	if (why) {
		/* As omnibox-compile --resolve and the resolver print it. */
		diag_error(&r->d, loc, "%s", why);
		diag_print(&r->d, stderr, !o->quiet);
		fail("%s: cannot launch; nothing ran", o->input);
	}
	if (!getcwd(r->launch_dir, sizeof(r->launch_dir)))
		fail("getcwd: %s", strerror(errno));
	r->home = launch_home(environ);
	switch (p->os_env.sandbox.type) {
#if OMNIBOX_DARWIN_LAUNCH
	case SANDBOX_AUTO:
	case SANDBOX_DARWIN_SEATBELT:
		*rc = run_darwin(r);
		return true;
#else
	case SANDBOX_AUTO:
	case SANDBOX_LINUX_BWRAP:
	case SANDBOX_LINUX_LANDLOCK: {
		char err[8192];

		if (launch_choose_linux(p, o->quiet, &r->l.landlock, err, sizeof(err)) < 0)
			fail("%s", err);
		return false;
	}
#endif
	case SANDBOX_NONE:
		*rc = run_unsandboxed(r);
		return true;
	default:
		fail("%s:%u: sandbox type %s cannot run on this system; use auto, or run it where "
		     "its backend exists",
		     o->input, p->os_env.sandbox.type_loc.line,
		     sandbox_type_name(p->os_env.sandbox.type));
	}
}

/* --dry-run: the resolved launch described (or --why answered); nothing runs. */
static int
run_describe(struct run *r)
{
	struct textbuf desc = {0};
	int rc = 0;

	if (r->o.why)
		rc = why_answer(r->a, r->p, &r->l.plan, r->o.why);
	else
		launch_describe(&r->l.plan, r->l.landlock ? r->l.text.data : NULL, &desc);
	if (desc.data)
		fputs(desc.data, stdout);
	tb_free(&desc);
	bwrap_launch_close(&r->l);
	tb_free(&r->src);
	arena_free(r->a);
	return r->o.why ? rc : 0;
}

int
main(int argc, char **argv)
{
	struct run r = {0};
	struct bwrap_launch *l = &r.l;
	char err[8192];
	int rc;

	bwrap_launch_init(l);
	r.a = arena_new();
	launch_process_setup(&l->nofile);
	run_options(&r, argc, argv);
	run_compile(&r);
	if (why_from_ir(&r, &rc) || run_elsewhere(&r, &rc))
		return rc;

	/* Linux: bwrap (launch_bwrap.h), one step at a time; fail() undoes what they made. */
	l->a = r.a;
	l->o = &r.o;
	l->p = r.p;
	l->launch_dir = r.launch_dir;
	l->home = r.home;
	undo_launch = l;
	if (bwrap_launch_prepare(l, err, sizeof(err)) < 0)
		fail("%s", err);
	if (launch_resolve_begin(r.a, &l->rq, &l->plan, &r.d, &l->resolving) < 0)
		fail_resolve(&r);
	l->resolved = true;
	if (bwrap_launch_spawn(l, err, sizeof(err)) < 0 ||
	    bwrap_launch_egress(l, err, sizeof(err)) < 0)
		fail("%s", err);
	if (launch_resolve_finish(l->resolving) < 0)
		fail_resolve(&r);
	if (bwrap_launch_build(l, &r.d, err, sizeof(err)) < 0)
		fail("%s", err);
	if (r.o.dry_run)
		return run_describe(&r);
	if (bwrap_launch_start(l, err, sizeof(err)) < 0 ||
	    bwrap_launch_run(l, &rc, err, sizeof(err)) < 0)
		fail("%s", err);
	bwrap_launch_report(l);
	tb_free(&r.src);
	arena_free(r.a);
	return rc;
}
