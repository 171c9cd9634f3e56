"""sonde dump and sonde record, from outside the process, on every
interpreter: stacks and lines against the program's own view of itself,
CPU shares against a workload with known shares, and every error case."""

import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest

from conftest import SONDE, need, version_params

# Writes its own stack (as traceback sees it) to a file, then spins on a
# known line until killed (one line: a two-line loop may be caught on either).
STACK_PROGRAM = r'''
import json, sys, threading, time, traceback

def sleeper():
    while True:
        time.sleep(0.05)

def innermost(path):
    here = [(f.name, f.lineno) for f in traceback.extract_stack()]
    here[-1] = ("innermost", SPIN_LINE)
    with open(path, "w") as out:
        json.dump(here[::-1], out)
    x = 0
    while True: x += 1  # spin here
def middle(path):
    innermost(path)
def outer(path):
    middle(path)

SPIN_LINE = [i for i, l in enumerate(open(__file__), 1) if l.strip().startswith("while True: x")][0]
threading.Thread(target=sleeper, name="naps-\u00e9", daemon=True).start()
outer(sys.argv[1])
'''

# Burns CPU in three functions with known shares of each round (50/30/20).
SHARES_PROGRAM = r'''
import sys, time

def burn(seconds):
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass

def half():
    burn(0.010)

def third():
    burn(0.006)

def fifth():
    burn(0.004)

end = time.perf_counter() + float(sys.argv[1])
while time.perf_counter() < end:
    half(); third(); fifth()
'''


def start(python, tmp_path, text, *args):
    prog = tmp_path / "prog.py"
    prog.write_text(text)
    return subprocess.Popen([python, str(prog)] + [str(a) for a in args], cwd=str(tmp_path))


def wait_for(path, proc, timeout=20):
    deadline = time.time() + timeout
    while not path.exists() or not path.read_text():
        assert proc.poll() is None, "the program ended early"
        assert time.time() < deadline, "the program never got going"
        time.sleep(0.02)
    return json.loads(path.read_text())


def sonde(*args, **kw):
    return subprocess.run([SONDE] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=kw.pop("timeout", 120), **kw)


@pytest.mark.parametrize("python", version_params())
def test_dump_shows_every_thread(python, tmp_path):
    python = need(python)
    proc = start(python, tmp_path, STACK_PROGRAM, tmp_path / "stack.json")
    try:
        expected = wait_for(tmp_path / "stack.json", proc)
        out = sonde("dump", "-p", str(proc.pid))
    finally:
        proc.kill()
        proc.wait()
    assert out.returncode == 0, out.stderr
    threads = out.stdout.split("\nThread ")[1:]
    assert len(threads) == 2
    (main,) = [t for t in threads if "MainThread" in t.splitlines()[0]]
    frames = re.findall(r"^    (\S+) \((.*):(\d+)\)$", main, re.M)
    got = [(name.split(".")[-1], int(line)) for name, _file, line in frames]
    assert got == [tuple(e) for e in expected]
    assert "x += 1  # spin here" in main  # the source line under its frame
    (other,) = [t for t in threads if t is not main]
    # The thread's own name, read from its threading.Thread object.
    assert re.match(r"\d+ naps-\u00e9 \(idle\)", other.splitlines()[0]), other.splitlines()[0]
    assert "sleeper" in other


def shares(collapsed_text):
    """Share of samples per leaf function among half/third/fifth."""
    counts = {"half": 0, "third": 0, "fifth": 0}
    for line in collapsed_text.splitlines():
        stack, n = line.rsplit(" ", 1)
        names = [f.split(" (")[0] for f in stack.split(";")]
        for name in reversed(names):
            if name in counts:
                counts[name] += int(n)
                break
    total = sum(counts.values())
    assert total > 0
    return {k: 100.0 * v / total for k, v in counts.items()}


@pytest.mark.parametrize("python", version_params())
def test_record_known_shares(python, tmp_path):
    python = need(python)
    out = tmp_path / "p.txt"
    rec = sonde("record", "-r", "1000", "-f", "collapsed", "-o", str(out), "--",
                python, str(tmp_path / "prog.py"), "3", cwd=str(tmp_path)) \
        if (tmp_path / "prog.py").write_text(SHARES_PROGRAM) else None
    assert rec.returncode == 0, rec.stderr
    got = shares(out.read_text())
    for name, truth in (("half", 50), ("third", 30), ("fifth", 20)):
        assert abs(got[name] - truth) <= 2, (name, got)
    assert re.search(r"(\d+) samples", rec.stderr)


