#!/bin/sh
# The GitHub files parse and say what the README promises: the workflow
# (.github/workflows/ci.yml) runs `make test` and `make lint` on
# ubuntu-latest and uploads the JUnit, the scenario report and the coverage
# report; the composite action (action.yml, `uses: ./`) takes a `command`,
# builds reassert and runs the command through the environment (never by
# splicing ${{ inputs.command }} into a script); its build is cached under a
# SHA-256 of every source and build file (a hit skips the compile), it
# installs cmake/deps.sh's build set, and the run step's GITHUB_OUTPUT
# (exit, outcome, fence_taken, ...) are the action's outputs. Every `make
# TARGET` the workflow runs is a target the Makefile has (make -n). .ci/run
# (the project's own CI) runs make format-check, lint, test and coverage.
# The nightly search (.github/workflows/swarm.yml) is scheduled, runs a
# matrix of shards that do not cancel each other, calls only scripts of the
# repo (.ci/swarm, with its inputs through the environment), and uploads
# each shard's reports, reproducers and scenarios even when the shard fails;
# `make swarm` runs the same script (tests/check_swarm_ci.sh runs it).
#
#   tests/check_ci_yaml.sh BUILD/reassert SOURCE_ROOT
set -u
src=$2
cd "$src" || exit 2
python3 - <<'PY'
import re, subprocess, sys
import yaml

fails = []
def fail(msg):
    fails.append(msg)
    print("FAIL: " + msg)

def load(path):
    try:
        with open(path, encoding="utf-8") as f:
            return yaml.safe_load(f)
    except (OSError, yaml.YAMLError) as e:
        fail("%s: %s" % (path, e))
        return None

wf = load(".github/workflows/ci.yml")
if isinstance(wf, dict):
    # YAML 1.1 reads a bare `on:` key as the boolean True.
    on = wf.get("on", wf.get(True))
    if not on:
        fail("ci.yml: no `on:` trigger")
    jobs = wf.get("jobs") or {}
    if not jobs:
        fail("ci.yml: no jobs")
    runs, uploads = [], []
    for name, job in jobs.items():
        if job.get("runs-on") != "ubuntu-latest":
            fail("ci.yml: job %s does not run on ubuntu-latest" % name)
        for step in job.get("steps") or []:
            if "run" in step:
                runs.append(step["run"])
            uses = step.get("uses", "")
            if uses.startswith("actions/upload-artifact@"):
                uploads.append(str((step.get("with") or {}).get("path", "")))
            if not ("run" in step) ^ ("uses" in step):
                fail("ci.yml: a step has neither or both of run/uses: %r" % step)
    script = "\n".join(runs)
    targets = sorted(set(re.findall(r"\bmake ([a-z][a-z0-9-]*)", script)))
    for want in ("test", "lint"):
        if want not in targets:
            fail("ci.yml: never runs make %s" % want)
    for t in targets:
        r = subprocess.run(["make", "-n", t], capture_output=True, text=True)
        if r.returncode != 0:
            fail("ci.yml runs make %s, which the Makefile does not have: %s" % (t, r.stderr.strip()))
    if "--report build/ci/report" not in script:
        fail("ci.yml: the scenario step writes no HTML report (--report build/ci/report)")
    joined = "\n".join(uploads)
    for want, what in (("junit", "JUnit"), ("build/coverage", "the coverage report"),
                       ("build/ci", "the scenario report")):
        if want not in joined.lower():
            fail("ci.yml uploads no %s (%s)" % (what, want))

# .ci/run is what the project's own CI runs on a clean clone: the static
# checks are in it, so a change that breaks them cannot land unseen.
try:
    with open(".ci/run", encoding="utf-8") as f:
        ci_run = f.read()
except OSError as e:
    fail(".ci/run: %s" % e)
    ci_run = ""
ci_cmds = [l.strip() for l in ci_run.splitlines() if l.strip() and not l.strip().startswith("#")]
for want in ("make format-check", "make lint", "make test", "make coverage"):
    if want not in ci_cmds:
        fail(".ci/run does not run `%s` (a line of its own)" % want)
for t in sorted(set(re.findall(r"^make ([a-z][a-z0-9-]*)$", "\n".join(ci_cmds), re.M))):
    r = subprocess.run(["make", "-n", t], capture_output=True, text=True)
    if r.returncode != 0:
        fail(".ci/run runs make %s, which the Makefile does not have" % t)

