#!/bin/sh
# A cassette is its .db file alone, at every moment a reader could copy it
# (DESIGN.md §8; the README's incident workflow adds the .db to git, never
# its -wal): after a run ended by a `crash` fault and after a live run killed
# with SIGKILL, a copy of the .db alone (`cp inc.db elsewhere/`) holds every
# call the file and its -wal hold. A recording that ends without its end
# record (a killed run) replays what is there and says where it ends —
# "recording ended at seq N", exit 1 — never "no divergence" nor a success;
# a run the scenario's own crash fault ended is recorded as ended there
# (exit 137), and replays with exit 0. No credential or token in any file.
#
#   tests/check_cassette_db_alone.sh BUILD/reassert SOURCE_ROOT
set -u
bin=$1
src=$2
tmp=$(mktemp -d)
spid=
rpid=
cleanup() {
  [ -n "$rpid" ] && kill -9 "$rpid" 2>/dev/null
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
mkdir "$tmp/elsewhere" "$tmp/whole"

# calls FILE: the calls a reader finds in FILE alone (opened immutable: no
# -wal beside it is read, and nothing is written).
calls() { sqlite3 "file:$1?immutable=1" 'select count(*) from calls' 2>/dev/null; }
# whole_calls FILE: the calls FILE and its -wal hold together, read from a
# copy of both (reading the original would fold its -wal in).
whole_calls() {
  rm -f "$tmp/whole/"*
  cp "$1" "$tmp/whole/c.db"
  [ -f "$1-wal" ] && cp "$1-wal" "$tmp/whole/c.db-wal"
  sqlite3 "$tmp/whole/c.db" 'select count(*) from calls'
}

# 1. A run ended by the scenario's crash fault (recover-fences' ghost: killed
#    while it pauses Flux, after the Lease and the controller's first reads).
"$bin" sim --record "$tmp/rec" --strategy lazy "$src/scenarios/recovery/killed-mid-fence.yaml" \
  >"$tmp/sim.out" 2>&1 || fail "recover-fences did not pass while recording: $(tail -3 "$tmp/sim.out")"
ghost=$tmp/rec/recover-fences.ghost.db
n_whole=$(whole_calls "$ghost")
cp "$ghost" "$tmp/elsewhere/"
copy=$tmp/elsewhere/recover-fences.ghost.db
n_alone=$(calls "$copy")
[ "${n_whole:-0}" -ge 20 ] || fail "the crashed run's cassette holds only ${n_whole:-no} calls"
[ "$n_alone" = "$n_whole" ] ||
  fail "the crashed run's .db alone holds $n_alone of its $n_whole calls"
last=$(sqlite3 "file:$copy?immutable=1" 'select max(seq) from calls')
"$bin" replay "$copy" >"$tmp/ghost.txt" 2>&1
rc=$?
[ $rc -eq 0 ] || fail "strict replay of the crashed run's .db exited $rc: $(head -c 600 "$tmp/ghost.txt")"
grep -q "ended by a crash fault after seq $last (exit 137)" "$tmp/ghost.txt" ||
  fail "strict replay of the crashed run does not say where its crash fault ended it: $(cat "$tmp/ghost.txt")"
"$bin" replay "$copy" --json >"$tmp/ghost.json" 2>"$tmp/ghost.err"
rc=$?
[ $rc -eq 0 ] || fail "strict replay --json of the crashed run exited $rc"
jq -e --argjson n "$last" '.diverged_at == null and .ended_at == null and .recorded == null
  and .exit.recorded == 137 and .matched == $n' "$tmp/ghost.json" >/dev/null ||
  fail "strict replay --json of the crashed run: $(head -c 600 "$tmp/ghost.json")"

# 2. A live run killed with SIGKILL mid-rotation, as a cancelled deploy job
#    is: sim serve on a drifted world (the rollout waits on the wall clock,
#    so the run is still going when it is killed).
w=$tmp/world.db
"$bin" sim init --scenario "$src/scenarios/two-run-stage-reassert.yaml" --db "$w" >/dev/null ||
  fail "sim init"
# Over TLS with every input a live run takes (tests/lib_live.sh).
live_setup "$bin" "$src" "$tmp" "$w" || exit 1
spid=$SERVE_PID
pass=$LIVE_PASS
# live_run's command spelled out, so that $! is the run itself (kill -9).
HOME=$tmp BAO_ADDR=$SERVE_URL BAO_CACERT=$tmp/tls.pem BAO_TOKEN=bao-token-live-7e2a94 \
  REASSERT_REGISTRY_URL=$SERVE_URL REASSERT_REGISTRY_CACERT=$tmp/tls.pem \
  "$bin" run --transport live --kubeconfig "$tmp/kubeconfig" \
  --secret-file "$tmp/secret.enc.yaml" --decrypt-command "$tmp/decrypt.sh" \
  --talosctl "$src/tests/talosctl" --talosconfig "$tmp/talosconfig" \
  --record "$tmp/killed.db" >"$tmp/killed.out" 2>&1 </dev/null &
rpid=$!
i=0
while [ $i -lt 300 ] && ! grep -q 'waiting for every pre-restart pod' "$tmp/killed.out" 2>/dev/null; do
  kill -0 "$rpid" 2>/dev/null || break
  sleep 0.1
  i=$((i + 1))
done
sleep 0.5
kill -9 "$rpid" 2>/dev/null
wait "$rpid" 2>/dev/null
rpid=
grep -q 'waiting for every pre-restart pod' "$tmp/killed.out" ||
  fail "the live run never reached the rollout wait: $(tail -c 400 "$tmp/killed.out")"
n_whole=$(whole_calls "$tmp/killed.db")
cp "$tmp/killed.db" "$tmp/elsewhere/"
copy=$tmp/elsewhere/killed.db
n_alone=$(calls "$copy")
[ "${n_whole:-0}" -ge 40 ] || fail "the killed run's cassette holds only ${n_whole:-no} calls"
[ "$n_alone" = "$n_whole" ] || fail "the killed run's .db alone holds $n_alone of its $n_whole calls"
last=$(sqlite3 "file:$copy?immutable=1" 'select max(seq) from calls')
"$bin" replay "$copy" >"$tmp/killed.txt" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "strict replay of the killed run's .db exited $rc, expected 1: $(head -c 600 "$tmp/killed.txt")"
grep -q "recording ended at seq $last " "$tmp/killed.txt" ||
  fail "strict replay of the killed run does not say where the recording ends: $(cat "$tmp/killed.txt")"
grep -qiE 'no divergence|counters equal|never finished' "$tmp/killed.txt" &&
  fail "strict replay of the killed run claims success: $(cat "$tmp/killed.txt")"
"$bin" replay "$copy" --json >"$tmp/killed.json" 2>"$tmp/killed.err"
rc=$?
[ $rc -eq 1 ] || fail "strict replay --json of the killed run exited $rc, expected 1"
jq -e --argjson n "$last" '.diverged_at == null and .ended_at == $n and .recorded == null
  and .exit.recorded == null' "$tmp/killed.json" >/dev/null ||
  fail "strict replay --json of the killed run: $(head -c 600 "$tmp/killed.json")"
grep -q "recording ended at seq $last " "$tmp/killed.err" ||
  fail "strict replay --json of the killed run does not say where it ends on stderr"

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
for f in "$tmp"/killed* "$tmp"/elsewhere/* "$tmp"/ghost*; do
  [ -f "$f" ] || continue
  grep -qaF -f "$tmp/forms" "$f" && fail "a password or token is in $(basename "$f")"
done

[ $fails -eq 0 ] && echo "cassette .db alone: whole after a crash fault and after SIGKILL; the end said"
[ $fails -eq 0 ]
