#!/bin/sh
# CI-native output (issue 30). Workflow commands (`::group::`, `::error::`,
# `::warning::`, `::notice::`, `::stop-commands::`) only in a GitHub Actions
# step (GITHUB_ACTIONS=true, exactly as the runner sets it); anywhere else
# plain text: "==> Title", "error: ...", "FILE:LINE: error: ...", a failed
# run's output between two rules. In neither form does text from a cluster,
# a scenario or a cassette start a workflow command. Step outputs: `reassert
# run` (every outcome, a usage error included) and `reassert sim` append
# their result to GITHUB_OUTPUT in GitHub's multiline form, each name once
# (the sim's forked runs write none), never a credential; an unwritable file
# is a warning for run and a failure for the sim (the CI gate).
#
#   tests/check_ci_native.sh BUILD/reassert SOURCE_ROOT
set -u
bin=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
passes=0
ok() { passes=$((passes + 1)); }
fail() { echo "FAIL: $1"; fails=$((fails + 1)); }
has() { if grep -qE -- "$2" "$1"; then ok; else fail "$3: $(basename "$1") lacks /$2/: $(head -c 300 "$1")"; fi; }
lacks() { if grep -qE -- "$2" "$1"; then fail "$3: $(basename "$1") holds /$2/: $(grep -E -- "$2" "$1" | head -c 300)"; else ok; fi; }
# no_command FILE WHAT: no line (after blanks, CR a line break too) starts a
# workflow command.
no_command() {
  if tr '\r' '\n' <"$1" | grep -qE '^[[:space:]]*::'; then
    fail "$2: a line starts a workflow command: $(tr '\r' '\n' <"$1" | grep -E '^[[:space:]]*::' | head -c 300)"
  else ok; fi
}
# gha VALUE CMD...: CMD with GITHUB_ACTIONS=VALUE ("-": unset).
gha() {
  v=$1
  shift
  if [ "$v" = - ]; then env -u GITHUB_ACTIONS "$@"; else env GITHUB_ACTIONS="$v" "$@"; fi
}

fixture=$src/scenarios/two-run-stage-reassert.yaml
w=$tmp/world.db
"$bin" sim init --scenario "$fixture" --db "$w" >/dev/null 2>&1 || fail "sim init"
cp "$w" "$tmp/pristine.db"
pass=$(sqlite3 "$w" "select password from catalogue where name='current'")

# ---- reassert run's text --------------------------------------------------
for v in - false 1 TRUE; do
  cp "$tmp/pristine.db" "$w"
  gha "$v" "$bin" run --transport sim:"$w" --desired current >"$tmp/run.txt" 2>&1 ||
    fail "run (GITHUB_ACTIONS=$v) failed: $(tail -c 300 "$tmp/run.txt")"
  no_command "$tmp/run.txt" "run, GITHUB_ACTIONS=$v"
  has "$tmp/run.txt" '^==> Registry proof' "run, GITHUB_ACTIONS=$v: a group is a plain heading"
  has "$tmp/run.txt" '^notice: drift: variables-base differs' "run, GITHUB_ACTIONS=$v: a notice is plain"
done
cp "$tmp/pristine.db" "$w"
gha true "$bin" run --transport sim:"$w" --desired current >"$tmp/run-gha.txt" 2>&1 || fail "run (Actions)"
has "$tmp/run-gha.txt" '^::group::Registry proof' "run in a GitHub Actions step: groups"
has "$tmp/run-gha.txt" '^::endgroup::$' "run in a GitHub Actions step: groups closed"
has "$tmp/run-gha.txt" '^::notice::drift: variables-base differs' "run in a GitHub Actions step: notices"
lacks "$tmp/run-gha.txt" '^==> ' "run in a GitHub Actions step: no plain heading"
# An error: a credential the world's catalogue does not have (65).
for v in - true; do
  gha "$v" "$bin" run --transport sim:"$w" --desired nosuch >"$tmp/err.txt" 2>&1
  rc=$?
  [ "$rc" -eq 65 ] && ok || fail "an unknown --desired: exit $rc, want 65"
  if [ "$v" = true ]; then has "$tmp/err.txt" '^::error::' "an error in a GitHub Actions step"
  else has "$tmp/err.txt" '^error: ' "an error as plain text"; no_command "$tmp/err.txt" "plain error"; fi
done

