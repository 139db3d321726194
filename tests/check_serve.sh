#!/bin/sh
# `reassert sim serve` as an HTTP server (DESIGN.md §7):
# loopback only (64 otherwise), port 0 printed on stdout's first line, the
# Kubernetes subset's Status answers (401 without the bearer, 404 for an
# unknown path or object, 400 for a body that is not JSON — never a crash,
# 409, 422 for a failed JSON Patch test), selectors, the OpenBao token (403),
# the registry's challenge/token/manifest, the test-only /talos/ endpoints,
# the façade's clock, sleep, entropy, pid and batch costing (a batch of 3
# with parallelism 2 costs exactly 2 round trips, as the in-process root
# charges call_batch; Talos calls ride in batches too), a
# scenario run's fault answered over HTTP and an unfired one reported at
# shutdown (exit 1), and a clean exit 0 on SIGTERM and SIGINT.
set -u
bin=$1
src=$2
tmp=$(mktemp -d)
spid=
cleanup() {
  [ -n "$spid" ] && kill "$spid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
fails=0
passes=0
ok() { passes=$((passes + 1)); }
fail() { echo "FAIL: $1"; fails=$((fails + 1)); }
expect() { # expect CODE DESCRIPTION -- ARGS...
  want=$1; what=$2; shift 3
  "$bin" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
  got=$?
  if [ "$got" -eq "$want" ]; then ok; else
    fail "$what: expected exit $want, got $got: $(head -c 300 "$tmp/out" "$tmp/err")"; fi
}
expect_in() { # expect_in FILE TEXT DESCRIPTION
  if grep -qF -- "$2" "$1"; then ok; else fail "$3: $1 lacks '$2': $(head -c 300 "$1")"; fi
}
# start_serve ARGS...: starts the server, sets $spid and $url (read from its
# first stdout line through a FIFO: no polling, no port race).
start_serve() {
  rm -f "$tmp/fifo"
  mkfifo "$tmp/fifo"
  "$bin" sim serve "$@" >"$tmp/fifo" 2>"$tmp/serve.err" &
  spid=$!
  url=
  read -r url <"$tmp/fifo" || true
}
# stop_serve SIGNAL: stops it, sets $scode to its exit status.
stop_serve() {
  kill -s "$1" "$spid" 2>/dev/null
  wait "$spid"
  scode=$?
  spid=
}

w=$tmp/world.db
"$bin" sim init --scenario "$src/scenarios/two-run-stage-reassert.yaml" --db "$w" >/dev/null ||
  fail "sim init"
printf 'kube-token-%s\n' 7f3a >"$tmp/kube.token"
printf 'bao-token-%s\n' 19c2 >"$tmp/bao.token"
: >"$tmp/empty"

# ---- usage and input errors, before anything listens --------------------
expect 0 "sim serve --help" -- sim serve --help
expect_in "$tmp/out" "loopback address only" "--help says loopback only"
expect_in "$tmp/out" "--token-file" "--help documents --token-file"
for bad in 0.0.0.0:0 10.1.2.3:8080 "[::]:0" example.com:0 192.168.0.1:0; do
  expect 64 "--listen $bad is refused" -- sim serve --db "$w" --listen "$bad"
  expect_in "$tmp/err" "--listen" "the refusal of $bad names --listen"
done
expect_in "$tmp/err" "not a loopback address" "a non-loopback address is named as such"
expect 64 "a forged annotation in --listen" -- sim serve --db "$w" --listen "$(printf 'x\n::error::FORGED:1')"
if tr '\r' '\n' <"$tmp/err" | grep -qE '^[[:space:]]*::[a-z-]+( [^:]*)?::FORGED'; then
  fail "a --listen error line forges a workflow command"; else ok; fi
expect 64 "port out of range" -- sim serve --db "$w" --listen 127.0.0.1:70000
expect 64 "port not a number" -- sim serve --db "$w" --listen 127.0.0.1:http
expect 64 "--db is required" -- sim serve --listen 127.0.0.1:0
expect 64 "unknown flag" -- sim serve --db "$w" --bogus 1
expect 64 "--tls-cert without --tls-key" -- sim serve --db "$w" --tls-cert "$tmp/kube.token"
expect 65 "an empty token file" -- sim serve --db "$w" --token-file "$tmp/empty"
expect 65 "a missing token file" -- sim serve --db "$w" --token-file "$tmp/nope"
expect 65 "no world at --db" -- sim serve --db "$tmp/none.db"
expect 65 "a file that is not a world" -- sim serve --db "$tmp/kube.token"
expect 64 "an unknown --run" -- sim serve --db "$w" --scenario "$src/scenarios/two-run-stage-reassert.yaml" --run nope

# ---- the protocol checks, by a client that reads tokens from files -------
cat >"$tmp/client.py" <<'PY'
import base64, http.client, json, sqlite3, sys, urllib.parse
url, tokdir, world = sys.argv[1], sys.argv[2], sys.argv[3]
u = urllib.parse.urlparse(url)
kube = open(tokdir + "/kube.token").read().strip()
bao = open(tokdir + "/bao.token").read().strip()
fails = 0
def fail(msg):
    global fails
    fails += 1
    print("FAIL: " + msg)
def req(method, path, body=None, headers=None):
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
    h = dict(headers or {})
    if isinstance(body, (dict, list)):
        body = json.dumps(body)
    c.request(method, path, body=body, headers=h)
    r = c.getresponse()
    data = r.read()
    c.close()
    try:
        doc = json.loads(data) if data else None
    except ValueError:
        doc = None
    return r.status, dict((k.lower(), v) for k, v in r.getheaders()), doc
K = {"Authorization": "Bearer " + kube}
def check(cond, msg):
    if not cond: fail(msg)
def status_is(doc, code, reason, what):
    ok = (isinstance(doc, dict) and doc.get("kind") == "Status" and doc.get("apiVersion") == "v1"
          and doc.get("status") == "Failure" and doc.get("code") == code and doc.get("reason") == reason)
    check(ok, "%s: expected a Status %d %s, got %r" % (what, code, reason, doc))
def clock():
    return req("GET", "/reassert/v1/clock", headers=K)[2]["now_ms"]

# Kubernetes: the bearer token.
s, _, d = req("GET", "/api/v1/nodes")
check(s == 401, "no token: %d" % s); status_is(d, 401, "Unauthorized", "no token")
s, _, d = req("GET", "/api/v1/nodes", headers={"Authorization": "Bearer wrong"})
check(s == 401, "wrong token: %d" % s); status_is(d, 401, "Unauthorized", "wrong token")
s, _, d = req("GET", "/version")
check(s == 401, "/version without a token: %d" % s)
s, _, d = req("GET", "/version", headers=K)
check(s == 200 and d.get("major") == "1", "/version: %d %r" % (s, d))
# Discovery names what the store serves.
s, _, d = req("GET", "/apis", headers=K)
groups = {g["name"] for g in d.get("groups", [])} if s == 200 else set()
for g in ("apps", "coordination.k8s.io", "external-secrets.io", "kustomize.toolkit.fluxcd.io", "policy"):
    check(g in groups, "/apis lacks the group " + g)
s, _, d = req("GET", "/api/v1", headers=K)
names = {r["name"] for r in d.get("resources", [])} if s == 200 else set()
for r in ("nodes", "pods", "secrets", "namespaces", "pods/eviction"):
    check(r in names, "/api/v1 lacks " + r)
s, _, d = req("GET", "/apis/coordination.k8s.io/v1", headers=K)
check(s == 200 and any(r["name"] == "leases" for r in d["resources"]), "leases are not discovered")
# Unknown paths and objects.
for p in ("/nope", "/api/v2/nodes", "/apis/nope.io/v1/things", "/api/v1/namespaces/default/widgets"):
    s, _, d = req("GET", p, headers=K)
    check(s == 404, "%s: %d" % (p, s)); status_is(d, 404, "NotFound", p)
s, _, d = req("GET", "/api/v1/nodes/no-such-node", headers=K)
status_is(d, 404, "NotFound", "a missing node")
check(isinstance(d, dict) and d.get("details", {}).get("name") == "no-such-node", "404 details name the node")
# Reads and selectors.
s, _, d = req("GET", "/api/v1/nodes/prod-worker-1", headers=K)
check(s == 200 and d["metadata"]["name"] == "prod-worker-1", "get node: %d" % s)
s, _, d = req("GET", "/api/v1/nodes?labelSelector=" + urllib.parse.quote("node-role.kubernetes.io/control-plane"), headers=K)
check(s == 200 and len(d["items"]) == 3, "label selector: %d %r" % (s, d and len(d.get("items", []))))
s, _, d = req("GET", "/api/v1/pods?fieldSelector=" + urllib.parse.quote("spec.nodeName=prod-worker-1"), headers=K)
check(s == 200 and len(d["items"]) > 0 and all(i["spec"]["nodeName"] == "prod-worker-1" for i in d["items"]),
      "field selector over every namespace")
s, _, d = req("GET", "/apis/coordination.k8s.io/v1/namespaces/flux-system/leases/ghcr-auth-refresh", headers=K)
check(s == 200 and d["kind"] == "Lease", "get lease: %d" % s)
c = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
c.request("GET", "/api/v1/nodes?watch=true&timeoutSeconds=1", headers=K)
r = c.getresponse()
lines = [json.loads(l) for l in r.read().decode().splitlines() if l.strip()]
c.close()
check(r.status == 200 and [e["type"] for e in lines] == ["ADDED"] * 6,
      "a watch without a resourceVersion starts with the nodes as ADDED: %d %r" % (r.status, lines[:1]))
# Malformed bodies: 400 Status, and the server keeps answering.
J = dict(K, **{"Content-Type": "application/json-patch+json"})
M = dict(K, **{"Content-Type": "application/merge-patch+json"})
for body, hdr, what in (("{bad", M, "merge patch"), ("[{]", J, "json patch"), ("\x00\xff", M, "binary"),
                        ('{"a":1} trailing', M, "trailing bytes")):
    s, _, d = req("PATCH", "/api/v1/nodes/prod-worker-1", body=body, headers=hdr)
    check(s == 400, "malformed %s: %d" % (what, s)); status_is(d, 400, "BadRequest", "malformed " + what)
s, _, d = req("POST", "/api/v1/namespaces/default/configmaps", body="{nope", headers=dict(K, **{"Content-Type": "application/json"}))
status_is(d, 400, "BadRequest", "malformed create")
s, _, d = req("PATCH", "/api/v1/nodes/prod-worker-1", body="{}", headers=dict(K, **{"Content-Type": "application/apply-patch+yaml"}))
check(s == 422 and "fieldManager" in d["message"], "server-side apply needs a fieldManager: %d" % s)
s, _, d = req("PATCH", "/api/v1/nodes/prod-worker-1?fieldManager=t", body="{}", headers=dict(K, **{"Content-Type": "application/apply-patch+yaml"}))
check(s == 400, "an apply that does not name the object is 400: %d" % s)
s, _, d = req("PUT", "/api/v1/nodes/prod-worker-1", body="{}", headers=K)
status_is(d, 400, "BadRequest", "a PUT whose body names no object")
check("does not match the name on the URL" in (d or {}).get("message", ""), "a PUT's 400 says why: %r" % (d,))
s, _, d = req("PUT", "/api/v1/nodes", body="{}", headers=K)
check(s == 405, "a PUT of a collection is 405: %d" % s)
s, _, d = req("GET", "/version", headers=K)
check(s == 200, "the server still answers after malformed bodies")
# Writes: 422 for a failed test op, 409 for a second create, patch types.
s, _, d = req("PATCH", "/api/v1/nodes/prod-worker-1", body=[{"op": "test", "path": "/metadata/name", "value": "x"}], headers=J)
check(s == 422, "failed test op: %d" % s); status_is(d, 422, "Invalid", "failed test op")
cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "serve-check"}, "data": {"a": "1"}}
C = dict(K, **{"Content-Type": "application/json"})
s, _, d = req("POST", "/api/v1/namespaces/default/configmaps", body=cm, headers=C)
check(s == 201 and d["metadata"]["namespace"] == "default", "create: %d %r" % (s, d))
s, _, d = req("POST", "/api/v1/namespaces/default/configmaps", body=cm, headers=C)
check(s == 409, "second create: %d" % s); status_is(d, 409, "AlreadyExists", "second create")
s, _, d = req("POST", "/api/v1/namespaces/other/configmaps", body=dict(cm, metadata={"name": "y", "namespace": "default"}), headers=C)
check(s == 400, "a create whose namespace differs from the URL's: %d" % s)
s, _, d = req("PATCH", "/api/v1/namespaces/default/configmaps/serve-check", body={"metadata": {"labels": {"m": "1"}}}, headers=M)
check(s == 200 and d["metadata"]["labels"] == {"m": "1"}, "merge patch: %d" % s)
S = dict(K, **{"Content-Type": "application/strategic-merge-patch+json"})
s, _, d = req("PATCH", "/api/v1/namespaces/default/configmaps/serve-check", body={"metadata": {"annotations": {"s": "2"}}}, headers=S)
check(s == 200 and d["metadata"]["annotations"] == {"s": "2"} and d["metadata"]["labels"] == {"m": "1"}, "strategic merge patch: %d" % s)
rv = d["metadata"]["resourceVersion"] if s == 200 else "0"
s, _, d = req("PATCH", "/api/v1/namespaces/default/configmaps/serve-check", body={"metadata": {"resourceVersion": "1", "labels": {"m": "2"}}}, headers=M)
check(s == 409, "a stale resourceVersion: %d" % s); status_is(d, 409, "Conflict", "stale resourceVersion")
s, _, d = req("PATCH", "/api/v1/namespaces/default/configmaps/serve-check?dryRun=All", body={"metadata": {"labels": {"m": "dry"}}}, headers=M)
check(s == 200 and d["metadata"]["labels"]["m"] == "dry", "dry-run patch answers the result: %d" % s)
s, _, d = req("GET", "/api/v1/namespaces/default/configmaps/serve-check", headers=K)
check(d["metadata"]["labels"]["m"] == "1" and d["metadata"]["resourceVersion"] == rv, "a dry-run patch is not kept")
s, _, d = req("DELETE", "/api/v1/namespaces/default/configmaps/serve-check", headers=K)
check(s == 200, "delete: %d" % s)
s, _, d = req("DELETE", "/api/v1/namespaces/default/configmaps/serve-check", headers=K)
status_is(d, 404, "NotFound", "second delete")
pods = req("GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Dprod-worker-2", headers=K)[2]["items"]
pod = [p for p in pods if p["metadata"]["namespace"] == "default"][0]["metadata"]
ev = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": pod["name"], "namespace": "default"}}
s, _, d = req("POST", "/api/v1/namespaces/default/pods/%s/eviction" % pod["name"], body=ev, headers=C)
check(s == 201, "eviction: %d %r" % (s, d))
s, _, d = req("POST", "/api/v1/namespaces/default/pods/no-such-pod/eviction", body=ev, headers=C)
status_is(d, 404, "NotFound", "eviction of a missing pod")