def test_record_attached_at_100hz(tmp_path):
    """Attaching to a running process (the -p path) at the default rate."""
    proc = start(sys.executable, tmp_path, SHARES_PROGRAM, 30)
    out = tmp_path / "p.txt"
    try:
        time.sleep(0.5)
        rec = sonde("record", "-p", str(proc.pid), "-d", "5", "-f", "collapsed", "-o", str(out))
    finally:
        proc.kill()
        proc.wait()
    assert rec.returncode == 0, rec.stderr
    samples = int(re.search(r"(\d+) samples", rec.stderr).group(1))
    assert 450 <= samples <= 505
    got = shares(out.read_text())
    for name, truth in (("half", 50), ("third", 30), ("fifth", 20)):
        assert abs(got[name] - truth) <= 2, (name, got)


def test_record_passes_exit_code_and_writes_speedscope(tmp_path):
    prog = tmp_path / "ends.py"
    prog.write_text("import sys, time\ndef work():\n    t = time.perf_counter() + 0.5\n"
                    "    while time.perf_counter() < t: pass\nwork()\nsys.exit(4)\n")
    out = tmp_path / "p.json"
    rec = sonde("record", "-f", "speedscope", "-o", str(out), "--", sys.executable, str(prog),
                cwd=str(tmp_path))
    assert rec.returncode == 4, rec.stderr
    doc = json.load(open(str(out)))
    names = {f["name"] for f in doc["shared"]["frames"]}
    assert "work" in names
    assert sum(p["endValue"] - p["startValue"] for p in doc["profiles"]) > 0.2


def test_record_ctrl_c_writes_what_it_has(tmp_path):
    proc = start(sys.executable, tmp_path, SHARES_PROGRAM, 60)
    out = tmp_path / "p.txt"
    try:
        time.sleep(0.3)
        rec = subprocess.Popen([SONDE, "record", "-p", str(proc.pid), "-f", "collapsed",
                                "-o", str(out)], stderr=subprocess.PIPE,
                               universal_newlines=True)
        time.sleep(1.0)
        rec.send_signal(signal.SIGINT)
        _, err = rec.communicate(timeout=30)
    finally:
        proc.kill()
        proc.wait()
    assert rec.returncode == 0, err
    assert "half" in out.read_text()


def one_line(proc, code):
    assert proc.returncode == code, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("sonde"), proc.stderr
    return lines[0]


def test_sampler_errors(tmp_path):
    assert "no process" in one_line(sonde("dump", "-p", "999999"), 1)
    assert "no process" in one_line(sonde("record", "-p", "999999", "-d", "1"), 1)
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        assert "CPython" in one_line(sonde("dump", "-p", str(sleeper.pid)), 1)
    finally:
        sleeper.kill()
        sleeper.wait()
    one_line(sonde("dump"), 2)
    one_line(sonde("dump", "-p", "abc"), 2)
    one_line(sonde("record", "-p", "1", "-r", "0"), 2)
    one_line(sonde("record", "-p", "1", "-f", "pstats"), 2)
    one_line(sonde("record", "-d", "1"), 2)
    assert "cannot start" in one_line(sonde("record", "--", "/no/such/program"), 1)
    assert "nothing recorded" in one_line(sonde("record", "--", "true"), 1)


def svg_frames(path):
    """{name: share in %} from a flame graph's frame titles."""
    import xml.etree.ElementTree as ET
    ns = "{http://www.w3.org/2000/svg}"
    out = {}
    for g in ET.parse(str(path)).getroot().iter(ns + "g"):
        if "data-n" in g.attrib:
            pct = float(g.find(ns + "title").text.rsplit(", ", 1)[1].rstrip("%"))
            out[g.attrib["data-n"]] = out.get(g.attrib["data-n"], 0) + pct
    return out


def test_record_default_is_a_flame_graph(tmp_path):
    (tmp_path / "prog.py").write_text(SHARES_PROGRAM)
    rec = sonde("record", "-r", "1000", "--", sys.executable, "prog.py", "2", cwd=str(tmp_path))
    assert rec.returncode == 0, rec.stderr
    (svg,) = list(tmp_path.glob("sonde-*.svg"))
    shares_svg = svg_frames(svg)
    for name, truth in (("half", 50), ("third", 30), ("fifth", 20)):
        assert abs(shares_svg[name] - truth) <= 2, shares_svg
    assert "<script>" in svg.read_text() and "http://" not in svg.read_text().replace(
        "http://www.w3.org/2000/svg", "")


