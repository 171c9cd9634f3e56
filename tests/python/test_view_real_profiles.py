"""sonde view's page drawn from real programs' profiles (pytest's,
networkx's, a torch CNN's): no two sunburst labels share any area, the
import machinery under `import torch` folds into one frame, the sandwich's
frames answer the mouse through one hit test, and the sandwich without a
selection shows a function the flame graph draws."""

import json
import os
import sys

import pytest

from conftest import ROOT, run_sonde
from pages import browser, open_page, page_data, view  # noqa: F401

# Every fillText of the page's canvases, with the corners of its box in
# CSS pixels of the window (the whole transform applied, the font's
# measured extent): what the picture shows, read independently of the
# page's own bookkeeping.
RECORD_TEXT = """
window.__texts = [];
(function () {
  var fill = CanvasRenderingContext2D.prototype.fillText;
  CanvasRenderingContext2D.prototype.fillText = function (text, x, y) {
    var m = this.getTransform(), t = this.measureText(text), dpr = window.devicePixelRatio || 1;
    var left = this.textAlign === "center" ? x - t.width / 2 : this.textAlign === "right" ||
               this.textAlign === "end" ? x - t.width : x;
    var top = y - t.actualBoundingBoxAscent, bottom = y + t.actualBoundingBoxDescent;
    var r = this.canvas.getBoundingClientRect();
    var corner = function (u, v) {
      return [r.left + (m.a * u + m.c * v + m.e) / dpr, r.top + (m.b * u + m.d * v + m.f) / dpr];
    };
    window.__texts.push({canvas: this.canvas, text: String(text),
      corners: [corner(left, top), corner(left + t.width, top),
                corner(left + t.width, bottom), corner(left, bottom)]});
    return fill.apply(this, arguments);
  };
})();
"""


def labels_drawn(browser, page, fragment, size):
    """The texts drawn on the picture shown (#chart), with their boxes."""
    tab = browser.new_page(viewport={"width": size[0], "height": size[1]})
    tab.add_init_script(RECORD_TEXT)
    tab.goto("file://%s#%s" % (os.path.abspath(str(page)), fragment))
    tab.wait_for_selector("#status:not(:empty)")
    texts = tab.evaluate("window.__texts.filter(function (t) {"
                         " return t.canvas === document.getElementById('chart'); })"
                         ".map(function (t) { return [t.text, t.corners]; })")
    tab.close()
    return texts


def separated(a, b):
    """Whether two convex polygons (corner lists) share no more than a
    hair (0.5 px) of depth along some edge's normal: the separating axis
    theorem."""
    for poly in (a, b):
        for i in range(len(poly)):
            (x0, y0), (x1, y1) = poly[i], poly[(i + 1) % len(poly)]
            nx, ny = y0 - y1, x1 - x0
            norm = (nx * nx + ny * ny) ** 0.5 or 1
            pa = [(x * nx + y * ny) / norm for x, y in a]
            pb = [(x * nx + y * ny) / norm for x, y in b]
            if min(max(pa), max(pb)) - max(min(pa), min(pb)) <= 0.5:
                return True
    return False


def overlapping(texts):
    """Pairs of drawn texts whose boxes overlap."""
    return [(a[0], b[0]) for i, a in enumerate(texts) for b in texts[i + 1:]
            if not separated(a[1], b[1])]


@pytest.fixture(scope="module")
def real_pages(tmp_path_factory):
    """Pages of real programs nobody here wrote: pytest running a small
    test file, networkx's shortest paths, as sonde run -f json has them."""
    tmp = tmp_path_factory.mktemp("fixes")
    real = "/work/wt/realvenv/bin/python"
    python = real if os.path.exists(real) else sys.executable
    (tmp / "test_small.py").write_text(
        "import json\n\n"
        "def test_round_trip():\n"
        "    for n in range(200):\n"
        "        assert json.loads(json.dumps(list(range(n)))) == list(range(n))\n")
    runs = {"pytest.json": ["-m", "pytest", "-q", "-p", "no:cacheprovider", "test_small.py"]}
    probe = run_sonde(["run", "-c", "import networkx"], tmp, python=python)
    if probe.returncode == 0:
        runs["networkx.json"] = ["-c", "import networkx as nx\n"
                                 "g = nx.grid_2d_graph(30, 30)\n"
                                 "nx.all_pairs_shortest_path_length(g)\n"
                                 "print(sum(len(d) for _, d in nx.all_pairs_shortest_path_length(g)))"]
    pages = {}
    for name, args in runs.items():
        proc = run_sonde(["run", "-f", "json", "-o", name] + args, tmp, python=python)
        if proc.returncode != 0 and "pytest" in name and "No module named pytest" in proc.stderr:
            continue
        assert proc.returncode == 0, proc.stderr
        pages[name] = view(tmp, name)
    return pages


@pytest.mark.parametrize("size", [(1280, 800), (1920, 1080)])
def test_sunburst_labels_never_overlap(browser, real_pages, size):
    """On real profiles, at both window sizes, with 10 rings and 20
    unfolded, no two labels drawn on the sunburst share any area (each
    text's box as the browser measures and transforms it), and labels are
    drawn where rings have room."""
    assert real_pages
    for name, page in real_pages.items():
        for fragment in ("view=sunburst", "view=sunburst&depth=20&fold=0"):
            texts = labels_drawn(browser, page, fragment, size)
            # 21 rings in 800 pixels are too thin for a label: none is drawn
            assert len(texts) >= 5 or "depth=20" in fragment, (name, fragment, size)
            assert overlapping(texts) == [], (name, fragment, size)


