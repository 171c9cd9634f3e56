"""sonde.LineProfiler as line_profiler 5's users call it: the hits of
get_stats() equal the interpreter's line events on every interpreter,
whichever way the functions were given (add_function, the decorator on
generators, coroutines and async generators, add_class, add_module) and
run (runcall, runctx, `with`); .lprof files (dump_stats', and `sonde
lines -o X.lprof`'s) that line_profiler's own `python -m line_profiler`
prints with the same hits, and kernprof's read back; print_stats'
options; one clear error for bad input."""

import io
import json
import os
import pickle
import re
import subprocess
import sys

import pytest

from conftest import HERE, PKG, need, run_sonde, version_params, with_pkg_env
# settrace_counts: the hits and iterations of s.py's functions (their
# module code left out) from the interpreter's own line events, by line:
# what `sonde lines` counts when no function is named.
from test_lines import settrace_counts

sys.path[:0] = [PKG, HERE]


@pytest.mark.parametrize("python", version_params())
def test_get_stats_hits_equal_line_events(python):
    python = need(python)
    out = subprocess.run([python, os.path.join(HERE, "lp_api_driver.py")], env=with_pkg_env(),
                         stdout=subprocess.PIPE, universal_newlines=True, check=True).stdout
    got = json.loads(out)
    assert got["sonde"] == got["reference"]
    # every kind of function was counted: loop's body, the generator's
    # resumptions, the coroutine's and async generator's awaits, methods
    assert got["sonde"]["loop:9"] == 40 + 1 + 9 + 1 and got["sonde"]["gen:17"] == 7
    assert got["sonde"]["coro:24"] == 5 and got["sonde"]["agen:32"] == 4
    assert got["sonde"]["Shapes.area:40"] == 6


@pytest.mark.parametrize("python", version_params())
def test_profilers_enabled_at_once_each_count_their_own_windows(python):
    """Two profilers whose windows overlap, threads inside them: each one's
    hits are the interpreter's line events of its functions in its windows."""
    python = need(python)
    out = subprocess.run([python, os.path.join(HERE, "lp_many_driver.py")], env=with_pkg_env(),
                         stdout=subprocess.PIPE, universal_newlines=True, check=True).stdout
    got = json.loads(out)
    assert got["A"] == got["reference_A"] and got["B"] == got["reference_B"]
    # loop ran in both windows: 10 + 20 iterations for A, 20 + 30 + 7 for B
    assert got["A"]["loop:9"] == 30 + 2 and got["B"]["loop:9"] == 57 + 3


MEMORY_AND_LINES = r"""
import sonde
def f():
    return 1
mem, lines = sonde.MemoryProfiler(f), sonde.LineProfiler(f)
for first, second in ((mem, lines), (lines, mem)):
    with first:
        try:
            second.enable()
        except RuntimeError as e:
            print(e)
    assert f() == 1
"""


def test_the_memory_profiler_records_alone():
    """Line profilers share the line events; sonde's memory profiler,
    which follows every allocation, does not: one clear error either way."""
    out = subprocess.run([sys.executable, "-c", MEMORY_AND_LINES], env=with_pkg_env(),
                         stdout=subprocess.PIPE, universal_newlines=True, check=True).stdout
    assert out.splitlines() == ["sonde's memory profiler records alone: another sonde line "
                                "tracer is enabled"] * 2


HOT_DECORATED = r"""
import sonde
lp = sonde.LineProfiler()

@lp
def f(x):
    return x + 1

def rss_kib():
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096 // 1024

for i in range(2000):
    f(i)
before = rss_kib()
for i in range(100000):
    f(i)
print(rss_kib() - before, lp.get_stats().timings[next(iter(lp.get_stats().timings))][0][1])
"""


@pytest.mark.parametrize("python", version_params())
def test_a_decorated_function_called_often_keeps_its_memory(python):
    """The decorator turns the profiler on and off at each call: what it
    keeps per thread is found again, not made anew (each call used to
    leave about 700 bytes behind: 70 MB over these calls)."""
    python = need(python)
    out = subprocess.run([python, "-c", HOT_DECORATED], env=with_pkg_env(),
                         stdout=subprocess.PIPE, universal_newlines=True, check=True).stdout
    grown_kib, hits = map(int, out.split())
    assert hits == 102000 and grown_kib < 4096, out


