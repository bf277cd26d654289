/*
 * test_winjob.c - the Job Object manifest: what the emitter writes for
 * every limit and every setting a Job Object cannot enforce, the warnings
 * and errors (verbatim, with line:col), and the strict reader in
 * runtime/win/manifest.c that omnibox-run.exe uses, fed with the emitter's
 * own output and with broken manifests.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/policy.h"
#include "emitters/emit.h"
#include "emitters/winjob.h"
#include "runtime/win/manifest.h"

struct run {
	struct arena *arena;
	struct policy *policy;
	struct textbuf out;
	int rc;	     /* the emitter's; -2 when the policy did not compile */
	char *diags; /* everything diag_print() wrote */
	unsigned errors, warnings;
};

/* Compile YAML (for TERMINAL when not NULL) and emit its manifest. */
static struct run
emit_terminal(const char *yaml, const char *terminal)
{
	struct run r = {0};
	struct diag d;
	size_t n;
	FILE *f;

	r.arena = arena_new();
	diag_init(&d, r.arena, "t.yaml", yaml, strlen(yaml));
	r.policy = policy_compile(r.arena, &d, "t.yaml", yaml, strlen(yaml));
	if (r.policy && terminal)
		r.policy = policy_select_terminal(r.arena, &d, r.policy, terminal);
	r.rc = r.policy ? emit_winjob(r.policy, TARGET_WINDOWS, &d, &r.out) : -2;
	r.errors = d.errors;
	r.warnings = d.warnings;
	f = open_memstream(&r.diags, &n);
	diag_print(&d, f, true);
	fclose(f);
	return r;
}

static struct run
emit(const char *yaml)
{
	return emit_terminal(yaml, NULL);
}

static void
run_free(struct run *r)
{
	arena_free(r->arena);
	tb_free(&r->out);
	free(r->diags);
}

static const char *
text(const struct run *r)
{
	return r->out.data ? r->out.data : "";
}

/* Does OUT hold LINE as one whole line? */
static bool
has_line(const char *out, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = out; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, line, n) && (p[n] == '\n' || p[n] == '\0'))
			return true;
	return false;
}

