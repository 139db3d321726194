#!/bin/sh
# Finding F9 (low): `reassert sweep --perturb` reports a plan as FAIL and
# prints a `--plan` command to reproduce it, but that command judges the same
# plan "failed closed" (PASS). The failing check: "failed closed while 1
# fence(s) are held, and no message names the command to inspect them
# (`reassert --fences`)": the run's error "renewing Lease ... failed (HTTP
# 422): it is now held by another run; the fence is lost" names no
# `reassert --fences` (H28), unlike the other Lease-lost message.
# Usage: sh f9-sweep-reproduce.sh path/to/reassert path/to/source
set -u
BIN=${1:-build/reassert}; SRC=${2:-.}
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN"); SRC=$(cd "$SRC" && pwd)
F="$SRC/scenarios/adv5-fence-lease-acquire-timeout.yaml"
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
sed -e '/faults:/,/nth: 1, timeout/d' -e 's/^name: .*/name: f9-base/' "$F" > "$T/f9.yaml"
# the perturbation plan lease-take before call 96 (the parent fence's
# Kustomization reads during the controller rollout wait); shard picks plan 1159
"$BIN" sweep "$T/f9.yaml" --run roll --strategy lazy --perturb --shard 1159/10000 | tail -n 4
"$BIN" sweep "$T/f9.yaml" --run roll --strategy lazy --plan '96:perturb=lease-take' | tail -n 2
