#!/bin/sh
# make coverage: runs the plain suite (the tests `make test` runs in build/)
# in a gcov build, then writes the lcov HTML report with branch coverage and
# checks the gate (cmake/coverage_gate.py).
#
#   cmake/coverage.sh COVERAGE_BUILD OUT_DIR
#
# OUT_DIR/index.html is the report, OUT_DIR/coverage.info its data and
# OUT_DIR/summary.txt the per-folder summary the gate printed. Exit 0 only
# when every test passed and the gate holds; the report is written either way.
set -u
cov=$1
out=$2
src=$(pwd)
jobs=${JOBS:-2}
mkdir -p "$out"
out=$(cd "$out" && pwd)

# lcov 1.x (Debian 12) and 2.x (Ubuntu 24.04) name the branch switch
# differently, and 2.x stops on a gcc/gcov function-end mismatch that 1.x
# never checked.
major=$(lcov --version | sed -n 's/.*[Vv]ersion \([0-9][0-9]*\).*/\1/p')
if [ "${major:-1}" -ge 2 ]; then
  set -- --rc branch_coverage=1 --ignore-errors mismatch,unused
else
  set -- --rc lcov_branch_coverage=1
fi

find "$cov" -name '*.gcda' -delete
(cd "$cov" && ctest --output-on-failure -j "$jobs")
tests=$?

# Every instrumented file, executed or not (-i: zero counts), plus the run,
# so a file no test ever loads shows at 0% instead of not at all.
lcov "$@" -q -c -i -d "$cov" -b "$src" --no-external -o "$out/base.info" &&
  lcov "$@" -q -c -d "$cov" -b "$src" --no-external -o "$out/run.info" &&
  lcov "$@" -q -a "$out/base.info" -a "$out/run.info" -o "$out/all.info" &&
  lcov "$@" -q -e "$out/all.info" "$src/core/*" "$src/cli/*" "$src/sim/*" \
    "$src/recorder/*" "$src/reports/*" -o "$out/coverage.info" || {
  echo "coverage: lcov failed" >&2
  exit 1
}
rm -f "$out/base.info" "$out/run.info" "$out/all.info"
genhtml "$@" -q --branch-coverage --legend --title "reassert: make coverage" \
  --prefix "$src" -o "$out" "$out/coverage.info" || {
  echo "coverage: genhtml failed" >&2
  exit 1
}
python3 cmake/coverage_gate.py "$out/coverage.info" "$src" | tee "$out/summary.txt"
gate=$?
# tee hides the gate's status in plain sh: read it back from the summary.
grep -q '^coverage gate: PASS' "$out/summary.txt" && gate=0 || gate=1
echo "coverage: report at $out/index.html"
[ "$tests" -eq 0 ] || echo "coverage: the suite failed in the coverage build" >&2
[ "$tests" -eq 0 ] && [ "$gate" -eq 0 ]
