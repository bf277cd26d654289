/*
 * scratch.c - the scratch dir and its janitor (scratch.h).
 */
#include "scratch.h"

#include <bcrypt.h>
#include <sddl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "winquote.h"

#define EXIT_SETUP 125

/*
 * A security descriptor that lets only the current user in, and does not
 * inherit from the temp directory: the scratch dir is the agent's, not
 * every local user's (the Windows form of mode 0700).
 */
static int
owner_only_descriptor(PSECURITY_DESCRIPTOR *sd, struct win_err *e)
{
	HANDLE token;
	DWORD n = 0;
	TOKEN_USER *user;
	wchar_t *sid, sddl[256];

	if (!OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &token))
		return win_fail(e, "OpenProcessToken: %s", win_strerror(GetLastError()));
	GetTokenInformation(token, TokenUser, NULL, 0, &n);
	if (!(user = win_calloc(n, 1, e))) {
		CloseHandle(token);
		return -1;
	}
	if (!GetTokenInformation(token, TokenUser, user, n, &n)) {
		win_fail(e, "GetTokenInformation: %s", win_strerror(GetLastError()));
		CloseHandle(token);
		free(user);
		return -1;
	}
	CloseHandle(token);
	if (!ConvertSidToStringSidW(user->User.Sid, &sid)) {
		free(user);
		return win_fail(e, "ConvertSidToStringSid: %s", win_strerror(GetLastError()));
	}
	/* P: protected, nothing inherited; OICI: files and folders inside get it too. */
	_snwprintf(sddl, sizeof(sddl) / sizeof(sddl[0]) - 1, L"D:P(A;OICI;FA;;;%ls)", sid);
	sddl[sizeof(sddl) / sizeof(sddl[0]) - 1] = L'\0';
	LocalFree(sid);
	free(user);
	if (!ConvertStringSecurityDescriptorToSecurityDescriptorW(sddl, SDDL_REVISION_1, sd, NULL))
		return win_fail(e, "ConvertStringSecurityDescriptorToSecurityDescriptor: %s",
				win_strerror(GetLastError()));
	return 0;
}

/* One try at a random name under TMP (N characters) into PATH: 1 made, 0 taken, -1 failed. */
static int
try_scratch(const wchar_t *tmp, DWORD n, wchar_t *path, SECURITY_ATTRIBUTES *sa, struct win_err *e)
{
	unsigned char r[8];
	NTSTATUS st = BCryptGenRandom(NULL, r, sizeof(r), BCRYPT_USE_SYSTEM_PREFERRED_RNG);

	if (st < 0)
		return win_fail(e, "BCryptGenRandom failed (status 0x%08lx)", (unsigned long)st);
	_snwprintf(path, n + 31, L"%lsomnibox-%02x%02x%02x%02x%02x%02x%02x%02x", tmp, r[0], r[1],
		   r[2], r[3], r[4], r[5], r[6], r[7]);
	path[n + 31] = L'\0';
	/* CreateDirectory fails on an existing name, so nobody can pre-plant it. */
	if (CreateDirectoryW(path, sa))
		return 1;
	if (GetLastError() == ERROR_ALREADY_EXISTS)
		return 0;
	{
		DWORD err = GetLastError();
		char *t = win_shown(tmp);

		win_fail(e, "cannot create the scratch dir in %s: %s", t, win_strerror(err));
		win_shown_free(t);
		return -1;
	}
}

int
scratch_make(wchar_t **out, struct win_err *e)
{
	wchar_t tmp[MAX_PATH + 1], *path;
	SECURITY_ATTRIBUTES sa = {sizeof(sa), NULL, FALSE};
	DWORD n = GetTempPathW(MAX_PATH + 1, tmp);
	int rc = 0;

	if (!n || n > MAX_PATH)
		return win_fail(e, "GetTempPath: %s", win_strerror(GetLastError()));
	if (owner_only_descriptor(&sa.lpSecurityDescriptor, e) < 0)
		return -1;
	if (!(path = win_calloc(n + 32, sizeof(*path), e))) {
		LocalFree(sa.lpSecurityDescriptor);
		return -1;
	}
	for (int attempt = 0; attempt < 16 && !rc; attempt++)
		rc = try_scratch(tmp, n, path, &sa, e);
	LocalFree(sa.lpSecurityDescriptor);
	if (rc == 0) {
		char *t = win_shown(tmp);

		win_fail(e, "cannot create the scratch dir in %s: %s", t,
			 win_strerror(ERROR_ALREADY_EXISTS));
		win_shown_free(t);
	}
	if (rc <= 0) {
		free(path);
		return -1;
	}
	*out = path;
	return 0;
}

void
scratch_remove(const wchar_t *path)
{
	size_t n = wcslen(path);
	wchar_t *pattern = calloc(n + 3, sizeof(*pattern));
	WIN32_FIND_DATAW fd;
	HANDLE h;
	DWORD a = GetFileAttributesW(path);

	if (!pattern || a == INVALID_FILE_ATTRIBUTES) {
		free(pattern);
		return;
	}
	if (a & FILE_ATTRIBUTE_READONLY)
		SetFileAttributesW(path, a & ~(DWORD)FILE_ATTRIBUTE_READONLY);
	if (!(a & FILE_ATTRIBUTE_DIRECTORY)) {
		DeleteFileW(path);
		free(pattern);
		return;
	}
	if (a & FILE_ATTRIBUTE_REPARSE_POINT) {
		RemoveDirectoryW(path);
		free(pattern);
		return;
	}
	wcscpy(pattern, path);
	wcscat(pattern, L"\\*");
	h = FindFirstFileExW(pattern, FindExInfoBasic, &fd, FindExSearchNameMatch, NULL, 0);
	if (h != INVALID_HANDLE_VALUE) {
		do {
			wchar_t *child;

			if (!wcscmp(fd.cFileName, L".") || !wcscmp(fd.cFileName, L".."))
				continue;
			child = calloc(n + wcslen(fd.cFileName) + 2, sizeof(*child));
			if (!child)
				break;
			wcscpy(child, path);
			wcscat(child, L"\\");
			wcscat(child, fd.cFileName);
			scratch_remove(child);
			free(child);
		} while (FindNextFileW(h, &fd));
		FindClose(h);
	}
	RemoveDirectoryW(path);
	free(pattern);
}

