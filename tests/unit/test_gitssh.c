/*
 * test_gitssh.c - the git_ssh broker's pure half: the request message,
 * git's ssh command line (what is accepted, what is refused), which entry
 * allows it, which addresses may be connected to, and the ssh command line
 * the broker runs.
 */
#include <criterion/criterion.h>

#include <arpa/inet.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "runtime/gitssh/broker.h"

#define ARGC(v) ((int)(sizeof(v) / sizeof((v)[0])))

static struct git_ssh
entry(const char *host, unsigned port, const char *user, const char *repo, unsigned ops)
{
	struct git_ssh b;

	memset(&b, 0, sizeof(b));
	b.loc.line = 7;
	b.host.s = host;
	b.port = port;
	b.username.s = user;
	b.repository.s = repo;
	b.operations = ops;
	return b;
}

/* Parse ARGV; 0 or -1, the reason in the static ERR. */
static char err[512];

static int
parse(int argc, const char *const *argv, struct gitssh_request *rq)
{
	err[0] = '\0';
	return gitssh_parse_argv(argc, argv, rq, err, sizeof(err));
}

/* ---- the message ---------------------------------------------------------- */

Test(wire, round_trip)
{
	char buf[GITSSH_REQUEST_MAX];
	char *const argv[] = {(char *)"-p", (char *)"2222", (char *)"git@h",
			      (char *)"git-upload-pack 'r.git'"};
	struct gitssh_wire w;
	const char *why;
	unsigned len = gitssh_encode_request(buf, sizeof(buf), "tok", "version=2", 4, argv);

	cr_assert_gt(len, 0);
	cr_assert_eq(gitssh_decode(buf, len, &w, &why), 1);
	cr_assert_str_eq(w.token, "tok");
	cr_assert_str_eq(w.git_protocol, "version=2");
	cr_assert_eq(w.argc, 4);
	cr_assert_str_eq(w.argv[3], "git-upload-pack 'r.git'");
	cr_assert_eq(w.len, len);
	/* Every prefix reads as a prefix: the broker waits for the rest. */
	for (unsigned i = 0; i < len; i++)
		cr_assert_eq(gitssh_decode(buf, i, &w, &why), 0, "prefix %u", i);
	/* No GIT_PROTOCOL: an empty field, not a missing one. */
	len = gitssh_encode_request(buf, sizeof(buf), "tok", NULL, 0, argv);
	cr_assert_eq(gitssh_decode(buf, len, &w, &why), 1);
	cr_assert_str_eq(w.git_protocol, "");
	cr_assert_eq(w.argc, 0);
}

Test(wire, refusals)
{
	char buf[GITSSH_REQUEST_MAX + 16];
	char *argv[GITSSH_MAX_ARGS + 1];
	struct gitssh_wire w;
	const char *why;
	static const char bad_count[] = GITSSH_MAGIC "\0tok\0\0"
						     "17\0";
	static const char lead_zero[] = GITSSH_MAGIC "\0tok\0\0"
						     "01\0a\0";
	static const char minus[] = GITSSH_MAGIC "\0tok\0\0"
						 "-1\0";

	for (int i = 0; i <= GITSSH_MAX_ARGS; i++)
		argv[i] = (char *)"x";
	cr_assert_eq(gitssh_encode_request(buf, sizeof(buf), "t", NULL, GITSSH_MAX_ARGS + 1, argv),
		     0);
	cr_assert_eq(gitssh_encode_request(buf, 10, "t", NULL, 1, argv), 0);
	/* A stranger's bytes are refused at the first one that differs. */
	cr_assert_eq(gitssh_decode("SSH-2.0-OpenSSH", 15, &w, &why), -1);
	cr_assert_eq(gitssh_decode("o", 1, &w, &why), 0);
	cr_assert_eq(gitssh_decode("x", 1, &w, &why), -1);
	cr_assert_eq(gitssh_decode(bad_count, sizeof(bad_count) - 1, &w, &why), -1);
	cr_assert_eq(gitssh_decode(lead_zero, sizeof(lead_zero) - 1, &w, &why), -1);
	cr_assert_eq(gitssh_decode(minus, sizeof(minus) - 1, &w, &why), -1);
	/* A message that never ends is refused at the size limit. */
	memcpy(buf, GITSSH_MAGIC, sizeof(GITSSH_MAGIC));
	memset(buf + sizeof(GITSSH_MAGIC), 'a', sizeof(buf) - sizeof(GITSSH_MAGIC));
	cr_assert_eq(gitssh_decode(buf, GITSSH_REQUEST_MAX - 1, &w, &why), 0);
	cr_assert_eq(gitssh_decode(buf, GITSSH_REQUEST_MAX, &w, &why), -1);
	cr_assert_not_null(why);
}