# ---- reassert sim's report ------------------------------------------------
printf 'name: wrong\nseed: 1\ncluster: {preset: prod, credential: previous}\ndesired: current\nruns:\n  - name: r\n    args: [--strategy, lazy]\n    expect: {exit: 1}\n' >"$tmp/wrong.yaml"
gha - "$bin" sim "$tmp/wrong.yaml" >"$tmp/sim.txt" 2>&1
[ $? -eq 1 ] && ok || fail "a failing scenario (plain): exit is not 1"
no_command "$tmp/sim.txt" "sim, plain"
has "$tmp/sim.txt" "^$tmp/wrong.yaml:8: error: wrong \\[lazy\\] r: exit: expected 1, got 0\$" \
  "sim, plain: the failing expectation as FILE:LINE: error:"
has "$tmp/sim.txt" '^--- output of r \[lazy\] ---$' "sim, plain: the failed run's output opens with a rule"
has "$tmp/sim.txt" '^--- end of the output of r \[lazy\] ---$' "sim, plain: and closes with one"
has "$tmp/sim.txt" '^==> Fence' "sim, plain: the run's groups are plain headings"
gha true "$bin" sim "$tmp/wrong.yaml" >"$tmp/sim-gha.txt" 2>&1
has "$tmp/sim-gha.txt" "^::error file=$tmp/wrong.yaml,line=8::wrong \\[lazy\\] r: exit: expected 1, got 0\$" \
  "sim in a GitHub Actions step: the annotation"
has "$tmp/sim-gha.txt" '^::stop-commands::reassert-[0-9a-f]{32}$' "sim in a GitHub Actions step: commands stopped"
has "$tmp/sim-gha.txt" '^::group::output of r \[lazy\]$' "sim in a GitHub Actions step: the output's group"
# Hostile scenario text, plain: a Lease holder, a scenario and a run name
# carrying line breaks and workflow commands.
for f in lease-holder-injection scenario-name-newline run-name-newline; do
  gha - "$bin" sim --strategy lazy "$src/tests/harness/inputs/$f.yaml" >"$tmp/h.txt" 2>&1
  no_command "$tmp/h.txt" "plain sim of tests/harness/inputs/$f.yaml"
done

# ---- replay's verdict -----------------------------------------------------
cp "$tmp/pristine.db" "$w"
"$bin" run --transport sim:"$w" --desired current --check-only --record "$tmp/c.db" >/dev/null 2>&1 ||
  fail "recording a cassette"
seq=$(sqlite3 "$tmp/c.db" "select min(seq) from calls where op like 'registry.%'")
sqlite3 "$tmp/c.db" "update calls set target=target||char(10)||'::error::FORGED' where seq=$seq"
for v in - true; do
  gha "$v" "$bin" replay "$tmp/c.db" --strict >"$tmp/rp.txt" 2>&1
  rc=$?
  [ "$rc" -eq 1 ] && ok || fail "a diverging replay: exit $rc, want 1: $(head -c 300 "$tmp/rp.txt")"
  if [ "$v" = true ]; then has "$tmp/rp.txt" '^::error::strict replay of .* diverged at seq' "replay verdict in Actions"
  else has "$tmp/rp.txt" '^error: strict replay of .* diverged at seq' "replay verdict, plain"; no_command "$tmp/rp.txt" "replay, plain"; fi
  lacks "$tmp/rp.txt" '^::error::FORGED' "the cassette's text forms no command"
done

# ---- step outputs ---------------------------------------------------------
# outputs FILE: the outputs as GitHub reads the file (name=value, or
# name<<DELIMITER ... DELIMITER), one "name=value" line each (a line break
# in a value as \n); exit 1 on a malformed file or a name given twice.
outputs() {
  python3 - "$1" <<'PY'
import sys
lines = open(sys.argv[1], encoding="utf-8").read().split("\n")
if lines and lines[-1] == "":
    lines.pop()
seen, i = {}, 0
while i < len(lines):
    ln = lines[i]
    if "<<" in ln and ("=" not in ln or ln.index("<<") < ln.index("=")):
        name, delim = ln.split("<<", 1)
        j = lines.index(delim, i + 1)  # ValueError: no closing delimiter
        value = "\n".join(lines[i + 1:j])
        i = j + 1
    else:
        name, value = ln.split("=", 1)
        i += 1
    if name in seen:
        print("twice: " + name)
        sys.exit(1)
    seen[name] = value
for k, v in seen.items():
    print("%s=%s" % (k, v.replace("\n", "\\n")))
PY
}
out=$tmp/gho
cp "$tmp/pristine.db" "$w"
printf 'earlier<<EOF\nfrom a previous step\nEOF\n' >"$out"
GITHUB_OUTPUT=$out "$bin" run --transport sim:"$w" --desired current >/dev/null 2>&1 || fail "run with GITHUB_OUTPUT"
outputs "$out" >"$tmp/o.txt" || fail "GITHUB_OUTPUT does not parse: $(cat "$tmp/o.txt")"
has "$tmp/o.txt" '^earlier=from a previous step$' "run: GITHUB_OUTPUT is appended to"
for kv in exit=0 outcome=repaired strategy=lazy fence_taken=true controller_restarts=1 errors=0 \
  'writes=[1-9][0-9]*' 'lease_writes=[1-9][0-9]*' 'api_calls=[1-9][0-9]*' lease_rv_moved=true \
  'writes_by_kind=\{"Deployment":1,' annotation_only_nodes= 'virtual_seconds=[0-9.]+'; do
  has "$tmp/o.txt" "^$kv" "run's step outputs"