# OpenBao: the token, KV v2 reads.
s, _, d = req("GET", "/v1/secret/data/infrastructure/ghcr/auth")
check(s == 403 and d == {"errors": ["permission denied"]}, "OpenBao without a token: %d %r" % (s, d))
s, _, d = req("GET", "/v1/secret/data/infrastructure/ghcr/auth", headers={"X-Vault-Token": "nope"})
check(s == 403, "OpenBao with a wrong token: %d" % s)
V = {"X-Vault-Token": bao}
s, _, d = req("GET", "/v1/secret/data/infrastructure/ghcr/auth", headers=V)
check(s == 200 and isinstance(d["data"]["data"], dict) and d["data"]["metadata"]["version"] >= 1, "OpenBao read: %d" % s)
s, _, d = req("GET", "/v1/auth/token/lookup-self", headers=V)
check(s == 200 and d["data"]["policies"] == ["default"] and bao not in json.dumps(d), "token lookup-self: %d %r" % (s, d))
s, _, d = req("GET", "/v1/auth/token/lookup-self", headers={"X-Vault-Token": "nope"})
check(s == 403, "token lookup-self with a wrong token: %d" % s)
s, _, d = req("GET", "/v1/secret/data/no/such/path", headers=V)
check(s == 404 and "errors" in d, "OpenBao missing path: %d %r" % (s, d))
s, _, d = req("GET", "/v1/othermount/data/infrastructure/ghcr/auth", headers=V)
check(s == 404, "OpenBao wrong mount: %d" % s)
s, _, d = req("POST", "/v1/secret/data/x", body="{bad", headers=V)
check(s == 400 and "errors" in d, "OpenBao malformed write: %d" % s)

