#!/bin/sh
# Finding F7 (medium): `reassert sim serve` cuts a URL path at a
# percent-encoded NUL. Usage: sh f7-serve-nul-path.sh path/to/reassert
set -u
BIN=${1:-build/reassert}
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
T=$(mktemp -d); trap 'kill $P 2>/dev/null; rm -rf "$T"' EXIT; cd "$T"
printf 'name: f7\nseed: 1\ncluster: {preset: prod, credential: current}\ndesired: current\nruns:\n  - name: r\n' > w.yaml
"$BIN" sim init --scenario w.yaml --db w.db >/dev/null
"$BIN" sim serve --db w.db --listen 127.0.0.1:0 >out 2>err & P=$!
sleep 1; U=$(head -n 1 out)
echo "GET  secrets/variables-base%00junk  -> $(curl -s -o /dev/null -w '%{http_code}' "$U/api/v1/namespaces/flux-system/secrets/variables-base%00junk")  (want 404/400; 200 = served variables-base)"
echo "GET  namespaces/flux-system%00x/secrets/variables-base -> kind $(curl -s "$U/api/v1/namespaces/flux-system%00x/secrets/variables-base" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("kind"))')  (want a 404 Status; Namespace = path cut at the NUL)"
echo "PATCH secrets/variables-base%00junk -> $(curl -s -o /dev/null -w '%{http_code}' -X PATCH -H 'Content-Type: application/merge-patch+json' --data '{"metadata":{"labels":{"f7":"applied"}}}' "$U/api/v1/namespaces/flux-system/secrets/variables-base%00junk")"
echo "  variables-base label f7 now: $(curl -s "$U/api/v1/namespaces/flux-system/secrets/variables-base" | python3 -c 'import json,sys; print(json.load(sys.stdin)["metadata"].get("labels",{}).get("f7"))')  (want None)"
echo "GET  OpenBao .../ghcr/auth%00x -> $(curl -s -o /dev/null -w '%{http_code}' "$U/v1/secret/data/infrastructure/ghcr/auth%00x")  (want 404)"
