/*
 * egress_subsume.c - does one set of egress rules allow everything another
 * rule does?  For --diff: a rule that adds nothing is no widening.
 *
 * Methods and ports are sets; hosts are an exact name or a name and its
 * subdomains.  Path globs are regular languages over the path's bytes:
 * a literal byte, '?' (one byte but '/'), '*' (bytes but '/'), "**" followed
 * by '/' (whole segments: ([^/]* '/')*) and a final "**" (anything).  L(B)
 * inside L(A) is decided exactly on the product of B's automaton with the
 * determinised automaton of A, over an alphabet of the bytes either glob
 * names, '/', and one byte standing for all the others.
 */
#include "egress.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum tok { T_CHAR, T_ANY, T_STAR, T_SEGS, T_REST };

struct glob {
	enum tok kind[512];
	unsigned char ch[512];
	size_t n;
};

/* Compile PATH (starting with '/'); false when it is too long to decide. */
static bool
glob_parse(const char *path, struct glob *g)
{
	size_t len = strlen(path);

	g->n = 0;
	for (size_t i = 0; i < len;) {
		if (g->n + 2 >= sizeof(g->kind) / sizeof(g->kind[0]))
			return false;
		/* "**" as a whole segment */
		if (path[i] == '*' && i + 1 < len && path[i + 1] == '*' && i > 0 &&
		    path[i - 1] == '/' && (i + 2 == len || path[i + 2] == '/')) {
			if (i + 2 == len) {
				g->kind[g->n++] = T_REST;
				i += 2;
			} else {
				g->kind[g->n++] = T_SEGS;
				i += 3; /* the '/' after it belongs to the segments */
			}
			continue;
		}
		if (path[i] == '*') {
			g->kind[g->n++] = T_STAR;
		} else if (path[i] == '?') {
			g->kind[g->n++] = T_ANY;
		} else {
			g->kind[g->n] = T_CHAR;
			g->ch[g->n++] = (unsigned char)path[i];
		}
		i++;
	}
	return true;
}

/* States: 2 * position + (inside a "**" segment).  At most 1024. */
#define WORDS 16
struct set {
	uint64_t w[WORDS];
};

static void
put(struct set *s, size_t st)
{
	s->w[st / 64] |= 1ull << (st % 64);
}

static bool
has(const struct set *s, size_t st)
{
	return s->w[st / 64] >> (st % 64) & 1;
}

static void
closure(const struct glob *g, struct set *s)
{
	for (size_t i = 0; i < g->n; i++)
		if (has(s, 2 * i) && (g->kind[i] == T_STAR || g->kind[i] == T_SEGS ||
				      g->kind[i] == T_REST))
			put(s, 2 * (i + 1));
}

static struct set
step(const struct glob *g, const struct set *s, unsigned char c)
{
	struct set out = {0};
	bool slash = c == '/';

	for (size_t i = 0; i <= g->n; i++) {
		if (has(s, 2 * i + 1)) /* inside a "**" segment */
			put(&out, slash ? 2 * i : 2 * i + 1);
		if (!has(s, 2 * i) || i == g->n)
			continue;
		switch (g->kind[i]) {
		case T_CHAR:
			if (c == g->ch[i])
				put(&out, 2 * (i + 1));
			break;
		case T_ANY:
			if (!slash)
				put(&out, 2 * (i + 1));
			break;
		case T_STAR:
			if (!slash)
				put(&out, 2 * i);
			break;
		case T_SEGS:
			put(&out, slash ? 2 * i : 2 * i + 1);
			break;
		case T_REST:
			put(&out, 2 * i);
			break;
		}
	}
	closure(g, &out);
	return out;
}

static bool
accepts(const struct glob *g, const struct set *s)
{
	return has(s, 2 * g->n);
}

static bool
empty(const struct set *s)
{
	for (size_t i = 0; i < WORDS; i++)
		if (s->w[i])
			return false;
	return true;
}

/*
 * Is every path glob B matches matched by one of the N globs A?  When not,
 * and WITNESS is not NULL, a path B matches and none of A does goes there
 * (CAP bytes, NUL-terminated).  False also when undecided (too large).
 */
