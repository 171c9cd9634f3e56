"""sonde timeit's pyperf files: its results written as pyperf's JSON
benchmark suite (-o), and pyperf's files read back as results
(--compare)."""

import datetime
import os
import platform

from . import _pyperf_read
from ._timeit import Result, TimeitError

# Values pyperf timeit gives by default (20 processes of 3 values).
PYPERF_TIMEIT_VALUES = 60


def _machine_metadata():
    """What pyperf records of the machine a benchmark ran on."""
    meta = {"hostname": platform.node(), "platform": platform.platform(),
            "cpu_count": os.cpu_count() or 1}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    meta["cpu_model_name"] = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        with open("/proc/sys/kernel/randomize_va_space") as f:
            meta["aslr"] = {"0": "No randomization", "1": "Conservative randomization",
                            "2": "Full randomization"}.get(f.read().strip(), "")
    except OSError:
        pass
    return {k: v for k, v in meta.items() if v != ""}


def to_pyperf(results):
    """pyperf's JSON benchmark suite (format 1.0) of results.  One
    statement is named 'timeit', as pyperf timeit names it, so the two
    tools' files of it compare; several are named by their statement or
    interpreter.  Each run (a process) carries its start date and its
    duration, as pyperf's do (pyperf stats reads the start, end and total
    duration from them); the benchmark the machine's and the interpreter's
    metadata."""
    machine = _machine_metadata()
    now = datetime.datetime.now().isoformat(" ")
    benchmarks = []
    for r in results:
        run_meta = getattr(r, "run_meta", None) or [{"date": now}] * len(r.runs)
        runs = [{"metadata": dict(meta), "warmups": [[r.loops, w] for w in warm],
                 "values": vals} for vals, warm, meta in zip(r.runs, r.warmups, run_meta)]
        metadata = dict(machine, **getattr(r, "python_meta", {}))
        metadata.update({"name": r.name if len(results) > 1 else "timeit", "loops": r.loops,
                         "unit": "second", "timer": "time.perf_counter_ns",
                         "python_executable": r.python,
                         "description": "sonde timeit: %s" % r.stmt})
        benchmarks.append({"metadata": metadata, "runs": runs})
    return {"version": "1.0", "metadata": {}, "benchmarks": benchmarks}


def from_pyperf(path, label):
    """The benchmarks of a pyperf file as Results (name -> Result); the
    file is checked whole first (_pyperf_read)."""
    try:
        benchmarks = _pyperf_read.read(path)
    except _pyperf_read.PyperfError as e:
        raise TimeitError(str(e))
    out = {}
    for name, (runs, loops, python) in benchmarks.items():
        r = Result(label, name, "", python, loops, 0.0, runs, [])
        r.bench_name = name
        out[name] = r
    return out


def compare_files(before, after):
    """Results and comparisons of the benchmarks of two pyperf files."""
    a = from_pyperf(before, before)
    b = from_pyperf(after, after)
    common = [n for n in a if n in b]
    if not common:
        raise TimeitError("%s and %s hold different benchmarks (%s against %s): compare "
                          "files of the same benchmark" % (before, after, ", ".join(a),
                                                            ", ".join(b)))
    pairs = []
    for n in common:
        if len(common) > 1:
            a[n].name, b[n].name = "%s (%s)" % (before, n), "%s (%s)" % (after, n)
        pairs.append((a[n], b[n]))
    return pairs
