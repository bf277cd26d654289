/*
 * test_resolve.c - from a symbolic policy to a launch on a real tree:
 * canonical paths, the order of grants and masks, placeholders for missing
 * mask_paths, the command's visibility.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compiler/policy.h"
#include "runtime/resolve/host.h"
#include "runtime/resolve/resolve.h"
#include "runtime/resolve/walk.h"

static char root[256];

static void
setup_tree(void)
{
	char cmd[1024];

	snprintf(root, sizeof(root), "/tmp/omnibox-resolve-XXXXXX");
	cr_assert_not_null(mkdtemp(root));
	snprintf(cmd, sizeof(cmd),
		 "set -e; cd %s; mkdir -p ws/src ws/.aws ws/.config/gh home/.ssh home/code "
		 "opt/tool real;"
		 "echo x > ws/.env; echo x > ws/.aws/credentials; echo x > ws/src/a.c; ln -s "
		 "../real ws/link;"
		 "printf '#!/bin/sh\\n' > opt/tool/run; chmod 755 opt/tool/run;"
		 "printf '#!/bin/sh\\n' > home/hometool; chmod 755 home/hometool",
		 root);
	cr_assert_eq(system(cmd), 0);
}

static void
teardown_tree(void)
{
	rmtree(root);
}

static char *
at(const char *rel)
{
	static char buf[8][512];
	static int k;

	k = (k + 1) % 8;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", root, rel);
	return buf[k];
}

struct launch {
	struct arena *a;
	struct launch_plan plan;
	struct textbuf argv;
	char err[1024];
	int rc;
};

/*
 * The error launch_resolve() left in D as the user sees it: the located
 * diagnostic as diag_print() shows it, or the plain failure.
 */
static void
error_text(struct diag *d, char *buf, size_t len)
{
	FILE *f;

	if (d->failure) {
		snprintf(buf, len, "%s", d->failure);
		return;
	}
	f = fmemopen(buf, len, "w");
	cr_assert_not_null(f);
	diag_print(d, f, false);
	fclose(f);
}

static struct launch
launch(const char *yaml, const char *const *command, bool placeholders)
{
	struct launch l = {0};
	struct diag d;
	struct policy *p;
	struct launch_request rq = {0};
	static char secret[] = "SECRET=host-secret", keep[] = "KEEP=kept";
	char *env[] = {NULL, secret, keep, NULL};

	l.a = arena_new();
	diag_init(&d, l.a, "t.yaml", yaml, strlen(yaml));
	p = policy_compile(l.a, &d, "t.yaml", yaml, strlen(yaml));
	cr_assert_not_null(p, "policy does not compile:\n%s", yaml);
	env[0] = arena_printf(l.a, "PATH=%s:/usr/bin:/bin", at("opt/tool"));
	rq.policy = p;
	rq.launch_dir = at("ws");
	rq.home = at("home");
	rq.scratch = at("scratch");
	rq.target = LAUNCH_LINUX;
	rq.command = (char *const *)command; /* only read */
	rq.n_command = 0;
	while (command && command[rq.n_command])
		rq.n_command++;
	rq.environ = env;
	rq.create_placeholders = placeholders;
	/* A launch makes its scratch dir first, new each time: the private
	 * home is made in it. */
	if (placeholders) {
		mkdir(at("scratch"), 0700);
		rmdir(at("scratch/.omnibox-home"));
	}
	rq.seccomp_fd = -1;
	rq.status_fd = -1;
	l.rc = launch_resolve(l.a, &rq, &l.plan, &d);
	if (l.rc < 0)
		error_text(&d, l.err, sizeof(l.err));
	if (l.rc == 0)
		bwrap_build(l.plan.policy, &l.plan.ctx, NULL, &l.argv, NULL, NULL);
	return l;
}

static void
launch_free(struct launch *l)
{
	if (l->rc == 0) {
		launch_plan_close(&l->plan);
		launch_cleanup(&l->plan);
	}
	tb_free(&l->argv);
	arena_free(l->a);
}

