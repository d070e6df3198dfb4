"""The report's inline stylesheet and script (no CDN, no external file: the page opens offline).

The script only reads the JSON data block and builds the item table with `textContent`, never
`innerHTML`, so a model output cannot become markup. The page's Content-Security-Policy allows
exactly this script (by its sha256), so even an injected `<script>` would not run.
"""

from __future__ import annotations

import base64
import hashlib
from typing import Final

CSS: Final[str] = """
:root { --ink: #222; --muted: #666; --line: #ddd; --bg: #fafafa; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink);
  margin: 0; background: #fff; }
header { padding: 18px 28px; background: var(--bg); border-bottom: 1px solid var(--line); }
header h1 { margin: 0 0 6px; font-size: 22px; }
main { padding: 8px 28px 40px; max-width: 1400px; }
h2 { margin: 28px 0 8px; font-size: 18px; border-bottom: 1px solid var(--line);
  padding-bottom: 4px; }
h3 { margin: 18px 0 6px; font-size: 15px; }
.muted { color: var(--muted); }
.row { display: flex; flex-wrap: wrap; gap: 18px; align-items: flex-start; }
.figure { background: #fff; border: 1px solid var(--line); }
table { border-collapse: collapse; margin: 6px 0; }
th, td { border: 1px solid var(--line); padding: 3px 7px; text-align: left;
  vertical-align: top; }
th { background: var(--bg); }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.comp td.num { min-width: 62px; }
.gallery { display: flex; flex-direction: column; gap: 14px; }
.card { border: 1px solid var(--line); padding: 10px; border-radius: 4px; }
.card img { max-width: 100%; image-rendering: pixelated; border: 1px solid var(--line); }
.tag { display: inline-block; padding: 1px 6px; border-radius: 3px; background: #eef;
  margin-right: 4px; }
.legend span { display: inline-block; padding: 0 6px; margin-right: 6px; color: #fff; }
pre.output { white-space: pre-wrap; word-break: break-word; background: var(--bg);
  padding: 4px 6px; margin: 2px 0; max-height: 8em; overflow: auto; }
#item-table { font-size: 12px; }
#item-table th { cursor: pointer; user-select: none; position: sticky; top: 0; }
#item-table td.y1 { background: #d9f0d3; }
#item-table td.y0 { background: #f4cccc; }
.controls { display: flex; gap: 10px; margin: 8px 0; align-items: center; }
.controls input { width: 260px; }
.table-wrap { max-height: 640px; overflow: auto; border: 1px solid var(--line); }
nav a { margin-right: 12px; }
p.headline { font-size: 16px; margin: 4px 0 8px; max-width: 1100px; }
tr.differs td { background: #fff3cd; }
#item-table { width: 100%; }
#item-table td, #item-table th { overflow-wrap: anywhere; }
p.derived { padding: 6px 10px; border-left: 4px solid #e6a700; background: #fff8e1; }
p.derived.recomputed { border-left-color: #3182bd; background: #eef5fb; }
"""

JS: Final[str] = """
(function () {
  'use strict';
  var node = document.getElementById('itemscale-data');
  var data = JSON.parse(node.textContent);
  var table = document.getElementById('item-table');
  var filterBox = document.getElementById('item-filter');
  var patternBox = document.getElementById('pattern-filter');
  var modelBox = document.getElementById('model-filter');
  var countNode = document.getElementById('item-count');
  var columns = data.columns;
  var rows = data.rows;
  var limit = data.row_limit;
  var sortCol = -1;
  var sortDir = 1;
  var haystack = rows.map(function (r) { return r.join('\\u0001').toLowerCase(); });

  function option(select, value, label) {
    var o = document.createElement('option');
    o.value = value;
    o.textContent = label;
    select.appendChild(o);
  }
  option(patternBox, '', 'all patterns');
  data.patterns.forEach(function (p) { option(patternBox, p, p.replace(/_/g, ' ')); });
  option(modelBox, '', 'all models');
  data.models.forEach(function (m) { option(modelBox, m, m); });

  var thead = document.createElement('thead');
  var headRow = document.createElement('tr');
  columns.forEach(function (c, i) {
    var th = document.createElement('th');
    th.textContent = c.label;
    th.title = 'sort by ' + c.label;
    th.dataset.col = String(i);
    th.addEventListener('click', function () {
      sortDir = sortCol === i ? -sortDir : 1;
      sortCol = i;
      render();
    });
    headRow.appendChild(th);
  });
  thead.appendChild(headRow);
  table.appendChild(thead);
  var tbody = document.createElement('tbody');
  table.appendChild(tbody);

  function compare(a, b) {
    if (a === b) { return 0; }
    if (a === null || a === undefined || a === '') { return 1; }
    if (b === null || b === undefined || b === '') { return -1; }
    if (typeof a === 'number' && typeof b === 'number') { return a < b ? -1 : 1; }
    return String(a).localeCompare(String(b), undefined, { numeric: true });
  }

  function cellText(col, value, binary) {
    if (value === null || value === undefined) { return ''; }
    if (col.kind === 'outcome') {
      if (typeof value !== 'number') { return String(value); }
      if (binary) { return value >= 0.5 ? '\\u2713' : '\\u2717'; }
      return value.toFixed(2);
    }
    return String(value);
  }

  function render() {
    var text = filterBox.value.trim().toLowerCase();
    var pattern = patternBox.value;
    var model = modelBox.value;
    var picked = [];
    for (var i = 0; i < rows.length; i++) {
      var r = rows[i];
      if (pattern && r[data.pattern_col] !== pattern) { continue; }
      if (model && r[data.model_col] !== model) { continue; }
      if (text && haystack[i].indexOf(text) < 0) { continue; }
      picked.push(r);
    }
    if (sortCol >= 0) {
      var c = sortCol;
      picked = picked.map(function (r, n) { return [r, n]; });
      picked.sort(function (a, b) { return sortDir * compare(a[0][c], b[0][c]) || a[1] - b[1]; });
      picked = picked.map(function (p) { return p[0]; });
    }
    var shown = picked.slice(0, limit);
    var body = document.createElement('tbody');
    shown.forEach(function (r) {
      var tr = document.createElement('tr');
      var binary = r[data.kind_col] === 'binary';
      columns.forEach(function (col, j) {
        var td = document.createElement('td');
        var value = r[j];
        td.textContent = cellText(col, value, binary);
        if (col.kind === 'outcome' && typeof value === 'number') {
          td.className = binary ? (value >= 0.5 ? 'y1' : 'y0') : 'num';
        }
        tr.appendChild(td);
      });
      body.appendChild(tr);
    });
    table.replaceChild(body, tbody);
    tbody = body;
    countNode.textContent = 'showing ' + shown.length + ' of ' + picked.length +
      ' matching rows (' + rows.length + ' in all)';
    Array.prototype.forEach.call(headRow.children, function (th, j) {
      th.dataset.sorted = j === sortCol ? (sortDir > 0 ? 'asc' : 'desc') : '';
    });
  }

  filterBox.addEventListener('input', render);
  patternBox.addEventListener('change', render);
  modelBox.addEventListener('change', render);
  render();
  document.body.dataset.ready = '1';
})();
"""


def script_hash(script: str) -> str:
    """The CSP source expression that allows exactly `script`."""
    digest = hashlib.sha256(script.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"
