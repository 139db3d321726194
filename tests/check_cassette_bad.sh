#!/bin/sh
# Reading a cassette robustly (DESIGN §8): a truncated file, a file
# that is not SQLite, an SQLite file without the schema, a cassette of a
# newer format version, a row with a malformed body, a row with an unknown
# operation, an empty file and a directory — `replay --list`, `--strict`,
# `--reseed` and `--to-scenario` each exit 65 with one sentence naming the file (and the
# seq where a row is at fault), and never crash. Also: the usage errors of
# `replay` exit 64, and `run --record` never replaces an existing file.
#
#   tests/check_cassette_bad.sh BUILD/reassert SOURCE_ROOT
set -u
# A GitHub Actions step, where forged commands would be parsed (plain text:
# tests/check_ci_native.sh).
GITHUB_ACTIONS=true
export GITHUB_ACTIONS
bin=$1
src=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
status=0
fail() {
  echo "FAIL: $1"
  status=1
}

"$bin" sim --record "$out/rec" --strategy lazy "$src"/scenarios/two-run-stage-reassert.yaml \
  >"$out/sim.txt" 2>&1 || fail "recording the fixture failed: $(tail -3 "$out/sim.txt")"
good="$out/rec/two-run-stage-reassert.stage.db"
[ -f "$good" ] || { echo "FAIL: no cassette recorded"; exit 1; }
"$bin" replay "$good" --list >/dev/null || fail "the good cassette does not list"

# expect_bad NAME FILE [SEQ]: every mode exits 65, one line naming the file.
expect_bad() {
  for mode in --list --strict --reseed "--to-scenario $out/never.yaml"; do
    # shellcheck disable=SC2086 # word splitting is the point
    "$bin" replay "$2" $mode >"$out/o" 2>"$out/e"
    rc=$?
    [ $rc -eq 65 ] || fail "$1 ($mode): exit $rc, expected 65: $(head -c 300 "$out/e")"
    [ "$(wc -l <"$out/e")" -eq 1 ] || fail "$1 ($mode): not one line: $(head -c 300 "$out/e")"
    grep -qF "$2" "$out/e" || fail "$1 ($mode): the error does not name the file"
    [ -z "${3:-}" ] || grep -q "seq $3:" "$out/e" || fail "$1 ($mode): the error does not name seq $3"
  done
}

head -c 3000 "$good" >"$out/truncated.db"
expect_bad "a cassette cut inside its first page" "$out/truncated.db"
head -c $(($(wc -c <"$good") / 2)) "$good" >"$out/half.db"
expect_bad "a cassette cut in half" "$out/half.db"
printf 'not a database, just text\n' >"$out/text.db"
expect_bad "a text file" "$out/text.db"
: >"$out/empty.db"
expect_bad "an empty file" "$out/empty.db"
mkdir "$out/dir.db"
expect_bad "a directory" "$out/dir.db"
expect_bad "a missing file" "$out/missing.db"
sqlite3 "$out/noschema.db" "CREATE TABLE t(a); INSERT INTO t VALUES (1);"
expect_bad "an SQLite file without the schema" "$out/noschema.db"
cp "$good" "$out/newer.db"
sqlite3 "$out/newer.db" "UPDATE meta SET value = '99' WHERE key = 'format_version'"
expect_bad "a newer format" "$out/newer.db"
grep -q "format 99" "$out/e" || fail "the newer format's error does not say which format"
cp "$good" "$out/huge.db"
sqlite3 "$out/huge.db" "UPDATE meta SET value = '99999999999999999999999' WHERE key = 'format_version'"
expect_bad "a format number past a long" "$out/huge.db"
grep -q "format 99999999999999999999999 by a newer" "$out/e" ||
  fail "a format number past a long is not named as written: $(cat "$out/e")"
cp "$good" "$out/body.db"
sqlite3 "$out/body.db" "UPDATE calls SET response = '{\"kind\": \"Lease\", broken' WHERE seq = 17"
expect_bad "a malformed response body" "$out/body.db" 17
cp "$good" "$out/request.db"
sqlite3 "$out/request.db" "UPDATE calls SET request = '[1,2' WHERE seq = 5"
expect_bad "a malformed request" "$out/request.db" 5
cp "$good" "$out/op.db"
sqlite3 "$out/op.db" "UPDATE calls SET op = 'kube.explode' WHERE seq = 9"
expect_bad "an unknown operation" "$out/op.db" 9

