#!/bin/sh
# `reassert sim` on a scenario whose cluster is `{cassette: FILE}` says what
# the cassette cannot show, as `replay --reseed` does: the same `warning:`
# lines, on stderr (in --json mode too, so the JSON on stdout stays the
# report), the same bytes on every run; a preset cluster warns of nothing.
#
#   tests/check_sim_cassette_warnings.sh BUILD/reassert SOURCE_ROOT
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

for base in incident-2026-08-08-steady-state-reassert.reassert \
  incident-2026-09-23-aws-healthcheckfailed.reassert; do
  cp "$src/scenarios/incidents/$base.db" "$src/scenarios/incidents/$base.yaml" "$out/"
  "$bin" replay "$out/$base.db" --reseed >"$out/reseed.txt" 2>&1 || fail "$base: --reseed failed"
  grep '^warning: ' "$out/reseed.txt" >"$out/want"
  [ -s "$out/want" ] || fail "$base: --reseed warns of nothing (the fixture shows no gap)"
  "$bin" sim "$out/$base.yaml" >"$out/o1" 2>"$out/e1" || fail "$base: sim failed: $(cat "$out/o1")"
  grep '^warning: ' "$out/e1" >"$out/got"
  cmp -s "$out/want" "$out/got" ||
    fail "$base: sim's warnings differ from --reseed's: $(cat "$out/got")"
  grep -q '^warning: ' "$out/o1" && fail "$base: a warning went to stdout"
  "$bin" sim "$out/$base.yaml" >"$out/o2" 2>"$out/e2"
  cmp -s "$out/e1" "$out/e2" || fail "$base: sim's stderr differs between two runs"
  "$bin" sim --json "$out/$base.yaml" >"$out/j" 2>"$out/je" || fail "$base: sim --json failed"
  jq -e .scenarios "$out/j" >/dev/null || fail "$base: sim --json is not the JSON report"
  grep -q 'warning: ' "$out/j" && fail "$base: a warning went into --json's stdout"
  grep '^warning: ' "$out/je" | cmp -s "$out/want" - || fail "$base: sim --json's warnings differ"
done

"$bin" sim "$src/scenarios/adv5-drift-root.yaml" >/dev/null 2>"$out/e"
grep -q '^warning: ' "$out/e" && fail "a preset cluster warns: $(grep '^warning: ' "$out/e")"

[ $status -eq 0 ] && echo "sim on a cassette scenario warns as replay --reseed does"
exit $status
