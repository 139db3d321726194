#!/bin/sh
# Finding F13 (low): kubeconfig handling that differs from kubectl / from the
# README's exit-code rule. Usage: sh f13-kubeconfig-vs-kubectl.sh path/to/reassert
set -u
BIN=${1:-build/reassert}
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
T=$(mktemp -d); trap 'kill $P 2>/dev/null; rm -rf "$T"' EXIT; cd "$T"
printf 'name: f13\nseed: 1\ncluster: {preset: prod, credential: current}\ndesired: current\nruns:\n  - name: r\n' > w.yaml
"$BIN" sim init --scenario w.yaml --db w.db >/dev/null
openssl req -x509 -newkey rsa:2048 -nodes -keyout k -out c -days 1 -subj /CN=x -addext subjectAltName=IP:127.0.0.1 >/dev/null 2>&1
"$BIN" sim serve --db w.db --listen 127.0.0.1:0 --tls-cert c --tls-key k >out 2>err & P=$!
sleep 1; U=$(head -n 1 out); CAD=$(base64 < c | tr -d '\n')
kc() { printf 'apiVersion: v1\nkind: Config\nclusters:\n- name: s\n  cluster: {server: %s, %s}\nusers:\n- name: u\n  user: {token: t}\ncontexts:\n- name: c\n  context: {cluster: s, user: u}\ncurrent-context: c\n' "$U" "$2" > "$1"; }
kc both.yaml "insecure-skip-tls-verify: true, certificate-authority-data: $CAD"
"$BIN" run --kubeconfig both.yaml --fences >/dev/null 2>&1; echo "insecure + CA data: exit $? (kubectl refuses: 'specifying a root certificates file with the insecure flag is not allowed')"
kc cafile.yaml "certificate-authority: /nonexistent/ca.crt"
"$BIN" run --kubeconfig cafile.yaml --fences 2>&1 | head -n 1; "$BIN" run --kubeconfig cafile.yaml --fences >/dev/null 2>&1; echo "missing certificate-authority file: exit $? (a missing tokenFile is 65)"
kc notpem.yaml "certificate-authority-data: $(echo not-a-pem | base64)"
"$BIN" run --kubeconfig notpem.yaml --fences >/dev/null 2>&1; echo "CA data that is not PEM: exit $? (CA data that is not base64 is 65)"
