/*
 * landlock.c - writes and scopes restricted by the kernel (landlock.h).
 */
#include "runtime/launch/landlock.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#if defined(__linux__)
#include <fcntl.h>
#include <linux/landlock.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13)
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
#define SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define SCOPE_SIGNAL (1ULL << 1)

/* The kernel's struct, with the fields newer than these headers. */
struct ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;
	uint64_t scoped;
};

/* Every right that changes the filesystem; reading stays the mounts' business. */
#define WRITE_RIGHTS                                                                               \
	(LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR |                           \
	 LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_MAKE_CHAR |                           \
	 LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |                               \
	 LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO |                             \
	 LANDLOCK_ACCESS_FS_MAKE_BLOCK | LANDLOCK_ACCESS_FS_MAKE_SYM | LANDLOCK_ACCESS_FS_REFER)

int
landlock_abi(void)
{
	long v = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);

	return v > 0 ? (int)v : 0;
}

static int
add_rule(int ruleset, int fd, uint64_t handled, char *err, size_t errlen, const char *what)
{
	struct landlock_path_beneath_attr pb = {.parent_fd = fd};
	struct stat st;

	if (fstat(fd, &st) < 0)
		return 0;
	/* A file takes only the rights that apply to files. */
	pb.allowed_access =
	    S_ISDIR(st.st_mode)
		? handled
		: handled & (LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_TRUNCATE);
	if (syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &pb, 0) < 0) {
		snprintf(err, errlen, "Landlock refused a rule for %s: %s", what, strerror(errno));
		return -1;
	}
	return 0;
}

int
landlock_restrict(const char *const *paths, size_t n, bool scope, char *err, size_t errlen)
{
	int abi = landlock_abi(), ruleset, rc = -1;
	struct ruleset_attr attr = {0};

	if (abi >= LANDLOCK_ABI_FS) {
		attr.handled_access_fs = WRITE_RIGHTS;
		if (abi >= 3)
			attr.handled_access_fs |= LANDLOCK_ACCESS_FS_TRUNCATE;
	}
	if (scope && abi >= LANDLOCK_ABI_SCOPE)
		attr.scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL;
	if (!attr.handled_access_fs && !attr.scoped)
		return 0;
	ruleset = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof(attr), 0);
	if (ruleset < 0) {
		snprintf(err, errlen, "cannot create a Landlock ruleset: %s", strerror(errno));
		return -1;
	}
	for (size_t i = 0; attr.handled_access_fs && i < n; i++) {
		int fd = open(paths[i], O_PATH | O_CLOEXEC);

		if (fd < 0)
			continue; /* nothing there to write to */
		if (add_rule(ruleset, fd, attr.handled_access_fs, err, errlen, paths[i]) < 0) {
			close(fd);
			goto out;
		}
		close(fd);
	}
	/*
	 * What the launch's caller handed the agent to write to keeps working
	 * when reopened (/dev/stdout); an input opened for reading does not
	 * become writable that way.
	 */
	for (int fd = 1; attr.handled_access_fs && fd <= 2; fd++) {
		int fl = fcntl(fd, F_GETFL);
		struct stat st;

		if (fl < 0 || (fl & O_ACCMODE) == O_RDONLY || fstat(fd, &st) < 0 ||
		    !(S_ISREG(st.st_mode) || S_ISCHR(st.st_mode)))
			continue;
		if (add_rule(ruleset, fd, attr.handled_access_fs, err, errlen, "standard output") <
		    0)
			goto out;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    syscall(SYS_landlock_restrict_self, ruleset, 0) < 0) {
		snprintf(err, errlen, "cannot apply the Landlock ruleset: %s", strerror(errno));
		goto out;
	}
	rc = 0;
out:
	close(ruleset);
	return rc;
}

#else

int
landlock_abi(void)
{
	return 0;
}

int
landlock_restrict(const char *const *paths, size_t n, bool scope, char *err, size_t errlen)
{
	(void)paths;
	(void)n;
	(void)scope;
	(void)err;
	(void)errlen;
	return 0;
}

#endif
