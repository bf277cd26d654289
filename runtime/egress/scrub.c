/*
 * scrub.c - secrets out of responses (scrub.h).
 */
#include "runtime/egress/scrub.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void index_make(struct scrub_set *s);
static void index_free(struct scrub_set *s);

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* Base64 of IN/N, whole groups (N is padded with zero bytes to a multiple of 3). */
static size_t
encode(const unsigned char *in, size_t n, char *out)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned)in[i] << 16 | (i + 1 < n ? (unsigned)in[i + 1] << 8 : 0) |
			     (i + 2 < n ? in[i + 2] : 0);

		out[o++] = b64[v >> 18 & 63];
		out[o++] = b64[v >> 12 & 63];
		out[o++] = b64[v >> 6 & 63];
		out[o++] = b64[v & 63];
	}
	return o;
}

/*
 * The characters of base64 text that depend on S/LEN alone when S starts
 * K bytes into a group (any bytes before and after): the part of any
 * base64 text holding S at that alignment that always looks the same.
 * Character 4g+r depends on bytes 3g (r 0, 1), 3g+1 (r 1, 2), 3g+2 (r 2, 3).
 */
static size_t
stable_middle(const char *s, size_t len, size_t k, char *out)
{
	unsigned char plain[SCRUB_PATTERN_MAX + 4] = {0};
	char enc[(SCRUB_PATTERN_MAX + 6) / 3 * 4 + 8];
	size_t n = k + len, chars, o = 0;

	memcpy(plain + k, s, len);
	chars = encode(plain, n, enc);
	for (size_t c = 0; c < chars; c++) {
		size_t g = c / 4, r = c % 4;
		size_t lo = r == 3 ? 3 * g + 2 : r == 2 ? 3 * g + 1 : 3 * g;
		size_t hi = r == 0 ? 3 * g : r == 1 ? 3 * g + 1 : 3 * g + 2;

		if (lo >= k && hi < n)
			out[o++] = enc[c];
	}
	return o;
}

static int
add(struct scrub_set *s, const char *from, size_t from_len, const char *to, size_t to_len)
{
	struct scrub_pattern *p;

	if (from_len == 0 || from_len > SCRUB_PATTERN_MAX)
		return -1;
	for (size_t i = 0; i < s->n; i++)
		if (s->p[i].from_len == from_len && !memcmp(s->p[i].from, from, from_len)) {
			s->p[i].refs++;
			return 0;
		}
	if (s->n == SCRUB_MAX_PATTERNS)
		return -1;
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 16;
		struct scrub_pattern *grown = realloc(s->p, cap * sizeof(*grown));

		if (!grown)
			return -1;
		s->p = grown;
		s->cap = cap;
	}
	p = &s->p[s->n];
	p->from = malloc(from_len);
	p->to = malloc(to_len ? to_len : 1);
	if (!p->from || !p->to) {
		free(p->from);
		free(p->to);
		return -1;
	}
	memcpy(p->from, from, from_len);
	memcpy(p->to, to, to_len);
	p->from_len = from_len;
	p->to_len = to_len;
	p->refs = 1;
	s->n++;
	if (from_len > s->longest)
		s->longest = from_len;
	return 0;
}

/* One reference less to the pattern FROM; gone at none. */
static void
drop(struct scrub_set *s, const char *from, size_t from_len)
{
	for (size_t i = 0; i < s->n; i++) {
		struct scrub_pattern *p = &s->p[i];

		if (p->from_len != from_len || memcmp(p->from, from, from_len) || --p->refs)
			continue;
		explicit_bzero(p->from, p->from_len);
		free(p->from);
		free(p->to);
		s->p[i] = s->p[--s->n];
		s->longest = 0;
		for (size_t k = 0; k < s->n; k++)
			if (s->p[k].from_len > s->longest)
				s->longest = s->p[k].from_len;
		return;
	}
}

/*
 * The patterns SECRET gives, in one order: each piece as written, then,
 * for a piece long enough, its base64 middles at the three alignments.
 * Adding (to PLACEHOLDER's forms) stops at the first failure; dropping
 * takes out the first LIMIT.  Returns how many were handled.
 */
