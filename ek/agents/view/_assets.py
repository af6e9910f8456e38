"""The page's inline style sheet and script, and the Content-Security-Policy that allows
only them (by their SHA-256 hashes): no network load, no other script, whatever a run holds."""

from __future__ import annotations

import base64
import hashlib

__all__ = ["CSS", "SCRIPT", "content_security_policy"]

CSS = """
:root { --ok: #1a7f37; --bad: #cf222e; --warn: #9a6700; --ins: #0969da; --mute: #57606a;
  --line: #d0d7de; --bg2: #f6f8fa; }
* { box-sizing: border-box; }
[hidden] { display: none !important; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0 auto;
  padding: 16px 24px 48px; max-width: 1280px; color: #1f2328; }
h1 { font-size: 22px; margin: 4px 0 12px; } h2 { font-size: 18px; margin: 28px 0 8px;
  border-bottom: 1px solid var(--line); padding-bottom: 4px; } h3 { font-size: 15px; margin: 14px 0 6px; }
table { border-collapse: collapse; margin: 6px 0 10px; }
th, td { border: 1px solid var(--line); padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: var(--bg2); font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.ok { color: var(--ok); font-weight: 600; } .bad { color: var(--bad); font-weight: 600; }
.warnc { color: var(--warn); font-weight: 600; } .mute { color: var(--mute); }
.warnings li { color: var(--warn); }
.kv th { width: 14em; }
.big { font-size: 20px; font-weight: 600; }
.cards { display: flex; flex-wrap: wrap; gap: 12px; margin: 8px 0; }
.card { border: 1px solid var(--line); border-radius: 6px; padding: 8px 12px; min-width: 200px; }
.card .label { color: var(--mute); font-size: 12px; }
.controls { display: flex; gap: 16px; align-items: center; margin: 8px 0; flex-wrap: wrap; }
.controls input[type=search] { width: 260px; padding: 3px 6px; }
th button.sort { all: unset; cursor: pointer; } th button.sort::after { content: " \\21C5";
  color: var(--mute); }
button.open, button.more { cursor: pointer; font-size: 12px; }
tr.detail > td { background: #fbfcfd; }
details.trial { border: 1px solid var(--line); border-radius: 4px; margin: 4px 0; padding: 2px 8px;
  background: white; }
details.trial > summary { cursor: pointer; }
pre { white-space: pre-wrap; word-break: break-word; margin: 0; font: 12px/1.4 ui-monospace,
  SFMono-Regular, Menlo, monospace; }
tr.op-match td.op { color: var(--ok); } tr.op-substitute td.op { color: var(--warn); }
tr.op-insert td.op { color: var(--ins); } tr.op-delete td.op { color: var(--bad); }
tr.op-match { background: #dafbe1; } tr.op-substitute { background: #fff8c5; }
tr.op-insert { background: #ddf4ff; } tr.op-delete { background: #ffebe9; }
tr.fault { background: #ffebe9; }
.legend span { margin-right: 14px; }
svg text { font: 11px system-ui, sans-serif; }
"""

