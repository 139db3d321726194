#!/bin/sh
# Hazard: none in H1–H176 — rule DESIGN §5.1 (the harness never writes
# outside its own directories; a hostile input is bad input, 65) and §8.
# A cassette's meta `args` were once obeyed
# by `replay --reseed` and `--to-scenario`, so an edited cassette made replay
# write a runtime-proof file at any path it named (and read any file with
# --reuse-runtime-proof). Now the recorded arguments obey a scenario's
# rules: each command exits 65 naming the cassette and the args item, and
# writes nothing. The unedited cassette (its proof path under the recorded
# run's private directory, read back as {tmp}) still reseeds.
# Args: reassert binary, source dir.
set -u
BIN=$1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
FAILS=0
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
cat >"$T/rot.yaml" <<'Y'
name: rot
seed: 3
strategies: [lazy]
cluster: {preset: prod, credential: previous, workers: 1, control-planes: 1}
desired: current
runs:
  - name: stage
    args: [--record-runtime-proof, "{tmp}/proof.json"]
    expect: {exit: 0}
Y
"$BIN" sim "$T/rot.yaml" --strategy lazy --record "$T/rec" >/dev/null 2>&1 || fail "recording the scenario"
c="$T/rec/rot.stage.db"
[ -f "$c" ] || { echo "FAIL: no cassette"; exit 1; }
"$BIN" replay "$c" --reseed >"$T/o" 2>&1 || fail "the unedited cassette does not reseed: $(head -c 300 "$T/o")"
mkdir "$T/elsewhere"
for args in "[\"--record-runtime-proof\",\"$T/elsewhere/W\"]" "[\"--record-runtime-proof=$T/elsewhere/W\"]" \
  "[\"--reuse-runtime-proof\",\"/etc/hostname\"]" "[\"--record-runtime-proof\",\"{tmp}/../../elsewhere/W\"]"; do
  cp "$c" "$T/e.db"
  sqlite3 "$T/e.db" "update meta set value='$args' where key='args'"
  for mode in --reseed "--to-scenario $T/out.yaml"; do
    rm -f "$T/out.yaml"
    # shellcheck disable=SC2086
    "$BIN" replay "$T/e.db" $mode >"$T/o" 2>&1
    rc=$?
    [ "$rc" -eq 65 ] || fail "args $args, replay $mode: exit $rc, want 65: $(head -c 300 "$T/o")"
    grep -q "meta args" "$T/o" || fail "args $args, replay $mode: the error names no meta args"
    grep -qF "$T/e.db" "$T/o" || fail "args $args, replay $mode: the error names no cassette"
    [ -z "$(ls -A "$T/elsewhere")" ] && [ ! -e "$T/out.yaml" ] || fail "args $args, replay $mode: wrote a file"
  done
done
echo "cassette args: $FAILS failed"
[ "$FAILS" -eq 0 ]
