/*
 * test_egress_parse.c - the egress rule parser: fields of valid rules, and
 * every error message verbatim with the bytes it points at.
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

TestSuite(egress_parse, .init = setup, .fini = teardown);

/* TEXT as a C-like literal for failure messages (bounded, NUL-safe). */
static const char *
show(const char *text, size_t len)
{
	static char buf[4][200];
	static int which;
	char *out = buf[which++ % 4];
	size_t i, n = 0;

	for (i = 0; i < len && n + 8 < sizeof(buf[0]); i++) {
		unsigned char c = (unsigned char)text[i];

		if (c >= 0x20 && c < 0x7f && c != '\\')
			out[n++] = (char)c;
		else
			n += (size_t)snprintf(out + n, 5, "\\x%02x", c);
	}
	if (i < len)
		n += (size_t)snprintf(out + n, 4, "...");
	out[n] = '\0';
	return out;
}

static struct egress_rule
parse_ok(const char *text, size_t len)
{
	struct egress_rule r;
	struct egress_error e;

	memset(&r, 0, sizeof(r));
	memset(&e, 0, sizeof(e));
	cr_assert_eq(egress_parse_rule(arena, text, len, &r, &e), 0,
		     "rule \"%s\" was refused at %zu+%zu: %s", show(text, len), e.offset, e.length,
		     e.message);
	return r;
}

static void
parse_fails(const char *text, size_t len, size_t offset, size_t length, const char *message)
{
	struct egress_rule r;
	struct egress_error e;

	memset(&e, 0, sizeof(e));
	cr_assert_eq(egress_parse_rule(arena, text, len, &r, &e), -1,
		     "rule \"%s\" was accepted, expected \"%s\"", show(text, len), message);
	cr_assert_str_eq(e.message, message, "rule \"%s\": message \"%s\", expected \"%s\"",
			 show(text, len), e.message, message);
	cr_assert(e.offset == offset && e.length == length,
		  "rule \"%s\" (%s): points at %zu+%zu, expected %zu+%zu", show(text, len), message,
		  e.offset, e.length, offset, length);
}

/* String literals, which may hold NUL bytes: their size gives the length. */
#define PARSE_OK(lit) parse_ok((lit), sizeof(lit) - 1)
#define PARSE_FAILS(lit, off, len, msg) parse_fails((lit), sizeof(lit) - 1, (off), (len), (msg))

static void
assert_rule(struct egress_rule r, unsigned methods, const char *host, bool wildcard,
	    const char *path, bool path_given)
{
	cr_assert_eq(r.methods, methods, "methods %#x, expected %#x", r.methods, methods);
	cr_assert_str_eq(r.host, host, "host \"%s\", expected \"%s\"", r.host, host);
	cr_assert_eq(r.wildcard, wildcard, "wildcard %d, expected %d", r.wildcard, wildcard);
	cr_assert_str_eq(r.path, path, "path \"%s\", expected \"%s\"", r.path, path);
	cr_assert_eq(r.path_given, path_given, "path_given %d, expected %d", r.path_given,
		     path_given);
}

/* ---- valid rules -------------------------------------------------------- */

Test(egress_parse, a_method_and_a_host_allow_every_path)
{
	assert_rule(PARSE_OK("GET api.github.com"), EGRESS_GET, "api.github.com", false, "/**",
		    false);
}

Test(egress_parse, a_path_is_kept_verbatim)
{
	assert_rule(PARSE_OK("GET api.github.com/repos/myorg/**"), EGRESS_GET, "api.github.com",
		    false, "/repos/myorg/**", true);
	assert_rule(PARSE_OK("GET h.com/v1/*/details"), EGRESS_GET, "h.com", false, "/v1/*/details",
		    true);
	assert_rule(PARSE_OK("GET h.com/search?q=*"), EGRESS_GET, "h.com", false, "/search?q=*",
		    true);
	assert_rule(PARSE_OK("GET h.com/%7Euser/a;b=c"), EGRESS_GET, "h.com", false,
		    "/%7Euser/a;b=c", true);
}

