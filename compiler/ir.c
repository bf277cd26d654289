/*
 * ir.c - names and path relations of the IR (ir.h).
 */
#include "ir.h"

#include <string.h>

bool
path_within(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (!strcmp(dir, "/"))
		return path[0] == '/';
	return !strncmp(path, dir, n) && (path[n] == '/' || path[n] == '\0');
}

bool
ir_within(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (!path_within(path, dir))
		return false;
	if (!strcmp(dir, "/"))
		return true;
	return strncmp(path + n, "/..", 3) || (path[n + 3] != '/' && path[n + 3] != '\0');
}

bool
path_within_any(const char *path, const char *const *dirs)
{
	for (size_t i = 0; dirs[i]; i++)
		if (path_within(path, dirs[i]))
			return true;
	return false;
}

const char *
sandbox_type_name(enum sandbox_type t)
{
	static const char *const names[] = {
	    "auto",	     "none", "linux_bwrap", "darwin_seatbelt", "windows_jobobject",
	    "linux_landlock"};

	return names[t];
}

const char *
cred_type_name(enum cred_type t)
{
	static const char *const names[] = {"https_bearer", "https_basic",    "git_https",
					    "gh_basic",	    "databricks_cli", "aws_sigv4"};

	return names[t];
}

const char *
cred_scheme_name(enum cred_scheme s)
{
	static const char *const names[] = {"bearer", "basic", "token", "header", "sigv4"};

	return names[s];
}

const char *
scan_overflow_name(enum scan_overflow o)
{
	static const char *const names[] = {"warn", "error", "unlimited"};

	return names[o];
}

/* Collapse "." and ".." and empty segments of REL.  A ".." that climbs above
 * the start is dropped for an absolute path ("/.." is "/") and kept in front
 * otherwise (the base is unknown here). */
char *
path_collapse(struct arena *a, const char *rel, bool absolute)
{
	size_t n = strlen(rel);
	const char **seg = arena_alloc(a, (n / 2 + 2) * sizeof(*seg));
	size_t *len = arena_alloc(a, (n / 2 + 2) * sizeof(*len));
	size_t depth = 0;
	char *out = arena_alloc(a, n + 1), *w = out;

	for (const char *p = rel; *p;) {
		const char *s;
		size_t l;

		while (*p == '/')
			p++;
		s = p;
		while (*p && *p != '/')
			p++;
		l = (size_t)(p - s);
		if (l == 0 || (l == 1 && s[0] == '.'))
			continue;
		if (l == 2 && s[0] == '.' && s[1] == '.') {
			if (depth && !(len[depth - 1] == 2 && !memcmp(seg[depth - 1], "..", 2))) {
				depth--;
				continue;
			}
			if (absolute)
				continue;
		}
		seg[depth] = s;
		len[depth++] = l;
	}
	for (size_t i = 0; i < depth; i++) {
		if (i)
			*w++ = '/';
		memcpy(w, seg[i], len[i]);
		w += len[i];
	}
	*w = '\0';
	return out;
}
