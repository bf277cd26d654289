/*
 * tlsleg.c - one TLS leg of the proxy: OpenSSL's handshake, then records
 * of tlsrec.c, in a libevent filter (tlsleg.h).
 */
#include "runtime/egress/tlsleg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <openssl/err.h>

#include "compiler/base/textesc.h"
#include "runtime/egress/tlsrec.h"

enum leg_state {
	LEG_HANDSHAKE,
	LEG_RECORDS, /* tlsrec.c's */
	LEG_OPENSSL, /* OpenSSL's records (not TLS 1.3, or another suite) */
};

/* Handshake message types a peer may send after the handshake. */
enum { HS_NEW_SESSION_TICKET = 4, HS_KEY_UPDATE = 24 };
/* Alerts (RFC 8446 6). */
enum {
	AL_CLOSE_NOTIFY = 0,
	AL_UNEXPECTED_MESSAGE = 10,
	AL_BAD_RECORD_MAC = 20,
	AL_DECODE_ERROR = 50,
	AL_USER_CANCELED = 90,
};

struct tlsleg {
	struct bufferevent *bev, *sock;
	struct evbuffer_cb_entry *drained;
	SSL *ssl;
	enum leg_state state;
	bool server, failed, eof, shut;
	bool owe_update; /* the peer asked for a KeyUpdate: ours goes before our next record */
	unsigned long ssl_err;
	const char *why;
	const char *version, *suite; /* OpenSSL's names, static */
	/* The traffic secrets from the key log, client's [0] and server's [1],
	 * until the handshake is done. */
	unsigned char secret[2][EVP_MAX_MD_SIZE];
	size_t secret_len[2];
	struct tlsrec_key rd, wr;
	/* The post-handshake message being read: its header, and what is left of it. */
	unsigned char hs_hdr[4];
	size_t hs_have;
	size_t hs_left;
};

static int leg_index = -1;

/* ---- the keys ---------------------------------------------------------------------- */

/* "CLIENT_TRAFFIC_SECRET_0 <client random> <secret>", in hex: the secret into the leg. */
static void
keylog(const SSL *ssl, const char *line)
{
	static const char *const names[2] = {"CLIENT_TRAFFIC_SECRET_0 ", "SERVER_TRAFFIC_SECRET_0 "};
	struct tlsleg *l = leg_index >= 0 ? SSL_get_ex_data(ssl, leg_index) : NULL;
	const char *p;
	size_t n = 0;
	int w;

	if (!l)
		return;
	for (w = 0; w < 2 && strncmp(line, names[w], strlen(names[w])) != 0; w++)
		;
	if (w == 2 || !(p = strchr(line + strlen(names[w]), ' ')))
		return;
	for (p++; p[0] && p[1] && n < sizeof(l->secret[w]); p += 2) {
		int hi = text_hex_digit((unsigned char)p[0]), lo = text_hex_digit((unsigned char)p[1]);

		if (hi < 0 || lo < 0)
			break;
		l->secret[w][n++] = (unsigned char)(hi << 4 | lo);
	}
	l->secret_len[w] = *p ? 0 : n; /* a line not wholly hex gives no secret */
}

void
tlsleg_ctx_init(SSL_CTX *ctx)
{
	if (leg_index < 0)
		leg_index = SSL_get_ex_new_index(0, NULL, NULL, NULL, NULL);
	SSL_CTX_set_keylog_callback(ctx, keylog);
}

/* ---- events and failures ------------------------------------------------------------ */

static void
tell(struct tlsleg *l, short what)
{
	/* Deferred: the filter's own callbacks are under way. */
	bufferevent_trigger_event(l->bev, what, BEV_TRIG_DEFER_CALLBACKS);
}

static void send_alert(struct tlsleg *l, unsigned char desc);

static void
fail(struct tlsleg *l, const char *why, int alert)
{
	if (l->failed)
		return;
	if (alert >= 0 && l->state == LEG_RECORDS && !l->shut)
		send_alert(l, (unsigned char)alert);
	l->failed = true;
	l->why = why;
	tell(l, BEV_EVENT_ERROR | BEV_EVENT_READING);
}

/* ---- the BIO under OpenSSL: the socket bufferevent's buffers ------------------------- */

