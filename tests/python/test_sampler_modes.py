"""sonde record/top/dump --mode cpu|wall|gil|exception and --thread, on every
interpreter, against independent references: the kernel's own CPU time of
each thread (/proc/PID/task/TID/schedstat, read by the test), shares known
by construction (units of work that cost the same), the program's own
clock for its GIL-releasing and exception-handling phases, and the kernel
thread ids the program reports of itself."""

import os
import re
import signal
import subprocess
import sys

import pytest

from conftest import SONDE, need, one_line, start_ready, stop_ready, version_params

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from load import Load  # noqa: E402  (tests/load.py: a busy process per CPU)


def sonde(*args, **kw):
    return subprocess.run([SONDE] + [str(a) for a in args], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True,
                          timeout=kw.pop("timeout", 180), **kw)


def leaf_counts(text):
    """{innermost function name: count} of a collapsed file's text."""
    counts = {}
    for line in text.splitlines():
        stack, n = line.rsplit(" ", 1)
        leaf = stack.split(";")[-1].split(" (")[0]
        counts[leaf] = counts.get(leaf, 0) + int(n)
    return counts


def shares_of(counts, names):
    total = sum(counts.get(n, 0) for n in names)
    assert total > 0, counts
    return {n: 100.0 * counts.get(n, 0) / total for n in names}, total


def cpu_ns(pid, tid):
    """The kernel's on-CPU time of thread tid so far (schedstat's first field)."""
    with open("/proc/%d/task/%d/schedstat" % (pid, tid)) as f:
        return int(f.read().split()[0])


# Threads that burn CPU in hashlib, which lets go of the GIL while it hashes
# a large buffer, so that the kernel's scheduler, not the GIL, shares the
# CPUs out: two at the usual priority, one at nice 19.  Each reports its
# kernel thread id; "ready" once all run.
NICE_PROGRAM = r'''
import hashlib, os, sys, threading, time
block = b"x" * (1 << 24)
ids = {}
def busy_a():
    ids["busy_a"] = threading.get_native_id(); spin_a()
def spin_a():
    while True:
        hashlib.sha256(block).digest()
def busy_b():
    ids["busy_b"] = threading.get_native_id(); spin_b()
def spin_b():
    while True:
        hashlib.sha256(block).digest()
def niced():
    me = threading.get_native_id()
    os.setpriority(os.PRIO_PROCESS, me, 19)
    with open("/proc/self/task/%d/comm" % me, "w") as f:
        f.write("kgamma")  # its kernel name, which --thread matches too
    ids["niced"] = me; spin_niced()
def spin_niced():
    while True:
        hashlib.sha256(block).digest()
for f, name in ((busy_a, "alpha"), (busy_b, "beta"), (niced, "gamma")):
    threading.Thread(target=f, name=name, daemon=True).start()
while len(ids) < 3:
    time.sleep(0.01)
print(" ".join("%s=%d" % kv for kv in sorted(ids.items())), flush=True)
print("ready", flush=True)
threading.Event().wait()
'''

SPINS = ("spin_a", "spin_b", "spin_niced")


def start_nice(python, tmp_path):
    """NICE_PROGRAM running; its threads' kernel ids by function."""
    prog = tmp_path / "prog.py"
    prog.write_text(NICE_PROGRAM)
    proc = subprocess.Popen([python, str(prog)], stdout=subprocess.PIPE,
                            universal_newlines=True)
    ids = dict(kv.split("=") for kv in proc.stdout.readline().split())
    assert proc.stdout.readline() == "ready\n"
    return proc, {k: int(v) for k, v in ids.items()}


