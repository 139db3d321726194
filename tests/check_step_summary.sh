#!/bin/sh
# In a GitHub Actions step (GITHUB_STEP_SUMMARY set): `reassert sim` appends
# a Markdown summary — the scenarios, failures first with their failing
# expectations, and the before/after table — and `reassert run` its outcome
# and counters; the scenario runs the sim forks append nothing of their own.
# Scenario text cannot break the Markdown table (a '|', a backtick, a line
# break stay inside their cell) nor, on stdout, form a workflow command: the
# failing expectation is an `::error file=...,line=...::` annotation and a
# forged `::error::` in a needle stays escaped. No credential appears. An
# unwritable summary fails the sim (the CI gate) but never a deploy's run.
# A live run's time is wall_seconds, a sim-transport run's virtual_seconds.
set -u
# A GitHub Actions step: workflow commands (GITHUB_ACTIONS=true; ctest unsets
# it for every test, see CMakeLists.txt).
GITHUB_ACTIONS=true
export GITHUB_ACTIONS
bin=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
fail() { echo "FAIL: $*"; status=1; }

cat >"$tmp/hostile.yaml" <<'YAML'
# Hazard (harness): scenario text in the step summary and the annotations is data.
name: hostile-summary
seed: 1
cluster: {preset: prod, credential: current}
desired: current
catalogue:
  current: {username: leak-bot, password: 'PwSum|Zq71-LEAKCANARY-s9'}
runs:
  - name: r
    expect:
      exit: 0
      output-contains: ["a | b ` c\n::error::forged", "PwSum|Zq71-LEAKCANARY-s9"]
YAML
fixture=$src/scenarios/two-run-stage-reassert.yaml
sum=$tmp/summary.md
printf 'a previous step wrote this\n' >"$sum"
GITHUB_STEP_SUMMARY=$sum "$bin" sim "$tmp/hostile.yaml" "$fixture" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" -eq 1 ] || fail "a failing scenario must make sim exit 1, got $rc"
head -n 1 "$sum" | grep -qx 'a previous step wrote this' || fail "the summary was not appended to"
grep -qx '### reassert sim: 1 passed, 1 failed, 0 skipped' "$sum" || fail "no sim heading: $(head -c 400 "$sum")"

python3 - "$sum" <<'PY' || status=1
import re, sys
lines = open(sys.argv[1], encoding="utf-8").read().split("\n")
probs = []
def cells(line):
    # '|' inside a cell is written as an entity, so a raw '|' is a border
    return line.count("|") - 1
tables, cur = [], None
for ln in lines:
    if ln.startswith("|"):
        if cur is None:
            cur = []
            tables.append(cur)
        cur.append(ln)
    else:
        cur = None
    if ln.startswith("::"):
        probs.append("a summary line starts a workflow command: %r" % ln[:80])
for t in tables:
    want = cells(t[0])
    for row in t[1:]:
        if cells(row) != want:
            probs.append("row %r has %d cells, header %d" % (row[:80], cells(row), want))
if len(tables) != 2:
    probs.append("want 2 tables (scenarios, before/after), got %d" % len(tables))
else:
    rows = tables[0][2:]
    if len(rows) != 2 or "hostile-summary" not in rows[0] or "FAIL" not in rows[0]:
        probs.append("the failing scenario is not the first row: %r" % rows[:1])
    if "not in the run" not in rows[0] or "&#124;" not in rows[0] or "&#96;" not in rows[0]:
        probs.append("the failing expectation is not in its row, escaped: %r" % rows[0][:200])
    if "two-run-stage-reassert" not in rows[1] or "PASS" not in rows[1]:
        probs.append("the passing scenario is not after it: %r" % rows[1:])
    head = [c.strip() for c in tables[1][0].strip("|").split("|")]
    ba = {}
    for row in tables[1][2:]:
        c = [x.strip() for x in row.strip("|").split("|")]
        ba[(c[0], c[1])] = dict(zip(head, c))
    r = ba.get(("two-run-stage-reassert", "reassert"))
    if not r:
        probs.append("no before/after row for two-run-stage-reassert reassert")
    else:
        # The fix the table exists to show: eager writes, restarts and churns
        # the Lease on a no-drift Reassert; lazy does none of it.
        for col in ("writes", "controller restarts", "lease writes", "fence acquisitions"):
            m = re.fullmatch(r"(\d+) → (\d+)", r.get(col, ""))
            if not m or int(m.group(1)) < 1 or int(m.group(2)) != 0:
                probs.append("reassert %s: %r, want N → 0 with N >= 1" % (col, r.get(col)))
for p in probs:
    print("summary:", p)
sys.exit(1 if probs else 0)
PY

# stdout: the failure is an annotation at the failing `output-contains`
# entry (line 12), not at the run's `expect:` (line 10); the
# forged command in the needle stays escaped; nothing else starts ::error::.
grep -qE '^::error file=[^,]*hostile[.]yaml,line=12::hostile-summary \[lazy\] r: ' "$tmp/out" ||
  fail "no ::error file=...,line=12:: annotation for the failing expectation"
