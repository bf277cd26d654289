/*
 * proxy_response.c - what comes back, and bodies both ways: bodies moved
 * (by splice(2) when plain), responses read and passed on, secrets
 * scrubbed from them, WebSocket upgrades checked and their frames passed.
 */
#include "runtime/egress/proxy_int.h"

/* ---- WebSocket ------------------------------------------------------------------- */

static int
emit_evbuffer(void *arg, const char *s, size_t n)
{
	return evbuffer_add(arg, s, n);
}

/*
 * Pass what one side of a WebSocket sent to the other, once the checker
 * has seen it is frames: a 101 must not turn the connection into a raw
 * tunnel (the next bytes an HTTP request, say).  From a credential's host
 * the secrets become '*'s (the frame lengths stay true).  Anything that is
 * not a frame closes both sides, and nothing of it is passed on.
 */
void
ws_pass(struct conn *c, bool from_agent)
{
	struct evbuffer *in = bufferevent_get_input(from_agent ? c->cli : c->up);
	struct evbuffer *out = bufferevent_get_output(from_agent ? c->up : c->cli);
	struct ws_checker *w = from_agent ? &c->ws->from_agent : &c->ws->from_server;
	struct evbuffer_ptr at;
	struct evbuffer_iovec v[16];
	const char *why = "bad framing";
	size_t len = evbuffer_get_length(in);
	int n;

	evbuffer_ptr_set(in, &at, 0, EVBUFFER_PTR_SET);
	while (len) {
		size_t took = 0;

		n = evbuffer_peek(in, (ev_ssize_t)len, &at, v, 16);
		if (n > 16)
			n = 16;
		for (int i = 0; i < n; i++) {
			if (ws_checker_feed(w, v[i].iov_base, v[i].iov_len, &why) < 0) {
				plog(c->p,
				     "c%lu websocket %s: %s sent what is not RFC 6455 framing "
				     "(%s): closed",
				     c->id, c->log_url ? c->log_url : "",
				     from_agent ? "the agent" : "the server", why);
				conn_kill(c);
				return;
			}
			took += v[i].iov_len;
		}
		/* A secret split over the frames of a message would pass the scrubber
		 * (it looks within a frame): a credential's host sends whole ones. */
		if (!from_agent && c->ws->scrub && w->saw_fragments) {
			plog(c->p,
			     "c%lu websocket %s: a credential's host sent a fragmented "
			     "message, which cannot be checked for the secret: closed",
			     c->id, c->log_url ? c->log_url : "");
			conn_kill(c);
			return;
		}
		len -= took < len ? took : len;
		evbuffer_ptr_set(in, &at, took, EVBUFFER_PTR_ADD);
	}
	while (!from_agent && c->ws->scrub && evbuffer_get_length(in)) {
		size_t done = 0;

		n = evbuffer_peek(in, -1, NULL, v, 16);
		for (int i = 0; i < n && i < 16; i++) {
			scrub_stream_feed(&c->ws->sc, v[i].iov_base, v[i].iov_len, emit_evbuffer,
					  out);
			done += v[i].iov_len;
		}
		evbuffer_drain(in, done);
	}
	/* At a frame's end, what may begin a secret goes too: a message must not
	 * wait for the next one (a secret is looked for within a frame). */
	if (!from_agent && c->ws->scrub && !w->in_payload && w->hdr_len == 0)
		scrub_stream_finish(&c->ws->sc, emit_evbuffer, out);
	evbuffer_add_buffer(out, in); /* what is left: all of it unless scrubbed */
	conn_update_io(c);
}

/* Does S/LEN hold NEEDLE, in any case? */
static bool
strcasestr_n(const char *s, size_t len, const char *needle)
{
	size_t n = strlen(needle);

	for (size_t i = 0; i + n <= len; i++)
		if (!strncasecmp(s + i, needle, n))
			return true;
	return false;
}

/* Header NAME's value in BUF's head H (*LEN), or NULL when absent or given twice. */
const char *
head_field(const struct http_head *h, const char *buf, const char *name, size_t *len)
{
	const char *v = NULL;

	for (size_t i = 0; i < h->n_fields; i++)
		if (http_name_is(http_span_ptr(buf, h->fields[i].name), h->fields[i].name.len,
				 name)) {
			if (v)
				return NULL;
			v = http_span_ptr(buf, h->fields[i].value);
			*len = h->fields[i].value.len;
		}
	return v;
}

