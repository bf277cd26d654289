/*
 * darwin_run.c - omnibox-run's macOS launch (darwin_run.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "compiler/base/diag.h"
#include "runtime/egress/relay.h"
#include "runtime/launch/darwin.h"
#include "runtime/launch/darwin_run.h"
#include "runtime/launch/egress_start.h"
#include "runtime/resolve/command.h"

extern char **environ;

/* What the egress side of a launch holds while the sandbox runs. */
struct darwin_egress {
	struct host_entry scratch;
	bool own_scratch; /* made here (not on --dry-run): removed at the end */
	struct cred_runtime creds;
	struct egress_proxy proxy;
};

/*
 * DQ's egress: a free loopback port for the relay, the scratch dir under
 * TMPDIR (only named on --dry-run) with the proxy's socket, the relay's
 * command line before the command, and (unless O->dry_run) the
 * credentials read and the proxy started.  On failure, E->scratch is still
 * the caller's to remove.
 */
static int
darwin_egress(struct arena *a, const struct launch_options *o, const struct sandbox *sb,
	      const char *tmpdir, struct launch_request *dq, struct darwin_egress *e, char *err,
	      size_t errlen)
{
	const char *self = launch_self_dir(a);
	const char *init = self ? launch_find_init(a, self) : NULL;
	char why[256], **relay;
	uint16_t port = 0;
	int fd;

	if (!init)
		return diag_fail(err, errlen,
				 "omnibox-init is missing next to omnibox-run; reinstall omnibox");
	/* A free loopback port (macOS has no network namespace to pick any);
	 * the relay binds it inside the sandbox, or the launch fails. */
	fd = relay_listen(0, why, sizeof(why));
	if (fd >= 0) {
		port = relay_port(fd);
		close(fd);
	}
	if (!port)
		return diag_fail(err, errlen, "no free loopback port for the egress relay: %s",
				 fd < 0 ? why : "?");
	if (o->dry_run) {
		dq->scratch = arena_printf(a, "%s/omnibox-XXXXXX", tmpdir);
	} else {
		if (host_scratch_create(a, tmpdir, &e->scratch, NULL, NULL) < 0)
			return diag_fail(err, errlen, "cannot create the scratch dir in %s: %s",
					 tmpdir, strerror(errno));
		e->own_scratch = true;
		dq->scratch = e->scratch.path;
	}
	dq->proxy_port = arena_printf(a, "%u", port);
	dq->proxy_socket = arena_printf(a, "%s/%s", dq->scratch, LAUNCH_PROXY_SOCKET);
	if (strlen(dq->proxy_socket) >= sizeof(((struct sockaddr_un *)0)->sun_path))
		return diag_fail(err, errlen,
				 "the proxy socket path %s is too long for a Unix socket; set "
				 "TMPDIR to a shorter directory",
				 dq->proxy_socket);
	relay = arena_alloc(a, 5 * sizeof(*relay));
	relay[0] = (char *)init;
	relay[1] = (char *)"--relay";
	relay[2] = (char *)dq->proxy_port;
	relay[3] = (char *)dq->proxy_socket;
	relay[4] = (char *)"--";
	dq->relay_argv = relay;
	dq->n_relay_argv = 5;
	if (o->dry_run) {
		dq->extra_env = egress_placeholder_names(a, sb, &dq->n_extra_env);
	} else {
		struct session_config sc;
		struct egress_log log = {0};
		int rc;

		if (egress_credentials(a, sb, dq->home, dq->scratch, &e->creds, err, errlen) < 0)
			return -1;
		dq->extra_env = e->creds.env;
		dq->n_extra_env = e->creds.n_env;
		if (egress_log_open(a, o, &log, err, errlen) < 0)
			return -1;
		egress_config(a, o, sb, dq->scratch, dq->proxy_socket, &e->creds, &log, &sc);
		rc = egress_proxy_start(a, &sc, &log, &e->proxy, err, errlen);
		/* The proxy has its own copy: ours goes now. */
		cred_runtime_wipe(&e->creds);
		egress_log_close(&log);
		if (rc < 0)
			return -1;
	}
	return 0;
}

int
darwin_run(struct arena *a, const struct launch_options *o, const struct policy *p,
	   const char *launch_dir, int *status, char *err, size_t errlen)
{
	const struct sandbox *sb = &p->os_env.sandbox;
	struct launch_request dq = {0};
	struct darwin_egress e = {.scratch = {.dirfd = -1}, .proxy = {.pid = -1, .ctl = -1}};
	const char *tmpdir = getenv("TMPDIR"), *sandbox_exec = NULL;

	/* Off macOS this runs only in build/test-omnibox-run-darwin, whose
	 * tests name a stand-in for sandbox-exec; a Mac runs the real one. */
#if defined(OMNIBOX_TEST_DARWIN) || !defined(__APPLE__)
	sandbox_exec = getenv("OMNIBOX_TEST_SANDBOX_EXEC");
#endif
	if (!tmpdir || tmpdir[0] != '/')
		tmpdir = "/tmp";
	dq.policy = p;
	dq.target = LAUNCH_DARWIN;
	dq.launch_dir = launch_dir;
	dq.cwd = o->cwd;
	dq.home = launch_home(environ);
	dq.command = o->command;
	dq.n_command = o->n_command;
	dq.environ = environ;
	dq.dyld_cache_dir = darwin_dyld_cache_dir(a);
	if (sb->n_egress && darwin_egress(a, o, sb, tmpdir, &dq, &e, err, errlen) < 0) {
		egress_proxy_stop(a, &e.proxy, NULL);
		if (e.own_scratch)
			host_remove(&e.scratch, true, false);
		return -1;
	}
	*status = darwin_launch(&dq, e.own_scratch ? &e.scratch : NULL, tmpdir, sandbox_exec,
				o->dry_run, o->quiet, stdout);
	egress_proxy_stop(a, &e.proxy, NULL);
	if (e.own_scratch)
		host_remove(&e.scratch, true, false);
	return 0;
}
