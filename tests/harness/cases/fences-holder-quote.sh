#!/bin/sh
# --fences release command with a hostile Lease holder: POSIX-quoted, no forged annotation (DESIGN 3.4, 7.1); guard.
bin=$1; src=$2; d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
command -v sqlite3 >/dev/null || exit 2
timeout 20 "$bin" sim init --scenario "$src/tests/harness/cases/plain-fail.yaml" --db "$d/w.db" >/dev/null 2>&1 || exit 1
sqlite3 "$d/w.db" "update objects set body=json_set(body,'\$.spec.holderIdentity','x'''||char(10)||'::error::FORGED; touch $d/PWNED; echo ''\$(id)') where kind='Lease'" || exit 1
timeout 20 "$bin" run --transport "sim:$d/w.db" --desired current --fences >"$d/out" 2>&1 || exit 1
grep -q '^::error::FORGED' "$d/out" && exit 1
mkdir "$d/bin"; printf '#!/bin/sh\nexit 0\n' >"$d/bin/kubectl"; chmod +x "$d/bin/kubectl"
grep 'kubectl ' "$d/out" | sed 's/^.*): //' >"$d/cmd.sh"
[ -s "$d/cmd.sh" ] || exit 1
PATH="$d/bin:$PATH" sh "$d/cmd.sh" >/dev/null 2>&1
[ ! -e "$d/PWNED" ]
