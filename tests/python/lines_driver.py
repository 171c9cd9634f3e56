"""Counts line hits of lines_workloads.TRACED two ways: with sys.settrace
(the interpreter's own line events: the reference) and with sonde's
LineProfiler.  Prints both as JSON: {"func:line": hits}.

usage: lines_driver.py
"""

import json
import sys
import threading

import lines_workloads as w
import sonde

codes = {f.__code__: f.__name__ for f in w.TRACED}


def reference():
    hits = {}

    def local(frame, event, arg):
        if event == "line":
            key = "%s:%d" % (codes[frame.f_code], frame.f_lineno)
            hits[key] = hits.get(key, 0) + 1
        return local

    def global_trace(frame, event, arg):
        return local if frame.f_code in codes else None

    sys.settrace(global_trace)
    threading.settrace(global_trace)
    try:
        w.everything()
    finally:
        sys.settrace(None)
        threading.settrace(None)
    return hits


def measured():
    prof = sonde.LineProfiler(*w.TRACED)
    with prof:
        w.everything()
    return {"%s:%d" % (f["name"].split(".")[-1], l["line"]): l["hits"]
            for f in prof.results() for l in f["lines"] if l["hits"]}


w.everything()  # warm up: imports, caches
print(json.dumps({"reference": reference(), "sonde": measured()}))
