#!/bin/sh
# reassert sim echoes the scenario path unescaped in its "running FILE ..." line:
# a file name with a newline forges a workflow command (DESIGN 7.1).
# usage: forge-running-filename.sh BUILD/reassert SOURCE_ROOT ; exit 0 = behaves as DESIGN says
bin=$1; src=$2; d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
f="$d/$(printf 'a\n::error::FORGED-FILE.yaml')"
cp "$src/tests/harness/cases/plain-fail.yaml" "$f"
timeout 60 "$bin" sim "$f" >"$d/out" 2>&1
! grep -q '^::error::FORGED' "$d/out"
