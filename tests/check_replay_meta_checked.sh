#!/bin/sh
# Hazard: none in H1–H176 — DESIGN §7 (65 for a bad cassette, naming the
# field): every meta value a replay uses is checked on load. A run_ref
# holding a line break, a transport that is neither sim nor live and a
# started time that is no RFC 3339 time are each 65 naming the key.
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
for kv in 'run_ref|sim.r
x' 'transport|carrier-pigeon' 'started|not a date'; do
  k=${kv%%|*}
  v=${kv#*|}
  cp "$C" "$T/c.db"
  sqlite3 "$T/c.db" "update meta set value='$v' where key='$k'"
  "$BIN" replay "$T/c.db" --strict >"$T/o" 2>&1
  rc=$?
  [ $rc -eq 65 ] || fail "meta $k edited: strict replay exit $rc, expected 65"
  [ $rc -ne 65 ] || grep -q "$k" "$T/o" || fail "meta $k: the refusal does not name the key"
done
exit $status
