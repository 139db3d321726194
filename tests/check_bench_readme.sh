#!/bin/sh
# The README's before/after table is reports/BENCH.md's, written by
# `make bench` (reports/bench.py), never by hand: the two blocks are the same
# text, and BENCH.md's preset-prod rows are what the sim gives today (the
# fixture's Stage and Reassert under eager and lazy, run afresh). The check
# must also reject a README whose table was edited by hand.
set -u
bin=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
[ -s "$src/reports/BENCH.md" ] || { echo "FAIL: no reports/BENCH.md (run make bench)"; exit 1; }
python3 "$src/reports/bench.py" --check --bin "$bin" || status=1
# A hand edit: the lazy Reassert's writes turned from 0 into 1.
sed '/bench:deploy begin/,/bench:deploy end/ s/| \([0-9]*\) → 0 | \([0-9]*\) → 0 | \([0-9]*\) → 0 |$/| \1 → 1 | \2 → 0 | \3 → 0 |/' \
  "$src/README.md" >"$tmp/README.md"
if cmp -s "$src/README.md" "$tmp/README.md"; then
  echo "FAIL: the tamper found no lazy Reassert row to edit"
  status=1
elif python3 "$src/reports/bench.py" --check --bin "$bin" --readme "$tmp/README.md" >/dev/null; then
  echo "FAIL: the check accepted a hand-edited README table"
  status=1
fi
exit $status