/* The upgrade's key is kept: the server's 101 must answer it. */
bool
websocket_request_ok(struct conn *c, const char *buf)
{
	const struct http_head *h = &c->req->head;
	size_t klen = 0, vlen = 0;
	const char *key = head_field(h, buf, "sec-websocket-key", &klen);
	const char *ver = head_field(h, buf, "sec-websocket-version", &vlen);

	if (!key || !ws_key_is_valid(key, klen) || !ver || vlen != 2 || memcmp(ver, "13", 2))
		return false;
	memcpy(c->ws_key, key, klen);
	c->ws_key[klen] = '\0';
	return true;
}

/*
 * The 101 proves the server took this upgrade (RFC 6455 4.2.2), with no
 * extension: none was offered, so every frame has its RSV bits clear.
 */
static const char *
websocket_response_error(struct conn *c, const char *buf)
{
	const struct http_head *h = &c->resp->head;
	size_t alen = 0, elen = 0;
	const char *accept = head_field(h, buf, "sec-websocket-accept", &alen);

	if (!accept || !ws_accept_matches(c->ws_key, strlen(c->ws_key), accept, alen))
		return "the 101 does not carry the Sec-WebSocket-Accept of this upgrade";
	if (head_field(h, buf, "sec-websocket-extensions", &elen) || elen)
		return "the 101 names a WebSocket extension no one offered";
	return NULL;
}

/* ---- bodies ---------------------------------------------------------------------------- */

/* What the scrubber let out so far, framed as B is written. */
static void
body_put_scrubbed(struct body *b, struct evbuffer *out)
{
	size_t n = evbuffer_get_length(b->scrubbed);

	if (!n)
		return;
	if (b->out_chunked)
		evbuffer_add_printf(out, "%zx\r\n", n);
	evbuffer_add_buffer(out, b->scrubbed);
	if (b->out_chunked)
		evbuffer_add(out, "\r\n", 2);
}

/*
 * A piece of a scrubbed body's input, taken whole from it and kept while
 * the client's output refers to its bytes: what the scrubber lets through
 * goes out as it lies, uncopied.  Freed with the last reference.
 */
struct kept {
	struct evbuffer *buf;
	unsigned refs;
};

static void
kept_unref(const void *data, size_t len, void *arg)
{
	struct kept *k = arg;

	(void)data;
	(void)len;
	if (--k->refs)
		return;
	evbuffer_free(k->buf);
	mem_release(k);
}

/* What the scrubber emits while it reads a kept piece: a span of it is
 * referred to (a short one copied: a reference costs more), anything
 * else (bytes it held from before, a placeholder) copied. */
struct refer {
	struct evbuffer *out;
	struct kept *k;
	const char *base;
	size_t len;
};

#define REFER_MIN 2048

static int
emit_refer(void *arg, const char *s, size_t n)
{
	struct refer *r = arg;

	uintptr_t at = (uintptr_t)s, base = (uintptr_t)r->base;

	if (n < REFER_MIN || at < base || n > r->len || at - base > r->len - n)
		return evbuffer_add(r->out, s, n);
	r->k->refs++;
	if (evbuffer_add_reference(r->out, s, n, kept_unref, r->k) < 0) {
		r->k->refs--; /* not called back when it fails */
		return -1;
	}
	return 0;
}

/*
 * The first LEN bytes of IN (its first piece, whole) through B's scrubber
 * without a copy: the piece moves into one kept for it (libevent moves a
 * whole chain), and the scrubber reads it there.  false when it could not
 * be kept: IN is as it was.
 */
static bool
scrub_kept(struct body *b, struct evbuffer *in, size_t len)
{
	struct kept *k = mem_alloc(sizeof(*k));
	struct evbuffer_iovec v;
	struct evbuffer_ptr at;

	if (!k)
		return false;
	k->refs = 1;
	k->buf = evbuffer_new();
	if (!k->buf || evbuffer_remove_buffer(in, k->buf, len) != (int)len) {
		if (k->buf) {
			/* Nothing moved (a frozen buffer), or all of it back. */
			evbuffer_prepend_buffer(in, k->buf);
			evbuffer_free(k->buf);
		}
		mem_release(k);
		return false;
	}
	/* One piece, unless libevent copied after all (no chain moved whole). */
	for (size_t done = 0; done < len; done += v.iov_len) {
		struct refer r = {b->scrubbed, k, NULL, 0};

		if (evbuffer_ptr_set(k->buf, &at, done, EVBUFFER_PTR_SET) < 0 ||
		    evbuffer_peek(k->buf, (ev_ssize_t)(len - done), &at, &v, 1) < 1 || !v.iov_len)
			break;
		r.base = v.iov_base;
		r.len = v.iov_len;
		scrub_stream_feed(b->sc, v.iov_base, v.iov_len, emit_refer, &r);
	}
	kept_unref(NULL, 0, k);
	return true;
}

