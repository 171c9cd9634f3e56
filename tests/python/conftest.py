"""Shared fixtures: the sonde command, the interpreters of the version
matrix, and helpers to run programs under sonde and under cProfile."""

import os
import signal
import random
import re
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
# The command under test: make's, or another build of it (make test-asan
# runs the hostile-program tests with the sanitizer build: SONDE_TEST_BIN).
SONDE = os.environ.get("SONDE_TEST_BIN") or os.path.join(ROOT, "build", "bin", "sonde")
PKG = os.path.join(ROOT, "build", "python")

sys.path.insert(0, HERE)


def supported_minors():
    """The minor versions sonde supports, as src/core/pyversions.h names them."""
    with open(os.path.join(ROOT, "src", "core", "pyversions.h")) as f:
        text = f.read()
    first, last = (int(re.search(r"^#define SONDE_PY_%s_MINOR (\d+)$" % which, text, re.M).group(1))
                   for which in ("FIRST", "LAST"))
    return list(range(first, last + 1))


SUPPORTED = "3.%d to 3.%d" % (supported_minors()[0], supported_minors()[-1])

# Interpreters of the Debian root tests/sid/make_root.sh makes (.ci/run does: 3.14 and 3.15),
# each run as a container runs it (tests/sid/python.sh): make test lists build/sid/python3.X.
SID = os.path.join(ROOT, "build", "sid")


def interpreters():
    """(label, path) of every interpreter the matrix covers; absent ones are
    reported as skips by the tests that use them."""
    listed = os.environ.get("SONDE_TEST_PYTHONS", "").split()
    versions = ["3.%d" % m for m in supported_minors()]
    wanted = versions + ["system"]
    found = {}
    for path in listed:
        if path == "/usr/bin/python3":
            found["system"] = path
            continue
        for v in versions:
            if "/%s." % v in path or path.endswith("/python" + v):
                found[v] = path
    return [(v, found.get(v)) for v in wanted]


def version_params():
    return [pytest.param(path, id=label) for label, path in interpreters()]


def native_params():
    """version_params() but the interpreters of the Debian root: gdb, the
    reference of the native stacks compared with it, runs here and cannot
    read the files of a target in another mount namespace."""
    return [p for p in version_params() if not (p.values[0] or "").startswith(SID + os.sep)]



def signals_at_default():
    """For preexec_fn: SIGINT, SIGQUIT, SIGHUP and SIGTERM at their default
    action, as a terminal or a service manager starts a program.  A test
    that sends one of them must not inherit how the test run was started
    (nohup ignores SIGHUP; a shell without job control starts background
    commands with SIGINT and SIGQUIT ignored, and a program keeps them so,
    bare or under sonde alike)."""
    for sig in (signal.SIGINT, signal.SIGQUIT, signal.SIGHUP, signal.SIGTERM):
        signal.signal(sig, signal.SIG_DFL)

def need(python):
    if not python or not os.path.exists(python):
        pytest.skip("interpreter not on this machine")
    return python


def run_sonde(args, cwd, python=None, **kw):
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    if python:
        env["SONDE_PYTHON"] = python
    else:
        env["SONDE_PYTHON"] = sys.executable
    return subprocess.run([SONDE] + list(args), cwd=str(cwd), env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, **kw)


def with_pkg_env(extra=None):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([PKG, HERE] + ([extra] if extra else []))
    return env


@pytest.fixture(autouse=True)
def sonde_seed(monkeypatch):
    """The seed of sonde mem's sampler (SONDE_SEED) in this test and every
    program it runs: the one in the environment, to replay a failure, else
    a new one.  pytest shows it with a failing test's output."""
    seed = os.environ.get("SONDE_SEED") or str(random.randrange(1, 1 << 31))
    monkeypatch.setenv("SONDE_SEED", seed)
    print("SONDE_SEED=%s (set it to replay this test's memory samples)" % seed)
    return seed


def start_ready(python, tmp_path, text, *args, prefix=()):
    """Starts the program text (as tmp_path/prog.py, under prefix) and
    returns it once it has printed "ready", its readiness signal."""
    prog = tmp_path / "prog.py"
    prog.write_text(text)
    proc = subprocess.Popen(list(prefix) + [python, str(prog)] + [str(a) for a in args],
                            cwd=str(tmp_path), stdout=subprocess.PIPE, universal_newlines=True)
    line = proc.stdout.readline()
    if line != "ready\n":
        proc.kill()
        proc.wait()
        raise AssertionError("the program never got going: %r" % line)
    return proc


def stop_ready(proc):
    """Ends a program start_ready started."""
    proc.kill()
    proc.wait()
    proc.stdout.close()


def one_line(proc, code):
    """The one line sonde printed on stderr, checking the exit code."""
    assert proc.returncode == code, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("sonde"), proc.stderr
    return lines[0]
