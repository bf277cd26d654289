/*
 * udiff.c - a longest-common-subsequence diff over lines.
 *
 * Emitted files are small; after trimming the common head and tail, the
 * middle is diffed with the classic dynamic programme when it fits in a
 * bounded table, and otherwise shown as a whole replacement (still a
 * correct diff, only not a minimal one).
 */
#include "udiff.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define UDIFF_CONTEXT 3
#define UDIFF_MAX_CELLS (16u << 20)

struct line {
	const char *p;
	size_t len; /* without the newline */
	int has_nl;
};

static struct line *
split_lines(const char *s, size_t len, size_t *n)
{
	size_t cap = 16, count = 0;
	struct line *v = malloc(cap * sizeof(*v));
	const char *p = s, *end = s + len;

	if (!v)
		abort();
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));

		if (count == cap) {
			cap *= 2;
			v = realloc(v, cap * sizeof(*v));
			if (!v)
				abort();
		}
		v[count].p = p;
		v[count].len = (size_t)((nl ? nl : end) - p);
		v[count].has_nl = nl != NULL;
		count++;
		p = nl ? nl + 1 : end;
	}
	*n = count;
	return v;
}

static int
line_eq(const struct line *a, const struct line *b)
{
	return a->len == b->len && a->has_nl == b->has_nl && !memcmp(a->p, b->p, a->len);
}

enum op { OP_EQ, OP_DEL, OP_INS };

/* The edit script turning A into B, one op per line. */
static enum op *
edit_script(const struct line *a, size_t na, const struct line *b, size_t nb, size_t *nops)
{
	size_t pre = 0, suf = 0, ma, mb, k = 0;
	enum op *ops = malloc((na + nb + 1) * sizeof(*ops));

	if (!ops)
		abort();
	while (pre < na && pre < nb && line_eq(&a[pre], &b[pre]))
		pre++;
	while (suf < na - pre && suf < nb - pre && line_eq(&a[na - 1 - suf], &b[nb - 1 - suf]))
		suf++;
	ma = na - pre - suf;
	mb = nb - pre - suf;
	for (size_t i = 0; i < pre; i++)
		ops[k++] = OP_EQ;
	if ((ma + 1) * (mb + 1) <= UDIFF_MAX_CELLS) {
		/* len[i][j]: LCS length of a[pre+i..] and b[pre+j..]. */
		uint32_t *len = calloc((ma + 1) * (mb + 1), sizeof(*len));
		size_t i = 0, j = 0, w = mb + 1;

		if (!len)
			abort();
		for (size_t x = ma; x-- > 0;)
			for (size_t y = mb; y-- > 0;)
				len[x * w + y] = line_eq(&a[pre + x], &b[pre + y])
						     ? len[(x + 1) * w + y + 1] + 1
						     : (len[(x + 1) * w + y] > len[x * w + y + 1]
							    ? len[(x + 1) * w + y]
							    : len[x * w + y + 1]);
		while (i < ma || j < mb) {
			if (i < ma && j < mb && line_eq(&a[pre + i], &b[pre + j])) {
				ops[k++] = OP_EQ;
				i++;
				j++;
			} else if (j < mb &&
				   (i == ma || len[i * w + j + 1] >= len[(i + 1) * w + j])) {
				ops[k++] = OP_INS;
				j++;
			} else {
				ops[k++] = OP_DEL;
				i++;
			}
		}
		free(len);
	} else {
		for (size_t i = 0; i < ma; i++)
			ops[k++] = OP_DEL;
		for (size_t j = 0; j < mb; j++)
			ops[k++] = OP_INS;
	}
	for (size_t i = 0; i < suf; i++)
		ops[k++] = OP_EQ;
	*nops = k;
	return ops;
}

static void
put_line(struct textbuf *out, char mark, const struct line *l)
{
	tb_putc(out, mark);
	tb_write(out, l->p, l->len);
	tb_putc(out, '\n');
	if (!l->has_nl)
		tb_puts(out, "\\ No newline at end of file\n");
}

int
udiff(const char *a_label, const char *a, size_t alen, const char *b_label, const char *b,
      size_t blen, struct textbuf *out)
{
	struct line *la, *lb;
	size_t na, nb, nops, k = 0;
	enum op *ops;

	if (alen == blen && (alen == 0 || !memcmp(a, b, alen)))
		return 0;
	if ((alen && memchr(a, '\0', alen)) || (blen && memchr(b, '\0', blen))) {
		tb_printf(out, "Binary files %s and %s differ\n", a_label, b_label);
		return 1;
	}
	la = split_lines(a, alen, &na);
	lb = split_lines(b, blen, &nb);
	ops = edit_script(la, na, lb, nb, &nops);
	tb_printf(out, "--- %s\n+++ %s\n", a_label, b_label);

	/* Walk the script; a hunk is a run of changes with their context. */
	while (k < nops) {
		size_t start, end, ia = 0, ib = 0, ca = 0, cb = 0, gap;

		while (k < nops && ops[k] == OP_EQ)
			k++;
		if (k == nops)
			break;
		start = k > UDIFF_CONTEXT ? k - UDIFF_CONTEXT : 0;
		end = k;
		for (;;) {
			while (end < nops && ops[end] != OP_EQ)
				end++;
			for (gap = 0; end + gap < nops && ops[end + gap] == OP_EQ; gap++)
				;
			if (end + gap < nops && gap <= 2 * UDIFF_CONTEXT) {
				end += gap;
				continue;
			}
			end += gap < UDIFF_CONTEXT ? gap : UDIFF_CONTEXT;
			break;
		}
		for (size_t x = 0; x < start; x++) {
			ia += ops[x] != OP_INS;
			ib += ops[x] != OP_DEL;
		}
		for (size_t x = start; x < end; x++) {
			ca += ops[x] != OP_INS;
			cb += ops[x] != OP_DEL;
		}
		tb_printf(out, "@@ -%zu,%zu +%zu,%zu @@\n", ca ? ia + 1 : ia, ca, cb ? ib + 1 : ib,
			  cb);
		for (size_t x = start; x < end; x++) {
			if (ops[x] == OP_EQ)
				put_line(out, ' ', &la[ia++]), ib++;
			else if (ops[x] == OP_DEL)
				put_line(out, '-', &la[ia++]);
			else
				put_line(out, '+', &lb[ib++]);
		}
		k = end;
	}
	free(ops);
	free(la);
	free(lb);
	return 1;
}
