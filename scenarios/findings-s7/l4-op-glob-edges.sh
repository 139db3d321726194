#!/bin/sh
# Finding L4: --op with a malformed glob ('[') or one naming a target
# ('kube.get Secret/*', the form faults and `during:` use) lists nothing
# and exits 0, indistinguishable from "no such call".
B=$(cd "$(dirname "${1:-build/reassert}")" && pwd)/$(basename "${1:-build/reassert}")
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
. "$(dirname "$0")/_rec.sh"
ok=1
for g in '[' 'kube.get Secret/*'; do
  n=$("$B" replay "$C" --list --op "$g" 2>"$d/e" | wc -l); rc=$?
  echo "--op '$g': $n lines (header included), $(cat "$d/e")"
  [ "$n" -gt 1 ] || [ -s "$d/e" ] || ok=0  # Expected: matches, or 64 saying why
done
[ $ok = 1 ]
