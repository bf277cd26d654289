/*
 * test_egress_match.c - deciding requests: the decision table, hosts,
 * targets, globs, rule order, and a randomized cross-check of the trie
 * matcher against a linear reference written independently below.
 */
#include <criterion/criterion.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "grammar/egress.h"

static struct arena *arena;

static void
setup(void)
{
	arena = arena_new();
}

static void
teardown(void)
{
	arena_free(arena);
}

TestSuite(egress_match, .init = setup, .fini = teardown);
TestSuite(egress_normalize, .init = setup, .fini = teardown);

static struct egress_rule
rule_from(const char *text)
{
	struct egress_rule r;
	struct egress_error e;

	cr_assert_eq(egress_parse_rule(arena, text, strlen(text), &r, &e), 0,
		     "rule \"%s\" refused: %s", text, e.message);
	return r;
}

static struct egress_matcher *
matcher_from(const char *const *texts, size_t n)
{
	struct egress_rule *rules = arena_alloc(arena, (n ? n : 1) * sizeof(*rules));
	struct egress_matcher *m;
	size_t i;

	for (i = 0; i < n; i++)
		rules[i] = rule_from(texts[i]);
	m = egress_matcher_new(rules, n);
	cr_assert_not_null(m);
	return m;
}

#define RULES(...)                                                                                 \
	matcher_from((const char *const[]){__VA_ARGS__},                                           \
		     sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *))

/*
 * Decide "METHOD host/target" (the target defaults to "/").  The host ends
 * at the first '/'; requests with odd bytes use egress_match() directly.
 */
static ssize_t
decide(const struct egress_matcher *m, const char *request)
{
	const char *sp = strchr(request, ' ');
	const char *host, *slash;

	cr_assert_not_null(sp, "bad test request \"%s\"", request);
	host = sp + 1;
	slash = strchr(host, '/');
	if (!slash)
		return egress_match(m, request, (size_t)(sp - request), host, strlen(host), 443,
				    443, "/", 1);
	return egress_match(m, request, (size_t)(sp - request), host, (size_t)(slash - host), 443,
			    443, slash, strlen(slash));
}

#define ALLOWS(m, request, index)                                                                  \
	do {                                                                                       \
		ssize_t got_ = decide((m), (request));                                             \
		cr_assert_eq(got_, (ssize_t)(index), "\"%s\": rule %zd, expected rule %d",         \
			     (request), got_, (int)(index));                                       \
	} while (0)

#define DENIES(m, request)                                                                         \
	do {                                                                                       \
		ssize_t got_ = decide((m), (request));                                             \
		cr_assert_eq(got_, -1, "\"%s\": allowed by rule %zd, expected a denial",           \
			     (request), got_);                                                     \
	} while (0)

/* ---- the decision table --------------------------------------------------- */

Test(egress_match, a_path_prefix_rule_allows_only_its_method_host_and_prefix)
{
	struct egress_matcher *m = RULES("GET api.github.com/repos/myorg/**");

	ALLOWS(m, "GET api.github.com/repos/myorg/r1/issues", 0);
	DENIES(m, "POST api.github.com/repos/myorg/r1");
	DENIES(m, "GET github.com/repos/myorg/r1");
	DENIES(m, "GET api.github.com/users/myorg");
	DENIES(m, "GET api.github.com/repos/myorg");
	DENIES(m, "GET api.github.com/repos/myorgx/r1");
	egress_matcher_free(m);
}

Test(egress_match, a_wildcard_host_covers_itself_and_subdomains_only)
{
	struct egress_matcher *m = RULES("* *.amazonaws.com/**");

	ALLOWS(m, "PUT ec2.amazonaws.com/", 0);
	ALLOWS(m, "GET amazonaws.com/x", 0);
	ALLOWS(m, "DELETE a.b.c.s3.amazonaws.com/k", 0);
	DENIES(m, "GET evilamazonaws.com/");
	DENIES(m, "GET amazonaws.com.evil.com/");
	DENIES(m, "GET amazonaws.co/");
	DENIES(m, "GET com/");
	egress_matcher_free(m);
}

Test(egress_match, methods_and_hosts_ignore_case_on_the_wire)
{
	struct egress_matcher *m = RULES("GET API.GitHub.COM/repos/**");

	ALLOWS(m, "get API.GITHUB.COM/repos/x", 0);
	ALLOWS(m, "gEt api.github.com/repos/x", 0);
	DENIES(m, "GET api.github.com/Repos/x");
	egress_matcher_free(m);
}

Test(egress_match, a_star_matches_within_one_segment)
{
	struct egress_matcher *m = RULES("GET h.com/v1/*/details", "GET h.com/files/*.txt");

	ALLOWS(m, "GET h.com/v1/item123/details", 0);
	ALLOWS(m, "GET h.com/v1//details", 0);
	DENIES(m, "GET h.com/v1/a/b/details");
	ALLOWS(m, "GET h.com/files/report.txt", 1);
	ALLOWS(m, "GET h.com/files/.txt", 1);
	DENIES(m, "GET h.com/files/nested/r.txt");
	DENIES(m, "GET h.com/files/report.txt.gz");
	egress_matcher_free(m);
}

Test(egress_match, a_rule_without_a_path_allows_every_path)
{
	struct egress_matcher *m = RULES("GET h.com");

	ALLOWS(m, "GET h.com/", 0);
	ALLOWS(m, "GET h.com/a/b/c?x=/y", 0);
	ALLOWS(m, "GET h.com/..%41", 0);
	egress_matcher_free(m);
}

Test(egress_match, no_rules_deny_everything)
{
	struct egress_matcher *m = egress_matcher_new(NULL, 0);

	cr_assert_not_null(m);
	DENIES(m, "GET h.com/");
	cr_assert_eq(egress_match_host(m, "h.com", 5, 443, 443), -1);
	egress_matcher_free(m);
}

Test(egress_match, a_missing_matcher_denies)
{
	cr_assert_eq(egress_match(NULL, "GET", 3, "h.com", 5, 443, 443, "/", 1), -1);
	cr_assert_eq(egress_match_host(NULL, "h.com", 5, 443, 443), -1);
	egress_matcher_free(NULL);
}

/* ---- hosts ------------------------------------------------------------- */

Test(egress_match, an_exact_host_does_not_cover_subdomains_or_suffixes)
{
	struct egress_matcher *m = RULES("GET example.com");

	ALLOWS(m, "GET example.com/", 0);
	DENIES(m, "GET www.example.com/");
	DENIES(m, "GET xexample.com/");
	DENIES(m, "GET example.com.au/");
	DENIES(m, "GET example.co/");
	egress_matcher_free(m);
}

Test(egress_match, a_wildcard_needs_a_dot_boundary)
{
	struct egress_matcher *m = RULES("GET *.example.com");

	ALLOWS(m, "GET example.com/", 0);
	ALLOWS(m, "GET a.example.com/", 0);
	ALLOWS(m, "GET a.b.c.example.com/", 0);
	DENIES(m, "GET evilexample.com/");
	DENIES(m, "GET a.evilexample.com/");
	DENIES(m, "GET example.com.evil.com/");
	DENIES(m, "GET example.org/");
	egress_matcher_free(m);
}

