/*
 * test_sbpl.c - the macOS target, proven on Linux: every profile is read by
 * a strict SBPL checker, and behaviours are asserted by evaluating access
 * queries under both conflict readings ("last match wins", "deny wins"),
 * which must agree on every query.  Also the parameters, the resolution,
 * string escaping, the size limit, and the launch (argv, environment, the
 * profile file, exit statuses) with a stand-in for sandbox-exec.
 *
 * Run from the top of the source tree (golden/ and examples/ are read).
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "compiler/decide/refuse.h"
#include <unistd.h>

#include "compiler/base/fileio.h"
#include "compiler/policy.h"
#include "emitters/emit.h"
#include "emitters/sbpl.h"
#include "runtime/launch/darwin.h"
#include "runtime/resolve/host.h"
#include "runtime/resolve/resolve.h"
#include "runtime/resolve/scan.h"
#include "tests/darwin/sbpl_check.h"
#include "tests/darwin/sbpl_eval.h"

/* The launch context every resolved test uses: a Mac's spellings. */
/* -Wwrite-strings: argv and environ arrays hold char *. */
#define S(x) ((char *)(x))

#define LAUNCH "/Users/dev/proj"
#define HOME "/Users/dev"
#define SCRATCH "/private/var/folders/zz/T/omnibox-abc123"
#define PORT "43210"
#define SOCK "/private/var/folders/zz/T/omnibox-egress/proxy.sock"

/* ---- helpers -------------------------------------------------------------------- */

static bool
has(const char *text, const char *needle)
{
	return text && strstr(text, needle) != NULL;
}

struct compiled {
	struct arena *a;
	struct policy *p;
	char *diags;
};

static struct compiled
compile_named(const char *name, const char *yaml, size_t len)
{
	struct compiled c = {0};
	struct diag d;
	size_t n;
	FILE *f;

	c.a = arena_new();
	diag_init(&d, c.a, name, yaml, len);
	c.p = policy_compile(c.a, &d, name, yaml, len);
	f = open_memstream(&c.diags, &n);
	diag_print(&d, f, false);
	fclose(f);
	return c;
}

static struct compiled
compile(const char *yaml)
{
	struct compiled c = compile_named("agent.yaml", yaml, strlen(yaml));

	cr_assert_not_null(c.p, "the policy does not compile:\n%s", c.diags);
	return c;
}

static void
compiled_free(struct compiled *c)
{
	arena_free(c->a);
	free(c->diags);
}

/* A built profile with its parameters, and the diagnostics of the build. */
struct built {
	struct arena *a;
	struct textbuf text;
	struct sbpl_params params;
	struct sbpl_param_value pv[SBPL_PARAM_COUNT + 8];
	size_t n_pv;
	int rc;
	char *diags;
};

static void
built_values(struct built *b)
{
	b->n_pv = 0;
	for (int k = 0; k < SBPL_PARAM_COUNT; k++)
		if (b->params.used[k])
			b->pv[b->n_pv++] = (struct sbpl_param_value){
			    sbpl_param_name((enum sbpl_param)k), b->params.value[k]};
}

static struct launch_request
std_request(void)
{
	return (struct launch_request){.target = LAUNCH_DARWIN,
				       .launch_dir = LAUNCH,
				       .home = HOME,
				       .scratch = SCRATCH,
				       .proxy_port = PORT,
				       .proxy_socket = SOCK,
				       .command_optional = true};
}

/*
 * The error a launch left in D as the user sees it: the located diagnostics
 * as diag_print() shows them, or the plain failure.
 */
static void
error_text(struct diag *d, char *buf, size_t len)
{
	FILE *f;

	if (d->failure) {
		snprintf(buf, len, "%s", d->failure);
		return;
	}
	f = fmemopen(buf, len, "w");
	cr_assert_not_null(f);
	diag_print(d, f, false);
	fclose(f);
}

/* Build P for REQ (resolved) with CTX_EDIT applied to the context. */
static struct built
build_resolved_with(const struct policy *p, const struct launch_request *req,
		    void (*ctx_edit)(struct sbpl_context *, void *), void *arg)
{
	struct built b = {0};
	struct launch_request q = *req;
	struct launch_plan facts;
	struct sbpl_context c;
	struct diag d;
	char err[2048] = "";
	size_t n;
	FILE *f;

	b.a = arena_new();
	diag_init(&d, b.a, "agent.yaml", NULL, 0);
	q.policy = p;
	b.rc = darwin_launch_context(b.a, &q, &facts, &c, &d);
	if (b.rc < 0 && d.failure)
		snprintf(err, sizeof(err), "%s", d.failure);
	if (b.rc == 0) {
		if (ctx_edit)
			ctx_edit(&c, arg);
		b.rc = sbpl_build(b.a, facts.policy, &c, &d, &b.text, &b.params);
	}
	f = open_memstream(&b.diags, &n);
	diag_print(&d, f, true);
	fputs(err, f);
	fclose(f);
	built_values(&b);
	return b;
}

static struct built
build_resolved(const struct policy *p)
{
	struct launch_request req = std_request();

	return build_resolved_with(p, &req, NULL, NULL);
}

/* The symbolic profile (--emit=sbpl), with the standard context's values for
 * its parameters so that it can be checked as sandbox-exec would read it. */
static struct built
build_symbolic(const struct policy *p)
{
	struct built b = {0};
	struct sbpl_context c;
	struct diag d;
	size_t n;
	FILE *f;
	static const char *const concrete[SBPL_PARAM_COUNT] = {
	    LAUNCH, HOME, SCRATCH, "/Users/dev/proj", "/Users/dev", SCRATCH, PORT, SOCK};

	b.a = arena_new();
	diag_init(&d, b.a, "agent.yaml", NULL, 0);
	sbpl_context_symbolic(&c);
	b.rc = sbpl_build(b.a, p, &c, &d, &b.text, &b.params);
	f = open_memstream(&b.diags, &n);
	diag_print(&d, f, true);
	fclose(f);
	for (int k = 0; k < SBPL_PARAM_COUNT; k++)
		b.params.value[k] = concrete[k];
	built_values(&b);
	/* A path that leaves its base has a parameter of its own: its value at
	 * launch is the canonical path. */
	for (size_t i = 0; i < b.params.n_extra && b.n_pv < SBPL_PARAM_COUNT + 8; i++) {
		const char *v = b.params.extra_value[i];
		bool re = has(b.params.extra_name[i], "_RE");
		struct textbuf t = {0};
		char *path;

		if (!strncmp(v, "{CWD}", 5))
			v = arena_printf(b.a, "%s%s", LAUNCH, v + 5);
		else if (!strncmp(v, "{HOME}", 6))
			v = arena_printf(b.a, "%s%s", HOME, v + 6);
		if (re)
			v = arena_strndup(b.a, v, strlen(v) - strlen(":regex"));
		path = paths_darwin_spelling(b.a, v);
		if (re) {
			sbpl_regex_escape(&t, path);
			path = arena_strdup(b.a, t.data);
			tb_free(&t);
		}
		b.pv[b.n_pv++] = (struct sbpl_param_value){b.params.extra_name[i], path};
	}
	return b;
}

static void
built_free(struct built *b)
{
	tb_free(&b->text);
	free(b->diags);
	arena_free(b->a);
}

static struct sbpl_profile *
load(const struct built *b)
{
	char err[512];
	struct sbpl_profile *prof;

	cr_assert_eq(b->rc, 0, "the profile was not built:\n%s", b->diags);
	prof = sbpl_profile_load(b->text.data, b->text.len, b->pv, b->n_pv, err, sizeof(err));
	cr_assert_not_null(prof, "the checker rejects the profile: %s\n%s", err, b->text.data);
	return prof;
}

/* Ask under both readings; they must agree. */
static bool
ask(const struct sbpl_profile *prof, const struct sbpl_query *q)
{
	bool last = sbpl_allowed(prof, q, SBPL_LAST_MATCH_WINS);
	bool deny = sbpl_allowed(prof, q, SBPL_DENY_WINS);

	cr_assert_eq(last, deny,
		     "the readings disagree on %s %s: last match wins says %s, deny wins says %s",
		     q->op,
		     q->path	 ? q->path
		     : q->remote ? q->remote
				 : "",
		     last ? "allow" : "deny", deny ? "allow" : "deny");
	return last;
}

static bool
ask_path(const struct sbpl_profile *prof, const char *op, const char *path, const char *vnode)
{
	struct sbpl_query q = {.op = op, .path = path, .vnode = vnode};

	return ask(prof, &q);
}

#define expect_allowed(prof, op, path)                                                             \
	cr_expect(ask_path(prof, op, path, NULL), "%s %s should be allowed", op, path)
#define expect_denied(prof, op, path)                                                              \
	cr_expect(!ask_path(prof, op, path, NULL), "%s %s should be denied", op, path)
#define expect_dir_allowed(prof, op, path)                                                         \
	cr_expect(ask_path(prof, op, path, "DIRECTORY"), "%s %s/ should be allowed", op, path)
#define expect_dir_denied(prof, op, path)                                                          \
	cr_expect(!ask_path(prof, op, path, "DIRECTORY"), "%s %s/ should be denied", op, path)

#define READ "file-read-data"
#define WRITE "file-write-data"
#define CREATE "file-write-create"
#define UNLINK "file-write-unlink"

/* Resolve YAML and load its profile: the common case of the behaviour tests. */
struct case_ {
	struct compiled c;
	struct built b;
	struct sbpl_profile *prof;
};

static struct case_
case_open(const char *yaml)
{
	struct case_ k;

	k.c = compile(yaml);
	k.b = build_resolved(k.c.p);
	k.prof = load(&k.b);
	return k;
}

static void
case_close(struct case_ *k)
{
	sbpl_profile_free(k->prof);
	built_free(&k->b);
	compiled_free(&k->c);
}

/* TEXT without its comment lines (malloc'd). */
static char *
rules_only(const char *text)
{
	char *out = malloc(strlen(text) + 1), *w = out;

	for (const char *p = text; *p;) {
		const char *end = strchr(p, '\n');
		size_t n = end ? (size_t)(end - p + 1) : strlen(p);

		if (*p != ';') {
			memcpy(w, p, n);
			w += n;
		}
		p += n;
	}
	*w = '\0';
	return out;
}

/* Does a rule (not a comment) hold one of the symbolic placeholders? */
static bool
placeholder_in_rules(const char *text)
{
	static const char *const ph[] = {"{CWD",  "{HOME",   "{SCRATCH", "{PORT",
					 "{SOCK", "{LAUNCH", NULL};
	char *r = rules_only(text);
	bool found = false;

	for (size_t i = 0; ph[i]; i++)
		found |= has(r, ph[i]);
	free(r);
	return found;
}

/* ---- every golden and example policy --------------------------------------------------- */

