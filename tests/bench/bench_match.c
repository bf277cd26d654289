/*
 * bench_match.c - how fast egress_match() decides, against a linear scan.
 *
 * For 10, 1,000 and 100,000 rules (distinct hosts such as
 * svc123.example-7.com, some wildcards, some path globs, a few hosts shared
 * by several rules) it parses and compiles the rules, builds a mix of
 * allowed and denied requests, checks that the trie and the scan agree on
 * every one, and then times each for about 1.5 seconds.
 *
 *   bench_match [seconds-per-measurement]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "grammar/egress.h"

#define REQUESTS 4096

struct request {
	char method[16];
	char host[96];
	char target[160];
	size_t method_len, host_len, target_len;
};

static uint64_t rng_state = 0x2545f4914f6cdd1dull;

static unsigned
rnd(unsigned below)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (unsigned)(rng_state % below);
}

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- workload ------------------------------------------------------------- */

static const char *const method_lists[] = {"GET", "GET,HEAD", "POST,PUT", "*", "GET,POST"};
static const char *const globs[] = {
    "", "", "/api/v1/**", "/repos/*/issues", "/files/*.json", "/**/health", "/v?/items/*"};

/* Rule I's host; every 50th rule shares the host of the rule before it. */
static void
rule_host(char *out, size_t cap, unsigned i)
{
	if (i % 50 == 49)
		i--;
	snprintf(out, cap, "%s%u.example-%u.com", i % 5 == 0 ? "zone" : "svc", i, i % 97);
}

static char *
rule_text(struct arena *a, unsigned i)
{
	char host[96];

	rule_host(host, sizeof(host), i);
	return arena_printf(a, "%s %s%s%s", method_lists[i % 5], i % 5 == 0 ? "*." : "", host,
			    globs[i % 7]);
}

/* A path that GLOB allows. */
static void
fill_target(char *out, size_t cap, const char *glob)
{
	if (strcmp(glob, "") == 0)
		snprintf(out, cap, "/anything/%u?x=1", rnd(1000));
	else if (strcmp(glob, "/api/v1/**") == 0)
		snprintf(out, cap, "/api/v1/users/%u", rnd(1000));
	else if (strcmp(glob, "/repos/*/issues") == 0)
		snprintf(out, cap, "/repos/r%u/issues", rnd(1000));
	else if (strcmp(glob, "/files/*.json") == 0)
		snprintf(out, cap, "/files/f%u.json", rnd(1000));
	else if (strcmp(glob, "/**/health") == 0)
		snprintf(out, cap, "/a/b/%u/health", rnd(1000));
	else
		snprintf(out, cap, "/v%u/items/%u", rnd(10), rnd(1000));
}

/*
 * Half the requests aim at a rule and fit it; the other half break one
 * thing: an unknown host, a host that only looks similar, the method, or
 * the path.
 */
static void
make_request(struct request *q, unsigned nrules)
{
	unsigned i = rnd(nrules);
	const char *glob = globs[i % 7];
	char host[64];

	rule_host(host, sizeof(host), i);
	snprintf(q->method, sizeof(q->method), "%s", i % 5 == 2 ? "PUT" : "GET");
	if (i % 5 == 0)
		snprintf(q->host, sizeof(q->host), "node%u.%s", rnd(100), host);
	else
		snprintf(q->host, sizeof(q->host), "%s", host);
	fill_target(q->target, sizeof(q->target), glob);
	if (rnd(2)) {
		switch (rnd(4)) {
		case 0:
			snprintf(q->host, sizeof(q->host), "svc%u.unknown-%u.org", rnd(1u << 30),
				 i);
			break;
		case 1:
			snprintf(q->host, sizeof(q->host), "x%s", host);
			break;
		case 2:
			snprintf(q->method, sizeof(q->method), "%s", "DELETE");
			break;
		default:
			snprintf(q->target, sizeof(q->target), "/admin/%u/../../etc", rnd(100));
			break;
		}
	}
	q->method_len = strlen(q->method);
	q->host_len = strlen(q->host);
	q->target_len = strlen(q->target);
}

/* ---- the naive linear scan ------------------------------------------------ */

static bool
naive_glob(const char *p, const char *s)
{
	const char *q;

	if (*p == '\0')
		return *s == '\0';
	if (p[0] == '*' && p[1] == '*') {
		if (p[2] == '\0')
			return true;
		for (q = s;; q++) {
			if ((q == s || q[-1] == '/') && naive_glob(p + 3, q))
				return true;
			if (*q == '\0')
				return false;
		}
	}
	if (*p == '*') {
		for (q = s;; q++) {
			if (naive_glob(p + 1, q))
				return true;
			if (*q == '\0' || *q == '/')
				return false;
		}
	}
	if (*p == '?')
		return *s && *s != '/' && naive_glob(p + 1, s + 1);
	return *s == *p && naive_glob(p + 1, s + 1);
}

