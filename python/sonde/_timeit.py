"""sonde timeit's driver: calibrated multi-process benchmarks and their
comparisons (sonde.timeit(), and the command through _timeit_cli.py;
pyperf's files are _timeit_pyperf.py's, --profile and --lines
_timeit_profile.py's).

The driver runs in one Python (the one `sonde timeit` starts, or the one
calling sonde.timeit()); every value comes from a fresh worker process
of the interpreter under test running _timeit_worker.py.  The processes
are started from Python rather than from the C command so that the
command line and sonde.timeit() share one implementation, and because an
interpreter's start dominates a worker's cost whoever forks it.

Method (docs/commands/timeit.md): per statement (and interpreter), one
calibration process finds the loop count whose value lasts the mode's
minimum time, and the empty loop's cost; then rounds of one process per
statement, in rotating order so that a change of the machine's load
falls on all of them alike, each process giving warmups (discarded) and
values.  After the mode's minimum of processes, it stops once every
statement's 95% interval is as tight as the mode asks, or its time is
spent (-p fixes the number of processes instead).
"""

import datetime
import marshal
import math
import os
import subprocess
import sys
import tempfile
import time

from . import _timeit_stats as stats

# mode -> (minimum ns per value, warmups, values per process, minimum and
# maximum processes per statement, the relative half-width of the 95%
# interval to stop at, and seconds after which it stops at the interval
# it has once the minimum of processes is reached)
MODES = {
    "fast": (5e6, 1, 3, 6, 10, 0.02, 1.0),
    "default": (1e7, 1, 3, 10, 150, 0.01, 8.0),
    "rigorous": (2e7, 2, 5, 20, 250, 0.005, 60.0),
}

# A difference is called significant below this p-value of the rank test
# (1%: two identical statements are called different once in 100).
ALPHA = 0.01

_WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_timeit_worker.py")


class TimeitError(Exception):
    """What went wrong, in one line (message), with the user's traceback
    (detail) when their code failed; code is the exit status to give."""

    def __init__(self, message, code=1, detail=""):
        Exception.__init__(self, message)
        self.message = message
        self.code = code
        self.detail = detail


class Result:
    """One statement's timing: values in seconds per loop, grouped by process.

    runs: the values of each process; loops: loops per value; empty: the
    empty loop's cost in seconds per loop (included in the values, as
    timeit and pyperf include it); waited: the share of the wall time the
    processes spent waiting for a CPU (in the values, or taken off them
    with subtract_wait); mean, stdev, median over all values;
    ci: the 95% interval of the mean (over process means; None from one
    process, whose values say nothing of how the next would differ);
    warnings."""

    def __init__(self, name, stmt, setup, python, loops, empty, runs, warmups):
        self.name, self.stmt, self.setup, self.python = name, stmt, setup, python
        self.loops, self.empty = loops, empty
        self.runs, self.warmups = runs, warmups
        self.values = [v for run in runs for v in run]
        self.process_means = [stats.statistics.fmean(run) for run in runs]
        self.mean = stats.statistics.fmean(self.values)
        self.stdev = stats.statistics.stdev(self.values) if len(self.values) > 1 else 0.0
        self.median = stats.statistics.median(self.values)
        self.ci = stats.mean_ci(self.process_means) if len(runs) > 1 else None
        self.warnings = []
        self.waited = 0.0  # the share of the wall time spent waiting for a CPU
        self.subtract_wait = False  # whether it was taken off the values
        self.shared = None  # the same object for results timed in the same processes

    @property
    def processes(self):
        return len(self.runs)

    def __repr__(self):
        return "<sonde timeit %s>" % self.line()

    def line(self):
        """%timeit's line, and what a careful reader needs."""
        unit, scale = _unit(self.mean)
        f = lambda x: _fmt(x * scale)
        ci = ("95%% CI %s-%s %s" % (_fmt(self.ci[0] * scale, 4), _fmt(self.ci[1] * scale, 4),
                                    unit) if self.ci else "no 95% CI (one process)")
        return ("%s %s +- %s %s per loop (mean +- std. dev. of %d values, %d process%s, "
                "%d loops each); median %s %s, %s; empty loop %s"
                % (f(self.mean), unit, f(self.stdev), unit, len(self.values), self.processes,
                   "es" if self.processes != 1 else "", self.loops, f(self.median), unit, ci,
                   _duration(self.empty)))


