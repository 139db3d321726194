#!/bin/sh
# The sweeps can fail: three deliberately broken, TEST-ONLY variants of the
# core (core/txn.h rs_broken, selected by `reassert sweep --test-only-broken`)
# are each caught by one of the sweeps over the rotation's Stage. Each defect
# is subtle: the fault-free run passes every invariant (checked below), so
# no plain scenario run would catch it; only a fault or another actor's
# event reaches it:
#
#   skip-cordon-restore           the swarm         (invariant 2: a run that
#                                                     fails leaves its cordon
#                                                     behind, named nowhere)
#   lease-before-policy           the perturbation  (invariant 1: a failing
#                                 sweep               run resumes the policy
#                                                     fences after releasing
#                                                     the Lease itself)
#   root-before-second-inventory  the perturbation  (invariant 3: after
#                                 sweep               another actor's cordon,
#                                                     the root is written after
#                                                     one clean inventory)
#
# Shards keep this cheap: each picks a slice of the sweep that holds a plan
# the defect fails (plan numbers are fixed by the scenario; the swarm's by
# the seed). Each failing plan is at most 3 faults (the swarm's shrunk), and
# the one command the sweep prints for it is run as printed: it must exit 1
# with every failure of the plan again. The control: the same command
# without the defect passes, so it is the defect that fails, not the plan.
# Misuse of the flag exits 64, and no other command knows it.
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

cd "$src" || exit 1
rot=scenarios/two-run-stage-reassert.yaml

# caught DEFECT TEXT DESCRIPTION -- SWEEP-ARGS...
caught() {
  defect=$1; text=$2; what=$3; shift 4
  expect 1 "$what catches $defect" -- sweep "$rot" --run stage --strategy lazy "$@" \
    --test-only-broken "$defect" --json
  cat "$tmp/out"
  cp "$tmp/out" "$tmp/$defect.json"
  # Subtle: the fault-free run of the defective core passes.
  jq -e '[.sections[] | .baseline_exit == 0 and (.baseline_failures | length) == 0] | all' \
    "$tmp/out" >/dev/null && ok || fail "$defect: the fault-free run already fails"
  jq -e --arg d "$defect" '.test_only_broken == $d' "$tmp/out" >/dev/null && ok ||
    fail "$defect: the report does not name the defect"
  # Every failing plan: at most 3 faults, its failure names the invariant.
  jq -e --arg t "$text" '[.sections[].plans[] | select(.passed | not)] |
      length > 0 and all(((.shrunk // .plan) | split(",") | length) <= 3 and
                         any(.failures[]; contains($t)))' "$tmp/out" >/dev/null && ok ||
    fail "$defect: no failing plan of <= 3 faults saying '$text'"
  # The printed command, run as printed (reassert -> this build).
  cmd=$(jq -r '[.sections[].plans[] | select(.passed | not)][0].reproduce' "$tmp/out" |
    sed 's/^reassert //')
  jq '[.sections[].plans[] | select(.passed | not)][0] | .shrunk_failures // .failures' \
    "$tmp/out" >"$tmp/want"
  case $cmd in *"--test-only-broken $defect"*) ok ;;
    *) fail "$defect: the reproducer does not name the defect: $cmd" ;; esac
  eval "set -- $cmd"
  expect 1 "$defect: the printed reproducer fails" -- "$@" --json
  jq '[.sections[].plans[0].failures[]]' "$tmp/out" >"$tmp/got"
  jq -e --slurpfile got "$tmp/got" 'all(.[]; . as $f | $got[0] | index($f) != null)' \
    "$tmp/want" >/dev/null && ok ||
    fail "$defect: the reproducer failed differently: $(cat "$tmp/got")"
  # The control: the very same plan, no defect.
  cmd=$(printf '%s' "$cmd" | sed "s/ --test-only-broken $defect//")
  eval "set -- $cmd"
  expect 0 "$defect: the same plan without the defect passes" -- "$@"
}

caught skip-cordon-restore "still cordoned by this run and no error names it" "the swarm" -- \
  --swarm 9 --seed 4 --shard 8/9
jq -e '[.sections[].plans[] | select(.passed | not) | .shrunk_faults] | length > 0' \
  "$tmp/skip-cordon-restore.json" >/dev/null && ok || fail "the swarm shrank nothing"
caught lease-before-policy "while this run did not hold the Lease" "the perturbation sweep" -- \
  --perturb --shard 971/1000
caught root-before-second-inventory "fewer than two node inventories" "the perturbation sweep" -- \
  --perturb --shard 1/1000

# Misuse: 64, saying why; no other command has the flag.
expect 64 "an unknown defect" -- sweep "$rot" --strategy lazy --test-only-broken nope
grep -q "test-only-broken: expected skip-cordon-restore" "$tmp/err" && ok ||
  fail "an unknown defect: $(cat "$tmp/err")"
expect 64 "the flag twice" -- sweep "$rot" --strategy lazy --test-only-broken lease-before-policy \
  --test-only-broken root-before-second-inventory
expect 64 "no --strategy" -- sweep "$rot" --test-only-broken lease-before-policy
expect 64 "no value" -- sweep "$rot" --strategy lazy --test-only-broken
expect 64 "with --emit-scenario" -- sweep "$rot" --strategy lazy --swarm 1 \
  --test-only-broken lease-before-policy --emit-scenario "$tmp/x.yaml"
[ ! -e "$tmp/x.yaml" ] && ok || fail "--emit-scenario wrote a file for a defect"
expect 64 "run does not know it" -- run --transport "sim:$tmp/none.db" \
  --test-only-broken lease-before-policy
expect 64 "sim does not know it" -- sim "$rot" --test-only-broken lease-before-policy
"$bin" sweep --help | grep -q "TEST-ONLY" && ok || fail "sweep --help does not say TEST-ONLY"

echo "check_sweep_broken: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