def _profiled():
    import lp_api_workloads as w
    import sonde

    lp = sonde.LineProfiler()
    lp.add_function(w.loop)
    lp.add_function(w.gen)  # added, never run
    assert lp.runcall(w.loop, 30) == w.loop(30)
    return lp, w


ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+\S")


def _printed_hits(text):
    """{(function, line): hits} of line_profiler's printed tables."""
    hits, function = {}, None
    for row in text.splitlines():
        if row.startswith("Function: "):
            function = row.split()[1]
        m = ROW.match(row)
        if m and function:
            hits[function, int(m.group(1))] = int(m.group(2))
    return hits


def test_lprof_printed_by_line_profiler(tmp_path):
    """dump_stats writes what `python -m line_profiler` prints, with the
    hits get_stats() gives (which the test above checks against the
    interpreter)."""
    lp, w = _profiled()
    path = str(tmp_path / "x.lprof")
    lp.dump_stats(path)
    printed = subprocess.run([sys.executable, "-m", "line_profiler", path], check=True,
                             stdout=subprocess.PIPE, universal_newlines=True).stdout
    want = {(name, line): hits for (_, _, name), lines in lp.get_stats().timings.items()
            for line, hits, _ in lines}
    assert _printed_hits(printed) == want and want[("loop", 9)] == 31
    # and line_profiler's own reader gives back the same object
    import line_profiler

    assert line_profiler.LineStats.from_files(path).timings == lp.get_stats().timings


LINES_SCRIPT = """
import sys

def loop(n):
    total = 0
    for i in range(n):
        if i % 3:
            total += i
        else:
            total -= 1
    return total

def gen(n):
    for i in range(n):
        yield i * 2

class Shapes:
    def __init__(self, k):
        self.sides = [s for s in range(k)
                      if s % 2]

    def area(self):
        f = lambda s: (s *
                       s)
        return sum(f(s) for s in self.sides)

def main():
    try:
        loop(25)
        raise ValueError
    except ValueError:
        pass
    return sum(gen(7)) + Shapes(9).area()

main()
sys.exit(3)
"""

@pytest.mark.parametrize("python", version_params())
def test_lines_command_writes_lprof(python, tmp_path):
    """`sonde lines -o s.lprof` writes line_profiler's file: its hits per
    line are the interpreter's line events, `python -m line_profiler`
    prints them, line_profiler's own reader loads it; the program's exit
    code and the table on stderr are as with -o s.json."""
    python = need(python)
    (tmp_path / "s.py").write_text(LINES_SCRIPT)
    want, _ = settrace_counts(python, tmp_path)
    proc = run_sonde(["lines", "-o", "s.lprof", "s.py"], tmp_path, python=python)
    assert proc.returncode == 3, proc.stderr
    import line_profiler

    stats = line_profiler.LineStats.from_files(str(tmp_path / "s.lprof"))
    got = {}
    for lines in stats.timings.values():
        for line, hits, _ in lines:
            got[line] = got.get(line, 0) + hits
    assert got == want and got[6] == 26 and got[15] == 7 and stats.unit == 1e-9
    names = {name.rpartition(".")[2] for (_, _, name) in stats.timings}
    assert names == {"loop", "gen", "__init__", "area", "main", "Shapes"}
    printed = subprocess.run([sys.executable, "-m", "line_profiler", "s.lprof"], check=True,
                             cwd=str(tmp_path), stdout=subprocess.PIPE,
                             universal_newlines=True).stdout
    assert sorted(_printed_hits(printed).values()) == sorted(
        hits for lines in stats.timings.values() for _, hits, _ in lines)
    assert {line for (_, line) in _printed_hits(printed)} == set(want)
    # the same run's JSON has the same hits, and its table is printed alike
    again = run_sonde(["lines", "-o", "s.json", "s.py"], tmp_path, python=python)
    doc = json.load(open(str(tmp_path / "s.json")))
    assert {l["line"]: l["hits"] for f in doc["functions"] for l in f["lines"]
            if l["hits"]} == want
    assert again.stderr.count("Function: ") == proc.stderr.count("Function: ") == 6


def test_lines_command_lprof_bad_output(tmp_path):
    """-o FILE.lprof where nothing can be written: one line, before the
    program runs."""
    (tmp_path / "s.py").write_text("open('ran', 'w').close()\n")
    proc = run_sonde(["lines", "-o", "missing/s.lprof", "s.py"], tmp_path)
    assert proc.returncode == 1 and not (tmp_path / "ran").exists()
    assert proc.stderr.startswith("sonde:") and len(proc.stderr.splitlines()) == 1
    assert "Traceback" not in proc.stderr


