/*
 * secrets.c - what the sandbox can see; the host files credentials come from (secrets.h).
 */
#include "secrets.h"

#include "hidden.h"

#include <string.h>

/*
 * The root the dotfile scan reaches PATH from (the workspace, or the
 * deepest granted directory outside it, or a copy), or NULL; *OPTED: a
 * grant below that root names a hidden path that holds PATH.
 */
static const char *
scan_root(const struct sandbox *sb, const char *ws, const char *path, bool *opted)
{
	const struct ir_pathlist *lists[] = {&sb->read_paths, &sb->write_paths, &sb->cow_paths};
	const char *root = ir_within(path, ws) ? ws : NULL;

	*opted = false;
	for (size_t k = 0; k < 3; k++)
		for (size_t i = 0; i < lists[k]->n; i++) {
			const char *g = lists[k]->v[i].symbolic;

			if (ir_within(path, g) && (k == 2 || !ir_within(g, ws)) &&
			    (!root || strlen(g) > strlen(root)))
				root = g;
		}
	if (!root)
		return NULL;
	for (size_t k = 0; k < 3; k++)
		for (size_t i = 0; i < lists[k]->n; i++)
			if (ir_within(path, lists[k]->v[i].symbolic) &&
			    strlen(lists[k]->v[i].symbolic) > strlen(root) &&
			    hidden_component(lists[k]->v[i].symbolic + strlen(root)))
				*opted = true;
	for (size_t i = 0; i < sb->write_files.n; i++)
		if (!strcmp(path, sb->write_files.v[i].symbolic))
			*opted = true;
	return root;
}

const char *
sandbox_hidden_dotfile(struct arena *a, const struct sandbox *sb, const char *ws, const char *path)
{
	bool opted;
	const char *root = scan_root(sb, ws, path, &opted);
	size_t n;

	if (!root || opted)
		return NULL;
	n = hidden_prefix(sb, path + strlen(root));
	return n ? arena_strndup(a, path, strlen(root) + n) : NULL;
}

bool
sandbox_exposes(struct arena *a, const struct sandbox *sb, const char *ws, const char *path,
		struct exposure *e)
{
	const struct ir_pathlist *lists[] = {&sb->write_paths, &sb->read_paths, &sb->write_files,
					     &sb->cow_paths};
	const char *from, *hidden;
	bool opted;

	memset(e, 0, sizeof(*e));
	for (size_t i = 0; i < sb->mask_paths.n; i++)
		if (ir_within(path, sb->mask_paths.v[i].symbolic))
			return false;
	for (size_t k = 0; k < sizeof(lists) / sizeof(lists[0]); k++)
		for (size_t i = 0; i < lists[k]->n; i++)
			if (ir_within(path, lists[k]->v[i].symbolic) &&
			    (!e->grant ||
			     strlen(lists[k]->v[i].symbolic) > strlen(e->grant->symbolic)))
				e->grant = &lists[k]->v[i];
	if (!e->grant && !ir_within(path, ws))
		return false;
	hidden = sandbox_hidden_dotfile(a, sb, ws, path);
	/*
	 * Below a hidden directory it is out of reach.  Hidden itself, it is
	 * behind a mount on that one file: a file the host replaces by rename
	 * (rotated tokens, re-written configurations) comes out from under it
	 * in the running sandbox, so that is no protection for a secret.
	 */
	if (hidden && strcmp(hidden, path))
		return false;
	if (hidden) {
		e->dotfile = hidden;
		e->file_mask = true;
		return true;
	}
	/* For the message: the first dotfile below where the sandbox's view begins. */
	from = scan_root(sb, ws, path, &opted);
	if (!from || (e->grant && strlen(e->grant->symbolic) > strlen(from)))
		from = e->grant ? e->grant->symbolic : ws;
	for (const char *p = path + strlen(from); *p == '/';) {
		const char *seg = p + 1;
		size_t len = strcspn(seg, "/");

		if (len && seg[0] == '.') {
			e->dotfile = arena_strndup(a, path, (size_t)(seg + len - path));
			e->allowed = !hidden_name(sb, seg, len);
			break;
		}
		p = seg + len;
	}
	return true;
}

