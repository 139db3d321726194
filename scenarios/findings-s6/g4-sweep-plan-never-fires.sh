#!/bin/sh
# G4: `sweep --plan` with a call index past the end of the run's call log
# (the fault can never fire) is judged PASS ("converged"), exit 0.
# DESIGN §5: a fault that never fires is a scenario failure; §5.1: never pass
# what was not checked. Expected: exit 64 (index out of range) or a FAIL
# saying the fault never fired. Matters because a printed reproducer whose
# call log shifted (the core changed) then silently passes.
# usage: sh g4-sweep-plan-never-fires.sh BUILD/reassert
B=${1:-build/reassert}
d=$(mktemp -d)
cat > "$d/nw.yaml" <<'Y'
name: nw
seed: 3
cluster: {preset: prod, credential: current, workers: 1, control-planes: 1}
desired: current
runs:
  - name: quiet
    expect: {exit: 0}
Y
for p in 0:crash 38:crash 39:crash 9999:crash 9999:fail=503; do
  "$B" sweep "$d/nw.yaml" --strategy lazy --plan "$p" >"$d/o" 2>&1
  echo "--plan $p: exit $? -- $(grep -E '^ +0 ' "$d/o")"
done
echo "(the run has 39 calls: 39 and 9999 cannot fire, yet PASS/exit 0)"
rm -rf "$d"
