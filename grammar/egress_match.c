/*
 * egress_match.c - decide HTTP requests against compiled egress rules.
 *
 * Hosts go into a trie of labels read right to left (com -> github -> api),
 * with one hash table for all the edges.  Each node lists, in rule order,
 * the rules whose host is exactly that name and the wildcard rules anchored
 * there ("*.github.com" hangs on github.com and covers it and everything
 * below).  A lookup walks the request host's labels from the right,
 * collecting wildcard lists on the way and the exact list at the end, so
 * its cost depends on the host, not on the number of rules.  Only those
 * candidates are checked for method (a bit mask) and path (a precompiled
 * glob), and the lowest matching rule index wins.
 *
 * Everything that is not clearly well-formed is denied: hosts outside
 * [A-Za-z0-9.-] or that could not be DNS names, request targets with dot
 * segments climbing above '/', encoded separators or dots, control bytes,
 * and targets whose normal form is EGRESS_TARGET_MAX bytes or longer (the
 * lookup normalises into a stack buffer and never allocates).
 */
#include "egress.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define EGRESS_TARGET_MAX 8192 /* normal form of a request target, with its NUL */
#define EGRESS_HOST_MAX 253    /* RFC 1035, without a trailing dot */
#define EGRESS_LABEL_MAX 63
#define EGRESS_LABELS_MAX ((EGRESS_HOST_MAX + 1) / 2)
#define NONE UINT32_MAX

/* How a rule's path glob is checked. */
enum glob_kind {
	GLOB_EXACT,    /* no wildcard: compare the whole target */
	GLOB_PREFIX,   /* literal "/a/b/" then a trailing "**": compare a prefix */
	GLOB_SEGMENTS, /* anything else: segment by segment */
};

/* One '/'-separated segment of a glob. */
enum seg_kind {
	SEG_LITERAL, /* compare bytes */
	SEG_WILD,    /* has '*' (any run of non-'/' bytes) or '?' (one of them) */
	SEG_ANY,     /* "**" followed by more: zero or more whole segments */
	SEG_REST,    /* "**" at the end: one or more segments, i.e. anything */
};

struct glob_seg {
	uint32_t kind, off, len; /* OFF and LEN locate the bytes in the pool */
};

struct rule_entry {
	bool tcp; /* a TCP rule: only egress_match_tcp() sees it */
	unsigned methods;
	unsigned port; /* 0: the request kind's default */
	uint32_t glob_kind;
	uint32_t text_off, text_len;   /* GLOB_EXACT, GLOB_PREFIX: the literal bytes */
	uint32_t seg_first, seg_count; /* GLOB_SEGMENTS */
};

/* Rules hanging on a node, as ranges of egress_matcher.index. */
struct trie_node {
	uint32_t exact_first, exact_count;
	uint32_t wild_first, wild_count;
};

/* A slot of the edge hash table; PARENT is NONE when the slot is free. */
struct trie_edge {
	uint32_t parent, child, label_off, label_len, hash;
};

struct egress_matcher {
	struct rule_entry *rules;
	struct trie_node *nodes; /* node 0 is the root (the empty name) */
	size_t node_count, node_cap;
	struct trie_edge *edges; /* one per node but the root */
	size_t edge_mask;	 /* slots - 1; slots is a power of two, at most half full */
	uint32_t *index;	 /* rule indices, ascending within each node's list */
	char *pool;		 /* lower-cased labels and path globs */
	size_t pool_len;
	struct glob_seg *segs;
	size_t seg_count;
};

/* ---- hosts ------------------------------------------------------------ */

static bool
is_host_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '.';
}

/* Lower case for a byte already known to satisfy is_host_char(). */
static unsigned char
lower_host_char(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') ? (unsigned char)(c - 'A' + 'a') : c;
}

bool
egress_host_is_safe(const char *host, size_t len)
{
	size_t i;

	if (!host || len == 0 || host[len - 1] == '.')
		return false;
	for (i = 0; i < len; i++) {
		if (!is_host_char((unsigned char)host[i]))
			return false;
	}
	return true;
}

