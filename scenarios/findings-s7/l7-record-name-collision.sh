#!/bin/sh
# Finding L7: scenario names are made file-safe for `sim --record DIR`
# ('/' -> '_'), so two scenarios named 'dup/a' and 'dup_a' in one command
# write the same cassette: the first recording is silently replaced, exit 0.
B=$(cd "$(dirname "${1:-build/reassert}")" && pwd)/$(basename "${1:-build/reassert}")
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
for n in 'dup/a' 'dup_a'; do
f="$d/$(echo "$n" | tr / -).yaml"
cat > "$f" <<Y
# Hazard: none (finding reproducer)
name: '$n'
strategies: [lazy]
cluster: {preset: prod, credential: current, workers: 1, control-planes: 1}
desired: current
runs:
  - name: r
Y
done
"$B" sim "$d/dup-a.yaml" "$d/dup_a.yaml" --record "$d/rec" > "$d/o" 2>&1; rc=$?
n=$(find "$d/rec" -name '*.db' | wc -l)
echo "exit $rc; $n cassette(s) for 2 runs: $(find "$d/rec" -name '*.db')"
# Expected: two cassettes, or a refusal naming the clash
[ "$n" = 2 ] || [ $rc != 0 ]
