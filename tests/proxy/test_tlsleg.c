/*
 * test_tlsleg.c - a TLS leg of the proxy (runtime/egress/tlsleg.c and
 * tlsrec.c) against OpenSSL as its peer, over a real socket pair: each
 * TLS 1.3 suite both ways, KeyUpdate asked by the peer, a server's session
 * tickets, close_notify, TLS 1.2 left to OpenSSL, and the attacker's
 * records (altered, replayed, of the wrong type, a handshake message the
 * leg must not take, a record inside a handshake message), which end the
 * leg; KeyUpdate requests that cannot make the leg write; CONNECTED before
 * a record that came with the handshake; a filter freed while its socket
 * drains.
 *
 * The peer's SSL reads and writes memory BIOs that the test moves to and
 * from its end of the socket pair, so the test also sees, and can forge,
 * the raw records; it takes the peer's traffic secrets from its key log to
 * seal records of its own choosing with tlsrec.c.
 */
#include <criterion/criterion.h>

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include "runtime/egress/tls.h"
#include "runtime/egress/tlsleg.h"
#include "runtime/egress/tlsrec.h"

struct rig {
	struct event_base *base;
	int fd[2]; /* [0] the leg's, [1] the test's */
	struct tlsleg *leg;
	struct bufferevent *bev;
	struct tls_ca *ca;
	SSL_CTX *lctx, *pctx;
	SSL *peer;
	BIO *prd, *pwr;
	struct evbuffer *got;
	short events;
	bool read_before_connected;
	/* The peer's traffic secrets: client's [0], server's [1]. */
	unsigned char secret[2][EVP_MAX_MD_SIZE];
	size_t secret_len[2];
};

static struct rig R;

static void
peer_keylog(const SSL *ssl, const char *line)
{
	static const char *const names[2] = {"CLIENT_TRAFFIC_SECRET_0 ", "SERVER_TRAFFIC_SECRET_0 "};

	(void)ssl;
	for (int w = 0; w < 2; w++) {
		const char *p;
		size_t n = 0;

		if (strncmp(line, names[w], strlen(names[w])) != 0)
			continue;
		p = strchr(line + strlen(names[w]), ' ') + 1;
		for (; p[0] && p[1]; p += 2) {
			unsigned v;

			sscanf(p, "%2x", &v);
			R.secret[w][n++] = (unsigned char)v;
		}
		R.secret_len[w] = n;
	}
}

static void
read_cb(struct bufferevent *bev, void *arg)
{
	(void)arg;
	if (!(R.events & BEV_EVENT_CONNECTED))
		R.read_before_connected = true;
	evbuffer_add_buffer(R.got, bufferevent_get_input(bev));
}

static void
event_cb(struct bufferevent *bev, short what, void *arg)
{
	(void)bev;
	(void)arg;
	R.events |= what;
}

/* What a test changes in the leg's context before the leg is made (reset by rig_up). */
static void (*leg_ctx_hook)(SSL_CTX *ctx);

