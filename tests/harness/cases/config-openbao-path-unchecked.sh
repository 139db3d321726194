#!/bin/sh
# --config accepts openbao.path / openbao.mount values with "..", a newline, "?#" or a bare "/" (exit 0; a "../../sys/seal" path even drives a full rotation) instead of refusing them with exit 65 and file:line:col (DESIGN 3 r2 config rules: refused, never clamped).
bin=$1; src=$2; d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
timeout 20 "$bin" sim init --scenario "$src/tests/harness/cases/plain-fail.yaml" --db "$d/base.db" >/dev/null 2>&1 || exit 1
st=0; i=0
for c in 'openbao:\n  path: ../../sys/seal\n' 'openbao:\n  mount: ../../x\n' 'openbao:\n  path: "infrastructure/ghcr/auth\\n::error::X"\n' 'openbao:\n  path: "infrastructure/ghcr/auth?x=1#"\n' 'openbao:\n  path: "/"\n'; do
  i=$((i + 1)); printf %b "$c" >"$d/c$i.yaml"; cp "$d/base.db" "$d/w.db"
  timeout 20 "$bin" run --transport "sim:$d/w.db" --desired current --config "$d/c$i.yaml" --output json >"$d/out" 2>/dev/null
  rc=$?
  if [ "$rc" -ne 65 ] || ! grep -q "c$i.yaml:[0-9]*:[0-9]*" "$d/out"; then echo "  $(printf %b "$c" | tr '\n' ' '): exit $rc"; st=1; fi
done
exit $st
