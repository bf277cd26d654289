/*
 * manifest.c - the strict reader of the Job Object manifest.
 */
#include "manifest.h"

#include "../../compiler/base/textesc.h"
#include "../../emitters/winjob.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct flag_name {
	const char *name;
	uint32_t bit;
};

/*
 * Only these names exist.  The breakaway flags (BREAKAWAY_OK,
 * SILENT_BREAKAWAY_OK) are deliberately absent: a manifest that asks for
 * them is rejected as naming an unknown flag, so no manifest can let a
 * process leave the job.
 */
static const struct flag_name limit_names[] = {
    {"KILL_ON_JOB_CLOSE", WINJOB_LIMIT_KILL_ON_JOB_CLOSE},
    {"DIE_ON_UNHANDLED_EXCEPTION", WINJOB_LIMIT_DIE_ON_UNHANDLED_EXCEPTION},
    {"ACTIVE_PROCESS", WINJOB_LIMIT_ACTIVE_PROCESS},
    {"JOB_MEMORY", WINJOB_LIMIT_JOB_MEMORY},
    {"JOB_TIME", WINJOB_LIMIT_JOB_TIME},
    {NULL, 0},
};

static const struct flag_name ui_names[] = {
    {"DESKTOP", WINJOB_UI_DESKTOP},
    {"DISPLAYSETTINGS", WINJOB_UI_DISPLAYSETTINGS},
    {"EXITWINDOWS", WINJOB_UI_EXITWINDOWS},
    {"GLOBALATOMS", WINJOB_UI_GLOBALATOMS},
    {"HANDLES", WINJOB_UI_HANDLES},
    {"READCLIPBOARD", WINJOB_UI_READCLIPBOARD},
    {"SYSTEMPARAMETERS", WINJOB_UI_SYSTEMPARAMETERS},
    {"WRITECLIPBOARD", WINJOB_UI_WRITECLIPBOARD},
    {NULL, 0},
};

static const struct flag_name cpu_names[] = {
    {"ENABLE", WINJOB_CPU_ENABLE},
    {"HARD_CAP", WINJOB_CPU_HARD_CAP},
    {NULL, 0},
};

static const struct flag_name *const flag_sets[] = {limit_names, ui_names, cpu_names};

enum key {
	K_VERSION,
	K_POLICY,
	K_TERMINAL,
	K_COMMAND,
	K_ARG,
	K_ALLOW_CWD_OVERRIDE,
	K_JOB,
	K_WORKSPACE,
	K_START_IN_SCRATCH,
	K_FORK,
	K_LIMIT_FLAGS,
	K_JOB_MEMORY_LIMIT,
	K_ACTIVE_PROCESS_LIMIT,
	K_PER_JOB_USER_TIME_LIMIT,
	K_CPU_RATE_CONTROL_FLAGS,
	K_CPU_RATE,
	K_UI_RESTRICTIONS,
	K_ENV_PASS,
	K_ENV_PASS_PREFIX,
	K_ENV_SCRATCH,
	K_ENV_SET,
	K_ENV_UNSET,
	K_NOT_ENFORCED,
	K_COUNT
};

static const struct {
	const char *name;
	bool repeats;
} keys[K_COUNT] = {
    [K_VERSION] = {"version", false},
    [K_POLICY] = {"policy", false},
    [K_TERMINAL] = {"terminal", false},
    [K_COMMAND] = {"command", false},
    [K_ARG] = {"arg", true},
    [K_ALLOW_CWD_OVERRIDE] = {"allow_cwd_override", false},
    [K_JOB] = {"job", false},
    [K_WORKSPACE] = {"workspace", false},
    [K_START_IN_SCRATCH] = {"start_in_scratch", false},
    [K_FORK] = {"fork", false},
    [K_LIMIT_FLAGS] = {"limit_flags", false},
    [K_JOB_MEMORY_LIMIT] = {"job_memory_limit", false},
    [K_ACTIVE_PROCESS_LIMIT] = {"active_process_limit", false},
    [K_PER_JOB_USER_TIME_LIMIT] = {"per_job_user_time_limit", false},
    [K_CPU_RATE_CONTROL_FLAGS] = {"cpu_rate_control_flags", false},
    [K_CPU_RATE] = {"cpu_rate", false},
    [K_UI_RESTRICTIONS] = {"ui_restrictions", false},
    [K_ENV_PASS] = {"env_pass", true},
    [K_ENV_PASS_PREFIX] = {"env_pass_prefix", true},
    [K_ENV_SCRATCH] = {"env_scratch", true},
    [K_ENV_SET] = {"env_set", true},
    [K_ENV_UNSET] = {"env_unset", true},
    [K_NOT_ENFORCED] = {"not-enforced", true},
};

