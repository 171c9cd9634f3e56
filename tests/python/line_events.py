"""The interpreter's own line events of chosen functions, counted with
sys.settrace (threads started meanwhile included): the reference the line
profilers' hits are compared with.

An event counts as sonde and line_profiler count it: a hit where its line
begins, an iteration where it repeats the line its activation (a call, or
a generator's resumption) is already on (the next pass of a loop on one
line), and nothing where it starts an activation of a nested code object
(a comprehension, lambda or generator expression run from the line, which
counted its hit already)."""

import sys
import threading


def is_nested(code):
    """A lambda's, comprehension's or generator expression's code."""
    return code.co_name.startswith("<") and code.co_name != "<module>"


class LineCounter:
    """hits and iterations {key: n}, key(frame) naming a line."""

    def __init__(self, key):
        self.key, self.hits, self.iterations = key, {}, {}
        self.open = {}  # id(frame) -> [the line it is on, or None; a line event came]

    def call(self, frame):
        self.open[id(frame)] = [None, False]

    def line(self, frame):
        state = self.open.setdefault(id(frame), [None, False])
        key, line = self.key(frame), frame.f_lineno
        if state[0] == line:
            self.iterations[key] = self.iterations.get(key, 0) + 1
        elif state[1] or not is_nested(frame.f_code):
            self.hits[key] = self.hits.get(key, 0) + 1
        state[0], state[1] = line, True


def line_events(run, codes, iterations=None):
    """{"name:line": hits} of the code objects in codes (code -> name)
    while run() runs; iterations, when given a dict, gets theirs."""
    counter = LineCounter(lambda frame: "%s:%d" % (codes[frame.f_code], frame.f_lineno))

    def local(frame, event, arg):
        if event == "line":
            counter.line(frame)
        return local

    def hook(frame, event, arg):
        if frame.f_code not in codes:
            return None
        counter.call(frame)
        return local

    sys.settrace(hook)
    threading.settrace(hook)
    try:
        run()
    finally:
        sys.settrace(None)
        threading.settrace(None)
    if iterations is not None:
        iterations.update(counter.iterations)
    return counter.hits