static int
bio_read(BIO *b, char *buf, int len)
{
	struct tlsleg *l = BIO_get_data(b);
	int n = evbuffer_remove(bufferevent_get_input(l->sock), buf, (size_t)len);

	BIO_clear_retry_flags(b);
	if (n <= 0) {
		BIO_set_retry_read(b);
		return -1;
	}
	return n;
}

static int
bio_write(BIO *b, const char *buf, int len)
{
	struct tlsleg *l = BIO_get_data(b);

	BIO_clear_retry_flags(b);
	return evbuffer_add(bufferevent_get_output(l->sock), buf, (size_t)len) == 0 ? len : -1;
}

static long
bio_ctrl(BIO *b, int cmd, long num, void *ptr)
{
	(void)b;
	(void)num;
	(void)ptr;
	return cmd == BIO_CTRL_FLUSH ? 1 : 0;
}

static BIO *
leg_bio(struct tlsleg *l)
{
	static BIO_METHOD *m;
	BIO *b;

	if (!m && (m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "tlsleg")) &&
	    (!BIO_meth_set_read(m, bio_read) || !BIO_meth_set_write(m, bio_write) ||
	     !BIO_meth_set_ctrl(m, bio_ctrl))) {
		BIO_meth_free(m);
		m = NULL;
	}
	if (!m || !(b = BIO_new(m)))
		return NULL;
	BIO_set_data(b, l);
	BIO_set_init(b, 1);
	return b;
}

/* ---- sealing into the socket's output ------------------------------------------------ */

static int seal(struct tlsleg *l, unsigned char type, const struct iovec *in, int nin, size_t n);

static int
seal_bytes(struct tlsleg *l, unsigned char type, const void *p, size_t n)
{
	struct iovec v = {(void *)p, n};

	return seal(l, type, &v, 1, n);
}

/* A KeyUpdate of ours under the current key, then the next key (RFC 8446 4.6.3). */
static int
update_write_key(struct tlsleg *l, bool request)
{
	unsigned char msg[5] = {HS_KEY_UPDATE, 0, 0, 1, request};
	struct iovec v = {msg, sizeof(msg)};
	struct evbuffer *out = bufferevent_get_output(l->sock);
	struct iovec room;
	ssize_t r;

	if (evbuffer_reserve_space(out, sizeof(msg) + TLSREC_OVERHEAD, &room, 1) != 1 ||
	    (r = tlsrec_seal(&l->wr, TLSREC_HANDSHAKE, &v, 1, sizeof(msg), room.iov_base)) < 0)
		return -1;
	room.iov_len = (size_t)r;
	evbuffer_commit_space(out, &room, 1);
	return tlsrec_key_update(&l->wr);
}

static int
seal(struct tlsleg *l, unsigned char type, const struct iovec *in, int nin, size_t n)
{
	struct evbuffer *out = bufferevent_get_output(l->sock);
	struct iovec room;
	ssize_t r;

	/* One answer for any number of requests (RFC 8446 4.6.3), sent with
	 * what the proxy sends anyway: a peer cannot make the proxy write. */
	if ((l->owe_update || l->wr.seq >= TLSREC_KEY_RECORDS) && update_write_key(l, false) < 0)
		return -1;
	l->owe_update = false;
	if (evbuffer_reserve_space(out, n + TLSREC_OVERHEAD, &room, 1) != 1 ||
	    (r = tlsrec_seal(&l->wr, type, in, nin, n, room.iov_base)) < 0)
		return -1;
	room.iov_len = (size_t)r;
	return evbuffer_commit_space(out, &room, 1);
}

static void
send_alert(struct tlsleg *l, unsigned char desc)
{
	unsigned char a[2] = {desc == AL_CLOSE_NOTIFY || desc == AL_USER_CANCELED ? 1 : 2, desc};

	seal_bytes(l, TLSREC_ALERT, a, sizeof(a));
	l->shut = true;
}

/* ---- the handshake ------------------------------------------------------------------ */

