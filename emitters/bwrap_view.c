/*
 * bwrap_view.c - what an argument vector's mounts show at a path (bwrap.h).
 */
#include "bwrap.h"

#include <stdlib.h>
#include <string.h>

void
bwrap_view_at(const struct bwrap_mounts *m, const char *path, struct bwrap_view *v)
{
	/* Which mounts are still in view, and which were remounted read-only. */
	bool *live = calloc(m->n + 1, sizeof(*live)), *ro = calloc(m->n + 1, sizeof(*ro));
	/* Still in view but for pins: what a pin repeats. */
	bool *kept = calloc(m->n + 1, sizeof(*kept));
	size_t best = m->n;

	memset(v, 0, sizeof(*v));
	if (!live || !ro || !kept)
		abort();
	for (size_t i = 0; i < m->n; i++) {
		const struct bwrap_mount *e = &m->v[i];

		switch (e->op) {
		case BWRAP_FS_WRITE:
			if (path_within(path, e->dest))
				v->landlock_write = true;
			continue;
		case BWRAP_SYMLINK: /* on the root tmpfs; paths asked about are canonical */
			continue;
		case BWRAP_REMOUNT_RO:
			for (size_t k = i; k-- > 0;)
				if (live[k] && !strcmp(m->v[k].dest, e->dest)) {
					ro[k] = true;
					break;
				}
			continue;
		default:
			/* A new mount covers what was mounted at and below its path. */
			for (size_t k = 0; k < i; k++)
				if (path_within(m->v[k].dest, e->dest)) {
					live[k] = false;
					if (!e->pin)
						kept[k] = false;
				}
			live[i] = kept[i] = true;
			ro[i] = e->op == BWRAP_RO_BIND || e->op == BWRAP_DEVNULL;
		}
	}
	for (size_t i = 0; i < m->n; i++)
		if (live[i] && path_within(path, m->v[i].dest) &&
		    (best == m->n || strlen(m->v[i].dest) > strlen(m->v[best].dest)))
			best = i;
	/* Not shown by any mount, but on the way to one: bwrap made it. */
	for (size_t i = 0; best == m->n && i < m->n; i++)
		if (live[i] && m->v[i].op != BWRAP_FS_WRITE && m->v[i].op != BWRAP_REMOUNT_RO &&
		    path_within(m->v[i].dest, path))
			v->on_the_way = m->v[i].dest;
	if (best < m->n) {
		const struct bwrap_mount *e = &m->v[best];

		v->mount = e;
		v->rule = e;
		/* A pin repeats what was there: the rule is the deepest mount below it
		 * that nothing but pins covers. */
		for (size_t i = 0; e->pin && i < m->n; i++)
			if (kept[i] && !m->v[i].pin && path_within(path, m->v[i].dest) &&
			    (v->rule->pin || strlen(m->v[i].dest) > strlen(v->rule->dest)))
				v->rule = &m->v[i];
		v->read_only = ro[best];
		v->hidden =
		    e->op == BWRAP_DEVNULL || (e->op == BWRAP_TMPFS && strcmp(path, e->dest) != 0);
	}
	free(live);
	free(ro);
	free(kept);
}

bool
bwrap_view_made_dir(const struct bwrap_mounts *m, const char *dir)
{
	for (size_t i = 0; i < m->n; i++) {
		const struct bwrap_mount *e = &m->v[i];

		if (e->op == BWRAP_FS_WRITE || e->op == BWRAP_REMOUNT_RO)
			continue;
		if (path_within(e->dest, dir) && strcmp(e->dest, dir))
			return true;
	}
	return false;
}
