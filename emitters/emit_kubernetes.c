/*
 * emit_kubernetes.c - Kubernetes objects for a policy (--target=kubernetes).
 *
 * Deterministic YAML, one document per object:
 *
 *   - the agent's Pod, and a PodTemplate holding the same pod for a Job or a
 *     Deployment: a restricted securityContext (non-root, no privilege
 *     escalation, read-only root filesystem, every capability dropped, the
 *     seccomp profile of --emit=seccomp-oci as a Localhost profile), a
 *     volume for each root the policy writes or reads (emptyDir, named so a
 *     PersistentVolumeClaim can take its place), resources.limits from
 *     limits, and the environment the policy sets;
 *   - a NetworkPolicy for the agent's pod: no ingress; egress to nothing
 *     (network off), to the egress proxy and the cluster's DNS
 *     (egress_rules), or unrestricted (allow_network: true);
 *   - with egress_rules, the egress proxy as its own Deployment and Service
 *     (omnibox-proxy, its rule table in a ConfigMap, its CA, the real
 *     secrets and the placeholders from Secrets the user creates, never
 *     inlined), and its NetworkPolicy: reached by the agent only, reaching
 *     the rules' ports and the DNS only.
 *
 * Paths in the pod: the workspace is /workspace, the home /home/agent.
 * What a pod cannot hold is compiler/decide/container.h's to say
 * (--explain --target=kubernetes).
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/decide/container.h"
#include "compiler/decide/env.h"
#include "compiler/decide/protect.h"
#include "compiler/decide/transparent.h"
#include "compiler/decide/workspace.h"
#include "egress_table.h"
#include "emit.h"

#define POD_WORKSPACE "/workspace"
#define POD_HOME "/home/agent"
#define PROXY_PORT 3128
#define PROXY_DIR "/etc/omnibox"

struct k8s {
	struct textbuf *out;
	struct arena *a;
	const struct policy *p;
	const char *name; /* the objects' base name, from the policy's file name */
};

/* A YAML double-quoted scalar: every string is written this way. */
static void
q(struct textbuf *out, const char *s)
{
	tb_putc(out, '"');
	while (*s) {
		const char *run = s;
		unsigned char c;

		while ((c = (unsigned char)*s) >= 0x20 && c != 0x7f && c != '"' && c != '\\')
			s++;
		if (s > run) {
			tb_write(out, run, (size_t)(s - run));
			continue;
		}
		if (c == '"' || c == '\\')
			tb_printf(out, "\\%c", c);
		else
			tb_printf(out, "\\x%02x", c);
		s++;
	}
	tb_putc(out, '"');
}

static void
indent_by(struct textbuf *out, int indent)
{
	static const char spaces[] = "                                ";

	for (; indent > 0; indent -= (int)sizeof(spaces) - 1)
		tb_write(out, spaces,
			 indent < (int)sizeof(spaces) - 1 ? (size_t)indent : sizeof(spaces) - 1);
}

/* INDENT spaces, then KEY: "VALUE". */
static void
kv(struct k8s *k, int indent, const char *key, const char *value)
{
	indent_by(k->out, indent);
	tb_puts(k->out, key);
	tb_write(k->out, ": ", 2);
	q(k->out, value);
	tb_putc(k->out, '\n');
}

static void
line(struct k8s *k, int indent, const char *text)
{
	indent_by(k->out, indent);
	tb_puts(k->out, text);
	tb_putc(k->out, '\n');
}

/* "agent" for agent.yaml: a DNS-1123 label of the file's base name. */
static const char *
base_name(struct arena *a, const char *source)
{
	char buf[41];
	size_t n = 0;

	for (const char *s = source; *s && *s != '.' && n < sizeof(buf) - 1; s++) {
		char c = (char)tolower((unsigned char)*s);

		if (isalnum((unsigned char)c))
			buf[n++] = c;
		else if (n && buf[n - 1] != '-')
			buf[n++] = '-';
	}
	while (n && buf[n - 1] == '-')
		n--;
	buf[n] = '\0';
	return n ? arena_strdup(a, buf) : "agent";
}

