/*
 * test_credentials.c - the credential proxy outside the proxy: secret
 * sources (env, file, command), placeholders, base64 and the
 * Authorization rewriting, gh_basic's split, the databricks_cli file.
 *
 * Policies are compiled from YAML with the real front end; files and
 * commands live in a temporary home made per test.
 */
#include <criterion/criterion.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compiler/policy.h"
#include "runtime/egress/credentials.h"
#include "runtime/resolve/host.h"

static struct arena *arena;
static char home[64];
static char err[1024];

static void
setup(void)
{
	arena = arena_new();
	strcpy(home, "/tmp/omnibox-cred-XXXXXX");
	cr_assert_not_null(mkdtemp(home));
}

static void
teardown(void)
{
	rmtree(home);
	arena_free(arena);
}

TestSuite(cred_placeholder);
TestSuite(cred_base64);
TestSuite(cred_auth);
TestSuite(cred_prepare, .init = setup, .fini = teardown);

/* ---- placeholders ----------------------------------------------------------------- */

Test(cred_placeholder, has_the_prefix_and_32_alphanumerics_and_never_repeats)
{
	char a[CRED_PLACEHOLDER_LEN + 1] = {0}, b[CRED_PLACEHOLDER_LEN + 1] = {0};
	int seen[128] = {0}, distinct = 0;

	cr_assert_eq(cred_make_placeholder(a), 0);
	cr_assert_eq(cred_make_placeholder(b), 0);
	cr_assert_eq(strncmp(a, "oa_cred_", 8), 0);
	cr_assert_eq(strlen(a), 40);
	for (int i = 8; i < 40; i++) {
		cr_assert((a[i] >= 'a' && a[i] <= 'z') || (a[i] >= 'A' && a[i] <= 'Z') ||
			      (a[i] >= '0' && a[i] <= '9'),
			  "'%c' in %s", a[i], a);
		distinct += !seen[(int)a[i]]++;
	}
	cr_assert_gt(distinct, 10, "%s looks anything but random", a);
	cr_assert_neq(strcmp(a, b), 0);
}

Test(cred_placeholder, is_found_plain_and_percent_encoded)
{
	const char *ph = "oa_cred_abcdefghijklmnopqrstuvwxyz012345";

	cr_assert(cred_has_placeholder(ph, strlen(ph)));
	cr_assert(cred_has_placeholder("token=oa_cred_x&y", 17));
	cr_assert(cred_has_placeholder("/?t=oa%5Fcred%5fXYZ", 19));
	cr_assert(cred_has_placeholder("OA_CRED_x", 9), "the letters' case does not hide it");
	cr_assert_not(cred_has_placeholder("oa-cred-x", 9));
	cr_assert_not(cred_has_placeholder("oa_cre", 6));
	cr_assert_not(cred_has_placeholder("oa_cred", 7), "the prefix needs its last '_'");
	cr_assert_not(cred_has_placeholder("", 0));
}

/* ---- base64 ---------------------------------------------------------------------- */

