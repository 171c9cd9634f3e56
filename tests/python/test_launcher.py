"""The programs sonde run, lines and mem launch end as a bare run ends,
whatever they do to the process on the way (close stdout, change folder,
os._exit, monkeypatch what the launcher uses, get SIGTERM), the profile is
written whenever the process lives long enough, and sonde says so in one
line when it was not; what sonde prints goes to the standard error it was
given."""

import glob
import json
import marshal
import os
import re
import signal
import socket
import subprocess
import sys

import pytest

from conftest import SONDE, SUPPORTED, need, run_sonde, signals_at_default, version_params

REPORT = re.compile(r"^ *\d+ function calls", re.M)


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def env_for(python):
    env = dict(os.environ, SONDE_PYTHON=python)
    env.pop("PYTHONPATH", None)
    return env


def bare(python, args, cwd, **kw):
    return subprocess.run([python] + args, cwd=str(cwd), env=env_for(python),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, **kw)


def program_part(stderr):
    """What the program printed on stderr: what comes before sonde's report."""
    m = REPORT.search(stderr)
    return stderr[:m.start()] if m else stderr


def calls(prof_path):
    """{function name: calls} of a .prof file."""
    with open(str(prof_path), "rb") as f:
        return {k[2]: v[1] for k, v in marshal.load(f).items()}


def alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


# ---- defect 1: a program that closes its standard output ----

@pytest.mark.parametrize("python", version_params())
@pytest.mark.parametrize("tool", ["run", "lines"])
def test_json_tool_closing_stdout_ends_as_bare(python, tool, tmp_path):
    """python -m json.tool closes sys.stdout (its `with outfile:`); the
    launcher must not flush it again afterwards."""
    python = need(python)
    write(tmp_path, "in.json", '{"b": [1, 2, {"c": null}], "a": "x"}')
    theirs = bare(python, ["-m", "json.tool", "in.json"], tmp_path)
    with open(str(tmp_path / "out.txt"), "w") as out:
        ours = subprocess.run([SONDE, tool, "-m", "json.tool", "in.json"], cwd=str(tmp_path),
                              env=env_for(python), stdout=out, stderr=subprocess.PIPE,
                              universal_newlines=True)
    assert ours.returncode == theirs.returncode == 0, ours.stderr
    assert (tmp_path / "out.txt").read_text() == theirs.stdout
    assert "Traceback" not in ours.stderr
    piped = subprocess.run([SONDE, tool, "-m", "json.tool", "in.json"], cwd=str(tmp_path),
                           env=env_for(python), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, universal_newlines=True)
    assert piped.returncode == 0 and piped.stdout == theirs.stdout
    assert "Traceback" not in piped.stderr


