#!/bin/sh
# Finding F16 (medium): three file inputs wait forever on a FIFO, while
# --config, --kubeconfig, --secret-file and every scenario input refuse a
# non-regular file (exit 65, "it is not a regular file"). COMMON/DESIGN §5.1:
# bad input is never a hang. Each command below is cut by `timeout 10`
# (exit 124 = it hung). Usage: sh f16-fifo-inputs-hang.sh path/to/reassert
set -u
BIN=${1:-build/reassert}
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT; cd "$T"
mkfifo f
printf 'name: f16\nseed: 1\ncluster: {preset: prod, credential: current}\ndesired: current\nruns:\n  - name: r\n' > w.yaml
"$BIN" sim init --scenario w.yaml --db w.db >/dev/null
printf 'stringData:\n  ghcr_dockerconfigjson: ENC[AES256_GCM,data:eA==,type:str]\n' > s.yaml
printf '#!/bin/sh\necho "{\\"auths\\":{\\"ghcr.io\\":{\\"username\\":\\"u\\",\\"password\\":\\"p\\"}}}"\n' > d.sh; chmod +x d.sh
timeout 10 "$BIN" run --transport sim:w.db --desired current --reuse-runtime-proof "$T/f" >/dev/null 2>&1
echo "run --reuse-runtime-proof FIFO: exit $? (want 65)"
printf 'apiVersion: v1\nkind: Config\nclusters:\n- name: s\n  cluster: {server: "http://127.0.0.1:1"}\nusers:\n- name: u\n  user: {token: t}\ncontexts:\n- name: c\n  context: {cluster: s, user: u}\ncurrent-context: c\n' > kc.yaml
BAO_ADDR=http://127.0.0.1:1 timeout 10 "$BIN" run --kubeconfig kc.yaml --secret-file s.yaml --decrypt-command ./d.sh --openbao-token-file f >/dev/null 2>&1
echo "run --openbao-token-file FIFO: exit $? (want 65)"
timeout 10 "$BIN" sim serve --db w.db --token-file f >/dev/null 2>&1
echo "sim serve --token-file FIFO: exit $? (want 65)"