/* The leg's side of the pair is the leg's; the peer is OpenSSL of PROTO (0: any) and SUITES. */
static void
rig_up(bool leg_is_server, int proto, const char *suites, int tickets)
{
	char err[512];
	struct bufferevent *sock;
	SSL *ssl;

	memset(&R, 0, sizeof(R));
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, R.fd), 0);
	fcntl(R.fd[0], F_SETFL, O_NONBLOCK);
	fcntl(R.fd[1], F_SETFL, O_NONBLOCK);
	R.base = event_base_new();
	R.got = evbuffer_new();
	R.ca = tls_ca_new(time(NULL), err, sizeof(err));
	cr_assert_not_null(R.ca, "%s", err);
	R.lctx = leg_is_server ? tls_server_ctx_new(err, sizeof(err))
			       : SSL_CTX_new(TLS_client_method());
	R.pctx = leg_is_server ? SSL_CTX_new(TLS_client_method())
			       : tls_server_ctx_new(err, sizeof(err));
	cr_assert(R.lctx && R.pctx, "%s", err);
	tlsleg_ctx_init(R.lctx);
	if (leg_ctx_hook)
		leg_ctx_hook(R.lctx);
	leg_ctx_hook = NULL;
	SSL_CTX_set_keylog_callback(R.pctx, peer_keylog);
	if (proto)
		SSL_CTX_set_max_proto_version(R.pctx, proto);
	if (suites)
		cr_assert_eq(SSL_CTX_set_ciphersuites(R.pctx, suites), 1);
	if (tickets) {
		SSL_CTX_clear_options(R.pctx, SSL_OP_NO_TICKET);
		SSL_CTX_set_num_tickets(R.pctx, (size_t)tickets);
	}
	ssl = SSL_new(R.lctx);
	R.peer = SSL_new(R.pctx);
	if (leg_is_server) {
		cr_assert_eq(tls_server_prepare(ssl, R.ca, "leg.test", time(NULL)), 0);
		SSL_set_tlsext_host_name(R.peer, "leg.test");
		SSL_set_connect_state(R.peer);
	} else {
		cr_assert_eq(tls_server_prepare(R.peer, R.ca, "peer.test", time(NULL)), 0);
		SSL_set_tlsext_host_name(ssl, "peer.test");
		SSL_set_accept_state(R.peer);
	}
	R.prd = BIO_new(BIO_s_mem());
	R.pwr = BIO_new(BIO_s_mem());
	SSL_set_bio(R.peer, R.prd, R.pwr);
	sock = bufferevent_socket_new(R.base, R.fd[0], BEV_OPT_CLOSE_ON_FREE);
	R.leg = tlsleg_new(sock, ssl, leg_is_server);
	cr_assert_not_null(R.leg);
	R.bev = tlsleg_bev(R.leg);
	bufferevent_setcb(R.bev, read_cb, NULL, event_cb, NULL);
	bufferevent_enable(R.bev, EV_READ | EV_WRITE);
}

static void
rig_down(void)
{
	if (R.bev)
		bufferevent_free(R.bev);
	event_base_loop(R.base, EVLOOP_NONBLOCK);
	SSL_free(R.peer);
	SSL_CTX_free(R.lctx);
	SSL_CTX_free(R.pctx);
	tls_ca_free(R.ca);
	evbuffer_free(R.got);
	event_base_free(R.base);
	close(R.fd[1]);
}

/* Raw bytes from the leg, all there are now, into BUF. */
static size_t
raw_from_leg(unsigned char *buf, size_t cap)
{
	size_t n = 0;
	ssize_t r;

	event_base_loop(R.base, EVLOOP_NONBLOCK);
	while (n < cap && (r = read(R.fd[1], buf + n, cap - n)) > 0)
		n += (size_t)r;
	return n;
}

static void
raw_to_leg(const void *p, size_t n)
{
	cr_assert_eq(write(R.fd[1], p, n), (ssize_t)n);
}

/* What the peer wrote, to the leg, and the leg's loop run. */
static void
peer_to_leg(void)
{
	unsigned char buf[65536];
	int m;

	while ((m = BIO_read(R.pwr, buf, sizeof(buf))) > 0)
		raw_to_leg(buf, (size_t)m);
	for (int i = 0; i < 3; i++)
		event_base_loop(R.base, EVLOOP_NONBLOCK);
}

/* Moves bytes both ways and runs the loop, ROUNDS times. */
static void
pump(int rounds)
{
	unsigned char buf[65536];

	for (int i = 0; i < rounds; i++) {
		size_t n = raw_from_leg(buf, sizeof(buf));
		int m;

		if (n)
			BIO_write(R.prd, buf, (int)n);
		while ((m = BIO_read(R.pwr, buf, sizeof(buf))) > 0)
			raw_to_leg(buf, (size_t)m);
		event_base_loop(R.base, EVLOOP_NONBLOCK);
	}
}

static void
handshake(void)
{
	for (int i = 0; i < 50 && !((R.events & BEV_EVENT_CONNECTED) && SSL_is_init_finished(R.peer));
	     i++) {
		SSL_do_handshake(R.peer);
		pump(1);
	}
	cr_assert(R.events & BEV_EVENT_CONNECTED, "the leg's handshake did not finish");
	cr_assert(SSL_is_init_finished(R.peer));
}

