#!/usr/bin/env python3
"""The structure of `reassert sim --report DIR`'s page, checked without a
browser (tests/check_report_html.sh).

  report_html_check.py PAGE [--forbid-file FILE] [--stage-reassert NAME]
                            [--escaped TEXT]... [--failing NAME]...

Checks: one well-formed document (every element closed in order, no stray
end tag); self-contained (no script, no external resource, no URL besides
in-page anchors and the SVG namespace); every scenario section has its
runs, each with a counter table and an inline SVG timeline drawn twice,
on a linear and a logarithmic axis, behind a CSS-only switch (a checkbox
input.logscale ahead of every timeline, :checked rules that show one axis
and hide the other); an overview of every run of the scenario, a row each,
on both axes; every timeline of a scenario on one axis (issue 30): the
same data-axis-ms, the longest run reaching the plot's right end, and each
run's end drawn where its length puts it on that axis. With
--stage-reassert NAME, that scenario's lazy `stage` run shows the Lease and
both policy fences, a controller restart and the root cutover (on both
axes, and its overview row the Lease and the restart), and its lazy
`reassert` run shows no fence at all (three "not taken" lanes, an overview
row with no Lease and no restart) while the eager `reassert` shows all
three; the lazy `reassert` ends left of the eager one, and on the
logarithmic axis it is not a sliver (its end past a fifth of the plot). --forbid-file lists strings (one a line)
that must not appear anywhere in the page; --escaped TEXT must appear as
HTML-escaped text; --failing NAME must be listed first in the index, with a
failures list in its section. Exit 0 when all holds, 1 with one line per
problem.
"""
import argparse
import html.parser
import re
import sys

VOID = {"meta", "br", "hr", "img", "input", "link", "source", "wbr", "area", "base", "col"}
# Elements the page may contain; anything else (script, iframe, object,
# embed, link, img, foreignObject, ...) is a problem.
ALLOWED = {
    "html", "head", "meta", "title", "style", "body", "h1", "h2", "h3", "p", "span",
    "table", "tr", "th", "td", "a", "section", "article", "ul", "li", "details",
    "summary", "pre", "svg", "rect", "line", "text", "input", "label", "g",
}
PLOT_X0, PLOT_W = 150.0, 780.0  # reports/html_timeline.c's geometry
SVG_NS = "http://www.w3.org/2000/svg"


