/* viewer.js - sonde view's page.  Reads the JSON in #data (see
 * src/page/view.h for its shapes) and draws, without any request:
 * profiles: flame graph, icicle, sunburst (click to zoom, breadcrumb to
 * zoom out, search, depth and cutoff), a sortable and filterable table,
 * callers and callees of the selected function, and for a sampled
 * profile a stack chart of each thread's timeline (time across, the stack
 * drawn down) and a heatmap of its source lines; lines and mem profiles:
 * each function's source with per-line bars, and mem's memory over time;
 * diffs: the newer profile's flame graph coloured by growth.  A header
 * line says what was profiled (the command line, the interpreter, when,
 * wall and CPU time, the verdict: what the file recorded) and how the
 * profile was taken; the pictures fit the window (the
 * flame graph opens on its root); the import machinery and sonde's
 * launcher fold into their callers unless unticked; arrows, Enter,
 * Escape and "/" drive it; "save SVG" writes the picture shown.  Every
 * text reaches the page through textContent, never as markup.  The
 * address's #fragment sets the first state: view=, search=, zoom=,
 * select=, depth=, cutoff=, fold=0, mine=1, thread=N (the Nth; 0 all),
 * process=N (the Nth process of merged files; 0 all),
 * weight=gpu (the trees weighed by GPU time, when the profile has some);
 * and acts as a user would: click=NAME
 * clicks the widest drawn frame of that function, type=TEXT types into
 * the search box (what the browser tests drive). */
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("data").textContent);
  /* each function's file by name again (the data holds each file once) */
  if (D.files) D.funcs.forEach(function (fn) { fn[1] = D.files[fn[1]]; });
  var $ = function (id) { return document.getElementById(id); };
  var ROW = 17;
  /* the most device pixels a canvas's side may have in every browser
   * (Firefox's limit; Chromium's is 65535): a taller one draws nothing */
  var CANVAS_MAX = 32767;

  /* How many rows of ROW pixels (and a margin of 2) one canvas can hold. */
  function canvasRows() {
    return Math.floor((CANVAS_MAX / (window.devicePixelRatio || 1) - 2) / ROW);
  }

  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }

  function pct(x) { return (100 * x).toFixed(1) + "%"; }

  /* Seconds (of samples, for sampled profiles), the unit by size; a
   * sampled time to no finer a digit than its sampling period (716 ms at
   * 100 Hz, not 716.000 ms). */
  var PERIOD = D.sampled && D.about && D.about.rate > 0 ? 1 / D.about.rate : 0;
  function fmtValue(v) {
    var a = Math.abs(v);
    function shown(scale, unit, most) {
      var digits = PERIOD ? Math.ceil(-Math.log10(PERIOD * scale) - 1e-9) : most;
      return (v * scale).toFixed(Math.max(0, Math.min(most, digits))) + unit;
    }
    if (a >= 1) return shown(1, " s", 3);
    if (a >= 1e-3) return shown(1e3, " ms", 3);
    return shown(1e6, " us", 1);
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

  var T = null; /* the tree drawn (folded or not): arrays over nodes; node 0 is the root */
  var R = null; /* the tree as the data holds it, every frame */
  var trees = {}; /* T by weight, thread (0: all), fold and mine, once built */
  var raws = {}; /* R by weight and thread */

  function funcLabel(f) {
    return f < 0 ? "all" : D.funcs[f][0];
  }

  /* A frame's label: its function's, or "import NAME" for a folded import. */
  function nodeLabel(i) {
    return (T.label && T.label[i]) || funcLabel(T.func[i]);
  }

  function funcWhere(f) {
    if (f < 0) return "";
    var fn = D.funcs[f];
    return fn[1] + (fn[2] ? ":" + fn[2] : "");
  }

  /* The import machinery, and the frames of sonde's own launcher and of
   * its import hook for --torch (_torch.py's loader wraps torch's). */
  var MACHINERY = /^<frozen importlib\._bootstrap(_external)?>$/;
  var LAUNCHER = /(^|[\/\\])sonde[\/\\]_(launch|torch)\.py$|^<sonde>$|^<frozen runpy>$|(^|[\/\\])runpy\.py$/;
  /* the interpreter's library, frozen and generated code, C functions: what
   * "only my code" leaves out (python -c's <string> and <stdin> stay) */
  var LIBRARY = /^<(?!string>$|stdin>$)|^~$|[\/\\](site|dist)-packages[\/\\]|[\/\\]lib[\/\\]python[0-9.]*[\/\\]|^[A-Za-z]:.*[\/\\]Lib[\/\\]/;
  /* the C functions through which the machinery and the launcher run code */
  var RUNS = /^<built-in method builtins\.(exec|__import__)>$/;

  /* R from rows of the data ("tree", or one thread's). */
  function readTree(rows) {
    var n = rows.length, i;
    R = { n: n, func: new Int32Array(n), parent: new Int32Array(n), total: new Float64Array(n),
          self: new Float64Array(n), x: new Float64Array(n), base: D.base ? new Float64Array(n) : null,
          machinery: new Uint8Array(D.funcs.length), launcher: new Uint8Array(D.funcs.length),
          runs: new Uint8Array(D.funcs.length), mine: new Uint8Array(D.funcs.length) };
    /* each function's part in folding, once */
    D.funcs.forEach(function (fn, f) {
      R.machinery[f] = MACHINERY.test(fn[1]) ? 1 : 0;
      R.launcher[f] = LAUNCHER.test(fn[1]) ? 1 : 0;
      R.runs[f] = RUNS.test(fn[0]) ? 1 : 0;
      R.mine[f] = LIBRARY.test(fn[1]) ? 0 : 1;
    });
    for (i = 0; i < n; i++) {
      var r = rows[i];
      R.func[i] = r[0]; R.parent[i] = i ? r[1] : -1; R.total[i] = r[2]; R.self[i] = r[3];
      R.x[i] = i ? r[4] : 0;
      if (R.base) R.base[i] = D.base[i];
    }
  }

  /* The process frames first under the root of rows (a tree of the data):
   * "process PID (command)", which sonde merge puts above each file's
   * part and record --subprocesses above each process's stacks. */
  function processFrames(rows) {
    var out = [];
    for (var i = 1; i < rows.length; i++) {
      var f = rows[i][0];
      if (rows[i][1] === 0 && f >= 0 && D.funcs[f][1] === "~" && /^process /.test(D.funcs[f][0]))
        out.push(f);
    }
    return out;
  }

  /* rows with only the part under process frame f (the frame kept), its
   * places shifted to start at the root's. */
  function processRows(rows, f) {
    var keep = new Int32Array(rows.length).fill(-1), out = [[-1, 0, 0, 0, 0]], x0 = 0;
    for (var i = 1; i < rows.length; i++) {
      var r = rows[i], up = r[1] === 0 ? (r[0] === f ? 0 : -1) : keep[r[1]];
      if (up < 0) continue;
      if (r[1] === 0) { x0 = r[4]; out[0][2] += r[2]; }
      keep[i] = out.length;
      out.push([r[0], up, r[2], r[3], r[4] - x0]);
    }
    return out;
  }

  /* The tree drawn, from R: with fold, each outermost import machinery
   * frame stays (labelled "import MODULE"), the machinery under it and the
   * exec that runs the module fold into it, and sonde's launcher frames
   * fold into their caller (inside an import, with what they call there:
   * --torch's loader runs torch's import through sonde's _torch.py); with mine, every frame of a function outside
   * the program's own files folds into its caller; children of one frame
   * with the same function merge.  Without either, R as it is, placed as
   * flame_layout.c placed it. */
  function buildTree(fold, mine) {
    if (!fold && !mine) return plainTree();
    var n = R.n, i, m = new Int32Array(n), inImport = new Uint8Array(n), launcher = new Uint8Array(n);
    var func = [], parent = [], total = [], self = [], base = [], x = [], imp = [];
    var index = new Map(), nf = D.funcs.length + 1;
    func.push(-1); parent.push(-1); total.push(R.total[0]); self.push(R.self[0]);
    base.push(R.base ? R.base[0] : 0); x.push(0); imp.push(false);
    for (i = 1; i < n; i++) {
      var up = m[R.parent[i]], f = R.func[i];
      var machinery = fold && f >= 0 && R.machinery[f] === 1, inside = fold && inImport[R.parent[i]];
      var runs = f >= 0 && R.runs[f] === 1;
      /* sonde's frames inside an import, and what they call there that is
       * not the machinery, fold too, and the import goes on through them */
      launcher[i] = fold && f >= 0 && (R.launcher[f] === 1 || ((runs || inside) && !machinery &&
                                                               launcher[R.parent[i]])) ? 1 : 0;
      inImport[i] = machinery || (inside && (runs || launcher[i])) ? 1 : 0;
      if ((inside && inImport[i]) || launcher[i] || (mine && (f < 0 || !R.mine[f]))) {
        m[i] = up; self[up] += R.self[i];
        continue;
      }
      var key = up * nf + f + 1, k = index.get(key);
      if (k === undefined) {
        k = func.length; index.set(key, k);
        func.push(f); parent.push(up); total.push(0); self.push(0); base.push(0); x.push(R.x[i]);
        imp.push(machinery);
      }
      total[k] += R.total[i]; self[k] += R.self[i];
      if (R.base) base[k] += R.base[i];
      m[i] = k;
    }
    n = func.length;
    T = { n: n, func: Int32Array.from(func), parent: Int32Array.from(parent),
          total: Float64Array.from(total), self: Float64Array.from(self),
          base: R.base ? Float64Array.from(base) : null, label: null,
          first: new Int32Array(n).fill(-1), next: new Int32Array(n).fill(-1),
          x: Float64Array.from(x), depth: new Int32Array(n), maxDepth: 0 };
    var kids = [];
    for (i = 1; i < n; i++) (kids[T.parent[i]] = kids[T.parent[i]] || []).push(i);
    if (fold) {
      T.label = [];
      for (i = 0; i < n; i++) if (imp[i]) T.label[i] = importLabel(kids[i]);
    }
    /* children in the order of their places: flame_layout.c's (by name);
     * folded, again by name from the parent's place */
    var byName = function (a, b) {
      var la = nodeLabel(a), lb = nodeLabel(b);
      return la < lb ? -1 : la > lb ? 1 : 0;
    };
    for (i = 0; i < n; i++) {
      if (!kids[i]) continue;
      kids[i].sort(fold || mine ? byName : function (a, b) { return T.x[a] - T.x[b]; });
      var at = T.x[i];
      for (var k = kids[i].length - 1; k >= 0; k--) {
        T.next[kids[i][k]] = T.first[i];
        T.first[i] = kids[i][k];
      }
      if (fold || mine) for (k = 0; k < kids[i].length; k++) { T.x[kids[i][k]] = at; at += T.total[kids[i][k]]; }
    }
    var sum = 0;
    for (var c = T.first[0]; c >= 0; c = T.next[c]) sum += T.total[c];
    if (T.total[0] < sum) T.total[0] = sum;
    for (i = 1; i < n; i++) {
      T.depth[i] = T.depth[T.parent[i]] + 1;
      if (T.depth[i] > T.maxDepth) T.maxDepth = T.depth[i];
    }
  }

  /* T as R is (nothing folds, nothing merges): its arrays shared, each
   * frame's children in the order of their places. */
  function plainTree() {
    var n = R.n, i, c;
    T = { n: n, func: R.func, parent: R.parent, total: Float64Array.from(R.total), self: R.self,
          base: R.base, label: null, first: new Int32Array(n).fill(-1),
          next: new Int32Array(n).fill(-1), x: R.x, depth: new Int32Array(n), maxDepth: 0 };
    /* each frame's children together (a counting sort by parent), then
     * in place order, linked last first */
    var start = new Int32Array(n + 1), kids = new Int32Array(Math.max(n - 1, 0)), p, k;
    for (i = 1; i < n; i++) start[T.parent[i] + 1]++;
    for (i = 0; i < n; i++) start[i + 1] += start[i];
    var fill = start.slice(0, n);
    for (i = 1; i < n; i++) kids[fill[T.parent[i]]++] = i;
    var byPlace = function (a, b) { return T.x[a] - T.x[b] || a - b; };
    for (p = 0; p < n; p++) {
      if (start[p + 1] - start[p] > 1) kids.subarray(start[p], start[p + 1]).sort(byPlace);
      for (k = start[p + 1] - 1; k >= start[p]; k--) {
        c = kids[k];
        T.next[c] = T.first[p];
        T.first[p] = c;
      }
    }
    var sum = 0;
    for (c = T.first[0]; c >= 0; c = T.next[c]) sum += T.total[c];
    if (T.total[0] < sum) T.total[0] = sum;
    for (i = 1; i < n; i++) {
      T.depth[i] = T.depth[T.parent[i]] + 1;
      if (T.depth[i] > T.maxDepth) T.maxDepth = T.depth[i];
    }
  }

  /* "import NAME": the module of the widest <module> frame an import ran
   * (null, the function's own label, when it ran none). */
  function importLabel(kids) {
    var best = -1;
    (kids || []).forEach(function (k) {
      if (T.func[k] >= 0 && D.funcs[T.func[k]][0] === "<module>" && (best < 0 || T.total[k] > T.total[best])) best = k;
    });
    return best < 0 ? null : moduleImport(T.func[best]);
  }

  /* "import NAME" for function f, a module's <module>. */
  function moduleImport(f) {
    var file = D.funcs[f][1].replace(/\\/g, "/");
    var lib = /\/(?:site|dist)-packages\/(.*)$/.exec(file) || /\/lib\/python[0-9.]+\/(.*)$/.exec(file);
    /* a library's module by its dotted name; the program's own by its file's */
    file = file.replace(/\.py$/, "").replace(/\/__init__$/, "");
    return "import " + (lib ? lib[1].replace(/\.py$/, "").replace(/\/__init__$/, "").replace(/\//g, ".")
                        : file.replace(/^.*\//, ""));
  }

  function findNode(text) {
    var re = matcher(text), best = -1;
    for (var i = 1; re && i < T.n; i++)
      if (re.test(nodeLabel(i)) && (best < 0 || T.total[i] > T.total[best])) best = i;
    return best;
  }

  /* ---------------- state ---------------- */

  /* cursor: the frame the keyboard is on (node of T) */
  var S = { view: null, zoom: 0, search: null, depth: 0, cutoff: 0, select: -1, cursor: 0 };
  var drawn = []; /* what the last drawing put where, for the mouse */
  var levelsCut = 0; /* the levels the last flame graph or icicle left out: more than a canvas holds */

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
    if (S.search && S.search.test(nodeLabel(i))) return "rgb(220,40,220)";
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

  /* The width inside #view's padding (its scroll bar's place kept). */
  function viewWidth() {
    var box = $("view"), cs = getComputedStyle(box);
    return Math.floor(box.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight));
  }

  /* ---------------- flame graph and icicle ---------------- */

  function drawFlame(canvas, upsideDown) {
    var W = Math.max(300, viewWidth()), z = S.zoom, path = ancestors(z);
    var rows = path.length + (S.depth > 0 ? S.depth : T.maxDepth - T.depth[z]);
    levelsCut = Math.max(0, rows - canvasRows());
    rows -= levelsCut;
    /* a flame graph as tall as the pane at least: its root at the pane's bottom */
    var H = Math.max(rows * ROW + 2, upsideDown ? 0 : $("view").clientHeight - 4), g = sized(canvas, W, H);
    g.font = "11px sans-serif"; g.textBaseline = "middle";
    drawn = [];
    var scale = W / (T.total[z] || 1), x0 = T.x[z];
    function rect(i, px, w, row) {
      var y = upsideDown ? row * ROW : H - (row + 1) * ROW;
      g.fillStyle = colour(i);
      g.fillRect(px, y, Math.max(w - 0.5, 0.5), ROW - 1);
      if (w > 28) {
        var label = nodeLabel(i), fits = Math.floor((w - 6) / 6.2);
        if (label.length > fits) label = fits > 2 ? label.slice(0, fits - 2) + ".." : "";
        g.fillStyle = "#000";
        g.fillText(label, px + 3, y + ROW / 2);
      }
      if (i === S.cursor) {
        g.strokeStyle = "#000"; g.lineWidth = 2;
        g.strokeRect(px + 1, y + 1, Math.max(w - 2.5, 1), ROW - 3);
      }
      drawn.push([i, px, y, w]);
    }
    for (var k = 0; k < path.length - 1 && k < rows; k++) rect(path[k], 0, W, k);
    var base = path.length - 1, stack = [z];
    while (stack.length) {
      var i = stack.pop(), w = T.total[i] * scale, row = base + T.depth[i] - T.depth[z];
      if (w < 0.5 || row >= rows || (i !== z && !visible(i))) continue;
      rect(i, (T.x[i] - x0) * scale, w, row);
      for (var c = T.first[i]; c >= 0; c = T.next[c]) stack.push(c);
    }
  }

  /* ---------------- sunburst ---------------- */

  /* Whether a w x h box centred at radius rm on the middle of the wedge
   * r0..r1 of half-angle half lies inside it: along the ring (tangent) or
   * across it (radial).  Exact: the outer corners within r1, the inner
   * side beyond r0, the inner corners within the angle (for a wedge up to
   * a half turn, a convex cone, the corners decide; past it, every point
   * of the box is less than a quarter turn from the middle). */
  function fitsWedge(w, h, rm, r0, r1, half, radial) {
    var along = radial ? h : w, across = radial ? w : h; /* tangent and radial extents */
    var inner = rm - across / 2;
    return inner >= r0 && Math.hypot(rm + across / 2, along / 2) <= r1 &&
           Math.atan2(along / 2, inner) <= half;
  }

  /* A wedge's label at its middle, along the ring where it fits so, else
   * across it (turned to read left to right), shortened with ".." (4
   * characters kept at least) to fit: drawn only inside its own wedge, so
   * labels of different wedges never overlap. */
  function sunLabel(g, label, cx, cy, r0, r1, a0, a1) {
    var mid = (a0 + a1) / 2, rm = (r0 + r1) / 2, half = (a1 - a0) / 2, H = 14;
    g.font = "11px sans-serif"; g.textAlign = "center"; g.textBaseline = "middle";
    for (var k = Math.min(label.length, 24); k >= Math.min(label.length, 6); k--) {
      var text = k < label.length ? label.slice(0, k - 2) + ".." : label, w = g.measureText(text).width + 2;
      var radial = !fitsWedge(w, H, rm, r0, r1, half, false);
      if (radial && !fitsWedge(w, H, rm, r0, r1, half, true)) continue;
      var turn = radial ? mid : mid + Math.PI / 2;
      if (Math.cos(turn) < 0) turn += Math.PI; /* upright */
      g.save();
      g.translate(cx + Math.cos(mid) * rm, cy + Math.sin(mid) * rm);
      g.rotate(turn);
      g.fillStyle = "#000";
      g.fillText(text, 0, 0);
      g.restore();
      return;
    }
  }

  function drawSunburst(canvas) {
    /* within the pane, and 10 rings unless asked (as snakeviz): labels stay readable */
    var W = Math.max(240, Math.min(viewWidth(), $("view").clientHeight - 8)), H = W, g = sized(canvas, W, H);
    canvas.style.margin = "0 auto";
    var z = S.zoom, cx = W / 2, cy = H / 2;
    var levels = S.depth > 0 ? S.depth : Math.min(T.maxDepth - T.depth[z], 10);
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
      g.strokeStyle = i === S.cursor ? "#000" : "#fff"; g.lineWidth = i === S.cursor ? 2 : 1; g.stroke();
      drawn.push([i, a0, a1, d]);
      if (d > 0 && (a1 - a0) * (d + 0.5) * ring > 24) sunLabel(g, nodeLabel(i), cx, cy, d * ring, (d + 1) * ring, a0, a1);
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
    var f = T.func[i], lines = [nodeLabel(i)];
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
    var key = sortKey === null ? 3 : sortKey; /* cumtime, or total %: the biggest first */
    D.stats.forEach(function (r) {
      if (!filter || filter.test(funcLabel(r[0]) + " " + funcWhere(r[0])))
        rows.push({ r: r, v: key === "name" ? funcLabel(r[0]) : colValue(r, cols[key]) });
    });
    rows.sort(function (a, b) {
      var c = a.v < b.v ? -1 : a.v > b.v ? 1 : 0;
      return sortDown ? -c : c;
    });
    rows = rows.map(function (o) { return o.r; });
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
    /* the first 200 rows (a DOM of thousands of rows takes a second to
     * build): the filter and the sort reach the others */
    var tbody = el("tbody"), shown = Math.min(rows.length, 200);
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

  /* ---------------- sandwich ---------------- */

  /* A merged tree: {func, total, self, kids: Map func -> tree}. */
  function mtree(f) { return { func: f, total: 0, self: 0, kids: new Map() }; }

  function mchild(t, f) {
    var k = t.kids.get(f);
    if (!k) { k = mtree(f); t.kids.set(f, k); }
    return k;
  }

  /* Function f's sandwich, from the frames of f not inside another frame
   * of f (a recursion counted once): what called it, merged over all its
   * call paths, f first and its callers after; and what it called, merged. */
  function sandwich(f) {
    var callers = mtree(f), callees = mtree(f), paths = 0;
    /* depth first over T: each frame, and whether a frame of f holds it */
    var stack = new Int32Array(T.n), inside = new Uint8Array(T.n), top = 0;
    /* frame i and all under it into the merged tree into, depth first
     * without recursion (a deep recursion would exhaust the page's stack):
     * work holds [merged tree of the parent, frame] pairs, next on top */
    function merge(into, i) {
      var work = [], kids = [];
      into.total += T.total[i]; into.self += T.self[i];
      pushKids(work, kids, into, i);
      while (work.length) {
        var w = work.pop(), t = mchild(w[0], T.func[w[1]]);
        t.total += T.total[w[1]]; t.self += T.self[w[1]];
        pushKids(work, kids, t, w[1]);
      }
    }
    function pushKids(work, kids, t, i) {
      kids.length = 0;
      for (var c = T.first[i]; c >= 0; c = T.next[c]) kids.push(c);
      for (var k = kids.length - 1; k >= 0; k--) work.push([t, kids[k]]);
    }
    stack[top++] = 0;
    while (top) {
      var i = stack[--top], held = inside[top], mine = i > 0 && T.func[i] === f;
      if (mine && !held) {
        paths++;
        merge(callees, i);
        callers.total += T.total[i]; callers.self += T.self[i];
        for (var a = T.parent[i], at = callers; a > 0; a = T.parent[a]) {
          at = mchild(at, T.func[a]);
          at.total += T.total[i];
        }
      }
      for (var c = T.first[i]; c >= 0; c = T.next[c]) {
        inside[top] = held || mine ? 1 : 0;
        stack[top++] = c;
      }
    }
    return { callers: callers, callees: callees, paths: paths };
  }

  var sandwiched = []; /* the sandwich's frames: [tree, part, level, x, y, w] */

  /* The sandwich frame of canvas under the mouse event ev, or undefined. */
  function sandwichHit(canvas, ev) {
    var r = canvas.getBoundingClientRect(), mx = ev.clientX - r.left, my = ev.clientY - r.top;
    return sandwiched.filter(function (e) {
      return e[6] === canvas && mx >= e[3] && mx < e[3] + e[5] && my >= e[4] && my < e[4] + ROW;
    })[0];
  }

  /* One merged tree as an icicle (callees, downwards) or a flame graph
   * (callers, upwards: f at the bottom, next to its callees), as many
   * levels from f as a canvas holds.  Returns how many levels were not
   * drawn for that (0: none). */
  function drawMerged(canvas, root, part, up) {
    var W = Math.max(300, viewWidth()), levels = 0, scale = W / (root.total || 1);
    /* both walks without recursion (a deep recursion would exhaust the
     * page's stack): the levels drawn, then each frame, parents first */
    for (var below = [[root, 0]]; below.length;) {
      var level = below.pop();
      levels = Math.max(levels, level[1]);
      level[0].kids.forEach(function (k) { if (k.total * scale >= 0.5) below.push([k, level[1] + 1]); });
    }
    var cut = Math.max(0, levels + 1 - canvasRows());
    levels -= cut;
    var H = (levels + 1) * ROW + 2, g = sized(canvas, W, H);
    g.font = "11px sans-serif"; g.textBaseline = "middle";
    for (var work = [[root, 0, 0]]; work.length;) {
      var w = work.pop(), t = w[0], x = w[1], d = w[2];
      var width = t.total * scale, y = up ? H - (d + 1) * ROW : d * ROW;
      if (width < 0.5 || d > levels) continue;
      g.fillStyle = t.func < 0 ? "rgb(220,220,220)" : D.funcs[t.func][3];
      g.fillRect(x, y, Math.max(width - 0.5, 0.5), ROW - 1);
      if (width > 28) {
        var label = funcLabel(t.func), fits = Math.floor((width - 6) / 6.2);
        if (label.length > fits) label = fits > 2 ? label.slice(0, fits - 2) + ".." : "";
        g.fillStyle = "#000";
        g.fillText(label, x + 3, y + ROW / 2);
      }
      sandwiched.push([t, part, d, x, y, width, canvas]);
      var kids = Array.from(t.kids.values()).sort(function (a, b) { return b.total - a.total; });
      var placed = kids.map(function (k) { var kid = [k, x, d + 1]; x += k.total * scale; return kid; });
      for (var p = placed.length - 1; p >= 0; p--) work.push(placed[p]);
    }
    canvas.onmousemove = function (ev) {
      var s = sandwichHit(canvas, ev), tip = $("tip");
      if (!s) { tip.style.display = "none"; return; }
      tip.textContent = funcLabel(s[0].func) + "\n" + funcWhere(s[0].func) + "\n" + (part === "callers" && s[2] ?
        "calls it: " : "total ") + fmtValue(s[0].total) + " (" + pct(s[0].total / (T.total[0] || 1)) + ")";
      tip.style.display = "block";
      tip.style.left = Math.min(ev.clientX + 12, window.innerWidth - 400) + "px";
      tip.style.top = (ev.clientY + 14) + "px";
    };
    canvas.onmouseleave = function () { $("tip").style.display = "none"; };
    canvas.onclick = function (ev) {
      var s = sandwichHit(canvas, ev);
      if (s && s[0].func >= 0) select(s[0].func);
    };
    return cut;
  }

  /* The function with the most own time among the frames drawn (T, after
   * fold imports and only my code), or -1; with fold imports, not the
   * machinery's (a folded import's frame holds its time, drawn as "import
   * NAME"). */
  function busiestDrawn() {
    var own = new Map(), best = -1, most = -1, fold = $("fold").checked;
    for (var i = 1; i < T.n; i++)
      if (T.func[i] >= 0 && !(fold && R.machinery[T.func[i]] === 1))
        own.set(T.func[i], (own.get(T.func[i]) || 0) + T.self[i]);
    own.forEach(function (v, f) { if (v > most) { most = v; best = f; } });
    return best;
  }

  /* The selected function's sandwich; without a selection, the function
   * with the most own time in the frames drawn (the stats' busiest may be
   * one that fold imports hides: a sandwich of no call path). */
  function drawSandwich(box) {
    var f = S.select >= 0 ? S.select : busiestDrawn();
    sandwiched = [];
    if (f < 0) { box.appendChild(el("p", "select a function (in a picture or the table)", "note")); return; }
    var sw = sandwich(f), half = Math.max(120, Math.floor(box.clientHeight / 2) - 40);
    if (sw.paths === 0) {
      box.appendChild(el("p", funcLabel(f) + " is in none of the frames drawn: fold imports or " +
                         "only my code hides it (clear them to see its sandwich)", "note"));
      return;
    }
    /* each half of the pane scrolls alone; the callers' opens on f, at its bottom */
    [["callers of " + funcLabel(f) + " (merged over " + sw.paths + " call paths; each as wide as the time spent calling it)",
      "callers", sw.callers, true],
     ["what " + funcLabel(f) + " called (merged)", "callees", sw.callees, false]].forEach(function (part) {
      var title = box.appendChild(el("div", part[0], "fn"));
      var pane = el("div", null, "half"), c = el("canvas");
      pane.style.maxHeight = half + "px";
      c.id = part[1] + "-chart";
      pane.appendChild(c);
      box.appendChild(pane);
      var cut = drawMerged(c, part[2], part[1], part[3]);
      if (cut) title.textContent += "; the " + cut + " levels farthest from " + funcLabel(f) + " not drawn (more than a picture holds)";
      if (part[3]) pane.scrollTop = pane.scrollHeight;
    });
  }

  /* ---------------- stack chart: a sampled profile's timeline ---------------- */

  /* Each thread's frames in time, built once from the data's runs of
   * identical stacks (view_timeline.h): a box per stretch of time in which
   * consecutive samples had the same function at that depth under the same
   * frames; a run starts where the one before ended unless more than two
   * sampling periods lay between them (the thread was not sampled). */
  var lanes = null, lanesBy = {}; /* the lanes drawn; by fold and mine, once built */

  /* The frames of stack s drawn, outermost first, each {func, label}: all
   * of them, or folded as buildTree folds a tree (the import machinery
   * into its outermost frame, labelled by the module it ran; sonde's
   * launcher into its caller; with mine, what is outside the program's
   * own files into its caller). */
  function chartPath(s, fold, mine) {
    var st = D.timeline.stacks, funcs = [], out = [], inImport = false, launcher = false, imp = null;
    for (; s > 0; s = st[s][1]) funcs.push(st[s][0]);
    for (var i = funcs.length - 1; i >= 0; i--) {
      var f = funcs[i], machinery = fold && R.machinery[f] === 1, inside = fold && inImport, runs = R.runs[f] === 1;
      inImport = machinery || (inside && runs);
      launcher = fold && (R.launcher[f] === 1 || (runs && launcher));
      if ((inside && inImport) || launcher || (mine && !R.mine[f])) continue;
      /* an import's label: the module it ran, the next frame kept */
      if (imp && D.funcs[f][0] === "<module>") imp.label = moduleImport(f);
      imp = machinery ? { func: f, label: null } : null;
      out.push(imp || { func: f, label: null });
    }
    return out;
  }

  function readLanes(fold, mine) {
    var tl = D.timeline, period = tl.period_us, paths = []; /* by stack, once */
    return tl.threads.map(function (th, t) {
      var lane = { thread: t, name: D.about.threads[t] || "thread " + (t + 1), samples: 0, runs: th.t.length,
                   rows: [], maxDepth: -1, t0: Infinity, t1: 0 };
      var open = [], start = 0, n = th.t.length, i, k;
      function close(from) {
        while (open.length > from) {
          var bx = open.pop();
          (lane.rows[bx.depth] = lane.rows[bx.depth] || []).push(bx);
        }
      }
      for (i = 0; i < n; i++) {
        start += th.t[i];
        var last = start + th.d[i], next = i + 1 < n ? start + th.t[i + 1] : Infinity;
        /* a run lasts until the next, or a period when the thread was not
         * sampled for longer than two: the frames it shares with the next
         * stayed on the stack and go on across the gap */
        var end = next - last <= 2 * period ? next : last + period;
        var path = paths[th.s[i]] || (paths[th.s[i]] = chartPath(th.s[i], fold, mine));
        for (k = 0; k < open.length && k < path.length && open[k].func === path[k].func && open[k].label === path[k].label; k++);
        close(k);
        for (; k < path.length; k++) open.push({ depth: k, func: path[k].func, label: path[k].label, t0: start, t1: end, samples: 0 });
        for (k = 0; k < path.length; k++) { open[k].t1 = end; open[k].samples += th.n[i]; }
        lane.samples += th.n[i];
        lane.maxDepth = Math.max(lane.maxDepth, path.length - 1);
        lane.t0 = Math.min(lane.t0, start); lane.t1 = Math.max(lane.t1, end);
      }
      close(0);
      return lane;
    });
  }

  function boxLabel(bx) {
    return bx.label || funcLabel(bx.func);
  }

  /* the last stack chart: {lanes: [[lane, top]], t0, scale, canvas, and
   * for its SVG: ticks [[x, text]], titles [[y, text]], boxes [[box, x, y, w]]} */
  var charted = null;

  /* The lanes shown: the thread picked, or every thread that has samples. */
  function shownLanes() {
    var k = $("thread").selectedIndex;
    return (k > 0 ? lanes.slice(k - 1, k) : lanes).filter(function (l) { return l.samples > 0; });
  }

  function drawChart(box) {
    var fold = $("fold").checked, mine = $("mine").checked, key = fold + 2 * mine;
    lanes = lanesBy[key] || (lanesBy[key] = readLanes(fold, mine));
    var shown = shownLanes(), W = Math.max(300, viewWidth()), tl = D.timeline;
    var t0 = Infinity, t1 = 0, H = ROW + 2;
    shown.forEach(function (l) { t0 = Math.min(t0, l.t0); t1 = Math.max(t1, l.t1); H += (l.maxDepth + 2) * ROW + 6; });
    charted = null;
    if (!shown.length) { box.appendChild(el("p", "no samples in this thread's timeline", "note")); return; }
    var c = el("canvas"), g = sized(c, W, H), scale = W / Math.max(t1 - t0, 1), boxes = 0;
    c.id = "chart";
    box.appendChild(c);
    g.font = "11px sans-serif"; g.textBaseline = "middle";
    /* the time axis: about ten ticks at round seconds, milliseconds... */
    var step = Math.max(1, Math.pow(10, Math.floor(Math.log10(Math.max(t1 - t0, 1) / 10))));
    while ((t1 - t0) / step > 12) step *= (String(step)[0] === "2" ? 2.5 : 2);
    g.fillStyle = "#666";
    var ticks = [];
    for (var at = Math.ceil(t0 / step) * step; at <= t1; at += step) {
      var ax = (at - t0) * scale, tick = step >= 1e6 ? +(at / 1e6).toPrecision(12) + " s"
        : step >= 1e3 ? +(at / 1e3).toPrecision(12) + " ms" : at + " us";
      g.fillRect(ax, ROW - 4, 1, 4);
      if (ax < W - 60) { g.fillText(tick, ax + 2, ROW / 2 - 1); ticks.push([ax, tick]); }
    }
    charted = { lanes: [], t0: t0, scale: scale, canvas: c, ticks: ticks, titles: [], boxes: [] };
    var y = ROW + 2;
    shown.forEach(function (lane) {
      g.fillStyle = "#eee"; g.fillRect(0, y, W, ROW - 1);
      g.fillStyle = "#000";
      g.fillText(lane.name + " \u00b7 " + lane.samples + " samples", 3, y + ROW / 2);
      charted.titles.push([y, lane.name + " \u00b7 " + lane.samples + " samples"]);
      charted.lanes.push([lane, y + ROW]);
      lane.rows.forEach(function (row, d) {
        var ry = y + (d + 1) * ROW, lastPx = -1;
        for (var i = 0; i < row.length; i++) {
          var bx = row[i], x = (bx.t0 - t0) * scale, w = (bx.t1 - bx.t0) * scale;
          /* frames under a pixel: one per pixel column, at most (the row's
           * frames are in time order: on to the next column's first) */
          if (w < 1 && Math.floor(x) <= lastPx) {
            var lo = i, hi = row.length, from = t0 + (lastPx + 1) / scale;
            while (lo < hi) { var mid = (lo + hi) >> 1; if (row[mid].t0 < from) lo = mid + 1; else hi = mid; }
            i = lo - 1;
            continue;
          }
          lastPx = Math.floor(x + w);
          boxes++;
          charted.boxes.push([bx, x, ry, w]);
          g.fillStyle = S.search && S.search.test(boxLabel(bx)) ? "rgb(220,40,220)" : D.funcs[bx.func][3];
          g.fillRect(x, ry, Math.max(w - 0.5, 0.5), ROW - 1);
          if (bx.func === S.select) {
            g.strokeStyle = "#000"; g.lineWidth = 2;
            g.strokeRect(x + 1, ry + 1, Math.max(w - 2.5, 1), ROW - 3);
          }
          if (w > 28) {
            var label = boxLabel(bx), fits = Math.floor((w - 6) / 6.2);
            if (label.length > fits) label = fits > 2 ? label.slice(0, fits - 2) + ".." : "";
            g.fillStyle = "#000";
            g.fillText(label, x + 3, ry + ROW / 2);
          }
        }
      });
      y += (lane.maxDepth + 2) * ROW + 6;
    });
    var runs = shown.reduce(function (a, l) { return a + l.runs; }, 0), samples = shown.reduce(function (a, l) { return a + l.samples; }, 0);
    $("found").textContent = samples + " samples in " + runs + " runs of identical stacks, " + boxes + " frames drawn" +
      (tl.cut_us ? "; the page keeps the first " + fmtValue(tl.cut_us / 1e6) + " of the timeline" : "");
    c.onmousemove = function (ev) {
      var bx = chartHit(ev), tip = $("tip");
      if (!bx) { tip.style.display = "none"; return; }
      tip.textContent = boxLabel(bx) + "\n" + funcWhere(bx.func) + "\n" + fmtValue(bx.t0 / 1e6) + " to " +
        fmtValue(bx.t1 / 1e6) + ": " + fmtValue((bx.t1 - bx.t0) / 1e6) + ", " + bx.samples + " samples";
      tip.style.display = "block";
      tip.style.left = Math.min(ev.clientX + 12, window.innerWidth - 400) + "px";
      tip.style.top = (ev.clientY + 14) + "px";
    };
    c.onmouseleave = function () { $("tip").style.display = "none"; };
    c.onclick = function (ev) {
      var bx = chartHit(ev);
      if (bx && D.edges) select(bx.func);
    };
  }

  /* The box under the mouse: its lane by height, its depth by row, the
   * box covering the time at x (a row's boxes are in time order). */
  function chartHit(ev) {
    var r = charted.canvas.getBoundingClientRect(), mx = ev.clientX - r.left, my = ev.clientY - r.top;
    var t = charted.t0 + mx / charted.scale;
    for (var k = 0; k < charted.lanes.length; k++) {
      var lane = charted.lanes[k][0], d = Math.floor((my - charted.lanes[k][1]) / ROW);
      var row = d >= 0 && lane.rows[d];
      if (!row || d > lane.maxDepth) continue;
      var lo = 0, hi = row.length - 1;
      while (lo < hi) {
        var mid = (lo + hi + 1) >> 1;
        if (row[mid].t0 <= t) lo = mid; else hi = mid - 1;
      }
      return row[lo] && row[lo].t0 <= t && t < row[lo].t1 ? row[lo] : null;
    }
    return null;
  }

  /* The header's word on the timeline, when the page or the recording
   * left part of it out. */
  function timelineNote() {
    var tl = D.timeline, parts = [];
    if (tl.cut_us) parts.push("stack chart of the first " + fmtValue(tl.cut_us / 1e6) + " of " + fmtValue(tl.end_us / 1e6) +
                              " (" + tl.kept_samples + " of " + tl.samples + " samples, in " + tl.runs +
                              " runs of identical stacks: the page keeps " + tl.runs + " runs at most)");
    if (tl.capped) parts.push("timeline full at " + tl.samples + " samples: later ones only in the totals");
    return parts.join(" \u00b7 ");
  }

  /* What a test reads: each lane shown and its boxes, in window pixels. */
  function chartFrames() {
    if (!charted) return { lanes: [] };
    var r = charted.canvas.getBoundingClientRect(), out = { t0: charted.t0, scale: charted.scale, left: r.left, lanes: [] };
    charted.lanes.forEach(function (e) {
      var lane = e[0], boxes = [];
      lane.rows.forEach(function (row, d) {
        row.forEach(function (bx) {
          boxes.push({ name: boxLabel(bx), func: bx.func, depth: d, t0: bx.t0, t1: bx.t1, samples: bx.samples,
                       x: r.left + (bx.t0 - charted.t0) * charted.scale, y: r.top + e[1] + d * ROW,
                       w: (bx.t1 - bx.t0) * charted.scale, h: ROW - 1 });
        });
      });
      out.lanes.push({ thread: lane.thread, name: lane.name, samples: lane.samples, top: r.top + e[1], boxes: boxes });
    });
    return out;
  }

  /* ---------------- lines and mem: source with bars ---------------- */

  /* A figure's bar, 150 px for the most; what the source pages (lines, mem,
   * the heatmap) draw beside each line. */
  function lineBar(value, most, cls) {
    var b = el("span", null, cls || "bar");
    b.style.width = (most ? 150 * value / most : 0) + "px";
    return b;
  }

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
      /* a loop's passes on one line (a comprehension's items), apart from its hits */
      var looped = !mem && fn.lines.some(function (l) { return l.iterations > 0; });
      (mem ? ["line", "allocated / net", "allocated", "net"].concat(reserved ? ["reserved"] : [], ["mem usage", "increment", "hits", "source"])
           : ["line", "time", "hits"].concat(looped ? ["iterations"] : [], ["time", "% time", "source"])).forEach(function (h) {
        hr.appendChild(el("th", h, h === "source" ? "src" : null));
      });
      t.appendChild(hr);
      fn.lines.forEach(function (l) {
        var row = el("tr"), bars = el("td", null, "bars");
        row.appendChild(el("td", l.line));
        bars.appendChild(lineBar(mem ? l.alloc_bytes : l.time_ns, most));
        if (mem) bars.appendChild(lineBar(l.net_bytes, most, "bar net"));
        row.appendChild(bars);
        var ran = l.hits || l.alloc_bytes || l.net_bytes || l.freed_bytes;
        if (mem) {
          [ran ? fmtBytes(l.alloc_bytes) : "", ran ? fmtBytes(l.net_bytes) : ""].concat(
           reserved ? [ran && l.reserved_bytes ? fmtBytes(l.reserved_bytes) : ""] : [],
           [l.rss_bytes ? fmtBytes(l.rss_bytes) : "", l.rss_bytes ? fmtBytes(l.rss_increment_bytes) : "",
           l.hits === null || l.hits === undefined ? "" : l.hits || ""]).forEach(function (v) { row.appendChild(el("td", v)); });
        } else {
          [l.hits || ""].concat(looped ? [l.iterations || ""] : [],
           [l.hits ? (l.time_ns / 1e6).toFixed(3) + " ms" : "",
            l.hits && fn.total_ns ? pct(l.time_ns / fn.total_ns) : ""]).forEach(function (v) { row.appendChild(el("td", v)); });
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

  /* ---------------- source heatmap: a sampled profile's lines ---------------- */

  /* Each file of the program with samples, most samples first: its
   * source, every line shaded by the share of samples with a frame there
   * (total) and bars for its own samples (self, innermost frame there) and
   * its total, as the lines page draws its figures (view_heatmap.h). */
  function drawHeatmap(box) {
    var hm = D.heatmap, filter = matcher($("filter").value), all = hm.samples || 1, left = 0, shown = 0, why = {};
    var files = hm.files.map(function (f) {
      var most = 0, self = 0;
      f.lines.forEach(function (l) { most = Math.max(most, l[2]); self += l[1]; });
      return { f: f, path: D.funcs[f.func][1], most: most, self: self };
    }).sort(function (a, b) { return b.most - a.most; });
    files.forEach(function (entry) {
      var f = entry.f, by = {};
      if (!f.source) { left++; why[f.left_out] = (why[f.left_out] || 0) + 1; return; }
      if (filter && !filter.test(entry.path)) return;
      shown++;
      f.lines.forEach(function (l) { by[l[0]] = l; });
      box.appendChild(el("div", entry.path + "  (its lines innermost in " + pct(entry.self / all) + " of the samples, on the stack in " +
                         pct(entry.most / all) + " at its busiest line)", "fn"));
      var t = el("table", null, "heat"), hr = el("tr");
      ["line", "self / total", "self", "self %", "total", "total %", "source"].forEach(function (h) {
        hr.appendChild(el("th", h, h === "source" ? "src" : null));
      });
      t.appendChild(hr);
      f.source.forEach(function (text, k) {
        var l = by[k + 1], row = el("tr"), bars = el("td", null, "bars");
        row.appendChild(el("td", k + 1));
        bars.appendChild(lineBar(l ? l[1] : 0, entry.most));
        bars.appendChild(lineBar(l ? l[2] : 0, entry.most, "bar net"));
        row.appendChild(bars);
        [l ? l[1] : "", l ? pct(l[1] / all) : "", l ? l[2] : "", l ? pct(l[2] / all) : ""].forEach(function (v) {
          row.appendChild(el("td", v));
        });
        row.appendChild(el("td", text, "src"));
        if (l) {
          row.dataset.line = k + 1;
          row.style.background = "rgba(232,116,59," + (0.45 * l[2] / (entry.most || 1)).toFixed(3) + ")";
        }
        t.appendChild(row);
      });
      box.appendChild(t);
    });
    /* why each file left out was (view_heatmap.h), counted */
    box.appendChild(el("p", left ? left + " files with samples are not shown: " + Object.keys(why).map(function (w) {
      return why[w] + " " + (w === "too large" ? "over " + fmtBytes(hm.max_bytes) : w === "library" ?
        "in the interpreter's library or site-packages (sonde view --site-packages draws site-packages' files)" : w);
    }).join(", ") : "", "note"));
    $("found").textContent = shown + (shown === 1 ? " file" : " files");
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
    sandwich: ["sandwich", drawSandwich],
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
                : ["flame", "icicle", "sunburst", "sandwich", "table"];
  if (D.timeline) { views.chart = ["stack chart", drawChart]; available.splice(available.indexOf("sandwich"), 0, "chart"); }
  if (D.heatmap) { views.heatmap = ["source heatmap", drawHeatmap]; available.splice(available.indexOf("sandwich"), 0, "heatmap"); }

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
      S.cursor = i;
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
      var s = el("span", nodeLabel(a));
      s.onclick = function () { S.zoom = a; render(); };
      box.appendChild(s);
    });
  }

  function searchSummary() {
    if (!T || !S.search || ["flame", "icicle", "sunburst"].indexOf(S.view) < 0) return;
    var count = 0, share = 0, stack = [[0, false]];
    while (stack.length) {
      var top = stack.pop(), i = top[0], inside = top[1];
      var m = i > 0 && S.search.test(nodeLabel(i));
      if (m) count++;
      if (m && !inside) share += T.total[i];
      for (var c = T.first[i]; c >= 0; c = T.next[c]) stack.push([c, inside || m]);
    }
    $("found").textContent = "matching frames: " + count + ", " + pct(share / (T.total[0] || 1)) + " of the total";
  }

  var PICTURES = ["flame", "icicle", "sunburst"];

  function render() {
    var began = performance.now(), box = $("view");
    box.textContent = "";
    $("found").textContent = "";
    Array.prototype.forEach.call(document.querySelectorAll("nav button"), function (b) {
      b.className = b.dataset.view === S.view ? "on" : "";
    });
    crumbs();
    var high = box.clientHeight;
    views[S.view][1](box);
    searchSummary();
    if (T && T.n === 1 && $("mine").checked) $("found").textContent = "no frame of the program's own files";
    $("savesvg").style.display = PICTURES.indexOf(S.view) >= 0 || S.view === "chart" ? "" : "none";
    $("status").textContent = "drawn: " + S.view +
      (PICTURES.indexOf(S.view) >= 0 ? ", " + drawn.length + " frames" : "") +
      ((S.view === "flame" || S.view === "icicle") && levelsCut ?
        " (the " + levelsCut + " deepest levels not drawn: more than a picture holds)" : "") +
      " in " + Math.round(performance.now() - began) + " ms";
    /* the bar's new text can take the sunburst's room: once more in the room left */
    if (S.view === "sunburst" && box.clientHeight < high) {
      box.textContent = "";
      views[S.view][1](box);
    }
    /* a flame graph's root is at its bottom: open it there */
    box.scrollTop = S.view === "flame" ? box.scrollHeight : 0;
  }

  /* text cut to most characters with an ellipsis */
  function cut(text, most) {
    return text.length > most ? text.slice(0, most - 1) + "\u2026" : text;
  }

  /* A command line as a shell takes it: arguments quoted when they need it. */
  function shellLine(argv) {
    return argv.map(function (a) {
      return /^[A-Za-z0-9_\/.=:,+@%-]+$/.test(a) ? a : "'" + a.replace(/'/g, "'\\''") + "'";
    }).join(" ");
  }

  /* What the file says of the run ("about" in sonde's JSON), as header
   * parts: [text, tooltip, name] each; the command line cut and the
   * verdict's headline ("CPU-bound"), each whole in its tooltip. */
  function runParts(run) {
    var parts = [];
    if (!run) return parts;
    if (run.argv && run.argv.length) {
      var line = shellLine(run.argv);
      parts.push([cut(line, 60), line, "command"]);
    }
    if (run.executable || run.python_version) {
      var v = run.python_version ? "Python " + run.python_version.split(" ")[0] : "Python";
      parts.push([v + (run.executable ? " (" + cut(run.executable, 40) + ")" : ""),
                  [run.executable, run.python_version].filter(Boolean).join("\n"), "interpreter"]);
    }
    if (run.start) parts.push(["started " + run.start.replace("T", " ").replace(/\.\d+Z$/, " UTC"), run.start, "start"]);
    var times = [];
    if (run.wall_s !== undefined) times.push("wall " + fmtValue(run.wall_s));
    if (run.cpu_s !== undefined) times.push("CPU " + fmtValue(run.cpu_s));
    if (times.length) parts.push([times.join(", "), null, "times"]);
    if (run.processes > 1) parts.push([run.processes + " processes", null, "processes"]);
    if (run.verdict) parts.push([cut(run.verdict.split(":")[0], 40), run.verdict, "verdict"]);
    return parts;
  }

  /* The header's line: what was profiled and how (the file's "about"),
   * how the profile was taken, and how much it holds. */
  function about() {
    var parts = [], a = D.about, doc = D.doc, run = a ? a.run : doc && doc.about;
    if (D.before_run) {
      /* a diff: each side's command and start */
      [["before", D.before_run], ["after", run]].forEach(function (side) {
        var r = side[1] || {}, line = r.argv && r.argv.length ? shellLine(r.argv) : "";
        var text = side[0] + ": " + (line ? cut(line, 40) : "(command not recorded)") +
                   (r.start ? ", started " + r.start.replace("T", " ").replace(/\.\d+Z$/, " UTC") : "");
        parts.push([text, line || null, side[0]]);
      });
    } else {
      parts = runParts(run);
    }
    if (a) {
      var all = Math.max(D.tree[0][2], R.total[0]); /* every thread's */
      parts.push(a.rate > 0 ? "sampled at " + a.rate + " Hz, " +
                 Math.round(all * a.rate) + " samples" : "deterministic (every call)");
      parts.push((a.rate > 0 ? "" : "total ") + fmtValue(all) + (a.rate > 0 ? " sampled" : ""));
      if (a.threads.length) parts.push(a.threads.length === 1 ? "thread " + a.threads[0]
                                       : a.threads.length + " threads");
      if (a.pid) parts.push("process " + a.pid);
      if (!D.exact_tree) parts.push("call tree rebuilt from callers (pstats)");
      if (D.timeline && timelineNote()) parts.push(timelineNote());
    } else if (doc) {
      parts.push(D.kind === "lines" ? "lines: every line's time" : "memory" +
                 (doc.sample_bytes ? ", allocations sampled every " + fmtBytes(doc.sample_bytes) : ", every allocation followed") +
                 (doc.native ? ", C allocations included" : ""));
      if (doc.heap_peak_bytes) parts.push("heap peak " + fmtBytes(doc.heap_peak_bytes));
      if (doc.rss_high_water_bytes) parts.push("RSS high water " + fmtBytes(doc.rss_high_water_bytes));
      parts.push(doc.functions.length + " functions");
    }
    if (D.changes && D.changes.length) {
      var c = D.changes[0];
      parts.push("biggest change: " + c[0].replace(/^[^(]*[\/\\]/, "") + " " + (c[2] >= c[1] ? "+" : "") + fmtValue(c[2] - c[1]));
    }
    var box = $("about");
    box.textContent = "";
    parts.forEach(function (part, k) {
      if (k) box.appendChild(document.createTextNode(" \u00b7 "));
      if (typeof part === "string") { box.appendChild(document.createTextNode(part)); return; }
      var span = el("span", part[0]);
      if (part[1]) span.title = part[1];
      span.dataset.part = part[2];
      box.appendChild(span);
    });
  }

  /* ---------------- keyboard ---------------- */

  /* The drawn child of i with the largest total, or -1. */
  function widestChild(i) {
    var best = -1;
    for (var c = T.first[i]; c >= 0; c = T.next[c])
      if (best < 0 || T.total[c] > T.total[best]) best = c;
    return best;
  }

  function sibling(i, step) {
    var p = T.parent[i];
    if (p < 0) return -1;
    var prev = -1;
    for (var c = T.first[p]; c >= 0; c = T.next[c]) {
      if (step > 0 && c === i) return T.next[c];
      if (step < 0 && c === i) return prev;
      prev = c;
    }
    return -1;
  }

  /* Arrows move the cursor (towards the callees: down in the icicle and
   * the sunburst, up in the flame graph; left and right: siblings), Enter
   * zooms on it, Escape zooms out a level, "/" goes to the search box. */
  function key(ev) {
    var t = ev.target && ev.target.tagName;
    if (t === "INPUT") { if (ev.key === "Escape") ev.target.blur(); return; }
    if (ev.key === "/") { ev.preventDefault(); $("search").focus(); return; }
    if (!T || PICTURES.indexOf(S.view) < 0) return;
    var deeper = S.view === "flame" ? "ArrowUp" : "ArrowDown";
    var shallower = S.view === "flame" ? "ArrowDown" : "ArrowUp", to = -2;
    if (ev.key === deeper) to = widestChild(S.cursor);
    else if (ev.key === shallower) to = T.parent[S.cursor];
    else if (ev.key === "ArrowRight") to = sibling(S.cursor, 1);
    else if (ev.key === "ArrowLeft") to = sibling(S.cursor, -1);
    else if (ev.key === "Enter") { S.zoom = S.cursor; render(); }
    else if (ev.key === "Escape") { S.zoom = Math.max(T.parent[S.zoom], 0); render(); }
    else return;
    ev.preventDefault();
    if (to < 0) return;
    S.cursor = to;
    if (T.func[to] >= 0 && D.edges) select(T.func[to]); else render();
  }

  /* ---------------- the picture as SVG ---------------- */

  /* text as XML 1.0 character data: markup escaped, and the characters
   * XML 1.0 forbids even escaped (the C0 controls but tab, line feed and
   * carriage return; U+FFFE, U+FFFF), which a name read from a program
   * may hold, written out as \xNN or \uNNNN. */
  function xmlText(text) {
    return String(text).replace(/&/g, "&amp;").replace(/[<]/g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;")
      .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, function (c) {
        var code = c.charCodeAt(0);
        return code < 0x100 ? "\\x" + (code < 16 ? "0" : "") + code.toString(16) : "\\u" + code.toString(16);
      });
  }

  /* One frame as an SVG group: its rectangle, its hover text as a title,
   * its label where the picture has one. */
  function svgFrame(x, y, w, fill, tip, label) {
    var fits = Math.floor((w - 6) / 6.2);
    if (label.length > fits) label = fits > 2 ? label.slice(0, fits - 2) + ".." : "";
    return '<g><rect x="' + x.toFixed(2) + '" y="' + y + '" width="' + Math.max(w - 0.5, 0.5).toFixed(2) +
      '" height="' + (ROW - 1) + '" fill="' + fill + '"><title>' + xmlText(tip) + "<\/title><\/rect>" +
      (w > 28 && label ? '<text x="' + (x + 3).toFixed(2) + '" y="' + (y + ROW / 2 + 4) + '">' +
       xmlText(label) + "<\/text>" : "") + "<\/g>";
  }

  /* The stack chart as it is drawn: the time axis's labels, each lane's
   * title and each box drawn (those under a pixel that the drawing left
   * out are left out here too). */
  function chartSvg(out) {
    charted.ticks.forEach(function (t) {
      out.push('<text x="' + (t[0] + 2).toFixed(2) + '" y="' + (ROW / 2 + 3) + '" fill="#666">' + xmlText(t[1]) + "<\/text>");
    });
    charted.titles.forEach(function (t) {
      out.push('<rect x="0" y="' + t[0] + '" width="100%" height="' + (ROW - 1) + '" fill="#eee"/>');
      out.push('<text x="3" y="' + (t[0] + ROW / 2 + 4) + '">' + xmlText(t[1]) + "<\/text>");
    });
    charted.boxes.forEach(function (b) {
      var bx = b[0];
      out.push(svgFrame(b[1], b[2], b[3], D.funcs[bx.func][3], boxLabel(bx) + "\n" + funcWhere(bx.func) +
                        "\n" + fmtValue((bx.t1 - bx.t0) / 1e6) + ", " + bx.samples + " samples", boxLabel(bx)));
    });
  }

  /* What the canvas shows, frame for frame, as an SVG document. */
  function pictureSvg() {
    var c = $("chart"), W = parseFloat(c.style.width), H = parseFloat(c.style.height);
    var out = ['<svg xmlns="http://www.w3.org/2000/svg" width="' + W + '" height="' + H +
               '" font-family="sans-serif" font-size="11">'];
    if (S.view === "chart" && charted) {
      chartSvg(out);
      out.push("<\/svg>\n");
      return out.join("\n");
    }
    drawn.forEach(function (f) {
      var i = f[0], title = "<title>" + xmlText(tipText(i)) + "<\/title>", shape;
      if (c.sunburst) {
        var sb = c.sunburst, r0 = f[3] * sb.ring, r1 = r0 + sb.ring, a0 = f[1], a1 = f[2];
        var big = a1 - a0 > Math.PI ? 1 : 0, p = function (r, a) {
          return (sb.cx + r * Math.cos(a)).toFixed(2) + " " + (sb.cy + r * Math.sin(a)).toFixed(2);
        };
        shape = f[3] === 0 ? '<circle cx="' + sb.cx + '" cy="' + sb.cy + '" r="' + sb.ring + '"'
          : a1 - a0 >= 2 * Math.PI - 1e-9
          ? '<path fill-rule="evenodd" d="M' + p(r1, 0) + "A" + r1 + " " + r1 + " 0 1 1 " + p(r1, Math.PI) +
            "A" + r1 + " " + r1 + " 0 1 1 " + p(r1, 0) + "ZM" + p(r0, 0) + "A" + r0 + " " + r0 + " 0 1 1 " +
            p(r0, Math.PI) + "A" + r0 + " " + r0 + " 0 1 1 " + p(r0, 0) + 'Z"'
          : '<path d="M' + p(r1, a0) + "A" + r1 + " " + r1 + " 0 " + big + " 1 " + p(r1, a1) + "L" + p(r0, a1) +
            "A" + r0 + " " + r0 + " 0 " + big + " 0 " + p(r0, a0) + 'Z"';
        out.push("<g>" + shape + ' fill="' + colour(i) + '" stroke="#fff">' + title +
                 (shape[1] === "c" ? "<\/circle>" : "<\/path>") + "<\/g>");
        return;
      }
      out.push(svgFrame(f[1], f[2], f[3], colour(i), tipText(i), nodeLabel(i)));
    });
    out.push("<\/svg>\n");
    return out.join("\n");
  }

  function saveSvg() {
    var a = el("a");
    /* a blob: address, made here: nothing is requested */
    a.setAttribute("href", URL.createObjectURL(new Blob([pictureSvg()], { type: "image/svg+xml" })));
    a.download = (D.title.replace(/^.*[\/\\]/, "").replace(/\.[^.]*$/, "") || "sonde") + "-" + S.view + ".svg";
    document.body.appendChild(a);
    a.click();
    a.remove();
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
    if (D.tree) {
      /* the thread selector: all threads merged, or one */
      var threads = D.thread_trees || [], pick = $("thread");
      pick.appendChild(el("option", "all " + threads.length + " merged"));
      threads.forEach(function (t, k) { pick.appendChild(el("option", t.name || "thread " + (k + 1))); });
      pick.selectedIndex = Math.min(hashCount(hash.thread, threads.length), threads.length);
      if (!threads.length) pick.parentNode.style.display = "none";
      $("fold").checked = hash.fold !== "0";
      $("mine").checked = hash.mine === "1";
      /* the process selector: all processes merged, or one (merged files) */
      var procs = D.base ? [] : processFrames(D.tree), ppick = $("process");
      ppick.appendChild(el("option", "all " + procs.length + " merged"));
      procs.forEach(function (f) { ppick.appendChild(el("option", D.funcs[f][0])); });
      ppick.selectedIndex = Math.min(hashCount(hash.process, procs.length), procs.length);
      if (procs.length < 2) ppick.parentNode.style.display = "none";
      /* the weight: CPU time, or (--torch with a GPU) the kernels' GPU time */
      var weight = $("weight");
      if (!D.gpu_tree) weight.parentNode.style.display = "none";
      else weight.selectedIndex = hash.weight === "gpu" ? 1 : 0;
      var which = function () {
        return (((weight.selectedIndex * (threads.length + 1) + pick.selectedIndex) *
                 (procs.length + 1) + ppick.selectedIndex) * 4 +
                $("fold").checked + 2 * $("mine").checked);
      };
      var choose = function () {
        /* each tree built once, kept for the next toggle */
        var k = pick.selectedIndex, gpu = weight.selectedIndex === 1 && D.gpu_tree;
        var w = (gpu ? threads.length + 1 + k : k) + ":" + ppick.selectedIndex;
        var rows = gpu ? (k ? D.gpu_thread_trees[k - 1].tree : D.gpu_tree)
                       : (k ? threads[k - 1].tree : D.tree);
        if (ppick.selectedIndex) rows = processRows(rows, procs[ppick.selectedIndex - 1]);
        R = raws[w] || (readTree(rows), raws[w] = R);
        T = trees[which()] || (buildTree($("fold").checked, $("mine").checked), trees[which()] = T);
      };
      choose();
      $("fold").onchange = $("mine").onchange = pick.onchange = weight.onchange =
      ppick.onchange = function () {
        choose();
        S.zoom = 0; S.cursor = 0;
        render();
      };
    } else {
      ["fold", "mine", "process", "thread", "weight"].forEach(function (id) { $(id).parentNode.style.display = "none"; });
      /* merged lines or mem files: all processes' lines summed, or one's */
      var docParts = (D.doc && D.doc.parts) || [], summed = D.doc && D.doc.functions, dpick = $("process");
      if (docParts.length > 1) {
        dpick.parentNode.style.display = "";
        dpick.appendChild(el("option", "all " + docParts.length + " merged"));
        docParts.forEach(function (p) { dpick.appendChild(el("option", p.process + " \u00b7 " + p.file)); });
        dpick.onchange = function () {
          var k = dpick.selectedIndex;
          D.doc.functions = k ? docParts[k - 1].functions : summed;
          render();
        };
        dpick.selectedIndex = Math.min(hashCount(hash.process, docParts.length), docParts.length);
        if (dpick.selectedIndex) D.doc.functions = docParts[dpick.selectedIndex - 1].functions;
      }
    }
    about();
    S.view = available.indexOf(hash.view) >= 0 ? hash.view : available[0];
    S.depth = hashCount(hash.depth, T ? T.maxDepth : 0);
    S.cutoff = Math.min(Math.max(Number(hash.cutoff) || 0, 0), 100);
    $("depth").value = S.depth; $("cutoff").value = S.cutoff;
    $("search").value = hash.search || "";
    S.search = matcher(hash.search || "");
    if (T && hash.zoom) S.zoom = S.cursor = Math.max(findNode(hash.zoom), 0);
    $("search").oninput = function () { S.search = matcher(this.value); render(); };
    $("filter").oninput = function () { render(); };
    $("depth").oninput = function () { S.depth = hashCount(this.value, T ? T.maxDepth : 0); render(); };
    $("cutoff").oninput = function () { S.cutoff = Math.min(Math.max(Number(this.value) || 0, 0), 100); render(); };
    $("savesvg").onclick = saveSvg;
    document.addEventListener("keydown", key);
    window.addEventListener("resize", function () { render(); });
    if (!T) ["search", "depth", "cutoff"].forEach(function (id) { $(id).parentNode.style.display = "none"; });
    if (!D.stats && D.kind !== "diff") $("filter").parentNode.style.display = D.doc ? "" : "none";
    if (T && hash.select) {
      var n = findNode(hash.select);
      if (n > 0) { S.cursor = n; select(T.func[n]); }
    }
    render();
    act();
  }

  /* The fragment's user actions, through the same handlers as a user's. */
  function act() {
    if (hash.click && T) {
      var re = matcher(hash.click), best = null;
      drawn.forEach(function (f) {
        if (re.test(nodeLabel(f[0])) && (!best || f[3] > best[3])) best = f;
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

  /* What a test reads: the frames drawn, where they are in the window. */
  window.sondeView = {
    sandwich: function () {
      return sandwiched.map(function (e) {
        var r = e[6].getBoundingClientRect();
        return { name: funcLabel(e[0].func), func: e[0].func, total: e[0].total, part: e[1], level: e[2],
                 x: r.left + e[3], y: r.top + e[4], w: e[5], h: ROW - 1 };
      });
    },
    frames: function () {
      var c = $("chart"), r = c ? c.getBoundingClientRect() : null;
      return drawn.map(function (f) {
        var out = { name: nodeLabel(f[0]), func: T.func[f[0]], total: T.total[f[0]], self: T.self[f[0]] };
        if (!c.sunburst) { out.x = r.left + f[1]; out.y = r.top + f[2]; out.w = f[3]; out.h = ROW - 1; }
        else {
          var sb = c.sunburst, rad = (f[3] + 1) * sb.ring;
          out.x = r.left + sb.cx - rad; out.y = r.top + sb.cy - rad; out.w = out.h = 2 * rad;
        }
        return out;
      });
    }
  };

  window.sondeView.chart = chartFrames;

  start();
})();
