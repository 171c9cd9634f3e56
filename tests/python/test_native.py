"""record/dump/top --native on every interpreter: native frames merged with
Python frames, against independent references: the CPU time a program
measured of its own C calls (shares), the source of the test libraries
(names, file:line), c++filt (demangled names), gdb's stack of the same
stopped process, /proc's thread states after sonde is killed mid-sample,
and every error case.  The test libraries are built by the Makefile
(build/tests/native: -O2 -g, no frame pointers, one copy stripped)."""

import os
import re
import shutil
import signal
import subprocess
import sys
import time

import pytest

from conftest import (PKG, ROOT, SONDE, interpreters, native_params, need, one_line, start_ready,
                      stop_ready, version_params)
from test_sampler import share_tolerance

LIBS = os.path.join(ROOT, "build", "tests", "native")
SHARE_LIB = os.path.join(LIBS, "libshare.so")
SHARE_SRC = os.path.join(ROOT, "tests", "native", "sharelib.c")

# Calls three C functions that spend CPU in proportion to their argument,
# 60/30/10, from two Python functions, timing each call with the thread's
# own CPU clock and with the wall clock; prints its measured shares of
# both at the end, and the waits for a CPU in its calls (wall less CPU time
# of each, squared and summed, over the wall time squared: what the
# tolerance grows with).
SHARES_PROGRAM = r'''
import ctypes, sys, time
lib = ctypes.CDLL(sys.argv[1])
N = 100000
spent = {"sl_a": 0.0, "sl_b": 0.0, "sl_c": 0.0}; wall = dict(spent); frozen = [0.0]

def timed(f, n):
    t, w = time.thread_time(), time.perf_counter()
    f(n)
    t, w = time.thread_time() - t, time.perf_counter() - w; frozen[0] += (w - t) ** 2; spent[f.__name__] += t; wall[f.__name__] += w

def first():
    timed(lib.sl_a, 6 * N)  # line 13: calls sl_a
    timed(lib.sl_b, 3 * N)  # line 14: calls sl_b

def second():
    timed(lib.sl_c, N)  # line 17: calls sl_c

def steady(rate=1000):
    """Whether the shares' spread is small enough to check (see
    native_share_tolerance): samples at the rate, and the waits for a CPU."""
    t = sum(wall.values())
    return t > 0 and 1 / (0.9 * rate * t) + frozen[0] / t ** 2 <= 0.0025

print("ready", flush=True)
# argv[2] seconds of this thread's CPU time (a busy machine stretches them
# in wall time, and sonde gets as many samples from them), and on while the
# waits for a CPU keep the spread too wide (it falls as 1/time), up to 15
# times as many seconds by the clock.
cpu_end = time.thread_time() + float(sys.argv[2])
end = time.perf_counter() + 15 * float(sys.argv[2])
while (time.thread_time() < cpu_end or not steady()) and time.perf_counter() < end:
    first()
    second()
total = sum(wall.values())
print("wall " + " ".join("%s=%.3f" % (k, 100 * v / total) for k, v in wall.items())
      + " frozen=%.6f" % (frozen[0] / total ** 2))
total = sum(spent.values())
print("measured " + " ".join("%s=%.3f" % (k, 100 * v / total) for k, v in spent.items()))
'''
CALLERS = {"sl_a": ("first", 13), "sl_b": ("first", 14), "sl_c": ("second", 17)}

# Starts two threads in C that never run Python, then sleeps.
SPINNERS_PROGRAM = r'''
import ctypes, sys, time
lib = ctypes.CDLL(sys.argv[1])
assert lib.sl_spinners(2) == 2
print("ready", flush=True)
time.sleep(600)
'''


def sonde(*args, **kw):
    return subprocess.run([SONDE] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=kw.pop("timeout", 120), **kw)


def frames_of(stack):
    """[(name, file, line)] of one collapsed stack, outermost first."""
    out = []
    for f in stack.split(";"):
        m = re.match(r"^(.*) \((.*):(-?\d+)\)$", f)
        assert m, f
        out.append((m.group(1), m.group(2), int(m.group(3))))
    return out


def collapsed(path):
    """[(frames, count)] of a collapsed file."""
    rows = []
    for line in path.read_text().splitlines():
        stack, n = line.rsplit(" ", 1)
        rows.append((frames_of(stack), int(n)))
    return rows


def source_line(needle):
    """The line of sharelib.c that holds needle: where its function is."""
    with open(SHARE_SRC) as f:
        for i, text in enumerate(f, 1):
            if needle in text:
                return i
    raise AssertionError(needle)


def native_share_tolerance(share, samples, frozen):
    """test_sampler's share_tolerance at four standard deviations: under
    --native each sample stops the target with ptrace and waits for it,
    so sonde's own turns on a busy machine are longer, and the runs of
    ticks it misses then (each one draw, like the program's waits) are
    not in the program's `frozen` figure (a fresh-clone run under load saw
    one share 3.7 of the model's deviations off, 2.6 points for 2.1).  At
    the spread these runs see (about 0.0005) that is 2 to 4.5 points."""
    return share_tolerance(share, samples, frozen, sigmas=4)


