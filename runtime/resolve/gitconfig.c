/*
 * gitconfig.c - git's configuration format (gitconfig.h).
 */
#include "runtime/resolve/gitconfig.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct gp {
	const char *p, *end;
	char *buf; /* LEN + 1 bytes: a value or subsection never outgrows the text */
};

/* The next character, "\r\n" read as '\n' (as git does); -1 at the end. */
static int
get(struct gp *g)
{
	int c;

	if (g->p >= g->end)
		return -1;
	c = (unsigned char)*g->p++;
	if (c == '\r' && g->p < g->end && *g->p == '\n')
		c = (unsigned char)*g->p++;
	return c;
}

static int
peek(const struct gp *g)
{
	return g->p < g->end ? (unsigned char)*g->p : -1;
}

static bool
is_alpha(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool
is_name(int c)
{
	return is_alpha(c) || (c >= '0' && c <= '9') || c == '-';
}

static char
lower(int c)
{
	return (char)(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
}

static void
skip_line(struct gp *g)
{
	int c;

	while ((c = get(g)) != -1 && c != '\n')
		;
}

/* After '[': "name]", "name.sub]" or `name "sub"]`.  0, or -1 when malformed. */
static int
parse_section(struct gp *g, char *section, size_t cap, char **sub)
{
	size_t n = 0, k = 0;
	int c;

	*sub = NULL;
	while ((c = get(g)) != -1 && (is_name(c) || c == '.'))
		if (n + 1 < cap)
			section[n++] = lower(c);
	section[n] = '\0';
	if (c == ']') {
		char *dot = strchr(section, '.');

		if (dot) { /* [section.sub]: the legacy form, lowercased */
			*dot = '\0';
			*sub = strcpy(g->buf, dot + 1);
		}
		return n ? 0 : -1;
	}
	if (c != ' ' && c != '\t')
		return -1;
	while ((c = get(g)) == ' ' || c == '\t')
		;
	if (c != '"')
		return -1;
	while ((c = get(g)) != -1 && c != '"' && c != '\n') {
		if (c == '\\' && (c = get(g)) == -1)
			return -1;
		g->buf[k++] = (char)c;
	}
	g->buf[k] = '\0';
	if (c != '"' || get(g) != ']')
		return -1;
	*sub = g->buf;
	return n ? 0 : -1;
}

/* After '=': the value into g->buf.  0, or -1 when malformed. */
static int
parse_value(struct gp *g)
{
	size_t n = 0, spaces = 0;
	bool quoted = false, started = false;
	int c;

	for (;;) {
		c = get(g);
		if (c == -1 || (c == '\n' && !quoted))
			break;
		if (c == '\n')
			return -1;
		if (!quoted && (c == '#' || c == ';')) {
			skip_line(g);
			break;
		}
		/* Outside quotes git takes every isspace() byte for white space. */
		if (!quoted && (c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f')) {
			if (started)
				spaces++;
			continue;
		}
		for (; spaces; spaces--)
			g->buf[n++] = ' ';
		started = true;
		if (c == '"') {
			quoted = !quoted;
			continue;
		}
		if (c == '\\') {
			c = get(g);
			if (c == '\n') /* a continued line */
				continue;
			c = c == 'n' ? '\n' : c == 't' ? '\t' : c == 'b' ? '\b' : c;
			if (c != '\n' && c != '\t' && c != '\b' && c != '"' && c != '\\')
				return -1;
		}
		g->buf[n++] = (char)c;
	}
	g->buf[n] = '\0';
	return quoted ? -1 : 0;
}

int
gitconfig_parse(const char *text, size_t len,
		void (*fn)(void *arg, const char *section, const char *sub, const char *key,
			   const char *value),
		void *arg)
{
	struct gp g = {text, text + len, malloc(len + 1)};
	char section[128] = "", key[128], *sub = NULL, *subcopy = NULL;
	int c, rc = -1;

	if (!g.buf)
		return -1;
	/* A UTF-8 byte order mark, as git allows. */
	if (len >= 3 && !memcmp(text, "\xef\xbb\xbf", 3))
		g.p += 3;
	for (;;) {
		size_t n = 0;

		while ((c = peek(&g)) == ' ' || c == '\t' || c == '\n' || c == '\r')
			get(&g);
		if (c == -1)
			break;
		if (c == '#' || c == ';') {
			skip_line(&g);
			continue;
		}
		if (c == '[') {
			get(&g);
			if (parse_section(&g, section, sizeof(section), &sub) < 0)
				goto out;
			free(subcopy);
			subcopy = sub ? strdup(sub) : NULL;
			if (sub && !subcopy)
				goto out;
			continue;
		}
		if (!is_alpha(c) || !section[0])
			goto out;
		while (is_name(c = peek(&g))) {
			get(&g);
			if (n + 1 < sizeof(key))
				key[n++] = lower(c);
		}
		key[n] = '\0';
		while ((c = peek(&g)) == ' ' || c == '\t')
			get(&g);
		if (c == -1 || c == '\n' || c == '\r' || c == '#' || c == ';') {
			skip_line(&g);
			fn(arg, section, subcopy, key, NULL);
			continue;
		}
		if (get(&g) != '=' || parse_value(&g) < 0)
			goto out;
		fn(arg, section, subcopy, key, g.buf);
	}
	rc = 0;
out:
	free(subcopy);
	free(g.buf);
	return rc;
}
