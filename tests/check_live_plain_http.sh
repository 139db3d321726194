#!/bin/sh
# No credential crosses the network in clear. kubectl gives a user's bearer
# credential only to a TLS server; `reassert run` refuses, before any call,
# a kubeconfig whose server is http:// while its user has a token, a
# tokenFile or an exec plugin (exit 65 naming the file:line, context, user
# and field), BAO_ADDR over http with an OpenBao token, and
# REASSERT_REGISTRY_URL over http (the registry credential and its pull
# tokens). A registry whose challenge sends the credential to an http token
# endpoint gets nothing either. Each case fails on a main that sent
# `Authorization: Bearer ...` (or the token, or basic auth) in clear.
#
#   tests/check_live_plain_http.sh BUILD/reassert SOURCE_ROOT
set -u
bin=$1
src=$2
tmp=$(mktemp -d)
SERVE_PID=
ppid_=
https_pid=
cleanup() {
  [ -n "$SERVE_PID" ] && kill "$SERVE_PID" 2>/dev/null
  [ -n "$https_pid" ] && kill "$https_pid" 2>/dev/null
  [ -n "$ppid_" ] && kill "$ppid_" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
fails=0
fail() {
  echo "FAIL: $1"
  fails=$((fails + 1))
}
has() { grep -qF -- "$2" "$1" || fail "$3: lacks '$2': $(head -c 600 "$1")"; }
lacks() { ! grep -qF -- "$2" "$1" || fail "$3: holds '$2'"; }
. "$src/tests/lib_serve.sh"
. "$src/tests/lib_live.sh"

w=$tmp/world.db
"$bin" sim init --scenario "$src/scenarios/two-run-stage-reassert.yaml" --db "$w" >/dev/null ||
  fail "sim init"
live_setup "$bin" "$src" "$tmp" "$w" || exit 1
https=$SERVE_URL
https_pid=$SERVE_PID
# The same world over plain http too (a second façade, no TLS; serve_start
# sets SERVE_PID, so both are kept for the cleanup).
serve_start "$bin" "$tmp/plain.out" "$tmp/plain.err" --db "$w" --listen 127.0.0.1:0 \
  --token-file "$tmp/kube.token" --openbao-token-file "$tmp/bao.token" || exit 1
plain=$SERVE_URL
ppid_=$SERVE_PID
SERVE_URL=$https
SERVE_PID=$https_pid
calls() { sqlite3 "$w" "select coalesce((select value from counters where name='api_calls'),0)"; }

# refused WHAT ARGS...: exit 65, no call reached the world, no token shown.
refused() {
  what=$1
  shift
  before=$(calls)
  live_run "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
  rc=$?
  cat "$tmp/out" "$tmp/err" >"$tmp/all"
  [ $rc -eq 65 ] || fail "$what: exit $rc, not 65: $(head -c 600 "$tmp/all")"
  [ "$(calls)" = "$before" ] || fail "$what: a call reached the world"
  lacks "$tmp/all" kube-token-live-5d0b1c "$what: the kube token"
  lacks "$tmp/all" bao-token-live-7e2a94 "$what: the OpenBao token"
}

# user-kubeconfig FILE USER-YAML: the plain-http server with that user.
user_kubeconfig() {
  cat >"$1" <<EOF
current-context: plain
clusters:
- name: lab
  cluster: {server: "$plain"}
users:
- name: bot
  user: $2
contexts:
- name: plain
  context: {cluster: lab, user: bot}
EOF
}
user_kubeconfig "$tmp/kc-tokenfile" "{tokenFile: kube.token}"
refused "a tokenFile over http" --fences --kubeconfig "$tmp/kc-tokenfile"
has "$tmp/all" "$tmp/kc-tokenfile:7:" "the file and line are named"
has "$tmp/all" "context plain, user bot: tokenFile" "context, user and field are named"
has "$tmp/all" "$plain is plain http" "the server is named"
user_kubeconfig "$tmp/kc-token" "{token: kube-token-live-5d0b1c}"
refused "a token over http" --fences --kubeconfig "$tmp/kc-token"
has "$tmp/all" "user bot: token:" "the token field is named"
printf '#!/bin/sh\ncat <<E\n{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"kube-token-live-5d0b1c"}}\nE\n' \
  >"$tmp/plugin.sh"
chmod 700 "$tmp/plugin.sh"
user_kubeconfig "$tmp/kc-exec" \
  "{exec: {apiVersion: client.authentication.k8s.io/v1, command: ./plugin.sh, interactiveMode: Never}}"
refused "an exec plugin over http" --fences --kubeconfig "$tmp/kc-exec"
has "$tmp/all" "user bot: exec:" "the exec field is named"
# A user without a credential may talk http: nothing secret goes (the
# façade then refuses the anonymous caller: exit 1, not a refusal of ours).
user_kubeconfig "$tmp/kc-anon" "{}"
live_run --fences --kubeconfig "$tmp/kc-anon" >"$tmp/all" 2>&1 </dev/null
rc=$?
[ $rc -eq 1 ] || fail "an anonymous user over http: exit $rc, not 1: $(head -c 400 "$tmp/all")"
lacks "$tmp/all" "plain http" "an anonymous user over http is not refused for it"

# OpenBao: the token goes in X-Vault-Token with every read.
LIVE_BAO_ADDR=$plain refused "BAO_ADDR over http (repair)"
has "$tmp/all" "BAO_ADDR $plain is plain http" "BAO_ADDR is named"
has "$tmp/all" "the OpenBao token from BAO_TOKEN" "the token's source is named"

# The registry: the credential as basic auth, then the pull tokens.
LIVE_REGISTRY_URL=$plain refused "REASSERT_REGISTRY_URL over http" --check-only
has "$tmp/all" "REASSERT_REGISTRY_URL $plain is plain http" "REASSERT_REGISTRY_URL is named"

# An https registry whose challenge names an http token endpoint: the
# credential is not sent there (the endpoint records any Authorization).
cat >"$tmp/fake_registry.py" <<'EOF'
import http.server, json, ssl, sys, threading
d = sys.argv[1]
class Realm(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        with open(d + "/realm.log", "a") as f:
            f.write("auth=%s\n" % (self.headers.get("Authorization") is not None))
        self.send_response(200); self.end_headers(); self.wfile.write(b'{"token":"t"}')
    def log_message(self, *a): pass
class Reg(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Bearer realm="http://127.0.0.1:%d/token",service="ghcr.io"' % realm.server_port)
        self.end_headers()
    def log_message(self, *a): pass
realm = http.server.HTTPServer(("127.0.0.1", 0), Realm)
reg = http.server.HTTPServer(("127.0.0.1", 0), Reg)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(d + "/tls.pem", d + "/tls.key")
reg.socket = ctx.wrap_socket(reg.socket, server_side=True)
threading.Thread(target=realm.serve_forever, daemon=True).start()
print("https://127.0.0.1:%d" % reg.server_port, flush=True)
reg.serve_forever()
EOF
mkfifo "$tmp/reg.fifo"
python3 "$tmp/fake_registry.py" "$tmp" >"$tmp/reg.fifo" 2>/dev/null &
regpid=$!
read -r regurl <"$tmp/reg.fifo" || true
LIVE_REGISTRY_URL=$regurl live_run --check-only >"$tmp/all" 2>&1 </dev/null
rc=$?
kill "$regpid" 2>/dev/null
[ $rc -eq 1 ] || fail "an http token endpoint: exit $rc, not 1: $(head -c 400 "$tmp/all")"
has "$tmp/all" "plain http token endpoint" "an http token endpoint is said"
[ ! -s "$tmp/realm.log" ] || fail "the http token endpoint was called: $(cat "$tmp/realm.log")"

# Over TLS, the same inputs work (so each refusal above was the http).
live_run --fences >"$tmp/all" 2>&1 </dev/null || fail "over https: exit $?: $(head -c 400 "$tmp/all")"

echo "live plain http: $fails failed"
[ "$fails" -eq 0 ]