struct parser {
	struct manifest *m;
	struct manifest_error *err;
	unsigned line;
	unsigned seen[K_COUNT]; /* the line a key was first seen on */
};

static int fail(struct parser *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * The message, escaped (textesc.h): it quotes the manifest's keys and
 * values, unescaped, and a manifest in a writable root may be the
 * agent's.  Backslashes stay as they are (TEXT_ESC_AGAIN): a value's
 * Windows path reads as written, a control character as \xHH, which is how
 * the manifest itself spells it.
 */
static int
fail(struct parser *ps, const char *fmt, ...)
{
	char msg[sizeof(ps->err->message)];
	va_list ap;

	ps->err->line = ps->line;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	text_escape(ps->err->message, sizeof(ps->err->message), msg, strlen(msg), TEXT_ESC_AGAIN);
	return -1;
}

static int
strs_push(struct parser *ps, struct manifest_strs *l, char *s)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 8;
		char **v = realloc(l->v, cap * sizeof(*v));

		if (!v) {
			free(s);
			return fail(ps, "out of memory");
		}
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = s;
	return 0;
}

/* One environment rule; NAME (malloc'd) is owned from here on. */
static int
env_push(struct parser *ps, enum env_op op, char *name, const char *value)
{
	struct manifest *m = ps->m;

	if (m->n_env == m->cap_env) {
		size_t cap = m->cap_env ? 2 * m->cap_env : 16;
		struct env_rule *v = realloc(m->env, cap * sizeof(*v));

		if (!v) {
			free(name);
			return fail(ps, "out of memory");
		}
		m->env = v;
		m->cap_env = cap;
	}
	m->env[m->n_env++] = (struct env_rule){.op = op, .name = name, .value = value};
	return 0;
}

static void
strs_free(struct manifest_strs *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

void
manifest_free(struct manifest *m)
{
	free(m->policy);
	free(m->terminal);
	free(m->command);
	free(m->workspace);
	strs_free(&m->args);
	for (size_t i = 0; i < m->n_env; i++)
		free((char *)m->env[i].name);
	free(m->env);
	strs_free(&m->not_enforced);
	memset(m, 0, sizeof(*m));
}

/* The LEN bytes of an escaped value, unescaped into a new string (in *OUT). */
static int
unescape(struct parser *ps, const char *s, size_t len, char **out)
{
	char *v = malloc(len + 1), *w = v;

	if (!v)
		return fail(ps, "out of memory");
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (ch < 0x20 || ch == 0x7f) {
			free(v);
			return fail(ps, "control character 0x%02x in a value (write it as \\x%02x)",
				    ch, ch);
		}
		if (ch != '\\') {
			*w++ = (char)ch;
			continue;
		}
		if (++i == len) {
			free(v);
			return fail(ps, "a value ends in a lone backslash (write \\\\)");
		}
		switch (s[i]) {
		case '\\':
			*w++ = '\\';
			break;
		case 'n':
			*w++ = '\n';
			break;
		case 'r':
			*w++ = '\r';
			break;
		case 't':
			*w++ = '\t';
			break;
		case 'x': {
			int hi = i + 1 < len ? text_hex_digit((unsigned char)s[i + 1]) : -1;
			int lo = i + 2 < len ? text_hex_digit((unsigned char)s[i + 2]) : -1;

			if (hi < 0 || lo < 0) {
				free(v);
				return fail(ps, "\\x needs two hex digits");
			}
			if (hi == 0 && lo == 0) {
				free(v);
				return fail(ps, "\\x00: a value cannot hold a NUL character");
			}
			*w++ = (char)(hi * 16 + lo);
			i += 2;
			break;
		}
		default:
			free(v);
			return fail(ps, "unknown escape '\\%c' (known: \\\\ \\n \\r \\t \\xHH)",
				    s[i]);
		}
	}
	*w = '\0';
	*out = v;
	return 0;
}

/* A decimal number in [MIN, MAX]: digits only, no sign, no leading zero. */
static int
parse_number(struct parser *ps, const char *key, const char *v, uint64_t min, uint64_t max,
	     uint64_t *out)
{
	uint64_t n = 0;
	size_t i;

	if (!*v)
		return fail(ps, "%s needs a number", key);
	if (strspn(v, "0123456789") != strlen(v))
		return fail(ps, "%s: '%s' is not a decimal number", key, v);
	if (v[0] == '0' && v[1])
		return fail(ps, "%s: '%s' has a leading zero", key, v);
	for (i = 0; v[i]; i++) {
		unsigned digit;

		digit = (unsigned)(v[i] - '0');
		if (n > (UINT64_MAX - digit) / 10)
			return fail(ps, "%s: %s is too large", key, v);
		n = n * 10 + digit;
	}
	if (n < min || n > max)
		return fail(ps, "%s must be between %llu and %llu, got %s", key,
			    (unsigned long long)min, (unsigned long long)max, v);
	*out = n;
	return 0;
}

