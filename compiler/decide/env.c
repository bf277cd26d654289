/*
 * env.c - the command's environment, decided once (env.h).
 */
#include "env.h"

#include "hidden.h"

#include <string.h>

const char *const env_base_names[] = {"PATH", "HOME", "USER", "LOGNAME",  "SHELL",
				      "TERM", "TZ",   "LANG", "LANGUAGE", NULL};
const char *const env_scratch_names[] = {"TMPDIR", "TMP", "TEMP", "TEMPDIR", NULL};
const char *const env_proxy_names[] = {"HTTP_PROXY",  "HTTPS_PROXY", "http_proxy",
				       "https_proxy", "ALL_PROXY",   NULL};
/*
 * Each client's own name for a CA bundle: OpenSSL (and Go, Ruby, PHP),
 * Python's requests and pip, Node, curl, git, npm (over any cafile an
 * npmrc sets), Deno and cargo.
 */
const char *const env_ca_names[] = {"SSL_CERT_FILE",	   "REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS",
				    "CURL_CA_BUNDLE",	   "PIP_CERT",		 "GIT_SSL_CAINFO",
				    "npm_config_cafile", "DENO_CERT",		 "CARGO_HTTP_CAINFO",
				    NULL};
const char *const env_dangerous_names[] = {"LD_PRELOAD",      "LD_LIBRARY_PATH",
					   "BASH_ENV",	      "ENV",
					   "PROMPT_COMMAND",  "PYTHONSTARTUP",
					   "SSH_AUTH_SOCK",   "DBUS_SESSION_BUS_ADDRESS",
					   "XDG_RUNTIME_DIR", NULL};
const char *const env_xdg_home_names[] = {"XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME",
					  "XDG_STATE_HOME", NULL};

/* Windows: the system variables programs need (spec/windows.md). */
static const char *const win_base_names[] = {
    "PATH",	    "SYSTEMROOT",	    "SYSTEMDRIVE", "WINDIR",   "COMSPEC",
    "PATHEXT",	    "USERPROFILE",	    "HOMEDRIVE",   "HOMEPATH", "APPDATA",
    "LOCALAPPDATA", "NUMBER_OF_PROCESSORS", NULL};
static const char *const win_scratch_names[] = {"TEMP", "TMP", NULL};

#define NO_PROXY_VALUE "localhost,127.0.0.1,::1"

bool
env_name_ok(const char *s)
{
	if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_'))
		return false;
	for (s++; *s; s++)
		if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') ||
		      (*s >= '0' && *s <= '9') || *s == '_'))
			return false;
	return true;
}

static char
fold(char c, bool fold_case)
{
	return fold_case && c >= 'a' && c <= 'z' ? (char)(c - 'a' + 'A') : c;
}

/* Does ENTRY's name (up to '=') equal NAME, or start with it when PREFIX? */
static bool
name_match(const char *entry, const char *name, bool fold_case, bool prefix)
{
	size_t i = 0;

	for (; name[i]; i++)
		if (entry[i] == '\0' || entry[i] == '=' ||
		    fold(entry[i], fold_case) != fold(name[i], fold_case))
			return false;
	return prefix || entry[i] == '\0' || entry[i] == '=';
}

bool
env_name_passes(const struct sandbox *sb, const char *name)
{
	for (size_t i = 0; env_base_names[i]; i++)
		if (name_match(name, env_base_names[i], false, false))
			return true;
	if (name_match(name, "LC_", false, true))
		return true;
	for (size_t i = 0; i < sb->env_passthrough.n; i++)
		if (name_match(name, sb->env_passthrough.v[i].s, false, false))
			return true;
	return false;
}

/* ---- the decision ----------------------------------------------------------------- */

struct decider {
	struct arena *a;
	struct env_rules *out;
	const char *section; /* the heading for the next rule, once */
};

