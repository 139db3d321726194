#!/bin/sh
# `reassert sim serve` refuses what a real Kubernetes API server refuses,
# with the API server's Status codes, and never stores a changed value.
# Each block below names the defect it pins;
# each fails if the façade or the store regressed:
#   1. size: a request body over 3 MiB is 413 ("limit is 3145728"); a JSON
#      Patch whose copies grow the object (doubling or many copies) is
#      refused (422 for the copy budget, 413 for an object over etcd's
#      1.5 MiB), and a create over 1.5 MiB is 413 — the object unchanged.
#   2. a Secret's stringData holding U+0000 is stored as base64 of all its
#      bytes (create, merge, strategic and JSON patch), as an API server
#      stores it; U+0000 anywhere else is refused whole, never truncated.
#   3. /talos/* needs the bearer token when the server has one.
#   4. a name that is not a DNS-1123 subdomain (label, for a Namespace) is
#      422 Invalid on create.
#   5. a fieldSelector on a field the kind does not index is 400 BadRequest
#      ("field label not supported").
#   6. a Secret data value that is not base64 is refused (400), on create
#      and on patch; what Go's []byte decoding takes (CR/LF inside, bits
#      under the padding) is stored as bytes and reads back canonical.
#   7. annotations over 262144 bytes in total are 422 Invalid
#      ("metadata.annotations: Too long: must have at most 262144 bytes").
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

w=$tmp/world.db
"$bin" sim init --scenario "$src/scenarios/two-run-stage-reassert.yaml" --db "$w" >/dev/null || {
  echo "FAIL: sim init"
  exit 1
}
printf 'kube-token-%s\n' 4c1e >"$tmp/kube.token"
printf 'bao-token-%s\n' 8d02 >"$tmp/bao.token"

mkfifo "$tmp/fifo"
"$bin" sim serve --db "$w" --listen 127.0.0.1:0 --token-file "$tmp/kube.token" \
  --openbao-token-file "$tmp/bao.token" >"$tmp/fifo" 2>"$tmp/serve.err" &
spid=$!
url=
read -r url <"$tmp/fifo" || true
case "$url" in
http://127.0.0.1:*) ;;
*)
  echo "FAIL: sim serve did not start: $(head -c 300 "$tmp/serve.err")"
  exit 1
  ;;
esac

cat >"$tmp/client.py" <<'PY'
import base64, http.client, json, sys, urllib.parse
url, tokdir = sys.argv[1], sys.argv[2]
sys.setrecursionlimit(20000)
u = urllib.parse.urlparse(url)
kube = open(tokdir + "/kube.token").read().strip()
fails = 0
def fail(msg):
    global fails
    fails += 1
    print("FAIL: " + msg[:400])
def check(cond, msg):
    if not cond: fail(msg)
def req(method, path, body=None, headers=None):
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=120)
    if isinstance(body, (dict, list)):
        body = json.dumps(body)
    try:
        c.request(method, path, body=body, headers=dict(headers or {}))
        r = c.getresponse()
        data = r.read()
    except (http.client.HTTPException, OSError) as e:
        return 0, None, str(e)
    finally:
        c.close()
    try:
        doc = json.loads(data) if data else None
    except (ValueError, RecursionError):
        doc = None
    return r.status, doc, data[:300]
K = {"Authorization": "Bearer " + kube}
C = dict(K, **{"Content-Type": "application/json"})
J = dict(K, **{"Content-Type": "application/json-patch+json"})
M = dict(K, **{"Content-Type": "application/merge-patch+json"})
def is_status(doc, code, reason):
    return (isinstance(doc, dict) and doc.get("kind") == "Status" and doc.get("status") == "Failure"
            and doc.get("code") == code and doc.get("reason") == reason)
def status_is(s, doc, code, reason, what):
    check(s == code and is_status(doc, code, reason),
          "%s: expected a Status %d %s, got %d %r" % (what, code, reason, s, doc if doc else ""))
