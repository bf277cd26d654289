/*
 * http.h - strict HTTP/1.1 message heads, chunked bodies and targets.
 *
 * The egress proxy reads requests from an agent it does not trust and
 * responses from servers it does not control, and forwards both.  A
 * message the proxy frames differently from the next hop is a smuggling
 * channel, so everything here is strict (spec/egress.md, "Request
 * handling"): lines end in CRLF, a bare CR or LF anywhere is an error,
 * obs-fold and white space before a colon are errors, Content-Length must
 * be one decimal number, the only transfer coding is "chunked", and a
 * message may not carry both.  The lexers are re2c (http.re); they read
 * bounded input and never rely on NUL termination.
 *
 * Nothing here allocates, touches the network or knows about libevent, so
 * the unit tests and the fuzzer drive it with plain byte arrays.
 */
#ifndef OMNIBOX_HTTP_H
#define OMNIBOX_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Largest head (request or status line, headers, final CRLF): 64 KiB. */
#define HTTP_HEAD_MAX 65536
/* Most header fields in one head; more is answered like an oversized head. */
#define HTTP_MAX_HEADERS 128
/* Longest chunk-size line (with extensions) and trailer line. */
#define HTTP_CHUNK_LINE_MAX 4096

enum http_result {
	HTTP_DONE,  /* a complete head; p->head describes it */
	HTTP_MORE,  /* the input so far is a valid prefix: feed more */
	HTTP_ERROR, /* malformed: p->status and p->error say why */
};

/* Byte ranges into the head buffer (offsets survive the buffer moving). */
struct http_span {
	uint32_t off, len;
};

struct http_field {
	struct http_span name, value; /* value without surrounding white space */
};

struct http_head {
	bool response;
	/* request line */
	struct http_span method, target;
	/* status line */
	unsigned status;
	struct http_span reason;
	unsigned version; /* 10 or 11 (HTTP/1.0, HTTP/1.1) */

	struct http_field fields[HTTP_MAX_HEADERS];
	size_t n_fields;
	size_t length; /* bytes of the whole head, final CRLF included */

	/* What the fields say, checked once the head is complete. */
	bool has_length; /* one valid Content-Length */
	uint64_t content_length;
	bool chunked;		/* Transfer-Encoding: chunked */
	int host;		/* index of the Host field, or -1 */
	bool conn_close;	/* Connection: close (or HTTP/1.0 without keep-alive) */
	bool conn_upgrade;	/* Connection names "upgrade" */
	bool upgrade_websocket; /* Upgrade names "websocket" */
	long max_forwards;	/* Max-Forwards, or -1 when absent */
	bool expect_continue;	/* Expect: 100-continue */
};

struct http_parser {
	struct http_head head;
	size_t pos;	/* start of the first line not yet parsed */
	size_t scanned; /* bytes already searched for a line feed */
	int state;
	unsigned status;   /* on HTTP_ERROR: 400, 431, 501 or 505 (502 for responses) */
	const char *error; /* on HTTP_ERROR: a static, lower-case reason */
};

/* Prepare P to read a request head, or a response head when RESPONSE.
 * (Not "http_parser_init": the http-parser library, which Criterion links,
 * exports that name.) */
void http_head_begin(struct http_parser *p, bool response);

/*
 * Parse the head at the start of BUF.  BUF/LEN is all input since the head
 * began; call again with the same bytes plus more after HTTP_MORE (the
 * parser resumes where it stopped, so feeding byte by byte stays linear).
 * On HTTP_DONE the head is p->head.length bytes long; what follows is body
 * or the next message.  On HTTP_ERROR the status is p->status.
 */
enum http_result http_parse_head(struct http_parser *p, const char *buf, size_t len);

/* The bytes of a span. */
static inline const char *
http_span_ptr(const char *buf, struct http_span s)
{
	return buf + s.off;
}

/* Is NAME (LEN bytes) equal to the field name WANT, ignoring case? */
bool http_name_is(const char *name, size_t len, const char *want);

/* Does the comma-separated token list VALUE/LEN contain TOKEN (any case)? */
bool http_list_has(const char *value, size_t len, const char *token);

/* ---- chunked bodies ------------------------------------------------------------ */

enum http_chunk_step {
	CHUNK_MORE,  /* need more bytes before anything can be decided */
	CHUNK_SKIP,  /* *N framing bytes (size line, CRLF, trailer): drop them */
	CHUNK_DATA,  /* the next *N bytes are body data */
	CHUNK_DONE,  /* *N bytes end the body (last chunk and trailer) */
	CHUNK_ERROR, /* malformed framing; the message is unusable */
};

struct http_chunked {
	int state;
	uint64_t remaining; /* data bytes left in the current chunk */
	size_t trailer;	    /* trailer bytes so far */
	const char *error;
};

void http_chunked_init(struct http_chunked *c);

/* Contiguous bytes the next step must see: 0 inside chunk data, else a line's worth. */
size_t http_chunked_lookahead(const struct http_chunked *c);

/*
 * One step of decoding a chunked body.  AVAIL bytes are available; the
 * first LEN of them (LEN <= AVAIL) are at BUF, contiguous.  Framing is
 * only ever looked at through BUF: pass at least min(AVAIL,
 * HTTP_CHUNK_LINE_MAX + 2) bytes when the decoder is not inside chunk
 * data.  Data bytes are never read, so a caller can move them without
 * copying.  Sets *N as the step says; the caller consumes *N bytes.
 */
enum http_chunk_step http_chunked_step(struct http_chunked *c, const char *buf, size_t len,
				       size_t avail, size_t *n);

/* ---- request targets -------------------------------------------------------------- */

struct http_url {
	const char *host; /* within the parsed text; not NUL-terminated */
	size_t host_len;
	uint16_t port; /* the explicit port, or the scheme's default */
	bool port_given;
	const char *path; /* path and query ("/" when the URL has none) */
	size_t path_len;
	bool ipv6; /* the host was a bracketed IPv6 literal (host excludes brackets) */
};

/*
 * Split an absolute-form target "SCHEME://HOST[:PORT][/PATH][?QUERY]".
 * SCHEME must be WANT_SCHEME ("http" or "https", any case).  A userinfo
 * ("user@"), an empty host, a bad port or a fragment is an error.
 * Returns 0, or -1 with a static reason in *WHY.
 */
int http_parse_absolute(const char *s, size_t len, const char *want_scheme, struct http_url *u,
			const char **why);

/*
 * Split an authority-form target "HOST:PORT" (CONNECT).  The port is
 * required.  Returns 0, or -1 with a static reason in *WHY.
 */
int http_parse_authority(const char *s, size_t len, struct http_url *u, const char **why);

/* Split a Host field value "HOST[:PORT]"; 0 or -1. */
int http_parse_host_field(const char *s, size_t len, struct http_url *u, const char **why);

#endif
