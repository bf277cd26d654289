/*
 * sigv4.c - AWS Signature Version 4 for the credential proxy (sigv4.h).
 */
#include "runtime/egress/sigv4.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include "compiler/base/textesc.h"

/* ---- a growing string ----------------------------------------------------------- */

struct sbuf {
	char *s;
	size_t n, cap;
	bool oom;
};

static void
sb_add(struct sbuf *b, const void *p, size_t n)
{
	if (b->oom)
		return;
	if (b->n + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		char *s;

		while (b->n + n + 1 > cap)
			cap *= 2;
		s = realloc(b->s, cap);
		if (!s) {
			b->oom = true;
			return;
		}
		b->s = s;
		b->cap = cap;
	}
	memcpy(b->s + b->n, p, n);
	b->n += n;
	b->s[b->n] = '\0';
}

static void
sb_str(struct sbuf *b, const char *s)
{
	sb_add(b, s, strlen(s));
}

static void
sb_char(struct sbuf *b, char c)
{
	sb_add(b, &c, 1);
}

/* The string, or NULL (and nothing to free) when memory ran out. */
static char *
sb_take(struct sbuf *b)
{
	if (b->oom) {
		free(b->s);
		return NULL;
	}
	if (!b->s)
		sb_add(b, "", 0);
	return b->oom ? NULL : b->s;
}

/* ---- encoding --------------------------------------------------------------------- */

static bool
unreserved(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '_' || c == '.' || c == '~';
}

/* SigV4's UriEncode: every byte but the unreserved (and '/' in a path) as %XX. */
static void
uri_encode(struct sbuf *b, const char *s, size_t len, bool keep_slash)
{
	static const char hex[] = "0123456789ABCDEF";

	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (unreserved(c) || (keep_slash && c == '/')) {
			sb_char(b, (char)c);
		} else {
			char e[3] = {'%', hex[c >> 4], hex[c & 15]};

			sb_add(b, e, 3);
		}
	}
}

/* Percent-decode S/LEN into B ("%zz" and a lone '%' stay as they are). */
static void
pct_decode(struct sbuf *b, const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		int hi, lo;

		if (s[i] == '%' && i + 2 < len && (hi = text_hex_digit((unsigned char)s[i + 1])) >= 0 &&
		    (lo = text_hex_digit((unsigned char)s[i + 2])) >= 0) {
			sb_char(b, (char)(hi << 4 | lo));
			i += 2;
		} else {
			sb_char(b, s[i]);
		}
	}
}

/* Decode then encode once: the canonical form of one path or query component. */
static void
reencode(struct sbuf *b, const char *s, size_t len, bool keep_slash)
{
	struct sbuf d = {0};

	pct_decode(&d, s, len);
	if (d.oom) {
		b->oom = true;
		free(d.s);
		return;
	}
	uri_encode(b, d.s ? d.s : "", d.n, keep_slash);
	free(d.s);
}

/* ---- canonical URI and query ------------------------------------------------------------ */

static void
canonical_uri(struct sbuf *b, const char *service, const char *path, size_t len)
{
	size_t i = 0, start = b->n;
	bool any = false;

	if (!strcmp(service, "s3")) {
		/* S3 keys are taken as they are: no segment is removed, one encoding. */
		if (!len)
			sb_char(b, '/');
		else
			reencode(b, path, len, true);
		return;
	}
	/* Everyone else: dot and empty segments go (as the SDKs do), then the
	 * path as sent is encoded again. */
	sb_char(b, '/');
	while (i < len) {
		size_t e = i;

		while (e < len && path[e] != '/')
			e++;
		if (e - i == 2 && !memcmp(path + i, "..", 2)) {
			/* Drop the last kept segment (never the root). */
			while (b->n > start + 1 && b->s[b->n - 1] != '/')
				b->n--;
			if (b->n > start + 1)
				b->n--;
			b->s[b->n] = '\0';
			any = b->n > start + 1;
		} else if (e > i && !(e - i == 1 && path[i] == '.')) {
			if (any)
				sb_char(b, '/');
			uri_encode(b, path + i, e - i, false);
			any = true;
		}
		i = e + 1;
	}
	if (any && len && path[len - 1] == '/')
		sb_char(b, '/');
}

