#!/bin/sh
# `reassert sim --json` and `run --output json` with stdout on a full device (/dev/full) exit 0 although the document was never written (DESIGN 7/7.1: the document is the result; --junit to an unwritable path already exits 1).
bin=$1; src=$2; d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
[ -w /dev/full ] || exit 2
st=0
timeout 30 "$bin" sim "$src/tests/harness/cases/empty-expect-pass.yaml" --strategy lazy --json >/dev/full 2>"$d/err"; rc=$?
[ "$rc" -ne 0 ] || { echo "sim --json >/dev/full: exit 0"; st=1; }
timeout 20 "$bin" sim init --scenario "$src/tests/harness/cases/plain-fail.yaml" --db "$d/w.db" >/dev/null 2>&1 || exit 1
timeout 30 "$bin" run --transport "sim:$d/w.db" --desired current --output json >/dev/full 2>"$d/err"; rc=$?
[ "$rc" -ne 0 ] || { echo "run --output json >/dev/full: exit 0"; st=1; }
exit $st