/* How many lines of OUT start with PREFIX? */
static int
count_lines(const char *out, const char *prefix)
{
	int n = 0;

	for (const char *p = out; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		n += !strncmp(p, prefix, strlen(prefix));
	return n;
}

#define expect_manifest_line(r, line)                                                              \
	cr_expect(has_line(text(&(r)), line), "expected the manifest line\n  %s\ngot:\n%s", line,  \
		  text(&(r)))

#define expect_no_manifest_line(r, prefix)                                                         \
	cr_expect(count_lines(text(&(r)), prefix) == 0,                                            \
		  "expected no manifest line starting with\n  %s\ngot:\n%s", prefix, text(&(r)))

#define expect_diag(r, line)                                                                       \
	cr_expect(has_line((r).diags, "t.yaml:" line),                                             \
		  "expected the diagnostic\n  t.yaml:%s\ngot:\n%s", line, (r).diags)

#define SB "os_env:\n  sandbox:\n"
#define ALWAYS "KILL_ON_JOB_CLOSE|DIE_ON_UNHANDLED_EXCEPTION"

/* ---- limits ------------------------------------------------------------------------- */

Test(limits, memory_is_the_job_memory_limit_in_bytes)
{
	struct run r = emit(SB "    limits:\n      memory: 512MiB\n");

	cr_assert_eq(r.rc, 0, "%s", r.diags);
	expect_manifest_line(r, "limit_flags = " ALWAYS "|JOB_MEMORY");
	expect_manifest_line(r,
			     "# os_env.sandbox.limits.memory (line 4): 512 MiB for all processes "
			     "of the job together");
	expect_manifest_line(r, "job_memory_limit = 536870912");
	cr_expect_eq(r.warnings, 0, "%s", r.diags);
	run_free(&r);
}

Test(limits, memory_in_decimal_units_is_shown_in_bytes)
{
	struct run r = emit(SB "    limits:\n      memory: 3GB\n");

	cr_assert_eq(r.rc, 0, "%s", r.diags);
	expect_manifest_line(r, "# os_env.sandbox.limits.memory (line 4): 3000000000 bytes for all "
				"processes of the job together");
	expect_manifest_line(r, "job_memory_limit = 3000000000");
	run_free(&r);
}

Test(limits, processes_is_the_active_process_limit)
{
	struct run r = emit(SB "    limits:\n      processes: 64\n");

	cr_assert_eq(r.rc, 0, "%s", r.diags);
	expect_manifest_line(r, "limit_flags = " ALWAYS "|ACTIVE_PROCESS");
	expect_manifest_line(r, "# os_env.sandbox.limits.processes (line 4): processes alive at "
				"once");
	expect_manifest_line(r, "active_process_limit = 64");
	run_free(&r);
}

Test(limits, cpu_time_is_the_job_user_time_in_100ns_ticks)
{
	struct run r = emit(SB "    limits:\n      cpu_time: 90s\n");

	cr_assert_eq(r.rc, 0, "%s", r.diags);
	expect_manifest_line(r, "limit_flags = " ALWAYS "|JOB_TIME");
	expect_manifest_line(r, "# os_env.sandbox.limits.cpu_time (line 4): 90 s of user-mode CPU "
				"time for the whole job,");
	expect_manifest_line(r, "per_job_user_time_limit = 900000000");
	run_free(&r);
}

Test(limits, the_longest_cpu_time_fits_the_signed_tick_count)
{
	/* validation caps cpu_time at 2^32-1 s: 42949672950000000 ticks < 2^63. */
	struct run r = emit(SB "    limits:\n      cpu_time: 4294967295s\n");

	cr_assert_eq(r.rc, 0, "%s", r.diags);
	expect_manifest_line(r, "per_job_user_time_limit = 42949672950000000");
	run_free(&r);
}

Test(limits, cpu_rate_is_a_hard_cap_in_hundredths_of_a_percent)
{
	struct run r = emit(SB "    limits:\n      cpu_rate: 50%\n");

	cr_assert_eq(r.rc, 0, "%s", r.diags);
	/* Rate control is its own information class, not a limit flag. */
	expect_manifest_line(r, "limit_flags = " ALWAYS);
	expect_manifest_line(r, "cpu_rate_control_flags = ENABLE|HARD_CAP");
	expect_manifest_line(r, "cpu_rate = 5000");
	run_free(&r);

	r = emit(SB "    limits:\n      cpu_rate: 1%\n");
	expect_manifest_line(r, "cpu_rate = 100");
	run_free(&r);
	r = emit(SB "    limits:\n      cpu_rate: 100%\n");
	expect_manifest_line(r, "cpu_rate = 10000");
	run_free(&r);
}

Test(limits, open_files_is_not_enforced_and_says_so)
{
	struct run r = emit(SB "    limits:\n      open_files: 1024\n");

	cr_assert_eq(r.rc, 0, "%s", r.diags);
	expect_manifest_line(r, "limit_flags = " ALWAYS);
	expect_manifest_line(r, "not-enforced = os_env.sandbox.limits.open_files (line 4): a Job "
				"Object cannot limit open files or handles");
	expect_diag(r, "4:19: warning: os_env.sandbox.limits.open_files is not enforced on "
		       "Windows: a Job Object cannot limit open files or handles");
	cr_expect_eq(r.warnings, 1, "%s", r.diags);
	run_free(&r);
}

Test(limits, every_limit_together)
{
	struct run r = emit(SB "    limits: {memory: 2GiB, processes: 8, cpu_time: 10m, cpu_rate: "
			       "25%, open_files: 64}\n");

	cr_assert_eq(r.rc, 0, "%s", r.diags);
	expect_manifest_line(r, "limit_flags = " ALWAYS "|ACTIVE_PROCESS|JOB_MEMORY|JOB_TIME");
	expect_manifest_line(r, "job_memory_limit = 2147483648");
	expect_manifest_line(r, "active_process_limit = 8");
	expect_manifest_line(r, "per_job_user_time_limit = 6000000000");
	expect_manifest_line(r, "cpu_rate = 2500");
	cr_expect_eq(count_lines(text(&r), "not-enforced = "), 2, "%s", text(&r));
	run_free(&r);
}

Test(limits, none_written_means_only_the_always_on_flags)
{
	struct run r = emit(SB "    write_paths: [.]\n");

	cr_assert_eq(r.rc, 0, "%s", r.diags);
	expect_manifest_line(r, "limit_flags = " ALWAYS);
	expect_manifest_line(r, "# os_env.sandbox.limits not written: no resource limits");
	expect_no_manifest_line(r, "job_memory_limit");
	expect_no_manifest_line(r, "active_process_limit");
	expect_no_manifest_line(r, "per_job_user_time_limit");
	expect_no_manifest_line(r, "cpu_rate");
	run_free(&r);
}

Test(limits, the_ui_restrictions_are_always_on)
{
	struct run r = emit("name: x\n");

	cr_assert_eq(r.rc, 0, "%s", r.diags);
	expect_manifest_line(r, "ui_restrictions = DESKTOP|DISPLAYSETTINGS|EXITWINDOWS|GLOBALATOMS|"
				"HANDLES|READCLIPBOARD|SYSTEMPARAMETERS|WRITECLIPBOARD");
	expect_manifest_line(r, "job = create");
	run_free(&r);
}

/* ---- what a Job Object cannot enforce ----------------------------------------------- */

Test(unenforced, every_path_list_is_a_line_and_a_warning_at_its_key)
{
	struct run r =
	    emit(SB "    write_paths: [.]\n    read_paths: [/opt]\n    write_files: [a]\n"
		    "    mask_paths: [.env]\n    deny_unix_socket_paths: [/run/x.sock]\n");

	cr_assert_eq(r.rc, 0, "%s", r.diags);
	expect_manifest_line(r,
			     "not-enforced = os_env.sandbox.write_paths (line 3): a Job Object "
			     "does not isolate files: the agent can write wherever the user can");
	expect_manifest_line(r, "not-enforced = os_env.sandbox.read_paths (line 4): a Job Object "
				"does not isolate files: the agent can read whatever the user can");
	expect_manifest_line(r,
			     "not-enforced = os_env.sandbox.write_files (line 5): a Job Object "
			     "does not isolate files: the agent can write wherever the user can");
	expect_manifest_line(r, "not-enforced = os_env.sandbox.mask_paths (line 6): a Job Object "
				"cannot hide files: these paths stay visible");
	expect_manifest_line(r, "not-enforced = os_env.sandbox.deny_unix_socket_paths (line 7): a "
				"Job Object cannot block sockets: these stay reachable");
	expect_diag(r, "3:5: warning: os_env.sandbox.write_paths is not enforced on Windows: a Job "
		       "Object does not isolate files: the agent can write wherever the user can");
	expect_diag(r, "4:5: warning: os_env.sandbox.read_paths is not enforced on Windows: a Job "
		       "Object does not isolate files: the agent can read whatever the user can");
	expect_diag(r, "5:5: warning: os_env.sandbox.write_files is not enforced on Windows: a Job "
		       "Object does not isolate files: the agent can write wherever the user can");
	expect_diag(r, "6:5: warning: os_env.sandbox.mask_paths is not enforced on Windows: a Job "
		       "Object cannot hide files: these paths stay visible");
	expect_diag(r, "7:5: warning: os_env.sandbox.deny_unix_socket_paths is not enforced on "
		       "Windows: a Job Object cannot block sockets: these stay reachable");
	/* and the protected paths a writable directory brings (docs/protect.md) */
	expect_diag(r, "3:5: warning: os_env.sandbox.write_paths (protected paths) is not enforced "
		       "on Windows: a Job Object cannot keep .git/hooks, .git/config, .envrc and "
		       "the other protected paths read-only inside a writable directory");
	cr_expect_eq(r.warnings, 6, "one warning per setting:\n%s", r.diags);
	run_free(&r);
}

Test(unenforced, filesystem_isolation_is_always_listed_without_a_warning)
{
	struct run r = emit("name: x\n");

	cr_assert_eq(r.rc, 0, "%s", r.diags);
	expect_manifest_line(r,
			     "not-enforced = filesystem isolation (implicit): a Job Object does "
			     "not isolate files: the workspace is not read-only, nothing outside "
			     "it is hidden and no dotfile is masked");
	cr_expect_eq(r.warnings, 0, "%s", r.diags);
	run_free(&r);
}

Test(unenforced, network_off_is_a_line_and_a_warning_at_the_value)
{
	struct run r = emit(SB "    allow_network: false\n");

	cr_assert_eq(r.rc, 0, "%s", r.diags);
	expect_manifest_line(r,
			     "not-enforced = os_env.sandbox.allow_network (line 3): a Job Object "
			     "has no network control: the network stays reachable");
	expect_diag(r, "3:20: warning: os_env.sandbox.allow_network is not enforced on Windows: a "
		       "Job Object has no network control: the network stays reachable");
	cr_expect_eq(r.warnings, 1, "%s", r.diags);
	run_free(&r);
}

Test(unenforced, network_on_is_what_happens_anyway)
{
	struct run r = emit(SB "    allow_network: true\n");

	cr_assert_eq(r.rc, 0, "%s", r.diags);
	cr_expect_eq(count_lines(text(&r), "not-enforced = "), 1, "%s", text(&r));
	cr_expect_eq(r.warnings, 0, "%s", r.diags);
	run_free(&r);
}

Test(unenforced, dotfile_settings_are_lines_and_warnings)
{
	struct run r = emit(SB "    cwd_allow_hidden: [.git, .venv]\n    cwd_hidden_scan_recursive: true\n"
			       "    cwd_hidden_scan_max_entries: 10\n"
			       "    cwd_hidden_scan_overflow: error\n");

	cr_assert_eq(r.rc, 0, "%s", r.diags);
	expect_manifest_line(r, "not-enforced = os_env.sandbox.cwd_allow_hidden (line 3): a Job "
				"Object cannot hide files: no dotfile is masked");
	expect_diag(r,
		    "3:5: warning: os_env.sandbox.cwd_allow_hidden is not enforced on Windows: a "
		    "Job Object cannot hide files: no dotfile is masked");
	expect_diag(r, "4:32: warning: os_env.sandbox.cwd_hidden_scan_recursive is not enforced on "
		       "Windows: a Job Object cannot hide files: no dotfile is masked");
	expect_diag(r, "5:34: warning: os_env.sandbox.cwd_hidden_scan_max_entries is not enforced "
		       "on Windows: a Job Object cannot hide files: no dotfile is masked");
	expect_diag(r, "6:31: warning: os_env.sandbox.cwd_hidden_scan_overflow is not enforced on "
		       "Windows: a Job Object cannot hide files: no dotfile is masked");
	cr_expect_eq(r.warnings, 4, "%s", r.diags);
	run_free(&r);
}

Test(unenforced, a_terminal_setting_is_named_by_its_own_path)
{
	struct run r = emit_terminal("terminals:\n  t:\n    os_env:\n      sandbox:\n        "
				     "read_paths: [/opt]\n",
				     "t");

	cr_assert_eq(r.rc, 0, "%s", r.diags);
	expect_manifest_line(r, "not-enforced = terminals.t.os_env.sandbox.read_paths (line 5): a "
				"Job Object does not isolate files: the agent can read whatever "
				"the user can");
	expect_diag(r, "5:9: warning: terminals.t.os_env.sandbox.read_paths is not enforced on "
		       "Windows: a Job Object does not isolate files: the agent can read whatever "
		       "the user can");
	run_free(&r);
}

/* ---- errors --------------------------------------------------------------------------- */

Test(errors, egress_rules_with_type_auto_are_an_error_at_the_key)
{
	struct run r = emit(SB "    egress_rules:\n      - \"GET api.github.com/**\"\n");

	cr_expect_eq(r.rc, -1);
	expect_diag(r, "3:5: error: os_env.sandbox.egress_rules cannot be enforced on Windows: a "
		       "Job Object has no network control (compile for linux or darwin, where the "
		       "egress proxy is the only way out)");
	cr_expect_eq(r.errors, 1, "%s", r.diags);
	run_free(&r);
}

Test(errors, credential_proxy_with_type_auto_is_an_error_too)
{
	struct run r =
	    emit(SB "    egress_rules: [\"* api.github.com/**\"]\n"
		    "    credential_proxy:\n"
		    "      - {type: https_bearer, target: api.github.com, source: {env: T}}\n");

	cr_expect_eq(r.rc, -1);
	expect_diag(r, "3:5: error: os_env.sandbox.egress_rules cannot be enforced on Windows: a "
		       "Job Object has no network control (compile for linux or darwin, where the "
		       "egress proxy is the only way out)");
	expect_diag(r, "4:5: error: os_env.sandbox.credential_proxy cannot be enforced on Windows: "
		       "it needs the egress proxy, which a Job Object cannot impose");
	cr_expect_eq(r.errors, 2, "%s", r.diags);
	run_free(&r);
}

Test(errors, an_empty_egress_list_filters_nothing_and_is_fine)
{
	struct run r = emit(SB "    egress_rules: []\n");

	cr_expect_eq(r.rc, 0, "%s", r.diags);
	cr_expect_eq(r.errors, 0, "%s", r.diags);
	run_free(&r);
}

Test(errors, egress_rules_with_a_pinned_windows_jobobject_never_reach_the_emitter)
{
	struct run r = emit(SB "    type: windows_jobobject\n"
			       "    egress_rules: [\"GET api.github.com/**\"]\n");

	cr_expect_eq(r.rc, -2, "validation should have refused it:\n%s", r.diags);
	expect_diag(r, "4:5: error: os_env.sandbox.egress_rules need a linux_bwrap or "
		       "darwin_seatbelt sandbox, not windows_jobobject");
	run_free(&r);
}

Test(errors, target_all_can_ask_whether_there_is_a_windows_form)
{
	struct run r = emit(SB "    egress_rules: [\"GET api.github.com/**\"]\n");

	cr_assert_not_null(r.policy, "%s", r.diags);
	cr_expect_not(winjob_can_express(r.policy));
	run_free(&r);
	r = emit(SB "    egress_rules: []\n    read_paths: [/opt]\n");
	cr_assert_not_null(r.policy, "%s", r.diags);
	cr_expect(winjob_can_express(r.policy));
	run_free(&r);
	r = emit(SB "    type: none\n");
	cr_expect(winjob_can_express(r.policy));
	run_free(&r);
}

Test(errors, a_pinned_linux_sandbox_has_no_windows_form)
{
	struct run r = emit(SB "    type: linux_bwrap\n");

	cr_expect_eq(r.rc, -1);
	expect_diag(r, "3:11: error: sandbox type linux_bwrap has no windows form (compile for its "
		       "own target, or use auto)");
	run_free(&r);
}

/* ---- sandbox type none ------------------------------------------------------------------ */

Test(none, no_job_is_created_and_limits_say_so)
{
	struct run r = emit(SB "    type: none\n    write_paths: [.]\n"
			       "    limits: {memory: 1GiB, processes: 4}\n");

	cr_assert_eq(r.rc, 0, "%s", r.diags);
	expect_manifest_line(r, "job = none");
	expect_manifest_line(r, "# sandbox type none (line 3): no Job Object; the command runs "
				"unconfined,");
	expect_no_manifest_line(r, "limit_flags");
	expect_no_manifest_line(r, "ui_restrictions");
	expect_no_manifest_line(r, "job_memory_limit");
	expect_no_manifest_line(r, "not-enforced = filesystem isolation");
	expect_manifest_line(r, "not-enforced = os_env.sandbox.write_paths (line 4): the sandbox "
				"type is none, so no Job Object is created");
	expect_manifest_line(r, "not-enforced = os_env.sandbox.limits.memory (line 5): the sandbox "
				"type is none, so no Job Object is created");
	expect_manifest_line(r, "not-enforced = os_env.sandbox.limits.processes (line 5): the "
				"sandbox type is none, so no Job Object is created");
	/* The path list already has validation's warning; it gets no second one. */
	expect_diag(r,
		    "4:5: warning: os_env.sandbox.write_paths has no effect: the sandbox type is "
		    "none");
	expect_diag(r, "5:22: warning: os_env.sandbox.limits.memory is not enforced on Windows: "
		       "the sandbox type is none, so no Job Object is created");
	expect_diag(r, "5:39: warning: os_env.sandbox.limits.processes is not enforced on Windows: "
		       "the sandbox type is none, so no Job Object is created");
	cr_expect_eq(r.warnings, 3, "%s", r.diags);
	/* The environment allow-list still applies. */
	expect_manifest_line(r, "env_scratch = TEMP");
	run_free(&r);
}

Test(none, a_null_sandbox_is_the_default_sandbox_and_a_null_type_is_none)
{
	struct run r = emit("os_env:\n  sandbox: ~\n");

	cr_assert_eq(r.rc, 0, "%s", r.diags);
	expect_no_manifest_line(r, "job = none");
	run_free(&r);
	r = emit("os_env:\n  sandbox: {type: ~}\n");
	cr_assert_eq(r.rc, 0, "%s", r.diags);
	expect_manifest_line(r, "job = none");
	run_free(&r);
}

/* ---- workspace, environment, terminal -------------------------------------------------- */

Test(launch, the_workspace_follows_os_env_cwd)
{
	struct run r = emit("name: x\n");

	expect_manifest_line(r, "workspace = {LAUNCH}");
	expect_manifest_line(r, "start_in_scratch = false");
	expect_no_manifest_line(r, "fork");
	run_free(&r);
	r = emit("os_env:\n  cwd: ~/src/app\n  start_in_scratch: true\n");
	cr_assert_eq(r.rc, 0, "%s", r.diags);
	expect_manifest_line(r, "# os_env.cwd (line 2): the workspace, where the command starts");
	expect_manifest_line(r, "workspace = {HOME}/src/app");
	expect_manifest_line(r, "# os_env.start_in_scratch (line 3)");
	expect_manifest_line(r, "start_in_scratch = true");
	run_free(&r);
	r = emit("os_env:\n  cwd: sub/dir\n");
	expect_manifest_line(r, "workspace = {LAUNCH}/sub/dir");
	run_free(&r);
	r = emit("os_env:\n  cwd: /srv/work\n");
	expect_manifest_line(r, "workspace = /srv/work");
	run_free(&r);
}

Test(launch, fork_is_recorded_so_the_runtime_refuses)
{
	struct run r = emit("os_env:\n  fork: true\n");

	cr_assert_eq(r.rc, 0, "%s", r.diags);
	expect_manifest_line(r, "fork = true");
	run_free(&r);
}

Test(launch, the_environment_is_the_windows_list_plus_passthrough)
{
	static const char *const names[] = {"PATH",	   "SYSTEMROOT",   "SYSTEMDRIVE",
					    "WINDIR",	   "COMSPEC",	   "PATHEXT",
					    "USERPROFILE", "HOMEDRIVE",	   "HOMEPATH",
					    "APPDATA",	   "LOCALAPPDATA", "NUMBER_OF_PROCESSORS"};
	struct run r = emit(SB "    env_passthrough:\n      - AWS_PROFILE\n      - GIT_DIR\n");
	char line[64];

	cr_assert_eq(r.rc, 0, "%s", r.diags);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(line, sizeof(line), "env_pass = %s", names[i]);
		expect_manifest_line(r, line);
	}
	expect_manifest_line(r, "env_pass_prefix = PROCESSOR_");
	expect_manifest_line(r, "# os_env.sandbox.env_passthrough (line 4)");
	expect_manifest_line(r, "env_pass = AWS_PROFILE");
	expect_manifest_line(r, "# os_env.sandbox.env_passthrough (line 5)");
	expect_manifest_line(r, "env_pass = GIT_DIR");
	expect_manifest_line(r, "env_scratch = TEMP");
	expect_manifest_line(r, "env_scratch = TMP");
	cr_expect_eq(count_lines(text(&r), "env_pass = "), 14, "%s", text(&r));
	/* The Linux names are not the Windows list. */
	expect_no_manifest_line(r, "env_pass = HOME\n");
	expect_no_manifest_line(r, "env_pass = TMPDIR");
	run_free(&r);
}

