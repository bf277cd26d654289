/*
 * tlsleg.h - one TLS leg of the proxy (with the agent, or with a server):
 * a libevent filter over the leg's socket bufferevent.
 *
 * OpenSSL makes the handshake, reading and writing the socket
 * bufferevent's buffers through a BIO of this file (never the socket: the
 * proxy reads it, read_into()).  Once the handshake is done, a TLS 1.3
 * leg with one of the three standard suites is carried on by tlsrec.h:
 * the traffic secrets are taken from OpenSSL's key log callback (kept in
 * this process's memory, written nowhere), the SSL is freed, and each
 * record is opened from the socket's input into the filter's and sealed
 * from the filter's output into the socket's, with no copy between.  An
 * idle leg then holds two cipher contexts, not an SSL of 14 KB.  Any other
 * leg (TLS 1.2, another suite) stays with OpenSSL's records, over the same
 * BIO; tlsleg_own_records() says which ran.
 *
 * After the handshake the leg takes what RFC 8446 allows a peer to send:
 * application data, KeyUpdate (when the peer asks, one KeyUpdate of the
 * leg's goes before its next record, however many were asked for: a peer
 * cannot make the leg write), a server's NewSessionTicket (ignored: the
 * proxy resumes nothing), close_notify (the filter's EOF) and
 * user_canceled.  Handshake messages may span records, but no other record
 * may come inside one, and a KeyUpdate ends its record.  Anything else, a record that does not
 * verify, or a malformed one ends the leg with an error event, and
 * tlsleg_failure() says why.
 *
 * Events on the filter: BEV_EVENT_CONNECTED when the handshake is done
 * (at once, before any record that came with it is read), BEV_EVENT_ERROR (with tlsleg_ssl_error() for a failed handshake),
 * BEV_EVENT_EOF at close_notify, and whatever the socket reports.
 */
#ifndef OMNIBOX_TLSLEG_H
#define OMNIBOX_TLSLEG_H

#include <stdbool.h>

#include <event2/bufferevent.h>
#include <openssl/ssl.h>

struct tlsleg;

/* CTX's legs can take their keys: its key log callback (no file, no text kept). */
void tlsleg_ctx_init(SSL_CTX *ctx);

/*
 * A leg over SOCK with SSL (prepared, of a context tlsleg_ctx_init() saw):
 * the server's side of the handshake if SERVER, else the client's, which
 * starts at once.  Freeing tlsleg_bev() frees SOCK, SSL and the leg.  NULL
 * on failure (SSL freed, SOCK not).
 */
struct tlsleg *tlsleg_new(struct bufferevent *sock, SSL *ssl, bool server);
struct bufferevent *tlsleg_bev(const struct tlsleg *l);

/* The SSL while the handshake is on (and for good for a leg OpenSSL carries); NULL once freed. */
SSL *tlsleg_ssl(const struct tlsleg *l);
/* The OpenSSL error that ended the handshake (0 if none, e.g. the peer closed); taken once. */
unsigned long tlsleg_ssl_error(struct tlsleg *l);
/* Why the leg failed after the handshake, or NULL. */
const char *tlsleg_failure(const struct tlsleg *l);
/* The handshake is done and the leg's records are this file's (not OpenSSL's). */
bool tlsleg_own_records(const struct tlsleg *l);
/* After the handshake: "TLSv1.3 TLS_AES_256_GCM_SHA384, records by omnibox" or "... by OpenSSL". */
void tlsleg_describe(const struct tlsleg *l, char *buf, size_t cap);

/* Queues a close_notify after what is sealed so far; nothing more is sent after it. */
void tlsleg_close_notify(struct tlsleg *l);

#endif