Test(egress_parse, a_lone_slash_is_a_given_path)
{
	assert_rule(PARSE_OK("GET h.com/"), EGRESS_GET, "h.com", false, "/", true);
	assert_rule(PARSE_OK("GET h.com/**"), EGRESS_GET, "h.com", false, "/**", true);
}

Test(egress_parse, every_method_name_sets_its_own_bit)
{
	static const struct {
		const char *rule;
		unsigned bit;
	} cases[] = {
	    {"GET a.com", EGRESS_GET},	       {"HEAD a.com", EGRESS_HEAD},
	    {"POST a.com", EGRESS_POST},       {"PUT a.com", EGRESS_PUT},
	    {"DELETE a.com", EGRESS_DELETE},   {"PATCH a.com", EGRESS_PATCH},
	    {"OPTIONS a.com", EGRESS_OPTIONS}, {"TRACE a.com", EGRESS_TRACE},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct egress_rule r = parse_ok(cases[i].rule, strlen(cases[i].rule));

		cr_assert_eq(r.methods, cases[i].bit, "\"%s\": methods %#x", cases[i].rule,
			     r.methods);
	}
}

Test(egress_parse, methods_are_case_insensitive_and_combine)
{
	cr_assert_eq(PARSE_OK("get,Post,pUT a.com").methods, EGRESS_GET | EGRESS_POST | EGRESS_PUT);
	cr_assert_eq(PARSE_OK("GET,GET a.com").methods, EGRESS_GET);
	cr_assert_eq(PARSE_OK("Options,trace a.com").methods, EGRESS_OPTIONS | EGRESS_TRACE);
}

Test(egress_parse, a_star_means_every_method)
{
	cr_assert_eq(PARSE_OK("* a.com").methods, EGRESS_ANY);
	cr_assert_eq(PARSE_OK("GET,* a.com").methods, EGRESS_ANY);
}

Test(egress_parse, hosts_are_lower_cased)
{
	assert_rule(PARSE_OK("GET API.GitHub.COM/Repos/**"), EGRESS_GET, "api.github.com", false,
		    "/Repos/**", true);
}

Test(egress_parse, a_leading_star_dot_makes_a_wildcard_host)
{
	assert_rule(PARSE_OK("* *.AmazonAWS.com"), EGRESS_ANY, "amazonaws.com", true, "/**", false);
	assert_rule(PARSE_OK("PUT *.s3.amazonaws.com/bucket/*"), EGRESS_PUT, "s3.amazonaws.com",
		    true, "/bucket/*", true);
}

Test(egress_parse, digits_and_hyphens_are_host_characters)
{
	assert_rule(PARSE_OK("GET 10.0.0.1"), EGRESS_GET, "10.0.0.1", false, "/**", false);
	assert_rule(PARSE_OK("GET svc-1.example-2.com"), EGRESS_GET, "svc-1.example-2.com", false,
		    "/**", false);
}

Test(egress_parse, surrounding_white_space_is_ignored)
{
	assert_rule(PARSE_OK("  \t GET a.com/x \t\r\n"), EGRESS_GET, "a.com", false, "/x", true);
	assert_rule(PARSE_OK("\n\vGET\t\ta.com\f"), EGRESS_GET, "a.com", false, "/**", false);
}

Test(egress_parse, any_white_space_separates_methods_from_host)
{
	assert_rule(PARSE_OK("GET,POST \t a.com"), EGRESS_GET | EGRESS_POST, "a.com", false, "/**",
		    false);
}

Test(egress_parse, the_rule_has_no_source_location_of_its_own)
{
	struct egress_rule r = PARSE_OK("GET a.com");

	cr_assert_eq(r.loc.line, 0);
}

Test(egress_parse, a_label_of_63_bytes_and_a_host_of_253_are_accepted)
{
	char rule[400];
	char *p;

	memcpy(rule, "GET ", 4);
	memset(rule + 4, 'a', 63);
	memcpy(rule + 67, ".com", 5);
	cr_assert_eq(strlen(parse_ok(rule, strlen(rule)).host), 67);

	/* 4 labels of 62 and one of 1: 4 * 63 + 1 = 253 bytes */
	p = rule + 4;
	for (int i = 0; i < 4; i++) {
		memset(p, 'b', 62);
		p[62] = '.';
		p += 63;
	}
	memcpy(p, "c", 2);
	cr_assert_eq(strlen(parse_ok(rule, strlen(rule)).host), 253);
}

