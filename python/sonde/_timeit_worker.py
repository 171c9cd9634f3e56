"""One fresh process of sonde timeit: the statement's timing loop.

The driver (_timeit.py) runs this file's text with `PYTHON -c`, so that
the interpreter under test needs nothing of sonde's, and the folder it
was started in is on sys.path as with `python -m timeit`.  It reads its
task on stdin and writes the result to the file the task names, both as
marshal data (format 2, which every Python 3 reads): json would import
re and enum, about 25 ms of each process's start, a third of a default
process's time, and traceback (linecache, tokenize) is imported only
when the user's code fails, for the same reason:

  {"variants": [{"stmt", "setup", "loops"}...], "warmups", "values", "result"
   [, "subtract_wait"]}
      -> {"results": [{"warmups": [ns per loop...], "values": [ns per loop...],
      "waits": [ns per loop each value waited for a CPU...]}...]}, one per
      variant: their values alternate (each round runs each variant once,
      in an order drawn at random), so that statements compared share the
      process and the moment, and what differs between processes (this
      machine's speed varies by up to a third from one process to the
      next) falls on each of them alike; the order drawn, not rotated,
      leaves nothing a load that comes and goes in step with the rounds
      could give one statement over another
  {"stmt", "setup", "calibrate": min_ns, "result"} -> {"loops", "empty"}:
      the loop count whose value costs min_ns and 5% more (or "loops"
      when the task gives it; see calibrate), and the empty loop's cost
      at that count (ns per loop)

The loop is timeit's own (timeit.Timer compiles the statement inlined in
a `for` loop) timed with time.perf_counter_ns, with the garbage collector
left as the program has it (timeit.Timer.timeit would disable it).  The
time the kernel kept the process waiting for a CPU during a value (its
run delay, /proc/self/schedstat) is measured: each result says how much
("waits"), and with "subtract_wait" in the task it is taken off the
values (--subtract-wait).  Calibration counts what a value costs
(see _cost).  When
the user's code fails, the result is {"error": "the user's traceback",
"where": "setup" | "statement", "index": the variant's}; this file's own
frames are left out.
Runs on every interpreter sonde supports (src/core/pyversions.h).
"""

import itertools
import marshal
import math
import os
import sys
import time
import timeit

_OWN_FILES = ("<string>", __file__ if "__file__" in globals() else "<string>")


def _user_traceback(exc, timer_src):
    """The traceback of the user's own code: frames of sonde's worker and
    of the timeit module dropped, the timing loop shown as <timeit-src>."""
    import linecache
    import traceback
    if timer_src:
        linecache.cache["<timeit-src>"] = (len(timer_src), None,
                                           timer_src.splitlines(True), "<timeit-src>")
    tb = traceback.extract_tb(exc.__traceback__)
    frames = [f for f in tb if f.filename not in _OWN_FILES
              and not f.filename.endswith("timeit.py")]
    text = ""
    if frames:
        text = "Traceback (most recent call last):\n" + "".join(traceback.format_list(frames))
    return text + "".join(traceback.format_exception_only(type(exc), exc))


class _UserError(Exception):
    def __init__(self, where, text, index=0):
        Exception.__init__(self, text)
        self.where = where
        self.text = text
        self.index = index  # the variant whose code failed


def _timer(stmt, setup, user_globals):
    """timeit's Timer for the statement, its syntax checked first so a
    mistake is reported against the user's own line."""
    for where, code in (("setup", setup), ("statement", stmt)):
        try:
            compile(code, "<%s>" % where, "exec")
        except SyntaxError as e:
            raise _UserError(where, _user_traceback(e, None))
    return timeit.Timer(stmt, setup, timer=time.perf_counter_ns, globals=user_globals)


def _run_delay():
    """ns this thread has waited for a CPU so far, or 0 when unknown."""
    try:
        with open("/proc/self/schedstat") as f:
            return int(f.read().split()[1])
    except (OSError, ValueError, IndexError):
        return 0


def _run(timer, loops, subtract=True, waits=None):
    """One value: `loops` passes of the loop, in ns (setup run by the call
    but not timed, as timeit), less the time spent waiting for a CPU when
    subtract; the wait is appended to waits when given."""
    before = _run_delay()
    t = _inner(timer, loops, timer.timer)
    # The loop ran, so a value is never 0 (pyperf refuses one): the
    # kernel's wait accounts in ticks and can reach the value whole.
    waited = max(min(t - 1, _run_delay() - before), 0)
    if waits is not None:
        waits.append(waited)
    return t - waited if subtract else t


