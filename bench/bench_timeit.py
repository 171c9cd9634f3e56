"""bench_timeit.py - sonde timeit against pyperf timeit and stdlib timeit:
the wall time to a result and the width of its 95% interval.

Three statements (about 100 ns, 10 us and 1 ms on CPython 3.11); six
tools: sonde default, --fast and --subtract-wait ("sonde -subwait" in the
table), pyperf timeit default and --fast (from
PyPI, in the interpreter running this script), python -m timeit.  Every
tool's interval is computed the same way, by sonde's statistics: Student's
t over the means of the processes (pyperf's runs; for stdlib timeit,
which runs in one process, over its 5 repeats, so its width is blind to
what differs between processes).  Each measurement is repeated --reps
times, tools in rotating order; the table shows medians.

  python bench/bench_timeit.py [--reps N] [--sonde build/bin/sonde] [--tools sonde,pyperf]
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "build", "python"))

from sonde import _timeit_stats as tstats  # noqa: E402
from sonde._timeit_pyperf import from_pyperf  # noqa: E402

STATEMENTS = [
    ("100 ns", "x = 12345", "str(x)"),
    ("10 us", "r = range(2500)", "sum(r)"),
    ("1 ms", "r = range(250000)", "sum(r)"),
]


def rel_halfwidth(process_means):
    lo, hi = tstats.mean_ci(process_means)
    return (hi - lo) / 2 / statistics.fmean(process_means)


def run_sonde(sonde, setup, stmt, flags, tmp):
    out = os.path.join(tmp, "s.json")
    cmd = [sonde, "timeit", "-s", setup, "-o", out, stmt] + flags
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   env=dict(os.environ, SONDE_PYTHON=sys.executable))
    wall = time.perf_counter() - t0
    (r,) = from_pyperf(out, "s").values()
    return wall, rel_halfwidth(r.process_means), r.mean


def run_pyperf(setup, stmt, fast, tmp):
    out = os.path.join(tmp, "p.json")
    if os.path.exists(out):
        os.unlink(out)
    cmd = [sys.executable, "-m", "pyperf", "timeit", "-q", "-o", out, "-s", setup, stmt]
    t0 = time.perf_counter()
    subprocess.run(cmd + (["--fast"] if fast else []), check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    (r,) = from_pyperf(out, "p").values()
    return wall, rel_halfwidth(r.process_means), r.mean


def run_stdlib(setup, stmt, tmp):
    cmd = [sys.executable, "-m", "timeit", "-v", "-s", setup, stmt]
    t0 = time.perf_counter()
    p = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, universal_newlines=True)
    wall = time.perf_counter() - t0
    loops = int(re.findall(r"^(\d+) loops? ->", p.stdout, re.M)[-1])
    raw = re.search(r"raw times: (.*)", p.stdout).group(1)
    values = []
    for item in raw.split(","):
        num, unit = item.split()
        values.append(float(num) * {"nsec": 1e-9, "usec": 1e-6, "msec": 1e-3, "sec": 1}[unit]
                      / loops)
    return wall, rel_halfwidth(values), statistics.fmean(values)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--sonde", default=os.path.join(ROOT, "build", "bin", "sonde"))
    ap.add_argument("--tools", help="the tools to run, comma-separated (default: all six)")
    args = ap.parse_args()
    tools = [
        ("sonde", lambda s, t, d: run_sonde(args.sonde, s, t, [], d)),
        ("sonde --fast", lambda s, t, d: run_sonde(args.sonde, s, t, ["--fast"], d)),
        ("sonde -subwait", lambda s, t, d: run_sonde(args.sonde, s, t, ["--subtract-wait"], d)),
        ("pyperf", lambda s, t, d: run_pyperf(s, t, False, d)),
        ("pyperf --fast", lambda s, t, d: run_pyperf(s, t, True, d)),
        ("timeit", lambda s, t, d: run_stdlib(s, t, d)),
    ]
    if args.tools:
        wanted = args.tools.split(",")
        unknown = set(wanted) - {name for name, _ in tools}
        if unknown:
            ap.error("unknown tools %s (known: %s)" % (", ".join(sorted(unknown)),
                                                       ", ".join(name for name, _ in tools)))
        tools = [tool for tool in tools if tool[0] in wanted]
    with open("/proc/loadavg") as f:
        load = f.read().split()[0]
    print("python %s, %d CPUs, load average %s, %d repetitions, medians"
          % (sys.version.split()[0], os.cpu_count(), load, args.reps))
    print("%-7s %-14s %9s %12s %12s" % ("stmt", "tool", "wall s", "95% CI +-", "mean"))
    with tempfile.TemporaryDirectory() as tmp:
        for label, setup, stmt in STATEMENTS:
            got = {name: [] for name, _ in tools}
            for k in range(args.reps):
                for name, fn in tools[k % len(tools):] + tools[:k % len(tools)]:
                    got[name].append(fn(setup, stmt, tmp))
            for name, _ in tools:
                rows = got[name]
                wall = statistics.median(r[0] for r in rows)
                width = statistics.median(r[1] for r in rows)
                mean = statistics.median(r[2] for r in rows)
                print("%-7s %-14s %9.2f %11.2f%% %9.4g us" % (label, name, wall, 100 * width,
                                                              mean * 1e6))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
