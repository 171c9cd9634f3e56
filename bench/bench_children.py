"""bench_children.py - what following children costs (issue 27): the CPU
`sonde run --subprocesses` adds per process of a pool, beside the CPU `sonde
run` adds to one process doing one worker's work, in the same run.

The work is call-heavy (a small function called N times), so that what a
tracer adds shows.  Four runs a round, each its CPU time (the process tree's,
user + system, from getrusage of the waited children):

  one       python prog.py one          one process: work(N) once
  sonde one sonde run prog.py one
  pool      python prog.py METHOD K     K workers (fork or spawn), work(N) each
  sonde pool sonde run --subprocesses prog.py METHOD K

Added per process: (sonde pool - pool) / (K + 1) -- the workers and the
program -- against (sonde one - one).  The claim: at most 1x.  Medians of
the rounds; the machine is shared, so read the ratio, not the times.

  build/venv/bin/python bench/bench_children.py [--rounds R] [--workers K] [--calls N]

Not a test: nothing is asserted.
"""

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SONDE = os.path.join(os.path.dirname(HERE), "build", "bin", "sonde")

PROGRAM = r'''
import multiprocessing, sys

def leaf(i):
    return i

def work(n):
    for i in range(n):
        leaf(i)
    return n

if __name__ == "__main__":
    n = int(sys.argv[3])
    if sys.argv[1] == "one":
        work(n)
    else:
        with multiprocessing.get_context(sys.argv[1]).Pool(int(sys.argv[2])) as pool:
            pool.map(work, [n] * int(sys.argv[2]), chunksize=1)
'''


def cpu_of(args, cwd):
    """CPU seconds (user + system) of the command and every process it waited for."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(args, cwd=cwd, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--calls", type=int, default=300000)
    parser.add_argument("--python", default=sys.executable)
    o = parser.parse_args()
    env = dict(os.environ, SONDE_PYTHON=o.python)
    os.environ.update(env)
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "prog.py"), "w") as f:
            f.write(PROGRAM)
        k, n = str(o.workers), str(o.calls)
        print("python %s, %d workers, %d calls each, %d rounds (CPU seconds, medians)"
              % (o.python, o.workers, o.calls, o.rounds))
        for method in ("fork", "spawn"):
            added_one, added_each = [], []
            for _ in range(o.rounds):
                one = cpu_of([o.python, "prog.py", "one", k, n], d)
                sonde_one = cpu_of([SONDE, "run", "-o", "one.prof", "prog.py", "one", k, n], d)
                pool = cpu_of([o.python, "prog.py", method, k, n], d)
                sonde_pool = cpu_of([SONDE, "run", "--subprocesses", "-o", "pool.prof",
                                     "prog.py", method, k, n], d)
                added_one.append(sonde_one - one)
                added_each.append((sonde_pool - pool) / (o.workers + 1))
            a, b = statistics.median(added_one), statistics.median(added_each)
            print("%-6s added to one process %.3f s; per process of the pool %.3f s; "
                  "ratio %.2f" % (method, a, b, b / a if a > 0 else float("nan")))


if __name__ == "__main__":
    main()