Test(cred_base64, rfc_4648_vectors_both_ways)
{
	static const char *const plain[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
	static const char *const enc[] = {"",	      "Zg==",	  "Zm8=",    "Zm9v",
					  "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};

	for (size_t i = 0; i < 7; i++) {
		char out[32] = {0};
		unsigned char back[32] = {0};
		size_t n = cred_base64_encode(plain[i], strlen(plain[i]), out);

		cr_assert_eq(n, strlen(enc[i]));
		cr_assert_eq(memcmp(out, enc[i], n), 0, "%s -> %.*s", plain[i], (int)n, out);
		cr_assert_eq(cred_base64_decode(enc[i], strlen(enc[i]), back, sizeof(back)),
			     (ssize_t)strlen(plain[i]));
		cr_assert_eq(memcmp(back, plain[i], strlen(plain[i])), 0);
	}
}

Test(cred_base64, only_canonical_padded_base64_decodes)
{
	static const char *const bad[] = {"Zg",	  "Zg=",   "Z===",  "Zh==",
					  "Zm9=", "Zm9v=", "Zm 9v", "Zm9v\n",
					  "Z=g=", "=Zg=",  "Zm-v",  "Zm9vYg==Zg=="};
	unsigned char out[64];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_eq(cred_base64_decode(bad[i], strlen(bad[i]), out, sizeof(out)), -1,
			     "'%s' decoded", bad[i]);
	cr_assert_eq(cred_base64_decode("Zm9vYmFy", 8, out, 5), -1, "too small a buffer");
}

/* ---- Authorization ------------------------------------------------------------------- */

#define PH "oa_cred_AAAAbbbbCCCCddddEEEEffffGGGGhhhh"
#define OTHER "oa_cred_ZZZZyyyyXXXXwwwwVVVVuuuuTTTTssss"

static const char *
rewrite(const struct proxy_cred *c, const char *value, enum cred_auth *verdict)
{
	static char out[1024];

	cr_assert_eq(cred_rewrite_authorization(c, value, strlen(value), out, sizeof(out), verdict),
		     0);
	return out;
}

static const char *
basic(const char *userpass)
{
	static char out[512];

	strcpy(out, "Basic ");
	out[6 + cred_base64_encode(userpass, strlen(userpass), out + 6)] = '\0';
	return out;
}

Test(cred_auth, bearer_and_token_placeholders_become_the_secret)
{
	struct proxy_cred c = {"api.test", 443, CRED_SCHEME_BEARER, NULL, "s3cret", PH, NULL};
	enum cred_auth v;
	const char *out;

	out = rewrite(&c, "Bearer " PH, &v);
	cr_assert_eq(v, CRED_AUTH_SWAPPED);
	cr_assert_str_eq(out, "Bearer s3cret");
	out = rewrite(&c, "token " PH, &v);
	cr_assert_eq(v, CRED_AUTH_SWAPPED);
	cr_assert_str_eq(out, "token s3cret");
	out = rewrite(&c, "bearer " PH, &v);
	cr_assert_str_eq(out, "bearer s3cret");
}

Test(cred_auth, the_basic_password_is_swapped_and_re_encoded)
{
	struct proxy_cred c = {"github.com", 443, CRED_SCHEME_BASIC, "x-access-token", "ghp_real",
			       PH,	     NULL};
	enum cred_auth v;
	const char *out = rewrite(&c, basic("x-access-token:" PH), &v);

	cr_assert_eq(v, CRED_AUTH_SWAPPED);
	cr_assert_str_eq(out, basic("x-access-token:ghp_real"));
	/* The user the client chose stays. */
	out = rewrite(&c, basic("someone:" PH), &v);
	cr_assert_str_eq(out, basic("someone:ghp_real"));
	/* A token sent as the user name is the same placeholder. */
	out = rewrite(&c, basic(PH ":x-oauth-basic"), &v);
	cr_assert_eq(v, CRED_AUTH_SWAPPED);
	cr_assert_str_eq(out, basic("ghp_real:x-oauth-basic"));
}

Test(cred_auth, anything_without_a_placeholder_is_left_alone)
{
	struct proxy_cred c = {"api.test", 443, CRED_SCHEME_BEARER, NULL, "s3cret", PH, NULL};
	enum cred_auth v;

	rewrite(&c, "Bearer the-agents-own-token", &v);
	cr_assert_eq(v, CRED_AUTH_KEEP);
	rewrite(&c, basic("me:mine"), &v);
	cr_assert_eq(v, CRED_AUTH_KEEP);
	rewrite(&c, "Digest username=x", &v);
	cr_assert_eq(v, CRED_AUTH_KEEP);
}

Test(cred_auth, a_foreign_or_malformed_placeholder_is_refused)
{
	struct proxy_cred c = {"api.test", 443, CRED_SCHEME_BEARER, NULL, "s3cret", PH, NULL};
	struct proxy_cred swap = {"api.test", 443, CRED_SCHEME_BEARER, NULL, "s3cret", NULL, NULL};
	enum cred_auth v;

	rewrite(&c, "Bearer " OTHER, &v);
	cr_assert_eq(v, CRED_AUTH_REFUSE);
	rewrite(&c, "Bearer " PH "x", &v);
	cr_assert_eq(v, CRED_AUTH_REFUSE);
	rewrite(&c, "Bearer " PH " " PH, &v);
	cr_assert_eq(v, CRED_AUTH_REFUSE);
	rewrite(&c, "Digest oa_cred_x", &v);
	cr_assert_eq(v, CRED_AUTH_REFUSE);
	rewrite(&c, basic("x:" OTHER), &v);
	cr_assert_eq(v, CRED_AUTH_REFUSE);
	rewrite(&c, basic(PH ":" OTHER), &v);
	cr_assert_eq(v, CRED_AUTH_REFUSE);
	rewrite(&c, "Basic not-base64-" PH, &v);
	cr_assert_eq(v, CRED_AUTH_REFUSE);
	/* Swap-on-access: the sandbox holds no placeholder, so any is foreign. */
	rewrite(&swap, "Bearer " PH, &v);
	cr_assert_eq(v, CRED_AUTH_REFUSE);
}

Test(cred_auth, what_the_proxy_adds_when_there_is_none)
{
	struct proxy_cred bearer = {"h", 443, CRED_SCHEME_BEARER, NULL, "s3", NULL, NULL};
	struct proxy_cred token = {"h", 443, CRED_SCHEME_TOKEN, NULL, "s3", NULL, NULL};
	struct proxy_cred basic_default = {"h", 443, CRED_SCHEME_BASIC, NULL, "s3", NULL, NULL};
	struct proxy_cred basic_user = {"h", 443, CRED_SCHEME_BASIC, "ci-bot", "s3", NULL, NULL};
	char out[256];

	cr_assert_eq(cred_authorization_value(&bearer, out, sizeof(out)), 9);
	cr_assert_str_eq(out, "Bearer s3");
	cred_authorization_value(&token, out, sizeof(out));
	cr_assert_str_eq(out, "token s3");
	cred_authorization_value(&basic_default, out, sizeof(out));
	cr_assert_str_eq(out, basic("x-access-token:s3"));
	cred_authorization_value(&basic_user, out, sizeof(out));
	cr_assert_str_eq(out, basic("ci-bot:s3"));
	cr_assert_eq(cred_authorization_value(&bearer, out, 5), -1);
}

/* ---- cred_prepare ---------------------------------------------------------------------- */

static const struct sandbox *
compile(const char *yaml)
{
	struct diag d;
	struct policy *p;

	diag_init(&d, arena, "agent.yaml", yaml, strlen(yaml));
	p = policy_compile(arena, &d, "agent.yaml", yaml, strlen(yaml));
	if (!p)
		diag_print(&d, stderr, true);
	cr_assert_not_null(p, "the test policy does not compile");
	return &p->os_env.sandbox;
}

static void
write_file(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f, "%s: %s", path, strerror(errno));
	fputs(text, f);
	fclose(f);
	chmod(path, mode);
}

static const char *
env_of(const struct cred_runtime *rt, const char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; i < rt->n_env; i++)
		if (!strncmp(rt->env[i], name, n) && rt->env[i][n] == '=')
			return rt->env[i] + n + 1;
	return NULL;
}