Test(egress_parse, very_long_paths_and_method_lists_are_accepted)
{
	size_t path_len = 200000, len = 9 + path_len, i, n;
	char *rule = malloc(len);
	struct egress_rule r;

	memcpy(rule, "GET a.com", 9);
	for (i = 0; i < path_len; i++)
		rule[9 + i] = (i % 10) ? 'x' : '/';
	r = parse_ok(rule, len);
	cr_assert_eq(strlen(r.path), path_len);
	cr_assert_eq(memcmp(r.path, rule + 9, path_len), 0);
	free(rule);

	/* 50,000 methods: the parser stack must not grow with the list. */
	rule = malloc(4 * 50000 + 8);
	for (i = n = 0; i < 50000; i++, n += 4)
		memcpy(rule + n, i % 2 ? "PUT," : "GET,", 4);
	memcpy(rule + n - 1, " a.b", 4);
	r = parse_ok(rule, n + 3);
	cr_assert_eq(r.methods, EGRESS_GET | EGRESS_PUT);
	cr_assert_str_eq(r.host, "a.b");
	free(rule);
}

Test(egress_parse, a_megabyte_of_white_space_is_an_empty_rule)
{
	size_t len = 1 << 20;
	char *rule = malloc(len);
	struct egress_rule r;
	struct egress_error e;

	memset(rule, ' ', len);
	cr_assert_eq(egress_parse_rule(arena, rule, len, &r, &e), -1);
	cr_assert_str_eq(e.message, "empty egress rule");
	free(rule);
}

Test(egress_parse, the_text_need_not_be_nul_terminated)
{
	/* Only the first 9 bytes are the rule; the rest must not be read. */
	static const char text[] = "GET a.com/xyz";

	assert_rule(parse_ok(text, 9), EGRESS_GET, "a.com", false, "/**", false);
	assert_rule(parse_ok(text, 11), EGRESS_GET, "a.com", false, "/x", true);
}

Test(egress_parse, a_rule_fitting_the_buffer_exactly_is_read_within_bounds)
{
	/* Under ASan a read past the end of this heap block would fail. */
	char *p = malloc(8);

	memcpy(p, "GET a.bc", 8);
	assert_rule(parse_ok(p, 8), EGRESS_GET, "a.bc", false, "/**", false);
	memcpy(p, "GET a/b*", 8);
	assert_rule(parse_ok(p, 8), EGRESS_GET, "a", false, "/b*", true);
	free(p);
}

/* ---- egress_method_bit and egress_method_name ---------------------------- */

Test(egress_parse, method_bits_and_names_round_trip)
{
	unsigned bit;

	for (bit = 1; bit < EGRESS_ANY; bit <<= 1) {
		const char *name = egress_method_name(bit);

		cr_assert_not_null(name, "no name for bit %#x", bit);
		cr_assert_eq(egress_method_bit(name, strlen(name)), bit, "%s", name);
	}
	cr_assert_str_eq(egress_method_name(EGRESS_DELETE), "DELETE");
}

Test(egress_parse, method_bits_ignore_case_but_not_extra_bytes)
{
	cr_assert_eq(egress_method_bit("options", 7), EGRESS_OPTIONS);
	cr_assert_eq(egress_method_bit("GeT", 3), EGRESS_GET);
	cr_assert_eq(egress_method_bit("GETX", 3), EGRESS_GET, "only LEN bytes count");
	cr_assert_eq(egress_method_bit("GETX", 4), 0);
	cr_assert_eq(egress_method_bit("GE", 2), 0);
	cr_assert_eq(egress_method_bit("*", 1), 0);
	cr_assert_eq(egress_method_bit("CONNECT", 7), 0);
	cr_assert_eq(egress_method_bit("G\0T", 3), 0);
	cr_assert_eq(egress_method_bit("", 0), 0);
}