# Registry: challenge, token exchange, manifest.
s, h, d = req("GET", "/v2/")
chal = h.get("www-authenticate", "")
check(s == 401 and chal.startswith('Bearer realm="%s/token"' % url) and 'service="ghcr.io"' in chal, "/v2/ challenge: %d %s" % (s, chal))
row = sqlite3.connect("file:%s?mode=ro" % world, uri=True).execute("SELECT dockerconfigjson FROM catalogue WHERE name='previous'").fetchone()
a = json.loads(row[0])["auths"]["ghcr.io"]
basic = "Basic " + base64.b64encode(("%s:%s" % (a["username"], a["password"])).encode()).decode()
s, _, d = req("GET", "/token?service=ghcr.io&scope=repository:devantler-tech/ksail:pull", headers={"Authorization": basic})
check(s == 200 and d.get("token"), "token exchange: %d" % s)
tok = d.get("token", "") if d else ""
s, _, d = req("GET", "/token?service=ghcr.io&scope=repository:devantler-tech/ksail:pull", headers={"Authorization": "Basic " + base64.b64encode(b"deploy-bot:wrong").decode()})
check(s == 401, "token exchange with a wrong password: %d" % s)
s, h, d = req("GET", "/v2/devantler-tech/ksail/manifests/v7.178.30", headers={"Authorization": "Bearer " + tok, "Accept": "application/vnd.oci.image.index.v1+json"})
check(s == 200 and h.get("docker-content-digest", "").startswith("sha256:"), "manifest: %d %r" % (s, h))
check(h.get("content-type") == "application/vnd.oci.image.index.v1+json", "manifest media type: %r" % h.get("content-type"))
s, h, d = req("GET", "/v2/devantler-tech/ksail/manifests/v7.178.30", headers={"Authorization": "Bearer " + tok,
    "Accept": "application/vnd.docker.distribution.manifest.v2+json, application/vnd.oci.image.manifest.v1+json"})