@pytest.mark.parametrize("python", version_params())
def test_record_native_known_shares_callers_and_lines(python, tmp_path):
    python = need(python)
    (tmp_path / "prog.py").write_text(SHARES_PROGRAM)
    out = tmp_path / "p.txt"
    # --mode wall: the truth below is the program's own wall clock.
    rec = sonde("record", "--native", "--mode", "wall", "-r", "1000", "-f", "collapsed", "-o",
                str(out), "--", python, str(tmp_path / "prog.py"), SHARE_LIB, "3",
                cwd=str(tmp_path))
    assert rec.returncode == 0, rec.stderr
    assert "sonde: native:" in rec.stderr, rec.stderr
    # Only a capture without Python frames may merge ambiguously: a thread
    # the unstopped walk did not find running Python is sampled by the
    # kernel (perf_event_open) and merged with none (seen once, in a CI run
    # on 3.12: 34 such captures of the main thread, 12 ambiguous); every
    # ptrace stop reads both stacks at once.
    unwalked = int(re.search(r"(\d+) by perf_event_open", rec.stderr).group(1))
    ambiguous = re.search(r"(\d+) ambiguous", rec.stderr)
    assert (int(ambiguous.group(1)) if ambiguous else 0) <= unwalked, rec.stderr
    counts = {"sl_a": 0, "sl_b": 0, "sl_c": 0}
    without_python = 0
    for frames, n in collapsed(out):
        leaf = frames[-1][0]
        if leaf not in counts:
            continue
        # The C function: its own name, its file and the line it is on.
        name, file, line = frames[-1]
        assert os.path.basename(file) == "sharelib.c", frames[-1]
        assert line == source_line("KEEP void %s(" % leaf), frames[-1]
        python_frames = [i for i, f in enumerate(frames) if f[1].endswith("prog.py")]
        if not python_frames:
            without_python += n
            continue
        counts[leaf] += n
        # Under the Python function and line that called it, with only
        # ctypes' and libffi's frames between (no interpreter frames).
        callers = [(frames[i][0], frames[i][2]) for i in python_frames[-2:]]
        assert callers == [CALLERS[leaf], ("timed", 9)], frames
        between = frames[python_frames[-1] + 1:-1]
        assert between and all("ffi" in f[0] or "ffi" in f[1] or "ctypes" in f[1] or
                               "PyCFuncPtr" in f[0] or "_ctypes" in f[0] for f in between), between
        # The stack starts at the interpreter's start-up, not mid-way.
        assert frames[0][0].startswith("__libc_start") or frames[0][0] == "_start", frames[0]
    assert without_python <= unwalked, rec.stderr
    total = sum(counts.values())
    # Shares against the wall time the program measured of each C call (a
    # sampler of runnable threads samples a preempted thread too, in the
    # call it waits in), within native_share_tolerance of the samples taken and
    # the waits the program measured: load changes the truth and the
    # samples alike, and what it adds to their spread is measured.  The
    # calls' CPU times (time.thread_time, which other programs' turns do
    # not advance) keep their 60/30/10 of equal-cost units: checked too.
    lines = rec.stdout.strip().splitlines()
    cpu = {k: float(v) for k, v in (kv.split("=") for kv in lines[-1].split()[1:])}
    for name, share in (("sl_a", 60), ("sl_b", 30), ("sl_c", 10)):
        assert abs(cpu[name] - share) <= 1, (cpu, rec.stdout)
    truth = {k: float(v) for k, v in (kv.split("=") for kv in lines[-2].split()[1:])}
    for name in counts:
        share = truth[name]
        got = 100.0 * counts[name] / total
        tol = native_share_tolerance(share, total, truth["frozen"])
        assert abs(got - share) <= tol, (name, got, tol, truth, counts, rec.stderr)


