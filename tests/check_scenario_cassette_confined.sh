#!/bin/sh
# Hazard: none in H1–H176 — a scenario's `cluster: {cassette: FILE}` is read
# from the scenario's own folder tree, as its run names and {tmp} paths stay
# inside theirs: a scenario checked out or copied elsewhere takes its world
# along, and a scenario from a stranger cannot make `reassert sim` read any
# file the user can. An absolute path, a ".." component, or a symbolic link
# inside the tree that leads out of it is exit 65 naming the scenario file,
# line and `cluster.cassette` (before any run); a cassette in the
# scenario's folder or below loads. `replay --to-scenario OUT` refuses (64,
# nothing written) an OUT whose folder does not hold the cassette, since the
# scenario it would write could not load.
#
#   tests/check_scenario_cassette_confined.sh BUILD/reassert SOURCE_ROOT
set -u
bin=$1
src=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
fail() {
  echo "FAIL: $1"
  fails=$((fails + 1))
}

"$bin" sim --record "$T/rec" --strategy lazy "$src/scenarios/cost/no-drift-small.yaml" \
  >"$T/sim.out" 2>&1 || fail "recording the fixture: $(tail -3 "$T/sim.out")"
cas="$T/rec/no-drift-cost-small.reassert.db"
[ -f "$cas" ] || {
  echo "FAIL: no cassette recorded"
  exit 1
}
mkdir -p "$T/tree/sub/deeper" "$T/elsewhere"
cp "$cas" "$T/tree/sub/deeper/inc.db"
cp "$cas" "$T/elsewhere/inc.db"
ln -s "$T/elsewhere/inc.db" "$T/tree/link.db"
ln -s "$T/elsewhere" "$T/tree/linkdir"

# The scenario --to-scenario writes, its cassette path then edited.
"$bin" replay "$T/tree/sub/deeper/inc.db" --to-scenario "$T/tree/ok.yaml" >"$T/o" 2>&1 ||
  fail "--to-scenario into a folder above the cassette: exit $?: $(head -c 300 "$T/o")"
grep -qF 'cluster: {cassette: "sub/deeper/inc.db"}' "$T/tree/ok.yaml" ||
  fail "the written path is not relative: $(grep cassette "$T/tree/ok.yaml")"
line=$(grep -n '^cluster: {cassette:' "$T/tree/ok.yaml" | cut -d: -f1)
"$bin" sim "$T/tree/ok.yaml" >"$T/o" 2>&1 ||
  fail "a cassette below the scenario's folder: exit $?: $(head -c 300 "$T/o")"

# confined NAME PATH: the scenario with PATH as its cassette is 65 naming
# file, line and field, and says why; nothing runs (no report on stdout).
confined() {
  sed "s|^cluster: {cassette: .*|cluster: {cassette: \"$2\"}|" "$T/tree/ok.yaml" >"$T/tree/bad.yaml"
  "$bin" sim "$T/tree/bad.yaml" >"$T/o" 2>"$T/e"
  rc=$?
  [ $rc -eq 65 ] || fail "$1: exit $rc, want 65: $(head -c 300 "$T/e")"
  grep -qF "$T/tree/bad.yaml:$line:" "$T/e" || fail "$1: the error names no file:line: $(cat "$T/e")"
  grep -qF "cluster.cassette" "$T/e" || fail "$1: the error names no field: $(cat "$T/e")"
  grep -qF "from its own folder or below" "$T/e" || fail "$1: the error says no why: $(cat "$T/e")"
  [ "$(cat "$T/o")" = "scenarios: 0 passed, 0 failed (some could not be loaded)" ] ||
    fail "$1: something ran: $(head -c 200 "$T/o")"
}
confined "a .. component" "../elsewhere/inc.db"
confined "a .. component inside the tree" "sub/../sub/deeper/inc.db"
confined "a bare .." ".."
confined "an absolute path" "$T/elsewhere/inc.db"
confined "an absolute path into the tree itself" "$T/tree/sub/deeper/inc.db"
confined "a symbolic link to a file out of the tree" "link.db"
confined "a symbolic link to a folder out of the tree" "linkdir/inc.db"
# sim init builds a world from the same loader
sed "s|^cluster: {cassette: .*|cluster: {cassette: \"../elsewhere/inc.db\"}|" "$T/tree/ok.yaml" >"$T/tree/bad.yaml"
"$bin" sim init --scenario "$T/tree/bad.yaml" --db "$T/w.db" >"$T/o" 2>&1
rc=$?
[ $rc -eq 65 ] || fail "sim init: exit $rc, want 65: $(head -c 300 "$T/o")"
[ ! -e "$T/w.db" ] || fail "sim init wrote a world from a refused scenario"

# --to-scenario: OUT's folder must hold the cassette (or a folder above it).
"$bin" replay "$T/tree/sub/deeper/inc.db" --to-scenario "$T/elsewhere/out.yaml" >"$T/o" 2>&1
rc=$?
[ $rc -eq 64 ] || fail "--to-scenario beside another folder: exit $rc, want 64: $(head -c 300 "$T/o")"
grep -qF "is not in the folder of $T/elsewhere/out.yaml" "$T/o" ||
  fail "--to-scenario: the refusal does not say why: $(head -c 300 "$T/o")"
[ ! -e "$T/elsewhere/out.yaml" ] || fail "--to-scenario wrote a scenario that cannot load"

echo "scenario cassette confined: $fails failed"
[ "$fails" -eq 0 ]
