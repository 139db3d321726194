#!/bin/sh
# The coverage gate (cmake/coverage_gate.py, `make coverage`) on tracefiles
# made here: it passes a core/ that holds its floor and fails each way the
# floor can break — core/ lines under 90%, core/ branches under 75%, one
# core/ file under 80% of lines while the average still holds, and a core/
# source with no coverage data at all. Real lcov output is `make coverage`'s
# business; this proves the gate reads the records and judges them.
#
#   tests/check_coverage_gate.sh BUILD/reassert SOURCE_ROOT
set -u
src=$2
cd "$src" || exit 2
src=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $1"; fails=$((fails + 1)); }

files=$(git ls-files 'core/*.c' 'core/**/*.c' | sort -u)
[ -n "$files" ] || { echo "FAIL: no core/ sources listed"; exit 1; }
first=$(echo "$files" | head -n 1)

# info OUT LINES_HIT BRANCHES_TAKEN [SPECIAL_FILE SPECIAL_LINES_HIT] [SKIP_FILE]:
# every core/ file 100 lines and 100 branches, LINES_HIT and BRANCHES_TAKEN
# of them hit; SPECIAL_FILE gets SPECIAL_LINES_HIT instead; SKIP_FILE is left
# out of the tracefile. A sim/ file at 0% shows it does not count for core/.
info() {
  out=$1 hit=$2 taken=$3 special=${4:-} special_hit=${5:-} skip=${6:-}
  {
    for f in $files sim/world/not-core.c; do
      [ "$f" = "$skip" ] && continue
      h=$hit
      [ "$f" = "$special" ] && h=$special_hit
      case $f in sim/*) h=0 ;; esac
      echo "TN:"
      echo "SF:$src/$f"
      i=1
      while [ $i -le 100 ]; do
        if [ $i -le "$h" ]; then echo "DA:$i,3"; else echo "DA:$i,0"; fi
        if [ $i -le "$taken" ]; then echo "BRDA:$i,0,0,1"; else echo "BRDA:$i,0,0,-"; fi
        i=$((i + 1))
      done
      echo "end_of_record"
    done
  } >"$out"
}

gate() { python3 "$src/cmake/coverage_gate.py" "$1" "$src" >"$tmp/out" 2>&1; }

info "$tmp/pass.info" 95 80
gate "$tmp/pass.info" || fail "a core/ at 95% lines, 80% branches fails the gate: $(cat "$tmp/out")"
grep -q '^  core/  *lines  95.00%' "$tmp/out" || fail "no per-folder line for core/: $(cat "$tmp/out")"
grep -q '^  sim/world/  *lines   0.00%' "$tmp/out" || fail "no per-folder line for sim/world/"
grep -q '^coverage gate: PASS' "$tmp/out" || fail "a passing gate does not say PASS"

info "$tmp/lines.info" 89 80
gate "$tmp/lines.info" && fail "core/ at 89% of lines passes the gate"
grep -q '^FAIL: core/: 89.00% of lines' "$tmp/out" || fail "core/ lines failure not named: $(cat "$tmp/out")"

info "$tmp/branches.info" 95 74
gate "$tmp/branches.info" && fail "core/ at 74% of branches passes the gate"
grep -q '^FAIL: core/: 74.00% of branches' "$tmp/out" || fail "core/ branches failure not named"

info "$tmp/onefile.info" 95 80 "$first" 79
gate "$tmp/onefile.info" && fail "a core/ file at 79% of lines passes the gate"
grep -q "^FAIL: $first: 79.00% of lines" "$tmp/out" || fail "the low file is not named: $(cat "$tmp/out")"

info "$tmp/missing.info" 95 80 "" "" "$first"
gate "$tmp/missing.info" && fail "a core/ source missing from the tracefile passes the gate"
grep -q "^FAIL: $first: no coverage data at all" "$tmp/out" || fail "the missing file is not named"

echo "coverage gate: $fails failed"
[ "$fails" -eq 0 ]
