#!/bin/sh
# Hostile cassettes (DESIGN §8, README "Record and replay"): a cassette is
# input data. A malformed row is exit 65 naming the file and the seq; a
# non-file is refused without waiting on it; text from a cassette never forms
# a workflow command (DESIGN §7.1); an edited request or target diverges
# (exit 1); the untouched recording strict-replays (exit 0).
# Args: reassert binary, source dir.
set -u
# A GitHub Actions step, where forged commands would be parsed (plain text:
# tests/check_ci_native.sh).
GITHUB_ACTIONS=true
export GITHUB_ACTIONS
BIN=$1
SRC=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
FAILS=0
fail() { echo "FAIL: $*" >&2; FAILS=$((FAILS + 1)); }

"$BIN" sim --strategy lazy --record rec "$SRC/scenarios/drift/root.yaml" >/dev/null 2>&1 \
  || { echo "FAIL: recording drift-root" >&2; exit 1; }
C=rec/drift-root.fix.db
[ -f "$C" ] || C=$(ls rec/*/drift-root.fix.db rec/drift-root.fix.db 2>/dev/null | head -n 1)
[ -f "$C" ] || { echo "FAIL: no cassette written" >&2; ls -R rec >&2; exit 1; }

# mutate NAME SQL: a copy of the cassette with one edit
mutate() {
  cp "$C" "$1.db"
  python3 - "$1.db" "$2" <<'PY' || { echo "FAIL: editing $1" >&2; exit 1; }
import sqlite3, sys
db = sqlite3.connect(sys.argv[1]); db.executescript(sys.argv[2]); db.commit(); db.close()
PY
}
SEQ=$(python3 -c "import sqlite3; print(sqlite3.connect('$C').execute(\"select min(seq) from calls where op='kube.get'\").fetchone()[0])")
# expect NAME WANT-EXIT NEEDLE args...
expect() {
  name=$1; want=$2; needle=$3; shift 3
  timeout 60 "$BIN" replay "$@" >"$name.out" 2>&1
  rc=$?
  [ "$rc" -eq "$want" ] || { fail "$name: exit $rc, want $want"; head -n 3 "$name.out" >&2; }
  [ -z "$needle" ] || grep -qF -- "$needle" "$name.out" || fail "$name: output does not say '$needle'"
  grep -q '^::error::FORGED\|^::endgroup::FORGED\|^::warning::FORGED' "$name.out" && fail "$name: cassette text forged a workflow command"
  return 0
}
expect pristine 0 "" "$C" --strict
mutate resp-not-json "update calls set response='{{{' where seq=$SEQ"
expect resp-not-json 65 "seq $SEQ" resp-not-json.db --strict
mutate op-unknown "update calls set op='kube.nuke' where seq=$SEQ"
expect op-unknown 65 "seq $SEQ" op-unknown.db --strict
mutate status-odd "update calls set status=99999 where seq=$SEQ"
expect status-odd 65 "seq $SEQ" status-odd.db --strict
mutate fmt-newer "update meta set value='2' where key='format_version'"
expect fmt-newer 65 "fmt-newer.db" fmt-newer.db --strict
# A counter whose value is not JSON: the error
# names the counter; reading its name after the statement was finalized was a
# heap use-after-free (the sanitizer build aborts on it).
mutate counter-not-json "update counters set value='abc' where name='writes'"
expect counter-not-json 65 "counter 'writes' is not JSON with counts >= 0" counter-not-json.db --strict
# A counter that is not a decimal integer >= 0 (1e999 read
# as null, 0x32 read as 0, "5 0", -1) is refused naming the counter.
for v in 1e999 0x32 '5 0' -1; do
  mutate counter-not-a-count "update counters set value='$v' where name='writes'"
  expect counter-not-a-count 65 "counter 'writes' is not JSON with counts >= 0" counter-not-a-count.db --strict
done
# virtual_seconds is the run's last clock read minus its first: a clock
# stepped back mid-run makes it negative (scenario
# controller/clock-step-back-during-rollout), and the cassette is read as
# recorded — but it is still one finite number.
for v in 1e999 '"x"' '[1]'; do
  mutate elapsed-not-a-time "update counters set value='$v' where name='virtual_seconds'"
  expect elapsed-not-a-time 65 "counter 'virtual_seconds' is not JSON with counts >= 0" elapsed-not-a-time.db --strict
done
mutate fmt-junk "update meta set value='1abc' where key='format_version'"
expect fmt-junk 65 "fmt-junk.db" fmt-junk.db --list
mutate no-config "delete from meta where key='config'"
expect no-config 65 "no-config.db" no-config.db --strict
mutate no-schema "drop table calls"
expect no-schema 65 "no-schema.db" no-schema.db --strict
python3 -c "
d='['*200000+']'*200000
import sqlite3; db=sqlite3.connect('deep.db')" && cp "$C" deep.db && python3 - deep.db "$SEQ" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1]); db.execute("update calls set response=? where seq=?", ('[' * 200000 + ']' * 200000, int(sys.argv[2]))); db.commit()
PY
expect deep-json 65 "seq $SEQ" deep.db --strict
mutate target-forge "update calls set target='Node/x'||char(10)||'::error::FORGED'||char(13)||char(10)||'::endgroup::FORGED' where seq=$SEQ"
expect target-forge 1 "diverged at seq $SEQ" target-forge.db --strict
expect target-forge-list 0 "" target-forge.db --list
# The name edited, the request's shape kept (a field the recorder never
# writes is bad input, 65: check_cassette_bad.sh).
mutate request-edit "update calls set request=replace(request,'\"name\":\"','\"name\":\"x') where seq=$SEQ"
expect request-edit 1 "diverged at seq $SEQ" request-edit.db --strict
mutate request-field "update calls set request=replace(request,'\"name\":','\"name\":\"x\",\"was\":') where seq=$SEQ"
expect request-field 65 "seq $SEQ: calls.request field was" request-field.db --strict
printf 'SQLite format 3\000 truncated' > trunc.db
expect truncated 65 "trunc.db" trunc.db --strict
mkfifo fifo.db
expect fifo 65 "fifo.db" fifo.db --strict
mkdir dir.db
expect directory 65 "dir.db" dir.db --strict
expect missing 65 "" nonexistent.db --strict
h1=$(cksum < "$C")
"$BIN" replay "$C" --strict >/dev/null 2>&1
[ "$(cksum < "$C")" = "$h1" ] || fail "strict replay modified the cassette"
[ "$FAILS" -eq 0 ] || { echo "$FAILS case(s) failed" >&2; exit 1; }
echo "ok: hostile cassettes refused (65) or diverged (1), never forged a workflow command"
