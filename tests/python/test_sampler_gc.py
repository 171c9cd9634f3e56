"""The <GC> frame of record and dump, on every interpreter, and top's GC
share: while the garbage collector runs, the thread collecting has a <GC>
frame over the function that started the collection.  The reference is the program's
own: it collects only by calling gc.collect() in one known function (the
automatic collector is off), and measures the CPU time its thread spends
inside that call with the kernel's per-thread clock."""

import os
import re
import subprocess
import sys
import time

import pytest

from conftest import SONDE, need, native_params, start_ready, stop_ready, version_params

sys.path.insert(0, os.path.dirname(__file__))
from test_sampler import share_tolerance  # noqa: E402

# collect_cycles makes garbage in make_cycles, then collects it: each
# collection walks the 300,000 lists kept alive, and takes most of the
# program's time; work() allocates nothing.  Prints the share of main's
# CPU time spent inside gc.collect(), by the thread's own clock.
PROGRAM = r'''
import gc, os, sys, time
gc.disable()
keep = [[i] for i in range(300000)]
in_gc = 0

def make_cycles():
    for _ in range(2000):
        a = []
        b = [a]
        a.append(b)

def collect_cycles():
    global in_gc
    make_cycles()
    t = time.thread_time_ns()
    gc.collect()
    in_gc += time.thread_time_ns() - t

def work():
    s = 0
    for i in range(200000):
        s += i * 3
    return s

def main(rounds):
    start = time.thread_time_ns()
    for _ in range(rounds):
        collect_cycles()
        work()
    return time.thread_time_ns() - start

if sys.argv[1] == "forever":
    print("ready", flush=True)
    while True:
        main(100)
if sys.argv[1] == "share":   # the share so far, after every few rounds, in share.txt
    print("ready", flush=True)
    total = 0
    while True:
        total += main(5)
        with open("share.tmp", "w") as f:
            f.write("%.6f" % (in_gc / total))
        os.replace("share.tmp", "share.txt")
total = main(int(sys.argv[1]))
print("gc %.6f" % (in_gc / total))
'''