/* A symbolic path of the IR where the pod has it. */
static const char *
pod_path(struct arena *a, const char *symbolic)
{
	if (!strncmp(symbolic, "{CWD}", 5))
		return arena_printf(a, "%s%s", POD_WORKSPACE, symbolic + 5);
	if (!strncmp(symbolic, "{HOME}", 6))
		return arena_printf(a, "%s%s", POD_HOME, symbolic + 6);
	return arena_strdup(a, symbolic);
}

static void
labels(struct k8s *k, int indent, const char *role)
{
	line(k, indent, "labels:");
	kv(k, indent + 2, "app.kubernetes.io/name", k->name);
	kv(k, indent + 2, "app.kubernetes.io/managed-by", "omnibox");
	kv(k, indent + 2, "omnibox.dev/role", role);
}

static void
metadata(struct k8s *k, const char *name, const char *role)
{
	line(k, 0, "metadata:");
	kv(k, 2, "name", name);
	labels(k, 2, role);
	line(k, 2, "annotations:");
	kv(k, 4, "omnibox.dev/policy", k->p->source);
}

/* ---- the agent's pod -------------------------------------------------------------- */

struct vol {
	const char *name, *path;
	bool read_only;
	const char *secret; /* a Secret's item, by subPath: the CA certificate */
};

struct vols {
	struct vol *v;
	size_t n, cap;
};

static bool
mounted_at(const struct vols *vs, const char *path)
{
	for (size_t i = 0; i < vs->n; i++)
		if (!strcmp(vs->v[i].path, path))
			return true;
	return false;
}

static void
vol_add(struct k8s *k, struct vols *vs, const char *name, const char *path, bool ro)
{
	struct vol *v;

	if (mounted_at(vs, path))
		return;
	v = ARENA_PUSH(k->a, vs->v, vs->n, vs->cap);
	*v = (struct vol){name, path, ro, NULL};
}

static void
protect_vol(void *arg, const struct protect_entry *e)
{
	struct k8s *k = ((void **)arg)[0];
	struct vols *vs = ((void **)arg)[1];

	/* A volume is a directory: the protected directories only (container.h). */
	if (e->dir)
		vol_add(k, vs, arena_printf(k->a, "protect-%zu", vs->n), pod_path(k->a, e->path),
			true);
}

static void
pathlist_vols(struct k8s *k, struct vols *vs, const struct ir_pathlist *l, const char *kind,
	      bool ro)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].rel[0] || l->v[i].base == PATH_HOME)
			vol_add(k, vs, arena_printf(k->a, "%s-%zu", kind, i + 1),
				pod_path(k->a, l->v[i].symbolic), ro);
}

/* Every volume of the agent's pod, in mount order. */
static void
agent_vols(struct k8s *k, struct vols *vs)
{
	const struct sandbox *sb = &k->p->os_env.sandbox;
	const char *roots[256];
	size_t n_roots = protect_symbolic_roots(sb, roots, 256);
	void *arg[2] = {k, vs};

	vol_add(k, vs, "tmp", "/tmp", false);
	vol_add(k, vs, "home", POD_HOME, false);
	vol_add(k, vs, "workspace", POD_WORKSPACE, !workspace_writable(sb));
	pathlist_vols(k, vs, &sb->write_paths, "write", false);
	pathlist_vols(k, vs, &sb->read_paths, "read", true);
	for (size_t i = 0; i < sb->write_files.n; i++) {
		char *dir = arena_strdup(k->a, pod_path(k->a, sb->write_files.v[i].symbolic));

		*strrchr(dir, '/') = '\0';
		if (dir[0])
			vol_add(k, vs, arena_printf(k->a, "file-%zu", i + 1), dir, false);
	}
	pathlist_vols(k, vs, &sb->mask_paths, "mask", true);
	protect_each(sb, roots, n_roots, "{HOME}", protect_vol, arg);
	if (container_kubernetes_proxy(k->p)) {
		struct vol *v = ARENA_PUSH(k->a, vs->v, vs->n, vs->cap);

		*v = (struct vol){"egress-ca", "/tmp/" ENV_CA_BUNDLE, true, ENV_CA_BUNDLE};
	}
}

