#!/bin/sh
# Hazard: H36 — `--fences` prints release commands that embed cluster values
# (Lease holder, node owner, child owner). Pasted into sh, every value must
# round-trip exactly and no command may run; and H27 — `--fences` makes no
# write. Also DESIGN §7.1: a holder holding CR, LF or % is escaped in every
# workflow command, so it cannot forge an annotation or end a group.
# Args: reassert binary, source dir.
set -eu
# A GitHub Actions step: `--fences` prints no ::error:: there, and a forged
# command would be parsed there (plain text: tests/check_ci_native.sh).
GITHUB_ACTIONS=true
export GITHUB_ACTIONS
BIN=$1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T"
fail() { echo "FAIL: $*" >&2; exit 1; }

cat > q.yaml <<YAML
# quoting probe
name: fences-quote
seed: 2
cluster: {preset: prod, credential: current}
desired: current
runs:
  - name: r
    before:
      - kube.patch: {ref: Lease/flux-system/ghcr-auth-refresh, merge-patch: {spec: {holderIdentity: "abc-gh1.1-\$(touch $T/PWNED1)-'q'\"\`touch $T/PWNED2\`\\\\x"}}}
      - kube.patch: {ref: Node/prod-worker-1, merge-patch: {metadata: {annotations: {platform.devantler.tech/ghcr-auth-drain-owner: "o'; touch $T/PWNED3; echo '", platform.devantler.tech/ghcr-auth-drain-phase: claimed}}}}
      - kube.patch: {ref: Kustomization/flux-system/flux-system, merge-patch: {spec: {suspend: true}, metadata: {annotations: {platform.devantler.tech/ghcr-policy-parent-owner: "p\$(touch $T/PWNED4)"}}}}
  - name: forge
    before:
      - kube.patch: {ref: Lease/flux-system/ghcr-auth-refresh, merge-patch: {spec: {holderIdentity: "x\n::error::FORGED\r\n::endgroup::\n::warning::100%"}}}
YAML
"$BIN" sim init --scenario q.yaml --db q.db --run r >/dev/null || fail "sim init r"
"$BIN" run --transport sim:q.db --desired current --fences >fences.txt 2>&1 || fail "--fences exit $?"
grep -q '::error::' fences.txt && fail "--fences printed ::error::"
n=$(grep -c 'release (CAS-guarded' fences.txt || true)
[ "$n" -eq 3 ] || fail "expected 3 release commands, got $n"
# The Lease release is printed last (H31).
tail -n 1 fences.txt | grep -q 'patch lease ghcr-auth-refresh' || fail "Lease release not last"

mkdir bin
cat > bin/kubectl <<'PY'
#!/usr/bin/env python3
import json, sys
a = sys.argv[1:]
ops = json.loads(a[a.index("-p") + 1])
for o in ops:
    if o["op"] == "test" and (o["path"].endswith("-owner") or o["path"].endswith("holderIdentity")):
        print(o["value"])
PY
chmod +x bin/kubectl
grep -o 'kubectl .*' fences.txt > cmds.sh
PATH="$T/bin:$PATH" sh cmds.sh > values.txt || fail "pasted commands failed"
ls "$T"/PWNED* >/dev/null 2>&1 && fail "a pasted release command ran an embedded command"
cat > want.txt <<W
o'; touch $T/PWNED3; echo '
p\$(touch $T/PWNED4)
abc-gh1.1-\$(touch $T/PWNED1)-'q'"\`touch $T/PWNED2\`\\x
W
cmp -s values.txt want.txt || { diff want.txt values.txt >&2; fail "values did not round-trip through sh"; }

# H27: --fences made no write (the world's call log shows the same rv).
"$BIN" run --transport sim:q.db --desired current --fences >fences2.txt 2>&1 || fail "second --fences"
cmp -s fences.txt fences2.txt || fail "--fences changed the world between two reports"

# §7.1: the refusal naming a hostile holder cannot forge a workflow command.
"$BIN" sim init --scenario q.yaml --db f.db --run forge >/dev/null || fail "sim init forge"
set +e
"$BIN" run --transport sim:f.db --desired current >forge.txt 2>&1
rc=$?
set -e
[ "$rc" -eq 1 ] || fail "held Lease: expected exit 1, got $rc"
grep -q '^::error::FORGED' forge.txt && fail "holder forged an ::error:: line"
grep -q '^::warning::100' forge.txt && fail "holder forged a ::warning:: line"
grep -q 'x%0A::error::FORGED%0D%0A::endgroup::%0A::warning::100%25' forge.txt || fail "holder not escaped as %0A/%0D/%25"
"$BIN" run --transport sim:f.db --desired current --output json >forge.json 2>/dev/null || true
python3 -c 'import json,sys; d=json.load(open("forge.json")); sys.exit(0 if d["exit"]==1 and d["outcome"]=="failed" else 1)' || fail "--output json is not one document with exit 1"
echo "ok: release commands quote hostile values; no forged workflow command"
