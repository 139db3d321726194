# Sourced (not run) by the checks that run `reassert run --transport live`
# against `reassert sim serve`, after lib_serve.sh:
#   . "$src/tests/lib_serve.sh"; . "$src/tests/lib_live.sh"
#
# live_setup BIN SRC DIR WORLD [SERVE-ARGS...]: everything a live run takes,
# as an operator would have it, in DIR:
#   tls.pem/tls.key  a self-signed certificate for 127.0.0.1 (openssl, at
#                    test time): the server's, and the CA every client trusts
#   kube.token, bao.token  the façade's bearer and OpenBao tokens
#   secret.enc.yaml, decrypt.sh  the SOPS file (the ciphertext of WORLD's
#                    catalogue credential `current`) and a decrypt command
#                    printing its Docker config
#   kubeconfig       https server, certificate-authority, tokenFile
#   talosconfig      the stub talosctl's: endpoint, ca, token-file
# then starts `sim serve --db WORLD` over TLS with those tokens (and
# SERVE-ARGS). Sets SERVE_PID and SERVE_URL (lib_serve.sh), LIVE_PASS (the
# credential's password, for the checks that no output holds it); returns 1
# when the server did not start.
# live_run ARGS...: `BIN run --transport live` with those files and the
# environment they need (BAO_ADDR, BAO_CACERT, the registry's URL and CA),
# the stub talosctl; ARGS come last, so a check can override any of them
# (LIVE_BAO_ADDR, LIVE_BAO_TOKEN, LIVE_REGISTRY_URL and
# LIVE_REGISTRY_CACERT, when set, replace BAO_ADDR, BAO_TOKEN and
# REASSERT_REGISTRY_URL/_CACERT; set empty, they leave them empty).
live_setup() {
  _lb=$1 _ls=$2 _ld=$3 _lw=$4
  shift 4
  (cd "$_ld" && openssl req -x509 -newkey rsa:2048 -nodes -keyout tls.key -out tls.pem \
    -days 2 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 >/dev/null 2>&1) || {
    echo "FAIL: openssl could not make the test certificate" >&2
    return 1
  }
  printf 'kube-token-live-5d0b1c\n' >"$_ld/kube.token"
  printf 'bao-token-live-7e2a94\n' >"$_ld/bao.token"
  LIVE_PASS=$(sqlite3 "$_lw" "select password from catalogue where name='current'")
  sqlite3 "$_lw" "select dockerconfigjson from catalogue where name='current'" >"$_ld/cred.json"
  printf 'stringData:\n  ghcr_dockerconfigjson: "%s"\n' \
    "$(sqlite3 "$_lw" "select ciphertext from catalogue where name='current'")" >"$_ld/secret.enc.yaml"
  printf '#!/bin/sh\nexec cat %s/cred.json\n' "$_ld" >"$_ld/decrypt.sh"
  chmod 700 "$_ld/decrypt.sh"
  serve_start "$_lb" "$_ld/serve.out" "$_ld/serve.err" --db "$_lw" --listen 127.0.0.1:0 \
    --tls-cert "$_ld/tls.pem" --tls-key "$_ld/tls.key" --token-file "$_ld/kube.token" \
    --openbao-token-file "$_ld/bao.token" "$@" || return 1
  cat >"$_ld/kubeconfig" <<EOF
apiVersion: v1
kind: Config
current-context: sim
clusters:
- name: sim
  cluster: {server: "$SERVE_URL", certificate-authority: tls.pem}
users:
- name: bot
  user: {tokenFile: kube.token}
contexts:
- name: sim
  context: {cluster: sim, user: bot}
EOF
  printf '{"context":"sim","contexts":{"sim":{"endpoints":["%s"],"ca":"%s","reassert-stub":{"token-file":"%s/kube.token"}}}}\n' \
    "$SERVE_URL" "$(base64 -w0 "$_ld/tls.pem")" "$_ld" >"$_ld/talosconfig"
  LIVE_BIN=$_lb LIVE_SRC=$_ls LIVE_DIR=$_ld
}

live_run() {
  BAO_ADDR=${LIVE_BAO_ADDR-$SERVE_URL} BAO_CACERT=$LIVE_DIR/tls.pem \
    BAO_TOKEN=${LIVE_BAO_TOKEN-bao-token-live-7e2a94} \
    REASSERT_REGISTRY_URL=${LIVE_REGISTRY_URL-$SERVE_URL} \
    REASSERT_REGISTRY_CACERT=${LIVE_REGISTRY_CACERT-$LIVE_DIR/tls.pem} \
    "$LIVE_BIN" run --transport live --kubeconfig "$LIVE_DIR/kubeconfig" \
    --secret-file "$LIVE_DIR/secret.enc.yaml" --decrypt-command "$LIVE_DIR/decrypt.sh" \
    --talosctl "$LIVE_SRC/tests/talosctl" --talosconfig "$LIVE_DIR/talosconfig" "$@"
}
