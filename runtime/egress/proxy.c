/*
 * proxy.c - the egress proxy's event machine.
 *
 * One struct conn per connection from the agent (through the relay).  Its
 * request side reads heads and bodies from the agent; its response side
 * reads heads and bodies from the upstream server.  Requests on one
 * connection are handled one at a time: the next head is read only once
 * the previous response has been passed on, so each request is checked
 * when it arrives and answers never overtake each other.
 *
 * Nothing is buffered whole.  A body moves from one bufferevent to the
 * other as it arrives; when a destination holds PROXY_HWM bytes its
 * source stops being read, and is read again once the destination holds
 * less (looked at whenever either side makes progress; a destination's
 * write callback fires when it drains to PROXY_LWM).
 *
 * Sockets: every socket has a plain socket bufferevent.  libevent writes
 * it; the proxy reads it itself (read_into(): libevent 2.1 reads 4 KiB at
 * a time, read_into() 64 KiB, up to 1 MiB while a socket keeps more
 * waiting).  TLS legs are filters stacked on those (tlsleg.h), so
 * OpenSSL never makes a system call and records leave in large writes.  A
 * plain response body between two plain sockets moves with splice(2).
 *
 * Connections end through conn_kill(), which closes the sockets at once
 * and frees the struct from a deferred event, so code that called
 * something which may have ended the connection only checks c->dead.
 *
 * This file sets the proxy up and tears it down; the machine itself is in
 * proxy_conn.c, proxy_request.c, proxy_tunnel.c and proxy_response.c
 * (proxy_int.h says which role each has, and holds what they share).
 */
#include "runtime/egress/proxy_int.h"

#include <pthread.h>

#include "runtime/launch/elsewhere.h"

/* ---- logging ----------------------------------------------------------------------- */

void
plog(struct proxy *p, const char *fmt, ...)
{
	char line[2048];
	va_list ap;

	if (!p->log)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	p->log(p->log_arg, line);
}

/*
 * S/LEN as a field of a log line or a message (textesc.h, the one escaping
 * of the launch): the agent must not be able to forge log lines or reach the
 * terminal.  Cut with "..." when it does not fit in CAP (at least 8) bytes.
 */
const char *
esc(char *buf, size_t cap, const char *s, size_t len)
{
	text_escape(buf, cap, s, len, TEXT_ESC_FIELD);
	return buf;
}

/* A rule as written: "GET,POST api.github.com/repos/(glob)", "tcp h:22". */
static void
rule_text(const struct egress_rule *r, char *buf, size_t cap)
{
	egress_rule_format(r, false, buf, cap);
}

const char *
rule_desc(struct proxy *p, ssize_t i, char *buf, size_t cap)
{
	char text[1024];

	rule_text(&p->rules[i], text, sizeof(text));
	snprintf(buf, cap, "rule #%zd (line %u: %s)", i + 1, p->rules[i].loc.line, text);
	return buf;
}

/* ---- setup ------------------------------------------------------------------------- */

static void
listener_error_cb(struct evconnlistener *l, void *arg)
{
	struct proxy *p = arg;

	(void)l;
	plog(p, "accept: %s", strerror(errno));
}

static char *
read_file(const char *path, size_t *len, char *err, size_t errlen)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL;
	size_t cap = 0, n = 0;
	struct stat st;

	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	/* Room for the whole file as it is now, and a byte to see its end. */
	if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
	    (unsigned long long)st.st_size < SIZE_MAX / 2)
		cap = (size_t)st.st_size + 2;
	for (;;) {
		size_t r;

		if (n + 2 > cap || !buf) {
			char *nb = realloc(buf, cap = cap < 65536 ? 65536 : buf ? cap * 2 : cap);

			if (!nb) {
				free(buf);
				fclose(f);
				snprintf(err, errlen, "%s: out of memory", path);
				return NULL;
			}
			buf = nb;
		}
		r = fread(buf + n, 1, cap - n - 1, f);
		n += r;
		if (r == 0)
			break;
	}
	if (ferror(f)) {
		snprintf(err, errlen, "%s: read error", path);
		free(buf);
		fclose(f);
		return NULL;
	}
	fclose(f);
	buf[n] = '\0';
	*len = n;
	return buf;
}

/* ---- the system's CAs, read while OpenSSL starts ---------------------------------- */

