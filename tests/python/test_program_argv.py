"""The command line a program run under sonde run, lines and mem sees is a
bare run's (issue 24, item 6): sys.argv, sys.orig_argv (3.10+),
/proc/self/cmdline (what ps, pgrep and psutil read), sys.path and
PYTHONPATH, in the program and in the Python programs it starts; and a
program that re-executes itself (werkzeug's reloader) is profiled after
the exec, with the same command line."""

import marshal
import os

import pytest

from conftest import run_sonde, need, version_params

PROBE = r"""
import json, os, subprocess, sys
def said():
    with open("/proc/self/cmdline", "rb") as f:
        cmdline = f.read().decode().split("\0")
    return {"argv": sys.argv, "orig_argv": getattr(sys, "orig_argv", None),
            "cmdline": cmdline, "path": sys.path, "pythonpath": os.environ.get("PYTHONPATH"),
            "sitecustomize": getattr(sys.modules.get("sitecustomize"), "__file__", None)}
child = subprocess.run([sys.executable, "-c", "import sys, os; print(sys.path, "
                        "os.environ.get('PYTHONPATH'), 'sitecustomize' in sys.modules)"],
                       stdout=subprocess.PIPE, universal_newlines=True).stdout
print("PROBE " + json.dumps([said(), child]))
"""

# Runs itself again once, as werkzeug's reloader does (with sys.orig_argv
# where there is one), and says its command line after the exec.
REEXEC = r"""
import json, os, sys
def before_exec():
    os.environ["PROBE_AGAIN"] = "1"
    os.execv(sys.executable, getattr(sys, "orig_argv", [sys.executable] + sys.argv))
def after_exec():
    with open("/proc/self/cmdline", "rb") as f:
        cmdline = f.read().decode().split("\0")
    print("PROBE " + json.dumps([sys.argv, getattr(sys, "orig_argv", None), cmdline]))
if "PROBE_AGAIN" in os.environ:
    after_exec()
else:
    before_exec()
"""


def probed(stdout):
    lines = [line for line in stdout.splitlines() if line.startswith("PROBE ")]
    assert len(lines) == 1, stdout
    return lines[0][6:]


def bare(python, args, cwd):
    import subprocess
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    return subprocess.run([python] + args, cwd=str(cwd), env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True)


@pytest.mark.parametrize("tool", ["run", "lines", "mem"])
@pytest.mark.parametrize("python", version_params())
def test_program_sees_a_bare_runs_command_line(python, tool, tmp_path):
    python = need(python)
    (tmp_path / "probe.py").write_text(PROBE)
    for args in (["probe.py", "a", "b c", "-m"], ["-m", "probe", "x", ""],
                 ["-c", PROBE, "-c", "y"]):
        theirs = bare(python, args, tmp_path)
        assert theirs.returncode == 0, theirs.stderr
        ours = run_sonde([tool, "-o", str(tmp_path / "out")] + args, tmp_path, python=python)
        assert ours.returncode == 0, ours.stderr
        assert probed(ours.stdout) == probed(theirs.stdout), args


@pytest.mark.parametrize("python", version_params())
def test_program_that_execs_itself_is_profiled_after_the_exec(python, tmp_path):
    python = need(python)
    (tmp_path / "reexec.py").write_text(REEXEC)
    args = ["reexec.py", "--reload", "1"]
    theirs = bare(python, args, tmp_path)
    assert theirs.returncode == 0, theirs.stderr
    ours = run_sonde(["run", "-o", "x.prof"] + args, tmp_path, python=python)
    assert ours.returncode == 0, ours.stderr
    assert probed(ours.stdout) == probed(theirs.stdout)
    with open(str(tmp_path / "x.prof"), "rb") as f:
        calls = {k[2]: v[1] for k, v in marshal.load(f).items()}
    assert calls.get("after_exec") == 1 and "before_exec" not in calls


def test_program_that_execs_another_program_is_not_profiled(tmp_path):
    """Only the program itself is launched again: another one it execs in
    its place runs bare (sonde says it left no profile)."""
    (tmp_path / "other.py").write_text(
        "import os, sys\nos.execv(sys.executable, [sys.executable, '-c', "
        "'import sys; print(sys.modules.get(\"sonde\")); sys.exit(3)'])\n")
    proc = run_sonde(["run", "other.py"], tmp_path)
    assert proc.returncode == 3
    assert proc.stdout == "None\n"
    assert proc.stderr.startswith("sonde: no profile:")
