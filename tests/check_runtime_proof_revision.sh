#!/bin/sh
# Hazard: H121 — a runtime proof recorded for another credential revision is stale: warn that it is ignored and process every node as if no proof were given; exit 0.
# Run 1 records a proof while the cluster holds `previous` (nothing to do, so
# the proof vouches for every node at the previous revision); run 2 rotates
# to `current` offering that proof: the warning is printed and all six nodes
# are rebooted, as without a proof. (Two runs with two desired credentials:
# a scenario file has one `desired`, so this is a shell check.)
#
#   tests/check_runtime_proof_revision.sh BUILD/reassert SOURCE_DIR
set -u
bin=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $1"; exit 1; }
"$bin" sim init --scenario "$src/scenarios/node/rolling-stale-nodes.yaml" --db "$tmp/w.db" >/dev/null 2>&1 ||
  fail "sim init"
"$bin" run --transport sim:"$tmp/w.db" --desired previous --record-runtime-proof "$tmp/proof.json" \
  >"$tmp/out1" 2>&1 || fail "recording run: $(tail -c 300 "$tmp/out1")"
[ -s "$tmp/proof.json" ] || fail "no proof recorded"
"$bin" run --transport sim:"$tmp/w.db" --desired current --reuse-runtime-proof "$tmp/proof.json" \
  >"$tmp/out2" 2>&1 || fail "rotation with a stale proof: $(tail -c 300 "$tmp/out2")"
grep -q "runtime proof .* is for another revision or image; verifying fully" "$tmp/out2" ||
  fail "no warning that the proof is stale: $(head -c 400 "$tmp/out2")"
python3 - "$tmp/w.db" <<'PY' || exit 1
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
reboots = db.execute("select count(*) from call_log where op = 'talos.reboot' and applied = 1").fetchone()[0]
if reboots != 6:
    print("FAIL: expected all 6 nodes rebooted despite the stale proof, got %d" % reboots)
    sys.exit(1)
PY
echo "runtime proof revision: a stale proof is ignored"
