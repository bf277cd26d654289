/*
 * test_credentials.c - the credential proxy outside the proxy: secret
 * sources (env, file, command, unix socket), placeholders, base64 and the
 * Authorization rewriting, gh_basic's split, the databricks_cli file,
 * aws_sigv4's keys (sources or a profile of static keys).
 *
 * Policies are compiled from YAML with the real front end; files and
 * commands live in a temporary home made per test.
 */
#include <criterion/criterion.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
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
	struct proxy_cred c = {.host = "api.test",
			       .port = 443,
			       .scheme = CRED_SCHEME_BEARER,
			       .username = NULL,
			       .secret = "s3cret",
			       .placeholder = PH,
			       .header = NULL};
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
	struct proxy_cred c = {.host = "github.com",
			       .port = 443,
			       .scheme = CRED_SCHEME_BASIC,
			       .username = "x-access-token",
			       .secret = "ghp_real",
			       .placeholder = PH};
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
	struct proxy_cred c = {.host = "api.test",
			       .port = 443,
			       .scheme = CRED_SCHEME_BEARER,
			       .username = NULL,
			       .secret = "s3cret",
			       .placeholder = PH,
			       .header = NULL};
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
	struct proxy_cred c = {.host = "api.test",
			       .port = 443,
			       .scheme = CRED_SCHEME_BEARER,
			       .username = NULL,
			       .secret = "s3cret",
			       .placeholder = PH,
			       .header = NULL};
	struct proxy_cred swap = {.host = "api.test",
				  .port = 443,
				  .scheme = CRED_SCHEME_BEARER,
				  .username = NULL,
				  .secret = "s3cret",
				  .placeholder = NULL,
				  .header = NULL};
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
	struct proxy_cred bearer = {.host = "h",
				    .port = 443,
				    .scheme = CRED_SCHEME_BEARER,
				    .username = NULL,
				    .secret = "s3",
				    .placeholder = NULL,
				    .header = NULL};
	struct proxy_cred token = {.host = "h",
				   .port = 443,
				   .scheme = CRED_SCHEME_TOKEN,
				   .username = NULL,
				   .secret = "s3",
				   .placeholder = NULL,
				   .header = NULL};
	struct proxy_cred basic_default = {.host = "h",
					   .port = 443,
					   .scheme = CRED_SCHEME_BASIC,
					   .username = NULL,
					   .secret = "s3",
					   .placeholder = NULL,
					   .header = NULL};
	struct proxy_cred basic_user = {.host = "h",
					.port = 443,
					.scheme = CRED_SCHEME_BASIC,
					.username = "ci-bot",
					.secret = "s3",
					.placeholder = NULL,
					.header = NULL};
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

/* ---- unix_socket sources ----------------------------------------------------------- */

/* A token service on HOME/tok.sock for one connection: ANSWER after DELAY_MS. */
static pid_t
serve_once(const char *answer, size_t len, int delay_ms)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	pid_t pid;

	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/tok.sock", home);
	unlink(sun.sun_path);
	cr_assert(fd >= 0 && bind(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0 &&
		  listen(fd, 4) == 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		int c = accept(fd, NULL, NULL);

		usleep((useconds_t)delay_ms * 1000);
		while (len) {
			ssize_t w = write(c, answer, len);

			if (w <= 0)
				break;
			answer += w;
			len -= (size_t)w;
		}
		_exit(0);
	}
	close(fd);
	return pid;
}

#define SOCK_YAML                                                                                  \
	HEAD "      - {type: https_bearer, target: api.test, source: {unix_socket: ~/tok.sock},"   \
	     " refresh_interval_seconds: 60, env: TOK}\n"

Test(cred_prepare, a_unix_socket_is_read_to_its_end_and_trimmed)
{
	const char *env[] = {NULL};
	struct cred_runtime rt;
	pid_t pid = serve_once("  sock-secret-1\r\n", 17, 0);
	char want[128];

	cr_assert_eq(prepare(SOCK_YAML, env, &rt), 0, "%s", err);
	waitpid(pid, NULL, 0);
	cr_assert_str_eq(rt.creds[0].secret, "sock-secret-1");
	cr_assert_eq(rt.creds[0].refresh, 60, "the proxy reads it again");
	cr_assert_eq(rt.creds[0].source.kind, CRED_SOURCE_UNIX_SOCKET);
	snprintf(want, sizeof(want), "%s/tok.sock", home);
	cr_assert_str_eq(rt.creds[0].source.path, want, "'~' expanded");
}

