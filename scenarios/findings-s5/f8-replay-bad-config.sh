#!/bin/sh
# Finding F8 (low): `reassert replay` runs the core with a cassette's invalid
# configuration instead of refusing the cassette (exit 65). Usage:
#   sh f8-replay-bad-config.sh path/to/reassert path/to/source
set -u
BIN=${1:-build/reassert}; SRC=${2:-.}
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN"); SRC=$(cd "$SRC" && pwd)
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT; cd "$T"
"$BIN" sim --strategy lazy --record rec "$SRC/scenarios/adv5-drift-root.yaml" >/dev/null 2>&1
C=rec/adv5-drift-root.fix.db
edit() { cp "$C" "$1.db"; python3 -c "import sqlite3,sys; d=sqlite3.connect('$1.db'); d.execute(sys.argv[1]); d.commit()" "$2"; "$BIN" replay "$1.db" --strict >/dev/null 2>&1; echo "$1: exit $? (want 65)"; }
edit heartbeat-0 "update meta set value=json_set(value,'$.lease_heartbeat_s',0) where key='config'"
edit sync-attempts-neg "update meta set value=json_set(value,'$.sync_attempts',-5) where key='config'"
edit drain-neg "update meta set value=json_set(value,'$.drain_timeout_ms',-1) where key='config'"
edit ns-with-lf "update meta set value=json_set(value,'$.fanout_namespaces',json_array('a'||char(10)||'b')) where key='config'"
edit options-mode-99 "update meta set value='{\"mode\":99}' where key='options'"
edit args-conflict "update meta set value='[\"--recover-fences\",\"--check-only\"]' where key='args'"
