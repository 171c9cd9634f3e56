"""bench_chart.py - the stack chart of a long timeline: the page's size and
how long headless Chromium (Debian's, driven by Playwright from build/venv)
takes to draw it.

A recording of N samples (default 1,000,000) at 1000 Hz, made up in sonde's
JSON: one thread, 64 stacks 40 frames deep sharing their outer half, the
stack changing at every sample (the worst case for runs of identical
stacks).  Prints the JSON's and the page's size, the time `sonde view`
takes, the first drawing of the chart (the status line: building the
frames from the runs, then drawing) and a redraw timed inside the page.

  build/venv/bin/python bench/bench_chart.py [--samples N] [--keep DIR]

Not a test: nothing is asserted.
"""

import argparse
import json
import os
import random
import shutil
import subprocess
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SONDE = os.path.join(os.path.dirname(HERE), "build", "bin", "sonde")

REDRAW = """(function () {
  var t = performance.now();
  document.querySelector("nav button[data-view=chart]").click();
  return performance.now() - t;
})()"""


def recording(n, path):
    rnd = random.Random(1)
    funcs = [{"name": "f%d" % i, "qualname": "mod.f%d" % i, "file": "/app/mod%d.py" % (i % 7),
              "line": i, "kind": "python"} for i in range(200)]
    nodes, index = [[-1, 0, 0, 0, 0], [-1, 0, 0, 0, 0]], {}

    def child(parent, f):
        if (parent, f) not in index:
            index[parent, f] = len(nodes)
            nodes.append([f, parent, 0, 0, 0, 1])
        return index[parent, f]
    outer = [rnd.randrange(200) for _ in range(20)]
    leaves = []
    for _ in range(64):
        node = 1
        for f in outer + [rnd.randrange(200) for _ in range(20)]:
            node = child(node, f)
        leaves.append(node)
    seq = [leaves[rnd.randrange(64)] for _ in range(n)]
    for leaf in seq:
        nodes[leaf][4] += 0.001
        node = leaf
        while node > 1:
            nodes[node][3] += 0.001
            node = nodes[node][1]
    doc = {"sonde": 1, "mode": "run", "unit": "seconds", "sample_rate": 1000, "functions": funcs,
           "threads": [{"ident": 1, "native_id": 1, "name": "MainThread", "root": 1}],
           "nodes": nodes, "stats": [],
           "timeline": {"capped": False, "threads": [{"t_ns": [1000000] * n, "nodes": seq}]}}
    with open(path, "w") as f:
        json.dump(doc, f)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", type=int, default=1000000)
    ap.add_argument("--keep", help="a folder to keep the files in")
    args = ap.parse_args()
    folder = args.keep or tempfile.mkdtemp(prefix="sonde-bench-chart-")
    os.makedirs(folder, exist_ok=True)
    data, page = os.path.join(folder, "long.json"), os.path.join(folder, "long.html")
    recording(args.samples, data)
    start = time.monotonic()
    subprocess.run([SONDE, "view", data, "-o", page], check=True, stderr=subprocess.DEVNULL)
    print("%d samples: JSON %.1f MB, page %.1f MB, sonde view %.2f s" % (
        args.samples, os.path.getsize(data) / 1e6, os.path.getsize(page) / 1e6,
        time.monotonic() - start))
    from playwright.sync_api import sync_playwright
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=shutil.which("chromium"),
                                     args=["--no-sandbox", "--disable-gpu"])
        tab = browser.new_page(viewport={"width": 1280, "height": 800})
        tab.goto("file://%s#view=chart" % page)
        tab.wait_for_selector("#status:not(:empty)")
        print("first drawing: %s (%s)" % (tab.evaluate("document.getElementById('status').textContent"),
                                           tab.evaluate("document.getElementById('found').textContent")))
        print("redraw: %.0f ms" % min(tab.evaluate(REDRAW) for _ in range(3)))
        browser.close()
    if not args.keep:
        shutil.rmtree(folder)


if __name__ == "__main__":
    main()
