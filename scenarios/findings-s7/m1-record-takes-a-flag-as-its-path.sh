#!/bin/sh
# Finding M1: `run --record --check-only` takes "--check-only" as the
# cassette path and runs a full repair (50 writes) instead of the read-only
# check the command line asks for. Usage: sh m1-...sh path/to/reassert
B=$(cd "$(dirname "${1:-build/reassert}")" && pwd)/$(basename "${1:-build/reassert}")
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
cat > "$d/s.yaml" <<'Y'
# Hazard: none (finding reproducer)
name: m1
cluster: {preset: prod, credential: previous, workers: 1, control-planes: 1}
desired: current
runs:
  - name: r
Y
"$B" sim init --scenario "$d/s.yaml" --db "$d/w.db" >/dev/null || exit 2
cd "$d" || exit 2
"$B" run --transport sim:w.db --desired current --record --check-only --output json > out.json 2>/dev/null
rc=$?
echo "exit $rc; $(jq -c '{outcome, writes: .counters.writes}' out.json); files: $(ls)"
# Expected: exit 64 ("--record needs a value"), no file named --check-only, no write
[ "$rc" = 64 ] && [ ! -e ./--check-only ]
