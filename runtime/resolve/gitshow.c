/*
 * gitshow.c - a file as a git revision holds it (gitshow.h).
 */
#include "runtime/resolve/gitshow.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "compiler/base/fileio.h"
#include "emitters/compile.h"

int
git_show(const char *input, const char *rev, struct textbuf *out, char *err, size_t errlen)
{
	char *dir = strdup(input), *slash = strrchr(dir, '/'), *spec;
	const char *base = slash ? slash + 1 : input;
	int fds[2], status = 0;
	pid_t pid;
	char buf[65536];
	ssize_t n;

	if (slash)
		*slash = '\0';
	if (asprintf(&spec, "%s:./%s", rev, base) < 0 || pipe(fds) < 0) {
		snprintf(err, errlen, "%s", strerror(errno));
		free(dir);
		return -1;
	}
	if ((pid = fork()) == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(fds[1], 1);
		if (null >= 0)
			dup2(null, 2);
		close(fds[0]);
		execlp("git", "git", "-C", slash ? (*dir ? dir : "/") : ".", "show", spec,
		       (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	while (pid > 0 && (n = read(fds[0], buf, sizeof(buf))) > 0 && out->len < FILE_READ_MAX)
		tb_write(out, buf, (size_t)n);
	close(fds[0]);
	if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
		snprintf(err, errlen,
			 "'%s' is neither a file nor a git revision that holds %s (git show %s)",
			 rev, input, spec);
		free(spec);
		free(dir);
		return -1;
	}
	free(spec);
	free(dir);
	return 0;
}

int
git_show_or_read(struct arena *a, const char *old, const char *input, struct textbuf *src,
		 const char **name)
{
	struct stat st;
	char err[1024];
	int rc;

	if (stat(old, &st) == 0 && S_ISREG(st.st_mode)) {
		rc = file_read(old, src, FILE_READ_MAX);
		if (rc < 0) {
			fprintf(stderr, "omnibox-compile: %s: %s\n", old, strerror(-rc));
			return EXIT_IO;
		}
		*name = old;
		return EXIT_OK;
	}
	if (!strcmp(input, "-") || git_show(input, old, src, err, sizeof(err)) < 0) {
		fprintf(stderr, "omnibox-compile: --diff=%s: %s\n", old,
			strcmp(input, "-") ? err : "a revision needs AGENT.yaml as a file");
		return EXIT_USAGE;
	}
	*name = arena_printf(a, "%s:%s", old, input);
	return EXIT_OK;
}
