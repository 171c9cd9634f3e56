"""sonde.LineProfiler as line_profiler 5's users call it: the hits of
get_stats() equal the interpreter's line events on every interpreter,
whichever way the functions were given (add_function, the decorator on
generators, coroutines and async generators, add_class, add_module) and
run (runcall, runctx, `with`); .lprof files that line_profiler's own
`python -m line_profiler` prints with the same hits, and kernprof's read
back; print_stats' options; one clear error for bad input."""

import io
import json
import os
import pickle
import re
import subprocess
import sys

import pytest

from conftest import HERE, PKG, need, version_params, with_pkg_env

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