static const struct proxy_cred *
cred_of(const struct cred_runtime *rt, const char *host)
{
	for (size_t i = 0; i < rt->n_creds; i++)
		if (!strcmp(rt->creds[i].host, host))
			return &rt->creds[i];
	return NULL;
}

static int
prepare(const char *yaml, const char *const *environ, struct cred_runtime *rt)
{
	return cred_prepare(arena, compile(yaml), (char *const *)environ, home, "/scratch", rt, err,
			    sizeof(err));
}

#define HEAD                                                                                       \
	"os_env:\n"                                                                                \
	"  sandbox:\n"                                                                             \
	"    egress_rules: ['* api.test/**', '* github.com', '* api.github.com',"                  \
	" '* *.databricks.test', '* files.test']\n"                                                \
	"    credential_proxy:\n"

Test(cred_prepare, an_env_source_gets_a_placeholder_in_the_sandbox)
{
	const char *env[] = {"PATH=/usr/bin:/bin", "API_TOKEN=  real-token-1 \n", NULL};
	struct cred_runtime rt;
	const struct proxy_cred *c;

	cr_assert_eq(prepare(HEAD "      - {type: https_bearer, target: api.test, source: {env: "
				  "API_TOKEN}, env: [API_TOKEN, OTHER_NAME]}\n",
			     env, &rt),
		     0, "%s", err);
	cr_assert_eq(rt.n_creds, 1);
	c = cred_of(&rt, "api.test");
	cr_assert_not_null(c);
	cr_assert_str_eq(c->secret, "real-token-1", "trimmed");
	cr_assert_eq(c->scheme, CRED_SCHEME_BEARER);
	cr_assert_null(c->username);
	cr_assert_not_null(c->placeholder);
	cr_assert_eq(rt.n_env, 2);
	cr_assert_str_eq(env_of(&rt, "API_TOKEN"), c->placeholder);
	cr_assert_str_eq(env_of(&rt, "OTHER_NAME"), c->placeholder);
	cr_assert_eq(rt.n_files, 0);
}

