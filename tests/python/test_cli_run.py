"""sonde run from the command line: the program behaves as when run bare,
the profile agrees with cProfile's, and it survives every way of ending."""

import json
import marshal
import os
import re
import signal
import subprocess
import sys
import time

import pytest

import profcompare
from conftest import SONDE, need, run_sonde, signals_at_default, version_params

PROBE = """
import json, os, sys
print(json.dumps({"argv": sys.argv, "name": __name__, "path0": sys.path[0],
                  "main_is_here": sys.modules["__main__"].__dict__ is globals()}))
sys.exit(7)
"""

PROGRAM = """
import json, re, threading

def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)

def gen(n):
    for i in range(n):
        yield i * i

class Box:
    def __init__(self, v):
        self.v = v
    def get(self):
        return self.v

def main():
    total = fib(14) + sum(gen(50)) + sum(Box(i).get() for i in range(30))
    json.loads(json.dumps({"a": list(range(20))}))
    re.findall(r"a+", "caaab" * 10)
    try:
        int("not a number")
    except ValueError:
        pass
    return total

main()
"""


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def bare(python, args, cwd):
    return subprocess.run([python] + args, cwd=str(cwd), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True)


@pytest.mark.parametrize("python", version_params())
def test_program_sees_a_bare_run(python, tmp_path):
    python = need(python)
    write(tmp_path, "probe.py", PROBE)
    ours = run_sonde(["run", "probe.py", "a", "--flag"], tmp_path, python=python)
    theirs = bare(python, ["probe.py", "a", "--flag"], tmp_path)
    assert ours.returncode == theirs.returncode == 7
    assert json.loads(ours.stdout) == json.loads(theirs.stdout)
    assert "function calls" in ours.stderr


