#!/bin/sh
# Reseed and incidents (DESIGN.md §8 r2), on
# two-run-stage-reassert recorded under eager (production's behaviour):
#  1. `replay --reseed --strategy eager` reproduces each recorded run's exit
#     and counters on the world seeded from its cassette — the stage run only
#     does its 6 reboots when the world holds the recorded (stale)
#     credential, not the preset's;
#  2. `--reseed` (lazy) on the no-drift run shows 0 controller restarts and
#     0 Lease writes where the recording has them when the OpenBao seed the
#     eager recording never read equals what its consumers show (its first
#     reading, the what-if of check_reseed_what_if.sh); the side-by-side
#     names every column and is the same bytes twice;
#  3. `--to-scenario` writes a scenario (cassette path relative to it) that
#     loads and passes in `reassert sim`, pins those counters, starts with a
#     header to fill in, and is the same bytes twice;
#  4. a scenario's `cluster: {cassette: FILE}` that is missing, not a
#     cassette, or given with preset keys is exit 65 naming the scenario
#     file, line and field;
#  5. an object written before any read is a warning, never a silent guess;
#  6. `reassert sim` on a scenario whose cluster is `{cassette: FILE}` says
#     what the cassette cannot show, as `replay --reseed` does: the same
#     `warning:` lines, on stderr (in --json mode too, so the JSON on stdout
#     stays the report), the same bytes on every run; a preset cluster warns
#     of nothing;
#  7. no catalogue password, its base64 or base64(user:password) appears in
#     anything these commands print or write;
#  8. one clock epoch: a sim recording's clock starts in 2026 with the world's
#     stamps, and a leaked-Lease recovery reseeded from it (its first clock
#     read, its liveness answers) replays its recorded exit.
#
#   tests/check_reseed.sh BUILD/reassert SOURCE_ROOT
set -u
# A GitHub Actions step, where forged commands would be parsed (plain text:
# tests/check_ci_native.sh).
GITHUB_ACTIONS=true
export GITHUB_ACTIONS
bin=$1
src=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
status=0
fail() {
  echo "FAIL: $1"
  status=1
}

# (recorded under inc/, where the incident scenario is written: a scenario
# reads its cassette from its own folder or below)
mkdir "$out/inc"
"$bin" sim --record "$out/inc/rec" --strategy eager "$src"/scenarios/two-run-stage-reassert.yaml \
  >"$out/sim.txt" 2>&1 || fail "recording the fixture failed: $(tail -3 "$out/sim.txt")"
stage="$out/inc/rec/two-run-stage-reassert.stage.db"
noop="$out/inc/rec/two-run-stage-reassert.reassert.db"
[ -f "$stage" ] && [ -f "$noop" ] || {
  echo "FAIL: no cassettes recorded"
  exit 1
}

# 1. Eager on the reseeded world is the recorded run.
same='[.recorded.writes, .recorded.controller_restarts, .recorded.lease_writes,
  .recorded.fence_acquisitions, .recorded.policy_pauses, .recorded.node_reboots,
  .recorded.node_drains, .recorded.api_calls, .recorded.virtual_seconds, .exit.recorded]
  == [.replayed.writes, .replayed.controller_restarts, .replayed.lease_writes,
  .replayed.fence_acquisitions, .replayed.policy_pauses, .replayed.node_reboots,
  .replayed.node_drains, .replayed.api_calls, .replayed.virtual_seconds, .exit.replayed]'
for c in "$stage" "$noop"; do
  "$bin" replay "$c" --reseed --strategy eager --json >"$out/eager.json" 2>"$out/e" ||
    fail "--reseed --strategy eager of ${c#"$out"/} exited $?: $(head -c 300 "$out/e")"
  jq -e "$same" "$out/eager.json" >/dev/null ||
    fail "--reseed --strategy eager of ${c#"$out"/} does not reproduce the recording: $(cat "$out/eager.json")"
  cat "$out/eager.json" >>"$out/all-output"
done
"$bin" replay "$stage" --reseed --strategy eager --json | jq -e '.replayed.node_reboots == 6' \
  >/dev/null || fail "the reseeded stage run did not roll the 6 nodes (world not from the cassette?)"

# 2. Lazy on the recorded no-drift run: no restart, no Lease write.
"$bin" replay "$noop" --reseed --json >"$out/lazy.json" 2>"$out/e" ||
  fail "--reseed exited $?: $(head -c 300 "$out/e")"
jq -e '.strategy == {"recorded": "eager", "replayed": "lazy"}
  and .recorded.controller_restarts >= 1 and .recorded.lease_writes >= 1
  and .replayed.controller_restarts == 0 and .replayed.lease_writes == 0
  and .replayed.writes == 0 and .exit == {"recorded": 0, "replayed": 0}
  and (.warnings | type) == "array"' "$out/lazy.json" >/dev/null ||
  fail "lazy on the no-drift recording: $(cat "$out/lazy.json")"