static bool
globs_cover(const char *const *a, size_t n_a, const char *b, char *witness, size_t cap_w)
{
	struct glob *ga = calloc(n_a + 1, sizeof(*ga)), gb;
	unsigned char alpha[260];
	size_t n_alpha = 0, cap = 2048, n = 0, head = 0, width = n_a + 1;
	struct set *queue = NULL, *next; /* WIDTH sets per entry: A's globs, then B */
	size_t *from = NULL;
	unsigned char *via = NULL;
	bool seen[256] = {false}, ok = true, decided = true;

	if (!ga)
		return false;
	for (size_t k = 0; k < n_a; k++)
		if (!glob_parse(a[k], &ga[k]) || ga[k].n >= 500)
			decided = false;
	if (!glob_parse(b, &gb) || gb.n >= 500)
		decided = false;
	queue = malloc(cap * width * sizeof(*queue));
	next = malloc(width * sizeof(*next));
	from = malloc(cap * sizeof(*from));
	via = malloc(cap);
	if (!decided || !queue || !from || !via || !next) {
		free(next);
		free(ga);
		free(queue);
		free(from);
		free(via);
		return false;
	}
	alpha[n_alpha++] = '/';
	seen['/'] = true;
	for (size_t k = 0; k <= n_a; k++) {
		const struct glob *g = k == n_a ? &gb : &ga[k];

		for (size_t i = 0; i < g->n; i++)
			if (g->kind[i] == T_CHAR && !seen[g->ch[i]]) {
				seen[g->ch[i]] = true;
				alpha[n_alpha++] = g->ch[i];
			}
	}
	for (unsigned c = 'a'; c < 256; c++)
		if (!seen[c] && c != '?' && c != '*' && c != '#' && c != '%') {
			alpha[n_alpha++] = (unsigned char)c; /* every other byte */
			break;
		}
	memset(queue, 0, width * sizeof(*queue));
	for (size_t k = 0; k <= n_a; k++) {
		put(&queue[k], 0);
		closure(k == n_a ? &gb : &ga[k], &queue[k]);
	}
	from[0] = SIZE_MAX;
	n = 1;
	while (head < n && ok) {
		size_t cur = head++;
		struct set *sets = &queue[cur * width];
		bool a_accepts = false;

		for (size_t k = 0; k < n_a; k++)
			a_accepts |= accepts(&ga[k], &sets[k]);
		if (accepts(&gb, &sets[n_a]) && !a_accepts) {
			ok = false;
			if (witness && cap_w) {
				size_t len = 0;
				char tmp[1024];

				for (size_t at = cur; from[at] != SIZE_MAX && len < sizeof(tmp);
				     at = from[at])
					tmp[len++] = (char)via[at];
				if (len + 1 > cap_w)
					len = cap_w - 1;
				for (size_t i = 0; i < len; i++)
					witness[i] = tmp[len - 1 - i];
				witness[len] = '\0';
			}
			break;
		}
		for (size_t c = 0; c < n_alpha; c++) {
			bool dup = false;

			next[n_a] = step(&gb, &sets[n_a], alpha[c]);
			if (empty(&next[n_a]))
				continue;
			for (size_t k = 0; k < n_a; k++)
				next[k] = step(&ga[k], &sets[k], alpha[c]);
			for (size_t q = 0; q < n && !dup; q++)
				dup = !memcmp(&queue[q * width], next, width * sizeof(*next));
			if (dup)
				continue;
			if (n == cap) {
				ok = false; /* too many states to decide: not covered */
				if (witness && cap_w)
					witness[0] = '\0';
				break;
			}
			memcpy(&queue[n * width], next, width * sizeof(*next));
			from[n] = cur;
			via[n] = alpha[c];
			n++;
		}
		sets = NULL;
	}
	free(next);
	free(ga);
	free(queue);
	free(from);
	free(via);
	return ok;
}

bool
egress_glob_covers(const char *a, const char *b)
{
	return !strcmp(a, b) || globs_cover(&a, 1, b, NULL, 0);
}

/* Does rule A's host pattern take HOST (a name)? */
static bool
host_takes(const struct egress_rule *a, const char *host)
{
	size_t la = strlen(a->host), lh = strlen(host);

	if (!strcmp(a->host, host))
		return true;
	return a->wildcard && lh > la && host[lh - la - 1] == '.' && !strcmp(host + lh - la, a->host);
}

/* Does rule A apply on PORT of a request of kind TLS? */
static bool
port_takes(const struct egress_rule *a, bool tls, unsigned port)
{
	if (a->port)
		return a->port == port;
	return port == (tls ? EGRESS_PORT_TLS : EGRESS_PORT_PLAIN);
}

/* A TCP rule B is covered when, on each of HOSTS, some TCP rule of A takes B's port. */
static bool
tcp_rules_cover(const struct egress_rule *a, size_t n, const struct egress_rule *b,
		const char *const hosts[2], struct egress_witness *w)
{
	for (size_t h = 0; h < 2 && hosts[h]; h++) {
		bool taken = false;

		for (size_t i = 0; i < n && !taken; i++)
			taken = a[i].tcp && a[i].port == b->port && host_takes(&a[i], hosts[h]);
		if (taken)
			continue;
		if (w) {
			memset(w, 0, sizeof(*w));
			w->tcp = true;
			w->port = b->port;
			snprintf(w->host, sizeof(w->host), "%s", hosts[h]);
		}
		return false;
	}
	return true;
}

bool
egress_rules_cover(const struct egress_rule *a, size_t n, const struct egress_rule *b,
		   struct egress_witness *w)
{
	/* B's hosts: its name, and for "*." a fresh label below it, which no
	 * exact name of A can take and any wildcard above it does. */
	const char *hosts[2] = {b->host, NULL};
	char fresh[300];
	const char **paths = calloc(n + 1, sizeof(*paths));
	bool ok = true;

	if (!paths)
		return false;
	if (b->wildcard) {
		snprintf(fresh, sizeof(fresh), "omnibox-diff.%s", b->host);
		hosts[1] = fresh;
	}
	if (b->tcp) {
		ok = tcp_rules_cover(a, n, b, hosts, w);
		free(paths);
		return ok;
	}
	for (size_t h = 0; h < 2 && hosts[h] && ok; h++)
		for (int tls = 1; tls >= 0 && ok; tls--) {
			unsigned port = b->port ? b->port : tls ? EGRESS_PORT_TLS : EGRESS_PORT_PLAIN;

			for (unsigned bit = 1; (bit & EGRESS_ANY) && ok; bit <<= 1) {
				size_t k = 0;

				if (!(b->methods & bit))
					continue;
				for (size_t i = 0; i < n; i++)
					if (!a[i].tcp && (a[i].methods & bit) &&
					    host_takes(&a[i], hosts[h]) &&
					    port_takes(&a[i], tls, port))
						paths[k++] = a[i].path;
				if (globs_cover(paths, k, b->path, w ? w->path : NULL,
						w ? sizeof(w->path) : 0))
					continue;
				ok = false;
				if (w) {
					w->tcp = false;
					w->method = bit;
					w->tls = tls;
					w->port = port;
					snprintf(w->host, sizeof(w->host), "%s", hosts[h]);
				}
			}
		}
	free(paths);
	return ok;
}