def test_flame_graph_escapes_names(tmp_path):
    name = "x<img src=x onerror=alert(1)>.py"
    (tmp_path / name).write_text("def spin():\n    return sum(range(20000))\n"
                                 "for _ in range(300):\n    spin()\n")
    out = tmp_path / "run.svg"
    proc = subprocess.run([SONDE, "run", "-f", "flamegraph", "-o", str(out), name],
                          cwd=str(tmp_path), env=dict(os.environ, SONDE_PYTHON=sys.executable),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    assert proc.returncode == 0, proc.stderr
    text = out.read_text()
    assert "<img" not in text and "&lt;img src=x onerror=alert(1)&gt;" in text
    assert svg_frames(out)["spin"] > 50


def test_shares_agree_with_py_spy(tmp_path):
    """sonde and py-spy sample the same process at the same time; their
    shares of the three functions agree within 3 points.  At 1000 Hz for
    5 s each share's sampling error is under 1 point, so 3 points is about
    three standard deviations of the difference."""
    import shutil
    py_spy = shutil.which("py-spy") or os.path.join(os.path.dirname(sys.executable), "py-spy")
    if not os.path.exists(py_spy):
        pytest.skip("py-spy is not installed")
    proc = start(sys.executable, tmp_path, SHARES_PROGRAM, 30)
    try:
        time.sleep(0.5)
        theirs = subprocess.Popen([py_spy, "record", "--pid", str(proc.pid), "--duration", "5",
                                   "--rate", "1000", "--format", "raw", "--nonblocking",
                                   "-o", str(tmp_path / "py-spy.txt")],
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        ours = sonde("record", "-p", str(proc.pid), "-d", "5", "-r", "1000", "-f", "collapsed",
                     "-o", str(tmp_path / "sonde.txt"))
        theirs.communicate(timeout=60)
    finally:
        proc.kill()
        proc.wait()
    assert ours.returncode == 0 and theirs.returncode == 0, ours.stderr
    a, b = shares((tmp_path / "sonde.txt").read_text()), shares((tmp_path / "py-spy.txt").read_text())
    for name in ("half", "third", "fifth"):
        assert abs(a[name] - b[name]) <= 3, (a, b)


def test_top_under_a_terminal_quits_on_q(tmp_path):
    import pty
    import select
    proc = start(sys.executable, tmp_path, SHARES_PROGRAM, 60)
    try:
        time.sleep(0.3)
        pid, fd = pty.fork()
        if pid == 0:
            os.environ["COLUMNS"] = "80"
            os.execv(SONDE, [SONDE, "top", "-p", str(proc.pid)])
        screen = b""
        deadline = time.time() + 3.0  # about three refreshes
        while time.time() < deadline:
            if select.select([fd], [], [], 0.1)[0]:
                screen += os.read(fd, 65536)
        os.write(fd, b"q")
        _, status = os.waitpid(pid, 0)
        try:
            while select.select([fd], [], [], 0.2)[0]:
                screen += os.read(fd, 65536)
        except OSError:
            pass  # the terminal closed with the program
        os.close(fd)
    finally:
        proc.kill()
        proc.wait()
    text = screen.decode("utf-8", "replace")
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    assert text.count("sonde top: pid %d" % proc.pid) >= 2  # refreshed
    assert "half" in text and "%Own" in text
    assert text.rstrip().endswith("\x1b[?25h\x1b[?1049l")  # terminal given back
    widest = max(len(line) for line in re.sub(r"\x1b\[[0-9;?]*[a-zA-Z]", "", text).splitlines())
    assert widest <= 80


def test_chrome_trace_is_a_proper_timeline(tmp_path):
    (tmp_path / "prog.py").write_text(SHARES_PROGRAM)
    out = tmp_path / "t.json"
    rec = sonde("record", "-r", "500", "-f", "chrome", "-o", str(out), "--", sys.executable,
                "prog.py", "1.5", cwd=str(tmp_path))
    assert rec.returncode == 0, rec.stderr
    events = json.load(open(str(out)))["traceEvents"]
    names = {e["args"]["name"] for e in events if e["ph"] == "M"}
    assert names and all(n.startswith("thread") or n == "MainThread" for n in names)
    stacks, last, slices = {}, {}, {}
    for e in events:
        if e["ph"] not in "BE":
            continue
        assert e["ts"] >= last.get(e["tid"], 0)  # time order within a thread
        last[e["tid"]] = e["ts"]
        stack = stacks.setdefault(e["tid"], [])
        if e["ph"] == "B":
            stack.append((e["name"], e["ts"]))
        else:
            name, begun = stack.pop()  # E closes the innermost open slice
            assert name == e["name"]
            slices[name] = slices.get(name, 0) + e["ts"] - begun
    assert all(not s for s in stacks.values())
    total = slices["<module>"]
    assert abs(100 * slices["half"] / total - 50) <= 10  # slices end at the next sample
    assert run_sonde_rejects_timeline(tmp_path)


def run_sonde_rejects_timeline(tmp_path):
    (tmp_path / "x.py").write_text("pass\n")
    proc = sonde("run", "-f", "chrome", "x.py", cwd=str(tmp_path))
    return proc.returncode == 2 and "sonde record -f chrome" in proc.stderr


MULTI_PROGRAM = r'''
import multiprocessing, subprocess, sys, time

def worker_burn(seconds):
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass

if __name__ == "__main__":
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        pool.map(worker_burn, [1.5, 1.5])
    subprocess.run([sys.executable, "-c", "import time\ndef child_burn():\n"
                    "    e = time.perf_counter() + 1.0\n"
                    "    while time.perf_counter() < e: pass\nchild_burn()"])
'''


def test_record_follows_subprocesses(tmp_path):
    (tmp_path / "prog.py").write_text(MULTI_PROGRAM)
    out = tmp_path / "p.txt"
    rec = sonde("record", "--subprocesses", "-f", "collapsed", "-o", str(out), "--",
                sys.executable, "prog.py", cwd=str(tmp_path))
    assert rec.returncode == 0, rec.stderr
    found = {}
    for line in out.read_text().splitlines():
        stack, n = line.rsplit(" ", 1)
        frames = stack.split(";")
        assert re.match(r"process \d+ \(.*\) \(~:0\)$", frames[0]), frames[0]
        pid = int(frames[0].split()[1])
        for name in ("worker_burn", "child_burn"):
            if any(f.startswith(name + " (") for f in frames):
                found.setdefault(name, {}).setdefault(pid, 0)
                found[name][pid] += int(n)
    # Two spawned workers of about 1.5 s each and one subprocess of 1.0 s,
    # each in its own process, found within the 0.2 s rediscovery period.
    assert len(found["worker_burn"]) == 2 and min(found["worker_burn"].values()) >= 100
    assert len(found["child_burn"]) == 1 and 60 <= list(found["child_burn"].values())[0] <= 105
    assert "of 4 processes" in rec.stderr


def test_record_follows_exec(tmp_path):
    (tmp_path / "prog.py").write_text(
        "import os, sys, time\ndef before_exec():\n    end = time.perf_counter() + 1.0\n"
        "    while time.perf_counter() < end: pass\nbefore_exec()\n"
        "os.execv(sys.executable, [sys.executable, '-c', 'import time\\ndef after_exec():\\n"
        "    e = time.perf_counter() + 1.0\\n    while time.perf_counter() < e: pass\\n"
        "after_exec()'])\n")
    out = tmp_path / "p.txt"
    rec = sonde("record", "-f", "collapsed", "-o", str(out), "--", sys.executable, "prog.py",
                cwd=str(tmp_path))
    assert rec.returncode == 0, rec.stderr
    counts = {"before_exec": 0, "after_exec": 0}
    for line in out.read_text().splitlines():
        stack, n = line.rsplit(" ", 1)
        leaf = stack.split(";")[-1].split(" (")[0]
        if leaf in counts:
            counts[leaf] += int(n)
    assert counts["before_exec"] >= 80 and counts["after_exec"] >= 80, counts


THREADS_PROGRAM = r'''
import threading, time
def spinner():
    end = time.perf_counter() + 60
    while time.perf_counter() < end:
        pass
def sleeper():
    while True:
        time.sleep(0.01)
threading.Thread(target=spinner, name="spinner-thread", daemon=True).start()
sleeper()
'''


def leaf_counts(path):
    counts = {}
    for line in path.read_text().splitlines():
        stack, n = line.rsplit(" ", 1)
        for name in ("spinner", "sleeper"):
            if any(f.startswith(name + " (") for f in stack.split(";")):
                counts[name] = counts.get(name, 0) + int(n)
    return counts


def test_idle_gil_and_thread_options(tmp_path):
    proc = start(sys.executable, tmp_path, THREADS_PROGRAM)
    try:
        time.sleep(0.3)
        runs = {}
        for opts in ((), ("--idle",), ("--idle", "--gil"), ("--threads",)):
            out = tmp_path / ("p%d.txt" % len(runs))
            rec = sonde("record", "-p", str(proc.pid), "-d", "1", "-f", "collapsed",
                        "-o", str(out), *opts)
            assert rec.returncode == 0, rec.stderr
            runs[opts] = out
    finally:
        proc.kill()
        proc.wait()
    busy, idle = leaf_counts(runs[()]), leaf_counts(runs[("--idle",)])
    # By default only threads on a CPU count: the sleeper barely shows.
    assert busy["spinner"] >= 80 and busy.get("sleeper", 0) <= 10
    # --idle keeps the sleeping thread too, sample for sample.
    assert idle["sleeper"] >= 80 and idle["spinner"] >= 80
    # --gil keeps only the GIL holder: mostly the spinner, never both at once.
    gil = leaf_counts(runs[("--idle", "--gil")])
    assert gil["spinner"] >= 60 and gil.get("sleeper", 0) <= 20
    assert sum(gil.values()) <= 105
    # --threads puts a thread frame, with the thread's name, at the root.
    roots = {line.split(";")[0] for line in runs[("--threads",)].read_text().splitlines()}
    assert roots and all(r.startswith("thread ") for r in roots)
    assert "thread spinner-thread (~:0)" in roots
