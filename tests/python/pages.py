"""What the tests of sonde's pages and pictures share (test_view.py,
test_diff.py): profiles of one small program and of real programs, the
page written for a file, its data, and the page as headless Chromium
draws it (from file://)."""

import json
import os
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser

import pytest

from conftest import run_sonde

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
need_browser = pytest.mark.skipif(not CHROMIUM, reason="no chromium (.ci/run installs it)")

WORK = """
import sys

def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)

def spin(k):
    total = 0
    for i in range(k):
        total += i * i
    return total

def main(n):
    spin(20000)
    return fib(n)

main(int(sys.argv[1]) if len(sys.argv) > 1 else 18)
"""


def browse(page, fragment="", screenshot=None):
    """The DOM of page (a file) after its script ran, as Chromium has it."""
    args = [CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
            "--window-size=1280,900", "--virtual-time-budget=5000"]
    args.append("--screenshot=%s" % screenshot if screenshot else "--dump-dom")
    args.append("file://%s#%s" % (os.path.abspath(str(page)), fragment))
    done = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                          universal_newlines=True, timeout=120)
    assert done.returncode == 0
    return done.stdout


class Cells(HTMLParser):
    """The text of each cell of each row of the table with a given id."""

    def __init__(self, table_id):
        super().__init__()
        self.table_id, self.depth, self.rows, self.cell = table_id, 0, [], None

    def handle_starttag(self, tag, attrs):
        if tag == "table" and (dict(attrs).get("id") == self.table_id or self.depth):
            self.depth += 1
        elif self.depth and tag == "tr":
            self.rows.append([])
        elif self.depth and tag in ("td", "th"):
            self.cell = ""

    def handle_endtag(self, tag):
        if tag == "table" and self.depth:
            self.depth -= 1
        elif self.depth and tag in ("td", "th") and self.cell is not None:
            self.rows[-1].append(self.cell)
            self.cell = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell += data


def table(dom, table_id):
    parser = Cells(table_id)
    parser.feed(dom)
    return parser.rows


def text_of(dom, element_id):
    m = re.search(r'id="%s"[^>]*>(.*?)</' % element_id, dom, re.S)
    return m.group(1) if m else None


@pytest.fixture(scope="module")
def profiles(tmp_path_factory):
    """One program profiled as .prof and as sonde's JSON, and by cProfile."""
    tmp = tmp_path_factory.mktemp("view")
    (tmp / "work.py").write_text(WORK)
    for args in (["run", "-o", "w.prof", "work.py"], ["run", "-f", "json", "-o", "w.json", "work.py"]):
        proc = run_sonde(args, tmp)
        assert proc.returncode == 0, proc.stderr
    # The JSON's own figures as pstats sees them: the reference for its page.
    proc = run_sonde(["report", "w.json", "-f", "pstats", "-o", "wj.prof"], tmp)
    assert proc.returncode == 0, proc.stderr
    subprocess.run([sys.executable, "-m", "cProfile", "-o", "c.prof", "work.py"], cwd=str(tmp),
                   check=True, stdout=subprocess.DEVNULL)
    return tmp


def view(tmp, name, *extra):
    proc = run_sonde(["view", name] + list(extra), tmp)
    assert proc.returncode == 0, proc.stderr
    page = tmp / (os.path.splitext(name)[0] + ".html")
    assert "sonde: wrote %s" % page.name in proc.stderr
    return page


def page_data(page):
    html = page.read_text()
    data = json.loads(re.search(r'<script type="application/json" id="data">(.*?)</script>',
                                html, re.S).group(1))
    for fn in data.get("funcs", []):  # each function's file by name (held once in "files")
        fn[1] = data["files"][fn[1]]
    return data


IMPORTS = """
import json, argparse, difflib

def encode(n):
    return json.dumps({"rows": [list(range(20)) for _ in range(n)]})

def main():
    for _ in range(200):
        encode(30)
    difflib.SequenceMatcher(None, "abcdef" * 50, "abcxef" * 50).ratio()

main()
"""


@pytest.fixture(scope="module")
def real_profs(tmp_path_factory):
    """cProfile's and sonde's .prof of `-m json.tool` and of a script that
    imports: every function in them has a caller (builtins.exec is called
    back by the import machinery and by runpy)."""
    tmp = tmp_path_factory.mktemp("real")
    (tmp / "imports.py").write_text(IMPORTS)
    # json.tool's main() works on 1,000 rows (about 0.1 s) and the script's
    # main() encodes 200 times: far wider than any import whose time the
    # rebuilt tree could place beside it (a 3-row file let main() take 1.5 to
    # 18 ms, and a busy machine's import times moved it by up to 20%).
    rows = [{"id": i, "name": "n%d" % i, "tags": ["x", "y"], "v": i * 0.5} for i in range(1000)]
    (tmp / "in.json").write_text(json.dumps({"a": [1, 2, {"b": None}], "rows": rows}))
    runs = {"cprofile-m.prof": [sys.executable, "-m", "cProfile", "-o", "cprofile-m.prof",
                                "-m", "json.tool", "in.json"],
            "cprofile-imports.prof": [sys.executable, "-m", "cProfile", "-o",
                                      "cprofile-imports.prof", "imports.py"],
            "again.prof": [sys.executable, "-m", "cProfile", "-o", "again.prof", "imports.py"]}
    # a package imported 30 modules deep, as sympy's are, run with -m
    pkg = tmp / "deep"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    for i in range(30):
        nxt = "from . import m%d\n" % (i + 1) if i < 29 else ""
        (pkg / ("m%d.py" % i)).write_text(
            nxt + "TABLE = [str(k) * 3 for k in range(2000)]\n"
            "def f%d(x):\n    return sorted(x)[:%d]\n" % (i, i))
    (pkg / "main.py").write_text(
        "from . import m0\n"
        "def main():\n    return [len(m0.f0(m0.TABLE)) for _ in range(20)]\n"
        "main()\n")
    runs["cprofile-deep.prof"] = [sys.executable, "-m", "cProfile", "-o", "cprofile-deep.prof",
                                  "-m", "deep.main"]
    for name, cmd in runs.items():
        subprocess.run(cmd, cwd=str(tmp), check=True, stdout=subprocess.DEVNULL)
    for name, args in (("sonde-m.prof", ["-m", "json.tool", "in.json"]),
                       ("sonde-imports.prof", ["imports.py"]),
                       ("sonde-deep.prof", ["-m", "deep.main"])):
        proc = run_sonde(["run", "-o", name] + args, tmp)
        assert (tmp / name).exists(), proc.stderr
    return tmp


@pytest.fixture(scope="module")
def browser():
    """Playwright driving Debian's chromium (no browser download), for what
    a page does under the keyboard and where it draws; skipped without."""
    if not CHROMIUM:
        pytest.skip("no chromium (.ci/run installs it)")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM,
                                      args=["--no-sandbox", "--disable-gpu"])
        yield chromium
        chromium.close()


def open_page(browser, page, fragment="", size=(1280, 800)):
    """page (a file) in a fresh tab of size WxH, its script run."""
    tab = browser.new_page(viewport={"width": size[0], "height": size[1]}, accept_downloads=True)
    tab.goto("file://%s#%s" % (os.path.abspath(str(page)), fragment))
    tab.wait_for_selector("#status:not(:empty)")
    return tab
