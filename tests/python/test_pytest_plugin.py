"""pytest --sonde and @pytest.mark.limit_memory (python/sonde/pytest_plugin.py).

Each test runs pytest on a small suite in a fresh process, loading the
plugin with -p sonde.pytest_plugin from build/python, and checks what it
wrote against references computed here: cProfile's call counts of the
same test bodies, tracemalloc's peak of the same allocations, and the
outcomes of the same suite run without the plugin.
"""

import cProfile
import glob
import importlib.util
import os
import pstats
import re
import shutil
import subprocess
import sys
import tracemalloc
import warnings
import xml.etree.ElementTree as ET

import pytest

from conftest import PKG

SUITE = '''\
import pytest


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def helper(k):
    return [fib(i) for i in range(k)]


class Box:
    def __init__(self, n):
        self.items = helper(n)

    def total(self):
        return sum(self.items)


def test_fib():
    assert fib(15) == 610


def test_helper():
    assert len(helper(12)) == 12


class TestBox:
    def test_total(self):
        assert Box(8).total() == 33


@pytest.mark.parametrize("x", [7, 9])
def test_param(x):
    assert fib(x) in (13, 34)
'''

OUTCOMES = '''\
import pytest

import sonde


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def test_passes():
    assert fib(10) == 55


def test_fails():
    assert fib(3) == 99


def test_errors():
    raise KeyError("boom")


@pytest.fixture
def broken():
    raise RuntimeError("fixture")


def test_setup_error(broken):
    pass


@pytest.mark.xfail(reason="known")
def test_xfail():
    assert False


@pytest.mark.skip(reason="skipped")
def test_skipped():
    pass


def test_own_profiler():
    # a test that runs a sonde profiler of its own keeps it
    import pstats
    with sonde.Profile() as prof:
        fib(10)
    (entry,) = [v for k, v in pstats.Stats(prof).stats.items() if k[2] == "fib"]
    assert entry[:2] == (1, 177)
'''

MEMORY = '''\
import pytest

MiB = 1024 * 1024


def make(n):
    return bytearray(n * MiB)


@pytest.mark.limit_memory("10 MB")
def test_over():
    block = make(20)
    assert len(block) == 20 * MiB


@pytest.mark.limit_memory("50MiB")
def test_under():
    block = make(20)
    assert len(block) == 20 * MiB


@pytest.mark.limit_memory("10 MB")
def test_freed_between():
    for _ in range(4):
        block = make(6)
        del block
'''


def run_pytest(cwd, *args, pkg=PKG, rootdir=None):
    env = dict(os.environ, PYTHONPATH=pkg)
    env.pop("PYTEST_ADDOPTS", None)
    cmd = [sys.executable, "-m", "pytest", "-p", "sonde.pytest_plugin", "-p", "no:cacheprovider",
           "--rootdir", str(rootdir or cwd)] + [str(a) for a in args]
    return subprocess.run(cmd, cwd=str(cwd), env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True, timeout=120)


def outcomes(xml_path):
    """{test id: passed|failed|error|skipped} from a junit report."""
    found = {}
    for case in ET.parse(str(xml_path)).getroot().iter("testcase"):
        kinds = [child.tag for child in case if child.tag in ("failure", "error", "skipped")]
        name = case.get("classname") + "." + case.get("name")
        if name in found and kinds:  # teardown errors come as a second entry
            found[name] += "+" + kinds[0]
        else:
            found[name] = kinds[0] if kinds else "passed"
    return found


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, str(path))
    module = importlib.util.module_from_spec(spec)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pytest.PytestUnknownMarkWarning)
        spec.loader.exec_module(module)
    return module


def counts_in(stats, filename):
    """{(line, name): (ncalls, primitive calls)} of filename's functions."""
    return {(k[1], k[2]): (v[1], v[0]) for k, v in stats.items() if k[0] == filename}


def sonde_section(output):
    return output[output.index("= sonde ="):]