static void
check_order(const struct built *b, const char *what)
{
	char err[512];
	struct sbpl_profile *prof =
	    sbpl_profile_load(b->text.data, b->text.len, b->pv, b->n_pv, err, sizeof(err));
	unsigned first_deny, last_allow;

	cr_assert_not_null(prof, "%s: the checker rejects the profile: %s\n%s", what, err,
			   b->text.data);
	sbpl_profile_order(prof, &first_deny, &last_allow);
	cr_expect(!first_deny || first_deny > last_allow,
		  "%s: a deny (line %u) comes before an allow (line %u)", what, first_deny,
		  last_allow);
	sbpl_profile_free(prof);
}

/* Check the symbolic and the resolved profile of P; returns how many were checked. */
static int
check_policy(const struct policy *p, const char *what)
{
	struct diag d;
	struct arena *a = arena_new();
	struct built s, r;
	int n = 0;

	diag_init(&d, a, "agent.yaml", NULL, 0);
	/* A Linux-only setting (git_ssh, copy_on_write) has no darwin form, said so. */
	if (emit_check_target(p, TARGET_DARWIN, &d) < 0 || !sbpl_can_express(p)) {
		arena_free(a);
		return 0;
	}
	arena_free(a);
	s = build_symbolic(p);
	cr_assert_eq(s.rc, 0, "%s: no symbolic profile:\n%s", what, s.diags);
	{
		struct arena *ra = arena_new();
		struct loc loc;
		bool refused = refuse_launch(ra, p, SANDBOX_DARWIN_SEATBELT, "darwin", &loc);

		arena_free(ra);
		/* No launch (os_env.fork): the profile is checked as written only. */
		if (refused) {
			check_order(&s, what);
			built_free(&s);
			return 1;
		}
	}
	r = build_resolved(p);
	cr_assert_eq(r.rc, 0, "%s: no resolved profile:\n%s", what, r.diags);
	if (p->os_env.sandbox.type != SANDBOX_NONE) {
		check_order(&s, what);
		check_order(&r, what);
		cr_expect(!placeholder_in_rules(s.text.data) && !placeholder_in_rules(r.text.data),
			  "%s: a placeholder leaked into the profile", what);
		n = 2;
	} else {
		cr_expect(has(s.text.data, "there is no profile"), "%s: sandbox none", what);
	}
	built_free(&s);
	built_free(&r);
	return n;
}

static int
check_file(const char *path)
{
	struct textbuf src = {0};
	struct compiled c;
	int n;

	cr_assert_eq(file_read(path, &src, FILE_READ_MAX), 0, "cannot read %s", path);
	c = compile_named("agent.yaml", src.data ? src.data : "", src.len);
	tb_free(&src);
	if (!c.p) {
		compiled_free(&c);
		return -1;
	}
	n = check_policy(c.p, path);
	for (size_t i = 0; i < c.p->n_terminals; i++) {
		struct diag d;
		struct policy *t;

		diag_init(&d, c.a, "agent.yaml", NULL, 0);
		t = policy_select_terminal(c.a, &d, c.p, c.p->terminals[i].name);
		cr_assert_not_null(t);
		n += check_policy(t, arena_printf(c.a, "%s, terminal %s", path, t->terminal->name));
	}
	compiled_free(&c);
	return n;
}

Test(corpus, every_golden_and_example_policy_gives_valid_profiles_with_denies_last)
{
	int profiles = 0, policies = 0;
	struct dirent **names;
	int n = scandir("golden", &names, NULL, alphasort);

	cr_assert_gt(n, 0, "golden/ not found: run the tests from the top of the source tree");
	for (int i = 0; i < n; i++) {
		const char *name = names[i]->d_name;

		if (name[0] != '.' && name[0] != 'e') {
			char *path;
			int k;

			if (asprintf(&path, "golden/%s/agent.yaml", name) < 0)
				abort();
			if (access(path, R_OK) == 0) {
				k = check_file(path);
				cr_expect_geq(k, 0, "%s does not compile", path);
				profiles += k > 0 ? k : 0;
				policies++;
			}
			free(path);
		}
		free(names[i]);
	}
	free(names);
	n = scandir("examples", &names, NULL, alphasort);
	cr_assert_gt(n, 0, "examples/ not found");
	for (int i = 0; i < n; i++) {
		if (strstr(names[i]->d_name, ".yaml")) {
			char *path;

			if (asprintf(&path, "examples/%s", names[i]->d_name) < 0)
				abort();
			profiles += check_file(path);
			policies++;
			free(path);
		}
		free(names[i]);
	}
	free(names);
	cr_expect_geq(policies, 40, "only %d policies found", policies);
	cr_expect_geq(profiles, 70, "only %d profiles checked", profiles);
}

Test(corpus, a_pinned_linux_policy_has_no_darwin_profile)
{
	struct compiled c = compile("os_env:\n  sandbox:\n    type: linux_bwrap\n");
	struct arena *a = arena_new();
	struct diag d;

	diag_init(&d, a, "agent.yaml", NULL, 0);
	cr_expect_lt(emit_check_target(c.p, TARGET_DARWIN, &d), 0);
	arena_free(a);
	compiled_free(&c);
}

#define RICH                                                                                       \
	"os_env:\n"                                                                                \
	"  sandbox:\n"                                                                             \
	"    write_paths: [.]\n"                                                                   \
	"    read_paths: [~/.gitconfig, /opt/tools]\n"                                             \
	"    mask_paths: [config/production.key]\n"                                                \
	"    egress_rules: [\"GET example.com/**\"]\n"                                             \
	"    deny_unix_socket_paths: [/tmp/tmux-0/default]\n"                                      \
	"    cwd_hidden_scan_recursive: true\n"

/* ---- a second reader: TinyScheme --------------------------------------------------------- */

static const char *
tinyscheme_path(void)
{
	static const char *const where[] = {"/usr/bin/tinyscheme", "/usr/local/bin/tinyscheme",
					    NULL};

	for (size_t i = 0; where[i]; i++)
		if (access(where[i], X_OK) == 0)
			return where[i];
	return NULL;
}

/* What tests/darwin/sbpl_check.scm prints for B's profile (malloc'd). */
static char *
tinyscheme_listing(const struct built *b)
{
	char path[] = "/tmp/omnibox-sbpl-scm-XXXXXX", *cmd, *out = NULL;
	int fd = mkstemp(path);
	FILE *f;
	size_t n = 0, len = 0;
	char buf[4096];

	cr_assert_geq(fd, 0);
	f = fdopen(fd, "w");
	fputs("(define params (list", f);
	for (size_t i = 0; i < b->n_pv; i++) {
		struct textbuf check = {0};

		/* No control byte can reach the Scheme file. */
		cr_assert_eq(sbpl_put_string(&check, b->pv[i].value), 0);
		tb_free(&check);
		fprintf(f, " (cons \"%s\" ", b->pv[i].name);
		fputc('"', f);
		for (const char *p = b->pv[i].value; *p; p++) {
			if (*p == '"' || *p == '\\')
				fputc('\\', f);
			fputc(*p, f);
		}
		fputs("\")", f);
	}
	fputs("))\n(load \"tests/darwin/sbpl_check.scm\")\n", f);
	fwrite(b->text.data, 1, b->text.len, f);
	fclose(f);
	if (asprintf(&cmd, "%s %s 2>&1", tinyscheme_path(), path) < 0)
		abort();
	f = popen(cmd, "r");
	cr_assert_not_null(f);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0) {
		out = realloc(out, len + n + 1);
		memcpy(out + len, buf, n);
		len += n;
	}
	pclose(f);
	if (!out)
		out = calloc(1, 1);
	out[len] = '\0';
	unlink(path);
	free(cmd);
	return out;
}

static void
cross_read(const struct built *b, const char *what)
{
	char err[512];
	struct sbpl_profile *prof =
	    sbpl_profile_load(b->text.data, b->text.len, b->pv, b->n_pv, err, sizeof(err));
	char *c_list, *scm_list;

	cr_assert_not_null(prof, "%s: %s", what, err);
	c_list = sbpl_profile_listing(prof);
	scm_list = tinyscheme_listing(b);
	if (strcmp(scm_list, c_list)) {
		size_t at = 0, line = 1;

		while (scm_list[at] && scm_list[at] == c_list[at])
			line += scm_list[at++] == '\n';
		while (at && scm_list[at - 1] != '\n')
			at--;
		cr_expect_fail("%s: TinyScheme reads the profile differently, from listing line "
			       "%zu:\n  tinyscheme: %.*s\n  C reader:   %.*s",
			       what, line, (int)strcspn(scm_list + at, "\n"), scm_list + at,
			       (int)strcspn(c_list + at, "\n"), c_list + at);
	}
	free(c_list);
	free(scm_list);
	sbpl_profile_free(prof);
}

Test(tinyscheme, a_real_scheme_reader_reads_every_profile_as_the_checker_does)
{
	static const char *const policies[] = {
	    RICH,
	    ("os_env:\n  sandbox:\n    read_paths: [\"~/we\\\"ird \\\\ (1)+[x]\", ../up]\n"
	     "    cwd_allow_hidden: [.venv, \".a+b\"]\n"),
	    "os_env:\n  type: caller_process\nterminals:\n  sh:\n    command: bash\n",
	};
	struct dirent **names;
	int n, checked = 0;

	if (!tinyscheme_path())
		cr_skip_test("tinyscheme is not installed (Debian package tinyscheme)");
	for (size_t i = 0; i < sizeof(policies) / sizeof(policies[0]); i++) {
		struct compiled c = compile(policies[i]);
		struct built r = build_resolved(c.p), s = build_symbolic(c.p);

		cross_read(&r, policies[i]);
		cross_read(&s, policies[i]);
		checked += 2;
		built_free(&r);
		built_free(&s);
		compiled_free(&c);
	}
	n = scandir("golden", &names, NULL, alphasort);
	cr_assert_gt(n, 0);
	for (int i = 0; i < n; i++) {
		char *path;
		struct textbuf src = {0};

		if (names[i]->d_name[0] == 'e' || names[i]->d_name[0] == '.' ||
		    asprintf(&path, "golden/%s/agent.yaml", names[i]->d_name) < 0) {
			free(names[i]);
			continue;
		}
		if (file_read(path, &src, FILE_READ_MAX) == 0) {
			struct compiled c = compile_named("agent.yaml", src.data, src.len);
			struct arena *a = arena_new();
			struct diag d;

			diag_init(&d, a, "agent.yaml", NULL, 0);
			struct loc loc;

			if (c.p && c.p->os_env.sandbox.type != SANDBOX_NONE &&
			    !refuse_launch(a, c.p, SANDBOX_DARWIN_SEATBELT, "darwin", &loc) &&
			    sbpl_can_express(c.p)) {
				struct built r = build_resolved(c.p);

				cross_read(&r, path);
				checked++;
				built_free(&r);
			}
			arena_free(a);
			compiled_free(&c);
		}
		tb_free(&src);
		free(path);
		free(names[i]);
	}
	free(names);
	cr_expect_geq(checked, 30, "only %d profiles read twice", checked);
}