Test(cred_prepare, without_env_the_proxy_swaps_on_access)
{
	const char *env[] = {"TOK=t", NULL};
	struct cred_runtime rt;

	cr_assert_eq(prepare(HEAD "      - {type: https_bearer, target: api.test, source: {env: "
				  "TOK}}\n",
			     env, &rt),
		     0, "%s", err);
	cr_assert_null(rt.creds[0].placeholder);
	cr_assert_eq(rt.n_env, 0);
}

Test(cred_prepare, env_sources_must_be_set_and_not_empty)
{
	const char *unset[] = {"PATH=/bin", NULL}, *blank[] = {"TOK= \t ", NULL};
	const char *newline[] = {"TOK=abc\ndef", NULL};
	struct cred_runtime rt;
	const char *yaml =
	    HEAD "      - {type: https_bearer, target: api.test, source: {env: TOK}}\n";

	cr_assert_eq(prepare(yaml, unset, &rt), -1);
	cr_assert_str_eq(err,
			 "credential_proxy[0] (https_bearer, line 5): environment variable TOK "
			 "is not set");
	cr_assert_eq(prepare(yaml, blank, &rt), -1);
	cr_assert_str_eq(err,
			 "credential_proxy[0] (https_bearer, line 5): environment variable TOK "
			 "is empty");
	cr_assert_eq(prepare(yaml, newline, &rt), -1);
	cr_assert(strstr(err, "holds a control byte or line break"), "%s", err);
}

Test(cred_prepare, file_sources_expand_the_home_and_are_trimmed)
{
	const char *env[] = {NULL};
	char path[128];
	struct cred_runtime rt;

	snprintf(path, sizeof(path), "%s/token", home);
	write_file(path, "file-secret\n\n", 0600);
	cr_assert_eq(prepare(HEAD "      - {type: https_basic, target: files.test, username: "
				  "ci-bot, source: {file: ~/token}}\n",
			     env, &rt),
		     0, "%s", err);
	cr_assert_str_eq(rt.creds[0].secret, "file-secret");
	cr_assert_eq(rt.creds[0].scheme, CRED_SCHEME_BASIC);
	cr_assert_str_eq(rt.creds[0].username, "ci-bot");
	write_file(path, "\n  \n", 0600);
	cr_assert_eq(prepare(HEAD "      - {type: https_basic, target: files.test, source: {file: "
				  "~/token}}\n",
			     env, &rt),
		     -1);
	cr_assert(strstr(err, "is empty"), "%s", err);
	cr_assert_eq(prepare(HEAD "      - {type: https_basic, target: files.test, source: {file: "
				  "~/missing}}\n",
			     env, &rt),
		     -1);
	cr_assert(strstr(err, "No such file or directory"), "%s", err);
}

Test(cred_prepare, basic_users_default_to_x_access_token)
{
	const char *env[] = {"T=t", NULL};
	struct cred_runtime rt;

	cr_assert_eq(prepare(HEAD "      - {type: git_https, target: github.com, source: {env: "
				  "T}}\n",
			     env, &rt),
		     0, "%s", err);
	cr_assert_str_eq(rt.creds[0].username, "x-access-token");
	cr_assert_eq(rt.creds[0].scheme, CRED_SCHEME_BASIC);
}

Test(cred_prepare, commands_run_with_the_allow_listed_environment_only)
{
	const char *env[] = {"PATH=/usr/bin:/bin", "HOME=/nowhere", "AWS_SECRET_ACCESS_KEY=leak",
			     "LANG=C.UTF-8", NULL};
	struct cred_runtime rt;

	cr_assert_eq(prepare(HEAD
			     "      - {type: https_bearer, target: api.test, source: {command: "
			     "'printf \"%s|%s|%s\\n\" \"$HOME\" \"$LANG\" "
			     "\"${AWS_SECRET_ACCESS_KEY:-none}\"'}}\n",
			     env, &rt),
		     0, "%s", err);
	cr_assert_str_eq(rt.creds[0].secret, "/nowhere|C.UTF-8|none");
}

