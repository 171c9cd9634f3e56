/* viewer.js - sonde view's page.  Reads the JSON in #data (see
 * src/page/view.h for its shapes) and draws, without any request:
 * profiles: flame graph, icicle, sunburst (click to zoom, breadcrumb to
 * zoom out, search, depth and cutoff), a sortable and filterable table,
 * callers and callees of the selected function; lines and mem profiles:
 * each function's source with per-line bars, and mem's memory over time;
 * diffs: the newer profile's flame graph coloured by growth.  Every text
 * reaches the page through textContent, never as markup.  The address's
 * #fragment sets the first state: view=, search=, zoom=, select=,
 * depth=, cutoff=; and acts as a user would: click=NAME clicks the
 * widest drawn frame of that function, type=TEXT types into the search
 * box (what the browser tests drive). */
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("data").textContent);
  var $ = function (id) { return document.getElementById(id); };
  var ROW = 17;

  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }

  function pct(x) { return (100 * x).toFixed(1) + "%"; }

  function fmtValue(v) { /* seconds (of samples, for sampled profiles); the unit by size */
    var a = Math.abs(v);
    if (a >= 1) return v.toFixed(3) + " s";
    if (a >= 1e-3) return (v * 1e3).toFixed(3) + " ms";
    return (v * 1e6).toFixed(1) + " us";
  }

  function fmtBytes(b) {
    var u = ["B", "KiB", "MiB", "GiB"], i = 0, v = Math.abs(b);
    while (v >= 1024 && i < 3) { v /= 1024; i++; }
    return (b < 0 ? "-" : "") + (i ? v.toFixed(1) : String(Math.round(v))) + " " + u[i];
  }

  function matcher(text) {
    if (!text) return null;
    try { return new RegExp(text, "i"); } catch (e) {
      return new RegExp(text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), "i");
    }
  }

  /* The fragment's settings; what cannot be decoded is left out. */
  var hash = Object.create(null);
  location.hash.replace(/^#/, "").split("&").forEach(function (kv) {
    var i = kv.indexOf("=");
    if (i <= 0) return;
    try { hash[kv.slice(0, i)] = decodeURIComponent(kv.slice(i + 1)); } catch (e) { /* skip */ }
  });

  /* A whole number typed or in the fragment, within [0, most]; 0 when it is not one. */
  function hashCount(text, most) {
    var v = Math.floor(Number(text));
    return isFinite(v) && v > 0 ? Math.min(v, most) : 0;
  }

  /* ---------------- the call tree ---------------- */

  var T = null; /* arrays over nodes; node 0 is the root */

  function funcLabel(f) {
    return f < 0 ? "all" : D.funcs[f][0];
  }

  function funcWhere(f) {
    if (f < 0) return "";
    var fn = D.funcs[f];
    return fn[1] + (fn[2] ? ":" + fn[2] : "");
  }

  function buildTree() {
    var n = D.tree.length, i;
    T = { n: n, func: new Int32Array(n), parent: new Int32Array(n), total: new Float64Array(n),
          self: new Float64Array(n), base: D.base ? new Float64Array(n) : null,
          first: new Int32Array(n).fill(-1), next: new Int32Array(n).fill(-1),
          x: new Float64Array(n), depth: new Int32Array(n), maxDepth: 0 };
    for (i = 0; i < n; i++) {
      var r = D.tree[i];
      T.func[i] = r[0]; T.parent[i] = r[1]; T.total[i] = r[2]; T.self[i] = r[3];
      if (T.base) T.base[i] = D.base[i];
    }
    /* children in the order of their places (flame_layout.c's: by name) */
    var kids = [];
    for (i = 1; i < n; i++) {
      T.x[i] = D.tree[i][4];
      (kids[T.parent[i]] = kids[T.parent[i]] || []).push(i);
    }
    for (i = 0; i < kids.length; i++) {
      if (!kids[i]) continue;
      kids[i].sort(function (a, b) { return T.x[a] - T.x[b]; });
      for (var k = kids[i].length - 1; k >= 0; k--) {
        T.next[kids[i][k]] = T.first[i];
        T.first[i] = kids[i][k];
      }
    }
    var sum = 0;
    for (var c = T.first[0]; c >= 0; c = T.next[c]) sum += T.total[c];
    if (T.total[0] < sum) T.total[0] = sum;
    for (i = 1; i < n; i++) {
      T.depth[i] = T.depth[T.parent[i]] + 1;
      if (T.depth[i] > T.maxDepth) T.maxDepth = T.depth[i];
    }
  }

  function findNode(text) {
    var re = matcher(text), best = -1;
    for (var i = 1; re && i < T.n; i++)
      if (re.test(funcLabel(T.func[i])) && (best < 0 || T.total[i] > T.total[best])) best = i;
    return best;
  }

  /* ---------------- state ---------------- */

  var S = { view: null, zoom: 0, search: null, depth: 0, cutoff: 0, select: -1 };
  var drawn = []; /* what the last drawing put where, for the mouse */

  function ancestors(z) {
    var path = [];
    for (var a = z; a > 0; a = T.parent[a]) path.unshift(a);
    path.unshift(0);
    return path;
  }

  function visible(i) {
    if (S.depth > 0 && T.depth[i] - T.depth[S.zoom] > S.depth) return false;
    return T.total[i] >= (S.cutoff / 100) * T.total[0];
  }

  function colour(i) {
    var f = T.func[i];
    if (S.search && S.search.test(funcLabel(f))) return "rgb(220,40,220)";
    if (T.base) {
      var d = T.total[i] - T.base[i], m = D.max_delta || 1, a = Math.min(1, Math.abs(d) / m);
      var v = Math.round(255 - 200 * a);
      return d >= 0 ? "rgb(255," + v + "," + v + ")" : "rgb(" + v + "," + v + ",255)";
    }
    return f < 0 ? "rgb(220,220,220)" : D.funcs[f][3];
  }

  /* The canvas sized W x H CSS pixels, sharp on this screen; its context. */
  function sized(canvas, W, H) {
    var dpr = window.devicePixelRatio || 1, g = canvas.getContext("2d");
    canvas.width = W * dpr; canvas.height = H * dpr;
    canvas.style.width = W + "px"; canvas.style.height = H + "px";
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    return g;
  }

  /* ---------------- flame graph and icicle ---------------- */

  function drawFlame(canvas, upsideDown) {
    var W = Math.max(300, $("view").clientWidth - 4), z = S.zoom, path = ancestors(z);
    var rows = path.length + (S.depth > 0 ? S.depth : T.maxDepth - T.depth[z]);
    var H = rows * ROW + 2, g = sized(canvas, W, H);
    g.font = "11px sans-serif"; g.textBaseline = "middle";
    drawn = [];
    var scale = W / (T.total[z] || 1), x0 = T.x[z];
    function rect(i, px, w, row) {
      var y = upsideDown ? row * ROW : H - (row + 1) * ROW;
      g.fillStyle = colour(i);
      g.fillRect(px, y, Math.max(w - 0.5, 0.5), ROW - 1);
      if (w > 28) {
        var label = funcLabel(T.func[i]), fits = Math.floor((w - 6) / 6.2);
        if (label.length > fits) label = fits > 2 ? label.slice(0, fits - 2) + ".." : "";
        g.fillStyle = "#000";
        g.fillText(label, px + 3, y + ROW / 2);
      }
      drawn.push([i, px, y, w]);
    }
    for (var k = 0; k < path.length - 1; k++) rect(path[k], 0, W, k);
    var base = path.length - 1, stack = [z];
    while (stack.length) {
      var i = stack.pop(), w = T.total[i] * scale;
      if (w < 0.5 || (i !== z && !visible(i))) continue;
      rect(i, (T.x[i] - x0) * scale, w, base + T.depth[i] - T.depth[z]);
      for (var c = T.first[i]; c >= 0; c = T.next[c]) stack.push(c);
    }
  }

  /* ---------------- sunburst ---------------- */

  function drawSunburst(canvas) {
    var W = Math.min(Math.max(300, $("view").clientWidth - 4), 900), H = W, g = sized(canvas, W, H);
    var z = S.zoom, cx = W / 2, cy = H / 2;
    var levels = S.depth > 0 ? S.depth : Math.min(T.maxDepth - T.depth[z], 24);
    var ring = (W / 2 - 10) / (levels + 1), x0 = T.x[z], tot = T.total[z] || 1;
    drawn = [];
    var stack = [z];
    while (stack.length) {
      var i = stack.pop(), d = T.depth[i] - T.depth[z];
      var a0 = 2 * Math.PI * (T.x[i] - x0) / tot, a1 = a0 + 2 * Math.PI * T.total[i] / tot;
      if (d > levels || a1 - a0 < 0.003 || (i !== z && !visible(i))) continue;
      g.beginPath();
      if (d === 0) g.arc(cx, cy, ring, 0, 2 * Math.PI);
      else { g.arc(cx, cy, (d + 1) * ring, a0, a1); g.arc(cx, cy, d * ring, a1, a0, true); }
      g.closePath();
      g.fillStyle = colour(i); g.fill();
      g.strokeStyle = "#fff"; g.stroke();
      drawn.push([i, a0, a1, d]);
      if (d > 0 && (a1 - a0) * (d + 0.5) * ring > 60) {
        var mid = (a0 + a1) / 2, label = funcLabel(T.func[i]);
        g.save();
        g.translate(cx + Math.cos(mid) * (d + 0.5) * ring, cy + Math.sin(mid) * (d + 0.5) * ring);
        g.fillStyle = "#000"; g.font = "11px sans-serif"; g.textAlign = "center";
        g.fillText(label.length > 18 ? label.slice(0, 16) + ".." : label, 0, 4);
        g.restore();
      }
      for (var c = T.first[i]; c >= 0; c = T.next[c]) stack.push(c);
    }
    canvas.sunburst = { cx: cx, cy: cy, ring: ring };
  }

  function hit(canvas, ev) {
    var r = canvas.getBoundingClientRect(), mx = ev.clientX - r.left, my = ev.clientY - r.top, k;
    if (canvas.sunburst) {
      var sb = canvas.sunburst, dx = mx - sb.cx, dy = my - sb.cy;
      var d = Math.floor(Math.sqrt(dx * dx + dy * dy) / sb.ring);
      var a = Math.atan2(dy, dx); if (a < 0) a += 2 * Math.PI;
      for (k = drawn.length - 1; k >= 0; k--)
        if (drawn[k][3] === d && (d === 0 || (a >= drawn[k][1] && a < drawn[k][2]))) return drawn[k][0];
      return -1;
    }
    for (k = drawn.length - 1; k >= 0; k--) {
      var f = drawn[k];
      if (mx >= f[1] && mx < f[1] + f[3] && my >= f[2] && my < f[2] + ROW) return f[0];
    }
    return -1;
  }

  function tipText(i) {
    var f = T.func[i], lines = [funcLabel(f)];
    if (funcWhere(f)) lines.push(funcWhere(f));
    lines.push("total " + fmtValue(T.total[i]) + " (" + pct(T.total[i] / (T.total[0] || 1)) + ")" +
               ", self " + fmtValue(T.self[i]));
    if (T.base) lines.push("before " + fmtValue(T.base[i]) + ", change " + fmtValue(T.total[i] - T.base[i]));
    return lines.join("\n");
  }

  /* ---------------- table ---------------- */

  var sortKey = null, sortDown = true;

  function statColumns() {
    if (D.sampled)
      return [["own", 3, fmtValue], ["own %", 3, function (v) { return pct(v / (T.total[0] || 1)); }],
              ["total", 4, fmtValue], ["total %", 4, function (v) { return pct(v / (T.total[0] || 1)); }]];
    return [["ncalls", 1, function (v, r) { return r[1] === r[2] ? String(v) : v + "/" + r[2]; }],
            ["tottime", 3, function (v) { return v.toFixed(6); }],
            ["percall", -3, function (v) { return v.toFixed(6); }],
            ["cumtime", 4, function (v) { return v.toFixed(6); }],
            ["percall", -4, function (v) { return v.toFixed(6); }]];
  }

  /* A column's value; a percall is tottime by all calls, cumtime by
   * primitive calls, as pstats divides them. */
  function colValue(r, col) {
    if (col[1] > 0) return r[col[1]];
    return r[-col[1]] / ((col[1] === -4 ? r[2] : r[1]) || 1);
  }

  function drawTable(box) {
    var cols = statColumns(), filter = matcher($("filter").value), rows = [];
    D.stats.forEach(function (r) {
      var label = funcLabel(r[0]) + " " + funcWhere(r[0]);
      if (!filter || filter.test(label)) rows.push(r);
    });
    var key = sortKey === null ? 3 : sortKey; /* cumtime, or total %: the biggest first */
    rows.sort(function (a, b) {
      var va = key === "name" ? funcLabel(a[0]) : colValue(a, cols[key]);
      var vb = key === "name" ? funcLabel(b[0]) : colValue(b, cols[key]);
      var c = va < vb ? -1 : va > vb ? 1 : 0;
      return sortDown ? -c : c;
    });
    var table = el("table"), thead = el("thead"), tr = el("tr");
    table.id = "stats";
    cols.forEach(function (col, k) {
      var th = el("th", col[0]);
      th.onclick = function () { sortDown = sortKey === k ? !sortDown : true; sortKey = k; render(); };
      tr.appendChild(th);
    });
    var thn = el("th", "function", "name");
    thn.onclick = function () { sortDown = sortKey === "name" ? !sortDown : false; sortKey = "name"; render(); };
    tr.appendChild(thn);
    thead.appendChild(tr); table.appendChild(thead);
    var tbody = el("tbody"), shown = Math.min(rows.length, 5000);
    for (var i = 0; i < shown; i++) {
      var r = rows[i], row = el("tr");
      cols.forEach(function (col) { row.appendChild(el("td", col[2](colValue(r, col), r))); });
      row.appendChild(el("td", funcLabel(r[0]) + "  " + funcWhere(r[0]), "name"));
      row.dataset.func = r[0];
      if (r[0] === S.select) row.className = "sel";
      row.onclick = function () { select(+this.dataset.func); };
      tbody.appendChild(row);
    }
    table.appendChild(tbody);
    box.appendChild(table);
    if (rows.length > shown) box.appendChild(el("p", (rows.length - shown) + " more rows: filter to see them", "note"));
    $("found").textContent = rows.length + " of " + D.stats.length + " functions";
  }

  /* ---------------- callers and callees ---------------- */

  function select(f) {
    S.select = f;
    var side = $("side");
    side.textContent = "";
    if (f < 0 || !D.edges) { side.className = ""; render(); return; }
    side.className = "on";
    side.appendChild(el("h2", funcLabel(f)));
    side.appendChild(el("div", funcWhere(f), "note"));
    [["callers", 1, 0], ["callees", 0, 1]].forEach(function (part) {
      side.appendChild(el("h2", part[0]));
      var t = el("table"), hr = el("tr");
      ["calls", "time", "function"].forEach(function (h) { hr.appendChild(el("th", h)); });
      t.appendChild(hr);
      D.edges.filter(function (e) { return e[part[1]] === f; })
        .sort(function (a, b) { return b[4] - a[4]; })
        .forEach(function (e) {
          var row = el("tr");
          row.appendChild(el("td", D.sampled ? "" : e[2]));
          row.appendChild(el("td", fmtValue(e[4])));
          var name = el("td", funcLabel(e[part[2]]), "name");
          name.style.cursor = "pointer";
          name.onclick = function () { select(e[part[2]]); };
          row.appendChild(name);
          t.appendChild(row);
        });
      t.id = part[0];
      side.appendChild(t);
    });
    render();
  }

  /* ---------------- lines and mem: source with bars ---------------- */

  function drawSource(box) {
    var doc = D.doc, mem = D.kind === "mem", most = 0;
    /* memory mapped and never touched, shown apart from net (sonde mem) */
    var reserved = mem && (doc.reserved_bytes > 0 || (doc.leaks || []).some(function (k) { return k.reserved_bytes > 0; }));
    doc.functions.forEach(function (fn) {
      fn.lines.forEach(function (l) { most = Math.max(most, mem ? l.alloc_bytes : l.time_ns); });
    });
    var filter = matcher($("filter").value);
    doc.functions.forEach(function (fn) {
      var ran = fn.lines.some(function (l) { return l.hits || l.alloc_bytes || l.net_bytes; });
      if (!ran || (filter && !filter.test(fn.name))) return;
      box.appendChild(el("div", fn.name + "  (" + fn.file + ":" + fn.first_line + ")", "fn"));
      var t = el("table"), hr = el("tr");
      (mem ? ["line", "allocated / net", "allocated", "net"].concat(reserved ? ["reserved"] : [], ["mem usage", "increment", "hits", "source"])
           : ["line", "time", "hits", "time", "% time", "source"]).forEach(function (h) {
        hr.appendChild(el("th", h, h === "source" ? "src" : null));
      });
      t.appendChild(hr);
      fn.lines.forEach(function (l) {
        var row = el("tr"), bars = el("td", null, "bars");
        row.appendChild(el("td", l.line));
        var b1 = el("span", null, "bar");
        b1.style.width = (most ? 150 * (mem ? l.alloc_bytes : l.time_ns) / most : 0) + "px";
        bars.appendChild(b1);
        if (mem) {
          var b2 = el("span", null, "bar net");
          b2.style.width = (most ? 150 * l.net_bytes / most : 0) + "px";
          bars.appendChild(b2);
        }
        row.appendChild(bars);
        var ran = l.hits || l.alloc_bytes || l.net_bytes || l.freed_bytes;
        if (mem) {
          [ran ? fmtBytes(l.alloc_bytes) : "", ran ? fmtBytes(l.net_bytes) : ""].concat(
           reserved ? [ran && l.reserved_bytes ? fmtBytes(l.reserved_bytes) : ""] : [],
           [l.rss_bytes ? fmtBytes(l.rss_bytes) : "", l.rss_bytes ? fmtBytes(l.rss_increment_bytes) : "",
           l.hits === null || l.hits === undefined ? "" : l.hits || ""]).forEach(function (v) { row.appendChild(el("td", v)); });
        } else {
          [l.hits || "", l.hits ? (l.time_ns / 1e6).toFixed(3) + " ms" : "",
           l.hits && fn.total_ns ? pct(l.time_ns / fn.total_ns) : ""].forEach(function (v) { row.appendChild(el("td", v)); });
        }
        row.appendChild(el("td", l.source, "src"));
        t.appendChild(row);
      });
      box.appendChild(t);
    });
    if (mem && doc.leaks && doc.leaks.length) {
      box.appendChild(el("div", "Still alive at the end", "fn"));
      var lt = el("table");
      lt.id = "leaks";
      doc.leaks.slice(0, 50).forEach(function (leak) {
        var row = el("tr"), inner = leak.stack[leak.stack.length - 1];
        row.appendChild(el("td", fmtBytes(leak.bytes) + (leak.reserved_bytes > 0 ? " + " + fmtBytes(leak.reserved_bytes) + " reserved" : "")));
        row.appendChild(el("td", inner ? inner.name + " " + inner.file + ":" + inner.line : "(outside the profiled functions)", "name"));
        row.appendChild(el("td", inner ? inner.source : "", "src"));
        lt.appendChild(row);
      });
      box.appendChild(lt);
    }
  }

  /* ---------------- diff: what changed ---------------- */

  function drawChanges(box) {
    var t = el("table"), hr = el("tr");
    t.id = "changes";
    ["before", "after", "change", "function"].forEach(function (h) { hr.appendChild(el("th", h)); });
    t.appendChild(hr);
    var filter = matcher($("filter").value);
    D.changes.forEach(function (c) {
      if (filter && !filter.test(c[0])) return;
      var row = el("tr");
      row.appendChild(el("td", fmtValue(c[1])));
      row.appendChild(el("td", fmtValue(c[2])));
      row.appendChild(el("td", (c[2] >= c[1] ? "+" : "") + fmtValue(c[2] - c[1])));
      row.appendChild(el("td", c[0], "name"));
      t.appendChild(row);
    });
    box.appendChild(t);
  }

  /* ---------------- the page ---------------- */

  var views = {
    flame: ["flame graph", function (box) { var c = canvas(box); drawFlame(c, false); }],
    icicle: ["icicle", function (box) { var c = canvas(box); drawFlame(c, true); }],
    sunburst: ["sunburst", function (box) { var c = canvas(box); drawSunburst(c); }],
    table: ["table", drawTable],
    changes: ["changes", drawChanges],
    source: ["source", drawSource],
    memory: ["memory over time", function (box) {
      var plot = $("memplot");
      plot.style.display = "block";
      box.appendChild(plot);
    }]
  };
  var available = D.kind === "lines" ? ["source"]
                : D.kind === "mem" ? ["source", "memory"]
                : D.kind === "diff" ? ["flame", "icicle", "changes"]
                : ["flame", "icicle", "sunburst", "table"];

  function canvas(box) {
    var c = el("canvas");
    c.id = "chart";
    c.onmousemove = function (ev) {
      var i = hit(c, ev), tip = $("tip");
      if (i < 0) { tip.style.display = "none"; return; }
      tip.textContent = tipText(i);
      tip.style.display = "block";
      tip.style.left = Math.min(ev.clientX + 12, window.innerWidth - 400) + "px";
      tip.style.top = (ev.clientY + 14) + "px";
    };
    c.onmouseleave = function () { $("tip").style.display = "none"; };
    c.onclick = function (ev) {
      var i = hit(c, ev);
      if (i < 0) return;
      S.zoom = i === S.zoom ? Math.max(T.parent[i], 0) : i;
      if (T.func[i] >= 0 && D.edges) select(T.func[i]); else render();
    };
    box.appendChild(c);
    return c;
  }

  function crumbs() {
    var box = $("crumbs");
    box.textContent = "";
    if (!T || ["flame", "icicle", "sunburst"].indexOf(S.view) < 0) return;
    ancestors(S.zoom).forEach(function (a) {
      var s = el("span", funcLabel(T.func[a]));
      s.onclick = function () { S.zoom = a; render(); };
      box.appendChild(s);
    });
  }

  function searchSummary() {
    if (!T || !S.search || ["flame", "icicle", "sunburst"].indexOf(S.view) < 0) return;
    var count = 0, share = 0, stack = [[0, false]];
    while (stack.length) {
      var top = stack.pop(), i = top[0], inside = top[1];
      var m = i > 0 && S.search.test(funcLabel(T.func[i]));
      if (m) count++;
      if (m && !inside) share += T.total[i];
      for (var c = T.first[i]; c >= 0; c = T.next[c]) stack.push([c, inside || m]);
    }
    $("found").textContent = "matching frames: " + count + ", " + pct(share / (T.total[0] || 1)) + " of the total";
  }

  function render() {
    var began = performance.now(), box = $("view");
    box.textContent = "";
    $("found").textContent = "";
    Array.prototype.forEach.call(document.querySelectorAll("nav button"), function (b) {
      b.className = b.dataset.view === S.view ? "on" : "";
    });
    views[S.view][1](box);
    crumbs();
    searchSummary();
    $("status").textContent = "drawn: " + S.view +
      (["flame", "icicle", "sunburst"].indexOf(S.view) >= 0 ? ", " + drawn.length + " frames" : "") +
      " in " + Math.round(performance.now() - began) + " ms";
  }

  function start() {
    document.title = "sonde view: " + D.title;
    $("title").textContent = D.title;
    var nav = $("tabs");
    available.forEach(function (v) {
      var b = el("button", views[v][0]);
      b.dataset.view = v;
      b.onclick = function () { S.view = v; render(); };
      nav.appendChild(b);
    });
    if (D.tree) buildTree();
    S.view = available.indexOf(hash.view) >= 0 ? hash.view : available[0];
    S.depth = hashCount(hash.depth, T ? T.maxDepth : 0);
    S.cutoff = Math.min(Math.max(Number(hash.cutoff) || 0, 0), 100);
    $("depth").value = S.depth; $("cutoff").value = S.cutoff;
    $("search").value = hash.search || "";
    S.search = matcher(hash.search || "");
    if (T && hash.zoom) S.zoom = Math.max(findNode(hash.zoom), 0);
    $("search").oninput = function () { S.search = matcher(this.value); render(); };
    $("filter").oninput = function () { render(); };
    $("depth").oninput = function () { S.depth = hashCount(this.value, T ? T.maxDepth : 0); render(); };
    $("cutoff").oninput = function () { S.cutoff = Math.min(Math.max(Number(this.value) || 0, 0), 100); render(); };
    document.addEventListener("keydown", function (ev) {
      if (ev.key === "Escape" && T) { S.zoom = 0; render(); }
    });
    window.addEventListener("resize", function () { if (T) render(); });
    if (!T) ["search", "depth", "cutoff"].forEach(function (id) { $(id).parentNode.style.display = "none"; });
    if (!D.stats && D.kind !== "diff") $("filter").parentNode.style.display = D.doc ? "" : "none";
    if (T && hash.select) {
      var n = findNode(hash.select);
      if (n > 0) select(T.func[n]);
    }
    render();
    act();
  }

  /* The fragment's user actions, through the same handlers as a user's. */
  function act() {
    if (hash.click && T) {
      var re = matcher(hash.click), best = null;
      drawn.forEach(function (f) {
        if (re.test(funcLabel(T.func[f[0]])) && (!best || f[3] > best[3])) best = f;
      });
      var c = $("chart");
      if (best && c) {
        var r = c.getBoundingClientRect(), x, y;
        if (c.sunburst) {
          var mid = (best[1] + best[2]) / 2, rad = (best[3] + 0.5) * c.sunburst.ring;
          x = c.sunburst.cx + Math.cos(mid) * rad; y = c.sunburst.cy + Math.sin(mid) * rad;
        } else {
          x = best[1] + best[3] / 2; y = best[2] + ROW / 2;
        }
        c.dispatchEvent(new MouseEvent("click", { clientX: r.left + x, clientY: r.top + y, bubbles: true }));
      }
    }
    if (hash.type !== undefined) {
      var box = $("search");
      box.value = hash.type;
      box.dispatchEvent(new Event("input"));
    }
  }

  start();
})();