def test_module_and_code_modes(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    write(pkg, "__init__.py", "")
    write(pkg, "tool.py", PROBE)
    ours = run_sonde(["run", "-m", "pkg.tool", "x"], tmp_path)
    theirs = bare(sys.executable, ["-m", "pkg.tool", "x"], tmp_path)
    assert ours.returncode == theirs.returncode == 7
    assert json.loads(ours.stdout) == json.loads(theirs.stdout)

    code = PROBE.replace("sys.exit(7)", "sys.exit(3)")
    ours = run_sonde(["run", "-c", code, "y"], tmp_path)
    theirs = bare(sys.executable, ["-c", code, "y"], tmp_path)
    assert ours.returncode == theirs.returncode == 3
    assert json.loads(ours.stdout) == json.loads(theirs.stdout)


@pytest.mark.parametrize("python", version_params())
def test_program_edges_equal_cprofile(python, tmp_path):
    python = need(python)
    prog = write(tmp_path, "prog.py", PROGRAM)
    # Absolute paths: cProfile keys the script by the name it was given.
    ours = run_sonde(["run", "-o", "s.prof", str(prog)], tmp_path, python=python)
    assert ours.returncode == 0, ours.stderr
    subprocess.run([python, "-m", "cProfile", "-o", "c.prof", str(prog)], cwd=str(tmp_path),
                   check=True, stdout=subprocess.PIPE)
    keep = {os.path.realpath(str(prog))}
    assert profcompare.differences(str(tmp_path / "s.prof"), str(tmp_path / "c.prof"),
                                   keep_files=keep) == []
    fib = [v for k, v in marshal.load(open(str(tmp_path / "s.prof"), "rb")).items()
           if k[2] == "fib"][0]
    assert fib[:2] == (1, 1219)


def test_uncaught_exception_keeps_profile(tmp_path):
    write(tmp_path, "boom.py", "def inner():\n    raise KeyError('k')\n\ndef outer():\n"
          "    inner()\n\nouter()\n")
    proc = run_sonde(["run", "-o", "b.prof", "boom.py"], tmp_path)
    assert proc.returncode == 1
    assert "Traceback (most recent call last)" in proc.stderr
    assert "KeyError: 'k'" in proc.stderr
    assert 'boom.py", line 2, in inner' in proc.stderr
    assert "_launch" not in proc.stderr and "sonde" not in proc.stderr.split("Traceback")[1].split("KeyError")[0]
    stats = marshal.load(open(str(tmp_path / "b.prof"), "rb"))
    assert {k[2] for k in stats} >= {"inner", "outer", "<module>"}


def test_sys_exit_with_message(tmp_path):
    write(tmp_path, "bye.py", "import sys\nsys.exit('bye now')\n")
    proc = run_sonde(["run", "bye.py"], tmp_path)
    assert proc.returncode == 1
    assert proc.stderr.startswith("bye now\n")


def test_ctrl_c_keeps_profile(tmp_path):
    # ready once spin has run 200 times, so the profile must count them all
    write(tmp_path, "spin.py", "import sys\ndef spin():\n    return sum(range(100))\n"
          "for _ in range(200):\n    spin()\n"
          "print('ready', flush=True)\nwhile True:\n    spin()\n")
    env = dict(os.environ, SONDE_PYTHON=sys.executable)
    proc = subprocess.Popen([SONDE, "run", "-o", "spin.prof", "spin.py"], cwd=str(tmp_path),
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            universal_newlines=True, start_new_session=True,
                            preexec_fn=signals_at_default)
    assert proc.stdout.readline() == "ready\n"
    os.killpg(proc.pid, signal.SIGINT)  # what the terminal does on Ctrl-C
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGINT
    assert "KeyboardInterrupt" in err and "function calls" in err
    stats = marshal.load(open(str(tmp_path / "spin.prof"), "rb"))
    spin = [v for k, v in stats.items() if k[2] == "spin"][0]
    assert spin[1] >= 200


def test_forked_child_leaves_the_parents_profile(tmp_path):
    """A forked child that ends normally after the parent must not replace
    the parent's profile with its own."""
    write(tmp_path, "forks.py", """
import os, sys, time
def parent_work():
    return sum(range(1000))
def child_work():
    return sum(range(10))
parent = os.getpid()
pid = os.fork()
if pid == 0:
    open("child.pid", "w").write(str(os.getpid()))
    while os.getppid() == parent:   # outlive the parent
        time.sleep(0.01)
    child_work()
    sys.exit(0)
for _ in range(5):
    parent_work()
""")
    proc = run_sonde(["run", "-o", "f.prof", "forks.py"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    child = int((tmp_path / "child.pid").read_text())

    def alive():
        try:
            with open("/proc/%d/stat" % child) as f:
                return f.read().rsplit(")", 1)[1].split()[0] != "Z"
        except OSError:
            return False

    deadline = time.time() + 20
    while alive() and time.time() < deadline:
        time.sleep(0.02)
    assert not alive(), "the forked child never ended"
    names = {k[2]: v[1] for k, v in marshal.load(open(str(tmp_path / "f.prof"), "rb")).items()}
    assert names.get("parent_work") == 5 and "child_work" not in names
    assert proc.stderr.count("function calls") == 1


def test_threads_each_have_their_stack(tmp_path):
    write(tmp_path, "threads.py", """
import threading
def work_a(n):
    return sum(i for i in range(n))
def work_b(n):
    return [str(i) for i in range(n)]
def run(fn, times):
    for _ in range(times):
        fn(100)
ta = threading.Thread(target=run, args=(work_a, 40), name="worker-a")
tb = threading.Thread(target=run, args=(work_b, 25), name="worker-b")
ta.start(); tb.start()
run(work_a, 3)
""")
    proc = run_sonde(["run", "-f", "json", "-o", "t.json", "threads.py"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    doc = json.load(open(str(tmp_path / "t.json")))
    names = {t["name"] for t in doc["threads"]}
    assert {"MainThread", "worker-a", "worker-b"} <= names
    funcs = doc["functions"]
    calls = {funcs[s["function"]]["name"]: s["ncalls"] for s in doc["stats"]}
    assert calls["work_a"] == 43 and calls["work_b"] == 25 and calls["run"] == 3
    # Each call path is per thread: work_b is only ever under worker-b's root.
    nodes = doc["nodes"]
    root_of = {}
    for t in doc["threads"]:
        root_of[t["root"]] = t["name"]

    def thread_of(i):
        while nodes[i][1] != 0:
            i = nodes[i][1]
        return root_of[i]

    b_id = [i for i, f in enumerate(funcs) if f["name"] == "work_b"][0]
    assert {thread_of(i) for i, n in enumerate(nodes) if n[0] == b_id} == {"worker-b"}


def test_collapsed_output(tmp_path):
    write(tmp_path, "prog.py", PROGRAM)
    proc = run_sonde(["run", "-f", "collapsed", "-o", "p.txt", "prog.py"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = (tmp_path / "p.txt").read_text().splitlines()
    frame = r"[^;]+ \([^;]*:-?\d+\)"
    assert lines and all(re.fullmatch(r"%s(;%s)* \d+" % (frame, frame), l) for l in lines)
    deep = [l for l in lines if re.search(r"main \(.*prog\.py:\d+\);fib \(.*prog\.py:\d+\);fib ", l)]
    assert deep, "no main;fib;fib stack"
    assert all(l.startswith("<built-in method builtins.exec> (~:0);<module>") for l in lines
               if "prog.py" in l)


def test_speedscope_output(tmp_path):
    write(tmp_path, "prog.py", PROGRAM)
    proc = run_sonde(["run", "-f", "speedscope", "-o", "p.json", "prog.py"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    doc = json.load(open(str(tmp_path / "p.json")))
    frames = doc["shared"]["frames"]
    (main,) = doc["profiles"]
    assert main["type"] == "evented" and main["name"] == "MainThread"
    # Events open and close frames in time order, properly nested: replayed,
    # the stacks include main -> fib -> fib, and the last close is the end.
    stack, paths, last = [], set(), 0
    for e in main["events"]:
        assert 0 <= e["frame"] < len(frames) and e["at"] >= last
        last = e["at"]
        if e["type"] == "O":
            stack.append(e["frame"])
            paths.add(tuple(frames[i]["name"] for i in stack[-3:]))
        else:
            assert e["type"] == "C" and stack.pop() == e["frame"]
    assert not stack and ("main", "fib", "fib") in paths
    assert abs(last - main["endValue"]) <= 1e-6 * max(1, main["endValue"])


def test_verdicts(tmp_path):
    write(tmp_path, "busy.py", "def spin():\n    return sum(i * i for i in range(300000))\n"
          "for _ in range(12):\n    spin()\n")
    proc = run_sonde(["run", "busy.py"], tmp_path)
    assert "verdict:   CPU-bound" in proc.stderr
    write(tmp_path, "nap.py", "import time\nfor _ in range(3):\n    time.sleep(0.15)\n")
    proc = run_sonde(["run", "nap.py"], tmp_path)
    assert "verdict:   waiting on sleep" in proc.stderr and "time.sleep" in proc.stderr
    for field in ("wall", "user", "sys", "max RSS", "major", "minor", "voluntary", "involuntary"):
        assert field in proc.stderr



# Reads a 64 MB file through mmap from a cold page cache, a page at a
# time: thousands of major page faults, all of them reads of the disk.
COLD_MMAP = """
import mmap, os
SIZE = 64 << 20
with open("cold.bin", "wb") as f:
    block = os.urandom(1 << 20)
    for _ in range(SIZE >> 20):
        f.write(block)
    f.flush()
    os.fsync(f.fileno())
    os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
with open("cold.bin", "rb") as f:
    m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
    m.madvise(mmap.MADV_RANDOM)
    print(sum(m[off] for off in range(0, SIZE, 4096)))
"""


def machine_memory_pressure():
    """The kernel's own counters: seconds some task stalled for memory,
    pages swapped in (None where the kernel has no such file)."""
    stall = swapped = None
    if os.path.exists("/proc/pressure/memory"):
        first = open("/proc/pressure/memory").readline()
        stall = int(first.rsplit("total=", 1)[1]) / 1e6
    for line in open("/proc/vmstat"):
        if line.startswith("pswpin "):
            swapped = int(line.split()[1])
    return stall, swapped


def test_verdict_memory_pressure_needs_evidence(tmp_path):
    """Major faults alone are not memory pressure: a cold file read through
    mmap faults on every page with gigabytes free.  The verdict says
    pressure only when the kernel's counters show the machine stalled for
    memory or swapped while the program ran (before: "memory pressure ...
    use less memory or give the machine more" on any 100 major faults)."""
    write(tmp_path, "cold.py", COLD_MMAP)
    stall0, swapped0 = machine_memory_pressure()
    start = time.monotonic()
    proc = run_sonde(["run", "cold.py"], tmp_path)
    wall = time.monotonic() - start
    stall1, swapped1 = machine_memory_pressure()
    assert proc.returncode == 0, proc.stderr
    major = int(re.search(r"page faults (\d+) major", proc.stderr).group(1))
    assert major >= 1000, proc.stderr  # the file's pages were read from the disk
    pressed = ((stall1 - stall0 > 0.02 * wall) if stall0 is not None else False) or \
        (swapped1 - swapped0 >= 100 if swapped0 is not None else False)
    assert ("verdict:   memory pressure" in proc.stderr) == pressed, (pressed, proc.stderr)

def one_error_line(proc, code):
    assert proc.returncode == code, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("sonde"), proc.stderr
    assert "Traceback" not in proc.stderr
    return lines[0]


def test_bad_input(tmp_path):
    assert "no-such.py" in one_error_line(run_sonde(["run", "no-such.py"], tmp_path), 2)
    write(tmp_path, "bad.py", "def f(:\n    pass\n")
    assert "SyntaxError" in one_error_line(run_sonde(["run", "bad.py"], tmp_path), 1)
    assert "no_such_mod" in one_error_line(run_sonde(["run", "-m", "no_such_mod"], tmp_path), 1)
    one_error_line(run_sonde(["run", "--bogus", "x.py"], tmp_path), 2)
    one_error_line(run_sonde(["run", "-f", "nope", "bad.py"], tmp_path), 2)
    one_error_line(run_sonde(["run", "-s", "nope", "bad.py"], tmp_path), 2)
    one_error_line(run_sonde(["run", "-l", "many", "bad.py"], tmp_path), 2)
    one_error_line(run_sonde(["run"], tmp_path), 2)
    one_error_line(run_sonde(["nosuchcommand"], tmp_path), 2)
    write(tmp_path, "side.py", "open('ran', 'w').close()\n")
    line = one_error_line(run_sonde(["run", "-o", "/no/such/dir/x.prof", "side.py"], tmp_path), 1)
    assert "/no/such/dir/x.prof" in line and not (tmp_path / "ran").exists()
    env_python = run_sonde(["run", "--python", "/no/such/python", "side.py"], tmp_path)
    one_error_line(env_python, 1)


SPIN = """
def spin(n):
    total = 0
    for i in range(n):
        total += i
    return total

spin(10000000)
"""


def test_verdict_cpu_bound_on_a_busy_machine(tmp_path):
    """A CPU loop that shares its one CPU with another busy process waits
    for that CPU about half the time (the kernel's run queue, read before
    the program is reaped): CPU-bound on a busy machine, not waiting."""
    cpu = min(os.sched_getaffinity(0))
    hog = subprocess.Popen([sys.executable, "-c", "import os\nos.sched_setaffinity(0, {%d})\n"
                            "print('ready', flush=True)\nwhile True:\n    pass\n" % cpu],
                           stdout=subprocess.PIPE, universal_newlines=True)
    try:
        assert hog.stdout.readline() == "ready\n"
        write(tmp_path, "spin.py", SPIN)
        proc = run_sonde(["run", "spin.py"], tmp_path,
                         preexec_fn=lambda: os.sched_setaffinity(0, {cpu}))
    finally:
        hog.kill()
        hog.wait()
    assert proc.returncode == 0, proc.stderr
    verdict = re.search(r"verdict:   CPU-bound on a busy machine: the program ran (\d+)% of the "
                        r"wall time and waited (\d+)% \(([\d.]+) s\) for a CPU", proc.stderr)
    assert verdict, proc.stderr
    ran, queued, seconds = int(verdict.group(1)), int(verdict.group(2)), verdict.group(3)
    assert queued >= 25 and ran + queued >= 80  # two busy processes on one CPU: half each
    assert "waited %s s for a CPU (the main thread, ready to run)" % seconds in proc.stderr


POOL = """
import multiprocessing, time

def cpu(n):
    start = time.process_time()
    total = 0
    for i in range(n):
        total += i * i
    return time.process_time() - start

if __name__ == "__main__":
    with multiprocessing.get_context("fork").Pool(2) as pool:
        spent = pool.map(cpu, [2000000] * 6)
        pool.close()
        pool.join()
    print(sum(spent))
"""


def test_verdict_cpu_went_to_child_processes(tmp_path):
    """A pool's parent only waits: the CPU went to the workers, whose own
    clocks (time.process_time) say how much; the verdict says so and
    points to the tool that sees them."""
    write(tmp_path, "pool.py", POOL)
    proc = run_sonde(["run", "pool.py"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    spent = float(proc.stdout)
    used = re.search(r"child processes used ([\d.]+) s of the CPU", proc.stderr)
    assert used, proc.stderr
    # The workers' tasks, plus their start and the pool's plumbing.
    assert spent - 0.02 <= float(used.group(1)) <= spent + 0.3
    assert "verdict:   the CPU went to child processes: they used %s s of it" % used.group(1) \
        in proc.stderr
    assert "sonde run --subprocesses" in proc.stderr


def test_a_command_on_path_runs_as_its_script(tmp_path):
    """`sonde run sphinx-build ...`: a name that is no file here is looked
    up on PATH, as kernprof does, and its Python script is run (argv[0]
    its path, as the shell gives it); a command that is not Python gets
    one line that says so and where sonde record fits."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    tool = bin_dir / "greet-tool"
    tool.write_text("#!/usr/bin/env python3\nimport sys\n\ndef main():\n"
                    "    print('hello', sys.argv[0], sys.argv[1:])\n\nmain()\n")
    (bin_dir / "shell-tool").write_text("#!/bin/sh\necho hi\n")
    for f in ("greet-tool", "shell-tool"):
        os.chmod(str(bin_dir / f), 0o755)
    env = dict(os.environ, PATH="%s:%s" % (bin_dir, os.environ["PATH"]),
               SONDE_PYTHON=sys.executable)
    env.pop("PYTHONPATH", None)
    done = subprocess.run([SONDE, "run", "-o", "t.prof", "greet-tool", "a", "b"],
                          cwd=str(tmp_path), env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "hello %s ['a', 'b']\n" % tool
    stats = marshal.loads((tmp_path / "t.prof").read_bytes())
    assert [v[1] for k, v in stats.items() if k[2] == "main" and k[0] == str(tool)] == [1]
    done = subprocess.run([SONDE, "run", "shell-tool"], cwd=str(tmp_path), env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=120)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == ("sonde: cannot run 'shell-tool': no such file here, and the command "
                           "%s is not a Python script (sonde record -- shell-tool ... samples "
                           "the Python processes any command starts)\n" % (bin_dir / "shell-tool"))