def msg(doc):
    return doc.get("message", "") if isinstance(doc, dict) else ""
CM = "/api/v1/namespaces/default/configmaps"
def cm(name, **extra):
    o = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}
    o.update(extra)
    return o
def get(path):
    return req("GET", path, headers=K)[1]

# ---- 1. size bounds ------------------------------------------------------
s, d, raw = req("POST", CM, body=json.dumps(cm("big-body", data={"a": "x" * (3 * 1024 * 1024)})), headers=C)
status_is(s, d, 413, "RequestEntityTooLarge", "a body over 3 MiB")
check("limit is 3145728" in msg(d), "the 413 names the API server's limit: %r" % msg(d))
check(get(CM + "/big-body").get("kind") == "Status", "a refused body stored nothing")
s, d, _ = req("POST", CM, body=cm("big-object", data={"a": "x" * (2 * 1024 * 1024)}), headers=C)
status_is(s, d, 413, "RequestEntityTooLarge", "a create over etcd's 1.5 MiB")
check("request is too large" in msg(d), "the 413 says etcd's words: %r" % msg(d))
check(get(CM + "/big-object").get("kind") == "Status", "an over-large create stored nothing")
s, d, _ = req("POST", CM, body=cm("amp", data={"a": "y" * 16384}), headers=C)
check(s == 201, "create amp: %d %r" % (s, d))
rv = get(CM + "/amp")["metadata"]["resourceVersion"]
# Doubling: each copy puts the whole data map inside itself (16 KiB * 2^12
# = 64 MiB unbounded). The copy budget stops it.
ops = [{"op": "copy", "from": "/data", "path": "/data/d%d" % i} for i in range(12)]
s, d, _ = req("PATCH", CM + "/amp", body=ops, headers=J)
check(s in (413, 422) and isinstance(d, dict) and d.get("kind") == "Status" and d.get("code") == s,
      "doubling copies are refused with a Status 413/422: %d %r" % (s, d))
# Many flat copies: 40 * 40 KiB: under the copy budget, over etcd's limit.
s, d, _ = req("PATCH", CM + "/amp", body=[{"op": "add", "path": "/data/b", "value": "z" * 40960}], headers=J)
check(s == 200, "a 40 KiB add: %d" % s)
rv = get(CM + "/amp")["metadata"]["resourceVersion"]
ops = [{"op": "copy", "from": "/data/b", "path": "/data/c%d" % i} for i in range(40)]
s, d, _ = req("PATCH", CM + "/amp", body=ops, headers=J)
status_is(s, d, 413, "RequestEntityTooLarge", "copies growing the object past 1.5 MiB")
# Copy then remove, again and again: the object never grows, the copied
# bytes do (the API server's JSONPatchMaxCopyBytes counts copies).
ops = []
for i in range(80):
    ops += [{"op": "copy", "from": "/data/b", "path": "/data/t"}, {"op": "remove", "path": "/data/t"}]
s, d, _ = req("PATCH", CM + "/amp", body=ops, headers=J)
status_is(s, d, 422, "Invalid", "copies over the copy budget")
check("copy" in msg(d), "the 422 names the copy budget: %r" % msg(d))
o = get(CM + "/amp")
check(o["metadata"]["resourceVersion"] == rv and sorted(o["data"]) == ["a", "b"],
      "refused patches left amp unchanged: %r" % sorted(o.get("data", {})))
# Depth: copying a value under itself at its deepest point doubles nesting.
s, d, _ = req("PATCH", CM + "/amp", body=[{"op": "add", "path": "/data/n", "value": "x"}], headers=J)
deep = {"k": "v"}
for i in range(900):
    deep = {"k": deep}
