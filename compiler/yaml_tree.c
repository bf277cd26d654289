/*
 * yaml_tree.c - libyaml events to a positioned, typed node tree.
 */
#include "yaml_tree.h"

#include <string.h>
#include <yaml.h>

#define YDOC_MAX_DEPTH 64
#define YDOC_MAX_BYTES (16u << 20)

struct anchor {
	const char *name;
	struct ynode *node;
};

struct frame {
	struct ynode *node;
	struct ynode *key; /* a mapping's key waiting for its value */
};

struct builder {
	struct arena *a;
	struct diag *d;
	const char *text;
	size_t len;
	size_t *line_off; /* byte offset of each line's start */
	size_t n_lines;
	struct anchor *anchors;
	size_t n_anchors, cap_anchors;
	struct frame stack[YDOC_MAX_DEPTH];
	size_t depth;
	struct ynode *root;
};

static void
builder_index_lines(struct builder *b)
{
	const char *p = b->text, *end = b->text + b->len;
	size_t cap = 0, br;

	*(size_t *)ARENA_PUSH(b->a, b->line_off, b->n_lines, cap) = 0;
	while (p < end) {
		br = diag_break_len(p, end);
		if (!br) {
			p++;
			continue;
		}
		p += br;
		*(size_t *)ARENA_PUSH(b->a, b->line_off, b->n_lines, cap) = (size_t)(p - b->text);
	}
}

/* Byte offset of a libyaml mark, whose column counts characters. */
static size_t
builder_offset(const struct builder *b, const yaml_mark_t *m)
{
	size_t off, col = 0;

	if (m->line >= b->n_lines)
		return b->len;
	off = b->line_off[m->line];
	while (off < b->len && col < m->column) {
		off++;
		while (off < b->len && ((unsigned char)b->text[off] & 0xc0) == 0x80)
			off++;
		col++;
	}
	return off;
}

static struct loc
mark_loc(const yaml_mark_t *m)
{
	struct loc l = {(uint32_t)m->line + 1, (uint32_t)m->column + 1, 1};

	return l;
}

static struct ynode *
builder_node(struct builder *b, enum ynode_kind kind, const yaml_event_t *e, const char *tag)
{
	struct ynode *n = arena_alloc(b->a, sizeof(*n));

	n->kind = kind;
	n->loc = mark_loc(&e->start_mark);
	n->off = builder_offset(b, &e->start_mark);
	n->end_off = n->off;
	if (tag && strcmp(tag, "!") != 0)
		n->tag = arena_strdup(b->a, tag);
	return n;
}

static bool
ci_equal(const char *s, size_t len, const char *lit)
{
	return len == strlen(lit) && strncasecmp(s, lit, len) == 0;
}

/* YAML 1.2 typing of a plain scalar, narrowed as the schema asks. */
static void
scalar_resolve(struct ynode *n)
{
	const char *s = n->value;
	size_t len = n->len, i = 0;
	uint64_t v = 0;

	n->type = YSCALAR_STRING;
	if (len == 0 || (len == 1 && s[0] == '~') || !strcmp(s, "null") || !strcmp(s, "Null") ||
	    !strcmp(s, "NULL")) {
		n->type = YSCALAR_NULL;
		return;
	}
	if (ci_equal(s, len, "true") || ci_equal(s, len, "false")) {
		n->type = YSCALAR_BOOL;
		n->bval = s[0] == 't' || s[0] == 'T';
		return;
	}
	if (s[0] == '-' || s[0] == '+')
		i = 1;
	if (i == len)
		return;
	for (size_t j = i; j < len; j++)
		if (s[j] < '0' || s[j] > '9')
			return;
	for (; i < len; i++) {
		unsigned digit = (unsigned)(s[i] - '0');

		v = v > (UINT64_MAX - digit) / 10 ? UINT64_MAX : v * 10 + digit;
	}
	n->type = YSCALAR_INT;
	n->ival = v;
	n->negative = s[0] == '-' && v != 0;
}

static int
builder_attach(struct builder *b, struct ynode *n)
{
	struct frame *f;

	if (b->depth == 0) {
		b->root = n;
		return 0;
	}
	f = &b->stack[b->depth - 1];
	if (f->node->kind == YNODE_SEQ) {
		*ARENA_PUSH(b->a, f->node->items, f->node->n_items, f->node->cap_items) = n;
	} else if (!f->key) {
		f->key = n;
	} else {
		struct ypair *p =
		    ARENA_PUSH(b->a, f->node->pairs, f->node->n_pairs, f->node->cap_pairs);

		p->key = f->key;
		p->value = n;
		f->key = NULL;
	}
	return 0;
}

