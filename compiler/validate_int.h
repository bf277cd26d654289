/*
 * validate_int.h - the schema's insides, shared by its files (validate.h is
 * the interface):
 *
 *   validate.c         protected paths, limits, os_env and its sandbox,
 *                      terminals, the document
 *   validate_values.c  keys, typed values, lists and paths: what the other
 *                      two build on
 *   validate_egress.c  egress rules, credentials and git_ssh
 */
#ifndef OMNIBOX_VALIDATE_INT_H
#define OMNIBOX_VALIDATE_INT_H

#include "ir.h"
#include "decide/llbackend.h"
#include "decide/refuse.h"
#include "decide/protect.h"
#include "decide/secrets.h"
#include "decide/transparent.h"
#include "validate.h"
#include "yaml_tree.h"
#include "decide/env.h"
#include <stdlib.h>
#include <string.h>

struct vctx {
	struct arena *a;
	struct diag *d;
	const struct ydoc *doc;
};

enum list_kind { LIST_STRING, LIST_ENV_NAME, LIST_BASENAME };

/* validate_values.c */
bool in_list(const char *word, const char *const *list);
void check_keys(struct vctx *c, const struct ynode *m, const char *where, const char *const *known,
		const char *const *other, const char *other_name);
bool is_string(const struct ynode *n);
const char *got(struct vctx *c, const struct ynode *n, bool want_bool);
bool want_bool(struct vctx *c, const struct ynode *n, const char *what, struct ir_bool *out);
bool has_control(const char *s, size_t len);
bool want_string(struct vctx *c, const struct ynode *n, const char *what, struct ir_str *out);
bool want_text(struct vctx *c, const struct ynode *n, const char *what, struct ir_str *out);
bool want_uint(struct vctx *c, const struct ynode *n, const char *what, uint64_t min, uint64_t max,
	       struct ir_u64 *out);
bool want_seq(struct vctx *c, const struct ynode *n, const char *what);
bool want_map(struct vctx *c, const struct ynode *n, const char *what);
bool want_env_name(struct vctx *c, const struct ynode *n, const char *what, struct ir_str *out);
void want_strlist(struct vctx *c, const struct ynode *n, const char *what, enum list_kind kind,
		  struct ir_strlist *out);
bool parse_path(struct vctx *c, const struct ynode *n, const char *what, enum path_base relative_to,
		struct ir_path *out);
void want_pathlist(struct vctx *c, const struct ynode *n, const char *what, struct ir_pathlist *out,
		   bool is_grant, struct ir_pathlist *cow);

/* validate_egress.c */
void want_credentials(struct vctx *c, const struct ynode *n, const char *what, struct sandbox *sb);
void want_egress(struct vctx *c, const struct ynode *n, const char *what, struct sandbox *sb);
void want_git_ssh(struct vctx *c, const struct ynode *n, const char *what, struct sandbox *sb);

#endif
