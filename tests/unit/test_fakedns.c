/*
 * test_fakedns.c - the sandbox's DNS (runtime/egress/fakedns.c): every
 * valid name its own stable address of 127.128.0.0/16 and back, invalid
 * names never one, only A queries giving addresses, a full table refusing
 * new names while keeping the old, a flood kept bounded, the exact bytes
 * of a reply, and malformed or random packets dropped or refused without
 * a crash (run under the sanitizers too).
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/egress/fakedns.h"

#define T_A 1
#define T_TXT 16
#define T_AAAA 28
#define T_ANY 255

static struct fakedns *dns;

static void
setup(void)
{
	dns = fakedns_new();
	cr_assert_not_null(dns);
}

static void
teardown(void)
{
	fakedns_free(dns);
}

TestSuite(fakedns, .init = setup, .fini = teardown, .timeout = 120);

/* A query header: ID, RD, one question. */
static size_t
header(unsigned char *q, unsigned id)
{
	memset(q, 0, 12);
	q[0] = (unsigned char)(id >> 8);
	q[1] = (unsigned char)id;
	q[2] = 0x01; /* RD */
	q[5] = 1;
	return 12;
}

/* The wire form of dotted NAME at Q + OFF (labels split at each dot). */
static size_t
put_name(unsigned char *q, size_t off, const char *name)
{
	while (*name) {
		const char *dot = strchr(name, '.');
		size_t n = dot ? (size_t)(dot - name) : strlen(name);

		q[off++] = (unsigned char)n;
		memcpy(q + off, name, n);
		off += n;
		name += n + (dot ? 1 : 0);
	}
	q[off++] = 0;
	return off;
}

static size_t
put_type_class(unsigned char *q, size_t off, unsigned type, unsigned cls)
{
	q[off++] = (unsigned char)(type >> 8);
	q[off++] = (unsigned char)type;
	q[off++] = (unsigned char)(cls >> 8);
	q[off++] = (unsigned char)cls;
	return off;
}

static size_t
query(unsigned char *q, const char *name, unsigned type)
{
	return put_type_class(q, put_name(q, header(q, 0x1234), name), type, 1);
}

struct answer {
	size_t len;
	unsigned rcode, qdcount, ancount;
	uint32_t addr; /* of the one A record, or 0 */
};

/* fakedns_answer() on exactly QLEN bytes (a copy of its own, so the
 * sanitizers see a read past them), and what the reply says. */
static struct answer
ask(const unsigned char *q, size_t qlen)
{
	unsigned char *copy = malloc(qlen ? qlen : 1), out[FAKEDNS_UDP_MAX];
	struct answer a = {0};

	memcpy(copy, q, qlen);
	a.len = fakedns_answer(dns, copy, qlen, out, sizeof(out));
	free(copy);
	if (a.len == 0)
		return a;
	cr_assert_geq(a.len, 12);
	cr_assert_eq(out[0], q[0], "the ID is copied");
	cr_assert_eq(out[1], q[1]);
	cr_assert(out[2] & 0x80, "QR is set");
	a.rcode = out[3] & 0x0fu;
	a.qdcount = (unsigned)out[4] << 8 | out[5];
	a.ancount = (unsigned)out[6] << 8 | out[7];
	if (a.ancount == 1) {
		const unsigned char *r = out + a.len - 4;

		cr_assert_eq(out[a.len - 6], 0);
		cr_assert_eq(out[a.len - 5], 4, "RDLENGTH 4");
		a.addr = (uint32_t)r[0] << 24 | (uint32_t)r[1] << 16 | (uint32_t)r[2] << 8 | r[3];
	}
	return a;
}

static struct answer
ask_name(const char *name, unsigned type)
{
	unsigned char q[1024];

	return ask(q, query(q, name, type));
}

