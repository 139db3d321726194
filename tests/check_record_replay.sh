#!/bin/sh
# Record and replay over the whole suite (issue 11, DESIGN.md §8):
#  1. every scenario in scenarios/ is run with `sim --record DIR` under both
#     strategies, and every cassette strict-replays with exit 0, no
#     divergence and counters equal to the recorded ones (a run ended by its
#     `crash` fault has none: its end record, written by the runner, says
#     exit 137, and every call it made must still match);
#  2. every byte of every cassette the suite writes, any -wal and -shm
#     included, and every replay's
#     output, holds no catalogue password in plaintext or base64 (at each
#     alignment), nor the base64 of user:password — the failing
#     tests/harness/inputs/secret-* scenarios recorded too;
#  3. a cassette with one recorded answer edited diverges (exit 1), at or
#     after the edited call, showing the recorded and the replayed request;
#     the unedited copy replays clean.
# The suite's run is the ctest fixture's (tests/suite_run.sh, shared with
# check_no_plaintext and check_junit) when REASSERT_SUITE_RUN names it. The
# sanitizer build sets REASSERT_RECORD_QUICK=1: a few scenarios' cassettes
# are replayed (every one is recorded and scanned).
#
#   tests/check_record_replay.sh BUILD/reassert SOURCE_ROOT
set -u
bin=$1
src=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
status=0
fail() {
  echo "FAIL: $1"
  status=1
}

# The suite recorded: the ctest fixture's run (tests/suite_run.sh,
# REASSERT_SUITE_RUN), or one made here.
run=${REASSERT_SUITE_RUN:-}
if [ -z "$run" ]; then
  run=$out/run
  sh "$src/tests/suite_run.sh" "$bin" "$src" "$run" >/dev/null || fail "the suite could not be run"
fi
nfiles=$(wc -l <"$run/files")
[ "$(cat "$run/text.rc")" = 0 ] ||
  fail "the suite did not pass while recording (exit $(cat "$run/text.rc")): $(tail -3 "$run/text")"
cp -R "$run/rec" "$out/suite"
"$bin" sim --record "$out/bad" "$src"/tests/harness/inputs/secret-*.yaml >"$out/bad.txt" 2>&1
[ $? -eq 1 ] || fail "tests/harness/inputs/secret-*.yaml must fail while recording (exit 1)"

# A run its `crash` fault ended gets its end record from the runner (exit
# 137), and the cassette is closed: no -wal is left beside any cassette.
# (A run killed by a signal keeps its -wal: tests/check_cassette_db_alone.sh
# scans that one.)
crashed=0
for f in $(find "$out/suite" -name '*.db' | sort); do
  [ "$(sqlite3 "file:$f?immutable=1" "select value from meta where key='exit'")" = 137 ] &&
    crashed=$((crashed + 1))
done
[ "$crashed" -ge 1 ] || fail "no cassette records a run ended by its crash fault (exit 137)"
left=$(find "$out/suite" "$out/bad" -name '*-wal' | sed "s|$out/||")
[ -z "$left" ] || fail "a -wal was left beside a cassette: $left"

# 1. Every cassette strict-replays to the recorded counters (the sanitizer
# build, REASSERT_RECORD_QUICK=1: those of three scenarios and of the
# failing ones; every cassette is still scanned in 2).
n=0
unfinished=0
for f in $(find "$out/suite" "$out/bad" -name '*.db' | sort); do
  if [ "${REASSERT_RECORD_QUICK:-}" = 1 ]; then
    case $f in
      "$out"/bad/* | */two-run-stage-reassert.* | */recover-fences.* | */stale-openbao-seed.*) ;;
      *) continue ;;
    esac
  fi
  n=$((n + 1))
  "$bin" replay "$f" --strict --json >"$out/replay.$n.json" 2>"$out/replay.$n.err"
  rc=$?
  if [ $rc -ne 0 ]; then
    fail "strict replay of ${f#"$out"/} exited $rc: $(head -c 600 "$out/replay.$n.err")"
    continue
  fi
  jq -e '.diverged_at == null and .ended_at == null and
    (.recorded == .replayed or (.recorded == null and .exit.recorded == 137))' \
    "$out/replay.$n.json" >/dev/null || fail "strict replay of ${f#"$out"/}: counters differ"
  jq -e '.recorded == null' "$out/replay.$n.json" >/dev/null && unfinished=$((unfinished + 1))
done
[ "${REASSERT_RECORD_QUICK:-}" = 1 ] || [ "$n" -ge "$nfiles" ] ||
  fail "only $n cassettes for $nfiles scenarios"
# Killed runs are the exception: most cassettes must carry counters.
[ $((unfinished * 5)) -le "$n" ] || fail "$unfinished of $n cassettes have no counters"

