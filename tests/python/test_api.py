"""The Python API: a drop-in for cProfile.Profile, plus @sonde.profile."""

import io
import pstats
import subprocess
import sys

import pytest

from conftest import PKG, need, run_sonde, version_params, with_pkg_env

sys.path.insert(0, PKG)
import sonde  # noqa: E402
import workloads  # noqa: E402


def fib_entry(stats):
    (entry,) = [v for k, v in stats.items() if k[2] == "fib"]
    return entry


def test_with_block_and_pstats():
    with sonde.Profile() as prof:
        workloads.fib(12)
    st = pstats.Stats(prof)
    assert fib_entry(st.stats)[:2] == (1, 465)
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("cumulative").print_stats(5)
    assert "fib" in out.getvalue()


def test_runcall_dump_and_reload(tmp_path):
    prof = sonde.Profile()
    assert prof.runcall(workloads.fib, 10) == 55
    path = tmp_path / "api.prof"
    prof.dump_stats(str(path))
    assert fib_entry(pstats.Stats(str(path)).stats)[:2] == (1, 177)


def test_enable_disable_accumulates():
    prof = sonde.Profile()
    for _ in range(3):
        prof.enable()
        workloads.fib(5)
        prof.disable()
    prof.create_stats()
    assert fib_entry(prof.stats)[:2] == (3, 45)
    prof.clear()
    prof.create_stats()
    assert prof.stats == {}


def test_print_stats_and_table():
    prof = sonde.Profile()
    prof.runcall(workloads.fib, 8)
    out = io.StringIO()
    prof.print_stats("tottime", file=out)
    text = out.getvalue()
    assert "ncalls  tottime  percall  cumtime  percall filename:lineno(function)" in text
    assert "67/1" in text and "(fib)" in text
    with pytest.raises(ValueError):
        prof.table(sort="bogus")


def test_decorator_prints_table():
    err = io.StringIO()

    @sonde.profile(file=err)
    def work():
        return workloads.fib(7)

    assert work() == 13
    assert "41/1" in err.getvalue()


def test_one_profiler_at_a_time():
    a, b = sonde.Profile(), sonde.Profile()
    a.enable()
    try:
        with pytest.raises(RuntimeError):
            b.enable()
    finally:
        a.disable()


def test_builtins_can_be_left_out():
    prof = sonde.Profile(builtins=False)
    prof.runcall(lambda: [len("x") for _ in range(10)])
    prof.create_stats()
    assert not [k for k in prof.stats if k[0] == "~"]


def test_python_dash_m_sonde(tmp_path):
    script = tmp_path / "s.py"
    script.write_text("def f():\n    return 1\nf()\n")
    proc = subprocess.run([sys.executable, "-m", "sonde", "run", str(script)],
                          env=with_pkg_env(), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True)
    assert proc.returncode == 0, proc.stderr
    assert "s.py:1(f)" in proc.stderr


def test_getstats_matches_cprofile_shape():
    import cProfile
    ours, theirs = sonde.Profile(), cProfile.Profile()
    ours.runcall(workloads.fib, 9)
    theirs.runcall(workloads.fib, 9)

    def fib_figures(entries):
        (e,) = [e for e in entries if getattr(e.code, "co_name", None) == "fib"]
        (sub,) = [s for s in e.calls if getattr(s.code, "co_name", None) == "fib"]
        return e.callcount, e.reccallcount, sub.callcount, sub.reccallcount

    assert fib_figures(ours.getstats()) == fib_figures(theirs.getstats()) == (109, 108, 108, 106)


THREADS = """
import json, sys, threading
from concurrent.futures import ThreadPoolExecutor

seen = {}
together = threading.Barrier(7)  # all six alive at once: no ident is reused

def work(n):
    seen[threading.get_ident()] = threading.current_thread().name
    together.wait()
    return sum(i * i for i in range(n))

workers = [threading.Thread(target=work, args=(20000,), name="worker-%d" % i) for i in range(3)]
for w in workers:
    w.start()
with ThreadPoolExecutor(3, thread_name_prefix="pool") as ex:
    jobs = [ex.submit(work, 5000) for _ in range(3)]
    together.wait()
for w in workers:
    w.join()
seen[threading.get_ident()] = threading.current_thread().name
json.dump(seen, sys.stdout)
"""


