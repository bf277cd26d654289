/*
 * container.c - the OCI bundle's and the Kubernetes pod's verdicts (container.h).
 */
#include "container.h"

#include "workspace.h"

static struct llb_verdict
verdict(enum ll_status status, const char *how)
{
	return (struct llb_verdict){status, how};
}

/* The runtime opens a bind mount's source by its path when the container starts. */
#define BY_PATH                                                                                    \
	"; the runtime opens the source by path at start, following a symlink the agent "         \
	"left there since --resolve walked it: resolve again before each run"
#define RESOLVED_AT "found by --resolve when it writes config.json: resolve again before each run"

static struct llb_verdict
oci_files(const struct policy *p, enum llb_kind kind)
{
	switch (kind) {
	case LLB_WORKSPACE:
		return verdict(LLB_APPROXIMATED, workspace_writable(&p->os_env.sandbox)
						     ? "read-write bind mount" BY_PATH
						     : "read-only bind mount" BY_PATH);
	case LLB_HOME:
		if (workspace_home_held(p))
			return verdict(LLB_ENFORCED,
				       "the grant decides: no private home, the host's as granted");
		return verdict(LLB_ENFORCED, "an empty tmpfs at the home, discarded at exit; the "
					     "host's home only where a grant shows it");
	case LLB_WRITE_PATH:
		return verdict(LLB_APPROXIMATED, "read-write bind mount" BY_PATH);
	case LLB_COW_PATH:
		return verdict(LLB_NOT_ENFORCED, "copy_on_write needs omnibox-run");
	case LLB_READ_PATH:
		return verdict(LLB_APPROXIMATED, "read-only bind mount" BY_PATH);
	case LLB_WRITE_FILE:
		return verdict(LLB_APPROXIMATED,
			       "the file bound writable in place, not through a private copy; "
			       "replacing it by rename is refused");
	case LLB_MASK_PATH:
		return verdict(LLB_ENFORCED,
			       "an empty read-only tmpfs or /dev/null over it, " RESOLVED_AT);
	case LLB_DOTFILES:
		if (p->os_env.sandbox.allow_all_hidden)
			return verdict(LLB_ENFORCED, "no dotfile is hidden");
		return verdict(LLB_APPROXIMATED, "a mount over each dotfile " RESOLVED_AT
						 "; one made after that is seen");
	case LLB_PROTECTED:
		return verdict(LLB_APPROXIMATED,
			       "read-only binds onto themselves, the directories above them bound "
			       "onto themselves (no rename), " RESOLVED_AT
			       "; a missing one is held by a placeholder --resolve makes (a file "
			       "that reads as none) or an empty tmpfs, and these stay in the "
			       "workspace after the run");
	case LLB_UNPROTECT:
		return verdict(LLB_ENFORCED, "writable like the rest of its root");
	case LLB_DENY_SOCKET:
		return verdict(LLB_ENFORCED, "/dev/null over each socket " RESOLVED_AT);
	default:
		return verdict(LLB_NOT_ENFORCED, "unknown setting");
	}
}

/*
 * A pod sees volumes, not the host: each write root is a volume (emptyDir,
 * named so that a PersistentVolumeClaim can take its place), a read grant
 * a read-only one, and the image holds everything else.
 */
static struct llb_verdict
k8s_files(const struct policy *p, enum llb_kind kind)
{
	switch (kind) {
	case LLB_WORKSPACE:
		return verdict(LLB_APPROXIMATED,
			       workspace_writable(&p->os_env.sandbox)
				   ? "a writable volume (emptyDir unless replaced) at the workspace; "
				     "its content is the volume's, not a host directory's"
				   : "a read-only volume (emptyDir unless replaced) at the workspace; "
				     "its content is the volume's, not a host directory's");
	case LLB_HOME:
		if (workspace_home_held(p))
			return verdict(LLB_APPROXIMATED,
				       "the grant's volume holds the home: no host home in a pod");
		return verdict(LLB_ENFORCED, "an emptyDir volume at the home, discarded with the "
					     "pod");
	case LLB_WRITE_PATH:
		return verdict(LLB_APPROXIMATED, "a writable volume (emptyDir unless replaced) at "
						 "the path: what it holds is the volume's");
	case LLB_COW_PATH:
		return verdict(LLB_NOT_ENFORCED, "copy_on_write needs omnibox-run");
	case LLB_READ_PATH:
		return verdict(LLB_APPROXIMATED, "a read-only volume (emptyDir unless replaced) at "
						 "the path: what it holds is the volume's");
	case LLB_WRITE_FILE:
		return verdict(LLB_APPROXIMATED, "a writable volume at the file's directory (a "
						 "volume mounts directories)");
	case LLB_MASK_PATH:
		return verdict(LLB_APPROXIMATED,
			       "an empty read-only emptyDir at the path: a directory there, "
			       "whatever the volume below holds");
	case LLB_DOTFILES:
		if (p->os_env.sandbox.allow_all_hidden)
			return verdict(LLB_ENFORCED, "no dotfile is hidden");
		return verdict(LLB_NOT_ENFORCED, "a pod cannot mask names in a volume's content, "
						 "which is only known when the pod runs");
	case LLB_PROTECTED:
		return verdict(LLB_APPROXIMATED,
			       "the protected directories (.git/hooks, .vscode, ...) are empty "
			       "read-only emptyDir volumes; the files (.git/config, .envrc, ...) "
			       "cannot be held by a volume and stay writable");
	case LLB_UNPROTECT:
		return verdict(LLB_ENFORCED, "writable like the rest of its root");
	case LLB_DENY_SOCKET:
		return verdict(LLB_ENFORCED, "no host socket is in a pod");
	default:
		return verdict(LLB_NOT_ENFORCED, "unknown setting");
	}
}