# 2. No catalogue secret in any encoding, in any byte written.
{
  printf '%s\n' ghp-prev-0a1b2c3d4e5f ghp-curr-9f8e7d6c5b4a ghp-revk-5566778899aa
  sed -n 's/^[[:space:]]*password:[[:space:]]*\([^[:space:]#,}]*\).*/\1/p' \
    $(find "$src/scenarios" -name '*.yaml' | LC_ALL=C sort) "$src"/tests/harness/inputs/secret-*.yaml
  grep -ho 'password: [A-Za-z0-9-]*' $(find "$src/scenarios" -name '*.yaml' | LC_ALL=C sort) "$src"/tests/harness/inputs/secret-*.yaml |
    sed 's/password: //'
} | grep -v '^$' | sort -u >"$out/secrets"
{
  echo deploy-bot
  grep -ho 'username: [A-Za-z0-9._-]*' $(find "$src/scenarios" -name '*.yaml' | LC_ALL=C sort) "$src"/tests/harness/inputs/*.yaml |
    sed 's/username: //'
} | sort -u >"$out/users"
[ "$(wc -l <"$out/secrets")" -ge 3 ] || fail "found too few secrets to look for"
: >"$out/forms"
while IFS= read -r secret; do
  printf '%s\n' "$secret" >>"$out/forms"
  for k in 0 1 2; do
    e=$({ head -c "$k" /dev/zero; printf '%s' "$secret"; } | base64 -w0 | tr -d =)
    start=$((k == 0 ? 1 : k + 2))
    end=$((${#e} - 4))
    [ "$end" -ge $((start + 11)) ] && printf '%s\n' "$e" | cut -c"$start-$end" >>"$out/forms"
  done
  while IFS= read -r user; do
    printf '%s' "$user:$secret" | base64 -w0 >>"$out/forms"
    echo >>"$out/forms"
  done <"$out/users"
done <"$out/secrets"
files=$(find "$out/suite" "$out/bad" -type f | wc -l)
wals=$(find "$out/suite" "$out/bad" -name '*-wal' | wc -l)
hits=$(find "$out/suite" "$out/bad" -type f -exec grep -laF -f "$out/forms" {} + 2>/dev/null)
[ -z "$hits" ] || fail "a catalogue secret is in: $(echo "$hits" | sed "s|$out/||g" | tr '\n' ' ')"
hits=$(grep -laF -f "$out/forms" "$out"/replay.* 2>/dev/null)
[ -z "$hits" ] || fail "a catalogue secret is in a replay's output"

# 3. An edited answer diverges; the unedited copy does not.
c="$out/suite/lazy/two-run-stage-reassert.reassert.db"
[ -f "$c" ] || fail "no cassette for two-run-stage-reassert's reassert run"
cp "$c" "$out/edited.db"
seq=$(sqlite3 "$out/edited.db" \
  "SELECT min(seq) FROM calls WHERE op = 'kube.get' AND target LIKE 'Lease/%'")
sqlite3 "$out/edited.db" "UPDATE calls SET response = replace(response, '\"holderIdentity\":\"\"', \
'\"holderIdentity\":\"another-run\"') WHERE seq = $seq"
"$bin" replay "$out/edited.db" --strict >"$out/edited.txt" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "an edited answer (seq $seq) replays with exit $rc, not 1"
at=$(sed -n 's/.*diverged at seq \([0-9]*\).*/\1/p' "$out/edited.txt")
[ -n "$at" ] && [ "$at" -ge "$seq" ] || fail "the edited cassette did not diverge at or after seq $seq"
grep -q '^  recorded: ' "$out/edited.txt" && grep -q '^  replayed: ' "$out/edited.txt" ||
  fail "the divergence does not show both versions: $(head -c 400 "$out/edited.txt")"
"$bin" replay "$c" --strict >/dev/null 2>&1 || fail "the unedited cassette does not replay"

# 4. The desired password percent-encoded (URL userinfo; upper
#    and lower hex, every reserved byte or gen-delims only) and as hex, inside
#    cluster text, reaches neither the cassette nor stdout / --json.
cat >"$out/url-hex.yaml" <<'Y'
# Hazard: H59 (the credential percent-encoded or in hex)
name: url-hex-forms
strategies: [lazy]
cluster: {preset: prod, credential: current, workers: 1, control-planes: 1}
desired: current
catalogue:
  current: {username: m2-bot, password: 'P4ss+m2/q9z=x@y'}
runs:
  - name: forms
    before:
      - kube.patch: {ref: Node/prod-worker-1, merge-patch: {metadata: {annotations: {a/1: 'https://m2-bot:P4ss%2Bm2%2Fq9z%3Dx%40y@h/', a/2: 'P4ss%2bm2%2fq9z%3dx%40y', a/3: 'P4ss+m2%2Fq9z=x%40y', a/4: '503473732b6d322f71397a3d784079', a/5: '503473732B6D322F71397A3D784079'}}}}
Y
"$bin" sim "$out/url-hex.yaml" --record "$out/urlrec" >"$out/url-hex.txt" 2>&1
"$bin" sim --json "$out/url-hex.yaml" >>"$out/url-hex.txt" 2>&1
[ -n "$(find "$out/urlrec" -name '*.db')" ] || fail "URL and hex forms: sim --record wrote no cassette"
for f in 'P4ss%2Bm2%2Fq9z%3Dx%40y' 'P4ss%2bm2%2fq9z%3dx%40y' 'P4ss+m2%2Fq9z=x%40y' \
  503473732b6d322f71397a3d784079 503473732B6D322F71397A3D784079; do
  if grep -l -a -F -- "$f" "$out/url-hex.txt" $(find "$out/urlrec" -type f) >/dev/null 2>&1; then
    fail "URL and hex forms: an encoded form of the password survives in the cassette or the output"
  fi
done

[ $status -eq 0 ] && echo "record/replay: $n cassettes replayed strictly ($unfinished of runs" \
  "their crash fault ended); $files files ($wals -wal) free of $(wc -l <"$out/secrets") catalogue secrets"
exit $status
