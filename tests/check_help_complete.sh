#!/bin/sh
# Every flag a parser accepts and every environment variable live mode reads
# is in the --help of its command (the man page is made
# from --help by cmake/manpage.sh, so it follows). The lists come from the
# sources, so a flag or variable added without a line of --help fails here:
#   - `reassert run --help`: each "--flag" literal of takes_value() and
#     run_args_parse() in cli/cli_options.c; each variable cli/ (run, its
#     preflight) and
#     core/live/ read (getenv, env_first, env_set) and each name of the
#     children's allow-lists (talosctl, exec plugins, the decrypt and
#     liveness commands: what they may see is part of the contract);
#   - `reassert sim serve --help`: each "--flag" literal of cli/cmd_serve.c.
set -u
bin=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $1"; fails=$((fails + 1)); }

# documented HELP NAME KIND: NAME appears in HELP as a whole word.
documented() {
  grep -qE -- "(^|[^A-Za-z0-9_-])$2([^A-Za-z0-9_-]|\$)" "$1" || fail "$3 $2 is not in $(basename "$1")"
}
# at_least FILE N WHAT: the extraction found something (so the test can fail).
at_least() {
  n=$(wc -l <"$1")
  [ "$n" -ge "$2" ] || fail "only $n $3 found in the sources (expected at least $2): the extraction broke"
}

"$bin" run --help >"$tmp/run.help" 2>&1 || fail "run --help exits non-zero"
"$bin" sim serve --help >"$tmp/serve.help" 2>&1 || fail "sim serve --help exits non-zero"

sed -n -e '/^static bool takes_value/,/^}/p' -e '/^rs_code run_args_parse/,/^}/p' \
  "$src/cli/cli_options.c" | grep -oE '"--[a-z][a-z-]*"' | tr -d '"' | sort -u >"$tmp/run.flags"
at_least "$tmp/run.flags" 20 "run flags"
while read -r f; do documented "$tmp/run.help" "$f" "run flag"; done <"$tmp/run.flags"

grep -oE '"--[a-z][a-z-]*"' "$src/cli/cmd_serve.c" | tr -d '"' | sort -u >"$tmp/serve.flags"
at_least "$tmp/serve.flags" 8 "sim serve flags"
while read -r f; do documented "$tmp/serve.help" "$f" "sim serve flag"; done <"$tmp/serve.flags"

# Variables read by a live run: cli/'s run files and core/live/.
grep -ohE '(getenv|env_first|env_set)\("[A-Z_]+"(, *"[A-Z_]+")?\)' \
  "$src/cli/cli_live.c" "$src/cli/cli_preflight.c" "$src/cli/cli_run.c" "$src/cli/cli_options.c" \
  "$src"/core/live/*.c |
  grep -oE '"[A-Z_]+"' | tr -d '"' | sort -u >"$tmp/env.read"
at_least "$tmp/env.read" 15 "variables read"
# The children's allow-lists (an array of names up to its closing brace,
# which may be on its first line).
array() { awk -v name="$1" 'index($0, name "[] = {") { on = 1 } on { print } on && /};/ { exit }' "$2"; }
{
  array live_exec_env_base "$src/core/live/live_talos_exec.c"
  array lt_env_extra "$src/core/live/live_talos_run.c"
  array decrypt_env "$src/cli/cli_live.c"
  array lo_env_extra "$src/core/live/live_oracle.c"
} | grep -oE '"[A-Za-z_]+"' | tr -d '"' | tr 'a-z' 'A-Z' | sort -u >"$tmp/env.children"
at_least "$tmp/env.children" 40 "allow-listed variables"
sort -u "$tmp/env.read" "$tmp/env.children" >"$tmp/env.all"
while read -r v; do documented "$tmp/run.help" "$v" "variable"; done <"$tmp/env.all"

# The test-only flag says it is one.
grep -q -- "--test-facade-clock  TEST-ONLY" "$tmp/run.help" || fail "--test-facade-clock is not marked TEST-ONLY"

echo "help complete: $(wc -l <"$tmp/run.flags") run flags, $(wc -l <"$tmp/serve.flags") serve flags, $(wc -l <"$tmp/env.all") variables; $fails failed"
[ "$fails" -eq 0 ]