static struct llb_verdict
oci_network(const struct policy *p, enum llb_kind kind)
{
	(void)p;
	switch (kind) {
	case LLB_EGRESS_DEFAULT:
		return verdict(LLB_APPROXIMATED,
			       "no network at all: a bundle runs no egress proxy (a network "
			       "namespace with loopback only); --target=kubernetes runs one");
	case LLB_EGRESS_TRANSPARENT:
	case LLB_EGRESS_RULE:
	case LLB_CREDENTIAL:
	case LLB_CREDENTIAL_PROFILES:
		return verdict(LLB_NOT_ENFORCED, "no egress proxy in a bundle: nothing passes");
	case LLB_PRIVATE_DEST:
		return verdict(LLB_ENFORCED, "no network at all");
	case LLB_GIT_SSH:
		return verdict(LLB_NOT_ENFORCED, "needs omnibox-run's broker");
	case LLB_NETWORK_OFF:
		return verdict(LLB_ENFORCED, "a network namespace with no interface but loopback");
	case LLB_NETWORK_ON:
		return verdict(LLB_ENFORCED, "the host's network, unfiltered");
	default:
		return verdict(LLB_NOT_ENFORCED, "unknown setting");
	}
}

static struct llb_verdict
k8s_network(const struct policy *p, enum llb_kind kind, size_t index)
{
	const struct sandbox *sb = &p->os_env.sandbox;

	switch (kind) {
	case LLB_EGRESS_DEFAULT:
		return verdict(LLB_ENFORCED,
			       "NetworkPolicies: the agent's pod reaches the egress proxy's Service "
			       "and the cluster's DNS only (where the network plugin enforces them)");
	case LLB_EGRESS_TRANSPARENT:
		return verdict(LLB_APPROXIMATED, "no resolver of the pod's own: clients that ignore "
						 "HTTPS_PROXY are refused by the NetworkPolicy");
	case LLB_EGRESS_RULE:
		if (index < sb->n_egress && sb->egress[index].tcp)
			return verdict(LLB_ENFORCED, "the egress proxy's Deployment: host and port (a "
						     "CONNECT), then a plain tunnel, uninspected");
		return verdict(LLB_ENFORCED, "the egress proxy's Deployment: method, host, port "
					     "and path (the query is not matched)");
	case LLB_PRIVATE_DEST:
		return verdict(LLB_ENFORCED,
			       sb->egress_allow_private.value
				   ? "allowed (egress_allow_private_destinations)"
				   : "the proxy refuses loopback, private, link-local and metadata "
				     "addresses");
	case LLB_CREDENTIAL:
		return verdict(LLB_ENFORCED,
			       "the proxy swaps the placeholder (a Secret both pods read) for the "
			       "secret (a Secret only the proxy reads)");
	case LLB_CREDENTIAL_PROFILES:
		return verdict(LLB_ENFORCED, "the proxy swaps tokens for the profiles' hosts, read "
					     "from its own Secret");
	case LLB_GIT_SSH:
		return verdict(LLB_NOT_ENFORCED, "needs omnibox-run's broker");
	case LLB_NETWORK_OFF:
		return verdict(LLB_ENFORCED, "a NetworkPolicy with no egress but the cluster's DNS "
					     "(where the network plugin enforces it)");
	case LLB_NETWORK_ON:
		return verdict(LLB_ENFORCED, "the pod network, unfiltered");
	default:
		return verdict(LLB_NOT_ENFORCED, "unknown setting");
	}
}

static struct llb_verdict
oci_rest(enum llb_kind kind)
{
	switch (kind) {
	case LLB_BACKEND:
		return verdict(LLB_ENFORCED,
			       "the OCI runtime: namespaces, mounts over a read-only root "
			       "filesystem, seccomp, no capabilities, no_new_privs (no Landlock "
			       "layer: omnibox-init is not in the bundle)");
	case LLB_ENVIRONMENT:
		return verdict(LLB_ENFORCED, "process.env, rebuilt from the allow-list by "
					     "--resolve; never inherited whole");
	case LLB_LIMIT_MEMORY:
		return verdict(LLB_APPROXIMATED,
			       "RLIMIT_DATA (private writable memory), and "
			       "linux.resources.memory.limit where the runtime makes a cgroup "
			       "(not rootless)");
	case LLB_LIMIT_PROCESSES:
		return verdict(LLB_APPROXIMATED,
			       "linux.resources.pids.limit; rootless (no cgroup), RLIMIT_NPROC: "
			       "every process of the user");
	case LLB_LIMIT_CPU_TIME:
		return verdict(LLB_ENFORCED, "RLIMIT_CPU");
	case LLB_LIMIT_CPU_RATE:
		return verdict(LLB_APPROXIMATED, "linux.resources.cpu quota and period; rootless (no "
						 "cgroup), not enforced");
	case LLB_LIMIT_OPEN_FILES:
		return verdict(LLB_ENFORCED, "RLIMIT_NOFILE");
	case LLB_START_IN_SCRATCH:
		return verdict(LLB_ENFORCED, "the command starts in /tmp, a tmpfs of its own");
	default:
		return verdict(LLB_NOT_ENFORCED, "not built: omnibox-run refuses to launch");
	}
}

