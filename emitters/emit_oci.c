/*
 * emit_oci.c - an OCI runtime-spec config.json (oci.h, --target=oci).
 */
#include "oci.h"

#include <stdlib.h>
#include <string.h>

#include "compiler/decide/container.h"
#include "compiler/decide/env.h"
#include "compiler/decide/protect.h"
#include "emit.h"
#include "json.h"
#include "seccomp.h"

/* The OCI spec's own defaults for what a runtime hides and keeps read-only in /proc. */
static const char *const masked_paths[] = {
    "/proc/acpi",	 "/proc/asound",	"/proc/kcore",	     "/proc/keys",
    "/proc/latency_stats", "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug",
    "/proc/scsi",	 "/sys/firmware",	"/sys/devices/virtual/powercap", NULL};
static const char *const readonly_paths[] = {"/proc/bus",	   "/proc/fs", "/proc/irq",
					     "/proc/sys", "/proc/sysrq-trigger", NULL};

static void
str_array(struct json *j, const char *key, const char *const *v, bool inline_)
{
	json_key(j, key);
	json_open(j, '[', inline_);
	for (size_t i = 0; v && v[i]; i++)
		json_str(j, v[i]);
	json_close(j);
}

/* One entry of "mounts". */
static void
mount(struct json *j, const char *dest, const char *type, const char *src, const char *const *opts)
{
	json_open(j, '{', true);
	json_key(j, "destination");
	json_str(j, dest);
	json_key(j, "type");
	json_str(j, type);
	json_key(j, "source");
	json_str(j, src);
	str_array(j, "options", opts, true);
	json_close(j);
}

static void
bind(struct json *j, const char *src, const char *dest, bool ro)
{
	static const char *const rw_opts[] = {"rbind", "rw", "nosuid", "nodev", NULL};
	static const char *const ro_opts[] = {"rbind", "ro", "nosuid", "nodev", NULL};

	mount(j, dest, "bind", src, ro ? ro_opts : rw_opts);
}

static void
empty_tmpfs(struct json *j, const char *dest, bool ro)
{
	static const char *const ro_opts[] = {"ro", "nosuid", "nodev", "noexec", "mode=555",
					      "size=4k", NULL};
	static const char *const rw_opts[] = {"nosuid", "nodev", "noexec", "mode=555", NULL};

	mount(j, dest, "tmpfs", "tmpfs", ro ? ro_opts : rw_opts);
}

/* /proc, /dev and /tmp of the bundle's own (bwrap's part 2). */
static void
kernel_mounts(struct json *j, const struct oci_context *c)
{
	static const char *const proc[] = {"nosuid", "noexec", "nodev", NULL};
	static const char *const dev[] = {"nosuid", "strictatime", "mode=755", "size=65536k",
					  NULL};
	static const char *const pts[] = {"nosuid", "noexec",	"newinstance", "ptmxmode=0666",
					  "mode=0620", "gid=5", NULL};
	static const char *const pts_rootless[] = {"nosuid", "noexec", "newinstance",
						   "ptmxmode=0666", "mode=0620", NULL};
	static const char *const shm[] = {"nosuid", "noexec", "nodev", "mode=1777", "size=65536k",
					  NULL};
	static const char *const tmp[] = {"nosuid", "nodev", "mode=1777", NULL};

	mount(j, "/proc", "proc", "proc", proc);
	mount(j, "/dev", "tmpfs", "tmpfs", dev);
	mount(j, "/dev/pts", "devpts", "devpts", c->rootless ? pts_rootless : pts);
	mount(j, "/dev/shm", "tmpfs", "shm", shm);
	mount(j, OCI_SCRATCH, "tmpfs", "tmpfs", tmp);
}

/* Is some mount after I (not a remount) at or below DEST? */
static bool
covered_later(const struct bwrap_mounts *m, size_t i, const char *dest)
{
	for (size_t k = i + 1; k < m->n; k++)
		if (m->v[k].op != BWRAP_REMOUNT_RO && m->v[k].op != BWRAP_FS_WRITE &&
		    path_within(m->v[k].dest, dest) && strcmp(m->v[k].dest, dest))
			return true;
	return false;
}

/* The protected path at DEST, in a resolved context: NULL when none. */
static const struct bwrap_grant *
protect_at(const struct bwrap_context *c, const char *dest)
{
	for (size_t i = 0; c->resolved && i < c->n_protects; i++)
		if (!strcmp(c->protects[i].path, dest))
			return &c->protects[i];
	return NULL;
}