/*
 * Position of the lines "FLAG\nSRC\nDST" in the argv text, or of the line
 * "# omnibox-init: FLAG SRC DST" (a mount omnibox-init makes, written as
 * bwrap's would be), or -1.  For the descriptor flags (--bind-fd,
 * --ro-bind-fd) SRC is NULL: any descriptor.
 */
static long
mount_at(const struct launch *l, const char *flag, const char *src, const char *dst)
{
	char want[2048];
	const char *p, *data = l->argv.data;
	long plain = -1, init = -1;

	/* bwrap's: its lines (omnibox-init's own arguments, after "--", may
	 * repeat them: the first is the place in the order). */
	if (!src) {
		snprintf(want, sizeof(want), "\n%s\n", flag);
		for (p = strstr(data, want); p && plain < 0; p = strstr(p + 1, want)) {
			const char *fd = p + strlen(want), *nl = strchr(fd, '\n');

			if (nl && !strncmp(nl + 1, dst, strlen(dst)) && nl[1 + strlen(dst)] == '\n')
				plain = p - data;
		}
	} else {
		if (dst)
			snprintf(want, sizeof(want), "\n%s\n%s\n%s\n", flag, src, dst);
		else
			snprintf(want, sizeof(want), "\n%s\n%s\n", flag, src);
		p = strstr(data, want);
		plain = p ? p - data : -1;
	}
	/* One omnibox-init makes, written as bwrap's would be. */
	if (!src) {
		snprintf(want, sizeof(want), "\n# omnibox-init: %s ", flag);
		for (p = strstr(data, want); p && init < 0; p = strstr(p + 1, want)) {
			const char *sp = strchr(p + strlen(want), ' ');

			if (sp && !strncmp(sp + 1, dst, strlen(dst)) && sp[1 + strlen(dst)] == '\n')
				init = p - data;
		}
	} else {
		if (dst)
			snprintf(want, sizeof(want), "\n# omnibox-init: %s %s %s\n", flag, src, dst);
		else
			snprintf(want, sizeof(want), "\n# omnibox-init: %s %s\n", flag, src);
		p = strstr(data, want);
		init = p ? p - data : -1;
	}
	return plain < 0 ? init : init < 0 ? plain : plain < init ? plain : init;
}

/* The grant of PATH in L's plan, or NULL. */
static const struct bwrap_grant *
grant_of(const struct launch *l, const char *path)
{
	for (size_t i = 0; i < l->plan.ctx.n_grants; i++)
		if (!strcmp(l->plan.ctx.grants[i].path, path))
			return &l->plan.ctx.grants[i];
	return NULL;
}

static char *
yaml_printf(const char *fmt, ...)
{
	char *s = NULL;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		abort();
	va_end(ap);
	return s;
}

TestSuite(resolve, .init = setup_tree, .fini = teardown_tree);

Test(resolve, canonical_paths_follow_symlinks_and_keep_missing_tails)
{
	struct arena *a = arena_new();
	char *real = realpath(at("real"), NULL);

	/* ".." as written applies to the path as written. */
	cr_expect_str_eq(walk_canonical(a, at("ws/link/x/../y")), arena_printf(a, "%s/y", real));
	cr_expect_str_eq(walk_canonical(a, at("ws/missing/../src")),
			 walk_canonical(a, at("ws/src")));
	cr_expect_str_eq(walk_canonical(a, "/../.."), "/");
	cr_expect_null(walk_canonical(a, "relative"));
	free(real);
	arena_free(a);
}

Test(resolve, grants_come_ancestors_first_and_masks_last)
{
	const char *cmd[] = {"/bin/true", NULL};
	char *yaml = NULL;
	struct launch l;
	long ws, src, env, aws;

	if (asprintf(&yaml, "os_env:\n  sandbox:\n    write_paths: [src]\n    read_paths: ['%s']\n",
		     at("ws")) < 0)
		cr_assert_fail();
	l = launch(yaml, cmd, false);
	cr_assert_eq(l.rc, 0, "%s", l.err);
	ws = mount_at(&l, "--ro-bind-fd", NULL, l.plan.workspace);
	src = mount_at(&l, "--bind-fd", NULL, at("ws/src"));
	env = mount_at(&l, "--ro-bind", "/dev/null", at("ws/.env"));
	aws = mount_at(&l, "--tmpfs", at("ws/.aws"), NULL);
	cr_assert(ws >= 0 && src >= 0 && env >= 0 && aws >= 0, "%s", l.argv.data);
	/* A read-only grant on the parent must not hide the writable child. */
	cr_expect_lt(ws, src);
	cr_expect_gt(env, src);
	cr_expect_gt(aws, src);
	cr_expect_geq(mount_at(&l, "--remount-ro", at("ws/.aws"), NULL), 0);
	launch_free(&l);
	free(yaml);
}