static size_t
each_pattern(struct scrub_set *s, const char *secret, const char *placeholder, bool adding,
	     size_t limit, bool *failed)
{
	size_t slen = strlen(secret), plen = strlen(placeholder);
	size_t pieces = (slen + SCRUB_PIECE_MAX - 1) / SCRUB_PIECE_MAX, off = 0, count = 0;
	char from[SCRUB_PATTERN_MAX * 2], to[SCRUB_PATTERN_MAX * 2];

	*failed = false;
	for (size_t k = 0; k < pieces; k++) {
		/* Nearly equal pieces: never a short last one that would match anywhere. */
		size_t len = slen / pieces + (k < slen % pieces);
		const char *piece = secret + off;

		off += len;
		for (size_t a = 0; a < 4 && count < limit; a++) {
			size_t f, t = plen;

			if (a && len < SCRUB_BASE64_MIN)
				break;
			f = a ? stable_middle(piece, len, a - 1, from) : len;
			if (a && adding)
				t = stable_middle(placeholder, plen, a - 1, to);
			if (!adding)
				drop(s, a ? from : piece, f);
			else if (add(s, a ? from : piece, f, a ? to : placeholder, t) < 0)
				*failed = true;
			explicit_bzero(from, sizeof(from));
			if (*failed)
				return count;
			count++;
		}
	}
	return count;
}

int
scrub_set_add_secret(struct scrub_set *s, const char *secret, const char *placeholder)
{
	bool failed;
	size_t done;

	if (!*secret || strlen(placeholder) > SCRUB_PIECE_MAX)
		return -1;
	done = each_pattern(s, secret, placeholder, true, (size_t)-1, &failed);
	if (!failed) {
		index_make(s);
		return 0;
	}
	/* Undo the part that went in: the set stays as it was. */
	each_pattern(s, secret, "", false, done, &failed);
	index_make(s);
	return -1;
}

void
scrub_set_remove_secret(struct scrub_set *s, const char *secret)
{
	bool failed;

	each_pattern(s, secret, "", false, (size_t)-1, &failed);
	index_make(s);
}

void
scrub_set_clear(struct scrub_set *s)
{
	index_free(s);
	for (size_t i = 0; i < s->n; i++) {
		explicit_bzero(s->p[i].from, s->p[i].from_len);
		free(s->p[i].from);
		free(s->p[i].to);
	}
	free(s->p);
	memset(s, 0, sizeof(*s));
}

/*
 * The index.  A response is looked at once for all the longer patterns, not
 * once for each: only the 4 bytes (a gram) at every STRIDE-th position of
 * the text, STRIDE being the shortest such pattern less 3 (at most
 * STRIDE_MAX).  A pattern of L >= STRIDE + 3 bytes starting at S holds the
 * text's gram at the first sampled position P at or after S (P - S <
 * STRIDE, so P + GRAM <= S + L), at its own offset P - S; so the grams at
 * offsets 0 to STRIDE - 1 of every such pattern are indexed, a bit of
 * FILTER for each (by hash), and the grams themselves, sorted by hash, to
 * tell which pattern and offset a hit may be.  Each one is then compared
 * whole.  Patterns shorter than SAMPLED are looked for on their own.
 */
#define GRAM 4
#define SAMPLED 11 /* a stride of 8 at least */
#define STRIDE_MAX 32
#define FILTER_BITS 16

struct scrub_gram {
	uint32_t gram;
	uint16_t hash;
	uint16_t off;	  /* in the pattern */
	uint32_t pattern; /* its index in the set */
};

static uint32_t
gram_at(const char *s)
{
	uint32_t g;

	memcpy(&g, s, sizeof(g));
	return g;
}

static unsigned
gram_hash(uint32_t g)
{
	return (unsigned)((g * 0x9E3779B1u) >> (32 - FILTER_BITS));
}

static int
by_hash(const void *a, const void *b)
{
	const struct scrub_gram *x = a, *y = b;

	return (x->hash > y->hash) - (x->hash < y->hash);
}

static void
index_free(struct scrub_set *s)
{
	if (s->grams)
		explicit_bzero(s->grams, s->n_grams * sizeof(*s->grams));
	if (s->filter)
		explicit_bzero(s->filter, ((size_t)1 << FILTER_BITS >> 6) * sizeof(*s->filter));
	free(s->grams);
	free(s->filter);
	s->grams = NULL;
	s->filter = NULL;
	s->n_grams = 0;
}

/* The index of S's patterns as they are now (none when memory runs out:
 * every pattern is then looked for on its own, as right, more slowly). */