class Comparison:
    """`other` against `base` (ratio above 1: other is faster), with its
    95% bootstrap interval and a rank test's p.  Timed in the same
    processes (paired: statements of one interpreter), the ratio is that
    of their medians process by process, the median over processes, and
    the test Wilcoxon's signed-rank test of those: what makes one process
    faster than the next falls on both statements and out of the ratio.
    Else (files, two interpreters) the ratio is base.mean / other.mean and
    the test Mann-Whitney's over the process means."""

    def __init__(self, base, other):
        self.base, self.other = base, other
        self.paired = base.shared is not None and base.shared is other.shared and \
            len(base.runs) == len(other.runs)
        if self.paired:
            d = stats.log_ratios(base.runs, other.runs)
            self.test = "Wilcoxon"
            self.ratio = math.exp(stats.statistics.median(d))
            self.ci = stats.paired_ratio_ci(d)
            self.p = stats.wilcoxon_signed_rank(d)
        else:
            a, b = base.process_means, other.process_means
            self.test = "Mann-Whitney"
            self.ratio = base.mean / other.mean
            self.ci = stats.ratio_ci(a, b)
            self.p = stats.mann_whitney(a, b)
        if min(base.processes, other.processes) < 2:
            self.ci = None  # one process: nothing says how the next would differ
        self.significant = self.p < ALPHA

    def line(self):
        verdict = "significant" if self.significant else "not significant"
        r, word = (self.ratio, "faster") if self.ratio >= 1 else (1 / self.ratio, "slower")
        if self.ci is None:
            ci = "no 95% CI from one process"
        else:
            lo, hi = self.ci if self.ratio >= 1 else (1 / self.ci[1], 1 / self.ci[0])
            ci = "95%% CI %.2f-%.2fx" % (lo, hi)
        return ("%s is %.2fx %s than %s (%s, %s, %s p=%.2g)"
                % (self.other.name, r, word, self.base.name, ci, verdict, self.test, self.p))


def _unit(seconds):
    for unit, scale in (("ns", 1e9), ("us", 1e6), ("ms", 1e3)):
        if abs(seconds) * scale < 1000:
            return unit, scale
    return "s", 1.0


def _fmt(x, digits=3):
    """x with `digits` significant digits, plain notation."""
    if x == 0 or x != x:
        return "0"
    decimals = max(0, digits - 1 - int(math.floor(math.log10(abs(x)))))
    return "%.*f" % (decimals, x)


def _duration(seconds):
    unit, scale = _unit(seconds)
    return "%s %s" % (_fmt(seconds * scale), unit)


# ---------------------------------------------------------------- workers

class _Variant:
    """A statement under one interpreter, and what its processes gave."""

    def __init__(self, name, stmt, setup, python):
        self.name, self.stmt, self.setup, self.python = name, stmt, setup, python
        self.loops, self.empty = 0, 0.0
        self.runs, self.warmups = [], []
        self.run_meta = []  # each process's pyperf metadata: its start (date) and duration
        self.waited = 0.0  # seconds the values' processes waited for a CPU
        self.python_meta = {}  # the interpreter's version and implementation

    def halfwidth(self):
        means = [stats.statistics.fmean(r) for r in self.runs]
        lo, hi = stats.mean_ci(means)
        return (hi - lo) / 2 / stats.statistics.fmean(means)


def _worker_source():
    with open(_WORKER) as f:
        return f.read()


