/*
 * launch_bwrap.c - omnibox-run's Linux launch (launch_bwrap.h).
 */
#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "compiler/decide/transparent.h"
#include "runtime/launch/bwrap_run.h"
#include "runtime/launch/cgroup.h"
#include "runtime/launch/choose.h"
#include "runtime/launch/copyback.h"
#include "runtime/launch/fds.h"
#include "runtime/launch/janitor.h"
#include "runtime/launch/landlock.h"
#include "runtime/launch/launch_bwrap.h"
#include "runtime/launch/notify.h"
#include "runtime/resolve/command.h"
#include "runtime/resolve/walk.h"

extern char **environ;

/* The filters, generated at build time (runtime/launch/seccomp_blob.S): the
 * one for bwrap's sandbox, and its variant for linux_landlock's. */
extern const unsigned char omnibox_seccomp_bpf[], omnibox_seccomp_bpf_end[];
extern const unsigned char omnibox_seccomp_ll_bpf[], omnibox_seccomp_ll_bpf_end[];
extern const unsigned char omnibox_seccomp_ll_net_bpf[], omnibox_seccomp_ll_net_bpf_end[];

/* ---- git_ssh ---------------------------------------------------------------------- */

/*
 * The git_ssh broker of L's plan (runtime/gitssh/broker.h), in a process
 * of its own, listening before the sandbox exists; its sessions log to
 * L's egress log.  The system ssh is taken from an absolute PATH entry the
 * sandbox cannot write, like bwrap.  Returns 0, or -1 with ERR.
 */
static int
start_git_ssh(struct bwrap_launch *l, char *err, size_t errlen)
{
	const struct launch_plan *plan = &l->plan;
	const struct sandbox *sb = &plan->policy->os_env.sandbox;
	struct arena *a = l->a;
	struct gitssh_config gc = {0};
	const char *ssh = launch_find_in_path(a, environ, "ssh"), *real;
	char why[4096];

	if (!ssh)
		return diag_fail(err, errlen,
				 "git_ssh needs the system ssh, and none is on PATH (Debian: apt "
				 "install openssh-client); nothing ran");
	real = walk_canonical(a, ssh);
	if (!real || launch_plan_writable(plan, real))
		return diag_fail(err, errlen,
				 "%s, the ssh found first on PATH, lies in a directory the sandbox "
				 "can write; git_ssh runs the system's ssh only; nothing ran",
				 arena_escape(a, real ? real : ssh));
	gc.bindings = sb->git_ssh;
	gc.n_bindings = sb->n_git_ssh;
	gc.socket_path = arena_printf(a, "%s/%s", plan->scratch, GITSSH_SOCKET);
	gc.token = l->git_ssh_token;
	gc.ssh = real;
	gc.hosts_file = l->o->egress_hosts;
	gc.home = plan->home;
	gc.policy = l->o->input;
	/* Under -q without --egress-log the sessions' lines go nowhere, as the proxy's do. */
	gc.log_fd = l->egress_log.quiet ? open("/dev/null", O_WRONLY | O_CLOEXEC)
					: fileno(l->egress_log.f);
	if (gc.log_fd < 0)
		return diag_fail(err, errlen, "/dev/null: %s; nothing ran", strerror(errno));
	l->git_ssh_pid = gitssh_start(&gc, &l->git_ssh_alive, why, sizeof(why));
	if (l->egress_log.quiet)
		close(gc.log_fd);
	if (l->git_ssh_pid < 0)
		return diag_fail(err, errlen, "%s; nothing ran", why);
	return 0;
}

/* ---- the steps -------------------------------------------------------------------- */

void
bwrap_launch_init(struct bwrap_launch *l)
{
	memset(l, 0, sizeof(*l));
	l->nofile = (struct rlimit){RLIM_INFINITY, RLIM_INFINITY};
	l->scratch.dirfd = -1;
	l->seccomp_fd = -1;
	l->args_fd = -1;
	l->status_pipe[0] = l->status_pipe[1] = -1;
	l->ready_sock[0] = l->ready_sock[1] = -1;
	l->janitor = -1;
	l->sandbox_mnt = -1;
	l->git_ssh_pid = -1;
	l->git_ssh_alive = -1;
	l->bwrap_pid = -1;
	l->proxy.pid = -1;
	l->proxy.ctl = -1;
	l->pty.master = l->pty.slave = -1;
	landlock_launch_init(&l->ll);
}