/*
 * N bytes of body data from IN to OUT, framed as B is written.  Through
 * the scrubber when B has one: the secrets never reach OUT, bytes that may
 * begin one wait for the next data (or the end of the body).  A piece of
 * IN that is all body goes through uncopied (scrub_kept()); the last,
 * when the next response begins in it, is read in place and drained.
 */
static void
body_data(struct body *b, struct evbuffer *in, struct evbuffer *out, size_t n)
{
	size_t left = n;

	if (!b->sc) {
		if (b->out_chunked)
			evbuffer_add_printf(out, "%zx\r\n", n);
		evbuffer_remove_buffer(in, out, n);
		if (b->out_chunked)
			evbuffer_add(out, "\r\n", 2);
		return;
	}
	while (left) {
		struct evbuffer_iovec v;
		size_t len;

		if (evbuffer_peek(in, -1, NULL, &v, 1) < 1)
			break;
		len = v.iov_len < left ? v.iov_len : left;
		if (len < v.iov_len || !scrub_kept(b, in, len)) {
			scrub_stream_feed(b->sc, v.iov_base, len, emit_evbuffer, b->scrubbed);
			evbuffer_drain(in, len);
		}
		left -= len;
	}
	body_put_scrubbed(b, out);
}

/* The body is complete: what the scrubber held back goes out (it was no secret). */
void
body_end_data(struct body *b, struct evbuffer *out)
{
	if (!b->sc)
		return;
	scrub_stream_finish(b->sc, emit_evbuffer, b->scrubbed);
	body_put_scrubbed(b, out);
}

/*
 * Move what IN holds of body B to DEST, through STAGE (empty) so DEST gets
 * it in one addition.  1: the body is complete; 0: more to come; -1: bad
 * framing.
 */
static int
body_pump_staged(struct body *b, struct evbuffer *in, struct evbuffer *out, const char **why)
{
	size_t avail, n;

	switch (b->mode) {
	case BODY_NONE:
		b->done = true;
		return 1;
	case BODY_LENGTH:
		avail = evbuffer_get_length(in);
		n = avail < b->left ? avail : (size_t)b->left;
		if (n)
			body_data(b, in, out, n);
		b->left -= n;
		b->done = b->left == 0;
		if (b->done) {
			body_end_data(b, out);
			if (b->out_chunked) /* re-framed: a scrubbed body changes length */
				evbuffer_add(out, "0\r\n\r\n", 5);
		}
		return b->done;
	case BODY_CLOSE:
		avail = evbuffer_get_length(in);
		if (avail)
			body_data(b, in, out, avail);
		return 0;
	case BODY_CHUNKED:
		for (;;) {
			size_t look = http_chunked_lookahead(&b->ch), len = 0;
			const char *buf = NULL;

			avail = evbuffer_get_length(in);
			if (avail == 0)
				return 0;
			if (look) {
				len = avail < look ? avail : look;
				buf = (const char *)evbuffer_pullup(in, (ev_ssize_t)len);
			}
			switch (http_chunked_step(&b->ch, buf, len, avail, &n)) {
			case CHUNK_MORE:
				return 0;
			case CHUNK_SKIP:
				evbuffer_drain(in, n);
				break;
			case CHUNK_DATA:
				body_data(b, in, out, n);
				break;
			case CHUNK_DONE:
				evbuffer_drain(in, n);
				body_end_data(b, out);
				if (b->out_chunked)
					evbuffer_add(out, "0\r\n\r\n", 5);
				b->done = true;
				return 1;
			default:
				*why = b->ch.error;
				return -1;
			}
		}
	}
	return -1;
}

static int
body_pump(struct body *b, struct evbuffer *in, struct evbuffer *dest, struct evbuffer *stage,
	  const char **why)
{
	int r = body_pump_staged(b, in, stage, why);

	if (evbuffer_get_length(stage))
		evbuffer_add_buffer(dest, stage);
	return r;
}

