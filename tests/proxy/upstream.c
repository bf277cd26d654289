/*
 * upstream.c - the servers behind the proxy in the end-to-end tests.
 *
 *   upstream --cert FILE --key FILE [--log FILE] [--git-root DIR]
 *
 * Listens on two loopback ports, HTTP and HTTPS (the certificate comes
 * from a CA the test made), prints "ready HTTP_PORT HTTPS_PORT", and
 * serves HTTP/1.1 with keep-alive, one thread per connection:
 *
 *   /bytes/N     N bytes with Content-Length      /chunked/N  N bytes, chunked
 *   /close/N     N bytes ended by closing         /status/N   that status, no body
 *   /count       how many requests came before this one
 *   /ws          a WebSocket upgrade (101 with the Accept for the key), then
 *                echoes each frame's payload in an unmasked frame of its kind
 *   /fakews      a 101 without Sec-WebSocket-Accept, then logs what arrives
 *                ("fakews-bytes: ...") as a server that took it would read it
 *   /reflect     Authorization and X-Api-Key copied into response headers
 *   /gzip        a body sent with Content-Encoding: gzip
 *   /refl?Q      "you asked for: Q" (the agent's own bytes at the end of a body)
 *   /partial     a 206 with the echo's first 40 bytes
 *   /utf16       a body declared charset=utf-16
 *   /reflectname the Authorization value (spaces dropped) as a header's name
 *   /wsfrag      a 101, then the Authorization value in a message of two frames
 *   /padecho/N   the echo below after N bytes of padding, in 1000-byte chunks
 *   /lenecho/N   the same with Content-Length, in one write (N < 16 MiB)
 *   /git/...     git http-backend as CGI (smart HTTP) for repositories in --git-root
 *   anything else: an echo of the request line, the fields and the body's
 *                size and FNV-1a hash, as text
 *
 * Request bodies (Content-Length or chunked) are read as they stream, never
 * stored.  Every request is logged ("request N: LINE") so tests can prove
 * what did, and what did not, reach the server; the Authorization and
 * X-Api-Key fields are logged too ("  Authorization: ..."), so tests can
 * prove what the proxy sent upstream.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/sha.h>
#include <openssl/ssl.h>

#define BUF 65536
#define MAX_FIELDS 100

static SSL_CTX *ctx;
static FILE *log_file;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_ulong requests;
static const char *git_root;
static char block[256 * 1024];

struct io {
	int fd;
	SSL *ssl;
	char buf[BUF];
	size_t off, len;
};

struct field {
	char *name, *value;
};

struct request {
	char line[8192], method[32], target[8192];
	int minor;
	struct field f[MAX_FIELDS];
	size_t n;
	char *head; /* the whole head, for the fields' storage */
};

static void
logmsg(const char *fmt, ...)
{
	va_list ap;

	if (!log_file)
		return;
	pthread_mutex_lock(&log_lock);
	va_start(ap, fmt);
	vfprintf(log_file, fmt, ap);
	va_end(ap);
	fflush(log_file);
	pthread_mutex_unlock(&log_lock);
}

static ssize_t
io_recv(struct io *io, void *p, size_t n)
{
	if (io->ssl) {
		int r = SSL_read(io->ssl, p, n > INT32_MAX ? INT32_MAX : (int)n);

		return r > 0 ? r : (SSL_get_error(io->ssl, r) == SSL_ERROR_ZERO_RETURN ? 0 : -1);
	}
	for (;;) {
		ssize_t r = recv(io->fd, p, n, 0);

		if (r < 0 && errno == EINTR)
			continue;
		return r;
	}
}

