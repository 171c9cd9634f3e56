"""sonde dump and sonde record of a process with a live subinterpreter, on
every interpreter: the threads of every interpreter are read, each labelled
with its interpreter, against the program's own account of which function
runs in which interpreter (issue 23, item 6: the newest interpreter heads
CPython's list, and sonde read only that one, so the main interpreter's
threads vanished while a subinterpreter lived)."""

import re
import subprocess

import pytest

from conftest import SONDE, need, version_params

# Runs sub_work in a subinterpreter (from a thread of the main one) and
# main_work in the main interpreter's main thread, each sleeping in C
# (3.9 to 3.11 share one GIL between interpreters but ask its holder to
# let go per interpreter, so a thread spinning in one starves the others
# for ever); says "ready ID" (the subinterpreter's id, as CPython numbers
# it) once sub_work has started.
PROGRAM = r'''
import os, threading, time
try:
    import _interpreters as interpreters   # 3.13 and later
    run = interpreters.exec
except ImportError:
    import _xxsubinterpreters as interpreters   # before 3.13
    run = interpreters.run_string

started, started_w = os.pipe()
SUB = """
import os, time
def sub_work():
    os.write(%d, b"x")
    while True:
        time.sleep(100)
sub_work()
""" % started_w

interp = interpreters.create()
threading.Thread(target=run, args=(interp, SUB), daemon=True).start()
os.read(started, 1)

def main_work():
    print("ready", int(interp), flush=True)
    while True:
        time.sleep(100)

main_work()
'''


@pytest.fixture
def target(request, tmp_path):
    """(process, subinterpreter id) of PROGRAM under the interpreter given."""
    python = need(request.param)
    (tmp_path / "prog.py").write_text(PROGRAM)
    proc = subprocess.Popen([python, "prog.py"], cwd=str(tmp_path), stdout=subprocess.PIPE,
                            universal_newlines=True)
    line = proc.stdout.readline()
    if not re.match(r"ready \d+\n$", line):
        proc.kill()
        proc.wait()
        raise AssertionError("the program never got going: %r" % line)
    yield proc, int(line.split()[1])
    proc.kill()
    proc.wait()
    proc.stdout.close()


def in_sub(name, sub_id):
    """Whether a thread's name labels it as subinterpreter sub_id's."""
    return re.search(r"(^| )interpreter %d$|\(interpreter %d\)$" % (sub_id, sub_id), name)


def sonde(*args):
    return subprocess.run([SONDE] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=120)


@pytest.mark.parametrize("target", version_params(), indirect=True)
def test_dump_lists_the_threads_of_every_interpreter(target):
    proc, sub_id = target
    out = sonde("dump", "-p", str(proc.pid))
    assert out.returncode == 0, out.stderr
    # Each thread: its heading, then its frames innermost first.
    threads = {}
    for block in out.stdout.split("\nThread ")[1:]:
        heading, *frames = block.splitlines()
        first = next((f.split()[0] for f in frames if f.startswith("    ") and
                      not f.startswith("        ")), None)
        threads[re.sub(r" \((active|idle|state unknown).*", "", heading)] = first
    # The main interpreter's main thread, read before the fix as nothing
    # (3.13) or without frames (3.12).
    assert threads.get("%d MainThread" % proc.pid) == "main_work", out.stdout
    # The subinterpreter's thread, by the id the program got from CPython:
    # "interpreter ID", or "NAME (interpreter ID)" where its thread state
    # names a thread (up to 3.10, the one that made the interpreter).
    subs = [name for name, first in threads.items() if first == "sub_work"]
    assert len(subs) == 1 and in_sub(subs[0], sub_id), out.stdout


@pytest.mark.parametrize("target", version_params(), indirect=True)
def test_record_samples_every_interpreter(target, tmp_path):
    proc, sub_id = target
    out = tmp_path / "p.txt"
    # Wall mode: every snapshot reads both threads, asleep as they are,
    # so their counts match whatever the load.
    rec = sonde("record", "-p", str(proc.pid), "-d", "1", "--mode", "wall", "--threads",
                "-f", "collapsed", "-o", str(out))
    assert rec.returncode == 0, rec.stderr
    per_thread = {}
    for line in out.read_text().splitlines():
        stack, count = line.rsplit(" ", 1)
        names = [f.rsplit(" (", 1)[0] for f in stack.split(";")]  # "NAME (FILE:LINE)"
        if names[-1] in ("main_work", "sub_work"):
            key = (names[0], names[-1])
            per_thread[key] = per_thread.get(key, 0) + int(count)
    main = per_thread.pop(("thread MainThread", "main_work"), 0)
    subs = [key for key in per_thread if key[1] == "sub_work" and in_sub(key[0], sub_id)]
    assert len(subs) == 1 and len(per_thread) == 1, per_thread
    sub = per_thread[subs[0]]
    # Both stacks in (nearly) every snapshot: a torn read may drop a few.
    assert main >= 20 and sub >= 20 and abs(main - sub) <= 0.1 * max(main, sub), \
        (per_thread, rec.stderr)
