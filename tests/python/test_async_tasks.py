"""--async: the asyncio tasks of a running process, read from outside.

sonde dump --async prints every task under the task that awaits it, with
the chain of coroutines it is suspended in.  The reference is the
interpreter's own reader of the same process, `python -m asyncio pstree
PID` (where it has one: asyncio.tools, 3.14+); before 3.14 it is the
program's own view, printed once its tasks wait: each task's frames as the
interpreter follows its coroutine's awaits (cr_await), and who awaits whom
as the program made them.
The tasks, who awaits whom, and each task's coroutines with their lines are
the same.  sonde record --async continues a running task's stack through the
tasks awaiting it, each under "<task NAME>"; the reference is the program's
own structure.  With --async-mode all, every suspended task is a stack of
its own each tick, its chain as the reference shows it."""

import json
import os
import re
import subprocess
import sys

import pytest

from conftest import need, native_params, one_line, start_ready, stop_ready, version_params

sys.path.insert(0, os.path.dirname(__file__))
from test_sampler_modes import sonde  # noqa: E402

# Three named tasks awaiting each other (alpha -> bravo -> charlie), an
# unnamed one, a gather that two tasks are awaited by, and an event loop in
# a second thread with a task of its own.  Every task waits on an event that
# is never set; "ready" is printed by a callback that runs once main and
# the tasks it made have all suspended, and once the other loop has; then
# the program's own view of its tasks, as JSON (own_view).
PROGRAM = r'''
import asyncio
import json
import threading

AWAITED_BY = {}   # a task's name -> the name of the task awaiting it
LOOPS = []


def chain(coro):
    """The frames of coro and of what it awaits, as the interpreter follows them (cr_await)."""
    frames = []
    while getattr(coro, "cr_frame", getattr(coro, "gi_frame", None)) is not None:
        f = getattr(coro, "cr_frame", None) or coro.gi_frame
        frames.append([getattr(f.f_code, "co_qualname", f.f_code.co_name),
                       f.f_code.co_filename, f.f_lineno])
        coro = getattr(coro, "cr_await", getattr(coro, "gi_yieldfrom", None))
    return frames


def view(tasks):
    return {t.get_name(): [AWAITED_BY.get(t.get_name()), chain(t.get_coro())] for t in tasks}


async def leaf(ev):
    await ev.wait()


async def middle(ev):
    await leaf(ev)


async def worker(ev, inner):
    if inner is not None:
        await inner
    else:
        await middle(ev)


def other_loop(started):
    async def serve():
        LOOPS.append(asyncio.get_running_loop())
        t = asyncio.create_task(middle(asyncio.Event()), name="elsewhere")
        AWAITED_BY["elsewhere"] = asyncio.current_task().get_name()
        asyncio.get_running_loop().call_soon(started.set)
        await t
    asyncio.run(serve())


def ready():
    print("ready", flush=True)
    tasks = view(asyncio.all_tasks(LOOPS[0]))
    tasks.update(view(asyncio.all_tasks(LOOPS[1])))
    print(json.dumps(tasks), flush=True)


async def main():
    started = threading.Event()
    threading.Thread(target=other_loop, args=(started,), name="looper", daemon=True).start()
    started.wait()
    ev = asyncio.Event()
    c = asyncio.create_task(worker(ev, None), name="charlie")
    b = asyncio.create_task(worker(ev, c), name="bravo")
    a = asyncio.create_task(worker(ev, b), name="alpha")
    d = asyncio.create_task(middle(ev))
    me = asyncio.current_task().get_name()
    AWAITED_BY.update(alpha=me, bravo="alpha", charlie="bravo")
    AWAITED_BY[d.get_name()] = me
    LOOPS.insert(0, asyncio.get_running_loop())
    asyncio.get_running_loop().call_soon(ready)
    await asyncio.gather(a, d)

asyncio.run(main())
'''


