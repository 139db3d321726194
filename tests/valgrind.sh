#!/bin/sh
# Runs every Check suite but one (in-process: CK_FORK=no) and two scenarios under
# valgrind's memcheck; any memory error or definite/indirect leak in the
# process under test fails. A scenario run runs in `reassert sim`'s own
# process (the full transaction is checked here); only a run a `crash` fault
# may end is a forked child, which ends with _exit (as a crashed run would)
# while the parent's frames are still on its stack: those children are
# silenced (--child-silent-after-fork).
# REASSERT_E2E_QUICK=1: test_live_e2e runs only its short live runs here
# (its processes under test are children, which valgrind does not follow).
set -u
build=${1:-build}
src=$(cd "$(dirname "$0")/.." && pwd)
command -v valgrind >/dev/null 2>&1 || { echo "valgrind not installed"; exit 1; }
log=$(mktemp)
rec=$(mktemp -d)
trap 'rm -rf "$log" "$rec"' EXIT
status=0
check() { # check NAME COMMAND... (WANT=N: the exit expected, default 0)
  name=$1; shift
  valgrind --quiet --child-silent-after-fork=yes --leak-check=full \
    --show-leak-kinds=definite,indirect "$@" >"$log" 2>&1
  rc=$?
  if [ $rc -eq "${WANT:-0}" ] && ! grep -q '^==[0-9]*== ' "$log"; then
    echo "valgrind ok: $name"
  else
    echo "valgrind FAIL: $name (exit $rc)"; grep -A25 '^==[0-9]*== ' "$log" | head -60
    [ $rc -ne "${WANT:-0}" ] && tail -20 "$log"
    status=1
  fi
}
# test_rejected_designs is not run here: its whole work is scenario runs of
# the same transaction the two scenarios below run (about a fifth of this
# pass's time).
for t in "$build"/test_*; do
  [ -x "$t" ] || continue
  [ "$(basename "$t")" = test_rejected_designs ] && continue
  CK_FORK=no REASSERT_SRC="$src" REASSERT_E2E_QUICK=1 check "$(basename "$t")" "$t"
done
for scn in two-run-stage-reassert recovery/failed-fence-resume; do
  check "reassert sim $scn" "$build/reassert" sim "$src/scenarios/$scn.yaml"
done
# A sweep that finds a (test-only) defect: its report and reproducer are
# built in process; exit 1 is the finding.
WANT=1
check "reassert sweep --test-only-broken" "$build/reassert" sweep \
  "$src/scenarios/two-run-stage-reassert.yaml" --run stage --strategy lazy \
  --perturb --plan 0:perturb=cordon --test-only-broken root-before-second-inventory
WANT=0
# The recorder and strict replay run in process (no fork): a recorded run,
# then its replay and its timeline.
"$build/reassert" sim init --scenario "$src/scenarios/two-run-stage-reassert.yaml" \
  --db "$rec/w.db" >/dev/null
check "reassert run --record" "$build/reassert" run --transport "sim:$rec/w.db" \
  --desired current --record "$rec/c.db"
check "reassert replay --strict" "$build/reassert" replay "$rec/c.db" --strict
check "reassert replay --list" "$build/reassert" replay "$rec/c.db" --list --op 'kube.*'
exit $status
