"""sonde run --subprocesses: every child the program starts that runs
Python -- forked (os.fork, a fork pool), spawned (a spawn pool,
ProcessPoolExecutor), forked by a forkserver, or started with subprocess --
is profiled too, each under "process PID (command)", and the table and -o
sum them.  The reference is the program's own arithmetic: each task calls
leaf() a known number of times in a process whose pid it reports, so the
calls beneath each process's frame are known exactly."""

import json
import os
import re
import subprocess

import pytest

from conftest import SONDE, need, run_sonde, version_params

PROGRAM = r'''
import multiprocessing, os, subprocess, sys
from concurrent.futures import ProcessPoolExecutor

def leaf(i):
    return i

def work(n):
    for i in range(n):
        leaf(i)
    return os.getpid(), n

def report(results):
    for pid, n in results:
        print("calls %d %d" % (pid, n), flush=True)

if __name__ == "__main__":
    if len(sys.argv) > 1:            # the subprocess
        report([work(int(sys.argv[1]))])
        sys.exit(0)
    for method in ("fork", "spawn", "forkserver"):
        with multiprocessing.get_context(method).Pool(2) as pool:
            report(pool.map(work, [300, 400, 500, 600], chunksize=1))
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as ex:
        report(ex.map(work, [700, 800]))
    child = os.fork()
    if child == 0:
        report([work(900)])
        os._exit(0)
    os.waitpid(child, 0)
    subprocess.run([sys.executable, __file__, "1000"], check=True)
    report([work(50)])
'''


def reported_tasks(stdout):
    """{pid: the tasks' n summed} of the program's "calls PID N" lines."""
    truth = {}
    for pid, n in re.findall(r"^calls (\d+) (\d+)$", stdout, re.M):
        truth[int(pid)] = truth.get(int(pid), 0) + int(n)
    return truth


def leaf_calls_by_process(doc):
    """{pid: calls of leaf beneath that process's frame} of a JSON profile."""
    funcs = doc["functions"]
    nodes = doc["nodes"]
    process_of = {}
    for i, f in enumerate(funcs):
        m = re.match(r"^process (\d+) \(", f["name"])
        if m:
            process_of[i] = int(m.group(1))
    leaf = [i for i, f in enumerate(funcs) if f["name"] == "leaf"]
    calls = {}
    for node in nodes[1:]:
        if node[0] not in leaf:
            continue
        up, pid = node[1], None
        for _ in range(len(nodes)):
            if up <= 0:
                break
            if nodes[up][0] in process_of:
                pid = process_of[nodes[up][0]]
                break
            up = nodes[up][1]
        calls[pid] = calls.get(pid, 0) + node[2]
    return calls


@pytest.mark.parametrize("python", version_params())
def test_every_child_is_profiled_under_its_process(python, tmp_path):
    python = need(python)
    (tmp_path / "prog.py").write_text(PROGRAM)
    proc = run_sonde(["run", "--subprocesses", "-f", "json", "-o", "out.json", "-l", "0",
                      "--python", python, "prog.py"], tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stderr
    truth = reported_tasks(proc.stdout)
    # a worker at least a pool (fork, spawn, forkserver) and of the
    # executor, the fork, the subprocess, the program
    assert len(truth) >= 7, proc.stdout
    doc = json.loads((tmp_path / "out.json").read_text())
    assert leaf_calls_by_process(doc) == truth, proc.stderr
    # the table: leaf once by the path the program was started with, once by
    # the absolute one spawned children import it by (__mp_main__)
    table = re.findall(r"^ +(\d+) .*prog\.py:\d+\(leaf\)$", proc.stderr, re.M)
    assert sum(int(n) for n in table) == sum(truth.values()), proc.stderr
    said = re.search(r"^processes: (\d+), the program and (\d+) children", proc.stderr, re.M)
    # every process that ran a task, and at most: 2 workers a pool, 2 of the
    # executor, the fork, the subprocess, the forkserver and spawn's resource
    # tracker (those two end after the program: their parts are there only
    # when written in time; a worker that ran no task and was terminated
    # while it started, before sonde's handler was set, has none)
    assert said and len(truth) - 1 <= int(said.group(2)) <= 12, proc.stderr
    assert doc["about"]["processes"] == int(said.group(1)) == int(said.group(2)) + 1


def test_a_child_that_cannot_be_followed_says_why(tmp_path):
    """A Python child that reads its program from standard input runs
    unprofiled, and the line says so; the program's own part is there."""
    (tmp_path / "prog.py").write_text(
        "import subprocess, sys\n"
        "def work():\n"
        "    subprocess.run([sys.executable, '-'], input=b'print(6 * 7)', check=True)\n"
        "work()\n")
    proc = run_sonde(["run", "--subprocesses", "prog.py"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "42"
    assert re.search(r"^sonde: --subprocesses: process \d+ is left out: it reads its program "
                     r"from standard input$", proc.stderr, re.M), proc.stderr
    assert "processes: 1, the program and 0 children" in proc.stderr
    assert re.search(r"prog\.py:2\(work\)$", proc.stderr, re.M), proc.stderr


def test_a_timeline_with_subprocesses_is_refused(tmp_path):
    """A Chrome or TensorBoard trace is one process's: the processes'
    sum goes in JSON or pstats."""
    (tmp_path / "x.py").write_text("")
    proc = subprocess.run([SONDE, "run", "--subprocesses", "--torch", "-f", "chrome", "-o",
                           "t.json", "x.py"], cwd=str(tmp_path), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True)
    assert proc.returncode == 2 and "-f chrome is one process's timeline: with --subprocesses" \
        in proc.stderr, proc.stderr
    assert not (tmp_path / "t.json").exists()
