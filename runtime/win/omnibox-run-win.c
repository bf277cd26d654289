/*
 * omnibox-run-win.c - omnibox-run.exe: run an agent inside a Job Object.
 *
 *   omnibox-run.exe [--dry-run] [-q] MANIFEST [-- COMMAND [ARG...]]
 *
 * MANIFEST is what `omnibox-compile --target=windows --emit=winjob` wrote.
 * The order of the launch is the security argument (spec/windows.md):
 *
 *   1. read the manifest strictly; rebuild the environment from its
 *      allow-list, with TEMP/TMP in a private scratch dir made for the launch;
 *   2. create the job and set every limit on it;
 *   3. create the agent suspended, assign it to the job, check that it is
 *      inside, and only then let its first instruction run;
 *   4. wait for the agent, end whatever it left behind in the job, remove
 *      the scratch dir, and exit with the agent's exit code.  A detached
 *      cleanup process (`--janitor`) removes the scratch dir if this one is
 *      killed; the job's kill-on-close ends the agent's tree in that case.
 *
 * Whenever a step fails, the agent (if it exists) is terminated and
 * omnibox-run.exe exits 125: the agent never runs outside the job.  Only
 * `job = none`, the policy's explicit opt-out, runs it without one.
 */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <bcrypt.h>
#include <fcntl.h>
#include <io.h>
#include <sddl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "../../compiler/base/arena.h"
#include "../../compiler/decide/env.h"
#include "../../compiler/base/textesc.h"
#include "../../emitters/winjob.h"
#include "manifest.h"
#include "winquote.h"

#define EXIT_SETUP 125
#define OMNIBOX_VERSION "0.1.0"
/* The longest lpCommandLine CreateProcessW accepts, terminator included. */
#define CMDLINE_MAX 32767
#define MANIFEST_MAX (1u << 20)
/* How long the rest of the tree may take to die once the job is terminated. */
#define DRAIN_MS 10000
#define PORT_KEY 1

/*
 * Test hook: with this variable set to 1, the assignment is attempted with
 * an invalid job handle, so the tests can show that a failed assignment
 * aborts the launch.  It can only make a launch fail, never weaken one.
 */
#define TEST_FAIL_ASSIGN L"OMNIBOX_RUN_TEST_FAIL_ASSIGN"

_Static_assert(WINJOB_LIMIT_KILL_ON_JOB_CLOSE == JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE, "flag");
_Static_assert(WINJOB_LIMIT_DIE_ON_UNHANDLED_EXCEPTION ==
		   JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION,
	       "flag");
_Static_assert(WINJOB_LIMIT_ACTIVE_PROCESS == JOB_OBJECT_LIMIT_ACTIVE_PROCESS, "flag");
_Static_assert(WINJOB_LIMIT_JOB_MEMORY == JOB_OBJECT_LIMIT_JOB_MEMORY, "flag");
_Static_assert(WINJOB_LIMIT_JOB_TIME == JOB_OBJECT_LIMIT_JOB_TIME, "flag");
_Static_assert(WINJOB_UI_HANDLES == JOB_OBJECT_UILIMIT_HANDLES, "flag");
_Static_assert(WINJOB_UI_READCLIPBOARD == JOB_OBJECT_UILIMIT_READCLIPBOARD, "flag");
_Static_assert(WINJOB_UI_WRITECLIPBOARD == JOB_OBJECT_UILIMIT_WRITECLIPBOARD, "flag");
_Static_assert(WINJOB_UI_SYSTEMPARAMETERS == JOB_OBJECT_UILIMIT_SYSTEMPARAMETERS, "flag");
_Static_assert(WINJOB_UI_DISPLAYSETTINGS == JOB_OBJECT_UILIMIT_DISPLAYSETTINGS, "flag");
_Static_assert(WINJOB_UI_GLOBALATOMS == JOB_OBJECT_UILIMIT_GLOBALATOMS, "flag");
_Static_assert(WINJOB_UI_DESKTOP == JOB_OBJECT_UILIMIT_DESKTOP, "flag");
_Static_assert(WINJOB_UI_EXITWINDOWS == JOB_OBJECT_UILIMIT_EXITWINDOWS, "flag");
_Static_assert(WINJOB_CPU_ENABLE == JOB_OBJECT_CPU_RATE_CONTROL_ENABLE, "flag");
_Static_assert(WINJOB_CPU_HARD_CAP == JOB_OBJECT_CPU_RATE_CONTROL_HARD_CAP, "flag");

static const char usage_text[] =
    "usage: omnibox-run.exe [--dry-run] [-q] MANIFEST [-- COMMAND [ARG...]]\n"
    "\n"
    "Run COMMAND inside the Job Object that MANIFEST (omnibox-compile --target=windows\n"
    "--emit=winjob) describes.  Without COMMAND, the manifest's terminal command runs.\n"
    "\n"
    "      --dry-run   print every value the launch would pass to SetInformationJobObject,\n"
    "                  the command line and the environment names, and exit\n"
    "  -q, --quiet     no notices (settings the job does not enforce, type none)\n"
    "      --version   print the version\n"
    "      --help      print this help\n"
    "\n"
    "exit status: the command's own; 125 when omnibox-run.exe itself fails (bad\n"
    "manifest, job setup), in which case the command was stopped before it ran.\n";

