/*
 * validate_int.h - the schema's insides, shared by its files (validate.h is
 * the interface):
 *
 *   validate.c         keys, typed values, paths, protected paths, limits,
 *                      os_env and its sandbox, terminals, the document
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

/* validate.c */
void check_keys(struct vctx *c, const struct ynode *m, const char *where, const char *const *known,
		const char *const *other, const char *other_name);
const char *got(struct vctx *c, const struct ynode *n, bool want_bool);
bool is_string(const struct ynode *n);
bool parse_path(struct vctx *c, const struct ynode *n, const char *what, enum path_base relative_to,
		struct ir_path *out);
bool want_bool(struct vctx *c, const struct ynode *n, const char *what, struct ir_bool *out);
bool want_env_name(struct vctx *c, const struct ynode *n, const char *what, struct ir_str *out);
bool want_map(struct vctx *c, const struct ynode *n, const char *what);
bool want_seq(struct vctx *c, const struct ynode *n, const char *what);
bool want_string(struct vctx *c, const struct ynode *n, const char *what, struct ir_str *out);
void want_strlist(struct vctx *c, const struct ynode *n, const char *what, enum list_kind kind,
		  struct ir_strlist *out);
bool want_uint(struct vctx *c, const struct ynode *n, const char *what, uint64_t min, uint64_t max,
	       struct ir_u64 *out);

/* validate_egress.c */
void want_credentials(struct vctx *c, const struct ynode *n, const char *what, struct sandbox *sb);
void want_egress(struct vctx *c, const struct ynode *n, const char *what, struct sandbox *sb);
void want_git_ssh(struct vctx *c, const struct ynode *n, const char *what, struct sandbox *sb);

#endif
