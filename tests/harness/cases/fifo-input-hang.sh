#!/bin/sh
# A scenario or --config path that is a FIFO with no writer blocks forever (DESIGN 5.1: never hangs on input; 7.1: one JSON document on every exit). A FIFO world path is already refused with 65.
bin=$1; src=$2; d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
mkfifo "$d/ff" || exit 2
st=0
timeout 3 "$bin" sim "$d/ff" >/dev/null 2>&1; rc=$?; [ "$rc" -eq 65 ] || { echo "  sim FIFO: exit $rc"; st=1; }
timeout 3 "$bin" sim init --scenario "$d/ff" --db "$d/w.db" >/dev/null 2>&1; rc=$?; [ "$rc" -eq 65 ] || { echo "  sim init --scenario FIFO: exit $rc"; st=1; }
timeout 20 "$bin" sim init --scenario "$src/tests/harness/cases/plain-fail.yaml" --db "$d/w2.db" >/dev/null 2>&1 || exit 1
timeout 3 "$bin" run --transport "sim:$d/w2.db" --desired current --config "$d/ff" --output json >"$d/out" 2>/dev/null; rc=$?
[ "$rc" -eq 65 ] || { echo "  run --config FIFO: exit $rc"; st=1; }
timeout 3 "$bin" run --transport "sim:$d/ff" --desired current --output json >"$d/out" 2>/dev/null; rc=$?
[ "$rc" -eq 65 ] || { echo "  run --transport sim:FIFO: exit $rc"; st=1; }
exit $st