# A row that is valid JSON of a shape no transport gives is
# bad input — 65 naming the seq, the column and the field, in every mode,
# nothing written — never "diverged at seq N+1", which blames today's core
# for a damaged file.
# expect_shape NAME SQL SEQ FIELD
expect_shape() {
  cp "$good" "$out/$1.db"
  sqlite3 "$out/$1.db" "$2" || fail "$1: the edit failed"
  expect_bad "$1" "$out/$1.db" "$3"
  grep -qF -- "$4" "$out/e" || fail "$1: the error does not name $4: $(cat "$out/e")"
  grep -q diverged "$out/e" "$out/o" && fail "$1: called a divergence: $(cat "$out/e")"
}
first_get=$(sqlite3 "file:$good?immutable=1" "select min(seq) from calls where op = 'kube.get'")
first_list=$(sqlite3 "file:$good?immutable=1" "select min(seq) from calls where op = 'kube.list'")
[ "$(sqlite3 "file:$good?immutable=1" "select op from calls where seq = 1")" = registry.token ] ||
  fail "the fixture's first call is no longer a registry.token"
expect_shape shape-array "UPDATE calls SET response = '[1,2]' WHERE seq = 1" 1 "calls.response"
expect_shape shape-null "UPDATE calls SET response = 'null' WHERE seq = 1" 1 "calls.response"
expect_shape shape-token "UPDATE calls SET response = '{\"token\":5}' WHERE seq = 1" 1 \
  "calls.response field token"
expect_shape shape-target "UPDATE calls SET request = json_set(request, '\$.target', 5) WHERE seq = 2" \
  2 "calls.request field target"
expect_shape shape-no-target "UPDATE calls SET request = '{}' WHERE seq = 2" 2 \
  "calls.request field target"
expect_shape shape-unknown "UPDATE calls SET request = json_set(request, '\$.bogus', 1) WHERE seq = 3" \
  3 "calls.request field bogus"
expect_shape shape-metadata \
  "UPDATE calls SET response = json_set(response, '\$.metadata', 5) WHERE seq = $first_get" \
  "$first_get" "calls.response field metadata"
expect_shape shape-items \
  "UPDATE calls SET response = json_set(response, '\$.items', '{}') WHERE seq = $first_list" \
  "$first_list" "calls.response field items"
[ -e "$out/never.yaml" ] && fail "--to-scenario wrote a scenario from a cassette of the wrong shape"
printf 'name: shape\ncluster: {cassette: "%s"}\ndesired: desired\nruns:\n  - name: r\n' \
  shape-array.db >"$out/shape.yaml"
"$bin" sim "$out/shape.yaml" >/dev/null 2>"$out/e"
rc=$?
[ $rc -eq 65 ] && grep -q "seq 1: calls.response" "$out/e" ||
  fail "cluster: {cassette:} of the wrong shape: exit $rc, not 65 naming it: $(cat "$out/e")"

# The calls' seq column runs 1, 2, 3, ... in the order stored; a
# duplicate, a gap, another start or another order is 65 naming the seq, in
# every mode and for a scenario's `cluster: {cassette:}`.
nopk() { # FILE ORDER SQL: calls rebuilt without its PRIMARY KEY, stored by ORDER
  cp "$good" "$1"
  sqlite3 "$1" "CREATE TABLE c2 AS SELECT * FROM calls ORDER BY $2; DROP TABLE calls;
    ALTER TABLE c2 RENAME TO calls; $3" || fail "$1: the edit failed"
}
nopk "$out/dup.db" seq "INSERT INTO calls SELECT * FROM calls WHERE seq = 40"
expect_bad "a duplicated seq" "$out/dup.db" 40
grep -q "twice" "$out/e" || fail "a duplicated seq: the error does not say so: $(cat "$out/e")"
nopk "$out/order.db" "CASE seq WHEN 50 THEN 51.5 ELSE seq END" ""
expect_bad "two rows stored out of order" "$out/order.db" 50
grep -q "out of order" "$out/e" || fail "rows out of order: the error does not say so"
nopk "$out/seqtext.db" seq "UPDATE calls SET seq = 'x' WHERE seq = 60"
expect_bad "a seq that is not an integer" "$out/seqtext.db"
grep -q "after seq 59 has a seq that is not an integer" "$out/e" ||
  fail "a seq that is not an integer: not named: $(cat "$out/e")"
