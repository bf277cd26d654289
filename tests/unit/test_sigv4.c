/*
 * test_sigv4.c - AWS Signature Version 4 as the credential proxy re-signs:
 * the published examples of the SigV4 and S3 documentation (their
 * signatures were recomputed once with Python's hmac and hashlib from the
 * canonical requests the documentation prints), the canonical URI and
 * query of S3 and of other services, which headers are signed, and what
 * the proxy refuses in the agent's Authorization.
 */
#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>

#include "runtime/egress/sigv4.h"

#define IAM_SECRET "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
#define S3_SECRET "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
#define S3_KEY "AKIAIOSFODNN7EXAMPLE"
#define EMPTY SIGV4_EMPTY_SHA256

TestSuite(sigv4_examples);
TestSuite(sigv4_canonical);
TestSuite(sigv4_refusals);

static void
expect_auth(const struct sigv4_key *k, const char *head, const char *agent_signed, const char *want)
{
	char out[SIGV4_AUTH_MAX];
	const char *why = NULL;
	ssize_t n = sigv4_authorization(k, head, strlen(head), agent_signed, strlen(agent_signed),
					out, sizeof(out), &why);

	cr_assert_geq(n, 0, "refused: %s", why ? why : "?");
	cr_assert_str_eq(out, want);
	cr_assert_eq((size_t)n, strlen(want));
}

static void
expect_canonical(const char *service, const char *head, const char *agent_signed, const char *want,
		 const char *want_signed)
{
	char *names = NULL;
	const char *why = NULL;
	char *cr = sigv4_canonical_request(service, head, strlen(head), agent_signed,
					   strlen(agent_signed), &names, &why);

	cr_assert_not_null(cr, "refused: %s", why ? why : "?");
	cr_assert_str_eq(cr, want);
	cr_assert_str_eq(names, want_signed);
	free(cr);
	free(names);
}

/* ---- the documentation's examples ------------------------------------------------- */

#define IAM_HEAD                                                                                   \
	"GET /?Action=ListUsers&Version=2010-05-08 HTTP/1.1\r\n"                                   \
	"Host: iam.amazonaws.com\r\n"                                                              \
	"Content-Type: application/x-www-form-urlencoded; charset=utf-8\r\n"                       \
	"X-Amz-Date: 20150830T123600Z\r\n"

Test(sigv4_examples, iam_list_users)
{
	struct sigv4_key k = {"AKIDEXAMPLE", IAM_SECRET, "us-east-1", "iam"};

	expect_canonical("iam", IAM_HEAD, "content-type;host;x-amz-date",
			 "GET\n/\nAction=ListUsers&Version=2010-05-08\n"
			 "content-type:application/x-www-form-urlencoded; charset=utf-8\n"
			 "host:iam.amazonaws.com\nx-amz-date:20150830T123600Z\n\n"
			 "content-type;host;x-amz-date\n" EMPTY,
			 "content-type;host;x-amz-date");
	expect_auth(&k, IAM_HEAD, "content-type;host;x-amz-date",
		    "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/aws4_request, "
		    "SignedHeaders=content-type;host;x-amz-date, "
		    "Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7");
}

