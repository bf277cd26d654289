/*
 * darwin_launch.c - the Seatbelt launch of omnibox-run (spec/darwin.md).
 */
#include "compiler/base/diag.h"
#include "runtime/launch/darwin.h"
#include "runtime/launch/janitor.h"
#include "compiler/base/textbuf.h"
#include "compiler/base/textesc.h"
#include "runtime/launch/fds.h"
#include "runtime/launch/rlimit.h"
#include "runtime/resolve/host.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static bool
has_control(const char *s)
{
	for (; s && *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return true;
	return false;
}

int
darwin_launch_context(struct arena *a, const struct launch_request *rq0, struct launch_plan *f,
		      struct sbpl_context *c, struct diag *d)
{
	struct launch_request rq = *rq0;

	rq.target = LAUNCH_DARWIN;
	if (launch_resolve(a, &rq, f, d) < 0)
		return -1;
	/* The resolver's facts, as the profile's context. */
	memset(c, 0, sizeof(*c));
	c->resolved = true;
	c->cwd = f->workspace;
	c->home = f->home;
	c->scratch = f->scratch;
	c->port = rq.proxy_port ? rq.proxy_port : "{PORT}";
	c->proxy_socket = rq.proxy_socket ? paths_darwin_spelling(a, rq.proxy_socket) : "{SOCK}";
	c->command_dirs = f->command_dirs;
	c->n_command_dirs = f->n_command_dirs;
	c->dyld_cache_dir = rq.dyld_cache_dir;
	c->protected = f->protected;
	c->n_protected = f->n_protected;
	return 0;
}

int
darwin_launch_prepare(struct arena *a, const struct launch_request *rq0,
		      struct darwin_launch_plan *plan, struct diag *d)
{
	struct launch_request rq = *rq0;
	const struct sandbox *sb = &rq.policy->os_env.sandbox;
	const struct launch_plan *f = &plan->facts;

	memset(plan, 0, sizeof(*plan));
	rq.target = LAUNCH_DARWIN;
	if (rq.policy->os_env.sandbox.type == SANDBOX_NONE)
		return diag_failure(d, "sandbox type none has no Seatbelt launch");
	if (!rq.scratch || rq.scratch[0] != '/')
		return diag_failure(d, "no scratch dir");
	if (sb->n_egress && (!rq.proxy_port || !rq.proxy_socket || !rq.n_relay_argv) &&
	    !rq.command_optional)
		return diag_failure(d, "egress_rules need the relay's port, the proxy's socket "
				       "and the relay's command line");
	/* Parameter values travel on sandbox-exec's command line and into
	 * regular expressions: nothing there may hide a line break. */
	if (has_control(rq.home) || has_control(rq.scratch) || has_control(rq.launch_dir) ||
	    has_control(rq.cwd) || has_control(rq.proxy_socket))
		return diag_failure(d, "a control character in the workspace, home, scratch or "
				       "socket path");
	if (rq.proxy_port) {
		char *end;
		long port = strtol(rq.proxy_port, &end, 10);

		if (*end || port < 1 || port > 65535 || rq.proxy_port[0] == '0')
			return diag_failure(d, "relay port '%s' is not a port number",
					    rq.proxy_port);
	}
	if (darwin_launch_context(a, &rq, &plan->facts, &plan->ctx, d) < 0)
		return -1;
	if (sbpl_build(a, f->policy, &plan->ctx, d, &plan->profile, &plan->params) < 0) {
		tb_free(&plan->profile);
		return diag_failure(d, "no Seatbelt profile for this launch");
	}
	return 0;
}

int
darwin_launch_argv(struct arena *a, struct darwin_launch_plan *plan, const char *sandbox_exec,
		   const char *profile_path)
{
	char **argv = NULL;
	size_t n = 0, cap = 0;

	if (!sandbox_exec)
		sandbox_exec = DARWIN_SANDBOX_EXEC;
	/* Never looked up on PATH: a directory the user controls could hold an
	 * impostor that runs the agent without a sandbox. */
	if (sandbox_exec[0] != '/' || profile_path[0] != '/') {
		errno = EINVAL;
		return -1;
	}
	*ARENA_PUSH(a, argv, n, cap) = arena_strdup(a, sandbox_exec);
	*ARENA_PUSH(a, argv, n, cap) = arena_strdup(a, "-f");
	*ARENA_PUSH(a, argv, n, cap) = arena_strdup(a, profile_path);
	for (int k = 0; k < SBPL_PARAM_COUNT; k++) {
		if (!plan->params.used[k])
			continue;
		*ARENA_PUSH(a, argv, n, cap) = arena_strdup(a, "-D");
		*ARENA_PUSH(a, argv, n, cap) = arena_printf(
		    a, "%s=%s", sbpl_param_name((enum sbpl_param)k), plan->params.value[k]);
	}
	for (size_t i = 0; i < plan->params.n_extra; i++) {
		*ARENA_PUSH(a, argv, n, cap) = arena_strdup(a, "-D");
		*ARENA_PUSH(a, argv, n, cap) = arena_printf(a, "%s=%s", plan->params.extra_name[i],
							    plan->params.extra_value[i]);
	}
	*ARENA_PUSH(a, argv, n, cap) = arena_strdup(a, "--");
	for (size_t i = 0; i < plan->facts.argc; i++)
		*ARENA_PUSH(a, argv, n, cap) = plan->facts.argv[i];
	plan->argc = n;
	*ARENA_PUSH(a, argv, n, cap) = NULL;
	plan->argv = argv;
	return 0;
}

void
darwin_launch_plan_free(struct darwin_launch_plan *plan)
{
	tb_free(&plan->profile);
}

/* ---- files ---------------------------------------------------------------------- */

int
darwin_profile_write(struct arena *a, const char *parent, const char *text, size_t len,
		     const char **dir, const char **path)
{
	char *d = arena_printf(a, "%s/omnibox-profile-XXXXXX", parent);
	struct stat st;
	int dfd, fd, rc = 0;

	if (!mkdtemp(d))
		return -errno;
	dfd = open(d, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0) {
		rc = -errno;
		rmdir(d);
		return rc;
	}
	/* mkdtemp made it 0700 and ours; say so out loud rather than trust it. */
	if (fstat(dfd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 07777) != 0700) {
		rc = -EPERM;
		goto out_dir;
	}
	/* Created here and now, never an existing file or a planted symlink. */
	fd = openat(dfd, DARWIN_PROFILE_NAME, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		    0600);
	if (fd < 0) {
		rc = -errno;
		goto out_dir;
	}
	if (fchmod(fd, 0600) < 0)
		rc = -errno;
	for (const char *p = text; rc == 0 && len;) {
		ssize_t w = write(fd, p, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			rc = w < 0 ? -errno : -EIO;
			break;
		}
		p += w;
		len -= (size_t)w;
	}
	if (close(fd) < 0 && rc == 0)
		rc = -errno;
	if (rc < 0) {
		unlinkat(dfd, DARWIN_PROFILE_NAME, 0);
		goto out_dir;
	}
	close(dfd);
	*dir = d;
	*path = arena_printf(a, "%s/%s", d, DARWIN_PROFILE_NAME);
	return 0;
out_dir:
	close(dfd);
	rmdir(d);
	return rc;
}

int
darwin_profile_remove(const char *dir, const char *path)
{
	int rc = 0;

	if (unlink(path) < 0 && errno != ENOENT)
		rc = -errno;
	if (rmdir(dir) < 0 && rc == 0)
		rc = -errno;
	return rc;
}

const char *
darwin_dyld_cache_dir(struct arena *a)
{
#ifdef __APPLE__
	char buf[1024];
	size_t n = confstr(_CS_DARWIN_USER_CACHE_DIR, buf, sizeof(buf));
	struct stat st;
	char *dir;

	if (n == 0 || n > sizeof(buf))
		return NULL;
	dir = arena_printf(a, "%s%scom.apple.dyld", buf, buf[n - 2] == '/' ? "" : "/");
	if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
		return paths_darwin_spelling(a, dir);
	return NULL;
#else
	(void)a;
	return NULL;
#endif
}

/* ---- running ---------------------------------------------------------------------- */


static volatile sig_atomic_t child_pid;

static void
forward_signal(int sig)
{
	if (child_pid > 0)
		kill((pid_t)child_pid, sig);
}

int
darwin_launch_run(const struct darwin_launch_plan *plan)
{
	/*
	 * The command keeps omnibox-run's terminal and process group, so an
	 * interactive agent can read its tty: the keyboard's SIGINT, SIGQUIT
	 * and SIGWINCH reach it directly and are ignored here (as system(3)
	 * does); signals sent to omnibox-run alone are passed on.
	 */
	static const int forward[] = {SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, SIGINT, SIGQUIT};
	static const size_t n_forwarded = 4;
	struct sigaction sa = {0}, old[sizeof(forward) / sizeof(forward[0])];
	int pipefd[2], status = 0, child_err[2] = {0, 0}; /* {1: a limit, 0: the exec; errno} */
	const char *limit = "limits";
	ssize_t got;
	pid_t pid;

	if (pipe(pipefd) < 0 || fcntl(pipefd[0], F_SETFD, FD_CLOEXEC) < 0 ||
	    fcntl(pipefd[1], F_SETFD, FD_CLOEXEC) < 0) {
		fprintf(stderr, "omnibox-run: pipe: %s; nothing ran\n", strerror(errno));
		return DARWIN_EXIT_SETUP;
	}
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	for (size_t i = 0; i < sizeof(forward) / sizeof(forward[0]); i++) {
		sa.sa_handler = i < n_forwarded ? forward_signal : SIG_IGN;
		sigaction(forward[i], &sa, &old[i]);
	}
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "omnibox-run: fork: %s; nothing ran\n", strerror(errno));
		status = -1;
	} else if (pid == 0) {
		for (size_t i = 0; i < sizeof(forward) / sizeof(forward[0]); i++)
			sigaction(forward[i], &old[i], NULL);
		close(pipefd[0]);
		if (launch_set_rlimits(&plan->facts.policy->os_env.sandbox.limits, &limit) < 0) {
			child_err[0] = 1;
			fprintf(stderr, "omnibox-run: cannot set %s: %s; nothing ran\n", limit,
				strerror(errno));
		} else if (chdir(plan->facts.start_dir) == 0) {
			execve(plan->argv[0], plan->argv, plan->facts.env);
		}
		/* The launch failed before the sandbox existed: tell the parent,
		 * which reports 125; the command never ran. */
		child_err[1] = errno;
		if (write(pipefd[1], child_err, sizeof(child_err)) < 0)
			_exit(DARWIN_EXIT_SETUP);
		_exit(DARWIN_EXIT_SETUP);
	}
	child_pid = pid;
	close(pipefd[1]);
	do
		got = read(pipefd[0], child_err, sizeof(child_err));
	while (got < 0 && errno == EINTR);
	close(pipefd[0]);
	if (pid > 0)
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	child_pid = 0;
	for (size_t i = 0; i < sizeof(forward) / sizeof(forward[0]); i++)
		sigaction(forward[i], &old[i], NULL);
	if (pid < 0)
		return DARWIN_EXIT_SETUP;
	if (got == (ssize_t)sizeof(child_err) && child_err[0] == 1)
		return DARWIN_EXIT_SETUP; /* the child said which limit */
	if (got == (ssize_t)sizeof(child_err)) {
		fprintf(stderr, "omnibox-run: cannot run %s in %s: %s; nothing ran\n",
			plan->argv[0], plan->facts.start_dir, strerror(child_err[1]));
		return DARWIN_EXIT_SETUP;
	}
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return DARWIN_EXIT_SETUP;
}

