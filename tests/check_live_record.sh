#!/bin/sh
# Recording is a shim (DESIGN.md §8), so `--record` works with the live
# transport as with the sim: `run --transport live --record` against
# `sim serve` (the no-drift Reassert after a rotation the sim made in
# process: kube, OpenBao, registry and the stub talosctl's auth reads), then `replay --strict` of its cassette — every call the
# recorded one, the replayed counters equal to the recorded ones and to
# the run's own `--output json` counters — and no password, kube token or
# OpenBao token in any byte of the cassette or its -wal (raw, base64 at each
# alignment, base64 of user:password), nor in the replay's output. The
# cassette keeps the run's arguments as a scenario may give them (no
# live-only flag, no local file), so `replay --to-scenario` of it writes a
# scenario that passes.
#
#   tests/check_live_record.sh BUILD/reassert SOURCE_ROOT
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

w=$tmp/world.db
"$bin" sim init --scenario "$src/scenarios/two-run-stage-reassert.yaml" --db "$w" >/dev/null ||
  fail "sim init"
"$bin" run --transport "sim:$w" --desired current >/dev/null || fail "the in-process rotation"
pass=$(sqlite3 "$w" "select password from catalogue where name='current'")
sqlite3 "$w" "select dockerconfigjson from catalogue where name='current'" >"$tmp/cred.json"
printf 'stringData:\n  ghcr_dockerconfigjson: "%s"\n' \
  "$(sqlite3 "$w" "select ciphertext from catalogue where name='current'")" >"$tmp/secret.enc.yaml"
printf '#!/bin/sh\nexec cat %s/cred.json\n' "$tmp" >"$tmp/decrypt.sh"
chmod 700 "$tmp/decrypt.sh"
printf 'kube-token-rec-7a1c\n' >"$tmp/kube.token"
printf 'bao-token-rec-93e0\n' >"$tmp/bao.token"
mkdir "$tmp/bin"
cp "$src/tests/talosctl" "$tmp/bin/talosctl"

# Over TLS (a self-signed certificate made here): no credential goes over
# plain http (tests/check_live_plain_http.sh).
(cd "$tmp" && openssl req -x509 -newkey rsa:2048 -nodes -keyout tls.key -out tls.pem -days 2 \
  -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 >/dev/null 2>&1) || fail "openssl"
ca64=$(base64 -w0 "$tmp/tls.pem")
mkfifo "$tmp/fifo"
"$bin" sim serve --db "$w" --listen 127.0.0.1:0 --token-file "$tmp/kube.token" \
  --openbao-token-file "$tmp/bao.token" --tls-cert "$tmp/tls.pem" --tls-key "$tmp/tls.key" \
  >"$tmp/fifo" 2>"$tmp/serve.err" &
spid=$!
read -r url <"$tmp/fifo" || true
[ -n "$url" ] || { echo "FAIL: sim serve did not start: $(cat "$tmp/serve.err")"; exit 1; }
cat >"$tmp/kubeconfig" <<EOF
apiVersion: v1
kind: Config
current-context: sim
clusters:
- name: sim
  cluster: {server: "$url", certificate-authority: $tmp/tls.pem}
users:
- name: bot
  user: {tokenFile: $tmp/kube.token}
contexts:
- name: sim
  context: {cluster: sim, user: bot}
EOF
# The stub talosctl reads the façade's bearer from its talosconfig's
# token-file (/talos/ needs it when sim serve has --token-file).
printf '{"context":"sim","contexts":{"sim":{"endpoints":["%s"],"ca":"%s","reassert-stub":{"record":"%s/talos.rec","token-file":"%s/kube.token"}}}}\n' \
  "$url" "$ca64" "$tmp" "$tmp" >"$tmp/talosconfig"

