#!/bin/sh
# Live mode against `reassert sim
# serve` while kubectl, as a second client, mutates objects mid-run.
# Hazard: H8/H10 (the Lease taken by another actor while this run holds it:
# stop before the next write, release what this run holds, name
# `reassert --fences`), H79/H4 (a node cordoned by someone else is never
# uncordoned by this run), DESIGN §3.5.4 (a lazy run that finds the Lease
# held writes nothing) and §3.1/§6.6 (no credential or token in any output,
# child argv or child environment).
# The mutation is made deterministic by a talosctl wrapper (--talosctl): the
# run calls it to read each node's Talos auth; its first call runs kubectl
# against the façade, then it fails (the node is decided on annotations).
# Usage: check_live_kubectl_mid_run.sh BUILD/reassert SOURCE_DIR
set -u
B=$1
command -v kubectl >/dev/null 2>&1 || { echo "FAIL: kubectl not on PATH"; exit 1; }
d=$(mktemp -d "${TMPDIR:-/tmp}/midrun-live.XXXXXX")
sp=
cleanup() { [ -n "$sp" ] && kill "$sp" 2>/dev/null; rm -rf "$d"; }
trap cleanup EXIT INT TERM
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

PASS_WORD='P4ss-midrun-Zq81'
USERPASS_B64='bWlkcnVuLWJvdDpQNHNzLW1pZHJ1bi1acTgx'
BAO_SECRET='bao-tok-midrun-Q7w2'
cat >"$d/w.yaml" <<'EOF'
name: midrun-live
seed: 5
cluster: {preset: prod, credential: current, workers: 1, control-planes: 1}
desired: current
catalogue:
  current: {username: midrun-bot, password: P4ss-midrun-Zq81, ciphertext: "ENC[AES256_GCM,data:midruncurrent,iv:x,tag:y,type:str]"}
runs:
  - name: r
EOF
cat >"$d/secret.enc.yaml" <<'EOF'
apiVersion: v1
kind: Secret
metadata: {name: variables-base, namespace: flux-system}
stringData:
  ghcr_dockerconfigjson: ENC[AES256_GCM,data:midruncurrent,iv:x,tag:y,type:str]
EOF
cat >"$d/decrypt.sh" <<'EOF'
#!/bin/sh
printf '%s' '{"auths":{"ghcr.io":{"username":"midrun-bot","password":"P4ss-midrun-Zq81","auth":"bWlkcnVuLWJvdDpQNHNzLW1pZHJ1bi1acTgx"}}}'
EOF
printf '%s\n' "$BAO_SECRET" >"$d/bao.tok"
cat >"$d/talosctl" <<EOF
#!/bin/sh
echo "argv: \$*" >>"$d/talos.log"
env >>"$d/talos.env"
if mkdir "$d/hook.done" 2>/dev/null && [ -f "$d/hook" ]; then
  sh "$d/hook" >>"$d/hook.log" 2>&1 || echo "hook failed" >>"$d/hook.log"
fi
echo "auth not readable here" >&2
exit 1
EOF
chmod +x "$d/decrypt.sh" "$d/talosctl"
K="kubectl --kubeconfig $d/kc.yaml"
# Over TLS, as against a cluster (no token goes over plain http); the
# talosconfig the wrapper above is handed (it reads none) must exist.
(cd "$d" && openssl req -x509 -newkey rsa:2048 -nodes -keyout tls.key -out tls.pem -days 2 \
  -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 >/dev/null 2>&1) || fail "openssl"
printf '{}\n' >"$d/talosconfig"

