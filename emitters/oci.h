/*
 * oci.h - an OCI runtime-spec config.json for a policy (--target=oci).
 *
 * The bundle's root filesystem is the user's (root.path "rootfs", read-only):
 * the system directories are the image's.  Everything the policy says of
 * the host's files is the bwrap backend's mount view, the very list
 * bwrap_mounts_build() records (grants, the private home, masks, pins,
 * protected paths), turned into OCI mounts; what a bundle cannot hold is
 * compiler/decide/container.h's to say, and --explain --target=oci says it.
 *
 * Symbolic (--emit=oci): {CWD} and {HOME} stay, and what only a launch can
 * know (the dotfile scan, the protected paths found, the environment's
 * values) is said in "annotations".  Resolved (--resolve --target=oci):
 * the resolver's canonical paths and masks, the command, the environment,
 * and for a caller other than root the rootless form (a user namespace
 * mapping uid and gid 0 to the caller's).
 */
#ifndef OMNIBOX_OCI_H
#define OMNIBOX_OCI_H

#include <stdbool.h>
#include <stddef.h>

#include "bwrap.h"
#include "compiler/base/diag.h"
#include "compiler/base/textbuf.h"
#include "compiler/policy.h"

/* The bundle's root filesystem, beside config.json. */
#define OCI_ROOTFS "rootfs"
/* The scratch dir inside ($TMPDIR): a tmpfs of the bundle's own. */
#define OCI_SCRATCH "/tmp"

struct oci_context {
	const struct bwrap_context *bw; /* the mount view: symbolic or resolved */
	char *const *env;		/* resolved: NAME=VALUE, NULL-terminated; NULL: symbolic */
	bool rootless;			/* map uid and gid 0 inside to UID and GID */
	unsigned uid, gid;
};

/* config.json for P in context C, appended to OUT.  Returns 0, or -1
 * after reporting to D why P has no OCI form. */
int oci_build(const struct policy *p, const struct oci_context *c, struct diag *d,
	      struct textbuf *out);

#endif