Test(launch, a_terminal_brings_its_command_and_env_escaped)
{
	struct run r = emit_terminal("terminals:\n  sh:\n    command: \"C:\\\\Git\\\\bash.exe\"\n"
				     "    args: [\"-c\", \" a\\tb \", \"\"]\n"
				     "    env: {CI: \"1\\n2\"}\n    env_unset: [HISTFILE]\n",
				     "sh");

	cr_assert_eq(r.rc, 0, "%s", r.diags);
	expect_manifest_line(r, "# terminal sh (line 2): its command runs when none follows --");
	expect_manifest_line(r, "terminal = sh");
	expect_manifest_line(r, "command = C:\\\\Git\\\\bash.exe");
	expect_manifest_line(r, "arg = -c");
	expect_manifest_line(r, "arg = \\x20a\\tb\\x20");
	expect_manifest_line(r, "arg =");
	expect_manifest_line(r, "env_set = CI=1\\n2");
	expect_manifest_line(r, "env_unset = HISTFILE");
	run_free(&r);
}

Test(launch, a_line_break_in_a_name_cannot_start_a_manifest_line)
{
	struct run r = emit_terminal("terminals:\n  \"t\\nenv_pass = SECRET\":\n    command: x\n",
				     "t\nenv_pass = SECRET");
	struct manifest m;
	struct manifest_error err;
	struct terminal *t;

	/* The front end refuses such a name outright... */
	cr_expect_eq(r.rc, -2);
	cr_expect(strstr(r.diags, "contains a control character"), "%s", r.diags);
	run_free(&r);

	/* ...and the emitter escapes it anyway, should a name ever get through. */
	r = emit_terminal("terminals:\n  t:\n    command: x\n    os_env: {sandbox: {read_paths: "
			  "[/opt]}}\n",
			  "t");
	cr_assert_eq(r.rc, 0, "%s", r.diags);
	t = (struct terminal *)r.policy->terminal;
	t->name = "t\nenv_pass = SECRET";
	tb_reset(&r.out);
	{
		struct diag d;

		diag_init(&d, r.arena, "t.yaml", NULL, 0);
		cr_assert_eq(emit_winjob(r.policy, TARGET_WINDOWS, &d, &r.out), 0);
	}
	cr_expect_eq(count_lines(text(&r), "env_pass = SECRET"), 0, "%s", text(&r));
	expect_manifest_line(r, "terminal = t\\nenv_pass = SECRET");
	expect_manifest_line(r, "# Job Object manifest of t.yaml, terminal t\\nenv_pass = SECRET, "
				"read by omnibox-run.exe");
	cr_assert_eq(manifest_parse(text(&r), r.out.len, &m, &err), 0, "%u: %s", err.line,
		     err.message);
	cr_expect_str_eq(m.terminal, "t\nenv_pass = SECRET");
	for (size_t i = 0; i < m.n_env; i++)
		cr_expect_str_neq(m.env[i].name, "SECRET");
	manifest_free(&m);
	run_free(&r);
}

