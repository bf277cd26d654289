/*
 * validate_values.c - the schema's values: keys checked against the known
 * ones, typed scalars, lists and paths, each reported at its line and
 * column; what validate.c and validate_egress.c build on.
 */
#include "validate_int.h"

static size_t
edit_distance(const char *s, const char *t)
{
	size_t ls = strlen(s), lt = strlen(t), row[64], prev, tmp;

	if (ls >= 63 || lt >= 63)
		return 99;
	for (size_t j = 0; j <= lt; j++)
		row[j] = j;
	for (size_t i = 1; i <= ls; i++) {
		prev = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lt; j++) {
			size_t best = prev + (s[i - 1] != t[j - 1]);

			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			tmp = row[j];
			row[j] = best;
			prev = tmp;
		}
	}
	return row[lt];
}

const char *
validate_suggest(const char *word, const char *const *candidates)
{
	const char *best = NULL;
	size_t len = strlen(word), best_d = 99, limit = len < 3 ? 0 : len < 6 ? 1 : 2;

	for (size_t i = 0; candidates[i]; i++) {
		size_t dist = edit_distance(word, candidates[i]);

		if (dist < best_d) {
			best_d = dist;
			best = candidates[i];
		}
	}
	return best_d <= limit && best_d > 0 ? best : NULL;
}

bool
in_list(const char *word, const char *const *list)
{
	for (size_t i = 0; list[i]; i++)
		if (!strcmp(word, list[i]))
			return true;
	return false;
}

/*
 * Check that every key of mapping M is a string, known and unique.  WHERE
 * names the block in messages; OTHER, when a key is unknown here but known
 * in the block OTHER_NAME, turns the suggestion into "it belongs in ...".
 */
void
check_keys(struct vctx *c, const struct ynode *m, const char *where, const char *const *known,
	   const char *const *other, const char *other_name)
{
	for (size_t i = 0; i < m->n_pairs; i++) {
		const struct ynode *k = m->pairs[i].key;
		const char *hint;

		if (k->kind != YNODE_SCALAR || k->type == YSCALAR_NULL) {
			diag_error(c->d, k->loc, "keys in %s must be names, got %s", where,
				   ynode_describe(c->a, k));
			continue;
		}
		for (size_t j = 0; j < i; j++) {
			const struct ynode *prev = m->pairs[j].key;

			if (prev->kind == YNODE_SCALAR && prev->len == k->len &&
			    !memcmp(prev->value, k->value, k->len)) {
				diag_error(c->d, k->loc,
					   "duplicate key '%s' in %s (first at line %u)", k->value,
					   where, prev->loc.line);
				break;
			}
		}
		if (in_list(k->value, known))
			continue;
		if (other && in_list(k->value, other)) {
			diag_error(c->d, k->loc, "unknown key '%s' in %s (it belongs in %s)",
				   k->value, where, other_name);
			continue;
		}
		hint = validate_suggest(k->value, known);
		if (hint)
			diag_error(c->d, k->loc, "unknown key '%s' in %s (did you mean '%s'?)",
				   k->value, where, hint);
		else
			diag_error(c->d, k->loc, "unknown key '%s' in %s", k->value, where);
	}
}

static bool
tag_is(const struct ynode *n, const char *name)
{
	return !n->tag ||
	       !strcmp(n->tag + (strncmp(n->tag, "tag:yaml.org,2002:", 18) ? 0 : 18), name);
}

bool
is_string(const struct ynode *n)
{
	return n->kind == YNODE_SCALAR && n->type == YSCALAR_STRING && tag_is(n, "str");
}

