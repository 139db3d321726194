#!/bin/sh
# A Lease whose spec.holderIdentity is not a string (["other-run"]) is treated as
# free: --fences says "no fences held" (exit 0) and an eager run takes it over
# (DESIGN 3.4 / hazards H1: a holder that cannot be read is not a free Lease; fail closed).
bin=$1; src=$2; d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
command -v sqlite3 >/dev/null || exit 2
timeout 20 "$bin" sim init --scenario "$src/tests/harness/cases/plain-fail.yaml" --db "$d/base.db" >/dev/null 2>&1 || exit 1
cp "$d/base.db" "$d/w.db"
sqlite3 "$d/w.db" "update objects set body=json_set(body,'\$.spec.holderIdentity',json('[\"other-run\"]')) where kind='Lease'" || exit 1
timeout 20 "$bin" run --transport "sim:$d/w.db" --desired current --fences >"$d/out" 2>&1
grep -q 'no fences held' "$d/out" && exit 1
timeout 20 "$bin" run --transport "sim:$d/w.db" --desired current --strategy eager >"$d/out2" 2>&1
[ $? -ne 0 ] || exit 1
grep -q 'other-run' "$d/w.db" 2>/dev/null || sqlite3 "$d/w.db" "select body from objects where kind='Lease'" | grep -q other-run
