#!/bin/sh
# Hostile HTTP to `reassert sim serve` (README "sim serve"; DESIGN §7): bad
# JSON, odd content types, malformed patches, oversized bodies and headers,
# bad selectors and missing credentials are refused with the API server's
# statuses, the object is left unchanged, and the server keeps serving.
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
command -v curl >/dev/null || { echo "FAIL: curl is needed" >&2; exit 1; }
KTOK=kube-hostile-serve-tok
BTOK=bao-hostile-serve-tok
printf '%s' "$KTOK" > ktok
printf '%s' "$BTOK" > btok
printf 'name: hostile-serve\nseed: 1\ncluster: {preset: prod, credential: current}\ndesired: current\nruns:\n  - name: r\n' > w.yaml
"$BIN" sim init --scenario w.yaml --db w.db >/dev/null || { echo "FAIL: sim init" >&2; exit 1; }
serve_start "$BIN" serve.out serve.err --db w.db --listen 127.0.0.1:0 --token-file ktok \
  --openbao-token-file btok
SPID=$SERVE_PID
U=$SERVE_URL
[ -n "$U" ] || exit 1
A="Authorization: Bearer $KTOK"
S="$U/api/v1/namespaces/flux-system/secrets/variables-base"
rv() { curl -s -H "$A" "$S" | tr ',' '\n' | grep '"resourceVersion"' | head -n 1; }
RV0=$(rv)
[ -n "$RV0" ] || { echo "FAIL: cannot read variables-base" >&2; exit 1; }
# want NAME STATUS curl-args...
want() {
  name=$1; st=$2; shift 2
  got=$(curl -s -o "$name.body" -w '%{http_code}' "$@")
  [ "$got" = "$st" ] || { fail "$name: HTTP $got, want $st"; head -c 200 "$name.body" >&2; echo >&2; }
}
MP='Content-Type: application/merge-patch+json'
JP='Content-Type: application/json-patch+json'
want bad-json 400 -X PATCH -H "$A" -H "$MP" --data '{"data":' "$S"
want text-plain 415 -X PATCH -H "$A" -H 'Content-Type: text/plain' --data '{"metadata":{"labels":{"a":"b"}}}' "$S"
want json-patch-object 400 -X PATCH -H "$A" -H "$JP" --data '{"op":"add"}' "$S"
want json-patch-bogus-op 422 -X PATCH -H "$A" -H "$JP" --data '[{"op":"bogus","path":"/x"}]' "$S"
want json-patch-failed-test 422 -X PATCH -H "$A" -H "$JP" --data '[{"op":"test","path":"/metadata/resourceVersion","value":"0"},{"op":"add","path":"/metadata/labels","value":{"a":"b"}}]' "$S"
want nul-in-json 400 -X PATCH -H "$A" -H "$MP" --data '{"metadata":{"labels":{"a":"x\u0000y"}}}' "$S"
python3 -c "import sys; sys.stdout.write('{\"metadata\":{\"labels\":{\"a\":\"' + 'x' * 4000000 + '\"}}}')" > big.json
want body-over-3MiB 413 -X PATCH -H "$A" -H "$MP" --data-binary @big.json "$S"
want no-token 401 "$S"
want wrong-token 401 -H 'Authorization: Bearer nope' "$S"
want bad-label-selector 400 -H "$A" "$U/api/v1/nodes?labelSelector=%28%28%28"
want talos-without-bearer 401 -X POST "$U/talos/reboot"
want openbao-without-token 403 "$U/v1/secret/data/infrastructure/ghcr/auth"
want openbao-bad-body 400 -X POST -H "X-Vault-Token: $BTOK" --data '{"data":' "$U/v1/secret/data/infrastructure/ghcr/auth"
want dotdot-not-normalised 404 --path-as-is -H "$A" "$U/api/v1/namespaces/flux-system/secrets/../../kyverno/secrets/ghcr-auth"
head -c 300000 /dev/zero | tr '\0' b | sed 's/^/X-Big: /' > bighdr
got=$(curl -s -o /dev/null -w '%{http_code}' -H "$A" -H @bighdr "$S")
case "$got" in 4*) ;; *) fail "a 300 KB header: HTTP $got, want 4xx" ;; esac
[ "$(rv)" = "$RV0" ] || fail "variables-base changed ($RV0 -> $(rv)) after refused requests"
kill -0 "$SPID" 2>/dev/null || fail "sim serve died"
for f in *.body; do
  grep -qF "$KTOK" "$f" && fail "$f: the kube token is echoed"
  grep -qF "$BTOK" "$f" && fail "$f: the OpenBao token is echoed"
done
[ "$FAILS" -eq 0 ] || { echo "$FAILS case(s) failed" >&2; exit 1; }
echo "ok: sim serve refuses hostile requests and keeps serving, objects unchanged"