size_t
cred_sources(const struct credential *cr, struct cred_source out[CRED_SOURCES_MAX])
{
	const struct cred_source *aws[] = {&cr->aws_key_id, &cr->aws_secret, &cr->aws_token};
	size_t n = 0;

	if (cr->type == CRED_AWS_SIGV4) {
		for (size_t i = 0; i < 3; i++)
			if (aws[i]->kind != CRED_SOURCE_NONE)
				out[n++] = *aws[i];
	} else if (cr->source_kind != CRED_SOURCE_NONE) {
		out[n++] = (struct cred_source){cr->source_kind, cr->source};
	}
	return n;
}

/* S as an IR path: "~" or "~/..." below the home, "/..." absolute, else below the launch dir. */
static struct ir_path
host_path(struct arena *a, const char *s, struct loc loc)
{
	struct ir_path p = {.written = s, .loc = loc};

	if (s[0] == '/') {
		p.base = PATH_ABSOLUTE;
		p.rel = s + 1;
		p.symbolic = s;
	} else if (s[0] == '~' && (s[1] == '/' || s[1] == '\0')) {
		p.base = PATH_HOME;
		p.rel = s + (s[1] ? 2 : 1);
		p.symbolic = *p.rel ? arena_printf(a, "{HOME}/%s", p.rel) : "{HOME}";
	} else {
		p.base = PATH_LAUNCH;
		p.rel = s;
		p.symbolic = arena_printf(a, "{LAUNCH}/%s", s);
	}
	return p;
}

size_t
cred_host_files(struct arena *a, const struct credential *cr, const char *databricks_config,
		struct cred_host_file out[CRED_HOST_FILES_MAX])
{
	struct cred_source src[CRED_SOURCES_MAX];
	size_t n = 0, n_src = cred_sources(cr, src);

	if (cr->type == CRED_DATABRICKS_CLI) {
		const char *s = databricks_config && *databricks_config
				    ? databricks_config
				    : "~/" CRED_DATABRICKS_CONFIG;

		out[n++] = (struct cred_host_file){host_path(a, s, cr->loc),
						   "databricks_cli configuration", false};
		return n;
	}
	if (cr->type == CRED_AWS_SIGV4 && cr->aws_profile.s) {
		out[n++] = (struct cred_host_file){
		    host_path(a, "~/" CRED_AWS_CREDENTIALS, cr->aws_profile.loc),
		    "aws_sigv4 shared credentials file", false};
		return n;
	}
	for (size_t i = 0; i < n_src; i++)
		if (src[i].kind == CRED_SOURCE_FILE || src[i].kind == CRED_SOURCE_UNIX_SOCKET)
			out[n++] = (struct cred_host_file){
			    host_path(a, src[i].value.s, src[i].value.loc),
			    src[i].kind == CRED_SOURCE_FILE ? "credential file"
							    : "credential socket",
			    src[i].kind == CRED_SOURCE_UNIX_SOCKET};
	return n;
}

bool
cred_header_reserved(const char *name)
{
	static const char *const reserved[] = {
	    "authorization",
	    "proxy-authorization",
	    "host",
	    "content-length",
	    "transfer-encoding",
	    "connection",
	    "keep-alive",
	    "proxy-connection",
	    "te",
	    "trailer",
	    "upgrade",
	    "expect",
	    "max-forwards",
	    "x-http-method-override",
	    "x-http-method",
	    "x-method-override",
	    "accept-encoding",
	    "cookie",
	    NULL,
	};

	for (size_t i = 0; reserved[i]; i++)
		if (!strcmp(name, reserved[i]))
			return true;
	return false;
}
