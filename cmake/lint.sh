#!/bin/sh
# make lint: cppcheck and clang-tidy (the root's .clang-tidy) on the C files
# of the folders given, clean or exit 1.
#
#   cmake/lint.sh BUILD_DIR FOLDER...
#
# BUILD_DIR holds compile_commands.json (CMAKE_EXPORT_COMPILE_COMMANDS), so
# clang-tidy sees each file with the flags it is built with. cppcheck runs on
# the sources alone: --enable=warning,style,portability,performance, less the
# findings named below, each for a reason.
set -u
build=$1
shift
jobs=${JOBS:-2}
[ -f "$build/compile_commands.json" ] || {
  echo "lint: no $build/compile_commands.json (run make build first)" >&2
  exit 2
}
files=$(for d in "$@"; do git ls-files "$d/*.c" "$d/**/*.c"; done | sort -u)
[ -n "$files" ] || { echo "lint: no C files under $*" >&2; exit 2; }
fails=0

# Left out, each for a reason:
#  - variableScope, shadowVariable, shadowArgument, shadowFunction: style
#    opinions -Wall does not share; the code declares at the top on purpose;
#  - duplicateCondition: `if (s == TX_OK) s = step();` chains are how the
#    transaction reads like DESIGN.md's procedure;
#  - knownConditionTrueFalse: cppcheck does not follow cJSON_ArrayForEach or
#    a flag set in a loop body, and reports conditions that do vary;
#  - missingIncludeSystem: system headers are the compiler's business.
echo "lint: cppcheck"
# shellcheck disable=SC2086 # one word per file
cppcheck --std=c11 --enable=warning,style,portability,performance \
  --suppress=variableScope --suppress=shadowVariable --suppress=shadowArgument \
  --suppress=shadowFunction --suppress=duplicateCondition \
  --suppress=knownConditionTrueFalse --suppress=missingIncludeSystem \
  --inline-suppr --error-exitcode=1 --quiet -I . -D_POSIX_C_SOURCE=200809L \
  $files || fails=$((fails + 1))

echo "lint: clang-tidy ($(echo "$files" | wc -l) files)"
# shellcheck disable=SC2086
echo "$files" | xargs -P "$jobs" -n 4 clang-tidy -p "$build" --quiet 2>"$build/lint-tidy.err" ||
  fails=$((fails + 1))
# clang-tidy prints "N warnings generated." for findings in system headers it
# then hides; only real diagnostics matter, and they are on stdout.
grep -v 'warnings\? generated\.$' "$build/lint-tidy.err" | grep -v '^Suppressed' |
  grep -v 'Use -header-filter\|Use -system-headers' >&2 || true

echo "lint: $fails tool(s) found problems"
[ "$fails" -eq 0 ]
