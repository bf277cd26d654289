/*
 * test_session.c - the frames between omnibox-run and omnibox-proxy
 * --session (runtime/egress/session.h): a configuration with every kind
 * of credential row comes back field for field over a socket, the answers
 * and the summary too, and anything cut short, padded or of another kind
 * is refused.
 */
#include <criterion/criterion.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "runtime/egress/session.h"

static char err[1024];

static const struct egress_rule rules[] = {
    {.methods = 3,
     .host = "api.example.com",
     .port = 0,
     .path = "/repos/**",
     .path_given = true,
     .loc = {7, 9, 30}},
    {.tcp = true,
     .host = "db.example.com",
     .wildcard = true,
     .port = 5432,
     .path = "",
     .loc = {8, 9, 25}},
};

static const struct proxy_aws aws = {"eu-west-1",   "s3",	  "AKIAREAL",
				     "oa_cred_key", "real-token", "oa_cred_token"};

static const struct proxy_cred creds[] = {
    {.host = "api.example.com",
     .port = 443,
     .scheme = CRED_SCHEME_BEARER,
     .secret = "real-secret",
     .placeholder = "oa_cred_a",
     .entry = 0,
     .refresh = 60,
     .source = {CRED_SOURCE_FILE, "/home/u/token"}},
    {.host = "s3.eu-west-1.amazonaws.com",
     .port = 443,
     .scheme = CRED_SCHEME_SIGV4,
     .secret = "aws-secret",
     .placeholder = "oa_cred_s",
     .entry = 1,
     .aws = &aws},
    {.host = "git.example.com",
     .port = 8443,
     .scheme = CRED_SCHEME_BASIC,
     .username = "bot",
     .secret = "swap",
     .header = NULL,
     .entry = 2},
};

static struct session_config
config(void)
{
	struct session_config c = {0};

	c.pc.socket_path = "/tmp/omnibox-x/proxy.sock";
	c.pc.ca_bundle_path = "/tmp/omnibox-x/omnibox-ca.pem";
	c.pc.hosts_file = "/etc/hosts.test";
	c.pc.memory_limit = 64u << 20;
	c.pc.allow_private = true;
	c.pc.rules = rules;
	c.pc.n_rules = 2;
	c.pc.creds = creds;
	c.pc.n_creds = 3;
	c.flags = SESSION_VERBOSE;
	return c;
}

