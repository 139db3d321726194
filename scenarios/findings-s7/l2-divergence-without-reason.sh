#!/bin/sh
# Finding L2: an edited recorded response (the Lease now held by someone
# else) makes the replayed core stop; strict replay reports the NEXT seq
# with "replayed: (the run ended)" — not the edited call, not the replayed
# run's exit code, not the error that ended it. Issue 11 acceptance: "fail
# at that call with both versions shown".
B=$(cd "$(dirname "${1:-build/reassert}")" && pwd)/$(basename "${1:-build/reassert}")
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
. "$(dirname "$0")/_rec.sh"
s=$(sqlite3 "$C" "select min(seq) from calls where op='kube.get' and target like 'Lease/%'")
sqlite3 "$C" "update calls set response=replace(response,'\"holderIdentity\":\"\"','\"holderIdentity\":\"someone-else\"') where seq=$s"
"$B" replay "$C" --strict > "$d/o" 2>&1; rc=$?
echo "edited the response of seq $s; exit $rc"; cat "$d/o"
# Expected: the message names seq $s (or says the replayed run ended there)
# and gives the replayed run's exit and its error ("Lease ... is held by").
grep -q "seq $s" "$d/o" && grep -q 'held' "$d/o"