def test_each_test_has_a_profile_counting_as_cprofile(tmp_path):
    suite = tmp_path / "test_suite.py"
    suite.write_text(SUITE)
    proc = run_pytest(tmp_path, "--sonde", "-q", suite.name)
    assert proc.returncode == 0, proc.stdout
    files = sorted(os.path.basename(p) for p in glob.glob(str(tmp_path / ".sonde" / "*")))
    assert files == ["test_suite.py_TestBox_test_total.prof", "test_suite.py_test_fib.prof",
                     "test_suite.py_test_helper.prof", "test_suite.py_test_param_7.prof",
                     "test_suite.py_test_param_9.prof"]

    module = load(suite, "sonde_plugin_suite")
    bodies = {"test_fib": module.test_fib, "test_helper": module.test_helper,
              "TestBox_test_total": module.TestBox().test_total,
              "test_param_7": lambda: module.test_param(7),
              "test_param_9": lambda: module.test_param(9)}
    for name, body in bodies.items():
        ref = cProfile.Profile()
        ref.runcall(body)
        ref.create_stats()
        want = counts_in(ref.stats, str(suite))
        got = counts_in(pstats.Stats(str(tmp_path / ".sonde" / ("test_suite.py_%s.prof" % name))).stats,
                        str(suite))
        if name.startswith("test_param"):
            # cProfile saw the test function called by the lambda; the counts are the same
            assert got[(33, "test_param")] == (1, 1)
        assert got == want, name
    assert counts_in(pstats.Stats(str(tmp_path / ".sonde" / "test_suite.py_test_fib.prof")).stats,
                     str(suite))[(4, "fib")] == (1973, 1)


def test_summary_names_the_slowest_tests_and_their_hottest_function(tmp_path):
    suite = tmp_path / "test_suite.py"
    suite.write_text(SUITE)
    out_dir = tmp_path / "profiles"
    proc = run_pytest(tmp_path, "--sonde", "--sonde-dir", "profiles", "--sonde-top", "3", suite.name)
    assert proc.returncode == 0, proc.stdout
    section = sonde_section(proc.stdout)
    assert "slowest 3 tests (call phase), hottest functions by self time:" in section
    listed = re.findall(r"^\s+[\d.]+s  (test_suite\.py::\S+)$", section, re.M)
    assert len(listed) == 3
    assert set(listed) <= {"test_suite.py::test_fib", "test_suite.py::test_helper",
                           "test_suite.py::TestBox::test_total", "test_suite.py::test_param[7]",
                           "test_suite.py::test_param[9]"}
    for nodeid in listed:
        # the first function under each test is the one of most self time in its profile
        block = section[section.index(nodeid):].splitlines()
        first = block[1].split()
        stats = pstats.Stats(str(out_dir / (re.sub(r"[^A-Za-z0-9._-]+", "_", nodeid).strip("._")
                                             + ".prof"))).stats
        test_name = nodeid.split("::")[-1].split("[")[0]
        (test_key,) = [k for k in stats if k[2] == test_name and k[0] == str(suite)]
        reachable = {k for k, v in stats.items() if k[0] == str(suite)} | {test_key}
        top = max(reachable, key=lambda k: stats[k][2])
        assert first[1] == top[2] and first[2] == "(test_suite.py:%d)" % top[1], block[:2]
    # fib does the work of test_fib, the slowest of them by far
    assert "fib (test_suite.py:4)" in section
    assert "5 profiles in %s" % out_dir in section


def tracemalloc_peak(func):
    tracemalloc.start()
    try:
        func()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("mode", [[], ["--sonde"], ["--sonde=run"], ["--sonde=mem"]],
                         ids=["plain", "bare", "run", "mem"])
def test_limit_memory(tmp_path, mode):
    suite = tmp_path / "test_memory.py"
    suite.write_text(MEMORY)
    proc = run_pytest(tmp_path, "-q", "--junitxml", "r.xml", suite.name, *mode)
    got = outcomes(tmp_path / "r.xml")
    assert got == {"test_memory.test_over": "failure", "test_memory.test_under": "passed",
                   "test_memory.test_freed_between": "passed"}, proc.stdout
    m = re.search(r"Test was limited to 10\.0 MiB but its allocations reached 20\.0 MiB "
                  r"\((\d+) bytes\) at their peak", proc.stdout)
    assert m, proc.stdout
    module = load(suite, "sonde_plugin_memory_%s" % len(mode))
    reference = tracemalloc_peak(module.test_over)
    assert reference >= 20 * 1024 * 1024
    # the plugin's peak covers the call phase (pytest's few objects around the
    # test too): within 64 KiB of tracemalloc's peak of the test body alone
    assert abs(int(m.group(1)) - reference) < 64 * 1024, (m.group(1), reference)
    # the biggest allocating line is named, with its bytes
    assert re.search(r"20\.0 MiB  %s:7 in make: return bytearray\(n \* MiB\)" % re.escape(str(suite)),
                     proc.stdout), proc.stdout


