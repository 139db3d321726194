#!/bin/sh
# Redaction as a property (DESIGN.md §5.1): for random
# credentials — random characters, quotes, backslashes, controls, non-ASCII —
# that survive the credential parser, run a scenario that fails on every
# secret-bearing object (every Secret's data by path, credential checks on
# Secrets, OpenBao and Talos, output-contains needles that are the
# passwords, a rotation that fails mid-way and dumps its output) and assert
# that no encoding of any credential appears in any output byte: text, JSON,
# JUnit, stdout and stderr. A hit prints which form leaked, never the value.
#
#   tests/check_redact_property.sh BUILD/reassert SOURCE_ROOT
#
# The seed is fixed (same credentials on every run, so a failure reproduces);
# REDACT_PROPERTY_SEED and REDACT_PROPERTY_CASES explore further.
set -u
bin=$1
command -v python3 >/dev/null 2>&1 || { echo "FAIL: python3 is required"; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/redact-property.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT INT TERM
cat >"$work/prop.py" <<'EOF'
import base64, json, os, random, subprocess, sys

bin_, work = sys.argv[1], sys.argv[2]
seed = int(os.environ.get("REDACT_PROPERTY_SEED", "20261203"))
cases = int(os.environ.get("REDACT_PROPERTY_CASES", "6"))
rng = random.Random(seed)
POOL = ([chr(c) for c in range(0x21, 0x7F)] * 3 + [" ", "\t", "\n", "\r", "\x01", "\x1f",
        "\x7f", "\u00e9", "\u4e2d", "\U0001F600", "\u2028", '"', "\\", "<", ">", "&", "%", ":"])

def rand_text(lo, hi):
    return "".join(rng.choice(POOL) for _ in range(rng.randint(lo, hi)))

def rand_user():
    alnum = "abcdefghijklmnopqrstuvwxyz0123456789-"
    return "u" + "".join(rng.choice(alnum) for _ in range(rng.randint(4, 12)))

def yq(s):
    """A YAML double-quoted scalar holding s exactly (JSON escapes, which YAML
    reads the same; every non-printable character escaped)."""
    out = []
    for ch in s:
        o = ord(ch)
        if ch == '"': out.append('\\"')
        elif ch == "\\": out.append("\\\\")
        elif o < 0x20 or 0x7F <= o <= 0x9F or ch in "\u2028\u2029" or o > 0xFFFF:
            out.append("\\U%08x" % o if o > 0xFFFF else "\\u%04x" % o)
        else: out.append(ch)
    return '"' + "".join(out) + '"'

def entry(user, pw):
    """A catalogue entry in one of the shapes the parser accepts."""
    shape = rng.randrange(3)
    if shape == 0:
        return "{username: %s, password: %s}" % (user, yq(pw))
    auth = {"auth": base64.b64encode((user + ":" + pw).encode()).decode()}
    if shape == 2:
        auth = {"username": user, "password": pw}
    dc = json.dumps({"auths": {"ghcr.io": auth}}, ensure_ascii=rng.random() < 0.5)
    return "{dockerconfigjson: %s}" % yq(dc)

SECRETS = ["ksail-registry-credentials", "variables-base"]
def scenario(i, old, new):
    (uo, po), (un, pn) = old, new
    state = []
    for ref in ["Secret/flux-system/ksail-registry-credentials", "Secret/flux-system/variables-base",
                "Secret/kyverno/ghcr-auth", "Secret/wedding-app/ghcr-auth"]:
        state.append("        - {ref: %s, path: /data, equals: {}}" % ref)
        state.append("        - {ref: %s, credential: old}" % ref)
    state.append("        - {openbao: infrastructure/ghcr/auth, credential: old}")
    state.append("        - {talos: prod-worker-1, registry-auth: old}")
    return "\n".join([
        "# Property (harness): random credentials never leave the process in any encoding.",
        "name: redact-property-%d" % i, "seed: %d" % (i + 1),
        "cluster: {preset: prod, credential: old}", "desired: new",
        "catalogue:", "  old: " + entry(uo, po), "  new: " + entry(un, pn),
        "runs:",
        "  - name: rotate", "    expect:", "      exit: 99",
        "      output-contains: [%s, %s, %s]" % (yq(pn), yq(po), yq(un + ":" + pn)),
        "      state:"] + state + [
        "  - name: fails-midway",
        "    before:", "      - kube.patch:", "          ref: Secret/flux-system/variables-base",
        "          merge-patch: {data: {}}",
        "    faults:",
        "      - {on: \"kube.patch ExternalSecret/kyverno/ghcr-auth\", fail: 500, and-after: true}",
        "    expect: {exit: 0}", ""])

def frags(b):
    out = set()
    for enc in (base64.b64encode, base64.urlsafe_b64encode):
        for k in range(3):
            e = enc(b"\0" * k + b).decode().rstrip("=")
            f = e[{0: 0, 1: 2, 2: 3}[k]:len(e) - 4]
            if len(f) >= 12: out.add(f)
    return out

def needles(user, pw):
    forms = {"password": pw, "user:password": user + ":" + pw,
             "auth": base64.b64encode((user + ":" + pw).encode()).decode()}
    out = {}
    for what, f in forms.items():
        for esc_name, g in [("raw", f), ("json", json.dumps(f)[1:-1]),
                            ("json-ascii", json.dumps(f, ensure_ascii=True)[1:-1]),
                            ("json-utf8", json.dumps(f, ensure_ascii=False)[1:-1]),
                            ("json-twice", json.dumps(json.dumps(f, ensure_ascii=False)[1:-1],
                                                      ensure_ascii=False)[1:-1])]:
            out[g.encode()] = "%s (%s)" % (what, esc_name)
            for h in frags(g.encode()):
                out[h.encode()] = "%s (%s, base64)" % (what, esc_name)
    return out

bad = 0
done = 0
attempts = 0
while done < cases:
    attempts += 1
    if attempts > cases * 20:
        print("FAIL: only %d of %d random credentials survived the parser" % (done, cases)); sys.exit(1)
    old = (rand_user(), rand_text(12, 40))
    new = (rand_user(), rand_text(12, 40))
    path = os.path.join(work, "p%d.yaml" % done)
    open(path, "w", encoding="utf-8").write(scenario(done, old, new))
    junit = os.path.join(work, "p%d.xml" % done)
    outs = []
    codes = []
    for args in (["sim", "--strategy", "lazy", path],
                 ["sim", "--strategy", "lazy", "--json", "--junit", junit, path]):
        p = subprocess.run([bin_] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        outs += [p.stdout, p.stderr]
        codes.append(p.returncode)
    if codes[0] == 65:
        continue  # this credential did not survive the parser (or the loader): draw another
    if codes != [1, 1]:
        print("FAIL: case %d (seed %d): the scenario must fail with exit 1, got %s" % (done, seed, codes))
        bad = 1
    try:
        outs.append(open(junit, "rb").read())
    except OSError:
        print("FAIL: case %d: no JUnit report written" % done); bad = 1
    hits = set()
    for cred_name, (u, pw) in (("old", old), ("new", new)):
        for n, what in needles(u, pw).items():
            if any(n in o for o in outs):
                hits.add("%s %s" % (cred_name, what))
    if hits:
        print("FAIL: case %d (seed %d): credential forms in the output: %s" % (done, seed, ", ".join(sorted(hits))))
        bad = 1
    if not any(b"<redacted:" in o or b"fingerprint sha256:" in o for o in outs):
        print("FAIL: case %d: nothing was redacted: the scenario no longer touches a secret" % done)
        bad = 1
    done += 1
if not bad:
    print("redaction property: %d random credential pairs (seed %d, %d drawn), no encoding in any output byte"
          % (done, seed, attempts))
sys.exit(bad)
EOF
python3 "$work/prop.py" "$bin" "$work"