static void
security_context(struct k8s *k, int indent, bool pod)
{
	line(k, indent, "securityContext:");
	line(k, indent + 2, "runAsNonRoot: true");
	line(k, indent + 2, "runAsUser: 65532");
	line(k, indent + 2, "runAsGroup: 65532");
	if (pod) {
		line(k, indent + 2, "fsGroup: 65532");
	} else {
		line(k, indent + 2, "allowPrivilegeEscalation: false");
		line(k, indent + 2, "privileged: false");
		line(k, indent + 2, "readOnlyRootFilesystem: true");
		line(k, indent + 2, "capabilities:");
		line(k, indent + 4, "drop:");
		line(k, indent + 4, "- \"ALL\"");
	}
	line(k, indent + 2, "seccompProfile:");
	kv(k, indent + 4, "type", "Localhost");
	kv(k, indent + 4, "localhostProfile", arena_printf(k->a, "omnibox/%s.json", k->name));
}

static void
agent_env(struct k8s *k, int indent)
{
	const struct sandbox *sb = &k->p->os_env.sandbox;
	const char *start = k->p->os_env.start_in_scratch.value ? "/tmp" : POD_WORKSPACE;
	struct env_launch l = {.pwd = start};
	struct env_rules rules;
	char *none[] = {NULL};
	char **env;

	if (container_kubernetes_proxy(k->p))
		l.proxy_url = arena_printf(k->a, "http://%s-egress-proxy:%d", k->name, PROXY_PORT);
	env_decide(k->a, k->p, &l, &rules);
	env = env_apply(k->a, rules.v, rules.n, false, none, "/tmp");
	line(k, indent, "env:");
	line(k, indent, "- name: \"HOME\"");
	kv(k, indent + 2, "value", POD_HOME);
	for (size_t i = 0; env[i]; i++) {
		char *eq = strchr(env[i], '=');

		*eq = '\0';
		/* What names files a pod does not have: the hashed CA directory, the
		 * Java trust store (Java gets no proxy setting: it is refused). */
		if (!strcmp(env[i], "HOME") || !strcmp(env[i], "SSL_CERT_DIR") ||
		    !strcmp(env[i], "JAVA_TOOL_OPTIONS"))
			continue;
		tb_printf(k->out, "%*s- name: ", indent, "");
		q(k->out, env[i]);
		tb_putc(k->out, '\n');
		kv(k, indent + 2, "value", eq + 1);
	}
	/* The placeholders: a Secret both pods read (omnibox-proxy --print-placeholders). */
	for (size_t i = 0; i < sb->n_creds; i++)
		for (size_t e = 0; e < sb->creds[i].env.n; e++) {
			tb_printf(k->out, "%*s- name: ", indent, "");
			q(k->out, sb->creds[i].env.v[e].s);
			tb_putc(k->out, '\n');
			line(k, indent + 2, "valueFrom:");
			line(k, indent + 4, "secretKeyRef:");
			kv(k, indent + 6, "name", arena_printf(k->a, "%s-egress-placeholders", k->name));
			kv(k, indent + 6, "key", sb->creds[i].env.v[e].s);
		}
}

static void
resources(struct k8s *k, int indent)
{
	const struct limits *l = &k->p->os_env.sandbox.limits;

	if (!l->memory.present && !l->cpu_rate.present)
		return;
	line(k, indent, "resources:");
	line(k, indent + 2, "limits:");
	if (l->cpu_rate.present)
		kv(k, indent + 4, "cpu",
		   arena_printf(k->a, "%llum", (unsigned long long)l->cpu_rate.value * 10));
	if (l->memory.present)
		kv(k, indent + 4, "memory",
		   arena_printf(k->a, "%llu", (unsigned long long)l->memory.value));
}