class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.problems = []
        self.stack = []
        self.doctype = False
        # the tree, flattened: (depth-path of ids) -> what we need
        self.sections = []  # [{id, name, cls, runs: [{...}], failures}]
        self.index_rows = []  # scenario names in index order
        self.cur_section = None
        self.cur_run = None
        self.capture = None  # ("h2"|"h3"|"index-a"|"not-taken", buffer)
        self.in_index = False
        self.text_chunks = []

    def handle_decl(self, decl):
        if decl.lower() == "doctype html":
            self.doctype = True

    def _attrs_ok(self, tag, attrs):
        for k, v in attrs:
            v = v or ""
            if k.startswith("on"):
                self.problems.append(f"event handler attribute {k} on <{tag}>")
            if k in ("src", "srcset", "action", "formaction", "background", "poster"):
                self.problems.append(f"resource attribute {k} on <{tag}>")
            if k in ("href", "xlink:href") and not v.startswith("#"):
                self.problems.append(f"link {v!r} on <{tag}> leaves the page")
            if k == "xmlns" and v != SVG_NS:
                self.problems.append(f"unexpected namespace {v!r}")
            if k == "style" or (k != "xmlns" and re.search(r"(?i)url\(|https?:|//", v)):
                if k not in ("href",):
                    self.problems.append(f"attribute {k}={v!r} on <{tag}> may fetch")

    def handle_starttag(self, tag, attrs):
        self._open(tag, attrs)
        if tag in VOID:
            self.stack.pop()

    def handle_startendtag(self, tag, attrs):
        self._open(tag, attrs)
        self.stack.pop()

    def _open(self, tag, attrs):
        if tag not in ALLOWED:
            self.problems.append(f"element <{tag}> is not allowed in the report")
        self._attrs_ok(tag, attrs)
        a = dict(attrs)
        cls = (a.get("class") or "").split()
        self.stack.append(tag)
        if tag == "table" and "index" in cls:
            self.in_index = True
        if tag == "a" and self.in_index:
            self.capture = ("index-a", [])
        if tag == "section" and "scenario" in cls:
            self.cur_section = {"id": a.get("id"), "name": "", "cls": cls, "runs": [],
                                "compare": False, "failures": 0, "switch": None,
                                "labels": set(), "svg_before_switch": 0, "axes": set(),
                                "overview": {"lin": 0, "log": 0}, "rows": {}}
            self.cur_svg = None
            self.cur_row = None
            self.sections.append(self.cur_section)
        if self.cur_section is None:
            return
        if tag == "h2":
            self.capture = ("h2", [])
        if tag == "input" and "logscale" in cls:
            if a.get("type") != "checkbox" or self.cur_section["switch"] is not None:
                self.problems.append(f"section {a.get('id')!r}: the axis switch is not one checkbox")
            self.cur_section["switch"] = a.get("id")
        if tag == "label" and a.get("for"):
            self.cur_section["labels"].add(a.get("for"))
        if tag == "svg":
            mode = "log" if "log" in cls else "lin" if "lin" in cls else None
            self.cur_svg = mode
            if mode is None:
                self.problems.append(f"an <svg> drawn on neither axis: {cls}")
            if self.cur_section["switch"] is None:
                self.cur_section["svg_before_switch"] += 1
            self.cur_section["axes"].add(a.get("data-axis-ms"))
            if "overview" in cls and mode:
                self.cur_section["overview"][mode] += 1
        if tag == "g" and "row" in cls and self.cur_run is None and self.cur_svg:
            key = (a.get("data-run") or "", self.cur_svg)
            self.cur_row = {"spans": set(), "marks": set(), "length": 0}
            self.cur_section["rows"][key] = self.cur_row
        if self.cur_row is not None:
            if tag == "rect" and "span" in cls:
                self.cur_row["spans"].update(c for c in cls if c != "span")
            if tag == "line" and "mark" in cls:
                self.cur_row["marks"].update(c for c in cls if c != "mark")
            if tag == "rect" and "run-length" in cls:
                self.cur_row["length"] += 1
        if tag == "table" and "compare" in cls:
            self.cur_section["compare"] = True
        if tag == "article" and "run" in cls:
            self.cur_run = {"title": "", "cls": cls, "svg": 0, "counters": 0, "spans": set(),
                            "marks": set(), "not_taken": 0, "failures": 0,
                            "by_axis": {m: {"svg": 0, "spans": set(), "marks": set(),
                                            "not_taken": 0, "end": []} for m in ("lin", "log")}}
            self.cur_section["runs"].append(self.cur_run)
        if tag == "ul" and "failures" in cls:
            self.cur_section["failures"] += 1
            if self.cur_run is not None:
                self.cur_run["failures"] += 1
        if self.cur_run is None:
            return
        if tag == "h3":
            self.capture = ("h3", [])
        ax = self.cur_run["by_axis"].get(self.cur_svg) if self.cur_svg else None
        if tag == "svg" and "timeline" in cls:
            self.cur_run["svg"] += 1
            if ax is not None:
                ax["svg"] += 1
        if tag == "table" and "counters" in cls:
            self.cur_run["counters"] += 1
        if tag == "rect" and "span" in cls:
            self.cur_run["spans"].update(c for c in cls if c != "span")
            if ax is not None:
                ax["spans"].update(c for c in cls if c != "span")
        if tag == "line" and "mark" in cls:
            self.cur_run["marks"].update(c for c in cls if c != "mark")
            if ax is not None:
                ax["marks"].update(c for c in cls if c != "mark")
        if tag == "text" and "not-taken" in cls:
            self.cur_run["not_taken"] += 1
            if ax is not None:
                ax["not_taken"] += 1
        if tag == "line" and "run-end" in cls and ax is not None:
            ax["end"].append(float(a.get("x1") or "nan"))
            self.capture = ("run-end", [])

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.problems.append(f"end tag </{tag}> does not close <{self.stack[-1] if self.stack else ''}>")
            if tag in self.stack:
                while self.stack and self.stack.pop() != tag:
                    pass
            return
        self.stack.pop()
        if tag == "svg":
            self.cur_svg = None
        if tag == "g":
            self.cur_row = None
        if self.capture and self.capture[0] == "run-end" and tag == "title":
            m = re.search(r"ended at ([0-9.]+) s", "".join(self.capture[1]))
            if self.cur_run is not None and m:
                self.cur_run.setdefault("length_s", float(m.group(1)))
            self.capture = None
        if self.capture and tag in ("h2", "h3", "a"):
            kind, buf = self.capture
            text = "".join(buf).strip()
            if kind == "h2" and self.cur_section is not None:
                self.cur_section["name"] = text.rsplit(" ", 1)[0]
            elif kind == "h3" and self.cur_run is not None:
                self.cur_run["title"] = text
            elif kind == "index-a":
                self.index_rows.append(text)
            self.capture = None
        if tag == "table":
            self.in_index = False
        if tag == "article":
            self.cur_run = None
        if tag == "section":
            self.cur_section = None

    def handle_data(self, data):
        if self.capture:
            self.capture[1].append(data)


