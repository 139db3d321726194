#!/bin/sh
# Finding H1 (findings-s7/FINDINGS.md): a cassette whose counters table holds
# a value that is not JSON makes every replay mode read freed memory while
# printing the error (garbage bytes where the counter's name belongs; a
# heap-use-after-free under ASan). Usage: sh h1-...sh path/to/reassert
B=$(cd "$(dirname "${1:-build/reassert}")" && pwd)/$(basename "${1:-build/reassert}")
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
cat > "$d/s.yaml" <<'Y'
# Hazard: none (finding reproducer)
name: h1
cluster: {preset: prod, credential: current, workers: 1, control-planes: 1}
desired: current
runs:
  - name: r
    expect: {exit: 0}
Y
"$B" sim "$d/s.yaml" --strategy lazy --record "$d/rec" >/dev/null || exit 2
c="$d/rec/h1.r.db"
sqlite3 "$c" "update counters set value='abc' where name='writes'"
"$B" replay "$c" --strict 2>"$d/err"; rc=$?
cat "$d/err"
# Expected: exit 65, "... counter 'writes' is not a JSON value"
[ "$rc" = 65 ] && grep -q "counter 'writes'" "$d/err" && ! grep -q AddressSanitizer "$d/err"
