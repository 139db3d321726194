#!/bin/sh
# make bench-sweep: what the failure search costs (its budget is plans per
# second). The full crash sweep of the rotation (every write of both runs,
# both strategies) and a 100-plan swarm over its Stage per strategy, each
# timed by the sweep's own monotonic clock (its summary line: "wall W s,
# P plans/s").
#
#   tests/bench_sweep.sh BUILD/reassert SOURCE_ROOT OUT.json
set -eu
bin=$1
src=$2
out=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
scn=$src/scenarios/two-run-stage-reassert.yaml
rows=
row() { # row NAME VALUE UNIT
  rows="$rows${rows:+,}{\"name\": \"$1\", \"value\": $2, \"unit\": \"$3\"}"
}
summary() { # summary FILE -> "PLANS WALL RATE"
  sed -n 's/^sweep: \([0-9]*\) plans, [0-9]* failed.*; wall \([0-9.]*\) s, \([0-9.]*\) plans\/s$/\1 \2 \3/p' "$1"
}
for strategy in lazy eager; do
  "$bin" sweep "$scn" --strategy "$strategy" >"$tmp/crash-$strategy" || true
  set -- $(summary "$tmp/crash-$strategy")
  row "crash sweep, rotation, $strategy: plans (writes)" "$1" "plans"
  row "crash sweep, rotation, $strategy: wall" "$2" "s"
  "$bin" sweep "$scn" --run stage --strategy "$strategy" --swarm 100 --seed 1 >"$tmp/swarm-$strategy" || true
  set -- $(summary "$tmp/swarm-$strategy")
  row "swarm, rotation stage, $strategy: plans per second" "$3" "plans/s"
done
mkdir -p "$(dirname "$out")"
cat >"$out" <<JSON
{"title": "reassert sweep: the cost of the failure search",
 "rows": [$rows],
 "note": "two-run-stage-reassert; each figure from the sweep's own monotonic clock (its summary line); a crash plan runs the crashed run, --recover-fences when needed and the run again; a swarm plan the faulted Stage and a fault-free Stage. Shared machine: wall times vary with load."}
JSON
echo "bench-sweep: wrote $out"