static void
handshake_done(struct tlsleg *l)
{
	const SSL_CIPHER *c = SSL_get_current_cipher(l->ssl);
	const EVP_CIPHER *cipher;
	const EVP_MD *md;
	int mine = l->server ? 1 : 0;

	l->version = SSL_get_version(l->ssl);
	l->suite = c ? SSL_CIPHER_get_name(c) : "(none)";
	if (SSL_has_pending(l->ssl)) {
		/* Read ahead is off, so OpenSSL holds nothing past the handshake. */
		fail(l, "OpenSSL holds bytes past the handshake", -1);
		return;
	}
	/* A server leg that sent session tickets has used sequence numbers of
	 * its key already: OpenSSL carries it on (the proxy's sends none). */
	if (SSL_version(l->ssl) == TLS1_3_VERSION && c && !(l->server && SSL_get_num_tickets(l->ssl)) &&
	    tlsrec_suite(SSL_CIPHER_get_id(c), &cipher, &md) && l->secret_len[0] &&
	    l->secret_len[1]) {
		if (tlsrec_key_set(&l->rd, cipher, md, false, l->secret[!mine],
				   l->secret_len[!mine]) < 0 ||
		    tlsrec_key_set(&l->wr, cipher, md, true, l->secret[mine], l->secret_len[mine]) <
			0) {
			fail(l, "cannot set up the record keys", -1);
			return;
		}
		l->state = LEG_RECORDS;
		SSL_free(l->ssl);
		l->ssl = NULL;
	} else {
		l->state = LEG_OPENSSL;
	}
	OPENSSL_cleanse(l->secret, sizeof(l->secret));
	/* At once, as bufferevent_openssl did: before any record that came with
	 * the peer's Finished is opened and read. */
	bufferevent_trigger_event(l->bev, BEV_EVENT_CONNECTED, 0);
}

/* One more step of the handshake: 1 done, 0 under way, -1 failed (told). */
static int
handshake_step(struct tlsleg *l)
{
	int r, e;

	ERR_clear_error();
	r = SSL_do_handshake(l->ssl);
	if (r == 1) {
		handshake_done(l);
		return l->failed ? -1 : 1;
	}
	e = SSL_get_error(l->ssl, r);
	if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
		return 0;
	l->ssl_err = ERR_peek_last_error();
	ERR_clear_error();
	fail(l, "the TLS handshake failed", -1);
	return -1;
}

/* ---- what the peer sends -------------------------------------------------------------- */

static void
key_update(struct tlsleg *l, unsigned char request)
{
	if (request > 1) {
		fail(l, "a KeyUpdate that is neither requested nor not", AL_DECODE_ERROR);
		return;
	}
	if (tlsrec_key_update(&l->rd) < 0)
		fail(l, "cannot update the record keys", -1);
	else if (request)
		l->owe_update = true;
}

/* The plaintext of a handshake record after the handshake: tickets skipped, KeyUpdate taken. */
static void
post_handshake(struct tlsleg *l, const unsigned char *p, size_t n)
{
	if (n == 0)
		fail(l, "an empty handshake record", AL_UNEXPECTED_MESSAGE);
	while (n && !l->failed) {
		if (l->hs_have < 4) {
			l->hs_hdr[l->hs_have++] = *p++;
			n--;
			if (l->hs_have < 4)
				continue;
			l->hs_left = (size_t)l->hs_hdr[1] << 16 | (size_t)l->hs_hdr[2] << 8 | l->hs_hdr[3];
			if (l->hs_hdr[0] == HS_KEY_UPDATE ? l->hs_left != 1
			    : l->hs_hdr[0] != HS_NEW_SESSION_TICKET || l->server) {
				fail(l, l->hs_hdr[0] == HS_KEY_UPDATE ? "a malformed KeyUpdate"
								      : "a handshake message after the handshake",
				     AL_UNEXPECTED_MESSAGE);
				return;
			}
			continue;
		}
		if (l->hs_hdr[0] == HS_KEY_UPDATE) {
			/* Its last byte ends its record: the next one is under the new key. */
			if (n != 1) {
				fail(l, "a KeyUpdate that does not end its record", AL_UNEXPECTED_MESSAGE);
				return;
			}
			l->hs_have = 0;
			l->hs_left = 0;
			key_update(l, p[0]);
			return;
		}
		size_t m = n < l->hs_left ? n : l->hs_left;

		p += m;
		n -= m;
		l->hs_left -= m;
		if (l->hs_left == 0)
			l->hs_have = 0;
	}
}