/*
 * omnibox-run's proxy reads and splits the system's CA file (some 140
 * certificates, 0.8 ms) on a thread of its own while the main one starts
 * OpenSSL and makes its keys (2 ms), which need nothing of it.  Only the
 * file's bytes and their split are made there, the split shared as
 * pem_certs_get() shares one; the main thread takes both once it needs
 * them (take_prefetched()), as they would have been read then.
 */
static struct {
	pthread_t th;
	bool running;
	char *text; /* NULL: not read, the reason in err */
	size_t len;
	struct pem_certs *split;
	int rc; /* pem_certs_get()'s */
	char err[512];
} prefetch;

static void *
prefetch_run(void *arg)
{
	(void)arg;
	prefetch.text =
	    read_file(DEFAULT_SYSTEM_CAS, &prefetch.len, prefetch.err, sizeof(prefetch.err));
	if (prefetch.text)
		prefetch.split = pem_certs_get(prefetch.text, prefetch.len, &prefetch.rc);
	return NULL;
}

/* The thread stays on the other CPUs: it is done within a millisecond or two. */
void
proxy_prefetch_cas(void)
{
	if (!prefetch.running && thread_elsewhere(&prefetch.th, prefetch_run, NULL) == 0)
		prefetch.running = true;
}

/* The prefetched text (the caller's now, *LEN bytes) and its split (*SPLIT,
 * held: the caller puts it; NULL unless *RC is 1), or NULL with the reason
 * in ERR.  False when nothing was prefetched. */
static bool
take_prefetched(char **text, size_t *len, struct pem_certs **split, int *rc, char *err,
		size_t errlen)
{
	if (!prefetch.running)
		return false;
	pthread_join(prefetch.th, NULL);
	prefetch.running = false;
	*text = prefetch.text;
	*len = prefetch.len;
	*split = prefetch.split;
	*rc = prefetch.rc;
	if (!*text)
		snprintf(err, errlen, "%s", prefetch.err);
	prefetch.text = NULL;
	prefetch.split = NULL;
	return true;
}

void
proxy_prefetch_drop(void)
{
	char *text, err[sizeof(prefetch.err)];
	size_t len;
	struct pem_certs *split;
	int rc;

	if (take_prefetched(&text, &len, &split, &rc, err, sizeof(err))) {
		pem_certs_put(split);
		free(text);
	}
}

/*
 * The session's trust for the clients inside, beside CF's bundle path (the
 * scratch dir): the system CAs, the --egress-ca certificates (EXTRA, when
 * given) and the session CA, as PEM, JKS and a hashed directory.
 */
static int
write_trust(const struct proxy_config *cf, const char *extra, size_t extra_len, const char *ca,
	    size_t ca_len, char *err, size_t errlen)
{
	struct pem_certs *split = NULL;
	char *sys = NULL;
	size_t sys_len = 0;
	int rc;

	if (!cf->system_ca_file) {
		sys = (char *)extra; /* the system store is the upstream trust */
		sys_len = extra_len;
		extra = NULL;
		extra_len = 0;
	} else if (!take_prefetched(&sys, &sys_len, &split, &rc, err, errlen)) {
		sys = read_file(DEFAULT_SYSTEM_CAS, &sys_len, err, errlen);
	}
	if (!sys)
		sys_len = 0; /* no system store here: the bundle holds the rest */
	rc = truststore_write(cf->ca_bundle_path, sys, sys_len, extra, extra_len, ca, ca_len, err,
			      errlen);
	pem_certs_put(split);
	if (cf->system_ca_file)
		free(sys);
	return rc;
}

static int
listen_unix(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sun;
	struct stat st;
	int fd;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun.sun_path)) {
		snprintf(err, errlen, "%s: socket path too long", path);
		return -1;
	}
	strcpy(sun.sun_path, path);
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			snprintf(err, errlen, "%s exists and is not a socket", path);
			return -1;
		}
		unlink(path);
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0 || chmod(path, 0600) < 0 ||
	    listen(fd, SOMAXCONN) < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* ---- the credentials' table, and reading secrets again ----------------------------------- */

static char *
dup_or_null(struct arena *a, const char *s)
{
	return s ? arena_strdup(a, s) : NULL;
}

