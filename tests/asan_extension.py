"""The extension's own code paths, for `make test-asan`: run with the
extension built with AddressSanitizer/UBSan and the sanitizers preloaded
into the interpreter; any fault aborts with a report.

Every workload under the tracer, every writer, the tracer while the
program runs cProfile itself (its hook taken back, chained, up to 3.11),
the line tracer with instructions and nested code (comprehensions,
lambdas), the memory profiler both ways (stacks and line events, sampled
and following every block, threads and generators included) with its
table and plot, and enabling/disabling repeatedly.
"""

import cProfile
import collections
import os
import sys
import tempfile

import sonde
import lines_workloads
import mem_workloads
import workloads


def main():
    out = tempfile.mkdtemp()
    for name, work in workloads.ALL.items():
        prof = sonde.Profile()
        for _ in range(2):
            prof.enable()
            work()
            prof.disable()
        prof.create_stats()
        prof.table(sort="tottime", limit=5, callers="fib", callees="main")
        for fmt in ("pstats", "collapsed", "json", "speedscope", "flamegraph"):
            prof.write(os.path.join(out, name + "." + fmt), fmt)
    prof = sonde.Profile()
    prof.enable()
    workloads.fib(12)
    inner = cProfile.Profile()
    inner.enable()
    workloads.fib(10)
    inner.disable()
    workloads.fib(11)
    queue = collections.deque(range(1000))
    while queue:
        queue.popleft()
    prof.disable()
    prof.create_stats()
    (fib,) = [v for k, v in prof.stats.items() if k[2] == "fib"]
    assert fib[1] == 465 + 177 + 287, fib[:2]  # every call, cProfile's time too
    lines = sonde.LineProfiler(*lines_workloads.TRACED, bytecode=True)
    with lines:
        lines_workloads.everything()
    lines.print_stats(open(os.devnull, "w"))
    traced = mem_workloads.WORKLOADS + [mem_workloads.worker, mem_workloads.generator]
    for line_events in (False, True):
        for sample_bytes in (0, 512):
            mem = sonde.MemoryProfiler(*traced, sample_bytes=sample_bytes, line_events=line_events)
            with mem:
                for work in mem_workloads.WORKLOADS:
                    work()
            doc = mem.results()
            mem.print_stats(open(os.devnull, "w"))
            from sonde._mem import write_plot
            write_plot(doc, os.path.join(out, "mem.svg"))
    del mem_workloads.kept[:]
    print("extension under the sanitizers: %d functions profiled per line, ok" % len(lines.results()))


if __name__ == "__main__":
    sys.exit(main())
