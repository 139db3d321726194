#!/bin/sh
# `reassert run --transport live`: every way its inputs can be wrong is one
# clear error with the right exit, naming the kubeconfig file, context,
# server or OpenBao address it came from, and nothing reaches the world
# (its api_calls counter does not move): a malformed kubeconfig (65), an
# unknown context (65), an unreachable server (1), a TLS certificate the
# kubeconfig does not trust (1), an exec plugin whose credential has expired
# (1), an OpenBao token refused with 403 (1), a proxy-url that leads nowhere
# (1: the proxy is honoured), a decrypt command that fails
# (65; its stderr — which here holds the password and a forged ::error:: —
# is never repeated), and the usage errors (64). --help documents every flag
# and environment variable. The bao/vault CLIs' conventions: ~/.vault-token
# after the flag and BAO_TOKEN/VAULT_TOKEN; BAO_SKIP_VERIFY/VAULT_SKIP_VERIFY
# refused (64).
set -u
bin=$1
src=$2
tmp=$(mktemp -d)
spid=
cleanup() {
  [ -n "$spid" ] && kill "$spid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
fails=0
ok() { :; }
fail() { echo "FAIL: $1"; fails=$((fails + 1)); }
has() { grep -qF -- "$2" "$1" && ok || fail "$3: $(basename "$1") lacks '$2': $(head -c 400 "$1")"; }
lacks() { grep -qF -- "$2" "$1" && fail "$3: $(basename "$1") holds '$2'" || ok; }

w=$tmp/world.db
"$bin" sim init --scenario "$src/scenarios/two-run-stage-reassert.yaml" --db "$w" >/dev/null || fail "sim init"
printf '#!/bin/sh\necho "::error::FORGED %s" >&2\nexit 3\n' \
  "$(sqlite3 "$w" "select password from catalogue where name='current'")" >"$tmp/decrypt-bad.sh"
chmod 700 "$tmp/decrypt-bad.sh"
calls() { sqlite3 "$w" "select coalesce((select value from counters where name='api_calls'),0)"; }

# sim serve over TLS, with the façade's kube and OpenBao tokens, and every
# input a live run takes (tests/lib_live.sh): no credential ever goes over
# plain http (check_live_plain_http.sh).
. "$src/tests/lib_serve.sh"
. "$src/tests/lib_live.sh"
live_setup "$bin" "$src" "$tmp" "$w" || exit 1
spid=$SERVE_PID
url=$SERVE_URL
pass=$LIVE_PASS

kubeconfig() { # kubeconfig FILE SERVER USER-YAML: trusting the test CA
  cat >"$1" <<EOF
apiVersion: v1
kind: Config
current-context: sim
clusters:
- name: sim
  cluster: {server: "$2", certificate-authority: $tmp/tls.pem}
users:
- name: bot
  user: $3
contexts:
- name: sim
  context: {cluster: sim, user: bot}
EOF
}
kubeconfig "$tmp/good" "$url" "{tokenFile: $tmp/kube.token}"

# live CODE WHAT -- ARGS...: a live run with the test's environment.
live() {
  want=$1; what=$2; shift 3
  before=$(calls)
  LIVE_BAO_TOKEN=${BAO_TOKEN_T:-bao-token-live-7e2a94} live_run --test-facade-clock "$@" \
    >"$tmp/out" 2>"$tmp/err" </dev/null
  got=$?
  [ "$got" -eq "$want" ] || fail "$what: expected exit $want, got $got: $(head -c 400 "$tmp/out")"
  [ "$want" -eq 0 ] || [ "$(calls)" = "$before" ] || fail "$what: a call reached the world before the error"
  cat "$tmp/out" "$tmp/err" >"$tmp/all"
  lacks "$tmp/all" "$pass" "$what"
  lacks "$tmp/all" "kube-token-live-5d0b1c" "$what"
  lacks "$tmp/all" "bao-token-live-7e2a94" "$what"
}

printf 'clusters: [\n' >"$tmp/malformed"
live 65 "malformed kubeconfig" -- --kubeconfig "$tmp/malformed"
has "$tmp/all" "$tmp/malformed:" "the error names the kubeconfig file and line"

live 65 "unknown context" -- --kubeconfig "$tmp/good" --context nope
has "$tmp/all" 'context "nope" is not defined' "the error names the context"
has "$tmp/all" "$tmp/good" "the error names the file"

kubeconfig "$tmp/down" "https://127.0.0.1:1" "{tokenFile: $tmp/kube.token}"
live 1 "unreachable server" -- --kubeconfig "$tmp/down"
has "$tmp/all" "cannot be reached" "unreachable is said"
has "$tmp/all" "https://127.0.0.1:1" "the error names the server"
has "$tmp/all" "context sim" "the error names the context"
has "$tmp/all" "kubeconfig $tmp/down" "the unreachable error names the kubeconfig file"
# proxy-url is honoured: a reachable server behind a proxy that is not there.
cat >"$tmp/proxied" <<EOF
current-context: p
clusters: [{name: p, cluster: {server: "$url", certificate-authority: tls.pem, proxy-url: "http://127.0.0.1:1"}}]
users: [{name: bot, user: {tokenFile: $tmp/kube.token}}]
contexts: [{name: p, context: {cluster: p, user: bot}}]
EOF
live 1 "proxy-url" -- --kubeconfig "$tmp/proxied" --fences
has "$tmp/all" "proxy http://127.0.0.1:1" "the error names the proxy"

# TLS: a server whose certificate no CA of the kubeconfig vouches for (its
# own, made here; the kubeconfig trusts the first server's).
(cd "$tmp" && openssl req -x509 -newkey rsa:2048 -nodes -keyout tls2.key -out tls2.pem -days 2 \
  -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 >/dev/null 2>&1) || fail "openssl"
mkfifo "$tmp/fifo2"
"$bin" sim serve --db "$tmp/world2.db" --listen 127.0.0.1:0 --tls-cert "$tmp/tls2.pem" \
  --tls-key "$tmp/tls2.key" >"$tmp/fifo2" 2>/dev/null &
tpid=$!
cp "$w" "$tmp/world2.db"
read -r turl <"$tmp/fifo2" || true
kubeconfig "$tmp/tls" "$turl" "{tokenFile: $tmp/kube.token}"
live 1 "TLS mismatch" -- --kubeconfig "$tmp/tls"
has "$tmp/all" "TLS cannot be trusted" "a TLS mismatch is said"
has "$tmp/all" "$turl" "the TLS error names the server"
has "$tmp/all" "context sim" "the TLS error names the context"
has "$tmp/all" "kubeconfig $tmp/tls" "the TLS error names the kubeconfig file"
# The same server trusted three ways: its certificate as the kubeconfig's
# certificate-authority file (relative to the kubeconfig), or as -data, or
# insecure-skip-tls-verify — which only the kubeconfig can ask for.
cat >"$tmp/tls-ca" <<EOF
current-context: t
clusters: [{name: t, cluster: {server: "$turl", certificate-authority: tls2.pem}}]
users: [{name: bot, user: {tokenFile: kube.token}}]
contexts: [{name: t, context: {cluster: t, user: bot}}]
EOF
live 0 "certificate-authority file" -- --kubeconfig "$tmp/tls-ca" --fences
cat >"$tmp/tls-insecure" <<EOF
current-context: t
clusters: [{name: t, cluster: {server: "$turl", insecure-skip-tls-verify: true}}]
users: [{name: bot, user: {tokenFile: kube.token}}]
contexts: [{name: t, context: {cluster: t, user: bot}}]
EOF
live 0 "insecure-skip-tls-verify" -- --kubeconfig "$tmp/tls-insecure" --fences
kill "$tpid" 2>/dev/null
wait "$tpid" 2>/dev/null

printf '#!/bin/sh\nprintf %s\n' "'{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":{\"token\":\"kube-token-live-5d0b1c\",\"expirationTimestamp\":\"2001-01-01T00:00:00Z\"}}'" >"$tmp/expired.sh"
chmod 700 "$tmp/expired.sh"
kubeconfig "$tmp/expired" "$url" "{exec: {apiVersion: client.authentication.k8s.io/v1, command: $tmp/expired.sh, interactiveMode: Never}}"
live 1 "expired exec credential" -- --kubeconfig "$tmp/expired"
has "$tmp/all" "expired" "an expired credential is said"
has "$tmp/all" "$tmp/expired.sh" "the error names the plugin"
has "$tmp/all" "context sim, server $url" "the expired credential's error names context and server"
has "$tmp/all" "kubeconfig $tmp/expired" "the expired credential's error names the kubeconfig file"

# An exec plugin whose first credential the server refuses (401) is asked
# again, as client-go asks it; its second credential works.
cat >"$tmp/rotating.sh" <<EOF
#!/bin/sh
if [ -e "$tmp/rotated" ]; then tok=kube-token-live-5d0b1c; else tok=stale-token; : >"$tmp/rotated"; fi
printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"%s"}}' "\$tok"
EOF
chmod 700 "$tmp/rotating.sh"
kubeconfig "$tmp/rotating" "$url" "{exec: {apiVersion: client.authentication.k8s.io/v1, command: $tmp/rotating.sh, interactiveMode: Never}}"
live 0 "an exec credential refused once is asked again" -- --kubeconfig "$tmp/rotating" --fences
[ -e "$tmp/rotated" ] || fail "the rotating plugin never ran"
printf '#!/bin/sh\nprintf %s\n' "'{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":{\"token\":\"stale-token\"}}'" >"$tmp/stale.sh"
chmod 700 "$tmp/stale.sh"
kubeconfig "$tmp/stale" "$url" "{exec: {apiVersion: client.authentication.k8s.io/v1, command: $tmp/stale.sh, interactiveMode: Never}}"
live 1 "an exec credential refused twice" -- --kubeconfig "$tmp/stale"
has "$tmp/all" "refused user bot" "a refused identity names the user"
has "$tmp/all" "context sim, server $url" "a refused identity names context and server"
has "$tmp/all" "kubeconfig $tmp/stale" "a refused identity names the kubeconfig file"

# A tokenFile whose token the server refuses: read again once (it may have
# been rotated), then one error naming user, context, server and file.
printf 'not-the-token\n' >"$tmp/wrong.token"
kubeconfig "$tmp/wrongtok" "$url" "{tokenFile: $tmp/wrong.token}"
live 1 "a refused tokenFile token" -- --kubeconfig "$tmp/wrongtok"
has "$tmp/all" "refused user bot" "a refused tokenFile names the user"
has "$tmp/all" "kubeconfig $tmp/wrongtok" "a refused tokenFile names the kubeconfig file"

BAO_TOKEN_T=wrong-token live 1 "OpenBao 403" -- --kubeconfig "$tmp/good"
has "$tmp/all" "refused the token from BAO_TOKEN" "a refused OpenBao token is said"
has "$tmp/all" "$url" "the OpenBao error names the address"

# The bao and vault CLIs' conventions (issue 30): with no flag and no
# BAO_TOKEN/VAULT_TOKEN, the token their token helper stored at login
# (~/.vault-token) is used; the flag and the variables come first.
# bao_live CODE WHAT HOME BAO_TOKEN -- ARGS...: a live run, that HOME, that
# BAO_TOKEN (empty: unset) and no VAULT_TOKEN.
bao_live() {
  want=$1; what=$2; home=$3; tok=$4; shift 5
  (unset VAULT_TOKEN BAO_SKIP_VERIFY VAULT_SKIP_VERIFY
   HOME=$home; export HOME; LIVE_BAO_TOKEN=$tok
   live_run --test-facade-clock "$@") >"$tmp/out" 2>"$tmp/err" </dev/null
  got=$?
  [ "$got" -eq "$want" ] || fail "$what: expected exit $want, got $got: $(cat "$tmp/out" "$tmp/err" | head -c 400)"
  cat "$tmp/out" "$tmp/err" >"$tmp/all"
  lacks "$tmp/all" "bao-token-err-2" "$what"
}
mkdir -p "$tmp/home" "$tmp/nohome"
printf 'wrong-helper-token\n' >"$tmp/home/.vault-token"
before=$(calls)
bao_live 1 "~/.vault-token is read" "$tmp/home" "" --
has "$tmp/all" "refused the token from $tmp/home/.vault-token" "the token helper's file is used and named"
lacks "$tmp/all" "wrong-helper-token" "~/.vault-token's token is never printed"
[ "$(calls)" = "$before" ] || fail "~/.vault-token: a call reached the world before the error"
bao_live 1 "BAO_TOKEN before ~/.vault-token" "$tmp/home" "wrong-env-token" --
has "$tmp/all" "refused the token from BAO_TOKEN" "BAO_TOKEN wins over ~/.vault-token"
printf 'bao-token-err-2\n' >"$tmp/home/.vault-token"
bao_live 1 "--openbao-token-file before ~/.vault-token" "$tmp/home" "" -- --openbao-token-file "$tmp/wrong.token"
has "$tmp/all" "refused the token from $tmp/wrong.token" "the flag wins over ~/.vault-token"
# No token anywhere is a usage error of the preflight (64), naming every
# place a token is looked for.
bao_live 64 "no token anywhere" "$tmp/nohome" "" --
has "$tmp/all" "give --openbao-token-file FILE, set BAO_TOKEN (or VAULT_TOKEN), or log in with bao (~/.vault-token)" "a missing token names every place looked"
: >"$tmp/nohome/.vault-token"
bao_live 64 "an empty ~/.vault-token is no token" "$tmp/nohome" "" --
has "$tmp/all" "or log in with bao (~/.vault-token)" "an empty ~/.vault-token is no token"
rm -f "$tmp/nohome/.vault-token"
mkdir "$tmp/nohome/.vault-token"
bao_live 65 "~/.vault-token a directory" "$tmp/nohome" "" --
has "$tmp/all" "$tmp/nohome/.vault-token" "an unreadable ~/.vault-token is named"
# BAO_SKIP_VERIFY/VAULT_SKIP_VERIFY: refused (64, before the kubeconfig is
# read), never silently ignored; a false value asks for what is done anyway.
for v in BAO_SKIP_VERIFY=true VAULT_SKIP_VERIFY=1 BAO_SKIP_VERIFY=yes; do
  before=$(calls)
  env "$v" BAO_ADDR="$url" BAO_TOKEN=bao-token-err-2 "$bin" run --transport live \
    --kubeconfig "$tmp/malformed" >"$tmp/out" 2>&1 </dev/null
  got=$?
  [ "$got" -eq 64 ] || fail "$v: expected exit 64, got $got: $(head -c 300 "$tmp/out")"
  has "$tmp/out" "${v%%=*} is set: reassert never skips TLS verification" "$v is refused, named"
  [ "$(calls)" = "$before" ] || fail "$v: a call reached the world"
done
(BAO_SKIP_VERIFY=false VAULT_SKIP_VERIFY=0; export BAO_SKIP_VERIFY VAULT_SKIP_VERIFY
 live_run --test-facade-clock --kubeconfig "$tmp/good" --check-only) >"$tmp/out" 2>&1 </dev/null ||
  fail "BAO_SKIP_VERIFY=false VAULT_SKIP_VERIFY=0: not a normal run: $(head -c 300 "$tmp/out")"

live 65 "decrypt command fails" -- --kubeconfig "$tmp/good" --decrypt-command "$tmp/decrypt-bad.sh"
has "$tmp/all" "could not decrypt" "a failed decrypt is said"
lacks "$tmp/all" "FORGED" "the decrypt command's stderr is not repeated"

printf 'stringData:\n  ghcr_dockerconfigjson: plaintext\n' >"$tmp/plain.yaml"
live 65 "a plaintext secret file" -- --kubeconfig "$tmp/good" --secret-file "$tmp/plain.yaml"
live 65 "a secret file without the key" -- --kubeconfig "$tmp/good" --secret-file "$tmp/kube.token"

# Usage errors (64), before anything is read.
LIVE_BAO_ADDR='' VAULT_ADDR='' live_run --kubeconfig "$tmp/good" >"$tmp/out" 2>&1
[ $? -eq 64 ] || fail "lazy repair without BAO_ADDR is not 64"
has "$tmp/out" "BAO_ADDR" "the missing OpenBao address is named"
"$bin" run --transport "sim:$w" --desired current --test-facade-clock >"$tmp/out" 2>&1
[ $? -eq 64 ] || fail "--test-facade-clock with the sim transport is not 64"
"$bin" run --transport live --desired current >"$tmp/out" 2>&1
[ $? -eq 64 ] || fail "--desired with the live transport is not 64"

# A good run works from here (so the failures above were the inputs).
live 0 "the good kubeconfig" -- --kubeconfig "$tmp/good" --check-only
[ "$(calls)" -gt 0 ] || fail "the good --check-only run reached nothing"

"$bin" run --help >"$tmp/help" 2>&1 || fail "run --help"
for word in --kubeconfig --context --talosconfig --talosctl --liveness-command --secret-file \
  --decrypt-command --openbao-token-file --test-facade-clock TEST-ONLY KUBECONFIG BAO_ADDR \
  VAULT_ADDR BAO_TOKEN VAULT_TOKEN .vault-token BAO_SKIP_VERIFY VAULT_SKIP_VERIFY \
  BAO_CACERT BAO_CAPATH BAO_NAMESPACE REASSERT_REGISTRY_URL \
  REASSERT_REGISTRY_CACERT GITHUB_RUN_ID tokenFile exec tls-server-name proxy-url; do
  has "$tmp/help" "$word" "run --help"
done
lacks "$tmp/help" "--transport live (so" "run --help no longer says live is not built"

echo "live errors: $fails failed"
[ "$fails" -eq 0 ]
