"""sonde's wheels (packaging/make_wheel.py, make wheels), each installed by
pip, without network, into a fresh venv of its interpreter (pyenv's,
and the Debian root's, run there as a container runs
them), and used from that venv's bin/ as a user would: `sonde` is the C
command (run, record --native, lines, mem, view), launching the venv's
own python by default; python -m sonde and import sonde work as from the
build tree.  Each value is checked against the interpreter's own
reference: cProfile's call counts, a settrace line counter, tracemalloc's
size of a block, the native frames of a thread blocked in a known C
function.  Bad input: pip refuses a wheel for another interpreter; a
missing extension is one line naming what to do."""

import json
import glob
import os
import subprocess
import sys

import pytest

from conftest import ROOT, SID, interpreters, need
from test_native import LIBS, blocked_in_read

WHEELS = os.path.join(ROOT, "build", "wheels")
SID_ROOT = os.path.join(ROOT, "build", "sid-root")
SID_SH = os.path.join(ROOT, "tests", "sid", "python.sh")

# One interpreter per version: Debian's /usr/bin/python3 has pyenv 3.11's tag.
PYTHONS = [(v, p) for v, p in interpreters() if v != "system"]

PROGRAM = """\
import sys


def wheel_fib(n):
    return n if n < 2 else wheel_fib(n - 1) + wheel_fib(n - 2)


def wheel_leaf(i):
    return i * 2


def wheel_loop(n):
    total = 0
    for i in range(n):
        if i % 3:
            total += wheel_leaf(i)
    return total


wheel_fib(12)
wheel_loop(50)
with open(sys.argv[1], "w") as f:
    f.write(sys.prefix)
"""

# The line counts of wheel_loop as a settrace function sees them.
SETTRACE = """\
import sys, json
counts = {}
def local(frame, event, arg):
    if event == "line":
        counts[frame.f_lineno] = counts.get(frame.f_lineno, 0) + 1
    return local
def trace(frame, event, arg):
    return local if frame.f_code.co_name == "wheel_loop" else None
sys.argv = ["w.py", "prefix.ref"]
sys.settrace(trace)
exec(compile(open("w.py").read(), "w.py", "exec"), {"__name__": "__main__"})
sys.settrace(None)
print(json.dumps(counts))
"""

# {function: [primitive calls, calls]} of the program's functions in a .prof file.
PSTATS_COUNTS = """\
import json, pstats, sys
s = pstats.Stats(sys.argv[1])
print(json.dumps({k[2]: list(v[:2]) for k, v in s.stats.items() if k[2].startswith("wheel_")}))
"""

MEM_PROGRAM = """\
def grab():
    return bytearray(8 << 20)


kept = grab()
"""

# tracemalloc's size of the block grab()'s line 2 keeps.
TRACEMALLOC = """\
import tracemalloc
tracemalloc.start()
ns = {}
exec(compile(open("m.py").read(), "m.py", "exec"), ns)
stats = tracemalloc.take_snapshot().statistics("lineno")
print(sum(s.size for s in stats if s.traceback[0].filename == "m.py" and s.traceback[0].lineno == 2))
"""

# sonde.Profile's counts against cProfile's of the same call.
API = """\
import cProfile, json, sonde
def wheel_fib(n):
    return n if n < 2 else wheel_fib(n - 1) + wheel_fib(n - 2)
got = []
for profiler in (sonde.Profile(), cProfile.Profile()):
    profiler.runcall(wheel_fib, 10)
    profiler.create_stats()
    got.append([list(v[:2]) for k, v in profiler.stats.items() if k[2] == "wheel_fib"])
print(json.dumps(got))
"""


def in_root(python):
    """The prefix that runs a program as python is run: inside the Debian
    root for its interpreters, else directly."""
    return ["sh", SID_SH, SID_ROOT] if python.startswith(SID + os.sep) else []


def clean_env():
    env = dict(os.environ)
    for name in ("PYTHONPATH", "SONDE_PYTHON", "PYTHONHOME", "VIRTUAL_ENV"):
        env.pop(name, None)
    return env