void
pump_request(struct conn *c)
{
	const char *why = "bad framing";
	int r;

	size_t before;

	if (!c->up || !c->up_connected)
		return;
	before = evbuffer_get_length(bufferevent_get_input(c->cli));
	r = body_pump(&c->req_body, bufferevent_get_input(c->cli), bufferevent_get_output(c->up),
		      c->p->stage, &why);
	c->body_moved += before - evbuffer_get_length(bufferevent_get_input(c->cli));
	if (r < 0) {
		/* Part of the request is upstream already: only cutting both
		 * connections keeps the rest from being read as a new request. */
		plog(c->p, "c%lu bad-request %s: request body: %s", c->id, c->log_url, why);
		conn_kill(c);
		return;
	}
	if (r == 1) {
		c->rq = RQ_WAIT;
		conn_unpark(c, 0);
		if (c->rs == RS_DONE) {
			request_done(c);
			return;
		}
	}
	conn_update_io(c);
}

static void
response_done(struct conn *c)
{
	c->rs = RS_DONE;
	/* Bytes after the response no request asked for (a body after a HEAD,
	 * say) would be read as the next answer: the connection is not reused. */
	if (c->up && evbuffer_get_length(bufferevent_get_input(c->up)))
		c->up_reusable = false;
	if (c->up_reusable) {
		c->up_used = true;
		if (c->up_rd && !c->up_rd_done)
			event_del(c->up_rd); /* re-added with the idle timeout */
	} else {
		up_close(c);
	}
	if (c->rq == RQ_WAIT)
		request_done(c);
	else
		conn_finish(c); /* the answer came before the whole request: close */
}

/* ---- plain bodies by splice(2) ------------------------------------------------------- */

void
splice_end(struct conn *c)
{
	struct splice *sp = c->sp;

	if (!sp)
		return;
	if (sp->in)
		event_free(sp->in);
	if (sp->out)
		event_free(sp->out);
	splice_pipe_close(&sp->p);
	free(sp);
	c->sp = NULL;
}

/* The upstream closed: that ends a close-delimited body, and any other too early. */
static void
splice_upstream_closed(struct conn *c)
{
	if (c->resp_body.mode != BODY_CLOSE) {
		plog(c->p, "c%lu upstream-error %s: the server closed in the body", c->id,
		     c->log_url);
		conn_kill(c);
		return;
	}
	c->resp_body.done = true;
	c->up_reusable = false;
	c->rs = RS_DONE;
	up_close(c);
	if (c->rq == RQ_WAIT)
		request_done(c);
	else
		conn_finish(c);
}

/*
 * Move the body: upstream socket -> pipe -> agent's socket, no copy in the
 * proxy (splice.h).  The framing is plain (a length, or the close), so
 * nothing has to be looked at; the agent's side is not TLS, so nothing has
 * to be encrypted.
 */
static void
splice_step(struct conn *c)
{
	struct splice *sp = c->sp;
	uint64_t *left = c->resp_body.mode == BODY_LENGTH ? &c->resp_body.left : NULL;

	switch (splice_move(&sp->p, bufferevent_getfd(c->up_sock), c->fd, left)) {
	case SPLICE_WAIT_UP:
		event_del(sp->out);
		event_add(sp->in, NULL);
		return;
	case SPLICE_WAIT_AGENT:
		/* The agent is slower: wait for it, stop reading upstream. */
		event_del(sp->in);
		event_add(sp->out, NULL);
		return;
	case SPLICE_DONE:
		c->resp_body.done = true;
		splice_end(c);
		response_done(c);
		return;
	case SPLICE_UP_CLOSED:
		splice_upstream_closed(c);
		return;
	case SPLICE_UNSUPPORTED:
		/* This kernel cannot splice these sockets: copy, now and from now on. */
		c->p->no_splice = true;
		splice_end(c);
		conn_update_io(c);
		return;
	case SPLICE_UP_FAILED:
		upstream_failed(c, "upstream-error", "reading the body failed");
		return;
	case SPLICE_AGENT_FAILED:
		conn_kill(c);
		return;
	}
}

static void
splice_cb(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;

	(void)fd;
	(void)what;
	if (c->sp)
		splice_step(c);
}

/*
 * Hand the rest of a plain body to the kernel, when the agent's side is
 * plain too, the framing needs no reading, and nothing is buffered on
 * either side.  Returns false (and changes nothing) when that is not so.
 */
