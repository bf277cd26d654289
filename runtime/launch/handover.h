/*
 * handover.h - omnibox-init's command line, sent on its ready socket.
 *
 * omnibox-run starts bwrap as soon as bwrap's own arguments are known,
 * before the workspace is resolved, and bwrap starts omnibox-init as
 *
 *   /.omnibox/init --args-from FD    (BWRAP_INIT_PATH, BWRAP_INIT_ARGS_FROM)
 *
 * (FD: the ready socket, a SOCK_SEQPACKET socket to omnibox-run).  While
 * bwrap sets the sandbox up, omnibox-run resolves the launch; then it sends
 * omnibox-init the rest: its arguments, the agent's environment, and the
 * descriptors the arguments name (the grants', the masks' list...), each to
 * arrive at the number the arguments give it, which is the one it has in
 * omnibox-run.  So omnibox-init runs exactly as if bwrap had passed it all.
 *
 * The block: a sealed memfd holding NUL-ended decimal N (descriptors), A
 * (arguments) and E (environment entries), then the N descriptor numbers,
 * the A arguments (the first, omnibox-init's path) and the E entries, each
 * NUL-ended.  The messages: the first carries the memfd and up to
 * HANDOVER_FDS_PER_MSG - 1 of the descriptors, in order; each next one
 * (one byte, 'a') up to HANDOVER_FDS_PER_MSG more, until all N came.
 */
#ifndef OMNIBOX_HANDOVER_H
#define OMNIBOX_HANDOVER_H

#include <stddef.h>

/* SCM_MAX_FD of Linux: the descriptors one message may carry. */
#define HANDOVER_FDS_PER_MSG 253

/*
 * Send on SOCK: the NUL-separated arguments ARGS (LEN bytes, omnibox-init's
 * path first), the environment ENV (NULL-terminated) and the N descriptors
 * of FDS (each at least 3, none alike).  0, or -1 with errno (EPIPE,
 * ECONNRESET: omnibox-init is gone).
 */
int handover_send(int sock, const char *args, size_t len, char *const *env, const int *fds,
		  size_t n);

/*
 * omnibox-init's side: receive the block on SOCK, put each descriptor at
 * its number (closing whatever held it), and return the arguments in
 * *ARGC and *ARGV and the environment in *ENV, which live as long as the
 * process.  0; 1 when the socket ended before a block came (omnibox-run
 * gave up the launch and says why: nothing to add); -1 with ERR.
 */
int handover_receive(int sock, int *argc, char ***argv, char ***env, char *err, size_t errlen);

#endif
