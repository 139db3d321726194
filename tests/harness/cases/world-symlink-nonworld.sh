#!/bin/sh
# A --transport sim: path that is a symlink to a non-world file: exit 65, one JSON document, target unmodified; sim init refuses to overwrite it (DESIGN 5.1); guard.
bin=$1; src=$2; d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
echo notaworld >"$d/t"; cp "$d/t" "$d/t.bak"; ln -s "$d/t" "$d/l.db"
timeout 20 "$bin" run --transport "sim:$d/l.db" --desired current --output json >"$d/out" 2>/dev/null
[ $? -eq 65 ] || exit 1
python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$d/out" || exit 1
timeout 20 "$bin" sim init --scenario "$src/tests/harness/cases/plain-fail.yaml" --db "$d/l.db" >/dev/null 2>&1
[ $? -ne 0 ] || exit 1
cmp -s "$d/t" "$d/t.bak"
