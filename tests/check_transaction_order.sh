#!/bin/sh
# Hazard: H40 — policy fence order: parent pause, child pause, fenced work, root, child resume, parent resume; the controller restart between the pauses and the first fenced write; the parent is read again after its pause (observed quiet) before the child is read and paused.
# Hazard: H80 — a drain blocked past the drain timeout fails closed, and cleanup releases in DESIGN §3.4 order: child resume, parent resume, the node's claim, then the Lease.
# Hazard: H60 — the fan-out is written before the first node claim; the root cutover comes after the last Talos write.
# Hazard: H76 — the claim is one write: exactly two Node writes (claim, phase advance) precede a node's first eviction.
# Hazard: H102 — per node: claim < phase < auth patch < drain < reboot < image remove < pull < marker < release (uncordon only after the marker).
# A full rotation (every node stale) is run against a sim world, then the
# world's own call log — every call the core made, in order, with whether it
# was applied — is checked against that order. The world, not the core's
# report, is the evidence. Then a roll whose first drain a PodDisruptionBudget
# blocks past the drain timeout (pdb-blocked-drain's first run, drain timeout
# 1m): the run fails holding both policy fences, the node's claim and the
# Lease, and its cleanup's writes must come in DESIGN §3.4's order.
#
#   tests/check_transaction_order.sh BUILD/reassert SOURCE_DIR
set -u
bin=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
for strategy in lazy eager; do
  rm -f "$tmp/w.db"
  "$bin" sim init --scenario "$src/scenarios/node/rolling-stale-nodes.yaml" --db "$tmp/w.db" >/dev/null 2>&1 ||
    { echo "FAIL: sim init"; exit 1; }
  "$bin" run --transport sim:"$tmp/w.db" --desired current --strategy "$strategy" >"$tmp/out" 2>&1 ||
    { echo "FAIL [$strategy]: the rotation failed: $(tail -c 400 "$tmp/out")"; status=1; continue; }
  python3 - "$tmp/w.db" "$strategy" <<'PY' || status=1
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
strategy = sys.argv[2]
calls = db.execute("select seq, op, target from call_log order by seq").fetchall()
rows = db.execute("select seq, op, target from call_log where applied = 1 and op in "
                  "('kube.create','kube.patch','kube.delete','kube.evict','openbao.write',"
                  "'talos.patch','talos.reboot','talos.image-remove','talos.image-pull') "
                  "order by seq").fetchall()
bad = []
def seqs(pred):
    return [s for s, op, t in rows if pred(op, t)]
def first(pred):
    s = seqs(pred); return s[0] if s else None
def last(pred):
    s = seqs(pred); return s[-1] if s else None
def before(what_a, a, what_b, b):
    if a is None or b is None:
        bad.append("missing: %s (%s) or %s (%s)" % (what_a, a, what_b, b))
    elif not a < b:
        bad.append("%s (call %s) is not before %s (call %s)" % (what_a, a, what_b, b))
parent = lambda op, t: op == "kube.patch" and t == "Kustomization/flux-system/flux-system"
child = lambda op, t: op == "kube.patch" and t == "Kustomization/flux-system/infrastructure"
restart = lambda op, t: op == "kube.patch" and t == "Deployment/flux-system/kustomize-controller"
root = lambda op, t: op == "kube.patch" and t == "Secret/flux-system/ksail-registry-credentials"
fanout = lambda op, t: (op == "kube.patch" and (t.startswith("PushSecret/") or t.startswith("ExternalSecret/")
                        or t == "Secret/flux-system/variables-base")) or op == "openbao.write"
node_w = lambda op, t: op == "kube.patch" and t.startswith("Node/")
talos = lambda op, t: op.startswith("talos.")
# H40
before("parent pause", first(parent), "child pause", first(child))
before("child pause", first(child), "controller restart", first(restart))
before("controller restart", first(restart), "first fan-out write", first(fanout))
# H40: the parent observed after its pause, before the child is looked at.
pause_p, pause_c = first(parent), first(child)
if pause_p is not None and pause_c is not None:
    get_p = [s for s, op, t in calls if op == "kube.get" and t == "Kustomization/flux-system/flux-system"
             and pause_p < s < pause_c]
    get_c = [s for s, op, t in calls if op == "kube.get" and t == "Kustomization/flux-system/infrastructure"
             and pause_p < s < pause_c]
    if not get_p:
        bad.append("the parent was not read between its pause (call %s) and the child pause (call %s)"
                   % (pause_p, pause_c))
    elif not get_c or not get_p[0] < get_c[0]:
        bad.append("the parent's read after its pause (call %s) does not come before the child's first "
                   "read (calls %s)" % (get_p[0], get_c))
