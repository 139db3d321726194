#!/bin/sh
# G8: `replay --to-scenario OUT` replaces an existing OUT and writes through
# a symlink at OUT. `run --record`, `run --record-runtime-proof` and
# `sweep --emit-scenario` all refuse an existing file ("never over an
# existing file or through a symlink"); --to-scenario is the odd one out.
# Expected: refuse (exit 64) and leave OUT / the symlink target untouched.
# usage: sh g8-to-scenario-overwrites.sh BUILD/reassert
B=${1:-build/reassert}
d=$(mktemp -d)
cat > "$d/rot.yaml" <<'Y'
name: rot
seed: 3
strategies: [lazy]
cluster: {preset: prod, credential: current, workers: 1, control-planes: 1}
desired: current
runs:
  - name: stage
    expect: {exit: 0}
Y
"$B" sim "$d/rot.yaml" --strategy lazy --record "$d/rec" >/dev/null 2>&1
echo "precious" > "$d/existing.yaml"
echo "victim" > "$d/victim"; ln -s "$d/victim" "$d/link.yaml"
"$B" replay "$d/rec/rot.stage.db" --to-scenario "$d/existing.yaml"; echo "exit $? ; existing.yaml now: $(head -c 40 "$d/existing.yaml" | head -n 1)"
"$B" replay "$d/rec/rot.stage.db" --to-scenario "$d/link.yaml"; echo "exit $? ; symlink target now: $(head -c 40 "$d/victim" | head -n 1)"
rm -rf "$d"
