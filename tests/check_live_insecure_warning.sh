#!/bin/sh
# A kubeconfig's `insecure-skip-tls-verify: true` is honoured, as kubectl
# honours it, but never silently: the run warns on stderr at once and in
# `--output json`'s `warnings` (and so in the job summary), naming the
# cluster, context, server and kubeconfig file — also when the run then
# fails. A kubeconfig that verifies gets no such warning. Fails on a main
# that honoured the flag without a word.
#
#   tests/check_live_insecure_warning.sh BUILD/reassert SOURCE_ROOT
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
cat >"$tmp/insecure" <<EOF
current-context: dev
clusters: [{name: lab, cluster: {server: "$SERVE_URL", insecure-skip-tls-verify: true}}]
users: [{name: bot, user: {tokenFile: kube.token}}]
contexts: [{name: dev, context: {cluster: lab, user: bot}}]
EOF
warning="insecure-skip-tls-verify: true for cluster lab (context dev, server $SERVE_URL, kubeconfig $tmp/insecure)"

live_run --fences --kubeconfig "$tmp/insecure" >"$tmp/out" 2>"$tmp/err" </dev/null ||
  fail "--fences with an insecure kubeconfig: exit $?: $(head -c 400 "$tmp/err")"
has "$tmp/err" "warning: $warning" "text mode: the warning on stderr"
lacks "$tmp/err" "::warning::" "text mode outside GitHub Actions: no workflow command"
lacks "$tmp/out" "insecure-skip-tls-verify" "text mode: said once, on stderr"

# In a GitHub Actions step the warning is a workflow command (an annotation).
(GITHUB_ACTIONS=true; export GITHUB_ACTIONS
  live_run --fences --kubeconfig "$tmp/insecure" --output json) >"$tmp/out" 2>"$tmp/err" </dev/null ||
  fail "--fences --output json with an insecure kubeconfig: exit $?"
has "$tmp/err" "::warning::$warning" "JSON mode: the warning on stderr"
jq -e --arg w "$warning" 'any(.warnings[]; startswith($w))' "$tmp/out" >/dev/null ||
  fail "JSON mode: the warning is not in warnings: $(cat "$tmp/out")"

# A run that fails (its talosctl missing) still carries the warning.
live_run --kubeconfig "$tmp/insecure" --talosctl /nonexistent --output json \
  >"$tmp/out" 2>"$tmp/err" </dev/null
rc=$?
[ $rc -eq 65 ] || fail "the failing run: exit $rc, not 65"
jq -e --arg w "$warning" 'any(.warnings[]; startswith($w))' "$tmp/out" >/dev/null ||
  fail "a failing run: the warning is not in warnings: $(cat "$tmp/out")"

# A kubeconfig that verifies the server: no warning.
live_run --fences --output json >"$tmp/out" 2>"$tmp/err" </dev/null || fail "--fences: exit $?"
lacks "$tmp/err" "insecure-skip-tls-verify" "a verifying kubeconfig"
[ "$(jq '.warnings | length' "$tmp/out")" = 0 ] || fail "a verifying kubeconfig: warnings $(cat "$tmp/out")"

echo "live insecure warning: $fails failed"
[ "$fails" -eq 0 ]
