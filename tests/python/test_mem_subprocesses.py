"""sonde mem --subprocesses: every child the program starts that runs
Python -- forked (os.fork, a fork pool), spawned (a spawn pool), forked by
a forkserver, or started with subprocess -- measures the chosen
functions' lines too, from its start or its fork, and the table and -o are
the sum, each process's own figures in -o's "parts".  The reference is
tracemalloc: what the line that keeps n blocks allocates per block, in a
run of its own; each task reports its pid and n, so each process's bytes
on that line are known within 10%."""

import json
import re
import subprocess

import pytest

from conftest import need, run_sonde, version_params
from test_run_subprocesses import reported_tasks

PROGRAM = r'''
import multiprocessing, os, subprocess, sys

def work(n):
    keep = [bytearray(10000) for _ in range(n)]
    return os.getpid(), n

def report(results):
    for pid, n in results:
        print("calls %d %d" % (pid, n), flush=True)

if __name__ == "__main__":
    if sys.argv[1:] == ["tracemalloc"]:   # the reference, alone
        import tracemalloc
        work(5)
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        keep = [bytearray(10000) for _ in range(100)]
        print("per_block %.1f" % ((tracemalloc.get_traced_memory()[0] - before) / 100))
        sys.exit(0)
    if len(sys.argv) > 1:                 # the subprocess
        report([work(int(sys.argv[1]))])
        sys.exit(0)
    for method in ("fork", "spawn", "forkserver"):
        with multiprocessing.get_context(method).Pool(2) as pool:
            report(pool.map(work, [30, 40, 50, 60], chunksize=1))
    child = os.fork()
    if child == 0:
        report([work(70)])
        os._exit(0)
    os.waitpid(child, 0)
    subprocess.run([sys.executable, __file__, "80"], check=True)
    report([work(20)])
'''

KEEP_LINE = PROGRAM.splitlines().index("    keep = [bytearray(10000) for _ in range(n)]") + 1


def keep_line_bytes(functions):
    """Bytes allocated on work's line that keeps the blocks."""
    return sum(line.get("alloc_bytes", 0) for f in functions if f["name"] == "work"
               for line in f["lines"] if line["line"] == KEEP_LINE)


@pytest.mark.parametrize("placing", ["stack", "lines"])
@pytest.mark.parametrize("python", version_params())
def test_every_child_measures_its_lines(python, placing, tmp_path):
    """Both ways of placing bytes: by the stack at each sample, and by the
    line events of --lines (whose open activations a fork carries over)."""
    python = need(python)
    (tmp_path / "prog.py").write_text(PROGRAM)
    alone = subprocess.run([python, "prog.py", "tracemalloc"], cwd=str(tmp_path),
                           stdout=subprocess.PIPE, universal_newlines=True, check=True)
    per_block = float(re.search(r"^per_block ([\d.]+)$", alone.stdout, re.M).group(1))
    proc = run_sonde(["mem", "--subprocesses", "-o", "out.json"] +
                     (["--lines"] if placing == "lines" else []) +
                     ["--python", python, "prog.py"], tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stderr
    truth = reported_tasks(proc.stdout)
    assert len(truth) >= 6, proc.stdout  # a worker of each pool, the fork, the subprocess, the program
    doc = json.loads((tmp_path / "out.json").read_text())
    by_pid = {}
    for part in doc["parts"]:
        pid = int(re.match(r"^process (\d+) \(", part["process"]).group(1))
        by_pid[pid] = keep_line_bytes(part["functions"])
    # each process's own part: its tasks' blocks, none of its parent's
    for pid, n in truth.items():
        assert abs(by_pid.get(pid, 0) - n * per_block) <= 0.1 * n * per_block, \
            (pid, n, per_block, by_pid, proc.stderr)
    assert not any(by_pid[pid] for pid in by_pid if pid not in truth), (by_pid, truth)
    total = sum(truth.values()) * per_block
    assert abs(keep_line_bytes(doc["functions"]) - total) <= 0.1 * total
    said = re.search(r"^processes: (\d+), the program and (\d+) children", proc.stderr, re.M)
    assert said and len(truth) - 1 <= int(said.group(2)) <= 12, proc.stderr
    assert doc["about"]["processes"] == int(said.group(1)) == len(doc["parts"])