Test(resolve, a_dotfile_named_in_a_grant_is_not_masked)
{
	const char *cmd[] = {"/bin/true", NULL};
	char *yaml = NULL;
	struct launch l;

	if (asprintf(&yaml, "os_env:\n  sandbox:\n    read_paths: ['%s', '%s', ~/.ssh]\n",
		     at("ws/.aws"), at("ws/.config/gh")) < 0)
		cr_assert_fail();
	l = launch(yaml, cmd, false);
	cr_assert_eq(l.rc, 0, "%s", l.err);
	cr_expect_lt(mount_at(&l, "--tmpfs", at("ws/.aws"), NULL), 0, "%s", l.argv.data);
	/* .config stays hidden, and the grant inside it is bound again after. */
	{
		long mask = mount_at(&l, "--tmpfs", at("ws/.config"), NULL);
		const char *again = strstr(l.argv.data + (mask > 0 ? mask : 0),
					   "granted explicitly inside a hidden dotfile directory\n");
		const char *bind = again ? strchr(again, '\n') + 1 : NULL;

		/* bwrap's bind, or omnibox-init's written as bwrap's would be. */
		cr_expect(mask > 0 && bind &&
			      (!strncmp(bind, "--ro-bind-fd\n", 13) ||
			       !strncmp(bind, "# omnibox-init: --ro-bind-fd ", 29)) &&
			      strstr(bind, at("ws/.config/gh")),
			  "%s", l.argv.data);
	}
	cr_expect_geq(mount_at(&l, "--ro-bind-fd", NULL, at("home/.ssh")), 0);
	cr_expect_lt(mount_at(&l, "--tmpfs", at("home/.ssh"), NULL), 0, "%s", l.argv.data);
	launch_free(&l);
	free(yaml);
}

Test(resolve, a_missing_mask_path_gets_a_placeholder_only_where_writable)
{
	const char *cmd[] = {"/bin/true", NULL};
	struct launch l;
	struct stat st;

	l = launch("os_env:\n  sandbox:\n    write_paths: [.]\n    mask_paths: [new/dir/key, "
		   "src/secret.key]\n",
		   cmd, true);
	cr_assert_eq(l.rc, 0, "%s", l.err);
	cr_expect_eq(stat(at("ws/new"), &st), 0);
	cr_expect(S_ISDIR(st.st_mode));
	cr_expect_eq(stat(at("ws/src/secret.key"), &st), 0);
	cr_expect(S_ISREG(st.st_mode));
	cr_expect_geq(mount_at(&l, "--tmpfs", at("ws/new"), NULL), 0, "%s", l.argv.data);
	cr_expect_geq(mount_at(&l, "--ro-bind", "/dev/null", at("ws/src/secret.key")), 0);
	launch_free(&l);
	cr_expect_neq(access(at("ws/new"), F_OK), 0, "the placeholder outlived the launch");
	cr_expect_neq(access(at("ws/src/secret.key"), F_OK), 0);

	/* A read-only workspace the user can write: the user could create it
	 * while the sandbox runs, so it is held by a placeholder too. */
	l = launch("os_env:\n  sandbox:\n    mask_paths: [new/key]\n", cmd, true);
	cr_assert_eq(l.rc, 0, "%s", l.err);
	cr_expect_eq(access(at("ws/new"), F_OK), 0);
	cr_expect_geq(mount_at(&l, "--tmpfs", at("ws/new"), NULL), 0, "%s", l.argv.data);
	launch_free(&l);
	cr_expect_neq(access(at("ws/new"), F_OK), 0, "the placeholder outlived the launch");
	/* Outside everything the sandbox sees: nothing to hold, nothing made. */
	l = launch("os_env:\n  sandbox:\n    mask_paths: [/var/lib/omnibox-not-here/key]\n", cmd,
		   true);
	cr_assert_eq(l.rc, 0, "%s", l.err);
	cr_expect_neq(access("/var/lib/omnibox-not-here", F_OK), 0);
	launch_free(&l);
}

