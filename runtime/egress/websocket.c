/*
 * websocket.c - Sec-WebSocket-Key/Accept and RFC 6455 frame checking.
 */
#include "runtime/egress/websocket.h"

#include <string.h>

#include <openssl/evp.h>

/* ---- handshake ------------------------------------------------------------------- */

/* The value of a base64 character, or -1 (RFC 4648 alphabet, not the URL-safe one). */
static int
b64_value(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

bool
ws_key_is_valid(const char *key, size_t len)
{
	int last;

	if (len != WS_KEY_LEN || key[22] != '=' || key[23] != '=')
		return false;
	for (size_t i = 0; i < 21; i++)
		if (b64_value((unsigned char)key[i]) < 0)
			return false;
	/*
	 * 22 characters carry 132 bits for 128: the last one's low four bits
	 * must be zero, or the text is not the one encoding of its 16 bytes
	 * (a peer that decodes leniently would see the same key in another
	 * string).
	 */
	last = b64_value((unsigned char)key[21]);
	return last >= 0 && (last & 0x0f) == 0;
}

void
ws_accept_value(const char *key, size_t len, char out[WS_ACCEPT_LEN + 1])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	EVP_MD_CTX *ctx;
	int ok;

	out[0] = '\0';
	ctx = EVP_MD_CTX_new();
	if (!ctx)
		return;
	/* Two updates rather than one buffer: KEY may be of any length. */
	ok = EVP_DigestInit_ex(ctx, EVP_sha1(), NULL) == 1 &&
	     EVP_DigestUpdate(ctx, key, len) == 1 &&
	     EVP_DigestUpdate(ctx, WS_GUID, sizeof(WS_GUID) - 1) == 1 &&
	     EVP_DigestFinal_ex(ctx, md, &mdlen) == 1 && mdlen == 20;
	EVP_MD_CTX_free(ctx);
	if (!ok)
		return;
	/* 20 bytes encode to exactly WS_ACCEPT_LEN characters plus the NUL EVP writes. */
	if (EVP_EncodeBlock((unsigned char *)out, md, 20) != WS_ACCEPT_LEN)
		out[0] = '\0';
}

bool
ws_accept_matches(const char *key, size_t klen, const char *accept, size_t alen)
{
	char want[WS_ACCEPT_LEN + 1];

	if (!ws_key_is_valid(key, klen) || alen != WS_ACCEPT_LEN)
		return false;
	ws_accept_value(key, klen, want);
	/* An empty WANT (OpenSSL failed) differs from any 28 bytes at its NUL. */
	return want[0] != '\0' && memcmp(want, accept, WS_ACCEPT_LEN) == 0;
}

/* ---- frames ------------------------------------------------------------------------ */

#define WS_FIN 0x80
#define WS_RSV 0x70
#define WS_OPCODE 0x0f
#define WS_MASK 0x80
#define WS_LEN7 0x7f

enum {
	OP_CONTINUATION = 0x0,
	OP_TEXT = 0x1,
	OP_BINARY = 0x2,
	OP_CLOSE = 0x8,
	OP_PING = 0x9,
	OP_PONG = 0xa,
};

void
ws_checker_init(struct ws_checker *w, enum ws_dir dir)
{
	memset(w, 0, sizeof(*w));
	w->dir = dir;
}

/* The first header byte: FIN, RSV1-3, opcode, and where it sits in a message. */
static const char *
check_first_byte(struct ws_checker *w, unsigned char b)
{
	unsigned op = b & WS_OPCODE;
	bool fin = b & WS_FIN;

	/* No extension is ever negotiated, so no RSV bit has a meaning. */
	if (b & WS_RSV)
		return "reserved bit set without an extension";
	switch (op) {
	case OP_CONTINUATION:
		if (!w->fragmented)
			return "continuation frame outside a fragmented message";
		if (fin)
			w->fragmented = false;
		break;
	case OP_TEXT:
	case OP_BINARY:
		if (w->fragmented)
			return "new message inside a fragmented message";
		w->fragmented = !fin;
		w->saw_fragments |= !fin;
		break;
	case OP_CLOSE:
	case OP_PING:
	case OP_PONG:
		if (!fin)
			return "fragmented control frame";
		break;
	default:
		return "reserved opcode";
	}
	w->close_frame = op == OP_CLOSE;
	return NULL;
}

