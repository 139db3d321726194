#!/bin/sh
# The CLI contract (DESIGN.md §7): exclusivity rules and bad input exit 64 with
# a sentence, bad scenarios exit 65 naming file:line:column, --help tells the
# truth and exits 0, and the sim's exit status follows its scenarios.
set -u
bin=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
passes=0
expect() { # expect CODE DESCRIPTION -- ARGS...
  want=$1; what=$2; shift 3
  "$bin" "$@" >"$tmp/out" 2>&1
  got=$?
  if [ "$got" -eq "$want" ]; then passes=$((passes + 1)); else
    echo "FAIL: $what: expected exit $want, got $got: $(head -c 300 "$tmp/out")"; fails=$((fails + 1)); fi
}
expect_text() { # expect_text TEXT DESCRIPTION
  if grep -qF -- "$1" "$tmp/out"; then passes=$((passes + 1)); else
    echo "FAIL: $2: output lacks '$1': $(head -c 300 "$tmp/out")"; fails=$((fails + 1)); fi
}

expect 0 "help" -- --help
expect_text "reassert sim SCENARIO.yaml" "help lists sim"
expect_text "Exit codes" "help lists exit codes"
expect 0 "version" -- --version
expect 64 "unknown flag" -- run --bogus
expect_text "unknown option '--bogus'" "unknown flag names it"
expect 64 "missing value" -- run --strategy
# An unknown flag is one line naming it and the command's --help, in every
# command's parser (issue 30): the whole usage printed after it buried it.
for c in run sim "sim init" "sim serve" sweep replay "sim --compare eager,lazy"; do
  # shellcheck disable=SC2086 # the command's words
  "$bin" $c --bogus >"$tmp/out.stdout" 2>"$tmp/out"
  got=$?
  cmd=${c%% --*}
  who="reassert $cmd" # run's errors say "reassert:", as `reassert --flag` runs it too
  [ "$cmd" = run ] && who=reassert
  if [ "$got" -eq 64 ] && [ "$(wc -l <"$tmp/out")" -eq 1 ] && [ ! -s "$tmp/out.stdout" ] &&
     grep -qxF -- "$who: unknown option '--bogus' (see reassert $cmd --help)" "$tmp/out"; then
    passes=$((passes + 1))
  else
    echo "FAIL: $c --bogus: want exit 64 and one line naming it and --help, got $got: $(head -c 400 "$tmp/out")"
    fails=$((fails + 1))
  fi
done
expect 64 "bad strategy" -- run --strategy fast
expect 64 "fences + check-only" -- run --fences --check-only
expect 64 "fences + allow-incomplete" -- run --fences --allow-incomplete-fanout
expect 64 "recover + record proof" -- run --recover-fences --record-runtime-proof /tmp/p
expect 64 "fences + recover" -- run --fences --recover-fences
expect 64 "check-only + reuse proof" -- run --check-only --reuse-runtime-proof /tmp/p
expect 64 "allow-incomplete + record proof" -- run --allow-incomplete-fanout --record-runtime-proof /tmp/p
expect 64 "both proof flags" -- run --record-runtime-proof /tmp/a --reuse-runtime-proof /tmp/b
expect 64 "relative proof path" -- run --record-runtime-proof proof.json
expect_text "must be absolute" "relative proof path says why"
expect 64 "desired without sim transport" -- run --desired current
expect 64 "sim transport without desired" -- run --transport sim:/tmp/x.db
expect 64 "sim without files" -- sim
expect 64 "sim bad strategy" -- sim --strategy fast "$src/scenarios/registry/denial.yaml"
expect 64 "replay --strategy with --list" -- replay /tmp/c.db --list --strategy lazy
expect_text "--strategy goes with --strict or --reseed" "replay --strategy says why"
expect 64 "sim --compare needs eager,lazy" -- sim --compare lazy "$src/scenarios/registry/denial.yaml"

printf 'name: broken\nseed: 1\ncluster: {preset: prod, credential: previous}\ndesired: current\nruns:\n  - name: r\n    colour: red\n' >"$tmp/bad.yaml"
expect 65 "unknown scenario key" -- sim "$tmp/bad.yaml"
expect_text "bad.yaml:7:5: runs[0].colour" "scenario error names file:line:col and field"
expect 65 "one bad among good scenarios" -- sim "$src/scenarios/registry/denial.yaml" "$tmp/bad.yaml"

printf 'name: wrong\nseed: 1\ncluster: {preset: prod, credential: previous}\ndesired: current\nruns:\n  - name: r\n    expect: {exit: 1}\n' >"$tmp/wrong.yaml"
expect 1 "a failing scenario" -- sim "$tmp/wrong.yaml"
expect_text "exit: expected 1, got 0" "failure names the expectation"
expect 0 "passing scenarios" -- sim "$src/scenarios/registry/denial.yaml" "$src/scenarios/input/malformed-credential.yaml"
expect_text "2 passed, 0 failed" "closing line"

