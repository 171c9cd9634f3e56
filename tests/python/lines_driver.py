"""Counts line hits of lines_workloads.TRACED two ways: with sys.settrace
(the interpreter's own line events of every frame on the functions'
lines, their lambdas' and comprehensions' too, told apart into hits and
iterations as line_events.LineCounter does: the reference) and with sonde's
LineProfiler; with "bytecode", instruction hits too (the interpreter's
opcode events against sonde's --bytecode counts).  Prints both as JSON:
{"func:line": hits} or {"func@offset": hits}, and the lines' iterations
({"func:line": n}) as "reference_iterations" and "sonde_iterations".

usage: lines_driver.py [bytecode]
"""

import json
import sys
import threading

import lines_workloads as w
from line_events import LineCounter
import sonde

BYTECODE = sys.argv[1:] == ["bytecode"]


def nested(code):
    for const in code.co_consts:
        if hasattr(const, "co_code") and const.co_name.startswith("<"):
            yield const
            yield from nested(const)


# The traced functions' code objects, and (for lines) those of their
# lambdas, comprehensions and generator expressions, whose line events
# count on the function's lines.
codes = {f.__code__: f.__name__ for f in w.TRACED}
if not BYTECODE:
    codes.update({inner: f.__name__ for f in w.TRACED for inner in nested(f.__code__)})


def reference():
    hits = {}
    lines = LineCounter(lambda frame: "%s:%d" % (codes[frame.f_code], frame.f_lineno))

    def local(frame, event, arg):
        if event == "line" and not BYTECODE:
            lines.line(frame)
        if event == "opcode":
            key = "%s@%d" % (codes[frame.f_code], frame.f_lasti)
            hits[key] = hits.get(key, 0) + 1
        return local

    def global_trace(frame, event, arg):
        if frame.f_code not in codes:
            return None
        frame.f_trace_opcodes = BYTECODE
        lines.call(frame)
        return local

    sys.settrace(global_trace)
    threading.settrace(global_trace)
    try:
        w.everything()
    finally:
        sys.settrace(None)
        threading.settrace(None)
    if not BYTECODE:
        reference.iterations = lines.iterations
        return lines.hits
    return hits


def instruction_reference():
    """3.12+: settrace's opcode events are an emulation whose offsets do not
    line up with dis; count the interpreter's INSTRUCTION events directly,
    from a pure-Python sys.monitoring tool."""
    mon, hits, tool = sys.monitoring, {}, 4

    def on_instruction(code, offset):
        key = "%s@%d" % (codes[code], offset)
        hits[key] = hits.get(key, 0) + 1

    mon.use_tool_id(tool, "reference")
    mon.register_callback(tool, mon.events.INSTRUCTION, on_instruction)
    for code in codes:
        mon.set_local_events(tool, code, mon.events.INSTRUCTION)
    try:
        w.everything()
    finally:
        for code in codes:
            mon.set_local_events(tool, code, 0)
        mon.free_tool_id(tool)
    return hits


def measured():
    prof = sonde.LineProfiler(*w.TRACED, bytecode=BYTECODE)
    with prof:
        w.everything()
    if BYTECODE:
        import dis
        for f in prof.results():  # offsets are dis's
            code = [c for c, name in codes.items() if name == f["name"].split(".")[-1]][0]
            kwargs = {"adaptive": False} if sys.version_info >= (3, 12) else {}
            assert [i["offset"] for i in f["instructions"]] == [
                i.offset for i in dis.get_instructions(code, **kwargs)]
        return {"%s@%d" % (f["name"].split(".")[-1], i["offset"]): i["hits"]
                for f in prof.results() for i in f["instructions"] if i["hits"]}
    measured.iterations = {"%s:%d" % (f["name"].split(".")[-1], l["line"]): l["iterations"]
                           for f in prof.results() for l in f["lines"] if l["iterations"]}
    return {"%s:%d" % (f["name"].split(".")[-1], l["line"]): l["hits"]
            for f in prof.results() for l in f["lines"] if l["hits"]}


w.everything()  # warm up: imports, caches
expected = instruction_reference() if BYTECODE and sys.version_info >= (3, 12) else reference()
got = measured()
print(json.dumps({"reference": expected, "sonde": got,
                  "reference_iterations": getattr(reference, "iterations", {}),
                  "sonde_iterations": getattr(measured, "iterations", {})}))
