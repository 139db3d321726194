#!/bin/sh
# The sim's reports (DESIGN.md §5.1, §7.1; issue 10): the JUnit file of the
# whole suite — plus a failing, an unloadable and a control-character
# scenario — validates against tests/junit.xsd and its counts add up; an
# unloadable scenario is a failed entry in --json and --junit; a JUnit file
# that cannot be written fails the command; time attributes are the runs'
# wall time, summed per suite and file.
# The whole suite's JUnit is the ctest fixture's (tests/suite_run.sh, shared
# with check_record_replay and check_no_plaintext) when REASSERT_SUITE_RUN
# names it; the failing, unloadable and control-character files get a
# report of their own beside a passing one.
set -u
bin=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
passes=0
ok() { passes=$((passes + 1)); }
no() { echo "FAIL: $1"; fails=$((fails + 1)); }
for tool in xmllint jq; do
  command -v "$tool" >/dev/null 2>&1 || { echo "FAIL: $tool is required (cmake/deps.sh installs it)"; exit 1; }
done
xs="$src/tests/junit.xsd"
bad="$src/tests/harness/inputs"
# count XPATH FILE: a number
count() { xmllint --xpath "$1" "$2" 2>/dev/null; }

# Names, messages and cluster text carrying control characters.
printf 'name: "ctl\\x01\\x1b[31m\\x7f-name \\u0085 <&>"\nseed: 1\ncluster: {preset: prod, credential: current}\ndesired: current\nruns:\n  - name: r\n    before:\n      - kube.patch:\n          ref: Lease/flux-system/ghcr-auth-refresh\n          merge-patch: {spec: {holderIdentity: "h\\x02\\x1b]0;x\\a<&>]]>"}}\n    expect:\n      exit: 0\n      output-contains: ["\\x03\\x04 <not & there>"]\n' >"$tmp/control-chars.yaml"

# The whole suite: the ctest fixture's run (tests/suite_run.sh,
# REASSERT_SUITE_RUN), or one made here. Its JUnit validates and its counts
# add up; every scenario is at least one run under each of the two
# strategies (a strategy it does not apply to is a skipped testcase).
run=${REASSERT_SUITE_RUN:-}
if [ -z "$run" ]; then
  run=$tmp/run
  sh "$src/tests/suite_run.sh" "$bin" "$src" "$run" >/dev/null || no "the suite could not be run"