def _kernprof_file(tmp_path):
    """A .lprof line_profiler itself wrote (as kernprof -l does), and its
    LineStats."""
    import line_profiler
    import lp_api_workloads as w

    theirs = line_profiler.LineProfiler()
    theirs.add_function(w.loop)
    theirs.add_function(w.Shapes.area)
    theirs.runcall(w.loop, 12)
    theirs.runcall(w.Shapes(4).area)
    path = tmp_path / "k.lprof"
    theirs.dump_stats(str(path))
    return path, theirs.get_stats()


def _page_document(html):
    """The lines document a page of sonde view carries."""
    start = html.index('id="data">') + len('id="data">')
    return json.loads(html[start:html.index("</script>", start)])["doc"]


def test_report_and_view_read_lprof(tmp_path):
    """sonde report prints, and sonde view draws, a .lprof that
    line_profiler wrote, and one `sonde lines -o` wrote: the hits of each
    line as line_profiler's own reader has them, with their source."""
    kernprof, stats = _kernprof_file(tmp_path)
    (tmp_path / "s.py").write_text(LINES_SCRIPT)
    assert run_sonde(["lines", "-o", "s.lprof", "s.py"], tmp_path).returncode == 3
    import line_profiler

    for path in (kernprof, tmp_path / "s.lprof"):
        if path != kernprof:
            stats = line_profiler.LineStats.from_files(str(path))
        want = {(name.rpartition(".")[2], line): hits
                for (_, _, name), lines in stats.timings.items() for line, hits, _ in lines}
        report = run_sonde(["report", str(path)], tmp_path)
        assert report.returncode == 0 and report.stderr == "", report.stderr
        got = {(name.rpartition(".")[2], line): hits
               for (name, line), hits in _printed_hits(report.stdout).items() if hits}
        assert got == want and len(want) > 5
        view = run_sonde(["view", str(path), "-o", "page.html"], tmp_path)
        assert view.returncode == 0, view.stderr
        doc = _page_document((tmp_path / "page.html").read_text())
        drawn = {(f["name"].rpartition(".")[2], l["line"]): l["hits"]
                 for f in doc["functions"] for l in f["lines"] if l["hits"]}
        assert drawn == want
        # each line's source, read from the file the .lprof names
        (filename, first, _), _ = sorted(stats.timings.items())[0]
        f = sorted(doc["functions"], key=lambda f: (f["file"], f["first_line"]))[0]
        import inspect

        block = inspect.getblock(open(filename).readlines()[first - 1:])
        assert [l["source"] for l in f["lines"]] == [row.rstrip("\n") for row in block]
        assert [l["line"] for l in f["lines"]] == list(range(first, first + len(block)))
    # a pickle is read as one whatever its name
    os.rename(str(kernprof), str(tmp_path / "k.bin"))
    again = run_sonde(["report", "k.bin"], tmp_path)
    assert again.returncode == 0 and "Function: loop" in again.stdout


def test_report_and_view_refuse_bad_lprof(tmp_path):
    """A file that is not line_profiler's (one that would run code when
    unpickled included) gets one line naming it and exit 1, from report
    and view alike, and runs nothing."""
    ran = tmp_path / "ran"
    cases = {"empty.lprof": b"", "garbage.lprof": b"\x80\x02garbage",
             "evil.lprof": b"cos\nsystem\n(S'touch %s'\ntR." % str(ran).encode(),
             "evil4.bin": pickle.dumps(_Evil(str(ran)), 4),
             "dict.lprof": pickle.dumps({"timings": {}, "unit": 1e-6}, 2),
             "unit.lprof": _lprof({}, float("inf")),
             "key.lprof": _lprof({("f", 1, 2): []}, 1e-6),
             "huge.lprof": _lprof({("f.py", 1, "f"): [(1, 1, 10 ** 30)]}, 1.0),
             "line.lprof": _lprof({("f.py", 1, "f"): [(-5, 1, 1)]}, 1e-6)}
    for name, data in cases.items():
        (tmp_path / name).write_bytes(data)
    (tmp_path / "folder.lprof").mkdir()
    os.mkfifo(str(tmp_path / "fifo.lprof"))
    for name in list(cases) + ["folder.lprof", "fifo.lprof", "missing.lprof"]:
        for args in (["report", name], ["view", name, "-o", "p.html"]):
            proc = run_sonde(args, tmp_path, timeout=60)
            assert proc.returncode == 1, (args, proc.stderr)
            assert proc.stderr.startswith("sonde: ") and name in proc.stderr, proc.stderr
            assert len(proc.stderr.splitlines()) == 1 and "Traceback" not in proc.stderr
    assert not ran.exists() and not (tmp_path / "p.html").exists()