def record_spinners(python, tmp_path, env=None):
    """record --native of SPINNERS_PROGRAM's two C threads that never ran
    Python: both threads, each its own root, only native frames."""
    proc = start_ready(python, tmp_path, SPINNERS_PROGRAM, SHARE_LIB)
    out = tmp_path / "p.txt"
    try:
        # 3 s: the first ticks read the libraries' symbols, which on a
        # loaded machine can take most of a second.
        rec = sonde("record", "--native", "-d", "3", "--threads", "-f", "collapsed", "-o",
                    str(out), "-p", str(proc.pid), env=env)
    finally:
        stop_ready(proc)
    assert rec.returncode == 0, rec.stderr
    rows = collapsed(out)
    workers = [(f, n) for f, n in rows if f[-1][0] == "sl_worker"]
    assert sum(n for _, n in workers) > 0.8 * sum(n for _, n in rows), rows
    threads = set()
    for frames, _ in workers:
        threads.add(frames[0][0])
        names = [f[0] for f in frames]
        # Native only: the thread's start in libc (by name, or by address
        # where libc is stripped, as Debian sid's is), sharelib's thread
        # function, the spinning loop; not one Python frame.
        assert not [f for f in frames if f[1].endswith(".py")], frames
        starts = names[:names.index("worker_main")] if "worker_main" in names else []
        assert starts and ("start_thread" in names or "clone3" in names or
                           all(f[1].endswith("/libc.so.6") for f in frames[1:len(starts)])), frames
    assert len(threads) == 2, threads  # both threads, each its own root
    # The main thread sleeps: dropped as idle (--mode cpu, the default:
    # no CPU since its last sample), and said so; the stacks the summary
    # counts are those kept and those dropped, as without --native.
    found = re.search(r"(\d+) thread stacks read, (\d+) kept, (\d+) idle ones dropped",
                      rec.stderr)
    assert found, rec.stderr
    read, kept, idle = map(int, found.groups())
    assert idle > 0 and read == kept + idle, rec.stderr
    return rec


@pytest.mark.parametrize("python", version_params())
def test_threads_that_never_ran_python(python, tmp_path):
    record_spinners(need(python), tmp_path)


def test_threads_without_python_when_perf_is_refused(tmp_path):
    """Where perf_event_open is refused (paranoid settings, a container's
    seccomp profile: here a preloaded library refuses it), the threads that
    never ran Python are stopped with ptrace instead, and still counted."""
    noperf = os.path.join(LIBS, "libnoperf.so")
    rec = record_spinners(sys.executable, tmp_path, env=dict(os.environ, LD_PRELOAD=noperf))
    m = re.search(r"(\d+) thread stacks captured: (\d+) by ptrace stops .* (\d+) by "
                  r"perf_event_open", rec.stderr)
    assert m, rec.stderr
    captured, stops, perf = map(int, m.groups())
    assert perf == 0 and stops == captured > 0, rec.stderr


def gdb_frames(pid):
    """[(symbol or None, line, inlined)] of the stopped main thread, as gdb
    sees it (an inlined function's frame: its name, and inlined True)."""
    text = subprocess.run(
        ["gdb", "-nx", "-batch", "-iex", "set auto-load python-scripts off", "-p", str(pid),
         "-x", os.path.join(ROOT, "tests", "native", "gdb_frames.py")],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, universal_newlines=True,
        timeout=120).stdout
    out = []
    for line in text.splitlines():
        m = re.match(r"^FRAME [0-9a-f]+ (\d+) [^\t]*\t([^\t]*)\t(inlined)?$", line)
        if m:
            out.append((None if m.group(2) == "?" else m.group(2), int(m.group(1)),
                        bool(m.group(3))))
    return out


def blocked_in_read(pid):
    """Returns once the process's main thread is in read(2) (it said "ready"
    just before it calls it): its stack no longer changes."""
    deadline = time.time() + 60  # a guard: the thread is on its way there
    while True:
        with open("/proc/%d/syscall" % pid) as f:
            if f.read().split()[0] == "0":  # x86-64's read
                return
        assert time.time() < deadline, "never blocked in read"


def main_thread(dump):
    threads = dump.split("\nThread ")[1:]
    (main,) = [t for t in threads if "MainThread" in t.splitlines()[0]]
    return re.findall(r"^    (.+) \((.*):(-?\d+)\)$", main, re.M)


def demangled(lib, part):
    """c++filt's name of the library's symbol that holds part."""
    syms = subprocess.run(["nm", lib], stdout=subprocess.PIPE, universal_newlines=True).stdout
    (mangled,) = [l.split()[-1] for l in syms.splitlines() if part in l]
    return subprocess.run(["c++filt", mangled], stdout=subprocess.PIPE,
                          universal_newlines=True).stdout.strip()


def symbol_start(lib, name):
    """nm's address of the library's symbol name."""
    syms = subprocess.run(["nm", lib], stdout=subprocess.PIPE, universal_newlines=True).stdout
    (address,) = [l.split()[0] for l in syms.splitlines() if l.split()[-1] == name]
    return int(address, 16)


@pytest.mark.parametrize("lib,function", [("libtl.so", "tl_outer"),
                                          ("libtl_stripped.so", "tl_outer"),
                                          ("libtlx.so", "tlx_outer"),
                                          ("libtl.so", "tl_inlining")])