static void
assert_host_denied(const struct egress_matcher *m, const char *host, size_t len)
{
	cr_assert_eq(egress_match(m, "GET", 3, host, len, 443, 443, "/", 1), -1,
		     "host \"%.*s\" allowed", (int)len, host);
	cr_assert_eq(egress_match_host(m, host, len, 443, 443), -1,
		     "host \"%.*s\" allowed for CONNECT", (int)len, host);
}

#define HOST_DENIED(m, lit) assert_host_denied((m), (lit), sizeof(lit) - 1)

Test(egress_match, malformed_hosts_never_match)
{
	struct egress_matcher *m = RULES("* *.example.com", "* example.org");
	char longhost[300];

	HOST_DENIED(m, "");
	HOST_DENIED(m, "a.example.com\0");
	HOST_DENIED(m, "a\0.example.com");
	HOST_DENIED(m, "example.org\0.evil.com");
	HOST_DENIED(m, "a%2eexample.com");
	HOST_DENIED(m, "a.example.com\r");
	HOST_DENIED(m, "a.example.com\n");
	HOST_DENIED(m, "a b.example.com");
	HOST_DENIED(m, "evil.com@a.example.com");
	HOST_DENIED(m, "[::1].example.com");
	HOST_DENIED(m, "a]example.com");
	HOST_DENIED(m, "a_b.example.com");
	HOST_DENIED(m, "example.org:443");
	HOST_DENIED(m, "example.org.");
	HOST_DENIED(m, "a.example.com.");
	HOST_DENIED(m, ".example.com");
	HOST_DENIED(m, "a..example.com");
	HOST_DENIED(m, "..example.com");
	HOST_DENIED(m, "*.example.com");
	HOST_DENIED(m, "ex\xc3\xa4mple.org");

	/* Too long for DNS, however the wildcard would cover it. */
	memset(longhost, 'a', sizeof(longhost));
	memcpy(longhost + sizeof(longhost) - 12, ".example.com", 12);
	assert_host_denied(m, longhost, sizeof(longhost));
	memset(longhost, 'a', 64);
	memcpy(longhost + 64, ".example.com", 12);
	assert_host_denied(m, longhost, 76);
	egress_matcher_free(m);
}

Test(egress_match, well_formed_hosts_are_safe)
{
	cr_assert(egress_host_is_safe("a", 1));
	cr_assert(egress_host_is_safe("API.GitHub.com", 14));
	cr_assert(egress_host_is_safe("10.0.0.1", 8));
	cr_assert(egress_host_is_safe("x-1.y-2", 7));
}

Test(egress_match, hosts_with_other_bytes_are_not_safe)
{
	cr_assert_not(egress_host_is_safe("", 0));
	cr_assert_not(egress_host_is_safe(NULL, 0));
	cr_assert_not(egress_host_is_safe("a.com.", 6));
	cr_assert_not(egress_host_is_safe("a\0com", 5));
	cr_assert_not(egress_host_is_safe("a%2ecom", 7));
	cr_assert_not(egress_host_is_safe("a.com\r", 6));
	cr_assert_not(egress_host_is_safe("a.com\n", 6));
	cr_assert_not(egress_host_is_safe("a .com", 6));
	cr_assert_not(egress_host_is_safe("u@a.com", 7));
	cr_assert_not(egress_host_is_safe("[::1]", 5));
	cr_assert_not(egress_host_is_safe("a_b", 3));
	cr_assert_not(egress_host_is_safe("a:1", 3));
	cr_assert(egress_host_is_safe("a.comX", 5), "only LEN bytes count");
}

Test(egress_match, match_host_reports_the_lowest_rule_for_the_host)
{
	struct egress_matcher *m =
	    RULES("GET other.com", "POST api.github.com/x", "GET *.github.com", "* *.com/y");

	cr_assert_eq(egress_match_host(m, "api.github.com", 14, 443, 443), 1);
	cr_assert_eq(egress_match_host(m, "API.GITHUB.COM", 14, 443, 443), 1);
	cr_assert_eq(egress_match_host(m, "www.github.com", 14, 443, 443), 2);
	cr_assert_eq(egress_match_host(m, "github.com", 10, 443, 443), 2);
	cr_assert_eq(egress_match_host(m, "other.com", 9, 443, 443), 0);
	cr_assert_eq(egress_match_host(m, "x.other.com", 11, 443, 443), 3);
	cr_assert_eq(egress_match_host(m, "example.org", 11, 443, 443), -1);
	egress_matcher_free(m);
}

/* ---- methods ------------------------------------------------------------ */

Test(egress_match, each_method_matches_only_its_own_rule)
{
	static const char *const names[] = {"GET",    "HEAD",  "POST",	  "PUT",
					    "DELETE", "PATCH", "OPTIONS", "TRACE"};
	struct egress_matcher *m =
	    RULES("GET h.com", "HEAD h.com", "POST h.com", "PUT h.com", "DELETE h.com",
		  "PATCH h.com", "OPTIONS h.com", "TRACE h.com");
	size_t i;

	for (i = 0; i < 8; i++) {
		ssize_t got =
		    egress_match(m, names[i], strlen(names[i]), "h.com", 5, 443, 443, "/", 1);

		cr_assert_eq(got, (ssize_t)i, "%s: rule %zd", names[i], got);
	}
	cr_assert_eq(egress_match(m, "PROPFIND", 8, "h.com", 5, 443, 443, "/", 1), -1);
	cr_assert_eq(egress_match(m, "CONNECT", 7, "h.com", 5, 443, 443, "/", 1), -1);
	cr_assert_eq(egress_match(m, "GETX", 4, "h.com", 5, 443, 443, "/", 1), -1);
	cr_assert_eq(egress_match(m, "", 0, "h.com", 5, 443, 443, "/", 1), -1);
	egress_matcher_free(m);
}

Test(egress_match, an_unknown_method_matches_only_a_star_rule)
{
	struct egress_matcher *m = RULES("GET,POST,PUT h.com", "* h.com/dav/**");

	ALLOWS(m, "PROPFIND h.com/dav/x", 1);
	DENIES(m, "PROPFIND h.com/other");
	ALLOWS(m, "MKCOL h.com/dav/", 1);
	ALLOWS(m, "put h.com/other", 0);
	egress_matcher_free(m);
}

/* ---- rule order ------------------------------------------------------------ */

Test(egress_match, the_lowest_matching_rule_wins)
{
	struct egress_matcher *m =
	    RULES("POST *.h.com", "GET a.h.com/x/**", "GET *.h.com/x/**", "GET a.h.com", "* *.com");

	ALLOWS(m, "GET a.h.com/x/1", 1);
	ALLOWS(m, "GET b.a.h.com/x/1", 2);
	ALLOWS(m, "GET a.h.com/y", 3);
	ALLOWS(m, "POST a.h.com/y", 0);
	ALLOWS(m, "DELETE a.h.com/y", 4);
	ALLOWS(m, "GET h.com/x/", 2);
	egress_matcher_free(m);
}

Test(egress_match, a_wildcard_rule_before_an_exact_one_wins)
{
	struct egress_matcher *m = RULES("GET *.a.b.c", "GET x.a.b.c", "GET *.b.c");

	ALLOWS(m, "GET x.a.b.c/", 0);
	ALLOWS(m, "GET y.b.c/", 2);
	cr_assert_eq(egress_match_host(m, "x.a.b.c", 7, 443, 443), 0);
	egress_matcher_free(m);
}

