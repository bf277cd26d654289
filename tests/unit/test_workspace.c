/*
 * test_workspace.c - compiler/decide/workspace.c: which directory a launch
 * takes as its workspace, with POSIX and Windows paths, and every refusal
 * verbatim.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "compiler/decide/workspace.h"

static struct arena *a;

static void
setup(void)
{
	a = arena_new();
}

static void
teardown(void)
{
	arena_free(a);
}

TestSuite(workspace, .init = setup, .fini = teardown);

#define expect_workspace(rq, want)                                                                 \
	do {                                                                                       \
		struct workspace_verdict v_ = workspace_decide(a, &(rq));                          \
		cr_assert(v_.path, "refused: %s", v_.why);                                         \
		cr_expect_str_eq(v_.path, want);                                                   \
	} while (0)

#define expect_refused(rq, want_line, want)                                                        \
	do {                                                                                       \
		struct workspace_verdict v_ = workspace_decide(a, &(rq));                          \
		cr_assert_null(v_.path, "took %s", v_.path);                                       \
		cr_expect_str_eq(v_.why, want);                                                    \
		cr_expect_eq(v_.line, want_line);                                                  \
	} while (0)

Test(workspace, the_policys_own_workspace_is_taken_canonical)
{
	struct workspace_request rq = {.own = "/w/link", .own_canon = "/w/proj"};

	expect_workspace(rq, "/w/proj");
}

Test(workspace, cwd_wins_over_the_policys_own_without_a_terminal)
{
	struct workspace_request rq = {
	    .own = "/w/proj", .cwd_given = "../other", .cwd = "/w/other", .cwd_canon = "/w/other"};

	expect_workspace(rq, "/w/other");
}

Test(workspace, a_terminals_cwd_that_names_its_own_workspace_is_no_override)
{
	struct workspace_request rq = {
	    .own = "/w/proj", .cwd_given = ".", .cwd = "/w/proj/", .terminal = "t"};

	expect_workspace(rq, "/w/proj/");
}

Test(workspace, a_terminals_cwd_elsewhere_needs_allow_cwd_override)
{
	struct workspace_request rq = {
	    .own = "/w/proj", .cwd_given = "sub", .cwd = "/w/proj/sub", .terminal = "t"};

	expect_refused(rq, 0,
		       "--cwd sub: terminal 't' does not allow a cwd override "
		       "(allow_cwd_override); its workspace is /w/proj");
	rq.allow_cwd_override = true;
	expect_workspace(rq, "/w/proj/sub");
}

Test(workspace, allow_cwd_override_accepts_only_a_directory_inside)
{
	struct workspace_request rq = {.own = "/w/proj",
				       .cwd_given = "/w/projx",
				       .cwd = "/w/projx",
				       .terminal = "t",
				       .allow_cwd_override = true,
				       .override_line = 9};

	expect_refused(rq, 9,
		       "--cwd /w/projx is outside the workspace /w/proj of terminal 't': "
		       "allow_cwd_override accepts a directory inside it");
}

Test(workspace, the_root_is_never_the_workspace)
{
	struct workspace_request rq = {.own = "/"};

	expect_refused(rq, 0,
		       "the workspace cannot be /: run omnibox-run from a project directory, or "
		       "set os_env.cwd");
}

Test(workspace, a_link_to_the_root_a_home_or_a_hidden_path_is_refused)
{
	struct workspace_request rq = {.own = "/w/l", .own_canon = "/home/me", .home = "/home/me"};

	expect_refused(rq, 0,
		       "the workspace /w/l resolves through a symlink to /home/me: omnibox never "
		       "takes /, a home directory or a parent of one, a system directory or a "
		       "hidden path as a workspace by way of a link; name it itself if that is "
		       "what you mean");
	rq.own_canon = "/w/.ssh";
	cr_expect_null(workspace_decide(a, &rq).path);
	rq.own_canon = "/";
	cr_expect_null(workspace_decide(a, &rq).path);
	/* Named itself, a home is the user's choice, as on every launcher. */
	rq.own = rq.own_canon = "/home/me";
	expect_workspace(rq, "/home/me");
}

Test(workspace, windows_drive_and_share_roots_are_never_the_workspace)
{
	struct workspace_request rq = {.own = "C:\\", .windows = true};

	expect_refused(rq, 0,
		       "the workspace cannot be C:\\, the root of a drive: run omnibox-run.exe "
		       "from a project directory, or set os_env.cwd");
	rq.own = "\\\\server\\share\\";
	cr_expect_null(workspace_decide(a, &rq).path);
	rq.own = "\\\\server\\share\\proj";
	expect_workspace(rq, "\\\\server\\share\\proj");
}

Test(workspace, windows_paths_compare_without_regard_to_case_or_separator)
{
	struct workspace_request rq = {.own = "C:\\Work\\Proj",
				       .cwd_given = "c:/work/proj/Sub",
				       .cwd = "c:\\work\\proj\\Sub",
				       .terminal = "t",
				       .windows = true};

	cr_expect(workspace_within("c:\\WORK\\proj\\x", "C:\\Work\\Proj", true));
	cr_expect_not(workspace_within("C:\\Work\\Projx", "C:\\Work\\Proj", true));
	cr_expect(workspace_within("D:\\x", "D:\\", true));
	cr_expect_not(workspace_within("/W/proj", "/w/proj", false));
	cr_expect_null(workspace_decide(a, &rq).path);
	rq.allow_cwd_override = true;
	expect_workspace(rq, "c:\\work\\proj\\Sub");
	/* A spelling that differs only in case is no link. */
	rq.cwd_canon = "C:\\Work\\Proj\\sub";
	expect_workspace(rq, "C:\\Work\\Proj\\sub");
}

Test(workspace, a_windows_link_to_the_profile_is_refused_on_its_drive_only)
{
	struct workspace_request rq = {.own = "C:\\w\\l",
				       .own_canon = "C:\\Users\\me",
				       .home = "C:\\Users\\me",
				       .windows = true};

	cr_expect_null(workspace_decide(a, &rq).path);
	rq.own_canon = "D:\\Users\\me\\proj";
	expect_workspace(rq, "D:\\Users\\me\\proj");
}
