/*
 * test_frontend.c - the YAML front end: every schema error, verbatim, with
 * its line and column, and the IR it builds from valid input.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/policy.h"
#include "compiler/decide/secrets.h"

struct run {
	struct arena *arena;
	struct policy *policy;
	char *diags; /* everything diag_print() wrote */
	unsigned errors, warnings;
};

static struct run
compile_text(const char *yaml, size_t len)
{
	struct run r = {0};
	struct diag d;
	size_t n;
	FILE *f;

	r.arena = arena_new();
	diag_init(&d, r.arena, "t.yaml", yaml, len);
	r.policy = policy_compile(r.arena, &d, "t.yaml", yaml, len);
	r.errors = d.errors;
	r.warnings = d.warnings;
	f = open_memstream(&r.diags, &n);
	diag_print(&d, f, true);
	fclose(f);
	return r;
}

static struct run
compile(const char *yaml)
{
	return compile_text(yaml, strlen(yaml));
}

static void
run_free(struct run *r)
{
	arena_free(r->arena);
	free(r->diags);
}

/* Does the diagnostic output hold LINE as one whole line? */
static bool
has_line(const char *out, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = out; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, line, n) && (p[n] == '\n' || p[n] == '\0'))
			return true;
	return false;
}

/* The policy fails to compile and one diagnostic reads exactly "t.yaml:" EXPECTED. */
#define expect_error(yaml, expected)                                                               \
	do {                                                                                       \
		struct run r_ = compile(yaml);                                                     \
		cr_expect_null(r_.policy, "compiled, but expected: %s", expected);                 \
		cr_expect(has_line(r_.diags, "t.yaml:" expected),                                  \
			  "expected the diagnostic\n  t.yaml:%s\ngot:\n%s", expected, r_.diags);   \
		run_free(&r_);                                                                     \
	} while (0)

/* The policy compiles, with exactly this warning among its diagnostics. */
#define expect_warning(yaml, expected)                                                             \
	do {                                                                                       \
		struct run r_ = compile(yaml);                                                     \
		cr_expect_not_null(r_.policy, "failed to compile:\n%s", r_.diags);                 \
		cr_expect(has_line(r_.diags, "t.yaml:" expected),                                  \
			  "expected the warning\n  t.yaml:%s\ngot:\n%s", expected, r_.diags);      \
		run_free(&r_);                                                                     \
	} while (0)

#define SB "os_env:\n  sandbox:\n"

/* ---- keys ---------------------------------------------------------------------------- */

Test(keys, a_typo_gets_a_suggestion)
{
	expect_error(SB "    write_path: [.]\n",
		     "3:5: error: unknown key 'write_path' in os_env.sandbox (did you mean "
		     "'write_paths'?)");
	expect_error("os_env:\n  sandbx: {}\n",
		     "2:3: error: unknown key 'sandbx' in os_env (did you mean 'sandbox'?)");
	expect_error("terminals:\n  t:\n    comand: x\n",
		     "3:5: error: unknown key 'comand' in terminals.t (did you mean 'command'?)");
}

Test(keys, an_unrelated_key_gets_no_suggestion)
{
	expect_error(SB "    frobnicate: 1\n",
		     "3:5: error: unknown key 'frobnicate' in os_env.sandbox");
}

Test(keys, a_key_in_the_wrong_block_says_where_it_belongs)
{
	expect_error("os_env:\n  allow_network: false\n",
		     "2:3: error: unknown key 'allow_network' in os_env (it belongs in "
		     "os_env.sandbox)");
	expect_error(SB "    start_in_scratch: true\n",
		     "3:5: error: unknown key 'start_in_scratch' in os_env.sandbox (it belongs in "
		     "os_env)");
	expect_error("terminals:\n  t:\n    os_env:\n      write_paths: [.]\n",
		     "4:7: error: unknown key 'write_paths' in terminals.t.os_env (it belongs in "
		     "terminals.t.os_env.sandbox)");
}

Test(keys, duplicates_are_errors_pointing_at_the_first)
{
	expect_error(SB "    allow_network: true\n    allow_network: false\n",
		     "4:5: error: duplicate key 'allow_network' in os_env.sandbox (first at line "
		     "3)");
	expect_error("os_env: {}\nos_env: {}\n",
		     "2:1: error: duplicate key 'os_env' (first at line 1)");
	expect_error("terminals:\n  a: {}\n  a: {}\n",
		     "3:3: error: duplicate terminal 'a' (first at line 2)");
}

Test(keys, a_null_key_is_reported)
{
	expect_error(SB "    ~: 1\n", "3:5: error: keys in os_env.sandbox must be names, got null");
}

Test(keys, other_top_level_keys_are_ignored)
{
	struct run r = compile("name: x\nprompt: y\ntools: {a: [1, 2]}\nbogus: [1]\n");

	cr_assert_not_null(r.policy, "%s", r.diags);
	cr_expect_eq(r.errors, 0);
	run_free(&r);
}

/* ---- types ---------------------------------------------------------------------------- */

Test(types, booleans_are_only_true_and_false)
{
	expect_error(SB "    allow_network: no\n",
		     "3:20: error: os_env.sandbox.allow_network must be true or false, got the "
		     "string 'no' (YAML 1.2 booleans are only true and false)");
	expect_error(SB "    allow_network: On\n",
		     "3:20: error: os_env.sandbox.allow_network must be true or false, got the "
		     "string 'On' (YAML 1.2 booleans are only true and false)");
	expect_error(SB "    allow_network: \"false\"\n",
		     "3:20: error: os_env.sandbox.allow_network must be true or false, got the "
		     "string 'false' (quoted, so not a boolean)");
	expect_error(SB "    cwd_hidden_scan_recursive: 1\n",
		     "3:32: error: os_env.sandbox.cwd_hidden_scan_recursive must be true or false, "
		     "got the integer 1");
}

Test(types, booleans_accept_any_case)
{
	struct run r =
	    compile(SB "    allow_network: FALSE\n    cwd_hidden_scan_recursive: True\n");

	cr_assert_not_null(r.policy, "%s", r.diags);
	cr_expect_eq(r.policy->os_env.sandbox.allow_network.value, false);
	cr_expect_eq(r.policy->os_env.sandbox.allow_network.loc.line, 3);
	cr_expect_eq(r.policy->os_env.sandbox.scan_recursive.value, true);
	run_free(&r);
}

Test(types, a_scalar_is_never_split_into_a_list)
{
	expect_error(SB "    read_paths: /opt\n",
		     "3:17: error: os_env.sandbox.read_paths must be a list, got the string '/opt' "
		     "(write [/opt] for a one-item list)");
	expect_error(SB "    write_paths: \".\"\n",
		     "3:18: error: os_env.sandbox.write_paths must be a list, got the string '.' "
		     "(write [\".\"] for a one-item list)");
	expect_error(SB "    mask_paths: {a: b}\n",
		     "3:17: error: os_env.sandbox.mask_paths must be a list, got a mapping");
}