Test(sigv4_examples, s3_get_object_with_a_range)
{
	struct sigv4_key k = {S3_KEY, S3_SECRET, "us-east-1", "s3"};

	expect_auth(&k,
		    "GET /test.txt HTTP/1.1\r\nHost: examplebucket.s3.amazonaws.com\r\n"
		    "Range: bytes=0-9\r\nx-amz-content-sha256: " EMPTY "\r\n"
		    "x-amz-date: 20130524T000000Z\r\n",
		    "host;range;x-amz-content-sha256;x-amz-date",
		    "AWS4-HMAC-SHA256 Credential=" S3_KEY "/20130524/us-east-1/s3/aws4_request, "
		    "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, "
		    "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
}

Test(sigv4_examples, s3_put_object_a_dollar_in_the_key_and_a_body_hash)
{
	struct sigv4_key k = {S3_KEY, S3_SECRET, "us-east-1", "s3"};
	const char *head =
	    "PUT /test$file.text HTTP/1.1\r\nHost: examplebucket.s3.amazonaws.com\r\n"
	    "Date: Fri, 24 May 2013 00:00:00 GMT\r\nx-amz-date: 20130524T000000Z\r\n"
	    "x-amz-storage-class: REDUCED_REDUNDANCY\r\n"
	    "x-amz-content-sha256: "
	    "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072\r\n"
	    "Content-Length: 21\r\n";

	expect_auth(&k, head, "date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class",
		    "AWS4-HMAC-SHA256 Credential=" S3_KEY "/20130524/us-east-1/s3/aws4_request, "
		    "SignedHeaders=date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class, "
		    "Signature=98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd");
}

Test(sigv4_examples, s3_get_lifecycle_a_name_without_value)
{
	struct sigv4_key k = {S3_KEY, S3_SECRET, "us-east-1", "s3"};

	expect_auth(&k,
		    "GET /?lifecycle HTTP/1.1\r\nHost: examplebucket.s3.amazonaws.com\r\n"
		    "x-amz-date: 20130524T000000Z\r\nx-amz-content-sha256: " EMPTY "\r\n",
		    "host;x-amz-content-sha256;x-amz-date",
		    "AWS4-HMAC-SHA256 Credential=" S3_KEY "/20130524/us-east-1/s3/aws4_request, "
		    "SignedHeaders=host;x-amz-content-sha256;x-amz-date, "
		    "Signature=fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543");
}

Test(sigv4_examples, s3_list_objects_the_query_sorted)
{
	struct sigv4_key k = {S3_KEY, S3_SECRET, "us-east-1", "s3"};

	expect_auth(&k,
		    "GET /?prefix=J&max-keys=2 HTTP/1.1\r\nHost: examplebucket.s3.amazonaws.com\r\n"
		    "x-amz-date: 20130524T000000Z\r\nx-amz-content-sha256: " EMPTY "\r\n",
		    "host;x-amz-content-sha256;x-amz-date",
		    "AWS4-HMAC-SHA256 Credential=" S3_KEY "/20130524/us-east-1/s3/aws4_request, "
		    "SignedHeaders=host;x-amz-content-sha256;x-amz-date, "
		    "Signature=34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7");
}

/* ---- canonical forms --------------------------------------------------------------- */

static void
expect_uri(const char *service, const char *path, const char *want)
{
	char *got = sigv4_canonical_uri(service, path, strlen(path));

	cr_assert_str_eq(got, want, "%s %s", service, path);
	free(got);
}

static void
expect_query(const char *q, const char *want)
{
	char *got = sigv4_canonical_query(q, strlen(q));

	cr_assert_str_eq(got, want, "%s", q);
	free(got);
}

Test(sigv4_canonical, s3_paths_are_encoded_once_and_never_normalised)
{
	expect_uri("s3", "", "/");
	expect_uri("s3", "/", "/");
	expect_uri("s3", "/b/a%20b/c~d", "/b/a%20b/c~d");
	expect_uri("s3", "/b/%7Ex%7e", "/b/~x~"); /* an unreserved byte is never encoded */
	expect_uri("s3", "/b/a+b=c&d", "/b/a%2Bb%3Dc%26d");
	expect_uri("s3", "/b/%e2%82%ac", "/b/%E2%82%AC");
	expect_uri("s3", "/b//x/./y/", "/b//x/./y/");
	expect_uri("s3", "/b/100%", "/b/100%25");
}

Test(sigv4_canonical, other_services_lose_empty_and_dot_segments_and_are_encoded_twice)
{
	expect_uri("iam", "", "/");
	expect_uri("iam", "/", "/");
	expect_uri("execute-api", "/a%20b", "/a%2520b");
	expect_uri("execute-api", "//a//b/", "/a/b/");
	expect_uri("execute-api", "/a/./b/../c", "/a/c");
	expect_uri("execute-api", "/a/b", "/a/b");
	expect_uri("execute-api", "/$x", "/%24x");
}

Test(sigv4_canonical, query_names_and_values_decoded_encoded_and_sorted)
{
	expect_query("", "");
	expect_query("b=2&a=1&a=0", "a=0&a=1&b=2");
	expect_query("k", "k=");
	expect_query("x=a%2Fb", "x=a%2Fb");
	expect_query("x=%7e&y=a+b", "x=~&y=a%2Bb");
	expect_query("x=%e2%82%ac", "x=%E2%82%AC");
	expect_query("list-type=2&prefix=a/b", "list-type=2&prefix=a%2Fb");
}

Test(sigv4_canonical, signed_are_the_agents_still_sent_with_host_and_every_x_amz)
{
	/* The agent signed range and accept-encoding; the proxy dropped the
	 * range and rewrote Accept-Encoding: the value signed is the one sent.
	 * It did not sign host or x-amz-meta-a: they are signed anyway. */
	expect_canonical(
	    "s3",
	    "GET /k HTTP/1.1\r\nHost: b.s3.eu-west-1.amazonaws.com\r\n"
	    "x-amz-meta-a:  one   two \r\nX-Amz-Date: 20240102T030405Z\r\n"
	    "x-amz-content-sha256: UNSIGNED-PAYLOAD\r\nUser-Agent: sdk\r\n"
	    "X-Multi: a\r\nx-multi: b  c\r\nAccept-Encoding: identity\r\n",
	    "accept-encoding;range;x-amz-content-sha256;x-amz-date;x-multi",
	    "GET\n/k\n\naccept-encoding:identity\nhost:b.s3.eu-west-1.amazonaws.com\n"
	    "x-amz-content-sha256:UNSIGNED-PAYLOAD\nx-amz-date:20240102T030405Z\n"
	    "x-amz-meta-a:one two\nx-multi:a,b c\n\n"
	    "accept-encoding;host;x-amz-content-sha256;x-amz-date;x-amz-meta-a;x-multi\n"
	    "UNSIGNED-PAYLOAD",
	    "accept-encoding;host;x-amz-content-sha256;x-amz-date;x-amz-meta-a;x-multi");
}

Test(sigv4_canonical, the_payload_hash_is_the_agents_or_the_empty_bodys)
{
	const char *h = "PUT /k HTTP/1.1\r\nHost: h\r\nx-amz-date: 20240102T030405Z\r\n";
	char *names = NULL, *cr;
	const char *why;

	cr = sigv4_canonical_request("s3", h, strlen(h), "host", 4, &names, &why);
	cr_assert_not_null(cr);
	cr_assert(strstr(cr, "\nhost;x-amz-date\n" EMPTY), "%s", cr);
	free(cr);
	free(names);
}

/* ---- what the proxy refuses ----------------------------------------------------------- */

#define GOOD_AUTH                                                                                  \
	"AWS4-HMAC-SHA256 Credential=oa_cred_K/20240102/eu-west-1/s3/aws4_request, "               \
	"SignedHeaders=host;x-amz-date, "                                                          \
	"Signature=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static const char *
parse_refusal(const char *v)
{
	struct sigv4_auth a;
	const char *why = NULL;

	if (sigv4_parse_auth(v, strlen(v), &a, &why) == 0)
		return NULL;
	cr_assert_not_null(why);
	return why;
}

Test(sigv4_refusals, a_good_authorization_parses_into_its_parts)
{
	struct sigv4_auth a;
	const char *why = NULL;

	cr_assert_eq(sigv4_parse_auth(GOOD_AUTH, strlen(GOOD_AUTH), &a, &why), 0, "%s", why);
	cr_assert_eq(a.key_id_len, 9);
	cr_assert_eq(strncmp(a.key_id, "oa_cred_K", 9), 0);
	cr_assert_eq(strncmp(a.date, "20240102", a.date_len), 0);
	cr_assert_eq(strncmp(a.region, "eu-west-1", a.region_len), 0);
	cr_assert_eq(strncmp(a.service, "s3", a.service_len), 0);
	cr_assert_eq(strncmp(a.signed_headers, "host;x-amz-date", a.signed_headers_len), 0);
	cr_assert_eq(a.signature_len, 64);
	cr_assert_eq(sigv4_check(&a, "oa_cred_K/", "eu-west-1", "s3", "20240102T030405Z", 16, &why),
		     -1, "the key id is compared whole");
}

Test(sigv4_refusals, malformed_authorizations_are_refused)
{
	cr_assert_not_null(parse_refusal("Bearer oa_cred_K"));
	cr_assert_not_null(parse_refusal("AWS4-HMAC-SHA1 Credential=a/b/c/d/aws4_request"));
	cr_assert_not_null(parse_refusal("AWS oa_cred_K:sig"));
	cr_assert_not_null(parse_refusal(
	    "AWS4-HMAC-SHA256 Credential=oa_cred_K/20240102/eu-west-1/s3/aws4_request, "
	    "SignedHeaders=host"));
	cr_assert_not_null(parse_refusal(
	    "AWS4-HMAC-SHA256 Credential=oa_cred_K/20240102/eu-west-1/s3/aws5_request, "
	    "SignedHeaders=host, Signature=" EMPTY));
	cr_assert_not_null(
	    parse_refusal("AWS4-HMAC-SHA256 Credential=20240102/eu-west-1/s3/aws4_request, "
			  "SignedHeaders=host, Signature=" EMPTY));
	cr_assert_not_null(parse_refusal(
	    "AWS4-HMAC-SHA256 Credential=oa_cred_K/20240102/eu-west-1/s3/aws4_request, "
	    "SignedHeaders=host, Signature=ABCD"));
	cr_assert_not_null(parse_refusal(GOOD_AUTH ", Signature=" EMPTY), "a repeated part");
	cr_assert_not_null(parse_refusal(GOOD_AUTH ", Extra=1"), "an unknown part");
	cr_assert_not_null(parse_refusal(
	    "AWS4-HMAC-SHA256 Credential=oa_cred_K/20240102/eu-west-1/s3/aws4_request, "
	    "SignedHeaders=host\r\nx, Signature=" EMPTY));
}

Test(sigv4_refusals, another_key_region_service_or_date_is_refused)
{
	struct sigv4_auth a;
	const char *why;

	cr_assert_eq(sigv4_parse_auth(GOOD_AUTH, strlen(GOOD_AUTH), &a, &why), 0);
	cr_assert_eq(sigv4_check(&a, "oa_cred_K", "eu-west-1", "s3", "20240102T030405Z", 16, &why),
		     0);
	cr_assert_eq(sigv4_check(&a, "oa_cred_L", "eu-west-1", "s3", "20240102T030405Z", 16, &why),
		     -1);
	cr_assert(strstr(why, "AWS_ACCESS_KEY_ID placeholder"));
	cr_assert_eq(sigv4_check(&a, "oa_cred_K", "us-east-1", "s3", "20240102T030405Z", 16, &why),
		     -1);
	cr_assert(strstr(why, "region"));
	cr_assert_eq(sigv4_check(&a, "oa_cred_K", "eu-west-1", "sts", "20240102T030405Z", 16, &why),
		     -1);
	cr_assert(strstr(why, "service"));
	cr_assert_eq(sigv4_check(&a, "oa_cred_K", "eu-west-1", "s3", "20240103T030405Z", 16, &why),
		     -1);
	cr_assert(strstr(why, "date"));
	cr_assert_eq(sigv4_check(&a, "oa_cred_K", "eu-west-1", "s3", NULL, 0, &why), -1);
	cr_assert(strstr(why, "x-amz-date"));
	cr_assert_eq(sigv4_check(&a, "oa_cred_K", "eu-west-1", "s3", "2024-01-02T03:04", 16, &why),
		     -1);
}

Test(sigv4_refusals, presigned_queries_are_found_in_any_case_and_encoding)
{
	const char *yes[] = {"X-Amz-Signature=abc", "a=1&X-Amz-Credential=k%2F2024",
			     "x-amz-signature=1", "X%2DAmz%2DSignature=1", "X-Amz-Credential"};
	const char *no[] = {"", "a=X-Amz-Signature", "X-Amz-Date=1", "X-Amz-Signatures=1"};

	for (size_t i = 0; i < sizeof(yes) / sizeof(*yes); i++)
		cr_assert(sigv4_query_is_presigned(yes[i], strlen(yes[i])), "%s", yes[i]);
	for (size_t i = 0; i < sizeof(no) / sizeof(*no); i++)
		cr_assert_not(sigv4_query_is_presigned(no[i], strlen(no[i])), "%s", no[i]);
}

Test(sigv4_refusals, only_payload_hashes_the_proxy_can_keep)
{
	cr_assert_null(sigv4_payload_refusal(EMPTY, 64));
	cr_assert_null(sigv4_payload_refusal("UNSIGNED-PAYLOAD", 16));
	cr_assert_null(sigv4_payload_refusal("STREAMING-UNSIGNED-PAYLOAD-TRAILER", 34));
	cr_assert(strstr(sigv4_payload_refusal("STREAMING-AWS4-HMAC-SHA256-PAYLOAD", 34),
			 "signed stream"));
	cr_assert_not_null(sigv4_payload_refusal("STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER", 42));
	cr_assert_not_null(sigv4_payload_refusal(
	    "E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855", 64));
	cr_assert_not_null(sigv4_payload_refusal("e3b0", 4));
	cr_assert_not_null(sigv4_payload_refusal("", 0));
}

Test(sigv4_refusals, a_head_without_a_good_x_amz_date_is_not_signed)
{
	struct sigv4_key k = {S3_KEY, S3_SECRET, "us-east-1", "s3"};
	const char *heads[] = {
	    "GET / HTTP/1.1\r\nHost: h\r\n",
	    "GET / HTTP/1.1\r\nHost: h\r\nx-amz-date: 20130524\r\n",
	    "GET / HTTP/1.1\r\nHost: h\r\nx-amz-date: 20130524T000000Z\r\n"
	    "X-Amz-Date: 20130524T000000Z\r\n",
	};
	char out[SIGV4_AUTH_MAX];
	const char *why;

	for (size_t i = 0; i < sizeof(heads) / sizeof(*heads); i++) {
		why = NULL;
		cr_assert_eq(sigv4_authorization(&k, heads[i], strlen(heads[i]), "host", 4, out,
						 sizeof(out), &why),
			     -1, "%s", heads[i]);
		cr_assert(why && strstr(why, "x-amz-date"));
	}
	why = NULL;
	heads[0] = "GET / HTTP/1.1\r\nHost: h\r\nx-amz-date: 20130524T000000Z\r\n";
	cr_assert_eq(sigv4_authorization(&k, heads[0], strlen(heads[0]), "host", 4, out, 40, &why),
		     -1, "too small a buffer");
	cr_assert_gt(
	    sigv4_authorization(&k, heads[0], strlen(heads[0]), "host", 4, out, sizeof(out), &why),
	    0);
}
