#!/bin/sh
# Hazard: H27 — `--fences` must work without the credential (the operator
# inspecting a stuck deploy may not hold it); `run --transport sim:W.db
# --fences` once demanded `--desired NAME`.
# Checks, on a world whose Lease another run holds:
#   --fences without --desired: exit 0, names the held Lease and its
#     release command; the same bytes as with --desired (the credential
#     plays no part in the inspection);
#   --recover-fences without --desired: not a usage error; the live
#     holder is not released (nothing written);
#   a repair without --desired is still a usage error (64) naming --desired.
# Args: reassert binary, source dir.
set -u
BIN=$1
SRC=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
FAILS=0
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }

"$BIN" sim init --scenario "$SRC/scenarios/lease/held-refuses.yaml" --db "$T/w.db" --run reassert \
  >/dev/null || { echo "FAIL: sim init"; exit 1; }
writes() { sqlite3 "$T/w.db" "select coalesce((select value from counters where name='writes'),0)"; }
w0=$(writes)

"$BIN" run --transport "sim:$T/w.db" --fences >"$T/a" 2>&1
rc=$?
[ "$rc" -eq 0 ] || fail "--fences without --desired: exit $rc, want 0: $(head -c 300 "$T/a")"
grep -q 'fence held: Lease flux-system/ghcr-auth-refresh' "$T/a" ||
  fail "--fences without --desired does not name the held Lease: $(head -c 300 "$T/a")"
grep -q 'kubectl -n flux-system patch lease ghcr-auth-refresh' "$T/a" ||
  fail "--fences without --desired prints no release command"
"$BIN" run --transport "sim:$T/w.db" --fences --desired current >"$T/b" 2>&1
cmp -s "$T/a" "$T/b" || fail "--fences differs with and without --desired"

"$BIN" run --transport "sim:$T/w.db" --recover-fences >"$T/c" 2>&1
rc=$?
[ "$rc" -ne 64 ] || fail "--recover-fences without --desired is a usage error: $(head -c 300 "$T/c")"
[ "$(writes)" = "$w0" ] || fail "--recover-fences released a live run's Lease"

"$BIN" run --transport "sim:$T/w.db" >"$T/d" 2>&1
rc=$?
[ "$rc" -eq 64 ] || fail "a repair without --desired: exit $rc, want 64"
grep -q -- '--desired' "$T/d" || fail "the usage error does not name --desired"

echo "fences without credential: $FAILS failed"
[ "$FAILS" -eq 0 ]
