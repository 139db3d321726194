#!/bin/sh
# `reassert sweep`'s own machinery (the searches over the rotation are the
# sweep/ tests): the same scenario and seed give byte-identical --json; the
# shards of a sweep are disjoint and cover it; a failing plan is shrunk to
# the faults that fail, printed with the one command that replays it, the
# command reproduces it exactly, and --emit-scenario writes it as a scenario
# that loads and fails the same way; usage errors exit 64, a bad scenario or
# perturbation menu 65.
#
# The failing plan comes from a perturbation menu entry whose event cannot
# apply (it deletes an object that does not exist): a plan that reaches it
# fails, whatever the core does, so the shrinker has something to find.
set -u
bin=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
passes=0
ok() { passes=$((passes + 1)); }
fail() { echo "FAIL: $1"; fails=$((fails + 1)); }
expect() { # expect CODE DESCRIPTION -- ARGS...
  want=$1; what=$2; shift 3
  "$bin" "$@" >"$tmp/out" 2>"$tmp/err"
  got=$?
  if [ "$got" -eq "$want" ]; then ok; else
    fail "$what: expected exit $want, got $got: $(head -c 400 "$tmp/out" "$tmp/err")"; fi
}
expect_in() { # expect_in FILE TEXT DESCRIPTION
  if grep -qF -- "$2" "$1"; then ok; else fail "$3: $1 lacks '$2': $(head -c 400 "$1")"; fi
}

# A small scenario: the no-drift Reassert alone (49 calls, no write).
scn=$tmp/small.yaml
cat >"$scn" <<'EOF'
# Hazard: none — a fixture for the sweep's own checks.
name: sweep-fixture
seed: 5
strategies: [lazy]
cluster: {preset: prod, credential: current}
desired: current
perturb-menu:
  - name: patch-refused   # an event that can never apply (its JSON Patch test fails)
    do: {kube.patch: {ref: Secret/flux-system/variables-base, json-patch: [{op: test, path: /metadata/name, value: not-this}]}}
runs:
  - name: reassert
EOF

# Determinism: twice the same swarm, byte for byte.
expect 0 "swarm --json (1)" -- sweep "$scn" --swarm 12 --seed 9 --json
cp "$tmp/out" "$tmp/a.json"
expect 0 "swarm --json (2)" -- sweep "$scn" --swarm 12 --seed 9 --json
if cmp -s "$tmp/a.json" "$tmp/out"; then ok; else fail "the same seed gave different --json"; fi
jq -e '.plans == 12 and .failed == 0 and .passed == true' "$tmp/a.json" >/dev/null && ok ||
  fail "swarm --json: $(head -c 300 "$tmp/a.json")"

# Shards: 1/3, 2/3 and 3/3 are disjoint and together are the whole sweep.
expect 0 "swarm --json" -- sweep "$scn" --swarm 24 --seed 2 --json
jq -c '.sections[].plans[] | [.swarm_plan, .plan, .verdict]' "$tmp/out" | sort >"$tmp/all"
: >"$tmp/parts"
for i in 1 2 3; do
  expect 0 "swarm --shard $i/3" -- sweep "$scn" --swarm 24 --seed 2 --json --shard "$i/3"
  jq -c '.sections[].plans[] | [.swarm_plan, .plan, .verdict]' "$tmp/out" >>"$tmp/parts"
done
sort "$tmp/parts" >"$tmp/parts.sorted"
if [ "$(wc -l <"$tmp/all")" -eq 24 ] && cmp -s "$tmp/all" "$tmp/parts.sorted"; then ok; else
  fail "shards 1/3..3/3 are not the whole swarm ($(wc -l <"$tmp/all") vs $(wc -l <"$tmp/parts"))"; fi