done
lacks "$out" "$pass" "run's step outputs hold the password"
# The no-drift Reassert after it: no fence, no restart.
: >"$out"
GITHUB_OUTPUT=$out "$bin" run --transport sim:"$w" --desired current --output json >/dev/null 2>&1 ||
  fail "the second run"
outputs "$out" >"$tmp/o.txt" || fail "GITHUB_OUTPUT (json run) does not parse"
for kv in exit=0 outcome=converged fence_taken=false controller_restarts=0 writes=0; do
  has "$tmp/o.txt" "^$kv\$" "the no-drift Reassert's step outputs"
done
# A usage error and a refused run are outcomes too.
: >"$out"
GITHUB_OUTPUT=$out "$bin" run --bogus >/dev/null 2>&1
outputs "$out" >"$tmp/o.txt" || fail "GITHUB_OUTPUT (usage error) does not parse"
has "$tmp/o.txt" '^exit=64$' "a usage error's exit output"
has "$tmp/o.txt" '^outcome=failed$' "a usage error's outcome output"
"$bin" sim init --scenario "$src/scenarios/lease/held-refuses.yaml" --db "$tmp/held.db" \
  --run reassert >/dev/null 2>&1 || fail "sim init held-lease-refuses"
: >"$out"
GITHUB_OUTPUT=$out "$bin" run --transport sim:"$tmp/held.db" --desired current >/dev/null 2>&1
outputs "$out" >"$tmp/o.txt" || fail "GITHUB_OUTPUT (refused run) does not parse"
has "$tmp/o.txt" '^exit=1$' "a refused run's exit output"
has "$tmp/o.txt" '^errors=[1-9]' "a refused run counts its errors"
lacks "$tmp/o.txt" 'held by' "no message (cluster text) is an output"
# sim: the gate's verdict and counts, each name once (its runs add none).
: >"$out"
GITHUB_OUTPUT=$out "$bin" sim "$tmp/wrong.yaml" "$src/scenarios/registry/denial.yaml" >/dev/null 2>&1
outputs "$out" >"$tmp/o.txt" || fail "sim's GITHUB_OUTPUT does not parse (a name twice?): $(cat "$tmp/o.txt")"
for kv in exit=1 outcome=failed scenarios=2 passed=1 failed=1 skipped=0 unloadable=0 runs=4 runs_failed=2; do
  has "$tmp/o.txt" "^$kv\$" "sim's step outputs"
done
lacks "$tmp/o.txt" '^fence_taken=' "a scenario's run wrote step outputs of its own"
# Unwritable: a warning for run (the deploy did its work), a failure for the gate.
cp "$tmp/pristine.db" "$w"
GITHUB_OUTPUT=$tmp "$bin" run --transport sim:"$w" --desired current --check-only >/dev/null 2>"$tmp/w.err"
[ $? -eq 0 ] && ok || fail "an unwritable GITHUB_OUTPUT changed run's exit"
has "$tmp/w.err" '^warning: cannot append to GITHUB_OUTPUT' "run: an unwritable GITHUB_OUTPUT is warned about"
GITHUB_OUTPUT=$tmp "$bin" sim "$src/scenarios/registry/denial.yaml" >/dev/null 2>"$tmp/w.err"
[ $? -eq 1 ] && ok || fail "an unwritable GITHUB_OUTPUT must fail the sim"
has "$tmp/w.err" 'GITHUB_OUTPUT' "sim: the unwritable GITHUB_OUTPUT is named"

echo "ci native: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