/*
 * Stricter than egress_host_is_safe(): also no empty label and nothing
 * longer than DNS allows.  A request for ".evil.example.com" or
 * "a..example.com" must not reach "*.example.com" just because the walk
 * stops before the malformed part.
 */
static bool
host_is_dns_name(const char *host, size_t len)
{
	size_t i, label = 0;

	if (!egress_host_is_safe(host, len) || len > EGRESS_HOST_MAX)
		return false;
	for (i = 0; i < len; i++) {
		if (host[i] != '.')
			label++;
		else if (label == 0)
			return false;
		else
			label = 0;
		if (label > EGRESS_LABEL_MAX)
			return false;
	}
	return true;
}

static uint32_t
hash_label(uint32_t parent, const char *s, size_t len)
{
	uint32_t h = 2166136261u ^ (parent * 0x9e3779b1u);
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= lower_host_char((unsigned char)s[i]);
		h *= 16777619u;
	}
	return h ^ (h >> 15);
}

/* The child of PARENT for label S (any case), or NONE. */
static uint32_t
trie_find(const struct egress_matcher *m, uint32_t parent, const char *s, size_t len, uint32_t h)
{
	size_t slot = h & m->edge_mask;

	for (;; slot = (slot + 1) & m->edge_mask) {
		const struct trie_edge *e = &m->edges[slot];
		size_t i;

		if (e->parent == NONE)
			return NONE;
		if (e->hash != h || e->parent != parent || e->label_len != len)
			continue;
		for (i = 0; i < len; i++) {
			if ((unsigned char)m->pool[e->label_off + i] !=
			    lower_host_char((unsigned char)s[i]))
				break;
		}
		if (i == len)
			return e->child;
	}
}

static void
edge_put(struct trie_edge *edges, size_t mask, const struct trie_edge *e)
{
	size_t slot = e->hash & mask;

	while (edges[slot].parent != NONE)
		slot = (slot + 1) & mask;
	edges[slot] = *e;
}

/* Room for one more node and its edge, keeping the table at most half full. */
static bool
trie_reserve(struct egress_matcher *m)
{
	size_t slots = m->edge_mask + 1, i;

	if (m->node_count == m->node_cap) {
		struct trie_node *nodes = realloc(m->nodes, 2 * m->node_cap * sizeof(*nodes));

		if (!nodes)
			return false;
		m->nodes = nodes;
		m->node_cap *= 2;
	}
	if (2 * m->node_count > slots) {
		struct trie_edge *edges = malloc(2 * slots * sizeof(*edges));

		if (!edges)
			return false;
		memset(edges, 0xff, 2 * slots * sizeof(*edges)); /* every parent NONE */
		for (i = 0; i < slots; i++) {
			if (m->edges[i].parent != NONE)
				edge_put(edges, 2 * slots - 1, &m->edges[i]);
		}
		free(m->edges);
		m->edges = edges;
		m->edge_mask = 2 * slots - 1;
	}
	return true;
}

/* The child of PARENT for label S, created when missing; NONE when out of memory. */
static uint32_t
trie_add(struct egress_matcher *m, uint32_t parent, const char *s, size_t len)
{
	struct trie_edge e;
	size_t i;

	e.hash = hash_label(parent, s, len);
	e.child = trie_find(m, parent, s, len, e.hash);
	if (e.child != NONE)
		return e.child;
	if (!trie_reserve(m))
		return NONE;
	e.parent = parent;
	e.child = (uint32_t)m->node_count++;
	e.label_off = (uint32_t)m->pool_len;
	e.label_len = (uint32_t)len;
	edge_put(m->edges, m->edge_mask, &e);
	memset(&m->nodes[e.child], 0, sizeof(m->nodes[e.child]));
	for (i = 0; i < len; i++)
		m->pool[m->pool_len++] = (char)lower_host_char((unsigned char)s[i]);
	return e.child;
}