Test(egress_match, duplicate_rules_report_the_first)
{
	struct egress_matcher *m = RULES("GET h.com/a", "GET h.com/a", "GET H.com/a");

	ALLOWS(m, "GET h.com/a", 0);
	egress_matcher_free(m);
}

/* ---- paths ------------------------------------------------------------ */

Test(egress_match, dot_segments_are_removed_before_matching)
{
	struct egress_matcher *m = RULES("GET h.com/a/b", "GET h.com/a/c", "GET h.com/a/");

	ALLOWS(m, "GET h.com/a/./b", 0);
	ALLOWS(m, "GET h.com/a/b/../c", 1);
	ALLOWS(m, "GET h.com/x/../a/b", 0);
	ALLOWS(m, "GET h.com/./a/./b", 0);
	ALLOWS(m, "GET h.com/a/b/..", 2);
	ALLOWS(m, "GET h.com/a/.", 2);
	egress_matcher_free(m);
}

Test(egress_match, climbing_above_the_root_is_denied)
{
	struct egress_matcher *m = RULES("GET h.com");

	DENIES(m, "GET h.com/..");
	DENIES(m, "GET h.com/../a");
	DENIES(m, "GET h.com/a/../../b");
	DENIES(m, "GET h.com/a/../..");
	ALLOWS(m, "GET h.com/a/..", 0);
	egress_matcher_free(m);
}

Test(egress_match, encoded_dots_and_separators_in_the_path_are_denied)
{
	struct egress_matcher *m = RULES("GET h.com");

	DENIES(m, "GET h.com/a/%2e%2e/b");
	DENIES(m, "GET h.com/a/%2E%2E/b");
	DENIES(m, "GET h.com/a/.%2e/b");
	DENIES(m, "GET h.com/a%2Fb");
	DENIES(m, "GET h.com/a%2fb");
	DENIES(m, "GET h.com/a%5Cb");
	DENIES(m, "GET h.com/a%5cb");
	DENIES(m, "GET h.com/a%2e");
	DENIES(m, "GET h.com/a\\..\\b");
	ALLOWS(m, "GET h.com/a%20b", 0);
	ALLOWS(m, "GET h.com/a?next=%2F..%2Fadmin", 0);
	egress_matcher_free(m);
}

Test(egress_match, dot_segments_with_parameters_are_denied)
{
	struct egress_matcher *m = RULES("GET h.com/public/**");

	DENIES(m, "GET h.com/public/..;/admin");
	DENIES(m, "GET h.com/public/.;x/admin");
	ALLOWS(m, "GET h.com/public/a;b/c", 0);
	ALLOWS(m, "GET h.com/public/...;/c", 0);
	egress_matcher_free(m);
}

Test(egress_match, control_bytes_and_relative_targets_are_denied)
{
	struct egress_matcher *m = RULES("GET h.com");

	cr_assert_eq(egress_match(m, "GET", 3, "h.com", 5, 443, 443, "/a\0b", 4), -1);
	cr_assert_eq(egress_match(m, "GET", 3, "h.com", 5, 443, 443, "/a\rb", 4), -1);
	cr_assert_eq(egress_match(m, "GET", 3, "h.com", 5, 443, 443, "/a\x7f", 3), -1);
	cr_assert_eq(egress_match(m, "GET", 3, "h.com", 5, 443, 443, "/a?\n", 4), -1);
	cr_assert_eq(egress_match(m, "GET", 3, "h.com", 5, 443, 443, "", 0), -1);
	cr_assert_eq(egress_match(m, "GET", 3, "h.com", 5, 443, 443, "a/b", 3), -1);
	cr_assert_eq(egress_match(m, "GET", 3, "h.com", 5, 443, 443, "*", 1), -1);
	cr_assert_eq(egress_match(m, "GET", 3, "h.com", 5, 443, 443, "http://h.com/", 13), -1);
	cr_assert_eq(egress_match(m, "GET", 3, "h.com", 5, 443, 443, "?x", 2), -1);
	egress_matcher_free(m);
}

Test(egress_match, a_query_comes_along_with_its_path_and_the_fragment_is_dropped)
{
	struct egress_matcher *m = RULES("GET h.com/search", "GET h.com/a");

	ALLOWS(m, "GET h.com/search?q=cats", 0);
	ALLOWS(m, "GET h.com/search?q=a/b", 0);
	ALLOWS(m, "GET h.com/a#frag", 1);
	ALLOWS(m, "GET h.com/a#/../../x", 1);
	ALLOWS(m, "GET h.com/a?x", 1);
	ALLOWS(m, "GET h.com/search?q=x#y", 0);
	DENIES(m, "GET h.com/searchx?q=1");
	egress_matcher_free(m);
}

Test(egress_match, the_query_never_takes_part_in_star_question_mark_or_double_star)
{
	struct egress_matcher *m = RULES("GET h.com/repos/*/*/issues", "GET h.com/docs/**/README",
					 "GET h.com/dl/*.tar.gz", "GET h.com/v?/x");

	/* The tricks of a path that ends where the rule wants it, in the query. */
	DENIES(m, "GET h.com/repos/o/r?/issues");
	DENIES(m, "GET h.com/docs/private/admin/keys?x=/README");
	DENIES(m, "GET h.com/dl/secret.txt?.tar.gz");
	DENIES(m, "GET h.com/v?/x");
	DENIES(m, "GET h.com/repos/o?/r/issues");
	/* The paths themselves, with any query. */
	ALLOWS(m, "GET h.com/repos/o/r/issues?page=2", 0);
	ALLOWS(m, "GET h.com/docs/a/b/README?x=/y", 1);
	ALLOWS(m, "GET h.com/dl/a.tar.gz?sig=/../x", 2);
	ALLOWS(m, "GET h.com/v1/x?", 3);
	egress_matcher_free(m);
}

Test(egress_match, dot_segments_in_the_query_are_kept_and_ignored)
{
	struct egress_matcher *m = RULES("GET h.com/a");

	ALLOWS(m, "GET h.com/a?p=/../b", 0);
	ALLOWS(m, "GET h.com/x/../a?p=/../b", 0);
	DENIES(m, "GET h.com/b?p=/../a");
	egress_matcher_free(m);
}

