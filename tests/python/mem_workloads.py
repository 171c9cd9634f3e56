"""Allocations of every kind on known lines, for sonde mem's tests.

Each line the tests look at ends with a marker comment (# [name]).  Run
under `sonde mem`, or with --reference to print what tracemalloc sees per
marked line (bytes allocated there and still alive after each workload)
as JSON."""

import ctypes
import json
import os
import sys
import threading

MB = 1 << 20
# The process's own malloc, as C code calling it finds it (a handle to
# libc.so.6 itself would find libc's, under any preloaded allocator).
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
kept = []


def big_blocks():
    kept.append(bytearray(20 * MB))  # [big_kept]
    gone = b"x" * (16 * MB)  # [big_freed]
    del gone


def many_small():
    kept.append([str(i) * 3 for i in range(100000)])  # [small_kept]
    total = 0
    for i in range(200000):
        total += len((i, str(i)))  # [small_churn]
    return total


def containers():
    kept.append({i: (i, i + 1) for i in range(50000)})  # [dict_kept]


def native():
    kept.append(libc.malloc(8 * MB))  # [native_kept]
    p = libc.malloc(4 * MB)  # [native_freed]
    libc.free(p)


def worker(holder):
    kept.append(bytearray(4 * MB))  # [thread_kept]
    holder.pop()  # [thread_frees]


def threads():
    holder = [bytearray(6 * MB)]  # [freed_elsewhere]
    t = threading.Thread(target=worker, args=(holder,))
    t.start()
    t.join()


def generator():
    first = bytearray(3 * MB)  # [gen_first]
    yield first
    second = bytearray(5 * MB)  # [gen_second]
    yield second


def generators():
    got = []
    for block in generator():
        got.append(block)
        kept.append(bytearray(MB))  # [gen_consumer]
    kept.append(got)


def reuse():
    gone = [(i, -i) for i in range(1000)]  # [reuse_dropped]
    del gone  # its tuples wait in the interpreter's free list
    kept.append([(i, -i) for i in range(1000)])  # [reuse_kept]


def fork_with_threads():
    # From 3.12 a fork with a thread running warns (DeprecationWarning):
    # the warning's machinery allocates on this line, and the child's
    # allocations are not the parent's.
    waiting = threading.Event()
    t = threading.Thread(target=waiting.wait)
    t.start()
    pid = os.fork()  # [fork_threads]
    if pid == 0:
        kept.append(bytearray(8 * MB))
        os._exit(0)
    os.waitpid(pid, 0)
    waiting.set()
    t.join()


WORKLOADS = [big_blocks, many_small, containers, native, threads, generators, reuse,
             fork_with_threads]


def markers(path=__file__):
    """{marker name: line number} of this file."""
    found = {}
    with open(path) as f:
        for number, line in enumerate(f, 1):
            if "# [" in line and line.rstrip().endswith("]"):
                found[line.rsplit("# [", 1)[1].rstrip().rstrip("]")] = number
    return found


def reference():
    import tracemalloc
    tracemalloc.start()
    net = {}
    for work in WORKLOADS:
        before = tracemalloc.take_snapshot()
        work()
        after = tracemalloc.take_snapshot()
        for stat in after.compare_to(before, "lineno"):
            frame = stat.traceback[0]
            if frame.filename == __file__:
                net[frame.lineno] = net.get(frame.lineno, 0) + stat.size_diff
    return net


if __name__ == "__main__":
    if sys.argv[1:] == ["--reference"]:
        print(json.dumps({"markers": markers(), "net": reference()}))
    else:
        for work in WORKLOADS:
            work()
