#!/bin/sh
# Runs every libFuzzer target built in BUILD (REASSERT_FUZZ=ON) for SECONDS
# each, over a working corpus in BUILD/fuzz/<target>/corpus seeded from
# tests/fuzz/corpus/<target>/ and the folders on the target's
# " * fuzz-seeds:" line. Fails (exit 1) when any target reports a crash, a
# leak, a sanitizer report, a failed property, an out-of-memory or a
# timeout; the input that did it lands in BUILD/fuzz/<target>/artifacts/.
# Usage: fuzz_run.sh BUILD SECONDS [TARGET...]
set -u
build=$1
seconds=$2
shift 2
src=$(cd "$(dirname "$0")/../.." && pwd)
case $seconds in '' | *[!0-9]*) echo "fuzz: FUZZ_SECONDS must be a whole number of seconds" >&2; exit 64 ;; esac

targets=$*
if [ -z "$targets" ]; then
  for f in "$src"/tests/fuzz/fuzz_*.c; do
    t=$(basename "$f" .c)
    targets="$targets ${t#fuzz_}"
  done
fi

export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:allocator_may_return_null=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
lsan_supp="$src/tests/fuzz/lsan.supp"
if [ -f "$lsan_supp" ]; then
  export LSAN_OPTIONS="suppressions=$lsan_supp:print_suppressions=0"
fi

status=0
summary=""
for t in $targets; do
  bin="$build/fuzz_$t"
  if [ ! -x "$bin" ]; then
    echo "fuzz: $bin is not built" >&2
    status=1
    summary="$summary
  $t: NOT BUILT"
    continue
  fi
  work="$build/fuzz/$t"
  mkdir -p "$work/corpus" "$work/artifacts"
  seeds="$src/tests/fuzz/corpus/$t"
  line=$(sed -n 's/^ \* fuzz-seeds://p' "$src/tests/fuzz/fuzz_$t.c")
  for d in $line; do
    [ "$d" = none ] || seeds="$seeds $src/$d"
  done
  dict=""
  [ -f "$src/tests/fuzz/fuzz_$t.dict" ] && dict="-dict=$src/tests/fuzz/fuzz_$t.dict"
  echo "fuzz: $t for ${seconds}s (log: $work/fuzz.log)"
  # shellcheck disable=SC2086 # seeds and dict are word lists
  "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$work/artifacts/" $dict \
    "$work/corpus" $seeds >"$work/fuzz.log" 2>&1
  rc=$?
  # Runs as libFuzzer counts them: its own final "Done N runs" line (the
  # final stats repeat that number only when nothing else printed stats).
  execs=$(sed -n 's/^Done \([0-9][0-9]*\) runs in .*/\1/p' "$work/fuzz.log" | tail -1)
  [ -n "$execs" ] || execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/fuzz.log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$work/fuzz.log" | tail -1)
  if [ $rc -ne 0 ] || grep -q -E '^(==[0-9]+==ERROR|SUMMARY: |.*runtime error:)' "$work/fuzz.log"; then
    status=1
    summary="$summary
  $t: FAILED (exit $rc, ${execs:-?} runs, ${cov:-cov: ?}); see $work/fuzz.log and $work/artifacts/"
    tail -40 "$work/fuzz.log" >&2
  else
    summary="$summary
  $t: clean (${execs:-?} runs, ${cov:-cov: ?}, corpus $(ls "$work/corpus" | wc -l) inputs)"
  fi
done
echo "fuzz: ${seconds}s per target:$summary"
exit $status
