/*
 * proxy_tunnel.c - the egress proxy's tunnels and TLS legs: CONNECT,
 * interception (TLS with the agent), transparent connections, the plain
 * tunnels of tcp rules, and the upstream connection with its TLS.
 */
#include "runtime/egress/proxy_int.h"

static void raw_shut_up(struct conn *c);

/* ---- TLS with the agent, and its events ------------------------------------------ */

/* The CONNECT was answered 200: the agent's next bytes are a TLS ClientHello. */
static void
start_tls(struct conn *c)
{
	struct proxy *p = c->p;
	SSL_CTX *ctx = proxy_server_ctx(p);
	SSL *ssl = ctx ? SSL_new(ctx) : NULL;
	struct bufferevent *tls;
	struct tlsleg *leg;

	if (!ssl || tls_server_prepare(ssl, p->ca, c->host, time(NULL)) < 0) {
		plog(p, "c%lu error: cannot prepare TLS for %s", c->id, c->host);
		SSL_free(ssl);
		conn_kill(c);
		return;
	}
	/* Over the socket bufferevent: anything the agent sent early is in its
	 * input and becomes the start of the handshake. */
	if (!(leg = tlsleg_new(c->cli_sock, ssl, true))) {
		conn_kill(c);
		return;
	}
	c->cli = tls = tlsleg_bev(leg);
	c->cli_leg = leg;
	c->cli_tls = true;
	c->rq = RQ_HANDSHAKE;
	conn_park(c, PROXY_HANDSHAKE_TIMEOUT);
	tune_filter(tls, c->cli_sock);
	bufferevent_setcb(tls, cli_read_cb, cli_write_cb, cli_event_cb, c);
	bufferevent_enable(tls, EV_READ | EV_WRITE);
	conn_update_io(c);
	if (evbuffer_get_length(bufferevent_get_input(c->cli_sock)))
		bufferevent_trigger(c->cli_sock, EV_READ, 0);
}

/* Did the handshake fail because the agent's stream is not TLS at all? */
static bool
not_tls(unsigned long e)
{
	int r = ERR_GET_REASON(e);

	return ERR_GET_LIB(e) == ERR_LIB_SSL &&
	       (r == SSL_R_WRONG_VERSION_NUMBER || r == SSL_R_HTTP_REQUEST ||
		r == SSL_R_HTTPS_PROXY_REQUEST || r == SSL_R_UNKNOWN_PROTOCOL);
}

/*
 * An HTTP rule took the CONNECT, so the proxy expected TLS, and the agent
 * sent something else (ssh, a database's protocol): only a tcp rule lets
 * that through, and only where no HTTP rule takes the host and port.
 */
void
refuse_not_tls(struct conn *c, const char *reason)
{
	char what[400], rule[400];

	snprintf(what, sizeof(what), "CONNECT %s:%u%s, then a stream that is not TLS%s", c->host,
		 c->port, c->transparent ? " (transparent)" : "", c->pinned ? " nor HTTP" : "");
	snprintf(rule, sizeof(rule), "tcp %s:%u", c->host, c->port);
	plog(c->p, "c%lu deny %s (%s): the HTTP rules inspect this host and port; '%s' in their "
		   "place would let it through uninspected",
	     c->id, what, reason, rule);
	note_denial(c->p, what, rule);
}

static void
handshake_failed(struct conn *c)
{
	SSL *ssl = tlsleg_ssl(c->cli_leg);
	const char *sni = ssl ? SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name) : NULL;
	unsigned long e = tlsleg_ssl_error(c->cli_leg);
	char reason[256] = "the agent closed the connection", s[300];

	if (e)
		tls_error_text(e, reason, sizeof(reason));
	if (sni && strcasecmp(sni, c->host) != 0)
		plog(c->p, "c%lu deny TLS handshake for CONNECT %s:%u: SNI '%s' differs", c->id,
		     c->host, c->port, esc(s, sizeof(s), sni, strlen(sni)));
	else if (not_tls(e))
		refuse_not_tls(c, reason);
	else
		plog(c->p, "c%lu TLS handshake with the agent failed for %s: %s", c->id, c->host,
		     reason);
	conn_finish(c); /* the alert is still to be sent */
}

