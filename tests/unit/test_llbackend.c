/*
 * test_llbackend.c - compiler/decide/llbackend.c: what the linux_landlock
 * backend makes of each setting, its refusals, ABI and fixed rules, and
 * that its rows are --explain's linux rows (emitters/explain.c), setting
 * for setting, for every golden policy.
 */
#include <criterion/criterion.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/decide/llbackend.h"
#include "compiler/decide/refuse.h"
#include "compiler/policy.h"
#include "emitters/explain.h"

struct run {
	struct arena *arena;
	struct policy *policy;
	char *diags;
};

static struct run
compile_text(const char *name, const char *yaml, size_t len)
{
	struct run r = {0};
	struct diag d;
	size_t n;
	FILE *f;

	r.arena = arena_new();
	diag_init(&d, r.arena, name, yaml, len);
	r.policy = policy_compile(r.arena, &d, name, yaml, len);
	f = open_memstream(&r.diags, &n);
	diag_print(&d, f, false);
	fclose(f);
	return r;
}

static struct run
compile(const char *yaml)
{
	return compile_text("t.yaml", yaml, strlen(yaml));
}

static void
run_free(struct run *r)
{
	arena_free(r->arena);
	free(r->diags);
}

#define HEAD "name: t\nprompt: p\nexecutor: {model: any}\nos_env:\n  sandbox:\n"

static void
ignore(void *arg, const char *setting, uint32_t line, struct llb_verdict v)
{
	(void)arg;
	(void)setting;
	(void)line;
	(void)v;
}

/* ---- verdicts ----------------------------------------------------------------- */

Test(llbackend, workspace_read_only_and_writable)
{
	struct run ro = compile(HEAD "    type: linux_landlock\n    read_paths: [docs]\n");
	struct run rw = compile(HEAD "    type: linux_landlock\n    write_paths: [.]\n");
	struct llb_verdict v;

	cr_assert_not_null(ro.policy, "%s", ro.diags);
	cr_assert_not_null(rw.policy, "%s", rw.diags);
	v = llbackend_setting(ro.policy, LLB_WORKSPACE, 0);
	cr_assert_eq(v.status, LLB_ENFORCED);
	cr_assert_str_eq(v.how, "Landlock rule: read, execute, list");
	v = llbackend_setting(ro.policy, LLB_READ_PATH, 0);
	cr_assert_eq(v.status, LLB_ENFORCED);
	v = llbackend_setting(rw.policy, LLB_WORKSPACE, 0);
	cr_assert_eq(v.status, LLB_APPROXIMATED);
	cr_assert(strstr(v.how, "neither made, removed nor renamed"), "%s", v.how);
	v = llbackend_setting(rw.policy, LLB_WRITE_PATH, 0);
	cr_assert_eq(v.status, LLB_APPROXIMATED);
	/* A hidden directory's names stay listed: never exact while dotfiles are hidden. */
	v = llbackend_setting(ro.policy, LLB_DOTFILES, 0);
	cr_assert_eq(v.status, LLB_APPROXIMATED, "%s", v.how);
	cr_assert(strstr(v.how, "can still be listed"), "%s", v.how);
	v = llbackend_setting(rw.policy, LLB_DOTFILES, 0);
	cr_assert_eq(v.status, LLB_APPROXIMATED, "%s", v.how);
	v = llbackend_setting(rw.policy, LLB_PROTECTED, 0);
	cr_assert_eq(v.status, LLB_APPROXIMATED, "%s", v.how);
	run_free(&ro);
	run_free(&rw);
}

