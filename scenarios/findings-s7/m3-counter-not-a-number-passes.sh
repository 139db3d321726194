#!/bin/sh
# Finding M3: a counters value that is not a finite JSON number is read as
# something else: '1e999' becomes null and strict replay says "counters
# equal" (exit 0) although the replayed writes are 50; '0x32' is read as 0.
B=$(cd "$(dirname "${1:-build/reassert}")" && pwd)/$(basename "${1:-build/reassert}")
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
. "$(dirname "$0")/_rec.sh"
ok=1
for v in 1e999 0x32 '5 0'; do
  cp "$C" "$d/c.db"; sqlite3 "$d/c.db" "update counters set value='$v' where name='writes'"
  "$B" replay "$d/c.db" --strict --json > "$d/o" 2>"$d/e"; rc=$?
  echo "writes='$v': exit $rc, recorded writes $(jq -c .recorded.writes "$d/o" 2>/dev/null) $(head -c 150 "$d/e")"
  [ $rc = 65 ] || ok=0      # Expected: 65 naming the counter
done
[ $ok = 1 ]