check(s == 200 and h.get("content-type") == "application/vnd.docker.distribution.manifest.v2+json",
      "the first accepted manifest media type: %r" % h.get("content-type"))
s, h, d = req("GET", "/v2/some/manifests/repo/manifests/v1", headers={"Authorization": "Bearer " + tok})
check(s == 401 and 'scope="repository:some/manifests/repo:pull"' in h.get("www-authenticate", ""),
      "a repository path holding /manifests/ splits at the last one: %d %r" % (s, h.get("www-authenticate")))
s, h, d = req("GET", "/v2/devantler-tech/ksail/manifests/v7.178.30")
check(s == 401 and 'scope="repository:devantler-tech/ksail:pull"' in h.get("www-authenticate", ""), "manifest without a bearer: %d" % s)
s, h, d = req("GET", "/v2/devantler-tech/ksail/manifests/v7.178.30", headers={"Authorization": "Bearer forged"})
check(s == 401 and "invalid_token" in h.get("www-authenticate", ""), "manifest with a forged bearer: %d" % s)

# The façade: clock, sleep, entropy, pid, batch costing. With --token-file
# each endpoint needs the bearer as the Kubernetes paths do (sleep moves the
# world's clock, batch changes what calls cost): 401, the clock unmoved.
t0 = clock()
for m, p, b in (("GET", "clock", None), ("POST", "sleep", {"ms": 1000}), ("GET", "entropy", None),
                ("GET", "pid", None), ("POST", "batch", {"begin": 2, "parallelism": 2}),
                ("POST", "batch", {"end": True})):
    for hd in (None, {"Authorization": "Bearer wrong"}, {"Authorization": "Basic " + kube}):
        s, _, d = req(m, "/reassert/v1/" + p, body=b, headers=hd)
        check(s == 401 and isinstance(d, dict) and "errors" in d,
              "%s /reassert/v1/%s without the bearer (%r): %d %r" % (m, p, hd, s, d))