Test(fakedns, ten_thousand_names_get_ten_thousand_stable_addresses)
{
	enum { N = 10000 };
	char name[64], other[64];

	for (unsigned i = 0; i < N; i++) {
		struct answer a;

		snprintf(name, sizeof(name), "host%u.example.com", i);
		a = ask_name(name, T_A);
		cr_assert_eq(a.rcode, 0, "%s", name);
		cr_assert_eq(a.ancount, 1);
		/* In order from 127.128.0.1: distinct, inside the block, deterministic. */
		cr_assert_eq(a.addr, FAKEDNS_NET + 1 + i, "%s: %08x", name, a.addr);
		cr_assert_eq(a.addr >> 16, 0x7f80u);
	}
	cr_assert_eq(fakedns_count(dns), N);
	for (unsigned i = 0; i < N; i++) {
		const char *back;

		snprintf(name, sizeof(name), "host%u.example.com", i);
		snprintf(other, sizeof(other), "HOST%u.Example.COM.", i);
		cr_assert_eq(ask_name(name, T_A).addr, FAKEDNS_NET + 1 + i);
		cr_assert_eq(ask_name(other, T_A).addr, FAKEDNS_NET + 1 + i, "%s", other);
		cr_assert_eq(fakedns_address(dns, other, strlen(other)), FAKEDNS_NET + 1 + i);
		back = fakedns_name(dns, FAKEDNS_NET + 1 + i);
		cr_assert_not_null(back);
		cr_assert_str_eq(back, name);
	}
	cr_assert_eq(fakedns_count(dns), N, "asking again gives nothing new");
	cr_assert_null(fakedns_name(dns, FAKEDNS_NET));
	cr_assert_null(fakedns_name(dns, FAKEDNS_NET + 1 + N));
	cr_assert_null(fakedns_name(dns, 0x7f000001u));
	cr_assert_null(fakedns_name(dns, 0));
}

