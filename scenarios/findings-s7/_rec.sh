# sourced by the reproducers here: records a one-run lazy scenario into
# $d/rec and sets C to its cassette. Needs B (the binary) and d (a temp dir).
cat > "$d/s.yaml" <<'Y'
# Hazard: none (finding reproducer)
name: s7
cluster: {preset: prod, credential: previous, workers: 1, control-planes: 1}
desired: current
runs:
  - name: r
    expect: {exit: 0}
Y
"$B" sim "$d/s.yaml" --strategy lazy --record "$d/rec" >/dev/null 2>&1 || { echo "setup failed"; exit 2; }
C="$d/rec/s7.r.db"