/* D: a copy of S in P's arena. */
static int
copy_cred(struct proxy *p, const struct proxy_cred *s, struct proxy_cred *d)
{
	char *host = arena_strdup(p->arena, s->host);

	lower(host);
	*d = *s;
	d->host = host;
	d->username = dup_or_null(p->arena, s->username);
	d->secret = arena_strdup(p->arena, s->secret);
	d->placeholder = dup_or_null(p->arena, s->placeholder);
	d->header = dup_or_null(p->arena, s->header);
	d->source.path = dup_or_null(p->arena, s->source.path);
	if (s->aws) {
		struct proxy_aws *aws = arena_alloc(p->arena, sizeof(*aws));

		aws->region = arena_strdup(p->arena, s->aws->region);
		aws->service = arena_strdup(p->arena, s->aws->service);
		aws->key_id = arena_strdup(p->arena, s->aws->key_id);
		aws->key_id_placeholder = arena_strdup(p->arena, s->aws->key_id_placeholder);
		aws->token = dup_or_null(p->arena, s->aws->token);
		aws->token_placeholder = dup_or_null(p->arena, s->aws->token_placeholder);
		d->aws = aws;
	}
	return 0;
}

/* What the scrubber replaces row I's secrets with: its placeholders. */
static int
scrub_cred(struct proxy *p, const struct proxy_cred *rows, size_t i)
{
	const struct proxy_cred *c = &rows[i];

	/* Rows of a refreshed entry share one secret: counted once, so that
	 * retiring it later takes it out. */
	if (c->refresh)
		for (size_t k = 0; k < i; k++)
			if (rows[k].refresh && rows[k].entry == c->entry)
				return 0;
	/* Swap-on-access has no placeholder: a marker the proxy refuses if sent back. */
	if (scrub_set_add_secret(&p->scrub, c->secret,
				 c->placeholder ? c->placeholder : SWAP_MARKER) < 0)
		return -1;
	if (c->aws &&
	    scrub_set_add_secret(&p->scrub, c->aws->key_id, c->aws->key_id_placeholder) < 0)
		return -1;
	if (c->aws && c->aws->token &&
	    scrub_set_add_secret(&p->scrub, c->aws->token,
				 c->aws->token_placeholder ? c->aws->token_placeholder
							   : SWAP_MARKER) < 0)
		return -1;
	return 0;
}

/* Every row of RF's entry gets SECRET, and is down or up. */
static void
rows_set(struct refresher *rf, const char *secret, bool down)
{
	struct proxy *p = rf->p;

	for (size_t i = 0; i < p->n_creds; i++)
		if (p->creds[i].refresh && p->creds[i].entry == rf->entry) {
			p->creds[i].secret = secret;
			p->cred_down[i] = down;
		}
}

/* The current secret becomes an earlier one: still scrubbed, the oldest beyond the few kept not. */
static void
retire(struct refresher *rf)
{
	if (!rf->current)
		return;
	if (rf->n_retired == REFRESH_RETIRED_KEEP) {
		char *oldest = rf->retired[0];

		scrub_set_remove_secret(&rf->p->scrub, oldest);
		explicit_bzero(oldest, strlen(oldest));
		free(oldest);
		memmove(rf->retired, rf->retired + 1, (REFRESH_RETIRED_KEEP - 1) * sizeof(char *));
		rf->n_retired--;
		plog(rf->p,
		     "credential for %s:%u: the oldest of its earlier secrets is no longer "
		     "scrubbed from responses (%d are)",
		     rf->p->creds[rf->first].host, rf->p->creds[rf->first].port,
		     REFRESH_RETIRED_KEEP);
	}
	rf->retired[rf->n_retired++] = rf->current;
	rf->current = NULL;
}

static void
refresh_failed(struct refresher *rf, const char *why)
{
	const struct proxy_cred *c = &rf->p->creds[rf->first];

	/* Fail closed: the stale secret is never sent again (it stays scrubbed). */
	retire(rf);
	rows_set(rf, "", true);
	plog(rf->p,
	     "credential for %s:%u: reading it again failed: %s; requests that need it are "
	     "refused (503) until a read succeeds",
	     c->host, c->port, why);
}