Test(fakedns, the_reply_to_an_a_query_is_exact)
{
	/* ID 0xbeef, RD, one question, one additional record (EDNS's OPT). */
	/* clang-format off */
	static const unsigned char q[] = {
	    0xbe, 0xef, 0x01, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
	    7, 'E', 'x', 'a', 'm', 'p', 'l', 'e', 3, 'C', 'o', 'M',
	    0, 0x00, 0x01, 0x00, 0x01,
	    /* OPT: root name, type 41, UDP size 1232, no options */
	    0x00, 0x00, 0x29, 0x04, 0xd0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
	static const unsigned char want[] = {
	    0xbe, 0xef, 0x85, 0x80, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00,
	    7, 'E', 'x', 'a', 'm', 'p', 'l', 'e', 3, 'C', 'o', 'M',
	    0, 0x00, 0x01, 0x00, 0x01,
	    /* the answer: a pointer to the question's name, A, IN, TTL 300, 127.128.0.1 */
	    0xc0, 0x0c, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0x01, 0x2c, 0x00, 0x04,
	    0x7f, 0x80, 0x00, 0x01};
	/* clang-format on */
	unsigned char out[FAKEDNS_UDP_MAX];
	size_t n = fakedns_answer(dns, q, sizeof(q), out, sizeof(out));

	cr_assert_eq(n, sizeof(want));
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(out[i], want[i], "byte %zu: %02x, not %02x", i, out[i], want[i]);
	cr_assert_str_eq(fakedns_name(dns, 0x7f800001u), "example.com");
	/* Without RD, none in the reply. */
	memcpy(out, q, sizeof(q));
	out[2] = 0;
	cr_assert_eq(fakedns_answer(dns, out, sizeof(q), out + 100, sizeof(out) - 100),
		     sizeof(want));
	cr_assert_eq(out[102], 0x84);
	/* A reply that does not fit is not sent. */
	cr_assert_eq(fakedns_answer(dns, q, sizeof(q), out, sizeof(want) - 1), 0);
}

Test(fakedns, invalid_names_get_nxdomain_and_no_address)
{
	static const char *bad[] = {"a_b.example.com",
				    "_dmarc.example.com",
				    "a b.com",
				    "a\rb.com",
				    "a\tb",
				    "caf\xc3\xa9.com",
				    "a*.com",
				    "a/b",
				    "a@b",
				    "\x7f"};
	unsigned char q[1024];
	char label[80], name[320];
	size_t off;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct answer a = ask_name(bad[i], T_A);

		cr_assert_eq(a.rcode, 3, "%s: rcode %u", bad[i], a.rcode);
		cr_assert_eq(a.ancount, 0);
		cr_assert_eq(a.qdcount, 1, "the question is echoed");
		cr_assert_eq(fakedns_address(dns, bad[i], strlen(bad[i])), 0, "%s", bad[i]);
	}
	/* Bytes a dotted string cannot carry: NUL and '.' inside a label. */
	off = header(q, 7);
	memcpy(q + off, "\3a\0b\3com\0", 9);
	cr_assert_eq(ask(q, put_type_class(q, off + 9, T_A, 1)).rcode, 3);
	memcpy(q + off, "\3a.b\3com\0", 9);
	cr_assert_eq(ask(q, put_type_class(q, off + 9, T_A, 1)).rcode, 3);
	/* The root: no name at all. */
	q[off] = 0;
	cr_assert_eq(ask(q, put_type_class(q, off + 1, T_A, 1)).rcode, 3);
	/* 254 characters: labels of 63, 63, 63 and 62. */
	memset(label, 'a', 63);
	label[63] = '\0';
	snprintf(name, sizeof(name), "%s.%s.%s.%.62s", label, label, label, label);
	cr_assert_eq(strlen(name), 254);
	cr_assert_eq(ask_name(name, T_A).rcode, 3);
	cr_assert_eq(fakedns_address(dns, name, strlen(name)), 0);
	/* A label of 64 cannot even be written as one: its length byte is a label type. */
	off = header(q, 8);
	q[off] = 64;
	memset(q + off + 1, 'a', 64);
	q[off + 65] = 0;
	cr_assert_eq(ask(q, put_type_class(q, off + 66, T_A, 1)).rcode, 1);
	memset(label, 'a', 64);
	label[64] = '\0';
	cr_assert_eq(fakedns_address(dns, label, 64), 0);
	/* Dotted names the API refuses. */
	cr_assert_eq(fakedns_address(dns, "a..b", 4), 0);
	cr_assert_eq(fakedns_address(dns, ".a", 2), 0);
	cr_assert_eq(fakedns_address(dns, ".", 1), 0);
	cr_assert_eq(fakedns_address(dns, "", 0), 0);
	cr_assert_eq(fakedns_address(dns, "a.b..", 5), 0, "one trailing dot, not two");
	cr_assert_eq(fakedns_address(dns, "a\0b", 3), 0);
	cr_assert_eq(fakedns_count(dns), 0, "no invalid name has an address");

	/* The limits themselves are valid: a label of 63, a name of 253. */
	cr_assert_eq(fakedns_address(dns, label, 63), FAKEDNS_NET + 1);
	name[253] = '\0';
	cr_assert_eq(ask_name(name, T_A).addr, FAKEDNS_NET + 2);
	name[253] = '.';
	cr_assert_eq(fakedns_address(dns, name, 254), FAKEDNS_NET + 2, "253 and a trailing dot");
	cr_assert_eq(fakedns_address(dns, "x-1.Y-2.", 8), FAKEDNS_NET + 3);
	cr_assert_str_eq(fakedns_name(dns, FAKEDNS_NET + 3), "x-1.y-2");
}

Test(fakedns, only_a_queries_give_addresses)
{
	static const unsigned types[] = {T_AAAA, T_TXT, T_ANY, 5 /* CNAME */, 15 /* MX */, 65};
	char name[64];

	for (unsigned i = 0; i < 1000; i++) {
		struct answer a;

		snprintf(name, sizeof(name), "v6-%u.example.net", i);
		a = ask_name(name, types[i % (sizeof(types) / sizeof(types[0]))]);
		cr_assert_eq(a.rcode, 0, "NODATA: NOERROR...");
		cr_assert_eq(a.ancount, 0, "... and no records");
		cr_assert_eq(a.qdcount, 1);
	}
	cr_assert_eq(fakedns_count(dns), 0);
	cr_assert_eq(ask_name("v6-999.example.net", T_A).addr, FAKEDNS_NET + 1);
	/* A name with an address still has no AAAA. */
	cr_assert_eq(ask_name("v6-999.example.net", T_AAAA).ancount, 0);
	cr_assert_eq(fakedns_count(dns), 1);
}

