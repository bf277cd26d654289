/*
 * test_gitindex.c - what a repository's index vouches for, against indexes
 * real git writes: a tracked file whose content is unchanged, and nothing
 * else (changed, untracked, forged, a link, a conflict, intent-to-add, a
 * SHA-256 repository).
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/resolve/gitindex.h"

static char top[256];
static int topfd = -1;

static void
sh(const char *script)
{
	char cmd[4096];

	snprintf(cmd, sizeof(cmd),
		 "set -e; cd %s; export GIT_CONFIG_NOSYSTEM=1 HOME=%s GIT_AUTHOR_NAME=a "
		 "GIT_AUTHOR_EMAIL=a@b GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=a@b; %s",
		 top, top, script);
	cr_assert_eq(system(cmd), 0, "%s", script);
}

static void
setup(void)
{
	snprintf(top, sizeof(top), "/tmp/omnibox-gitindex-XXXXXX");
	cr_assert_not_null(mkdtemp(top));
	sh("git init -q; printf 'node_modules\\n' > .gitignore; mkdir -p .github/workflows; "
	   "echo 'on: push' > .github/workflows/ci.yml; echo SECRET=1 > .env; mkdir .empty; "
	   "git add .gitignore .github && git commit -qm one");
	topfd = open(top, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(topfd, 0);
}

static void
teardown(void)
{
	char cmd[512];

	close(topfd);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", top);
	cr_assert_eq(system(cmd), 0);
}

/* Does the index of TOP, read now, vouch for REL (a name in TOP or below)? */
static bool
vouches(const char *rel, unsigned char type)
{
	struct gitindex *ix = gitindex_load(topfd, top);
	char path[512], dir[512];
	const char *slash = strrchr(rel, '/');
	int dirfd;
	bool v;

	if (!ix)
		return false;
	snprintf(path, sizeof(path), "%s/%s", top, rel);
	snprintf(dir, sizeof(dir), "%s/%.*s", top, slash ? (int)(slash - rel) : 0, rel);
	dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(dirfd, 0);
	v = gitindex_vouches(ix, path, dirfd, slash ? slash + 1 : rel, type);
	close(dirfd);
	gitindex_free(ix);
	return v;
}

TestSuite(gitindex, .init = setup, .fini = teardown);

Test(gitindex, a_tracked_unchanged_file_and_its_directory)
{
	cr_expect(vouches(".gitignore", DT_REG));
	cr_expect(vouches(".github", DT_DIR));
	cr_expect(vouches(".github/workflows", DT_DIR));
	cr_expect(vouches(".github/workflows/ci.yml", DT_REG));
}

Test(gitindex, nothing_untracked_changed_or_empty)
{
	cr_expect_not(vouches(".env", DT_REG));
	cr_expect_not(vouches(".empty", DT_DIR));
	sh("echo '*.log' >> .gitignore");
	cr_expect_not(vouches(".gitignore", DT_REG), "changed since it was staged");
	sh("git add .gitignore");
	cr_expect(vouches(".gitignore", DT_REG), "staged again");
	/* Same length, other bytes: the size alone proves nothing. */
	sh("printf 'node_modulez\\n*.log\\n' > .gitignore");
	cr_expect_not(vouches(".gitignore", DT_REG));
}

Test(gitindex, a_forged_entry_does_not_show_what_it_never_saw)
{
	sh("git update-index --add --cacheinfo "
	   "100644,0123456789abcdef0123456789abcdef01234567,.env");
	cr_expect_not(vouches(".env", DT_REG));
	/* Only the hash of what .env holds would do: the secret itself. */
	sh("git update-index --add --cacheinfo 100644,$(git hash-object .env),.env");
	cr_expect(vouches(".env", DT_REG));
}

Test(gitindex, no_link_conflict_or_intent_to_add)
{
	sh("ln -s .env .link && git add .link && git commit -qm link");
	cr_expect_not(vouches(".link", DT_LNK));
	cr_expect_not(vouches(".link", DT_REG));
	sh("echo x > .later && git add -N .later");
	cr_expect_not(vouches(".later", DT_REG));
}

Test(gitindex, no_conflicted_entry)
{
	/* An add/add conflict: stages 2 and 3, no stage 0. */
	sh("git checkout -q -b other && echo a > .conf && git add .conf && git commit -qm a && "
	   "git checkout -q - && echo b > .conf && git add .conf && git commit -qm b && "
	   "! git merge -q other >/dev/null 2>&1 && test \"$(git ls-files -u .conf | wc -l)\" = 2 "
	   "&& echo b > .conf");
	cr_expect_not(vouches(".conf", DT_REG));
}

Test(gitindex, every_index_version)
{
	for (int v = 2; v <= 4; v++) {
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "git update-index --index-version %d", v);
		sh(cmd);
		cr_expect(vouches(".gitignore", DT_REG), "version %d", v);
		cr_expect(vouches(".github/workflows/ci.yml", DT_REG), "version %d", v);
		cr_expect_not(vouches(".env", DT_REG), "version %d", v);
	}
}

Test(gitindex, a_sha256_repository_vouches_for_nothing)
{
	sh("rm -rf .git && git init -q --object-format=sha256 && git add .gitignore && "
	   "git commit -qm one");
	cr_expect_null(gitindex_load(topfd, top));
}

Test(gitindex, a_git_file_or_link_is_not_read)
{
	struct gitindex *ix;

	sh("mv .git \"$PWD.gitdir\" && ln -s \"$PWD.gitdir\" .git");
	cr_expect_null(gitindex_load(topfd, top));
	sh("rm .git && mv \"$PWD.gitdir\" .git");
	ix = gitindex_load(topfd, top);
	cr_expect_not_null(ix);
	gitindex_free(ix);
}

/* An index the agent wrote: every truncation of a real one, and garbage,
 * is read without crossing its end (the sanitizer build checks) and
 * vouches for nothing a whole index would not. */
Test(gitindex, a_damaged_index_is_read_safely)
{
	char path[512], cmd[1024];
	long len;
	FILE *f;

	sh("echo x > .other && git add .other && git update-index --index-version 4 && "
	   "cp .git/index .git/index.whole");
	snprintf(path, sizeof(path), "%s/.git/index.whole", top);
	f = fopen(path, "rb");
	cr_assert_not_null(f);
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	fclose(f);
	for (long n = 0; n < len; n += 7) {
		struct gitindex *ix;

		snprintf(cmd, sizeof(cmd), "head -c %ld .git/index.whole > .git/index", n);
		sh(cmd);
		ix = gitindex_load(topfd, top);
		if (ix) {
			cr_expect_not(vouches(".env", DT_REG), "at %ld bytes", n);
			gitindex_free(ix);
		}
	}
	sh("head -c 4096 /dev/urandom > .git/index");
	gitindex_free(gitindex_load(topfd, top));
	sh("{ printf 'DIRC\\0\\0\\0\\4\\0\\0\\0\\3'; head -c 200 /dev/urandom; } > .git/index");
	gitindex_free(gitindex_load(topfd, top));
}
