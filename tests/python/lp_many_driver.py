"""Several sonde.LineProfiler objects enabled at once, as line_profiler
allows: A traces loop and gen, B loop and coro; their windows overlap, and
threads run traced code inside them.  Each profiler's hits must be the
interpreter's own line events (sys.settrace, the reference) of its own
functions during its own windows.  Prints {"A": ..., "B": ...,
"reference_A": ..., "reference_B": ...} ({"name:line": hits}) as JSON."""

import asyncio
import json
import threading

import lp_api_workloads as w
from line_events import line_events
import sonde

CODES = {f.__code__: f.__qualname__ for f in w.FUNCTIONS}


def in_thread(func, *args):
    t = threading.Thread(target=func, args=args)
    t.start()
    t.join()


def drain_gen(n):
    return list(w.gen(n))


# The program in four phases: A alone, A and B, B alone, neither.
PHASES = [
    lambda: (w.loop(10), in_thread(drain_gen, 3)),
    lambda: (w.loop(20), in_thread(lambda: asyncio.run(w.coro(4))), list(w.gen(5))),
    lambda: (w.loop(30), asyncio.run(w.coro(2)), in_thread(w.loop, 7)),
    lambda: (w.loop(40), asyncio.run(w.coro(6)), list(w.gen(8))),
]


def settrace_hits(phases, wanted):
    """The line events of the functions named in wanted during phases."""
    return line_events(lambda: [phase() for phase in phases],
                       {c: n for c, n in CODES.items() if n in wanted})


def hits_of(lp):
    names = {code.co_firstlineno: name for code, name in CODES.items()}
    return {"%s:%d" % (names[first], line): n
            for (_, first, _), lines in lp.get_stats().timings.items()
            for line, n, _ in lines if n}


a, b = sonde.LineProfiler(w.loop, w.gen), sonde.LineProfiler(w.loop, w.coro)
a.enable()
PHASES[0]()
b.enable()
PHASES[1]()
a.disable()
PHASES[2]()
b.disable()
PHASES[3]()
print(json.dumps({"A": hits_of(a), "B": hits_of(b),
                  "reference_A": settrace_hits(PHASES[0:2], {"loop", "gen"}),
                  "reference_B": settrace_hits(PHASES[1:3], {"loop", "coro"})},
                 sort_keys=True))
