#!/bin/sh
# Hazard: (no entry of H1–H176 names it) — rule DESIGN §5.1 "never hangs ...
# on input": every file the program opens for
# reading refuses a path that is not a regular file (a FIFO nobody writes, a
# directory, a device) with one clear error naming the file and exit 65,
# before any call reaches the world — never blocks in open() and never reads
# a device that does not end. Each command is cut by `timeout` (124 = it
# hung: a deploy step would sit there until the job's timeout).
#   --reuse-runtime-proof, --openbao-token-file, a kubeconfig's tokenFile,
#   --talosconfig (talosctl would wait on it), sim serve --token-file/
#   --openbao-token-file/--tls-cert/--tls-key, and the token file sim serve
#   re-reads on every request (swapped for a FIFO while it runs, the server
#   still answers); --config, --kubeconfig, --secret-file and a scenario as
#   guards.
# Args: reassert binary, source dir.
set -u
BIN=$1
T=$(mktemp -d)
SPID=""
cleanup() {
  [ -n "$SPID" ] && kill "$SPID" 2>/dev/null
  rm -rf "$T"
}
trap cleanup EXIT
cd "$T" || exit 1
FAILS=0
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
LIMIT=15

mkfifo "$T/fifo"
mkdir "$T/dir"
printf 'name: f16\nseed: 1\ncluster: {preset: prod, credential: current}\ndesired: current\nruns:\n  - name: r\n' >w.yaml
"$BIN" sim init --scenario w.yaml --db w.db >/dev/null || { echo "FAIL: sim init"; exit 1; }
printf 'stringData:\n  ghcr_dockerconfigjson: ENC[AES256_GCM,data:eA==,type:str]\n' >s.yaml
printf '#!/bin/sh\necho "{\\"auths\\":{\\"ghcr.io\\":{\\"username\\":\\"u\\",\\"password\\":\\"p\\"}}}"\n' >d.sh
chmod +x d.sh
kc() { # kc FILE USER-YAML
  printf 'apiVersion: v1\nkind: Config\nclusters:\n- name: s\n  cluster: {server: "https://127.0.0.1:1"}\nusers:\n- name: u\n  user: %s\ncontexts:\n- name: c\n  context: {cluster: s, user: u}\ncurrent-context: c\n' "$2" >"$1"
}
kc kc.yaml '{token: t}'
printf 'tok-fifo-serve\n' >ktok
calls() { sqlite3 w.db "select coalesce((select value from counters where name='api_calls'),0)" 2>/dev/null || echo '?'; }

# refused NAME PATH CMD...: exit 65 within LIMIT seconds, the error names PATH.
refused() {
  name=$1 path=$2
  shift 2
  before=$(calls)
  timeout "$LIMIT" "$@" >"$T/out" 2>&1
  rc=$?
  if [ "$rc" -eq 124 ]; then
    fail "$name: blocked on $path (cut after ${LIMIT}s)"
  elif [ "$rc" -ne 65 ]; then
    fail "$name: exit $rc, want 65: $(head -c 300 "$T/out")"
  elif ! grep -qF -- "$path" "$T/out"; then
    fail "$name: the error does not name $path: $(head -c 300 "$T/out")"
  fi
  [ "$(calls)" = "$before" ] || fail "$name: calls reached the world before the refusal"
}

for p in "$T/fifo" "$T/dir" /dev/null; do
  refused "run --reuse-runtime-proof $p" "$p" \
    "$BIN" run --transport sim:w.db --desired current --reuse-runtime-proof "$p"
  refused "run --openbao-token-file $p" "$p" env BAO_ADDR=https://127.0.0.1:1 \
    "$BIN" run --kubeconfig kc.yaml --secret-file s.yaml --decrypt-command ./d.sh --openbao-token-file "$p"
  kc kc-tf.yaml "{tokenFile: $p}"
  refused "kubeconfig tokenFile $p" "$p" "$BIN" run --kubeconfig kc-tf.yaml --fences
  refused "sim serve --token-file $p" "$p" "$BIN" sim serve --db w.db --listen 127.0.0.1:0 --token-file "$p"
  refused "sim serve --openbao-token-file $p" "$p" \
    "$BIN" sim serve --db w.db --listen 127.0.0.1:0 --openbao-token-file "$p"
  refused "sim serve --tls-cert $p" "$p" \
    "$BIN" sim serve --db w.db --listen 127.0.0.1:0 --tls-cert "$p" --tls-key ktok
  refused "sim serve --tls-key $p" "$p" \
    "$BIN" sim serve --db w.db --listen 127.0.0.1:0 --tls-cert ktok --tls-key "$p"
  refused "run --talosconfig $p" "$p" "$BIN" run --kubeconfig kc.yaml --talosconfig "$p" --fences
  # Guards: these refused a FIFO already.
  refused "run --config $p" "$p" "$BIN" run --transport sim:w.db --desired current --config "$p"
  refused "run --kubeconfig $p" "$p" "$BIN" run --kubeconfig "$p" --fences
  refused "run --secret-file $p" "$p" env BAO_ADDR=https://127.0.0.1:1 BAO_TOKEN=t \
    "$BIN" run --kubeconfig kc.yaml --secret-file "$p" --decrypt-command ./d.sh
  [ "$p" = "$T/dir" ] || refused "sim $p" "$p" "$BIN" sim "$p"
done
# A folder is every scenario under it (`reassert sim DIR`): one with none is
# a usage error naming it, and a FIFO named like a scenario inside one is
# refused by the loader like any other, never waited on.
timeout "$LIMIT" "$BIN" sim "$T/dir" >"$T/out" 2>&1
rc=$?
[ "$rc" -eq 64 ] && grep -qF -- "$T/dir" "$T/out" ||
  fail "sim on an empty folder: exit $rc, want 64 naming it: $(head -c 300 "$T/out")"
mkdir "$T/scn"
mkfifo "$T/scn/x.yaml"
refused "sim on a folder holding a FIFO x.yaml" "$T/scn/x.yaml" "$BIN" sim "$T/scn"

# sim serve re-reads its token file on every request: a FIFO swapped in
# while it runs must not block the server (the tokens it had stay).
if command -v curl >/dev/null; then
  "$BIN" sim serve --db w.db --listen 127.0.0.1:0 --token-file ktok >serve.out 2>serve.err &
  SPID=$!
  i=0
  while [ $i -lt 100 ] && ! grep -q '^http' serve.out 2>/dev/null; do sleep 0.1; i=$((i + 1)); done
  url=$(head -n 1 serve.out)
  case $url in
  http://127.0.0.1:*)
    rm ktok && mkfifo ktok
    code=$(curl -s -o /dev/null -w '%{http_code}' -m "$LIMIT" -H 'Authorization: Bearer tok-fifo-serve' \
      "$url/api/v1/namespaces/flux-system/secrets/variables-base")
    [ "$code" = 200 ] || fail "sim serve with its token file swapped for a FIFO answered '$code', want 200"
    ;;
  *) fail "sim serve did not start: $(head -c 300 serve.err)" ;;
  esac
fi

echo "fifo inputs: $FAILS failed"
[ "$FAILS" -eq 0 ]