static void
refreshed(void *arg, const char *secret, const char *why)
{
	struct refresher *rf = arg;
	struct proxy *p = rf->p;
	const struct proxy_cred *c = &p->creds[rf->first];
	bool was_down = p->cred_down[rf->first];
	char *fresh;

	if (!secret) {
		refresh_failed(rf, why);
		return;
	}
	if (rf->current && !strcmp(rf->current, secret))
		return;
	fresh = strdup(secret);
	if (!fresh) {
		refresh_failed(rf, "out of memory");
		return;
	}
	/* The scrubber learns it first: no response may carry it unscrubbed. */
	while (scrub_set_add_secret(&p->scrub, fresh,
				    c->placeholder ? c->placeholder : SWAP_MARKER) < 0) {
		if (!rf->n_retired) {
			explicit_bzero(fresh, strlen(fresh));
			free(fresh);
			refresh_failed(rf, "the scrubber cannot hold another secret");
			return;
		}
		scrub_set_remove_secret(&p->scrub, rf->retired[0]);
		explicit_bzero(rf->retired[0], strlen(rf->retired[0]));
		free(rf->retired[0]);
		memmove(rf->retired, rf->retired + 1, --rf->n_retired * sizeof(char *));
	}
	retire(rf);
	rf->current = fresh;
	rows_set(rf, fresh, false);
	plog(p, "credential for %s:%u: read again from %s, %s", c->host, c->port, c->source.path,
	     was_down ? "available again" : "a new secret from now on");
}

/* Is row I the first of its refreshed entry? */
static bool
first_of_entry(const struct proxy *p, size_t i)
{
	for (size_t k = 0; k < i; k++)
		if (p->creds[k].refresh && p->creds[k].entry == p->creds[i].entry)
			return false;
	return true;
}

/* One refresher per entry with an interval; its rows point to the secret it holds. */
static int
refresh_setup(struct proxy *p)
{
	size_t n = 0;

	for (size_t i = 0; i < p->n_creds; i++)
		n += p->creds[i].refresh && first_of_entry(p, i);
	if (!n)
		return 0;
	p->refreshers = calloc(n, sizeof(*p->refreshers));
	if (!p->refreshers)
		return -1;
	for (size_t i = 0; i < p->n_creds; i++) {
		struct proxy_cred *c = &p->creds[i];
		struct refresher *rf;

		if (!c->refresh || !first_of_entry(p, i))
			continue;
		rf = &p->refreshers[p->n_refreshers++];
		rf->p = p;
		rf->entry = c->entry;
		rf->first = i;
		rf->current = strdup(c->secret);
		if (!rf->current)
			return -1;
		for (size_t k = i; k < p->n_creds; k++)
			if (p->creds[k].refresh && p->creds[k].entry == c->entry)
				explicit_bzero((char *)p->creds[k].secret,
					       strlen(p->creds[k].secret));
		rows_set(rf, rf->current, false);
		rf->r = refresh_new(p->base, &c->source, c->refresh, refreshed, rf);
		if (!rf->r)
			return -1;
	}
	return 0;
}

static void
refresh_teardown(struct proxy *p)
{
	for (size_t i = 0; i < p->n_refreshers; i++) {
		struct refresher *rf = &p->refreshers[i];

		refresh_free(rf->r);
		if (rf->current) {
			explicit_bzero(rf->current, strlen(rf->current));
			free(rf->current);
		}
		for (size_t k = 0; k < rf->n_retired; k++) {
			explicit_bzero(rf->retired[k], strlen(rf->retired[k]));
			free(rf->retired[k]);
		}
	}
	free(p->refreshers);
	p->refreshers = NULL;
	p->n_refreshers = 0;
}