def run(argv, cwd, **kw):
    return subprocess.run(argv, cwd=str(cwd), env=clean_env(), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, **kw)


@pytest.fixture(scope="module")
def wheels():
    """{version: wheel} for every interpreter here, made (or kept, when up
    to date) by packaging/make_wheel.py from the extensions make built."""
    found = [(v, p) for v, p in PYTHONS if p and os.path.exists(p)]
    if not found:
        pytest.skip("no interpreter of the version matrix here")
    made = run([sys.executable, os.path.join(ROOT, "packaging", "make_wheel.py"),
                "--out", WHEELS] + [p for _, p in found], ROOT)
    assert made.returncode == 0, made.stderr + made.stdout
    paths = made.stdout.split()
    assert len(paths) == len(found), made.stdout
    return {v: os.path.join(ROOT, w) for (v, _), w in zip(found, paths)}


def pip_wheel(python):
    """A pip wheel of the interpreter's own ensurepip, else Debian's (run
    from the wheel file: the venvs are made without pip)."""
    out = run(in_root(python) + [python, "-c", "import ensurepip, glob, os; d = os.path.dirname("
                                 "ensurepip.__file__); print(' '.join(sorted(glob.glob(d + "
                                 "'/_bundled/pip-*.whl')) or sorted(glob.glob("
                                 "'/usr/share/python-wheels/pip-*.whl'))))"], ROOT).stdout.split()
    if not out:
        pytest.skip("%s has no pip wheel to install with" % python)
    return out[-1]


def fresh_venv(python, where, wheel):
    """A venv of python at where with wheel installed by pip (--no-index):
    pip's result."""
    prefix = in_root(python)
    made = run(prefix + [python, "-m", "venv", "--without-pip", str(where)], ROOT)
    assert made.returncode == 0, made.stderr
    return run(prefix + [str(where / "bin" / "python"), pip_wheel(python) + "/pip", "install",
                         "--no-index", "--no-deps", "--disable-pip-version-check", "-q", wheel],
               ROOT)


def counts(prefix, venv, prof, cwd):
    out = run(prefix + [str(venv / "bin" / "python"), "-c", PSTATS_COUNTS, prof], cwd)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def project_version():
    """pyproject.toml's version, the one home of it."""
    with open(os.path.join(ROOT, "pyproject.toml")) as f:
        return [line.split('"')[1] for line in f if line.startswith("version = ")][0]