/* The job's settings, built once: the launch passes them, --dry-run prints them. */
struct job_settings {
	JOBOBJECT_EXTENDED_LIMIT_INFORMATION ext;
	JOBOBJECT_BASIC_UI_RESTRICTIONS ui;
	JOBOBJECT_CPU_RATE_CONTROL_INFORMATION cpu;
	bool has_cpu;
};

struct strv {
	wchar_t **v;
	size_t n, cap;
};

/* Everything a launch holds, so that die() can undo it. */
struct launch {
	struct manifest m;
	const wchar_t *manifest_path;
	wchar_t **command;
	size_t n_command;
	bool dry_run, quiet;
	wchar_t *cmdline, *workspace, *scratch, *envblock;
	const wchar_t *cwd; /* the workspace, or the scratch dir */
	HANDLE job, port;
	PROCESS_INFORMATION pi;
};

static struct launch *current;

/* ---- output and failure ----------------------------------------------------------- */

/* WS as UTF-8, malloc'd; aborts when memory runs out. */
static char *
utf8(const wchar_t *ws)
{
	int n = WideCharToMultiByte(CP_UTF8, 0, ws, -1, NULL, 0, NULL, NULL);
	char *s;

	if (n <= 0)
		return _strdup("?");
	s = malloc((size_t)n);
	if (!s) {
		fputs("omnibox-run.exe: out of memory\n", stderr);
		ExitProcess(EXIT_SETUP);
	}
	WideCharToMultiByte(CP_UTF8, 0, ws, -1, s, n, NULL, NULL);
	return s;
}

/*
 * The system's message for error E, without the trailing line break, in
 * UTF-8 like every other piece of a message (not the ANSI code page).
 */
static const char *
win_strerror(DWORD e)
{
	static char buf[1024];
	wchar_t w[400];
	DWORD n = FormatMessageW(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, NULL,
				 e, 0, w, sizeof(w) / sizeof(w[0]), NULL);
	int len;

	while (n &&
	       (w[n - 1] == L'\n' || w[n - 1] == L'\r' || w[n - 1] == L' ' || w[n - 1] == L'.'))
		n--;
	len = n ? WideCharToMultiByte(CP_UTF8, 0, w, (int)n, buf, (int)sizeof(buf) - 32, NULL, NULL)
		: 0;
	if (len < 0)
		len = 0;
	snprintf(buf + len, sizeof(buf) - (size_t)len, "%s(error %lu)", len ? " " : "",
		 (unsigned long)e);
	return buf;
}

/*
 * One line of omnibox-run.exe's to F: PREFIX, then FMT's message escaped
 * (textesc.h).  A message names paths, the command line, the manifest's
 * values and environment strings, any of which the agent may have chosen;
 * escaping the composed message covers every piece.  A Windows path is
 * full of backslashes, its separator: they are shown as they are
 * (TEXT_ESC_AGAIN), and everything a terminal would act on, a line break
 * included, is escaped.
 */
static void
vreport(FILE *f, const char *prefix, const char *fmt, va_list ap)
{
	char small[1024], *msg = small, *shown;
	size_t len, n;
	va_list again;
	int total;

	va_copy(again, ap);
	total = vsnprintf(small, sizeof(small), fmt, again);
	va_end(again);
	if (total < 0)
		small[0] = '\0';
	else if ((size_t)total >= sizeof(small) && (msg = malloc((size_t)total + 1)))
		vsnprintf(msg, (size_t)total + 1, fmt, ap);
	else if (!msg)
		msg = small; /* out of memory: the message cut short */
	len = strlen(msg);
	fputs(prefix, f);
	n = text_escape(NULL, 0, msg, len, TEXT_ESC_AGAIN) + 1;
	shown = malloc(n);
	if (shown) {
		text_escape(shown, n, msg, len, TEXT_ESC_AGAIN);
		fputs(shown, f);
		free(shown);
	} else {
		for (size_t i = 0; i < len;) {
			char unit[TEXT_ESC_UNIT_MAX];

			i += text_escape_unit(msg + i, len - i, TEXT_ESC_AGAIN, unit);
			fputs(unit, f);
		}
	}
	fputc('\n', f);
	if (msg != small)
		free(msg);
}

static void report(FILE *f, const char *prefix, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A line of PREFIX and the escaped message (vreport()). */
static void
report(FILE *f, const char *prefix, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(f, prefix, fmt, ap);
	va_end(ap);
}

static void remove_tree(const wchar_t *path);

/*
 * Fail closed: terminate the agent (the whole job when there is one),
 * remove the scratch dir and exit 125.
 */
static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void
die(const char *fmt, ...)
{
	struct launch *l = current;
	va_list ap;

	va_start(ap, fmt);
	vreport(stderr, "omnibox-run.exe: ", fmt, ap);
	va_end(ap);
	fflush(stderr);
	if (l) {
		if (l->job)
			TerminateJobObject(l->job, EXIT_SETUP);
		if (l->pi.hProcess) {
			TerminateProcess(l->pi.hProcess, EXIT_SETUP);
			WaitForSingleObject(l->pi.hProcess, DRAIN_MS);
		}
		if (l->scratch)
			remove_tree(l->scratch);
	}
	ExitProcess(EXIT_SETUP);
}

static void notice(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void
notice(const char *fmt, ...)
{
	va_list ap;

	if (current && current->quiet)
		return;
	va_start(ap, fmt);
	vreport(stderr, "omnibox-run.exe: ", fmt, ap);
	va_end(ap);
	fflush(stderr);
}

static void *
xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	if (!p)
		die("out of memory");
	return p;
}

/* A UTF-8 string of the manifest as UTF-16; WHAT names it in the error. */
static wchar_t *
wide(const char *s, const char *what)
{
	int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, -1, NULL, 0);
	wchar_t *w;

	if (n <= 0)
		die("%s: '%s' is not valid UTF-8", what, s);
	w = xcalloc((size_t)n, sizeof(*w));
	MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, -1, w, n);
	return w;
}