Test(egress_parse, method_names_exist_only_for_single_bits_and_the_star)
{
	cr_assert_str_eq(egress_method_name(EGRESS_ANY), "*");
	cr_assert_null(egress_method_name(0));
	cr_assert_null(egress_method_name(EGRESS_GET | EGRESS_POST));
	cr_assert_null(egress_method_name(1u << 8));
}

/* ---- errors, verbatim ---------------------------------------------------- */

Test(egress_parse, an_empty_rule_is_reported)
{
	PARSE_FAILS("", 0, 1, "empty egress rule");
	PARSE_FAILS("   ", 0, 3, "empty egress rule");
	PARSE_FAILS(" \t\r\n", 0, 4, "empty egress rule");
}

Test(egress_parse, a_missing_host_is_reported_just_past_the_methods)
{
	PARSE_FAILS("GET", 3, 1, "missing host after the method list");
	PARSE_FAILS("GET   ", 3, 1, "missing host after the method list");
	PARSE_FAILS("  GET,POST\t", 10, 1, "missing host after the method list");
}

Test(egress_parse, a_path_without_host_is_reported_where_the_host_belongs)
{
	PARSE_FAILS("GET /repos/**", 4, 1, "missing host after the method list");
}

Test(egress_parse, an_empty_method_is_reported_at_its_comma)
{
	PARSE_FAILS("GET,,POST a.com", 4, 1, "empty HTTP method in the list");
	PARSE_FAILS(",GET a.com", 0, 1, "empty HTTP method in the list");
	PARSE_FAILS("GET, a.com", 3, 1, "empty HTTP method in the list");
	PARSE_FAILS("GET,", 3, 1, "empty HTTP method in the list");
	PARSE_FAILS(",", 0, 1, "empty HTTP method in the list");
}

Test(egress_parse, an_unknown_method_is_reported_at_the_word)
{
	PARSE_FAILS("FETCH a.com", 0, 5, "unknown HTTP method 'FETCH'");
	PARSE_FAILS("GET,fetch,POST a.com", 4, 5, "unknown HTTP method 'fetch'");
	PARSE_FAILS("GETS a.com", 0, 4, "unknown HTTP method 'GETS'");
	PARSE_FAILS("** a.com", 0, 2, "unknown HTTP method '**'");
	PARSE_FAILS("GET;POST a.com", 0, 8, "unknown HTTP method 'GET;POST'");
}

Test(egress_parse, connect_is_unknown_with_a_hint)
{
	PARSE_FAILS("CONNECT a.com", 0, 7,
		    "unknown HTTP method 'CONNECT' (HTTPS tunnels are checked per request)");
	PARSE_FAILS("GET,connect a.com", 4, 7,
		    "unknown HTTP method 'connect' (HTTPS tunnels are checked per request)");
}

Test(egress_parse, a_host_in_place_of_the_methods_gets_a_hint)
{
	PARSE_FAILS("api.github.com/repos/**", 0, 23,
		    "unknown HTTP method 'api.github.com/repos/**' (a rule starts with its "
		    "methods, as in 'GET host')");
}

Test(egress_parse, unprintable_bytes_in_a_method_are_escaped)
{
	PARSE_FAILS("G\0T a.com", 0, 3, "unknown HTTP method 'G\\x00T'");
	PARSE_FAILS("GE\x7f a.com", 0, 3, "unknown HTTP method 'GE\\x7f'");
	PARSE_FAILS("G\xc3\xa9T a.com", 0, 4, "unknown HTTP method 'G\\xc3\\xa9T'");
}

Test(egress_parse, a_long_unknown_method_is_cut_in_the_message_but_underlined_whole)
{
	char rule[300];

	memset(rule, 'X', 200);
	memcpy(rule + 200, " a.com", 7);
	parse_fails(rule, strlen(rule), 0, 200,
		    "unknown HTTP method 'XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX...'");
}

