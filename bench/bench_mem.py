"""How much does sonde mem slow a program down, next to memory_profiler,
memray and Scalene?

Method. Two programs, each run as a whole by every tool as its users run
it from the command line: mem_churn.py (allocation-heavy: many small
short-lived dicts, lists, tuples, strings and instances) and mem_julia.py
(the seeds' Julia set, the workload of their memory_profiler example).
Each marks its functions with @profile, which sonde mem and
memory_profiler supply (they trace only those); memray and Scalene watch
the whole program.  The tools: "bare" (python SCRIPT), "sonde" (sonde mem,
its defaults: byte-sampled blocks, C allocations through the preloaded
shim), "sonde-no-native" (--no-native), "memray" (memray run), "scalene"
(scalene run, CPU and memory) and "memory_profiler" (python -m
memory_profiler).  Peers that are not installed are left out.

What is measured is CPU time (user + system) of the tool's process and
its children (resource.getrusage), so a tool's helper threads and
processes count.  Each tool also runs the program with size 0 (imports
and start-up only); the slowdown is (tool at size - tool at 0) / (bare at
size - bare at 0): what the tool adds to the program's own work, start-up
left out.  memory_profiler is too slow for the full size: it runs a
smaller size (its slowdown is against bare at that size).  Rounds rotate
the order of the tools; medians over rounds are reported.  The issue's
target for sonde: 1.5x or less on the allocation-heavy program.

    python3 bench/bench_mem.py [--python PY] [--rounds N] [--quick]
"""

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile

import harness

SONDE = os.path.join(harness.BUILD, "bin", "sonde")
# program: (size, smaller size for memory_profiler)
PROGRAMS = {"mem_churn.py": (600000, 20000), "mem_julia.py": (600, 60)}
QUICK = {"mem_churn.py": (150000, 5000), "mem_julia.py": (300, 30)}


def tools(python, tmp):
    """name -> argv builder (script, size) for every tool present."""
    here = os.path.dirname(python)
    out = os.path.join(tmp, "out")
    found = {
        "bare": lambda s, n: [python, s, str(n)],
        "sonde": lambda s, n: [SONDE, "mem", "--python", python, s, str(n)],
        "sonde-no-native": lambda s, n: [SONDE, "mem", "--no-native", "--python", python, s,
                                         str(n)],
    }
    if os.path.exists(os.path.join(here, "memray")):
        found["memray"] = lambda s, n: [os.path.join(here, "memray"), "run", "-q", "-f", "-o",
                                        out + ".bin", s, str(n)]
    if os.path.exists(os.path.join(here, "scalene")):
        found["scalene"] = lambda s, n: [os.path.join(here, "scalene"), "run", "-o",
                                         out + ".json", s, "---", str(n)]
    if harness.probe(python, None, "import memory_profiler") is not None:
        found["memory_profiler"] = lambda s, n: [python, "-m", "memory_profiler", s, str(n)]
    return found


def cpu_seconds(argv):
    """CPU time of argv and its children, run to completion."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          universal_newlines=True, cwd=harness.BENCH)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit("bench_mem: %s failed (exit status %d):\n%s"
                 % (" ".join(argv), done.returncode, done.stderr[-2000:]))
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", default=sys.executable,
                        help="the interpreter (and its venv's peers) to measure")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="smaller programs, one round")
    a = parser.parse_args()
    a.python = os.path.abspath(a.python)  # the programs run from bench/
    version = harness.check("bench_mem", a.python, harness.child_env())
    programs = QUICK if a.quick else PROGRAMS
    rounds = 1 if a.quick else a.rounds
    with tempfile.TemporaryDirectory() as tmp:
        found = tools(a.python, tmp)
        names = list(found)
        times = {}  # (program, tool, size) -> [seconds]
        for r in range(rounds):
            order = names[r % len(names):] + names[:r % len(names)]
            for program, (size, small) in programs.items():
                for tool in order:
                    sizes = [small, 0] if tool == "memory_profiler" else [size, 0]
                    if tool == "bare":
                        sizes = [size, small, 0]
                    for n in sizes:
                        seconds = cpu_seconds(found[tool](program, n))
                        times.setdefault((program, tool, n), []).append(seconds)
    print("sonde mem against its peers, Python %s (%s); CPU seconds, medians of %d round%s"
          % (version, a.python, rounds, "" if rounds == 1 else "s"))
    for program, (size, small) in programs.items():
        med = {key[1:]: statistics.median(v) for key, v in times.items() if key[0] == program}
        print("\n%s (size %d; memory_profiler: %d)" % (program, size, small))
        print("  %-16s %10s %10s %10s" % ("tool", "at size", "at 0", "slowdown"))
        for tool in names:
            n = small if tool == "memory_profiler" else size
            work = med[("bare", n)] - med[("bare", 0)]
            added = med[(tool, n)] - med[(tool, 0)]
            print("  %-16s %10.3f %10.3f %9.2fx" % (tool, med[(tool, n)], med[(tool, 0)],
                                                   added / work if work > 0 else float("nan")))


if __name__ == "__main__":
    main()
