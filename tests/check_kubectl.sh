#!/bin/sh
# kubectl as a real client of `reassert sim serve` (the fidelity half of
# live mode): if kubectl cannot tell the façade from an API server for
# the calls the core makes, the sim's Kubernetes semantics are checked by the
# best oracle there is. A generated kubeconfig; plain HTTP here, HTTPS with a
# bearer token and a CA made by openssl at test time in check_kubectl_tls.sh
# (REASSERT_KUBECTL_MODE=tls; kubectl sends a token only over HTTPS).
#   get nodes (-o json and the default columns), a JSON patch whose `test` op
#   fails (kubectl must report the 422 and exit non-zero), annotate, get
#   lease -o jsonpath, get secret -n NS NAME, drain --dry-run=server (every
#   write rolled back, nothing counted), merge and strategic-merge patches on
#   metadata, label and field selectors, create/409/delete, CRD kinds,
#   `get all` (the workloads discovery puts in the category "all"), the
#   verbs discovery lists (watch, update).
# kubectl missing is a FAILURE, never a skip (cmake/deps.sh installs it).
set -u
bin=$1
src=$2
mode=${REASSERT_KUBECTL_MODE:-http}
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

if ! command -v kubectl >/dev/null 2>&1; then
  echo "FAIL: kubectl is not installed (cmake/deps.sh installs the Debian package kubernetes-client);"
  echo "FAIL: the kubectl fidelity checks cannot run, and a skipped check is not a pass"
  exit 1
fi
if [ "$mode" = tls ] && ! command -v openssl >/dev/null 2>&1; then
  echo "FAIL: openssl is not installed (cmake/deps.sh installs it)"
  exit 1
fi

# k DESCRIPTION WANT_EXIT ARGS...: kubectl with the generated kubeconfig,
# HOME in tmp (its discovery cache never outlives the test).
k() {
  what=$1; want=$2; shift 2
  HOME=$tmp KUBECONFIG=$tmp/kubeconfig kubectl --request-timeout=60s "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
  got=$?
  case $want in
  nonzero) [ "$got" -ne 0 ] ;;
  *) [ "$got" -eq "$want" ] ;;
  esac && { ok; return 0; }
  fail "$what: kubectl $*: exit $got (want $want): $(head -c 400 "$tmp/out" "$tmp/err")"
  return 1
}
out_is() { # out_is TEXT DESCRIPTION
  if [ "$(cat "$tmp/out")" = "$1" ]; then ok; else fail "$2: got '$(head -c 300 "$tmp/out")', want '$1'"; fi
}
out_has() { # out_has FILE TEXT DESCRIPTION
  if grep -qiF -- "$2" "$tmp/$1"; then ok; else fail "$3: $1 lacks '$2': $(head -c 300 "$tmp/$1")"; fi
}
counter() { sqlite3 "$w" "SELECT COALESCE((SELECT value FROM counters WHERE name='$1'), 0)"; }

w=$tmp/world.db
"$bin" sim init --scenario "$src/scenarios/two-run-stage-reassert.yaml" --db "$w" >/dev/null ||
  fail "sim init"

serve_args="--db $w --listen 127.0.0.1:0"
user_yaml="{}"
ca_line=
if [ "$mode" = tls ]; then
  # A throwaway CA and a server certificate for 127.0.0.1 (EC P-256: fast).
  ec="-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
  # shellcheck disable=SC2086
  openssl req -x509 $ec -keyout "$tmp/ca.key" -out "$tmp/ca.crt" -days 2 \
    -subj /CN=reassert-test-ca >/dev/null 2>&1 &&
    openssl req $ec -keyout "$tmp/srv.key" -out "$tmp/srv.csr" -subj /CN=127.0.0.1 >/dev/null 2>&1 &&
    printf 'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' >"$tmp/ext" &&
    openssl x509 -req -in "$tmp/srv.csr" -CA "$tmp/ca.crt" -CAkey "$tmp/ca.key" -CAcreateserial \
      -out "$tmp/srv.crt" -days 2 -extfile "$tmp/ext" >/dev/null 2>&1 ||
    fail "openssl could not make the test CA and certificate"
  # A client CA and a client certificate it signs (CN reassert-ci), and one
  # from a CA the server does not trust.
  printf 'extendedKeyUsage=clientAuth\nbasicConstraints=CA:FALSE\n' >"$tmp/cext"
  for who in client:ca stranger:other; do
    name=${who%%:*} ca=${who#*:}
    # shellcheck disable=SC2086
    { [ "$ca" = ca ] || openssl req -x509 $ec -keyout "$tmp/other.key" -out "$tmp/other.crt" -days 2 \
      -subj /CN=other-ca >/dev/null 2>&1; } &&
      openssl req $ec -keyout "$tmp/$name.key" -out "$tmp/$name.csr" -subj "/O=ci/CN=reassert-$name" >/dev/null 2>&1 &&
      openssl x509 -req -in "$tmp/$name.csr" -CA "$tmp/$ca.crt" -CAkey "$tmp/$ca.key" -CAcreateserial \
        -out "$tmp/$name.crt" -days 2 -extfile "$tmp/cext" >/dev/null 2>&1 ||
      fail "openssl could not make the $name certificate"
  done
  printf 'kube-token-%s\n' 3c5e >"$tmp/kube.token"
  serve_args="$serve_args --tls-cert $tmp/srv.crt --tls-key $tmp/srv.key --token-file $tmp/kube.token --client-ca $tmp/ca.crt"
  user_yaml="{token: kube-token-3c5e}"
  ca_line="    certificate-authority: $tmp/ca.crt"
fi

rm -f "$tmp/fifo"
mkfifo "$tmp/fifo"
# shellcheck disable=SC2086
"$bin" sim serve $serve_args >"$tmp/fifo" 2>"$tmp/serve.err" &
spid=$!
url=
read -r url <"$tmp/fifo" || true
case $mode:$url in
http:http://127.0.0.1:* | tls:https://127.0.0.1:*) ok ;;
*) fail "sim serve did not print its URL: '$url' $(head -c 300 "$tmp/serve.err")" ;;
esac