/* The caps: memory, and connections within it and within the descriptors. */
static void
proxy_set_caps(struct proxy *p, const struct proxy_config *cf)
{
	struct rlimit nofile;

	/*
	 * Bodies flow through short-lived 16-64 KiB buffers (evbuffer chains,
	 * OpenSSL records released between uses so idle tunnels stay small).
	 * glibc would hand the top of the heap back to the kernel after every
	 * few of them and fault it in again: keep up to 64 MiB instead.
	 */
	mem_limit = cf->memory_limit ? cf->memory_limit : PROXY_MEMORY_DEFAULT;
	if (mem_limit < PROXY_MEMORY_MIN)
		mem_limit = PROXY_MEMORY_MIN;
	p->max_conns = mem_limit / PROXY_CONN_BUDGET;
	if (p->max_conns > PROXY_MAX_CONNS)
		p->max_conns = PROXY_MAX_CONNS;
	/* Each connection may hold two descriptors (the agent's, the upstream's). */
	if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur != RLIM_INFINITY &&
	    (nofile.rlim_cur < 128 || p->max_conns > (nofile.rlim_cur - 64) / 2))
		p->max_conns = nofile.rlim_cur < 128 ? 32 : (size_t)(nofile.rlim_cur - 64) / 2;
	mallopt(M_TRIM_THRESHOLD, (int)(mem_limit / 4 < (64u << 20) ? mem_limit / 4 : 64u << 20));
	/* A fixed threshold: glibc would raise it after each large free, and
	 * heads pulled up whole would then fragment the heap. */
	mallopt(M_MMAP_THRESHOLD, 128 << 10);
}

