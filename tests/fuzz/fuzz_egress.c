/*
 * fuzz_egress.c - libFuzzer target for the egress rule parser and matcher.
 *
 * The whole input is parsed as one rule; a parsed rule must satisfy the
 * invariants the matcher relies on, and an error must point inside the
 * text with a well-formed message.  The input is then split in two, as
 * a request host and target, and decided against a few fixed rules plus
 * the parsed one, checking what must hold whatever the bytes are.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grammar/egress.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const fixed_texts[] = {
    "GET api.github.com/repos/myorg/**",      /* literal prefix */
    "* *.amazonaws.com/**",		      /* wildcard host, any path */
    "GET h.com/v1/*/details",		      /* star in a segment */
    "POST,PUT *.example.com/**/upload/*.bin", /* middle "**" and a star */
    "GET a.b/x?y",			      /* question mark */
    "* h.com/**/a/**/b",		      /* backtracking over "**" */
};
#define FIXED (sizeof(fixed_texts) / sizeof(fixed_texts[0]))

static struct egress_rule rules[FIXED + 1];

static void
check(bool ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "invariant broken: %s\n", what);
		abort();
	}
}

static void
parse_fixed_rules(void)
{
	static struct arena *arena;
	struct egress_error err;
	size_t i;

	if (arena)
		return;
	arena = arena_new(); /* lives as long as the process */
	for (i = 0; i < FIXED; i++) {
		check(egress_parse_rule(arena, fixed_texts[i], strlen(fixed_texts[i]), &rules[i],
					&err) == 0,
		      "a fixed rule parses");
	}
}

