#!/bin/sh
# Finding M5: a cassette path that goes through a symlinked directory
# (`run --record LINK/x.db`, `sim --record LINK`) fails: `run` exits 1
# "cannot create the cassette (unable to open database file)" before any
# call, `sim` judges every run FAIL ("exit: expected 0, got 1") — and each
# leaves a 0-byte .db behind, which the next attempt then refuses as
# "already there".
B=$(cd "$(dirname "${1:-build/reassert}")" && pwd)/$(basename "${1:-build/reassert}")
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
cd "$d" || exit 2
cat > s.yaml <<'Y'
# Hazard: none (finding reproducer)
name: m5
strategies: [lazy]
cluster: {preset: prod, credential: current, workers: 1, control-planes: 1}
desired: current
runs:
  - name: r
Y
mkdir real; ln -s "$d/real" link
"$B" sim s.yaml --record link > sim.out 2>&1; rs=$?
"$B" sim init --scenario s.yaml --db w.db > /dev/null || exit 2
"$B" run --transport sim:w.db --desired current --record link/x.db > run.out 2>&1; rr=$?
echo "sim --record link: exit $rs; run --record link/x.db: exit $rr: $(grep -h 'cassette' run.out | head -1)"
find real -type f -size 0 | sed 's/^/  0-byte leftover: /'
# Expected: both record through the symlinked directory (exit 0), or refuse
# it up front (64, naming the symlink, nothing run, nothing left behind)
[ $rs = 0 ] && [ $rr = 0 ]