static void
strv_push(struct strv *l, wchar_t *s)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 32;
		wchar_t **v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			die("out of memory");
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = s;
}

static wchar_t *
wcsdup_or_die(const wchar_t *s)
{
	wchar_t *d = _wcsdup(s);

	if (!d)
		die("out of memory");
	return d;
}

/* ---- options and manifest --------------------------------------------------------- */

static void
usage_error(const char *msg)
{
	report(stderr, "omnibox-run.exe: ", "%s", msg);
	fputs(usage_text, stderr);
	ExitProcess(EXIT_SETUP);
}

static void
parse_options(int argc, wchar_t **argv, struct launch *l)
{
	int i = 1;

	for (; i < argc && argv[i][0] == L'-' && argv[i][1]; i++) {
		if (!wcscmp(argv[i], L"--dry-run")) {
			l->dry_run = true;
		} else if (!wcscmp(argv[i], L"-q") || !wcscmp(argv[i], L"--quiet")) {
			l->quiet = true;
		} else if (!wcscmp(argv[i], L"--version")) {
			printf("omnibox-run.exe %s\n", OMNIBOX_VERSION);
			ExitProcess(0);
		} else if (!wcscmp(argv[i], L"--help")) {
			fputs(usage_text, stdout);
			ExitProcess(0);
		} else {
			char *o = utf8(argv[i]);

			report(stderr, "omnibox-run.exe: ", "unknown option '%s'", o);
			fputs(usage_text, stderr);
			ExitProcess(EXIT_SETUP);
		}
	}
	if (i == argc)
		usage_error("no MANIFEST given");
	l->manifest_path = argv[i++];
	if (i < argc && wcscmp(argv[i], L"--"))
		usage_error("the command follows '--': MANIFEST -- COMMAND [ARG...]");
	if (i < argc && i + 1 == argc)
		usage_error("no COMMAND after '--'");
	if (i < argc) {
		l->command = argv + i + 1;
		l->n_command = (size_t)(argc - i - 1);
	}
}

static void
read_manifest(struct launch *l)
{
	HANDLE f = CreateFileW(l->manifest_path, GENERIC_READ, FILE_SHARE_READ, NULL, OPEN_EXISTING,
			       FILE_ATTRIBUTE_NORMAL, NULL);
	char *path = utf8(l->manifest_path), *text;
	struct manifest_error err;
	LARGE_INTEGER size;
	DWORD got = 0;

	if (f == INVALID_HANDLE_VALUE)
		die("%s: %s", path, win_strerror(GetLastError()));
	if (!GetFileSizeEx(f, &size))
		die("%s: %s", path, win_strerror(GetLastError()));
	if (size.QuadPart > MANIFEST_MAX)
		die("%s: larger than %u bytes: not a manifest", path, MANIFEST_MAX);
	text = xcalloc((size_t)size.QuadPart + 1, 1);
	if (size.QuadPart &&
	    (!ReadFile(f, text, (DWORD)size.QuadPart, &got, NULL) || got != (DWORD)size.QuadPart))
		die("%s: %s", path, win_strerror(GetLastError()));
	CloseHandle(f);
	if (manifest_parse(text, got, &l->m, &err) < 0) {
		if (err.line)
			die("%s:%u: %s", path, err.line, err.message);
		die("%s: %s", path, err.message);
	}
	free(text);
	free(path);
}

/* ---- the launch context: workspace, scratch dir, command line ---------------------- */

static wchar_t *
env_value(const wchar_t *name)
{
	DWORD n = GetEnvironmentVariableW(name, NULL, 0);
	wchar_t *v;

	if (!n)
		return NULL;
	v = xcalloc(n, sizeof(*v));
	if (GetEnvironmentVariableW(name, v, n) != n - 1) {
		free(v);
		return NULL;
	}
	return v;
}

/*
 * The workspace of the manifest on this machine: {LAUNCH} is the current
 * directory, {HOME} the user profile, "/x" the root of the current drive.
 */
static wchar_t *
resolve_workspace(const struct launch *l)
{
	const char *w = l->m.workspace, *rest;
	wchar_t *base, *rel, *joined, *full;
	DWORD n;

	if (!strncmp(w, "{LAUNCH}", 8)) {
		n = GetCurrentDirectoryW(0, NULL);
		base = xcalloc(n, sizeof(*base));
		if (!n || !GetCurrentDirectoryW(n, base))
			die("the current directory: %s", win_strerror(GetLastError()));
		rest = w + 8;
	} else if (!strncmp(w, "{HOME}", 6)) {
		base = env_value(L"USERPROFILE");
		if (!base)
			die("the workspace is under {HOME}, but USERPROFILE is not set");
		rest = w + 6;
	} else {
		base = wcsdup_or_die(L"");
		rest = w;
	}
	rel = wide(rest, "workspace");
	for (wchar_t *p = rel; *p; p++)
		if (*p == L'/')
			*p = L'\\';
	joined = xcalloc(wcslen(base) + wcslen(rel) + 1, sizeof(*joined));
	wcscpy(joined, base);
	wcscat(joined, rel);
	n = GetFullPathNameW(joined, 0, NULL, NULL);
	full = xcalloc(n + 1, sizeof(*full));
	if (!n || !GetFullPathNameW(joined, n + 1, full, NULL))
		die("the workspace %s: %s", w, win_strerror(GetLastError()));
	free(base);
	free(rel);
	free(joined);
	return full;
}