/* Where the label of HOST that ends at END starts (labels are read right to left). */
static size_t
label_start(const char *host, size_t end)
{
	while (end > 0 && host[end - 1] != '.')
		end--;
	return end;
}

/* The node for HOST, created with its ancestors; NONE when out of memory. */
static uint32_t
trie_insert(struct egress_matcher *m, const char *host, size_t len)
{
	uint32_t node = 0;
	size_t end = len;

	for (;;) {
		size_t start = label_start(host, end);

		node = trie_add(m, node, host + start, end - start);
		if (start == 0 || node == NONE)
			return node;
		end = start - 1;
	}
}

/* The trie nodes whose rules may apply to one request host. */
struct host_hits {
	uint32_t wild[EGRESS_LABELS_MAX]; /* nodes with wildcard rules, root side first */
	size_t wild_count;
	uint32_t exact; /* the node of the whole host, or NONE */
};

/* False when HOST must be denied whatever the rules say. */
static bool
host_walk(const struct egress_matcher *m, const char *host, size_t len, struct host_hits *hits)
{
	uint32_t node = 0;
	size_t end = len;

	hits->wild_count = 0;
	hits->exact = NONE;
	if (!host_is_dns_name(host, len))
		return false;
	for (;;) {
		size_t start = label_start(host, end);
		uint32_t h = hash_label(node, host + start, end - start);

		node = trie_find(m, node, host + start, end - start, h);
		if (node == NONE)
			return true;
		if (m->nodes[node].wild_count)
			hits->wild[hits->wild_count++] = node;
		if (start == 0) {
			hits->exact = node;
			return true;
		}
		end = start - 1;
	}
}

/* ---- request targets ---------------------------------------------------- */

static bool
is_control(unsigned char c)
{
	return c < 0x20 || c == 0x7f;
}

/*
 * "%2e" is a dot and "%2f"/"%5c" a separator to some servers but not to
 * the glob: a server that decodes them after we matched would see a
 * different path, so such targets are ambiguous and denied.
 */
static bool
is_encoded_dot_or_separator(const char *s, size_t i, size_t end)
{
	char hi, lo;

	if (s[i] != '%' || end - i < 3)
		return false;
	hi = s[i + 1];
	lo = (char)(s[i + 2] | 0x20);
	return (hi == '2' && (lo == 'e' || lo == 'f')) || (hi == '5' && lo == 'c');
}

/* "." or "..", with or without ";params" (which some servers drop). */
static int
dot_segment(const char *seg, size_t len)
{
	const char *semi = memchr(seg, ';', len);
	size_t base = semi ? (size_t)(semi - seg) : len;

	if (base == 1 && seg[0] == '.')
		return semi ? -1 : 1;
	if (base == 2 && seg[0] == '.' && seg[1] == '.')
		return semi ? -1 : 2;
	return 0;
}

ssize_t
egress_normalize_target(const char *target, size_t len, char *out, size_t cap)
{
	size_t end, path_end, pos, n = 1, depth = 0, i;

	if (!target || len == 0 || target[0] != '/' || cap < 2)
		return -1;
	end = len;
	for (i = 0; i < len; i++) {
		if (is_control((unsigned char)target[i]))
			return -1;
		if (target[i] == '#' && end == len)
			end = i;
	}
	path_end = end;
	for (i = 0; i < end; i++) {
		if (target[i] == '?') {
			path_end = i;
			break;
		}
		/* A raw backslash is a separator to some servers, and not to us. */
		if (target[i] == '\\' || is_encoded_dot_or_separator(target, i, end))
			return -1;
	}

	/* OUT is "/" followed by the DEPTH kept segments joined by '/'. */
	out[0] = '/';
	for (pos = 1;;) {
		const char *seg = target + pos;
		const char *slash = memchr(seg, '/', path_end - pos);
		size_t seg_len = slash ? (size_t)(slash - seg) : path_end - pos;
		bool last = !slash;
		int dots = dot_segment(seg, seg_len);

		if (dots < 0)
			return -1;
		if (dots == 2) {
			/* Climbing above '/' would leave the space the rules talk about. */
			if (depth == 0)
				return -1;
			/* Drop the last kept segment with the '/' before it, never the root. */
			if (--depth == 0)
				n = 1;
			else
				n = (size_t)((const char *)memrchr(out, '/', n) - out);
		}
		if (dots == 0 || last) {
			/* "/a/." and "/a/b/.." keep their trailing slash, as in RFC 3986. */
			if (dots)
				seg_len = 0;
			if (n + (depth > 0) + seg_len >= cap)
				return -1;
			if (depth++ > 0)
				out[n++] = '/';
			memcpy(out + n, seg, seg_len);
			n += seg_len;
		}
		if (last)
			break;
		pos += seg_len + 1;
	}

	if (end - path_end >= cap - n)
		return -1;
	memcpy(out + n, target + path_end, end - path_end);
	n += end - path_end;
	out[n] = '\0';
	return (ssize_t)n;
}

