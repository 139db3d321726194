#!/bin/sh
# The harness's own trust rules (DESIGN.md §5.1, §7, §7.1; issue 10): hostile
# and careless input must never give a false PASS, print a secret, write
# outside the harness's directories, forge a workflow command, crash or hang,
# or be misreported. One line per failing case, then "N passed, N failed".
#
#   tests/harness_trust.sh BUILD/reassert SOURCE_ROOT
#
# Inputs: the text scenarios live in tests/harness/inputs/; binary or path-dependent ones
# (NUL bytes, invalid UTF-8, run names and {tmp} paths aimed at a sandbox, the
# 1 MB alias file, the 20 MB password, deep nesting, SQLite files that are not
# worlds, --config files) are generated here, under a private directory that
# is removed on exit. Every invocation runs under `timeout`; a timeout fails.
set -u
# The checks read the GitHub Actions form (its annotations; forging matters
# where the runner parses commands): a GitHub Actions step. Plain text is
# tests/check_ci_native.sh's.
GITHUB_ACTIONS=true
export GITHUB_ACTIONS
bin=$1
src=$2
case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac
case $src in /*) ;; *) src=$(pwd)/$src ;; esac
bad=$src/tests/harness/inputs
T=${HARNESS_TIMEOUT:-20}   # seconds per invocation
FAST=5                     # seconds for inputs that must be cheap (aliases)
work=$(mktemp -d "${TMPDIR:-/tmp}/harness-trust.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT INT TERM
gen=$work/gen
sandbox=$work/sandbox      # nothing may ever appear here
mkdir "$gen" "$sandbox" "$work/cwd"
cd "$work/cwd" || exit 2   # the binary runs with cwd in a directory we own
passes=0
fails=0
have() { command -v "$1" >/dev/null 2>&1; }
have python3 || { echo "FAIL: setup: python3 is required"; echo "0 passed, 1 failed"; exit 1; }

ok() { passes=$((passes + 1)); }
no() { echo "FAIL: $1: $2"; fails=$((fails + 1)); }
# snip FILE: the first 300 bytes on one line, control characters made visible.
snip() { head -c 300 "$1" | tr '\n\r' '  ' | tr -c '[:print:]' '?'; }

# x NAME [timeout] -- ARGS...: run the binary; $work/NAME.{out,err,all}; sets rc.
x() {
  n=$1; shift; t=$T
  if [ "$1" != "--" ]; then t=$1; shift; fi
  shift
  timeout -k 5 "$t" "$bin" "$@" >"$work/$n.out" 2>"$work/$n.err"
  rc=$?
  cat "$work/$n.out" "$work/$n.err" >"$work/$n.all"
}
# rc_in CASE NAME CODE...: the last x's exit status is one of CODE...
rc_in() {
  c=$1; n=$2; shift 2
  for _w in "$@"; do [ "$rc" -eq "$_w" ] && return 0; done
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then why="timed out (exit $rc)"; else why="exit $rc"; fi
  no "$c" "expected exit $*, got $why: $(snip "$work/$n.all")"
  return 1
}
has() { grep -qF -- "$2" "$work/$1.all"; }
# locates NAME FILE LINE: the output names FILE:LINE:COL (LINE empty = any).
locates() {
  b=$(basename "$2" | sed 's/[.]/[.]/g')
  grep -qE -- "$b:${3:-[0-9]+}:[0-9]+" "$work/$1.all"
}
line_of() { grep -n -F -- "$2" "$1" | grep -v '^[0-9]*:[[:space:]]*#' | head -n 1 | cut -d: -f1; }

# A scenario load error: exit 65 and file:line:col at the line holding PATTERN.
load_error() { # CASE FILE PATTERN
  x le -- sim --strategy lazy "$2"
  rc_in "$1" le 65 || return
  l=""; [ -n "$3" ] && l=$(line_of "$2" "$3")
  if locates le "$2" "$l"; then ok; else
    no "$1" "exit 65 but no $(basename "$2"):${l:-N}:COL in: $(snip "$work/le.all")"; fi
}
# Workflow commands only from the program: no line (CR counts as a line
# break too) may start a command whose text is the injected marker.
forged() { tr '\r' '\n' <"$work/$1.all" | grep -qE '^::[a-z-]+( [^:]*)?::FORGED'; }

# ---------------------------------------------------------------- false PASS
# A valid first run, then a byte that is not UTF-8 text, then a run that must
# fail. Cutting the file at the bad byte would pass; the file must not load.
scen_head='name: cut-short
seed: 1
cluster: {preset: prod, credential: current}
desired: current
runs:
  - name: first
    expect: {exit: 0}'
scen_tail='  - name: second
    expect: {exit: 99}'
mkcut() { # FILE PRINTF-LINE
  { printf '%s\n' "$scen_head"; printf "$2"; printf '%s\n' "$scen_tail"; } >"$1"
}
mkcut "$gen/nul-in-comment.yaml" '# a comment \000 with a NUL byte\n'
mkcut "$gen/nul-in-value.yaml" '  - name: "mid\000dle"\n    expect: {exit: 0}\n'
mkcut "$gen/bad-utf8-in-comment.yaml" '# a comment \377\376 that is not UTF-8\n'
mkcut "$gen/overlong-utf8-in-value.yaml" '  - name: "x\300\257y"\n    expect: {exit: 0}\n'
mkcut "$gen/surrogate-utf8.yaml" '# CESU surrogate \355\240\200 in a comment\n'
for f in nul-in-comment nul-in-value bad-utf8-in-comment overlong-utf8-in-value surrogate-utf8; do
  x le -- sim --strategy lazy "$gen/$f.yaml"
  if rc_in "$f" le 65; then
    if locates le "$gen/$f.yaml" 8; then ok; else no "$f" "exit 65 but no $f.yaml:8:COL: $(snip "$work/le.all")"; fi
  fi
done
# A file that ends inside a multi-byte sequence.
{ printf '%s\n' "$scen_head"; printf '# truncated \342\202'; } >"$gen/truncated-utf8.yaml"
x le -- sim --strategy lazy "$gen/truncated-utf8.yaml"
rc_in truncated-utf8 le 65 && ok

# --config files with a NUL / invalid UTF-8 byte: the run must refuse them
# (65), so a scenario expecting 65 passes; a control config must be accepted.
printf 'sync.attempts: 5\n' >"$gen/good-config.yaml"
printf 'sync.attempts: 5\n# \000\nlease.name: "NOT A DNS LABEL"\n' >"$gen/nul-config.yaml"
printf 'sync.attempts: 5\n# \377\nlease.name: "NOT A DNS LABEL"\n' >"$gen/utf8-config.yaml"
mkcfg() { # SCENARIO CONFIG EXIT
  printf 'name: config-check\nseed: 1\ncluster: {preset: prod, credential: current}\ndesired: current\nruns:\n  - name: r\n    args: [--config, "%s"]\n    expect: {exit: %s}\n' "$2" "$3" >"$1"
}
mkcfg "$gen/cfg-good.yaml" "$gen/good-config.yaml" 0
mkcfg "$gen/cfg-nul.yaml" "$gen/nul-config.yaml" 65
mkcfg "$gen/cfg-utf8.yaml" "$gen/utf8-config.yaml" 65
x le -- sim --strategy lazy "$gen/cfg-good.yaml"; rc_in config-control le 0 && ok
x le -- sim --strategy lazy "$gen/cfg-nul.yaml"; rc_in config-nul-byte le 0 && ok
x le -- sim --strategy lazy "$gen/cfg-utf8.yaml"; rc_in config-invalid-utf8 le 0 && ok

# Unknown keys, kinds, counters and unresolvable references: load errors.
load_error writes-by-kind-unknown "$bad/unknown-writes-kind.yaml" Sekret
load_error expect-key-unknown "$bad/unknown-expect-key.yaml" exits-politely
load_error delta-counter-unknown "$bad/unknown-counter.yaml" writez
load_error ref-talos-unknown-node "$bad/unknown-talos-node.yaml" "talos: nope"
load_error ref-bad-shape "$bad/bad-ref-shape.yaml" "Secret/x"
load_error ref-event-unknown-node "$bad/unknown-node-event.yaml" prod-worker-99
load_error ref-state-unknown-credential "$bad/unknown-catalogue-state.yaml" nosuch
load_error ref-event-unknown-credential "$bad/unknown-catalogue-event.yaml" nosuch
load_error ref-desired-unknown-credential "$bad/unknown-desired.yaml" nosuch
load_error fault-effect-unknown "$bad/unknown-fault-effect.yaml" explode
load_error strategies-unknown "$bad/unknown-strategy.yaml" fast
load_error by-strategy-unknown "$bad/unknown-by-strategy.yaml" fast
load_error duration-no-unit "$bad/bad-duration.yaml" "advance: 5"
load_error duration-negative "$bad/negative-duration.yaml" "for: -5s"
load_error clock-step-unbounded "$bad/clock-step-unbounded.yaml" "advance: -100000h"
load_error clock-start-not-a-date "$bad/clock-start-not-a-date.yaml" "2026-02-30"
load_error clock-unknown-key "$bad/clock-unknown-key.yaml" "timezone:"
load_error skew-wrong-type "$bad/skew-wrong-type.yaml" "skew: 300"
load_error ref-names-no-object "$bad/ref-names-no-object.yaml" "flux-sytem"
load_error ref-during-check-names-no-object "$bad/ref-during-check-names-no-object.yaml" "prod-wroker-2"
load_error ref-created-later "$bad/ref-created-later.yaml" "ConfigMap/default/late, merge"
load_error check-empty "$bad/check-empty.yaml" "check: []"
load_error check-unknown-form "$bad/check-unknown-form.yaml" "present: true"
load_error check-in-perturb-menu "$bad/check-in-perturb-menu.yaml" "check:"
load_error output-not-contains-string "$bad/output-not-contains-string.yaml" "output-not-contains:"
load_error duration-overflow "$bad/duration-overflow.yaml" 99999999999
load_error nth-zero "$bad/nth-zero.yaml" "nth: 0"
load_error seed-overflow "$bad/huge-seed.yaml" "seed:"
load_error workers-unbounded "$bad/too-many-workers.yaml" "workers:"
load_error fanout-over-256 "$bad/fanout-257.yaml" "fanout-namespaces"
# The largest cluster the loader admits must still finish (a rotation of
# every node); a bound that admits a multi-minute run is no bound.
printf 'name: workers-at-bound\nseed: 1\ncluster: {preset: prod, credential: previous, workers: 4096}\ndesired: current\nruns:\n  - name: r\n' >"$gen/workers-at-bound.yaml"
x le 60 -- sim --strategy lazy "$gen/workers-at-bound.yaml"; rc_in workers-at-bound-finishes le 0 1 65 && ok
load_error duplicate-key "$bad/duplicate-key.yaml" "exit: 1"
load_error second-yaml-document "$bad/second-document.yaml" ""
load_error invariants-off-without-reason "$bad/invariants-no-reason.yaml" "invariants:"
load_error invariants-off-unknown "$bad/invariants-unknown.yaml" 99
load_error no-runs "$bad/no-runs.yaml" "runs:"
load_error args-transport "$bad/args-transport.yaml" "--transport"
# 257 fan-out namespaces given as a list are cut the same way.
{ printf 'name: fanout-list\nseed: 1\ncluster:\n  preset: prod\n  credential: current\n  fanout-namespaces:\n'
  i=1; while [ $i -le 257 ]; do printf '    - ns-%d\n' $i; i=$((i + 1)); done
  printf 'desired: current\nruns:\n  - name: r\n    expect: {exit: 0}\n'; } >"$gen/fanout-list-257.yaml"
load_error fanout-list-over-256 "$gen/fanout-list-257.yaml" "fanout-namespaces"

# A fault or during entry that never fires is a scenario failure.
x le -- sim --strategy lazy "$bad/fault-never-fires.yaml"; rc_in fault-never-fires le 1 && ok
x le -- sim --strategy lazy "$bad/during-never-fires.yaml"; rc_in during-never-fires le 1 && ok

# A run whose process dies by a signal fails, naming the signal. A run that
# a `crash` fault may end runs in a process of its own (one that never
# fires here): it is killed (SIGABRT, by its pid) while it works on a big
# cluster. (Any other run runs in the runner's process: its death is the
# runner's, exit by that signal, never a pass.)
printf 'name: abort-no-expect\nseed: 1\ncluster: {preset: prod, credential: previous, workers: 150, fanout-namespaces: 80}\ndesired: current\nruns:\n  - name: r\n    faults: [{on: "kube.get *", nth: 100000, crash: true}]\n' >"$gen/abort.yaml"
timeout -k 5 60 "$bin" sim --strategy lazy "$gen/abort.yaml" >"$work/abort.all" 2>&1 &
tpid=$!
victim=""; i=0
while [ $i -lt 200 ] && [ -z "$victim" ]; do
  simpid=$(ps -e -o pid= -o ppid= | awk -v p="$tpid" '$2 == p {print $1; exit}')
  [ -n "$simpid" ] && victim=$(ps -e -o pid= -o ppid= | awk -v p="$simpid" '$2 == p {print $1; exit}')
  [ -z "$victim" ] && sleep 0.05
  i=$((i + 1))
done
if [ -n "$victim" ]; then kill -ABRT "$victim" 2>/dev/null || victim=""; fi
wait "$tpid"; rc=$?
if [ -z "$victim" ]; then no abort-no-expect "could not catch the run's child process to kill it"
elif [ "$rc" -eq 1 ] && grep -q 'died by SIGABRT' "$work/abort.all"; then ok
else no abort-no-expect "a run killed by SIGABRT: sim exit $rc, want 1 naming the signal: $(snip "$work/abort.all")"; fi

# ---------------------------------------------------------------- secrets
# Distinctive catalogue credentials (tests/harness/inputs/secret-*.yaml): no encoding of
# any of them may appear in any output byte.
cat >"$gen/scan.py" <<'EOF'
import base64, json, sys
creds = [("leak-bot", "PwPrev-Kx93-LEAKCANARY-a1"), ("leak-bot", "PwCurr-Zq71-LEAKCANARY-b2"),
         ("leak-bot", 'PwQuot"Hh08\\LEAKCANARY-d4'), ("tok-user", "TokPw-Mm52-LEAKCANARY-c3"),
         ("", "hunter2-LEAKCANARY-e5")]
def frags(s):
    b = s.encode()
    out = set()
    for enc in (base64.b64encode, base64.urlsafe_b64encode):
        for k in range(3):
            e = enc(b"\0" * k + b).decode().rstrip("=")
            start = {0: 0, 1: 2, 2: 3}[k]
            f = e[start:len(e) - 4]
            if len(f) >= 12:
                out.add(f)
    return out
needles = {}
for user, pw in creds:
    forms = [pw] + ([user + ":" + pw, base64.b64encode((user + ":" + pw).encode()).decode()] if user else [])
    for f in forms:
        for g in {f, json.dumps(f)[1:-1], json.dumps(json.dumps(f)[1:-1])[1:-1]}:
            needles[g] = pw
            for h in frags(g):
                needles[h] = pw + " (base64)"
bad = 0
shown = 0
for path in sys.argv[1:]:
    try:
        data = open(path, "rb").read().decode("utf-8", "replace")
    except OSError:
        continue
    for n, what in needles.items():
        if n in data:
            if shown < 3:
                print("%s holds %s" % (path.rsplit("/", 1)[-1], what))
            shown += 1
            bad = 1
            break
sys.exit(bad)
EOF
leaks() { python3 "$gen/scan.py" "$@" | tr '\n' ';'; }
for f in secret-state-credential secret-state-path secret-state-path-token secret-state-path-quoted secret-output-contains secret-rotation-fails; do
  x st -- sim --strategy lazy "$bad/$f.yaml"; strc=$rc
  x sj -- sim --strategy lazy --json "$bad/$f.yaml"
  rm -f "$work/sx.xml"
  x sx -- sim --strategy lazy --junit "$work/sx.xml" "$bad/$f.yaml"
  l=$(leaks "$work/st.all" "$work/sj.all" "$work/sx.all" "$work/sx.xml")
  if [ "$strc" -ne 1 ]; then no "$f" "the scenario must fail (exit 1), got $strc: $(snip "$work/st.all")"
  elif [ -n "$l" ]; then no "$f" "a credential is printed: $l"
  else ok; fi
done
# run --desired with a name that could be a secret: never echoed.
x dm -- run --transport "sim:$work/no-such-world.db" --desired hunter2-LEAKCANARY-e5
l=$(leaks "$work/dm.all")
if [ -n "$l" ]; then no desired-echo-missing-world "the --desired text is echoed: $l"; else ok; fi
x init -- sim init --scenario "$bad/secret-state-credential.yaml" --db "$work/world.db"
if [ "$rc" -ne 0 ] || [ ! -s "$work/world.db" ]; then
  no desired-echo-unknown-name "no world to run against: sim init exited $rc: $(snip "$work/init.all")"
  no desired-echo-password "no world to run against (sim init)"
  no config-missing-run "no world to run against (sim init)"
  no config-missing-run-json "no world to run against (sim init)"
else
  cp "$work/world.db" "$work/w1.db"
  x dm -- run --transport "sim:$work/w1.db" --desired hunter2-LEAKCANARY-e5
  l=$(leaks "$work/dm.all")
  if rc_in desired-echo-unknown-name dm 65; then
    if [ -n "$l" ]; then no desired-echo-unknown-name "echoed: $l"; else ok; fi; fi
  x dm -- run --transport "sim:$work/w1.db" --desired PwCurr-Zq71-LEAKCANARY-b2
  l=$(leaks "$work/dm.all")
  if rc_in desired-echo-password dm 65; then
    if [ -n "$l" ]; then no desired-echo-password "echoed: $l"; else ok; fi; fi
  x cm -- run --transport "sim:$work/w1.db" --desired current --config /nonexistent/reassert.yaml
  if rc_in config-missing-run cm 65; then
    if has cm "scenario" || ! has cm "config"; then no config-missing-run "the message must be about the config: $(snip "$work/cm.all")"; else ok; fi; fi
  x cj -- run --output json --transport "sim:$work/w1.db" --desired current --config /nonexistent/reassert.yaml
  if rc_in config-missing-run-json cj 65; then
    if python3 -c 'import json,sys; json.load(sys.stdin)' <"$work/cj.out" 2>/dev/null; then ok; else
      no config-missing-run-json "stdout is not one JSON document: $(snip "$work/cj.out")"; fi; fi
fi

# ------------------------------------------------ writes outside directories
up=../../../../../../../../../../../../../../..
printf 'name: escape-run-name\nseed: 1\ncluster: {preset: prod, credential: current}\ndesired: current\nruns:\n  - name: %s%s/victim\n    expect: {exit: 0}\n' "$up" "$sandbox" >"$gen/escape-run-name.yaml"
load_error run-name-traversal "$gen/escape-run-name.yaml" victim
if [ -n "$(ls -A "$sandbox")" ]; then no run-name-traversal-writes "files appeared outside {tmp}: $(ls -A "$sandbox" | tr '\n' ' ')"; rm -rf "${sandbox:?}"/*; else ok; fi
printf 'name: escape-tmp\nseed: 1\ncluster: {preset: prod, credential: current}\ndesired: current\nruns:\n  - name: r\n    args: [--record-runtime-proof, "{tmp}/%s%s/proof.json"]\n    expect: {exit: 0}\n' "$up" "$sandbox" >"$gen/escape-tmp.yaml"
load_error tmp-traversal "$gen/escape-tmp.yaml" proof.json
if [ -n "$(ls -A "$sandbox")" ]; then no tmp-traversal-writes "files appeared outside {tmp}: $(ls -A "$sandbox" | tr '\n' ' ')"; rm -rf "${sandbox:?}"/*; else ok; fi
load_error run-name-slash "$bad/run-name-slash.yaml" "a/b"
load_error run-name-uppercase "$bad/run-name-upper.yaml" Reassert
load_error run-name-trailing-dash "$bad/run-name-trailing-dash.yaml" "reassert-"
load_error run-name-empty "$bad/run-name-empty.yaml" 'name: ""'
load_error run-name-newline "$bad/run-name-newline.yaml" FORGED

# ------------------------------------------------------ annotation injection
x an -- sim --strategy lazy "$bad/run-name-newline.yaml"
if forged an; then no inject-run-name "a forged workflow command: $(snip "$work/an.all")"; else ok; fi
x an -- sim --strategy lazy "$bad/scenario-name-newline.yaml"
if forged an; then no inject-scenario-name "a forged workflow command: $(snip "$work/an.all")"; else ok; fi
x an -- sim --strategy lazy "$bad/lease-holder-injection.yaml"
if forged an; then no inject-lease-holder "a forged workflow command from the Lease holder"
elif ! has an "FORGED-LEASE-LF"; then no inject-lease-holder "the holder is not named at all: $(snip "$work/an.all")"
else ok; fi
if has an "FORGED-LEASE-CR%0A::error::FORGED-LEASE-PCT"; then
  no inject-lease-holder-percent "a literal %0A in the holder is passed through (want %250A)"
elif has an "%250A::error::FORGED-LEASE-PCT"; then ok
else no inject-lease-holder-percent "the holder's % is not escaped as %25: $(snip "$work/an.all")"; fi

# ----------------------------------------------------------- crash and hang
sqlite_mk() { # FILE SQL
  python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.executescript(sys.argv[2]); c.commit(); c.close()' "$1" "$2"
}
sqlite_mk "$gen/not-a-world.db" "create table t(a); insert into t values (1);"
: >"$gen/empty.db"
printf 'this is not an SQLite file\n' >"$gen/text.db"
for w in not-a-world empty text; do
  before=$(sha256sum "$gen/$w.db" | cut -d' ' -f1)
  x nw -- run --transport "sim:$gen/$w.db" --desired current
  after=$(sha256sum "$gen/$w.db" | cut -d' ' -f1)
  if rc_in "world-$w" nw 65; then
    if [ "$before" != "$after" ]; then no "world-$w" "exit 65 but the file was modified"; else ok; fi
  fi
  if [ -e "$gen/$w.db-wal" ] || [ -e "$gen/$w.db-shm" ] || [ -e "$gen/$w.db-journal" ]; then
    no "world-$w-sidecars" "left -wal/-shm/-journal files next to it"; rm -f "$gen/$w.db-"*
  else ok; fi
done
x nw -- run --transport "sim:$gen/no-such-world.db" --desired current
rc_in world-missing nw 65 && ok
if [ -e "$gen/no-such-world.db" ]; then no world-missing-created "a missing world file was created"; else ok; fi
x nw -- run --transport "sim:$gen" --desired current
rc_in world-is-directory nw 65 && ok

x le -- sim --strategy lazy "$bad/advance-100000h.yaml"; rc_in advance-100000h le 0 65 && ok
x le -- sim --strategy lazy "$bad/advance-huge-seconds.yaml"; rc_in advance-9223372036854775s le 0 65 && ok
x le "$FAST" -- sim --strategy lazy "$bad/billion-laughs.yaml"; rc_in billion-laughs le 65 && ok
# 1 MB of aliases in a legitimate place (a list of output needles).
{ printf 'name: many-aliases\nseed: 1\ncluster: {preset: prod, credential: current}\ndesired: current\nruns:\n  - name: r\n    expect:\n      exit: 0\n      output-contains: [&a "Talos pass clean"'
  python3 -c 'import sys; sys.stdout.write(", *a" * 260000)'
  printf ']\n'; } >"$gen/many-aliases.yaml"
x le "$FAST" -- sim --strategy lazy "$gen/many-aliases.yaml"; rc_in aliases-1mb le 0 65 && ok
# 20 MB password.
{ printf 'name: huge-password\nseed: 1\ncluster: {preset: prod, credential: current}\ndesired: big\ncatalogue:\n  big: {username: u, password: "'
  python3 -c 'import sys; sys.stdout.write("p" * (20 * 1024 * 1024))'
  printf '"}\nruns:\n  - name: r\n    expect: {exit: 0}\n'; } >"$gen/huge-password.yaml"
x le -- sim --strategy lazy "$gen/huge-password.yaml"; rc_in password-20mb le 65 && ok
# Deep nesting must not overflow the stack.
{ printf 'name: deep\nseed: 1\ncluster: {preset: prod, credential: current}\ndesired: current\nabout: '
  python3 -c 'import sys; sys.stdout.write("[" * 200000 + "]" * 200000)'
  printf '\nruns:\n  - name: r\n'; } >"$gen/deep.yaml"
x le -- sim --strategy lazy "$gen/deep.yaml"; rc_in deep-nesting le 65 && ok
: >"$gen/empty.yaml"
load_error empty-file "$gen/empty.yaml" ""
x le -- sim --strategy lazy "$gen/no-such.yaml"; rc_in scenario-missing le 65 && ok
x le -- sim --strategy lazy "$gen"; rc_in scenario-is-directory le 65 && ok

# --------------------------------------------------------------- misreports
x ju -- sim --strategy lazy --junit /proc/nonexistent/x.xml "$bad/expect-ok.yaml"
if [ "$rc" -eq 0 ] || [ "$rc" -eq 124 ]; then no junit-unwritable "exit $rc writing JUnit to /proc/nonexistent/x.xml"; else ok; fi
x ju -- sim --strategy lazy --junit "$gen" "$bad/expect-ok.yaml"
if [ "$rc" -eq 0 ] || [ "$rc" -eq 124 ]; then no junit-to-directory "exit $rc writing JUnit to a directory"; else ok; fi

# Unloadable scenarios appear as failed in --json and --junit.
x mj -- sim --strategy lazy --json "$bad/expect-ok.yaml" "$bad/unknown-expect-key.yaml"
if rc_in unloadable-in-json mj 65; then
  if python3 - "$work/mj.out" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
s = [x for x in d.get("scenarios", []) if "unknown-expect-key" in (x.get("file") or "")]
sys.exit(0 if s and s[0].get("passed") is False else 1)
EOF
  then ok; else no unloadable-in-json "no failed entry for the unloadable file: $(snip "$work/mj.out")"; fi
fi
rm -f "$work/mx.xml"
x mx -- sim --strategy lazy --junit "$work/mx.xml" "$bad/expect-ok.yaml" "$bad/unknown-expect-key.yaml"
if rc_in unloadable-in-junit mx 65; then
  if python3 - "$work/mx.xml" <<'EOF'
import sys, xml.etree.ElementTree as ET
r = ET.parse(sys.argv[1]).getroot()
for e in r.iter():
    if any("unknown-expect-key" in v for v in e.attrib.values()):
        if list(e.iter("failure")) or list(e.iter("error")):
            sys.exit(0)
sys.exit(1)
EOF
  then ok; else no unloadable-in-junit "no failed testcase for the unloadable file: $(snip "$work/mx.xml")"; fi
fi
# JUnit stays valid XML with control characters in names and messages, and
# carries what CI reporters read.
printf 'name: "ctl\\x01\\x1b[31m\\x7f-name"\nabout: "bell \\a here"\nseed: 1\ncluster: {preset: prod, credential: current}\ndesired: current\nruns:\n  - name: r\n    before:\n      - kube.patch:\n          ref: Lease/flux-system/ghcr-auth-refresh\n          merge-patch: {spec: {holderIdentity: "h\\x02\\x1b]0;x\\a<&>]]>"}}\n    expect:\n      exit: 0\n      output-contains: ["\\x03\\x04 <not & there>"]\n' >"$gen/control-chars.yaml"
printf 'name: "broken\\x05"\nseed: 1\ncluster: {preset: prod, credential: current}\ndesired: current\nruns:\n  - name: r\n    colour: "\\x06red"\n' >"$gen/control-chars-unloadable.yaml"
rm -f "$work/cc.xml"
x cc -- sim --strategy lazy --junit "$work/cc.xml" "$gen/control-chars.yaml" "$gen/control-chars-unloadable.yaml" "$bad/expect-ok.yaml"
if [ ! -s "$work/cc.xml" ]; then no junit-control-chars "no JUnit file written (exit $rc)"
elif have xmllint; then
  if xmllint --noout "$work/cc.xml" >"$work/xl.txt" 2>&1; then ok; else no junit-control-chars "invalid XML: $(snip "$work/xl.txt")"; fi
elif python3 -c 'import sys, xml.etree.ElementTree as ET; ET.parse(sys.argv[1])' "$work/cc.xml" 2>"$work/xl.txt"; then ok
else no junit-control-chars "invalid XML: $(snip "$work/xl.txt")"; fi
rm -f "$work/js.xml"
x js -- sim --strategy lazy --junit "$work/js.xml" "$bad/expect-ok.yaml" "$bad/expect-fails.yaml"
if [ ! -s "$work/js.xml" ]; then no junit-shape "no JUnit file written (exit $rc)"; else
  if python3 - "$work/js.xml" >"$work/jsw.txt" <<'EOF'
import sys, xml.etree.ElementTree as ET
r = ET.parse(sys.argv[1]).getroot()
why = []
if r.tag != "testsuites":
    why.append("root is <%s>, not <testsuites>" % r.tag)
suites = [r] if r.tag == "testsuite" else list(r.iter("testsuite"))
if not suites:
    why.append("no <testsuite>")
for s in suites:
    for a in ("tests", "failures", "errors", "skipped", "time"):
        if a not in s.attrib:
            why.append("testsuite lacks %s" % a)
cases = list(r.iter("testcase"))
for c in cases:
    for a in ("classname", "name", "time"):
        if a not in c.attrib:
            why.append("testcase lacks %s" % a)
# expect-ok: 1 run, expect-fails: 2 runs; --strategy lazy => eager skipped.
if len(cases) != 6:
    why.append("%d testcases, want 6 (scenario x strategy x run)" % len(cases))
sk = [c for c in cases if c.find("skipped") is not None]
if len(sk) != 3:
    why.append("%d <skipped/> testcases, want 3 (eager not selected)" % len(sk))
fl = [c for c in cases if c.find("failure") is not None]
if len(fl) < 1:
    why.append("no <failure>")
print("; ".join(sorted(set(why))))
sys.exit(1 if why else 0)
EOF
  then ok; else no junit-shape "$(head -c 300 "$work/jsw.txt")"; fi
fi

# run --output json: exactly one JSON document on stdout for 64 and 65.
json_case() { # CASE CODE ARGS...
  c=$1; want=$2; shift 2
  x oj -- "$@"
  rc_in "$c" oj "$want" || return
  if python3 -c 'import json,sys; json.load(sys.stdin)' <"$work/oj.out" 2>/dev/null; then ok; else
    no "$c" "stdout is not one JSON document: $(snip "$work/oj.out")"; fi
}
json_case run-json-unknown-flag 64 run --output json --bogus
json_case run-json-unknown-flag-first 64 run --bogus --output json
json_case run-json-missing-value 64 run --output json --strategy
json_case run-json-exclusive-flags 64 run --output json --fences --check-only
json_case run-json-missing-world 65 run --output json --transport "sim:$gen/no-such-world.db" --desired current
json_case run-json-not-a-world 65 run --output json --transport "sim:$gen/text.db" --desired current

# Help is help.
x hp -- run --help; rc_in run-help hp 0 && ok
x hp -- sim --help; rc_in sim-help hp 0 && ok
x hp -- sim -h
if rc_in sim-h hp 0; then if has hp "reassert sim"; then ok; else no sim-h "exit 0 but no usage text"; fi; fi
x hp -- sweep --help; rc_in sweep-help hp 0 && ok
x hp -- replay --help; rc_in replay-help hp 0 && ok
x hp -- sim init --help; rc_in sim-init-help hp 0 && ok

# --strategy in a run's args wins and is labelled so.
x sa -- sim --strategy lazy --json "$bad/strategy-in-args.yaml"
if python3 - "$work/sa.out" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
runs = [r for s in d["scenarios"] for r in s.get("runs", [])]
sys.exit(0 if runs and all(r.get("strategy") == "eager" for r in runs) else 1)
EOF
then ok; else no strategy-in-args-label "a run with --strategy eager in its args is not labelled eager: $(snip "$work/sa.out")"; fi

# Option values: strict numbers, and the error names the option.
x sd -- sim --seed +5 "$bad/expect-ok.yaml"; rc_in seed-plus sd 64 && ok
x sd -- sim --seed 99999999999999999999999 "$bad/expect-ok.yaml"; rc_in seed-overflow-flag sd 64 && ok
x sd -- sim --seed " 5" "$bad/expect-ok.yaml"; rc_in seed-space sd 64 && ok
for o in --junit --seed --strategy; do
  x nv -- sim "$bad/expect-ok.yaml" "$o"
  # The first line of the error (not the usage text after it) names the option.
  if rc_in "needs-value$o" nv 64; then if head -n 1 "$work/nv.err" | grep -qF -- "$o"; then ok; else
    no "needs-value$o" "the error does not name $o: $(head -n 1 "$work/nv.err" | tr -c '[:print:]' '?')"; fi; fi
done
# A missing --config file is a config error, said so (scenario-side).
x le -- sim --strategy lazy "$bad/config-missing.yaml"; rc_in config-missing-message le 0 && ok

# Reports: 65 wins over 1; one JSON document even with failures and load
# errors; a failure is an ::error file=,line= annotation; passed runs' output
# is not dumped.
x mx -- sim --strategy lazy "$bad/expect-fails.yaml" "$bad/unknown-expect-key.yaml"; rc_in exit-65-over-1 mx 65 && ok
x mj -- sim --strategy lazy --json "$bad/expect-fails.yaml" "$bad/unknown-expect-key.yaml" "$bad/expect-ok.yaml"
if python3 -c 'import json,sys; json.load(sys.stdin)' <"$work/mj.out" 2>/dev/null; then ok; else
  no sim-json-one-document "stdout is not one JSON document: $(snip "$work/mj.out")"; fi
x fa -- sim --strategy lazy "$bad/expect-fails.yaml"
l=$(line_of "$bad/expect-fails.yaml" "exit: 1}" )
if grep -qE "^::error file=[^,]*expect-fails[.]yaml,line=[0-9]+" "$work/fa.all"; then ok; else
  no failure-annotation "no '::error file=...expect-fails.yaml,line=N::' line: $(snip "$work/fa.all")"; fi
if has fa "holder-PASSRUN-MARKER"; then no passed-run-not-dumped "the output of a run that passed is dumped"; else ok; fi
# A failed check: (before: and during:) and a failed output-not-contains are
# each annotated at their own line.
x cf -- sim "$bad/check-fails-at-its-line.yaml"
if rc_in check-fails cf 1; then
  for p in "path: /spec/unschedulable, equals: true" "credential: previous}" '"registry proof"'; do
    l=$(line_of "$bad/check-fails-at-its-line.yaml" "$p")
    if grep -qE "^::error file=[^,]*check-fails-at-its-line[.]yaml,line=$l::" "$work/cf.all"; then ok; else
      no "check-failure-line-$l" "no '::error file=...check-fails-at-its-line.yaml,line=$l::': $(snip "$work/cf.all")"; fi
  done
fi

# Nothing was written into the working directory or the sandbox.
if [ -n "$(ls -A "$work/cwd" "$sandbox" 2>/dev/null | grep -v ':$' | grep -v '^$')" ]; then
  no no-stray-files "files appeared in the cwd or sandbox: $(ls -A "$work/cwd" "$sandbox" | tr '\n' ' ')"; else ok; fi

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