Test(egress_parse, a_port_follows_the_host_and_is_checked_where_it_is_written)
{
	struct egress_rule r = PARSE_OK("GET a.com:8443/x");

	assert_rule(r, EGRESS_GET, "a.com", false, "/x", true);
	cr_expect_eq(r.port, 8443);
	r = PARSE_OK("* *.a.com:1");
	assert_rule(r, EGRESS_ANY, "a.com", true, "/**", false);
	cr_expect_eq(r.port, 1);
	r = PARSE_OK("GET a.com");
	cr_expect_eq(r.port, 0, "no port written: the request kind's default");
	PARSE_FAILS("GET a.com:", 9, 1, "missing port after ':'");
	PARSE_FAILS("GET a.com:/x", 9, 1, "missing port after ':'");
	PARSE_FAILS("GET a.com:0", 10, 1, "port 0 is out of range (1 to 65535)");
	PARSE_FAILS("GET a.com:080", 10, 3, "port 080 is out of range (1 to 65535)");
	PARSE_FAILS("GET a.com:65536/x", 10, 5, "port 65536 is out of range (1 to 65535)");
	PARSE_FAILS("GET a.com:99999999999999999999", 10, 20,
		    "port 9999999999 is out of range (1 to 65535)");
	PARSE_FAILS("GET a.com:4a3", 11, 1,
		    "invalid character 'a' in port (a decimal number, 1 to 65535)");
	PARSE_FAILS("GET a.com:-1", 10, 1,
		    "invalid character '-' in port (a decimal number, 1 to 65535)");
	PARSE_FAILS("GET a.com:443 /x", 13, 1, "white space or control character in the path");
	PARSE_FAILS("GET :443", 4, 1, "missing host after the method list");
}

Test(egress_parse, punctuation_in_a_host_is_an_invalid_character)
{
	PARSE_FAILS("GET user@a.com", 8, 1, "invalid character '@' in host");
	PARSE_FAILS("GET a_b.com", 5, 1, "invalid character '_' in host");
	PARSE_FAILS("GET a%2e.com", 5, 1, "invalid character '%' in host");
	PARSE_FAILS("GET [::1]", 4, 1, "invalid character '[' in host");
	PARSE_FAILS("GET a]", 5, 1, "invalid character ']' in host");
	PARSE_FAILS("GET a.com?x", 9, 1, "invalid character '?' in host");
	PARSE_FAILS("GET a.com#x", 9, 1, "invalid character '#' in host");
	PARSE_FAILS("GET a\\b", 5, 1, "invalid character '\\' in host");
	PARSE_FAILS("GET ,a.com", 4, 1, "invalid character ',' in host");
}

Test(egress_parse, nul_and_control_bytes_in_a_host_are_shown_escaped)
{
	PARSE_FAILS("GET a\0b.com", 5, 1, "invalid character '\\x00' in host");
	PARSE_FAILS("GET \0a.com", 4, 1, "invalid character '\\x00' in host");
	PARSE_FAILS("GET a.com\0", 9, 1, "invalid character '\\x00' in host");
	PARSE_FAILS("GET a\x7f", 5, 1, "invalid character '\\x7f' in host");
	PARSE_FAILS("GET a\x1b[0m", 5, 1, "invalid character '\\x1b' in host");
}

Test(egress_parse, a_non_ascii_host_byte_gets_a_hint)
{
	PARSE_FAILS(
	    "GET b\xc3\xbc"
	    "cher.de",
	    5, 1,
	    "invalid character '\\xc3' in host (write an international name in its xn-- form)");
}

Test(egress_parse, a_scheme_is_reported_whole)
{
	PARSE_FAILS("GET https://api.github.com/x", 4, 8,
		    "a rule has no scheme: write the host without 'https://'");
	PARSE_FAILS("* HTTP://a.com", 2, 7,
		    "a rule has no scheme: write the host without 'HTTP://'");
}

Test(egress_parse, white_space_inside_the_host_is_reported)
{
	PARSE_FAILS("GET a.com b", 9, 1, "white space inside the host");
	PARSE_FAILS("GET a.com \t /x", 9, 3, "white space inside the host");
	PARSE_FAILS("GET a. com", 6, 1, "white space inside the host");
}

Test(egress_parse, a_star_other_than_a_leading_star_dot_is_reported)
{
	static const char msg[] = "'*' is only allowed as a leading '*.' in a host";

	PARSE_FAILS("GET *", 4, 1, msg);
	PARSE_FAILS("GET *a.com", 4, 1, msg);
	PARSE_FAILS("GET **.a.com", 4, 1, msg);
	PARSE_FAILS("GET a.*.com", 6, 1, msg);
	PARSE_FAILS("GET *.*.com", 6, 1, msg);
	PARSE_FAILS("GET a.com*", 9, 1, msg);
}

