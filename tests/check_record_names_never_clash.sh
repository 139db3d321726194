#!/bin/sh
# Hazard: none in H1–H176 — the house rule of every writer (`run --record`,
# `--record-runtime-proof`, `sweep --emit-scenario`, `replay --to-scenario`):
# never replace a file. `sim --record DIR` makes scenario names file-safe
# ('/' -> '_'), so two scenarios named 'dup/a' and 'dup_a' in one command
# would write one cassette, the second recording silently replacing the
# first. The runner plans every cassette path before the first run and
# refuses a clash: exit 64 naming it, nothing run, nothing recorded.
# Args: reassert binary, source dir.
set -u
BIN=$1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
FAILS=0
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
for n in 'dup/a' 'dup_a'; do
  cat >"$T/$(echo "$n" | tr / -).yaml" <<Y
# Hazard: none (a scenario name that sanitises like another)
name: '$n'
strategies: [lazy]
cluster: {preset: prod, credential: current, workers: 1, control-planes: 1}
desired: current
runs:
  - name: r
Y
done
"$BIN" sim "$T/dup-a.yaml" "$T/dup_a.yaml" --record "$T/rec" >"$T/o" 2>"$T/e"
rc=$?
[ $rc -eq 64 ] || fail "two runs recording into one cassette: exit $rc, expected 64"
grep -q 'would be recorded by two runs' "$T/e" ||
  fail "the refusal does not say two runs share the cassette: $(head -c 300 "$T/e")"
grep -q 'dup_a\.r\.db' "$T/e" || fail "the refusal does not name the cassette: $(head -c 300 "$T/e")"
[ -z "$(find "$T/rec" -type f 2>/dev/null)" ] || fail "a cassette was written before the refusal: $(find "$T/rec" -type f)"
# The same two scenarios recorded one at a time each get their cassette.
"$BIN" sim "$T/dup-a.yaml" --record "$T/one" >/dev/null 2>&1 || fail "recording dup/a alone failed"
[ -f "$T/one/lazy/dup_a.r.db" ] || fail "dup/a alone recorded no lazy/dup_a.r.db: $(find "$T/one" 2>/dev/null)"
[ $FAILS -eq 0 ] && echo "sim --record: two runs never share one cassette" && exit 0
exit 1