static void
check_directory(const wchar_t *path, const char *what)
{
	DWORD a = GetFileAttributesW(path);

	if (a == INVALID_FILE_ATTRIBUTES || !(a & FILE_ATTRIBUTE_DIRECTORY)) {
		char *p = utf8(path);

		die("the %s %s: %s", what, p,
		    a == INVALID_FILE_ATTRIBUTES ? win_strerror(GetLastError())
						 : "not a directory");
	}
}

/*
 * A security descriptor that lets only the current user in, and does not
 * inherit from the temp directory: the scratch dir is the agent's, not
 * every local user's (the Windows form of mode 0700).
 */
static PSECURITY_DESCRIPTOR
owner_only_descriptor(void)
{
	HANDLE token;
	DWORD n = 0;
	TOKEN_USER *user;
	wchar_t *sid, sddl[256];
	PSECURITY_DESCRIPTOR sd = NULL;

	if (!OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &token))
		die("OpenProcessToken: %s", win_strerror(GetLastError()));
	GetTokenInformation(token, TokenUser, NULL, 0, &n);
	user = xcalloc(n, 1);
	if (!GetTokenInformation(token, TokenUser, user, n, &n))
		die("GetTokenInformation: %s", win_strerror(GetLastError()));
	CloseHandle(token);
	if (!ConvertSidToStringSidW(user->User.Sid, &sid))
		die("ConvertSidToStringSid: %s", win_strerror(GetLastError()));
	/* P: protected, nothing inherited; OICI: files and folders inside get it too. */
	_snwprintf(sddl, sizeof(sddl) / sizeof(sddl[0]) - 1, L"D:P(A;OICI;FA;;;%ls)", sid);
	sddl[sizeof(sddl) / sizeof(sddl[0]) - 1] = L'\0';
	LocalFree(sid);
	free(user);
	if (!ConvertStringSecurityDescriptorToSecurityDescriptorW(sddl, SDDL_REVISION_1, &sd, NULL))
		die("ConvertStringSecurityDescriptorToSecurityDescriptor: %s",
		    win_strerror(GetLastError()));
	return sd;
}

/* A new directory under the user's temp directory, with a random name. */
static wchar_t *
make_scratch(void)
{
	wchar_t tmp[MAX_PATH + 1], *path;
	SECURITY_ATTRIBUTES sa = {sizeof(sa), owner_only_descriptor(), FALSE};
	DWORD n = GetTempPathW(MAX_PATH + 1, tmp);

	if (!n || n > MAX_PATH)
		die("GetTempPath: %s", win_strerror(GetLastError()));
	path = xcalloc(n + 32, sizeof(*path));
	for (int attempt = 0; attempt < 16; attempt++) {
		unsigned char r[8];
		NTSTATUS st = BCryptGenRandom(NULL, r, sizeof(r), BCRYPT_USE_SYSTEM_PREFERRED_RNG);

		if (st < 0)
			die("BCryptGenRandom failed (status 0x%08lx)", (unsigned long)st);
		_snwprintf(path, n + 31, L"%lsomnibox-%02x%02x%02x%02x%02x%02x%02x%02x", tmp, r[0],
			   r[1], r[2], r[3], r[4], r[5], r[6], r[7]);
		path[n + 31] = L'\0';
		/* CreateDirectory fails on an existing name, so nobody can pre-plant it. */
		if (CreateDirectoryW(path, &sa)) {
			LocalFree(sa.lpSecurityDescriptor);
			return path;
		}
		if (GetLastError() != ERROR_ALREADY_EXISTS)
			break;
	}
	{
		char *t = utf8(tmp);

		die("cannot create the scratch dir in %s: %s", t, win_strerror(GetLastError()));
	}
}

/*
 * Remove PATH and everything below it.  Links (junctions, symbolic links,
 * any reparse point) are removed, never followed: the agent could have
 * pointed one at the user's documents.
 */
static void
remove_tree(const wchar_t *path)
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
			remove_tree(child);
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
static int
run_janitor(const wchar_t *handle, const wchar_t *scratch)
{
	HANDLE parent = (HANDLE)(ULONG_PTR)wcstoull(handle, NULL, 10);

	/* Never anything but a scratch dir, whatever the command line says. */
	if (!is_scratch_name(scratch))
		return EXIT_SETUP;
	WaitForSingleObject(parent, INFINITE);
	for (int i = 0; i < 100; i++) {
		remove_tree(scratch);
		if (GetFileAttributesW(scratch) == INVALID_FILE_ATTRIBUTES)
			return 0;
		Sleep(100);
	}
	return 1;
}

/*
 * The process that removes the scratch dir even if this one is killed;
 * detached from the console (a Ctrl-C is for the agent), outside the job
 * (it outlives it), and given only the handle of this process.
 */
