/*
 * agent.c - the agent's command line, environment and start (agent.h).
 */
#include "agent.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "../../compiler/base/arena.h"
#include "../../compiler/decide/env.h"
#include "winquote.h"

static int
strv_push(struct strv *l, wchar_t *s, struct win_err *e)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 32;
		wchar_t **v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return win_fail_oom(e);
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = s;
	return 0;
}

void
strv_free(struct strv *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* M's terminal command and its args, as UTF-16, into ARGV. */
static int
manifest_argv(const struct manifest *m, struct strv *argv, struct win_err *e)
{
	wchar_t *w;

	if (win_wide(m->command, "command", &w, e) < 0 || strv_push(argv, w, e) < 0)
		return -1;
	for (size_t i = 0; i < m->args.n; i++)
		if (win_wide(m->args.v[i], "arg", &w, e) < 0 || strv_push(argv, w, e) < 0)
			return -1;
	return 0;
}

int
agent_cmdline(const struct manifest *m, wchar_t *const *command, size_t n, wchar_t **out,
	      struct win_err *e)
{
	struct strv argv = {0};
	const wchar_t *const *v = (const wchar_t *const *)command;
	size_t len;
	int rc = -1;

	if (!n) {
		if (manifest_argv(m, &argv, e) < 0)
			goto out;
		v = (const wchar_t *const *)argv.v;
		n = argv.n;
	}
	if (winquote_build(v, n, out) < 0) {
		win_fail(e, "the program name cannot hold a double quote");
		goto out;
	}
	len = wcslen(*out);
	if (len >= AGENT_CMDLINE_MAX) {
		free(*out);
		win_fail(e, "the command line is %llu characters long; Windows takes at most %d",
			 (unsigned long long)len, AGENT_CMDLINE_MAX - 1);
		goto out;
	}
	rc = 0;
out:
	strv_free(&argv);
	return rc;
}

static int
env_compare(const void *a, const void *b)
{
	const wchar_t *x = *(wchar_t *const *)a, *y = *(wchar_t *const *)b;

	return CompareStringOrdinal(x, (int)wcscspn(x, L"="), y, (int)wcscspn(y, L"="), TRUE) - 2;
}

/* The host's environment block as UTF-16 strings (HOSTW) and UTF-8 ones (HOST8, from A). */
static int
host_env(struct arena *a, const wchar_t *host, const wchar_t ***hostw, char ***host8, size_t *n,
	 struct win_err *e)
{
	*n = 0;
	for (const wchar_t *s = host; *s; s += wcslen(s) + 1)
		(*n)++;
	if (!(*hostw = win_calloc(*n + 1, sizeof(**hostw), e)))
		return -1;
	*host8 = arena_alloc(a, (*n + 1) * sizeof(**host8));
	*n = 0;
	for (const wchar_t *s = host; *s; s += wcslen(s) + 1) {
		char *u = win_utf8(s);

		if (!u)
			return win_fail_oom(e);
		(*hostw)[*n] = s;
		(*host8)[(*n)++] = arena_strdup(a, u);
		free(u);
	}
	return 0;
}

/* OUT (env_apply()'s) into ENV, host entries with the host's own UTF-16. */
static int
env_wide(char **out, const wchar_t **hostw, char **host8, size_t n, struct strv *env,
	 struct win_err *e)
{
	for (size_t i = 0; out[i]; i++) {
		size_t k = 0;
		wchar_t *w;

		while (k < n && strcmp(host8[k], out[i]))
			k++;
		if (k < n) {
			if (!(w = _wcsdup(hostw[k])))
				return win_fail_oom(e);
		} else if (win_wide(out[i], "environment", &w, e) < 0) {
			return -1;
		}
		if (strv_push(env, w, e) < 0) {
			free(w);
			return -1;
		}
	}
	return 0;
}

int
agent_env(const struct manifest *m, const wchar_t *scratch, struct strv *env, struct win_err *e)
{
	wchar_t *host = GetEnvironmentStringsW();
	const wchar_t **hostw = NULL;
	char **host8, **out, *scratch8 = NULL;
	size_t n = 0;
	struct arena *a;
	int rc = -1;

	if (!host)
		return win_fail(e, "GetEnvironmentStrings: %s", win_strerror(GetLastError()));
	a = arena_new();
	if (scratch && !(scratch8 = win_utf8(scratch))) {
		win_fail_oom(e);
		goto out;
	}
	if (host_env(a, host, &hostw, &host8, &n, e) < 0)
		goto out;
	out = env_apply(a, m->env, m->n_env, true, host8, scratch8 ? scratch8 : "{SCRATCH}");
	if (env_wide(out, hostw, host8, n, env, e) < 0)
		goto out;
	/* CreateProcess wants the block sorted by name, without regard to case. */
	qsort(env->v, env->n, sizeof(*env->v), env_compare);
	rc = 0;
out:
	free(hostw);
	free(scratch8);
	arena_free(a);
	FreeEnvironmentStringsW(host);
	return rc;
}

int
agent_env_block(const struct strv *env, wchar_t **out, struct win_err *e)
{
	size_t len = 1, at = 0;
	wchar_t *block;

	for (size_t i = 0; i < env->n; i++)
		len += wcslen(env->v[i]) + 1;
	if (!(block = win_calloc(len + 1, sizeof(*block), e)))
		return -1;
	for (size_t i = 0; i < env->n; i++) {
		wcscpy(block + at, env->v[i]);
		at += wcslen(env->v[i]) + 1;
	}
	block[at] = L'\0';
	*out = block;
	return 0;
}

/*
 * The agent inherits exactly the three standard handles, nothing else this
 * process holds (the job handle above all).
 */
struct inherit {
	LPPROC_THREAD_ATTRIBUTE_LIST attrs;
	HANDLE handles[3];
	size_t n;
};

static int
inherit_std_handles(struct inherit *in, STARTUPINFOEXW *si, struct win_err *e)
{
	static const DWORD which[] = {STD_INPUT_HANDLE, STD_OUTPUT_HANDLE, STD_ERROR_HANDLE};
	HANDLE std[3];
	SIZE_T size = 0;

	memset(in, 0, sizeof(*in));
	for (size_t i = 0; i < 3; i++) {
		HANDLE h = GetStdHandle(which[i]);
		bool dup = false;

		std[i] = h;
		if (!h || h == INVALID_HANDLE_VALUE)
			continue;
		for (size_t k = 0; k < in->n; k++)
			dup |= in->handles[k] == h;
		if (dup || !SetHandleInformation(h, HANDLE_FLAG_INHERIT, HANDLE_FLAG_INHERIT))
			continue;
		in->handles[in->n++] = h;
	}
	si->StartupInfo.dwFlags |= STARTF_USESTDHANDLES;
	si->StartupInfo.hStdInput = std[0];
	si->StartupInfo.hStdOutput = std[1];
	si->StartupInfo.hStdError = std[2];
	if (!in->n)
		return 0;
	InitializeProcThreadAttributeList(NULL, 1, 0, &size);
	if (!(in->attrs = win_calloc(1, size, e)))
		return -1;
	if (!InitializeProcThreadAttributeList(in->attrs, 1, 0, &size) ||
	    !UpdateProcThreadAttribute(in->attrs, 0, PROC_THREAD_ATTRIBUTE_HANDLE_LIST, in->handles,
				       in->n * sizeof(HANDLE), NULL, NULL))
		return win_fail(e, "the handle list of the agent: %s",
				win_strerror(GetLastError()));
	si->lpAttributeList = in->attrs;
	return 0;
}

static void
inherit_free(struct inherit *in)
{
	if (in->attrs) {
		DeleteProcThreadAttributeList(in->attrs);
		free(in->attrs);
		in->attrs = NULL;
	}
}

/* Into the job, checked, resumed: nothing of the agent runs before it is inside. */
static int
assign(HANDLE job, PROCESS_INFORMATION *pi, struct win_err *e)
{
	const wchar_t *hook = _wgetenv(AGENT_TEST_FAIL_ASSIGN);
	HANDLE target = hook && !wcscmp(hook, L"1") ? NULL : job;
	BOOL inside = FALSE;

	if (!AssignProcessToJobObject(target, pi->hProcess))
		return win_fail(e,
				"AssignProcessToJobObject: %s; the agent was stopped before it ran",
				win_strerror(GetLastError()));
	/* Trust, but verify: resume only what is provably inside. */
	if (!IsProcessInJob(pi->hProcess, job, &inside) || !inside)
		return win_fail(e,
				"the agent is not in its job after the assignment; it was stopped "
				"before it ran");
	if (ResumeThread(pi->hThread) == (DWORD)-1)
		return win_fail(e, "ResumeThread: %s", win_strerror(GetLastError()));
	return 0;
}

int
agent_start(wchar_t *cmdline, wchar_t *envblock, const wchar_t *cwd, HANDLE job,
	    PROCESS_INFORMATION *pi, struct win_err *e)
{
	STARTUPINFOEXW si;
	struct inherit in;
	DWORD flags = CREATE_UNICODE_ENVIRONMENT | EXTENDED_STARTUPINFO_PRESENT;

	memset(&si, 0, sizeof(si));
	si.StartupInfo.cb = sizeof(si);
	if (inherit_std_handles(&in, &si, e) < 0) {
		inherit_free(&in);
		return -1;
	}
	/* Not one instruction of the agent runs before it is in the job. */
	if (job)
		flags |= CREATE_SUSPENDED;
	if (!CreateProcessW(NULL, cmdline, NULL, NULL, in.n > 0, flags, envblock, cwd,
			    &si.StartupInfo, pi)) {
		DWORD err = GetLastError();
		char *c = win_shown(cmdline);

		memset(pi, 0, sizeof(*pi));
		inherit_free(&in);
		win_fail(e, "cannot start %s: %s", c, win_strerror(err));
		win_shown_free(c);
		return -1;
	}
	inherit_free(&in);
	if (job && assign(job, pi, e) < 0)
		return -1;
	CloseHandle(pi->hThread);
	pi->hThread = NULL;
	return 0;
}
