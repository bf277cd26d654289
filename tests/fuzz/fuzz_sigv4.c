/*
 * fuzz_sigv4.c - libFuzzer target for the SigV4 re-signing (runtime/egress/sigv4.c).
 *
 * Byte 0 picks the service (s3 or another: their URI rules differ); the
 * rest is split at the first NUL into an Authorization value and a head.
 * The parser must only ever point inside what it was given; the canonical
 * forms must be fixed points for S3 (encoding a canonical path again
 * changes nothing) and hold no byte outside what SigV4 allows; a head that
 * is signed must give the same signature twice, and one that names its
 * signed headers in another order or case the same canonical request.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/egress/sigv4.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check(bool ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "invariant broken: %s\n", what);
		abort();
	}
}

static bool
within(const char *p, size_t n, const char *buf, size_t len)
{
	return !p || (p >= buf && p + n <= buf + len);
}

static bool
canonical_chars(const char *s, bool slash)
{
	for (; *s; s++) {
		char c = *s;

		if (c == '%') {
			check(s[1] && s[2], "a cut %XX");
			check(strchr("0123456789ABCDEF", s[1]) && strchr("0123456789ABCDEF", s[2]),
			      "lower-case or bad hex after %");
			s += 2;
		} else if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
			     (c >= '0' && c <= '9') || strchr("-_.~", c) || (slash && c == '/') ||
			     (!slash && (c == '=' || c == '&')))) {
			return false;
		}
	}
	return true;
}

static void
check_auth(const char *v, size_t len)
{
	struct sigv4_auth a;
	const char *why = NULL;

	if (sigv4_parse_auth(v, len, &a, &why) < 0) {
		check(why != NULL, "a refusal without a reason");
		return;
	}
	check(within(a.key_id, a.key_id_len, v, len) && within(a.date, a.date_len, v, len) &&
		  within(a.region, a.region_len, v, len) &&
		  within(a.service, a.service_len, v, len) &&
		  within(a.signed_headers, a.signed_headers_len, v, len) &&
		  within(a.signature, a.signature_len, v, len),
	      "a part outside the value");
	check(a.key_id_len && a.signed_headers_len && a.signature_len == 64, "empty parts");
}

static void
check_head(const char *service, const char *head, size_t len)
{
	struct sigv4_key k = {"AKIDFUZZ", "fuzz/secret", "eu-west-1", service};
	char out1[SIGV4_AUTH_MAX], out2[SIGV4_AUTH_MAX], *names = NULL, *names2 = NULL, *cr, *cr2;
	const char *why = NULL;
	ssize_t n1, n2;

	cr = sigv4_canonical_request(service, head, len, "host;X-Amz-Date;a", 17, &names, &why);
	cr2 = sigv4_canonical_request(service, head, len, "A;x-amz-date;HOST", 17, &names2, &why);
	check(!cr == !cr2, "the order of SignedHeaders changed the outcome");
	if (cr) {
		check(!strcmp(cr, cr2) && !strcmp(names, names2),
		      "the order of SignedHeaders matters");
		check(!strchr(names, ' ') && (!*names || names[0] != ';'), "signed names");
	}
	free(cr);
	free(cr2);
	free(names);
	free(names2);
	n1 = sigv4_authorization(&k, head, len, "host", 4, out1, sizeof(out1), &why);
	n2 = sigv4_authorization(&k, head, len, "host", 4, out2, sizeof(out2), &why);
	check(n1 == n2 && (n1 < 0 || !strcmp(out1, out2)), "not deterministic");
	check(n1 < 0 || !strncmp(out1, "AWS4-HMAC-SHA256 Credential=AKIDFUZZ/", 37), "the output");
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *service;
	const char *in = (const char *)data + 1, *nul;
	size_t len;
	char *uri, *again, *q;

	if (size < 1)
		return 0;
	service = data[0] & 1 ? "s3" : "execute-api";
	len = size - 1;
	nul = memchr(in, '\0', len);
	check_auth(in, nul ? (size_t)(nul - in) : len);
	uri = sigv4_canonical_uri(service, in, nul ? (size_t)(nul - in) : len);
	if (uri) {
		/* Paths the proxy sends start with '/' (or are empty). */
		check(uri[0] == '/' || (in[0] != '/' && in != nul && len),
		      "a canonical URI starts with '/'");
		if (data[0] & 1) {
			check(canonical_chars(uri, true), "a byte S3 would encode");
			again = sigv4_canonical_uri(service, uri, strlen(uri));
			check(!again || !strcmp(again, uri),
			      "S3's canonical URI is no fixed point");
			free(again);
		}
		free(uri);
	}
	q = sigv4_canonical_query(in, nul ? (size_t)(nul - in) : len);
	if (q) {
		check(canonical_chars(q, false), "a byte the query would encode");
		free(q);
	}
	(void)sigv4_query_is_presigned(in, len);
	(void)sigv4_payload_refusal(in, len);
	if (nul)
		check_head(service, nul + 1, len - (size_t)(nul - in) - 1);
	return 0;
}
