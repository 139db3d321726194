#!/bin/sh
# Finding L1: a NUL byte inside a recorded request, response, target or
# error is silently cut there (the text after it is ignored): strict replay
# passes a request that differs from the replayed one after the NUL. Invalid
# UTF-8 in a target is accepted and printed raw by --list.
B=$(cd "$(dirname "${1:-build/reassert}")" && pwd)/$(basename "${1:-build/reassert}")
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
. "$(dirname "$0")/_rec.sh"
ok=1
s=$(sqlite3 "$C" "select min(seq) from calls where op='kube.patch'")
for col in request target; do
  cp "$C" "$d/c.db"
  sqlite3 "$d/c.db" "update calls set $col=$col || cast(x'00' as text) || 'junk' where seq=$s"
  "$B" replay "$d/c.db" --strict > "$d/o" 2>&1; rc=$?
  echo "NUL in $col of seq $s: exit $rc: $(head -1 "$d/o")"
  [ $rc = 65 ] || ok=0   # Expected: 65 naming the file and seq $s
done
cp "$C" "$d/c.db"
sqlite3 "$d/c.db" "update calls set target=cast(x'5365637265742f78ff' as text) where seq=$s"
"$B" replay "$d/c.db" --list > "$d/o" 2>&1; rc=$?
echo "invalid UTF-8 in a target: --list exit $rc"
[ $rc = 65 ] || ok=0
[ $ok = 1 ]
