"""What sampling a Python process from outside costs: sonde, py-spy, austin,
and on Python 3.15 the standard library's own sampler (profiling.sampling).

Method. The target is target_deep.py: one CPU-bound thread whose work runs
30 frames deep, and which prints on SIGUSR1 how many units of work it has
done and when (time.monotonic()), so its work rate over any window can be
read from outside. (With --async the target is target_async.py, the same
work inside three asyncio tasks that await each other, and the samplers
are sonde with and without --async and, on 3.15, profiling.sampling with
and without --async-aware.) Every measurement starts a fresh target, waits until
it works, and attaches one sampler to it for --seconds at one rate:

    sonde   record -p PID -d S -r HZ --mode MODE -f collapsed -o FILE
    py-spy  record --pid PID --duration S --rate HZ --format raw -o FILE
            --nonblocking (--idle with --mode wall)
    austin  -p PID -i 1000000/HZ (microseconds) -x S -o FILE
    profiling.sampling (the target's own interpreter, 3.15 and later)
            -m profiling.sampling attach -d S -r HZ --mode MODE --collapsed
            -o FILE PID

MODE is --mode's (wall by default: what austin and profiling.sampling
sample unless told otherwise, and py-spy with --idle; cpu weighs each
sample by the thread's CPU, read from /proc at every sample; gil and
exception, which py-spy and austin do not have, compare sonde with
profiling.sampling only).

Both py-spy and austin are told not to stop the target (sonde never does).
Per measurement:

- wall: seconds from starting the sampler to its exit (py-spy keeps going
  past its duration until it has taken duration x rate samples, so it can
  run much longer than asked when it falls behind);
- CPU: the sampler's user + system time, from getrusage(RUSAGE_CHILDREN)
  just before and after it is waited for; reported per second of wall
  time and per sample;
- samples: sonde's own count ("N samples in" on its summary line),
  py-spy's own count ("Samples: N" on its summary line), profiling.sampling's
  ("Captured N samples"), and for austin
  the sample lines of its output (one per thread per sample). The target
  has one thread, so each is the number of stacks taken; the kept rate is
  samples / wall;
- at the rates --slowdown-at names (100 Hz unless told), the target's
  slowdown: its work rate while sampled,
  against its rate over two windows without a sampler, right before and
  right after, half as long each (--seconds / 2):
  1 - rate sampled / rate unsampled. How much the two unsampled windows
  differ from each other is printed too: it is this machine's noise.

A round measures every sampler at every rate, in an order that rotates
from round to round so slow drifts of the machine hit each alike; the
report gives, per rate, the median over rounds of each figure, and how
sonde's CPU per second compares with each peer's.

    python3 bench/bench_sampler.py [--seconds S] [--rounds N]
                                   [--rates 100,1000,10000] [--python PY]
                                   [--slowdown-at 100,10000]
"""

import argparse
import os
import re
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import namedtuple

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH)
SONDE = os.path.join(ROOT, "build", "bin", "sonde")
VENV_BIN = os.path.join(ROOT, "build", "benchvenv", "bin")
TARGET = os.path.join(BENCH, "target_deep.py")
WARMUP = 0.2            # seconds the target works before a measurement
SLOWDOWN_HZ = {100}     # the rates at which the target's slowdown is measured (--slowdown-at)


MODE = ["wall"]         # --mode, for sonde and profiling.sampling (set by main)
ASYNC_TARGET = os.path.join(BENCH, "target_async.py")
TARGET_NOW = [TARGET]   # target_deep.py, or target_async.py with --async (set by main)


def sonde_command(exe, pid, seconds, hz, out):
    return [exe, "record", "-p", str(pid), "-d", str(seconds), "-r", str(hz),
            "--mode", MODE[0], "-f", "collapsed", "-o", out]


def sonde_async_command(exe, pid, seconds, hz, out):
    return sonde_command(exe, pid, seconds, hz, out) + ["--async"]


def stdlib_async_command(exe, pid, seconds, hz, out):
    return stdlib_command(exe, pid, seconds, hz, out)[:-1] + ["--async-aware", str(pid)]


def pyspy_command(exe, pid, seconds, hz, out):
    return [exe, "record", "--pid", str(pid), "--duration", str(seconds),
            "--rate", str(hz), "--format", "raw", "-o", out, "--nonblocking"] + (
                ["--idle"] if MODE[0] == "wall" else [])