static struct llb_verdict
k8s_rest(enum llb_kind kind)
{
	switch (kind) {
	case LLB_BACKEND:
		return verdict(LLB_ENFORCED,
			       "the pod's restricted securityContext: non-root, no privilege "
			       "escalation, read-only root filesystem, every capability dropped, "
			       "the seccomp profile (Localhost); the image's own files elsewhere");
	case LLB_ENVIRONMENT:
		return verdict(LLB_APPROXIMATED, "only what the pod spec sets; names passed from "
						 "a launching environment have none in a pod, and "
						 "the image's own ENV is added by the runtime");
	case LLB_LIMIT_MEMORY:
		return verdict(LLB_ENFORCED, "resources.limits.memory");
	case LLB_LIMIT_PROCESSES:
		return verdict(LLB_NOT_ENFORCED, "a pod spec has no process limit (the kubelet's "
						 "podPidsLimit is the node's)");
	case LLB_LIMIT_CPU_TIME:
		return verdict(LLB_NOT_ENFORCED, "a pod spec has no CPU time limit");
	case LLB_LIMIT_CPU_RATE:
		return verdict(LLB_ENFORCED, "resources.limits.cpu");
	case LLB_LIMIT_OPEN_FILES:
		return verdict(LLB_NOT_ENFORCED, "a pod spec has no open file limit");
	case LLB_START_IN_SCRATCH:
		return verdict(LLB_ENFORCED, "workingDir is /tmp, an emptyDir of its own");
	default:
		return verdict(LLB_NOT_ENFORCED, "not built: omnibox-run refuses to launch");
	}
}

struct llb_verdict
container_setting(const struct policy *p, enum container_form f, enum llb_kind kind, size_t index)
{
	bool oci = f == CONTAINER_OCI;

	switch (kind) {
	case LLB_WORKSPACE:
	case LLB_HOME:
	case LLB_WRITE_PATH:
	case LLB_COW_PATH:
	case LLB_READ_PATH:
	case LLB_WRITE_FILE:
	case LLB_MASK_PATH:
	case LLB_DOTFILES:
	case LLB_PROTECTED:
	case LLB_UNPROTECT:
	case LLB_DENY_SOCKET:
		return oci ? oci_files(p, kind) : k8s_files(p, kind);
	case LLB_EGRESS_DEFAULT:
	case LLB_EGRESS_TRANSPARENT:
	case LLB_EGRESS_RULE:
	case LLB_PRIVATE_DEST:
	case LLB_CREDENTIAL:
	case LLB_CREDENTIAL_PROFILES:
	case LLB_GIT_SSH:
	case LLB_NETWORK_OFF:
	case LLB_NETWORK_ON:
		return oci ? oci_network(p, kind) : k8s_network(p, kind, index);
	default:
		return oci ? oci_rest(kind) : k8s_rest(kind);
	}
}

static struct llb_verdict
walk_verdict(const struct policy *p, enum llb_kind kind, size_t index, const void *ctx)
{
	return container_setting(p, *(const enum container_form *)ctx, kind, index);
}

size_t
container_settings(const struct policy *p, enum container_form f, llb_each_fn *each, void *arg)
{
	return llb_settings_walk(p, false, walk_verdict, &f, each, arg);
}

const char *
container_refuse(const struct policy *p, enum container_form f, struct loc *loc)
{
	const struct sandbox *sb = &p->os_env.sandbox;

	if (sb->type == SANDBOX_NONE) {
		*loc = sb->type_loc;
		return f == CONTAINER_OCI
			   ? "sandbox type none has no OCI form: a bundle is always confined"
			   : "sandbox type none has no Kubernetes form: a pod is always confined";
	}
	if (sb->n_git_ssh) {
		*loc = sb->git_ssh_loc;
		return "git_ssh needs omnibox-run: its broker holds the key outside the sandbox, "
		       "and a container has no broker";
	}
	if (sb->cow_paths.n) {
		*loc = sb->cow_paths.v[0].loc;
		return "write_paths: copy_on_write needs omnibox-run: the private copy is made "
		       "and written back at each launch";
	}
	return NULL;
}

bool
container_network_private(const struct policy *p)
{
	const struct sandbox *sb = &p->os_env.sandbox;

	return sb->n_egress || !sb->allow_network.value;
}

bool
container_kubernetes_proxy(const struct policy *p)
{
	return p->os_env.sandbox.n_egress > 0;
}
