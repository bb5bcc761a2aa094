// The HTML report's script (memsim-analyze --html; docs/report-html.md),
// written into the page by analyzer/report/report_page.c.  It draws what the
// page's data blocks hold (script elements of type application/json: a flame
// graph's stacks, a timeline's series) and makes the page explorable:
//   tables      table.sortable: a click on a heading sorts by that column
//               (its cells' data-v when they have one, else their text)
//   timeline    div.timeline: the series as lines on round ticks; the
//               legend's boxes toggle a series; hovering shows every
//               shown series' value at that time; dragging across the
//               plot zooms to that stretch (the button or a double click
//               resets)
//   flame       div.flamegraph: the stacks weighted by bytes live at the
//               peak, calls, leaked bytes, temporaries or mapped bytes;
//               top-down (the program's entry on top), bottom-up (the
//               allocating functions on top, their callers below), or the
//               callers and callees of one function; a click on a frame
//               zooms to it, the button resets; search highlights
//   gantt       svg#gantt: the processes over time, from their bars' data
//   fragmaps    g.runs: a strategy's strip at its peak, from runs of cells
//               of one colour
// Nothing is fetched: the page's policy forbids it.
(function () {
  'use strict';
  var SVG = 'http://www.w3.org/2000/svg';
  function el(name, attrs, parent) {
    var e = document.createElementNS(SVG, name);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }
  function h(name, attrs, parent, text) {
    var e = document.createElement(name);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }
  var UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  function bytes(v) {
    var u = 0, a = Math.abs(v);
    while (a >= 1024 && u < UNITS.length - 1) { a /= 1024; u++; }
    var s = u === 0 ? String(Math.round(a)) : a >= 100 ? a.toFixed(0) : a >= 10 ? a.toFixed(1) : a.toFixed(2);
    return (v < 0 ? '-' : '') + s + ' ' + UNITS[u];
  }
  function count(v) { return String(Math.round(v)).replace(/\B(?=(\d{3})+(?!\d))/g, ','); }
  var parsed = {};
  function data(id) { // a data block, parsed once
    if (!(id in parsed)) {
      var s = document.getElementById(id);
      parsed[id] = s ? JSON.parse(s.textContent) : null;
    }
    return parsed[id];
  }

  // ---- round ticks: steps of 1, 2 or 5 times a power of ten, of a unit ----
  function niceStep(span, n) {
    var raw = span / n, p = Math.pow(10, Math.floor(Math.log(raw) / Math.LN10)), f = raw / p;
    return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * p;
  }
  function byteTicks(max) {
    var u = 0, scale = 1;
    while (max / scale >= 1024 * 2 && u < UNITS.length - 1) { scale *= 1024; u++; }
    var step = niceStep(max / scale || 1, 5), ticks = [];
    for (var v = 0; v <= max / scale + 1e-9; v += step)
      ticks.push({ v: v * scale, label: (+v.toFixed(6)) + ' ' + UNITS[u] });
    if (ticks[ticks.length - 1].v < max) ticks.push({ v: ticks.length * step * scale, label: (+(ticks.length * step).toFixed(6)) + ' ' + UNITS[u] });
    return ticks;
  }
  function timeTicks(t0, t1) {
    var step = niceStep(t1 - t0 || 1, 6), ticks = [];
    for (var v = Math.ceil(t0 / step) * step; v <= t1 + 1e-12; v += step)
      ticks.push({ v: v, label: (+v.toFixed(6)) + ' s' });
    return ticks;
  }

  // ---- sortable tables -------------------------------------------------------
  function sortable(table) {
    var heads = table.querySelectorAll('thead th');
    heads.forEach(function (th, col) {
      th.classList.add('sort');
      th.addEventListener('click', function () {
        var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
        var desc = th.getAttribute('aria-sort') !== 'descending';
        heads.forEach(function (o) { o.removeAttribute('aria-sort'); });
        th.setAttribute('aria-sort', desc ? 'descending' : 'ascending');
        function key(r) {
          var c = r.cells[col];
          if (!c) return '';
          var v = c.getAttribute('data-v');
          return v !== null ? parseFloat(v) : c.textContent.trim().toLowerCase();
        }
        rows.sort(function (a, b) {
          var x = key(a), y = key(b), r = typeof x === 'number' && typeof y === 'number' ? x - y : String(x) < String(y) ? -1 : String(x) > String(y) ? 1 : 0;
          return desc ? -r : r;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  }

  // ---- the timeline ------------------------------------------------------------
  var TW = 960, TH = 300, L = 76, R = 12, T = 12, B = 32;
  function timeline(box) {
    var d = data(box.getAttribute('data-src'));
    if (!d) return;
    d.series.forEach(function (s) { if (typeof s.t === 'number') s.t = d.series[s.t].t; }); // shared times
    var state = { t0: d.t0, t1: d.t1 };
    var legend = h('div', { 'class': 'legend' }, box);
    var svg = el('svg', { 'class': 'plot timeline-plot', viewBox: '0 0 ' + TW + ' ' + TH, width: TW, height: TH }, box);
    var tip = h('div', { 'class': 'tip', hidden: '' }, box);
    var reset = h('button', { 'class': 'reset-zoom', type: 'button', hidden: '' }, box, 'reset zoom');
    d.series.forEach(function (s, i) {
      var lab = h('label', { 'class': 'toggle' }, legend);
      var cb = h('input', { type: 'checkbox', 'data-series': s.name }, lab);
      cb.checked = s.on;
      h('span', { 'class': 'swatch', style: 'border-color:' + s.color + (s.dash ? ';border-top-style:dashed' : '') }, lab);
      lab.appendChild(document.createTextNode(' ' + s.name));
      cb.addEventListener('change', function () { s.on = cb.checked; draw(); });
    });
    // what the plot draws beside the series, each in the legend
    var keys = [];
    if (d.phases.length) keys.push(['key-phase', 'a phase the program marked (shaded, named)']);
    if (d.findings.length) keys.push(['key-finding', 'a finding at its peak (hover for what it is)']);
    if (d.findings.some(function (f) { return f.kind === 'stretch'; })) keys.push(['key-stretch', "a finding's stretch: from where it set in to where it ended"]);
    if (d.findings.some(function (f) { return f.kind === 'fit'; })) keys.push(['key-fit', "a drift's fitted line"]);
    keys.forEach(function (k) {
      var s = h('span', { 'class': 'key' }, legend);
      h('span', { 'class': k[0] }, s);
      s.appendChild(document.createTextNode(' ' + k[1]));
    });
    function x(t) { return L + (t - state.t0) / ((state.t1 - state.t0) || 1) * (TW - L - R); }
    var vmax = 1;
    function y(v) { return T + (1 - v / vmax) * (TH - T - B); }
    function draw() {
      while (svg.firstChild) svg.removeChild(svg.firstChild);
      vmax = 1;
      d.series.forEach(function (s) {
        if (!s.on) return;
        for (var i = 0; i < s.t.length; i++)
          if (s.t[i] >= state.t0 && s.t[i] <= state.t1 && s.v[i] > vmax) vmax = s.v[i];
      });
      var yt = byteTicks(vmax);
      vmax = yt[yt.length - 1].v;
      yt.forEach(function (k) {
        el('line', { x1: L, x2: TW - R, y1: y(k.v), y2: y(k.v), 'class': 'grid' }, svg);
        el('text', { x: L - 5, y: y(k.v) + 4, 'class': 'axis', 'text-anchor': 'end' }, svg).textContent = k.label;
      });
      timeTicks(state.t0, state.t1).forEach(function (k) {
        el('line', { x1: x(k.v), x2: x(k.v), y1: TH - B, y2: TH - B + 4, 'class': 'tick' }, svg);
        el('text', { x: x(k.v), y: TH - 10, 'class': 'axis', 'text-anchor': 'middle' }, svg).textContent = k.label;
      });
      var clip = 'clip-' + box.getAttribute('data-src');
      var cp = el('clipPath', { id: clip }, el('defs', {}, svg));
      el('rect', { x: L, y: T, width: TW - L - R, height: TH - T - B }, cp);
      var g = el('g', { 'clip-path': 'url(#' + clip + ')' }, svg);
      d.phases.forEach(function (p, i) {
        var a = x(p.b), b = x(p.e);
        var ph = el('g', { 'class': 'phase' }, g);
        el('rect', { x: a, y: T, width: Math.max(b - a, 0.5), height: TH - T - B, fill: i % 2 ? '#fde0c5' : '#e5f5e0', opacity: 0.45 }, ph);
        el('text', { x: a + 3, y: T + 12, 'class': 'phase-name' }, ph).textContent = p.name;
      });
      d.series.forEach(function (s) {
        if (!s.on) return;
        var pts = [];
        for (var i = 0; i < s.t.length; i++) pts.push(x(s.t[i]).toFixed(1) + ',' + y(s.v[i]).toFixed(1));
        el('polyline', { 'class': 'series', 'data-name': s.name, fill: 'none', stroke: s.color, 'stroke-width': 1.5, 'stroke-dasharray': s.dash ? '5 3' : 'none', points: pts.join(' ') }, g);
      });
      d.findings.forEach(function (f) {
        var fg = el('g', { 'class': 'finding ' + f.severity }, g);
        el('title', {}, fg).textContent = f.text;
        if (f.kind === 'fit')
          el('line', { x1: x(f.t0), x2: x(f.t1), y1: y(f.v0), y2: y(f.v1), 'class': 'fit' }, fg);
        else
          el('rect', { x: x(f.t0), y: TH - B - 8, width: Math.max(x(f.t1) - x(f.t0), 2), height: 8, 'class': 'stretch' }, fg);
        el('line', { x1: x(f.t), x2: x(f.t), y1: T, y2: TH - B, 'class': 'finding-line' }, fg);
        el('circle', { cx: x(f.t), cy: T + 6, r: 6 }, fg);
      });
      el('line', { x1: L, x2: L, y1: T, y2: TH - B, 'class': 'axis-line' }, svg);
      el('line', { x1: L, x2: TW - R, y1: TH - B, y2: TH - B, 'class': 'axis-line' }, svg);
      cursor = el('line', { 'class': 'cursor', y1: T, y2: TH - B, x1: -10, x2: -10 }, svg);
      brush = el('rect', { 'class': 'brush', y: T, height: TH - T - B, x: 0, width: 0 }, svg);
      reset.hidden = state.t0 === d.t0 && state.t1 === d.t1;
    }
    var cursor, brush, from = null;
    function tAt(ev) {
      var r = svg.getBoundingClientRect(), px = (ev.clientX - r.left) * TW / r.width;
      return { px: px, t: state.t0 + (px - L) / (TW - L - R) * (state.t1 - state.t0) };
    }
    svg.addEventListener('mousemove', function (ev) {
      var p = tAt(ev);
      if (p.px < L || p.px > TW - R) { tip.hidden = true; return; }
      cursor.setAttribute('x1', p.px); cursor.setAttribute('x2', p.px);
      if (from !== null) {
        brush.setAttribute('x', Math.min(from, p.px)); brush.setAttribute('width', Math.abs(p.px - from));
      }
      var lines = [p.t.toFixed(3) + ' s'];
      d.series.forEach(function (s) {
        if (!s.on || !s.t.length) return;
        var lo = 0, hi = s.t.length - 1;
        while (lo < hi) { var m = (lo + hi) >> 1; if (s.t[m] < p.t) lo = m + 1; else hi = m; }
        if (lo > 0 && Math.abs(s.t[lo - 1] - p.t) < Math.abs(s.t[lo] - p.t)) lo--;
        lines.push(s.name + ': ' + bytes(s.v[lo]));
      });
      tip.textContent = '';
      lines.forEach(function (l, i) { h('div', { 'class': i ? 'v' : 't' }, tip, l); });
      tip.hidden = false;
      var r = svg.getBoundingClientRect();
      tip.style.left = Math.min(ev.clientX - r.left + 14, r.width - 220) + 'px';
      tip.style.top = (ev.clientY - r.top + 14) + 'px';
    });
    svg.addEventListener('mouseleave', function () { tip.hidden = true; from = null; brush.setAttribute('width', 0); });
    svg.addEventListener('mousedown', function (ev) { from = tAt(ev).px; ev.preventDefault(); });
    svg.addEventListener('mouseup', function (ev) {
      if (from === null) return;
      var a = from, b = tAt(ev).px;
      from = null;
      if (Math.abs(b - a) < 4) { brush.setAttribute('width', 0); return; }
      var lo = Math.max(Math.min(a, b), L), hi = Math.min(Math.max(a, b), TW - R);
      var t0 = state.t0 + (lo - L) / (TW - L - R) * (state.t1 - state.t0);
      var t1 = state.t0 + (hi - L) / (TW - L - R) * (state.t1 - state.t0);
      if (t1 > t0) { state.t0 = t0; state.t1 = t1; }
      draw();
    });
    function unzoom() { state.t0 = d.t0; state.t1 = d.t1; draw(); }
    svg.addEventListener('dblclick', unzoom);
    reset.addEventListener('click', unzoom);
    draw();
  }

  // ---- the flame graph -----------------------------------------------------------
  var FW = 960, ROW = 17;
  // A tree of paths: {name, w, kids: {name: node}}.
  function node(name) { return { name: name, w: 0, kids: {}, n: [] }; }
  function add(root, path, w) {
    root.w += w;
    var n = root;
    for (var i = 0; i < path.length; i++) {
      var k = n.kids[path[i]];
      if (!k) { k = n.kids[path[i]] = node(path[i]); n.n.push(k); }
      k.w += w;
      n = k;
    }
  }
  function flamegraph(box) {
    var d = data(box.getAttribute('data-src'));
    if (!d) return;
    var names = typeof d.names === 'string' ? data(d.names) : d.names; // the page's table
    // each stack's frames, outermost first, from the trie of nodes
    function frames(leaf) {
      var out = [];
      for (var n = leaf; n >= 0; n = d.nodes[2 * n]) out.push(names[d.nodes[2 * n + 1]]);
      return out.reverse();
    }
    var paths = d.stacks.map(frames), mpaths = (d.mstacks || []).map(frames);
    var st = { weight: 'peak', view: 'top-down', fn: null, zoom: null };
    var bar = h('div', { 'class': 'controls' }, box);
    bar.appendChild(document.createTextNode('weight: '));
    var wsel = h('select', { 'class': 'weight' }, bar);
    d.weights.forEach(function (w) { h('option', { value: w.key }, wsel, w.label); });
    bar.appendChild(document.createTextNode(' view: '));
    var vsel = h('select', { 'class': 'view' }, bar);
    [['top-down', 'top-down (callers above callees)'], ['bottom-up', 'bottom-up (allocating functions on top, their callers below)'], ['callers', 'callers and callees of a function']].forEach(function (v) { h('option', { value: v[0] }, vsel, v[1]); });
    bar.appendChild(document.createTextNode(' '));
    var fnsel = h('select', { 'class': 'function', hidden: '' }, bar);
    bar.appendChild(document.createTextNode(' search: '));
    var find = h('input', { type: 'search', 'class': 'find', placeholder: 'function' }, bar);
    var resetz = h('button', { type: 'button', 'class': 'reset-zoom' }, bar, 'reset zoom');
    var info = h('div', { 'class': 'info' }, box, 'Click a frame to zoom to it.');
    var area = h('div', { 'class': 'flame-area' }, box);
    function weightOf(key) {
      for (var i = 0; i < d.weights.length; i++) if (d.weights[i].key === key) return d.weights[i];
    }
    function trees() {
      var w = weightOf(st.weight), ps = w.mapped ? mpaths : paths, vs = w.v, out = [];
      if (st.view === 'top-down') {
        var r = node('all');
        ps.forEach(function (p, i) { if (vs[i]) add(r, p, vs[i]); });
        out.push({ title: null, root: r });
      } else if (st.view === 'bottom-up') {
        var b = node('all');
        ps.forEach(function (p, i) { if (vs[i]) add(b, p.slice().reverse(), vs[i]); });
        out.push({ title: 'bottom-up: each allocating function on top, the functions that called it below', root: b });
      } else {
        var f = st.fn, callers = node(f), callees = node(f);
        ps.forEach(function (p, i) {
          if (!vs[i]) return;
          var at = p.indexOf(f);
          if (at < 0) return;
          add(callers, p.slice(0, at).reverse(), vs[i]);
          add(callees, p.slice(at + 1), vs[i]);
        });
        out.push({ title: 'callers of ' + f + ' (who called it, nearest first)', root: callers });
        out.push({ title: 'callees of ' + f + ' (what it called on the way to each allocation)', root: callees });
      }
      return out;
    }
    function label(w, v) { return w.bytes ? bytes(v) : count(v); }
    function draw() {
      area.textContent = '';
      var w = weightOf(st.weight);
      fnsel.hidden = st.view !== 'callers';
      trees().forEach(function (tr, ti) {
        if (tr.title) h('h4', {}, area, tr.title);
        var top = tr.root;
        if (st.zoom && ti === 0) {
          var z = top;
          for (var i = 0; z && i < st.zoom.length; i++) z = z.kids[st.zoom[i]];
          if (z) top = z; else st.zoom = null;
        }
        var rows = [];
        (function walk(n, depth, x, wpx) {
          if (wpx < 0.4) return;
          rows.push({ n: n, depth: depth, x: x, w: wpx });
          var cx = x;
          n.n.slice().sort(function (a, b) { return b.w - a.w; }).forEach(function (k) {
            var kw = n.w ? wpx * k.w / n.w : 0;
            walk(k, depth + 1, cx, kw);
            cx += kw;
          });
        })(top, 0, 0, FW);
        var depth = 0;
        rows.forEach(function (r) { if (r.depth > depth) depth = r.depth; });
        var svg = el('svg', { 'class': 'flame plot', 'data-key': st.weight, 'data-view': st.view, viewBox: '0 0 ' + FW + ' ' + (depth + 1) * ROW, width: FW, height: (depth + 1) * ROW }, area);
        if (!tr.root.w) {
          el('text', { x: 10, y: 13 }, svg).textContent = 'nothing to weigh by ' + w.label;
          return;
        }
        var q = find.value.toLowerCase();
        rows.forEach(function (r, i) {
          var g = el('g', { 'class': 'frame' + (q && r.n.name.toLowerCase().indexOf(q) >= 0 ? ' hit' : ''), 'data-name': r.n.name }, svg);
          el('title', {}, g).textContent = r.n.name + ' — ' + label(w, r.n.w) + ' (' + (100 * r.n.w / tr.root.w).toFixed(1) + '%)';
          var hash = 5381;
          for (var c = 0; c < r.n.name.length; c++) hash = (hash * 33 + r.n.name.charCodeAt(c)) >>> 0;
          el('rect', { x: r.x.toFixed(1), y: r.depth * ROW, width: r.w.toFixed(1), height: ROW - 1, fill: 'hsl(' + (10 + hash % 40) + ',70%,' + (55 + hash % 20) + '%)' }, g);
          if (r.w > 40) {
            var room = Math.floor((r.w - 6) / 6.5), s = r.n.name;
            el('text', { x: (r.x + 3).toFixed(1), y: r.depth * ROW + 12, 'class': 'fname' }, g).textContent = s.length > room ? s.slice(0, Math.max(room - 1, 1)) + '…' : s;
          }
          if (ti === 0) g.addEventListener('click', function () {
            // the path from the drawn top to r: in depth-first order, the
            // nearest row before r one level up is its parent
            var path = [r.n.name], want = r.depth;
            for (var j = i - 1; j >= 0 && want > 1; j--)
              if (rows[j].depth === want - 1) { path.unshift(rows[j].n.name); want--; }
            st.zoom = (st.zoom || []).concat(r.depth ? path : []);
            info.textContent = 'Zoomed to ' + r.n.name + ': ' + label(w, r.n.w) + '. Reset to see all.';
            draw();
          });
        });
      });
    }
    function fillFunctions() {
      var seen = {}, list = [], w = weightOf(st.weight), ps = w.mapped ? mpaths : paths;
      ps.forEach(function (p, i) {
        if (!w.v[i]) return;
        p.forEach(function (f) { seen[f] = (seen[f] || 0) + w.v[i]; });
      });
      for (var f in seen) if (f !== 'all') list.push(f);
      list.sort(function (a, b) { return seen[b] - seen[a]; });
      fnsel.textContent = '';
      list.forEach(function (f) { h('option', { value: f }, fnsel, f); });
      if (st.fn === null || !(st.fn in seen)) st.fn = list.length ? list[0] : '';
      fnsel.value = st.fn;
    }
    wsel.addEventListener('change', function () { st.weight = wsel.value; st.zoom = null; fillFunctions(); draw(); });
    vsel.addEventListener('change', function () { st.view = vsel.value; st.zoom = null; draw(); });
    fnsel.addEventListener('change', function () { st.fn = fnsel.value; st.zoom = null; draw(); });
    find.addEventListener('input', draw);
    resetz.addEventListener('click', function () { st.zoom = null; info.textContent = 'Click a frame to zoom to it.'; draw(); });
    box.memsimShow = function (view, fn) { // for a link: the callers of fn
      st.view = view; vsel.value = view;
      if (fn) { st.fn = fn; fillFunctions(); st.fn = fn; fnsel.value = fn; }
      st.zoom = null; draw();
    };
    fillFunctions();
    draw();
  }

  // a fragmentation map's strip: runs of cells of one colour, "RRGGBB*N"
  function strip(g) {
    var x = +g.getAttribute('data-x'), y = g.getAttribute('data-y'),
      cw = +g.getAttribute('data-cw'), ht = g.getAttribute('data-h');
    g.getAttribute('data-runs').split(' ').forEach(function (r) {
      var n = +r.slice(7);
      el('rect', { x: x, y: y, width: n * cw, height: ht, fill: '#' + r.slice(0, 6) }, g);
      x += n * cw;
    });
  }

  // the processes over time: a bar per process, by start, darker for a
  // higher peak RSS; its name and pid on the left, the times below
  function gantt(svg) {
    var d = data(svg.getAttribute('data-src'));
    if (!d) return;
    d.bars.forEach(function (b, r) {
      var g = el('g', { 'class': 'proc' }, svg);
      el('title', {}, g).textContent = b[0] + ' (pid ' + b[1] + '): ' + b[5].toFixed(3) + ' s, peak RSS ' + b[6];
      el('text', { x: d.label - 4, y: r * d.row + 10, 'class': 'axis', 'text-anchor': 'end' }, g).textContent = b[0] + ' ' + b[1];
      el('rect', { x: b[2], y: r * d.row + 1, width: b[3], height: d.row - 2, fill: 'hsl(5,70%,' + b[4] + '%)' }, g);
    });
    var y = d.bars.length * d.row + 20;
    el('text', { x: d.label, y: y, 'class': 'axis' }, svg).textContent = '0 s';
    el('text', { x: d.width - 10, y: y, 'class': 'axis', 'text-anchor': 'end' }, svg).textContent = d.seconds.toFixed(2) + ' s';
  }

  document.querySelectorAll('g.runs[data-runs]').forEach(strip);
  document.querySelectorAll('svg#gantt[data-src]').forEach(gantt);
  document.querySelectorAll('table.sortable').forEach(sortable);
  document.querySelectorAll('div.timeline[data-src]').forEach(timeline);
  document.querySelectorAll('div.flamegraph[data-src]').forEach(flamegraph);
  // a function's name in a table: its callers and callees in the flame graph
  document.querySelectorAll('a.callers').forEach(function (a) {
    a.addEventListener('click', function (ev) {
      var sec = a.closest('section'), fg = sec && sec.querySelector('div.flamegraph');
      if (!fg || !fg.memsimShow) return;
      ev.preventDefault();
      fg.memsimShow('callers', a.getAttribute('data-fn'));
      fg.scrollIntoView();
    });
  });
})();