/*
 * bwrap and omnibox-init, and the scratch dir (only named on --dry-run);
 * then the descriptors omnibox-init gets: the seccomp filter, its status
 * pipe and its ready socket.
 */

/*
 * egress_rules: the empty file bwrap binds the session's CA bundle from,
 * in the new scratch dir, so that bwrap can set the sandbox up while the
 * proxy starts; the proxy writes the bundle into it (truststore.h) before
 * the agent starts.
 */
static int
ca_bundle_hold(struct bwrap_launch *l)
{
	struct stat st;
	int d = open(l->scratch.path, O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), f = -1, e;

	if (d >= 0 && fstat(d, &st) == 0 && st.st_dev == l->scratch.dev &&
	    st.st_ino == l->scratch.ino)
		f = openat(d, ENV_CA_BUNDLE, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			   0644);
	else if (d >= 0)
		errno = ESTALE;
	e = errno;
	if (f >= 0)
		close(f);
	if (d >= 0)
		close(d);
	errno = e;
	return f >= 0 ? 0 : -1;
}

/* bwrap's status pipe and omnibox-init's ready socket, new. */
static int
open_channels(struct bwrap_launch *l)
{
	for (int i = 0; i < 2; i++) {
		if (l->status_pipe[i] >= 0)
			close(l->status_pipe[i]);
		if (l->ready_sock[i] >= 0)
			close(l->ready_sock[i]);
		l->status_pipe[i] = l->ready_sock[i] = -1;
	}
	/* The ready byte comes with the seccomp listener (SCM_RIGHTS), and
	 * omnibox-init's arguments come the other way: a socket. */
	if (pipe2(l->status_pipe, O_CLOEXEC) < 0 ||
	    fcntl(l->status_pipe[0], F_SETFL, O_NONBLOCK) < 0 ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, l->ready_sock) < 0 ||
	    fcntl(l->ready_sock[0], F_SETFL, O_NONBLOCK) < 0)
		return -1;
	l->rq.status_fd = l->plan.ctx.status_fd = l->status_pipe[1];
	l->rq.ready_fd = l->plan.ctx.ready_fd = l->ready_sock[1];
	return 0;
}

/* host_scratch_create()'s BEFORE: the name to the janitor, ARG's. */
static int
tell_janitor(void *arg, int dirfd, const char *name)
{
	return janitor_scratch_name(((struct bwrap_launch *)arg)->janitor, dirfd, name);
}

