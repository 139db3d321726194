#!/bin/sh
# Live mode against `reassert sim serve`, kubeconfig edge cases as kubectl
# resolves them (DESIGN §7, README "Live mode"): each bad input is one clear
# error naming the kubeconfig/context/server (or the OpenBao address), exit 65
# for a malformed kubeconfig or unknown context and 1 for an unreachable,
# untrusted or refused endpoint, BEFORE any write (the Lease's
# resourceVersion does not move), and no token appears in any output.
# Args: reassert binary, source dir.
set -u
# A GitHub Actions step: errors are ::error:: lines (plain text is
# tests/check_ci_native.sh's).
GITHUB_ACTIONS=true
export GITHUB_ACTIONS
BIN=$1
SRC=$2
# shellcheck source=tests/lib_serve.sh
. "$SRC/tests/lib_serve.sh"
T=$(mktemp -d)
SPID=""
TPID=""
cleanup() {
  [ -n "$SPID" ] && kill "$SPID" 2>/dev/null
  [ -n "$TPID" ] && kill "$TPID" 2>/dev/null
  rm -rf "$T"
}
trap cleanup EXIT
cd "$T" || exit 1
FAILS=0
fail() { echo "FAIL: $*" >&2; FAILS=$((FAILS + 1)); }
command -v curl >/dev/null || { echo "FAIL: curl is needed" >&2; exit 1; }
command -v openssl >/dev/null || { echo "FAIL: openssl is needed" >&2; exit 1; }

KTOK=kube-kcfg-tok-3f9e1c
BTOK=bao-kcfg-tok-7a2d44
PASS=pw-kcfg-LIVE-81
printf '%s' "$KTOK" > ktok
printf '%s' "$BTOK" > btok
cat > w.yaml <<Y
# live probe world
name: kcfg-live
seed: 3
cluster: {preset: prod, credential: current}
desired: current
catalogue:
  current: {username: deploy-bot, password: "$PASS", ciphertext: "ENC[AES256_GCM,data:YWR2NQ==,type:str]"}
runs:
  - name: drift
    before:
      - kube.patch: {ref: Secret/flux-system/ksail-registry-credentials, merge-patch: {data: {.dockerconfigjson: "eyJhdXRocyI6e319"}}}
Y
printf 'stringData:\n  ghcr_dockerconfigjson: ENC[AES256_GCM,data:YWR2NQ==,type:str]\n' > secret.enc.yaml
printf '#!/bin/sh\nprintf %%s %s\n' "'{\"auths\":{\"ghcr.io\":{\"username\":\"deploy-bot\",\"password\":\"$PASS\"}}}'" > dec.sh
chmod +x dec.sh
"$BIN" sim init --scenario w.yaml --db w.db --run drift >/dev/null || { echo "FAIL: sim init" >&2; exit 1; }
cp w.db wt.db

start_serve() { # db outfile extra-args...
  db=$1; out=$2; shift 2
  serve_start "$BIN" "$out" "$out.err" --db "$db" --listen 127.0.0.1:0 --token-file ktok "$@" ||
    exit 1
  pid=$SERVE_PID
}
# Every server over TLS, as a cluster is (no token goes over plain http):
# the main one with a certificate for 127.0.0.1 (main.crt, its own CA).
openssl req -x509 -newkey rsa:2048 -nodes -keyout main.key -out main.crt -days 2 \
  -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 >/dev/null 2>&1
start_serve w.db serve.out --openbao-token-file btok --openbao-namespace kcfgns \
  --tls-cert main.crt --tls-key main.key
SPID=$pid
U=$(head -n 1 serve.out)
printf '{"context":"s","contexts":{"s":{"endpoints":["%s"],"ca":"%s","reassert-stub":{"token-file":"%s/ktok"}}}}\n' \
  "$U" "$(base64 -w0 main.crt)" "$T" > talosconfig
openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 2 -subj /CN=kcfg-ca >/dev/null 2>&1
openssl req -newkey rsa:2048 -nodes -keyout srv.key -out srv.csr -subj /CN=wrong.example >/dev/null 2>&1
printf 'subjectAltName=DNS:wrong.example\n' > ext
openssl x509 -req -in srv.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out srv.crt -days 2 -extfile ext >/dev/null 2>&1
start_serve wt.db tserve.out --tls-cert srv.crt --tls-key srv.key
TPID=$pid
TU=$(head -n 1 tserve.out)
CAD=$(base64 < ca.crt | tr -d '\n')

export BAO_ADDR="$U" REASSERT_REGISTRY_URL="$U" BAO_NAMESPACE=kcfgns BAO_CACERT="$T/main.crt" \
  REASSERT_REGISTRY_CACERT="$T/main.crt"
unset KUBECONFIG BAO_TOKEN VAULT_TOKEN VAULT_ADDR GITHUB_STEP_SUMMARY

leaserv() { curl -s --cacert main.crt -H "Authorization: Bearer $KTOK" "$U/apis/coordination.k8s.io/v1/namespaces/flux-system/leases/ghcr-auth-refresh" | tr ',' '\n' | grep '"resourceVersion"' | head -n 1; }
kc() { # file server user-yaml [cluster-extra: default, main.crt as the CA]
  set -- "$1" "$2" "$3" "${4:-certificate-authority: $T/main.crt}"
  cat > "$1" <<K
apiVersion: v1
kind: Config
clusters:
- name: sim
  cluster: {server: $2${4:+, $4}}
users:
- name: u
  user: $3
contexts:
- name: simctx
  context: {cluster: sim, user: u}
current-context: simctx
K
}
# case NAME WANT-EXIT NEEDLE -- run args...
case_() {
  name=$1; want=$2; needle=$3; shift 3
  before=$(leaserv)
  "$BIN" run --secret-file secret.enc.yaml --decrypt-command ./dec.sh --openbao-token-file btok \
    --talosctl "$SRC/tests/talosctl" --talosconfig talosconfig --test-facade-clock "$@" >"$name.out" 2>&1
  rc=$?
  after=$(leaserv)
  [ "$rc" -eq "$want" ] || { fail "$name: exit $rc, want $want"; sed 's/^/    /' "$name.out" | head -n 5 >&2; }
  [ -z "$needle" ] || grep -qF -- "$needle" "$name.out" || fail "$name: output does not name '$needle'"
  [ "$want" -eq 0 ] || [ "$before" = "$after" ] || fail "$name: the Lease moved ($before -> $after): a write before the refusal"
  if grep -qE "$KTOK|$BTOK|$PASS" "$name.out"; then fail "$name: a token or the password is in the output"; fi
  [ "$want" -eq 0 ] || [ "$(grep -c '^::error::' "$name.out")" -ge 1 ] || fail "$name: no ::error:: line"
}
UTOK="{token: $KTOK}"
kc ok.yaml "$U" "$UTOK"
kc dead.yaml https://127.0.0.1:1 "$UTOK"
[ -n "$(leaserv)" ] || { echo "FAIL: cannot read the Lease from sim serve" >&2; exit 1; }
case_ unreachable 1 "server https://127.0.0.1:1" --kubeconfig dead.yaml
KUBECONFIG="dead.yaml:ok.yaml" case_ merge-first-file-wins 1 "kubeconfig dead.yaml"
KUBECONFIG="/nonexistent-kcfg:ok.yaml" case_ merge-missing-file-skipped 0 "" --fences
KUBECONFIG=dead.yaml case_ flag-beats-env 0 "" --kubeconfig ok.yaml --fences
grep -v current-context ok.yaml > nocur.yaml
case_ no-current-context 65 "nocur.yaml" --kubeconfig nocur.yaml
printf 'apiVersion: v1\nkind: Config\ncurrent-context: simctx\n' > cur-only.yaml
KUBECONFIG="nocur.yaml:cur-only.yaml" case_ current-context-from-second 0 "" --fences
case_ unknown-context 65 '"nope"' --kubeconfig ok.yaml --context nope
case_ missing-kubeconfig 65 "/nonexistent-kcfg.yaml" --kubeconfig /nonexistent-kcfg.yaml
kc tokfile.yaml "$U" "{tokenFile: /nonexistent-kcfg-token}"
case_ tokenfile-missing 65 "/nonexistent-kcfg-token" --kubeconfig tokfile.yaml
mkdir -p sub && cp ktok sub/rel-token && kc sub/rel.yaml "$U" "{tokenFile: rel-token}"
case_ tokenfile-relative-to-kubeconfig 0 "" --kubeconfig sub/rel.yaml --fences
kc badtok.yaml "$U" "{token: wrong-token-kcfg}"
case_ refused-token 1 "HTTP 401" --kubeconfig badtok.yaml
kc c1.yaml "$U" "$UTOK"
kc c2.yaml "$U" "{token: wrong-token-kcfg}"
KUBECONFIG="c2.yaml:c1.yaml" case_ merge-user-first-wins 1 "kubeconfig c2.yaml"

