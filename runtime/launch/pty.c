/*
 * pty.c - the sandbox's own terminal (pty.h).
 */
#include "runtime/launch/pty.h"

#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

static struct termios saved;
static bool saved_valid;

bool
pty_is_raw(void)
{
	return saved_valid;
}

void
pty_restore(void)
{
	if (saved_valid) {
		tcsetattr(STDIN_FILENO, TCSADRAIN, &saved);
		saved_valid = false;
	}
}

int
pty_open(struct pty *p, char *err, size_t errlen)
{
	struct termios t;
	struct winsize ws;
	const char *name;

	p->master = p->slave = -1;
	p->in_ev = p->out_ev = NULL;
	p->eof = false;
	p->master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (p->master < 0 || grantpt(p->master) < 0 || unlockpt(p->master) < 0 ||
	    !(name = ptsname(p->master)) ||
	    (p->slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0) {
		snprintf(err, errlen, "cannot make a terminal for the sandbox: %s", strerror(errno));
		if (p->master >= 0)
			close(p->master);
		p->master = -1;
		return -1;
	}
	/* The user's settings (erase key, UTF-8, ...) and size to begin with. */
	if (tcgetattr(STDIN_FILENO, &t) == 0)
		tcsetattr(p->slave, TCSANOW, &t);
	if (ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) == 0)
		ioctl(p->slave, TIOCSWINSZ, &ws);
	return 0;
}

int
pty_raw(void)
{
	struct termios raw;

	if (tcgetattr(STDIN_FILENO, &saved) < 0)
		return -1;
	saved_valid = true;
	atexit(pty_restore);
	raw = saved;
	cfmakeraw(&raw);
	return tcsetattr(STDIN_FILENO, TCSADRAIN, &raw);
}

static int
write_all(int fd, const char *buf, size_t n)
{
	while (n) {
		ssize_t w = write(fd, buf, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EAGAIN) {
			struct pollfd pfd = {fd, POLLOUT, 0};

			poll(&pfd, 1, 1000);
			continue;
		}
		if (w <= 0)
			return -1;
		buf += w;
		n -= (size_t)w;
	}
	return 0;
}

/* The user typed: to the sandbox's terminal, as typed. */
static void
on_input(evutil_socket_t fd, short what, void *arg)
{
	struct pty *p = arg;
	char buf[4096];
	ssize_t n = read((int)fd, buf, sizeof(buf));

	(void)what;
	if (n <= 0) {
		/* The user's side closed: the sandbox's terminal hangs up. */
		if (n == 0 || (errno != EINTR && errno != EAGAIN))
			event_del(p->in_ev);
		return;
	}
	if (write_all(p->master, buf, (size_t)n) < 0)
		event_del(p->in_ev);
}

/* The sandbox wrote: to the user's terminal. */
static void
on_output(evutil_socket_t fd, short what, void *arg)
{
	struct pty *p = arg;
	char buf[65536];
	ssize_t n = read((int)fd, buf, sizeof(buf));

	(void)what;
	if (n <= 0) {
		/* EIO: every slave descriptor is closed. */
		if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
			p->eof = true;
			event_del(p->out_ev);
		}
		return;
	}
	(void)write_all(STDOUT_FILENO, buf, (size_t)n);
}

int
pty_relay_start(struct pty *p, struct event_base *base)
{
	fcntl(p->master, F_SETFL, fcntl(p->master, F_GETFL) | O_NONBLOCK);
	p->in_ev = event_new(base, STDIN_FILENO, EV_READ | EV_PERSIST, on_input, p);
	p->out_ev = event_new(base, p->master, EV_READ | EV_PERSIST, on_output, p);
	if (!p->in_ev || !p->out_ev || event_add(p->in_ev, NULL) < 0 ||
	    event_add(p->out_ev, NULL) < 0)
		return -1;
	return 0;
}

void
pty_resize(const struct pty *p)
{
	struct winsize ws;

	if (p->master >= 0 && ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) == 0)
		ioctl(p->master, TIOCSWINSZ, &ws);
}

void
pty_finish(struct pty *p)
{
	/* The slave is closed here too: only the sandbox's copies kept it open. */
	if (p->slave >= 0)
		close(p->slave);
	p->slave = -1;
	if (p->out_ev)
		event_free(p->out_ev);
	if (p->in_ev)
		event_free(p->in_ev);
	p->in_ev = p->out_ev = NULL;
	while (p->master >= 0 && !p->eof) {
		char buf[65536];
		ssize_t n = read(p->master, buf, sizeof(buf));

		if (n <= 0)
			break;
		(void)write_all(STDOUT_FILENO, buf, (size_t)n);
	}
	if (p->master >= 0)
		close(p->master);
	p->master = -1;
	pty_restore();
}
