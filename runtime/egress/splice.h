/*
 * splice.h - a plain body moved from one socket to another through a pipe.
 *
 * When a response body needs no reading (its framing is a length or the
 * close, and neither side is TLS), the egress proxy hands it to the kernel:
 * upstream socket -> pipe -> agent's socket with splice(2), so the proxy
 * never copies it.  This is the mover alone, with no event loop: each call
 * moves what it can and says which side it must wait for next.  The proxy
 * turns that into events; the unit test turns it into poll(2).
 */
#ifndef OMNIBOX_SPLICE_H
#define OMNIBOX_SPLICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct splice_pipe {
	int pipe[2];
	size_t in_pipe;	  /* bytes in the pipe, not yet sent to the agent */
	size_t pipe_size; /* what the pipe holds */
	bool moved;	  /* something went through already */
};

enum splice_next {
	SPLICE_WAIT_UP,	     /* wait until the upstream is readable */
	SPLICE_WAIT_AGENT,   /* wait until the agent's socket is writable */
	SPLICE_DONE,	     /* the length is reached and all of it sent */
	SPLICE_UP_CLOSED,    /* the upstream closed (the end of a close-delimited body) */
	SPLICE_UNSUPPORTED,  /* this kernel cannot splice these: nothing moved, copy instead */
	SPLICE_UP_FAILED,    /* reading the upstream failed (errno says why) */
	SPLICE_AGENT_FAILED, /* the agent's side failed or closed */
};

/* Calls to the kernel one splice_move() makes at most before it lets
 * other connections have their turn. */
#define SPLICE_ROUNDS 16

/* A non-blocking pipe of up to `size` bytes (less where the system's limit
 * is lower).  Returns 0, or -1 with errno set. */
int splice_pipe_open(struct splice_pipe *sp, size_t size);
void splice_pipe_close(struct splice_pipe *sp);

/*
 * Move bytes from `up` to `agent`.  With `left` non-NULL the body has that
 * many bytes still to come from upstream (decreased as they arrive), and
 * SPLICE_DONE comes once they all reached the agent; with `left` NULL it
 * ends with the upstream's close.  Both descriptors are non-blocking.
 * SPLICE_WAIT_UP and SPLICE_WAIT_AGENT are also the answers of a call that
 * stopped after SPLICE_ROUNDS while it could have gone on: they then name a
 * side that is ready (so the caller's loop comes back at once), and never the
 * upstream while the pipe still holds bytes for the agent (the last of a
 * body may be in it, with nothing more to come from upstream).
 */
enum splice_next splice_move(struct splice_pipe *sp, int up, int agent, uint64_t *left);

#endif