static void
agent_container(struct k8s *k, int indent, const struct vols *vs)
{
	const struct terminal *t = k->p->terminal;

	line(k, indent, "containers:");
	kv(k, indent, "- name", "agent");
	indent += 2;
	kv(k, indent, "image", "{IMAGE}");
	if (t) {
		line(k, indent, "command:");
		tb_printf(k->out, "%*s- ", indent, "");
		q(k->out, t->command.s);
		tb_putc(k->out, '\n');
		for (size_t i = 0; i < t->args.n; i++) {
			tb_printf(k->out, "%*s- ", indent, "");
			q(k->out, t->args.v[i].s);
			tb_putc(k->out, '\n');
		}
	}
	kv(k, indent, "workingDir",
	   k->p->os_env.start_in_scratch.value ? "/tmp" : POD_WORKSPACE);
	agent_env(k, indent);
	security_context(k, indent, false);
	resources(k, indent);
	line(k, indent, "volumeMounts:");
	for (size_t i = 0; i < vs->n; i++) {
		kv(k, indent, "- name", vs->v[i].name);
		kv(k, indent + 2, "mountPath", vs->v[i].path);
		if (vs->v[i].secret)
			kv(k, indent + 2, "subPath", vs->v[i].secret);
		if (vs->v[i].read_only)
			line(k, indent + 2, "readOnly: true");
	}
}

/* The pod's spec, at INDENT. */
static void
agent_spec(struct k8s *k, int indent)
{
	struct vols vs = {0};

	agent_vols(k, &vs);
	line(k, indent, "restartPolicy: \"Never\"");
	line(k, indent, "automountServiceAccountToken: false");
	line(k, indent, "enableServiceLinks: false");
	line(k, indent, "hostNetwork: false");
	line(k, indent, "hostPID: false");
	line(k, indent, "hostIPC: false");
	security_context(k, indent, true);
	agent_container(k, indent, &vs);
	line(k, indent, "volumes:");
	for (size_t i = 0; i < vs.n; i++) {
		kv(k, indent, "- name", vs.v[i].name);
		if (vs.v[i].secret) {
			line(k, indent + 2, "secret:");
			kv(k, indent + 4, "secretName", arena_printf(k->a, "%s-egress-ca", k->name));
			line(k, indent + 4, "items:");
			kv(k, indent + 4, "- key", "tls.crt");
			kv(k, indent + 6, "path", vs.v[i].secret);
		} else {
			line(k, indent + 2, "emptyDir: {}");
		}
	}
}

static void
agent_pod(struct k8s *k)
{
	line(k, 0, "# the agent (--explain --target=kubernetes says what each setting becomes);");
	line(k, 0, "# {IMAGE}: the agent's image; each emptyDir may be replaced by a "
		   "PersistentVolumeClaim");
	line(k, 0, "apiVersion: \"v1\"");
	line(k, 0, "kind: \"Pod\"");
	metadata(k, k->name, "agent");
	line(k, 0, "spec:");
	agent_spec(k, 2);
	line(k, 0, "---");
	line(k, 0, "# the same pod, as a template for a Job or a Deployment");
	line(k, 0, "apiVersion: \"v1\"");
	line(k, 0, "kind: \"PodTemplate\"");
	metadata(k, arena_printf(k->a, "%s-template", k->name), "agent");
	line(k, 0, "template:");
	line(k, 2, "metadata:");
	labels(k, 4, "agent");
	line(k, 2, "spec:");
	agent_spec(k, 4);
}

/* ---- network ---------------------------------------------------------------------- */