static int
prepare_host(struct bwrap_launch *l, char *err, size_t errlen)
{
	const char *tmp, *self;

	/* Absolute PATH entries only, as for the agent's command; and below
	 * (once the policy's writable directories are known) never one the
	 * sandbox could have written: that bwrap would run unsandboxed. */
	l->bwrap = l->landlock ? NULL : launch_find_in_path(l->a, environ, "bwrap");
	if (!l->bwrap && !l->landlock)
		return diag_fail(
		    err, errlen,
		    "bwrap (bubblewrap) is not on PATH; install it (Debian/Ubuntu: apt "
		    "install bubblewrap; Fedora: dnf install bubblewrap)");
	self = launch_self_dir(l->a);
	l->init = self ? launch_find_init(l->a, self) : NULL;
	if (!l->init)
		return diag_fail(err, errlen,
				 "omnibox-init is missing next to omnibox-run; reinstall omnibox");
	tmp = getenv("TMPDIR");
	if (!tmp || tmp[0] != '/')
		tmp = "/tmp";
	if (l->o->dry_run) {
		l->scratch.path = arena_printf(l->a, "%s/omnibox-XXXXXX", tmp);
	} else {
		/*
		 * A cleanup process before anything is made on the host
		 * (janitor.h), as ever before bwrap exists: its group is said
		 * to it from bwrap's side of the fork.  It gets an empty plan:
		 * nothing of the agent's runs before omnibox-init is handed its
		 * arguments, so it has no repository to set aside (with the
		 * first step's roots and no repository known at launch, it
		 * would set aside every one of them).  start_services() starts
		 * the one of the resolved plan and lets this one go.  The
		 * scratch dir's name is told to it before the directory is
		 * made: however omnibox-run ends, it is not left behind.
		 */
		l->janitor = janitor_start(&(struct host_entry){.dirfd = -1},
					   &(struct launch_plan){0}, NULL);
		if (l->janitor < 0)
			return diag_fail(err, errlen, "cannot start the cleanup process: %s",
					 strerror(errno));
		l->janitor_early = true;
		if (host_scratch_create(l->a, tmp, &l->scratch, tell_janitor, l) < 0)
			return diag_fail(err, errlen, "cannot create the scratch dir in %s: %s",
					 tmp, strerror(errno));
		l->scratch_made = true;
		if (janitor_scratch_made(l->janitor, &l->scratch) < 0)
			return diag_fail(err, errlen, "cannot tell the cleanup process of %s: %s",
					 l->scratch.path, strerror(errno));
		if (l->p->os_env.sandbox.n_egress && !l->landlock && ca_bundle_hold(l) < 0)
			return diag_fail(err, errlen, "cannot make %s/%s: %s", l->scratch.path,
					 ENV_CA_BUNDLE, strerror(errno));
	}

	if (l->landlock && bwrap_network_shared(l->p))
		l->seccomp_fd = fds_sealed_memfd(
		    "omnibox-seccomp", omnibox_seccomp_ll_net_bpf,
		    (size_t)(omnibox_seccomp_ll_net_bpf_end - omnibox_seccomp_ll_net_bpf));
	else if (l->landlock)
		l->seccomp_fd =
		    fds_sealed_memfd("omnibox-seccomp", omnibox_seccomp_ll_bpf,
				     (size_t)(omnibox_seccomp_ll_bpf_end - omnibox_seccomp_ll_bpf));
	else
		l->seccomp_fd = fds_sealed_memfd("omnibox-seccomp", omnibox_seccomp_bpf,
						 (size_t)(omnibox_seccomp_bpf_end - omnibox_seccomp_bpf));
	if (l->seccomp_fd < 0 || open_channels(l) < 0)
		return diag_fail(err, errlen, "cannot pass the seccomp filter to omnibox-init: %s",
				 strerror(errno));
	return 0;
}

/*
 * With egress_rules: the proxy's port and socket, its log, and the
 * credentials' placeholders in the sandbox's environment.
 */
static int
prepare_egress(struct bwrap_launch *l, char *err, size_t errlen)
{
	struct launch_request *rq = &l->rq;
	const struct sandbox *sb = &l->p->os_env.sandbox;
	struct arena *a = l->a;
	unsigned ports[TRANSPARENT_MAX_PORTS], port;
	int n_ports = transparent_ports(sb->egress, sb->n_egress, ports, NULL);
	uint32_t rnd = 0;

	/* Any port works in the sandbox's own network namespace but one the
	 * rules name (omnibox-init listens there); a random one keeps clients
	 * from hard-coding it. */
	if (getrandom(&rnd, sizeof(rnd), 0) != sizeof(rnd))
		rnd = (uint32_t)getpid();
	for (port = 20000 + rnd % 40000;; port = port == 59999 ? 20000 : port + 1) {
		int i = 0;

		while (i < n_ports && ports[i] != port)
			i++;
		if (i == n_ports)
			break;
	}
	/* linux_landlock: the host's loopback, where another program may hold it. */
	if (l->landlock && !l->o->dry_run &&
	    landlock_relay_listen(&l->ll, &port, err, errlen) < 0)
		return -1;
	rq->proxy_port = arena_printf(a, "%u", port);
	rq->proxy_socket = arena_printf(a, "%s/%s", l->scratch.path, LAUNCH_PROXY_SOCKET);
	if (strlen(rq->proxy_socket) >= sizeof(((struct sockaddr_un *)0)->sun_path))
		return diag_fail(err, errlen,
				 "the proxy socket path %s is too long for a Unix socket; set "
				 "TMPDIR to a shorter directory",
				 rq->proxy_socket);
	if (l->o->dry_run) {
		rq->proxy_port = NULL;
		rq->proxy_socket = NULL;
		rq->extra_env = egress_placeholder_names(a, sb, &rq->n_extra_env);
		return 0;
	}
	/* Opened now, while nothing but the scratch dir needs undoing.
	 * An interactive screen is no place for the proxy's log. */
	if (l->use_pty && !l->o->egress_log) {
		const char *name;

		if (egress_log_create(a, l->o, l->scratch.path, &l->egress_log, &name, err,
				      errlen) < 0)
			return -1;
		if (!l->o->quiet)
			launch_say("omnibox-run: the egress log is %s\n", arena_escape(a, name));
	} else if (egress_log_open(a, l->o, &l->egress_log, err, errlen) < 0) {
		return -1;
	}
	/* The proxy starts now, while the launch is resolved; it gets its
	 * configuration once that is done (start_services()). */
	if (egress_proxy_exec(a, &l->egress_log, &l->proxy, err, errlen) < 0)
		return -1;
	if (egress_credentials(a, sb, l->home, l->scratch.path, &l->creds, err, errlen) < 0 ||
	    egress_resolver_files(l->scratch.path, err, errlen) < 0)
		return -1;
	rq->extra_env = l->creds.env;
	rq->n_extra_env = l->creds.n_env;
	return 0;
}