torch = None
try:
    import torch  # noqa: F811
except ImportError:
    pass


@pytest.mark.skipif(torch is None, reason="torch is not installed in the test environment "
                    "(make test installs torch==2.13.0 for Python 3.11)")
def test_torch_import_folds(browser, tmp_path):
    """sonde run --torch of the CNN example (torch's import is most of its
    time): folded, `import torch` is one frame as wide as the import
    machinery's outermost frame under the script's <module> in the JSON,
    and no machinery frame nor sonde's own loader (_Loader.exec_module,
    TorchImportHook.find_spec) is drawn."""
    proc = run_sonde(["run", "--torch", "-f", "json", "-o", "cnn.json",
                      os.path.join(ROOT, "examples", "torch_cnn.py"), "2"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((tmp_path / "cnn.json").read_text())
    funcs, nodes = doc["functions"], doc["nodes"]
    script = [i for i, n in enumerate(nodes) if n[0] >= 0 and funcs[n[0]]["name"] == "<module>"
              and funcs[n[0]]["file"].endswith("torch_cnn.py")]
    loads = [n for n in nodes if n[1] in script and
             funcs[n[0]]["file"].startswith("<frozen importlib._bootstrap")]
    torch_load = max(loads, key=lambda n: n[3])
    page = view(tmp_path, "cnn.json")
    tab = open_page(browser, page, "view=icicle", (1920, 1080))
    frames = tab.evaluate("window.sondeView.frames()")
    tab.close()
    imports = [f for f in frames if f["name"] == "import torch"]
    assert len(imports) == 1 and abs(imports[0]["total"] - torch_load[3]) <= 1e-9
    data = page_data(page)
    file_of = lambda f: data["funcs"][f["func"]][1] if f["func"] >= 0 else ""
    ours = [(f["name"], file_of(f)) for f in frames
            if file_of(f).endswith((os.path.join("sonde", "_torch.py"),
                                    os.path.join("sonde", "_launch.py")))]
    assert ours == []
    # the machinery folds into its outermost frame: none drawn right under another
    machinery = [f for f in frames if file_of(f).startswith("<frozen importlib._bootstrap")]
    nested = [(f["name"], g["name"]) for f in machinery for g in machinery
              if abs(g["y"] - (f["y"] - f["h"] - 1)) < 0.5 and g["x"] <= f["x"] + 0.01 and
              f["x"] + f["w"] <= g["x"] + g["w"] + 0.01]
    assert nested == []


def test_sandwich_hover_and_click_name_the_same_frame(browser, tmp_path):
    """In the sandwich, the frame the mouse is over is the one its tooltip
    names and the one a click selects (one hit test for both)."""
    (tmp_path / "prog.py").write_text(
        "import json\n\n"
        "def encode(n):\n    return json.dumps(list(range(n)))\n\n"
        "def main():\n    for _ in range(300):\n        encode(500)\n\n"
        "main()\n")
    proc = run_sonde(["run", "-f", "json", "-o", "p.json", "prog.py"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    tab = open_page(browser, view(tmp_path, "p.json"), "view=sandwich&select=^main$")
    frames = [f for f in tab.evaluate("window.sondeView.sandwich()")
              if f["part"] == "callees" and f["level"] == 1 and f["w"] > 20]
    assert frames
    target = frames[0]
    x, y = target["x"] + target["w"] / 2, target["y"] + target["h"] / 2
    tab.mouse.move(x, y)
    tip = tab.evaluate("document.getElementById('tip').textContent")
    assert tip.split("\n")[0] == target["name"]
    tab.mouse.click(x, y)
    assert tab.evaluate("document.querySelector('#side h2').textContent") == target["name"]
    tab.close()


def test_sandwich_without_a_selection_shows_a_function_drawn(browser, tmp_path):
    """Without a selection the sandwich shows the function with the most own
    time among the frames drawn.  Before, it took the busiest of all, which
    here is the import machinery's _call_with_frames_removed (it calls
    compile() on a large module), folded away by fold imports: a sandwich
    "merged over 0 call paths" with nothing in it."""
    big = "".join("v%d = %d * 2\n" % (i, i) for i in range(40000))
    (tmp_path / "bigmod.py").write_text(big)
    (tmp_path / "prog.py").write_text("import sys\nsys.dont_write_bytecode = True\n"
                                      "import bigmod\n")
    proc = run_sonde(["record", "-r", "500", "-f", "json", "-o", "p.json", "--", sys.executable,
                      "prog.py"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    data = page_data(view(tmp_path, "p.json"))
    busiest = max(data["stats"], key=lambda row: row[3])
    assert data["funcs"][busiest[0]][0] == "_call_with_frames_removed", busiest  # folded
    tab = open_page(browser, tmp_path / "p.html", "view=sandwich")
    frames = tab.evaluate("window.sondeView.sandwich()")
    title = tab.evaluate("document.querySelector('#view .fn').textContent")
    assert frames and "merged over 0 call paths" not in title, title
    # the busiest function drawn, not the machinery that the folded
    # "import bigmod" frame holds
    # (by index: a name such as <module> is in many files, the machinery's too)
    chosen = {f["func"] for f in frames if f["part"] == "callees" and f["level"] == 0}
    assert len(chosen) == 1, frames
    name, path = data["funcs"][chosen.pop()][:2]
    assert title.startswith("callers of " + name), (title, name)
    assert not path.startswith("<frozen importlib"), (name, path)
    tab.close()
