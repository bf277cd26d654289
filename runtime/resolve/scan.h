/*
 * scan.h - find the dotfiles a sandboxed agent must not see.
 *
 * Before omnibox-run starts the agent it walks the directories the agent
 * can see (the workspace and each granted root) and collects every entry
 * whose name starts with '.' and is not on an allow-list: .env, .aws/,
 * .ssh/, .git/ and so on.  The caller masks each one inside the sandbox.
 *
 * The walk never follows a symbolic link, never descends into an entry it
 * reports, and visits node_modules, .venv and .mypy_cache directories only
 * after everything else, so that a capped scan spends its budget on the
 * project's own files.  The top level of every root is read in full
 * whatever the cap: a flood of entries there cannot push a secret beside
 * them out of the scan; the cap stops the walk below.  It depends on libc
 * alone.
 */
#ifndef OMNIBOX_SCAN_H
#define OMNIBOX_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What to do when the scan reaches max_entries. */
enum scan_overflow_mode {
	SCAN_WARN,	/* stop, return the partial result with overflowed set */
	SCAN_ERROR,	/* stop and fail */
	SCAN_UNLIMITED, /* no cap: max_entries is ignored */
};

struct scan_options {
	const char *const *allow; /* basenames that stay visible, e.g. ".venv" */
	size_t n_allow;
	bool recursive;	      /* false: only the immediate children of each root */
	uint64_t max_entries; /* > 0 unless overflow is SCAN_UNLIMITED */
	enum scan_overflow_mode overflow;
	/* Optional, one per root: a descriptor on it (O_PATH will do), read
	 * instead of the path, so the tree scanned is the tree mounted; -1 or
	 * a NULL array: open the root by its path. */
	const int *root_fds;
	/* Optional: every entry of this name (".git"), in any case (a
	 * case-insensitive file system takes ".GIT" for it), of any kind,
	 * hidden or not, is listed in named; with stop_at_named none is
	 * descended into. */
	const char *report_name;
	bool stop_at_named;
	/* With report_name: a directory git takes for a repository whatever
	 * its name (it holds HEAD, and objects/ and refs/ or a commondir file
	 * naming where they are) is listed in named too, as kind SCAN_GITDIR. */
	bool report_bare;
	/* Optional: directories not descended into (absolute, canonical,
	 * sorted by strcmp): what the sandbox could not reach.  With
	 * prune_ids (dev, ino pairs, in the same order), only while the
	 * directory at that path is still that one. */
	const char *const *prune;
	const unsigned long long (*prune_ids)[2];
	size_t n_prune;
	/*
	 * Optional: an entry the rule would hide (PATH absolute, NAME in the
	 * directory DIRFD, TYPE a DT_* value) is offered to KEEP first; true
	 * leaves it visible.  A directory kept is listed whatever `recursive`
	 * says, and every entry below it is offered in turn and hidden unless
	 * kept: the caller shows what it has vouched for, nothing beside it.
	 */
	bool (*keep)(void *arg, const char *path, int dirfd, const char *name, unsigned char type);
	void *keep_arg;
	/* A recursive scan lists the directories at the back of its queue in
	 * a second thread (scan_ahead.h); with ALONE, all in this one (the
	 * same result: tests compare the two). */
	bool alone;
	/* Optional: keep the listings of directories that have not changed for
	 * the next scan of the same roots with the same MEMO (a short name, one
	 * per kind of scan), and take them from the last one (scan_memo.h):
	 * the same result, with the unchanged directories not read again. */
	const char *memo;
};

enum scan_kind {
	SCAN_DIR,
	SCAN_FILE,
	SCAN_OTHER, /* socket, fifo, device */
	SCAN_LINK,  /* in named only: hidden symlinks go to skipped_symlinks */
	SCAN_GITDIR, /* in named only: a directory holding HEAD, and objects/ and refs/ or commondir */
};

struct scan_hit {
	const char *path; /* absolute */
	enum scan_kind kind;
	/* The directory it was found in; in named, the entry itself (0, 0
	 * where it could not be read). */
	unsigned long long dir_dev, dir_ino;
	/* In all_hidden: the directory itself, as it was listed. */
	unsigned long long self_dev, self_ino;
};

/*
 * Every path is absolute.  hits, skipped_symlinks, unreadable and
 * skipped_roots are sorted by byte order and hold no duplicates;
 * unfinished is in the order the scan would have visited the directories.
 * All memory belongs to the result: release it with scan_result_free().
 */
struct scan_result {
	struct scan_hit *hits; /* entries to mask */
	size_t n_hits;
	struct scan_hit *named; /* entries named o->report_name, sorted */
	size_t n_named;
	/*
	 * Directories listed to their end whose every entry is hidden (a hit,
	 * or such a directory itself), never a root: the outermost ones, sorted,
	 * each with the directory it was found in (dir_dev, dir_ino) and its
	 * own device and inode (self_dev, self_ino).  Their
	 * hits are in hits too; a caller may hide each one whole instead.
	 */
	struct scan_hit *all_hidden;
	size_t n_all_hidden;
	const char **skipped_symlinks; /* hidden names that are symlinks: not masked */
	size_t n_skipped_symlinks;
	const char **unreadable; /* directories that could not be listed (EACCES) */
	size_t n_unreadable;
	/* Of unreadable and unfinished, those whose own device and inode the
	 * scan knows (self_dev, self_ino), sorted: scan_dir_id(). */
	struct scan_hit *ids;
	size_t n_ids;
	const char **skipped_roots; /* roots that do not exist or are not directories */
	size_t n_skipped_roots;
	bool overflowed;	 /* the cap stopped the scan */
	uint64_t visited;	 /* directory entries read, "." and ".." excluded */
	size_t listed_ahead;	 /* directories whose listing the second thread read */
	size_t memo_hits;	 /* directories whose listing the last scan kept */
	const char **unfinished; /* on overflow: every directory not listed to its end, */
	size_t n_unfinished;	 /* in the order the scan would have reached them */
	char *text;		 /* private: the storage behind every path above */
};

/*
 * Scan ROOTS (N_ROOTS absolute, canonical directory paths; duplicates and
 * roots nested in other roots are fine) as O says and fill *OUT.
 *
 * A root that is missing or not a directory is listed in skipped_roots; a
 * directory the process may not read is listed in unreadable.  Neither is
 * a failure.  A root that lies inside another root is scanned once, as a
 * root, and is itself never reported as a hit: it was granted explicitly.
 *
 * Returns 0 on success, including a SCAN_WARN overflow.  Returns -1 with
 * errno set and a one-line message in ERR (ERRLEN bytes) when the cap is
 * reached under SCAN_ERROR (EOVERFLOW), on bad arguments (EINVAL), when
 * memory runs out (ENOMEM) or when a directory cannot be read for another
 * reason (that errno): a scan that silently skipped a subtree could leave
 * a secret visible.  On failure *OUT is left empty, safe to free.
 */
int scan_run(const char *const *roots, size_t n_roots, const struct scan_options *o,
	     struct scan_result *out, char *err, size_t errlen);

/* Release everything R owns and empty it.  R may be empty already. */
void scan_result_free(struct scan_result *r);

/* The device and inode of PATH, a directory of R's unreadable or
 * unfinished, into ID; false when the scan does not know them. */
bool scan_dir_id(const struct scan_result *r, const char *path, unsigned long long id[2]);

#endif