/* ---- path globs --------------------------------------------------------- */

/*
 * '*' and '?' inside one segment (neither side holds a '/').  Greedy with a
 * single backtracking point, the last '*': a later star can absorb whatever
 * an earlier one would have, so O(len(p) * len(s)) at worst.
 */
static bool
segment_match(const char *p, size_t pn, const char *s, size_t sn)
{
	size_t pi = 0, si = 0, star = SIZE_MAX, star_s = 0;

	while (si < sn) {
		if (pi < pn && p[pi] == '*') {
			star = pi++;
			star_s = si;
		} else if (pi < pn && (p[pi] == '?' || p[pi] == s[si])) {
			pi++;
			si++;
		} else if (star != SIZE_MAX) {
			pi = star + 1;
			si = ++star_s;
		} else {
			return false;
		}
	}
	while (pi < pn && p[pi] == '*')
		pi++;
	return pi == pn;
}

static bool
glob_seg_match(const struct egress_matcher *m, const struct glob_seg *g, const char *s, size_t len)
{
	const char *p = m->pool + g->off;

	if (g->kind == SEG_LITERAL)
		return g->len == len && memcmp(p, s, len) == 0;
	return segment_match(p, g->len, s, len);
}

/*
 * The same greedy scheme one level up: SEG_ANY is the star, every other
 * segment matches exactly one target segment.  S is the target without its
 * leading '/'; its segments start at 0 and after each '/', so a position
 * past LEN means all of them were consumed.
 */
static bool
glob_segments_match(const struct egress_matcher *m, const struct glob_seg *g, size_t gn,
		    const char *s, size_t len)
{
	size_t gi = 0, t = 0, star = SIZE_MAX, star_t = 0;

	while (t <= len) {
		const char *slash = memchr(s + t, '/', len - t);
		size_t end = slash ? (size_t)(slash - s) : len;

		if (gi < gn && g[gi].kind == SEG_REST)
			return true;
		if (gi < gn && g[gi].kind == SEG_ANY) {
			star = gi++;
			star_t = t;
		} else if (gi < gn && glob_seg_match(m, &g[gi], s + t, end - t)) {
			gi++;
			t = end + 1;
		} else if (star != SIZE_MAX) {
			/* Let the last "**" take one more segment and retry. */
			slash = memchr(s + star_t, '/', len - star_t);
			star_t = slash ? (size_t)(slash - s) + 1 : len + 1;
			gi = star + 1;
			t = star_t;
		} else {
			return false;
		}
	}
	/* The last segment is never SEG_ANY, so nothing else could match nothing. */
	return gi == gn;
}

static bool
rule_path_match(const struct egress_matcher *m, const struct rule_entry *r, const char *path,
		size_t len)
{
	const char *text = m->pool + r->text_off;

	switch (r->glob_kind) {
	case GLOB_EXACT:
		return len == r->text_len && memcmp(path, text, len) == 0;
	case GLOB_PREFIX:
		return len >= r->text_len && memcmp(path, text, r->text_len) == 0;
	default:
		return glob_segments_match(m, m->segs + r->seg_first, r->seg_count, path + 1,
					   len - 1);
	}
}