static ssize_t
naive_match(const struct egress_rule *rules, size_t n, const struct request *q)
{
	char path[8192];
	unsigned bit;
	size_t i;

	if (!egress_host_is_safe(q->host, q->host_len))
		return -1;
	if (egress_normalize_target(q->target, q->target_len, path, sizeof(path)) < 0)
		return -1;
	bit = egress_method_bit(q->method, q->method_len);
	for (i = 0; i < n; i++) {
		const struct egress_rule *r = &rules[i];
		size_t hl = strlen(r->host);

		if (q->host_len == hl) {
			if (strncasecmp(q->host, r->host, hl) != 0)
				continue;
		} else if (!r->wildcard || q->host_len < hl + 1 ||
			   q->host[q->host_len - hl - 1] != '.' ||
			   strncasecmp(q->host + q->host_len - hl, r->host, hl) != 0) {
			continue;
		}
		if (r->methods != EGRESS_ANY && !(r->methods & bit))
			continue;
		if (naive_glob(r->path, path))
			return (ssize_t)i;
	}
	return -1;
}

/* ---- timing ------------------------------------------------------------- */

static volatile ssize_t sink;

/* Decide requests round-robin for SECONDS; returns nanoseconds per request. */
static double
time_lookups(const struct egress_matcher *m, const struct egress_rule *rules, size_t n,
	     const struct request *reqs, double seconds)
{
	double start = now(), elapsed;
	size_t done = 0, i;
	ssize_t acc = 0;

	do {
		for (i = 0; i < 64; i++, done++) {
			const struct request *q = &reqs[done % REQUESTS];

			if (m)
				acc +=
				    egress_match(m, q->method, q->method_len, q->host, q->host_len,
						 443, 443, q->target, q->target_len);
			else
				acc += naive_match(rules, n, q);
		}
		elapsed = now() - start;
	} while (elapsed < seconds);
	sink = acc;
	return elapsed * 1e9 / (double)done;
}

static int
bench_size(unsigned nrules, double seconds)
{
	struct arena *a = arena_new();
	struct egress_rule *rules = arena_alloc(a, nrules * sizeof(*rules));
	struct request *reqs = arena_alloc(a, REQUESTS * sizeof(*reqs));
	struct egress_matcher *m;
	struct egress_error err;
	size_t allowed = 0, i;
	double t0, t_parse, t_compile, trie_ns, linear_ns;

	t0 = now();
	for (i = 0; i < nrules; i++) {
		char *text = rule_text(a, (unsigned)i);

		if (egress_parse_rule(a, text, strlen(text), &rules[i], &err) != 0) {
			fprintf(stderr, "bench: rule \"%s\": %s\n", text, err.message);
			return 1;
		}
	}
	t_parse = now() - t0;
	t0 = now();
	m = egress_matcher_new(rules, nrules);
	t_compile = now() - t0;
	if (!m) {
		fputs("bench: out of memory\n", stderr);
		return 1;
	}

	for (i = 0; i < REQUESTS; i++) {
		ssize_t got, want;

		make_request(&reqs[i], nrules);
		got = egress_match(m, reqs[i].method, reqs[i].method_len, reqs[i].host,
				   reqs[i].host_len, 443, 443, reqs[i].target, reqs[i].target_len);
		want = naive_match(rules, nrules, &reqs[i]);
		if (got != want) {
			fprintf(stderr, "bench: %s %s%s: trie %zd, linear scan %zd\n",
				reqs[i].method, reqs[i].host, reqs[i].target, got, want);
			return 1;
		}
		allowed += got >= 0;
	}

	trie_ns = time_lookups(m, NULL, 0, reqs, seconds);
	linear_ns = time_lookups(NULL, rules, nrules, reqs, seconds);
	printf("compile rules=%-7u parse_ms=%.2f  compile_ms=%.2f\n", nrules, t_parse * 1e3,
	       t_compile * 1e3);
	printf("match   rules=%-7u requests/s=%.0f  ns/request=%.1f  allowed=%.0f%%\n", nrules,
	       1e9 / trie_ns, trie_ns, 100.0 * (double)allowed / REQUESTS);
	printf("linear  rules=%-7u requests/s=%.0f  ns/request=%.1f\n", nrules, 1e9 / linear_ns,
	       linear_ns);
	printf("ratio   rules=%-7u linear/trie=%.1f\n", nrules, linear_ns / trie_ns);
	fflush(stdout);
	egress_matcher_free(m);
	arena_free(a);
	return 0;
}

int
main(int argc, char **argv)
{
	static const unsigned sizes[] = {10, 1000, 100000};
	double seconds = argc > 1 ? atof(argv[1]) : 1.5;
	size_t i;

	if (seconds <= 0) {
		fprintf(stderr, "usage: %s [seconds-per-measurement]\n", argv[0]);
		return 2;
	}
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		if (bench_size(sizes[i], seconds) != 0)
			return 1;
	}
	return 0;
}