static void
check_rule(const struct egress_rule *r)
{
	size_t i, n = strlen(r->host), label = 0;

	check(r->tcp ? r->methods == 0 && r->port >= 1 && r->port <= 65535 && !r->path[0]
		     : r->methods != 0 && (r->methods & ~(unsigned)EGRESS_ANY) == 0,
	      "methods are bits; a tcp rule has none, a port and no path");
	check(n > 0 && n <= 253, "host length");
	for (i = 0; i < n; i++) {
		char c = r->host[i];

		check((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.',
		      "host is lower-case [a-z0-9.-]");
		label = c == '.' ? 0 : label + 1;
		check(label <= 63, "label length");
		check(c != '.' || (i > 0 && r->host[i - 1] != '.' && i + 1 < n), "no empty label");
	}
	if (r->tcp)
		return;
	check(r->path[0] == '/', "path starts with '/'");
	check(r->path_given || strcmp(r->path, "/**") == 0, "default path");
	for (i = 0; r->path[i]; i++) {
		unsigned char c = (unsigned char)r->path[i];

		check(c > 0x20 && c != 0x7f, "no white space or control byte in the path");
	}
}

static void
check_error(const struct egress_error *e, size_t size)
{
	size_t n = strlen(e->message);

	check(e->length >= 1, "underline at least one byte");
	check(e->offset <= size && e->length <= size + 1 - e->offset, "error inside the text");
	check(n > 0 && ((e->message[0] >= 'a' && e->message[0] <= 'z') || e->message[0] == '\''),
	      "message starts in lower case or with a quote");
	check(e->message[n - 1] != '.', "no trailing period");
	check(strcmp(e->message, "malformed egress rule") != 0, "every syntax error explained");
}

static void
check_normalize(const char *target, size_t len)
{
	static char out[8192], again[8192];
	ssize_t n = egress_normalize_target(target, len, out, sizeof(out));
	ssize_t m, i;

	if (n < 0)
		return;
	check((size_t)n <= len && out[n] == '\0', "normal form is no longer, NUL-terminated");
	check(out[0] == '/', "normal form starts with '/'");
	for (i = 0; i < n && out[i] != '?'; i++) {
		check(out[i] != '#', "fragment dropped");
		if (out[i] == '/' && out[i + 1] == '.') {
			char c = out[i + 2];

			check(!(c == '/' || c == '?' || c == '\0'), "no '.' segment");
			check(!(c == '.' &&
				(out[i + 3] == '/' || out[i + 3] == '?' || out[i + 3] == '\0')),
			      "no '..' segment");
		}
	}
	m = egress_normalize_target(out, (size_t)n, again, sizeof(again));
	check(m == n && memcmp(out, again, (size_t)n) == 0, "normalising is idempotent");
}

static void
check_match(const struct egress_matcher *m, size_t nrules, const char *method, size_t method_len,
	    const char *host, size_t host_len, const char *target, size_t target_len)
{
	ssize_t got =
	    egress_match(m, method, method_len, host, host_len, 443, 443, target, target_len);
	ssize_t got_host = egress_match_host(m, host, host_len, 443, 443);

	check(got >= -1 && got < (ssize_t)nrules, "rule index in range");
	check(got_host >= -1 && got_host < (ssize_t)nrules, "host rule index in range");
	if (got >= 0) {
		check(egress_host_is_safe(host, host_len), "allowed hosts are safe");
		check(got_host >= 0 && got_host <= got,
		      "match_host finds the rule or an earlier one");
	}
}

/* A parsed rule must allow its own host, and its own path when that is literal. */
static void
check_rule_matches_itself(const struct egress_matcher *m, const struct egress_rule *r, size_t k)
{
	static char norm[8192];
	size_t path_len = strlen(r->path);
	/* On the rule's own port (a tunnel's default when it names none). */
	unsigned port = r->port ? r->port : EGRESS_PORT_TLS;
	ssize_t got = egress_match_host(m, r->host, strlen(r->host), port, EGRESS_PORT_TLS);
	ssize_t n;

	if (r->tcp) {
		got = egress_match_tcp(m, r->host, strlen(r->host), r->port);
		check(got >= 0 && got <= (ssize_t)k, "a tcp rule allows its own host and port");
		return;
	}
	check(got >= 0 && got <= (ssize_t)k, "a rule allows its own host");
	if (strpbrk(r->path, "*?#"))
		return;
	n = egress_normalize_target(r->path, path_len, norm, sizeof(norm));
	if (n < 0 || (size_t)n != path_len || memcmp(norm, r->path, path_len) != 0)
		return;
	got = egress_match(m, "*", 1, r->host, strlen(r->host), port, EGRESS_PORT_TLS, r->path,
			   path_len);
	check(r->methods != EGRESS_ANY || (got >= 0 && got <= (ssize_t)k),
	      "a '*' rule allows any method on its own literal path");
	for (unsigned bit = 1; bit < EGRESS_ANY; bit <<= 1) {
		const char *name = egress_method_name(bit);

		if (!(r->methods & bit))
			continue;
		got = egress_match(m, name, strlen(name), r->host, strlen(r->host), port,
				   EGRESS_PORT_TLS, r->path, path_len);
		check(got >= 0 && got <= (ssize_t)k, "a rule allows its own literal path");
		break;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const methods[] = {"GET", "post", "PROPFIND", "*", ""};
	const char *text = (const char *)data;
	struct arena *arena;
	struct egress_error err;
	struct egress_matcher *m;
	size_t nrules = FIXED, split, host_start;
	const char *method;

	parse_fixed_rules();
	arena = arena_new();
	memset(&err, 0, sizeof(err));
	if (egress_parse_rule(arena, text, size, &rules[FIXED], &err) == 0) {
		check_rule(&rules[FIXED]);
		nrules++;
	} else {
		check_error(&err, size);
	}
	m = egress_matcher_new(rules, nrules);
	check(m != NULL, "matcher built");
	if (nrules > FIXED)
		check_rule_matches_itself(m, &rules[FIXED], FIXED);

	/* Byte 0 picks a method; the rest splits at the first '/' into host and target. */
	method = size ? methods[data[0] % (sizeof(methods) / sizeof(methods[0]))] : "GET";
	host_start = size ? 1 : 0;
	for (split = host_start; split < size && data[split] != '/'; split++)
		;
	check_normalize(text + split, size - split);
	check_match(m, nrules, method, strlen(method), text + host_start, split - host_start,
		    text + split, size - split);
	/* And the whole input as a target on a host that some rules allow. */
	check_normalize(text, size);
	check_match(m, nrules, method, strlen(method), "h.com", 5, text, size);
	check_match(m, nrules, method, strlen(method), "x.amazonaws.com", 15, text, size);

	egress_matcher_free(m);
	arena_free(arena);
	return 0;
}
