/*
 * emit_landlock.c - the linux_landlock backend's command line (landlock.h),
 * and --emit=landlock.
 */
#include "landlock.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../compiler/base/format.h"
#include "../compiler/base/textesc.h"
#include "../compiler/decide/landlock.h"
#include "../compiler/decide/llbackend.h"
#include "../compiler/decide/refuse.h"
#include "../compiler/decide/workspace.h"
#include "emit.h"

/* Device ioctls (LANDLOCK_ACCESS_FS_IOCTL_DEV, ABI 5): a terminal needs them. */
#define LL_IOCTL_DEV (1ULL << 15)
/* What the devices get: read and write, never make or remove. */
#define LL_DEVICE (LL_R | LL_WRITE_FILE | LL_TRUNCATE | LL_IOCTL_DEV)

struct out {
	struct textbuf *text, *nul;
};

static void
arg(struct out *o, const char *a)
{
	tb_escape(o->text, a, 0);
	tb_putc(o->text, '\n');
	if (o->nul)
		tb_write(o->nul, a, strlen(a) + 1);
}

static void comment(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Paths in it were escaped by whoever named them; a line break that was not cannot act. */
static void
comment(struct out *o, const char *fmt, ...)
{
	va_list ap;
	char buf[2048];

	va_start(ap, fmt);
	format_v(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	tb_puts(o->text, "# ");
	tb_escape(o->text, buf, TEXT_ESC_AGAIN);
	tb_putc(o->text, '\n');
}

static void
number_arg(struct out *o, unsigned long long v)
{
	char num[32];

	snprintf(num, sizeof(num), "%llu", v);
	arg(o, num);
}

static void
fd_arg(struct out *o, int fd, const char *placeholder)
{
	if (fd < 0)
		arg(o, placeholder);
	else
		number_arg(o, (unsigned long long)fd);
}

/* One rule: its path, rights and why as a comment, then --ll-fs FD RIGHTS. */
static void
rule(struct out *o, const char *path, int fd, unsigned long long rights, const char *why)
{
	char text[256];
	struct textbuf p = {0};

	landlock_rights_text(rights & ~LL_IOCTL_DEV, text, sizeof(text));
	tb_escape(&p, path, 0);
	comment(o, "%s: %s%s (%s)", p.data ? p.data : "", text,
		(rights & LL_IOCTL_DEV) ? ",ioctl" : "", why);
	tb_free(&p);
	arg(o, "--ll-fs");
	fd_arg(o, fd, "{FD}");
	number_arg(o, rights);
}

static void
symbolic_list(struct out *o, const struct ir_pathlist *l, unsigned long long rights,
	      const char *what)
{
	for (size_t i = 0; i < l->n; i++) {
		char why[128];

		snprintf(why, sizeof(why), "%s, line %u", what, l->v[i].loc.line);
		rule(o, l->v[i].symbolic, -1, rights, why);
	}
}

/* The rules from the policy alone: what the launch opens, before it cuts them at launch. */
static void
symbolic_rules(const struct policy *p, struct out *o)
{
	const struct sandbox *sb = &p->os_env.sandbox;
	const struct llb_fixed *fixed;
	size_t n = llbackend_fixed(&fixed);

	comment(o, "1. the system's directories and files, devices and /proc, where they exist");
	for (size_t i = 0; i < n; i++)
		rule(o, fixed[i].path, -1, fixed[i].writable ? LL_DEVICE : LL_R, fixed[i].why);
	comment(o, "2. the policy's grants; at launch a writable one is cut around the masked and "
		   "protected paths below it: the directories above them list-only, every other "
		   "entry a rule of its own, the protected ones read-only, the masked ones none");
	if (!workspace_writable(sb))
		rule(o, "{CWD}", -1, LL_R, "workspace, read-only");
	symbolic_list(o, &sb->write_paths, LL_W, "write_paths");
	symbolic_list(o, &sb->read_paths, LL_R, "read_paths");
	symbolic_list(o, &sb->write_files, LL_W & LL_FILE_RIGHTS, "write_files, written in place");
	rule(o, "{SCRATCH}", -1, LL_W, "scratch dir: $TMPDIR, and $HOME in it unless a grant holds the home");
	comment(o, "the command's install directory, read-only, when outside the system directories");
	for (size_t i = 0; i < sb->mask_paths.n; i++)
		comment(o, "at launch: no rule for %s (mask_paths, line %u)", sb->mask_paths.v[i].symbolic,
			sb->mask_paths.v[i].loc.line);
	if (!sb->allow_all_hidden)
		comment(o, "at launch: no rule for each dotfile the scan finds (cwd_allow_hidden)");
}

struct approx_out {
	struct out *o;
};

static void
approx_row(void *arg, const char *setting, uint32_t line, struct llb_verdict v)
{
	struct approx_out *a = arg;
	static const char *const words[] = {"enforced", "approximated", "not enforced"};

	if (v.status == LLB_ENFORCED)
		return;
	if (line)
		comment(a->o, "  %s (line %u), %s: %s", setting, line, words[v.status], v.how);
	else
		comment(a->o, "  %s, %s: %s", setting, words[v.status], v.how);
}

/* omnibox-init's own options: the ABI, the descriptors, the network, the limits. */
static void
init_options(const struct policy *p, const struct landlock_context *c, struct out *o)
{
	const struct sandbox *sb = &p->os_env.sandbox;
	const struct limits *l = &sb->limits;
	const struct {
		const char *opt;
		const struct ir_u64 *v;
	} rl[] = {{"--rlimit-data", &l->memory},
		  {"--rlimit-cpu", &l->cpu_time},
		  {"--rlimit-nofile", &l->open_files},
		  {"--rlimit-nproc", &l->processes}};
	const char *why;
	int abi = llbackend_abi(p, &why);

	comment(o, "Landlock ABI %d at least, or nothing runs: %s", abi, why);
	arg(o, "--ll-min-abi");
	number_arg(o, (unsigned long long)abi);
	comment(o, "omnibox-init says here that the sandbox is set up (and hands over the seccomp "
		   "listener), then closes it");
	arg(o, "--ready-fd");
	fd_arg(o, c->ready_fd, "{READY_FD}");
	if (sb->n_egress || !sb->allow_network.value)
		comment(o, "the seccomp filter's variant for this backend (--emit=seccomp-landlock): "
			   "no socket but TCP over IPv4 and IPv6, and socketpair(); no listen()");
	else
		comment(o, "the seccomp filter's variant for this backend with the host's network "
			   "(--emit=seccomp-landlock-net): no socket but IPv4 and IPv6, and "
			   "socketpair()");
	arg(o, "--seccomp-fd");
	fd_arg(o, c->seccomp_fd, "{SECCOMP_FD}");
	if (sb->n_egress) {
		comment(o, "egress_rules (line %u): TCP connect to the egress proxy's loopback port "
			   "alone; no TCP bind",
			sb->egress_loc.line);
		arg(o, "--ll-net-connect");
		arg(o, c->proxy_port ? c->proxy_port : "{PORT}");
	} else if (!sb->allow_network.value) {
		comment(o, "allow_network: false (line %u): no TCP connect or bind at all",
			sb->allow_network.loc.line);
	} else {
		comment(o, "allow_network: true: TCP is left to the host's network");
		arg(o, "--ll-net-any");
	}
	for (size_t i = 0; i < sizeof(rl) / sizeof(rl[0]); i++) {
		if (!rl[i].v->present)
			continue;
		arg(o, rl[i].opt);
		number_arg(o, rl[i].v->value);
	}
	if (c->tty) {
		comment(o, "an interactive launch: the sandbox's own terminal is its controlling "
			   "terminal");
		arg(o, "--tty");
	}
}

void
landlock_build(const struct policy *p, const struct landlock_context *c, struct textbuf *text,
	       struct textbuf *nul)
{
	struct out o = {text, nul};
	struct approx_out ao = {&o};

	tb_printf(text, "# omnibox-init's command line for %s%s%s under linux_landlock, one "
			"argument per line\n",
		  p->source, p->terminal ? ", terminal " : "", p->terminal ? p->terminal->name : "");
	if (!c->resolved)
		tb_puts(text,
			"# (the backend where no namespace can be made: type linux_landlock, or auto "
			"there)\n"
			"# placeholders: {INIT} omnibox-init, {CWD} workspace, {SCRATCH} private "
			"scratch dir,\n"
			"# {COMMAND} the agent's command, {EXEC} its canonical path, {PORT} the egress "
			"proxy's\n"
			"# loopback port, {SECCOMP_FD} the filter of --emit=seccomp-landlock-bpf, "
			"{READY_FD} a\n"
			"# socket to omnibox-run, {FD} a descriptor omnibox-run opens on the path "
			"named above it,\n"
			"# walking it one component at a time from the grant's own descriptor, never "
			"following\n"
			"# a symbolic link; RIGHTS in decimal, the kernel's LANDLOCK_ACCESS_FS_* "
			"bits.\n"
			"# `omnibox-run --dry-run` prints the command line it would execute here\n");
	comment(&o, "what the backend cannot enforce exactly (--explain):");
	if (!llbackend_settings(p, false, approx_row, &ao))
		comment(&o, "  nothing");
	for (size_t i = 0; i < c->n_approx; i++)
		comment(&o, "  at launch: %s", c->approx[i]);
	comment(&o, "omnibox-init, started directly: no bwrap, no mount, no namespace");
	arg(&o, c->init ? c->init : "{INIT}");
	init_options(p, c, &o);
	if (c->resolved)
		for (size_t i = 0; i < c->n_rules; i++)
			rule(&o, c->rules[i].path, c->rules[i].fd, c->rules[i].rights,
			     c->rules[i].why);
	else
		symbolic_rules(p, &o);
	comment(&o, "the command");
	arg(&o, "--exec");
	arg(&o, c->exec_path ? c->exec_path : "{EXEC}");
	arg(&o, "--");
	if (!c->command)
		arg(&o, "{COMMAND}");
	for (size_t i = 0; c->command && i < c->n_command; i++)
		arg(&o, c->command[i]);
}

int
emit_landlock(const struct policy *p, enum target t, struct diag *d, struct textbuf *out)
{
	struct landlock_context c = {.seccomp_fd = -1, .ready_fd = -1};
	struct arena *a;
	struct loc loc;
	const char *why;

	if (emit_check_target(p, t, d) < 0)
		return -1;
	/* What this backend cannot run at all (git_ssh, copy_on_write). */
	a = arena_new();
	why = p->os_env.sandbox.type == SANDBOX_NONE
		  ? NULL
		  : refuse_target(a, p, SANDBOX_LINUX_LANDLOCK, "linux_landlock", &loc);
	if (why)
		diag_error(d, loc, "%s", why);
	arena_free(a);
	if (why)
		return -1;
	if (p->os_env.sandbox.type == SANDBOX_NONE) {
		tb_printf(out, "# sandbox type none: the command runs without a sandbox\n");
		return 0;
	}
	landlock_build(p, &c, out, NULL);
	return 0;
}
