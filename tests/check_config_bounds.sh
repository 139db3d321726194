#!/bin/sh
# Hazard: H141 — fewer than 2 sync attempts cannot give the two fence observations of H46: refused.
# Hazard: H142 — fewer than 3 Talos convergence attempts: refused, never clamped.
# Hazard: H143 — a heartbeat at or above the Lease duration lets the Lease lapse: refused.
# Each is a `--config` value: exit 65 naming the key, before any cluster call
# (DESIGN r2 §3: refused, never clamped; 65 from a config file). The world's
# call log must stay empty: no Kubernetes, OpenBao, Talos or registry call.
#
#   tests/check_config_bounds.sh BUILD/reassert SOURCE_DIR
set -u
bin=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
expect_refused() { # expect_refused CONFIG-TEXT KEY
  rm -f "$tmp/w.db"
  "$bin" sim init --scenario "$src/scenarios/two-run-stage-reassert.yaml" --db "$tmp/w.db" >/dev/null 2>&1 ||
    { echo "FAIL: sim init"; fails=$((fails + 1)); return; }
  printf '%s\n' "$1" >"$tmp/c.yaml"
  "$bin" run --transport sim:"$tmp/w.db" --desired current --config "$tmp/c.yaml" >"$tmp/out" 2>&1
  rc=$?
  calls=$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("select count(*) from call_log").fetchone()[0])' "$tmp/w.db" 2>/dev/null || echo '?')
  if [ "$rc" -ne 65 ] || ! grep -qF -- "$2" "$tmp/out" || [ "$calls" != 0 ]; then
    echo "FAIL: '$1': exit $rc (want 65), $calls cluster calls (want 0), key $2 named?: $(head -c 300 "$tmp/out")"
    fails=$((fails + 1))
  fi
}
expect_refused 'sync.attempts: 1' 'sync.attempts'
expect_refused 'talos.convergence-attempts: 2' 'talos.convergence-attempts'
expect_refused 'lease: {duration-s: 60, heartbeat-s: 60}' 'heartbeat'
expect_refused 'lease: {duration-s: 60, heartbeat-s: 90}' 'heartbeat'
[ "$fails" -eq 0 ] && echo "config bounds: all refused" || echo "config bounds: $fails failed"
[ "$fails" -eq 0 ]