/* The peer reads N bytes (pumping), into BUF. */
static void
peer_read(unsigned char *buf, size_t n)
{
	size_t have = 0, got;

	for (int i = 0; i < 2000 && have < n; i++) {
		if (SSL_read_ex(R.peer, buf + have, n - have, &got) == 1)
			have += got;
		else
			pump(1);
	}
	cr_assert_eq(have, n, "the peer read %zu of %zu bytes", have, n);
}

static void
peer_write(const void *p, size_t n)
{
	size_t w;

	cr_assert_eq(SSL_write_ex(R.peer, p, n, &w), 1);
	pump(3);
}

/* Both ways: what the peer sends arrives whole, and 200 KB from the leg too. */
static void
both_ways(void)
{
	static unsigned char big[200000], back[200000];
	char msg[64];

	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (unsigned char)(i * 7 + i / 251);
	peer_write("hello from the peer", 19);
	cr_assert_eq(evbuffer_get_length(R.got), 19);
	evbuffer_remove(R.got, msg, 19);
	cr_assert_arr_eq(msg, "hello from the peer", 19);
	cr_assert_eq(bufferevent_write(R.bev, big, sizeof(big)), 0);
	peer_read(back, sizeof(back));
	cr_assert_arr_eq(back, big, sizeof(big));
	cr_assert_eq(R.events & (BEV_EVENT_ERROR | BEV_EVENT_EOF), 0);
}

TestSuite(tlsleg, .fini = rig_down);

Test(tlsleg, each_tls13_suite_both_ways_records_by_omnibox)
{
	static const char *const suites[] = {"TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384",
					     "TLS_CHACHA20_POLY1305_SHA256"};

	for (int s = 0; s < 3; s++) {
		for (int server = 0; server < 2; server++) {
			char how[160];

			if (s || server)
				rig_down();
			rig_up(server, 0, suites[s], 0);
			handshake();
			cr_assert(tlsleg_own_records(R.leg));
			cr_assert_null(tlsleg_ssl(R.leg), "the SSL is freed after the handshake");
			tlsleg_describe(R.leg, how, sizeof(how));
			cr_assert(strstr(how, suites[s]) && strstr(how, "records by omnibox"), "%s",
				  how);
			both_ways();
		}
	}
}

Test(tlsleg, tls12_stays_with_openssl)
{
	char how[160];

	rig_up(true, TLS1_2_VERSION, NULL, 0);
	handshake();
	cr_assert_not(tlsleg_own_records(R.leg));
	tlsleg_describe(R.leg, how, sizeof(how));
	cr_assert(strstr(how, "TLSv1.2") && strstr(how, "records by OpenSSL"), "%s", how);
	both_ways();
}

/* What the leg sends next: its first record's body length in *FIRST, all of it to the peer. */
static size_t
leg_output_to_peer(unsigned *first)
{
	unsigned char raw[65536];
	size_t n = raw_from_leg(raw, sizeof(raw));

	*first = n >= 5 ? (unsigned)(raw[3] << 8 | raw[4]) : 0;
	BIO_write(R.prd, raw, (int)n);
	return n;
}