Test(types, null_gets_a_hint)
{
	expect_error(SB "    write_paths:\n",
		     "3:17: error: os_env.sandbox.write_paths must be a list, got null (remove the "
		     "key to use the default)");
	expect_error(SB "    read_paths: [~]\n",
		     "3:18: error: os_env.sandbox.read_paths[0] must be a string, got null (a bare "
		     "~ is null in YAML; write \"~\" for the home directory)");
}

Test(types, strings_must_be_strings_and_non_empty)
{
	expect_error("os_env:\n  cwd: 42\n",
		     "2:8: error: os_env.cwd must be a string, got the integer 42");
	expect_error(SB "    write_paths: [., true]\n",
		     "3:22: error: os_env.sandbox.write_paths[1] must be a string, got the boolean "
		     "true");
	expect_error(SB "    write_paths: [\"\"]\n",
		     "3:19: error: os_env.sandbox.write_paths[0] is empty");
	expect_error(SB "    write_paths: [\"a\\x01\"]\n",
		     "3:19: error: os_env.sandbox.write_paths[0] contains a control character");
}

Test(types, integers_are_checked_for_type_and_range)
{
	expect_error(
	    SB "    cwd_hidden_scan_max_entries: 0\n",
	    "3:34: error: os_env.sandbox.cwd_hidden_scan_max_entries must be between 1 and "
	    "4294967295, got 0");
	expect_error(
	    SB "    cwd_hidden_scan_max_entries: -5\n",
	    "3:34: error: os_env.sandbox.cwd_hidden_scan_max_entries must be between 1 and "
	    "4294967295, got -5");
	expect_error(SB "    cwd_hidden_scan_max_entries: \"100\"\n",
		     "3:34: error: os_env.sandbox.cwd_hidden_scan_max_entries must be an integer, "
		     "got the string '100'");
	expect_error(SB "    cwd_hidden_scan_max_entries: 1.5\n",
		     "3:34: error: os_env.sandbox.cwd_hidden_scan_max_entries must be an integer, "
		     "got the string '1.5'");
}

Test(types, blocks_must_be_mappings)
{
	expect_error("os_env: [a]\n", "1:9: error: os_env must be a mapping, got a list");
	expect_error("os_env:\n  sandbox: [linux_bwrap]\n",
		     "2:12: error: os_env.sandbox must be a mapping, got a list");
	expect_error("terminals: [bash]\n", "1:12: error: terminals must be a mapping, got a list");
	expect_error("terminals:\n  t: bash\n",
		     "2:6: error: terminals.t must be a mapping, got the string 'bash'");
}

Test(types, explicit_tags_are_honoured)
{
	struct run r = compile(SB "    allow_network: !!bool false\n    write_paths: [!!str 5]\n");

	cr_assert_not_null(r.policy, "%s", r.diags);
	cr_expect_eq(r.policy->os_env.sandbox.allow_network.value, false);
	cr_expect_str_eq(r.policy->os_env.sandbox.write_paths.v[0].symbolic, "{CWD}/5");
	run_free(&r);
	expect_error(SB "    allow_network: !custom true\n",
		     "3:20: error: os_env.sandbox.allow_network must be true or false, got the "
		     "string 'true'");
}

/* ---- os_env ------------------------------------------------------------------------------ */

Test(os_env, only_caller_process_is_supported)
{
	expect_error("os_env:\n  type: docker\n",
		     "2:9: error: unsupported os_env.type 'docker' (the only supported value is "
		     "caller_process)");
}

Test(os_env, fork_is_accepted_with_a_warning)
{
	expect_warning("os_env:\n  fork: true\n",
		       "2:9: warning: os_env.fork is not supported: omnibox-run refuses to launch "
		       "rather than run on the real workspace");
}

Test(os_env, start_in_scratch_conflicts)
{
	expect_error("os_env:\n  start_in_scratch: true\n  fork: true\n",
		     "2:21: error: start_in_scratch cannot be combined with fork");
	expect_error("os_env:\n  start_in_scratch: true\n  sandbox: {type: none}\n",
		     "2:21: error: start_in_scratch needs a sandbox (the sandbox type is none)");
	expect_error("os_env:\n  start_in_scratch: true\n  sandbox: {type: null}\n",
		     "2:21: error: start_in_scratch needs a sandbox (the sandbox type is none)");
}

Test(os_env, cwd_is_relative_to_the_launch_directory)
{
	struct run r = compile("os_env:\n  cwd: ./proj//x/.\n");

	cr_assert_not_null(r.policy, "%s", r.diags);
	cr_expect_str_eq(r.policy->os_env.cwd_path.symbolic, "{LAUNCH}/proj/x");
	run_free(&r);
}

Test(os_env, an_absent_os_env_means_the_defaults)
{
	struct run r = compile("name: x\n");

	cr_assert_not_null(r.policy, "%s", r.diags);
	cr_expect_eq(r.policy->has_os_env, false);
	cr_expect_eq(r.policy->os_env.sandbox.type, SANDBOX_AUTO);
	cr_expect_eq(r.policy->os_env.sandbox.allow_network.value, true);
	cr_expect_eq(r.policy->os_env.sandbox.scan_max_entries.value, 50000);
	cr_expect_eq(r.policy->os_env.sandbox.scan_overflow, OVERFLOW_WARN);
	cr_assert_eq(r.policy->os_env.sandbox.cwd_allow_hidden.n, 1);
	cr_expect_str_eq(r.policy->os_env.sandbox.cwd_allow_hidden.v[0].s, ".venv");
	run_free(&r);
}

/* ---- sandbox ------------------------------------------------------------------------------- */

Test(sandbox, type_values)
{
	static const struct {
		const char *text;
		enum sandbox_type type;
	} cases[] = {
	    {"auto", SANDBOX_AUTO},
	    {"none", SANDBOX_NONE},
	    {"null", SANDBOX_NONE},
	    {"linux_bwrap", SANDBOX_LINUX_BWRAP},
	    {"darwin_seatbelt", SANDBOX_DARWIN_SEATBELT},
	    {"windows_jobobject", SANDBOX_WINDOWS_JOBOBJECT},
	    {"linux_landlock", SANDBOX_LINUX_LANDLOCK},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char yaml[128];
		struct run r;

		snprintf(yaml, sizeof(yaml), SB "    type: %s\n", cases[i].text);
		r = compile(yaml);
		cr_assert_not_null(r.policy, "%s: %s", cases[i].text, r.diags);
		cr_expect_eq(r.policy->os_env.sandbox.type, cases[i].type, "%s", cases[i].text);
		run_free(&r);
	}
	expect_error(SB "    type: linux_bwrapp\n",
		     "3:11: error: unknown sandbox type 'linux_bwrapp' (did you mean "
		     "'linux_bwrap'?)");
	expect_error(SB "    type: firejail\n",
		     "3:11: error: unknown sandbox type 'firejail' (expected auto, none, "
		     "linux_bwrap, linux_landlock, darwin_seatbelt or windows_jobobject)");
	expect_error(SB "    type: [x]\n",
		     "3:11: error: os_env.sandbox.type must be a string or null, got a list");
}

