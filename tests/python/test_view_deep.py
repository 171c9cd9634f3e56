"""sonde view on very deep profiles (issue 23, item 8): the source
heatmap's totals were quadratic in depth (each frame walked all its
ancestors: a 300,000-deep chain took minutes), and the page's sandwich
merged and drew its trees by recursion, so a 4,000-deep recursion ended
in "Maximum call stack size exceeded" and an empty panel.  Each profile
here is written as sonde's JSON with a fixed shape, its expected figures
worked out independently in the test; the timeouts only guard against a
hang."""

import json
import random
import sys

from conftest import run_sonde
from pages import browser, page_data  # noqa: F401

HANG_GUARD_S = 60


def profile_doc(functions, threads, nodes, cwd):
    """A sampled profile (1 sample a second: samples and seconds agree)."""
    return {"sonde": 1, "mode": "run", "unit": "seconds", "sample_rate": 1,
            "about": {"argv": [sys.executable, "main.py"], "cwd": str(cwd)},
            "functions": [{"name": name, "qualname": name, "file": file, "line": 1,
                           "kind": "python"} for name, file in functions],
            "threads": [{"ident": k + 1, "native_id": k + 1, "name": "T%d" % k, "root": root}
                        for k, root in enumerate(threads)],
            "nodes": nodes}


class Tree:
    """Nodes as sonde's JSON lists them, [func, parent, calls, total,
    self, line], parents first; node 0 unused, each thread's root without
    a function.  Totals are summed from the selves when done."""

    def __init__(self):
        self.nodes = [[-1, 0, 0, 0, 0]]

    def add(self, func, parent, self_samples, line):
        self.nodes.append([func, parent, 0, 0, self_samples, line])
        return len(self.nodes) - 1

    def root(self):
        return self.add(-1, 0, 0, 0)

    def finish(self):
        for i in range(len(self.nodes) - 1, 0, -1):
            n = self.nodes[i]
            n[3] += n[4]
            if n[0] >= 0:
                self.nodes[n[1]][3] += n[3]
        for n in self.nodes:
            if n[0] < 0:
                del n[5:]
        return self.nodes


def add_cell(out, key, self_samples, total):
    cell = out.setdefault(key, [0, 0])
    cell[0] += self_samples
    cell[1] += total


def expected_chain(nodes, files, chain):
    """(file, line) -> [self, total] of the frames chain (a path from a
    root down): every frame's self, and the total of each line's outermost
    frame only (all its other frames lie under it)."""
    out = {}
    for i in chain:
        key = (files[nodes[i][0]], nodes[i][5])
        add_cell(out, key, nodes[i][4], 0 if key in out else nodes[i][3])
    return out


def expected_tree(nodes, files, members):
    """The same for frames anywhere in a (small) tree, by walking each
    one's ancestors: its total counts unless one above it, up to its
    thread's root, is at the same file and line."""
    out = {}
    for i in members:
        key, a, repeated = (files[nodes[i][0]], nodes[i][5]), nodes[i][1], False
        while nodes[a][0] >= 0:
            repeated = repeated or (files[nodes[a][0]], nodes[a][5]) == key
            a = nodes[a][1]
        if nodes[i][3]:
            add_cell(out, key, nodes[i][4], 0 if repeated else nodes[i][3])
    return out