/* Each write_files entry bound writable onto itself (container.h: in place). */
static void
write_files(struct json *j, const struct policy *p)
{
	const struct ir_pathlist *l = &p->os_env.sandbox.write_files;

	for (size_t i = 0; i < l->n; i++)
		bind(j, l->v[i].symbolic, l->v[i].symbolic, false);
}

/* One mount of the bwrap view, as the bundle makes it (or nothing). */
static void
view_mount(struct json *j, const struct bwrap_context *c, const struct bwrap_mounts *m, size_t i)
{
	const struct bwrap_mount *e = &m->v[i];
	const struct bwrap_grant *g;

	switch (e->part) {
	case BWRAP_PART_HOME:
		/* The private home: an empty tmpfs of the bundle's own. */
		mount(j, e->dest, "tmpfs", "tmpfs",
		      (const char *const[]){"nosuid", "nodev", "mode=700", NULL});
		return;
	case BWRAP_PART_GRANT:
		/* The scratch dir is /tmp; write_files are bound where they are. */
		if (!strcmp(e->dest, c->scratch) || e->write_file)
			return;
		bind(j, e->dest, e->dest, e->op != BWRAP_BIND);
		return;
	case BWRAP_PART_MASK:
	case BWRAP_PART_PROTECT:
		break;
	default:
		return; /* the image's, the launch's, or omnibox-init's */
	}
	switch (e->op) {
	case BWRAP_DEVNULL:
		bind(j, "/dev/null", e->dest, true);
		return;
	case BWRAP_TMPFS:
		/* Read-only at once unless something is mounted inside later. */
		empty_tmpfs(j, e->dest, !covered_later(m, i, e->dest));
		return;
	case BWRAP_BIND:
	case BWRAP_RO_BIND:
		g = protect_at(c, e->dest);
		if (g && g->fd < 0 && g->hold_text)
			bind(j, "/dev/null", e->dest, true); /* a missing file: none to read */
		else if (g && g->fd < 0)
			empty_tmpfs(j, e->dest, true); /* a missing directory: empty */
		else
			bind(j, e->dest, e->dest, e->op != BWRAP_BIND);
		return;
	default:
		return;
	}
}

static void
mounts(struct json *j, const struct policy *p, const struct oci_context *c,
       const struct bwrap_mounts *m)
{
	bool files_done = false;

	json_key(j, "mounts");
	json_open(j, '[', false);
	kernel_mounts(j, c);
	for (size_t i = 0; i < m->n; i++) {
		if (!files_done && m->v[i].part > BWRAP_PART_GRANT) {
			write_files(j, p);
			files_done = true;
		}
		view_mount(j, c->bw, m, i);
	}
	if (!files_done)
		write_files(j, p);
	json_close(j);
}

/* The environment: resolved, the launch's; symbolic, what is set (the names
 * passed from the launching environment go to the annotations). */
static void
environment(struct json *j, const struct policy *p, const struct oci_context *c,
	    struct arena *a, struct textbuf *passed)
{
	const char *start = p->os_env.start_in_scratch.value ? OCI_SCRATCH : c->bw->cwd;
	struct env_launch l = {.pwd = start};
	struct env_rules rules;
	char *none[] = {NULL};
	char **env;

	env_decide(a, p, &l, &rules);
	for (size_t i = 0; i < rules.n; i++)
		if (rules.v[i].op == ENV_PASS || rules.v[i].op == ENV_PASS_PREFIX)
			tb_printf(passed, "%s%s%s", passed->len ? " " : "", rules.v[i].name,
				  rules.v[i].op == ENV_PASS_PREFIX ? "*" : "");
	env = env_apply(a, rules.v, rules.n, false, c->env ? c->env : none, OCI_SCRATCH);
	json_key(j, "env");
	json_open(j, '[', false);
	for (size_t i = 0; env[i]; i++)
		json_str(j, env[i]);
	json_close(j);
	json_key(j, "cwd");
	json_str(j, start);
}

static void
rlimit(struct json *j, const char *type, unsigned long long v)
{
	json_open(j, '{', true);
	json_key(j, "type");
	json_str(j, type);
	json_key(j, "hard");
	json_u64(j, v);
	json_key(j, "soft");
	json_u64(j, v);
	json_close(j);
}

