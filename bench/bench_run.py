"""How much time does sonde's deterministic profiler add, next to cProfile's?

Method. Every measurement runs in a fresh subprocess of the interpreter
being measured, so profilers never share a process. The child imports one
workload from workloads_run.py, calls it once unprofiled to warm up
(imports, caches, the interpreter's specialisation), then times REPS
calls under one configuration with time.process_time() (CPU time, so
time spent waiting for the CPU on a busy machine is not counted) and
prints their median as JSON. Each call gets a fresh profiling session; the
timing covers start, the call and stop, not creating or freeing the
profiler. Configurations: "bare" (no profiler), "floor" (a hook that does
nothing, installed the way sonde installs its own: noop_hook.c, compiled
here for each interpreter), "cprofile", "sonde", and "yappi" (CPU clock,
builtins on) and "pyinstrument" where importable.

Each round runs every configuration once per workload, in an order that
rotates from round to round, so slow drifts of the machine hit all of
them alike. The report shows, per workload, the median over rounds of
each configuration's time, its slowdown (time / bare), and the key
figure: (profiler - bare) / (cprofile - bare), the time a profiler adds
as a fraction of what cProfile adds. sonde's target is 0.5 or less; the
floor's figure is what the interpreter's hook costs before a profiler does
any work, so no profiler built on that hook can go below it.

    python3 bench/bench_run.py [--python PY ...] [--rounds N] [--quick]
"""

import gc
import json
import os
import statistics
import subprocess
import time

import harness
from workloads_run import SIZES, WORKLOADS

PEERS = ("yappi", "pyinstrument")
REPS = 3
TARGET = 0.5


def session(config):
    """A fresh profiling session of one configuration: (start, stop)."""
    if config == "bare":
        return (lambda: None), (lambda: None)
    if config == "floor":
        import noop_hook
        return noop_hook.on, noop_hook.off
    if config == "cprofile":
        import cProfile
        prof = cProfile.Profile()
        return prof.enable, prof.disable
    if config == "sonde":
        import sonde
        prof = sonde.Profile()
        return prof.enable, prof.disable
    if config == "yappi":
        import yappi
        yappi.clear_stats()
        yappi.set_clock_type("cpu")
        return (lambda: yappi.start(builtins=True)), yappi.stop
    if config == "pyinstrument":
        import pyinstrument
        prof = pyinstrument.Profiler()
        return prof.start, prof.stop
    raise ValueError("unknown configuration: " + config)


def child(workload, size, config, reps):
    """In the fresh subprocess: warm up, time reps calls, print the median."""
    func, size = WORKLOADS[workload], int(size)
    func(size)
    times = []
    for _ in range(int(reps)):
        start, stop = session(config)
        gc.collect()
        t0 = time.process_time()
        start()
        func(size)
        stop()
        times.append(time.process_time() - t0)
    print(json.dumps(statistics.median(times)))


def child_env(python):
    return harness.child_env(floor_dir(python))


def floor_dir(python):
    return os.path.join(harness.BUILD, "bench", os.path.basename(os.path.dirname(os.path.dirname(
        os.path.realpath(python)))))


def build_floor(python):
    """Compiles noop_hook.c for python; False (with a note) when it cannot."""
    info = harness.probe(python, dict(os.environ), "import sysconfig as s; print(s.get_paths()"
                 "['include'] + ' ' + s.get_config_var('EXT_SUFFIX'))")
    out = floor_dir(python)
    if info:
        include, suffix = info.split()
        os.makedirs(out, exist_ok=True)
        cc = os.environ.get("CC", "cc")
        # Compiled by a compiler the interpreter itself starts: one in a
        # root of its own (tests/sid) has its headers and C library there.
        done = subprocess.run([python, "-c", "import subprocess, sys; "
                               "sys.exit(subprocess.call(sys.argv[1:]))",
                               cc, "-O2", "-shared", "-fPIC", "-I" + include,
                               os.path.join(harness.BENCH, "noop_hook.c"),
                               "-o", os.path.join(out, "noop_hook" + suffix)])
        if done.returncode == 0:
            return True
    print("note: cannot build noop_hook.c for %s; the floor is skipped" % python)
    return False


def run(python, env, rounds, quick):
    """Median CPU seconds per (workload, configuration), and the configurations."""
    configs = ["bare"] + (["floor"] if build_floor(python) else []) + ["cprofile", "sonde"]
    for peer in PEERS:
        if harness.probe(python, env, "import " + peer) is None:
            print("note: %s is not importable by %s; skipped" % (peer, python))
        else:
            configs.append(peer)
    times = {(w, c): [] for w in WORKLOADS for c in configs}
    for r in range(rounds):
        order = configs[r % len(configs):] + configs[:r % len(configs)]
        for workload in WORKLOADS:
            size = SIZES[workload][1 if quick else 0]
            for config in order:
                times[workload, config].append(
                    harness.measure("bench_run", python, env, (workload, size, config, REPS)))
        print("  round %d/%d done" % (r + 1, rounds), flush=True)
    return {key: statistics.median(ts) for key, ts in times.items()}, configs


def added(med, workload, config):
    """config's added time as a fraction of cProfile's added time."""
    bare = med[workload, "bare"]
    return (med[workload, config] - bare) / (med[workload, "cprofile"] - bare)


def report(python, version, rounds, med, configs):
    """Print the tables; return the one-line summary."""
    profilers = configs[1:]
    others = [c for c in profilers if c != "cprofile"]
    print("\nPython %s (%s): median CPU seconds over %d rounds of %d calls"
          % (version, python, rounds, REPS))
    print("%-10s %8s" % ("workload", "bare") + "".join("  %17s" % c for c in profilers))
    for w in WORKLOADS:
        bare = med[w, "bare"]
        cells = ["  %8.3fs %6.2fx" % (med[w, c], med[w, c] / bare) for c in profilers]
        print("%-10s %7.3fs" % (w, bare) + "".join(cells))
    print("\nadded time relative to cProfile's: (profiler - bare) / (cprofile - bare)")
    print("%-10s" % "workload" + "".join("  %12s" % c for c in others))
    for w in WORKLOADS:
        print("%-10s" % w + "".join("  %12.2f" % added(med, w, c) for c in others))
    worst = max(added(med, w, "sonde") for w in WORKLOADS)
    parts = ["%s %s" % (c, " ".join("%.2f" % added(med, w, c) for w in WORKLOADS))
             for c in others]
    return "Python %s: added vs cProfile (%s): %s; sonde target <= %.2f %s" % (
        version, ", ".join(WORKLOADS), "; ".join(parts), TARGET,
        "met" if worst <= TARGET else "MISSED")


def main():
    pythons, rounds, quick = harness.arguments(__doc__, "smaller workloads")
    versions = [harness.check("bench_run", python, child_env(python)) for python in pythons]
    summaries = []
    for python, version in zip(pythons, versions):
        print("measuring %s (Python %s), %d rounds" % (python, version, rounds), flush=True)
        med, configs = run(python, child_env(python), rounds, quick)
        summaries.append(report(python, version, rounds, med, configs))
    print()
    print("\n".join(summaries))


if __name__ == "__main__":
    main()