Test(egress_parse, a_bare_star_dot_is_reported)
{
	PARSE_FAILS("GET *.", 4, 2, "'*.' needs a domain after it");
	PARSE_FAILS("GET *./x", 4, 2, "'*.' needs a domain after it");
}

Test(egress_parse, empty_labels_are_reported_at_their_dot)
{
	PARSE_FAILS("GET .a.com", 4, 1, "empty label in host");
	PARSE_FAILS("GET a..com", 6, 1, "empty label in host");
	PARSE_FAILS("GET a.com.", 9, 1, "empty label in host");
	PARSE_FAILS("GET a.com./x", 9, 1, "empty label in host");
	PARSE_FAILS("GET *..com", 6, 1, "empty label in host");
	PARSE_FAILS("GET .", 4, 1, "empty label in host");
}

Test(egress_parse, a_label_over_63_bytes_is_too_long)
{
	char rule[200];

	memcpy(rule, "GET x.", 6);
	memset(rule + 6, 'a', 64);
	memcpy(rule + 70, ".com", 5);
	parse_fails(rule, strlen(rule), 6, 64, "host name too long");
}

Test(egress_parse, a_host_over_253_bytes_is_too_long)
{
	char rule[400];
	char *p = rule + 6;

	memcpy(rule, "GET *.", 6);
	/* 4 labels of 62 and one of 2: 254 bytes after "*." */
	for (int i = 0; i < 4; i++) {
		memset(p, 'b', 62);
		p[62] = '.';
		p += 63;
	}
	memcpy(p, "cc/x", 5);
	parse_fails(rule, strlen(rule), 6, 254, "host name too long");
}

Test(egress_parse, white_space_or_control_bytes_in_the_path_are_reported)
{
	static const char msg[] = "white space or control character in the path";

	PARSE_FAILS("GET a.com/x y", 11, 1, msg);
	PARSE_FAILS("GET a.com/x\ty", 11, 1, msg);
	PARSE_FAILS("GET a.com/x\x01", 11, 1, msg);
	PARSE_FAILS("GET a.com/x\x7f/y", 11, 1, msg);
	PARSE_FAILS("GET a.com/\0", 10, 1, msg);
	PARSE_FAILS("GET a.com/a\0b", 11, 1, msg);
}

Test(egress_parse, a_double_star_inside_a_segment_is_reported)
{
	static const char msg[] = "'**' must be a whole path segment";

	PARSE_FAILS("GET a.com/a**", 11, 2, msg);
	PARSE_FAILS("GET a.com/**b/", 10, 2, msg);
	PARSE_FAILS("GET a.com/***", 10, 2, msg);
	PARSE_FAILS("GET a.com/x/**/y/a**b", 18, 2, msg);
	PARSE_FAILS("GET a.com/**?q=1", 10, 2, msg);
}

Test(egress_parse, the_leftmost_error_wins)
{
	PARSE_FAILS("FETCH a..com", 0, 5, "unknown HTTP method 'FETCH'");
	PARSE_FAILS("GET a..com/x y", 6, 1, "empty label in host");
}

Test(egress_parse, a_failed_parse_leaves_the_rule_untouched)
{
	struct egress_rule r;
	struct egress_error e;

	memset(&r, 0x5a, sizeof(r));
	cr_assert_eq(egress_parse_rule(arena, "GET a..b", 8, &r, &e), -1);
	cr_assert_eq(r.methods, 0x5a5a5a5au);
}

/* ---- tcp rules ------------------------------------------------------------- */

Test(egress_parse, a_tcp_rule_has_a_host_a_port_and_nothing_else)
{
	struct egress_rule r = PARSE_OK("tcp git.example.com:22");

	cr_assert(r.tcp);
	cr_assert_eq(r.methods, 0);
	cr_assert_str_eq(r.host, "git.example.com");
	cr_assert(!r.wildcard);
	cr_assert_eq(r.port, 22);
	cr_assert_str_eq(r.path, "");
	cr_assert(!r.path_given);
	r = PARSE_OK("  TCP *.DB.example.com:5432 ");
	cr_assert(r.tcp && r.wildcard);
	cr_assert_str_eq(r.host, "db.example.com");
	cr_assert_eq(r.port, 5432);
}