check(clock() == t0, "a refused sleep or batch moved the clock: %d -> %d" % (t0, clock()))
t0 = clock()
s, _, d = req("POST", "/reassert/v1/sleep", body={"ms": 1500}, headers=K)
check(s == 200 and d["now_ms"] == t0 + 1500, "sleep advances the virtual clock exactly: %r" % d)
for bad in ({"ms": -1}, {"ms": 1.5}, {"ms": "1"}, {}, {"ms": 1, "x": 2}):
    s, _, d = req("POST", "/reassert/v1/sleep", body=bad, headers=K)
    check(s == 400 and "errors" in d, "bad sleep %r: %d" % (bad, s))
s, _, d = req("GET", "/reassert/v1/entropy", headers=K)
check(s == 200 and d["value"].isdigit(), "entropy: %r" % d)
s, _, d2 = req("GET", "/reassert/v1/entropy", headers=K)
check(d2["value"] != d["value"], "entropy moves")
s, _, d = req("GET", "/reassert/v1/pid", headers=K)
check(s == 200 and isinstance(d["pid"], int) and d["pid"] > 0, "pid: %r" % d)
t0 = clock()
for i in range(3):
    req("GET", "/api/v1/nodes/prod-worker-1", headers=K)
plain = clock() - t0
check(plain == 75, "three calls cost three round trips of 25 ms: %d" % plain)
t0 = clock()
s, _, d = req("POST", "/reassert/v1/batch", body={"begin": 3, "parallelism": 2}, headers=K)
check(s == 200, "batch begin: %d" % s)
s, _, d = req("POST", "/reassert/v1/batch", body={"begin": 3, "parallelism": 2}, headers=K)
check(s == 409, "a second begin while a batch is open: %d" % s)
req("GET", "/api/v1/nodes/prod-worker-1", headers=K)
req("GET", "/api/v1/nodes?watch=true&timeoutSeconds=0", headers=K)   # a watch is not a call: not a batch call
req("GET", "/v1/secret/data/infrastructure/ghcr/auth", headers=V)
req("GET", "/apis/coordination.k8s.io/v1/namespaces/flux-system/leases/ghcr-auth-refresh", headers=K)
s, _, d = req("POST", "/reassert/v1/batch", body={"end": True}, headers=K)
check(s == 200 and d["calls"] == 3, "batch end counts the calls: %r" % d)
batched = clock() - t0
check(batched == 50, "a batch of 3 with parallelism 2 costs 2 round trips (50 ms): %d" % batched)
for bad in ({"begin": 0, "parallelism": 1}, {"begin": 2, "parallelism": 0}, {"begin": 2}, {"end": False}):
    s, _, d = req("POST", "/reassert/v1/batch", body=bad, headers=K)
    check(s == 400, "bad batch %r: %d" % (bad, s))
