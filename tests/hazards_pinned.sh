#!/bin/sh
# Which hazards of the production catalogue (reference/hazards.md, H1-H176;
# H1-H143 apply to what is built, H144-H176 are deferred features) are pinned
# by a test whose header cites them, and which are not yet.
#
# A citation is a line `Hazard: H42 — <one line>` (several numbers allowed
# before the dash: `Hazard: H14, H15 — ...`): in the leading comment block of
# every scenario under scenarios/ (at any depth), anywhere in tests/*.c and
# tests/*.sh. A pending test (scenarios/pending/*.yaml, tests/pending/*:
# kept out of the suite because today's core fails it) is listed apart and
# does not count as a pin. Scenario files are named by their path from
# scenarios/, test files by their name.
#
# Fails when a cited number does not exist in the catalogue, when a scenario
# with a Hazard header does not load (built with `reassert sim init`), or when
# a pending test lacks its `# Pending:` reason. Uncited hazards are only
# printed (HAZARDS_STRICT=1 makes them fail too).
#
# Usage: hazards_pinned.sh REASSERT_BIN SOURCE_DIR
set -u
bin=$1
src=$2
last=176 # the catalogue's last entry
built=143 # the last entry that applies to what is built
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
errors=0
err() { echo "ERROR: $1"; errors=$((errors + 1)); }

# cites FILE HEADER_ONLY -> "N file:line" per cited number on stdout. On a
# `Hazard:` line a number counts when it is followed by the dash, alone or as
# part of a comma list (`H14, H15 — ...`; `H95 — ...; H96 — ...` cites both);
# in a YAML header that has a `Hazard:` line, its continuation lines count the
# same way. A number merely mentioned in the prose (`see H22`) does not.
cites() {
  awk -v hdr="$2" -v f="$1" '
    hdr == 1 && $0 !~ /^[ \t]*#/ && $0 !~ /^[ \t]*$/ { exit }
    /Hazard: *H[0-9]/ { seen = 1 }
    /Hazard: *H[0-9]/ || (hdr == 1 && seen) {
      s = $0; sub(/.*Hazard: */, "", s)
      while (match(s, /H[0-9]+(, *H[0-9]+)* \342\200\224/)) {
        list = substr(s, RSTART, RLENGTH); s = substr(s, RSTART + RLENGTH)
        while (match(list, /H[0-9]+/)) {
          print substr(list, RSTART + 1, RLENGTH - 1), f ":" NR
          list = substr(list, RSTART + RLENGTH)
        }
      }
    }' "$1"
}

: >"$tmp/pinned"
: >"$tmp/pending"
suite=$(find "$src/scenarios" -name '*.yaml' ! -path '*/pending/*' | LC_ALL=C sort)
for f in $suite; do
  cites "$f" 1 >>"$tmp/pinned"
done
for f in "$src"/tests/*.c "$src"/tests/*.sh; do
  [ -f "$f" ] || continue
  [ "$(basename "$f")" = hazards_pinned.sh ] && continue
  cites "$f" 0 >>"$tmp/pinned"
done
for f in "$src"/scenarios/pending/*.yaml "$src"/tests/pending/*.sh "$src"/tests/pending/*.c; do
  [ -f "$f" ] || continue
  case $f in *.yaml) cites "$f" 1 ;; *) cites "$f" 0 ;; esac >>"$tmp/pending"
  grep -q '^# Pending: ' "$f" || err "$f: a pending test must say why in a '# Pending: ...' header line"
done

# Every cited number exists.
cat "$tmp/pinned" "$tmp/pending" | while read -r n where; do
  if [ "$n" -lt 1 ] || [ "$n" -gt "$last" ]; then echo "$where: H$n"; fi
done >"$tmp/bad"
while read -r line; do
  err "$line is not in the hazard catalogue (H1-H$last)"
done <"$tmp/bad"

# Every scenario with a Hazard header loads (and its world builds).
for f in $suite "$src"/scenarios/pending/*.yaml; do
  [ -f "$f" ] || continue
  cites "$f" 1 | grep -q . || continue
  rm -f "$tmp/w.db"
  if ! "$bin" sim init --scenario "$f" --db "$tmp/w.db" >"$tmp/out" 2>&1; then
    err "$f does not load: $(head -c 400 "$tmp/out")"
  fi
done

# The inventory.
pinned=0
uncited=""
pending_only=""
n=1
while [ "$n" -le "$built" ]; do
  files=$(awk -v n="$n" -v scn="$src/scenarios/" '$1 == n { sub(/:.*/, "", $2)
      if (index($2, scn) == 1) $2 = substr($2, length(scn) + 1); else sub(/.*\//, "", $2)
      print $2 }' "$tmp/pinned" | sort -u | tr '\n' ' ')
  if [ -n "$files" ]; then
    pinned=$((pinned + 1))
    echo "H$n: $files"
  else
    uncited="$uncited H$n"
    if awk -v n="$n" '$1 == n { found = 1 } END { exit !found }' "$tmp/pending"; then
      pending_only="$pending_only H$n"
    fi
  fi
  n=$((n + 1))
done
deferred=$(awk -v b="$built" -v l="$last" '$1 > b && $1 <= l { print "H" $1 }' "$tmp/pinned" | sort -u | tr '\n' ' ')
echo "pinned: $pinned of $built hazards (H1-H$built)"
echo "uncited:${uncited:- none}"
echo "pending only (a scenario expects the fix, kept out of the suite):${pending_only:- none}"
[ -n "$deferred" ] && echo "deferred hazards cited (H$((built + 1))-H$last, out of scope): $deferred"
if [ "$errors" -gt 0 ]; then
  echo "hazards_pinned: $errors error(s)"
  exit 1
fi
if [ "${HAZARDS_STRICT:-0}" = 1 ] && [ -n "$uncited" ]; then
  echo "hazards_pinned: uncited hazards under HAZARDS_STRICT=1"
  exit 1
fi
exit 0
