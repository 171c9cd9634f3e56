"""What does `sonde run --torch` add to a PyTorch training loop, next to
torch.profiler and to `sonde run` alone?

Method. examples/torch_cnn.py (a small CNN: conv/batchnorm/relu/pool,
cross-entropy, backward, SGD with momentum, one intra-op thread) runs STEPS
training steps in a fresh process under four configurations:

- bare: `python examples/torch_cnn.py STEPS`;
- torch.profiler: the same program inside torch.profiler.profile
  (activities=[CPU], no shapes, no memory, no stack: what --torch records),
  then key_averages(), which a torch.profiler user reads;
- sonde run: every Python and C call, no operators;
- sonde run --torch: every call, and the operators placed beneath them.

Each configuration runs ROUNDS times, in an order that rotates from round
to round; the report gives medians of two figures: the training loop's
own wall time (printed by the program: start to end of the loop, so the
profiler's start-up and its work after the loop are left out) and the
whole process's wall time (import torch, the loop, writing the profile,
torch's post-processing). Added time is the median minus bare's.

    python3 bench/bench_torch.py [--python PY] [--steps N] [--rounds N]

PY needs torch (build/venv has it after `make test`).  These are wall
times: run it on a quiet machine (the report prints the load average).
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SONDE = os.path.join(ROOT, "build", "bin", "sonde")
PROGRAM = os.path.join(ROOT, "examples", "torch_cnn.py")

UNDER_TORCH_PROFILER = (
    "import runpy, sys\n"
    "from torch.profiler import profile, ProfilerActivity\n"
    "sys.argv = [sys.argv[1]] + sys.argv[2:]\n"
    "with profile(activities=[ProfilerActivity.CPU]) as prof:\n"
    "    runpy.run_path(sys.argv[0], run_name='__main__')\n"
    "prof.key_averages()\n")


def commands(python, steps):
    steps = str(steps)
    return {
        "bare": [python, PROGRAM, steps],
        "torch.profiler": [python, "-c", UNDER_TORCH_PROFILER, PROGRAM, steps],
        "sonde run": [SONDE, "run", "--python", python, "-l", "0", PROGRAM, steps],
        "sonde run --torch": [SONDE, "run", "--torch", "--python", python, "-l", "0", PROGRAM,
                              steps],
    }


def measure(cmd):
    """(loop seconds, process wall seconds) of one run."""
    start = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit("bench_torch: %s failed:\n%s" % (" ".join(cmd), proc.stderr[-2000:]))
    loop = float(re.search(r"^loop: ([0-9.]+) s$", proc.stdout, re.M).group(1))
    return loop, wall


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default=os.path.join(ROOT, "build", "venv", "bin", "python"))
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    cmds = commands(args.python, args.steps)
    names = list(cmds)
    times = {name: [] for name in names}
    for r in range(args.rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            times[name].append(measure(cmds[name]))
    bare_loop = statistics.median(t[0] for t in times["bare"])
    bare_wall = statistics.median(t[1] for t in times["bare"])
    print("torch_cnn.py %d steps, median of %d runs, %s (load average %.1f)"
          % (args.steps, args.rounds, args.python, os.getloadavg()[0]))
    print("%-18s %9s %9s %8s %9s %9s" % ("", "loop s", "added s", "x bare", "process s",
                                         "added s"))
    for name in names:
        loop = statistics.median(t[0] for t in times[name])
        wall = statistics.median(t[1] for t in times[name])
        print("%-18s %9.3f %9.3f %8.2f %9.3f %9.3f" % (name, loop, loop - bare_loop,
                                                       loop / bare_loop, wall, wall - bare_wall))


if __name__ == "__main__":
    main()