Test(sandbox, paths_are_symbolic_and_deduplicated)
{
	struct run r =
	    compile(SB "    write_paths: [., ./, src/, ./src, \"~\", ~/x/../y, /opt//a/]\n");
	const struct ir_pathlist *w;

	cr_assert_not_null(r.policy, "%s", r.diags);
	w = &r.policy->os_env.sandbox.write_paths;
	cr_assert_eq(w->n, 5);
	cr_expect_str_eq(w->v[0].symbolic, "{CWD}");
	cr_expect_str_eq(w->v[1].symbolic, "{CWD}/src");
	cr_expect_str_eq(w->v[2].symbolic, "{HOME}");
	cr_expect_str_eq(w->v[3].symbolic, "{HOME}/x/../y");
	cr_expect_str_eq(w->v[4].symbolic, "/opt/a");
	cr_expect_eq(w->v[4].base, PATH_ABSOLUTE);
	cr_expect_str_eq(w->v[4].written, "/opt//a/");
	cr_expect_eq(w->v[4].loc.line, 3);
	run_free(&r);
}

Test(sandbox, tilde_user_is_refused)
{
	expect_error(
	    SB "    read_paths: [~bob/x]\n",
	    "3:18: error: os_env.sandbox.read_paths[0] '~bob/x': only '~' and '~/...' name "
	    "the home directory; write the absolute path");
}

Test(sandbox, dollar_in_a_path_is_literal_with_a_warning)
{
	expect_warning(SB "    read_paths: [\"$HOME/x\"]\n",
		       "3:18: warning: os_env.sandbox.read_paths[0] '$HOME/x' contains '$': "
		       "variables are never expanded, so this is a literal path");
}

Test(sandbox, broad_grants_are_warned_about)
{
	expect_warning(
	    SB "    read_paths: [/]\n",
	    "3:18: warning: os_env.sandbox.read_paths[0] '/' grants the whole file system "
	    "(the dotfiles that exist at launch stay hidden)");
	expect_warning(SB "    write_paths: [\"~\"]\n",
		       "3:19: warning: os_env.sandbox.write_paths[0] '~' grants the whole home "
		       "directory (the dotfiles that exist at launch stay hidden; new ones can be "
		       "made, except the protected paths of docs/protect.md)");
	expect_warning(
	    SB "    read_paths: [/home/]\n",
	    "3:18: warning: os_env.sandbox.read_paths[0] '/home/' grants every user's home "
	    "directory (the dotfiles that exist at launch stay hidden)");
	expect_warning(
	    SB "    write_files: [~/..]\n",
	    "3:19: warning: os_env.sandbox.write_files[0] '~/..' grants a directory above "
	    "the home directory (the dotfiles that exist at launch stay hidden; new ones can "
	    "be made, except the protected paths of docs/protect.md)");
}

Test(sandbox, cwd_allow_hidden_entries_are_single_names)
{
	expect_error(SB "    cwd_allow_hidden: [.git/x]\n",
		     "3:24: error: os_env.sandbox.cwd_allow_hidden[0] must be a single file name "
		     "like '.git', not '.git/x'");
	expect_error(SB "    cwd_allow_hidden: ['..']\n",
		     "3:24: error: os_env.sandbox.cwd_allow_hidden[0] must be a single file name "
		     "like '.git', not '..'");
	expect_error(SB "    cwd_allow_hidden: ['.']\n",
		     "3:24: error: os_env.sandbox.cwd_allow_hidden[0] must be a single file name "
		     "like '.git', not '.'");
	expect_error(SB "    cwd_allow_hidden: ['a\\b']\n",
		     "3:24: error: os_env.sandbox.cwd_allow_hidden[0] must be a single file name "
		     "like '.git', not 'a\\b'");
	expect_warning(
	    SB "    cwd_allow_hidden: [venv]\n",
	    "3:24: warning: os_env.sandbox.cwd_allow_hidden[0] 'venv' does not start with "
	    "'.', so it never matches a dotfile");
}

Test(sandbox, an_explicit_allow_hidden_list_replaces_the_default)
{
	struct run r = compile(SB "    cwd_allow_hidden: []\n");

	cr_assert_not_null(r.policy, "%s", r.diags);
	cr_expect_eq(r.policy->os_env.sandbox.cwd_allow_hidden.n, 0);
	run_free(&r);
}

Test(sandbox, scan_overflow_values)
{
	expect_error(SB "    cwd_hidden_scan_overflow: fail\n",
		     "3:31: error: os_env.sandbox.cwd_hidden_scan_overflow must be warn, error or "
		     "unlimited, got 'fail'");
	expect_error(SB "    cwd_hidden_scan_overflow: 3\n",
		     "3:31: error: os_env.sandbox.cwd_hidden_scan_overflow must be warn, error or "
		     "unlimited, got the integer 3");
}

Test(sandbox, env_names_are_checked)
{
	expect_error(SB "    env_passthrough: [OK, BAD-NAME]\n",
		     "3:27: error: os_env.sandbox.env_passthrough[1]: 'BAD-NAME' is not an "
		     "environment variable name ([A-Za-z_][A-Za-z0-9_]*)");
	expect_error(SB "    env_passthrough: [9X]\n",
		     "3:23: error: os_env.sandbox.env_passthrough[0]: '9X' is not an environment "
		     "variable name ([A-Za-z_][A-Za-z0-9_]*)");
}

Test(sandbox, network_off_needs_a_sandbox)
{
	expect_error(
	    SB "    type: none\n    allow_network: false\n",
	    "4:20: error: os_env.sandbox.allow_network: false cannot be enforced without a "
	    "sandbox (type is none)");
}

Test(sandbox, grants_without_a_sandbox_are_warned_about)
{
	expect_warning(SB "    type: none\n    read_paths: [/opt]\n",
		       "4:5: warning: os_env.sandbox.read_paths has no effect: the sandbox type is "
		       "none");
}

/* ---- egress ------------------------------------------------------------------------------- */

Test(egress, rule_errors_point_inside_the_scalar)
{
	expect_error(SB "    egress_rules:\n      - FETCH api.github.com/x\n",
		     "4:9: error: unknown HTTP method 'FETCH'");
	expect_error(SB "    egress_rules:\n      - \"GET api.github.com:0\"\n",
		     "4:29: error: port 0 is out of range (1 to 65535)");
	expect_error(SB "    egress_rules:\n      - \"GET api.github.com:44x/a\"\n",
		     "4:31: error: invalid character 'x' in port (a decimal number, 1 to 65535)");
	expect_error(SB "    egress_rules:\n      - \"GET api.github.com:/a\"\n",
		     "4:28: error: missing port after ':'");
	expect_error(SB "    egress_rules:\n      - \"GET api.github.com:65536\"\n",
		     "4:29: error: port 65536 is out of range (1 to 65535)");
	expect_error(SB "    egress_rules: ['it''s GET x.com', 'GET x.com:1']\n",
		     "3:21: error: unknown HTTP method 'it's'");
	expect_error(SB "    egress_rules: [\"\\u0047ET x_y.com\"]\n",
		     "3:31: error: invalid character '_' in host");
	expect_error(SB "    egress_rules: [\"GET,,POST x.com\"]\n",
		     "3:25: error: empty HTTP method in the list");
}