Test(egress_match, a_rule_means_its_port_and_without_one_the_default_of_the_request_kind)
{
	struct egress_matcher *m = RULES("GET h.com/x", "GET h.com:8443/y", "* *.w.com:8080");

	/* No port: 443 for a tunnel, 80 for plain HTTP. */
	cr_expect_eq(egress_match(m, "GET", 3, "h.com", 5, 443, EGRESS_PORT_TLS, "/x", 2), 0);
	cr_expect_eq(egress_match(m, "GET", 3, "h.com", 5, 80, EGRESS_PORT_PLAIN, "/x", 2), 0);
	cr_expect_eq(egress_match(m, "GET", 3, "h.com", 5, 80, EGRESS_PORT_TLS, "/x", 2), -1);
	cr_expect_eq(egress_match(m, "GET", 3, "h.com", 5, 8443, EGRESS_PORT_TLS, "/x", 2), -1);
	cr_expect_eq(egress_match(m, "GET", 3, "h.com", 5, 8443, EGRESS_PORT_TLS, "/y", 2), 1);
	cr_expect_eq(egress_match(m, "GET", 3, "h.com", 5, 443, EGRESS_PORT_TLS, "/y", 2), -1);
	cr_expect_eq(egress_match(m, "PUT", 3, "a.w.com", 7, 8080, EGRESS_PORT_PLAIN, "/", 1), 2);
	cr_expect_eq(egress_match(m, "PUT", 3, "a.w.com", 7, 80, EGRESS_PORT_PLAIN, "/", 1), -1);
	/* A tunnel is refused before any TLS to a port no rule of the host names. */
	cr_expect_eq(egress_match_host(m, "h.com", 5, 443, EGRESS_PORT_TLS), 0);
	cr_expect_eq(egress_match_host(m, "h.com", 5, 8443, EGRESS_PORT_TLS), 1);
	cr_expect_eq(egress_match_host(m, "h.com", 5, 22, EGRESS_PORT_TLS), -1);
	cr_expect_eq(egress_match_host(m, "w.com", 5, 8080, EGRESS_PORT_TLS), 2);
	cr_expect_eq(egress_match_host(m, "w.com", 5, 443, EGRESS_PORT_TLS), -1);
	egress_matcher_free(m);
}

Test(egress_match, a_question_mark_matches_exactly_one_byte_of_a_segment)
{
	struct egress_matcher *m = RULES("GET h.com/v?/x");

	ALLOWS(m, "GET h.com/v1/x", 0);
	DENIES(m, "GET h.com/v/x");
	DENIES(m, "GET h.com/v12/x");
	DENIES(m, "GET h.com/v//x");
	egress_matcher_free(m);
}

Test(egress_match, paths_are_case_sensitive)
{
	struct egress_matcher *m = RULES("GET h.com/Admin/*");

	ALLOWS(m, "GET h.com/Admin/x", 0);
	DENIES(m, "GET h.com/admin/x");
	egress_matcher_free(m);
}

Test(egress_match, a_middle_double_star_matches_zero_or_more_segments)
{
	struct egress_matcher *m = RULES("GET h.com/repos/**/issues");

	ALLOWS(m, "GET h.com/repos/issues", 0);
	ALLOWS(m, "GET h.com/repos/a/issues", 0);
	ALLOWS(m, "GET h.com/repos/a/b/issues", 0);
	ALLOWS(m, "GET h.com/repos//issues", 0);
	DENIES(m, "GET h.com/repos/xissues");
	DENIES(m, "GET h.com/repos/a/issues/1");
	DENIES(m, "GET h.com/repos/a/issuesx");
	DENIES(m, "GET h.com/reposissues");
	egress_matcher_free(m);
}

Test(egress_match, a_trailing_double_star_matches_anything_after_the_slash)
{
	struct egress_matcher *m = RULES("GET h.com/x/**");

	ALLOWS(m, "GET h.com/x/", 0);
	ALLOWS(m, "GET h.com/x/a/b", 0);
	ALLOWS(m, "GET h.com/x/?q=1", 0);
	ALLOWS(m, "GET h.com/x/a?q=/1", 0);
	DENIES(m, "GET h.com/x");
	DENIES(m, "GET h.com/x?q=1");
	DENIES(m, "GET h.com/xy/a");
	egress_matcher_free(m);
}

Test(egress_match, a_trailing_double_star_after_a_wildcard_needs_the_slash_only)
{
	struct egress_matcher *m = RULES("GET h.com/*/**");

	ALLOWS(m, "GET h.com/a/", 0);
	ALLOWS(m, "GET h.com/a/b/c", 0);
	ALLOWS(m, "GET h.com//", 0);
	DENIES(m, "GET h.com/a");
	DENIES(m, "GET h.com/");
	egress_matcher_free(m);

	m = RULES("GET h.com/v?/x/**");
	ALLOWS(m, "GET h.com/v1/x/", 0);
	ALLOWS(m, "GET h.com/v1/x/y/z", 0);
	DENIES(m, "GET h.com/v1/x");
	DENIES(m, "GET h.com/v1/xy/z");
	egress_matcher_free(m);
}

Test(egress_match, wildcard_segments_compare_bytes_exactly)
{
	struct egress_matcher *m = RULES("GET h.com/a*/?b", "GET h.com/*.JSON");

	ALLOWS(m, "GET h.com/ax/1b", 0);
	DENIES(m, "GET h.com/Ax/1b");
	DENIES(m, "GET h.com/ax/1B");
	ALLOWS(m, "GET h.com/x.JSON", 1);
	DENIES(m, "GET h.com/x.json");
	egress_matcher_free(m);
}

Test(egress_match, a_root_double_star_matches_every_path)
{
	struct egress_matcher *m = RULES("GET h.com/**");

	ALLOWS(m, "GET h.com/", 0);
	ALLOWS(m, "GET h.com/a/b/c", 0);
	ALLOWS(m, "GET h.com/?x", 0);
	egress_matcher_free(m);
}

Test(egress_match, globs_mixing_stars_and_double_stars_backtrack_correctly)
{
	struct egress_matcher *m = RULES("GET h.com/a/**/b*/**/c?", "GET h.com/**/x/*.json");

	ALLOWS(m, "GET h.com/a/b/c1", 0);
	ALLOWS(m, "GET h.com/a/1/2/bb/3/c1", 0);
	ALLOWS(m, "GET h.com/a/b/b/b/cc", 0);
	DENIES(m, "GET h.com/a/b/c");
	DENIES(m, "GET h.com/a/c1");
	ALLOWS(m, "GET h.com/x/a.json", 1);
	ALLOWS(m, "GET h.com/1/x/2/x/a.json", 1);
	DENIES(m, "GET h.com/1/x/2/a.json");
	egress_matcher_free(m);
}

Test(egress_match, pathological_globs_take_polynomial_time, .timeout = 10)
{
	struct egress_matcher *m =
	    RULES("GET h.com/*a*a*a*a*a*a*a*a*a*a*b", "GET h.com/**/a/**/a/**/a/**/a/**/b");
	char target[8000];
	size_t i;

	target[0] = '/';
	for (i = 1; i < sizeof(target); i++)
		target[i] = 'a';
	cr_assert_eq(egress_match(m, "GET", 3, "h.com", 5, 443, 443, target, sizeof(target)), -1);
	for (i = 1; i < sizeof(target); i++)
		target[i] = (i % 2) ? 'a' : '/';
	cr_assert_eq(egress_match(m, "GET", 3, "h.com", 5, 443, 443, target, sizeof(target)), -1);
	target[sizeof(target) - 1] = 'b';
	cr_assert_eq(egress_match(m, "GET", 3, "h.com", 5, 443, 443, target, sizeof(target)), 1);
	egress_matcher_free(m);
}

Test(egress_match, targets_of_8_kib_or_more_are_denied)
{
	struct egress_matcher *m = RULES("GET h.com");
	char *target = malloc(9000);

	memset(target, 'a', 9000);
	target[0] = '/';
	cr_assert_eq(egress_match(m, "GET", 3, "h.com", 5, 443, 443, target, 8191), 0);
	cr_assert_eq(egress_match(m, "GET", 3, "h.com", 5, 443, 443, target, 8192), -1);
	cr_assert_eq(egress_match(m, "GET", 3, "h.com", 5, 443, 443, target, 9000), -1);
	free(target);
	egress_matcher_free(m);
}