/* L->rq: what launch_resolve() resolves. */
static void
prepare_request(struct bwrap_launch *l)
{
	struct launch_request *rq = &l->rq;
	const struct launch_options *o = l->o;

	rq->policy = l->p;
	rq->target = LAUNCH_LINUX;
	rq->launch_dir = l->launch_dir;
	rq->cwd = o->cwd;
	rq->home = l->home;
	rq->scratch = l->scratch.path;
	rq->init = l->init;
	rq->bwrap = l->bwrap;
	rq->landlock = l->landlock;
	rq->command = o->command;
	rq->n_command = o->n_command;
	rq->environ = environ;
	rq->create_placeholders = !o->dry_run;
	rq->policy_file =
	    o->input[0] == '/' ? o->input : arena_printf(l->a, "%s/%s", l->launch_dir, o->input);
	rq->seccomp_fd = l->seccomp_fd;
	rq->status_fd = l->status_pipe[1];
	rq->ready_fd = l->ready_sock[1];
}

int
bwrap_launch_prepare(struct bwrap_launch *l, char *err, size_t errlen)
{
	if (prepare_host(l, err, errlen) < 0)
		return -1;
	prepare_request(l);
	return 0;
}

int
bwrap_launch_egress(struct bwrap_launch *l, char *err, size_t errlen)
{
	const struct sandbox *sb = &l->p->os_env.sandbox;
	struct launch_request *rq = &l->rq;

	if (sb->n_egress && prepare_egress(l, err, errlen) < 0)
		return -1;
	/* git_ssh: the helper's token, for the broker started later. */
	if (sb->n_git_ssh) {
		if (l->o->dry_run)
			snprintf(l->git_ssh_token, sizeof(l->git_ssh_token), "{RANDOM}");
		else if (gitssh_new_token(l->git_ssh_token) < 0)
			return diag_fail(err, errlen,
					 "git_ssh: no randomness for the broker's token: %s",
					 strerror(errno));
		rq->extra_env =
		    gitssh_env_add(l->a, rq->extra_env, &rq->n_extra_env, l->git_ssh_token);
	}
	return 0;
}

/* The top-level names of each scan root shown in the line of hidden dotfiles. */
#define HIDDEN_SHOWN 6

/*
 * The scan root the dotfile mask M lies at the top level of (the workspace,
 * or a granted directory outside it, as the resolver scans them), or NULL.
 */
static const char *
hidden_top_root(const struct bwrap_context *c, const struct bwrap_mask *m)
{
	const char *slash = strrchr(m->path, '/');
	size_t len = slash ? (size_t)(slash - m->path) : 0;

	if (!slash || strcmp(m->reason, "dotfile"))
		return NULL;
	if (len == 0)
		len = 1; /* "/.x": the root directory */
	for (size_t i = 0; i < c->n_grants; i++) {
		const char *g = c->grants[i].path;

		if (strlen(g) != len || strncmp(g, m->path, len) || !strcmp(g, c->scratch))
			continue;
		if (!strcmp(g, c->cwd) || c->grants[i].cow || !path_within(g, c->cwd))
			return g;
	}
	return NULL;
}

