"""sonde.Profile takes cProfile's arguments and means them: timer and
timeunit, subcalls, builtins; sys.getprofile(); a second profiler; bad
timers.  Each check (profile_args_driver.py) compares with cProfile in the
same process, under every interpreter of the matrix."""

import os
import subprocess
import sys

import pytest

from conftest import HERE, need, version_params, with_pkg_env

CHECKS = ["process_time", "timer_units", "subcalls_builtins", "getprofile",
          "second_profiler", "bad_timers", "evil_timer", "zero_timeunit"]


@pytest.mark.parametrize("check", CHECKS)
@pytest.mark.parametrize("python", version_params())
def test_profile_args(python, check, tmp_path):
    python = need(python)
    proc = subprocess.run([python, os.path.join(HERE, "profile_args_driver.py"), check],
                          cwd=str(tmp_path), env=with_pkg_env(), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True, timeout=120)
    sys.stdout.write(proc.stdout)
    assert proc.returncode == 0 and proc.stdout.endswith("ok\n"), proc.stdout