fi
n_scn=$(wc -l <"$run/files")
# counts_add_up FILE WHAT: the suite's and every testsuite's totals are the
# testcases they hold.
counts_add_up() {
  for a in tests: failures:failure errors:error skipped:skipped; do
    attr=${a%%:*}
    pred=${a#*:}
    sel=testcase${pred:+[$pred]}
    want=$(count "count(//$sel)" "$1")
    got=$(count "string(/testsuites/@$attr)" "$1")
    if [ -n "$want" ] && [ "$got" = "$want" ]; then ok; else no "$2: testsuites/@$attr is '$got', want $want"; fi
    wrong=$(count "count(//testsuite[@$attr != count($sel)])" "$1")
    if [ "$wrong" = 0 ]; then ok; else no "$2: $wrong testsuite(s) with a wrong @$attr"; fi
  done
}
if [ "$(cat "$run/text.rc")" = 0 ]; then ok; else no "the suite: exit $(cat "$run/text.rc"), want 0"; fi
if xmllint --noout --schema "$xs" "$run/suite.xml" >"$tmp/xl.txt" 2>&1; then ok; else
  no "the suite's JUnit does not validate: $(head -c 400 "$tmp/xl.txt")"; fi
counts_add_up "$run/suite.xml" "the suite"
n_cases=$(count 'count(//testcase)' "$run/suite.xml")
[ "${n_cases:-0}" -ge $((2 * n_scn)) ] && [ "$n_scn" -gt 0 ] && ok ||
  no "only ${n_cases:-0} testcases for $n_scn scenarios of the suite"

# A failing scenario, an unloadable one, the control characters, beside a
# passing one.
"$bin" sim --junit "$tmp/all.xml" "$bad/expect-ok.yaml" "$bad/expect-fails.yaml" \
  "$bad/unknown-expect-key.yaml" "$tmp/control-chars.yaml" >"$tmp/all.out" 2>&1
rc=$?
if [ "$rc" -eq 65 ]; then ok; else no "a report with an unloadable scenario: exit $rc, want 65"; fi
if xmllint --noout --schema "$xs" "$tmp/all.xml" >"$tmp/xl.txt" 2>&1; then ok; else
  no "the JUnit does not validate: $(head -c 400 "$tmp/xl.txt")"; fi
counts_add_up "$tmp/all.xml" "failing, unloadable and control characters"
# time attributes carry the wall time (issue 30): every testcase that ran
# (passed or failed) took some, a skipped one none, and each
# suite's and the whole file's time is the sum of what they hold.
if python3 - "$tmp/all.xml" >"$tmp/time.txt" 2>&1 <<'PY'; then ok; else no "JUnit time attributes: $(head -c 400 "$tmp/time.txt")"; fi
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
bad = []
total = 0.0
for suite in root.iter("testsuite"):
    s = 0.0
    for case in suite.iter("testcase"):
        t = float(case.get("time"))
        skipped = case.find("skipped") is not None
        ran = not skipped and case.find("error") is None
        if ran and t <= 0:
            bad.append("%s/%s ran in time=%s" % (suite.get("name"), case.get("name"), case.get("time")))
        if skipped and t != 0:
            bad.append("%s/%s never ran but has time=%s" % (suite.get("name"), case.get("name"), case.get("time")))
        s += t
    if abs(float(suite.get("time")) - s) > 0.001 * (1 + len(list(suite.iter("testcase")))):
        bad.append("testsuite %s: time=%s, its testcases sum to %.3f" % (suite.get("name"), suite.get("time"), s))
    total += float(suite.get("time"))
if abs(float(root.get("time")) - total) > 0.001 * (1 + len(list(root.iter("testsuite")))):
    bad.append("testsuites: time=%s, its suites sum to %.3f" % (root.get("time"), total))
if not any(float(c.get("time")) > 0 for c in root.iter("testcase")):
    bad.append("no testcase has a time")
print("\n".join(bad[:5]))
sys.exit(1 if bad else 0)
PY
# expect-fails: 2 runs x 2 strategies, one run failing under each.
if [ "$(count 'count(//testsuite[@name="expect-fails"]/testcase[failure])' "$tmp/all.xml")" = 2 ] &&
   [ "$(count 'count(//testsuite[@name="expect-fails"]/testcase[@classname="expect-fails"])' "$tmp/all.xml")" = 4 ]; then ok; else
  no "expect-fails: want 4 testcases with classname expect-fails, 2 failing"; fi
if [ "$(count 'count(//testsuite[contains(@name, "unknown-expect-key")]/testcase/error)' "$tmp/all.xml")" = 1 ]; then ok; else
  no "the unloadable scenario is not an <error> testcase"; fi
if grep -q "ctl.*-name" "$tmp/all.xml" && ! LC_ALL=C grep -q "$(printf '[\001-\010\013\014\016-\037\177]')" "$tmp/all.xml"; then ok; else
  no "control characters are not removed (or the control-character scenario is missing)"; fi

# --strategy lazy: every eager run is a <skipped/> testcase.
"$bin" sim --strategy lazy --junit "$tmp/lazy.xml" "$bad/expect-ok.yaml" "$bad/expect-fails.yaml" >/dev/null 2>&1
if xmllint --noout --schema "$xs" "$tmp/lazy.xml" >/dev/null 2>&1 &&
   [ "$(count 'count(//testcase)' "$tmp/lazy.xml")" = 6 ] &&
   [ "$(count 'count(//testcase[skipped])' "$tmp/lazy.xml")" = 3 ]; then ok; else
  no "--strategy lazy: want 6 testcases, 3 skipped: $(head -c 300 "$tmp/lazy.xml")"; fi

# An unloadable scenario is a failed entry in --json, in one document.
"$bin" sim --strategy lazy --json "$bad/expect-ok.yaml" "$bad/unknown-expect-key.yaml" >"$tmp/j.json" 2>/dev/null
rc=$?
if [ "$rc" -eq 65 ] && jq -e -s 'length == 1 and ([.[0].scenarios[] | select(.file | contains("unknown-expect-key")) | select(.passed == false and (.load_error | length) > 0)] | length) == 1' \
     "$tmp/j.json" >/dev/null 2>&1; then ok; else
  no "--json: exit $rc, want 65 and a failed entry for the unloadable file: $(head -c 300 "$tmp/j.json")"; fi

# A JUnit file that cannot be written fails the command.
for dest in /proc/nonexistent/x.xml "$tmp"; do
  "$bin" sim --strategy lazy --junit "$dest" "$bad/expect-ok.yaml" >"$tmp/w.out" 2>&1
  rc=$?
  if [ "$rc" -eq 1 ] && grep -qF "cannot write the JUnit report $dest" "$tmp/w.out"; then ok; else
    no "--junit $dest: exit $rc, want 1 naming the file: $(head -c 300 "$tmp/w.out")"; fi
done

echo "junit: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
