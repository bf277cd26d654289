/*
 * proxy_request.c - the agent's requests and the proxy's decisions: the
 * answers the proxy gives itself, destinations (resolved and checked),
 * request heads read and parsed, matched against the rules, credentials
 * applied, and the head the upstream gets.
 */
#include "runtime/egress/proxy_int.h"

/* ---- answers from the proxy itself ------------------------------------------------- */

static const char *
status_text(unsigned status)
{
	switch (status) {
	case 200:
		return "OK";
	case 400:
		return "Bad Request";
	case 403:
		return "Forbidden";
	case 431:
		return "Request Header Fields Too Large";
	case 501:
		return "Not Implemented";
	case 502:
		return "Bad Gateway";
	case 504:
		return "Gateway Timeout";
	case 505:
		return "HTTP Version Not Supported";
	default:
		return "Error";
	}
}

static bool
request_has_body(const struct conn *c)
{
	const struct http_head *h = c->req ? &c->req->head : NULL;

	return h && (h->chunked || (h->has_length && h->content_length > 0));
}

/*
 * Answer the current request with STATUS and a plain-text BODY.  The
 * connection stays open only when asked and when nothing of the request
 * is left unread (a body the proxy did not read would be taken for the
 * next request).
 */
void
conn_reply(struct conn *c, unsigned status, const char *kind, const char *body, bool keep)
{
	struct evbuffer *out = c->p->stage;
	size_t len = strlen(body);

	if (status >= 400)
		c->p->stats.denied++;
	if (c->transparent && !c->cli_tls && !c->pinned) {
		conn_kill(c); /* nothing the client would read as an answer */
		return;
	}
	keep = keep && c->req && c->rq == RQ_HEAD && !request_has_body(c) && !c->req_close &&
	       !c->closing;
	/* The refused request's head is consumed; its body, if any, is not (so: close). */
	if (c->req && c->rq == RQ_HEAD && c->req->head.length)
		evbuffer_drain(bufferevent_get_input(c->cli), c->req->head.length);
	evbuffer_add_printf(out,
			    "HTTP/1.1 %u %s\r\n"
			    "Content-Type: text/plain; charset=utf-8\r\n"
			    "%s%s%s"
			    "Content-Length: %zu\r\n"
			    "%s"
			    "\r\n",
			    status, status_text(status), kind ? "X-Omnibox-Error: " : "",
			    kind ? kind : "", kind ? "\r\n" : "", len,
			    keep ? "" : "Connection: close\r\n");
	if (!c->req_head)
		evbuffer_add(out, body, len);
	evbuffer_add_buffer(bufferevent_get_output(c->cli), out);
	if (!keep) {
		conn_finish(c);
		return;
	}
	c->rs = RS_DONE;
	c->rq = RQ_WAIT;
	request_done(c);
}

/* Count a refusal for the summary omnibox-run prints: the request and a rule that would allow it. */
void
note_denial(struct proxy *p, const char *request, const char *rule)
{
	for (size_t i = 0; i < p->n_denials; i++)
		if (!strcmp(p->denials[i].rule, rule)) {
			p->denials[i].count++;
			return;
		}
	if (p->n_denials == PROXY_DENIALS_MAX) {
		p->denials_other++;
		return;
	}
	/* Long ones cut: the summary is for reading. */
	snprintf(p->denials[p->n_denials].request, sizeof(p->denials[0].request), "%.*s",
		 (int)sizeof(p->denials[0].request) - 1, request);
	snprintf(p->denials[p->n_denials].rule, sizeof(p->denials[0].rule), "%.*s",
		 (int)sizeof(p->denials[0].rule) - 1, rule);
	p->denials[p->n_denials++].count = 1;
}

size_t
proxy_denials(const struct proxy *p, const struct proxy_denial **out, unsigned long *others)
{
	*out = p->denials;
	*others = p->denials_other;
	return p->n_denials;
}

unsigned long
proxy_private_refusals(const struct proxy *p, const char **first)
{
	*first = p->private_refused ? p->private_first : NULL;
	return p->private_refused;
}

/* 403 for a request no rule allows, naming a rule that would. */
static void
deny_request(struct conn *c, const char *method, size_t mlen, const char *host, const char *norm)
{
	char m[64], body[PROXY_TARGET_MAX + 1024], path[PROXY_TARGET_MAX];
	const char *q = strchr(norm, '?');
	size_t plen = q ? (size_t)(q - norm) : strlen(norm);

	esc(m, sizeof(m), method, mlen);
	for (char *s = m; *s; s++)
		if (*s >= 'a' && *s <= 'z')
			*s = (char)(*s - 32);
	esc(path, sizeof(path), norm, plen);
	plog(c->p, "c%lu deny %s: no rule matches", c->id, c->log_url);
	/* The suggestion names the port only where a rule must; the query is
	 * never part of a rule. */
	{
		char rule[PROXY_TARGET_MAX + 400];

		if (c->port != (c->cli_tls ? EGRESS_PORT_TLS : EGRESS_PORT_PLAIN))
			snprintf(rule, sizeof(rule), "%s %s:%u%s", m, host, c->port, path);
		else
			snprintf(rule, sizeof(rule), "%s %s%s", m, host, path);
		note_denial(c->p, c->log_url ? c->log_url : rule, rule);
		snprintf(body, sizeof(body),
			 "omnibox: %s is not allowed by the egress policy (no rule matches).\n"
			 "A rule that would allow it:\n"
			 "  %s\n",
			 c->log_url, rule);
	}
	conn_reply(c, 403, "blocked-by-policy", body, true);
}

/* ---- destinations ------------------------------------------------------------------- */

static void
dns_cb(int err, struct evutil_addrinfo *res, void *arg)
{
	struct conn *c = arg;

	/* After evdns_getaddrinfo_cancel() the connection may be gone. */
	if (err == EVUTIL_EAI_CANCEL) {
		if (res)
			evutil_freeaddrinfo(res);
		return;
	}
	/* This may run inside evdns_getaddrinfo() itself (hosts file, numeric
	 * host): finish from the loop, never from under the caller. */
	c->dns = NULL;
	c->dns_err = err;
	c->dns_res = res;
	c->dns_done = true;
	event_active(c->later, EV_TIMEOUT, 0);
}