/* ---- the checker rejects what sandbox-exec would ------------------------------------------ */

/* The resolved RICH profile with FROM replaced by TO (first occurrence) must be rejected
 * with a message holding WHY. */
static void
expect_mutant_rejected(const char *from, const char *to, const char *why)
{
	struct compiled c = compile(RICH);
	struct built b = build_resolved(c.p);
	char err[512], *at, *m;
	struct textbuf t = {0};

	cr_assert_eq(sbpl_check(b.text.data, b.text.len, b.pv, b.n_pv, err, sizeof(err)), 0,
		     "the original is rejected: %s", err);
	at = strstr(b.text.data, from);
	cr_assert_not_null(at, "'%s' is not in the profile", from);
	tb_write(&t, b.text.data, (size_t)(at - b.text.data));
	tb_puts(&t, to);
	tb_puts(&t, at + strlen(from));
	m = t.data;
	cr_expect_neq(sbpl_check(m, t.len, b.pv, b.n_pv, err, sizeof(err)), 0,
		      "the mutant (%s -> %s) was accepted", from, to);
	cr_expect(has(err, why), "mutant %s -> %s: expected '%s' in: %s", from, to, why, err);
	tb_free(&t);
	built_free(&b);
	compiled_free(&c);
}

Test(checker, rejects_a_typo_in_an_operation)
{
	expect_mutant_rejected("(allow file-read* (subpath \"/dev\"))",
			       "(allow file-raed* (subpath \"/dev\"))",
			       "unknown operation 'file-raed*'");
	expect_mutant_rejected("(allow process-fork)", "(allow process-frok)", "unknown operation");
}

Test(checker, rejects_unbalanced_parentheses)
{
	expect_mutant_rejected("(allow process-fork)", "(allow process-fork", "never closed");
	expect_mutant_rejected("(allow process-fork)", "(allow process-fork))", "closes nothing");
}

Test(checker, rejects_a_relative_path)
{
	expect_mutant_rejected("(subpath \"/usr\")", "(subpath \"usr\")",
			       "not an absolute, canonical path");
	expect_mutant_rejected("(literal \"/dev/null\")", "(literal \"/dev/../dev/null\")",
			       "not an absolute, canonical path");
	expect_mutant_rejected("(regex \"^/opt/tools/.\")", "(regex \"opt/tools/.\")",
			       "not anchored");
}

Test(checker, rejects_a_remote_address_other_than_localhost)
{
	expect_mutant_rejected("(remote ip (string-append \"localhost:\"",
			       "(remote ip (string-append \"10.0.0.1:\"",
			       "only localhost or * with a port");
	expect_mutant_rejected("(local ip (string-append \"localhost:\"",
			       "(local ip (string-append \"example.com:\"",
			       "only localhost or * with a port");
}

Test(checker, rejects_filters_that_do_not_fit_the_operation)
{
	expect_mutant_rejected("(allow network-bind (local ip", "(allow file-write* (local ip",
			       "not a network one");
	expect_mutant_rejected("(allow file-read* (subpath \"/dev\"))",
			       "(allow network-outbound (subpath \"/dev\"))", "not a file one");
	expect_mutant_rejected("(allow process-fork)", "(allow process-fork (literal \"/x\"))",
			       "takes no filter");
	expect_mutant_rejected("(vnode-type DIRECTORY)", "(vnode-type FOLDER)", "vnode-type");
	expect_mutant_rejected("(require-not (regex", "(require-none (regex", "unknown filter");
}

Test(checker, rejects_a_missing_parameter_and_a_bad_port)
{
	struct compiled c = compile(RICH);
	struct built b = build_resolved(c.p);
	char err[512];
	size_t port = SIZE_MAX;

	for (size_t i = 0; i < b.n_pv; i++)
		if (!strcmp(b.pv[i].name, "PORT"))
			port = i;
	cr_assert_neq(port, SIZE_MAX);
	b.pv[port].value = "70000";
	cr_expect_neq(sbpl_check(b.text.data, b.text.len, b.pv, b.n_pv, err, sizeof(err)), 0);
	cr_expect(has(err, "localhost:70000"), "%s", err);
	b.pv[port].value = "0";
	cr_expect_neq(sbpl_check(b.text.data, b.text.len, b.pv, b.n_pv, err, sizeof(err)), 0);
	b.pv[port] = b.pv[--b.n_pv];
	cr_expect_neq(sbpl_check(b.text.data, b.text.len, b.pv, b.n_pv, err, sizeof(err)), 0);
	cr_expect(has(err, "parameter 'PORT' is not defined"), "%s", err);
	built_free(&b);
	compiled_free(&c);
}

Test(checker, the_two_readings_differ_when_an_allow_follows_a_deny)
{
	const char *text = "(version 1)\n(deny default)\n(deny file-read* (subpath \"/a\"))\n"
			   "(allow file-read* (literal \"/a/b\"))\n";
	char err[256];
	struct sbpl_profile *p = sbpl_profile_load(text, strlen(text), NULL, 0, err, sizeof(err));
	struct sbpl_query q = {.op = "file-read-data", .path = "/a/b"};
	struct sbpl_query other = {.op = "file-read-data", .path = "/a/c"};
	unsigned first_deny, last_allow;

	cr_assert_not_null(p, "%s", err);
	cr_expect(sbpl_allowed(p, &q, SBPL_LAST_MATCH_WINS));
	cr_expect(!sbpl_allowed(p, &q, SBPL_DENY_WINS));
	cr_expect(!sbpl_allowed(p, &other, SBPL_LAST_MATCH_WINS));
	cr_expect(!sbpl_allowed(p, &other, SBPL_DENY_WINS));
	sbpl_profile_order(p, &first_deny, &last_allow);
	cr_expect_lt(first_deny, last_allow, "the order check misses an allow after a deny");
	sbpl_profile_free(p);
}

Test(checker, rejects_a_profile_without_deny_default_or_version)
{
	char err[256];
	const char *no_default = "(version 1)\n(allow process-fork)\n";
	const char *allow_default = "(version 1)\n(allow default)\n";
	const char *no_version = "(deny default)\n";
	const char *ok = "(version 1)\n(deny default)\n(allow file-read* (subpath \"/usr\"))\n";

	cr_expect_neq(sbpl_check(no_default, strlen(no_default), NULL, 0, err, sizeof(err)), 0);
	cr_expect(has(err, "before (deny default)"), "%s", err);
	cr_expect_neq(sbpl_check(allow_default, strlen(allow_default), NULL, 0, err, sizeof(err)),
		      0);
	cr_expect_neq(sbpl_check(no_version, strlen(no_version), NULL, 0, err, sizeof(err)), 0);
	cr_expect_eq(sbpl_check(ok, strlen(ok), NULL, 0, err, sizeof(err)), 0, "%s", err);
}

/* ---- the spec's queries ("Checking profiles without a Mac") -------------------------------- */

Test(spec, default_policy_hides_ssh_keys_reads_but_does_not_write_the_workspace)
{
	struct case_ k = case_open("os_env:\n  type: caller_process\n");

	expect_denied(k.prof, READ, HOME "/.ssh/id_rsa");
	expect_allowed(k.prof, READ, LAUNCH "/src/main.c");
	expect_denied(k.prof, WRITE, LAUNCH "/src/main.c");
	expect_denied(k.prof, CREATE, LAUNCH "/new.txt");
	expect_allowed(k.prof, WRITE, SCRATCH "/out.txt");
	expect_allowed(k.prof, CREATE, SCRATCH "/sub/new.txt");
	case_close(&k);
}

Test(spec, write_paths_dot_makes_the_workspace_writable_but_not_its_env_file)
{
	struct case_ k = case_open("os_env:\n  sandbox:\n    write_paths: [.]\n");

	expect_allowed(k.prof, WRITE, LAUNCH "/src/main.c");
	expect_allowed(k.prof, CREATE, LAUNCH "/new.txt");
	expect_denied(k.prof, READ, LAUNCH "/.env");
	expect_denied(k.prof, WRITE, LAUNCH "/.env");
	expect_denied(k.prof, CREATE, LAUNCH "/.env");
	case_close(&k);
}

Test(spec, reading_home_still_denies_library_but_a_library_grant_opts_in)
{
	struct case_ k = case_open("os_env:\n  sandbox:\n    read_paths: [~/]\n");
	struct case_ logs = case_open("os_env:\n  sandbox:\n    read_paths: [~/Library/Logs]\n");
	struct case_ both =
	    case_open("os_env:\n  sandbox:\n    read_paths: [~/, ~/Library/Logs]\n");
	struct case_ lib = case_open("os_env:\n  sandbox:\n    read_paths: [~/Library]\n");

	expect_denied(k.prof, READ, HOME "/Library/Cookies/x");
	expect_allowed(k.prof, READ, HOME "/code/x");
	expect_allowed(logs.prof, READ, HOME "/Library/Logs/x");
	expect_denied(logs.prof, READ, HOME "/Library/Cookies/x");
	expect_allowed(both.prof, READ, HOME "/Library/Logs/x");
	expect_denied(both.prof, READ, HOME "/Library/Cookies/x");
	expect_denied(both.prof, READ, HOME "/Library/LogsX/x");
	expect_allowed(lib.prof, READ, HOME "/Library/Cookies/x");
	cr_expect(has(lib.b.text.data, "; ~/Library is readable: read_paths (line 3) names it"),
		  "~/Library named: no deny expected");
	case_close(&k);
	case_close(&logs);
	case_close(&both);
	case_close(&lib);
}

static const char *const network_ops[] = {"network-outbound", "network-bind", "network-inbound",
					  NULL};

Test(spec, no_network_operation_is_allowed_when_the_network_is_off)
{
	struct case_ k = case_open("os_env:\n  sandbox:\n    allow_network: false\n");
	const char *addrs[] = {"localhost:443", "127.0.0.1:8080", "10.0.0.1:443", "*:53", NULL};

	for (size_t i = 0; network_ops[i]; i++)
		for (size_t j = 0; addrs[j]; j++) {
			struct sbpl_query q = {
			    .op = network_ops[i], .remote = addrs[j], .local = addrs[j]};

			cr_expect(!ask(k.prof, &q), "%s %s allowed", network_ops[i], addrs[j]);
		}
	{
		struct sbpl_query q = {.op = "network-outbound",
				       .unix_socket = "/private/var/run/x"};

		cr_expect(!ask(k.prof, &q));
	}
	cr_expect(has(k.b.text.data, "allow_network: false (line 3)"));
	case_close(&k);
}

