/*
 * bwrap.h - the bubblewrap argument vector of a policy (spec/linux.md).
 *
 * One builder serves two callers.  `omnibox-compile --emit=bwrap` calls it
 * with a symbolic context: machine-specific values stay placeholders
 * ({CWD}, {HOME}, {SCRATCH}, {FD}, ...) and what only the launch can know
 * (the dotfile scan, the command's directory) is described in comments, so
 * the text is identical on every machine.  omnibox-run (and --resolve)
 * call it with the facts the resolver found (runtime/resolve/resolve.h):
 * canonical paths, the descriptor each mount is made from, the masks.
 * Either way the builder touches nothing outside its arguments, and the
 * argv it writes, omnibox-init's arguments included, is the one that runs.
 */
#ifndef OMNIBOX_BWRAP_H
#define OMNIBOX_BWRAP_H

#include <stdbool.h>
#include <stddef.h>

#include "compiler/policy.h"
#include "compiler/base/textbuf.h"
#include "compiler/decide/paths.h"

/* Where the sandbox's first process (omnibox-init) is mounted inside. */
#define BWRAP_INIT_PATH "/.omnibox/init"

/* bwrap starts it with this option and its ready socket's descriptor: its
 * arguments come on that socket (runtime/launch/handover.h). */
#define BWRAP_INIT_ARGS_FROM "--args-from"

/* Where bwrap binds the host's root, read-only, for omnibox-init to clone
 * the system files of /etc from (--system-root); unmounted before anything
 * else runs. */
#define BWRAP_SYSTEM_ROOT "/.omnibox/host"

/* The egress proxy's socket, in the scratch dir. */
#define BWRAP_PROXY_SOCKET "omnibox-proxy.sock"

/*
 * The private home: the directory of the scratch dir bound writable at the
 * home directory when no grant (nor the workspace) is the home or a parent
 * of it.  Empty at launch but for the mount points of the grants below it,
 * it goes with the scratch dir; nothing written there reaches the host.
 */
#define BWRAP_PRIVATE_HOME ".omnibox-home"

/*
 * The system CA bundles clients read without asking the environment
 * (GnuTLS's wget and git, compiled-in paths), NULL-terminated, Debian's
 * first.  With egress_rules the session's bundle is bound read-only over
 * each one that exists here (followed to the regular file it names), so
 * they trust the session CA with no setting of their own.
 */
extern const char *const bwrap_ca_bundles[];

/* A bind mount: from a descriptor on the host, at PATH inside. */
struct bwrap_grant {
	const char *path; /* canonical (resolved) or symbolic */
	int fd;		  /* resolved: the descriptor (O_PATH) bwrap mounts; -1: "{FD}" */
	bool writable;
	bool must_exist;  /* the workspace and the scratch dir */
	const char *what; /* "write_paths", ... */
	uint32_t line;
	bool cow; /* bound from a private copy (copy_on_write) */
	/* Made at launch, with what the sandbox finds there: a directory that
	 * holds only its write_files (and what is bound below it), or a
	 * placeholder file holding this text (NULL: neither). */
	bool private_dir;
	const char *hold_text;
};

struct bwrap_mask {
	const char *path; /* canonical, absolute */
	bool is_dir;	  /* directory: empty read-only tmpfs; else /dev/null */
	bool have_parent; /* the directory it was found in is known: */
	unsigned long long parent_dev, parent_ino;
	/* A directory nothing is mounted below, as it was listed: omnibox-init
	 * mounts its tmpfs itself, on exactly this directory. */
	bool have_self;
	unsigned long long self_dev, self_ino;
	const char *reason; /* for the comment: "dotfile", "mask_paths (line 9)" */
};

struct bwrap_link {
	const char *path;   /* "/bin" */
	const char *target; /* "usr/bin" */
};

struct bwrap_context {
	bool resolved;	 /* the facts below come from the resolver */
	const char *cwd; /* the workspace */
	const char *home;
	const char *scratch; /* the private scratch dir */
	int init_fd;	     /* a descriptor on omnibox-init; -1: "{FD}" */
	/* omnibox-init needs a program interpreter (a dynamic build, as the
	 * sanitizers' is): the system directories and /dev stay bwrap's, in
	 * place before it runs, not made by it. */
	bool init_interp;

