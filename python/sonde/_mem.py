"""Per-line memory profiling: sonde.MemoryProfiler and what `sonde mem`
prints and writes.

The bookkeeping is C (_sonde.LineTracer with memory=True, hooked into the
Python allocators and, under `sonde mem`, the C allocator); so are the
table (_sonde.mem_table) and the timeline picture (_sonde.mem_plot).  This
module turns the figures into the JSON of `sonde mem -o` (README, "Formats").
"""

import json
import linecache
import sys

from ._lines import Traced
from ._sonde import LineTracer, mem_plot, mem_table

# Leaks listed in the JSON (largest first); the table shows fewer.
MAX_LEAKS = 200


class MemoryProfiler(Traced):
    """What each line of the functions given to it allocates and keeps
    (see Traced for choosing them), RSS over time, and what is still alive
    at the end.  Small blocks are sampled every sample_bytes bytes on
    average (0: every block is followed); blocks of 16 x sample_bytes and
    more are always followed, at their exact size.  Allocations are placed
    on lines by reading the stack at each sample; line_events=True follows
    every line instead (slower, exact at line boundaries, counts hits).
    print_stats() prints memory_profiler's table with sonde's columns."""

    def __init__(self, *functions, sample_bytes=512, interval_ms=10, line_events=False):
        self.line_events = line_events
        # Lambdas and comprehensions count their hits on their function's
        # lines with line events; placed from the stack, their blocks are on
        # their function's line already.
        super().__init__(LineTracer(memory=True, sample_bytes=sample_bytes,
                                    interval_ms=interval_ms, line_events=line_events),
                         functions, nested=line_events)

    def results(self):
        """The document `sonde mem -o` writes, as a dict."""
        figures = self._tracer.memory()
        codes = [entry[0] for entry in figures["codes"]]
        functions = []
        for code, first, per_line in figures["codes"]:
            lines = []
            for i, (hits, alloc, freed, net, reserved, peak, rss, increment) in enumerate(per_line):
                line = first + i
                lines.append({"line": line, "hits": hits if self.line_events else None,
                              "alloc_bytes": alloc, "freed_bytes": freed, "net_bytes": net,
                              "reserved_bytes": reserved,
                              "peak_heap_bytes": peak, "rss_bytes": rss,
                              "rss_increment_bytes": increment,
                              "source": _source(code.co_filename, line)})
            functions.append({"file": code.co_filename, "name": self._name(code),
                              "first_line": first, "lines": lines})
        leaks = []
        for size, native, reserved, stack in figures["leaks"][:MAX_LEAKS]:
            frames = [{"file": codes[i].co_filename, "name": self._name(codes[i]), "line": line,
                       "source": _source(codes[i].co_filename, line)} for i, line in stack]
            leaks.append({"bytes": size, "native_bytes": native, "reserved_bytes": reserved,
                          "stack": frames})
        timeline = figures["timeline"]
        return {
            "sonde": 1, "mode": "mem",
            "sample_bytes": figures["sample_bytes"], "native": figures["native"],
            "line_events": self.line_events,
            "interval_ms": figures["interval_ms"],
            "heap_peak_bytes": figures["heap_peak"],
            "reserved_bytes": figures["reserved"],
            "rss_high_water_bytes": figures["rss_high_water"],
            "untracked_bytes": figures["untracked_bytes"],
            "functions": functions,
            "leaks": leaks,
            "timeline": {
                "t_ns": [p[0] for p in timeline],
                "rss_bytes": [p[1] for p in timeline],
                "heap_bytes": [p[2] for p in timeline],
                "reserved_bytes": [p[3] for p in timeline],
                "spans": [{"name": self._name(codes[i]), "start_ns": start, "end_ns": end}
                          for i, start, end in figures["spans"]],
            },
        }

    def _name(self, code):
        return self._names.get(code, code.co_name)

    def dump_json(self, path):
        write_json(self.results(), path)

    def print_stats(self, stream=None):
        (stream or sys.stdout).write(format_table(self.results()))


def _source(filename, line):
    return linecache.getline(filename, line).rstrip("\n")


def write_json(document, path):
    with open(path, "w") as f:
        json.dump(document, f, indent=1)
        f.write("\n")


def format_table(document):
    """memory_profiler's table for every function that ran, then the
    leaks (drawn in C, where `sonde report` draws it too)."""
    return mem_table(json.dumps(document))


def write_plot(document, path):
    """The RSS and heap timeline with function spans, as an SVG file."""
    with open(path, "w", encoding="utf-8") as f:
        f.write(mem_plot(json.dumps(document)))