static void
rule(struct decider *d, enum env_op op, const char *name, const char *value, const char *why,
     unsigned line)
{
	struct env_rule *r = ARENA_PUSH(d->a, d->out->v, d->out->n, d->out->cap);

	*r = (struct env_rule){op, name, value, d->section, why, line};
	d->section = NULL;
}

/*
 * Is NAME an XDG base directory that a sandboxed launch does not pass?  Its
 * value is a host path: inside, the home is the sandbox's own (the private
 * home) or what the grants show of the host's, and a value outside it names
 * a place the sandbox does not see.  Unset, tools take $HOME/.config,
 * $HOME/.cache, $HOME/.local/share and $HOME/.local/state, which follow
 * $HOME wherever it is.
 */
static bool
xdg_home_name(const char *name, bool sandboxed)
{
	for (size_t i = 0; sandboxed && env_xdg_home_names[i]; i++)
		if (!strcmp(name, env_xdg_home_names[i]))
			return true;
	return false;
}

static void
decide_passes(struct decider *d, const struct sandbox *sb, bool windows, bool sandboxed)
{
	const char *const *names = windows ? win_base_names : env_base_names;

	d->section = "from the launching environment, when set:";
	for (size_t i = 0; names[i]; i++)
		rule(d, ENV_PASS, names[i], NULL, NULL, 0);
	rule(d, ENV_PASS_PREFIX, windows ? "PROCESSOR_" : "LC_", NULL, NULL, 0);
	for (size_t i = 0; i < sb->env_passthrough.n; i++)
		if (!xdg_home_name(sb->env_passthrough.v[i].s, sandboxed))
			rule(d, ENV_PASS, sb->env_passthrough.v[i].s, NULL,
			     arena_printf(d->a, "env_passthrough (line %u)",
					  sb->env_passthrough.v[i].loc.line),
			     sb->env_passthrough.v[i].loc.line);
}

/* The XDG base directories env_passthrough names, not passed (xdg_home_name()). */
static void
decide_xdg(struct decider *d, const struct sandbox *sb, bool sandboxed)
{
	for (size_t i = 0; i < sb->env_passthrough.n; i++)
		if (xdg_home_name(sb->env_passthrough.v[i].s, sandboxed))
			rule(d, ENV_UNSET, sb->env_passthrough.v[i].s, NULL,
			     arena_printf(d->a,
					  "env_passthrough (line %u): not passed; inside, the XDG "
					  "base directories follow $HOME",
					  sb->env_passthrough.v[i].loc.line),
			     sb->env_passthrough.v[i].loc.line);
}

/*
 * Java's proxy properties and trust store, for PROXY_URL
 * ("http://127.0.0.1:PORT"): the JDK's HTTP clients ignore HTTPS_PROXY, and
 * its trust store is its own file, not a PEM bundle.
 */
static const char *
java_options(struct arena *a, const char *proxy_url)
{
	const char *port = strrchr(proxy_url, ':');

	port = port ? port + 1 : "";
	return arena_printf(
	    a,
	    "-Djavax.net.ssl.trustStore=" ENV_SCRATCH_MARK "/" ENV_CA_TRUSTSTORE
	    " -Djavax.net.ssl.trustStoreType=JKS -Dhttps.proxyHost=127.0.0.1 -Dhttps.proxyPort=%s"
	    " -Dhttp.proxyHost=127.0.0.1 -Dhttp.proxyPort=%s"
	    " -Dhttp.nonProxyHosts=localhost|127.0.0.1|[::1]",
	    port, port);
}