Test(wire, token)
{
	cr_assert(gitssh_token_equal("abcdef", "abcdef"));
	cr_assert_not(gitssh_token_equal("abcdef", "abcdeg"));
	cr_assert_not(gitssh_token_equal("abcdef", "abcde"));
	cr_assert_not(gitssh_token_equal("", "a"));
	cr_assert_not(gitssh_token_equal("abcdef", ""));
}

Test(wire, new_token)
{
	char a[GITSSH_TOKEN_LEN + 1], b[GITSSH_TOKEN_LEN + 1];

	cr_assert_eq(gitssh_new_token(a), 0);
	cr_assert_eq(gitssh_new_token(b), 0);
	cr_assert_eq(strlen(a), GITSSH_TOKEN_LEN);
	cr_assert_eq(strspn(a, "0123456789abcdef"), GITSSH_TOKEN_LEN);
	cr_assert_str_neq(a, b);
}

/* ---- git's command line ------------------------------------------------------------ */

Test(argv, what_git_sends)
{
	struct gitssh_request rq;
	const char *v2[] = {"-o",   "SendEnv=GIT_PROTOCOL", "-p",
			    "2222", "git@GitHub.com",	    "git-upload-pack 'myorg/app.git'"};
	const char *push[] = {"-4", "git@github.com", "git-receive-pack '/myorg/app.git'"};
	const char *nouser[] = {"github.com", "git-upload-pack 'a'"};

	cr_assert_eq(parse(ARGC(v2), v2, &rq), 0, "%s", err);
	cr_assert_str_eq(rq.user, "git");
	cr_assert_str_eq(rq.host, "github.com");
	cr_assert_eq(rq.port, 2222);
	cr_assert_eq(rq.family, AF_UNSPEC);
	cr_assert_eq(rq.op, GIT_OP_FETCH);
	cr_assert_str_eq(rq.path, "myorg/app.git");

	cr_assert_eq(parse(ARGC(push), push, &rq), 0, "%s", err);
	cr_assert_eq(rq.op, GIT_OP_PUSH);
	cr_assert_eq(rq.port, 22);
	cr_assert_eq(rq.family, AF_INET);
	cr_assert_str_eq(rq.path, "/myorg/app.git");

	cr_assert_eq(parse(ARGC(nouser), nouser, &rq), 0, "%s", err);
	cr_assert_str_eq(rq.user, "");
}

Test(argv, git_quoting_undone)
{
	struct gitssh_request rq;
	const char *q[] = {"h", "git-upload-pack 'it'\\''s'\\!'x'"};

	cr_assert_eq(parse(ARGC(q), q, &rq), 0, "%s", err);
	cr_assert_str_eq(rq.path, "it's!x");
}