static void
start_janitor(struct launch *l)
{
	wchar_t exe[MAX_PATH * 4], handle[32], *line;
	const wchar_t *argv[4];
	STARTUPINFOEXW si;
	PROCESS_INFORMATION pi;
	SIZE_T size = 0;
	HANDLE self;
	LPPROC_THREAD_ATTRIBUTE_LIST attrs;
	DWORD n = GetModuleFileNameW(NULL, exe, MAX_PATH * 4);

	if (!n || n >= MAX_PATH * 4)
		die("GetModuleFileName: %s", win_strerror(GetLastError()));
	if (!DuplicateHandle(GetCurrentProcess(), GetCurrentProcess(), GetCurrentProcess(), &self,
			     SYNCHRONIZE, TRUE, 0))
		die("DuplicateHandle: %s", win_strerror(GetLastError()));
	_snwprintf(handle, 31, L"%llu", (unsigned long long)(ULONG_PTR)self);
	handle[31] = L'\0';
	argv[0] = exe;
	argv[1] = L"--janitor";
	argv[2] = handle;
	argv[3] = l->scratch;
	if (winquote_build(argv, 4, &line) < 0)
		die("out of memory");
	memset(&si, 0, sizeof(si));
	si.StartupInfo.cb = sizeof(si);
	si.StartupInfo.dwFlags = STARTF_USESTDHANDLES;
	InitializeProcThreadAttributeList(NULL, 1, 0, &size);
	attrs = xcalloc(1, size);
	if (!InitializeProcThreadAttributeList(attrs, 1, 0, &size) ||
	    !UpdateProcThreadAttribute(attrs, 0, PROC_THREAD_ATTRIBUTE_HANDLE_LIST, &self,
				       sizeof(self), NULL, NULL))
		die("the handle list of the cleanup process: %s", win_strerror(GetLastError()));
	si.lpAttributeList = attrs;
	if (!CreateProcessW(exe, line, NULL, NULL, TRUE,
			    DETACHED_PROCESS | CREATE_NEW_PROCESS_GROUP |
				EXTENDED_STARTUPINFO_PRESENT,
			    NULL, NULL, &si.StartupInfo, &pi))
		die("cannot start the cleanup process: %s", win_strerror(GetLastError()));
	CloseHandle(pi.hThread);
	CloseHandle(pi.hProcess);
	CloseHandle(self);
	DeleteProcThreadAttributeList(attrs);
	free(attrs);
	free(line);
}

static wchar_t *
build_cmdline(struct launch *l)
{
	struct strv argv = {0};
	wchar_t *line;

	if (l->n_command) {
		for (size_t i = 0; i < l->n_command; i++)
			strv_push(&argv, l->command[i]);
	} else if (l->m.command) {
		strv_push(&argv, wide(l->m.command, "command"));
		for (size_t i = 0; i < l->m.args.n; i++)
			strv_push(&argv, wide(l->m.args.v[i], "arg"));
	} else {
		usage_error("no COMMAND: give one after '--' (the manifest names no terminal "
			    "command)");
	}
	if (winquote_build((const wchar_t *const *)argv.v, argv.n, &line) < 0)
		die("the program name cannot hold a double quote");
	if (wcslen(line) >= CMDLINE_MAX)
		die("the command line is %llu characters long; Windows takes at most %d",
		    (unsigned long long)wcslen(line), CMDLINE_MAX - 1);
	free(argv.v);
	return line;
}

/* ---- the environment ------------------------------------------------------------ */

static int
env_compare(const void *a, const void *b)
{
	const wchar_t *x = *(wchar_t *const *)a, *y = *(wchar_t *const *)b;

	return CompareStringOrdinal(x, (int)wcscspn(x, L"="), y, (int)wcscspn(y, L"="), TRUE) - 2;
}

/*
 * The agent's environment: the manifest's rules (env_decide()'s, written by
 * the compiler) applied by env_apply() to this process's environment, as
 * every launcher applies them; SCRATCH NULL (--dry-run) leaves a
 * placeholder.  What passes from the host keeps its UTF-16 bytes as they
 * were, even where they are not valid UTF-16.
 */
static void
build_env(const struct launch *l, const wchar_t *scratch, struct strv *env)
{
	const struct manifest *m = &l->m;
	wchar_t *host = GetEnvironmentStringsW();
	const wchar_t **hostw = NULL;
	char **host8, **out, *scratch8 = scratch ? utf8(scratch) : NULL;
	size_t n = 0;
	struct arena *a = arena_new();

	if (!host)
		die("GetEnvironmentStrings: %s", win_strerror(GetLastError()));
	for (const wchar_t *e = host; *e; e += wcslen(e) + 1)
		n++;
	hostw = xcalloc(n + 1, sizeof(*hostw));
	host8 = arena_alloc(a, (n + 1) * sizeof(*host8));
	n = 0;
	for (const wchar_t *e = host; *e; e += wcslen(e) + 1) {
		char *s = utf8(e);

		hostw[n] = e;
		host8[n++] = arena_strdup(a, s);
		free(s);
	}
	out = env_apply(a, m->env, m->n_env, true, host8, scratch8 ? scratch8 : "{SCRATCH}");
	for (size_t i = 0; out[i]; i++) {
		size_t k = 0;

		while (k < n && strcmp(host8[k], out[i]))
			k++;
		strv_push(env, k < n ? wcsdup_or_die(hostw[k]) : wide(out[i], "environment"));
	}
	free(hostw);
	free(scratch8);
	arena_free(a);
	FreeEnvironmentStringsW(host);
	/* CreateProcess wants the block sorted by name, without regard to case. */
	qsort(env->v, env->n, sizeof(*env->v), env_compare);
}