Test(egress, rules_are_parsed_in_source_order_and_deduplicated)
{
	struct run r =
	    compile(SB "    egress_rules:\n      - \"GET a.com/x\"\n      - \"* *.B.com\"\n"
		       "      - \"get A.COM/x\"\n");
	const struct sandbox *sb;

	cr_assert_not_null(r.policy, "%s", r.diags);
	sb = &r.policy->os_env.sandbox;
	cr_assert_eq(sb->n_egress, 2);
	cr_expect_str_eq(sb->egress[0].host, "a.com");
	cr_expect_eq(sb->egress[0].methods, EGRESS_GET);
	cr_expect_eq(sb->egress[0].loc.line, 4);
	cr_expect_str_eq(sb->egress[1].host, "b.com");
	cr_expect(sb->egress[1].wildcard);
	cr_expect_str_eq(sb->egress[1].path, "/**");
	run_free(&r);
}

Test(egress, an_empty_list_is_a_warning)
{
	expect_warning(
	    SB "    egress_rules: []\n",
	    "3:19: warning: os_env.sandbox.egress_rules is empty: no HTTP filtering, the "
	    "network follows allow_network");
}

Test(egress, rules_need_a_hardened_backend)
{
	expect_error(
	    SB "    type: none\n    egress_rules: [GET x.com]\n",
	    "4:5: error: os_env.sandbox.egress_rules need a linux_bwrap or darwin_seatbelt "
	    "sandbox, not none");
	expect_error(
	    SB "    type: windows_jobobject\n    egress_rules: [GET x.com]\n",
	    "4:5: error: os_env.sandbox.egress_rules need a linux_bwrap or darwin_seatbelt "
	    "sandbox, not windows_jobobject");
}

Test(egress, rule_entries_must_be_strings)
{
	expect_error(SB "    egress_rules: [[GET]]\n",
		     "3:20: error: os_env.sandbox.egress_rules[0] must be a string, got a list");
}

/* ---- credentials ---------------------------------------------------------------------------- */

#define CRED SB "    egress_rules: [\"* *.example.com/**\"]\n    credential_proxy:\n"

Test(credentials, need_egress_rules_and_a_hardened_backend)
{
	expect_error(SB
		     "    credential_proxy:\n      - {type: https_bearer, target: a.com, source: "
		     "{env: T}}\n",
		     "3:5: error: os_env.sandbox.credential_proxy needs a non-empty egress_rules "
		     "list: the egress proxy is what swaps the credentials in");
	expect_error(SB
		     "    type: none\n    credential_proxy:\n      - {type: https_bearer, target: "
		     "a.com, source: {env: T}}\n",
		     "4:5: error: os_env.sandbox.credential_proxy needs a linux_bwrap or "
		     "darwin_seatbelt sandbox, not none");
	expect_error(SB "    credential_proxy: []\n",
		     "3:23: error: os_env.sandbox.credential_proxy is empty (remove it, or list "
		     "credentials)");
}

Test(credentials, type_is_required_and_known)
{
	expect_error(CRED "      - {target: a.example.com, source: {env: T}}\n",
		     "5:9: error: os_env.sandbox.credential_proxy[0] needs a 'type' (https_bearer, "
		     "https_basic, git_https, gh_basic, databricks_cli or aws_sigv4)");
	expect_error(CRED "      - {type: https_beare, target: a.example.com, source: {env: T}}\n",
		     "5:16: error: unknown credential type 'https_beare' (did you mean "
		     "'https_bearer'?)");
	expect_error(CRED "      - {type: oauth, target: a.example.com, source: {env: T}}\n",
		     "5:16: error: unknown credential type 'oauth'");
	expect_error(CRED "      - {type: https_bearer, target: a.example.com, source: {env: T}, "
			  "scope: x}\n",
		     "5:71: error: unknown key 'scope' in os_env.sandbox.credential_proxy[0]");
}

Test(credentials, source_has_exactly_one_origin)
{
	expect_error(
	    CRED "      - {type: https_bearer, target: a.example.com}\n",
	    "5:9: error: os_env.sandbox.credential_proxy[0] needs a 'source' ({env: NAME}, "
	    "{file: PATH}, {command: CMD} or {unix_socket: PATH})");
	expect_error(
	    CRED "      - {type: https_bearer, target: a.example.com, source: {env: T, "
		 "command: c}}\n",
	    "5:61: error: os_env.sandbox.credential_proxy[0].source must set exactly one of "
	    "env, file, command or unix_socket");
	expect_error(
	    CRED "      - {type: https_bearer, target: a.example.com, source: {}}\n",
	    "5:61: error: os_env.sandbox.credential_proxy[0].source must set exactly one of "
	    "env, file, command or unix_socket");
	expect_error(CRED "      - {type: https_bearer, target: a.example.com, source: {env: "
			  "A-B}}\n",
		     "5:67: error: os_env.sandbox.credential_proxy[0].source.env: 'A-B' is not an "
		     "environment variable name ([A-Za-z_][A-Za-z0-9_]*)");
	expect_error(CRED "      - {type: https_bearer, target: a.example.com, source: {file: "
			  "\"\"}}\n",
		     "5:68: error: os_env.sandbox.credential_proxy[0].source.file is empty");
	expect_error(
	    CRED "      - {type: https_bearer, target: a.example.com, source: env}\n",
	    "5:61: error: os_env.sandbox.credential_proxy[0].source must be a mapping, got "
	    "the string 'env'");
}

Test(credentials, targets_are_exact_hosts)
{
	expect_error(
	    CRED "      - {type: https_bearer, target: \"*.example.com\", source: {env: T}}\n",
	    "5:39: error: os_env.sandbox.credential_proxy[0].target: a credential binds to "
	    "an exact host, not a wildcard");
	expect_error(
	    CRED "      - {type: https_bearer, target: a.example.com:8443, source: {env: "
		 "T}}\n",
	    "5:38: error: credential host 'a.example.com:8443' is not allowed by any egress "
	    "rule, so the credential could never be used");
	expect_error(CRED "      - {type: https_bearer, target: a.example.com:70000, source: {env: "
			  "T}}\n",
		     "5:52: error: os_env.sandbox.credential_proxy[0].target: port 70000 is out of "
		     "range (1 to 65535)");
	expect_error(
	    CRED "      - {type: https_bearer, target: a.example.com:8x, source: {env: "
		 "T}}\n",
	    "5:53: error: os_env.sandbox.credential_proxy[0].target: invalid character 'x' in "
	    "port (a decimal number, 1 to 65535)");
	expect_error(CRED "      - {type: https_bearer, target: \"https://a.example.com\", source: "
			  "{env: T}}\n",
		     "5:39: error: os_env.sandbox.credential_proxy[0].target: write the host "
		     "without a scheme ('https://')");
	expect_error(CRED
		     "      - {type: https_bearer, target: a..example.com, source: {env: T}}\n",
		     "5:38: error: os_env.sandbox.credential_proxy[0].target: 'a..example.com' is "
		     "not a host name");
	expect_error(CRED "      - {type: https_bearer, source: {env: T}}\n",
		     "5:9: error: os_env.sandbox.credential_proxy[0] needs a 'target' host or a "
		     "'targets' list");
	expect_error(
	    CRED "      - {type: https_bearer, target: a.example.com, targets: [b.example.com], "
		 "source: {env: T}}\n",
	    "5:62: error: os_env.sandbox.credential_proxy[0]: give 'target' or 'targets', "
	    "not both");
	expect_error(CRED "      - {type: https_bearer, targets: [], source: {env: T}}\n",
		     "5:39: error: os_env.sandbox.credential_proxy[0].targets is empty");
}

