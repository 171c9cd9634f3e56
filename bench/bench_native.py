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

With --stalls THREADS (e.g. 1,32,128) it measures instead how long a
sampler keeps a thread from running, as the thread sees it: target_stalls.py
spins in C on its Python main thread for --seconds beside THREADS - 1
Python threads that wait (a process with many threads), and records every
gap of over 5 us between two reads of the clock (stall_probe.c). Per tool
and rate (--rates, default 100,1000): the share of the time the thread did
not run, less bare's in the same round (the target's slowdown), the median
and 99th percentile gap (bare's gaps are the scheduler's; a sampler's stops
add to them), the sampler's CPU (what the sampler and its target used, less
what the target counted of itself on exit) and the rate kept; "sonde-py" is sonde
record without --native, the Python-only walk that --native adds to.
A run that does not end in 20 times --seconds (at least 60 s) is a hang:
it is killed, not tried again, and its row says how many runs hung.

    python3 bench/bench_native.py [--rounds N] [--threads 1,32] [--rate HZ]
                                  [--work ROUNDS] [--size N] [--python PY]
    python3 bench/bench_native.py --stalls 1,32,128 [--rates 100,1000]
                                  [--seconds S] [--rounds N] [--python PY]
                                  [--tools sonde,sonde-py,py-spy,austinp]
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

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH)
SONDE = os.path.join(ROOT, "build", "bin", "sonde")
TARGET = os.path.join(BENCH, "target_numpy.py")
STALLS = os.path.join(BENCH, "target_stalls.py")
PROBE = os.path.join(ROOT, "build", "bench", "libstall_probe.so")


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def sampled(tool, python, rate, cmd, out):
    """cmd as tool starts it, sampling at rate Hz into out."""
    if tool in ("sonde", "sonde-py"):
        native = ["--native"] if tool == "sonde" else []
        cmd = [SONDE, "record"] + native + ["-r", str(rate), "-f", "collapsed", "-o", out,
                                            "--"] + cmd
    elif tool == "py-spy":
        cmd = [find("py-spy", python), "record", "--native", "-r", str(rate), "--format", "raw", "-o", out, "--"] + cmd
    elif tool == "austinp":
        cmd = [find("austinp", python), "-i", str(1000000 // rate), "-o", out] + cmd
    return cmd


def started(tool, python, rate, cmd, out, env=None, timeout=300):
    """(the run, its wall time, the CPU time it and its children used), or
    None when the tool hung (no end in timeout seconds: not tried again, a
    hang repeats) or failed three times (py-spy and austinp sometimes fail
    to read a process that is starting)."""
    for attempt in range(3):
        before = children_cpu()
        t0 = time.perf_counter()
        # Its own session, so that a hang is killed with the target it left stopped.
        proc = subprocess.Popen(sampled(tool, python, rate, cmd, out), env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                universal_newlines=True, start_new_session=True)
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:  # austinp hangs with 128 threads at 1000 Hz
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            print("%s did not end in %d s" % (tool, timeout), file=sys.stderr)
            return None
        run = subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)
        wall = time.perf_counter() - t0
        if run.returncode == 0:
            return run, wall, children_cpu() - before
        print("%s failed (attempt %d): %s" % (tool, attempt + 1, run.stderr[-300:]),
              file=sys.stderr)
    return None


def kept_rate(tool, run, wall, out):
    """Samples per second of the run, or None where the tool does not say."""
    if tool in ("sonde", "sonde-py"):
        s = re.search(r"(\d+) samples in ([\d.]+) s", run.stderr)
        return int(s.group(1)) / float(s.group(2))
    if tool == "py-spy":
        s = re.search(r"Samples: (\d+)", run.stderr + run.stdout)
        return int(s.group(1)) / wall if s else None
    if tool == "austinp":
        with open(out, errors="replace") as f:
            main = [l for l in f if l.startswith("P") and main_thread(l) and "INVALID" not in l]
        return len(main) / wall
    return None


def measure(tool, python, threads, rate, work, size, out):
    """(target wall, target cpu, sampler cpu, samples per second or None)."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads))
    got = started(tool, python, rate, [python, TARGET, str(work), str(size)], out, env)
    if got is None:
        raise SystemExit("%s did not complete a run" % tool)
    run, wall, used = got
    m = re.search(r"elapsed ([\d.]+) cpu ([\d.]+)", run.stdout)
    if not m:
        raise SystemExit("%s printed no figures: %s" % (tool, run.stdout[-2000:]))
    target_wall, target_cpu = float(m.group(1)), float(m.group(2))
    return target_wall, target_cpu, max(used - target_cpu, 0.0) / wall, kept_rate(tool, run,
                                                                                  wall, out)


def measure_stalls(tool, python, threads, rate, seconds, out):
    """(stalled share, p50 gap us, p99 gap us, sampler cpu, rate kept), or
    None when the tool did not complete a run (the target spins for seconds
    of its own clock, so a run lasting 20 times longer is a hang)."""
    got = started(tool, python, rate, [python, STALLS, PROBE, str(seconds), str(threads)], out,
                  timeout=max(60, 20 * seconds))
    if got is None:
        return None
    run, wall, used = got
    m = re.search(r"stalled ([\d.]+) p50 ([\d.]+) p99 ([\d.]+) max [\d.]+ cpu ([\d.]+)",
                  run.stdout)
    if not m:
        raise SystemExit("%s printed no figures: %s" % (tool, run.stdout[-2000:]))
    stalled, p50, p99, target_cpu = map(float, m.groups())
    # What the target did not use itself (by its own count, on exit) is the sampler's.
    sampler = max(used - target_cpu, 0.0) / wall
    return stalled, p50, p99, sampler, kept_rate(tool, run, wall, out)

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
    ap.add_argument("--stalls", help="thread counts: measure stalls instead (see above)")
    ap.add_argument("--rates", default="100,1000", help="with --stalls")
    ap.add_argument("--seconds", type=float, default=3.0, help="with --stalls")
    ap.add_argument("--tools", help="with --stalls: the samplers measured (default: all)")
    a = ap.parse_args()
    tools = ["bare", "sonde", "py-spy"] + (["austinp"] if find("austinp", a.python) else [])
    if a.stalls:
        return stalls(a, tools)
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


def stalls(a, tools):
    if not os.path.exists(PROBE):
        raise SystemExit("bench_native.py: %s is missing: run 'make bench-native' (it builds it)"
                         % PROBE)
    results = {}
    tmp = tempfile.mkdtemp(prefix="sonde-bench-stalls-")
    tools = tools[:2] + ["sonde-py"] + tools[2:]  # the Python-only walk, for its CPU
    if a.tools:
        tools = ["bare"] + [t for t in a.tools.split(",") if t in tools and t != "bare"]
    counts = [int(t) for t in a.stalls.split(",")]
    rates = [int(r) for r in a.rates.split(",")]
    for r in range(a.rounds):
        for threads in counts:
            for rate in rates:
                order = tools[r % len(tools):] + tools[:r % len(tools)]
                got = {tool: measure_stalls(tool, a.python, threads, rate, a.seconds,
                                            os.path.join(tmp, "%s.out" % tool))
                       for tool in order}
                if got["bare"] is None:
                    raise SystemExit("the target did not complete a run on its own")
                for tool in tools:
                    results.setdefault((threads, rate, tool), []).append(
                        None if got[tool] is None else
                        (got[tool][0] - got["bare"][0],) + got[tool][1:])
                print("round %d, %d threads, %d Hz: " % (r + 1, threads, rate) +
                      ", ".join("%s %s" % (t, "hung" if got[t] is None else
                                           "%.1f%%" % (100 * got[t][0])) for t in tools),
                      file=sys.stderr)
    shutil.rmtree(tmp, ignore_errors=True)
    print("stalls of a spinning Python thread, %.1f s per run, %s, medians of %d rounds"
          % (a.seconds, a.python, a.rounds))
    print("%-8s %-6s %-9s %11s %10s %10s %12s %10s" % (
        "threads", "rate", "tool", "slowdown", "gap p50", "gap p99", "sampler CPU", "rate kept"))
    for (threads, rate, tool), every in sorted(results.items()):
        rows = [row for row in every if row is not None]
        hung = "" if len(rows) == len(every) else "  (%d of %d runs hung or failed)" % (
            len(every) - len(rows), len(every))
        if not rows:
            print("%-8d %-6d %-9s %s" % (threads, rate, tool, hung.strip(" ()")))
            continue
        med = lambda i: statistics.median(row[i] for row in rows)  # noqa: E731
        kept = [row[4] for row in rows if row[4] is not None]
        print("%-8d %-6d %-9s %10.2f%% %7.0f us %7.0f us %11.1f%% %10s%s" % (
            threads, rate, tool, 100 * med(0), med(1), med(2), 100 * med(3),
            "%.0f Hz" % statistics.median(kept) if kept else "-", hung))


if __name__ == "__main__":
    main()