/* "A|B|C", each a name of SET, none twice. */
static int
parse_flags(struct parser *ps, const char *key, enum manifest_flag_set set, const char *v,
	    uint32_t *out)
{
	const struct flag_name *names = flag_sets[set];
	uint32_t bits = 0;
	const char *p = v;

	if (!*v)
		return fail(ps, "%s needs at least one flag", key);
	for (;;) {
		const char *end = strchr(p, '|');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		size_t k;

		for (k = 0; names[k].name; k++)
			if (strlen(names[k].name) == n && !memcmp(names[k].name, p, n))
				break;
		if (!names[k].name)
			return fail(ps, "%s: unknown flag '%.*s'", key, (int)n, p);
		if (bits & names[k].bit)
			return fail(ps, "%s: flag %s given twice", key, names[k].name);
		bits |= names[k].bit;
		if (!end)
			break;
		p = end + 1;
	}
	*out = bits;
	return 0;
}

static int
parse_bool(struct parser *ps, const char *key, const char *v, bool *out)
{
	if (!strcmp(v, "true"))
		*out = true;
	else if (!strcmp(v, "false"))
		*out = false;
	else
		return fail(ps, "%s must be true or false, got '%s'", key, v);
	return 0;
}

static bool
workspace_ok(const char *s)
{
	static const char *const bases[] = {"{LAUNCH}", "{HOME}", NULL};

	if (s[0] == '/')
		return true;
	for (size_t i = 0; bases[i]; i++) {
		size_t n = strlen(bases[i]);

		if (!strncmp(s, bases[i], n) && (s[n] == '\0' || (s[n] == '/' && s[n + 1])))
			return true;
	}
	return false;
}