/* "got X", with a hint for the usual YAML traps. */
const char *
got(struct vctx *c, const struct ynode *n, bool want_bool)
{
	const char *what = ynode_describe(c->a, n);

	if (n->kind == YNODE_SCALAR && n->type == YSCALAR_NULL && !strcmp(n->value, "~"))
		return "got null (a bare ~ is null in YAML; write \"~\" for the home directory)";
	if (n->kind == YNODE_SCALAR && n->type == YSCALAR_NULL)
		return "got null (remove the key to use the default)";
	if (want_bool && n->kind == YNODE_SCALAR && n->type == YSCALAR_STRING) {
		static const char *const yaml11[] = {"yes", "no", "on", "off", "y", "n", NULL};

		for (size_t i = 0; yaml11[i]; i++)
			if (!strcasecmp(n->value, yaml11[i]))
				return arena_printf(c->a,
						    "got %s (YAML 1.2 booleans are only true "
						    "and false)",
						    what);
		if (n->style != YSTYLE_PLAIN &&
		    (!strcasecmp(n->value, "true") || !strcasecmp(n->value, "false")))
			return arena_printf(c->a, "got %s (quoted, so not a boolean)", what);
	}
	return arena_printf(c->a, "got %s", what);
}

bool
want_bool(struct vctx *c, const struct ynode *n, const char *what, struct ir_bool *out)
{
	if (n->kind == YNODE_SCALAR && n->type == YSCALAR_BOOL && tag_is(n, "bool")) {
		out->value = n->bval;
		out->loc = n->loc;
		return true;
	}
	diag_error(c->d, n->loc, "%s must be true or false, %s", what, got(c, n, true));
	return false;
}

bool
has_control(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return true;
	return false;
}

/* A non-empty string without control characters. */
bool
want_string(struct vctx *c, const struct ynode *n, const char *what, struct ir_str *out)
{
	if (!is_string(n)) {
		diag_error(c->d, n->loc, "%s must be a string, %s", what, got(c, n, false));
		return false;
	}
	if (n->len == 0) {
		diag_error(c->d, n->loc, "%s is empty", what);
		return false;
	}
	if (has_control(n->value, n->len)) {
		diag_error(c->d, n->loc, "%s contains a control character", what);
		return false;
	}
	out->s = n->value;
	out->loc = n->loc;
	return true;
}

/* Any scalar but null, as its text: for arguments and environment values. */
bool
want_text(struct vctx *c, const struct ynode *n, const char *what, struct ir_str *out)
{
	if (n->kind != YNODE_SCALAR || n->type == YSCALAR_NULL) {
		diag_error(c->d, n->loc, "%s must be a string, %s", what, got(c, n, false));
		return false;
	}
	if (memchr(n->value, '\0', n->len)) {
		diag_error(c->d, n->loc, "%s contains a NUL byte", what);
		return false;
	}
	out->s = n->value;
	out->loc = n->loc;
	return true;
}

bool
want_uint(struct vctx *c, const struct ynode *n, const char *what, uint64_t min, uint64_t max,
	  struct ir_u64 *out)
{
	if (n->kind != YNODE_SCALAR || n->type != YSCALAR_INT || !tag_is(n, "int")) {
		diag_error(c->d, n->loc, "%s must be an integer, %s", what, got(c, n, false));
		return false;
	}
	if (n->negative || n->ival < min || n->ival > max) {
		diag_error(c->d, n->loc, "%s must be between %llu and %llu, got %s", what,
			   (unsigned long long)min, (unsigned long long)max, n->value);
		return false;
	}
	out->value = n->ival;
	out->present = true;
	out->loc = n->loc;
	return true;
}

bool
want_seq(struct vctx *c, const struct ynode *n, const char *what)
{
	if (n->kind == YNODE_SEQ && tag_is(n, "seq"))
		return true;
	if (is_string(n))
		diag_error(c->d, n->loc,
			   "%s must be a list, %s (write [%s%s%s] for a one-item list)", what,
			   got(c, n, false), n->style == YSTYLE_PLAIN ? "" : "\"", n->value,
			   n->style == YSTYLE_PLAIN ? "" : "\"");
	else
		diag_error(c->d, n->loc, "%s must be a list, %s", what, got(c, n, false));
	return false;
}