/*
 * One line for every dotfile the scan hid at the top level of a root, root
 * by root, from the plan's masks (the scan is not run again): what a user
 * misses first (.git, .env) and how to get it back.  Names are the agent's
 * to choose: escaped.
 */
static void
say_hidden(const struct launch_plan *plan)
{
	const struct bwrap_context *c = &plan->ctx;
	struct textbuf line = {0};
	bool *done = calloc(c->n_masks + 1, sizeof(*done));

	for (size_t i = 0; done && i < c->n_masks; i++) {
		const char *root = done[i] ? NULL : hidden_top_root(c, &c->masks[i]);
		size_t shown = 0, more = 0;

		if (!root)
			continue;
		tb_puts(&line, line.len ? "; of " : ", at the top level of ");
		tb_escape(&line, root, 0);
		tb_puts(&line, ": ");
		for (size_t k = i; k < c->n_masks; k++) {
			const char *r = done[k] ? NULL : hidden_top_root(c, &c->masks[k]);

			if (!r || strcmp(r, root))
				continue;
			done[k] = true;
			if (shown == HIDDEN_SHOWN) {
				more++;
				continue;
			}
			tb_puts(&line, shown++ ? ", " : "");
			tb_escape(&line, strrchr(c->masks[k].path, '/') + 1, 0);
		}
		if (more)
			tb_printf(&line, " and %zu more", more);
	}
	if (line.len)
		launch_say("omnibox-run: the dotfile scan hid%s; to show one, name it in "
			   "cwd_allow_hidden (--why=PATH says why a path is hidden)\n",
			   line.data);
	tb_free(&line);
	free(done);
}

/* What the user should know of the launch before it runs (not under -q). */
static void
say_plan(const struct launch_plan *plan)
{
	/* Escaped as they were written (the resolver's shown()). */
	for (size_t i = 0; i < plan->n_skipped; i++)
		launch_say("omnibox-run: warning: %s\n", plan->skipped[i]);
	for (size_t i = 0; i < plan->n_notes; i++)
		launch_say("omnibox-run: %s\n", plan->notes[i]);
	say_hidden(plan);
}

/*
 * The limits: a cgroup, or what stands in, said once.  Before bwrap
 * starts, which enters the cgroup first.
 */
static void
start_cgroup(struct bwrap_launch *l)
{
	const struct limits *lim = &l->p->os_env.sandbox.limits;
	char why[512];

	if (!lim->present || l->cgroup_tried)
		return;
	l->cgroup_tried = true;
	l->cgroup = cgroup_create(l->a, lim, why, sizeof(why));
	if (l->o->quiet)
		return;
	if (l->cgroup)
		launch_say("omnibox-run: limits: the sandbox runs in cgroup %s\n", l->cgroup);
	if (!l->cgroup && lim->processes.present)
		launch_say("omnibox-run: limits.processes is approximate: "
			   "RLIMIT_NPROC counts every process of the user (%s)\n",
			   why);
	if (!l->cgroup && lim->cpu_rate.present)
		launch_say("omnibox-run: limits.cpu_rate is not enforced: %s\n", why);
	if (!l->cgroup && lim->memory.present)
		launch_say("omnibox-run: limits.memory is RLIMIT_DATA (private writable "
			   "memory, not a cgroup's memory.max: %s)\n",
			   why);
}

int
bwrap_launch_spawn(struct bwrap_launch *l, char *err, size_t errlen)
{
	char why[4096];

	if (l->o->dry_run || l->landlock)
		return 0;
	/* bwrap's own arguments depend on what the first step resolved; a
	 * policy whose grants change them finds out in bwrap_launch_build(). */
	if (bwrap_build(l->plan.policy, &l->plan.ctx, NULL, NULL, &l->early, NULL) < 0)
		return 0;
	/* The sandbox's terminal is bwrap's 0, 1 and 2. */
	if (l->use_pty && pty_open(&l->pty, why, sizeof(why)) < 0)
		return diag_fail(err, errlen, "%s; nothing ran (--no-pty runs without one)", why);
	start_cgroup(l);
	/* A signal from now on is one "while the sandbox was set up": held
	 * until the event loop that ends the launch for it takes it. */
	bwrap_signals_hold(true);
	return bwrap_spawn(l, &l->early, false, err, errlen);
}