static void
builder_anchor(struct builder *b, const yaml_char_t *name, struct ynode *n)
{
	struct anchor *an;

	if (!name)
		return;
	an = ARENA_PUSH(b->a, b->anchors, b->n_anchors, b->cap_anchors);
	an->name = arena_strdup(b->a, (const char *)name);
	an->node = n;
}

static struct ynode *
builder_alias(const struct builder *b, const char *name)
{
	/* The latest definition wins: YAML lets an anchor be redefined. */
	for (size_t i = b->n_anchors; i-- > 0;)
		if (!strcmp(b->anchors[i].name, name))
			return b->anchors[i].node;
	return NULL;
}

static int
builder_push(struct builder *b, struct ynode *n, const yaml_event_t *e)
{
	if (b->depth == YDOC_MAX_DEPTH) {
		diag_error(b->d, mark_loc(&e->start_mark), "YAML nesting deeper than %d levels",
			   YDOC_MAX_DEPTH);
		return -1;
	}
	n->busy = true;
	b->stack[b->depth].node = n;
	b->stack[b->depth].key = NULL;
	b->depth++;
	return 0;
}

static int
builder_event(struct builder *b, const yaml_event_t *e, bool *done)
{
	struct ynode *n;

	switch (e->type) {
	case YAML_STREAM_START_EVENT:
	case YAML_DOCUMENT_END_EVENT:
		return 0;
	case YAML_STREAM_END_EVENT:
		*done = true;
		return 0;
	case YAML_DOCUMENT_START_EVENT:
		if (b->root) {
			diag_error(b->d, mark_loc(&e->start_mark),
				   "a second YAML document; an agent file holds exactly one");
			return -1;
		}
		return 0;
	case YAML_SCALAR_EVENT:
		n = builder_node(b, YNODE_SCALAR, e, (const char *)e->data.scalar.tag);
		n->value =
		    arena_strndup(b->a, (const char *)e->data.scalar.value, e->data.scalar.length);
		n->len = e->data.scalar.length;
		n->end_off = builder_offset(b, &e->end_mark);
		switch (e->data.scalar.style) {
		case YAML_SINGLE_QUOTED_SCALAR_STYLE:
			n->style = YSTYLE_SINGLE;
			break;
		case YAML_DOUBLE_QUOTED_SCALAR_STYLE:
			n->style = YSTYLE_DOUBLE;
			break;
		case YAML_LITERAL_SCALAR_STYLE:
			n->style = YSTYLE_LITERAL;
			break;
		case YAML_FOLDED_SCALAR_STYLE:
			n->style = YSTYLE_FOLDED;
			break;
		default:
			n->style = YSTYLE_PLAIN;
		}
		if (e->end_mark.line == e->start_mark.line &&
		    e->end_mark.column > e->start_mark.column)
			n->loc.len = (uint32_t)(e->end_mark.column - e->start_mark.column);
		n->type = YSCALAR_STRING;
		/* An explicit !!bool, !!int or !!null asks for the same typing. */
		if (n->style == YSTYLE_PLAIN &&
		    (!n->tag ||
		     (!strncmp(n->tag, "tag:yaml.org,2002:", 18) && strcmp(n->tag + 18, "str"))))
			scalar_resolve(n);
		builder_anchor(b, e->data.scalar.anchor, n);
		return builder_attach(b, n);
	case YAML_SEQUENCE_START_EVENT:
		n = builder_node(b, YNODE_SEQ, e, (const char *)e->data.sequence_start.tag);
		builder_anchor(b, e->data.sequence_start.anchor, n);
		if (builder_attach(b, n) < 0)
			return -1;
		return builder_push(b, n, e);
	case YAML_MAPPING_START_EVENT:
		n = builder_node(b, YNODE_MAP, e, (const char *)e->data.mapping_start.tag);
		builder_anchor(b, e->data.mapping_start.anchor, n);
		if (builder_attach(b, n) < 0)
			return -1;
		return builder_push(b, n, e);
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		n = b->stack[--b->depth].node;
		n->busy = false;
		n->end_off = builder_offset(b, &e->end_mark);
		return 0;
	case YAML_ALIAS_EVENT:
		n = builder_alias(b, (const char *)e->data.alias.anchor);
		if (!n) {
			/* libyaml's parser does not check this itself. */
			diag_error(b->d, mark_loc(&e->start_mark), "unknown YAML anchor '%s'",
				   (const char *)e->data.alias.anchor);
			return -1;
		}
		if (n->busy) {
			diag_error(b->d, mark_loc(&e->start_mark),
				   "YAML alias '*%s' refers to a node that contains it",
				   (const char *)e->data.alias.anchor);
			return -1;
		}
		return builder_attach(b, n);
	default:
		return 0;
	}
}

