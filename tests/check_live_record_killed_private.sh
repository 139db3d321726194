#!/bin/sh
# Hazard: none in H1–H176 — a cassette holds every call of a run (redacted,
# but the shape of the cluster and its fingerprints), so `run --record FILE`
# creates FILE mode 0600; a run killed mid-way (a cancelled deploy job, the
# case the write-ahead log is kept for) leaves FILE-wal and FILE-shm beside
# it, and they hold the same calls. Under umask 022 every file of the
# cassette must still be 0600 (SQLite gives its side files the mode of the
# database file, so the guard is creating the cassette 0600 first).
# Args: reassert binary, source dir. Starts `sim serve` (ctest label live).
set -u
BIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
SRC=$(cd "$2" && pwd)
T=$(mktemp -d)
SERVE_PID=
RUN_PID=
cleanup() {
  [ -n "$RUN_PID" ] && kill -9 "$RUN_PID" 2>/dev/null
  [ -n "$SERVE_PID" ] && kill "$SERVE_PID" 2>/dev/null && wait "$SERVE_PID" 2>/dev/null
  rm -rf "$T"
}
trap cleanup EXIT
. "$SRC/tests/lib_serve.sh"
cd "$T" || exit 1
umask 022
cat >s.yaml <<'Y'
# Hazard: none (the world of a killed recording)
name: killed-record
cluster: {preset: prod, credential: previous, workers: 1, control-planes: 1}
desired: current
catalogue:
  current: {username: mode-bot, password: mode-pass-9x}
runs: [{name: r}]
Y
"$BIN" sim init --scenario s.yaml --db w.db >/dev/null || { echo "FAIL: sim init"; exit 1; }
# over TLS, as against a cluster (no token goes over plain http)
openssl req -x509 -newkey rsa:2048 -nodes -keyout tls.key -out tls.pem -days 2 \
  -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 >/dev/null 2>&1 || { echo "FAIL: openssl"; exit 1; }
printf '{}\n' >talosconfig
serve_start "$BIN" url serve.err --db w.db --tls-cert tls.pem --tls-key tls.key || exit 1
printf 'apiVersion: v1\nkind: Config\nclusters: [{name: s, cluster: {server: "%s", certificate-authority: %s/tls.pem}}]\nusers: [{name: u, user: {token: mode-bearer-token-x}}]\ncontexts: [{name: c, context: {cluster: s, user: u}}]\ncurrent-context: c\n' "$SERVE_URL" "$T" >kc
printf '#!/bin/sh\necho %s\n' "'{\"auths\":{\"ghcr.io\":{\"username\":\"mode-bot\",\"password\":\"mode-pass-9x\"}}}'" >dec
chmod +x dec
printf 'stringData:\n  ghcr_dockerconfigjson: ENC[AES256_GCM,data:x,iv:1,tag:x,type:str]\n' >sec
# Without --test-facade-clock the repair waits its rollout budget in wall
# time (README), so the run is reliably still going when it is killed.
BAO_ADDR=$SERVE_URL BAO_CACERT=$T/tls.pem BAO_TOKEN=mode-bao-token-3f1e REASSERT_REGISTRY_URL=$SERVE_URL \
  REASSERT_REGISTRY_CACERT=$T/tls.pem "$BIN" run --kubeconfig kc --secret-file sec \
  --decrypt-command "$T/dec {file}" --talosctl /bin/false --talosconfig talosconfig --record c.db >out 2>&1 &
RUN_PID=$!
i=0
while [ $i -lt 150 ] && ! grep -q 'waiting for every pre-restart pod' out 2>/dev/null; do
  sleep 0.1
  i=$((i + 1))
done
sleep 0.3
kill -9 $RUN_PID
wait $RUN_PID 2>/dev/null
RUN_PID=
status=0
[ -f c.db-wal ] || { echo "FAIL: the killed run left no c.db-wal (did it reach the rollout wait?): $(tail -n 3 out)"; status=1; }
open=$(find . -name 'c.db*' -perm /077)
[ -z "$open" ] || { echo "FAIL: cassette files readable beyond their owner under umask 022: $(ls -l $open)"; status=1; }
[ $status -eq 0 ] && echo "a killed recording's cassette, -wal and -shm are all 0600"
exit $status