void
cli_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct conn *c = arg;

	char how[160];

	(void)bev;
	if (what & BEV_EVENT_CONNECTED) {
		/* The TLS handshake with the agent is done: like a kept-alive
		 * connection, it waits for a request (parked). */
		tlsleg_describe(c->cli_leg, how, sizeof(how));
		plog(c->p, "c%lu TLS with the agent: %s", c->id, how);
		c->rq = RQ_HEAD;
		c->keepalive = true;
		conn_park(c, PROXY_KEEPALIVE_TIMEOUT);
		if (!c->cli_rd_done)
			event_add(c->cli_rd, NULL);
		conn_update_io(c);
		if (evbuffer_get_length(bufferevent_get_input(c->cli)))
			conn_read_head(c);
		else
			conn_release_buffers(c);
		return;
	}
	if (c->rq == RQ_HANDSHAKE) {
		handshake_failed(c);
		return;
	}
	if (c->cli_leg && tlsleg_failure(c->cli_leg))
		plog(c->p, "c%lu TLS with the agent ended: %s", c->id, tlsleg_failure(c->cli_leg));
	if (what & (BEV_EVENT_ERROR | BEV_EVENT_TIMEOUT) || c->closing) {
		conn_kill(c);
		return;
	}
	/* EOF: the agent is done sending.  Finish what is in flight. */
	c->cli_eof = true;
	if (c->raw && c->rq == RQ_TUNNEL) {
		/* Half a close: the server may still answer, until it closes. */
		c->raw_shut = true;
		raw_shut_up(c);
		return;
	}
	switch (c->rq) {
	case RQ_SNIFF:
		conn_kill(c);
		break;
	case RQ_HEAD:
		if (!c->req || c->rs == RS_IDLE)
			conn_finish(c); /* after what is queued for it */
		break;
	case RQ_BODY:
	case RQ_TUNNEL:
		/* A body cut short, or a WebSocket ending: nothing more to pass on. */
		if (c->rq == RQ_TUNNEL)
			conn_finish(c);
		else
			conn_kill(c);
		break;
	default:
		break;
	}
}

void
cli_write_cb(struct bufferevent *bev, void *arg)
{
	struct conn *c = arg;

	if (c->closing)
		return; /* conn_check_closed() watches */
	if (c->rq == RQ_SEND200) {
		if (evbuffer_get_length(bufferevent_get_output(bev)) == 0)
			start_tls(c);
		return;
	}
	conn_update_io(c);
}

/* ---- tcp rules' tunnels ---------------------------------------------------------- */

/* A tcp rule's tunnel: what one side sent goes to the other, unread. */
static void
raw_pass(struct conn *c, bool from_agent)
{
	struct evbuffer *in = bufferevent_get_input(from_agent ? c->cli : c->up);

	if (!c->up)
		return;
	evbuffer_add_buffer(bufferevent_get_output(from_agent ? c->up : c->cli), in);
	conn_update_io(c);
	raw_shut_up(c);
}

/* The agent's EOF reaches the server once all it sent before has gone. */
static void
raw_shut_up(struct conn *c)
{
	if (!c->raw || !c->raw_shut || c->dead || !c->up_sock || !c->up_connected ||
	    evbuffer_get_length(bufferevent_get_output(c->up_sock)))
		return;
	c->raw_shut = false;
	shutdown(bufferevent_getfd(c->up_sock), SHUT_WR);
}

/* The server accepted a tcp rule's connection: 200, then bytes both ways. */
static void
raw_established(struct conn *c)
{
	char what[PROXY_TARGET_MAX + 64], addr[INET6_ADDRSTRLEN];

	dest_format((struct sockaddr *)&c->addrs[c->next_addr - 1], addr, sizeof(addr));
	plog(c->p, "c%lu tunnel %s to %s (tcp rule: not inspected)", c->id,
	     dest_what(c, what, sizeof(what)), addr);
	c->p->stats.tcp_tunnels++;
	if (!c->transparent)
		evbuffer_add_printf(bufferevent_get_output(c->cli),
				    "HTTP/1.1 200 Connection established\r\n\r\n");
	c->resp_started = true;
	c->rq = RQ_TUNNEL;
	c->rs = RS_TUNNEL;
	conn_update_io(c);
	raw_pass(c, false); /* what the server sent at once (an SSH banner) */
	if (!c->dead)
		raw_pass(c, true);
}