Test(credentials, hosts_are_bound_once_and_reachable)
{
	expect_error(
	    CRED "      - {type: https_bearer, target: a.example.com, source: {env: T}}\n"
		 "      - {type: git_https, target: A.example.com/repo.git, source: {env: "
		 "U}}\n",
	    "6:35: error: host 'a.example.com:443' is already bound to a credential at line 5");
	expect_error(
	    CRED "      - {type: https_bearer, target: other.org, source: {env: T}}\n",
	    "5:38: error: credential host 'other.org:443' is not allowed by any egress rule, "
	    "so the credential could never be used");
}

Test(credentials, per_type_fields)
{
	expect_error(
	    CRED "      - {type: git_https, target: a.example.com, source: {env: T}, env: "
		 "E}\n",
	    "5:73: error: os_env.sandbox.credential_proxy[0]: git_https does not take 'env' "
	    "(only https_bearer and https_basic do)");
	expect_error(CRED "      - {type: https_bearer, target: a.example.com, source: {env: T}, "
			  "username: u}\n",
		     "5:81: error: os_env.sandbox.credential_proxy[0]: https_bearer does not take "
		     "'username'");
	expect_error(CRED "      - {type: https_bearer, target: a.example.com, source: {env: T}, "
			  "profiles: [p]}\n",
		     "5:81: error: os_env.sandbox.credential_proxy[0]: https_bearer does not take "
		     "'profiles'");
	expect_error(CRED "      - {type: databricks_cli}\n",
		     "5:9: error: os_env.sandbox.credential_proxy[0]: databricks_cli needs a "
		     "'profiles' list");
	expect_error(CRED "      - {type: databricks_cli, profiles: []}\n",
		     "5:42: error: os_env.sandbox.credential_proxy[0].profiles is empty");
	expect_error(CRED "      - {type: databricks_cli, profiles: [a, a]}\n",
		     "5:46: error: os_env.sandbox.credential_proxy[0].profiles lists 'a' twice");
	expect_error(
	    CRED "      - {type: databricks_cli, profiles: [a], default: b}\n",
	    "5:56: error: os_env.sandbox.credential_proxy[0].default 'b' is not one of its "
	    "profiles");
	expect_error(
	    CRED "      - {type: databricks_cli, profiles: [a], target: a.example.com}\n",
	    "5:55: error: os_env.sandbox.credential_proxy[0]: databricks_cli does not take "
	    "'target'");
}

Test(credentials, gh_and_databricks_are_refused_on_seatbelt)
{
	expect_error(
	    SB "    type: darwin_seatbelt\n    egress_rules: [\"* *.github.com/**\"]\n"
	       "    credential_proxy:\n      - {type: gh_basic, source: {env: T}}\n",
	    "6:9: error: credential type gh_basic cannot be used with darwin_seatbelt: its "
	    "clients ignore SSL_CERT_FILE on macOS");
}

Test(credentials, gh_basic_defaults_to_the_github_hosts)
{
	struct run r =
	    compile(SB "    egress_rules: [\"* github.com\", \"* api.github.com\"]\n"
		       "    credential_proxy:\n      - {type: gh_basic, source: {command: gh "
		       "auth token}}\n");
	const struct credential *cr;

	cr_assert_not_null(r.policy, "%s", r.diags);
	cr = &r.policy->os_env.sandbox.creds[0];
	cr_assert_eq(cr->n_targets, 2);
	cr_expect_str_eq(cr->targets[0].host, "github.com");
	cr_expect_eq(cr->targets[0].scheme, CRED_SCHEME_BASIC);
	cr_expect_str_eq(cr->targets[1].host, "api.github.com");
	cr_expect_eq(cr->targets[1].scheme, CRED_SCHEME_TOKEN);
	cr_expect_eq(cr->source_kind, CRED_SOURCE_COMMAND);
	cr_expect_str_eq(cr->source.s, "gh auth token");
	cr_assert_eq(cr->env.n, 2);
	cr_expect_str_eq(cr->env.v[0].s, "GH_TOKEN");
	run_free(&r);
}

/* ---- secrets a credential reads ------------------------------------------------------------ */

#define DBX "      - {type: databricks_cli, profiles: [dev]}\n"
#define AWSP                                                                                       \
	"      - {type: aws_sigv4, target: s3.example.com, region: us-east-1,\n"                   \
	"         credential: {profile: default}}\n"

Test(credential_files, every_profile_file_the_proxy_reads_is_refused_when_a_grant_shows_it)
{
	expect_error(CRED DBX "    read_paths: [\"~\"]\n    cwd_allow_hidden: [\"*\"]\n",
		     "5:9: error: databricks_cli configuration '~/.databrickscfg' would be "
		     "readable in the sandbox through the grant '~' at line 6, as cwd_allow_hidden "
		     "at line 7 shows '.databrickscfg'; keep it outside every grant and out of "
		     "cwd_allow_hidden");
	expect_error(CRED AWSP "    read_paths: [\"~\"]\n    cwd_allow_hidden: [.aws]\n",
		     "6:32: error: aws_sigv4 shared credentials file '~/.aws/credentials' would be "
		     "readable in the sandbox through the grant '~' at line 7, as cwd_allow_hidden "
		     "at line 8 shows '.aws'; keep it outside every grant and out of "
		     "cwd_allow_hidden");
	expect_error(CRED AWSP "    read_paths: [\"~/.aws\"]\n",
		     "6:32: error: aws_sigv4 shared credentials file '~/.aws/credentials' would be "
		     "readable in the sandbox through the grant '~/.aws' at line 7; keep it "
		     "outside every grant");
	expect_error(CRED DBX "    write_files: [\"~/.databrickscfg\"]\n",
		     "5:9: error: databricks_cli configuration '~/.databrickscfg' would be "
		     "readable in the sandbox through the grant '~/.databrickscfg' at line 6; keep "
		     "it outside every grant");
}

