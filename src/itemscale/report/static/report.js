(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('itemscale-data').textContent);
  // a table keyed by ids is read by own property only: an item called `constructor` or
  // `__proto__` must not find Object.prototype's members
  function own(table, key) {
    return Object.prototype.hasOwnProperty.call(table, key) ? table[key] : undefined;
  }
  var F = {};
  data.fields.forEach(function (f, i) { F[f] = i; });
  var rows = data.rows;
  var labels = data.labels;
  var table = document.getElementById('item-table');
  var search = document.getElementById('item-filter');
  var boxes = {
    pattern: document.getElementById('pattern-filter'),
    model: document.getElementById('model-filter'),
    series: document.getElementById('series-filter'),
    video: document.getElementById('video-filter'),
    attr: document.getElementById('attr-filter')
  };
  var countNode = document.getElementById('item-count');
  var more = document.getElementById('item-more');
  var detail = document.getElementById('item-detail');
  var shown = data.page;
  var sortCol = -1;
  var sortDir = 1;
  var haystack = rows.map(function (r) {
    return (String(r[F.item]) + '\u0001' + String(r[F.question] || '')).toLowerCase();
  });

  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined && text !== null) { e.textContent = String(text); }
    if (cls) { e.className = cls; }
    return e;
  }
  function fill(select, all, values, name) {
    select.appendChild(el('option', all)).value = '';
    values.forEach(function (v) {
      var o = el('option', name ? name(v) : v);
      o.value = v;
      select.appendChild(o);
    });
  }
  function patternName(p) { return own(data.pattern_names, p) || String(p).replace(/_/g, ' '); }
  fill(boxes.pattern, 'all patterns', data.patterns, patternName);
  fill(boxes.model, 'all models', data.models);
  fill(boxes.series, 'all series', data.series);
  fill(boxes.video, 'all videos', data.videos);
  fill(boxes.attr, 'all attributes', data.attributes);

  var columns = [
    { label: 'model', f: F.model }, { label: 'series', f: F.series },
    { label: 'item', f: F.item }, { label: 'video', f: F.video },
    { label: 'pattern', f: F.pattern }, { label: 'trajectory', f: -1 },
    { label: 'question', f: F.question }
  ];
  var thead = el('thead');
  var headRow = el('tr');
  columns.forEach(function (c, i) {
    var th = el('th', c.label);
    if (c.f >= 0) {
      th.title = 'sort by ' + c.label;
      th.addEventListener('click', function () {
        sortDir = sortCol === i ? -sortDir : 1;
        sortCol = i;
        shown = data.page;
        render();
      });
    } else {
      th.title = labels.join(' < ');
    }
    headRow.appendChild(th);
  });
  thead.appendChild(headRow);
  table.appendChild(thead);
  var tbody = el('tbody');
  table.appendChild(tbody);

  function compare(a, b) {
    if (a === b) { return 0; }
    if (a === null || a === undefined || a === '') { return 1; }
    if (b === null || b === undefined || b === '') { return -1; }
    return String(a).localeCompare(String(b), undefined, { numeric: true });
  }
  function outcome(value, binary) {
    if (value === null || value === undefined) { return ['none', 'no answer']; }
    if (binary) { return value >= 0.5 ? ['y1', 'right'] : ['y0', 'wrong']; }
    return ['s' + Math.min(4, Math.floor(value * 5)), 'score ' + value.toFixed(2)];
  }
  function axis(r) {
    var mine = own(data.axes, r[F.model] + '\u001f' + r[F.series]);
    return mine || labels.map(function (_, j) { return j; });
  }
  function order(r) {
    // pairs [smaller, larger] the budget order compares: a partial order's listed ones, or
    // every pair of the axis in its order
    var partial = own(data.orders, r[F.model] + '\u001f' + r[F.series]);
    if (partial) { return partial; }
    var a = axis(r), out = [];
    for (var x = 0; x < a.length; x++) {
      for (var y = x + 1; y < a.length; y++) { out.push([a[x], a[y]]); }
    }
    return out;
  }
  function comparable(pairs, j, k) {
    return pairs.some(function (p) { return p[0] === j && p[1] === k; });
  }
  function trajectoryCell(r) {
    var td = el('td', null, 'traj');
    var binary = r[F.kind] === 'binary';
    var partial = own(data.orders, r[F.model] + '\u001f' + r[F.series]);
    var previous = null;
    axis(r).forEach(function (j) {
      if (partial && previous !== null && !comparable(partial, previous, j)) {
        var gap = el('span', null, 'tgap');
        gap.title = labels[previous] + ' and ' + labels[j] + ' are not comparable';
        td.appendChild(gap);
      }
      previous = j;
      var v = r[F.values][j];
      var o = outcome(v, binary);
      var span = el('span', null, 'tcell oc ' + o[0]);
      span.title = labels[j] + ': ' + o[1];
      td.appendChild(span);
    });
    return td;
  }
  function flips(r, binary) {
    // right then wrong (down) and wrong then right (up) along the budget order
    var down = [], up = [];
    if (!binary) { return [down, up]; }
    order(r).forEach(function (p) {
      var a = r[F.values][p[0]], b = r[F.values][p[1]];
      if (a === null || b === null || a === undefined || b === undefined) { return; }
      var pair = labels[p[0]] + ' \u2192 ' + labels[p[1]];
      if (a >= 0.5 && b < 0.5) { down.push(pair); }
      if (a < 0.5 && b >= 0.5) { up.push(pair); }
    });
    return [down, up];
  }
  function listed(pairs) {
    if (!pairs.length) { return 'none'; }
    var text = pairs.slice(0, 6).join(', ');
    return pairs.length > 6 ? text + ' and ' + (pairs.length - 6) + ' more' : text;
  }

  function matching() {
    var text = search.value.trim().toLowerCase();
    var want = {};
    Object.keys(boxes).forEach(function (k) { want[k] = boxes[k].value; });
    var picked = [];
    for (var i = 0; i < rows.length; i++) {
      var r = rows[i];
      if (want.pattern && r[F.pattern] !== want.pattern) { continue; }
      if (want.model && r[F.model] !== want.model) { continue; }
      if (want.series && r[F.series] !== want.series) { continue; }
      if (want.video && r[F.video] !== want.video) { continue; }
      if (want.attr && r[F.attributes].indexOf(want.attr) < 0) { continue; }
      if (text && haystack[i].indexOf(text) < 0) { continue; }
      picked.push(r);
    }
    if (sortCol >= 0) {
      var f = columns[sortCol].f;
      picked = picked.map(function (r, n) { return [r, n]; });
      picked.sort(function (a, b) { return sortDir * compare(a[0][f], b[0][f]) || a[1] - b[1]; });
      picked = picked.map(function (p) { return p[0]; });
    }
    return picked;
  }

  function render() {
    var started = performance.now();
    var picked = matching();
    var body = el('tbody');
    picked.slice(0, shown).forEach(function (r) {
      var tr = el('tr');
      tr.tabIndex = 0;
      columns.forEach(function (c) {
        var td = c.f === F.pattern ? el('td', patternName(r[c.f])) : el('td', r[c.f]);
        tr.appendChild(c.f >= 0 ? td : trajectoryCell(r));
      });
      tr.addEventListener('click', function () { open(r); });
      tr.addEventListener('keydown', function (e) { if (e.key === 'Enter') { open(r); } });
      body.appendChild(tr);
    });
    table.replaceChild(body, tbody);
    tbody = body;
    var count = Math.min(shown, picked.length);
    countNode.textContent = 'showing ' + count + ' of ' + picked.length + ' matching (' +
      rows.length + ' embedded, ' + data.total + ' in all)';
    more.hidden = picked.length <= shown;
    Array.prototype.forEach.call(headRow.children, function (th, j) {
      th.dataset.sorted = j === sortCol ? (sortDir > 0 ? 'asc' : 'desc') : '';
    });
    document.body.dataset.filterMs = String(performance.now() - started);
  }

  function line(parent, label, value) {
    var p = el('div');
    p.appendChild(el('b', label + ': '));
    p.appendChild(document.createTextNode(value === null || value === undefined ? 'not recorded' : String(value)));
    parent.appendChild(p);
  }
  function open(r) {
    detail.className = 'open';
    while (detail.firstChild) { detail.removeChild(detail.firstChild); }
    detail.appendChild(el('h3', r[F.item]));
    detail.appendChild(el('div', r[F.model] + ' / series ' + r[F.series] + ' / video ' +
      r[F.video] + ' / ' + patternName(r[F.pattern]), 'muted'));
    line(detail, 'question', r[F.question]);
    var opts = own(data.options, r[F.item]) || [];
    if (opts.length) {
      var ol = el('ol', null, 'options');
      opts.forEach(function (o) { ol.appendChild(el('li', o)); });
      detail.appendChild(ol);
    }
    line(detail, 'gold', r[F.gold]);
    var binary = r[F.kind] === 'binary';
    line(detail, 'text-only', (r[F.text_answer] === null ? '' : r[F.text_answer] + ', ') +
      outcome(r[F.text_value], binary)[1]);
    var t = el('table', null, 'answers');
    var head = el('tr');
    ['budget', 'outcome', 'answer'].forEach(function (h) { head.appendChild(el('th', h)); });
    t.appendChild(head);
    axis(r).forEach(function (j) {
      var lab = labels[j];
      var o = outcome(r[F.values][j], binary);
      var tr = el('tr');
      tr.appendChild(el('td', lab));
      tr.appendChild(el('td', o[1], 'oc ' + o[0]));
      tr.appendChild(el('td', r[F.answers][j]));
      t.appendChild(tr);
    });
    detail.appendChild(t);
    if (binary) {
      var moved = flips(r, binary);
      var how = own(data.orders, r[F.model] + '\u001f' + r[F.series]) ?
        ' (the partial order of frames x pixels: only comparable budgets)' : '';
      line(detail, 'right, then wrong at a larger budget' + how, listed(moved[0]));
      line(detail, 'wrong, then right at a larger budget', listed(moved[1]));
    }
    if (r[F.output] === null || r[F.output] === undefined || r[F.output] === '') {
      line(detail, 'output at the largest budget', null);
    } else {
      detail.appendChild(el('div', 'output at the largest budget:', 'muted'));
      detail.appendChild(el('pre', r[F.output], 'output'));
    }
    if (r[F.attributes].length) { line(detail, 'attributes', r[F.attributes].join(', ')); }
    var key = [r[F.model], r[F.series], r[F.item]].join('\u001f');
    var steps = own(data.audit, key) || [];
    detail.appendChild(el('h4', steps.length ? 'frame audit' : 'frame audit: no harmful transition audited'));
    steps.forEach(function (s) {
      var d = el('div', null, 'audit-step');
      d.appendChild(el('span', s[2], 'tag'));
      d.appendChild(document.createTextNode(s[0] + ' -> ' + s[1] + ': ' + s[3]));
      detail.appendChild(d);
      var card = document.querySelector('.card[data-transition="' + s[4] + '"] img.sheet');
      if (card) {
        var img = card.cloneNode(false);
        img.className = 'sheet detail-sheet';
        detail.appendChild(img);
      } else if (s[5]) {
        detail.appendChild(el('div', 'contact sheet in audit_sheets/' + s[4] + '.png', 'muted'));
      }
    });
    detail.scrollIntoView({ block: 'nearest' });
  }

  search.addEventListener('input', function () { shown = data.page; render(); });
  Object.keys(boxes).forEach(function (k) {
    boxes[k].addEventListener('change', function () { shown = data.page; render(); });
  });
  more.addEventListener('click', function () { shown += data.page; render(); });
  render();
  document.body.dataset.ready = '1';
})();
