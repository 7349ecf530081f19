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
  function scoreText(entry) {
    var parts = entry.metrics.map(function (m) { return m.name + " " + fmt(m.value); });
    entry.judgements.forEach(function (j) { parts.push(j.name + " " + (j.verdict || fmt(j.value))); });
    return parts.join(", ") || "no score";
  }
  function caseElement(sample, entry) {
    var box = el("details", null, "case"), vals = values(entry);
    box.dataset.system = entry.system;
    var line = [entry.system, sample.id, entry.status, scoreText(entry), sample.question];
    box.appendChild(el("summary", line.join(" | ")));
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
  data.order.forEach(function (pair) {  // worst first, as the report ordered them
    var sample = data.samples[pair[0]];
    var e = caseElement(sample, sample.systems[pair[1]]);
    e._rank = rows.length;
    rows.push(e);
    list.appendChild(e);
  });
  function metricKey(r, metric) {  // worst value of the metric first, unscored last, then the report's order
    var m = r._values[metric], sign = data.directions[metric] === "lower" ? -1 : 1;
    return m && m.value !== null && typeof m.value === "number" ? sign * m.value : Infinity;
  }
  function reorder() {
    var metric = fMetric.value, sorted = rows.slice();
    sorted.sort(function (a, b) {
      var d = metric ? metricKey(a, metric) - metricKey(b, metric) : 0;
      if (d !== d) { d = 0; }  // both unscored
      return d || a._rank - b._rank;
    });
    sorted.forEach(function (r) { list.appendChild(r); });
  }
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
  fMetric.addEventListener("change", reorder);
  [fSystem, fMetric, fVerdict].forEach(function (s) { s.addEventListener("change", apply); });
  fMax.addEventListener("input", apply);
  apply();
})();
