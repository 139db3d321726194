#!/bin/sh
# tests/fuzz/fuzz_run.sh's summary (issue 30): a target's runs are counted as
# libFuzzer counts them, from its own final "Done N runs" line, not from a
# stat::number_of_executed_units line another process wrote into the same
# log (the summary once said 86,394 for a target whose own line said 9,292);
# a failing target is FAILED with its exit and the run still exits 1. The
# targets here are stand-ins (shell scripts printing libFuzzer's lines), so
# no clang is needed.
#
#   tests/check_fuzz_run.sh BUILD/reassert SOURCE_ROOT
set -u
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $1"; fails=$((fails + 1)); }
mkdir -p "$tmp/build"
cat >"$tmp/build/fuzz_standin" <<'SH'
#!/bin/sh
echo "INFO: Seed: 1"
echo "#2	INITED cov: 10 ft: 10 corp: 1/1b exec/s: 0 rss: 30Mb"
echo "#9292	DONE   cov: 12 ft: 14 corp: 3/9b lim: 4 exec/s: 152 rss: 31Mb"
echo "Done 9292 runs in 61 second(s)"
echo "stat::number_of_executed_units: 9292"
# a child the target forked, leaving after its parent
echo "stat::number_of_executed_units: 86394"
exit 0
SH
cat >"$tmp/build/fuzz_standin_crash" <<'SH'
#!/bin/sh
echo "==1== ERROR: AddressSanitizer: heap-buffer-overflow"
echo "SUMMARY: AddressSanitizer: heap-buffer-overflow"
echo "stat::number_of_executed_units: 17"
exit 1
SH
chmod +x "$tmp/build/fuzz_standin" "$tmp/build/fuzz_standin_crash"
sh "$src/tests/fuzz/fuzz_run.sh" "$tmp/build" 1 standin >"$tmp/out" 2>&1
rc=$?
[ "$rc" -eq 0 ] || fail "a clean stand-in: exit $rc: $(tail -c 300 "$tmp/out")"
grep -q '^  standin: clean (9292 runs' "$tmp/out" ||
  fail "the summary does not count libFuzzer's own 9292 runs: $(grep standin: "$tmp/out")"
sh "$src/tests/fuzz/fuzz_run.sh" "$tmp/build" 1 standin_crash >"$tmp/out" 2>&1
rc=$?
[ "$rc" -eq 1 ] || fail "a crashing stand-in: exit $rc, want 1"
grep -q '^  standin_crash: FAILED (exit 1, 17 runs' "$tmp/out" ||
  fail "a crash without a Done line is not FAILED with its stats' count: $(grep standin_crash: "$tmp/out")"
echo "fuzz run: $fails failed"
[ "$fails" -eq 0 ]
