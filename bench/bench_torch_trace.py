"""How long does a training loop's trace take to write, with sonde and with
torch.profiler's export_chrome_trace?

Method. examples/torch_cnn.py runs STEPS training steps (default 100) in a
fresh process, ROUNDS times per configuration, in an order that rotates
from round to round:

- torch.profiler: the program inside torch.profiler.profile (CPU activity,
  what --torch records); timed in the process, from the end of the
  program to the end of the `with` block (torch stops and collects its
  events), and from there to the end of prof.export_chrome_trace(FILE);
- sonde -f tensorboard / -f chrome: `sonde run --torch` writing the trace
  TensorBoard's plugin reads, and the Chrome trace; timed from the end of
  the program (the wrapper prints CLOCK_MONOTONIC as its last act) to the
  end of sonde, which then stops recording and writes the file, less the
  same time of a bare run: the interpreter's own shutdown (with torch
  loaded, a second or more) is in both.

The report gives medians of those times, wall and CPU, and the files'
sizes.

    python3 bench/bench_torch_trace.py [--python PY] [--steps N] [--rounds N]

PY needs torch (build/venv has it after `make test`).  Compare the CPU
seconds (each process's own, bare's shutdown taken off sonde's): the wall
times need a quiet machine (the report prints the load average).
"""

import argparse
import glob
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SONDE = os.path.join(ROOT, "build", "bin", "sonde")
PROGRAM = os.path.join(ROOT, "examples", "torch_cnn.py")

# Runs the program, then prints when it ended (CLOCK_MONOTONIC, as the
# bench's time.monotonic reads it).
AFTER_PROGRAM = (
    "import runpy, sys, time\n"
    "sys.argv = sys.argv[1:]\n"
    "runpy.run_path(sys.argv[0], run_name='__main__')\n"
    "print('ended: %.6f, CPU %.6f' % (time.monotonic(), time.process_time()))\n")

UNDER_TORCH_PROFILER = (
    "import runpy, sys, time\n"
    "from torch.profiler import profile, ProfilerActivity\n"
    "out, sys.argv = sys.argv[1], sys.argv[2:]\n"
    "with profile(activities=[ProfilerActivity.CPU]) as prof:\n"
    "    runpy.run_path(sys.argv[0], run_name='__main__')\n"
    "    ended, ended_cpu = time.monotonic(), time.process_time()\n"
    "stopped, stopped_cpu = time.monotonic(), time.process_time()\n"
    "prof.export_chrome_trace(out)\n"
    "print('wall %.6f %.6f, CPU %.6f %.6f' % (stopped - ended, time.monotonic() - stopped,\n"
    "                                        stopped_cpu - ended_cpu,\n"
    "                                        time.process_time() - stopped_cpu))\n")


def run(cmd):
    """(stdout, when it ended, the CPU seconds of cmd and its children)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True)
    done = time.monotonic()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        sys.exit("bench_torch_trace: %s failed:\n%s" % (" ".join(cmd), proc.stderr[-2000:]))
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return proc.stdout, done, cpu


def torch_profiler(python, steps, work):
    """((wall, CPU) seconds from the program's end to the written file,
    of them export_chrome_trace's (wall, CPU), the file's bytes)."""
    out = os.path.join(work, "torch.json")
    stdout, _, _ = run([python, "-c", UNDER_TORCH_PROFILER, out, PROGRAM, str(steps)])
    stop, export, stop_cpu, export_cpu = map(float, re.search(
        r"^wall ([0-9.]+) ([0-9.]+), CPU ([0-9.]+) ([0-9.]+)$", stdout, re.M).groups())
    return (stop + export, stop_cpu + export_cpu), (export, export_cpu), os.path.getsize(out)


def after_program(cmd, work, steps):
    """(wall, CPU) seconds from the end of the program that cmd runs (the
    wrapper, then PROGRAM) to the end of cmd; CPU: all of cmd's processes'
    less what the program's own process had used by its end."""
    wrapper = os.path.join(work, "after.py")
    with open(wrapper, "w") as f:
        f.write(AFTER_PROGRAM)
    stdout, done, cpu = run(cmd + [wrapper, PROGRAM, str(steps)])
    ended, ended_cpu = map(float, re.search(r"^ended: ([0-9.]+), CPU ([0-9.]+)$", stdout,
                                            re.M).groups())
    return done - ended, cpu - ended_cpu


def bare(python, steps, work):
    return after_program([python], work, steps), None, 0


def sonde(python, steps, work, fmt):
    out = os.path.join(work, "sonde-" + fmt)
    shutil.rmtree(out, ignore_errors=True)
    target = out if fmt == "tensorboard" else out + ".json"
    cmd = [SONDE, "run", "--torch", "--python", python, "-f", fmt, "-o", target, "-l", "0"]
    seconds = after_program(cmd, work, steps)
    files = glob.glob(os.path.join(out, "*.pt.trace.json")) if fmt == "tensorboard" else [target]
    return seconds, None, sum(os.path.getsize(f) for f in files)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default=os.path.join(ROOT, "build", "venv", "bin", "python"))
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    configs = {
        "torch.profiler": lambda work: torch_profiler(args.python, args.steps, work),
        "bare": lambda work: bare(args.python, args.steps, work),
        "sonde -f tensorboard": lambda work: sonde(args.python, args.steps, work, "tensorboard"),
        "sonde -f chrome": lambda work: sonde(args.python, args.steps, work, "chrome"),
    }
    names = list(configs)
    results = {name: [] for name in names}
    with tempfile.TemporaryDirectory() as work:
        for r in range(args.rounds):
            for name in names[r % len(names):] + names[:r % len(names)]:
                results[name].append(configs[name](work))

    def median(name, part, i):
        return statistics.median(r[part][i] for r in results[name])

    print("torch_cnn.py %d steps, median of %d runs, %s (load average %.1f)"
          % (args.steps, args.rounds, args.python, os.getloadavg()[0]))
    print("bare run, from the program's end to the process's (the interpreter's shutdown): "
          "%.3f s, CPU %.3f s" % (median("bare", 0, 0), median("bare", 0, 1)))
    print("%-22s %20s %20s %10s" % ("to the file", "wall s", "CPU s", "bytes"))
    cpu = {}
    for name in names[:1] + names[2:]:
        # sonde's: what it adds after the program to a bare run's
        less = (median("bare", 0, 0), median("bare", 0, 1)) if name != "torch.profiler" else (0, 0)
        wall, cpu[name] = median(name, 0, 0) - less[0], median(name, 0, 1) - less[1]
        print("%-22s %20.3f %20.3f %10d" % (name, wall, cpu[name],
                                            statistics.median(r[2] for r in results[name])))
    print("(of torch.profiler's, export_chrome_trace: %.3f s, CPU %.3f s)"
          % (median("torch.profiler", 1, 0), median("torch.profiler", 1, 1)))
    for name in names[2:]:
        print("%s / torch.profiler: %.2fx the CPU time" % (name, cpu[name] / cpu["torch.profiler"]))


if __name__ == "__main__":
    main()
