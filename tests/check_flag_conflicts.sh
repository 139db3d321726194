#!/bin/sh
# Hazard: H24 — `--recover-fences` with `--check-only`, `--allow-incomplete-fanout` or `--fences` exits 64 before any cluster call.
# Hazard: H39 — `--fences` with `--check-only`, `--allow-incomplete-fanout` or a runtime-proof flag (a valid absolute path) exits 64 without printing the report.
# Each combination runs against a sim world holding a leaked Lease (so a
# report, had one been made, would print "fence held"); the world file must
# be byte-for-byte unchanged afterwards: every call the core makes is logged
# in it, so an unchanged file means no cluster call.
#
#   tests/check_flag_conflicts.sh BUILD/reassert SOURCE_DIR
set -u
bin=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
passes=0
w=$tmp/w.db
"$bin" sim init --scenario "$src/scenarios/recovery/fences-report-leaked-lease.yaml" --db "$w" --run report \
  >/dev/null 2>&1 || { echo "FAIL: sim init"; exit 1; }
before=$(cksum <"$w")
refused() { # refused DESCRIPTION -- ARGS...
  what=$1; shift 2
  "$bin" run --transport sim:"$w" --desired current "$@" >"$tmp/out" 2>&1
  rc=$?
  if [ "$rc" -ne 64 ]; then
    echo "FAIL: $what: exit $rc, want 64: $(head -c 300 "$tmp/out")"; fails=$((fails + 1)); return
  fi
  if grep -q 'fence held' "$tmp/out"; then
    echo "FAIL: $what: printed the report: $(head -c 300 "$tmp/out")"; fails=$((fails + 1)); return
  fi
  if [ "$(cksum <"$w")" != "$before" ]; then
    echo "FAIL: $what: the world changed (a cluster call was made)"; fails=$((fails + 1)); return
  fi
  passes=$((passes + 1))
}
refused "recover + check-only" -- --recover-fences --check-only
refused "recover + allow-incomplete" -- --recover-fences --allow-incomplete-fanout
refused "recover + fences" -- --recover-fences --fences
refused "fences + check-only" -- --fences --check-only
refused "fences + allow-incomplete" -- --fences --allow-incomplete-fanout
refused "fences + record proof" -- --fences --record-runtime-proof "$tmp/proof.json"
refused "fences + reuse proof" -- --fences --reuse-runtime-proof "$tmp/proof.json"
# The same world answers a plain --fences with the report (the refusals above
# are about the combination, not about a world that cannot be reported).
"$bin" run --transport sim:"$w" --desired current --fences >"$tmp/out" 2>&1
if [ $? -eq 0 ] && grep -q 'fence held: Lease' "$tmp/out"; then passes=$((passes + 1)); else
  echo "FAIL: plain --fences did not report the leaked Lease: $(head -c 300 "$tmp/out")"; fails=$((fails + 1)); fi
# ...and its reads did change the world file, so "unchanged" above means "no call".
if [ "$(cksum <"$w")" != "$before" ]; then passes=$((passes + 1)); else
  echo "FAIL: a read-only --fences left the world file unchanged; the no-call check proves nothing"
  fails=$((fails + 1)); fi
echo "flag conflicts: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