static int
streq(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

Test(session, config_round_trip_over_a_socket)
{
	struct session_config c = config(), d;
	struct session_buf b = {0};
	struct arena *a = arena_new();
	unsigned char *data;
	size_t len;
	int sv[2];

	cr_assert_eq(session_encode_config(&b, &c), 0);
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	cr_assert_eq(session_send(sv[0], &b), 0);
	session_buf_free(&b);
	close(sv[0]);
	cr_assert_eq(session_recv(sv[1], &data, &len), 1);
	cr_assert_eq(session_decode_config(a, data, len, &d, err, sizeof(err)), 0, "%s", err);
	{
		unsigned char *more = NULL;
		size_t more_len = 0;

		cr_assert_eq(session_recv(sv[1], &more, &more_len), 0,
			     "the end of the stream after one frame");
		free(more);
	}
	close(sv[1]);
	cr_assert_str_eq(d.pc.socket_path, c.pc.socket_path);
	cr_assert_str_eq(d.pc.ca_bundle_path, c.pc.ca_bundle_path);
	cr_assert_str_eq(d.pc.hosts_file, "/etc/hosts.test");
	cr_assert_null(d.pc.resolv_conf);
	cr_assert_null(d.pc.system_ca_file);
	cr_assert_eq(d.pc.memory_limit, 64u << 20);
	cr_assert(d.pc.allow_private);
	cr_assert_eq(d.flags, SESSION_VERBOSE);
	cr_assert_eq(d.pc.n_rules, 2);
	for (size_t i = 0; i < 2; i++) {
		const struct egress_rule *x = &rules[i], *y = &d.pc.rules[i];

		cr_assert(x->tcp == y->tcp && x->methods == y->methods &&
			  x->wildcard == y->wildcard && x->port == y->port &&
			  x->path_given == y->path_given);
		cr_assert_str_eq(x->host, y->host);
		cr_assert_str_eq(x->path, y->path);
		cr_assert(x->loc.line == y->loc.line && x->loc.col == y->loc.col &&
			  x->loc.len == y->loc.len);
	}
	cr_assert_eq(d.pc.n_creds, 3);
	for (size_t i = 0; i < 3; i++) {
		const struct proxy_cred *x = &creds[i], *y = &d.pc.creds[i];

		cr_assert_str_eq(x->host, y->host);
		cr_assert(x->port == y->port && x->scheme == y->scheme && x->entry == y->entry &&
			  x->refresh == y->refresh && x->source.kind == y->source.kind);
		cr_assert(streq(x->username, y->username) && streq(x->secret, y->secret) &&
			  streq(x->placeholder, y->placeholder) && streq(x->header, y->header) &&
			  streq(x->source.path, y->source.path));
		cr_assert_eq(!x->aws, !y->aws);
	}
	cr_assert_str_eq(d.pc.creds[1].aws->key_id, "AKIAREAL");
	cr_assert_str_eq(d.pc.creds[1].aws->token_placeholder, "oa_cred_token");
	session_wipe_creds(d.pc.creds, d.pc.n_creds);
	cr_assert_eq(d.pc.creds[0].secret[0], '\0', "the secrets are wiped");
	cr_assert_eq(d.pc.creds[1].aws->key_id[0], '\0');
	cr_assert_eq(d.pc.creds[1].aws->token[0], '\0');
	explicit_bzero(data, len);
	free(data);
	arena_free(a);
}

Test(session, a_config_cut_short_padded_or_of_another_kind_is_refused)
{
	struct session_config c = config(), d;
	struct session_buf b = {0}, s = {0};
	struct arena *a = arena_new();

	cr_assert_eq(session_encode_config(&b, &c), 0);
	for (size_t n = 0; n < b.len; n += 7)
		cr_assert_eq(session_decode_config(a, b.data, n, &d, err, sizeof(err)), -1,
			     "cut at %zu", n);
	cr_assert_str_eq(err, "a malformed configuration from omnibox-run");
	cr_assert_eq(session_encode_status(&s, NULL), 0);
	cr_assert_eq(session_decode_config(a, s.data, s.len, &d, err, sizeof(err)), -1);
	{
		unsigned char *padded = malloc(b.len + 1);

		memcpy(padded, b.data, b.len);
		padded[b.len] = 0;
		cr_assert_eq(session_decode_config(a, padded, b.len + 1, &d, err, sizeof(err)), -1);
		free(padded);
	}
	session_buf_free(&b);
	session_buf_free(&s);
	arena_free(a);
}

Test(session, status_and_summary)
{
	struct session_buf b = {0};
	struct arena *a = arena_new();
	struct proxy_denial v[2] = {{"GET https://h/x", "GET h/x", 3},
				    {"CONNECT g:22", "tcp g:22", 1}};
	struct session_summary s = {5, "CONNECT f:443: f resolves to 127.0.0.1", v, 2, 7}, t;
	const char *msg = "x";

	cr_assert_eq(session_encode_status(&b, NULL), 0);
	cr_assert_eq(session_decode_status(a, b.data, b.len, &msg, err, sizeof(err)), 0);
	cr_assert_null(msg, "ready");
	session_buf_free(&b);
	cr_assert_eq(session_encode_status(&b, "cannot read the CA file"), 0);
	cr_assert_eq(session_decode_status(a, b.data, b.len, &msg, err, sizeof(err)), 0);
	cr_assert_str_eq(msg, "cannot read the CA file");
	cr_assert_eq(session_decode_summary(a, b.data, b.len, &t, err, sizeof(err)), -1,
		     "a status is no summary");
	session_buf_free(&b);
	cr_assert_eq(session_encode_summary(&b, &s), 0);
	cr_assert_eq(session_decode_summary(a, b.data, b.len, &t, err, sizeof(err)), 0);
	cr_assert_eq(t.private_refusals, 5);
	cr_assert_str_eq(t.private_first, s.private_first);
	cr_assert_eq(t.others, 7);
	cr_assert_eq(t.n_denials, 2);
	cr_assert_str_eq(t.denials[1].rule, "tcp g:22");
	cr_assert_eq(t.denials[0].count, 3);
	cr_assert_eq(session_decode_status(a, b.data, b.len, &msg, err, sizeof(err)), -1);
	session_buf_free(&b);
	arena_free(a);
}

Test(session, a_frame_over_the_limit_is_refused)
{
	uint32_t n = SESSION_FRAME_MAX + 1;
	unsigned char *data;
	size_t len;
	int sv[2];

	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	cr_assert_eq(write(sv[0], &n, sizeof(n)), (ssize_t)sizeof(n));
	close(sv[0]);
	cr_assert_eq(session_recv(sv[1], &data, &len), -1);
	cr_assert_eq(errno, EPROTO);
	close(sv[1]);
}
