/*
 * copyback.c - write_files copied back while the sandbox runs (copyback.h).
 */
#include "runtime/launch/copyback.h"
#include "compiler/base/textesc.h"

#include <errno.h>
#include <event2/event.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

/*
 * Events are gathered for this long before the files they name are copied:
 * an agent closing the file in a loop costs at most a few copies a second.
 */
#define COPYBACK_DELAY_MS 200

struct copyback {
	struct writeback *wb;
	size_t n;
	int *wd;       /* the watch of each file's private directory */
	bool *pending; /* an event named it since the last copy */
	int fd;	       /* inotify */
	struct event *ev, *timer;
};

static void
sync_one(struct writeback *w)
{
	char err[PATH_MAX + 256];

	/* The note names a file of the workspace, escaped where it entered the
	 * message (writeback.c); the whole is escaped once more (textesc.h). */
	if (writeback_sync(w, err, sizeof(err)) < 0) {
		char shown[4 * sizeof(err)];

		text_escape(shown, sizeof(shown), err, strlen(err), TEXT_ESC_AGAIN);
		fprintf(stderr, "omnibox-run: %s\n", shown);
	}
}

static void
on_timer(evutil_socket_t fd, short what, void *arg)
{
	struct copyback *cb = arg;

	(void)fd;
	(void)what;
	for (size_t i = 0; i < cb->n; i++)
		if (cb->pending[i]) {
			cb->pending[i] = false;
			sync_one(&cb->wb[i]);
		}
}

static void
on_inotify(evutil_socket_t fd, short what, void *arg)
{
	struct copyback *cb = arg;
	char buf[8192] __attribute__((aligned(__alignof__(struct inotify_event))));
	const struct timeval delay = {0, COPYBACK_DELAY_MS * 1000};
	bool any = false;
	ssize_t len;

	(void)what;
	while ((len = read(fd, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + len;) {
			const struct inotify_event *e = (const struct inotify_event *)p;

			for (size_t i = 0; i < cb->n; i++)
				/* Events lost: every file is looked at. */
				if ((e->mask & IN_Q_OVERFLOW) || (e->wd == cb->wd[i] && e->len &&
								  !strcmp(e->name, cb->wb[i].name)))
					any = cb->pending[i] = true;
			p += sizeof(*e) + e->len;
		}
	}
	if (any && !evtimer_pending(cb->timer, NULL))
		evtimer_add(cb->timer, &delay);
}

struct copyback *
copyback_start(struct event_base *base, struct writeback *wb, size_t n)
{
	struct copyback *cb;

	if (!n)
		return NULL;
	cb = calloc(1, sizeof(*cb));
	if (!cb)
		goto fail;
	cb->fd = -1;
	if (!(cb->wd = calloc(n, sizeof(*cb->wd))) ||
	    !(cb->pending = calloc(n, sizeof(*cb->pending))) ||
	    !(cb->timer = evtimer_new(base, on_timer, cb)))
		goto fail;
	cb->wb = wb;
	cb->n = n;
	cb->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (cb->fd < 0)
		goto fail;
	for (size_t i = 0; i < n; i++) {
		char proc[64];

		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", wb[i].dir_fd);
		/* The same directory gives the same watch. */
		cb->wd[i] =
		    inotify_add_watch(cb->fd, proc, IN_CLOSE_WRITE | IN_MOVED_TO | IN_ONLYDIR);
		if (cb->wd[i] < 0)
			goto fail;
	}
	cb->ev = event_new(base, cb->fd, EV_READ | EV_PERSIST, on_inotify, cb);
	if (cb->ev && event_add(cb->ev, NULL) == 0)
		return cb;
fail:
	fprintf(stderr,
		"omnibox-run: warning: cannot watch the write_files copies (%s); they are "
		"written back when the sandbox exits\n",
		strerror(errno));
	copyback_finish(cb, NULL, 0);
	return NULL;
}

void
copyback_finish(struct copyback *cb, struct writeback *wb, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sync_one(&wb[i]);
	if (!cb)
		return;
	if (cb->ev)
		event_free(cb->ev);
	if (cb->timer)
		event_free(cb->timer);
	free(cb->pending);
	if (cb->fd >= 0)
		close(cb->fd);
	free(cb->wd);
	free(cb);
}