struct qpair {
	char *name, *value;
};

static int
qpair_cmp(const void *x, const void *y)
{
	const struct qpair *a = x, *b = y;
	int c = strcmp(a->name, b->name);

	return c ? c : strcmp(a->value, b->value);
}

static void
canonical_query(struct sbuf *b, const char *q, size_t len)
{
	struct qpair *v = NULL;
	size_t n = 0, i = 0;

	while (len && i <= len) {
		size_t e = i, eq;
		struct sbuf nb = {0}, vb = {0};
		struct qpair *grown;

		while (e < len && q[e] != '&')
			e++;
		eq = i;
		while (eq < e && q[eq] != '=')
			eq++;
		reencode(&nb, q + i, eq - i, false);
		if (eq < e)
			reencode(&vb, q + eq + 1, e - eq - 1, false);
		grown = realloc(v, (n + 1) * sizeof(*v));
		if (!grown || !(grown[n].name = sb_take(&nb)) || !(grown[n].value = sb_take(&vb))) {
			if (grown) {
				v = grown;
				free(v[n].name);
			}
			b->oom = true;
			break;
		}
		v = grown;
		n++;
		i = e + 1;
	}
	if (n)
		qsort(v, n, sizeof(*v), qpair_cmp);
	for (size_t k = 0; k < n; k++) {
		if (k)
			sb_char(b, '&');
		sb_str(b, v[k].name);
		sb_char(b, '=');
		sb_str(b, v[k].value);
		free(v[k].name);
		free(v[k].value);
	}
	free(v);
}

char *
sigv4_canonical_uri(const char *service, const char *path, size_t len)
{
	struct sbuf b = {0};

	canonical_uri(&b, service, path, len);
	return sb_take(&b);
}

char *
sigv4_canonical_query(const char *query, size_t len)
{
	struct sbuf b = {0};

	canonical_query(&b, query, len);
	return sb_take(&b);
}

/* ---- the agent's Authorization ------------------------------------------------------------- */

static bool
is_token_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       strchr("!#$%&'*+.^_`|~-", c);
}

