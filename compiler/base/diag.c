/*
 * diag.c - collect, sort and print diagnostics.
 */
#include "diag.h"
#include "textesc.h"

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
 * The shown form of the character at P (END its line's end) into OUT, and
 * the columns it takes there: one for a character shown as itself, the
 * length of its escaped form otherwise.  *N is how many bytes it took.
 */
static unsigned
diag_unit(const char *p, const char *end, char out[TEXT_ESC_UNIT_MAX], size_t *n)
{
	size_t len;

	/* The line as written: its backslashes are YAML's, shown as they are. */
	*n = text_escape_unit(p, (size_t)(end - p), TEXT_ESC_AGAIN, out);
	len = strlen(out);
	return len == *n && !memcmp(out, p, len) ? 1 : (unsigned)len;
}

/*
 * Print the source line and a caret under column COL (characters, 1-based)
 * with LEN characters underlined.  The line is escaped (textesc.h): the
 * file may have been written by the agent, and its bytes must not act on
 * the terminal.  Columns are counted on the escaped text, so the caret and
 * its underline stay under the characters they mark.
 */
static void
diag_print_caret(const struct diag *d, FILE *f, struct loc loc)
{
	char unit[TEXT_ESC_UNIT_MAX];
	const char *line, *p, *end;
	size_t len, n;
	unsigned col = 1, at = 0, width = 0, w;

	if (!d->text || loc.line == 0)
		return;
	line = diag_line(d, loc.line, &len);
	if (!line)
		return;
	fprintf(f, "%5u | ", loc.line);
	for (p = line, end = line + len; p < end; p += n) {
		diag_unit(p, end, unit, &n);
		fputs(unit, f);
	}
	fputs("\n      | ", f);
	/* Where the caret goes, then how wide the marked characters are shown. */
	for (p = line; p < end && col < loc.col + loc.len; p += n, col++) {
		w = diag_unit(p, end, unit, &n);
		if (col < loc.col)
			at += w;
		else
			width += w;
	}
	/* Past the end of the line, a column is a column. */
	if (col < loc.col) {
		at += loc.col - col;
		col = loc.col;
	}
	if (col < loc.col + loc.len)
		width += loc.col + loc.len - col;
	fprintf(f, "%*s^", (int)at, "");
	for (unsigned i = 1; i < width; i++)
		fputc('~', f);
	fputc('\n', f);
}

/*
 * S as a diagnostic shows it (textesc.h).  A message quotes the file's keys
 * and scalars, which the agent may have written; it is composed text (some
 * checks quote a character already escaped), so its backslashes stay.
 */
static const char *
shown(const struct diag *d, const char *s)
{
	size_t n = text_escape(NULL, 0, s, strlen(s), TEXT_ESC_AGAIN);
	char *buf = arena_alloc(d->arena, n + 1);

	text_escape(buf, n + 1, s, strlen(s), TEXT_ESC_AGAIN);
	return buf;
}

void
diag_print(struct diag *d, FILE *f, bool with_warnings)
{
	static const char *const level_name[] = {"error", "warning", "note"};
	const char *name = shown(d, d->name);
	size_t i;

	if (d->n)
		qsort(d->v, d->n, sizeof(d->v[0]), diag_cmp);
	for (i = 0; i < d->n; i++) {
		const struct diag_entry *e = &d->v[i];

		if (e->level != DIAG_ERROR && !with_warnings)
			continue;
		if (e->loc.line)
			fprintf(f, "%s:%u:%u: %s: %s\n", name, e->loc.line, e->loc.col,
				level_name[e->level], shown(d, e->message));
		else
			fprintf(f, "%s: %s: %s\n", name, level_name[e->level],
				shown(d, e->message));
		diag_print_caret(d, f, e->loc);
	}
	if (d->truncated)
		fprintf(f, "%s: note: stopped after %d errors\n", name, DIAG_MAX_ERRORS);
	d->n = 0;
}

int
diag_failure(struct diag *d, const char *fmt, ...)
{
	va_list ap;
	char *msg;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	msg = arena_alloc(d->arena, n > 0 ? (size_t)n + 1 : 1);
	msg[0] = '\0';
	if (n > 0) {
		va_start(ap, fmt);
		vsnprintf(msg, (size_t)n + 1, fmt, ap);
		va_end(ap);
	}
	d->failure = msg;
	return -1;
}

int
diag_fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}