SCRIPT = r"""
(function () {
  "use strict";
  var SHOW = 2000;
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (text !== undefined && text !== null) { e.textContent = String(text); }
    return e;
  }
  function pretty(text) {
    var c = text.charAt(0);
    if (c !== "{" && c !== "[") { return text; }
    try { return JSON.stringify(JSON.parse(text), null, 1); } catch (e) { return text; }
  }
  function longText(text) {
    var box = el("div"), pre = el("pre");
    text = pretty(text === null || text === undefined ? "" : String(text));
    if (text.length <= SHOW) { pre.textContent = text; box.appendChild(pre); return box; }
    pre.textContent = text.slice(0, SHOW) + " \u2026";
    var b = el("button", "more", "show all (" + text.length + " characters)");
    b.type = "button";
    b.addEventListener("click", function () { pre.textContent = text; b.remove(); });
    box.appendChild(pre); box.appendChild(b);
    return box;
  }
  function table(head, rows, rowClass) {
    var t = el("table"), tr = el("tr");
    head.forEach(function (h) { tr.appendChild(el("th", null, h)); });
    t.appendChild(tr);
    rows.forEach(function (r, i) {
      var row = el("tr", rowClass ? rowClass(i) : null);
      r.forEach(function (c) {
        var td = el("td");
        if (c instanceof Node) { td.appendChild(c); } else { td.textContent = c === null ? "" : String(c); }
        row.appendChild(td);
      });
      t.appendChild(row);
    });
    return t;
  }
  function section(box, title, note) {
    box.appendChild(el("h3", null, title));
    if (note) { box.appendChild(el("p", "mute", note)); }
  }
  function steps(box, tr) {
    section(box, "Steps (" + tr.steps.length + ")");
    box.appendChild(table(["#", "tool", "arguments", "observation / error"], tr.steps.map(function (s) {
      return [s.i, s.tool, longText(s.args), longText(s.error ? "error: " + s.error : s.obs)];
    }), function (i) { return tr.steps[i].fault ? "fault" : null; }));
  }
  function alignment(box, a) {
    section(box, "Trajectory alignment: " + a.metric, a.reason);
    var lg = el("p", "legend");
    a.legend.forEach(function (x) { lg.appendChild(el("span", "op-" + x[0], x[0] + ": " + x[1])); });
    box.appendChild(lg);
    var t = table(["operation", "expected step", "actual step", "tool", "cost", "arguments that differ"],
      a.rows.map(function (r) { return [r.op, r.expected, r.actual, r.tool, r.cost, r.args]; }),
      function (i) { return "op-" + a.rows[i].op; });
    Array.prototype.forEach.call(t.querySelectorAll("tr"), function (row, i) {
      if (i > 0) { row.firstChild.className = "op"; }
    });
    box.appendChild(t);
  }
  function calls(box, c) {
    section(box, "Tool-call match: " + c.metric, c.reason);
    box.appendChild(table(["row", "gold call", "predicted call", "tool", "detail"],
      c.rows.map(function (r) { return [r.kind, r.gold, r.pred, r.tool, r.detail]; })));
  }
  function renderTrial(tr) {
    var d = el("details", "trial"), s = el("summary");
    d.dataset.trial = tr.trial;
    d.dataset.ok = String(tr.ok);
    s.appendChild(el("span", tr.ok ? "ok" : "bad", tr.verdict));
    s.appendChild(document.createTextNode(" trial " + tr.trial + " \u00b7 " + tr.steps.length +
      " steps \u00b7 " + tr.cost + (tr.error ? " \u00b7 error: " + tr.error.slice(0, 120) : "")));
    d.appendChild(s);
    d.addEventListener("toggle", function () {
      if (!d.open || d.dataset.filled) { return; }
      d.dataset.filled = "1";
      var box = el("div", "trial-body");
      section(box, "Verdict", tr.verdict_reason);
      if (tr.faults.length) { section(box, "Faults injected", tr.faults.join("; ")); }
      steps(box, tr);
      tr.alignments.forEach(function (a) { alignment(box, a); });
      tr.calls.forEach(function (c) { calls(box, c); });
      tr.tables.forEach(function (t) {
        section(box, t.title);
        box.appendChild(table(t.head, t.rows.map(function (r) { return r.map(longText); })));
      });
      section(box, "Scores");
      box.appendChild(table(["metric", "value", "passed", "reason"], tr.scores.map(function (x) {
        return [x.name, x.value, x.passed, longText(x.reason)];
      })));
      [["Input", tr.input], ["Output", tr.output], ["Final state", tr.final_state],
       ["Metadata", tr.metadata]].forEach(function (p) {
        if (p[1]) { section(box, p[0]); box.appendChild(longText(p[1])); }
      });
      d.appendChild(box);
    });
    return d;
  }
  function decode(node) {
    var bin = atob(node.textContent.trim()), bytes = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) { bytes[i] = bin.charCodeAt(i); }
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Response(stream).text().then(JSON.parse);
  }
  function openTask(btn) {
    var group = btn.closest("tbody"), row = group.querySelector("tr.detail");
    var cell = row.firstElementChild;
    row.hidden = !row.hidden;
    btn.setAttribute("aria-expanded", String(!row.hidden));
    if (row.hidden || cell.dataset.filled) { return Promise.resolve(); }
    cell.dataset.filled = "1";
    var data = document.getElementById(btn.dataset.trials);
    if (!data) { cell.textContent = "no trial details recorded"; return Promise.resolve(); }
    cell.textContent = "loading\u2026";
    return decode(data).then(function (trials) {
      cell.textContent = "";
      trials.forEach(function (tr) { cell.appendChild(renderTrial(tr)); });
    }).catch(function (e) { cell.textContent = "could not read the trials: " + e; });
  }
  function sortBy(table, col, btn) {
    var dir = btn.dataset.dir === "asc" ? "desc" : "asc";
    btn.dataset.dir = dir;
    var groups = Array.prototype.slice.call(table.tBodies);
    var num = btn.dataset.type === "num";
    function key(g) {
      var v = g.rows[0].cells[col].dataset.v;
      if (v === undefined) { v = g.rows[0].cells[col].textContent; }
      return num ? (v === "" || isNaN(+v) ? Infinity : +v) : v;
    }
    groups.sort(function (a, b) {
      var x = key(a), y = key(b), c = x < y ? -1 : x > y ? 1 : 0;
      return dir === "asc" ? c : -c;
    });
    groups.forEach(function (g) { table.appendChild(g); });
  }
  function filterTasks() {
    var q = document.getElementById("task-search").value.toLowerCase();
    var failed = document.getElementById("only-failed").checked;
    var flaky = document.getElementById("only-flaky").checked;
    var shown = 0, groups = document.querySelectorAll("#tasks > tbody");
    Array.prototype.forEach.call(groups, function (g) {
      var r = g.rows[0].dataset;
      var hide = (q && r.task.toLowerCase().indexOf(q) < 0) || (failed && r.failed !== "1") ||
        (flaky && r.flaky !== "1");
      g.hidden = !!hide;
      if (!hide) { shown++; }
    });
    document.getElementById("task-count").textContent = shown + " of " + groups.length + " tasks shown";
  }
  document.addEventListener("click", function (ev) {
    var t = ev.target;
    if (!(t instanceof Element)) { return; }
    var open = t.closest("button.open");
    if (open) { openTask(open); return; }
    var sort = t.closest("button.sort");
    if (sort) {
      var th = sort.closest("th");
      sortBy(th.closest("table"), Array.prototype.indexOf.call(th.parentNode.children, th), sort);
    }
  });
  ["task-search", "only-failed", "only-flaky"].forEach(function (id) {
    var e = document.getElementById(id);
    if (e) { e.addEventListener("input", filterTasks); e.addEventListener("change", filterTasks); }
  });
  var ctl = document.getElementById("task-controls");
  if (ctl) { ctl.hidden = false; filterTasks(); }
  window.ekView = { openTask: openTask };
})();
"""


def _sha256(text: str) -> str:
    return base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


def content_security_policy() -> str:
    """The page's policy: its own style sheet and script only (by hash), images only inline
    (``data:``), and nothing fetched, framed, submitted or connected to.

    Example:
        >>> "default-src 'none'" in content_security_policy()
        True
    """
    return (
        "default-src 'none'; "
        f"script-src 'sha256-{_sha256(SCRIPT)}'; "
        f"style-src 'sha256-{_sha256(CSS)}'; "
        "img-src data:; base-uri 'none'; form-action 'none'"
    )