@pytest.mark.parametrize("python", native_params())
def test_dump_native_against_gdb(python, lib, function, tmp_path):
    """The native frames dump --native-all shows are gdb's frames of the
    same stopped thread, eval frames excepted (each is replaced by the
    Python frames it ran), the frames of inlined functions included (gdb's
    from DWARF's inline records: the same names at the same lines); dump
    --native leaves the interpreter's out."""
    python = need(python)
    path = os.path.join(LIBS, lib)
    proc = subprocess.Popen([python, os.path.join(ROOT, "tests", "native", "block.py"), path,
                             function], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            universal_newlines=True)
    try:
        assert proc.stdout.readline() == "ready\n"
        blocked_in_read(proc.pid)
        every = sonde("dump", "--native-all", "-p", str(proc.pid))
        shown = sonde("dump", "--native", "-p", str(proc.pid))
        gdb = gdb_frames(proc.pid)
    finally:
        proc.kill()
        proc.wait()
    assert every.returncode == 0 and shown.returncode == 0, every.stderr + shown.stderr
    ours = [f for f in main_thread(every.stdout) if not f[1].endswith(".py")]
    # An eval frame, and the functions inlined into it, are its Python frames.
    theirs, inlined = [], []
    for g in gdb:
        if g[2]:
            inlined.append(g)
        elif g[0] is None or not g[0].startswith("_PyEval_EvalFrameDefault"):
            theirs += inlined + [g]
            inlined = []
        else:
            inlined = []
    assert len(ours) == len(theirs), (ours, theirs)
    for (name, _file, line), (symbol, gdb_line, is_inlined) in zip(ours, theirs):
        if symbol is None:  # gdb has no name: ours is lib+0xOFF
            assert re.match(r"^[\w.+-]+\+0x[0-9a-f]+$", name), (name, ours, theirs)
        elif "(" in name:  # a C++ name: gdb's minimal symbol is the demangled one, args left out
            assert name.startswith(symbol.split("(")[0]), (name, symbol)
        else:
            assert re.sub(r"\.\d+$", "", name) == re.sub(r"\.\d+$", "", symbol), (name, symbol)
        if is_inlined:
            assert int(line) == gdb_line, (name, line, gdb_line)
    frames = main_thread(shown.stdout)
    names = [f[0] for f in frames]
    assert [n for n in names[names.index("inner"):] if n in ("inner", "outer", "<module>")] == \
        ["inner", "outer", "<module>"]
    assert not [n for n in names if n.startswith("_PyEval") or n.startswith("_PyObject_")], names
    if function == "tl_inlining":
        # gdb: tl_inline_read at testlib.c:40, tl_inline_wait at :46, tl_inlining at :54
        assert names[1:4] == ["tl_inline_read", "tl_inline_wait", "tl_inlining"], names
        testlib = open(os.path.join(ROOT, "tests", "native", "testlib.c")).read().splitlines()
        blocks, = [i for i, t in enumerate(testlib, 1) if "got = read" in t][1:]
        waits, = [i for i, t in enumerate(testlib, 1) if "tl_inline_read(fd, n + 2)" in t]
        calls, = [i for i, t in enumerate(testlib, 1) if "tl_inline_wait(fd, n);" in t]
        assert [int(f[2]) for f in frames[1:4]] == [blocks, waits, calls], frames[1:4]
    elif lib == "libtl.so":
        assert names[1:4] == ["tl_leaf_static", "tl_middle", "tl_outer"], names
        assert frames[1][1].endswith("testlib.c")
    elif lib == "libtl_stripped.so":
        # tl_leaf_static is in no symbol table of the stripped copy: it is named by its start
        # (its unwind entry's), which the unstripped library's symbols give (strip moves nothing).
        start = symbol_start(os.path.join(LIBS, "libtl.so"), "tl_leaf_static")
        assert names[1] == "libtl_stripped.so+0x%x" % start, names
        assert names[2:4] == ["tl_middle", "tl_outer"], names
    else:
        want = demangled(path, "Kernel")
        assert want == "(anonymous namespace)::Kernel<3>::run(int, int)"
        assert names[1] == want and frames[1][1].endswith("testlib_cxx.cpp"), names
    assert "merges with Python frames: 1 exact" in shown.stdout, shown.stdout


def stopped_threads(pid):
    """The threads of pid in state t or T."""
    found = []
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state in "tT":
            found.append((tid, state))
    return found


def traced_by(pid, tracer):
    """1 when a thread of pid is traced by tracer right now."""
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/status" % (pid, tid)) as f:
                if "\nTracerPid:\t%d\n" % tracer in f.read():
                    return 1
        except OSError:
            pass
    return 0


def test_sigkill_mid_sample_leaves_no_thread_stopped(tmp_path):
    """sonde killed with SIGKILL while it holds a thread of its target
    (seen traced by it): every thread of the target runs on."""
    proc = start_ready(sys.executable, tmp_path, SPINNERS_PROGRAM, SHARE_LIB)
    try:
        for attempt in range(5):
            rec = subprocess.Popen([SONDE, "record", "--native", "--idle", "-r", "1000", "-p",
                                    str(proc.pid), "-o", str(tmp_path / "p.svg")],
                                   stderr=subprocess.DEVNULL)
            deadline = time.time() + 60  # a guard: sonde stops a thread every tick
            while not traced_by(proc.pid, rec.pid):
                assert rec.poll() is None, "sonde ended"
                assert time.time() < deadline, "sonde never stopped a thread"
            rec.kill()
            rec.wait()
            assert stopped_threads(proc.pid) == [], attempt
            assert not traced_by(proc.pid, rec.pid)
        # The target still runs: its spinning threads are on a CPU or ready.
        assert proc.poll() is None
    finally:
        stop_ready(proc)