static void
alert(struct tlsleg *l, const unsigned char *p, size_t n)
{
	if (n != 2) {
		fail(l, "a malformed alert", AL_DECODE_ERROR);
	} else if (p[1] == AL_CLOSE_NOTIFY) {
		l->eof = true;
		tell(l, BEV_EVENT_EOF | BEV_EVENT_READING);
	} else if (p[1] != AL_USER_CANCELED) {
		fail(l, "the peer sent an alert", -1);
	}
}

/* One record at the head of SRC, opened into DST: >0 application bytes, 0 none, -1 none yet. */
static ssize_t
record_in(struct tlsleg *l, struct evbuffer *src, struct evbuffer *dst)
{
	unsigned char hdr[TLSREC_HEADER], type = 0;
	struct iovec body[16], out;
	struct evbuffer_ptr at;
	size_t len;
	ssize_t n;
	int k;

	if (evbuffer_copyout(src, hdr, sizeof(hdr)) < (ev_ssize_t)sizeof(hdr))
		return -1;
	len = (size_t)hdr[3] << 8 | hdr[4];
	if (hdr[0] != TLSREC_APPDATA || hdr[1] != 3 || hdr[2] != 3 || len > TLSREC_MAX_BODY ||
	    len <= TLSREC_TAG) {
		fail(l, "a record that is not a protected TLS 1.3 record", AL_UNEXPECTED_MESSAGE);
		return 0;
	}
	if (evbuffer_get_length(src) < sizeof(hdr) + len)
		return -1;
	if (evbuffer_ptr_set(src, &at, sizeof(hdr), EVBUFFER_PTR_SET) < 0 ||
	    (k = evbuffer_peek(src, (ev_ssize_t)len, &at, body, 16)) > 16) {
		evbuffer_pullup(src, (ev_ssize_t)(sizeof(hdr) + len));
		evbuffer_ptr_set(src, &at, sizeof(hdr), EVBUFFER_PTR_SET);
		k = evbuffer_peek(src, (ev_ssize_t)len, &at, body, 16);
	}
	if (k < 1 || k > 16 || evbuffer_reserve_space(dst, (ev_ssize_t)len, &out, 1) != 1) {
		fail(l, "out of memory", -1);
		return 0;
	}
	n = tlsrec_open(&l->rd, hdr, body, k, len, out.iov_base, &type);
	evbuffer_drain(src, sizeof(hdr) + len);
	if (n < 0) {
		fail(l, "a record that does not verify", AL_BAD_RECORD_MAC);
		return 0;
	}
	if (type != TLSREC_HANDSHAKE && l->hs_have) {
		fail(l, "a record inside a handshake message", AL_UNEXPECTED_MESSAGE);
		return 0;
	}
	switch (type) {
	case TLSREC_APPDATA:
		if (n == 0)
			return 0;
		out.iov_len = (size_t)n;
		evbuffer_commit_space(dst, &out, 1);
		return n;
	case TLSREC_HANDSHAKE:
		post_handshake(l, out.iov_base, (size_t)n);
		return 0;
	case TLSREC_ALERT:
		alert(l, out.iov_base, (size_t)n);
		return 0;
	default:
		fail(l, "a record of an unexpected type", AL_UNEXPECTED_MESSAGE);
		return 0;
	}
}

/* OpenSSL's records: what it can decrypt now, into DST. */
static bool
openssl_in(struct tlsleg *l, struct evbuffer *dst, ev_ssize_t lim)
{
	bool produced = false;

	while (!l->failed && !l->eof && lim != 0) {
		size_t want = lim > 0 && lim < TLSREC_MAX_PLAIN ? (size_t)lim : TLSREC_MAX_PLAIN, got;
		struct iovec v;
		int e;

		if (evbuffer_reserve_space(dst, (ev_ssize_t)want, &v, 1) != 1) {
			fail(l, "out of memory", -1);
			break;
		}
		ERR_clear_error();
		if (SSL_read_ex(l->ssl, v.iov_base, want, &got) == 1) {
			v.iov_len = got;
			evbuffer_commit_space(dst, &v, 1);
			produced = true;
			if (lim > 0)
				lim -= (ev_ssize_t)got < lim ? (ev_ssize_t)got : lim;
			continue;
		}
		e = SSL_get_error(l->ssl, 0);
		if (e == SSL_ERROR_ZERO_RETURN) {
			l->eof = true;
			tell(l, BEV_EVENT_EOF | BEV_EVENT_READING);
		} else if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) {
			l->ssl_err = ERR_peek_last_error();
			ERR_clear_error();
			fail(l, "OpenSSL could not read a record", -1);
		}
		break;
	}
	return produced;
}

