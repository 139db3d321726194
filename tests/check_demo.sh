#!/bin/sh
# `make demo` (issue 30): one line saying that eager is production today
# and lazy the fix, then the fixture's table, whose rows show it — the
# eager no-drift Reassert restarts the controller and writes the Lease, the
# lazy one does neither. Runs `make demo` on the build this test belongs to
# (a no-op rebuild).
#
#   tests/check_demo.sh BUILD/reassert SOURCE_ROOT
set -u
bin=$1
src=$2
build=$(cd "$(dirname "$bin")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $1"; fails=$((fails + 1)); }
env -u GITHUB_ACTIONS make -s -C "$src" demo BUILD="$build" >"$tmp/out" 2>"$tmp/err" ||
  fail "make demo failed: $(tail -c 400 "$tmp/err")"
# (what the build prints comes first)
sed -n '/^eager is production today /,$p' "$tmp/out" >"$tmp/demo"
head -n 1 "$tmp/demo" | grep -q '^eager is production today .*; lazy is the fix ' ||
  fail "no line says eager is production today and lazy the fix: $(tail -c 400 "$tmp/out")"
sed -n 2p "$tmp/demo" | grep -q '^scenario two-run-stage-reassert .*: PASS$' ||
  fail "the table does not follow the line: $(sed -n 2p "$tmp/demo")"
# strat run exit restarts lease_w writes ...
awk '$1 == "eager" && $2 == "reassert" { e = ($4 >= 1 && $5 >= 1) }
     $1 == "lazy" && $2 == "reassert" { l = ($4 == 0 && $5 == 0 && $6 == 0) }
     END { exit !(e && l) }' "$tmp/demo" ||
  fail "the table does not show the eager Reassert's restart and Lease writes beside the lazy one's none: $(cat "$tmp/out")"
echo "demo: $fails failed"
[ "$fails" -eq 0 ]