Test(launch, the_whole_manifest_is_stable)
{
	static const char expected[] =
	    "# Job Object manifest of t.yaml, read by omnibox-run.exe\n"
	    "# A Job Object bounds the lifetime and the resources of the agent's process\n"
	    "# tree.  It does not isolate files or the network: what the policy asks that\n"
	    "# it cannot enforce is listed at the end as not-enforced.\n"
	    "version = 1\n"
	    "policy = t.yaml\n"
	    "# sandbox type windows_jobobject (line 3)\n"
	    "job = create\n"
	    "# os_env.cwd not written: the workspace is the launch directory\n"
	    "workspace = {LAUNCH}\n"
	    "start_in_scratch = false\n"
	    "# always on: closing the job ends every process in it (omnibox-run.exe holds\n"
	    "# the only handle), a crash ends its process instead of waiting on an error\n"
	    "# dialog, and no process may break away from the job\n"
	    "limit_flags = KILL_ON_JOB_CLOSE|DIE_ON_UNHANDLED_EXCEPTION|ACTIVE_PROCESS\n"
	    "# os_env.sandbox.limits.processes (line 5): processes alive at once\n"
	    "active_process_limit = 16\n"
	    "# always on: no other desktops, no windows or atoms of other processes, no\n"
	    "# clipboard, no logoff or shutdown, no system or display settings\n"
	    "ui_restrictions = DESKTOP|DISPLAYSETTINGS|EXITWINDOWS|GLOBALATOMS|HANDLES|"
	    "READCLIPBOARD|SYSTEMPARAMETERS|WRITECLIPBOARD\n"
	    "# environment: rebuilt from these names, compared without regard to case;\n"
	    "# nothing else is inherited.  From the launching environment, when set:\n"
	    "env_pass = PATH\n"
	    "env_pass = SYSTEMROOT\n"
	    "env_pass = SYSTEMDRIVE\n"
	    "env_pass = WINDIR\n"
	    "env_pass = COMSPEC\n"
	    "env_pass = PATHEXT\n"
	    "env_pass = USERPROFILE\n"
	    "env_pass = HOMEDRIVE\n"
	    "env_pass = HOMEPATH\n"
	    "env_pass = APPDATA\n"
	    "env_pass = LOCALAPPDATA\n"
	    "env_pass = NUMBER_OF_PROCESSORS\n"
	    "env_pass_prefix = PROCESSOR_\n"
	    "# set to the private scratch dir omnibox-run.exe creates for the launch and\n"
	    "# removes after it\n"
	    "env_scratch = TEMP\n"
	    "env_scratch = TMP\n"
	    "# not enforced on Windows; omnibox-run.exe repeats these at every launch\n"
	    "not-enforced = filesystem isolation (implicit): a Job Object does not isolate "
	    "files: the workspace is not read-only, nothing outside it is hidden and no "
	    "dotfile is masked\n";
	struct run r = emit(SB "    type: windows_jobobject\n    limits:\n      processes: 16\n");

	cr_assert_eq(r.rc, 0, "%s", r.diags);
	cr_expect_str_eq(text(&r), expected);
	run_free(&r);
}

