#!/bin/sh
# Writes the man page reassert(1) from the binary's own --help texts, so the
# page and --help can never say different things.
#
#   cmake/manpage.sh BUILD/reassert OUT.1
#
# The one idea: every section below is a verbatim copy of one `--help`
# output (the top-level usage, then each command's), set in no-fill mode;
# only the roff escapes differ. The command list is the top-level usage's own
# `reassert <command>` lines, so a command added there gets its section here.
set -eu
bin=$1
out=$2
tmp="$out.tmp"

# roff-escape stdin: backslashes, hyphens (so they stay ASCII minus signs and
# can be searched for), and a leading . or ' that roff would take as a request.
esc() {
  sed -e 's/\\/\\e/g' -e 's/-/\\-/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"
}

# section TITLE ARGS...: a subsection with `reassert ARGS --help`, verbatim.
section() {
  title=$1
  shift
  printf '.SS "%s"\n.nf\n' "$title"
  "$bin" "$@" --help | esc
  printf '.fi\n'
}

version=$("$bin" --version | sed 's/^reassert //')
{
  printf '.TH REASSERT 1 "" "reassert %s" "User Commands"\n' "$version"
  printf '.SH NAME\nreassert \\- repair the GHCR image\\-pull credential along its chain, inside a fenced transaction\n'
  printf '.SH SYNOPSIS\n.nf\n'
  "$bin" --help | esc
  printf '.fi\n.SH COMMANDS\n'
  # "  reassert sim init --scenario ..." -> "sim init"; options start with -,
  # upper-case words are operands (SCENARIO.yaml, CASSETTE).
  "$bin" --help | sed -n 's/^  reassert \[\{0,1\}\([a-z][a-z ]*\).*/\1/p' |
    sed -e 's/\]//' -e 's/ *$//' | awk '!seen[$0]++' >"$tmp.cmds"
  while read -r cmd; do
    # shellcheck disable=SC2086 # the words of "sim init" are two arguments
    section "reassert $cmd" $cmd
  done <"$tmp.cmds"
  rm -f "$tmp.cmds"
  printf '.SH SEE ALSO\nREADME.md and DESIGN.md in the source tree.\n'
} >"$tmp"
mv "$tmp" "$out"