class _Evil:
    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (os.system, ("touch " + self.path,))


def test_kernprof_files_read_back(tmp_path):
    """A file line_profiler itself wrote reads back as the same timings."""
    import line_profiler
    import lp_api_workloads as w
    from sonde._line_stats import LineStats

    theirs = line_profiler.LineProfiler()
    theirs.add_function(w.loop)
    theirs.runcall(w.loop, 12)
    path = str(tmp_path / "k.lprof")
    theirs.dump_stats(path)
    got = LineStats.from_files(path)
    assert got.timings == theirs.get_stats().timings and got.unit == theirs.get_stats().unit


def test_print_stats_options():
    lp, w = _profiled()
    totals = {name: sum(t for _, _, t in lines) for (_, _, name), lines
              in lp.get_stats().timings.items()}

    def printed(**kw):
        out = io.StringIO()
        lp.print_stats(out, **kw)
        return out.getvalue()

    # sonde's table leaves out functions that never ran (gen), with or
    # without stripzeros; the summary names them unless stripzeros
    assert "Function: loop" in printed() and "Function: gen" not in printed()
    assert "- gen" in printed(summarize=True) and "- gen" not in printed(summarize=True,
                                                                            stripzeros=True)
    summary = [row for row in printed(summarize=True, details=False).splitlines()
               if " seconds - " in row]
    assert "Line #" not in printed(details=False, summarize=True)
    assert [row.rsplit(" - ", 1)[1] for row in summary] == ["loop", "gen"]
    assert summary[0].startswith("%6.2f seconds - %s:%d" % (totals["loop"] / 1e9, w.__file__, 7))
    order = [row.rsplit(" - ", 1)[1] for row in printed(sort=True, summarize=True).splitlines()
             if " seconds - " in row]
    assert order == ["gen", "loop"]  # least total time first
    assert "Timer unit: 1e-06 s" in printed(output_unit=1e-6)
    assert lp.get_stats().unit == 1e-9


def test_decorator_and_add_callable_kinds():
    import functools

    import lp_api_workloads as w
    import sonde

    lp = sonde.LineProfiler()
    shapes = w.Shapes(3)
    assert lp.add_callable(shapes.area) == 1  # a bound method: its function
    assert lp.add_callable(functools.partial(w.loop, 5)) == 1
    assert lp.add_callable(property(w.Shapes.area)) == 1
    assert lp.add_callable(len) == 0  # C: nothing to trace
    wrapped = lp(w.loop)
    assert lp(wrapped) is wrapped and lp.add_callable(wrapped) == 0
    assert wrapped(6) == w.loop(6) and lp.runcall(shapes.area) == 9
    keys = {name for (_, _, name) in lp.get_stats().timings}
    assert keys == {"loop", "Shapes.area" if sys.version_info >= (3, 11) else "area"}


def test_bad_input(tmp_path):
    import sonde
    from sonde._line_stats import LineStats

    lp = sonde.LineProfiler()
    with pytest.raises(TypeError, match="cannot get functions"):
        lp.add_callable(3)
    with pytest.raises(ValueError, match="scoping_policy"):
        lp.add_module(sys, scoping_policy="sideways")
    for name, data in (("empty", b""), ("garbage", b"\x00\x01garbage"),
                       ("truncated", pickle.dumps({"timings": {}}, 2)[:-3]),
                       ("evil", b"cos\nsystem\n(S'touch %s'\ntR." % str(tmp_path / "ran").encode()),
                       ("dict", pickle.dumps({"timings": {}, "unit": 1e-6})),
                       ("bad_unit", _lprof({}, 0.0)),
                       ("bad_key", _lprof({("f", "1", "g"): []}, 1e-6))):
        path = tmp_path / (name + ".lprof")
        path.write_bytes(data)
        with pytest.raises(pickle.UnpicklingError, match="not a line_profiler .lprof file"):
            LineStats.from_files(str(path))
    assert not (tmp_path / "ran").exists()


def _lprof(timings, unit):
    from sonde._line_stats import lprof_bytes

    return lprof_bytes(timings, unit)
