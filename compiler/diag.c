/*
 * diag.c - collect, sort and print diagnostics.
 */
#include "diag.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void
diag_init(struct diag *d, struct arena *a, const char *name, const char *text, size_t len)
{
	memset(d, 0, sizeof(*d));
	d->arena = a;
	d->name = name;
	d->text = text;
	d->len = len;
}

static void
diag_add(struct diag *d, enum diag_level level, struct loc loc, const char *fmt, va_list ap)
{
	struct diag_entry *e;
	va_list ap2;
	char *msg;
	int n;

	if (level == DIAG_ERROR) {
		if (d->errors >= DIAG_MAX_ERRORS) {
			d->truncated = true;
			return;
		}
		d->errors++;
	} else if (level == DIAG_WARNING) {
		d->warnings++;
	}
	va_copy(ap2, ap);
	n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	msg = arena_alloc(d->arena, n > 0 ? (size_t)n + 1 : 1);
	if (n > 0)
		vsnprintf(msg, (size_t)n + 1, fmt, ap);
	e = ARENA_PUSH(d->arena, d->v, d->n, d->cap);
	e->level = level;
	e->loc = loc;
	e->message = msg;
	e->seq = d->n;
}

void
diag_error(struct diag *d, struct loc loc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	diag_add(d, DIAG_ERROR, loc, fmt, ap);
	va_end(ap);
}

void
diag_warning(struct diag *d, struct loc loc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	diag_add(d, DIAG_WARNING, loc, fmt, ap);
	va_end(ap);
}

void
diag_note(struct diag *d, struct loc loc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	diag_add(d, DIAG_NOTE, loc, fmt, ap);
	va_end(ap);
}

static int
diag_cmp(const void *pa, const void *pb)
{
	const struct diag_entry *a = pa, *b = pb;

	if (a->loc.line != b->loc.line)
		return a->loc.line < b->loc.line ? -1 : 1;
	if (a->loc.col != b->loc.col)
		return a->loc.col < b->loc.col ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

size_t
diag_break_len(const char *p, const char *end)
{
	const unsigned char *u = (const unsigned char *)p;
	size_t left = (size_t)(end - p);

	if (left == 0)
		return 0;
	if (u[0] == '\n')
		return 1;
	if (u[0] == '\r')
		return left > 1 && u[1] == '\n' ? 2 : 1;
	if (left > 1 && u[0] == 0xc2 && u[1] == 0x85)
		return 2;
	if (left > 2 && u[0] == 0xe2 && u[1] == 0x80 && (u[2] == 0xa8 || u[2] == 0xa9))
		return 3;
	return 0;
}

/* The bytes of 1-based line LINE of the source, without its line break. */
static const char *
diag_line(const struct diag *d, unsigned line, size_t *len)
{
	const char *p = d->text, *end = d->text + d->len, *start = p;
	unsigned n = 1;
	size_t br;

	while (p < end) {
		br = diag_break_len(p, end);
		if (!br) {
			p++;
			continue;
		}
		if (n == line)
			break;
		p += br;
		start = p;
		n++;
	}
	if (n != line)
		return NULL;
	*len = (size_t)(p - start);
	return start;
}

/*
 * Print the source line and a caret under column COL (characters, 1-based)
 * with LEN characters underlined.  Tabs before the caret are copied so the
 * caret lines up whatever the terminal's tab width.
 */
static void
diag_print_caret(const struct diag *d, FILE *f, struct loc loc)
{
	const char *line, *p, *end;
	size_t len;
	unsigned col = 1, i;

	if (!d->text || loc.line == 0)
		return;
	line = diag_line(d, loc.line, &len);
	if (!line)
		return;
	fprintf(f, "%5u | ", loc.line);
	for (p = line, end = line + len; p < end; p++)
		fputc((unsigned char)*p < 0x20 && *p != '\t' ? '?' : *p, f);
	fputs("\n      | ", f);
	for (p = line, end = line + len; p < end && col < loc.col; p++) {
		if (((unsigned char)*p & 0xc0) == 0x80)
			continue; /* UTF-8 continuation: same character */
		fputc(*p == '\t' ? '\t' : ' ', f);
		col++;
	}
	fputc('^', f);
	for (i = 1; i < loc.len; i++)
		fputc('~', f);
	fputc('\n', f);
}

void
diag_print(struct diag *d, FILE *f, bool with_warnings)
{
	static const char *const level_name[] = {"error", "warning", "note"};
	size_t i;

	if (d->n)
		qsort(d->v, d->n, sizeof(d->v[0]), diag_cmp);
	for (i = 0; i < d->n; i++) {
		const struct diag_entry *e = &d->v[i];

		if (e->level != DIAG_ERROR && !with_warnings)
			continue;
		if (e->loc.line)
			fprintf(f, "%s:%u:%u: %s: %s\n", d->name, e->loc.line, e->loc.col,
				level_name[e->level], e->message);
		else
			fprintf(f, "%s: %s: %s\n", d->name, level_name[e->level], e->message);
		diag_print_caret(d, f, e->loc);
	}
	if (d->truncated)
		fprintf(f, "%s: note: stopped after %d errors\n", d->name, DIAG_MAX_ERRORS);
	d->n = 0;
}
