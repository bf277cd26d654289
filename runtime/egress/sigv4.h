/*
 * sigv4.h - AWS Signature Version 4, as the credential proxy re-signs.
 *
 * The sandbox holds placeholder AWS keys.  Its SDK signs each request
 * with them; the proxy checks what the agent signed (sigv4_parse_auth(),
 * sigv4_check()), writes the request as it goes upstream, and signs that
 * head again with the real keys (sigv4_authorization()).  The body is
 * never read: its hash is the agent's x-amz-content-sha256.
 *
 * Canonical request (the SigV4 documentation's rules):
 *
 *   - URI: for s3, each byte of the percent-decoded path encoded once
 *     (unreserved A-Z a-z 0-9 - _ . ~ and '/' kept, the rest %XX); for
 *     every other service, empty and dot segments removed and the path as
 *     sent encoded again ('%' becomes %25: the "double encoding").
 *   - Query: each name and value percent-decoded and encoded as above,
 *     "name=value" pairs sorted by name, then value; '+' is a literal plus.
 *   - Headers: the signed ones, lower-cased, values trimmed with runs of
 *     white space made one space, repeated fields joined with ','.
 */
#ifndef OMNIBOX_SIGV4_H
#define OMNIBOX_SIGV4_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define SIGV4_ALGORITHM "AWS4-HMAC-SHA256"
#define SIGV4_EMPTY_SHA256 "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
/* The longest Authorization value sigv4_authorization() writes. */
#define SIGV4_AUTH_MAX 8192

/* The parts of "AWS4-HMAC-SHA256 Credential=K/D/R/S/aws4_request, SignedHeaders=.., Signature=..".
 */
struct sigv4_auth {
	const char *key_id, *date, *region, *service, *signed_headers, *signature;
	size_t key_id_len, date_len, region_len, service_len, signed_headers_len, signature_len;
};

/* Parse an Authorization value.  0, or -1 with a static reason in *WHY. */
int sigv4_parse_auth(const char *v, size_t len, struct sigv4_auth *out, const char **why);

/*
 * What the proxy requires of a parsed Authorization before re-signing:
 * the placeholder key id KEY_ID, REGION and SERVICE in the scope, and a
 * scope date that is AMZ_DATE's (YYYYMMDDTHHMMSSZ).  0, or -1 with *WHY.
 */
int sigv4_check(const struct sigv4_auth *a, const char *key_id, const char *region,
		const char *service, const char *amz_date, size_t amz_date_len, const char **why);

/* Does the query QUERY/LEN (after '?') name X-Amz-Signature or X-Amz-Credential (decoded, any
 * case)? */
bool sigv4_query_is_presigned(const char *query, size_t len);

/*
 * An x-amz-content-sha256 value the proxy can sign without reading the
 * body: 64 lower-case hex digits, UNSIGNED-PAYLOAD or
 * STREAMING-UNSIGNED-PAYLOAD-TRAILER.  A signed stream
 * (STREAMING-AWS4-...: each chunk signed from the agent's signature) is
 * not.  NULL when it is fine, else why not.
 */
const char *sigv4_payload_refusal(const char *v, size_t len);

/* The real keys and the scope. */
struct sigv4_key {
	const char *key_id, *secret, *region, *service;
};

/*
 * The canonical request of HEAD/LEN: the request line ("METHOD TARGET
 * HTTP/1.1") and the header lines as sent, each ending in CRLF, without
 * the blank line.  The signed headers are those of AGENT_SIGNED (the
 * agent's SignedHeaders, ';'-separated) that HEAD holds, with host and
 * every x-amz-* field HEAD holds.  The payload hash is HEAD's
 * x-amz-content-sha256, else the hash of an empty body.  Returns a
 * malloc'd NUL-terminated string (and the signed names in *SIGNED,
 * malloc'd), or NULL with *WHY.
 */
char *sigv4_canonical_request(const char *service, const char *head, size_t len,
			      const char *agent_signed, size_t agent_signed_len, char **signed_out,
			      const char **why);

/*
 * The Authorization value that signs HEAD/LEN (as above) with K, dated by
 * HEAD's x-amz-date.  Writes it NUL-terminated to OUT (CAP bytes) and
 * returns its length, or -1 with *WHY.
 */
ssize_t sigv4_authorization(const struct sigv4_key *k, const char *head, size_t len,
			    const char *agent_signed, size_t agent_signed_len, char *out,
			    size_t cap, const char **why);

/* For tests: the canonical URI and query of one target (NUL-terminated, malloc'd). */
char *sigv4_canonical_uri(const char *service, const char *path, size_t len);
char *sigv4_canonical_query(const char *query, size_t len);

#endif
