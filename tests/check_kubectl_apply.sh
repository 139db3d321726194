#!/bin/sh
# `kubectl apply` against `sim serve`, client-side and server-side, as
# against an API server (issue 30):
#   - client-side apply (kubectl reads /openapi/v3, validates on the server
#     with fieldValidation, and patches with the last-applied annotation):
#     create, configure, unchanged, for a ConfigMap, a Secret (stringData),
#     a Lease and a Kustomization (a custom kind: a JSON merge patch);
#   - server-side apply (application/apply-patch+yaml) for the kinds the
#     transaction writes — Secret, Node metadata, Kustomization, Lease,
#     Deployment, ExternalSecret, PushSecret: created or merged, read back,
#     managedFields naming the manager and its fields; a field another
#     manager applied with another value is a 409 conflict naming both
#     (guard: the conflict check), --force-conflicts takes it over; a field
#     the manager no longer applies is removed (guard: the drop), one
#     another manager still owns is kept; --dry-run=server changes nothing;
#   - `kubectl replace -f` (PUT): the body stored whole, a stale
#     resourceVersion a 409 (guard: the precondition on the patch), none an
#     unconditional replace, a missing object 404, a Kustomization's status
#     kept (guard: status taken from the stored object).
set -u
bin=$1
src=$2
. "$src/tests/lib_serve.sh"
tmp=$(mktemp -d)
SERVE_PID=
cleanup() {
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
cat >"$tmp/kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters:
- name: sim
  cluster: {server: "$SERVE_URL"}
users:
- name: ci
  user: {}
contexts:
- name: sim
  context: {cluster: sim, user: ci}
current-context: sim
KC
# k DESCRIPTION WANT_EXIT ARGS...
k() {
  what=$1 want=$2
  shift 2
  HOME=$tmp KUBECONFIG=$tmp/kubeconfig kubectl --request-timeout=60s "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
  got=$?
  case $want in
  nonzero) [ "$got" -ne 0 ] ;;
  *) [ "$got" -eq "$want" ] ;;
  esac && { ok; return 0; }
  fail "$what: kubectl $*: exit $got (want $want): $(head -c 400 "$tmp/out" "$tmp/err")"
  return 1
}
out_is() { if [ "$(cat "$tmp/out")" = "$1" ]; then ok; else fail "$2: got '$(head -c 300 "$tmp/out")', want '$1'"; fi; }
out_has() { if grep -qF -- "$2" "$tmp/$1"; then ok; else fail "$3: $1 lacks '$2': $(head -c 300 "$tmp/$1")"; fi; }
m() { printf '%s\n' "$@" >"$tmp/m.yaml"; }

# ---- client-side apply ---------------------------------------------------------
m "apiVersion: v1" "kind: ConfigMap" "metadata: {name: csa, namespace: default}" "data: {a: '1', b: '2'}"
k "apply creates" 0 apply -f "$tmp/m.yaml" && out_is "configmap/csa created" "apply creates"
m "apiVersion: v1" "kind: ConfigMap" "metadata: {name: csa, namespace: default}" "data: {a: '3'}"
k "apply configures" 0 apply -f "$tmp/m.yaml" && out_is "configmap/csa configured" "apply configures"
k "the applied data" 0 get cm csa -n default -o 'jsonpath={.data}' && out_is '{"a":"3"}' "apply removes what it no longer names"
k "apply again" 0 apply -f "$tmp/m.yaml" && out_is "configmap/csa unchanged" "an apply that changes nothing"
k "last-applied" 0 get cm csa -n default -o 'jsonpath={.metadata.annotations.kubectl\.kubernetes\.io/last-applied-configuration}' &&
  out_has out '"a":"3"' "the last-applied annotation"
m "apiVersion: v1" "kind: Secret" "metadata: {name: csa-secret, namespace: default}" "stringData: {user: u1}"
k "apply a Secret" 0 apply -f "$tmp/m.yaml"
k "the Secret's data" 0 get secret csa-secret -n default -o 'jsonpath={.data.user}/{.type}' && out_is "dTE=/Opaque" "a Secret's stringData applied"
m "apiVersion: coordination.k8s.io/v1" "kind: Lease" "metadata: {name: csa-lease, namespace: flux-system}" "spec: {holderIdentity: me, leaseDurationSeconds: 30}"
k "apply a Lease" 0 apply -f "$tmp/m.yaml"
m "apiVersion: coordination.k8s.io/v1" "kind: Lease" "metadata: {name: csa-lease, namespace: flux-system}" "spec: {holderIdentity: you, leaseDurationSeconds: 30}"
k "apply a Lease again" 0 apply -f "$tmp/m.yaml" && out_is "lease.coordination.k8s.io/csa-lease configured" "a Lease configured"
m "apiVersion: kustomize.toolkit.fluxcd.io/v1" "kind: Kustomization" "metadata: {name: csa-ks, namespace: flux-system}" "spec: {interval: 10m, suspend: false, path: ./a}"
k "apply a Kustomization" 0 apply -f "$tmp/m.yaml"
m "apiVersion: kustomize.toolkit.fluxcd.io/v1" "kind: Kustomization" "metadata: {name: csa-ks, namespace: flux-system}" "spec: {interval: 10m, suspend: true}"
k "apply a Kustomization again" 0 apply -f "$tmp/m.yaml"
k "the Kustomization" 0 get ks csa-ks -n flux-system -o 'jsonpath={.spec.suspend}/{.spec.path}' && out_is "true/" "a custom kind's apply (merge patch) removes a dropped field"

