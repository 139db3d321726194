#!/bin/sh
# Invariant 6 from the outside: run every shipped scenario (text and JSON
# reports, stdout and stderr together) and grep for every catalogue password
# — the preset's and every one a scenario file declares — in plaintext and
# base64 at each byte alignment. The failing scenarios of tests/harness/inputs/secret-*
# run too, with JUnit: a failure report (a state check on a Secret, an
# output-contains needle, a dumped output) is where a secret leaks, and the
# shipped scenarios all pass. A hit fails the test without printing the secret.
# The suite's run is the ctest fixture's (tests/suite_run.sh, shared with
# check_record_replay and check_junit) when REASSERT_SUITE_RUN names it, so
# the sanitizer build scans the whole suite's output too.
set -u
bin=$1
src=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# The suite's text and JSON reports: the ctest fixture's run
# (tests/suite_run.sh, REASSERT_SUITE_RUN), or one made here.
run=${REASSERT_SUITE_RUN:-}
if [ -z "$run" ]; then
  run=$out/run
  sh "$src/tests/suite_run.sh" "$bin" "$src" "$run" >/dev/null ||
    { echo "FAIL: the suite could not be run"; exit 1; }
fi
[ -s "$run/files" ] || { echo "FAIL: no scenario to scan"; exit 1; }
cp "$run/text" "$out/text"
cp "$run/json" "$out/json"
cp "$run/suite.xml" "$out/junit"
"$bin" sim "$src"/tests/harness/inputs/secret-*.yaml >"$out/failing-text" 2>&1
frc=$?
"$bin" sim --json --junit "$out/failing-junit" "$src"/tests/harness/inputs/secret-*.yaml >"$out/failing-json" 2>&1
status=0
[ "$frc" -eq 1 ] || { echo "FAIL: tests/harness/inputs/secret-*.yaml must fail (exit 1), got $frc"; status=1; }
{
  printf '%s\n' ghp-prev-0a1b2c3d4e5f ghp-curr-9f8e7d6c5b4a ghp-revk-5566778899aa
  sed -n 's/^[[:space:]]*password:[[:space:]]*\([^[:space:]#,}]*\).*/\1/p' $(find "$src/scenarios" -name '*.yaml' | LC_ALL=C sort)
  grep -ho '"password":"[^"]*"' $(find "$src/scenarios" -name '*.yaml' | LC_ALL=C sort) | sed 's/"password":"\([^"]*\)"/\1/'
  grep -ho 'password: [A-Za-z0-9-]*' "$src"/tests/harness/inputs/secret-*.yaml | sed 's/password: //'
} | sort -u >"$out/secrets"
n=$(wc -l <"$out/secrets")
[ "$n" -ge 3 ] || { echo "found only $n secrets to look for"; exit 1; }
i=0
while IFS= read -r secret; do
  i=$((i + 1))
  [ -n "$secret" ] || continue
  # base64 of the secret inside a larger text, at each of the 3 alignments:
  # the characters that depend on the secret alone (k leading bytes shift it).
  : >"$out/forms"
  printf '%s\n' "$secret" >>"$out/forms"
  for k in 0 1 2; do
    e=$({ head -c "$k" /dev/zero; printf '%s' "$secret"; } | base64 -w0 | tr -d =)
    start=$(( k == 0 ? 1 : k + 2 ))
    end=$(( ${#e} - 4 ))
    [ "$end" -ge $((start + 11)) ] && printf '%s\n' "$e" | cut -c"$start-$end" >>"$out/forms"
  done
  for f in text json junit failing-text failing-json failing-junit; do
    if grep -qF -f "$out/forms" "$out/$f"; then
      echo "FAIL: catalogue secret #$i appears in the $f report"
      status=1
    fi
  done
done <"$out/secrets"
[ -s "$out/text" ] || { echo "FAIL: the sim printed nothing"; status=1; }
[ $status -eq 0 ] && echo "no plaintext: $n catalogue secrets absent from the reports of $# scenarios"
exit $status