[ "$(sort -u "$tmp/parts" | wc -l)" -eq 24 ] && ok || fail "shards overlap"
# The perturbation sweep: every menu event before every call; shard 1/12 of
# the 49 x 13 plans still meets every menu entry (12 and 13 are coprime).
# The fixture's patch-refused entry fails its plans: exit 1.
expect 1 "perturb --json" -- sweep "$scn" --perturb --json --shard 1/12
jq -c '.sections[].plans[] | [.call, .event, .verdict]' "$tmp/out" >"$tmp/all"
# The built-in menu covers what other actors do, and the scenario adds to it.
for ev in cordon uncordon taint node-replace node-add lease-touch lease-take consumer-revert \
  openbao-restore flux-reconcile controller-pod-stall registry-revoke patch-refused; do
  grep -q "\"$ev\"" "$tmp/all" && ok || fail "perturb: no plan with menu event $ev"
done

# A plan that fails: shrunk to its one failing fault, with the command.
plan='3:timeout,7:perturb=patch-refused,20:latency=500'
expect 1 "a failing plan" -- sweep "$scn" --run reassert --strategy lazy --plan "$plan" --json
jq -e '.failed == 1' "$tmp/out" >/dev/null && ok || fail "--plan did not fail: $(head -c 300 "$tmp/out")"
expect 1 "a swarm that finds it" -- sweep "$scn" --swarm 40 --seed 1
expect_in "$tmp/out" "shrunk from" "the swarm shrinks a failing plan"
expect_in "$tmp/out" "perturb=patch-refused" "the shrunk plan keeps the failing fault"
cmd=$(grep -m1 'reproduce: ' "$tmp/out" | sed 's/.*reproduce: reassert //')
[ -n "$cmd" ] && ok || fail "no reproduce line"
shrunk=$(grep -m1 'shrunk from' "$tmp/out" | sed 's/.*fault(s): //')
case $shrunk in *,*) fail "not shrunk to one fault: $shrunk" ;; *:perturb=patch-refused) ok ;;
  *) fail "shrunk to something else: $shrunk" ;; esac
eval "set -- $cmd"
expect 1 "the reproduce command fails the same way" -- "$@"
expect_in "$tmp/out" "could not apply its event" "the reproduced failure is the same"

# --emit-scenario: a scenario that loads and fails the same way; never over a file.
expect 1 "--emit-scenario" -- sweep "$scn" --swarm 40 --seed 1 --emit-scenario "$tmp/found.yaml"
[ -f "$tmp/found.yaml" ] && ok || fail "--emit-scenario wrote nothing"
expect_in "$tmp/found.yaml" "# Found by: reassert sweep" "the emitted scenario says how it was found"
expect 1 "the emitted scenario fails" -- sim "$tmp/found.yaml"
expect_in "$tmp/out" "could not apply its event" "the emitted scenario fails the same way"
expect 64 "--emit-scenario over a file" -- sweep "$scn" --swarm 2 --emit-scenario "$tmp/found.yaml"

# Usage (64) and data (65) errors.
expect 64 "no scenario" -- sweep
expect 64 "unknown option" -- sweep "$scn" --bogus
expect 64 "unknown --run" -- sweep "$scn" --run nope
expect 64 "bad --shard" -- sweep "$scn" --shard 3/2
expect 64 "bad --shard 0" -- sweep "$scn" --shard 0/2
expect 64 "bad --plan" -- sweep "$scn" --plan "x:crash"
expect 64 "unknown effect" -- sweep "$scn" --plan "1:explode"
expect 64 "unknown menu entry" -- sweep "$scn" --plan "1:perturb=nope"
expect 64 "--seed without --swarm" -- sweep "$scn" --seed 3
expect 64 "two modes" -- sweep "$scn" --perturb --swarm 3
expect 65 "a scenario that does not load" -- sweep "$src/tests/harness/inputs/does-not-exist.yaml"
printf 'name: x\nperturb-menu: [{name: Bad_Name, do: {advance: 1s}}]\n' >"$tmp/bad.yaml"
expect 65 "a bad perturbation menu" -- sweep "$tmp/bad.yaml"

echo "check_sweep: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
