#!/bin/sh
# A live recording made on the machine's own clock replays strictly with
# every counter equal (DESIGN.md §8: "a replay hands the core the same times
# ... strict comparison needs no normalisation"). The other live record
# checks take their clock from sim serve (--test-facade-clock), where no
# time passes between two reads; a user's live run reads a real clock, and
# the counting shim's first and last reads (virtual_seconds) must be the
# recorded ones, not reads of their own a millisecond apart.
#
# As a user would: `sim serve` on a converged world with a kubeconfig
# (tokenFile), a no-drift Reassert `reassert run --transport live --record`
# with no test-only flag, three times; each cassette copied the way a user
# copies it (the .db alone) and `replay` (strict, text and --json) exits 0
# with the recorded and the replayed counters equal, and equal to the run's
# own `--output json` counters. No credential or token in any file written.
#
# A rotation on the real clock needs sim serve to move its world on the wall
# clock (its controllers advance with the virtual clock only, today), so the
# recording here is the no-drift Reassert.
#
#   tests/check_live_record_real_clock.sh BUILD/reassert SOURCE_ROOT
set -u
bin=$1
src=$2
tmp=$(mktemp -d)
spid=
cleanup() {
  [ -n "$spid" ] && kill "$spid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
fails=0
fail() {
  echo "FAIL: $1"
  fails=$((fails + 1))
}
# shellcheck source=tests/lib_serve.sh
. "$src/tests/lib_serve.sh"
# shellcheck source=tests/lib_live.sh
. "$src/tests/lib_live.sh"

w=$tmp/world.db
"$bin" sim init --scenario "$src/scenarios/two-run-stage-reassert.yaml" --db "$w" >/dev/null ||
  fail "sim init"
"$bin" run --transport "sim:$w" --desired current >/dev/null || fail "the in-process rotation"
mkdir "$tmp/elsewhere"
# Over TLS with every input a live run takes (tests/lib_live.sh): no
# credential goes over plain http.
live_setup "$bin" "$src" "$tmp" "$w" || exit 1
spid=$SERVE_PID
pass=$LIVE_PASS

for i in 1 2 3; do
  (HOME=$tmp && export HOME && live_run --output json --record "$tmp/inc$i.db") \
    >"$tmp/run$i.json" 2>"$tmp/run$i.err" </dev/null
  rc=$?
  [ $rc -eq 0 ] || fail "live run $i exited $rc: $(head -c 400 "$tmp/run$i.json") $(head -c 300 "$tmp/run$i.err")"
  jq -e '.counters.writes == 0 and .counters.virtual_seconds > 1' "$tmp/run$i.json" >/dev/null ||
    fail "live run $i is not a no-drift Reassert on the real clock: $(jq -c .counters "$tmp/run$i.json")"
  cp "$tmp/inc$i.db" "$tmp/elsewhere/"
  c=$tmp/elsewhere/inc$i.db
  "$bin" replay "$c" >"$tmp/replay$i.txt" 2>&1
  rc=$?
  [ $rc -eq 0 ] || fail "strict replay of recording $i exited $rc: $(head -c 900 "$tmp/replay$i.txt")"
  grep -q 'counters equal' "$tmp/replay$i.txt" ||
    fail "strict replay of recording $i does not say the counters are equal"
  "$bin" replay "$c" --json >"$tmp/replay$i.json" 2>"$tmp/replay$i.err"
  rc=$?
  [ $rc -eq 0 ] || fail "strict replay --json of recording $i exited $rc"
  jq -e '.diverged_at == null and .recorded != null and .recorded == .replayed' \
    "$tmp/replay$i.json" >/dev/null ||
    fail "recording $i: recorded and replayed counters differ: $(jq -c '[.recorded.virtual_seconds, .replayed.virtual_seconds]' "$tmp/replay$i.json")"
  jq -S .counters "$tmp/run$i.json" >"$tmp/c.run"
  jq -S .recorded "$tmp/replay$i.json" >"$tmp/c.rec"
  cmp -s "$tmp/c.run" "$tmp/c.rec" ||
    fail "recording $i: the cassette's counters are not the run's own --output json counters"
done

: >"$tmp/forms"
for s in "$pass" kube-token-live-5d0b1c bao-token-live-7e2a94; do
  printf '%s\n' "$s" >>"$tmp/forms"
  for k in 0 1 2; do
    e=$({ head -c "$k" /dev/zero; printf '%s' "$s"; } | base64 -w0 | tr -d =)
    start=$((k == 0 ? 1 : k + 2))
    end=$((${#e} - 4))
    [ "$end" -ge $((start + 11)) ] && printf '%s\n' "$e" | cut -c"$start-$end" >>"$tmp/forms"
  done
done
for f in "$tmp"/inc* "$tmp"/elsewhere/* "$tmp"/run* "$tmp"/replay*; do
  [ -f "$f" ] || continue
  grep -qaF -f "$tmp/forms" "$f" && fail "a password or token is in $(basename "$f")"
done

[ $fails -eq 0 ] && echo "live record on the real clock: 3 recordings replay strictly, counters equal"
[ $fails -eq 0 ]
