/*
 * fileio.h - whole-file reads and atomic writes, for the command-line tools.
 *
 * The compiler core never calls these; only main() and the runtime do.
 * Functions return 0 or a negative errno.
 */
#ifndef OMNIBOX_FILEIO_H
#define OMNIBOX_FILEIO_H

#include <stdbool.h>
#include <stddef.h>

#include "textbuf.h"

#define FILE_READ_MAX (16u << 20)

/* Read all of PATH (a regular file of at most MAX bytes, else -EFBIG) into OUT. */
int file_read(const char *path, struct textbuf *out, size_t max);
int file_read_fd(int fd, struct textbuf *out, size_t max);

/*
 * Replace PATH with LEN bytes of DATA: written to a temporary file in the
 * same directory, then renamed over PATH, so readers see the old file or
 * the new one, never a mix.  The new file gets mode 0666 minus the umask.
 * With MKDIRS, missing parent directories are created (mode 0777 minus umask).
 */
int file_write_atomic(const char *path, const void *data, size_t len, bool mkdirs);

/*
 * The same, unless PATH is already a regular file (not a symlink) that
 * holds exactly those LEN bytes with the mode file_write_atomic would give
 * it: then PATH is left alone (not rewritten, its times unchanged) and 1
 * is returned.  Otherwise one temporary file and one rename, as
 * file_write_atomic; 0.  Missing parent directories are created (MKDIRS)
 * only when the first attempt finds one missing.
 */
int file_write_changed(const char *path, const void *data, size_t len, bool mkdirs);

#endif