s, _, d = req("GET", "/reassert/v1/nope", headers=K)
check(s == 404, "unknown façade endpoint: %d" % s)
s, _, d = req("POST", "/reassert/v1/clock", headers=K)
check(s == 405, "POST clock: %d" % s)
# The test-only Talos endpoints, through the same door (batch-costed too).
s, _, d = req("POST", "/talos/etcd-status", body={"node": "prod-control-plane-1"}, headers=K)
check(s == 200 and d.get("status") == 200 and d.get("sent") == "yes", "talos etcd-status: %d %r" % (s, d))
s, _, d = req("POST", "/talos/no-such-verb", body={"node": "prod-control-plane-1"}, headers=K)
check(s == 404, "an unknown Talos verb: %d" % s)
s, _, d = req("POST", "/talos/reboot", body="{bad", headers=K)
check(s == 400, "a malformed Talos body: %d" % s)
t0 = clock()
req("POST", "/reassert/v1/batch", body={"begin": 2, "parallelism": 16}, headers=K)
for n in ("prod-worker-1", "prod-worker-2"):
    s, _, d = req("POST", "/talos/read-auth", body={"node": n, "host": "ghcr.io"}, headers=K)
    check(s == 200 and d.get("status") == 200, "talos read-auth %s: %d %r" % (n, s, d and d.get("status")))
req("POST", "/reassert/v1/batch", body={"end": True}, headers=K)
check(clock() - t0 == 25, "two batched Talos auth reads cost one round trip: %d" % (clock() - t0))
print("client: %d failed" % fails)
sys.exit(1 if fails else 0)
PY