/*
 * The resolved launch has mounts of bwrap's own that the first step could
 * not know (a grant where a system mount is, ...): the bwrap started early
 * ends, having run nothing, and one with these arguments starts, on a
 * status pipe and a ready socket of its own (its omnibox-init may not have
 * ended yet), which the arguments are built again for.
 */
static int
restart_bwrap(struct bwrap_launch *l, char *err, size_t errlen)
{
	if (l->o->verbose)
		launch_say("omnibox-run: bwrap starts again: the resolved launch has mounts of "
			   "bwrap's own\n");
	bwrap_end(l);
	if (open_channels(l) < 0)
		return diag_fail(err, errlen, "cannot start bwrap again: %s", strerror(errno));
	tb_free(&l->text);
	tb_free(&l->nul);
	tb_free(&l->tail);
	bwrap_build(l->plan.policy, &l->plan.ctx, NULL, &l->text, &l->nul, &l->tail);
	return bwrap_spawn(l, &l->nul, true, err, errlen);
}

int
bwrap_launch_build(struct bwrap_launch *l, struct diag *d, char *err, size_t errlen)
{
	struct launch_plan *plan = &l->plan;
	const struct launch_options *o = l->o;
	char why[4096];

	plan->ctx.tty = l->use_pty;
	if (l->use_pty && !o->dry_run && l->pty.master < 0 &&
	    pty_open(&l->pty, why, sizeof(why)) < 0)
		return diag_fail(err, errlen, "%s; nothing ran (--no-pty runs without one)", why);
	if (l->landlock) {
		struct landlock_context *c = &l->llc;

		*c = (struct landlock_context){.init = l->init,
					       .seccomp_fd = l->seccomp_fd,
					       .ready_fd = l->ready_sock[1],
					       .tty = l->use_pty,
					       .proxy_port = l->rq.proxy_port,
					       .exec_path = plan->exec_path,
					       .command = (const char *const *)plan->argv,
					       .n_command = plan->argc};
		if (landlock_rules_open(l->a, plan, &l->ll.r, c, !o->dry_run, err, errlen) < 0)
			return -1;
		/* The sandbox's own terminal, and no other of the user's. */
		if (l->use_pty && !o->dry_run) {
			int fd = fcntl(l->pty.slave, F_DUPFD_CLOEXEC, 3);

			if (fd < 0)
				return diag_fail(err, errlen, "the sandbox's terminal: %s",
						 strerror(errno));
			landlock_rules_add(l->a, &l->ll.r, c, "the sandbox's terminal", fd,
					   LANDLOCK_DEVICE_RIGHTS, "its own pseudo-terminal");
		}
		plan->ll_rules = c->rules; /* --why answers from them */
		plan->n_ll_rules = c->n_rules;
		landlock_build(plan->policy, c, &l->text, &l->nul);
		if (!o->quiet && !o->dry_run)
			say_plan(plan);
		return 0;
	}
	if (!o->dry_run && (plan->ctx.n_masks || plan->ctx.n_sockets)) {
		struct textbuf list = {0};

		/* What omnibox-init checks is in place before it lets anything run. */
		bwrap_masks_list(&plan->ctx, &list);
		plan->ctx.masks_fd = fds_sealed_memfd("omnibox-masks", list.data, list.len);
		tb_free(&list);
		if (plan->ctx.masks_fd < 0)
			return diag_fail(err, errlen, "cannot pass the masks to omnibox-init: %s",
					 strerror(errno));
	}
	bwrap_build(plan->policy, &plan->ctx, d, &l->text, &l->nul, &l->tail);
	if (l->bwrap_pid > 0 &&
	    (l->nul.len != l->early.len || memcmp(l->nul.data, l->early.data, l->nul.len)) &&
	    restart_bwrap(l, err, errlen) < 0)
		return -1;
	if (!o->quiet && !o->dry_run)
		say_plan(plan);
	return 0;
}