static bool
splice_start(struct conn *c)
{
	struct splice *sp;

	if (c->p->no_splice || c->cli_tls || c->sp || c->resp_body.out_chunked ||
	    (c->resp_body.mode != BODY_LENGTH && c->resp_body.mode != BODY_CLOSE) ||
	    evbuffer_get_length(bufferevent_get_input(c->up_sock)) ||
	    evbuffer_get_length(bufferevent_get_output(c->cli_sock)))
		return false;
	sp = calloc(1, sizeof(*sp));
	if (!sp)
		return false;
	if (splice_pipe_open(&sp->p, 1024 * 1024) < 0) {
		free(sp);
		return false;
	}
	sp->in = event_new(c->p->base, bufferevent_getfd(c->up_sock), EV_READ | EV_PERSIST,
			   splice_cb, c);
	sp->out = event_new(c->p->base, c->fd, EV_WRITE | EV_PERSIST, splice_cb, c);
	c->sp = sp;
	if (!sp->in || !sp->out) {
		splice_end(c);
		return false;
	}
	/* Our own reading of the upstream stops: the kernel reads it now. */
	if (c->up_rd && !c->up_rd_done)
		event_del(c->up_rd);
	splice_step(c);
	return true;
}

/*
 * Nothing more came for SCRUB_FLUSH_US: what the scrubber holds goes out
 * (server-sent events are not kept waiting for the next one).  The wait is
 * the same whatever the bytes are; a secret the server splits over two
 * writes that far apart would not be found.
 */
static void
scrub_flush_cb(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;

	(void)fd;
	(void)what;
	if (c->dead || c->rs != RS_BODY || !c->resp_body.sc || !c->resp_body.sc->n_held)
		return;
	scrub_stream_finish(c->resp_body.sc, emit_evbuffer, c->resp_body.scrubbed);
	body_put_scrubbed(&c->resp_body, bufferevent_get_output(c->cli));
	conn_update_io(c);
}

void
pump_response(struct conn *c)
{
	const char *why = "bad framing";
	int r = body_pump(&c->resp_body, bufferevent_get_input(c->up),
			  bufferevent_get_output(c->cli), c->p->stage, &why);

	if (r < 0) {
		plog(c->p, "c%lu upstream-error %s: response body: %s", c->id, c->log_url, why);
		conn_kill(c);
		return;
	}
	if (r == 1) {
		response_done(c);
		return;
	}
	/* A stream that pauses gets the bytes the scrubber holds a moment later. */
	if (c->resp_body.sc && c->resp_body.sc->n_held) {
		if (!c->scrub_timer)
			c->scrub_timer = evtimer_new(c->p->base, scrub_flush_cb, c);
		if (c->scrub_timer) {
			struct timeval t = {0, SCRUB_FLUSH_US};

			evtimer_add(c->scrub_timer, &t);
		}
	}
	/* Big plain downloads: out of the proxy's hands and into the kernel's. */
	sock_flush(c->cli_sock);
	if (splice_start(c))
		return;
	conn_update_io(c);
}

/* Both halves of the exchange are over: next request, or close. */
void
request_done(struct conn *c)
{
	free_request(c);
	c->rq = RQ_HEAD;
	c->rs = RS_IDLE;
	c->req_ws = c->req_head = false;
	if (c->close_after || c->req_close || c->cli_eof) {
		conn_finish(c);
		return;
	}
	c->keepalive = true;
	conn_park(c, PROXY_KEEPALIVE_TIMEOUT);
	conn_update_io(c);
	/* A pipelined request is read by the loop in conn_read_head(), or now. */
	if (evbuffer_get_length(bufferevent_get_input(c->cli)))
		bufferevent_trigger(c->cli, EV_READ,
				    BEV_TRIG_IGNORE_WATERMARKS | BEV_TRIG_DEFER_CALLBACKS);
	else
		conn_release_buffers(c);
}

/* ---- responses ---------------------------------------------------------------------------- */

/* S/LEN to OUT; from a credential's host, without the secrets. */
static void
put_scrubbed(struct conn *c, struct evbuffer *out, const char *s, size_t len)
{
	struct scrub_stream st;

	if (!c->scrub) {
		evbuffer_add(out, s, len);
		return;
	}
	scrub_stream_init(&st, &c->p->scrub, false);
	scrub_stream_feed(&st, s, len, emit_evbuffer, out);
	scrub_stream_finish(&st, emit_evbuffer, out);
}