static void
report_parser_error(struct builder *b, const yaml_parser_t *p)
{
	struct loc l = mark_loc(&p->problem_mark);

	if (p->error == YAML_READER_ERROR) {
		/* The reader knows a byte offset, not a line. */
		size_t line = 0;

		while (line + 1 < b->n_lines && b->line_off[line + 1] <= p->problem_offset)
			line++;
		l.line = (uint32_t)line + 1;
		l.col = 1;
		for (size_t off = b->line_off[line]; off < p->problem_offset && off < b->len; off++)
			if (((unsigned char)b->text[off] & 0xc0) != 0x80)
				l.col++;
		diag_error(b->d, l, "invalid YAML input: %s", p->problem ? p->problem : "?");
		return;
	}
	if (p->problem_mark.line < b->n_lines) {
		yaml_mark_t m = p->problem_mark;
		size_t off = builder_offset(b, &m);

		if (off < b->len && b->text[off] == '\t') {
			diag_error(b->d, l,
				   "YAML syntax error: a tab cannot indent YAML; use spaces");
			return;
		}
	}
	/* An unclosed [ or { is noticed where the next key starts, lines later:
	 * the mistake is where the collection opened. */
	if (p->context && strstr(p->context, "flow") &&
	    p->context_mark.line < p->problem_mark.line)
		diag_error(b->d, mark_loc(&p->context_mark),
			   "YAML syntax error: %s opened here is not closed (%s, at line %zu "
			   "column %zu)",
			   strstr(p->context, "sequence") ? "this [ list" : "this { mapping",
			   p->problem, p->problem_mark.line + 1, p->problem_mark.column + 1);
	else if (p->context)
		diag_error(b->d, l, "YAML syntax error: %s %s that started at line %zu", p->problem,
			   p->context, p->context_mark.line + 1);
	else
		diag_error(b->d, l, "YAML syntax error: %s", p->problem ? p->problem : "?");
}

