"""How much time does sonde's line profiler add, next to line_profiler's?

Method. The program is the seeds' Julia set (examples/julia.py): run_julia
below does what its main() does, without the print. Two workloads profile
one function each while it runs: "hot" profiles calculate_z, where nearly
all the time goes (every line it runs is counted and timed); "cold"
profiles run_julia itself, which runs two lines once and leaves the work
to functions nobody asked to profile, so what it costs is what unselected
code pays for a profiler being on.

Every measurement runs in a fresh subprocess of the interpreter being
measured, so profilers never share a process. The child runs the Julia set
once unprofiled to warm up (imports, caches, the interpreter's
specialisation), then times REPS runs under one configuration with
time.process_time() (CPU time, so time spent waiting for the CPU on a busy
machine is not counted) and prints their median as JSON. Each run gets a
fresh profiler with the workload's one function registered; the timing
covers enabling it, the run and disabling it, not creating or freeing the
profiler. Configurations: "bare" (no profiler), "line_profiler" (PyPI's
LineProfiler, enable_by_count/disable_by_count, as kernprof -l does) where
importable, and "sonde" (sonde.LineProfiler, enable/disable).

Each round runs every configuration once per workload, in an order that
rotates from round to round, so slow drifts of the machine hit all of
them alike. The report shows, per workload, the median over rounds of
each configuration's time, its slowdown (time / bare), and the key
figure: (sonde - bare) / (line_profiler - bare), the time sonde adds as a
fraction of what line_profiler adds. sonde's target is 0.5 or less on the
hot workload; on the cold one, the slowdowns say what unselected code pays.

    python3 bench/bench_lines.py [--python PY ...] [--rounds N] [--quick]
"""

import gc
import json
import os
import statistics
import sys
import time

import harness

EXAMPLES = os.path.join(os.path.dirname(harness.BENCH), "examples")
sys.path.insert(0, EXAMPLES)

from julia import calculate_z, coordinates  # noqa: E402  (after the sys.path line)

SIZE = (450, 100)        # width, maxiter: about 0.27 s bare on CPython 3.11
QUICK_SIZE = (200, 100)  # about 0.05 s
REPS = 3
TARGET = 0.5


def run_julia(width, maxiter):
    """examples/julia.py's main() without its print."""
    zs, cs = coordinates(width)
    return calculate_z(maxiter, zs, cs)


WORKLOADS = {"hot": calculate_z, "cold": run_julia}  # the one function profiled


def session(config, func):
    """A fresh profiler of one configuration, func registered: (start, stop)."""
    if config == "bare":
        return (lambda: None), (lambda: None)
    if config == "line_profiler":
        from line_profiler import LineProfiler
        prof = LineProfiler(func)
        return prof.enable_by_count, prof.disable_by_count
    if config == "sonde":
        import sonde
        prof = sonde.LineProfiler(func)
        return prof.enable, prof.disable
    raise ValueError("unknown configuration: " + config)


def child(workload, config, reps, width, maxiter):
    """In the fresh subprocess: warm up, time reps runs, print the median."""
    width, maxiter = int(width), int(maxiter)
    run_julia(width, maxiter)
    times = []
    for _ in range(int(reps)):
        start, stop = session(config, WORKLOADS[workload])
        gc.collect()
        t0 = time.process_time()
        start()
        run_julia(width, maxiter)
        stop()
        times.append(time.process_time() - t0)
    print(json.dumps(statistics.median(times)))


def run(python, env, rounds, size):
    """Median CPU seconds per (workload, configuration), and the configurations."""
    configs = ["bare"]
    if harness.probe(python, env, "import line_profiler") is None:
        print("note: line_profiler is not importable by %s; skipped" % python)
    else:
        configs.append("line_profiler")
    configs.append("sonde")
    times = {(w, c): [] for w in WORKLOADS for c in configs}
    for r in range(rounds):
        order = configs[r % len(configs):] + configs[:r % len(configs)]
        for workload in WORKLOADS:
            for config in order:
                times[workload, config].append(harness.measure(
                    "bench_lines", python, env, (workload, config, REPS) + tuple(size)))
        print("  round %d/%d done" % (r + 1, rounds), flush=True)
    return {key: statistics.median(ts) for key, ts in times.items()}, configs


def added(med, workload):
    """sonde's added time as a fraction of line_profiler's added time."""
    bare = med[workload, "bare"]
    return (med[workload, "sonde"] - bare) / (med[workload, "line_profiler"] - bare)


def report(python, version, rounds, size, med, configs):
    """Print the tables; return the one-line summary."""
    profilers = configs[1:]
    print("\nPython %s (%s): Julia set, width %d, maxiter %d; median CPU seconds"
          " over %d rounds of %d runs" % ((version, python) + size + (rounds, REPS)))
    print("%-8s %-12s %8s" % ("workload", "profiled", "bare")
          + "".join("  %17s" % c for c in profilers))
    for w, func in WORKLOADS.items():
        bare = med[w, "bare"]
        cells = ["  %8.3fs %6.2fx" % (med[w, c], med[w, c] / bare) for c in profilers]
        print("%-8s %-12s %7.3fs" % (w, func.__name__, bare) + "".join(cells))
    slowdowns = {w: ", ".join("%s %.2fx" % (c, med[w, c] / med[w, "bare"]) for c in profilers)
                 for w in WORKLOADS}
    if "line_profiler" not in configs:
        return "Python %s: hot: %s; cold: %s; no line_profiler, no ratio" % (
            version, slowdowns["hot"], slowdowns["cold"])
    print("\nsonde's added time relative to line_profiler's:"
          " (sonde - bare) / (line_profiler - bare)")
    print("  ".join("%s %.2f" % (w, added(med, w)) for w in WORKLOADS))
    return "Python %s: hot: %s, added vs line_profiler %.2f (target <= %.2f %s); " \
           "cold: %s, added vs line_profiler %.2f" % (
               version, slowdowns["hot"], added(med, "hot"), TARGET,
               "met" if added(med, "hot") <= TARGET else "MISSED",
               slowdowns["cold"], added(med, "cold"))


def main():
    pythons, rounds, quick = harness.arguments(__doc__, "a smaller Julia set")
    size = QUICK_SIZE if quick else SIZE
    env = harness.child_env()
    versions = [harness.check("bench_lines", python, env) for python in pythons]
    summaries = []
    for python, version in zip(pythons, versions):
        print("measuring %s (Python %s), %d rounds" % (python, version, rounds), flush=True)
        med, configs = run(python, env, rounds, size)
        summaries.append(report(python, version, rounds, size, med, configs))
    print()
    print("\n".join(summaries))


if __name__ == "__main__":
    main()