/* Split the glob PATH (starting with '/') into segments and pick its kind. */
static void
glob_compile(struct egress_matcher *m, struct rule_entry *r, const char *path, size_t len)
{
	size_t off = m->pool_len, first = m->seg_count, pos = 1;
	size_t literal = 0; /* segments that are plain bytes */

	memcpy(m->pool + off, path, len);
	m->pool_len += len;
	for (;;) {
		const char *seg = path + pos;
		const char *slash = memchr(seg, '/', len - pos);
		size_t seg_len = slash ? (size_t)(slash - seg) : len - pos;
		struct glob_seg *g = &m->segs[m->seg_count++];

		g->off = (uint32_t)(off + pos);
		g->len = (uint32_t)seg_len;
		if (seg_len == 2 && seg[0] == '*' && seg[1] == '*')
			g->kind = slash ? SEG_ANY : SEG_REST;
		else if (memchr(seg, '*', seg_len) || memchr(seg, '?', seg_len))
			g->kind = SEG_WILD;
		else
			g->kind = SEG_LITERAL;
		literal += g->kind == SEG_LITERAL;
		if (!slash)
			break;
		pos += seg_len + 1;
	}

	r->text_off = (uint32_t)off;
	r->seg_first = (uint32_t)first;
	r->seg_count = (uint32_t)(m->seg_count - first);
	if (literal == r->seg_count) {
		r->glob_kind = GLOB_EXACT;
		r->text_len = (uint32_t)len;
	} else if (literal + 1 == r->seg_count && m->segs[m->seg_count - 1].kind == SEG_REST) {
		r->glob_kind = GLOB_PREFIX;
		r->text_len = (uint32_t)(len - 2); /* up to and with the last '/' */
	} else {
		r->glob_kind = GLOB_SEGMENTS;
		return;
	}
	m->seg_count = first; /* the segments are not needed */
}

/* ---- the matcher -------------------------------------------------------- */

/*
 * Rules that could never match a well-formed request, or whose meaning is
 * unclear (an empty wildcard host would cover every host), are left out
 * rather than trusted: a caller may build rules without the parser.
 */
static bool
rule_is_usable(const struct egress_rule *r)
{
	if (!r->host || !host_is_dns_name(r->host, strlen(r->host)))
		return false;
	if (r->tcp) /* a TCP rule without its port would mean no port at all */
		return r->port >= 1 && r->port <= 65535;
	return r->path && r->path[0] == '/' && (r->methods & EGRESS_ANY);
}

static size_t
count_byte(const char *s, char c)
{
	size_t n = 0;

	for (; *s; s++)
		n += *s == c;
	return n;
}

void
egress_matcher_free(struct egress_matcher *m)
{
	if (!m)
		return;
	free(m->rules);
	free(m->nodes);
	free(m->edges);
	free(m->index);
	free(m->pool);
	free(m->segs);
	free(m);
}

/*
 * Exactly the room the rules need for rules, strings and segments; the trie
 * starts small and grows, since hosts share their upper labels.
 */
static bool
matcher_alloc(struct egress_matcher *m, size_t n, size_t pool, size_t segs)
{
	size_t slots = 32;

	m->rules = calloc(n ? n : 1, sizeof(*m->rules));
	m->index = calloc(n ? n : 1, sizeof(*m->index));
	m->pool = malloc(pool ? pool : 1);
	m->segs = calloc(segs ? segs : 1, sizeof(*m->segs));
	m->node_cap = 16;
	m->nodes = calloc(m->node_cap, sizeof(*m->nodes));
	m->edges = malloc(slots * sizeof(*m->edges));
	if (!m->rules || !m->nodes || !m->edges || !m->index || !m->pool || !m->segs)
		return false;
	m->edge_mask = slots - 1;
	memset(m->edges, 0xff, slots * sizeof(*m->edges)); /* every parent NONE */
	m->node_count = 1;
	return true;
}

