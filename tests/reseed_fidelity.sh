#!/bin/sh
# How often `replay --reseed` reproduces a recording (a measurement, not a
# test: ctest does not run it; recorder/README.md quotes its figure). Every
# scenario under scenarios/ (pending/ aside) is recorded under STRATEGY (`sim --record`),
# then each cassette is reseeded under the same strategy; a scenario counts
# as reproduced when every one of its runs replays to the recorded exit and
# to the recorded value of every counter the reseeded run reports
# (`--json`: .exit, .recorded vs .replayed). Prints the scenarios that do
# not, then "N of M scenarios reseed to the recorded exit and counters".
#
#   sh tests/reseed_fidelity.sh BUILD/reassert SOURCE_ROOT [lazy|eager]
set -u
bin=$1
src=$2
strategy=${3:-eager}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$bin" sim --record "$out/rec" --strategy "$strategy" "$src/scenarios" >/dev/null 2>&1
total=0
same=0
for f in $(find "$src/scenarios" -name '*.yaml' ! -path '*/pending/*' | LC_ALL=C sort); do
  name=$(sed -n 's/^name: *//p' "$f" | head -1 | tr -d '"')
  set -- "$out/rec/$name".*.db
  [ -f "$1" ] || continue # a scenario skipped under this strategy records nothing
  total=$((total + 1))
  ok=1
  for c in "$@"; do
    "$bin" replay "$c" --reseed --strategy "$strategy" --json >"$out/j" 2>"$out/e" || {
      echo "refused: $(basename "$c" .db): $(head -c 200 "$out/e")"
      ok=0
      continue
    }
    jq -e '. as $r | .exit.recorded == .exit.replayed and .recorded != null and
      all(.replayed | keys[]; $r.recorded[.] == $r.replayed[.])' "$out/j" >/dev/null || {
      ok=0
      echo "differs: $(basename "$c" .db)"
    }
  done
  same=$((same + ok))
done
echo "$same of $total scenarios reseed to the recorded exit and counters ($strategy)"
