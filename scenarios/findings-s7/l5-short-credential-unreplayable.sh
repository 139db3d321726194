#!/bin/sh
# Finding L5: a credential that also occurs in ordinary cluster text
# ('system', 'ghcr.io') or is very short ('1') is redacted inside every
# larger string; the recording then cannot be replayed (65 blaming the
# cassette's config, or divergence at seq 1), and nothing warned when it
# was recorded. DESIGN §8: a cassette recorded from a sim run must
# strict-replay to the same counters.
B=$(cd "$(dirname "${1:-build/reassert}")" && pwd)/$(basename "${1:-build/reassert}")
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
ok=1
for pw in system 1 ghcr.io; do
cat > "$d/s.yaml" <<Y
# Hazard: none (finding reproducer)
name: l5
strategies: [lazy]
cluster: {preset: prod, credential: previous, workers: 1, control-planes: 1}
desired: current
catalogue:
  current: {username: bot, password: '$pw'}
runs:
  - name: r
Y
rm -rf "$d/rec"
"$B" sim "$d/s.yaml" --record "$d/rec" > "$d/sim.out" 2>&1 || exit 2
"$B" replay "$d/rec/lazy/l5.r.db" --strict > "$d/o" 2>&1; rc=$?
echo "password '$pw': sim exit 0 (warnings: $(grep -ci warn "$d/sim.out")); strict exit $rc: $(head -1 "$d/o" | cut -c1-160)"
[ $rc = 0 ] || ok=0
done
[ $ok = 1 ]
