#!/bin/sh
# G1: a cassette that observed almost nothing (a run refused on a held Lease)
# reseeds into a world silently converged on the desired credential, though
# the recorded cluster held the previous one everywhere.
# usage: sh g1-reseed-silent-guess.sh BUILD/reassert
B=${1:-build/reassert}
d=$(mktemp -d)
cat > "$d/held.yaml" <<'Y'
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
"$B" sim "$d/held.yaml" --strategy lazy --record "$d/rec" >/dev/null 2>&1
cat > "$d/reseeded.yaml" <<Y
name: reseeded
seed: 1
strategies: [lazy]
cluster: {cassette: "rec/held.r.db"}
desired: desired
runs:
  - name: r
    before:
      - kube.patch: {ref: Lease/flux-system/ghcr-auth-refresh, merge-patch: {spec: {holderIdentity: ""}}}
    expect: {exit: 0, delta: {writes: 0}}
Y
echo "--- warnings of --reseed (only the Node list is named):"
"$B" replay "$d/rec/held.r.db" --reseed --json | sed 's/.*"warnings"/"warnings"/'
echo "--- the reseeded world is converged (this PASS is the defect):"
"$B" sim "$d/reseeded.yaml"
rm -rf "$d"