static void
decide_egress(struct decider *d, const struct sandbox *sb, const struct env_launch *l)
{
	d->section = arena_printf(d->a, "egress_rules (line %u): the relay inside the sandbox",
				  sb->egress_loc.line);
	for (size_t i = 0; env_proxy_names[i]; i++)
		rule(d, ENV_SET, env_proxy_names[i], l->proxy_url, NULL, 0);
	rule(d, ENV_SET, "NO_PROXY", NO_PROXY_VALUE, NULL, 0);
	rule(d, ENV_SET, "no_proxy", NO_PROXY_VALUE, NULL, 0);
	for (size_t i = 0; env_ca_names[i]; i++)
		rule(d, ENV_SET_SCRATCH, env_ca_names[i], "/" ENV_CA_BUNDLE, NULL, 0);
	/* OpenSSL takes a list of hashed directories: the session's (its
	 * HASH.N files in the scratch dir itself), then the system's. */
	rule(d, ENV_SET_TEMPLATE, "SSL_CERT_DIR", ENV_SCRATCH_MARK ":/etc/ssl/certs", NULL, 0);
	/* Java reads neither the proxy variables nor a PEM bundle. */
	rule(d, ENV_SET_TEMPLATE, "JAVA_TOOL_OPTIONS", java_options(d->a, l->proxy_url),
	     "Java: the relay as its proxy, the session's trust store", 0);
}

bool
env_git_exclude(const struct sandbox *sb)
{
	return sb->type != SANDBOX_NONE && !hidden_name(sb, ".git", 4);
}

/*
 * Where .git is shown, git inside ignores what the launch hid (a masked
 * .env, a protected name's placeholder): git status stays clean and
 * git add -A does not trip over a file it cannot read.
 */
static void
decide_git(struct decider *d, const struct sandbox *sb, const struct env_launch *l)
{
	if (!l->linux || !env_git_exclude(sb))
		return;
	d->section = "git inside ignores what the launch hides (core.excludesFile):";
	rule(d, ENV_SET, "GIT_CONFIG_COUNT", "1", NULL, 0);
	rule(d, ENV_SET, "GIT_CONFIG_KEY_0", "core.excludesFile", NULL, 0);
	rule(d, ENV_SET_TEMPLATE, "GIT_CONFIG_VALUE_0", ENV_SCRATCH_MARK "/" ENV_GIT_EXCLUDE, NULL,
	     0);
}

/* What the policy itself sets: git_ssh's helper and socket, aws_sigv4's region. */
static void
decide_policy_vars(struct decider *d, const struct sandbox *sb)
{
	if (sb->n_git_ssh) {
		unsigned line = sb->git_ssh_loc.line;

		rule(
		    d, ENV_SET, "GIT_SSH_COMMAND", ENV_GIT_SSH_COMMAND,
		    arena_printf(d->a, "git_ssh: git's ssh is the broker's helper (line %u)", line),
		    line);
		rule(d, ENV_SET, "GIT_SSH_VARIANT", "ssh",
		     arena_printf(d->a, "git_ssh: OpenSSH-style options (line %u)", line), line);
		rule(d, ENV_SET_SCRATCH, "OMNIBOX_GIT_SSH_SOCKET", "/" ENV_GIT_SSH_SOCKET,
		     arena_printf(d->a, "git_ssh: the broker (line %u)", line), line);
	}
	for (size_t i = 0; i < sb->n_creds; i++) {
		const struct credential *cr = &sb->creds[i];
		unsigned line = cr->loc.line;

		if (cr->type != CRED_AWS_SIGV4)
			continue;
		/* The first aws_sigv4 entry names the region the SDKs default to. */
		rule(d, ENV_SET, "AWS_REGION", cr->region.s,
		     arena_printf(d->a, "aws_sigv4 (line %u)", line), line);
		rule(d, ENV_SET, "AWS_DEFAULT_REGION", cr->region.s,
		     arena_printf(d->a, "aws_sigv4 (line %u)", line), line);
		rule(d, ENV_SET, "AWS_EC2_METADATA_DISABLED", "true",
		     arena_printf(d->a, "aws_sigv4: no instance credentials (line %u)", line),
		     line);
		/* botocore and the AWS CLI read their own bundle, not SSL_CERT_FILE. */
		rule(d, ENV_SET_SCRATCH, "AWS_CA_BUNDLE", "/" ENV_CA_BUNDLE,
		     arena_printf(d->a, "aws_sigv4: the session CA, for the AWS SDKs (line %u)",
				  line),
		     line);
		break;
	}
}

