#!/bin/sh
# make bench-live: the live no-drift Reassert against `reassert sim serve`
# beside the in-process sim's (wall time and calls), and the registry
# proof's cost (`--check-only`: 14 calls) with the batch concurrent
# (transport.parallelism 16: curl multi) and one call at a time (1).
#
#   tests/bench_live.sh BUILD/reassert SOURCE_ROOT OUT.json [REPEAT]
#
# Wall times are this script's own clock (date +%s%N) around each process,
# the median of REPEAT runs (default 5); calls and virtual seconds come from
# each run's --output json. The live runs take the façade's clock
# (--test-facade-clock), so their virtual seconds equal the sim's.
set -eu
bin=$1
src=$2
out=$3
rep=${4:-5}
tmp=$(mktemp -d)
spid=
cleanup() {
  [ -n "$spid" ] && kill "$spid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT

w=$tmp/world.db
"$bin" sim init --scenario "$src/scenarios/two-run-stage-reassert.yaml" --db "$w" >/dev/null
"$bin" run --transport "sim:$w" --desired current >/dev/null # the Stage: everything converged
cp "$w" "$tmp/live.db"
sqlite3 "$w" "select dockerconfigjson from catalogue where name='current'" >"$tmp/cred.json"
printf 'stringData:\n  ghcr_dockerconfigjson: "%s"\n' \
  "$(sqlite3 "$w" "select ciphertext from catalogue where name='current'")" >"$tmp/secret.enc.yaml"
printf '#!/bin/sh\nexec cat %s/cred.json\n' "$tmp" >"$tmp/decrypt.sh"
chmod 700 "$tmp/decrypt.sh"
mkdir "$tmp/bin"
cp "$src/tests/talosctl" "$tmp/bin/talosctl"
printf 'transport:\n  parallelism: 1\n' >"$tmp/serial.yaml"

# Over TLS, as against a cluster (no token goes over plain http).
(cd "$tmp" && openssl req -x509 -newkey rsa:2048 -nodes -keyout tls.key -out tls.pem -days 2 \
  -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 >/dev/null 2>&1)
mkfifo "$tmp/fifo"
"$bin" sim serve --db "$tmp/live.db" --listen 127.0.0.1:0 --run cli --tls-cert "$tmp/tls.pem" \
  --tls-key "$tmp/tls.key" >"$tmp/fifo" 2>/dev/null &
spid=$!
read -r url <"$tmp/fifo"
cat >"$tmp/kubeconfig" <<EOF
current-context: sim
clusters: [{name: sim, cluster: {server: "$url", certificate-authority: tls.pem}}]
contexts: [{name: sim, context: {cluster: sim}}]
EOF
printf '{"context":"sim","contexts":{"sim":{"endpoints":["%s"],"ca":"%s"}}}\n' "$url" \
  "$(base64 -w0 "$tmp/tls.pem")" >"$tmp/talosconfig"

now_ms() { echo $(($(date +%s%N) / 1000000)); }
# median of the wall times in $tmp/times
median() { sort -n "$tmp/times" | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
# timed NAME -- ARGS...: REPEAT runs; sets wall (median ms), calls, vsec
timed() {
  : >"$tmp/times"
  shift 2
  i=0
  while [ "$i" -lt "$rep" ]; do
    t0=$(now_ms)
    PATH="$tmp/bin:$PATH" BAO_ADDR=$url BAO_CACERT=$tmp/tls.pem BAO_TOKEN=bench-token-7c1e \
      REASSERT_REGISTRY_URL=$url REASSERT_REGISTRY_CACERT=$tmp/tls.pem \
      "$bin" run --output json "$@" >"$tmp/run.json" 2>/dev/null || true
    t1=$(now_ms)
    echo $((t1 - t0)) >>"$tmp/times"
    i=$((i + 1))
  done
  wall=$(median)
  calls=$(jq '.counters.api_calls' "$tmp/run.json")
  vsec=$(jq '.counters.virtual_seconds' "$tmp/run.json")
}
live="--transport live --kubeconfig $tmp/kubeconfig --talosconfig $tmp/talosconfig \
--secret-file $tmp/secret.enc.yaml --decrypt-command $tmp/decrypt.sh --test-facade-clock"

timed sim -- --transport "sim:$w" --desired current
sim_wall=$wall sim_calls=$calls sim_vsec=$vsec
# shellcheck disable=SC2086
timed live -- $live
live_wall=$wall live_calls=$calls live_vsec=$vsec
# shellcheck disable=SC2086
timed proof16 -- $live --check-only
p16_wall=$wall p16_calls=$calls p16_vsec=$vsec
# shellcheck disable=SC2086
timed proof1 -- $live --check-only --config "$tmp/serial.yaml"
p1_wall=$wall p1_calls=$calls p1_vsec=$vsec

mkdir -p "$(dirname "$out")"
cat >"$out" <<EOF
{"title": "Live mode against sim serve (no-drift Reassert, 6 nodes, 3 namespaces)",
 "rows": [
  {"name": "no-drift Reassert, in-process sim: wall", "value": $sim_wall, "unit": "ms"},
  {"name": "no-drift Reassert, in-process sim: api calls", "value": $sim_calls, "unit": "calls"},
  {"name": "no-drift Reassert, live against sim serve: wall", "value": $live_wall, "unit": "ms"},
  {"name": "no-drift Reassert, live against sim serve: api calls", "value": $live_calls, "unit": "calls"},
  {"name": "no-drift Reassert virtual seconds (sim = live)", "value": $live_vsec, "unit": "s"},
  {"name": "registry proof (--check-only), live, concurrent (parallelism 16): wall", "value": $p16_wall, "unit": "ms"},
  {"name": "registry proof, live, one call at a time (parallelism 1): wall", "value": $p1_wall, "unit": "ms"},
  {"name": "registry proof api calls", "value": $p16_calls, "unit": "calls"},
  {"name": "registry proof virtual seconds, concurrent", "value": $p16_vsec, "unit": "s"},
  {"name": "registry proof virtual seconds, one at a time", "value": $p1_vsec, "unit": "s"}
 ],
 "note": "median of $rep runs, wall time by the bench script's clock around each process (start-up, kubeconfig, decrypt command and the preflight included); the live run's Talos reads go through the test stub talosctl (Python start-up dominates its wall time); over loopback to a single-threaded facade concurrency saves round trips (virtual seconds: one 25 ms round trip per batch of up to 16) more than wall time; sim calls $sim_calls / vsec $sim_vsec, live proof at parallelism 1 $p1_calls calls"}
EOF
echo "bench-live: wrote $out"