Test(tlsleg, key_update_asked_by_the_peer_is_answered_once)
{
	unsigned char back[4];
	unsigned first;

	rig_up(true, 0, "TLS_AES_256_GCM_SHA384", 0);
	handshake();
	/* Asked three times: the leg writes nothing of its own accord... */
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(SSL_key_update(R.peer, SSL_KEY_UPDATE_REQUESTED), 1);
		cr_assert_eq(SSL_write(R.peer, "upd", 3), 3);
	}
	peer_to_leg();
	cr_assert_eq(evbuffer_get_length(R.got), 9, "data under each of the peer's new keys");
	evbuffer_drain(R.got, 9);
	cr_assert_eq(leg_output_to_peer(&first), 0, "a peer cannot make the leg write");
	/* ...and then one KeyUpdate (a 5-byte message, its type, a tag) before its data. */
	cr_assert_eq(bufferevent_write(R.bev, "back", 4), 0);
	event_base_loop(R.base, EVLOOP_NONBLOCK);
	cr_assert_eq(leg_output_to_peer(&first), (5 + 5 + 1 + 16) + (5 + 4 + 1 + 16));
	cr_assert_eq(first, 5 + 1 + 16);
	/* The peer reads the data under the leg's new key, which it took from that KeyUpdate. */
	peer_read(back, 4);
	cr_assert_arr_eq(back, "back", 4);
	both_ways();
	/* Not asked: no answer. */
	cr_assert_eq(SSL_key_update(R.peer, SSL_KEY_UPDATE_NOT_REQUESTED), 1);
	cr_assert_eq(SSL_write(R.peer, "x", 1), 1);
	peer_to_leg();
	cr_assert_eq(evbuffer_get_length(R.got), 1);
	evbuffer_drain(R.got, 1);
	cr_assert_eq(bufferevent_write(R.bev, "y", 1), 0);
	event_base_loop(R.base, EVLOOP_NONBLOCK);
	cr_assert_eq(leg_output_to_peer(&first), 5 + 1 + 1 + 16);
	peer_read(back, 1);
}

Test(tlsleg, a_servers_session_tickets_are_skipped)
{
	rig_up(false, 0, NULL, 3);
	handshake();
	cr_assert(tlsleg_own_records(R.leg));
	both_ways();
	cr_assert_eq(R.events & BEV_EVENT_ERROR, 0);
}

Test(tlsleg, close_notify_is_the_end)
{
	unsigned char raw[256];
	size_t n;

	rig_up(true, 0, NULL, 0);
	handshake();
	SSL_shutdown(R.peer);
	pump(3);
	cr_assert(R.events & BEV_EVENT_EOF);
	cr_assert_eq(R.events & BEV_EVENT_ERROR, 0);
	/* And the leg's own: an alert record the peer reads as the end. */
	tlsleg_close_notify(R.leg);
	n = raw_from_leg(raw, sizeof(raw));
	cr_assert_eq(n, 5 + 2 + 1 + 16);
	BIO_write(R.prd, raw, (int)n);
	cr_assert_leq(SSL_read(R.peer, raw, sizeof(raw)), 0);
	cr_assert_eq(SSL_get_error(R.peer, 0), SSL_ERROR_ZERO_RETURN);
}

/* A record sealed by the test as the peer (client) would, under its current key. */
static size_t
forge(struct tlsrec_key *k, unsigned char type, const void *p, size_t n, unsigned char *out)
{
	struct iovec v = {(void *)p, n};
	ssize_t r = tlsrec_seal(k, type, &v, 1, n, out);

	cr_assert_gt(r, 0);
	return (size_t)r;
}

static void
forger(struct tlsrec_key *k)
{
	const EVP_CIPHER *cipher;
	const EVP_MD *md;

	memset(k, 0, sizeof(*k));
	cr_assert(tlsrec_suite(0x1302, &cipher, &md));
	cr_assert_eq(tlsrec_key_set(k, cipher, md, true, R.secret[0], R.secret_len[0]), 0);
}

/* A leg with the agent (TLS_AES_256_GCM_SHA384) and K, to forge the agent's records. */
static void
forged_up(struct tlsrec_key *k)
{
	rig_up(true, 0, "TLS_AES_256_GCM_SHA384", 0);
	handshake();
	forger(k);
}

/* A forged record of S the leg takes whole. */
static void
forged_taken(struct tlsrec_key *k, const char *s, size_t n)
{
	unsigned char rec[512];

	raw_to_leg(rec, forge(k, TLSREC_APPDATA, s, n, rec));
	pump(2);
	cr_assert_eq(evbuffer_get_length(R.got), n);
	evbuffer_drain(R.got, n);
}