void
dest_refuse(struct conn *c, const char *what, const char *why)
{
	char body[1024], h[300];

	esc(h, sizeof(h), c->host, strlen(c->host));
	plog(c->p, "c%lu blocked-destination %s: %s", c->id, what, why);
	snprintf(body, sizeof(body),
		 "omnibox: %s is refused: %s.\n"
		 "Private, loopback, link-local, metadata and other special-purpose addresses "
		 "are refused\nunless the policy sets egress_allow_private_destinations: true.\n",
		 what, why);
	conn_reply(c, 403, "blocked-destination", body, c->after == AFTER_FORWARD);
}

/* Check every address; keep them all (any may be connected to) or refuse. */
static bool
dest_check(struct conn *c, const char *what)
{
	for (size_t i = 0; i < c->n_addrs; i++) {
		const struct sockaddr *sa = (const struct sockaddr *)&c->addrs[i];
		const char *why = dest_blocked_reason(sa);

		if (why && !c->p->allow_private) {
			char addr[INET6_ADDRSTRLEN], text[512], h[300];

			dest_format(sa, addr, sizeof(addr));
			snprintf(text, sizeof(text), "%s resolves to %s, in %s",
				 esc(h, sizeof(h), c->host, strlen(c->host)), addr, why);
			if (!c->p->private_refused++)
				snprintf(c->p->private_first, sizeof(c->p->private_first),
					 "%.200s: %.300s", what, text);
			dest_refuse(c, what, text);
			return false;
		}
	}
	return true;
}

const char *
dest_what(struct conn *c, char *buf, size_t cap)
{
	if (c->after == AFTER_TUNNEL || c->after == AFTER_RAW)
		snprintf(buf, cap, "CONNECT %s:%u", c->host, c->port);
	else
		snprintf(buf, cap, "%s", c->log_url);
	return buf;
}

void
dns_finish(struct conn *c)
{
	struct evutil_addrinfo *res = c->dns_res;
	char what[PROXY_TARGET_MAX + 64], body[1024];

	c->dns_res = NULL;
	dest_what(c, what, sizeof(what));
	if (c->dns_err || !res) {
		/* Fail closed: no answer is never "try the name some other way". */
		plog(c->p, "c%lu dns-failure %s: %s", c->id, what, evutil_gai_strerror(c->dns_err));
		snprintf(body, sizeof(body), "omnibox: cannot resolve %s: %s\n", c->host,
			 evutil_gai_strerror(c->dns_err));
		if (res)
			evutil_freeaddrinfo(res);
		/* Refused like a blocked destination: no other way to the name. */
		conn_reply(c, 403, "blocked-destination", body, c->after == AFTER_FORWARD);
		return;
	}
	free(c->addrs);
	c->n_addrs = 0;
	for (struct evutil_addrinfo *ai = res; ai && c->n_addrs < PROXY_MAX_ADDRS; ai = ai->ai_next)
		c->n_addrs++;
	c->addrs = calloc(c->n_addrs ? c->n_addrs : 1, sizeof(*c->addrs));
	c->n_addrs = 0;
	for (struct evutil_addrinfo *ai = res; ai && c->addrs && c->n_addrs < PROXY_MAX_ADDRS;
	     ai = ai->ai_next) {
		if ((ai->ai_family != AF_INET && ai->ai_family != AF_INET6) ||
		    ai->ai_addrlen > sizeof(*c->addrs))
			continue;
		memcpy(&c->addrs[c->n_addrs], ai->ai_addr, ai->ai_addrlen);
		if (ai->ai_family == AF_INET)
			((struct sockaddr_in *)&c->addrs[c->n_addrs])->sin_port = htons(c->port);
		else
			((struct sockaddr_in6 *)&c->addrs[c->n_addrs])->sin6_port = htons(c->port);
		c->n_addrs++;
	}
	evutil_freeaddrinfo(res);
	if (c->n_addrs == 0) {
		plog(c->p, "c%lu dns-failure %s: no address", c->id, what);
		snprintf(body, sizeof(body), "omnibox: %s has no address\n", c->host);
		conn_reply(c, 403, "blocked-destination", body, c->after == AFTER_FORWARD);
		return;
	}
	if (dest_check(c, what))
		dest_ready(c);
}

