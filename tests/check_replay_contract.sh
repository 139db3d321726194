#!/bin/sh
# Record/replay as DESIGN.md §7, §8 and `--help` describe it. Each case
# pins behaviour the design asks for, so it fails if that regressed:
#   - a credential inside cluster text (raw, JSON-escaped, base64 of the
#     password or of user:password at any alignment, URL-safe base64, base64
#     of base64) reaches no cassette, -wal, stdout, stderr, --json, --junit
#     or --report (DESIGN §8 redaction, §5.1, §6.6; H59);
#   - a run killed with SIGKILL mid-way leaves a readable cassette holding
#     every call up to its last (issue item 1), whose strict replay says
#     where the recording ends and exits 1 (no end record: issue 28);
#   - strict replay: an edited request fails at that seq (exit 1, both
#     versions shown); counters that lie fail (exit 1); --json shape;
#   - hostile cassettes (truncated, not SQLite, empty, no schema, a directory,
#     a FIFO, missing, a newer format, a malformed row) exit 65 naming the
#     file (and the seq), never hang; a workflow command inside a recorded
#     target is never forged under GITHUB_ACTIONS=true (DESIGN §7.1);
#   - --reseed --strategy lazy of an eager no-drift run: zero controller
#     restarts and Lease writes (issue item 5); --to-scenario output runs,
#     passes, and is byte-identical run to run; --op GLOB filters.
# Usage: check_replay_contract.sh BINARY SOURCE_DIR
set -u
# A GitHub Actions step, where forged commands would be parsed (plain text:
# tests/check_ci_native.sh).
GITHUB_ACTIONS=true
export GITHUB_ACTIONS
B=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
T=$(mktemp -d)
SERVE_PID=
RUN_PID=
cleanup() {
    [ -n "$RUN_PID" ] && kill -9 "$RUN_PID" 2>/dev/null
    [ -n "$SERVE_PID" ] && kill "$SERVE_PID" 2>/dev/null && wait "$SERVE_PID" 2>/dev/null
    rm -rf "$T"
}
trap cleanup EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }
cd "$T" || exit 1
unset GITHUB_ACTIONS GITHUB_STEP_SUMMARY

USER_=rrc7-bot
PASS_='P4ss+rrc7/q9z="x'