Test(resolve, masks_inside_a_masked_directory_are_dropped)
{
	const char *cmd[] = {"/bin/true", NULL};
	struct launch l =
	    launch("os_env:\n  sandbox:\n    mask_paths: [.aws/credentials, .aws]\n", cmd, false);

	cr_assert_eq(l.rc, 0, "%s", l.err);
	cr_expect_geq(mount_at(&l, "--tmpfs", at("ws/.aws"), NULL), 0);
	cr_expect_null(strstr(l.argv.data, ".aws/credentials\n"), "%s", l.argv.data);
	launch_free(&l);
}

Test(resolve, the_command_directory_is_bound_or_the_launch_refused)
{
	const char *tool[] = {"run", NULL};
	const char *home[] = {NULL, NULL};
	const char *missing[] = {"no-such-command", NULL};
	struct launch l = launch("os_env: {}\n", tool, false);
	char *dir = realpath(at("opt/tool"), NULL);

	cr_assert_eq(l.rc, 0, "%s", l.err);
	cr_expect_geq(mount_at(&l, "--ro-bind-fd", NULL, dir), 0, "%s", l.argv.data);
	cr_expect_str_eq(l.plan.argv[0], "run");
	launch_free(&l);

	home[0] = at("home/hometool");
	l = launch("os_env: {}\n", home, false);
	cr_expect_eq(l.rc, -1);
	cr_expect(strstr(l.err, "lives directly in"), "%s", l.err);
	launch_free(&l);

	l = launch("os_env: {}\n", missing, false);
	cr_expect_eq(l.rc, -1);
	cr_expect_str_eq(l.err, "command 'no-such-command' not found on PATH");
	launch_free(&l);
	free(dir);
}

Test(resolve, the_workspace_must_exist_and_not_be_root)
{
	const char *cmd[] = {"/bin/true", NULL};
	struct launch l = launch("os_env:\n  cwd: nowhere\n", cmd, false);

	cr_expect_eq(l.rc, -1);
	cr_expect(strstr(l.err, "is not a directory"), "%s", l.err);
	launch_free(&l);
	l = launch("os_env:\n  cwd: /\n", cmd, false);
	cr_expect_eq(l.rc, -1);
	cr_expect(strstr(l.err, "the workspace cannot be /"), "%s", l.err);
	launch_free(&l);
}

Test(resolve, the_environment_is_rebuilt_from_the_allow_list)
{
	const char *cmd[] = {"/bin/true", NULL};
	struct launch l = launch("os_env:\n  sandbox:\n    env_passthrough: [KEEP]\n", cmd, false);
	bool tmpdir = false, keep = false;

	cr_assert_eq(l.rc, 0, "%s", l.err);
	for (size_t i = 0; l.plan.env[i]; i++) {
		cr_expect(strncmp(l.plan.env[i], "SECRET=", 7), "%s", l.plan.env[i]);
		keep |= !strcmp(l.plan.env[i], "KEEP=kept");
		if (!strncmp(l.plan.env[i], "TMPDIR=", 7)) {
			tmpdir = true;
			cr_expect_str_eq(l.plan.env[i] + 7, at("scratch"));
		}
	}
	cr_expect(tmpdir);
	cr_expect(keep);
	launch_free(&l);
}

/* ---- what the agent may have planted ---------------------------------------------- */

