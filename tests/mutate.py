#!/usr/bin/env python3
"""mutate.py — `make mutate`: does the suite notice when a guard is gone?

Each patch in tests/mutations/ removes or weakens one guard of the core (a
CAS test, a recheck, a bound, an order) and says in its header which hazard
or DESIGN rule that breaks. This script applies the patches one at a time to
a scratch copy of the source tree (never the tree itself), rebuilds it
incrementally and runs the tests:

  1. the tests that cite the hazard (a `Hazard: Hnn` header in a scenario,
     a Check suite or a shell check) and the ctest names the patch lists on
     its `Tests:` line;
  2. if none of them failed, the whole scenario and unit set (every
     `scenario/` and `unit/` test, and every shell check that cites a
     hazard).

A mutation is killed when a test fails with it applied (a test that hangs
past the timeout counts as failing). After the patch is reverted, the tests
that killed it run again on the unmutated tree: a test that fails there too
proves nothing, and the run fails. A patch that no longer applies or no
longer builds fails the run as well; a survivor — a guard the whole suite
can lose without one test failing — fails it and needs a new test.

Writes the kill ratio and the per-mutation table (which test killed which
mutation) to reports/MUTATION.md when every patch was run (not with --only).

Usage: tests/mutate.py [--src DIR] [--only REGEX] [--report FILE]
                       [--jobs N] [--timeout S] [--keep]
Not part of `make test`: each mutation costs a rebuild and a test run.
"""
import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HAZARD_RE = re.compile(r"\bH(\d+)\b")
HEADER_KEYS = ("Mutation", "Breaks", "Area", "Tests")


def parse_patch(path):
    """The header fields (the lines before the first `diff --git`)."""
    fields = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("diff --git "):
                break
            m = re.match(r"^([A-Za-z]+): (.*)$", line.rstrip("\n"))
            if m and m.group(1) in HEADER_KEYS:
                fields[m.group(1)] = m.group(2).strip()
    missing = [k for k in ("Mutation", "Breaks") if not fields.get(k)]
    if missing:
        raise SystemExit("%s: header lacks %s" % (path, ", ".join(missing)))
    fields["hazards"] = sorted({int(h) for h in HAZARD_RE.findall(fields["Breaks"])})
    fields["tests"] = fields.get("Tests", "").split()
    fields["name"] = os.path.basename(path)[: -len(".patch")]
    fields["path"] = path
    return fields


def leading_comment(path):
    """A scenario's header: its leading comment block."""
    out = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            s = line.strip()
            if s and not s.startswith("#"):
                break
            out.append(line)
    return "".join(out)


def citations(src):
    """ctest name -> the hazard numbers its source cites on `Hazard:` lines."""
    cites = {}

    def add(name, text):
        nums = set()
        in_hazard = False
        for line in text.splitlines():
            if "Hazard:" in line:
                in_hazard = True
                line = line.split("Hazard:", 1)[1]
            elif not line.lstrip().startswith("#") and not line.lstrip().startswith("*"):
                in_hazard = False
            if in_hazard:
                nums.update(int(h) for h in HAZARD_RE.findall(line))
        if nums:
            cites[name] = nums

    # A scenario's ctest name is its path under scenarios/ without .yaml
    # (scenarios/pending/ holds no test).
    sdir = os.path.join(src, "scenarios")
    for root, dirs, files in os.walk(sdir):
        dirs[:] = sorted(d for d in dirs if d != "pending")
        for f in sorted(files):
            if f.endswith(".yaml"):
                rel = os.path.relpath(os.path.join(root, f), sdir)[:-5]
                add("scenario/" + rel, leading_comment(os.path.join(root, f)))
    tdir = os.path.join(src, "tests")
    for f in sorted(os.listdir(tdir)):
        p = os.path.join(tdir, f)
        if f.startswith("test_") and f.endswith(".c"):
            add("unit/" + f[:-2], open(p, encoding="utf-8", errors="replace").read())
        elif f.startswith("check_") and f.endswith(".sh"):
            add("shell/" + f[:-3], open(p, encoding="utf-8", errors="replace").read())
    return cites