static void
process(struct json *j, const struct policy *p, const struct oci_context *c, struct arena *a,
	struct textbuf *passed)
{
	static const char *const none[] = {NULL};
	static const char *const cap_sets[] = {"bounding", "effective", "inheritable", "permitted",
					       "ambient"};
	const struct limits *l = &p->os_env.sandbox.limits;

	json_key(j, "process");
	json_open(j, '{', false);
	json_key(j, "terminal");
	json_bool(j, false);
	json_key(j, "user");
	json_open(j, '{', true);
	json_key(j, "uid");
	json_u64(j, 0);
	json_key(j, "gid");
	json_u64(j, 0);
	json_close(j);
	json_key(j, "args");
	json_open(j, '[', true);
	if (c->bw->resolved) {
		for (size_t i = 0; i < c->bw->n_command; i++)
			json_str(j, c->bw->command[i]);
	} else if (p->terminal) {
		json_str(j, p->terminal->command.s);
		for (size_t i = 0; i < p->terminal->args.n; i++)
			json_str(j, p->terminal->args.v[i].s);
	} else {
		json_str(j, "{COMMAND}");
	}
	json_close(j);
	environment(j, p, c, a, passed);
	/* No capability in any set: root inside is an ordinary user. */
	json_key(j, "capabilities");
	json_open(j, '{', true);
	for (size_t i = 0; i < sizeof(cap_sets) / sizeof(cap_sets[0]); i++)
		str_array(j, cap_sets[i], none, true);
	json_close(j);
	if (l->cpu_time.present || l->open_files.present) {
		json_key(j, "rlimits");
		json_open(j, '[', false);
		if (l->cpu_time.present)
			rlimit(j, "RLIMIT_CPU", l->cpu_time.value);
		if (l->open_files.present)
			rlimit(j, "RLIMIT_NOFILE", l->open_files.value);
		json_close(j);
	}
	json_key(j, "noNewPrivileges");
	json_bool(j, true);
	json_close(j);
}

static void
id_mapping(struct json *j, const char *key, unsigned host)
{
	json_key(j, key);
	json_open(j, '[', false);
	json_open(j, '{', true);
	json_key(j, "containerID");
	json_u64(j, 0);
	json_key(j, "hostID");
	json_u64(j, host);
	json_key(j, "size");
	json_u64(j, 1);
	json_close(j);
	json_close(j);
}

static void
resources(struct json *j, const struct limits *l)
{
	if (!l->memory.present && !l->processes.present && !l->cpu_rate.present)
		return;
	json_key(j, "resources");
	json_open(j, '{', false);
	if (l->memory.present) {
		json_key(j, "memory");
		json_open(j, '{', true);
		json_key(j, "limit");
		json_u64(j, l->memory.value);
		json_close(j);
	}
	if (l->processes.present) {
		json_key(j, "pids");
		json_open(j, '{', true);
		json_key(j, "limit");
		json_u64(j, l->processes.value);
		json_close(j);
	}
	if (l->cpu_rate.present) {
		json_key(j, "cpu");
		json_open(j, '{', true);
		json_key(j, "quota");
		json_u64(j, l->cpu_rate.value * 1000);
		json_key(j, "period");
		json_u64(j, 100000);
		json_close(j);
	}
	json_close(j);
}

static void
linux_section(struct json *j, const struct policy *p, const struct oci_context *c)
{
	const char *ns[] = {"pid", "ipc", "uts", "mount", "cgroup", NULL, NULL, NULL};
	size_t n = 5;

	if (container_network_private(p))
		ns[n++] = "network";
	if (c->rootless)
		ns[n++] = "user";
	json_key(j, "linux");
	json_open(j, '{', false);
	if (c->rootless) {
		id_mapping(j, "uidMappings", c->uid);
		id_mapping(j, "gidMappings", c->gid);
	}
	json_key(j, "namespaces");
	json_open(j, '[', false);
	for (size_t i = 0; ns[i]; i++) {
		json_open(j, '{', true);
		json_key(j, "type");
		json_str(j, ns[i]);
		json_close(j);
	}
	json_close(j);
	resources(j, &p->os_env.sandbox.limits);
	str_array(j, "maskedPaths", masked_paths, false);
	str_array(j, "readonlyPaths", readonly_paths, false);
	json_key(j, "seccomp");
	seccomp_oci_write(j, SECCOMP_BASE);
	json_close(j);
}

