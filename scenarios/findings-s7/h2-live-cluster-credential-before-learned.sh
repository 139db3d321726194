#!/bin/bash
# Finding H2: a live recording redacts the cluster's own credential (here
# the catalogue's `previous`, which variables-base holds) only in rows
# written AFTER the run read variables-base: the same password inside a
# Lease annotation read earlier (seq 17) stays in the cassette verbatim,
# while the identical text in later rows is fp:<hex>. An eager run refused
# on a held Lease never reads variables-base, so its cassette keeps it too.
B=$(cd "$(dirname "${1:-build/reassert}")" && pwd)/$(basename "${1:-build/reassert}")
d=$(mktemp -d); SP=
trap '[ -n "$SP" ] && kill $SP; rm -rf "$d"' EXIT
cd "$d" || exit 2
cat > s.yaml <<'Y'
# Hazard: none (finding reproducer)
name: m6
cluster: {preset: prod, credential: previous, workers: 1, control-planes: 1}
desired: current
catalogue:
  previous: {username: p-bot, password: Prev-Pw-123xyz}
  current: {username: c-bot, password: Curr-Pw-999uvw}
runs:
  - name: r
    before:
      - kube.patch: {ref: Lease/flux-system/ghcr-auth-refresh, merge-patch: {metadata: {annotations: {a/p: 'note Prev-Pw-123xyz'}}}}
Y
"$B" sim init --scenario s.yaml --db w.db --run r > /dev/null || exit 2
"$B" sim serve --db w.db > url 2>/dev/null & SP=$!
for _ in $(seq 50); do [ -s url ] && break; sleep 0.1; done
U=$(head -1 url)
printf 'apiVersion: v1\nkind: Config\nclusters: [{name: s, cluster: {server: "%s"}}]\nusers: [{name: u, user: {token: m6-bearer-token-x}}]\ncontexts: [{name: c, context: {cluster: s, user: u}}]\ncurrent-context: c\n' "$U" > kc
printf '#!/bin/sh\necho %s\n' "'{\"auths\":{\"ghcr.io\":{\"username\":\"c-bot\",\"password\":\"Curr-Pw-999uvw\"}}}'" > dec; chmod +x dec
printf 'stringData:\n  ghcr_dockerconfigjson: ENC[AES256_GCM,data:x,iv:1,tag:x,type:str]\n' > sec
BAO_ADDR=$U REASSERT_REGISTRY_URL=$U timeout 6 "$B" run --kubeconfig kc --secret-file sec \
  --decrypt-command "$d/dec {file}" --talosctl /bin/false --record c.db > out 2>&1
raw=$(sqlite3 "file:c.db?mode=ro" "select group_concat(seq) from calls where response like '%Prev-Pw-123xyz%'")
fp=$(sqlite3 "file:c.db?mode=ro" "select count(*) from calls where response like '%note fp:%'")
echo "rows holding the cluster's password verbatim: seq ${raw:-none}; rows with it as fp: $fp"
# Expected: no row holds it verbatim
[ -z "$raw" ]