def has_pstree(python):
    return subprocess.run([python, "-c", "import asyncio.tools"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0


def pstree_tasks(text):
    """{task: (the task awaiting it or None, [(function, file, line)] outermost
    first)} from `python -m asyncio pstree`'s tree: "└── (T) NAME" for a
    task, "└──  FUNC FILE:LINE" for a coroutine, four columns a level."""
    tasks, path = {}, []
    for line in text.splitlines():
        at = line.find("── ")
        if at < 0:
            continue
        depth, node = at // 4, line[at + 3:]
        del path[depth:]
        owner = next((name for kind, name in reversed(path) if kind == "T"), None)
        if node.startswith("(T) "):
            name = node[4:].strip()
            tasks.setdefault(name, (owner, []))
            path.append(("T", name))
        else:
            func, where = node.strip().rsplit(" ", 1)
            file, lineno = where.rsplit(":", 1)
            frames = tasks[owner][1]
            if (func, file, int(lineno)) not in frames:  # a task shown twice
                frames.append((func, file, int(lineno)))
            path.append(("F", func))
    return tasks


def qualified(python, *names):
    """names as sonde shows functions of python: qualified from 3.11 on (co_qualname), the
    last part before."""
    new = subprocess.run([python, "-c", "import sys; print(sys.version_info >= (3, 11))"],
                         stdout=subprocess.PIPE, universal_newlines=True).stdout.strip()
    return [name if new == "True" else name.split(".")[-1] for name in names]


def own_view(proc):
    """The program's own view of its tasks, in pstree_tasks' shape."""
    return {name: (by, [tuple(f) for f in frames])
            for name, (by, frames) in json.loads(proc.stdout.readline()).items()}


def sonde_tasks(text):
    """The same from sonde dump --async: "task NAME (awaited by W)" lines,
    each task's coroutines four columns further in, innermost first."""
    tasks, at_indent = {}, {}
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("asyncio tasks of"))
    for line in lines[start:]:
        indent = len(line) - len(line.lstrip(" "))
        task = re.match(r"task (\S+)(?: \(awaited by (\S+)\))?$", line.strip())
        frame = re.match(r"(\S+) \((.+):(\d+)\)$", line.strip())
        if task:
            tasks[task.group(1)] = (task.group(2), [])
            at_indent[indent] = task.group(1)
        elif frame and indent - 4 in at_indent:
            tasks[at_indent[indent - 4]][1].insert(
                0, (frame.group(1), frame.group(2), int(frame.group(3))))
    return tasks


@pytest.mark.parametrize("python", version_params())
def test_tasks_and_their_awaits_as_the_interpreter_shows_them(python, tmp_path):
    python = need(python)
    proc = start_ready(python, tmp_path, PROGRAM)
    try:
        own = own_view(proc)
        ours = sonde("dump", "--async", "-p", proc.pid)
        theirs = None
        if has_pstree(python):
            theirs = subprocess.run([python, "-m", "asyncio", "pstree", str(proc.pid)],
                                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                    universal_newlines=True, timeout=120)
    finally:
        stop_ready(proc)
    assert ours.returncode == 0, ours.stderr
    if theirs:
        assert theirs.returncode == 0, theirs.stdout
    want = pstree_tasks(theirs.stdout) if theirs else own
    got = sonde_tasks(ours.stdout)
    assert got == own, (ours.stdout, own)
    assert {"alpha", "bravo", "charlie"} <= set(want), theirs.stdout
    # Every task the interpreter's reader shows, as it shows it.
    assert {name: got.get(name) for name in want} == want, (ours.stdout, theirs.stdout)
    # 3.14's reader leaves out the second thread's loop (3.15's has it): there
    # the program's own structure is the reference.
    assert len(got) == 7, ours.stdout  # main, serve, the unnamed one and four named
    serve, frames = got["elsewhere"]
    wait, serving = qualified(python, "Event.wait", "other_loop.<locals>.serve")
    assert [f[0] for f in frames] == ["middle", "leaf", wait], ours.stdout
    assert [f[0] for f in got[serve][1]] == [serving], ours.stdout
    # Each task under the thread whose loop runs it.
    looper = ours.stdout.split("asyncio tasks of thread")
    assert any("looper" in part.split("\n")[0] and "task elsewhere" in part for part in looper)


@pytest.mark.parametrize("python", native_params())
def test_tasks_with_native_frames_too(python, tmp_path):
    """dump --async --native: the threads' stacks merged with their C frames,
    and the same tasks as the program's own view."""
    python = need(python)
    proc = start_ready(python, tmp_path, PROGRAM)
    try:
        own = own_view(proc)
        ours = sonde("dump", "--async", "--native", "-p", proc.pid)
    finally:
        stop_ready(proc)
    assert ours.returncode == 0, ours.stderr
    assert sonde_tasks(ours.stdout) == own, (ours.stdout, own)


@pytest.mark.parametrize("python", version_params())
def test_a_process_without_tasks_says_so(python, tmp_path):
    """A program that never imported asyncio (3.14's _asyncio is a module of
    its own file; a build may have it built in), and one whose tasks have
    all ended: the threads, and a line that there is no task."""
    python = need(python)
    # Before 3.14 the tasks are found through a thread's event loop: without one, none is.
    no_loop = "[no asyncio task found: no thread runs an asyncio event loop]"
    for text, line in (("import time\n", "[no asyncio task: the process has not imported "
                        "asyncio]" if has_pstree(python) else no_loop),
                       ("import asyncio, time\nasyncio.run(asyncio.sleep(0))\n",
                        "[no asyncio task is alive in this process]" if has_pstree(python)
                        else no_loop)):
        proc = start_ready(python, tmp_path, text + 'print("ready", flush=True)\n'
                           'time.sleep(600)\n')
        try:
            ours = sonde("dump", "--async", "-p", proc.pid)
        finally:
            stop_ready(proc)
        assert ours.returncode == 0 and ours.stderr == "", ours.stderr
        assert "\nThread %d MainThread" % proc.pid in ours.stdout, ours.stdout
        imported = subprocess.run([python, "-c", "import sys; print('_asyncio' in "
                                   "sys.builtin_module_names)"], stdout=subprocess.PIPE,
                                  universal_newlines=True).stdout.strip() == "True"
        if imported and "not imported" in line:
            line = "[no asyncio task is alive in this process]"  # loaded with the interpreter
        assert ours.stdout.rstrip().endswith(line), ours.stdout


# A task that spins on the CPU (cruncher), awaited by a task (boss) that the
# program's main task awaits through a gather: every sample of spin() is in
# that chain of tasks.  asyncio is imported before "ready", so a recorder
# started then finds its tasks from its first sample on.
BUSY = r'''
import asyncio
import sys
import time


def spin(ms):
    end = time.perf_counter() + ms / 1000
    while time.perf_counter() < end:
        pass


async def crunch():
    while True:
        spin(5)
        await asyncio.sleep(0)


async def boss():
    await asyncio.create_task(crunch(), name="cruncher")


async def main():
    await asyncio.gather(asyncio.create_task(boss(), name="boss"))

print("ready", flush=True)
asyncio.run(main())
'''

CHAIN = ["<task Task-1>", "main", "<task boss>", "boss", "<task cruncher>", "crunch", "spin"]


def record_busy(python, tmp_path, *extra):
    """The collapsed file of record --async (and extra) attached to BUSY for
    2 s at 200 Hz."""
    proc = start_ready(python, tmp_path, BUSY)
    out = tmp_path / "p.txt"
    try:
        ours = sonde("record", "--async", *extra, "-p", proc.pid, "-d", "2", "-r", "200", "-f",
                     "collapsed", "-o", out)
    finally:
        stop_ready(proc)
    assert ours.returncode == 0, ours.stderr
    return out


def spin_stacks(out):
    """(function names outermost first, weight) of each stack holding spin
    in the collapsed file out."""
    for line in out.read_text().splitlines():
        stack, weight = line.rsplit(" ", 1)
        names = [frame.split(" (")[0] for frame in stack.split(";")]
        if "spin" in names:
            yield names, int(weight)


@pytest.mark.parametrize("python", version_params())
def test_record_async_puts_a_running_task_under_the_tasks_awaiting_it(python, tmp_path):
    out = record_busy(need(python), tmp_path)
    spinning = 0
    for names, weight in spin_stacks(out):
        # The event loop's frames (run_forever, Handle._run) are not there:
        # the task's chain of awaiting tasks is.
        assert names[:len(CHAIN)] == CHAIN, names
        spinning += weight
    assert spinning > 0, out.read_text()


@pytest.mark.parametrize("python", native_params())
def test_record_async_native_keeps_the_c_frames_above_the_task_chain(python, tmp_path):
    """--async --native: the C frames a task's Python code calls stay above
    it (time.perf_counter's, inside spin), and the chain of tasks replaces
    both the event loop's Python frames and the C frames below them."""
    out = record_busy(need(python), tmp_path, "--native")
    spinning = native_above = 0
    for names, weight in spin_stacks(out):
        assert names[:len(CHAIN)] == CHAIN, names
        spinning += weight
        native_above += weight * (len(names) > len(CHAIN))
    assert spinning > 0 and native_above > 0, out.read_text()


@pytest.mark.parametrize("python", version_params())
def test_record_async_of_a_launched_program_finds_its_tasks_once_asyncio_runs(python, tmp_path):
    """-- CMD starts the program before it imports asyncio: sonde looks for
    the module again as soon as a frame of asyncio's own code is met, so at
    most the one sample that met it is left under the event loop."""
    python = need(python)
    prog = tmp_path / "prog.py"
    prog.write_text(BUSY.replace("    while True:\n        spin(5)",
                                 "    for _ in range(300):\n        spin(5)")
                    .replace('await asyncio.create_task(crunch(), name="cruncher")',
                             'await asyncio.create_task(crunch(), name="cruncher")\n'
                             '    raise SystemExit(0)'))
    out = tmp_path / "p.txt"
    # --mode wall: each stack's count is its samples.
    ours = sonde("record", "--async", "--mode", "wall", "-r", "200", "-f", "collapsed", "-o", out,
                 "--", python, prog)
    assert ours.returncode == 0, ours.stderr
    under_tasks = under_loop = 0
    for names, samples in spin_stacks(out):
        if names[:len(CHAIN)] == CHAIN:
            under_tasks += samples
        else:
            under_loop += samples
    assert under_tasks > 0 and under_loop <= 1, out.read_text()


def chain_of(tasks, name):
    """The collapsed stack (outermost first) of a suspended task: from the
    task nothing awaits down to it, each "<task NAME>" and then its
    coroutines, outermost first ({task: (awaited by, frames)} as
    pstree_tasks gives)."""
    path = []
    while name is not None and name not in path[::2]:
        path[:0] = ["<task %s>" % name] + [f[0] for f in tasks[name][1]]
        name = tasks[name][0]
    return path


@pytest.mark.parametrize("python", version_params())
def test_record_async_mode_all_has_every_suspended_task(python, tmp_path):
    """--async-mode all (--mode wall): each tick, every task that waits is
    a stack of its own on its loop's thread: its chain of awaiting tasks and
    their coroutines, as `python -m asyncio pstree` shows them (3.14's
    leaves out a second thread's loop: there the program's structure is the
    reference; before 3.14, the program's own view); every task as often as
    every other (once a tick)."""
    python = need(python)
    proc = start_ready(python, tmp_path, PROGRAM)
    out = tmp_path / "all.txt"
    try:
        own = own_view(proc)
        ours = sonde("record", "--mode", "wall", "--async-mode", "all", "--threads", "-p",
                     proc.pid, "-d", "1", "-r", "50", "-f", "collapsed", "-o", out)
        theirs = None
        if has_pstree(python):
            theirs = subprocess.run([python, "-m", "asyncio", "pstree", str(proc.pid)],
                                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                    universal_newlines=True, timeout=120)
    finally:
        stop_ready(proc)
    assert ours.returncode == 0, ours.stderr
    if theirs:
        assert theirs.returncode == 0, theirs.stdout
    stacks = {}
    for line in out.read_text().splitlines():
        stack, samples = line.rsplit(" ", 1)
        names = tuple(frame.split(" (")[0] for frame in stack.split(";"))
        if any(name.startswith("<task ") for name in names):
            stacks[names] = int(samples)
    want = pstree_tasks(theirs.stdout) if theirs else own
    assert {"alpha", "bravo", "charlie"} <= set(want), want
    wait, serving = qualified(python, "Event.wait", "other_loop.<locals>.serve")
    for name in own:
        assert tuple(chain_of(own, name)) in {names[1:] for names in stacks}, (name, stacks)
    for name in want:
        assert tuple(chain_of(want, name)) in {names[1:] for names in stacks}, (name, stacks)
    # Each on its loop's thread: the second loop's tasks on "looper".
    for names in stacks:
        assert names[0] == ("thread looper" if serving in names else "thread MainThread"), names
    elsewhere = [names for names in stacks if "<task elsewhere>" in names]
    assert len(elsewhere) == 1, stacks
    assert elsewhere[0][-4:] == ("<task elsewhere>", "middle", "leaf", wait), stacks
    # main, serve, the unnamed one and four named: each once a tick
    assert len(stacks) == 7 and len(set(stacks.values())) == 1, stacks
    assert "sonde: --async-mode all: %d stacks of suspended asyncio tasks" % (
        7 * next(iter(stacks.values()))) in ours.stderr, ours.stderr


def test_record_async_mode_bad_input(tmp_path):
    for args, why in ((("--async-mode", "some"), "--async-mode takes running or all"),
                      (("--async-mode", "all"), "goes with --mode wall"),
                      (("--async-mode", "all", "--mode", "cpu"), "goes with --mode wall")):
        r = sonde("record", *args, "-p", os.getpid())
        assert why in one_line(r, 2), r.stderr
