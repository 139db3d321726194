#!/usr/bin/env python3
"""The coverage gate of `make coverage` (issue 14): reads an lcov tracefile,
prints one summary line per folder, and holds core/ to its floor.

    cmake/coverage_gate.py COVERAGE.info SOURCE_ROOT

The one idea: the gate reads the tracefile itself (SF/DA/BRDA records, the
same in lcov 1.x and 2.x) instead of parsing lcov's human summary, and a
core/ source file the tracefile does not mention fails the gate rather than
dropping out of the average.

Gate (core/ is the product; everything below it counts, core/live/ too):
  - core/ as a whole: at least 90% of lines and 75% of branches;
  - every file in core/: at least 80% of lines.
Lines no test can reach are removed or carry an LCOV_EXCL_LINE with the
reason on the same line; there is no bulk exclusion.
Exit 0 when the gate holds, 1 when it does not, 2 on bad input.
"""
import os
import subprocess
import sys

CORE_LINES_MIN = 90.0
CORE_BRANCHES_MIN = 75.0
CORE_FILE_LINES_MIN = 80.0


def parse(path, root):
    """{relative path: [lines_hit, lines, branches_hit, branches]}"""
    files = {}
    cur = None
    root = root.rstrip("/") + "/"
    with open(path, encoding="utf-8", errors="replace") as f:
        for raw in f:
            line = raw.strip()
            if line.startswith("SF:"):
                name = os.path.abspath(line[3:])
                if name.startswith(root):
                    name = name[len(root):]
                cur = files.setdefault(name, {"da": {}, "br": {}})
            elif cur is None:
                continue
            elif line.startswith("DA:"):
                no, count = line[3:].split(",")[:2]
                cur["da"][no] = max(cur["da"].get(no, 0), int(float(count)))
            elif line.startswith("BRDA:"):
                lno, block, branch, taken = line[5:].split(",")
                key = (lno, block, branch)
                hit = 0 if taken == "-" else int(float(taken))
                cur["br"][key] = max(cur["br"].get(key, 0), hit)
            elif line == "end_of_record":
                cur = None
    out = {}
    for name, d in files.items():
        out[name] = [sum(1 for c in d["da"].values() if c > 0), len(d["da"]),
                     sum(1 for c in d["br"].values() if c > 0), len(d["br"])]
    return out


def pct(hit, total):
    return 100.0 * hit / total if total else 100.0


def add(acc, v):
    for i in range(4):
        acc[i] += v[i]


def line(label, v):
    return "%-22s lines %6.2f%% (%5d/%5d)   branches %6.2f%% (%5d/%5d)" % (
        label, pct(v[0], v[1]), v[0], v[1], pct(v[2], v[3]), v[2], v[3])


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    info, root = sys.argv[1], os.path.abspath(sys.argv[2])
    try:
        files = parse(info, root)
    except (OSError, ValueError) as e:
        print("coverage gate: %s: %s" % (info, e), file=sys.stderr)
        return 2

    folders = {}
    for name, v in files.items():
        add(folders.setdefault(os.path.dirname(name) + "/", [0, 0, 0, 0]), v)
    print("per folder:")
    for folder in sorted(folders):
        print("  " + line(folder, folders[folder]))

    core = [0, 0, 0, 0]
    fails = []
    for name, v in sorted(files.items()):
        if name.startswith("core/"):
            add(core, v)
            if name.endswith(".c") and pct(v[0], v[1]) < CORE_FILE_LINES_MIN:
                fails.append("%s: %.2f%% of lines (%d/%d), under %.0f%%" % (
                    name, pct(v[0], v[1]), v[0], v[1], CORE_FILE_LINES_MIN))
    # A core/ source the build never instrumented or lcov lost is a failure,
    # not a file quietly missing from the average.
    listed = subprocess.run(["git", "-C", root, "ls-files", "core/*.c", "core/**/*.c"],
                            capture_output=True, text=True)
    for name in sorted(set(listed.stdout.split())):
        if name not in files:
            fails.append("%s: no coverage data at all" % name)
    print(line("core/ (gate)", core))
    # The files nearest the per-file floor, so a change that would sink one
    # is seen before it does.
    low = sorted((pct(v[0], v[1]), n) for n, v in files.items()
                 if n.startswith("core/") and n.endswith(".c"))[:5]
    print("lowest core/ files: " + ", ".join("%s %.1f%%" % (n, p) for p, n in low))
    if pct(core[0], core[1]) < CORE_LINES_MIN:
        fails.append("core/: %.2f%% of lines, under %.0f%%" % (pct(core[0], core[1]),
                                                              CORE_LINES_MIN))
    if pct(core[2], core[3]) < CORE_BRANCHES_MIN:
        fails.append("core/: %.2f%% of branches, under %.0f%%" % (pct(core[2], core[3]),
                                                                 CORE_BRANCHES_MIN))
    for f in fails:
        print("FAIL: " + f)
    print("coverage gate: %s (core/ >= %.0f%% lines, >= %.0f%% branches, "
          "every core/ file >= %.0f%% lines)" % ("PASS" if not fails else "FAIL",
                                                 CORE_LINES_MIN, CORE_BRANCHES_MIN,
                                                 CORE_FILE_LINES_MIN))
    return 0 if not fails else 1


if __name__ == "__main__":
    sys.exit(main())