/* One `key = value` line; V is the unescaped value, owned from here on. */
static int
apply(struct parser *ps, enum key k, char *v)
{
	struct manifest *m = ps->m;
	const char *name = keys[k].name;
	uint64_t n;
	int rc = 0;

	switch (k) {
	case K_VERSION:
		if (strcmp(v, "1"))
			rc = fail(ps,
				  "unsupported manifest version '%s' (this omnibox-run.exe reads "
				  "version %d)",
				  v, WINJOB_VERSION);
		break;
	case K_POLICY:
		m->policy = v;
		return 0;
	case K_TERMINAL:
		m->terminal = v;
		return 0;
	case K_COMMAND:
		if (!*v) {
			rc = fail(ps, "command is empty");
			break;
		}
		m->command = v;
		return 0;
	case K_ARG:
		if (!ps->seen[K_COMMAND])
			rc = fail(ps, "arg before command");
		else
			return strs_push(ps, &m->args, v);
		break;
	case K_ALLOW_CWD_OVERRIDE:
		if (!ps->seen[K_TERMINAL])
			rc = fail(ps, "allow_cwd_override before terminal");
		else
			rc = parse_bool(ps, name, v, &m->allow_cwd_override);
		break;
	case K_JOB:
		if (!strcmp(v, "create"))
			m->job = true;
		else if (!strcmp(v, "none"))
			m->job = false;
		else
			rc = fail(ps, "job must be create or none, got '%s'", v);
		break;
	case K_WORKSPACE:
		if (workspace_ok(v)) {
			m->workspace = v;
			return 0;
		}
		rc = fail(ps, "workspace must start with {LAUNCH}, {HOME} or /, got '%s'", v);
		break;
	case K_START_IN_SCRATCH:
		rc = parse_bool(ps, name, v, &m->start_in_scratch);
		break;
	case K_FORK:
		rc = parse_bool(ps, name, v, &m->fork);
		break;
	case K_LIMIT_FLAGS:
		rc = parse_flags(ps, name, MANIFEST_LIMIT_FLAGS, v, &m->limit_flags);
		break;
	case K_UI_RESTRICTIONS:
		rc = parse_flags(ps, name, MANIFEST_UI_RESTRICTIONS, v, &m->ui_restrictions);
		break;
	case K_CPU_RATE_CONTROL_FLAGS:
		rc = parse_flags(ps, name, MANIFEST_CPU_FLAGS, v, &m->cpu_rate_control_flags);
		break;
	case K_JOB_MEMORY_LIMIT:
		if (!(rc = parse_number(ps, name, v, 1, UINT64_MAX, &n)))
			m->job_memory_limit = n;
		break;
	case K_ACTIVE_PROCESS_LIMIT:
		if (!(rc = parse_number(ps, name, v, 1, UINT32_MAX, &n)))
			m->active_process_limit = (uint32_t)n;
		break;
	case K_PER_JOB_USER_TIME_LIMIT:
		/* A LARGE_INTEGER: signed. */
		if (!(rc = parse_number(ps, name, v, 1, INT64_MAX, &n)))
			m->per_job_user_time_limit = n;
		break;
	case K_CPU_RATE:
		if (!(rc = parse_number(ps, name, v, 1, WINJOB_CPU_RATE_MAX, &n)))
			m->cpu_rate = (uint32_t)n;
		break;
	case K_ENV_PASS:
	case K_ENV_PASS_PREFIX:
	case K_ENV_SCRATCH:
	case K_ENV_UNSET:
		if (!env_name_ok(v)) {
			rc = fail(ps, "%s: '%s' is not a variable name ([A-Za-z_][A-Za-z0-9_]*)",
				  name, v);
			break;
		}
		return env_push(ps,
				k == K_ENV_PASS		 ? ENV_PASS
				: k == K_ENV_PASS_PREFIX ? ENV_PASS_PREFIX
				: k == K_ENV_SCRATCH	 ? ENV_SET_SCRATCH
							 : ENV_UNSET,
				v, k == K_ENV_SCRATCH ? "" : NULL);
	case K_ENV_SET: {
		char *eq = strchr(v, '=');

		/* Windows keeps per-drive directories in "=C:"-style names; none may be set. */
		if (v[0] == '=' || !eq) {
			rc = fail(ps, "env_set needs NAME=VALUE, got '%s'", v);
			break;
		}
		*eq = '\0';
		/* A name as the policy's env keys have them (validate.c asks the same). */
		if (!env_name_ok(v)) {
			rc = fail(
			    ps, "env_set: '%s' is not a variable name ([A-Za-z_][A-Za-z0-9_]*)", v);
			break;
		}
		return env_push(ps, ENV_SET, v, eq + 1);
	}
	case K_NOT_ENFORCED:
		return strs_push(ps, &m->not_enforced, v);
	case K_COUNT:
		break;
	}
	free(v);
	return rc;
}

/* The rules that tie keys together, checked once the whole file is read. */
static int
check_whole(struct parser *ps)
{
	struct manifest *m = ps->m;
	static const struct {
		enum key key;
		uint32_t flag;
		const char *flag_name;
	} limits[] = {
	    {K_ACTIVE_PROCESS_LIMIT, WINJOB_LIMIT_ACTIVE_PROCESS, "ACTIVE_PROCESS"},
	    {K_JOB_MEMORY_LIMIT, WINJOB_LIMIT_JOB_MEMORY, "JOB_MEMORY"},
	    {K_PER_JOB_USER_TIME_LIMIT, WINJOB_LIMIT_JOB_TIME, "JOB_TIME"},
	};
	static const enum key required[] = {K_VERSION, K_JOB, K_WORKSPACE, K_START_IN_SCRATCH};
	static const enum key job_only[] = {K_LIMIT_FLAGS,
					    K_JOB_MEMORY_LIMIT,
					    K_ACTIVE_PROCESS_LIMIT,
					    K_PER_JOB_USER_TIME_LIMIT,
					    K_CPU_RATE_CONTROL_FLAGS,
					    K_CPU_RATE,
					    K_UI_RESTRICTIONS};

	ps->line = 0;
	for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++)
		if (!ps->seen[required[i]])
			return fail(ps, "missing key '%s'", keys[required[i]].name);
	if (!m->job) {
		for (size_t i = 0; i < sizeof(job_only) / sizeof(job_only[0]); i++)
			if (ps->seen[job_only[i]]) {
				ps->line = ps->seen[job_only[i]];
				return fail(ps, "%s with job = none: there is no job to limit",
					    keys[job_only[i]].name);
			}
		return 0;
	}
	if (!ps->seen[K_LIMIT_FLAGS])
		return fail(ps, "missing key 'limit_flags'");
	if (!ps->seen[K_UI_RESTRICTIONS])
		return fail(ps, "missing key 'ui_restrictions'");
	ps->line = ps->seen[K_LIMIT_FLAGS];
	/* Without it the tree would outlive omnibox-run.exe: never run that way. */
	if (!(m->limit_flags & WINJOB_LIMIT_KILL_ON_JOB_CLOSE))
		return fail(ps, "limit_flags must include KILL_ON_JOB_CLOSE");
	for (size_t i = 0; i < sizeof(limits) / sizeof(limits[0]); i++) {
		bool has_flag = m->limit_flags & limits[i].flag;

		if (has_flag && !ps->seen[limits[i].key])
			return fail(ps, "limit_flags has %s but %s is missing", limits[i].flag_name,
				    keys[limits[i].key].name);
		if (!has_flag && ps->seen[limits[i].key]) {
			ps->line = ps->seen[limits[i].key];
			return fail(ps, "%s without %s in limit_flags, which would ignore it",
				    keys[limits[i].key].name, limits[i].flag_name);
		}
	}
	if (ps->seen[K_CPU_RATE_CONTROL_FLAGS] != 0 && !ps->seen[K_CPU_RATE]) {
		ps->line = ps->seen[K_CPU_RATE_CONTROL_FLAGS];
		return fail(ps, "cpu_rate_control_flags without cpu_rate");
	}
	if (ps->seen[K_CPU_RATE] &&
	    m->cpu_rate_control_flags != (WINJOB_CPU_ENABLE | WINJOB_CPU_HARD_CAP)) {
		ps->line = ps->seen[K_CPU_RATE];
		return fail(ps, "cpu_rate needs cpu_rate_control_flags = ENABLE|HARD_CAP");
	}
	return 0;
}