def test_outcomes_are_kept(tmp_path):
    suite = tmp_path / "test_outcomes.py"
    suite.write_text(OUTCOMES)
    plain = run_pytest(tmp_path, "-q", "--junitxml", "plain.xml", suite.name)
    want = outcomes(tmp_path / "plain.xml")
    assert want == {"test_outcomes.test_passes": "passed", "test_outcomes.test_fails": "failure",
                    "test_outcomes.test_errors": "failure", "test_outcomes.test_setup_error": "error",
                    "test_outcomes.test_xfail": "skipped", "test_outcomes.test_skipped": "skipped",
                    "test_outcomes.test_own_profiler": "passed"}, plain.stdout
    for mode in ("--sonde", "--sonde=mem", "--sonde=record"):
        proc = run_pytest(tmp_path, "-q", "--junitxml", "r.xml", "--sonde-dir", mode[2:], suite.name, mode)
        assert proc.returncode == plain.returncode == 1
        assert outcomes(tmp_path / "r.xml") == want, (mode, proc.stdout)
        # one profile per test that ran its call phase
        assert len(os.listdir(str(tmp_path / mode[2:]))) == 5
        if mode != "--sonde=mem":  # the test's sonde.Profile stopped the plugin's
            assert "test_outcomes.py::test_own_profiler  (cut short: the test ran its own " \
                   "sonde profiler)" in proc.stdout


def test_when_profiling_cannot_start_the_tests_still_run(tmp_path):
    suite = tmp_path / "test_suite.py"
    suite.write_text(SUITE)
    # another sonde profiler records the whole session: the plugin's cannot start
    (tmp_path / "conftest.py").write_text(
        "import sonde\n_prof = sonde.Profile()\n\n"
        "def pytest_configure(config):\n    _prof.enable()\n\n"
        "def pytest_unconfigure(config):\n    _prof.disable()\n")
    proc = run_pytest(tmp_path, "-q", "--sonde", suite.name)
    assert proc.returncode == 0, proc.stdout
    assert "5 passed" in proc.stdout
    said = [line for line in proc.stdout.splitlines() if line.startswith("sonde:")]
    assert said == ["sonde: profiling could not start (ProfilerActiveError: another sonde "
                    "profiler is enabled: disable it first); 5 tests ran unprofiled"], proc.stdout
    assert not (tmp_path / ".sonde").exists()

    # the extension is missing (a package without it): one line, the tests run
    (tmp_path / "conftest.py").unlink()
    pkg = tmp_path / "pkg"
    shutil.copytree(os.path.join(PKG, "sonde"), str(pkg / "sonde"),
                    ignore=shutil.ignore_patterns("*.so", "__pycache__"))
    proc = run_pytest(tmp_path, "-q", "--sonde", suite.name, pkg=str(pkg))
    assert proc.returncode == 0, proc.stdout
    assert "5 passed" in proc.stdout
    said = [line for line in proc.stdout.splitlines() if line.startswith("sonde:")]
    assert said == ["sonde: profiling could not start (sonde's extension cannot be loaded: "
                    "ModuleNotFoundError: No module named 'sonde._sonde'); 5 tests ran unprofiled"], \
        proc.stdout


def test_a_real_package_suite(tmp_path):
    """mpmath's own tests (mpmath is in the test venv, its tests with it):
    the same outcomes with --sonde as without, and one profile per test."""
    spec = importlib.util.find_spec("mpmath")
    if spec is None:
        pytest.skip("mpmath is not installed in this environment")
    tests = os.path.join(os.path.dirname(spec.origin), "tests")
    files = [os.path.join(tests, name) for name in ("test_bitwise.py", "test_division.py",
                                                    "test_convert.py")]
    if not all(os.path.exists(f) for f in files):
        pytest.skip("mpmath's tests are not installed")
    args = ["-q", "-W", "ignore"] + files
    plain = run_pytest(tmp_path, "--junitxml", "plain.xml", *args, rootdir=os.path.dirname(tests))
    want = outcomes(tmp_path / "plain.xml")
    assert len(want) >= 30, plain.stdout
    proc = run_pytest(tmp_path, "--junitxml", "sonde.xml", "--sonde", *args,
                      rootdir=os.path.dirname(tests))
    assert proc.returncode == plain.returncode
    assert outcomes(tmp_path / "sonde.xml") == want
    ran = [k for k, v in want.items() if v in ("passed", "failure")]
    profiles = glob.glob(str(tmp_path / ".sonde" / "*.prof"))
    assert len(profiles) == len(ran)
    for path in profiles:
        assert pstats.Stats(path).total_calls > 0
    assert "%d profiles in %s" % (len(ran), tmp_path / ".sonde") in proc.stdout