static void
expect_failure(const char *why)
{
	pump(2);
	cr_assert(R.events & BEV_EVENT_ERROR, "the leg took it");
	cr_assert_not_null(tlsleg_failure(R.leg));
	cr_assert(strstr(tlsleg_failure(R.leg), why), "%s", tlsleg_failure(R.leg));
	cr_assert_eq(evbuffer_get_length(R.got), 0, "nothing of it was passed on");
	/* Nothing more is taken after. */
	raw_to_leg("\x17\x03\x03\x00\x01x", 6);
	pump(2);
	cr_assert_eq(evbuffer_get_length(R.got), 0);
}

Test(tlsleg, forged_records_end_the_leg)
{
	struct tlsrec_key k;
	unsigned char rec[512];
	size_t n;

	/* Forged by the test with the right key: the leg takes it (the rig works). */
	forged_up(&k);
	forged_taken(&k, "forged but sound", 16);
	/* One bit flipped in the ciphertext. */
	n = forge(&k, TLSREC_APPDATA, "altered", 7, rec);
	rec[7] ^= 1;
	raw_to_leg(rec, n);
	expect_failure("does not verify");
	tlsrec_key_clear(&k);
}

Test(tlsleg, a_record_under_a_replayed_sequence_fails)
{
	struct tlsrec_key k;
	unsigned char rec[512];
	size_t n;

	forged_up(&k);
	n = forge(&k, TLSREC_APPDATA, "once", 4, rec);
	raw_to_leg(rec, n);
	pump(2);
	cr_assert_eq(evbuffer_get_length(R.got), 4);
	evbuffer_drain(R.got, 4);
	raw_to_leg(rec, n); /* the same record again */
	expect_failure("does not verify");
	tlsrec_key_clear(&k);
}

Test(tlsleg, a_handshake_message_the_leg_does_not_take)
{
	struct tlsrec_key k;
	unsigned char rec[512];
	/* A NewSessionTicket from the client: only a server sends those. */
	static const unsigned char nst[] = {4, 0, 0, 2, 0, 0};

	forged_up(&k);
	raw_to_leg(rec, forge(&k, TLSREC_HANDSHAKE, nst, sizeof(nst), rec));
	expect_failure("handshake message after the handshake");
	tlsrec_key_clear(&k);
}

Test(tlsleg, an_unprotected_record_after_the_handshake)
{
	rig_up(true, 0, NULL, 0);
	handshake();
	/* A change_cipher_spec, and application data in the clear. */
	raw_to_leg("\x14\x03\x03\x00\x01\x01", 6);
	expect_failure("not a protected TLS 1.3 record");
}

Test(tlsleg, an_inner_type_the_leg_does_not_know)
{
	struct tlsrec_key k;
	unsigned char rec[512];

	forged_up(&k);
	raw_to_leg(rec, forge(&k, 20, "\x01", 1, rec));
	expect_failure("unexpected type");
	tlsrec_key_clear(&k);
}

Test(tlsleg, a_failed_handshake_says_why)
{
	rig_up(true, 0, NULL, 0);
	raw_to_leg("GET / HTTP/1.1\r\nHost: x\r\n\r\n", 27);
	pump(2);
	cr_assert(R.events & BEV_EVENT_ERROR);
	cr_assert_neq(tlsleg_ssl_error(R.leg), 0);
	cr_assert_not_null(tlsleg_ssl(R.leg), "kept for the log (SNI)");
	cr_assert_not(tlsleg_own_records(R.leg));
}

Test(tlsleg, a_key_update_split_over_two_records)
{
	struct tlsrec_key k;
	unsigned char rec[512];
	static const unsigned char head[] = {24, 0, 0, 1}, body[] = {0};

	forged_up(&k);
	raw_to_leg(rec, forge(&k, TLSREC_HANDSHAKE, head, sizeof(head), rec));
	raw_to_leg(rec, forge(&k, TLSREC_HANDSHAKE, body, sizeof(body), rec));
	cr_assert_eq(tlsrec_key_update(&k), 0);
	forged_taken(&k, "new key", 7);
	cr_assert_eq(R.events & BEV_EVENT_ERROR, 0);
	tlsrec_key_clear(&k);
}