static void
index_make(struct scrub_set *s)
{
	size_t n = 0, k = 0, stride = STRIDE_MAX;

	index_free(s);
	for (size_t i = 0; i < s->n; i++)
		if (s->p[i].from_len >= SAMPLED) {
			n++;
			if (s->p[i].from_len - (GRAM - 1) < stride)
				stride = s->p[i].from_len - (GRAM - 1);
		}
	if (!n)
		return;
	n *= stride;
	s->stride = stride;
	s->filter = calloc((size_t)1 << FILTER_BITS >> 6, sizeof(*s->filter));
	s->grams = malloc(n * sizeof(*s->grams));
	if (!s->filter || !s->grams) {
		index_free(s);
		return;
	}
	for (size_t i = 0; i < s->n; i++)
		for (size_t j = 0; s->p[i].from_len >= SAMPLED && j < stride; j++) {
			uint32_t g = gram_at(s->p[i].from + j);
			unsigned h = gram_hash(g);

			s->filter[h >> 6] |= 1ull << (h & 63);
			s->grams[k++] =
			    (struct scrub_gram){g, (uint16_t)h, (uint16_t)j, (uint32_t)i};
		}
	qsort(s->grams, n, sizeof(*s->grams), by_hash);
	s->n_grams = n;
}

void
scrub_set_wipe(struct scrub_set *s)
{
	for (size_t i = 0; i < s->n; i++)
		explicit_bzero(s->p[i].from, s->p[i].from_len);
	if (s->grams)
		explicit_bzero(s->grams, s->n_grams * sizeof(*s->grams));
	if (s->filter)
		explicit_bzero(s->filter, ((size_t)1 << FILTER_BITS >> 6) * sizeof(*s->filter));
}

/* The first of S's grams with hash H. */
static size_t
grams_from(const struct scrub_set *s, unsigned h)
{
	size_t lo = 0, hi = s->n_grams;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->grams[mid].hash < h)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Is pattern I at START of BUF/LEN, and earlier (or as early and longer)
 * than *WHERE and *BEST?  Then it is those. */
static bool
take_if_earlier(const struct scrub_set *s, const char *buf, size_t len, size_t start, uint32_t i,
		size_t *where, int *best)
{
	const struct scrub_pattern *p = &s->p[i];

	if (start + p->from_len > len || memcmp(buf + start, p->from, p->from_len))
		return false;
	if (start < *where ||
	    (start == *where && (*best < 0 || p->from_len > s->p[*best].from_len))) {
		*where = start;
		*best = (int)i;
	}
	return true;
}

/* The earliest (then longest) indexed pattern in BUF/LEN, if earlier than
 * *WHERE (or as early and longer than *BEST): into both.  Every match
 * found at a sampled position starts after the one before it, so the first
 * position with one has the earliest. */
static void
sampled_match(const struct scrub_set *s, const char *buf, size_t len, size_t *where, int *best)
{
	size_t stride = s->stride, end = len < GRAM ? 0 : len - GRAM + 1;

	for (size_t pos = 0; pos < end && pos < *where + stride; pos += stride) {
		uint32_t g = gram_at(buf + pos);
		unsigned h = gram_hash(g);
		bool found = false;

		if (!(s->filter[h >> 6] >> (h & 63) & 1))
			continue;
		for (size_t k = grams_from(s, h); k < s->n_grams && s->grams[k].hash == h; k++) {
			const struct scrub_gram *e = &s->grams[k];

			if (e->gram == g && e->off <= pos)
				found |= take_if_earlier(s, buf, len, pos - e->off, e->pattern,
							 where, best);
		}
		if (found)
			return;
	}
}

/* The earliest (then longest) pattern in BUF/LEN: its index, and *AT; -1 when none. */
static int
first_match(const struct scrub_set *s, const char *buf, size_t len, size_t *at)
{
	int best = -1;
	size_t where = len;

	for (size_t i = 0; i < s->n; i++) {
		const struct scrub_pattern *p = &s->p[i];
		size_t lim = where + p->from_len < len ? where + p->from_len : len;
		const char *m;

		if (s->filter && p->from_len >= SAMPLED)
			continue; /* the index's */
		m = memmem(buf, lim, p->from, p->from_len);
		if (!m)
			continue;
		if ((size_t)(m - buf) < where ||
		    ((size_t)(m - buf) == where && p->from_len > s->p[best].from_len)) {
			where = (size_t)(m - buf);
			best = (int)i;
		}
	}
	if (s->filter)
		sampled_match(s, buf, len, &where, &best);
	*at = where;
	return best;
}

bool
scrub_finds(const struct scrub_set *s, const char *in, size_t len)
{
	size_t at;

	return first_match(s, in, len, &at) >= 0;
}

long
scrub_buffer(const struct scrub_set *s, const char *in, size_t len, char *out, size_t cap)
{
	size_t o = 0, at;
	int i;

	while ((i = first_match(s, in, len, &at)) >= 0) {
		const struct scrub_pattern *p = &s->p[i];

		if (o + at + p->to_len > cap)
			return -1;
		memcpy(out + o, in, at);
		memcpy(out + o + at, p->to, p->to_len);
		o += at + p->to_len;
		in += at + p->from_len;
		len -= at + p->from_len;
	}
	if (o + len > cap)
		return -1;
	memcpy(out + o, in, len);
	return (long)(o + len);
}