def shared_axis_problems(s):
    """One switch ahead of every timeline; one axis for the whole scenario."""
    probs = []
    name = s["name"]
    if s["switch"] is None or s["switch"] not in s["labels"]:
        probs.append(f"scenario {name!r}: no labelled log-scale checkbox")
    if s["svg_before_switch"]:
        probs.append(f"scenario {name!r}: a timeline comes before the axis switch")
    if s["overview"] != {"lin": 1, "log": 1}:
        probs.append(f"scenario {name!r}: overviews {s['overview']} (want one on each axis)")
    if len(s["axes"]) != 1 or None in s["axes"]:
        probs.append(f"scenario {name!r}: its timelines do not share one axis: {sorted(map(str, s['axes']))}")
        return probs
    axis_s = float(next(iter(s["axes"]))) / 1000.0
    longest = 0.0
    for r in s["runs"]:
        ln = r.get("length_s")
        ends = r["by_axis"]["lin"]["end"]
        if ln is None or len(ends) != 1:
            probs.append(f"run {r['title']!r} of {name!r}: no run end drawn")
            continue
        longest = max(longest, ln)
        want = PLOT_X0 + min(ln / axis_s, 1.0) * PLOT_W if axis_s > 0 else PLOT_X0
        if abs(ends[0] - want) > 1.0:
            probs.append(f"run {r['title']!r} of {name!r}: ends at x={ends[0]}, its length "
                         f"{ln} s on the {axis_s} s axis puts it at {want:.1f}")
        key = " ".join(r["title"].split()[0:3:2])
        rows = [s["rows"].get((key, m)) for m in ("lin", "log")]
        if any(row is None or row["length"] != 1 for row in rows):
            probs.append(f"run {r['title']!r} of {name!r}: no overview row on each axis")
    if axis_s > 0.001 and abs(longest - axis_s) > 0.001:
        probs.append(f"scenario {name!r}: the axis is {axis_s} s, its longest run {longest} s")
    return probs


