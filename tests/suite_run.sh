#!/bin/sh
# The whole scenario suite, run once for the checks that read what it
# writes (ctest fixture `suite_run`: check_record_replay, check_no_plaintext
# and check_junit take OUT from REASSERT_SUITE_RUN instead of running the
# suite again each):
#   OUT/text    `reassert sim --record OUT/rec --junit OUT/suite.xml` of
#               every scenario under scenarios/ (not pending/), stdout and stderr; OUT/text.rc its
#               exit; OUT/rec/{lazy,eager}/ one cassette per run
#   OUT/json    `reassert sim --json` of the same files; OUT/json.rc
#   OUT/files   the scenario files, one a line
# Exit 0 when every output was written (whether the suite passed is each
# check's to judge, from the .rc files).
#
#   tests/suite_run.sh BUILD/reassert SOURCE_ROOT OUT
set -u
bin=$1
src=$2
out=$3
rm -rf "$out"
mkdir -p "$out" || exit 1
# shellcheck disable=SC2046 # one path a word (no spaces in the tree)
set -- $(find "$src/scenarios" -name '*.yaml' ! -path '*/pending/*' | LC_ALL=C sort)
printf '%s\n' "$@" >"$out/files"
"$bin" sim --record "$out/rec" --junit "$out/suite.xml" "$@" >"$out/text" 2>&1
echo $? >"$out/text.rc"
"$bin" sim --json "$@" >"$out/json" 2>&1
echo $? >"$out/json.rc"
for f in text json suite.xml rec; do
  [ -e "$out/$f" ] || { echo "suite_run: $out/$f was not written"; exit 1; }
done
echo "suite_run: $# scenario files; sim exits $(cat "$out/text.rc") (text, record, junit)" \
  "and $(cat "$out/json.rc") (json)"
