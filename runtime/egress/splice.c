/*
 * splice.c - a plain body moved from one socket to another through a pipe
 * (see splice.h).
 */
#include "splice.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

int
splice_pipe_open(struct splice_pipe *sp, size_t size)
{
	int got;

	*sp = (struct splice_pipe){.pipe = {-1, -1}};
	if (pipe2(sp->pipe, O_NONBLOCK | O_CLOEXEC) < 0)
		return -1;
	/* Refused above the system's limit: the pipe keeps its default size. */
	(void)fcntl(sp->pipe[0], F_SETPIPE_SZ, (int)size);
	got = fcntl(sp->pipe[0], F_GETPIPE_SZ);
	sp->pipe_size = got > 0 ? (size_t)got : 65536;
	return 0;
}

void
splice_pipe_close(struct splice_pipe *sp)
{
	if (sp->pipe[0] >= 0)
		close(sp->pipe[0]);
	if (sp->pipe[1] >= 0)
		close(sp->pipe[1]);
	sp->pipe[0] = sp->pipe[1] = -1;
	sp->in_pipe = 0;
}

/* Send what the pipe holds.  Returns SPLICE_DONE when the pipe is empty. */
static enum splice_next
drain(struct splice_pipe *sp, int agent)
{
	while (sp->in_pipe) {
		ssize_t k = splice(sp->pipe[0], NULL, agent, NULL, sp->in_pipe,
				   SPLICE_F_MOVE | SPLICE_F_NONBLOCK);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return SPLICE_WAIT_AGENT; /* the agent is slower */
		if (k <= 0)
			return SPLICE_AGENT_FAILED;
		sp->in_pipe -= (size_t)k;
	}
	return SPLICE_DONE;
}

enum splice_next
splice_move(struct splice_pipe *sp, int up, int agent, uint64_t *left)
{
	for (int round = 0; round < SPLICE_ROUNDS; round++) {
		enum splice_next r = drain(sp, agent);
		size_t want = sp->pipe_size;
		ssize_t n;

		if (r != SPLICE_DONE)
			return r;
		if (left && *left == 0)
			return SPLICE_DONE;
		if (left && *left < want)
			want = (size_t)*left;
		n = splice(up, NULL, sp->pipe[1], NULL, want, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return SPLICE_WAIT_UP;
		if (n == 0)
			return SPLICE_UP_CLOSED;
		if (n < 0 && (errno == EINVAL || errno == ENOSYS) && !sp->moved)
			return SPLICE_UNSUPPORTED;
		if (n < 0)
			return SPLICE_UP_FAILED;
		sp->moved = true;
		sp->in_pipe += (size_t)n;
		if (left)
			*left -= (uint64_t)n;
	}
	/* The turn is over.  What the pipe holds waits for the agent's side:
	 * the last of a body may be in it, and the upstream never readable again. */
	return sp->in_pipe ? SPLICE_WAIT_AGENT : SPLICE_WAIT_UP;
}
