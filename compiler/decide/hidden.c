/*
 * hidden.c - the dotfile rule (hidden.h).
 */
#include "hidden.h"

#include <string.h>

bool
hidden_name_in(const char *const *allow, size_t n, const char *name, size_t len)
{
	if (!len || name[0] != '.')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!strcmp(allow[i], "*") || (strlen(allow[i]) == len && !memcmp(allow[i], name, len)))
			return false;
	return true;
}

bool
hidden_name(const struct sandbox *sb, const char *name, size_t len)
{
	if (!len || name[0] != '.' || sb->allow_all_hidden)
		return false;
	for (size_t i = 0; i < sb->cwd_allow_hidden.n; i++)
		if (strlen(sb->cwd_allow_hidden.v[i].s) == len &&
		    !memcmp(sb->cwd_allow_hidden.v[i].s, name, len))
			return false;
	return true;
}

bool
hidden_component(const char *path)
{
	if (path[0] == '.')
		return true;
	for (const char *p = strchr(path, '/'); p; p = strchr(p + 1, '/'))
		if (p[1] == '.')
			return true;
	return false;
}

size_t
hidden_prefix(const struct sandbox *sb, const char *rel)
{
	const char *p = rel;

	while (*p) {
		const char *seg;
		size_t len;

		while (*p == '/')
			p++;
		seg = p;
		len = strcspn(seg, "/");
		p = seg + len;
		if (hidden_name(sb, seg, len))
			return (size_t)(p - rel);
		if (!sb->scan_recursive.value)
			return 0;
	}
	return 0;
}
