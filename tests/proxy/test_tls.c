/*
 * test_tls.c - the per-launch CA and its leaves (runtime/tls.c): what the
 * certificates say, that they verify, that the cache renews them before
 * they expire, and that a handshake refuses a foreign SNI and offers only
 * http/1.1 (real handshakes between memory BIOs).
 */
#include <criterion/criterion.h>

#include <string.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>

#include "runtime/egress/tls.h"

static struct tls_ca *ca;
static const time_t t0 = 1750000000; /* a fixed "now" */
static char err[512];

static void
setup(void)
{
	ca = tls_ca_new(t0, err, sizeof(err));
	cr_assert_not_null(ca, "%s", err);
}

/* Handshakes verify against the clock: their CA starts now. */
static void
setup_now(void)
{
	ca = tls_ca_new(time(NULL), err, sizeof(err));
	cr_assert_not_null(ca, "%s", err);
}

static void
teardown(void)
{
	tls_ca_free(ca);
}

TestSuite(tls_cert, .init = setup, .fini = teardown);
TestSuite(tls_handshake, .init = setup_now, .fini = teardown);

static time_t
asn1_time(const ASN1_TIME *t)
{
	struct tm tm;

	cr_assert_eq(ASN1_TIME_to_tm(t, &tm), 1);
	return timegm(&tm);
}

/* Does CERT verify against the CA for a TLS server named NAME (DNS or IP) at AT? */
static int
verify(X509 *cert, const char *name, bool ip, time_t at)
{
	X509_STORE *store = X509_STORE_new();
	X509_STORE_CTX *ctx = X509_STORE_CTX_new();
	X509_VERIFY_PARAM *param;
	int ok;

	X509_STORE_add_cert(store, tls_ca_cert(ca));
	X509_STORE_CTX_init(ctx, store, cert, NULL);
	param = X509_STORE_CTX_get0_param(ctx);
	X509_VERIFY_PARAM_set_time(param, at);
	X509_VERIFY_PARAM_set_purpose(param, X509_PURPOSE_SSL_SERVER);
	if (ip)
		X509_VERIFY_PARAM_set1_ip_asc(param, name);
	else
		X509_VERIFY_PARAM_set1_host(param, name, 0);
	ok = X509_verify_cert(ctx) == 1 ? 0 : X509_STORE_CTX_get_error(ctx);
	X509_STORE_CTX_free(ctx);
	X509_STORE_free(store);
	return ok;
}

Test(tls_cert, the_ca_is_a_p256_ca_named_for_this_launch)
{
	X509 *x = tls_ca_cert(ca);
	EVP_PKEY *key = X509_get0_pubkey(x);
	char name[256];
	size_t len;
	const char *pem = tls_ca_pem(ca, &len);

	cr_assert_eq(EVP_PKEY_get_base_id(key), EVP_PKEY_EC);
	cr_assert_eq(EVP_PKEY_get_bits(key), 256);
	cr_assert_eq(X509_check_ca(x), 1);
	cr_assert_gt(X509_get_key_usage(x) & KU_KEY_CERT_SIGN, 0);
	X509_NAME_oneline(X509_get_subject_name(x), name, sizeof(name));
	cr_assert(strstr(name, "CN=omnibox session CA "), "%s", name);
	cr_assert_eq(strncmp(pem, "-----BEGIN CERTIFICATE-----\n", 28), 0);
	cr_assert_eq(len, strlen(pem));
	cr_assert_null(strstr(pem, "PRIVATE"), "the key never leaves memory");
}

Test(tls_cert, two_launches_get_two_cas)
{
	struct tls_ca *other = tls_ca_new(t0, err, sizeof(err));

	cr_assert_neq(X509_cmp(tls_ca_cert(ca), tls_ca_cert(other)), 0);
	tls_ca_free(other);
}

Test(tls_cert, a_leaf_names_its_host_and_verifies)
{
	X509 *leaf = tls_leaf_get(ca, "api.github.com", t0);

	cr_assert_not_null(leaf);
	cr_assert_eq(verify(leaf, "api.github.com", false, t0), 0);
	cr_assert_eq(verify(leaf, "github.com", false, t0), X509_V_ERR_HOSTNAME_MISMATCH);
	cr_assert_eq(verify(leaf, "evil.api.github.com", false, t0), X509_V_ERR_HOSTNAME_MISMATCH);
	cr_assert_eq(X509_check_ca(leaf), 0);
	cr_assert_eq(X509_get_ext_by_NID(leaf, NID_subject_alt_name, -1) >= 0, true);
}

