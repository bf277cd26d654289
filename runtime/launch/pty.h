/*
 * pty.h - a terminal of the sandbox's own for interactive launches.
 *
 * When omnibox-run's standard input is a terminal, the sandbox gets a new
 * pseudo-terminal: its slave is the sandbox's standard input, output and
 * error and (omnibox-init --tty) the controlling terminal of the sandbox's
 * session, so a shell inside has job control, Ctrl-C and Ctrl-Z reach the
 * foreground job inside, and `less` or `vim` work.  The user's terminal is
 * put in raw mode and relayed to the master; its size follows SIGWINCH.
 * The user's terminal itself never enters the sandbox: a TIOCSTI inside
 * (refused by seccomp anyway) could reach only the sandbox's own pty.
 */
#ifndef OMNIBOX_PTY_H
#define OMNIBOX_PTY_H

#include <stdbool.h>
#include <stddef.h>

struct event_base;

struct pty {
	int master, slave; /* -1 when closed */
	struct event *in_ev, *out_ev;
	bool eof; /* the slave side is gone: nothing more to read */
};

/*
 * A new pseudo-terminal with the settings and size of standard input.
 * 0, or -1 with a message in ERR.
 */
int pty_open(struct pty *p, char *err, size_t errlen);

/*
 * Put standard input in raw mode; the mode before is restored at exit,
 * whatever the way out (exit(), die(), a forwarded signal ending the run).
 */
int pty_raw(void);

/* Is the user's terminal in raw mode now (lines then end in "\r\n")? */
bool pty_is_raw(void);

/* Put the user's terminal back as it was (idempotent). */
void pty_restore(void);

/* Relay standard input to the master and the master to standard output on BASE. */
int pty_relay_start(struct pty *p, struct event_base *base);

/* Copy the size of standard input to the sandbox's terminal (SIGWINCH). */
void pty_resize(const struct pty *p);

/* After the sandbox ended: what it still wrote, then close everything. */
void pty_finish(struct pty *p);

#endif