static enum bufferevent_filter_result
leg_in(struct evbuffer *src, struct evbuffer *dst, ev_ssize_t lim,
       enum bufferevent_flush_mode mode, void *arg)
{
	struct tlsleg *l = arg;
	bool produced = false;
	ssize_t n;

	(void)mode;
	if (l->state == LEG_HANDSHAKE && !l->failed && handshake_step(l) <= 0)
		return BEV_NEED_MORE;
	if (l->failed || l->eof) {
		/* Nothing after an error or a close_notify is the peer's to say. */
		evbuffer_drain(src, evbuffer_get_length(src));
		return BEV_NEED_MORE;
	}
	if (l->state == LEG_OPENSSL)
		return openssl_in(l, dst, lim) ? BEV_OK : BEV_NEED_MORE;
	while (!l->failed && !l->eof && lim != 0 && (n = record_in(l, src, dst)) >= 0) {
		if (n > 0)
			produced = true;
		if (lim > 0)
			lim -= n < lim ? n : lim;
	}
	return produced ? BEV_OK : BEV_NEED_MORE;
}

/* ---- what the proxy sends ------------------------------------------------------------ */

static enum bufferevent_filter_result
leg_out(struct evbuffer *src, struct evbuffer *dst, ev_ssize_t lim,
	enum bufferevent_flush_mode mode, void *arg)
{
	struct tlsleg *l = arg;
	size_t sent = 0;

	(void)dst; /* the socket's output, which seal() and OpenSSL's BIO write */
	(void)mode;
	if (l->state == LEG_HANDSHAKE || l->failed)
		return BEV_NEED_MORE;
	if (l->shut) {
		evbuffer_drain(src, evbuffer_get_length(src));
		return BEV_NEED_MORE;
	}
	while (evbuffer_get_length(src) && (lim < 0 || sent < (size_t)lim)) {
		struct iovec in[8];
		size_t n = evbuffer_get_length(src), w = 0;
		int k;

		if (n > TLSREC_MAX_PLAIN)
			n = TLSREC_MAX_PLAIN;
		k = evbuffer_peek(src, (ev_ssize_t)n, NULL, in, 8);
		if (k > 8) {
			/* Scattered: this record takes what the first 8 pieces hold. */
			k = 8;
			n = 0;
			for (int i = 0; i < k; i++)
				n += in[i].iov_len;
		}
		if (l->state == LEG_OPENSSL) {
			ERR_clear_error();
			if (SSL_write_ex(l->ssl, in[0].iov_base, in[0].iov_len < n ? in[0].iov_len : n,
					 &w) != 1) {
				l->ssl_err = ERR_peek_last_error();
				ERR_clear_error();
				fail(l, "OpenSSL could not write a record", -1);
				return BEV_ERROR;
			}
		} else if (seal(l, TLSREC_APPDATA, in, k, n) < 0) {
			fail(l, "cannot seal a record", -1);
			return BEV_ERROR;
		} else {
			w = n;
		}
		evbuffer_drain(src, w);
		sent += w;
	}
	return sent ? BEV_OK : BEV_NEED_MORE;
}

void
tlsleg_close_notify(struct tlsleg *l)
{
	if (l->shut || l->failed)
		return;
	if (l->state == LEG_RECORDS)
		send_alert(l, AL_CLOSE_NOTIFY);
	else if (l->state == LEG_OPENSSL && SSL_is_init_finished(l->ssl))
		SSL_shutdown(l->ssl);
	l->shut = l->state != LEG_HANDSHAKE;
}

/* ---- the leg --------------------------------------------------------------------------- */