cp "$good" "$out/gap.db"
sqlite3 "$out/gap.db" "DELETE FROM calls WHERE seq = 30"
expect_bad "a deleted row" "$out/gap.db" 30
grep -q "missing" "$out/e" || fail "a deleted row: the error does not say a seq is missing"
cp "$good" "$out/shift.db"
sqlite3 "$out/shift.db" "UPDATE calls SET seq = seq + 100000 WHERE seq > 100"
expect_bad "every seq past 100 shifted" "$out/shift.db" 101
cp "$good" "$out/start.db"
sqlite3 "$out/start.db" "UPDATE calls SET seq = seq + 100000"
expect_bad "calls starting at another seq" "$out/start.db" 100001
printf 'name: g2\ncluster: {cassette: "%s"}\ndesired: desired\nruns:\n  - name: r\n' \
  dup.db >"$out/dup-seq.yaml"
"$bin" sim "$out/dup-seq.yaml" >/dev/null 2>"$out/e"
rc=$?
[ $rc -eq 65 ] && grep -qF "$out/dup.db" "$out/e" && grep -q "seq 40:" "$out/e" ||
  fail "cluster: {cassette:} with a duplicated seq: exit $rc, not 65 naming it: $(cat "$out/e")"

cp "$good" "$out/meta.db"
sqlite3 "$out/meta.db" "UPDATE meta SET value = 'not json' WHERE key = 'config'"
"$bin" replay "$out/meta.db" --strict >/dev/null 2>"$out/e"
[ $? -eq 65 ] && grep -qF "$out/meta.db" "$out/e" || fail "a garbled meta config: not 65 naming the file"
"$bin" replay "$out/meta.db" --reseed >/dev/null 2>"$out/e"
[ $? -eq 65 ] && grep -qF "$out/meta.db" "$out/e" ||
  fail "a garbled meta config (--reseed): not 65 naming the file"
[ -e "$out/never.yaml" ] && fail "--to-scenario wrote a scenario from a bad cassette"

# Meta config (Hazard: H141, H143 — a configuration the core must refuse is
# never run): a cassette's meta config, options and args obey exactly the
# rules of --config and of `reassert run`'s arguments. Each bad value: 65,
# one line naming the file and the field, before any replay (nothing on
# stdout, no scenario written).
# expect_bad_meta NAME SQL FIELD
expect_bad_meta() {
  cp "$good" "$out/$1.db"
  sqlite3 "$out/$1.db" "$2" || fail "$1: the edit failed"
  # shellcheck disable=SC2086 # $list_mode: empty or one word
  for mode in $list_mode --strict --reseed "--to-scenario $out/meta-never.yaml"; do
    # shellcheck disable=SC2086 # word splitting is the point
    "$bin" replay "$out/$1.db" $mode >"$out/o" 2>"$out/e"
    rc=$?
    [ $rc -eq 65 ] || fail "$1 ($mode): exit $rc, expected 65: $(head -c 300 "$out/e")"
    [ "$(wc -l <"$out/e")" -eq 1 ] || fail "$1 ($mode): not one line: $(head -c 300 "$out/e")"
    grep -qF "$out/$1.db" "$out/e" || fail "$1 ($mode): the error does not name the file"
    grep -qF -- "$3" "$out/e" || fail "$1 ($mode): the error does not name $3: $(cat "$out/e")"
    [ -s "$out/o" ] && fail "$1 ($mode): replayed before refusing: $(head -c 300 "$out/o")"
  done
  [ -e "$out/meta-never.yaml" ] && fail "$1: --to-scenario wrote a scenario"
}
cfg() { echo "UPDATE meta SET value = json_set(value, '\$.$1', $2) WHERE key = 'config'"; }
# --list reads meta through the same loader (rec_tape_load): checked on the
# first config case and every meta-key case below, not on each config rule.
list_mode=--list
expect_bad_meta heartbeat-0 "$(cfg lease_heartbeat_s 0)" lease_heartbeat_s
list_mode=
expect_bad_meta heartbeat-over "$(cfg lease_heartbeat_s 500)" lease_heartbeat_s
expect_bad_meta sync-attempts-neg "$(cfg sync_attempts -5)" sync_attempts
expect_bad_meta sync-attempts-1 "$(cfg sync_attempts 1)" sync_attempts
expect_bad_meta sync-attempts-text "$(cfg sync_attempts "'60'")" sync_attempts
expect_bad_meta talos-attempts-2 "$(cfg talos_attempts 2)" talos_attempts
expect_bad_meta interval-half "$(cfg sync_interval_ms 1500)" sync_interval_ms
expect_bad_meta drain-neg "$(cfg drain_timeout_ms -1)" drain_timeout_ms
expect_bad_meta parallelism-0 "$(cfg transport_parallelism 0)" transport_parallelism
expect_bad_meta ns-with-lf "$(cfg fanout_namespaces "json_array('a'||char(10)||'b')")" \
  fanout_namespaces