def test_sigterm_and_duration_leave_no_thread_stopped(tmp_path):
    proc = start_ready(sys.executable, tmp_path, SPINNERS_PROGRAM, SHARE_LIB)
    try:
        rec = subprocess.Popen([SONDE, "record", "--native", "--idle", "-r", "1000", "-p",
                                str(proc.pid), "-f", "collapsed", "-o", str(tmp_path / "t.txt")],
                               stderr=subprocess.PIPE, universal_newlines=True)
        deadline = time.time() + 60
        while not traced_by(proc.pid, rec.pid):
            assert time.time() < deadline and rec.poll() is None
        rec.send_signal(signal.SIGTERM)
        _, err = rec.communicate(timeout=60)
        assert rec.returncode == 0, err
        assert stopped_threads(proc.pid) == []
        assert "prog.py" in (tmp_path / "t.txt").read_text()  # at least the tick it was at
        rec = sonde("record", "--native", "-d", "0.5", "-p", str(proc.pid), "-f", "collapsed",
                    "-o", str(tmp_path / "d.txt"))
        assert rec.returncode == 0, rec.stderr
        assert stopped_threads(proc.pid) == []
    finally:
        stop_ready(proc)


def cmdline(pid):
    """The command line of a process, b"" when it has ended meanwhile."""
    try:
        with open("/proc/%s/cmdline" % pid, "rb") as f:
            return f.read()
    except OSError:
        return b""


def test_native_errors(tmp_path):
    # A thread that another tracer holds (strace here) cannot be stopped:
    # one line that says why and what to do, for each command.
    proc = start_ready(sys.executable, tmp_path, SPINNERS_PROGRAM, SHARE_LIB,
                       prefix=("strace", "-f", "-qq", "-o", os.devnull))
    target = []
    try:
        target = [p for p in os.listdir("/proc") if p.isdigit() and
                  cmdline(p).startswith(
                      sys.executable.encode() + b"\0" + str(tmp_path / "prog.py").encode())]
        (pid,) = target
        for args in (["record", "-d", "1", "-o", str(tmp_path / "x.svg")], ["dump"]):
            line = one_line(sonde(args[0], "--native", "-p", pid, *args[1:],
                                  stdin=subprocess.DEVNULL), 1)
            assert "ptrace was refused" in line and "another tracer" in line, line
        # top draws only on a terminal: script(1) gives it one.
        top = subprocess.run(["script", "-qec", "%s top --native -p %s" % (SONDE, pid),
                              os.devnull], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, universal_newlines=True, timeout=120)
        assert top.returncode == 1, top.stdout + top.stderr
        assert "ptrace was refused" in top.stdout and "another tracer" in top.stdout, top.stdout
    finally:
        stop_ready(proc)  # strace: it leaves the program it traced running
        for pid in target:
            os.kill(int(pid), signal.SIGKILL)
    assert "no process" in one_line(sonde("dump", "--native", "-p", "999999"), 1)
    one_line(sonde("record", "--native"), 2)
    one_line(sonde("dump", "--native-all"), 2)
    # python3 -m sonde has no native frames (no libdw in the extension).
    env = dict(os.environ, PYTHONPATH=PKG)
    ext = subprocess.run([sys.executable, "-m", "sonde", "record", "--native", "-p",
                          str(os.getpid())], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, universal_newlines=True)
    assert "needs the sonde command" in one_line(ext, 1)


NUMPY_PROGRAM = r'''
import numpy as np
a = np.random.default_rng(1).random((300, 300))
print("ready", flush=True)
for _ in range(400):
    np.linalg.inv(a)  # line 6
'''


def test_numpy_blas_frames_under_the_calling_line(tmp_path):
    pytest.importorskip("numpy")
    (tmp_path / "prog.py").write_text(NUMPY_PROGRAM)
    out = tmp_path / "p.txt"
    rec = sonde("record", "--native", "-r", "200", "-f", "collapsed", "-o", str(out), "--",
                sys.executable, str(tmp_path / "prog.py"), cwd=str(tmp_path),
                env=dict(os.environ, OPENBLAS_NUM_THREADS="1"))
    assert rec.returncode == 0, rec.stderr
    blas = [(f, n) for f, n in collapsed(out)
            if "openblas" in f[-1][1].lower() or "openblas" in f[-1][0].lower()]
    assert sum(n for _, n in blas) > 0, out.read_text()[:3000]
    for frames, _ in blas:
        py = [f for f in frames if f[1].endswith("prog.py")]
        # Under numpy's inv, under line 6 of the program.
        assert py and py[-1][0] == "<module>" and py[-1][2] == 6, frames
        assert [f for f in frames if f[0] == "inv" and "linalg" in f[1]], frames