/*
 * The socket's output fell to its low-water mark (written by libevent, or
 * by the proxy's own sock_flush()).  libevent tells the filter only when
 * the filter still holds plaintext; the proxy needs to know in any case,
 * to read on: the filter's write callback, or the filter's own drain.
 */
static void
sock_drained(struct evbuffer *out, const struct evbuffer_cb_info *info, void *arg)
{
	struct tlsleg *l = arg;
	size_t lo = 0, now = info->orig_size - info->n_deleted + info->n_added;

	bufferevent_data_cb writecb = NULL;

	(void)out;
	/* Freeing the filter frees its socket bufferevent first, which takes
	 * the filter's callbacks off it; the filter is gone but for its
	 * finalizer, and must not be touched. */
	bufferevent_getcb(l->sock, NULL, &writecb, NULL, NULL);
	if (!info->n_deleted || l->failed || !writecb)
		return;
	bufferevent_getwatermark(l->sock, EV_WRITE, &lo, NULL);
	if (info->orig_size <= lo || now > lo)
		return;
	if (evbuffer_get_length(bufferevent_get_output(l->bev)))
		bufferevent_trigger(l->sock, EV_WRITE, BEV_TRIG_DEFER_CALLBACKS);
	else
		bufferevent_trigger(l->bev, EV_WRITE, BEV_TRIG_DEFER_CALLBACKS);
}

static void
leg_free(void *arg)
{
	struct tlsleg *l = arg;

	/* The filter still holds its socket bufferevent here (libevent frees it after). */
	if (l->drained)
		evbuffer_remove_cb_entry(bufferevent_get_output(l->sock), l->drained);
	SSL_free(l->ssl);
	tlsrec_key_clear(&l->rd);
	tlsrec_key_clear(&l->wr);
	OPENSSL_cleanse(l, sizeof(*l));
	free(l);
}

struct tlsleg *
tlsleg_new(struct bufferevent *sock, SSL *ssl, bool server)
{
	struct tlsleg *l = calloc(1, sizeof(*l));
	BIO *bio = l ? leg_bio(l) : NULL;

	if (!bio || leg_index < 0 || SSL_set_ex_data(ssl, leg_index, l) != 1) {
		BIO_free(bio);
		free(l);
		SSL_free(ssl);
		return NULL;
	}
	SSL_set_bio(ssl, bio, bio);
	l->ssl = ssl;
	l->sock = sock;
	l->server = server;
	if (server)
		SSL_set_accept_state(ssl);
	else
		SSL_set_connect_state(ssl);
	l->bev = bufferevent_filter_new(sock, leg_in, leg_out, BEV_OPT_CLOSE_ON_FREE, leg_free, l);
	if (!l->bev) {
		SSL_free(ssl);
		free(l);
		return NULL;
	}
	l->drained = evbuffer_add_cb(bufferevent_get_output(sock), sock_drained, l);
	/* The client's ClientHello at the loop's next turn, with the filter's
	 * callbacks set by then (an event told now would find none). */
	if (!server)
		bufferevent_trigger(sock, EV_READ, BEV_TRIG_DEFER_CALLBACKS | BEV_TRIG_IGNORE_WATERMARKS);
	return l;
}

struct bufferevent *
tlsleg_bev(const struct tlsleg *l)
{
	return l->bev;
}

SSL *
tlsleg_ssl(const struct tlsleg *l)
{
	return l->ssl;
}

unsigned long
tlsleg_ssl_error(struct tlsleg *l)
{
	unsigned long e = l->ssl_err;

	l->ssl_err = 0;
	return e;
}

const char *
tlsleg_failure(const struct tlsleg *l)
{
	return l->failed ? l->why : NULL;
}

bool
tlsleg_own_records(const struct tlsleg *l)
{
	return l->state == LEG_RECORDS;
}

void
tlsleg_describe(const struct tlsleg *l, char *buf, size_t cap)
{
	if (l->state == LEG_HANDSHAKE)
		snprintf(buf, cap, "handshake under way");
	else
		snprintf(buf, cap, "%s %s, records by %s", l->version, l->suite,
			 l->state == LEG_RECORDS ? "omnibox" : "OpenSSL");
}