Test(fakedns, a_full_table_refuses_new_names_and_keeps_the_old)
{
	char name[64];
	struct answer a;

	for (unsigned i = 0; i < FAKEDNS_MAX; i++) {
		snprintf(name, sizeof(name), "n%u.example.org", i);
		cr_assert_eq(fakedns_address(dns, name, strlen(name)), FAKEDNS_NET + 1 + i);
	}
	cr_assert_eq(fakedns_address(dns, "one.more", 8), 0);
	a = ask_name("one.more", T_A);
	cr_assert_eq(a.rcode, 5, "REFUSED, not %u", a.rcode);
	cr_assert_eq(a.ancount, 0);
	cr_assert_eq(fakedns_count(dns), FAKEDNS_MAX);
	cr_assert_null(fakedns_name(dns, FAKEDNS_NET + 1 + FAKEDNS_MAX));
	/* The last address given is still the last name's: none was reused. */
	cr_assert_str_eq(fakedns_name(dns, FAKEDNS_NET + FAKEDNS_MAX), "n32766.example.org");
	cr_assert_eq(ask_name("n0.example.org", T_A).addr, FAKEDNS_NET + 1);
	cr_assert_eq(ask_name("N32766.EXAMPLE.ORG", T_A).addr, FAKEDNS_NET + FAKEDNS_MAX);
	cr_assert_eq(ask_name("n7.example.org", T_AAAA).rcode, 0);
}