# --config is a file on the recording machine: its values go in meta config.
printf 'lease:\n  heartbeat-s: 30\n' >"$tmp/config.yaml"
PATH="$tmp/bin:$PATH" HOME="$tmp" BAO_ADDR="$url" BAO_CACERT="$tmp/tls.pem" \
  BAO_TOKEN=bao-token-rec-93e0 REASSERT_REGISTRY_URL="$url" \
  REASSERT_REGISTRY_CACERT="$tmp/tls.pem" "$bin" run --transport live --kubeconfig "$tmp/kubeconfig" \
  --secret-file "$tmp/secret.enc.yaml" --decrypt-command "$tmp/decrypt.sh" \
  --talosconfig "$tmp/talosconfig" --test-facade-clock --output json --strategy lazy \
  --openbao-token-file "$tmp/bao.token" --config "$tmp/config.yaml" \
  --record "$tmp/live.db" >"$tmp/run.json" 2>"$tmp/run.err" </dev/null
rc=$?
[ $rc -eq 0 ] || fail "the live run exited $rc: $(head -c 600 "$tmp/run.json") $(head -c 300 "$tmp/run.err")"
[ "$(sqlite3 "$tmp/live.db" "select value from meta where key='transport'")" = live ] ||
  fail "the cassette does not say it was recorded live"
n=$(sqlite3 "$tmp/live.db" "select count(*) from calls where op like 'talos.%'")
[ "$n" -ge 1 ] || fail "the cassette holds no Talos call"

"$bin" replay "$tmp/live.db" --strict --json >"$tmp/replay.json" 2>"$tmp/replay.err"
rc=$?
[ $rc -eq 0 ] || fail "strict replay of the live cassette exited $rc: $(head -c 600 "$tmp/replay.err")"
jq -e '.diverged_at == null and .recorded == .replayed' "$tmp/replay.json" >/dev/null ||
  fail "strict replay of the live cassette: counters differ"
jq -S .counters "$tmp/run.json" >"$tmp/c.run"
jq -S .recorded "$tmp/replay.json" >"$tmp/c.rec"
cmp -s "$tmp/c.run" "$tmp/c.rec" || fail "the cassette's counters are not the run's own"

# The run's arguments are kept as a scenario may give them (DESIGN §8 r2:
# --reseed and --to-scenario reuse them): the mode, strategy and output
# flags; every live-only flag and every file on the recording machine
# (kubeconfig, talosconfig, token and secret files, the decrypt command,
# --config, the cassette itself) goes with its value.
args=$(sqlite3 "$tmp/live.db" "select value from meta where key='args'")
[ "$args" = '["--output","json","--strategy","lazy"]' ] ||
  fail "the live cassette's args are not the run's portable ones: $args"
printf '%s' "$args" | grep -qF "$tmp" && fail "the live cassette's args name a local file: $args"
"$bin" replay "$tmp/live.db" --to-scenario "$tmp/inc.yaml" >"$tmp/ts.out" 2>&1 ||
  fail "replay --to-scenario of the live cassette exited $?: $(head -c 600 "$tmp/ts.out")"
grep -qF 'args: ["--output", "json", "--strategy", "lazy"]' "$tmp/inc.yaml" ||
  fail "the written scenario does not carry the recorded args: $(grep -n args "$tmp/inc.yaml")"
"$bin" sim "$tmp/inc.yaml" --strategy lazy >"$tmp/sim.out" 2>&1 ||
  fail "the scenario written from the live cassette does not pass: $(tail -5 "$tmp/sim.out")"
cat "$tmp/ts.out" "$tmp/inc.yaml" "$tmp/sim.out" >"$tmp/written.txt"

