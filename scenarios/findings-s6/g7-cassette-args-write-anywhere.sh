#!/bin/sh
# G7: a cassette's meta `args` are honoured by `replay --reseed` and
# `replay --to-scenario`, so an edited (or hostile) cassette makes replay
# write a runtime-proof file at any absolute path it names. DESIGN §5.1
# ("never writes outside its own directories"), §8 (replay needs nothing
# from the cassette but the calls). --to-scenario then refuses the very
# same argument ("give it a path under {tmp}/") — after the file was
# written. Expected: exit 65 (or the argument confined/dropped), no file.
# usage: sh g7-cassette-args-write-anywhere.sh BUILD/reassert
B=${1:-build/reassert}
d=$(mktemp -d)
cat > "$d/rot.yaml" <<'Y'
name: rot
seed: 3
strategies: [lazy]
cluster: {preset: prod, credential: previous, workers: 1, control-planes: 1}
desired: current
runs:
  - name: stage
    expect: {exit: 0}
Y
"$B" sim "$d/rot.yaml" --strategy lazy --record "$d/rec" >/dev/null 2>&1
c="$d/rec/rot.stage.db"
sqlite3 "$c" "update meta set value='[\"--record-runtime-proof\",\"$d/elsewhere/WRITTEN-BY-REPLAY\"]' where key='args'"
mkdir "$d/elsewhere"
"$B" replay "$c" --reseed >/dev/null 2>&1; echo "replay --reseed: exit $?"
ls -la "$d/elsewhere"
rm -f "$d/elsewhere/WRITTEN-BY-REPLAY"
"$B" replay "$c" --to-scenario "$d/out.yaml"; echo "replay --to-scenario: exit $?"
ls -la "$d/elsewhere"
rm -rf "$d"
