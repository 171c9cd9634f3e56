"""sonde report -f dot (and svg, png): the call graph as gprof2dot draws
it, its thresholds, and Graphviz reading it."""

import re
import shutil
import subprocess

import pytest

from conftest import run_sonde
from pages import profiles  # noqa: F401


DOT = shutil.which("dot")


def test_report_dot(profiles, tmp_path):
    proc = run_sonde(["report", "w.prof", "-f", "dot"], profiles)
    assert proc.returncode == 0, proc.stderr
    dot = proc.stdout
    assert dot.startswith("digraph sonde {")
    fib = [l for l in dot.splitlines() if 'label="fib\\n' in l]
    assert len(fib) == 1 and re.search(r"\\n\d+\.\d\d%\\n\(\d+\.\d\d%\)\\n\d+\xd7", fib[0])
    node = re.match(r"\s*(f\d+) ", fib[0]).group(1)
    assert re.search(r"%s -> %s " % (node, node), dot)  # fib calls itself
    pruned = run_sonde(["report", "w.prof", "-f", "dot", "--node-thres", "50"], profiles).stdout
    assert 0 < pruned.count(" [color=") < dot.count(" [color=")
    if DOT:
        drawn = subprocess.run([DOT, "-Tsvg"], input=dot, stdout=subprocess.PIPE,
                               universal_newlines=True)
        assert drawn.returncode == 0 and "<svg" in drawn.stdout
        svg = run_sonde(["report", "w.prof", "-f", "svg", "-o", str(tmp_path / "g.svg")], profiles)
        assert svg.returncode == 0, svg.stderr
        assert "<svg" in (tmp_path / "g.svg").read_text()


@pytest.mark.parametrize("args, message", [
    (["report", "w.prof", "-f", "dot", "--node-thres", "abc"], "--node-thres takes a percentage"),
    (["report", "w.prof", "-f", "dot", "--edge-thres=101"], "--edge-thres takes a percentage"),
])
def test_bad_input(profiles, args, message):
    proc = run_sonde(args, profiles)
    assert proc.returncode == 2
    assert message in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