Test(resolve, a_grant_replaced_by_a_symlink_out_of_the_writable_workspace_is_refused)
{
	const char *cmd[] = {"/bin/true", NULL};
	struct launch l;

	cr_assert_eq(symlink("/", at("ws/docs")), 0);
	l = launch("os_env:\n  sandbox:\n    write_paths: [.]\n    read_paths: [docs]\n", cmd,
		   false);
	cr_expect_eq(l.rc, -1, "%s", l.argv.data);
	cr_expect(strstr(l.err, "t.yaml:4:18: error: read_paths ") &&
		      strstr(l.err, "/ws/docs -> /") && strstr(l.err, "leads out of "),
		  "%s", l.err);
	launch_free(&l);
	/* Through a parent, to the home directory. */
	unlink(at("ws/docs"));
	cr_assert_eq(symlink(at("home"), at("ws/up")), 0);
	l = launch("os_env:\n  sandbox:\n    write_paths: [., up/code]\n", cmd, false);
	cr_expect_eq(l.rc, -1);
	cr_expect(strstr(l.err, "t.yaml:3:22: error: write_paths ") && strstr(l.err, "/ws/up -> "),
		  "%s", l.err);
	launch_free(&l);
}

Test(resolve, a_symlink_that_stays_inside_the_writable_root_is_followed)
{
	const char *cmd[] = {"/bin/true", NULL};
	struct launch l;

	cr_assert_eq(symlink("src", at("ws/code")), 0);
	l = launch("os_env:\n  sandbox:\n    write_paths: [.]\n    read_paths: [code]\n", cmd,
		   false);
	cr_assert_eq(l.rc, 0, "%s", l.err);
	cr_expect_not_null(grant_of(&l, at("ws/src")), "%s", l.argv.data);
	launch_free(&l);
}

Test(resolve, a_grant_that_reaches_root_or_home_through_a_link_is_refused_even_outside)
{
	const char *cmd[] = {"/bin/true", NULL};
	char *yaml = yaml_printf("os_env:\n  sandbox:\n    read_paths: ['%s']\n", at("opt/h"));
	struct launch l;

	/* A link the agent cannot write (the workspace is read-only), to the home. */
	cr_assert_eq(symlink(at("home"), at("opt/h")), 0);
	l = launch(yaml, cmd, false);
	cr_expect_eq(l.rc, -1);
	cr_expect(strstr(l.err, "resolves through a symlink to ") &&
		      strstr(l.err, "never grants /, a home directory"),
		  "%s", l.err);
	launch_free(&l);
	/* Named as it is, the home is the user's choice. */
	l = launch("os_env:\n  sandbox:\n    read_paths: [~/]\n", cmd, false);
	cr_expect_eq(l.rc, 0, "%s", l.err);
	launch_free(&l);
	free(yaml);
}

Test(resolve, every_mount_source_is_a_descriptor_on_the_checked_object)
{
	const char *cmd[] = {"/bin/true", NULL};
	struct launch l = launch("os_env:\n  sandbox:\n    write_paths: [src]\n", cmd, false);
	const struct bwrap_grant *g;
	struct stat by_fd, by_path;

	cr_assert_eq(l.rc, 0, "%s", l.err);
	g = grant_of(&l, at("ws/src"));
	cr_assert_not_null(g);
	cr_assert_geq(g->fd, 0);
	cr_expect_eq(fstat(g->fd, &by_fd), 0);
	cr_expect_eq(stat(at("ws/src"), &by_path), 0);
	cr_expect(by_fd.st_ino == by_path.st_ino && by_fd.st_dev == by_path.st_dev);
	cr_expect(fcntl(g->fd, F_GETFD) & FD_CLOEXEC, "held close-on-exec until the launch");
	/* Swapped after the check, the descriptor still names what was checked. */
	cr_assert_eq(rename(at("ws/src"), at("ws/src.old")), 0);
	cr_assert_eq(symlink("/", at("ws/src")), 0);
	cr_expect_eq(fstat(g->fd, &by_fd), 0);
	cr_expect_eq(by_fd.st_ino, by_path.st_ino);
	launch_free(&l);
	unlink(at("ws/src"));
	rename(at("ws/src.old"), at("ws/src"));
}

