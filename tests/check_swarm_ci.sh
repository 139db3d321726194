#!/bin/sh
# The nightly failure search's shard script (.ci/swarm, what
# .github/workflows/swarm.yml and `make swarm` run), on a few plans:
#  - a shard of every sweep (swarm and perturbation, both strategies) that
#    finds nothing exits 0 with its six JSON reports and no finding;
#  - with a test-only defect (REASSERT_SWARM_BROKEN), a finding exits 1, and
#    every failing plan leaves a reproduce line in findings.txt that, run as
#    written, fails again (exit 1);
#  - a bad SHARD is a usage error (exit 2), nothing run.
# check_ci_yaml.sh checks the workflow calls the script.
#
#   tests/check_swarm_ci.sh BUILD/reassert SOURCE_ROOT
set -u
bin=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
passes=0
ok() { passes=$((passes + 1)); }
no() { echo "FAIL: $1"; fails=$((fails + 1)); }

# Nothing found: plan 0 of the swarm (seed 1), every 2000th perturbation plan.
sh "$src/.ci/swarm" "$bin" "$src" 1/2000 1 1 "$tmp/clean" >"$tmp/clean.log" 2>&1
rc=$?
if [ "$rc" -eq 0 ]; then ok; else no "a clean shard exits $rc, want 0: $(tail -3 "$tmp/clean.log")"; fi
n=$(ls "$tmp/clean"/*.json 2>/dev/null | wc -l)
if [ "$n" -eq 6 ]; then ok; else no "a shard wrote $n JSON reports, want 6 (swarm, perturb stage, perturb reassert; x2)"; fi
if [ -f "$tmp/clean/findings.txt" ] && [ ! -s "$tmp/clean/findings.txt" ]; then ok; else
  no "a clean shard's findings.txt is missing or not empty"; fi
if grep -q '^seed 1, shard 1/2000' "$tmp/clean/shard.txt" 2>/dev/null; then ok; else
  no "shard.txt does not name the seed and the shard"; fi
plans=$(jq -s 'map(.plans) | add' "$tmp/clean"/*.json 2>/dev/null)
if [ "${plans:-0}" -ge 6 ]; then ok; else no "the shard ran ${plans:-0} plans, want one per sweep at least"; fi

# A finding: plan 0 of seed 15 under the test-only defect lease-before-policy
# fails (invariant 1: the policy fences patched before the Lease is held).
REASSERT_SWARM_BROKEN=lease-before-policy \
  sh "$src/.ci/swarm" "$bin" "$src" 1/2000 1 15 "$tmp/found" >"$tmp/found.log" 2>&1
rc=$?
if [ "$rc" -eq 1 ]; then ok; else no "a shard with a finding exits $rc, want 1: $(tail -3 "$tmp/found.log")"; fi
if grep -q '^swarm-stage-lazy (seed 15, shard 1/2000): reassert sweep ' "$tmp/found/findings.txt"; then ok; else
  no "the swarm's finding has no reproduce line: $(head -c 400 "$tmp/found/findings.txt")"; fi
# Every reproduce line, run as written, fails again.
lines=0
while IFS= read -r line; do
  case $line in *": reassert sweep "*) ;; *) continue ;; esac
  lines=$((lines + 1))
  cmd=${line#*: reassert sweep }
  # shellcheck disable=SC2086 # the line is words, none with blanks
  (cd "$src" && "$bin" sweep $cmd >"$tmp/repro.$lines" 2>&1)
  rc=$?
  if [ "$rc" -eq 1 ]; then ok; else no "reproducer $lines exits $rc, want 1: $line"; fi
done <"$tmp/found/findings.txt"
[ "$lines" -ge 1 ] || no "no reproduce line to run"

# A bad shard runs nothing.
sh "$src/.ci/swarm" "$bin" "$src" 0/4 1 1 "$tmp/bad" >"$tmp/bad.log" 2>&1
rc=$?
if [ "$rc" -eq 2 ] && [ ! -e "$tmp/bad" ]; then ok; else no "SHARD 0/4: exit $rc, want 2 and nothing written"; fi

echo "swarm ci: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