# A Cython module as scikit-learn's and pandas' are built: a recursive
# cdef function (kept out of line, as their sorts are) under a def.
CYTHON_KERNEL = """# cython: language_level=3
cdef long _fib(long n) noexcept nogil:
    if n < 2:
        return n
    return _fib(n - 1) + _fib(n - 2)


def spin(long n):
    return _fib(n)
"""

CYTHON_PROGRAM = """import kern
total = 0
for _ in range(8000):
    total += kern.spin(24)  # line 4
print(total)
"""


def test_cython_functions_by_their_python_names(tmp_path):
    """A Cython extension built here (cythonize, as a package's build
    does): its functions' symbols are mangled (__pyx_f_4kern__fib, as nm
    lists them), and --native names them as Python does, module and
    function (kern._fib, kern.spin), under the line that called them, at
    the lines of kern.pyx their code comes from (the markers Cython writes
    in kern.c), as py-spy shows them (issue 24: sonde showed the mangled
    symbols, at kern.c's lines)."""
    pytest.importorskip("Cython")
    (tmp_path / "kern.pyx").write_text(CYTHON_KERNEL)
    (tmp_path / "prog.py").write_text(CYTHON_PROGRAM)
    build = subprocess.run([sys.executable, "-m", "Cython.Build.Cythonize", "-q", "-i",
                            "kern.pyx"], cwd=str(tmp_path), stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, universal_newlines=True)
    assert build.returncode == 0, build.stdout
    (so,) = tmp_path.glob("kern*.so")
    symbols = subprocess.run(["nm", str(so)], stdout=subprocess.PIPE, universal_newlines=True,
                             check=True).stdout
    assert "__pyx_f_4kern__fib" in symbols and "__pyx_pw_4kern_1spin" in symbols
    out = tmp_path / "p.txt"
    rec = sonde("record", "--native", "-r", "200", "-f", "collapsed", "-o", str(out), "--",
                sys.executable, str(tmp_path / "prog.py"), cwd=str(tmp_path))
    assert rec.returncode == 0, rec.stderr
    rows = collapsed(out)
    assert not [f for frames, _ in rows for f in frames if "__pyx_" in f[0]], out.read_text()
    fib = [(frames, n) for frames, n in rows if frames[-1][0] == "kern._fib"]
    # The program is nearly all _fib: most samples end there, each under
    # kern.spin under line 4.  Every such stack whole: a sample in _fib's
    # epilogue, after a pop, has the register's save slot below the stack
    # pointer, and the unwind stopped there (a quarter of these stacks
    # were cut short, hung straight under the line; py-spy's were whole).
    assert sum(n for _, n in fib) > 0.5 * sum(n for _, n in rows), out.read_text()
    for frames, _ in fib:
        names = [f[0] for f in frames]
        assert "kern.spin" in names and names[0] == "__libc_start_main", frames
        spin = names.index("kern.spin")
        assert frames[spin - 1][1:] == (str(tmp_path / "prog.py"), 4), frames
        assert set(names[spin + 1:]) == {"kern._fib"}, frames
        # def spin (8) and its body (9); _fib's body (2-5)
        assert frames[spin][1] == "kern.pyx" and frames[spin][2] in (8, 9), frames
        assert {f[1] for f in frames[spin + 1:]} == {"kern.pyx"}, frames
        assert {f[2] for f in frames[spin + 1:]} <= {2, 3, 4, 5}, frames
    assert "cut at the stack copy's end" not in rec.stderr, rec.stderr


BLUR_PROGRAM = """from PIL import Image, ImageFilter
image = Image.new("RGB", (2000, 2000), (10, 200, 30))
for _ in range(25):
    image.filter(ImageFilter.BoxBlur(8))
"""


def test_inlined_c_functions_are_frames(tmp_path):
    """Pillow's box blur (its wheel keeps DWARF): ImagingLineBoxBlur32 has
    no symbol (nm), being inlined into ImagingHorizontalBoxBlur, and is a
    frame of its own under it, named from DWARF's inline records, as gdb
    and py-spy show it; before, every sample of it ended at
    ImagingHorizontalBoxBlur, at the line of the inlined call."""
    PIL = pytest.importorskip("PIL")
    (so,) = [f for f in os.listdir(os.path.dirname(PIL.__file__)) if f.startswith("_imaging.cpython")]
    symbols = subprocess.run(["nm", os.path.join(os.path.dirname(PIL.__file__), so)],
                             stdout=subprocess.PIPE, universal_newlines=True, check=True).stdout
    assert "ImagingHorizontalBoxBlur" in symbols and "LineBoxBlur32" not in symbols
    (tmp_path / "blur.py").write_text(BLUR_PROGRAM)
    out = tmp_path / "b.txt"
    rec = sonde("record", "--native", "-r", "200", "-f", "collapsed", "-o", str(out), "--",
                sys.executable, "blur.py", cwd=str(tmp_path))
    assert rec.returncode == 0, rec.stderr
    rows = collapsed(out)
    horizontal = [(frames, n) for frames, n in rows
                  if "ImagingHorizontalBoxBlur" in [f[0] for f in frames]]
    under = 0
    for frames, n in horizontal:
        names = [f[0] for f in frames]
        at = names.index("ImagingHorizontalBoxBlur")
        if names[at + 1:at + 2] == ["ImagingLineBoxBlur32"]:
            assert frames[at + 1][1].endswith("BoxBlur.c") and frames[at + 1][2] > 0, frames
            under += n
    # The blur's time is nearly all in the inlined line function's loops.
    assert under > 0.5 * sum(n for _, n in horizontal) > 0, out.read_text()