Test(spec, egress_allows_exactly_the_relay_port_and_the_proxy_socket)
{
	struct case_ k = case_open(RICH);
	size_t network_rules = 0;
	struct sbpl_query ok[] = {
	    {.op = "network-outbound", .remote = "localhost:" PORT},
	    {.op = "network-outbound", .remote = "127.0.0.1:" PORT},
	    {.op = "network-bind", .local = "localhost:" PORT},
	    {.op = "network-inbound", .local = "localhost:" PORT},
	    {.op = "network-outbound", .unix_socket = SOCK},
	};
	struct sbpl_query no[] = {
	    {.op = "network-outbound", .remote = "localhost:43211"},
	    {.op = "network-outbound", .remote = "93.184.216.34:443"},
	    {.op = "network-outbound", .remote = "93.184.216.34:" PORT},
	    {.op = "network-bind", .local = "localhost:8080"},
	    {.op = "network-inbound", .local = "localhost:22"},
	    {.op = "network-outbound", .unix_socket = "/private/var/run/docker.sock"},
	    {.op = "network-outbound", .unix_socket = "/private/tmp/tmux-0/default"},
	};

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		cr_expect(ask(k.prof, &ok[i]), "query %zu should be allowed", i);
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		cr_expect(!ask(k.prof, &no[i]), "query %zu should be denied", i);
	for (size_t i = 0; i < k.prof->n_rules; i++)
		for (size_t j = 0; j < k.prof->rules[i].n_ops; j++)
			if (!strncmp(k.prof->rules[i].ops[j], "network", 7) &&
			    k.prof->rules[i].allow)
				network_rules++;
	cr_expect_eq(network_rules, 4, "%zu network allows, not four", network_rules);
	case_close(&k);
}

/* ---- the Linux acceptance behaviours that make sense on macOS -------------------------------- */

Test(acceptance, dotfiles_at_the_top_are_hidden_except_the_allowed_ones)
{
	struct case_ k = case_open("os_env:\n  sandbox:\n    write_paths: [.]\n");

	expect_denied(k.prof, READ, LAUNCH "/.aws/credentials");
	expect_dir_denied(k.prof, READ, LAUNCH "/.aws");
	expect_allowed(k.prof, READ, LAUNCH "/.venv/bin/python");
	expect_denied(k.prof, READ, LAUNCH "/.venvX/x");
	expect_denied(k.prof, READ, LAUNCH "/..hidden");
	expect_allowed(k.prof, READ, LAUNCH "/services/api/.env"); /* not recursive */
	expect_allowed(k.prof, READ, LAUNCH "/a.b/.c");
	expect_dir_allowed(k.prof, READ, LAUNCH);
	case_close(&k);
}

Test(acceptance, recursive_masking_hides_nested_dotfiles_too)
{
	struct case_ k = case_open("os_env:\n  sandbox:\n    write_paths: [.]\n"
				   "    cwd_hidden_scan_recursive: true\n"
				   "    cwd_allow_hidden: [.venv, .git]\n");

	expect_denied(k.prof, READ, LAUNCH "/services/api/.env");
	expect_denied(k.prof, READ, LAUNCH "/a/b/c/.ssh/id_rsa");
	expect_allowed(k.prof, READ, LAUNCH "/services/api/main.go");
	expect_allowed(k.prof, READ, LAUNCH "/.git/config");
	expect_allowed(k.prof, READ, LAUNCH "/lib/.git/HEAD");
	expect_denied(k.prof, READ, LAUNCH "/.venv/lib/.secret");
	expect_denied(k.prof, READ, LAUNCH "/.gitx");
	case_close(&k);
}

Test(acceptance, empty_allow_list_hides_every_dotfile)
{
	struct case_ k = case_open("os_env:\n  sandbox:\n    cwd_allow_hidden: []\n");

	expect_denied(k.prof, READ, LAUNCH "/.venv/bin/python");
	expect_allowed(k.prof, READ, LAUNCH "/venv/bin/python");
	case_close(&k);
}

Test(acceptance, a_read_paths_root_has_its_own_dotfiles_masked)
{
	struct case_ k = case_open("os_env:\n  sandbox:\n    read_paths: [~/code]\n");
	struct case_ allow = case_open("os_env:\n  sandbox:\n    read_paths: [~/code]\n"
				       "    cwd_allow_hidden: [.ssh]\n");

	expect_denied(k.prof, READ, HOME "/code/.ssh/id_rsa");
	expect_denied(k.prof, READ, HOME "/code/.aws/credentials");
	expect_allowed(k.prof, READ, HOME "/code/other/README");
	expect_denied(k.prof, READ, HOME "/.ssh/id_rsa"); /* not granted at all */
	expect_denied(k.prof, WRITE, HOME "/code/other/README");
	expect_allowed(allow.prof, READ, HOME "/code/.ssh/config");
	expect_denied(allow.prof, READ, HOME "/code/.aws/credentials");
	case_close(&k);
	case_close(&allow);
}

Test(acceptance, a_grant_naming_a_dotfile_opts_in_for_exactly_that_path)
{
	struct case_ k = case_open("os_env:\n  sandbox:\n    read_paths: [~/, ~/.gitconfig, "
				   ".env.example, .config/gh/hosts.yml]\n");

	expect_allowed(k.prof, READ, HOME "/.gitconfig");
	expect_denied(k.prof, READ, HOME "/.gitconfig.bak");
	expect_denied(k.prof, READ, HOME "/.ssh/id_rsa");
	expect_allowed(k.prof, READ, LAUNCH "/.env.example");
	expect_denied(k.prof, READ, LAUNCH "/.env");
	expect_allowed(k.prof, READ, LAUNCH "/.config/gh/hosts.yml");
	expect_denied(k.prof, READ, LAUNCH "/.config/gh/other.yml");
	case_close(&k);
}

Test(acceptance, mask_paths_hide_a_file_and_a_directory_even_before_they_exist)
{
	struct case_ k =
	    case_open("os_env:\n  sandbox:\n    write_paths: [.]\n"
		      "    mask_paths: [config/production.key, secrets/, ~/.config/gcloud]\n");

	expect_denied(k.prof, READ, LAUNCH "/config/production.key");
	expect_denied(k.prof, WRITE, LAUNCH "/config/production.key");
	expect_denied(k.prof, CREATE, LAUNCH "/config/production.key");
	expect_allowed(k.prof, READ, LAUNCH "/config/development.key");
	expect_denied(k.prof, READ, LAUNCH "/secrets/db.txt");
	expect_dir_denied(k.prof, CREATE, LAUNCH "/secrets");
	expect_denied(k.prof, CREATE, LAUNCH "/secrets/new");
	expect_denied(k.prof, READ, HOME "/.config/gcloud/credentials.db");
	/* and the directory above a mask cannot be renamed away */
	expect_dir_denied(k.prof, UNLINK, LAUNCH "/config");
	expect_dir_allowed(k.prof, UNLINK, LAUNCH "/docs");
	case_close(&k);
}

Test(acceptance, the_workspace_and_each_root_cannot_be_renamed_away)
{
	struct case_ k = case_open("os_env:\n  sandbox:\n    write_paths: [., ~/code]\n"
				   "    read_paths: [~/code/lib]\n");
	struct case_ rec = case_open("os_env:\n  sandbox:\n    write_paths: [.]\n"
				     "    cwd_hidden_scan_recursive: true\n");

	expect_dir_denied(k.prof, UNLINK, LAUNCH);
	expect_dir_denied(k.prof, UNLINK, HOME "/code/lib");
	expect_dir_allowed(k.prof, UNLINK, HOME "/code/app");
	expect_dir_allowed(k.prof, UNLINK, LAUNCH "/build");
	expect_allowed(k.prof, UNLINK, LAUNCH "/build/a.o");
	/* every depth masked: no directory below the root may move */
	expect_dir_denied(rec.prof, UNLINK, LAUNCH "/services/api");
	expect_allowed(rec.prof, UNLINK, LAUNCH "/services/api/main.o");
	case_close(&k);
	case_close(&rec);
}

Test(acceptance, directories_between_a_writable_grant_and_a_root_cannot_be_renamed)
{
	struct case_ k = case_open("os_env:\n  sandbox:\n    write_paths: [~/]\n"
				   "    read_paths: [~/work/data/set]\n");

	expect_dir_denied(k.prof, UNLINK, HOME "/work");
	expect_dir_denied(k.prof, UNLINK, HOME "/work/data");
	expect_dir_denied(k.prof, UNLINK, HOME "/work/data/set");
	expect_dir_allowed(k.prof, UNLINK, HOME "/other");
	/* the workspace lies below the writable home: the path to it is protected too */
	expect_dir_denied(k.prof, UNLINK, HOME "/proj");
	case_close(&k);
}

Test(acceptance, a_denied_unix_socket_is_out_of_reach_even_with_the_network_on)
{
	struct case_ k = case_open("os_env:\n  sandbox:\n    read_paths: [/tmp/tmux-0]\n"
				   "    deny_unix_socket_paths: [/tmp/tmux-0/default, "
				   "/var/run/docker.sock]\n");
	struct sbpl_query tmux = {.op = "network-outbound",
				  .unix_socket = "/private/tmp/tmux-0/default"};
	struct sbpl_query docker = {.op = "network-outbound",
				    .unix_socket = "/private/var/run/docker.sock"};
	struct sbpl_query other = {.op = "network-outbound", .unix_socket = "/private/tmp/x.sock"};
	struct sbpl_query tcp = {.op = "network-outbound", .remote = "93.184.216.34:443"};

	cr_expect(!ask(k.prof, &tmux));
	cr_expect(!ask(k.prof, &docker));
	cr_expect(ask(k.prof, &other));
	cr_expect(ask(k.prof, &tcp));
	cr_expect(has(k.b.text.data, "(deny network-outbound (remote unix-socket (path-literal "
				     "\"/private/tmp/tmux-0/default\")))"));
	case_close(&k);
}

Test(acceptance, system_roots_are_read_only_and_other_users_invisible)
{
	struct case_ k = case_open("os_env:\n  type: caller_process\n");
	struct sbpl_query self = {.op = "signal", .target_self = true};
	struct sbpl_query other = {.op = "signal", .target_self = false};
	struct sbpl_query hostport = {.op = "mach-priv-host-port"};
	struct sbpl_query iokit = {.op = "iokit-open"};

	expect_allowed(k.prof, READ, "/usr/bin/git");
	expect_denied(k.prof, WRITE, "/usr/bin/git");
	expect_allowed(k.prof, READ, "/private/etc/hosts");
	expect_allowed(k.prof, "file-read-data", "/etc");
	expect_denied(k.prof, READ, "/Users/other/secret");
	expect_denied(k.prof, READ, "/private/var/root/x");
	expect_allowed(k.prof, "file-read-metadata", "/Users/other/secret");
	expect_allowed(k.prof, WRITE, "/dev/null");
	expect_denied(k.prof, WRITE, "/dev/disk0");
	expect_denied(k.prof, WRITE, "/dev/ttys003");
	cr_expect(ask(k.prof, &self));
	cr_expect(!ask(k.prof, &other));
	cr_expect(!ask(k.prof, &hostport));
	cr_expect(!ask(k.prof, &iokit));
	case_close(&k);
}