Test(tls_cert, an_ipv4_host_gets_an_ip_address_san)
{
	X509 *leaf = tls_leaf_get(ca, "192.0.2.10", t0);
	GENERAL_NAMES *names = X509_get_ext_d2i(leaf, NID_subject_alt_name, NULL, NULL);

	cr_assert_not_null(names);
	cr_assert_eq(sk_GENERAL_NAME_num(names), 1);
	cr_assert_eq(sk_GENERAL_NAME_value(names, 0)->type, GEN_IPADD);
	GENERAL_NAMES_free(names);
	cr_assert_eq(verify(leaf, "192.0.2.10", true, t0), 0);
}

Test(tls_cert, leaves_are_short_lived_and_renewed_before_they_expire)
{
	X509 *a = tls_leaf_get(ca, "h.example", t0), *b;
	time_t nb = asn1_time(X509_get0_notBefore(a)), na = asn1_time(X509_get0_notAfter(a));

	cr_assert_eq(nb, t0 - TLS_BACKDATE);
	cr_assert_eq(na, t0 + TLS_LEAF_LIFETIME);
	/* Within the first half of its life the cached leaf is served... */
	cr_assert_eq(tls_leaf_get(ca, "h.example", t0 + TLS_LEAF_LIFETIME / 2 - 1), a);
	/* ...after that a new one, valid from then on. */
	b = tls_leaf_get(ca, "h.example", t0 + TLS_LEAF_LIFETIME / 2);
	cr_assert_neq(b, a);
	cr_assert_eq(asn1_time(X509_get0_notAfter(b)),
		     t0 + TLS_LEAF_LIFETIME / 2 + TLS_LEAF_LIFETIME);
	cr_assert_eq(verify(b, "h.example", false, t0 + TLS_LEAF_LIFETIME + 3600), 0,
		     "the renewed leaf is still good when the first one has expired");
	cr_assert_eq(verify(b, "h.example", false, t0 + 2 * TLS_LEAF_LIFETIME),
		     X509_V_ERR_CERT_HAS_EXPIRED);
}

Test(tls_cert, no_leaf_outlives_the_ca)
{
	time_t late = t0 + TLS_CA_LIFETIME - 60;
	X509 *x = tls_leaf_get(ca, "late.example", late);

	cr_assert_eq(asn1_time(X509_get0_notAfter(x)), t0 + TLS_CA_LIFETIME);
}

Test(tls_cert, each_host_has_its_own_leaf_and_serial)
{
	X509 *a = tls_leaf_get(ca, "a.example", t0), *b = tls_leaf_get(ca, "b.example", t0);

	cr_assert_neq(a, b);
	cr_assert_neq(ASN1_INTEGER_cmp(X509_get0_serialNumber(a), X509_get0_serialNumber(b)), 0);
	cr_assert_eq(tls_leaf_get(ca, "a.example", t0), a);
}

Test(tls_cert, the_cache_survives_more_hosts_than_it_holds)
{
	char host[64];

	for (int i = 0; i < TLS_LEAF_CACHE_MAX + 10; i++) {
		snprintf(host, sizeof(host), "h%d.example", i);
		cr_assert_not_null(tls_leaf_get(ca, host, t0));
	}
	cr_assert_eq(verify(tls_leaf_get(ca, "h1.example", t0), "h1.example", false, t0), 0);
}

Test(tls_cert, an_upstream_context_needs_a_certificate)
{
	size_t len;
	const char *pem = tls_ca_pem(ca, &len);
	SSL_CTX *ctx = tls_client_ctx_new(pem, len, err, sizeof(err));

	cr_assert_not_null(ctx, "%s", err);
	SSL_CTX_free(ctx);
	cr_assert_null(tls_client_ctx_new("not a certificate\n", 18, err, sizeof(err)));
	cr_assert_str_eq(err, "the system CA file holds no certificate");
}

/* ---- handshakes between memory BIOs -------------------------------------------------- */

struct pair {
	SSL *client, *server;
};

/* Run both sides until both finish or one fails; returns 1 when both completed. */
static int
handshake(struct pair *p)
{
	for (int i = 0; i < 100; i++) {
		int c = SSL_do_handshake(p->client), s = SSL_do_handshake(p->server);

		if (c == 1 && s == 1)
			return 1;
		if ((c <= 0 && SSL_get_error(p->client, c) != SSL_ERROR_WANT_READ) ||
		    (s <= 0 && SSL_get_error(p->server, s) != SSL_ERROR_WANT_READ))
			return 0;
	}
	return 0;
}

