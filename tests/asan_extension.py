"""The extension's own code paths, for `make test-asan`: run with the
extension built with AddressSanitizer/UBSan and the sanitizers preloaded
into the interpreter; any fault aborts with a report.

Every workload under the tracer, every writer, the line tracer with
instructions, and enabling/disabling repeatedly.
"""

import os
import sys
import tempfile

import sonde
import lines_workloads
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
    lines = sonde.LineProfiler(*lines_workloads.TRACED, bytecode=True)
    with lines:
        lines_workloads.everything()
    lines.print_stats(open(os.devnull, "w"))
    print("extension under the sanitizers: %d functions profiled per line, ok" % len(lines.results()))


if __name__ == "__main__":
    sys.exit(main())
