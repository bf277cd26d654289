/*
 * fakedns.c - names to addresses of 127.128.0.0/16 and back, and the DNS
 * answers that hand them out (fakedns.h).
 */
#include "runtime/egress/fakedns.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define NAME_LEN 253 /* the longest name, without its trailing dot */
#define LABEL_LEN 63
/* A power of two, twice FAKEDNS_MAX: the table is at most half full, so a
 * probe for an absent name ends soon at an empty slot. */
#define SLOTS 65536u
/* Names are kept in chunks of this size, each filled before the next. */
#define CHUNK 65536u
#define NAMES_PER_CHUNK (CHUNK / (NAME_LEN + 1))
#define CHUNKS ((FAKEDNS_MAX + NAMES_PER_CHUNK - 1) / NAMES_PER_CHUNK)

#define T_A 1
#define C_IN 1
#define HEADER 12

enum {
	RC_NOERROR = 0,
	RC_FORMERR = 1,
	RC_SERVFAIL = 2,
	RC_NXDOMAIN = 3,
	RC_NOTIMP = 4,
	RC_REFUSED = 5
};

/* No room for a new name: the table is full, or memory is. */
#define FIND_FULL (-1)
#define FIND_NOMEM (-2)
#define FIND_ABSENT (-3)

struct fakedns {
	/* 1 + the index of the name hashed there (open addressing, linear
	 * probing); 0: empty.  FAKEDNS_MAX + 1 fits in 16 bits. */
	uint16_t slot[SLOTS];
	/* name[i] has address FAKEDNS_NET + 1 + i; each points into a chunk. */
	const char *name[FAKEDNS_MAX];
	size_t n;
	char *chunk[CHUNKS];
	size_t n_chunk, used; /* bytes used of chunk[n_chunk - 1] */
};

_Static_assert(FAKEDNS_MAX < 65535u && SLOTS >= 2 * FAKEDNS_MAX, "the slots hold 1 + an index");
_Static_assert(FAKEDNS_MAX <= 0xfffeu, "the addresses stay inside 127.128.0.0/16");

struct fakedns *
fakedns_new(void)
{
	return calloc(1, sizeof(struct fakedns));
}

void
fakedns_free(struct fakedns *dns)
{
	if (!dns)
		return;
	for (size_t i = 0; i < dns->n_chunk; i++)
		free(dns->chunk[i]);
	free(dns);
}

size_t
fakedns_count(const struct fakedns *dns)
{
	return dns->n;
}

static bool
host_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '-';
}

static char
lower(unsigned char c)
{
	return (char)(c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c);
}

/*
 * The LEN bytes of NAME, written dotted, into OUT (NAME_LEN + 1 bytes)
 * lowercase, without its trailing dot, NUL-terminated.  Returns its length,
 * or 0 when it is no valid host name.
 */
static size_t
normalize(const char *name, size_t len, char *out)
{
	size_t label = 0;

	if (len > 0 && name[len - 1] == '.')
		len--;
	if (len == 0 || len > NAME_LEN)
		return 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)name[i];

		if (c == '.') {
			if (label == 0)
				return 0;
			label = 0;
		} else if (!host_char(c) || ++label > LABEL_LEN) {
			return 0;
		}
		out[i] = lower(c);
	}
	if (label == 0)
		return 0;
	out[len] = '\0';
	return len;
}

/*
 * FNV-1a, mixed: the same name always lands in the same place.  Not keyed:
 * names chosen to collide only slow down the lookups of the sandbox that
 * asks for them (FAKEDNS_MAX bounds every probe), and nobody else's.
 */
static uint32_t
hash(const char *s, size_t len)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	return h;
}

/* A copy of the LEN bytes of S (and a NUL) in the chunks, or NULL. */
static const char *
keep(struct fakedns *dns, const char *s, size_t len)
{
	char *p;

	if (dns->n_chunk == 0 || dns->used + len + 1 > CHUNK) {
		if (dns->n_chunk == CHUNKS)
			return NULL; /* cannot happen: CHUNKS holds FAKEDNS_MAX names */
		dns->chunk[dns->n_chunk] = malloc(CHUNK);
		if (!dns->chunk[dns->n_chunk])
			return NULL;
		dns->n_chunk++;
		dns->used = 0;
	}
	p = dns->chunk[dns->n_chunk - 1] + dns->used;
	memcpy(p, s, len + 1);
	dns->used += len + 1;
	return p;
}

/*
 * The index of NAME (normalized, LEN bytes).  When it has none: with
 * ASSIGN, the next one (FIND_FULL or FIND_NOMEM when there is no room);
 * without, FIND_ABSENT.
 */
static long
find(struct fakedns *dns, const char *name, size_t len, bool assign)
{
	uint32_t h = hash(name, len) & (SLOTS - 1);
	const char *copy;

	for (; dns->slot[h]; h = (h + 1) & (SLOTS - 1))
		if (!strcmp(dns->name[dns->slot[h] - 1], name))
			return dns->slot[h] - 1;
	if (!assign)
		return FIND_ABSENT;
	if (dns->n == FAKEDNS_MAX)
		return FIND_FULL;
	copy = keep(dns, name, len);
	if (!copy)
		return FIND_NOMEM;
	dns->name[dns->n] = copy;
	dns->slot[h] = (uint16_t)(dns->n + 1);
	return (long)dns->n++;
}

