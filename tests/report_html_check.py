#!/usr/bin/env python3
"""The structure of `reassert sim --report DIR`'s page, checked without a
browser (tests/check_report_html.sh).

  report_html_check.py PAGE [--forbid-file FILE] [--stage-reassert NAME]
                            [--escaped TEXT]... [--failing NAME]...

Checks: one well-formed document (every element closed in order, no stray
end tag); self-contained (no script, no external resource, no URL besides
in-page anchors and the SVG namespace); every scenario section has its
runs, each with an inline SVG timeline and a counter table. With
--stage-reassert NAME, that scenario's lazy `stage` run shows the Lease and
both policy fences, a controller restart and the root cutover, and its lazy
`reassert` run shows no fence at all (three "not taken" lanes) while the
eager `reassert` shows all three. --forbid-file lists strings (one a line)
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
    "summary", "pre", "svg", "rect", "line", "text",
}
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
                                "compare": False, "failures": 0}
            self.sections.append(self.cur_section)
        if self.cur_section is None:
            return
        if tag == "h2":
            self.capture = ("h2", [])
        if tag == "table" and "compare" in cls:
            self.cur_section["compare"] = True
        if tag == "article" and "run" in cls:
            self.cur_run = {"title": "", "cls": cls, "svg": 0, "counters": 0, "spans": set(),
                            "marks": set(), "not_taken": 0, "failures": 0}
            self.cur_section["runs"].append(self.cur_run)
        if tag == "ul" and "failures" in cls:
            self.cur_section["failures"] += 1
            if self.cur_run is not None:
                self.cur_run["failures"] += 1
        if self.cur_run is None:
            return
        if tag == "h3":
            self.capture = ("h3", [])
        if tag == "svg" and "timeline" in cls:
            self.cur_run["svg"] += 1
        if tag == "table" and "counters" in cls:
            self.cur_run["counters"] += 1
        if tag == "rect" and "span" in cls:
            self.cur_run["spans"].update(c for c in cls if c != "span")
        if tag == "line" and "mark" in cls:
            self.cur_run["marks"].update(c for c in cls if c != "mark")
        if tag == "text" and "not-taken" in cls:
            self.cur_run["not_taken"] += 1

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
    if not p.sections:
        probs.append("no scenario section")
    for s in p.sections:
        if not s["runs"] and "SKIPPED" not in s["cls"] and s["failures"] == 0:
            probs.append(f"scenario {s['name']!r} has no run and no failure")
        for r in s["runs"]:
            if r["svg"] != 1 or r["counters"] != 1:
                probs.append(f"run {r['title']!r} of {s['name']!r}: {r['svg']} timelines, "
                             f"{r['counters']} counter tables (want 1 each)")
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
                if lr["spans"] & fences or lr["not_taken"] != 3 or lr["marks"]:
                    probs.append(f"lazy reassert is not fence-free: spans {sorted(lr['spans'])}"
                                 f", marks {sorted(lr['marks'])}, {lr['not_taken']} not taken")
                if not fences <= er["spans"] or "restart" not in er["marks"]:
                    probs.append(f"eager reassert spans {sorted(er['spans'])}: want fences")
            if not s["compare"]:
                probs.append("no eager-vs-lazy table")
    for x in probs:
        print("report:", x)
    return 1 if probs else 0


if __name__ == "__main__":
    sys.exit(main())
