#!/bin/sh
# Least privilege (DESIGN §3.5 r2): the core reads Secrets
# only by name — never a list of Secrets — in a rotation (Stage) and in the
# no-drift Reassert, both strategies. Judged from the sim world's call log.
#
#   tests/check_least_privilege.sh BUILD/reassert SOURCE_ROOT
set -u
bin=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
for strategy in lazy eager; do
  w=$tmp/$strategy.db
  "$bin" sim init --scenario "$src/scenarios/two-run-stage-reassert.yaml" --db "$w" >/dev/null || {
    echo "FAIL: sim init"; exit 1; }
  for pass in stage reassert; do
    "$bin" run --transport sim:"$w" --desired current --strategy "$strategy" >"$tmp/out" 2>&1 || {
      echo "FAIL: $strategy $pass run failed: $(tail -3 "$tmp/out")"; fails=$((fails + 1)); }
  done
  lists=$(python3 - "$w" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("SELECT op, target FROM call_log WHERE op = 'kube.list' AND target LIKE 'Secret%'").fetchall()
gets = db.execute("SELECT count(*) FROM call_log WHERE op = 'kube.get' AND target LIKE 'Secret/%/%'").fetchone()[0]
print("\n".join(f"{op} {t}" for op, t in rows) if rows else ("" if gets else "no Secret read at all"))
PY
)
  [ -z "$lists" ] || { echo "FAIL: $strategy: $lists"; fails=$((fails + 1)); }
done
echo "least privilege: $fails failed"
[ "$fails" -eq 0 ]