def test_heatmap_of_a_300000_deep_chain(tmp_path):
    """A 300,000-frame chain (each frame on a line of its own, then a
    recursion alternating two files on three lines) in one thread, and a
    small branching tree with repeated lines in another: every line's self
    and total as worked out here, in well under the hang guard (the old
    walk took minutes)."""
    functions = [("chain", "main.py"), ("even", "rec_a.py"), ("odd", "rec_b.py"),
                 ("leaf", "branch.py"), ("mid", "branch.py")]
    files = [f for _, f in functions]
    t = Tree()
    depth, recursion = 300000, 3000
    roots = [t.root()]
    chain, at = [], roots[0]
    for d in range(depth):
        func, line = (0, d + 1) if d < depth - recursion else (1 + d % 2, 10 + d % 3)
        at = t.add(func, at, 1, line)
        chain.append(at)
    # a seeded random tree whose lines repeat along its paths
    rng = random.Random(23)
    roots.append(t.root())
    branchy = [roots[1]]
    for _ in range(400):
        parent = rng.choice(branchy)
        branchy.append(t.add(rng.choice((3, 4)), parent, rng.randrange(0, 4),
                             rng.randrange(1, 6)))
    nodes = t.finish()
    want = expected_chain(nodes, files, chain)
    want.update(expected_tree(nodes, files, branchy[1:]))  # files of their own
    (tmp_path / "deep.json").write_text(json.dumps(profile_doc(functions, roots, nodes,
                                                               tmp_path)))
    proc = run_sonde(["view", "deep.json"], tmp_path, timeout=HANG_GUARD_S)
    assert proc.returncode == 0, proc.stderr
    data = page_data(tmp_path / "deep.html")
    got = {}
    for f in data["heatmap"]["files"]:
        for line, self_samples, total in f["lines"]:
            got[(data["funcs"][f["func"]][1], line)] = [self_samples, total]
    assert got == want
    # the recursion's lines: each file's frames, a third of them on each
    # line, their total counted once, from the outermost
    assert got[("rec_a.py", 10 + (depth - recursion) % 3)] == [recursion // 6, recursion]


DEPTH, SAMPLES = 4000, 100


def recursion_page(tmp_path):
    """The page of main -> rec, DEPTH deep -> work (all SAMPLES samples in
    work), and its frames' names outermost first."""
    t = Tree()
    roots = [t.root()]
    at = t.add(0, roots[0], 0, 2)
    for _ in range(DEPTH):
        at = t.add(1, at, 0, 6)
    t.add(2, at, SAMPLES, 9)
    doc = profile_doc([("main", "main.py"), ("rec", "main.py"), ("work", "main.py")], roots,
                      t.finish(), tmp_path)
    (tmp_path / "rec.json").write_text(json.dumps(doc))
    proc = run_sonde(["view", "rec.json"], tmp_path, timeout=HANG_GUARD_S)
    assert proc.returncode == 0, proc.stderr
    return tmp_path / "rec.html", ["main"] + ["rec"] * DEPTH + ["work"]


def open_without_errors(browser, page, fragment):  # noqa: F811
    """page in a new tab, drawn without a script error."""
    tab = browser.new_page(viewport={"width": 1280, "height": 800})
    errors = []
    tab.on("pageerror", lambda e: errors.append(str(e)))
    tab.goto("file://%s#%s" % (page, fragment))
    try:
        tab.wait_for_selector("#status:not(:empty)")
    finally:
        assert errors == []
    return tab


def painted(tab, canvas_id, frame):
    """Whether the canvas has an opaque pixel at the frame's left middle
    (a canvas taller than the browser allows stays blank)."""
    return tab.evaluate(
        "([id, x, y]) => { var c = document.getElementById(id),"
        " r = c.getBoundingClientRect(), k = c.width / r.width;"
        " return c.getContext('2d').getImageData(Math.floor((x - r.left) * k),"
        " Math.floor((y - r.top) * k), 1, 1).data[3] === 255; }",
        [canvas_id, frame["x"] + 2, frame["y"] + frame["h"] / 2])


def test_sandwich_of_a_4000_deep_recursion(browser, tmp_path):  # noqa: F811
    """The page draws rec's sandwich without a script error; its callers
    are rec and main, its callees rec on each level down and work below
    them, each with all the samples, as many levels as one picture holds
    drawn (the title says how many more were not) and painted."""
    page, names = recursion_page(tmp_path)
    depth, samples = DEPTH, SAMPLES
    tab = open_without_errors(browser, page, "view=sandwich&select=^rec$")
    assert tab.evaluate("document.getElementById('status').textContent").startswith(
        "drawn: sandwich")
    frames = tab.evaluate("window.sondeView.sandwich()")
    callers = sorted((f["level"], f["name"], f["total"]) for f in frames if f["part"] == "callers")
    assert callers == [(0, "rec", samples), (1, "main", samples)]
    callees = sorted((f["level"], f["name"], f["total"]) for f in frames if f["part"] == "callees")
    levels = ["rec"] * depth + ["work"]
    shown = len(callees)
    assert callees == [(k, levels[k], samples) for k in range(shown)]
    title = tab.evaluate("document.querySelectorAll('#view .fn')[1].textContent")
    if shown < len(levels):
        assert "the %d levels farthest from rec not drawn" % (len(levels) - shown) in title
        assert shown > 1000
    else:
        assert "not drawn" not in title
    # the picture holds its frames: the outermost and the deepest drawn
    for level in (0, shown - 1):
        box = [f for f in frames if f["part"] == "callees" and f["level"] == level][0]
        assert painted(tab, "callees-chart", box), level
    tab.close()


def test_flame_and_icicle_of_a_4000_deep_recursion(browser, tmp_path):  # noqa: F811
    """The flame graph and the icicle of the same profile: each frame from
    the root down, as many levels as one picture holds, the status line
    saying how many deeper levels were not drawn; the root and the
    deepest drawn frame painted."""
    page, names = recursion_page(tmp_path)
    for view in ("flame", "icicle"):
        tab = open_without_errors(browser, page, "view=" + view)
        frames = tab.evaluate("window.sondeView.frames()")
        # the root ("all") first, then one frame a level
        got = [(f["name"], f["total"]) for f in frames]
        shown = len(got)
        assert got == [("all", SAMPLES)] + [(n, SAMPLES) for n in names][:shown - 1]
        status = tab.evaluate("document.getElementById('status').textContent")
        if shown < len(names) + 1:
            assert shown > 1000
            assert "the %d deepest levels not drawn" % (len(names) + 1 - shown) in status
        else:
            assert "not drawn" not in status
        for frame in (frames[0], frames[-1]):
            assert painted(tab, "chart", frame), (view, frame)
        tab.close()
