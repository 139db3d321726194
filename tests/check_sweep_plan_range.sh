#!/bin/sh
# Hazard: none in H1–H176 — rule DESIGN §5 ("a fault that never fires is a
# scenario failure") and §5.1 (a PASS means something): `sweep --plan` with
# a call past the end of the run was once
# judged "converged", exit 0 — a printed reproducer whose call log shifted
# after a core change would pass silently. Now such a plan FAILs naming the
# call and the run's length; plans inside the run still pass.
# Args: reassert binary, source dir.
set -u
BIN=$1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
FAILS=0
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
cat >"$T/nw.yaml" <<'Y'
name: nw
seed: 3
cluster: {preset: prod, credential: current, workers: 1, control-planes: 1}
desired: current
runs:
  - name: quiet
    expect: {exit: 0}
Y
# The run's length, from a plan that fires on its first call.
"$BIN" sweep "$T/nw.yaml" --strategy lazy --plan 0:crash --json >"$T/j0" 2>&1 || fail "--plan 0:crash did not pass: $(head -c 300 "$T/j0")"
n=$("$BIN" sweep "$T/nw.yaml" --strategy lazy --plan 9999:crash 2>&1 | sed -n 's/.*past the end of the run (\([0-9]*\) calls.*/\1/p' | head -n 1)
[ -n "$n" ] || fail "--plan 9999:crash names no run length"
if [ -n "$n" ]; then
  last=$((n - 1))
  "$BIN" sweep "$T/nw.yaml" --strategy lazy --plan "$last:crash" >"$T/o" 2>&1 || fail "--plan $last:crash (the last call) failed: $(head -c 300 "$T/o")"
  for p in "$n:crash" 9999:crash 9999:fail=503 "0:crash,$n:fail=503"; do
    "$BIN" sweep "$T/nw.yaml" --strategy lazy --plan "$p" >"$T/o" 2>&1
    rc=$?
    [ "$rc" -eq 1 ] || fail "--plan $p: exit $rc, want 1 (its fault cannot fire)"
    grep -q "its fault never fired" "$T/o" || fail "--plan $p: no reason given: $(head -c 300 "$T/o")"
  done
fi
echo "sweep plan range: $FAILS failed"
[ "$FAILS" -eq 0 ]
