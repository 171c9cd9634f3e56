"""sonde lines --subprocesses: every child the program starts that runs
Python -- forked (os.fork, a fork pool), spawned (a spawn pool,
ProcessPoolExecutor), forked by a forkserver, or started with subprocess --
counts the chosen functions' lines too, and the table and -o are the sum,
each process's own counts in -o's "parts".  The reference is the
program's own arithmetic (test_run_subprocesses' program): each task runs
the line `leaf(i)` a known number of times in a process whose pid it
reports."""

import json
import re
import subprocess

import pytest

from conftest import SONDE, need, run_sonde, version_params
from test_run_subprocesses import PROGRAM, reported_tasks

LEAF_LINE = PROGRAM.splitlines().index("        leaf(i)") + 1  # PROGRAM starts with a newline


def leaf_line_hits(functions):
    """Hits of the line `leaf(i)` in work, over the functions of a document."""
    return sum(line["hits"] for f in functions if f["name"] == "work"
               for line in f["lines"] if line["line"] == LEAF_LINE)


@pytest.mark.parametrize("python", version_params())
def test_every_child_counts_its_lines(python, tmp_path):
    python = need(python)
    (tmp_path / "prog.py").write_text(PROGRAM)
    proc = run_sonde(["lines", "--subprocesses", "-o", "out.json", "--python", python,
                      "prog.py"], tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stderr
    truth = reported_tasks(proc.stdout)
    # a worker at least of each pool and the executor, the fork, the
    # subprocess, the program
    assert len(truth) >= 7, proc.stdout
    doc = json.loads((tmp_path / "out.json").read_text())
    # each process's own part: the hits of the tasks it reported
    by_pid = {}
    for part in doc["parts"]:
        pid = int(re.match(r"^process (\d+) \(", part["process"]).group(1))
        by_pid[pid] = leaf_line_hits(part["functions"])
    assert {pid: n for pid, n in by_pid.items() if n} == truth, proc.stderr
    # the sum, in the document and in the table
    assert leaf_line_hits(doc["functions"]) == sum(truth.values())
    # (where the interpreter names the script by the path it was given, work
    # is there twice: so, and by the absolute path spawned children import
    # it by)
    table = re.findall(r"^ +%d +(\d+) .* leaf\(i\)$" % LEAF_LINE, proc.stderr, re.M)
    assert sum(int(n) for n in table) == sum(truth.values()), proc.stderr
    said = re.search(r"^processes: (\d+), the program and (\d+) children", proc.stderr, re.M)
    # as run --subprocesses counts them (see there)
    assert said and len(truth) - 1 <= int(said.group(2)) <= 12, proc.stderr
    assert doc["about"]["processes"] == int(said.group(1)) == len(doc["parts"])


def test_children_run_the_functions_named_with_f(tmp_path):
    """-f names a function the program runs only in its workers: no
    warning that it never ran, and its hits are the workers'."""
    (tmp_path / "prog.py").write_text(PROGRAM)
    proc = run_sonde(["lines", "--subprocesses", "-f", "leaf", "prog.py"], tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "warning" not in proc.stderr, proc.stderr
    calls = sum(reported_tasks(proc.stdout).values())
    hits = re.findall(r"^ +\d+ +(\d+) .* return i$", proc.stderr, re.M)
    assert sum(int(n) for n in hits) == calls, proc.stderr


def test_lprof_output_with_subprocesses_is_refused(tmp_path):
    (tmp_path / "x.py").write_text("")
    proc = subprocess.run([SONDE, "lines", "--subprocesses", "-o", "x.lprof", "x.py"],
                          cwd=str(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True)
    assert proc.returncode == 2 and "-o x.lprof would hold one process's" in proc.stderr, \
        proc.stderr
    assert not (tmp_path / "x.lprof").exists()


@pytest.mark.parametrize("python", version_params())
def test_a_stdlib_module_run_with_m_counts_its_workers(python, tmp_path):
    """`-m compileall -j 2`: its workers (a process pool of the
    interpreter's default start method) run compile_file, which -f names
    by module; its first statement runs once per file compiled."""
    python = need(python)
    src = tmp_path / "src"
    src.mkdir()
    for k in range(3):
        (src / ("m%d.py" % k)).write_text("x = %d\n" % k)
    proc = run_sonde(["lines", "--subprocesses", "-o", "out.json", "-f",
                      "compileall:compile_file", "--python", python, "-m", "compileall", "-q",
                      "-f", "-j", "2", "src"], tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "warning" not in proc.stderr, proc.stderr
    doc = json.loads((tmp_path / "out.json").read_text())
    (func,) = [f for f in doc["functions"] if f["name"] == "compile_file"]
    first = [line for line in func["lines"] if line["source"].strip() == "success = True"]
    assert first and first[0]["hits"] == 3, first
    # and none of them in the program's own process, which only hands them out
    (own,) = [p for p in doc["parts"] if p["file"] == "out"]
    assert not any(line.get("hits") for f in own["functions"] for line in f["lines"])