@pytest.mark.parametrize("python", version_params())
def test_run_names_every_thread(python, tmp_path):
    """sonde run names each thread as threading does, the second and later
    workers running the same function too (ThreadPoolExecutor's as well)."""
    python = need(python)
    (tmp_path / "t.py").write_text(THREADS)
    proc = run_sonde(["run", "-f", "json", "-o", "t.json", "t.py"], tmp_path, python=python)
    assert proc.returncode == 0, proc.stderr
    import json
    seen = {int(k): v for k, v in json.loads(proc.stdout).items()}
    threads = json.load(open(str(tmp_path / "t.json")))["threads"]
    named = {t["ident"]: t["name"] for t in threads}
    assert len(seen) == 7 and all(named[ident] == name for ident, name in seen.items()), named


OWN_PROFILER = """
import cProfile

def leaf(i):
    return i * 2

def inner(n):
    return sum(leaf(i) for i in range(n))

def after(n):
    t = 0
    for i in range(n):
        t += leaf(i)
    return t

def main():
    after(100)
    cProfile.run("inner(300)", "inner.prof")
    after(200)

main()
"""


@pytest.mark.parametrize("python", version_params())
def test_program_running_cprofile_itself(python, tmp_path):
    """A program that runs cProfile in the middle: cProfile records what it
    always does, and sonde goes on recording (up to 3.11 both share the
    one profile function slot: sonde takes it back, chained)."""
    import marshal
    python = need(python)
    (tmp_path / "own.py").write_text(OWN_PROFILER)
    proc = run_sonde(["run", "-o", "s.prof", "own.py"], tmp_path, python=python)
    assert proc.returncode == 0, proc.stderr

    def ours(path):
        stats = marshal.load(open(str(path), "rb"))
        return {k[2]: v for k, v in stats.items() if k[0].endswith("own.py")}

    theirs, sonde = ours(tmp_path / "inner.prof"), ours(tmp_path / "s.prof")
    assert theirs["leaf"][:2] == (300, 300)  # cProfile saw its part
    assert sonde["after"][:2] == (2, 2) and sonde["main"][:2] == (1, 1)
    assert sonde["leaf"][:2] == (600, 600)
    callers = {k[2]: v[0] for k, v in sonde["leaf"][4].items()}
    assert callers == {"after": 300, "<genexpr>": 300}
    assert sonde["inner"][:2] == theirs["inner"][:2] == (1, 1)


TOOL_HELD = """
import json, sys
import sonde

def work():
    return sum(range(10))

# A tool of the program's (a coverage or profiling tool) holds the ids
# sonde's tracer (4) and line tracer (3) use.
sys.monitoring.use_tool_id(4, "program's profiler")
sys.monitoring.use_tool_id(3, "program's coverage")
refused = []
for start in (sonde.Profile().enable, sonde.LineProfiler(work).enable):
    try:
        start()
    except (RuntimeError, ValueError) as e:
        refused.append(type(e).__name__)
print(json.dumps([refused, sys.monitoring.get_tool(4), sys.monitoring.get_tool(3)]))
"""


@pytest.mark.parametrize("python", version_params())
def test_refused_enable_leaves_the_programs_tools(python):
    """3.12+: when another tool holds the sys.monitoring id sonde needs,
    enable() is refused and that tool keeps its id (sys.monitoring's own
    get_tool() is the reference)."""
    python = need(python)
    if subprocess.run([python, "-c", "import sys; sys.exit(sys.version_info < (3, 12))"]).returncode:
        pytest.skip("sys.monitoring is 3.12+")
    import json
    out = subprocess.run([python, "-c", TOOL_HELD], env=with_pkg_env(), stdout=subprocess.PIPE,
                         universal_newlines=True, check=True).stdout
    assert json.loads(out) == [["ProfilerActiveError", "ValueError"], "program's profiler",
                               "program's coverage"]


UNBINDABLE = """
import pstats, sys
import sonde

def work():
    try:
        bytes.find(str())  # a bytes method called on a str: TypeError
    except TypeError as e:
        print(type(e).__name__)
    return b"abc".find(b"c")

prof = sonde.Profile()
print(prof.runcall(work))
prof.dump_stats("u.prof")
stats = pstats.Stats("u.prof").stats
print(sorted(v[0] for k, v in stats.items() if k[2] == "work"))
"""


@pytest.mark.parametrize("python", version_params())
def test_a_method_called_on_the_wrong_type(python, tmp_path):
    """CPython's gh-132250 (test_cprofile's test_bad_descriptor from 3.14):
    an unbound method called with a self of another type raises TypeError
    before it runs.  Before: sonde.Profile crashed (SIGSEGV) on 3.12+,
    naming the method descriptor as if it were a bound C function."""
    python = need(python)
    proc = subprocess.run([python, "-c", UNBINDABLE], cwd=str(tmp_path), env=with_pkg_env(),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n") == ["TypeError", "2", "[1]", ""]
