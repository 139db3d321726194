#!/bin/sh
# Hazard: H4 — the API validates the Lease's acquireTime and renewTime as MicroTime: every Lease write uses RFC 3339 with exactly six fractional digits and `Z`.
# A full rotation (which acquires the Lease and renews it through a 25-minute
# roll) is run against a sim world; afterwards both times on the Lease must
# have that exact shape. The world's clock starts at the epoch, so a
# fractional part of zero must still print six zeros.
#
#   tests/check_lease_microtime.sh BUILD/reassert SOURCE_DIR
set -u
bin=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$bin" sim init --scenario "$src/scenarios/node/rolling-stale-nodes.yaml" --db "$tmp/w.db" >/dev/null 2>&1 ||
  { echo "FAIL: sim init"; exit 1; }
"$bin" run --transport sim:"$tmp/w.db" --desired current >"$tmp/out" 2>&1 ||
  { echo "FAIL: the rotation failed: $(tail -c 400 "$tmp/out")"; exit 1; }
python3 - "$tmp/w.db" <<'PY'
import json, re, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("select body from objects where kind = 'Lease'").fetchall()
micro = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$")
bad = 0
if len(rows) != 1:
    print("FAIL: expected one Lease, found", len(rows)); sys.exit(1)
spec = json.loads(rows[0][0]).get("spec", {})
for key in ("acquireTime", "renewTime"):
    v = spec.get(key)
    if not isinstance(v, str) or not micro.match(v):
        print("FAIL: Lease spec.%s is not MicroTime: %r" % (key, v)); bad = 1
# The Lease was renewed during the roll: renewTime moved past acquireTime.
if not bad and spec["renewTime"] <= spec["acquireTime"]:
    print("FAIL: the Lease was never renewed: %r" % spec); bad = 1
print("lease microtime:", "ok" if not bad else "failed", spec.get("acquireTime"), spec.get("renewTime"))
sys.exit(bad)
PY
