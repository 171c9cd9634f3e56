"""timeit_wait.py - sonde timeit's values with and without the wait for a
CPU taken off, read from the same runs, against pyperf's mean.

Each round times N against 2N additions and sum(range(1000)) against
sum(range(2000)) with sonde default mode (wall-time values; the workers
also report how long each value waited for a CPU, so the same values are
read both ways), then pyperf timeit -p 10 -n 5 -w 1 on the N additions,
and prints a JSON line: the ratios, the means against pyperf's, whether
each 95% interval covers pyperf's mean, the interval half-widths and the
share of time spent waiting.  The summary at the end is what the README
(sonde timeit, Method 5) shows.

  python bench/timeit_wait.py [--rounds 6]      # pyperf importable
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "build", "python"))

from sonde import _timeit  # noqa: E402
from sonde import _timeit_stats as tstats  # noqa: E402
from sonde._timeit_pyperf import from_pyperf  # noqa: E402

ADD_SETUP = ["a = 1; b = 2", "r1 = range(5000); r2 = range(10000)"]
ADD = ["for _ in r1: a + b", "for _ in r2: a + b"]
SUM = ["sum(range(1000))", "sum(range(2000))"]

_waits = {}  # variant name -> the waits of each process, in s per loop (this script's)
_run_worker = _timeit._run_worker


def _recording(variant, task, timeout, tmp, user_globals):
    r = _run_worker(variant, task, timeout, tmp, user_globals)
    if "waits" in r:
        _waits.setdefault(variant.name, []).append([w * 1e-9 for w in r["waits"]])
    return r


def both_ways(stmts, setup):
    """(wall, waited-off) readings of one run: dicts of mean, ci, half."""
    _waits.clear()
    out = []
    for r in _timeit.bench(stmts, setup="\n".join(setup)):
        ways = []
        for sign in (0, -1):
            means = [statistics.fmean(v + sign * w for v, w in zip(run, waits))
                     for run, waits in zip(r.runs, _waits[r.name])]
            mean = statistics.fmean(means)
            lo, hi = tstats.mean_ci(means)
            ways.append(dict(mean=mean, ci=(lo, hi), half=(hi - lo) / 2 / mean, waited=r.waited))
        out.append(ways)
    return out


def pyperf_mean(stmt, setup, tmp):
    path = os.path.join(tmp, "pyperf.json")
    if os.path.exists(path):
        os.unlink(path)
    cmd = [sys.executable, "-m", "pyperf", "timeit", "-q", "-o", path, "-p", "10", "-n", "5",
           "-w", "1"]
    for s in setup:
        cmd += ["-s", s]
    subprocess.run(cmd + [stmt], check=True, stdout=subprocess.DEVNULL)
    (r,) = from_pyperf(path, "pyperf").values()
    return r.mean


def load():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=6)
    args = ap.parse_args()
    _timeit._run_worker = _recording
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.rounds):
            row = {"load": load()}
            add = both_ways(ADD, ADD_SETUP)
            row["pyperf"] = ref = pyperf_mean(ADD[0], ADD_SETUP, tmp)
            sums = both_ways(SUM, [])
            for k, way in enumerate(("wall", "off")):
                row[way] = dict(
                    add_ratio=add[1][k]["mean"] / add[0][k]["mean"],
                    sum_ratio=sums[1][k]["mean"] / sums[0][k]["mean"],
                    vs_pyperf=add[0][k]["mean"] / ref,
                    covers=add[0][k]["ci"][0] <= ref <= add[0][k]["ci"][1],
                    half=statistics.fmean(x[k]["half"] for x in add + sums))
            row["waited"] = statistics.fmean(x[0]["waited"] for x in add + sums)
            print(json.dumps(row), flush=True)
            rows.append(row)
    print("load average %.1f-%.1f, waiting for a CPU %.0f%%-%.0f%% of the time, %d rounds"
          % (min(r["load"] for r in rows), max(r["load"] for r in rows),
             100 * min(r["waited"] for r in rows), 100 * max(r["waited"] for r in rows),
             len(rows)))
    print("%-32s %16s %16s" % ("mean of the rounds", "wait taken off", "wall time"))
    for label, key, fmt in (("ratio 2N/N, |error|", "add_ratio", "err"),
                            ("ratio sum 2000/1000, |error|", "sum_ratio", "err"),
                            ("95% interval, half-width", "half", "pct"),
                            ("mean against pyperf's, |diff|", "vs_pyperf", "diff"),
                            ("interval covers pyperf's mean", "covers", "count")):
        cells = []
        for way in ("off", "wall"):
            xs = [r[way][key] for r in rows]
            if fmt == "err":
                cells.append("%.1f%%" % (100 * statistics.fmean(abs(x / 2 - 1) for x in xs)))
            elif fmt == "pct":
                cells.append("%.1f%%" % (100 * statistics.fmean(xs)))
            elif fmt == "diff":
                cells.append("%.1f%%" % (100 * statistics.fmean(abs(x - 1) for x in xs)))
            else:
                cells.append("%d of %d" % (sum(xs), len(xs)))
        print("%-32s %16s %16s" % (label, cells[0], cells[1]))


if __name__ == "__main__":
    main()