void
cli_read_cb(struct bufferevent *bev, void *arg)
{
	struct conn *c = arg;

	(void)bev;
	switch (c->rq) {
	case RQ_HEAD:
		conn_read_head(c);
		break;
	case RQ_SNIFF:
		sniff(c);
		break;
	case RQ_BODY:
		pump_request(c);
		break;
	case RQ_TUNNEL:
		if (c->raw)
			raw_pass(c, true);
		else
			ws_pass(c, true);
		break;
	default:
		break;
	}
}

/* ---- CONNECT, and transparent connections ---------------------------------------- */

/*
 * 403 for a CONNECT no rule takes, with a rule that would: an HTTP one on
 * 443 and 80 (a rule without a port means 443 for a tunnel), a tcp rule on
 * any other port, where the stream is seldom HTTPS (ssh on 22, a database).
 */
static void
deny_connect(struct conn *c)
{
	char hp[300], rule[400], body[1400];
	bool tcp = c->port != EGRESS_PORT_TLS && c->port != EGRESS_PORT_PLAIN;

	if (c->port == EGRESS_PORT_TLS)
		snprintf(hp, sizeof(hp), "%s", c->host);
	else
		snprintf(hp, sizeof(hp), "%s:%u", c->host, c->port);
	plog(c->p, "c%lu deny %s: no rule names %s", c->id, c->log_url, hp);
	if (tcp)
		snprintf(rule, sizeof(rule), "tcp %s", hp);
	else
		snprintf(rule, sizeof(rule), "GET %s/**", hp);
	note_denial(c->p, c->log_url ? c->log_url : hp, rule);
	if (tcp)
		snprintf(body, sizeof(body),
			 "omnibox: %s is not allowed by the egress policy: no rule names %s.\n"
			 "A rule that would allow a TCP stream to it, not inspected:\n  %s\n"
			 "or, for HTTPS requests to it, inspected:\n  GET %s/**\n",
			 c->log_url, hp, rule, hp);
	else
		snprintf(body, sizeof(body),
			 "omnibox: %s is not allowed by the egress policy: no rule names "
			 "%s.\nA rule that would allow requests to it:\n  %s\n",
			 c->log_url, hp, rule);
	conn_reply(c, 403, "blocked-by-policy", body, false);
}

/* Does the CONNECT come from the sandbox's relay for a client that ignores the proxy? */
static bool
connect_is_transparent(const struct http_head *h, const char *buf)
{
	size_t len = 0;
	const char *v = head_field(h, buf, "Omnibox-Transparent", &len);

	return v && len == 1 && v[0] == '1';
}

void
handle_connect(struct conn *c, const char *buf)
{
	const struct http_head *h = &c->req->head;
	const char *target = http_span_ptr(buf, h->target), *why;
	struct evbuffer *in = bufferevent_get_input(c->cli);
	struct http_url u;
	struct in_addr v4;
	char t[600], rule[1200];
	enum egress_connect how;
	ssize_t r;

	esc(t, sizeof(t), target, h->target.len);
	c->transparent = connect_is_transparent(h, buf);
	free(c->log_url);
	c->log_url = malloc(strlen(t) + 32);
	if (c->log_url)
		sprintf(c->log_url, "CONNECT %s%s", t, c->transparent ? " (transparent)" : "");
	c->req_close = true; /* a refused CONNECT never becomes anything else */
	/* A transparent connection's stream follows its CONNECT at once. */
	if (!c->transparent && evbuffer_get_length(in) > h->length) {
		bad_request(c, "data after CONNECT before the tunnel was established");
		return;
	}
	if (http_parse_authority(target, h->target.len, &u, &why) < 0) {
		bad_request(c, why);
		return;
	}
	if (u.ipv6) {
		bad_request(c,
			    "IPv6 literal hosts are not supported (no egress rule can name one)");
		return;
	}
	if (!egress_host_is_safe(u.host, u.host_len)) {
		bad_request(c, "the host holds characters outside [A-Za-z0-9.-]");
		return;
	}
	free(c->host);
	c->host = strndup(u.host, u.host_len);
	if (!c->host) {
		conn_kill(c);
		return;
	}
	lower(c->host);
	c->port = u.port;
	if (dest_classify_host(c->host, strlen(c->host), &v4, &why) == DEST_HOST_BAD) {
		c->after = AFTER_TUNNEL;
		dest_refuse(c, c->log_url, why);
		return;
	}
	how = c->transparent
		  ? egress_decide_transparent(c->p->matcher, c->host, strlen(c->host), c->port, &r)
		  : egress_decide_connect(c->p->matcher, c->host, strlen(c->host), c->port, &r);
	if (how == EGRESS_CONNECT_DENY) {
		deny_connect(c);
		return;
	}
	up_close(c);
	if (how == EGRESS_CONNECT_TUNNEL)
		plog(c->p, "c%lu allow %s as a plain tunnel, not inspected, by %s", c->id,
		     c->log_url, rule_desc(c->p, r, rule, sizeof(rule)));
	else
		plog(c->p, "c%lu allow %s host by %s", c->id, c->log_url,
		     rule_desc(c->p, r, rule, sizeof(rule)));
	evbuffer_drain(in, h->length);
	mem_release(c->req);
	c->req = NULL;
	c->req_close = false;
	/* No credential ever goes into a tcp rule's tunnel: the proxy never
	 * reads it (validate refuses a credential host only a tcp rule reaches). */
	c->raw = how == EGRESS_CONNECT_TUNNEL;
	dest_resolve(c, c->raw ? AFTER_RAW : AFTER_TUNNEL);
}

