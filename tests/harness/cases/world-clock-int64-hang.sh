#!/bin/sh
# A world whose virtual clock is near INT64_MAX makes `run --transport sim:` spin
# forever (DESIGN 5.1: never hangs on input; 7.1: one JSON document on every exit).
bin=$1; src=$2; d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
command -v sqlite3 >/dev/null || exit 2
timeout 20 "$bin" sim init --scenario "$src/tests/harness/cases/plain-fail.yaml" --db "$d/w.db" >/dev/null 2>&1 || exit 1
sqlite3 "$d/w.db" "update world_meta set value='9223372036854775807' where key='clock_ms'" || exit 1
timeout 5 "$bin" run --transport "sim:$d/w.db" --desired current --output json >"$d/out" 2>&1
rc=$?
[ "$rc" -eq 1 ] || [ "$rc" -eq 65 ] || exit 1
python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$d/out" 2>/dev/null
