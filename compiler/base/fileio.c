/*
 * fileio.c - whole-file reads and atomic writes.
 */
#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
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

int
file_write_atomic(const char *path, const void *data, size_t len, bool mkdirs)
{
	const char *p = data;
	char *tmp;
	mode_t mask;
	int fd, rc = 0;

	if (mkdirs) {
		char *copy = strdup(path);

		if (!copy)
			return -ENOMEM;
		rc = make_parents(copy);
		free(copy);
		if (rc < 0)
			return rc;
	}
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
	mask = umask(0);
	umask(mask);
	if (rc == 0 && fchmod(fd, 0666 & ~mask) < 0)
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