grep -q '%0A::error::forged' "$tmp/out" || fail "the needle's line break is not escaped"
if grep -q '^::error::forged' "$tmp/out"; then fail "scenario text formed a workflow command"; fi
for f in "$sum" "$tmp/out" "$tmp/err"; do
  if grep -q LEAKCANARY "$f"; then fail "the password is in $(basename "$f")"; fi
done
if grep -q '### reassert run' "$sum"; then fail "a scenario's run appended its own summary"; fi

# A summary that cannot be written fails the sim, naming it.
GITHUB_STEP_SUMMARY=$tmp "$bin" sim "$fixture" >/dev/null 2>"$tmp/err2"
rc=$?
[ "$rc" -eq 1 ] || fail "an unwritable summary must make sim exit 1, got $rc"
grep -q GITHUB_STEP_SUMMARY "$tmp/err2" || fail "the error does not name GITHUB_STEP_SUMMARY"

# reassert run: outcome and counters, the same counters as its JSON result.
w=$tmp/world.db
"$bin" sim init --scenario "$fixture" --db "$w" >/dev/null 2>&1 || fail "sim init"
rs=$tmp/run.md
GITHUB_STEP_SUMMARY=$rs "$bin" run --transport sim:"$w" --desired current --output json \
  >"$tmp/run.json" 2>"$tmp/run.err"
rc=$?
[ "$rc" -eq 0 ] || fail "run on a converged-to-previous world exit $rc: $(cat "$tmp/run.err")"
outcome=$(jq -r .outcome "$tmp/run.json")
grep -qx "### reassert run: ✅ $outcome (exit 0)" "$rs" || fail "run heading: $(head -c 300 "$rs")"
for k in api_calls writes controller_restarts lease_writes; do
  v=$(jq -r ".counters.$k" "$tmp/run.json")
  grep -qx "| $k | $v |" "$rs" || fail "run summary: $k is not $v as in the JSON result"
done
# A refused run: exit 1, its error in the summary.
"$bin" sim init --scenario "$src/scenarios/lease/held-refuses.yaml" --db "$tmp/held.db" \
  --run reassert >/dev/null 2>&1 || fail "sim init held-lease-refuses"
rh=$tmp/held.md
GITHUB_STEP_SUMMARY=$rh "$bin" run --transport sim:"$tmp/held.db" --desired current \
  >"$tmp/held.out" 2>&1
rc=$?
[ "$rc" -eq 1 ] || fail "held Lease: exit $rc, want 1"
grep -q '^### reassert run: ❌ failed (exit 1)' "$rh" || fail "held Lease heading: $(head -c 300 "$rh")"
grep -q '^- .*held by 0123456789abcdef-sim.other-4242-deadbeef' "$rh" ||
  fail "held Lease: the error is not listed: $(cat "$rh")"
grep -qx '| virtual_seconds | [0-9.]* |' "$rs" || fail "a sim-transport run's time is not virtual_seconds"
# A live run's time is the wall clock's: wall_seconds, never
# "virtual". Against sim serve, --check-only (the registry proof), without
# the test-only facade clock.
. "$src/tests/lib_serve.sh"
. "$src/tests/lib_live.sh"
cp "$w" "$tmp/live.db"
mkdir "$tmp/live"
if live_setup "$bin" "$src" "$tmp/live" "$tmp/live.db"; then
  rl=$tmp/live.md
  (GITHUB_STEP_SUMMARY=$rl; export GITHUB_STEP_SUMMARY
   live_run --check-only) >"$tmp/live.out" 2>&1 </dev/null ||
    fail "a live --check-only run failed: $(tail -c 300 "$tmp/live.out")"
  grep -qx '| wall_seconds | [0-9.]* |' "$rl" || fail "a live run's time is not wall_seconds: $(cat "$rl")"
  if grep -qi virtual "$rl"; then fail "a live run's summary says virtual: $(grep -i virtual "$rl")"; fi
  kill "$SERVE_PID" 2>/dev/null
  wait "$SERVE_PID" 2>/dev/null
else
  fail "sim serve over TLS did not start"
fi
# An unwritable summary is a warning, never a failed deploy.
GITHUB_STEP_SUMMARY=$tmp "$bin" run --transport sim:"$w" --desired current >/dev/null 2>"$tmp/w.err"
rc=$?
[ "$rc" -eq 0 ] || fail "an unwritable summary changed run's exit to $rc"
grep -q '^::warning::cannot append to GITHUB_STEP_SUMMARY' "$tmp/w.err" || fail "no warning: $(cat "$tmp/w.err")"

[ $status -eq 0 ] && echo "step summary: sim and run summaries, annotations, escaping hold"
exit $status