Test(egress_match, every_one_of_many_hosts_finds_its_own_rule)
{
	enum { N = 20000 };
	struct egress_rule *rules = arena_alloc(arena, N * sizeof(*rules));
	struct egress_matcher *m;
	char host[64];
	size_t i;

	for (i = 0; i < N; i++) {
		rules[i].methods = i % 2 ? EGRESS_GET : EGRESS_POST;
		rules[i].host = arena_printf(arena, "svc%zu.team%zu.example.com", i, i % 37);
		rules[i].wildcard = i % 3 == 0;
		rules[i].path = "/**";
	}
	m = egress_matcher_new(rules, N);
	cr_assert_not_null(m);
	for (i = 0; i < N; i++) {
		int len = snprintf(host, sizeof(host), "SVC%zu.team%zu.example.com", i, i % 37);

		cr_assert_eq(egress_match(m, i % 2 ? "GET" : "POST", i % 2 ? 3 : 4, host,
					  (size_t)len, 443, 443, "/", 1),
			     (ssize_t)i, "%s", host);
		cr_assert_eq(egress_match_host(m, host, (size_t)len, 443, 443), (ssize_t)i, "%s",
			     host);
		len = snprintf(host, sizeof(host), "x.svc%zu.team%zu.example.com", i, i % 37);
		cr_assert_eq(egress_match_host(m, host, (size_t)len, 443, 443),
			     i % 3 == 0 ? (ssize_t)i : -1, "%s", host);
	}
	cr_assert_eq(egress_match_host(m, "team1.example.com", 17, 443, 443), -1);
	cr_assert_eq(egress_match_host(m, "svc20000.team20.example.com", 27, 443, 443), -1);
	egress_matcher_free(m);
}

/* ---- rules built without the parser --------------------------------------- */

Test(egress_match, rules_that_could_mean_anything_never_match)
{
	struct egress_rule rules[] = {
	    {.methods = EGRESS_ANY, .host = "", .wildcard = true, .path = "/**"},
	    {.methods = EGRESS_ANY, .host = NULL, .wildcard = true, .path = "/**"},
	    {.methods = EGRESS_ANY, .host = "h.com", .path = NULL},
	    {.methods = EGRESS_ANY, .host = "h.com", .path = "x"},
	    {.methods = EGRESS_ANY, .host = "h..com", .path = "/**"},
	    {.methods = EGRESS_ANY, .host = "h.com.", .path = "/**"},
	    {.methods = 0, .host = "h.com", .path = "/**"},
	    {.methods = EGRESS_GET, .host = "H.Com", .path = "/**"},
	};
	struct egress_matcher *m = egress_matcher_new(rules, sizeof(rules) / sizeof(rules[0]));

	cr_assert_not_null(m);
	ALLOWS(m, "GET h.com/x", 7);
	DENIES(m, "POST h.com/x");
	DENIES(m, "GET other.org/x");
	cr_assert_eq(egress_match_host(m, "h.com", 5, 443, 443), 7);
	egress_matcher_free(m);
}

Test(egress_match, the_matcher_keeps_its_own_copy_of_the_rules)
{
	char host[] = "h.com", path[] = "/a/*";
	struct egress_rule r = {.methods = EGRESS_GET, .host = host, .path = path};
	struct egress_matcher *m = egress_matcher_new(&r, 1);

	memcpy(host, "x.org", 5);
	memcpy(path, "/b/c", 4);
	ALLOWS(m, "GET h.com/a/1", 0);
	DENIES(m, "GET x.org/a/1");
	egress_matcher_free(m);
}

/* ---- egress_normalize_target ------------------------------------------------ */

static void
assert_normal(const char *in, const char *want)
{
	char out[64];
	ssize_t n = egress_normalize_target(in, strlen(in), out, sizeof(out));

	if (!want) {
		cr_assert_eq(n, -1, "\"%s\" normalised to \"%s\", expected a denial", in,
			     n >= 0 ? out : "");
		return;
	}
	cr_assert_eq(n, (ssize_t)strlen(want), "\"%s\": length %zd, expected \"%s\"", in, n, want);
	cr_assert_str_eq(out, want, "\"%s\" normalised to \"%s\", expected \"%s\"", in, out, want);
}

Test(egress_normalize, dot_segments_follow_rfc_3986)
{
	assert_normal("/", "/");
	assert_normal("/a/b", "/a/b");
	assert_normal("/a/./b", "/a/b");
	assert_normal("/a/b/../c", "/a/c");
	assert_normal("/a/b/..", "/a/");
	assert_normal("/a/b/.", "/a/b/");
	assert_normal("/a/..", "/");
	assert_normal("/.", "/");
	assert_normal("/./", "/");
	assert_normal("/a//b", "/a//b");
	assert_normal("/a//../b", "/a/b");
	assert_normal("/a/.../b", "/a/.../b");
	assert_normal("/a/..b/.c", "/a/..b/.c");
}

Test(egress_normalize, climbing_above_the_root_is_refused)
{
	assert_normal("/..", NULL);
	assert_normal("/../", NULL);
	assert_normal("/a/../..", NULL);
	assert_normal("/./../a", NULL);
}

Test(egress_normalize, the_query_is_kept_verbatim_and_the_fragment_dropped)
{
	assert_normal("/a/../b?x=/../y&z=%2e", "/b?x=/../y&z=%2e");
	assert_normal("/a#frag", "/a");
	assert_normal("/a?b#c?d", "/a?b");
	assert_normal("/a#%2e%2e", "/a");
	assert_normal("/?", "/?");
}

Test(egress_normalize, ambiguous_or_malformed_targets_are_refused)
{
	assert_normal("", NULL);
	assert_normal("a", NULL);
	assert_normal("?a", NULL);
	assert_normal("#a", NULL);
	assert_normal("/%2e", NULL);
	assert_normal("/%2E%2e/", NULL);
	assert_normal("/a%2fb", NULL);
	assert_normal("/a%5Cb", NULL);
	assert_normal("/a\\b", NULL);
	assert_normal("/a/..;/b", NULL);
	assert_normal("/a\tb", NULL);
	assert_normal("/a#\x01", NULL);
}

Test(egress_normalize, the_output_must_fit_with_its_nul)
{
	char out[4];

	cr_assert_eq(egress_normalize_target("/abc", 4, out, 4), -1);
	cr_assert_eq(egress_normalize_target("/ab", 3, out, 4), 3);
	cr_assert_str_eq(out, "/ab");
	cr_assert_eq(egress_normalize_target("/a?b", 4, out, 4), -1);
	cr_assert_eq(egress_normalize_target("/x/../abc", 9, out, 4), -1);
	cr_assert_eq(egress_normalize_target("/x/../ab", 8, out, 4), 3);
	cr_assert_eq(egress_normalize_target("/", 1, out, 1), -1);
}

/* ---- randomized cross-check against a linear reference ---------------------- */