s, d, _ = req("POST", CM, body=cm("deep", spec=deep), headers=C)
check(s in (201, 422) , "a 900-deep create: %d %r" % (s, d))
if s == 201:
    path = "/spec" + "/k" * 900
    s, d, _ = req("PATCH", CM + "/deep", body=[{"op": "copy", "from": "/spec", "path": path}], headers=J)
    check(s == 422 and isinstance(d, dict) and d.get("kind") == "Status",
          "a copy doubling the nesting past 1000 is 422: %d %r" % (s, d))
    s, d, _ = req("GET", CM + "/deep", headers=K)
    check(s == 200 and d.get("kind") == "ConfigMap", "the deep object still reads: %d" % s)
s, d, _ = req("GET", "/version", headers=K)
check(s == 200, "the server still answers after the size checks: %d" % s)

# ---- 2. stringData with U+0000 -----------------------------------------
# An API server stores a Go string with every byte: stringData "a\u0000b"
# becomes data base64("a\x00b"), on create and on each patch type. Elsewhere
# (a ConfigMap's data, a key) the façade still refuses it whole (400).
SEC = "/api/v1/namespaces/default/secrets"
def sdata(name):
    return get(SEC + "/" + name).get("data", {})
def b64(b):
    return base64.b64encode(b).decode()
sec = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "nul"},
       "data": {"k": b64(b"old"), "keep": b64(b"kept")}, "stringData": {"k": "a\u0000b", "p": "plain"}}
s, d, _ = req("POST", SEC, body=json.dumps(sec), headers=C)
check(s == 201, "a Secret whose stringData holds U+0000 is created: %d %r" % (s, d))
got = sdata("nul")
check(got == {"k": b64(b"a\x00b"), "keep": b64(b"kept"), "p": b64(b"plain")},
      "stringData with NUL stored exactly, winning over data: %r" % got)
check(isinstance(d, dict) and d.get("data", {}).get("k") == b64(b"a\x00b") and "stringData" not in d,
      "the create's answer is the stored Secret: %r" % d)
# Every escape around the NUL decodes as Go decodes it (a lone surrogate is U+FFFD).
raw = '{"stringData": {"u": "\\u00e9\\u0000\\ud83d\\ude00\\n\\"\\\\/", "s": "\\ud800\\u0000"}}'
s, d, _ = req("PATCH", SEC + "/nul", body=raw, headers=M)
check(s == 200, "a merge patch with U+0000 and escapes: %d %r" % (s, d))
got = sdata("nul")
check(got.get("u") == b64("\u00e9\u0000\U0001F600\n\"\\/".encode()) and
      got.get("s") == b64(b"\xef\xbf\xbd\x00") and got.get("k") == b64(b"a\x00b"),
      "escapes around U+0000 stored as Go decodes them: %r" % got)
s, d, _ = req("PATCH", SEC + "/nul", body=json.dumps([{"op": "add", "path": "/stringData", "value": {"j": "\u0000"}}]), headers=J)
check(s == 200 and sdata("nul").get("j") == b64(b"\x00"), "a JSON Patch adding stringData with U+0000: %d %r" % (s, d))
SM = dict(K, **{"Content-Type": "application/strategic-merge-patch+json"})
s, d, _ = req("PATCH", SEC + "/nul", body=json.dumps({"stringData": {"m": "x\u0000y\u0000"}}), headers=SM)
check(s == 200 and sdata("nul").get("m") == b64(b"x\x00y\x00"), "a strategic merge patch with U+0000: %d %r" % (s, d))
before = sdata("nul")
# Refused whole, the Secret unchanged: U+0000 in a key; a value that only
# looks like the façade's carrier (stringData values must be strings).
for what, body, hd in (
        ("a key holding U+0000", '{"stringData": {"a\\u0000b": "v"}}', M),
        ("a forged carrier", json.dumps({"stringData": {"f": {"\u0001bytes": b64(b"x\x00y")}}}), M),
        ("a forged carrier beside a real NUL", json.dumps({"stringData": {"f": {"\u0001bytes": "eA=="}, "g": "\u0000"}}), M),
        ("U+0000 in data", json.dumps({"data": {"d": "\u0000"}}), M),
        ("U+0000 in an annotation", json.dumps({"metadata": {"annotations": {"a": "x\u0000"}}}), M)):
    s, d, _ = req("PATCH", SEC + "/nul", body=body, headers=hd)
    check(s == 400 and is_status(d, 400, "BadRequest"), "%s is 400: %d %r" % (what, s, d))