# Option values are strict, and a missing value names its option (issue 10).
expect 64 "sim --seed +5" -- sim --seed +5 "$src/scenarios/registry/denial.yaml"
expect 64 "sim --seed ' 5'" -- sim --seed " 5" "$src/scenarios/registry/denial.yaml"
expect 64 "sim --seed -1" -- sim --seed -1 "$src/scenarios/registry/denial.yaml"
expect 64 "sim --seed overflow" -- sim --seed 99999999999999999999999 "$src/scenarios/registry/denial.yaml"
for o in --junit --seed --strategy; do
  expect 64 "sim $o without a value" -- sim "$src/scenarios/registry/denial.yaml" "$o"
  if head -n 1 "$tmp/out" | grep -qF -- "$o needs a value"; then passes=$((passes + 1)); else
    echo "FAIL: sim $o without a value: the error does not name it: $(head -n 1 "$tmp/out")"; fails=$((fails + 1)); fi
done
# A value that looks like an option is refused, naming the
# option, in every command's parser (`run --record --check-only` once took
# "--check-only" as the cassette path and ran a full repair).
for c in "run --transport sim:$tmp/none.db --desired current --record --check-only" \
  "sim --record --json $src/scenarios/registry/denial.yaml" \
  "replay --strategy --strict $tmp/none.db"; do
  o=$(echo "$c" | sed 's/.* \(--[a-z]*\) --.*/\1/')
  # shellcheck disable=SC2086
  expect 64 "$c" -- $c
  if grep -qF -- "$o needs a value" "$tmp/out"; then passes=$((passes + 1)); else
    echo "FAIL: $c: the error does not name $o: $(head -n 1 "$tmp/out")"; fails=$((fails + 1)); fi
  [ ! -e ./--check-only ] && [ ! -e ./--json ] || { echo "FAIL: $c created a file named after a flag"; fails=$((fails + 1)); }
done

# run --output json: exactly one JSON document on stdout for every outcome,
# usage (64) and input (65) errors included (DESIGN.md §7.1).
expect_json() { # expect_json CODE DESCRIPTION -- ARGS...
  want=$1; what=$2; shift 3
  "$bin" "$@" >"$tmp/json" 2>/dev/null
  got=$?
  if [ "$got" -eq "$want" ] &&
     jq -e -s --argjson w "$want" 'length == 1 and .[0].exit == $w and .[0].outcome == "failed" and (.[0].errors | length) >= 1' \
       "$tmp/json" >/dev/null 2>&1; then passes=$((passes + 1)); else
    echo "FAIL: $what: want exit $want and one JSON document, got exit $got: $(head -c 300 "$tmp/json")"; fails=$((fails + 1)); fi
}
expect_json 64 "json: unknown flag" -- run --output json --bogus
expect_json 64 "json: unknown flag before --output" -- run --bogus --output json
expect_json 64 "json: missing value" -- run --output json --strategy
expect_json 64 "json: exclusive flags" -- run --output json --fences --check-only
expect_json 64 "json: live transport" -- run --output json --desired current
"$bin" sim init --scenario "$src/scenarios/registry/denial.yaml" --db "$tmp/w.db" >/dev/null 2>&1
expect_json 65 "json: missing --config" -- run --output json --transport "sim:$tmp/w.db" --desired current --config "$tmp/no-such-config.yaml"
expect 65 "missing --config" -- run --transport "sim:$tmp/w.db" --desired current --config "$tmp/no-such-config.yaml"
expect_text "cannot read the configuration" "missing --config says so"

# A --transport sim: path that is not a world is bad input (65), left as it was.
printf 'not an SQLite file\n' >"$tmp/text.db"
: >"$tmp/empty.db"
for w in text empty; do
  cp "$tmp/$w.db" "$tmp/$w.orig"
  expect 65 "world: $w file" -- run --transport "sim:$tmp/$w.db" --desired current
  if cmp -s "$tmp/$w.db" "$tmp/$w.orig" && ! ls "$tmp/$w.db-"* >/dev/null 2>&1; then passes=$((passes + 1)); else
    echo "FAIL: world: $w file was modified or given sidecar files"; fails=$((fails + 1)); fi
done
expect 65 "world: missing" -- run --transport "sim:$tmp/no-such-world.db" --desired current
if [ -e "$tmp/no-such-world.db" ]; then echo "FAIL: world: a missing world was created"; fails=$((fails + 1)); else passes=$((passes + 1)); fi
expect 65 "world: a directory" -- run --transport "sim:$tmp" --desired current
expect_json 65 "json: missing world" -- run --output json --transport "sim:$tmp/no-such-world.db" --desired current
expect_json 65 "json: not a world" -- run --output json --transport "sim:$tmp/text.db" --desired current

# Cluster and scenario text never forms a workflow command (DESIGN.md §7.1).
# In a GitHub Actions step (GITHUB_ACTIONS=true) and as plain text alike.
for gha in true ""; do
for f in lease-holder-injection scenario-name-newline run-name-newline; do
  GITHUB_ACTIONS=$gha "$bin" sim --strategy lazy "$src/tests/harness/inputs/$f.yaml" >"$tmp/out" 2>&1
  if tr '\r' '\n' <"$tmp/out" | grep -qE '^[[:space:]]*::[a-z-]+( [^:]*)?::FORGED'; then
    echo "FAIL: $f: a forged workflow command: $(grep -F FORGED "$tmp/out" | head -c 300)"; fails=$((fails + 1))
  else passes=$((passes + 1)); fi