/*
 * The reference works on strings the simple way: a host compare with an
 * explicit suffix test, RFC 3986 dot removal over an array of segments, and
 * a recursive glob straight from the definition ("**" + "/" is any run of
 * whole segments, a trailing "**" is anything).  Exponential in theory, but
 * the random inputs are short.
 */

static bool
ref_host_ok(const char *h, size_t n)
{
	size_t i, label = 0;

	if (n == 0 || n > 253)
		return false;
	for (i = 0; i < n; i++) {
		char c = h[i];

		if (c == '.') {
			if (label == 0)
				return false;
			label = 0;
			continue;
		}
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '-'))
			return false;
		if (++label > 63)
			return false;
	}
	return label > 0;
}

static bool
ref_host_match(const struct egress_rule *r, const char *h, size_t n)
{
	size_t rn = strlen(r->host);

	if (n == rn && strncasecmp(h, r->host, n) == 0)
		return true;
	return r->wildcard && n > rn && h[n - rn - 1] == '.' &&
	       strncasecmp(h + n - rn, r->host, rn) == 0;
}

static int
ref_normalize(const char *in, size_t len, char *out, size_t cap)
{
	const char *seg[128];
	size_t seg_len[128], depth = 0, i, end = len, qpos, n;
	const char *p;

	if (len == 0 || in[0] != '/')
		return -1;
	for (i = 0; i < len; i++) {
		if ((unsigned char)in[i] < 0x20 || in[i] == 0x7f)
			return -1;
	}
	p = memchr(in, '#', len);
	if (p)
		end = (size_t)(p - in);
	p = memchr(in, '?', end);
	qpos = p ? (size_t)(p - in) : end;
	for (i = 0; i < qpos; i++) {
		if (in[i] == '\\')
			return -1;
		if (in[i] == '%' && i + 2 < qpos &&
		    (strncasecmp(in + i, "%2e", 3) == 0 || strncasecmp(in + i, "%2f", 3) == 0 ||
		     strncasecmp(in + i, "%5c", 3) == 0))
			return -1;
	}
	for (i = 1;;) {
		const char *s = in + i;
		size_t l = 0;
		bool last;

		while (i + l < qpos && s[l] != '/')
			l++;
		last = i + l >= qpos;
		if ((l >= 2 && s[0] == '.' && s[1] == ';') ||
		    (l >= 3 && s[0] == '.' && s[1] == '.' && s[2] == ';'))
			return -1;
		if (l == 1 && s[0] == '.') {
			if (last)
				seg[depth] = s, seg_len[depth++] = 0;
		} else if (l == 2 && s[0] == '.' && s[1] == '.') {
			if (depth == 0)
				return -1;
			depth--;
			if (last)
				seg[depth] = s, seg_len[depth++] = 0;
		} else {
			seg[depth] = s, seg_len[depth++] = l;
		}
		if (last)
			break;
		i += l + 1;
	}
	n = 0;
	out[n++] = '/';
	for (i = 0; i < depth; i++) {
		if (i)
			out[n++] = '/';
		memcpy(out + n, seg[i], seg_len[i]);
		n += seg_len[i];
	}
	memcpy(out + n, in + qpos, end - qpos);
	n += end - qpos;
	cr_assert_lt(n, cap);
	out[n] = '\0';
	return (int)n;
}

static bool
ref_glob(const char *p, const char *s)
{
	const char *q;

	if (*p == '\0')
		return *s == '\0';
	if (p[0] == '*' && p[1] == '*' && p[-1] == '/') {
		if (p[2] == '\0')
			return true;
		/* "**" "/": skip any prefix of S that ends with '/' (or none). */
		if (ref_glob(p + 3, s))
			return true;
		for (q = s; *q; q++) {
			if (*q == '/' && ref_glob(p + 3, q + 1))
				return true;
		}
		return false;
	}
	if (*p == '*') {
		for (q = s;; q++) {
			if (ref_glob(p + 1, q))
				return true;
			if (*q == '\0' || *q == '/')
				return false;
		}
	}
	if (*p == '?')
		return *s && *s != '/' && ref_glob(p + 1, s + 1);
	return *s == *p && ref_glob(p + 1, s + 1);
}

static ssize_t
ref_match(const struct egress_rule *rules, size_t n, const char *method, const char *host,
	  unsigned port, unsigned default_port, const char *target, bool host_only)
{
	char norm[512];
	unsigned bit = egress_method_bit(method, strlen(method));
	size_t i;

	if (!ref_host_ok(host, strlen(host)))
		return -1;
	if (!host_only && ref_normalize(target, strlen(target), norm, sizeof(norm)) < 0)
		return -1;
	/* The glob sees the path alone. */
	norm[strcspn(norm, "?")] = '\0';
	for (i = 0; i < n; i++) {
		const struct egress_rule *r = &rules[i];

		if (!ref_host_match(r, host, strlen(host)))
			continue;
		if ((r->port ? r->port : default_port) != port)
			continue;
		if (host_only)
			return (ssize_t)i;
		if (r->methods != EGRESS_ANY && !(r->methods & bit))
			continue;
		/* The glob starts with '/', so ref_glob may look at p[-1]. */
		if (norm[0] == '/' && ref_glob(r->path + 1, norm + 1))
			return (ssize_t)i;
	}
	return -1;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static unsigned
rnd(unsigned below)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (unsigned)(rng_state % below);
}

static const char *
pick(const char *const *list, size_t n)
{
	return list[rnd((unsigned)n)];
}

#define PICK(list) pick((list), sizeof(list) / sizeof((list)[0]))

static const char *const labels[] = {"a", "b", "ab", "x-1", "com", "B", "Ab"};
static const char *const method_words[] = {"GET",      "HEAD",	  "POST",  "PUT", "DELETE",
					   "PATCH",    "OPTIONS", "TRACE", "get", "pOsT",
					   "PROPFIND", "CONNECT", ""};
static const char *const glob_segs[] = {"a",  "b", "ab",  "*",	 "?",	"a*", "*b", "**", "**",
					"a?", "",  "*.c", "x;y", "?*?", "A*", "*B", "Ab"};
static const char *const target_segs[] = {"a",	 "b",	"ab",  "aab", "ba",  "",    "",
					  ".",	 "..",	"%2e", "%2F", "x;y", "a.c", "..;",
					  "b.c", "abb", "A",   "aB",  "Ab",  "AB"};

static void
random_host(char *out, unsigned max_labels)
{
	unsigned i, n = 1 + rnd(max_labels);

	out[0] = '\0';
	for (i = 0; i < n; i++) {
		if (i)
			strcat(out, ".");
		strcat(out, PICK(labels));
	}
}

static void
random_rule_text(char *out)
{
	static const char *const names[] = {"GET",    "head",  "Post",	  "PUT",
					    "DELETE", "patch", "OPTIONS", "TRACE"};
	unsigned i, n;

	out[0] = '\0';
	if (rnd(4) == 0) {
		strcat(out, "*");
	} else {
		for (i = 0, n = 1 + rnd(3); i < n; i++) {
			if (i)
				strcat(out, ",");
			strcat(out, PICK(names));
		}
	}
	strcat(out, rnd(3) == 0 ? " *." : " ");
	random_host(out + strlen(out), 3);
	if (rnd(4) == 0)
		strcat(out, rnd(2) ? ":8443" : ":80");
	if (rnd(3) == 0)
		return;
	for (i = 0, n = 1 + rnd(4); i < n; i++) {
		strcat(out, "/");
		strcat(out, PICK(glob_segs));
	}
}