bool
want_map(struct vctx *c, const struct ynode *n, const char *what)
{
	if (n->kind == YNODE_MAP && tag_is(n, "map"))
		return true;
	diag_error(c->d, n->loc, "%s must be a mapping, %s", what, got(c, n, false));
	return false;
}

bool
want_env_name(struct vctx *c, const struct ynode *n, const char *what, struct ir_str *out)
{
	if (!want_string(c, n, what, out))
		return false;
	if (!env_name_ok(out->s)) {
		diag_error(c->d, n->loc,
			   "%s: '%s' is not an environment variable name ([A-Za-z_][A-Za-z0-9_]*)",
			   what, out->s);
		return false;
	}
	return true;
}

/* A list of strings of KIND, duplicates dropped (the first one stays). */
void
want_strlist(struct vctx *c, const struct ynode *n, const char *what, enum list_kind kind,
	     struct ir_strlist *out)
{
	out->present = true;
	out->loc = n->loc;
	out->n = 0;
	if (!want_seq(c, n, what))
		return;
	for (size_t i = 0; i < n->n_items; i++) {
		const struct ynode *it = n->items[i];
		const char *iwhat = arena_printf(c->a, "%s[%zu]", what, i);
		struct ir_str s = {0};
		bool dup = false;

		if (kind == LIST_ENV_NAME) {
			if (!want_env_name(c, it, iwhat, &s))
				continue;
		} else if (!want_string(c, it, iwhat, &s)) {
			continue;
		}
		if (kind == LIST_BASENAME && !strcmp(s.s, "*")) {
			/* every name: below */
		} else if (kind == LIST_BASENAME) {
			if (strchr(s.s, '/') || strchr(s.s, '\\') || !strcmp(s.s, ".") ||
			    !strcmp(s.s, "..")) {
				diag_error(c->d, it->loc,
					   "%s must be a single file name like '.git', not '%s'",
					   iwhat, s.s);
				continue;
			}
			if (s.s[0] != '.')
				diag_warning(c->d, it->loc,
					     "%s '%s' does not start with '.', so it never "
					     "matches a dotfile",
					     iwhat, s.s);
		}
		for (size_t j = 0; j < out->n && !dup; j++)
			dup = !strcmp(out->v[j].s, s.s);
		if (!dup)
			*ARENA_PUSH(c->a, out->v, out->n, out->cap) = s;
	}
}

/*
 * Turn a written path into its symbolic form.  '~' and '~/' mean the home
 * directory, a leading '/' an absolute path, anything else a path relative to
 * RELATIVE_TO.  "." and empty segments go; ".." stays, because only the
 * machine knows what it climbs through (symlinks) and the runtime resolves it.
 */
bool
parse_path(struct vctx *c, const struct ynode *n, const char *what, enum path_base relative_to,
	   struct ir_path *out)
{
	static const char *const base_name[] = {"", "{CWD}", "{HOME}", "{LAUNCH}"};
	struct ir_str s = {0};
	const char *p;
	char *rel, *w;

	if (!want_string(c, n, what, &s))
		return false;
	p = s.s;
	out->written = s.s;
	out->loc = n->loc;
	if (strchr(p, '$'))
		diag_warning(c->d, n->loc,
			     "%s '%s' contains '$': variables are never expanded, so this is a "
			     "literal path",
			     what, p);
	if (p[0] == '~' && (p[1] == '\0' || p[1] == '/')) {
		out->base = PATH_HOME;
		p++;
	} else if (p[0] == '~') {
		diag_error(c->d, n->loc,
			   "%s '%s': only '~' and '~/...' name the home directory; write the "
			   "absolute path",
			   what, p);
		return false;
	} else if (p[0] == '/') {
		out->base = PATH_ABSOLUTE;
	} else {
		out->base = relative_to;
	}
	rel = w = arena_alloc(c->a, strlen(p) + 1);
	while (*p) {
		const char *seg = p;
		size_t len;

		while (*p && *p != '/')
			p++;
		len = (size_t)(p - seg);
		if (*p == '/')
			p++;
		if (len == 0 || (len == 1 && seg[0] == '.'))
			continue;
		if (w != rel)
			*w++ = '/';
		memcpy(w, seg, len);
		w += len;
	}
	*w = '\0';
	out->rel = rel;
	if (out->base == PATH_ABSOLUTE)
		out->symbolic = arena_printf(c->a, "/%s", rel);
	else if (*rel)
		out->symbolic = arena_printf(c->a, "%s/%s", base_name[out->base], rel);
	else
		out->symbolic = base_name[out->base];
	return true;
}

