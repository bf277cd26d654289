/*
 * test_env.c - the command's environment (compiler/decide/env.c): the exact
 * NAME=VALUE arrays env_compute() gives for a host environment, for a
 * sandboxed launch, for sandbox type none and for Windows, and the rules
 * the winjob manifest carries giving the same array once read back.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "compiler/decide/env.h"
#include "compiler/policy.h"
#include "emitters/emit.h"
#include "emitters/winjob.h"
#include "runtime/win/manifest.h"

#define TERMINAL                                                                                   \
	"terminals:\n"                                                                             \
	"  t:\n"                                                                                   \
	"    command: x\n"                                                                         \
	"    env: {CI: \"1\", KEEP: from-terminal}\n"                                              \
	"    env_unset: [USER]\n"

/* A policy from YAML, for terminal t when the YAML has one. */
static struct policy *
compile(struct arena *a, const char *yaml)
{
	struct diag d;
	struct policy *p;

	diag_init(&d, a, "t.yaml", yaml, strlen(yaml));
	p = policy_compile(a, &d, "t.yaml", yaml, strlen(yaml));
	cr_assert(p, "the policy does not compile:\n%s", yaml);
	if (strstr(yaml, "terminals:"))
		p = policy_select_terminal(a, &d, p, "t");
	cr_assert(p && !d.errors);
	return p;
}

/* -Wwrite-strings: environments are arrays of char *. */
#define ENV(h) ((char *const *)(h))

static void
expect_env(char **got, const char *const *want)
{
	size_t i = 0;

	for (; want[i]; i++) {
		cr_assert(got[i], "entry %zu is missing: want '%s'", i, want[i]);
		cr_expect_str_eq(got[i], want[i], "entry %zu: '%s', want '%s'", i, got[i], want[i]);
	}
	cr_expect_null(got[i], "an entry too many: '%s'", got[i] ? got[i] : "");
}

static const char *const host[] = {"PATH=/usr/bin",    "USER=agent",	      "SECRET_TOKEN=hush",
				   "HOME=/home/u",     "LD_PRELOAD=/evil.so", "LC_ALL=C.UTF-8",
				   "TMPDIR=/host-tmp", "KEEP=host",	      "AWS_PROFILE=dev",
				   "NO_VALUE",	       "=C:=C:\\dir",	      NULL};

Test(env, a_sandboxed_launch_gets_the_allow_list_then_omnibox_values_then_the_terminal)
{
	struct arena *a = arena_new();
	struct policy *p =
	    compile(a, "os_env:\n  sandbox:\n    env_passthrough: [AWS_PROFILE]\n" TERMINAL);
	struct env_value extra[] = {{"GITHUB_TOKEN", "oa_cred_x", NULL, 0}};
	struct env_launch l = {.pwd = "/ws", .extra = extra, .n_extra = 1};
	static const char *const want[] = {"PATH=/usr/bin",
					   "HOME=/home/u",
					   "LC_ALL=C.UTF-8",
					   "AWS_PROFILE=dev",
					   "TMPDIR=/s",
					   "TMP=/s",
					   "TEMP=/s",
					   "TEMPDIR=/s",
					   "PWD=/ws",
					   "GITHUB_TOKEN=oa_cred_x",
					   "CI=1",
					   "KEEP=from-terminal",
					   NULL};

	expect_env(env_compute(a, p, &l, ENV(host), "/s"), want);
	arena_free(a);
}

Test(env, sandbox_type_none_applies_env_unset_and_sets_no_scratch_dir)
{
	struct arena *a = arena_new();
	struct policy *p = compile(
	    a,
	    "os_env:\n  sandbox:\n    type: none\n    env_passthrough: [AWS_PROFILE]\n" TERMINAL);
	struct env_launch l = {.pwd = "/ws"};
	static const char *const want[] = {
	    "PATH=/usr/bin", "HOME=/home/u", "LC_ALL=C.UTF-8",	   "AWS_PROFILE=dev",
	    "PWD=/ws",	     "CI=1",	     "KEEP=from-terminal", NULL};

	expect_env(env_compute(a, p, &l, ENV(host), NULL), want);
	arena_free(a);
}

