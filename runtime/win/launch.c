/*
 * launch.c - the manifest, the refusals, the workspace and --dry-run of a
 * launch (launch.h).
 */
#include "launch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "../../compiler/base/arena.h"
#include "../../compiler/decide/refuse.h"
#include "../../compiler/decide/workspace.h"
#include "scratch.h"

#define MANIFEST_MAX (1u << 20)

static int
read_file(HANDLE f, const char *path, char **text, DWORD *got, struct win_err *e)
{
	LARGE_INTEGER size;

	if (!GetFileSizeEx(f, &size))
		return win_fail(e, "%s: %s", path, win_strerror(GetLastError()));
	if (size.QuadPart > MANIFEST_MAX)
		return win_fail(e, "%s: larger than %u bytes: not a manifest", path, MANIFEST_MAX);
	if (!(*text = win_calloc((size_t)size.QuadPart + 1, 1, e)))
		return -1;
	*got = 0;
	if (size.QuadPart &&
	    (!ReadFile(f, *text, (DWORD)size.QuadPart, got, NULL) || *got != (DWORD)size.QuadPart))
		return win_fail(e, "%s: %s", path, win_strerror(GetLastError()));
	return 0;
}

int
launch_read_manifest(struct launch *l, struct win_err *e)
{
	HANDLE f = CreateFileW(l->manifest_path, GENERIC_READ, FILE_SHARE_READ, NULL, OPEN_EXISTING,
			       FILE_ATTRIBUTE_NORMAL, NULL);
	char *path = win_utf8(l->manifest_path), *text = NULL;
	struct manifest_error err;
	DWORD got = 0;
	int rc = -1;

	if (!path)
		rc = win_fail_oom(e);
	else if (f == INVALID_HANDLE_VALUE)
		rc = win_fail(e, "%s: %s", path, win_strerror(GetLastError()));
	else if (read_file(f, path, &text, &got, e) < 0)
		rc = -1;
	else if (manifest_parse(text, got, &l->m, &err) < 0)
		rc = err.line ? win_fail(e, "%s:%u: %s", path, err.line, err.message)
			      : win_fail(e, "%s: %s", path, err.message);
	else
		rc = 0;
	if (f != INVALID_HANDLE_VALUE)
		CloseHandle(f);
	free(text);
	free(path);
	return rc;
}

int
launch_refuse(const struct launch *l, struct win_err *e)
{
	/* The manifest is the policy as compiled for Windows: what refuse_launch() reads of it. */
	struct policy p = {.source = l->m.policy};
	struct arena *a = arena_new();
	struct loc loc;
	const char *why;
	int rc = 0;

	p.os_env.fork.value = l->m.fork;
	p.os_env.sandbox.type = l->m.job ? SANDBOX_WINDOWS_JOBOBJECT : SANDBOX_NONE;
	why = refuse_launch(a, &p, SANDBOX_WINDOWS_JOBOBJECT, "windows", &loc);
	if (why)
		rc = win_fail(e, "%s", why);
	arena_free(a);
	return rc;
}

static wchar_t *
env_value(const wchar_t *name)
{
	DWORD n = GetEnvironmentVariableW(name, NULL, 0);
	wchar_t *v;

	if (!n || !(v = calloc(n, sizeof(*v))))
		return NULL;
	if (GetEnvironmentVariableW(name, v, n) != n - 1) {
		free(v);
		return NULL;
	}
	return v;
}

/* PATH made absolute (GetFullPathName) in *OUT (malloc'd).  Returns 0, or the system's error. */
static DWORD
full_path(const wchar_t *path, wchar_t **out)
{
	DWORD n = GetFullPathNameW(path, 0, NULL, NULL), err;

	if (!n)
		return GetLastError();
	if (!(*out = calloc(n + 1, sizeof(**out))))
		return ERROR_NOT_ENOUGH_MEMORY;
	if (GetFullPathNameW(path, n + 1, *out, NULL))
		return 0;
	err = GetLastError();
	free(*out);
	*out = NULL;
	return err;
}

