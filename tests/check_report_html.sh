#!/bin/sh
# `reassert sim --report DIR` without a browser: the page is one well-formed,
# self-contained document (no script, no fetch), a failing scenario is
# listed first with its failures, scenario text is HTML-escaped and no
# credential appears in any encoding, and the product card's fixture shows
# the Stage's fence interval beside the fence-free lazy Reassert
# (tests/report_html_check.py). The checker must also reject tampered
# copies of the page, so a test that cannot fail would fail here. Same
# input, same bytes; a report that cannot be written fails the command.
set -u
bin=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
fail() { echo "FAIL: $*"; status=1; }
check="python3 $src/tests/report_html_check.py"

pw='Pw<i>Amp&Zq71-LEAKCANARY-h7'
name='hostile-<b>-&-"q"'
hostile="$tmp/hostile<b>&.yaml"
cat >"$hostile" <<'YAML'
# Hazard (harness): scenario text in the HTML report is data, never markup.
name: 'hostile-<b>-&-"q"'
seed: 1
cluster: {preset: prod, credential: current}
desired: current
catalogue:
  current: {username: leak-bot, password: 'Pw<i>Amp&Zq71-LEAKCANARY-h7'}
runs:
  - name: r
    expect:
      exit: 0
      output-contains: ["<script>alert(1)</script>", "Pw<i>Amp&Zq71-LEAKCANARY-h7"]
YAML
fixture="$src/scenarios/two-run-stage-reassert.yaml"
"$bin" sim --report "$tmp/a" "$hostile" "$fixture" >"$tmp/out" 2>&1
rc=$?
[ "$rc" -eq 1 ] || fail "a failing scenario must make sim exit 1, got $rc"
page="$tmp/a/index.html"
[ -s "$page" ] || { fail "no page at DIR/index.html"; exit 1; }

# The secret in every form a report could carry it (base64 at each
# alignment, the user:password pair too), and the canary alone.
{
  echo LEAKCANARY
  for s in "$pw" "leak-bot:$pw"; do
    for k in 0 1 2; do
      e=$({ head -c "$k" /dev/zero; printf '%s' "$s"; } | base64 -w0 | tr -d =)
      start=$((k == 0 ? 1 : k + 2))
      printf '%s\n' "$e" | cut -c"$start-$((${#e} - 4))"
    done
  done
} >"$tmp/forbid"

$check "$page" --forbid-file "$tmp/forbid" --stage-reassert two-run-stage-reassert \
  --failing "$name" --escaped "$name" --escaped "$tmp/hostile<b>&.yaml" \
  --escaped '"<script>alert(1)</script>" not in' || fail "the page's structure (above)"

# Deterministic: the same input gives the same bytes.
"$bin" sim --report "$tmp/b" "$hostile" "$fixture" >/dev/null 2>&1
cmp -s "$page" "$tmp/b/index.html" || fail "two executions wrote different pages"

# The checker fails on each tampered copy (it is not a test that cannot fail).
tamper() {
  what=$1
  shift
  python3 - "$page" "$tmp/t.html" "$@" <<'PY'
import re, sys
s = open(sys.argv[1], encoding="utf-8").read()
op = sys.argv[3]
if op == "sub":
    t = re.sub(sys.argv[4], sys.argv[5], s, count=int(sys.argv[6]) if len(sys.argv) > 6 else 0,
               flags=re.S)
    if t == s:
        sys.exit("tamper: the pattern matched nothing: " + sys.argv[4])
    s = t
open(sys.argv[2], "w", encoding="utf-8").write(s)
PY
  [ $? -eq 0 ] || { fail "tampering ($what) changed nothing"; return; }
  if $check "$tmp/t.html" --forbid-file "$tmp/forbid" --stage-reassert two-run-stage-reassert \
    --failing "$name" --escaped "$name" >/dev/null 2>&1; then
    fail "the checker accepted a page with $what"
  fi
}
tamper "a script" sub '<body>' '<body><script>alert(1)</script>'
tamper "an external image" sub '<h1>' '<img src="http://example.com/x.png"><h1>'
tamper "a CSS import" sub '<style>' '<style>@import "http://example.com/x.css";'
tamper "no Lease span" sub '<rect class="span lease"[^\n]*\n' ''
tamper "a fence in the lazy reassert" sub 'class="not-taken"' 'class="span lease"'
tamper "the secret" sub '<h1>' '<h1>LEAKCANARY'
tamper "unescaped text" sub '&lt;script&gt;' '<script>'
tamper "an unclosed run" sub '</article>' '' 1
tamper "the failing scenario listed last" sub 'hostile-&lt;b&gt;' 'renamed'
# One axis per scenario, and the CSS-only switch between two (issue 30).
tamper "a timeline on an axis of its own" sub 'data-axis-ms="([0-9.]+)"' 'data-axis-ms="1\1"' 1
tamper "a run's end where its own axis puts it" sub '(class="run-end" x1=")[0-9.]+' '\g<1>930.0' 0
tamper "no axis switch" sub '<input type="checkbox" class="logscale"[^>]*>' '' 0
tamper "a switch without CSS" sub 'input\.logscale:checked~svg\.lin,input\.logscale:checked~\* svg\.lin\{display:none\}' '' 0
tamper "one axis only" sub '<svg class="timeline log"' '<svg class="timeline lin"' 0
tamper "a restart dropped from the eager row" sub '(data-run="eager reassert">(?:(?!</g>).)*?)<line class="mark restart"' '\1<line class="mark gone"' 0

# A report that cannot be written fails the command, naming the path.
: >"$tmp/file"
"$bin" sim --report "$tmp/file/sub" "$fixture" >"$tmp/out2" 2>&1
rc=$?
[ "$rc" -eq 1 ] || fail "an unwritable --report must exit 1, got $rc"
grep -q -- "--report" "$tmp/out2" || fail "the error does not name --report"

[ $status -eq 0 ] && echo "report html: structure, escaping, redaction, determinism hold"
exit $status