static bool
is_lower_hex(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

/* "Credential=KEY/DATE/REGION/SERVICE/aws4_request": split from the right. */
static int
parse_credential(const char *s, size_t len, struct sigv4_auth *a, const char **why)
{
	const char *part[5];
	size_t plen[5], end = len;

	for (int k = 4; k > 0; k--) {
		size_t i = end;

		while (i > 0 && s[i - 1] != '/')
			i--;
		if (i == 0) {
			*why = "its Credential is not KEY/DATE/REGION/SERVICE/aws4_request";
			return -1;
		}
		part[k] = s + i;
		plen[k] = end - i;
		end = i - 1;
	}
	part[0] = s;
	plen[0] = end;
	for (int k = 0; k < 5; k++)
		if (!plen[k]) {
			*why = "its Credential has an empty part";
			return -1;
		}
	if (plen[4] != 12 || memcmp(part[4], "aws4_request", 12)) {
		*why = "its Credential scope does not end in aws4_request";
		return -1;
	}
	a->key_id = part[0];
	a->key_id_len = plen[0];
	a->date = part[1];
	a->date_len = plen[1];
	a->region = part[2];
	a->region_len = plen[2];
	a->service = part[3];
	a->service_len = plen[3];
	return 0;
}

int
sigv4_parse_auth(const char *v, size_t len, struct sigv4_auth *a, const char **why)
{
	size_t alg = strlen(SIGV4_ALGORITHM), i;
	bool cred = false, sh = false, sig = false;

	memset(a, 0, sizeof(*a));
	if (len <= alg || memcmp(v, SIGV4_ALGORITHM, alg) || v[alg] != ' ') {
		*why = "it is not AWS4-HMAC-SHA256";
		return -1;
	}
	i = alg;
	while (i < len) {
		size_t s, e, eq;

		while (i < len && (v[i] == ' ' || v[i] == ','))
			i++;
		if (i == len)
			break;
		s = i;
		while (i < len && v[i] != ',')
			i++;
		e = i;
		while (e > s && v[e - 1] == ' ')
			e--;
		eq = s;
		while (eq < e && v[eq] != '=')
			eq++;
		if (eq == e) {
			*why = "it holds a part without '='";
			return -1;
		}
		if (eq - s == 10 && !memcmp(v + s, "Credential", 10) && !cred) {
			if (parse_credential(v + eq + 1, e - eq - 1, a, why) < 0)
				return -1;
			cred = true;
		} else if (eq - s == 13 && !memcmp(v + s, "SignedHeaders", 13) && !sh) {
			a->signed_headers = v + eq + 1;
			a->signed_headers_len = e - eq - 1;
			for (size_t k = 0; k < a->signed_headers_len; k++)
				if (a->signed_headers[k] != ';' &&
				    !is_token_char(a->signed_headers[k])) {
					*why = "its SignedHeaders holds what is not a header name";
					return -1;
				}
			sh = a->signed_headers_len > 0;
		} else if (eq - s == 9 && !memcmp(v + s, "Signature", 9) && !sig) {
			a->signature = v + eq + 1;
			a->signature_len = e - eq - 1;
			if (a->signature_len != 64 || !is_lower_hex(a->signature, 64)) {
				*why = "its Signature is not 64 hex digits";
				return -1;
			}
			sig = true;
		} else {
			*why = "it holds an unknown or repeated part";
			return -1;
		}
	}
	if (!cred || !sh || !sig) {
		*why = "it lacks Credential, SignedHeaders or Signature";
		return -1;
	}
	return 0;
}

static bool
span_is(const char *s, size_t len, const char *want)
{
	return strlen(want) == len && !memcmp(s, want, len);
}

static bool
amz_date_ok(const char *d, size_t len)
{
	if (len != 16 || d[8] != 'T' || d[15] != 'Z')
		return false;
	for (size_t i = 0; i < 15; i++)
		if (i != 8 && (d[i] < '0' || d[i] > '9'))
			return false;
	return true;
}

int
sigv4_check(const struct sigv4_auth *a, const char *key_id, const char *region, const char *service,
	    const char *amz_date, size_t amz_date_len, const char **why)
{
	if (!span_is(a->key_id, a->key_id_len, key_id)) {
		*why = "the request is not signed with this host's AWS_ACCESS_KEY_ID placeholder";
		return -1;
	}
	if (!span_is(a->region, a->region_len, region)) {
		*why = "the signature's region is not the one the policy names";
		return -1;
	}
	if (!span_is(a->service, a->service_len, service)) {
		*why = "the signature's service is not the one the policy names";
		return -1;
	}
	if (!amz_date || !amz_date_ok(amz_date, amz_date_len)) {
		*why = "x-amz-date is missing or not YYYYMMDDTHHMMSSZ";
		return -1;
	}
	if (a->date_len != 8 || memcmp(a->date, amz_date, 8)) {
		*why = "the signature's date is not x-amz-date's";
		return -1;
	}
	return 0;
}

bool
sigv4_query_is_presigned(const char *q, size_t len)
{
	size_t i = 0;

	while (i < len) {
		size_t e = i, eq;
		struct sbuf name = {0};
		bool hit;

		while (e < len && q[e] != '&')
			e++;
		eq = i;
		while (eq < e && q[eq] != '=')
			eq++;
		pct_decode(&name, q + i, eq - i);
		/* Out of memory: say yes, the refusal is the safe answer. */
		hit = name.oom || (name.s && (!strcasecmp(name.s, "X-Amz-Signature") ||
					      !strcasecmp(name.s, "X-Amz-Credential")));
		free(name.s);
		if (hit)
			return true;
		i = e + 1;
	}
	return false;
}

const char *
sigv4_payload_refusal(const char *v, size_t len)
{
	if ((len == 64 && is_lower_hex(v, len)) || span_is(v, len, "UNSIGNED-PAYLOAD") ||
	    span_is(v, len, "STREAMING-UNSIGNED-PAYLOAD-TRAILER"))
		return NULL;
	if (len > 10 && !memcmp(v, "STREAMING-", 10))
		return "x-amz-content-sha256 names a signed stream: each chunk would be signed "
		       "from the agent's signature (send the payload's hash or UNSIGNED-PAYLOAD)";
	return "x-amz-content-sha256 is not a SHA-256 in lower-case hex, UNSIGNED-PAYLOAD or "
	       "STREAMING-UNSIGNED-PAYLOAD-TRAILER";
}

/* ---- the canonical request --------------------------------------------------------------- */

struct hfield {
	char *name; /* lower case, owned */
	const char *value;
	size_t value_len;
};

struct parsed_head {
	const char *method, *target;
	size_t method_len, target_len;
	struct hfield *f;
	size_t n;
};

static void
head_free(struct parsed_head *h)
{
	for (size_t i = 0; i < h->n; i++)
		free(h->f[i].name);
	free(h->f);
}

static int
parse_head(const char *head, size_t len, struct parsed_head *h, const char **why)
{
	const char *p = head, *end = head + len, *eol, *sp;

	memset(h, 0, sizeof(*h));
	eol = memmem(p, len, "\r\n", 2);
	sp = eol ? memchr(p, ' ', (size_t)(eol - p)) : NULL;
	if (!sp) {
		*why = "the request line is malformed";
		return -1;
	}
	h->method = p;
	h->method_len = (size_t)(sp - p);
	h->target = sp + 1;
	sp = memchr(h->target, ' ', (size_t)(eol - h->target));
	if (!sp) {
		*why = "the request line is malformed";
		return -1;
	}
	h->target_len = (size_t)(sp - h->target);
	for (p = eol + 2; p < end; p = eol + 2) {
		const char *colon, *v, *ve;
		struct hfield *grown;

		eol = memmem(p, (size_t)(end - p), "\r\n", 2);
		colon = eol ? memchr(p, ':', (size_t)(eol - p)) : NULL;
		for (const char *c = p; colon && c < colon; c++)
			if (!is_token_char(*c))
				colon = NULL;
		if (!colon || colon == p) {
			*why = "a header line is malformed";
			head_free(h);
			return -1;
		}
		v = colon + 1;
		ve = eol;
		while (v < ve && (*v == ' ' || *v == '\t'))
			v++;
		while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
			ve--;
		grown = realloc(h->f, (h->n + 1) * sizeof(*h->f));
		if (!grown || !(grown[h->n].name = strndup(p, (size_t)(colon - p)))) {
			if (grown)
				h->f = grown;
			*why = "out of memory";
			head_free(h);
			return -1;
		}
		h->f = grown;
		for (char *c = h->f[h->n].name; *c; c++)
			if (*c >= 'A' && *c <= 'Z')
				*c = (char)(*c + 32);
		h->f[h->n].value = v;
		h->f[h->n].value_len = (size_t)(ve - v);
		h->n++;
	}
	return 0;
}

/* The value of the one field NAME, or NULL (*DUP set when there are several). */
static const char *
head_value(const struct parsed_head *h, const char *name, size_t *len, bool *dup)
{
	const char *v = NULL;

	*dup = false;
	for (size_t i = 0; i < h->n; i++)
		if (!strcmp(h->f[i].name, name)) {
			if (v)
				*dup = true;
			v = h->f[i].value;
			*len = h->f[i].value_len;
		}
	return v;
}

/* Is NAME (lower case) in the ';'-list LIST/LEN (any case)? */
static bool
list_has(const char *list, size_t len, const char *name)
{
	size_t n = strlen(name), i = 0;

	while (i <= len) {
		size_t e = i;

		while (e < len && list[e] != ';')
			e++;
		if (e - i == n && !strncasecmp(list + i, name, n))
			return true;
		i = e + 1;
	}
	return false;
}

static int
name_cmp(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

/* The names to sign: the agent's that are sent, host and every x-amz-*; sorted, once each. */
static char **
signed_names(const struct parsed_head *h, const char *agent, size_t agent_len, size_t *n)
{
	char **v = calloc(h->n + 1, sizeof(*v));
	size_t k = 0;

	if (!v)
		return NULL;
	for (size_t i = 0; i < h->n; i++) {
		const char *name = h->f[i].name;
		bool dup = false;

		if (!list_has(agent, agent_len, name) && strcmp(name, "host") &&
		    strncmp(name, "x-amz-", 6))
			continue;
		for (size_t j = 0; j < k && !dup; j++)
			dup = !strcmp(v[j], name);
		if (!dup)
			v[k++] = h->f[i].name;
	}
	qsort(v, k, sizeof(*v), name_cmp);
	*n = k;
	return v;
}

/* Trimall: no white space around, each run inside one space. */
static void
trimall(struct sbuf *b, const char *v, size_t len)
{
	bool space = false, any = false;

	for (size_t i = 0; i < len; i++) {
		if (v[i] == ' ' || v[i] == '\t') {
			space = true;
			continue;
		}
		if (space && any)
			sb_char(b, ' ');
		space = false;
		any = true;
		sb_char(b, v[i]);
	}
}

static char *
build_canonical(const char *service, const struct parsed_head *h, char **names, size_t n_names,
		const char *payload, size_t payload_len, char **signed_out)
{
	struct sbuf b = {0}, s = {0};
	const char *q = memchr(h->target, '?', h->target_len);
	size_t plen = q ? (size_t)(q - h->target) : h->target_len;

	sb_add(&b, h->method, h->method_len);
	sb_char(&b, '\n');
	canonical_uri(&b, service, h->target, plen);
	sb_char(&b, '\n');
	if (q)
		canonical_query(&b, q + 1, h->target_len - plen - 1);
	sb_char(&b, '\n');
	for (size_t i = 0; i < n_names; i++) {
		bool first = true;

		sb_str(&b, names[i]);
		sb_char(&b, ':');
		for (size_t k = 0; k < h->n; k++) {
			if (strcmp(h->f[k].name, names[i]))
				continue;
			if (!first)
				sb_char(&b, ',');
			trimall(&b, h->f[k].value, h->f[k].value_len);
			first = false;
		}
		sb_char(&b, '\n');
		if (i)
			sb_char(&s, ';');
		sb_str(&s, names[i]);
	}
	sb_char(&b, '\n');
	sb_str(&b, s.s ? s.s : "");
	sb_char(&b, '\n');
	sb_add(&b, payload, payload_len);
	*signed_out = sb_take(&s);
	if (!*signed_out) {
		free(sb_take(&b));
		return NULL;
	}
	return sb_take(&b);
}

char *
sigv4_canonical_request(const char *service, const char *head, size_t len, const char *agent_signed,
			size_t agent_signed_len, char **signed_out, const char **why)
{
	struct parsed_head h;
	const char *payload;
	size_t payload_len = 0, n_names = 0;
	char **names, *cr;
	bool dup;

	*signed_out = NULL;
	if (parse_head(head, len, &h, why) < 0)
		return NULL;
	payload = head_value(&h, "x-amz-content-sha256", &payload_len, &dup);
	if (dup) {
		*why = "x-amz-content-sha256 is given twice";
		head_free(&h);
		return NULL;
	}
	if (!payload) {
		payload = SIGV4_EMPTY_SHA256;
		payload_len = strlen(payload);
	}
	names = signed_names(&h, agent_signed, agent_signed_len, &n_names);
	cr = names ? build_canonical(service, &h, names, n_names, payload, payload_len, signed_out)
		   : NULL;
	if (!cr)
		*why = "out of memory";
	free(names);
	head_free(&h);
	return cr;
}

/* ---- signing ---------------------------------------------------------------------------- */

static void
hmac(const void *key, size_t klen, const void *msg, size_t mlen, unsigned char out[32])
{
	unsigned int n = 32;

	HMAC(EVP_sha256(), key, (int)klen, msg, mlen, out, &n);
}

static void
to_hex(const unsigned char *in, size_t n, char *out)
{
	static const char hex[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = hex[in[i] >> 4];
		out[2 * i + 1] = hex[in[i] & 15];
	}
	out[2 * n] = '\0';
}

ssize_t
sigv4_authorization(const struct sigv4_key *k, const char *head, size_t len,
		    const char *agent_signed, size_t agent_signed_len, char *out, size_t cap,
		    const char **why)
{
	struct parsed_head h;
	const char *amz_date;
	size_t date_len = 0, slen = strlen(k->secret);
	unsigned char digest[32], kd[32], kr[32], ks[32], kg[32], sig[32];
	char *signed_names_s = NULL, *cr, *sts, *key, hex[65], sighex[65];
	bool dup;
	int n;

	if (parse_head(head, len, &h, why) < 0)
		return -1;
	amz_date = head_value(&h, "x-amz-date", &date_len, &dup);
	head_free(&h);
	if (!amz_date || dup || !amz_date_ok(amz_date, date_len)) {
		*why = "x-amz-date is missing, repeated or not YYYYMMDDTHHMMSSZ";
		return -1;
	}
	cr = sigv4_canonical_request(k->service, head, len, agent_signed, agent_signed_len,
				     &signed_names_s, why);
	if (!cr)
		return -1;
	SHA256((const unsigned char *)cr, strlen(cr), digest);
	free(cr);
	to_hex(digest, 32, hex);
	n = asprintf(&sts, "%s\n%.16s\n%.8s/%s/%s/aws4_request\n%s", SIGV4_ALGORITHM, amz_date,
		     amz_date, k->region, k->service, hex);
	key = malloc(slen + 5);
	if (n < 0 || !key) {
		if (n >= 0)
			free(sts);
		free(key);
		free(signed_names_s);
		*why = "out of memory";
		return -1;
	}
	memcpy(key, "AWS4", 4);
	memcpy(key + 4, k->secret, slen);
	hmac(key, slen + 4, amz_date, 8, kd);
	hmac(kd, 32, k->region, strlen(k->region), kr);
	hmac(kr, 32, k->service, strlen(k->service), ks);
	hmac(ks, 32, "aws4_request", 12, kg);
	hmac(kg, 32, sts, (size_t)n, sig);
	to_hex(sig, 32, sighex);
	explicit_bzero(key, slen + 4);
	free(key);
	free(sts);
	/* The keys derived from the secret go too. */
	explicit_bzero(kd, sizeof(kd));
	explicit_bzero(kr, sizeof(kr));
	explicit_bzero(ks, sizeof(ks));
	explicit_bzero(kg, sizeof(kg));
	n = snprintf(
	    out, cap, "%s Credential=%s/%.8s/%s/%s/aws4_request, SignedHeaders=%s, Signature=%s",
	    SIGV4_ALGORITHM, k->key_id, amz_date, k->region, k->service, signed_names_s, sighex);
	free(signed_names_s);
	if (n < 0 || (size_t)n >= cap) {
		*why = "the Authorization header would be too long";
		return -1;
	}
	return n;
}
