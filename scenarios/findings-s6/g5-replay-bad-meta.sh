#!/bin/sh
# G5: a cassette whose meta is malformed is replayed instead of refused
# (exit 65 naming the file and the key, DESIGN §7/§8; `replay --help`: "a
# malformed row exits 65"). Also re-checks session 5's F8 (args).
# usage: sh g5-replay-bad-meta.sh BUILD/reassert
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
for kv in 'desired|{}' 'desired_ciphertext|plaintext-not-ENC' 'exit|0x' 'strategy|bogus' \
          'args|["--check-only","--fences"]' 'format_version|0'; do
  k=${kv%%|*}; v=${kv#*|}
  cp "$d/rec/rot.stage.db" "$d/m.db"
  sqlite3 "$d/m.db" "update meta set value='$v' where key='$k'"
  "$B" replay "$d/m.db" --strict >"$d/o1" 2>"$d/e1"; r1=$?
  "$B" replay "$d/m.db" --reseed >"$d/o2" 2>"$d/e2"; r2=$?
  echo "meta $k=$v: --strict exit $r1, --reseed exit $r2 (want 65 both)"
  head -n 3 "$d/o1" "$d/e1" | grep -v '^$' | sed 's/^/    /' | cut -c1-200
done
rm -rf "$d"