"$bin" replay "$noop" --reseed >"$out/table.txt" 2>&1 || fail "--reseed (text) exited $?"
"$bin" replay "$noop" --reseed >"$out/table2.txt" 2>&1
cmp -s "$out/table.txt" "$out/table2.txt" || fail "--reseed printed different bytes twice"
grep -Eq '^ +recorded +seed=consumers +seed-stale$' "$out/table.txt" ||
  fail "the side-by-side has no columns: $(sed -n 2p "$out/table.txt")"
grep -Eq '^controller_restarts +1 +0 +[0-9]+$' "$out/table.txt" ||
  fail "the side-by-side does not show 1 restart recorded, 0 replayed: $(cat "$out/table.txt")"
grep -Eq '^lease_writes +[1-9][0-9]* +0 +[0-9]+$' "$out/table.txt" ||
  fail "the side-by-side does not show Lease writes recorded, none replayed"
grep -q '^::' "$out/table.txt" && fail "--reseed printed a workflow command"
cat "$out/lazy.json" "$out/table.txt" >>"$out/all-output"

# 3. The incident as a scenario.
"$bin" replay "$noop" --to-scenario "$out/inc/no-drift-incident.yaml" >"$out/o" 2>&1 ||
  fail "--to-scenario exited $?: $(cat "$out/o")"
scn="$out/inc/no-drift-incident.yaml"
if [ -f "$scn" ]; then
  # (OUT is never overwritten: the first one moves aside for the second.)
  mv "$scn" "$out/first.yaml"
  "$bin" replay "$noop" --to-scenario "$scn" >/dev/null 2>&1
  cmp -s "$scn" "$out/first.yaml" || fail "--to-scenario wrote different bytes twice"
  head -1 "$scn" | grep -q '^# Hazard: ' || fail "the written scenario has no header to fill in"
  grep -qF 'cluster: {cassette: "rec/two-run-stage-reassert.reassert.db"}' "$scn" ||
    fail "the cassette path is not relative to the scenario: $(grep cluster "$scn")"
  grep -qF 'name: "no-drift-incident"' "$scn" || fail "the scenario is not named after its file"
  "$bin" sim "$scn" >"$out/sim2.txt" 2>&1 ||
    fail "the written scenario does not pass in reassert sim: $(tail -5 "$out/sim2.txt")"
  grep -Eq 'eager +reassert +0 +1 ' "$out/sim2.txt" || fail "the eager run does not pin 1 restart"
  # The expectations pin: a changed pin fails the scenario.
  sed 's/controller_restarts: 1/controller_restarts: 0/' "$scn" >"$out/inc/edited.yaml"
  "$bin" sim "$out/inc/edited.yaml" >/dev/null 2>&1
  [ $? -eq 1 ] || fail "the written expectations do not pin the eager run's restarts"
  cat "$scn" >>"$out/all-output"
fi

# 4. A scenario's cassette that cannot be read.
bad_cluster() {
  printf 'name: bad\ncluster: %s\ndesired: desired\nruns:\n  - name: r\n' "$2" >"$out/inc/bad.yaml"
  "$bin" sim "$out/inc/bad.yaml" >/dev/null 2>"$out/e"
  rc=$?
  [ $rc -eq 65 ] || fail "$1: exit $rc, expected 65"
  grep -qF "$out/inc/bad.yaml:2:" "$out/e" || fail "$1: the error does not name file and line"
  grep -q "cluster" "$out/e" || fail "$1: the error does not name the field: $(cat "$out/e")"
}
bad_cluster "a missing cassette" '{cassette: missing.db}'
printf 'not a database\n' >"$out/inc/text.db"
bad_cluster "a text file as cassette" '{cassette: text.db}'
bad_cluster "a cassette with preset keys" \
  '{cassette: rec/two-run-stage-reassert.reassert.db, preset: prod}'

# 5. A write before any read is named.
cp "$noop" "$out/unread.db"
# (the seqs renumbered 1, 2, 3, ... after the deletion: a gap is refused)
sqlite3 "$out/unread.db" \
  "DELETE FROM calls WHERE op = 'kube.get' AND target = 'Lease/flux-system/ghcr-auth-refresh';
   CREATE TABLE c2 AS SELECT * FROM calls ORDER BY seq; DELETE FROM calls;
   INSERT INTO calls SELECT row_number() OVER (ORDER BY seq), op, target, request, status,
     response, error, vt_ms, wall_ms, sent, batch FROM c2; DROP TABLE c2;"
"$bin" replay "$out/unread.db" --reseed --json >"$out/unread.json" 2>"$out/e" ||
  fail "--reseed of a cassette with the Lease never read exited $?: $(head -c 300 "$out/e")"