@pytest.mark.parametrize("python", version_params())
def test_cpu_mode_weighs_a_niced_thread_by_the_cpu_it_got(python, tmp_path):
    python = need(python)
    proc, ids = start_nice(python, tmp_path)
    thread_of = {"spin_a": ids["busy_a"], "spin_b": ids["busy_b"],
                 "spin_niced": ids["niced"]}
    try:
        with Load():
            runs = {}
            for mode in ("cpu", "wall"):
                out = tmp_path / ("%s.txt" % mode)
                before = {f: cpu_ns(proc.pid, t) for f, t in thread_of.items()}
                rec = sonde("record", "--mode", mode, "-r", "1000", "-d", "4", "-f", "collapsed",
                            "-o", out, "-p", proc.pid)
                after = {f: cpu_ns(proc.pid, t) for f, t in thread_of.items()}
                assert rec.returncode == 0, rec.stderr
                assert "--mode %s:" % mode in rec.stderr
                runs[mode] = (leaf_counts(out.read_text()),
                              {f: after[f] - before[f] for f in thread_of}, rec.stderr)
    finally:
        proc.kill()
        proc.wait()
    counts, kernel, summary = runs["cpu"]
    got, _ = shares_of(counts, SPINS)
    truth = {f: 100.0 * kernel[f] / sum(kernel.values()) for f in SPINS}
    for f in SPINS:  # the kernel's figure, within 2 points
        assert abs(got[f] - truth[f]) <= 2, (f, got, truth, summary)
    # It got less CPU than the others (the GIL it takes between hashes lends it
    # some: a thread preempted while holding the GIL makes the others wait).
    assert truth["spin_niced"] < 20, truth
    # The CPU the profile weighs is the CPU the three threads used while sampled.
    weighed = float(re.search(r"([\d.]+) CPU-s in the kept samples", summary).group(1))
    assert weighed <= sum(kernel.values()) * 1e-9 * 1.02 + 0.01, (weighed, kernel)
    # Wall mode gives the niced thread a third of the samples: it is always runnable.
    wall, _ = shares_of(runs["wall"][0], SPINS)
    assert wall["spin_niced"] > truth["spin_niced"] + 10, (wall, truth)


# Units of work that cost the same (one pure-Python loop of small ints),
# 50, 30 and 20 of them a round in three functions: 50/30/20 by
# construction.  A round is long (some 100 ms of CPU), so that a sample
# rarely straddles two functions; the program runs whole rounds until it
# has used argv[1] CPU-seconds, so that a loaded machine makes it last
# longer, never sample less.
UNITS_PROGRAM = r'''
import sys, time
def unit():
    t = 0
    for i in range(20000):
        t += i & 7
    return t
def half():
    for _ in range(50):
        unit()
def third():
    for _ in range(30):
        unit()
def fifth():
    for _ in range(20):
        unit()
print("ready", flush=True)
while time.process_time() < float(sys.argv[1]):
    half(); third(); fifth()
'''


def parent_counts(text, names):
    """{name: count} of the stacks under each of names (the caller of unit)."""
    counts = dict.fromkeys(names, 0)
    for line in text.splitlines():
        stack, n = line.rsplit(" ", 1)
        frames = [f.split(" (")[0] for f in stack.split(";")]
        for name in reversed(frames):
            if name in counts:
                counts[name] += int(n)
                break
    return counts


@pytest.mark.parametrize("python", version_params())
def test_cpu_mode_known_shares_with_both_cores_loaded(python, tmp_path):
    python = need(python)
    (tmp_path / "prog.py").write_text(UNITS_PROGRAM)
    out = tmp_path / "p.txt"
    with Load() as load:
        rec = sonde("record", "-r", "1000", "-f", "collapsed", "-o", out, "--", python,
                    tmp_path / "prog.py", "8", cwd=str(tmp_path), timeout=600)
        assert load.running() == load.n  # the load ran all along
    assert rec.returncode == 0, rec.stderr
    assert "--mode cpu:" in rec.stderr  # the default
    got, total = shares_of(parent_counts(out.read_text(), ("half", "third", "fifth")),
                           ("half", "third", "fifth"))
    for name, truth in (("half", 50), ("third", 30), ("fifth", 20)):
        assert abs(got[name] - truth) <= 2, (got, total, rec.stderr)


