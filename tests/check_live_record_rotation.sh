#!/bin/sh
# Hazard: none — no entry in H1–H176 covers the recorder's secret list; the
# rule pinned is DESIGN §8 (a cassette holds no secret in any encoding).
# The live client replaces its bearer token mid-run — a kubeconfig
# tokenFile read again after a rotation (client-go does), an exec plugin's
# next credential — and the new token is a secret the recorder was not told
# of at open: it must learn it then, or a cassette of that run holds it in
# plaintext wherever cluster text carries it.
# The run: `run --transport live --record` against `sim serve` (which
# accepts both tokens), the kubeconfig's exec plugin answering the old
# token with an expiry one second away, then the new one. At the first
# Talos call a talosctl wrapper writes the new token into every Node's
# annotations and waits out that second, so the Node reads that follow
# carry the new token, sent by a client that has changed to it. The
# cassette and its -wal must hold neither token in any encoding (raw,
# base64 at each alignment), and the run must still succeed. (The
# tokenFile half: test_live_kube's test_token_file_rotated_mid_run proves
# the re-read token becomes the bearer this recorder now asks for.)
#
#   tests/check_live_record_rotation.sh BUILD/reassert SOURCE_ROOT
set -u
bin=$1
src=$2
tmp=$(mktemp -d)
spid=
cleanup() {
  [ -n "$spid" ] && kill "$spid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
fails=0
fail() {
  echo "FAIL: $1"
  fails=$((fails + 1))
}
for c in sqlite3 curl python3; do
  command -v $c >/dev/null || { echo "FAIL: $c is needed"; exit 1; }
done
OLD=kube-token-rot-old-5d2e
NEW=kube-token-rot-new-b81f

w=$tmp/world.db
"$bin" sim init --scenario "$src/scenarios/two-run-stage-reassert.yaml" --db "$w" >/dev/null ||
  fail "sim init"
"$bin" run --transport "sim:$w" --desired current >/dev/null || fail "the in-process rotation"
sqlite3 "$w" "select dockerconfigjson from catalogue where name='current'" >"$tmp/cred.json"
printf 'stringData:\n  ghcr_dockerconfigjson: "%s"\n' \
  "$(sqlite3 "$w" "select ciphertext from catalogue where name='current'")" >"$tmp/secret.enc.yaml"
printf '#!/bin/sh\nexec cat %s/cred.json\n' "$tmp" >"$tmp/decrypt.sh"
chmod 700 "$tmp/decrypt.sh"
printf '%s\n%s\n' "$OLD" "$NEW" >"$tmp/serve.tokens"
printf '%s\n' "$OLD" >"$tmp/stub.token"
# The exec plugin: the old token first (expiring in a second), then the new.
{
  echo '#!/bin/sh'
  echo "if mkdir '$tmp/exec-once' 2>/dev/null; then"
  echo "  exp=\$(date -u -d '+1 second' +%Y-%m-%dT%H:%M:%SZ)"
  echo "  printf '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":{\"token\":\"%s\",\"expirationTimestamp\":\"%s\"}}' '$OLD' \"\$exp\""
  echo "else"
  echo "  printf '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":{\"token\":\"%s\"}}' '$NEW'"
  echo "fi"
} >"$tmp/exec.sh"
chmod 700 "$tmp/exec.sh"
printf 'bao-token-rot-41c7\n' >"$tmp/bao.token"
printf 'transport.parallelism: 1\n' >"$tmp/config.yaml" # one talosctl at a time

# Over TLS (a self-signed certificate made here): no credential goes over
# plain http (tests/check_live_plain_http.sh).
(cd "$tmp" && openssl req -x509 -newkey rsa:2048 -nodes -keyout tls.key -out tls.pem -days 2 \
  -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 >/dev/null 2>&1) || fail "openssl"
ca64=$(base64 -w0 "$tmp/tls.pem")
mkfifo "$tmp/fifo"
"$bin" sim serve --db "$w" --listen 127.0.0.1:0 --token-file "$tmp/serve.tokens" \
  --openbao-token-file "$tmp/bao.token" --tls-cert "$tmp/tls.pem" --tls-key "$tmp/tls.key" \
  >"$tmp/fifo" 2>"$tmp/serve.err" &
spid=$!
read -r url <"$tmp/fifo" || true
[ -n "$url" ] || { echo "FAIL: sim serve did not start: $(cat "$tmp/serve.err")"; exit 1; }
nodes=$(sqlite3 "$w" "select name from objects where kind='Node'" 2>/dev/null)
[ -n "$nodes" ] || nodes=$(curl -s --cacert "$tmp/tls.pem" -H "Authorization: Bearer $OLD" "$url/api/v1/nodes" |
  python3 -c 'import json,sys; print("\n".join(i["metadata"]["name"] for i in json.load(sys.stdin)["items"]))')
[ -n "$nodes" ] || { echo "FAIL: no nodes"; exit 1; }

# The wrapper: once (mkdir is atomic), the new token into the Nodes and the
# old credential's second waited out; then the stub.
mkdir "$tmp/bin"
cp "$src/tests/talosctl" "$tmp/bin/talosctl.stub"
{
  echo '#!/bin/sh'
  echo "if mkdir '$tmp/rotated' 2>/dev/null; then"
  for n in $nodes; do
    echo "  curl -s -o /dev/null --cacert '$tmp/tls.pem' -X PATCH -H 'Authorization: Bearer $NEW' -H 'Content-Type: application/merge-patch+json' --data '{\"metadata\":{\"annotations\":{\"example.com/note\":\"$NEW\"}}}' '$url/api/v1/nodes/$n'"
  done
  echo "  sleep 2"
  echo "fi"
  echo "exec '$tmp/bin/talosctl.stub' \"\$@\""
} >"$tmp/bin/talosctl"
chmod 700 "$tmp/bin/talosctl"

printf 'apiVersion: v1\nkind: Config\ncurrent-context: sim\nclusters:\n- name: sim\n  cluster: {server: "%s", certificate-authority: %s/tls.pem}\nusers:\n- name: bot\n  user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: %s/exec.sh, interactiveMode: Never}}\ncontexts:\n- name: sim\n  context: {cluster: sim, user: bot}\n' "$url" "$tmp" "$tmp" >"$tmp/kubeconfig"
printf '{"context":"sim","contexts":{"sim":{"endpoints":["%s"],"ca":"%s","reassert-stub":{"token-file":"%s/stub.token"}}}}\n' \
  "$url" "$ca64" "$tmp" >"$tmp/talosconfig"

PATH="$tmp/bin:$PATH" HOME="$tmp" BAO_ADDR="$url" BAO_CACERT="$tmp/tls.pem" \
  BAO_TOKEN=bao-token-rot-41c7 REASSERT_REGISTRY_URL="$url" \
  REASSERT_REGISTRY_CACERT="$tmp/tls.pem" "$bin" run --transport live --kubeconfig "$tmp/kubeconfig" \
  --config "$tmp/config.yaml" --secret-file "$tmp/secret.enc.yaml" --decrypt-command "$tmp/decrypt.sh" \
  --talosconfig "$tmp/talosconfig" --test-facade-clock --output json \
  --record "$tmp/live.db" >"$tmp/run.json" 2>"$tmp/run.err" </dev/null
rc=$?
[ $rc -eq 0 ] || fail "the live run exited $rc: $(head -c 600 "$tmp/run.json") $(head -c 300 "$tmp/run.err")"
[ -d "$tmp/rotated" ] || fail "no Talos call: the Nodes never carried the new token (the test proves nothing)"
[ -d "$tmp/exec-once" ] || fail "the exec plugin never ran"
# Cluster text carrying the new token was read after the rotation: the
# cassette has Node answers after the first Talos call.
n=$(sqlite3 "$tmp/live.db" "select count(*) from calls where op like 'kube.%' and target like 'Node%' and seq > (select min(seq) from calls where op like 'talos.%')")
[ "${n:-0}" -ge 1 ] || fail "no Node read after the rotation: the test proves nothing"

: >"$tmp/forms"
for s in "$NEW" "$OLD"; do
  printf '%s\n' "$s" >>"$tmp/forms"
  for k in 0 1 2; do
    e=$({ head -c "$k" /dev/zero; printf '%s' "$s"; } | base64 -w0 | tr -d =)
    start=$((k == 0 ? 1 : k + 2))
    end=$((${#e} - 4))
    [ "$end" -ge $((start + 11)) ] && printf '%s\n' "$e" | cut -c"$start-$end" >>"$tmp/forms"
  done
done
for f in "$tmp"/live.db*; do
  [ -f "$f" ] || continue
  grep -qaF -f "$tmp/forms" "$f" && fail "a kube token (the rotated one?) is in $(basename "$f")"
done
grep -qaF -f "$tmp/forms" "$tmp/run.json" "$tmp/run.err" && fail "a kube token is in the run's output"

[ $fails -eq 0 ] && echo "live record: a token rotated mid-run is redacted like the first"
[ $fails -eq 0 ]
