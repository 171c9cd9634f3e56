"""Counts the line events of lp_api_workloads' functions two ways: with
sys.settrace (the interpreter's own line events: the reference) and with
sonde.LineProfiler driven through line_profiler's API (add_function +
runcall, the decorator on a generator, a coroutine and an async
generator, add_class, add_module, runctx), read back with get_stats().
Prints {"sonde": {"name:line": hits}, "reference": {...}} as JSON.
"""

import asyncio
import json
import sys

import lp_api_workloads as w
from line_events import line_events
import sonde

CODES = {f.__code__: f.__qualname__ for f in w.FUNCTIONS}


async def drain(agen_func, n):
    return [x async for x in agen_func(n)]


def run_all(loop_f, gen_f, coro_f, agen_f, area_f, runctx=None):
    """Runs each, the same way whoever counts."""
    results = [loop_f(40), list(gen_f(7)), asyncio.run(coro_f(5)),
               asyncio.run(drain(agen_f, 4)), [area_f(k) for k in range(6)]]
    if runctx:
        runctx("loop(9)", {"loop": w.loop}, {})
    else:
        w.loop(9)
    return results


def area(k):
    return w.Shapes(k).area()


def reference():
    return line_events(lambda: run_all(w.loop, w.gen, w.coro, w.agen, area), CODES)


def profiled():
    lp = sonde.LineProfiler()
    lp.add_function(w.loop)
    assert lp.add_class(w.Shapes) == 2 and lp.add_module(w) == 5

    def loop(n):
        return lp.runcall(w.loop, n)

    def area_enabled(k):
        with lp:
            return area(k)

    run_all(loop, lp(w.gen), lp(w.coro), lp(w.agen), area_enabled, runctx=lp.runctx)
    names = {code.co_firstlineno: name for code, name in CODES.items()}
    hits = {}
    for (filename, first, name), lines in lp.get_stats().timings.items():
        assert filename == w.__file__ and name == (
            names[first] if sys.version_info >= (3, 11) else names[first].rpartition(".")[2])
        for line, n, _ in lines:
            hits["%s:%d" % (names[first], line)] = n
    return hits


print(json.dumps({"sonde": profiled(), "reference": reference()}, sort_keys=True))