# Phases of whole scheduler ticks: 10, 6 and 4 ms of the thread's own CPU
# time (thread_time, which the kernel keeps exact for the thread itself),
# the CPU each took summed and printed at the end: the truth, whatever the
# load.  (Phases by the wall clock are not: on a busy machine a phase the
# thread spends waiting for a CPU ends with little CPU in it, and the next
# one begins as the thread runs again.)  The kernel moves another thread's
# CPU figure only at its tick (4 ms here), in steps: weighing each step
# whole on the sample that first saw it sampled at the tick's rate, in step
# with phases like these (measured before 'take_cpu' spread the steps: 3
# runs in 4 off by 2.3-5.2 points on a quiet machine; after: at most 1.2
# in 4).
TICKS_PROGRAM = r'''
import sys, time
spent = {"half": 0.0, "third": 0.0, "fifth": 0.0}
def burn(seconds):
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass
def half():
    burn(0.010)
def third():
    burn(0.006)
def fifth():
    burn(0.004)
def timed(f):
    start = time.thread_time()
    f()
    spent[f.__name__] += time.thread_time() - start
while time.thread_time() < float(sys.argv[1]):
    timed(half); timed(third); timed(fifth)
total = sum(spent.values())
print("cpu " + " ".join("%s=%.3f" % (k, 100 * v / total) for k, v in spent.items()), flush=True)
'''


@pytest.mark.parametrize("python", version_params())
def test_cpu_mode_shares_of_phases_in_step_with_the_kernel_tick(python, tmp_path):
    python = need(python)
    (tmp_path / "prog.py").write_text(TICKS_PROGRAM)
    out = tmp_path / "p.txt"
    rec = sonde("record", "-r", "1000", "-f", "collapsed", "-o", out, "--", python,
                tmp_path / "prog.py", "4", cwd=str(tmp_path), timeout=600)
    assert rec.returncode == 0, rec.stderr
    line = [l for l in rec.stdout.splitlines() if l.startswith("cpu ")][-1]
    truth = {k: float(v) for k, v in (kv.split("=") for kv in line.split()[1:])}
    got, total = shares_of(parent_counts(out.read_text(), ("half", "third", "fifth")),
                           ("half", "third", "fifth"))
    for name in ("half", "third", "fifth"):
        assert abs(got[name] - truth[name]) <= 2, (got, truth, total, rec.stderr)


# One thread that holds the GIL in a pure-Python loop (holds) and lets go of
# it while hashlib hashes a large buffer (releases), both on the CPU all
# along and each many sampling periods long, timing each by its own clock;
# it prints the share of its time that held the GIL when it has done its
# rounds, and how long it was kept off the CPU at a time (each phase's
# wall time less its CPU time, squared, over the time squared: what
# share_tolerance calls `frozen`, which only a busy machine makes more
# than nothing; it runs on, up to twice as long, while that is large).
GIL_PROGRAM = r'''
import hashlib, sys, time
block = b"x" * (1 << 23)
def holds():
    t = 0
    for i in range(300000):
        t += i & 7
    return t
def releases():
    hashlib.sha256(block).digest()
spent = {"holds": 0.0, "releases": 0.0}
frozen = 0.0
print("ready", flush=True)
began = time.perf_counter()
end, last = began + float(sys.argv[1]), began + 2 * float(sys.argv[1])
while time.perf_counter() < end or (time.perf_counter() < last and
                                    frozen / (time.perf_counter() - began) ** 2 > 0.002):
    for f in (holds, releases):
        start, cpu = time.perf_counter(), time.process_time()
        f()
        took = time.perf_counter() - start
        spent[f.__name__] += took
        frozen += max(0.0, took - (time.process_time() - cpu)) ** 2
total = sum(spent.values())
print("measured holds=%.3f releases=%.3f frozen=%.6f"
      % (100 * spent["holds"] / total, 100 * spent["releases"] / total, frozen / total ** 2),
      flush=True)
'''


def measured(stdout):
    """{name: share in %} of the program's last "measured" line."""
    line = [l for l in stdout.splitlines() if l.startswith("measured ")][-1]
    return {k: float(v) for k, v in (kv.split("=") for kv in line.split()[1:])}


