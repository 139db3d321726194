#!/bin/sh
# Hazard: none in H1–H176 — DESIGN §5.1 (a text cut short by a NUL is a load
# error, never a shorter input), §8 (a malformed row exits 65 naming the
# file and the seq): a NUL inside a recorded request or target, or a target
# that is not UTF-8, is refused with 65 naming the seq.
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
s=$(sqlite3 "$C" "select min(seq) from calls where op='kube.patch'")
for col in request target; do
  cp "$C" "$T/c.db"
  sqlite3 "$T/c.db" "update calls set $col=$col || cast(x'00' as text) || 'junk' where seq=$s"
  "$BIN" replay "$T/c.db" --strict >"$T/o" 2>&1
  rc=$?
  [ $rc -eq 65 ] || fail "a NUL in the $col of seq $s: strict replay exit $rc, expected 65"
  [ $rc -ne 65 ] || grep -q "seq $s" "$T/o" || fail "the refusal does not name seq $s: $(head -c 300 "$T/o")"
done
cp "$C" "$T/c.db"
sqlite3 "$T/c.db" "update calls set target=cast(x'5365637265742f78ff' as text) where seq=$s"
"$BIN" replay "$T/c.db" --list >"$T/o" 2>&1
rc=$?
[ $rc -eq 65 ] || fail "a target that is not UTF-8: --list exit $rc, expected 65"
exit $status
