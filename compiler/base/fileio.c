/*
 * fileio.c - whole-file reads and atomic writes.
 */
#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int
file_read_fd(int fd, struct textbuf *out, size_t max)
{
	char buf[65536];
	ssize_t n;

	tb_reset(out);
	for (;;) {
		n = read(fd, buf, sizeof(buf));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		if (out->len + (size_t)n > max)
			return -EFBIG;
		tb_write(out, buf, (size_t)n);
	}
	return 0;
}

int
file_read(const char *path, struct textbuf *out, size_t max)
{
	struct stat st;
	int fd, rc;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		rc = -errno;
		close(fd);
		return rc;
	}
	if (S_ISDIR(st.st_mode)) {
		close(fd);
		return -EISDIR;
	}
	rc = file_read_fd(fd, out, max);
	close(fd);
	return rc;
}

static int
make_parents(char *path)
{
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0777) < 0 && errno != EEXIST) {
			int rc = -errno;

			*p = '/';
			return rc;
		}
		*p = '/';
	}
	return 0;
}

/* The mode a new file gets: 0666 minus the umask. */
static mode_t
new_file_mode(void)
{
	mode_t mask = umask(0);

	umask(mask);
	return 0666 & ~mask;
}

/* Write DATA to a temporary file beside PATH, then rename it over PATH. */
static int
replace(const char *path, const char *p, size_t len)
{
	char *tmp;
	int fd, rc = 0;

	if (asprintf(&tmp, "%s.tmp-XXXXXX", path) < 0)
		return -ENOMEM;
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		free(tmp);
		return rc;
	}
	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			break;
		}
		p += n;
		len -= (size_t)n;
	}
	if (rc == 0 && fchmod(fd, new_file_mode()) < 0)
		rc = -errno;
	if (close(fd) < 0 && rc == 0)
		rc = -errno;
	if (rc == 0 && rename(tmp, path) < 0)
		rc = -errno;
	if (rc < 0)
		unlink(tmp);
	free(tmp);
	return rc;
}

/* replace(), and with MKDIRS the missing parents made when it finds one missing. */
static int
replace_mkdirs(const char *path, const void *data, size_t len, bool mkdirs)
{
	int rc = replace(path, data, len);
	char *copy;

	if (rc != -ENOENT || !mkdirs)
		return rc;
	copy = strdup(path);
	if (!copy)
		return -ENOMEM;
	rc = make_parents(copy);
	free(copy);
	return rc < 0 ? rc : replace(path, data, len);
}

int
file_write_atomic(const char *path, const void *data, size_t len, bool mkdirs)
{
	return replace_mkdirs(path, data, len, mkdirs);
}

/* Is PATH a regular file (not a symlink) of mode MODE holding exactly LEN bytes of DATA? */
static bool
holds(const char *path, const char *data, size_t len, mode_t mode)
{
	char buf[16384];
	struct stat st;
	size_t off = 0;
	bool same = false;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);

	if (fd < 0)
		return false;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (st.st_mode & 07777) != mode ||
	    (uint64_t)st.st_size != (uint64_t)len)
		goto out;
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || (size_t)n > len - off || memcmp(buf, data + off, (size_t)n))
			goto out;
		if (n == 0)
			break;
		off += (size_t)n;
	}
	same = off == len;
out:
	close(fd);
	return same;
}

int
file_write_changed(const char *path, const void *data, size_t len, bool mkdirs)
{
	if (holds(path, data, len, new_file_mode()))
		return 1;
	return replace_mkdirs(path, data, len, mkdirs);
}
