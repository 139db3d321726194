#!/bin/sh
# --config hostile values already refused with exit 65, file:line:col and one JSON document (DESIGN 3 r2, 7.1); guard.
bin=$1; src=$2; d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
timeout 20 "$bin" sim init --scenario "$src/tests/harness/cases/plain-fail.yaml" --db "$d/base.db" >/dev/null 2>&1 || exit 1
st=0; i=0
for c in 'sync:\n  attempts: 99999999999999999999\n' 'sync:\n  attempts: 2.5\n' 'sync.attempts: 5\nsync:\n  attempts: 5\n' 'lease:\n  name: "a\\n::error::FORGED"\n' 'lifecycle-taints: [a, a]\n' 'sync: !!map {attempts: 3}\n' '---\nsync:\n  attempts: 3\n---\nsync:\n  attempts: 2\n' 'sync:\n  attempts: null\n' 'openbao:\n  mount: ""\n'; do
  i=$((i + 1)); printf %b "$c" >"$d/c$i.yaml"; cp "$d/base.db" "$d/w.db"
  timeout 20 "$bin" run --transport "sim:$d/w.db" --desired current --config "$d/c$i.yaml" --output json >"$d/out" 2>/dev/null
  rc=$?
  if [ "$rc" -ne 65 ] || ! grep -q "c$i.yaml:[0-9]*:[0-9]*" "$d/out" || ! python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$d/out" 2>/dev/null; then echo "  $(printf %b "$c" | tr '\n' ' '): exit $rc"; st=1; fi
  cmp -s "$d/base.db" "$d/w.db" || { echo "  c$i: world modified"; st=1; }
done
exit $st
