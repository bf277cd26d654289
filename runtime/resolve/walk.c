/*
 * walk.c - the component-by-component open behind every path of a launch.
 */
#include "runtime/resolve/walk.h"

#include "compiler/policy.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__linux__)
#include <linux/openat2.h>
#include <sys/syscall.h>
#endif

#ifndef O_PATH
/* macOS: no path-only descriptors; nothing is mounted from them there. */
#define O_PATH O_RDONLY
#endif

/* As the kernel's own limit for one lookup. */
#define WALK_MAX_LINKS 40

char *
walk_lexical(struct arena *a, const char *path)
{
	size_t len = strlen(path);
	char *out = arena_alloc(a, len + 2);
	size_t n = 0;

	for (const char *p = path; *p;) {
		size_t seg;

		while (*p == '/')
			p++;
		seg = strcspn(p, "/");
		if (seg == 0 || (seg == 1 && p[0] == '.')) {
			p += seg;
			continue;
		}
		if (seg == 2 && p[0] == '.' && p[1] == '.') {
			while (n > 0 && out[n - 1] != '/')
				n--;
			if (n > 0)
				n--; /* the slash before the dropped component */
			p += seg;
			continue;
		}
		out[n++] = '/';
		memcpy(out + n, p, seg);
		n += seg;
		p += seg;
	}
	if (n == 0)
		out[n++] = '/';
	out[n] = '\0';
	return out;
}

static char *
join(struct arena *a, const char *dir, const char *name, size_t len)
{
	if (len == 0)
		return arena_strdup(a, dir);
	return arena_printf(a, "%s%s%.*s", dir, strcmp(dir, "/") ? "/" : "", (int)len, name);
}

/* The outermost writable root that DIR lies in, or NULL. */
static const char *
root_of(const char *dir, const char *const *roots, size_t n_roots)
{
	const char *best = NULL;

	for (size_t i = 0; i < n_roots; i++)
		if (path_within(dir, roots[i]) && (!best || strlen(roots[i]) < strlen(best)))
			best = roots[i];
	return best;
}

char *
walk_fd_path(struct arena *a, int fd)
{
	char buf[PATH_MAX];
#if defined(__APPLE__)
	if (fcntl(fd, F_GETPATH, buf) < 0)
		return NULL;
	return arena_strdup(a, buf);
#else
	char proc[64];
	ssize_t n;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	n = readlink(proc, buf, sizeof(buf) - 1);
	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	return arena_strdup(a, buf);
#endif
}

/* FD must still be where the walk says it is: a rename under us fails the walk. */
static bool
still_at(struct arena *a, int fd, const char *path)
{
	const char *real = walk_fd_path(a, fd);

	return !real || !strcmp(real, path);
}

/*
 * One component NAME under DIRFD, never followed: openat2() with
 * RESOLVE_BENEATH and RESOLVE_NO_MAGICLINKS, so the kernel itself holds the
 * open below DIRFD; plain openat() where the kernel has no openat2.
 */
static int
open_component(int dirfd, const char *name)
{
#if defined(__linux__) && defined(SYS_openat2)
	static bool no_openat2;
	struct open_how how = {.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
			       .resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS};

	if (!no_openat2) {
		long fd = syscall(SYS_openat2, dirfd, name, &how, sizeof(how));

		if (fd >= 0 || errno != ENOSYS)
			return (int)fd;
		no_openat2 = true;
	}
#endif
	return openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
}

static ssize_t
read_link(int dirfd, int fd, const char *name, char *buf, size_t size)
{
#if defined(__linux__)
	(void)dirfd;
	(void)name;
	/* The link this walk opened, not whatever has its name by now. */
	return readlinkat(fd, "", buf, size);
#else
	(void)fd;
	return readlinkat(dirfd, name, buf, size);
#endif
}

/*
 * The link NAME (NFD, closed here) in CUR_PATH (descriptor CUR, the
 * caller's): the path to walk next, the link followed and then REST, into
 * *WANT.  0, or -1 with errno: ELOOP past WALK_MAX_LINKS, EXDEV for a link
 * in a writable root that leaves it (OUT's bad_* say which).
 */
static int
follow_link(struct arena *a, int cur, int nfd, const char *name, const char *cur_path,
	    const char *rest, const char *const *roots, size_t n_roots, unsigned flags, int *links,
	    struct walk_result *out, const char **want)
{
	char target[PATH_MAX];
	ssize_t n = read_link(cur, nfd, name, target, sizeof(target) - 1);
	size_t len = strlen(name);
	const char *abs, *root;

