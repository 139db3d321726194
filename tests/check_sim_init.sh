#!/bin/sh
# `reassert sim init` + `reassert run --transport sim:WORLD.db` by hand, as
# the README shows: the world builds, a run against it prints one JSON result
# with its counters, and the runtime proof file is written the way the CLI
# contract says (mode 0600, once, never over a file, never through a symlink).
# Bad scenarios exit 65, usage errors and a non-world target exit 64.
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
    fail "$what: expected exit $want, got $got: $(head -c 300 "$tmp/out" "$tmp/err")"; fi
}
expect_in() { # expect_in FILE TEXT DESCRIPTION
  if grep -qF -- "$2" "$1"; then ok; else fail "$3: $1 lacks '$2': $(head -c 300 "$1")"; fi
}

scn=$src/scenarios/two-run-stage-reassert.yaml
w=$tmp/world.db

expect 0 "sim init --help" -- sim init --help
expect_in "$tmp/out" "--scenario FILE --db WORLD.db" "sim init --help shows usage"
for c in run sim sweep replay; do
  expect 0 "$c --help" -- $c --help
done
expect 0 "sim serve --help" -- sim serve --help
expect_in "$tmp/out" "loopback address only" "sim serve --help says it serves loopback only"
expect 64 "sweep refuses an unknown --run" -- sweep "$scn" --run no-such-run
expect 64 "sim serve refuses a non-loopback address" -- sim serve --db "$w" --listen 0.0.0.0:0

expect 0 "sim init builds the world" -- sim init --scenario "$scn" --db "$w"
expect_in "$tmp/out" "--transport sim:$w --desired current" "sim init prints the run to try"
expect 0 "run against the world" -- run --transport sim:"$w" --desired current --output json
expect_in "$tmp/out" '"exit":0' "JSON result: exit"
expect_in "$tmp/out" '"outcome":"repaired"' "JSON result: outcome of the first run"
expect_in "$tmp/out" '"counters":{"controller_restarts":1' "JSON result: counters"
expect_in "$tmp/out" '"api_calls":' "JSON result: api_calls counted"
[ "$(wc -l <"$tmp/out")" -eq 1 ] && ok || fail "JSON mode prints exactly one line"
expect 0 "a second run finds no drift" -- run --transport sim:"$w" --desired current --output json
expect_in "$tmp/out" '"outcome":"converged"' "JSON result: converged"
expect_in "$tmp/out" '"writes":0' "JSON result: no writes"

# Rebuilding over a world is allowed; over anything else it is refused.
expect 0 "sim init replaces a world" -- sim init --scenario "$scn" --db "$w"
echo "precious" >"$tmp/data.txt"
expect 64 "sim init refuses a non-world file" -- sim init --scenario "$scn" --db "$tmp/data.txt"
expect_in "$tmp/err" "is not a sim world" "refusal says why"
expect_in "$tmp/data.txt" "precious" "the non-world file is untouched"
expect 64 "sim init without --db" -- sim init --scenario "$scn"
expect 64 "sim init unknown run" -- sim init --scenario "$scn" --db "$w" --run nosuch
printf 'name: broken\nseed: 1\ncluster: {preset: prod, credential: previous}\ndesired: current\nruns:\n  - name: r\n    colour: red\n' >"$tmp/bad.yaml"
expect 65 "sim init bad scenario" -- sim init --scenario "$tmp/bad.yaml" --db "$tmp/bad.db"
expect_in "$tmp/err" "bad.yaml:7:5" "bad scenario names file:line:col"
expect 0 "sim init with a run's before: events" -- sim init --scenario "$src/scenarios/node/runtime-proof-reuse.yaml" --db "$w" --run reassert-replaced
expect_in "$tmp/out" "before: events of run reassert-replaced" "sim init names the run"

