/*
 * json.h - a small pretty-printing JSON writer for the IR emitter.
 *
 * Objects and arrays are opened and closed explicitly; commas, newlines and
 * two-space indentation follow.  A container opened "inline" prints on one
 * line, for small records like {"value": true, "line": 12}.
 */
#ifndef OMNIBOX_JSON_H
#define OMNIBOX_JSON_H

#include <stdbool.h>
#include <stdint.h>

#include "../compiler/base/textbuf.h"

#define JSON_MAX_DEPTH 32

struct json {
	struct textbuf *out;
	int depth;
	bool first[JSON_MAX_DEPTH];
	bool inline_[JSON_MAX_DEPTH];
	char close[JSON_MAX_DEPTH];
	bool after_key;
};

void json_init(struct json *j, struct textbuf *out);
void json_key(struct json *j, const char *key);
void json_open(struct json *j, char bracket, bool inline_);
void json_close(struct json *j);
void json_str(struct json *j, const char *s); /* NULL prints null */
void json_u64(struct json *j, uint64_t v);
void json_bool(struct json *j, bool v);
void json_null(struct json *j);
/* A source line: its number, or null for 0 (a default). */
void json_line(struct json *j, uint32_t line);
/* End of document: a final newline. */
void json_end(struct json *j);

#endif
