"""timeit_pyperf.py - sonde timeit's mean against pyperf timeit's, on the
same statement, pyperf run just before and just after sonde.

This was test_mean_agrees_with_pyperf (tests/python/test_timeit.py): it
asserted sonde's mean within 3% of pyperf's and sonde's 95% interval
covering it, and skipped when the machine was busy.  Two tools' wall-clock
means taken at different moments agree only when nothing else runs, so it
is a benchmark: it prints the figures and says whether they agree by that
rule, and exits 1 if they do not.

  python bench/timeit_pyperf.py [--sonde build/bin/sonde] [--python PY]

PY (default: this interpreter) runs both tools' workers and must have
pyperf installed (build/venv has it: `make test` makes it).
"""

import argparse
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "build", "python"))

from sonde import _timeit_stats as tstats  # noqa: E402
from sonde._timeit_pyperf import from_pyperf  # noqa: E402

import pyperf  # noqa: E402

# The loop of additions of test_timeit.py: each pass costs the same.
ARGS = ["-s", "a = 1; b = 2", "-s", "r1 = range(5000); r2 = range(10000)", "for _ in r1: a + b"]


def pyperf_timeit(python, path):
    """pyperf timeit's mean (5 processes of a warmup and 5 values) and the
    half-width of its 95% interval, relative."""
    subprocess.run([python, "-m", "pyperf", "timeit", "-q", "-o", path, "-p", "5", "-n", "5",
                    "-w", "1"] + ARGS, check=True, stdout=subprocess.DEVNULL)
    bench = pyperf.Benchmark.load(path)
    means = [sum(r.values) / len(r.values) for r in bench.get_runs() if r.values]
    lo, hi = tstats.mean_ci(means)
    return bench.mean(), (hi - lo) / 2 / bench.mean()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sonde", default=os.path.join(ROOT, "build", "bin", "sonde"))
    ap.add_argument("--python", default=sys.executable)
    args = ap.parse_args()
    with open("/proc/loadavg") as f:
        load = f.read().split()[0]
    with tempfile.TemporaryDirectory() as tmp:
        before = pyperf_timeit(args.python, os.path.join(tmp, "before.json"))
        out = os.path.join(tmp, "sonde.json")
        p = subprocess.run([args.sonde, "timeit", "-o", out] + ARGS, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, universal_newlines=True,
                           env=dict(os.environ, SONDE_PYTHON=args.python))
        if p.returncode:
            sys.exit("sonde timeit failed: " + p.stderr)
        after = pyperf_timeit(args.python, os.path.join(tmp, "after.json"))
        (r,) = from_pyperf(out, "s").values()
        lo, hi = tstats.mean_ci(r.process_means)
    theirs = (before[0] + after[0]) / 2
    print("load average %s on %d CPUs" % (load, os.cpu_count() or 1))
    print("pyperf before: %.2f us +- %.1f%%" % (before[0] * 1e6, 100 * before[1]))
    print("sonde:         %.2f us, 95%% CI %.2f-%.2f us" % (r.mean * 1e6, lo * 1e6, hi * 1e6))
    print("pyperf after:  %.2f us +- %.1f%% (moved %+.1f%%)"
          % (after[0] * 1e6, 100 * after[1], 100 * (after[0] / before[0] - 1)))
    print("sonde / pyperf: %.3f" % (r.mean / theirs))
    ok = abs(r.mean - theirs) <= 0.03 * theirs and lo <= theirs <= hi
    print("agree (within 3%%, sonde's interval covering pyperf's mean): %s"
          % ("yes" if ok else "no"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