# The runtime proof file.
expect 0 "sim init for the proof" -- sim init --scenario "$scn" --db "$w"
expect 0 "stage records the proof" -- run --transport sim:"$w" --desired current --record-runtime-proof "$tmp/proof.json"
expect_in "$tmp/out" "runtime proof recorded at $tmp/proof.json" "record run says where"
[ "$(stat -c %a "$tmp/proof.json" 2>/dev/null)" = 600 ] && ok || fail "proof mode is 0600"
expect_in "$tmp/proof.json" '"nodes"' "proof holds the nodes"
ls -a "$tmp" | grep -q '^\.proof\.json\.' && fail "a temp file was left" || ok
expect 1 "a proof never overwrites" -- run --transport sim:"$w" --desired current --record-runtime-proof "$tmp/proof.json"
expect_in "$tmp/out" "an existing file is never overwritten" "overwrite refusal says why"
ln -s "$tmp/target.json" "$tmp/link.json"
expect 1 "a proof is never written through a symlink" -- run --transport sim:"$w" --desired current --record-runtime-proof "$tmp/link.json"
expect_in "$tmp/out" "symbolic link" "symlink refusal says why"
[ ! -e "$tmp/target.json" ] && ok || fail "the symlink's target was created"
expect 0 "reassert reuses the proof" -- run --transport sim:"$w" --desired current --reuse-runtime-proof "$tmp/proof.json" --output json
expect_in "$tmp/out" '"warnings":[]' "reused proof gives no warning"

# Each drift notice prints once (DESIGN §7.1 r2), even though lazy finds the
# same drift again in the round it restarts under the fence.
w2=$tmp/drifted.db
expect 0 "sim init (drifted world)" -- sim init --scenario "$scn" --db "$w2"
# (in a GitHub Actions step: the groups below are its ::group:: lines)
GITHUB_ACTIONS=true
export GITHUB_ACTIONS
expect 0 "text run on the drifted world" -- run --transport sim:"$w2" --desired current
unset GITHUB_ACTIONS
cat "$tmp/out" "$tmp/err" | grep 'drift:' >"$tmp/drift"
expect_in "$tmp/drift" "drift: variables-base differs" "a drift notice is printed"
dups=$(sort "$tmp/drift" | uniq -d)
[ -z "$dups" ] && ok || fail "drift notices printed more than once: $dups"

# Log groups never nest, every group is closed, and the lazy fence (taken in
# the middle of the fan-out) is in a group of its own (DESIGN §7.1 r2).
groups=$(cat "$tmp/out" "$tmp/err" | awk '
  /^::group::/    { if (open) { print "nested group: " $0; bad = 1 } open = 1; title = $0; next }
  /^::endgroup::/ { if (!open) { print "endgroup without a group"; bad = 1 } open = 0; next }
  /^taking Lease/ { if (!open || title !~ /^::group::Fence/) { print "Lease taken outside a Fence group: " title; bad = 1 } }
  END { if (open) { print "group left open: " title; bad = 1 } }')
[ -z "$groups" ] && ok || fail "log groups: $groups"
grep -q '^::group::Fence' "$tmp/out" && ok || fail "no ::group::Fence line in the lazy run"

# DESIGN §4: a fence whose controller restart was never shown
# complete (an old pod stays Terminating) is partial: run --output json
# counts no fence acquisition, in agreement with fence_taken false.
w3=$tmp/stuck.db
for s in lazy eager; do
  expect 0 "sim init (stuck controller pod)" -- sim init --scenario "$src/scenarios/controller/old-pod-survives.yaml" --db "$w3" --run stage
  expect 1 "$s: the rollout is never proven" -- run --transport sim:"$w3" --desired current --strategy $s --output json
  expect_in "$tmp/out" '"fence_taken":false' "$s: fence_taken false"
  expect_in "$tmp/out" '"controller_restarts":1' "$s: the restart was written"
  expect_in "$tmp/out" '"fence_acquisitions":0' "$s: a partial fence is not counted"
done

echo "sim init: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