/* ---- the reader: the emitter's output, field by field ---------------------------------- */

static struct manifest
parse_ok(const char *s)
{
	struct manifest m;
	struct manifest_error err;

	cr_assert_eq(manifest_parse(s, strlen(s), &m, &err), 0, "refused at line %u: %s\n%s",
		     err.line, err.message, s);
	return m;
}

Test(reader, reads_back_every_limit_the_emitter_wrote)
{
	struct run r = emit(SB "    limits: {memory: 2GiB, processes: 8, cpu_time: 10m, cpu_rate: "
			       "25%, open_files: 64}\n    env_passthrough: [AWS_PROFILE]\n"
			       "    read_paths: [/opt]\n");
	struct manifest m;

	cr_assert_eq(r.rc, 0, "%s", r.diags);
	m = parse_ok(text(&r));
	cr_expect(m.job);
	cr_expect_str_eq(m.policy, "t.yaml");
	cr_expect_str_eq(m.workspace, "{LAUNCH}");
	cr_expect_eq(m.limit_flags, WINJOB_LIMIT_KILL_ON_JOB_CLOSE |
					WINJOB_LIMIT_DIE_ON_UNHANDLED_EXCEPTION |
					WINJOB_LIMIT_ACTIVE_PROCESS | WINJOB_LIMIT_JOB_MEMORY |
					WINJOB_LIMIT_JOB_TIME);
	cr_expect_eq(m.job_memory_limit, 2147483648ull);
	cr_expect_eq(m.active_process_limit, 8);
	cr_expect_eq(m.per_job_user_time_limit, 6000000000ull);
	cr_expect_eq(m.cpu_rate_control_flags, WINJOB_CPU_ENABLE | WINJOB_CPU_HARD_CAP);
	cr_expect_eq(m.cpu_rate, 2500);
	cr_expect_eq(m.ui_restrictions, 0xffu);
	/* 12 system names, PROCESSOR_*, env_passthrough, TEMP and TMP, in that order. */
	cr_assert_eq(m.n_env, 16);
	cr_expect_eq(m.env[11].op, ENV_PASS);
	cr_expect_eq(m.env[12].op, ENV_PASS_PREFIX);
	cr_expect_str_eq(m.env[12].name, "PROCESSOR_");
	cr_expect_eq(m.env[13].op, ENV_PASS);
	cr_expect_str_eq(m.env[13].name, "AWS_PROFILE");
	cr_expect_eq(m.env[14].op, ENV_SET_SCRATCH);
	cr_expect_str_eq(m.env[14].name, "TEMP");
	cr_expect_str_eq(m.env[14].value, "");
	cr_expect_eq(m.env[15].op, ENV_SET_SCRATCH);
	cr_expect_eq(m.not_enforced.n, 3);
	cr_expect_str_eq(m.not_enforced.v[1], "os_env.sandbox.read_paths (line 5): a Job Object "
					      "does not isolate files: the agent can read whatever "
					      "the user can");
	manifest_free(&m);
	run_free(&r);
}