struct egress_matcher *
egress_matcher_new(const struct egress_rule *rules, size_t n)
{
	struct egress_matcher *m;
	uint32_t *node_of = NULL;
	size_t nodes = 1, pool = 0, segs = 0, i, next = 0;

	/* Sizes, bounded so that every offset and node id fits the uint32_t fields. */
	for (i = 0; i < n; i++) {
		const struct egress_rule *r = &rules[i];
		size_t host_len, path_len;

		if (!rule_is_usable(r))
			continue;
		host_len = strlen(r->host);
		path_len = r->tcp ? 0 : strlen(r->path);
		if (path_len >= NONE / 2 || pool >= NONE / 2 - path_len)
			return NULL;
		nodes += count_byte(r->host, '.') + 1;
		pool += host_len + path_len;
		segs += r->tcp ? 0 : count_byte(r->path, '/');
	}
	if (n >= NONE || nodes >= NONE / 4)
		return NULL;

	m = calloc(1, sizeof(*m));
	node_of = malloc((n ? n : 1) * sizeof(*node_of));
	if (!m || !node_of || !matcher_alloc(m, n, pool, segs))
		goto fail;

	for (i = 0; i < n; i++) {
		const struct egress_rule *r = &rules[i];

		node_of[i] = NONE;
		if (!rule_is_usable(r))
			continue;
		node_of[i] = trie_insert(m, r->host, strlen(r->host));
		if (node_of[i] == NONE)
			goto fail;
		if (r->wildcard)
			m->nodes[node_of[i]].wild_count++;
		else
			m->nodes[node_of[i]].exact_count++;
		m->rules[i].tcp = r->tcp;
		m->rules[i].port = r->port;
		if (r->tcp)
			continue;
		m->rules[i].methods = r->methods & EGRESS_ANY;
		glob_compile(m, &m->rules[i], r->path, strlen(r->path));
	}

	/* Lay the per-node lists out in INDEX; filling in rule order sorts them. */
	for (i = 0; i < m->node_count; i++) {
		struct trie_node *t = &m->nodes[i];

		t->exact_first = (uint32_t)next;
		next += t->exact_count;
		t->wild_first = (uint32_t)next;
		next += t->wild_count;
		t->exact_count = t->wild_count = 0;
	}
	for (i = 0; i < n; i++) {
		struct trie_node *t;

		if (node_of[i] == NONE)
			continue;
		t = &m->nodes[node_of[i]];
		if (rules[i].wildcard)
			m->index[t->wild_first + t->wild_count++] = (uint32_t)i;
		else
			m->index[t->exact_first + t->exact_count++] = (uint32_t)i;
	}
	free(node_of);
	return m;

fail:
	free(node_of);
	egress_matcher_free(m);
	return NULL;
}

/* Does rule R speak of PORT?  A rule that names none means DEFAULT_PORT. */
static bool
port_match(const struct rule_entry *r, unsigned port, unsigned default_port)
{
	return r->port ? r->port == port : port == default_port;
}

/* What a lookup asks of the rules of one host. */
struct lookup {
	bool tcp;	 /* TCP rules only, else HTTP rules only */
	unsigned method; /* an EGRESS_* bit; 0 for an unknown method */
	unsigned port, default_port;
	const char *path; /* NULL: any path (and any method) */
	size_t path_len;
};