static int
parse_line(struct parser *ps, const char *s, size_t len)
{
	const char *eq;
	size_t klen, vstart;
	enum key k;
	char *v = NULL;

	if (len == 0 || s[0] == '#')
		return 0;
	eq = memchr(s, '=', len);
	if (!eq || eq == s || eq[-1] != ' ')
		return fail(ps, "expected 'key = value'");
	klen = (size_t)(eq - s) - 1;
	vstart = (size_t)(eq - s) + 1;
	if (vstart < len) {
		if (s[vstart] != ' ')
			return fail(ps, "expected 'key = value'");
		vstart++;
	}
	for (k = 0; k < K_COUNT; k++)
		if (strlen(keys[k].name) == klen && !memcmp(keys[k].name, s, klen))
			break;
	if (k == K_COUNT)
		return fail(ps, "unknown key '%.*s'", (int)klen, s);
	if (k != K_VERSION && !ps->seen[K_VERSION])
		return fail(ps, "the first key must be 'version'");
	if (ps->seen[k] && !keys[k].repeats)
		return fail(ps, "%s given twice (first on line %u)", keys[k].name, ps->seen[k]);
	if (!ps->seen[k])
		ps->seen[k] = ps->line;
	if (unescape(ps, s + vstart, len - vstart, &v) < 0)
		return -1;
	return apply(ps, k, v);
}

int
manifest_parse(const char *text, size_t len, struct manifest *m, struct manifest_error *err)
{
	struct parser ps = {.m = m, .err = err, .line = 0};
	size_t i = 0;

	memset(m, 0, sizeof(*m));
	memset(err, 0, sizeof(*err));
	if (memchr(text, '\0', len)) {
		fail(&ps, "the manifest holds a NUL byte: not a text file");
		return -1;
	}
	while (i < len) {
		const char *nl = memchr(text + i, '\n', len - i);
		size_t end = nl ? (size_t)(nl - text) : len, n = end - i;

		ps.line++;
		/* A checkout with CRLF line ends is the same manifest. */
		if (n && text[i + n - 1] == '\r')
			n--;
		if (parse_line(&ps, text + i, n) < 0) {
			manifest_free(m);
			return -1;
		}
		i = end + 1;
	}
	if (check_whole(&ps) < 0) {
		manifest_free(m);
		return -1;
	}
	return 0;
}

char *
manifest_flags_text(enum manifest_flag_set set, uint32_t bits, char *buf, size_t cap)
{
	const struct flag_name *names = flag_sets[set];
	size_t n = 0;

	if (!cap)
		return buf;
	buf[0] = '\0';
	for (size_t i = 0; names[i].name; i++) {
		if (!(bits & names[i].bit))
			continue;
		n += (size_t)snprintf(buf + n, n < cap ? cap - n : 0, "%s%s", n ? "|" : "",
				      names[i].name);
		bits &= ~names[i].bit;
		if (n >= cap)
			return buf;
	}
	if (bits)
		snprintf(buf + n, cap - n, "%s0x%x", n ? "|" : "", (unsigned)bits);
	return buf;
}