void
scrub_stream_init(struct scrub_stream *st, const struct scrub_set *set, bool same_length)
{
	st->set = set;
	st->same_length = same_length;
	st->n_held = 0;
}

static int
replace(const struct scrub_stream *st, const struct scrub_pattern *p,
	int (*emit)(void *arg, const char *s, size_t n), void *arg)
{
	static char stars[SCRUB_PATTERN_MAX];

	if (!st->same_length)
		return emit(arg, p->to, p->to_len);
	if (!stars[0])
		memset(stars, '*', sizeof(stars));
	return emit(arg, stars, p->from_len);
}

/* Scrub WIN/N (no pattern of it is cut at its start); hold back a partial pattern at its end. */
static int
scan(struct scrub_stream *st, const char *win, size_t n, bool last,
     int (*emit)(void *arg, const char *s, size_t n), void *arg)
{
	const struct scrub_set *s = st->set;
	size_t at, keep;
	int i;

	/*
	 * Only a match that starts before the last longest-less-one bytes is
	 * taken now: any pattern starting that early is whole in WIN, so the
	 * leftmost (then longest) choice is the one the whole stream would
	 * make.  A match starting later waits with the tail.
	 */
	while ((i = first_match(s, win, n, &at)) >= 0 &&
	       (last || (n >= s->longest && at <= n - s->longest))) {
		const struct scrub_pattern *p = &s->p[i];

		if ((at && emit(arg, win, at) < 0) || replace(st, p, emit, arg) < 0)
			return -1;
		win += at + p->from_len;
		n -= at + p->from_len;
	}
	/*
	 * Whatever the text, the same tail is held: the longest pattern less a
	 * byte (or all that is left after the last match).  Holding only what
	 * could begin a secret would show, in what comes out when, which bytes
	 * begin one: an agent that has a server reflect its guesses would learn
	 * the secret a byte at a time.
	 */
	keep = last ? 0 : n < s->longest - 1 ? n : s->longest - 1;
	if (n - keep && emit(arg, win, n - keep) < 0)
		return -1;
	memmove(st->held, win + n - keep, keep);
	st->n_held = keep;
	return 0;
}

int
scrub_stream_feed(struct scrub_stream *st, const char *buf, size_t len,
		  int (*emit)(void *arg, const char *s, size_t n), void *arg)
{
	char win[SCRUB_PATTERN_MAX * 2];

	if (!st->set || st->set->n == 0)
		return len ? emit(arg, buf, len) : 0;
	/*
	 * What is held, with enough of the new bytes to finish any pattern it
	 * begins, is scanned on its own; the rest of BUF in place (its end
	 * held again).  A pattern starting in the held bytes ends in WIN.
	 */
	while (st->n_held && len) {
		size_t take = st->set->longest < len ? st->set->longest : len;
		size_t before = st->n_held;

		memcpy(win, st->held, before);
		memcpy(win + before, buf, take);
		if (take < len) {
			/* Scrub only what starts in the held bytes; BUF's part goes through below.
			 */
			size_t at;
			int i = first_match(st->set, win, before + take, &at);

			if (i >= 0 && at < before) {
				const struct scrub_pattern *p = &st->set->p[i];
				size_t end = at + p->from_len;

				if ((at && emit(arg, win, at) < 0) || replace(st, p, emit, arg) < 0)
					return -1;
				if (end <= before) {
					/* Whole within the held bytes: the rest of them, again. */
					memmove(st->held, win + end, before - end);
					st->n_held = before - end;
					continue;
				}
				st->n_held = 0;
				buf += end - before; /* the bytes of BUF it took */
				len -= end - before;
				continue;
			}
			/* Nothing starts in the held bytes: they go out as they are. */
			if (emit(arg, win, before) < 0)
				return -1;
			st->n_held = 0;
			break;
		}
		/* All of BUF fits in the window: scan the whole. */
		st->n_held = 0;
		return scan(st, win, before + take, false, emit, arg);
	}
	if (!len)
		return 0;
	return scan(st, buf, len, false, emit, arg);
}

int
scrub_stream_finish(struct scrub_stream *st, int (*emit)(void *arg, const char *s, size_t n),
		    void *arg)
{
	char tail[SCRUB_PATTERN_MAX];
	size_t n = st->n_held;

	st->n_held = 0;
	if (!n)
		return 0;
	/* The tail may hold whole patterns (they wait there until decided). */
	memcpy(tail, st->held, n);
	return scan(st, tail, n, true, emit, arg);
}