Test(egress_parse, an_http_rule_is_not_a_tcp_rule)
{
	struct egress_rule r = PARSE_OK("GET tcp.example.com:22/x");

	cr_assert(!r.tcp);
	cr_assert_str_eq(r.host, "tcp.example.com");
}

Test(egress_parse, a_tcp_rule_without_a_port_is_reported_after_the_host)
{
	PARSE_FAILS("tcp git.example.com", 19, 1, "a tcp rule needs a port: tcp HOST:PORT");
	PARSE_FAILS("tcp git.example.com:", 19, 1, "missing port after ':'");
	PARSE_FAILS("tcp", 3, 1, "missing HOST:PORT after 'tcp'");
	PARSE_FAILS("tcp   ", 3, 1, "missing HOST:PORT after 'tcp'");
	PARSE_FAILS("tcp :22", 4, 1, "missing host before the port");
}

Test(egress_parse, a_tcp_rule_names_one_valid_port)
{
	PARSE_FAILS("tcp h.com:*", 10, 1,
		    "a tcp rule names one port, 1 to 65535: '*' is not a port");
	PARSE_FAILS("tcp h.com:0", 10, 1, "port 0 is out of range (1 to 65535)");
	PARSE_FAILS("tcp h.com:65536", 10, 5, "port 65536 is out of range (1 to 65535)");
	PARSE_FAILS("tcp h.com:2x", 11, 1,
		    "invalid character 'x' in port (a decimal number, 1 to 65535)");
}

Test(egress_parse, a_path_after_a_tcp_rule_is_reported_at_the_slash)
{
	PARSE_FAILS("tcp h.com:22/x", 12, 2,
		    "a tcp rule has no path: it allows a TCP stream, not HTTP requests");
	PARSE_FAILS("tcp h.com/x", 9, 2,
		    "a tcp rule has no path: it allows a TCP stream, not HTTP requests");
	PARSE_FAILS("tcp h.com:22 x", 12, 1, "unexpected text after the port of a tcp rule");
}

Test(egress_parse, methods_and_tcp_do_not_mix)
{
	PARSE_FAILS("GET,tcp h.com:22", 4, 3,
		    "a tcp rule has no HTTP methods: write 'tcp HOST:PORT' as a rule of its own");
	PARSE_FAILS("tcp,GET h.com:22", 0, 3,
		    "a tcp rule has no HTTP methods: write 'tcp HOST:PORT' as a rule of its own");
	PARSE_FAILS("tcp:22 h.com", 0, 6,
		    "unknown HTTP method 'tcp:22' (a TCP rule is 'tcp HOST:PORT')");
	PARSE_FAILS("tcpx h.com:22", 0, 4,
		    "unknown HTTP method 'tcpx' (a TCP rule is 'tcp HOST:PORT')");
}

Test(egress_parse, a_tcp_rule_host_follows_the_host_rules)
{
	PARSE_FAILS("tcp *:22", 4, 1, "'*' is only allowed as a leading '*.' in a host");
	PARSE_FAILS("tcp ssh://h.com:22", 4, 6, "a rule has no scheme: write the host without 'ssh://'");
	PARSE_FAILS("tcp git@h.com:22", 7, 1, "invalid character '@' in host");
}

Test(egress_parse, rules_format_back_to_their_text)
{
	struct egress_rule r = PARSE_OK("tcp *.db.example.com:5432");
	char buf[200];

	egress_rule_format(&r, true, buf, sizeof(buf));
	cr_assert_str_eq(buf, "tcp *.db.example.com:5432");
	r = PARSE_OK("get,POST h.com:8443");
	egress_rule_format(&r, false, buf, sizeof(buf));
	cr_assert_str_eq(buf, "GET,POST h.com:8443");
	egress_rule_format(&r, true, buf, sizeof(buf));
	cr_assert_str_eq(buf, "GET,POST h.com:8443/**");
}