kubeconfig() { # kubeconfig FILE USER_YAML CA_LINE
  {
    echo "apiVersion: v1"
    echo "kind: Config"
    echo "clusters:"
    echo "- name: sim"
    echo "  cluster:"
    echo "    server: $url"
    [ -n "$3" ] && echo "$3"
    echo "users:"
    echo "- name: ci"
    echo "  user: $2"
    echo "contexts:"
    echo "- name: sim"
    echo "  context: {cluster: sim, user: ci}"
    echo "current-context: sim"
  } >"$1"
}
kubeconfig "$tmp/kubeconfig" "$user_yaml" "$ca_line"

# ---- reads ----------------------------------------------------------------
if k "get nodes -o json" 0 get nodes -o json; then
  if python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
names = sorted(i["metadata"]["name"] for i in d["items"])
assert d["kind"] == "List" or d["kind"] == "NodeList", d["kind"]
assert names == ["prod-control-plane-%d" % i for i in (1, 2, 3)] + ["prod-worker-%d" % i for i in (1, 2, 3)], names
' "$tmp/out" 2>"$tmp/py.err"; then ok; else fail "get nodes -o json: $(head -c 300 "$tmp/py.err")"; fi
fi
k "get nodes" 0 get nodes && out_has out "prod-worker-3" "get nodes lists the workers"
k "get node -o jsonpath" 0 get node prod-control-plane-1 -o 'jsonpath={.metadata.labels.kubernetes\.io/hostname}' &&
  out_is "prod-control-plane-1" "a node's label by jsonpath"
k "get lease -o jsonpath" 0 get lease -n flux-system ghcr-auth-refresh -o 'jsonpath={.metadata.name}:{.spec.holderIdentity}' &&
  out_is "ghcr-auth-refresh:" "the Lease exists with an empty holder"
k "get secret -n NS NAME" 0 get secret -n kyverno ghcr-auth && out_has out "ghcr-auth" "get secret shows the Secret"
if grep -qF "ghp-" "$tmp/out"; then fail "get secret's columns show a credential"; else ok; fi
k "get a missing secret" nonzero get secret -n kyverno no-such-secret &&
  out_has err 'secrets "no-such-secret" not found' "a missing Secret is NotFound"
k "get externalsecret" 0 get externalsecret -n kyverno ghcr-auth -o 'jsonpath={.kind}' &&
  out_is "ExternalSecret" "ExternalSecrets are served"
k "get kustomization" 0 get kustomization -n flux-system flux-system -o 'jsonpath={.spec.suspend}' &&
  out_is "false" "Kustomizations are served"
k "get deployments" 0 get deploy -n flux-system kustomize-controller -o name &&
  out_is "deployment.apps/kustomize-controller" "Deployments are served"
k "get all" 0 get all -n flux-system -o name
if grep -qx 'deployment.apps/kustomize-controller' "$tmp/out" && grep -q '^pod/kustomize-controller-' "$tmp/out" &&
  ! grep -q '^secret/\|^lease' "$tmp/out"; then ok; else
  fail "get all shows the workloads (category all), no Secret or Lease: $(head -c 300 "$tmp/out")"; fi
