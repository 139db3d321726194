#!/bin/sh
# Hazard: none — no entry in H1–H176 covers kubeconfig TLS inputs; the rule
# pinned is README "Live mode" (a malformed kubeconfig is 65, named by file,
# context and field, before any connection) and kubectl's own refusals
# (client-go's checks before any connection); and a
# client-certificate or client-key file that cannot be read or holds no PEM
# (clientcmd: "unable to read client-cert"; tls.X509KeyPair).
# client-go refuses `insecure-skip-tls-verify: true` beside a certificate
# authority ("specifying a root certificates file with the insecure flag is
# not allowed"), a certificate-authority file it cannot read, and CA bytes
# holding no PEM certificate ("unable to load root certificates"). Each must
# exit 65 naming the kubeconfig file:line:col, the context and the field —
# and before any connection: the server below listens nowhere, so reaching
# it would be exit 1 ("unreachable"). Args: reassert binary, source dir.
set -u
BIN=$1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
FAILS=0
fail() { echo "FAIL: $*" >&2; FAILS=$((FAILS + 1)); }
command -v openssl >/dev/null || { echo "FAIL: openssl is needed" >&2; exit 1; }
openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 2 -subj /CN=kc-tls-ca >/dev/null 2>&1 ||
  { echo "FAIL: openssl req" >&2; exit 1; }
CAD=$(base64 < ca.crt | tr -d '\n')
NOTPEM=$(printf 'not a certificate\n' | base64 | tr -d '\n')
printf 'not a certificate\n' > notpem.crt
mkfifo fifo.crt
U=https://127.0.0.1:1
unset KUBECONFIG BAO_ADDR VAULT_ADDR GITHUB_STEP_SUMMARY
kc() { # file cluster-fields
  printf 'apiVersion: v1\nkind: Config\nclusters:\n- name: s\n  cluster: {server: %s, %s}\nusers:\n- name: u\n  user: {token: kc-tls-tok}\ncontexts:\n- name: ctx-tls\n  context: {cluster: s, user: u}\ncurrent-context: ctx-tls\n' "$U" "$2" > "$1"
}
# refused NAME FIELD TEXT cluster-fields: exit 65, one error naming
# file:line:col, the context and the field, and TEXT.
refused() {
  name=$1; field=$2; text=$3
  kc "$name.yaml" "$4"
  "$BIN" run --kubeconfig "$name.yaml" --fences >"$name.out" 2>"$name.err"
  rc=$?
  [ "$rc" = 65 ] || { fail "$name: exit $rc, want 65"; cat "$name.err" >&2; return; }
  all=$(cat "$name.out" "$name.err")
  echo "$all" | grep -q "$name.yaml:5:[0-9]*: kubeconfig: context ctx-tls, cluster s: $field" ||
    fail "$name: the error does not name file:line:col, context and $field: $all"
  echo "$all" | grep -qF "$text" || fail "$name: the error does not say '$text': $all"
  echo "$all" | grep -q "unreachable\|127.0.0.1:1" && fail "$name: a connection was tried: $all"
  echo "$all" | grep -q kc-tls-tok && fail "$name: the token is printed"
}
refused insecure-ca-data insecure-skip-tls-verify "with the insecure flag is not allowed" \
  "insecure-skip-tls-verify: true, certificate-authority-data: $CAD"
refused insecure-ca-file insecure-skip-tls-verify "with the insecure flag is not allowed" \
  "insecure-skip-tls-verify: true, certificate-authority: ca.crt"
refused missing-ca-file certificate-authority "nonexistent/ca.crt cannot be read" \
  "certificate-authority: nonexistent/ca.crt"
refused notpem-ca-file certificate-authority "notpem.crt holds no PEM certificate" \
  "certificate-authority: notpem.crt"
refused fifo-ca-file certificate-authority "fifo.crt is not a regular file" \
  "certificate-authority: fifo.crt"
refused notpem-ca-data certificate-authority-data "no PEM certificate" \
  "certificate-authority-data: $NOTPEM"
refused missing-ca-file-beside-data certificate-authority "cannot be read" \
  "certificate-authority: nonexistent/ca.crt, certificate-authority-data: $CAD"
# The user's client-certificate and client-key files, as clientcmd reads them.
kcu() { # file user-fields
  printf 'apiVersion: v1\nkind: Config\nclusters:\n- name: s\n  cluster: {server: %s}\nusers:\n- name: u\n  user: {%s}\ncontexts:\n- name: ctx-tls\n  context: {cluster: s, user: u}\ncurrent-context: ctx-tls\n' "$U" "$2" > "$1"
}
refused_user() { # NAME FIELD TEXT user-fields
  name=$1; field=$2; text=$3
  kcu "$name.yaml" "$4"
  "$BIN" run --kubeconfig "$name.yaml" --fences >"$name.out" 2>"$name.err"
  rc=$?
  [ "$rc" = 65 ] || { fail "$name: exit $rc, want 65"; cat "$name.err" >&2; return; }
  all=$(cat "$name.out" "$name.err")
  echo "$all" | grep -q "$name.yaml:8:[0-9]*: kubeconfig: context ctx-tls, user u: $field" ||
    fail "$name: the error does not name file:line:col, context, user and $field: $all"
  echo "$all" | grep -qF "$text" || fail "$name: the error does not say '$text': $all"
}
openssl ecparam -genkey -name prime256v1 -noout -out client.key 2>/dev/null ||
  { echo "FAIL: openssl ecparam" >&2; exit 1; }
refused_user missing-client-cert client-certificate "nonexistent/c.crt cannot be read" \
  "client-certificate: nonexistent/c.crt, client-key: client.key"
refused_user missing-client-key client-key "nonexistent/c.key cannot be read" \
  "client-certificate: ca.crt, client-key: nonexistent/c.key"
refused_user notpem-client-key client-key "ca.crt holds no PEM private key" \
  "client-certificate: ca.crt, client-key: ca.crt"
# What kubectl accepts still passes the check and reaches the server (which
# listens nowhere: exit 1): a readable PEM file, PEM data (which wins over
# a file holding no PEM certificate, as in client-go), insecure alone.
reaches() {
  name=$1
  kc "$name.yaml" "$2"
  "$BIN" run --kubeconfig "$name.yaml" --fences >"$name.out" 2>"$name.err"
  rc=$?
  [ "$rc" = 1 ] || { fail "$name: exit $rc, want 1 (the server is unreachable)"; cat "$name.err" >&2; }
}
reaches ca-file "certificate-authority: ca.crt"
reaches ca-data "certificate-authority-data: $CAD"
reaches data-wins-over-notpem-file "certificate-authority: notpem.crt, certificate-authority-data: $CAD"
reaches insecure-alone "insecure-skip-tls-verify: true"
kcu client-files.yaml "client-certificate: ca.crt, client-key: client.key"
"$BIN" run --kubeconfig client-files.yaml --fences >client-files.out 2>client-files.err
rc=$?
[ "$rc" = 1 ] || { fail "client-files: exit $rc, want 1 (the server is unreachable)"; cat client-files.err >&2; }
[ "$FAILS" -eq 0 ] || { echo "$FAILS case(s) failed" >&2; exit 1; }
echo "ok: kubeconfig TLS inputs kubectl refuses exit 65 naming file, context and field, before any connection"