/*
 * A transparent connection, its host and addresses checked: a TLS record
 * first (a ClientHello) is intercepted as after a CONNECT; anything else
 * is read as plain HTTP for this host and port alone.
 */
void
sniff(struct conn *c)
{
	unsigned char first;

	if (evbuffer_copyout(bufferevent_get_input(c->cli), &first, 1) != 1)
		return;
	if (first == 0x16) {
		start_tls(c);
		return;
	}
	c->pinned = true;
	c->rq = RQ_HEAD;
	conn_park(c, PROXY_HEAD_TIMEOUT);
	conn_update_io(c);
	conn_read_head(c);
}

/* Every address passed the check. */
void
dest_ready(struct conn *c)
{
	char what[PROXY_TARGET_MAX + 64];

	if (c->after == AFTER_TUNNEL) {
		char addr[INET6_ADDRSTRLEN];

		dest_format((struct sockaddr *)&c->addrs[0], addr, sizeof(addr));
		plog(c->p, "c%lu tunnel %s to %s", c->id, dest_what(c, what, sizeof(what)), addr);
		if (c->transparent) {
			c->rq = RQ_SNIFF;
			conn_park(c, PROXY_HEAD_TIMEOUT);
			conn_update_io(c);
			if (evbuffer_get_length(bufferevent_get_input(c->cli)))
				sniff(c);
			return;
		}
		c->rq = RQ_SEND200;
		evbuffer_add_printf(bufferevent_get_output(c->cli),
				    "HTTP/1.1 200 Connection established\r\n\r\n");
		/* Out now if the socket takes it; else cli_write_cb() goes on. */
		sock_flush(c->cli_sock);
		if (evbuffer_get_length(bufferevent_get_output(c->cli)) == 0)
			start_tls(c);
		return;
	}
	/* A tcp rule's tunnel: the 200 once the server has accepted, so a
	 * refused connection is a 502, not a stream that ends at once. */
	c->rq = RQ_CONNECT;
	up_open(c);
}

/* ---- the upstream side --------------------------------------------------------------- */

static void up_read_cb(struct bufferevent *bev, void *arg);
static void up_write_cb(struct bufferevent *bev, void *arg);
static void up_event_cb(struct bufferevent *bev, short what, void *arg);

void
upstream_failed(struct conn *c, const char *kind, const char *why)
{
	char body[1024];

	plog(c->p, "c%lu %s %s: %s", c->id, kind, c->log_url ? c->log_url : "", why);
	if (c->resp_started) {
		/* Part of the answer is out: only a cut connection tells the truth. */
		conn_kill(c);
		return;
	}
	if (c->transparent && !c->cli_tls && !c->pinned) {
		conn_kill(c);
		return;
	}
	snprintf(body, sizeof(body), "omnibox: %s:%u: %s\n", c->host, c->port, why);
	c->req_close = true;
	c->rq = RQ_HEAD; /* the body (if any) was not read: conn_reply closes */
	c->p->stats.denied++;
	{
		struct evbuffer *out = bufferevent_get_output(c->cli);

		evbuffer_add_printf(
		    out,
		    "HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain; "
		    "charset=utf-8\r\nX-Omnibox-Error: %s\r\nContent-Length: %zu\r\n"
		    "Connection: close\r\n\r\n%s",
		    kind, c->req_head ? 0 : strlen(body), c->req_head ? "" : body);
	}
	conn_finish(c);
}

