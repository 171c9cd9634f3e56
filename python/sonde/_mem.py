"""Per-line memory profiling: sonde.MemoryProfiler and what `sonde mem`
prints and writes.

The bookkeeping is C (_sonde.LineTracer with memory=True, hooked into the
Python allocators and, under `sonde mem`, the C allocator); so are the JSON
document of `sonde mem -o` (docs/formats.md), the table (_sonde.mem_table)
and the timeline picture (_sonde.mem_plot).
"""

import json
import sys

from ._lines import Traced
from ._sonde import LineTracer, mem_plot, mem_table, write_file


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
        return json.loads(self.document())

    def print_stats(self, stream=None):
        """memory_profiler's table for every function that ran, then the
        leaks (drawn in C, where `sonde report` draws it too)."""
        (stream or sys.stdout).write(mem_table(self.document()))


def write_plot(document, path):
    """The RSS and heap timeline with function spans, as an SVG file."""
    write_file(path, mem_plot(json.dumps(document)).encode("utf-8"))