/* Grants that expose far more than a coding task needs earn a warning. */
static void
warn_broad_grant(struct vctx *c, const struct ir_path *p, const char *what)
{
	const char *exposure = refuse_too_wide(p->symbolic, "{HOME}", false);

	/* Only what the scan finds at launch is hidden: say what a writable
	 * grant still lets the sandbox make. */
	if (exposure)
		diag_warning(c->d, p->loc, "%s '%s' grants %s (%s)", what, p->written, exposure,
			     strstr(what, ".read_paths")
				 ? "the dotfiles that exist at launch stay hidden"
				 : "the dotfiles that exist at launch stay hidden; new ones can be "
				   "made, except the protected paths of docs/protect.md");
}

static void
pathlist_add(struct vctx *c, struct ir_pathlist *out, const struct ir_path *p)
{
	for (size_t j = 0; j < out->n; j++)
		if (!strcmp(out->v[j].symbolic, p->symbolic))
			return;
	*ARENA_PUSH(c->a, out->v, out->n, out->cap) = *p;
}

/*
 * A write_paths entry written {path: P, copy_on_write: true}: the agent
 * writes into a copy of P and the host's tree stays as it was.  With
 * copy_on_write false it is an ordinary entry.
 */
static bool
want_cow_entry(struct vctx *c, const struct ynode *n, const char *what, struct ir_path *p,
	       bool *cow)
{
	static const char *const keys[] = {"path", "copy_on_write", NULL};
	const struct ynode *v;
	struct ir_bool b = {0};

	check_keys(c, n, what, keys, NULL, NULL);
	if ((v = ynode_get(n, "copy_on_write")) &&
	    want_bool(c, v, arena_printf(c->a, "%s.copy_on_write", what), &b))
		*cow = b.value;
	if (!(v = ynode_get(n, "path"))) {
		diag_error(c->d, n->loc, "%s needs a 'path'", what);
		return false;
	}
	return parse_path(c, v, arena_printf(c->a, "%s.path", what), PATH_CWD, p);
}

/* COW, when not NULL, takes the {path, copy_on_write: true} entries. */
void
want_pathlist(struct vctx *c, const struct ynode *n, const char *what, struct ir_pathlist *out,
	      bool is_grant, struct ir_pathlist *cow)
{
	out->present = true;
	out->loc = n->loc;
	out->n = 0;
	if (!want_seq(c, n, what))
		return;
	for (size_t i = 0; i < n->n_items; i++) {
		const char *iwhat = arena_printf(c->a, "%s[%zu]", what, i);
		struct ir_path p = {0};
		bool is_cow = false;

		if (cow && n->items[i]->kind == YNODE_MAP) {
			if (!want_cow_entry(c, n->items[i], iwhat, &p, &is_cow))
				continue;
		} else if (!parse_path(c, n->items[i], iwhat, PATH_CWD, &p)) {
			continue;
		}
		if (is_grant)
			warn_broad_grant(c, &p, iwhat);
		if (is_cow) {
			cow->present = true;
			cow->loc = n->loc;
			pathlist_add(c, cow, &p);
		} else {
			pathlist_add(c, out, &p);
		}
	}
}
