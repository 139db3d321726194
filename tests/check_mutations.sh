#!/bin/sh
# The guard mutations of `make mutate` (tests/mutations/, run by
# tests/mutate.py) cannot rot silently: every patch still applies, alone, to
# today's tree; carries its header — `Mutation:` (what the mutated code does
# wrong), `Breaks:` (a hazard H1-H176 or a DESIGN rule, `DESIGN §...`),
# `Area:` — and, when given, a `Tests:` line naming tests that exist; changes
# only sources under core/, cli/, recorder/ or sim/ (never a test or a
# scenario); there are at least 40 of them and no two change the same thing.
# Cheap — no build, no test run; `make mutate` is what runs them.
#
#   tests/check_mutations.sh BUILD/reassert SOURCE_DIR
set -u
src=$2
dir="$src/tests/mutations"
min=40
last_hazard=176
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $1"; fails=$((fails + 1)); }

n=0
for p in "$dir"/*.patch; do
  [ -f "$p" ] || continue
  n=$((n + 1))
  name=$(basename "$p" .patch)
  head=$(sed '/^diff --git /,$d' "$p")
  for key in Mutation Breaks Area; do
    printf '%s\n' "$head" | grep -Eq "^$key: .+" || fail "$name: no \`$key:\` line in its header"
  done
  breaks=$(printf '%s\n' "$head" | sed -n 's/^Breaks: //p')
  if ! printf '%s\n' "$breaks" | grep -Eq '(^|[^A-Za-z0-9])H[0-9]+([^0-9]|$)|DESIGN §'; then
    fail "$name: \`Breaks:\` names neither a hazard (Hnn) nor a DESIGN rule (DESIGN §...)"
  fi
  for h in $(printf '%s\n' "$breaks" | grep -Eo 'H[0-9]+' | tr -d H); do
    [ "$h" -ge 1 ] && [ "$h" -le "$last_hazard" ] || fail "$name: cites H$h, not in the catalogue"
  done
  for t in $(printf '%s\n' "$head" | sed -n 's/^Tests: //p'); do
    kind=${t%%/*}
    base=${t#*/}
    case "$kind" in
      scenario) case "$base" in pending/*) false ;; *) [ -f "$src/scenarios/$base.yaml" ] ;; esac ;;
      unit) [ -f "$src/tests/$base.c" ] ;;
      shell) [ -f "$src/tests/$base.sh" ] ;;
      *) false ;;
    esac || fail "$name: \`Tests:\` names $t, which is no test"
  done
  grep -q '^diff --git ' "$p" || fail "$name: no diff in it"
  grep '^diff --git ' "$p" | while read -r _ _ a _; do
    case "${a#a/}" in
      core/* | cli/* | recorder/* | sim/*) ;;
      *) echo "FAIL: $name: changes ${a#a/}, which is not a source of the core, cli, recorder or sim" ;;
    esac
  done >"$tmp/paths"
  if [ -s "$tmp/paths" ]; then
    cat "$tmp/paths"
    fails=$((fails + 1))
  fi
  # Applies cleanly, alone, to the tree as it is (nothing is written).
  if ! out=$(cd "$src" && git apply --check "$p" 2>&1); then
    fail "$name: no longer applies: $(printf '%s' "$out" | head -n 2 | tr '\n' ' ')"
  fi
  sum=$(sed -n '/^diff --git /,$p' "$p" | grep '^[-+]' | grep -v '^\(---\|+++\) ' | cksum | tr ' ' -)
  printf '%s %s\n' "$sum" "$name" >>"$tmp/sums"
done

[ "$n" -ge "$min" ] || fail "$n mutations in tests/mutations; at least $min are needed"
for sum in $(cut -d' ' -f1 "$tmp/sums" 2>/dev/null | sort | uniq -d); do
  fail "these patches make the same change: $(grep "^$sum " "$tmp/sums" | cut -d' ' -f2 | tr '\n' ' ')"
done
echo "mutations: $n patches, $fails problem(s)"
[ "$fails" -eq 0 ]
