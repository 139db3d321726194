#!/bin/sh
# kubectl's watches and its default columns against `sim serve`, as against
# an API server (issue 30):
#   - `kubectl get nodes` shows NAME STATUS ROLES AGE VERSION (the Table the
#     server renders; guard: serve_table), AGE from metadata.creationTimestamp
#     (never <unknown>), `describe` shows the creation time (not 0001-01-01);
#   - `kubectl get -w` (bounded by --request-timeout) prints the objects,
#     then a change made while it watches; `--watch-only -o name` prints the
#     change alone;
#   - a raw watch: from a resourceVersion, only the changes after it; with a
#     label selector, an object that leaves the selection is DELETED (guard:
#     the selection before the change); BOOKMARK with allowWatchBookmarks at
#     timeoutSeconds; a resourceVersion older than the server's log is an
#     ERROR event 410 Expired "too old resource version";
#   - `kubectl rollout status` waits on its watch while a restart rolls out
#     (the world's clock moved by /reassert/v1/sleep) and reports success.
set -u
bin=$1
src=$2
. "$src/tests/lib_serve.sh"
tmp=$(mktemp -d)
SERVE_PID=
bg=
cleanup() {
  [ -n "$bg" ] && kill "$bg" 2>/dev/null
  [ -n "$SERVE_PID" ] && kill "$SERVE_PID" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
fails=0
passes=0
ok() { passes=$((passes + 1)); }
fail() { echo "FAIL: $1"; fails=$((fails + 1)); }
if ! command -v kubectl >/dev/null 2>&1; then
  echo "FAIL: kubectl is not installed (cmake/deps.sh installs it); a skipped check is not a pass"
  exit 1
fi
w=$tmp/world.db
"$bin" sim init --scenario "$src/scenarios/two-run-stage-reassert.yaml" --db "$w" >/dev/null || fail "sim init"
serve_start "$bin" "$tmp/url" "$tmp/serve.err" --db "$w" --listen 127.0.0.1:0 || exit 1
url=$SERVE_URL
cat >"$tmp/kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters:
- name: sim
  cluster: {server: "$url"}
users:
- name: ci
  user: {}
contexts:
- name: sim
  context: {cluster: sim, user: ci}
current-context: sim
KC
kc() { HOME=$tmp KUBECONFIG=$tmp/kubeconfig kubectl "$@" </dev/null; }

# ---- columns, AGE, describe ----------------------------------------------
if kc get nodes >"$tmp/nodes" 2>"$tmp/err"; then ok; else fail "get nodes: $(cat "$tmp/err")"; fi
head -1 "$tmp/nodes" | grep -Eq '^NAME +STATUS +ROLES +AGE +VERSION$' && ok ||
  fail "get nodes' columns: $(head -1 "$tmp/nodes")"
grep -Eq '^prod-control-plane-1 +Ready +control-plane +[0-9]+[smhd] +v1\.32\.0$' "$tmp/nodes" && ok ||
  fail "a control plane's row: $(grep control-plane-1 "$tmp/nodes")"
grep -Eq '^prod-worker-2 +Ready +<none> +[0-9]' "$tmp/nodes" && ok || fail "a worker's row: $(grep worker-2 "$tmp/nodes")"
grep -q '<unknown>' "$tmp/nodes" && fail "AGE is <unknown>: $(cat "$tmp/nodes")" || ok
kc describe lease -n flux-system ghcr-auth-refresh >"$tmp/desc" 2>&1
grep -q 'Creation Timestamp:.*2026' "$tmp/desc" && ok || fail "describe shows the creation time: $(grep -i creation "$tmp/desc")"
kc get pods -n flux-system >"$tmp/pods" 2>&1
head -1 "$tmp/pods" | grep -Eq '^NAME +READY +STATUS +RESTARTS +AGE$' && ok || fail "get pods' columns: $(head -2 "$tmp/pods")"
kc get events -A >"$tmp/events" 2>&1 && ok || fail "get events: $(cat "$tmp/events")"
kc get --raw /readyz >"$tmp/ready" 2>&1 && [ "$(cat "$tmp/ready")" = ok ] && ok || fail "get --raw /readyz: $(cat "$tmp/ready")"

# ---- kubectl get -w, --watch-only -------------------------------------------
kc get nodes -w --request-timeout=5s >"$tmp/w1" 2>"$tmp/w1.err" &
bg=$!
kc get nodes -w --watch-only -o name --request-timeout=5s >"$tmp/w2" 2>"$tmp/w2.err" &
bg2=$!
sleep 2
kc label node prod-worker-3 watched=yes >/dev/null 2>&1 || fail "label while watching"
wait "$bg"
wait "$bg2"
bg=
[ "$(grep -c '^prod-worker-3 ' "$tmp/w1")" -eq 2 ] && ok ||
  fail "get -w prints the node, then its change: $(cat "$tmp/w1" "$tmp/w1.err")"
head -1 "$tmp/w1" | grep -q '^NAME .*VERSION$' && ok || fail "get -w has the Table's header: $(head -1 "$tmp/w1")"
[ "$(cat "$tmp/w2")" = "node/prod-worker-3" ] && ok ||
  fail "--watch-only prints the change alone: '$(cat "$tmp/w2" "$tmp/w2.err")'"

# ---- raw watch semantics ------------------------------------------------------
python3 - "$url" "$w" <<'PY' || fails=$((fails + 1))
import http.client, json, subprocess, sys, threading, time, urllib.parse
u = urllib.parse.urlparse(sys.argv[1])
bad = []
def check(ok, what):
    if not ok: bad.append(what); print("FAIL: " + what)
def get(path):
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    c.request("GET", path); r = c.getresponse(); d = r.read(); c.close()
    return r.status, d
def patch(path, body):
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    c.request("PATCH", path, json.dumps(body), {"Content-Type": "application/merge-patch+json"})
    r = c.getresponse(); d = r.read(); c.close()
    return r.status, json.loads(d)
def watch(path, during=None):
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    c.request("GET", path); r = c.getresponse()
    t = threading.Thread(target=during) if during else None
    if t: t.start()
    data = r.read(); c.close()
    if t: t.join()
    return r.status, [json.loads(l) for l in data.decode().splitlines() if l.strip()]
s, d = get("/api/v1/nodes")
rv = json.loads(d)["metadata"]["resourceVersion"]
def changes():
    time.sleep(0.5)
    patch("/api/v1/nodes/prod-worker-1", {"metadata": {"labels": {"pick": "me"}}})
    patch("/api/v1/nodes/prod-worker-2", {"metadata": {"annotations": {"x": "1"}}})
    patch("/api/v1/nodes/prod-worker-1", {"metadata": {"labels": {"pick": None}}})
s, ev = watch("/api/v1/nodes?watch=true&resourceVersion=%s&timeoutSeconds=3" % rv, changes)
check(s == 200 and [(e["type"], e["object"]["metadata"]["name"]) for e in ev] ==
      [("MODIFIED", "prod-worker-1"), ("MODIFIED", "prod-worker-2"), ("MODIFIED", "prod-worker-1")],
      "a watch from a resourceVersion sends the changes after it, in order: %r" %
      [(e["type"], e["object"]["metadata"]["name"]) for e in ev])
check(all(int(e["object"]["metadata"]["resourceVersion"]) > int(rv) for e in ev), "every event is after the watch's resourceVersion")
s, ev = watch("/api/v1/nodes?watch=true&resourceVersion=%s&timeoutSeconds=1&labelSelector=pick%%3Dme" % rv)
check([(e["type"], e["object"]["metadata"]["name"]) for e in ev] == [("ADDED", "prod-worker-1"), ("DELETED", "prod-worker-1")],
      "through a selector: entering is ADDED, leaving is DELETED: %r" % [(e["type"], e["object"]["metadata"]["name"]) for e in ev])
s, ev = watch("/api/v1/nodes?watch=true&resourceVersion=%s&timeoutSeconds=1&allowWatchBookmarks=true" % rv)
check(ev and ev[-1]["type"] == "BOOKMARK" and int(ev[-1]["object"]["metadata"]["resourceVersion"]) >= int(ev[-2]["object"]["metadata"]["resourceVersion"]),
      "a bookmark ends a watch that asked for them: %r" % (ev[-1:],))
s, ev = watch("/api/v1/nodes?watch=true&resourceVersion=1&timeoutSeconds=5")
check(s == 200 and len(ev) == 1 and ev[0]["type"] == "ERROR" and ev[0]["object"]["code"] == 410
      and ev[0]["object"]["reason"] == "Expired" and "too old resource version" in ev[0]["object"]["message"],
      "a resourceVersion older than the log is 410 Expired: %r" % ev)
s, d = get("/api/v1/nodes?watch=true&fieldSelector=status.phase%3DX")
check(s == 400, "a watch with an unsupported field selector is 400: %d" % s)
sys.exit(1 if bad else 0)
PY
[ "$fails" -eq 0 ] && ok

# ---- rollout status -------------------------------------------------------------
kc rollout restart deployment/kustomize-controller -n flux-system >/dev/null 2>"$tmp/err" && ok ||
  fail "rollout restart: $(cat "$tmp/err")"
kc rollout status deployment/kustomize-controller -n flux-system --request-timeout=30s >"$tmp/ro" 2>&1 &
bg=$!
sleep 2
# The world's rollout takes virtual time: move its clock while kubectl waits.
python3 - "$url" <<'PY'
import http.client, json, sys, urllib.parse
u = urllib.parse.urlparse(sys.argv[1])
for i in range(6):
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    c.request("POST", "/reassert/v1/sleep", json.dumps({"ms": 15000}), {"Content-Type": "application/json"})
    c.getresponse().read(); c.close()
PY
wait "$bg"
code=$?
bg=
[ "$code" -eq 0 ] && grep -q 'successfully rolled out' "$tmp/ro" && ok ||
  fail "rollout status follows the rollout to its end: exit $code: $(cat "$tmp/ro")"
grep -q 'Waiting for deployment' "$tmp/ro" && ok || fail "rollout status saw the rollout in progress: $(cat "$tmp/ro")"

kill -s TERM "$SERVE_PID"
wait "$SERVE_PID"
code=$?
SERVE_PID=
[ "$code" -eq 0 ] && ok || fail "sim serve's SIGTERM exit: $code: $(cat "$tmp/serve.err")"
echo "kubectl watch: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