check(sdata("nul") == before, "the refused patches left the Secret unchanged: %r" % sdata("nul"))
s, d, _ = req("POST", CM, body=json.dumps(cm("nulcm", data={"k": "a\u0000b"})), headers=C)
check(s == 400 and is_status(d, 400, "BadRequest") and "U+0000" in msg(d),
      "U+0000 outside a Secret's stringData is refused, never truncated: %d %r" % (s, d))
check(get(CM + "/nulcm").get("kind") == "Status", "the refused ConfigMap is not stored")

# ---- 3. /talos/* needs the token ----------------------------------------
s, d, _ = req("POST", "/talos/etcd-status", body={"node": "prod-control-plane-1"})
check(s == 401, "/talos/ without the bearer: %d %r" % (s, d))
s, d, _ = req("POST", "/talos/etcd-status", body={"node": "prod-control-plane-1"}, headers={"Authorization": "Bearer wrong"})
check(s == 401, "/talos/ with a wrong bearer: %d" % s)
s, d, _ = req("POST", "/talos/etcd-status", body={"node": "prod-control-plane-1"}, headers=K)
check(s == 200 and d.get("status") == 200, "/talos/ with the bearer: %d %r" % (s, d))

# ---- 4. names -----------------------------------------------------------
for bad in ("Bad_Name", "UPPER", "-lead", "trail-", "a..b", ".dot", "sp ace", "x" * 254, "a/b"):
    s, d, _ = req("POST", CM, body=cm(bad), headers=C)
    if bad == "a/b":
        check(s in (400, 422), "name %r: %d" % (bad, s))
        continue
    status_is(s, d, 422, "Invalid", "name %r" % bad)
    check("metadata.name: Invalid value" in msg(d), "the 422 names metadata.name: %r" % msg(d))
for good in ("ok-name", "a.b-c.d9", "x" * 253):
    s, d, _ = req("POST", CM, body=cm(good), headers=C)
    check(s == 201, "name %r is valid: %d %r" % (good[:20], s, d))
ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "has.dot"}}
s, d, _ = req("POST", "/api/v1/namespaces", body=ns, headers=C)
status_is(s, d, 422, "Invalid", "a Namespace name is a DNS-1123 label (no dots)")

# ---- 5. field selectors -------------------------------------------------
for path in ("/api/v1/pods?fieldSelector=spec.bogus%3Dx", "/api/v1/nodes?fieldSelector=metadata.labels%3Dx",
             "/api/v1/namespaces/default/configmaps?fieldSelector=data.a%3D1",
             "/api/v1/pods?fieldSelector=metadata.name%3Dx,spec.nope%21%3Dy"):
    s, d, _ = req("GET", path, headers=K)
    status_is(s, d, 400, "BadRequest", path)
    check("field label not supported" in msg(d), "400 says field label not supported: %r" % msg(d))
for path in ("/api/v1/pods?fieldSelector=spec.nodeName%3Dprod-worker-1", "/api/v1/nodes?fieldSelector=spec.unschedulable%3Dtrue",
             "/api/v1/pods?fieldSelector=status.phase%21%3DRunning", "/api/v1/namespaces/default/configmaps?fieldSelector=metadata.name%3Damp",
             "/api/v1/secrets?fieldSelector=type%3DOpaque,metadata.namespace%3Ddefault"):
    s, d, _ = req("GET", path, headers=K)
    check(s == 200, "%s is supported: %d %r" % (path, s, d))