static void
random_target(char *out)
{
	unsigned i, n = rnd(6);

	out[0] = '\0';
	if (rnd(20) == 0)
		strcat(out, "a");
	for (i = 0; i < n || i == 0; i++) {
		strcat(out, "/");
		if (n)
			strcat(out, PICK(target_segs));
	}
	if (rnd(4) == 0)
		strcat(out, rnd(2) ? "?q=a/b" : "?ab");
	if (rnd(6) == 0)
		strcat(out, "#/../x");
}

/* An instance of GLOB: stars and question marks filled in, sometimes wrongly. */
static void
target_from_glob(char *out, const char *glob)
{
	static const char *const fill[] = {"", "a", "b", "ab", "A", "x.c"};
	size_t n = 0;
	const char *p;
	unsigned k;

	for (p = glob; *p && n < 100; p++) {
		if (p[0] == '*' && p[1] == '*') {
			for (k = rnd(3); k > 0 && n < 90; k--)
				n += (size_t)sprintf(out + n, "%s%s", PICK(fill), p[2] ? "/" : "");
			if (!p[2] && rnd(2))
				n += (size_t)sprintf(out + n, "%s", PICK(fill));
			p += p[2] ? 2 : 1;
		} else if (*p == '*') {
			n += (size_t)sprintf(out + n, "%s", PICK(fill));
		} else if (*p == '?') {
			out[n++] = rnd(8) ? 'q' : '/';
		} else {
			out[n++] = *p;
		}
	}
	out[n] = '\0';
	if (rnd(6) == 0)
		strcat(out, "?q=1");
}

/* RULE's host when given, maybe with a subdomain, in random case; or any host. */
static void
random_request_host(char *out, const struct egress_rule *rule)
{
	size_t i;

	if (rule) {
		out[0] = '\0';
		if (rnd(3) == 0) {
			strcat(out, PICK(labels));
			strcat(out, ".");
		}
		strcat(out, rule->host);
		for (i = 0; out[i]; i++) {
			if (out[i] >= 'a' && out[i] <= 'z' && rnd(4) == 0)
				out[i] = (char)(out[i] - 'a' + 'A');
		}
	} else {
		random_host(out, 4);
	}
	switch (rnd(16)) {
	case 0:
		strcat(out, ".");
		break;
	case 1:
		memmove(out + 1, out, strlen(out) + 1);
		out[0] = '.';
		break;
	case 2:
		strcat(out, "_");
		break;
	case 3:
		out[0] = '\0';
		break;
	}
}

Test(egress_match, the_trie_agrees_with_a_linear_scan_on_random_rules)
{
	enum { SETS = 300, MAX_RULES = 60, REQUESTS = 400 };
	static char texts[MAX_RULES][160];
	struct egress_rule rules[MAX_RULES];
	size_t set, i, checked = 0, allowed = 0;

	for (set = 0; set < SETS; set++) {
		size_t n = rnd(MAX_RULES + 1);
		struct egress_matcher *m;

		for (i = 0; i < n; i++) {
			random_rule_text(texts[i]);
			rules[i] = rule_from(texts[i]);
		}
		m = egress_matcher_new(rules, n);
		cr_assert_not_null(m);
		for (i = 0; i < REQUESTS; i++) {
			char host[96], target[160];
			/* Aim half the requests at one rule, so that many match. */
			const struct egress_rule *aim =
			    n && rnd(2) ? &rules[rnd((unsigned)n)] : NULL;
			const char *method = PICK(method_words);
			ssize_t got, want, got_host, want_host;
			unsigned port, def;

			if (aim && aim->methods != EGRESS_ANY && rnd(4)) {
				unsigned bit = 1u << rnd(8);

				while (!(aim->methods & bit))
					bit = (bit << 1) & EGRESS_ANY ? bit << 1 : 1;
				method = egress_method_name(bit);
			}
			random_request_host(host, aim);
			if (aim && rnd(4))
				target_from_glob(target, aim->path);
			else
				random_target(target);
			/* Mostly the default ports, sometimes another one. */
			def = rnd(2) ? 443 : 80;
			port = rnd(5) ? def : rnd(2) ? 8443 : 80;
			if (aim && rnd(4))
				port = aim->port ? aim->port : def;
			got = egress_match(m, method, strlen(method), host, strlen(host), port, def,
					   target, strlen(target));
			want = ref_match(rules, n, method, host, port, def, target, false);
			cr_assert_eq(got, want,
				     "set %zu: %s %s %s: trie %zd, reference %zd (rule %s)", set,
				     method, host, target, got, want,
				     want >= 0	? texts[want]
				     : got >= 0 ? texts[got]
						: "-");
			got_host = egress_match_host(m, host, strlen(host), port, def);
			want_host = ref_match(rules, n, method, host, port, def, target, true);
			cr_assert_eq(got_host, want_host,
				     "set %zu: host %s: trie %zd, reference %zd", set, host,
				     got_host, want_host);
			checked++;
			allowed += got >= 0;
		}
		egress_matcher_free(m);
	}
	/* The generator must exercise both outcomes, or the test proves little. */
	cr_assert_gt(allowed, checked / 10, "only %zu of %zu requests allowed", allowed, checked);
	cr_assert_lt(allowed, checked - checked / 10, "%zu of %zu requests allowed", allowed,
		     checked);
}

/* ---- subsumption (--diff) --------------------------------------------------------- */

TestSuite(egress_subsume, .init = setup, .fini = teardown);

static bool
covers(const char *a, const char *b)
{
	struct egress_rule ra = rule_from(a), rb = rule_from(b);

	return egress_rules_cover(&ra, 1, &rb, NULL);
}

Test(egress_subsume, globs_are_compared_as_languages)
{
	cr_expect(egress_glob_covers("/**", "/repos/a/b"));
	cr_expect(egress_glob_covers("/repos/**", "/repos/myorg/**"));
	cr_expect(!egress_glob_covers("/repos/myorg/**", "/repos/**"));
	cr_expect(egress_glob_covers("/repos/*/issues", "/repos/myorg/issues"));
	cr_expect(!egress_glob_covers("/repos/*/issues", "/repos/**/issues"));
	cr_expect(egress_glob_covers("/repos/**/issues", "/repos/*/issues"));
	cr_expect(egress_glob_covers("/repos/**/issues", "/repos/issues"));
	cr_expect(egress_glob_covers("/a*", "/ab*"));
	cr_expect(!egress_glob_covers("/ab*", "/a*"));
	cr_expect(egress_glob_covers("/a?c", "/abc"));
	cr_expect(!egress_glob_covers("/a?c", "/a/c"));
	cr_expect(!egress_glob_covers("/x/**", "/x"));
	cr_expect(egress_glob_covers("/x/**", "/x/"));
	cr_expect(egress_glob_covers("/*/**", "/a/b/**"));
	cr_expect(!egress_glob_covers("/*", "/a/b"));
}

