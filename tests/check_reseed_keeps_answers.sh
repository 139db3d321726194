#!/bin/sh
# A reseed keeps every recorded answer a decision depends on (DESIGN.md §8
# "the first observation of every object", here the answers that are no
# object: run liveness, OpenBao refusals, registry grants), and says when it
# could not:
#  1. recover-fences' recovery (--recover-fences, recorded exit 0: the dead
#     holder's run answered terminal) reseeds to exit 0 — the world keeps the
#     recorded liveness answer — and `--to-scenario` pins exit 0;
#  2. a reseeded run whose exit differs from the recorded one is a
#     divergence: `replay --reseed` exits 1 naming both exits, in text and
#     --json (the same cassette with its liveness answer edited to "live"
#     while the recording says exit 0), and `--to-scenario` warns on stderr
#     and in the written header that it pins another exit than the
#     recording's;
#  3. an answer the reseeded world cannot give (OpenBao refusing the seed
#     read with 403, openbao-seed-forbidden) is a warning of `--reseed` and of
#     `--to-scenario`, on stderr and in the header, never silently dropped.
#
#   tests/check_reseed_keeps_answers.sh BUILD/reassert SOURCE_ROOT
set -u
# The verdicts are read in their GitHub Actions form (::error::, ::warning::).
GITHUB_ACTIONS=true
export GITHUB_ACTIONS
bin=$1
src=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fails=0
fail() {
  echo "FAIL: $1"
  fails=$((fails + 1))
}

"$bin" sim --record "$out/rec" --strategy lazy "$src/scenarios/recovery/killed-mid-fence.yaml" \
  "$src/scenarios/fanout/openbao-seed-forbidden.yaml" >"$out/sim.txt" 2>&1 ||
  fail "recording the fixtures failed: $(tail -3 "$out/sim.txt")"

# 1. The recovery reseeds to its recorded exit.
c=$out/rec/recover-fences.recover-once-terminal.db
[ "$(sqlite3 "file:$c?immutable=1" "select value from meta where key='exit'")" = 0 ] ||
  fail "the recorded recovery did not exit 0"
sqlite3 "file:$c?immutable=1" "select response from calls where op='run.liveness'" |
  grep -q '"terminal":true' || fail "the recorded recovery never heard its holder was terminal"
"$bin" replay "$c" --reseed >"$out/r1.txt" 2>&1
rc=$?
[ $rc -eq 0 ] || fail "reseed of the recovery exited $rc: $(head -c 600 "$out/r1.txt")"
grep -Eq '^exit +0 +0$' "$out/r1.txt" || fail "reseed of the recovery: $(grep '^exit' "$out/r1.txt")"
"$bin" replay "$c" --reseed --json >"$out/r1.json" 2>"$out/r1.err"
rc=$?
[ $rc -eq 0 ] || fail "reseed --json of the recovery exited $rc"
jq -e '.exit.recorded == 0 and .exit.replayed == 0 and .replayed.lease_writes == 1' \
  "$out/r1.json" >/dev/null || fail "reseed --json of the recovery: $(head -c 400 "$out/r1.json")"
"$bin" replay "$c" --to-scenario "$out/r1.yaml" >"$out/t1.txt" 2>"$out/t1.err" ||
  fail "--to-scenario of the recovery exited $?: $(cat "$out/t1.err")"
[ "$(grep -c '^ *exit: 0$' "$out/r1.yaml")" -eq 2 ] ||
  fail "--to-scenario of the recovery does not pin exit 0 under both strategies: $(grep 'exit:' "$out/r1.yaml")"
grep -q 'pins exit' "$out/t1.err" "$out/r1.yaml" &&
  fail "--to-scenario of the recovery warns about an exit it kept"

# 2. The recording says exit 0, its answer says the holder is live: today's
#    core refuses (exit 1), a divergence.
cp "$c" "$out/live.db"
sqlite3 "$out/live.db" "UPDATE calls SET response = '{\"terminal\":false}' WHERE op = 'run.liveness'" ||
  fail "editing the liveness answer failed"
"$bin" replay "$out/live.db" --reseed >"$out/r2.txt" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "a reseed that exits 1 where the recording exited 0 exited $rc, expected 1"
grep -q '^::error::reseed of .*live.db: the replayed run exited 1 where the recorded run exited 0' \
  "$out/r2.txt" || fail "the divergent reseed does not say so: $(head -c 600 "$out/r2.txt")"
"$bin" replay "$out/live.db" --reseed --json >"$out/r2.json" 2>"$out/r2.err"
rc=$?
[ $rc -eq 1 ] || fail "reseed --json of the divergent run exited $rc, expected 1"
jq -e '.exit.recorded == 0 and .exit.replayed == 1 and .diverged == true' "$out/r2.json" \
  >/dev/null || fail "reseed --json of the divergent run: $(head -c 400 "$out/r2.json")"
grep -q 'exited 1 where the recorded run exited 0' "$out/r2.err" ||
  fail "reseed --json of the divergent run says nothing on stderr"
jq -e '.diverged == false' "$out/r1.json" >/dev/null || fail "the kept recovery is called diverged"
"$bin" replay "$out/live.db" --to-scenario "$out/r2.yaml" >"$out/t2.txt" 2>"$out/t2.err" ||
  fail "--to-scenario of the divergent run exited $?: $(cat "$out/t2.err")"
grep -q "pins exit 1 under lazy where the recorded run exited 0" "$out/t2.err" ||
  fail "--to-scenario pins another exit without a warning on stderr: $(cat "$out/t2.err")"
grep -q "^# .*pins exit 1 under lazy where the recorded run exited 0" "$out/r2.yaml" ||
  fail "--to-scenario pins another exit without a warning in the header"

# 3. An answer the reseeded world cannot give.
c=$out/rec/openbao-seed-forbidden.reassert.db
sqlite3 "file:$c?immutable=1" "select status from calls where op='openbao.read'" | grep -qx 403 ||
  fail "openbao-seed-forbidden recorded no 403"
"$bin" replay "$c" --reseed >"$out/r3.txt" 2>&1
grep -q '^warning: .*OpenBao.*403' "$out/r3.txt" ||
  fail "reseed does not warn that it cannot refuse the OpenBao read: $(grep warning "$out/r3.txt")"
"$bin" replay "$c" --to-scenario "$out/r3.yaml" >"$out/t3.txt" 2>"$out/t3.err" ||
  fail "--to-scenario of openbao-seed-forbidden exited $?: $(cat "$out/t3.err")"
grep -q '^::warning::.*OpenBao.*403' "$out/t3.err" ||
  fail "--to-scenario does not warn on stderr about the answer it could not keep: $(cat "$out/t3.err")"
grep -q '^# .*OpenBao.*403' "$out/r3.yaml" ||
  fail "--to-scenario does not name the answer it could not keep in the header"

[ $fails -eq 0 ] && echo "reseed keeps the recorded answers, and says when it cannot"
[ $fails -eq 0 ]
