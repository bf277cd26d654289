/*
 * client.h - the git_ssh helper inside the sandbox, and the wire protocol
 * it speaks to the broker (broker.h) in omnibox-run.
 *
 * git runs `$GIT_SSH_COMMAND [OPTIONS] USER@HOST COMMAND`, and
 * GIT_SSH_COMMAND is `/.omnibox/init --git-ssh`: this helper.  It holds no
 * key and has no route out, and it decides nothing.  It connects to the
 * broker's Unix socket ($OMNIBOX_GIT_SSH_SOCKET, in the scratch dir) and
 * sends, in one message:
 *
 *   "omnibox-git-ssh/1" NUL  TOKEN NUL  GIT_PROTOCOL NUL  ARGC NUL  ARG NUL ...
 *
 * TOKEN is $OMNIBOX_GIT_SSH_TOKEN (per launch), GIT_PROTOCOL the variable
 * of that name git set ("" when unset), ARGC the number of ARGs in decimal,
 * and the ARGs what git passed after --git-ssh, verbatim.  The same
 * message carries the helper's descriptors 0, 1 and 2 (SCM_RIGHTS): the
 * broker reads git's requests from the first and writes the remote's
 * answers to the others, so no byte of the session passes through here.
 * The helper then only waits: the broker's reply, when the session is
 * over, is one byte (the exit status) followed by a message for standard
 * error (a refusal, a cap reached; often empty), then end of file.  The
 * helper prints the message and exits with the status; 255 (ssh's own
 * failure code) when the broker cannot be reached or closes early.
 *
 * It runs in omnibox-init, a static binary: libc only.
 */
#ifndef OMNIBOX_GITSSH_CLIENT_H
#define OMNIBOX_GITSSH_CLIENT_H

#define GITSSH_MAGIC "omnibox-git-ssh/1"
/* The per-launch token: this many hex digits (256 random bits). */
#define GITSSH_TOKEN_LEN 64
/* A request larger than this, or with more arguments, is refused unread. */
#define GITSSH_REQUEST_MAX 8192
#define GITSSH_MAX_ARGS 16
/* The message after the status byte. */
#define GITSSH_REPLY_MAX 1024
/* ssh's exit status when ssh itself fails; git reports it as a failed connection. */
#define GITSSH_EXIT_FAILURE 255

/* The environment the helper reads (set by omnibox-run in the sandbox). */
#define GITSSH_ENV_SOCKET "OMNIBOX_GIT_SSH_SOCKET"
#define GITSSH_ENV_TOKEN "OMNIBOX_GIT_SSH_TOKEN"

/*
 * The helper: ARGV[0 .. ARGC-1] are the arguments after --git-ssh.
 * Returns the exit status.
 */
int gitssh_client_main(int argc, char **argv);

/*
 * The request message for TOKEN, GIT_PROTOCOL (NULL: unset) and ARGV into
 * BUF.  Returns its length, or 0 when it does not fit in LEN bytes or
 * there are more than GITSSH_MAX_ARGS arguments.
 */
unsigned gitssh_encode_request(char *buf, unsigned len, const char *token, const char *git_protocol,
			       int argc, char *const *argv);

#endif
