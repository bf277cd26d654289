/*
 * truststore.h - the session's trust, in every form the clients inside read.
 *
 * Intercepted TLS is signed by the session's CA, so every client inside
 * must trust it, and none of them should need a setting of its own.  The
 * scratch dir gets three files, which the launch's environment names
 * (compiler/decide/env.h):
 *
 *   omnibox-ca.pem  the system CAs, the --egress-ca certificates and the
 *                   session CA (PEM): SSL_CERT_FILE, NODE_EXTRA_CA_CERTS,
 *                   npm's cafile, pip, curl, git, cargo, Deno
 *   omnibox-ca.jks  the same certificates as a Java trust store (JKS, the
 *                   format every JDK reads; keytool imports only the first
 *                   certificate of a PEM bundle)
 *   HASH.N          the session CA and the --egress-ca certificates as
 *                   OpenSSL's hashed directory wants them, in the scratch
 *                   dir itself, which SSL_CERT_DIR lists before the
 *                   system's /etc/ssl/certs (OpenSSL opens only the names
 *                   of the subject it looks for).  No directory of their
 *                   own: where the file system discards freed blocks at
 *                   once, removing one cost a launch half a millisecond.
 *
 * The agent can write these copies; they decide only what the agent's own
 * clients trust.  The proxy's own upstream trust is read elsewhere, once.
 */
#ifndef OMNIBOX_TRUSTSTORE_H
#define OMNIBOX_TRUSTSTORE_H

#include <stddef.h>

/*
 * Write the PEM bundle at BUNDLE (its directory's name for it may differ
 * from omnibox-ca.pem) and the other two beside it, none of which may
 * exist yet, but for an empty BUNDLE of this user's (omnibox-run makes it,
 * for bwrap to bind while the proxy starts; it is written in place): SYS (SYS_LEN bytes of PEM; may be empty), EXTRA (the
 * --egress-ca PEM, or NULL) and CA (the session CA's PEM).  Returns 0, or
 * -1 with a message in ERR.
 */
int truststore_write(const char *bundle, const char *sys, size_t sys_len, const char *extra,
		     size_t extra_len, const char *ca, size_t ca_len, char *err, size_t errlen);

#endif