Test(egress_subsume, methods_hosts_and_ports_must_all_be_covered)
{
	cr_expect(covers("* api.github.com/**", "GET api.github.com/repos/myorg/**"));
	cr_expect(!covers("GET api.github.com/repos/myorg/**", "* api.github.com/**"));
	cr_expect(!covers("GET api.github.com/**", "GET,POST api.github.com/x"));
	cr_expect(covers("* *.github.com/**", "GET api.github.com/x"));
	cr_expect(covers("* *.github.com/**", "GET *.api.github.com/x"));
	cr_expect(!covers("* api.github.com/**", "GET *.github.com/x"));
	cr_expect(!covers("* github.com/**", "GET xgithub.com/x"));
	cr_expect(!covers("* api.github.com:8443/**", "GET api.github.com/x"));
	{
		struct egress_rule a[2] = {rule_from("GET x.com/**"), rule_from("POST x.com/**")};
		struct egress_rule b = rule_from("GET,POST x.com/a");

		cr_expect(egress_rules_cover(a, 2, &b, NULL), "two rules cover one method each");
	}
}

/* ---- tcp rules ------------------------------------------------------------- */

Test(egress_match, a_tcp_rule_allows_a_stream_to_its_host_and_port_only)
{
	struct egress_matcher *m = RULES("GET api.example.com/v1/**", "tcp git.example.com:22",
					 "tcp *.db.example.com:5432");
	ssize_t r;

	cr_assert_eq(egress_match_tcp(m, "git.example.com", 15, 22), 1);
	cr_assert_eq(egress_match_tcp(m, "GIT.example.com", 15, 22), 1);
	cr_assert_eq(egress_match_tcp(m, "git.example.com", 15, 2222), -1);
	cr_assert_eq(egress_match_tcp(m, "git.example.com", 15, 0), -1);
	cr_assert_eq(egress_match_tcp(m, "a.git.example.com", 17, 22), -1);
	cr_assert_eq(egress_match_tcp(m, "db.example.com", 14, 5432), 2);
	cr_assert_eq(egress_match_tcp(m, "x.y.db.example.com", 18, 5432), 2);
	cr_assert_eq(egress_match_tcp(m, "evildb.example.com", 18, 5432), -1);
	/* An HTTP rule never allows a raw stream. */
	cr_assert_eq(egress_match_tcp(m, "api.example.com", 15, 443), -1);
	cr_assert_eq(egress_decide_connect(m, "api.example.com", 15, 443, &r),
		     EGRESS_CONNECT_INSPECT);
	cr_assert_eq(r, 0);
	cr_assert_eq(egress_decide_connect(m, "git.example.com", 15, 22, &r),
		     EGRESS_CONNECT_TUNNEL);
	cr_assert_eq(r, 1);
	cr_assert_eq(egress_decide_connect(m, "git.example.com", 15, 443, &r), EGRESS_CONNECT_DENY);
	cr_assert_eq(r, -1);
	egress_matcher_free(m);
}

Test(egress_match, a_tcp_rule_never_allows_an_http_request)
{
	struct egress_matcher *m = RULES("tcp h.example.com:443", "tcp p.example.com:80");

	DENIES(m, "GET h.example.com/");
	cr_assert_eq(egress_match(m, "GET", 3, "p.example.com", 13, 80, 80, "/", 1), -1);
	cr_assert_eq(egress_match_host(m, "h.example.com", 13, 443, 443), -1);
	cr_assert_eq(egress_match_host(m, "p.example.com", 13, 80, 80), -1);
	egress_matcher_free(m);
}

Test(egress_match, tcp_and_http_rules_keep_their_order)
{
	struct egress_matcher *m = RULES("tcp h.example.com:2222", "* *.example.com/**",
					 "tcp h.example.com:2222");

	ALLOWS(m, "GET h.example.com/x", 1);
	cr_assert_eq(egress_match_tcp(m, "h.example.com", 13, 2222), 0);
	egress_matcher_free(m);
}

Test(egress_match, a_tcp_rule_built_without_a_port_is_left_out)
{
	struct egress_rule r = rule_from("tcp h.example.com:22");
	struct egress_matcher *m;

	r.port = 0;
	m = egress_matcher_new(&r, 1);
	cr_assert_not_null(m);
	cr_assert_eq(egress_match_tcp(m, "h.example.com", 13, 22), -1);
	egress_matcher_free(m);
}

Test(egress_match, subsumption_keeps_tcp_and_http_apart)
{
	struct egress_rule a[] = {rule_from("tcp *.example.com:22"), rule_from("* h.example.com")};
	struct egress_rule b = rule_from("tcp git.example.com:22");
	struct egress_witness w;

	cr_assert(egress_rules_cover(a, 2, &b, &w));
	b = rule_from("tcp git.example.com:2222");
	cr_assert(!egress_rules_cover(a, 2, &b, &w));
	cr_assert(w.tcp);
	cr_assert_eq(w.port, 2222);
	cr_assert_str_eq(w.host, "git.example.com");
	b = rule_from("tcp *.h.example.com:443");
	cr_assert(!egress_rules_cover(a, 2, &b, &w), "an HTTP rule covers no tcp rule");
	b = rule_from("GET h.example.com/x");
	cr_assert(egress_rules_cover(a, 2, &b, &w));
	b = rule_from("GET x.example.com:22/x");
	cr_assert(!egress_rules_cover(a, 2, &b, &w), "a tcp rule covers no HTTP rule");
	cr_assert(!w.tcp);
}

/* A connection the sandbox's resolver brought may be plain HTTP: a rule
 * without a port takes 80 as well as 443 there, and nothing else. */
Test(egress_match, a_transparent_connection_takes_80_and_443_for_a_rule_without_a_port)
{
	struct egress_matcher *m = RULES("GET api.example.com/**", "tcp db.example.com:5432",
					 "GET reg.example.com:8443/v2/**");
	ssize_t r;

	cr_assert_eq(egress_decide_transparent(m, "api.example.com", 15, 443, &r),
		     EGRESS_CONNECT_INSPECT);
	cr_assert_eq(r, 0);
	cr_assert_eq(egress_decide_transparent(m, "api.example.com", 15, 80, &r),
		     EGRESS_CONNECT_INSPECT);
	cr_assert_eq(r, 0);
	/* A CONNECT to port 80 is not a rule without a port's: it expects TLS. */
	cr_assert_eq(egress_decide_connect(m, "api.example.com", 15, 80, &r), EGRESS_CONNECT_DENY);
	cr_assert_eq(egress_decide_transparent(m, "api.example.com", 15, 8080, &r),
		     EGRESS_CONNECT_DENY);
	cr_assert_eq(egress_decide_transparent(m, "reg.example.com", 15, 8443, &r),
		     EGRESS_CONNECT_INSPECT);
	cr_assert_eq(egress_decide_transparent(m, "reg.example.com", 15, 80, &r),
		     EGRESS_CONNECT_DENY);
	cr_assert_eq(egress_decide_transparent(m, "db.example.com", 14, 5432, &r),
		     EGRESS_CONNECT_TUNNEL);
	cr_assert_eq(r, 1);
	cr_assert_eq(egress_decide_transparent(m, "db.example.com", 14, 80, &r),
		     EGRESS_CONNECT_DENY);
	cr_assert_eq(r, -1);
	egress_matcher_free(m);
}
