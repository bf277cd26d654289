/*
 * test_egress_table.c - the egress proxy's compiled table: every golden
 * policy's table read back (runtime/egress/table.h) and written again
 * gives the same bytes; malformed tables are refused with their line.
 *
 * Run from the repository's root (make unit does), where golden/ is.
 */
#include <criterion/criterion.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/base/fileio.h"
#include "compiler/policy.h"
#include "emitters/egress_table.h"
#include "runtime/egress/table.h"

static char err[2048];

/* The table of golden/NAME/agent.yaml (with its args' --terminal), into OUT. */
static void
compile_golden(struct arena *a, const char *name, struct textbuf *out)
{
	char path[512], *term = NULL;
	struct textbuf src = {0}, args = {0};
	struct policy *p;
	struct diag d;

	snprintf(path, sizeof(path), "golden/%s/args", name);
	if (file_read(path, &args, 4096) == 0 && args.data &&
	    !strncmp(args.data, "--terminal=", 11))
		term = arena_strndup(a, args.data + 11, strcspn(args.data + 11, "\n"));
	snprintf(path, sizeof(path), "golden/%s/agent.yaml", name);
	cr_assert_eq(file_read(path, &src, FILE_READ_MAX), 0, "%s", path);
	diag_init(&d, a, "agent.yaml", src.data ? src.data : "", src.len);
	p = policy_compile(a, &d, "agent.yaml", src.data ? src.data : "", src.len);
	cr_assert_not_null(p, "%s does not compile", path);
	if (term)
		p = policy_select_terminal(a, &d, p, term);
	cr_assert_not_null(p, "%s: terminal %s", path, term);
	cr_assert_eq(emit_egress_table(p, TARGET_LINUX, &d, out), 0, "%s", path);
	tb_free(&src);
	tb_free(&args);
}

Test(egress_table, every_golden_round_trips)
{
	DIR *dir = opendir("golden");
	struct dirent *e;
	unsigned n = 0, creds = 0;

	cr_assert_not_null(dir, "run from the repository's root");
	while ((e = readdir(dir))) {
		struct arena *a = arena_new();
		struct textbuf one = {0}, two = {0};
		struct policy *p;
		char path[512];
		FILE *f;

		snprintf(path, sizeof(path), "golden/%s/agent.yaml", e->d_name);
		if (e->d_name[0] == '.' || e->d_name[0] == 'e' || !(f = fopen(path, "r"))) {
			arena_free(a);
			continue;
		}
		fclose(f);
		compile_golden(a, e->d_name, &one);
		p = egress_table_parse(a, "egress.table", one.data, one.len, err, sizeof(err));
		cr_assert_not_null(p, "%s: %s", e->d_name, err);
		cr_assert_eq(emit_egress_table(p, TARGET_LINUX, NULL, &two), 0);
		cr_assert_eq(one.len, two.len, "%s: %zu bytes, then %zu:\n%s\n---\n%s", e->d_name,
			     one.len, two.len, one.data, two.data);
		cr_assert_eq(memcmp(one.data, two.data, one.len), 0, "%s:\n%s\n---\n%s", e->d_name,
			     one.data, two.data);
		creds += p->os_env.sandbox.n_creds;
		n++;
		tb_free(&one);
		tb_free(&two);
		arena_free(a);
	}
	closedir(dir);
	cr_assert_gt(n, 40, "only %u goldens", n);
	cr_assert_gt(creds, 8, "only %u credentials among the goldens", creds);
}

/* TEXT must be refused, the message starting "t.table:LINE:" and holding WHY. */
static void
refused(const char *text, unsigned line, const char *why)
{
	struct arena *a = arena_new();
	char want[64];

	cr_assert_null(egress_table_parse(a, "t.table", text, strlen(text), err, sizeof(err)),
		       "accepted:\n%s", text);
	snprintf(want, sizeof(want), "t.table:%u: ", line);
	cr_assert_eq(strncmp(err, want, strlen(want)), 0, "'%s' does not start with '%s'", err,
		     want);
	cr_assert_not_null(strstr(err, why), "'%s' does not say '%s'", err, why);
	arena_free(a);
}

#define HEAD "omnibox-egress-table 1\npolicy \"a.yaml\"\nprivate-destinations refused\n"