@pytest.mark.parametrize("python", version_params())
def test_gil_mode_keeps_the_phases_that_hold_the_gil(python, tmp_path):
    python = need(python)
    (tmp_path / "prog.py").write_text(GIL_PROGRAM)
    runs = {}
    for mode in ("gil", "wall"):
        out = tmp_path / ("%s.txt" % mode)
        rec = sonde("record", "--mode", mode, "-r", "500", "-f", "collapsed", "-o", out, "--",
                    python, tmp_path / "prog.py", "3", cwd=str(tmp_path))
        assert rec.returncode == 0, rec.stderr
        runs[mode] = (leaf_counts(out.read_text()), measured(rec.stdout))
    # gil: the GIL holder only, so the hashing phase is (almost) never there.
    gil, n = shares_of(runs["gil"][0], ("holds", "releases"))
    assert gil["holds"] >= 98, (gil, n)
    # wall: both phases, about as long as the program's own clock says each
    # took: within 5 points (on a quiet machine, seen off by up to 3.8: the
    # phases are long, and each one's first and last ticks fall either
    # way), or four deviations of the share where the program was kept off
    # the CPU for long stretches (share_tolerance's model, unbounded here).
    wall, n = shares_of(runs["wall"][0], ("holds", "releases"))
    truth = runs["wall"][1]
    p = truth["holds"] / 100
    tol = max(5, 400 * (p * (1 - p) * (1 / n + truth["frozen"])) ** 0.5)
    assert abs(wall["holds"] - truth["holds"]) <= tol, (wall, truth, tol)


# Spends a known part of its time inside except blocks (the handler calls
# handled(), the rest is outside(), each many sampling periods long),
# timed by its own clock from SIGUSR1
# (which starts the count again) to SIGUSR2 (which prints it); a class of
# its own among the types.
# Four threads: one blocked for good inside an except block of Oops
# (held_oops), one inside an except block of KeyError (held_key), one
# blocked outside any (held_none), and the main thread going in and out of
# handlers by the round (handled inside, outside after).  Each sample reads
# all four, so the first two are kept at every sample whatever the load,
# the third never.
EXCEPTION_PROGRAM = r'''
import threading
class Oops(Exception):
    pass
def work(n):
    t = 0
    for i in range(n):
        t += i & 7
    return t
def handled():
    work(200000)
def outside():
    work(300000)
never = threading.Event()
def held(error, inside):
    try:
        raise error("x")
    except error:
        inside.set()
        never.wait()
def held_oops(inside):
    held(Oops, inside)
def held_key(inside):
    held(KeyError, inside)
def held_none(inside):
    inside.set()
    never.wait()
for f in (held_oops, held_key, held_none):
    inside = threading.Event()
    threading.Thread(target=f, args=(inside,), daemon=True).start()
    inside.wait()
print("ready", flush=True)
rounds = 0
while True:
    try:
        raise (Oops if rounds % 2 else KeyError)("x")
    except (Oops, KeyError):
        handled()
    outside()
    rounds += 1
'''


@pytest.mark.parametrize("python", version_params())
def test_exception_mode_keeps_threads_in_except_blocks(python, tmp_path):
    python = need(python)
    proc = start_ready(python, tmp_path, EXCEPTION_PROGRAM)
    out = tmp_path / "p.txt"
    try:
        rec = sonde("record", "--mode", "exception", "-r", "500", "-d", "3", "-f", "collapsed",
                    "-o", out, "-p", proc.pid)
    finally:
        stop_ready(proc)
    assert rec.returncode == 0, rec.stderr
    by_root, under = {}, {}
    for line in out.read_text().splitlines():
        stack, n = line.rsplit(" ", 1)
        frames = [f.split(" (")[0] for f in stack.split(";")]
        by_root[frames[0]] = by_root.get(frames[0], 0) + int(n)
        for name in ("held_oops", "held_key", "held_none", "handled", "outside"):
            if name in frames:
                under[name] = under.get(name, 0) + int(n)
    # Only stacks inside a handler, each under its exception's type.
    assert set(by_root) <= {"<except Oops>", "<except KeyError>"}, by_root
    assert by_root.get("<except Oops>") and by_root.get("<except KeyError>"), by_root
    assert "held_none" not in under and under.get("handled"), under
    assert under.get("outside", 0) <= 0.02 * sum(by_root.values()), under
    # The two threads in handlers all along are in every sample that read
    # them: four stacks a sample, each read whole or counted torn.
    read = int(re.search(r"(\d+) thread stacks read", rec.stderr).group(1))
    torn = int(re.search(r"(\d+) torn reads skipped", rec.stderr).group(1))
    assert (read + torn) % 4 == 0, rec.stderr
    samples = (read + torn) // 4
    for name in ("held_oops", "held_key"):
        assert samples - torn <= under.get(name, 0) <= samples, (name, under, rec.stderr)