static void
write_response_head(struct conn *c, const char *buf, bool keep_upgrade, bool out_chunked)
{
	const struct http_head *h = &c->resp->head;
	struct evbuffer *out = c->p->stage;

	evbuffer_add_printf(out, "HTTP/1.1 %u ", h->status);
	put_scrubbed(c, out, http_span_ptr(buf, h->reason), h->reason.len);
	evbuffer_add(out, "\r\n", 2);
	for (size_t i = 0; i < h->n_fields; i++) {
		const char *name = http_span_ptr(buf, h->fields[i].name);
		size_t len = h->fields[i].name.len;

		if (http_name_is(name, len, "content-length")) {
			/* A scrubbed body has a length of its own; and from a credential's
			 * host, the length of a body not sent (HEAD, 304) would tell the
			 * length of a secret it echoes. */
			if (out_chunked || c->scrub)
				continue;
		} else if (http_name_is(name, len, "host") ||
			   http_name_is(name, len, "max-forwards") ||
			   http_name_is(name, len, "authorization")) {
			/* not hop-by-hop in a response: pass on */
		} else if (field_dropped(h, buf, i, keep_upgrade)) {
			continue;
		}
		put_scrubbed(c, out, name, len);
		evbuffer_add(out, ": ", 2);
		put_scrubbed(c, out, http_span_ptr(buf, h->fields[i].value),
			     h->fields[i].value.len);
		evbuffer_add(out, "\r\n", 2);
	}
	if (out_chunked)
		evbuffer_add(out, "Transfer-Encoding: chunked\r\n", 28);
	else if (c->scrub && h->status >= 200 && !keep_upgrade && !c->req_head &&
		 h->status != 204 && h->status != 304 && c->resp_body.mode == BODY_NONE)
		evbuffer_add(out, "Content-Length: 0\r\n", 19); /* the one it had, dropped above */
	if (keep_upgrade)
		evbuffer_add(out, "Connection: Upgrade\r\n", 21);
	else if (c->close_after && h->status >= 200)
		evbuffer_add(out, "Connection: close\r\n", 19);
	evbuffer_add(out, "\r\n", 2);
	evbuffer_add_buffer(bufferevent_get_output(c->cli), out);
}

/*
 * A response from a credential's host that the scrubber could not search
 * whole: compressed, partial (206), or in a charset that spreads a secret
 * over wider characters.  Returns why, or NULL.
 */
static const char *
unsearchable_response(const struct http_head *h, const char *buf)
{
	if (h->status == 206)
		return "a partial response (206) from a credential's host could hold part of the "
		       "secret";
	for (size_t i = 0; i < h->n_fields; i++) {
		const struct http_field *f = &h->fields[i];
		const char *name = http_span_ptr(buf, f->name), *v = http_span_ptr(buf, f->value);

		if (http_name_is(name, f->name.len, "content-encoding") &&
		    !http_name_is(v, f->value.len, "identity"))
			return "the response from a credential's host is compressed "
			       "(Content-Encoding), so it cannot be checked for the secret";
		if (http_name_is(name, f->name.len, "content-type") &&
		    (strcasestr_n(v, f->value.len, "utf-16") ||
		     strcasestr_n(v, f->value.len, "utf-32") ||
		     strcasestr_n(v, f->value.len, "utf16") ||
		     strcasestr_n(v, f->value.len, "utf32") ||
		     strcasestr_n(v, f->value.len, "utf_16") ||
		     strcasestr_n(v, f->value.len, "utf_32") ||
		     strcasestr_n(v, f->value.len, "ucs")))
			return "the response from a credential's host is in a wide charset, so it "
			       "cannot be checked for the secret";
	}
	return NULL;
}