# run_case NAME HOOK [run args...]: fresh world, serve it, run once.
run_case() {
  name=$1 hook=$2; shift 2
  rm -rf "$d/w.db" "$d/hook.done" "$d/hook.log" "$d/talos.log" "$d/talos.env"
  "$B" sim init --scenario "$d/w.yaml" --db "$d/w.db" >/dev/null || { fail "$name: sim init"; return; }
  : >"$d/serve.out"
  "$B" sim serve --db "$d/w.db" --openbao-token-file "$d/bao.tok" --tls-cert "$d/tls.pem" \
    --tls-key "$d/tls.key" >"$d/serve.out" 2>"$d/serve.err" &
  sp=$!
  i=0
  while [ ! -s "$d/serve.out" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
  url=$(head -n 1 "$d/serve.out")
  [ -n "$url" ] || { fail "$name: sim serve printed no URL"; return; }
  cat >"$d/kc.yaml" <<EOF
apiVersion: v1
kind: Config
clusters: [{name: sim, cluster: {server: "$url", certificate-authority: $d/tls.pem}}]
users: [{name: u, user: {token: kube-token-adv6-4e9d}}]
contexts: [{name: sim, context: {cluster: sim, user: u}}]
current-context: sim
EOF
  printf '%s\n' "$hook" >"$d/hook"
  BAO_ADDR=$url BAO_CACERT=$d/tls.pem BAO_TOKEN=$BAO_SECRET REASSERT_REGISTRY_URL=$url \
    REASSERT_REGISTRY_CACERT=$d/tls.pem \
    "$B" run --kubeconfig "$d/kc.yaml" --secret-file "$d/secret.enc.yaml" \
    --decrypt-command "$d/decrypt.sh" --talosctl "$d/talosctl" --talosconfig "$d/talosconfig" \
    --test-facade-clock "$@" >"$d/$name.out" 2>"$d/$name.err"
  rc=$?
  [ -d "$d/hook.done" ] || fail "$name: the run never called talosctl, so kubectl never acted"
  grep -q 'hook failed' "$d/hook.log" 2>/dev/null && fail "$name: kubectl failed: $(cat "$d/hook.log")"
  # No credential or token anywhere: run output, talosctl argv and env.
  for f in "$d/$name.out" "$d/$name.err" "$d/talos.log" "$d/talos.env"; do
    [ -f "$f" ] || continue
    for s in "$PASS_WORD" "$USERPASS_B64" "$BAO_SECRET" kube-token-adv6-4e9d; do
      grep -qF "$s" "$f" && fail "$name: a secret appears in $(basename "$f")"
    done
  done
}
stop_serve() { kill "$sp" 2>/dev/null; wait "$sp" 2>/dev/null; sp=; }
node_field() { $K get node "$1" -o "jsonpath=$2"; }
ks_suspend() { $K -n flux-system get kustomizations.kustomize.toolkit.fluxcd.io "$1" -o jsonpath='{.spec.suspend}'; }
holder() { $K -n flux-system get lease ghcr-auth-refresh -o jsonpath='{.spec.holderIdentity}'; }

TAKE="$K -n flux-system patch lease ghcr-auth-refresh --type merge -p '{\"spec\":{\"holderIdentity\":\"kubectl-other-holder\"}}'"

# 1. eager holds the whole fence when kubectl takes the Lease: exit 1 naming
#    `reassert --fences`, both policy fences released, the other holder kept,
#    no node fence taken.
run_case eager-take "$TAKE" --strategy eager
[ "$rc" = 1 ] || fail "eager-take: exit $rc, want 1"
grep -q 'reassert --fences' "$d/eager-take.out" "$d/eager-take.err" || fail "eager-take: no message names reassert --fences"
[ "$(holder)" = kubectl-other-holder ] || fail "eager-take: Lease holder is '$(holder)', want the other actor's"
[ "$(ks_suspend flux-system)" = false ] || fail "eager-take: parent Kustomization left suspended"
[ "$(ks_suspend infrastructure)" = false ] || fail "eager-take: child Kustomization left suspended"
for n in prod-worker-1 prod-control-plane-1; do
  [ -z "$(node_field $n '{.metadata.annotations.platform\.devantler\.tech/ghcr-auth-drain-owner}')" ] ||
    fail "eager-take: $n carries a drain owner"
done
stop_serve

# 2. lazy on a converged cluster: the Lease taken mid read-only pass. Exit 1,
#    no write at all (one JSON document with writes 0), Lease untouched.
run_case lazy-take "$TAKE" --output json
[ "$rc" = 1 ] || fail "lazy-take: exit $rc, want 1"
python3 - "$d/lazy-take.out" <<'EOF' || fail "lazy-take: result document wrong (want writes 0, lease_writes 0, fence not taken)"
import json, sys
doc = json.load(open(sys.argv[1]))
c = doc["counters"]
sys.exit(0 if doc["exit"] == 1 and c["writes"] == 0 and c["lease_writes"] == 0
         and not doc["fence_taken"] else 1)
EOF
[ "$(holder)" = kubectl-other-holder ] || fail "lazy-take: Lease holder is '$(holder)'"
stop_serve

# 3. kubectl cordons a worker mid-run (no drift): both strategies finish
#    (exit 0) and leave the node cordoned; they never uncordon it.
for s in eager lazy; do
  run_case "cordon-$s" "$K cordon prod-worker-1" --strategy "$s"
  [ "$rc" = 0 ] || fail "cordon-$s: exit $rc, want 0"
  [ "$(node_field prod-worker-1 '{.spec.unschedulable}')" = true ] || fail "cordon-$s: the run uncordoned a node it did not cordon"
  [ "$(holder)" = "" ] || fail "cordon-$s: Lease left held"
  stop_serve
done

[ $fails = 0 ] && echo "check_live_kubectl_mid_run: all cases passed"
[ $fails = 0 ]
