#!/bin/bash
# Finding L3: `run --record FILE` creates FILE mode 0600, but a run killed
# mid-way (the case the WAL design is for) leaves FILE-wal and FILE-shm
# mode 0644 (umask 022): the -wal holds every call the cassette holds.
B=$(cd "$(dirname "${1:-build/reassert}")" && pwd)/$(basename "${1:-build/reassert}")
d=$(mktemp -d); SP=; RP=
trap '[ -n "$RP" ] && kill -9 $RP; [ -n "$SP" ] && kill $SP; rm -rf "$d"' EXIT
cd "$d" || exit 2; umask 022
cat > s.yaml <<'Y'
# Hazard: none (finding reproducer)
name: l3
cluster: {preset: prod, credential: previous, workers: 1, control-planes: 1}
desired: current
catalogue:
  current: {username: l3-bot, password: l3-pass-9x}
runs: [{name: r}]
Y
"$B" sim init --scenario s.yaml --db w.db >/dev/null || exit 2
"$B" sim serve --db w.db > url 2>/dev/null & SP=$!
for _ in $(seq 50); do [ -s url ] && break; sleep 0.1; done
U=$(head -1 url)
printf 'apiVersion: v1\nkind: Config\nclusters: [{name: s, cluster: {server: "%s"}}]\nusers: [{name: u, user: {token: l3-bearer-token-x}}]\ncontexts: [{name: c, context: {cluster: s, user: u}}]\ncurrent-context: c\n' "$U" > kc
printf '#!/bin/sh\necho %s\n' "'{\"auths\":{\"ghcr.io\":{\"username\":\"l3-bot\",\"password\":\"l3-pass-9x\",\"auth\":\"bDMtYm90OmwzLXBhc3MtOXg=\"}}}'" > dec; chmod +x dec
printf 'stringData:\n  ghcr_dockerconfigjson: ENC[AES256_GCM,data:x,iv:1,tag:x,type:str]\n' > sec
BAO_ADDR=$U REASSERT_REGISTRY_URL=$U "$B" run --kubeconfig kc --secret-file sec \
  --decrypt-command "$d/dec {file}" --talosctl /bin/false --record c.db > out 2>&1 & RP=$!
for _ in $(seq 100); do grep -q "waiting for every pre-restart" out && break; sleep 0.1; done; sleep 0.3; kill -9 $RP; wait $RP 2>/dev/null; RP=
cat out | tail -2; ls -l c.db* | awk '{print $1, $NF}'
# Expected: every file of the cassette 0600
[ -z "$(find . -name 'c.db*' -perm /077)" ]
