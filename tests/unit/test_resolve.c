/*
 * test_resolve.c - from a symbolic policy to a launch on a real tree:
 * canonical paths, the order of grants and masks, placeholders for missing
 * mask_paths, the command's visibility.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compiler/policy.h"
#include "runtime/resolve/resolve.h"

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
	rq.init = "/usr/libexec/omnibox-init";
	rq.command = (char *const *)command; /* only read */
	rq.n_command = 0;
	while (command && command[rq.n_command])
		rq.n_command++;
	rq.environ = env;
	rq.create_placeholders = placeholders;
	rq.seccomp_fd = -1;
	rq.status_fd = -1;
	l.rc = launch_resolve(l.a, &rq, &l.plan, l.err, sizeof(l.err));
	if (l.rc == 0)
		bwrap_build(l.plan.policy, &l.plan.ctx, NULL, &l.argv, NULL);
	return l;
}

static void
launch_free(struct launch *l)
{
	if (l->rc == 0)
		launch_cleanup(&l->plan);
	tb_free(&l->argv);
	arena_free(l->a);
}

/* Position of the lines "FLAG\nSRC\nDST" in the argv text, or -1. */
static long
mount_at(const struct launch *l, const char *flag, const char *src, const char *dst)
{
	char want[2048];
	const char *p;

	if (dst)
		snprintf(want, sizeof(want), "\n%s\n%s\n%s\n", flag, src, dst);
	else
		snprintf(want, sizeof(want), "\n%s\n%s\n", flag, src);
	p = strstr(l->argv.data, want);
	return p ? p - l->argv.data : -1;
}

TestSuite(resolve, .init = setup_tree, .fini = teardown_tree);

Test(resolve, canonical_paths_follow_symlinks_and_keep_missing_tails)
{
	struct arena *a = arena_new();
	char *real = realpath(at("real"), NULL);

	cr_expect_str_eq(resolve_canonical(a, at("ws/link/x/../y")), arena_printf(a, "%s/y", real));
	cr_expect_str_eq(resolve_canonical(a, at("ws/missing/../src")),
			 resolve_canonical(a, at("ws/src")));
	cr_expect_str_eq(resolve_canonical(a, "/../.."), "/");
	cr_expect_null(resolve_canonical(a, "relative"));
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
	ws = mount_at(&l, "--ro-bind", l.plan.workspace, l.plan.workspace);
	src = mount_at(&l, "--bind-try", at("ws/src"), at("ws/src"));
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
	cr_expect_gt(mount_at(&l, "--ro-bind", at("ws/.config/gh"), at("ws/.config/gh")),
		     mount_at(&l, "--tmpfs", at("ws/.config"), NULL));
	cr_expect_geq(mount_at(&l, "--ro-bind-try", at("home/.ssh"), at("home/.ssh")), 0);
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

	/* A read-only workspace: nothing could create it, nothing is created. */
	l = launch("os_env:\n  sandbox:\n    mask_paths: [new/key]\n", cmd, true);
	cr_assert_eq(l.rc, 0, "%s", l.err);
	cr_expect_neq(access(at("ws/new"), F_OK), 0);
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
	cr_expect_geq(mount_at(&l, "--ro-bind", dir, dir), 0, "%s", l.argv.data);
	cr_expect_str_eq(l.plan.argv[0], "run");
	launch_free(&l);

	home[0] = at("home/hometool");
	l = launch("os_env: {}\n", home, false);
	cr_expect_eq(l.rc, -1);
	cr_expect(strstr(l.err, "lives directly in"), "%s", l.err);
	launch_free(&l);

	l = launch("os_env: {}\n", missing, false);
	cr_expect_eq(l.rc, -1);
	cr_expect_str_eq(l.err, "command 'no-such-command' not found in PATH");
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