/* Send the head (and then the body) on a connected, or reused, upstream. */
static void
up_send_request(struct conn *c)
{
	struct evbuffer *out = bufferevent_get_output(c->up);
	size_t n = evbuffer_get_length(c->up_head);

	if (c->up_rd && !c->up_rd_done)
		event_del(c->up_rd); /* no idle timeout while a request is out */
	evbuffer_add(out, evbuffer_pullup(c->up_head, -1), n);
	c->p->stats.requests++;
	c->rs = RS_HEAD;
	c->rq = c->req_body.done ? RQ_WAIT : RQ_BODY;
	c->body_moved = 0;
	conn_unpark(c, c->rq == RQ_BODY ? PROXY_BODY_WINDOW : 0);
	conn_update_io(c);
	if (c->rq == RQ_BODY)
		pump_request(c);
}

void
up_open(struct conn *c)
{
	struct proxy *p = c->p;
	struct timeval t = {CONNECT_TIMEOUT, 0};
	int one = 1;

	if (c->up && c->up_connected && c->up_reusable) {
		up_send_request(c);
		return;
	}
	up_close(c);
	while (c->next_addr < c->n_addrs) {
		struct sockaddr *sa = (struct sockaddr *)&c->addrs[c->next_addr++];
		int len = sa->sa_family == AF_INET ? sizeof(struct sockaddr_in)
						   : sizeof(struct sockaddr_in6);
		struct bufferevent *b = bufferevent_socket_new(p->base, -1, BEV_OPT_CLOSE_ON_FREE);
		evutil_socket_t fd;

		if (!b) {
			conn_kill(c);
			return;
		}
		tune_sock(b);
		bufferevent_setcb(b, up_read_cb, up_write_cb, up_event_cb, c);
		c->up = c->up_sock = b;
		/* Only ever a checked address: no second lookup (DNS rebinding). */
		if (bufferevent_socket_connect(b, sa, len) < 0) {
			up_close(c);
			continue;
		}
		fd = bufferevent_getfd(b);
		/* Nothing of the proxy may leak into what omnibox-run starts. */
		fcntl(fd, F_SETFD, FD_CLOEXEC);
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		c->up_rd = event_new(p->base, fd, EV_READ | EV_PERSIST, up_rd_cb, c);
		if (!c->up_rd) {
			conn_kill(c);
			return;
		}
		/* Read from the start (a refused connection reads as an error), with
		 * the connect and handshake timeout until the connection is up. */
		event_add(c->up_rd, &t);
		return;
	}
	upstream_failed(c, "upstream-unreachable", "cannot connect to any of its addresses");
}