def run_named(section, strategy, name):
    for r in section["runs"]:
        parts = r["title"].split()
        if len(parts) >= 3 and parts[0] == strategy and parts[2] == name:
            return r
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("page")
    ap.add_argument("--forbid-file")
    ap.add_argument("--stage-reassert")
    ap.add_argument("--escaped", action="append", default=[])
    ap.add_argument("--failing", action="append", default=[])
    a = ap.parse_args()
    raw = open(a.page, encoding="utf-8").read()
    p = Page()
    p.feed(raw)
    p.close()
    probs = list(p.problems)
    if not raw.startswith("<!DOCTYPE html>") or not p.doctype:
        probs.append("the page does not start with <!DOCTYPE html>")
    if p.stack:
        probs.append(f"unclosed elements at the end: {p.stack}")
    if re.search(r"(?i)@import|url\(", raw):
        probs.append("CSS that may fetch (@import or url())")
    css = "".join(re.findall(r"<style>(.*?)</style>", raw, re.S))
    for mode, when in (("lin", ":checked"), ("log", ":not(:checked)")):
        if not re.search(r"input\.logscale%s~[^{]*svg\.%s[^{]*\{display:none\}" % (re.escape(when), mode), css):
            probs.append(f"no CSS rule hides svg.{mode} when the switch is {when}")
    if not p.sections:
        probs.append("no scenario section")
    for s in p.sections:
        if not s["runs"] and "SKIPPED" not in s["cls"] and s["failures"] == 0:
            probs.append(f"scenario {s['name']!r} has no run and no failure")
        for r in s["runs"]:
            axes = {m: r["by_axis"][m]["svg"] for m in ("lin", "log")}
            if axes != {"lin": 1, "log": 1} or r["counters"] != 1:
                probs.append(f"run {r['title']!r} of {s['name']!r}: timelines {axes}, "
                             f"{r['counters']} counter tables (want one timeline on each axis "
                             "and one table)")
        if s["runs"]:
            probs.extend(shared_axis_problems(s))
    if a.forbid_file:
        for line in open(a.forbid_file, encoding="utf-8").read().splitlines():
            if line and line in raw:
                probs.append("a forbidden string (a secret in some encoding) is in the page")
    for t in a.escaped:
        esc = t.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        esc = esc.replace('"', "&quot;").replace("'", "&#39;")
        if esc not in raw:
            probs.append(f"{t!r} does not appear HTML-escaped")
    for i, name in enumerate(a.failing):
        if i >= len(p.index_rows) or p.index_rows[i] != name:
            probs.append(f"failing scenario {name!r} is not listed first in the index")
        sec = [s for s in p.sections if s["name"] == name]
        if not sec or "FAIL" not in sec[0]["cls"] or sec[0]["failures"] == 0:
            probs.append(f"scenario {name!r} has no FAIL section listing its failures")
    if a.stage_reassert:
        sec = [s for s in p.sections if s["name"] == a.stage_reassert]
        if not sec:
            probs.append(f"no section for {a.stage_reassert!r}")
        else:
            s = sec[0]
            fences = {"lease", "parent", "child"}
            st, lr, er = (run_named(s, "lazy", "stage"), run_named(s, "lazy", "reassert"),
                          run_named(s, "eager", "reassert"))
            if not (st and lr and er):
                probs.append("lazy stage, lazy reassert or eager reassert missing")
            else:
                if not fences <= st["spans"] or not {"claim", "reboot", "drain"} <= st["spans"]:
                    probs.append(f"lazy stage spans {sorted(st['spans'])}: want fences and nodes")
                if not {"restart", "cutover", "write"} <= st["marks"]:
                    probs.append(f"lazy stage marks {sorted(st['marks'])}: want restart, "
                                 "cutover, write")
                if lr["spans"] & fences or lr["not_taken"] != 6 or lr["marks"]:
                    probs.append(f"lazy reassert is not fence-free: spans {sorted(lr['spans'])}"
                                 f", marks {sorted(lr['marks'])}, {lr['not_taken']} not taken")
                if not fences <= er["spans"] or "restart" not in er["marks"]:
                    probs.append(f"eager reassert spans {sorted(er['spans'])}: want fences")
                for m in ("lin", "log"):
                    sa, la = st["by_axis"][m], lr["by_axis"][m]
                    if not fences <= sa["spans"] or not {"restart", "cutover"} <= sa["marks"]:
                        probs.append(f"lazy stage on the {m} axis: spans {sorted(sa['spans'])}, "
                                     f"marks {sorted(sa['marks'])}")
                    if la["spans"] & fences or la["not_taken"] != 3:
                        probs.append(f"lazy reassert on the {m} axis is not fence-free")
                    rs_, rl, re_ = (s["rows"].get(("lazy stage", m)), s["rows"].get(("lazy reassert", m)),
                                    s["rows"].get(("eager reassert", m)))
                    if not rs_ or "lease" not in rs_["spans"] or "restart" not in rs_["marks"]:
                        probs.append(f"overview ({m}): lazy stage's row lacks the Lease or the restart")
                    if not re_ or "lease" not in re_["spans"] or "restart" not in re_["marks"]:
                        probs.append(f"overview ({m}): eager reassert's row lacks the Lease or the restart")
                    if not rl or rl["spans"] or rl["marks"]:
                        probs.append(f"overview ({m}): lazy reassert's row is not fence-free")
                le, ee = lr["by_axis"]["lin"]["end"], er["by_axis"]["lin"]["end"]
                if not (le and ee and le[0] < ee[0]):
                    probs.append(f"lazy reassert does not end left of eager on the shared axis: {le} {ee}")
                ll = lr["by_axis"]["log"]["end"]
                if not ll or ll[0] - PLOT_X0 < PLOT_W / 5:
                    probs.append(f"lazy reassert on the log axis is a sliver: ends at {ll}")
            if not s["compare"]:
                probs.append("no eager-vs-lazy table")
    for x in probs:
        print("report:", x)
    return 1 if probs else 0


if __name__ == "__main__":
    sys.exit(main())