Test(cred_prepare, a_failing_or_silent_command_is_an_error)
{
	const char *env[] = {"PATH=/usr/bin:/bin", NULL};
	struct cred_runtime rt;

	cr_assert_eq(prepare(HEAD
			     "      - {type: https_bearer, target: api.test, source: {command: "
			     "'exit 3'}}\n",
			     env, &rt),
		     -1);
	cr_assert_str_eq(err, "credential_proxy[0] (https_bearer, line 5): command 'exit 3': "
			      "the command exited with status 3");
	cr_assert_eq(prepare(HEAD
			     "      - {type: https_bearer, target: api.test, source: {command: "
			     "'true'}}\n",
			     env, &rt),
		     -1);
	cr_assert(strstr(err, "its output is empty"), "%s", err);
}

Test(cred_prepare, gh_basic_splits_git_and_api_hosts)
{
	const char *env[] = {"PATH=/usr/bin:/bin", NULL};
	struct cred_runtime rt;
	const struct proxy_cred *git, *api;

	cr_assert_eq(prepare(HEAD "      - {type: gh_basic, source: {command: 'echo gho_real'}}\n",
			     env, &rt),
		     0, "%s", err);
	cr_assert_eq(rt.n_creds, 2);
	git = cred_of(&rt, "github.com");
	api = cred_of(&rt, "api.github.com");
	cr_assert_not_null(git);
	cr_assert_not_null(api);
	cr_assert_eq(git->scheme, CRED_SCHEME_BASIC);
	cr_assert_str_eq(git->username, "x-access-token");
	cr_assert_eq(api->scheme, CRED_SCHEME_TOKEN);
	cr_assert_str_eq(git->secret, "gho_real");
	cr_assert_str_eq(api->secret, "gho_real");
	/* gh will not send a request without a token: both names get the one placeholder. */
	cr_assert_not_null(api->placeholder);
	cr_assert_str_eq(git->placeholder, api->placeholder);
	cr_assert_str_eq(env_of(&rt, "GH_TOKEN"), api->placeholder);
	cr_assert_str_eq(env_of(&rt, "GITHUB_TOKEN"), api->placeholder);
}

Test(cred_prepare, two_credentials_may_not_fill_one_variable)
{
	const char *env[] = {"A=a", "B=b", NULL};
	struct cred_runtime rt;

	cr_assert_eq(
	    prepare(HEAD "      - {type: https_bearer, target: api.test, source: {env: A}, "
			 "env: SHARED}\n"
			 "      - {type: https_basic, target: files.test, source: {env: B}, env: "
			 "SHARED}\n",
		    env, &rt),
	    -1);
	cr_assert(strstr(err, "SHARED is set by two credentials"), "%s", err);
}

static const char databricks_cfg[] = "; a comment\n"
				     "[DEFAULT]\n"
				     "host = https://ignored.databricks.test\n"
				     "\n"
				     "[dev]\n"
				     "host = https://Dev.Databricks.Test/\n"
				     "token = dapi-real-dev\n"
				     "[prod]\n"
				     "host=https://prod.databricks.test\n"
				     "auth_type = databricks-cli\n"
				     "[cleartext]\n"
				     "host = http://plain.databricks.test\n"
				     "token = x\n";

static void
fake_databricks_cli(const char *json)
{
	char path[160], script[512];

	snprintf(path, sizeof(path), "%s/bin", home);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/bin/databricks", home);
	snprintf(script, sizeof(script),
		 "#!/bin/sh\n[ \"$1 $2 $3\" = \"auth token -p\" ] || exit 9\n"
		 "printf '%%s\\n' '%s'\n",
		 json);
	write_file(path, script, 0755);
}