Test(egress_table, a_good_table_is_read)
{
	static const char text[] =
	    HEAD "passthrough \"VAULT_ADDR\"\nrule 3 \"GET api.test:8443/v1/**\"\n"
		 "rule 4 \"tcp git.test:22\"\n"
		 "credential 7 https_bearer\n  target 8 api.test 8443 header\n"
		 "  source command \"printf '%s' \\\"x\\\\y\\\"\"\n  placeholder \"API_TOKEN\"\n"
		 "  header \"x-api-key\"\nend\n";
	struct arena *a = arena_new();
	struct policy *p = egress_table_parse(a, "t.table", text, strlen(text), err, sizeof(err));
	const struct sandbox *sb;
	const char **names;

	cr_assert_not_null(p, "%s", err);
	sb = &p->os_env.sandbox;
	cr_assert_eq(sb->n_egress, 2);
	cr_assert_eq(sb->egress[0].port, 8443);
	cr_assert_eq(sb->egress[0].loc.line, 3);
	cr_assert(sb->egress[1].tcp);
	cr_assert_eq(sb->n_creds, 1);
	cr_assert_str_eq(sb->creds[0].source.s, "printf '%s' \"x\\y\"");
	cr_assert_eq(sb->creds[0].targets[0].scheme, CRED_SCHEME_HEADER);
	cr_assert_str_eq(sb->env_passthrough.v[0].s, "VAULT_ADDR");
	cr_assert_eq(egress_table_placeholder_names(a, sb, &names), 1);
	cr_assert_str_eq(names[0], "API_TOKEN");
	arena_free(a);
}

Test(egress_table, malformed_tables_are_refused_with_their_line)
{
	refused("", 1, "empty");
	refused("omnibox-egress-table 2\n", 1, "version '2'");
	refused("# a comment\n", 1, "not an egress table");
	refused(HEAD "rule 3 \"GET api.test\"", 4, "no line break");
	refused(HEAD "rule 3 \"FETCH api.test\"\n", 4, "unknown HTTP method");
	refused(HEAD "rule 3 \"GET a b\"\n", 4, "rule");
	refused(HEAD "rule x \"GET api.test\"\n", 4, "not a decimal number");
	refused(HEAD "rule 3 GET\n", 4, "quoted string");
	refused(HEAD "rule 3 \"GET api.test\n", 4, "closing quote");
	refused(HEAD "rule 3 \"GET\\x41 api.test\"\n", 4, "only control bytes");
	refused(HEAD "allow \"x\"\n", 4, "unknown keyword 'allow'");
	refused(HEAD "private-destinations maybe\n", 4, "'allowed' or 'refused'");
	refused(HEAD "private-destinations allowed\n", 4, "given twice");
	refused("omnibox-egress-table 1\nprivate-destinations refused\n", 3, "no 'policy' line");
	refused(HEAD "credential 5 https_bearer\n  target 6 api.test 443 bearer\n"
		     "  source env \"T\"\n",
		7, "has no 'end'");
	refused(HEAD "credential 5 https_bearer\n  target 6 api.test 443 bearer\nend\n", 6,
		"needs a source");
	refused(HEAD "credential 5 https_bearer\n  target 6 API.test 443 bearer\n", 5,
		"lower case");
	refused(HEAD "credential 5 https_bearer\n  target 6 api_x.test 443 bearer\n", 5,
		"not a host name");
	refused(HEAD "credential 5 https_bearer\n  target 6 api.test 0 bearer\n", 5,
		"not from 1 to 65535");
	refused(HEAD "credential 5 https_bearer\n  target 6 api.test 443 sigv4\n", 5,
		"does not go with");
	refused(HEAD "credential 5 https_bearer\n  secret \"hunter2\"\n", 5,
		"unknown keyword 'secret'");
	refused(HEAD "credential 5 https_bearer\n  source env \"oa_cred_0123456789\"\n", 5,
		"placeholder");
	refused(HEAD "credential 5 https_bearer\n  source vault \"x\"\n", 5, "unknown source kind");
	refused(HEAD "credential 5 https_bearer\n  placeholder \"A-B\"\n", 5,
		"not a variable name");
	refused(HEAD "credential 5 https_bearer\n  header \"host\"\n", 5, "cannot carry");
	refused(HEAD "credential 5 https_bearer\n  target 6 a.test 443 bearer\n"
		     "  source env \"T\"\n  refresh 60\nend\n",
		8, "refresh needs a file");
	refused(HEAD "credential 5 https_bearer\n  refresh 0\n", 5, "not from 1 to 86400");
	refused(HEAD "credential 5 aws_sigv4\n  target 6 s3.test 443 sigv4\n"
		     "  region \"eu-west-1\"\nend\n",
		7, "aws-profile or aws-key-id");
	refused(HEAD "credential 5 magic\n", 4, "unknown credential type");
	refused(HEAD "credential 5 https_bearer\n  username \"a\"\n  username \"b\"\n", 6,
		"given twice");
	refused(HEAD "rule 3 \"GET api.test\"\trule\n", 4, "tab");
}
