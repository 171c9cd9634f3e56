"""sonde report and the .prof file: read by pstats, snakeviz, gprof2dot;
sonde reads cProfile's files; bad files get one line, never a traceback."""

import json
import os
import pstats
import re
import subprocess
import sys

import pytest

from conftest import run_sonde

WORK = "def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\n" \
       "def main():\n    return [fib(12) for _ in range(3)]\nmain()\n"


@pytest.fixture
def profiles(tmp_path):
    (tmp_path / "w.py").write_text(WORK)
    proc = run_sonde(["run", "-o", "sonde.prof", "w.py"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    subprocess.run([sys.executable, "-m", "cProfile", "-o", "cprofile.prof", "w.py"],
                   cwd=str(tmp_path), check=True)
    return tmp_path


def fib_row(text):
    return [l for l in text.splitlines() if l.rstrip().endswith("(fib)")][0].split()


@pytest.mark.parametrize("name", ["sonde.prof", "cprofile.prof"])
def test_report_table(profiles, name):
    proc = run_sonde(["report", name, "-s", "tottime", "-l", "3"], profiles)
    assert proc.returncode == 0, proc.stderr
    assert fib_row(proc.stdout)[0] == "1395/3"
    assert "List reduced from" in proc.stdout


def test_report_callers_callees(profiles):
    # main calls fib through a list comprehension (a function before 3.12).
    proc = run_sonde(["report", "sonde.prof", "--callers", r"\(fib\)", "--callees",
                      "main|listcomp"],
                     profiles)
    assert proc.returncode == 0, proc.stderr
    assert "was called by" in proc.stdout and "1392/6" in proc.stdout
    callee_lines = proc.stdout.split("Function called...")[1]
    assert "3" in callee_lines and "(fib)" in callee_lines


def test_pstats_and_peers_read_sonde_files(profiles):
    path = str(profiles / "sonde.prof")
    st = pstats.Stats(path)
    fib = [v for k, v in st.stats.items() if k[2] == "fib"][0]
    assert fib[:2] == (3, 1395)
    dot = subprocess.run([sys.executable, "-m", "gprof2dot", "-f", "pstats", path],
                         stdout=subprocess.PIPE, universal_newlines=True, check=True).stdout
    assert "digraph" in dot and "fib" in dot
    from snakeviz.stats import json_stats, table_rows
    rows = table_rows(st)
    assert any("fib" in str(r) for r in rows)
    assert "fib" in str(json_stats(st))


def test_report_converts(profiles):
    proc = run_sonde(["report", "cprofile.prof", "-f", "json", "-o", "c.json"], profiles)
    assert proc.returncode == 0, proc.stderr
    doc = json.load(open(str(profiles / "c.json")))
    fid = [i for i, f in enumerate(doc["functions"]) if f["name"] == "fib"][0]
    (fib,) = [s for s in doc["stats"] if s["function"] == fid]
    assert (fib["ncalls"], fib["pcalls"]) == (1395, 3)
    proc = run_sonde(["report", "cprofile.prof", "-f", "pstats", "-o", "again.prof"], profiles)
    assert proc.returncode == 0
    assert pstats.Stats(str(profiles / "again.prof")).stats == pstats.Stats(
        str(profiles / "cprofile.prof")).stats
    # a .prof has no call paths: collapsed is drawn from the tree rebuilt
    # from its callers, each function's own time as pstats' tottime
    proc = run_sonde(["report", "cprofile.prof", "-f", "collapsed"], profiles)
    assert proc.returncode == 0, proc.stderr
    own, lines = {}, 0
    for line in proc.stdout.splitlines():
        path, us = line.rsplit(" ", 1)
        leaf = path.split(";")[-1].split(" (")[0]
        own[leaf] = own.get(leaf, 0) + int(us)
        lines += 1
    tottime = {}
    for key, v in pstats.Stats(str(profiles / "cprofile.prof")).stats.items():
        tottime[key[2]] = tottime.get(key[2], 0) + v[2] * 1e6
    for name, us in tottime.items():  # each line rounded to a microsecond
        assert abs(own.get(name, 0) - us) <= lines, name


def test_report_bad_files(profiles):
    good = (profiles / "sonde.prof").read_bytes()
    cases = {
        "missing.prof": None,
        "empty.prof": b"",
        "random.prof": os.urandom(400),
        "truncated.prof": good[: len(good) // 2],
        "json.prof": b'{"functions": []}',
        "text.prof": b"hello\n",
    }
    for name, data in cases.items():
        if data is not None:
            (profiles / name).write_bytes(data)
        proc = run_sonde(["report", name], profiles)
        lines = proc.stderr.strip().splitlines()
        assert proc.returncode == 1, (name, proc.stderr)
        assert len(lines) == 1 and lines[0].startswith("sonde: ") and name in lines[0], name
    assert run_sonde(["report"], profiles).returncode == 2
    assert run_sonde(["report", "sonde.prof", "--nope"], profiles).returncode == 2


# ---- issue 10 ----

def test_callers_alone_as_pstats_prints_them(profiles):
    proc = run_sonde(["report", "cprofile.prof", "--callers", r"\(fib\)"], profiles)
    assert proc.returncode == 0, proc.stderr
    assert "was called by" in proc.stdout and "1392/6" in proc.stdout
    assert "ncalls  tottime  percall" not in proc.stdout  # no table before them
    proc = run_sonde(["report", "cprofile.prof", "--callees", "main"], profiles)
    assert "Function called..." in proc.stdout and "function calls" not in proc.stdout


DEEP = """
import json, sys
sys.setrecursionlimit(10000)

def down(n):
    if n:
        return down(n - 1)
    return json.dumps(list(range(100)))

down(int(sys.argv[1]))
"""


def test_collapsed_short_paths_and_min_count(tmp_path):
    (tmp_path / "deep.py").write_text(DEEP)
    proc = run_sonde(["run", "-f", "json", "-o", "d.json", "deep.py", "50"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    full = run_sonde(["report", "d.json", "-f", "collapsed"], tmp_path).stdout
    short = run_sonde(["report", "d.json", "-f", "collapsed", "--short-paths"], tmp_path)
    assert short.returncode == 0, short.stderr
    here = str(tmp_path) + "/"
    assert here in full and here not in short.stdout
    # stdlib frames below lib/pythonX.Y, the script relative to here
    assert re.search(r"\(json/encoder\.py:\d+\)", short.stdout)
    assert "(deep.py:5)" in short.stdout and len(short.stdout) < len(full)
    counts = [int(l.rsplit(" ", 1)[1]) for l in full.splitlines()]
    least = sorted(counts)[len(counts) // 2]
    cut = run_sonde(["report", "d.json", "-f", "collapsed", "--min-count", str(least)],
                    tmp_path).stdout.splitlines()
    assert [l for l in full.splitlines() if int(l.rsplit(" ", 1)[1]) >= least] == cut
    bad = run_sonde(["report", "d.json", "-f", "json", "--short-paths"], tmp_path)
    assert bad.returncode == 2 and "go with -f collapsed" in bad.stderr


def test_deep_run_outputs_grow_with_the_tree(tmp_path):
    """A 3,000-deep recursion: speedscope (two events a frame) stays small;
    collapsed repeats each stack, and is streamed to the file."""
    (tmp_path / "deep.py").write_text(DEEP)
    for fmt, out in (("speedscope", "d.speedscope.json"), ("json", "d.json")):
        proc = run_sonde(["run", "-f", fmt, "-o", out, "deep.py", "3000"], tmp_path)
        assert proc.returncode == 0, proc.stderr
    doc = json.load(open(str(tmp_path / "d.speedscope.json")))
    (main,) = doc["profiles"]
    downs = sum(1 for e in main["events"] if e["type"] == "O" and
                doc["shared"]["frames"][e["frame"]]["name"] == "down")
    assert downs == 3001
    assert (tmp_path / "d.speedscope.json").stat().st_size < 2 << 20
    proc = run_sonde(["report", "d.json", "-f", "collapsed", "-o", "d.txt"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = (tmp_path / "d.txt").read_text().splitlines()
    assert max(l.count(";down (") for l in lines) == 3001


def test_collapsed_refuses_what_would_not_fit(tmp_path):
    """A 100,000-deep chain in a 5 MB file: its collapsed stacks would be
    hundreds of GB; one line says so, nothing is left behind."""
    n = 100000
    funcs = [{"name": "f%d" % i, "qualname": "f%d" % i, "file": "/srv/app/chain.py",
              "line": i + 1, "kind": "python"} for i in range(n)]
    nodes = [[-1, 0, 0, 0, 0], [-1, 0, 0, 0, 0]] + [[i, i + 1, 1, (n - i) * 1e-3, 1e-3]
                                                   for i in range(n)]
    (tmp_path / "chain.json").write_text(json.dumps(
        {"sonde": 1, "mode": "run", "functions": funcs, "nodes": nodes, "stats": [],
         "threads": [{"ident": 1, "native_id": 1, "name": "MainThread", "root": 1}]}))
    proc = run_sonde(["report", "chain.json", "-f", "collapsed", "-o", "chain.txt"], tmp_path,
                     timeout=300)
    assert proc.returncode == 1
    (line,) = proc.stderr.strip().splitlines()
    assert "the collapsed stacks would take" in line and "100000 frames" in line
    assert not (tmp_path / "chain.txt").exists()
    proc = run_sonde(["report", "chain.json", "-f", "speedscope", "-o", "chain.ss.json"],
                     tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert len(json.load(open(str(tmp_path / "chain.ss.json")))["profiles"][0]["events"]) == 2 * n


def test_wide_profiles(tmp_path):
    """One call site calling 100,000 different functions: sonde run counts
    what cProfile counts (the children of one node are looked up in O(1));
    a 300,000-wide JSON profile reads back whole."""
    (tmp_path / "wide.py").write_text(
        "ns = {}\n"
        "exec('\\n'.join('def f%d(): pass' % i for i in range(100000)), ns)\n"
        "fs = [ns['f%d' % i] for i in range(100000)]\n"
        "def main():\n    for f in fs:\n        f()\n    fs[7]()\n"
        "main()\n")
    proc = run_sonde(["run", "-o", "s.prof", "wide.py"], tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr
    subprocess.run([sys.executable, "-m", "cProfile", "-o", "c.prof", "wide.py"],
                   cwd=str(tmp_path), check=True, timeout=300)
    ours, theirs = (pstats.Stats(str(tmp_path / f)).stats for f in ("s.prof", "c.prof"))
    calls = lambda st: {k[2]: v[1] for k, v in st.items() if k[0] == "<string>" and
                        k[2][0] == "f"}
    assert calls(ours) == calls(theirs) and len(calls(ours)) == 100000
    assert calls(ours)["f7"] == 2
    n = 300000
    funcs = [{"name": "g%d" % i, "qualname": "g%d" % i, "file": "w.py", "line": i + 1,
              "kind": "python"} for i in range(n)]
    nodes = [[-1, 0, 0, 0, 0], [-1, 0, 0, n * 1e-6, 0]] + [[i, 1, 1, 1e-6, 1e-6]
                                                          for i in range(n)]
    (tmp_path / "w.json").write_text(json.dumps(
        {"sonde": 1, "mode": "run", "functions": funcs, "nodes": nodes, "stats": [],
         "threads": [{"ident": 1, "native_id": 1, "name": "MainThread", "root": 1}]}))
    proc = run_sonde(["report", "w.json", "-l", "3"], tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "300000 function calls in 0.300 seconds" in proc.stdout


def test_names_that_are_not_utf8(tmp_path):
    """A file name holding bytes that are not UTF-8 (the extension keeps
    os.fsencode(co_filename); cProfile keeps the str, surrogate-escaped):
    every output stays well-formed, and pstats and json give back the
    interpreter's own string."""
    import xml.etree.ElementTree as ET
    raw = b"/srv/caf\xe9/app.py"
    name = os.fsdecode(raw)  # '/srv/caf\udce9/app.py'
    profile = ('{"sonde": 1, "mode": "run", "functions": [{"name": "work", "qualname": "work", '
               '"file": "%s", "line": 3, "kind": "python"}], "threads": [{"ident": 1, '
               '"native_id": 1, "name": "MainThread", "root": 1}], "nodes": [[-1, 0, 0, 0, 0], '
               '[-1, 0, 0, 0.5, 0], [0, 1, 2, 0.5, 0.5]], "stats": []}')
    (tmp_path / "raw.json").write_bytes(profile.encode() % {b"%s": raw} if False else
                                        profile.replace("%s", "@@").encode().replace(b"@@", raw))
    (tmp_path / "escaped.json").write_text(profile.replace("%s", json.dumps(name)[1:-1]))
    for src in ("raw.json", "escaped.json"):
        proc = run_sonde(["report", src, "-f", "pstats", "-o", "out.prof"], tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert [k[0] for k in pstats.Stats(str(tmp_path / "out.prof")).stats] == [name]
        proc = run_sonde(["report", src, "-f", "json", "-o", "out.json"], tmp_path)
        assert json.load(open(str(tmp_path / "out.json")))["functions"][0]["file"] == name
        proc = run_sonde(["report", "out.prof", "-f", "json", "-o", "again.json"], tmp_path)
        assert json.load(open(str(tmp_path / "again.json")))["functions"][0]["file"] == name
        proc = run_sonde(["report", src, "-f", "flamegraph", "-o", "out.svg"], tmp_path)
        assert proc.returncode == 0, proc.stderr
        ET.parse(str(tmp_path / "out.svg"))  # well-formed XML
        text = run_sonde(["report", src], tmp_path).stdout
        assert "/srv/caf\\xe9/app.py:3(work)" in text
        dot = run_sonde(["report", src, "-f", "dot"], tmp_path).stdout
        dot.encode("utf-8")  # (universal_newlines decoding already required UTF-8)
    # cProfile's own file of a script in such a folder
    folder = tmp_path / os.fsdecode(b"caf\xe9")
    folder.mkdir()
    (folder / "app.py").write_text("def work():\n    return sum(range(1000))\nwork()\n")
    subprocess.run([sys.executable, "-m", "cProfile", "-o", "c.prof", str(folder / "app.py")],
                   cwd=str(tmp_path), check=True, stdout=subprocess.DEVNULL)
    files = {k[0] for k in pstats.Stats(str(tmp_path / "c.prof")).stats if k[2] == "work"}
    proc = run_sonde(["report", "c.prof", "-f", "json", "-o", "c.json"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    doc = json.load(open(str(tmp_path / "c.json")))
    assert {f["file"] for f in doc["functions"] if f["name"] == "work"} == files


def test_json_numbers_stay_json(tmp_path):
    """JSON has no infinity: a number out of range is refused when read, and
    what is written parses back."""
    (tmp_path / "inf.json").write_text(
        '{"sonde": 1, "mode": "run", "sample_rate": 1e999, "functions": [], "threads": [],'
        ' "nodes": [[-1, 0, 0, 0, 0]], "stats": []}')
    proc = run_sonde(["report", "inf.json", "-f", "json", "-o", "out.json"], tmp_path)
    assert proc.returncode == 1 and "number out of range" in proc.stderr
    big = {("a.py", 1, "f"): (1, 1, 1e308, 1e308, {("b.py", 2, "g"): (1, 1, 1e308, 1e308)}),
           ("b.py", 2, "g"): (1, 1, 1e308, 1e308, {})}
    import marshal
    with open(str(tmp_path / "big.prof"), "wb") as f:
        marshal.dump(big, f)
    proc = run_sonde(["report", "big.prof", "-f", "json", "-o", "big.json"], tmp_path)
    assert proc.returncode == 0, proc.stderr

    def refuse(token):
        raise ValueError(token)
    json.load(open(str(tmp_path / "big.json")), parse_constant=refuse)


TALL = """
def down(n):
    return sum(range(3000)) if n == 0 else down(n - 1)

for _ in range(20):
    down(120)
"""


def test_deep_flame_graph_opens_at_its_foot(tmp_path):
    """A flame graph taller than the window opens scrolled to its foot, where
    the root and the widest frames are: the root's bar is on the first
    1280x800 screen (Chromium reports where it scrolled and how tall the
    window is; the graph's own script does the scrolling)."""
    from pages import CHROMIUM
    if not CHROMIUM:
        pytest.skip("no chromium (.ci/run installs it)")
    (tmp_path / "deep.py").write_text(TALL)
    proc = run_sonde(["run", "-f", "flamegraph", "-o", "deep.svg", "deep.py"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    svg = (tmp_path / "deep.svg").read_text()
    height = float(re.search(r'<svg [^>]*height="([\d.]+)"', svg).group(1))
    assert height > 2 * 800  # 120 levels: far taller than the window
    (root_y,) = [float(y) for y in re.findall(r'<rect x="0" y="([\d.]+)" width="1200" height'
                                              r'="\d+" fill="rgb\(220,220,220\)"', svg)]
    # Where the window is, written into the DOM once the page has loaded.
    probe = tmp_path / "probe.svg"
    probe.write_text(svg.replace("</svg>", "<script>addEventListener('load', () => "
                                 "document.documentElement.setAttribute('data-view', scrollY + "
                                 "',' + innerHeight));</script></svg>"))
    dom = subprocess.run([CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu",
                          "--window-size=1280,800", "--virtual-time-budget=3000", "--dump-dom",
                          "file://" + str(probe)], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, universal_newlines=True, timeout=120).stdout
    top, window = map(float, re.search(r'data-view="([\d.]+),([\d.]+)"', dom).groups())
    assert top <= root_y and root_y + 15 <= top + window, (top, window, root_y)
