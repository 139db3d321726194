#!/bin/sh
# Preflight: before its first cluster call, a live run checks every external
# input its mode uses — talosctl executable, a talosconfig readable, the
# decrypt command executable, the kubeconfig (and its exec plugin), OpenBao's
# address and token, the CA files it is given — and reports every problem
# together, one error each: exit 64 when the invocation names no source for
# an input (BAO_ADDR, an OpenBao token), else 65; 64 wins. A mode is never
# asked for what it does not use: --check-only talks to the registry alone,
# --fences and --recover-fences need no credential, no Talos and no OpenBao,
# eager never reads OpenBao.
#
# Hazard: H27 — --fences/--recover-fences must work without the credential.
# The first case is the defect this pins: on a drifted world, a run with
# `--talosctl /nonexistent` took the Lease, paused Flux, restarted the
# controller and wrote before it failed; now it makes no call at all.
#
#   tests/check_live_preflight.sh BUILD/reassert SOURCE_ROOT
set -u
bin=$1
src=$2
tmp=$(mktemp -d)
SERVE_PID=
cleanup() {
  [ -n "$SERVE_PID" ] && kill "$SERVE_PID" 2>/dev/null
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
# What a run that reached the world would have moved: the world's call
# counter, the Lease, the parent Kustomization, the controller.
state() {
  sqlite3 "$w" "select coalesce((select value from counters where name='api_calls'),0)
    || ' ' || (select body from objects where kind='Lease')
    || (select body from objects where kind='Kustomization' and name='flux-system')
    || (select body from objects where kind='Deployment' and name='kustomize-controller')"
}
# run CODE WHAT ARGS...: live_run with ARGS; the exit must be CODE, no
# output may hold a token or the password, and a refused run (CODE != 0)
# must not have reached the world.
run() {
  want=$1 what=$2
  shift 2
  before=$(state)
  live_run "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
  got=$?
  cat "$tmp/out" "$tmp/err" >"$tmp/all"
  [ "$got" -eq "$want" ] || fail "$what: expected exit $want, got $got: $(head -c 600 "$tmp/all")"
  [ "$want" -eq 0 ] || [ "$(state)" = "$before" ] || fail "$what: the world changed before the error"
  for s in "$LIVE_PASS" kube-token-live-5d0b1c bao-token-live-7e2a94; do
    lacks "$tmp/all" "$s" "$what: a secret in the output"
  done
}

# The defect: talosctl missing on a drifted world. Nothing taken, nothing
# written, one error naming the flag.
run 65 "a missing talosctl" --test-facade-clock --talosctl /nonexistent
has "$tmp/all" "--talosctl /nonexistent" "the missing talosctl is named"
lacks "$tmp/all" "taking Lease" "no Lease is taken"
lacks "$tmp/all" "restarted" "the controller is not restarted"

# Every problem at once, 64 winning: no BAO_ADDR, no OpenBao token, no
# kubeconfig, an unreadable talosconfig, a decrypt command that is not
# executable, no talosctl — six errors, none hiding another.
printf '#!/bin/sh\nexit 0\n' >"$tmp/not-executable.sh"
chmod 600 "$tmp/not-executable.sh"
LIVE_BAO_ADDR='' LIVE_BAO_TOKEN='' run 64 "every input missing" --output json \
  --kubeconfig "$tmp/no-such-kubeconfig" --talosconfig "$tmp/no-such-talosconfig" \
  --decrypt-command "$tmp/not-executable.sh" --talosctl "$tmp/no-such-talosctl"
for word in BAO_ADDR BAO_TOKEN "$tmp/no-such-kubeconfig" "$tmp/no-such-talosconfig" \
  "$tmp/not-executable.sh: it is not executable" "$tmp/no-such-talosctl"; do
  has "$tmp/all" "$word" "every input missing"
done
[ "$(jq '.errors | length' "$tmp/out")" = 6 ] ||
  fail "every input missing: not six errors in the JSON document: $(cat "$tmp/out")"
[ "$(jq .exit "$tmp/out")" = 64 ] || fail "every input missing: the document's exit is not 64"
# The issue's own example: a missing BAO_ADDR no longer hides a missing
# kubeconfig.
LIVE_BAO_ADDR='' run 64 "no BAO_ADDR and no kubeconfig" --kubeconfig "$tmp/no-such-kubeconfig"
has "$tmp/all" "BAO_ADDR" "the missing OpenBao address is named"
has "$tmp/all" "$tmp/no-such-kubeconfig" "beside it, the missing kubeconfig"
# A given input that cannot be used is 65: a talosconfig that is a folder,
# a token file that is not there.
run 65 "a talosconfig that is a folder, a token file not there" --talosconfig "$tmp" \
  --openbao-token-file "$tmp/no-such-token"
has "$tmp/all" "--talosconfig $tmp: it is a directory" "the folder is named"
has "$tmp/all" "--openbao-token-file $tmp/no-such-token" "the token file is named"
# A program without a '/' is looked for on PATH, as talosctl's default is.
PATH=/nonexistent-dir:/usr/bin:/bin run 65 "no talosctl on PATH" --talosctl talosctl-not-installed
has "$tmp/all" "talosctl-not-installed: no executable file of that name on PATH" \
  "a program missing from PATH is named"
# The exec plugin of the kubeconfig's user is looked at too.
cat >"$tmp/exec-kubeconfig" <<EOF
current-context: sim
clusters: [{name: sim, cluster: {server: "$SERVE_URL", certificate-authority: tls.pem}}]
users: [{name: bot, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: ./no-plugin, interactiveMode: Never}}}]
contexts: [{name: sim, context: {cluster: sim, user: bot}}]
EOF
run 65 "an exec plugin that is not there" --kubeconfig "$tmp/exec-kubeconfig"
has "$tmp/all" "exec plugin of user bot" "the exec plugin is named"