# ---- server-side apply ------------------------------------------------------------
ssa() { k "$1" 0 apply --server-side --field-manager="${2:-ci}" -f "$tmp/m.yaml"; }
m "apiVersion: v1" "kind: Secret" "metadata: {name: ssa-secret, namespace: default, labels: {a: '1', b: '2'}}" "stringData: {k: v}"
ssa "server-side apply creates a Secret" && out_is "secret/ssa-secret serverside-applied" "SSA reports"
k "the Secret" 0 get secret ssa-secret -n default -o 'jsonpath={.data.k}/{.metadata.labels.a}{.metadata.labels.b}' && out_is "dg==/12" "SSA created the Secret"
k "managedFields" 0 get secret ssa-secret -n default --show-managed-fields -o 'jsonpath={.metadata.managedFields[0].manager}/{.metadata.managedFields[0].operation}/{.metadata.managedFields[0].fieldsV1.f:metadata.f:labels}' &&
  out_is 'ci/Apply/{"f:a":{},"f:b":{}}' "managedFields name the manager and its fields"
m "apiVersion: v1" "kind: Secret" "metadata: {name: ssa-secret, namespace: default, labels: {a: '1'}}" "stringData: {k: v}"
ssa "SSA drops a label"
k "dropped label" 0 get secret ssa-secret -n default -o 'jsonpath={.metadata.labels}' && out_is '{"a":"1"}' "a field no longer applied is removed"
m "apiVersion: v1" "kind: Secret" "metadata: {name: ssa-secret, namespace: default, labels: {a: 'other'}}"
k "a conflicting apply" nonzero apply --server-side --field-manager=other -f "$tmp/m.yaml" &&
  out_has err 'conflict with "ci": .metadata.labels.a' "a conflict names the manager and the field"
k "the label kept" 0 get secret ssa-secret -n default -o 'jsonpath={.metadata.labels.a}' && out_is "1" "a conflicting apply changes nothing"
k "force" 0 apply --server-side --field-manager=other --force-conflicts -f "$tmp/m.yaml"
k "forced label" 0 get secret ssa-secret -n default -o 'jsonpath={.metadata.labels.a}' && out_is "other" "--force-conflicts takes the field"
m "apiVersion: v1" "kind: Secret" "metadata: {name: ssa-secret, namespace: default, labels: {a: 'other', c: '3'}}"
ssa "a second manager adds its own field" other
m "apiVersion: v1" "kind: Secret" "metadata: {name: ssa-secret, namespace: default}" "stringData: {k: v}"
ssa "the first manager drops the label it lost"
k "shared fields" 0 get secret ssa-secret -n default -o 'jsonpath={.metadata.labels}' && out_is '{"a":"other","c":"3"}' \
  "a field another manager owns is kept"
k "a dry run" 0 apply --server-side --dry-run=server -f "$tmp/m.yaml"

m "apiVersion: v1" "kind: Node" "metadata: {name: prod-worker-2, labels: {example.com/ssa: 'yes'}, annotations: {example.com/by: ssa}}"
ssa "SSA on a Node's metadata"
k "the Node" 0 get node prod-worker-2 -o 'jsonpath={.metadata.labels.example\.com/ssa}/{.metadata.labels.kubernetes\.io/hostname}' &&
  out_is "yes/prod-worker-2" "SSA merges a Node's metadata, keeping the rest"
m "apiVersion: kustomize.toolkit.fluxcd.io/v1" "kind: Kustomization" "metadata: {name: flux-system, namespace: flux-system}" "spec: {suspend: true}"
ssa "SSA suspends a Kustomization"
k "the Kustomization" 0 get ks flux-system -n flux-system -o 'jsonpath={.spec.suspend}' && out_is "true" "SSA on a Kustomization"
m "apiVersion: coordination.k8s.io/v1" "kind: Lease" "metadata: {name: ghcr-auth-refresh, namespace: flux-system}" "spec: {holderIdentity: ssa-holder}"
ssa "SSA on the Lease"
k "the Lease" 0 get lease ghcr-auth-refresh -n flux-system -o 'jsonpath={.spec.holderIdentity}/{.spec.leaseDurationSeconds}' &&
  out_is "ssa-holder/120" "SSA on a Lease keeps the fields it does not name"