@pytest.mark.parametrize("python", [pytest.param(p, id=v) for v, p in PYTHONS])
def test_wheel_in_a_fresh_venv(python, wheels, tmp_path):
    python = need(python)
    version = [v for v, p in PYTHONS if p == python][0]
    wheel = wheels[version]
    tag = "cp" + version.replace(".", "")
    assert os.path.basename(wheel).startswith("sonde-%s-%s-%s-manylinux_2_" % (
        project_version(), tag, tag))
    venv = tmp_path / "venv"
    pip = fresh_venv(python, venv, wheel)
    assert pip.returncode == 0, pip.stderr + pip.stdout
    prefix = in_root(python)
    sonde = prefix + [str(venv / "bin" / "sonde")]
    vpy = prefix + [str(venv / "bin" / "python")]
    # The C command itself, not a Python script.
    with open(str(venv / "bin" / "sonde"), "rb") as f:
        assert f.read(4) == b"\x7fELF"
    (tmp_path / "w.py").write_text(PROGRAM)

    # run: cProfile's counts, under the venv's own python (no --python).
    ref = run(vpy + ["-m", "cProfile", "-o", "ref.prof", "w.py", "prefix.ref"], tmp_path)
    assert ref.returncode == 0, ref.stderr
    want = counts(prefix, venv, "ref.prof", tmp_path)
    assert want["wheel_fib"] == [1, 465] and want["wheel_leaf"] == [33, 33]
    got = run(sonde + ["run", "-o", "w.prof", "w.py", "prefix.run"], tmp_path)
    assert got.returncode == 0, got.stderr
    assert counts(prefix, venv, "w.prof", tmp_path) == want
    assert (tmp_path / "prefix.run").read_text() == (tmp_path / "prefix.ref").read_text()
    assert os.path.samefile((tmp_path / "prefix.run").read_text(), str(venv))

    # python -m sonde and the API, as from the build tree.
    mod = run(vpy + ["-m", "sonde", "run", "-o", "m.prof", "w.py", "prefix.mod"], tmp_path)
    assert mod.returncode == 0, mod.stderr
    assert counts(prefix, venv, "m.prof", tmp_path) == want
    api = run(vpy + ["-c", API], tmp_path)
    assert api.returncode == 0, api.stderr
    mine, theirs = json.loads(api.stdout)
    assert mine == theirs == [[1, 177]]

    # view: one page that names the profile's functions.
    view = run(sonde + ["view", "w.prof"], tmp_path)
    assert view.returncode == 0, view.stderr
    page = (tmp_path / "w.html").read_text()
    assert "wheel_fib" in page and "wheel_leaf" in page and "function buildTree(" in page

    # lines: a settrace counter's hits of wheel_loop's lines.
    trace = run(vpy + ["-c", SETTRACE], tmp_path)
    assert trace.returncode == 0, trace.stderr
    want_lines = {int(k): v for k, v in json.loads(trace.stdout).items()}
    lines = run(sonde + ["lines", "-f", "wheel_loop", "-o", "l.json", "w.py", "prefix.lines"],
                tmp_path)
    assert lines.returncode == 0, lines.stderr
    (loop,) = json.loads((tmp_path / "l.json").read_text())["functions"]
    assert {l["line"]: l["hits"] for l in loop["lines"] if l["hits"]} == want_lines

    # mem: the block grab() keeps, as tracemalloc sizes it (the shim and
    # the allocator hooks: within 1%).
    (tmp_path / "m.py").write_text(MEM_PROGRAM)
    ref_mem = run(vpy + ["-c", TRACEMALLOC], tmp_path)
    assert ref_mem.returncode == 0, ref_mem.stderr
    block = int(ref_mem.stdout)
    assert block >= 8 << 20
    mem = run(sonde + ["mem", "-o", "m.json", "m.py"], tmp_path)
    assert mem.returncode == 0, mem.stderr
    doc = json.loads((tmp_path / "m.json").read_text())
    (grab,) = [f for f in doc["functions"] if f["name"] == "grab"]
    (net,) = [l["net_bytes"] for l in grab["lines"] if l["line"] == 2]
    assert abs(net - block) <= 0.01 * block, (net, block)

    # record --native: a thread blocked in the test library's read shows
    # its C frames under the Python lines that called them.
    lib = os.path.join(LIBS, "libtl.so")
    if not os.path.exists(lib):
        pytest.fail("%s is missing: make test builds it (make build/tests/native/libtl.so)" % lib)
    proc = subprocess.Popen(vpy + [os.path.join(ROOT, "tests", "native", "block.py"), lib,
                                   "tl_outer"], cwd=str(tmp_path), env=clean_env(),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert proc.stdout.readline().strip() == b"ready"
        blocked_in_read(proc.pid)
        rec = run(sonde + ["record", "--native", "--idle", "-d", "1", "-p", str(proc.pid),
                           "-f", "collapsed", "-o", "n.txt"], tmp_path)
    finally:
        proc.communicate(b"x")
    assert rec.returncode == 0, rec.stderr
    stacks = (tmp_path / "n.txt").read_text().splitlines()
    assert stacks
    for stack in stacks:
        frames = [f.split(" (")[0] for f in stack.rsplit(" ", 1)[0].split(";")]
        assert frames.index("outer") < frames.index("inner") < frames.index("tl_outer") < \
            frames.index("tl_middle"), stack


def test_pytest_with_warnings_as_errors_under_the_installed_command(wheels, tmp_path):
    """`sonde run -m pytest -W error` with sonde pip-installed (its pytest11
    entry point makes pytest mark the package for assertion rewriting,
    after sonde's launcher imported it): the suite passes as it does bare.
    Before, pytest's PytestAssertRewriteWarning about sonde stopped it."""
    version = "3.11"
    python = dict(PYTHONS).get(version)
    if version not in wheels or not python:
        pytest.skip("needs Python 3.11's wheel (the interpreter of build/venv's pytest)")
    venv = tmp_path / "venv"
    pip = fresh_venv(python, venv, wheels[version])
    assert pip.returncode == 0, pip.stderr + pip.stdout
    (tmp_path / "test_sums.py").write_text("def test_sum():\n    assert sum([1, 2]) == 3\n")
    pytest_home = os.path.dirname(os.path.dirname(pytest.__file__))
    env = dict(clean_env(), PYTHONPATH=pytest_home)
    argv = ["-m", "pytest", "-q", "-W", "error", "-p", "no:cacheprovider", "test_sums.py"]
    bare = subprocess.run([str(venv / "bin" / "python")] + argv, cwd=str(tmp_path), env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    assert bare.returncode == 0 and "1 passed" in bare.stdout, bare.stdout + bare.stderr
    got = subprocess.run([str(venv / "bin" / "sonde"), "run", "-o", "p.prof"] + argv,
                         cwd=str(tmp_path), env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, universal_newlines=True)
    assert got.returncode == 0 and "1 passed" in got.stdout, got.stdout + got.stderr[-3000:]


def two_versions(wheels):
    have = sorted(wheels)
    if len(have) < 2:
        pytest.skip("needs two interpreters' wheels")
    return have[0], have[1]


def test_wheel_for_another_interpreter_is_refused(wheels, tmp_path):
    first, second = two_versions(wheels)
    python = dict(PYTHONS)[second]
    pip = fresh_venv(python, tmp_path / "venv", wheels[first])
    assert pip.returncode != 0
    assert "is not a supported wheel on this platform" in pip.stderr + pip.stdout


def test_missing_extension_is_one_line(wheels, tmp_path):
    version = sorted(wheels)[0]
    python = dict(PYTHONS)[version]
    venv = tmp_path / "venv"
    pip = fresh_venv(python, venv, wheels[version])
    assert pip.returncode == 0, pip.stderr
    (ext,) = glob.glob(str(venv / "lib" / "python*" / "site-packages" / "sonde" / "_sonde*.so"))
    os.remove(ext)
    (tmp_path / "w.py").write_text("print('never')\n")
    got = run(in_root(python) + [str(venv / "bin" / "sonde"), "run", "w.py"], tmp_path)
    assert got.returncode != 0 and "never" not in got.stdout
    (line,) = got.stderr.splitlines()
    assert line.startswith("sonde: cannot load sonde into Python %s (" % version), line
    assert line.endswith(" -m pip install sonde") and "install sonde for it: " in line, line


def test_wheels_of_two_versions_beside_one_command(wheels, tmp_path):
    """pip install --prefix of two versions' wheels: one bin/sonde (the
    last), lib/python3.X/site-packages/sonde of each; --python chooses the
    package of its own version, whose extension it can load."""
    pyenv = [(v, p) for v, p in PYTHONS if v in wheels and p and not in_root(p)]
    if len(pyenv) < 2:
        pytest.skip("needs two interpreters' wheels outside the Debian root")
    prefix = tmp_path / "prefix"
    for version, python in pyenv[:2]:
        pip = run([python, pip_wheel(python) + "/pip", "install", "--no-index", "--no-deps",
                   "--disable-pip-version-check", "-q", "--prefix", str(prefix), wheels[version]],
                  tmp_path)
        assert pip.returncode == 0, pip.stderr + pip.stdout
    (tmp_path / "v.py").write_text("import sys\nprint('%d.%d' % sys.version_info[:2])\n")
    for version, python in pyenv[:2]:
        got = run([str(prefix / "bin" / "sonde"), "run", "--python", python, "-o", "v.prof",
                   "v.py"], tmp_path)
        assert got.returncode == 0, got.stderr
        assert got.stdout == version + "\n"