Test(cred_prepare, a_unix_socket_that_is_missing_empty_or_too_long_is_an_error)
{
	const char *env[] = {NULL};
	struct cred_runtime rt;
	char *big = malloc(CRED_SOCKET_MAX + 1);
	pid_t pid;

	cr_assert_eq(prepare(SOCK_YAML, env, &rt), -1);
	cr_assert(strstr(err, "unix socket") && strstr(err, "connect: No such file"), "%s", err);
	pid = serve_once("", 0, 0);
	cr_assert_eq(prepare(SOCK_YAML, env, &rt), -1);
	waitpid(pid, NULL, 0);
	cr_assert(strstr(err, "its answer is empty"), "%s", err);
	/* One byte over the cap: an error, never a secret cut short. */
	memset(big, 'a', CRED_SOCKET_MAX + 1);
	pid = serve_once(big, CRED_SOCKET_MAX + 1, 0);
	cr_assert_eq(prepare(SOCK_YAML, env, &rt), -1);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	cr_assert(strstr(err, "sent more than 65536 bytes"), "%s", err);
	/* Exactly the cap is fine. */
	pid = serve_once(big, CRED_SOCKET_MAX, 0);
	cr_assert_eq(prepare(SOCK_YAML, env, &rt), 0, "%s", err);
	waitpid(pid, NULL, 0);
	cr_assert_eq(strlen(rt.creds[0].secret), CRED_SOCKET_MAX);
	free(big);
}

Test(cred_prepare, a_unix_socket_must_finish_within_five_seconds, .timeout = 20)
{
	const char *env[] = {NULL};
	struct cred_runtime rt;
	struct timespec t0, t1;
	pid_t pid = serve_once("late", 4, 8000);
	long ms;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	cr_assert_eq(prepare(SOCK_YAML, env, &rt), -1);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	cr_assert(strstr(err, "within 5 seconds"), "%s", err);
	cr_assert(ms >= 4900 && ms < 7000, "gave up after %ld ms", ms);
}

Test(cred_prepare, a_refreshed_file_is_read_again_as_at_launch)
{
	char path[128], e[512];
	char *s;

	snprintf(path, sizeof(path), "%s/token", home);
	write_file(path, "  second-token \n", 0600);
	s = cred_read_secret(CRED_SOURCE_FILE, path, e, sizeof(e));
	cr_assert_not_null(s, "%s", e);
	cr_assert_str_eq(s, "second-token");
	free(s);
	write_file(path, "two\nlines\n", 0600);
	cr_assert_null(cred_read_secret(CRED_SOURCE_FILE, path, e, sizeof(e)));
	cr_assert(strstr(e, "control byte"), "%s", e);
	unlink(path);
	cr_assert_null(cred_read_secret(CRED_SOURCE_FILE, path, e, sizeof(e)));
	cr_assert(strstr(e, "No such file"), "%s", e);
	cr_assert(mkfifo(path, 0600) == 0);
	cr_assert_null(cred_read_secret(CRED_SOURCE_FILE, path, e, sizeof(e)),
		       "a FIFO is refused, not waited on");
}

/* ---- aws_sigv4 --------------------------------------------------------------------- */

#define AWS_HEAD                                                                                   \
	"os_env:\n"                                                                                \
	"  sandbox:\n"                                                                             \
	"    egress_rules: ['* s3.eu-west-1.amazonaws.com/**', '* "                                \
	"b.s3.eu-west-1.amazonaws.com/**',"                                                        \
	" '* iam.amazonaws.com/**']\n"                                                             \
	"    credential_proxy:\n"
#define AWS_S3                                                                                     \
	"      - type: aws_sigv4\n"                                                                \
	"        targets: [s3.eu-west-1.amazonaws.com, b.s3.eu-west-1.amazonaws.com]\n"            \
	"        region: eu-west-1\n"
#define AWS_IAM(profile)                                                                           \
	"      - {type: aws_sigv4, target: iam.amazonaws.com, region: us-east-1, service: iam,"    \
	" credential: {profile: " profile "}}\n"

Test(cred_prepare, aws_keys_from_their_sources_and_placeholders_in_the_sandbox)
{
	const char *env[] = {"AK=AKIAREALKEY", NULL};
	char path[128];
	struct cred_runtime rt;
	const struct proxy_cred *a, *b;

	snprintf(path, sizeof(path), "%s/sk", home);
	write_file(path, "real/secret+key\n", 0600);
	cr_assert_eq(prepare(AWS_HEAD AWS_S3
			     "        credential:\n"
			     "          access_key_id: {env: AK}\n"
			     "          secret_access_key: {file: ~/sk}\n"
			     "          session_token: {command: 'echo real-token'}\n",
			     env, &rt),
		     0, "%s", err);
	cr_assert_eq(rt.n_creds, 2);
	a = cred_of(&rt, "s3.eu-west-1.amazonaws.com");
	b = cred_of(&rt, "b.s3.eu-west-1.amazonaws.com");
	cr_assert(a && b && a->aws && a->aws == b->aws);
	cr_assert_eq(a->scheme, CRED_SCHEME_SIGV4);
	cr_assert_str_eq(a->secret, "real/secret+key");
	cr_assert_str_eq(a->aws->key_id, "AKIAREALKEY");
	cr_assert_str_eq(a->aws->token, "real-token");
	cr_assert_str_eq(a->aws->region, "eu-west-1");
	cr_assert_str_eq(a->aws->service, "s3", "the default service");
	cr_assert_eq(rt.n_env, 3);
	cr_assert_str_eq(env_of(&rt, "AWS_ACCESS_KEY_ID"), a->aws->key_id_placeholder);
	cr_assert_str_eq(env_of(&rt, "AWS_SECRET_ACCESS_KEY"), a->placeholder);
	cr_assert_str_eq(env_of(&rt, "AWS_SESSION_TOKEN"), a->aws->token_placeholder);
	cr_assert_eq(strncmp(a->placeholder, CRED_PREFIX, CRED_PREFIX_LEN), 0);
	cr_assert_str_neq(a->placeholder, a->aws->key_id_placeholder);
	cr_assert_eq(a->refresh, 0);
}