/* The second byte: the mask bit for this direction and the 7-bit length. */
static const char *
check_second_byte(struct ws_checker *w, unsigned char b)
{
	unsigned len7 = b & WS_LEN7;
	bool masked = b & WS_MASK;
	bool control = w->hdr[0] & 0x08;

	/*
	 * Section 5.1 fixes the mask bit per direction.  A peer that gets it
	 * wrong is not speaking RFC 6455 to us, and the proxy refuses rather
	 * than guess what it is speaking instead.
	 */
	if (w->dir == WS_FROM_CLIENT && !masked)
		return "unmasked frame from the client";
	if (w->dir == WS_FROM_SERVER && masked)
		return "masked frame from the server";
	if (control && len7 > 125)
		return "control frame longer than 125 bytes";
	/* A close body starts with a two-byte status code, so one byte is never valid. */
	if (w->close_frame && len7 == 1)
		return "close frame with a one-byte body";
	w->hdr_need = 2 + (len7 == 126 ? 2 : len7 == 127 ? 8 : 0) + (masked ? 4 : 0);
	w->remaining = len7 < 126 ? len7 : 0; /* else set once the extended length is in */
	return NULL;
}

/*
 * The extended length, once all of it is there.  Non-minimal encodings are
 * refused so that a frame has exactly one spelling: a relay that re-frames
 * or a peer that is lax about them cannot be made to disagree with us.
 */
static const char *
check_extended_length(struct ws_checker *w)
{
	uint64_t len = 0;

	if ((w->hdr[1] & WS_LEN7) == 126) {
		len = (uint64_t)w->hdr[2] << 8 | w->hdr[3];
		if (len < 126)
			return "non-minimal 16-bit payload length";
	} else {
		if (w->hdr[2] & 0x80)
			return "64-bit payload length with the top bit set";
		for (int i = 2; i < 10; i++)
			len = len << 8 | w->hdr[i];
		if (len <= 0xffff)
			return "non-minimal 64-bit payload length";
	}
	w->remaining = len;
	return NULL;
}

static void
end_frame(struct ws_checker *w)
{
	w->in_payload = false;
	if (w->close_frame)
		w->closed = true;
}

/* One header byte; the frame's payload begins after the last. */
static const char *
header_byte(struct ws_checker *w, unsigned char b)
{
	const char *err = NULL;
	unsigned len7;

	w->hdr[w->hdr_len++] = b;
	if (w->hdr_len == 1)
		return check_first_byte(w, b);
	if (w->hdr_len == 2)
		err = check_second_byte(w, b);
	len7 = w->hdr[1] & WS_LEN7;
	if ((len7 == 126 && w->hdr_len == 4) || (len7 == 127 && w->hdr_len == 10))
		err = check_extended_length(w);
	if (err || w->hdr_len < w->hdr_need)
		return err;
	/* Header complete (the masking key is not needed: payload is never read). */
	w->hdr_len = 0;
	w->hdr_need = 0;
	if (w->remaining == 0)
		end_frame(w);
	else
		w->in_payload = true;
	return NULL;
}

static int
violation(struct ws_checker *w, const char *err, const char **why)
{
	w->error = err;
	if (why)
		*why = err;
	return -1;
}

int
ws_checker_feed(struct ws_checker *w, const unsigned char *buf, size_t len, const char **why)
{
	size_t i = 0;

	if (w->error)
		return violation(w, w->error, why);
	while (i < len) {
		const char *err;

		/* A close frame ends the stream; the next byte, whatever it is, is smuggled. */
		if (w->closed)
			return violation(w, "data after the close frame", why);
		if (w->in_payload) {
			size_t n = len - i;

			if (n > w->remaining)
				n = (size_t)w->remaining;
			i += n;
			w->remaining -= n;
			if (w->remaining == 0)
				end_frame(w);
			continue;
		}
		err = header_byte(w, buf[i++]);
		if (err)
			return violation(w, err, why);
	}
	return 0;
}