Test(llbackend, masks_inside_and_outside_writable_grants)
{
	struct run r = compile(HEAD "    type: linux_landlock\n    write_paths: [out]\n"
				    "    mask_paths: [out/secret.key, config/prod.key, out]\n");
	struct llb_verdict v;

	cr_assert_not_null(r.policy, "%s", r.diags);
	/* Inside a writable grant: cut around it, and a directory's names listed. */
	v = llbackend_setting(r.policy, LLB_MASK_PATH, 0);
	cr_assert_eq(v.status, LLB_APPROXIMATED, "%s", v.how);
	cr_assert(strstr(v.how, "neither made, removed nor renamed"), "%s", v.how);
	/* Outside one: only what a masked directory holds stays listed. */
	v = llbackend_setting(r.policy, LLB_MASK_PATH, 1);
	cr_assert_eq(v.status, LLB_APPROXIMATED, "%s", v.how);
	cr_assert_str_eq(v.how, "no Landlock rule: unreadable; a missing one cannot be made; the "
				"names a hidden directory holds can still be listed (none read)");
	/* At the grant itself the mask wins: the grant gets no rule. */
	v = llbackend_setting(r.policy, LLB_MASK_PATH, 2);
	cr_assert(!strstr(v.how, "neither made"), "%s", v.how);
	run_free(&r);
}

Test(llbackend, home_private_or_held)
{
	struct run priv = compile(HEAD "    read_paths: [~/.gitconfig]\n");
	struct run held = compile(HEAD "    read_paths: [\"~\"]\n");

	cr_assert_not_null(priv.policy, "%s", priv.diags);
	cr_assert_not_null(held.policy, "%s", held.diags);
	cr_assert(strstr(llbackend_setting(priv.policy, LLB_HOME, 0).how, "scratch dir"));
	cr_assert(strstr(llbackend_setting(held.policy, LLB_HOME, 0).how, "the grant decides"));
	run_free(&priv);
	run_free(&held);
}

Test(llbackend, network)
{
	struct run off = compile(HEAD "    allow_network: false\n");
	struct run eg = compile(HEAD "    egress_rules: [\"GET api.github.com/**\"]\n");

	cr_assert_not_null(off.policy, "%s", off.diags);
	cr_assert_not_null(eg.policy, "%s", eg.diags);
	cr_assert_eq(llbackend_setting(off.policy, LLB_NETWORK_OFF, 0).status, LLB_ENFORCED);
	cr_assert_eq(llbackend_setting(eg.policy, LLB_EGRESS_DEFAULT, 0).status, LLB_APPROXIMATED);
	cr_assert_eq(llbackend_setting(eg.policy, LLB_EGRESS_TRANSPARENT, 0).status,
		     LLB_APPROXIMATED);
	cr_assert_eq(llbackend_setting(eg.policy, LLB_EGRESS_RULE, 0).status, LLB_ENFORCED);
	cr_assert_eq(llbackend_setting(eg.policy, LLB_PRIVATE_DEST, 0).status, LLB_ENFORCED);
	run_free(&off);
	run_free(&eg);
}

/* ---- refusals ----------------------------------------------------------------- */

Test(llbackend, refuses_git_ssh_and_copy_on_write)
{
	struct run git = compile(HEAD "    write_paths: [.]\n    allow_network: false\n"
				      "    git_ssh:\n      - host: github.com\n"
				      "        repository: a/b.git\n");
	struct run cow = compile(HEAD "    write_paths: [{path: vendor, copy_on_write: true}]\n");
	struct run plain = compile(HEAD "    write_paths: [.]\n");
	struct arena *a = arena_new();
	struct loc loc = {0};
	const char *why;

	cr_assert_not_null(git.policy, "%s", git.diags);
	cr_assert_not_null(cow.policy, "%s", cow.diags);
	cr_assert_not_null(plain.policy, "%s", plain.diags);
	why = llbackend_refuse(git.policy, &loc);
	cr_assert_eq(why, llbackend_why_git_ssh);
	cr_assert_eq(loc.line, 8);
	loc = (struct loc){0};
	why = llbackend_refuse(cow.policy, &loc);
	cr_assert_eq(why, llbackend_why_cow);
	cr_assert_eq(loc.line, 6);
	cr_assert_null(llbackend_refuse(plain.policy, &loc));
	/* refuse.h asks here for the backend; bwrap takes both. */
	cr_assert_eq(refuse_target(a, git.policy, SANDBOX_LINUX_LANDLOCK, "linux", &loc),
		     llbackend_why_git_ssh);
	cr_assert_null(refuse_target(a, git.policy, SANDBOX_LINUX_BWRAP, "linux", &loc));
	cr_assert_eq(refuse_launch(a, cow.policy, SANDBOX_LINUX_LANDLOCK, "linux", &loc),
		     llbackend_why_cow);
	cr_assert_eq(llbackend_setting(git.policy, LLB_GIT_SSH, 0).status, LLB_NOT_ENFORCED);
	cr_assert_eq(llbackend_setting(cow.policy, LLB_COW_PATH, 0).status, LLB_NOT_ENFORCED);
	arena_free(a);
	run_free(&git);
	run_free(&cow);
	run_free(&plain);
}