	/* Resolved only. */
	const struct bwrap_grant *grants; /* in mount order (bwrap_grants_order()) */
	size_t n_grants;
	const struct bwrap_mask *masks; /* dotfile hits and mask_paths, in order */
	size_t n_masks;
	const struct bwrap_grant *reexpose; /* grants inside a mask, bound again after it */
	size_t n_reexpose;
	const struct bwrap_grant *protects; /* protected paths, read-only onto themselves, last */
	size_t n_protects;
	const struct bwrap_grant *pins; /* directories above a mask_paths entry, on themselves */
	size_t n_pins;
	const char *const *sockets; /* deny_unix_socket_paths that exist now */
	size_t n_sockets;
	const struct bwrap_grant *command_dirs; /* install dirs of the command */
	size_t n_command_dirs;
	const struct bwrap_link *system_links; /* system dirs that are symlinks here */
	size_t n_system_links;
	/* The private home (BWRAP_PRIVATE_HOME bound writable at the home), or
	 * NULL: a grant or the workspace holds the home. */
	const struct bwrap_grant *private_home;
	/* egress_rules: the system CA bundles that exist here, canonical, which
	 * the session's bundle covers (symbolic: Debian's). */
	const char *const *ca_bundles;
	size_t n_ca_bundles;
	int seccomp_fd; /* omnibox-init's --seccomp-fd, -1: "{SECCOMP_FD}" */
	int status_fd;	/* --json-status-fd, -1: "{STATUS_FD}" */
	int ready_fd;	/* omnibox-init's --ready-fd, -1: "{READY_FD}" */
	int masks_fd;	/* omnibox-init's --masks-fd (bwrap_masks_list()), -1: "{MASKS_FD}" */
	bool tty;	/* the sandbox has a terminal of its own (omnibox-init --tty) */
	const char *exec_path;	    /* the command's canonical path */
	const char *proxy_port;	    /* egress: the relay's port, or NULL: "{PORT}" */
	const char *proxy_socket;   /* egress: the proxy's socket, or NULL */
	const char *const *command; /* the agent's command and arguments */
	size_t n_command;
};

/*
 * What omnibox-init's --masks-fd carries: one entry per mask and denied
 * socket of C, "f" (/dev/null, which omnibox-init binds there), "d" (a
 * tmpfs bwrap mounted, which omnibox-init makes read-only) or "t" (a
 * read-only tmpfs omnibox-init mounts), then "DEV:INO:" of the directory
 * it must be in ("-:-:" when unknown), for "t" then "DEV:INO:" of the
 * directory itself, then the path, each entry ended by a NUL byte.
 * Appended to OUT.
 */
void bwrap_masks_list(const struct bwrap_context *c, struct textbuf *out);

/* A context of placeholders, for --emit=bwrap. */
void bwrap_context_symbolic(struct bwrap_context *c);

/*
 * The grants of P in the order bwrap must mount them, for the symbolic
 * text and for the resolver alike: every ancestor before its descendants
 * (byte order), the same path granted twice merged into one mount that is
 * writable if either was.  Returns how many are kept; the merged-away
 * entries are moved after them (their descriptors are the caller's).
 */
size_t bwrap_grants_order(struct bwrap_grant *g, size_t n);

/*
 * The entry of P that holds the home as written: a write_paths or
 * read_paths entry (copy_on_write included) that is "~" or "/", or an
 * os_env.cwd of "~"; NULL when there is none.  With one the launch makes
 * no private home (the resolver decides again on canonical paths: a
 * workspace or a grant that is the home or a parent of it there).
 */
const struct ir_path *bwrap_home_written(const struct policy *p);

/*
 * Append the argument vector for P to TEXT (one argument per line, with
 * comments tracing each group to the YAML) and, when NUL is not NULL, to
 * NUL as NUL-separated arguments for `bwrap --args FD`, and to TAIL (when
 * not NULL) what follows bwrap's "--": omnibox-init, its options and the
 * command, for bwrap's own command line.  Returns 0, or -1 after reporting
 * to D why the policy has no bwrap form.
 */
int bwrap_build(const struct policy *p, const struct bwrap_context *c, struct diag *d,
		struct textbuf *text, struct textbuf *nul, struct textbuf *tail);

