/*
 * landlock.c - writes and scopes restricted by the kernel, or everything
 * by a full ruleset of descriptors (landlock.h).
 */
#include "runtime/launch/landlock.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#if defined(__linux__)
#include <fcntl.h>
#include <linux/landlock.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13)
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)
#endif
#define SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define SCOPE_SIGNAL (1ULL << 1)
/* ABI 4: TCP ports (LANDLOCK_RULE_NET_PORT, LANDLOCK_ACCESS_NET_*). */
#define RULE_NET_PORT 2
#define NET_BIND_TCP (1ULL << 0)
#define NET_CONNECT_TCP (1ULL << 1)

/* The kernel's struct landlock_net_port_attr, which older headers lack. */
struct net_port_attr {
	uint64_t allowed_access;
	uint64_t port;
};

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

/* What each ABI added, for the message of landlock_need_abi(). */
static const char *const abi_adds[] = {
    NULL,
    "filesystem rules",
    "renaming and linking across directories",
    "truncating files",
    "TCP bind and connect rules",
    "ioctl rules for devices",
    "scoped signals and abstract Unix sockets",
    "logging of denials",
};
#define ABI_KNOWN ((int)(sizeof(abi_adds) / sizeof(abi_adds[0])) - 1)

int
landlock_need_abi(int need, char *err, size_t errlen)
{
	int abi = landlock_abi(), k;
	size_t len;

	if (abi >= need)
		return 0;
	len = (size_t)snprintf(
	    err, errlen, "this kernel's Landlock ABI is %d%s, the policy needs %d (", abi,
	    abi ? "" : " (none: not built in, or not among the kernel's lsm= modules)", need);
	for (k = abi + 1; k <= need && k <= ABI_KNOWN && len < errlen; k++)
		len += (size_t)snprintf(err + len, errlen - len, "%sABI %d: %s",
					k > abi + 1 ? "; " : "", k, abi_adds[k]);
	if (need > ABI_KNOWN && len < errlen)
		len += (size_t)snprintf(err + len, errlen - len,
					"%sABI %d%s%d: newer than this omnibox-init knows",
					k > abi + 1 ? "; " : "", k, need > k ? " to " : "", need);
	if (len < errlen)
		snprintf(err + len, errlen - len, ")");
	return -1;
}

/* The filesystem rights ABI handles. */
static uint64_t
fs_rights(int abi)
{
	uint64_t r = 0;

	if (abi >= 1)
		r = (LANDLOCK_ACCESS_FS_MAKE_SYM << 1) - 1; /* bits 0-12 */
	if (abi >= 2)
		r |= LANDLOCK_ACCESS_FS_REFER;
	if (abi >= 3)
		r |= LANDLOCK_ACCESS_FS_TRUNCATE;
	if (abi >= 5)
		r |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
	return r;
}

static void
close_rules(const struct landlock_fd_rule *fs, size_t n)
{
	/* The same descriptor may come twice: the second close fails, and
	 * nothing was opened in between that it could hit. */
	for (size_t i = 0; i < n; i++)
		close(fs[i].fd);
}