def _run_worker(variants, task, timeout, tmp, user_globals):
    """The worker's result for task (a dict) about variants (of one
    interpreter; calibration: one), from a fresh process, or in this one
    when the user's globals were given (they cannot travel).  The timeout
    is each variant's: a process timing three statements has three times
    as long."""
    if "calibrate" in task:
        task = dict(task, stmt=variants[0].stmt, setup=variants[0].setup)
    else:
        task = dict(task, variants=[{"stmt": v.stmt, "setup": v.setup, "loops": v.loops}
                                    for v in variants])
    if user_globals is not None:
        from . import _timeit_worker as w
        try:
            return w.measure(task, user_globals)
        except w._UserError as e:
            raise _user_failed(variants[e.index], e.where, e.text)
    task["result"] = os.path.join(tmp, "result.json")
    try:
        os.unlink(task["result"])
    except OSError:
        pass
    python = variants[0].python
    try:
        # The worker's stderr is the user's, passed through as it comes:
        # kept here, a statement writing 100 MB grew this process by as
        # much, and a child the statement leaves running (holding the
        # pipe) made the worker look unfinished until --timeout.
        proc = subprocess.run([python, "-c", _worker_source()],
                              input=marshal.dumps(task, 2), stdout=subprocess.DEVNULL,
                              timeout=timeout * len(variants) if timeout else None)
    except FileNotFoundError:
        raise TimeitError("interpreter '%s' not found (give a path or a name on PATH "
                          "to --python)" % python)
    except PermissionError:
        raise TimeitError("interpreter '%s' cannot be run (permission denied)" % python)
    except subprocess.TimeoutExpired:
        raise TimeitError("%s did not finish within --timeout %g s" % (_what(variants),
                                                                      timeout))
    try:
        with open(task["result"], "rb") as f:
            result = marshal.load(f)
    except (OSError, ValueError, EOFError, TypeError):
        raise TimeitError("%s: the worker process ended with status %d and no result (what "
                          "it wrote on stderr, if anything, is above)"
                          % (_what(variants), proc.returncode))
    if "error" in result:
        index = result.get("index", 0)
        raise _user_failed(variants[index if 0 <= index < len(variants) else 0],
                           result["where"], result["error"])
    return result


def _what(variants):
    return ("the statement" if len(variants) == 1 else "the statements") + ", ".join(
        " '%s'" % short(v.stmt) for v in variants)


def short(text, width=40):
    text = " ".join(text.split())
    return text if len(text) <= width else text[:width - 3] + "..."


def _user_failed(variant, where, text):
    last = text.strip().splitlines()[-1] if text.strip() else "an error"
    what = "the setup of '%s'" % short(variant.stmt) if where == "setup" else _what([variant])
    if last.startswith(("SyntaxError", "IndentationError", "TabError")):
        msg = "%s is not valid Python (%s)" % (what, last)
    else:
        msg = "%s raised %s (traceback above)" % (what, last)
    return TimeitError(msg, 1, text)


def _name(stmts, pythons, stmt, python):
    if len(pythons) > 1 and len(stmts) > 1:
        return "%s [%s]" % (stmt, python)
    if len(pythons) > 1:
        return python
    return stmt