before("last fan-out write", last(fanout), "root write", first(root))
before("root write", last(root), "child resume", last(child))
before("child resume", last(child), "parent resume", last(parent))
if len(seqs(parent)) != 2 or len(seqs(child)) != 2:
    bad.append("expected one pause and one resume per Kustomization: parent %s, child %s"
               % (seqs(parent), seqs(child)))
# H60
before("first fan-out write", first(fanout), "first node claim", first(node_w))
before("last Talos write", last(talos), "root write", first(root))
# H76 and H102, per node
nodes = sorted({t.split("/", 1)[1] for op, t in [(o, t) for _, o, t in rows] if node_w(op, t)})
if len(nodes) != 6:
    bad.append("expected 6 nodes rolled, got %s" % nodes)
for n in nodes:
    nw = seqs(lambda op, t: node_w(op, t) and t == "Node/" + n)
    tp = seqs(lambda op, t: op == "talos.patch" and t == n)
    ev = seqs(lambda op, t: op == "kube.evict" and t.endswith("-" + n))
    rb = first(lambda op, t: op == "talos.reboot" and t == n)
    rm = first(lambda op, t: op == "talos.image-remove" and t == n)
    pl = first(lambda op, t: op == "talos.image-pull" and t == n)
    if len(nw) != 3 or len(tp) != 2:
        bad.append("%s: expected 3 Node writes (claim, phase, release) and 2 Talos patches (auth, marker), got %s, %s" % (n, nw, tp))
        continue
    claim, phase, release = nw
    auth, marker = tp
    before(n + " claim", claim, n + " phase advance", phase)
    before(n + " phase advance", phase, n + " auth patch", auth)
    drain = ev[0] if ev else None
    if n.startswith("prod-worker"):
        before(n + " auth patch", auth, n + " first eviction", drain)
        before(n + " last eviction", ev[-1] if ev else None, n + " reboot", rb)
        if len([s for s in nw if s < drain]) != 2:
            bad.append("%s: the claim was not one write (%s Node writes before its drain)" % (n, len([s for s in nw if s < drain])))
    before(n + " auth patch", auth, n + " reboot", rb)
    before(n + " reboot", rb, n + " image remove", rm)
    before(n + " image remove", rm, n + " image pull", pl)
    before(n + " image pull", pl, n + " marker", marker)
    before(n + " marker", marker, n + " release", release)
for b in bad:
    print("FAIL [%s]: %s" % (strategy, b))
print("transaction order [%s]: %s" % (strategy, "ok" if not bad else "%d violation(s)" % len(bad)))
sys.exit(1 if bad else 0)
PY
done

# Cleanup order on an error path (DESIGN §3.4): child resume, parent resume,
# node cleanup, Lease release.
printf 'drain-timeout: 1m\n' >"$tmp/short-drain.yaml"
for strategy in lazy eager; do
  rm -f "$tmp/w.db"
  "$bin" sim init --scenario "$src/scenarios/node/pdb-blocked-drain.yaml" --run roll --db "$tmp/w.db" >/dev/null 2>&1 ||
    { echo "FAIL: sim init (pdb-blocked-drain)"; exit 1; }
  "$bin" run --transport sim:"$tmp/w.db" --desired current --strategy "$strategy" \
    --config "$tmp/short-drain.yaml" >"$tmp/out" 2>&1
  rc=$?
  if [ "$rc" -ne 1 ] || ! grep -q "drain of prod-worker-1 did not finish" "$tmp/out"; then
    echo "FAIL [$strategy]: the blocked drain did not fail closed (exit $rc): $(tail -c 400 "$tmp/out")"
    status=1
    continue
  fi
  python3 - "$tmp/w.db" "$strategy" <<'PY' || status=1
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
strategy = sys.argv[2]
rows = db.execute("select seq, op, target from call_log where applied = 1 and op = 'kube.patch' "
                  "order by seq").fetchall()
def last(target):
    s = [seq for seq, op, t in rows if t == target]
    return s[-1] if s else None
steps = [("child resume", last("Kustomization/flux-system/infrastructure")),
         ("parent resume", last("Kustomization/flux-system/flux-system")),
         ("node release", last("Node/prod-worker-1")),
         ("Lease release", last("Lease/flux-system/ghcr-auth-refresh"))]
bad = ["missing: %s" % w for w, s in steps if s is None]
if not bad:
    for (wa, a), (wb, b) in zip(steps, steps[1:]):
        if not a < b:
            bad.append("%s (call %s) is not before %s (call %s)" % (wa, a, wb, b))
for b in bad:
    print("FAIL [%s] cleanup: %s" % (strategy, b))
print("cleanup order [%s]: %s" % (strategy, "ok" if not bad else "%d violation(s)" % len(bad)))
sys.exit(1 if bad else 0)
PY
done
exit $status