/* The rules and credentials of CF, copied into P, and the matcher over them. */
static int
proxy_copy_config(struct proxy *p, const struct proxy_config *cf, char *err, size_t errlen)
{
	p->rules = arena_alloc(p->arena, (cf->n_rules ? cf->n_rules : 1) * sizeof(*p->rules));
	for (size_t i = 0; i < cf->n_rules; i++) {
		p->rules[i] = cf->rules[i];
		p->rules[i].host = arena_strdup(p->arena, cf->rules[i].host);
		p->rules[i].path = arena_strdup(p->arena, cf->rules[i].path);
	}
	p->n_rules = cf->n_rules;
	p->creds = arena_alloc(p->arena, (cf->n_creds ? cf->n_creds : 1) * sizeof(*p->creds));
	p->cred_down = arena_alloc(p->arena, (cf->n_creds ? cf->n_creds : 1) * sizeof(bool));
	for (size_t i = 0; i < cf->n_creds; i++) {
		const struct proxy_cred *s = &cf->creds[i];
		struct proxy_cred *d = &p->creds[i];

		if (copy_cred(p, s, d) < 0 || scrub_cred(p, cf->creds, i) < 0) {
			snprintf(err, errlen,
				 "credential for %s: too many secrets, or a placeholder too long",
				 s->host);
			return -1;
		}
	}
	p->n_creds = cf->n_creds;
	if (refresh_setup(p) < 0) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	p->matcher = egress_matcher_new(p->rules, p->n_rules);
	p->stage = evbuffer_new();
	p->scrubbed = evbuffer_new();
	if (!p->matcher || (!cf->listen_addr && cf->socket_path && !p->socket_path) || !p->stage ||
	    !p->scrubbed) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

/* The message for a trust store the upstream context cannot have, naming CF's file. */
static void
name_store(const struct proxy_config *cf, char *err, size_t errlen)
{
	char why[256];

	/* Name the file: a --egress-ca given is not "the system" store. */
	snprintf(why, sizeof(why), "%s", err);
	snprintf(err, errlen, "%s %s: %s", cf->system_ca_file ? "--egress-ca" : "the system CA file",
		 cf->system_ca_file ? cf->system_ca_file : DEFAULT_SYSTEM_CAS,
		 !strcmp(why, "the system CA file holds no certificate") ? "holds no PEM certificate"
									: why);
}

/*
 * TLS both ways: the upstream trust store, and the proxy's own CA for
 * the agent's tunnels, whose bundle (with the store) goes to CF's path.
 * The two TLS contexts wait (proxy_warm()): the ready answer needs only
 * the CA and the bundle.  A store of plain certificates is split here,
 * its emptiness refused here; any other text is read whole now, as it
 * always was, its errors here too.
 */
static int
proxy_tls_setup(struct proxy *p, const struct proxy_config *cf, char *err, size_t errlen)
{
	const char *ca_pem;
	size_t ca_len;
	int r;

	/* The trust store for upstream TLS: read now, once, from the host's
	 * file (or just before, beside OpenSSL's start); the bundle the
	 * sandbox sees is a copy the agent can change. */
	if (cf->system_ca_file ||
	    !take_prefetched(&p->cas, &p->cas_len, &p->cas_split, &r, err, errlen)) {
		p->cas = read_file(cf->system_ca_file ? cf->system_ca_file : DEFAULT_SYSTEM_CAS,
				   &p->cas_len, err, errlen);
		if (p->cas)
			p->cas_split = pem_certs_get(p->cas, p->cas_len, &r);
	}
	if (!p->cas)
		return -1;
	if (r < 0)
		return diag_fail(err, errlen, "out of memory");
	if (r == 1 && !p->cas_split->n) {
		snprintf(err, errlen, "the system CA file holds no certificate");
		name_store(cf, err, errlen);
		return -1;
	}
	if (r == 0 && !(p->client_ctx = tls_client_ctx_new(p->cas, p->cas_len, err, errlen))) {
		name_store(cf, err, errlen);
		return -1;
	}
	if (cf->ca_cert_file || cf->ca_key_file)
		p->ca = tls_ca_load(cf->ca_cert_file, cf->ca_key_file, time(NULL), err, errlen);
	else
		p->ca = tls_ca_new(time(NULL), err, errlen);
	if (!p->ca)
		return -1;
	ca_pem = tls_ca_pem(p->ca, &ca_len);
	if (cf->ca_bundle_path &&
	    write_trust(cf, p->cas, p->cas_len, ca_pem, ca_len, err, errlen) < 0)
		return -1;
	return 0;
}

SSL_CTX *
proxy_server_ctx(struct proxy *p)
{
	char err[512];

	if (!p->server_ctx) {
		if (!(p->server_ctx = tls_server_ctx_new(err, sizeof(err))))
			plog(p, "error: %s", err);
		else
			tlsleg_ctx_init(p->server_ctx);
	}
	return p->server_ctx;
}

SSL_CTX *
proxy_client_ctx(struct proxy *p)
{
	char err[512];

	if (p->client_ctx)
		return p->client_ctx;
	/* The split is held (pemcerts.h): the store takes it, not a new one. */
	p->client_ctx = tls_client_ctx_new(p->cas, p->cas_len, err, sizeof(err));
	if (!p->client_ctx) {
		plog(p, "error: %s; no upstream TLS", err);
		return NULL;
	}
	tlsleg_ctx_init(p->client_ctx);
	pem_certs_put(p->cas_split);
	p->cas_split = NULL;
	free(p->cas);
	p->cas = NULL;
	return p->client_ctx;
}

/*
 * Soon after the proxy listens and has answered (PROXY_WARM_US): its TLS
 * contexts, before the first tunnel needs them (one that comes first makes
 * them itself).  Not at once: the sandbox is still being set up then, and
 * a short command's whole launch would share the machine with the work.
 */
static void
proxy_warm(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	proxy_server_ctx(arg);
	proxy_client_ctx(arg);
}

/* How long after its ready answer the proxy makes its TLS contexts (proxy_warm()). */
#define PROXY_WARM_US 50000

/* The resolver: the nameservers of resolv.conf and the hosts file, nothing more. */
static int
proxy_dns_setup(struct proxy *p, const struct proxy_config *cf, char *err, size_t errlen)
{
	int rc;

	/* No search domains: a name must not become a different, unchecked one. */
	p->dns = evdns_base_new(p->base, 0);
	if (!p->dns) {
		snprintf(err, errlen, "cannot start the resolver");
		return -1;
	}
	rc = evdns_base_resolv_conf_parse(p->dns, DNS_OPTION_NAMESERVERS | DNS_OPTION_MISC,
					  cf->resolv_conf ? cf->resolv_conf : "/etc/resolv.conf");
	if (rc != 0 && rc != 6 && !(rc == 1 && !cf->resolv_conf)) {
		snprintf(err, errlen, "%s: cannot read the resolver configuration (error %d)",
			 cf->resolv_conf ? cf->resolv_conf : "/etc/resolv.conf", rc);
		return -1;
	}
	if (evdns_base_load_hosts(p->dns, cf->hosts_file ? cf->hosts_file : "/etc/hosts") != 0 &&
	    cf->hosts_file) {
		snprintf(err, errlen, "%s: cannot read the hosts file", cf->hosts_file);
		return -1;
	}
	return 0;
}

/*
 * A TCP socket listening at SA (SO_REUSEADDR, so a restart finds its port
 * free), its real port in P and its address, as text, in P->listening.
 */
static int
listen_tcp(struct proxy *p, const struct sockaddr *sa, socklen_t len, char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char host[INET6_ADDRSTRLEN] = "?";
	int fd, one = 1;

	fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, sa, len) < 0 || listen(fd, SOMAXCONN) < 0 ||
	    getsockname(fd, (struct sockaddr *)&ss, &sl) < 0) {
		snprintf(err, errlen, "cannot listen on TCP: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (ss.ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)&ss;

		inet_ntop(AF_INET6, &s6->sin6_addr, host, sizeof(host));
		p->port = ntohs(s6->sin6_port);
		snprintf(p->listening, sizeof(p->listening), "[%s]:%u", host, p->port);
	} else {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)&ss;

		inet_ntop(AF_INET, &s4->sin_addr, host, sizeof(host));
		p->port = ntohs(s4->sin_port);
		snprintf(p->listening, sizeof(p->listening), "%s:%u", host, p->port);
	}
	return fd;
}