Test(acceptance, a_terminal_gets_a_pseudo_terminal)
{
	struct compiled c = compile("os_env:\n  type: caller_process\nterminals:\n  sh:\n"
				    "    command: bash\n");
	struct arena *a = arena_new();
	struct diag d;
	struct policy *t;
	struct built b;
	struct sbpl_profile *prof;

	diag_init(&d, a, "agent.yaml", NULL, 0);
	t = policy_select_terminal(a, &d, c.p, "sh");
	cr_assert_not_null(t);
	b = build_resolved(t);
	prof = load(&b);
	expect_allowed(prof, WRITE, "/dev/ttys003");
	expect_allowed(prof, WRITE, "/dev/ptmx");
	expect_denied(prof, WRITE, "/dev/ttys003x");
	cr_expect(has(b.text.data, "terminal sh (line 4)"));
	sbpl_profile_free(prof);
	built_free(&b);
	arena_free(a);
	compiled_free(&c);
}

Test(acceptance, write_files_are_single_writable_files)
{
	struct case_ k = case_open("os_env:\n  sandbox:\n    write_files: [~/.claude.json]\n");

	expect_allowed(k.prof, WRITE, HOME "/.claude.json");
	expect_allowed(k.prof, READ, HOME "/.claude.json");
	expect_denied(k.prof, WRITE, HOME "/.claude.json.tmp");
	expect_denied(k.prof, READ, HOME "/.claude/x");
	case_close(&k);
}

Test(acceptance, a_workspace_inside_library_stays_usable)
{
	struct compiled c = compile("os_env:\n  sandbox:\n    write_paths: [.]\n");
	struct launch_request req = std_request();
	struct built b;
	struct sbpl_profile *prof;

	req.launch_dir = HOME "/Library/Mobile Documents/proj";
	b = build_resolved_with(c.p, &req, NULL, NULL);
	prof = load(&b);
	expect_allowed(prof, WRITE, HOME "/Library/Mobile Documents/proj/a.txt");
	expect_denied(prof, READ, HOME "/Library/Cookies/x");
	expect_denied(prof, READ, HOME "/Library/Mobile Documents/proj/.env");
	sbpl_profile_free(prof);
	built_free(&b);
	compiled_free(&c);
}

Test(acceptance, tmp_var_and_etc_grants_use_the_canonical_macos_spelling)
{
	struct case_ k =
	    case_open("os_env:\n  sandbox:\n    write_paths: [/tmp/cache, /var/tmp/x]\n"
		      "    read_paths: [/etc/ssl]\n");

	expect_allowed(k.prof, WRITE, "/private/tmp/cache/a");
	expect_allowed(k.prof, WRITE, "/private/var/tmp/x/a");
	expect_allowed(k.prof, READ, "/private/etc/ssl/cert.pem");
	cr_expect(!has(k.b.text.data, "\"/tmp/cache"));
	case_close(&k);
}

/* ---- the regex form equals the per-file form ---------------------------------------------------
 */

/* A workspace tree with dotfiles at several depths (dirs end in '/'). */
static const char *const tree[] = {
    ".env",
    ".envrc",
    ".aws/",
    ".aws/credentials",
    ".venv/",
    ".venv/bin/",
    ".venv/bin/python",
    ".venv/.gitignore",
    ".git/",
    ".git/config",
    ".gitignore",
    "src/",
    "src/main.c",
    "src/.env",
    "src/lib/",
    "src/lib/.secret/",
    "src/lib/.secret/key",
    "src/lib/x.c",
    "services/",
    "services/api/",
    "services/api/.env",
    "services/api/app.py",
    "README.md",
    "a.b/",
    "a.b/.c",
    "..weird",
    ".venvX",
    "docs/",
    "docs/.venv/",
    "docs/.venv/x",
    NULL,
};

/* The real dotfile scan of omnibox-run on Linux (runtime/scan.h), over TREE made
 * on disk under ROOT: the per-file form of the same policy. */
static size_t
scan_tree(const char *root, const char *const *allow, size_t n_allow, bool recursive,
	  struct sbpl_hidden *out)
{
	struct scan_options o = {
	    .allow = allow, .n_allow = n_allow, .recursive = recursive, .overflow = SCAN_UNLIMITED};
	struct scan_result res = {0};
	char err[256];
	size_t n = 0;

	for (size_t i = 0; tree[i]; i++) {
		char *path;

		if (asprintf(&path, "%s/%s", root, tree[i]) < 0)
			abort();
		if (path[strlen(path) - 1] == '/') {
			path[strlen(path) - 1] = '\0';
			cr_assert(mkdir(path, 0755) == 0 || errno == EEXIST, "mkdir %s", path);
		} else {
			int fd = open(path, O_CREAT | O_WRONLY, 0644);

			cr_assert_geq(fd, 0, "create %s", path);
			close(fd);
		}
		free(path);
	}
	cr_assert_eq(scan_run(&root, 1, &o, &res, err, sizeof(err)), 0, "%s", err);
	for (size_t i = 0; i < res.n_hits && n < 64; i++, n++) {
		out[n].path = strdup(res.hits[i].path);
		out[n].is_dir = res.hits[i].kind == SCAN_DIR;
	}
	scan_result_free(&res);
	return n;
}

struct enum_arg {
	const struct sbpl_hidden *h;
	size_t n;
};

static void
enumerate_ctx(struct sbpl_context *c, void *arg)
{
	struct enum_arg *e = arg;

	c->enumerate_hidden = true;
	c->hidden = e->h;
	c->n_hidden = e->n;
}

static void
compare_forms(const char *yaml, const char *const *allow, size_t n_allow, bool recursive)
{
	struct compiled c = compile(yaml);
	struct sbpl_hidden hits[64];
	char root[] = "/dev/shm/omnibox-sbpl-forms-XXXXXX";
	struct launch_request req = std_request();
	struct built rx, en;
	struct sbpl_profile *prx, *pen;
	struct enum_arg e;
	size_t n, hidden = 0;

	/* Not under /tmp: its macOS spelling would not be the scanned path. */
	cr_assert_not_null(mkdtemp(root));
	n = scan_tree(root, allow, n_allow, recursive, hits);
	e = (struct enum_arg){hits, n};
	req.launch_dir = root;
	rx = build_resolved_with(c.p, &req, NULL, NULL);
	en = build_resolved_with(c.p, &req, enumerate_ctx, &e);
	prx = load(&rx);
	pen = load(&en);
	cr_assert_gt(n, 0);
	for (size_t i = 0; tree[i]; i++) {
		char path[256];
		bool a, b;

		snprintf(path, sizeof(path), "%s/%s", root, tree[i]);
		if (path[strlen(path) - 1] == '/')
			path[strlen(path) - 1] = '\0';
		a = ask_path(prx, READ, path, NULL);
		b = ask_path(pen, READ, path, NULL);
		cr_expect_eq(a, b, "%s: the regex form says %s, the scan and per-file form %s",
			     path, a ? "visible" : "hidden", b ? "visible" : "hidden");
		hidden += !a;
	}
	cr_expect_geq(hidden, n, "fewer hidden paths than hits");
	for (size_t i = 0; i < n; i++)
		free((char *)hits[i].path);
	sbpl_profile_free(prx);
	sbpl_profile_free(pen);
	built_free(&rx);
	built_free(&en);
	compiled_free(&c);
	rmtree(root);
}

Test(forms, the_regex_form_hides_what_a_top_level_scan_would)
{
	static const char *const allow[] = {".venv"};

	compare_forms("os_env:\n  type: caller_process\n", allow, 1, false);
}

Test(forms, the_regex_form_hides_what_a_recursive_scan_would)
{
	static const char *const allow[] = {".venv", ".git"};

	compare_forms("os_env:\n  sandbox:\n    cwd_hidden_scan_recursive: true\n"
		      "    cwd_allow_hidden: [.venv, .git]\n",
		      allow, 2, true);
}

Test(forms, the_regex_form_with_no_exceptions_hides_what_the_scan_would)
{
	compare_forms("os_env:\n  sandbox:\n    cwd_hidden_scan_recursive: true\n"
		      "    cwd_allow_hidden: []\n",
		      NULL, 0, true);
}

/* ---- strings, escaping, limits --------------------------------------------------------------- */

Test(strings, quotes_and_backslashes_are_escaped_and_control_bytes_refused)
{
	struct textbuf t = {0};
	const char *bad[] = {"a\nb", "a\tb", "\x01", "x\x1f", "del\x7f", NULL};

	cr_expect_eq(sbpl_put_string(&t, "/a\"b\\c"), 0);
	cr_expect_str_eq(t.data, "\"/a\\\"b\\\\c\"");
	for (size_t i = 0; bad[i]; i++) {
		size_t before = t.len;

		cr_expect_eq(sbpl_put_string(&t, bad[i]), -1, "byte string %zu accepted", i);
		cr_expect_eq(t.len, before);
	}
	tb_reset(&t);
	sbpl_regex_escape(&t, "/a.b+c(d)[e]{f}*g?h|i^j$k\\l");
	cr_expect_str_eq(t.data, "/a\\.b\\+c\\(d\\)\\[e\\]\\{f\\}\\*g\\?h\\|i\\^j\\$k\\\\l");
	tb_free(&t);
}

Test(strings, a_workspace_path_with_quotes_and_regex_characters_still_means_the_same)
{
	struct compiled c = compile("os_env:\n  sandbox:\n    write_paths: [.]\n"
				    "    read_paths: [\"~/we\\\"ird (1)+[x]\"]\n");
	struct launch_request req = std_request();
	struct built b;
	struct sbpl_profile *prof;

	req.launch_dir = "/Users/dev/my \"proj\" (v1.2)+[x]";
	b = build_resolved_with(c.p, &req, NULL, NULL);
	prof = load(&b);
	expect_allowed(prof, WRITE, "/Users/dev/my \"proj\" (v1.2)+[x]/src/a");
	expect_denied(prof, READ, "/Users/dev/my \"proj\" (v1.2)+[x]/.env");
	expect_denied(prof, READ, "/Users/dev/my \"proj\" (v1X2)+[x]/.env");
	expect_allowed(prof, READ, "/Users/dev/we\"ird (1)+[x]/a");
	expect_denied(prof, READ, "/Users/dev/we\"ird (1)+[x]/.ssh/k");
	sbpl_profile_free(prof);
	built_free(&b);
	compiled_free(&c);
}