void
read_response(struct conn *c)
{
	while (!c->dead && c->rs == RS_HEAD) {
		struct evbuffer *in = bufferevent_get_input(c->up);
		size_t len = evbuffer_get_length(in), look;
		const struct http_head *h;
		const char *buf;
		enum http_result r;
		bool chunked_out;

		if (len == 0)
			return;
		if (!c->resp) {
			c->resp = mem_alloc(sizeof(*c->resp));
			if (!c->resp) {
				conn_kill(c);
				return;
			}
			http_head_begin(c->resp, true);
		}
		look = len < HTTP_HEAD_MAX ? len : HTTP_HEAD_MAX;
		buf = (const char *)evbuffer_pullup(in, (ev_ssize_t)look);
		r = http_parse_head(c->resp, buf, look);
		if (r == HTTP_MORE)
			return;
		if (r == HTTP_ERROR) {
			char why[256];

			snprintf(why, sizeof(why), "malformed response: %s", c->resp->error);
			c->up_reusable = false;
			up_close(c);
			upstream_failed(c, "bad-gateway", why);
			return;
		}
		h = &c->resp->head;
		/* The request went out whole; no retry from here on. */
		if (c->up_head) {
			evbuffer_free(c->up_head);
			c->up_head = NULL;
		}
		if (h->status == 101) {
			const char *bad = !c->req_ws || !h->upgrade_websocket
					      ? "unexpected 101 Switching Protocols"
					      : websocket_response_error(c, buf);

			if (bad) {
				up_close(c);
				upstream_failed(c, "bad-gateway", bad);
				return;
			}
			c->ws = mem_zalloc(sizeof(*c->ws));
			if (!c->ws) {
				conn_kill(c);
				return;
			}
			ws_checker_init(&c->ws->from_agent, WS_FROM_CLIENT);
			ws_checker_init(&c->ws->from_server, WS_FROM_SERVER);
			c->ws->scrub = c->scrub;
			scrub_stream_init(&c->ws->sc, &c->p->scrub, true);
			plog(c->p, "c%lu websocket %s", c->id, c->log_url);
			write_response_head(c, buf, true, false);
			evbuffer_drain(in, h->length);
			c->resp_started = true;
			c->rq = RQ_TUNNEL;
			c->rs = RS_TUNNEL;
			ws_pass(c, false); /* what came with the 101 */
			if (!c->dead)
				ws_pass(c, true); /* what the agent sent early */
			return;
		}
		if (h->status < 200) {
			/* 100 Continue, 103 Early Hints: pass on (not to HTTP/1.0), read on. */
			if (!c->req_http10)
				write_response_head(c, buf, false, false);
			evbuffer_drain(in, h->length);
			http_head_begin(c->resp, true);
			continue;
		}
		mem_release(c->resp_body.sc);
		memset(&c->resp_body, 0, sizeof(c->resp_body));
		if (c->req_head || h->status == 204 || h->status == 304) {
			c->resp_body.mode = BODY_NONE;
		} else if (h->chunked) {
			c->resp_body.mode = BODY_CHUNKED;
			http_chunked_init(&c->resp_body.ch);
		} else if (h->has_length) {
			c->resp_body.mode = h->content_length ? BODY_LENGTH : BODY_NONE;
			c->resp_body.left = h->content_length;
		} else {
			c->resp_body.mode = BODY_CLOSE;
		}
		if (c->scrub && c->resp_body.mode != BODY_NONE) {
			/*
			 * The secret went to this host: whatever it sends back is
			 * searched for it.  The request asked for no content coding;
			 * a compressed body could not be searched, so it is refused.
			 */
			const char *bad = unsearchable_response(h, buf);

			if (bad) {
				c->up_reusable = false;
				up_close(c);
				upstream_failed(c, "bad-gateway", bad);
				return;
			}
			c->resp_body.sc = mem_alloc(sizeof(*c->resp_body.sc));
			if (!c->resp_body.sc) {
				conn_kill(c);
				return;
			}
			scrub_stream_init(c->resp_body.sc, &c->p->scrub, false);
			c->resp_body.scrubbed = c->p->scrubbed;
		}
		chunked_out =
		    !c->req_http10 &&
		    (c->resp_body.mode == BODY_CHUNKED || c->resp_body.mode == BODY_CLOSE ||
		     (c->resp_body.sc && c->resp_body.mode == BODY_LENGTH));
		c->resp_body.out_chunked = chunked_out;
		c->up_reusable = !h->conn_close && c->resp_body.mode != BODY_CLOSE;
		/* An HTTP/1.0 agent learns where an unsized body ends only from the close. */
		if (c->req_http10 && (c->resp_body.mode == BODY_CHUNKED ||
				      c->resp_body.mode == BODY_CLOSE || c->resp_body.sc))
			c->close_after = true;
		if (c->rq == RQ_BODY)
			c->close_after = true;
		write_response_head(c, buf, false, chunked_out);
		evbuffer_drain(in, h->length);
		c->resp_started = true;
		c->rs = RS_BODY;
		pump_response(c);
		return;
	}
}
