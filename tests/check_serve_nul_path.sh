#!/bin/sh
# Hazard: none — no entry in H1–H176 covers the façade's URL decoding; the
# rule pinned is DESIGN §7 (the façade answers as the API server does)
# and the façade's own URL decoding: `sim serve` once
# cut a URL path at a percent-encoded NUL, so `.../secrets/variables-base%00junk`
# read AND patched variables-base, `namespaces/flux-system%00x/...` answered
# the Namespace, and OpenBao `.../auth%00x` read the seed. An API server
# decodes the whole segment: the name (or namespace) holding U+0000 names
# no object, so the answer is a 404 Status and nothing is written; OpenBao
# and the registry likewise answer 404. Args: reassert binary, source dir.
set -u
BIN=$1
# shellcheck source=tests/lib_serve.sh
. "$2/tests/lib_serve.sh"
T=$(mktemp -d)
SPID=""
cleanup() { [ -n "$SPID" ] && kill "$SPID" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
cd "$T" || exit 1
FAILS=0
fail() { echo "FAIL: $*" >&2; FAILS=$((FAILS + 1)); }
command -v curl >/dev/null || { echo "FAIL: curl is needed" >&2; exit 1; }
command -v python3 >/dev/null || { echo "FAIL: python3 is needed" >&2; exit 1; }
KTOK=kube-nul-path-tok
printf '%s' "$KTOK" > ktok
printf 'name: nul-path\nseed: 1\ncluster: {preset: prod, credential: current}\ndesired: current\nruns:\n  - name: r\n' > w.yaml
"$BIN" sim init --scenario w.yaml --db w.db >/dev/null || { echo "FAIL: sim init" >&2; exit 1; }
serve_start "$BIN" serve.out serve.err --db w.db --listen 127.0.0.1:0 --token-file ktok
SPID=$SERVE_PID
U=$SERVE_URL
[ -n "$U" ] || exit 1
A="Authorization: Bearer $KTOK"
NS="$U/api/v1/namespaces/flux-system"
S="$NS/secrets/variables-base"
rv() { curl -s -H "$A" "$S" | python3 -c 'import json,sys; print(json.load(sys.stdin)["metadata"]["resourceVersion"])'; }
RV0=$(rv)
[ -n "$RV0" ] || { echo "FAIL: cannot read variables-base" >&2; exit 1; }
# want NAME STATUS curl-args...: the HTTP status, and for a Kubernetes path
# a Status object saying NotFound (never the object the cut path names).
want() {
  name=$1; st=$2; shift 2
  got=$(curl -s -o "$name.body" -w '%{http_code}' "$@")
  [ "$got" = "$st" ] || { fail "$name: HTTP $got, want $st"; head -c 200 "$name.body" >&2; echo >&2; }
}
want_status() {
  name=$1; shift
  want "$name" 404 "$@"
  k=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d.get("kind"), d.get("reason"))' "$name.body" 2>/dev/null)
  [ "$k" = "Status NotFound" ] || fail "$name: body is '$k', want 'Status NotFound'"
}
MP='Content-Type: application/merge-patch+json'
want_status get-name-nul -H "$A" "$S%00junk"
want_status get-ns-nul -H "$A" "$U/api/v1/namespaces/flux-system%00x/secrets/variables-base"
want_status get-ns-object-nul -H "$A" "$U/api/v1/namespaces/flux-system%00x"
want_status list-nul -H "$A" "$NS/secrets%00"
want_status patch-name-nul -X PATCH -H "$A" -H "$MP" --data '{"metadata":{"labels":{"f7":"applied"}}}' "$S%00junk"
want_status delete-name-nul -X DELETE -H "$A" "$S%00junk"
want_status patch-ns-nul -X PATCH -H "$A" -H "$MP" --data '{"metadata":{"labels":{"f7":"applied"}}}' "$U/api/v1/namespaces/flux-system%00x/secrets/variables-base"
# The bearer check still comes first, as authentication does on a cluster.
want no-token-nul 401 "$S%00junk"
[ "$(rv)" = "$RV0" ] || fail "variables-base changed ($RV0 -> $(rv)) by a request naming another object"
curl -s -H "$A" "$S" | grep -q '"f7"' && fail "variables-base carries the f7 label"
# OpenBao: the seed is at .../ghcr/auth; .../auth<NUL>x is another path.
want bao-get-nul 404 "$U/v1/secret/data/infrastructure/ghcr/auth%00x"
want bao-put-nul 404 -X POST --data '{"data":{"f7":"applied"}}' "$U/v1/secret/data/infrastructure/ghcr/auth%00x"
grep -q '"f7"' bao-get-nul.body bao-put-nul.body && fail "OpenBao answered the seed for a path holding U+0000"
curl -s "$U/v1/secret/data/infrastructure/ghcr/auth" | grep -q '"f7"' && fail "OpenBao seed overwritten"
# Registry: a repository or reference holding U+0000 is not the real one.
BASIC=$(python3 -c '
import base64, json, sqlite3, sys
row = sqlite3.connect("file:w.db?mode=ro", uri=True).execute("SELECT dockerconfigjson FROM catalogue WHERE name=\"previous\"").fetchone()
a = json.loads(row[0])["auths"]["ghcr.io"]
print(base64.b64encode(("%s:%s" % (a["username"], a["password"])).encode()).decode())')
RTOK=$(curl -s -H "Authorization: Basic $BASIC" "$U/token?service=ghcr.io&scope=repository:devantler-tech/ksail:pull" |
  python3 -c 'import json,sys; print(json.load(sys.stdin).get("token",""))')
[ -n "$RTOK" ] || fail "registry token exchange"
want manifest-ok 200 -H "Authorization: Bearer $RTOK" "$U/v2/devantler-tech/ksail/manifests/v7.178.30"
want manifest-ref-nul 404 -H "Authorization: Bearer $RTOK" "$U/v2/devantler-tech/ksail/manifests/v7.178.30%00x"
want manifest-repo-nul 404 -H "Authorization: Bearer $RTOK" "$U/v2/devantler-tech/ksail%00x/manifests/v7.178.30"
# The test-only Talos endpoints: a verb holding U+0000 is no verb.
want talos-nul 404 -X POST -H "$A" --data '{"node":"prod-control-plane-1"}' "$U/talos/etcd-status%00x"
kill -0 "$SPID" 2>/dev/null || fail "sim serve died"
[ "$FAILS" -eq 0 ] || { echo "$FAILS case(s) failed" >&2; exit 1; }
echo "ok: a path holding U+0000 names no object: 404, nothing read or written"