def _cost(timer, loops):
    """What `loops` passes of the loop cost, in ns: the larger of this
    thread's CPU time and the wall's time less the time the process waited
    for a CPU.  Neither is above the cost, and a load moves neither much:
    the CPU's time misses what the statement spends blocked (a sleep,
    I/O), the wall's can lose a wait that began just outside the loop."""
    walls = []

    def clock():
        walls.append(time.perf_counter_ns())
        return time.thread_time_ns()

    before = _run_delay()
    cpu = _inner(timer, loops, clock)
    return max(cpu, walls[-1] - walls[0] - (_run_delay() - before))


def _inner(timer, loops, clock):
    try:
        return timer.inner(itertools.repeat(None, loops), clock)
    except (Exception, SystemExit) as e:
        src = getattr(timer, "src", None)
        raise _UserError(_where(e, src), _user_traceback(e, src))


def _where(exc, src):
    """"setup" when the loop function failed before its clock started,
    else "statement" (timeit runs both in one function)."""
    import traceback
    lines = (src or "").splitlines()
    start = next((i + 1 for i, line in enumerate(lines) if "_t0 = _timer()" in line), 0)
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename == "<timeit-src>":
            return "setup" if frame.lineno < start else "statement"
    return "statement"


def calibrate(timer, min_ns):
    """The loop count whose value costs min_ns and 5% more (see _cost),
    as timeit's autorange, aiming straight at the target once a value is
    measurable, and aimed again from the fastest of three values at the
    count found.  The cost, not the wall's time: a load stretches values
    by preemptions that come and go, so that two statements as fast as
    each other got counts up to ten times apart under load; then the
    longer values were more often preempted, and the two drew a difference
    where there was none."""
    loops = 1
    while True:
        t = _cost(timer, loops)
        if t >= min_ns:
            t = min(t, _cost(timer, loops), _cost(timer, loops))
            if t >= min_ns:
                return max(1, int(math.ceil(loops * min_ns * 1.05 / t)))
        if t <= 0:
            loops *= 10
        else:
            loops = max(loops + 1, min(loops * 10, int(loops * min_ns * 1.05 / t) + 1))


def _shuffled(n):
    """0 .. n-1 in a random order (Fisher-Yates on the kernel's random
    bytes: random would cost the process's start an import)."""
    order = list(range(n))
    draws = os.urandom(4 * n)
    for k in range(n - 1, 0, -1):
        j = int.from_bytes(draws[4 * k:4 * k + 4], "little") % (k + 1)
        order[k], order[j] = order[j], order[k]
    return order


def measure(task, user_globals=None):
    """The result for one task (see the module's comment); raises
    _UserError when the user's code fails."""
    if "calibrate" in task:
        timer = _timer(task["stmt"], task.get("setup", "pass"), user_globals)
        loops = task.get("loops") or calibrate(timer, task["calibrate"])
        empty = timeit.Timer("pass", timer=time.perf_counter_ns)
        cost = min(_cost(empty, loops) for _ in range(3)) / loops
        return {"loops": loops, "empty": cost,
                "python_version": "%d.%d.%d" % tuple(sys.version_info[:3]),
                "python_implementation": sys.implementation.name}
    variants = task["variants"]
    timers = []
    for i, v in enumerate(variants):
        try:
            timers.append(_timer(v["stmt"], v.get("setup", "pass"), user_globals))
        except _UserError as e:
            raise _UserError(e.where, e.text, i)
    subtract = task.get("subtract_wait", False)
    results = [{"warmups": [], "values": [], "waits": []} for _ in variants]
    for kind, rounds in (("warmups", task["warmups"]), ("values", task["values"])):
        for j in range(rounds):
            for i in _shuffled(len(variants)):
                loops = variants[i]["loops"]
                waits = results[i]["waits"] if kind == "values" else None
                try:
                    t = _run(timers[i], loops, subtract, waits)
                except _UserError as e:
                    raise _UserError(e.where, e.text, i)
                results[i][kind].append(t / loops)
    for i, r in enumerate(results):
        r["waits"] = [w / variants[i]["loops"] for w in r["waits"]]
    return {"results": results}


def main():
    task = marshal.loads(sys.stdin.buffer.read())
    try:
        result = measure(task)
        code = 0
    except _UserError as e:
        result = {"error": e.text, "where": e.where, "index": e.index}
        code = 3
    with open(task["result"], "wb") as f:
        marshal.dump(result, f, 2)
    return code


if __name__ == "__main__":
    sys.exit(main())