/* KEY with matchLabels below it; KEY may open a list item ("- podSelector:"). */
static void
selector(struct k8s *k, int indent, const char *key, const char *role)
{
	int in = indent + (key[0] == '-' ? 4 : 2);

	line(k, indent, key);
	line(k, in, "matchLabels:");
	kv(k, in + 2, "app.kubernetes.io/name", k->name);
	kv(k, in + 2, "omnibox.dev/role", role);
}

/* Egress to the cluster's DNS (kube-system's kube-dns), UDP and TCP 53. */
static void
dns_rule(struct k8s *k, int indent)
{
	line(k, indent, "- to:");
	line(k, indent + 2, "- namespaceSelector:");
	line(k, indent + 6, "matchLabels:");
	kv(k, indent + 8, "kubernetes.io/metadata.name", "kube-system");
	line(k, indent + 4, "podSelector:");
	line(k, indent + 6, "matchLabels:");
	kv(k, indent + 8, "k8s-app", "kube-dns");
	line(k, indent + 2, "ports:");
	line(k, indent + 2, "- protocol: \"UDP\"");
	line(k, indent + 4, "port: 53");
	line(k, indent + 2, "- protocol: \"TCP\"");
	line(k, indent + 4, "port: 53");
}

static void
agent_network_policy(struct k8s *k)
{
	const struct sandbox *sb = &k->p->os_env.sandbox;

	line(k, 0, "---");
	if (container_kubernetes_proxy(k->p))
		line(k, 0, "# egress_rules: the agent reaches the egress proxy and the DNS only");
	else if (!sb->allow_network.value)
		line(k, 0, "# allow_network: false: no ingress, no egress");
	else
		line(k, 0, "# allow_network: true: no ingress; egress unrestricted");
	line(k, 0, "apiVersion: \"networking.k8s.io/v1\"");
	line(k, 0, "kind: \"NetworkPolicy\"");
	metadata(k, arena_printf(k->a, "%s-agent", k->name), "agent");
	line(k, 0, "spec:");
	selector(k, 2, "podSelector:", "agent");
	line(k, 2, "policyTypes:");
	line(k, 2, "- \"Ingress\"");
	if (!container_network_private(k->p)) {
		line(k, 2, "ingress: []");
		return;
	}
	line(k, 2, "- \"Egress\"");
	line(k, 2, "ingress: []");
	if (!container_kubernetes_proxy(k->p)) {
		line(k, 2, "egress: []");
		return;
	}
	line(k, 2, "egress:");
	line(k, 2, "- to:");
	selector(k, 4, "- podSelector:", "egress-proxy");
	line(k, 4, "ports:");
	line(k, 4, "- protocol: \"TCP\"");
	tb_printf(k->out, "      port: %d\n", PROXY_PORT);
	dns_rule(k, 2);
}

/* ---- the egress proxy ------------------------------------------------------------- */