/*
 * The mounts of an argument vector, as bwrap_build() writes them: the very
 * calls that write the arguments record them, with the comment that
 * precedes each, so what --why answers is what the launch passes.
 */
enum bwrap_op {
	BWRAP_RO_BIND,	  /* --ro-bind, --ro-bind-try, --ro-bind-fd */
	BWRAP_BIND,	  /* --bind, --bind-fd */
	BWRAP_DEVNULL,	  /* --ro-bind /dev/null P: a file mask */
	BWRAP_TMPFS,	  /* --tmpfs */
	BWRAP_REMOUNT_RO, /* --remount-ro */
	BWRAP_PROC,	  /* --proc */
	BWRAP_DEV,	  /* --dev */
	BWRAP_SYMLINK,	  /* --symlink TARGET P */
	BWRAP_FS_WRITE,	  /* omnibox-init's --fs-write: Landlock lets it be written */
};

/* Which part of the argv a mount belongs to (the numbered comments). */
enum bwrap_part {
	BWRAP_PART_SYSTEM, /* 1. the host's system directories and files of /etc */
	BWRAP_PART_KERNEL, /* 2. /proc, /dev, /tmp */
	BWRAP_PART_HOME,   /* 2b. the private home */
	BWRAP_PART_LAUNCH, /* 3. the command's directories, omnibox-init; egress's files */
	BWRAP_PART_GRANT,  /* 4. grants (the scratch dir among them) */
	BWRAP_PART_MASK,   /* 5, 6. pins, masks, grants inside a mask, sockets */
	BWRAP_PART_PROTECT, /* 6b. protected paths */
	BWRAP_PART_INIT,   /* omnibox-init's own arguments (--fs-write) */
};

struct bwrap_mount {
	enum bwrap_op op;
	enum bwrap_part part;
	bool try_;	  /* --ro-bind-try: nothing when the source is missing */
	const char *src;  /* the host path, or NULL (a descriptor, a tmpfs) */
	const char *dest; /* inside */
	const char *why;  /* the comment before it */
	bool pin;	  /* a directory bound onto itself only so it cannot be renamed */
	bool own;	  /* the private home: the sandbox's own directory, nothing of the
			   * host's below it but what later mounts show */
	bool write_file;  /* a write_files grant (its private directory, or the file) */
	bool late;	  /* made by omnibox-init after all the others (the masks) */
};

struct bwrap_mounts {
	struct bwrap_mount *v;
	size_t n, cap;
	char *why;     /* the last comment, while building */
	bool keep_why; /* each mount gets its comment (bwrap_mounts_build()) */
};

/* The mounts of P in context C, in order, into M (bwrap_mounts_free()). */
int bwrap_mounts_build(const struct policy *p, const struct bwrap_context *c,
		       struct bwrap_mounts *m);
void bwrap_mounts_free(struct bwrap_mounts *m);

/* What the sandbox of M has at a path. */
struct bwrap_view {
	const struct bwrap_mount *mount; /* the mount that shows it, NULL: none */
	const struct bwrap_mount *rule;	 /* the one whose comment says why: MOUNT, or
					  * below a pin what the pin repeats */
	bool read_only;			 /* that mount is (or was remounted) read-only */
	bool landlock_write;		 /* below an --fs-write path */
	bool hidden;			 /* behind a mask: /dev/null, or inside an empty tmpfs */
	const char *on_the_way; /* no mount shows it, but it lies above this one's path:
				 * a directory bwrap made to hold it */
};

/*
 * What M shows at PATH (canonical, absolute): later mounts cover earlier
 * ones at and below their path, as the kernel stacks them.
 */
void bwrap_view_at(const struct bwrap_mounts *m, const char *path, struct bwrap_view *v);

/*
 * Does bwrap make the directory DIR (canonical) to hold a mount of M below
 * it, that is, is some mount's path strictly inside DIR?  Inside the
 * private home, such a directory exists where nothing else would.
 */
bool bwrap_view_made_dir(const struct bwrap_mounts *m, const char *dir);

/* Does the sandbox of P share the host's network namespace? */
bool bwrap_network_shared(const struct policy *p);

#endif