static void
up_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct conn *c = arg;
	char why[300];

	(void)bev;
	if (what & BEV_EVENT_CONNECTED) {
		if (c->cli_tls && c->up == c->up_sock) {
			/* TCP is up: TLS on top, verified against the system store. */
			SSL_CTX *ctx = proxy_client_ctx(c->p);
			SSL *ssl = ctx ? SSL_new(ctx) : NULL;
			struct tlsleg *leg;

			if (!ssl || tls_client_prepare(ssl, c->host) < 0) {
				SSL_free(ssl);
				up_close(c);
				upstream_failed(c, "upstream-tls-error", "cannot set up TLS");
				return;
			}
			if (!(leg = tlsleg_new(c->up_sock, ssl, false))) {
				up_close(c);
				upstream_failed(c, "upstream-tls-error", "cannot set up TLS");
				return;
			}
			c->up = tlsleg_bev(leg);
			c->up_leg = leg;
			tune_filter(c->up, c->up_sock);
			bufferevent_setcb(c->up, up_read_cb, up_write_cb, up_event_cb, c);
			bufferevent_enable(c->up, EV_READ | EV_WRITE);
			return;
		}
		if (c->up_leg) {
			tlsleg_describe(c->up_leg, why, sizeof(why));
			plog(c->p, "c%lu TLS with the server: %s", c->id, why);
		}
		c->up_connected = true;
		c->up_reusable = false;
		if (!c->up_rd_done)
			event_del(c->up_rd); /* conn_update_io() adds it back, untimed */
		if (c->raw)
			raw_established(c);
		else if (c->rq == RQ_CONNECT)
			up_send_request(c);
		else
			conn_update_io(c);
		return;
	}
	if (!c->up_connected) {
		unsigned long e = c->up_leg ? tlsleg_ssl_error(c->up_leg) : 0;
		const char *failed = c->up_leg ? tlsleg_failure(c->up_leg) : NULL;

		if (e || failed) {
			char reason[256];

			if (e)
				tls_error_text(e, reason, sizeof(reason));
			else
				snprintf(reason, sizeof(reason), "%s", failed);
			snprintf(why, sizeof(why), "TLS with the server failed: %s", reason);
			up_close(c);
			upstream_failed(c, "upstream-tls-error", why);
			return;
		}
		/* TCP did not connect: the next checked address, if any. */
		up_open(c);
		return;
	}
	if (c->up_leg && tlsleg_failure(c->up_leg))
		plog(c->p, "c%lu TLS with the server ended: %s", c->id, tlsleg_failure(c->up_leg));
	if (c->rs == RS_BODY && c->resp_body.mode == BODY_CLOSE && (what & BEV_EVENT_EOF)) {
		/* A body delimited by the close: drain what came with it. */
		pump_response(c);
		if (c->dead)
			return;
		body_end_data(&c->resp_body, bufferevent_get_output(c->cli));
		if (c->resp_body.out_chunked)
			evbuffer_add(bufferevent_get_output(c->cli), "0\r\n\r\n", 5);
		c->resp_body.done = true;
		c->up_reusable = false;
		c->rs = RS_DONE;
		up_close(c);
		if (c->rq == RQ_WAIT)
			request_done(c);
		else
			conn_finish(c);
		return;
	}
	switch (c->rs) {
	case RS_IDLE:
	case RS_DONE:
		up_close(c); /* a kept-alive connection the server closed */
		conn_update_io(c);
		return;
	case RS_HEAD:
		if (c->up_used && !c->retried && c->req_body.mode == BODY_NONE &&
		    evbuffer_get_length(bufferevent_get_input(c->up)) == 0) {
			/* The server closed a kept-alive connection as the request
			 * went out: send it once more on a fresh one. */
			c->retried = true;
			up_close(c);
			c->next_addr = 0;
			c->rq = RQ_CONNECT;
			up_open(c);
			return;
		}
		break;
	case RS_TUNNEL:
		if (c->raw)
			plog(c->p, "c%lu tunnel %s ended by the server%s", c->id,
			     c->log_url ? c->log_url : "",
			     what & BEV_EVENT_EOF ? "" : " (connection error)");
		up_close(c);
		conn_finish(c);
		return;
	default:
		break;
	}
	snprintf(why, sizeof(why), "the server %s",
		 what & BEV_EVENT_TIMEOUT ? "timed out"
		 : what & BEV_EVENT_EOF	  ? "closed the connection early"
					  : "connection failed");
	up_close(c);
	upstream_failed(c, "upstream-error", why);
}

static void
up_write_cb(struct bufferevent *bev, void *arg)
{
	struct conn *c = arg;

	(void)bev;
	conn_update_io(c);
	raw_shut_up(c);
}

static void
up_read_cb(struct bufferevent *bev, void *arg)
{
	struct conn *c = arg;

	(void)bev;
	switch (c->rs) {
	case RS_HEAD:
		read_response(c);
		break;
	case RS_BODY:
		pump_response(c);
		break;
	case RS_TUNNEL:
		if (c->raw)
			raw_pass(c, false);
		else
			ws_pass(c, false);
		break;
	default:
		/* A tcp rule's server may speak first (an SSH banner, a database's
		 * greeting), and be read before its connection is seen made: the
		 * bytes wait for raw_established(). */
		if (c->raw && c->rq == RQ_CONNECT)
			break;
		/* Bytes nobody asked for: the connection cannot be trusted for reuse. */
		up_close(c);
		conn_update_io(c);
		break;
	}
}