int
ydoc_load(struct arena *a, struct diag *d, const char *text, size_t len, struct ydoc *doc)
{
	struct builder b;
	yaml_parser_t parser;
	yaml_event_t event;
	bool done = false;
	int rc = 0;

	memset(doc, 0, sizeof(*doc));
	doc->text = text;
	doc->len = len;
	if (len > YDOC_MAX_BYTES) {
		struct loc none = {0, 0, 0};

		diag_error(d, none, "file is larger than %u MiB", YDOC_MAX_BYTES >> 20);
		return -1;
	}
	memset(&b, 0, sizeof(b));
	b.a = a;
	b.d = d;
	b.text = text;
	b.len = len;
	builder_index_lines(&b);

	if (!yaml_parser_initialize(&parser)) {
		fputs("omnibox: out of memory\n", stderr);
		abort();
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	while (!done) {
		if (!yaml_parser_parse(&parser, &event)) {
			report_parser_error(&b, &parser);
			rc = -1;
			break;
		}
		rc = builder_event(&b, &event, &done);
		yaml_event_delete(&event);
		if (rc < 0)
			break;
	}
	yaml_parser_delete(&parser);
	doc->root = b.root;
	return rc;
}

/* Length of the UTF-8 encoding of code point CP. */
static size_t
utf8_len(unsigned long cp)
{
	return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
}

static unsigned long
hex_value(const char *p, size_t n)
{
	unsigned long v = 0;

	for (size_t i = 0; i < n; i++) {
		char c = p[i];

		v = v * 16 + (unsigned long)(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
	}
	return v;
}

/*
 * Walk the source of a one-line quoted or plain scalar and the value it
 * produced side by side, until VALUE_OFF value bytes are consumed.
 * Returns the number of source characters consumed, or -1 when the
 * scalar does not map simply (it spans lines, or ends early).
 */
static long
scalar_source_chars(const struct ydoc *doc, const struct ynode *n, size_t value_off)
{
	const char *src = doc->text + n->off, *end = doc->text + n->end_off;
	size_t produced = 0;
	long chars = 0;

	if (n->style == YSTYLE_SINGLE || n->style == YSTYLE_DOUBLE) {
		src++;
		chars++;
	}
	while (produced < value_off) {
		size_t in, out;

		if (src >= end || diag_break_len(src, end))
			return -1;
		if (n->style == YSTYLE_SINGLE && src[0] == '\'' && src + 1 < end &&
		    src[1] == '\'') {
			in = 2;
			out = 1;
		} else if (n->style == YSTYLE_DOUBLE && src[0] == '\\' && src + 1 < end) {
			switch (src[1]) {
			case 'x':
				in = 4;
				out = utf8_len(hex_value(src + 2, 2));
				break;
			case 'u':
				in = 6;
				out = utf8_len(hex_value(src + 2, 4));
				break;
			case 'U':
				in = 10;
				out = utf8_len(hex_value(src + 2, 8));
				break;
			case 'N':
			case '_':
				in = 2;
				out = 2;
				break;
			case 'L':
			case 'P':
				in = 2;
				out = 3;
				break;
			default:
				in = 2;
				out = 1;
			}
			if (src + in > end)
				return -1;
		} else {
			in = 1;
			while (src + in < end && ((unsigned char)src[in] & 0xc0) == 0x80)
				in++;
			out = in;
		}
		src += in;
		produced += out;
		/* Escapes are ASCII, so source characters = bytes except for raw UTF-8. */
		chars += (in > 1 && ((unsigned char)src[-1] & 0x80)) ? 1 : (long)in;
	}
	return chars;
}

struct loc
ydoc_scalar_loc(const struct ydoc *doc, const struct ynode *n, size_t off, size_t len)
{
	struct loc l = n->loc;
	long start, stop;

	if (n->kind != YNODE_SCALAR || n->style == YSTYLE_LITERAL || n->style == YSTYLE_FOLDED)
		return l;
	start = scalar_source_chars(doc, n, off);
	stop = scalar_source_chars(doc, n, off + len);
	if (start < 0)
		return l;
	l.col = n->loc.col + (uint32_t)start;
	l.len = stop > start ? (uint32_t)(stop - start) : 1;
	return l;
}

static const struct ypair *
ynode_pair(const struct ynode *n, const char *key)
{
	if (!n || n->kind != YNODE_MAP)
		return NULL;
	for (size_t i = 0; i < n->n_pairs; i++) {
		const struct ynode *k = n->pairs[i].key;

		if (k->kind == YNODE_SCALAR && k->len == strlen(key) &&
		    !memcmp(k->value, key, k->len))
			return &n->pairs[i];
	}
	return NULL;
}

struct ynode *
ynode_get(const struct ynode *n, const char *key)
{
	const struct ypair *p = ynode_pair(n, key);

	return p ? p->value : NULL;
}

struct ynode *
ynode_key(const struct ynode *n, const char *key)
{
	const struct ypair *p = ynode_pair(n, key);

	return p ? p->key : NULL;
}

const char *
ynode_describe(struct arena *a, const struct ynode *n)
{
	char shown[48];
	size_t j = 0;

	switch (n->kind) {
	case YNODE_SEQ:
		return "a list";
	case YNODE_MAP:
		return "a mapping";
	case YNODE_SCALAR:
		break;
	}
	switch (n->type) {
	case YSCALAR_NULL:
		return "null";
	case YSCALAR_BOOL:
		return n->bval ? "the boolean true" : "the boolean false";
	case YSCALAR_INT:
		return arena_printf(a, "the integer %s", n->value);
	case YSCALAR_STRING:
		break;
	}
	for (size_t i = 0; i < n->len; i++) {
		unsigned char c = (unsigned char)n->value[i];

		if (j + 8 >= sizeof(shown)) {
			memcpy(shown + j, "...", 3);
			j += 3;
			break;
		}
		if (c < 0x20 || c == 0x7f)
			j += (size_t)snprintf(shown + j, sizeof(shown) - j, "\\x%02x", c);
		else
			shown[j++] = (char)c;
	}
	shown[j] = '\0';
	return arena_printf(a, "the string '%s'", shown);
}