uint32_t
fakedns_address(struct fakedns *dns, const char *name, size_t len)
{
	char norm[NAME_LEN + 1];
	size_t n = normalize(name, len, norm);
	long i = n ? find(dns, norm, n, true) : FIND_ABSENT;

	return i < 0 ? 0 : FAKEDNS_NET + 1 + (uint32_t)i;
}

const char *
fakedns_name(const struct fakedns *dns, uint32_t addr)
{
	uint32_t i = addr - FAKEDNS_NET - 1;

	return addr > FAKEDNS_NET && i < dns->n ? dns->name[i] : NULL;
}

/*
 * The question's name at offset HEADER of Q, into NAME (NAME_LEN + 1
 * bytes, lowercase, dotted) with its length in *LEN, 0 when it is no
 * valid host name.  Returns the offset just past the question (its type
 * and class too), or 0 when the question is malformed: cut short, or a
 * label that is a compression pointer (there is nothing before it to
 * point to but the header) or of an unknown type.
 */
static size_t
question(const unsigned char *q, size_t qlen, char *name, size_t *len)
{
	size_t off = HEADER, n = 0;
	bool valid = true;

	for (;;) {
		unsigned b;

		if (off >= qlen)
			return 0;
		b = q[off++];
		if (b == 0)
			break;
		if (b & 0xc0)
			return 0;
		if (b > qlen - off)
			return 0;
		/* Labels are 1 to 63 bytes by their encoding; each byte and the
		 * total are checked here.  The walk goes on to the end either way. */
		if (valid && n + (n > 0) + b > NAME_LEN)
			valid = false;
		if (valid && n > 0)
			name[n++] = '.';
		for (unsigned k = 0; k < b && valid; k++) {
			if (!host_char(q[off + k]))
				valid = false;
			else
				name[n++] = lower(q[off + k]);
		}
		off += b;
	}
	if (qlen - off < 4)
		return 0;
	name[n] = '\0';
	*len = valid ? n : 0;
	return off + 4;
}

static void
put16(unsigned char *p, unsigned v)
{
	p[0] = (unsigned char)(v >> 8);
	p[1] = (unsigned char)v;
}

/*
 * The reply to Q into OUT (CAP bytes): RCODE, the question (Q's bytes
 * from HEADER to QEND; none when QEND is 0) and, when ADDR is not 0, one
 * A record of it.  Its length, or 0 when it does not fit.
 */
static size_t
reply(const unsigned char *q, size_t qend, unsigned rcode, uint32_t addr, unsigned char *out,
      size_t cap)
{
	size_t qn = qend ? qend - HEADER : 0, len = HEADER + qn + (addr ? 16 : 0);
	unsigned char *p;

	if (len > cap)
		return 0;
	out[0] = q[0];
	out[1] = q[1];
	/* QR, the opcode as asked, AA, RD as asked; RA, the rcode. */
	out[2] = (unsigned char)(0x80u | (q[2] & 0x78u) | 0x04u | (q[2] & 0x01u));
	out[3] = (unsigned char)(0x80u | rcode);
	put16(out + 4, qend ? 1 : 0);
	put16(out + 6, addr ? 1 : 0);
	put16(out + 8, 0);
	put16(out + 10, 0);
	memcpy(out + HEADER, q + HEADER, qn);
	if (!addr)
		return len;
	p = out + HEADER + qn;
	put16(p, 0xc000u | HEADER); /* the name: the question's */
	put16(p + 2, T_A);
	put16(p + 4, C_IN);
	put16(p + 6, FAKEDNS_TTL >> 16);
	put16(p + 8, FAKEDNS_TTL & 0xffffu);
	put16(p + 10, 4);
	put16(p + 12, addr >> 16);
	put16(p + 14, addr & 0xffffu);
	return len;
}

size_t
fakedns_answer(struct fakedns *dns, const unsigned char *q, size_t qlen, unsigned char *out,
	       size_t cap)
{
	char name[NAME_LEN + 1];
	size_t len = 0, qend;
	unsigned qtype, qclass;
	long i;

	if (qlen < HEADER || q[2] & 0x80u)
		return 0;
	if ((q[2] >> 3 & 0x0fu) != 0)
		return reply(q, 0, RC_NOTIMP, 0, out, cap);
	if (q[4] != 0 || q[5] != 1)
		return reply(q, 0, RC_FORMERR, 0, out, cap);
	qend = question(q, qlen, name, &len);
	if (!qend)
		return reply(q, 0, RC_FORMERR, 0, out, cap);
	qtype = (unsigned)q[qend - 4] << 8 | q[qend - 3];
	qclass = (unsigned)q[qend - 2] << 8 | q[qend - 1];
	if (qclass != C_IN)
		return reply(q, qend, RC_REFUSED, 0, out, cap);
	if (!len)
		return reply(q, qend, RC_NXDOMAIN, 0, out, cap);
	/* Only an A query gives an address: the others cost nothing. */
	if (qtype != T_A)
		return reply(q, qend, RC_NOERROR, 0, out, cap);
	i = find(dns, name, len, true);
	if (i == FIND_FULL)
		return reply(q, qend, RC_REFUSED, 0, out, cap);
	if (i < 0)
		return reply(q, qend, RC_SERVFAIL, 0, out, cap);
	return reply(q, qend, RC_NOERROR, FAKEDNS_NET + 1 + (uint32_t)i, out, cap);
}
