/*
 * wt_bench.c - launch cost measured inside Windows (Wine): how long
 * CreateProcess + wait takes for a program started directly, and for the
 * same program started through omnibox-run.exe, alternating, same run.
 *
 *   wt_bench.exe ROUNDS MANIFEST PROGRAM [ARG...]
 *
 * omnibox-run.exe is the one next to wt_bench.exe.  Prints the two medians
 * in milliseconds and their ratio; exits non-zero if any launch failed.
 */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "runtime/win/winquote.h"

static double
launch_ms(wchar_t *line, bool *ok)
{
	STARTUPINFOW si;
	PROCESS_INFORMATION pi;
	LARGE_INTEGER f, t0, t1;
	DWORD code = 1;

	memset(&si, 0, sizeof(si));
	si.cb = sizeof(si);
	QueryPerformanceFrequency(&f);
	QueryPerformanceCounter(&t0);
	if (!CreateProcessW(NULL, line, NULL, NULL, TRUE, 0, NULL, NULL, &si, &pi)) {
		*ok = false;
		return 0;
	}
	WaitForSingleObject(pi.hProcess, INFINITE);
	QueryPerformanceCounter(&t1);
	GetExitCodeProcess(pi.hProcess, &code);
	CloseHandle(pi.hProcess);
	CloseHandle(pi.hThread);
	if (code)
		*ok = false;
	return (double)(t1.QuadPart - t0.QuadPart) * 1000.0 / (double)f.QuadPart;
}

static int
by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double
median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), by_value);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int wmain(int argc, wchar_t **argv);

int
wmain(int argc, wchar_t **argv)
{
	wchar_t run[MAX_PATH], *slash, *direct, *wrapped;
	const wchar_t **v;
	int rounds, n;
	double *td, *tr;
	bool ok = true;

	if (argc < 4 || (rounds = _wtoi(argv[1])) < 1) {
		fputs("usage: wt_bench.exe ROUNDS MANIFEST PROGRAM [ARG...]\n", stderr);
		return 2;
	}
	if (!GetModuleFileNameW(NULL, run, MAX_PATH) || !(slash = wcsrchr(run, L'\\')))
		return 2;
	wcscpy(slash + 1, L"omnibox-run.exe");
	n = argc - 3;
	v = calloc((size_t)n + 4, sizeof(*v));
	td = calloc((size_t)rounds, sizeof(*td));
	tr = calloc((size_t)rounds, sizeof(*tr));
	if (!v || !td || !tr)
		return 2;
	for (int i = 0; i < n; i++)
		v[i] = argv[3 + i];
	if (winquote_build(v, (size_t)n, &direct) < 0)
		return 2;
	v[0] = run;
	v[1] = L"-q";
	v[2] = argv[2];
	v[3] = L"--";
	for (int i = 0; i < n; i++)
		v[4 + i] = argv[3 + i];
	if (winquote_build(v, (size_t)n + 4, &wrapped) < 0)
		return 2;
	/* Warm the caches of both paths once before measuring. */
	launch_ms(direct, &ok);
	launch_ms(wrapped, &ok);
	for (int r = 0; r < rounds; r++) {
		td[r] = launch_ms(direct, &ok);
		tr[r] = launch_ms(wrapped, &ok);
	}
	{
		double md = median(td, rounds), mr = median(tr, rounds);

		printf("in Wine (CreateProcess + wait), %d rounds:\n", rounds);
		printf("  direct           median %8.2f ms\n", md);
		printf("  omnibox-run.exe  median %8.2f ms\n", mr);
		printf("  ratio            %.2fx\n", mr / md);
	}
	return ok ? 0 : 1;
}