def record(python, tmp_path, *extra):
    """Records the program under sonde; ({stack below main: weight}, the
    program's own share of main in gc.collect(), the summary)."""
    (tmp_path / "prog.py").write_text(PROGRAM)
    out = tmp_path / "p.txt"
    proc = subprocess.run([SONDE, "record", "-r", "1000", "-f", "collapsed", "-o", str(out)] +
                          list(extra) + ["--", python, str(tmp_path / "prog.py"), "40"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    truth = float(re.search(r"^gc (\S+)$", proc.stdout, re.M).group(1))
    below_main = {}
    for line in out.read_text().splitlines():
        stack, n = line.rsplit(" ", 1)
        frames = stack.split(";")
        # the program's main, not site's (the automatic collector may run
        # while site imports a .pth file's module, before gc.disable())
        mains = [i for i, frame in enumerate(frames)
                 if frame.startswith("main (") and "prog.py:" in frame]
        if mains:
            key = tuple(frame.split(" (")[0] for frame in frames[mains[0] + 1:])
            below_main[key] = below_main.get(key, 0) + int(n)
    return below_main, truth, proc.stderr


@pytest.mark.parametrize("python", version_params())
def test_record_gc_frame_over_the_collecting_function(python, tmp_path):
    """Every <GC> frame below main is over collect_cycles, the one
    function that collects, and its share of main's CPU is the share the
    program measured inside gc.collect() (--mode cpu: each sample weighs
    the CPU its thread used, so a busy machine does not move it)."""
    python = need(python)
    below_main, truth, summary = record(python, tmp_path)
    total = sum(below_main.values())
    under = {stack[:-1]: n for stack, n in below_main.items() if stack[-1:] == ("<GC>",)}
    gc_weight = sum(under.values())
    assert gc_weight and "garbage collection, under \"<GC>\" frames" in summary, summary
    # a sample reads the collector's flag with the stack, in one read
    assert under.get(("collect_cycles",), 0) >= 0.99 * gc_weight, under
    assert not any("<GC>" in stack[:-1] for stack in below_main), below_main
    kept = int(re.search(r"thread stacks read, (\d+) kept", summary).group(1))
    share = 100.0 * gc_weight / total
    tol = share_tolerance(100 * truth, min(kept, total), 0, sigmas=4)
    assert abs(share - 100 * truth) <= tol, (share, 100 * truth, tol, summary)


@pytest.mark.parametrize("python", native_params())
def test_record_native_gc_frame_over_the_innermost_python_frame(python, tmp_path):
    """With --native, <GC> goes over the innermost Python frame, not over
    the C frames of the collector, which go on above it (where the
    interpreter has their names: Debian's stripped one has none)."""
    python = need(python)
    below_main, _, summary = record(python, tmp_path, "--native")
    gc_stacks = {s: n for s, n in below_main.items() if "<GC>" in s}
    assert gc_stacks, (summary, below_main)
    placed = sum(n for s, n in gc_stacks.items()
                 if s[:2] == ("collect_cycles", "<GC>") and
                 not {"make_cycles", "work", "collect_cycles"} & set(s[2:]))
    assert placed >= 0.95 * sum(gc_stacks.values()), gc_stacks


@pytest.mark.parametrize("python", version_params())
def test_dump_says_the_thread_collects(python, tmp_path):
    """dump marks the thread holding the GIL "collecting garbage" while it
    is in gc.collect() (most of this program's time): its innermost frame
    is then collect_cycles."""
    python = need(python)
    proc = start_ready(python, tmp_path, PROGRAM, "forever")
    try:
        seen = 0
        for _ in range(40):   # each dump has a 0.7 chance; 40 all missing: 1e-21
            out = subprocess.run([SONDE, "dump", "-p", str(proc.pid)], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, universal_newlines=True, timeout=60)
            assert out.returncode == 0, out.stderr
            head = [line for line in out.stdout.splitlines() if line.startswith("Thread ")]
            assert len(head) == 1, out.stdout
            if "collecting garbage" in head[0]:
                assert "holds the GIL" in head[0], head[0]
                frames = out.stdout.split(head[0], 1)[1].strip().splitlines()
                assert frames[0].strip().startswith("collect_cycles ("), out.stdout
                seen += 1
                if seen == 3:
                    break
        assert seen == 3
    finally:
        stop_ready(proc)


def test_top_thread_gc_share_is_the_time_it_collects(tmp_path):
    """top's row of the program's thread: its share in the garbage collector
    (--mode cpu: of the CPU time its samples weigh) is the share of its CPU
    time the program measured inside gc.collect()."""
    import pty
    import select
    proc = start_ready(sys.executable, tmp_path, PROGRAM, "share")
    header = ("sonde top: pid %d" % proc.pid).encode()
    try:
        pid, fd = pty.fork()
        if pid == 0:
            os.environ["COLUMNS"] = "100"
            os.execv(SONDE, [SONDE, "top", "--nonblocking", "-r", "1000", "-p", str(proc.pid)])
        screen = b""
        elapsed = 0
        deadline = time.time() + 120  # a guard only: it waits for 4 s of samples
        while elapsed < 4:
            assert time.time() < deadline, screen[-2000:]
            if select.select([fd], [], [], 0.5)[0]:
                screen += os.read(fd, 65536)
            screens = screen.split(header)
            if len(screens) > 2:
                found = re.search(rb"Hz, (\d+) s,", screens[-2])
                elapsed = int(found.group(1)) if found else 0
        os.write(fd, b"q")
        os.waitpid(pid, 0)
        os.close(fd)
        truth = 100 * float((tmp_path / "share.txt").read_text())
    finally:
        stop_ready(proc)
    last = re.sub(r"\x1b\[[0-9;?]*[a-zA-Z]", "", screens[-2].decode("utf-8", "replace"))
    rate, seconds = map(int, re.search(r"(\d+) Hz, (\d+) s,", last).groups())
    cpu, gc_share = map(float, re.search(r"\n  MainThread +([\d.]+)% CPU +[\d.]+% GIL +"
                                         r"([\d.]+)% GC", last).groups())
    samples = rate * seconds * cpu / 100  # the samples its CPU time was counted in
    assert abs(gc_share - truth) <= share_tolerance(truth, samples, 0, sigmas=4), (
        gc_share, truth, last)