Test(resolve, a_placeholder_whose_parent_was_repointed_leaves_the_host_file_alone)
{
	const char *cmd[] = {"/bin/true", NULL};
	struct launch l;
	int fd;

	l = launch("os_env:\n  sandbox:\n    write_paths: [.]\n    mask_paths: [box/secret.key]\n",
		   cmd, true);
	cr_assert_eq(l.rc, 0, "%s", l.err);
	cr_assert_eq(access(at("ws/box"), F_OK), 0, "no placeholder");
	/* The agent moves the placeholder away and points its name at a host
	 * directory that holds a file of the same shape (an empty one). */
	cr_assert_eq(rename(at("ws/box"), at("ws/box.moved")), 0);
	cr_assert_eq(symlink(at("real"), at("ws/box")), 0);
	fd = open(at("real/keep"), O_CREAT | O_WRONLY, 0644);
	close(fd);
	launch_free(&l);
	cr_expect_eq(access(at("real/keep"), F_OK), 0, "a host file was removed");
	cr_expect_eq(access(at("real"), F_OK), 0, "the host directory was removed");
	cr_expect_eq(access(at("ws/box.moved"), F_OK), 0,
		     "what the agent moved is the agent's: nothing to remove by path");
}

Test(resolve, a_mask_through_a_planted_link_is_refused)
{
	const char *cmd[] = {"/bin/true", NULL};
	struct launch l;

	cr_assert_eq(symlink("/etc", at("ws/conf")), 0);
	l = launch("os_env:\n  sandbox:\n    write_paths: [.]\n    mask_paths: [conf/x.key]\n", cmd,
		   true);
	cr_expect_eq(l.rc, -1);
	cr_expect(strstr(l.err, "t.yaml:4:18: error: mask_paths ") &&
		      strstr(l.err, "/ws/conf -> /etc"),
		  "%s", l.err);
	launch_free(&l);
}

Test(resolve, a_terminal_cwd_is_its_own_workspace_or_inside_it_with_the_override)
{
	const char *cmd[] = {"/bin/true", NULL};
	static const char yaml[] = "os_env: {}\nterminals:\n  fixed:\n    command: sh\n"
				   "  free:\n    command: sh\n    allow_cwd_override: true\n";
	struct launch_request rq = {0};
	struct launch_plan plan;
	struct arena *a = arena_new();
	struct diag d;
	struct policy *p;
	char err[1024];
	char *env[] = {NULL};

	diag_init(&d, a, "t.yaml", yaml, strlen(yaml));
	p = policy_compile(a, &d, "t.yaml", yaml, strlen(yaml));
	cr_assert_not_null(p);
	rq.target = LAUNCH_LINUX;
	rq.launch_dir = at("ws");
	rq.home = at("home");
	rq.scratch = at("scratch");
	rq.command = (char *const *)cmd;
	rq.n_command = 1;
	rq.environ = env;
	rq.seccomp_fd = rq.status_fd = -1;
	rq.policy = policy_select_terminal(a, &d, p, "fixed");
	rq.cwd = at("ws");
	cr_expect_eq(launch_resolve(a, &rq, &plan, &d), 0, "%s", d.failure);
	launch_plan_close(&plan);
	rq.cwd = ".";
	cr_expect_eq(launch_resolve(a, &rq, &plan, &d), 0, "%s", d.failure);
	launch_plan_close(&plan);
	rq.cwd = "src";
	cr_expect_eq(launch_resolve(a, &rq, &plan, &d), -1);
	error_text(&d, err, sizeof(err));
	cr_expect(strstr(err, "does not allow a cwd override"), "%s", err);
	rq.policy = policy_select_terminal(a, &d, p, "free");
	cr_expect_eq(launch_resolve(a, &rq, &plan, &d), 0, "%s", d.failure);
	cr_expect_str_eq(plan.workspace, walk_canonical(a, at("ws/src")));
	launch_plan_close(&plan);
	rq.cwd = at("home");
	cr_expect_eq(launch_resolve(a, &rq, &plan, &d), -1);
	error_text(&d, err, sizeof(err));
	cr_expect(!strncmp(err, "t.yaml:7:25: error: --cwd ", 26) &&
		      strstr(err, "is outside the workspace"),
		  "%s", err);
	arena_free(a);
}

