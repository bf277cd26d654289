/*
 * emit.h - the emitters: pure functions from a const policy to bytes.
 *
 * An emitter never reads the YAML, the filesystem or the environment.  It
 * appends its output to OUT and returns 0, or reports why the policy cannot
 * be expressed for the target to D (with the YAML location) and returns -1;
 * OUT is then to be discarded.
 */
#ifndef OMNIBOX_EMIT_H
#define OMNIBOX_EMIT_H

#include <stdbool.h>

#include "../compiler/policy.h"
#include "../compiler/base/textbuf.h"

/*
 * The platforms omnibox-run launches on, then the container engines'
 * forms: an OCI bundle's config.json and Kubernetes objects.  Queries
 * answer for the platforms (TARGET_PLATFORMS of them).
 */
enum target {
	TARGET_LINUX,
	TARGET_DARWIN,
	TARGET_WINDOWS,
	TARGET_OCI,
	TARGET_KUBERNETES,
	TARGET_COUNT
};
#define TARGET_PLATFORMS 3

#define TARGET_BIT(t) (1u << (t))
#define TARGET_ALL_BITS                                                                            \
	(TARGET_BIT(TARGET_LINUX) | TARGET_BIT(TARGET_DARWIN) | TARGET_BIT(TARGET_WINDOWS))

struct emitter {
	const char *name; /* --emit=NAME */
	const char *file; /* its file name in an output directory */
	unsigned targets; /* TARGET_BIT()s it applies to */
	bool per_target;  /* differs by target: lives in DIR/<target>/ */
	bool binary;	  /* refuses a terminal */
	int (*emit)(const struct policy *p, enum target t, struct diag *d, struct textbuf *out);
	/* Optional: this output into OUT and the next emitter's into NEXT from
	 * one build, for a caller that wants both (the same bytes as each alone). */
	int (*emit_pair)(const struct policy *p, enum target t, struct diag *d,
			 struct textbuf *out, struct textbuf *next);
};

/* Every emitter, in a fixed order; the list ends with a NULL name. */
extern const struct emitter emitters[];

const struct emitter *emitter_find(const char *name);

/* The default --emit for a target. */
const struct emitter *emitter_default(enum target t);

const char *target_name(enum target t);

/* Parse "linux", "darwin", "windows", "oci", "kubernetes"; -1 when unknown. */
int target_parse(const char *name);

/* The sandbox backend a target uses, and whether the policy can run there. */
enum sandbox_type target_backend(enum target t);

/* Is the sandbox type S one of target T's own backends (linux_bwrap and
 * linux_landlock are Linux's)?  auto and none are no backend. */
bool target_has_backend(enum target t, enum sandbox_type s);

/*
 * Check that P's sandbox type fits target T (a pinned linux_bwrap policy
 * has no darwin form).  Reports to D (unless NULL) with the location of `type:`.
 */
int emit_check_target(const struct policy *p, enum target t, struct diag *d);

int emit_ir(const struct policy *p, enum target t, struct diag *d, struct textbuf *out);
int emit_egress(const struct policy *p, enum target t, struct diag *d, struct textbuf *out);
int emit_bwrap(const struct policy *p, enum target t, struct diag *d, struct textbuf *out);
int emit_landlock(const struct policy *p, enum target t, struct diag *d, struct textbuf *out);
int emit_env(const struct policy *p, enum target t, struct diag *d, struct textbuf *out);
int emit_oci(const struct policy *p, enum target t, struct diag *d, struct textbuf *out);
int emit_kubernetes(const struct policy *p, enum target t, struct diag *d, struct textbuf *out);

#endif
