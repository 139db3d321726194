#!/bin/sh
# G2: a cassette with a duplicated seq (or a gap) is accepted; help says a
# malformed row exits 65 naming the file and the seq.
# usage: sh g2-cassette-duplicate-seq.sh BUILD/reassert
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
sqlite3 "$c" "create table c2 as select * from calls; drop table calls; alter table c2 rename to calls; insert into calls select * from calls where seq=40;"
for m in --list --reseed --strict; do "$B" replay "$c" $m >/dev/null; echo "replay $m (duplicate seq 40): exit $? (want 65)"; done
"$B" replay "$c" --strict | head -2
rm -rf "$d"
