#!/bin/sh
# --fences truncates a long Lease holder before redacting it: a credential prefix ("PwCurr-Zq") and a middle segment ("run Zq71") leak into the output (DESIGN 5.1: any value equal to a known credential, inside a larger string, is redacted; 6.6).
bin=$1; src=$2; d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
timeout 30 "$bin" sim "$src/tests/harness/cases/leak-truncated-holder.yaml" >"$d/out" 2>&1
rc=$?
[ "$rc" -eq 1 ] || exit 1
! grep -q -e 'PwCurr-Z' -e 'Zq71' "$d/out"