/* Each refused with a reason; the command line never reaches a shell. */
Test(argv, refusals)
{
	static const char *const cases[][6] = {
	    /* an arbitrary command, a login, other programs and services */
	    {"host", "id", NULL},
	    {"host", NULL},
	    {"git@host", "git-upload-archive 'r.git'", NULL},
	    {"git@host", "git upload-pack 'r.git'", NULL},
	    {"git@host", "sh -c 'git-upload-pack r.git'", NULL},
	    {"git@host", "/usr/bin/git-upload-pack 'r.git'", NULL},
	    {"git@host", "git-upload-pack  'r.git'", NULL},
	    {"git@host", "git-upload-pack\t'r.git'", NULL},
	    {"git@host", "git-upload-pack", NULL},
	    /* words after the command, or a second argument */
	    {"git@host", "git-upload-pack 'r.git'", "x", NULL},
	    {"git@host", "git-upload-pack 'r.git'; id", NULL},
	    {"git@host", "git-upload-pack 'r.git' 'other.git'", NULL},
	    {"git@host", "git-upload-pack 'r.git'$(id)", NULL},
	    {"git@host", "git-upload-pack r.git", NULL},
	    {"git@host", "git-upload-pack \"r.git\"", NULL},
	    {"git@host", "git-upload-pack 'r.git", NULL},
	    {"git@host", "git-upload-pack ''", NULL},
	    {"git@host", "git-upload-pack 'a'\\x'b'", NULL},
	    {"git@host", "git-upload-pack 'a\nb'", NULL},
	    /* options git never passes */
	    {"-v", "git@host", "git-upload-pack 'r.git'", NULL},
	    {"-o", "ProxyCommand=nc evil 22", "git@host", "git-upload-pack 'r.git'", NULL},
	    {"-oSendEnv=GIT_PROTOCOL", "git@host", "git-upload-pack 'r.git'", NULL},
	    {"-o", "SendEnv=*", "git@host", "git-upload-pack 'r.git'", NULL},
	    {"-L", "1:h:2", "git@host", "git-upload-pack 'r.git'", NULL},
	    {"-p2222", "git@host", "git-upload-pack 'r.git'", NULL},
	    {"-p", "22", "-p", "23", "git@host", "git-upload-pack 'r.git'"},
	    {"-4", "-6", "git@host", "git-upload-pack 'r.git'", NULL},
	    {"-p", "0", "git@host", "git-upload-pack 'r.git'", NULL},
	    {"-p", "65536", "git@host", "git-upload-pack 'r.git'", NULL},
	    {"-p", "22x", "git@host", "git-upload-pack 'r.git'", NULL},
	    {"-p", NULL},
	    {"--", "git@host", "git-upload-pack 'r.git'", NULL},
	    /* destinations */
	    {"git@", "git-upload-pack 'r.git'", NULL},
	    {"@host", "git-upload-pack 'r.git'", NULL},
	    {"g;t@host", "git-upload-pack 'r.git'", NULL},
	    {"git@host:22", "git-upload-pack 'r.git'", NULL},
	    {"git@[::1]", "git-upload-pack 'r.git'", NULL},
	    {"git@ho_st", "git-upload-pack 'r.git'", NULL},
	    {"git@-oProxyCommand=x", "git-upload-pack 'r.git'", NULL},
	    {"ssh://git@host/r.git", "git-upload-pack 'r.git'", NULL},
	    {"git@host/x", "git-upload-pack 'r.git'", NULL},
	    {NULL},
	};
	struct gitssh_request rq;

	for (size_t i = 0; cases[i][0]; i++) {
		int argc = 0;

		while (argc < 6 && cases[i][argc])
			argc++;
		cr_assert_eq(parse(argc, cases[i], &rq), -1, "case %zu (%s %s) was accepted", i,
			     cases[i][0], argc > 1 ? cases[i][1] : "");
		cr_assert_neq(err[0], '\0', "case %zu gave no reason", i);
	}
	cr_assert_eq(parse(0, cases[0], &rq), -1);
}

Test(argv, messages)
{
	struct gitssh_request rq;
	const char *cmd[] = {"host", "cat /etc/passwd"};
	const char *archive[] = {"host", "git-upload-archive 'r'"};

	parse(ARGC(cmd), cmd, &rq);
	cr_assert(strstr(err, "not 'cat'"), "%s", err);
	parse(ARGC(archive), archive, &rq);
	cr_assert(strstr(err, "git-upload-archive"), "%s", err);
}

/* Nothing in S a terminal would act on: no control byte, no UTF-8 C1, no bidi override. */
static bool
inert(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p == 0x7f || (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f))
			return false;
	return !strstr(s, "\xe2\x80\xae");
}