/* The NUL-separated, doubly terminated block CreateProcessW takes. */
static wchar_t *
env_block(const struct strv *env)
{
	size_t len = 1, at = 0;
	wchar_t *block;

	for (size_t i = 0; i < env->n; i++)
		len += wcslen(env->v[i]) + 1;
	block = xcalloc(len + 1, sizeof(*block));
	for (size_t i = 0; i < env->n; i++) {
		wcscpy(block + at, env->v[i]);
		at += wcslen(env->v[i]) + 1;
	}
	block[at] = L'\0';
	return block;
}

/* ---- the job ---------------------------------------------------------------------- */

static void
job_settings_build(const struct manifest *m, struct job_settings *s)
{
	JOBOBJECT_BASIC_LIMIT_INFORMATION *b = &s->ext.BasicLimitInformation;

	memset(s, 0, sizeof(*s));
	/*
	 * No BREAKAWAY_OK or SILENT_BREAKAWAY_OK: a process in the job cannot
	 * start one outside it (the manifest has no way to ask for either).
	 */
	b->LimitFlags = m->limit_flags;
	b->ActiveProcessLimit = m->active_process_limit;
	b->PerJobUserTimeLimit.QuadPart = (LONGLONG)m->per_job_user_time_limit;
	s->ext.JobMemoryLimit = (SIZE_T)m->job_memory_limit;
	s->ui.UIRestrictionsClass = m->ui_restrictions;
	if (m->cpu_rate_control_flags) {
		s->has_cpu = true;
		s->cpu.ControlFlags = m->cpu_rate_control_flags;
		s->cpu.CpuRate = m->cpu_rate;
	}
}

static void
print_settings(const struct job_settings *s)
{
	const JOBOBJECT_BASIC_LIMIT_INFORMATION *b = &s->ext.BasicLimitInformation;
	const IO_COUNTERS *io = &s->ext.IoInfo;
	char flags[256];

	printf("SetInformationJobObject JobObjectExtendedLimitInformation\n");
	printf("BasicLimitInformation.PerProcessUserTimeLimit = %lld\n",
	       (long long)b->PerProcessUserTimeLimit.QuadPart);
	printf("BasicLimitInformation.PerJobUserTimeLimit = %lld\n",
	       (long long)b->PerJobUserTimeLimit.QuadPart);
	printf("BasicLimitInformation.LimitFlags = 0x%08lx %s\n", (unsigned long)b->LimitFlags,
	       manifest_flags_text(MANIFEST_LIMIT_FLAGS, b->LimitFlags, flags, sizeof(flags)));
	printf("BasicLimitInformation.MinimumWorkingSetSize = %llu\n",
	       (unsigned long long)b->MinimumWorkingSetSize);
	printf("BasicLimitInformation.MaximumWorkingSetSize = %llu\n",
	       (unsigned long long)b->MaximumWorkingSetSize);
	printf("BasicLimitInformation.ActiveProcessLimit = %lu\n",
	       (unsigned long)b->ActiveProcessLimit);
	printf("BasicLimitInformation.Affinity = %llu\n", (unsigned long long)b->Affinity);
	printf("BasicLimitInformation.PriorityClass = %lu\n", (unsigned long)b->PriorityClass);
	printf("BasicLimitInformation.SchedulingClass = %lu\n", (unsigned long)b->SchedulingClass);
	printf("IoInfo.ReadOperationCount = %llu\n", (unsigned long long)io->ReadOperationCount);
	printf("IoInfo.WriteOperationCount = %llu\n", (unsigned long long)io->WriteOperationCount);
	printf("IoInfo.OtherOperationCount = %llu\n", (unsigned long long)io->OtherOperationCount);
	printf("IoInfo.ReadTransferCount = %llu\n", (unsigned long long)io->ReadTransferCount);
	printf("IoInfo.WriteTransferCount = %llu\n", (unsigned long long)io->WriteTransferCount);
	printf("IoInfo.OtherTransferCount = %llu\n", (unsigned long long)io->OtherTransferCount);
	printf("ProcessMemoryLimit = %llu\n", (unsigned long long)s->ext.ProcessMemoryLimit);
	printf("JobMemoryLimit = %llu\n", (unsigned long long)s->ext.JobMemoryLimit);
	printf("PeakProcessMemoryUsed = %llu\n", (unsigned long long)s->ext.PeakProcessMemoryUsed);
	printf("PeakJobMemoryUsed = %llu\n", (unsigned long long)s->ext.PeakJobMemoryUsed);
	printf("SetInformationJobObject JobObjectBasicUIRestrictions\n");
	printf("UIRestrictionsClass = 0x%08lx %s\n", (unsigned long)s->ui.UIRestrictionsClass,
	       manifest_flags_text(MANIFEST_UI_RESTRICTIONS, s->ui.UIRestrictionsClass, flags,
				   sizeof(flags)));
	if (s->has_cpu) {
		printf("SetInformationJobObject JobObjectCpuRateControlInformation\n");
		printf("ControlFlags = 0x%08lx %s\n", (unsigned long)s->cpu.ControlFlags,
		       manifest_flags_text(MANIFEST_CPU_FLAGS, s->cpu.ControlFlags, flags,
					   sizeof(flags)));
		printf("CpuRate = %lu\n", (unsigned long)s->cpu.CpuRate);
	}
	printf("SetInformationJobObject JobObjectAssociateCompletionPortInformation\n");
	printf("CompletionKey = %d\n", PORT_KEY);
	printf("CompletionPort = (a new I/O completion port of this launch)\n");
}