Test(strings, a_dot_in_a_root_matches_only_a_dot)
{
	struct case_ k = case_open("os_env:\n  sandbox:\n    read_paths: [~/, ~/a.b]\n");

	expect_denied(k.prof, READ, HOME "/a.b/.env");
	expect_allowed(k.prof, READ, HOME "/aXb/.env");
	expect_allowed(k.prof, READ, HOME "/a.b/x/.env");
	case_close(&k);
}

Test(strings, a_control_byte_in_a_resolved_path_is_refused)
{
	struct compiled c = compile("os_env:\n  sandbox:\n    read_paths: [~/code]\n");
	struct launch_request req = std_request();
	struct built b;

	req.home = "/Users/dev\n(allow default)";
	b = build_resolved_with(c.p, &req, NULL, NULL);
	cr_expect_eq(b.rc, -1);
	cr_expect(has(b.diags, "holds a control character, which a Seatbelt profile cannot carry"),
		  "%s", b.diags);
	cr_expect_eq(b.text.len, 0, "a profile was written anyway");
	built_free(&b);
	compiled_free(&c);
}

Test(limits, a_profile_over_256_kib_is_refused_naming_the_setting)
{
	struct textbuf y = {0};
	struct compiled c;
	struct built b;

	tb_puts(&y, "os_env:\n  sandbox:\n    write_paths: [.]\n    mask_paths:\n");
	for (int i = 0; i < 2500; i++)
		tb_printf(
		    &y, "      - generated/secrets/a-rather-long-directory-name/%05d/key.pem\n", i);
	c = compile(y.data);
	b = build_resolved(c.p);
	cr_expect_eq(b.rc, -1);
	cr_expect(has(b.diags, "agent.yaml:4:5: error: the Seatbelt profile would be "), "%s",
		  b.diags);
	cr_expect(has(b.diags, "over the 262144-byte limit of sandbox-exec; mask_paths makes "),
		  "%s", b.diags);
	cr_expect_eq(b.text.len, 0);
	built_free(&b);
	compiled_free(&c);
	tb_free(&y);
}

static void
small_limit(struct sbpl_context *c, void *arg)
{
	c->max_size = *(size_t *)arg;
}

Test(limits, the_limit_counts_the_whole_profile_and_names_read_paths)
{
	struct compiled c = compile("os_env:\n  sandbox:\n    read_paths:\n"
				    "      - /opt/a/very/long/path/number/one\n"
				    "      - /opt/a/very/long/path/number/two\n");
	struct launch_request req = std_request();
	struct built full = build_resolved(c.p), b;
	size_t limit = full.text.len - 1;

	b = build_resolved_with(c.p, &req, small_limit, &limit);
	cr_expect_eq(b.rc, -1);
	cr_expect(has(b.diags, "agent.yaml:3:5: error:") && has(b.diags, "read_paths makes"), "%s",
		  b.diags);
	built_free(&b);
	limit = full.text.len;
	b = build_resolved_with(c.p, &req, small_limit, &limit);
	cr_expect_eq(b.rc, 0, "%s", b.diags);
	built_free(&b);
	built_free(&full);
	compiled_free(&c);
}

/* ---- parameters and resolution -----------------------------------------------------------------
 */

static char *
emit_text(int (*fn)(const struct policy *, enum target, struct diag *, struct textbuf *),
	  const struct policy *p)
{
	struct textbuf t = {0};
	struct arena *a = arena_new();
	struct diag d;
	char *s;

	diag_init(&d, a, "agent.yaml", NULL, 0);
	cr_assert_eq(fn(p, TARGET_DARWIN, &d, &t), 0);
	s = strdup(t.data ? t.data : "");
	tb_free(&t);
	arena_free(a);
	return s;
}

Test(params, the_symbolic_list_names_each_parameter_the_profile_uses)
{
	struct compiled c = compile(RICH);
	struct compiled off = compile("os_env:\n  sandbox:\n    allow_network: false\n");
	char *s = emit_text(emit_sbpl_params, c.p), *o = emit_text(emit_sbpl_params, off.p);

	cr_expect_str_eq(s, "# sandbox-exec parameters of the profile for agent.yaml, one -D per "
			    "line\n"
			    "-D CWD={CWD}\n-D HOME={HOME}\n-D SCRATCH={SCRATCH}\n"
			    "-D CWD_RE={CWD:regex}\n-D HOME_RE={HOME:regex}\n"
			    "-D PORT={PORT}\n-D SOCK={SOCK}\n");
	cr_expect(!has(o, "PORT") && !has(o, "SOCK") && !has(o, "HOME_RE"), "%s", o);
	free(s);
	free(o);
	compiled_free(&c);
	compiled_free(&off);
}

Test(params, the_profile_text_is_the_same_whatever_the_machine)
{
	struct compiled c = compile(RICH);
	char *s = emit_text(emit_sbpl, c.p);

	cr_expect(has(s, "(allow file-read* file-write* (subpath (param \"CWD\")))"), "%s", s);
	cr_expect(has(s, "(regex (string-append \"^\" (param \"CWD_RE\") \"/.\"))"), "%s", s);
	{
		char *r = rules_only(s);

		cr_expect(!has(r, "/Users") && !has(r, "/home/") && !has(r, "{"), "%s", r);
		free(r);
	}
	free(s);
	compiled_free(&c);
}

Test(params, resolution_gives_canonical_values_and_escapes_regex_ones)
{
	struct compiled c = compile("os_env:\n  cwd: ../work+1\n  sandbox:\n"
				    "    read_paths: [~/code, /tmp/x]\n");
	struct launch_request req = std_request();
	struct textbuf profile = {0}, params = {0};
	struct arena *a = arena_new();
	struct darwin_launch_plan plan;
	struct diag d;

	req.launch_dir = "/tmp/launch/dir";
	req.policy = c.p;
	diag_init(&d, a, "agent.yaml", NULL, 0);
	cr_assert_eq(darwin_launch_prepare(a, &req, &plan, &d), 0, "%s", d.failure);
	sbpl_params_format(&plan.params, c.p->source, &params);
	tb_write(&profile, plan.profile.data, plan.profile.len);
	darwin_launch_plan_free(&plan);
	cr_expect_str_eq(params.data,
			 "# sandbox-exec parameters of the profile for agent.yaml, one -D per "
			 "line\n"
			 "-D CWD=/private/tmp/launch/work+1\n-D HOME=/Users/dev\n"
			 "-D SCRATCH=" SCRATCH "\n"
			 "-D CWD_RE=/private/tmp/launch/work\\+1\n-D HOME_RE=/Users/dev\n");
	cr_expect(has(profile.data, "(allow file-read* (subpath \"/private/tmp/x\"))"), "%s",
		  profile.data);
	cr_expect(has(profile.data, "(subpath (string-append (param \"HOME\") \"/code\"))"));
	cr_expect(has(profile.data, "; resolved for one launch"));
	tb_free(&profile);
	tb_free(&params);
	arena_free(a);
	compiled_free(&c);
}

Test(params, the_macos_spellings_are_applied_lexically)
{
	struct arena *a = arena_new();

	cr_expect_str_eq(paths_darwin_spelling(a, "/tmp"), "/private/tmp");
	cr_expect_str_eq(paths_darwin_spelling(a, "/var/folders/x"), "/private/var/folders/x");
	cr_expect_str_eq(paths_darwin_spelling(a, "/etc/hosts"), "/private/etc/hosts");
	cr_expect_str_eq(paths_darwin_spelling(a, "/tmpfoo"), "/tmpfoo");
	cr_expect_str_eq(paths_darwin_spelling(a, "/a/./b//c/../d"), "/a/b/d");
	cr_expect_str_eq(paths_darwin_spelling(a, "/../x"), "/x");
	cr_expect_str_eq(paths_darwin_spelling(a, "/"), "/");
	cr_expect_str_eq(paths_darwin_spelling(a, "/private/tmp"), "/private/tmp");
	arena_free(a);
}

Test(params, the_workspace_cannot_be_the_root)
{
	struct compiled c = compile("os_env:\n  cwd: /\n");
	struct launch_request req = std_request();
	struct built b = build_resolved_with(c.p, &req, NULL, NULL);

	cr_expect_eq(b.rc, -1);
	cr_expect(has(b.diags, "the workspace cannot be /"), "%s", b.diags);
	built_free(&b);
	compiled_free(&c);
}

Test(params, sandbox_none_has_no_profile_and_no_parameters)
{
	struct compiled c = compile("os_env:\n  sandbox:\n    type: none\n");
	char *s = emit_text(emit_sbpl, c.p), *p = emit_text(emit_sbpl_params, c.p);

	cr_expect_str_eq(s, "; sandbox type none (line 3) in agent.yaml: the command runs without "
			    "a sandbox; there is no profile\n");
	cr_expect(has(p, "# none: the policy has no profile"), "%s", p);
	free(s);
	free(p);
	compiled_free(&c);
}

Test(params, sections_come_in_the_spec_order_with_the_network_before_the_denies)
{
	struct compiled c = compile(RICH);
	char *s = emit_text(emit_sbpl, c.p);
	const char *marks[] = {"(version 1)\n(deny default)",
			       "; 2. ",
			       "; 3. ",
			       "; 4. ",
			       "; 5. ",
			       "; 6. ",
			       "; 7. ",
			       "; 10. ",
			       "; 8. ",
			       "; 9. ",
			       "; 11. ",
			       NULL};
	const char *at = s;

	for (size_t i = 0; marks[i]; i++) {
		const char *next = strstr(at, marks[i]);

		cr_expect_not_null(next, "'%s' missing or out of order", marks[i]);
		if (next)
			at = next;
	}
	cr_expect(has(s, "; read_paths (line 4): ~/.gitconfig, read-only"), "%s", s);
	cr_expect(has(s, "; mask_paths (line 5): config/production.key"), "%s", s);
	cr_expect(has(s, "; 10. network: egress_rules (line 6)"), "%s", s);
	free(s);
	compiled_free(&c);
}

/* ---- the command's directory --------------------------------------------------------------------
 */

static void
command_dir(struct sbpl_context *c, void *arg)
{
	c->command_dirs = arg;
	c->n_command_dirs = 1;
}

Test(command, its_directory_is_granted_read_only)
{
	struct compiled c = compile("os_env:\n  type: caller_process\n");
	struct launch_request req = std_request();
	const char *const ok[] = {"/Users/dev/.local/bin"};
	struct built b = build_resolved_with(c.p, &req, command_dir, (void *)ok);
	struct sbpl_profile *prof = load(&b);

	expect_allowed(prof, READ, "/Users/dev/.local/bin/claude");
	expect_denied(prof, WRITE, "/Users/dev/.local/bin/claude");
	sbpl_profile_free(prof);
	built_free(&b);
	compiled_free(&c);
}

