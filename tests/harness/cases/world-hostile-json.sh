#!/bin/sh
# run --output json on hostile worlds prints exactly one JSON document, exit 1 or 65 (DESIGN 7, 7.1); guard.
bin=$1; src=$2; d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
command -v sqlite3 >/dev/null || exit 2
timeout 20 "$bin" sim init --scenario "$src/tests/harness/cases/plain-fail.yaml" --db "$d/base.db" >/dev/null 2>&1 || exit 1
st=0
for sql in "update objects set body='{' where kind='Secret'" "update catalogue set dockerconfigjson='{' where name='current'" "drop table world_meta"; do
  cp "$d/base.db" "$d/w.db"; sqlite3 "$d/w.db" "$sql" || exit 1
  timeout 20 "$bin" run --transport "sim:$d/w.db" --desired current --output json >"$d/out" 2>/dev/null
  rc=$?
  { [ "$rc" -eq 1 ] || [ "$rc" -eq 65 ]; } || { echo "  $sql: exit $rc"; st=1; }
  python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$d/out" 2>/dev/null || { echo "  $sql: not one JSON document"; st=1; }
done
exit $st