static void
set_info(HANDLE job, JOBOBJECTINFOCLASS cls, const char *name, void *info, DWORD size)
{
	if (!SetInformationJobObject(job, cls, info, size))
		die("SetInformationJobObject(%s): %s", name, win_strerror(GetLastError()));
}

/* Step 2: the job, every limit set, before any process exists to escape them. */
static void
create_job(struct launch *l, struct job_settings *s)
{
	JOBOBJECT_ASSOCIATE_COMPLETION_PORT acp;

	/* Unnamed and not inheritable: this process holds the only handle. */
	l->job = CreateJobObjectW(NULL, NULL);
	if (!l->job)
		die("CreateJobObject: %s", win_strerror(GetLastError()));
	set_info(l->job, JobObjectExtendedLimitInformation, "JobObjectExtendedLimitInformation",
		 &s->ext, sizeof(s->ext));
	set_info(l->job, JobObjectBasicUIRestrictions, "JobObjectBasicUIRestrictions", &s->ui,
		 sizeof(s->ui));
	if (s->has_cpu)
		set_info(l->job, JobObjectCpuRateControlInformation,
			 "JobObjectCpuRateControlInformation", &s->cpu, sizeof(s->cpu));
	/* The port reports when the last process of the job is gone. */
	l->port = CreateIoCompletionPort(INVALID_HANDLE_VALUE, NULL, 0, 1);
	if (!l->port)
		die("CreateIoCompletionPort: %s", win_strerror(GetLastError()));
	acp.CompletionKey = (PVOID)(ULONG_PTR)PORT_KEY;
	acp.CompletionPort = l->port;
	set_info(l->job, JobObjectAssociateCompletionPortInformation,
		 "JobObjectAssociateCompletionPortInformation", &acp, sizeof(acp));
}

/* After TerminateJobObject: wait until the job reports that it is empty. */
static void
drain_job(struct launch *l)
{
	ULONGLONG deadline = GetTickCount64() + DRAIN_MS;

	for (;;) {
		ULONGLONG now = GetTickCount64();
		DWORD msg;
		ULONG_PTR key;
		LPOVERLAPPED ov;

		if (now >= deadline ||
		    !GetQueuedCompletionStatus(l->port, &msg, &key, &ov, (DWORD)(deadline - now))) {
			notice("the job did not report its last process gone within %d ms",
			       DRAIN_MS);
			return;
		}
		if (key == PORT_KEY && msg == JOB_OBJECT_MSG_ACTIVE_PROCESS_ZERO)
			return;
	}
}

/* ---- starting the agent ----------------------------------------------------------- */

/*
 * The agent inherits exactly the three standard handles, nothing else this
 * process holds (the job handle above all).
 */
struct inherit {
	LPPROC_THREAD_ATTRIBUTE_LIST attrs;
	HANDLE handles[3];
	size_t n;
};

static void
inherit_std_handles(struct inherit *in, STARTUPINFOEXW *si)
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
		return;
	InitializeProcThreadAttributeList(NULL, 1, 0, &size);
	in->attrs = xcalloc(1, size);
	if (!InitializeProcThreadAttributeList(in->attrs, 1, 0, &size) ||
	    !UpdateProcThreadAttribute(in->attrs, 0, PROC_THREAD_ATTRIBUTE_HANDLE_LIST, in->handles,
				       in->n * sizeof(HANDLE), NULL, NULL))
		die("the handle list of the agent: %s", win_strerror(GetLastError()));
	si->lpAttributeList = in->attrs;
}

static BOOL WINAPI
on_console_event(DWORD event)
{
	/*
	 * Ctrl-C and Ctrl-Break reach the agent too, which decides what they
	 * mean; this process stays to report its status and clean up.
	 */
	return event == CTRL_C_EVENT || event == CTRL_BREAK_EVENT;
}

/* Step 3: suspended, assigned, checked, resumed. */
static void
start_agent(struct launch *l)
{
	STARTUPINFOEXW si;
	struct inherit in;
	DWORD flags = CREATE_UNICODE_ENVIRONMENT | EXTENDED_STARTUPINFO_PRESENT;
	const wchar_t *hook = _wgetenv(TEST_FAIL_ASSIGN);
	BOOL inside = FALSE;

	memset(&si, 0, sizeof(si));
	si.StartupInfo.cb = sizeof(si);
	inherit_std_handles(&in, &si);
	/* Not one instruction of the agent runs before it is in the job. */
	if (l->job)
		flags |= CREATE_SUSPENDED;
	if (!CreateProcessW(NULL, l->cmdline, NULL, NULL, in.n > 0, flags, l->envblock, l->cwd,
			    &si.StartupInfo, &l->pi)) {
		char *c = utf8(l->cmdline);

		memset(&l->pi, 0, sizeof(l->pi));
		die("cannot start %s: %s", c, win_strerror(GetLastError()));
	}
	if (in.attrs) {
		DeleteProcThreadAttributeList(in.attrs);
		free(in.attrs);
	}
	if (l->job) {
		HANDLE job = hook && !wcscmp(hook, L"1") ? NULL : l->job;

		if (!AssignProcessToJobObject(job, l->pi.hProcess))
			die("AssignProcessToJobObject: %s; the agent was stopped before it ran",
			    win_strerror(GetLastError()));
		/* Trust, but verify: resume only what is provably inside. */
		if (!IsProcessInJob(l->pi.hProcess, l->job, &inside) || !inside)
			die("the agent is not in its job after the assignment; it was stopped "
			    "before it ran");
		if (ResumeThread(l->pi.hThread) == (DWORD)-1)
			die("ResumeThread: %s", win_strerror(GetLastError()));
	}
	CloseHandle(l->pi.hThread);
	l->pi.hThread = NULL;
}