/* Is PATH's last component a scratch dir name, "omnibox-" and 16 hex digits? */
static bool
is_scratch_name(const wchar_t *path)
{
	const wchar_t *base = wcsrchr(path, L'\\');

	base = base ? base + 1 : path;
	if (wcsncmp(base, L"omnibox-", 8) || wcslen(base) != 24)
		return false;
	for (base += 8; *base; base++)
		if (!((*base >= L'0' && *base <= L'9') || (*base >= L'a' && *base <= L'f')))
			return false;
	return true;
}

/*
 * `omnibox-run.exe --janitor HANDLE SCRATCH` (internal): wait until the
 * launching omnibox-run.exe (HANDLE, inherited) has exited, however it
 * ended, then remove its scratch dir.  When omnibox-run.exe is killed, its
 * job handle closes and the agent's tree dies with it, still holding files
 * for a moment; so retry for a while.
 */
int
scratch_janitor_run(const wchar_t *handle, const wchar_t *scratch)
{
	HANDLE parent = (HANDLE)(ULONG_PTR)wcstoull(handle, NULL, 10);

	/* Never anything but a scratch dir, whatever the command line says. */
	if (!is_scratch_name(scratch))
		return EXIT_SETUP;
	WaitForSingleObject(parent, INFINITE);
	for (int i = 0; i < 100; i++) {
		scratch_remove(scratch);
		if (GetFileAttributesW(scratch) == INVALID_FILE_ATTRIBUTES)
			return 0;
		Sleep(100);
	}
	return 1;
}

/* The handle-list attribute that lets the janitor inherit SELF and nothing else. */
static int
janitor_attrs(HANDLE *self, LPPROC_THREAD_ATTRIBUTE_LIST *out, struct win_err *e)
{
	SIZE_T size = 0;
	LPPROC_THREAD_ATTRIBUTE_LIST attrs = NULL;

	InitializeProcThreadAttributeList(NULL, 1, 0, &size);
	if (!(attrs = win_calloc(1, size, e)))
		return -1;
	if (!InitializeProcThreadAttributeList(attrs, 1, 0, &size) ||
	    !UpdateProcThreadAttribute(attrs, 0, PROC_THREAD_ATTRIBUTE_HANDLE_LIST, self,
				       sizeof(*self), NULL, NULL)) {
		free(attrs);
		return win_fail(e, "the handle list of the cleanup process: %s",
				win_strerror(GetLastError()));
	}
	*out = attrs;
	return 0;
}

int
scratch_janitor_start(const wchar_t *scratch, struct win_err *e)
{
	wchar_t exe[MAX_PATH * 4], handle[32], *line;
	const wchar_t *argv[4];
	STARTUPINFOEXW si;
	PROCESS_INFORMATION pi;
	HANDLE self;
	LPPROC_THREAD_ATTRIBUTE_LIST attrs = NULL;
	DWORD n = GetModuleFileNameW(NULL, exe, MAX_PATH * 4);
	int rc = 0;

	if (!n || n >= MAX_PATH * 4)
		return win_fail(e, "GetModuleFileName: %s", win_strerror(GetLastError()));
	if (!DuplicateHandle(GetCurrentProcess(), GetCurrentProcess(), GetCurrentProcess(), &self,
			     SYNCHRONIZE, TRUE, 0))
		return win_fail(e, "DuplicateHandle: %s", win_strerror(GetLastError()));
	_snwprintf(handle, 31, L"%llu", (unsigned long long)(ULONG_PTR)self);
	handle[31] = L'\0';
	argv[0] = exe;
	argv[1] = L"--janitor";
	argv[2] = handle;
	argv[3] = scratch;
	if (winquote_build(argv, 4, &line) < 0) {
		CloseHandle(self);
		return win_fail_oom(e);
	}
	if (janitor_attrs(&self, &attrs, e) < 0) {
		CloseHandle(self);
		free(line);
		return -1;
	}
	memset(&si, 0, sizeof(si));
	si.StartupInfo.cb = sizeof(si);
	si.StartupInfo.dwFlags = STARTF_USESTDHANDLES;
	si.lpAttributeList = attrs;
	if (CreateProcessW(exe, line, NULL, NULL, TRUE,
			   DETACHED_PROCESS | CREATE_NEW_PROCESS_GROUP |
			       EXTENDED_STARTUPINFO_PRESENT,
			   NULL, NULL, &si.StartupInfo, &pi)) {
		CloseHandle(pi.hThread);
		CloseHandle(pi.hProcess);
	} else {
		rc = win_fail(e, "cannot start the cleanup process: %s",
			      win_strerror(GetLastError()));
	}
	CloseHandle(self);
	DeleteProcThreadAttributeList(attrs);
	free(attrs);
	free(line);
	return rc;
}