def test_flush_failure_at_exit_gives_the_bare_exit_status(tmp_path):
    """The interpreter's own flush at exit decides: a pipe closed by the
    reader gives 120 with its message, as bare."""
    code = "import sys\nsys.stdout.write('x' * 100)\n"
    write(tmp_path, "big.py", code)
    results = []
    env = env_for(sys.executable)
    env.pop("PYTHONUNBUFFERED", None)  # the write waits in the buffer until the end
    for cmd in ([sys.executable, "big.py"], [SONDE, "run", "big.py"]):
        proc = subprocess.Popen(cmd, cwd=str(tmp_path), env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        proc.stdout.close()  # nobody reads: the final flush fails with EPIPE
        err = proc.stderr.read().decode()
        results.append((proc.wait(), "BrokenPipeError" in err))
    assert results[0] == results[1] == (120, True)


# ---- defect 4: the launcher imports nothing the program did not ----

PROBE_MODULES = "import sys\nprint(' '.join(sorted(sys.modules)))\n"
OWN = {"sonde", "sonde._launch", "sonde._sonde"}


@pytest.mark.parametrize("python", version_params())
def test_modules_at_start_are_a_bare_runs(python, tmp_path):
    """The program finds the modules a bare run has, plus sonde's own; up
    to 3.11 also threading (and what it imports): the tracer follows new
    threads with threading.setprofile."""
    python = need(python)
    write(tmp_path, "probe.py", PROBE_MODULES)
    threading_imports = bare(python, ["-c", "import sys; before = set(sys.modules); "
                                      "import threading; "
                                      "print(' '.join(set(sys.modules) - before))"],
                             tmp_path).stdout.split()
    version = bare(python, ["-c", "import sys; print(sys.version_info[1])"], tmp_path)
    allowed = OWN | (set(threading_imports) if int(version.stdout) < 12 else set())
    for args in (["probe.py"], ["-m", "probe"], ["-c", PROBE_MODULES]):
        theirs = bare(python, args, tmp_path)
        ours = run_sonde(["run"] + args, tmp_path, python=python)
        assert ours.returncode == theirs.returncode == 0, ours.stderr
        extra = set(ours.stdout.split()) - set(theirs.stdout.split())
        missing = set(theirs.stdout.split()) - set(ours.stdout.split())
        assert OWN <= extra <= allowed and missing == set(), args
        assert not {"json", "re", "enum", "dis", "tokenize", "signal"} & extra


@pytest.mark.parametrize("python", version_params())
def test_importing_json_is_profiled_as_cprofile_shows_it(python, tmp_path):
    """The program's `import json` runs json's modules under the profiler,
    as under cProfile (which does not import json itself)."""
    python = need(python)
    prog = write(tmp_path, "imp.py", "import json\nprint(json.dumps([1]))\n")
    ours = run_sonde(["run", "-o", "s.prof", str(prog)], tmp_path, python=python)
    assert ours.returncode == 0, ours.stderr
    subprocess.run([python, "-m", "cProfile", "-o", "c.prof", str(prog)], cwd=str(tmp_path),
                   env=env_for(python), check=True, stdout=subprocess.PIPE)

    def json_modules(path):
        with open(str(path), "rb") as f:
            return {(os.path.basename(k[0]), v[1]) for k, v in marshal.load(f).items()
                    if k[2] == "<module>" and os.sep + "json" + os.sep in k[0]}

    theirs = json_modules(tmp_path / "c.prof")
    assert {"__init__.py", "decoder.py", "encoder.py", "scanner.py"} <= {m for m, _ in theirs}
    assert json_modules(tmp_path / "s.prof") == theirs


JSON_WORK = """
import json, os, sys

def work():
    for i in range(25):
        json.dumps({"a": [1, 2.5, {"b": i}], "c": "d" * i}, indent=2, sort_keys=True)
        json.loads('{"x": [1, 2, 3], "y": {"z": null}}')

if os.environ.get("REFERENCE"):
    targets = {json.dumps.__code__: "dumps",
               json.encoder.JSONEncoder.iterencode.__code__: "JSONEncoder.iterencode",
               json.decoder.JSONDecoder.raw_decode.__code__: "JSONDecoder.raw_decode"}
    hits = {}

    def local(frame, event, arg):
        if event == "line":
            key = "%s:%d" % (targets[frame.f_code], frame.f_lineno)
            hits[key] = hits.get(key, 0) + 1
        return local

    sys.settrace(lambda frame, event, arg: local if frame.f_code in targets else None)
    work()
    sys.settrace(None)
    print(json.dumps(hits))
else:
    work()
"""


@pytest.mark.parametrize("spelling", [
    ["json:dumps", "json.encoder:JSONEncoder.iterencode", "json.decoder:JSONDecoder.raw_decode"],
    ["json.dumps", "json.encoder.JSONEncoder.iterencode", "json.decoder.JSONDecoder.raw_decode"],
], ids=["module:qualname", "kernprof-dotted"])
@pytest.mark.parametrize("python", version_params())
def test_lines_finds_functions_of_modules_imported_before_the_program(python, spelling, tmp_path):
    """kernprof's -p json.encoder.JSONEncoder.iterencode, as sonde lines -f
    (sonde's module:qualname or kernprof's dotted spelling): json is
    imported before the program runs (by the line tool itself); hits
    equal the interpreter's own line events."""
    python = need(python)
    write(tmp_path, "jw.py", JSON_WORK)
    ref = subprocess.run([python, "jw.py"], cwd=str(tmp_path),
                         env=dict(env_for(python), REFERENCE="1"), stdout=subprocess.PIPE,
                         universal_newlines=True, check=True)
    expected = json.loads(ref.stdout)
    patterns = [arg for p in spelling for arg in ("-f", p)]
    proc = run_sonde(["lines", "-o", "l.json"] + patterns + ["jw.py"], tmp_path, python=python)
    assert proc.returncode == 0, proc.stderr
    assert "matched no function" not in proc.stderr
    doc = json.load(open(str(tmp_path / "l.json")))
    got = {"%s:%d" % (f["name"], l["line"]): l["hits"]
           for f in doc["functions"] for l in f["lines"] if l["hits"]}
    assert got == expected and len(expected) > 10


COMPILED = """
import heapq, math
from heapq import heappush

def work():
    h = []
    for i in range(10):
        heappush(h, -i)
    return math.sqrt(len(h))

work()
"""


def test_lines_says_a_compiled_function_has_no_python_lines(tmp_path):
    """heapq's Python heappush is replaced by _heapq's C one; math.sqrt and
    a name imported from a C module are compiled too."""
    write(tmp_path, "c.py", COMPILED)
    proc = run_sonde(["lines", "-f", "heapq:heappush", "-f", "math:sqrt", "-f", "heappush",
                      "-f", "work", "-f", "no_such_thing", "c.py"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    assert ("sonde: warning: -f heapq:heappush is compiled code (a builtin_function_or_method "
            "of _heapq), with no Python lines to count") in lines
    assert ("sonde: warning: -f math:sqrt is compiled code (a builtin_function_or_method of "
            "math), with no Python lines to count") in lines
    assert ("sonde: warning: -f heappush is compiled code (a builtin_function_or_method of "
            "_heapq), with no Python lines to count") in lines
    assert "sonde: warning: -f no_such_thing matched no function" in lines
    assert "Function: work at line 5" in proc.stderr


# ---- defect 7 and 28: -o where the user asked, and only when there is one ----

CHDIR = """
import os
def work():
    return sum(range(1000))
os.makedirs("elsewhere", exist_ok=True)
os.chdir("elsewhere")
work()
"""


@pytest.mark.parametrize("tool", ["run", "lines", "mem"])
def test_relative_output_lands_where_sonde_was_started(tool, tmp_path):
    write(tmp_path, "cd.py", CHDIR)
    proc = run_sonde([tool, "-o", "rel.out", "cd.py"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert not (tmp_path / "elsewhere" / "rel.out").exists()
    data = (tmp_path / "rel.out").read_bytes()
    if tool == "run":
        assert calls(tmp_path / "rel.out")["work"] == 1
        assert "profile:   rel.out (pstats)" in proc.stderr
    else:
        assert [f["name"] for f in json.loads(data.decode())["functions"]
                if f["name"] == "work"] == ["work"]


@pytest.mark.parametrize("tool", ["run", "lines", "mem"])
def test_no_file_left_when_the_program_cannot_start(tool, tmp_path):
    write(tmp_path, "bad.py", "def f(:\n    pass\n")
    extra = ["--plot", "p.svg"] if tool == "mem" else []
    proc = run_sonde([tool, "-o", "o.out"] + extra + ["bad.py"], tmp_path)
    assert proc.returncode == 1
    assert proc.stderr.count("\n") == 1 and "SyntaxError" in proc.stderr
    assert sorted(os.listdir(str(tmp_path))) == ["bad.py"]


def test_no_profile_line_after_writing_it_failed(tmp_path):
    """The program removes the folder -o was to go to: sonde says it could
    not write there, and does not claim `profile: X`."""
    write(tmp_path, "rm.py", "import shutil\nshutil.rmtree('gone')\n")
    (tmp_path / "gone").mkdir()
    proc = run_sonde(["run", "-o", "gone/p.prof", "rm.py"], tmp_path)
    assert proc.returncode == 1
    assert "sonde: cannot write 'gone/p.prof': No such file" in proc.stderr
    assert "profile:" not in proc.stderr and "function calls" in proc.stderr


# ---- defect 10: os._exit ----

OS_EXIT = """
import os, sys
def work(n):
    return sum(range(n))
for i in range(7):
    work(100)
sys.stdout.flush()
os._exit(3)
"""


@pytest.mark.parametrize("python", version_params())
def test_os_exit_keeps_the_profile(python, tmp_path):
    python = need(python)
    write(tmp_path, "ex.py", OS_EXIT)
    proc = run_sonde(["run", "-o", "ex.prof", "ex.py"], tmp_path, python=python)
    assert proc.returncode == bare(python, ["ex.py"], tmp_path).returncode == 3
    assert calls(tmp_path / "ex.prof")["work"] == 7 and "function calls" in proc.stderr
    lines = run_sonde(["lines", "-o", "ex.json", "ex.py"], tmp_path, python=python)
    assert lines.returncode == 3, lines.stderr
    doc = json.load(open(str(tmp_path / "ex.json")))
    (work,) = [f for f in doc["functions"] if f["name"] == "work"]
    assert work["lines"][1]["hits"] == 7


POOL = """
import multiprocessing, os, time

def square(x):
    return x * x

def cpu(n):
    start = time.process_time()
    total = 0
    for i in range(n):
        total += i * i
    return time.process_time() - start

if __name__ == "__main__":
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(2) as pool:
        squares = pool.map(square, range(20))
        spent = pool.map(cpu, [N] * 4)
        pool.close()
        pool.join()
    print(sum(squares), sum(spent))
"""


def test_multiprocessing_pool_workers_leave_the_parents_profile(tmp_path):
    """Fork workers end with os._exit: the parent's profile is written once,
    by the parent."""
    write(tmp_path, "pool.py", POOL.replace("N", "1000"))
    proc = run_sonde(["run", "-o", "pool.prof", "pool.py"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split()[0] == str(sum(x * x for x in range(20)))
    got = calls(tmp_path / "pool.prof")
    assert "map" in got and "square" not in got  # the workers' calls are theirs
    assert proc.stderr.count("function calls") == 1 and "no profile" not in proc.stderr


def test_exec_and_fatal_signal_are_said_in_one_line(tmp_path):
    write(tmp_path, "ex.py", "import os, sys\nos.execv(sys.executable, "
          "[sys.executable, '-c', 'import sys; sys.exit(4)'])\n")
    proc = run_sonde(["run", "-o", "x.prof", "ex.py"], tmp_path)
    assert proc.returncode == 4
    assert proc.stderr == ("sonde: no profile: the program ended with exit status 4 before "
                           "sonde could write one (it replaced itself with exec, left "
                           "from C code, or changed user)\n")
    assert not (tmp_path / "x.prof").exists()
    write(tmp_path, "kill.py", "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n")
    proc = run_sonde(["lines", "kill.py"], tmp_path)
    assert proc.returncode == -signal.SIGKILL
    assert proc.stderr.startswith("sonde: no profile: the program was killed by signal 9")
    assert proc.stderr.count("\n") == 1


# ---- defect 12: SIGTERM and SIGHUP sent to sonde alone ----

WAITS = """
import os, signal, sys
def spin():
    return sum(range(100))
def stop(sig, frame):
    sys.exit(3)
if HANDLE:
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGHUP, stop)
print(os.getpid(), flush=True)
while True:
    spin()
"""


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
@pytest.mark.parametrize("handled", [False, True])
def test_signal_to_sonde_reaches_the_program(sig, handled, tmp_path):
    write(tmp_path, "w.py", WAITS.replace("HANDLE", str(handled)))
    proc = subprocess.Popen([SONDE, "run", "-o", "w.prof", "w.py"], cwd=str(tmp_path),
                            env=env_for(sys.executable), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, universal_newlines=True,
                            preexec_fn=signals_at_default)
    program = int(proc.stdout.readline())  # ready: its handlers are in place
    os.kill(proc.pid, sig)
    try:
        _, err = proc.communicate(timeout=60)
        assert not alive(program), "the program outlived sonde"
    finally:
        if alive(program):
            os.kill(program, signal.SIGKILL)
    if handled:
        assert proc.returncode == 3, err
        assert calls(tmp_path / "w.prof")["stop"] == 1 and "profile:   w.prof" in err
    else:  # the profile is written, then the signal ends the program (test_service_stop.py)
        assert proc.returncode == -sig, err
        assert calls(tmp_path / "w.prof")["_signal_arrived"] == 1 and "profile:   w.prof" in err


def test_nohup_leaves_sighup_ignored(tmp_path):
    """Started with SIGHUP ignored (nohup), sonde passes nothing on: the
    program ignores it too, as under a bare nohup."""
    write(tmp_path, "h.py", "import signal\nprint(signal.getsignal(signal.SIGHUP))\n")

    def ignore_hup():
        signal.signal(signal.SIGHUP, signal.SIG_IGN)

    theirs = bare(sys.executable, ["h.py"], tmp_path, preexec_fn=ignore_hup)
    ours = subprocess.run([SONDE, "run", "h.py"], cwd=str(tmp_path), env=env_for(sys.executable),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, preexec_fn=ignore_hup)
    assert ours.stdout == theirs.stdout == "%s\n" % signal.SIG_IGN


# ---- defect 16: the report goes to the standard error sonde was given ----

def test_report_appends_to_a_shared_log(tmp_path):
    write(tmp_path, "app.py", "import sys\nprint('to stdout')\nsys.stderr.write('to stderr\\n')\n")
    write(tmp_path, "build.log", "earlier line\n")
    subprocess.run(["sh", "-c", '"$0" run app.py >> build.log 2>&1', SONDE], cwd=str(tmp_path),
                   env=env_for(sys.executable), check=True)
    log = (tmp_path / "build.log").read_text()
    assert log.startswith("earlier line\n")
    assert "to stdout\n" in log and "to stderr\n" in log and "function calls" in log
    assert "verdict:" in log


def test_report_reaches_a_socket(tmp_path):
    write(tmp_path, "app.py", "print('hi')\n")
    ours, theirs = socket.socketpair()
    with ours, theirs:
        proc = subprocess.Popen([SONDE, "run", "app.py"], cwd=str(tmp_path),
                                env=env_for(sys.executable), stdout=subprocess.DEVNULL,
                                stderr=theirs)
        theirs.close()
        got = b""
        while True:
            chunk = ours.recv(65536)
            if not chunk:
                break
            got += chunk
        assert proc.wait() == 0
    assert b"function calls" in got and b"verdict:" in got


# ---- defect 20: what the program leaves behind ----

LEFT_BEHIND = {
    "excepthook None": "sys.excepthook = None\nraise KeyError('k')",
    "excepthook deleted": "del sys.excepthook\nraise KeyError('k')",
    "excepthook fails": "sys.excepthook = lambda *a: 1 / 0\nraise KeyError('k')",
    "excepthook exits": "sys.excepthook = lambda *a: sys.exit(5)\nraise KeyError('k')",
    "stderr closed": "sys.stderr.close()\nraise KeyError('k')",
    "stderr None": "sys.stderr = None\nsys.exit('bye')",
    "stderr replaced": "import io\nsys.stderr = io.StringIO()\nraise KeyError('k')",
    "fd 2 closed": "os.close(2)\nraise KeyError('k')",
    "getpid replaced": "os.getpid = lambda: 1",
    "realpath replaced": "os.path.realpath = None\nraise KeyError('k')",
    "json blocked": "sys.modules['json'] = None",
    "threading blocked": "import threading\nsys.modules['threading'] = None",
    "ctrl-c": "raise KeyboardInterrupt",
}


@pytest.mark.parametrize("python", version_params())
@pytest.mark.parametrize("case", sorted(LEFT_BEHIND))
def test_program_that_breaks_what_the_launcher_uses(python, case, tmp_path):
    """Same stderr and exit status as bare, then sonde's report: the
    profile is written first, from what the launcher bound beforehand."""
    python = need(python)
    write(tmp_path, "lb.py", "import os, sys\ndef work():\n    return 6 * 7\nwork()\n"
          + LEFT_BEHIND[case] + "\n")
    theirs = bare(python, ["lb.py"], tmp_path)
    ours = run_sonde(["run", "-o", "lb.prof", "lb.py"], tmp_path, python=python)
    assert ours.returncode == theirs.returncode, ours.stderr
    mask = re.compile(r"0x[0-9a-f]+|refcount : \d+")  # _PyObject_Dump's addresses
    assert mask.sub("", program_part(ours.stderr)) == mask.sub("", theirs.stderr)
    assert calls(tmp_path / "lb.prof")["work"] == 1
    assert "Traceback" not in ours.stderr[len(program_part(ours.stderr)):]
    assert "function calls" in ours.stderr
    lines = run_sonde(["lines", "-o", "lb.json", "lb.py"], tmp_path, python=python)
    assert lines.returncode == theirs.returncode, lines.stderr
    doc = json.load(open(str(tmp_path / "lb.json")))
    assert [f["lines"][1]["hits"] for f in doc["functions"] if f["name"] == "work"] == [1]


# ---- 28: interpreters sonde cannot use ----

@pytest.mark.parametrize("version", ["2.7", "3.6", "3.7"])
def test_unsupported_python_is_named(version, tmp_path):
    found = sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/%s.*/bin/python%s"
                                                % (version, version))))
    python = need(found[0] if found else None)
    write(tmp_path, "p.py", "print('ran')\n")
    for tool in ("run", "lines", "mem"):
        proc = run_sonde([tool, "--python", python, "-o", "o.out", "p.py"], tmp_path)
        assert proc.returncode == 1 and proc.stdout == ""
        assert proc.stderr == ("sonde: %s is Python %s: sonde runs programs with Python %s "
                               "(choose one with --python PATH or SONDE_PYTHON)\n"
                               % (python, version, SUPPORTED))
        assert not (tmp_path / "o.out").exists()


def test_a_command_that_is_not_python(tmp_path):
    write(tmp_path, "p.py", "print('ran')\n")
    for cmd, status in (("/bin/false", 1), ("/bin/true", 0)):
        proc = run_sonde(["run", "--python", cmd, "p.py"], tmp_path)
        assert proc.returncode == 1
        assert proc.stderr == ("sonde: '%s' ended with exit status %d before the program "
                               "started: is it Python %s? (choose one with --python "
                               "PATH or SONDE_PYTHON)\n" % (cmd, status, SUPPORTED))