Test(llbackend, compiler_errors_under_linux_landlock)
{
	struct run git = compile(HEAD "    type: linux_landlock\n    allow_network: false\n"
				      "    git_ssh:\n      - host: github.com\n"
				      "        repository: a/b.git\n");
	struct run cow = compile(HEAD "    type: linux_landlock\n"
				      "    write_paths: [{path: vendor, copy_on_write: true}]\n");
	struct run eg = compile(HEAD "    type: linux_landlock\n"
				     "    egress_rules: [\"GET api.github.com/**\"]\n"
				     "    credential_proxy:\n      - type: https_bearer\n"
				     "        target: api.github.com\n"
				     "        source: {env: GITHUB_TOKEN}\n");

	cr_assert_null(git.policy);
	cr_assert(strstr(git.diags, "t.yaml:8:5: error: os_env.sandbox.git_ssh needs a linux_bwrap "
				    "sandbox: its broker is reached over a Unix socket"),
		  "%s", git.diags);
	cr_assert_null(cow.policy);
	cr_assert(strstr(cow.diags, "error: os_env.sandbox.write_paths: copy_on_write needs a "
				    "linux_bwrap sandbox"),
		  "%s", cow.diags);
	cr_assert_not_null(eg.policy, "%s", eg.diags);
	run_free(&git);
	run_free(&cow);
	run_free(&eg);
}

/* ---- settings, ABI, fixed rules ----------------------------------------------- */

Test(llbackend, read_only_network_off_is_exact)
{
	struct run r = compile(HEAD "    type: linux_landlock\n    read_paths: [/opt/tools]\n"
				    "    allow_network: false\n    cwd_allow_hidden: [\"*\"]\n");

	cr_assert_not_null(r.policy, "%s", r.diags);
	cr_assert_eq(llbackend_settings(r.policy, true, ignore, NULL), 0);
	/* The backend's own row is the one approximation left. */
	cr_assert_eq(llbackend_settings(r.policy, false, ignore, NULL), 1);
	run_free(&r);
}

Test(llbackend, abi)
{
	struct run r = compile(HEAD "    write_paths: [.]\n");
	const char *why = NULL;

	cr_assert_not_null(r.policy, "%s", r.diags);
	cr_assert_eq(llbackend_abi(r.policy, &why), LLB_ABI_BASE);
	cr_assert_eq(LLB_ABI_BASE, 6);
	cr_assert_not_null(why);
	cr_assert(!strncmp(why, "6 (", 3), "%s", why);
	run_free(&r);
}

Test(llbackend, fixed_rules)
{
	const struct llb_fixed *f;
	size_t n = llbackend_fixed(&f);
	bool usr = false, passwd = false, tty = false;

	cr_assert_gt(n, 10);
	for (size_t i = 0; i < n; i++) {
		cr_assert_not_null(f[i].why);
		for (size_t k = 0; k < i; k++)
			cr_assert_str_neq(f[i].path, f[k].path);
		usr |= !strcmp(f[i].path, "/usr") && !f[i].writable;
		passwd |= !strcmp(f[i].path, "/etc/passwd") && !f[i].writable;
		tty |= !strcmp(f[i].path, "/dev/tty") && f[i].writable;
		/* The host's terminals are the user's, not the sandbox's. */
		cr_assert(strcmp(f[i].path, "/dev/pts") && strcmp(f[i].path, "/dev/ptmx"), "%s",
			  f[i].path);
		if (!strncmp(f[i].path, "/dev/", 5))
			cr_assert(f[i].writable, "%s", f[i].path);
		else
			cr_assert(!f[i].writable, "%s", f[i].path);
	}
	cr_assert(usr && passwd && tty);
	cr_assert_str_eq(f[n - 1].path, "/proc");
}