void
bwrap_launch_close(struct bwrap_launch *l)
{
	landlock_launch_close(&l->ll);
	launch_plan_close(&l->plan);
	tb_free(&l->text);
	tb_free(&l->nul);
	tb_free(&l->tail);
	tb_free(&l->early);
}

/* Say what the second layer cannot add on this kernel; never silently. */
static void
landlock_report(const struct policy *p, bool quiet)
{
	int abi = landlock_abi();

	if (quiet)
		return;
	if (abi < LANDLOCK_ABI_FS)
		launch_say("omnibox-run: warning: this kernel has no usable Landlock (ABI %d, "
			   "writes need %d): the writable set rests on the mounts alone%s\n",
			   abi, LANDLOCK_ABI_FS,
			   bwrap_network_shared(p) ? ", and the host's abstract Unix sockets stay "
						     "reachable (allow_network: true)"
						   : "");
	else if (abi < LANDLOCK_ABI_SCOPE && bwrap_network_shared(p))
		launch_say("omnibox-run: warning: Landlock ABI %d cannot scope abstract Unix "
			   "sockets (needs %d): the host's stay reachable with allow_network: "
			   "true\n",
			   abi, LANDLOCK_ABI_SCOPE);
}

/*
 * What runs beside the sandbox, up before the agent exists: the event loop
 * with the seccomp refusals, the egress proxy, the git_ssh broker and the
 * cleanup process.
 */
static int
start_services(struct bwrap_launch *l, char *err, size_t errlen)
{
	const struct sandbox *sb = &l->p->os_env.sandbox;

	l->base = event_base_new();
	l->notify = l->base ? notify_new(l->base, l->o->verbose, l->o->quiet) : NULL;
	if (!l->notify)
		return diag_fail(err, errlen, "cannot create the event loop");
	/* linux_landlock: chmod and utimensat on a path, where the rules allow. */
	if (l->landlock) {
		l->ll.meta = (struct metadata_rules){l->ll.r.rules, l->ll.r.n_rules};
		notify_set_answer(l->notify, metadata_answer, &l->ll.meta);
	}
	if (sb->n_egress) {
		struct session_config sc;
		int rc;

		egress_config(l->a, l->o, sb, l->scratch.path, l->rq.proxy_socket, &l->creds,
			      &l->egress_log, &sc);
		/*
		 * Up before the agent exists: no first request may find it missing.
		 * Under bwrap the sandbox is set up meanwhile, and omnibox-init holds
		 * the agent until the proxy has answered (proxy_go()); linux_landlock's
		 * relay, here, needs the proxy listening first.
		 */
		rc = l->landlock ? egress_proxy_start(l->a, &sc, &l->egress_log, &l->proxy, err,
						      errlen)
				 : egress_proxy_spawn(l->a, &sc, &l->egress_log, &l->proxy, err,
						      errlen);
		l->proxy_pending = rc == 0 && !l->landlock;
		/* The proxy has its own copy: ours goes now. */
		if (l->creds.n_creds)
			cred_runtime_wipe(&l->creds);
		if (rc < 0)
			return -1;
		if (l->landlock && landlock_relay_start(&l->ll, l->rq.proxy_socket, err, errlen) < 0)
			return -1;
	}
	if (sb->n_git_ssh) {
		if (!l->egress_log.f &&
		    egress_log_open(l->a, l->o, &l->egress_log, err, errlen) < 0)
			return -1;
		if (start_git_ssh(l, err, errlen) < 0)
			return -1;
	}
	{
		int early = l->janitor_early ? l->janitor : -1;

		l->janitor = janitor_start(&l->scratch, &l->plan, NULL);
		if (l->janitor < 0) {
			l->janitor = early;
			return diag_fail(err, errlen, "cannot start the cleanup process: %s",
					 strerror(errno));
		}
		/* bwrap started before it (bwrap_launch_spawn()): its group, now,
		 * and the first one goes. */
		if (l->bwrap_pid > 0)
			janitor_sandbox(l->janitor, l->bwrap_pid);
		if (early >= 0)
			janitor_release(early);
		l->janitor_early = false;
	}
	return 0;
}

