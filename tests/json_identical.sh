#!/bin/sh
# Same scenario, same seed, same bytes — across two builds. A change that
# only makes the harness faster (or reshapes the house) must not change one
# byte of what it reports. For every scenario file under SRC/scenarios/ (every
# folder) and each strategy, both binaries run
#   reassert sim --json --strategy S FILE        (stdout and exit code)
#   reassert sim --report DIR --strategy S FILE  (the HTML report: outputs,
#                                                 timelines)
# and, on the product card's fixture, the crash sweep (one plan in eight) and
# a 20-plan swarm of its Stage under each strategy, `reassert sweep --json`.
# The two must agree byte for byte, apart from timing fields: any JSON key
# with "wall" in its name (wall-clock time) is dropped before comparing.
#
#   tests/json_identical.sh BASE_BINARY NEW_BINARY [SRC] [JOBS]
#
# BASE_BINARY is the build of the commit before the change (its own merge
# base, never a main that has moved since); SRC the source root whose
# scenarios both run (default: this script's tree); JOBS parallel files
# (default 2). Exit 0 when every output agrees, 1 naming each that differs.
set -u
base=$1
new=$2
src=${3:-$(cd "$(dirname "$0")/.." && pwd)}
jobs=${4:-2}
for b in "$base" "$new"; do
  [ -x "$b" ] || { echo "json_identical: $b is not an executable" >&2; exit 64; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Copies: a build that goes on meanwhile must not change a side mid-way.
cp "$base" "$tmp/base.bin" && cp "$new" "$tmp/new.bin" || exit 64
base=$tmp/base.bin
new=$tmp/new.bin

# strip FILE: the JSON with every "*wall*" key dropped, re-printed the same
# way for both sides (a file that is not JSON is left as it is).
cat >"$tmp/strip.py" <<'EOF'
import json, sys
def strip(v):
    if isinstance(v, dict):
        return {k: strip(x) for k, x in v.items() if "wall" not in k}
    if isinstance(v, list):
        return [strip(x) for x in v]
    return v
path = sys.argv[1]
with open(path, encoding="utf-8", errors="surrogateescape") as f:
    text = f.read()
try:
    doc = json.loads(text)
except ValueError:
    sys.exit(0)
with open(path, "w", encoding="utf-8", errors="surrogateescape") as f:
    json.dump(strip(doc), f, indent=1, sort_keys=False)
    f.write("\n")
EOF

# one.sh TMP BASE NEW SRC KEY ARGS...: runs ARGS with both binaries from SRC
# (same working directory, so relative paths in reports agree), keeps
# stdout, the exit code and any --report directory (@REPORT@ in ARGS), then
# compares. Scenario paths hold no blanks (find prints them one a line).
cat >"$tmp/one.sh" <<'EOF'
set -u
tmp=$1 base=$2 new=$3 src=$4 key=$5
shift 5
for side in base new; do
  bin=$base
  [ "$side" = new ] && bin=$new
  d=$tmp/out/$key/$side
  mkdir -p "$d"
  # shellcheck disable=SC2046 # one word an argument
  (cd "$src" && "$bin" $(printf '%s\n' "$@" | sed "s|^@REPORT@\$|$d/report|") \
    >"$d/stdout" 2>/dev/null)
  echo $? >"$d/rc"
  python3 "$tmp/strip.py" "$d/stdout"
done
if diff -r "$tmp/out/$key/base" "$tmp/out/$key/new" >"$tmp/out/$key.diff"; then
  rm -rf "$tmp/out/$key" "$tmp/out/$key.diff"
else
  echo "DIFFERS: $key"
  head -20 "$tmp/out/$key.diff" | sed 's/^/  /'
fi
EOF

mkdir -p "$tmp/out"
: >"$tmp/jobs"
n=0
for f in $(cd "$src" && find scenarios -name '*.yaml' | LC_ALL=C sort); do
  for s in lazy eager; do
    key=$(printf '%s' "$f.$s" | tr '/' '_')
    printf '%s\n' "$key.json sim --json --strategy $s $f" >>"$tmp/jobs"
    printf '%s\n' "$key.report sim --report @REPORT@ --strategy $s $f" >>"$tmp/jobs"
    n=$((n + 1))
  done
done
rot=$(cd "$src" && find scenarios -name two-run-stage-reassert.yaml | head -n 1)
for s in lazy eager; do
  printf '%s\n' "sweep-crash.$s sweep $rot --strategy $s --shard 1/8 --json" >>"$tmp/jobs"
  printf '%s\n' "sweep-swarm.$s sweep $rot --run stage --strategy $s --swarm 20 --seed 5 --json" \
    >>"$tmp/jobs"
done
nice xargs -P "$jobs" -L 1 sh "$tmp/one.sh" "$tmp" "$base" "$new" "$src" <"$tmp/jobs" \
  >"$tmp/report" 2>&1
cat "$tmp/report"
differ=$(grep -c '^DIFFERS:' "$tmp/report")
echo "json_identical: $n scenario x strategy pairs and 4 sweeps; $differ outputs differ"
[ "$differ" -eq 0 ]