static struct pair
connect_pair(SSL_CTX *server_ctx, const char *host, const char *sni, const char *alpn)
{
	size_t len;
	const char *pem = tls_ca_pem(ca, &len);
	SSL_CTX *cctx = tls_client_ctx_new(pem, len, err, sizeof(err));
	struct pair p;
	BIO *a, *b;

	cr_assert_not_null(cctx, "%s", err);
	p.client = SSL_new(cctx);
	p.server = SSL_new(server_ctx);
	SSL_CTX_free(cctx); /* the SSL keeps its own reference */
	cr_assert_eq(tls_server_prepare(p.server, ca, host, time(NULL)), 0);
	cr_assert_eq(tls_client_prepare(p.client, sni), 0);
	if (alpn)
		SSL_set_alpn_protos(p.client, (const unsigned char *)alpn, (unsigned)strlen(alpn));
	BIO_new_bio_pair(&a, 0, &b, 0);
	SSL_set_bio(p.client, a, a);
	SSL_set_bio(p.server, b, b);
	SSL_set_connect_state(p.client);
	SSL_set_accept_state(p.server);
	return p;
}

static void
free_pair(struct pair *p)
{
	SSL_free(p->client);
	SSL_free(p->server);
	ERR_clear_error();
}

Test(tls_handshake, the_connect_host_as_sni_completes_with_http_1_1)
{
	SSL_CTX *sctx = tls_server_ctx_new(err, sizeof(err));
	struct pair p = connect_pair(sctx, "api.test", "api.test", "\x02h2\x08http/1.1");
	const unsigned char *proto;
	unsigned plen;

	cr_assert_eq(handshake(&p), 1);
	SSL_get0_alpn_selected(p.client, &proto, &plen);
	cr_assert_eq(plen, 8);
	cr_assert_eq(memcmp(proto, "http/1.1", 8), 0);
	cr_assert_eq(SSL_get_verify_result(p.client), X509_V_OK);
	free_pair(&p);
	SSL_CTX_free(sctx);
}

Test(tls_handshake, a_client_offering_only_h2_gets_no_alpn)
{
	SSL_CTX *sctx = tls_server_ctx_new(err, sizeof(err));
	struct pair p = connect_pair(sctx, "api.test", "api.test", "\x02h2");
	const unsigned char *proto = NULL;
	unsigned plen = 0;

	cr_assert_eq(handshake(&p), 1);
	SSL_get0_alpn_selected(p.client, &proto, &plen);
	cr_assert_eq(plen, 0);
	free_pair(&p);
	SSL_CTX_free(sctx);
}

Test(tls_handshake, another_sni_is_refused_with_an_alert)
{
	SSL_CTX *sctx = tls_server_ctx_new(err, sizeof(err));
	struct pair p = connect_pair(sctx, "api.test", "other.test", NULL);

	cr_assert_eq(handshake(&p), 0);
	cr_assert_eq(SSL_get_state(p.server) == TLS_ST_OK, false);
	free_pair(&p);
	SSL_CTX_free(sctx);
}

Test(tls_handshake, the_sni_comparison_ignores_case)
{
	SSL_CTX *sctx = tls_server_ctx_new(err, sizeof(err));
	struct pair p = connect_pair(sctx, "api.test", "API.Test", NULL);

	cr_assert_eq(handshake(&p), 1);
	free_pair(&p);
	SSL_CTX_free(sctx);
}

Test(tls_handshake, an_ipv4_host_without_sni_completes)
{
	SSL_CTX *sctx = tls_server_ctx_new(err, sizeof(err));
	struct pair p = connect_pair(sctx, "192.0.2.7", "192.0.2.7", NULL);

	cr_assert_eq(handshake(&p), 1);
	cr_assert_null(SSL_get_servername(p.server, TLSEXT_NAMETYPE_host_name));
	cr_assert_eq(SSL_get_verify_result(p.client), X509_V_OK);
	free_pair(&p);
	SSL_CTX_free(sctx);
}

/* A start loads no error texts (tls_library_init()); a message still names the reason. */
Test(tls_library, an_error_reads_as_text_though_a_start_loads_none)
{
	char text[256];
	unsigned char out[32];

	tls_library_init();
	cr_assert_eq(RAND_bytes(out, sizeof(out)), 1, "the Hash_DRBG gives no bytes");
	tls_error_text(ERR_PACK(ERR_LIB_SSL, 0, SSL_R_CERTIFICATE_VERIFY_FAILED), text,
		       sizeof(text));
	cr_expect(strstr(text, "certificate verify failed") != NULL, "%s", text);
}