/* Each descriptor of FS open: -1 with the message in ERR for one that is not. */
static int
check_rule_fds(const struct landlock_fd_rule *fs, size_t n, char *err, size_t errlen)
{
	for (size_t i = 0; i < n; i++) {
		struct stat st;

		if (fs[i].fd <= 2 || fstat(fs[i].fd, &st) < 0) {
			snprintf(err, errlen, "--ll-fs %d: not an open descriptor above 2 (%s)",
				 fs[i].fd,
				 fs[i].fd <= 2 ? "0, 1 and 2 are the standard streams"
					       : strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* The rules of FS and PORTS into RULESET, which handles ATTR. */
static int
add_fd_rules(int ruleset, const struct ruleset_attr *attr, const struct landlock_fd_rule *fs,
	     size_t n, const unsigned short *ports, size_t n_ports, char *err, size_t errlen)
{
	const uint64_t file_rights = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE |
				     LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_TRUNCATE |
				     LANDLOCK_ACCESS_FS_IOCTL_DEV;

	for (size_t i = 0; i < n; i++) {
		struct landlock_path_beneath_attr pb = {.parent_fd = fs[i].fd};
		struct stat st;

		if (fstat(fs[i].fd, &st) < 0) {
			snprintf(err, errlen, "--ll-fs %d: %s", fs[i].fd, strerror(errno));
			return -1;
		}
		pb.allowed_access = fs[i].rights & attr->handled_access_fs &
				    (S_ISDIR(st.st_mode) ? ~0ULL : file_rights);
		if (!pb.allowed_access)
			continue; /* nothing this kernel can grant: no rule */
		if (syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &pb, 0) <
		    0) {
			snprintf(err, errlen,
				 "Landlock refused the rule of --ll-fs %d %llu (%s, rights %llu "
				 "on this kernel): %s",
				 fs[i].fd, fs[i].rights,
				 S_ISDIR(st.st_mode) ? "a directory" : "a file",
				 (unsigned long long)pb.allowed_access, strerror(errno));
			return -1;
		}
	}
	for (size_t i = 0; attr->handled_access_net && i < n_ports; i++) {
		struct net_port_attr np = {.allowed_access = NET_CONNECT_TCP, .port = ports[i]};

		if (syscall(SYS_landlock_add_rule, ruleset, RULE_NET_PORT, &np, 0) < 0) {
			snprintf(err, errlen,
				 "Landlock refused the rule of --ll-net-connect %u: %s", ports[i],
				 strerror(errno));
			return -1;
		}
	}
	return 0;
}

int
landlock_confine(const struct landlock_fd_rule *fs, size_t n, const unsigned short *ports,
		 size_t n_ports, bool net_any, char *err, size_t errlen)
{
	int abi = landlock_abi(), ruleset, rc = -1;
	struct ruleset_attr attr = {.handled_access_fs = fs_rights(abi)};

	if (check_rule_fds(fs, n, err, errlen) < 0) {
		close_rules(fs, n);
		return -1;
	}
	if (abi >= 4 && !net_any)
		attr.handled_access_net = NET_BIND_TCP | NET_CONNECT_TCP;
	if (abi >= 6)
		attr.scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL;
	/* Every rule descriptor is open, so the ruleset's is none of them. */
	ruleset = abi >= 1 ? (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof(attr), 0) : -1;
	if (ruleset < 0) {
		snprintf(err, errlen, "cannot create a Landlock ruleset: %s",
			 abi >= 1 ? strerror(errno) : "this kernel has no Landlock");
		close_rules(fs, n);
		return -1;
	}
	rc = add_fd_rules(ruleset, &attr, fs, n, ports, n_ports, err, errlen);
	close_rules(fs, n);
	if (rc == 0 && (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
			syscall(SYS_landlock_restrict_self, ruleset, 0) < 0)) {
		snprintf(err, errlen, "cannot apply the Landlock ruleset: %s", strerror(errno));
		rc = -1;
	}
	close(ruleset);
	return rc;
}

#else

int
landlock_need_abi(int need, char *err, size_t errlen)
{
	snprintf(err, errlen,
		 "this kernel's Landlock ABI is 0 (no Landlock on this system), the policy needs "
		 "%d",
		 need);
	return -1;
}

int
landlock_confine(const struct landlock_fd_rule *fs, size_t n, const unsigned short *ports,
		 size_t n_ports, bool net_any, char *err, size_t errlen)
{
	(void)net_any;
	(void)ports;
	(void)n_ports;
	for (size_t i = 0; i < n; i++)
		close(fs[i].fd);
	snprintf(err, errlen, "--ll-fs: no Landlock on this system");
	return -1;
}

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
