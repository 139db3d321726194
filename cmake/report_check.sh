#!/bin/sh
# make report-check: the scenario report as a person sees it. Writes the
# product card's fixture's report (reassert sim --report), checks its HTML
# structure (tests/report_html_check.py), renders it in headless Chromium
# (Debian chromium, cmake/deps.sh report) to BUILD/report.png, and checks
# the screenshot is not blank and shows the Stage's Lease interval
# (cmake/png_nonblank.py). Open BUILD/report.png to look at it.
#
#   cmake/report_check.sh BUILD
set -eu
build=$(cd "$1" && pwd)
out=$build/report-check
rm -rf "$out"
mkdir -p "$out"
fixture=scenarios/two-run-stage-reassert.yaml
if ! "$build/reassert" sim --report "$out/html" "$fixture" >"$out/sim.txt" 2>&1; then
  echo "report-check: reassert sim $fixture failed:" >&2
  cat "$out/sim.txt" >&2
  exit 1
fi
python3 tests/report_html_check.py "$out/html/index.html" --stage-reassert two-run-stage-reassert
# Chromium refuses to run as root inside its sandbox; CI containers run as root.
sandbox=""
[ "$(id -u)" = 0 ] && sandbox=--no-sandbox
rm -f "$build/report.png"
timeout 180 chromium --headless $sandbox --disable-gpu --hide-scrollbars \
  --user-data-dir="$out/profile" --window-size=1100,1400 \
  --screenshot="$build/report.png" "file://$out/html/index.html" >"$out/chromium.log" 2>&1 || {
  echo "report-check: chromium failed:" >&2
  tail -n 20 "$out/chromium.log" >&2
  exit 1
}
[ -s "$build/report.png" ] || { echo "report-check: no screenshot at $build/report.png" >&2; exit 1; }
# #0969da is the Lease lane's colour: at least a few hundred pixels of it
# means the Stage's fence interval was drawn.
python3 cmake/png_nonblank.py "$build/report.png" --colour 0969da --min-pixels 2000
echo "report-check: $build/report.png"
