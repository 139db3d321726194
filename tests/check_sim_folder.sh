#!/bin/sh
# Hazard: none in H1–H176 — DESIGN §5.1 (a harness PASS means something:
# nothing left out unsaid). `reassert sim DIR` stands for every *.yaml under
# DIR at any depth, in bytewise path order, leaving out folders named
# pending/ and hidden entries — the set ctest registers — so
# `reassert sim scenarios/` is the whole suite. A folder holding no scenario
# is a usage error (64), never an empty PASS; an option's value that names a
# folder (`--report DIR`, `--record DIR`) stays that option's value.
# Args: reassert binary, source dir.
set -u
BIN=$1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
FAILS=0
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
scn() { # PATH NAME
  mkdir -p "$(dirname "$1")"
  printf '# Hazard: none (a folder walk fixture)\nname: %s\nstrategies: [lazy]\ncluster: {preset: prod, credential: current, workers: 1, control-planes: 1}\ndesired: current\nruns:\n  - name: r\n' "$2" >"$1"
}
d=$T/tree
scn "$d/b/z.yaml" bz
scn "$d/a.yaml" a
scn "$d/b-c/y.yaml" bcy   # '-' sorts before '/': b-c/y before b/z
scn "$d/b/deep/er/x.yaml" bdx
scn "$d/pending/p.yaml" pending-p
scn "$d/b/pending/q.yaml" pending-q
scn "$d/.hidden/h.yaml" hidden
scn "$d/b/.h.yaml" hidden2
printf 'not a scenario\n' >"$d/b/README.md"
printf 'name: [\n' >"$d/pending/broken.yaml" # never read: pending/ is left out
"$BIN" sim --json "$d/" >"$T/j" 2>"$T/e"
rc=$?
[ $rc -eq 0 ] || fail "sim DIR: exit $rc: $(head -c 300 "$T/e")"
jq -r '.scenarios[].file' "$T/j" >"$T/got" 2>/dev/null
printf '%s\n' "$d/a.yaml" "$d/b-c/y.yaml" "$d/b/deep/er/x.yaml" "$d/b/z.yaml" >"$T/want"
cmp -s "$T/want" "$T/got" || fail "sim DIR ran $(tr '\n' ' ' <"$T/got"), expected $(tr '\n' ' ' <"$T/want")"
# A folder and a file together, in the order given.
"$BIN" sim --json "$d/b-c/y.yaml" "$d/b" >"$T/j2" 2>/dev/null
[ "$(jq -r '[.scenarios[].name] | join(" ")' "$T/j2" 2>/dev/null)" = "bcy bdx bz" ] ||
  fail "sim FILE DIR: $(jq -c '[.scenarios[].name]' "$T/j2" 2>/dev/null)"
# A folder with nothing to run (only pending/ and a README): 64, naming it.
mkdir -p "$T/empty/pending"
scn "$T/empty/pending/p.yaml" p
"$BIN" sim "$T/empty" >"$T/o" 2>"$T/e"
rc=$?
[ $rc -eq 64 ] || fail "sim on a folder with no scenario: exit $rc, expected 64"
grep -q "no scenario" "$T/e" || fail "the refusal does not say there is no scenario: $(head -c 300 "$T/e")"
grep -qF "$T/empty" "$T/e" || fail "the refusal does not name the folder"
# An option's value is not expanded: --report DIR writes DIR/index.html.
mkdir "$T/report"
"$BIN" sim --report "$T/report" "$d/a.yaml" >/dev/null 2>&1 || fail "sim --report DIR FILE failed"
[ -s "$T/report/index.html" ] || fail "--report DIR was taken as scenarios"
# --compare takes folders too.
"$BIN" sim --compare eager,lazy "$d/b" >"$T/c" 2>&1 || fail "sim --compare eager,lazy DIR: $(head -c 300 "$T/c")"
grep -q 'bdx' "$T/c" && grep -q 'bz' "$T/c" || fail "sim --compare DIR did not run the folder's scenarios"
[ $FAILS -eq 0 ] && echo "sim DIR: every scenario under it, in path order, pending/ and hidden left out" && exit 0
exit 1