Test(argv, refusals_show_the_agents_words_escaped)
{
	struct gitssh_request rq;
	const char *repo[] = {"git@host", "git-upload-pack 'r\x1b[2J\x07\n.git'"};
	const char *cmd[] = {"host", "\x1b]0;pwned\x07 'r.git'"};
	const char *opt[] = {"-\x1b[31m", "host", "git-upload-pack 'r.git'"};
	const char *user[] = {"g\x07t@host", "git-upload-pack 'r.git'"};

	cr_assert_eq(parse(ARGC(repo), repo, &rq), -1);
	cr_expect(strstr(err, "quoted as git quotes it, not 'r\\x1b[2J\\x07\\n.git'"), "%s", err);
	cr_expect(inert(err), "%s", err);
	cr_assert_eq(parse(ARGC(cmd), cmd, &rq), -1);
	cr_expect(strstr(err, "not '\\x1b]0;pwned\\x07'"), "%s", err);
	cr_expect(inert(err), "%s", err);
	cr_assert_eq(parse(ARGC(opt), opt, &rq), -1);
	cr_expect(strstr(err, "ssh option '-\\x1b[31m' is not one git passes"), "%s", err);
	cr_assert_eq(parse(ARGC(user), user, &rq), -1);
	cr_expect(strstr(err, "'g\\x07t@host' is not a user name"), "%s", err);
	cr_expect(inert(err), "%s", err);
}

/* ---- which entry allows it ----------------------------------------------------------- */

static int
match(const struct git_ssh *b, size_t n, const char *dest, const char *cmd, const char *port)
{
	struct gitssh_request rq;
	const char *with_port[] = {"-p", port, dest, cmd};
	const char *plain[] = {dest, cmd};
	int rc = port ? parse(4, with_port, &rq) : parse(2, plain, &rq);

	cr_assert_eq(rc, 0, "%s", err);
	return gitssh_match(b, n, &rq, err, sizeof(err));
}

Test(match, repository_spellings)
{
	struct git_ssh b[] = {entry("github.com", 22, "git", "myorg/app.git", GIT_OP_FETCH),
			      entry("github.com", 22, "git", "myorg/lib", GIT_OP_FETCH)};

	cr_assert_eq(match(b, 2, "git@github.com", "git-upload-pack 'myorg/app.git'", NULL), 0);
	cr_assert_eq(match(b, 2, "git@github.com", "git-upload-pack '/myorg/app.git'", NULL), 0);
	cr_assert_eq(match(b, 2, "git@github.com", "git-upload-pack 'myorg/app'", NULL), 0);
	cr_assert_eq(match(b, 2, "git@github.com", "git-upload-pack '/myorg/app'", NULL), 0);
	cr_assert_eq(match(b, 2, "git@github.com", "git-upload-pack 'myorg/lib.git'", NULL), 1);
	cr_assert_eq(match(b, 2, "git@GITHUB.COM", "git-upload-pack 'myorg/lib'", NULL), 1);
	cr_assert_eq(match(b, 2, "github.com", "git-upload-pack 'myorg/lib'", NULL), 1);
	cr_assert_eq(match(b, 2, "git@github.com", "git-upload-pack '//myorg/app.git'", NULL), -1);
	cr_assert_eq(match(b, 2, "git@github.com", "git-upload-pack 'myorg/app.git.git'", NULL),
		     -1);
	cr_assert_eq(match(b, 2, "git@github.com", "git-upload-pack 'myorg/app.git/'", NULL), -1);
	cr_assert_eq(match(b, 2, "git@github.com", "git-upload-pack 'MyOrg/app.git'", NULL), -1);
	cr_assert_eq(
	    match(b, 2, "git@github.com", "git-upload-pack 'myorg/../myorg/app.git'", NULL), -1);
	cr_assert_eq(match(b, 2, "git@github.com", "git-upload-pack '~git/myorg/app.git'", NULL),
		     -1);
	cr_assert_eq(match(b, 2, "git@github.com", "git-upload-pack 'myorg/app.gi'", NULL), -1);
	cr_assert_eq(match(b, 2, "git@github.com", "git-upload-pack 'myorg/other.git'", NULL), -1);
	cr_assert(strstr(err, "repository myorg/other.git"), "%s", err);
}

