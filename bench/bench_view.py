"""bench_view.py - how fast sonde view's page opens and redraws a large
real profile in headless Chromium (Debian's, driven by Playwright from
build/venv): sympy imported and four problems solved (an integral, a
series, a quartic, a simplification), profiled by sonde run (-f json: the
exact call tree; and the .prof the issue names).

For each file: the page's size; the time from navigation to the first
picture drawn (median of --reps fresh tabs); and each redraw, timed inside
the page around the click that asks for it (the drawing's JavaScript and
canvas calls; the compositor's frame after it is not counted): each view,
the fold toggle (which rebuilds the tree), a zoom, a search keystroke.

  build/venv/bin/python bench/bench_view.py [--python PY] [--reps N] [--keep DIR]

--python: an interpreter that can import sympy (default: /work/wt/realvenv's
when present, else python3).  Not a test: nothing is asserted.
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SONDE = os.path.join(ROOT, "build", "bin", "sonde")
# sympy imported and four problems solved: a profile larger than the
# issue's (12 MB, 110,000 call paths) as sonde run -f json writes it.
CODE = ("import sympy; x = sympy.Symbol('x'); "
        "sympy.integrate(x**3 * sympy.exp(x) * sympy.sin(x), x); "
        "sympy.series(sympy.sin(x) * sympy.exp(x) / (1 + x), x, 0, 10); "
        "sympy.solve(x**4 - 3*x + 1, x); "
        "sympy.simplify(sympy.sin(x)**2 + sympy.cos(x)**2 + sympy.gamma(x + 1) / sympy.gamma(x))")
VIEWS = ["flame", "icicle", "sunburst", "sandwich", "table"]


def profile(py, folder):
    pages = []
    for name, extra in (("sympy.json", ["-f", "json"]), ("sympy.prof", [])):
        out = os.path.join(folder, name)
        subprocess.run([SONDE, "run", "--python", py, "-o", out] + extra + ["-c", CODE],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        page = os.path.join(folder, name.replace(".", "-") + ".html")
        subprocess.run([SONDE, "view", out, "-o", page], check=True, stderr=subprocess.DEVNULL)
        pages.append((name, os.path.getsize(out), page))
    return pages


CLICK = """(function (sel) {
  var t = performance.now();
  document.querySelector(sel).click();
  return performance.now() - t;
})"""


def measure(browser, page, reps):
    opens, redraws = [], {}
    for _ in range(reps):
        tab = browser.new_page(viewport={"width": 1280, "height": 800})
        start = time.monotonic()
        tab.goto("file://" + page)
        tab.wait_for_selector("#status:not(:empty)")
        opens.append(1000 * (time.monotonic() - start))
        for v in VIEWS:
            redraws.setdefault(v, []).append(tab.evaluate(CLICK + "('nav button[data-view=%s]')" % v))
        tab.evaluate(CLICK + "('nav button[data-view=flame]')")
        redraws.setdefault("fold toggle", []).append(tab.evaluate(CLICK + "('#fold')"))
        redraws.setdefault("zoom (click)", []).append(tab.evaluate(
            "(function () { var t = performance.now(); location.hash = ''; "
            "var c = document.getElementById('chart'), r = c.getBoundingClientRect();"
            "c.dispatchEvent(new MouseEvent('click', {clientX: r.left + 20, clientY: r.bottom - 8,"
            " bubbles: true})); return performance.now() - t; })()"))
        redraws.setdefault("search keystroke", []).append(tab.evaluate(
            "(function () { var t = performance.now(), s = document.getElementById('search');"
            "s.value = 'integr'; s.dispatchEvent(new Event('input'));"
            "return performance.now() - t; })()"))
        tab.close()
    return statistics.median(opens), {k: statistics.median(v) for k, v in redraws.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    real = "/work/wt/realvenv/bin/python"
    ap.add_argument("--python", default=real if os.path.exists(real) else "python3")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--keep", help="write the profiles and pages here")
    a = ap.parse_args()
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        sys.exit("bench_view: no chromium")
    from playwright.sync_api import sync_playwright
    folder = os.path.abspath(a.keep or tempfile.mkdtemp(prefix="bench_view"))
    os.makedirs(folder, exist_ok=True)
    pages = profile(a.python, folder)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        for name, size, page in pages:
            html = open(page).read()
            data = json.loads(re.search(r'id="data">(.*?)</script>', html, re.S).group(1))
            opened, redraws = measure(browser, page, a.reps)
            print("%s: %.1f MB, %d call paths; page %.1f MB" % (
                name, size / 1e6, len(data["tree"]) - 1, os.path.getsize(page) / 1e6))
            print("  open (navigation to first picture): %.0f ms" % opened)
            for k, v in redraws.items():
                print("  redraw %-18s %.1f ms" % (k + ":", v))
        browser.close()


if __name__ == "__main__":
    main()
