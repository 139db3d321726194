#!/bin/sh
# Hazard: none in H1–H176 — a world file of another shape is bad input. A
# world whose objects table has other columns (an older or newer format, a
# hand-edited or hostile file) was accepted: the SQL error of its first read
# answered as "HTTP 404", a non-JSON body as "failed in SQLite: not an
# error", and the run still wrote call_log rows into it. Now every command
# that opens a world (`run --transport sim:W`, `sim serve --db W`) refuses
# it before its first call: exit 65 naming the world, the table, the row
# and the field, and the file is left byte for byte as it was (no -wal, no
# call_log row).
#
#   tests/check_world_shape.sh BUILD/reassert SOURCE_ROOT
set -u
bin=$1
src=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
fail() {
  echo "FAIL: $1"
  fails=$((fails + 1))
}

"$bin" sim init --scenario "$src/scenarios/cost/no-drift-small.yaml" --db "$T/good.db" \
  >/dev/null 2>&1 || fail "sim init"
sqlite3 "$T/good.db" 'PRAGMA wal_checkpoint(TRUNCATE)' >/dev/null
rm -f "$T/good.db-wal" "$T/good.db-shm"
"$bin" run --transport "sim:$T/good.db" --desired current >"$T/o" 2>&1 ||
  fail "the unedited world: exit $?: $(head -c 300 "$T/o")"

# bad NAME SQL NEEDLE...: the world edited by SQL is refused by `run` and by
# `sim serve`, 65, naming each NEEDLE; the file is unchanged and alone.
bad() {
  what=$1 sql=$2
  shift 2
  rm -f "$T/w.db"*
  "$bin" sim init --scenario "$src/scenarios/cost/no-drift-small.yaml" --db "$T/w.db" \
    >/dev/null 2>&1 || fail "$what: sim init"
  sqlite3 "$T/w.db" "$sql" || fail "$what: the edit failed"
  sqlite3 "$T/w.db" 'PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode=DELETE' >/dev/null
  before=$(md5sum <"$T/w.db")
  "$bin" run --transport "sim:$T/w.db" --desired current >"$T/e" 2>&1
  rc=$?
  [ $rc -eq 65 ] || fail "$what: run exit $rc, want 65: $(head -c 300 "$T/e")"
  grep -qF "sim world $T/w.db" "$T/e" || fail "$what: run names no world: $(head -c 300 "$T/e")"
  for n in "$@"; do
    grep -qF -- "$n" "$T/e" || fail "$what: run does not say '$n': $(head -c 300 "$T/e")"
  done
  [ "$(md5sum <"$T/w.db")" = "$before" ] || fail "$what: run changed the world file"
  [ "$(ls "$T" | grep -c '^w\.db')" = 1 ] || fail "$what: run left files beside the world: $(ls "$T")"
  timeout 20 "$bin" sim serve --db "$T/w.db" --listen 127.0.0.1:0 >"$T/o" 2>"$T/e"
  rc=$?
  [ $rc -eq 65 ] || fail "$what: sim serve exit $rc, want 65: $(head -c 300 "$T/e")"
  for n in "$@"; do
    grep -qF -- "$n" "$T/e" || fail "$what: sim serve does not say '$n': $(head -c 300 "$T/e")"
  done
  [ "$(md5sum <"$T/w.db")" = "$before" ] || fail "$what: sim serve changed the world file"
}

bad "objects without uid and rv" \
  "DROP TABLE objects; CREATE TABLE objects(kind TEXT, ns TEXT, name TEXT, body TEXT);" \
  "table objects has another schema" 'column 1 is "kind TEXT", expected kind TEXT NOT NULL'
bad "objects with an extra column" "ALTER TABLE objects ADD COLUMN extra TEXT;" \
  "table objects has another schema" "column 7 is \"extra TEXT\""
bad "a table missing" "DROP TABLE call_log;" "table call_log is missing"
bad "a non-JSON body" \
  "UPDATE objects SET body = 'not json' WHERE kind = 'Lease';" \
  "table objects, row Lease/flux-system/ghcr-auth-refresh: field body is not JSON"
bad "a JSON body that is no object" \
  "UPDATE objects SET body = '[1,2]' WHERE kind = 'Lease';" \
  "row Lease/flux-system/ghcr-auth-refresh: field body is not a JSON object"
bad "a revision that is text" \
  "UPDATE objects SET rv = 'seven' WHERE kind = 'Lease';" \
  "row Lease/flux-system/ghcr-auth-refresh: field rv is not a revision"
bad "the global revision gone" "DELETE FROM store_meta WHERE key = 'revision';" \
  "table store_meta, row revision: field value"

echo "world shape: $fails failed"
[ "$fails" -eq 0 ]