/* ---- --dry-run --------------------------------------------------------------------- */

static void
print_wide(const char *label, const wchar_t *ws)
{
	char *s = utf8(ws);

	report(stdout, label, "%s", s);
	free(s);
}

static void
dry_run(struct launch *l, const struct job_settings *s, const struct strv *env)
{
	printf("# omnibox-run.exe --dry-run: nothing was created or started\n");
	report(stdout, "policy = ", "%s%s%s", l->m.policy ? l->m.policy : "(not named)",
	       l->m.terminal ? ", terminal " : "", l->m.terminal ? l->m.terminal : "");
	printf("job = %s\n", l->m.job ? "create" : "none");
	if (l->m.job)
		print_settings(s);
	printf("CreateProcessW dwCreationFlags = %s\n",
	       l->m.job ? "CREATE_SUSPENDED|CREATE_UNICODE_ENVIRONMENT|EXTENDED_STARTUPINFO_PRESENT"
			: "CREATE_UNICODE_ENVIRONMENT|EXTENDED_STARTUPINFO_PRESENT");
	print_wide("CreateProcessW lpCommandLine = ", l->cmdline);
	print_wide("CreateProcessW lpCurrentDirectory = ", l->cwd);
	if (l->m.start_in_scratch)
		report(stdout, "", "(the scratch dir, created at launch; the workspace is %s)",
		       l->m.workspace);
	for (size_t i = 0; i < env->n; i++) {
		size_t n = wcscspn(env->v[i], L"=");
		wchar_t *name = xcalloc(n + 1, sizeof(*name));

		wcsncpy(name, env->v[i], n);
		print_wide("environment ", name);
		free(name);
	}
	for (size_t i = 0; i < l->m.not_enforced.n; i++)
		report(stdout, "not-enforced = ", "%s", l->m.not_enforced.v[i]);
	fflush(stdout);
}

/* ---- main ------------------------------------------------------------------------- */

/* The entry point with UTF-16 arguments (-municode). */
int wmain(int argc, wchar_t **argv);

int
wmain(int argc, wchar_t **argv)
{
	struct launch l;
	struct job_settings s;
	struct strv env = {0};
	DWORD code;

	if (argc == 4 && !wcscmp(argv[1], L"--janitor"))
		return run_janitor(argv[2], argv[3]);
	memset(&l, 0, sizeof(l));
	current = &l;
	/* Bytes out as written: no CRLF translation of what the agent's tools parse. */
	_setmode(_fileno(stdout), _O_BINARY);
	_setmode(_fileno(stderr), _O_BINARY);
	parse_options(argc, argv, &l);
	read_manifest(&l);
	if (l.m.fork)
		die("the policy sets os_env.fork, which is not supported: refusing to run on the "
		    "real workspace");
	l.cmdline = build_cmdline(&l);
	l.workspace = resolve_workspace(&l);
	job_settings_build(&l.m, &s);

	if (l.dry_run) {
		l.cwd = l.m.start_in_scratch ? L"{SCRATCH}" : l.workspace;
		build_env(&l, NULL, &env);
		dry_run(&l, &s, &env);
		return 0;
	}
	check_directory(l.workspace, "workspace");
	if (!l.m.job)
		notice("sandbox type none: running the command without a Job Object, as the "
		       "policy says");
	for (size_t i = 0; l.m.job && i < l.m.not_enforced.n; i++)
		notice("not enforced: %s", l.m.not_enforced.v[i]);
	SetConsoleCtrlHandler(on_console_event, TRUE);

	l.scratch = make_scratch();
	l.cwd = l.m.start_in_scratch ? l.scratch : l.workspace;
	build_env(&l, l.scratch, &env);
	l.envblock = env_block(&env);
	if (l.m.job)
		create_job(&l, &s);
	start_agent(&l);
	/*
	 * The cleanup process starts while the agent already runs, so that its
	 * start-up is not added to the agent's; if this process is killed in
	 * the moment before, the scratch dir is left in the user's temp dir.
	 */
	start_janitor(&l);

	/* Step 4. */
	if (WaitForSingleObject(l.pi.hProcess, INFINITE) != WAIT_OBJECT_0)
		die("waiting for the agent: %s", win_strerror(GetLastError()));
	if (!GetExitCodeProcess(l.pi.hProcess, &code))
		die("GetExitCodeProcess: %s", win_strerror(GetLastError()));
	CloseHandle(l.pi.hProcess);
	l.pi.hProcess = NULL;
	if (l.job) {
		/* The agent is gone; whatever it started goes with it. */
		TerminateJobObject(l.job, 1);
		drain_job(&l);
		CloseHandle(l.job);
		l.job = NULL;
	}
	remove_tree(l.scratch);
	if (GetFileAttributesW(l.scratch) != INVALID_FILE_ATTRIBUTES) {
		char *p = utf8(l.scratch);

		notice("could not remove the scratch dir %s", p);
		free(p);
	}
	fflush(stdout);
	ExitProcess(code);
}