/* Lower BEST to the first rule of the list that allows the request Q. */
static void
scan_list(const struct egress_matcher *m, uint32_t first, uint32_t count, const struct lookup *q,
	  uint32_t *best)
{
	uint32_t i;

	for (i = first; i < first + count && m->index[i] < *best; i++) {
		const struct rule_entry *r = &m->rules[m->index[i]];

		/* An HTTP rule never allows a raw stream, nor a TCP rule a request. */
		if (r->tcp != q->tcp || !port_match(r, q->port, q->default_port))
			continue;
		if (!q->path) {
			*best = m->index[i];
			return;
		}
		/* An unknown method (bit 0) only passes a "*" rule. */
		if (r->methods != EGRESS_ANY && !(r->methods & q->method))
			continue;
		if (rule_path_match(m, r, q->path, q->path_len)) {
			*best = m->index[i];
			return;
		}
	}
}

/* The lowest rule of HOST's candidates that allows Q, or -1. */
static ssize_t
lookup_host(const struct egress_matcher *m, const char *host, size_t host_len,
	    const struct lookup *q)
{
	struct host_hits hits;
	uint32_t best = NONE;
	size_t i;

	if (!m || !host_walk(m, host, host_len, &hits))
		return -1;
	for (i = 0; i < hits.wild_count; i++) {
		const struct trie_node *t = &m->nodes[hits.wild[i]];

		scan_list(m, t->wild_first, t->wild_count, q, &best);
	}
	if (hits.exact != NONE) {
		const struct trie_node *t = &m->nodes[hits.exact];

		scan_list(m, t->exact_first, t->exact_count, q, &best);
	}
	return best == NONE ? -1 : (ssize_t)best;
}

ssize_t
egress_match(const struct egress_matcher *m, const char *method, size_t method_len,
	     const char *host, size_t host_len, unsigned port, unsigned default_port,
	     const char *target, size_t target_len)
{
	char path[EGRESS_TARGET_MAX];
	struct lookup q = {.port = port, .default_port = default_port, .path = path};
	ssize_t norm_len;

	if (!m)
		return -1;
	norm_len = egress_normalize_target(target, target_len, path, sizeof(path));
	if (norm_len < 0)
		return -1;
	/* The glob sees the path only: a query never takes part in '*', '?' or
	 * '**', and comes along with the path it follows. */
	q.path_len = strcspn(path, "?");
	q.method = method ? egress_method_bit(method, method_len) : 0;
	return lookup_host(m, host, host_len, &q);
}

ssize_t
egress_match_host(const struct egress_matcher *m, const char *host, size_t host_len, unsigned port,
		  unsigned default_port)
{
	struct lookup q = {.port = port, .default_port = default_port};

	return lookup_host(m, host, host_len, &q);
}

ssize_t
egress_match_tcp(const struct egress_matcher *m, const char *host, size_t host_len, unsigned port)
{
	/* A TCP rule always names its port: no default applies. */
	struct lookup q = {.tcp = true, .port = port, .default_port = 0};

	if (port == 0)
		return -1;
	return lookup_host(m, host, host_len, &q);
}

enum egress_connect
egress_decide_connect(const struct egress_matcher *m, const char *host, size_t host_len,
		      unsigned port, ssize_t *rule)
{
	/* HTTP rules first: a host and port they take is inspected (and gets
	 * its credentials), whatever a tcp rule says of it. */
	*rule = egress_match_host(m, host, host_len, port, EGRESS_PORT_TLS);
	if (*rule >= 0)
		return EGRESS_CONNECT_INSPECT;
	*rule = egress_match_tcp(m, host, host_len, port);
	return *rule >= 0 ? EGRESS_CONNECT_TUNNEL : EGRESS_CONNECT_DENY;
}

enum egress_connect
egress_decide_transparent(const struct egress_matcher *m, const char *host, size_t host_len,
			  unsigned port, ssize_t *rule)
{
	*rule = egress_match_host(m, host, host_len, port, EGRESS_PORT_TLS);
	if (*rule < 0)
		*rule = egress_match_host(m, host, host_len, port, EGRESS_PORT_PLAIN);
	if (*rule >= 0)
		return EGRESS_CONNECT_INSPECT;
	*rule = egress_match_tcp(m, host, host_len, port);
	return *rule >= 0 ? EGRESS_CONNECT_TUNNEL : EGRESS_CONNECT_DENY;
}