/* Beside the socket at PATH, the one the relay hands its connections over by (handoff.h). */
static int
handoff_listen_beside(struct proxy *p, const char *path, char *err, size_t errlen)
{
	/* No room for its name: no hand-offs, the relay forwards bytes instead. */
	if (handoff_path(path, p->handoff_path, sizeof(p->handoff_path)) < 0) {
		p->handoff_path[0] = 0;
		return 0;
	}
	p->handoff_fd = handoff_listen(p->handoff_path);
	if (p->handoff_fd < 0) {
		snprintf(err, errlen, "%s: %s", p->handoff_path, strerror(errno));
		p->handoff_path[0] = 0;
		return -1;
	}
	p->handoff_ev = event_new(p->base, p->handoff_fd, EV_READ | EV_PERSIST, handoff_cb, p);
	if (!p->handoff_ev || event_add(p->handoff_ev, NULL) < 0) {
		snprintf(err, errlen, "cannot listen on %s", p->handoff_path);
		return -1;
	}
	return 0;
}

/* The listener on CF's socket or TCP address, and the sweep that checks memory every second. */
static int
proxy_listen(struct proxy *p, const struct proxy_config *cf, char *err, size_t errlen)
{
	int fd;

	if (cf->listen_addr)
		fd = listen_tcp(p, cf->listen_addr, cf->listen_addr_len, err, errlen);
	else if (!cf->socket_path)
		fd = diag_fail(err, errlen, "neither a socket path nor a TCP address to listen on");
	else if ((fd = listen_unix(cf->socket_path, err, errlen)) >= 0)
		snprintf(p->listening, sizeof(p->listening), "%s", cf->socket_path);
	if (fd < 0)
		return -1;
	p->listener = evconnlistener_new(p->base, accept_cb, p,
					 LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, 0, fd);
	if (!p->listener) {
		close(fd);
		if (p->socket_path)
			unlink(p->socket_path);
		snprintf(err, errlen, "cannot listen on %s", p->listening);
		return -1;
	}
	evconnlistener_set_error_cb(p->listener, listener_error_cb);
	if (!cf->listen_addr && handoff_listen_beside(p, cf->socket_path, err, errlen) < 0)
		return -1;
	p->sweep = event_new(p->base, -1, EV_PERSIST, sweep_cb, p);
	if (!p->sweep || event_add(p->sweep, &(struct timeval){1, 0}) < 0) {
		snprintf(err, errlen, "cannot start the memory check");
		return -1;
	}
	return 0;
}

struct proxy *
proxy_new(struct event_base *base, const struct proxy_config *cf, char *err, size_t errlen)
{
	struct proxy *p = calloc(1, sizeof(*p));

	if (!p) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	proxy_set_caps(p, cf);
	p->handoff_fd = -1;
	p->base = base;
	p->arena = arena_new();
	p->allow_private = cf->allow_private;
	p->log = cf->log;
	p->log_arg = cf->log_arg;
	p->socket_path = cf->listen_addr || !cf->socket_path ? NULL : strdup(cf->socket_path);
	if (proxy_copy_config(p, cf, err, errlen) < 0 || proxy_tls_setup(p, cf, err, errlen) < 0 ||
	    proxy_dns_setup(p, cf, err, errlen) < 0 || proxy_listen(p, cf, err, errlen) < 0) {
		proxy_free(p);
		return NULL;
	}
	p->warm = evtimer_new(base, proxy_warm, p);
	if (!p->warm || event_add(p->warm, &(struct timeval){0, PROXY_WARM_US}) < 0) {
		snprintf(err, errlen, "out of memory");
		proxy_free(p);
		return NULL;
	}
	plog(p,
	     "listening on %s: %zu rules, %zu credential bindings, private destinations %s; "
	     "caps: %zu connections, %zu KiB of memory",
	     p->listening, p->n_rules, p->n_creds, p->allow_private ? "allowed" : "refused",
	     p->max_conns, mem_limit >> 10);
	return p;
}

