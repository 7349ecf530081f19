"""The page around the sections: inline CSS, the failure browser's vanilla JS, nothing fetched from anywhere.

The browser's script reads its data from the ``<script type="application/json" id="browser-data">`` block and
builds every element with ``textContent`` (never ``innerHTML``), so no text in the data can become markup.
"""

from __future__ import annotations

from .markup import esc

CSS = """
body{font-family:system-ui,sans-serif;margin:1.5em auto;max-width:1200px;padding:0 1em;color:#222}
h1{font-size:1.5em}h2{font-size:1.2em;border-bottom:1px solid #ccc;margin-top:2em}
table{border-collapse:collapse;margin:.6em 0;font-size:.9em}
th,td{border:1px solid #ddd;padding:.25em .5em;text-align:left;vertical-align:top}
th{background:#f3f3f3}caption{text-align:left;font-weight:600;padding:.3em 0}
small{color:#666}.best{font-weight:700}.legend,.note{color:#555;font-size:.85em}
.v-better{color:#17612a;font-weight:600}.v-worse{color:#a11;font-weight:600}
.plot svg{max-width:100%;height:auto}nav a{margin-right:1em}
#browser-filters label{margin-right:1em}.case{border:1px solid #ddd;margin:.4em 0;padding:.3em .6em}
.case summary{cursor:pointer}.ctx{margin:.2em 0 .2em 1em;font-size:.85em}.ref{background:#e8f5e9}
.seg-true{color:#17612a}.seg-false{color:#a11}.cl-good{color:#17612a}.cl-warn{color:#8a5a00}.cl-bad{color:#a11}.answer{white-space:pre-wrap;background:#fafafa;padding:.3em}
"""

SCRIPT = r"""
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("browser-data").textContent);
  var list = document.getElementById("browser-cases");
  var fSystem = document.getElementById("filter-system");
  var fMetric = document.getElementById("filter-metric");
  var fMax = document.getElementById("filter-max");
  var fVerdict = document.getElementById("filter-verdict");
  var count = document.getElementById("browser-count");
  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined && text !== null) { e.textContent = String(text); }
    if (cls) { e.className = cls; }
    return e;
  }
  function option(select, value) { var o = el("option", value); o.value = value; select.appendChild(o); }
  data.systems.forEach(function (s) { option(fSystem, s); });
  data.metrics.forEach(function (m) { option(fMetric, m); });
  data.verdicts.forEach(function (v) { option(fVerdict, v); });
  function fmt(v) {
    if (v === null || v === undefined) { return "unscored"; }
    return typeof v === "number" ? v.toFixed(3) : String(v);
  }
  function values(entry) {
    var out = {};
    entry.metrics.concat(entry.judgements).forEach(function (m) { out[m.name] = m; });
    return out;
  }
  function contextLine(c, i) {
    var where = c.document ? " (" + c.document + ")" : "";
    return "[" + (i + 1) + "] " + c.id + where + (c.reference ? " REFERENCE" : "") + ": " + c.text;
  }
  function row(cells, cls) {
    var tr = el("tr");
    cells.forEach(function (text, i) { tr.appendChild(el("td", text, i === 1 ? cls : "")); });
    return tr;
  }
  function valueRows(tbody, vals) {
    Object.keys(vals).forEach(function (name) {
      var m = vals[name];
      tbody.appendChild(row([name, fmt(m.value), m.verdict, m.reason || m.explanation]));
      m.segments.forEach(function (s) {
        var word = s.correct === null ? "no verdict" : (s.correct ? "true" : "false");
        tbody.appendChild(row(["  segment", word, s.text, s.explanation], s.correct ? "seg-true" : "seg-false"));
      });
    });
  }
  function claimTable(claims) {
    var table = el("table"), tbody = el("tbody");
    table.appendChild(el("caption", "Claims (checks stored with " + claims.metric + ")"));
    table.appendChild(tbody);
    [["reference", "reference answer"], ["response", "response"]].forEach(function (side) {
      claims[side[0]].forEach(function (c) {
        var tr = el("tr");
        tr.appendChild(el("td", side[1]));
        tr.appendChild(el("td", c.mark, "cl-" + c.tone));
        tr.appendChild(el("td", c.text));
        tr.appendChild(el("td", c.chunk ? "chunk " + c.chunk : "-"));
        tbody.appendChild(tr);
      });
    });
    return table;
  }
  function caseElement(sample, entry) {
    var box = el("details", null, "case"), vals = values(entry);
    box.dataset.system = entry.system;
    box.appendChild(el("summary", [entry.system, sample.id, entry.status, sample.question].join(" | ")));
    box.appendChild(el("p", "Question: " + sample.question));
    box.appendChild(el("p", "Reference answers: " + (sample.references.join(" | ") || "-")));
    box.appendChild(el("p", "Reference ids: " + (sample.reference_ids.join(", ") || "-")));
    box.appendChild(el("div", entry.error ? "Error: " + entry.error : entry.answer, "answer"));
    entry.contexts.forEach(function (c, i) {
      box.appendChild(el("div", contextLine(c, i), "ctx" + (c.reference ? " ref" : "")));
    });
    var table = el("table"), tbody = el("tbody");
    table.appendChild(tbody);
    valueRows(tbody, vals);
    box.appendChild(table);
    if (entry.claims) { box.appendChild(claimTable(entry.claims)); }
    box._values = vals;
    box._status = entry.status;
    return box;
  }
  var rows = [];
  data.samples.forEach(function (sample) {
    sample.systems.forEach(function (entry) {
      var e = caseElement(sample, entry);
      rows.push(e);
      list.appendChild(e);
    });
  });
  function hasVerdict(r, verdict) {
    if (verdict === "failed") { return r._status === "failed"; }
    return Object.keys(r._values).some(function (k) { return r._values[k].verdict === verdict; });
  }
  function matches(r) {
    if (fSystem.value && r.dataset.system !== fSystem.value) { return false; }
    if (fMetric.value) {
      var m = r._values[fMetric.value], limit = parseFloat(fMax.value);
      if (!m) { return false; }
      if (!isNaN(limit) && m.value !== null && m.value > limit) { return false; }
    }
    return !fVerdict.value || hasVerdict(r, fVerdict.value);
  }
  function apply() {
    var shown = 0;
    rows.forEach(function (r) { var ok = matches(r); r.hidden = !ok; if (ok) { shown++; } });
    count.textContent = shown + " of " + rows.length + " shown";
  }
  [fSystem, fMetric, fVerdict].forEach(function (s) { s.addEventListener("change", apply); });
  fMax.addEventListener("input", apply);
  apply();
})();
"""

BROWSER = """
<div id="browser-filters">
<label>system <select id="filter-system"><option value="">all</option></select></label>
<label>metric <select id="filter-metric"><option value="">any</option></select></label>
<label>at most <input id="filter-max" type="number" step="0.05" size="5"></label>
<label>verdict <select id="filter-verdict"><option value="">any</option></select></label>
<span id="browser-count"></span>
</div>
<div id="browser-cases"></div>
"""


def page(title: str, nav: list[tuple[str, str]], body: str) -> str:
    """The whole document: ``body`` (sections, already escaped HTML), a contents line and the script."""
    links = "".join(f'<a href="#{esc(anchor)}">{esc(label)}</a>' for anchor, label in nav)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)}</title><style>{CSS}</style></head>"
        f"<body><h1>{esc(title)}</h1><nav>{links}</nav>{body}<script>{SCRIPT}</script></body></html>\n"
    )