@pytest.mark.parametrize("python", version_params())
def test_thread_option_reads_only_the_threads_named(python, tmp_path):
    python = need(python)
    proc, ids = start_nice(python, tmp_path)
    try:
        runs = {}
        for pick in ("alpha", str(ids["busy_b"]), "kgamma"):
            out = tmp_path / "t.txt"
            rec = sonde("record", "--mode", "wall", "--thread", pick, "-r", "200", "-d", "1",
                        "-f", "collapsed", "-o", out, "-p", proc.pid)
            assert rec.returncode == 0, rec.stderr
            runs[pick] = set(leaf_counts(out.read_text()))
        # Threading's name, a kernel thread id, and the kernel's name all pick one.
        assert runs["alpha"] == {"spin_a"}, runs
        assert runs[str(ids["busy_b"])] == {"spin_b"}, runs
        assert runs["kgamma"] == {"spin_niced"}, runs
        dumped = sonde("dump", "--thread", "alpha", "--thread", "gamma", "-p", proc.pid)
        assert dumped.returncode == 0, dumped.stderr
        assert dumped.stdout.count("\nThread ") == 2 and "spin_a" in dumped.stdout \
            and "spin_niced" in dumped.stdout and "spin_b" not in dumped.stdout, dumped.stdout
        # None named: one line.
        none = sonde("record", "--thread", "nosuch", "-d", "0.5", "-o", tmp_path / "n.txt",
                     "-f", "collapsed", "-p", proc.pid)
        assert "--thread nosuch: no thread" in one_line(none, 1)
        none = sonde("dump", "--thread", "nosuch", "-p", proc.pid)
        # One line, and no heading of a process whose threads it then hides.
        assert "--thread nosuch: no thread" in one_line(none, 1) and none.stdout == "", none.stdout
    finally:
        proc.kill()
        proc.wait()


def test_native_thread_option_stops_only_that_thread(tmp_path):
    proc, ids = start_nice(sys.executable, tmp_path)
    try:
        out = tmp_path / "t.txt"
        rec = sonde("record", "--native", "--mode", "wall", "--thread", "alpha", "-r", "100",
                    "-d", "1", "-f", "collapsed", "-o", out, "-p", proc.pid)
    finally:
        proc.kill()
        proc.wait()
    if rec.returncode and "ptrace" in rec.stderr:
        pytest.skip(rec.stderr.strip())
    assert rec.returncode == 0, rec.stderr
    ticks = int(re.search(r"(\d+) samples", rec.stderr).group(1))
    stops = int(re.search(r"(\d+) by ptrace stops", rec.stderr).group(1))
    # One thread of five stopped per tick at most (a tick may stop none).
    assert 0 < stops <= ticks, rec.stderr
    names = {f for line in out.read_text().splitlines()
             for f in (x.split(" (")[0] for x in line.rsplit(" ", 1)[0].split(";"))}
    assert "spin_a" in names and not names & {"spin_b", "spin_niced"}, names


def test_modes_bad_input(tmp_path):
    for args in (("--mode", "bogus"), ("--mode", "cpu", "--idle"), ("--mode", "wall", "--gil")):
        for cmd in ("record", "dump", "top"):
            r = sonde(cmd, *args, "-p", os.getpid())
            line = one_line(r, 2)
            assert "mode" in line, line