jq -e '[.warnings[] | select(test("kube.patch Lease/flux-system/ghcr-auth-refresh was written before it was ever read"))] | length == 1' \
  "$out/unread.json" >/dev/null || fail "no warning for the Lease written before any read"

# 6. `sim` on a cassette scenario warns as `replay --reseed` does.
mkdir "$out/warn"
for base in incident-2026-08-08-steady-state-reassert.reassert \
  incident-2026-09-23-aws-healthcheckfailed.reassert; do
  cp "$src/scenarios/incidents/$base.db" "$src/scenarios/incidents/$base.yaml" "$out/warn/"
  "$bin" replay "$out/warn/$base.db" --reseed >"$out/warn/reseed.txt" 2>&1 || fail "$base: --reseed failed"
  grep '^warning: ' "$out/warn/reseed.txt" >"$out/warn/want"
  [ -s "$out/warn/want" ] || fail "$base: --reseed warns of nothing (the fixture shows no gap)"
  "$bin" sim "$out/warn/$base.yaml" >"$out/warn/o1" 2>"$out/warn/e1" || fail "$base: sim failed: $(cat "$out/warn/o1")"
  grep '^warning: ' "$out/warn/e1" >"$out/warn/got"
  cmp -s "$out/warn/want" "$out/warn/got" ||
    fail "$base: sim's warnings differ from --reseed's: $(cat "$out/warn/got")"
  grep -q '^warning: ' "$out/warn/o1" && fail "$base: a warning went to stdout"
  "$bin" sim "$out/warn/$base.yaml" >"$out/warn/o2" 2>"$out/warn/e2"
  cmp -s "$out/warn/e1" "$out/warn/e2" || fail "$base: sim's stderr differs between two runs"
  "$bin" sim --json "$out/warn/$base.yaml" >"$out/warn/j" 2>"$out/warn/je" || fail "$base: sim --json failed"
  jq -e .scenarios "$out/warn/j" >/dev/null || fail "$base: sim --json is not the JSON report"
  grep -q 'warning: ' "$out/warn/j" && fail "$base: a warning went into --json's stdout"
  grep '^warning: ' "$out/warn/je" | cmp -s "$out/warn/want" - || fail "$base: sim --json's warnings differ"
  cat "$out/warn/reseed.txt" "$out/warn/o1" "$out/warn/e1" >>"$out/all-output"
done

"$bin" sim "$src/scenarios/drift/root.yaml" >/dev/null 2>"$out/warn/e"
grep -q '^warning: ' "$out/warn/e" && fail "a preset cluster warns: $(grep '^warning: ' "$out/warn/e")"

# 8. One clock epoch: a recording's clock is the world's wall clock (2026,
#    not 1970 + virtual time), and a world seeded from it starts at its first
#    clock read with the liveness answers it recorded, so the leaked-Lease
#    recovery of scenarios/recovery/leaked-lease-wall-clock.yaml replays as
#    recorded: refused within the Lease's duration, released after it.
"$bin" sim --record "$out/lease" --strategy lazy \
  "$src/scenarios/recovery/leaked-lease-wall-clock.yaml" >"$out/o" 2>&1 ||
  fail "recording the leaked-Lease scenario failed: $(tail -3 "$out/o")"
for run in renewed-within-duration:1 past-its-duration:0; do
  c="$out/lease/recover-leaked-lease-wall-clock.${run%:*}.db"
  vt=$(sqlite3 "$c" "SELECT value FROM meta WHERE key = 'vt_start'")
  [ "${vt:-0}" -ge 1767225600000 ] || fail "${run%:*}: the recording's clock starts at $vt ms, before 2026"
  "$bin" replay "$c" --reseed --json >"$out/l.json" 2>"$out/e" ||
    [ "${run#*:}" -eq 1 ] || fail "--reseed of ${run%:*} exited $?: $(head -c 300 "$out/e")"
  jq -e ".exit == {\"recorded\": ${run#*:}, \"replayed\": ${run#*:}}" "$out/l.json" >/dev/null ||
    fail "--reseed of ${run%:*} does not replay the recorded exit: $(jq -c .exit "$out/l.json")"
done

# 7. Nothing printed or written holds a catalogue secret.
for pw in ghp-prev-0a1b2c3d4e5f ghp-curr-9f8e7d6c5b4a ghp-revk-5566778899aa; do
  for needle in "$pw" "$(printf %s "$pw" | base64)" "$(printf 'deploy-bot:%s' "$pw" | base64)"; do
    grep -qF "$needle" "$out/all-output" && fail "a catalogue secret reached the output"
  done
done

[ $status -eq 0 ] && echo "reseed: eager reproduces the recording, lazy drops the restarts, the incident scenario passes"
exit $status
