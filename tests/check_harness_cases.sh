#!/bin/sh
# The harness's trust in its own inputs, case by case (DESIGN.md §5.1, §7.1):
# each case under tests/harness/cases/ must behave as DESIGN.md says — a
# script exits 0 when it does (its second line says what it checks), a
# scenario exits as listed below and, where marked, leaks no credential.
# Prints one FAIL line per failing case, then "N passed, N failed"; exit 0
# only if none failed.
#   tests/check_harness_cases.sh BUILD/reassert SOURCE_ROOT
set -u
# A GitHub Actions step, where forged commands would be parsed (plain text:
# tests/check_ci_native.sh).
GITHUB_ACTIONS=true
export GITHUB_ACTIONS
bin=$1; src=$2
case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac
case $src in /*) ;; *) src=$(pwd)/$src ;; esac
cases=$src/tests/harness/cases
work=$(mktemp -d "${TMPDIR:-/tmp}/check-harness-cases.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT INT TERM
cd "$work" || exit 2
p=0; f=0
no() { echo "FAIL: $1: $2"; f=$((f + 1)); }
# shell cases: exit 0 = behaves as DESIGN says; 2 = a tool is missing
for s in "$cases"/*.sh; do
  n=$(basename "$s" .sh)
  sh "$s" "$bin" "$src" >"$work/$n.log" 2>&1; rc=$?
  case $rc in
    0) p=$((p + 1)) ;;
    2) no "$n" "setup: a required tool (sqlite3/python3) is missing" ;;
    *) no "$n" "$(sed -n '2s/^# *//p' "$s" | head -c 200) $(head -c 200 "$work/$n.log" | tr '\n' ' ')" ;;
  esac
done
# scenario cases: NAME:EXPECTED-EXIT[:leak]  (leak = scan text, --json, --junit for LEAKCANARY, plain or base64)
scan() {
  python3 - "$@" <<'PY'
import base64, re, sys
bad = 0
for f in sys.argv[1:]:
    s = open(f, 'rb').read()
    if b'LEAKCANARY' in s or b'leak-bot:' in s: bad = 1
    for m in re.findall(rb'[A-Za-z0-9+/_-]{12,}={0,2}', s):
        for k in range(4):
            try: d = base64.b64decode(b'A' * k + m + b'==', altchars=b'-_')
            except Exception: continue
            if b'LEAKCANARY' in d or b'leak-bot:' in d: bad = 1
            try: d = base64.b64decode(b'A' * k + m + b'==')
            except Exception: continue
            if b'LEAKCANARY' in d or b'leak-bot:' in d: bad = 1
sys.exit(bad)
PY
}
for c in leak-found:1:leak leak-enc:1:leak yaml-merge-key:65 yaml-tag-str:65 yaml-hex-count:65 no-expect-false-pass:1; do
  n=${c%%:*}; r=${c#*:}; want=${r%%:*}; leak=${r#*:}
  y=$cases/$n.yaml
  timeout 30 "$bin" sim "$y" >"$work/$n.out" 2>&1; rc=$?
  if [ "$rc" -ne "$want" ]; then no "$n" "reassert sim tests/harness/cases/$n.yaml: expected exit $want, got $rc: $(grep -m1 -E 'FAIL|PASS|reassert' "$work/$n.out" | head -c 200)"; continue; fi
  if [ "$leak" = leak ]; then
    timeout 30 "$bin" sim "$y" --json >"$work/$n.json" 2>&1
    timeout 30 "$bin" sim "$y" --junit "$work/$n.xml" >"$work/$n.ju" 2>&1
    if ! scan "$work/$n.out" "$work/$n.json" "$work/$n.xml" "$work/$n.ju"; then no "$n" "a credential appears in the output (plain or base64)"; continue; fi
  fi
  p=$((p + 1))
done
echo "$p passed, $f failed"
[ "$f" -eq 0 ]