Test(tlsleg, a_record_inside_a_handshake_message)
{
	struct tlsrec_key k;
	unsigned char rec[512];
	static const unsigned char head[] = {24, 0, 0, 1};

	forged_up(&k);
	raw_to_leg(rec, forge(&k, TLSREC_HANDSHAKE, head, sizeof(head), rec));
	raw_to_leg(rec, forge(&k, TLSREC_APPDATA, "between", 7, rec));
	expect_failure("inside a handshake message");
	tlsrec_key_clear(&k);
}

/* A server's first record, sent with its Finished: the leg says CONNECTED before it is read. */
Test(tlsleg, connected_before_the_first_record)
{
	struct tlsrec_key k;
	const EVP_CIPHER *cipher;
	const EVP_MD *md;
	unsigned char flight[65536], rec[512];
	size_t n;
	int m;

	rig_up(false, 0, "TLS_AES_256_GCM_SHA384", 0);
	event_base_loop(R.base, EVLOOP_NONBLOCK); /* the ClientHello */
	n = raw_from_leg(flight, sizeof(flight));
	cr_assert_gt(n, 0, "the leg sent its ClientHello");
	BIO_write(R.prd, flight, (int)n);
	cr_assert_leq(SSL_do_handshake(R.peer), 0); /* its flight, then it waits for the client's Finished */
	m = BIO_read(R.pwr, flight, sizeof(flight));
	cr_assert_gt(m, 0);
	cr_assert_gt(R.secret_len[1], 0, "the server's traffic secret is known");
	memset(&k, 0, sizeof(k));
	cr_assert(tlsrec_suite(0x1302, &cipher, &md));
	cr_assert_eq(tlsrec_key_set(&k, cipher, md, true, R.secret[1], R.secret_len[1]), 0);
	n = forge(&k, TLSREC_APPDATA, "0.5-RTT", 7, rec);
	memcpy(flight + m, rec, n);
	raw_to_leg(flight, (size_t)m + n);
	for (int i = 0; i < 3; i++)
		event_base_loop(R.base, EVLOOP_NONBLOCK);
	cr_assert(R.events & BEV_EVENT_CONNECTED);
	cr_assert_eq(evbuffer_get_length(R.got), 7);
	cr_assert_not(R.read_before_connected, "the record was read before CONNECTED");
	tlsrec_key_clear(&k);
}

/* No protocol version left to offer. */
static void
no_version(SSL_CTX *ctx)
{
	SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION);
	SSL_CTX_set_max_proto_version(ctx, TLS1_2_VERSION);
}

/* The client's first step fails (no ClientHello can be made): the leg says so. */
Test(tlsleg, a_client_that_cannot_start_says_so)
{
	leg_ctx_hook = no_version;
	rig_up(false, 0, NULL, 0);
	for (int i = 0; i < 3; i++)
		event_base_loop(R.base, EVLOOP_NONBLOCK);
	cr_assert(R.events & BEV_EVENT_ERROR, "the failure was told");
	cr_assert_neq(tlsleg_ssl_error(R.leg), 0);
}

/* The filter is freed (as up_close() and conn_kill() do) while its socket
 * bufferevent still has output, which then drains: the leg must not touch
 * the filter, which only its finalizer has left. */
Test(tlsleg, the_socket_drains_after_the_filter_is_freed)
{
	struct bufferevent *sock;

	rig_up(true, 0, NULL, 0);
	handshake();
	sock = bufferevent_get_underlying(R.bev);
	evbuffer_add(bufferevent_get_output(sock), "pending", 7);
	bufferevent_free(R.bev);
	R.bev = NULL;
	/* What the socket bufferevent's write does when its event was active in that turn. */
	bufferevent_incref(sock);
	evbuffer_unfreeze(bufferevent_get_output(sock), 1);
	evbuffer_drain(bufferevent_get_output(sock), 7);
	evbuffer_freeze(bufferevent_get_output(sock), 1);
	bufferevent_decref(sock);
	event_base_loop(R.base, EVLOOP_NONBLOCK);
	event_base_loop(R.base, EVLOOP_NONBLOCK);
}