k "discovery verbs" 0 get --raw /api/v1
if python3 -c '
import json, sys
r = {x["name"]: x for x in json.load(open(sys.argv[1]))["resources"]}
assert {"watch", "update"} <= set(r["secrets"]["verbs"]), r["secrets"]["verbs"]
' "$tmp/out" 2>"$tmp/py.err"; then ok; else fail "discovery lists watch and update: $(head -c 300 "$tmp/py.err")"; fi
k "label selector" 0 get nodes -l node-role.kubernetes.io/control-plane -o name &&
  out_is "$(printf 'node/prod-control-plane-1\nnode/prod-control-plane-2\nnode/prod-control-plane-3')" \
    "a label selector picks the control planes"
k "field selector" 0 get pods -A --field-selector spec.nodeName=prod-worker-2 -o 'jsonpath={range .items[*]}{.spec.nodeName}{"\n"}{end}'
if [ -s "$tmp/out" ] && [ "$(sort -u "$tmp/out")" = prod-worker-2 ]; then ok; else
  fail "a field selector picks that node's pods only: $(head -c 300 "$tmp/out")"; fi

# ---- drain --dry-run=server: the reads drain makes, nothing written -------
writes0=$(counter writes)
k "drain --dry-run=server" 0 drain prod-worker-1 --dry-run=server --ignore-daemonsets --force &&
  out_has out "drained (server dry run)" "drain reports a server dry run"
k "after the dry-run drain" 0 get node prod-worker-1 -o 'jsonpath={.spec.unschedulable}' &&
  out_is "" "a dry-run drain leaves the node schedulable"
k "pods after the dry-run drain" 0 get pods -A --field-selector spec.nodeName=prod-worker-1 -o name
if [ "$(wc -l <"$tmp/out")" -ge 1 ]; then ok; else fail "a dry-run drain evicted nothing for real"; fi
if [ "$(counter writes)" = "$writes0" ]; then ok; else
  fail "a dry-run drain counted writes in the world ($writes0 -> $(counter writes))"; fi

# ---- writes -----------------------------------------------------------------
k "rv before" 0 get node prod-worker-1 -o 'jsonpath={.metadata.resourceVersion}'
rv0=$(cat "$tmp/out")
k "a JSON patch whose test op fails" nonzero patch node prod-worker-1 --type=json \
  -p '[{"op":"test","path":"/metadata/name","value":"someone-else"}]' &&
  out_has err "invalid" "kubectl reports the 422 as an invalid request"
k "rv after the failed patch" 0 get node prod-worker-1 -o 'jsonpath={.metadata.resourceVersion}' &&
  out_is "$rv0" "a failed JSON patch changes nothing"
k "a JSON patch that applies" 0 patch node prod-worker-1 --type=json \
  -p '[{"op":"test","path":"/metadata/name","value":"prod-worker-1"},{"op":"add","path":"/metadata/labels/serve-json","value":"1"}]'
writes0=$(counter writes)
k "annotate" 0 annotate node prod-worker-1 example.com/owner=serve-check &&
  out_has out "annotated" "kubectl annotate reports the change"
if [ "$(counter writes)" -eq $((writes0 + 1)) ]; then ok; else
  fail "annotate is one counted write ($writes0 -> $(counter writes))"; fi
k "annotation read back" 0 get node prod-worker-1 -o 'jsonpath={.metadata.annotations.example\.com/owner}' &&
  out_is "serve-check" "the annotation is stored"
k "annotate without --overwrite" nonzero annotate node prod-worker-1 example.com/owner=other
k "annotate --overwrite" 0 annotate --overwrite node prod-worker-1 example.com/owner=other
k "merge patch on metadata" 0 patch node prod-worker-1 --type=merge -p '{"metadata":{"labels":{"serve-merge":"m"}}}'
k "strategic merge patch on metadata" 0 patch node prod-worker-1 -p '{"metadata":{"annotations":{"example.com/smp":"s"}}}'
k "both patches read back" 0 get node prod-worker-1 -o \
  'jsonpath={.metadata.labels.serve-merge}/{.metadata.labels.serve-json}/{.metadata.annotations.example\.com/smp}/{.metadata.annotations.example\.com/owner}' &&
  out_is "m/1/s/other" "merge and strategic merge patches keep the other metadata"
k "labels by selector" 0 get nodes -l serve-merge=m,serve-json=1 -o name && out_is "node/prod-worker-1" "the patched labels select"
k "remove a label" 0 label node prod-worker-1 serve-merge-
k "the label is gone" 0 get nodes -l serve-merge -o name && out_is "" "label removal"
printf '%s\n' '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"serve-kubectl","namespace":"default"},"data":{"a":"b"}}' >"$tmp/cm.json"
k "create -f" 0 create --validate=false -f "$tmp/cm.json"
k "create -f again" nonzero create --validate=false -f "$tmp/cm.json" && out_has err "AlreadyExists" "a second create is 409 AlreadyExists"
k "delete -f" 0 delete -f "$tmp/cm.json"
k "get after delete" nonzero get configmap -n default serve-kubectl && out_has err "not found" "a deleted object is gone"

