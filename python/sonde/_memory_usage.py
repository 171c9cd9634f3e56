"""sonde.memory_usage: memory_profiler's memory_usage(), the resident set
size (RSS) of a process over time, in MiB (2**20 bytes), as /proc counts
it (the resident pages of /proc/PID/statm: what psutil's rss is).

    memory_usage(-1)                       this process, now: [MiB]
    memory_usage(pid, interval=.1, timeout=2)   another, sampled for 2 s
    memory_usage(popen)                    a child, sampled until it ends
    memory_usage((f, args, kw))            this process while f runs
    memory_usage(f, max_usage=True, retval=True)   (peak MiB, f's value)

While a function runs, a separate sampler process reads this process's
statm every `interval` (memory_profiler forks one too): a thread could
not look while the function holds the GIL in one long C call, which is
when memory peaks.  Its first value is taken before the function starts,
its last after it returns, so even a call shorter than the interval has
two.  Unlike memory_profiler, the function is never run twice (it re-runs
one that gave fewer than 4 values, with a smaller interval).

include_children adds the RSS of every process descended from the one
measured; `multiprocess` (a list per child) is not supported.
"""

import os
import subprocess
import sys
import time

_PAGE = os.sysconf("SC_PAGE_SIZE")
_MIB = float(1 << 20)


def _descendants(pid):
    """The processes below pid, from the kernel's children lists."""
    found, todo = [], [pid]
    while todo and len(found) < 100000:
        parent = todo.pop()
        try:
            tasks = os.listdir("/proc/%d/task" % parent)
        except OSError:
            continue
        for tid in tasks:
            try:
                with open("/proc/%d/task/%s/children" % (parent, tid)) as f:
                    kids = [int(k) for k in f.read().split()]
            except (OSError, ValueError):
                continue
            found += kids
            todo += kids
    return found


def _rss_mib(pid, include_children=False):
    """pid's resident set in MiB (with its descendants'); None once it is
    gone."""
    total = None
    for p in [pid] + (_descendants(pid) if include_children else []):
        try:
            with open("/proc/%d/statm" % p, "rb") as f:
                pages = int(f.read().split()[1])
        except (OSError, ValueError, IndexError):
            if p == pid:
                return None
            continue
        total = (total or 0) + pages * _PAGE / _MIB
    return total


# The sampler process: reads statm of argv[1] every argv[2] seconds and
# writes "MiB time" lines, until its standard input closes; "ready" first.
_SAMPLER = r"""
import os, select, sys, time
pid, interval, children = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3] == "1"
sys.path.insert(0, sys.argv[4])
from _memory_usage import _rss_mib
out = os.fdopen(1, "w")
out.write("ready\n")
out.flush()
while True:
    mib = _rss_mib(pid, children)
    if mib is not None:
        out.write("%r %r\n" % (mib, time.time()))
    if select.select([0], [], [], interval)[0]:
        break
mib = _rss_mib(pid, children)
if mib is not None:
    out.write("%r %r\n" % (mib, time.time()))
out.flush()
"""


def _while_running(call, interval, include_children):
    """Runs call() while a sampler process samples this process: (the
    (MiB, time) samples, call's value)."""
    sampler = subprocess.Popen(
        [sys.executable, "-S", "-c", _SAMPLER, str(os.getpid()), repr(interval),
         "1" if include_children else "0", os.path.dirname(os.path.abspath(__file__))],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, universal_newlines=True)
    try:
        if sampler.stdout.readline() != "ready\n":
            raise RuntimeError("memory_usage: its sampler process did not start")
        value = call()
    finally:
        sampler.stdin.close()  # the sampler takes its last value and ends
        lines = sampler.stdout.read().split("\n")
        sampler.stdout.close()
        sampler.wait()
    samples = [tuple(float(x) for x in line.split()) for line in lines if line]
    return samples, value


def _sample(proc, interval, timeout, max_iterations, include_children):
    """A process's samples, taken here: a Popen until it ends (or for
    timeout), a pid once or for timeout seconds."""
    pid = os.getpid() if proc == -1 else proc.pid if hasattr(proc, "poll") else int(proc)
    if timeout is not None:
        most = max(1, int(round(timeout / interval)))
    elif hasattr(proc, "poll"):
        most = float("inf")
    else:
        most = 1
    if max_iterations is not None:
        most = max_iterations
    samples = []
    while len(samples) < most:
        mib = _rss_mib(pid, include_children)
        if mib is None:
            break
        samples.append((mib, time.time()))
        if hasattr(proc, "poll") and proc.poll() is not None:
            break
        if len(samples) < most:
            time.sleep(interval)
    return samples


def memory_usage(proc=-1, interval=0.1, timeout=None, timestamps=False,
                 include_children=False, multiprocess=False, max_usage=False, retval=False,
                 stream=None, backend=None, max_iterations=None):
    """memory_profiler's memory_usage(): see the module's text."""
    if multiprocess:
        raise ValueError("memory_usage: multiprocess=True is not supported; "
                         "include_children=True sums the children's memory")
    if backend not in (None, "psutil", "procfs"):
        raise ValueError("memory_usage: backend %r: sonde reads /proc (psutil's rss)"
                         % (backend,))
    if not interval > 0:
        raise ValueError("memory_usage: interval must be above 0, not %r" % (interval,))
    value = None
    if callable(proc) or isinstance(proc, (tuple, list)):
        if callable(proc):
            f, args, kw = proc, (), {}
        else:  # (f,), (f, args) or (f, args, kw), as memory_profiler takes it
            f, args, kw = (tuple(proc) + ((), {})[len(proc) - 1:])[:3]
        samples, value = _while_running(lambda: f(*args, **kw), interval, include_children)
    else:
        samples = _sample(proc, interval, timeout, max_iterations, include_children)
    if stream is not None:
        for mib, when in samples:
            stream.write("MEM %.6f %.4f\n" % (mib, when))
        result = None
    elif max_usage:
        result = max(mib for mib, _when in samples) if samples else None
    else:
        result = samples if timestamps else [mib for mib, _when in samples]
    return (result, value) if retval else result
