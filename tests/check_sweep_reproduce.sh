#!/bin/sh
# Hazard: H28 — a run that loses its fence must name what is held and
# `reassert --fences`; and the sweep that judges it must print a command
# that judges it again exactly the same way.
#
# (a) `sweep --perturb` judged a plan FAIL and printed `--plan SPEC`;
# that command judged the same plan as a swarm plan (with a fault-free
# follow-up run) and passed it. The reproduce command of a perturbation
# plan now carries `--perturb`, and the replay takes the sweep's own path:
# for every plan checked here the replay's verdict, exits and failures
# equal the sweep's, byte for byte — a passing plan included, so the check
# does not depend on the sweep finding anything.
# (b) The Lease-lost message of a renewal whose re-read shows another
# holder names `reassert --fences` (pinned by the plan below, which must
# now pass: the run fails closed naming it).
set -u
bin=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
passes=0
ok() { passes=$((passes + 1)); }
fail() { echo "FAIL: $1"; fails=$((fails + 1)); }
cd "$src" || exit 1

# The row's judgement, comparable across the two paths.
judged() { jq -S '[.sections[].plans[] | {plan, passed, verdict, exit, final_exit,
                     failures: (.failures | sort)}]' "$1"; }

# replay SWEEP-JSON BASE: every plan of the sweep's report,
# replayed by its printed reproduce command (or, for a plan that passed and
# has none, by --plan with the sweep's own mode flags), must be judged as
# the sweep judged it. BASE: the sweep's arguments, as one shell-quoted string.
replay() {
  report=$1; base=$2
  n=$(jq '[.sections[].plans[]] | length' "$report")
  [ "$n" -gt 0 ] && ok || fail "the sweep ran no plan: $(head -c 300 "$report")"
  i=0
  while [ "$i" -lt "$n" ]; do
    jq "{sections: [{plans: [[.sections[].plans[]][$i]]}]}" "$report" >"$tmp/one.json"
    plan=$(jq -r '.sections[0].plans[0].plan' "$tmp/one.json")
    cmd=$(jq -r '.sections[0].plans[0].reproduce // empty' "$tmp/one.json" |
      sed 's/^reassert //')
    if [ -n "$cmd" ]; then
      eval "set -- $cmd"
    else
      eval "set -- $base --plan '$plan'"
    fi
    "$bin" "$@" --json >"$tmp/replay.json" 2>"$tmp/err"
    judged "$tmp/one.json" >"$tmp/want"
    judged "$tmp/replay.json" >"$tmp/got"
    if cmp -s "$tmp/want" "$tmp/got"; then ok; else
      fail "plan $plan: the replay ($*) judged it differently:
  sweep:  $(tr -d '\n' <"$tmp/want")
  replay: $(tr -d '\n' <"$tmp/got") $(head -c 200 "$tmp/err")"
    fi
    i=$((i + 1))
  done
}

# The plan: another actor takes the Lease during the controller rollout
# wait of the rotation's roll (a fence-take scenario, faults removed).
sed -e '/faults:/,/nth: 1, timeout/d' -e 's/^name: .*/name: perturb-base/' \
  scenarios/lease/acquire-timeout.yaml >"$tmp/perturb.yaml"
base="sweep '$tmp/perturb.yaml' --run roll --strategy lazy --perturb"
eval "set -- $base"
"$bin" "$@" --shard 1159/10000 --json >"$tmp/perturb.json"
jq -e '[.sections[].plans[].plan] == ["96:perturb=lease-take"]' "$tmp/perturb.json" >/dev/null && ok ||
  fail "shard 1159/10000 is no longer plan 96:perturb=lease-take: $(head -c 300 "$tmp/perturb.json")"
# (b): failed closed, naming the Lease and the command.
jq -e '.sections[].plans[0] | .passed and .verdict == "failed closed"' "$tmp/perturb.json" \
  >/dev/null && ok || fail "(b): $(jq -c '.sections[].plans[0].failures' "$tmp/perturb.json")"
replay "$tmp/perturb.json" "$base"

# (a) on plans that fail: a deliberately broken strategy's perturbation
# plans, each replayed by the command the sweep printed.
rot=scenarios/two-run-stage-reassert.yaml
base="sweep $rot --run stage --strategy lazy --perturb --test-only-broken lease-before-policy"
eval "set -- $base"
"$bin" "$@" --shard 971/4000 --json >"$tmp/lbp.json"
jq -e '[.sections[].plans[] | select(.passed | not)] | length > 0' "$tmp/lbp.json" >/dev/null &&
  ok || fail "lease-before-policy: no failing plan to replay"
replay "$tmp/lbp.json" "$base"

echo "check_sweep_reproduce: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