/* The XDG base directories follow $HOME inside: a host value is never passed. */
static const char *const xdg_host[] = {"PATH=/usr/bin",
				       "HOME=/home/u",
				       "XDG_CONFIG_HOME=/srv/cfg",
				       "XDG_CACHE_HOME=/var/cache/u",
				       "XDG_DATA_HOME=/home/u/.local/share",
				       "XDG_STATE_HOME=/home/u/.st",
				       NULL};

Test(env, xdg_base_directories_are_not_passed_to_a_sandbox_even_through_env_passthrough)
{
	struct arena *a = arena_new();
	struct policy *p = compile(a, "os_env:\n  sandbox:\n    env_passthrough: [XDG_CONFIG_HOME, "
				      "XDG_CACHE_HOME, XDG_DATA_HOME, XDG_STATE_HOME]\n");
	struct env_launch l = {.pwd = "/ws"};
	struct env_rules rules;
	static const char *const want[] = {"PATH=/usr/bin", "HOME=/home/u", "TMPDIR=/s", "TMP=/s",
					   "TEMP=/s",	    "TEMPDIR=/s",   "PWD=/ws",	 NULL};
	size_t unset = 0;

	expect_env(env_compute(a, p, &l, ENV(xdg_host), "/s"), want);
	/* --emit=env says why each one named is left out. */
	env_decide(a, p, &l, &rules);
	for (size_t i = 0; i < rules.n; i++) {
		cr_expect(rules.v[i].op != ENV_PASS || strncmp(rules.v[i].name, "XDG_", 4),
			  "%s passes", rules.v[i].name);
		if (rules.v[i].op == ENV_UNSET && !strncmp(rules.v[i].name, "XDG_", 4)) {
			unset++;
			cr_expect_str_eq(rules.v[i].why,
					 "env_passthrough (line 3): not passed; inside, the XDG base "
					 "directories follow $HOME");
		}
	}
	cr_expect_eq(unset, 4, "%zu XDG names unset, want 4", unset);
	arena_free(a);
}

Test(env, xdg_base_directories_pass_through_to_sandbox_type_none_and_a_terminal_may_set_them)
{
	struct arena *a = arena_new();
	struct policy *p = compile(a, "os_env:\n  sandbox:\n    type: none\n    env_passthrough: "
				      "[XDG_CACHE_HOME]\n");
	struct env_launch l = {.pwd = "/ws"};
	static const char *const none[] = {"PATH=/usr/bin", "HOME=/home/u",
					   "XDG_CACHE_HOME=/var/cache/u", "PWD=/ws", NULL};
	static const char *const term[] = {"PATH=/usr/bin", "HOME=/home/u", "TMPDIR=/s",
					   "TMP=/s",	    "TEMP=/s",	    "TEMPDIR=/s",
					   "PWD=/ws",	    "XDG_CACHE_HOME=/home/u/c", NULL};

	expect_env(env_compute(a, p, &l, ENV(xdg_host), NULL), none);
	p = compile(a, "os_env:\n  sandbox:\n    env_passthrough: [XDG_CACHE_HOME]\n"
		       "terminals:\n  t:\n    command: x\n    env: {XDG_CACHE_HOME: /home/u/c}\n");
	expect_env(env_compute(a, p, &l, ENV(xdg_host), "/s"), term);
	arena_free(a);
}

