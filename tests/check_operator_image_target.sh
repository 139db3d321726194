#!/bin/sh
# Hazard: H138 — the operator image proved must be the exact image the nodes pull: with `operator-image` set to a tag the credential cannot pull, the run is refused before any cluster call.
# Either derive the pull target from `operator-image` (registry proof fails:
# exit 1) or refuse a config whose required targets disagree with it (exit
# 65); both before any Kubernetes, OpenBao or Talos call.
#
#   tests/check_operator_image_target.sh BUILD/reassert SOURCE_DIR
set -u
bin=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$bin" sim init --scenario "$src/scenarios/two-run-stage-reassert.yaml" --db "$tmp/w.db" >/dev/null 2>&1 ||
  { echo "FAIL: sim init"; exit 1; }
printf 'operator-image: ghcr.io/devantler-tech/ksail:v9.9.9\n' >"$tmp/c.yaml"
"$bin" run --transport sim:"$tmp/w.db" --desired current --config "$tmp/c.yaml" >"$tmp/out" 2>&1
rc=$?
calls=$(python3 - "$tmp/w.db" 2>/dev/null <<'PY' || echo '?'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
print(db.execute("select count(*) from call_log where op not like 'registry.%'").fetchone()[0])
PY
)
if ! { { [ "$rc" -eq 1 ] || [ "$rc" -eq 65 ]; } && [ "$calls" = 0 ] && grep -q 'ksail:v9.9.9' "$tmp/out"; }; then
  echo "FAIL: exit $rc (want 1 or 65), $calls cluster calls (want 0), ksail:v9.9.9 named?: $(tail -c 400 "$tmp/out")"
  exit 1
fi
# An operator image on another registry cannot be proved with this
# credential: refused as bad configuration (65) before any call at all.
rm -f "$tmp/w.db"
"$bin" sim init --scenario "$src/scenarios/two-run-stage-reassert.yaml" --db "$tmp/w.db" >/dev/null 2>&1 ||
  { echo "FAIL: sim init"; exit 1; }
printf 'operator-image: quay.io/devantler-tech/ksail:v7.178.30\n' >"$tmp/c.yaml"
"$bin" run --transport sim:"$tmp/w.db" --desired current --config "$tmp/c.yaml" >"$tmp/out" 2>&1
rc=$?
calls=$(python3 - "$tmp/w.db" 2>/dev/null <<'PY' || echo '?'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
print(db.execute("select count(*) from call_log").fetchone()[0])
PY
)
if [ "$rc" -ne 65 ] || [ "$calls" != 0 ] || ! grep -q 'quay.io/devantler-tech/ksail:v7.178.30' "$tmp/out"; then
  echo "FAIL: foreign-registry operator image: exit $rc (want 65), $calls calls (want 0): $(tail -c 400 "$tmp/out")"
  exit 1
fi
echo "operator image target: refused before any cluster call"
exit 0
