#!/bin/sh
# Writes scenarios/incidents/ into OUTDIR from the incident reconstructions
# scenarios/incidents/reconstructed/incident-*.yaml: each is run with
# `sim --strategy eager --record` (production's behaviour on those days), and
# every recorded run becomes OUTDIR/<scenario>.<run>.db (the cassette) and
# OUTDIR/<scenario>.<run>.yaml (`replay --to-scenario`), whose header is
# filled in from the reconstruction's. Deterministic: the same core gives the
# same .yaml bytes (a cassette's fingerprint key is random, so the .db bytes
# differ; nothing in the .yaml depends on them). `make incidents` runs this
# into scenarios/incidents/; tests/check_incidents.sh runs it into a
# temporary folder and compares. Never edit the output by hand.
#
#   tests/incidents_gen.sh BUILD/reassert SOURCE_ROOT OUTDIR
set -u
case $1 in /*) bin=$1 ;; *) bin=$(pwd)/$1 ;; esac
src=$2
outdir=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$outdir" || exit 1
n=0
for f in "$src"/scenarios/incidents/reconstructed/incident-*.yaml; do
  [ -f "$f" ] || continue
  base=$(basename "$f" .yaml)
  rm -rf "$tmp/rec"
  if ! "$bin" sim "$f" --strategy eager --record "$tmp/rec" >"$tmp/sim.out" 2>&1; then
    cat "$tmp/sim.out"
    echo "incidents_gen: $f does not pass under eager; nothing written" >&2
    exit 1
  fi
  # The reconstruction's own header: its Hazard line, and where it lives.
  hazard=$(grep -m1 '^# Hazard: H' "$f" | sed -e 's/^# //' -e 's/ —.*//')
  about=$(sed -n 's/^about: *//p' "$f" | head -n1)
  for db in "$tmp"/rec/"$base".*.db; do
    [ -f "$db" ] || continue
    run=$(basename "$db" .db)
    run=${run#"$base".}
    cp "$db" "$outdir/$base.$run.db" || exit 1
    rm -f "$outdir/$base.$run.db-wal" "$outdir/$base.$run.db-shm"
    # Written beside its cassette (a scenario reads its cassette from its
    # own folder tree), under a name no scenario glob takes, then edited.
    ts="$outdir/.$base.$run.to-scenario.yaml"
    rm -f "$ts" # --to-scenario never writes over a file
    if ! (cd "$outdir" && "$bin" replay "$base.$run.db" --to-scenario "$ts" >"$tmp/ts.out" 2>&1); then
      rm -f "$ts"
      cat "$tmp/ts.out"
      echo "incidents_gen: replay --to-scenario failed on $base.$run.db" >&2
      exit 1
    fi
    rm -f "$outdir/$base.$run.db-wal" "$outdir/$base.$run.db-shm" # a reader's, empty
    # --to-scenario names the cassette relative to OUT's folder: the cassette
    # sits beside the .yaml, so its bare name.
    sed -e "s|^# Hazard: (fill in[^)]*)|# $hazard|" \
      -e "s|^# Incident: (fill in[^)]*)|# Incident: run \"$run\" of scenarios/incidents/reconstructed/$base.yaml ($about), recorded under eager|" \
      -e "s|^name: .*|name: \"$base.$run\"|" \
      -e "s|^about: .*|about: \"run $run of scenarios/incidents/reconstructed/$base.yaml, reseeded from its cassette\"|" \
      -e "s|^cluster: {cassette: \"[^\"]*/\([^\"/]*\)\"}|cluster: {cassette: \"\1\"}|" \
      "$ts" >"$outdir/$base.$run.yaml" || exit 1
    rm -f "$ts"
    n=$((n + 1))
  done
done
if [ "$n" -eq 0 ]; then
  echo "incidents_gen: no scenarios/incidents/reconstructed/incident-*.yaml recorded a run" >&2
  exit 1
fi
echo "incidents_gen: $n incident scenarios written to $outdir"
