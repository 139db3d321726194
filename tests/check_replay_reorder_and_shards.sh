#!/bin/sh
# Record/replay and sweep as a
# user meets them. Pins what holds per DESIGN §7.1/§8 and `sweep --help`:
# - a cassette with two rows swapped fails `replay --strict` (exit 1) at the
#   first differing call, naming both;
# - a workflow command forged in a cassette's target is escaped (%0A, %0D,
#   %25) in `--strict` and `--list` output, never a line of its own;
# - `sweep --shard I/N` splits the crash sweep without overlap or gap, and
#   `--json` is byte-identical run to run.
# Usage: check_replay_reorder_and_shards.sh BUILD/reassert SOURCE_DIR
set -u
# A GitHub Actions step, where forged commands would be parsed (plain text:
# tests/check_ci_native.sh).
GITHUB_ACTIONS=true
export GITHUB_ACTIONS
B=$1
d=$(mktemp -d "${TMPDIR:-/tmp}/replay-shards.XXXXXX")
trap 'rm -rf "$d"' EXIT INT TERM
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
command -v sqlite3 >/dev/null 2>&1 || { echo "FAIL: sqlite3 not on PATH"; exit 1; }

cat >"$d/rot.yaml" <<'EOF'
name: rot
seed: 3
strategies: [lazy]
cluster: {preset: prod, credential: previous, workers: 1, control-planes: 1}
desired: current
runs:
  - name: stage
    expect: {exit: 0}
EOF
"$B" sim "$d/rot.yaml" --strategy lazy --record "$d/rec" >/dev/null 2>&1 ||
  fail "sim --record failed"
c="$d/rec/rot.stage.db"
[ -f "$c" ] || { fail "no cassette at $c"; exit 1; }
"$B" replay "$c" --strict >/dev/null 2>&1 || fail "the untouched cassette does not strict-replay"

# Two kube.get rows swapped: the first differing seq is named with both calls.
a=$(sqlite3 "$c" "select seq from calls where op='kube.get' and target like 'Kustomization/%' order by seq limit 1")
b=$((a + 1))
cp "$c" "$d/swap.db"
sqlite3 "$d/swap.db" "update calls set seq=-1 where seq=$a; update calls set seq=$a where seq=$b; update calls set seq=$b where seq=-1;"
"$B" replay "$d/swap.db" --strict >"$d/swap.out" 2>&1
rc=$?
[ $rc = 1 ] || fail "swapped rows: --strict exit $rc, want 1"
grep -q "diverged at seq $a" "$d/swap.out" || fail "swapped rows: seq $a not named"
grep -q '^  recorded: ' "$d/swap.out" && grep -q '^  replayed: ' "$d/swap.out" ||
  fail "swapped rows: both calls not shown"

# A workflow command forged inside a recorded target.
cp "$c" "$d/forge.db"
sqlite3 "$d/forge.db" "update calls set target='Kustomization/flux-system/x'||char(10)||'::error::forged%0A'||char(13)||'::endgroup::' where seq=$a;"
"$B" replay "$d/forge.db" --strict >"$d/forge.out" 2>&1
"$B" replay "$d/forge.db" --list >"$d/list.out" 2>&1
for f in forge.out list.out; do
  grep -q '^::endgroup::' "$d/$f" && fail "$f: a forged ::endgroup:: starts a line"
  grep -q '^::error::forged' "$d/$f" && fail "$f: a forged ::error:: starts a line"
  grep -q 'x%0A::error::forged%250A%0D::endgroup::' "$d/$f" || fail "$f: the forged target is not escaped as %0A/%25/%0D"
done

# Shards cover the crash sweep exactly once; --json is deterministic. A
# small fixture: only the root secret drifted (about a dozen writes).
cat >"$d/root.yaml" <<'EOF2'
name: root
seed: 3
strategies: [lazy]
cluster: {preset: prod, credential: current, workers: 1, control-planes: 1}
desired: current
runs:
  - name: fix
    before:
      - kube.patch: {ref: Secret/flux-system/ksail-registry-credentials, merge-patch: {data: {.dockerconfigjson: "eyJhdXRocyI6eyJnaGNyLmlvIjp7InVzZXJuYW1lIjoieCIsInBhc3N3b3JkIjoieSJ9fX0="}}}
    expect: {exit: 0}
EOF2
"$B" sweep "$d/root.yaml" --strategy lazy --json >"$d/all1.json" 2>/dev/null
"$B" sweep "$d/root.yaml" --strategy lazy --json >"$d/all2.json" 2>/dev/null
cmp -s "$d/all1.json" "$d/all2.json" || fail "sweep --json differs run to run"
for i in 1 2 3; do
  "$B" sweep "$d/root.yaml" --strategy lazy --json --shard "$i/3" >"$d/sh$i.json" 2>/dev/null
done
python3 - "$d" <<'EOF' || fail "shards 1/3..3/3 do not cover the plans exactly once"
import json, sys
d = sys.argv[1]
def plans(f):
    return [p["plan"] for s in json.load(open(f"{d}/{f}"))["sections"] for p in s["plans"]]
full = plans("all1.json")
parts = plans("sh1.json") + plans("sh2.json") + plans("sh3.json")
ok = len(full) >= 6 and sorted(full) == sorted(parts) and len(set(parts)) == len(parts)
sys.exit(0 if ok else 1)
EOF

[ $fails = 0 ] && echo "check_replay_reorder_and_shards: all cases passed"
[ $fails = 0 ]
