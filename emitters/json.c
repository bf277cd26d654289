/*
 * json.c - JSON writer.
 */
#include "json.h"

void
json_init(struct json *j, struct textbuf *out)
{
	j->out = out;
	j->depth = 0;
	j->first[0] = true;
	j->inline_[0] = false;
	j->after_key = false;
}

/* Separator and indentation before a value or key at the current level. */
static void
json_sep(struct json *j)
{
	if (j->after_key) {
		j->after_key = false;
		return;
	}
	if (j->depth == 0)
		return;
	if (!j->first[j->depth])
		tb_puts(j->out, j->inline_[j->depth] ? ", " : ",");
	j->first[j->depth] = false;
	if (j->inline_[j->depth])
		return;
	tb_putc(j->out, '\n');
	for (int i = 0; i < j->depth; i++)
		tb_puts(j->out, "  ");
}

void
json_key(struct json *j, const char *key)
{
	json_sep(j);
	tb_json_string(j->out, key);
	tb_puts(j->out, ": ");
	j->after_key = true;
}

void
json_open(struct json *j, char bracket, bool inline_)
{
	json_sep(j);
	tb_putc(j->out, bracket);
	j->depth++;
	j->first[j->depth] = true;
	j->inline_[j->depth] = inline_ || j->inline_[j->depth - 1];
	j->close[j->depth] = bracket == '{' ? '}' : ']';
}

void
json_close(struct json *j)
{
	bool empty = j->first[j->depth], was_inline = j->inline_[j->depth];
	char close = j->close[j->depth];

	j->depth--;
	if (!empty && !was_inline) {
		tb_putc(j->out, '\n');
		for (int i = 0; i < j->depth; i++)
			tb_puts(j->out, "  ");
	}
	tb_putc(j->out, close);
}

void
json_str(struct json *j, const char *s)
{
	json_sep(j);
	if (s)
		tb_json_string(j->out, s);
	else
		tb_puts(j->out, "null");
}

void
json_u64(struct json *j, uint64_t v)
{
	json_sep(j);
	tb_printf(j->out, "%llu", (unsigned long long)v);
}

void
json_bool(struct json *j, bool v)
{
	json_sep(j);
	tb_puts(j->out, v ? "true" : "false");
}

void
json_null(struct json *j)
{
	json_sep(j);
	tb_puts(j->out, "null");
}

void
json_line(struct json *j, uint32_t line)
{
	if (line)
		json_u64(j, line);
	else
		json_null(j);
}

void
json_end(struct json *j)
{
	tb_putc(j->out, '\n');
}