Test(reader, reads_back_a_terminal_with_escapes)
{
	struct run r = emit_terminal("terminals:\n  sh:\n    command: bash\n"
				     "    args: [\"-c\", \" a\\\\b\\t\", \"\"]\n"
				     "    env: {CI: \"x=1\\n\"}\n    env_unset: [HISTFILE]\n"
				     "    os_env:\n      cwd: \"~\"\n      sandbox: {type: none}\n",
				     "sh");
	struct manifest m;

	cr_assert_eq(r.rc, 0, "%s", r.diags);
	m = parse_ok(text(&r));
	cr_expect_not(m.job);
	cr_expect_str_eq(m.terminal, "sh");
	cr_expect_str_eq(m.command, "bash");
	cr_assert_eq(m.args.n, 3);
	cr_expect_str_eq(m.args.v[0], "-c");
	cr_expect_str_eq(m.args.v[1], " a\\b\t");
	cr_expect_str_eq(m.args.v[2], "");
	cr_assert_eq(m.n_env, 17);
	cr_expect_eq(m.env[15].op, ENV_SET);
	cr_expect_str_eq(m.env[15].name, "CI");
	cr_expect_str_eq(m.env[15].value, "x=1\n");
	cr_expect_eq(m.env[16].op, ENV_UNSET);
	cr_expect_str_eq(m.env[16].name, "HISTFILE");
	cr_expect_str_eq(m.workspace, "{HOME}");
	manifest_free(&m);
	run_free(&r);
}

