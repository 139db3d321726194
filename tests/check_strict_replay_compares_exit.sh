#!/bin/sh
# Hazard: none in H1–H176 — DESIGN §8 (a recording is a regression test made
# from reality): the recorded exit is part of what strict replay checks. A
# cassette whose meta exit says 1 for a run that exits 0 again must fail
# strict replay (exit 1) showing both exits.
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
for e in 1 65 137; do
  cp "$C" "$T/c.db"
  sqlite3 "$T/c.db" "update meta set value='$e' where key='exit'"
  "$BIN" replay "$T/c.db" --strict >"$T/o" 2>&1
  rc=$?
  [ $rc -eq 1 ] || fail "recorded exit $e, replayed exit 0: strict replay exit $rc, expected 1"
done
exit $status