m "apiVersion: apps/v1" "kind: Deployment" "metadata: {name: kustomize-controller, namespace: flux-system}" \
  "spec: {template: {metadata: {annotations: {kubectl.kubernetes.io/restartedAt: '2026-01-01T00:00:00Z'}}}}"
ssa "SSA restarts the Deployment"
k "the Deployment" 0 get deploy kustomize-controller -n flux-system -o 'jsonpath={.spec.template.metadata.annotations.kubectl\.kubernetes\.io/restartedAt}' &&
  out_is "2026-01-01T00:00:00Z" "SSA on a Deployment's template"
m "apiVersion: external-secrets.io/v1beta1" "kind: ExternalSecret" "metadata: {name: ghcr-auth, namespace: kyverno, annotations: {force-sync: '1'}}"
ssa "SSA on an ExternalSecret"
m "apiVersion: external-secrets.io/v1alpha1" "kind: PushSecret" "metadata: {name: ssa-push, namespace: flux-system}" "spec: {refreshInterval: 1h}"
ssa "SSA creates a PushSecret"
k "the PushSecret" 0 get pushsecret ssa-push -n flux-system -o 'jsonpath={.spec.refreshInterval}' && out_is "1h" "SSA on a PushSecret"
# ---- kubectl replace (PUT) --------------------------------------------------------
m "apiVersion: v1" "kind: ConfigMap" "metadata: {name: rep, namespace: default}" "data: {a: '1', b: '2'}"
k "create for replace" 0 create -f "$tmp/m.yaml"
k "the object to replace" 0 get cm rep -n default -o yaml && sed 's/a: "1"/a: "9"/; /  b: "2"/d' "$tmp/out" >"$tmp/rep.yaml"
k "replace" 0 replace -f "$tmp/rep.yaml" && out_is "configmap/rep replaced" "kubectl replace"
k "the replaced data" 0 get cm rep -n default -o 'jsonpath={.data}' && out_is '{"a":"9"}' "replace stores the body whole (a field it drops is gone)"
k "a stale replace" nonzero replace -f "$tmp/rep.yaml" &&
  out_has err 'the object has been modified' "a replace with a stale resourceVersion is 409 Conflict"
grep -v 'resourceVersion:' "$tmp/rep.yaml" | sed 's/a: "9"/c: "3"/' >"$tmp/rep2.yaml"
k "replace without a resourceVersion" 0 replace -f "$tmp/rep2.yaml"
k "the unconditional replace" 0 get cm rep -n default -o 'jsonpath={.data}' && out_is '{"c":"3"}' "a replace without a resourceVersion is unconditional"
sed 's/name: rep$/name: rep-none/' "$tmp/rep2.yaml" >"$tmp/rep3.yaml"
k "replace of nothing" nonzero replace -f "$tmp/rep3.yaml" && out_has err 'NotFound' "a replace of an object that does not exist is 404"
k "the Kustomization for replace" 0 get ks flux-system -n flux-system -o json && cp "$tmp/out" "$tmp/ks.json"
k "its status" 0 get ks flux-system -n flux-system -o 'jsonpath={.status.lastAppliedRevision}' && cp "$tmp/out" "$tmp/ks.rev"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
d["metadata"].pop("resourceVersion", None)
d["metadata"].setdefault("labels", {})["example.com/replaced"] = "yes"
d["status"] = {"lastAppliedRevision": "from-the-body"}
json.dump(d, open(sys.argv[2], "w"))' "$tmp/ks.json" "$tmp/ks2.json" || fail "the Kustomization's JSON"
k "replace a Kustomization" 0 replace -f "$tmp/ks2.json"
k "the replaced Kustomization" 0 get ks flux-system -n flux-system -o 'jsonpath={.metadata.labels.example\.com/replaced}/{.status.lastAppliedRevision}' &&
  out_is "yes/$(cat "$tmp/ks.rev")" "a replace keeps the server's status"

m "apiVersion: v1" "kind: ConfigMap" "metadata: {name: wrong, namespace: default}"
HOME=$tmp KUBECONFIG=$tmp/kubeconfig kubectl get --raw /openapi/v3 >"$tmp/out" 2>&1 && ok || fail "get --raw /openapi/v3: $(cat "$tmp/out")"
out_has out '"apis/kustomize.toolkit.fluxcd.io/v1"' "the openapi v3 root lists each group/version"

kill -s TERM "$SERVE_PID"
wait "$SERVE_PID"
code=$?
SERVE_PID=
[ "$code" -eq 0 ] && ok || fail "sim serve's SIGTERM exit: $code: $(cat "$tmp/serve.err")"
echo "kubectl apply: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