static void
decide_terminal(struct decider *d, const struct terminal *t)
{
	if (!t || !(t->n_env || t->env_unset.n))
		return;
	d->section =
	    arena_printf(d->a, "terminal %s (line %u), applied last:", t->name, t->loc.line);
	for (size_t i = 0; i < t->n_env; i++)
		rule(d, ENV_SET, t->env[i].key, t->env[i].value, NULL, t->loc.line);
	for (size_t i = 0; i < t->env_unset.n; i++)
		rule(d, ENV_UNSET, t->env_unset.v[i].s, NULL, "env_unset",
		     t->env_unset.v[i].loc.line);
}

void
env_decide(struct arena *a, const struct policy *p, const struct env_launch *l,
	   struct env_rules *out)
{
	const struct sandbox *sb = &p->os_env.sandbox;
	struct decider d = {a, out, NULL};
	/* Type none execs the command in place outside Windows: no scratch dir exists. */
	bool scratch = l->windows || sb->type != SANDBOX_NONE;

	bool sandboxed = !l->windows && sb->type != SANDBOX_NONE;

	*out = (struct env_rules){.fold_case = l->windows};
	decide_passes(&d, sb, l->windows, sandboxed);
	d.section = "set by omnibox-run:";
	for (const char *const *n = l->windows ? win_scratch_names : env_scratch_names;
	     scratch && *n; n++)
		rule(&d, ENV_SET_SCRATCH, *n, "", NULL, 0);
	if (l->pwd)
		rule(&d, ENV_SET, "PWD", l->pwd, NULL, 0);
	if (l->home)
		rule(&d, ENV_SET, "HOME", l->home, "the private home (no mount puts it at the home)",
		     0);
	decide_xdg(&d, sb, sandboxed);
	if (!l->windows && sb->n_egress && l->proxy_url && scratch)
		decide_egress(&d, sb, l);
	for (size_t i = 0; i < l->n_extra; i++)
		rule(&d, ENV_SET, l->extra[i].name, l->extra[i].value, l->extra[i].why,
		     l->extra[i].line);
	if (!l->windows && scratch) {
		decide_policy_vars(&d, sb);
		decide_git(&d, sb, l);
	}
	decide_terminal(&d, p->terminal);
}

/* ---- the application ------------------------------------------------------------ */

struct envv {
	struct arena *a;
	char **v;
	size_t n, cap;
	bool fold_case;
};

static void
envv_remove(struct envv *e, const char *name, size_t from)
{
	size_t kept = from;

	for (size_t i = from; i < e->n; i++)
		if (!name_match(e->v[i], name, e->fold_case, false))
			e->v[kept++] = e->v[i];
	e->n = kept;
}

/* NAME=VALUE in place of NAME's first entry (later ones go), or at the end. */
static void
envv_set(struct envv *e, const char *name, const char *value, const char *suffix)
{
	char *entry = arena_printf(e->a, "%s=%s%s", name, value, suffix);

	for (size_t i = 0; i < e->n; i++)
		if (name_match(e->v[i], name, e->fold_case, false)) {
			e->v[i] = entry;
			envv_remove(e, name, i + 1);
			return;
		}
	*ARENA_PUSH(e->a, e->v, e->n, e->cap) = entry;
}

static bool
host_passes(const char *entry, const struct env_rule *rules, size_t n, bool fold_case)
{
	const char *eq = strchr(entry, '=');

	/* No name (Windows' "=C:=C:\dir" per-drive entries) or no value: never passed. */
	if (!eq || eq == entry)
		return false;
	for (size_t i = 0; i < n; i++)
		if ((rules[i].op == ENV_PASS || rules[i].op == ENV_PASS_PREFIX) &&
		    name_match(entry, rules[i].name, fold_case, rules[i].op == ENV_PASS_PREFIX))
			return true;
	return false;
}

