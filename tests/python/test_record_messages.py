"""sonde record says the true thing when it stops early: a -d too short
to see Python says so (it said the command "ran no Python process that
sonde could read", or that no Python code ran), and running out of file
descriptors says EMFILE and how to raise the limit (it said "the process
ended" while the program ran on)."""

import os
import resource
import subprocess
import sys

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
    """-d 1 us ends before the interpreter is readable (through a shell:
    before Python even starts) or after one sample at most."""
    cmd = [sys.executable, "-c", "import time; time.sleep(1)"]
    if through_shell:
        cmd = ["/bin/sh", "-c", 'exec "$0" "$@"'] + cmd
    p = record(["-d", "0.000001", "-o", "r.json", "--"] + cmd, tmp_path)
    # Python's own start may be caught by the one sample (not through a
    # shell, which has yet to exec it): then a stack is kept, rightly.
    if through_shell or " 0 kept" in p.stderr or "nothing recorded" in p.stderr:
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
