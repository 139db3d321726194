#!/bin/sh
# Invariant 6 from the outside: run every shipped scenario (text and JSON
# reports, stdout and stderr together) and grep for every catalogue password
# — the preset's and every one a scenario file declares — in plaintext and
# base64. A hit fails the test without printing the secret.
set -u
bin=$1
src=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$bin" sim "$src"/scenarios/*.yaml >"$out/text" 2>&1
"$bin" sim --json "$src"/scenarios/*.yaml >"$out/json" 2>&1
{
  printf '%s\n' ghp-prev-0a1b2c3d4e5f ghp-curr-9f8e7d6c5b4a ghp-revk-5566778899aa
  sed -n 's/^[[:space:]]*password:[[:space:]]*\([^[:space:]#]*\).*/\1/p' "$src"/scenarios/*.yaml
  grep -ho '"password":"[^"]*"' "$src"/scenarios/*.yaml | sed 's/"password":"\([^"]*\)"/\1/'
} | sort -u >"$out/secrets"
n=$(wc -l <"$out/secrets")
[ "$n" -ge 3 ] || { echo "found only $n secrets to look for"; exit 1; }
status=0
i=0
while IFS= read -r secret; do
  i=$((i + 1))
  [ -n "$secret" ] || continue
  b64=$(printf '%s' "$secret" | base64 -w0)
  for f in text json; do
    if grep -qF -- "$secret" "$out/$f" || grep -qF -- "$b64" "$out/$f"; then
      echo "FAIL: catalogue secret #$i appears in the $f report"
      status=1
    fi
  done
done <"$out/secrets"
[ -s "$out/text" ] || { echo "FAIL: the sim printed nothing"; status=1; }
[ $status -eq 0 ] && echo "no plaintext: $n catalogue secrets absent from every report"
exit $status
