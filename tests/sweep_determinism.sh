#!/bin/sh
# Determinism for the whole suite: for every scenario under scenarios/ (at
# any depth, pending/ aside: the set ctest runs, in bytewise path order), a
# cheap sweep of its first run runs twice and its --json must be
# byte-identical. The mode turns with the file's place in that list, so
# every mode is met many times:
#   0  --swarm 1 --seed <place>       one seeded plan (shrunk if it fails)
#   1  --perturb --shard <place+1>/4000  one menu event before one call
#   2  the crash sweep --shard 1/4000    a crash at the first write
# under the first strategy the file lists (lazy when it lists none).
#
#   tests/sweep_determinism.sh BIN SRC PART PARTS
# takes the files whose place is PART-1 modulo PARTS (ctest runs the parts
# side by side); every part together is every file.
set -u
bin=$1
src=$2
part=${3:-1}
parts=${4:-1}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
checked=0
place=0
for f in $(find "$src/scenarios" -name '*.yaml' ! -path '*/pending/*' | LC_ALL=C sort); do
  i=$place
  place=$((place + 1))
  [ $((i % parts)) -eq $((part - 1)) ] || continue
  run=$(awk '/^runs:/ { r = 1; next }
    r && /^[[:space:]]*-[[:space:]]*name:/ {
      sub(/.*name:[[:space:]]*/, ""); sub(/[[:space:]]*#.*/, ""); gsub(/^"|"$/, ""); print; exit }' "$f")
  strategy=$(sed -n 's/^strategies:[[:space:]]*\[[[:space:]]*\([a-z]*\).*/\1/p' "$f")
  [ -n "$strategy" ] || strategy=lazy
  case $((i % 3)) in
    0) mode="--swarm 1 --seed $i" ;;
    1) mode="--perturb --shard $((i % 4000 + 1))/4000" ;;
    *) mode="--shard 1/4000" ;;
  esac
  name=${f#"$src"/scenarios/}
  t0=$(date +%s)
  for n in 1 2; do
    # shellcheck disable=SC2086 # mode is several words
    "$bin" sweep "$f" --run "$run" --strategy "$strategy" $mode --json >"$tmp/$n.json" \
      2>"$tmp/$n.err"
    echo $? >"$tmp/$n.rc"
  done
  checked=$((checked + 1))
  rc=$(cat "$tmp/1.rc")
  if [ "$rc" -gt 1 ]; then
    echo "FAIL: $name: sweep exited $rc: $(head -c 300 "$tmp/1.err")"
    fails=$((fails + 1))
  elif ! cmp -s "$tmp/1.json" "$tmp/2.json" || ! cmp -s "$tmp/1.rc" "$tmp/2.rc"; then
    echo "FAIL: $name: two sweeps ($mode) differ:"
    diff "$tmp/1.json" "$tmp/2.json" | head -20
    fails=$((fails + 1))
  elif ! jq -e '.plans >= 0 and (.sections | length) == 1' "$tmp/1.json" >/dev/null; then
    echo "FAIL: $name: not a sweep report: $(head -c 300 "$tmp/1.json")"
    fails=$((fails + 1))
  else
    echo "ok $name ($strategy, run $run, $mode): $(jq -c '[.plans, .failed]' "$tmp/1.json") $(($(date +%s) - t0)) s"
  fi
done
echo "sweep_determinism $part/$parts: $checked scenarios, $fails differ"
[ "$checked" -gt 0 ] && [ "$fails" -eq 0 ]