static long
rss_kib(void)
{
	char line[256];
	long kib = -1;
	FILE *f = fopen("/proc/self/status", "r");

	cr_assert_not_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

Test(fakedns, a_flood_of_names_stays_bounded)
{
	enum { N = 100000 };
	unsigned char q[512], out[FAKEDNS_UDP_MAX];
	char name[256];
	long before = rss_kib(), after;
	unsigned refused = 0;

	/* Long names (labels of 49): kept without a bound, 100,000 of them
	 * would take 22 MB.  No allocation here but the table's own. */
	memset(name, 'x', 200);
	name[49] = name[99] = name[149] = '.';
	for (unsigned i = 0; i < N; i++) {
		size_t len, n;

		snprintf(name + 200, 56, ".f%u.example.com", i);
		len = query(q, name, T_A);
		n = fakedns_answer(dns, q, len, out, sizeof(out));
		cr_assert_gt(n, 12);
		if ((out[3] & 0x0f) == 5) {
			refused++;
			continue;
		}
		cr_assert_eq(n, len + 16);
		cr_assert_eq(out[n - 2], (i + 1) >> 8 & 0xff);
		cr_assert_eq(out[n - 1], (i + 1) & 0xff);
	}
	after = rss_kib();
	cr_assert_eq(fakedns_count(dns), FAKEDNS_MAX);
	cr_assert_eq(refused, N - FAKEDNS_MAX);
	cr_log_info("RSS %ld KiB before, %ld KiB after %d names", before, after, N);
	cr_assert_lt(after - before, 12 * 1024, "%ld KiB for %u names", after - before,
		     FAKEDNS_MAX);
	snprintf(name + 200, 56, ".f%u.example.com", 0u);
	cr_assert_eq(ask_name(name, T_A).addr, FAKEDNS_NET + 1);
	snprintf(name + 200, 56, ".f%u.example.com", FAKEDNS_MAX - 1);
	cr_assert_eq(ask_name(name, T_A).addr, FAKEDNS_NET + FAKEDNS_MAX);
	snprintf(name + 200, 56, ".f%u.example.com", FAKEDNS_MAX);
	cr_assert_eq(ask_name(name, T_A).rcode, 5);
}

Test(fakedns, malformed_packets_are_dropped_or_refused)
{
	unsigned char q[512];
	size_t len = query(q, "ok.example.com", T_A);
	struct answer a;

	/* Shorter than a header: nothing to answer to. */
	for (size_t n = 0; n < 12; n++)
		cr_assert_eq(ask(q, n).len, 0, "%zu bytes", n);
	/* A response is never answered (no loops between two servers). */
	q[2] |= 0x80;
	cr_assert_eq(ask(q, len).len, 0);
	q[2] &= 0x7f;
	/* Cut anywhere inside the question: FORMERR, header only. */
	for (size_t n = 12; n < len; n++) {
		a = ask(q, n);
		cr_assert_eq(a.rcode, 1, "%zu of %zu bytes: rcode %u", n, len, a.rcode);
		cr_assert_eq(a.len, 12);
		cr_assert_eq(a.qdcount, 0);
	}
	/* No question, or two. */
	q[5] = 0;
	cr_assert_eq(ask(q, len).rcode, 1);
	q[5] = 2;
	cr_assert_eq(ask(q, len).rcode, 1);
	q[4] = 1;
	q[5] = 1;
	cr_assert_eq(ask(q, len).rcode, 1, "257 questions");
	q[4] = 0;
	/* Another opcode (STATUS, UPDATE): NOTIMP. */
	q[2] = 2 << 3;
	a = ask(q, len);
	cr_assert_eq(a.rcode, 4);
	cr_assert_eq(a.len, 12);
	q[2] = 5 << 3;
	cr_assert_eq(ask(q, len).rcode, 4);
	q[2] = 1;
	/* Class CHAOS (version.bind and friends): REFUSED. */
	q[len - 1] = 3;
	a = ask(q, len);
	cr_assert_eq(a.rcode, 5);
	cr_assert_eq(a.ancount, 0);
	q[len - 1] = 1;
	/* A compression pointer in the question, to the header or to itself. */
	q[12] = 0xc0;
	q[13] = 0x00;
	cr_assert_eq(ask(q, put_type_class(q, 14, T_A, 1)).rcode, 1);
	q[13] = 12;
	cr_assert_eq(ask(q, put_type_class(q, 14, T_A, 1)).rcode, 1);
	/* After a label. */
	memcpy(q + 12, "\2ok\xc0\x0c", 5);
	cr_assert_eq(ask(q, put_type_class(q, 17, T_A, 1)).rcode, 1);
	/* A label longer than what is left. */
	memcpy(q + 12, "\x3fok", 3);
	cr_assert_eq(ask(q, 15).rcode, 1);
	cr_assert_eq(fakedns_count(dns), 0, "none of them gave an address");
	/* And the well-formed one still works. */
	len = query(q, "ok.example.com", T_A);
	cr_assert_eq(ask(q, len).addr, FAKEDNS_NET + 1);
}

Test(fakedns, random_packets_never_crash_it)
{
	unsigned char q[600], out[FAKEDNS_UDP_MAX];
	unsigned seed = 12345;

	for (unsigned round = 0; round < 200000; round++) {
		size_t len, n, cap;

		seed = seed * 1103515245u + 12345u;
		len = (seed >> 8) % sizeof(q);
		for (size_t i = 0; i < len; i++) {
			seed = seed * 1103515245u + 12345u;
			q[i] = (unsigned char)(seed >> 16);
			/* Mostly short labels, so some questions parse to the end. */
			if (i >= 12 && (seed & 0x300) == 0)
				q[i] = (unsigned char)((seed >> 10) % 8);
		}
		if (len >= 6 && round % 2) {
			q[2] &= 0x07; /* a query */
			q[4] = 0;
			q[5] = 1;
		}
		/* Sometimes a valid query cut short or with a tail of garbage. */
		if (round % 7 == 0) {
			size_t full = query(q, "rnd.example.com", round % 3 ? T_A : T_AAAA);

			len = (seed >> 4) % (full + 40);
		}
		cap = round % 5 ? sizeof(out) : (seed >> 20) % 40;
		{
			unsigned char *copy = malloc(len ? len : 1), *o = malloc(cap ? cap : 1);

			memcpy(copy, q, len);
			n = fakedns_answer(dns, copy, len, o, cap);
			cr_assert_leq(n, cap);
			if (n) {
				cr_assert_geq(n, 12);
				cr_assert(o[2] & 0x80);
				cr_assert_eq(memcmp(o, copy, 2), 0);
			}
			free(copy);
			free(o);
		}
	}
	for (size_t i = 0; i < fakedns_count(dns); i++)
		cr_assert_not_null(fakedns_name(dns, FAKEDNS_NET + 1 + (uint32_t)i));
}