static void
proxy_container(struct k8s *k, int indent)
{
	static const char *const args[] = {
	    "--table",	 PROXY_DIR "/table/egress.table", "--listen", "0.0.0.0:3128", "--ca-cert",
	    PROXY_DIR "/ca/tls.crt", "--ca-key", PROXY_DIR "/ca/tls.key", "--placeholders",
	    PROXY_DIR "/placeholders", NULL};
	const struct sandbox *sb = &k->p->os_env.sandbox;

	line(k, indent, "containers:");
	kv(k, indent, "- name", "omnibox-proxy");
	indent += 2;
	kv(k, indent, "image", "{PROXY_IMAGE}");
	line(k, indent, "command:");
	line(k, indent, "- \"omnibox-proxy\"");
	for (size_t i = 0; args[i]; i++) {
		tb_printf(k->out, "%*s- ", indent, "");
		q(k->out, args[i]);
		tb_putc(k->out, '\n');
	}
	line(k, indent, "ports:");
	line(k, indent, "- name: \"proxy\"");
	tb_printf(k->out, "%*scontainerPort: %d\n", indent + 2, "", PROXY_PORT);
	kv(k, indent + 2, "protocol", "TCP");
	line(k, indent, "readinessProbe:");
	line(k, indent + 2, "tcpSocket:");
	tb_printf(k->out, "%*sport: %d\n", indent + 4, "", PROXY_PORT);
	/* The real secrets named by environment: from a Secret only this pod reads. */
	line(k, indent, "env:");
	for (size_t i = 0; i < sb->n_creds; i++) {
		const struct credential *cr = &sb->creds[i];

		if (cr->source_kind != CRED_SOURCE_ENV)
			continue;
		tb_printf(k->out, "%*s- name: ", indent, "");
		q(k->out, cr->source.s);
		tb_putc(k->out, '\n');
		line(k, indent + 2, "valueFrom:");
		line(k, indent + 4, "secretKeyRef:");
		kv(k, indent + 6, "name", arena_printf(k->a, "%s-egress-credentials", k->name));
		kv(k, indent + 6, "key", cr->source.s);
	}
	security_context(k, indent, false);
	line(k, indent, "volumeMounts:");
	kv(k, indent, "- name", "table");
	kv(k, indent + 2, "mountPath", PROXY_DIR "/table");
	line(k, indent + 2, "readOnly: true");
	kv(k, indent, "- name", "ca");
	kv(k, indent + 2, "mountPath", PROXY_DIR "/ca");
	line(k, indent + 2, "readOnly: true");
	kv(k, indent, "- name", "placeholders");
	kv(k, indent + 2, "mountPath", PROXY_DIR "/placeholders");
	line(k, indent + 2, "readOnly: true");
}

static void
proxy_deployment(struct k8s *k)
{
	line(k, 0, "---");
	line(k, 0, "# the egress proxy: {PROXY_IMAGE} holds omnibox-proxy; the Secrets are the "
		   "user's to create:");
	tb_printf(k->out, "#   %s-egress-ca (kubernetes.io/tls): the CA the proxy signs with\n",
		  k->name);
	tb_printf(k->out, "#   %s-egress-placeholders: from `omnibox-proxy --table FILE "
			  "--print-placeholders`\n",
		  k->name);
	tb_printf(k->out, "#   %s-egress-credentials: the real secrets, by the names the "
			  "policy reads\n",
		  k->name);
	line(k, 0, "apiVersion: \"apps/v1\"");
	line(k, 0, "kind: \"Deployment\"");
	metadata(k, arena_printf(k->a, "%s-egress-proxy", k->name), "egress-proxy");
	line(k, 0, "spec:");
	line(k, 2, "replicas: 1");
	selector(k, 2, "selector:", "egress-proxy");
	line(k, 2, "template:");
	line(k, 4, "metadata:");
	labels(k, 6, "egress-proxy");
	line(k, 4, "spec:");
	line(k, 6, "automountServiceAccountToken: false");
	line(k, 6, "enableServiceLinks: false");
	security_context(k, 6, true);
	proxy_container(k, 6);
	line(k, 6, "volumes:");
	kv(k, 6, "- name", "table");
	line(k, 8, "configMap:");
	kv(k, 10, "name", arena_printf(k->a, "%s-egress-table", k->name));
	kv(k, 6, "- name", "ca");
	line(k, 8, "secret:");
	kv(k, 10, "secretName", arena_printf(k->a, "%s-egress-ca", k->name));
	kv(k, 6, "- name", "placeholders");
	line(k, 8, "secret:");
	kv(k, 10, "secretName", arena_printf(k->a, "%s-egress-placeholders", k->name));
	line(k, 10, "optional: true");
}

static void
proxy_service(struct k8s *k)
{
	line(k, 0, "---");
	line(k, 0, "apiVersion: \"v1\"");
	line(k, 0, "kind: \"Service\"");
	metadata(k, arena_printf(k->a, "%s-egress-proxy", k->name), "egress-proxy");
	line(k, 0, "spec:");
	line(k, 2, "selector:");
	kv(k, 4, "app.kubernetes.io/name", k->name);
	kv(k, 4, "omnibox.dev/role", "egress-proxy");
	line(k, 2, "ports:");
	line(k, 2, "- name: \"proxy\"");
	kv(k, 4, "protocol", "TCP");
	tb_printf(k->out, "    port: %d\n    targetPort: %d\n", PROXY_PORT, PROXY_PORT);
}