# ---- typed clients: protobuf bodies (kubectl's create <kind>, auth) --------
k "create secret generic (protobuf)" 0 create secret generic serve-pb -n default \
  --from-literal=user=admin --from-literal=pw=pb-secret-41 && out_has out "secret/serve-pb created" "create secret generic"
k "the created Secret" 0 get secret serve-pb -n default -o 'jsonpath={.type}/{.data.user}/{.metadata.namespace}' &&
  out_is "Opaque/YWRtaW4=/default" "create secret generic stores the data, defaults the type to Opaque"
k "create secret generic again" nonzero create secret generic serve-pb -n default --from-literal=a=b &&
  out_has err "already exists" "a second create secret is 409 AlreadyExists"
k "create configmap (protobuf)" 0 create configmap serve-pb -n default --from-literal=a=b
k "the created ConfigMap" 0 get configmap serve-pb -n default -o 'jsonpath={.data.a}' && out_is "b" "create configmap"
k "create namespace (protobuf)" 0 create namespace serve-pb-ns
k "the namespace is Active" 0 get namespace serve-pb-ns -o 'jsonpath={.status.phase}' && out_is "Active" "a Namespace's phase"
k "delete the protobuf-made objects" 0 delete secret serve-pb -n default
k "auth can-i" 0 auth can-i create secrets -n default && out_is "yes" "auth can-i answers from the review"
k "auth whoami" 0 auth whoami -o 'jsonpath={.status.userInfo.username}'
if [ "$mode" = tls ]; then out_is "reassert-sim-token" "whoami names the token's user"; else out_is "reassert-sim-anyone" "whoami without auth"; fi

# ---- authentication (HTTPS only: kubectl sends tokens only there) ----------
if [ "$mode" = tls ]; then
  kubeconfig "$tmp/kubeconfig" "{token: not-the-token}" "$ca_line"
  k "a wrong bearer token" nonzero get nodes && out_has err "Unauthorized" "a wrong token is 401 Unauthorized"
  # (no token at all: kubectl would prompt for a password; check_serve.sh
  # covers the 401 without one)
  # A client certificate the --client-ca signs is an identity (no token).
  kubeconfig "$tmp/kubeconfig" "{client-certificate: $tmp/client.crt, client-key: $tmp/client.key}" "$ca_line"
  k "a client certificate alone" 0 get nodes -o name && out_has out "node/prod-worker-1" "a client certificate authenticates"
  k "whoami with a client certificate" 0 auth whoami -o 'jsonpath={.status.userInfo.username}' &&
    out_is "reassert-client" "the certificate's CN is the user"
  k "a write with a client certificate" 0 annotate --overwrite node prod-worker-1 example.com/by=cert
  kubeconfig "$tmp/kubeconfig" "{client-certificate: $tmp/stranger.crt, client-key: $tmp/stranger.key}" "$ca_line"
  k "a client certificate from another CA" nonzero get nodes && out_has err "Unauthorized" "an untrusted client certificate is 401"
  kubeconfig "$tmp/kubeconfig" "$user_yaml" ""
  k "an unknown CA" nonzero get nodes && out_has err "certificate" "a server certificate from an unknown CA is refused"
fi

kill -s TERM "$spid"
wait "$spid"
code=$?
spid=
if [ "$code" -eq 0 ]; then ok; else fail "sim serve's SIGTERM exit: $code: $(head -c 300 "$tmp/serve.err")"; fi
if grep -qF "kube-token-3c5e" "$tmp/serve.err"; then fail "the server's stderr shows the token"; else ok; fi
# A client that broke off its TLS handshake (the unknown-CA case above) is
# counted and said once at stop, never a stray library line per connection.
if grep -q "handshake message\|^Error\|libmicrohttpd" "$tmp/serve.err"; then
  fail "TLS noise on the server's stderr: $(head -c 300 "$tmp/serve.err")"
else ok; fi
if [ "$mode" = tls ]; then
  grep -q "reassert sim serve: [0-9]* TLS handshakes failed" "$tmp/serve.err" && ok ||
    fail "the failed handshakes are not said at stop: $(head -c 300 "$tmp/serve.err")"
fi

echo "kubectl ($mode): $passes passed, $fails failed"
[ "$fails" -eq 0 ]
