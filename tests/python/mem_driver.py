"""Runs mem_workloads under sonde.MemoryProfiler following every block
(sample_bytes=0) with tracemalloc on at the same time, and prints, per
marked line, sonde's net bytes against tracemalloc's, and sonde's
allocated and released bytes, as JSON."""

import gc
import json
import sys
import tracemalloc
import warnings

import mem_workloads as w
import sonde


def main():
    # Warnings shown, as a script's own are: 3.12's fork warning then
    # formats its message on the fork's line.
    warnings.simplefilter("default")
    # Deep tracebacks: a block is the line's when its innermost frame in
    # the workloads' file is that line (the warning's blocks are allocated
    # in warnings.py, called from the fork).
    tracemalloc.start(64)
    prof = sonde.MemoryProfiler(*w.WORKLOADS, w.worker, w.generator, sample_bytes=0)
    ref = {}
    with prof:
        for work in w.WORKLOADS:
            before = tracemalloc.take_snapshot()
            # Both tools move a block the interpreter takes back from a free
            # list to the line that takes it (sonde from 3.13), but each
            # misses some: tracemalloc the blocks its own snapshots allocate,
            # sonde those allocated before it started.  A full collection
            # empties the free lists: each workload starts with none, and
            # what its lines left in them is released before the snapshot
            # (before 3.13 sonde would leave it on those lines).
            gc.collect()
            work()
            gc.collect()
            after = tracemalloc.take_snapshot()
            for stat in after.compare_to(before, "traceback"):
                ours = [f for f in stat.traceback if f.filename == w.__file__]
                if ours:  # the innermost: tracebacks list the newest frame last
                    line = ours[-1].lineno
                    ref[line] = ref.get(line, 0) + stat.size_diff
    tracemalloc.stop()
    lines = {}
    for function in prof.results()["functions"]:
        for line in function["lines"]:
            lines[line["line"]] = line
    out = {}
    for name, number in w.markers().items():
        got = lines[number]
        out[name] = {"net": got["net_bytes"], "alloc": got["alloc_bytes"],
                     "freed": got["freed_bytes"], "tracemalloc": ref.get(number, 0)}
    out["python"] = list(sys.version_info[:2])
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
