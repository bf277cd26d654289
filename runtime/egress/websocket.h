/*
 * websocket.h - RFC 6455 handshake values and a streaming frame checker.
 *
 * The egress proxy lets a GET carry "Upgrade: websocket" only when a rule
 * allowed it, and once the server answers 101 it stops parsing HTTP and
 * relays bytes both ways.  Without a check, that moment is an escape: a
 * server (or an agent with a cooperating server) can fake the upgrade and
 * go on speaking anything, so a connection the proxy admitted as one
 * checked HTTP request becomes a raw tunnel for unchecked requests to the
 * same server.  So the proxy validates the handshake (the key the client
 * sent, the Accept the server computed from it) and then forwards bytes
 * only while both directions are valid RFC 6455 framing as negotiated
 * with no extensions.  An HTTP request sent after the 101 is not a masked
 * frame ("G" already has RSV1 set), so it is refused at its first byte.
 *
 * The checker looks at frame headers only: payload is counted, never
 * copied, unmasked or read, and text is not checked for UTF-8.  Nothing
 * here allocates or touches the network (OpenSSL computes the SHA-1), so
 * the unit tests and the fuzzer drive it with plain byte arrays.
 */
#ifndef OMNIBOX_WEBSOCKET_H
#define OMNIBOX_WEBSOCKET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Length of a Sec-WebSocket-Key (base64 of 16 bytes) and of an Accept value. */
#define WS_KEY_LEN 24
#define WS_ACCEPT_LEN 28
/* The GUID RFC 6455 section 1.3 appends to the key before hashing. */
#define WS_GUID "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
/* Longest frame header: 2 bytes, 8 of extended length, 4 of masking key. */
#define WS_HEADER_MAX 14

/* ---- handshake ------------------------------------------------------------------- */

/*
 * Is KEY/LEN a valid Sec-WebSocket-Key (RFC 6455 section 4.1): canonical,
 * padded base64 of exactly 16 bytes, i.e. 22 characters of the base64
 * alphabet whose last carries no stray bits, then "==".  The caller has
 * trimmed optional white space; any white space left makes it invalid.
 */
bool ws_key_is_valid(const char *key, size_t len);

/*
 * Write base64(SHA-1(KEY/LEN + WS_GUID)) to OUT: WS_ACCEPT_LEN characters
 * and a NUL.  KEY need not be valid (nothing is checked).  If OpenSSL
 * fails (out of memory), OUT is the empty string, which ws_accept_matches()
 * never takes for a match.
 */
void ws_accept_value(const char *key, size_t len, char out[WS_ACCEPT_LEN + 1]);

/*
 * Is ACCEPT/ALEN, a server's Sec-WebSocket-Accept with optional white
 * space trimmed by the caller, exactly the value for KEY/KLEN?  Byte for
 * byte, case included.  False when KEY is not a valid key (the request
 * should not have been sent) or the value cannot be computed.
 */
bool ws_accept_matches(const char *key, size_t klen, const char *accept, size_t alen);

/* ---- frames ------------------------------------------------------------------------ */

enum ws_dir {
	WS_FROM_CLIENT, /* frames must be masked */
	WS_FROM_SERVER, /* frames must not be masked */
};

/*
 * State for one direction of one connection.  Plain data: no resources,
 * nothing to free; the fields are the checker's, except that a caller may
 * read CLOSED (a complete close frame has been seen) to know that this
 * side is done.
 */
struct ws_checker {
	enum ws_dir dir;
	unsigned char hdr[WS_HEADER_MAX]; /* header bytes of the current frame so far */
	uint8_t hdr_len;
	uint8_t hdr_need;   /* header length, once the second byte is known; else 0 */
	uint64_t remaining; /* payload bytes left in the current frame */
	bool in_payload;
	bool fragmented;    /* a text/binary message has begun and its FIN frame not come */
	bool saw_fragments; /* some message came in several frames (sticky; callers may read it) */
	bool close_frame;   /* the current frame is a close frame */
	bool closed;	    /* a whole close frame has gone by; nothing may follow */
	const char *error;  /* the first violation, once there is one */
};

/* Prepare W for the bytes one side sends from just after the 101 on. */
void ws_checker_init(struct ws_checker *w, enum ws_dir dir);

/*
 * Look at the next LEN bytes of the stream (the caller passes them on
 * unchanged).  Returns 0 while everything so far is valid framing or a
 * valid prefix of it, or -1 at the first violation with a static,
 * lower-case reason in *WHY.  Violations are sticky: once -1, every later
 * call returns -1 with the same reason.  Any split of the stream gives the
 * same verdicts, one byte at a time included; the work is O(LEN) and
 * payload bytes are skipped, never read.  WHY may be NULL.
 */
int ws_checker_feed(struct ws_checker *w, const unsigned char *buf, size_t len, const char **why);

#endif