Test(resolve, a_write_files_entry_that_is_a_directory_is_refused)
{
	const char *cmd[] = {"/bin/true", NULL};
	struct launch l = launch("os_env:\n  sandbox:\n    write_files: [src]\n", cmd, false);

	cr_expect_eq(l.rc, -1);
	cr_expect(strstr(l.err, "t.yaml:3:19: error: write_files ") &&
		      strstr(l.err, "is a directory: name it in write_paths\n"
				    "    3 |     write_files: [src]\n"
				    "      |                   ^~~\n"),
		  "%s", l.err);
	launch_free(&l);
}

Test(resolve, the_directories_above_a_mask_in_a_writable_root_are_pinned)
{
	const char *cmd[] = {"/bin/true", NULL};
	struct launch l;
	char sh[1200];

	snprintf(sh, sizeof(sh), "mkdir -p %s/deep/er && touch %s/deep/er/k", at("ws"), at("ws"));
	cr_assert_eq(system(sh), 0);
	l = launch("os_env:\n  sandbox:\n    write_paths: [.]\n    mask_paths: [deep/er/k]\n", cmd,
		   false);
	cr_assert_eq(l.rc, 0, "%s", l.err);
	cr_expect_eq(l.plan.ctx.n_pins, 2);
	cr_expect_geq(mount_at(&l, "--bind-fd", NULL, at("ws/deep")), 0, "%s", l.argv.data);
	cr_expect_lt(mount_at(&l, "--bind-fd", NULL, at("ws/deep/er")),
		     mount_at(&l, "--ro-bind", "/dev/null", at("ws/deep/er/k")), "%s", l.argv.data);
	launch_free(&l);
	/* Outside a writable root nothing could rename them: no pins. */
	l = launch("os_env:\n  sandbox:\n    mask_paths: [deep/er/k]\n", cmd, false);
	cr_assert_eq(l.rc, 0, "%s", l.err);
	cr_expect_eq(l.plan.ctx.n_pins, 0);
	launch_free(&l);
}

Test(resolve, write_files_are_bound_through_a_private_directory_with_their_siblings)
{
	const char *cmd[] = {"/bin/true", NULL};
	struct launch l;
	char buf[64] = {0}, copy[600];
	int fd;

	cr_assert_eq(mkdir(at("scratch"), 0700), 0);
	fd = open(at("ws/notes.md"), O_WRONLY | O_CREAT | O_TRUNC, 0640);
	cr_assert_eq(write(fd, "host\n", 5), 5);
	close(fd);
	l = launch("os_env:\n  sandbox:\n    write_files: [notes.md]\n", cmd, true);
	cr_assert_eq(l.rc, 0, "%s", l.err);
	/* The private directory at the workspace, its other entries read-only after it,
	 * its dotfiles masked after those; the file has no mount of its own. */
	cr_expect_gt(mount_at(&l, "--bind-fd", NULL, walk_canonical(l.a, at("ws"))), -1, "%s",
		     l.argv.data);
	cr_expect_gt(mount_at(&l, "--ro-bind-fd", NULL, walk_canonical(l.a, at("ws/src"))),
		     mount_at(&l, "--bind-fd", NULL, walk_canonical(l.a, at("ws"))));
	cr_expect_gt(mount_at(&l, "--ro-bind", "/dev/null", walk_canonical(l.a, at("ws/.env"))),
		     mount_at(&l, "--ro-bind-fd", NULL, walk_canonical(l.a, at("ws/src"))));
	cr_expect_eq(mount_at(&l, "--bind-fd", NULL, walk_canonical(l.a, at("ws/notes.md"))), -1);
	cr_expect_eq(mount_at(&l, "--ro-bind-fd", NULL, walk_canonical(l.a, at("ws/notes.md"))),
		     -1);
	/* The copy: contents and mode of the host file; the link made again. */
	cr_assert_eq(l.plan.n_writebacks, 1);
	snprintf(copy, sizeof(copy), "%s/.omnibox-wf/0/notes.md", at("scratch"));
	fd = open(copy, O_RDONLY);
	cr_assert_geq(fd, 0);
	cr_expect_eq(read(fd, buf, sizeof(buf) - 1), 5);
	close(fd);
	cr_expect_str_eq(buf, "host\n");
	{
		struct stat st;
		char target[64] = {0};

		cr_expect_eq(stat(copy, &st), 0);
		cr_expect_eq(st.st_mode & 0777, 0640);
		snprintf(copy, sizeof(copy), "%s/.omnibox-wf/0/link", at("scratch"));
		cr_expect_gt(readlink(copy, target, sizeof(target) - 1), 0);
		cr_expect_str_eq(target, "../real");
	}
	/* A save inside reaches the host file, the same inode. */
	snprintf(copy, sizeof(copy), "%s/.omnibox-wf/0/new", at("scratch"));
	fd = open(copy, O_WRONLY | O_CREAT, 0600);
	cr_assert_eq(write(fd, "saved by rename\n", 16), 16);
	close(fd);
	snprintf(buf, sizeof(buf), "%s/.omnibox-wf/0/notes.md", at("scratch"));
	cr_assert_eq(rename(copy, buf), 0);
	cr_expect_eq(writeback_sync(&l.plan.writebacks[0], l.err, sizeof(l.err)), 1, "%s", l.err);
	cr_expect_eq(writeback_sync(&l.plan.writebacks[0], l.err, sizeof(l.err)), 0, "copied twice");
	memset(buf, 0, sizeof(buf));
	fd = open(at("ws/notes.md"), O_RDONLY);
	cr_expect_eq(read(fd, buf, sizeof(buf) - 1), 16);
	close(fd);
	cr_expect_str_eq(buf, "saved by rename\n");
	launch_free(&l);
}