start_serve --db "$w" --listen 127.0.0.1:0 --token-file "$tmp/kube.token" --openbao-token-file "$tmp/bao.token"
if echo "$url" | grep -qE '^http://127\.0\.0\.1:[0-9]+$'; then ok; else
  fail "the first stdout line is the URL: '$url' $(head -c 300 "$tmp/serve.err")"; fi
# A port already taken is a failure to listen (exit 1), named.
port=${url##*:}
expect 1 "a port already in use" -- sim serve --db "$w" --listen "localhost:$port"
expect_in "$tmp/err" "cannot listen on 127.0.0.1 port $port" "the taken port is named"
before=$(sqlite3 "$w" "SELECT value FROM counters WHERE name='api_calls'")
if python3 "$tmp/client.py" "$url" "$tmp" "$w" >"$tmp/client.out" 2>&1; then ok; else
  fail "protocol checks: $(grep -v '^client:' "$tmp/client.out" | head -c 3000)"; fi
stop_serve TERM
if [ "$scode" -eq 0 ]; then ok; else fail "SIGTERM: exit $scode: $(head -c 300 "$tmp/serve.err")"; fi
expect_in "$tmp/serve.err" "stopped (SIGTERM)" "SIGTERM is a clean stop"
after=$(sqlite3 "$w" "SELECT value FROM counters WHERE name='api_calls'")
if [ -n "$after" ] && [ "$after" -gt "${before:-0}" ]; then ok; else
  fail "the world counted the calls served (api_calls $before -> $after)"; fi
for s in "kube-token-7f3a" "bao-token-19c2" "ghp-prev"; do
  if grep -qF "$s" "$tmp/serve.err"; then fail "the server's stderr shows a secret"; else ok; fi
done

# ---- a scenario run: its fault answers over HTTP; an unfired one fails ---
cat >"$tmp/faults.yaml" <<'YAML'
# sim serve's fault probe (a test's own scenario, not in the suite).
name: serve-faults
seed: 5
cluster: {preset: prod, credential: previous}
desired: current
runs:
  - name: probe
    faults:
      - {on: "kube.get Node/prod-worker-1", nth: 1, fail: 503}
      - {on: "kube.get Node/prod-worker-2", nth: 1, lost-response: true}
      - {on: "kube.get Node/prod-worker-3", nth: 1, fail: 500}
    expect: {exit: 0}
YAML
"$bin" sim init --scenario "$tmp/faults.yaml" --db "$tmp/f.db" >/dev/null || fail "sim init of the fault scenario"
start_serve --db "$tmp/f.db" --scenario "$tmp/faults.yaml"
python3 - "$url" >"$tmp/f.out" 2>&1 <<'PY'
import http.client, json, sys, urllib.parse
u = urllib.parse.urlparse(sys.argv[1])
def get(p):
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
    c.request("GET", p)
    r = c.getresponse()
    return r.status, json.loads(r.read())
s, d = get("/api/v1/nodes/prod-worker-1")
assert s == 503 and d["kind"] == "Status" and d["code"] == 503, (s, d)
try:
    get("/api/v1/nodes/prod-worker-2")
    print("FAIL: a lost response was answered")
    sys.exit(1)
except (http.client.HTTPException, ConnectionError) as e:
    pass
s, d = get("/api/v1/nodes/prod-worker-2")
assert s == 200, s
s, d = get("/reassert/v1/clock")
print("clock", d["now_ms"])
PY
if [ $? -eq 0 ]; then ok; else fail "the scenario's faults over HTTP: $(head -c 600 "$tmp/f.out")"; fi
stop_serve INT
if [ "$scode" -eq 1 ]; then ok; else fail "an unfired fault: exit $scode, expected 1"; fi
expect_in "$tmp/serve.err" "never fired" "the unfired fault is named at shutdown"
expect_in "$tmp/serve.err" "prod-worker-3" "the unfired fault's target is named"
expect_in "$tmp/serve.err" "stopped (SIGINT)" "SIGINT is a clean stop"
# the lost response cost the transport timeout (30 s) on the world's clock
if grep -qE '^clock [0-9]+' "$tmp/f.out" && [ "$(sed -n 's/^clock //p' "$tmp/f.out")" -ge 30000 ]; then ok; else
  fail "a lost response costs the timeout on the world's clock: $(cat "$tmp/f.out")"; fi

echo "serve: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