/* ---- the reader: what it refuses --------------------------------------------------------- */

#define HEAD "version = 1\njob = create\nworkspace = {LAUNCH}\nstart_in_scratch = false\n"
#define UI "ui_restrictions = DESKTOP\n"
#define BASE HEAD "limit_flags = KILL_ON_JOB_CLOSE\n" UI

static void
expect_refused(const char *s, unsigned line, const char *message)
{
	struct manifest m;
	struct manifest_error err;

	cr_expect_eq(manifest_parse(s, strlen(s), &m, &err), -1, "accepted:\n%s", s);
	cr_expect_eq(err.line, line, "the error for\n%s\nis on line %u, not %u (%s)", s, err.line,
		     line, err.message);
	cr_expect_str_eq(err.message, message);
}

Test(reader, accepts_the_smallest_manifest_and_crlf)
{
	struct manifest m = parse_ok(BASE);

	cr_expect_eq(m.limit_flags, WINJOB_LIMIT_KILL_ON_JOB_CLOSE);
	manifest_free(&m);
	m = parse_ok("version = 1\r\njob = none\r\nworkspace = /w\r\nstart_in_scratch = true\r\n"
		     "# comment\r\n\r\n");
	cr_expect_not(m.job);
	cr_expect(m.start_in_scratch);
	cr_expect_str_eq(m.workspace, "/w");
	manifest_free(&m);
}

Test(reader, refuses_unknown_and_repeated_keys)
{
	expect_refused(BASE "swap_limit = 1\n", 7, "unknown key 'swap_limit'");
	expect_refused(BASE "job = create\n", 7, "job given twice (first on line 2)");
	expect_refused("job = create\n", 1, "the first key must be 'version'");
	expect_refused("version = 2\n", 1,
		       "unsupported manifest version '2' (this omnibox-run.exe reads version 1)");
	expect_refused(BASE "key=value\n", 7, "expected 'key = value'");
	expect_refused(BASE "just words\n", 7, "expected 'key = value'");
	expect_refused(BASE "env_pass =X\n", 7, "expected 'key = value'");
}

Test(reader, refuses_bad_numbers)
{
	expect_refused(BASE "job_memory_limit = 0x10\n", 7,
		       "job_memory_limit: '0x10' is not a decimal number");
	expect_refused(BASE "job_memory_limit = -1\n", 7,
		       "job_memory_limit: '-1' is not a decimal number");
	expect_refused(BASE "job_memory_limit = 012\n", 7,
		       "job_memory_limit: '012' has a leading zero");
	expect_refused(BASE "job_memory_limit = 18446744073709551616\n", 7,
		       "job_memory_limit: 18446744073709551616 is too large");
	expect_refused(BASE "job_memory_limit = \n", 7, "job_memory_limit needs a number");
	expect_refused(BASE "job_memory_limit = 1 \n", 7,
		       "job_memory_limit: '1 ' is not a decimal number");
	expect_refused(BASE "active_process_limit = 0\n", 7,
		       "active_process_limit must be between 1 and 4294967295, got 0");
	expect_refused(BASE "active_process_limit = 4294967296\n", 7,
		       "active_process_limit must be between 1 and 4294967295, got 4294967296");
	expect_refused(BASE "per_job_user_time_limit = 9223372036854775808\n", 7,
		       "per_job_user_time_limit must be between 1 and 9223372036854775807, got "
		       "9223372036854775808");
	expect_refused(BASE "cpu_rate = 10001\n", 7,
		       "cpu_rate must be between 1 and 10000, got 10001");
}

Test(reader, refuses_flags_it_does_not_know_breakaway_above_all)
{
	expect_refused(HEAD "limit_flags = KILL_ON_JOB_CLOSE|BREAKAWAY_OK\n" UI, 5,
		       "limit_flags: unknown flag 'BREAKAWAY_OK'");
	expect_refused(HEAD "limit_flags = KILL_ON_JOB_CLOSE|SILENT_BREAKAWAY_OK\n" UI, 5,
		       "limit_flags: unknown flag 'SILENT_BREAKAWAY_OK'");
	expect_refused(HEAD "limit_flags = KILL_ON_JOB_CLOSE||JOB_TIME\n" UI, 5,
		       "limit_flags: unknown flag ''");
	expect_refused(HEAD "limit_flags = KILL_ON_JOB_CLOSE|KILL_ON_JOB_CLOSE\n" UI, 5,
		       "limit_flags: flag KILL_ON_JOB_CLOSE given twice");
	expect_refused(HEAD "limit_flags = kill_on_job_close\n" UI, 5,
		       "limit_flags: unknown flag 'kill_on_job_close'");
	expect_refused(HEAD
		       "limit_flags = KILL_ON_JOB_CLOSE\nui_restrictions = DESKTOP|CLIPBOARD\n",
		       6, "ui_restrictions: unknown flag 'CLIPBOARD'");
}

Test(reader, refuses_a_job_that_would_outlive_omnibox_run)
{
	expect_refused(HEAD "limit_flags = DIE_ON_UNHANDLED_EXCEPTION\n" UI, 5,
		       "limit_flags must include KILL_ON_JOB_CLOSE");
	expect_refused(HEAD UI, 0, "missing key 'limit_flags'");
	expect_refused(HEAD "limit_flags = KILL_ON_JOB_CLOSE\n", 0,
		       "missing key 'ui_restrictions'");
}

