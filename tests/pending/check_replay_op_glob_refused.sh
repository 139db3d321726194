#!/bin/sh
# Hazard: none in H1–H176 — DESIGN §7 (bad usage is 64): `replay --list --op
# GLOB` with a malformed glob ('[') or one naming a target ('kube.get
# Secret/*', the form faults and `during:` use) must either match or exit 64
# saying why, never print an empty list that reads as "no such call".
# Pending: fails today because both print the header only and exit 0.
# Args: reassert binary, source dir.
set -u
BIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cat >"$T/s.yaml" <<'Y'
# Hazard: none (a small recording to edit)
name: rec
cluster: {preset: prod, credential: previous, workers: 1, control-planes: 1}
desired: current
runs:
  - name: r
    expect: {exit: 0}
Y
"$BIN" sim "$T/s.yaml" --strategy lazy --record "$T/rec" >/dev/null 2>&1 || { echo "FAIL: recording"; exit 1; }
C=$T/rec/rec.r.db
status=0
fail() { echo "FAIL: $*"; status=1; }
for g in '[' 'kube.get Secret/*'; do
  "$BIN" replay "$C" --list --op "$g" >"$T/o" 2>"$T/e"
  rc=$?
  n=$(wc -l <"$T/o")
  [ "$n" -gt 1 ] || [ $rc -eq 64 ] || fail "--op '$g': $n line(s), exit $rc, nothing said: expected matches or 64"
done
exit $status