expect_bad_meta ns-twice "$(cfg fanout_namespaces "json_array('a','a')")" fanout_namespaces
expect_bad_meta lease-name-bad "$(cfg lease_name "'A/B'")" lease_name
expect_bad_meta bao-dotdot "$(cfg openbao_path "'a/../b'")" openbao_path
expect_bad_meta shape-bogus "$(cfg talos_auth_shape "'bogus'")" talos_auth_shape
expect_bad_meta unknown-field "$(cfg bogus_field 1)" bogus_field
# ... the registry proof's targets too, as for --config (operator-image on
# registry-host, H138; every target repo:ref).
expect_bad_meta image-off-registry "$(cfg operator_image "'docker.io/acme/op:1'")" \
  "operator_image (--config operator-image)"
expect_bad_meta image-no-ref "$(cfg operator_image "'ghcr.io/acme/op'")" operator_image
expect_bad_meta target-no-ref "$(cfg pull_targets "json_array('devantler-tech/platform')")" \
  "pull_targets (--config required-pull-targets)"
expect_bad_meta options-mode-99 "UPDATE meta SET value = '{\"mode\":99}' WHERE key = 'options'" \
  "options field mode"
expect_bad_meta options-flag-text \
  "UPDATE meta SET value = json_set(value, '\$.require_auth_proof', 'yes') WHERE key = 'options'" \
  require_auth_proof
expect_bad_meta args-conflict \
  "UPDATE meta SET value = '[\"--recover-fences\",\"--check-only\"]' WHERE key = 'args'" \
  "meta args: --check-only cannot be combined"
expect_bad_meta args-unknown "UPDATE meta SET value = '[\"--bogus\"]' WHERE key = 'args'" \
  "meta args: unknown option"
expect_bad_meta args-vs-options \
  "UPDATE meta SET value = '[\"--check-only\"]' WHERE key = 'args'" "meta options disagree"

# Every other meta key the recorder writes is checked too, with
# the validators the run itself uses (the core's credential checks; an exit
# code; a strategy; the format version), before any replay.
meta() { echo "UPDATE meta SET value = '$2' WHERE key = '$1'"; }
list_mode=--list
expect_bad_meta desired-empty "$(meta desired '{}')" "meta desired"
expect_bad_meta desired-text "$(meta desired 'not json')" "meta desired"
expect_bad_meta ciphertext-plain "$(meta desired_ciphertext plaintext-not-ENC)" \
  "meta desired_ciphertext"
expect_bad_meta exit-0x "$(meta exit 0x)" "meta exit"
expect_bad_meta exit-256 "$(meta exit 256)" "meta exit"
expect_bad_meta exit-empty "$(meta exit '')" "meta exit"
expect_bad_meta strategy-bogus "$(meta strategy bogus)" "meta strategy"
expect_bad_meta vt-start-text "$(meta vt_start 12abc)" "meta vt_start"
expect_bad_meta vt-end-text "$(meta vt_end 12abc)" "meta vt_end"
expect_bad_meta args-fences "$(meta args '["--check-only","--fences"]')" "meta args"
expect_bad_meta format-0 "$(meta format_version 0)" "meta format_version"
grep -q "not a number" "$out/e" && fail "format_version 0 is called not a number: $(cat "$out/e")"
grep -q "format 0" "$out/e" || fail "format_version 0: the error does not name the format"
# ... and a cassette whose recorded run refused a bad credential (exit 65,
# no call) or did not need one (--fences) is fine as it is.
"$bin" sim --record "$out/refused" --strategy lazy "$src"/scenarios/input/malformed-credential.yaml \
  "$src"/scenarios/input/plaintext-sops-source.yaml >"$out/sim.txt" 2>&1 ||
  fail "recording the refused credentials failed: $(tail -3 "$out/sim.txt")"