Test(match, host_port_user_operation)
{
	struct git_ssh b[] = {
	    entry("127.0.0.1", 2222, "git", "r.git", GIT_OP_FETCH),
	    entry("127.0.0.1", 2222, "deploy", "w.git", GIT_OP_FETCH | GIT_OP_PUSH)};

	cr_assert_eq(match(b, 2, "git@127.0.0.1", "git-upload-pack 'r.git'", "2222"), 0);
	cr_assert_eq(match(b, 2, "git@127.0.0.1", "git-receive-pack 'r.git'", "2222"), -1);
	cr_assert(strstr(err, "push of r.git"), "%s", err);
	cr_assert(strstr(err, "fetch only"), "%s", err);
	cr_assert_eq(match(b, 2, "deploy@127.0.0.1", "git-receive-pack 'w.git'", "2222"), 1);
	cr_assert_eq(match(b, 2, "deploy@127.0.0.1", "git-upload-pack 'w'", "2222"), 1);
	/* The entry's user, no other: another one is refused, none means the entry's. */
	cr_assert_eq(match(b, 2, "root@127.0.0.1", "git-upload-pack 'r.git'", "2222"), -1);
	cr_assert(strstr(err, "user root"), "%s", err);
	cr_assert_eq(match(b, 2, "deploy@127.0.0.1", "git-upload-pack 'r.git'", "2222"), -1);
	cr_assert_eq(match(b, 2, "127.0.0.1", "git-upload-pack 'r.git'", "2222"), 0);
	/* Another port, another host, another spelling of the host. */
	cr_assert_eq(match(b, 2, "git@127.0.0.1", "git-upload-pack 'r.git'", "22"), -1);
	cr_assert(strstr(err, "port 22"), "%s", err);
	cr_assert_eq(match(b, 2, "git@127.0.0.1", "git-upload-pack 'r.git'", NULL), -1);
	cr_assert_eq(match(b, 2, "git@localhost", "git-upload-pack 'r.git'", "2222"), -1);
	cr_assert(strstr(err, "host localhost"), "%s", err);
	cr_assert_eq(match(b, 2, "git@127.0.0.01", "git-upload-pack 'r.git'", "2222"), -1);
	cr_assert_eq(match(b, 0, "git@127.0.0.1", "git-upload-pack 'r.git'", "2222"), -1);
}

Test(match, a_repository_no_entry_names_is_shown_escaped)
{
	struct git_ssh b[] = {entry("github.com", 22, "git", "myorg/app.git", GIT_OP_FETCH)};

	/* git's quoting lets every byte but the controls through: U+202E and a C1 CSI. */
	cr_assert_eq(match(b, 1, "git@github.com",
			   "git-upload-pack 'myorg/\xe2\x80\xae"
			   "ppa\xc2\x9b"
			   "2J.git'",
			   NULL),
		     -1);
	cr_expect(strstr(err, "names repository myorg/\\u202eppa\\u009b2J.git"), "%s", err);
	cr_expect(inert(err), "%s", err);
}

/* ---- addresses --------------------------------------------------------------------------- */

static const char *
refused(const struct git_ssh *b, const char *addr)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *v4 = (struct sockaddr_in *)(void *)&ss;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)(void *)&ss;

	memset(&ss, 0, sizeof(ss));
	if (inet_pton(AF_INET, addr, &v4->sin_addr) == 1) {
		v4->sin_family = AF_INET;
	} else {
		cr_assert_eq(inet_pton(AF_INET6, addr, &v6->sin6_addr), 1, "%s", addr);
		v6->sin6_family = AF_INET6;
	}
	return gitssh_address_refused(b, (struct sockaddr *)&ss);
}

Test(address, deny_table)
{
	struct git_ssh b = entry("github.com", 22, "git", "r", GIT_OP_FETCH);

	cr_assert_null(refused(&b, "140.82.112.3"));
	cr_assert_null(refused(&b, "2606:50c0:8000::154"));
	cr_assert_not_null(refused(&b, "127.0.0.1"));
	cr_assert_not_null(refused(&b, "::1"));
	cr_assert_not_null(refused(&b, "10.1.2.3"));
	cr_assert_not_null(refused(&b, "192.168.1.1"));
	cr_assert_not_null(refused(&b, "169.254.169.254"));
	cr_assert_not_null(refused(&b, "fe80::1"));
	cr_assert_not_null(refused(&b, "::ffff:10.0.0.1"));
	cr_assert_not_null(refused(&b, "0.0.0.0"));
}