int
darwin_launch(const struct launch_request *rq0, struct host_entry *scratch, const char *tmpdir,
	      const char *sandbox_exec, bool dry_run, bool quiet, FILE *out)
{
	struct launch_request rq = *rq0;
	struct darwin_launch_plan plan;
	struct arena *a = arena_new();
	struct diag d;
	struct host_entry own = {.dirfd = -1};
	const char *exe = sandbox_exec ? sandbox_exec : DARWIN_SANDBOX_EXEC;
	const char *pdir = NULL, *ppath = NULL;
	int rc, janitor = -1;

	diag_init(&d, a, rq.policy->source, NULL, 0);
	if (!dry_run && access(exe, X_OK) < 0) {
		fprintf(stderr,
			"omnibox-run: %s is missing (%s): Seatbelt is not available, and "
			"omnibox never runs the command unsandboxed\n",
			exe, strerror(errno));
		arena_free(a);
		return DARWIN_EXIT_SETUP;
	}
	if (scratch) {
		rq.scratch = scratch->path;
	} else if (dry_run) {
		rq.scratch = arena_printf(a, "%s/omnibox-XXXXXX", tmpdir);
	} else if (host_scratch_create(a, tmpdir, &own, NULL, NULL) < 0) {
		fprintf(stderr, "omnibox-run: cannot create the scratch dir in %s: %s\n", tmpdir,
			strerror(errno));
		arena_free(a);
		return DARWIN_EXIT_SETUP;
	} else {
		rq.scratch = own.path;
		scratch = &own;
	}
	if (!rq.dyld_cache_dir)
		rq.dyld_cache_dir = darwin_dyld_cache_dir(a);
	if (darwin_launch_prepare(a, &rq, &plan, &d) < 0) {
		diag_print(&d, stderr, true);
		if (d.failure) {
			/* The resolver escaped the paths in it; a control byte it did
			 * not cannot reach the terminal either (textesc.h). */
			struct textbuf shown = {0};

			tb_escape(&shown, d.failure, TEXT_ESC_AGAIN | TEXT_ESC_LINES);
			fprintf(stderr, "omnibox-run: %s; nothing ran\n",
				shown.data ? shown.data : "");
			tb_free(&shown);
		} else {
			fprintf(stderr, "omnibox-run: %s: cannot launch; nothing ran\n",
				rq.policy->source);
		}
		rc = DARWIN_EXIT_SETUP;
		goto out;
	}
	if (dry_run) {
		darwin_launch_argv(
		    a, &plan, exe,
		    arena_printf(a, "%s/omnibox-profile-XXXXXX/%s", tmpdir, DARWIN_PROFILE_NAME));
		fputs(plan.profile.data, out);
		fputs("# sandbox-exec argv:\n", out);
		for (size_t i = 0; i < plan.argc; i++) {
			struct textbuf arg = {0};

			tb_escape(&arg, plan.argv[i], 0);
			fprintf(out, "%s\n", arg.data ? arg.data : "");
			tb_free(&arg);
		}
		fputs("# environment (values not shown):", out);
		for (size_t i = 0; plan.facts.env[i]; i++)
			fprintf(out, " %.*s", (int)strcspn(plan.facts.env[i], "="),
				plan.facts.env[i]);
		fputc('\n', out);
		rc = 0;
		darwin_launch_plan_free(&plan);
		goto out;
	}
	/* As the Linux launch says them (escaped by the resolver). */
	for (size_t i = 0; !quiet && i < plan.facts.n_skipped; i++)
		fprintf(stderr, "omnibox-run: warning: %s\n", plan.facts.skipped[i]);
	for (size_t i = 0; !quiet && i < plan.facts.n_notes; i++)
		fprintf(stderr, "omnibox-run: %s\n", plan.facts.notes[i]);
	rc = darwin_profile_write(a, tmpdir, plan.profile.data, plan.profile.len, &pdir, &ppath);
	if (rc < 0) {
		fprintf(stderr, "omnibox-run: cannot write the profile in %s: %s; nothing ran\n",
			tmpdir, strerror(-rc));
		rc = DARWIN_EXIT_SETUP;
	} else if (darwin_launch_argv(a, &plan, exe, ppath) < 0) {
		fprintf(stderr, "omnibox-run: %s is not an absolute path; nothing ran\n", exe);
		rc = DARWIN_EXIT_SETUP;
	} else if ((janitor = janitor_start(scratch, &plan.facts, pdir)) < 0) {
		fprintf(stderr, "omnibox-run: cannot start the cleanup process: %s; nothing ran\n",
			strerror(errno));
		rc = DARWIN_EXIT_SETUP;
	} else {
		rc = darwin_launch_run(&plan);
		/* Before anything else of the host's can run git in the workspace. */
		launch_quarantine(&plan.facts, stderr);
		janitor_checked(janitor, -1);
	}
	if (pdir)
		darwin_profile_remove(pdir, ppath);
	if (janitor >= 0)
		close(janitor);
	darwin_launch_plan_free(&plan);
out:
	host_remove(&own, true, false);
	arena_free(a);
	return rc;
}