for f in "$out"/refused/*.db; do
  for mode in --list --strict --reseed; do
    "$bin" replay "$f" $mode >/dev/null 2>"$out/e" ||
      fail "$f ($mode) is refused: $(cat "$out/e")"
  done
done
good_saved=$good
good="$out/refused/malformed-credential.reassert.db"
expect_bad_meta refused-exit-0 "$(meta exit 0)" "meta desired"
good=$good_saved

# Usage: exit 64.
for args in "" "--list" "$good --list --strict" "$good --op kube.*" \
  "$good --json --list" "$good --bogus" "$good --list --op" "$good --reseed --list" \
  "$good --list --strategy lazy" "$good --reseed --strategy" "$good --reseed --strategy bogus" \
  "$good --strict --strategy bogus" "$good --to-scenario $out/x.yaml --strategy lazy" \
  "$good --to-scenario" "$good --json --to-scenario $out/x.yaml" \
  "$good --reseed --to-scenario $out/x.yaml"; do
  # shellcheck disable=SC2086 # word splitting is the point
  "$bin" replay $args >/dev/null 2>&1
  rc=$?
  [ $rc -eq 64 ] || fail "replay $args: exit $rc, expected 64"
done

# --list filters by operation; the timeline holds no workflow command.
"$bin" replay "$good" --list --op 'talos.*' >"$out/list"
grep -v '^seq' "$out/list" | grep -qv ' talos\.' && fail "--op 'talos.*' lists other operations"
grep -q ' talos\.reboot ' "$out/list" || fail "--op 'talos.*' lists no talos.reboot"
grep -q '^::' "$out/list" && fail "the timeline starts a line with a workflow command"

# run --record never replaces a file.
echo keep >"$out/exists.db"
"$bin" sim init --scenario "$src"/scenarios/two-run-stage-reassert.yaml --db "$out/w.db" \
  >/dev/null 2>&1 || fail "sim init failed"
"$bin" run --transport "sim:$out/w.db" --desired current --record "$out/exists.db" \
  >"$out/o" 2>&1
rc=$?
[ $rc -eq 64 ] || fail "run --record onto an existing file: exit $rc, expected 64"
[ "$(cat "$out/exists.db")" = keep ] || fail "run --record replaced an existing file"
"$bin" run --transport "sim:$out/w.db" --desired current --record "$out/new.db" >/dev/null 2>&1
"$bin" replay "$out/new.db" --strict >"$out/o" 2>&1 || fail "run --record's cassette: $(cat "$out/o")"

# Replay's mode (DESIGN §7, a contract: `replay CASSETTE [--strict|--reseed]
# [--strategy lazy|eager] [--json]`): the mode is optional — strict replay,
# the regression check §8 makes from a recording — and --strategy goes
# with --strict too: a strategy other than the recorded one is replayed
# under it, and the first call it changes is a divergence (exit 1) that
# says which strategy each side ran.
"$bin" replay "$good" >"$out/o" 2>&1 || fail "replay CASSETTE (no mode): exit $?: $(head -c 300 "$out/o")"
grep -q "^strict replay of .*counters equal" "$out/o" || fail "replay CASSETTE is not a strict replay: $(head -c 300 "$out/o")"
"$bin" replay "$good" --json >"$out/o" 2>"$out/e" || fail "replay CASSETTE --json: exit $?"
jq -e '.diverged_at == null and .recorded == .replayed' "$out/o" >/dev/null ||
  fail "replay CASSETTE --json is not the strict document: $(head -c 300 "$out/o")"
"$bin" replay "$good" --strict --strategy lazy >"$out/o" 2>&1 ||
  fail "--strict --strategy <the recorded one>: exit $?: $(head -c 300 "$out/o")"
"$bin" replay "$good" --strategy eager >"$out/o" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "strict replay under another strategy: exit $rc, expected 1 (a divergence)"
grep -q "diverged at seq" "$out/o" && grep -q "recorded under lazy, replayed under eager" "$out/o" ||
  fail "strict replay under another strategy does not say so: $(head -c 400 "$out/o")"

# No writer of reassert replaces a file or writes through a
# symlink (the house rule of run --record, --record-runtime-proof and
# sweep --emit-scenario). replay --to-scenario onto either: exit 64, one
# sentence naming OUT, before any replay, the file and the link's target
# untouched.
echo precious >"$out/existing.yaml"
echo victim >"$out/victim"
ln -s "$out/victim" "$out/link.yaml"
ln -s "$out/nowhere" "$out/dangling.yaml"
for o in existing.yaml link.yaml dangling.yaml; do
  "$bin" replay "$good" --to-scenario "$out/$o" >"$out/o" 2>"$out/e"
  rc=$?
  [ $rc -eq 64 ] || fail "--to-scenario onto $o: exit $rc, expected 64"
  [ "$(wc -l <"$out/e")" -eq 1 ] && grep -qF "$out/$o" "$out/e" ||
    fail "--to-scenario onto $o: not one sentence naming it: $(head -c 300 "$out/e")"
  [ -s "$out/o" ] && fail "--to-scenario onto $o: wrote to stdout: $(head -c 300 "$out/o")"
done
# 64 wins over 65 (DESIGN §7): a bad cassette onto an existing OUT is 64.
"$bin" replay "$out/text.db" --to-scenario "$out/existing.yaml" >/dev/null 2>&1
rc=$?
[ $rc -eq 64 ] || fail "a bad cassette --to-scenario onto an existing file: exit $rc, expected 64"
[ "$(cat "$out/existing.yaml")" = precious ] || fail "--to-scenario replaced an existing file"
[ "$(cat "$out/victim")" = victim ] || fail "--to-scenario wrote through a symlink"
[ -e "$out/nowhere" ] && fail "--to-scenario created a dangling symlink's target"
# ... and sim --record DIR refuses an existing DIR/<scenario>.<run>.db (a
# file or a symlink) naming it, before any run: no other cassette appears.
mkdir "$out/rec2" "$out/rec3"
echo keep >"$out/rec2/two-run-stage-reassert.reassert.db"
ln -s "$out/victim" "$out/rec3/two-run-stage-reassert.stage.db"
for d in rec2 rec3; do
  "$bin" sim --record "$out/$d" --strategy lazy "$src"/scenarios/two-run-stage-reassert.yaml \
    >"$out/o" 2>"$out/e"
  rc=$?
  [ $rc -eq 64 ] || fail "sim --record onto an existing cassette ($d): exit $rc, expected 64"
  grep -qF "$out/$d/two-run-stage-reassert." "$out/e" ||
    fail "sim --record ($d): the refusal does not name the file: $(head -c 300 "$out/e")"
  [ "$(ls -A "$out/$d" | wc -l)" -eq 1 ] ||
    fail "sim --record ($d) wrote before refusing: $(ls "$out/$d")"
done
[ "$(cat "$out/rec2/two-run-stage-reassert.reassert.db")" = keep ] ||
  fail "sim --record replaced an existing cassette"
[ "$(cat "$out/victim")" = victim ] || fail "sim --record wrote through a symlink"

# A symlinked FOLDER on the way to a cassette is
# the user's choice (a CI artifact path often is one): `run --record
# LINK/x.db` and `sim --record LINK` record through it (exit 0, a cassette
# that replays), where SQLite's no-symlink open used to fail the run and
# leave a 0-byte file behind.
mkdir "$out/realdir"
ln -s "$out/realdir" "$out/linkdir"
"$bin" sim --record "$out/linkdir" --strategy lazy "$src/scenarios/cost/lazy-redo-bound.yaml" \
  >"$out/o" 2>"$out/e" || fail "sim --record through a symlinked folder: $(head -c 300 "$out/e")"
"$bin" sim init --scenario "$src/scenarios/two-run-stage-reassert.yaml" --db "$out/link-world.db" >/dev/null
"$bin" run --transport "sim:$out/link-world.db" --desired current --record "$out/linkdir/x.db" \
  >"$out/o" 2>"$out/e" || fail "run --record through a symlinked folder: $(head -c 300 "$out/e")"
"$bin" replay "$out/realdir/x.db" --strict >/dev/null 2>&1 ||
  fail "the cassette recorded through a symlinked folder does not replay"
[ -z "$(find "$out/realdir" -type f -size 0)" ] || fail "an empty cassette was left behind"

[ $status -eq 0 ] && echo "cassette reading: every bad file exits 65 naming it"
exit $status