Test(address, allow_loopback_lifts_loopback_only)
{
	struct git_ssh b = entry("127.0.0.1", 22, "git", "r", GIT_OP_FETCH);

	b.allow_loopback.value = true;
	cr_assert_null(refused(&b, "127.0.0.1"));
	cr_assert_null(refused(&b, "127.5.0.1"));
	cr_assert_null(refused(&b, "::1"));
	cr_assert_null(refused(&b, "::ffff:127.0.0.1"));
	cr_assert_not_null(refused(&b, "10.0.0.1"));
	cr_assert_not_null(refused(&b, "169.254.169.254"));
	cr_assert_not_null(refused(&b, "168.63.129.16"));
	cr_assert_not_null(refused(&b, "0.0.0.0"));
}

Test(address, allowed_cidrs_narrow)
{
	struct git_ssh b = entry("github.com", 22, "git", "r", GIT_OP_FETCH);
	struct ir_str cidrs[] = {{.s = "140.82.112.0/20"}, {.s = "10.0.0.0/8"}};

	b.allowed_cidrs.v = cidrs;
	b.allowed_cidrs.n = 2;
	cr_assert_null(refused(&b, "140.82.112.3"));
	cr_assert_null(refused(&b, "140.82.127.255"));
	cr_assert_not_null(refused(&b, "140.82.128.0"));
	cr_assert_not_null(refused(&b, "8.8.8.8"));
	cr_assert_not_null(refused(&b, "2606:50c0:8000::154"));
	/* A private block listed is an explicit choice; others stay refused. */
	cr_assert_null(refused(&b, "10.1.2.3"));
	cr_assert_not_null(refused(&b, "192.168.1.1"));
}

Test(address, listed_blocks_never_open_metadata_or_loopback)
{
	struct git_ssh b = entry("h", 22, "git", "r", GIT_OP_FETCH);
	struct ir_str cidrs[] = {{.s = "169.254.0.0/16"}, {.s = "168.63.129.16/32"},
				 {.s = "0.0.0.0/8"},	  {.s = "224.0.0.0/4"},
				 {.s = "127.0.0.0/8"},	  {.s = "240.0.0.0/4"}};

	b.allowed_cidrs.v = cidrs;
	b.allowed_cidrs.n = 6;
	cr_assert_not_null(refused(&b, "169.254.169.254"));
	cr_assert_not_null(refused(&b, "168.63.129.16"));
	cr_assert_not_null(refused(&b, "0.0.0.0"));
	cr_assert_not_null(refused(&b, "224.0.0.1"));
	cr_assert_not_null(refused(&b, "255.255.255.255"));
	cr_assert_not_null(refused(&b, "127.0.0.1"));
	b.allow_loopback.value = true;
	cr_assert_null(refused(&b, "127.0.0.1"));
	cr_assert_not_null(refused(&b, "169.254.169.254"));
	/* Loopback outside every listed block stays refused, allow_loopback or not. */
	b.allowed_cidrs.n = 1;
	cr_assert_not_null(refused(&b, "127.0.0.1"));
}

Test(address, git_protocol)
{
	cr_assert(gitssh_git_protocol_ok("version=2"));
	cr_assert(gitssh_git_protocol_ok("version=0"));
	cr_assert_not(gitssh_git_protocol_ok(""));
	cr_assert_not(gitssh_git_protocol_ok("version=3"));
	cr_assert_not(gitssh_git_protocol_ok("version=2:x=y"));
	cr_assert_not(gitssh_git_protocol_ok("version=2\n"));
}

/* ---- the ssh command line --------------------------------------------------------------- */

static bool
has(const struct gitssh_argv *av, const char *s)
{
	for (size_t i = 0; i < av->n; i++)
		if (!strcmp(av->v[i], s))
			return true;
	return false;
}

/* The value of option -o NAME=..., or NULL. */
static const char *
opt(const struct gitssh_argv *av, const char *name)
{
	size_t len = strlen(name);

	for (size_t i = 0; i + 1 < av->n; i++)
		if (!strcmp(av->v[i], "-o") && !strncmp(av->v[i + 1], name, len) &&
		    av->v[i + 1][len] == '=')
			return av->v[i + 1] + len + 1;
	return NULL;
}