# ---- 6. Secret data must be base64 --------------------------------------
bad = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "b64"}, "data": {"k": "not base64!"}}
s, d, _ = req("POST", "/api/v1/namespaces/default/secrets", body=bad, headers=C)
check(s in (400, 422) and isinstance(d, dict) and d.get("kind") == "Status", "data not base64 on create: %d %r" % (s, d))
check(get("/api/v1/namespaces/default/secrets/b64").get("kind") == "Status", "a refused Secret is not stored")
rv = get("/api/v1/namespaces/default/secrets/nul")["metadata"]["resourceVersion"]
for v in ("abc", "ab=c", "a*bc"):
    s, d, _ = req("PATCH", "/api/v1/namespaces/default/secrets/nul", body={"data": {"k2": v}}, headers=M)
    check(s in (400, 422) and isinstance(d, dict) and d.get("kind") == "Status", "data %r on patch: %d %r" % (v, s, d))
check(get("/api/v1/namespaces/default/secrets/nul")["metadata"]["resourceVersion"] == rv, "a refused patch changed nothing")
s, d, _ = req("PATCH", "/api/v1/namespaces/default/secrets/nul", body={"data": {"k2": "YWJj", "k3": ""}}, headers=M)
check(s == 200, "valid base64 (and empty) data: %d %r" % (s, d))
# Go's []byte decoding: CR/LF skipped, bits under the padding ignored; the
# bytes are stored, so the value reads back canonical.
s, d, _ = req("PATCH", "/api/v1/namespaces/default/secrets/nul", body={"data": {"k4": "YW\r\nJj\n", "k5": "QR=="}}, headers=M)
got = sdata("nul")
check(s == 200 and got.get("k4") == "YWJj" and got.get("k5") == "QQ==",
      "data decoded as Go decodes []byte, stored canonical: %d %r" % (s, got))
for v in ("YQ", "YQ=", "YW Jj", "YW-_", "YQ==YQ=="):
    s, d, _ = req("PATCH", "/api/v1/namespaces/default/secrets/nul", body={"data": {"k6": v}}, headers=M)
    status_is(s, d, 400, "BadRequest", "data %r (Go refuses it)" % v)

# ---- 7. annotations total ----------------------------------------------
lim = 262144
s, d, _ = req("POST", CM, body=cm("ann-ok", metadata={"name": "ann-ok", "annotations": {"k": "v" * (lim - 1)}}), headers=C)
check(s == 201, "annotations of exactly 262144 bytes: %d %r" % (s, d))
s, d, _ = req("POST", CM, body={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ann-big", "annotations": {"k": "v" * lim}}}, headers=C)
status_is(s, d, 422, "Invalid", "annotations of 262145 bytes on create")
check("metadata.annotations: Too long: must have at most 262144 bytes" in msg(d), "the 422's words: %r" % msg(d))
rv = get("/api/v1/nodes/prod-worker-1")["metadata"]["resourceVersion"]
s, d, _ = req("PATCH", "/api/v1/nodes/prod-worker-1", body={"metadata": {"annotations": {"a": "1" * 200000, "b": "2" * 70000}}}, headers=M)
status_is(s, d, 422, "Invalid", "annotations over the limit by patch")
check(get("/api/v1/nodes/prod-worker-1")["metadata"]["resourceVersion"] == rv, "the refused node patch changed nothing")

print("client: %d failed" % fails)
sys.exit(1 if fails else 0)
PY

if python3 "$tmp/client.py" "$url" "$tmp" >"$tmp/client.out" 2>&1; then :; else
  echo "FAIL: $(grep -v '^client:' "$tmp/client.out" | head -c 4000)"
  fails=$((fails + 1))
fi
kill -s TERM "$spid" 2>/dev/null
wait "$spid"
scode=$?
spid=
if [ "$scode" -ne 0 ]; then
  echo "FAIL: sim serve exit $scode after the checks (a crash?): $(tail -c 600 "$tmp/serve.err")"
  fails=$((fails + 1))
fi
for s in "kube-token-4c1e" "bao-token-8d02"; do
  if grep -qF "$s" "$tmp/serve.err"; then echo "FAIL: the server's stderr shows a token"; fails=$((fails + 1)); fi
done
echo "serve limits: $fails failed"
[ "$fails" -eq 0 ]