/* ---- the launch
 * ----------------------------------------------------------------------------------- */

/* Not under /tmp: the macOS spelling (/private/tmp) does not exist on Linux. */
static char tmp_root[] = "/dev/shm/omnibox-sbpl-test-XXXXXX";

static void
launch_setup(void)
{
	cr_assert_not_null(mkdtemp(tmp_root));
}

static void
launch_teardown(void)
{
	rmtree(tmp_root);
}

static char *
write_script(const char *name, const char *body)
{
	char *path;
	FILE *f;

	if (asprintf(&path, "%s/%s", tmp_root, name) < 0)
		abort();
	f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs(body, f);
	fclose(f);
	chmod(path, 0755);
	return path;
}

TestSuite(launch, .init = launch_setup, .fini = launch_teardown);

Test(launch, argv_is_sandbox_exec_the_profile_the_parameters_the_relay_and_the_command)
{
	struct compiled c = compile(RICH);
	char *env[] = {S("PATH=/usr/bin:/bin"),
		       S("HOME=/Users/dev"),
		       S("AWS_SECRET_ACCESS_KEY=x"),
		       S("LD_PRELOAD=/evil.so"),
		       S("LANG=C"),
		       S("LC_ALL=C"),
		       NULL};
	char *cmd[] = {S("sh"), S("-c"), S("exit 0")};
	char *relay[] = {S("/usr/bin/true"), S("--listen"), S("127.0.0.1:" PORT), S("--")};
	struct launch_request rq = {.policy = c.p,
				    .launch_dir = "/tmp",
				    .home = HOME,
				    .scratch = SCRATCH,
				    .command = cmd,
				    .n_command = 3,
				    .environ = env,
				    .proxy_port = PORT,
				    .proxy_socket = SOCK,
				    .relay_argv = relay,
				    .n_relay_argv = 4};
	struct darwin_launch_plan plan;
	struct arena *a = arena_new();
	struct diag d;
	struct textbuf got = {0};

	diag_init(&d, a, "agent.yaml", NULL, 0);
	cr_assert_eq(darwin_launch_prepare(a, &rq, &plan, &d), 0, "%s", d.failure);
	cr_assert_eq(darwin_launch_argv(a, &plan, NULL, "/private/tmp/p/profile.sb"), 0);
	for (size_t i = 0; i < plan.argc; i++)
		tb_printf(&got, "%s\n", plan.argv[i]);
	cr_expect_str_eq(got.data, "/usr/bin/sandbox-exec\n-f\n/private/tmp/p/profile.sb\n"
				   "-D\nCWD=/private/tmp\n-D\nHOME=/Users/dev\n"
				   "-D\nSCRATCH=" SCRATCH "\n-D\nCWD_RE=/private/tmp\n"
				   "-D\nHOME_RE=/Users/dev\n-D\nPORT=" PORT "\n-D\nSOCK=" SOCK "\n"
				   "--\n/usr/bin/true\n--listen\n127.0.0.1:" PORT "\n--\n"
				   "sh\n-c\nexit 0\n");
	cr_expect_null(plan.argv[plan.argc]);
	tb_reset(&got);
	for (size_t i = 0; plan.facts.env[i]; i++)
		tb_printf(&got, "%s\n", plan.facts.env[i]);
	cr_expect(has(got.data, "PATH=/usr/bin:/bin\n") && has(got.data, "LC_ALL=C\n"), "%s",
		  got.data);
	cr_expect(!has(got.data, "AWS_SECRET") && !has(got.data, "LD_PRELOAD"), "%s", got.data);
	cr_expect(has(got.data, "TMPDIR=" SCRATCH "\n") && has(got.data, "PWD=/private/tmp\n"),
		  "%s", got.data);
	cr_expect(has(got.data, "HTTPS_PROXY=http://127.0.0.1:" PORT "\n"), "%s", got.data);
	cr_expect(has(got.data, "SSL_CERT_FILE=" SCRATCH "/omnibox-ca.pem\n"), "%s", got.data);
	cr_expect_eq(darwin_launch_argv(a, &plan, "sandbox-exec", "/x/profile.sb"), -1);
	tb_free(&got);
	darwin_launch_plan_free(&plan);
	arena_free(a);
	compiled_free(&c);
}

Test(launch, egress_without_a_relay_is_refused)
{
	struct compiled c = compile(RICH);
	char *cmd[] = {S("sh")};
	struct launch_request rq = {.policy = c.p,
				    .launch_dir = "/tmp",
				    .home = HOME,
				    .scratch = SCRATCH,
				    .command = cmd,
				    .n_command = 1};
	struct darwin_launch_plan plan;
	struct arena *a = arena_new();
	struct diag d;
	char err[512];

	diag_init(&d, a, "agent.yaml", NULL, 0);
	cr_expect_eq(darwin_launch_prepare(a, &rq, &plan, &d), -1);
	error_text(&d, err, sizeof(err));
	cr_expect(has(err, "egress_rules need the relay's port"), "%s", err);
	{
		struct compiled f = compile("os_env:\n  fork: true\n");
		struct launch_request fr = rq;

		fr.policy = f.p;
		cr_expect_eq(darwin_launch_prepare(a, &fr, &plan, &d), -1);
		error_text(&d, err, sizeof(err));
		cr_expect(
		    has(err,
			"agent.yaml:2:9: error: os_env.fork is not supported; remove it to run on "
			"the workspace itself"),
		    "%s", err);
		compiled_free(&f);
	}
	rq.proxy_port = "99999";
	rq.proxy_socket = SOCK;
	rq.relay_argv = cmd;
	rq.n_relay_argv = 1;
	cr_expect_eq(darwin_launch_prepare(a, &rq, &plan, &d), -1);
	error_text(&d, err, sizeof(err));
	cr_expect(has(err, "not a port number"), "%s", err);
	arena_free(a);
	compiled_free(&c);
}

Test(launch, a_command_that_would_widen_the_sandbox_to_a_home_or_root_is_refused)
{
	struct compiled c = compile("os_env:\n  type: caller_process\n");
	char *tool = write_script("tool", "#!/bin/sh\nexit 0\n");
	char *cmd[] = {tool};
	char *env[] = {S("PATH=/usr/bin:/bin"), NULL};
	/* The resolver, not the emitter, refuses: the home directory itself. */
	struct launch_request rq = {.policy = c.p,
				    .launch_dir = "/usr",
				    .home = tmp_root,
				    .scratch = SCRATCH,
				    .command = cmd,
				    .n_command = 1,
				    .environ = env};
	struct darwin_launch_plan plan;
	struct arena *a = arena_new();
	struct diag d;
	char err[1024];

	diag_init(&d, a, "agent.yaml", NULL, 0);
	cr_expect_eq(darwin_launch_prepare(a, &rq, &plan, &d), -1);
	error_text(&d, err, sizeof(err));
	cr_expect(has(err, "lives directly in") && has(err, "install the program in a directory "
							    "of its own"),
		  "%s", err);
	arena_free(a);
	free(tool);
	compiled_free(&c);
}

Test(launch, a_command_outside_the_grants_makes_its_directory_visible)
{
	struct compiled c = compile("os_env:\n  type: caller_process\n");
	char *tool;
	char *cmd[1];
	char *env[2];
	struct launch_request rq = {
	    .policy = c.p, .launch_dir = "/usr", .home = HOME, .scratch = SCRATCH, .n_command = 1};
	struct darwin_launch_plan plan;
	struct arena *a = arena_new();
	struct diag d;
	char err[512], *bin;

	if (asprintf(&bin, "%s/bin", tmp_root) < 0)
		abort();
	mkdir(bin, 0755);
	tool = write_script("bin/tool", "#!/bin/sh\nexit 0\n");
	cmd[0] = S("tool");
	if (asprintf(&env[0], "PATH=%s", bin) < 0)
		abort();
	env[1] = NULL;
	rq.command = cmd;
	rq.environ = env;
	diag_init(&d, a, "agent.yaml", NULL, 0);
	cr_assert_eq(darwin_launch_prepare(a, &rq, &plan, &d), 0, "%s", d.failure);
	cr_expect_eq(plan.ctx.n_command_dirs, 1);
	cr_expect(
	    has(plan.profile.data, arena_printf(a, "(allow file-read* (subpath \"%s\"))", bin)),
	    "%s", plan.profile.data);
	darwin_launch_plan_free(&plan);
	cmd[0] = S("no-such-tool");
	cr_expect_eq(darwin_launch_prepare(a, &rq, &plan, &d), -1);
	error_text(&d, err, sizeof(err));
	cr_expect(has(err, "command 'no-such-tool' not found on PATH"), "%s", err);
	free(tool);
	free(bin);
	free(env[0]);
	arena_free(a);
	compiled_free(&c);
}

Test(launch, the_profile_is_written_0600_in_a_private_0700_directory)
{
	struct arena *a = arena_new();
	const char *dir, *path, *dir2, *path2;
	struct stat st;
	char buf[64] = {0};
	int fd;
	mode_t old = umask(0);

	cr_assert_eq(darwin_profile_write(a, tmp_root, "(version 1)\n", 12, &dir, &path), 0);
	umask(old);
	cr_assert_eq(lstat(dir, &st), 0);
	cr_expect(S_ISDIR(st.st_mode));
	cr_expect_eq(st.st_mode & 07777, 0700, "dir mode %o", st.st_mode & 07777);
	cr_assert_eq(lstat(path, &st), 0);
	cr_expect(S_ISREG(st.st_mode));
	cr_expect_eq(st.st_mode & 07777, 0600, "file mode %o", st.st_mode & 07777);
	fd = open(path, O_RDONLY);
	cr_assert_geq(fd, 0);
	cr_expect_eq(read(fd, buf, sizeof(buf)), 12);
	close(fd);
	cr_expect_str_eq(buf, "(version 1)\n");
	cr_assert_eq(darwin_profile_write(a, tmp_root, "x", 1, &dir2, &path2), 0);
	cr_expect_str_neq(dir, dir2, "two launches share a profile dir");
	cr_expect_eq(darwin_profile_remove(dir, path), 0);
	cr_expect_eq(darwin_profile_remove(dir2, path2), 0);
	cr_expect_neq(access(dir, F_OK), 0, "the profile dir is left behind");
	cr_expect_lt(darwin_profile_write(a, "/nonexistent-dir", "x", 1, &dir, &path), 0);
	arena_free(a);
}

/* A stand-in for sandbox-exec: checks its arguments as sandbox-exec would read them,
 * then runs the command after "--". */
