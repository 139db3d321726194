/*
 * live_pem.h — is a kubeconfig's certificate authority one a client can
 * trust with? Answered before any connection, as client-go answers it
 * (DESIGN.md §7).
 *
 * client-go loads `certificate-authority` (a file) or
 * `certificate-authority-data` into a pool with Go's AppendCertsFromPEM and
 * refuses the configuration when no certificate parses ("unable to load
 * root certificates"), and clientcmd refuses a file it cannot read. Without
 * this check the bytes would reach libcurl, whose TLS failure reads as an
 * unreachable or untrusted server (exit 1) — but the input is malformed
 * (exit 65), and naming the kubeconfig's field is the useful error.
 */
#ifndef CORE_LIVE_PEM_H
#define CORE_LIVE_PEM_H

#include <stdbool.h>
#include <stddef.h>

#define LIVE_PEM_FILE_MAX (4u * 1024u * 1024u) /* a CA bundle larger than this is refused */

/* True when pem[0..len) holds at least one PEM CERTIFICATE block that
 * parses as an X.509 certificate (other blocks are skipped, as Go does). */
bool live_pem_has_cert(const unsigned char *pem, size_t len);

/* NULL when path is a readable regular file holding a PEM certificate;
 * else why not ("cannot be read: <errno text>", "is not a regular file",
 * "is larger than 4 MiB", "holds no PEM certificate"): a static string
 * valid until the next call (a kubeconfig is read once, before any thread
 * starts). */
const char *live_pem_file_problem(const char *path);

/* True when pem[0..len) holds a PEM private key OpenSSL parses (the
 * client-key a kubeconfig names; Go's tls.X509KeyPair needs one). */
bool live_pem_has_key(const unsigned char *pem, size_t len);

/* As live_pem_file_problem, for a client-key file ("holds no PEM private
 * key"); the bytes read are wiped before they are freed. */
const char *live_pem_key_file_problem(const char *path);

#endif