/* VALUE with each ENV_SCRATCH_MARK replaced by SCRATCH. */
static const char *
fill_scratch(struct arena *a, const char *value, const char *scratch)
{
	const char *mark;
	const char *out = "";

	while ((mark = strstr(value, ENV_SCRATCH_MARK))) {
		out = arena_printf(a, "%s%.*s%s", out, (int)(mark - value), value, scratch);
		value = mark + strlen(ENV_SCRATCH_MARK);
	}
	return arena_printf(a, "%s%s", out, value);
}

char **
env_apply(struct arena *a, const struct env_rule *rules, size_t n, bool fold_case,
	  char *const *host, const char *scratch)
{
	struct envv e = {.a = a, .fold_case = fold_case};

	for (size_t i = 0; host && host[i]; i++)
		if (host_passes(host[i], rules, n, fold_case))
			*ARENA_PUSH(a, e.v, e.n, e.cap) = arena_strdup(a, host[i]);
	for (size_t i = 0; i < n; i++) {
		const struct env_rule *r = &rules[i];

		if (r->op == ENV_SET)
			envv_set(&e, r->name, r->value, "");
		else if (r->op == ENV_SET_SCRATCH && scratch)
			envv_set(&e, r->name, scratch, r->value);
		else if (r->op == ENV_SET_TEMPLATE && scratch)
			envv_set(&e, r->name, fill_scratch(a, r->value, scratch), "");
		else if (r->op == ENV_UNSET)
			envv_remove(&e, r->name, 0);
	}
	*ARENA_PUSH(a, e.v, e.n, e.cap) = NULL;
	return e.v;
}

/* Is ENTRY among the N of V? */
static bool
listed(const char *const *v, size_t n, const char *entry)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i], entry))
			return true;
	return false;
}

size_t
env_path_keep(struct arena *a, char **env, bool (*keep)(void *arg, const char *entry), void *arg,
	      const char ***dropped)
{
	size_t at = 0, went = 0, n_gone = 0, cap_gone = 0, len, kept = 0;
	const char **gone = NULL;
	const char *p;
	char *out;

	if (dropped)
		*dropped = NULL;
	while (env[at] && !name_match(env[at], "PATH", false, false))
		at++;
	if (!env[at])
		return 0;
	/* "PATH=" and the entries kept: never longer than it was. */
	out = arena_alloc(a, strlen(env[at]) + 1);
	len = 5;
	memcpy(out, "PATH=", len + 1);
	for (p = env[at] + 5;; p++) {
		size_t n = strcspn(p, ":");
		char *entry = arena_strndup(a, p, n);

		if (entry[0] != '/' || keep(arg, entry)) {
			if (kept++)
				out[len++] = ':';
			memcpy(out + len, entry, n);
			len += n;
			out[len] = '\0';
		} else {
			went++;
			if (!listed(gone, n_gone, entry))
				*ARENA_PUSH(a, gone, n_gone, cap_gone) = entry;
		}
		p += n;
		if (!*p)
			break;
	}
	if (!went)
		return 0;
	*ARENA_PUSH(a, gone, n_gone, cap_gone) = NULL;
	if (kept) {
		env[at] = out;
	} else {
		/* Nothing left: no PATH, not an empty one (the directory a lookup starts in). */
		for (; env[at]; at++)
			env[at] = env[at + 1];
	}
	if (dropped)
		*dropped = gone;
	return went;
}

char **
env_compute(struct arena *a, const struct policy *p, const struct env_launch *l, char *const *host,
	    const char *scratch)
{
	struct env_rules r;

	env_decide(a, p, l, &r);
	return env_apply(a, r.v, r.n, r.fold_case, host, scratch);
}
