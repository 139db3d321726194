#!/bin/sh
# Hazard: H31, H35, H36, H37 — the --fences report order, CAS-guarded and shell-safe releases, no release for a mutating node.
# Hazard: H38 — a printed node release never restores schedulability (it removes only owner and phase), so a stale paste cannot undo a cordon someone set after the report.
# `--fences` as an operator uses it (DESIGN §3.4 r2; hazards H31, H35–H37):
# node and policy fences first and the Lease last; no release command for a
# node at phase `mutating`; every printed release command, pasted into sh,
# runs exactly one kubectl with a JSON Patch whose `test` ops carry the
# cluster's values byte for byte — even a holder full of quotes, `$(...)`,
# backticks and backslashes — and nothing else runs.
#
#   tests/check_fences_report.sh BUILD/reassert
set -u
bin=$1
case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passes=0
fails=0
ok() { passes=$((passes + 1)); }
fail() { echo "FAIL: $1"; fails=$((fails + 1)); }

# The hostile holder, as the YAML below spells it (a double-quoted scalar).
holder='abcdef0123456789-sim.o'"'"'k"$(touch PWNED)`touch PWNED2`\x-77-0000beef'
cat >"$tmp/s.yaml" <<'YAML'
name: fences-hostile
seed: 98
cluster: {preset: prod, credential: current}
desired: current
runs:
  - name: report
    args: [--fences]
    before:
      - kube.patch:
          ref: Lease/flux-system/ghcr-auth-refresh
          merge-patch: {spec: {holderIdentity: "abcdef0123456789-sim.o'k\"$(touch PWNED)`touch PWNED2`\\x-77-0000beef"}}
      - kube.patch:
          ref: Kustomization/flux-system/infrastructure
          merge-patch:
            metadata: {annotations: {platform.devantler.tech/ghcr-policy-handoff-owner: "abcdef0123456789-sim.o'k\"$(touch PWNED)`touch PWNED2`\\x-77-0000beef", kustomize.toolkit.fluxcd.io/reconcile: disabled}}
            spec: {suspend: true}
      - kube.patch:
          ref: Node/prod-worker-3
          merge-patch:
            metadata: {annotations: {platform.devantler.tech/ghcr-auth-drain-owner: "abcdef0123456789-sim.o'k\"$(touch PWNED)`touch PWNED2`\\x-77-0000beef", platform.devantler.tech/ghcr-auth-drain-phase: claimed}}
            spec: {unschedulable: true}
      - kube.patch:
          ref: Node/prod-worker-2
          merge-patch:
            metadata: {annotations: {platform.devantler.tech/ghcr-auth-drain-owner: "abcdef0123456789-sim.other-5-0000cafe", platform.devantler.tech/ghcr-auth-drain-phase: mutating}}
YAML
w=$tmp/w.db
"$bin" sim init --scenario "$tmp/s.yaml" --db "$w" --run report >/dev/null 2>&1 && ok || fail "sim init"
"$bin" run --transport sim:"$w" --desired current --fences >"$tmp/out" 2>&1
rc=$?
[ "$rc" -eq 0 ] && ok || fail "--fences exit $rc: $(head -c 400 "$tmp/out")"

# Order: the Lease is the last fence reported (H31).
last=$(grep 'fence held:' "$tmp/out" | tail -n 1)
case $last in *"Lease flux-system/ghcr-auth-refresh"*) ok ;; *) fail "the Lease is not reported last: $last" ;; esac
[ "$(grep -c 'fence held:' "$tmp/out")" -eq 4 ] && ok || fail "expected 4 fences: $(cat "$tmp/out")"

# The mutating node gets evidence, no release (H37).
grep -A1 'fence held: Node prod-worker-2' "$tmp/out" | grep -q 'no release printed' && ok ||
  fail "a mutating node got a release command"
grep 'release (CAS-guarded' "$tmp/out" | grep -q 'prod-worker-2' && fail "release printed for prod-worker-2" || ok

# Paste every printed release into sh with a kubectl that only records its argv.
mkdir "$tmp/bin" "$tmp/paste"
cat >"$tmp/bin/kubectl" <<'KUBECTL'
#!/bin/sh
n=$(ls "$KUBECTL_LOG" | wc -l)
for a in "$@"; do printf '%s\0' "$a"; done >"$KUBECTL_LOG/$n"
KUBECTL
chmod +x "$tmp/bin/kubectl"
mkdir "$tmp/log"
grep 'release (CAS-guarded' "$tmp/out" | sed 's/^.*release (CAS-guarded[^:]*: //' >"$tmp/cmds"
[ "$(wc -l <"$tmp/cmds")" -eq 3 ] && ok || fail "expected 3 release commands: $(cat "$tmp/cmds")"
while IFS= read -r cmd; do
  (cd "$tmp/paste" && PATH="$tmp/bin:$PATH" KUBECTL_LOG="$tmp/log" sh -c "$cmd") ||
    fail "a printed command does not run in sh: $cmd"
done <"$tmp/cmds"
[ -z "$(ls -A "$tmp/paste")" ] && ok || fail "pasting a release command ran something: $(ls -A "$tmp/paste")"
[ "$(ls "$tmp/log" | wc -l)" -eq 3 ] && ok || fail "expected 3 kubectl calls, got $(ls "$tmp/log" | wc -l)"

# Each call's patch tests UID, resourceVersion and the holder exactly (H35, H36).
HOLDER=$holder python3 - "$tmp/log" <<'PY' && ok || fail "patch contents (see above)"
import json, os, sys
want = os.environ["HOLDER"]
bad = 0
for name in sorted(os.listdir(sys.argv[1])):
    argv = open(os.path.join(sys.argv[1], name), "rb").read().split(b"\0")[:-1]
    argv = [a.decode() for a in argv]
    patch = json.loads(argv[argv.index("-p") + 1])
    tests = {op["path"]: op.get("value") for op in patch if op["op"] == "test"}
    if "/metadata/uid" not in tests or "/metadata/resourceVersion" not in tests:
        print("no UID/resourceVersion test:", argv); bad = 1
    if want not in tests.values():
        print("holder not tested byte for byte:", tests, "want", repr(want)); bad = 1
    touches = [op for op in patch if op["op"] != "test" and op["path"].startswith("/spec/unschedulable")]
    if touches:
        print("a release restores schedulability:", touches); bad = 1
sys.exit(bad)
PY

echo "fences report: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
