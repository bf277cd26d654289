/*
 * wt_agent.c - the agent that the Wine tests run under omnibox-run.exe.
 *
 *   wt_agent.exe exit N            exit with status N
 *   wt_agent.exe env               print the environment, one NAME=VALUE a line
 *   wt_agent.exe argv [ARG...]     print each ARG as <ARG>, split by CommandLineToArgvW
 *   wt_agent.exe cwd               print the current directory
 *   wt_agent.exe injob             print whether this process is in a job (injob=1)
 *   wt_agent.exe breakaway         try CREATE_BREAKAWAY_FROM_JOB; print allowed or refused
 *   wt_agent.exe spawn MODE...     run wt_agent.exe MODE... as a child; exit with its status
 *   wt_agent.exe beat FILE         append a byte to FILE every 20 ms until FILE.stop exists
 *   wt_agent.exe detach FILE       start `beat FILE`, wait for its first beat, exit 0
 *   wt_agent.exe hold FILE         start `beat FILE`, wait for its first beat, sleep forever
 *   wt_agent.exe touch FILE        create FILE
 *   wt_agent.exe exists PATH       exit 0 when PATH exists, 3 when not
 *
 * Exit status 99 means the helper itself failed.  No mode exits 1 on its own
 * (only `exit 1` does): that is the status Wine's loader fails with.
 */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <fcntl.h>
#include <io.h>
#include <shellapi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "runtime/win/winquote.h"

#define FAIL 99

static void
put_utf8(const wchar_t *ws)
{
	int n = WideCharToMultiByte(CP_UTF8, 0, ws, -1, NULL, 0, NULL, NULL);
	char *s = malloc(n > 0 ? (size_t)n : 1);

	if (!s || n <= 0)
		exit(FAIL);
	WideCharToMultiByte(CP_UTF8, 0, ws, -1, s, n, NULL, NULL);
	fputs(s, stdout);
	free(s);
}

/* One argument, with what a shell test cannot compare made visible. */
static void
put_arg(const wchar_t *a)
{
	putchar('<');
	for (; *a; a++) {
		if (*a == L'\n')
			fputs("\\n", stdout);
		else if (*a == L'\t')
			fputs("\\t", stdout);
		else if (*a < 0x20)
			printf("\\x%02x", (unsigned)*a);
		else {
			wchar_t one[2] = {*a, 0};

			put_utf8(one);
		}
	}
	puts(">");
}

/*
 * Start this program with ARGV[0..ARGC) as its arguments; with INHERIT, it
 * shares the standard handles.  A beating survivor must not hold the test's
 * output pipe open, or the test would wait for it forever.
 */
static HANDLE
start_self(const wchar_t *const *argv, int argc, BOOL inherit)
{
	wchar_t self[MAX_PATH], *line;
	const wchar_t **v = calloc((size_t)argc + 1, sizeof(*v));
	STARTUPINFOW si;
	PROCESS_INFORMATION pi;

	memset(&si, 0, sizeof(si));
	si.cb = sizeof(si);
	if (!v || !GetModuleFileNameW(NULL, self, MAX_PATH))
		exit(FAIL);
	v[0] = self;
	for (int i = 0; i < argc; i++)
		v[i + 1] = argv[i];
	if (winquote_build(v, (size_t)argc + 1, &line) < 0)
		exit(FAIL);
	if (!CreateProcessW(self, line, NULL, NULL, inherit, inherit ? 0 : DETACHED_PROCESS, NULL,
			    NULL, &si, &pi)) {
		fprintf(stderr, "wt_agent: CreateProcess failed: %lu\n", GetLastError());
		exit(FAIL);
	}
	CloseHandle(pi.hThread);
	free(line);
	free(v);
	return pi.hProcess;
}

static LONGLONG
file_size(const wchar_t *path)
{
	WIN32_FILE_ATTRIBUTE_DATA a;

	if (!GetFileAttributesExW(path, GetFileExInfoStandard, &a))
		return -1;
	return ((LONGLONG)a.nFileSizeHigh << 32) | a.nFileSizeLow;
}

/* Start `beat FILE` and wait (at most 10 s) for its first beat. */
static void
start_beat(wchar_t *file)
{
	const wchar_t *args[] = {L"beat", file};

	CloseHandle(start_self(args, 2, FALSE));
	for (int i = 0; i < 1000 && file_size(file) <= 0; i++)
		Sleep(10);
	if (file_size(file) <= 0)
		exit(FAIL);
}

