#!/bin/sh
# Runs every Check suite (in-process: CK_FORK=no) and a two-run scenario under
# valgrind's memcheck; any error or definite/indirect leak fails. Forked
# scenario children end with _exit (as a crashed run would), so only the
# parent's memory is judged for `reassert sim`.
set -u
build=${1:-build}
src=$(cd "$(dirname "$0")/.." && pwd)
command -v valgrind >/dev/null 2>&1 || { echo "valgrind not installed"; exit 1; }
vg="valgrind --quiet --child-silent-after-fork=yes --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect"
status=0
for t in "$build"/test_*; do
  [ -x "$t" ] || continue
  name=$(basename "$t")
  if CK_FORK=no REASSERT_SRC="$src" $vg "$t" >/tmp/vg-$$.log 2>&1; then
    echo "valgrind ok: $name"
  else
    echo "valgrind FAIL: $name"; tail -30 /tmp/vg-$$.log; status=1
  fi
done
for scn in two-run-stage-reassert failed-fence-resume; do
  if $vg "$build/reassert" sim "$src/scenarios/$scn.yaml" >/tmp/vg-$$.log 2>&1; then
    echo "valgrind ok: reassert sim $scn"
  else
    echo "valgrind FAIL: reassert sim $scn"; tail -30 /tmp/vg-$$.log; status=1
  fi
done
rm -f /tmp/vg-$$.log
exit $status