def _busy():
    """The 1-minute load average and the number of CPUs, or None."""
    try:
        with open("/proc/loadavg") as f:
            load = float(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return load, os.cpu_count() or 1


def _frequency_scaling():
    """The CPU frequency governor when it is not 'performance', else None."""
    try:
        with open("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor") as f:
            gov = f.read().strip()
    except OSError:
        return None
    return gov if gov != "performance" else None


def bench(stmts, *, setup="pass", pythons=None, mode="default", loops=0, runs=0, processes=0,
          timeout=None, user_globals=None, subtract_wait=False):
    """Times each statement under each interpreter; a list of Result.
    loops, runs, processes: -n, -r, -p (0: the mode's); subtract_wait:
    take the time each value waited for a CPU off it."""
    if mode not in MODES:
        raise TimeitError("unknown mode '%s' (use fast, default or rigorous)" % mode, 2)
    if not stmts:
        raise TimeitError("no statement to time", 2)
    pythons = list(pythons or [sys.executable])
    if user_globals is not None and pythons != [sys.executable]:
        raise TimeitError("globals can only be used in this interpreter", 2)
    min_ns, warmups, values, pmin, pmax, target, budget = MODES[mode]
    begin = time.monotonic()
    if runs:
        values = runs
    if processes:
        pmin = pmax = processes
    if user_globals is not None:
        pmin, pmax = min(pmin, 3), min(pmax, 3)
    elif len(stmts) > 1 and not processes:
        # Compared statements share processes: below 10 of them the
        # signed-rank test cannot reach 1% (6 processes: 3% at best).
        pmin = max(pmin, min(10, pmax))
    variants = [_Variant(_name(stmts, pythons, s, p), s, setup, p)
                for p in pythons for s in stmts]
    load_before = _busy()
    with tempfile.TemporaryDirectory(prefix="sonde-timeit-") as tmp:
        for v in variants:
            cal = _run_worker([v], {"calibrate": min_ns, "loops": loops}, timeout, tmp,
                              user_globals)
            v.loops = cal["loops"]
            v.empty = cal["empty"] * 1e-9
            v.python_meta = {k: cal[k] for k in ("python_version", "python_implementation")
                             if k in cal}
        task = {"warmups": warmups, "values": values, "subtract_wait": subtract_wait}
        # The statements of one interpreter share each process (see the
        # worker); the interpreters' processes alternate.
        pythons = [p for i, p in enumerate(pythons) if p not in pythons[:i]]
        groups = [[v for v in variants if v.python == p] for p in pythons]
        for k in range(pmax):
            for group in groups[k % len(groups):] + groups[:k % len(groups)]:
                order = group[k % len(group):] + group[:k % len(group)]
                date, t0 = datetime.datetime.now().isoformat(" "), time.monotonic()
                got = _run_worker(order, task, timeout, tmp, user_globals)["results"]
                meta = {"date": date, "duration": time.monotonic() - t0}
                for v, r in zip(order, got):
                    v.run_meta.append(meta)
                    v.runs.append([x * 1e-9 for x in r["values"]])
                    v.warmups.append([x * 1e-9 for x in r["warmups"]])
                    v.waited += math.fsum(r["waits"]) * v.loops * 1e-9
            if k + 1 >= pmin and (all(v.halfwidth() <= target for v in variants)
                                  or time.monotonic() - begin > budget * len(variants)):
                break
    load_after = _busy()
    results = []
    shared = {p: object() for p in pythons}
    for v in variants:
        r = Result(v.name, v.stmt, v.setup, v.python, v.loops, v.empty, v.runs, v.warmups)
        r.run_meta, r.python_meta = v.run_meta, v.python_meta
        r.shared = shared[v.python]
        wall = math.fsum(r.values) * v.loops + (v.waited if subtract_wait else 0.0)
        r.waited = v.waited / wall if wall > 0 else 0.0
        r.subtract_wait = subtract_wait
        _check(r, [load_before, load_after], user_globals is not None)
        results.append(r)
    return results


def _check(r, loads, in_process):
    """pyperf check's warnings, and what /proc says of the machine."""
    if r.mean > 0 and r.stdev > 0.1 * r.mean:
        r.warnings.append("the standard deviation is %.0f%% of the mean (over 10%%): the "
                          "values are unstable" % (100 * r.stdev / r.mean))
    n = stats.outliers(r.values)
    if n:
        r.warnings.append("%d of %d values are outliers (beyond 3 interquartile ranges)"
                          % (n, len(r.values)))
    if r.mean * r.loops < 1e-3:
        r.warnings.append("a value lasts %s, under 1 ms: clock and loop overhead weigh on it "
                          "(give more loops with -n)" % _duration(r.mean * r.loops))
    gov = _frequency_scaling()
    if gov:
        r.warnings.append("CPU frequency scaling is on (governor '%s'): the clock speed "
                          "may vary" % gov)
    for seen in loads:
        if seen and seen[0] >= seen[1]:
            r.warnings.append("the machine was busy (load average %.1f on %d CPUs): values "
                              "may be noisy" % seen)
            break
    if r.waited > 0.01 and r.subtract_wait:
        r.warnings.append("the processes waited for a CPU %.0f%% of the time, taken off the "
                          "values (another program was running)" % (100 * r.waited))
    elif r.waited > 0.01:
        r.warnings.append("the processes waited for a CPU %.0f%% of the time (another program "
                          "was running): the values include it, as other tools' do; "
                          "--subtract-wait takes it off" % (100 * r.waited))
    if in_process:
        r.warnings.append("globals given: the values come from this process, not fresh ones")


def timeit(stmt, setup="pass", globals=None, *, mode="default", python=None, number=0,
           repeat=0, processes=0, timeout=None, subtract_wait=False):
    """Times stmt (a string, or a list of them: a list of Results then) as
    `sonde timeit` does: a Result with .mean, .stdev, .median, .ci (95%),
    .values (seconds per loop), .runs, .loops, .empty, .warnings, .line().
    With globals (a dict), the statement runs in this process (a dict of
    objects cannot travel to fresh ones).  number, repeat, processes: -n,
    -r, -p; mode: "fast", "default" or "rigorous"; subtract_wait:
    --subtract-wait.  Raises TimeitError."""
    many = not isinstance(stmt, str)
    results = bench(list(stmt) if many else [stmt], setup=setup,
                    pythons=[python] if python else None, mode=mode, loops=number,
                    runs=repeat, processes=processes, timeout=timeout, user_globals=globals,
                    subtract_wait=subtract_wait)
    return results if many else results[0]


def compare(results):
    """Each result after the first against the first."""
    return [Comparison(results[0], r) for r in results[1:]]
