#!/bin/sh
# What-if reseeds, on the raft-restored seed of
# scenarios/fanout/stale-openbao-seed.yaml (every Kubernetes object looks current,
# only a direct read of OpenBao shows the old credential): an eager recording never reads the OpenBao seed
# (eager force-syncs instead), so a lazy reseed of it would decide on a
# guess. `replay --reseed --strategy lazy` of stale-openbao-seed's eager
# Reassert runs once per reading that matters — the seed equal to what its
# consumers show, and the seed stale as after a raft restore — and prints
# both outcomes side by side, in text and --json (DESIGN §8's keys kept,
# "what_if" added): lazy restarts nothing on the first and escalates on the
# second. A reseed whose run never reads the unobserved value (eager), and
# a recording that read the seed (lazy), have no what-if.
#
#   tests/check_reseed_what_if.sh BUILD/reassert SOURCE_ROOT
set -u
bin=$1
src=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fails=0
fail() {
  echo "FAIL: $1"
  fails=$((fails + 1))
}

"$bin" sim --record "$out/eager" --strategy eager "$src/scenarios/fanout/stale-openbao-seed.yaml" \
  >"$out/sim.txt" 2>&1 || fail "stale-openbao-seed did not pass under eager: $(tail -3 "$out/sim.txt")"
"$bin" sim --record "$out/lazy" --strategy lazy "$src/scenarios/fanout/stale-openbao-seed.yaml" \
  >>"$out/sim.txt" 2>&1 || fail "stale-openbao-seed did not pass under lazy: $(tail -3 "$out/sim.txt")"
c=$out/eager/stale-openbao-seed.reassert.db
[ "$(sqlite3 "file:$c?immutable=1" "select count(*) from calls where op like 'openbao.%'")" = 0 ] ||
  fail "the eager recording read OpenBao (nothing would be unobserved)"

# Text: one column per reading, the reason, each reading said.
"$bin" replay "$c" --reseed --strategy lazy >"$out/t.txt" 2>&1
rc=$?
[ $rc -eq 0 ] || fail "the lazy what-if reseed exited $rc: $(head -c 600 "$out/t.txt")"
grep -Eq '^ +recorded +seed=consumers +seed-stale$' "$out/t.txt" ||
  fail "the readings are not side by side: $(sed -n 2p "$out/t.txt")"
grep -Eq '^controller_restarts +1 +0 +1$' "$out/t.txt" ||
  fail "lazy should restart nothing on a seed equal to its consumers and escalate on a stale one: $(grep '^controller_restarts' "$out/t.txt")"
grep -q '^what-if: the recording never made openbao.read infrastructure/ghcr/auth' "$out/t.txt" ||
  fail "the text does not say what the recording never read"
grep -q '^  seed=consumers: the seed equal to what its consumers show (3 of the 3' "$out/t.txt" ||
  fail "the text does not say what the first reading is"
grep -q '^  seed-stale: the seed an older credential' "$out/t.txt" ||
  fail "the text does not say what the second reading is"

# --json: the contract's keys, the first reading as "replayed", both readings.
"$bin" replay "$c" --reseed --strategy lazy --json >"$out/j.json" 2>"$out/j.err"
rc=$?
[ $rc -eq 0 ] || fail "the lazy what-if reseed --json exited $rc: $(head -c 300 "$out/j.err")"
jq -e '(has("recorded") and has("replayed") and has("exit") and has("warnings"))
  and .what_if.unobserved == "openbao.read infrastructure/ghcr/auth"
  and ([.what_if.readings[].name] == ["seed=consumers", "seed-stale"])
  and .replayed == .what_if.readings[0].replayed
  and .what_if.readings[0].replayed.controller_restarts == 0
  and .what_if.readings[0].replayed.writes == 0
  and .what_if.readings[1].replayed.controller_restarts == 1
  and .what_if.readings[1].replayed.writes_by_kind.PushSecret >= 1
  and ([.what_if.readings[].exit] == [0, 0]) and .diverged == false' "$out/j.json" >/dev/null ||
  fail "the lazy what-if reseed --json: $(head -c 900 "$out/j.json")"

# No what-if where nothing hangs on the unobserved seed.
"$bin" replay "$c" --reseed --strategy eager --json >"$out/e.json" 2>&1 ||
  fail "the eager reseed exited $?"
jq -e '.what_if == null' "$out/e.json" >/dev/null || fail "eager never reads the seed, yet a what-if ran"
"$bin" replay "$out/lazy/stale-openbao-seed.reassert.db" --reseed --strategy lazy --json \
  >"$out/l.json" 2>&1 || fail "the reseed of the lazy recording exited $?"
jq -e '.what_if == null' "$out/l.json" >/dev/null ||
  fail "the lazy recording read the seed, yet a what-if ran"

# The readings' credentials are catalogue secrets like any other.
grep -q 'rs-stale-' "$out/t.txt" "$out/j.json" && fail "the stale reading's password is printed"

[ $fails -eq 0 ] && echo "what-if reseed: both readings of the unobserved seed, side by side"
[ $fails -eq 0 ]