# What a mode does not use is not demanded. --check-only: the credential
# and the registry alone (no kubeconfig, no Talos, no OpenBao).
LIVE_BAO_ADDR='' LIVE_BAO_TOKEN='' run 0 "--check-only needs the credential and the registry only" \
  --check-only --kubeconfig "$tmp/no-such-kubeconfig" --talosctl /nonexistent \
  --talosconfig "$tmp/no-such-talosconfig"
# --fences and --recover-fences: the kubeconfig alone (H27: no credential).
for mode in --fences --recover-fences; do
  LIVE_BAO_ADDR='' LIVE_BAO_TOKEN='' run 0 "$mode needs the kubeconfig only" "$mode" \
    --secret-file "$tmp/no-such-secret" --decrypt-command /nonexistent --talosctl /nonexistent \
    --talosconfig "$tmp/no-such-talosconfig"
done
# ... and its liveness command, when one is given.
run 65 "--fences with a liveness command that is not there" --fences \
  --liveness-command "/nonexistent/gh run view {run} --attempt {attempt}"
has "$tmp/all" "--liveness-command /nonexistent/gh" "the liveness command is named"
# eager never reads OpenBao: not asked for, while its talosctl still is.
LIVE_BAO_ADDR='' LIVE_BAO_TOKEN='' run 65 "eager needs no OpenBao" --strategy eager \
  --talosctl /nonexistent
lacks "$tmp/all" "BAO_ADDR" "eager is not asked for OpenBao"
has "$tmp/all" "--talosctl /nonexistent" "eager's talosctl is checked"

# The default secret file is looked for where it says it is.
(cd "$tmp" && BAO_ADDR=$SERVE_URL BAO_TOKEN=bao-token-live-7e2a94 "$bin" run --transport live \
  --kubeconfig "$tmp/kubeconfig" --talosctl "$src/tests/talosctl" \
  --talosconfig "$tmp/talosconfig" >"$tmp/out" 2>&1 </dev/null)
rc=$?
[ $rc -eq 65 ] || fail "the default secret file missing: exit $rc, not 65"
has "$tmp/out" "k8s/bases/bootstrap/secret.enc.yaml" "the default secret file is named"

# With every input good, the run goes on (so each refusal above was its
# inputs).
run 0 "every input good" --check-only

echo "live preflight: $fails failed"
[ "$fails" -eq 0 ]