Test(cred_prepare, aws_profile_static_keys_and_one_set_of_placeholders_for_all_entries)
{
	const char *env[] = {"AK=AKIAREALKEY", "SK=s3cr3t", NULL};
	char dir[128], path[160];
	struct cred_runtime rt;
	const struct proxy_cred *s3, *iam;

	snprintf(dir, sizeof(dir), "%s/.aws", home);
	mkdir(dir, 0700);
	snprintf(path, sizeof(path), "%s/credentials", dir);
	write_file(path,
		   "[default]\naws_access_key_id = AKIADEFAULT\naws_secret_access_key = d\n\n"
		   "# a comment\n[ci]\nAWS_ACCESS_KEY_ID = AKIACI\n"
		   "aws_secret_access_key =  ci/secret  \nregion = us-east-1\n",
		   0600);
	cr_assert_eq(prepare(AWS_HEAD AWS_S3 "        credential: {access_key_id: {env: AK}, "
					     "secret_access_key: {env: SK}}\n" AWS_IAM("ci"),
			     env, &rt),
		     0, "%s", err);
	s3 = cred_of(&rt, "s3.eu-west-1.amazonaws.com");
	iam = cred_of(&rt, "iam.amazonaws.com");
	cr_assert_str_eq(iam->aws->key_id, "AKIACI");
	cr_assert_str_eq(iam->secret, "ci/secret");
	cr_assert_null(iam->aws->token);
	cr_assert_str_eq(iam->aws->service, "iam");
	cr_assert_neq(iam->entry, s3->entry);
	/* The SDK inside has one AWS_ACCESS_KEY_ID: the host picks the real keys. */
	cr_assert_str_eq(iam->aws->key_id_placeholder, s3->aws->key_id_placeholder);
	cr_assert_str_eq(iam->placeholder, s3->placeholder);
	cr_assert_eq(rt.n_env, 2, "no session token anywhere: no AWS_SESSION_TOKEN");
	cr_assert_null(env_of(&rt, "AWS_SESSION_TOKEN"));
}

Test(cred_prepare, aws_profiles_that_need_more_than_static_keys_are_refused)
{
	static const char *const refused[] = {
	    "role_arn = arn:aws:iam::1:role/x\nsource_profile = default\n",
	    "source_profile = default\n",
	    "credential_process = /bin/get-keys\n",
	    "sso_session = corp\nsso_account_id = 1\n",
	    "web_identity_token_file = /t\n",
	};
	const char *env[] = {NULL};
	char dir[128], path[160], text[512];
	struct cred_runtime rt;

	snprintf(dir, sizeof(dir), "%s/.aws", home);
	mkdir(dir, 0700);
	snprintf(path, sizeof(path), "%s/credentials", dir);
	for (size_t i = 0; i < sizeof(refused) / sizeof(*refused); i++) {
		snprintf(text, sizeof(text),
			 "[ci]\naws_access_key_id = AKIA\naws_secret_access_key = s\n%s",
			 refused[i]);
		write_file(path, text, 0600);
		cr_assert_eq(prepare(AWS_HEAD AWS_IAM("ci"), env, &rt), -1, "%s", refused[i]);
		cr_assert(strstr(err, "only static keys"), "%s", err);
	}
	write_file(path, "[ci]\naws_access_key_id = AKIA\n", 0600);
	cr_assert_eq(prepare(AWS_HEAD AWS_IAM("ci"), env, &rt), -1);
	cr_assert(strstr(err, "lacks aws_access_key_id or aws_secret_access_key"), "%s", err);
	cr_assert_eq(prepare(AWS_HEAD AWS_IAM("nope"), env, &rt), -1);
	cr_assert(strstr(err, "profile 'nope'") && strstr(err, "is not defined"), "%s", err);
	unlink(path);
	cr_assert_eq(prepare(AWS_HEAD AWS_IAM("ci"), env, &rt), -1);
	cr_assert(strstr(err, "cannot read") && strstr(err, ".aws/credentials"), "%s", err);
}