# one python run writes the fixtures and needles.txt: every encoding of the
# password and of user:password the scans below look for (raw, JSON-escaped,
# base64 and URL-safe base64 at each alignment, base64 of base64)
python3 - "$USER_" "$PASS_" <<'PY' || exit 1
import sys, base64, json
u, p = sys.argv[1], sys.argv[2]
up = (u + ':' + p).encode()
needles = []
for s in (p.encode(), up):
    needles += [s, json.dumps(s.decode())[1:-1].encode()]
    for src in (s, base64.b64encode(s)):
        for off in range(3):
            enc = base64.b64encode(b'\0' * off + src)
            core = enc[((off + 2) // 3) * 4:].rstrip(b'=')[:-2]
            needles += [core, core.replace(b'+', b'-').replace(b'/', b'_')]
open('needles.txt', 'wb').write(b'\n'.join(needles) + b'\n')
enc = {'raw': 'pre-' + p + '-post',
       'b64up': 'k=' + base64.b64encode(up).decode(),
       'b64up-a1': base64.b64encode(b'a' + up + b'zz').decode(),
       'b64up-a2': base64.b64encode(b'ab' + up + b'z').decode(),
       'b64pw-a1': base64.b64encode(b'a' + p.encode() + b'zz').decode(),
       'b64url-up': base64.urlsafe_b64encode(up).decode().rstrip('='),
       'b64b64': base64.b64encode(base64.b64encode(up)).decode()}
q = lambda s: "'" + s.replace("'", "''") + "'"
y = ['# Hazard: H59 — a credential in cluster text, in any encoding',
     'name: rrc7-cred', 'seed: 7', 'strategies: [lazy]',
     'cluster: {preset: prod, credential: current, workers: 1, control-planes: 1}',
     'desired: current', 'catalogue:',
     '  current: {username: %s, password: %s}' % (u, q(p)), 'runs:']
for k, v in enc.items():
    y += ['  - name: node-' + k, '    before:',
          '      - kube.patch: {ref: Node/prod-worker-1, merge-patch: '
          '{metadata: {annotations: {rrc7/note: %s}}}}' % q(v),
          '    expect: {exit: 0}']
y += ['  - name: holder-raw', '    before:',
      '      - kube.patch: {ref: Lease/flux-system/ghcr-auth-refresh, merge-patch: '
      '{spec: {holderIdentity: %s}}}' % q('x-' + p + '-sim.other'),
      '    expect: {exit: 1}']
open('cred.yaml', 'w').write('\n'.join(y) + '\n')
open('dc.json', 'w').write(json.dumps({"auths": {"ghcr.io": {"username": u,
    "password": p, "auth": base64.b64encode(up).decode()}}}))
PY
# scan FILE... : no encoding of the password or of user:password in any byte
scan() {
    if grep -a -l -F -f needles.txt "$@"; then return 1; fi
    return 0
}

# ---------------------------------------------------------------- recording
cat > base.yaml <<EOF
# Hazard: none (a record/replay fixture)
name: rrc7-base
seed: 7
cluster: {preset: prod, credential: previous, workers: 1, control-planes: 1}
desired: current
catalogue:
  current: {username: $USER_, password: '$PASS_'}
runs:
  - name: stage
    expect: {exit: 0}
  - name: again
    expect: {exit: 0}
EOF
"$B" sim base.yaml --record rec > base.out 2>&1 || fail "sim --record base.yaml: $(tail -3 base.out)"
L=rec/lazy/rrc7-base.stage.db
E=rec/eager/rrc7-base.again.db
for c in $L $E rec/lazy/rrc7-base.again.db rec/eager/rrc7-base.stage.db; do
    [ -f "$c" ] || fail "sim --record left no $c"
done

# the credential inside cluster text, in many encodings (cred.yaml above)
"$B" sim cred.yaml --record crec --json --junit junit.xml --report rep > cred.json 2> cred.err
rc=$?
[ $rc = 0 ] || fail "sim cred.yaml exit $rc: $(head -c 600 cred.json cred.err)"
n=$(find crec -name '*.db' | wc -l)
[ "$n" = 8 ] || fail "cred.yaml recorded $n cassettes, expected 8"
"$B" sim cred.yaml > cred.txt 2>&1
if scan $(find rec crec rep -type f) base.out cred.json cred.err cred.txt junit.xml; then
    ok "no credential encoding in cassettes, outputs or reports"
else
    fail "a credential encoding reached a file (above)"
fi
# the annotation itself was recorded (so the scan above saw it), redacted
sqlite3 "crec/lazy/rrc7-cred.node-raw.db" \
    "select response from calls where response like '%rrc7/note%'" | grep -q 'pre-fp:' ||
    fail "node-raw: the annotation is not in the cassette as pre-fp:<hex>"

# ------------------------------------------------------------ strict replay
"$B" replay $L --strict > s.out 2>&1 || fail "strict replay of a fresh cassette: $(head -3 s.out)"
"$B" replay $L --strict --json > s.json 2>&1
# DESIGN §8's three keys, and the extensions (where a recording without its
# end record stops, the rows matched, the recorded and replayed exit).
jq -e '(keys == ["diverged_at","ended_at","exit","matched","recorded","replayed"])
       and .diverged_at == null and .ended_at == null and .exit.recorded == .exit.replayed
       and .recorded.writes == .replayed.writes and (.recorded.writes_by_kind|type) == "object"' \
    s.json > /dev/null || fail "--strict --json shape: $(head -c 300 s.json)"

cp $L req.db
sqlite3 req.db "update calls set request=replace(request,'\"value\":\"9\"','\"value\":\"8\"')
                where seq=(select min(seq) from calls where op='kube.patch' and target='Secret/flux-system/variables-base')"
seq=$(sqlite3 req.db "select min(seq) from calls where op='kube.patch' and target='Secret/flux-system/variables-base'")
"$B" replay req.db --strict > req.out 2>&1
rc=$?
if [ $rc = 1 ] && grep -q "diverged at seq $seq" req.out &&
    grep -q '^  recorded: kube.patch Secret/flux-system/variables-base .*"value":"8"' req.out &&
    grep -q '^  replayed: kube.patch Secret/flux-system/variables-base .*"value":"9"' req.out; then
    ok "an edited request fails at its seq with both versions"
else
    fail "edited request at seq $seq: exit $rc: $(head -c 600 req.out)"
fi
scan req.out || fail "the divergence report holds the credential"
"$B" replay req.db --strict --json > req.json 2>/dev/null
jq -e ".diverged_at == $seq" req.json > /dev/null || fail "--json diverged_at: $(head -c 200 req.json)"

cp $L ctr.db
sqlite3 ctr.db "update counters set value='7' where name='writes'"
"$B" replay ctr.db --strict > ctr.out 2>&1
rc=$?
[ $rc = 1 ] && grep -q 'counters differ' ctr.out || fail "a lying counter: exit $rc: $(head -c 300 ctr.out)"

# ---------------------------------------------------------- hostile cassettes
sz=$(stat -c %s $L)
head -c $((sz / 2)) $L > trunc.db
head -c 100 $L > trunc100.db
: > empty.db
echo hello > text.db
sqlite3 noschema.db 'create table x(a)'
sqlite3 nocalls.db 'create table meta(key TEXT PRIMARY KEY, value TEXT)' \
    "insert into meta values('format_version','1')"
mkdir dir.db
mkfifo fifo.db
cp $L newer.db && sqlite3 newer.db "update meta set value='2' where key='format_version'"
cp $L nofv.db && sqlite3 nofv.db "delete from meta where key='format_version'"
for f in trunc.db trunc100.db empty.db text.db noschema.db nocalls.db dir.db fifo.db \
    missing.db newer.db nofv.db; do
    modes=--strict
    case $f in trunc.db | text.db) modes="--list --strict --reseed" ;; esac
    for m in $modes; do
        timeout 20 "$B" replay $f $m > h.out 2> h.err
        rc=$?
        if [ $rc != 65 ] || ! grep -q "cassette $f" h.err || [ "$(wc -l < h.err)" != 1 ]; then
            fail "$f $m: exit $rc (want 65, one line naming the file): $(head -c 300 h.err)"
        fi
    done
done
"$B" replay newer.db --strict 2>&1 | grep -q 'format 2 by a newer reassert' ||
    fail "newer format: the error does not say so"

row() { # name sql expected-words modes
    cp $L "$1.db"
    sqlite3 "$1.db" "$2"
    for m in $4; do
        timeout 20 "$B" replay "$1.db" $m > r.out 2> r.err
        rc=$?
        if [ $rc != 65 ] || ! grep -q "cassette $1.db: seq 20: $3" r.err; then
            fail "$1 $m: exit $rc (want 65 naming seq 20): $(head -c 300 r.err)"
        fi
    done
}
row badresp "update calls set response='{\"apiVersion\":' where seq=20" "the response is not JSON" --reseed
row badreq "update calls set request='{[' where seq=20" "the request is not a JSON object" --strict
row blobresp "update calls set response=x'00010203' where seq=20" "the response is not JSON" --strict
row textstatus "update calls set status='abc' where seq=20" "the status is not" --list
row badop "update calls set op='kube.get
::error::forged' where seq=20" "the operation is not one" --strict

# a workflow command inside a recorded target is escaped, never forged
cp $L wf.db
sqlite3 wf.db "update calls set target='x%0A::error::forged1%0D
::warning::forged2
::endgroup::' where seq=20"
for m in --list --strict; do
    GITHUB_ACTIONS=true "$B" replay wf.db $m > wf.out 2>&1
    if grep -q '^::\(error\|warning\|endgroup\)::\(forged\|$\)' wf.out ||
        ! grep -q 'x%250A::error::forged1%250D%0A::warning::forged2%0A::endgroup::' wf.out; then
        fail "workflow command in a target, $m: $(grep -n forged wf.out | head -3)"
    fi
done

# ------------------------------------------------ reseed, --to-scenario, --op
"$B" replay $E --reseed --strategy lazy --json > rs.json 2> rs.err ||
    fail "reseed of an eager no-drift run: $(head -c 300 rs.err)"
jq -e '.strategy.recorded == "eager" and .strategy.replayed == "lazy"
       and .recorded.controller_restarts >= 1 and .recorded.lease_writes >= 1
       and .replayed.controller_restarts == 0 and .replayed.lease_writes == 0
       and .replayed.writes == 0 and .exit.replayed == 0' rs.json > /dev/null ||
    fail "reseed --strategy lazy of an eager no-drift run (issue item 5): $(head -c 400 rs.json)"

mkdir out
# OUT's folder must hold the cassette (a scenario reads its cassette from
# its own folder tree): refused before anything is written otherwise
"$B" replay $L --to-scenario out/inc.yaml > ts.out 2>&1
[ $? = 64 ] && grep -q 'is not in the folder of out/inc.yaml' ts.out && [ ! -e out/inc.yaml ] ||
    fail "--to-scenario outside the cassette's tree: $(head -3 ts.out)"
"$B" replay $L --to-scenario rec/inc.yaml > ts.out 2>&1 || fail "--to-scenario: $(head -3 ts.out)"
grep -q '^cluster: {cassette: "lazy/rrc7-base.stage.db"}' rec/inc.yaml ||
    fail "--to-scenario: the cassette path is not relative to OUT: $(grep cassette rec/inc.yaml)"
"$B" sim rec/inc.yaml --json > inc1.json 2>&1 || fail "the written scenario fails: $(head -c 400 inc1.json)"
"$B" sim rec/inc.yaml --json > inc2.json 2>&1
cmp -s inc1.json inc2.json || fail "the written scenario is not deterministic"

"$B" replay $L --list --op 'kube.?et' > op.out 2>&1 || fail "--op: $(head -3 op.out)"
n=$(awk 'NR > 1 { print $4 }' op.out | sort -u | tr '\n' ' ') # seq, "+T", "s", op
[ "$n" = "kube.get " ] || fail "--op 'kube.?et' listed ops: $n"
n=$("$B" replay $L --list --op 'run.liveness' | wc -l)
[ "$n" = 1 ] || fail "--op run.liveness (no such call in a Stage): $n lines (want the header only)"
"$B" replay $L --list --op 'nomatch*' > /dev/null 2>&1
[ $? = 64 ] || fail "--op nomatch* (a glob no operation matches) is not 64"
"$B" replay $L --list --op > /dev/null 2>&1
[ $? = 64 ] || fail "--op without a value is not 64"
# --list's times are since the run's start, "+S.mmm s": a live
# recording's clock is the wall clock (here: the rows and vt_start moved to
# epoch milliseconds, as a live run records them), whose epoch seconds say
# nothing about when in the run a call came.
cp $L epoch.db
sqlite3 epoch.db "update calls set vt_ms = vt_ms + 1765000000000; update meta set value = cast(value as integer) + 1765000000000 where key = 'vt_start'"
"$B" replay $L --list > rel.out 2>&1
"$B" replay epoch.db --list > epoch.out 2>&1 || fail "--list of the epoch-time cassette: $(head -3 epoch.out)"
cmp -s rel.out epoch.out || fail "--list of a wall-clock cassette differs from the same run's: $(sed -n 2p epoch.out)"
awk 'NR > 1 && $2 !~ /^\+[0-9]+\.[0-9][0-9][0-9]$/ { bad = 1 } NR > 1 && $3 != "s" { bad = 1 } END { exit bad }' epoch.out ||
  fail "--list times are not +S.mmm s: $(sed -n 2p epoch.out)"
grep -q '^1 *+0\.' epoch.out || fail "--list's first call is not near +0 s: $(sed -n 2p epoch.out)"

# ----------------------------------- a run killed mid-way keeps its calls
"$B" sim init --scenario base.yaml --db w.db --run stage > /dev/null 2>&1 || fail "sim init"
echo 'rrc7-bearer-S3cr3t' > tokens
# over TLS, as against a cluster (no token goes over plain http)
openssl req -x509 -newkey rsa:2048 -nodes -keyout tls.key -out tls.pem -days 2 \
    -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 > /dev/null 2>&1 || fail "openssl"
printf '{}\n' > talosconfig
"$B" sim serve --db w.db --token-file tokens --tls-cert tls.pem --tls-key tls.key \
    > serve.out 2> serve.err &
SERVE_PID=$!
for _ in $(seq 100); do [ -s serve.out ] && break; sleep 0.1; done
URL=$(head -1 serve.out)
cat > kc.yaml <<EOF
apiVersion: v1
kind: Config
clusters: [{name: sim, cluster: {server: "$URL", certificate-authority: $T/tls.pem}}]
users: [{name: u, user: {token: rrc7-bearer-S3cr3t}}]
contexts: [{name: c, context: {cluster: sim, user: u}}]
current-context: c
EOF
printf '#!/bin/sh\ncat "%s/dc.json"\n' "$T" > dec.sh
chmod +x dec.sh
printf 'stringData:\n  ghcr_dockerconfigjson: ENC[AES256_GCM,data:rrc7,iv:1,tag:x,type:str]\n' > secret.enc.yaml
# without --test-facade-clock the repair waits its rollout budget in wall
# time (README), so the run is reliably still going when it is killed
BAO_ADDR=$URL BAO_CACERT=$T/tls.pem BAO_TOKEN=rrc7-bao-token-8c2f REASSERT_REGISTRY_URL=$URL \
    REASSERT_REGISTRY_CACERT=$T/tls.pem "$B" run --kubeconfig kc.yaml \
    --secret-file secret.enc.yaml --decrypt-command "$T/dec.sh {file}" \
    --talosctl /bin/false --talosconfig talosconfig --record killed.db > killed.out 2>&1 &
RUN_PID=$!
for _ in $(seq 150); do
    grep -q 'waiting for every pre-restart pod' killed.out 2>/dev/null && break
    sleep 0.1
done
sleep 0.3
kill -9 $RUN_PID
wait $RUN_PID 2>/dev/null
RUN_PID=
n=$(sqlite3 'file:killed.db?mode=ro' 'select count(*) from calls' 2>/dev/null)
last=$(sqlite3 'file:killed.db?mode=ro' 'select op || " " || target from calls order by seq desc limit 1' 2>/dev/null)
listed=$("$B" replay killed.db --list 2> kl.err | awk 'NR > 1' | wc -l)
if [ -n "$n" ] && [ "$n" -ge 40 ] && [ "$listed" = "$n" ] &&
    sqlite3 'file:killed.db?mode=ro' "select count(*) from calls where op='kube.patch' and target='Deployment/flux-system/kustomize-controller'" | grep -qx 1; then
    ok "killed run: $n calls readable, last '$last'"
else
    fail "killed run: $n calls in the file, $listed listed (last '$last'): $(head -c 300 kl.err)"
fi
"$B" replay killed.db --strict > ks.out 2>&1
rc=$?
# A recording without its end record proves nothing of what came after it:
# exit 1, saying where it ends (issue 28), never a success.
[ $rc -eq 1 ] || fail "strict replay of the killed run exited $rc, expected 1: $(head -3 ks.out)"
grep -q "recording ended at seq $n " ks.out || fail "strict replay of the killed run does not say where the recording ends"
scan killed.db* killed.out ks.out || fail "the killed run's files hold the credential"
grep -q 'rrc7-bearer-S3cr3t' killed.db* && fail "the killed run's cassette holds the bearer token"

[ $fails = 0 ] && echo "check_replay_contract: all passed" && exit 0
echo "check_replay_contract: $fails failed"
exit 1