Test(credential_files, a_file_source_below_the_scan_depth_is_refused)
{
	expect_error(CRED "      - {type: https_bearer, target: a.example.com, source: {file: "
			  "~/proj/sub/.tok}}\n    read_paths: [\"~/proj\"]\n",
		     "5:68: error: credential file '~/proj/sub/.tok' would be readable in the "
		     "sandbox through the grant '~/proj' at line 6, as the dotfile scan does not "
		     "reach '.tok'; keep it outside every grant, or set cwd_hidden_scan_recursive: "
		     "true");
}

Test(credential_files, hidden_directories_and_masks_keep_them_out_of_reach)
{
	const char *ok[] = {
	    CRED AWSP "    read_paths: [\"~\"]\n",
	    CRED AWSP
	    "    read_paths: [\"~\", \"~/.aws/config\"]\n    cwd_allow_hidden: [.venv, .config]\n",
	    CRED DBX AWSP "    read_paths: [\"~\"]\n    cwd_allow_hidden: [\"*\"]\n"
			  "    mask_paths: [\"~/.aws\", \"~/.databrickscfg\"]\n",
	    CRED "      - {type: https_bearer, target: a.example.com, source: {file: "
		 "~/proj/sub/.s/tok}}\n    read_paths: [\"~/proj\"]\n    cwd_hidden_scan_recursive: "
		 "true\n",
	};

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		struct run r = compile(ok[i]);

		cr_expect_not_null(r.policy, "policy %zu failed:\n%s", i, r.diags);
		run_free(&r);
	}
}

/* Hidden by a mask on the file alone: the launch decides (DATABRICKS_CONFIG_FILE). */
Test(credential_files, a_secret_hidden_as_a_dotfile_of_its_own_is_left_to_the_launch)
{
	struct run r = compile(CRED DBX "    read_paths: [\"~\"]\n");

	cr_expect_not_null(r.policy, "%s", r.diags);
	run_free(&r);
}

Test(credential_files, an_env_source_is_never_passed_through)
{
	expect_error(CRED "      - {type: https_bearer, target: a.example.com, source: {env: "
			  "TOKEN}}\n    env_passthrough: [EDITOR, TOKEN]\n",
		     "5:67: error: credential source env 'TOKEN' is also passed to the sandbox by "
		     "env_passthrough at line 6, which would hand it the real secret; take it out "
		     "of env_passthrough");
	expect_error(CRED "      - {type: aws_sigv4, target: s3.example.com, region: us-east-1,\n"
			  "         credential: {access_key_id: {env: K}, secret_access_key: {env: "
			  "LC_SECRET}}}\n",
		     "6:73: error: credential source env 'LC_SECRET' is a variable every sandbox "
		     "gets from the host (PATH, HOME, USER, LOGNAME, SHELL, TERM, TZ, LANG, "
		     "LANGUAGE, LC_*), which would hand it the real secret; keep the secret in a "
		     "variable of its own");
	expect_error("terminals:\n  t:\n    os_env:\n      sandbox:\n"
		     "        egress_rules: [\"* a.example.com\"]\n        env_passthrough: [T]\n"
		     "        credential_proxy:\n"
		     "          - {type: https_bearer, target: a.example.com, source: {env: T}}\n",
		     "8:71: error: credential source env 'T' is also passed to the sandbox by "
		     "env_passthrough at line 6, which would hand it the real secret; take it out "
		     "of env_passthrough");
}

Test(credential_files, the_list_names_every_file_the_proxy_reads)
{
	struct run r = compile(
	    CRED DBX AWSP
	    "      - {type: aws_sigv4, target: s3b.example.com, region: us-east-1,\n"
	    "         credential: {access_key_id: {file: /k/id}, secret_access_key: {env: S},\n"
	    "                      session_token: {unix_socket: ~/tok.sock}}}\n"
	    "      - {type: https_bearer, target: a.example.com, source: {command: cat /x}}\n");
	const struct sandbox *sb;
	struct cred_host_file f[CRED_HOST_FILES_MAX];

	cr_assert_not_null(r.policy, "%s", r.diags);
	sb = &r.policy->os_env.sandbox;
	cr_assert_eq(cred_host_files(r.arena, &sb->creds[0], NULL, f), 1);
	cr_expect_str_eq(f[0].path.symbolic, "{HOME}/.databrickscfg");
	cr_expect_str_eq(f[0].what, "databricks_cli configuration");
	cr_expect_eq(f[0].path.loc.line, 5);
	cr_assert_eq(cred_host_files(r.arena, &sb->creds[0], "/etc/db.cfg", f), 1);
	cr_expect_str_eq(f[0].path.symbolic, "/etc/db.cfg");
	cr_assert_eq(cred_host_files(r.arena, &sb->creds[0], "~/db/cfg", f), 1);
	cr_expect_str_eq(f[0].path.symbolic, "{HOME}/db/cfg");
	cr_assert_eq(cred_host_files(r.arena, &sb->creds[0], "db.cfg", f), 1);
	cr_expect_eq(f[0].path.base, PATH_LAUNCH);
	cr_expect_str_eq(f[0].path.rel, "db.cfg");
	cr_assert_eq(cred_host_files(r.arena, &sb->creds[0], "", f), 1);
	cr_expect_str_eq(f[0].path.symbolic, "{HOME}/.databrickscfg");
	cr_assert_eq(cred_host_files(r.arena, &sb->creds[1], "/ignored", f), 1);
	cr_expect_str_eq(f[0].path.symbolic, "{HOME}/.aws/credentials");
	cr_expect_str_eq(f[0].what, "aws_sigv4 shared credentials file");
	cr_assert_eq(cred_host_files(r.arena, &sb->creds[2], NULL, f), 2);
	cr_expect_str_eq(f[0].path.symbolic, "/k/id");
	cr_expect_not(f[0].socket);
	cr_expect_str_eq(f[1].path.symbolic, "{HOME}/tok.sock");
	cr_expect(f[1].socket);
	cr_expect_str_eq(f[1].what, "credential socket");
	cr_expect_eq(cred_host_files(r.arena, &sb->creds[3], NULL, f), 0);
	run_free(&r);
}

/* ---- limits ------------------------------------------------------------------------------------
 */

