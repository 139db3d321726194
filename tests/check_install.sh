#!/bin/sh
# `make install` (cmake --install): the binary and the man page reassert(1)
# land under the prefix; the installed page renders with man -l (and with
# groff, warnings on, without one) and holds every line of every command's
# --help (the top level's, run's, sim's, sim init's, sim serve's, sweep's,
# replay's, and any command the top-level usage lists later), because it is
# written from them (cmake/manpage.sh).
#
#   tests/check_install.sh BUILD/reassert SOURCE_ROOT
set -u
bin=$1
build=$(dirname "$bin")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $1"; fails=$((fails + 1)); }

cmake --install "$build" --prefix "$tmp/prefix" >"$tmp/install.log" 2>&1 ||
  { cat "$tmp/install.log"; echo "FAIL: cmake --install failed"; exit 1; }
inst="$tmp/prefix/bin/reassert"
page="$tmp/prefix/share/man/man1/reassert.1"
[ -x "$inst" ] || fail "no executable $inst"
[ -f "$page" ] || { echo "FAIL: no man page $page"; exit 1; }
[ "$("$inst" --version)" = "$("$bin" --version)" ] || fail "the installed binary is another version"

MANWIDTH=250 LC_ALL=C man -l "$page" >"$tmp/man.txt" 2>"$tmp/man.err" || fail "man -l failed: $(cat "$tmp/man.err")"
[ -s "$tmp/man.err" ] && fail "man -l complained: $(cat "$tmp/man.err")"
LC_ALL=C groff -man -Tascii -ww -z "$page" 2>"$tmp/groff.err" || fail "groff failed"
[ -s "$tmp/groff.err" ] && fail "groff warns: $(cat "$tmp/groff.err")"
grep -q '^NAME' "$tmp/man.txt" || fail "the rendered page has no NAME section"
# The rendered text, each line trimmed, overstrikes (bold) removed.
sed -e 's/.\x08//g' -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//' "$tmp/man.txt" >"$tmp/lines"

# Every command: the usage's own list plus the ones built today, so dropping
# one from the usage does not drop it from this check.
{
  printf '%s\n' "" run sim "sim init" "sim serve" sweep replay
  "$bin" --help | sed -n 's/^  reassert \[\{0,1\}\([a-z][a-z ]*\).*/\1/p' | sed -e 's/\]//' -e 's/ *$//'
} | awk '!seen[$0]++' >"$tmp/cmds"
[ "$(wc -l <"$tmp/cmds")" -ge 7 ] || fail "fewer than 7 commands to check"
while IFS= read -r cmd; do
  # shellcheck disable=SC2086 # "sim init" is two arguments
  "$bin" $cmd --help >"$tmp/help" 2>&1 || { fail "reassert $cmd --help failed"; continue; }
  [ -s "$tmp/help" ] || { fail "reassert $cmd --help printed nothing"; continue; }
  missing=0
  while IFS= read -r l; do
    l=$(printf '%s' "$l" | sed -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//')
    [ -n "$l" ] || continue
    grep -qxF -- "$l" "$tmp/lines" || { missing=$((missing + 1)); echo "  not in the page: $l"; }
  done <"$tmp/help"
  [ "$missing" -eq 0 ] || fail "reassert $cmd --help: $missing line(s) missing from reassert(1)"
  [ -z "$cmd" ] || grep -qxF "reassert $cmd" "$tmp/lines" || fail "no section for reassert $cmd"
done <"$tmp/cmds"

echo "install: $fails failed"
[ "$fails" -eq 0 ]
