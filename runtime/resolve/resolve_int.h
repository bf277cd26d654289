/*
 * resolve_int.h - the resolver's insides, shared by its files (resolve.h
 * is the interface):
 *
 *   resolve.c          the workspace, grants, the command, the environment,
 *                      and the launch as a whole
 *   resolve_base.c     errors and notes, paths, kept descriptors, grants and
 *                      writable roots: what every other file builds on
 *   resolve_masks.c    the dotfile scan's masks, mask_paths, denied sockets
 *   resolve_protect.c  the protected paths and the repositories' git entries
 *   resolve_private.c  write_files: a private directory each
 */
#ifndef OMNIBOX_RESOLVE_INT_H
#define OMNIBOX_RESOLVE_INT_H

#include "runtime/resolve/resolve.h"

#include "compiler/base/textesc.h"
#include "compiler/decide/env.h"
#include "compiler/decide/hidden.h"
#include "compiler/decide/refuse.h"
#include "compiler/decide/workspace.h"
#include "compiler/decide/protect.h"
#include "compiler/decide/secrets.h"
#include "emitters/sbpl.h"
#include "runtime/resolve/command.h"
#include "runtime/resolve/copy.h"
#include "runtime/resolve/gitguard.h"
#include "runtime/resolve/gitindex.h"
#include "runtime/resolve/perm.h"
#include "runtime/resolve/scan.h"
#include "runtime/resolve/walk.h"
#include "runtime/resolve/writeback.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct rctx {
	struct arena *a;
	const struct launch_request *rq;
	struct launch_plan *plan;
	struct diag *d; /* every error goes here (resolve.h) */
	char err[2048]; /* the message of a helper that fails at no position */
	bool linux_target;
	bool ws_writable;
	const char **roots; /* the writable roots, canonical */
	size_t n_roots, cap_roots;
	/* Where a link may have been planted: the writable roots and the
	 * workspace, which another launch (of another policy) may have written
	 * even when this one reads it only. */
	const char **link_roots;
	size_t n_link_roots;
	struct bwrap_grant *grants;
	size_t n_grants, cap_grants;
	struct bwrap_mask *masks;
	size_t n_masks, cap_masks;
	const char **git_tops; /* scan roots holding a .git directory */
	size_t n_git_tops;
	struct bwrap_grant *reexpose;
	size_t n_reexpose, cap_reexpose;
	struct bwrap_grant *protects;
	size_t n_protects, cap_protects;
	int protect_rc;
	size_t n_gitdirs;
	bool collect_only; /* macOS: protected paths are listed for the profile */
	size_t cap_protected;
	const char **sockets;
	size_t n_sockets, cap_sockets;
	struct bwrap_grant *command_dirs;
	size_t n_command_dirs, cap_command_dirs;
	struct bwrap_grant *pins;
	size_t n_pins, cap_pins;
	size_t cap_command_dir_names, cap_placeholders, cap_notes, cap_skipped;
	size_t cap_writebacks;
	struct bwrap_grant *private_home; /* NULL: none */
	const char **ca_bundles;
	size_t n_ca_bundles;
};

/* No position: a default, the machine, the command line. */
extern const struct loc nowhere;

/* resolve_base.c */
void add_grant(struct rctx *r, const char *path, int fd, bool writable, bool must_exist,
	       const char *what, uint32_t line);
void copy_list(struct rctx *r, struct ir_pathlist *l);
/* The error of a setting written at LOC (a caret under it), or of none:
 * into the diagnostics.  -1. */
int fail(struct rctx *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int fail_at(struct rctx *r, struct loc loc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void keep_fd(struct rctx *r, int fd);
char *lexical_of(struct rctx *r, const struct ir_path *p, const char *ws);
struct loc loc_on_line(const struct ir_pathlist *l, uint32_t line, const char *path);
void note(struct rctx *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int open_checked(struct rctx *r, const char *path, const char *what, struct loc loc, unsigned flags,
		 struct walk_result *w);
char *path_dirname(struct arena *a, const char *path);
char *path_join(struct arena *a, const char *dir, const char *name);
void set_path(struct rctx *r, struct ir_path *entry, const char *path);
const char *escaped(struct rctx *r, const char *s);
const char *spell(struct rctx *r, const char *path);
bool visible_inside(struct rctx *r, const char *path);
bool writable_inside(struct rctx *r, const char *path);

/* resolve_masks.c */
void add_mask(struct rctx *r, const char *path, bool dir, const char *reason);
int pin_parents(struct rctx *r, const char *path, struct loc loc);
int resolve_mask_paths(struct rctx *r);
int resolve_sockets(struct rctx *r);
int run_scan(struct rctx *r);
void sort_masks(struct rctx *r);

/* resolve_protect.c */
bool masked(struct rctx *r, const char *path);
void protect_repositories(struct rctx *r, const char *const *roots, size_t n);
int resolve_protected(struct rctx *r);
size_t writable_roots(struct rctx *r, const char **roots);

/* resolve_private.c */
int private_parents(struct rctx *r);

#endif