/* Beats until FILE.stop exists, so a test can end a survivor it provoked on purpose. */
static int
beat(const wchar_t *file)
{
	size_t n = wcslen(file);
	wchar_t *stop = calloc(n + 6, sizeof(*stop));

	if (!stop)
		return FAIL;
	wcscpy(stop, file);
	wcscat(stop, L".stop");
	for (;;) {
		HANDLE h = CreateFileW(file, FILE_APPEND_DATA, FILE_SHARE_READ | FILE_SHARE_WRITE,
				       NULL, OPEN_ALWAYS, FILE_ATTRIBUTE_NORMAL, NULL);
		DWORD written;

		if (h == INVALID_HANDLE_VALUE)
			return FAIL;
		WriteFile(h, ".", 1, &written, NULL);
		CloseHandle(h);
		if (GetFileAttributesW(stop) != INVALID_FILE_ATTRIBUTES)
			return 0;
		Sleep(20);
	}
}

/* Try to start a child outside the job; print whether the system let it. */
static int
breakaway(void)
{
	wchar_t self[MAX_PATH], line[] = L"wt_agent.exe exit 0";
	STARTUPINFOW si;
	PROCESS_INFORMATION pi;

	memset(&si, 0, sizeof(si));
	si.cb = sizeof(si);
	if (!GetModuleFileNameW(NULL, self, MAX_PATH))
		return FAIL;
	if (CreateProcessW(self, line, NULL, NULL, FALSE, CREATE_BREAKAWAY_FROM_JOB, NULL, NULL,
			   &si, &pi)) {
		puts("breakaway=allowed");
		WaitForSingleObject(pi.hProcess, INFINITE);
		CloseHandle(pi.hProcess);
		CloseHandle(pi.hThread);
	} else {
		printf("breakaway=refused %lu\n", GetLastError());
	}
	return 0;
}

static int
injob(void)
{
	BOOL in = FALSE;

	if (!IsProcessInJob(GetCurrentProcess(), NULL, &in))
		return FAIL;
	printf("injob=%d\n", in ? 1 : 0);
	return 0;
}

int wmain(int argc, wchar_t **argv);

int
wmain(int argc, wchar_t **argv)
{
	const wchar_t *mode = argc > 1 ? argv[1] : L"";

	_setmode(_fileno(stdout), _O_BINARY);
	if (!wcscmp(mode, L"exit") && argc == 3)
		return _wtoi(argv[2]);
	if (!wcscmp(mode, L"env") && argc == 2) {
		wchar_t *env = GetEnvironmentStringsW();

		for (const wchar_t *e = env; *e; e += wcslen(e) + 1) {
			put_utf8(e);
			putchar('\n');
		}
		return 0;
	}
	if (!wcscmp(mode, L"argv")) {
		int n;
		wchar_t **v = CommandLineToArgvW(GetCommandLineW(), &n);

		if (!v)
			return FAIL;
		for (int i = 2; i < n; i++)
			put_arg(v[i]);
		return 0;
	}
	if (!wcscmp(mode, L"cwd") && argc == 2) {
		wchar_t dir[MAX_PATH];

		if (!GetCurrentDirectoryW(MAX_PATH, dir))
			return FAIL;
		put_utf8(dir);
		putchar('\n');
		return 0;
	}
	if (!wcscmp(mode, L"injob") && argc == 2)
		return injob();
	if (!wcscmp(mode, L"breakaway") && argc == 2)
		return breakaway();
	if (!wcscmp(mode, L"spawn") && argc > 2) {
		HANDLE child;
		DWORD code;

		fflush(stdout);
		child = start_self((const wchar_t *const *)argv + 2, argc - 2, TRUE);
		if (WaitForSingleObject(child, INFINITE) != WAIT_OBJECT_0 ||
		    !GetExitCodeProcess(child, &code))
			return FAIL;
		return (int)code;
	}
	if (!wcscmp(mode, L"beat") && argc == 3)
		return beat(argv[2]);
	if (!wcscmp(mode, L"detach") && argc == 3) {
		start_beat(argv[2]);
		return 0;
	}
	if (!wcscmp(mode, L"hold") && argc == 3) {
		start_beat(argv[2]);
		puts("ready");
		fflush(stdout);
		Sleep(INFINITE);
		return 0;
	}
	if (!wcscmp(mode, L"touch") && argc == 3) {
		HANDLE h = CreateFileW(argv[2], GENERIC_WRITE, 0, NULL, CREATE_ALWAYS,
				       FILE_ATTRIBUTE_NORMAL, NULL);

		if (h == INVALID_HANDLE_VALUE)
			return FAIL;
		CloseHandle(h);
		return 0;
	}
	if (!wcscmp(mode, L"exists") && argc == 3)
		return GetFileAttributesW(argv[2]) == INVALID_FILE_ATTRIBUTES ? 3 : 0;
	fputs("wt_agent: unknown mode or wrong arguments\n", stderr);
	return FAIL;
}