sw = load(".github/workflows/swarm.yml")
if isinstance(sw, dict):
    on = sw.get("on", sw.get(True)) or {}
    if not isinstance(on, dict) or not on.get("schedule"):
        fail("swarm.yml: not scheduled (on: schedule)")
    jobs = sw.get("jobs") or {}
    if len(jobs) != 1:
        fail("swarm.yml: want one job (the shards), got %d" % len(jobs))
    for name, job in jobs.items():
        if job.get("runs-on") != "ubuntu-latest":
            fail("swarm.yml: job %s does not run on ubuntu-latest" % name)
        strat = job.get("strategy") or {}
        if strat.get("fail-fast") is not False:
            fail("swarm.yml: a failing shard must not cancel the others (fail-fast: false)")
        shards = (strat.get("matrix") or {}).get("shard") or []
        if len(shards) < 2 or sorted(shards) != list(range(1, len(shards) + 1)):
            fail("swarm.yml: the matrix is not shards 1..N: %r" % shards)
        runs, swarm_steps, uploads = [], [], []
        for step in job.get("steps") or []:
            if not ("run" in step) ^ ("uses" in step):
                fail("swarm.yml: a step has neither or both of run/uses: %r" % step)
            run = str(step.get("run", ""))
            if "${{" in run:
                fail("swarm.yml: an expression is spliced into a script: %r" % run)
            if run:
                runs.append(run)
            if ".ci/swarm" in run:
                swarm_steps.append(step)
            if str(step.get("uses", "")).startswith("actions/upload-artifact@"):
                uploads.append(step)
        for run in runs:
            for line in run.splitlines():
                words = line.split()
                if not words:
                    continue
                if words[0] == "sudo":
                    words = words[1:]
                if not (words[:2] == ["sh", ".ci/swarm"] or words[:2] == ["sh", "cmake/deps.sh"] or
                        words[:2] == ["make", "build"]):
                    fail("swarm.yml: a step runs %r, not a script of the repo" % line)
        if len(swarm_steps) != 1:
            fail("swarm.yml: want one step running .ci/swarm, got %d" % len(swarm_steps))
        else:
            run = str(swarm_steps[0]["run"])
            env = swarm_steps[0].get("env") or {}
            if "matrix.shard" not in str(env.get("SHARD", "")) or "$SHARD" not in run:
                fail("swarm.yml: the shard does not reach .ci/swarm from the matrix")
            if "build/swarm" not in run:
                fail("swarm.yml: .ci/swarm does not write to build/swarm")
        if not any(str(u.get("if", "")) == "always()" and
                   "build/swarm" in str((u.get("with") or {}).get("path", "")) for u in uploads):
            fail("swarm.yml: no upload of build/swarm that runs even when the shard fails")
import os
if not os.access(".ci/swarm", os.R_OK):
    fail(".ci/swarm is missing")
r = subprocess.run(["make", "-n", "swarm"], capture_output=True, text=True)
if r.returncode != 0 or ".ci/swarm" not in r.stdout:
    fail("make swarm does not run .ci/swarm: %s" % (r.stdout + r.stderr).strip())

act = load("action.yml")
if isinstance(act, dict):
    runs = act.get("runs") or {}
    if runs.get("using") != "composite":
        fail("action.yml: not a composite action")
    cmd = (act.get("inputs") or {}).get("command") or {}
    if not cmd.get("required"):
        fail("action.yml: no required `command` input")
    steps = runs.get("steps") or []
    text = ""
    for s in steps:
        if "run" in s and "shell" not in s:
            fail("action.yml: a run step without shell: (composite actions need it)")
        text += str(s.get("run", "")) + "\n"
        if "${{ inputs.command }}" in str(s.get("run", "")):
            fail("action.yml: the command is spliced into the script text")
    if "cmake --build" not in text:
        fail("action.yml: does not build reassert")
    if not any("inputs.command" in str((s.get("env") or {}).values()) for s in steps):
        fail("action.yml: the command is not passed through the environment")
    if "GITHUB_PATH" not in text:
        fail("action.yml: reassert is not put on PATH")
    # Issue 30: the build is cached under a key that is a hash of every
    # source and build file; a hit skips the compile.
    by_id = {s.get("id"): s for s in steps if s.get("id")}
    caches = [s for s in steps if str(s.get("uses", "")).startswith("actions/cache@")]
    if len(caches) != 1:
        fail("action.yml: want one actions/cache step, found %d" % len(caches))
    else:
        cache = caches[0]
        key = str((cache.get("with") or {}).get("key", ""))
        path = str((cache.get("with") or {}).get("path", ""))
        m = re.search(r"steps\.([A-Za-z0-9_-]+)\.outputs\.([A-Za-z0-9_-]+)", key)
        if not m or m.group(1) not in by_id:
            fail("action.yml: the cache key names no step's output: %r" % key)
        else:
            hasher = str(by_id[m.group(1)].get("run", ""))
            if "sha256sum" not in hasher or m.group(2) + "=" not in hasher:
                fail("action.yml: step %s does not write a SHA-256 as %s" % (m.group(1), m.group(2)))
            # every folder holding the binary's sources, and the build files
            built = sorted({p.split("/")[0] for p in subprocess.run(
                ["git", "ls-files", "*.c"], capture_output=True, text=True).stdout.split()
                if "/" in p and not p.startswith("tests/")})
            for want in built + ["CMakeLists.txt", "cmake"]:
                if not re.search(r"\b%s\b" % re.escape(want), hasher.split("|")[0]):
                    fail("action.yml: the cache key does not hash %s" % want)
        for want in ("runner.os", "runner.arch"):
            if want not in key:
                fail("action.yml: the cache key does not name %s (a binary is per image)" % want)
        if not path or path.split("/")[-1] not in text:
            fail("action.yml: the cached path %r is not where the build puts the binary" % path)
        cid = cache.get("id")
        build = [s for s in steps if "cmake --build" in str(s.get("run", ""))]
        if not cid or not build or ("steps.%s.outputs.cache-hit" % cid) not in str(build[0].get("env", {})) \
                or "CACHE_HIT" not in str(build[0].get("run", "")):
            fail("action.yml: the build does not depend on the cache hit")
    if not any("deps.sh\" build" in str(s.get("run", "")) or "deps.sh build" in str(s.get("run", ""))
               for s in steps):
        fail("action.yml: does not install the build dependencies (cmake/deps.sh build)")
    # The run step's outputs (GITHUB_OUTPUT) are the action's.
    outs = act.get("outputs") or {}
    run_ids = [s.get("id") for s in steps if "REASSERT_COMMAND" in str(s.get("run", ""))]
    for want in ("exit", "outcome", "fence_taken", "controller_restarts", "writes"):
        v = str((outs.get(want) or {}).get("value", ""))
        if not run_ids or run_ids[0] is None or v != "${{ steps.%s.outputs.%s }}" % (run_ids[0], want):
            fail("action.yml: output %s is not the run step's (%r)" % (want, v))

print("ci yaml: %d failed" % len(fails))
sys.exit(1 if fails else 0)
PY