static void
note(struct json *j, const char *key, const char *text)
{
	json_key(j, key);
	json_str(j, text);
}

/* What the symbolic file leaves to --resolve, said where a reader looks. */
static void
annotations(struct json *j, const struct policy *p, const struct oci_context *c,
	    struct arena *a, const char *passed)
{
	const struct sandbox *sb = &p->os_env.sandbox;
	const char *roots[256];
	struct textbuf prot = {0};
	size_t n_roots = protect_symbolic_roots(sb, roots, 256);

	json_key(j, "annotations");
	json_open(j, '{', false);
	note(j, "org.omnibox.policy", p->source);
	if (!c->bw->resolved) {
		note(j, "org.omnibox.placeholders",
		     "{CWD} the workspace, {HOME} the home directory, {COMMAND} the command: "
		     "omnibox-compile --target=oci --resolve writes this file for this machine, "
		     "with the masks and protected paths found there");
		if (!sb->allow_all_hidden)
			note(j, "org.omnibox.dotfiles",
			     arena_printf(a,
					  "every child of {CWD} and of each granted directory whose "
					  "name starts with '.' (%s) is masked by --resolve, except "
					  "what cwd_allow_hidden shows",
					  sb->scan_recursive.value ? "at every depth" : "top level"));
		for (size_t i = 0; i < sb->protect_paths.n; i++)
			tb_printf(&prot, "%s%s", prot.len ? " " : "", sb->protect_paths.v[i].symbolic);
		if (n_roots || prot.len)
			note(j, "org.omnibox.protected",
			     arena_printf(a,
					  "read-only by --resolve where they exist in a writable "
					  "root: .git/hooks .git/config and the other git entries "
					  "of every repository, .envrc .vscode .idea .claude "
					  ".mcp.json .codex%s%s (docs/protect.md)",
					  prot.len ? " " : "", prot.len ? prot.data : ""));
		if (passed[0])
			note(j, "org.omnibox.env.passthrough",
			     arena_printf(a, "passed by --resolve from its environment when set: %s",
					  passed));
	}
	if (sb->n_egress)
		note(j, "org.omnibox.egress",
		     "egress_rules: no network at all; a bundle runs no egress proxy "
		     "(--target=kubernetes runs one)");
	json_close(j);
	tb_free(&prot);
}

int
oci_build(const struct policy *p, const struct oci_context *c, struct diag *d,
	  struct textbuf *out)
{
	struct arena *a = arena_new();
	struct bwrap_mounts m;
	struct textbuf passed = {0};
	struct textbuf body = {0};
	struct json j;

	if (emit_check_target(p, TARGET_OCI, d) < 0 || bwrap_mounts_build(p, c->bw, &m) < 0) {
		arena_free(a);
		return -1;
	}
	json_init(&j, &body);
	json_open(&j, '{', false);
	json_key(&j, "ociVersion");
	json_str(&j, "1.0.2");
	process(&j, p, c, a, &passed);
	json_key(&j, "root");
	json_open(&j, '{', true);
	json_key(&j, "path");
	json_str(&j, OCI_ROOTFS);
	json_key(&j, "readonly");
	json_bool(&j, true);
	json_close(&j);
	json_key(&j, "hostname");
	json_str(&j, "omnibox");
	mounts(&j, p, c, &m);
	linux_section(&j, p, c);
	annotations(&j, p, c, a, passed.data ? passed.data : "");
	json_close(&j);
	json_end(&j);
	tb_write(out, body.data, body.len);
	if (p->os_env.sandbox.n_egress && d)
		diag_warning(d, p->os_env.sandbox.egress_loc,
			     "egress_rules: the OCI bundle has no network at all: a bundle runs no "
			     "egress proxy (--target=kubernetes runs one)");
	tb_free(&body);
	tb_free(&passed);
	bwrap_mounts_free(&m);
	arena_free(a);
	return 0;
}

int
emit_oci(const struct policy *p, enum target t, struct diag *d, struct textbuf *out)
{
	struct bwrap_context bw;
	struct oci_context c = {&bw, NULL, false, 0, 0};

	(void)t;
	bwrap_context_symbolic(&bw);
	return oci_build(p, &c, d, out);
}