Test(resolve, write_files_messages_show_the_path_escaped)
{
	/* A canonical path the agent chose through a link: ESC, BEL, a newline. */
	struct writeback w = {.path = "/ws/a\x1b]0;x\x07\nb\\c", .name = "copy"};
	char err[512];

	cr_assert_eq(mkdir(at("wb"), 0700), 0);
	cr_assert_eq(symlink("elsewhere", at("wb/copy")), 0);
	w.dir_fd = open(at("wb"), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	w.host_fd = open(at("ws/src/a.c"), O_PATH | O_CLOEXEC);
	cr_assert(w.dir_fd >= 0 && w.host_fd >= 0);
	/* A link planted under the copy's name is not written back, and said so. */
	cr_expect_eq(writeback_sync(&w, err, sizeof(err)), -1);
	cr_expect_str_eq(err, "write_files /ws/a\\x1b]0;x\\x07\\nb\\\\c: the sandbox's copy cannot "
			      "be read (it is a symbolic link); not written back");
	close(w.dir_fd);
	close(w.host_fd);
}

Test(resolve, write_files_in_a_writable_or_a_system_directory_keep_the_old_form)
{
	const char *cmd[] = {"/bin/true", NULL};
	struct launch l;
	int fd;

	fd = open(at("ws/notes.md"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
	close(fd);
	/* In a writable workspace: the workspace's own mount covers it. */
	l = launch("os_env:\n  sandbox:\n    write_paths: [.]\n    write_files: [notes.md]\n", cmd,
		   false);
	cr_assert_eq(l.rc, 0, "%s", l.err);
	cr_expect_eq(mount_at(&l, "--bind-fd", NULL, walk_canonical(l.a, at("ws/notes.md"))), -1);
	cr_expect_eq(l.plan.n_writebacks, 0);
	launch_free(&l);
	/* In /etc: bound on itself, and said so. */
	l = launch("os_env:\n  sandbox:\n    write_files: [/etc/passwd]\n", cmd, false);
	cr_assert_eq(l.rc, 0, "%s", l.err);
	cr_expect_gt(mount_at(&l, "--bind-fd", NULL, "/etc/passwd"), -1, "%s", l.argv.data);
	cr_assert_eq(l.plan.n_notes, 1);
	cr_expect(strstr(l.plan.notes[0], "is bound on its own") &&
		      strstr(l.plan.notes[0], "a system directory"),
		  "%s", l.plan.notes[0]);
	launch_free(&l);
}
