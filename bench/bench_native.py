"""What native frames cost the target: sonde record --native, py-spy record --native, austinp.

Method. The target is target_numpy.py: a fixed number of np.linalg.inv
calls on one matrix, done by OpenBLAS's threads (OPENBLAS_NUM_THREADS: 1,
and 32 by default), which prints its own wall time for the work and its
own CPU time. Each measurement starts the target under one sampler at
--rate Hz (default 100) with -- CMD, or bare:

    sonde   record --native -r HZ -f collapsed -o FILE -- PY target_numpy.py
    py-spy  record --native -r HZ --format raw -o FILE -- PY target_numpy.py
    austinp -i 1000000/HZ (microseconds) -o FILE PY target_numpy.py
            (austin-dist's native-frames build; left out when not installed)

Per measurement:

- slowdown: the target's wall time for the work against the bare run of
  the same round: wall / bare - 1;
- sampler CPU: user + system time of the sampler and its target, from
  getrusage(RUSAGE_CHILDREN) before and after it is waited for, less the
  CPU time the target reports of itself; per second of the target's run;
- rate kept: samples taken per second of sampling (sonde's "N samples in
  S s", py-spy's "Samples: N" over the run's wall time, austinp's sample
  valid sample lines of the main thread over the run's wall time).

A round runs bare, sonde and py-spy for each thread count, in an order that
rotates between rounds; the report gives medians over rounds (default 3).

    python3 bench/bench_native.py [--rounds N] [--threads 1,32] [--rate HZ]
                                  [--work ROUNDS] [--size N] [--python PY]
"""

import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH)
SONDE = os.path.join(ROOT, "build", "bin", "sonde")
TARGET = os.path.join(BENCH, "target_numpy.py")


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def measure(tool, python, threads, rate, work, size, out):
    """(target wall, target cpu, sampler cpu, samples per second or None)."""
    cmd = [python, TARGET, str(work), str(size)]
    if tool == "sonde":
        cmd = [SONDE, "record", "--native", "-r", str(rate), "-f", "collapsed", "-o", out,
               "--"] + cmd
    elif tool == "py-spy":
        cmd = [find("py-spy", python), "record", "--native", "-r", str(rate), "--format", "raw", "-o", out, "--"] + cmd
    elif tool == "austinp":
        cmd = [find("austinp", python), "-i", str(1000000 // rate), "-o", out] + cmd
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads))
    before = children_cpu()
    t0 = time.perf_counter()
    run = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         universal_newlines=True)
    wall = time.perf_counter() - t0
    used = children_cpu() - before
    m = re.search(r"elapsed ([\d.]+) cpu ([\d.]+)", run.stdout)
    if run.returncode != 0 or not m:
        raise SystemExit("%s failed: %s" % (tool, run.stderr[-2000:]))
    target_wall, target_cpu = float(m.group(1)), float(m.group(2))
    rate_kept = None
    if tool == "sonde":
        s = re.search(r"(\d+) samples in ([\d.]+) s", run.stderr)
        rate_kept = int(s.group(1)) / float(s.group(2))
    elif tool == "py-spy":
        s = re.search(r"Samples: (\d+)", run.stderr + run.stdout)
        rate_kept = int(s.group(1)) / wall if s else None
    elif tool == "austinp":
        with open(out, errors="replace") as f:
            main = [l for l in f if l.startswith("P") and main_thread(l) and "INVALID" not in l]
        rate_kept = len(main) / wall
    return target_wall, target_cpu, max(used - target_cpu, 0.0) / wall, rate_kept


def main_thread(line):
    """Whether an austin sample line ("P<pid>;T<iid>:<tid>;...") is of the
    process's main thread (its thread id is the process id)."""
    fields = line.split(";")
    return len(fields) > 1 and fields[1].split(":")[-1] == fields[0][1:]


def find(tool, python):
    """The tool on PATH, else beside the interpreter (a venv's bin), else None."""
    beside = os.path.join(os.path.dirname(python), tool)
    return shutil.which(tool) or (beside if os.access(beside, os.X_OK) else None)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", default="1,32")
    ap.add_argument("--rate", type=int, default=100)
    ap.add_argument("--work", type=int, default=60, help="inversions per run")
    ap.add_argument("--size", type=int, default=400, help="matrix size")
    ap.add_argument("--python", default=sys.executable)
    a = ap.parse_args()
    tools = ["bare", "sonde", "py-spy"] + (["austinp"] if find("austinp", a.python) else [])
    results = {}
    tmp = tempfile.mkdtemp(prefix="sonde-bench-native-")
    for r in range(a.rounds):
        for threads in [int(t) for t in a.threads.split(",")]:
            order = tools[r % len(tools):] + tools[:r % len(tools)]
            got = {}
            for tool in order:
                got[tool] = measure(tool, a.python, threads, a.rate, a.work, a.size,
                                    os.path.join(tmp, "%s-%d.out" % (tool, threads)))
            for tool in tools[1:]:
                wall, _cpu, sampler, kept = got[tool]
                results.setdefault((threads, tool), []).append(
                    (wall / got["bare"][0] - 1, sampler, kept, got["bare"][0]))
            print("round %d, %d threads: " % (r + 1, threads) +
                  ", ".join("%s %.2f s" % (t, got[t][0]) for t in tools), file=sys.stderr)
    shutil.rmtree(tmp, ignore_errors=True)
    print("native frames at %d Hz, %s, medians of %d rounds (target: %d x inv(%dx%d))"
          % (a.rate, a.python, a.rounds, a.work, a.size, a.size))
    print("%-8s %-7s %10s %10s %14s %12s" % ("threads", "tool", "bare (s)", "slowdown",
                                             "sampler CPU", "rate kept"))
    for (threads, tool), rows in sorted(results.items()):
        med = lambda i: statistics.median(row[i] for row in rows)  # noqa: E731
        kept = [row[2] for row in rows if row[2] is not None]
        print("%-8d %-7s %10.2f %9.1f%% %13.1f%% %9s" % (
            threads, tool, med(3), 100 * med(0), 100 * med(1),
            "%.0f Hz" % statistics.median(kept) if kept else "?"))


if __name__ == "__main__":
    main()