Test(ssh, argv)
{
	struct git_ssh b = entry("github.com", 22, "git", "myorg/app.git", GIT_OP_FETCH);
	struct gitssh_request rq;
	struct gitssh_argv av;
	const char *v[] = {"git@github.com", "git-upload-pack '/myorg/app'"};

	cr_assert_eq(parse(2, v, &rq), 0);
	cr_assert_eq(gitssh_ssh_argv(&av, "/usr/bin/ssh", &b, &rq, "140.82.112.3", "/proc/9/fd/5",
				     "/proc/9/fd/6", false),
		     0);
	cr_assert_str_eq(av.v[0], "/usr/bin/ssh");
	cr_assert_null(av.v[av.n]);
	cr_assert_str_eq(av.v[1], "-F");
	cr_assert_str_eq(av.v[2], "/dev/null");
	cr_assert_str_eq(opt(&av, "BatchMode"), "yes");
	cr_assert_str_eq(opt(&av, "StrictHostKeyChecking"), "yes");
	cr_assert_str_eq(opt(&av, "HostKeyAlias"), "github.com");
	cr_assert_str_eq(opt(&av, "UserKnownHostsFile"), "/proc/9/fd/6");
	cr_assert_str_eq(opt(&av, "GlobalKnownHostsFile"), "/dev/null");
	cr_assert_str_eq(opt(&av, "IdentityFile"), "/proc/9/fd/5");
	cr_assert_str_eq(opt(&av, "IdentitiesOnly"), "yes");
	cr_assert_str_eq(opt(&av, "IdentityAgent"), "none");
	cr_assert_str_eq(opt(&av, "ForwardAgent"), "no");
	cr_assert_str_eq(opt(&av, "ClearAllForwardings"), "yes");
	cr_assert_str_eq(opt(&av, "ControlMaster"), "no");
	cr_assert_str_eq(opt(&av, "ProxyCommand"), "none");
	cr_assert_str_eq(opt(&av, "ProxyJump"), "none");
	cr_assert_str_eq(opt(&av, "PermitLocalCommand"), "no");
	cr_assert_not_null(opt(&av, "ConnectTimeout"));
	cr_assert_null(opt(&av, "SendEnv"));
	cr_assert_null(opt(&av, "PubkeyAuthentication"));
	cr_assert(has(&av, "-T") && has(&av, "-a") && has(&av, "-x"));
	/* The address pinned, after "--"; the command from the entry's own spelling. */
	cr_assert_str_eq(av.v[av.n - 3], "--");
	cr_assert_str_eq(av.v[av.n - 2], "140.82.112.3");
	cr_assert_str_eq(av.v[av.n - 1], "git-upload-pack '/myorg/app.git'");
}

Test(ssh, port_push_no_identity_protocol)
{
	struct git_ssh b = entry("127.0.0.1", 2222, "deploy", "w.git", GIT_OP_PUSH);
	struct gitssh_request rq;
	struct gitssh_argv av;
	const char *v[] = {"-p", "2222", "deploy@127.0.0.1", "git-receive-pack 'w'"};

	cr_assert_eq(parse(4, v, &rq), 0);
	cr_assert_eq(
	    gitssh_ssh_argv(&av, "/usr/bin/ssh", &b, &rq, "127.0.0.1", NULL, "/proc/9/fd/6", true),
	    0);
	/* known_hosts spells a port other than 22 "[host]:port". */
	cr_assert_str_eq(opt(&av, "HostKeyAlias"), "[127.0.0.1]:2222");
	/* No identity: no key at all, never ssh's default files. */
	cr_assert_str_eq(opt(&av, "IdentityFile"), "/dev/null");
	cr_assert_str_eq(opt(&av, "PubkeyAuthentication"), "no");
	cr_assert_str_eq(opt(&av, "SendEnv"), "GIT_PROTOCOL");
	cr_assert(has(&av, "deploy"));
	cr_assert(has(&av, "2222"));
	cr_assert_str_eq(av.v[av.n - 1], "git-receive-pack 'w.git'");
}
