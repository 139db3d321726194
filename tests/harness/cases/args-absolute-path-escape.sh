#!/bin/sh
# A scenario run's args name an absolute path outside {tmp}; reassert sim writes the runtime proof there (DESIGN 5.1: never writes outside its own directories).
bin=$1; src=$2; d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
mkdir "$d/sandbox"
cat >"$d/s.yaml" <<EOS
name: abs-escape
seed: 1
strategies: [lazy]
cluster: {preset: prod, credential: previous}
desired: current
runs:
  - name: stage
    args: [--record-runtime-proof, "$d/sandbox/escape.json"]
    expect: {exit: 0}
EOS
timeout 30 "$bin" sim "$d/s.yaml" >"$d/out" 2>&1
rc=$?
[ -z "$(ls -A "$d/sandbox")" ] || { echo "wrote $(ls "$d/sandbox") outside {tmp} (exit $rc)"; exit 1; }
[ "$rc" -eq 65 ] || [ "$rc" -eq 1 ]