Test(limits, units_are_strict)
{
	expect_error(
	    SB "    limits: {memory: 512}\n",
	    "3:22: error: os_env.sandbox.limits.memory needs a unit (512MiB, 2GiB; KiB MiB "
	    "GiB TiB or KB MB GB TB)");
	expect_error(SB "    limits: {memory: 512mb}\n",
		     "3:25: error: os_env.sandbox.limits.memory: unknown unit 'mb' (512MiB, 2GiB; "
		     "KiB MiB GiB TiB or KB MB GB TB)");
	expect_error(SB "    limits: {memory: MiB}\n",
		     "3:22: error: os_env.sandbox.limits.memory must start with a number, like "
		     "512MiB, 2GiB; KiB MiB GiB TiB or KB MB GB TB");
	expect_error(SB "    limits: {memory: 0GiB}\n",
		     "3:22: error: os_env.sandbox.limits.memory must be above zero");
	expect_error(SB "    limits: {memory: 99999999999999999999KiB}\n",
		     "3:22: error: os_env.sandbox.limits.memory is too large");
	expect_error(SB "    limits: {memory: 99999999999TiB}\n",
		     "3:22: error: os_env.sandbox.limits.memory is too large");
	expect_error(SB "    limits: {memory: true}\n",
		     "3:22: error: os_env.sandbox.limits.memory must be a quantity like 512MiB, "
		     "2GiB; KiB MiB GiB TiB or KB MB GB TB, got the boolean true");
	expect_error(SB "    limits: {cpu_time: 90}\n",
		     "3:24: error: os_env.sandbox.limits.cpu_time needs a unit (90s, 10m, 2h)");
	expect_error(
	    SB "    limits: {cpu_time: 1d}\n",
	    "3:25: error: os_env.sandbox.limits.cpu_time: unknown unit 'd' (90s, 10m, 2h)");
	expect_error(SB "    limits: {cpu_rate: 50}\n",
		     "3:24: error: os_env.sandbox.limits.cpu_rate needs a unit (50%)");
	expect_error(SB "    limits: {cpu_rate: 101%}\n",
		     "3:24: error: os_env.sandbox.limits.cpu_rate must be between 1% and 100%, got "
		     "101%");
	expect_error(
	    SB "    limits: {processes: 0}\n",
	    "3:25: error: os_env.sandbox.limits.processes must be between 1 and 4194304, got "
	    "0");
	expect_error(SB "    limits: {open_files: lots}\n",
		     "3:26: error: os_env.sandbox.limits.open_files must be an integer, got the "
		     "string 'lots'");
	expect_error(SB "    limits: {swap: 1GiB}\n",
		     "3:14: error: unknown key 'swap' in os_env.sandbox.limits");
	expect_error(SB "    limits: 2GiB\n",
		     "3:13: error: os_env.sandbox.limits must be a mapping, got the string '2GiB'");
}

Test(limits, values_are_normalised)
{
	struct run r =
	    compile(SB "    limits: {memory: 2GiB, processes: 64, cpu_time: 10m, cpu_rate: "
		       "50%, open_files: 1024}\n");
	const struct limits *l;

	cr_assert_not_null(r.policy, "%s", r.diags);
	l = &r.policy->os_env.sandbox.limits;
	cr_expect_eq(l->memory.value, 2ull << 30);
	cr_expect_eq(l->processes.value, 64);
	cr_expect_eq(l->cpu_time.value, 600);
	cr_expect_eq(l->cpu_rate.value, 50);
	cr_expect_eq(l->open_files.value, 1024);
	run_free(&r);
}

/* ---- terminals ----------------------------------------------------------------------------------
 */

Test(terminals, os_env_is_inherit_or_a_mapping)
{
	expect_error(
	    "terminals:\n  t:\n    os_env: own\n",
	    "3:13: error: terminals.t.os_env must be 'inherit' or a mapping, got the string "
	    "'own'");
}

Test(terminals, override_is_refused_with_egress)
{
	expect_error(SB "    egress_rules: [GET x.com]\nterminals:\n  t:\n    "
			"allow_sandbox_override: true\n",
		     "6:29: error: terminals.t.allow_sandbox_override cannot be true: the "
		     "terminal's sandbox has egress_rules (line 3), which an override would drop");
	expect_error("terminals:\n  t:\n    allow_sandbox_override: true\n    os_env:\n      "
		     "sandbox: {egress_rules: [GET x.com]}\n",
		     "3:29: error: terminals.t.allow_sandbox_override cannot be true: the "
		     "terminal's sandbox has egress_rules (line 5), which an override would drop");
}

Test(terminals, fields_are_typed)
{
	expect_error("terminals:\n  t:\n    command: [bash]\n",
		     "3:14: error: terminals.t.command must be a string, got a list");
	expect_error(
	    "terminals:\n  t:\n    args: [a, ~]\n",
	    "3:15: error: terminals.t.args[1] must be a string, got null (a bare ~ is null "
	    "in YAML; write \"~\" for the home directory)");
	expect_error("terminals:\n  t:\n    env: {A-B: x}\n",
		     "3:11: error: terminals.t.env: 'A-B' is not an environment variable name "
		     "([A-Za-z_][A-Za-z0-9_]*)");
	expect_error(
	    "terminals:\n  t:\n    scrollback: lots\n",
	    "3:17: error: terminals.t.scrollback must be an integer, got the string 'lots'");
	expect_error("terminals:\n  t:\n    env_unset: [A, 1B]\n",
		     "3:20: error: terminals.t.env_unset[1]: '1B' is not an environment variable "
		     "name ([A-Za-z_][A-Za-z0-9_]*)");
	expect_error("terminals:\n  [a]: {}\n",
		     "2:3: error: terminal names must be strings, got a list");
	expect_error("terminals:\n  \"a\\nb\": {}\n",
		     "2:3: error: terminal name the string 'a\\x0ab' contains a control character");
}

Test(terminals, selection_gives_the_effective_policy)
{
	struct run r =
	    compile(SB "    write_paths: [.]\nterminals:\n  a: {}\n  beta:\n    command: zsh\n"
		       "    args: [-l, 5]\n    os_env:\n      sandbox: {allow_network: false}\n");
	struct diag d;
	struct policy *a, *b, *none;

	cr_assert_not_null(r.policy, "%s", r.diags);
	diag_init(&d, r.arena, "t.yaml", NULL, 0);
	a = policy_select_terminal(r.arena, &d, r.policy, "a");
	b = policy_select_terminal(r.arena, &d, r.policy, "beta");
	cr_assert_not_null(a);
	cr_assert_not_null(b);
	cr_expect_str_eq(a->terminal->command.s, "bash");
	cr_expect_eq(a->os_env.sandbox.write_paths.n, 1);
	cr_expect_str_eq(b->terminal->command.s, "zsh");
	cr_assert_eq(b->terminal->args.n, 2);
	cr_expect_str_eq(b->terminal->args.v[1].s, "5");
	cr_expect_eq(b->os_env.sandbox.write_paths.n, 0);
	cr_expect_eq(b->os_env.sandbox.allow_network.value, false);
	none = policy_select_terminal(r.arena, &d, r.policy, "c");
	cr_expect_null(none);
	cr_expect_eq(d.errors, 1);
	cr_expect_str_eq(d.v[0].message, "no terminal named 'c'");
	none = policy_select_terminal(r.arena, &d, r.policy, "bta");
	cr_expect_str_eq(d.v[1].message, "no terminal named 'bta' (did you mean 'beta'?)");
	run_free(&r);
}

/* ---- the document
 * ---------------------------------------------------------------------------------- */

Test(document, empty_and_non_mapping_files)
{
	expect_error("", " error: the file is empty: expected an agent definition (a mapping)");
	expect_error("# only a comment\n",
		     " error: the file is empty: expected an agent definition (a mapping)");
	expect_error("- a\n", "1:1: error: the top level must be a mapping, got a list");
	expect_error("just text\n",
		     "1:1: error: the top level must be a mapping, got the string 'just text'");
}