exec_kc() { # file script
  printf '#!/bin/sh\n%s\n' "$2" > "$1.sh"
  chmod +x "$1.sh"
  kc "$1.yaml" "$U" "{exec: {apiVersion: client.authentication.k8s.io/v1, command: $T/$1.sh, interactiveMode: Never}}"
}
exec_kc ex-garbage "echo 'not json $KTOK'"
case_ exec-garbage 65 "ex-garbage.sh" --kubeconfig ex-garbage.yaml
exec_kc ex-expired "echo '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":{\"token\":\"$KTOK\",\"expirationTimestamp\":\"2001-01-01T00:00:00Z\"}}'"
case_ exec-expired 1 "expired" --kubeconfig ex-expired.yaml
exec_kc ex-fail "echo 'stderr holds $KTOK' >&2; exit 3"
case_ exec-nonzero 1 "ex-fail.sh" --kubeconfig ex-fail.yaml
exec_kc ex-v1beta1 "echo '{\"apiVersion\":\"client.authentication.k8s.io/v1beta1\",\"kind\":\"ExecCredential\",\"status\":{\"token\":\"$KTOK\"}}'"
case_ exec-wrong-apiversion 65 "ex-v1beta1.sh" --kubeconfig ex-v1beta1.yaml

kc tls-mismatch.yaml "$TU" "$UTOK" "certificate-authority-data: $CAD"
case_ tls-name-mismatch 1 "server $TU" --kubeconfig tls-mismatch.yaml
kc tls-sni.yaml "$TU" "$UTOK" "certificate-authority-data: $CAD, tls-server-name: wrong.example"
case_ tls-server-name 0 "" --kubeconfig tls-sni.yaml --fences
kc tls-untrusted.yaml "$TU" "$UTOK" "certificate-authority: $T/main.crt"
case_ tls-untrusted 1 "server $TU" --kubeconfig tls-untrusted.yaml
kc tls-badca.yaml "$TU" "$UTOK" "certificate-authority-data: '!!not-base64!!'"
case_ tls-ca-not-base64 65 "tls-badca.yaml" --kubeconfig tls-badca.yaml

printf 'wrong-bao-kcfg' > badbao
case_ openbao-403 1 "$U" --kubeconfig ok.yaml --openbao-token-file badbao
BAO_NAMESPACE=otherns case_ openbao-wrong-namespace 1 "otherns" --kubeconfig ok.yaml
BAO_ADDR=https://127.0.0.1:1 case_ openbao-unreachable 1 "https://127.0.0.1:1" --kubeconfig ok.yaml
# Last: the same inputs done right repair the drift (the cases above could write).
case_ repair 0 "" --kubeconfig ok.yaml
[ "$FAILS" -eq 0 ] || { echo "$FAILS case(s) failed" >&2; exit 1; }
echo "ok: every kubeconfig/OpenBao edge case refused before any write, no token printed"