/* ---- the same rows as --explain ------------------------------------------------ */

struct expect {
	char **lines; /* --explain's linux section, row and continuation lines */
	size_t n, i;
	const char *name;
};

static const char *const words[] = {"enforced", "approximated", "not enforced"};

/* Each llbackend row is the next --explain row: the landlock status, line
 * and setting in their columns, and its words either on a linux_landlock:
 * line under it or, when there is none, the row's own. */
static void
check_row(void *arg, const char *setting, uint32_t line, struct llb_verdict v)
{
	struct expect *e = arg;
	char prefix[2048], at[16] = "", cont[4096];
	const char *row;

	if (line)
		snprintf(at, sizeof(at), "%u", line);
	cr_assert_lt(e->i, e->n, "%s: no --explain row for %s", e->name, setting);
	row = e->lines[e->i++];
	snprintf(prefix, sizeof(prefix), "%-12s %5s  %-44s ", words[v.status], at, setting);
	cr_assert_gt(strlen(row), 15, "%s: %s", e->name, row);
	cr_assert(!strncmp(row + 15, prefix, strlen(prefix)), "%s: --explain has\n%s\nnot\n%s",
		  e->name, row + 15, prefix);
	snprintf(cont, sizeof(cont), "%35slinux_landlock: %s", "", v.how);
	if (e->i < e->n && !strncmp(e->lines[e->i], cont, 51)) {
		cr_assert_str_eq(e->lines[e->i], cont, "%s", e->name);
		e->i++;
	} else {
		size_t rl = strlen(row), hl = strlen(v.how);

		cr_assert(rl > hl && !strcmp(row + rl - hl, v.how) && row[rl - hl - 1] == ' ',
			  "%s: %s has no linux_landlock line and other words than %s", e->name, row,
			  v.how);
	}
}

/* --explain --target=linux of the policy FILE, and llbackend's rows. */
static void
agree(const char *file)
{
	FILE *f = fopen(file, "r");
	char *src = NULL, *text, *save = NULL;
	size_t cap = 0, len;
	struct textbuf out = {0};
	struct expect e = {0};
	struct run r;
	bool ok, in = false;

	cr_assert_not_null(f, "%s", file);
	len = getdelim(&src, &cap, '\0', f) > 0 ? strlen(src) : 0;
	fclose(f);
	r = compile_text("agent.yaml", src ? src : "", len);
	free(src);
	cr_assert_not_null(r.policy, "%s: %s", file, r.diags);
	explain_target(r.policy, TARGET_LINUX, &out, &ok);
	e.name = file;
	e.lines = calloc(out.len + 1, sizeof(*e.lines));
	cr_assert_not_null(out.data);
	text = out.data;
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(l, "  summary linux", 15))
			break;
		if (in)
			e.lines[e.n++] = l;
		in |= !strcmp(l, "  bwrap        landlock");
	}
	if (in) {
		llbackend_settings(r.policy, false, check_row, &e);
		cr_assert_eq(e.i, e.n, "%s: --explain has rows llbackend has not: %s", file,
			     e.i < e.n ? e.lines[e.i] : "");
	}
	free(e.lines);
	tb_free(&out);
	run_free(&r);
}

Test(llbackend, explain_rows_agree_all_settings)
{
	agree("golden/040-all-settings/agent.yaml");
}

Test(llbackend, explain_rows_agree_every_golden)
{
	glob_t g;

	cr_assert_eq(glob("golden/[0-9]*/agent.yaml", 0, NULL, &g), 0);
	cr_assert_gt(g.gl_pathc, 50);
	for (size_t i = 0; i < g.gl_pathc; i++)
		agree(g.gl_pathv[i]);
	globfree(&g);
}