Test(env, egress_sets_the_relay_and_the_session_ca_in_the_scratch_dir)
{
	struct arena *a = arena_new();
	struct policy *p =
	    compile(a, "os_env:\n  sandbox:\n    egress_rules:\n      - \"GET example.com/**\"\n");
	struct env_launch l = {.pwd = "/ws", .proxy_url = "http://127.0.0.1:9"};
	static const char *const h[] = {"HTTPS_PROXY=http://host-proxy", "PATH=/bin", NULL};
	static const char *const want[] = {"PATH=/bin",
					   "TMPDIR=/s",
					   "TMP=/s",
					   "TEMP=/s",
					   "TEMPDIR=/s",
					   "PWD=/ws",
					   "HTTP_PROXY=http://127.0.0.1:9",
					   "HTTPS_PROXY=http://127.0.0.1:9",
					   "http_proxy=http://127.0.0.1:9",
					   "https_proxy=http://127.0.0.1:9",
					   "ALL_PROXY=http://127.0.0.1:9",
					   "NO_PROXY=localhost,127.0.0.1,::1",
					   "no_proxy=localhost,127.0.0.1,::1",
					   "SSL_CERT_FILE=/s/omnibox-ca.pem",
					   "REQUESTS_CA_BUNDLE=/s/omnibox-ca.pem",
					   "NODE_EXTRA_CA_CERTS=/s/omnibox-ca.pem",
					   "CURL_CA_BUNDLE=/s/omnibox-ca.pem",
					   "PIP_CERT=/s/omnibox-ca.pem",
					   "GIT_SSL_CAINFO=/s/omnibox-ca.pem",
					   "npm_config_cafile=/s/omnibox-ca.pem",
					   "DENO_CERT=/s/omnibox-ca.pem",
					   "CARGO_HTTP_CAINFO=/s/omnibox-ca.pem",
					   "SSL_CERT_DIR=/s:/etc/ssl/certs",
					   "JAVA_TOOL_OPTIONS=-Djavax.net.ssl.trustStore=/s/omnibox-ca.jks "
					   "-Djavax.net.ssl.trustStoreType=JKS -Dhttps.proxyHost=127.0.0.1 "
					   "-Dhttps.proxyPort=9 -Dhttp.proxyHost=127.0.0.1 -Dhttp.proxyPort=9 "
					   "-Dhttp.nonProxyHosts=localhost|127.0.0.1|[::1]",
					   NULL};

	expect_env(env_compute(a, p, &l, ENV(h), "/s"), want);
	arena_free(a);
}

static const char *const winhost[] = {"Path=C:\\bin",
				      "=C:=C:\\dir",
				      "git_dir=C:\\repo",
				      "temp=C:\\host-temp",
				      "PROCESSOR_ARCHITECTURE=AMD64",
				      "SystemRoot=C:\\windows",
				      "HOME=C:\\u",
				      "user=agent",
				      "SECRET_TOKEN=hush",
				      NULL};

static const char *const winwant[] = {"Path=C:\\bin",
				      "git_dir=C:\\repo",
				      "PROCESSOR_ARCHITECTURE=AMD64",
				      "SystemRoot=C:\\windows",
				      "TEMP=S:\\x",
				      "TMP=S:\\x",
				      "CI=1",
				      "KEEP=from-terminal",
				      NULL};

#define WINPOLICY "os_env:\n  sandbox:\n    env_passthrough: [GIT_DIR, USER]\n" TERMINAL

Test(env, windows_names_compare_without_regard_to_case)
{
	struct arena *a = arena_new();
	struct policy *p = compile(a, WINPOLICY);
	struct env_launch l = {.windows = true};

	expect_env(env_compute(a, p, &l, ENV(winhost), "S:\\x"), winwant);
	arena_free(a);
}

Test(env, the_winjob_manifest_carries_the_rules_and_gives_the_same_environment)
{
	struct arena *a = arena_new();
	struct policy *p = compile(a, WINPOLICY);
	struct textbuf out = {0};
	struct diag d;
	struct manifest m;
	struct manifest_error err;

	diag_init(&d, a, "t.yaml", WINPOLICY, strlen(WINPOLICY));
	cr_assert_eq(emit_winjob(p, TARGET_WINDOWS, &d, &out), 0);
	cr_assert_eq(manifest_parse(out.data, out.len, &m, &err), 0, "line %u: %s", err.line,
		     err.message);
	expect_env(env_apply(a, m.env, m.n_env, true, ENV(winhost), "S:\\x"), winwant);
	manifest_free(&m);
	tb_free(&out);
	arena_free(a);
}

Test(env, a_set_replaces_every_entry_of_its_name_and_an_unset_removes_them_all)
{
	struct arena *a = arena_new();
	const struct env_rule rules[] = {
	    {.op = ENV_PASS, .name = "A"},
	    {.op = ENV_PASS_PREFIX, .name = "B_"},
	    {.op = ENV_SET, .name = "A", .value = "new"},
	    {.op = ENV_SET_SCRATCH, .name = "T", .value = "/f"},
	    {.op = ENV_UNSET, .name = "B_2"},
	    {.op = ENV_SET, .name = "C", .value = "c"},
	};
	static const char *const h[] = {"A=1",	"B_1=x", "A=2",	    "B_2=y",
					"B_=z", "AB=no", "a=lower", NULL};
	static const char *const want[] = {"A=new", "B_1=x", "B_=z", "T=/s/f", "C=c", NULL};

	expect_env(env_apply(a, rules, 6, false, ENV(h), "/s"), want);
	arena_free(a);
}

