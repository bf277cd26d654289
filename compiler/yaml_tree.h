/*
 * yaml_tree.h - a YAML document as a small tree with source positions.
 *
 * libyaml's event stream is turned into nodes that keep where they started
 * and the style they were written in, so the validator can tell the plain
 * scalar `true` from the string "true" and point at either.  Scalars are
 * typed the YAML 1.2 way: only true/false (any case) are booleans,
 * null/Null/NULL/~/empty are null, decimal digits are integers, everything
 * else is a string.  Aliases share the anchored node (no copies, so an alias
 * bomb costs nothing); an alias to a node still being built is an error.
 */
#ifndef OMNIBOX_YAML_TREE_H
#define OMNIBOX_YAML_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/diag.h"
#include "base/loc.h"

enum ynode_kind { YNODE_SCALAR, YNODE_SEQ, YNODE_MAP };
enum yscalar_type { YSCALAR_STRING, YSCALAR_NULL, YSCALAR_BOOL, YSCALAR_INT };
enum yscalar_style { YSTYLE_PLAIN, YSTYLE_SINGLE, YSTYLE_DOUBLE, YSTYLE_LITERAL, YSTYLE_FOLDED };

struct ypair {
	struct ynode *key, *value;
};

struct ynode {
	enum ynode_kind kind;
	struct loc loc;	 /* start; len covers a single-line scalar */
	size_t off;	 /* byte offset of the start in the source */
	size_t end_off;	 /* byte offset just past the end */
	const char *tag; /* explicit tag ("tag:yaml.org,2002:str", "!x"), or NULL */
	bool busy;	 /* being built (alias loop detection) */

	/* YNODE_SCALAR */
	enum yscalar_type type;
	enum yscalar_style style;
	const char *value; /* NUL-terminated; may also hold NULs (use len) */
	size_t len;
	bool bval;
	uint64_t ival; /* YSCALAR_INT: non-negative decimal */
	bool negative; /* YSCALAR_INT with a leading '-' */

	/* YNODE_SEQ */
	struct ynode **items;
	size_t n_items, cap_items;

	/* YNODE_MAP */
	struct ypair *pairs;
	size_t n_pairs, cap_pairs;
};

struct ydoc {
	const char *text;
	size_t len;
	struct ynode *root; /* NULL for an empty document */
};

/*
 * Parse LEN bytes of YAML.  Returns 0 and fills *DOC (nodes owned by A), or
 * -1 after reporting the problem to D (libyaml's syntax errors, a second
 * document, an alias loop, nesting deeper than 64, input over 16 MiB).
 */
int ydoc_load(struct arena *a, struct diag *d, const char *text, size_t len, struct ydoc *doc);

/*
 * The source position of bytes [OFF, OFF+LEN) of scalar N's value, for
 * errors inside a scalar (an egress rule's bad method).  Exact for plain and
 * quoted scalars written on one line; the scalar's own position otherwise.
 */
struct loc ydoc_scalar_loc(const struct ydoc *doc, const struct ynode *n, size_t off, size_t len);

/* The value for KEY in mapping N, or NULL. */
struct ynode *ynode_get(const struct ynode *n, const char *key);

/* The key node KEY in mapping N (for its position), or NULL. */
struct ynode *ynode_key(const struct ynode *n, const char *key);

/* "a string", "a list", "null", "a boolean (true)", ... for messages. */
const char *ynode_describe(struct arena *a, const struct ynode *n);

#endif