/* The kernel's high-water mark of this process's resident memory, in KiB (0: unknown). */
static unsigned long
peak_rss_kib(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	unsigned long kib = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmHWM: %lu kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

/* The secrets P holds, zeroed where they lie (freed later, or never: see proxy_stop()). */
static void
wipe_secrets(struct proxy *p)
{
	for (size_t i = 0; i < p->n_creds; i++) {
		explicit_bzero((char *)p->creds[i].secret, strlen(p->creds[i].secret));
		if (p->creds[i].aws) {
			explicit_bzero((char *)p->creds[i].aws->key_id,
				       strlen(p->creds[i].aws->key_id));
			if (p->creds[i].aws->token)
				explicit_bzero((char *)p->creds[i].aws->token,
					       strlen(p->creds[i].aws->token));
		}
	}
	scrub_set_wipe(&p->scrub);
	for (size_t i = 0; i < p->n_refreshers; i++) {
		struct refresher *rf = &p->refreshers[i];

		if (rf->current)
			explicit_bzero(rf->current, strlen(rf->current));
		for (size_t k = 0; k < rf->n_retired; k++)
			explicit_bzero(rf->retired[k], strlen(rf->retired[k]));
	}
}

void
proxy_stop(struct proxy *p)
{
	if (!p || p->stopped)
		return;
	p->stopped = true;
	if (p->listener) {
		plog(p,
		     "proxy: done: %lu connections (at most %lu open), %lu requests forwarded, "
		     "%lu tcp tunnels, %lu refused at the cap, %lu parked connections closed, "
		     "%lu closed by a deadline; memory peak %zu KiB of a %zu KiB cap; peak RSS "
		     "%lu KiB",
		     p->stats.connections, p->stats.peak_open, p->stats.requests,
		     p->stats.tcp_tunnels, p->stats.refused, p->stats.evicted, p->stats.timed_out,
		     mem_peak >> 10, mem_limit >> 10, peak_rss_kib());
		evconnlistener_free(p->listener);
		p->listener = NULL;
		if (p->socket_path)
			unlink(p->socket_path);
	}
	if (p->handoff_ev) {
		event_free(p->handoff_ev);
		p->handoff_ev = NULL;
	}
	if (p->handoff_fd >= 0) {
		close(p->handoff_fd);
		p->handoff_fd = -1;
	}
	if (p->handoff_path[0]) {
		unlink(p->handoff_path);
		p->handoff_path[0] = '\0';
	}
	wipe_secrets(p);
}

void
proxy_free(struct proxy *p)
{
	if (!p)
		return;
	proxy_stop(p);
	if (p->sweep)
		event_free(p->sweep);
	while (p->conns) {
		struct conn *c = p->conns;

		conn_kill(c);
		event_free(c->later);
		mem_release(c);
	}
	if (p->dns)
		evdns_base_free(p->dns, 0);
	if (p->warm)
		event_free(p->warm);
	SSL_CTX_free(p->server_ctx);
	SSL_CTX_free(p->client_ctx);
	pem_certs_put(p->cas_split);
	free(p->cas);
	tls_ca_free(p->ca);
	egress_matcher_free(p->matcher);
	if (p->stage)
		evbuffer_free(p->stage);
	if (p->scrubbed)
		evbuffer_free(p->scrubbed);
	scrub_set_clear(&p->scrub);
	/* After the rows: they point to what the refreshers hold. */
	refresh_teardown(p);
	if (p->arena)
		arena_free(p->arena);
	free(p->socket_path);
	free(p);
}

unsigned
proxy_port(const struct proxy *p)
{
	return p->port;
}

void
proxy_get_stats(const struct proxy *p, struct proxy_stats *out)
{
	*out = p->stats;
	out->memory = mem_used;
	out->memory_peak = mem_peak;
	out->memory_limit = mem_limit;
	out->max_conns = p->max_conns;
}