static int
io_send(struct io *io, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t w;

		if (io->ssl) {
			int r = SSL_write(io->ssl, c, n > (1 << 30) ? 1 << 30 : (int)n);

			w = r > 0 ? r : -1;
		} else {
			w = send(io->fd, c, n, MSG_NOSIGNAL);
			if (w < 0 && errno == EINTR)
				continue;
		}
		if (w <= 0)
			return -1;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

static int io_printf(struct io *io, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int
io_printf(struct io *io, const char *fmt, ...)
{
	char s[16384];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(s, sizeof(s), fmt, ap);
	va_end(ap);
	return io_send(io, s, (size_t)n < sizeof(s) ? (size_t)n : sizeof(s) - 1);
}

/* Make at least one byte available; 0 at EOF. */
static int
io_fill(struct io *io)
{
	ssize_t r;

	if (io->off < io->len)
		return 1;
	io->off = io->len = 0;
	r = io_recv(io, io->buf, sizeof(io->buf));
	if (r <= 0)
		return 0;
	io->len = (size_t)r;
	return 1;
}

/* A line ending in LF (CR stripped) into S; -1 at EOF or when too long. */
static int
io_line(struct io *io, char *s, size_t cap)
{
	size_t n = 0;

	for (;;) {
		char c;

		if (!io_fill(io))
			return -1;
		c = io->buf[io->off++];
		if (c == '\n')
			break;
		if (n + 1 >= cap)
			return -1;
		s[n++] = c;
	}
	if (n && s[n - 1] == '\r')
		n--;
	s[n] = '\0';
	return (int)n;
}

static const char *
field(const struct request *rq, const char *name)
{
	for (size_t i = 0; i < rq->n; i++)
		if (!strcasecmp(rq->f[i].name, name))
			return rq->f[i].value;
	return NULL;
}

static int
read_request(struct io *io, struct request *rq)
{
	char line[16384];
	size_t hl = 0, cap = 65536;

	memset(rq, 0, sizeof(*rq));
	if (io_line(io, rq->line, sizeof(rq->line)) < 0)
		return -1;
	if (sscanf(rq->line, "%31s %8191s HTTP/1.%d", rq->method, rq->target, &rq->minor) != 3)
		return -1;
	rq->head = malloc(cap);
	for (;;) {
		int n = io_line(io, line, sizeof(line));
		char *colon;

		if (n < 0)
			return -1;
		if (n == 0)
			break;
		colon = strchr(line, ':');
		if (!colon || rq->n == MAX_FIELDS || hl + (size_t)n + 1 > cap)
			return -1;
		memcpy(rq->head + hl, line, (size_t)n + 1);
		rq->f[rq->n].name = rq->head + hl;
		rq->head[hl + (colon - line)] = '\0';
		rq->f[rq->n].value = rq->head + hl + (colon - line) + 1;
		while (*rq->f[rq->n].value == ' ')
			rq->f[rq->n].value++;
		rq->n++;
		hl += (size_t)n + 1;
	}
	return 0;
}

struct body {
	bool chunked;
	uint64_t left; /* Content-Length left, or bytes left in the chunk */
	bool done;
};

/* Up to CAP body bytes into P; 0 at the end of the body, -1 on errors. */
static ssize_t
body_read(struct io *io, struct body *b, char *p, size_t cap)
{
	size_t n;

	if (b->done)
		return 0;
	if (b->chunked && b->left == 0) {
		char line[1024];

		if (io_line(io, line, sizeof(line)) < 0)
			return -1;
		b->left = strtoull(line, NULL, 16);
		if (b->left == 0) {
			while (io_line(io, line, sizeof(line)) > 0)
				;
			b->done = true;
			return 0;
		}
	}
	if (!b->chunked && b->left == 0) {
		b->done = true;
		return 0;
	}
	if (!io_fill(io))
		return -1;
	n = io->len - io->off;
	if (n > b->left)
		n = (size_t)b->left;
	if (n > cap)
		n = cap;
	memcpy(p, io->buf + io->off, n);
	io->off += n;
	b->left -= n;
	if (b->chunked && b->left == 0) {
		char crlf[8];

		if (io_line(io, crlf, sizeof(crlf)) != 0)
			return -1;
	}
	return (ssize_t)n;
}

static int
send_bytes(struct io *io, uint64_t n)
{
	while (n) {
		size_t k = n < sizeof(block) ? (size_t)n : sizeof(block);

		if (io_send(io, block, k) < 0)
			return -1;
		n -= k;
	}
	return 0;
}

/* git http-backend behind CGI; its output goes out chunked. */
static int
serve_git(struct io *io, struct request *rq, struct body *b)
{
	int in[2], out[2], status = 0;
	pid_t pid;
	char *path = rq->target + 4, *q = strchr(path, '?'), buf[65536], hdr[8192];
	size_t hlen = 0;
	bool headers_done = false;
	ssize_t n;

	if (pipe(in) < 0 || pipe(out) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		const char *ct = field(rq, "Content-Type"), *cl = field(rq, "Content-Length");
		const char *gp = field(rq, "Git-Protocol"), *ce = field(rq, "Content-Encoding");

		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		if (q)
			*q = '\0';
		setenv("GIT_PROJECT_ROOT", git_root, 1);
		setenv("GIT_HTTP_EXPORT_ALL", "1", 1);
		setenv("PATH_INFO", path, 1);
		setenv("REQUEST_METHOD", rq->method, 1);
		setenv("QUERY_STRING", q ? q + 1 : "", 1);
		setenv("REMOTE_ADDR", "127.0.0.1", 1);
		if (ct)
			setenv("CONTENT_TYPE", ct, 1);
		if (cl)
			setenv("CONTENT_LENGTH", cl, 1);
		if (gp)
			setenv("HTTP_GIT_PROTOCOL", gp, 1);
		if (ce)
			setenv("HTTP_CONTENT_ENCODING", ce, 1);
		execlp("git", "git", "http-backend", (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	while ((n = body_read(io, b, buf, sizeof(buf))) > 0)
		if (write(in[1], buf, (size_t)n) != n)
			break;
	close(in[1]);
	while ((n = read(out[0], buf, sizeof(buf))) > 0) {
		char *p = buf;
		size_t len = (size_t)n;

		if (!headers_done) {
			char *end;

			if (hlen + len > sizeof(hdr) - 1)
				break;
			memcpy(hdr + hlen, buf, len);
			hlen += len;
			hdr[hlen] = '\0';
			end = strstr(hdr, "\r\n\r\n");
			if (!end)
				end = strstr(hdr, "\n\n");
			if (!end)
				continue;
			{
				size_t skip = end[0] == '\r' ? 4 : 2, hl = (size_t)(end - hdr);
				char status_line[128] = "200 OK", *l = hdr;

				/* CGI header lines end in LF or CRLF; HTTP wants CRLF. */
				end[0] = '\0';
				io_printf(io, "HTTP/1.1 ");
				for (char *s = hdr; s && *s;
				     s = strchr(s, '\n') ? strchr(s, '\n') + 1 : NULL)
					if (!strncasecmp(s, "Status:", 7))
						snprintf(status_line, sizeof(status_line), "%.*s",
							 (int)strcspn(s + 8, "\r\n"), s + 8);
				io_printf(io, "%s\r\n", status_line);
				while (l && *l) {
					size_t k = strcspn(l, "\r\n");

					if (k && strncasecmp(l, "Status:", 7))
						io_printf(io, "%.*s\r\n", (int)k, l);
					l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL;
				}
				io_printf(io, "Transfer-Encoding: chunked\r\n\r\n");
				headers_done = true;
				p = hdr + hl + skip;
				len = hlen - hl - skip;
			}
		}
		if (len) {
			io_printf(io, "%zx\r\n", len);
			io_send(io, p, len);
			io_printf(io, "\r\n");
		}
	}
	close(out[0]);
	waitpid(pid, &status, 0);
	if (!headers_done)
		return io_printf(io, "HTTP/1.1 500 CGI failed\r\nContent-Length: 0\r\n\r\n");
	return io_printf(io, "0\r\n\r\n");
}

/* Sec-WebSocket-Accept for KEY (RFC 6455 4.2.2), into OUT (at least 29 bytes). */
static void
ws_accept(const char *key, char *out)
{
	unsigned char md[SHA_DIGEST_LENGTH];
	char in[256];

	snprintf(in, sizeof(in), "%s258EAFA5-E914-47DA-95CA-C5AB0DC85B11", key);
	SHA1((const unsigned char *)in, strlen(in), md);
	EVP_EncodeBlock((unsigned char *)out, md, SHA_DIGEST_LENGTH);
}

static int
io_exact(struct io *io, unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (!io_fill(io))
			return -1;
		p[i] = (unsigned char)io->buf[io->off++];
	}
	return 0;
}

/* Frames in, the same payloads back in unmasked frames, until a close or EOF. */
static void
ws_echo(struct io *io)
{
	for (;;) {
		unsigned char h[2], ext[8], mask[4], out[10];
		uint64_t len;
		unsigned char *payload;
		size_t o = 0;

		if (io_exact(io, h, 2) < 0)
			return;
		len = h[1] & 127;
		if (len == 126 || len == 127) {
			size_t k = len == 126 ? 2 : 8;

			if (io_exact(io, ext, k) < 0)
				return;
			len = 0;
			for (size_t i = 0; i < k; i++)
				len = len << 8 | ext[i];
		}
		if (len > 1 << 20 || !(h[1] & 128) || io_exact(io, mask, 4) < 0)
			return;
		payload = malloc(len ? len : 1);
		if (!payload || io_exact(io, payload, len) < 0) {
			free(payload);
			return;
		}
		for (uint64_t i = 0; i < len; i++)
			payload[i] ^= mask[i % 4];
		out[o++] = h[0];
		if (len < 126) {
			out[o++] = (unsigned char)len;
		} else if (len < 65536) {
			out[o++] = 126;
			out[o++] = (unsigned char)(len >> 8);
			out[o++] = (unsigned char)len;
		} else {
			out[o++] = 127;
			for (int i = 7; i >= 0; i--)
				out[o++] = (unsigned char)(len >> (8 * i));
		}
		if (io_send(io, out, o) < 0 || io_send(io, payload, len) < 0) {
			free(payload);
			return;
		}
		free(payload);
		if ((h[0] & 15) == 8)
			return;
	}
}

static void
serve(struct io *io)
{
	struct request rq;
	char buf[65536];

	while (read_request(io, &rq) == 0) {
		unsigned long nr = atomic_fetch_add(&requests, 1);
		const char *te = field(&rq, "Transfer-Encoding"),
			   *cl = field(&rq, "Content-Length");
		const char *conn = field(&rq, "Connection"), *expect = field(&rq, "Expect");
		struct body b = {te && !strcasecmp(te, "chunked"), cl ? strtoull(cl, NULL, 10) : 0,
				 false};
		bool close_after = (conn && !strcasecmp(conn, "close")) || rq.minor == 0;
		unsigned long long v = 0;
		int rc = 0;

		logmsg("request %lu: %s\n", nr + 1, rq.line);
		for (size_t i = 0; i < rq.n; i++)
			if (!strcasecmp(rq.f[i].name, "Authorization") ||
			    !strcasecmp(rq.f[i].name, "X-Api-Key"))
				logmsg("  %s: %s\n", rq.f[i].name, rq.f[i].value);
		if (expect && !strcasecmp(expect, "100-continue"))
			io_printf(io, "HTTP/1.1 100 Continue\r\n\r\n");
		if (!strncmp(rq.target, "/git/", 5) && git_root) {
			rc = serve_git(io, &rq, &b);
		} else if (sscanf(rq.target, "/bytes/%llu", &v) == 1) {
			while (body_read(io, &b, buf, sizeof(buf)) > 0)
				;
			rc = io_printf(io, "HTTP/1.1 200 OK\r\nContent-Length: %llu\r\n\r\n", v);
			if (rc == 0 && strcmp(rq.method, "HEAD"))
				rc = send_bytes(io, v);
		} else if (sscanf(rq.target, "/chunked/%llu", &v) == 1) {
			while (body_read(io, &b, buf, sizeof(buf)) > 0)
				;
			rc = io_printf(io, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
			while (rc == 0 && v) {
				size_t k = v < 65536 ? (size_t)v : 65536;

				rc = io_printf(io, "%zx\r\n", k);
				if (rc == 0)
					rc = io_send(io, block, k);
				if (rc == 0)
					rc = io_printf(io, "\r\n");
				v -= k;
			}
			if (rc == 0)
				rc = io_printf(io, "0\r\n\r\n");
		} else if (sscanf(rq.target, "/close/%llu", &v) == 1) {
			while (body_read(io, &b, buf, sizeof(buf)) > 0)
				;
			io_printf(io, "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n");
			send_bytes(io, v);
			return;
		} else if (sscanf(rq.target, "/status/%llu", &v) == 1) {
			while (body_read(io, &b, buf, sizeof(buf)) > 0)
				;
			rc = io_printf(io, "HTTP/1.1 %llu Test\r\nContent-Length: 0\r\n\r\n", v);
		} else if (!strcmp(rq.target, "/count")) {
			char s[64];
			int n = snprintf(s, sizeof(s), "%lu\n", nr);

			rc = io_printf(io, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", n, s);
		} else if (!strcmp(rq.target, "/ws") && field(&rq, "Upgrade")) {
			const char *key = field(&rq, "Sec-WebSocket-Key");
			char accept[64] = "";

			ws_accept(key ? key : "", accept);
			io_printf(io,
				  "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
				  "Connection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n\r\n",
				  accept);
			ws_echo(io);
			free(rq.head);
			return;
		} else if (!strcmp(rq.target, "/fakews")) {
			io_printf(io, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
				      "Connection: Upgrade\r\n\r\n");
			while (io_fill(io)) {
				logmsg("fakews-bytes: %.*s\n", (int)(io->len - io->off),
				       io->buf + io->off);
				io->off = io->len;
			}
			free(rq.head);
			return;
		} else if (!strcmp(rq.target, "/reflect")) {
			const char *a = field(&rq, "Authorization"), *k = field(&rq, "X-Api-Key");

			while (body_read(io, &b, buf, sizeof(buf)) > 0)
				;
			rc =
			    io_printf(io,
				      "HTTP/1.1 200 OK\r\nX-Echo-Authorization: %s\r\n"
				      "X-Echo-Api-Key: %s\r\nContent-Length: 10\r\n\r\nreflected\n",
				      a ? a : "-", k ? k : "-");
		} else if (!strncmp(rq.target, "/refl?", 6)) {
			while (body_read(io, &b, buf, sizeof(buf)) > 0)
				;
			rc = io_printf(
			    io, "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n\r\nyou asked for: %s",
			    strlen(rq.target + 6) + 15, rq.target + 6);
		} else if (!strcmp(rq.target, "/partial")) {
			while (body_read(io, &b, buf, sizeof(buf)) > 0)
				;
			rc = io_printf(
			    io,
			    "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 0-39/999\r\n"
			    "Content-Length: 40\r\n\r\n%-40.40s",
			    rq.line);
		} else if (!strcmp(rq.target, "/utf16")) {
			while (body_read(io, &b, buf, sizeof(buf)) > 0)
				;
			rc = io_printf(
			    io, "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=UTF-16\r\n"
				"Content-Length: 4\r\n\r\nW\001D\001");
		} else if (!strcmp(rq.target, "/reflectname")) {
			const char *a = field(&rq, "Authorization");
			char name[512];
			size_t k = 0;

			for (; a && *a && k + 1 < sizeof(name); a++)
				if (*a != ' ')
					name[k++] = *a;
			name[k] = '\0';
			while (body_read(io, &b, buf, sizeof(buf)) > 0)
				;
			rc = io_printf(
			    io, "HTTP/1.1 200 OK\r\nX-%s: 1\r\nContent-Length: 3\r\n\r\nok\n",
			    k ? name : "none");
		} else if (!strcmp(rq.target, "/wsfrag") && field(&rq, "Upgrade")) {
			const char *key = field(&rq, "Sec-WebSocket-Key"),
				   *a = field(&rq, "Authorization");
			char accept[64] = "";
			size_t n = a ? strlen(a) : 0, half = n / 2;
			unsigned char h1[2] = {0x01, (unsigned char)half},
				      h2[2] = {0x80, (unsigned char)(n - half)};

			ws_accept(key ? key : "", accept);
			io_printf(io,
				  "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
				  "Connection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n\r\n",
				  accept);
			if (n < 126 && io_send(io, h1, 2) == 0 && io_send(io, a, half) == 0 &&
			    io_send(io, h2, 2) == 0)
				io_send(io, a + half, n - half);
			ws_echo(io);
			free(rq.head);
			return;
		} else if (!strcmp(rq.target, "/gzip")) {
			while (body_read(io, &b, buf, sizeof(buf)) > 0)
				;
			rc = io_printf(io, "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n"
					   "Content-Length: 4\r\n\r\nGZIP");
		} else {
			/* The echo: what arrived, as text. */
			char *text = malloc(1 << 20);
			size_t len = 0;
			uint64_t total = 0, hash = 1469598103934665603ull;
			ssize_t n;

			while ((n = body_read(io, &b, buf, sizeof(buf))) > 0) {
				total += (uint64_t)n;
				for (ssize_t i = 0; i < n; i++)
					hash = (hash ^ (unsigned char)buf[i]) * 1099511628211ull;
			}
			if (n < 0) {
				free(text);
				free(rq.head);
				return;
			}
			len += (size_t)snprintf(text + len, (1 << 20) - len, "%s\n", rq.line);
			for (size_t i = 0; i < rq.n; i++)
				len += (size_t)snprintf(text + len, (1 << 20) - len, "%s: %s\n",
							rq.f[i].name, rq.f[i].value);
			len += (size_t)snprintf(
			    text + len, (1 << 20) - len, "body-bytes: %llu\nbody-fnv: %016llx\n",
			    (unsigned long long)total, (unsigned long long)hash);
			if (sscanf(rq.target, "/lenecho/%llu", &v) == 1 && v < (16u << 20)) {
				/* One write: the records (and the proxy's reads) split
				 * the body where they will, the secret too. */
				char *all = malloc((size_t)v + len);

				rc = -1;
				if (all) {
					memset(all, 'x', (size_t)v);
					memcpy(all + v, text, len);
					rc = io_printf(
					    io, "HTTP/1.1 200 OK\r\nContent-Length: %llu\r\n\r\n",
					    (unsigned long long)(v + len));
				}
				if (rc == 0)
					rc = io_send(io, all, (size_t)v + len);
				free(all);
				free(text);
				free(rq.head);
				if (rc < 0 || close_after)
					return;
				continue;
			}
			if (sscanf(rq.target, "/padecho/%llu", &v) == 1) {
				/* The echo V bytes in, in 1000-byte chunks: the secret
				 * crosses chunk (and read) boundaries. */
				uint64_t total_len = v + len, sent = 0;

				rc = io_printf(
				    io, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
				while (rc == 0 && sent < total_len) {
					char piece[1000];
					size_t k = total_len - sent < 1000
						       ? (size_t)(total_len - sent)
						       : 1000;

					for (size_t i = 0; i < k; i++)
						piece[i] = sent + i < v ? 'x' : text[sent + i - v];
					rc = io_printf(io, "%zx\r\n", k);
					if (rc == 0)
						rc = io_send(io, piece, k);
					if (rc == 0)
						rc = io_printf(io, "\r\n");
					sent += k;
				}
				if (rc == 0)
					rc = io_printf(io, "0\r\n\r\n");
				free(text);
				free(rq.head);
				if (rc < 0 || close_after)
					return;
				continue;
			}
			rc = io_printf(io,
				       "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
				       "Content-Length: %zu\r\n%s\r\n",
				       len, close_after ? "Connection: close\r\n" : "");
			if (rc == 0 && strcmp(rq.method, "HEAD"))
				rc = io_send(io, text, len);
			free(text);
		}
		free(rq.head);
		if (rc < 0 || close_after)
			return;
	}
	free(rq.head);
}

static void *
conn_main(void *arg)
{
	struct io *io = arg;

	if (io->ssl) {
		SSL_set_fd(io->ssl, io->fd);
		if (SSL_accept(io->ssl) == 1)
			serve(io);
		else
			logmsg("tls handshake failed\n");
		SSL_shutdown(io->ssl);
		SSL_free(io->ssl);
	} else {
		serve(io);
	}
	close(io->fd);
	free(io);
	return NULL;
}

static int
listen_on(uint16_t *port)
{
	struct sockaddr_in sin = {0};
	socklen_t len = sizeof(sin);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 || listen(fd, 4096) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sin, &len) < 0) {
		perror("upstream: listen");
		exit(1);
	}
	*port = ntohs(sin.sin_port);
	return fd;
}

struct listener {
	int fd;
	bool tls;
};

static void *
accept_main(void *arg)
{
	struct listener *l = arg;
	pthread_attr_t attr;

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 512 * 1024);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	for (;;) {
		int fd = accept4(l->fd, NULL, NULL, SOCK_CLOEXEC), one = 1;
		struct io *io;
		pthread_t t;

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			usleep(10000);
			continue;
		}
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		io = calloc(1, sizeof(*io));
		io->fd = fd;
		if (l->tls)
			io->ssl = SSL_new(ctx);
		if (pthread_create(&t, &attr, conn_main, io) != 0) {
			close(fd);
			if (io->ssl)
				SSL_free(io->ssl);
			free(io);
		}
	}
	return NULL;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"cert", required_argument, NULL, 'c'},
	    {"key", required_argument, NULL, 'k'},
	    {"log", required_argument, NULL, 'l'},
	    {"git-root", required_argument, NULL, 'g'},
	    {NULL, 0, NULL, 0},
	};
	const char *cert = NULL, *key = NULL;
	struct listener plain, tls;
	uint16_t p1, p2;
	pthread_t t;
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			cert = optarg;
			break;
		case 'k':
			key = optarg;
			break;
		case 'l':
			log_file = fopen(optarg, "a");
			break;
		case 'g':
			git_root = optarg;
			break;
		default:
			return 2;
		}
	}
	if (!cert || !key) {
		fputs("usage: upstream --cert FILE --key FILE [--log FILE] [--git-root DIR]\n",
		      stderr);
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	memset(block, 'x', sizeof(block));
	ctx = SSL_CTX_new(TLS_server_method());
	if (!ctx || SSL_CTX_use_certificate_chain_file(ctx, cert) != 1 ||
	    SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1) {
		ERR_print_errors_fp(stderr);
		return 1;
	}
	plain.fd = listen_on(&p1);
	plain.tls = false;
	tls.fd = listen_on(&p2);
	tls.tls = true;
	pthread_create(&t, NULL, accept_main, &plain);
	pthread_create(&t, NULL, accept_main, &tls);
	printf("ready %u %u\n", p1, p2);
	fflush(stdout);
	for (;;)
		pause();
}
