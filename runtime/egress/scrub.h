/*
 * scrub.h - secrets out of responses, as they stream.
 *
 * The proxy sends a real secret upstream; an upstream that echoes request
 * headers (error pages, debugging endpoints) would hand it to the agent.
 * So every response from a host a credential is bound to passes through a
 * scrubber that replaces each secret by its placeholder: the secret as
 * written, and the secret inside base64 (how Basic authorization carries
 * it) at each of the three alignments it can have in a longer base64 text,
 * whatever user name the agent chose to put before it.
 *
 * Streaming: nothing is buffered whole.  The last bytes seen (the longest
 * pattern less one byte, whatever they are) are held back until the next
 * bytes or the end of the stream; the rest goes out at once.  The hold does
 * not depend on what the bytes are: if it did, when bytes come out would
 * tell an agent which of its guesses reflected by a server begin a secret.
 */
#ifndef OMNIBOX_SCRUB_H
#define OMNIBOX_SCRUB_H

#include <stdbool.h>
#include <stddef.h>

#define SCRUB_MAX_PATTERNS 4096
#define SCRUB_PATTERN_MAX 512
/* A longer secret is looked for in pieces of at most this many bytes
 * (each replaced by the placeholder), so the hold stays short. */
#define SCRUB_PIECE_MAX (SCRUB_PATTERN_MAX / 2)
/* Secrets shorter than this are replaced as written only (their base64
 * middles would be too short to be told from other text). */
#define SCRUB_BASE64_MIN 12

struct scrub_pattern {
	char *from, *to; /* owned; FROM is wiped when the set is freed */
	size_t from_len, to_len;
	unsigned refs; /* secrets that gave this pattern */
};

struct scrub_gram; /* scrub.c */

struct scrub_set {
	struct scrub_pattern *p; /* grows; a zeroed set is empty */
	size_t n, cap;
	size_t longest; /* the longest FROM */
	/* The index of the longer patterns, made again at each change (scrub.c);
	 * without one (none made yet, or no memory), every pattern is looked
	 * for on its own.  Wiped with the set. */
	unsigned long long *filter;
	struct scrub_gram *grams;
	size_t n_grams, stride;
};

/*
 * Add SECRET (replaced by PLACEHOLDER) and its base64 forms to S; a
 * secret longer than SCRUB_PIECE_MAX goes in as pieces of nearly equal
 * length.  Returns 0, or -1 when S would hold more than
 * SCRUB_MAX_PATTERNS, the placeholder is longer than SCRUB_PIECE_MAX, or
 * memory runs out (S is then as it was).
 */
int scrub_set_add_secret(struct scrub_set *s, const char *secret, const char *placeholder);

/* Take out what scrub_set_add_secret(S, SECRET, ...) put in (a pattern
 * another secret gave too stays). */
void scrub_set_remove_secret(struct scrub_set *s, const char *secret);

/* Zero the secrets S holds where they lie (its patterns, and the pieces of
 * them its index holds), freeing nothing. */
void scrub_set_wipe(struct scrub_set *s);

/* Wipe and free what S holds (S itself is the caller's). */
void scrub_set_clear(struct scrub_set *s);

/* Replace every pattern of S in IN/LEN, writing to OUT (at most CAP bytes).
 * Returns the length written, or -1 when CAP is too small. */
long scrub_buffer(const struct scrub_set *s, const char *in, size_t len, char *out, size_t cap);

/* Does IN/LEN hold a pattern of S? */
bool scrub_finds(const struct scrub_set *s, const char *in, size_t len);

struct scrub_stream {
	const struct scrub_set *set;
	bool same_length; /* each secret becomes as many '*': framing that counts bytes holds */
	char held[SCRUB_PATTERN_MAX];
	size_t n_held;
};

/* A stream that replaces by the placeholders (SAME_LENGTH false) or by '*'s. */
void scrub_stream_init(struct scrub_stream *st, const struct scrub_set *set, bool same_length);

/*
 * Scrub the next LEN bytes of a stream.  EMIT is called with what is ready
 * to go out (possibly several times, never with a secret); the last bytes
 * stay in ST.  EMIT returns 0, or -1 to stop (passed back).
 */
int scrub_stream_feed(struct scrub_stream *st, const char *buf, size_t len,
		      int (*emit)(void *arg, const char *s, size_t n), void *arg);

/* The stream ended: what is held goes out, scrubbed. */
int scrub_stream_finish(struct scrub_stream *st, int (*emit)(void *arg, const char *s, size_t n),
			void *arg);

#endif