	close(nfd);
	if (n < 0)
		return -1;
	target[n] = '\0';
	if (++*links > WALK_MAX_LINKS) {
		errno = ELOOP;
		return -1;
	}
	abs = walk_lexical(a, target[0] == '/' ? target : join(a, cur_path, target, (size_t)n));
	/*
	 * A link inside a writable root may have been planted by the agent: it
	 * may point anywhere inside that root (which the agent sees anyway),
	 * never out of it.
	 */
	root = root_of(cur_path, roots, n_roots);
	if (root && !path_within(abs, root)) {
		out->bad_link = join(a, cur_path, name, len);
		out->bad_target = arena_strdup(a, target);
		out->bad_root = root;
		errno = EXDEV;
		return -1;
	}
	out->through_link = true;
	if (flags & WALK_PHYSICAL)
		*want = join(a, target[0] == '/' ? target : join(a, cur_path, target, (size_t)n),
			     rest, strlen(rest));
	else
		*want = walk_lexical(a, join(a, abs, rest, strlen(rest)));
	return 0;
}

int
walk_open(struct arena *a, const char *path, const char *const *roots, size_t n_roots,
	  unsigned flags, struct walk_result *out)
{
	const char *want;
	int links = 0, cur = -1, err;

	memset(out, 0, sizeof(*out));
	out->fd = out->parent_fd = -1;
	if (path[0] != '/') {
		errno = EINVAL;
		return -1;
	}
	/* As written, ".." applies before any link; physically, after (the kernel's way). */
	want = flags & WALK_PHYSICAL ? path : walk_lexical(a, path);
restart:
	cur = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (cur < 0)
		return -1;
	{
		const char *cur_path = "/", *p = want + 1;

		while (*p) {
			size_t len = strcspn(p, "/");
			const char *rest = p[len] ? p + len + 1 : p + len;
			char *name = arena_strndup(a, p, len);
			struct stat st;
			int nfd;

			if (len == 0 || (len == 1 && p[0] == '.')) {
				p = rest;
				continue;
			}
			if (len == 2 && p[0] == '.' && p[1] == '.') {
				/* Only a physical walk meets "..": the parent of where it is. */
				if (cur_path[1]) {
					nfd = openat(cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
					if (nfd < 0)
						goto fail;
					close(cur);
					cur = nfd;
					cur_path = walk_lexical(a, join(a, cur_path, "..", 2));
				}
				p = rest;
				continue;
			}
			nfd = open_component(cur, name);

			if (nfd < 0 && (errno == ENOENT || errno == ENOTDIR)) {
				bool creatable = errno == ENOENT;

				out->path =
				    join(a, join(a, cur_path, name, len), rest, strlen(rest));
				out->missing = join(a, cur_path, name, len);
				if (creatable && (flags & WALK_PARENT)) {
					if (!still_at(a, cur, cur_path)) {
						close(cur);
						errno = EAGAIN;
						return -1;
					}
					out->parent_fd = cur;
				} else {
					close(cur);
				}
				return 0;
			}
			if (nfd < 0)
				goto fail;
			if (fstat(nfd, &st) < 0) {
				err = errno;
				close(nfd);
				errno = err;
				goto fail;
			}
			if (S_ISLNK(st.st_mode)) {
				if (follow_link(a, cur, nfd, name, cur_path, rest, roots, n_roots, flags,
						&links, out, &want) < 0)
					goto fail;
				close(cur);
				goto restart;
			}
			if (*rest && !S_ISDIR(st.st_mode)) {
				/* "file/more": nothing there, and nothing can be made. */
				out->path =
				    join(a, join(a, cur_path, name, len), rest, strlen(rest));
				out->missing =
				    join(a, join(a, cur_path, name, len), rest, strcspn(rest, "/"));
				close(nfd);
				close(cur);
				return 0;
			}
			if (!*rest && (flags & WALK_PARENT)) {
				if (!still_at(a, cur, cur_path)) {
					close(nfd);
					close(cur);
					errno = EAGAIN;
					return -1;
				}
				out->parent_fd = cur; /* the directory that holds it */
			} else {
				close(cur);
			}
			cur = nfd;
			cur_path = join(a, cur_path, name, len);
			if (!*rest) {
				out->is_dir = S_ISDIR(st.st_mode);
				break;
			}
			p = rest;
		}
		if (!*p)
			out->is_dir = true; /* "/", or a path ending in "." or ".." */
		out->exists = true;
		out->path = cur_path;
		if (!still_at(a, cur, cur_path)) {
			close(cur);
			errno = EAGAIN;
			return -1;
		}
		if (flags & WALK_NO_FD) {
			close(cur);
			cur = -1;
		}
		out->fd = cur;
		return 0;
	}
fail:
	err = errno;
	close(cur);
	errno = err;
	return -1;
}

char *
walk_canonical(struct arena *a, const char *path)
{
	struct walk_result r;

	if (walk_open(a, path, NULL, 0, WALK_NO_FD, &r) < 0)
		return NULL;
	return (char *)r.path;
}