Test(env, variable_names_are_those_of_the_schema)
{
	cr_expect(env_name_ok("A"));
	cr_expect(env_name_ok("_a9"));
	cr_expect_not(env_name_ok(""));
	cr_expect_not(env_name_ok("9A"));
	cr_expect_not(env_name_ok("A-B"));
	cr_expect_not(env_name_ok("A=B"));
}

Test(env, a_name_passes_by_the_list_lc_and_env_passthrough)
{
	struct arena *a = arena_new();
	struct policy *p = compile(a, "os_env:\n  sandbox:\n    env_passthrough: [KEEP]\n");
	const struct sandbox *sb = &p->os_env.sandbox;

	cr_expect(env_name_passes(sb, "PATH=/bin"));
	cr_expect(env_name_passes(sb, "LC_TIME"));
	cr_expect(env_name_passes(sb, "KEEP"));
	cr_expect_not(env_name_passes(sb, "KEEPER=1"));
	cr_expect_not(env_name_passes(sb, "PATHX"));
	cr_expect_not(env_name_passes(sb, "LD_PRELOAD"));
	arena_free(a);
}

/* env_path_keep()'s KEEP for the tests: every absolute entry but those below /gone. */
static bool
keep_not_gone(void *arg, const char *entry)
{
	size_t *asked = arg;

	(*asked)++;
	return strncmp(entry, "/gone", 5) != 0;
}

Test(env, path_keeps_the_entries_keep_accepts_in_order_with_repeats_and_relative_ones)
{
	struct arena *a = arena_new();
	char *env[] = {arena_strdup(a, "A=1"),
		       arena_strdup(a, "PATH=/gone/shims:/usr/bin::/gone/x:.:/opt/bin:/gone/shims:"
				       "/usr/bin:bin"),
		       arena_strdup(a, "B=2"), NULL};
	static const char *const want[] = {"A=1", "PATH=/usr/bin::.:/opt/bin:/usr/bin:bin", "B=2",
					   NULL};
	const char **gone;
	size_t asked = 0;

	cr_expect_eq(env_path_keep(a, env, keep_not_gone, &asked, &gone), 3);
	expect_env(env, want);
	/* Relative and empty entries are never asked about. */
	cr_expect_eq(asked, 6);
	cr_assert(gone);
	cr_expect_str_eq(gone[0], "/gone/shims");
	cr_expect_str_eq(gone[1], "/gone/x");
	cr_expect_null(gone[2], "a dropped entry is listed once");
	arena_free(a);
}

Test(env, path_with_nothing_kept_is_removed_and_one_with_nothing_dropped_stays)
{
	struct arena *a = arena_new();
	char *all_gone[] = {arena_strdup(a, "A=1"), arena_strdup(a, "PATH=/gone/a:/gone/b"),
			    arena_strdup(a, "B=2"), NULL};
	static const char *const want_gone[] = {"A=1", "B=2", NULL};
	char *unchanged = arena_strdup(a, "PATH=/usr/bin:/bin");
	char *kept[] = {unchanged, NULL};
	char *no_path[] = {arena_strdup(a, "A=1"), NULL};
	const char **gone;
	size_t asked = 0;

	cr_expect_eq(env_path_keep(a, all_gone, keep_not_gone, &asked, &gone), 2);
	expect_env(all_gone, want_gone);
	cr_expect_eq(env_path_keep(a, kept, keep_not_gone, &asked, &gone), 0);
	cr_expect_null(gone);
	cr_expect(kept[0] == unchanged, "a PATH with nothing dropped is left as it was");
	cr_expect_eq(env_path_keep(a, no_path, keep_not_gone, &asked, NULL), 0);
	cr_expect_str_eq(no_path[0], "A=1");
	cr_expect_null(no_path[1]);
	arena_free(a);
}
