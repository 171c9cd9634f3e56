"""sonde report and the .prof file: read by pstats, snakeviz, gprof2dot;
sonde reads cProfile's files; bad files get one line, never a traceback."""

import json
import os
import pstats
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
    proc = run_sonde(["report", "cprofile.prof", "-f", "collapsed"], profiles)
    assert proc.returncode == 1 and "no call tree" in proc.stderr


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