int
bwrap_launch_start(struct bwrap_launch *l, char *err, size_t errlen)
{
	/* The namespace probe's child (launch_choose_linux()) has long ended. */
	launch_probe_reap();
	if (!l->landlock)
		landlock_report(l->p, l->o->quiet);
	start_cgroup(l);
	return start_services(l, err, errlen);
}

int
bwrap_launch_run(struct bwrap_launch *l, int *status, char *err, size_t errlen)
{
	/* linux_landlock: write_files are written in place, no copy comes back. */
	if (!l->landlock)
		l->copyback = copyback_start(l->base, l->plan.writebacks, l->plan.n_writebacks);
	if (bwrap_run(l, status, err, errlen) < 0) {
		/* bwrap may have started (the egress proxy failed meanwhile): the
		 * same check as after any run, here, before anything else of the
		 * host's runs; told, the janitor does not do it later, when the
		 * next launch may be setting up the same workspace. */
		launch_quarantine(&l->plan, stderr);
		janitor_checked(l->janitor, -1);
		return -1;
	}
	if (!l->landlock)
		copyback_finish(l->copyback, l->plan.writebacks, l->plan.n_writebacks);
	/* Before anything else of the host's can run git in the workspace. */
	launch_quarantine(&l->plan, stderr);
	janitor_checked(l->janitor, l->sandbox_mnt);
	if (l->sandbox_mnt >= 0)
		close(l->sandbox_mnt);
	l->sandbox_mnt = -1;
	gitssh_stop(l->git_ssh_pid, l->git_ssh_alive);
	launch_plan_close(&l->plan);
	return 0;
}

/*
 * The scratch dir, at the end of a launch that ran: renamed out of the way
 * (".omnibox-XXXXXX"), its name gone before omnibox-run returns, and left
 * to the janitor to remove once omnibox-run is gone.  Its removal (a home
 * full of caches, the mounts the sandbox had on it) is then on no one's
 * way.  0, or -1 when it is this process's to remove.
 */
static int
scratch_hand_off(struct bwrap_launch *l)
{
	char *gone;

	if (l->janitor < 0 || l->scratch.dirfd < 0 || !l->scratch.name)
		return -1;
	gone = arena_printf(l->a, ".%s", l->scratch.name);
	if (janitor_scratch_moved(l->janitor, gone) < 0 ||
	    renameat2(l->scratch.dirfd, l->scratch.name, l->scratch.dirfd, gone, RENAME_NOREPLACE) <
		0)
		return -1;
	close(l->scratch.dirfd);
	l->scratch.dirfd = -1;
	return 0;
}

void
bwrap_launch_report(struct bwrap_launch *l)
{
	struct session_summary refused;
	bool proxy = l->proxy.pid > 0;

	/* The proxy ends first (its last log line), then says what it refused. */
	egress_proxy_stop(l->a, &l->proxy, &refused);
	if (proxy && !l->o->quiet)
		egress_denials_summary(&refused, l->o->input);
	if (!l->o->quiet)
		notify_summary(l->notify, stderr);
	notify_free(l->notify);
	event_base_free(l->base);
	egress_log_close(&l->egress_log);
	if (l->cgroup)
		cgroup_remove(l->cgroup);
	if (scratch_hand_off(l) < 0)
		host_remove(&l->scratch, true, false);
	launch_cleanup(&l->plan);
	janitor_cleaned(l->janitor);
	close(l->janitor);
	tb_free(&l->text);
	tb_free(&l->nul);
	tb_free(&l->tail);
	tb_free(&l->early);
}

void
bwrap_launch_undo(struct bwrap_launch *l)
{
	/* Started early, handed nothing: nothing of the agent's ran; what
	 * the first cleanup process would do is done here. */
	bwrap_end(l);
	/* Its socket and bundle are in the scratch dir. */
	egress_proxy_stop(l->a, &l->proxy, NULL);
	if (l->resolved)
		launch_cleanup(&l->plan);
	if (l->scratch_made)
		host_remove(&l->scratch, true, false);
	/* Last: until the scratch dir is gone it is the janitor's to remove. */
	if (l->janitor_early) {
		janitor_release(l->janitor);
		l->janitor = -1;
		l->janitor_early = false;
	}
}
