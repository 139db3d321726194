#!/bin/sh
# An input is never written beside. `replay
# CASSETTE` in each mode (--list, --strict, --reseed, --to-scenario) and
# `sim` on a scenario whose cluster is `{cassette: FILE}` leave the
# cassette's directory byte-identical: no CASSETTE-wal, no CASSETTE-shm, no
# change to the file — also for a killed run's cassette whose last calls are
# still in its -wal (they are read, and the -wal is left as it was), and
# with the directory read-only (chmod 0555).
#
# The recorder checkpoints every commit into the file, so a killed run's
# -wal holds a call beyond the file only when the kill came mid-checkpoint
# (or the cassette was written by an older build): that -wal is made here
# with python3's sqlite3, from a cassette whose second half is written
# again with checkpoints off and copied, file and -wal, while still open.

#
#   tests/check_replay_readonly.sh BUILD/reassert SOURCE_ROOT
set -u
bin=$1
src=$2
out=$(mktemp -d)
trap 'chmod -R u+w "$out" 2>/dev/null; rm -rf "$out"' EXIT
status=0
fail() {
  echo "FAIL: $1"
  status=1
}

# A finished run (no -wal) and a run killed mid-way whose last calls are in
# its -wal.
"$bin" sim --record "$out/rec" --strategy lazy "$src"/scenarios/drift/root.yaml \
  "$src"/scenarios/recovery/fences-report-crash-state.yaml >"$out/sim.txt" 2>&1 ||
  fail "recording the fixtures failed: $(tail -3 "$out/sim.txt")"
mkdir "$out/in" "$out/in-ro"
cp "$out/rec/drift-root.fix.db" "$out/in/done.db" || fail "no finished cassette"
killed=$out/rec/killed-source.db
cp "$out/rec/fences-report-crash-state.ghost.db" "$killed" || fail "no killed cassette"
python3 - "$killed" "$out/in/killed.db" <<'PY' || fail "could not make the -wal fixture"
import shutil, sqlite3, sys
src, dst = sys.argv[1], sys.argv[2]
c = sqlite3.connect(src, isolation_level=None)
c.execute("PRAGMA journal_mode=WAL")
n = c.execute("SELECT count(*) FROM calls").fetchone()[0]
rows = c.execute("SELECT * FROM calls WHERE seq > ? ORDER BY seq", (n // 2,)).fetchall()
end = c.execute("SELECT * FROM meta WHERE key = 'exit'").fetchall()
c.execute("DELETE FROM calls WHERE seq > ?", (n // 2,))
c.execute("DELETE FROM meta WHERE key = 'exit'")
c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
c.execute("PRAGMA wal_autocheckpoint=0")
c.execute("BEGIN")
c.executemany("INSERT INTO calls VALUES (%s)" % ",".join("?" * len(rows[0])), rows)
c.executemany("INSERT INTO meta VALUES (?, ?)", end)
c.execute("COMMIT")
shutil.copyfile(src, dst)
shutil.copyfile(src + "-wal", dst + "-wal")
c.close()
PY
cp "$out/in/"* "$out/in-ro/"
chmod 0555 "$out/in-ro"

# The directory's listing and every file's bytes.
snap() { (cd "$1" && ls -la --time-style=+ | sed 1d && md5sum -- *); }

for dir in in in-ro; do
  for c in done killed; do
    f="$out/$dir/$c.db"
    before=$(snap "$out/$dir")
    for mode in --list --strict --reseed "--to-scenario $out/$dir-$c.yaml"; do
      # shellcheck disable=SC2086 # word splitting is the point
      "$bin" replay "$f" $mode >"$out/o" 2>"$out/e"
      rc=$?
      [ $rc -le 1 ] || fail "$dir/$c.db ($mode): exit $rc: $(head -c 300 "$out/e")"
      [ "$(snap "$out/$dir")" = "$before" ] ||
        fail "$dir/$c.db ($mode) wrote beside its input: $(ls "$out/$dir" | tr '\n' ' ')"
    done
    "$bin" sim "$out/$dir-$c.yaml" >"$out/o" 2>"$out/e"
    rc=$?
    [ $rc -le 1 ] || fail "sim on $dir-$c.yaml: exit $rc: $(head -c 300 "$out/e")"
    [ "$(snap "$out/$dir")" = "$before" ] ||
      fail "sim on a {cassette: $dir/$c.db} scenario wrote beside the cassette"
  done
done

# The killed run's last calls are in its -wal: reading without writing must
# still see them (the same calls as the recording directory's own copy).
"$bin" replay "$out/in-ro/killed.db" --list >"$out/ro.list" 2>&1 || fail "--list of killed.db"
"$bin" replay "$killed" --list >"$out/rec.list" 2>&1
cmp -s "$out/ro.list" "$out/rec.list" || fail "the -wal's calls are not read from a read-only copy"
listed=$(($(grep -c . "$out/ro.list") - 1))
main_only=$(sqlite3 "file:$out/in-ro/killed.db?immutable=1" "SELECT count(*) FROM calls" 2>/dev/null)
[ "$listed" -gt "${main_only:-0}" ] ||
  fail "the killed run's -wal holds no call beyond the file ($listed listed): not a -wal fixture"

[ $status -eq 0 ] && echo "replay reads its cassette without writing beside it"
exit $status