/* Resolve c->host once; dest_ready() runs when every address has passed. */
void
dest_resolve(struct conn *c, enum after_dns after)
{
	struct evutil_addrinfo hints;
	struct in_addr v4;
	const char *why;
	char what[PROXY_TARGET_MAX + 64];

	c->after = after;
	c->rq = RQ_RESOLVE;
	c->next_addr = 0;
	conn_update_io(c);
	if (dest_classify_host(c->host, strlen(c->host), &v4, &why) == DEST_HOST_IPV4) {
		struct sockaddr_in *sin;

		free(c->addrs);
		c->addrs = calloc(1, sizeof(*c->addrs));
		if (!c->addrs) {
			conn_kill(c);
			return;
		}
		sin = (struct sockaddr_in *)c->addrs;
		sin->sin_family = AF_INET;
		sin->sin_addr = v4;
		sin->sin_port = htons(c->port);
		c->n_addrs = 1;
		if (dest_check(c, dest_what(c, what, sizeof(what))))
			dest_ready(c);
		return;
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_protocol = IPPROTO_TCP;
	c->p->stats.dns_lookups++;
	c->dns = evdns_getaddrinfo(c->p->dns, c->host, NULL, &hints, dns_cb, c);
	if (c->dns_done)
		c->dns = NULL; /* answered already; later_cb finishes */
}

/* ---- reading requests ------------------------------------------------------------- */

static void handle_request(struct conn *c, const char *buf);

/* Does BUF begin as a request line does: a method in capitals, then a space? */
static bool
starts_like_http(const char *buf, size_t len)
{
	size_t i = 0;

	while (i < len && i < 32 && buf[i] >= 'A' && buf[i] <= 'Z')
		i++;
	return i > 0 && i < len && buf[i] == ' ';
}

void
conn_read_head(struct conn *c)
{
	while (!c->dead && !c->closing && c->rq == RQ_HEAD) {
		struct evbuffer *in = bufferevent_get_input(c->cli);
		size_t len = evbuffer_get_length(in), look;
		const char *buf;
		enum http_result r;

		if (len == 0) {
			if (c->cli_eof)
				conn_finish(c);
			return;
		}
		if (!c->req) {
			c->req = mem_alloc(sizeof(*c->req));
			if (!c->req) {
				conn_kill(c);
				return;
			}
			http_head_begin(c->req, false);
			/* Kept alive: the head that begins now is due in full soon. */
			if (c->keepalive)
				conn_park(c, PROXY_HEAD_TIMEOUT);
			c->keepalive = false;
		}
		look = len < HTTP_HEAD_MAX ? len : HTTP_HEAD_MAX;
		head_account(c, look);
		if (c->dead)
			return;
		buf = (const char *)evbuffer_pullup(in, (ev_ssize_t)look);
		r = http_parse_head(c->req, buf, look);
		if (r == HTTP_MORE) {
			if (c->cli_eof)
				conn_kill(c);
			return;
		}
		/* Bytes that never began a request (ssh, a database) call for a
		 * tcp rule; a malformed request does not. */
		if (r == HTTP_ERROR && c->pinned && !c->pinned_seen && !starts_like_http(buf, look))
			refuse_not_tls(c, c->req->error);
		if (r == HTTP_ERROR) {
			char body[256];
			const char *kind = c->req->status == 431   ? "headers-too-large"
					   : c->req->status == 505 ? "version-not-supported"
								   : "bad-request";

			plog(c->p, "c%lu %s: %s", c->id, kind, c->req->error);
			snprintf(body, sizeof(body), "omnibox: bad request: %s\n", c->req->error);
			c->req_close = true;
			conn_reply(c, c->req->status, kind, body, false);
			return;
		}
		handle_request(c, buf);
	}
}

static bool
field_named_in_connection(const struct http_head *h, const char *buf, const char *name, size_t len)
{
	char want[128];

	if (len >= sizeof(want))
		return false;
	memcpy(want, name, len);
	want[len] = '\0';
	for (size_t i = 0; i < h->n_fields; i++)
		if (http_name_is(http_span_ptr(buf, h->fields[i].name), h->fields[i].name.len,
				 "connection") &&
		    http_list_has(http_span_ptr(buf, h->fields[i].value), h->fields[i].value.len,
				  want))
			return true;
	return false;
}

/* Hop-by-hop fields (RFC 9110 7.6.1) and the ones the proxy writes itself. */
bool
field_dropped(const struct http_head *h, const char *buf, size_t i, bool keep_upgrade)
{
	static const char *const names[] = {
	    "connection", "keep-alive",	  "proxy-connection",  "proxy-authorization",
	    "te",	  "trailer",	  "transfer-encoding", "content-length",
	    "host",	  "max-forwards", "authorization",     NULL,
	};
	const char *name = http_span_ptr(buf, h->fields[i].name);
	size_t len = h->fields[i].name.len;

	for (size_t k = 0; names[k]; k++)
		if (http_name_is(name, len, names[k]))
			return true;
	if (http_name_is(name, len, "upgrade"))
		return !keep_upgrade;
	return field_named_in_connection(h, buf, name, len);
}

static const struct proxy_cred *
cred_for_host(struct proxy *p, const char *host, unsigned port)
{
	for (size_t i = 0; i < p->n_creds; i++)
		if (!strcmp(p->creds[i].host, host) && p->creds[i].port == port)
			return &p->creds[i];
	return NULL;
}

void
lower(char *s)
{
	for (; *s; s++)
		if (*s >= 'A' && *s <= 'Z')
			*s = (char)(*s + 32);
}

static void
refuse(struct conn *c, unsigned status, const char *kind, const char *what, bool keep)
{
	char body[PROXY_TARGET_MAX + 512];

	plog(c->p, "c%lu %s %s: %s", c->id, kind, c->log_url ? c->log_url : "request", what);
	snprintf(body, sizeof(body), "omnibox: %s%s%s.\n", c->log_url ? c->log_url : "",
		 c->log_url ? " is refused: " : "", what);
	conn_reply(c, status, kind, body, keep);
}

void
bad_request(struct conn *c, const char *what)
{
	c->req_close = true;
	refuse(c, 400, "bad-request", what, false);
}

/* TRACE or OPTIONS with Max-Forwards: 0 ends here (RFC 9110 7.6.2). */
static void
answer_max_forwards(struct conn *c, const char *buf, bool trace)
{
	struct evbuffer *out = c->p->stage;
	size_t len = c->req->head.length;

	if (request_has_body(c))
		c->req_close = true;
	plog(c->p, "c%lu answered %s (Max-Forwards: 0)", c->id, c->log_url);
	if (trace) {
		/* The echo is of what the agent sent: it never holds a secret. */
		evbuffer_add_printf(out,
				    "HTTP/1.1 200 OK\r\nContent-Type: message/http\r\n"
				    "Content-Length: %zu\r\n%s\r\n",
				    len, c->req_close ? "Connection: close\r\n" : "");
		evbuffer_add(out, buf, len);
	} else {
		evbuffer_add_printf(out,
				    "HTTP/1.1 200 OK\r\nAllow: GET, HEAD, POST, PUT, DELETE, "
				    "PATCH, OPTIONS, TRACE\r\nContent-Length: 0\r\n%s\r\n",
				    c->req_close ? "Connection: close\r\n" : "");
	}
	evbuffer_add_buffer(bufferevent_get_output(c->cli), out);
	evbuffer_drain(bufferevent_get_input(c->cli), len);
	if (c->req_close) {
		conn_finish(c);
		return;
	}
	c->rs = RS_DONE;
	c->rq = RQ_WAIT;
	request_done(c);
}

static void
body_init(struct body *b, const struct http_head *h)
{
	memset(b, 0, sizeof(*b));
	if (h->chunked) {
		b->mode = BODY_CHUNKED;
		b->out_chunked = true;
		http_chunked_init(&b->ch);
	} else if (h->has_length && h->content_length > 0) {
		b->mode = BODY_LENGTH;
		b->left = h->content_length;
	} else {
		b->mode = BODY_NONE;
		b->done = true;
	}
}

/* Where a credential's secret goes, and what the agent sent there. */
struct cred_out {
	const char *name;  /* the header: "Authorization", or the credential's own */
	const char *value; /* what the upstream gets in it, or NULL: nothing added */
	size_t len;
	bool swapped; /* VALUE is a copy that holds the secret (wiped after use) */
	bool secret;  /* VALUE holds the secret (aws_sigv4: the request is signed again) */
	/* aws_sigv4: the binding, and the names the agent signed (in the head's buffer) */
	const struct proxy_cred *sigv4;
	const char *sigv4_signed;
	size_t sigv4_signed_len;
};

/* An https_bearer credential named its header: the placeholder is swapped there, only there. */
static bool
apply_header_credential(struct conn *c, const char *buf, const struct proxy_cred *bound, bool trace,
			struct cred_out *o)
{
	const struct http_head *h = &c->req->head;
	int at = -1;

	for (size_t i = 0; i < h->n_fields; i++) {
		const char *name = http_span_ptr(buf, h->fields[i].name);
		const char *value = http_span_ptr(buf, h->fields[i].value);
		size_t vlen = h->fields[i].value.len;

		if (http_name_is(name, h->fields[i].name.len, bound->header)) {
			if (at >= 0) {
				bad_request(c, "the credential's header is given twice");
				return false;
			}
			at = (int)i;
			if (!cred_has_placeholder(value, vlen))
				continue;
			if (trace || !bound->placeholder || vlen != strlen(bound->placeholder) ||
			    memcmp(value, bound->placeholder, vlen) != 0) {
				refuse(c, 403, "credential-misuse",
				       trace ? "TRACE and OPTIONS never carry credentials"
					     : "the header holds another value than this host's "
					       "credential placeholder",
				       true);
				return false;
			}
		} else if (!http_name_is(name, h->fields[i].name.len, "proxy-authorization") &&
			   cred_has_placeholder(value, vlen)) {
			refuse(c, 403, "credential-misuse",
			       "this host's credential placeholder travels only in its header",
			       true);
			return false;
		}
	}
	o->name = bound->header;
	if (trace)
		return true;
	/* The placeholder sent, or none sent where the proxy swaps on access. */
	if (at >= 0 ? cred_has_placeholder(http_span_ptr(buf, h->fields[at].value),
					   h->fields[at].value.len)
		    : !bound->placeholder) {
		o->value = bound->secret;
		o->len = strlen(bound->secret);
		o->secret = true;
	}
	return true;
}

static void
sigv4_refuse(struct conn *c, const char *what)
{
	refuse(c, 403, "sigv4-refused", what, true);
}

/* At most one field NAME: its value (*LEN), NULL when absent; -1 in *N when repeated. */
static const char *
one_field(const struct http_head *h, const char *buf, const char *name, size_t *len, int *n)
{
	const char *v = NULL;

	*n = 0;
	for (size_t i = 0; i < h->n_fields; i++)
		if (http_name_is(http_span_ptr(buf, h->fields[i].name), h->fields[i].name.len,
				 name)) {
			v = http_span_ptr(buf, h->fields[i].value);
			*len = h->fields[i].value.len;
			(*n)++;
		}
	return v;
}

static bool
is_sigv4_field(const char *name, size_t len)
{
	return http_name_is(name, len, "authorization") ||
	       http_name_is(name, len, "x-amz-security-token") ||
	       http_name_is(name, len, "proxy-authorization");
}

/*
 * An aws_sigv4 host: every request must be signed by the agent with the
 * placeholder keys, for this region and service, and is signed again with
 * the real ones once its head is written (build_upstream_head()).
 */
static bool
apply_sigv4(struct conn *c, const char *buf, const struct proxy_cred *bound, bool trace,
	    struct cred_out *o)
{
	const struct http_head *h = &c->req->head;
	const struct proxy_aws *aws = bound->aws;
	const char *target = http_span_ptr(buf, h->target);
	const char *q = memchr(target, '?', h->target.len), *auth, *date, *token, *payload, *why;
	size_t alen = 0, dlen = 0, tlen = 0, plen = 0;
	int na, nd, nt, np;
	struct sigv4_auth a;

	for (size_t i = 0; i < h->n_fields; i++) {
		const char *name = http_span_ptr(buf, h->fields[i].name);

		if (!is_sigv4_field(name, h->fields[i].name.len) &&
		    cred_has_placeholder(http_span_ptr(buf, h->fields[i].value),
					 h->fields[i].value.len)) {
			refuse(c, 403, "credential-misuse",
			       "an AWS placeholder travels only in Authorization and "
			       "X-Amz-Security-Token, to the hosts it is bound to",
			       true);
			return false;
		}
	}
	if (trace) {
		refuse(c, 403, "credential-misuse",
		       "TRACE and OPTIONS never carry credentials, and the proxy signs every "
		       "request to this host",
		       true);
		return false;
	}
	if (q && sigv4_query_is_presigned(q + 1, (size_t)(target + h->target.len - q - 1))) {
		sigv4_refuse(c,
			     "a presigned URL (X-Amz-Signature or X-Amz-Credential in the query) "
			     "is refused: the proxy signs requests to this host itself");
		return false;
	}
	auth = one_field(h, buf, "authorization", &alen, &na);
	date = one_field(h, buf, "x-amz-date", &dlen, &nd);
	token = one_field(h, buf, "x-amz-security-token", &tlen, &nt);
	payload = one_field(h, buf, "x-amz-content-sha256", &plen, &np);
	if (na > 1 || nd > 1 || nt > 1 || np > 1) {
		bad_request(c, "Authorization, X-Amz-Date, X-Amz-Security-Token or "
			       "X-Amz-Content-Sha256 is given twice");
		return false;
	}
	if (!auth) {
		sigv4_refuse(c, "requests to this host must be signed (AWS4-HMAC-SHA256) with the "
				"AWS_ACCESS_KEY_ID placeholder");
		return false;
	}
	if (sigv4_parse_auth(auth, alen, &a, &why) < 0 ||
	    sigv4_check(&a, aws->key_id_placeholder, aws->region, aws->service, date, dlen, &why) <
		0) {
		char what[256];

		snprintf(what, sizeof(what), "the AWS signature is refused: %s", why);
		sigv4_refuse(c, what);
		return false;
	}
	/* The token placeholder is the sandbox's one for every aws_sigv4 host;
	 * to a host whose keys have no token it is left out. */
	if (token && (!aws->token_placeholder || tlen != strlen(aws->token_placeholder) ||
		      memcmp(token, aws->token_placeholder, tlen))) {
		sigv4_refuse(c, "X-Amz-Security-Token holds another value than the "
				"AWS_SESSION_TOKEN placeholder");
		return false;
	}
	if (payload && (why = sigv4_payload_refusal(payload, plen))) {
		sigv4_refuse(c, why);
		return false;
	}
	if (!payload && request_has_body(c)) {
		sigv4_refuse(c, "a request with a body must carry x-amz-content-sha256 (the proxy "
				"signs it again without reading the body)");
		return false;
	}
	o->secret = true;
	o->sigv4 = bound;
	o->sigv4_signed = a.signed_headers;
	o->sigv4_signed_len = a.signed_headers_len;
	return true;
}

/* Authorization (or the credential's header): returns false when the request was refused. */
static bool
apply_authorization(struct conn *c, const char *buf, const char *method, size_t mlen,
		    struct cred_out *o)
{
	static char out[PROXY_AUTH_MAX];
	const struct http_head *h = &c->req->head;
	bool trace = http_name_is(method, mlen, "TRACE") || http_name_is(method, mlen, "OPTIONS");
	const struct proxy_cred *bound = c->cli_tls ? cred_for_host(c->p, c->host, c->port) : NULL;
	static const struct proxy_cred none = {.host = "", .secret = ""};
	int auth_field = -1;

	memset(o, 0, sizeof(*o));
	o->name = "Authorization";
	if (cred_has_placeholder(http_span_ptr(buf, h->target), h->target.len) ||
	    cred_has_placeholder(method, mlen)) {
		refuse(c, 403, "credential-misuse",
		       "the request line holds a credential placeholder", true);
		return false;
	}
	for (size_t i = 0; i < h->n_fields; i++)
		if (cred_has_placeholder(http_span_ptr(buf, h->fields[i].name),
					 h->fields[i].name.len)) {
			refuse(c, 403, "credential-misuse",
			       "a header name holds a credential placeholder", true);
			return false;
		}
	if (bound && bound->scheme == CRED_SCHEME_SIGV4)
		return apply_sigv4(c, buf, bound, trace, o);
	if (bound && bound->header)
		return apply_header_credential(c, buf, bound, trace, o);
	for (size_t i = 0; i < h->n_fields; i++) {
		const char *name = http_span_ptr(buf, h->fields[i].name);
		const char *value = http_span_ptr(buf, h->fields[i].value);

		if (http_name_is(name, h->fields[i].name.len, "authorization")) {
			if (auth_field >= 0) {
				bad_request(c, "several Authorization headers");
				return false;
			}
			auth_field = (int)i;
		} else if (!http_name_is(name, h->fields[i].name.len, "proxy-authorization") &&
			   cred_has_placeholder(value, h->fields[i].value.len)) {
			refuse(c, 403, "credential-misuse",
			       "a credential placeholder may only travel in Authorization (or the "
			       "header its credential names), to the host it is bound to",
			       true);
			return false;
		}
	}
	if (auth_field >= 0) {
		const char *value = http_span_ptr(buf, h->fields[auth_field].value);
		size_t vlen = h->fields[auth_field].value.len;
		const struct proxy_cred *use = bound && !trace ? bound : &none;
		enum cred_auth verdict;

		if (cred_rewrite_authorization(use, value, vlen, out, sizeof(out), &verdict) < 0) {
			bad_request(c, "Authorization header too long");
			return false;
		}
		if (verdict == CRED_AUTH_REFUSE) {
			const char *why =
			    !c->cli_tls ? "credentials are never sent over cleartext HTTP"
			    : trace	? "TRACE and OPTIONS never carry credentials"
			    : bound	? "the credential placeholder is not the one bound to "
					  "this host"
					: "no credential is bound to this host";

			refuse(c, 403, "credential-misuse", why, true);
			return false;
		}
		o->value = verdict == CRED_AUTH_SWAPPED ? out : value;
		o->len = verdict == CRED_AUTH_SWAPPED ? strlen(out) : vlen;
		o->swapped = o->secret = verdict == CRED_AUTH_SWAPPED;
	} else if (bound && !trace) {
		ssize_t n = cred_authorization_value(bound, out, sizeof(out));

		if (n < 0) {
			refuse(c, 502, "credential-error", "the credential is too long", false);
			return false;
		}
		o->value = out;
		o->len = (size_t)n;
		o->swapped = o->secret = true;
	}
	return true;
}

/*
 * Credentials: returns false when the request was refused.  A request that
 * needs a secret whose last refresh failed goes nowhere (503): never with
 * the stale one.
 */
static bool
apply_credentials(struct conn *c, const char *buf, const char *method, size_t mlen,
		  struct cred_out *o)
{
	const struct proxy_cred *bound;

	if (!apply_authorization(c, buf, method, mlen, o))
		return false;
	bound = c->cli_tls ? cred_for_host(c->p, c->host, c->port) : NULL;
	if (!o->secret || !bound || !c->p->cred_down[bound - c->p->creds])
		return true;
	if (o->swapped)
		explicit_bzero((char *)o->value, o->len);
	refuse(c, 503, "credential-unavailable",
	       "the credential could not be read again (see the proxy's log); nothing was sent",
	       true);
	return false;
}

/*
 * Fields a request to a credential's host goes without: what would let the
 * answer come back in a form the scrubber cannot search (compressed, in
 * another charset) or in pieces (a range holding part of the secret).
 */
static bool
scrub_drops_field(const char *name, size_t len)
{
	return http_name_is(name, len, "accept-encoding") || http_name_is(name, len, "range") ||
	       http_name_is(name, len, "if-range") || http_name_is(name, len, "accept-charset");
}

/* The head E holds so far, signed with the real AWS keys: its last field is Authorization. */
static int
sign_sigv4(struct evbuffer *e, const struct cred_out *cred, const char **why)
{
	static char out[SIGV4_AUTH_MAX];
	const struct proxy_aws *aws = cred->sigv4->aws;
	struct sigv4_key k = {aws->key_id, cred->sigv4->secret, aws->region, aws->service};
	const char *head;
	size_t len;
	ssize_t n;

	if (aws->token)
		evbuffer_add_printf(e, "X-Amz-Security-Token: %s\r\n", aws->token);
	/* The token is signed too: the head as it goes, up to here. */
	head = (const char *)evbuffer_pullup(e, -1);
	len = evbuffer_get_length(e);
	n = head ? sigv4_authorization(&k, head, len, cred->sigv4_signed, cred->sigv4_signed_len,
				       out, sizeof(out), why)
		 : -1;
	if (n < 0)
		return -1;
	evbuffer_add_printf(e, "Authorization: %s\r\n", out);
	explicit_bzero(out, (size_t)n);
	return 0;
}

/* The request head as the upstream gets it; NULL (with *WHY for a signing failure) on errors. */
static struct evbuffer *
build_upstream_head(struct conn *c, const char *buf, const char *method, size_t mlen,
		    const char *norm, const struct cred_out *cred, const char **why)
{
	const struct http_head *h = &c->req->head;
	struct evbuffer *e = evbuffer_new();
	bool trace = http_name_is(method, mlen, "TRACE") || http_name_is(method, mlen, "OPTIONS");

	if (!e)
		return NULL;
	/* What was checked is what is sent: the normalised target. */
	evbuffer_add_printf(e, "%.*s %s HTTP/1.1\r\n", (int)mlen, method, norm);
	if ((c->cli_tls && c->port != 443) || (!c->cli_tls && c->port != 80))
		evbuffer_add_printf(e, "Host: %s:%u\r\n", c->host, c->port);
	else
		evbuffer_add_printf(e, "Host: %s\r\n", c->host);
	for (size_t i = 0; i < h->n_fields; i++) {
		const char *name = http_span_ptr(buf, h->fields[i].name);

		if (field_dropped(h, buf, i, c->req_ws) ||
		    (cred->value && http_name_is(name, h->fields[i].name.len, cred->name)) ||
		    (c->scrub && scrub_drops_field(name, h->fields[i].name.len)) ||
		    (c->req_ws &&
		     http_name_is(name, h->fields[i].name.len, "sec-websocket-extensions")) ||
		    (cred->sigv4 &&
		     http_name_is(name, h->fields[i].name.len, "x-amz-security-token")))
			continue;
		evbuffer_add(e, http_span_ptr(buf, h->fields[i].name), h->fields[i].name.len);
		evbuffer_add(e, ": ", 2);
		evbuffer_add(e, http_span_ptr(buf, h->fields[i].value), h->fields[i].value.len);
		evbuffer_add(e, "\r\n", 2);
	}
	if (h->chunked)
		evbuffer_add_printf(e, "Transfer-Encoding: chunked\r\n");
	else if (h->has_length)
		evbuffer_add_printf(e, "Content-Length: %llu\r\n",
				    (unsigned long long)h->content_length);
	if (h->max_forwards >= 0)
		evbuffer_add_printf(e, "Max-Forwards: %ld\r\n",
				    trace ? h->max_forwards - 1 : h->max_forwards);
	if (cred->value)
		evbuffer_add_printf(e, "%s: %.*s\r\n", cred->name, (int)cred->len, cred->value);
	/* What comes back from a credential's host is searched for the secret:
	 * it must come as it is (without Accept-Encoding, any coding would do). */
	if (c->scrub)
		evbuffer_add(e, "Accept-Encoding: identity\r\n", 27);
	if (c->req_ws)
		evbuffer_add_printf(e, "Connection: Upgrade\r\n");
	/* Signed last: what was signed is the head as it goes, every change made. */
	if (cred->sigv4 && sign_sigv4(e, cred, why) < 0) {
		evbuffer_free(e);
		return NULL;
	}
	evbuffer_add(e, "\r\n", 2);
	return e;
}

/* One request of the agent's, as handle_request() hands it from phase to phase. */
struct agent_request {
	const char *buf; /* the head's bytes */
	const char *method;
	size_t mlen;
	char t[PROXY_TARGET_MAX]; /* the target as sent, escaped */
	struct http_url u;
	char *norm;	    /* the normalized path (malloc'd) */
	ssize_t nlen;	    /* its length; -1 when it is ambiguous */
	char hosttext[300]; /* c->host, escaped */
};

/*
 * A request in a tunnel: origin-form, or absolute-form naming the CONNECT
 * host, with a Host header that names it too.  False when answered.
 */
static bool
parse_tunnel_request(struct conn *c, struct agent_request *rq)
{
	struct proxy *p = c->p;
	const struct http_head *h = &c->req->head;
	const char *buf = rq->buf, *target = http_span_ptr(buf, h->target), *why;
	size_t tlen = h->target.len;

	if (http_name_is(rq->method, rq->mlen, "CONNECT")) {
		bad_request(c, "CONNECT inside a tunnel");
		return false;
	}
	if (tlen && target[0] == '/') {
		rq->u.path = target;
		rq->u.path_len = tlen;
	} else if (http_parse_absolute(target, tlen, c->cli_tls ? "https" : "http", &rq->u, &why) <
		   0) {
		bad_request(c, why);
		return false;
	} else if (rq->u.host_len != strlen(c->host) ||
		   strncasecmp(rq->u.host, c->host, rq->u.host_len) != 0 ||
		   (rq->u.port_given && rq->u.port != c->port)) {
		refuse(c, 403, "host-mismatch",
		       "the request names another host or port than the CONNECT", false);
		return false;
	}
	if (h->host >= 0) {
		struct http_url hu;
		const struct http_field *f = &h->fields[h->host];

		/* The tunnel was checked for the CONNECT host; a request
		 * for another would reach it under a false name. */
		if (http_parse_host_field(http_span_ptr(buf, f->value), f->value.len, &hu, &why) <
			0 ||
		    hu.host_len != strlen(c->host) ||
		    strncasecmp(hu.host, c->host, hu.host_len) != 0) {
			char hv[300];

			esc(hv, sizeof(hv), http_span_ptr(buf, f->value), f->value.len);
			free(c->log_url);
			c->log_url = strdup(rq->t);
			plog(p,
			     "c%lu host-mismatch %.*s %s: Host '%s' is not the CONNECT "
			     "host %s",
			     c->id, (int)rq->mlen, rq->method, rq->t, hv, c->host);
			refuse(c, 403, "host-mismatch",
			       "the Host header differs from the CONNECT host", false);
			return false;
		}
	}
	return true;
}

/*
 * A request to the plain-HTTP proxy: absolute-form, for a host an egress
 * rule could name, which becomes the connection's.  False when answered.
 */
static bool
parse_proxy_request(struct conn *c, struct agent_request *rq)
{
	const struct http_head *h = &c->req->head;
	const char *target = http_span_ptr(rq->buf, h->target), *why;
	size_t tlen = h->target.len;
	struct http_url *u = &rq->u;

	if (tlen && target[0] == '/') {
		bad_request(c, "this is a proxy: send absolute-form requests "
			       "(GET http://host/path) or CONNECT");
		return false;
	}
	if (http_parse_absolute(target, tlen, "http", u, &why) < 0) {
		bad_request(c, why);
		return false;
	}
	if (u->ipv6) {
		bad_request(c, "IPv6 literal hosts are not supported (no egress rule can "
			       "name one)");
		return false;
	}
	if (!egress_host_is_safe(u->host, u->host_len)) {
		bad_request(c, "the host holds characters outside [A-Za-z0-9.-]");
		return false;
	}
	/* Another host than the open upstream connection: start afresh. */
	if (c->host && (strlen(c->host) != u->host_len ||
			strncasecmp(c->host, u->host, u->host_len) || c->port != u->port))
		up_close(c);
	free(c->host);
	c->host = strndup(u->host, u->host_len);
	if (!c->host) {
		conn_kill(c);
		return false;
	}
	lower(c->host);
	c->port = u->port;
	return true;
}

/*
 * The path normalized (rq->nlen -1 when it is ambiguous), and the request
 * as the log names it (c->log_url).  False when out of memory: killed.
 */
static bool
normalize_request(struct conn *c, struct agent_request *rq)
{
	const struct http_url *u = &rq->u;
	char *path;

	/* "" and "?q" mean "/" and "/?q" (RFC 9112 3.2.2). */
	path = malloc(u->path_len + 2);
	rq->norm = malloc(PROXY_TARGET_MAX);
	if (!path || !rq->norm) {
		free(path);
		free(rq->norm);
		conn_kill(c);
		return false;
	}
	path[0] = '/';
	memcpy(path + (u->path_len == 0 || u->path[0] == '?'), u->path, u->path_len);
	rq->nlen =
	    egress_normalize_target(path, u->path_len + (u->path_len == 0 || u->path[0] == '?'),
				    rq->norm, PROXY_TARGET_MAX);
	free(path);
	esc(rq->hosttext, sizeof(rq->hosttext), c->host, strlen(c->host));
	{
		char ms[64], ts[PROXY_TARGET_MAX];

		esc(ms, sizeof(ms), rq->method, rq->mlen);
		esc(ts, sizeof(ts), rq->nlen >= 0 ? rq->norm : rq->t,
		    rq->nlen >= 0 ? (size_t)rq->nlen : strlen(rq->t));
		free(c->log_url);
		c->log_url = malloc(strlen(ms) + strlen(rq->hosttext) + strlen(ts) + 32);
		if (c->log_url) {
			if ((c->cli_tls && c->port != 443) || (!c->cli_tls && c->port != 80))
				sprintf(c->log_url, "%s %s://%s:%u%s", ms,
					c->cli_tls ? "https" : "http", rq->hosttext, c->port, ts);
			else
				sprintf(c->log_url, "%s %s://%s%s", ms,
					c->cli_tls ? "https" : "http", rq->hosttext, ts);
		}
	}
	return true;
}

/*
 * Frameworks honour a method named in a header (X-HTTP-Method-Override
 * and its kin) over the request line's: the rules check that method
 * too, so an allowed POST cannot become a denied DELETE upstream.
 * False when one is denied: answered.
 */
static bool
method_overrides_allowed(struct conn *c, const struct agent_request *rq)
{
	struct proxy *p = c->p;
	const struct http_head *h = &c->req->head;

	for (size_t i = 0; i < h->n_fields; i++) {
		const struct http_field *f = &h->fields[i];
		const char *name = http_span_ptr(rq->buf, f->name),
			   *val = http_span_ptr(rq->buf, f->value);

		if (!http_name_is(name, f->name.len, "X-HTTP-Method-Override") &&
		    !http_name_is(name, f->name.len, "X-HTTP-Method") &&
		    !http_name_is(name, f->name.len, "X-Method-Override"))
			continue;
		if (egress_match(p->matcher, val, f->value.len, c->host, strlen(c->host), c->port,
				 c->cli_tls ? EGRESS_PORT_TLS : EGRESS_PORT_PLAIN, rq->norm,
				 (size_t)rq->nlen) < 0) {
			char m[64];

			esc(m, sizeof(m), val, f->value.len);
			plog(p, "c%lu deny %s: method override to %s", c->id, c->log_url, m);
			deny_request(c, val, f->value.len, rq->hosttext, rq->norm);
			return false;
		}
	}
	return true;
}

/*
 * The rules' decision: the egress rule that allows the request into *RULE,
 * or false when it is answered here (refused, or Max-Forwards: 0), its
 * normalized path freed.
 */
static bool
route_request(struct conn *c, struct agent_request *rq, ssize_t *rule)
{
	struct proxy *p = c->p;
	const struct http_head *h = &c->req->head;
	const char *why;
	struct in_addr v4;
	bool trace;

	if (rq->nlen < 0) {
		free(rq->norm);
		refuse(
		    c, 403, "blocked-by-policy",
		    "the path is ambiguous (dot segments above '/', or encoded '/', '\\' or '.')",
		    true);
		return false;
	}
	if (dest_classify_host(c->host, strlen(c->host), &v4, &why) == DEST_HOST_BAD) {
		free(rq->norm);
		c->after = AFTER_FORWARD;
		dest_refuse(c, c->log_url, why);
		return false;
	}
	/* Max-Forwards: 0 stops at the proxy, whatever the host (no upstream, no
	 * credential): the proxy answers it itself. */
	trace = http_name_is(rq->method, rq->mlen, "TRACE") ||
		http_name_is(rq->method, rq->mlen, "OPTIONS");
	if (trace && h->max_forwards == 0) {
		free(rq->norm);
		answer_max_forwards(c, rq->buf, http_name_is(rq->method, rq->mlen, "TRACE"));
		return false;
	}
	*rule = egress_match(p->matcher, rq->method, rq->mlen, c->host, strlen(c->host), c->port,
			     c->cli_tls ? EGRESS_PORT_TLS : EGRESS_PORT_PLAIN, rq->norm,
			     (size_t)rq->nlen);
	if (*rule < 0) {
		deny_request(c, rq->method, rq->mlen, rq->hosttext, rq->norm);
		free(rq->norm);
		return false;
	}
	if (!method_overrides_allowed(c, rq)) {
		free(rq->norm);
		return false;
	}
	return true;
}

/*
 * An allowed request on its way: its credential applied, its head for
 * the upstream built, and the upstream connection reused, opened or
 * resolved first.  Frees the normalized path.
 */
static void
forward_request(struct conn *c, struct agent_request *rq, ssize_t r)
{
	struct proxy *p = c->p;
	const struct http_head *h = &c->req->head;
	const char *buf = rq->buf, *method = rq->method, *why;
	size_t mlen = rq->mlen;
	char rule[1200];
	struct cred_out cred;

	if (!apply_credentials(c, buf, method, mlen, &cred)) {
		free(rq->norm);
		return;
	}
	c->scrub = c->cli_tls && cred_for_host(p, c->host, c->port);
	/* A WebSocket upgrade keeps its Upgrade header only when a rule allowed this GET. */
	c->req_ws = http_name_is(method, mlen, "GET") && h->conn_upgrade && h->upgrade_websocket;
	if (c->req_ws && !websocket_request_ok(c, buf)) {
		free(rq->norm);
		bad_request(c, "a WebSocket upgrade needs one valid Sec-WebSocket-Key and "
			       "Sec-WebSocket-Version: 13");
		return;
	}
	why = NULL;
	c->up_head = build_upstream_head(c, buf, method, mlen, rq->norm, &cred, &why);
	if (cred.swapped)
		explicit_bzero((char *)cred.value, cred.len);
	free(rq->norm);
	if (!c->up_head && why) {
		char what[256];

		snprintf(what, sizeof(what), "the request cannot be signed again: %s", why);
		refuse(c, 502, "credential-error", what, false);
		return;
	}
	if (!c->up_head) {
		conn_kill(c);
		return;
	}
	plog(p, "c%lu allow %s by %s%s", c->id, c->log_url, rule_desc(p, r, rule, sizeof(rule)),
	     cred.secret ? " with credential" : "");
	body_init(&c->req_body, h);
	evbuffer_drain(bufferevent_get_input(c->cli), h->length);
	c->close_after = c->req_close;
	c->resp_started = false;
	c->retried = false;
	if (c->up && c->up_connected && c->up_reusable) {
		/* Kept alive from the previous request to the same host and port. */
		c->rq = RQ_CONNECT;
		up_open(c);
	} else if (c->cli_tls || c->pinned) {
		/* The tunnel's (or the transparent connection's) checked addresses. */
		c->next_addr = 0;
		c->rq = RQ_CONNECT;
		up_open(c);
	} else {
		dest_resolve(c, AFTER_FORWARD);
	}
}

/* A whole request head of the agent's: parsed, routed by the rules, forwarded. */
static void
handle_request(struct conn *c, const char *buf)
{
	const struct http_head *h = &c->req->head;
	struct agent_request rq = {
	    .buf = buf, .method = http_span_ptr(buf, h->method), .mlen = h->method.len};
	ssize_t r;

	conn_unpark(c, 0); /* a whole head: the agent is being served */
	head_account(c, 0);
	c->req_http10 = h->version == 10;
	c->req_close = h->conn_close;
	c->req_head = http_name_is(rq.method, rq.mlen, "HEAD");
	c->req_ws = false;
	c->pinned_seen = c->pinned;
	if (!c->cli_tls && !c->pinned && http_name_is(rq.method, rq.mlen, "CONNECT")) {
		handle_connect(c, buf);
		return;
	}
	esc(rq.t, sizeof(rq.t), http_span_ptr(buf, h->target), h->target.len);
	if (c->cli_tls || c->pinned ? !parse_tunnel_request(c, &rq) : !parse_proxy_request(c, &rq))
		return;
	if (!normalize_request(c, &rq) || !route_request(c, &rq, &r))
		return;
	forward_request(c, &rq, r);
}