/* The proxy: reached by the agent only; reaching the DNS and the rules' ports. */
static void
proxy_network_policy(struct k8s *k)
{
	const struct sandbox *sb = &k->p->os_env.sandbox;
	unsigned ports[TRANSPARENT_MAX_PORTS];
	int n = transparent_ports(sb->egress, sb->n_egress, ports, NULL);

	line(k, 0, "---");
	line(k, 0, "# the egress proxy: reached by the agent only; it reaches the DNS and the "
		   "rules' ports (it refuses private addresses itself)");
	line(k, 0, "apiVersion: \"networking.k8s.io/v1\"");
	line(k, 0, "kind: \"NetworkPolicy\"");
	metadata(k, arena_printf(k->a, "%s-egress-proxy", k->name), "egress-proxy");
	line(k, 0, "spec:");
	selector(k, 2, "podSelector:", "egress-proxy");
	line(k, 2, "policyTypes:");
	line(k, 2, "- \"Ingress\"");
	line(k, 2, "- \"Egress\"");
	line(k, 2, "ingress:");
	line(k, 2, "- from:");
	selector(k, 4, "- podSelector:", "agent");
	line(k, 4, "ports:");
	line(k, 4, "- protocol: \"TCP\"");
	tb_printf(k->out, "      port: %d\n", PROXY_PORT);
	line(k, 2, "egress:");
	dns_rule(k, 2);
	line(k, 2, "- ports:");
	for (int i = 0; i < n; i++) {
		line(k, 4, "- protocol: \"TCP\"");
		tb_printf(k->out, "      port: %u\n", ports[i]);
	}
}

static int
proxy_table(struct k8s *k, struct diag *d)
{
	struct textbuf table = {0};
	const char *s, *e;

	if (emit_egress_table(k->p, TARGET_KUBERNETES, d, &table) < 0) {
		tb_free(&table);
		return -1;
	}
	line(k, 0, "---");
	line(k, 0, "# the egress proxy's rule table (--emit=egress-table): no secret in it");
	line(k, 0, "apiVersion: \"v1\"");
	line(k, 0, "kind: \"ConfigMap\"");
	metadata(k, arena_printf(k->a, "%s-egress-table", k->name), "egress-proxy");
	line(k, 0, "data:");
	line(k, 2, "egress.table: |");
	for (s = table.data ? table.data : ""; *s; s = *e ? e + 1 : e) {
		e = strchr(s, '\n');
		if (!e)
			e = s + strlen(s);
		tb_printf(k->out, "    %.*s\n", (int)(e - s), s);
	}
	tb_free(&table);
	return 0;
}

int
emit_kubernetes(const struct policy *p, enum target t, struct diag *d, struct textbuf *out)
{
	struct textbuf body = {0};
	struct k8s k = {&body, arena_new(), p, NULL};
	int rc = 0;

	(void)t;
	if (emit_check_target(p, TARGET_KUBERNETES, d) < 0) {
		arena_free(k.a);
		return -1;
	}
	k.name = base_name(k.a, p->source);
	tb_printf(&body, "# Kubernetes objects for %s (omnibox-compile --target=kubernetes)\n",
		  p->source);
	agent_pod(&k);
	agent_network_policy(&k);
	if (container_kubernetes_proxy(p)) {
		rc = proxy_table(&k, d);
		proxy_deployment(&k);
		proxy_service(&k);
		proxy_network_policy(&k);
	}
	if (rc == 0)
		tb_write(out, body.data, body.len);
	tb_free(&body);
	arena_free(k.a);
	return rc;
}
