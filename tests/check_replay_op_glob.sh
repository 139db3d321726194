#!/bin/sh
# Hazard: none in H1–H176 — DESIGN §7 (bad usage is 64): `replay --list --op
# GLOB` takes the form a scenario's faults and `during:` take, '<operation
# glob> [<target glob>]': 'kube.get Secret/*' lists exactly the Secret reads,
# and a GLOB that could list nothing for a reason other than the cassette —
# an unclosed '[', two spaces, a verb no operation has — exits 64 saying
# why, never an empty list that reads as "no such call".
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
"$BIN" replay "$C" --list --op 'kube.get Secret/*' >"$T/o" 2>"$T/e"
rc=$?
n=$(($(wc -l <"$T/o") - 1))
want=$(sqlite3 "file:$C?immutable=1" "select count(*) from calls where op='kube.get' and target like 'Secret/%'")
[ $rc -eq 0 ] && [ "$n" -eq "$want" ] && [ "$n" -gt 0 ] ||
  fail "--op 'kube.get Secret/*': $n row(s), exit $rc, expected the $want Secret reads"
# Columns: seq, the time (+S.mmm and "s"), op, target, status.
tail -n +2 "$T/o" | awk '$4 != "kube.get" || $5 !~ /^Secret\//' | grep -q . &&
  fail "--op 'kube.get Secret/*' lists another call: $(tail -n +2 "$T/o" | head -3)"
"$BIN" replay "$C" --list --op 'kube.*' >"$T/o" 2>"$T/e" && [ "$(wc -l <"$T/o")" -gt 1 ] ||
  fail "--op 'kube.*' (no target glob) lists nothing"
for g in '[' 'kube.get Secret/[a' 'kube.get  Secret/*' 'kube.gte' ''; do
  "$BIN" replay "$C" --list --op "$g" >"$T/o" 2>"$T/e"
  rc=$?
  n=$(wc -l <"$T/o")
  [ $rc -eq 64 ] || fail "--op '$g': $n line(s), exit $rc: expected 64"
  [ $rc -ne 64 ] || grep -q -- '--op' "$T/e" || fail "--op '$g': the refusal does not name --op"
done
exit $status
