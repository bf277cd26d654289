/*
 * session.c - the frames between omnibox-run and its proxy (session.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compiler/base/diag.h"
#include "runtime/egress/session.h"

#define SESSION_MAGIC 0x6f627331u /* "obs1" */
#define SESSION_NULL 0xffffffffu
#define KIND_CONFIG 1u
#define KIND_READY 2u
#define KIND_FAILED 3u
#define KIND_SUMMARY 4u

/* ---- building ---------------------------------------------------------------- */

static void
put(struct session_buf *b, const void *p, size_t n)
{
	unsigned char *grown;
	size_t cap;

	if (b->failed)
		return;
	if (n > SESSION_FRAME_MAX - b->len) {
		b->failed = true;
		return;
	}
	if (b->len + n > b->cap) {
		cap = b->cap ? b->cap : 4096;
		while (cap < b->len + n)
			cap *= 2;
		/* Not realloc(): the old bytes (secrets) are wiped, not left behind. */
		grown = malloc(cap);
		if (!grown) {
			b->failed = true;
			return;
		}
		if (b->len)
			memcpy(grown, b->data, b->len);
		if (b->data) {
			explicit_bzero(b->data, b->cap);
			free(b->data);
		}
		b->data = grown;
		b->cap = cap;
	}
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

static void
put_u32(struct session_buf *b, uint32_t v)
{
	put(b, &v, sizeof(v));
}

static void
put_u64(struct session_buf *b, uint64_t v)
{
	put(b, &v, sizeof(v));
}

static void
put_str(struct session_buf *b, const char *s)
{
	size_t n = s ? strlen(s) : 0;

	if (s && n >= SESSION_NULL) {
		b->failed = true;
		return;
	}
	put_u32(b, s ? (uint32_t)n : SESSION_NULL);
	if (s)
		put(b, s, n);
}

static void
put_rule(struct session_buf *b, const struct egress_rule *r)
{
	put_u32(b, r->tcp);
	put_u32(b, r->methods);
	put_str(b, r->host);
	put_u32(b, r->wildcard);
	put_u32(b, r->port);
	put_str(b, r->path);
	put_u32(b, r->path_given);
	put_u32(b, r->loc.line);
	put_u32(b, r->loc.col);
	put_u32(b, r->loc.len);
}

static void
put_cred(struct session_buf *b, const struct proxy_cred *c)
{
	put_str(b, c->host);
	put_u32(b, c->port);
	put_u32(b, (uint32_t)c->scheme);
	put_str(b, c->username);
	put_str(b, c->secret);
	put_str(b, c->placeholder);
	put_str(b, c->header);
	put_u32(b, c->entry);
	put_u32(b, c->refresh);
	put_u32(b, (uint32_t)c->source.kind);
	put_str(b, c->source.path);
	put_u32(b, c->aws != NULL);
	if (c->aws) {
		put_str(b, c->aws->region);
		put_str(b, c->aws->service);
		put_str(b, c->aws->key_id);
		put_str(b, c->aws->key_id_placeholder);
		put_str(b, c->aws->token);
		put_str(b, c->aws->token_placeholder);
	}
}

int
session_encode_config(struct session_buf *b, const struct session_config *c)
{
	const struct proxy_config *pc = &c->pc;

	put_u32(b, SESSION_MAGIC);
	put_u32(b, KIND_CONFIG);
	put_str(b, pc->socket_path);
	put_str(b, pc->ca_bundle_path);
	put_str(b, pc->system_ca_file);
	put_str(b, pc->hosts_file);
	put_str(b, pc->resolv_conf);
	put_u64(b, pc->memory_limit);
	put_u32(b, pc->allow_private);
	put_u32(b, c->flags);
	put_u32(b, (uint32_t)pc->n_rules);
	for (size_t i = 0; i < pc->n_rules; i++)
		put_rule(b, &pc->rules[i]);
	put_u32(b, (uint32_t)pc->n_creds);
	for (size_t i = 0; i < pc->n_creds; i++)
		put_cred(b, &pc->creds[i]);
	return b->failed ? -1 : 0;
}

int
session_encode_status(struct session_buf *b, const char *msg)
{
	put_u32(b, SESSION_MAGIC);
	put_u32(b, msg ? KIND_FAILED : KIND_READY);
	put_str(b, msg);
	return b->failed ? -1 : 0;
}

int
session_encode_summary(struct session_buf *b, const struct session_summary *s)
{
	put_u32(b, SESSION_MAGIC);
	put_u32(b, KIND_SUMMARY);
	put_u64(b, s->private_refusals);
	put_str(b, s->private_first);
	put_u64(b, s->others);
	put_u32(b, (uint32_t)s->n_denials);
	for (size_t i = 0; i < s->n_denials; i++) {
		put_str(b, s->denials[i].request);
		put_str(b, s->denials[i].rule);
		put_u64(b, s->denials[i].count);
	}
	return b->failed ? -1 : 0;
}

void
session_buf_free(struct session_buf *b)
{
	if (b->data) {
		explicit_bzero(b->data, b->cap);
		free(b->data);
	}
	*b = (struct session_buf){0};
}

/* ---- the socket -------------------------------------------------------------- */

static int
write_all(int fd, const void *p, size_t n)
{
	const unsigned char *c = p;

	while (n) {
		ssize_t w = write(fd, c, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

/* N bytes into P: 1, 0 at the end of the stream before any, -1 (EPROTO: cut short). */
static int
read_all(int fd, void *p, size_t n)
{
	unsigned char *c = p;
	size_t got = 0;

	while (got < n) {
		ssize_t r = read(fd, c + got, n - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0) {
			if (!got)
				return 0;
			errno = EPROTO;
			return -1;
		}
		got += (size_t)r;
	}
	return 1;
}

int
session_send(int fd, const struct session_buf *b)
{
	uint32_t n = (uint32_t)b->len;

	if (b->failed || b->len > SESSION_FRAME_MAX) {
		errno = b->failed ? ENOMEM : EMSGSIZE;
		return -1;
	}
	if (write_all(fd, &n, sizeof(n)) < 0 || write_all(fd, b->data, b->len) < 0)
		return -1;
	return 0;
}

int
session_recv(int fd, unsigned char **data, size_t *len)
{
	uint32_t n;
	int r = read_all(fd, &n, sizeof(n));

	*data = NULL;
	*len = 0;
	if (r <= 0)
		return r;
	if (n > SESSION_FRAME_MAX || n < 8) {
		errno = EPROTO;
		return -1;
	}
	*data = malloc(n);
	if (!*data)
		return -1;
	r = read_all(fd, *data, n);
	if (r <= 0) {
		explicit_bzero(*data, n);
		free(*data);
		*data = NULL;
		if (!r)
			errno = EPROTO;
		return -1;
	}
	*len = n;
	return 1;
}

/* ---- reading ----------------------------------------------------------------- */

struct cursor {
	struct arena *a;
	const unsigned char *p, *end;
	bool bad;
};

static uint32_t
get_u32(struct cursor *c)
{
	uint32_t v = 0;

	if (c->bad || (size_t)(c->end - c->p) < sizeof(v)) {
		c->bad = true;
		return 0;
	}
	memcpy(&v, c->p, sizeof(v));
	c->p += sizeof(v);
	return v;
}

static uint64_t
get_u64(struct cursor *c)
{
	uint64_t v = 0;

	if (c->bad || (size_t)(c->end - c->p) < sizeof(v)) {
		c->bad = true;
		return 0;
	}
	memcpy(&v, c->p, sizeof(v));
	c->p += sizeof(v);
	return v;
}

/* A string, copied into the arena; NULL for none (or when malformed: C->bad). */
static const char *
get_str(struct cursor *c)
{
	uint32_t n = get_u32(c);
	const char *s;

	if (c->bad || n == SESSION_NULL)
		return NULL;
	if ((size_t)(c->end - c->p) < n || memchr(c->p, '\0', n)) {
		c->bad = true;
		return NULL;
	}
	s = arena_strndup(c->a, (const char *)c->p, n);
	c->p += n;
	return s;
}

/* A string that must be there. */
static const char *
need_str(struct cursor *c)
{
	const char *s = get_str(c);

	if (!s)
		c->bad = true;
	return s ? s : "";
}

/* The frame's kind, after its magic. */
static uint32_t
get_kind(struct cursor *c)
{
	if (get_u32(c) != SESSION_MAGIC)
		c->bad = true;
	return get_u32(c);
}

static void
get_rule(struct cursor *c, struct egress_rule *r)
{
	r->tcp = get_u32(c) != 0;
	r->methods = get_u32(c);
	r->host = need_str(c);
	r->wildcard = get_u32(c) != 0;
	r->port = get_u32(c);
	r->path = need_str(c);
	r->path_given = get_u32(c) != 0;
	r->loc.line = get_u32(c);
	r->loc.col = get_u32(c);
	r->loc.len = get_u32(c);
	if (r->port > 65535)
		c->bad = true;
}

static void
get_cred(struct cursor *c, struct proxy_cred *d)
{
	d->host = need_str(c);
	d->port = get_u32(c);
	d->scheme = (enum cred_scheme)get_u32(c);
	d->username = get_str(c);
	d->secret = need_str(c);
	d->placeholder = get_str(c);
	d->header = get_str(c);
	d->entry = get_u32(c);
	d->refresh = get_u32(c);
	d->source.kind = (enum cred_source_kind)get_u32(c);
	d->source.path = get_str(c);
	if (get_u32(c)) {
		struct proxy_aws *aws = arena_alloc(c->a, sizeof(*aws));

		aws->region = need_str(c);
		aws->service = need_str(c);
		aws->key_id = need_str(c);
		aws->key_id_placeholder = need_str(c);
		aws->token = get_str(c);
		aws->token_placeholder = get_str(c);
		d->aws = aws;
	}
	if (d->port < 1 || d->port > 65535 || (d->refresh && !d->source.path))
		c->bad = true;
}

/* A count of N items of SIZE bytes each that the frame can hold (each takes at least MIN bytes). */
static size_t
get_count(struct cursor *c, size_t min)
{
	uint32_t n = get_u32(c);

	if (c->bad || (size_t)(c->end - c->p) / min < n) {
		c->bad = true;
		return 0;
	}
	return n;
}

int
session_decode_config(struct arena *a, const unsigned char *data, size_t len,
		      struct session_config *out, char *err, size_t errlen)
{
	struct cursor c = {a, data, data + len, false};
	struct proxy_config *pc = &out->pc;
	struct egress_rule *rules;
	struct proxy_cred *creds;
	size_t n;

	memset(out, 0, sizeof(*out));
	if (get_kind(&c) != KIND_CONFIG)
		c.bad = true;
	pc->socket_path = need_str(&c);
	pc->ca_bundle_path = need_str(&c);
	pc->system_ca_file = get_str(&c);
	pc->hosts_file = get_str(&c);
	pc->resolv_conf = get_str(&c);
	pc->memory_limit = (size_t)get_u64(&c);
	pc->allow_private = get_u32(&c) != 0;
	out->flags = get_u32(&c);
	n = get_count(&c, 10 * sizeof(uint32_t));
	rules = arena_alloc(a, (n ? n : 1) * sizeof(*rules));
	for (size_t i = 0; i < n && !c.bad; i++)
		get_rule(&c, &rules[i]);
	pc->rules = rules;
	pc->n_rules = n;
	n = get_count(&c, 11 * sizeof(uint32_t));
	creds = arena_alloc(a, (n ? n : 1) * sizeof(*creds));
	memset(creds, 0, (n ? n : 1) * sizeof(*creds));
	for (size_t i = 0; i < n && !c.bad; i++)
		get_cred(&c, &creds[i]);
	pc->creds = creds;
	pc->n_creds = c.bad ? 0 : n;
	if (c.bad || c.p != c.end) {
		session_wipe_creds(creds, n);
		return diag_fail(err, errlen, "a malformed configuration from omnibox-run");
	}
	return 0;
}

int
session_decode_status(struct arena *a, const unsigned char *data, size_t len, const char **msg,
		      char *err, size_t errlen)
{
	struct cursor c = {a, data, data + len, false};
	uint32_t kind = get_kind(&c);

	*msg = get_str(&c);
	if (c.bad || c.p != c.end || (kind != KIND_READY && kind != KIND_FAILED) ||
	    (kind == KIND_FAILED) != (*msg != NULL))
		return diag_fail(err, errlen, "a malformed answer from omnibox-proxy");
	return 0;
}

int
session_decode_summary(struct arena *a, const unsigned char *data, size_t len,
		       struct session_summary *s, char *err, size_t errlen)
{
	struct cursor c = {a, data, data + len, false};
	struct proxy_denial *v;
	size_t n;

	memset(s, 0, sizeof(*s));
	if (get_kind(&c) != KIND_SUMMARY)
		c.bad = true;
	s->private_refusals = (unsigned long)get_u64(&c);
	s->private_first = get_str(&c);
	s->others = (unsigned long)get_u64(&c);
	n = get_count(&c, 2 * sizeof(uint32_t) + sizeof(uint64_t));
	if (n > PROXY_DENIALS_MAX)
		c.bad = true;
	v = arena_alloc(a, (n ? n : 1) * sizeof(*v));
	for (size_t i = 0; i < n && !c.bad; i++) {
		snprintf(v[i].request, sizeof(v[i].request), "%s", need_str(&c));
		snprintf(v[i].rule, sizeof(v[i].rule), "%s", need_str(&c));
		v[i].count = (unsigned long)get_u64(&c);
	}
	if (c.bad || c.p != c.end) {
		memset(s, 0, sizeof(*s));
		return diag_fail(err, errlen, "a malformed summary from omnibox-proxy");
	}
	s->denials = v;
	s->n_denials = n;
	return 0;
}

void
session_wipe_creds(const struct proxy_cred *creds, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct proxy_cred *c = &creds[i];

		if (c->secret)
			explicit_bzero((char *)c->secret, strlen(c->secret));
		if (c->aws && c->aws->key_id)
			explicit_bzero((char *)c->aws->key_id, strlen(c->aws->key_id));
		if (c->aws && c->aws->token)
			explicit_bzero((char *)c->aws->token, strlen(c->aws->token));
	}
}
