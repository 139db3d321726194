#!/bin/sh
# reassert sim init --run NAME echoes an unknown run name unescaped (DESIGN 7.1).
bin=$1; src=$2; d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
timeout 60 "$bin" sim init --scenario "$src/tests/harness/cases/plain-fail.yaml" --db "$d/w.db" --run "$(printf 'x\n::error::FORGED')" >"$d/out" 2>&1
rc=$?
[ "$rc" -eq 64 ] || [ "$rc" -eq 65 ] || exit 1
! grep -q '^::error::FORGED' "$d/out"
