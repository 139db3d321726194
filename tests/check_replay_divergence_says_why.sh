#!/bin/sh
# Hazard: none in H1–H176 — record/replay acceptance (DESIGN §8): editing one
# recorded response makes strict replay fail at that call with both versions
# shown. An edited Lease read (now held by another run) makes the replayed
# core stop there: the report must name that seq and say why the replayed
# run ended (its exit and its first error), in text and in --json.
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
s=$(sqlite3 "$C" "select min(seq) from calls where op='kube.get' and target like 'Lease/%'")
sqlite3 "$C" "update calls set response=replace(response,'\"holderIdentity\":\"\"','\"holderIdentity\":\"someone-else\"') where seq=$s"
"$BIN" replay "$C" --strict >"$T/o" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "strict replay of an edited response: exit $rc, expected 1"
grep -q "seq $s\b" "$T/o" || fail "the divergence does not name the edited seq $s: $(head -c 400 "$T/o")"
grep -q 'held by' "$T/o" || fail "the divergence does not say why the replayed run ended: $(head -c 400 "$T/o")"
"$BIN" replay "$C" --strict --json >"$T/j" 2>"$T/e"
rc=$?
[ $rc -eq 1 ] || fail "strict replay --json of an edited response: exit $rc, expected 1"
jq -e --argjson s "$s" '.divergence.ended_after == $s and (.divergence.error | test("held by"))
  and .exit.replayed == 1' "$T/j" >/dev/null ||
  fail "--json does not say after which seq and why the replayed run ended: $(jq -c .divergence "$T/j")"
grep -q "seq $s\b" "$T/e" || fail "--json's stderr does not name seq $s"
exit $status
