"""sonde record says the true thing when it stops early: a -d too short
to see Python says so (it said the command "ran no Python process that
sonde could read", or that no Python code ran), and running out of file
descriptors says EMFILE and how to raise the limit (it said "the process
ended" while the program ran on), and a thread another tracer holds is
one such thread, not a thread "gone" at every sample."""

import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time

import pytest

from conftest import SONDE

HANG_GUARD = 120

# Busy for 3 s in Python, with a few extension modules loaded (more
# objects for --native to open).
BUSY = ("import ctypes, decimal, json, threading, time\n"
        "t = time.time()\n"
        "while time.time() - t < 3: pass\n")


def record(args, cwd, limit_fds=None):
    def lower_limit():
        resource.setrlimit(resource.RLIMIT_NOFILE, (limit_fds, limit_fds))
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    return subprocess.run([SONDE, "record"] + args, cwd=str(cwd), env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=HANG_GUARD,
                          preexec_fn=lower_limit if limit_fds else None)


@pytest.mark.parametrize("through_shell", [False, True], ids=["python", "shell-then-python"])
def test_too_short_a_duration_says_so(tmp_path, through_shell):
    """-d 1 us ends before the interpreter is readable (most often through
    a shell, which has yet to exec Python) or after one sample at most."""
    cmd = [sys.executable, "-c", "import time; time.sleep(1)"]
    if through_shell:
        cmd = ["/bin/sh", "-c", 'exec "$0" "$@"'] + cmd
    p = record(["-d", "0.000001", "-o", "r.json", "--"] + cmd, tmp_path)
    taken = re.search(r"sonde: (\d+) samples? in", p.stderr)
    assert not taken or int(taken.group(1)) <= 1, p.stderr
    # Python's own start may be caught by the one sample (through a shell
    # too, when the sampler's start was late on a busy machine and the
    # shell had exec'd it by then): then a stack is kept, rightly.
    if re.search(r" 0 kept, [1-9]\d* idle ones dropped", p.stderr):
        # A late start (a busy machine) let the one sample find Python
        # already asleep: that is what it says.
        assert "no thread read used CPU" in p.stderr, p.stderr
    elif " 1 kept" not in p.stderr:
        assert "-d 1e-06 s" in p.stderr and "(give a longer -d)" in p.stderr, p.stderr
    assert "ran no Python process" not in p.stderr
    assert "no Python code was seen running" not in p.stderr
    assert "Traceback" not in p.stderr


def test_out_of_file_descriptors_says_emfile(tmp_path):
    """With 5 descriptors (ulimit -n 5), --native runs out of them while
    the program runs on: sonde says so, not that the process ended."""
    p = record(["--native", "-d", "20", "-o", "r.json", "--", sys.executable, "-c", BUSY],
               tmp_path, limit_fds=5)
    if "cannot start" in p.stderr:
        pytest.skip("5 descriptors do not start the program here: %s" % p.stderr.strip())
    assert "the process ended" not in p.stderr, p.stderr
    assert p.returncode == 1, p.stderr
    line = p.stderr.strip().splitlines()[-1]
    assert line.startswith("sonde: out of file descriptors (EMFILE: 'ulimit -n' is 5) while "
                           "sampling process "), p.stderr
    assert line.endswith("raise the limit (ulimit -n 1024) and run again"), p.stderr


SPIN_THREAD = """\
import sys, threading
def spin():
    open(sys.argv[1], "w").write(str(threading.get_native_id()))
    while True:
        sum(range(1000))
threading.Thread(target=spin, daemon=True).start()
while True:
    sum(range(1000))
"""


def tracer_of(pid, tid):
    with open("/proc/%d/task/%d/status" % (pid, tid)) as f:
        return int(f.read().split("\nTracerPid:")[1].split()[0])


@pytest.mark.skipif(not shutil.which("strace"), reason="no strace")
def test_thread_held_by_another_tracer_is_counted_once(tmp_path):
    """One thread under `strace -p TID`: ptrace refuses sonde that thread
    at every sample, which was counted each time as a thread "gone
    mid-sample" (255 times in a run); it is one thread held by another
    tracer, said as such."""
    tid_file = tmp_path / "tid"
    target = subprocess.Popen([sys.executable, "-c", SPIN_THREAD, str(tid_file)])
    strace = None
    try:
        guard = time.monotonic() + HANG_GUARD
        while not tid_file.exists() or not tid_file.read_text():
            assert time.monotonic() < guard and target.poll() is None
            time.sleep(0.02)
        tid = int(tid_file.read_text())
        strace = subprocess.Popen(["strace", "-p", str(tid), "-o", os.devnull],
                                  stderr=subprocess.DEVNULL)
        while tracer_of(target.pid, tid) != strace.pid:  # strace holds the thread now
            assert time.monotonic() < guard and strace.poll() is None
            time.sleep(0.02)
        p = record(["--native", "-d", "1", "-o", "r.json", "-p", str(target.pid)], tmp_path)
        assert p.returncode == 0, p.stderr
        assert ", 1 thread not read: held by another tracer (strace, gdb)" in p.stderr, p.stderr
        assert "gone mid-sample" not in p.stderr, p.stderr
    finally:
        if strace:
            strace.kill()
            strace.wait()
        target.kill()
        target.wait()


# Burns half a CPU-second in before(), makes itself undumpable (as a
# program that handles secrets does: only root may read it then), says
# so, and burns another half in after().
UNDUMPABLE = r'''
import ctypes, time
def before():
    end = time.process_time() + 0.5
    while time.process_time() < end:
        pass
def after():
    end = time.process_time() + 0.5
    while time.process_time() < end:
        pass
before()
ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE: 0
print("undumpable", flush=True)
after()
'''
NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv") or
                    not os.path.exists("/usr/bin/python3"),
                    reason="needs root, setpriv and /usr/bin/python3 to run both as nobody")
def test_lost_right_to_read_keeps_what_was_read_and_says_so():
    """sonde as a user who may read the program until it makes itself
    undumpable: what was read is written, and one line says when and why
    the samples end (it said "out of memory while sampling", exit 1, and
    wrote nothing: the sampler took the walker's -EPERM for its own -1)."""
    work = tempfile.mkdtemp(prefix="sonde-undumpable-")
    try:
        os.chmod(work, 0o777)
        prog = os.path.join(work, "prog.py")
        with open(prog, "w") as f:
            f.write(UNDUMPABLE)
        os.chmod(prog, 0o644)
        if subprocess.run(NOBODY + [SONDE, "--version"], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode != 0:
            pytest.skip("the sonde command here cannot be run by nobody")
        out = os.path.join(work, "p.txt")
        rec = subprocess.run(NOBODY + [SONDE, "record", "-f", "collapsed", "-o", out, "--",
                                       "/usr/bin/python3", prog],
                             cwd=work, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             universal_newlines=True, timeout=HANG_GUARD)
        assert rec.returncode == 0 and rec.stdout == "undumpable\n", rec.stderr
        assert re.search(r"lost the right to read process \d+ \(it made itself undumpable",
                         rec.stderr), rec.stderr
        leaves = {}
        with open(out) as f:
            for line in f:
                stack, n = line.rsplit(" ", 1)
                leaf = stack.split(";")[-1].split(" (")[0]
                leaves[leaf] = leaves.get(leaf, 0) + int(n)
        # Every sample of before() is kept; none of after() can be read.
        assert leaves.get("before", 0) > 0 and "after" not in leaves, leaves
    finally:
        shutil.rmtree(work, ignore_errors=True)