def test_record_native_passes_the_exit_code(tmp_path):
    """The command's exit code comes back even when it ends while sonde
    holds its main thread (sonde only looks at that end, never reaps it)."""
    (tmp_path / "prog.py").write_text(
        "import ctypes, sys\nlib = ctypes.CDLL(sys.argv[1])\n"
        "for _ in range(20):\n    lib.sl_a(100000)\nsys.exit(7)\n")
    for _ in range(5):
        rec = sonde("record", "--native", "-r", "2000", "-f", "collapsed", "-o",
                    str(tmp_path / "p.txt"), "--", sys.executable, str(tmp_path / "prog.py"),
                    SHARE_LIB)
        assert rec.returncode == 7, rec.stderr


SORT_PROGRAM = r'''
import random
words = ["%08d" % random.randrange(10 ** 8) for _ in range(200000)]
for _ in range(15):
    sorted(words)  # line 5
'''


def test_the_interpreters_own_work_shows_under_the_python_line(tmp_path):
    """sorted() runs in the interpreter's own C code (list_sort_impl and
    its compare functions, in libpython): those frames stay, under the
    line that called sorted(), since no Python frame stands for them; the
    call machinery between Python frames is still left out.  And the
    interpreter's shutdown, a stack with no Python frame, keeps its frames
    rather than showing as time in __libc_start_call_main."""
    (tmp_path / "prog.py").write_text(SORT_PROGRAM)
    out = tmp_path / "p.txt"
    rec = sonde("record", "--native", "-r", "200", "-f", "collapsed", "-o", str(out), "--",
                sys.executable, str(tmp_path / "prog.py"))
    assert rec.returncode == 0, rec.stderr
    rows = collapsed(out)
    at_line = [(f, n) for f, n in rows if ("<module>", str(tmp_path / "prog.py"), 5) in f]
    assert sum(n for _, n in at_line) > 0, rows
    inside = 0
    for frames, n in at_line:
        below = [f[0] for f in frames[frames.index(("<module>", str(tmp_path / "prog.py"),
                                                    5)) + 1:]]
        assert not [b for b in below if b.startswith("_PyEval_EvalFrame")], below
        inside += n if [b for b in below if "sort" in b or "compare" in b] else 0
    assert inside > 0.8 * sum(n for _, n in at_line), at_line
    for frames, _ in rows:
        assert frames[-1][0] != "__libc_start_call_main", frames


def test_time_in_the_vdso_is_named(tmp_path):
    """clock_gettime runs in the kernel's vdso, a mapping with no file: its
    frames are named from the image in the process's memory (symbols and
    CFI), under sl_clock and the Python line, never [unmapped]."""
    (tmp_path / "prog.py").write_text(
        "import ctypes, sys\nlib = ctypes.CDLL(sys.argv[1])\n"
        "for _ in range(40):\n    lib.sl_clock(200000)  # line 4\n")
    out = tmp_path / "p.txt"
    rec = sonde("record", "--native", "-r", "500", "-f", "collapsed", "-o", str(out), "--",
                sys.executable, str(tmp_path / "prog.py"), SHARE_LIB)
    assert rec.returncode == 0, rec.stderr
    rows = collapsed(out)
    in_vdso = [(f, n) for f, n in rows if f[-1][1] == "[vdso]"]
    assert sum(n for _, n in in_vdso) > 0, rows
    for frames, _ in in_vdso:
        assert "clock_gettime" in frames[-1][0], frames
        names = [f[0] for f in frames]
        assert "sl_clock" in names and ("<module>", str(tmp_path / "prog.py"), 4) in frames
    assert not [f for f, _ in rows if f[-1][1] == "[unmapped]"], rows
    assert "no mapped object" not in rec.stderr, rec.stderr


POOL_PROGRAM = r'''
import hashlib, multiprocessing

def work(n):
    for _ in range(n):
        hashlib.sha1(b"y" * 50000).digest()
    return n

if __name__ == "__main__":
    with multiprocessing.Pool(2, maxtasksperchild=1) as pool:
        print(sum(pool.map(work, [10] * 40, chunksize=1)))
'''


