#!/bin/sh
# The Kubernetes Python client (Debian's python3-kubernetes) as a second
# real client of `sim serve` (issue 30): from a kubeconfig it lists nodes
# (the items, the list's resourceVersion), reads a Lease, patches a Node's
# labels (strategic merge) and a Lease (merge patch) and reads them back,
# creates, replaces (PUT; a stale resourceVersion a 409) and deletes a
# ConfigMap (409 AlreadyExists raised as an ApiException), and watches: `watch.Watch().stream` from the list's
# resourceVersion sees the patch made while it watches, and ends at
# timeout_seconds.
# The client is Debian's, for Debian's interpreter (/usr/bin/python3):
# missing is a FAILURE, never a skip (cmake/deps.sh installs it).
set -u
bin=$1
src=$2
. "$src/tests/lib_serve.sh"
py=/usr/bin/python3
if ! $py -c 'import kubernetes' 2>/dev/null; then
  echo "FAIL: python3-kubernetes is not installed for $py (cmake/deps.sh installs it)"
  exit 1
fi
tmp=$(mktemp -d)
SERVE_PID=
cleanup() {
  [ -n "$SERVE_PID" ] && kill "$SERVE_PID" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
w=$tmp/world.db
"$bin" sim init --scenario "$src/scenarios/two-run-stage-reassert.yaml" --db "$w" >/dev/null || {
  echo "FAIL: sim init"
  exit 1
}
printf 'py-token-%s\n' 5e1f >"$tmp/kube.token"
serve_start "$bin" "$tmp/url" "$tmp/serve.err" --db "$w" --listen 127.0.0.1:0 --token-file "$tmp/kube.token" || exit 1
cat >"$tmp/kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters:
- name: sim
  cluster: {server: "$SERVE_URL"}
users:
- name: ci
  user: {token: py-token-5e1f}
contexts:
- name: sim
  context: {cluster: sim, user: ci, namespace: default}
current-context: sim
KC
HOME=$tmp $py - "$tmp/kubeconfig" <<'PY'
import sys, threading, time
from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException
fails = passes = 0
def check(ok, what):
    global fails, passes
    if ok: passes += 1
    else:
        fails += 1
        print("FAIL: " + what)
config.load_kube_config(config_file=sys.argv[1])
core = client.CoreV1Api()
coord = client.CoordinationV1Api()

nodes = core.list_node()
names = sorted(n.metadata.name for n in nodes.items)
check(names == ["prod-control-plane-%d" % i for i in (1, 2, 3)] + ["prod-worker-%d" % i for i in (1, 2, 3)],
      "list nodes: %r" % names)
check(int(nodes.metadata.resource_version) > 0, "the list has a resourceVersion: %r" % nodes.metadata.resource_version)
check(all(n.metadata.creation_timestamp is not None for n in nodes.items), "every node has a creationTimestamp")
cp = core.list_node(label_selector="node-role.kubernetes.io/control-plane")
check(len(cp.items) == 3, "a label selector: %d" % len(cp.items))
lease = coord.read_namespaced_lease("ghcr-auth-refresh", "flux-system")
check(lease.spec.lease_duration_seconds == 120, "read a Lease: %r" % lease.spec)

core.patch_node("prod-worker-2", {"metadata": {"labels": {"python-client": "yes"}}})
n = core.read_node("prod-worker-2")
check(n.metadata.labels.get("python-client") == "yes", "a strategic merge patch of a label reads back")
coord.patch_namespaced_lease("ghcr-auth-refresh", "flux-system",
                             {"metadata": {"annotations": {"example.com/py": "1"}}})
check(coord.read_namespaced_lease("ghcr-auth-refresh", "flux-system").metadata.annotations.get("example.com/py") == "1",
      "a patch of a Lease reads back")

cm = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="py-cm"), data={"a": "b"})
core.create_namespaced_config_map("default", cm)
try:
    core.create_namespaced_config_map("default", cm)
    check(False, "a second create raises")
except ApiException as e:
    check(e.status == 409 and "AlreadyExists" in e.body, "a second create is 409 AlreadyExists: %d" % e.status)
got = core.read_namespaced_config_map("py-cm", "default")
got.data = {"c": "d"}
core.replace_namespaced_config_map("py-cm", "default", got)
check(core.read_namespaced_config_map("py-cm", "default").data == {"c": "d"}, "a replace stores the object whole")
try:
    core.replace_namespaced_config_map("py-cm", "default", got)
    check(False, "a replace from a stale read raises")
except ApiException as e:
    check(e.status == 409 and "Conflict" in e.body, "a replace from a stale read is 409 Conflict: %d" % e.status)
core.delete_namespaced_config_map("py-cm", "default")
try:
    core.read_namespaced_config_map("py-cm", "default")
    check(False, "a deleted ConfigMap is gone")
except ApiException as e:
    check(e.status == 404, "a deleted ConfigMap is 404: %d" % e.status)

# Watch from the list's resourceVersion; a patch made while it watches.
rv = core.list_node().metadata.resource_version
def later():
    time.sleep(1)
    core.patch_node("prod-worker-3", {"metadata": {"labels": {"watched-by": "python"}}})
t = threading.Thread(target=later)
t.start()
seen, t0 = [], time.monotonic()
for ev in watch.Watch().stream(core.list_node, resource_version=rv, timeout_seconds=4):
    seen.append((ev["type"], ev["object"].metadata.name, (ev["object"].metadata.labels or {}).get("watched-by")))
t.join()
took = time.monotonic() - t0
check(seen == [("MODIFIED", "prod-worker-3", "python")], "the watch sees the patch alone: %r" % seen)
check(3 <= took <= 15, "the watch ends at timeout_seconds: %.1f s" % took)
print("python client: %d passed, %d failed" % (passes, fails))
sys.exit(1 if fails else 0)
PY
code=$?
kill -s TERM "$SERVE_PID"
wait "$SERVE_PID"
scode=$?
SERVE_PID=
[ "$scode" -eq 0 ] || { echo "FAIL: sim serve's SIGTERM exit: $scode: $(head -c 300 "$tmp/serve.err")"; code=1; }
[ "$code" -eq 0 ]
