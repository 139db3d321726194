#!/bin/sh
# The registry proof says what happened, as every other live error does: a
# registry that cannot be reached says so (connection refused), one whose
# TLS certificate is not trusted says TLS verification failed and which
# certificate it presented, against which CAs — neither reads as "refused a
# pull token … HTTP 400", which only a 401 or 403 from the registry is. The
# first two cases fail on a main where a connection failure read as a
# refused token.
#
#   tests/check_live_registry_errors.sh BUILD/reassert SOURCE_ROOT
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
has() { grep -qF -- "$2" "$1" || fail "$3: lacks '$2': $(head -c 800 "$1")"; }
lacks() { ! grep -qF -- "$2" "$1" || fail "$3: holds '$2': $(head -c 800 "$1")"; }
. "$src/tests/lib_serve.sh"
. "$src/tests/lib_live.sh"

w=$tmp/world.db
"$bin" sim init --scenario "$src/scenarios/two-run-stage-reassert.yaml" --db "$w" >/dev/null ||
  fail "sim init"
live_setup "$bin" "$src" "$tmp" "$w" || exit 1

# check WHAT URL CACERT: --check-only against the registry at URL (CA bundle
# CACERT, empty: the system's); exit 1 expected.
check() {
  what=$1
  LIVE_REGISTRY_URL=$2 LIVE_REGISTRY_CACERT=$3 live_run --check-only \
    >"$tmp/out" 2>"$tmp/err" </dev/null
  rc=$?
  cat "$tmp/out" "$tmp/err" >"$tmp/all"
  [ $rc -eq 1 ] || fail "$what: exit $rc, not 1: $(head -c 600 "$tmp/all")"
  lacks "$tmp/all" "$LIVE_PASS" "$what: the password"
}

# Nothing listens on port 1: connection refused, not a refused token.
check "connection refused" https://127.0.0.1:1 ""
has "$tmp/all" "the registry at https://127.0.0.1:1 cannot be reached" "connection refused"
has "$tmp/all" "Connection refused" "connection refused: curl's reason"
lacks "$tmp/all" "refused a pull token" "connection refused"
lacks "$tmp/all" "HTTP 400" "connection refused"

# sim serve's self-signed certificate, and a CA bundle that does not hold it
# (the system's would not either): TLS verification failed, naming the
# certificate the server presented and the bundle that was asked.
(cd "$tmp" && openssl req -x509 -newkey rsa:2048 -nodes -keyout other.key -out other.pem \
  -days 2 -subj /CN=another-ca >/dev/null 2>&1) || fail "openssl"
check "untrusted certificate" "$SERVE_URL" "$tmp/other.pem"
has "$tmp/all" "the registry at $SERVE_URL cannot be trusted: TLS verification failed" \
  "untrusted certificate"
has "$tmp/all" "it presented subject" "untrusted certificate: the certificate presented"
has "$tmp/all" "127.0.0.1, issued by" "untrusted certificate: the certificate's subject"
has "$tmp/all" "(self-signed)" "untrusted certificate: self-signed is said"
has "$tmp/all" "REASSERT_REGISTRY_CACERT $tmp/other.pem" "untrusted certificate: the CA bundle asked"
lacks "$tmp/all" "refused a pull token" "untrusted certificate"
lacks "$tmp/all" "HTTP 400" "untrusted certificate"

# A registry that does answer and refuses the credential: that, and only
# that, is a refused pull token (HTTP 401).
printf '{"auths":{"ghcr.io":{"username":"nobody","password":"not-the-password-9f3e"}}}' \
  >"$tmp/wrong.json"
printf '#!/bin/sh\nexec cat %s/wrong.json\n' "$tmp" >"$tmp/decrypt-wrong.sh"
chmod 700 "$tmp/decrypt-wrong.sh"
live_run --check-only --decrypt-command "$tmp/decrypt-wrong.sh" >"$tmp/all" 2>&1 </dev/null
rc=$?
[ $rc -eq 1 ] || fail "a refused credential: exit $rc, not 1"
has "$tmp/all" "refused a pull token" "a refused credential"
has "$tmp/all" "HTTP 401" "a refused credential: the status"
lacks "$tmp/all" "not-the-password-9f3e" "a refused credential: the password"

# The same registry trusted: the proof passes (so the cases above were the
# registry's address and trust, not the setup).
live_run --check-only >"$tmp/all" 2>&1 </dev/null || fail "the trusted registry: exit $?"

echo "live registry errors: $fails failed"
[ "$fails" -eq 0 ]
