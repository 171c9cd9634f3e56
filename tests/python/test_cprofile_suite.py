"""CPython's own cProfile tests (Lib/test/test_cprofile.py, CProfileTest)
run against sonde.Profile: the suite nobody here wrote is the reference.

Each interpreter runs its own test.test_cprofile (3.15:
test.test_profiling.test_tracing_profiler) in a subprocess, with
CProfileTest subclassed as profilerclass = sonde.Profile.  What the
subclass leaves out, and why, is LEFT_OUT below; everything else in
CProfileTest (and the ProfileTest it inherits) runs, and must pass.

profilermodule stays cProfile: the module-level tests (test_run,
test_runctx, test_run_profile_as_module, ...) drive `python -m cProfile`
and cProfile.run, whose printing is pstats', not sonde's table."""

import subprocess

import pytest

from conftest import need, version_params, with_pkg_env

# Test methods left out, by the interpreters they are left out on (from
# that version on), and why.  Only assertions that name cProfile itself.
LEFT_OUT = {
    # 3.12+: `sys.monitoring.get_tool(PROFILER_ID) == "cProfile"`.  sonde
    # takes its own tool id (4, named "sonde") so that a program may run
    # cProfile at the same time; PROFILER_ID stays free.
    "test_profile_enable_disable": (3, 12),
    "test_profile_as_context_manager": (3, 12),
}

# test_cprofile runs as CPython's, every figure compared exactly, but for
# one thing: print_callers and print_callees are compared with each run of
# spaces made one.  pstats pads their name column to the longest name in
# the stats, and cProfile's stats always hold its own disable() call,
# "{method 'disable' of '_lsprof.Profiler' objects}": the width names
# cProfile.  sonde leaves its enable() and disable() out of the profile.
# print_stats, which pads nothing, is compared exactly.
DRIVER = r"""
import re, sys, unittest
import sonde
try:
    from test import test_cprofile
except ImportError:
    try:  # 3.15: cProfile is profiling.tracing (PEP 799), its tests moved with it
        from test.test_profiling import test_tracing_profiler as test_cprofile
    except ImportError as e:
        print("NO-TEST-PACKAGE", e)
        sys.exit(0)

LEFT_OUT = %r

class SondeCProfileTest(test_cprofile.CProfileTest):
    profilerclass = sonde.Profile

    def test_cprofile(self):
        results = self.do_profiling()
        expected = self.get_expected_output()
        self.assertEqual(results[0], 1000)
        for i, method in enumerate(self.methodnames):
            want, got = expected[method], results[i + 1]
            if method != "print_stats":
                want, got = (re.sub(" +", " ", text) for text in (want, got))
            self.assertEqual(want, got, method)

    def test_second_profiler(self):
        # From 3.14 CPython's asserts the message "tool 2 is already in
        # use", which names cProfile's sys.monitoring tool; sonde's tool is
        # its own (see LEFT_OUT).  The same test, the message sonde's.
        pr = self.profilerclass()
        pr2 = self.profilerclass()
        pr.enable()
        self.addCleanup(pr.disable)
        self.assertRaises(ValueError, pr2.enable)

for name, since in LEFT_OUT.items():
    if sys.version_info[:2] >= since and hasattr(SondeCProfileTest, name):
        setattr(SondeCProfileTest, name,
                unittest.skip("names cProfile itself")(getattr(SondeCProfileTest, name)))

suite = unittest.defaultTestLoader.loadTestsFromTestCase(SondeCProfileTest)
result = unittest.TextTestRunner(stream=sys.stdout, verbosity=2).run(suite)
print("RAN", result.testsRun, "SKIPPED", len(result.skipped))
sys.exit(0 if result.wasSuccessful() else 1)
"""


@pytest.mark.parametrize("python", version_params())
def test_cpython_cprofile_suite(python, tmp_path):
    python = need(python)
    proc = subprocess.run([python, "-c", DRIVER % (LEFT_OUT,)], cwd=str(tmp_path),
                          env=with_pkg_env(), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True, timeout=600)
    if proc.stdout.startswith("NO-TEST-PACKAGE"):
        # Debian's interpreters ship their test package apart
        # (libpython3.X-testsuite): tests/sid/make_root.sh installs it in
        # the root of 3.14 and 3.15; the host's /usr/bin/python3 has none.
        pytest.skip("%s has no test package: %s" % (python, proc.stdout.strip()))
    assert proc.returncode == 0, proc.stdout
    assert "RAN" in proc.stdout and " ok" in proc.stdout, proc.stdout
