#!/bin/sh
# Hazard: H59 — the credential in no output: cluster text carrying it is
# redacted in every channel of `reassert run`, not only the log lines.
# For a Lease holder holding the desired password,
# base64 of `user:password`, or the JSON-escaped password inside a larger
# text, `run` text output, `run --output json` and GITHUB_STEP_SUMMARY must
# hold neither the password nor base64(user:password) (nor its URL-safe
# form), and must say `<redacted:desired>` where the holder was.
# Args: reassert binary, source dir.
set -u
BIN=$1
SRC=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
FAILS=0
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
PW='P4ss-ADV-q9z'
B64=$(printf 'adv-bot:%s' "$PW" | base64 -w0)
B64URL=$(printf '%s' "$B64" | tr '+/' '-_')
for holder in "x-$PW-y" "$B64" "pre $B64 post" "{\\\"p\\\":\\\"$PW\\\"}"; do
  printf 'name: f3\nseed: 4\ncluster: {preset: prod, credential: current}\ndesired: current\ncatalogue:\n  current: {username: adv-bot, password: "%s"}\nruns:\n  - name: r\n    before:\n      - kube.patch: {ref: Lease/flux-system/ghcr-auth-refresh, merge-patch: {spec: {holderIdentity: "%s"}}}\n' \
    "$PW" "$holder" >"$T/s.yaml"
  rm -f "$T/w.db" "$T/sum"
  "$BIN" sim init --scenario "$T/s.yaml" --db "$T/w.db" --run r >/dev/null 2>&1 || { fail "sim init ($holder)"; continue; }
  GITHUB_STEP_SUMMARY="$T/sum" "$BIN" run --transport "sim:$T/w.db" --desired current >"$T/text" 2>&1
  rc1=$?
  "$BIN" run --transport "sim:$T/w.db" --desired current --output json >"$T/json" 2>&1
  rc2=$?
  "$BIN" run --transport "sim:$T/w.db" --fences >"$T/fences" 2>&1
  [ "$rc1" -eq 1 ] && [ "$rc2" -eq 1 ] || fail "holder '$holder': exits $rc1/$rc2, want 1/1"
  for f in text json sum fences; do
    [ -s "$T/$f" ] || { fail "holder '$holder': $f is empty"; continue; }
    for needle in "$PW" "$B64" "$B64URL"; do
      grep -qF -- "$needle" "$T/$f" && fail "holder '$holder': $f holds a form of the credential"
    done
  done
  grep -qF '<redacted:desired>' "$T/text" || fail "holder '$holder': the text output does not mark the redaction"
  grep -qF '<redacted:desired>' "$T/json" || fail "holder '$holder': the JSON does not mark the redaction"
done
echo "output filter: $FAILS failed"
[ "$FAILS" -eq 0 ]