Test(document, yaml_errors_are_located)
{
	expect_error(
	    "os_env:\n  sandbox: {write_paths: [.}\n",
	    "2:28: error: YAML syntax error: did not find expected ',' or ']' while parsing "
	    "a flow sequence that started at line 2");
	/* An unclosed list is the mistake where it opened, not where it was noticed. */
	expect_error("os_env:\n  sandbox:\n    write_paths: [.\n    allow_network: true\n",
		     "3:18: error: YAML syntax error: this [ list opened here is not closed (did "
		     "not find expected ',' or ']', at line 4 column 18)");
	expect_error("os_env:\n  sandbox: {write_paths: [.],\n  allow_network: true\nx: 1\n",
		     "2:12: error: YAML syntax error: this { mapping opened here is not closed (did "
		     "not find expected ',' or '}', at line 4 column 2)");
	expect_error("os_env: {}\n---\nx: 1\n",
		     "2:1: error: a second YAML document; an agent file holds exactly one");
	expect_error("os_env: &a\n  sandbox:\n    write_paths: *a\n",
		     "3:18: error: YAML alias '*a' refers to a node that contains it");
	expect_error("os_env:\n  cwd: *nope\n", "2:8: error: unknown YAML anchor 'nope'");
}

Test(document, a_tab_used_for_indentation_is_named)
{
	expect_error(SB "\twrite_paths: [.]\n",
		     "3:1: error: YAML syntax error: a tab cannot indent YAML; use spaces");
}

Test(document, invalid_utf8_is_reported_with_its_position)
{
	const char yaml[] = "os_env:\n  cwd: ab\xff\n";
	struct run r = compile_text(yaml, sizeof(yaml) - 1);

	cr_expect_null(r.policy);
	cr_expect(has_line(r.diags, "t.yaml:2:10: error: invalid YAML input: invalid leading "
				    "UTF-8 octet"),
		  "%s", r.diags);
	run_free(&r);
}

Test(document, deep_nesting_is_refused)
{
	char yaml[400];
	size_t n = 0;

	n += (size_t)snprintf(yaml + n, sizeof(yaml) - n, "x: ");
	for (int i = 0; i < 70; i++)
		yaml[n++] = '[';
	for (int i = 0; i < 70; i++)
		yaml[n++] = ']';
	yaml[n++] = '\n';
	yaml[n] = '\0';
	expect_error(yaml, "1:67: error: YAML nesting deeper than 64 levels");
}

Test(document, an_alias_bomb_costs_nothing)
{
	/* Nine levels of ten-fold aliases: a billion nodes if expanded. */
	char yaml[2048];
	size_t n = 0;

	n += (size_t)snprintf(yaml + n, sizeof(yaml) - n, "a0: &a0 [x]\n");
	for (int i = 1; i < 10; i++)
		n += (size_t)snprintf(
		    yaml + n, sizeof(yaml) - n,
		    "a%d: &a%d [*a%d,*a%d,*a%d,*a%d,*a%d,*a%d,*a%d,*a%d,*a%d,*a%d]\n", i, i, i - 1,
		    i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1);
	snprintf(yaml + n, sizeof(yaml) - n, "os_env: {}\n");
	{
		struct run r = compile(yaml);

		cr_expect_not_null(r.policy, "%s", r.diags);
		run_free(&r);
	}
}

Test(document, errors_stop_after_twenty)
{
	char yaml[4096];
	size_t n = 0;
	struct run r;

	n += (size_t)snprintf(yaml + n, sizeof(yaml) - n, SB);
	for (int i = 0; i < 30; i++)
		n += (size_t)snprintf(yaml + n, sizeof(yaml) - n, "    bad%d: 1\n", i);
	r = compile(yaml);
	cr_expect_null(r.policy);
	cr_expect_eq(r.errors, 20);
	cr_expect(has_line(r.diags, "t.yaml: note: stopped after 20 errors"), "%s", r.diags);
	cr_expect(has_line(r.diags, "t.yaml:22:5: error: unknown key 'bad19' in os_env.sandbox"),
		  "%s", r.diags);
	cr_expect(!strstr(r.diags, "'bad20'"), "%s", r.diags);
	run_free(&r);
}

Test(document, diagnostics_show_the_line_and_a_caret)
{
	struct run r = compile(SB "    write_path: [.]\n");

	cr_expect_str_eq(
	    r.diags, "t.yaml:3:5: error: unknown key 'write_path' in os_env.sandbox (did you mean "
		     "'write_paths'?)\n"
		     "    3 |     write_path: [.]\n"
		     "      |     ^~~~~~~~~~\n");
	run_free(&r);
}

/* Nothing in OUT a terminal would act on: no control byte but the line breaks, no C1. */
static bool
inert(const char *out)
{
	for (const unsigned char *p = (const unsigned char *)out; *p; p++)
		if ((*p < 0x20 && *p != '\n') || *p == 0x7f ||
		    (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f))
			return false;
	return !strstr(out, "\xe2\x80\xae");
}

Test(document, diagnostics_escape_a_key_the_file_spelled)
{
	/* A key with ESC and BEL (YAML escapes) and a raw U+202E (printable to YAML). */
	struct run r = compile(SB "    \"wr\\e[2J\\a\xe2\x80\xaeite\": 1\n");

	cr_expect(inert(r.diags), "%s", r.diags);
	cr_expect_str_eq(r.diags, "t.yaml:3:5: error: unknown key 'wr\\x1b[2J\\x07\\u202eite' in "
				  "os_env.sandbox\n"
				  "    3 |     \"wr\\e[2J\\a\\u202eite\": 1\n"
				  "      |     ^~~~~~~~~~~~~~~~~~~~\n");
	run_free(&r);
}

Test(document, diagnostics_escape_the_source_line_and_keep_the_caret)
{
	/*
	 * Raw bytes YAML refuses: ESC (the error's column, after a U+202E shown
	 * six columns wide), BEL, DEL and a C1 CSI after it.
	 */
	const char yaml[] = "os_env:\n  cwd: a\xe2\x80\xae"
			    "b\x1b]0;x\x07\x7f\xc2\x9b"
			    "2J\n";
	struct run r = compile_text(yaml, sizeof(yaml) - 1);

	cr_expect_null(r.policy);
	cr_expect(inert(r.diags), "%s", r.diags);
	cr_expect_str_eq(r.diags,
			 "t.yaml:2:11: error: invalid YAML input: control characters are not "
			 "allowed\n"
			 "    2 |   cwd: a\\u202eb\\x1b]0;x\\x07\\x7f\\u009b2J\n"
			 "      |                ^~~~\n");
	run_free(&r);
}

Test(document, diagnostics_come_out_in_source_order)
{
	struct run r = compile(SB "    egress_rules: [GET x.com]\n    type: none\n    bad: 1\n");
	const char *a = strstr(r.diags, "t.yaml:3:5:"), *b = strstr(r.diags, "t.yaml:5:5:");

	cr_assert(a && b, "%s", r.diags);
	cr_expect(a < b, "%s", r.diags);
	run_free(&r);
}
