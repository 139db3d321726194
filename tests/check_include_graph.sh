#!/bin/sh
# The house's layering (DESIGN.md §2), checked from the #include "..." lines:
# folders include one another without a cycle, core/ never includes sim/,
# recorder/, cli/ or reports/, and sim/ never includes cli/ or reports/.
# A folder is a top-level folder (core/ and its sub-folders count as one,
# since core/rs.h is the vocabulary every core file shares) or a sub-folder
# of sim/. On failure it prints the folder graph, one edge per line.
set -u
src=$2
cd "$src" || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# folder_of PATH: the node a file belongs to.
folder_of() {
  case $1 in
  sim/*/*) echo "$1" | cut -d/ -f1-2 ;;
  */*) echo "$1" | cut -d/ -f1 ;;
  *) echo . ;;
  esac
}

for f in $(find cli core sim recorder reports tests -name '*.[ch]' 2>/dev/null | sort); do
  from=$(folder_of "$f")
  sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" |
    while read -r inc; do
      # Includes name paths from the root; a bare name is the same folder.
      [ -f "$inc" ] || continue
      to=$(folder_of "$inc")
      [ "$from" = "$to" ] || echo "$from $to"
    done
done | sort -u >"$tmp/edges"

status=0
# Forbidden directions.
while read -r from to; do
  case "$from:$to" in
  core:sim/* | core:recorder | core:cli | core:reports | sim/*:cli | sim/*:reports)
    echo "layering: $from includes $to"
    status=1
    ;;
  esac
done <"$tmp/edges"

# Cycles: transitive closure over a graph of a dozen nodes.
awk '
  { e[$1 SUBSEP $2] = 1; n[$1] = 1; n[$2] = 1 }
  END {
    for (k in n) for (i in n) for (j in n)
      if (((i SUBSEP k) in e) && ((k SUBSEP j) in e)) e[i SUBSEP j] = 1
    bad = 0
    for (i in n) if ((i SUBSEP i) in e) { print "include cycle through " i; bad = 1 }
    exit bad
  }' "$tmp/edges" || status=1

if [ $status -ne 0 ]; then
  echo "folder include graph:"
  sed 's/ / -> /' "$tmp/edges"
fi
exit $status