/*
 * The manifest's workspace on this machine: {LAUNCH} is the current
 * directory, {HOME} the user profile, "/x" the root of the current drive.
 */
static int
own_workspace(const char *w, wchar_t **out, struct win_err *e)
{
	const char *rest = w;
	wchar_t *base = NULL, *rel = NULL, *joined = NULL;
	DWORD err;
	int rc = -1;

	if (!strncmp(w, "{LAUNCH}", 8)) {
		if ((err = full_path(L".", &base))) {
			win_fail(e, "the current directory: %s", win_strerror(err));
			goto out;
		}
		rest = w + 8;
	} else if (!strncmp(w, "{HOME}", 6)) {
		if (!(base = env_value(L"USERPROFILE"))) {
			win_fail(e, "the workspace is under {HOME}, but USERPROFILE is not set");
			goto out;
		}
		rest = w + 6;
	} else if (!(base = _wcsdup(L""))) {
		win_fail_oom(e);
		goto out;
	}
	if (win_wide(rest, "workspace", &rel, e) < 0)
		goto out;
	for (wchar_t *p = rel; *p; p++)
		if (*p == L'/')
			*p = L'\\';
	if (!(joined = win_calloc(wcslen(base) + wcslen(rel) + 1, sizeof(*joined), e)))
		goto out;
	wcscpy(joined, base);
	wcscat(joined, rel);
	if ((err = full_path(joined, out))) {
		win_fail(e, "the workspace %s: %s", w, win_strerror(err));
		goto out;
	}
	rc = 0;
out:
	free(base);
	free(rel);
	free(joined);
	return rc;
}

/*
 * PATH followed through its links, as the file system spells it (UTF-8,
 * from A), or NULL when it cannot be opened.  "\\?\C:\x" is "C:\x".
 */
static const char *
canonical(struct arena *a, const wchar_t *path)
{
	HANDLE h = CreateFileW(path, FILE_READ_ATTRIBUTES,
			       FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
			       OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS, NULL);
	wchar_t *buf = NULL, *p;
	DWORD n, got = 0;
	char *s, *r = NULL;

	if (h == INVALID_HANDLE_VALUE)
		return NULL;
	n = GetFinalPathNameByHandleW(h, NULL, 0, FILE_NAME_NORMALIZED | VOLUME_NAME_DOS);
	if (n && (buf = calloc(n + 1, sizeof(*buf))))
		got = GetFinalPathNameByHandleW(h, buf, n + 1,
						FILE_NAME_NORMALIZED | VOLUME_NAME_DOS);
	if (got && got <= n) {
		p = buf;
		if (!wcsncmp(p, L"\\\\?\\UNC\\", 8)) {
			p += 6;
			p[0] = p[1] = L'\\';
		} else if (!wcsncmp(p, L"\\\\?\\", 4)) {
			p += 4;
		}
		if ((s = win_utf8(p))) {
			r = arena_strdup(a, s);
			free(s);
		}
	}
	free(buf);
	CloseHandle(h);
	return r;
}

/* WS as UTF-8 from A, or NULL when memory runs out. */
static const char *
arena_utf8(struct arena *a, const wchar_t *ws)
{
	char *s = win_utf8(ws), *r;

	if (!s)
		return NULL;
	r = arena_strdup(a, s);
	free(s);
	return r;
}

/* The request to workspace_decide(): OWN and --cwd made absolute, and canonical. */
static int
workspace_request(struct arena *a, const struct launch *l, const wchar_t *own,
		  struct workspace_request *rq, struct win_err *e)
{
	wchar_t *cwd = NULL, *home = env_value(L"USERPROFILE");
	DWORD err;

