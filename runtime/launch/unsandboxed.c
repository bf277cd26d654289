/*
 * unsandboxed.c - sandbox type none (unsandboxed.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "compiler/base/diag.h"
#include "runtime/launch/unsandboxed.h"
#include "runtime/resolve/command.h"

extern char **environ;

int
unsandboxed_exec(struct arena *a, const struct launch_options *o, const struct policy *p,
		 const char *ws, char *err, size_t errlen)
{
	const struct terminal *t = p->terminal;
	char **env, **cmd;

	env = launch_env_build(a, p, environ, &(struct launch_env){.pwd = ws});
	if (o->n_command) {
		cmd = o->command;
	} else if (t) {
		cmd = arena_alloc(a, (t->args.n + 2) * sizeof(*cmd));
		cmd[0] = (char *)t->command.s;
		for (size_t i = 0; i < t->args.n; i++)
			cmd[i + 1] = (char *)t->args.v[i].s;
	} else {
		return diag_fail(err, errlen,
				 "no command: give one after '--', or a terminal with --terminal");
	}
	if (chdir(ws) < 0)
		return diag_fail(err, errlen, "the workspace %s: %s", ws, strerror(errno));
	if (!o->quiet)
		launch_say("omnibox-run: sandbox type none: running %s without a sandbox, as "
			   "the policy says\n",
			   cmd[0]);
	if (o->dry_run) {
		printf("# sandbox type none: %s runs unsandboxed in %s\n", cmd[0], ws);
		return 0;
	}
	execvpe(cmd[0], cmd, env);
	return diag_fail(err, errlen, "cannot run %s: %s", cmd[0], strerror(errno));
}