Test(cred_prepare, databricks_profiles_get_a_placeholder_file)
{
	char cfg[128], path_env[256];
	const char *env[] = {path_env, NULL};
	struct cred_runtime rt;
	const struct proxy_cred *dev, *prod;
	const char *text;

	snprintf(cfg, sizeof(cfg), "%s/.databrickscfg", home);
	write_file(cfg, databricks_cfg, 0600);
	fake_databricks_cli("{\"access_token\": \"oauth-real-prod\", \"token_type\": \"Bearer\"}");
	snprintf(path_env, sizeof(path_env), "PATH=%s/bin:/usr/bin:/bin", home);
	cr_assert_eq(prepare(HEAD "      - {type: databricks_cli, profiles: [dev, prod], default: "
				  "prod}\n",
			     env, &rt),
		     0, "%s", err);
	dev = cred_of(&rt, "dev.databricks.test");
	prod = cred_of(&rt, "prod.databricks.test");
	cr_assert_not_null(dev);
	cr_assert_not_null(prod);
	cr_assert_str_eq(dev->secret, "dapi-real-dev");
	cr_assert_str_eq(prod->secret, "oauth-real-prod");
	cr_assert_eq(dev->scheme, CRED_SCHEME_BEARER);
	cr_assert_neq(strcmp(dev->placeholder, prod->placeholder), 0);
	cr_assert_eq(rt.n_files, 1);
	cr_assert_str_eq(rt.files[0].name, "databrickscfg");
	cr_assert_eq(rt.files[0].mode, 0600);
	text = rt.files[0].content;
	cr_assert_str_eq(text,
			 arena_printf(arena,
				      "[dev]\nhost = https://dev.databricks.test\ntoken = %s\n"
				      "\n[prod]\nhost = https://prod.databricks.test\ntoken = "
				      "%s\n",
				      dev->placeholder, prod->placeholder));
	cr_assert_null(strstr(text, "real"), "a secret in the sandbox's file");
	cr_assert_str_eq(env_of(&rt, "DATABRICKS_CONFIG_FILE"), "/scratch/databrickscfg");
	cr_assert_str_eq(env_of(&rt, "DATABRICKS_CONFIG_PROFILE"), "prod");
}

Test(cred_prepare, databricks_errors_name_the_profile)
{
	char cfg[128], path_env[256];
	const char *env[] = {path_env, NULL};
	struct cred_runtime rt;

	snprintf(cfg, sizeof(cfg), "%s/.databrickscfg", home);
	write_file(cfg, databricks_cfg, 0600);
	snprintf(path_env, sizeof(path_env), "PATH=%s/bin:/usr/bin:/bin", home);
	cr_assert_eq(
	    prepare(HEAD "      - {type: databricks_cli, profiles: [staging]}\n", env, &rt), -1);
	cr_assert(strstr(err, "databricks profile 'staging' is not defined in"), "%s", err);
	cr_assert_eq(
	    prepare(HEAD "      - {type: databricks_cli, profiles: [cleartext]}\n", env, &rt), -1);
	cr_assert(strstr(err, "uses cleartext http://"), "%s", err);
	fake_databricks_cli("{\"error\": \"not logged in\"}");
	cr_assert_eq(prepare(HEAD "      - {type: databricks_cli, profiles: [prod]}\n", env, &rt),
		     -1);
	cr_assert(strstr(err, "printed no access_token"), "%s", err);
}

Test(cred_prepare, a_databricks_host_no_rule_allows_is_an_error)
{
	char cfg[128];
	const char *env[] = {NULL};
	struct cred_runtime rt;

	snprintf(cfg, sizeof(cfg), "%s/.databrickscfg", home);
	write_file(cfg, "[x]\nhost = https://elsewhere.example\ntoken = t\n", 0600);
	cr_assert_eq(prepare(HEAD "      - {type: databricks_cli, profiles: [x]}\n", env, &rt), -1);
	cr_assert(strstr(err, "host elsewhere.example:443 is not allowed by any egress rule"), "%s",
		  err);
}

Test(cred_prepare, files_are_written_private_and_never_over_something)
{
	struct cred_runtime rt = {0};
	struct cred_file f = {"databrickscfg", "[p]\ntoken = oa_cred_x\n", 21, 0600};
	char path[128];
	struct stat st;

	rt.files = &f;
	rt.n_files = 1;
	cr_assert_eq(cred_write_files(&rt, home, err, sizeof(err)), 0, "%s", err);
	snprintf(path, sizeof(path), "%s/databrickscfg", home);
	cr_assert_eq(stat(path, &st), 0);
	cr_assert_eq(st.st_mode & 0777, 0600);
	cr_assert_eq(st.st_size, 21);
	cr_assert_eq(cred_write_files(&rt, home, err, sizeof(err)), -1, "replaced a file");
	cr_assert(strstr(err, "File exists"), "%s", err);
}

Test(cred_prepare, wiping_zeroes_the_secrets)
{
	const char *env[] = {"TOK=wipe-me", NULL};
	struct cred_runtime rt;
	const char *secret;

	cr_assert_eq(prepare(HEAD "      - {type: https_bearer, target: api.test, source: {env: "
				  "TOK}}\n",
			     env, &rt),
		     0, "%s", err);
	secret = rt.creds[0].secret;
	cr_assert_str_eq(secret, "wipe-me");
	cred_runtime_wipe(&rt);
	for (int i = 0; i < 7; i++)
		cr_assert_eq(secret[i], 0);
}
