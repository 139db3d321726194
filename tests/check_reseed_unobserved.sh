#!/bin/sh
# Hazard: none in H1–H176 — rule DESIGN §8 (reseed builds the world "from
# the first observation of every object") and `replay --help` ("what the
# cassette cannot show is a warning line, never a silent guess").
# A run refused on a held Lease
# records only the registry and one Lease read; its reseeded world silently
# held every other object as the sim's preset has it. Now every object,
# OpenBao value and node Talos auth the recording never observed is named in
# a warning (--reseed text and --json), while an object it did observe (the
# Lease) is not.
# Args: reassert binary, source dir.
set -u
BIN=$1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
FAILS=0
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
cat >"$T/held.yaml" <<'Y'
name: held
seed: 4
strategies: [lazy]
cluster: {preset: prod, credential: previous}
desired: current
runs:
  - name: r
    before:
      - kube.patch: {ref: Lease/flux-system/ghcr-auth-refresh, merge-patch: {spec: {holderIdentity: "someone-else"}}}
    expect: {exit: 1}
Y
"$BIN" sim "$T/held.yaml" --strategy lazy --record "$T/rec" >/dev/null 2>&1 || fail "recording"
c="$T/rec/held.r.db"
"$BIN" replay "$c" --reseed --json >"$T/j" 2>"$T/e" || true
"$BIN" replay "$c" --reseed >"$T/t" 2>&1 || true
jq -e '.warnings | type == "array"' "$T/j" >/dev/null 2>&1 || fail "--reseed --json has no warnings list: $(head -c 300 "$T/j") $(head -c 300 "$T/e")"
for what in "objects the recording never observed" "Secret/ascoachingogvaner/ghcr-auth" \
  "OpenBao values the recording never observed" "infrastructure/ghcr/auth" \
  "Talos registry auth the recording never observed" "prod-worker-1"; do
  jq -e --arg w "$what" '[.warnings[] | select(contains($w))] | length > 0' "$T/j" >/dev/null 2>&1 ||
    fail "--reseed --json warns nothing naming '$what'"
  grep -qF -- "$what" "$T/t" || fail "--reseed text warns nothing naming '$what'"
done
jq -e '[.warnings[] | select(contains("Lease/flux-system/ghcr-auth-refresh"))] | length == 0' "$T/j" >/dev/null 2>&1 ||
  fail "the Lease the recording read is named as unobserved"
echo "reseed unobserved: $FAILS failed"
[ "$FAILS" -eq 0 ]