static const char fake_sandbox_exec[] =
    "#!/bin/sh\n"
    "[ \"$1\" = -f ] || { echo 'no -f' >&2; exit 99; }\n"
    "[ -f \"$2\" ] || { echo 'no profile' >&2; exit 99; }\n"
    "[ \"$(stat -c %a \"$2\")\" = 600 ] || { echo 'profile mode' >&2; exit 99; }\n"
    "[ \"$(stat -c %a \"$(dirname \"$2\")\")\" = 700 ] || { echo 'dir mode' >&2; exit 99; }\n"
    "head -c 11 \"$2\" | grep -q '^; Seatbelt' || { echo 'not a profile' >&2; exit 99; }\n"
    "echo \"$2\" > \"$MARK.profile\"\n"
    "echo \"$TMPDIR\" > \"$MARK.scratch\"\n"
    "shift 2\n"
    "while [ \"$1\" = -D ]; do shift 2; done\n"
    "[ \"$1\" = -- ] || { echo 'no --' >&2; exit 99; }\n"
    "shift\n"
    "exec \"$@\"\n";

static int
launch_with(const char *sandbox_exec, const char *script)
{
	struct compiled c = compile("os_env:\n  sandbox:\n    env_passthrough: [MARK]\n");
	char *mark, *envv[3];
	char *cmd[] = {S("/bin/sh"), S("-c"), (char *)script};
	struct launch_request rq = {
	    .policy = c.p, .launch_dir = tmp_root, .home = HOME, .command = cmd, .n_command = 3};
	int rc;

	if (asprintf(&mark, "MARK=%s/mark", tmp_root) < 0)
		abort();
	envv[0] = mark;
	envv[1] = S("PATH=/usr/bin:/bin");
	envv[2] = NULL;
	rq.environ = envv;
	rc = darwin_launch(&rq, NULL, tmp_root, sandbox_exec, false, true, stdout);
	free(mark);
	compiled_free(&c);
	return rc;
}

static bool
file_exists(const char *name)
{
	char *p;
	bool r;

	if (asprintf(&p, "%s/%s", tmp_root, name) < 0)
		abort();
	r = access(p, F_OK) == 0;
	free(p);
	return r;
}

static char *
file_line(const char *name)
{
	char *p, buf[512] = {0};
	FILE *f;

	if (asprintf(&p, "%s/%s", tmp_root, name) < 0)
		abort();
	f = fopen(p, "r");
	free(p);
	if (!f)
		return strdup("");
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return strdup(buf);
}

Test(launch, the_command_s_exit_status_comes_back_and_the_files_are_removed)
{
	char *fake = write_script("sandbox-exec", fake_sandbox_exec);
	char *profile, *scratch;

	cr_expect_eq(launch_with(fake, "echo ran > \"$MARK\"; exit 7"), 7);
	cr_expect(file_exists("mark"), "the command did not run");
	profile = file_line("mark.profile");
	scratch = file_line("mark.scratch");
	cr_expect(has(profile, "/omnibox-profile-") && has(scratch, "/omnibox-"), "%s %s", profile,
		  scratch);
	cr_expect_neq(access(profile, F_OK), 0, "the profile is left behind");
	cr_expect_neq(access(scratch, F_OK), 0, "the scratch dir is left behind");
	cr_expect_eq(launch_with(fake, "exit 0"), 0);
	free(profile);
	free(scratch);
	free(fake);
}

Test(launch, a_signal_death_comes_back_as_128_plus_the_signal)
{
	char *fake = write_script("sandbox-exec", fake_sandbox_exec);

	cr_expect_eq(launch_with(fake, "kill -9 $$"), 128 + SIGKILL);
	cr_expect_eq(launch_with(fake, "kill -TERM $$"), 128 + SIGTERM);
	free(fake);
}

Test(launch, a_signal_sent_to_omnibox_run_reaches_the_command)
{
	char *fake = write_script("sandbox-exec", fake_sandbox_exec);
	pid_t self = getpid(), helper = fork();

	cr_assert_geq(helper, 0);
	if (helper == 0) {
		usleep(300000);
		kill(self, SIGTERM);
		_exit(0);
	}
	cr_expect_eq(launch_with(fake, "exec sleep 20"), 128 + SIGTERM);
	waitpid(helper, NULL, 0);
	free(fake);
}

Test(launch, without_sandbox_exec_nothing_runs_and_the_status_is_125)
{
	char *missing;

	if (asprintf(&missing, "%s/no/sandbox-exec", tmp_root) < 0)
		abort();
	cr_expect_eq(launch_with(missing, "echo ran > \"$MARK\""), DARWIN_EXIT_SETUP);
	cr_expect(!file_exists("mark"), "the command ran without a sandbox");
	cr_expect_eq(launch_with("sandbox-exec", "echo ran > \"$MARK\""), DARWIN_EXIT_SETUP);
	cr_expect(!file_exists("mark"), "the command ran without a sandbox");
	free(missing);
}

Test(launch, an_unexecutable_sandbox_exec_is_a_setup_failure_not_a_command_status)
{
	char *notexec = write_script("sandbox-exec", "#!/bin/sh\nexit 3\n");

	chmod(notexec, 0644);
	cr_expect_eq(launch_with(notexec, "echo ran > \"$MARK\""), DARWIN_EXIT_SETUP);
	cr_expect(!file_exists("mark"));
	free(notexec);
}

Test(launch, dry_run_prints_the_profile_and_argv_and_runs_nothing)
{
	struct compiled c = compile("os_env:\n  type: caller_process\n");
	char *cmd[] = {S("/bin/sh"), S("-c"), S("touch /tmp/never")};
	char *env[] = {S("PATH=/usr/bin:/bin"), S("SECRET_TOKEN=x"), NULL};
	struct launch_request rq = {.policy = c.p,
				    .launch_dir = tmp_root,
				    .home = HOME,
				    .command = cmd,
				    .n_command = 3,
				    .environ = env};
	char *out;
	size_t n;
	FILE *f = open_memstream(&out, &n);

	cr_expect_eq(darwin_launch(&rq, NULL, tmp_root, NULL, true, true, f), 0);
	fclose(f);
	cr_expect(has(out, "(version 1)\n(deny default)"), "%s", out);
	cr_expect(has(out, "# sandbox-exec argv:\n/usr/bin/sandbox-exec\n-f\n"), "%s", out);
	cr_expect(has(out, "# environment (values not shown): PATH TMPDIR"), "%s", out);
	cr_expect(!has(out, "SECRET_TOKEN"), "%s", out);
	free(out);
	compiled_free(&c);
}

/* ---- protected paths: the same answers as the Linux acceptance test -------------------- */

#define PROTECT_POLICY                                                                             \
	"os_env:\n  sandbox:\n    write_paths: [.]\n    cwd_allow_hidden: [.git, .vscode, "        \
	".claude]\n"

Test(protected, hooks_config_and_agent_settings_stay_read_only_in_a_writable_workspace)
{
	struct case_ k = case_open(PROTECT_POLICY);

	/* git's own work goes on */
	expect_allowed(k.prof, WRITE, LAUNCH "/src/main.c");
	expect_allowed(k.prof, WRITE, LAUNCH "/.git/index");
	expect_allowed(k.prof, CREATE, LAUNCH "/.git/objects/ab/cdef");
	expect_allowed(k.prof, WRITE, LAUNCH "/.git/refs/heads/feature");
	expect_allowed(k.prof, READ, LAUNCH "/.git/config");
	expect_allowed(k.prof, READ, LAUNCH "/.git/hooks/pre-commit.sample");
	/* what a host tool runs later does not */
	expect_denied(k.prof, WRITE, LAUNCH "/.git/hooks/pre-commit");
	expect_denied(k.prof, CREATE, LAUNCH "/.git/hooks/pre-commit");
	expect_denied(k.prof, WRITE, LAUNCH "/.git/config");
	expect_denied(k.prof, UNLINK, LAUNCH "/.git/config");
	expect_denied(k.prof, CREATE, LAUNCH "/.envrc");
	expect_denied(k.prof, CREATE, LAUNCH "/.vscode/tasks.json");
	expect_denied(k.prof, CREATE, LAUNCH "/.claude/settings.json");
	expect_denied(k.prof, CREATE, LAUNCH "/.mcp.json");
	expect_denied(k.prof, CREATE, LAUNCH "/.gitmodules");
	/* and no rename takes .git, or a protected directory, out of the rules' reach */
	expect_dir_denied(k.prof, UNLINK, LAUNCH "/.git");
	expect_dir_denied(k.prof, UNLINK, LAUNCH "/.git/hooks");
	expect_dir_denied(k.prof, UNLINK, LAUNCH "/.vscode");
	case_close(&k);
}

Test(protected, unprotect_paths_makes_an_entry_writable_again)
{
	struct case_ k = case_open(PROTECT_POLICY "    unprotect_paths: [.vscode, .git/hooks]\n");

	expect_allowed(k.prof, CREATE, LAUNCH "/.vscode/tasks.json");
	expect_allowed(k.prof, CREATE, LAUNCH "/.git/hooks/pre-commit");
	expect_denied(k.prof, WRITE, LAUNCH "/.git/config");
	expect_denied(k.prof, CREATE, LAUNCH "/.envrc");
	case_close(&k);
}

Test(protected, protect_paths_adds_and_a_read_only_workspace_needs_nothing)
{
	struct case_ k = case_open(PROTECT_POLICY "    protect_paths: [Makefile, ci]\n");
	struct case_ ro = case_open("os_env:\n  sandbox:\n    protect_paths: [Makefile]\n");

	expect_denied(k.prof, WRITE, LAUNCH "/Makefile");
	expect_denied(k.prof, CREATE, LAUNCH "/ci/deploy.sh");
	expect_allowed(k.prof, WRITE, LAUNCH "/README");
	cr_expect(!has(ro.b.text.data, "8b. protected"),
		  "a read-only workspace has nothing to protect:\n%s", ro.b.text.data);
	expect_denied(ro.prof, WRITE, LAUNCH "/Makefile");
	case_close(&k);
	case_close(&ro);
}

Test(protected, a_writable_home_keeps_its_startup_files)
{
	struct case_ k = case_open("os_env:\n  sandbox:\n    write_paths: [\"~\"]\n"
				   "    cwd_allow_hidden: [\"*\"]\n");

	expect_allowed(k.prof, WRITE, HOME "/notes.txt");
	expect_denied(k.prof, WRITE, HOME "/.bashrc");
	expect_denied(k.prof, CREATE, HOME "/.zshenv");
	expect_denied(k.prof, CREATE, HOME "/.ssh/authorized_keys");
	expect_denied(k.prof, WRITE, HOME "/.gitconfig");
	expect_denied(k.prof, CREATE, HOME "/.config/fish/config.fish");
	expect_dir_denied(k.prof, UNLINK, HOME "/.config");
	case_close(&k);
}