def test_pool_workers_that_end_while_held_go_back_to_their_parent(tmp_path):
    """A worker that ends while sonde holds it is waited for by sonde, which
    hands it back to its parent: multiprocessing's pool waits for each
    worker it replaces (maxtasksperchild=1), and waited for ever, its main
    thread blocked, when sonde kept such a zombie (about one run in two at
    1000 Hz here).  The program's own answer is the reference."""
    (tmp_path / "pool.py").write_text(POOL_PROGRAM)
    for attempt in range(8):
        out = tmp_path / ("p%d.txt" % attempt)
        try:
            rec = sonde("record", "--native", "--subprocesses", "-r", "1000", "-f", "collapsed",
                        "-o", str(out), "--", sys.executable, str(tmp_path / "pool.py"),
                        cwd=str(tmp_path), timeout=60)  # a guard: a run takes about 1 s
        except subprocess.TimeoutExpired:
            pytest.fail("the pool never ended (attempt %d): a worker kept by sonde" % attempt)
        assert rec.returncode == 0, rec.stderr
        assert rec.stdout.strip() == "400"
        assert "pool.py" in out.read_text()


def test_record_native_pprof_mappings_and_addresses(tmp_path):
    """record --native -f pprof: native frames are Locations in their
    object's Mapping (path, range, build id as readelf reads it) at an
    address inside it, read back by go tool pprof."""
    if not shutil.which("go"):
        pytest.skip("go is not installed (go tool pprof reads the file)")
    (tmp_path / "prog.py").write_text(SHARES_PROGRAM)
    out = tmp_path / "p.pb.gz"
    rec = sonde("record", "--native", "-r", "500", "-f", "pprof", "-o", str(out), "--",
                sys.executable, str(tmp_path / "prog.py"), SHARE_LIB, "1", cwd=str(tmp_path))
    assert rec.returncode == 0, rec.stderr
    raw = subprocess.run(["go", "tool", "pprof", "-raw", str(out)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, universal_newlines=True, timeout=120).stdout
    mappings = {}
    for m in re.finditer(r"^(\d+): 0x([0-9a-f]+)/0x([0-9a-f]+)/0x([0-9a-f]+) (\S+) (\S*) ?\[",
                         raw, re.M):
        mappings[m.group(1)] = (int(m.group(2), 16), int(m.group(3), 16), m.group(5),
                                m.group(6))
    (share,) = [k for k, v in mappings.items() if v[2] == SHARE_LIB]
    notes = subprocess.run(["readelf", "-n", SHARE_LIB], stdout=subprocess.PIPE,
                           universal_newlines=True).stdout
    assert mappings[share][3] == re.search(r"Build ID: ([0-9a-f]+)", notes).group(1)
    locations = re.findall(r"^\s+\d+: 0x([0-9a-f]+) M=(\d+) (sl_[abc]) (\S+):(\d+)", raw, re.M)
    assert {l[2] for l in locations} == {"sl_a", "sl_b", "sl_c"}, raw[-3000:]
    for address, mapping, name, file, line in locations:
        start, limit = mappings[mapping][:2]
        assert mapping == share and start <= int(address, 16) < limit, (address, name)
        assert file.endswith("sharelib.c") and int(line) == source_line("KEEP void %s(" % name)


def test_record_native_in_another_mount_namespace(tmp_path):
    """A target run as a container runs it (3.14 in the Debian root, its own
    mount namespace, tests/sid/python.sh): its objects are opened where this
    process reaches them, so stacks unwind whole, merge exactly with the
    Python frames (the eval loop's unnamed .cold part found, symbols.c),
    and the C library's functions carry sharelib.c's lines."""
    python = dict(interpreters())["3.14"]
    python = need(python)
    (tmp_path / "prog.py").write_text(SHARES_PROGRAM)
    out = tmp_path / "p.txt"
    rec = sonde("record", "--native", "-r", "200", "-f", "collapsed", "-o", str(out), "--",
                python, str(tmp_path / "prog.py"), SHARE_LIB, "1", cwd=str(tmp_path))
    assert rec.returncode == 0, rec.stderr
    captured = int(re.search(r"native: (\d+) thread stacks captured", rec.stderr).group(1))
    complete = int(re.search(r"unwinds: (\d+) complete", rec.stderr).group(1))
    assert captured >= 50 and complete >= 0.9 * captured, rec.stderr
    assert "no mapped object" not in rec.stderr
    assert "ambiguous" not in rec.stderr, rec.stderr
    leaves = {}
    for frames, n in collapsed(out):
        names = [f[0] for f in frames]
        if "timed" in names and frames[-1][0] in ("sl_a", "sl_b", "sl_c"):
            name, file, line = frames[-1]
            assert file.endswith("sharelib.c") and line == source_line("KEEP void %s(" % name)
            leaves[name] = leaves.get(name, 0) + n
    assert set(leaves) == {"sl_a", "sl_b", "sl_c"}, leaves
