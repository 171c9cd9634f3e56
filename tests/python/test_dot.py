"""sonde report -f dot (and svg, png): the call graph as gprof2dot draws
it, its thresholds, and Graphviz reading it."""

import marshal
import os
import re
import shutil
import subprocess
import sys

import pytest

from conftest import run_sonde


DOT = shutil.which("dot")


# A call graph whose figures are fixed (pstats' marshal form, seconds of a
# 1-second run): main calls fib (which calls itself), spin, small and tiny.
# Every share is far from the thresholds tried (0.5%, gprof2dot's default,
# and 50%): tiny's 0.2% and small's 8.8% and fib's 60%.  (A timed run
# decided which functions crossed a threshold.)
MAIN, FIB, SPIN = ("w.py", 13, "main"), ("w.py", 4, "fib"), ("w.py", 7, "spin")
SMALL, TINY = ("w.py", 20, "small"), ("w.py", 24, "tiny")
STATS = {MAIN: (1, 1, 0.010, 1.000, {}),
         FIB: (1, 15, 0.600, 0.600, {MAIN: (1, 1, 0.040, 0.600), FIB: (14, 2, 0.560, 0.560)}),
         SPIN: (1, 1, 0.300, 0.300, {MAIN: (1, 1, 0.300, 0.300)}),
         SMALL: (1, 1, 0.088, 0.088, {MAIN: (1, 1, 0.088, 0.088)}),
         TINY: (1, 1, 0.002, 0.002, {MAIN: (1, 1, 0.002, 0.002)})}


def kept(threshold):
    """The functions whose share (cumtime of the whole run's) reaches threshold %."""
    total = STATS[MAIN][3]  # the one root's
    return sorted(k[2] for k, v in STATS.items() if 100 * v[3] / total >= threshold)


def drawn(dot):
    """The functions a DOT text has nodes for."""
    return sorted(re.findall(r'^\s*f\d+ \[color=[^,]+, label="([^\\"]+)\\n', dot, re.M))


@pytest.fixture
def graph(tmp_path):
    with open(str(tmp_path / "w.prof"), "wb") as f:
        marshal.dump(STATS, f)
    return tmp_path


def test_report_dot(graph, tmp_path):
    proc = run_sonde(["report", "w.prof", "-f", "dot"], graph)
    assert proc.returncode == 0, proc.stderr
    dot = proc.stdout
    assert dot.startswith("digraph sonde {")
    assert drawn(dot) == kept(0.5) == ["fib", "main", "small", "spin"]  # tiny left out
    fib = [l for l in dot.splitlines() if 'label="fib\\n' in l]
    total, (pcalls, ncalls, tottime, cumtime, _) = STATS[MAIN][3], STATS[FIB]
    assert len(fib) == 1 and "\\n%.2f%%\\n(%.2f%%)\\n%d\xd7" % (
        100 * cumtime / total, 100 * tottime / total, ncalls) in fib[0], fib
    node = re.match(r"\s*(f\d+) ", fib[0]).group(1)
    assert re.search(r"%s -> %s " % (node, node), dot)  # fib calls itself
    pruned = run_sonde(["report", "w.prof", "-f", "dot", "--node-thres", "50"], graph).stdout
    assert drawn(pruned) == kept(50) == ["fib", "main"]
    if DOT:
        drawn_svg = subprocess.run([DOT, "-Tsvg"], input=dot, stdout=subprocess.PIPE,
                                   universal_newlines=True)
        assert drawn_svg.returncode == 0 and "<svg" in drawn_svg.stdout
        svg = run_sonde(["report", "w.prof", "-f", "svg", "-o", str(tmp_path / "g.svg")], graph)
        assert svg.returncode == 0, svg.stderr
        assert "<svg" in (tmp_path / "g.svg").read_text()


@pytest.mark.parametrize("args, message", [
    (["report", "w.prof", "-f", "dot", "--node-thres", "abc"], "--node-thres takes a percentage"),
    (["report", "w.prof", "-f", "dot", "--edge-thres=101"], "--edge-thres takes a percentage"),
])
def test_bad_input(graph, args, message):
    proc = run_sonde(args, graph)
    assert proc.returncode == 2
    assert message in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


GPROF2DOT = shutil.which("gprof2dot") or (
    os.path.join(os.path.dirname(sys.executable), "gprof2dot")
    if os.path.exists(os.path.join(os.path.dirname(sys.executable), "gprof2dot")) else None)
DEEP = """
def inner(n):
    return sum(i * i for i in range(n))
def outer():
    return [inner(20000) for _ in range(20)]
"""


def nodes(dot, pattern):
    return re.findall(r'^\s*\w+ \[.*label="%s.*", tooltip="([^"]*)"' % pattern, dot, re.M)


@pytest.mark.skipif(GPROF2DOT is None, reason="gprof2dot is not installed")
def test_dot_labels_name_the_file_and_tooltips_the_path(tmp_path):
    """A node's label names the file as gprof2dot names the module (no
    folders: pytest's graph was 3 times as wide as gprof2dot's), and its
    tooltip holds the whole path, as gprof2dot's does."""
    deep = tmp_path / "site" / "packages" / "some_library" / "internals" / "core"
    deep.mkdir(parents=True)
    (deep / "engine.py").write_text(DEEP)
    (tmp_path / "main.py").write_text("import sys\nsys.path.insert(0, %r)\nimport engine\n"
                                      "engine.outer()\n" % str(deep))
    run = run_sonde(["run", "-o", "p.prof", "main.py"], tmp_path)
    assert run.returncode == 0, run.stderr
    ours = run_sonde(["report", "p.prof", "-f", "dot"], tmp_path)
    assert ours.returncode == 0, ours.stderr
    theirs = subprocess.run([GPROF2DOT, "-f", "pstats", "p.prof"], cwd=str(tmp_path),
                            stdout=subprocess.PIPE, universal_newlines=True, check=True).stdout
    compared = 0
    for func in ("inner", "outer"):
        # gprof2dot: label "engine:LINE:FUNC", tooltip the file's path
        (module, line), = re.findall(r'label="(\w+):(\d+):%s\\n' % func, theirs)
        (path,) = [t for t in re.findall(r'label="%s:%s:%s\\n[^"]*", tooltip="([^"]*)"'
                                         % (module, line, func), theirs)]
        (tooltip,) = nodes(ours.stdout, r"%s\\n%s\.py:%s\\n" % (func, module, line))
        assert tooltip == "%s:%s" % (path, line)
        assert path == str(deep / "engine.py")
        compared += 1
    assert compared == 2
    assert str(deep) not in "".join(re.findall(r'label="([^"]*)"', ours.stdout))