done
GITHUB_ACTIONS=$gha "$bin" sim --strategy lazy "$src/tests/harness/inputs/lease-holder-injection.yaml" >"$tmp/out" 2>&1
expect_text "%250A::error::FORGED-LEASE-PCT" "a % in the Lease holder is escaped as %25 (GITHUB_ACTIONS=$gha)"
done

# A run's own --strategy is the strategy it runs, is reported and is checked under.
"$bin" sim --strategy lazy --json "$src/tests/harness/inputs/strategy-in-args.yaml" >"$tmp/s.json" 2>/dev/null
if jq -e '[.scenarios[].runs[].strategy] | length > 0 and all(. == "eager")' "$tmp/s.json" >/dev/null 2>&1; then
  passes=$((passes + 1)); else echo "FAIL: a run with --strategy eager in its args is not labelled eager"; fails=$((fails + 1)); fi

# The sim's --json run object carries what the run reported deciding on
# annotations alone (DESIGN §3.3 r2), and only that: the scenario's run lists
# prod-worker-2, the fixture's runs list nothing.
"$bin" sim --json "$src/scenarios/node/annotation-only-held-to-annotations.yaml" >"$tmp/ao.json" 2>/dev/null
if jq -e '[.scenarios[].runs[]] | length == 1 and all(.annotation_only_nodes == ["prod-worker-2"] and .passed)' \
     "$tmp/ao.json" >/dev/null 2>&1; then passes=$((passes + 1)); else
  echo "FAIL: sim --json run object lacks annotation_only_nodes [prod-worker-2]: $(head -c 300 "$tmp/ao.json")"; fails=$((fails + 1)); fi
"$bin" sim --json "$src/scenarios/cost/no-drift-small.yaml" >"$tmp/ao0.json" 2>/dev/null
if jq -e '[.scenarios[].runs[]] | length == 1 and all(.annotation_only_nodes == [])' \
     "$tmp/ao0.json" >/dev/null 2>&1; then passes=$((passes + 1)); else
  echo "FAIL: sim --json run object of a run with every auth read: annotation_only_nodes is not []"; fails=$((fails + 1)); fi

# argv and scenario names on the CLI's own error lines are escaped too.
for gha in true ""; do
rm -f "$tmp/n.db"
GITHUB_ACTIONS=$gha "$bin" run "$(printf -- '--x\n::error::FORGED')" >"$tmp/out" 2>&1
GITHUB_ACTIONS=$gha "$bin" sim "$(printf -- '--x\n::error::FORGED')" >>"$tmp/out" 2>&1
GITHUB_ACTIONS=$gha "$bin" sim init --scenario "$src/tests/harness/inputs/scenario-name-newline.yaml" --db "$tmp/n.db" >>"$tmp/out" 2>&1
if tr '\r' '\n' <"$tmp/out" | grep -qE '^[[:space:]]*::[a-z-]+( [^:]*)?::FORGED'; then
  echo "FAIL: a CLI error line forges a workflow command (GITHUB_ACTIONS=$gha): $(grep -F FORGED "$tmp/out" | head -c 300)"; fails=$((fails + 1))
else passes=$((passes + 1)); fi
done

# Every subcommand's --help (and sim -h) is help: exit 0 with its usage text.
for c in run sim "sim init" sweep replay "sim serve"; do
  # shellcheck disable=SC2086
  expect 0 "$c --help" -- $c --help
  case $c in run) u="usage: reassert [run]" ;; *) u="usage: reassert $c" ;; esac
  expect_text "$u" "$c --help prints its usage"
done
expect 0 "sim -h" -- sim -h
expect_text "usage: reassert sim" "sim -h is help, not a file"

# Deterministic: same scenario and seed => same bytes.
"$bin" sim --json "$src/scenarios/two-run-stage-reassert.yaml" >"$tmp/a.json" 2>/dev/null
"$bin" sim --json "$src/scenarios/two-run-stage-reassert.yaml" >"$tmp/b.json" 2>/dev/null
if cmp -s "$tmp/a.json" "$tmp/b.json"; then passes=$((passes + 1)); else
  echo "FAIL: two runs of the same scenario differ"; fails=$((fails + 1)); fi
"$bin" sim "$src/scenarios/recovery/failed-fence-resume.yaml" "$tmp/wrong.yaml" >"$tmp/a.txt" 2>&1
"$bin" sim "$src/scenarios/recovery/failed-fence-resume.yaml" "$tmp/wrong.yaml" >"$tmp/b.txt" 2>&1
if cmp -s "$tmp/a.txt" "$tmp/b.txt"; then passes=$((passes + 1)); else
  echo "FAIL: two text reports of the same scenarios differ"; fails=$((fails + 1)); fi

echo "cli: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
