#!/bin/sh
# Hazard: none — no entry in H1–H176 covers the façade's string decoding; the
# rule pinned is DESIGN §7 (sim serve answers as the API server does): the
# API server decodes a body with Go's encoding/json, which replaces every
# byte that starts no well-formed UTF-8 sequence by U+FFFD (one per byte:
# a stray byte, an overlong form, an encoded surrogate, a sequence cut
# short). `sim serve` copied such bytes through, so a value read back was
# not what a cluster would hold. Checked with curl (the stored JSON) and
# with kubectl reading it back; OpenBao (also Go) likewise.
# Args: reassert binary, source dir.
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
for c in curl python3 kubectl; do
  command -v $c >/dev/null || { echo "FAIL: $c is needed (cmake/deps.sh installs it); a skipped check is not a pass" >&2; exit 1; }
done
printf 'name: utf8\nseed: 1\ncluster: {preset: prod, credential: current}\ndesired: current\nruns:\n  - name: r\n' > w.yaml
"$BIN" sim init --scenario w.yaml --db w.db >/dev/null || { echo "FAIL: sim init" >&2; exit 1; }
serve_start "$BIN" serve.out serve.err --db w.db --listen 127.0.0.1:0
SPID=$SERVE_PID
U=$SERVE_URL
[ -n "$U" ] || exit 1
N="$U/api/v1/nodes/prod-worker-1"
# The patch: each value holds bytes Go replaces (\377 stray, \342\202 cut
# short, \300\257 overlong, \355\240\200 a surrogate) beside valid UTF-8 (é).
printf '{"metadata":{"annotations":{"utf8/stray":"a\377b","utf8/cut":"x\342\202c","utf8/overlong":"\300\257","utf8/surrogate":"\355\240\200","utf8/valid":"\303\251t\303\251"}}}' > patch.json
got=$(curl -s -o patch.out -w '%{http_code}' -X PATCH -H 'Content-Type: application/merge-patch+json' --data-binary @patch.json "$N")
[ "$got" = 200 ] || fail "merge patch with invalid UTF-8: HTTP $got, want 200 (the API server stores U+FFFD): $(head -c 200 patch.out)"
curl -s "$N" > node.json
python3 - node.json <<'PY' || FAILS=$((FAILS + 1))
import json, sys
raw = open(sys.argv[1], "rb").read()
ann = json.loads(raw.decode("utf-8"))["metadata"]["annotations"]
R = "\ufffd"
want = {"utf8/stray": "a" + R + "b", "utf8/cut": "x" + R * 2 + "c", "utf8/overlong": R * 2,
        "utf8/surrogate": R * 3, "utf8/valid": "\u00e9t\u00e9"}
bad = [(k, ann.get(k), v) for k, v in want.items() if ann.get(k) != v]
if bad:
    print("FAIL: stored annotations differ from Go's decoding (key, got, want): %r" % bad, file=sys.stderr)
    sys.exit(1)
PY
# kubectl reads the replacement back as an API server's client would.
cat > kubeconfig <<K
apiVersion: v1
kind: Config
clusters: [{name: sim, cluster: {server: "$U"}}]
users: [{name: u, user: {}}]
contexts: [{name: sim, context: {cluster: sim, user: u}}]
current-context: sim
K
HOME=$T KUBECONFIG=$T/kubeconfig kubectl --request-timeout=60s get node prod-worker-1 \
  -o 'jsonpath={.metadata.annotations.utf8/stray}' >k.out 2>k.err </dev/null ||
  fail "kubectl get: $(head -c 300 k.err)"
printf 'a\357\277\275b' > k.want
cmp -s k.out k.want || fail "kubectl read back $(od -c k.out | head -n 2), want a U+FFFD b"
# OpenBao decodes with encoding/json too.
printf '{"data":{"dockerconfigjson":"p\377q"}}' > bao.json
got=$(curl -s -o bao.out -w '%{http_code}' -X POST --data-binary @bao.json "$U/v1/secret/data/utf8/probe")
[ "$got" = 200 ] || fail "OpenBao write: HTTP $got: $(head -c 200 bao.out)"
curl -s "$U/v1/secret/data/utf8/probe" > bao.read
python3 -c '
import json, sys
v = json.loads(open(sys.argv[1], "rb").read().decode("utf-8"))["data"]["data"]["dockerconfigjson"]
sys.exit(0 if v == "p\ufffdq" else "OpenBao read back %r, want p U+FFFD q" % v)' bao.read || FAILS=$((FAILS + 1))
kill -0 "$SPID" 2>/dev/null || fail "sim serve died"
[ "$FAILS" -eq 0 ] || { echo "$FAILS case(s) failed" >&2; exit 1; }
echo "ok: bytes that are not UTF-8 are stored as U+FFFD, as the API server stores them"