def run(cmd, cwd=None, env=None, timeout=None):
    return subprocess.run(cmd, cwd=cwd, env=env, timeout=timeout,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def copy_tree(src, dst):
    """The tracked and untracked (not ignored) files: the tree as it is now."""
    r = run(["git", "-C", src, "ls-files", "-z", "-co", "--exclude-standard"])
    if r.returncode != 0:
        shutil.copytree(src, dst, symlinks=True,
                        ignore=shutil.ignore_patterns("build", "build-*", ".git"), dirs_exist_ok=True)
        return
    for rel in r.stdout.split("\0"):
        if not rel or not os.path.lexists(os.path.join(src, rel)):
            continue
        os.makedirs(os.path.dirname(os.path.join(dst, rel)), exist_ok=True)
        shutil.copy2(os.path.join(src, rel), os.path.join(dst, rel), follow_symlinks=False)


class Scratch:
    def __init__(self, src, jobs, timeout):
        self.root = tempfile.mkdtemp(prefix="reassert-mutate.")
        self.src = os.path.join(self.root, "src")
        self.build = os.path.join(self.root, "build")
        self.jobs = jobs
        self.timeout = timeout
        os.makedirs(self.src)
        copy_tree(src, self.src)
        # git apply outside a repository works on the paths it is given; the
        # ceiling keeps it from finding a repository above the scratch copy.
        self.env = dict(os.environ, GIT_CEILING_DIRECTORIES=self.root)

    def configure(self):
        r = run(["cmake", "-S", self.src, "-B", self.build, "-DCMAKE_BUILD_TYPE=RelWithDebInfo"])
        if r.returncode != 0:
            raise SystemExit("cmake configure failed:\n" + r.stdout[-3000:])

    def make(self, targets=None):
        cmd = ["cmake", "--build", self.build, "-j", str(self.jobs)]
        if targets:
            cmd += ["--target"] + sorted(targets)
        r = run(cmd)
        return r.returncode == 0, r.stdout

    def apply(self, patch, reverse=False):
        cmd = ["git", "apply"] + (["-R"] if reverse else []) + [patch]
        r = run(cmd, cwd=self.src, env=self.env)
        return r.returncode == 0, r.stdout

    def tests(self):
        r = run(["ctest", "-N"], cwd=self.build)
        return re.findall(r"Test +#\d+: (\S+)", r.stdout)

    def ctest(self, names):
        """Runs the named tests; returns the ones that failed, a test that
        ran past the timeout marked "(timeout)"."""
        if not names:
            return []
        regex = "^(" + "|".join(re.escape(n) for n in sorted(names)) + ")$"
        r = run(["ctest", "-R", regex, "-j", str(self.jobs), "--timeout", str(self.timeout)],
                cwd=self.build)
        failed = set()
        for m in re.finditer(r"Test +#\d+: (\S+) \.*\s*\*\*\*(\w+)", r.stdout):
            failed.add(m.group(1) + (" (timeout)" if m.group(2) == "Timeout" else ""))
        if r.returncode != 0 and not failed:
            raise SystemExit("ctest failed without naming a failed test:\n" + r.stdout[-2000:])
        return sorted(failed)


def test_name(killer):
    """A killer's ctest name (without a " (timeout)" mark)."""
    return killer.split(" ", 1)[0]


def targets_for(names):
    """The build targets a set of tests needs."""
    t = {"reassert"}
    for n in names:
        if n.startswith("unit/"):
            t.add(test_name(n).split("/", 1)[1])
    return t


def first_tests(m, cites, known):
    hz = set(m["hazards"])
    names = {n for n, nums in cites.items() if nums & hz}
    names.update(m["tests"])
    return sorted(n for n in names if n in known)


def whole_set(cites, known):
    return sorted(n for n in known
                  if n.startswith(("scenario/", "unit/"))
                  or (n.startswith("shell/") and n in cites))


def mutate_one(sc, m, cites, known, log, cited_only=False):
    res = {"verdict": "survived", "killers": [], "stage": "", "note": ""}
    ok, out = sc.apply(m["path"])
    if not ok:
        res.update(verdict="does not apply", note=" ".join(out.split())[:300])
        return res
    try:
        stage1 = first_tests(m, cites, known)
        ok, out = sc.make(targets_for(stage1))
        if not ok:
            res.update(verdict="does not build", note=out[-2000:])
            return res
        # The citing scenarios and unit suites (and the patch's Tests:)
        # first; the citing shell checks, some of them minutes long, only
        # when those all passed.
        quick = [n for n in stage1 if not n.startswith("shell/") or n in m["tests"]]
        failed = sc.ctest(quick) or sc.ctest([n for n in stage1 if n not in quick])
        if failed:
            res.update(verdict="killed", killers=failed, stage="cites")
        elif cited_only:
            res.update(verdict="survived its citing tests", note="(whole set not run: --cited-only)")
        else:
            rest = [n for n in whole_set(cites, known) if n not in stage1]
            ok, out = sc.make()
            if not ok:
                res.update(verdict="does not build", note=out[-2000:])
                return res
            failed = sc.ctest(rest)
            if failed:
                res.update(verdict="killed", killers=failed, stage="whole set")
        res["stage1"] = stage1
    finally:
        ok, out = sc.apply(m["path"], reverse=True)
        if not ok:
            raise SystemExit("%s: reverting the patch failed:\n%s" % (m["name"], out))
    if res["killers"]:
        # A killing test must pass on the unmutated tree, or it proves nothing.
        ok, out = sc.make(targets_for(res["killers"]))
        if not ok:
            raise SystemExit("the unmutated scratch tree no longer builds:\n" + out[-2000:])
        again = sc.ctest([test_name(k) for k in res["killers"]])
        if again:
            res.update(verdict="killer fails unmutated",
                       note="fails without the mutation too: " + ", ".join(again))
    log("%-44s %s%s" % (m["name"], res["verdict"],
                        (" by " + ", ".join(res["killers"][:3]) +
                         (" (+%d)" % (len(res["killers"]) - 3) if len(res["killers"]) > 3 else ""))
                        if res["killers"] else ""))
    return res


def md_escape(s):
    return s.replace("|", "\\|")


def tree_state(src):
    """The commit the scratch copy was taken from, and whether the tree had
    uncommitted changes then."""
    head = run(["git", "-C", src, "rev-parse", "--short", "HEAD"]).stdout.strip() or "unknown"
    dirty = run(["git", "-C", src, "status", "--porcelain", "--untracked-files=no"]).stdout.strip()
    return head, bool(dirty)


def write_report(path, tree, muts, results, elapsed_s):
    killed = sum(1 for r in results if r["verdict"] == "killed")
    n = len(muts)
    head, dirty = tree
    areas = {}
    for m in muts:
        areas[m.get("Area", "other")] = areas.get(m.get("Area", "other"), 0) + 1
    lines = [
        "# Mutation check",
        "",
        "Written by `make mutate` (`tests/mutate.py`); never edit by hand. Each",
        "patch in `tests/mutations/` removes or weakens one guard of the core and",
        "names the hazard or DESIGN rule it breaks; it is applied alone to a",
        "scratch copy of the tree, which is rebuilt and tested: first the tests",
        "that cite the hazard (and the patch's `Tests:` line), then, if none",
        "failed, every `scenario/` and `unit/` test and every shell check that",
        "cites a hazard. A killing test is run again without the mutation and",
        "must pass there.",
        "",
        "Tree: `%s`%s. Mutations: %d. **Killed: %d of %d (%.1f%%)**; survived: %d."
        % (head, " with uncommitted changes" if dirty else "", n, killed, n,
           100.0 * killed / n if n else 0.0,
           sum(1 for r in results if r["verdict"] == "survived")),
        "",
        "By area: " + ", ".join("%s %d" % (a, c) for a, c in sorted(areas.items())) + ".",
        "",
        "| mutation | area | breaks | verdict | killed by |",
        "|---|---|---|---|---|",
    ]
    for m, r in zip(muts, results):
        k = r["killers"]
        by = ", ".join("`%s`" % t for t in k[:4]) + (" and %d more" % (len(k) - 4) if len(k) > 4 else "")
        if r["stage"] == "whole set":
            by += " (the whole set; no citing test failed)"
        if r["note"] and r["verdict"] != "killed":
            by = md_escape(r["note"].splitlines()[0][:200])
        lines.append("| `%s`: %s | %s | %s | %s | %s |" % (
            m["name"], md_escape(m["Mutation"]), md_escape(m.get("Area", "")),
            md_escape(m["Breaks"]), r["verdict"], by))
    lines += ["", "Wall time of this run: %d min (not a measure of anything: the" % (elapsed_s // 60),
              "machine's load decides it).", ""]
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description="Apply each guard mutation and run the tests.")
    ap.add_argument("--src", default=os.path.dirname(here))
    ap.add_argument("--only", help="run the mutations whose name matches this regex")
    ap.add_argument("--report", help="where to write the report (default reports/MUTATION.md, "
                    "written only when every mutation ran)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--timeout", type=int, default=1500,
                    help="per test, seconds; a mutation that makes a test run past it is "
                    "killed by that test, marked (timeout) in the report")
    ap.add_argument("--keep", action="store_true", help="keep the scratch copy")
    ap.add_argument("--cited-only", action="store_true",
                    help="run only the tests that cite the hazard (a quick triage; writes no report)")
    ap.add_argument("--fail-fast", action="store_true",
                    help="stop at the first mutation not killed (when iterating; writes no report)")
    a = ap.parse_args()
    src = os.path.abspath(a.src)
    partial = a.only or a.cited_only or a.fail_fast
    report = a.report or (None if partial else os.path.join(src, "reports", "MUTATION.md"))
    t0 = time.time()

    def log(msg):
        print("[%5ds] %s" % (time.time() - t0, msg), flush=True)

    # A stop (SIGTERM, SIGINT) still removes the scratch copy (the finally
    # below); the test processes of the moment are ctest's and end with it.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    tree = tree_state(src)
    sc = Scratch(src, a.jobs, a.timeout)
    try:
        # The patches, tests and sources are the scratch copy's: one snapshot
        # of the tree, whatever happens to the tree during the run.
        mdir = os.path.join(sc.src, "tests", "mutations")
        muts = [parse_patch(os.path.join(mdir, f)) for f in sorted(os.listdir(mdir))
                if f.endswith(".patch")]
        if a.only:
            muts = [m for m in muts if re.search(a.only, m["name"])]
        if not muts:
            raise SystemExit("no mutation to run")
        log("%d mutations; scratch copy %s; configuring and building" % (len(muts), sc.root))
        sc.configure()
        ok, out = sc.make()
        if not ok:
            raise SystemExit("the unmutated scratch tree does not build:\n" + out[-3000:])
        known = set(sc.tests())
        cites = citations(sc.src)
        results = []
        for m in muts:
            results.append(mutate_one(sc, m, cites, known, log, a.cited_only))
            if a.fail_fast and results[-1]["verdict"] != "killed":
                muts = muts[:len(results)]
                break
    finally:
        if a.keep:
            print("scratch kept: " + sc.root)
        else:
            shutil.rmtree(sc.root, ignore_errors=True)
    killed = sum(1 for r in results if r["verdict"] == "killed")
    if report:
        write_report(report, tree, muts, results, int(time.time() - t0))
        log("wrote " + report)
    log("killed %d of %d" % (killed, len(muts)))
    for m, r in zip(muts, results):
        if r["verdict"] != "killed":
            print("NOT KILLED: %s (%s): %s %s" % (m["name"], m["Breaks"], r["verdict"],
                                                   r["note"][:500]))
    return 0 if killed == len(muts) else 1


if __name__ == "__main__":
    sys.exit(main())