: >"$tmp/forms"
for s in "$pass" kube-token-rec-7a1c bao-token-rec-93e0; do
  printf '%s\n' "$s" >>"$tmp/forms"
  for k in 0 1 2; do
    e=$({ head -c "$k" /dev/zero; printf '%s' "$s"; } | base64 -w0 | tr -d =)
    start=$((k == 0 ? 1 : k + 2))
    end=$((${#e} - 4))
    [ "$end" -ge $((start + 11)) ] && printf '%s\n' "$e" | cut -c"$start-$end" >>"$tmp/forms"
  done
done
printf '%s' "deploy-bot:$pass" | base64 -w0 >>"$tmp/forms"
echo >>"$tmp/forms"
for f in "$tmp"/live.db* "$tmp/replay.json" "$tmp/replay.err" "$tmp/written.txt"; do
  [ -f "$f" ] || continue
  grep -qaF -f "$tmp/forms" "$f" && fail "a password or token is in $(basename "$f")"
done

# A live run learns the
# cluster's own credential only when it reads variables-base; the same
# password in cluster text read before (a Lease annotation) must not stay
# verbatim in the rows written before it was learnt, nor in the -wal of a
# run that is still going (the cassette's rows are redacted again, and the
# log truncated, when a call teaches the recorder a secret).
kill "$spid" 2>/dev/null
wait "$spid" 2>/dev/null
spid=
cat >"$tmp/h2.yaml" <<'EOF_H2'
name: h2
seed: 1
cluster: {preset: prod, credential: previous, workers: 1, control-planes: 1}
desired: current
catalogue:
  previous: {username: p-bot, password: Prev-Pw-123xyz}
  current: {username: c-bot, password: Curr-Pw-999uvw}
runs:
  - name: r
    before:
      - kube.patch: {ref: Lease/flux-system/ghcr-auth-refresh, merge-patch: {metadata: {annotations: {a/p: 'note Prev-Pw-123xyz'}}}}
EOF_H2
"$bin" sim init --scenario "$tmp/h2.yaml" --db "$tmp/h2.db" --run r >/dev/null || fail "sim init (H2)"
# shellcheck source=tests/lib_serve.sh
. "$src/tests/lib_serve.sh"
if serve_start "$bin" "$tmp/h2.url" "$tmp/h2.serve.err" --db "$tmp/h2.db" \
  --listen 127.0.0.1:0 --token-file "$tmp/kube.token" --tls-cert "$tmp/tls.pem" \
  --tls-key "$tmp/tls.key"; then
  spid=$SERVE_PID
  sed "s|$url|$SERVE_URL|" "$tmp/kubeconfig" >"$tmp/h2.kc"
  printf '#!/bin/sh\necho %s\n' \
    "'{\"auths\":{\"ghcr.io\":{\"username\":\"c-bot\",\"password\":\"Curr-Pw-999uvw\"}}}'" \
    >"$tmp/h2.dec"
  chmod 700 "$tmp/h2.dec"
  printf 'stringData:\n  ghcr_dockerconfigjson: ENC[AES256_GCM,data:x,iv:1,tag:x,type:str]\n' \
    >"$tmp/h2.sec"
  # The repair that follows waits on the façade's (wall) clock: killed
  # mid-way, as a cancelled deploy job is, its -wal is checked too.
  BAO_ADDR=$SERVE_URL BAO_CACERT="$tmp/tls.pem" BAO_TOKEN=bao-token-rec-93e0 \
    REASSERT_REGISTRY_URL=$SERVE_URL REASSERT_REGISTRY_CACERT="$tmp/tls.pem" \
    timeout -s KILL 8 "$bin" run \
    --kubeconfig "$tmp/h2.kc" --secret-file "$tmp/h2.sec" --decrypt-command "$tmp/h2.dec {file}" \
    --talosctl /bin/false --talosconfig "$tmp/talosconfig" --record "$tmp/h2.cas.db" >"$tmp/h2.out" 2>&1
  [ -f "$tmp/h2.cas.db" ] || fail "H2: no cassette: $(tail -3 "$tmp/h2.out")"
  fp=$(sqlite3 "file:$tmp/h2.cas.db?mode=ro" \
    "select count(*) from calls where response like '%note fp:%'" 2>/dev/null)
  [ "${fp:-0}" -ge 1 ] || fail "H2: the run never read the annotated Lease (nothing to check)"
  for f in "$tmp"/h2.cas.db*; do
    grep -qaF 'Prev-Pw-123xyz' "$f" &&
      fail "H2: the cluster's password, read before the run learnt it, is in $(basename "$f")"
  done
  kill "$spid" 2>/dev/null
  spid=
fi

[ $fails -eq 0 ] && echo "live record: the live run's cassette replays strictly, no secret in it"
[ $fails -eq 0 ]