	memset(rq, 0, sizeof(*rq));
	rq->windows = true;
	rq->terminal = l->m.terminal;
	rq->allow_cwd_override = l->m.allow_cwd_override;
	rq->own = arena_utf8(a, own);
	rq->own_canon = canonical(a, own);
	rq->home = home ? canonical(a, home) : NULL;
	free(home);
	if (l->cwd_option) {
		/* Relative to the launch directory, this process's current one. */
		if ((err = full_path(l->cwd_option, &cwd))) {
			char *c = win_shown(l->cwd_option);

			win_fail(e, "--cwd %s: %s", c, win_strerror(err));
			win_shown_free(c);
			return -1;
		}
		rq->cwd_given = arena_utf8(a, l->cwd_option);
		rq->cwd = arena_utf8(a, cwd);
		rq->cwd_canon = canonical(a, cwd);
		free(cwd);
		if (!rq->cwd_given || !rq->cwd)
			return win_fail_oom(e);
	}
	return rq->own ? 0 : win_fail_oom(e);
}

int
launch_workspace(struct launch *l, struct win_err *e)
{
	struct arena *a = arena_new();
	struct workspace_request rq;
	struct workspace_verdict v;
	wchar_t *own = NULL;
	int rc = -1;

	if (own_workspace(l->m.workspace, &own, e) < 0 || workspace_request(a, l, own, &rq, e) < 0)
		goto out;
	v = workspace_decide(a, &rq);
	if (!v.path)
		win_fail(e, "%s", v.why);
	else
		rc = win_wide(v.path, "workspace", &l->workspace, e);
out:
	free(own);
	arena_free(a);
	return rc;
}

int
launch_check_directory(const wchar_t *path, const char *what, struct win_err *e)
{
	DWORD a = GetFileAttributesW(path);

	if (a == INVALID_FILE_ATTRIBUTES || !(a & FILE_ATTRIBUTE_DIRECTORY)) {
		DWORD err = GetLastError();
		char *p = win_shown(path);

		win_fail(e, "the %s %s: %s", what, p,
			 a == INVALID_FILE_ATTRIBUTES ? win_strerror(err) : "not a directory");
		win_shown_free(p);
		return -1;
	}
	return 0;
}

int
launch_dry_run(const struct launch *l, const struct job_settings *s, const struct strv *env,
	       struct win_err *e)
{
	printf("# omnibox-run.exe --dry-run: nothing was created or started\n");
	win_report(stdout, "policy = ", "%s%s%s", l->m.policy ? l->m.policy : "(not named)",
		   l->m.terminal ? ", terminal " : "", l->m.terminal ? l->m.terminal : "");
	printf("job = %s\n", l->m.job ? "create" : "none");
	if (l->m.job)
		job_settings_print(s);
	printf("CreateProcessW dwCreationFlags = %s\n",
	       l->m.job ? "CREATE_SUSPENDED|CREATE_UNICODE_ENVIRONMENT|EXTENDED_STARTUPINFO_PRESENT"
			: "CREATE_UNICODE_ENVIRONMENT|EXTENDED_STARTUPINFO_PRESENT");
	win_report_wide(stdout, "CreateProcessW lpCommandLine = ", l->cmdline);
	win_report_wide(stdout, "CreateProcessW lpCurrentDirectory = ", l->cwd);
	if (l->m.start_in_scratch)
		win_report(stdout, "", "(the scratch dir, created at launch; the workspace is %s)",
			   l->m.workspace);
	for (size_t i = 0; i < env->n; i++) {
		size_t n = wcscspn(env->v[i], L"=");
		wchar_t *name = win_calloc(n + 1, sizeof(*name), e);

		if (!name)
			return -1;
		wcsncpy(name, env->v[i], n);
		win_report_wide(stdout, "environment ", name);
		free(name);
	}
	for (size_t i = 0; i < l->m.not_enforced.n; i++)
		win_report(stdout, "not-enforced = ", "%s", l->m.not_enforced.v[i]);
	fflush(stdout);
	return 0;
}

void
launch_abort(struct launch *l, UINT status)
{
	if (l->job)
		TerminateJobObject(l->job, status);
	if (l->pi.hProcess) {
		TerminateProcess(l->pi.hProcess, status);
		WaitForSingleObject(l->pi.hProcess, JOB_DRAIN_MS);
	}
	if (l->scratch)
		scratch_remove(l->scratch);
}