Test(reader, refuses_limits_that_contradict_the_flags)
{
	expect_refused(HEAD "limit_flags = KILL_ON_JOB_CLOSE|JOB_MEMORY\n" UI, 5,
		       "limit_flags has JOB_MEMORY but job_memory_limit is missing");
	expect_refused(BASE "active_process_limit = 4\n", 7,
		       "active_process_limit without ACTIVE_PROCESS in limit_flags, which would "
		       "ignore it");
	expect_refused(BASE "per_job_user_time_limit = 10\n", 7,
		       "per_job_user_time_limit without JOB_TIME in limit_flags, which would "
		       "ignore it");
	expect_refused(BASE "cpu_rate = 10\n", 7,
		       "cpu_rate needs cpu_rate_control_flags = ENABLE|HARD_CAP");
	expect_refused(BASE "cpu_rate_control_flags = ENABLE\ncpu_rate = 10\n", 8,
		       "cpu_rate needs cpu_rate_control_flags = ENABLE|HARD_CAP");
	expect_refused(BASE "cpu_rate_control_flags = ENABLE|HARD_CAP\n", 7,
		       "cpu_rate_control_flags without cpu_rate");
}

Test(reader, refuses_limits_without_a_job)
{
	expect_refused("version = 1\njob = none\nworkspace = /w\nstart_in_scratch = false\n"
		       "job_memory_limit = 5\n",
		       5, "job_memory_limit with job = none: there is no job to limit");
	expect_refused("version = 1\njob = maybe\n", 2, "job must be create or none, got 'maybe'");
}

Test(reader, refuses_missing_keys)
{
	expect_refused("version = 1\n", 0, "missing key 'job'");
	expect_refused("version = 1\njob = none\nworkspace = /w\n", 0,
		       "missing key 'start_in_scratch'");
	expect_refused("", 0, "missing key 'version'");
}

Test(reader, refuses_bad_values)
{
	expect_refused(BASE "env_pass = A-B\n", 7,
		       "env_pass: 'A-B' is not a variable name ([A-Za-z_][A-Za-z0-9_]*)");
	expect_refused(BASE "env_pass =\n", 7,
		       "env_pass: '' is not a variable name ([A-Za-z_][A-Za-z0-9_]*)");
	expect_refused(BASE "env_set = NOVALUE\n", 7, "env_set needs NAME=VALUE, got 'NOVALUE'");
	expect_refused(BASE "env_set = =C:=C:\\\\\n", 7,
		       "env_set needs NAME=VALUE, got '=C:=C:\\'");
	expect_refused(BASE "env_set = A-B=1\n", 7,
		       "env_set: 'A-B' is not a variable name ([A-Za-z_][A-Za-z0-9_]*)");
	expect_refused(BASE "allow_cwd_override = true\n", 7, "allow_cwd_override before terminal");
	expect_refused(BASE "terminal = t\nallow_cwd_override = yes\n", 8,
		       "allow_cwd_override must be true or false, got 'yes'");
	expect_refused(BASE "arg = x\n", 7, "arg before command");
	expect_refused(BASE "command =\n", 7, "command is empty");
	expect_refused(HEAD "limit_flags = KILL_ON_JOB_CLOSE\nstart_in_scratch = yes\n", 6,
		       "start_in_scratch given twice (first on line 4)");
	expect_refused("version = 1\njob = none\nworkspace = C:\\\\w\n", 3,
		       "workspace must start with {LAUNCH}, {HOME} or /, got 'C:\\w'");
	expect_refused("version = 1\njob = none\nworkspace = {LAUNCH}/\n", 3,
		       "workspace must start with {LAUNCH}, {HOME} or /, got '{LAUNCH}/'");
	expect_refused("version = 1\njob = none\nworkspace = /w\nstart_in_scratch = 1\n", 4,
		       "start_in_scratch must be true or false, got '1'");
}

Test(reader, refuses_bad_escapes_and_bytes)
{
	expect_refused(BASE "not-enforced = a\\qb\n", 7,
		       "unknown escape '\\q' (known: \\\\ \\n \\r \\t \\xHH)");
	expect_refused(BASE "not-enforced = a\\\n", 7,
		       "a value ends in a lone backslash (write \\\\)");
	expect_refused(BASE "not-enforced = \\x4\n", 7, "\\x needs two hex digits");
	expect_refused(BASE "not-enforced = \\x00\n", 7,
		       "\\x00: a value cannot hold a NUL character");
	expect_refused(BASE "not-enforced = a\tb\n", 7,
		       "control character 0x09 in a value (write it as \\x09)");
	{
		static const char nul[] = "version = 1\n\0";
		struct manifest m;
		struct manifest_error err;

		cr_expect_eq(manifest_parse(nul, sizeof(nul) - 1, &m, &err), -1);
		cr_expect_str_eq(err.message, "the manifest holds a NUL byte: not a text file");
	}
}

Test(reader, flags_print_as_the_manifest_writes_them)
{
	char buf[128];

	cr_expect_str_eq(manifest_flags_text(MANIFEST_LIMIT_FLAGS, 0x260c, buf, sizeof(buf)),
			 "KILL_ON_JOB_CLOSE|DIE_ON_UNHANDLED_EXCEPTION|ACTIVE_PROCESS|JOB_MEMORY|"
			 "JOB_TIME");
	cr_expect_str_eq(manifest_flags_text(MANIFEST_CPU_FLAGS, 0x5, buf, sizeof(buf)),
			 "ENABLE|HARD_CAP");
	cr_expect_str_eq(manifest_flags_text(MANIFEST_LIMIT_FLAGS, 0x2800, buf, sizeof(buf)),
			 "KILL_ON_JOB_CLOSE|0x800");
	cr_expect_str_eq(manifest_flags_text(MANIFEST_UI_RESTRICTIONS, 0, buf, sizeof(buf)), "");
}
