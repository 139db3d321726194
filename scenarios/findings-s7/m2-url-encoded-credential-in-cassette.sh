#!/bin/sh
# Finding M2: the desired password, percent-encoded (as in the userinfo of a
# URL) inside cluster text — here a Node annotation — is written verbatim to
# the cassette; so is its hex. Raw, base64 and JSON-escaped forms are redacted.
B=$(cd "$(dirname "${1:-build/reassert}")" && pwd)/$(basename "${1:-build/reassert}")
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
cat > "$d/s.yaml" <<'Y'
# Hazard: none (finding reproducer)
name: m2
strategies: [lazy]
cluster: {preset: prod, credential: current, workers: 1, control-planes: 1}
desired: current
catalogue:
  current: {username: adv7-bot, password: 'P4ss+adv7/q9z=x'}
runs:
  - name: url
    before:
      - kube.patch: {ref: Node/prod-worker-1, merge-patch: {metadata: {annotations: {adv7/mirror: 'https://adv7-bot:P4ss%2Badv7%2Fq9z%3Dx@ghcr.io/v2/'}}}}
  - name: hex
    before:
      - kube.patch: {ref: Node/prod-worker-1, merge-patch: {metadata: {annotations: {adv7/note: '503473732b616476372f71397a3d78'}}}}
Y
"$B" sim "$d/s.yaml" --record "$d/rec" >/dev/null 2>&1 || exit 2
bad=0
grep -l -a -F 'P4ss%2Badv7%2Fq9z%3Dx' $(find "$d/rec" -name "*.db") && bad=1
grep -l -a -F '503473732b616476372f71397a3d78' $(find "$d/rec" -name "*.db") && bad=1
# Expected: no file listed above (the credential in those encodings is fp:<hex>)
[ $bad = 0 ]
