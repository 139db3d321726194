#!/bin/sh
# A secret too weak to redact safely is refused before the run. Redaction
# replaces every occurrence of a secret's text, so with BAO_TOKEN=x the
# output read `flu<redacted:secret>-system`. Now a live run refuses, before
# its first call, a secret of its inputs that is shorter than 8 bytes, a
# common word or default ("root", "password", "changeme"), or text inside a
# name the run prints (its configuration's namespaces, objects, annotations,
# images): exit 65 naming the input — the OpenBao token and where it came
# from, the kube bearer (kubeconfig, context, user, field), the desired
# credential's password — never its value. A recorded run leaves a cassette
# saying why (meta refused), which replay reports instead of replaying
# nothing. A mode that does not use a secret does not judge it; a sim
# world's catalogue (test data the harness controls) keeps its own rules.
#
#   tests/check_live_short_secrets.sh BUILD/reassert SOURCE_ROOT
set -u
bin=$1
src=$2
tmp=$(mktemp -d)
SERVE_PID=
cleanup() {
  [ -n "$SERVE_PID" ] && kill "$SERVE_PID" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
fails=0
fail() {
  echo "FAIL: $1"
  fails=$((fails + 1))
}
has() { grep -qF -- "$2" "$1" || fail "$3: lacks '$2': $(head -c 600 "$1")"; }
lacks() { ! grep -qF -- "$2" "$1" || fail "$3: holds '$2'"; }
. "$src/tests/lib_serve.sh"
. "$src/tests/lib_live.sh"

w=$tmp/world.db
"$bin" sim init --scenario "$src/scenarios/two-run-stage-reassert.yaml" --db "$w" >/dev/null ||
  fail "sim init"
live_setup "$bin" "$src" "$tmp" "$w" || exit 1
calls() { sqlite3 "$w" "select coalesce((select value from counters where name='api_calls'),0)"; }

# weak WHAT SECRET NEEDLE ARGS...: refused, 65, naming NEEDLE, the secret
# never printed (nor anything redacted: the run never got to print).
weak() {
  what=$1 secret=$2 needle=$3
  shift 3
  before=$(calls)
  live_run "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
  rc=$?
  cat "$tmp/out" "$tmp/err" >"$tmp/all"
  [ $rc -eq 65 ] || fail "$what: exit $rc, not 65: $(head -c 600 "$tmp/all")"
  [ "$(calls)" = "$before" ] || fail "$what: a call reached the world"
  has "$tmp/all" "$needle" "$what"
  lacks "$tmp/all" "<redacted" "$what: output mangled by redaction"
  [ ${#secret} -lt 4 ] || lacks "$tmp/all" "$secret" "$what: the secret itself"
}

# The issue's example, and its kin.
LIVE_BAO_TOKEN=x weak "BAO_TOKEN=x" x "the OpenBao token from BAO_TOKEN is shorter than 8 bytes"
LIVE_BAO_TOKEN=root weak "BAO_TOKEN=root" root "the OpenBao token from BAO_TOKEN is shorter than 8 bytes"
LIVE_BAO_TOKEN=Password weak "BAO_TOKEN=Password" Password \
  "the OpenBao token from BAO_TOKEN is a common word or a well-known default secret"
LIVE_BAO_TOKEN=flux-system weak "BAO_TOKEN=flux-system" flux-system \
  "the OpenBao token from BAO_TOKEN occurs inside a name this run prints"
printf 'changeme\n' >"$tmp/weak.token"
weak "--openbao-token-file with a default" changeme \
  "the OpenBao token from --openbao-token-file $tmp/weak.token is a common word" \
  --openbao-token-file "$tmp/weak.token"
# The kube bearer, from each place a kubeconfig gives it.
kc() {
  cat >"$1" <<EOF
current-context: sim
clusters: [{name: sim, cluster: {server: "$SERVE_URL", certificate-authority: tls.pem}}]
users: [{name: bot, user: $2}]
contexts: [{name: sim, context: {cluster: sim, user: bot}}]
EOF
}
kc "$tmp/kc-token" "{token: kubetok}"
weak "kubeconfig token" kubetok \
  "the bearer token of user bot (kubeconfig $tmp/kc-token, context sim: token) is shorter than 8 bytes" \
  --kubeconfig "$tmp/kc-token" --fences
kc "$tmp/kc-file" "{tokenFile: weak.token}"
weak "kubeconfig tokenFile" changeme "context sim: tokenFile) is a common word" \
  --kubeconfig "$tmp/kc-file" --fences
printf '#!/bin/sh\necho %s\n' \
  "'{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":{\"token\":\"abc\"}}'" \
  >"$tmp/plugin.sh"
chmod 700 "$tmp/plugin.sh"
kc "$tmp/kc-exec" "{exec: {apiVersion: client.authentication.k8s.io/v1, command: ./plugin.sh, interactiveMode: Never}}"
weak "an exec plugin's token" abc "context sim: exec) is shorter than 8 bytes" \
  --kubeconfig "$tmp/kc-exec" --fences
# The desired credential's password.
printf '{"auths":{"ghcr.io":{"username":"deploy-bot","password":"hunter2"}}}' >"$tmp/weak.json"
printf '#!/bin/sh\nexec cat %s/weak.json\n' "$tmp" >"$tmp/decrypt-weak.sh"
chmod 700 "$tmp/decrypt-weak.sh"
weak "a short registry password" hunter2 \
  "the desired credential's ghcr.io password (--decrypt-command) is shorter than 8 bytes" \
  --decrypt-command "$tmp/decrypt-weak.sh" --check-only

# Recorded: the cassette says why, and replay reports it.
LIVE_BAO_TOKEN=shorty weak "a recorded refusal" shorty "shorter than 8 bytes" \
  --record "$tmp/refused.db"
[ -f "$tmp/refused.db" ] || fail "a refused run asked to record left no cassette"
[ "$(sqlite3 "$tmp/refused.db" "select value from meta where key='exit'")" = 65 ] ||
  fail "the refused run's cassette does not hold exit 65"
sqlite3 "$tmp/refused.db" "select value from meta where key='refused'" >"$tmp/why"
has "$tmp/why" "the OpenBao token from BAO_TOKEN is shorter than 8 bytes" "meta refused"
[ "$(sqlite3 "$tmp/refused.db" "select count(*) from calls")" = 0 ] ||
  fail "the refused run's cassette holds calls"
grep -qaF shorty "$tmp"/refused.db* && fail "the refused run's cassette holds the token"
"$bin" replay "$tmp/refused.db" --strict >"$tmp/all" 2>&1
rc=$?
[ $rc -eq 65 ] || fail "strict replay of a refused run: exit $rc, not 65: $(head -c 400 "$tmp/all")"
has "$tmp/all" "records a run refused before its first call (exit 65)" "strict replay"
has "$tmp/all" "the OpenBao token from BAO_TOKEN is shorter than 8 bytes" "strict replay: why"
"$bin" replay "$tmp/refused.db" --list >"$tmp/all" 2>&1 ||
  fail "--list of a refused run: exit $?: $(head -c 400 "$tmp/all")"

# A mode that does not use a secret does not judge it: --check-only reads
# no OpenBao.
LIVE_BAO_TOKEN=x live_run --check-only >"$tmp/all" 2>&1 </dev/null ||
  fail "--check-only judged an OpenBao token it never uses: $(head -c 400 "$tmp/all")"
# A sim world's catalogue is the harness's own test data: a short catalogue
# password is the scenario's business (reassert sim redacts it as it is).
cat >"$tmp/short.yaml" <<'EOF'
name: short-catalogue-password
seed: 1
cluster: {preset: prod, credential: current, workers: 1, control-planes: 1}
desired: current
catalogue:
  current: {username: u, password: pw-7}
runs:
  - name: r
EOF
"$bin" sim init --scenario "$tmp/short.yaml" --db "$tmp/short.db" >/dev/null || fail "sim init short"
"$bin" run --transport "sim:$tmp/short.db" --desired current >"$tmp/all" 2>&1 ||
  fail "a sim world's short catalogue password was refused: $(head -c 400 "$tmp/all")"

# Strong secrets pass (so every refusal above was the secret).
live_run --check-only >"$tmp/all" 2>&1 </dev/null || fail "strong secrets: exit $?"

echo "live short secrets: $fails failed"
[ "$fails" -eq 0 ]