def austin_command(exe, pid, seconds, hz, out):
    return [exe, "-p", str(pid), "-i", str(1000000 // hz), "-x", str(seconds),
            "-o", out]


def stdlib_command(exe, pid, seconds, hz, out):
    return [exe, "-m", "profiling.sampling", "attach", "-d", str(seconds), "-r", str(hz),
            "--mode", MODE[0], "--collapsed", "-o", out, str(pid)]


def count_from_log(pattern):
    """A sample counter that reads the sampler's own count from its log."""
    def count(log, out):
        found = re.search(pattern, log)
        return int(found.group(1)) if found else None
    return count


def austin_count(log, out):
    """Austin writes one line per thread per sample: P<pid>;T<tid>;..."""
    with open(out) as f:
        return sum(1 for line in f if line.startswith("P"))


Sampler = namedtuple("Sampler", "name exe command count")
# name, what to pip install, command, sample counter
PEERS = (("py-spy", "py-spy", pyspy_command,
          count_from_log(r"Samples: (\d+)")),
         ("austin", "austin-dist==3.7.0", austin_command, austin_count))


def find_samplers():
    """sonde, then each peer found in build/benchvenv/bin or on PATH."""
    if not os.access(SONDE, os.X_OK):
        sys.exit("bench_sampler: %s is missing: run 'make' first" % SONDE)
    samplers = [Sampler("sonde", SONDE, sonde_command,
                        count_from_log(r"sonde: (\d+) samples in"))]
    for name, package, command, count in PEERS:
        exe = os.path.join(VENV_BIN, name)
        if not os.access(exe, os.X_OK):
            exe = shutil.which(name)
        if exe is None:
            print("note: %s is neither in %s nor on PATH: skipped"
                  " (pip install %s)" % (name, VENV_BIN, package))
            continue
        samplers.append(Sampler(name, exe, command, count))
    return samplers


def first_line(command):
    return subprocess.run(command, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT,
                          text=True).stdout.strip().splitlines()[0]


class Target:
    """A fresh target_deep.py, working; a context manager that kills it."""

    def __init__(self, python, target=TARGET):
        self.proc = subprocess.Popen([python, target], stdout=subprocess.PIPE,
                                     text=True)
        if self.proc.stdout.readline().strip() != "ready":
            sys.exit("bench_sampler: %s did not start" % target)
        time.sleep(WARMUP)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.proc.kill()
        self.proc.wait()
        self.proc.stdout.close()

    def progress(self):
        """(units of work done, time.monotonic()) as the target sees them."""
        os.kill(self.proc.pid, signal.SIGUSR1)
        line = self.proc.stdout.readline().split()
        if len(line) != 2:
            sys.exit("bench_sampler: the target exited")
        return int(line[0]), float(line[1])

    def window(self, seconds):
        """(units, seconds) the target works over the next SECONDS."""
        units, start = self.progress()
        time.sleep(seconds)
        units_end, end = self.progress()
        return units_end - units, end - start


def cpu_of_children():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure(sampler, hz, seconds, python, out, log_path):
    """One sampler at one rate on a fresh target: a dict of figures."""
    slowdown = hz in SLOWDOWN_HZ
    with Target(python, TARGET_NOW[0]) as target, open(log_path, "w+") as log:
        if slowdown:
            before = target.window(seconds / 2)
        command = sampler.command(sampler.exe, target.proc.pid, seconds, hz,
                                  out)
        cpu = cpu_of_children()
        units, start = target.progress()
        began = time.monotonic()
        status = subprocess.call(command, stdout=log, stderr=subprocess.STDOUT)
        wall = time.monotonic() - began
        units_end, end = target.progress()
        cpu = cpu_of_children() - cpu
        if slowdown:
            after = target.window(seconds / 2)
        log.seek(0)
        text = log.read()
    samples = sampler.count(text, out) if status == 0 else None
    if samples is None:
        sys.exit("bench_sampler: %s failed (exit status %d):\n  %s\n%s"
                 % (sampler.name, status, " ".join(command), text))
    figures = {"wall": wall, "cpu/s": cpu / wall,
               "us/sample": 1e6 * cpu / samples, "kept": samples / wall}
    if slowdown:
        unsampled = (before[0] + after[0]) / (before[1] + after[1])
        sampled = (units_end - units) / (end - start)
        figures["slowdown"] = 1 - sampled / unsampled
        figures["noise"] = abs(before[0] / before[1]
                               - after[0] / after[1]) / unsampled
    return figures


def describe(figures):
    """One measurement's figures, in a line."""
    text = "wall %.2f s, CPU %.3f s/s, %.0f us/sample, kept %.0f Hz" % (
        figures["wall"], figures["cpu/s"], figures["us/sample"],
        figures["kept"])
    if "slowdown" in figures:
        text += ", slowdown %.1f%%" % (100 * figures["slowdown"])
    return text


def report(hz, seconds, rounds, samplers, runs):
    """The table for one rate: medians over rounds."""
    median = {s.name: {key: statistics.median(run[key] for run in runs[s.name])
                       for key in runs[s.name][0]} for s in samplers}
    print("\n%d Hz asked, %d s, median of %d rounds" % (hz, seconds, rounds))
    print("%-12s %7s %9s %14s %9s %7s %9s" % ("sampler", "wall s", "CPU s/s",
          "CPU us/sample", "kept Hz", "kept %", "slowdown"))
    for s in samplers:
        m = median[s.name]
        print("%-12s %7.2f %9.3f %14.1f %9.0f %6.1f%% %9s" % (
            s.name, m["wall"], m["cpu/s"], m["us/sample"], m["kept"],
            100 * m["kept"] / hz,
            "%.1f%%" % (100 * m["slowdown"]) if "slowdown" in m else "-"))
    for s in samplers[1:]:
        print("sonde/%s CPU per second: %.2f" % (
            s.name, median["sonde"]["cpu/s"] / median[s.name]["cpu/s"]))
    if "sonde-async" in median and "stdlib-async" in median:
        print("sonde-async/stdlib-async CPU per second: %.2f" % (
            median["sonde-async"]["cpu/s"] / median["stdlib-async"]["cpu/s"]))
    if hz in SLOWDOWN_HZ:
        noise = statistics.median(run["noise"] for s in samplers
                                  for run in runs[s.name])
        print("noise: the unsampled windows before and after differ by %.1f%%"
              " of the target's rate (median)" % (100 * noise))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=5,
                        help="how long each sampler samples (default 5)")
    parser.add_argument("--rounds", type=int, default=3,
                        help="rounds; the report takes medians (default 3)")
    parser.add_argument("--rates", default="100,1000,10000",
                        help="sampling rates in Hz, comma-separated")
    parser.add_argument("--python", default="python3",
                        help="the target's interpreter (default python3)")
    parser.add_argument("--mode", choices=("wall", "cpu", "gil", "exception"), default="wall",
                        help="sonde's and profiling.sampling's --mode, py-spy's --idle for"
                        " wall (default wall, what austin samples by default; sonde's own"
                        " default is cpu); with gil or exception, py-spy and austin (which"
                        " have no such mode) are left out")
    parser.add_argument("--slowdown-at", default="100",
                        help="rates at which the target's slowdown is measured, comma-separated"
                        " (default 100; each adds two unsampled windows to the measurement)")
    parser.add_argument("--async", dest="use_async", action="store_true",
                        help="the target runs in a chain of asyncio tasks (target_async.py): "
                        "sonde with and without --async, and on 3.15 profiling.sampling with "
                        "and without --async-aware (py-spy and austin are left out)")
    args = parser.parse_args()
    MODE[0] = args.mode
    SLOWDOWN_HZ.clear()
    SLOWDOWN_HZ.update(int(r) for r in args.slowdown_at.split(","))
    rates = [int(r) for r in args.rates.split(",")]
    python = shutil.which(args.python)
    if python is None:
        sys.exit("bench_sampler: cannot run '%s'" % args.python)

    samplers = find_samplers()
    if args.mode in ("gil", "exception"):
        samplers = [s for s in samplers if s.name == "sonde"]
    version = first_line([python, "-c", "import sys; print(sys.version_info[1])"])
    stdlib_count = count_from_log(r"Captured (\d+) samples")
    if args.use_async:
        TARGET_NOW[0] = ASYNC_TARGET
        samplers = samplers[:1] + [Sampler("sonde-async", SONDE, sonde_async_command,
                                           samplers[0].count)]
    if int(version) >= 15:
        samplers.append(Sampler("stdlib", python, stdlib_command, stdlib_count))
        if args.use_async:
            samplers.append(Sampler("stdlib-async", python, stdlib_async_command,
                                    stdlib_count))
    for s in samplers:
        print("%-7s %s (%s)"
              % (s.name, first_line([s.exe, "--version"]), s.exe)
              + (" -m profiling.sampling" if s.name.startswith("stdlib") else ""))
    print("--mode %s for sonde%s" % (args.mode, " and profiling.sampling" if int(version) >= 15
                                     else ""))
    print("target  Python %s (%s), %s, one thread; %d CPUs here"
          % (first_line([python, "-c", "import platform; "
                         "print(platform.python_version())"]),
             python, "three asyncio tasks awaiting each other, 10 coroutines deep"
             if args.use_async else "30 frames deep", os.cpu_count()), flush=True)

    runs = {hz: {s.name: [] for s in samplers} for hz in rates}
    with tempfile.TemporaryDirectory(prefix="bench_sampler.") as tmp:
        for r in range(args.rounds):
            order = samplers[r % len(samplers):] + samplers[:r % len(samplers)]
            for hz in rates:
                for s in order:
                    name = "%s-%d-%d" % (s.name, hz, r)
                    figures = measure(s, hz, args.seconds, python,
                                      os.path.join(tmp, name + ".out"),
                                      os.path.join(tmp, name + ".log"))
                    runs[hz][s.name].append(figures)
                    print("round %d/%d %5d Hz  %-12s %s" % (
                        r + 1, args.rounds, hz, s.name, describe(figures)),
                        file=sys.stderr, flush=True)
    for hz in rates:
        report(hz, args.seconds, args.rounds, samplers, runs[hz])


if __name__ == "__main__":
    main()
